//! The audit table's I/O: append one event (redacted, chained, the authenticated head
//! moved), read rows back and verify the chain. The chain's arithmetic is `audit.rs`.

use rusqlite::{OptionalExtension, params};

use super::{Error, Result, Store, audit, now_ms, sql};

impl Store {
    /// Append one event, chained to the previous row, and move the chain's head. The
    /// subject and detail are redacted first (withheld when the vault is locked). While a
    /// sealed vault is locked the row is chained with the public key and the head stays.
    pub fn audit(&mut self, mut event: audit::Event) -> Result<i64> {
        let withheld = "(withheld: it could not be checked for secrets while the vault is locked)";
        // A subject names a server, tool, secret or profile (all stored in the clear):
        // while locked, what this process knows is scrubbed from it.
        event.subject = self
            .redact(&event.subject)
            .unwrap_or_else(|_| self.known.redact(&event.subject));
        event.detail = event
            .detail
            .map(|d| self.redact(&d).unwrap_or_else(|_| withheld.into()));
        // IMMEDIATE: the write lock first, so tai processes sharing the vault (a server's
        // workers) wait their turn (busy_timeout) instead of failing on a stale read.
        let tx = self
            .conn
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
            .map_err(sql("appending to the audit trail"))?;
        // Whether the seal is on, read under the write lock: another process sealing the
        // vault in between cannot leave this row keyed the old way (and one read
        // transaction less per call).
        let sealed = tx
            .prepare_cached("SELECT 1 FROM meta WHERE key = 'seal_check'")
            .and_then(|mut st| st.exists([]))
            .map_err(sql("appending to the audit trail"))?;
        let (chain, key, move_head): (i64, &[u8], bool) = match (sealed, &self.key) {
            (false, _) => (audit::CHAIN_PUBLIC, audit::PUBLIC_KEY, true),
            (true, Some(k)) => (audit::CHAIN_SEALED, &k.audit_key()[..], true),
            (true, None) => (audit::CHAIN_PUBLIC, audit::PUBLIC_KEY, false),
        };
        // Cached statements: a served call appends a row each, so parsing these per call
        // showed in the profile.
        let (prev_id, prev_hash): (i64, String) = tx
            .prepare_cached("SELECT id, hash FROM audit ORDER BY id DESC LIMIT 1")
            .and_then(|mut st| st.query_row([], |r| Ok((r.get(0)?, r.get(1)?))).optional())
            .map_err(sql("appending to the audit trail"))?
            .unwrap_or((0, String::new()));
        let id = prev_id + 1;
        let time = now_ms();
        let hash = audit::link(key, chain, &prev_hash, id, time, &event);
        tx.prepare_cached(
            "INSERT INTO audit(id, time, kind, subject, arg_digest, outcome, duration, size, detail, hash, chain)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
        )
        .and_then(|mut st| {
            st.execute(params![
                id, time, event.kind, event.subject, event.arg_digest, event.outcome,
                event.duration_ms, event.size, event.detail, hash, chain
            ])
        })
        .map_err(sql("appending to the audit trail"))?;
        if move_head {
            write_audit_head(&tx, &audit::Head::new(key, id, &hash))?;
        }
        tx.commit().map_err(sql("appending to the audit trail"))?;
        Ok(id)
    }

