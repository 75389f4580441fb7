//! The bridge: enabled MCP servers' tools offered to the agent as `mcp_<server>_<tool>`,
//! and the kept connections every MCP call (bridged, `mcp_call`, `tai mcp call`) uses.
//!
//! Tool schemas for selection come from the vault (`mcp_server_tools`), so offering tools
//! needs no live connection. A server is connected on its first call in the process and
//! kept for the process's lifetime (reconnected once if it died; closed on drop). Each new
//! connection, and each `notifications/tools/list_changed`, re-lists the tools and checks
//! them against their pins: added or redefined tools are withheld until a person approves
//! them (`tai mcp approve SERVER TOOL`, or the REPL's inline prompt), removals apply
//! silently. When the re-listing fails, the server is *unverified*: none of its tools is
//! offered or called until the next turn (fail closed). Every call reaches this module
//! through the one trust gate, [`gate::call`].

pub mod gate;
pub mod naming;

use std::collections::{HashMap, HashSet};

use serde_json::{Map, Value, json};

use crate::approval::Approver;
use crate::mcp::caps::MCP_MAX_TOOLS;
use crate::mcp::client::{McpClient, McpError, Timeouts};
use crate::mcp::transport::TransportError;
use crate::mcp_servers::dispatch;
use crate::mcp_servers::listing::{approved_key, record_listing};
use crate::mcp_servers::store::{self, pin_hash};
use crate::tools::ToolOutput;
use crate::vault::Store;
use crate::vault::audit::{Event, Outcome};

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
    /// Things the person should know: tools told apart because an earlier server's tool
    /// holds their plain name.
    pub notes: Vec<String>,
    /// Servers whose drift check could not list tools: nothing of theirs is offered or
    /// called until the next turn.
    pub unverified: HashSet<String>,
    conns: HashMap<String, McpClient>,
    timeouts: Timeouts,
    /// What a server's demand for a new OAuth login may do (the REPL asks; `-p` and
    /// served modes fail with a message naming `tai mcp login NAME`).
    pub oauth_interaction: crate::mcp::oauth::Interaction,
}

impl Bridge {
    /// A bridge that offers nothing but can connect to any stored server (`tai mcp call`,
    /// the agent tool `mcp_call` run on its own, the served surface).
    pub fn empty() -> Bridge {
        Bridge {
            tools: Vec::new(),
            withheld: Vec::new(),
            not_offered: Vec::new(),
            notes: Vec::new(),
            unverified: HashSet::new(),
            conns: HashMap::new(),
            timeouts: Timeouts::default(),
            oauth_interaction: crate::mcp::oauth::Interaction::Never,
        }
    }

