//! `tai --serve-mcp KEY`: MCP over Streamable HTTP on one thread.
//!
//! A `TcpListener` and every connection are driven by one `poll(2)` loop; HTTP/1.1 framing
//! is `ureq-proto`'s sans-IO server state machine (tiny_http would start an accept thread
//! and a task pool). Requests are handled one at a time, in order, while other keep-alive
//! connections wait; each connection has deadlines (a request must arrive whole within
//! REQUEST_DEADLINE, an idle connection is closed after IDLE_DEADLINE), header size and
//! body size are bounded, and open connections are capped.

use std::collections::HashMap;
use std::io::{ErrorKind, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::os::fd::AsFd;
use std::time::{Duration, Instant};

use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
use serde_json::{Value, json};
use ureq_proto::http::{Request, Response};
use ureq_proto::server::{RecvRequestResult, Reply, SendResponseResult};

use super::{McpServer, claimed_version};
use crate::jsonrpc::{Message, code};
use crate::mcp::caps::MCP_HTTP_MAX_BODY;
use crate::mcp::era::Era;
use crate::mcp::methods;

const REQUEST_DEADLINE: Duration = Duration::from_secs(10);
const IDLE_DEADLINE: Duration = Duration::from_secs(60);
const MAX_CONNECTIONS: usize = 64;
const MAX_HEADER_BYTES: usize = 64 * 1024;
const KEEPALIVE: Duration = Duration::from_secs(15);

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

/// The MCP endpoint's answer to one whole request (pure but for the dispatcher).
pub struct Endpoint {
    pub server: McpServer,
    key: String,
    sessions: HashMap<String, Instant>,
}

impl Endpoint {
    pub fn new(server: McpServer, key: String) -> Endpoint {
        Endpoint {
            server,
            key,
            sessions: HashMap::new(),
        }
    }

    pub fn answer(&mut self, req: &Request<()>, body: &[u8]) -> HttpReply {
        let header = |name: &str| {
            req.headers()
                .get(name)
                .and_then(|v| v.to_str().ok())
                .map(str::trim)
        };
        if req.uri().path() != "/mcp" {
            return HttpReply::json(
                404,
                &json!({"error": "not found: the MCP endpoint is /mcp"}),
            );
        }
        if let Some(origin) = header("origin")
            && !loopback_origin(origin)
        {
            return HttpReply::rpc_error(
                403,
                None,
                -32000,
                "Forbidden: the Origin is not a loopback origin",
            );
        }
        let token = header("authorization")
            .and_then(|a| a.strip_prefix("Bearer "))
            .unwrap_or("");
        if !same_secret(token.as_bytes(), self.key.as_bytes()) {
            let mut r = HttpReply::rpc_error(
                401,
                None,
                -32000,
                "Unauthorized: send Authorization: Bearer KEY",
            );
            r.headers.push(("www-authenticate", "Bearer".into()));
            return r;
        }
        let now = Instant::now();
        let idle = self.server.idle;
        self.sessions
            .retain(|_, seen| now.duration_since(*seen) < idle);
        let session = header("mcp-session-id").map(str::to_string);
        match req.method().as_str() {
            "POST" => {}
            "DELETE" => {
                return match session {
                    Some(s) if self.sessions.remove(&s).is_some() => HttpReply::empty(200),
                    Some(_) => HttpReply::rpc_error(404, None, -32001, "Session not found"),
                    None => HttpReply::rpc_error(
                        400,
                        None,
                        -32000,
                        "Bad Request: Mcp-Session-Id header is required",
                    ),
                };
            }
            _ => {
                let mut r = HttpReply::rpc_error(
                    405,
                    None,
                    -32000,
                    "Method not allowed: POST a JSON-RPC message",
                );
                r.headers.push(("allow", "POST, DELETE".into()));
                return r;
            }
        }
        let value: Value = match serde_json::from_slice(body) {
            Ok(v) => v,
            Err(e) => {
                return HttpReply::rpc_error(
                    400,
                    None,
                    code::PARSE_ERROR,
                    &format!("Parse error: {e}"),
                );
            }
        };
        let raw_id = value.get("id").cloned();
        let msg = match Message::from_value(value) {
            Ok(m) => m,
            Err(e) => {
                return HttpReply::rpc_error(400, raw_id.as_ref(), code::INVALID_REQUEST, &e.0);
            }
        };
        let (method, params, is_request) = match &msg {
            Message::Request { method, params, .. } => (method.clone(), params.clone(), true),
            Message::Notification { method, params } => (method.clone(), params.clone(), false),
            _ => return HttpReply::empty(202), // a client's answer: nothing to do
        };
        match claimed_version(params.as_ref()).map(str::to_string) {
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
                    return mismatch("MCP-Protocol-Version must equal _meta's protocolVersion");
                }
                if is_request && header("mcp-method") != Some(method.as_str()) {
                    return mismatch("Mcp-Method must equal the body's method");
                }
                if method == methods::TOOLS_CALL {
                    let name = params
                        .as_ref()
                        .and_then(|p| p.get("name"))
                        .and_then(Value::as_str);
                    if header("mcp-name").and_then(decode_header).as_deref() != name {
                        return mismatch("Mcp-Name must equal params.name");
                    }
                }
                if !is_request {
                    return HttpReply::empty(202);
                }
                if method == methods::SUBSCRIPTIONS_LISTEN {
                    return listen_ack(raw_id.as_ref(), params.as_ref());
                }
                let reply = self.server.handle(msg, Era::Modern, None);
                let status = match &reply {
                    Some(Message::Error { error, .. }) => match error.code {
                        code::METHOD_NOT_FOUND => 404,
                        code::HEADER_MISMATCH
                        | code::UNSUPPORTED_PROTOCOL_VERSION
                        | code::MISSING_REQUIRED_CLIENT_CAPABILITY => 400,
                        code::INVALID_PARAMS if error.message.contains("_meta") => 400,
                        _ => 200,
                    },
                    _ => 200,
                };
                reply_json(status, reply)
            }
            None if header("mcp-protocol-version")
                .is_some_and(|v| Era::of_version(v) == Era::Modern) =>
            {
                // A modern version in the header, but no envelope in the body.
                HttpReply::rpc_error(
                    400,
                    raw_id.as_ref(),
                    code::INVALID_PARAMS,
                    "params._meta must carry io.modelcontextprotocol/protocolVersion and clientCapabilities",
                )
            }
            None => {
                // 2025-11-25: initialize opens a session; everything else needs it.
                if method == methods::INITIALIZE {
                    let id = crate::entropy::id().unwrap_or_default();
                    self.sessions.insert(id.clone(), now);
                    let mut r = reply_json(200, self.server.handle(msg, Era::Legacy, Some(&id)));
                    r.headers.push(("mcp-session-id", id));
                    return r;
                }
                let Some(s) = session else {
                    return HttpReply::rpc_error(
                        400,
                        raw_id.as_ref(),
                        -32000,
                        "Bad Request: Mcp-Session-Id header is required",
                    );
                };
                if !self.sessions.contains_key(&s) {
                    return HttpReply::rpc_error(404, raw_id.as_ref(), -32001, "Session not found");
                }
                self.sessions.insert(s.clone(), now);
                if !is_request {
                    return HttpReply::empty(202);
                }
                reply_json(200, self.server.handle(msg, Era::Legacy, Some(&s)))
            }
        }
    }
}