    /// The newest `limit` rows (all when `None`), oldest first.
    pub fn audit_rows(&self, limit: Option<usize>) -> Result<Vec<audit::Row>> {
        let mut st = self
            .conn
            .prepare(
                "SELECT * FROM (SELECT id, time, kind, subject, arg_digest, outcome, duration, size, detail, hash, chain
                 FROM audit ORDER BY id DESC LIMIT ?1) ORDER BY id",
            )
            .map_err(sql("reading the audit trail"))?;
        let limit = limit.map_or(-1, |n| n as i64);
        let rows = st
            .query_map([limit], |r| {
                Ok(audit::Row {
                    id: r.get(0)?,
                    time: r.get(1)?,
                    event: audit::Event {
                        kind: r.get(2)?,
                        subject: r.get(3)?,
                        arg_digest: r.get(4)?,
                        outcome: r.get(5)?,
                        duration_ms: r.get(6)?,
                        size: r.get(7)?,
                        detail: r.get(8)?,
                    },
                    hash: r.get(9)?,
                    chain: r.get(10)?,
                })
            })
            .map_err(sql("reading the audit trail"))?;
        rows.collect::<rusqlite::Result<_>>()
            .map_err(sql("reading the audit trail"))
    }

    /// Check the whole trail against its authenticated head. A sealed vault must be
    /// unlocked (the chain's key comes from the sealed key).
    pub fn audit_verify(&self) -> Result<audit::Verdict> {
        let key = if self.is_sealed()? {
            Some(self.key.as_ref().ok_or(Error::Locked)?.audit_key().to_vec())
        } else {
            None
        };
        let rows = self.audit_rows(None)?;
        let head = self
            .meta_text(AUDIT_HEAD)?
            .map(|t| audit::Head::decode(&t).ok_or(()));
        Ok(match head {
            Some(Err(())) => audit::Verdict::BadHead("the chain's head is malformed".into()),
            Some(Ok(h)) => audit::verify(&rows, Some(&h), key.as_deref()),
            None => audit::verify(&rows, None, key.as_deref()),
        })
    }
}

/// The `meta` key of the audit chain's authenticated head.
const AUDIT_HEAD: &str = "audit_head";

fn write_audit_head(tx: &rusqlite::Transaction<'_>, head: &audit::Head) -> Result<()> {
    // An upsert, not INSERT OR REPLACE: the row is updated in place (same rowid), so the
    // commit changes only `meta`'s leaf, not also its key index.
    tx.prepare_cached(
        "INSERT INTO meta(key, value) VALUES (?1, ?2) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
    )
        .and_then(|mut st| st.execute(params![AUDIT_HEAD, head.encode()]))
        .map_err(sql("moving the audit trail's head"))?;
    Ok(())
}

/// The seal changed: the head (the last row as it stands) is authenticated anew with
/// the key that now keys the chain.
pub(super) fn rekey_audit_head(tx: &rusqlite::Transaction<'_>, key: &[u8]) -> Result<()> {
    let last: Option<(i64, String)> = tx
        .query_row(
            "SELECT id, hash FROM audit ORDER BY id DESC LIMIT 1",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .optional()
        .map_err(sql("reading the audit trail"))?;
    match last {
        Some((id, hash)) => write_audit_head(tx, &audit::Head::new(key, id, &hash)),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use crate::vault::Scratch;
    use crate::vault::audit::{Event, Outcome, Verdict};

    #[test]
    fn appended_rows_are_redacted_chained_and_verify() {
        let mut s = Scratch::new();
        s.store.secret_set("pw", "audit-secret-99").unwrap();
        for i in 0..3 {
            s.store
                .audit(Event {
                    detail: Some(format!("step {i} used audit-secret-99")),
                    ..Event::new("test", &format!("s{i}"), Outcome::Ok)
                })
                .unwrap();
        }
        let rows = s.store.audit_rows(None).unwrap();
        assert_eq!(rows.len(), 3);
        assert!(rows.iter().all(|r| {
            r.event
                .detail
                .as_deref()
                .is_some_and(|d| d.ends_with("[REDACTED:pw]"))
        }));
        assert_eq!(rows[0].event.outcome, "ok");
        assert_eq!(s.store.audit_rows(Some(2)).unwrap().len(), 2);
        assert!(matches!(
            s.store.audit_verify().unwrap(),
            Verdict::Intact { .. }
        ));
    }

    #[test]
    fn sealing_rekeys_the_chain_and_it_still_verifies() {
        let mut s = Scratch::new();
        s.store
            .audit(Event::new("before", "s", Outcome::Ok))
            .unwrap();
        s.store
            .seal("pass phrase", crate::vault::seal::TEST_KDF)
            .unwrap();
        s.store
            .audit(Event::new("after", "s", Outcome::Sealed))
            .unwrap();
        assert!(matches!(
            s.store.audit_verify().unwrap(),
            Verdict::Intact { .. }
        ));
        // An edit to a row is found (the trigger stops UPDATE, so go around it).
        s.store.conn().execute_batch("DROP TRIGGER IF EXISTS audit_no_update; UPDATE audit SET outcome = 'denied' WHERE kind = 'before';").unwrap();
        assert!(!matches!(
            s.store.audit_verify().unwrap(),
            Verdict::Intact { .. }
        ));
    }
}
