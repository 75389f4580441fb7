//! Spilled results: a tool result too large to keep inline is stored whole (sealed while
//! the seal is on) and the model gets its id (`record_get`, `record_list`).

use rusqlite::types::Value;
use rusqlite::{OptionalExtension, params};

use super::{Error, Result, Store, io, now_ms, sql};

/// A spilled result.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Record {
    pub id: String,
    pub source: String,
    pub size: i64,
    pub created: i64,
    pub content: String,
}

impl Store {
    /// Store a whole result; returns its id.
    pub fn record_put(&self, source: &str, content: &str) -> Result<String> {
        let id = format!(
            "rec_{}",
            crate::entropy::id().map_err(io("reading random bytes".into()))?
        );
        let content = self.redact(content)?;
        let stored = self.seal_value(&format!("record:{id}"), &content)?;
        self.conn
            .execute(
                "INSERT INTO records(id, source, size, created, content) VALUES (?1, ?2, ?3, ?4, ?5)",
                params![id, source, content.len() as i64, now_ms(), stored],
            )
            .map_err(sql("storing a record"))?;
        Ok(id)
    }

    pub fn record_get(&self, id: &str) -> Result<Record> {
        let (mut record, stored): (Record, Value) = self
            .conn
            .query_row(
                "SELECT id, source, size, created, content FROM records WHERE id = ?1",
                [id],
                |r| {
                    Ok((
                        Record {
                            id: r.get(0)?,
                            source: r.get(1)?,
                            size: r.get(2)?,
                            created: r.get(3)?,
                            content: String::new(),
                        },
                        r.get(4)?,
                    ))
                },
            )
            .optional()
            .map_err(sql("reading a record"))?
            .ok_or_else(|| Error::NotFound(format!("no record {id:?}")))?;
        record.content = self.open_value(&format!("record:{id}"), stored)?;
        Ok(record)
    }

    /// Records newest first, without their content.
    pub fn record_list(&self, limit: usize) -> Result<Vec<Record>> {
        let mut st = self
            .conn
            .prepare(
                "SELECT id, source, size, created FROM records ORDER BY created DESC, id LIMIT ?1",
            )
            .map_err(sql("listing records"))?;
        let rows = st
            .query_map([limit as i64], |r| {
                Ok(Record {
                    id: r.get(0)?,
                    source: r.get(1)?,
                    size: r.get(2)?,
                    created: r.get(3)?,
                    content: String::new(),
                })
            })
            .map_err(sql("listing records"))?;
        rows.collect::<rusqlite::Result<_>>()
            .map_err(sql("listing records"))
    }
}

#[cfg(test)]
mod tests {
    use crate::vault::{Error, Scratch};

    #[test]
    fn records_round_trip_redacted_listed_newest_first_and_sealed_at_rest() {
        let s = Scratch::sealed();
        let st = &s.store;
        st.secret_set("tok", "a-token-value-123").unwrap();
        let body = "line with a-token-value-123 and the marker plaintext-canary";
        let first = st.record_put("srv/tool", body).unwrap();
        let second = st.record_put("shell", "second").unwrap();
        assert!(first.starts_with("rec_") && first != second);
        let r = st.record_get(&first).unwrap();
        assert_eq!(r.source, "srv/tool");
        assert_eq!(
            r.content,
            "line with [REDACTED:tok] and the marker plaintext-canary"
        );
        assert_eq!(r.size, r.content.len() as i64);
        let listed = st.record_list(10).unwrap();
        assert_eq!(listed.len(), 2);
        assert!(listed.iter().all(|r| r.content.is_empty()));
        assert_eq!(st.record_list(1).unwrap().len(), 1);
        assert!(matches!(
            st.record_get("rec_absent"),
            Err(Error::NotFound(_))
        ));
        let bytes = s.file_bytes();
        let canary = b"plaintext-canary";
        assert!(!bytes.windows(canary.len()).any(|w| w == canary));
    }
}