    /// The tools of every server enabled for `profile`, from the vault. Servers are named
    /// in registration order, so an earlier server's tools keep their names.
    pub fn load(store: &Store, profile: &str) -> Result<Bridge, String> {
        let mut offered: Vec<(String, String, String, Value, String)> = Vec::new();
        let (mut withheld, mut not_offered) = (Vec::new(), Vec::new());
        let cwd = std::env::current_dir().unwrap_or_default();
        let mut rows = store::list(store).map_err(|e| e.to_string())?;
        rows.sort_by(|a, b| (a.created, &a.entry.name).cmp(&(b.created, &b.entry.name)));
        for row in rows {
            let server = row.entry.name.clone();
            if !store::is_enabled(store, &server, profile).map_err(|e| e.to_string())? {
                continue;
            }
            // a project's own server is offered only inside its project
            let project = row.entry.options.project.as_deref();
            if !crate::mcp_servers::project::inside(project, &cwd) {
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
                    let pin = pin_hash(&t.name, t.description.as_deref(), &t.schema);
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
                        pin,
                    ));
                }
            }
        }
        let pairs: Vec<(&str, &str)> = offered
            .iter()
            .map(|(s, t, _, _, _)| (s.as_str(), t.as_str()))
            .collect();
        let names = naming::assign(&pairs);
        let mut notes = Vec::new();
        for ((s, t), n) in pairs.iter().zip(&names) {
            if !naming::is_plain(s, t, n) && n.len() < naming::MAX_NAME {
                notes.push(format!(
                    "the MCP tool {s}/{t} is offered as {n}: its plain name is taken by an earlier tool"
                ));
            }
        }
        let tools = offered
            .into_iter()
            .zip(names)
            .map(
                |((server, tool, description, schema, pin), name)| BridgedTool {
                    pin,
                    // The server's own words, marked as such: untrusted data, not instructions.
                    description: format!("[MCP server {server}, tool {tool}] {description}"),
                    name,
                    server,
                    tool,
                    schema,
                },
            )
            .collect();
        let mut bridge = Bridge::empty();
        bridge.tools = tools;
        bridge.withheld = withheld;
        bridge.not_offered = not_offered;
        bridge.notes = notes;
        Ok(bridge)
    }

    /// An offered tool by its bridged name (not withheld, its server not unverified).
    pub fn find(&self, name: &str) -> Option<&BridgedTool> {
        self.tools.iter().find(|t| t.name == name).filter(|t| {
            !self.is_withheld(&t.server, &t.tool) && !self.unverified.contains(&t.server)
        })
    }

    /// A bridged name, offered or not (so a call to a withheld tool is refused as such).
    pub fn lookup(&self, name: &str) -> Option<&BridgedTool> {
        self.tools.iter().find(|t| t.name == name)
    }

    pub fn is_withheld(&self, server: &str, tool: &str) -> bool {
        self.withheld.iter().any(|(s, t)| s == server && t == tool)
    }

    /// A new turn: unverified servers get another chance to list their tools.
    pub fn begin_turn(&mut self) {
        self.unverified.clear();
    }

    /// The live connection to `server`, made on first use: consent re-checked when the
    /// command changed, then the drift check. `Err((why, outcome))` when the server
    /// cannot be reached or its tools cannot be listed (then it is unverified).
    pub fn connect(
        &mut self,
        store: &mut Store,
        server: &str,
        approver: &mut dyn Approver,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<(), (String, Outcome)> {
        if self.unverified.contains(server) {
            return Err((unverified_text(server), Outcome::Unverified));
        }
        if self.conns.contains_key(server) {
            return Ok(());
        }
        let (entry, resolved) = dispatch::prepare(store, server, None, approver, env)
            .map_err(|e| (e, Outcome::Denied))?;
        let oauth = crate::mcp_servers::oauth_vault::authorizer(
            store,
            server,
            &resolved.spec,
            self.oauth_interaction,
            env,
        );
        let mut client = McpClient::connect_with(
            &resolved.spec,
            entry.protocol,
            entry.options.timeouts(self.timeouts),
            oauth,
        )
        .map_err(|e| {
            let text = store
                .redact(&e.to_string())
                .unwrap_or_else(|_| "the server could not be started".into());
            (text, Outcome::ProtocolError)
        })?;
        crate::mcp_servers::oauth_vault::persist(store, server, &mut client);
        self.conns.insert(server.to_string(), client);
        self.recheck(store, server)
    }

    /// Call `tool` on the connected `server` (reconnecting once if it died). The gate
    /// has checked policy and approval; this is the call with its deadline.
    pub fn call_tool(
        &mut self,
        store: &mut Store,
        server: &str,
        tool: &str,
        arguments: Map<String, Value>,
        approver: &mut dyn Approver,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> (ToolOutput, Outcome) {
        for attempt in 0..2 {
            if let Err((e, outcome)) = self.connect(store, server, approver, env) {
                return (ToolOutput::error(e), outcome);
            }
            if self.is_withheld(server, tool) {
                return (withheld_error(server, tool), Outcome::Withheld);
            }
            let Some(client) = self.conns.get_mut(server) else {
                return (ToolOutput::error("no connection"), Outcome::ProtocolError);
            };
            let called = client.call_tool(tool, arguments.clone());
            crate::mcp_servers::oauth_vault::persist(store, server, client);
            match called {
                Ok(r) => {
                    let changed = client.tools_changed;
                    if changed {
                        // Applies to later calls; a failure here marks the server unverified.
                        let _ = self.recheck(store, server);
                    }
                    let outcome = Outcome::of_call(r.is_error);
                    return (
                        ToolOutput {
                            text: r.text(),
                            is_error: r.is_error,
                        },
                        outcome,
                    );
                }
                Err(McpError::Transport {
                    error:
                        TransportError::Exited { .. }
                        | TransportError::Closed(_)
                        | TransportError::Io(_),
                    ..
                }) if attempt == 0 => {
                    // The server died: reconnect once.
                    if let Some(c) = self.conns.remove(server) {
                        c.close();
                    }
                    let _ = store.audit(Event::new("mcp-reconnect", server, Outcome::Reconnecting));
                }
                Err(e) => {
                    let outcome = match e {
                        McpError::Transport {
                            error: TransportError::Timeout,
                            ..
                        } => Outcome::Timeout,
                        McpError::Transport {
                            error: TransportError::Interrupted,
                            ..
                        } => Outcome::Interrupted,
                        _ => Outcome::ProtocolError,
                    };
                    return (ToolOutput::error(e.to_string()), outcome);
                }
            }
        }
        (
            ToolOutput::error(format!(
                "{server}: the server failed again after one reconnect"
            )),
            Outcome::ProtocolError,
        )
    }

    /// List the server's tools again and apply the pins: changed and added tools are
    /// withheld (their new definitions stored, the approved one kept for review), removed
    /// tools are dropped. When the listing fails, the connection is closed and the server
    /// is unverified until the next turn: its tools are neither offered nor called.
    fn recheck(&mut self, store: &mut Store, server: &str) -> Result<(), (String, Outcome)> {
        let listed = match self.conns.get_mut(server).map(McpClient::list_tools) {
            Some(Ok(listed)) => listed,
            Some(Err(e)) => {
                if let Some(c) = self.conns.remove(server) {
                    c.close();
                }
                self.unverified.insert(server.to_string());
                let why = store.redact(&e.to_string()).unwrap_or_default();
                let _ = store.audit(Event {
                    detail: Some(why),
                    ..Event::new("mcp-drift", server, Outcome::Unverified)
                });
                return Err((unverified_text(server), Outcome::Unverified));
            }
            None => return Err(("no connection".into(), Outcome::ProtocolError)),
        };
        for (tool, change) in record_listing(store, server, &listed) {
            if change != Outcome::Removed && !self.is_withheld(server, &tool) {
                self.withheld.push((server.to_string(), tool.clone()));
            }
            if change == Outcome::Removed {
                self.tools
                    .retain(|t| !(t.server == server && t.tool == tool));
            }
        }
        Ok(())
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

fn unverified_text(server: &str) -> String {
    format!(
        "the MCP server {server} could not list its tools for the pin check, so none of its tools is offered or called this turn; \
         try again next turn, or check it with `tai mcp probe`"
    )
}

fn withheld_error(server: &str, tool: &str) -> ToolOutput {
    ToolOutput::error(format!(
        "the MCP tool {server}/{tool} was added or redefined by its server since it was approved, so it is withheld. \
         A person must review it: `tai mcp tools {server}` shows it, `tai mcp approve {server} {tool}` approves it."
    ))
}

/// One definition of a tool, as a person reviews it.
#[derive(Clone, Debug, PartialEq)]
pub struct Definition {
    pub name: String,
    pub description: String,
    pub schema: Value,
}

/// A withheld tool: what was approved (none for an added tool) and what the server says now.
#[derive(Clone, Debug, PartialEq)]
pub struct Review {
    pub server: String,
    pub tool: String,
    pub approved: Option<Definition>,
    pub now: Definition,
}

/// The review of a withheld tool, or `None` when it is pinned (nothing to review).
pub fn review(store: &Store, server: &str, tool: &str) -> Result<Option<Review>, String> {
    let t = store::tools(store, server)
        .map_err(|e| e.to_string())?
        .into_iter()
        .find(|t| t.name == tool)
        .ok_or_else(|| format!("{server} has no tool {tool:?} (see `tai mcp tools {server}`)"))?;
    if t.pinned {
        return Ok(None);
    }
    let before = store
        .meta_text(&approved_key(server, tool))
        .map_err(|e| e.to_string())?
        .and_then(|b| serde_json::from_str::<Value>(&b).ok());
    Ok(Some(Review {
        server: server.to_string(),
        tool: tool.to_string(),
        approved: before.map(|b| Definition {
            name: tool.to_string(),
            description: b["description"].as_str().unwrap_or("").to_string(),
            schema: b["inputSchema"].clone(),
        }),
        now: Definition {
            name: t.name.clone(),
            description: t.description.clone().unwrap_or_default(),
            schema: t.schema.clone(),
        },
    }))
}

/// Width of one column of the side-by-side review.
const REVIEW_COLUMN: usize = 58;

/// Lines sanitized and wrapped to the column (never cut).
fn wrapped(raw: Vec<String>) -> Vec<String> {
    let mut out = Vec::new();
    for l in raw {
        let chars: Vec<char> = crate::sanitize::line(&l).chars().collect();
        if chars.is_empty() {
            out.push(String::new());
        }
        for piece in chars.chunks(REVIEW_COLUMN) {
            out.push(piece.iter().collect());
        }
    }
    out
}

/// One side of the review, in three sections (name, description, schema), every line of
/// the definition sanitized and wrapped.
fn review_sections(d: Option<&Definition>) -> [Vec<String>; 3] {
    let Some(d) = d else {
        return [vec!["(nothing: a new tool)".into()], Vec::new(), Vec::new()];
    };
    let mut description = vec!["description:".to_string()];
    description.extend(d.description.split('\n').map(|l| format!("  {l}")));
    let mut schema = vec!["inputSchema:".to_string()];
    let pretty = serde_json::to_string_pretty(&d.schema).unwrap_or_default();
    schema.extend(pretty.lines().map(|l| format!("  {l}")));
    [
        wrapped(vec![format!("name: {}", d.name)]),
        wrapped(description),
        wrapped(schema),
    ]
}

/// The whole review, old and new side by side (each section aligned), every untrusted
/// string sanitized and shown whole (wrapped, never truncated).
pub fn review_text(r: &Review) -> String {
    let left = review_sections(r.approved.as_ref());
    let right = review_sections(Some(&r.now));
    let what = if r.approved.is_some() {
        "was redefined by its server"
    } else {
        "was added by its server"
    };
    let mut s = format!(
        "The MCP tool {}/{} {what} and is withheld until a person approves it.\n",
        crate::sanitize::line(&r.server),
        crate::sanitize::line(&r.tool)
    );
    s.push_str(&format!(
        "{:<w$} │ {}\n{:-<w$}-┼-{:-<w$}\n",
        "APPROVED BEFORE",
        "THE SERVER NOW SAYS",
        "",
        "",
        w = REVIEW_COLUMN
    ));
    for (left, right) in left.iter().zip(&right) {
        for i in 0..left.len().max(right.len()) {
            let l = left.get(i).map_or("", String::as_str);
            let r = right.get(i).map_or("", String::as_str);
            let pad = REVIEW_COLUMN.saturating_sub(l.chars().count());
            s.push_str(&format!("{l}{:pad$} │ {r}\n", ""));
        }
    }
    s
}

/// Pin a withheld tool's current definition: a person's decision only (`tai mcp approve`,
/// the REPL's inline prompt). Returns the review that was approved, for the record.
pub fn approve(store: &mut Store, server: &str, tool: &str) -> Result<String, String> {
    let Some(r) = review(store, server, tool)? else {
        return Ok(format!(
            "{server}/{tool} is already approved; nothing changed\n"
        ));
    };
    let t = store::tools(store, server)
        .map_err(|e| e.to_string())?
        .into_iter()
        .find(|t| t.name == tool)
        .ok_or_else(|| format!("{server} has no tool {tool:?}"))?;
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
    store
        .audit(Event::new(
            "mcp-approve",
            &format!("{server}/{tool}"),
            Outcome::Approved,
        ))
        .map_err(|e| e.to_string())?;
    Ok(review_text(&r))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn def(description: &str) -> Definition {
        Definition {
            name: "echo".into(),
            description: description.into(),
            schema: json!({"type": "object", "properties": {"text": {"type": "string"}}}),
        }
    }

    /// The review is side by side, whole (a long line wraps, never cut), and escaped.
    #[test]
    fn review_text_is_whole_side_by_side_and_escaped() {
        let long = "word ".repeat(40);
        let now = format!("Echo.\r\x1b[2KHarmless.\n{long}END-OF-LONG-LINE\nthird line");
        let r = Review {
            server: "stub".into(),
            tool: "echo".into(),
            approved: Some(def("Echo the text back")),
            now: def(&now),
        };
        let text = review_text(&r);
        assert!(!text.contains('\x1b') && !text.contains('\r'), "{text}");
        let right: String = text
            .lines()
            .filter_map(|l| l.split_once(" │ ").map(|(_, r)| r.to_string()))
            .collect::<Vec<_>>()
            .join("");
        for want in [
            "Echo.\\r\\e[2KHarmless.",
            "END-OF-LONG-LINE",
            "third line",
            "\"text\"",
        ] {
            assert!(
                right.contains(want),
                "{want} missing from the new side:\n{text}"
            );
        }
        assert_eq!(right.matches("word").count(), 40, "nothing is cut:\n{text}");
        let left: String = text
            .lines()
            .filter_map(|l| l.split_once(" │ ").map(|(l, _)| l.to_string()))
            .collect();
        assert!(left.contains("Echo the text back") && !left.contains("Harmless"));
        let added = review_text(&Review {
            approved: None,
            ..r
        });
        assert!(
            added.contains("was added by its server") && added.contains("(nothing: a new tool)")
        );
    }
}
