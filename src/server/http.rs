//! `tai --serve-mcp KEY`: MCP over Streamable HTTP on one thread.
//!
//! A `TcpListener` and every connection are driven by one `poll(2)` loop; HTTP/1.1 framing
//! is `ureq-proto`'s sans-IO server state machine (tiny_http would start an accept thread
//! and a task pool). Every request passes one gate on its head alone, `Endpoint::admit`
//! (framing and size, path, Origin, Host beyond loopback, the key, the method), before a
//! byte of its body is read; a refused request is answered and its connection closed.
//! Connections not yet admitted hold a small share of the slots and live briefly, so they
//! cannot starve keyed clients; each address is capped; every connection has a write
//! deadline, and a client that does not read gets no further request read. Requests are
//! handled one at a time, in order. `Exchange` is one connection's HTTP driven by bytes
//! alone, so the fuzz target runs the same path without a socket.

use std::collections::HashMap;
use std::io::{ErrorKind, Read, Write};
use std::net::{IpAddr, TcpListener, TcpStream};
use std::os::fd::AsFd;
use std::time::{Duration, Instant};

use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
use serde_json::{Value, json};
use ureq_proto::http::{Request, Response};
use ureq_proto::server::{RecvRequestResult, Reply, SendResponseResult};

use super::worker::{Job, Pool};
use super::{McpServer, claimed_version, conversation_key, runs_long};
use crate::jsonrpc::{Id, Message, code};
use crate::mcp::caps::MCP_HTTP_MAX_BODY;
use crate::mcp::era::Era;
use crate::mcp::methods;

/// One HTTP answer.
pub struct HttpReply {
    pub status: u16,
    pub headers: Vec<(&'static str, String)>,
    pub body: Vec<u8>,
    /// A `subscriptions/listen` stream (its request id): `body` is its first event and
    /// the response stays open afterwards.
    pub listen: Option<Value>,
}

impl HttpReply {
    fn json(status: u16, v: &Value) -> HttpReply {
        HttpReply {
            status,
            headers: vec![("content-type", "application/json".into())],
            body: v.to_string().into_bytes(),
            listen: None,
        }
    }

    fn rpc_error(status: u16, id: Option<&Value>, code: i64, msg: &str) -> HttpReply {
        HttpReply::json(
            status,
            &json!({"jsonrpc": "2.0", "id": id.cloned().unwrap_or(Value::Null), "error": {"code": code, "message": msg}}),
        )
    }

    fn empty(status: u16) -> HttpReply {
        HttpReply {
            status,
            headers: Vec::new(),
            body: Vec::new(),
            listen: None,
        }
    }
}

/// Equal in time independent of where the first difference is.
fn same_secret(a: &[u8], b: &[u8]) -> bool {
    let mut diff = a.len() ^ b.len();
    for (i, x) in a.iter().enumerate() {
        diff |= usize::from(x ^ b.get(i).copied().unwrap_or(0));
    }
    diff == 0
}

/// Whether an `Origin` is a loopback origin (DNS-rebinding protection).
pub fn loopback_origin(origin: &str) -> bool {
    let rest = origin
        .strip_prefix("http://")
        .or_else(|| origin.strip_prefix("https://"))
        .unwrap_or("");
    let host = if rest.starts_with('[') {
        rest.split(']')
            .next()
            .map(|h| format!("{h}]"))
            .unwrap_or_default()
    } else {
        rest.split(':').next().unwrap_or("").to_string()
    };
    matches!(host.as_str(), "localhost" | "127.0.0.1" | "[::1]")
}

/// A header value with the `=?base64?…?=` sentinel decoded.
fn decode_header(v: &str) -> Option<String> {
    match v
        .strip_prefix("=?base64?")
        .and_then(|r| r.strip_suffix("?="))
    {
        Some(b64) => base64_decode(b64).and_then(|b| String::from_utf8(b).ok()),
        None => Some(v.to_string()),
    }
}

fn base64_decode(s: &str) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    let mut acc = 0u32;
    let mut bits = 0;
    for c in s.bytes().filter(|c| *c != b'=') {
        let v = match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            _ => return None,
        };
        acc = acc << 6 | u32::from(v);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
        }
    }
    Some(out)
}

/// A session in use is re-confirmed in the vault (and marked seen there) at most this often.
const SESSION_SYNC_EVERY: Duration = Duration::from_secs(30);

/// When a session was last used here, and last confirmed in the vault.
struct Seen {
    used: Instant,
    synced: Instant,
}

/// What a client waiting on a worker is told to wait before it tries again (503).
const RETRY_AFTER_SECS: u32 = 2;

/// The MCP endpoint's answer to one whole request (pure but for the dispatcher).
pub struct Endpoint {
    pub server: McpServer,
    key: String,
    /// 2025-11-25 sessions this process has seen: when last used, and when last
    /// confirmed in the vault (where every server sharing it finds them).
    sessions: HashMap<String, Seen>,
    /// Bound beyond loopback: `Host` must name an IP address, `localhost` or one of these.
    host_check: Option<Vec<String>>,
    /// Long calls run here (`None`: inline, as the fuzz target and in-memory tests do).
    /// A worker's tag is the waiting connection's number and the request's era.
    pub workers: Option<Pool<(u64, Era)>>,
    /// Answers for waiting connections decided outside their own exchange (a cancel, a
    /// deleted session): delivered by the loop.
    decided: Vec<(u64, HttpReply)>,
}

fn millis(d: Duration) -> i64 {
    i64::try_from(d.as_millis()).unwrap_or(i64::MAX / 2)
}

/// An admitted request's answer: now, or once its worker finishes.
pub enum Answer {
    Now(HttpReply),
    Later,
}

/// The HTTP status of a modern reply, by its JSON-RPC error code: the one table. (An
/// incomplete `_meta` envelope is refused with 400 before dispatch: `envelope_fault`.)
fn modern_status(reply: &Option<Message>) -> u16 {
    match reply {
        Some(Message::Error { error, .. }) => match error.code {
            code::METHOD_NOT_FOUND => 404,
            code::HEADER_MISMATCH
            | code::UNSUPPORTED_PROTOCOL_VERSION
            | code::MISSING_REQUIRED_CLIENT_CAPABILITY => 400,
            // A tool's bad arguments and the like: answered, not refused.
            _ => 200,
        },
        _ => 200,
    }
}

/// A worker's reply as the HTTP answer for its era.
fn worker_reply(era: Era, reply: Message) -> HttpReply {
    let reply = Some(reply);
    let status = match era {
        Era::Modern => modern_status(&reply),
        Era::Legacy => 200,
    };
    reply_json(status, reply)
}

