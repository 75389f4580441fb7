//! The vault: migrations, corrupt files, secrets and the seal, redaction, records, audit chain.

use std::os::unix::fs::PermissionsExt;

use tai::testing::vault::schema::{LATEST, MIGRATIONS};
use tai::testing::vault::seal::KdfParams;
use tai::testing::vault::{Error, Store};

use crate::support::{Tai, TempDir, file_contains};

const FAST_KDF: KdfParams = KdfParams {
    m_cost_kib: 256,
    t_cost: 1,
    p_cost: 1,
};

#[test]
fn a_new_vault_is_private_and_current() {
    let dir = TempDir::new("new");
    let path = dir.path().join("deep/er/vault.db");
    let store = Store::open(&path).unwrap();
    assert_eq!(store.schema_version().unwrap(), LATEST);
    assert_eq!(
        std::fs::metadata(&path).unwrap().permissions().mode() & 0o777,
        0o600
    );
    assert_eq!(
        std::fs::metadata(path.parent().unwrap())
            .unwrap()
            .permissions()
            .mode()
            & 0o777,
        0o700
    );
    let mode: String = store
        .conn()
        .query_row("PRAGMA journal_mode", [], |r| r.get(0))
        .unwrap();
    assert_eq!(mode, "wal");
    let fk: i64 = store
        .conn()
        .query_row("PRAGMA foreign_keys", [], |r| r.get(0))
        .unwrap();
    assert_eq!(fk, 1);
    for table in tai::testing::vault::schema::ALL_TABLES {
        let n: i64 = store
            .conn()
            .query_row(
                "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?1",
                [table],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!(n, 1, "table {table}");
    }
}

#[test]
fn migrates_from_an_empty_file_and_every_earlier_version() {
    let dir = TempDir::new("migrate");
    let empty = dir.path().join("empty.db");
    std::fs::write(&empty, b"").unwrap();
    assert_eq!(
        Store::open(&empty).unwrap().schema_version().unwrap(),
        LATEST
    );
    // Every intermediate version: a vault left at each earlier user_version.
    for version in 1..LATEST {
        let path = dir.path().join(format!("v{version}.db"));
        let conn = rusqlite::Connection::open(&path).unwrap();
        for step in &MIGRATIONS[..version as usize] {
            conn.execute_batch(step).unwrap();
        }
        conn.pragma_update(None, "user_version", version).unwrap();
        conn.execute("INSERT INTO meta(key, value) VALUES ('marker', 'kept')", [])
            .unwrap();
        drop(conn);
        let store = Store::open(&path).unwrap();
        assert_eq!(store.schema_version().unwrap(), LATEST, "from v{version}");
        assert_eq!(
            store.meta_text("marker").unwrap().as_deref(),
            Some("kept"),
            "from v{version}"
        );
    }
    // opening twice is idempotent
    let again = dir.path().join("again.db");
    Store::open(&again).unwrap().secret_set("k", "v").unwrap();
    assert_eq!(
        Store::open(&again)
            .unwrap()
            .secret_get("k")
            .unwrap()
            .as_deref(),
        Some("v")
    );
}

#[test]
fn v5_keeps_the_audit_rows_and_their_guards_without_the_autoincrement_counter() {
    let dir = TempDir::new("migrate-v5");
    let path = dir.path().join("v4.db");
    let conn = rusqlite::Connection::open(&path).unwrap();
    for step in &MIGRATIONS[..4] {
        conn.execute_batch(step).unwrap();
    }
    conn.pragma_update(None, "user_version", 4).unwrap();
    conn.execute_batch(
        "INSERT INTO audit(id, time, kind, subject, outcome, hash, chain) VALUES (1, 5, 'k', 's1', 'ok', 'h1', 1);
         INSERT INTO audit(id, time, kind, subject, outcome, hash, chain) VALUES (2, 6, 'k', 's2', 'ok', 'h2', 1);",
    )
    .unwrap();
    drop(conn);
    let store = Store::open(&path).unwrap();
    let rows: Vec<(i64, String, String, i64)> = store
        .conn()
        .prepare("SELECT id, subject, hash, chain FROM audit ORDER BY id")
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))
        .unwrap()
        .collect::<rusqlite::Result<_>>()
        .unwrap();
    assert_eq!(
        rows,
        [
            (1, "s1".into(), "h1".into(), 1),
            (2, "s2".into(), "h2".into(), 1)
        ]
    );
    let sql: String = store
        .conn()
        .query_row(
            "SELECT sql FROM sqlite_master WHERE name = 'audit'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert!(!sql.to_uppercase().contains("AUTOINCREMENT"), "{sql}");
    // Still append-only.
    for change in ["UPDATE audit SET outcome = 'denied'", "DELETE FROM audit"] {
        let err = store.conn().execute(change, []).unwrap_err().to_string();
        assert!(err.contains("append-only"), "{change}: {err}");
    }
}

