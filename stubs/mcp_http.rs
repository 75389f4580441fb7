//! tai-stub-mcp-http: a scripted MCP server over Streamable HTTP (see mcp_core.rs).
//!
//! One connection at a time, `Connection: close` on every reply. Prints
//! `listening on http://127.0.0.1:PORT/mcp` as its first stdout line.

#[path = "http_io.rs"]
mod http_io;
#[path = "mcp_core.rs"]
mod mcp_core;

use std::collections::HashSet;
use std::io::Write;
use std::net::TcpListener;

use http_io::{read_request, respond};

use mcp_core::{Action, Script, State, handle};
use serde_json::{Value, json};

fn sse_body(msgs: &[Value]) -> String {
    // A priming event (id, retry, empty data) and a comment first, as real servers send.
    let mut b = String::from("id: 0\nretry: 1000\ndata: \n\n: keep-alive\n\n");
    for m in msgs {
        b.push_str(&format!("event: message\ndata: {m}\n\n"));
    }
    b
}

/// An SSE answer whose stream stays open: no length, no close; the next connection waits
/// until the client closes this one (at most 20 s), as a one-at-a-time server does.
fn hold_stream(
    mut stream: &std::net::TcpStream,
    status: &str,
    extra: &[(&str, String)],
    body: &str,
) {
    use std::io::Read;
    let mut head = format!(
        "HTTP/1.1 {status}\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\n"
    );
    for (k, v) in extra {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    head.push_str("\r\n");
    let _ = stream.write_all(head.as_bytes());
    let _ = stream.write_all(body.as_bytes());
    let _ = stream.flush();
    let _ = stream.set_read_timeout(Some(std::time::Duration::from_secs(20)));
    let mut buf = [0u8; 1024];
    while matches!(stream.read(&mut buf), Ok(n) if n > 0) {}
}

fn main() {
    let s = Script::from_args();
    let listener = TcpListener::bind(("127.0.0.1", s.port))
        .unwrap_or_else(|e| mcp_core::die(&format!("bind: {e}")));
    let port = listener.local_addr().map(|a| a.port()).unwrap_or(0);
    println!("listening on http://127.0.0.1:{port}/mcp");
    let _ = std::io::stdout().flush();
    let mut st = State::default();
    let mut sessions: HashSet<String> = HashSet::new();
    let mut next_session = 1;
    let mut requests = 0usize;
    for stream in listener.incoming() {
        let Ok(stream) = stream else { continue };
        let Some(req) = read_request(&stream) else {
            continue;
        };
        requests += 1;
        if req.method != "POST" {
            respond(&stream, "405 Method Not Allowed", &[], "", "");
            continue;
        }
        let Ok(msg) = serde_json::from_slice::<Value>(&req.body) else {
            respond(
                &stream,
                "400 Bad Request",
                &[],
                "application/json",
                &json!({"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}})
                    .to_string(),
            );
            continue;
        };
        let method = msg
            .get("method")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string();
        s.record(&json!({"http": {
            "method": method,
            "mcp-method": req.header("mcp-method"), "mcp-name": req.header("mcp-name"),
            "mcp-protocol-version": req.header("mcp-protocol-version"),
            "mcp-session-id": req.header("mcp-session-id"), "authorization": req.header("authorization"),
            "mcp-param-region": req.header("mcp-param-region"),
        }}));
        let modern = msg
            .pointer("/params/_meta/io.modelcontextprotocol~1protocolVersion")
            .and_then(Value::as_str);
        if let Some(v) = modern {
            // 2026 header checks
            if req.header("mcp-protocol-version") != Some(v)
                || (msg.get("id").is_some() && req.header("mcp-method") != Some(method.as_str()))
            {
                respond(&stream, "400 Bad Request", &[], "application/json",
                    &json!({"jsonrpc":"2.0","id":msg.get("id"),"error":{"code":-32020,"message":"Header mismatch"}}).to_string());
                continue;
            }
        } else if s.speaks_legacy() && method != "initialize" && msg.get("id").is_some()
            || method == "notifications/initialized"
        {
            if let Some(n) = s.expire_session_after
                && requests == n + 1
            {
                sessions.clear();
            }
            match req.header("mcp-session-id") {
                None => {
                    respond(&stream, "400 Bad Request", &[], "application/json",
                        &json!({"jsonrpc":"2.0","id":null,"error":{"code":-32000,"message":"Bad Request: Mcp-Session-Id header is required"}}).to_string());
                    continue;
                }
                Some(id) if !sessions.contains(id) => {
                    respond(&stream, "404 Not Found", &[], "application/json",
                        &json!({"jsonrpc":"2.0","id":null,"error":{"code":-32001,"message":"Session not found"}}).to_string());
                    continue;
                }
                Some(_) => {}
            }
        }
        let mut extra = Vec::new();
        let action = handle(&s, &mut st, &msg);
        if method == "initialize" && s.speaks_legacy() {
            let id = format!("sess-{next_session}");
            next_session += 1;
            sessions.insert(id.clone());
            extra.push(("Mcp-Session-Id", id));
        }
        let msgs = match action {
            Action::Nothing => {
                respond(&stream, "202 Accepted", &[], "", "");
                continue;
            }
            Action::Crash(_) => {
                drop(stream);
                continue;
            }
            Action::Slow(ms, msgs) => {
                std::thread::sleep(std::time::Duration::from_millis(ms));
                msgs
            }
            Action::Reply(msgs) => msgs,
        };
        // An error-only reply to a modern request that failed validation goes out as 400.
        let status = match msgs
            .last()
            .and_then(|m| m.pointer("/error/code"))
            .and_then(Value::as_i64)
        {
            Some(-32022..=-32020) => "400 Bad Request",
            _ => "200 OK",
        };
        if s.sse_hold {
            hold_stream(&stream, status, &extra, &sse_body(&msgs));
        } else if s.sse || msgs.len() > 1 {
            respond(
                &stream,
                status,
                &extra,
                "text/event-stream",
                &sse_body(&msgs),
            );
        } else {
            let body = msgs.last().map(Value::to_string).unwrap_or_default();
            respond(&stream, status, &extra, "application/json", &body);
        }
    }
}