/// What the endpoint itself reads of a message's params (the dispatcher reads the rest).
struct Facts {
    /// The protocol version its `_meta` claims (2026-07-28 era evidence).
    version: Option<String>,
    /// `tools/call`: the tool named.
    tool: Option<String>,
    /// `notifications/cancelled`: the request it cancels.
    cancelled: Option<Id>,
    /// `subscriptions/listen`: the notifications asked for.
    listen: Option<Value>,
    /// A 2026-07-28 request whose `_meta` envelope is incomplete: the refusal.
    envelope: Option<crate::jsonrpc::ErrorObject>,
}

impl Facts {
    fn of(method: &str, params: Option<&Value>) -> Facts {
        let get = |key: &str| params.and_then(|p| p.get(key));
        Facts {
            version: claimed_version(params).map(str::to_string),
            tool: (method == methods::TOOLS_CALL)
                .then(|| get("name").and_then(Value::as_str).map(str::to_string))
                .flatten(),
            cancelled: (method == methods::CANCELLED)
                .then(|| get("requestId").and_then(Id::from_value))
                .flatten(),
            listen: (method == methods::SUBSCRIPTIONS_LISTEN)
                .then(|| get("notifications").cloned())
                .flatten(),
            envelope: super::envelope_fault(params),
        }
    }
}

/// Whether a `Host` header names an IP literal or `localhost` (with any port), or a name
/// the operator allowed: what a DNS-rebinding page cannot send.
pub fn host_allowed(host: &str, allowed: &[String]) -> bool {
    let host = host.trim().to_ascii_lowercase();
    let name = if let Some(rest) = host.strip_prefix('[') {
        match rest.split_once(']') {
            Some((v6, port)) if port.is_empty() || port.strip_prefix(':').is_some_and(is_port) => {
                return v6.parse::<std::net::Ipv6Addr>().is_ok();
            }
            _ => return false,
        }
    } else {
        match host.rsplit_once(':') {
            Some((name, port)) if is_port(port) => name.to_string(),
            Some(_) => return false,
            None => host.clone(),
        }
    };
    name.parse::<std::net::Ipv4Addr>().is_ok()
        || name == "localhost"
        || allowed.iter().any(|a| a.eq_ignore_ascii_case(&name))
}

fn is_port(p: &str) -> bool {
    !p.is_empty() && p.len() <= 5 && p.bytes().all(|b| b.is_ascii_digit())
}

/// The token of an `Authorization` value whose scheme is Bearer (any case).
pub fn bearer_token(value: &str) -> Option<&str> {
    let (scheme, token) = value.trim().split_once(' ')?;
    scheme
        .eq_ignore_ascii_case("bearer")
        .then_some(token.trim_start())
}

/// How a request's body is framed, from its head alone: `Err` is the refusal.
fn framing(req: &Request<()>) -> Result<Option<u64>, HttpReply> {
    let bad = |msg: &str| HttpReply::rpc_error(400, None, -32000, msg);
    let lengths: Vec<&str> = req
        .headers()
        .get_all("content-length")
        .iter()
        .map(|v| v.to_str().unwrap_or("x"))
        .collect();
    let codings: Vec<String> = req
        .headers()
        .get_all("transfer-encoding")
        .iter()
        .flat_map(|v| {
            v.to_str()
                .unwrap_or("?")
                .split(',')
                .map(|c| c.trim().to_ascii_lowercase())
                .collect::<Vec<_>>()
        })
        .collect();
    if !codings.is_empty() && !lengths.is_empty() {
        // Request smuggling behind a proxy: the two framings must never meet.
        return Err(bad(
            "Bad Request: Content-Length together with Transfer-Encoding",
        ));
    }
    if !codings.is_empty() {
        if codings != ["chunked"] {
            return Err(HttpReply::rpc_error(
                501,
                None,
                -32000,
                "Not Implemented: the only transfer coding accepted is chunked",
            ));
        }
        return Ok(None);
    }
    let mut length = None;
    for l in lengths {
        let n = match l.trim() {
            t if !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit()) => t
                .parse::<u64>()
                .map_err(|_| bad("Bad Request: Content-Length"))?,
            _ => return Err(bad("Bad Request: Content-Length is not a number")),
        };
        if length.is_some_and(|m| m != n) {
            return Err(bad("Bad Request: conflicting Content-Length headers"));
        }
        length = Some(n);
    }
    if length.is_some_and(|n| n > MCP_HTTP_MAX_BODY as u64) {
        return Err(HttpReply::rpc_error(
            413,
            None,
            -32000,
            "Payload Too Large: over MCP_HTTP_MAX_BODY",
        ));
    }
    Ok(length)
}

impl Endpoint {
    pub fn new(server: McpServer, key: String) -> Endpoint {
        Endpoint {
            server,
            key,
            sessions: HashMap::new(),
            host_check: None,
            workers: None,
            decided: Vec::new(),
        }
    }

    /// Whether session `s` is open: used here within the idle time, or opened by any
    /// server on the vault (then adopted). Marked used now; the vault is told now and then.
    fn session_open(&mut self, s: &str, now: Instant) -> bool {
        let idle = millis(self.server.idle);
        if let Some(seen) = self.sessions.get_mut(s) {
            seen.used = now;
            if now.duration_since(seen.synced) < SESSION_SYNC_EVERY.min(self.server.idle / 4) {
                return true;
            }
            seen.synced = now;
            // Deleted through another server: gone here too. (A vault error keeps it.)
            if self
                .server
                .store
                .served_session_touch(s, idle)
                .unwrap_or(true)
            {
                return true;
            }
            self.sessions.remove(s);
            return false;
        }
        if self
            .server
            .store
            .served_session_touch(s, idle)
            .unwrap_or(false)
        {
            self.sessions.insert(
                s.to_string(),
                Seen {
                    used: now,
                    synced: now,
                },
            );
            return true;
        }
        false
    }

    /// Close session `s` here and in the vault; whether it was open.
    fn close_session(&mut self, s: &str) -> bool {
        let here = self.sessions.remove(s).is_some();
        let shared = self.server.store.served_session_close(s).unwrap_or(false);
        here || shared
    }

    /// Run a long call in a worker when this endpoint has workers: `None` runs it inline.
    /// Beyond the cap the answer is 503 with `Retry-After`.
    fn defer(
        &mut self,
        conn: u64,
        msg: &Message,
        era: Era,
        session: Option<&str>,
        raw_id: Option<&Value>,
    ) -> Option<Answer> {
        if !runs_long(msg) {
            return None;
        }
        let Message::Request { id, .. } = msg else {
            return None;
        };
        let server = &self.server;
        let pool = self.workers.as_mut()?;
        if pool.is_full() {
            let mut r = HttpReply::rpc_error(
                503,
                raw_id,
                -32000,
                &format!(
                    "Service Unavailable: {} long calls are running, the most this server runs at once (--serve-workers); try again in {RETRY_AFTER_SECS}s",
                    pool.cap
                ),
            );
            r.headers
                .push(("retry-after", RETRY_AFTER_SECS.to_string()));
            return Some(Answer::Now(r));
        }
        let job = Job::new(server, msg, era, session);
        let key = conversation_key(msg, era, session);
        let deadline = Instant::now() + server.chat_timeout;
        match pool.start((conn, era), &job, id.clone(), key, deadline) {
            Ok(()) => Some(Answer::Later),
            Err(e) => Some(Answer::Now(HttpReply::rpc_error(
                500,
                raw_id,
                -32603,
                &format!("Internal error: {e}"),
            ))),
        }
    }