#[test]
fn a_newer_vault_is_refused() {
    let dir = TempDir::new("newer");
    let path = dir.path().join("vault.db");
    rusqlite::Connection::open(&path)
        .unwrap()
        .pragma_update(None, "user_version", LATEST + 7)
        .unwrap();
    let err = Store::open(&path).err().expect("refused");
    assert!(matches!(err, Error::TooNew { .. }), "{err}");
    assert!(err.to_string().contains("upgrade tai"), "{err}");
}

#[test]
fn a_corrupt_vault_is_a_clear_error_and_left_untouched() {
    let t = Tai::new("corrupt");
    std::fs::create_dir_all(t.home()).unwrap();
    let junk: Vec<u8> = (0..8192u32).map(|i| (i * 7 + 3) as u8).collect();
    std::fs::write(t.vault_path(), &junk).unwrap();
    let err = t.run(&["status"]).fails(1).to_string();
    assert!(
        err.contains("is not a tai vault") && err.contains("left untouched"),
        "{err}"
    );
    assert_eq!(std::fs::read(t.vault_path()).unwrap(), junk);
    assert!(
        t.run(&["vault", "secret", "list"])
            .fails(1)
            .contains("not a tai vault")
    );
    assert_eq!(std::fs::read(t.vault_path()).unwrap(), junk);
    // an SQLite file of someone else's is not taken over either
    let other = t.dir.path().join("other.db");
    let conn = rusqlite::Connection::open(&other).unwrap();
    conn.execute_batch("CREATE TABLE notes(x); PRAGMA user_version = 1;")
        .unwrap();
    drop(conn);
    let before = std::fs::read(&other).unwrap();
    assert!(matches!(Store::open(&other), Err(Error::NotAVault { .. })));
    assert_eq!(std::fs::read(&other).unwrap(), before);
}

#[test]
fn secrets_round_trip_unsealed_and_sealed() {
    let dir = TempDir::new("secrets");
    let path = dir.path().join("vault.db");
    let mut store = Store::open(&path).unwrap();
    store.secret_set("gh", "ghp_plain1").unwrap();
    store.secret_set("uni", "ключ🔑").unwrap();
    assert_eq!(
        store.secret_get("gh").unwrap().as_deref(),
        Some("ghp_plain1")
    );
    assert_eq!(store.secret_get("nope").unwrap(), None);
    store.seal("correct horse", FAST_KDF).unwrap();
    assert!(store.is_sealed().unwrap());
    assert_eq!(store.secret_get("uni").unwrap().as_deref(), Some("ключ🔑"));
    store.secret_set("new", "sealed-from-the-start").unwrap();
    drop(store);

    // a fresh process must unlock first
    let mut store = Store::open(&path).unwrap();
    assert!(matches!(store.secret_get("gh"), Err(Error::Locked)));
    assert!(
        matches!(store.redact("x"), Err(Error::Locked)),
        "redaction fails closed while locked"
    );
    assert!(matches!(
        store.unlock("wrong horse"),
        Err(Error::WrongPassphrase)
    ));
    store.unlock("correct horse").unwrap();
    assert_eq!(
        store.secret_get("new").unwrap().as_deref(),
        Some("sealed-from-the-start")
    );
    assert_eq!(store.secret_names().unwrap(), ["gh", "new", "uni"]);
    store.unseal().unwrap();
    drop(store);
    let store = Store::open(&path).unwrap();
    assert!(!store.is_sealed().unwrap());
    assert_eq!(
        store.secret_get("gh").unwrap().as_deref(),
        Some("ghp_plain1")
    );
    assert_eq!(
        store.secret_get("new").unwrap().as_deref(),
        Some("sealed-from-the-start")
    );
}

