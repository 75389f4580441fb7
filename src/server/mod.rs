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
mod endpoint;
mod exchange;
pub mod http;
pub mod stdio;
pub mod worker;

use std::cell::OnceCell;
use std::time::{Duration, Instant};

use serde_json::{Map, Value, json};

use crate::agent::{Agent, Capture};
use crate::approval::Approver;
use crate::bridge::gate::{self, Ask, Entrance, Local};
use crate::chat::ChatClient;
use crate::config::Config;
use crate::jsonrpc::{ErrorObject, Id, Message, code};
use crate::limits::serve::LEASE_MARGIN;
use crate::limits::serve::LIST_TTL_MS;
use crate::mcp::caps::{MCP_CHAT_TIMEOUT, MCP_SESSION_IDLE};
pub use crate::mcp::era::claimed_version;
use crate::mcp::era::{Era, LEGACY_VERSION, LEGACY_VERSIONS, MODERN_VERSION};
use crate::mcp::methods;
use crate::mcp::protocol::{CLIENT_CAPABILITIES_KEY, PROTOCOL_VERSION_KEY, SERVER_INFO_KEY};
use crate::tools::{self, ToolContext, ToolDef, ToolOutput};
use crate::vault::Store;
use crate::vault::served::Lease;

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

/// Served tools whose cost is not bounded by a few milliseconds (a model, a program, the
/// network, a tree walk): a server with workers runs them in a worker process
/// (`worker`), so its loop keeps answering everyone else meanwhile.
pub const LONG_TOOLS: &[&str] = &[
    CHAT,
    COMPLETIONS,
    "shell",
    "web_fetch",
    "mcp_add",
    "mcp_resolve",
    "grep",
    "glob",
];

/// Whether `msg` is a `tools/call` of one of the [`LONG_TOOLS`].
pub fn runs_long(msg: &Message) -> bool {
    match msg {
        Message::Request { method, params, .. } if method == methods::TOOLS_CALL => params
            .as_ref()
            .and_then(|p| p.get("name"))
            .and_then(Value::as_str)
            .is_some_and(|n| LONG_TOOLS.contains(&n)),
        _ => false,
    }
}

/// `chat`'s conversation key for a call, when it names or implies one: the handle it
/// passes, or (2025-11-25) its session's. Two jobs with one key must not run at once.
pub fn conversation_key(msg: &Message, era: Era, session: Option<&str>) -> Option<String> {
    let Message::Request { params, .. } = msg else {
        return None;
    };
    let p = params.as_ref()?;
    if p.get("name").and_then(Value::as_str) != Some(CHAT) {
        return None;
    }
    match (
        p.pointer("/arguments/session").and_then(Value::as_str),
        era,
        session,
    ) {
        (Some(h), _, _) => Some(h.to_string()),
        (None, Era::Legacy, Some(s)) => Some(format!("session-{s}")),
        _ => None,
    }
}

pub struct McpServer {
    pub store: Store,
    pub config: Config,
    /// tai's own secrets (the API key, the vault passphrase, …) given to a worker on its
    /// stdin rather than in its environment: read before the process environment.
    pub secrets: Vec<(String, String)>,
    /// The served tool list, built once on first use (after `serve_only` is set).
    listed: OnceCell<Vec<Value>>,
    /// How long an idle conversation or session lives (MCP_SESSION_IDLE; tests shorten it).
    pub idle: Duration,
    /// `--serve-tools LIST`: only these are listed and callable (`None`: all); set with
    /// `serve_only`.
    serve_only: Option<Vec<String>>,
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

/// What is wrong with a 2026-07-28 request's `_meta` envelope (the protocol version and
/// the client capabilities it must carry), as its JSON-RPC error; `None` when it is whole.
/// A fault here refuses the request itself (over HTTP: 400), before any method runs.
pub fn envelope_fault(params: Option<&Value>) -> Option<ErrorObject> {
    let meta = params.and_then(|p| p.get("_meta"));
    match meta
        .and_then(|m| m.get(PROTOCOL_VERSION_KEY))
        .and_then(Value::as_str)
    {
        None => {
            return Some(ErrorObject::new(
                code::INVALID_PARAMS,
                format!("params._meta must carry {PROTOCOL_VERSION_KEY}"),
            ));
        }
        Some(v) if v != MODERN_VERSION => {
            return Some(
                ErrorObject::new(
                    code::UNSUPPORTED_PROTOCOL_VERSION,
                    "Unsupported protocol version",
                )
                .with_data(json!({"supported": [MODERN_VERSION], "requested": v})),
            );
        }
        Some(_) => {}
    }
    meta.and_then(|m| m.get(CLIENT_CAPABILITIES_KEY))
        .is_none_or(|c| !c.is_object())
        .then(|| {
            ErrorObject::new(
                code::INVALID_PARAMS,
                format!("params._meta must carry {CLIENT_CAPABILITIES_KEY}"),
            )
        })
}

/// A client request's method, parsed once.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum ClientRequest {
    Initialize,
    Ping,
    ServerDiscover,
    ToolsList,
    ToolsCall,
    PromptsList,
    ResourcesList,
    ResourceTemplatesList,
    ResourcesRead,
    Unknown,
}