    /// End the workers `which` selects; their connections are answered with `why`.
    fn end_workers(
        &mut self,
        why: &str,
        which: impl Fn(&super::worker::Running<(u64, Era)>) -> bool,
    ) {
        let Some(pool) = self.workers.as_mut() else {
            return;
        };
        let ended: Vec<_> = pool
            .cancel(|r| which(r))
            .into_iter()
            .map(|(conn, _)| (conn, HttpReply::rpc_error(200, None, -32000, why)))
            .collect();
        self.decided.extend(ended);
    }

    /// A connection went away: its worker (if any) is ended, nobody waits for it.
    pub fn forget(&mut self, conn: u64) {
        if let Some(pool) = self.workers.as_mut() {
            pool.cancel(|r| r.tag.0 == conn);
        }
        self.decided.retain(|(c, _)| *c != conn);
    }

    /// The answers now ready for waiting connections: finished workers and ended ones.
    pub fn ready(&mut self, now: Instant) -> Vec<(u64, HttpReply)> {
        let mut out = std::mem::take(&mut self.decided);
        if let Some(pool) = self.workers.as_mut() {
            out.extend(
                pool.pump(now)
                    .into_iter()
                    .map(|((conn, era), m)| (conn, worker_reply(era, m))),
            );
        }
        out
    }

    /// Bound to `addr`: beyond loopback, `Host` is checked (names in `hosts` also pass).
    pub fn bound_to(mut self, addr: std::net::SocketAddr, hosts: Vec<String>) -> Endpoint {
        self.host_check = (!addr.ip().is_loopback()).then_some(hosts);
        self
    }

    /// The gate every request passes on its head alone, before any body is read: framing
    /// and size, path, Origin, Host (beyond loopback), the key, the method. `Err` is the
    /// answer, after which the connection closes and the body is never buffered.
    pub fn admit(&self, req: &Request<()>) -> Result<(), HttpReply> {
        let header = |name: &str| {
            req.headers()
                .get(name)
                .and_then(|v| v.to_str().ok())
                .map(str::trim)
        };
        framing(req)?;
        if req.uri().path() != "/mcp" {
            return Err(HttpReply::json(
                404,
                &json!({"error": "not found: the MCP endpoint is /mcp"}),
            ));
        }
        if let Some(origin) = header("origin")
            && !loopback_origin(origin)
        {
            return Err(HttpReply::rpc_error(
                403,
                None,
                -32000,
                "Forbidden: the Origin is not a loopback origin",
            ));
        }
        if let Some(allowed) = &self.host_check
            && !header("host").is_some_and(|h| host_allowed(h, allowed))
        {
            return Err(HttpReply::rpc_error(
                403,
                None,
                -32000,
                "Forbidden: the Host must be the server's IP address (or a name in TAI_MCP_HOSTS)",
            ));
        }
        let token = header("authorization").and_then(bearer_token).unwrap_or("");
        if !same_secret(token.as_bytes(), self.key.as_bytes()) {
            let mut r = HttpReply::rpc_error(
                401,
                None,
                -32000,
                "Unauthorized: send Authorization: Bearer KEY",
            );
            r.headers.push(("www-authenticate", "Bearer".into()));
            return Err(r);
        }
        match req.method().as_str() {
            "POST" | "DELETE" => Ok(()),
            _ => {
                let mut r = HttpReply::rpc_error(
                    405,
                    None,
                    -32000,
                    "Method not allowed: POST a JSON-RPC message",
                );
                r.headers.push(("allow", "POST, DELETE".into()));
                Err(r)
            }
        }
    }

    /// The answer to an admitted request and its whole body, on connection `conn`.
    pub fn answer(&mut self, conn: u64, req: &Request<()>, body: &[u8]) -> Answer {
        match self.reply(conn, req, body) {
            Ok(now) => Answer::Now(now),
            Err(later) => later,
        }
    }

