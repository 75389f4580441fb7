//! Served `chat` conversations, kept in the vault so a handle outlives the process that
//! made it: after a restart, and on any tai process sharing the vault (behind a proxy),
//! the next turn continues the same history.
//!
//! A turn takes a lease on its handle (`served_begin`), runs, and writes the history back
//! (`served_finish`), which frees the lease. A second turn on a handle whose lease has not
//! lapsed is told the handle is busy; a worker that crashed mid-turn holds nothing for
//! longer than its lease. Histories pass the redaction set and are sealed (AAD
//! `served:HANDLE`) while the seal is on, like every conversation; idle ones expire.

use rusqlite::types::Value;
use rusqlite::{OptionalExtension, params};

use super::{Error, Result, Store, now_ms, sql};

/// What taking a handle's lease found.
#[derive(Debug, PartialEq)]
pub enum Lease {
    /// The lease is this turn's: the history so far (empty for a new handle).
    Granted(Vec<serde_json::Value>),
    /// Another turn holds the handle until this time (ms since the epoch).
    Busy { until_ms: i64 },
    /// No such conversation (it expired, or never existed).
    Unknown,
}

fn aad(handle: &str) -> String {
    format!("served:{handle}")
}

impl Store {
    /// Take `handle`'s lease for `lease_ms`, dropping conversations idle longer than
    /// `idle_ms` first. `create`: a handle not stored yet starts empty (else `Unknown`).
    pub fn served_begin(
        &mut self,
        handle: &str,
        create: bool,
        lease_ms: i64,
        idle_ms: i64,
    ) -> Result<Lease> {
        let now = now_ms();
        let empty = self.seal_value(&aad(handle), "[]")?;
        let tx = self
            .conn
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
            .map_err(sql("taking a conversation's lease"))?;
        tx.execute(
            "DELETE FROM served_conversations WHERE last_seen < ?1 AND (lease_until IS NULL OR lease_until < ?2)",
            params![now - idle_ms, now],
        )
        .map_err(sql("expiring served conversations"))?;
        let row: Option<(Value, Option<i64>)> = tx
            .query_row(
                "SELECT history_json, lease_until FROM served_conversations WHERE handle = ?1",
                params![handle],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .optional()
            .map_err(sql("reading a served conversation"))?;
        let history = match row {
            Some((_, Some(until))) if until > now => return Ok(Lease::Busy { until_ms: until }),
            Some((stored, _)) => stored,
            None if !create => return Ok(Lease::Unknown),
            None => {
                tx.execute(
                    "INSERT INTO served_conversations(handle, history_json, last_seen) VALUES (?1, ?2, ?3)",
                    params![handle, empty, now],
                )
                .map_err(sql("starting a served conversation"))?;
                Value::Null
            }
        };
        tx.execute(
            "UPDATE served_conversations SET lease_until = ?1, last_seen = ?2 WHERE handle = ?3",
            params![now + lease_ms, now, handle],
        )
        .map_err(sql("taking a conversation's lease"))?;
        tx.commit().map_err(sql("taking a conversation's lease"))?;
        if history == Value::Null {
            return Ok(Lease::Granted(Vec::new()));
        }
        let text = self.open_value(&aad(handle), history)?;
        let messages = serde_json::from_str(&text).map_err(|e| {
            Error::Invalid(format!("served conversation {handle:?} is not JSON: {e}"))
        })?;
        Ok(Lease::Granted(messages))
    }

    /// Store the turn's history (redacted, sealed when the seal is on) and free the lease.
    pub fn served_finish(&self, handle: &str, history: &[serde_json::Value]) -> Result<()> {
        let json = self.redact(&serde_json::Value::from(history.to_vec()).to_string())?;
        let stored = self.seal_value(&aad(handle), &json)?;
        self.conn
            .execute(
                "UPDATE served_conversations SET history_json = ?1, last_seen = ?2, lease_until = NULL WHERE handle = ?3",
                params![stored, now_ms(), handle],
            )
            .map_err(sql("saving a served conversation"))?;
        Ok(())
    }
}

impl Store {
    /// A 2025-11-25 session was opened (its id is random and unguessable); sessions idle
    /// longer than `idle_ms` are dropped meanwhile.
    pub fn served_session_open(&self, id: &str, idle_ms: i64) -> Result<()> {
        let now = now_ms();
        self.conn
            .execute(
                "DELETE FROM served_sessions WHERE last_seen < ?1",
                params![now - idle_ms],
            )
            .map_err(sql("expiring served sessions"))?;
        self.conn
            .execute(
                "INSERT OR REPLACE INTO served_sessions(id, last_seen) VALUES (?1, ?2)",
                params![id, now],
            )
            .map_err(sql("opening a served session"))?;
        Ok(())
    }

    /// Whether session `id` is open (seen within `idle_ms`); it is marked seen now.
    pub fn served_session_touch(&self, id: &str, idle_ms: i64) -> Result<bool> {
        let now = now_ms();
        let n = self
            .conn
            .execute(
                "UPDATE served_sessions SET last_seen = ?1 WHERE id = ?2 AND last_seen >= ?3",
                params![now, id, now - idle_ms],
            )
            .map_err(sql("touching a served session"))?;
        Ok(n > 0)
    }

