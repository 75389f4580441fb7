//! Lasting trust: `tai mcp trust SERVER TOOL|'*'` lets calls of a tool go without an
//! approval question, across sessions, while the tool stays as it was when trusted.
//!
//! A trust is the tool's pin at the time, kept in the vault's `meta` as
//! `mcp.trust.SERVER.TOOL`; a call is trusted only while that equals the tool's current
//! pin, so a redefinition (a new pin, after `tai mcp approve`) drops it. `'*'` trusts
//! each tool the server has now, one by one (tools added later are not covered).
//! `is_trusted` is the one question the approval step asks.

use rusqlite::OptionalExtension;

use super::store;
use crate::vault::{self, Store};

fn key(server: &str, tool: &str) -> String {
    format!("mcp.trust.{server}.{tool}")
}

/// The pin of `tool` when its stored definition still matches it (`None`: unknown or
/// redefined and not yet approved).
pub fn current_pin(store: &Store, server: &str, tool: &str) -> vault::Result<Option<String>> {
    let Some(t) = store::tools(store, server)?
        .into_iter()
        .find(|t| t.name == tool && t.pinned)
    else {
        return Ok(None);
    };
    Ok(Some(store::pin_hash(
        &t.name,
        t.description.as_deref(),
        &t.schema,
    )))
}

/// Whether calls of `server`/`tool` with this `pin` need no approval.
pub fn is_trusted(store: &Store, server: &str, tool: &str, pin: &str) -> bool {
    store
        .meta_text(&key(server, tool))
        .ok()
        .flatten()
        .is_some_and(|p| p == pin)
}

/// Trust one tool (or `*`: every tool the server has now) at its current pin; returns
/// the tools trusted.
pub fn trust(store: &Store, server: &str, tool: &str) -> Result<Vec<String>, String> {
    if store::load(store, server)
        .map_err(|e| e.to_string())?
        .is_none()
    {
        return Err(format!(
            "no MCP server named {server:?} (see `tai mcp list`)"
        ));
    }
    let names: Vec<String> = if tool == "*" {
        store::tools(store, server)
            .map_err(|e| e.to_string())?
            .into_iter()
            .filter(|t| t.pinned)
            .map(|t| t.name)
            .collect()
    } else {
        vec![tool.to_string()]
    };
    for name in &names {
        let pin = current_pin(store, server, name)
            .map_err(|e| e.to_string())?
            .ok_or_else(|| {
                format!(
                    "{server}/{name}: no such tool, or it changed and awaits review (`tai mcp tools {server}`, `tai mcp approve {server} {name}`)"
                )
            })?;
        store
            .meta_set(&key(server, name), pin.as_str())
            .map_err(|e| e.to_string())?;
    }
    Ok(names)
}

/// Trust exactly `tool` (never read as `*`, whatever the server named it) at its current
/// pin: what a person's "remember" answer to one call's question covers.
pub fn trust_one(store: &Store, server: &str, tool: &str) -> Result<(), String> {
    let pin = current_pin(store, server, tool)
        .map_err(|e| e.to_string())?
        .ok_or_else(|| format!("{server}/{tool}: no such tool, or it awaits review"))?;
    store
        .meta_set(&key(server, tool), pin.as_str())
        .map_err(|e| e.to_string())
}

/// Forget the trust of one tool (or `*`: every tool of the server); returns how many.
pub fn untrust(store: &Store, server: &str, tool: &str) -> vault::Result<usize> {
    let n = if tool == "*" {
        let prefix = format!("mcp.trust.{server}.");
        store.conn().execute(
            "DELETE FROM meta WHERE substr(key, 1, ?1) = ?2",
            rusqlite::params![prefix.len() as i64, prefix],
        )
    } else {
        store
            .conn()
            .execute("DELETE FROM meta WHERE key = ?1", [key(server, tool)])
    };
    n.map_err(|e| vault::Error::Sql {
        context: "forgetting a trust",
        detail: e.to_string(),
    })
}

/// The trust state of a tool, for `tai mcp get`: `None` never trusted, `Some(true)`
/// trusted, `Some(false)` trusted once but redefined since (the trust no longer applies).
pub fn state(store: &Store, server: &str, tool: &str) -> vault::Result<Option<bool>> {
    let kept: Option<String> = store
        .conn()
        .query_row(
            "SELECT value FROM meta WHERE key = ?1",
            [key(server, tool)],
            |r| r.get(0),
        )
        .optional()
        .map_err(|e| vault::Error::Sql {
            context: "reading a trust",
            detail: e.to_string(),
        })?;
    let Some(kept) = kept else {
        return Ok(None);
    };
    Ok(Some(
        current_pin(store, server, tool)?.as_deref() == Some(kept.as_str()),
    ))
}
