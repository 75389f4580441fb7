//! The vault schema as an ordered list of migrations; `PRAGMA user_version` counts those applied.

/// Migration `i` takes a vault from `user_version = i` to `i + 1`.
pub const MIGRATIONS: &[&str] = &[V1, V2, V3, V4, V5, V6];

/// The version a fully migrated vault has.
pub const LATEST: u32 = MIGRATIONS.len() as u32;

/// The tables the contract names, in the order `docs/mcp.md` lists them.
pub const MCP_TABLES: &[&str] = &[
    "mcp_servers",
    "mcp_server_profiles",
    "mcp_tool_pins",
    "mcp_server_tools",
];

/// Every table of the vault.
pub const ALL_TABLES: &[&str] = &[
    "mcp_servers",
    "mcp_server_profiles",
    "mcp_tool_pins",
    "mcp_server_tools",
    "secrets",
    "records",
    "audit",
    "profiles",
    "meta",
    "conversations",
    "served_conversations",
    "served_sessions",
];

/// v6: no table changes. From v6 on, the newest audit rows may wait in the journal beside
/// the vault (`vault.db-audit`, see `audit_journal`) until a fold moves them into `audit`;
/// a tai from before would not see them and would chain its own rows past them, so the
/// version tells it the vault is newer than it understands.
const V6: &str = "SELECT 1;";

/// v5: the audit table without AUTOINCREMENT. Every row's id is chosen by the append
/// (the last id + 1, inside the write lock) and bound into its link, so the counter in
/// `sqlite_sequence` only cost a third changed page per audited call (docs/benchmarks.md).
/// The rows, their order and the append-only triggers are kept as they were.
const V5: &str = r#"
CREATE TABLE audit_v5 (
    id         INTEGER PRIMARY KEY,
    time       INTEGER NOT NULL,
    kind       TEXT NOT NULL,
    subject    TEXT NOT NULL,
    arg_digest TEXT,
    outcome    TEXT NOT NULL,
    duration   INTEGER,
    size       INTEGER,
    detail     TEXT,
    hash       TEXT NOT NULL,  -- the link chaining this row to the one before (see `audit`)
    chain      INTEGER NOT NULL DEFAULT 0
);
INSERT INTO audit_v5(id, time, kind, subject, arg_digest, outcome, duration, size, detail, hash, chain)
    SELECT id, time, kind, subject, arg_digest, outcome, duration, size, detail, hash, chain
    FROM audit ORDER BY id;
DROP TRIGGER audit_no_update;
DROP TRIGGER audit_no_delete;
DROP TABLE audit;
ALTER TABLE audit_v5 RENAME TO audit;
CREATE TRIGGER audit_no_update BEFORE UPDATE ON audit
    BEGIN SELECT RAISE(ABORT, 'the audit trail is append-only'); END;
CREATE TRIGGER audit_no_delete BEFORE DELETE ON audit
    BEGIN SELECT RAISE(ABORT, 'the audit trail is append-only'); END;
"#;

/// v4: served `chat` conversations by handle (see `served`), shared by every tai process
/// on the vault: the history (sealed while the seal is on), when it was last used, and
/// the lease a running turn holds (so a second concurrent turn is told "busy", and a
/// crashed worker's lease lapses by itself); and the 2025-11-25 sessions the served
/// HTTP endpoint opened, so any server on the vault accepts them (behind a proxy).
const V4: &str = r#"
CREATE TABLE served_conversations (
    handle       TEXT PRIMARY KEY,
    history_json NOT NULL,   -- TEXT when unsealed, a sealed BLOB while the seal is on
    last_seen    INTEGER NOT NULL,
    lease_until  INTEGER
);
CREATE TABLE served_sessions (
    id        TEXT PRIMARY KEY,
    last_seen INTEGER NOT NULL
);
"#;

/// v3: the audit chain's keying per row (0: v1 SHA-256, 1: public key, 2: the sealed
/// key; see `audit`), and a stdio server's passthrough list (`env_vars`).
const V3: &str = r#"
ALTER TABLE audit ADD COLUMN chain INTEGER NOT NULL DEFAULT 0;
ALTER TABLE mcp_servers ADD COLUMN env_vars_json TEXT;
"#;

/// v2: conversations, so `tai --continue` resumes the last one.
const V2: &str = r#"
CREATE TABLE conversations (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    profile       TEXT NOT NULL,
    created       INTEGER NOT NULL,
    updated       INTEGER NOT NULL,
    messages_json TEXT NOT NULL
);
"#;

const V1: &str = r#"
CREATE TABLE mcp_servers (
    name         TEXT PRIMARY KEY,
    transport    TEXT NOT NULL,
    command      TEXT,
    args_json    TEXT,
    env_json     TEXT,
    url          TEXT,
    headers_json TEXT,   -- a BLOB (sealed) while the vault seal is on
    cwd          TEXT,
    allow_json   TEXT,
    deny_json    TEXT,
    source       TEXT NOT NULL,
    created      INTEGER NOT NULL,
    updated      INTEGER NOT NULL
);
CREATE TABLE mcp_server_profiles (
    server  TEXT NOT NULL REFERENCES mcp_servers(name) ON DELETE CASCADE,
    profile TEXT NOT NULL,
    enabled INTEGER NOT NULL,
    PRIMARY KEY (server, profile)
);
CREATE TABLE mcp_tool_pins (
    server  TEXT NOT NULL REFERENCES mcp_servers(name) ON DELETE CASCADE,
    tool    TEXT NOT NULL,
    hash    TEXT NOT NULL,
    updated INTEGER NOT NULL,
    PRIMARY KEY (server, tool)
);
CREATE TABLE mcp_server_tools (
    server      TEXT NOT NULL REFERENCES mcp_servers(name) ON DELETE CASCADE,
    tool        TEXT NOT NULL,
    description TEXT,
    schema_json TEXT,
    updated     INTEGER NOT NULL,
    PRIMARY KEY (server, tool)
);
CREATE TABLE secrets (
    name    TEXT PRIMARY KEY,
    value   NOT NULL,        -- TEXT when unsealed, a sealed BLOB while the seal is on
    updated INTEGER NOT NULL
);
CREATE TABLE records (
    id      TEXT PRIMARY KEY,
    source  TEXT NOT NULL,
    size    INTEGER NOT NULL,
    created INTEGER NOT NULL,
    content TEXT NOT NULL
);
CREATE TABLE audit (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    time       INTEGER NOT NULL,
    kind       TEXT NOT NULL,
    subject    TEXT NOT NULL,
    arg_digest TEXT,
    outcome    TEXT NOT NULL,
    duration   INTEGER,
    size       INTEGER,
    detail     TEXT,
    hash       TEXT NOT NULL  -- sha256 chaining this row to the one before
);
CREATE TRIGGER audit_no_update BEFORE UPDATE ON audit
    BEGIN SELECT RAISE(ABORT, 'the audit trail is append-only'); END;
CREATE TRIGGER audit_no_delete BEFORE DELETE ON audit
    BEGIN SELECT RAISE(ABORT, 'the audit trail is append-only'); END;
CREATE TABLE profiles (
    name           TEXT PRIMARY KEY,
    model          TEXT,
    base_url       TEXT,
    api_key_secret TEXT,
    created        INTEGER NOT NULL
);
CREATE TABLE meta (
    key   TEXT PRIMARY KEY,
    value NOT NULL
);
"#;
