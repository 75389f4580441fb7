//! `tai --serve-mcp-stdio`: the server over newline-delimited stdio, for hosts that launch
//! servers as child processes. The first request decides the era (`initialize` → legacy,
//! a modern `_meta` → stateless); bad input gets an error and the loop keeps reading.
//! A line over `MCP_HTTP_MAX_BODY` is dropped as it streams in (never held whole) and
//! answered with a JSON-RPC error. Stdout carries only MCP messages; diagnostics go to stderr.

use std::io::{Read, Write};

use super::{McpServer, claimed_version};
use crate::jsonrpc::{ErrorObject, Message, code};
use crate::mcp::caps::MCP_HTTP_MAX_BODY;
use crate::mcp::era::Era;
use crate::mcp::methods;
use crate::mcp::ndjson::{Frame, LineSplitter};

/// Serve until stdin closes.
pub fn serve(server: &mut McpServer) -> std::io::Result<()> {
    let mut stdin = std::io::stdin().lock();
    let mut out = std::io::stdout().lock();
    let mut era: Option<Era> = None;
    let session = format!("stdio-{}", std::process::id());
    let mut lines = LineSplitter::new(MCP_HTTP_MAX_BODY);
    let mut buf = vec![0u8; 64 * 1024];
    let mut frames = Vec::new();
    loop {
        let n = match stdin.read(&mut buf) {
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        // At the end of input, a last line without its newline still counts.
        lines.feed(if n == 0 { b"\n" } else { &buf[..n] }, &mut frames);
        for frame in frames.drain(..) {
            let reply = match frame {
                Frame::TooLong(size) => Some(Message::Error {
                    id: None,
                    error: ErrorObject::new(
                        code::INVALID_REQUEST,
                        format!(
                            "a message of {size} bytes is over MCP_HTTP_MAX_BODY ({MCP_HTTP_MAX_BODY} bytes); it was dropped unread"
                        ),
                    ),
                }),
                Frame::Line(line) => answer(server, &line, &mut era, &session),
            };
            if let Some(r) = reply {
                out.write_all(&r.to_bytes())?;
                out.write_all(b"\n")?;
                out.flush()?;
            }
        }
        if n == 0 {
            return Ok(());
        }
    }
}

/// The answer to one line, deciding the connection's era on its first request.
fn answer(
    server: &mut McpServer,
    line: &[u8],
    era: &mut Option<Era>,
    session: &str,
) -> Option<Message> {
    match Message::parse(line) {
        Err(e) => Some(Message::Error {
            id: None,
            error: ErrorObject::new(
                if e.0.contains("batch") {
                    code::INVALID_REQUEST
                } else if e.0.starts_with("not JSON") {
                    code::PARSE_ERROR
                } else {
                    code::INVALID_REQUEST
                },
                e.0,
            ),
        }),
        Ok(msg) => {
            let claimed = match &msg {
                Message::Request { params, .. } | Message::Notification { params, .. } => {
                    claimed_version(params.as_ref()).is_some()
                }
                _ => false,
            };
            let is_request = matches!(msg, Message::Request { .. });
            let this = if claimed { Era::Modern } else { Era::Legacy };
            match *era {
                None if is_request => {
                    *era = Some(this);
                    server.handle(msg, this, Some(session))
                }
                // Before the first request: notifications pass, in the era they claim.
                None => server.handle(msg, this, Some(session)),
                Some(Era::Modern) if !claimed && msg.method() == Some(methods::INITIALIZE) => {
                    match msg {
                        Message::Request { id, .. } => Some(Message::Error {
                            id: Some(id),
                            error: ErrorObject::new(
                                code::UNSUPPORTED_PROTOCOL_VERSION,
                                "this connection speaks 2026-07-28",
                            )
                            .with_data(serde_json::json!({"supported": ["2026-07-28"]})),
                        }),
                        _ => None,
                    }
                }
                Some(Era::Legacy) if claimed && is_request => match msg {
                    Message::Request { id, .. } => Some(Message::Error {
                        id: Some(id),
                        error: ErrorObject::new(
                            code::INVALID_REQUEST,
                            "this connection began with initialize (2025-11-25)",
                        ),
                    }),
                    _ => None,
                },
                Some(e) => server.handle(msg, e, Some(session)),
            }
        }
    }
}
