//! `McpClient`: one connection to one MCP server, in the era negotiated at connect.
//!
//! `connect` spawns or dials, then runs the handshake (a `server/discover` probe with
//! fallback to `initialize`, or a pinned era); `request::<M>()` sends one typed request
//! and decodes the response matched by id, answering server pings and refusing other
//! server requests with -32601 meanwhile; `call_tool` cancels on its deadline.

use std::time::{Duration, Instant};

use serde_json::{Map, Value, json};

use super::caps::{MCP_CALL_TIMEOUT, MCP_CONNECT_TIMEOUT};
use super::era::{Era, EraChoice};
use super::handshake::{self, ProbeReply, ProbeVerdict};
use super::http::{HttpSpec, McpHttpTransport};
use super::methods;
use super::oauth::OAuth;
use super::protocol::{self as p, Method};
use super::stdio::{McpStdioTransport, StdioSpec};
use super::transport::{Transport, TransportError};
use crate::deadline::Deadline;
use crate::jsonrpc::{ErrorObject, Id, Message, code};
use crate::limits::{
    MCP_CANCEL_TIMEOUT, MCP_MAX_INPUT_ROUNDS as MAX_INPUT_ROUNDS, MCP_MAX_LIST_PAGES as MAX_PAGES,
    MCP_PROBE_TIMEOUT, MCP_REPLY_TIMEOUT,
};

/// Where a server lives.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ServerSpec {
    Stdio(StdioSpec),
    Http(HttpSpec),
}

impl ServerSpec {
    /// What the user consents to: the exact argv, or the URL and header *names*.
    pub fn describe(&self) -> String {
        match self {
            ServerSpec::Stdio(s) => {
                let mut argv = vec![quote(&s.command)];
                argv.extend(s.args.iter().map(|a| quote(a)));
                argv.join(" ")
            }
            ServerSpec::Http(h) if h.headers.is_empty() => h.url.clone(),
            ServerSpec::Http(h) => {
                let names: Vec<&str> = h.headers.iter().map(|(k, _)| k.as_str()).collect();
                format!("{} (headers: {})", h.url, names.join(", "))
            }
        }
    }
}

/// Shell-style quoting for display only (nothing is ever run through a shell).
pub fn quote(s: &str) -> String {
    if !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_./:=@%+,".contains(&b))
    {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', r"'\''"))
    }
}

/// The deadlines a client works to (the contract's caps by default; tests shorten them).
#[derive(Clone, Copy, Debug)]
pub struct Timeouts {
    /// Spawn or dial plus handshake.
    pub connect: Duration,
    /// One `tools/call`.
    pub call: Duration,
    /// How long a stdio server may stay silent on the `server/discover` probe.
    pub probe: Duration,
}

impl Default for Timeouts {
    fn default() -> Self {
        Timeouts {
            connect: MCP_CONNECT_TIMEOUT,
            call: MCP_CALL_TIMEOUT,
            probe: MCP_PROBE_TIMEOUT,
        }
    }
}

/// Why a client operation failed. A tool that ran and failed is not an error here: it is
/// a `CallToolResult` with `is_error`.
#[derive(Debug, Clone, PartialEq)]
pub enum McpError {
    /// The server answered with a JSON-RPC error.
    Rpc { method: String, error: ErrorObject },
    /// The transport failed (with the server's stderr tail, for stdio).
    Transport {
        what: String,
        error: TransportError,
        stderr: String,
    },
    /// The server's answer did not fit the protocol.
    Protocol(String),
    /// The handshake decided the server cannot be used.
    Handshake(String),
}

impl std::fmt::Display for McpError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            McpError::Rpc { method, error } => {
                write!(f, "{method}: the server answered with an error: {error}")
            }
            McpError::Transport {
                what,
                error,
                stderr,
            } => {
                write!(f, "{what}: {error}")?;
                if !stderr.is_empty() {
                    write!(f, "\n--- the server's stderr (last lines) ---\n{stderr}")?;
                }
                Ok(())
            }
            McpError::Protocol(m) => write!(f, "protocol error: {m}"),
            McpError::Handshake(m) => write!(f, "handshake failed: {m}"),
        }
    }
}

impl std::error::Error for McpError {}

pub type Result<T> = std::result::Result<T, McpError>;

/// What the handshake learned about the server.
#[derive(Clone, Debug, Default)]
pub struct ServerInfo {
    pub name: String,
    pub version: String,
    pub instructions: Option<String>,
    pub capabilities: Map<String, Value>,
}

