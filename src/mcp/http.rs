//! `McpHttpTransport`: MCP over Streamable HTTP, one POST per message (ureq, no threads).
//!
//! A request's answer is one JSON body or an SSE stream read incrementally by
//! `http::sse`; notifications and server requests on the stream arrive before the
//! response, and the stream is released (closed) as soon as the response has arrived, so
//! a server that serves one connection at a time is never left waiting on it. Bodies over
//! `MCP_HTTP_MAX_BODY` are refused in both directions without being buffered whole. A
//! response stream that ends after an event id and before the response is resumed with
//! GET and `Last-Event-ID` after the stream's `retry` delay, within the call's deadline.
//! DELETE is never sent. With an `oauth::OAuth` attached, a 401 (or 403
//! `insufficient_scope`) runs the authorization flow and the request is sent again with
//! the new token.

use std::collections::VecDeque;
use std::io::Read;
use std::time::Duration;

use serde_json::Value;

use super::caps::{MCP_CONNECT_TIMEOUT, MCP_HTTP_MAX_BODY};
use super::era::Era;
use super::transport::{Result, Transport, TransportError};
use crate::deadline::Deadline;
use crate::http::sse;
use crate::jsonrpc::Message;
use crate::limits::{
    MCP_HTTP_DEFAULT_RETRY as DEFAULT_RETRY, MCP_HTTP_ERROR_BODY_MAX,
    MCP_HTTP_MAX_RESUMPTIONS as MAX_RESUMPTIONS,
};

/// What to dial.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HttpSpec {
    pub url: String,
    /// Sent on every request (values may be secrets: never shown).
    pub headers: Vec<(String, String)>,
}

/// The answer to the request in flight (one per transport, so its size does not matter).
#[allow(clippy::large_enum_variant)]
enum Incoming {
    None,
    One(Message),
    Stream {
        reader: ureq::BodyReader<'static>,
        parser: sse::Parser,
        queue: VecDeque<Message>,
        read: usize,
        /// A response or error arrived on this stream.
        answered: bool,
        /// The last event id seen (where a resumption starts).
        last_id: Option<String>,
        resumed: usize,
    },
    /// The stream carried its response and was released (closed at once, so a server
    /// that serves one connection at a time goes on); what it carried is still to be read.
    Released(VecDeque<Message>),
}

pub struct McpHttpTransport {
    agent: ureq::Agent,
    spec: HttpSpec,
    session: Option<String>,
    protocol: Option<(Era, String)>,
    incoming: Incoming,
    /// `Mcp-Param-*` headers for the next request.
    next_headers: Vec<(String, String)>,
    /// The OAuth authorizer, for servers that want the MCP authorization flow.
    oauth: Option<super::oauth::OAuth>,
}

/// A header value as `Mcp-Name` and `Mcp-Param-*` want it: plain visible ASCII (spaces
/// inside, none at the ends) as is, anything else in the `=?base64?...?=` sentinel form.
pub fn header_value(v: &str) -> String {
    let plain = v.bytes().all(|b| (0x20..0x7f).contains(&b))
        && !v.starts_with(' ')
        && !v.ends_with(' ')
        && !v.starts_with("=?base64?");
    if plain {
        v.to_string()
    } else {
        format!("=?base64?{}?=", crate::base64::standard(v.as_bytes()))
    }
}

fn map_err(url: &str, e: ureq::Error) -> TransportError {
    if crate::sigint::interrupted() {
        return TransportError::Interrupted; // Ctrl-C cut the wait short
    }
    let host = url
        .split("://")
        .nth(1)
        .and_then(|r| r.split(['/', '?']).next())
        .unwrap_or(url);
    match e {
        ureq::Error::Timeout(_) => TransportError::Timeout,
        ureq::Error::HostNotFound => {
            TransportError::Io(format!("cannot resolve host {host} (DNS)"))
        }
        ureq::Error::ConnectionFailed => TransportError::Io(format!(
            "cannot connect to {url}: nothing is listening there"
        )),
        ureq::Error::Io(io) if io.kind() == std::io::ErrorKind::TimedOut => TransportError::Timeout,
        ureq::Error::Io(io) if io.kind() == std::io::ErrorKind::ConnectionRefused => {
            TransportError::Io(format!("cannot connect to {url}: connection refused"))
        }
        ureq::Error::Io(io)
            if url.starts_with("https://")
                && matches!(
                    io.kind(),
                    std::io::ErrorKind::UnexpectedEof
                        | std::io::ErrorKind::InvalidData
                        | std::io::ErrorKind::ConnectionReset
                ) =>
        {
            TransportError::Io(format!(
                "TLS with {host} failed ({io}): does it serve https on that port?"
            ))
        }
        ureq::Error::Io(io) => TransportError::Io(format!("{url}: {io}")),
        ureq::Error::BadUri(m) => TransportError::Io(format!("bad URL {url:?}: {m}")),
        ureq::Error::Tls(m) => TransportError::Io(format!("TLS with {host} failed: {m}")),
        ureq::Error::Rustls(r) => TransportError::Io(format!("TLS with {host} failed: {r}")),
        other => TransportError::Io(format!("{url}: {other}")),
    }
}

