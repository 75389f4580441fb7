//! The seal on the open vault: unlock with the passphrase, seal and unseal (every sealable
//! value rewritten in one transaction, the files scrubbed afterwards), and the sealed form
//! of one value (`seal_value`/`open_value`, used by the MCP tables). The crypto itself is
//! `seal.rs`.

use rusqlite::params;
use rusqlite::types::Value;

use super::seal::{self, KdfParams, SealKey};
use super::{Error, Result, Store, audit, io, sql};

impl Store {
    /// Whether the seal is on.
    pub fn is_sealed(&self) -> Result<bool> {
        Ok(self.meta_get("seal_check")?.is_some())
    }

    /// Derive the key from `passphrase` and check it against the vault. Needed before
    /// reading or writing secrets and headers of a sealed vault.
    /// Sealed, and not unlocked by this process.
    pub fn is_locked(&self) -> Result<bool> {
        Ok(self.key.is_none() && self.is_sealed()?)
    }

    pub fn unlock(&mut self, passphrase: &str) -> Result<()> {
        let (Some(Value::Blob(salt)), Some(params), Some(Value::Blob(check))) = (
            self.meta_get("seal_salt")?,
            self.meta_text("seal_kdf")?
                .as_deref()
                .and_then(KdfParams::decode),
            self.meta_get("seal_check")?,
        ) else {
            return Err(Error::Invalid("the vault is not sealed".into()));
        };
        let key = SealKey::derive(passphrase, &salt, params).map_err(Error::Invalid)?;
        match key.open(&check, "meta:seal_check") {
            Ok(plain) if plain == seal::CHECK_PLAINTEXT => {
                self.key = Some(key);
                self.remember("vault-passphrase", passphrase);
                self.redaction_changed();
                self.seal_leftovers()
            }
            _ => Err(Error::WrongPassphrase),
        }
    }

    /// Turn the seal on: every secret and header value is re-encrypted in one transaction,
    /// then the WAL is checkpointed and the file vacuumed so no plaintext page remains.
    pub fn seal(&mut self, passphrase: &str, params: KdfParams) -> Result<()> {
        if self.is_sealed()? {
            return Err(Error::Invalid("the vault is already sealed".into()));
        }
        if passphrase.is_empty() {
            return Err(Error::Invalid("the passphrase must not be empty".into()));
        }
        let salt = crate::entropy::bytes::<16>().map_err(io("reading random bytes".into()))?;
        let key = SealKey::derive(passphrase, &salt, params).map_err(Error::Invalid)?;
        let check = key
            .seal(seal::CHECK_PLAINTEXT, "meta:seal_check")
            .map_err(io("sealing".into()))?;
        // The journal's rows are folded into the table first, and its lock held, so no
        // row is chained the old way after the head is keyed anew.
        let mut journal = self.journal.borrow_mut();
        let locked = journal.lock()?;
        self.fold_locked(&locked)?;
        let tx = self.conn.transaction().map_err(sql("sealing"))?;
        rewrite_sealable(&tx, |aad, v| match v {
            Value::Text(t) => key
                .seal(t.as_bytes(), aad)
                .map(Value::Blob)
                .map_err(io("sealing".into())),
            _ => Err(Error::Invalid(format!(
                "{aad} is already sealed in an unsealed vault"
            ))),
        })?;
        tx.execute(
            "INSERT INTO meta(key, value) VALUES ('seal_salt', ?1)",
            [&salt[..]],
        )
        .map_err(sql("sealing"))?;
        tx.execute(
            "INSERT INTO meta(key, value) VALUES ('seal_kdf', ?1)",
            [params.encode()],
        )
        .map_err(sql("sealing"))?;
        tx.execute(
            "INSERT INTO meta(key, value) VALUES ('seal_check', ?1)",
            [check],
        )
        .map_err(sql("sealing"))?;
        super::audit_log::rekey_audit_head(&tx, key.audit_key())?;
        tx.commit().map_err(sql("sealing"))?;
        drop(locked);
        drop(journal);
        self.key = Some(key);
        self.remember("vault-passphrase", passphrase);
        self.redaction_changed();
        self.scrub_files()
    }

