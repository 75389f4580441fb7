//! The seven agent tools that manage MCP servers: `mcp_add`, `mcp_list`, `mcp_enable`,
//! `mcp_disable`, `mcp_remove`, `mcp_tools`, `mcp_call`. They take the same paths as the
//! `tai mcp` commands (`mcp_servers::intake`, `mcp_servers::store`, and for calls the one trust gate,
//! `bridge::gate`). None of them changes a pin: re-adding a stored server stores its
//! live tool list beside the pins and leaves changed tools withheld.

use serde_json::{Map, Value, json};

use super::{NativeTool, ToolContext, ToolDef, ToolOutput, arg_str};
use crate::mcp::client::Timeouts;
use crate::mcp_servers::{intake, store};
use crate::resolver::{Target, resolve_online};
use crate::vault::audit::{Event, Outcome};

pub fn tools() -> Vec<Box<dyn NativeTool>> {
    vec![
        Box::new(McpAdd),
        Box::new(McpList),
        Box::new(McpEnable(true)),
        Box::new(McpEnable(false)),
        Box::new(McpRemove),
        Box::new(McpTools),
        Box::new(McpCall),
    ]
}

fn text(v: Value) -> ToolOutput {
    ToolOutput::ok(v.to_string())
}

fn profile_arg(ctx: &ToolContext<'_>, args: &Map<String, Value>) -> String {
    args.get("profile")
        .and_then(Value::as_str)
        .map_or_else(|| ctx.config.profile.clone(), str::to_string)
}

struct McpAdd;
impl NativeTool for McpAdd {
    fn def(&self) -> ToolDef {
        ToolDef {
            name: "mcp_add",
            description: "Add an MCP server: normalize a pasted config (mcpServers/servers JSON, Codex TOML, a bare entry, a URL or a command line) or resolve a GitHub repository URL, ask the user to approve running it, verify it live and store it. Returns its tools.",
            parameters: json!({"type": "object", "properties": {
                "source": {"type": "string", "description": "The server config text, a URL, a command line, or https://github.com/OWNER/REPO"},
                "name": {"type": "string", "description": "The name to store it under (picks one server from a multi-server config)"},
                "profile": {"type": "string", "description": "The profile an `enabled` setting applies to (default: current)"},
                "pick": {"type": "integer", "description": "For a GitHub URL whose sources disagree: the candidate number mcp_resolve listed"}
            }, "required": ["source"]}),
            safe: false,
        }
    }

    fn run(&self, ctx: &mut ToolContext<'_>, args: &Map<String, Value>) -> ToolOutput {
        let source_text = arg_str(args, "source");
        let pasted = match Target::parse(source_text) {
            Some(target) => {
                let pick = args.get("pick").and_then(Value::as_u64).map(|n| n as usize);
                resolve_online(&target, &ctx.config.resolver, pick, ctx.env, &mut |_| {})
                    .map(|r| {
                        intake::paste_resolved(r.chosen.entry.clone(), r.notes(), r.source.clone())
                    })
                    .map_err(|f| f.to_string())
            }
            None => intake::paste(ctx.store, source_text),
        };
        let intake::Paste {
            normalized: n,
            source,
            refresh,
        } = match pasted {
            Ok(p) => p,
            Err(e) => return ToolOutput::error(e),
        };
        let entries = match intake::select(&n, args.get("name").and_then(Value::as_str), true) {
            Ok(e) => e,
            Err(e) => return ToolOutput::error(e),
        };
        if entries.len() > 1 {
            let names: Vec<&str> = entries.iter().map(|e| e.name.as_str()).collect();
            return ToolOutput::error(format!(
                "the config holds {} servers ({}); add one at a time by passing its name",
                entries.len(),
                names.join(", ")
            ));
        }
        // A server handed vault secrets is added by a person only: under --auto, --yolo
        // or a served surface nobody reads the consent screen, and the server (or its URL)
        // could be anywhere.
        let secrets = intake::vault_references(&entries[0], ctx.store, ctx.env);
        if !secrets.is_empty() && !ctx.approver.person_present() {
            return ToolOutput::error(format!(
                "{}: it would be handed the vault secret(s) {}; only a person adds such a server (`tai mcp add` at a terminal, or the REPL without --auto/--yolo)",
                entries[0].name,
                secrets.join(", ")
            ));
        }
        let profile = profile_arg(ctx, args);
        if !ctx.config.knows_profile(&profile) {
            return ToolOutput::error(format!(
                "no profile named {profile:?}: the user creates it with `tai profile add {profile}`"
            ));
        }
        let opts = intake::AddOptions {
            profile: &profile,
            replace: refresh,
            timeouts: Timeouts::default(),
            env: ctx.env,
        };
        match intake::add(ctx.store, &entries[0], &source, &opts, ctx.approver) {
            Ok(r) => text(json!({"added": r, "notes": n.notes})),
            Err(e) => ToolOutput::error(e),
        }
    }
}

