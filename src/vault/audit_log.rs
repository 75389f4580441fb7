//! The audit trail's I/O: append one event (redacted, chained, the authenticated head
//! moved) to the journal, fold the journal into the table, read rows back and verify
//! the chain. The chain's arithmetic is `audit.rs`; the journal file is `audit_journal.rs`.

use rusqlite::{OptionalExtension, params};

use super::audit_journal::{self, Admit, Contents, Entry, Journal, Locked, Tail};
use super::{Error, Result, Store, audit, now_ms, sql};

impl Store {
    /// Append one event, chained to the previous row, with the chain's head after it.
    /// The subject and detail are redacted first (withheld when the vault is locked),
    /// then clipped to `audit::FIELD_MAX` bytes.
    /// While a sealed vault is locked the row is chained with the public key and the
    /// head stays. The row goes to the journal (`audit_journal`); `Ok` means it is there.
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
        // Clipped after the redaction, so no secret is cut short of its pattern.
        event.subject = audit::clip(event.subject);
        event.detail = event.detail.map(audit::clip);
        let mut journal = self.journal.borrow_mut();
        let headed = journal.headed.take();
        // Under the journal's lock nothing moves the chain or the seal but this call.
        let locked = journal.lock()?;
        // The tail is the journal's last row; with the journal empty (just folded, or
        // the seal just changed), the table's last row and the seal as `meta` says.
        let (len, in_journal) = locked.tail()?;
        let tail = match &in_journal {
            Some(tail) => tail,
            None => &self.table_tail()?,
        };
        // A row's claim that the seal is off is believed only by a process without the
        // key (one with it asks `meta`: the flag is in a file anyone of the user can edit).
        let sealed = tail.sealed || (self.key.is_some() && self.is_sealed()?);
        let (chain, key, move_head): (i64, &[u8], bool) = match (sealed, &self.key) {
            (false, _) => (audit::CHAIN_PUBLIC, audit::PUBLIC_KEY, true),
            (true, Some(k)) => (audit::CHAIN_SEALED, &k.audit_key()[..], true),
            (true, None) => (audit::CHAIN_PUBLIC, audit::PUBLIC_KEY, false),
        };
        // A row that moves the head extends only a tail the head covers: a head over
        // newest rows cut away would hide the cut, so the cut is recorded first, in a
        // row of its own that `verify` names. (A locked vault cannot tell.)
        let gap = match (move_head, &in_journal) {
            (false, _) => None,
            (true, Some(_)) => {
                let slot = locked.slot()?;
                // The tail is the row this process headed last and the slot still holds
                // that head: it covers the tail.
                let own = headed
                    .as_ref()
                    .is_some_and(|(i, h, s)| *i == tail.id && *h == tail.hash && *s == slot);
                if own {
                    None
                } else {
                    self.journal_gap(&locked, &slot, tail, key)?
                }
            }
            (true, None) => self.table_gap(tail, key)?,
        };
        let mut prev = (tail.id, tail.hash.clone());
        let mut len = len;
        let mut events = vec![event];
        let mut last_head = None;
        if let Some(why) = gap {
            events.insert(
                0,
                audit::Event {
                    detail: Some(why),
                    ..audit::Event::new(audit::GAP_KIND, "audit trail", audit::Outcome::Removed)
                },
            );
        }
        for event in events {
            let id = prev.0 + 1;
            let time = now_ms();
            let hash = audit::link(key, chain, &prev.1, id, time, &event);
            let head = move_head.then(|| audit::Head::new(key, id, &hash).encode());
            last_head.clone_from(&head);
            prev = (id, hash.clone());
            let row = audit::Row {
                id,
                time,
                event,
                hash,
                chain,
            };
            len = locked.append(&Entry { row, sealed }, len, head.as_deref())?;
        }
        let id = prev.0;
        drop(locked);
        journal.headed = last_head
            .and_then(|h| audit_journal::header(Some(&h)).ok())
            .map(|slot| (prev.0, prev.1, slot));
        journal.appended = true;
        drop(journal);
        if Journal::wants_fold(len) {
            // The row is in the journal either way; a fold that fails now is tried again
            // by the next one.
            let _ = self.audit_fold();
        }
        Ok(id)
    }

    /// The trail's short digest of a call's arguments (never the arguments themselves).
    /// With the seal on and unlocked it is keyed with the chain's key, so someone holding
    /// only the files cannot confirm a guessed argument (a short secret) against it.
    pub fn arg_digest(&self, args: &[u8]) -> String {
        match &self.key {
            Some(k) => crate::entropy::hex(&audit::mac_bytes(k.audit_key(), &[b"args", args])[..8]),
            None => audit::digest(args),
        }
    }

    /// Move the journal's rows into the table and the head into `meta`, then empty the
    /// journal: before anything reads the trail, and from time to time.
    pub fn audit_fold(&self) -> Result<()> {
        let mut journal = self.journal.borrow_mut();
        let locked = journal.lock()?;
        self.fold_locked(&locked)?;
        drop(locked);
        journal.appended = false;
        Ok(())
    }

    /// The fold, under the journal's lock (which the seal's changes hold around theirs).
    pub(super) fn fold_locked(&self, locked: &Locked<'_>) -> Result<()> {
        let Contents { head, entries } = locked.contents()?;
        if entries.is_empty() {
            return locked.clear();
        }
        let tx = rusqlite::Transaction::new_unchecked(
            &self.conn,
            rusqlite::TransactionBehavior::Immediate,
        )
        .map_err(sql("folding the audit journal"))?;
        let last: i64 = tx
            .query_row("SELECT coalesce(max(id), 0) FROM audit", [], |r| r.get(0))
            .map_err(sql("folding the audit journal"))?;
        let mut next = last + 1;
        for Entry { row, .. } in entries {
            if row.id <= last {
                // Folded already (the fold that wrote it stopped before emptying), if the
                // table holds this very row; else an older journal put back, whose new
                // rows would vanish here after their results left.
                let held: Option<String> = tx
                    .prepare_cached("SELECT hash FROM audit WHERE id = ?1")
                    .and_then(|mut st| st.query_row([row.id], |r| r.get(0)).optional())
                    .map_err(sql("folding the audit journal"))?;
                if held.as_deref() != Some(row.hash.as_str()) {
                    return Err(locked.damaged(format!(
                        "its row {} is not the trail's row {}: it does not continue the trail \
                         (an older copy of the journal?)",
                        row.id, row.id
                    )));
                }
                continue;
            }
            if row.id != next {
                return Err(locked.damaged(format!(
                    "its row {} does not follow the trail's row {}",
                    row.id,
                    next - 1
                )));
            }
            let e = &row.event;
            tx.prepare_cached(
                "INSERT INTO audit(id, time, kind, subject, arg_digest, outcome, duration, size, detail, hash, chain)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
            )
            .and_then(|mut st| {
                st.execute(params![
                    row.id, row.time, e.kind, e.subject, e.arg_digest, e.outcome,
                    e.duration_ms, e.size, e.detail, row.hash, row.chain
                ])
            })
            .map_err(sql("folding the audit journal"))?;
            next += 1;
        }
        if let Some(head) = head {
            write_audit_head(&tx, &head)?;
        }
        tx.commit().map_err(sql("folding the audit journal"))?;
        locked.clear()
    }

    /// Whether the journal's head covers its last row (`head_admits`): `Some(why)` when
    /// it does not. Without a head, only rows a locked vault appended may come before
    /// the last row (which may be one whose head's write a crash cut short: the
    /// journal's first, or the first after those rows).
    fn journal_gap(
        &self,
        locked: &Locked<'_>,
        slot: &[u8],
        tail: &Tail,
        key: &[u8],
    ) -> Result<Option<String>> {
        match audit_journal::head_admits(locked.head_in(slot)?.as_deref(), tail, key) {
            Admit::Covered => return Ok(None),
            Admit::Gap(why) => return Ok(Some(format!("the journal's {why}"))),
            Admit::Unauthentic => return self.unauthentic(),
            Admit::NoHead => {}
        }
        let Contents { entries, .. } = locked.contents()?;
        let before_last = &entries[..entries.len().saturating_sub(1)];
        Ok((!before_last
            .iter()
            .all(|e| e.sealed && e.row.chain == audit::CHAIN_PUBLIC))
        .then(|| {
            "the journal holds rows that moved the head but no head: the newest rows were \
             removed"
                .into()
        }))
    }

    /// Whether `meta`'s head covers the table's last row (`head_admits`): `Some(why)`
    /// when it does not. Without a head only a trail from before the head (legacy rows)
    /// or rows a locked vault appended may precede the new one.
    fn table_gap(&self, tail: &Tail, key: &[u8]) -> Result<Option<String>> {
        let head = self.meta_text(AUDIT_HEAD)?;
        match audit_journal::head_admits(head.as_deref(), tail, key) {
            Admit::Covered => Ok(None),
            Admit::Gap(why) => Ok(Some(format!("the trail's {why}"))),
            Admit::Unauthentic => self.unauthentic(),
            // As `verify` judges a trail without a head: none of its rows moved one (rows
            // from before the head, or rows a locked sealed vault appended).
            Admit::NoHead => {
                let moved: bool = self
                    .conn
                    .prepare_cached(
                        "SELECT EXISTS(SELECT 1 FROM audit WHERE chain = 2 OR (chain = 1 AND ?1 = 0))",
                    )
                    .and_then(|mut st| st.query_row([tail.sealed], |r| r.get(0)))
                    .map_err(sql("appending to the audit trail"))?;
                Ok(moved.then(|| {
                    "the trail's rows moved the head but there is none: rows were removed or \
                     replaced"
                        .into()
                }))
            }
        }
    }

    /// A head that does not authenticate: this process's key went stale (the vault was
    /// sealed anew elsewhere; nothing may be chained with it), or the head was written
    /// without the key (a gap to record).
    fn unauthentic(&self) -> Result<Option<String>> {
        let current = match (&self.key, self.meta_get("seal_check")?) {
            (Some(key), Some(rusqlite::types::Value::Blob(check))) => key
                .open(&check, "meta:seal_check")
                .is_ok_and(|plain| plain == super::seal::CHECK_PLAINTEXT),
            (None, None) => true,
            _ => false,
        };
        if !current {
            return Err(Error::Invalid(
                "the vault was sealed anew since this tai unlocked it: its audit rows cannot be \
                 chained with the old key; start tai again"
                    .into(),
            ));
        }
        Ok(Some(
            "the trail's head does not authenticate: it was written without the key".into(),
        ))
    }

    /// The chain's tail as the table and `meta` state it (the journal being empty).
    fn table_tail(&self) -> Result<Tail> {
        let sealed = self
            .conn
            .prepare_cached("SELECT 1 FROM meta WHERE key = 'seal_check'")
            .and_then(|mut st| st.exists([]))
            .map_err(sql("appending to the audit trail"))?;
        let (id, hash, chain) = self
            .conn
            .prepare_cached("SELECT id, hash, chain FROM audit ORDER BY id DESC LIMIT 1")
            .and_then(|mut st| {
                st.query_row([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
                    .optional()
            })
            .map_err(sql("appending to the audit trail"))?
            .unwrap_or((0, String::new(), audit::CHAIN_LEGACY));
        Ok(Tail {
            id,
            hash,
            chain,
            sealed,
        })
    }

    /// The newest `limit` rows (all when `None`), oldest first.
    pub fn audit_rows(&self, limit: Option<usize>) -> Result<Vec<audit::Row>> {
        self.audit_fold()?;
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
        let former = self.former_audit_keys()?;
        let head = self
            .meta_text(AUDIT_HEAD)?
            .map(|t| audit::Head::decode(&t).ok_or(()));
        Ok(match head {
            Some(Err(())) => audit::Verdict::BadHead("the chain's head is malformed".into()),
            Some(Ok(h)) => audit::verify_with(&rows, Some(&h), key.as_deref(), &former),
            None => audit::verify_with(&rows, None, key.as_deref(), &former),
        })
    }

    /// The chain keys of seals since removed (`unseal` keeps each in the clear: its rows
    /// then verify as an unsealed vault's do, against edits, not a forger).
    fn former_audit_keys(&self) -> Result<Vec<Vec<u8>>> {
        let Some(text) = self.meta_text(FORMER_AUDIT_KEYS)? else {
            return Ok(Vec::new());
        };
        let hex: Vec<String> = serde_json::from_str(&text).map_err(|e| {
            Error::Invalid(format!("the vault's former audit keys do not parse ({e})"))
        })?;
        hex.iter()
            .map(|h| {
                crate::entropy::unhex(h).ok_or_else(|| {
                    Error::Invalid("a former audit key of the vault is not hex".into())
                })
            })
            .collect()
    }
}

/// The `meta` key of the audit chain's authenticated head.
const AUDIT_HEAD: &str = "audit_head";
/// The `meta` key of the former seals' chain keys (a JSON list of hex).
const FORMER_AUDIT_KEYS: &str = "audit_former_keys";

/// The seal comes off: its chain key is kept, in the clear, so the rows keyed with it
/// still verify (as public rows do: against edits, not a forger).
pub(super) fn keep_former_audit_key(tx: &rusqlite::Transaction<'_>, key: &[u8]) -> Result<()> {
    let stored: Option<String> = tx
        .query_row(
            "SELECT value FROM meta WHERE key = ?1",
            [FORMER_AUDIT_KEYS],
            |r| r.get(0),
        )
        .optional()
        .map_err(sql("unsealing"))?;
    let mut keys: Vec<String> = stored
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or_default();
    keys.push(crate::entropy::hex(key));
    tx.execute(
        "INSERT INTO meta(key, value) VALUES (?1, ?2) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
        params![FORMER_AUDIT_KEYS, serde_json::json!(keys).to_string()],
    )
    .map_err(sql("unsealing"))?;
    Ok(())
}

fn write_audit_head(tx: &rusqlite::Transaction<'_>, head: &str) -> Result<()> {
    // An upsert, not INSERT OR REPLACE: the row is updated in place (same rowid), so the
    // commit changes only `meta`'s leaf, not also its key index.
    tx.prepare_cached(
        "INSERT INTO meta(key, value) VALUES (?1, ?2) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
    )
        .and_then(|mut st| st.execute(params![AUDIT_HEAD, head]))
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
        Some((id, hash)) => write_audit_head(tx, &audit::Head::new(key, id, &hash).encode()),
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

    fn intact_rows(store: &crate::vault::Store) -> usize {
        match store.audit_verify().unwrap() {
            Verdict::Intact { rows, .. } => rows,
            other => panic!("not intact: {other:?}"),
        }
    }

    fn journal_path(s: &Scratch) -> std::path::PathBuf {
        let mut p = s.store.path().as_os_str().to_owned();
        p.push("-audit");
        p.into()
    }

    #[test]
    fn rows_wait_in_the_journal_until_a_reader_or_the_close_folds_them() {
        let s = Scratch::new();
        let mut other = crate::vault::Store::open(s.store.path()).unwrap();
        other.audit(Event::new("k", "one", Outcome::Ok)).unwrap();
        other.audit(Event::new("k", "two", Outcome::Ok)).unwrap();
        let in_table = |store: &crate::vault::Store| -> i64 {
            store
                .conn()
                .query_row("SELECT count(*) FROM audit", [], |r| r.get(0))
                .unwrap()
        };
        assert_eq!(
            in_table(&s.store),
            0,
            "appended to the journal, not the table"
        );
        assert!(std::fs::metadata(journal_path(&s)).unwrap().len() > 0);
        // Any reader folds first, in whichever process.
        assert_eq!(s.store.audit_rows(None).unwrap().len(), 2);
        assert_eq!(in_table(&s.store), 2);
        assert_eq!(std::fs::metadata(journal_path(&s)).unwrap().len(), 0);
        other.audit(Event::new("k", "three", Outcome::Ok)).unwrap();
        drop(other);
        assert_eq!(
            in_table(&s.store),
            3,
            "a process that appended folds as it closes"
        );
        assert_eq!(intact_rows(&s.store), 3);
    }

    #[test]
    fn two_stores_appending_in_turn_with_folds_and_the_seal_between_keep_one_chain() {
        let mut s = Scratch::new();
        let mut other = crate::vault::Store::open(s.store.path()).unwrap();
        for i in 0..40 {
            let store = if i % 3 == 0 { &mut other } else { &mut s.store };
            store
                .audit(Event::new("k", &format!("row {i}"), Outcome::Ok))
                .unwrap();
            if i % 7 == 0 {
                other.audit_fold().unwrap();
            }
            if i == 20 {
                s.store
                    .seal("pass phrase", crate::vault::seal::TEST_KDF)
                    .unwrap();
                other.unlock("pass phrase").unwrap();
            }
        }
        let rows = s.store.audit_rows(None).unwrap();
        assert_eq!(rows.len(), 40);
        assert!(rows.iter().enumerate().all(|(i, r)| r.id == i as i64 + 1));
        assert_eq!(intact_rows(&s.store), 40);
        assert_eq!(intact_rows(&other), 40);
    }

    #[test]
    fn a_fold_that_stopped_before_emptying_the_journal_is_not_folded_twice() {
        let mut s = Scratch::new();
        for i in 0..3 {
            s.store
                .audit(Event::new("k", &format!("s{i}"), Outcome::Ok))
                .unwrap();
        }
        let journal = std::fs::read(journal_path(&s)).unwrap();
        s.store.audit_fold().unwrap();
        // As if the fold had committed and stopped before emptying the journal.
        std::fs::write(journal_path(&s), &journal).unwrap();
        s.store
            .audit(Event::new("k", "after", Outcome::Ok))
            .unwrap();
        let rows = s.store.audit_rows(None).unwrap();
        assert_eq!(rows.iter().map(|r| r.id).collect::<Vec<_>>(), [1, 2, 3, 4]);
        assert_eq!(intact_rows(&s.store), 4);
    }

    #[test]
    fn a_damaged_journal_stops_appends_and_reads_until_moved_aside() {
        let mut s = Scratch::new();
        s.store.audit(Event::new("k", "s1", Outcome::Ok)).unwrap();
        let path = journal_path(&s);
        let mut bytes = std::fs::read(&path).unwrap();
        bytes.extend(b"{\"not\": \"a row\"}\n");
        std::fs::write(&path, &bytes).unwrap();
        let err = s
            .store
            .audit(Event::new("k", "s2", Outcome::Ok))
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("damaged") && err.contains("moved aside"),
            "{err}"
        );
        let err = s.store.audit_rows(None).unwrap_err().to_string();
        assert!(err.contains("damaged"), "{err}");
        // A journal whose rows skip ahead of the table is damage too.
        std::fs::rename(&path, path.with_extension("aside")).unwrap();
        let mut s = Scratch::new();
        s.store.audit(Event::new("k", "s1", Outcome::Ok)).unwrap();
        let path = journal_path(&s);
        let text = std::fs::read_to_string(&path).unwrap();
        std::fs::write(&path, text.replacen("\"id\":1,", "\"id\":5,", 1)).unwrap();
        let err = s.store.audit_rows(None).unwrap_err().to_string();
        assert!(err.contains("does not follow"), "{err}");
    }

    #[test]
    fn a_line_cut_short_by_a_crash_is_dropped_and_the_chain_goes_on() {
        let mut s = Scratch::new();
        s.store.audit(Event::new("k", "s1", Outcome::Ok)).unwrap();
        let path = journal_path(&s);
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .unwrap();
        std::io::Write::write_all(&mut f, b"{\"id\":2,\"time\"").unwrap();
        s.store.audit(Event::new("k", "s2", Outcome::Ok)).unwrap();
        let rows = s.store.audit_rows(None).unwrap();
        assert_eq!(
            rows.iter()
                .map(|r| r.event.subject.as_str())
                .collect::<Vec<_>>(),
            ["s1", "s2"]
        );
        assert_eq!(intact_rows(&s.store), 2);
    }

    #[test]
    fn removing_the_newest_lines_from_the_journal_is_a_truncation() {
        for sealed in [false, true] {
            let mut s = Scratch::new();
            if sealed {
                s.store
                    .seal("pass phrase", crate::vault::seal::TEST_KDF)
                    .unwrap();
            }
            s.store
                .audit(Event::new("k", "folded", Outcome::Ok))
                .unwrap();
            s.store.audit_fold().unwrap();
            for i in 0..3 {
                s.store
                    .audit(Event::new("k", &format!("s{i}"), Outcome::Ok))
                    .unwrap();
            }
            // Cut the newest line off the journal, as someone holding the file can.
            let path = journal_path(&s);
            let text = std::fs::read_to_string(&path).unwrap();
            let cut = text[..text.len() - 1].rfind('\n').unwrap() + 1;
            std::fs::write(&path, &text[..cut]).unwrap();
            assert!(
                matches!(
                    s.store.audit_verify().unwrap(),
                    Verdict::Truncated { head: 4, found: 3 }
                ),
                "sealed {sealed}"
            );
        }
    }

    /// A sealed vault with one row folded and `n` rows in the journal.
    fn sealed_with_journal(n: usize) -> Scratch {
        let mut s = Scratch::new();
        s.store
            .seal("pass phrase", crate::vault::seal::TEST_KDF)
            .unwrap();
        s.store
            .audit(Event::new("k", "folded", Outcome::Ok))
            .unwrap();
        s.store.audit_fold().unwrap();
        for i in 0..n {
            s.store
                .audit(Event::new("k", &format!("s{i}"), Outcome::Ok))
                .unwrap();
        }
        s
    }

    /// The journal without its newest line.
    fn cut_newest_line(s: &Scratch) {
        let path = journal_path(s);
        let text = std::fs::read_to_string(&path).unwrap();
        let cut = text[..text.len() - 1].rfind('\n').unwrap() + 1;
        std::fs::write(&path, &text[..cut]).unwrap();
    }

    /// Append a row after a cut: it is appended (its result goes out), after a row that
    /// records the cut, which `verify` names. The recorded reason.
    fn records_a_gap(s: &mut Scratch) -> String {
        let id = s.store.audit(Event::new("k", "next", Outcome::Ok)).unwrap();
        let rows = s.store.audit_rows(None).unwrap();
        let gap = &rows[rows.len() - 2];
        assert_eq!(rows.last().unwrap().id, id);
        assert_eq!(gap.event.kind, crate::vault::audit::GAP_KIND, "{rows:?}");
        assert_eq!(
            s.store.audit_verify().unwrap(),
            Verdict::BrokenAt(gap.id),
            "verify names the gap"
        );
        gap.event.detail.clone().unwrap()
    }

    #[test]
    fn an_append_after_the_newest_lines_were_cut_records_the_cut_not_a_head_over_it() {
        // Cut the newest line and let tai append: a new head over the tail would hide
        // the cut (the removal would verify intact). The cut is recorded instead.
        let mut s = sealed_with_journal(3);
        cut_newest_line(&s);
        let why = records_a_gap(&mut s);
        assert!(why.contains("covers row 4 but its last row is 3"), "{why}");
        // And only once: the trail goes on from there.
        s.store
            .audit(Event::new("k", "after", Outcome::Ok))
            .unwrap();
        let rows = s.store.audit_rows(None).unwrap();
        let gaps = rows
            .iter()
            .filter(|r| r.event.kind == crate::vault::audit::GAP_KIND)
            .count();
        assert_eq!(gaps, 1);
    }

    #[test]
    fn a_cut_journal_with_its_head_slot_blanked_or_forged_records_the_cut_too() {
        let head_slot = |s: &Scratch, bytes: &[u8]| {
            use std::os::unix::fs::FileExt;
            let mut slot = bytes.to_vec();
            if slot.len() < 256 {
                slot.resize(255, b' ');
                slot.push(b'\n');
            }
            std::fs::OpenOptions::new()
                .write(true)
                .open(journal_path(s))
                .unwrap()
                .write_all_at(&slot, 0)
                .unwrap();
        };
        // Blanked: as if no head had ever been written.
        for blank in [&[0u8; 256][..], b"{\"head\":null}"] {
            let mut s = sealed_with_journal(3);
            cut_newest_line(&s);
            head_slot(&s, blank);
            let why = records_a_gap(&mut s);
            assert!(why.contains("no head"), "{why}");
        }
        // A head for the cut tail, but without the key (here: the public one).
        let mut s = sealed_with_journal(3);
        cut_newest_line(&s);
        let rows = crate::vault::audit_journal::parse(&std::fs::read(journal_path(&s)).unwrap())
            .unwrap()
            .entries;
        let last = &rows.last().unwrap().row;
        let forged =
            crate::vault::audit::Head::new(crate::vault::audit::PUBLIC_KEY, last.id, &last.hash);
        head_slot(
            &s,
            format!("{{\"head\":\"{}\"}}", forged.encode()).as_bytes(),
        );
        let why = records_a_gap(&mut s);
        assert!(why.contains("does not authenticate"), "{why}");
    }

    #[test]
    fn an_append_after_the_newest_rows_were_cut_from_the_table_records_the_cut() {
        // The same cut in the table (around its trigger), the journal folded empty; and
        // with the head gone too.
        for head_too in [false, true] {
            let mut s = sealed_with_journal(3);
            s.store.audit_fold().unwrap();
            s.store
                .conn()
                .execute_batch("DROP TRIGGER audit_no_delete; DELETE FROM audit WHERE id > 2;")
                .unwrap();
            if head_too {
                s.store
                    .conn()
                    .execute("DELETE FROM meta WHERE key = 'audit_head'", [])
                    .unwrap();
            }
            let why = records_a_gap(&mut s);
            assert!(why.contains("removed"), "{why}");
        }
    }

    #[test]
    fn a_journal_row_claiming_the_seal_is_off_does_not_downgrade_the_chain() {
        let mut s = sealed_with_journal(2);
        let path = journal_path(&s);
        let text = std::fs::read_to_string(&path).unwrap();
        let at = text.rfind("\"sealed\":true").unwrap();
        let flipped = format!("{}\"sealed\":false{}", &text[..at], &text[at + 13..]);
        std::fs::write(&path, flipped).unwrap();
        s.store.audit(Event::new("k", "next", Outcome::Ok)).unwrap();
        let rows = s.store.audit_rows(None).unwrap();
        assert_eq!(
            rows.last().unwrap().chain,
            crate::vault::audit::CHAIN_SEALED
        );
        assert_eq!(intact_rows(&s.store), 4);
    }

    #[test]
    fn a_crash_between_a_row_and_its_head_and_rows_a_locked_vault_appended_still_go_on() {
        // The first row of an empty journal written, its head not: the next append goes on.
        let mut s = sealed_with_journal(1);
        {
            use std::os::unix::fs::FileExt;
            std::fs::OpenOptions::new()
                .write(true)
                .open(journal_path(&s))
                .unwrap()
                .write_all_at(&[0; 256], 0)
                .unwrap();
        }
        s.store
            .audit(Event::new("k", "after", Outcome::Ok))
            .unwrap();
        assert_eq!(intact_rows(&s.store), 3);
        // A later row written, its head not (the slot keeps the previous head).
        let mut s = sealed_with_journal(2);
        let path = journal_path(&s);
        let bytes = std::fs::read(&path).unwrap();
        let c = crate::vault::audit_journal::parse(&bytes).unwrap();
        let first = &c.entries[0].row;
        let old = crate::vault::audit::Head::new(
            &s.store.key.as_ref().unwrap().audit_key()[..],
            first.id,
            &first.hash,
        );
        {
            use std::os::unix::fs::FileExt;
            let mut slot = format!("{{\"head\":\"{}\"}}", old.encode()).into_bytes();
            slot.resize(255, b' ');
            slot.push(b'\n');
            std::fs::OpenOptions::new()
                .write(true)
                .open(&path)
                .unwrap()
                .write_all_at(&slot, 0)
                .unwrap();
        }
        s.store
            .audit(Event::new("k", "after", Outcome::Ok))
            .unwrap();
        assert_eq!(intact_rows(&s.store), 4);
        // Rows a locked process appended (no head), then an unlocked one.
        let mut s = sealed_with_journal(0);
        let mut locked = crate::vault::Store::open(s.store.path()).unwrap();
        locked
            .audit(Event::new("k", "locked 1", Outcome::Ok))
            .unwrap();
        locked
            .audit(Event::new("k", "locked 2", Outcome::Ok))
            .unwrap();
        s.store
            .audit(Event::new("k", "unlocked", Outcome::Ok))
            .unwrap();
        drop(locked);
        assert_eq!(intact_rows(&s.store), 4);
    }

    #[test]
    fn rows_the_table_holds_are_skipped_only_when_they_are_the_same_rows() {
        // An older copy of the journal put back after its rows (and more) were folded:
        // the row tai appends to it must not vanish at the next fold.
        let mut s = Scratch::new();
        for i in 0..2 {
            s.store
                .audit(Event::new("k", &format!("s{i}"), Outcome::Ok))
                .unwrap();
        }
        let old = std::fs::read(journal_path(&s)).unwrap();
        s.store.audit(Event::new("k", "s2", Outcome::Ok)).unwrap();
        s.store.audit(Event::new("k", "s3", Outcome::Ok)).unwrap();
        s.store.audit_fold().unwrap();
        std::fs::write(journal_path(&s), &old).unwrap();
        let appended = s.store.audit(Event::new("k", "returned", Outcome::Ok));
        let folded = s.store.audit_rows(None);
        match (appended, folded) {
            (Err(e), _) | (_, Err(e)) => assert!(e.to_string().contains("damaged"), "{e}"),
            (Ok(_), Ok(rows)) => assert!(
                rows.iter().any(|r| r.event.subject == "returned"),
                "a row appended (its result returned) vanished from the trail"
            ),
        }
    }

    #[test]
    fn a_row_with_a_huge_subject_does_not_stop_the_trail() {
        // A hostile model or client names a tool of megabytes (escaped six bytes a
        // character in the journal): its row must not make the journal "damaged" for
        // every later call.
        let mut s = Scratch::new();
        s.store.secret_set("pw", "audit-secret-99").unwrap();
        // The secret straddles where the subject is clipped: redacted first, none of it
        // is left.
        let name = format!(
            "{}audit-secret-99{}",
            "a".repeat(crate::vault::audit::FIELD_MAX - 40),
            "\u{1}".repeat(3 << 20)
        );
        s.store
            .audit(Event {
                detail: Some(name.clone()),
                ..Event::new("tool-call", &name, Outcome::UnknownTool)
            })
            .unwrap();
        s.store.audit(Event::new("k", "next", Outcome::Ok)).unwrap();
        let rows = s.store.audit_rows(None).unwrap();
        assert_eq!(rows.len(), 2);
        let big = &rows[0].event;
        for field in [&big.subject, big.detail.as_ref().unwrap()] {
            assert!(
                field.len() <= crate::vault::audit::FIELD_MAX,
                "{}",
                field.len()
            );
            assert!(!field.contains("audit-sec"), "{field}");
            assert!(field.contains("[REDACTED"), "{field}");
        }
        assert_eq!(intact_rows(&s.store), 2);
    }

    #[test]
    fn a_process_whose_key_went_stale_appends_no_row_the_chain_cannot_verify() {
        // Sealed anew (another passphrase) by one process while another holds the old
        // key: the other must not chain rows with the old key, and says what to do.
        let mut s = sealed_with_journal(1);
        let mut stale = crate::vault::Store::open(s.store.path()).unwrap();
        stale.unlock("pass phrase").unwrap();
        s.store.unseal().unwrap();
        s.store
            .seal("another phrase", crate::vault::seal::TEST_KDF)
            .unwrap();
        s.store
            .audit(Event::new("k", "new key", Outcome::Ok))
            .unwrap();
        for fold_first in [false, true] {
            if fold_first {
                s.store.audit_fold().unwrap();
            }
            let err = stale
                .audit(Event::new("k", "old key", Outcome::Ok))
                .map(|id| format!("appended row {id}"))
                .unwrap_err()
                .to_string();
            assert!(err.contains("start tai again"), "{err}");
        }
        drop(stale);
        let rows = s.store.audit_rows(None).unwrap();
        assert!(rows.iter().all(|r| r.event.subject != "old key"));
        assert_eq!(rows.len(), 3);
    }

    #[test]
    fn a_journal_removed_under_a_running_process_does_not_swallow_its_rows() {
        // A long-running tai (a server) holds the journal open; someone removes the
        // file. Its next rows must reach the journal other processes read, not the
        // removed file, whose rows no one would ever fold.
        let s = Scratch::new();
        let mut server = crate::vault::Store::open(s.store.path()).unwrap();
        server
            .audit(Event::new("k", "before", Outcome::Ok))
            .unwrap();
        server.audit_fold().unwrap();
        std::fs::remove_file(journal_path(&s)).unwrap();
        server.audit(Event::new("k", "after", Outcome::Ok)).unwrap();
        let mut cli = crate::vault::Store::open(s.store.path()).unwrap();
        cli.audit(Event::new("k", "cli", Outcome::Ok)).unwrap();
        let subjects: Vec<String> = cli
            .audit_rows(None)
            .unwrap()
            .into_iter()
            .map(|r| r.event.subject)
            .collect();
        assert_eq!(subjects, ["before", "after", "cli"]);
        drop(server);
        assert_eq!(intact_rows(&cli), 3);
    }

    #[test]
    fn a_table_without_its_head_and_with_forged_locked_rows_records_the_cut() {
        // The newest keyed rows replaced by a row "a locked vault appended" (chained with
        // the public key, which anyone can), the head removed: no new head may cover it.
        let mut s = sealed_with_journal(3);
        s.store.audit_fold().unwrap();
        let conn = s.store.conn();
        conn.execute_batch(
            "DROP TRIGGER audit_no_delete; DELETE FROM audit WHERE id > 2; \
             DELETE FROM meta WHERE key = 'audit_head';",
        )
        .unwrap();
        let prev: String = conn
            .query_row("SELECT hash FROM audit WHERE id = 2", [], |r| r.get(0))
            .unwrap();
        let fake = Event::new("k", "nothing happened", Outcome::Ok);
        let hash = crate::vault::audit::link(
            crate::vault::audit::PUBLIC_KEY,
            crate::vault::audit::CHAIN_PUBLIC,
            &prev,
            3,
            1,
            &fake,
        );
        conn.execute(
            "INSERT INTO audit(id, time, kind, subject, outcome, hash, chain) VALUES (3, 1, 'k', 'nothing happened', 'ok', ?1, 1)",
            [hash],
        )
        .unwrap();
        let why = records_a_gap(&mut s);
        assert!(why.contains("there is none"), "{why}");
    }

    #[test]
    fn a_cut_of_another_processs_row_is_recorded_by_the_process_whose_row_is_the_tail_again() {
        // A appends, B appends after it, B's row is cut: the tail is A's own last row
        // again, but the slot holds B's head, which covers more. A records the cut.
        let mut s = sealed_with_journal(1);
        let mut b = crate::vault::Store::open(s.store.path()).unwrap();
        b.unlock("pass phrase").unwrap();
        b.audit(Event::new("k", "from b", Outcome::Ok)).unwrap();
        cut_newest_line(&s);
        let why = records_a_gap(&mut s);
        assert!(why.contains("covers row 3 but its last row is 2"), "{why}");
        drop(b);
    }

    #[test]
    fn an_argument_digest_is_keyed_while_the_seal_is_on() {
        let mut s = Scratch::new();
        let args = br#"{"pin":"1234"}"#;
        let plain = s.store.arg_digest(args);
        assert_eq!(plain, crate::vault::audit::digest(args));
        s.store
            .seal("pass phrase", crate::vault::seal::TEST_KDF)
            .unwrap();
        let keyed = s.store.arg_digest(args);
        assert_eq!(keyed.len(), plain.len());
        assert_ne!(
            keyed, plain,
            "a guess checked with plain SHA-256 must not match"
        );
        assert_eq!(
            keyed,
            s.store.arg_digest(args),
            "the same arguments, the same digest"
        );
        assert_ne!(keyed, s.store.arg_digest(br#"{"pin":"1235"}"#));
    }
}
