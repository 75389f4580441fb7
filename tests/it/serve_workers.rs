//! Long served calls run in worker processes: the server's one-threaded loop keeps
//! answering other clients (and listen streams) while a `chat` turn waits on a slow
//! model; a worker whose client leaves is ended; the cap refuses beyond it with 503 and
//! Retry-After; conversations live in the vault, so a handle survives a restart, and a
//! second turn on a busy handle is refused.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::serve_http::{KEY, serve, serve_with};
use crate::support::{ModelStub, Tai, TempDir, thread_count};

const MODERN: &str = "2026-07-28";

fn meta() -> Value {
    json!({"io.modelcontextprotocol/protocolVersion": MODERN, "io.modelcontextprotocol/clientCapabilities": {}})
}

/// A modern request: its body and the headers that must agree with it.
fn modern(id: i64, method: &str, params: Value) -> (String, Vec<(String, String)>) {
    let mut p = params;
    p["_meta"] = meta();
    let mut headers = vec![
        ("mcp-protocol-version".to_string(), MODERN.to_string()),
        ("mcp-method".to_string(), method.to_string()),
    ];
    if let Some(name) = p["name"].as_str() {
        headers.push(("mcp-name".to_string(), name.to_string()));
    }
    let body = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": p}).to_string();
    (body, headers)
}

/// A 2025-11-25 request without params on `session`.
fn legacy(id: i64, method: &str, session: &str) -> (String, Vec<(String, String)>) {
    let body = json!({"jsonrpc": "2.0", "id": id, "method": method}).to_string();
    (
        body,
        vec![("mcp-session-id".to_string(), session.to_string())],
    )
}

/// `initialize` on `c`: the session id the server gave.
fn legacy_session(c: &mut Client) -> String {
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}}).to_string();
    let (status, head, out) = c.call(&init, &[]);
    assert_eq!(status, 200, "{out}");
    head.lines()
        .find_map(|l| l.strip_prefix("mcp-session-id:"))
        .map(|v| v.trim().to_string())
        .unwrap_or_else(|| panic!("no session: {head}"))
}

/// One keep-alive client connection.
struct Client {
    stream: TcpStream,
    reader: BufReader<TcpStream>,
}

impl Client {
    fn connect(port: u16) -> Client {
        let stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
        stream.set_nodelay(true).unwrap();
        stream
            .set_read_timeout(Some(Duration::from_secs(20)))
            .unwrap();
        let reader = BufReader::new(stream.try_clone().unwrap());
        Client { stream, reader }
    }

    fn send(&mut self, body: &str, headers: &[(String, String)]) {
        let mut req = format!(
            "POST /mcp HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\nauthorization: Bearer {KEY}\r\ncontent-length: {}\r\n",
            body.len()
        );
        for (k, v) in headers {
            req.push_str(&format!("{k}: {v}\r\n"));
        }
        req.push_str("\r\n");
        req.push_str(body);
        self.stream.write_all(req.as_bytes()).unwrap();
    }

    /// (status, lower-cased head, body) of the next response (Content-Length framed).
    fn receive(&mut self) -> (u16, String, String) {
        let mut head = String::new();
        loop {
            let mut line = String::new();
            assert!(self.reader.read_line(&mut line).unwrap() > 0, "closed");
            if line == "\r\n" {
                break;
            }
            head.push_str(&line.to_lowercase());
        }
        let status = head
            .split_whitespace()
            .nth(1)
            .and_then(|s| s.parse().ok())
            .unwrap_or(0);
        let length: usize = head
            .lines()
            .find_map(|l| l.strip_prefix("content-length:"))
            .map(|v| v.trim().parse().unwrap())
            .unwrap_or(0);
        let mut body = vec![0u8; length];
        self.reader.read_exact(&mut body).unwrap();
        (status, head, String::from_utf8(body).unwrap())
    }

    fn call(&mut self, body: &str, headers: &[(String, String)]) -> (u16, String, String) {
        self.send(body, headers);
        self.receive()
    }
}

/// The server's children: its workers.
fn workers_of(server: u32) -> Vec<u32> {
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Some(pid) = e.file_name().to_str().and_then(|s| s.parse::<u32>().ok()) else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        let rest = &stat[stat.rfind(')').unwrap() + 1..];
        let fields: Vec<&str> = rest.split_whitespace().collect();
        if fields[1].parse::<u32>().ok() == Some(server) && fields[0] != "Z" {
            out.push(pid);
        }
    }
    out
}

