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

#[cfg(test)]
mod tests {
    use crate::vault::{Error, Scratch};

    #[test]
    fn secrets_set_get_list_remove_and_leave_the_redaction_set() {
        let s = Scratch::new();
        let st = &s.store;
        st.secret_set("gh", "ghp_value_long_enough").unwrap();
        st.secret_set("api", "sk-another-value").unwrap();
        st.secret_set("gh", "ghp_replaced_value").unwrap();
        assert_eq!(st.secret_names().unwrap(), ["api", "gh"]);
        assert_eq!(
            st.secret_get("gh").unwrap().as_deref(),
            Some("ghp_replaced_value")
        );
        assert_eq!(st.secret_get("absent").unwrap(), None);
        assert!(matches!(
            st.secret_set("bad name", "x"),
            Err(Error::Invalid(_))
        ));
        // Every secret is redacted, the replaced value no longer counts as one.
        assert_eq!(
            st.redact("a ghp_replaced_value b sk-another-value")
                .unwrap(),
            "a [REDACTED:gh] b [REDACTED:api]"
        );
        assert_eq!(
            st.redact("ghp_value_long_enough").unwrap(),
            "ghp_value_long_enough"
        );
        st.secret_remove("gh").unwrap();
        assert!(matches!(st.secret_remove("gh"), Err(Error::NotFound(_))));
        assert_eq!(
            st.redact("ghp_replaced_value").unwrap(),
            "ghp_replaced_value"
        );
        assert_eq!(st.secret_names().unwrap(), ["api"]);
    }

    #[test]
    fn learned_values_are_redacted_and_a_locked_vault_fails_closed() {
        let mut s = Scratch::sealed();
        s.store.secret_set("stored", "stored-secret-value").unwrap();
        s.reopen();
        assert!(s.store.is_locked().unwrap());
        // Locked: the stored values are unknown, so redaction refuses rather than passes.
        assert!(matches!(s.store.redact("anything"), Err(Error::Locked)));
        s.store.remember("api_key", "learned-api-key-1");
        assert_eq!(s.store.secret_values(), ["learned-api-key-1"]);
        s.store.unlock("pass phrase").unwrap();
        assert_eq!(
            s.store
                .redact("learned-api-key-1 / stored-secret-value")
                .unwrap(),
            "[REDACTED:api_key] / [REDACTED:stored]"
        );
        // The passphrase was learned at unlock, like any value this process holds.
        assert_eq!(
            s.store.redact("pass phrase").unwrap(),
            "[REDACTED:vault-passphrase]"
        );
        assert_eq!(s.store.redaction_len().unwrap(), 3);
        // Short values are not held (they would redact ordinary words).
        s.store.remember("pin", "1234");
        assert_eq!(s.store.redact("1234").unwrap(), "1234");
    }
}
