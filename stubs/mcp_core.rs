//! The scripted MCP server shared by the stub binaries. It is an independent check on
//! tai's client: it uses serde_json and std only, never tai's own MCP code.

#![allow(dead_code)]

use std::io::Write;

use serde_json::{Value, json};

pub const LEGACY: &str = "2025-11-25";
pub const MODERN: &str = "2026-07-28";

/// The scenario, from flags.
#[derive(Clone, Debug, Default)]
pub struct Script {
    /// "legacy", "modern" or "dual".
    pub era: String,
    pub page_size: Option<usize>,
    pub filler_tools: usize,
    pub notify_before: bool,
    pub garbage_stdout: bool,
    pub stderr_flood: usize,
    pub exit_on_unexpected_first: bool,
    pub silent_on_unknown: bool,
    pub wrong_id: bool,
    pub expire_session_after: Option<usize>,
    pub sse: bool,
    pub log: Option<String>,
    pub port: u16,
    pub redefine: Option<String>,
    pub tools_ttl_ms: u64,
    pub without: Vec<String>,
    pub add_after_call: bool,
    pub crash_once: Option<String>,
    /// Offer an `env` tool that answers with this process's environment (`K=V` lines),
    /// then the text of `say_file` (a server echoing back whatever secrets it can see).
    pub env_tool: bool,
    pub say_file: Option<String>,
    /// Record the environment the stub started with in the log (`{"env": {...}}`).
    pub dump_env: bool,
    /// The redefined tool's new description (instead of appending "(REDEFINED)").
    pub describe: Option<String>,
    /// "yes": tools/list answers an internal error (registration with "no" succeeds).
    pub fail_list: bool,
    /// At start, leave behind a process in its own session (`setsid`), logged as `detached`.
    pub spawn_detached: bool,
    /// HTTP: answer in SSE and hold the stream open (no length, no close) until the client
    /// closes it, serving nobody else meanwhile — a sequential server.
    pub sse_hold: bool,
}

impl Script {
    pub fn from_args() -> Script {
        let mut s = Script {
            era: "dual".into(),
            ..Script::default()
        };
        let mut args = std::env::args().skip(1);
        while let Some(a) = args.next() {
            let mut val = || {
                args.next()
                    .unwrap_or_else(|| die(&format!("{a} needs a value")))
            };
            match a.as_str() {
                "--era" => s.era = val(),
                "--page-size" => s.page_size = val().parse().ok(),
                "--tools" => s.filler_tools = val().parse().unwrap_or(0),
                "--notify-before" => s.notify_before = true,
                "--garbage-stdout" => s.garbage_stdout = true,
                "--stderr-flood" => s.stderr_flood = val().parse().unwrap_or(0),
                "--exit-on-unexpected-first" => s.exit_on_unexpected_first = true,
                "--silent-on-unknown" => s.silent_on_unknown = true,
                "--wrong-id" => s.wrong_id = true,
                "--expire-session-after" => s.expire_session_after = val().parse().ok(),
                "--sse" => s.sse = true,
                "--log" => s.log = Some(val()),
                "--port" => s.port = val().parse().unwrap_or(0),
                "--redefine" => s.redefine = Some(val()),
                "--tools-ttl-ms" => s.tools_ttl_ms = val().parse().unwrap_or(0),
                "--without" => s.without.push(val()),
                "--add-after-call" => s.add_after_call = true,
                "--crash-once" => s.crash_once = Some(val()),
                "--env-tool" => s.env_tool = true,
                "--say-file" => s.say_file = Some(val()),
                "--dump-env" => s.dump_env = true,
                "--describe" => s.describe = Some(val()),
                "--fail-list" => s.fail_list = val() == "yes",
                "--spawn-detached" => s.spawn_detached = true,
                "--sse-hold" => s.sse_hold = true,
                other => die(&format!("unknown flag {other}")),
            }
        }
        s.record(&json!({"pid": std::process::id()}));
        if s.dump_env {
            let env: serde_json::Map<String, Value> = std::env::vars_os()
                .map(|(k, v)| {
                    (
                        k.to_string_lossy().into_owned(),
                        Value::String(v.to_string_lossy().into_owned()),
                    )
                })
                .collect();
            s.record(&json!({ "env": env }));
        }
        if s.spawn_detached {
            // A shell starts it and exits: the process is an orphan in a session of its own.
            let out = std::process::Command::new("sh")
                .args([
                    "-c",
                    "setsid sleep 300 </dev/null >/dev/null 2>&1 & echo $!",
                ])
                .stderr(std::process::Stdio::null())
                .output();
            if let Some(pid) = out.ok().and_then(|o| {
                String::from_utf8_lossy(&o.stdout)
                    .trim()
                    .parse::<u32>()
                    .ok()
            }) {
                s.record(&json!({"detached": pid}));
            }
        }
        s
    }