    /// `Ok`: the answer now; `Err`: what `defer` decided (an answer or a worker).
    fn reply(&mut self, conn: u64, req: &Request<()>, body: &[u8]) -> Result<HttpReply, Answer> {
        let header = |name: &str| {
            req.headers()
                .get(name)
                .and_then(|v| v.to_str().ok())
                .map(str::trim)
        };
        let now = Instant::now();
        let idle = self.server.idle;
        self.sessions
            .retain(|_, seen| now.duration_since(seen.used) < idle);
        let session = header("mcp-session-id").map(str::to_string);
        if req.method().as_str() == "DELETE" {
            return Ok(match session {
                Some(s) if self.close_session(&s) => {
                    self.end_workers("the session was deleted; its call was ended", |r| {
                        r.session.as_deref() == Some(s.as_str())
                    });
                    HttpReply::empty(200)
                }
                Some(_) => HttpReply::rpc_error(404, None, -32001, "Session not found"),
                None => HttpReply::rpc_error(
                    400,
                    None,
                    -32000,
                    "Bad Request: Mcp-Session-Id header is required",
                ),
            });
        }
        let value: Value = match serde_json::from_slice(body) {
            Ok(v) => v,
            Err(e) => {
                return Ok(HttpReply::rpc_error(
                    400,
                    None,
                    code::PARSE_ERROR,
                    &format!("Parse error: {e}"),
                ));
            }
        };
        let raw_id = value.get("id").cloned();
        let msg = match Message::from_value(value) {
            Ok(m) => m,
            Err(e) => {
                return Ok(HttpReply::rpc_error(
                    400,
                    raw_id.as_ref(),
                    code::INVALID_REQUEST,
                    &e.0,
                ));
            }
        };
        // What the endpoint reads of the params, taken once (the message itself goes to
        // the dispatcher whole, never copied).
        let (method, is_request, facts) = match &msg {
            Message::Request { method, params, .. } => {
                (method.clone(), true, Facts::of(method, params.as_ref()))
            }
            Message::Notification { method, params } => {
                (method.clone(), false, Facts::of(method, params.as_ref()))
            }
            _ => return Ok(HttpReply::empty(202)), // a client's answer: nothing to do
        };
        match facts.version {
            Some(version) => {
                // 2026-07-28: stateless; the headers must agree with the body.
                let mismatch = |what: &str| {
                    HttpReply::rpc_error(
                        400,
                        raw_id.as_ref(),
                        code::HEADER_MISMATCH,
                        &format!("Header mismatch: {what}"),
                    )
                };
                if header("mcp-protocol-version") != Some(version.as_str()) {
                    return Ok(mismatch(
                        "MCP-Protocol-Version must equal _meta's protocolVersion",
                    ));
                }
                if is_request && header("mcp-method") != Some(method.as_str()) {
                    return Ok(mismatch("Mcp-Method must equal the body's method"));
                }
                if method == methods::TOOLS_CALL
                    && header("mcp-name").and_then(decode_header) != facts.tool
                {
                    return Ok(mismatch("Mcp-Name must equal params.name"));
                }
                if !is_request {
                    if let Some(id) = facts.cancelled {
                        self.end_workers("cancelled by notifications/cancelled", |r| {
                            r.id == id && r.tag.1 == Era::Modern
                        });
                    }
                    return Ok(HttpReply::empty(202));
                }
                if method == methods::SUBSCRIPTIONS_LISTEN {
                    return Ok(listen_ack(raw_id.as_ref(), facts.listen.as_ref()));
                }
                if let (Some(error), Message::Request { id, .. }) = (facts.envelope, &msg) {
                    let refusal = Message::Error {
                        id: Some(id.clone()),
                        error,
                    };
                    return Ok(reply_json(400, Some(refusal)));
                }
                if let Some(a) = self.defer(conn, &msg, Era::Modern, None, raw_id.as_ref()) {
                    return Err(a);
                }
                let reply = self.server.handle(msg, Era::Modern, None);
                let status = modern_status(&reply);
                Ok(reply_json(status, reply))
            }
            None if header("mcp-protocol-version")
                .is_some_and(|v| Era::of_version(v) == Era::Modern) =>
            {
                // A modern version in the header, but no envelope in the body.
                Ok(HttpReply::rpc_error(
                    400,
                    raw_id.as_ref(),
                    code::INVALID_PARAMS,
                    "params._meta must carry io.modelcontextprotocol/protocolVersion and clientCapabilities",
                ))
            }
            None => {
                // 2025-11-25: initialize opens a session; everything else needs it.
                if method == methods::INITIALIZE {
                    let id = crate::entropy::id().unwrap_or_default();
                    self.sessions.insert(
                        id.clone(),
                        Seen {
                            used: now,
                            synced: now,
                        },
                    );
                    if let Err(e) = self.server.store.served_session_open(&id, millis(idle)) {
                        // Still a session here; other servers on the vault will not know it.
                        eprintln!("tai: the session could not be shared in the vault: {e}");
                    }
                    let mut r = reply_json(200, self.server.handle(msg, Era::Legacy, Some(&id)));
                    r.headers.push(("mcp-session-id", id));
                    return Ok(r);
                }
                let Some(s) = session else {
                    return Ok(HttpReply::rpc_error(
                        400,
                        raw_id.as_ref(),
                        -32000,
                        "Bad Request: Mcp-Session-Id header is required",
                    ));
                };
                if !self.session_open(&s, now) {
                    return Ok(HttpReply::rpc_error(
                        404,
                        raw_id.as_ref(),
                        -32001,
                        "Session not found",
                    ));
                }
                if !is_request {
                    if let Some(id) = facts.cancelled {
                        self.end_workers("cancelled by notifications/cancelled", |r| {
                            r.id == id && r.session.as_deref() == Some(s.as_str())
                        });
                    }
                    return Ok(HttpReply::empty(202));
                }
                if let Some(a) = self.defer(conn, &msg, Era::Legacy, Some(&s), raw_id.as_ref()) {
                    return Err(a);
                }
                Ok(reply_json(
                    200,
                    self.server.handle(msg, Era::Legacy, Some(&s)),
                ))
            }
        }
    }
}

/// The first event of a `subscriptions/listen` stream: the acknowledgement, honouring the
/// list-changed types asked for (tai's lists do not change while it serves, so none will
/// follow) and no resource subscriptions (tai serves no resources).
fn listen_ack(id: Option<&Value>, notifications: Option<&Value>) -> HttpReply {
    let asked = notifications.and_then(Value::as_object);
    let mut honoured = serde_json::Map::new();
    for key in [
        "toolsListChanged",
        "promptsListChanged",
        "resourcesListChanged",
    ] {
        if asked.and_then(|a| a.get(key)).and_then(Value::as_bool) == Some(true) {
            honoured.insert(key.into(), Value::Bool(true));
        }
    }
    let ack = json!({"jsonrpc": "2.0", "method": "notifications/subscriptions/acknowledged",
        "params": {"_meta": {"io.modelcontextprotocol/subscriptionId": id.cloned().unwrap_or(Value::Null)}, "notifications": honoured}});
    HttpReply {
        status: 200,
        headers: vec![
            ("content-type", "text/event-stream".into()),
            ("x-accel-buffering", "no".into()),
            ("cache-control", "no-cache".into()),
        ],
        body: format!("event: message\ndata: {ack}\n\n").into_bytes(),
        listen: Some(id.cloned().unwrap_or(Value::Null)),
    }
}

fn reply_json(status: u16, reply: Option<Message>) -> HttpReply {
    match reply {
        Some(m) => {
            let mut r = HttpReply::json(status, &Value::Null);
            r.body = m.to_bytes();
            r
        }
        None => HttpReply::empty(202),
    }
}

/// The server's limits. The defaults serve people; tests shorten the deadlines through
/// `with_overrides` (`TAI_MCP_TEST_LIMITS`).
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// A request must arrive whole within this.
    pub request: Duration,
    /// An admitted keep-alive connection with nothing to do is closed after this.
    pub idle: Duration,
    /// A connection with no admitted request yet lives this long from its accept.
    pub unauthenticated: Duration,
    /// Output waiting for a client that does not read: closed after this.
    pub write: Duration,
    /// A `subscriptions/listen` stream with no event is ended after this.
    pub listen_idle: Duration,
    /// A `:` comment on a listen stream this often.
    pub keepalive: Duration,
    pub max_connections: usize,
    /// Connections not yet admitted hold at most this many slots (the oldest is evicted).
    pub unauthenticated_slots: usize,
    /// Connections from one address at most (its oldest unadmitted one is evicted first).
    pub per_peer: usize,
    /// No further request on a connection is read while this much output is unsent.
    pub outbox: usize,
    /// A listen stream whose unsent output passes this is closed.
    pub listen_outbox: usize,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            request: Duration::from_secs(10),
            idle: Duration::from_secs(60),
            unauthenticated: Duration::from_secs(5),
            write: Duration::from_secs(10),
            listen_idle: Duration::from_secs(600),
            keepalive: Duration::from_secs(15),
            max_connections: 64,
            unauthenticated_slots: 16,
            per_peer: 32,
            outbox: 1024 * 1024,
            listen_outbox: 64 * 1024,
        }
    }
}

