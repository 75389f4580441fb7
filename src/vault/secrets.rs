//! Vault secrets (sealed while the seal is on) and the process's redaction set built from
//! them, the stored servers' literal values and what this process learned: everything
//! bound for the disk, the model or the terminal is redacted through it (`Store::redact`),
//! failing closed while the vault is locked. The matching itself is `redact.rs`.

use rusqlite::types::Value;
use rusqlite::{OptionalExtension, params};

use super::redact::RedactionSet;
use super::{Error, Result, Store, check_name, now_ms, sql};

impl Store {
    pub fn secret_set(&self, name: &str, value: &str) -> Result<()> {
        check_name("secret", name)?;
        if value.is_empty() {
            return Err(Error::Invalid("a secret value must not be empty".into()));
        }
        let stored = self.seal_value(&format!("secret:{name}"), value)?;
        self.conn
            .execute(
                "INSERT OR REPLACE INTO secrets(name, value, updated) VALUES (?1, ?2, ?3)",
                params![name, stored, now_ms()],
            )
            .map_err(sql("storing a secret"))?;
        self.redaction_changed();
        Ok(())
    }

    pub fn secret_get(&self, name: &str) -> Result<Option<String>> {
        let stored: Option<Value> = self
            .conn
            .query_row("SELECT value FROM secrets WHERE name = ?1", [name], |r| {
                r.get(0)
            })
            .optional()
            .map_err(sql("reading a secret"))?;
        stored
            .map(|v| self.open_value(&format!("secret:{name}"), v))
            .transpose()
    }

    pub fn secret_names(&self) -> Result<Vec<String>> {
        let mut st = self
            .conn
            .prepare("SELECT name FROM secrets ORDER BY name")
            .map_err(sql("listing secrets"))?;
        let names = st
            .query_map([], |r| r.get(0))
            .map_err(sql("listing secrets"))?;
        names
            .collect::<rusqlite::Result<_>>()
            .map_err(sql("listing secrets"))
    }

    pub fn secret_remove(&self, name: &str) -> Result<()> {
        let n = self
            .conn
            .execute("DELETE FROM secrets WHERE name = ?1", [name])
            .map_err(sql("removing a secret"))?;
        if n == 0 {
            return Err(Error::NotFound(format!(
                "no secret named {name:?} (see `tai vault secret list`)"
            )));
        }
        self.redaction_changed();
        Ok(())
    }

    /// Add a value this process learned (a `${VAR}` value, the API key, the passphrase,
    /// the server key) to the redaction set. Values under 8 characters are not held.
    pub fn remember(&mut self, name: &str, value: &str) {
        if self.known.add(name, value)
            && let Some(set) = self.set.get_mut()
        {
            set.add(name, value);
        }
    }

    /// `remember` under its older name: values resolved from `${VAR}`.
    pub fn add_resolved(&mut self, name: &str, value: &str) {
        self.remember(name, value);
    }

    /// Secrets or stored servers changed: the set is rebuilt on its next use.
    pub fn redaction_changed(&self) {
        self.set.replace(None);
    }

    /// Build the set: the values this process learned, every vault secret, and the literal
    /// env and header values of stored servers. Fails closed on a locked sealed vault.
    fn build_redaction_set(&self) -> Result<RedactionSet> {
        let mut set = self.known.clone();
        for name in self.secret_names()? {
            if let Some(value) = self.secret_get(&name)? {
                set.add(&name, &value);
            }
        }
        for (name, value) in self.stored_literals()? {
            set.add(&name, &value);
        }
        Ok(set)
    }

    /// Literal values in stored servers' `env` and `headers` (`env:SERVER.VAR`,
    /// `header:SERVER.NAME`); the token of an `Authorization: Bearer …` value too.
    fn stored_literals(&self) -> Result<Vec<(String, String)>> {
        let mut st = self
            .conn
            .prepare("SELECT name, env_json, headers_json FROM mcp_servers")
            .map_err(sql("reading stored servers"))?;
        let rows: Vec<(String, Value, Value)> = st
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
            .map_err(sql("reading stored servers"))?
            .collect::<rusqlite::Result<_>>()
            .map_err(sql("reading stored servers"))?;
        let mut out = Vec::new();
        for (server, env, headers) in rows {
            for (kind, aad, stored) in [
                ("env", format!("env:{server}"), env),
                ("header", format!("headers:{server}"), headers),
            ] {
                if matches!(stored, Value::Null) {
                    continue;
                }
                let text = self.open_value(&aad, stored)?;
                let map: std::collections::BTreeMap<String, String> =
                    serde_json::from_str(&text).unwrap_or_default();
                for (k, v) in map {
                    if v.contains("${") {
                        continue; // a reference: its value joins when it is resolved
                    }
                    let name = format!("{kind}:{server}.{k}");
                    if let Some((_, token)) = v.split_once(' ') {
                        out.push((name.clone(), token.trim().to_string()));
                    }
                    out.push((name, v));
                }
            }
        }
        Ok(out)
    }

    fn with_redaction_set<T>(&self, f: impl FnOnce(&RedactionSet) -> T) -> Result<T> {
        if self.set.borrow().is_none() {
            let built = self.build_redaction_set()?;
            self.set.replace(Some(built));
        }
        let set = self.set.borrow();
        match set.as_ref() {
            Some(set) => Ok(f(set)),
            None => Err(Error::Locked),
        }
    }

    /// Replace every known secret value in `text` (raw or JSON-escaped) with a marker
    /// naming it. Fails closed: on a sealed vault that is not unlocked the values are
    /// unknown, so this is an error.
    pub fn redact(&self, text: &str) -> Result<String> {
        self.with_redaction_set(|set| set.redact(text))
    }

    /// Every value in the redaction set (kept out of child environments); only the values
    /// this process learned when the vault is locked.
    pub fn secret_values(&self) -> Vec<String> {
        self.with_redaction_set(|set| set.values().iter().map(|v| v.to_string()).collect())
            .unwrap_or_else(|_| self.known.values().iter().map(|v| v.to_string()).collect())
    }

    /// How many values the redaction set holds.
    pub fn redaction_len(&self) -> Result<usize> {
        self.with_redaction_set(RedactionSet::len)
    }
}