    /// Seal what a sealed vault still holds in plain text in the columns the seal came to
    /// cover later (server env, conversations, records: v3), on the first unlock after
    /// the upgrade.
    fn seal_leftovers(&mut self) -> Result<()> {
        let Some(key) = self.key.as_ref() else {
            return Ok(());
        };
        let tx = self.conn.transaction().map_err(sql("sealing"))?;
        let mut sealed = 0;
        for (table, column, id, kind) in [
            ("mcp_servers", "env_json", "name", "env"),
            (
                "conversations",
                "messages_json",
                "CAST(id AS TEXT)",
                "conversation",
            ),
            ("records", "content", "id", "record"),
        ] {
            let rows: Vec<(String, String)> = {
                let mut st = tx
                    .prepare(&format!(
                        "SELECT {id}, {column} FROM {table} WHERE typeof({column}) = 'text'"
                    ))
                    .map_err(sql("sealing"))?;
                st.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
                    .map_err(sql("sealing"))?
                    .collect::<rusqlite::Result<_>>()
                    .map_err(sql("sealing"))?
            };
            for (row, text) in rows {
                let blob = key
                    .seal(text.as_bytes(), &format!("{kind}:{row}"))
                    .map_err(io("sealing".into()))?;
                tx.execute(
                    &format!("UPDATE {table} SET {column} = ?1 WHERE {id} = ?2"),
                    params![blob, row],
                )
                .map_err(sql("sealing"))?;
                sealed += 1;
            }
        }
        tx.commit().map_err(sql("sealing"))?;
        if sealed > 0 {
            self.scrub_files()?;
        }
        Ok(())
    }

    /// Turn the seal off (the vault must be unlocked): values go back to plain text.
    pub fn unseal(&mut self) -> Result<()> {
        if !self.is_sealed()? {
            return Err(Error::Invalid("the vault is not sealed".into()));
        }
        let key = self.key.as_ref().ok_or(Error::Locked)?;
        let mut journal = self.journal.borrow_mut();
        let locked = journal.lock()?;
        self.fold_locked(&locked)?;
        let tx = self.conn.transaction().map_err(sql("unsealing"))?;
        rewrite_sealable(&tx, |aad, v| match v {
            Value::Blob(b) => open_text(key, &b, aad).map(Value::Text),
            _ => Err(Error::Invalid(format!(
                "{aad} is stored unsealed in a sealed vault"
            ))),
        })?;
        tx.execute(
            "DELETE FROM meta WHERE key IN ('seal_salt', 'seal_kdf', 'seal_check')",
            [],
        )
        .map_err(sql("unsealing"))?;
        super::audit_log::keep_former_audit_key(&tx, key.audit_key())?;
        super::audit_log::rekey_audit_head(&tx, audit::PUBLIC_KEY)?;
        tx.commit().map_err(sql("unsealing"))?;
        drop(locked);
        drop(journal);
        self.key = None;
        self.scrub_files()
    }

    /// Push every page through the main file and empty the WAL, then rebuild the file.
    fn scrub_files(&self) -> Result<()> {
        self.conn
            .execute_batch(
                "PRAGMA wal_checkpoint(TRUNCATE); VACUUM; PRAGMA wal_checkpoint(TRUNCATE);",
            )
            .map_err(sql("compacting the vault"))
    }

    /// Encode a value for a sealable column: sealed BLOB when the seal is on, else text.
    pub fn seal_value(&self, aad: &str, plain: &str) -> Result<Value> {
        if !self.is_sealed()? {
            return Ok(Value::Text(plain.into()));
        }
        let key = self.key.as_ref().ok_or(Error::Locked)?;
        key.seal(plain.as_bytes(), aad)
            .map(Value::Blob)
            .map_err(io("sealing".into()))
    }

    /// Decode a value read from a sealable column.
    pub fn open_value(&self, aad: &str, stored: Value) -> Result<String> {
        match (stored, self.is_sealed()?) {
            (Value::Text(t), false) => Ok(t),
            (Value::Blob(b), true) => open_text(self.key.as_ref().ok_or(Error::Locked)?, &b, aad),
            (Value::Null, _) => Err(Error::NotFound(format!("{aad} has no value"))),
            _ => Err(Error::Tampered { what: aad.into() }),
        }
    }
}

