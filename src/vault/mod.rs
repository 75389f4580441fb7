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
mod audit_journal;
mod audit_log;
mod conversations;
mod profiles;
mod records;
pub mod redact;
pub mod schema;
pub mod seal;
mod sealing;
mod secrets;
pub mod served;

use std::cell::RefCell;
use std::fmt;
use std::path::{Path, PathBuf};

use rusqlite::types::Value;
use rusqlite::{Connection, OptionalExtension, params};

pub use profiles::ProfileRow;
use redact::RedactionSet;
use seal::SealKey;

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
pub use crate::clock::now_ms;

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
    /// The audit trail's append-only journal (`audit_journal`).
    journal: RefCell<audit_journal::Journal>,
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
            "PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA cache_size = -512; PRAGMA foreign_keys = ON; PRAGMA secure_delete = ON;",
        )
        .map_err(sql("setting pragmas"))?;
        conn.busy_timeout(crate::limits::VAULT_BUSY_TIMEOUT)
            .map_err(sql("setting the busy timeout"))?;
        let mut store = Store {
            conn,
            path: path.into(),
            key: None,
            known: RedactionSet::default(),
            set: RefCell::new(None),
            journal: RefCell::new(audit_journal::Journal::open(path)?),
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
}

impl Drop for Store {
    /// A process that appended to the audit journal folds it as it closes the vault, so
    /// the table holds its rows; a fold that cannot run now is left to the next reader.
    fn drop(&mut self) {
        if self.journal.get_mut().appended {
            let _ = self.audit_fold();
        }
    }
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

/// A vault in a fresh temporary folder, removed when dropped: the unit tests' store.
#[cfg(test)]
pub(crate) struct Scratch {
    pub store: Store,
    dir: PathBuf,
}

#[cfg(test)]
impl Scratch {
    pub fn new() -> Scratch {
        use std::sync::atomic::{AtomicUsize, Ordering};
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let n = NEXT.fetch_add(1, Ordering::SeqCst);
        let dir = std::env::temp_dir().join(format!("tai-vault-unit-{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let store = Store::open(&dir.join("vault.db")).unwrap();
        Scratch { store, dir }
    }

    /// Seal with cheap KDF parameters (the tests' passphrase is `"pass phrase"`).
    pub fn sealed() -> Scratch {
        let mut s = Scratch::new();
        s.store
            .seal("pass phrase", crate::vault::seal::TEST_KDF)
            .unwrap();
        s
    }

    /// The same file opened again (as a new process would, locked when sealed).
    pub fn reopen(&mut self) {
        self.store = Store::open(&self.dir.join("vault.db")).unwrap();
    }

    /// Every byte of the vault's files, to look for plaintext.
    pub fn file_bytes(&self) -> Vec<u8> {
        let mut all = Vec::new();
        for suffix in ["", "-wal", "-shm"] {
            all.extend(
                std::fs::read(self.dir.join(format!("vault.db{suffix}"))).unwrap_or_default(),
            );
        }
        all
    }
}

#[cfg(test)]
impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn opens_fresh_migrated_and_refuses_what_is_not_a_vault() {
        let s = Scratch::new();
        assert_eq!(s.store.schema_version().unwrap(), schema::LATEST);
        s.store.meta_set("k", "v").unwrap();
        assert_eq!(s.store.meta_text("k").unwrap().as_deref(), Some("v"));
        assert_eq!(s.store.meta_text("absent").unwrap(), None);
        // Garbage is refused and left byte for byte.
        let garbage = s.dir.join("garbage.db");
        std::fs::write(&garbage, b"not a database at all, not even close").unwrap();
        assert!(matches!(
            Store::open(&garbage),
            Err(Error::NotAVault { .. })
        ));
        assert_eq!(
            std::fs::read(&garbage).unwrap(),
            b"not a database at all, not even close"
        );
    }

    #[test]
    fn names_are_checked() {
        let longest = "x".repeat(64);
        let too_long = "x".repeat(65);
        for (name, ok) in [
            ("github", true),
            ("a.b-c_d", true),
            (longest.as_str(), true),
            (too_long.as_str(), false),
            ("", false),
            ("a b", false),
            ("a/b", false),
            ("é", false),
        ] {
            assert_eq!(check_name("secret", name).is_ok(), ok, "{name:?}");
        }
    }
}