pub struct McpClient {
    transport: Box<dyn Transport>,
    spec: ServerSpec,
    era: Era,
    version: String,
    info: ServerInfo,
    next_id: i64,
    timeouts: Timeouts,
    /// The server sent `notifications/tools/list_changed` since the last `list_tools`.
    pub tools_changed: bool,
    /// Late answers to abandoned requests, dropped.
    pub stale_replies: usize,
    /// `x-mcp-header` mirrors per tool, from the last `list_tools` (HTTP, 2026 era).
    param_headers: std::collections::HashMap<String, Vec<p::ParamHeader>>,
    /// Tools dropped by the last `list_tools`, with why.
    rejected: std::collections::HashMap<String, String>,
    /// Things the user should know that did not stop the work (dropped tools).
    pub warnings: Vec<String>,
    /// The 2026 `tools/list` answer while its `ttlMs` lasts (dropped on list_changed).
    cached_tools: Option<(Instant, Vec<p::Tool>)>,
}

fn open(
    spec: &ServerSpec,
    oauth: Option<OAuth>,
) -> std::result::Result<Box<dyn Transport>, TransportError> {
    Ok(match (spec, oauth) {
        (ServerSpec::Stdio(s), _) => Box::new(McpStdioTransport::spawn(s)?),
        (ServerSpec::Http(h), None) => Box::new(McpHttpTransport::new(h)),
        (ServerSpec::Http(h), Some(o)) => Box::new(McpHttpTransport::with_oauth(h, o)),
    })
}

/// What tai answers to a server's input request inside a 2026 `input_required` result:
/// elicitation is declined and roots are empty (both are outside tai's contract);
/// anything else (sampling) cannot be answered.
fn input_response(request: &Value) -> Option<Value> {
    match request.get("method").and_then(Value::as_str)? {
        "elicitation/create" => Some(json!({"action": "decline"})),
        "roots/list" => Some(json!({"roots": []})),
        _ => None,
    }
}

impl McpClient {
    /// Spawn or dial the server and run the handshake within `timeouts.connect`.
    pub fn connect(spec: &ServerSpec, choice: EraChoice, timeouts: Timeouts) -> Result<McpClient> {
        Self::connect_with(spec, choice, timeouts, None)
    }

    /// `connect`, answering authorization challenges with `oauth` (HTTP servers).
    pub fn connect_with(
        spec: &ServerSpec,
        choice: EraChoice,
        timeouts: Timeouts,
        oauth: Option<OAuth>,
    ) -> Result<McpClient> {
        let deadline = Deadline::after(timeouts.connect);
        let transport = open(spec, oauth).map_err(|error| McpError::Transport {
            what: "starting the server".into(),
            error,
            stderr: String::new(),
        })?;
        let mut client = McpClient {
            transport,
            spec: spec.clone(),
            era: Era::Legacy,
            version: Era::Legacy.version().into(),
            info: ServerInfo::default(),
            next_id: 1,
            timeouts,
            tools_changed: false,
            stale_replies: 0,
            param_headers: Default::default(),
            rejected: Default::default(),
            warnings: Vec::new(),
            cached_tools: None,
        };
        match choice {
            EraChoice::Auto => client.negotiate(deadline)?,
            // A pinned era opens its own way: a session by `initialize`, or the probe.
            EraChoice::Pinned(era) if era.has_sessions() => client.initialize(deadline, false)?,
            EraChoice::Pinned(era) => match client.probe(deadline)? {
                ProbeVerdict::Modern => {}
                _ => {
                    return Err(McpError::Handshake(format!(
                        "the server does not speak {} (protocol is pinned; try `auto` or {})",
                        era.version(),
                        Era::Legacy.version()
                    )));
                }
            },
        }
        Ok(client)
    }

    pub fn era(&self) -> Era {
        self.era
    }

    pub fn protocol_version(&self) -> &str {
        &self.version
    }

    pub fn server_info(&self) -> &ServerInfo {
        &self.info
    }

    pub fn spec(&self) -> &ServerSpec {
        &self.spec
    }

    pub fn stderr_tail(&self) -> String {
        self.transport.stderr_tail()
    }

    /// The OAuth authorizer, when the connection has one (its state holds new tokens
    /// when `changed` is set; the caller stores them).
    pub fn oauth(&mut self) -> Option<&mut OAuth> {
        self.transport.oauth()
    }

    pub fn skipped_lines(&self) -> usize {
        self.transport.skipped()
    }