#[test]
fn tampered_or_moved_ciphertext_is_detected() {
    let dir = TempDir::new("tamper");
    let path = dir.path().join("vault.db");
    let mut store = Store::open(&path).unwrap();
    store.secret_set("a", "alpha-secret").unwrap();
    store.secret_set("b", "bravo-secret").unwrap();
    store.seal("pw", FAST_KDF).unwrap();
    let conn = rusqlite::Connection::open(&path).unwrap();
    let mut blob: Vec<u8> = conn
        .query_row("SELECT value FROM secrets WHERE name = 'a'", [], |r| {
            r.get(0)
        })
        .unwrap();
    let last = blob.len() - 1;
    blob[last] ^= 0x40;
    conn.execute("UPDATE secrets SET value = ?1 WHERE name = 'a'", [&blob])
        .unwrap();
    // b's ciphertext copied under a new name: authentic bytes, wrong row
    conn.execute("INSERT INTO secrets(name, value, updated) SELECT 'c', value, 0 FROM secrets WHERE name = 'b'", []).unwrap();
    // a plaintext row slipped into a sealed vault
    conn.execute(
        "INSERT INTO secrets(name, value, updated) VALUES ('d', 'plain', 0)",
        [],
    )
    .unwrap();
    drop(conn);
    let mut store = Store::open(&path).unwrap();
    store.unlock("pw").unwrap();
    for name in ["a", "c", "d"] {
        let err = store.secret_get(name).expect_err(name);
        assert!(matches!(err, Error::Tampered { .. }), "{name}: {err}");
        assert!(
            err.to_string()
                .contains(&format!("secret:{name} failed authentication")),
            "{err}"
        );
    }
    assert_eq!(
        store.secret_get("b").unwrap().as_deref(),
        Some("bravo-secret")
    );
}

#[test]
fn no_plaintext_on_disk_while_sealed() {
    let mut t = Tai::new("plaintext");
    t.env("TAI_VAULT_PASSPHRASE", "pass phrase");
    let secret = "SECRET-VALUE-7f3a9c";
    let header = "Bearer HEADER-TOKEN-91be";
    t.run_stdin(&["vault", "secret", "set", "api"], secret).ok();
    {
        let mut store = Store::open(&t.vault_path()).unwrap();
        store
            .conn_mut()
            .execute(
                "INSERT INTO mcp_servers(name, transport, url, headers_json, source, created, updated)
                 VALUES ('web', 'http', 'http://x', ?1, 'explicit', 0, 0)",
                [format!("{{\"Authorization\":\"{header}\"}}")],
            )
            .unwrap();
    }
    let files = |t: &Tai| {
        let p = t.vault_path();
        [
            p.clone(),
            p.with_extension("db-wal"),
            p.with_extension("db-shm"),
            p.with_extension("db-audit"),
        ]
    };
    assert!(
        files(&t)
            .iter()
            .any(|f| file_contains(f, secret.as_bytes())),
        "the check must be able to see plaintext"
    );
    t.run(&["vault", "seal"]).ok();
    t.run_stdin(&["vault", "secret", "set", "later"], "LATER-SECRET-55d1")
        .ok();
    for f in files(&t) {
        for needle in [secret, "HEADER-TOKEN-91be", "LATER-SECRET-55d1"] {
            assert!(
                !file_contains(&f, needle.as_bytes()),
                "{needle} found in {}",
                f.display()
            );
        }
    }
    // and the values are still there for the right passphrase
    let mut store = Store::open(&t.vault_path()).unwrap();
    store.unlock("pass phrase").unwrap();
    assert_eq!(
        store.secret_get("later").unwrap().as_deref(),
        Some("LATER-SECRET-55d1")
    );
    let stored: rusqlite::types::Value = store
        .conn()
        .query_row("SELECT headers_json FROM mcp_servers", [], |r| r.get(0))
        .unwrap();
    assert!(
        store
            .open_value("headers:web", stored)
            .unwrap()
            .contains(header)
    );
}

#[test]
fn seal_and_unseal_from_the_command_line() {
    let mut t = Tai::new("sealcli");
    t.run_stdin(&["vault", "secret", "set", "tok"], "tok-value-123\n")
        .ok();
    assert!(
        t.run(&["vault", "seal"])
            .fails(1)
            .contains("TAI_VAULT_PASSPHRASE")
    );
    t.env("TAI_VAULT_PASSPHRASE", "right");
    t.run(&["vault", "seal"]).ok();
    assert!(
        t.run(&["vault", "seal"])
            .fails(1)
            .contains("already sealed")
    );
    let status: serde_json::Value =
        serde_json::from_str(t.run(&["status", "--json"]).ok()).unwrap();
    assert_eq!(status["vault"]["sealed"], true);
    t.env("TAI_VAULT_PASSPHRASE", "wrong");
    assert_eq!(
        t.run(&["vault", "secret", "set", "x"]).fails(1).trim(),
        "tai: wrong vault passphrase"
    );
    assert!(
        t.run(&["vault", "unseal"])
            .fails(1)
            .contains("wrong vault passphrase")
    );
    // names are listed without the passphrase; values never are
    let names = t.run(&["vault", "secret", "list"]).ok().to_string();
    assert_eq!(names, "tok\n");
    t.env("TAI_VAULT_PASSPHRASE", "right");
    t.run(&["vault", "unseal"]).ok();
    let store = Store::open(&t.vault_path()).unwrap();
    assert_eq!(
        store.secret_get("tok").unwrap().as_deref(),
        Some("tok-value-123"),
        "one trailing newline is dropped"
    );
    // a value is never taken from argv
    assert_eq!(t.run(&["vault", "secret", "set", "x", "value"]).code, 2);
    assert!(
        t.run_stdin(&["vault", "secret", "set", "x"], "")
            .fails(1)
            .contains("pipe it in")
    );
}

