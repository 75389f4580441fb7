//! The vault: tai's one SQLite file (`$TAI_HOME/vault.db`) and the `Store` that owns it.
//!
//! Opening never overwrites a file that is not a tai vault; the schema is migrated
//! forward by `PRAGMA user_version`; every multi-row change is one transaction. While the
//! seal is on, secret values, `mcp_servers.env_json` and `headers_json`, conversations and
//! spilled records are stored only as sealed BLOBs (see `seal`), and SQLite's
//! `secure_delete` keeps freed pages from holding old plaintext. Server names, commands,
//! profiles and tool lists stay readable without the passphrase.
//!
//! The store also holds the process's redaction set (`redact`): built on first use from
//! the vault's secrets and the stored servers' literal env and header values, updated
//! as secrets change, joined by the values this process learns (`remember`). Everything
//! bound for the disk (audit details, records, conversations) passes through it here.

pub mod audit;
pub mod redact;
pub mod schema;
pub mod seal;

use std::cell::RefCell;
use std::fmt;
use std::path::{Path, PathBuf};

use rusqlite::types::Value;
use rusqlite::{Connection, OptionalExtension, params};

use redact::RedactionSet;
use seal::{KdfParams, SealKey};

/// What the seal covers, for `tai vault seal` and `tai status`.
pub const SEAL_COVERS: &str = "secret values, server env and header values, conversations and spilled records are encrypted at rest; server names, commands, profiles and tool lists stay readable";

/// Everything that can go wrong with the vault, each with what to do next.
#[derive(Debug)]
pub enum Error {
    /// The file exists but is not an SQLite database tai can use.
    NotAVault {
        path: PathBuf,
        detail: String,
    },
    /// Made by a newer tai.
    TooNew {
        path: PathBuf,
        found: u32,
    },
    /// The vault is sealed and no passphrase was given.
    Locked,
    /// The passphrase does not open the seal.
    WrongPassphrase,
    /// A sealed value failed authentication.
    Tampered {
        what: String,
    },
    /// A name or value the caller passed is not acceptable.
    Invalid(String),
    /// Something asked for does not exist.
    NotFound(String),
    Sql {
        context: &'static str,
        detail: String,
    },
    Io {
        context: String,
        detail: String,
    },
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::NotAVault { path, detail } => write!(
                f,
                "{} is not a tai vault ({detail}); it was left untouched. Move it aside or set TAI_HOME to another directory",
                path.display()
            ),
            Error::TooNew { path, found } => write!(
                f,
                "{} has schema version {found}, newer than this tai understands ({}); upgrade tai",
                path.display(),
                schema::LATEST
            ),
            Error::Locked => write!(
                f,
                "the vault is sealed: set TAI_VAULT_PASSPHRASE or run in a terminal to be asked for the passphrase"
            ),
            Error::WrongPassphrase => write!(f, "wrong vault passphrase"),
            Error::Tampered { what } => write!(
                f,
                "{what} failed authentication: the sealed value was altered or corrupted"
            ),
            Error::Invalid(m) | Error::NotFound(m) => f.write_str(m),
            Error::Sql { context, detail } => write!(f, "vault: {context}: {detail}"),
            Error::Io { context, detail } => write!(f, "{context}: {detail}"),
        }
    }
}

impl std::error::Error for Error {}

pub type Result<T, E = Error> = std::result::Result<T, E>;

fn sql(context: &'static str) -> impl FnOnce(rusqlite::Error) -> Error {
    move |e| Error::Sql {
        context,
        detail: e.to_string(),
    }
}

fn io(context: String) -> impl FnOnce(std::io::Error) -> Error {
    move |e| Error::Io {
        context,
        detail: e.to_string(),
    }
}

/// Milliseconds since the Unix epoch.
pub fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}

