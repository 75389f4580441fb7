//! The bridge: enabled MCP servers' tools offered to the agent as `mcp_<server>_<tool>`.
//!
//! Tool schemas for selection come from the vault (`mcp_server_tools`), so offering tools
//! needs no live connection. A server is connected on its first call in the process and
//! kept for the process's lifetime (reconnected once if it died; closed on drop). Each new
//! connection, and each `notifications/tools/list_changed`, re-lists the tools and checks
//! them against their pins: added or redefined tools are withheld until a person approves
//! them (`tai mcp approve SERVER TOOL`), removals apply silently.

pub mod naming;

use std::collections::HashMap;

use serde_json::{Map, Value, json};

use crate::approval::Approver;
use crate::mcp::caps::MCP_MAX_TOOLS;
use crate::mcp::client::{McpClient, McpError, Timeouts};
use crate::mcp::dispatch;
use crate::mcp::protocol::Tool;
use crate::mcp::store::{self, pin_hash};
use crate::mcp::transport::TransportError;
use crate::tools::ToolOutput;
use crate::vault::{Store, audit::Event};

/// One offered tool.
#[derive(Clone, Debug, PartialEq)]
pub struct BridgedTool {
    pub name: String,
    pub server: String,
    pub tool: String,
    pub description: String,
    pub schema: Value,
    /// The approved definition's pin (part of the approval key, so a redefinition revokes
    /// "always" answers given to the old one).
    pub pin: String,
}

pub struct Bridge {
    pub tools: Vec<BridgedTool>,
    /// `(server, tool)` pairs withheld for drift, and extras past MCP_MAX_TOOLS (listed, not offered).
    pub withheld: Vec<(String, String)>,
    pub not_offered: Vec<(String, String)>,
    conns: HashMap<String, McpClient>,
    timeouts: Timeouts,
    /// How the last `call` ended, for the audit trail: ok, tool-error, protocol-error,
    /// timeout, withheld.
    pub last_outcome: &'static str,
}

/// The key under which the last approved definition of a drifted tool is kept for review.
fn approved_key(server: &str, tool: &str) -> String {
    format!("mcp.approved.{server}.{tool}")
}

impl Bridge {
    /// The tools of every server enabled for `profile`, from the vault.
    pub fn load(store: &Store, profile: &str) -> Result<Bridge, String> {
        let mut offered: Vec<(String, String, String, Value)> = Vec::new();
        let (mut withheld, mut not_offered) = (Vec::new(), Vec::new());
        for row in store::list(store).map_err(|e| e.to_string())? {
            let server = row.entry.name.clone();
            if !store::is_enabled(store, &server, profile).map_err(|e| e.to_string())? {
                continue;
            }
            let mut count = 0;
            for t in store::tools(store, &server).map_err(|e| e.to_string())? {
                if !store::allowed(&row.entry, &t.name) {
                    continue;
                }
                if !t.pinned {
                    withheld.push((server.clone(), t.name));
                } else if count >= MCP_MAX_TOOLS {
                    not_offered.push((server.clone(), t.name));
                } else {
                    count += 1;
                    let schema = if t.schema.is_object() {
                        t.schema
                    } else {
                        json!({"type": "object", "properties": {}})
                    };
                    offered.push((
                        server.clone(),
                        t.name,
                        t.description.unwrap_or_default(),
                        schema,
                    ));
                }
            }
        }
        let pairs: Vec<(&str, &str)> = offered
            .iter()
            .map(|(s, t, _, _)| (s.as_str(), t.as_str()))
            .collect();
        let names = naming::assign(&pairs);
        let tools = offered
            .into_iter()
            .zip(names)
            .map(|((server, tool, description, schema), name)| BridgedTool {
                pin: pin_hash(
                    &tool,
                    Some(description.as_str()).filter(|d| !d.is_empty()),
                    &schema,
                )[..8]
                    .to_string(),
                // The server's own words, marked as such: untrusted data, not instructions.
                description: format!("[MCP server {server}, tool {tool}] {description}"),
                name,
                server,
                tool,
                schema,
            })
            .collect();
        Ok(Bridge {
            tools,
            withheld,
            not_offered,
            conns: HashMap::new(),
            timeouts: Timeouts::default(),
            last_outcome: "ok",
        })
    }

    pub fn find(&self, name: &str) -> Option<&BridgedTool> {
        self.tools.iter().find(|t| t.name == name)
    }