impl ClientRequest {
    fn of(method: &str) -> ClientRequest {
        match method {
            methods::INITIALIZE => ClientRequest::Initialize,
            methods::PING => ClientRequest::Ping,
            methods::SERVER_DISCOVER => ClientRequest::ServerDiscover,
            methods::TOOLS_LIST => ClientRequest::ToolsList,
            methods::TOOLS_CALL => ClientRequest::ToolsCall,
            "prompts/list" => ClientRequest::PromptsList,
            "resources/list" => ClientRequest::ResourcesList,
            "resources/templates/list" => ClientRequest::ResourceTemplatesList,
            "resources/read" => ClientRequest::ResourcesRead,
            _ => ClientRequest::Unknown,
        }
    }

    /// Whether the method exists in `era`: 2026-07-28 dropped `initialize` and `ping`;
    /// `server/discover` is 2026's, and tai answers `resources/read` only there.
    fn in_era(self, era: Era) -> bool {
        match self {
            ClientRequest::Initialize | ClientRequest::Ping => era == Era::Legacy,
            ClientRequest::ServerDiscover | ClientRequest::ResourcesRead => era == Era::Modern,
            ClientRequest::Unknown => false,
            _ => true,
        }
    }

    /// Whether a 2026-07-28 answer carries cache hints (`ttlMs`, `cacheScope`).
    fn cacheable(self) -> bool {
        matches!(
            self,
            ClientRequest::ServerDiscover
                | ClientRequest::ToolsList
                | ClientRequest::PromptsList
                | ClientRequest::ResourcesList
                | ClientRequest::ResourceTemplatesList
        )
    }
}

/// A 2026-07-28 result: `resultType`, `serverInfo` in `_meta`, and cache hints on lists.
fn complete(mut r: Value, cacheable: bool) -> Value {
    r["resultType"] = json!("complete");
    r["_meta"] = json!({SERVER_INFO_KEY: {"name": "tai", "version": env!("CARGO_PKG_VERSION")}});
    if cacheable {
        r["ttlMs"] = json!(LIST_TTL_MS);
        r["cacheScope"] = json!("public");
    }
    r
}

fn error_reply(id: Id, error: ErrorObject) -> Option<Message> {
    Some(Message::Error {
        id: Some(id),
        error,
    })
}

/// `initialize` (2025-11-25): the version asked for when tai speaks it, else tai's.
fn handle_initialize(params: Option<&Value>) -> Value {
    let asked = params
        .and_then(|p| p.get("protocolVersion"))
        .and_then(Value::as_str)
        .unwrap_or("");
    let version = if LEGACY_VERSIONS.contains(&asked) {
        asked
    } else {
        LEGACY_VERSION
    };
    json!({
        "protocolVersion": version,
        "capabilities": {"tools": {"listChanged": false}, "prompts": {}, "resources": {}},
        "serverInfo": {"name": "tai", "version": env!("CARGO_PKG_VERSION")},
        "instructions": "tai's tools: files, shell, the vault, MCP server management, and `chat` (a full tai agent turn) and `completions`."
    })
}

/// `server/discover` (2026-07-28).
fn handle_discover() -> Value {
    json!({
        "supportedVersions": [MODERN_VERSION],
        "capabilities": {"tools": {"listChanged": false}, "prompts": {}, "resources": {}},
        "instructions": "tai's tools: files, shell, the vault, MCP server management, and `chat` and `completions`."
    })
}