    /// Probe, then fall back to `initialize` as `handshake::classify` decides.
    fn negotiate(&mut self, deadline: Deadline) -> Result<()> {
        let mut reprobed = false;
        loop {
            match self.probe(deadline)? {
                ProbeVerdict::Modern => return Ok(()),
                ProbeVerdict::Reprobe if !reprobed => reprobed = true,
                ProbeVerdict::Reprobe | ProbeVerdict::Legacy => {
                    // A fallback initialize answered with -32022: the server was modern after all.
                    return match self.initialize(deadline, true) {
                        Err(McpError::Rpc { error, .. })
                            if error.code == code::UNSUPPORTED_PROTOCOL_VERSION && !reprobed =>
                        {
                            match self.probe(deadline)? {
                                ProbeVerdict::Modern => Ok(()),
                                _ => Err(McpError::Handshake(format!(
                                    "initialize was refused: {error}"
                                ))),
                            }
                        }
                        other => other,
                    };
                }
                ProbeVerdict::Fail(m) => return Err(McpError::Handshake(m)),
            }
        }
    }

    /// Send `server/discover` as a 2026-07-28 client and classify the answer. On a modern
    /// verdict the connection is set up in the modern era.
    fn probe(&mut self, deadline: Deadline) -> Result<ProbeVerdict> {
        self.transport
            .set_protocol(Some((Era::Modern, Era::Modern.version().into())));
        let stdio = self.transport.is_stream();
        let probe_deadline = if stdio {
            deadline.within(self.timeouts.probe)
        } else {
            deadline
        };
        let params = p::params_for(Era::Modern, json!({}));
        let reply = match self.exchange(
            Era::Modern,
            methods::SERVER_DISCOVER,
            params,
            probe_deadline,
        ) {
            Ok(v) => ProbeReply::Result(v),
            Err(McpError::Rpc { error, .. }) => ProbeReply::RpcError(error),
            Err(McpError::Transport {
                error: TransportError::Http { status, .. },
                ..
            }) => ProbeReply::HttpStatus(status),
            Err(McpError::Transport {
                error:
                    TransportError::Timeout | TransportError::Exited { .. } | TransportError::Closed(_),
                ..
            }) if stdio => ProbeReply::Silent,
            Err(e) => return Err(e),
        };
        let verdict = handshake::classify(&reply);
        match (&verdict, reply) {
            (ProbeVerdict::Modern, ProbeReply::Result(v)) => {
                let d: p::DiscoverResult =
                    serde_json::from_value(v).map_err(|e| McpError::Protocol(e.to_string()))?;
                self.era = Era::Modern;
                self.version = Era::Modern.version().into();
                let si = d.server_info();
                self.info = ServerInfo {
                    name: si.name,
                    version: si.version,
                    instructions: d.instructions.clone(),
                    capabilities: d.capabilities.clone(),
                };
            }
            (_, ProbeReply::Silent) if stdio => {
                // The child may have exited on the unexpected first message: start afresh.
                self.transport.close();
                self.transport = open(&self.spec, None).map_err(|error| McpError::Transport {
                    what: "restarting the server after the probe".into(),
                    error,
                    stderr: String::new(),
                })?;
            }
            _ => {}
        }
        Ok(verdict)
    }

    /// The legacy handshake: `initialize`, check the answer, `notifications/initialized`.
    fn initialize(&mut self, deadline: Deadline, after_probe: bool) -> Result<()> {
        self.transport.set_protocol(None);
        self.era = Era::Legacy;
        let params = p::InitializeParams {
            protocol_version: Era::Legacy.version().into(),
            capabilities: Map::new(),
            client_info: p::Implementation::tai(),
        };
        let r: p::InitializeResult =
            self.typed::<p::Initialize>(params, deadline)
                .map_err(|e| match e {
                    McpError::Transport {
                        error: TransportError::Timeout,
                        stderr,
                        ..
                    } => McpError::Transport {
                        what: if after_probe {
                            "initialize (after the server/discover probe went unanswered)".into()
                        } else {
                            "initialize".into()
                        },
                        error: TransportError::Timeout,
                        stderr,
                    },
                    other => other,
                })?;
        handshake::check_initialize(&r).map_err(McpError::Handshake)?;
        self.version = r.protocol_version.clone();
        self.transport
            .set_protocol(Some((Era::Legacy, r.protocol_version.clone())));
        self.info = ServerInfo {
            name: r.server_info.name,
            version: r.server_info.version,
            instructions: r.instructions,
            capabilities: r.capabilities,
        };
        self.notify(methods::INITIALIZED, None, deadline)
    }