    /// Call a bridged tool (the agent has approved it). Connects on first use.
    pub fn call(
        &mut self,
        store: &mut Store,
        name: &str,
        arguments: Map<String, Value>,
        approver: &mut dyn Approver,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> ToolOutput {
        self.last_outcome = "protocol-error";
        let Some(t) = self.find(name).cloned() else {
            return ToolOutput::error(format!(
                "there is no bridged MCP tool named {name:?}; see `tai mcp tools`"
            ));
        };
        for attempt in 0..2 {
            if let Err(e) = self.connect(store, &t.server, approver, env) {
                return ToolOutput::error(e);
            }
            if self
                .withheld
                .iter()
                .any(|(s, x)| *s == t.server && *x == t.tool)
            {
                self.last_outcome = "withheld";
                return withheld_error(&t.server, &t.tool);
            }
            let Some(client) = self.conns.get_mut(&t.server) else {
                return ToolOutput::error("no connection");
            };
            match client.call_tool(&t.tool, arguments.clone()) {
                Ok(r) => {
                    if client.tools_changed {
                        self.recheck(store, &t.server);
                    }
                    self.last_outcome = if r.is_error { "tool-error" } else { "ok" };
                    return ToolOutput {
                        text: r.text(),
                        is_error: r.is_error,
                    };
                }
                Err(McpError::Transport {
                    error:
                        TransportError::Exited { .. }
                        | TransportError::Closed(_)
                        | TransportError::Io(_),
                    ..
                }) if attempt == 0 => {
                    // The server died: reconnect once.
                    self.conns.remove(&t.server);
                    let _ = store.audit(Event::new("mcp-reconnect", &t.server, "reconnecting"));
                }
                Err(e) => {
                    match e {
                        McpError::Transport {
                            error: TransportError::Timeout,
                            ..
                        } => self.last_outcome = "timeout",
                        McpError::Transport {
                            error: TransportError::Interrupted,
                            ..
                        } => self.last_outcome = "interrupted",
                        _ => {}
                    }
                    return ToolOutput::error(e.to_string());
                }
            }
        }
        ToolOutput::error(format!(
            "{}: the server failed again after one reconnect",
            t.server
        ))
    }

    /// The live connection to `server`, made (and drift-checked) on first use.
    fn connect(
        &mut self,
        store: &mut Store,
        server: &str,
        approver: &mut dyn Approver,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<(), String> {
        if self.conns.contains_key(server) {
            return Ok(());
        }
        let (entry, resolved) = dispatch::prepare(store, server, None, approver, env)?;
        let client =
            McpClient::connect(&resolved.spec, entry.protocol, self.timeouts).map_err(|e| {
                store
                    .redact(&e.to_string())
                    .unwrap_or_else(|_| "the server could not be started".into())
            })?;
        self.conns.insert(server.to_string(), client);
        self.recheck(store, server);
        Ok(())
    }

    /// List the server's tools again and apply the pins: changed and added tools are
    /// withheld (their new definitions stored, the approved one kept for review), removed
    /// tools are dropped.
    fn recheck(&mut self, store: &mut Store, server: &str) {
        let Some(client) = self.conns.get_mut(server) else {
            return;
        };
        let Ok(listed) = client.list_tools() else {
            return;
        };
        for (tool, change) in apply_listing(store, server, &listed) {
            let _ = store.audit(Event::new("mcp-drift", &format!("{server}/{tool}"), change));
            if change != "removed" && !self.withheld.iter().any(|(s, t)| s == server && *t == tool)
            {
                self.withheld.push((server.to_string(), tool.clone()));
            }
            // A removed tool is no longer offered; a changed or added one stays listed for
            // the audit trail's sake but every call to it is refused as withheld.
            if change == "removed" {
                self.tools
                    .retain(|t| !(t.server == server && t.tool == tool));
            }
        }
    }

    /// Close every connection (also done on drop).
    pub fn close(&mut self) {
        for (_, c) in self.conns.drain() {
            c.close();
        }
    }
}

impl Drop for Bridge {
    fn drop(&mut self) {
        self.close();
    }
}

fn withheld_error(server: &str, tool: &str) -> ToolOutput {
    ToolOutput::error(format!(
        "the MCP tool {server}/{tool} was added or redefined by its server since it was approved, so it is withheld. \
         A person must review it: `tai mcp tools {server}` shows it, `tai mcp approve {server} {tool}` approves it."
    ))
}

/// Compare a fresh listing with the stored definitions and pins; store what changed.
/// Returns `(tool, "added" | "changed" | "removed")` for every difference.
pub fn apply_listing(
    store: &mut Store,
    server: &str,
    listed: &[Tool],
) -> Vec<(String, &'static str)> {
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
                changes.push((t.name.clone(), "changed"));
            }
            None => {
                let _ = store::put_tool(store, server, t);
                changes.push((t.name.clone(), "added"));
            }
        }
    }
    for s in &stored {
        if !listed.iter().any(|t| t.name == s.name) {
            let _ = store::delete_tool(store, server, &s.name);
            changes.push((s.name.clone(), "removed"));
        }
    }
    changes
}

/// `tai mcp approve SERVER TOOL`: pin the tool's current definition. Returns what changed
/// (the approved definition before, and now), for the person to read.
pub fn approve(store: &mut Store, server: &str, tool: &str) -> Result<String, String> {
    let t = store::tools(store, server)
        .map_err(|e| e.to_string())?
        .into_iter()
        .find(|t| t.name == tool)
        .ok_or_else(|| format!("{server} has no tool {tool:?} (see `tai mcp tools {server}`)"))?;
    if t.pinned {
        return Ok(format!(
            "{server}/{tool} is already approved; nothing changed"
        ));
    }
    let before = store
        .meta_text(&approved_key(server, tool))
        .map_err(|e| e.to_string())?;
    let mut report = String::new();
    match before.and_then(|b| serde_json::from_str::<Value>(&b).ok()) {
        Some(b) => {
            let old_desc = b["description"].as_str().unwrap_or("");
            if old_desc != t.description.as_deref().unwrap_or("") {
                report.push_str(&format!(
                    "description:\n  - {old_desc}\n  + {}\n",
                    t.description.as_deref().unwrap_or("")
                ));
            }
            if b["inputSchema"] != t.schema {
                report.push_str(&format!(
                    "inputSchema:\n  - {}\n  + {}\n",
                    b["inputSchema"], t.schema
                ));
            }
        }
        None => report.push_str(&format!(
            "a new tool:\n  description: {}\n  inputSchema: {}\n",
            t.description.as_deref().unwrap_or(""),
            t.schema
        )),
    }
    store::pin(
        store,
        server,
        tool,
        &pin_hash(&t.name, t.description.as_deref(), &t.schema),
    )
    .map_err(|e| e.to_string())?;
    let _ = store.conn().execute(
        "DELETE FROM meta WHERE key = ?1",
        [approved_key(server, tool)],
    );
    let _ = store.audit(Event::new(
        "mcp-approve",
        &format!("{server}/{tool}"),
        "approved",
    ));
    Ok(report)
}
