//! tai as an MCP server: one dispatcher for both eras, transport-independent.
//!
//! `McpServer::handle` takes one JSON-RPC message (and, over HTTP, the request's era
//! evidence) and returns the reply. It serves every native tool's schema verbatim plus
//! `chat` and `completions`, but never a route to a foreign server's tools: bridged tools
//! are not re-served and `mcp_call` is not served (that would launder untrusted servers
//! through tai's identity). Every served call passes the one trust gate
//! (`bridge::gate`, entrance `Network`); a served `chat` agent's calls pass it as the
//! model's (enablement and pins hold there too). No user is present, so approvals are
//! automatic (the key, or the launching host, is the authority), `ask_user` denies, and
//! no pin is ever changed.

pub mod annotations;
pub mod http;
pub mod stdio;

use std::collections::HashMap;
use std::time::{Duration, Instant};

use serde_json::{Map, Value, json};

use crate::agent::{Agent, Capture};
use crate::approval::Approver;
use crate::bridge::gate::{self, Ask, Entrance, Local};
use crate::chat::ChatClient;
use crate::config::Config;
use crate::jsonrpc::{ErrorObject, Id, Message, code};
use crate::mcp::caps::{MCP_CHAT_TIMEOUT, MCP_SESSION_IDLE};
pub use crate::mcp::era::claimed_version;
use crate::mcp::era::{Era, LEGACY_VERSION, LEGACY_VERSIONS, MODERN_VERSION};
use crate::mcp::methods;
use crate::mcp::protocol::{CLIENT_CAPABILITIES_KEY, PROTOCOL_VERSION_KEY, SERVER_INFO_KEY};
use crate::tools::{self, ToolContext, ToolDef, ToolOutput};
use crate::vault::Store;

/// Approves everything and asks no one: serve mode (said loudly at startup).
pub struct ServeApprover;

impl Approver for ServeApprover {
    fn approve(&mut self, _what: &str, _detail: &str) -> Result<bool, String> {
        Ok(true)
    }

    fn ask(&mut self, _question: &str) -> Result<String, String> {
        Err("ask_user is not available when tai serves MCP: no user is present; decide with what you have".into())
    }
}

/// The tool names served beyond the native tools.
pub const CHAT: &str = "chat";
pub const COMPLETIONS: &str = "completions";

/// A `chat` conversation: an MCP session's (2025) or a handle's (2026).
struct Conversation {
    history: Vec<Value>,
    last_seen: Instant,
}

pub struct McpServer {
    pub store: Store,
    pub config: Config,
    conversations: HashMap<String, Conversation>,
    /// How long an idle conversation or session lives (MCP_SESSION_IDLE; tests shorten it).
    pub idle: Duration,
    /// `--serve-tools LIST`: only these are listed and callable (`None`: all).
    pub serve_only: Option<Vec<String>>,
    /// One served `chat` turn, all its steps (MCP_CHAT_TIMEOUT; tests shorten it).
    pub chat_timeout: Duration,
}

/// Native tools that are not served: `mcp_call` would route a network client to a
/// foreign server's tools.
pub const NOT_SERVED: &[&str] = &["mcp_call"];

/// The served tool list: natives verbatim (but [`NOT_SERVED`]), then the two extras.
/// Never a bridged tool, never a route to one.
pub fn served_tools() -> Vec<Value> {
    let mut out: Vec<Value> = tools::all()
        .iter()
        .filter(|t| !NOT_SERVED.contains(&t.def().name))
        .map(|t| {
            let d = t.def();
            json!({"name": d.name, "description": d.description, "inputSchema": d.parameters,
                "annotations": annotations::for_tool(d.name, d.safe)})
        })
        .collect();
    for d in extras() {
        out.push(
            json!({"name": d.name, "description": d.description, "inputSchema": d.parameters,
            "annotations": annotations::for_tool(d.name, false)}),
        );
    }
    out
}

/// The two served extras as tool definitions: they run as the gate's caller-local tools.
fn extras() -> [ToolDef; 2] {
    [
        ToolDef {
            name: CHAT,
            description: "Run a full tai agent turn (with tools) and return its answer. Pass the returned session to continue the conversation.",
            parameters: json!({"type": "object", "properties": {
                "message": {"type": "string"}, "session": {"type": "string"}, "profile": {"type": "string"},
                "max_steps": {"type": "integer"}}, "required": ["message"]}),
            safe: true,
        },
        ToolDef {
            name: COMPLETIONS,
            description: "One completion from the current model, no tools: messages are {role: system|user|assistant, content}.",
            parameters: json!({"type": "object", "properties": {
                "messages": {"type": "array", "items": {"type": "object"}}}, "required": ["messages"]}),
            safe: true,
        },
    ]
}