impl Limits {
    /// Deadlines from `name=MS,…` (request, idle, unauthenticated, write, listen_idle,
    /// keepalive); unknown names and bad numbers are ignored.
    pub fn with_overrides(mut self, spec: &str) -> Limits {
        for (name, ms) in spec
            .split(',')
            .filter_map(|kv| kv.split_once('='))
            .filter_map(|(k, v)| Some((k.trim(), v.trim().parse::<u64>().ok()?)))
        {
            let d = Duration::from_millis(ms);
            match name {
                "request" => self.request = d,
                "idle" => self.idle = d,
                "unauthenticated" => self.unauthenticated = d,
                "write" => self.write = d,
                "listen_idle" => self.listen_idle = d,
                "keepalive" => self.keepalive = d,
                _ => {}
            }
        }
        self
    }
}

/// How long a refused or finished connection may still send (discarded) before it is
/// closed, so the answer reaches the client instead of a reset.
const CLOSE_GRACE: Duration = Duration::from_secs(1);
const MAX_HEADER_BYTES: usize = 64 * 1024;
/// Connections accepted per poll round: the earlier ones are read before more arrive.
const ACCEPTS_PER_ROUND: usize = 16;
/// The longest the loop sleeps in `poll` before it checks deadlines and the stop flag.
const POLL_ROUND_MS: u16 = 100;

/// A connection's place in the request/response cycle.
enum Phase {
    Request(Reply<ureq_proto::server::state::RecvRequest>),
    Body(
        Reply<ureq_proto::server::state::RecvBody>,
        Box<Request<()>>,
        Vec<u8>,
    ),
    /// A `subscriptions/listen` stream held open (chunked SSE).
    Listening {
        body: Reply<ureq_proto::server::state::SendBody>,
        opened: Instant,
        last_write: Instant,
        id: Value,
    },
    /// Answered; what the client still sends is discarded until it closes.
    Closing,
    /// The request is in a worker: the answer is written when it finishes; what the
    /// client sends meanwhile waits its turn.
    Waiting(Reply<ureq_proto::server::state::ProvideResponse>),
}

/// One connection's HTTP, driven by bytes alone (no socket): the poll loop and the fuzz
/// target share it. Requests are answered in order; a refused one closes the exchange
/// without its body ever being buffered.
pub struct Exchange {
    pub input: Vec<u8>,
    pub output: Vec<u8>,
    phase: Phase,
    /// A request here passed admission: the connection holds an authenticated slot.
    pub admitted: bool,
    /// When the request now arriving began, or the connection went idle.
    since: Instant,
    outbox: usize,
    /// The connection's number: what a worker answering for it is tagged with.
    pub id: u64,
}

impl Exchange {
    pub fn new(outbox: usize) -> Option<Exchange> {
        Some(Exchange {
            input: Vec::new(),
            output: Vec::new(),
            phase: Phase::Request(Reply::new().ok()?),
            admitted: false,
            since: Instant::now(),
            outbox,
            id: 0,
        })
    }

    /// Whether a worker is answering this connection's request.
    pub fn waiting(&self) -> bool {
        matches!(self.phase, Phase::Waiting(_))
    }

    /// The worker's answer for the waiting request: written, then the requests that
    /// arrived meanwhile go on.
    pub fn deliver(&mut self, answer: HttpReply, endpoint: &mut Endpoint) {
        let phase = std::mem::replace(&mut self.phase, Phase::Closing);
        let Phase::Waiting(provide) = phase else {
            self.phase = phase;
            return;
        };
        if self.finish(provide, answer) && !self.input.is_empty() {
            self.advance(endpoint);
        }
    }

    pub fn is_closing(&self) -> bool {
        matches!(self.phase, Phase::Closing)
    }

    /// Whether a request is under way (its deadline runs) rather than the connection idle.
    fn receiving(&self) -> bool {
        match self.phase {
            Phase::Body(..) => true,
            Phase::Request(_) => !self.input.is_empty(),
            _ => false,
        }
    }

    /// Take bytes from the client and answer whatever requests are now whole.
    pub fn receive(&mut self, bytes: &[u8], endpoint: &mut Endpoint) {
        if matches!(self.phase, Phase::Closing | Phase::Listening { .. }) {
            return; // nothing more is read from a closing connection or a listen stream
        }
        if self.waiting() {
            // Pipelined behind a request in a worker: kept (bounded) for its turn.
            let room = MAX_HEADER_BYTES.saturating_sub(self.input.len());
            self.input
                .extend_from_slice(&bytes[..bytes.len().min(room)]);
            return;
        }
        if self.input.is_empty() && matches!(self.phase, Phase::Request(_)) {
            self.since = Instant::now(); // a new request starts its deadline
        }
        self.input.extend_from_slice(bytes);
        self.advance(endpoint);
    }

    /// Refuse: the answer, then close (no body is read).
    fn refuse(&mut self, answer: &HttpReply) {
        self.output.extend(close_response(answer));
        self.input.clear();
        self.phase = Phase::Closing;
    }

    /// Run the state machine over the buffered input, answering whole requests in order
    /// while the unsent output stays under the outbox.
    fn advance(&mut self, endpoint: &mut Endpoint) {
        while self.output.len() < self.outbox {
            let phase = std::mem::replace(&mut self.phase, Phase::Closing);
            match phase {
                Phase::Closing => return,
                listening @ Phase::Listening { .. } => {
                    self.input.clear();
                    self.phase = listening;
                    return;
                }
                waiting @ Phase::Waiting(_) => {
                    self.phase = waiting;
                    return;
                }
                Phase::Request(mut reply) => {
                    let (used, req) = match reply.try_request(&self.input) {
                        Ok((used, Some(req))) => (used, req),
                        Ok((_, None)) => {
                            if self.input.len() > MAX_HEADER_BYTES {
                                self.output
                                    .extend(status_only(431, "Request Header Fields Too Large"));
                                self.input.clear();
                                return;
                            }
                            self.phase = Phase::Request(reply);
                            return;
                        }
                        Err(_) => {
                            self.output.extend(status_only(400, "Bad Request"));
                            self.input.clear();
                            return;
                        }
                    };
                    self.input.drain(..used);
                    // The gate: decided on the head, before a byte of the body is read.
                    if let Err(refusal) = endpoint.admit(&req) {
                        self.refuse(&refusal);
                        return;
                    }
                    self.admitted = true;
                    match reply.proceed() {
                        Some(RecvRequestResult::RecvBody(body)) => {
                            self.phase = Phase::Body(body, Box::new(req), Vec::new())
                        }
                        Some(RecvRequestResult::Send100(s)) => {
                            let mut out = [0u8; 256];
                            match s.accept(&mut out) {
                                Ok((n, body)) => {
                                    self.output.extend_from_slice(&out[..n]);
                                    self.phase = Phase::Body(body, Box::new(req), Vec::new());
                                }
                                Err(_) => return,
                            }
                        }
                        Some(RecvRequestResult::ProvideResponse(provide)) => {
                            match endpoint.answer(self.id, &req, &[]) {
                                Answer::Now(answer) => {
                                    if !self.finish(provide, answer) {
                                        return;
                                    }
                                }
                                Answer::Later => {
                                    self.phase = Phase::Waiting(provide);
                                    return;
                                }
                            }
                        }
                        None => return,
                    }
                }
                Phase::Body(mut body, req, mut got) => {
                    let mut out = [0u8; 16 * 1024];
                    loop {
                        match body.read(&self.input, &mut out) {
                            Ok((used, n)) => {
                                self.input.drain(..used);
                                got.extend_from_slice(&out[..n]);
                                if got.len() > MCP_HTTP_MAX_BODY {
                                    self.output.extend(status_only(413, "Payload Too Large"));
                                    self.input.clear();
                                    return;
                                }
                                if body.is_ended() || (used == 0 && n == 0) {
                                    break;
                                }
                            }
                            Err(_) => {
                                self.output.extend(status_only(400, "Bad Request"));
                                self.input.clear();
                                return;
                            }
                        }
                    }
                    if !body.is_ended() {
                        self.phase = Phase::Body(body, req, got);
                        return;
                    }
                    let Ok(provide) = body.proceed() else { return };
                    match endpoint.answer(self.id, &req, &got) {
                        Answer::Now(answer) => {
                            if !self.finish(provide, answer) {
                                return;
                            }
                        }
                        Answer::Later => {
                            self.phase = Phase::Waiting(provide);
                            return;
                        }
                    }
                }
            }
            if self.input.is_empty() {
                return;
            }
        }
    }