    pub fn speaks_legacy(&self) -> bool {
        self.era != "modern"
    }

    pub fn speaks_modern(&self) -> bool {
        self.era != "legacy"
    }

    /// Append one line to the log file, if any.
    pub fn record(&self, line: &Value) {
        if let Some(path) = &self.log
            && let Ok(mut f) = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(path)
        {
            let _ = writeln!(f, "{line}");
        }
    }
}

pub fn die(msg: &str) -> ! {
    eprintln!("stub: {msg}");
    std::process::exit(2)
}

/// What the server does with one incoming message.
pub enum Action {
    /// Send these messages (notifications, requests, then the response), in order.
    Reply(Vec<Value>),
    /// Send nothing.
    Nothing,
    /// Sleep, then reply.
    Slow(u64, Vec<Value>),
    /// Exit the process with this code.
    Crash(i32),
}

pub fn tools(s: &Script, st: &State) -> Vec<Value> {
    let desc = |name: &str, d: &str| match &s.redefine {
        Some(t) if t == name => match &s.describe {
            Some(text) if text != "none" => text.clone(),
            _ => format!("{d} (REDEFINED)"),
        },
        _ => d.to_string(),
    };
    let mut t = vec![
        json!({"name": "echo", "description": desc("echo", "Echo the text back"),
               "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}}),
        json!({"name": "fail", "description": "Always fails as a tool (isError)", "inputSchema": {"type": "object"}}),
        json!({"name": "big", "description": "Return size bytes of text",
               "inputSchema": {"type": "object", "properties": {"size": {"type": "integer"}}}}),
        json!({"name": "slow", "description": "Wait ms milliseconds, then answer",
               "inputSchema": {"type": "object", "properties": {"ms": {"type": "integer"}}}}),
        json!({"name": "crash", "description": "Exit the server mid-call", "inputSchema": {"type": "object"}}),
        json!({"name": "regional", "description": "Echo a region mirrored into a header",
               "inputSchema": {"type": "object", "properties": {"region": {"type": "string", "x-mcp-header": "Region"}}}}),
        json!({"name": "bad_header", "description": "An invalid x-mcp-header (on an object)",
               "inputSchema": {"type": "object", "properties": {"data": {"type": "object", "x-mcp-header": "Data"}}}}),
    ];
    for i in 0..s.filler_tools {
        t.push(json!({"name": format!("tool_{i:03}"), "description": format!("Filler tool {i}"), "inputSchema": {"type": "object"}}));
    }
    if s.env_tool {
        t.push(json!({"name": "env", "description": "Answer with the server's environment", "inputSchema": {"type": "object"}}));
    }
    if s.add_after_call && st.calls > 0 {
        t.push(json!({"name": "late_tool", "description": "Appeared after the first call", "inputSchema": {"type": "object"}}));
    }
    t.retain(|x| !s.without.iter().any(|w| x["name"] == w.as_str()));
    t
}

fn result(id: &Value, r: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "result": r})
}

fn error(id: &Value, code: i64, msg: &str, data: Option<Value>) -> Value {
    let mut e = json!({"code": code, "message": msg});
    if let Some(d) = data {
        e["data"] = d;
    }
    json!({"jsonrpc": "2.0", "id": id, "error": e})
}