/// `--serve-tools LIST`: the names that are not served tools (empty when all are).
pub fn unknown_tools(names: &[String]) -> Vec<String> {
    let served = served_tools();
    names
        .iter()
        .filter(|n| !served.iter().any(|t| t["name"] == n.as_str()))
        .cloned()
        .collect()
}

fn result(id: Id, v: Value) -> Option<Message> {
    Some(Message::Response { id, result: v })
}

fn error(id: Option<Id>, code: i64, msg: impl Into<String>) -> Option<Message> {
    Some(Message::Error {
        id,
        error: ErrorObject::new(code, msg),
    })
}

impl McpServer {
    pub fn new(store: Store, config: Config) -> McpServer {
        McpServer {
            store,
            config,
            conversations: HashMap::new(),
            idle: MCP_SESSION_IDLE,
            serve_only: None,
            chat_timeout: MCP_CHAT_TIMEOUT,
        }
    }

    /// The tools this server serves: `served_tools`, narrowed by `--serve-tools`. Listing
    /// and calling both read this, so a tool left out cannot be called either.
    fn listed(&self) -> Vec<Value> {
        let mut all = served_tools();
        if let Some(only) = &self.serve_only {
            all.retain(|t| only.iter().any(|n| t["name"] == n.as_str()));
        }
        all
    }

    /// Handle one message in `era` (decided by the transport). `session` is the legacy
    /// session (stdio: the process; HTTP: `Mcp-Session-Id`), used as `chat`'s default.
    pub fn handle(&mut self, msg: Message, era: Era, session: Option<&str>) -> Option<Message> {
        let Message::Request { id, method, params } = msg else {
            return None; // notifications and responses need no answer
        };
        match era {
            Era::Legacy => self.legacy(id, &method, params, session),
            Era::Modern => self.modern(id, &method, params),
        }
    }

    fn legacy(
        &mut self,
        id: Id,
        method: &str,
        params: Option<Value>,
        session: Option<&str>,
    ) -> Option<Message> {
        match method {
            methods::INITIALIZE => {
                let asked = params
                    .as_ref()
                    .and_then(|p| p.get("protocolVersion"))
                    .and_then(Value::as_str)
                    .unwrap_or("");
                let version = if LEGACY_VERSIONS.contains(&asked) {
                    asked
                } else {
                    LEGACY_VERSION
                };
                result(
                    id,
                    json!({
                        "protocolVersion": version,
                        "capabilities": {"tools": {"listChanged": false}, "prompts": {}, "resources": {}},
                        "serverInfo": {"name": "tai", "version": env!("CARGO_PKG_VERSION")},
                        "instructions": "tai's tools: files, shell, the vault, MCP server management, and `chat` (a full tai agent turn) and `completions`."
                    }),
                )
            }
            methods::PING => result(id, json!({})),
            methods::TOOLS_LIST => result(id, json!({"tools": self.listed()})),
            // tai has no prompts or resources: the lists are honestly empty.
            "prompts/list" => result(id, json!({"prompts": []})),
            "resources/list" => result(id, json!({"resources": []})),
            "resources/templates/list" => result(id, json!({"resourceTemplates": []})),
            methods::TOOLS_CALL => self.call(id, params, Era::Legacy, session),
            other => error(
                Some(id),
                code::METHOD_NOT_FOUND,
                format!("Method not found: {other}"),
            ),
        }
    }