/// The first event of a `subscriptions/listen` stream: the acknowledgement, honouring the
/// list-changed types asked for (tai's lists do not change while it serves, so none will
/// follow) and no resource subscriptions (tai serves no resources).
fn listen_ack(id: Option<&Value>, params: Option<&Value>) -> HttpReply {
    let asked = params
        .and_then(|p| p.get("notifications"))
        .and_then(Value::as_object);
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

/// A connection's place in the request/response cycle.
enum Phase {
    Request(Reply<ureq_proto::server::state::RecvRequest>),
    Body(
        Reply<ureq_proto::server::state::RecvBody>,
        Box<Request<()>>,
        Vec<u8>,
    ),
    /// A `subscriptions/listen` stream held open (chunked SSE), with its last write.
    Listening(Reply<ureq_proto::server::state::SendBody>, Instant, Value),
    /// Answered; close once the output is written.
    Closing,
}

struct Conn {
    stream: TcpStream,
    input: Vec<u8>,
    output: Vec<u8>,
    phase: Phase,
    /// When the request now arriving began (its deadline), or the connection went idle.
    since: Instant,
}

fn new_reply() -> Option<Reply<ureq_proto::server::state::RecvRequest>> {
    Reply::new().ok()
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
            let mut chunk = vec![0u8; r.body.len().max(1) + 1024];
            while !body.is_finished() {
                let Ok((used, n)) = body.write(&r.body[at..], &mut chunk) else {
                    return true;
                };
                out.extend_from_slice(&chunk[..n]);
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
    let mut buf = vec![0u8; 16 * 1024];
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

/// Serve until SIGINT or SIGTERM.
pub fn serve(endpoint: &mut Endpoint, listener: TcpListener) -> std::io::Result<()> {
    listener.set_nonblocking(true)?;
    let mut conns: Vec<Conn> = Vec::new();
    while !crate::sigint::interrupted() {
        // Deadlines: a request that is not whole in time, or a connection idle too long.
        let now = Instant::now();
        for c in &mut conns {
            // Listen streams stay open; a comment every KEEPALIVE keeps proxies from cutting them.
            if let Phase::Listening(body, last, _) = &mut c.phase
                && now.duration_since(*last) >= KEEPALIVE
            {
                write_chunk(body, b": keepalive\n\n", &mut c.output);
                *last = now;
            }
        }
        conns.retain(|c| {
            if matches!(c.phase, Phase::Listening(..)) {
                return true;
            }
            let waiting = matches!(c.phase, Phase::Body(..))
                || (matches!(c.phase, Phase::Request(_)) && !c.input.is_empty());
            let limit = if waiting {
                REQUEST_DEADLINE
            } else {
                IDLE_DEADLINE
            };
            now.duration_since(c.since) < limit || !c.output.is_empty()
        });
        let mut fds = vec![PollFd::new(listener.as_fd(), PollFlags::POLLIN)];
        for c in &conns {
            let mut ev = PollFlags::POLLIN;
            if !c.output.is_empty() {
                ev |= PollFlags::POLLOUT;
            }
            fds.push(PollFd::new(c.stream.as_fd(), ev));
        }
        if poll(&mut fds, PollTimeout::from(250u16)).is_err() {
            continue; // EINTR: check the stop flag
        }
        let ready: Vec<bool> = fds
            .iter()
            .map(|f| f.revents().is_some_and(|r| !r.is_empty()))
            .collect();
        drop(fds);
        // Connections accepted below were not polled this round.
        let polled = conns.len();
        if ready[0] {
            while let Ok((stream, _)) = listener.accept() {
                if conns.len() >= MAX_CONNECTIONS {
                    let mut s = stream;
                    let _ = s.write_all(&status_only(503, "Service Unavailable"));
                    continue;
                }
                let _ = stream.set_nonblocking(true);
                let _ = stream.set_nodelay(true);
                if let Some(reply) = new_reply() {
                    conns.push(Conn {
                        stream,
                        input: Vec::new(),
                        output: Vec::new(),
                        phase: Phase::Request(reply),
                        since: Instant::now(),
                    });
                }
            }
        }
        let mut dead = Vec::new();
        for (i, c) in conns.iter_mut().take(polled).enumerate() {
            if !ready[i + 1] {
                continue;
            }
            if !pump(c, endpoint) {
                dead.push(i);
            }
        }
        for i in dead.into_iter().rev() {
            conns.remove(i);
        }
    }
    // Stopping: end each listen stream gracefully (its response, then the last chunk).
    for c in &mut conns {
        if let Phase::Listening(body, _, id) = &mut c.phase {
            let _ = c.stream.set_nonblocking(false);
            let _ = c.stream.set_write_timeout(Some(Duration::from_secs(1)));
            let end = json!({"jsonrpc": "2.0", "id": id,
                "result": {"resultType": "complete", "_meta": {"io.modelcontextprotocol/subscriptionId": id}}});
            let mut out = std::mem::take(&mut c.output);
            write_chunk(
                body,
                format!("event: message\ndata: {end}\n\n").as_bytes(),
                &mut out,
            );
            write_chunk(body, &[], &mut out);
            let _ = c.stream.write_all(&out);
        }
    }
    Ok(())
}

enum Flushed {
    All,
    /// The socket is full: wait for POLLOUT.
    Blocked,
    Dead,
}

/// Write as much pending output as the socket takes.
fn flush(c: &mut Conn) -> Flushed {
    while !c.output.is_empty() {
        match c.stream.write(&c.output) {
            Ok(0) => return Flushed::Dead,
            Ok(n) => {
                c.output.drain(..n);
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
    // Write what is pending first.
    match flush(c) {
        Flushed::All => {}
        Flushed::Blocked => return true,
        Flushed::Dead => return false,
    }
    if matches!(c.phase, Phase::Closing) {
        return false;
    }
    let mut buf = [0u8; 16 * 1024];
    loop {
        match c.stream.read(&mut buf) {
            Ok(0) => return false,
            Ok(n) => {
                if c.input.is_empty() && matches!(c.phase, Phase::Request(_)) {
                    c.since = Instant::now(); // a new request starts its deadline
                }
                c.input.extend_from_slice(&buf[..n]);
                if n < buf.len() {
                    break;
                }
            }
            Err(e) if e.kind() == ErrorKind::WouldBlock => break,
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(_) => return false,
        }
    }
    advance(c, endpoint);
    // Flush the answer right away when the socket takes it.
    match flush(c) {
        Flushed::All => {}
        Flushed::Blocked => return true,
        Flushed::Dead => return false,
    }
    !matches!(c.phase, Phase::Closing)
}

/// Run the state machine over the buffered input, answering whole requests in order.
fn advance(c: &mut Conn, endpoint: &mut Endpoint) {
    loop {
        let phase = std::mem::replace(&mut c.phase, Phase::Closing);
        match phase {
            Phase::Closing => return,
            Phase::Listening(body, at, id) => {
                // The client sends nothing more on a listen stream; anything it does is dropped.
                c.input.clear();
                c.phase = Phase::Listening(body, at, id);
                return;
            }
            Phase::Request(mut reply) => {
                let parsed = reply.try_request(&c.input);
                let (used, req) = match parsed {
                    Ok((used, Some(req))) => (used, req),
                    Ok((_, None)) => {
                        if c.input.len() > MAX_HEADER_BYTES {
                            c.output
                                .extend(status_only(431, "Request Header Fields Too Large"));
                            return;
                        }
                        c.phase = Phase::Request(reply);
                        return;
                    }
                    Err(_) => {
                        c.output.extend(status_only(400, "Bad Request"));
                        return;
                    }
                };
                c.input.drain(..used);
                let length = req
                    .headers()
                    .get("content-length")
                    .and_then(|v| v.to_str().ok())
                    .and_then(|v| v.parse::<u64>().ok());
                if length.is_some_and(|n| n > MCP_HTTP_MAX_BODY as u64) {
                    // Refused before the body is read.
                    c.output.extend(status_only(413, "Payload Too Large"));
                    return;
                }
                match reply.proceed() {
                    Some(RecvRequestResult::RecvBody(body)) => {
                        c.phase = Phase::Body(body, Box::new(req), Vec::new())
                    }
                    Some(RecvRequestResult::Send100(s)) => {
                        let mut out = [0u8; 256];
                        match s.accept(&mut out) {
                            Ok((n, body)) => {
                                c.output.extend_from_slice(&out[..n]);
                                c.phase = Phase::Body(body, Box::new(req), Vec::new());
                            }
                            Err(_) => return,
                        }
                    }
                    Some(RecvRequestResult::ProvideResponse(provide)) => {
                        let answer = endpoint.answer(&req, &[]);
                        if !finish(c, provide, answer) {
                            return;
                        }
                    }
                    None => return,
                }
            }
            Phase::Body(mut body, req, mut got) => {
                let mut out = vec![0u8; 64 * 1024];
                loop {
                    match body.read(&c.input, &mut out) {
                        Ok((used, n)) => {
                            c.input.drain(..used);
                            got.extend_from_slice(&out[..n]);
                            if got.len() > MCP_HTTP_MAX_BODY {
                                c.output.extend(status_only(413, "Payload Too Large"));
                                return;
                            }
                            if body.is_ended() || (used == 0 && n == 0) {
                                break;
                            }
                        }
                        Err(_) => {
                            c.output.extend(status_only(400, "Bad Request"));
                            return;
                        }
                    }
                }
                if !body.is_ended() {
                    c.phase = Phase::Body(body, req, got);
                    return;
                }
                let Ok(provide) = body.proceed() else { return };
                let answer = endpoint.answer(&req, &got);
                if !finish(c, provide, answer) {
                    return;
                }
            }
        }
        if c.input.is_empty() {
            return;
        }
    }
}

/// Start a listen stream: headers (no length: chunked) and the first event.
fn open_stream(
    c: &mut Conn,
    provide: Reply<ureq_proto::server::state::ProvideResponse>,
    answer: HttpReply,
) -> bool {
    let Some(SendResponseResult::SendBody(mut body)) =
        write_head(provide, answer.status, &answer.headers, None, &mut c.output)
    else {
        return false;
    };
    if !write_chunk(&mut body, &answer.body, &mut c.output) {
        return false;
    }
    c.phase = Phase::Listening(body, Instant::now(), answer.listen.unwrap_or(Value::Null));
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

/// Encode an answer; set up for the next request on the same connection.
fn finish(
    c: &mut Conn,
    provide: Reply<ureq_proto::server::state::ProvideResponse>,
    answer: HttpReply,
) -> bool {
    if answer.listen.is_some() {
        // The connection now carries the stream (or closes if it could not start).
        open_stream(c, provide, answer);
        return false;
    }
    let close = encode(provide, answer, &mut c.output);
    c.since = Instant::now();
    match (close, new_reply()) {
        (false, Some(r)) => {
            c.phase = Phase::Request(r);
            true
        }
        _ => false,
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
}