/// Per-connection state (stdio: the process; HTTP: the server).
#[derive(Default)]
pub struct State {
    pub messages_seen: usize,
    pub initialized: bool,
    pub calls: usize,
}

/// Decide what to do with one parsed message.
pub fn handle(s: &Script, st: &mut State, msg: &Value) -> Action {
    s.record(msg);
    st.messages_seen += 1;
    let method = msg.get("method").and_then(Value::as_str).unwrap_or("");
    let Some(id) = msg.get("id").cloned() else {
        return Action::Nothing; // notifications (initialized, cancelled) and responses to our requests
    };
    if msg.get("method").is_none() {
        return Action::Nothing; // the client's answer to a request of ours
    }
    let meta_version = msg
        .pointer("/params/_meta/io.modelcontextprotocol~1protocolVersion")
        .and_then(Value::as_str);
    let modern = meta_version.is_some();
    if st.messages_seen == 1 && s.exit_on_unexpected_first && method != "initialize" {
        eprintln!("stub: expected initialize first, got {method}; exiting");
        return Action::Crash(1);
    }
    let modern_extras = |mut r: Value| {
        r["resultType"] = json!("complete");
        r["_meta"] =
            json!({"io.modelcontextprotocol/serverInfo": {"name": "tai-stub", "version": "1.0"}});
        r
    };
    match method {
        "initialize" => {
            if !s.speaks_legacy() {
                return Action::Reply(vec![error(
                    &id,
                    -32022,
                    "Unsupported protocol version",
                    Some(
                        json!({"supported": [MODERN], "requested": msg.pointer("/params/protocolVersion")}),
                    ),
                )]);
            }
            st.initialized = true;
            Action::Reply(vec![result(
                &id,
                json!({
                    "protocolVersion": LEGACY,
                    "capabilities": {"tools": {"listChanged": true}},
                    "serverInfo": {"name": "tai-stub", "version": "1.0"},
                    "instructions": "A scripted stub server."
                }),
            )])
        }
        "server/discover" => {
            if !s.speaks_modern() {
                if s.silent_on_unknown {
                    return Action::Nothing;
                }
                return Action::Reply(vec![error(
                    &id,
                    -32601,
                    "Method not found: server/discover",
                    None,
                )]);
            }
            let mut versions = vec![MODERN];
            if s.speaks_legacy() {
                versions.push(LEGACY);
            }
            Action::Reply(vec![result(
                &id,
                modern_extras(json!({
                    "supportedVersions": versions,
                    "capabilities": {"tools": {"listChanged": true}},
                    "instructions": "A scripted stub server.",
                    "ttlMs": 60000, "cacheScope": "public"
                })),
            )])
        }
        "ping" => Action::Reply(vec![result(&id, json!({}))]),
        "tools/list" | "tools/call" => {
            if modern && meta_version != Some(MODERN) {
                return Action::Reply(vec![error(
                    &id,
                    -32022,
                    "Unsupported protocol version",
                    Some(json!({"supported": [MODERN], "requested": meta_version})),
                )]);
            }
            if !modern && !s.speaks_legacy() {
                return Action::Reply(vec![error(&id, -32602, "missing _meta", None)]);
            }
            if !modern && !st.initialized {
                if s.silent_on_unknown {
                    return Action::Nothing;
                }
                return Action::Reply(vec![error(&id, -32600, "not initialized", None)]);
            }
            let wrap = |r: Value| if modern { modern_extras(r) } else { r };
            if method == "tools/list" && s.fail_list {
                return Action::Reply(vec![error(
                    &id,
                    -32603,
                    "the tool list is unavailable",
                    None,
                )]);
            }
            if method == "tools/list" {
                let all = tools(s, st);
                let start: usize = msg
                    .pointer("/params/cursor")
                    .and_then(Value::as_str)
                    .and_then(|c| c.strip_prefix("page-"))
                    .and_then(|n| n.parse().ok())
                    .unwrap_or(0);
                let size = s.page_size.unwrap_or(all.len());
                let page: Vec<Value> = all.iter().skip(start).take(size).cloned().collect();
                let mut r = json!({"tools": page});
                if start + size < all.len() {
                    r["nextCursor"] = json!(format!("page-{}", start + size));
                }
                if modern {
                    r["ttlMs"] = json!(s.tools_ttl_ms);
                    r["cacheScope"] = json!("public");
                }
                return Action::Reply(vec![result(&id, wrap(r))]);
            }
            st.calls += 1;
            let first = st.calls == 1;
            let mut action = call(s, &id, msg, modern, wrap);
            if s.add_after_call
                && first
                && let Action::Reply(msgs) = &mut action
            {
                let n = msgs.len();
                msgs.insert(
                    n - 1,
                    json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}),
                );
            }
            action
        }
        _ => {
            if s.silent_on_unknown && !st.initialized {
                return Action::Nothing;
            }
            Action::Reply(vec![error(
                &id,
                -32601,
                &format!("Method not found: {method}"),
                None,
            )])
        }
    }
}