    fn modern(&mut self, id: Id, method: &str, params: Option<Value>) -> Option<Message> {
        let meta = params.as_ref().and_then(|p| p.get("_meta"));
        let version = meta
            .and_then(|m| m.get(PROTOCOL_VERSION_KEY))
            .and_then(Value::as_str);
        match version {
            None => {
                return error(
                    Some(id),
                    code::INVALID_PARAMS,
                    format!("params._meta must carry {PROTOCOL_VERSION_KEY}"),
                );
            }
            Some(v) if v != MODERN_VERSION => {
                return Some(Message::Error {
                    id: Some(id),
                    error: ErrorObject::new(
                        code::UNSUPPORTED_PROTOCOL_VERSION,
                        "Unsupported protocol version",
                    )
                    .with_data(json!({"supported": [MODERN_VERSION], "requested": v})),
                });
            }
            Some(_) => {}
        }
        if meta
            .and_then(|m| m.get(CLIENT_CAPABILITIES_KEY))
            .is_none_or(|c| !c.is_object())
        {
            return error(
                Some(id),
                code::INVALID_PARAMS,
                format!("params._meta must carry {CLIENT_CAPABILITIES_KEY}"),
            );
        }
        let complete = |mut r: Value| {
            r["resultType"] = json!("complete");
            r["_meta"] =
                json!({SERVER_INFO_KEY: {"name": "tai", "version": env!("CARGO_PKG_VERSION")}});
            r
        };
        match method {
            methods::SERVER_DISCOVER => result(
                id,
                complete(json!({
                    "supportedVersions": [MODERN_VERSION],
                    "capabilities": {"tools": {"listChanged": false}, "prompts": {}, "resources": {}},
                    "instructions": "tai's tools: files, shell, the vault, MCP server management, and `chat` and `completions`.",
                    "ttlMs": 3_600_000, "cacheScope": "public"
                })),
            ),
            methods::TOOLS_LIST => result(
                id,
                complete(
                    json!({"tools": self.listed(), "ttlMs": 3_600_000, "cacheScope": "public"}),
                ),
            ),
            "prompts/list" => result(
                id,
                complete(json!({"prompts": [], "ttlMs": 3_600_000, "cacheScope": "public"})),
            ),
            "resources/list" => result(
                id,
                complete(json!({"resources": [], "ttlMs": 3_600_000, "cacheScope": "public"})),
            ),
            "resources/templates/list" => result(
                id,
                complete(
                    json!({"resourceTemplates": [], "ttlMs": 3_600_000, "cacheScope": "public"}),
                ),
            ),
            "resources/read" => error(
                Some(id),
                code::INVALID_PARAMS,
                "Resource not found: tai serves no resources",
            ),
            methods::TOOLS_CALL => match self.call(id.clone(), params, Era::Modern, None) {
                Some(Message::Response { id, result: r }) => result(id, complete(r)),
                other => other,
            },
            other => error(
                Some(id),
                code::METHOD_NOT_FOUND,
                format!("Method not found: {other}"),
            ),
        }
    }

    fn call(
        &mut self,
        id: Id,
        params: Option<Value>,
        era: Era,
        session: Option<&str>,
    ) -> Option<Message> {
        let p = params.unwrap_or(Value::Null);
        let Some(name) = p.get("name").and_then(Value::as_str) else {
            return error(
                Some(id),
                code::INVALID_PARAMS,
                "tools/call needs params.name",
            );
        };
        let args: Map<String, Value> = match p.get("arguments") {
            None | Some(Value::Null) => Map::new(),
            Some(Value::Object(m)) => m.clone(),
            Some(_) => {
                return error(
                    Some(id),
                    code::INVALID_PARAMS,
                    "tools/call: arguments must be an object",
                );
            }
        };
        let schema = self
            .listed()
            .into_iter()
            .find(|t| t["name"] == name)
            .map(|t| t["inputSchema"].clone());
        let Some(schema) = schema else {
            return error(
                Some(id),
                code::INVALID_PARAMS,
                format!("Unknown tool: {name}"),
            );
        };
        if let Err(why) = tools::check_args(&schema, &args) {
            // Input the tool rejects is the tool's answer (as the TS SDK does), so the
            // model can see it and fix its call; only an unknown tool is a protocol error.
            return result(
                id,
                json!({"content": [{"type": "text", "text": format!("{name}: {why}")}], "isError": true}),
            );
        }
        // Every served call passes the gate; `chat` and `completions` as local tools.
        let mut client = matches!(name, CHAT | COMPLETIONS).then(|| self.chat_client());
        let McpServer {
            store,
            config,
            conversations,
            idle,
            chat_timeout,
            serve_only,
            ..
        } = self;
        let mut config = config.clone();
        // `--serve-tools` bounds the served `chat` agent's calls too (the gate checks it).
        config.served_tools = serve_only.clone();
        let mut approver = ServeApprover;
        let mut ctx = ToolContext {
            store,
            config: &config,
            approver: &mut approver,
            env: &crate::config::process_env,
        };
        let mut run = |ctx: &mut ToolContext<'_>, a: &Map<String, Value>| {
            let client = client
                .take()
                .unwrap_or_else(|| Err("the model client was already used".into()));
            match name {
                CHAT => chat(
                    ctx,
                    conversations,
                    *idle,
                    *chat_timeout,
                    client,
                    a,
                    era,
                    session,
                ),
                _ => completions(client, a),
            }
        };
        let local = extras()
            .into_iter()
            .find(|d| d.name == name)
            .map(|def| Local { def, run: &mut run });
        let out = gate::call(
            &mut ctx,
            &mut crate::bridge::Bridge::empty(),
            Entrance::Network,
            Ask::Named(name),
            args,
            local,
            &mut |_| {},
        )
        .output;
        result(
            id,
            json!({"content": [{"type": "text", "text": out.text}], "isError": out.is_error}),
        )
    }

    fn chat_client(&mut self) -> Result<ChatClient, String> {
        let model = self
            .config
            .model
            .clone()
            .ok_or("no model is set for the server: set TAI_MODEL or the profile's model")?;
        let key = match &self.config.api_key {
            crate::config::ApiKeySource::None => None,
            crate::config::ApiKeySource::Env => crate::config::process_env("TAI_API_KEY"),
            crate::config::ApiKeySource::Secret(n) => {
                self.store.secret_get(n).map_err(|e| e.to_string())?
            }
        };
        if let Some(k) = &key {
            self.store.remember("api-key", k);
        }
        Ok(ChatClient::new(
            &self.config.base_url,
            &model,
            key,
            self.chat_timeout,
        ))
    }
}