fn read_err(e: std::io::Error) -> TransportError {
    if crate::sigint::interrupted() {
        return TransportError::Interrupted; // Ctrl-C cut the wait short
    }
    if e.kind() == std::io::ErrorKind::TimedOut {
        return TransportError::Timeout;
    }
    // ureq wraps its own errors (timeouts among them) in io::Error.
    match e.into_inner().map(|inner| inner.downcast::<ureq::Error>()) {
        Some(Ok(ureq_err)) if matches!(*ureq_err, ureq::Error::Timeout(_)) => {
            TransportError::Timeout
        }
        Some(Ok(ureq_err)) => TransportError::Io(format!("reading the response: {ureq_err}")),
        Some(Err(other)) => TransportError::Io(format!("reading the response: {other}")),
        None => TransportError::Io("reading the response failed".into()),
    }
}

/// Read a whole body, refusing it once it passes `max`.
fn read_capped(reader: &mut impl Read, max: usize) -> Result<Vec<u8>> {
    let mut body = Vec::new();
    reader
        .take(max as u64 + 1)
        .read_to_end(&mut body)
        .map_err(read_err)?;
    if body.len() > max {
        return Err(TransportError::TooLarge(body.len()));
    }
    Ok(body)
}

/// GET the response stream again from `last_id` (SSE resumption). A free function over
/// the transport's fields, so it can run while the stream being resumed is borrowed.
fn resume(
    agent: &ureq::Agent,
    spec: &HttpSpec,
    session: Option<&str>,
    protocol: Option<&(Era, String)>,
    oauth: Option<&mut super::oauth::OAuth>,
    last_id: &str,
    deadline: Deadline,
) -> Result<ureq::BodyReader<'static>> {
    let left = deadline.timeout().ok_or(TransportError::Timeout)?;
    let mut req = agent
        .get(&spec.url)
        .header("Accept", "text/event-stream")
        .header("Last-Event-ID", last_id);
    for (k, v) in &spec.headers {
        req = req.header(k.as_str(), v.as_str());
    }
    if let Some(id) = session {
        req = req.header("Mcp-Session-Id", id);
    }
    if let Some((_, version)) = protocol {
        req = req.header("MCP-Protocol-Version", version.as_str());
    }
    if let Some(bearer) = oauth.and_then(|o| o.bearer(&spec.url, deadline)) {
        req = req.header("Authorization", bearer);
    }
    let resp = req
        .config()
        .timeout_global(Some(left))
        .build()
        .call()
        .map_err(|e| map_err(&spec.url, e))?;
    let status = resp.status().as_u16();
    if !(200..300).contains(&status) {
        return Err(TransportError::Http {
            status,
            body: "resuming the response stream failed".into(),
        });
    }
    Ok(resp.into_body().into_reader())
}

impl McpHttpTransport {
    pub fn new(spec: &HttpSpec) -> McpHttpTransport {
        McpHttpTransport {
            agent: crate::http::agent::agent(MCP_CONNECT_TIMEOUT),
            spec: spec.clone(),
            session: None,
            protocol: None,
            incoming: Incoming::None,
            next_headers: Vec::new(),
            oauth: None,
        }
    }

    /// A transport that answers authorization challenges with `oauth`.
    pub fn with_oauth(spec: &HttpSpec, oauth: super::oauth::OAuth) -> McpHttpTransport {
        McpHttpTransport {
            oauth: Some(oauth),
            ..McpHttpTransport::new(spec)
        }
    }

    pub fn session_id(&self) -> Option<&str> {
        self.session.as_deref()
    }