    /// Encode an answer; set up for the next request on the same connection. `false` when
    /// nothing more is to be read (a listen stream began, or the connection closes).
    fn finish(
        &mut self,
        provide: Reply<ureq_proto::server::state::ProvideResponse>,
        answer: HttpReply,
    ) -> bool {
        if let Some(id) = answer.listen.clone() {
            let Some(SendResponseResult::SendBody(mut body)) = write_head(
                provide,
                answer.status,
                &answer.headers,
                None,
                &mut self.output,
            ) else {
                return false;
            };
            if write_chunk(&mut body, &answer.body, &mut self.output) {
                let now = Instant::now();
                self.phase = Phase::Listening {
                    body,
                    opened: now,
                    last_write: now,
                    id,
                };
            }
            return false;
        }
        let close = encode(provide, answer, &mut self.output);
        self.since = Instant::now();
        match (close, Reply::new().ok()) {
            (false, Some(r)) => {
                self.phase = Phase::Request(r);
                true
            }
            _ => false,
        }
    }

    /// End a listen stream: its response, then the last chunk; the connection closes.
    fn end_stream(&mut self) {
        if let Phase::Listening { body, id, .. } = &mut self.phase {
            let end = json!({"jsonrpc": "2.0", "id": id,
                "result": {"resultType": "complete", "_meta": {"io.modelcontextprotocol/subscriptionId": id}}});
            write_chunk(
                body,
                format!("event: message\ndata: {end}\n\n").as_bytes(),
                &mut self.output,
            );
            write_chunk(body, &[], &mut self.output);
        }
        self.phase = Phase::Closing;
    }
}

/// The server's request path from raw bytes, without a socket: each chunk through
/// framing, admission and the endpoint; returns what would be written back (fuzzing).
pub fn exchange_bytes(endpoint: &mut Endpoint, chunks: &[&[u8]]) -> Vec<u8> {
    let Some(mut ex) = Exchange::new(Limits::default().outbox) else {
        return Vec::new();
    };
    for c in chunks {
        ex.receive(c, endpoint);
    }
    ex.output
}

struct Conn {
    stream: TcpStream,
    peer: IpAddr,
    ex: Exchange,
    accepted: Instant,
    /// The poll round it was accepted in (not evicted before a round has read it).
    round: u64,
    /// Since when output has been waiting for the client to take it.
    pending_since: Option<Instant>,
    /// When the exchange closed and the write side was shut (input is drained meanwhile).
    closed_at: Option<Instant>,
}

/// Encode `r` through the state machine into `out`; returns whether to close afterwards.
fn encode(
    provide: Reply<ureq_proto::server::state::ProvideResponse>,
    r: HttpReply,
    out: &mut Vec<u8>,
) -> bool {
    let Some(next) = write_head(provide, r.status, &r.headers, Some(r.body.len()), out) else {
        return true;
    };
    let cleanup = match next {
        SendResponseResult::SendBody(mut body) => {
            let mut at = 0;
            while !body.is_finished() {
                // Encoded straight into `out` (no per-response scratch buffer).
                let start = out.len();
                out.resize(start + (r.body.len() - at) + 1024, 0);
                let Ok((used, n)) = body.write(&r.body[at..], &mut out[start..]) else {
                    out.truncate(start);
                    return true;
                };
                out.truncate(start + n);
                at += used;
                if used == 0 && n == 0 {
                    break;
                }
            }
            body.proceed()
        }
        SendResponseResult::Cleanup(c) => c,
    };
    cleanup.must_close_connection()
}