fn call(
    s: &Script,
    id: &Value,
    msg: &Value,
    modern: bool,
    wrap: impl Fn(Value) -> Value,
) -> Action {
    let name = msg
        .pointer("/params/name")
        .and_then(Value::as_str)
        .unwrap_or("");
    let args = msg
        .pointer("/params/arguments")
        .cloned()
        .unwrap_or(json!({}));
    let text = |t: String| wrap(json!({"content": [{"type": "text", "text": t}]}));
    let mut before = Vec::new();
    if s.notify_before {
        before.push(json!({"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": "working"}}));
        before.push(json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}));
        if !modern {
            before.push(json!({"jsonrpc": "2.0", "id": "srv-1", "method": "roots/list"}));
            before.push(json!({"jsonrpc": "2.0", "id": "srv-2", "method": "ping"}));
        }
    }
    if s.wrong_id {
        before.push(result(&json!("not-your-id"), text("stale".into())));
    }
    let reply = |r: Value| {
        let mut v = before.clone();
        v.push(result(id, r));
        v
    };
    match name {
        "echo" => match args.get("text").and_then(Value::as_str) {
            Some(t) => Action::Reply(reply(text(t.to_string()))),
            None => Action::Reply(vec![error(id, -32602, "echo needs text", None)]),
        },
        "regional" | "bad_header" => {
            Action::Reply(reply(text(format!("region {}", args["region"]))))
        }
        "fail" => Action::Reply(reply(wrap(
            json!({"content": [{"type": "text", "text": "it failed, as asked"}], "isError": true}),
        ))),
        "big" => {
            let n = args.get("size").and_then(Value::as_u64).unwrap_or(1024) as usize;
            let body: String = "0123456789abcdef".chars().cycle().take(n).collect();
            Action::Reply(reply(text(body)))
        }
        "slow" => {
            let ms = args.get("ms").and_then(Value::as_u64).unwrap_or(1000);
            Action::Slow(ms, reply(text(format!("slept {ms} ms"))))
        }
        "crash" => match &s.crash_once {
            Some(flag) if std::path::Path::new(flag).exists() => {
                Action::Reply(reply(text("recovered after a crash".into())))
            }
            Some(flag) => {
                let _ = std::fs::write(flag, "crashed");
                eprintln!("stub: crashing once, as asked");
                Action::Crash(3)
            }
            None => {
                eprintln!("stub: crashing mid-call as asked");
                Action::Crash(3)
            }
        },
        "env" if s.env_tool => {
            let mut vars: Vec<String> = std::env::vars_os()
                .map(|(k, v)| format!("{}={}", k.to_string_lossy(), v.to_string_lossy()))
                .collect();
            vars.sort();
            let mut out = vars.join("\n");
            if let Some(f) = &s.say_file {
                out.push('\n');
                out.push_str(&std::fs::read_to_string(f).unwrap_or_default());
            }
            Action::Reply(reply(text(out)))
        }
        other if other.starts_with("tool_") => Action::Reply(reply(text(format!("{other} ran")))),
        other => Action::Reply(vec![error(
            id,
            -32602,
            &format!("Unknown tool: {other}"),
            None,
        )]),
    }
}
