//! tai-stub-model: an OpenAI-compatible `/chat/completions` endpoint that serves scripted
//! replies in order and records every request it got (test double; no tai code).
//!
//! `tai-stub-model --script FILE [--log FILE] [--port N]`; prints
//! `listening on http://127.0.0.1:PORT/v1` first. The script is a JSON array; each request
//! takes the next step:
//!   {"text": "..."}                                       a text answer
//!   {"tool_calls": [{"name": "...", "arguments": "{...}"}]} tool calls (text optional)
//!   {"status": 429, "retry_after": 1, "body": "..."}      an HTTP error
//!   {"text": "...", "cut": true}                          a stream cut before it ends
//!   {"text": "...", "delay_ms": 500}                      a slow answer (between chunks)
//! Past the end of the script every request gets HTTP 500 "script exhausted".
//! In tool-call arguments, `$RECORD` becomes the last `rec_…` id the request's messages
//! mention (so a script can read back a spilled result).

#[path = "http_io.rs"]
mod http_io;

use std::io::Write;
use std::net::{TcpListener, TcpStream};
use std::time::Duration;

use http_io::{read_request, respond};
use serde_json::{Value, json};

fn chunk(delta: Value, finish: Option<&str>) -> String {
    let c = json!({"id": "chatcmpl-stub", "object": "chat.completion.chunk", "model": "stub",
                   "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]});
    format!("data: {c}\n\n")
}

fn stream(mut s: &TcpStream, step: &Value) {
    let _ = s.write_all(
        b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n",
    );
    let delay = Duration::from_millis(step.get("delay_ms").and_then(Value::as_u64).unwrap_or(0));
    let cut = step.get("cut").and_then(Value::as_bool).unwrap_or(false);
    let text = step.get("text").and_then(Value::as_str).unwrap_or("");
    let mut pieces: Vec<String> = Vec::new();
    let chars: Vec<char> = text.chars().collect();
    for part in chars.chunks(4) {
        pieces.push(chunk(
            json!({"content": part.iter().collect::<String>()}),
            None,
        ));
    }
    for (i, call) in step
        .get("tool_calls")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .enumerate()
    {
        let args = call
            .get("arguments")
            .and_then(Value::as_str)
            .unwrap_or("{}");
        let (a, b) = args.split_at(args.len() / 2);
        pieces.push(chunk(
            json!({"tool_calls": [{"index": i, "id": format!("call_{i}"), "type": "function",
            "function": {"name": call["name"], "arguments": a}}]}),
            None,
        ));
        pieces.push(chunk(
            json!({"tool_calls": [{"index": i, "function": {"arguments": b}}]}),
            None,
        ));
    }
    let finish = if step.get("tool_calls").is_some() {
        "tool_calls"
    } else {
        "stop"
    };
    if cut {
        pieces.truncate(pieces.len().div_ceil(2));
    } else {
        pieces.push(chunk(json!({}), Some(finish)));
        pieces.push("data: [DONE]\n\n".into());
    }
    for p in pieces {
        if !delay.is_zero() {
            std::thread::sleep(delay);
        }
        if s.write_all(p.as_bytes()).and_then(|()| s.flush()).is_err() {
            return;
        }
    }
}

/// `step` with `$RECORD` in tool-call arguments replaced by the last record id mentioned.
fn with_record(step: &Value, request: &Value) -> Value {
    let text = request["messages"].to_string();
    let id = text.rmatch_indices("rec_").next().map(|(at, _)| {
        text[at..]
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect::<String>()
    });
    let mut step = step.clone();
    if let (Some(id), Some(calls)) = (id, step.get_mut("tool_calls").and_then(Value::as_array_mut))
    {
        for c in calls {
            if let Some(a) = c
                .get("arguments")
                .and_then(Value::as_str)
                .map(|a| a.replace("$RECORD", &id))
            {
                c["arguments"] = Value::String(a);
            }
        }
    }
    step
}

fn main() {
    let mut args = std::env::args().skip(1);
    let (mut script, mut log, mut port) = (None, None, 0u16);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--script" => script = args.next(),
            "--log" => log = args.next(),
            "--port" => port = args.next().and_then(|p| p.parse().ok()).unwrap_or(0),
            other => {
                eprintln!("stub-model: unknown flag {other}");
                std::process::exit(2);
            }
        }
    }
    let steps: Vec<Value> = script
        .and_then(|p| std::fs::read_to_string(p).ok())
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or_default();
    let listener = TcpListener::bind(("127.0.0.1", port)).expect("bind");
    println!(
        "listening on http://127.0.0.1:{}/v1",
        listener.local_addr().map(|a| a.port()).unwrap_or(0)
    );
    let _ = std::io::stdout().flush();
    let mut next = 0;
    for conn in listener.incoming() {
        let Ok(conn) = conn else { continue };
        let Some(req) = read_request(&conn) else {
            continue;
        };
        let body: Value = serde_json::from_slice(&req.body).unwrap_or(Value::Null);
        if let Some(path) = &log
            && let Ok(mut f) = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(path)
        {
            let _ = writeln!(
                f,
                "{}",
                json!({"path": req.path, "authorization": req.header("authorization"), "body": body})
            );
        }
        let Some(step) = steps.get(next) else {
            respond(
                &conn,
                "500 Internal Server Error",
                &[],
                "application/json",
                r#"{"error":{"message":"script exhausted"}}"#,
            );
            continue;
        };
        next += 1;
        let step = &with_record(step, &body);
        if let Some(status) = step.get("status").and_then(Value::as_u64) {
            let mut extra = Vec::new();
            if let Some(r) = step.get("retry_after").and_then(Value::as_u64) {
                extra.push(("Retry-After", r.to_string()));
            }
            let msg = step
                .get("body")
                .and_then(Value::as_str)
                .unwrap_or("scripted error");
            let body = json!({"error": {"message": msg}}).to_string();
            respond(
                &conn,
                &format!("{status} Scripted"),
                &extra,
                "application/json",
                &body,
            );
            continue;
        }
        if body.get("stream").and_then(Value::as_bool) == Some(true) {
            stream(&conn, step);
        } else {
            let mut message = json!({"role": "assistant", "content": step.get("text").cloned().unwrap_or(Value::Null)});
            if let Some(calls) = step.get("tool_calls").and_then(Value::as_array) {
                message["tool_calls"] = calls
                    .iter()
                    .enumerate()
                    .map(|(i, c)| json!({"id": format!("call_{i}"), "type": "function", "function": {"name": c["name"], "arguments": c["arguments"]}}))
                    .collect();
            }
            let answer = json!({"id": "chatcmpl-stub", "object": "chat.completion", "choices": [{"index": 0, "message": message, "finish_reason": "stop"}]});
            respond(
                &conn,
                "200 OK",
                &[],
                "application/json",
                &answer.to_string(),
            );
        }
    }
}