/// The status line and headers of a response into `out`; `length` sets Content-Length
/// (without it the body is chunked). What follows the head: a body to send, or cleanup.
fn write_head(
    provide: Reply<ureq_proto::server::state::ProvideResponse>,
    status: u16,
    headers: &[(&'static str, String)],
    length: Option<usize>,
    out: &mut Vec<u8>,
) -> Option<SendResponseResult> {
    let mut builder = Response::builder().status(status);
    if let Some(n) = length {
        builder = builder.header("content-length", n.to_string());
    }
    for (k, v) in headers {
        builder = builder.header(*k, v.as_str());
    }
    let mut send = provide.provide(builder.body(()).ok()?).ok()?;
    let mut buf = [0u8; 4 * 1024];
    loop {
        let n = send.write(&mut buf).ok()?;
        out.extend_from_slice(&buf[..n]);
        if send.is_finished() {
            return Some(send.proceed());
        }
    }
}

fn status_only(status: u16, msg: &str) -> Vec<u8> {
    format!("HTTP/1.1 {status} {msg}\r\ncontent-length: 0\r\nconnection: close\r\n\r\n")
        .into_bytes()
}

/// A whole response that ends the connection (a refusal made on the head alone).
fn close_response(r: &HttpReply) -> Vec<u8> {
    let reason = match r.status {
        400 => "Bad Request",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        405 => "Method Not Allowed",
        413 => "Payload Too Large",
        501 => "Not Implemented",
        _ => "Refused",
    };
    let mut head = format!(
        "HTTP/1.1 {} {reason}\r\ncontent-length: {}\r\nconnection: close\r\n",
        r.status,
        r.body.len()
    );
    for (k, v) in &r.headers {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    head.push_str("\r\n");
    let mut out = head.into_bytes();
    out.extend_from_slice(&r.body);
    out
}

/// Make room for a connection from `peer`: over the per-peer cap, over the share of
/// unadmitted connections, or over the total, the oldest unadmitted connection (of that
/// peer first) is dropped — only one that has had a poll round to send its head, so a
/// flood of new connections cannot push out a client before it was read. `false` when
/// no room can be made.
fn make_room(conns: &mut Vec<Conn>, peer: IpAddr, l: &Limits, round: u64) -> bool {
    let evict = |conns: &mut Vec<Conn>, only: Option<IpAddr>| -> bool {
        let oldest = conns
            .iter()
            .enumerate()
            .filter(|(_, c)| !c.ex.admitted && c.round < round && only.is_none_or(|p| c.peer == p))
            .min_by_key(|(_, c)| c.accepted)
            .map(|(i, _)| i);
        match oldest {
            Some(i) => {
                conns.remove(i);
                true
            }
            None => false,
        }
    };
    if conns.iter().filter(|c| c.peer == peer).count() >= l.per_peer && !evict(conns, Some(peer)) {
        return false;
    }
    if conns.iter().filter(|c| !c.ex.admitted).count() >= l.unauthenticated_slots
        && !evict(conns, None)
    {
        return false;
    }
    conns.len() < l.max_connections || evict(conns, None)
}

/// Whether a connection is past a deadline (or its listen stream fell behind).
fn expired(c: &Conn, now: Instant, l: &Limits) -> bool {
    let since = |t: Instant| now.duration_since(t);
    if c.pending_since.is_some_and(|t| since(t) >= l.write) {
        return true; // a client that does not read what it asked for
    }
    if let Some(t) = c.closed_at {
        return since(t) >= CLOSE_GRACE;
    }
    if !c.ex.admitted && since(c.accepted) >= l.unauthenticated {
        return true;
    }
    match &c.ex.phase {
        Phase::Listening { .. } => c.ex.output.len() > l.listen_outbox,
        // The worker's own deadline bounds the wait.
        Phase::Waiting(_) => false,
        // Closing with nothing left to write (the write side is shut on the next pump):
        // bounded all the same.
        Phase::Closing => since(c.ex.since) >= l.request,
        _ if c.ex.receiving() => since(c.ex.since) >= l.request,
        _ => since(c.ex.since) >= l.idle && c.ex.output.is_empty(),
    }
}

/// Serve until SIGINT or SIGTERM.
pub fn serve(
    endpoint: &mut Endpoint,
    listener: TcpListener,
    limits: Limits,
) -> std::io::Result<()> {
    listener.set_nonblocking(true)?;
    let mut conns: Vec<Conn> = Vec::new();
    let mut round: u64 = 0;
    let mut next_id: u64 = 0;
    while !crate::sigint::interrupted() {
        let now = Instant::now();
        for c in &mut conns {
            if let Phase::Listening {
                body,
                opened,
                last_write,
                ..
            } = &mut c.ex.phase
            {
                if now.duration_since(*opened) >= limits.listen_idle {
                    c.ex.end_stream(); // idle too long: answered and closed
                } else if now.duration_since(*last_write) >= limits.keepalive {
                    // A comment keeps proxies from cutting the stream.
                    write_chunk(body, b": keepalive\n\n", &mut c.ex.output);
                    *last_write = now;
                }
            }
            note_pending(c, now);
        }
        conns.retain(|c| {
            let keep = !expired(c, now, &limits);
            if !keep {
                endpoint.forget(c.ex.id);
            }
            keep
        });
        let mut fds = vec![PollFd::new(listener.as_fd(), PollFlags::POLLIN)];
        for c in &conns {
            let mut ev = PollFlags::empty();
            // A client that does not take its answers sends no more requests meanwhile;
            // one waiting on a worker is read until its pipelined input is full.
            if (c.ex.output.len() < limits.outbox || c.closed_at.is_some())
                && !(c.ex.waiting() && c.ex.input.len() >= MAX_HEADER_BYTES)
            {
                ev |= PollFlags::POLLIN;
            }
            if !c.ex.output.is_empty() {
                ev |= PollFlags::POLLOUT;
            }
            fds.push(PollFd::new(c.stream.as_fd(), ev));
        }
        // The workers' pipes wake the loop like connections do.
        if let Some(pool) = &endpoint.workers {
            for (fd, ev) in pool.poll_fds() {
                fds.push(PollFd::new(fd, ev));
            }
        }
        if poll(&mut fds, PollTimeout::from(POLL_ROUND_MS)).is_err() {
            continue; // EINTR: check the stop flag
        }
        let ready: Vec<bool> = fds
            .iter()
            .map(|f| f.revents().is_some_and(|r| !r.is_empty()))
            .collect();
        drop(fds);
        let mut dead = Vec::new();
        for (i, c) in conns.iter_mut().enumerate() {
            if ready[i + 1] && !pump(c, endpoint) {
                dead.push(i);
            }
        }
        for i in dead.into_iter().rev() {
            endpoint.forget(conns.remove(i).ex.id);
        }
        // Finished workers' answers, each to the connection waiting for it.
        for (id, answer) in endpoint.ready(Instant::now()) {
            if let Some(c) = conns.iter_mut().find(|c| c.ex.id == id) {
                c.ex.deliver(answer, endpoint);
                if matches!(flush(c), Flushed::Dead) {
                    c.closed_at = Some(Instant::now() - CLOSE_GRACE);
                }
                note_pending(c, Instant::now());
            }
        }
        // New connections last, so the indices above matched the poll; a few per round,
        // each read at once (a prompt client is admitted before any flood can evict it).
        round += 1;
        if ready[0] {
            for _ in 0..ACCEPTS_PER_ROUND {
                let Ok((stream, addr)) = listener.accept() else {
                    break;
                };
                if !make_room(&mut conns, addr.ip(), &limits, round) {
                    let mut s = stream;
                    let _ = s.write_all(&status_only(503, "Service Unavailable"));
                    continue;
                }
                let _ = stream.set_nonblocking(true);
                let _ = stream.set_nodelay(true);
                if let Some(mut ex) = Exchange::new(limits.outbox) {
                    next_id += 1;
                    ex.id = next_id;
                    conns.push(Conn {
                        stream,
                        peer: addr.ip(),
                        ex,
                        accepted: Instant::now(),
                        round,
                        pending_since: None,
                        closed_at: None,
                    });
                    if let Some(c) = conns.last_mut()
                        && !pump(c, endpoint)
                    {
                        conns.pop();
                    }
                }
            }
        }
    }
    if let Some(pool) = endpoint.workers.as_mut() {
        pool.stop_all();
    }
    // Stopping: end each listen stream gracefully (its response, then the last chunk).
    for c in &mut conns {
        if matches!(c.ex.phase, Phase::Listening { .. }) {
            c.ex.end_stream();
            let _ = c.stream.set_nonblocking(false);
            let _ = c.stream.set_write_timeout(Some(Duration::from_secs(1)));
            let _ = c.stream.write_all(&c.ex.output);
        }
    }
    Ok(())
}

/// Start or stop the write deadline as output waits or is all taken.
fn note_pending(c: &mut Conn, now: Instant) {
    match (c.ex.output.is_empty(), c.pending_since) {
        (true, _) => c.pending_since = None,
        (false, None) => c.pending_since = Some(now),
        (false, Some(_)) => {}
    }
}

enum Flushed {
    All,
    /// The socket is full: wait for POLLOUT.
    Blocked,
    Dead,
}

/// Write as much pending output as the socket takes.
fn flush(c: &mut Conn) -> Flushed {
    while !c.ex.output.is_empty() {
        match c.stream.write(&c.ex.output) {
            Ok(0) => return Flushed::Dead,
            Ok(n) => {
                c.ex.output.drain(..n);
            }
            Err(e) if e.kind() == ErrorKind::WouldBlock => return Flushed::Blocked,
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(_) => return Flushed::Dead,
        }
    }
    Flushed::All
}

/// Move bytes for one ready connection; `false` when it is done.
fn pump(c: &mut Conn, endpoint: &mut Endpoint) -> bool {
    if matches!(flush(c), Flushed::Dead) {
        return false;
    }
    let mut buf = [0u8; 16 * 1024];
    // Read while the client sends and there is room for its answers; each chunk goes
    // through the exchange at once, so a refused request's body is never held.
    while c.ex.output.len() < c.ex.outbox || c.closed_at.is_some() {
        let room = if c.ex.waiting() {
            MAX_HEADER_BYTES
                .saturating_sub(c.ex.input.len())
                .min(buf.len())
        } else {
            buf.len()
        };
        if room == 0 {
            break;
        }
        match c.stream.read(&mut buf[..room]) {
            Ok(0) => return false,
            Ok(n) => {
                c.ex.receive(&buf[..n], endpoint);
                if n < room {
                    break;
                }
            }
            Err(e) if e.kind() == ErrorKind::WouldBlock => break,
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(_) => return false,
        }
    }
    // Output drained below the outbox: requests already read may go on.
    c.ex.advance(endpoint);
    match flush(c) {
        Flushed::Dead => return false,
        Flushed::Blocked => {}
        Flushed::All if c.ex.is_closing() && c.closed_at.is_none() => {
            // Answered for good: no more writes; reads are drained until the grace ends.
            let _ = c.stream.shutdown(std::net::Shutdown::Write);
            c.closed_at = Some(Instant::now());
        }
        Flushed::All => {}
    }
    note_pending(c, Instant::now());
    true
}

/// One chunk of a stream's body into `out`.
fn write_chunk(
    body: &mut Reply<ureq_proto::server::state::SendBody>,
    data: &[u8],
    out: &mut Vec<u8>,
) -> bool {
    let mut buf = vec![0u8; data.len() + 64];
    match body.write(data, &mut buf) {
        Ok((_, n)) => {
            out.extend_from_slice(&buf[..n]);
            true
        }
        Err(_) => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn origins_and_secrets() {
        for ok in [
            "http://localhost",
            "http://localhost:3000",
            "http://127.0.0.1:8765",
            "https://[::1]:9",
        ] {
            assert!(loopback_origin(ok), "{ok}");
        }
        for bad in [
            "http://evil.example",
            "http://localhost.evil.example",
            "null",
            "http://127.0.0.2",
            "",
        ] {
            assert!(!loopback_origin(bad), "{bad}");
        }
        assert!(same_secret(b"abc", b"abc"));
        assert!(
            !same_secret(b"abc", b"abd")
                && !same_secret(b"abc", b"abcd")
                && !same_secret(b"", b"a")
        );
        assert_eq!(
            decode_header("=?base64?SGVsbG8sIOS4lueVjA==?=").as_deref(),
            Some("Hello, 世界")
        );
        assert_eq!(decode_header("plain").as_deref(), Some("plain"));
    }

    #[test]
    fn hosts_schemes_and_limits() {
        let names = vec!["mcp.example".to_string()];
        for ok in [
            "127.0.0.1",
            "10.0.0.7:8765",
            "[::1]",
            "[fe80::1]:80",
            "localhost:8765",
            "MCP.example:443",
        ] {
            assert!(host_allowed(ok, &names), "{ok}");
        }
        for bad in [
            "evil.example",
            "evil.example:8765",
            "127.0.0.1.evil.example",
            "[::1",
            "[nothex]",
            "10.0.0.7:http",
            "",
        ] {
            assert!(!host_allowed(bad, &names), "{bad}");
        }
        assert_eq!(bearer_token("Bearer abc"), Some("abc"));
        assert_eq!(bearer_token("bearer abc"), Some("abc"));
        assert_eq!(bearer_token("BEARER  abc"), Some("abc"));
        assert_eq!(bearer_token("Basic abc"), None);
        assert_eq!(bearer_token("abc"), None);
        let l = Limits::default().with_overrides("write=300, listen_idle=5,bogus=1,idle=x");
        assert_eq!(
            (l.write, l.listen_idle, l.idle),
            (
                Duration::from_millis(300),
                Duration::from_millis(5),
                Limits::default().idle
            )
        );
    }

    fn head(extra: &[(&str, &str)]) -> Request<()> {
        let mut b = Request::builder().method("POST").uri("/mcp");
        for (k, v) in extra {
            b = b.header(*k, *v);
        }
        b.body(()).unwrap()
    }

    #[test]
    fn framing_is_decided_on_the_head() {
        let status = |h: &[(&str, &str)]| framing(&head(h)).map_err(|r| r.status);
        assert_eq!(status(&[]), Ok(None));
        assert_eq!(status(&[("content-length", "12")]), Ok(Some(12)));
        assert_eq!(status(&[("transfer-encoding", "chunked")]), Ok(None));
        assert_eq!(status(&[("transfer-encoding", "Chunked")]), Ok(None));
        assert_eq!(
            status(&[("content-length", "5"), ("transfer-encoding", "chunked")]),
            Err(400)
        );
        assert_eq!(status(&[("transfer-encoding", "xchunked")]), Err(501));
        assert_eq!(status(&[("transfer-encoding", "gzip, chunked")]), Err(501));
        assert_eq!(
            status(&[
                ("transfer-encoding", "chunked"),
                ("transfer-encoding", "chunked")
            ]),
            Err(501)
        );
        assert_eq!(status(&[("content-length", "+5")]), Err(400));
        assert_eq!(
            status(&[("content-length", "5"), ("content-length", "5")]),
            Ok(Some(5))
        );
        assert_eq!(
            status(&[("content-length", "5"), ("content-length", "6")]),
            Err(400)
        );
        assert_eq!(status(&[("content-length", "99999999999")]), Err(413));
    }
}