fn wait_for_workers(server: u32, n: usize) -> Vec<u32> {
    let until = Instant::now() + Duration::from_secs(10);
    loop {
        let w = workers_of(server);
        if w.len() >= n {
            return w;
        }
        assert!(Instant::now() < until, "{n} workers never started: {w:?}");
        std::thread::sleep(Duration::from_millis(10));
    }
}

fn tool_text(body: &str) -> String {
    let v: Value = serde_json::from_str(body).unwrap_or_else(|_| panic!("{body}"));
    v["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("{body}"))
        .to_string()
}

#[test]
fn the_loop_answers_everyone_while_a_chat_turn_waits_on_a_slow_model() {
    let dir = TempDir::new("workers-slow");
    // Three pieces (text, finish, [DONE]), one second apart: the turn takes ~3 s.
    let model = ModelStub::start(dir.path(), json!([{"text": "slow", "delay_ms": 1000}]));
    let mut t = Tai::new("workers-slow-run");
    t.env("TAI_BASE_URL", &model.url)
        .env("TAI_MODEL", "stub-model")
        .env("TAI_MCP_TEST_LIMITS", "keepalive=200");
    let s = serve(&t);
    let server = s.child.id();
    // Another client (2025-11-25: a session, `ping`), warmed up.
    let mut other = Client::connect(s.port);
    let session = legacy_session(&mut other);
    let (ping, ping_h) = legacy(1, "ping", &session);
    let (list, list_h) = legacy(2, "tools/list", &session);
    for _ in 0..3 {
        assert_eq!(other.call(&ping, &ping_h).0, 200);
        assert_eq!(other.call(&list, &list_h).0, 200);
    }
    // A listen stream, open throughout.
    let mut listen = TcpStream::connect(("127.0.0.1", s.port)).unwrap();
    listen
        .set_read_timeout(Some(Duration::from_millis(100)))
        .unwrap();
    let (body, headers) = modern(
        3,
        "subscriptions/listen",
        json!({"notifications": {"toolsListChanged": true}}),
    );
    let mut req = format!(
        "POST /mcp HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\nauthorization: Bearer {KEY}\r\ncontent-length: {}\r\n",
        body.len()
    );
    for (k, v) in &headers {
        req.push_str(&format!("{k}: {v}\r\n"));
    }
    req.push_str("\r\n");
    req.push_str(&body);
    listen.write_all(req.as_bytes()).unwrap();
    // The chat turn, on its own connection.
    let port = s.port;
    let turn = std::thread::spawn(move || {
        let (body, headers) = modern(
            4,
            "tools/call",
            json!({"name": "chat", "arguments": {"message": "hi"}}),
        );
        let mut c = Client::connect(port);
        let t0 = Instant::now();
        let r = c.call(&body, &headers);
        (r, t0.elapsed())
    });
    model.wait_for_requests(1);
    let workers = wait_for_workers(server, 1);
    let mut listened = Vec::new();
    let mut buf = [0u8; 4096];
    let mut drain_listen = |into: &mut Vec<u8>| {
        if let Ok(n) = listen.read(&mut buf) {
            into.extend_from_slice(&buf[..n]);
        }
    };
    let mut worst = Duration::ZERO;
    for _ in 0..10 {
        for (b, h) in [(&ping, &ping_h), (&list, &list_h)] {
            let t0 = Instant::now();
            let (status, _, out) = other.call(b, h);
            let took = t0.elapsed();
            assert_eq!(status, 200, "{out}");
            assert!(out.contains("\"result\""), "{out}");
            worst = worst.max(took);
        }
        drain_listen(&mut listened);
    }
    assert!(
        worst < Duration::from_millis(50),
        "a ping or tools/list took {worst:?} while a chat turn waited"
    );
    // One thread in the server and in its worker, while the worker waits on the model.
    assert_eq!(thread_count(server), 1, "the server");
    for w in &workers {
        assert_eq!(thread_count(*w), 1, "worker {w}");
    }
    let ((status, _, out), took) = turn.join().unwrap();
    assert_eq!(status, 200, "{out}");
    let answer: Value = serde_json::from_str(&tool_text(&out)).unwrap();
    assert_eq!(answer["answer"], "slow");
    assert!(
        took >= Duration::from_millis(2500),
        "the model was slow: {took:?}"
    );
    drain_listen(&mut listened);
    let text = String::from_utf8_lossy(&listened);
    assert!(
        text.matches(": keepalive").count() >= 3,
        "the listen stream got no keep-alives while the turn ran: {text:?}"
    );
    assert!(workers_of(server).is_empty(), "the worker was reaped");
}

#[test]
fn a_worker_whose_client_leaves_is_ended_with_what_it_started() {
    let t = Tai::new("workers-leave");
    let s = serve(&t);
    let server = s.child.id();
    let mut c = Client::connect(s.port);
    // A command with a child of its own and one detached from it.
    let command = "setsid sleep 3334 >/dev/null 2>&1 </dev/null & sleep 3335";
    let (body, headers) = modern(
        1,
        "tools/call",
        json!({"name": "shell", "arguments": {"command": command}}),
    );
    c.send(&body, &headers);
    let worker = wait_for_workers(server, 1)[0];
    // the worker's own child (the shell running sleep) is running too
    let until = Instant::now() + Duration::from_secs(10);
    let shell = loop {
        if let Some(p) = workers_of(worker).first() {
            break *p;
        }
        assert!(Instant::now() < until, "the worker started no shell");
        std::thread::sleep(Duration::from_millis(10));
    };
    drop(c);
    let t0 = Instant::now();
    while (crate::support::process_state(worker).is_some_and(|s| s != 'Z')
        || crate::support::process_state(shell).is_some_and(|s| s != 'Z'))
        && t0.elapsed() < Duration::from_secs(3)
    {
        std::thread::sleep(Duration::from_millis(10));
    }
    let gone = t0.elapsed();
    assert!(
        gone < Duration::from_secs(1),
        "the worker {worker} (or its shell {shell}) outlived its client by {gone:?}"
    );
    // and the server still answers
    let mut c = Client::connect(s.port);
    let (list, h) = modern(2, "tools/list", json!({}));
    assert_eq!(c.call(&list, &h).0, 200);
}

#[test]
fn the_cap_refuses_the_fifth_long_call_with_503_and_retry_after() {
    let t = Tai::new("workers-cap");
    let s = serve(&t);
    let server = s.child.id();
    let mut running = Vec::new();
    for i in 0..4 {
        let mut c = Client::connect(s.port);
        let (body, headers) = modern(
            i,
            "tools/call",
            json!({"name": "shell", "arguments": {"command": "sleep 2; echo done"}}),
        );
        c.send(&body, &headers);
        running.push(c);
    }
    wait_for_workers(server, 4);
    let mut fifth = Client::connect(s.port);
    let (body, headers) = modern(
        9,
        "tools/call",
        json!({"name": "shell", "arguments": {"command": "echo five"}}),
    );
    let (status, head, out) = fifth.call(&body, &headers);
    assert_eq!(status, 503, "{head}{out}");
    assert!(head.contains("retry-after: "), "{head}");
    assert!(out.contains("--serve-workers"), "{out}");
    // a cheap call is still answered inline
    let (list, h) = modern(10, "tools/list", json!({}));
    assert_eq!(fifth.call(&list, &h).0, 200);
    for mut c in running {
        let (status, _, out) = c.receive();
        assert_eq!(status, 200, "{out}");
        assert!(tool_text(&out).contains("done"), "{out}");
    }
    // room again
    let (status, _, out) = fifth.call(&body, &headers);
    assert_eq!(
        (status, tool_text(&out).contains("five")),
        (200, true),
        "{out}"
    );
}

#[test]
fn a_workers_output_is_redacted_like_the_servers_own() {
    let dir = TempDir::new("workers-keys");
    let file = dir.path().join("keys.txt");
    std::fs::write(&file, format!("server {KEY} api sk-worker-api-key-42")).unwrap();
    let mut t = Tai::new("workers-keys-run");
    t.env("TAI_API_KEY", "sk-worker-api-key-42");
    let s = serve(&t);
    let mut c = Client::connect(s.port);
    let (body, headers) = modern(
        1,
        "tools/call",
        json!({"name": "shell", "arguments": {"command": format!("cat {}; env", file.display())}}),
    );
    let (status, _, out) = c.call(&body, &headers);
    assert_eq!(status, 200, "{out}");
    assert!(
        !out.contains(KEY) && !out.contains("sk-worker-api-key-42"),
        "{out}"
    );
    assert!(
        out.contains("[REDACTED:server-key]") && out.contains("[REDACTED:api-key]"),
        "{out}"
    );
}

#[test]
fn a_conversation_continues_after_a_restart_and_a_busy_handle_is_refused() {
    let dir = TempDir::new("workers-restart");
    let model = ModelStub::start(
        dir.path(),
        json!([
            {"text": "first answer"},
            {"text": "after the restart", "delay_ms": 400},
            {"text": "third"}
        ]),
    );
    let mut t = Tai::new("workers-restart-run");
    t.env("TAI_BASE_URL", &model.url)
        .env("TAI_MODEL", "stub-model");
    let chat = |port: u16, id: i64, args: Value| {
        let (body, headers) = modern(id, "tools/call", json!({"name": "chat", "arguments": args}));
        let (status, _, out) = Client::connect(port).call(&body, &headers);
        assert_eq!(status, 200, "{out}");
        let v: Value = serde_json::from_str(&out).unwrap();
        (
            v["result"]["isError"].as_bool().unwrap_or(false),
            tool_text(&out),
        )
    };
    let handle = {
        let s = serve(&t);
        let (_, text) = chat(s.port, 1, json!({"message": "remember me"}));
        let v: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(v["answer"], "first answer");
        v["session"].as_str().unwrap().to_string()
    }; // the server stops here
    let s = serve(&t);
    let port = s.port;
    let h = handle.clone();
    let slow =
        std::thread::spawn(move || chat(port, 2, json!({"message": "still there?", "session": h})));
    model.wait_for_requests(2);
    // a second turn on the same handle while the first runs
    let (is_error, text) = chat(s.port, 3, json!({"message": "me too", "session": handle}));
    assert!(is_error && text.contains("busy"), "{text}");
    let (is_error, text) = slow.join().unwrap();
    assert!(!is_error, "{text}");
    let v: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(
        (v["answer"].as_str(), v["session"].as_str()),
        (Some("after the restart"), Some(handle.as_str()))
    );
    let users = crate::support::user_messages(&model.requests()[1]);
    assert_eq!(
        users,
        ["remember me", "still there?"],
        "the restarted server continued the conversation from the vault"
    );
    assert_eq!(
        model.requests().len(),
        2,
        "the busy turn never reached the model"
    );
}

#[test]
fn deleting_a_session_ends_its_worker_and_the_flag_sets_the_cap() {
    let t = Tai::new("workers-delete");
    let s = serve_with(&t, &["--serve-workers", "1"]);
    let server = s.child.id();
    let mut c = Client::connect(s.port);
    let session = legacy_session(&mut c);
    let call = json!({"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {"name": "shell", "arguments": {"command": "sleep 30"}}}).to_string();
    let on_session = [("mcp-session-id".to_string(), session.clone())];
    c.send(&call, &on_session);
    let worker = wait_for_workers(server, 1)[0];
    // --serve-workers 1: a second long call is refused
    let mut other = Client::connect(s.port);
    let (status, head, _) = other.call(&call, &on_session);
    assert_eq!(status, 503, "{head}");
    // the session is deleted: its worker goes, and its waiting request is answered
    let delete = format!(
        "DELETE /mcp HTTP/1.1\r\nhost: 127.0.0.1\r\nauthorization: Bearer {KEY}\r\nmcp-session-id: {session}\r\ncontent-length: 0\r\n\r\n"
    );
    other.stream.write_all(delete.as_bytes()).unwrap();
    assert_eq!(other.receive().0, 200);
    let t0 = Instant::now();
    while crate::support::process_state(worker).is_some_and(|s| s != 'Z')
        && t0.elapsed() < Duration::from_secs(3)
    {
        std::thread::sleep(Duration::from_millis(10));
    }
    assert!(
        t0.elapsed() < Duration::from_secs(1),
        "the worker outlived its session"
    );
    let (status, _, out) = c.receive();
    assert_eq!(status, 200, "{out}");
    assert!(out.contains("session was deleted"), "{out}");
}

#[test]
fn a_cancelled_request_ends_its_worker() {
    let t = Tai::new("workers-cancel");
    let s = serve(&t);
    let server = s.child.id();
    let mut c = Client::connect(s.port);
    let (body, headers) = modern(
        77,
        "tools/call",
        json!({"name": "shell", "arguments": {"command": "sleep 30"}}),
    );
    c.send(&body, &headers);
    let worker = wait_for_workers(server, 1)[0];
    let mut other = Client::connect(s.port);
    let cancel = json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 77, "_meta": meta()}}).to_string();
    let h = vec![
        ("mcp-protocol-version".to_string(), MODERN.to_string()),
        (
            "mcp-method".to_string(),
            "notifications/cancelled".to_string(),
        ),
    ];
    assert_eq!(other.call(&cancel, &h).0, 202);
    let (status, _, out) = c.receive();
    assert_eq!(status, 200, "{out}");
    assert!(out.contains("cancelled"), "{out}");
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["id"], 77, "the answer names the call it ends: {out}");
    assert!(
        crate::support::wait_gone(worker).is_none_or(|s| s == 'Z'),
        "the cancelled worker lives on"
    );
}