    fn post(
        &mut self,
        msg: &Message,
        deadline: Deadline,
    ) -> Result<ureq::http::Response<ureq::Body>> {
        let body = msg.to_bytes();
        if body.len() > MCP_HTTP_MAX_BODY {
            return Err(TransportError::TooLarge(body.len()));
        }
        let left = deadline.timeout().ok_or(TransportError::Timeout)?;
        let mut req = self
            .agent
            .post(&self.spec.url)
            .header("Content-Type", "application/json")
            .header("Accept", "application/json, text/event-stream");
        for (k, v) in &self.spec.headers {
            req = req.header(k.as_str(), v.as_str());
        }
        if let Some(id) = &self.session {
            req = req.header("Mcp-Session-Id", id.as_str());
        }
        for (k, v) in self.next_headers.clone() {
            req = req.header(k, v);
        }
        if let Some(bearer) = self
            .oauth
            .as_mut()
            .and_then(|o| o.bearer(&self.spec.url, deadline))
        {
            req = req.header("Authorization", bearer);
        }
        if let Some((era, version)) = &self.protocol {
            req = req.header("MCP-Protocol-Version", version.as_str());
            if era.routing_headers()
                && let Message::Request { method, params, .. } = msg
            {
                req = req.header("Mcp-Method", method.as_str());
                let name = params
                    .as_ref()
                    .and_then(|p| p.get("name"))
                    .and_then(Value::as_str);
                if let (true, Some(name)) = (method == super::methods::TOOLS_CALL, name) {
                    req = req.header("Mcp-Name", header_value(name));
                }
            }
        }
        req.config()
            .timeout_global(Some(left))
            .build()
            .send(&body[..])
            .map_err(|e| map_err(&self.spec.url, e))
    }
}

impl Transport for McpHttpTransport {
    fn send(&mut self, msg: &Message, deadline: Deadline) -> Result<()> {
        let is_request = matches!(msg, Message::Request { .. });
        if is_request {
            self.incoming = Incoming::None;
        }
        let mut authorizations = 0;
        let resp = loop {
            let resp = self.post(msg, deadline)?;
            let status = resp.status().as_u16();
            if !(status == 401 || status == 403) || self.oauth.is_none() {
                break resp;
            }
            let www: Vec<&str> = resp
                .headers()
                .get_all("www-authenticate")
                .iter()
                .filter_map(|v| v.to_str().ok())
                .collect();
            let www = www.join(", ");
            drop(resp);
            let url = self.spec.url.clone();
            if let Some(o) = self.oauth.as_mut() {
                o.challenged(&url, status, &www, authorizations, deadline)
                    .map_err(TransportError::Io)?;
            }
            authorizations += 1;
        };
        self.next_headers.clear();
        let status = resp.status().as_u16();
        if let Some(id) = resp
            .headers()
            .get("mcp-session-id")
            .and_then(|v| v.to_str().ok())
        {
            self.session = Some(id.to_string());
        }
        let is_sse = resp
            .headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .is_some_and(|ct| {
                ct.trim_start()
                    .to_ascii_lowercase()
                    .starts_with("text/event-stream")
            });
        let mut reader = resp.into_body().into_reader();
        if status == 404 && self.session.is_some() {
            return Err(TransportError::SessionExpired);
        }
        if status == 401 || status == 403 {
            // Credentials, not protocol: never read as evidence of an era.
            let body = read_capped(&mut reader, MCP_HTTP_ERROR_BODY_MAX).unwrap_or_default();
            let snippet: String = String::from_utf8_lossy(&body)
                .trim()
                .chars()
                .take(200)
                .collect();
            return Err(TransportError::Http {
                status,
                body: snippet,
            });
        }
        if !(200..300).contains(&status) {
            // An error status may still carry a JSON-RPC error (e.g. 400 with -32022).
            let body = read_capped(&mut reader, MCP_HTTP_ERROR_BODY_MAX).unwrap_or_default();
            if let Ok(m @ Message::Error { .. }) = Message::parse(&body)
                && is_request
            {
                self.incoming = Incoming::One(m);
                return Ok(());
            }
            let text = String::from_utf8_lossy(&body);
            let snippet: String = text.trim().chars().take(200).collect();
            return Err(TransportError::Http {
                status,
                body: snippet,
            });
        }
        if !is_request {
            // A notification or a response: 202 (or 200) and nothing to read.
            let _ = read_capped(&mut reader, MCP_HTTP_ERROR_BODY_MAX);
            return Ok(());
        }
        if is_sse {
            self.incoming = Incoming::Stream {
                reader,
                parser: sse::Parser::new(),
                queue: VecDeque::new(),
                read: 0,
                answered: false,
                last_id: None,
                resumed: 0,
            };
        } else {
            let body = read_capped(&mut reader, MCP_HTTP_MAX_BODY)?;
            if body.iter().all(u8::is_ascii_whitespace) {
                return Err(TransportError::Http {
                    status,
                    body: "an empty reply to a request".into(),
                });
            }
            let m = Message::parse(&body).map_err(|e| {
                TransportError::Io(format!("the server's reply is not JSON-RPC: {}", e.0))
            })?;
            self.incoming = Incoming::One(m);
        }
        Ok(())
    }