/// The GitHub URL resolver as a tool: what a repository resolves to, with the evidence
/// (nothing is run or stored; `mcp_add` does that after consent).
pub struct McpResolve;
impl NativeTool for McpResolve {
    fn def(&self) -> ToolDef {
        ToolDef {
            name: "mcp_resolve",
            description: "Resolve a GitHub repository URL to the MCP server entry it publishes (registry, server.json, package manifests, README, Glama), with the evidence of each step. Runs and stores nothing: pass the URL (and pick, when candidates disagree) to mcp_add.",
            parameters: json!({"type": "object", "properties": {
                "url": {"type": "string", "description": "https://github.com/OWNER/REPO, optionally /tree/REF/PATH for a folder of a monorepo"},
                "pick": {"type": "integer", "description": "Which of several disagreeing candidates to take (1-based)"}
            }, "required": ["url"]}),
            safe: true,
        }
    }

    fn run(&self, ctx: &mut ToolContext<'_>, args: &Map<String, Value>) -> ToolOutput {
        let url = arg_str(args, "url");
        let Some(target) = Target::parse(url) else {
            return ToolOutput::error(format!(
                "{url:?} is not a GitHub repository URL (https://github.com/OWNER/REPO)"
            ));
        };
        let pick = args.get("pick").and_then(Value::as_u64).map(|n| n as usize);
        match resolve_online(&target, &ctx.config.resolver, pick, ctx.env, &mut |_| {}) {
            Ok(r) => text(json!(r)),
            Err(f) => ToolOutput::error(format!("{f}\n{}", json!(f))),
        }
    }
}

struct McpList;
impl NativeTool for McpList {
    fn def(&self) -> ToolDef {
        ToolDef {
            name: "mcp_list",
            description: "List the stored MCP servers with their transport, the profiles they are enabled for, and tool counts with pin state.",
            parameters: json!({"type": "object", "properties": {}}),
            safe: true,
        }
    }

    fn run(&self, ctx: &mut ToolContext<'_>, _args: &Map<String, Value>) -> ToolOutput {
        match store::summaries(ctx.store) {
            Ok(s) => text(json!(s)),
            Err(e) => ToolOutput::error(e.to_string()),
        }
    }
}

struct McpEnable(bool);
impl NativeTool for McpEnable {
    fn def(&self) -> ToolDef {
        let (name, description) = if self.0 {
            (
                "mcp_enable",
                "Enable a stored MCP server for a profile (the current one when omitted), so its tools are offered.",
            )
        } else {
            (
                "mcp_disable",
                "Disable a stored MCP server for a profile (the current one when omitted).",
            )
        };
        ToolDef {
            name,
            description,
            parameters: json!({"type": "object", "properties": {
                "server": {"type": "string"}, "profile": {"type": "string"}
            }, "required": ["server"]}),
            safe: false,
        }
    }

    fn run(&self, ctx: &mut ToolContext<'_>, args: &Map<String, Value>) -> ToolOutput {
        let server = arg_str(args, "server");
        let profile = profile_arg(ctx, args);
        if !ctx.config.knows_profile(&profile) {
            return ToolOutput::error(format!(
                "no profile named {profile:?}: the user creates it with `tai profile add {profile}`"
            ));
        }
        if let Err(e) = store::set_enabled(ctx.store, server, &profile, self.0) {
            return ToolOutput::error(e.to_string());
        }
        let outcome = if self.0 {
            Outcome::Enabled
        } else {
            Outcome::Disabled
        };
        let _ = ctx.store.audit(Event {
            detail: Some(format!("profile {profile}")),
            ..Event::new("mcp-enable", server, outcome)
        });
        ToolOutput::ok(format!("{server}: {outcome} for profile {profile}"))
    }
}