/// A 2026-07-28 request without `clientCapabilities` is refused (400, -32602) before it
/// is dispatched: a long call never reaches a worker, a cheap one never runs.
#[test]
fn an_incomplete_envelope_is_refused_before_any_worker_starts() {
    let t = Tai::new("workers-envelope");
    let s = serve(&t);
    let server = s.child.id();
    let mut c = Client::connect(s.port);
    for (name, args) in [
        ("shell", json!({"command": "sleep 5"})),
        ("list_dir", json!({"path": "/"})),
    ] {
        let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": name, "arguments": args, "_meta": {"io.modelcontextprotocol/protocolVersion": MODERN}}}).to_string();
        let headers = vec![
            ("mcp-protocol-version".to_string(), MODERN.to_string()),
            ("mcp-method".to_string(), "tools/call".to_string()),
            ("mcp-name".to_string(), name.to_string()),
        ];
        let (status, _, out) = c.call(&body, &headers);
        let v: Value = serde_json::from_str(&out).unwrap();
        assert_eq!(
            (status, v["error"]["code"].as_i64()),
            (400, Some(-32602)),
            "{name}: {out}"
        );
        assert!(workers_of(server).is_empty(), "{name} started a worker");
    }
}

#[test]
fn a_workers_job_cannot_be_reopened_through_proc_and_it_dies_with_its_server() {
    let t = Tai::new("workers-proc");
    let mut s = serve(&t);
    let server = s.child.id();
    let mut c = Client::connect(s.port);
    // A command with a child of its own and one detached from it.
    let command = "setsid sleep 3334 >/dev/null 2>&1 </dev/null & sleep 3335";
    let (body, headers) = modern(
        1,
        "tools/call",
        json!({"name": "shell", "arguments": {"command": command}}),
    );
    c.send(&body, &headers);
    let worker = wait_for_workers(server, 1)[0];
    // The job (with the secrets) travels on the worker's stdin, the reply on its stdout:
    // another process of the same user (here even root) cannot open them again.
    for fd in [0, 1] {
        let path = format!("/proc/{worker}/fd/{fd}");
        let reopened = std::fs::OpenOptions::new()
            .read(fd == 0)
            .write(fd == 1)
            .open(&path);
        assert!(
            reopened.is_err(),
            "{path} could be opened again: the job or the reply is reachable"
        );
    }
    // The command runs (both its processes), then the server is killed (no chance to
    // end its workers): the worker goes with it.
    let started = Instant::now();
    while ["3334", "3335"]
        .iter()
        .any(|n| processes_running(&["sleep", n]).is_empty())
    {
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "the command did not start"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    s.child.kill().unwrap();
    s.child.wait().unwrap();
    let t0 = Instant::now();
    while crate::support::process_state(worker).is_some_and(|st| st != 'Z')
        && t0.elapsed() < Duration::from_secs(3)
    {
        std::thread::sleep(Duration::from_millis(10));
    }
    assert!(
        crate::support::process_state(worker).is_none_or(|st| st == 'Z'),
        "the worker {worker} outlived its killed server"
    );
    // And what its call started goes with it: the command and what it detached.
    let left = |n: &str| processes_running(&["sleep", n]);
    while ["3334", "3335"].iter().any(|n| !left(n).is_empty())
        && t0.elapsed() < Duration::from_secs(5)
    {
        std::thread::sleep(Duration::from_millis(20));
    }
    for n in ["3334", "3335"] {
        assert!(
            left(n).is_empty(),
            "`sleep {n}` outlived its killed server's worker: {:?}",
            left(n)
        );
    }
}

#[test]
fn an_ended_turn_frees_its_conversation_at_once() {
    let dir = TempDir::new("workers-lease");
    let model = ModelStub::start(
        dir.path(),
        json!([
            {"text": "first answer"},
            {"text": "never heard", "delay_ms": 3000},
            {"text": "free again"}
        ]),
    );
    let mut t = Tai::new("workers-lease-run");
    t.env("TAI_BASE_URL", &model.url)
        .env("TAI_MODEL", "stub-model");
    let s = serve(&t);
    let server = s.child.id();
    let turn =
        |id: i64, args: Value| modern(id, "tools/call", json!({"name": "chat", "arguments": args}));
    let (body, headers) = turn(1, json!({"message": "remember me"}));
    let (_, _, out) = Client::connect(s.port).call(&body, &headers);
    let first: Value = serde_json::from_str(&tool_text(&out)).unwrap();
    let handle = first["session"].as_str().unwrap().to_string();
    // a slow turn on the handle, whose client leaves while the model is thinking
    let mut c = Client::connect(s.port);
    let (body, headers) = turn(2, json!({"message": "slow one", "session": handle}));
    c.send(&body, &headers);
    model.wait_for_requests(2);
    let worker = wait_for_workers(server, 1)[0];
    drop(c);
    assert!(
        crate::support::wait_gone(worker).is_none_or(|st| st == 'Z'),
        "the worker of the abandoned turn lives on"
    );
    // the handle is free at once, not after the lease's lapse (MCP_CHAT_TIMEOUT + margin)
    let (body, headers) = turn(3, json!({"message": "and now?", "session": handle}));
    let (_, _, out) = Client::connect(s.port).call(&body, &headers);
    let text = tool_text(&out);
    assert!(
        !text.contains("busy"),
        "the ended turn kept its lease: {text}"
    );
    let v: Value = serde_json::from_str(&text).unwrap_or_else(|_| panic!("{text}"));
    assert_eq!(v["answer"], "free again");
}

/// Processes whose command line is exactly `argv` (NUL-separated in /proc).
fn processes_running(argv: &[&str]) -> Vec<u32> {
    let want: Vec<u8> = argv
        .iter()
        .flat_map(|a| [a.as_bytes(), b"\0"].concat())
        .collect();
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| std::fs::read(format!("/proc/{pid}/cmdline")).is_ok_and(|c| c == want))
        .filter(|pid| crate::support::process_state(*pid).is_some_and(|s| s != 'Z'))
        .collect()
}

