//! A fresh `tools/list` answer compared with what the vault holds for a server: added,
//! redefined and removed tools stored (each change audited as `mcp-drift`), pins never
//! changed. What was approved before a redefinition is kept for a person's review.

use serde_json::json;

use crate::mcp::protocol::Tool;
use crate::mcp_servers::store::{self, pin_hash};
use crate::vault::Store;
use crate::vault::audit::{Event, Outcome};

/// The key under which the last approved definition of a drifted tool is kept for review.
pub fn approved_key(server: &str, tool: &str) -> String {
    format!("mcp.approved.{server}.{tool}")
}

/// A fresh listing applied to the vault (see [`apply_listing`]), each change audited as
/// `mcp-drift`. Pins are never changed here.
pub fn record_listing(store: &mut Store, server: &str, listed: &[Tool]) -> Vec<(String, Outcome)> {
    let changes = apply_listing(store, server, listed);
    for (tool, change) in &changes {
        let _ = store.audit(Event::new(
            "mcp-drift",
            &format!("{server}/{tool}"),
            *change,
        ));
    }
    changes
}

/// Compare a fresh listing with the stored definitions and pins; store what changed.
/// Returns `(tool, Added | Changed | Removed)` for every difference.
pub fn apply_listing(store: &mut Store, server: &str, listed: &[Tool]) -> Vec<(String, Outcome)> {
    let stored = store::tools(store, server).unwrap_or_default();
    let mut changes = Vec::new();
    for t in listed {
        let hash = pin_hash(&t.name, t.description.as_deref(), &t.input_schema);
        match stored.iter().find(|s| s.name == t.name) {
            Some(s) if pin_hash(&s.name, s.description.as_deref(), &s.schema) == hash => {}
            Some(s) => {
                if s.pinned {
                    // Keep what was approved, for review.
                    let _ = store.meta_set(
                        &approved_key(server, &t.name),
                        json!({"description": s.description, "inputSchema": s.schema}).to_string(),
                    );
                }
                let _ = store::put_tool(store, server, t);
                changes.push((t.name.clone(), Outcome::Changed));
            }
            None => {
                let _ = store::put_tool(store, server, t);
                changes.push((t.name.clone(), Outcome::Added));
            }
        }
    }
    for s in &stored {
        if !listed.iter().any(|t| t.name == s.name) {
            let _ = store::delete_tool(store, server, &s.name);
            changes.push((s.name.clone(), Outcome::Removed));
        }
    }
    changes
}