#[test]
fn redaction_covers_vault_secrets_and_resolved_values() {
    let dir = TempDir::new("redact");
    let mut store = Store::open(&dir.path().join("vault.db")).unwrap();
    store.secret_set("outer", "sk-live-ABCDEF123456").unwrap();
    store.secret_set("inner", "ABCDEF12").unwrap();
    store.secret_set("short", "ollama").unwrap(); // under 8 characters: not a pattern
    store.add_resolved("GITHUB_TOKEN", "ghp_resolved_999");
    let text = "use sk-live-ABCDEF123456 or ABCDEF12 or ghp_resolved_999 now, ollama";
    assert_eq!(
        store.redact(text).unwrap(),
        "use [REDACTED:outer] or [REDACTED:inner] or [REDACTED:GITHUB_TOKEN] now, ollama"
    );
    // the set is updated when a secret changes, not only when it is first built
    store.secret_set("late", "late-secret-value").unwrap();
    assert_eq!(
        store.redact("x late-secret-value").unwrap(),
        "x [REDACTED:late]"
    );
    store.secret_remove("late").unwrap();
    assert_eq!(
        store.redact("x late-secret-value").unwrap(),
        "x late-secret-value"
    );
}

#[test]
fn records_store_whole_results() {
    let dir = TempDir::new("records");
    let store = Store::open(&dir.path().join("vault.db")).unwrap();
    let big = "x".repeat(1 << 20) + "END";
    let id = store.record_put("mcp:srv/tool", &big).unwrap();
    let rec = store.record_get(&id).unwrap();
    assert_eq!(
        (rec.content.len(), rec.size, rec.source.as_str()),
        (big.len(), big.len() as i64, "mcp:srv/tool")
    );
    assert!(rec.content.ends_with("END"));
    assert!(matches!(
        store.record_get("rec_missing"),
        Err(Error::NotFound(_))
    ));
    assert_eq!(store.record_list(10).unwrap()[0].id, id);
}

#[test]
fn the_audit_trail_is_append_only_and_chained() {
    let t = Tai::new("audit");
    t.run_stdin(&["vault", "secret", "set", "one"], "v1").ok();
    t.run_stdin(&["vault", "secret", "set", "two"], "v2").ok();
    t.run(&["vault", "secret", "rm", "one"]).ok();
    let shown = t.run(&["vault", "audit"]).ok().to_string();
    assert!(
        shown.contains("secret") && shown.contains("removed"),
        "{shown}"
    );
    assert!(
        !shown.contains("v1") || !shown.contains(" v1 "),
        "values never reach the trail: {shown}"
    );
    let rows: serde_json::Value =
        serde_json::from_str(t.run(&["vault", "audit", "--json", "--limit", "2"]).ok()).unwrap();
    assert_eq!(rows.as_array().unwrap().len(), 2);
    assert_eq!(rows[1]["outcome"], "removed");
    assert!(
        t.run(&["vault", "audit", "--verify"])
            .ok()
            .contains("3 rows")
    );

    // the triggers refuse edits through SQL ...
    let conn = t.raw_db();
    assert!(
        conn.execute("UPDATE audit SET outcome = 'x' WHERE id = 2", [])
            .is_err()
    );
    assert!(conn.execute("DELETE FROM audit WHERE id = 2", []).is_err());
    // ... and an edit that goes around them breaks the chain
    conn.execute_batch(
        "DROP TRIGGER audit_no_update; UPDATE audit SET subject = 'three' WHERE id = 2;",
    )
    .unwrap();
    drop(conn);
    let err = t.run(&["vault", "audit", "--verify"]).fails(1).to_string();
    assert!(err.contains("broken at row 2"), "{err}");
}