    fn notify(&mut self, method: &str, params: Option<Value>, deadline: Deadline) -> Result<()> {
        let msg = Message::Notification {
            method: method.into(),
            params,
        };
        self.transport
            .send(&msg, deadline)
            .map_err(|e| self.transport_error(method, e))
    }

    fn transport_error(&self, what: &str, error: TransportError) -> McpError {
        McpError::Transport {
            what: what.to_string(),
            error,
            stderr: self.transport.stderr_tail(),
        }
    }

    /// One typed request in the current era.
    pub fn request<M: Method>(
        &mut self,
        params: M::Params,
        deadline: Deadline,
    ) -> Result<M::Output> {
        self.typed::<M>(params, deadline)
    }

    fn typed<M: Method>(&mut self, params: M::Params, deadline: Deadline) -> Result<M::Output> {
        let value = serde_json::to_value(params).map_err(|e| McpError::Protocol(e.to_string()))?;
        let params = p::params_for(self.era, value);
        let result = self.exchange_retrying(M::NAME, params, deadline)?;
        serde_json::from_value(result).map_err(|e| {
            McpError::Protocol(format!(
                "{}: the result does not fit the method: {e}",
                M::NAME
            ))
        })
    }

    /// `exchange`, re-initializing once when a legacy HTTP session expired.
    fn exchange_retrying(
        &mut self,
        method: &str,
        params: Option<Value>,
        deadline: Deadline,
    ) -> Result<Value> {
        // Only a legacy HTTP session can expire; keep a copy for the retry only then.
        let session = !self.transport.is_stream() && self.era.has_sessions();
        let copy = if session { params.clone() } else { None };
        match self.exchange(self.era, method, params, deadline) {
            Err(McpError::Transport {
                error: TransportError::SessionExpired,
                ..
            }) if session && method != methods::INITIALIZE => {
                self.initialize(deadline, false)?;
                self.exchange(self.era, method, copy, deadline)
            }
            other => other,
        }
    }

    /// Send one request and wait for its answer, handling what arrives before it.
    fn exchange(
        &mut self,
        era: Era,
        method: &str,
        params: Option<Value>,
        deadline: Deadline,
    ) -> Result<Value> {
        let id = Id::Num(self.next_id);
        self.next_id += 1;
        let msg = Message::Request {
            id: id.clone(),
            method: method.into(),
            params,
        };
        self.transport
            .send(&msg, deadline)
            .map_err(|e| self.transport_error(method, e))?;
        loop {
            let incoming = self
                .transport
                .recv(deadline)
                .map_err(|e| self.transport_error(method, e))?;
            match incoming {
                None => {
                    return Err(McpError::Protocol(format!(
                        "the server ended its reply to {method} without answering it"
                    )));
                }
                Some(Message::Response { id: rid, result }) if rid == id => {
                    // A 2026 tools/call's input rounds are answered by `call_rounds`.
                    let rounds = method == methods::TOOLS_CALL
                        && result.get("resultType").and_then(Value::as_str)
                            == Some("input_required");
                    if era.typed_results() && !rounds {
                        p::check_result_type(&result)
                            .map_err(|m| McpError::Protocol(format!("{method}: {m}")))?;
                    }
                    return Ok(result);
                }
                Some(Message::Error { id: rid, error })
                    if rid.as_ref().is_none_or(|r| *r == id) =>
                {
                    return Err(McpError::Rpc {
                        method: method.into(),
                        error,
                    });
                }
                Some(Message::Response { .. } | Message::Error { .. }) => self.stale_replies += 1,
                Some(Message::Request {
                    id: rid, method: m, ..
                }) => self.answer_server_request(rid, &m, deadline),
                Some(Message::Notification { method: m, .. }) => {
                    if m == methods::TOOLS_LIST_CHANGED {
                        self.tools_changed = true;
                    }
                }
            }
        }
    }

    /// `ping` gets `{}`; sampling, elicitation, roots and anything else get -32601.
    fn answer_server_request(&mut self, id: Id, method: &str, deadline: Deadline) {
        let reply = if method == methods::PING {
            Message::Response {
                id,
                result: json!({}),
            }
        } else {
            let error = ErrorObject::new(
                code::METHOD_NOT_FOUND,
                format!("tai does not implement {method}"),
            );
            Message::Error {
                id: Some(id),
                error,
            }
        };
        // A failed answer is not fatal to the request in flight.
        let short = deadline.within(MCP_REPLY_TIMEOUT);
        let _ = self.transport.send(&reply, short);
    }

