//! Before a stored server is started or dialled: the row, the allow/deny list,
//! `${VAR}` resolution (values joined to the redaction set), and consent asked again when
//! the expanded command changed since it was approved. Calls themselves pass the one
//! trust gate (`bridge::gate::call`), which connects through here.

use super::{intake, store};
use crate::approval::Approver;
use crate::mcp_servers::normalize::Entry;
use crate::vault::Store;
use crate::vault::audit::{Event, Outcome};

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
        let decision = approver.approve(&what, &resolved.shown());
        if decision != Ok(true) {
            let _ = store.audit(Event::new("mcp-consent", server, Outcome::Denied));
            return Err(decision
                .err()
                .unwrap_or_else(|| format!("{what}: not approved")));
        }
        store
            .meta_set(&store::consent_key(server), hash.as_str())
            .map_err(|e| e.to_string())?;
        let _ = store.audit(Event::new("mcp-consent", server, Outcome::Approved));
    }
    Ok((entry, resolved))
}
