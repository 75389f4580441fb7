//! The MCP tables of the vault: servers, per-profile enablement, listed tools and pins.
//!
//! Every multi-row change is one transaction; `env_json` and `headers_json` go through
//! the seal (listing, enabling and removing need neither them nor the passphrase); a
//! server's `protocol` choice and the hash of its consented argv live in `meta`
//! (`mcp.protocol.NAME`, `mcp.consent.NAME`) beside the contract's columns.

use std::collections::BTreeMap;

use rusqlite::types::Value as SqlValue;
use rusqlite::{OptionalExtension, params};
use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::mcp::era::EraChoice;
use crate::mcp::protocol::Tool;
use crate::mcp_servers::normalize::{Entry, Leg};
use crate::vault::{self, Store, now_ms};

/// A stored server.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ServerRow {
    pub entry: Entry,
    pub source: String,
    pub created: i64,
    pub updated: i64,
}

/// A stored tool with its pin state.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct StoredTool {
    pub name: String,
    pub description: Option<String>,
    pub schema: Value,
    /// The pin's hash equals this definition's hash.
    pub pinned: bool,
}

/// sha256 over the canonical JSON (sorted keys) of a tool's name, description and schema.
pub fn pin_hash(name: &str, description: Option<&str>, schema: &Value) -> String {
    let canonical =
        serde_json::json!({"name": name, "description": description, "inputSchema": schema});
    crate::entropy::hex(&Sha256::digest(canonical.to_string().as_bytes()))
}

fn sql(context: &'static str) -> impl FnOnce(rusqlite::Error) -> vault::Error {
    move |e| vault::Error::Sql {
        context,
        detail: e.to_string(),
    }
}

fn protocol_key(name: &str) -> String {
    format!("mcp.protocol.{name}")
}

/// The entry's `ServerOptions` (timeouts, envFile, project) as JSON.
fn options_key(name: &str) -> String {
    format!("mcp.options.{name}")
}

pub fn consent_key(name: &str) -> String {
    format!("mcp.consent.{name}")
}

fn era_text(p: EraChoice) -> &'static str {
    match p {
        EraChoice::Auto => "auto",
        EraChoice::Pinned(e) => e.version(),
    }
}

pub fn count(store: &Store) -> vault::Result<usize> {
    store
        .conn()
        .query_row("SELECT count(*) FROM mcp_servers", [], |r| {
            r.get::<_, i64>(0)
        })
        .map(|n| n as usize)
        .map_err(sql("counting servers"))
}