    /// Liveness: `ping` (legacy) or `server/discover` (2026 has no ping).
    pub fn ping(&mut self) -> Result<()> {
        let deadline = Deadline::after(self.timeouts.connect);
        if self.era.has_ping() {
            self.typed::<p::Ping>(p::NoParams {}, deadline).map(drop)
        } else {
            self.typed::<p::Discover>(p::NoParams {}, deadline)
                .map(drop)
        }
    }

    /// Every tool, following `nextCursor` to the end (guarding against a repeated cursor
    /// and a runaway page count).
    pub fn list_tools(&mut self) -> Result<Vec<p::Tool>> {
        let now = Instant::now();
        if let Some((fresh_until, tools)) = &self.cached_tools
            && now < *fresh_until
            && !self.tools_changed
        {
            return Ok(tools.clone());
        }
        let deadline = Deadline::after_from(now, self.timeouts.connect);
        self.tools_changed = false;
        self.cached_tools = None;
        let mut ttl_ms: Option<i64> = None;
        let mut tools = Vec::new();
        let mut cursor: Option<String> = None;
        let mut seen = std::collections::HashSet::new();
        for _ in 0..MAX_PAGES {
            let page = self.typed::<p::ListTools>(
                p::ListToolsParams {
                    cursor: cursor.clone(),
                },
                deadline,
            )?;
            // All pages share one freshness: keep the shortest ttlMs seen (absent or negative is 0).
            let page_ttl = page.ttl_ms.unwrap_or(0).max(0);
            ttl_ms = Some(ttl_ms.map_or(page_ttl, |t| t.min(page_ttl)));
            for t in page.tools {
                let tool = p::Tool::from_value(t)
                    .map_err(|m| McpError::Protocol(format!("tools/list: {m}")))?;
                if let Some(tool) = self.admit(tool) {
                    tools.push(tool);
                }
            }
            let end = match &page.next_cursor {
                None => true,
                Some(c) => self.era.empty_cursor_ends_listing() && c.is_empty(),
            };
            if end {
                if self.era.caches_tool_lists() && ttl_ms.unwrap_or(0) > 0 {
                    let ttl = Duration::from_millis(ttl_ms.unwrap_or(0) as u64);
                    self.cached_tools = Some((now + ttl, tools.clone()));
                }
                return Ok(tools);
            }
            match page.next_cursor {
                None => return Ok(tools),
                Some(c) => {
                    if !seen.insert(c.clone()) {
                        return Err(McpError::Protocol(format!(
                            "tools/list repeated the cursor {c:?}"
                        )));
                    }
                    cursor = Some(c);
                }
            }
        }
        Err(McpError::Protocol(format!(
            "tools/list did not end after {MAX_PAGES} pages"
        )))
    }

    /// Over HTTP in the 2026 era, a tool's `x-mcp-header` annotations must be valid or the
    /// tool is dropped (with a warning); valid ones are remembered for mirroring.
    fn admit(&mut self, tool: p::Tool) -> Option<p::Tool> {
        if self.transport.is_stream() || !self.era.routing_headers() {
            return Some(tool);
        }
        match p::param_headers(&tool.input_schema) {
            Ok(headers) => {
                if !headers.is_empty() {
                    self.param_headers.insert(tool.name.clone(), headers);
                }
                Some(tool)
            }
            Err(why) => {
                self.warnings
                    .push(format!("dropped the tool {:?}: {why}", tool.name));
                self.rejected.insert(tool.name, why);
                None
            }
        }
    }