/// Names of secrets, profiles and servers: `[A-Za-z0-9_.-]`, 1 to 64 characters.
pub fn check_name(kind: &str, name: &str) -> Result<()> {
    let ok = !name.is_empty()
        && name.len() <= 64
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"_.-".contains(&b));
    if ok {
        Ok(())
    } else {
        Err(Error::Invalid(format!(
            "invalid {kind} name {name:?}: use 1 to 64 of A-Z a-z 0-9 _ . -"
        )))
    }
}

/// A profile row stored in the vault.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct ProfileRow {
    pub name: String,
    pub model: Option<String>,
    pub base_url: Option<String>,
    pub api_key_secret: Option<String>,
}

/// A spilled result.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Record {
    pub id: String,
    pub source: String,
    pub size: i64,
    pub created: i64,
    pub content: String,
}

/// The open vault.
pub struct Store {
    conn: Connection,
    path: PathBuf,
    key: Option<SealKey>,
    /// Values this process learned (`${VAR}` values, the API key, the passphrase, the
    /// server key), scrubbed like vault secrets.
    known: RedactionSet,
    /// `known` plus the vault's secrets and stored literal values: built on first use,
    /// dropped when they change.
    set: RefCell<Option<RedactionSet>>,
}

impl Store {
    /// Open (creating when absent) the vault at `path`, migrating it to the latest schema.
    pub fn open(path: &Path) -> Result<Store> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            create_private_dir(dir)?;
        }
        create_private_file(path)?;
        let conn = Connection::open(path).map_err(|e| Error::NotAVault {
            path: path.into(),
            detail: e.to_string(),
        })?;
        // A read first: on a file that is not SQLite this fails before anything is written.
        let version: u32 = conn
            .query_row("PRAGMA user_version", [], |r| r.get(0))
            .and_then(|v| {
                conn.query_row("SELECT count(*) FROM sqlite_master", [], |_| Ok(()))?;
                Ok(v)
            })
            .map_err(|e| Error::NotAVault {
                path: path.into(),
                detail: e.to_string(),
            })?;
        if version > schema::LATEST {
            return Err(Error::TooNew {
                path: path.into(),
                found: version,
            });
        }
        if version > 0 {
            let has_meta: bool = conn
                .query_row(
                    "SELECT count(*) FROM sqlite_master WHERE name = 'meta'",
                    [],
                    |r| r.get(0),
                )
                .map_err(sql("reading the schema"))?;
            if !has_meta {
                return Err(Error::NotAVault {
                    path: path.into(),
                    detail: format!(
                        "an SQLite database with user_version {version} but no tai tables"
                    ),
                });
            }
        }
        // synchronous = NORMAL (SQLite's setting for WAL): a commit is in the WAL file
        // before it returns, so a crash of tai loses nothing, but it is not fsynced per
        // commit (only at checkpoints); a power loss may roll back the newest whole
        // transactions, never corrupt the file. The fsync per audited call was most of a
        // served call's time (docs/benchmarks.md). The page cache is held to 512 KiB
        // (SQLite's default is 2 MiB): the vault is small, and a long-running server
        // appending audit rows would otherwise fill the whole default cache with them.
        conn.execute_batch(
            "PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA cache_size = -512; PRAGMA foreign_keys = ON; PRAGMA secure_delete = ON; PRAGMA busy_timeout = 5000;",
        )
        .map_err(sql("setting pragmas"))?;
        let mut store = Store {
            conn,
            path: path.into(),
            key: None,
            known: RedactionSet::default(),
            set: RefCell::new(None),
        };
        store.migrate(version)?;
        Ok(store)
    }

    fn migrate(&mut self, from: u32) -> Result<()> {
        for (i, step) in schema::MIGRATIONS.iter().enumerate().skip(from as usize) {
            let tx = self
                .conn
                .transaction()
                .map_err(sql("starting a migration"))?;
            tx.execute_batch(step)
                .map_err(sql("migrating the schema"))?;
            tx.pragma_update(None, "user_version", i as u32 + 1)
                .map_err(sql("migrating the schema"))?;
            tx.commit().map_err(sql("migrating the schema"))?;
        }
        Ok(())
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The raw connection, for the modules that own other tables (MCP servers, tools).
    pub fn conn(&self) -> &Connection {
        &self.conn
    }

    pub fn conn_mut(&mut self) -> &mut Connection {
        &mut self.conn
    }

    pub fn schema_version(&self) -> Result<u32> {
        self.conn
            .query_row("PRAGMA user_version", [], |r| r.get(0))
            .map_err(sql("reading user_version"))
    }

    // ---- meta -------------------------------------------------------------------------

    pub fn meta_get(&self, key: &str) -> Result<Option<Value>> {
        self.conn
            .prepare_cached("SELECT value FROM meta WHERE key = ?1")
            .and_then(|mut st| st.query_row([key], |r| r.get(0)).optional())
            .map_err(sql("reading meta"))
    }

    pub fn meta_text(&self, key: &str) -> Result<Option<String>> {
        Ok(match self.meta_get(key)? {
            Some(Value::Text(t)) => Some(t),
            _ => None,
        })
    }

    pub fn meta_set(&self, key: &str, value: impl rusqlite::ToSql) -> Result<()> {
        self.conn
            .execute(
                "INSERT OR REPLACE INTO meta(key, value) VALUES (?1, ?2)",
                params![key, value],
            )
            .map_err(sql("writing meta"))?;
        Ok(())
    }

    // ---- seal -------------------------------------------------------------------------

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
        rekey_audit_head(&tx, key.audit_key())?;
        tx.commit().map_err(sql("sealing"))?;
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
        rekey_audit_head(&tx, audit::PUBLIC_KEY)?;
        tx.commit().map_err(sql("unsealing"))?;
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

    // ---- secrets ----------------------------------------------------------------------

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

    // ---- redaction --------------------------------------------------------------------

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

    // ---- records ----------------------------------------------------------------------

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

    // ---- audit ------------------------------------------------------------------------

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
        let (chain, key, move_head): (i64, Vec<u8>, bool) = match (self.is_sealed()?, &self.key) {
            (false, _) => (audit::CHAIN_PUBLIC, audit::PUBLIC_KEY.to_vec(), true),
            (true, Some(k)) => (audit::CHAIN_SEALED, k.audit_key().to_vec(), true),
            (true, None) => (audit::CHAIN_PUBLIC, audit::PUBLIC_KEY.to_vec(), false),
        };
        let tx = self
            .conn
            .transaction()
            .map_err(sql("appending to the audit trail"))?;
        // Cached statements: a served call appends a row each, so parsing these per call
        // showed in the profile.
        let (prev_id, prev_hash): (i64, String) = tx
            .prepare_cached("SELECT id, hash FROM audit ORDER BY id DESC LIMIT 1")
            .and_then(|mut st| st.query_row([], |r| Ok((r.get(0)?, r.get(1)?))).optional())
            .map_err(sql("appending to the audit trail"))?
            .unwrap_or((0, String::new()));
        let id = prev_id + 1;
        let time = now_ms();
        let hash = audit::link(&key, chain, &prev_hash, id, time, &event);
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
            write_audit_head(&tx, &audit::Head::new(&key, id, &hash))?;
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

    // ---- conversations ----------------------------------------------------------------

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

    // ---- profiles ---------------------------------------------------------------------

    pub fn profiles(&self) -> Result<Vec<ProfileRow>> {
        let mut st = self
            .conn
            .prepare("SELECT name, model, base_url, api_key_secret FROM profiles ORDER BY name")
            .map_err(sql("listing profiles"))?;
        let rows = st
            .query_map([], |r| {
                Ok(ProfileRow {
                    name: r.get(0)?,
                    model: r.get(1)?,
                    base_url: r.get(2)?,
                    api_key_secret: r.get(3)?,
                })
            })
            .map_err(sql("listing profiles"))?;
        rows.collect::<rusqlite::Result<_>>()
            .map_err(sql("listing profiles"))
    }

    pub fn profile_add(&self, p: &ProfileRow) -> Result<()> {
        check_name("profile", &p.name)?;
        let n = self
            .conn
            .execute(
                "INSERT OR IGNORE INTO profiles(name, model, base_url, api_key_secret, created) VALUES (?1, ?2, ?3, ?4, ?5)",
                params![p.name, p.model, p.base_url, p.api_key_secret, now_ms()],
            )
            .map_err(sql("adding a profile"))?;
        if n == 0 {
            return Err(Error::Invalid(format!(
                "profile {:?} already exists",
                p.name
            )));
        }
        Ok(())
    }

    /// Set one setting of a stored profile (`model`, `base_url`, `api_key_secret`); `None`
    /// clears it. The profile row is created when missing (`default` has none until set).
    pub fn profile_set(&self, name: &str, key: &str, value: Option<&str>) -> Result<()> {
        check_name("profile", name)?;
        let column = match key {
            "model" => "model",
            "base_url" => "base_url",
            "api_key_secret" => "api_key_secret",
            other => {
                return Err(Error::Invalid(format!(
                    "a profile has no setting {other:?} (model, base_url, api_key_secret)"
                )));
            }
        };
        self.conn
            .execute(
                "INSERT OR IGNORE INTO profiles(name, created) VALUES (?1, ?2)",
                params![name, now_ms()],
            )
            .map_err(sql("setting a profile"))?;
        self.conn
            .execute(
                &format!("UPDATE profiles SET {column} = ?1 WHERE name = ?2"),
                params![value, name],
            )
            .map_err(sql("setting a profile"))?;
        Ok(())
    }

    /// Remove a profile and its server enablements in one transaction.
    pub fn profile_remove(&mut self, name: &str) -> Result<()> {
        let tx = self.conn.transaction().map_err(sql("removing a profile"))?;
        let n = tx
            .execute("DELETE FROM profiles WHERE name = ?1", [name])
            .map_err(sql("removing a profile"))?;
        if n == 0 {
            return Err(Error::NotFound(format!(
                "no stored profile named {name:?} (see `tai profile list`)"
            )));
        }
        tx.execute("DELETE FROM mcp_server_profiles WHERE profile = ?1", [name])
            .map_err(sql("removing a profile"))?;
        tx.execute(
            "DELETE FROM meta WHERE key = 'current_profile' AND value = ?1",
            [name],
        )
        .map_err(sql("removing a profile"))?;
        tx.commit().map_err(sql("removing a profile"))
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

/// The `meta` key of the audit chain's authenticated head.
const AUDIT_HEAD: &str = "audit_head";

fn write_audit_head(tx: &rusqlite::Transaction<'_>, head: &audit::Head) -> Result<()> {
    tx.prepare_cached("INSERT OR REPLACE INTO meta(key, value) VALUES (?1, ?2)")
        .and_then(|mut st| st.execute(params![AUDIT_HEAD, head.encode()]))
        .map_err(sql("moving the audit trail's head"))?;
    Ok(())
}

/// The seal changed: the head (the last row as it stands) is authenticated anew with
/// the key that now keys the chain.
fn rekey_audit_head(tx: &rusqlite::Transaction<'_>, key: &[u8]) -> Result<()> {
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

fn open_text(key: &SealKey, sealed: &[u8], aad: &str) -> Result<String> {
    let plain = key
        .open(sealed, aad)
        .map_err(|_| Error::Tampered { what: aad.into() })?;
    String::from_utf8(plain).map_err(|_| Error::Tampered { what: aad.into() })
}

fn create_private_dir(dir: &Path) -> Result<()> {
    use std::os::unix::fs::DirBuilderExt;
    if dir.is_dir() {
        return Ok(());
    }
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
        .map_err(io(format!("creating {}", dir.display())))
}

/// Create the file 0600 if it does not exist; an existing file is left exactly as it is.
fn create_private_file(path: &Path) -> Result<()> {
    use std::os::unix::fs::OpenOptionsExt;
    match std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)
    {
        Ok(_) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(()),
        Err(e) => Err(io(format!("creating {}", path.display()))(e)),
    }
}
