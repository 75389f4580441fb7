//! One call to a stored server's tool, the path every MCP call takes: allow/deny list,
//! `${VAR}` resolution, consent re-checked when the command changed, approval, the call,
//! redaction of the result, and an audit row (mcp-call: server/tool, argument digest,
//! outcome, duration, size).

use std::time::Instant;

use serde_json::{Map, Value};

use super::client::{McpClient, Timeouts};
use super::{intake, store};
use crate::approval::Approver;
use crate::config::normalize::Entry;
use crate::vault::{Store, audit::Event, audit::digest};

/// How a call ended. `text` is already redacted.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct CallOutcome {
    /// ok, tool-error, protocol-error, denied
    pub outcome: &'static str,
    pub text: String,
    pub is_error: bool,
}

/// Everything before a connection to a stored server: the row, the allow/deny list for
/// `tool`, `${VAR}` resolved (values joined to the redaction set), and consent asked again
/// when the expanded command changed since it was approved.
pub fn prepare(
    store: &mut Store,
    server: &str,
    tool: Option<&str>,
    approver: &mut dyn Approver,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<(Entry, intake::Resolved), String> {
    let row = store::load(store, server)
        .map_err(|e| e.to_string())?
        .ok_or_else(|| format!("no MCP server named {server:?} (see `tai mcp list`)"))?;
    let entry = row.entry;
    if let Some(tool) = tool
        && !store::allowed(&entry, tool)
    {
        return Err(format!(
            "{server}: the tool {tool:?} is not allowed by the server's tool list"
        ));
    }
    let resolved = intake::resolve(&entry, store, env)?;
    intake::remember_values(store, &resolved);
    let hash = resolved.consent_hash();
    let stored_hash = store
        .meta_text(&store::consent_key(server))
        .map_err(|e| e.to_string())?;
    if stored_hash.as_deref() != Some(hash.as_str()) {
        let what =
            format!("run the MCP server {server:?}, whose command changed since it was approved");
        let decision = approver.approve(&what, &format!("  {}", resolved.shown()));
        if decision != Ok(true) {
            let _ = store.audit(Event::new("mcp-consent", server, "denied"));
            return Err(decision
                .err()
                .unwrap_or_else(|| format!("{what}: not approved")));
        }
        store
            .meta_set(&store::consent_key(server), hash.as_str())
            .map_err(|e| e.to_string())?;
        let _ = store.audit(Event::new("mcp-consent", server, "approved"));
    }
    Ok((entry, resolved))
}

/// Call `tool` on the stored `server`. Errors before the call (unknown server, a tool
/// not allowed, missing variables, no approval) are `Err`; a call that failed on the wire
/// or as a tool is an `Ok` outcome with `is_error`.
pub fn call(
    store: &mut Store,
    server: &str,
    tool: &str,
    arguments: Map<String, Value>,
    approver: &mut dyn Approver,
    env: &dyn Fn(&str) -> Option<String>,
    timeouts: Timeouts,
) -> Result<CallOutcome, String> {
    let (entry, resolved) = prepare(store, server, Some(tool), approver, env)?;
    let subject = format!("{server}/{tool}");
    let args_json = serde_json::to_string(&arguments).unwrap_or_default();
    let arg_digest = digest(args_json.as_bytes());
    let what = format!("call {subject} (arguments {arg_digest})");
    let shown = store.redact(&args_json).map_err(|e| e.to_string())?;
    // Lasting trust (`tai mcp trust`), keyed on the pin: a redefinition drops it.
    let pin = super::trust::current_pin(store, server, tool).map_err(|e| e.to_string())?;
    let trusted = pin
        .as_deref()
        .is_some_and(|p| super::trust::is_trusted(store, server, tool, p));
    let decision = if trusted {
        Ok(true)
    } else {
        match approver.approve_or_remember(&what, &format!("  {shown}")) {
            Ok((true, true)) => super::trust::trust(store, server, tool).map(|_| true),
            other => other.map(|(ok, _)| ok),
        }
    };
    if decision != Ok(true) {
        let _ = store.audit(Event {
            arg_digest: Some(arg_digest),
            ..Event::new("mcp-call", &subject, "denied")
        });
        return Err(decision
            .err()
            .unwrap_or_else(|| format!("{what}: not approved")));
    }
    let t0 = Instant::now();
    let result = McpClient::connect(
        &resolved.spec,
        entry.protocol,
        entry.options.timeouts(timeouts),
    )
    .and_then(|mut c| {
        let r = c.call_tool(tool, arguments);
        c.close();
        r
    });
    let took = t0.elapsed().as_millis() as i64;
    let (outcome, raw, is_error) = match result {
        Ok(r) => (
            if r.is_error { "tool-error" } else { "ok" },
            r.text(),
            r.is_error,
        ),
        Err(e) => ("protocol-error", e.to_string(), true),
    };
    let text = store.redact(&raw).map_err(|e| e.to_string())?;
    let _ = store.audit(Event {
        arg_digest: Some(arg_digest),
        duration_ms: Some(took),
        size: Some(text.len() as i64),
        ..Event::new("mcp-call", &subject, outcome)
    });
    Ok(CallOutcome {
        outcome,
        text,
        is_error,
    })
}