    /// Call a tool within `timeouts.call`; on timeout or Ctrl-C the request is cancelled
    /// (`notifications/cancelled`, or closing the stream over HTTP in 2026) and fails here.
    pub fn call_tool(
        &mut self,
        name: &str,
        arguments: Map<String, Value>,
    ) -> Result<p::CallToolResult> {
        if let Some(why) = self.rejected.get(name) {
            return Err(McpError::Protocol(format!(
                "the tool {name:?} is not offered: {why}"
            )));
        }
        if let Some(headers) = self.param_headers.get(name) {
            self.transport
                .set_request_headers(p::mirror_params(headers, &arguments));
        }
        let deadline = Deadline::after(self.timeouts.call);
        let id = self.next_id;
        let params = p::CallToolParams {
            name: name.into(),
            arguments,
        };
        let outcome = if self.era.typed_results() {
            self.call_rounds(params, deadline)
        } else {
            self.typed::<p::CallTool>(params, deadline)
        };
        match outcome {
            Err(McpError::Transport {
                error: TransportError::Interrupted,
                stderr,
                ..
            }) => {
                // Ctrl-C: the server is told, as on a timeout, and the person gets the prompt.
                self.cancel(id, "interrupted by the user");
                Err(McpError::Transport {
                    what: format!("tools/call {name} (cancelled)"),
                    error: TransportError::Interrupted,
                    stderr,
                })
            }
            Err(McpError::Transport {
                error: TransportError::Timeout,
                stderr,
                ..
            }) => {
                self.cancel(id, "timeout");
                Err(McpError::Transport {
                    what: format!(
                        "tools/call {name} (cancelled after {}s)",
                        self.timeouts.call.as_secs_f32()
                    ),
                    error: TransportError::Timeout,
                    stderr,
                })
            }
            other => other,
        }
    }

    /// A 2026 `tools/call`, answering `input_required` rounds (SEP-2322): every retry has
    /// a new id, the input responses, and the server's `requestState` echoed unchanged
    /// (omitted when the server sent none).
    fn call_rounds(
        &mut self,
        params: p::CallToolParams,
        deadline: Deadline,
    ) -> Result<p::CallToolResult> {
        let base = serde_json::to_value(params).map_err(|e| McpError::Protocol(e.to_string()))?;
        let mut value = base.clone();
        for _ in 0..MAX_INPUT_ROUNDS {
            let sent = p::params_for(self.era, value);
            let result = self.exchange_retrying(methods::TOOLS_CALL, sent, deadline)?;
            if result.get("resultType").and_then(Value::as_str) != Some("input_required") {
                p::check_result_type(&result)
                    .map_err(|m| McpError::Protocol(format!("tools/call: {m}")))?;
                return serde_json::from_value(result).map_err(|e| {
                    McpError::Protocol(format!(
                        "tools/call: the result does not fit the method: {e}"
                    ))
                });
            }
            let mut responses = Map::new();
            let requests = result.get("inputRequests").and_then(Value::as_object);
            for (key, request) in requests.into_iter().flatten() {
                let answer = input_response(request).ok_or_else(|| {
                    McpError::Protocol(format!(
                        "tools/call: the server asked for input ({}), which tai does not provide",
                        request.get("method").and_then(Value::as_str).unwrap_or("?")
                    ))
                })?;
                responses.insert(key.clone(), answer);
            }
            value = base.clone();
            if let Some(obj) = value.as_object_mut() {
                obj.insert("inputResponses".into(), Value::Object(responses));
                if let Some(state) = result.get("requestState") {
                    obj.insert("requestState".into(), state.clone());
                }
            }
        }
        Err(McpError::Protocol(format!(
            "tools/call: the server still wanted input after {MAX_INPUT_ROUNDS} rounds"
        )))
    }

    fn cancel(&mut self, id: i64, reason: &str) {
        self.transport.abandon();
        if !self
            .era
            .cancels_by_closing_the_stream(!self.transport.is_stream())
        {
            let params = json!({"requestId": id, "reason": reason});
            let short = Deadline::after(MCP_CANCEL_TIMEOUT);
            let _ = self.notify(methods::CANCELLED, Some(params), short);
        }
    }

    /// Shut the connection down (stdio: close stdin, SIGTERM, SIGKILL, reap).
    pub fn close(mut self) {
        self.transport.close();
    }
}

impl Drop for McpClient {
    fn drop(&mut self) {
        self.transport.close();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn consent_shows_argv_and_header_names_only() {
        let s = ServerSpec::Stdio(StdioSpec {
            command: "npx".into(),
            args: vec![
                "-y".into(),
                "@scope/pkg@1.2".into(),
                "two words".into(),
                "it's".into(),
            ],
            env: vec![("TOKEN".into(), "secret".into())],
            cwd: None,
            ..StdioSpec::default()
        });
        assert_eq!(s.describe(), r"npx -y @scope/pkg@1.2 'two words' 'it'\''s'");
        let h = ServerSpec::Http(HttpSpec {
            url: "https://x.test/mcp".into(),
            headers: vec![("Authorization".into(), "Bearer sekrit".into())],
        });
        assert_eq!(h.describe(), "https://x.test/mcp (headers: Authorization)");
        assert!(!h.describe().contains("sekrit"));
    }
}
