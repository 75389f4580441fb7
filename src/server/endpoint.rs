//! The MCP endpoint of `tai --serve-mcp KEY`, pure but for the dispatcher and the
//! vault: `Endpoint::admit` is the one gate every request passes on its head alone
//! (framing and size, path, Origin, Host beyond loopback, the key, the method), before a
//! byte of its body is read; `Endpoint::answer` answers an admitted request whole (the
//! era per request, header checks, 2025-11-25 sessions shared through the vault) or
//! hands a long call to a worker (`Answer::Later`), whose reply the loop delivers.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use ureq_proto::http::Request;

use super::worker::{Job, Pool};
use super::{McpServer, claimed_version, conversation_key, runs_long};
use crate::jsonrpc::{Id, Message, code};
use crate::limits::serve::SESSION_SYNC_EVERY;
use crate::mcp::caps::MCP_HTTP_MAX_BODY;
use crate::mcp::era::{self, Era};
use crate::mcp::methods;

/// Why the endpoint itself answers with an error (not the dispatcher): each kind's HTTP
/// status and JSON-RPC code, in one table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Refusal {
    /// Conflicting or malformed framing (Content-Length, Transfer-Encoding).
    BadFraming,
    /// A transfer coding other than chunked.
    UnsupportedCoding,
    /// A body over MCP_HTTP_MAX_BODY.
    TooLarge,
    /// Every worker slot is taken (sent with Retry-After).
    Busy,
    /// A worker could not be started.
    Internal,
    /// A waiting call was ended (cancelled, its session deleted).
    Ended,
    /// An Origin that is not a loopback origin.
    ForeignOrigin,
    /// A Host that is not the server's address (or a name in TAI_MCP_HOSTS).
    ForeignHost,
    /// No or a wrong server key.
    Unauthorized,
    /// Anything but POST (and GET/DELETE where they mean something).
    MethodNotAllowed,
    /// 2025-11-25: a request after initialize without `Mcp-Session-Id`.
    NoSession,
    /// 2025-11-25: an `Mcp-Session-Id` this server (and the vault) does not know.
    UnknownSession,
    /// The body is not JSON.
    Parse,
    /// JSON, but not a JSON-RPC message.
    InvalidRequest,
    /// 2026-07-28: the `Mcp-*` headers disagree with the body.
    HeaderMismatch,
    /// 2026-07-28: `_meta` without its protocol version or client capabilities.
    IncompleteEnvelope,
}

impl Refusal {
    fn status_and_code(self) -> (u16, i64) {
        match self {
            Refusal::BadFraming => (400, code::SERVER_ERROR),
            Refusal::UnsupportedCoding => (501, code::SERVER_ERROR),
            Refusal::TooLarge => (413, code::SERVER_ERROR),
            Refusal::Busy => (503, code::SERVER_ERROR),
            Refusal::Internal => (500, code::INTERNAL_ERROR),
            Refusal::Ended => (200, code::SERVER_ERROR),
            Refusal::ForeignOrigin | Refusal::ForeignHost => (403, code::SERVER_ERROR),
            Refusal::Unauthorized => (401, code::SERVER_ERROR),
            Refusal::MethodNotAllowed => (405, code::SERVER_ERROR),
            Refusal::NoSession => (400, code::SERVER_ERROR),
            Refusal::UnknownSession => (404, code::SESSION_NOT_FOUND),
            Refusal::Parse => (400, code::PARSE_ERROR),
            Refusal::InvalidRequest => (400, code::INVALID_REQUEST),
            Refusal::HeaderMismatch => (400, code::HEADER_MISMATCH),
            Refusal::IncompleteEnvelope => (400, code::INVALID_PARAMS),
        }
    }
}

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

    fn refuse(kind: Refusal, id: Option<&Value>, msg: &str) -> HttpReply {
        let (status, code) = kind.status_and_code();
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
    let bad = |msg: &str| HttpReply::refuse(Refusal::BadFraming, None, msg);
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
            return Err(HttpReply::refuse(
                Refusal::UnsupportedCoding,
                None,
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
        return Err(HttpReply::refuse(
            Refusal::TooLarge,
            None,
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
            let mut r = HttpReply::refuse(
                Refusal::Busy,
                raw_id,
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
            Err(e) => Some(Answer::Now(HttpReply::refuse(
                Refusal::Internal,
                raw_id,
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
            .map(|((conn, _), id)| {
                let id = id.to_value();
                (conn, HttpReply::refuse(Refusal::Ended, Some(&id), why))
            })
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
            return Err(HttpReply::refuse(
                Refusal::ForeignOrigin,
                None,
                "Forbidden: the Origin is not a loopback origin",
            ));
        }
        if let Some(allowed) = &self.host_check
            && !header("host").is_some_and(|h| host_allowed(h, allowed))
        {
            return Err(HttpReply::refuse(
                Refusal::ForeignHost,
                None,
                "Forbidden: the Host must be the server's IP address (or a name in TAI_MCP_HOSTS)",
            ));
        }
        let token = header("authorization").and_then(bearer_token).unwrap_or("");
        if !same_secret(token.as_bytes(), self.key.as_bytes()) {
            let mut r = HttpReply::refuse(
                Refusal::Unauthorized,
                None,
                "Unauthorized: send Authorization: Bearer KEY",
            );
            r.headers.push(("www-authenticate", "Bearer".into()));
            return Err(r);
        }
        match req.method().as_str() {
            "POST" | "DELETE" => Ok(()),
            _ => {
                let mut r = HttpReply::refuse(
                    Refusal::MethodNotAllowed,
                    None,
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
                Some(_) => HttpReply::refuse(Refusal::UnknownSession, None, "Session not found"),
                None => HttpReply::refuse(
                    Refusal::NoSession,
                    None,
                    "Bad Request: Mcp-Session-Id header is required",
                ),
            });
        }
        let value: Value = match serde_json::from_slice(body) {
            Ok(v) => v,
            Err(e) => {
                return Ok(HttpReply::refuse(
                    Refusal::Parse,
                    None,
                    &format!("Parse error: {e}"),
                ));
            }
        };
        let raw_id = value.get("id").cloned();
        let msg = match Message::from_value(value) {
            Ok(m) => m,
            Err(e) => {
                return Ok(HttpReply::refuse(
                    Refusal::InvalidRequest,
                    raw_id.as_ref(),
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
        match (
            era::of_claim(facts.version.as_deref(), header("mcp-protocol-version")),
            facts.version,
        ) {
            (Ok(_), Some(version)) => {
                // 2026-07-28: stateless; the headers must agree with the body.
                let mismatch = |what: &str| {
                    HttpReply::refuse(
                        Refusal::HeaderMismatch,
                        raw_id.as_ref(),
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
            (Err(era::RequestEraError::ModernHeaderWithoutMeta), _) => {
                // A modern version in the header, but no envelope in the body.
                Ok(HttpReply::refuse(
                    Refusal::IncompleteEnvelope,
                    raw_id.as_ref(),
                    "params._meta must carry io.modelcontextprotocol/protocolVersion and clientCapabilities",
                ))
            }
            (Ok(_), None) => {
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
                    return Ok(HttpReply::refuse(
                        Refusal::NoSession,
                        raw_id.as_ref(),
                        "Bad Request: Mcp-Session-Id header is required",
                    ));
                };
                if !self.session_open(&s, now) {
                    return Ok(HttpReply::refuse(
                        Refusal::UnknownSession,
                        raw_id.as_ref(),
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
    fn hosts_and_schemes() {
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
