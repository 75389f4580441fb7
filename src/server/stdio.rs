//! `tai --serve-mcp-stdio`: the server over newline-delimited stdio, for hosts that launch
//! servers as child processes. The first request decides the era (`initialize` → legacy,
//! a modern `_meta` → stateless); bad input gets an error and the loop keeps reading.
//! A line over `MCP_HTTP_MAX_BODY` is dropped as it streams in (never held whole) and
//! answered with a JSON-RPC error. Stdout carries only MCP messages; diagnostics go to stderr.

use std::collections::VecDeque;
use std::io::{Read, Write};
use std::os::fd::AsFd;
use std::time::Instant;

use nix::poll::{PollFd, PollFlags, PollTimeout, poll};

use super::worker::{Job, Pool};
use super::{McpServer, conversation_key, runs_long};
use crate::jsonrpc::{ErrorObject, Id, Message, code};
use crate::mcp::caps::MCP_HTTP_MAX_BODY;
use crate::mcp::era::{self, Era, MODERN_VERSION};
use crate::mcp::methods;
use crate::mcp::ndjson::{Frame, LineSplitter};

/// The longest the loop sleeps in `poll` before it checks the workers' deadlines.
const POLL_ROUND_MS: u16 = 100;

/// A long call waiting for a worker (the cap is reached, or its conversation is busy).
struct Queued {
    msg: Message,
    era: Era,
    conversation: Option<String>,
}

/// Serve until stdin closes and every call under way has been answered. Long calls run
/// in `pool`'s workers (beyond its cap, or behind a turn on the same conversation, they
/// queue), so their answers may come out of order; everything else is answered at once.
pub fn serve(server: &mut McpServer, mut pool: Pool<()>) -> std::io::Result<()> {
    let stdin = std::io::stdin();
    let mut input = stdin.lock();
    let mut out = std::io::stdout().lock();
    let mut era: Option<Era> = None;
    // Random, not the pid: conversations outlive the process in the vault.
    let session = format!("stdio-{}", crate::entropy::id().unwrap_or_default());
    let mut lines = LineSplitter::new(MCP_HTTP_MAX_BODY);
    let mut buf = vec![0u8; 64 * 1024];
    let mut frames = Vec::new();
    let mut queue: VecDeque<Queued> = VecDeque::new();
    let mut open = true;
    let write = |out: &mut std::io::StdoutLock<'_>, m: &Message| -> std::io::Result<()> {
        out.write_all(&m.to_bytes())?;
        out.write_all(b"\n")?;
        out.flush()
    };
    let result = loop {
        if !open && queue.is_empty() && pool.pids().is_empty() {
            break Ok(());
        }
        let mut stdin_ready = false;
        {
            let mut fds = Vec::new();
            if open {
                fds.push(PollFd::new(stdin.as_fd(), PollFlags::POLLIN));
            }
            for (fd, ev) in pool.poll_fds() {
                fds.push(PollFd::new(fd, ev));
            }
            if poll(&mut fds, PollTimeout::from(POLL_ROUND_MS)).is_ok() && open {
                stdin_ready = fds[0].revents().is_some_and(|r| !r.is_empty());
            }
        }
        if stdin_ready {
            let n = match input.read(&mut buf) {
                Ok(n) => n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => break Err(e),
            };
            // At the end of input, a last line without its newline still counts.
            lines.feed(if n == 0 { b"\n" } else { &buf[..n] }, &mut frames);
            open = n != 0;
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
                    Frame::Line(line) => match route(&line, &mut era) {
                        Route::Reply(r) => r,
                        Route::Handle(msg, e) if runs_long(&msg) => {
                            let conversation = conversation_key(&msg, e, Some(&session));
                            queue.push_back(Queued {
                                msg,
                                era: e,
                                conversation,
                            });
                            None
                        }
                        Route::Handle(msg, e) => {
                            if msg.method() == Some(methods::CANCELLED) {
                                cancel(&msg, &mut pool, &mut queue);
                            }
                            server.handle(msg, e, Some(&session))
                        }
                    },
                };
                if let Some(r) = reply
                    && let Err(e) = write(&mut out, &r)
                {
                    pool.stop_all();
                    return Err(e);
                }
            }
        }
        // Start what may start, in order (a busy conversation holds back only its own).
        let mut i = 0;
        while i < queue.len() && !pool.is_full() {
            let free = queue[i]
                .conversation
                .as_deref()
                .is_none_or(|k| !pool.busy(k));
            if !free {
                i += 1;
                continue;
            }
            let Some(q) = queue.remove(i) else { break };
            let Message::Request { id, .. } = &q.msg else {
                continue;
            };
            let job = Job::new(server, &q.msg, q.era, Some(&session));
            let deadline = Instant::now() + server.chat_timeout;
            if let Err(e) = pool.start((), &job, id.clone(), q.conversation, deadline) {
                let failed = Message::Error {
                    id: Some(id.clone()),
                    error: ErrorObject::new(-32603, e),
                };
                if let Err(e) = write(&mut out, &failed) {
                    pool.stop_all();
                    return Err(e);
                }
            }
        }
        for ((), reply) in pool.pump(Instant::now()) {
            if let Err(e) = write(&mut out, &reply) {
                pool.stop_all();
                return Err(e);
            }
        }
    };
    pool.stop_all();
    result
}

