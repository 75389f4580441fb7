//! tai-stub-mcp-stdio: a scripted MCP server over newline-delimited stdio (see mcp_core.rs).

#[path = "mcp_core.rs"]
mod mcp_core;

use std::io::{BufRead, Write};

use mcp_core::{Action, Script, State, handle};

fn main() {
    let s = Script::from_args();
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    if s.garbage_stdout {
        let _ = writeln!(
            out,
            "Starting tai-stub v1.0 ... (a banner on stdout, as some servers print)"
        );
        let _ = out.flush();
    }
    if s.stderr_flood > 0 {
        let chunk = "stub: a very chatty log line on stderr\n";
        let mut err = std::io::stderr().lock();
        let mut n = 0;
        while n < s.stderr_flood {
            let _ = err.write_all(chunk.as_bytes());
            n += chunk.len();
        }
    }
    let mut st = State::default();
    // Lines arrive through a channel, so a slow call still hears what comes meanwhile (a
    // `notifications/cancelled` is logged and ends the wait without an answer). Stubs may
    // use threads; tai may not.
    let (tx, rx) = std::sync::mpsc::channel::<String>();
    std::thread::spawn(move || {
        for line in std::io::stdin().lock().lines() {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    while let Ok(line) = rx.recv() {
        if line.trim().is_empty() {
            continue;
        }
        let Ok(msg) = serde_json::from_str::<serde_json::Value>(&line) else {
            let _ = writeln!(
                out,
                "{}",
                serde_json::json!({"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}})
            );
            let _ = out.flush();
            continue;
        };
        let send = |out: &mut std::io::StdoutLock, msgs: Vec<serde_json::Value>| {
            for m in msgs {
                if s.garbage_stdout {
                    let _ = writeln!(out, "log: about to answer");
                }
                let _ = writeln!(out, "{m}");
            }
            let _ = out.flush();
        };
        match handle(&s, &mut st, &msg) {
            Action::Reply(msgs) => send(&mut out, msgs),
            Action::Slow(ms, msgs) => {
                let until = std::time::Instant::now() + std::time::Duration::from_millis(ms);
                let mut cancelled = false;
                while let Some(left) = until.checked_duration_since(std::time::Instant::now()) {
                    match rx.recv_timeout(left) {
                        Ok(l) => {
                            let Ok(m) = serde_json::from_str::<serde_json::Value>(&l) else {
                                continue;
                            };
                            let _ = handle(&s, &mut st, &m); // logged; a slow call answers nothing else
                            if m["method"] == "notifications/cancelled"
                                && m["params"]["requestId"] == msg["id"]
                            {
                                cancelled = true;
                                break;
                            }
                        }
                        Err(std::sync::mpsc::RecvTimeoutError::Timeout) => break,
                        Err(_) => std::process::exit(0),
                    }
                }
                if !cancelled {
                    send(&mut out, msgs);
                }
            }
            Action::Nothing => {}
            Action::Crash(code) => std::process::exit(code),
        }
    }
}