/// Apply `f` to every sealable value (secret values, server headers) inside `tx`.
fn rewrite_sealable(
    tx: &rusqlite::Transaction<'_>,
    mut f: impl FnMut(&str, Value) -> Result<Value>,
) -> Result<()> {
    let read = |q: &str| -> Result<Vec<(String, Value)>> {
        let mut st = tx.prepare(q).map_err(sql("reading sealable values"))?;
        let rows = st
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
            .map_err(sql("reading sealable values"))?;
        rows.collect::<rusqlite::Result<_>>()
            .map_err(sql("reading sealable values"))
    };
    for (name, v) in read("SELECT name, value FROM secrets")? {
        let new = f(&format!("secret:{name}"), v)?;
        tx.execute(
            "UPDATE secrets SET value = ?1 WHERE name = ?2",
            params![new, name],
        )
        .map_err(sql("rewriting a secret"))?;
    }
    for (name, v) in
        read("SELECT name, headers_json FROM mcp_servers WHERE headers_json IS NOT NULL")?
    {
        let new = f(&format!("headers:{name}"), v)?;
        tx.execute(
            "UPDATE mcp_servers SET headers_json = ?1 WHERE name = ?2",
            params![new, name],
        )
        .map_err(sql("rewriting server headers"))?;
    }
    for (name, v) in read("SELECT name, env_json FROM mcp_servers WHERE env_json IS NOT NULL")? {
        let new = f(&format!("env:{name}"), v)?;
        tx.execute(
            "UPDATE mcp_servers SET env_json = ?1 WHERE name = ?2",
            params![new, name],
        )
        .map_err(sql("rewriting server env"))?;
    }
    for (id, v) in read("SELECT CAST(id AS TEXT), messages_json FROM conversations")? {
        let new = f(&format!("conversation:{id}"), v)?;
        tx.execute(
            "UPDATE conversations SET messages_json = ?1 WHERE id = CAST(?2 AS INTEGER)",
            params![new, id],
        )
        .map_err(sql("rewriting a conversation"))?;
    }
    super::served::rewrite_sealable(tx, &mut f)?;
    for (id, v) in read("SELECT id, content FROM records")? {
        let new = f(&format!("record:{id}"), v)?;
        tx.execute(
            "UPDATE records SET content = ?1 WHERE id = ?2",
            params![new, id],
        )
        .map_err(sql("rewriting a record"))?;
    }
    Ok(())
}

fn open_text(key: &SealKey, sealed: &[u8], aad: &str) -> Result<String> {
    let plain = key
        .open(sealed, aad)
        .map_err(|_| Error::Tampered { what: aad.into() })?;
    String::from_utf8(plain).map_err(|_| Error::Tampered { what: aad.into() })
}

#[cfg(test)]
mod tests {
    use crate::vault::{Error, Scratch};

    #[test]
    fn seal_unlock_unseal_and_values_at_rest() {
        let mut s = Scratch::new();
        assert!(!s.store.is_sealed().unwrap());
        s.store
            .secret_set("early", "stored-before-sealing")
            .unwrap();
        s.store
            .seal("pass phrase", crate::vault::seal::TEST_KDF)
            .unwrap();
        assert!(s.store.is_sealed().unwrap() && !s.store.is_locked().unwrap());
        let blob = s.store.seal_value("headers:srv", "header-plain").unwrap();
        assert_eq!(
            s.store.open_value("headers:srv", blob.clone()).unwrap(),
            "header-plain"
        );
        // A value moved to another row fails authentication.
        assert!(matches!(
            s.store.open_value("headers:other", blob),
            Err(Error::Tampered { .. })
        ));
        let canary = b"stored-before-sealing";
        assert!(!s.file_bytes().windows(canary.len()).any(|w| w == canary));
        s.reopen();
        assert!(s.store.is_locked().unwrap());
        assert!(s.store.secret_get("early").is_err());
        assert!(s.store.unlock("wrong").is_err());
        s.store.unlock("pass phrase").unwrap();
        assert_eq!(
            s.store.secret_get("early").unwrap().as_deref(),
            Some("stored-before-sealing")
        );
        s.store.unseal().unwrap();
        assert!(!s.store.is_sealed().unwrap());
        s.reopen();
        assert_eq!(
            s.store.secret_get("early").unwrap().as_deref(),
            Some("stored-before-sealing")
        );
    }
}
