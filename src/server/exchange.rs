//! One connection's HTTP/1.1, driven by bytes alone (no socket), so the poll loop and
//! the fuzz target run the same path: `ureq-proto`'s sans-IO server state machine frames
//! requests, the endpoint admits and answers them in order, and a refused one closes the
//! exchange without its body ever being buffered. A request in a worker holds the
//! exchange (`Phase::Waiting`) until the loop delivers its answer.

use std::time::Instant;

use serde_json::{Value, json};
use ureq_proto::http::{Request, Response};
use ureq_proto::server::{RecvRequestResult, Reply, SendResponseResult};

use super::endpoint::{Answer, Endpoint, HttpReply};
use super::http::Limits;
use crate::mcp::caps::MCP_HTTP_MAX_BODY;

pub(super) use crate::limits::serve::MAX_HEADER_BYTES;

/// A connection's place in the request/response cycle.
pub(super) enum Phase {
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
    pub(super) phase: Phase,
    /// A request here passed admission: the connection holds an authenticated slot.
    pub admitted: bool,
    /// When the request now arriving began, or the connection went idle.
    pub(super) since: Instant,
    pub(super) outbox: usize,
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
    pub(super) fn receiving(&self) -> bool {
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
    pub(super) fn advance(&mut self, endpoint: &mut Endpoint) {
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
                    loop {
                        // Decoded straight into `got`: a body decodes to no more bytes
                        // than arrived, so room for the input is enough (no zeroed 16 KiB
                        // scratch per request and no second copy).
                        let before = got.len();
                        got.resize(before + self.input.len().clamp(64, 16 * 1024), 0);
                        let read = body.read(&self.input, &mut got[before..]);
                        got.truncate(before + read.as_ref().map_or(0, |&(_, n)| n));
                        match read {
                            Ok((used, n)) => {
                                self.input.drain(..used);
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
    pub(super) fn end_stream(&mut self) {
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
    // A head is a few hundred bytes; a longer one takes more rounds.
    let mut buf = [0u8; 1024];
    loop {
        let n = send.write(&mut buf).ok()?;
        out.extend_from_slice(&buf[..n]);
        if send.is_finished() {
            return Some(send.proceed());
        }
    }
}

pub(super) fn status_only(status: u16, msg: &str) -> Vec<u8> {
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

/// One chunk of a stream's body into `out`.
pub(super) fn write_chunk(
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