/// `notifications/cancelled`: the named request's worker is ended (or its queued call
/// dropped), and it gets no answer, as the protocol says.
fn cancel(msg: &Message, pool: &mut Pool<()>, queue: &mut VecDeque<Queued>) {
    let Message::Notification { params, .. } = msg else {
        return;
    };
    let Some(id) = params
        .as_ref()
        .and_then(|p| p.get("requestId"))
        .and_then(Id::from_value)
    else {
        return;
    };
    pool.cancel(|r| r.id == id);
    queue.retain(|q| !matches!(&q.msg, Message::Request { id: qid, .. } if *qid == id));
}

/// What to do with one line: answer it now, or handle it in an era.
enum Route {
    Reply(Option<Message>),
    Handle(Message, Era),
}

/// The route of one line, deciding the connection's era on its first request.
fn route(line: &[u8], era: &mut Option<Era>) -> Route {
    // Not JSON is a parse error; JSON that is no message (a batch, no `jsonrpc`, …) an
    // invalid request: decided by which step failed, never by the message's words.
    let parsed = serde_json::from_slice::<serde_json::Value>(line)
        .map_err(|e| ErrorObject::new(code::PARSE_ERROR, format!("not JSON: {e}")))
        .and_then(|v| {
            Message::from_value(v).map_err(|e| ErrorObject::new(code::INVALID_REQUEST, e.0))
        });
    match parsed {
        Err(error) => Route::Reply(Some(Message::Error { id: None, error })),
        Ok(msg) => {
            // The era of this message (stdio has no headers, so it never fails).
            let this = match &msg {
                Message::Request { params, .. } | Message::Notification { params, .. } => {
                    era::of_request(params.as_ref(), None).unwrap_or(Era::Legacy)
                }
                _ => Era::Legacy,
            };
            let claimed = this == Era::Modern;
            let is_request = matches!(msg, Message::Request { .. });
            match *era {
                None if is_request => {
                    *era = Some(this);
                    Route::Handle(msg, this)
                }
                // Before the first request: notifications pass, in the era they claim.
                None => Route::Handle(msg, this),
                Some(Era::Modern) if !claimed && msg.method() == Some(methods::INITIALIZE) => {
                    Route::Reply(match msg {
                        Message::Request { id, .. } => Some(Message::Error {
                            id: Some(id),
                            error: ErrorObject::new(
                                code::UNSUPPORTED_PROTOCOL_VERSION,
                                format!("this connection speaks {MODERN_VERSION}"),
                            )
                            .with_data(serde_json::json!({"supported": [MODERN_VERSION]})),
                        }),
                        _ => None,
                    })
                }
                Some(Era::Legacy) if claimed && is_request => Route::Reply(match msg {
                    Message::Request { id, .. } => Some(Message::Error {
                        id: Some(id),
                        error: ErrorObject::new(
                            code::INVALID_REQUEST,
                            "this connection began with initialize (2025-11-25)",
                        ),
                    }),
                    _ => None,
                }),
                Some(e) => Route::Handle(msg, e),
            }
        }
    }
}
