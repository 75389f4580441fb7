//! `tai --serve-mcp-stdio`: the server over newline-delimited stdio, for hosts that launch
//! servers as child processes. The first request decides the era (`initialize` → legacy,
//! a modern `_meta` → stateless); bad input gets an error and the loop keeps reading.
//! Stdout carries only MCP messages; diagnostics go to stderr.

use std::io::{BufRead, Write};

use super::{McpServer, claimed_version};
use crate::jsonrpc::{ErrorObject, Message, code};
use crate::mcp::era::Era;
use crate::mcp::methods;

/// Serve until stdin closes.
pub fn serve(server: &mut McpServer) -> std::io::Result<()> {
    let stdin = std::io::stdin();
    let mut out = std::io::stdout().lock();
    let mut era: Option<Era> = None;
    let session = format!("stdio-{}", std::process::id());
    for line in stdin.lock().split(b'\n') {
        let line = line?;
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let reply = match Message::parse(&line) {
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
                match era {
                    None if is_request => {
                        era = Some(this);
                        server.handle(msg, this, Some(&session))
                    }
                    // Before the first request: notifications pass, in the era they claim.
                    None => server.handle(msg, this, Some(&session)),
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
                    Some(e) => server.handle(msg, e, Some(&session)),
                }
            }
        };
        if let Some(r) = reply {
            out.write_all(&r.to_bytes())?;
            out.write_all(b"\n")?;
            out.flush()?;
        }
    }
    Ok(())
}