    /// Close session `id`; whether it was open.
    pub fn served_session_close(&self, id: &str) -> Result<bool> {
        let n = self
            .conn
            .execute("DELETE FROM served_sessions WHERE id = ?1", params![id])
            .map_err(sql("closing a served session"))?;
        Ok(n > 0)
    }
}

/// Seal or unseal every served history (see `Store::seal`).
pub(super) fn rewrite_sealable(
    tx: &rusqlite::Transaction<'_>,
    f: &mut dyn FnMut(&str, Value) -> Result<Value>,
) -> Result<()> {
    let rows: Vec<(String, Value)> = {
        let mut st = tx
            .prepare("SELECT handle, history_json FROM served_conversations")
            .map_err(sql("reading served conversations"))?;
        let rows = st
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
            .map_err(sql("reading served conversations"))?;
        rows.collect::<rusqlite::Result<_>>()
            .map_err(sql("reading served conversations"))?
    };
    for (handle, v) in rows {
        let new = f(&aad(&handle), v)?;
        tx.execute(
            "UPDATE served_conversations SET history_json = ?1 WHERE handle = ?2",
            params![new, handle],
        )
        .map_err(sql("rewriting a served conversation"))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn store(tag: &str) -> (std::path::PathBuf, Store) {
        let dir = std::env::temp_dir().join(format!("tai-served-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let s = Store::open(&dir.join("vault.db")).unwrap();
        (dir, s)
    }

    #[test]
    fn a_handle_continues_is_busy_while_leased_and_expires() {
        let (dir, mut s) = store("lease");
        assert_eq!(
            s.served_begin("conv-a", false, 60_000, 60_000).unwrap(),
            Lease::Unknown
        );
        assert_eq!(
            s.served_begin("conv-a", true, 60_000, 60_000).unwrap(),
            Lease::Granted(Vec::new())
        );
        // a second turn while the first holds the lease
        assert!(matches!(
            s.served_begin("conv-a", false, 60_000, 60_000).unwrap(),
            Lease::Busy { .. }
        ));
        s.served_finish("conv-a", &[json!({"role": "user", "content": "hi"})])
            .unwrap();
        // another process on the same vault continues it
        let mut other = Store::open(&dir.join("vault.db")).unwrap();
        assert_eq!(
            other.served_begin("conv-a", false, 60_000, 60_000).unwrap(),
            Lease::Granted(vec![json!({"role": "user", "content": "hi"})])
        );
        // a lease that lapsed (a crashed worker) frees the handle
        other.served_finish("conv-a", &[]).unwrap();
        assert!(matches!(
            s.served_begin("conv-a", false, -1, 60_000).unwrap(),
            Lease::Granted(_)
        ));
        assert!(matches!(
            s.served_begin("conv-a", false, 60_000, 60_000).unwrap(),
            Lease::Granted(_)
        ));
        s.served_finish("conv-a", &[]).unwrap();
        // idle past the limit: gone
        crate::clock::sleep(std::time::Duration::from_millis(5));
        assert_eq!(
            s.served_begin("conv-a", false, 60_000, 1).unwrap(),
            Lease::Unknown
        );
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn sessions_are_shared_until_idle_or_closed() {
        let (dir, s) = store("sessions");
        let other = Store::open(&dir.join("vault.db")).unwrap();
        assert!(!other.served_session_touch("s1", 60_000).unwrap());
        s.served_session_open("s1", 60_000).unwrap();
        assert!(other.served_session_touch("s1", 60_000).unwrap());
        crate::clock::sleep(std::time::Duration::from_millis(5));
        assert!(
            !other.served_session_touch("s1", 1).unwrap(),
            "idle past the limit"
        );
        assert!(s.served_session_touch("s1", 60_000).unwrap());
        assert!(other.served_session_close("s1").unwrap());
        assert!(!s.served_session_touch("s1", 60_000).unwrap());
        assert!(!s.served_session_close("s1").unwrap());
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn histories_are_sealed_and_redacted_at_rest() {
        let (dir, mut s) = store("seal");
        s.secret_set("tok", "sekret-value-123").unwrap();
        s.seal("pass phrase", crate::vault::seal::TEST_KDF).unwrap();
        assert!(matches!(
            s.served_begin("conv-b", true, 60_000, 60_000).unwrap(),
            Lease::Granted(_)
        ));
        s.served_finish(
            "conv-b",
            &[json!({"role": "user", "content": "the token is sekret-value-123, PLAINWORD"})],
        )
        .unwrap();
        let stored: Value = s
            .conn
            .query_row("SELECT history_json FROM served_conversations", [], |r| {
                r.get(0)
            })
            .unwrap();
        let Value::Blob(b) = stored else {
            panic!("stored unsealed: {stored:?}")
        };
        assert!(!b.windows(9).any(|w| w == b"PLAINWORD"));
        let Lease::Granted(h) = s.served_begin("conv-b", false, 60_000, 60_000).unwrap() else {
            panic!("not granted")
        };
        let text = h[0]["content"].as_str().unwrap();
        assert!(
            text.contains("PLAINWORD") && !text.contains("sekret-value-123"),
            "{text}"
        );
        // unsealing rewrites it as text again
        s.unseal().unwrap();
        let Lease::Busy { .. } = s.served_begin("conv-b", false, 60_000, 60_000).unwrap() else {
            panic!("the lease was lost in the rewrite")
        };
        let _ = std::fs::remove_dir_all(dir);
    }
}