struct McpRemove;
impl NativeTool for McpRemove {
    fn def(&self) -> ToolDef {
        ToolDef {
            name: "mcp_remove",
            description: "Remove a stored MCP server with its profile settings, tools and pins. Asks the user first.",
            parameters: json!({"type": "object", "properties": {"server": {"type": "string"}}, "required": ["server"]}),
            safe: false,
        }
    }

    fn run(&self, ctx: &mut ToolContext<'_>, args: &Map<String, Value>) -> ToolOutput {
        let server = arg_str(args, "server");
        match store::exists(ctx.store, server) {
            Ok(true) => {}
            Ok(false) => return ToolOutput::error(format!("no MCP server named {server:?}")),
            Err(e) => return ToolOutput::error(e.to_string()),
        }
        let what =
            format!("remove the MCP server {server:?} with its tools, pins and profile settings");
        match ctx.approver.approve(&what, "") {
            Ok(true) => {}
            Ok(false) => return ToolOutput::error(format!("{what}: the user did not approve")),
            Err(e) => return ToolOutput::error(e),
        }
        match store::remove(ctx.store, server) {
            Ok(()) => {
                let _ = ctx
                    .store
                    .audit(Event::new("mcp-remove", server, Outcome::Removed));
                ToolOutput::ok(format!("removed {server}"))
            }
            Err(e) => ToolOutput::error(e.to_string()),
        }
    }
}

struct McpTools;
impl NativeTool for McpTools {
    fn def(&self) -> ToolDef {
        ToolDef {
            name: "mcp_tools",
            description: "List the tools of one stored MCP server (or all) with their descriptions and pin state. Descriptions are the servers' own untrusted text.",
            parameters: json!({"type": "object", "properties": {"server": {"type": "string"}}}),
            safe: true,
        }
    }

    fn run(&self, ctx: &mut ToolContext<'_>, args: &Map<String, Value>) -> ToolOutput {
        let stored = match store::list_public(ctx.store) {
            Ok(rows) => rows,
            Err(e) => return ToolOutput::error(e.to_string()),
        };
        let servers = match args.get("server").and_then(Value::as_str) {
            Some(s) => vec![s.to_string()],
            None => stored.iter().map(|r| r.entry.name.clone()).collect(),
        };
        let mut out = Vec::new();
        for s in servers {
            let entry = stored.iter().find(|r| r.entry.name == s).map(|r| &r.entry);
            match store::tools(ctx.store, &s) {
                Ok(ts) => out.extend(ts.into_iter().map(|t| {
                    let allowed = entry.as_ref().is_some_and(|e| store::allowed(e, &t.name));
                    json!({"server": s, "name": t.name, "description": t.description, "pinned": t.pinned, "allowed": allowed})
                })),
                Err(e) => return ToolOutput::error(e.to_string()),
            }
        }
        text(Value::Array(out))
    }
}

struct McpCall;
impl NativeTool for McpCall {
    fn def(&self) -> ToolDef {
        ToolDef {
            name: "mcp_call",
            description: "Call one tool of a stored MCP server explicitly, with JSON arguments. Asks for approval like any MCP call.",
            parameters: json!({"type": "object", "properties": {
                "server": {"type": "string"}, "tool": {"type": "string"},
                "args": {"type": "object", "description": "The tool's arguments"}
            }, "required": ["server", "tool"]}),
            safe: false,
        }
    }

    /// Never run as a tool: the trust gate resolves `mcp_call` to the server's tool and
    /// calls that (`bridge::gate::call`; outside a turn `bridge::gate::dispatch`).
    fn run(&self, _ctx: &mut ToolContext<'_>, _args: &Map<String, Value>) -> ToolOutput {
        ToolOutput::error("mcp_call runs through the trust gate, not on its own")
    }
}