/// `chat`: a full agent turn in capture mode on the conversation's own history. Its tool
/// calls pass the gate as the model's (enablement, the stored list and pins hold).
#[allow(clippy::too_many_arguments)]
fn chat(
    ctx: &mut ToolContext<'_>,
    conversations: &mut HashMap<String, Conversation>,
    idle: Duration,
    chat_timeout: Duration,
    client: Result<ChatClient, String>,
    args: &Map<String, Value>,
    era: Era,
    session: Option<&str>,
) -> ToolOutput {
    let now = Instant::now();
    conversations.retain(|_, c| now.duration_since(c.last_seen) < idle);
    let handle = match (args.get("session").and_then(Value::as_str), era, session) {
        (Some(h), _, _) => {
            if !conversations.contains_key(h) {
                return ToolOutput::error(format!(
                    "no conversation {h:?} (it expired after {}s idle, or never existed); start a new one without `session`",
                    idle.as_secs()
                ));
            }
            h.to_string()
        }
        (None, Era::Legacy, Some(s)) => format!("session-{s}"),
        _ => format!("conv-{}", crate::entropy::id().unwrap_or_default()),
    };
    // One deadline for the whole turn: checked between steps, passed into every model
    // request, and honoured by every tool call inside it (they stop as on Ctrl-C).
    let deadline = Instant::now() + chat_timeout;
    let chat = match client {
        Ok(mut c) => {
            c.until = Some(deadline);
            c
        }
        Err(e) => return ToolOutput::error(e),
    };
    let mut agent = Agent::new(&chat);
    if let Ok(b) = crate::bridge::Bridge::load(ctx.store, &ctx.config.profile) {
        agent = agent.with_bridge(b);
    }
    if let Some(n) = args.get("max_steps").and_then(Value::as_u64) {
        agent.max_steps = (n as usize).clamp(1, 50);
    }
    agent.history = conversations
        .remove(&handle)
        .map(|c| c.history)
        .unwrap_or_default();
    let mut ui = Capture::default();
    let message = tools::arg_str(args, "message");
    let stop = crate::sigint::stop_at(deadline);
    let r = agent.run_turn(ctx, message, &mut ui, &crate::sigint::interrupted);
    let out_of_time = crate::sigint::deadline_passed();
    drop(stop);
    let r = r.map(|mut r| {
        if out_of_time {
            r.stopped = Some(format!(
                "deadline: the turn ran out of its {} ms (MCP_CHAT_TIMEOUT)",
                chat_timeout.as_millis()
            ));
        }
        r
    });
    conversations.insert(
        handle.clone(),
        Conversation {
            history: agent.history.clone(),
            last_seen: Instant::now(),
        },
    );
    match r {
        Ok(r) => {
            let v = json!({"answer": r.answer, "session": handle, "steps": r.steps, "stopped": r.stopped,
                           "tool_calls": r.tool_calls.iter().map(|t| json!({"name": t.name, "is_error": t.is_error})).collect::<Vec<_>>()});
            ToolOutput {
                text: v.to_string(),
                is_error: r.stopped.is_some(),
            }
        }
        Err(e) => ToolOutput::error(e),
    }
}

/// `completions`: one stateless answer, no tools; roles validated. (The gate redacts it.)
fn completions(client: Result<ChatClient, String>, args: &Map<String, Value>) -> ToolOutput {
    let Some(messages) = args.get("messages").and_then(Value::as_array) else {
        return ToolOutput::error("messages must be an array");
    };
    if messages.is_empty() {
        return ToolOutput::error("messages must not be empty");
    }
    for (i, m) in messages.iter().enumerate() {
        let role = m.get("role").and_then(Value::as_str).unwrap_or("");
        if !matches!(role, "system" | "user" | "assistant") {
            return ToolOutput::error(format!(
                "messages[{i}].role must be system, user or assistant, not {role:?}"
            ));
        }
        if !m.get("content").is_some_and(Value::is_string) {
            return ToolOutput::error(format!("messages[{i}].content must be a string"));
        }
    }
    match client.and_then(|c| c.complete(messages)) {
        Ok(text) => ToolOutput::ok(text),
        Err(e) => ToolOutput::error(e),
    }
}