#[test]
fn what_a_served_call_leaves_in_the_background_ends_with_its_worker() {
    let t = Tai::new("workers-orphans");
    let s = serve(&t);
    let mut c = Client::connect(s.port);
    // Detached three ways, one without tai's mark: none may outlive the call's worker.
    let command = "(sleep 3331 >/dev/null 2>&1 </dev/null &); \
                   setsid env -u TAI_CHILD sleep 3332 >/dev/null 2>&1 </dev/null & \
                   nohup sleep 3333 >/dev/null 2>&1 </dev/null & echo started";
    let (body, headers) = modern(
        1,
        "tools/call",
        json!({"name": "shell", "arguments": {"command": command}}),
    );
    let (status, _, out) = c.call(&body, &headers);
    assert_eq!(status, 200, "{out}");
    assert!(tool_text(&out).contains("started"), "{out}");
    let t0 = Instant::now();
    let left = |n: &str| processes_running(&["sleep", n]);
    while ["3331", "3332", "3333"].iter().any(|n| !left(n).is_empty())
        && t0.elapsed() < Duration::from_secs(3)
    {
        std::thread::sleep(Duration::from_millis(20));
    }
    for n in ["3331", "3332", "3333"] {
        assert!(
            left(n).is_empty(),
            "`sleep {n}` outlived its call's worker: {:?}",
            left(n)
        );
    }
}

#[test]
fn connection_close_is_honoured_after_a_workers_answer() {
    let t = Tai::new("workers-close");
    let s = serve(&t);
    let mut c = Client::connect(s.port);
    let (body, mut headers) = modern(
        1,
        "tools/call",
        json!({"name": "shell", "arguments": {"command": "echo done"}}),
    );
    headers.push(("connection".to_string(), "close".to_string()));
    c.send(&body, &headers);
    let (status, _, out) = c.receive();
    assert_eq!(status, 200, "{out}");
    assert!(tool_text(&out).contains("done"), "{out}");
    // then the server closes, as it does after an inline answer (not at the idle timeout)
    let t0 = Instant::now();
    c.stream
        .set_read_timeout(Some(Duration::from_secs(20)))
        .unwrap();
    let mut rest = Vec::new();
    let _ = c.reader.read_to_end(&mut rest);
    assert!(
        t0.elapsed() < Duration::from_secs(3),
        "the connection stayed open {:?} after the answer",
        t0.elapsed()
    );
}
