//! Saved conversations (their messages, sealed while the seal is on), so
//! `tai --continue` resumes the last one.

use rusqlite::types::Value;
use rusqlite::{OptionalExtension, params};

use super::{Result, Store, now_ms, sql};

impl Store {
    /// Store a conversation's messages: a new row when `id` is `None`. Returns the id.
    pub fn conversation_save(
        &self,
        id: Option<i64>,
        profile: &str,
        messages: &serde_json::Value,
    ) -> Result<i64> {
        let json = self.redact(&messages.to_string())?;
        let now = now_ms();
        let id = match id {
            Some(id) => id,
            None => {
                // The row first (its id names the sealed value), then the messages.
                self.conn
                    .execute(
                        "INSERT INTO conversations(profile, created, updated, messages_json) VALUES (?1, ?2, ?2, '[]')",
                        params![profile, now],
                    )
                    .map_err(sql("saving the conversation"))?;
                self.conn.last_insert_rowid()
            }
        };
        let stored = self.seal_value(&format!("conversation:{id}"), &json)?;
        self.conn
            .execute(
                "UPDATE conversations SET messages_json = ?1, updated = ?2 WHERE id = ?3",
                params![stored, now, id],
            )
            .map_err(sql("saving the conversation"))?;
        Ok(id)
    }

    /// The most recently updated conversation: `(id, messages)`.
    pub fn conversation_last(&self) -> Result<Option<(i64, serde_json::Value)>> {
        let row: Option<(i64, Value)> = self
            .conn
            .query_row("SELECT id, messages_json FROM conversations ORDER BY updated DESC, id DESC LIMIT 1", [], |r| {
                Ok((r.get(0)?, r.get(1)?))
            })
            .optional()
            .map_err(sql("reading the conversation"))?;
        let Some((id, stored)) = row else {
            return Ok(None);
        };
        let j = self.open_value(&format!("conversation:{id}"), stored)?;
        Ok(Some((
            id,
            serde_json::from_str(&j).unwrap_or(serde_json::Value::Array(Vec::new())),
        )))
    }
}

#[cfg(test)]
mod tests {
    use crate::vault::Scratch;
    use serde_json::json;

    #[test]
    fn the_last_saved_conversation_comes_back_redacted() {
        let s = Scratch::new();
        let st = &s.store;
        assert_eq!(st.conversation_last().unwrap(), None);
        st.secret_set("key", "conversation-secret-1").unwrap();
        let a = st
            .conversation_save(
                None,
                "default",
                &json!([{"role": "user", "content": "one"}]),
            )
            .unwrap();
        let b = st
            .conversation_save(
                None,
                "default",
                &json!([{"role": "user", "content": "conversation-secret-1"}]),
            )
            .unwrap();
        assert_ne!(a, b);
        let (id, messages) = st.conversation_last().unwrap().unwrap();
        assert_eq!(id, b);
        assert_eq!(
            messages,
            json!([{"role": "user", "content": "[REDACTED:key]"}])
        );
        // Saving again under an id updates that conversation, and it becomes the last.
        crate::clock::sleep(std::time::Duration::from_millis(2));
        st.conversation_save(
            Some(a),
            "default",
            &json!([{"role": "user", "content": "one, two"}]),
        )
        .unwrap();
        let (id, messages) = st.conversation_last().unwrap().unwrap();
        assert_eq!(id, a);
        assert_eq!(messages[0]["content"], "one, two");
    }
}