/// Store (or replace) a server with its tools and pins, and the consented argv hash, in
/// one transaction. `enable` sets the registering profile's enablement. Tools and pins
/// are written for a new server only; a replaced one keeps its own.
pub fn save(
    store: &mut Store,
    entry: &Entry,
    source: &str,
    tools: &[Tool],
    consent_hash: &str,
    enable: Option<(&str, bool)>,
) -> vault::Result<()> {
    let name = &entry.name;
    let (transport, command, args, env, cwd, url, headers) = match &entry.leg {
        Leg::Stdio {
            command,
            args,
            env,
            cwd,
        } => (
            "stdio",
            Some(command.clone()),
            Some(serde_json::to_string(args).unwrap_or_default()),
            Some(store.seal_value(
                &format!("env:{name}"),
                &serde_json::to_string(env).unwrap_or_default(),
            )?),
            cwd.clone(),
            None,
            None,
        ),
        Leg::Http { url, headers } => {
            let h = serde_json::to_string(headers).unwrap_or_default();
            (
                "http",
                None,
                None,
                None,
                None,
                Some(url.clone()),
                Some(store.seal_value(&format!("headers:{name}"), &h)?),
            )
        }
    };
    let allow = entry
        .allow
        .as_ref()
        .map(|a| serde_json::to_string(a).unwrap_or_default());
    let deny = serde_json::to_string(&entry.deny).unwrap_or_default();
    let env_vars = serde_json::to_string(&entry.env_vars).unwrap_or_default();
    let now = now_ms();
    let tx = store
        .conn_mut()
        .transaction()
        .map_err(sql("storing a server"))?;
    let created: Option<i64> = tx
        .query_row(
            "SELECT created FROM mcp_servers WHERE name = ?1",
            [name],
            |r| r.get(0),
        )
        .optional()
        .map_err(sql("storing a server"))?;
    // A stored server's tools and pins are left as they are: the caller applies the live
    // listing against the pins (`listing::record_listing`), so re-adding never re-pins.
    let tools: &[Tool] = if created.is_some() { &[] } else { tools };
    tx.execute(
        // An upsert, not REPLACE: the row is updated in place, so its profile rows stay.
        "INSERT INTO mcp_servers(name, transport, command, args_json, env_json, url, headers_json, cwd,
             allow_json, deny_json, source, created, updated, env_vars_json)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)
         ON CONFLICT(name) DO UPDATE SET transport = excluded.transport, command = excluded.command,
             args_json = excluded.args_json, env_json = excluded.env_json, url = excluded.url,
             headers_json = excluded.headers_json, cwd = excluded.cwd, allow_json = excluded.allow_json,
             deny_json = excluded.deny_json, source = excluded.source, updated = excluded.updated,
             env_vars_json = excluded.env_vars_json",
        params![name, transport, command, args, env, url, headers, cwd, allow, deny, source, created.unwrap_or(now), now, env_vars],
    )
    .map_err(sql("storing a server"))?;
    for t in tools {
        let schema = t.input_schema.to_string();
        tx.execute(
            "INSERT OR REPLACE INTO mcp_server_tools(server, tool, description, schema_json, updated) VALUES (?1, ?2, ?3, ?4, ?5)",
            params![name, t.name, t.description, schema, now],
        )
        .map_err(sql("storing tools"))?;
        let hash = pin_hash(&t.name, t.description.as_deref(), &t.input_schema);
        tx.execute(
            "INSERT OR REPLACE INTO mcp_tool_pins(server, tool, hash, updated) VALUES (?1, ?2, ?3, ?4)",
            params![name, t.name, hash, now],
        )
        .map_err(sql("storing pins"))?;
    }
    for (k, v) in [
        (protocol_key(name), era_text(entry.protocol).to_string()),
        (consent_key(name), consent_hash.to_string()),
    ] {
        tx.execute(
            "INSERT OR REPLACE INTO meta(key, value) VALUES (?1, ?2)",
            params![k, v],
        )
        .map_err(sql("storing a server"))?;
    }
    let options = serde_json::to_string(&entry.options).unwrap_or_default();
    if entry.options.is_default() {
        tx.execute("DELETE FROM meta WHERE key = ?1", [options_key(name)])
    } else {
        tx.execute(
            "INSERT OR REPLACE INTO meta(key, value) VALUES (?1, ?2)",
            params![options_key(name), options],
        )
    }
    .map_err(sql("storing a server"))?;
    if let Some((profile, on)) = enable {
        tx.execute(
            "INSERT OR REPLACE INTO mcp_server_profiles(server, profile, enabled) VALUES (?1, ?2, ?3)",
            params![name, profile, on as i64],
        )
        .map_err(sql("storing enablement"))?;
    }
    tx.commit().map_err(sql("storing a server"))?;
    store.redaction_changed(); // its literal env and header values are secrets too
    Ok(())
}

/// Remove a server, its profile rows, tools, pins and meta keys in one transaction.
pub fn remove(store: &mut Store, name: &str) -> vault::Result<()> {
    let tx = store
        .conn_mut()
        .transaction()
        .map_err(sql("removing a server"))?;
    let n = tx
        .execute("DELETE FROM mcp_servers WHERE name = ?1", [name])
        .map_err(sql("removing a server"))?;
    if n == 0 {
        return Err(vault::Error::NotFound(format!(
            "no MCP server named {name:?} (see `tai mcp list`)"
        )));
    }
    for part in ["access", "refresh", "client", "state"] {
        let secret = format!("{}.{part}", super::oauth_vault::stem(name));
        tx.execute("DELETE FROM secrets WHERE name = ?1", [secret])
            .map_err(sql("removing a server's login"))?;
    }
    tx.execute(
        "DELETE FROM meta WHERE key IN (?1, ?2, ?3)",
        params![protocol_key(name), consent_key(name), options_key(name)],
    )
    .map_err(sql("removing a server"))?;
    // Reviews kept for drifted tools (`mcp.approved.NAME.TOOL`); compared as a prefix, not
    // with LIKE, whose `_` would match other servers' names.
    for prefix in [
        format!("mcp.approved.{name}."),
        format!("mcp.trust.{name}."),
    ] {
        tx.execute(
            "DELETE FROM meta WHERE substr(key, 1, ?1) = ?2",
            params![prefix.len() as i64, prefix],
        )
        .map_err(sql("removing a server"))?;
    }
    tx.commit().map_err(sql("removing a server"))?;
    store.redaction_changed();
    Ok(())
}

/// A row as read: the entry without its sealable values, which follow as stored.
type RawRow = (String, Entry, SqlValue, String, i64, i64, SqlValue);