impl McpServer {
    pub fn new(store: Store, config: Config) -> McpServer {
        McpServer {
            store,
            config,
            secrets: Vec::new(),
            listed: OnceCell::new(),
            idle: MCP_SESSION_IDLE,
            serve_only: None,
            chat_timeout: MCP_CHAT_TIMEOUT,
        }
    }

    /// `--serve-tools LIST`: only these are listed and callable, and a served `chat`
    /// agent's calls are bounded by them too (the gate reads `config.served_tools`).
    pub fn serve_only(&mut self, tools: Option<Vec<String>>) {
        self.config.served_tools = tools.clone();
        self.serve_only = tools;
        self.listed = OnceCell::new();
    }

    /// The tools this server serves: `served_tools`, narrowed by `--serve-tools`, built
    /// once. Listing and calling both read this, so a tool left out cannot be called either.
    fn listed(&self) -> &[Value] {
        self.listed.get_or_init(|| {
            let mut all = served_tools();
            if let Some(only) = &self.serve_only {
                all.retain(|t| only.iter().any(|n| t["name"] == n.as_str()));
            }
            all
        })
    }

    /// A variable of tai's environment: the secrets given to this process first.
    fn env(secrets: &[(String, String)], name: &str) -> Option<String> {
        secrets
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.clone())
            .or_else(|| crate::config::process_env(name))
    }

    /// Handle one message in `era` (decided by the transport). `session` is the legacy
    /// session (stdio: the process; HTTP: `Mcp-Session-Id`), used as `chat`'s default.
    /// The method is parsed once into a [`ClientRequest`]; each has its own `handle_…`.
    pub fn handle(&mut self, msg: Message, era: Era, session: Option<&str>) -> Option<Message> {
        let Message::Request { id, method, params } = msg else {
            return None; // notifications and responses need no answer
        };
        let request = ClientRequest::of(&method);
        if era == Era::Modern
            && let Some(fault) = envelope_fault(params.as_ref())
        {
            return error_reply(id, fault);
        }
        if !request.in_era(era) {
            return error(
                Some(id),
                code::METHOD_NOT_FOUND,
                format!("Method not found: {method}"),
            );
        }
        let answer = match request {
            ClientRequest::Initialize => Ok(handle_initialize(params.as_ref())),
            ClientRequest::Ping => Ok(json!({})),
            ClientRequest::ServerDiscover => Ok(handle_discover()),
            ClientRequest::ToolsList => Ok(json!({"tools": self.listed()})),
            // tai has no prompts or resources: the lists are honestly empty.
            ClientRequest::PromptsList => Ok(json!({"prompts": []})),
            ClientRequest::ResourcesList => Ok(json!({"resources": []})),
            ClientRequest::ResourceTemplatesList => Ok(json!({"resourceTemplates": []})),
            ClientRequest::ResourcesRead => Err(ErrorObject::new(
                code::INVALID_PARAMS,
                "Resource not found: tai serves no resources",
            )),
            ClientRequest::ToolsCall => self.handle_tools_call(params, era, session),
            ClientRequest::Unknown => Err(ErrorObject::new(
                code::METHOD_NOT_FOUND,
                format!("Method not found: {method}"),
            )),
        };
        match answer {
            Ok(r) if era == Era::Modern => result(id, complete(r, request.cacheable())),
            Ok(r) => result(id, r),
            Err(e) => error_reply(id, e),
        }
    }

    /// `tools/call`: a served tool through the trust gate (entrance `Network`).
    fn handle_tools_call(
        &mut self,
        params: Option<Value>,
        era: Era,
        session: Option<&str>,
    ) -> Result<Value, ErrorObject> {
        let mut p = match params {
            Some(Value::Object(p)) => p,
            _ => Map::new(),
        };
        if !p.get("name").is_some_and(Value::is_string) {
            return Err(ErrorObject::new(
                code::INVALID_PARAMS,
                "tools/call needs params.name",
            ));
        }
        // The arguments are taken out of the params (moved, not copied).
        let args: Map<String, Value> = match p.remove("arguments") {
            None | Some(Value::Null) => Map::new(),
            Some(Value::Object(m)) => m,
            Some(_) => {
                return Err(ErrorObject::new(
                    code::INVALID_PARAMS,
                    "tools/call: arguments must be an object",
                ));
            }
        };
        let name = p.get("name").and_then(Value::as_str).unwrap_or_default();
        let schema = self.listed().iter().find(|t| t["name"] == name);
        let Some(schema) = schema.map(|t| &t["inputSchema"]) else {
            return Err(ErrorObject::new(
                code::INVALID_PARAMS,
                format!("Unknown tool: {name}"),
            ));
        };
        if let Err(why) = tools::check_args(schema, &args) {
            // Input the tool rejects is the tool's answer (as the TS SDK does), so the
            // model can see it and fix its call; only an unknown tool is a protocol error.
            return Ok(
                json!({"content": [{"type": "text", "text": format!("{name}: {why}")}], "isError": true}),
            );
        }
        // Every served call passes the gate; `chat` and `completions` as local tools.
        let mut client = matches!(name, CHAT | COMPLETIONS).then(|| self.chat_client());
        let McpServer {
            store,
            config,
            idle,
            chat_timeout,
            secrets,
            ..
        } = self;
        let mut approver = ServeApprover;
        let env = |name: &str| McpServer::env(secrets, name);
        let mut ctx = ToolContext {
            store,
            config,
            approver: &mut approver,
            env: &env,
        };
        let mut run = |ctx: &mut ToolContext<'_>, a: &Map<String, Value>| {
            let client = client
                .take()
                .unwrap_or_else(|| Err("the model client was already used".into()));
            match name {
                CHAT => chat(ctx, *idle, *chat_timeout, client, a, era, session),
                _ => completions(client, a),
            }
        };
        // The extras' definitions are built only for a call of one of them.
        let local = matches!(name, CHAT | COMPLETIONS)
            .then(|| extras().into_iter().find(|d| d.name == name))
            .flatten()
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
        Ok(json!({"content": [{"type": "text", "text": out.text}], "isError": out.is_error}))
    }

    fn chat_client(&mut self) -> Result<ChatClient, String> {
        let model = self
            .config
            .model
            .clone()
            .ok_or("no model is set for the server: set TAI_MODEL or the profile's model")?;
        let key = match &self.config.api_key {
            crate::config::ApiKeySource::None => None,
            crate::config::ApiKeySource::Env => McpServer::env(&self.secrets, "TAI_API_KEY"),
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
    idle: Duration,
    chat_timeout: Duration,
    client: Result<ChatClient, String>,
    args: &Map<String, Value>,
    era: Era,
    session: Option<&str>,
) -> ToolOutput {
    let (handle, create) = match (args.get("session").and_then(Value::as_str), era, session) {
        (Some(h), _, _) => (h.to_string(), false),
        (None, Era::Legacy, Some(s)) => (format!("session-{s}"), true),
        _ => (
            format!("conv-{}", crate::entropy::id().unwrap_or_default()),
            true,
        ),
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
    // The conversation lives in the vault: any tai process sharing it continues it.
    let ms = |d: Duration| i64::try_from(d.as_millis()).unwrap_or(i64::MAX / 2);
    let history = match ctx.store.served_begin(
        &handle,
        create,
        ms(chat_timeout + LEASE_MARGIN),
        ms(idle),
    ) {
        Ok(Lease::Granted(h)) => h,
        Ok(Lease::Unknown) => {
            return ToolOutput::error(format!(
                "no conversation {handle:?} (it expired after {}s idle, or never existed); start a new one without `session`",
                idle.as_secs()
            ));
        }
        Ok(Lease::Busy { until_ms }) => {
            let left = (until_ms - crate::vault::now_ms()).max(0) / 1000 + 1;
            return ToolOutput::error(format!(
                "conversation {handle:?} is busy: another turn on it is still running; wait for its answer and send this again (its lease lapses within {left}s)"
            ));
        }
        Err(e) => return ToolOutput::error(format!("the conversation store failed: {e}")),
    };
    let mut agent = Agent::new(&chat);
    if let Ok(b) = crate::bridge::Bridge::load(ctx.store, &ctx.config.profile) {
        agent = agent.with_bridge(b);
    }
    if let Some(n) = args.get("max_steps").and_then(Value::as_u64) {
        agent.max_steps = (n as usize).clamp(1, 50);
    }
    agent.history = history;
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
    if let Err(e) = ctx.store.served_finish(&handle, &agent.history) {
        return ToolOutput::error(format!("the turn ran but its history was not stored: {e}"));
    }
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