    fn recv(&mut self, deadline: Deadline) -> Result<Option<Message>> {
        // The request's own timeout (set in `send` from the same deadline) bounds the reads.
        match &mut self.incoming {
            Incoming::None => Ok(None),
            Incoming::One(_) => match std::mem::replace(&mut self.incoming, Incoming::None) {
                Incoming::One(m) => Ok(Some(m)),
                _ => Ok(None),
            },
            Incoming::Released(queue) => {
                let next = queue.pop_front();
                if queue.is_empty() {
                    self.incoming = Incoming::None;
                }
                Ok(next)
            }
            Incoming::Stream {
                reader,
                parser,
                queue,
                read,
                answered,
                last_id,
                resumed,
            } => loop {
                if let Some(m) = queue.pop_front() {
                    if matches!(m, Message::Response { .. } | Message::Error { .. }) {
                        *answered = true;
                    }
                    return Ok(Some(m));
                }
                let mut buf = [0u8; 16 * 1024];
                let n = match reader.read(&mut buf) {
                    Ok(n) => n,
                    Err(e) => {
                        self.incoming = Incoming::None;
                        return Err(read_err(e));
                    }
                };
                if n == 0 {
                    parser.finish();
                    // Closed before the response, after an event id: resume (SEP-1699).
                    if let (false, Some(id), true) =
                        (*answered, last_id.clone(), *resumed < MAX_RESUMPTIONS)
                    {
                        let wait = parser
                            .retry_ms()
                            .map_or(DEFAULT_RETRY, Duration::from_millis);
                        let fresh = if wait < deadline.remaining() {
                            crate::clock::sleep(wait);
                            resume(
                                &self.agent,
                                &self.spec,
                                self.session.as_deref(),
                                self.protocol.as_ref(),
                                self.oauth.as_mut(),
                                &id,
                                deadline,
                            )
                        } else {
                            Err(TransportError::Timeout)
                        };
                        match fresh {
                            Ok(r) => {
                                *reader = r;
                                *resumed += 1;
                                continue;
                            }
                            Err(e) => {
                                self.incoming = Incoming::None;
                                return Err(e);
                            }
                        }
                    }
                    self.incoming = Incoming::None;
                    return Ok(None);
                }
                *read += n;
                if *read > MCP_HTTP_MAX_BODY {
                    let total = *read;
                    self.incoming = Incoming::None;
                    return Err(TransportError::TooLarge(total));
                }
                let mut events = Vec::new();
                parser.feed(&buf[..n], &mut events);
                let mut answered = false;
                for e in events {
                    if e.id.is_some() {
                        *last_id = e.id.clone();
                    }
                    // Only `message` events carry JSON-RPC; empty data is a priming event.
                    if e.event == "message"
                        && !e.data.trim().is_empty()
                        && let Ok(m) = Message::parse(e.data.as_bytes())
                    {
                        answered |= matches!(m, Message::Response { .. } | Message::Error { .. });
                        queue.push_back(m);
                    }
                }
                if answered {
                    // A request's stream ends with its response: nothing more is awaited on
                    // it, so it is dropped now rather than held open until the next request.
                    let rest = std::mem::take(queue);
                    self.incoming = Incoming::Released(rest);
                    return self.recv(deadline);
                }
            },
        }
    }

    fn set_protocol(&mut self, protocol: Option<(Era, String)>) {
        if protocol.as_ref().is_none_or(|(era, _)| !era.has_sessions()) {
            self.session = None;
        }
        self.protocol = protocol;
    }

    fn set_request_headers(&mut self, headers: Vec<(String, String)>) {
        self.next_headers = headers;
    }

    fn abandon(&mut self) {
        // Dropping an unread body closes its connection: the 2026 way to cancel.
        self.incoming = Incoming::None;
    }

    fn is_stream(&self) -> bool {
        false
    }

    fn close(&mut self) {
        self.incoming = Incoming::None;
        self.session = None;
    }

    fn oauth(&mut self) -> Option<&mut super::oauth::OAuth> {
        self.oauth.as_mut()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_values() {
        assert_eq!(header_value("execute_sql"), "execute_sql");
        assert_eq!(header_value("us west 1"), "us west 1");
        assert_eq!(header_value(""), "");
        assert_eq!(header_value("\tindented"), "=?base64?CWluZGVudGVk?=");
        assert_eq!(header_value("héllo"), "=?base64?aMOpbGxv?=");
        assert_eq!(header_value(" lead"), "=?base64?IGxlYWQ=?=");
        assert_eq!(header_value("a\nb"), "=?base64?YQpi?=");
        assert_eq!(header_value("=?base64?x?="), "=?base64?PT9iYXNlNjQ/eD89?=");
    }
}