fn read_entry(r: &rusqlite::Row<'_>) -> rusqlite::Result<RawRow> {
    let name: String = r.get(0)?;
    let transport: String = r.get(1)?;
    let list = |s: Option<String>| -> Vec<String> {
        s.and_then(|j| serde_json::from_str(&j).ok())
            .unwrap_or_default()
    };
    let leg = if transport == "http" {
        Leg::Http {
            url: r.get::<_, Option<String>>(5)?.unwrap_or_default(),
            headers: BTreeMap::new(),
        }
    } else {
        Leg::Stdio {
            command: r.get::<_, Option<String>>(2)?.unwrap_or_default(),
            args: list(r.get(3)?),
            env: BTreeMap::new(), // opened from the seal in `finish`
            cwd: r.get(7)?,
        }
    };
    let allow: Option<String> = r.get(8)?;
    let entry = Entry {
        name: name.clone(),
        leg,
        protocol: EraChoice::Auto,
        allow: allow.and_then(|j| serde_json::from_str(&j).ok()),
        deny: list(r.get(9)?),
        enabled: None,
        env_vars: list(r.get(13)?),
        options: Default::default(),
    };
    Ok((
        name,
        entry,
        r.get(6)?,
        r.get(10)?,
        r.get(11)?,
        r.get(12)?,
        r.get(4)?,
    ))
}

const COLUMNS: &str = "name, transport, command, args_json, env_json, url, headers_json, cwd, allow_json, deny_json, source, created, updated, env_vars_json";

/// Every stored server, by name. Env and header values are opened from the seal (the
/// vault must be unlocked when sealed).
pub fn list(store: &Store) -> vault::Result<Vec<ServerRow>> {
    list_rows(store, true)
}

/// Every stored server without its env and header values: names, commands, URLs,
/// profiles, tool lists. Works on a sealed vault without the passphrase.
pub fn list_public(store: &Store) -> vault::Result<Vec<ServerRow>> {
    list_rows(store, false)
}

fn list_rows(store: &Store, open: bool) -> vault::Result<Vec<ServerRow>> {
    let mut st = store
        .conn()
        .prepare(&format!("SELECT {COLUMNS} FROM mcp_servers ORDER BY name"))
        .map_err(sql("listing servers"))?;
    let rows = st
        .query_map([], read_entry)
        .map_err(sql("listing servers"))?;
    let rows: Vec<_> = rows
        .collect::<rusqlite::Result<_>>()
        .map_err(sql("listing servers"))?;
    rows.into_iter()
        .map(|row| finish(store, row, open))
        .collect()
}

/// Whether a server of that name is stored (needs no passphrase).
pub fn exists(store: &Store, name: &str) -> vault::Result<bool> {
    store
        .conn()
        .query_row(
            "SELECT count(*) FROM mcp_servers WHERE name = ?1",
            [name],
            |r| r.get::<_, i64>(0),
        )
        .map(|n| n > 0)
        .map_err(sql("reading a server"))
}

pub fn load(store: &Store, name: &str) -> vault::Result<Option<ServerRow>> {
    let row = store
        .conn()
        .query_row(
            &format!("SELECT {COLUMNS} FROM mcp_servers WHERE name = ?1"),
            [name],
            read_entry,
        )
        .optional()
        .map_err(sql("reading a server"))?;
    row.map(|r| finish(store, r, true)).transpose()
}

fn finish(
    store: &Store,
    (name, mut entry, headers, source, created, updated, env): RawRow,
    open: bool,
) -> vault::Result<ServerRow> {
    match &mut entry.leg {
        Leg::Http { headers: h, .. } if open && !matches!(headers, SqlValue::Null) => {
            let text = store.open_value(&format!("headers:{name}"), headers)?;
            *h = serde_json::from_str(&text).unwrap_or_default();
        }
        Leg::Stdio { env: e, .. } if open && !matches!(env, SqlValue::Null) => {
            let text = store.open_value(&format!("env:{name}"), env)?;
            *e = serde_json::from_str(&text).unwrap_or_default();
        }
        _ => {}
    }
    entry.protocol = store
        .meta_text(&protocol_key(&name))?
        .as_deref()
        .and_then(EraChoice::parse)
        .unwrap_or_default();
    entry.options = store
        .meta_text(&options_key(&name))?
        .and_then(|j| serde_json::from_str(&j).ok())
        .unwrap_or_default();
    Ok(ServerRow {
        entry,
        source,
        created,
        updated,
    })
}

/// Whether the server's allow/deny lists let `tool` through (listing and calling alike).
pub fn allowed(entry: &Entry, tool: &str) -> bool {
    !entry.deny.iter().any(|d| d == tool)
        && entry
            .allow
            .as_ref()
            .is_none_or(|a| a.iter().any(|x| x == tool))
}

/// One line of `tai mcp list` / `mcp_list`.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ServerSummary {
    pub name: String,
    pub transport: &'static str,
    pub enabled_profiles: Vec<String>,
    pub tools: usize,
    pub pinned: usize,
    pub source: String,
}

/// Every stored server with its enablement and tool counts.
pub fn summaries(store: &Store) -> vault::Result<Vec<ServerSummary>> {
    let mut out = Vec::new();
    for r in list_public(store)? {
        let name = r.entry.name;
        let tools = tools(store, &name)?;
        out.push(ServerSummary {
            enabled_profiles: profiles(store, &name)?
                .into_iter()
                .filter(|(_, on)| *on)
                .map(|(p, _)| p)
                .collect(),
            transport: match r.entry.leg {
                Leg::Stdio { .. } => "stdio",
                Leg::Http { .. } => "http",
            },
            pinned: tools.iter().filter(|t| t.pinned).count(),
            tools: tools.len(),
            source: r.source,
            name,
        });
    }
    Ok(out)
}

/// `(profile, enabled)` rows of a server.
pub fn profiles(store: &Store, server: &str) -> vault::Result<Vec<(String, bool)>> {
    let mut st = store
        .conn()
        .prepare(
            "SELECT profile, enabled FROM mcp_server_profiles WHERE server = ?1 ORDER BY profile",
        )
        .map_err(sql("reading enablement"))?;
    let rows = st
        .query_map([server], |r| Ok((r.get(0)?, r.get::<_, i64>(1)? != 0)))
        .map_err(sql("reading enablement"))?;
    rows.collect::<rusqlite::Result<_>>()
        .map_err(sql("reading enablement"))
}

/// Whether a server is enabled for a profile (no row: disabled).
pub fn is_enabled(store: &Store, server: &str, profile: &str) -> vault::Result<bool> {
    Ok(profiles(store, server)?
        .iter()
        .any(|(p, on)| p == profile && *on))
}

pub fn set_enabled(store: &Store, server: &str, profile: &str, on: bool) -> vault::Result<()> {
    if !exists(store, server)? {
        return Err(vault::Error::NotFound(format!(
            "no MCP server named {server:?} (see `tai mcp list`)"
        )));
    }
    store
        .conn()
        .execute(
            "INSERT OR REPLACE INTO mcp_server_profiles(server, profile, enabled) VALUES (?1, ?2, ?3)",
            params![server, profile, on as i64],
        )
        .map_err(sql("storing enablement"))?;
    Ok(())
}

/// Store one tool's current definition (its pin is left as it is).
pub fn put_tool(store: &Store, server: &str, t: &Tool) -> vault::Result<()> {
    store
        .conn()
        .execute(
            "INSERT OR REPLACE INTO mcp_server_tools(server, tool, description, schema_json, updated) VALUES (?1, ?2, ?3, ?4, ?5)",
            params![server, t.name, t.description, t.input_schema.to_string(), now_ms()],
        )
        .map_err(sql("storing a tool"))?;
    Ok(())
}

/// Forget a tool the server no longer lists, with its pin.
pub fn delete_tool(store: &Store, server: &str, tool: &str) -> vault::Result<()> {
    for table in ["mcp_server_tools", "mcp_tool_pins"] {
        store
            .conn()
            .execute(
                &format!("DELETE FROM {table} WHERE server = ?1 AND tool = ?2"),
                params![server, tool],
            )
            .map_err(sql("removing a tool"))?;
    }
    Ok(())
}

/// Approve a tool's definition: its pin becomes `hash`.
pub fn pin(store: &Store, server: &str, tool: &str, hash: &str) -> vault::Result<()> {
    store
        .conn()
        .execute(
            "INSERT OR REPLACE INTO mcp_tool_pins(server, tool, hash, updated) VALUES (?1, ?2, ?3, ?4)",
            params![server, tool, hash, now_ms()],
        )
        .map_err(sql("pinning a tool"))?;
    Ok(())
}

/// The stored tools of a server, with pin state.
pub fn tools(store: &Store, server: &str) -> vault::Result<Vec<StoredTool>> {
    let mut st = store
        .conn()
        .prepare(
            "SELECT t.tool, t.description, t.schema_json, p.hash FROM mcp_server_tools t
             LEFT JOIN mcp_tool_pins p ON p.server = t.server AND p.tool = t.tool
             WHERE t.server = ?1 ORDER BY t.rowid",
        )
        .map_err(sql("listing tools"))?;
    let rows = st
        .query_map([server], |r| {
            let name: String = r.get(0)?;
            let description: Option<String> = r.get(1)?;
            let schema: Value = r
                .get::<_, Option<String>>(2)?
                .and_then(|s| serde_json::from_str(&s).ok())
                .unwrap_or(Value::Null);
            let pin: Option<String> = r.get(3)?;
            let pinned =
                pin.as_deref() == Some(pin_hash(&name, description.as_deref(), &schema).as_str());
            Ok(StoredTool {
                name,
                description,
                schema,
                pinned,
            })
        })
        .map_err(sql("listing tools"))?;
    rows.collect::<rusqlite::Result<_>>()
        .map_err(sql("listing tools"))
}
