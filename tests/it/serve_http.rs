//! `tai --serve-mcp KEY` over loopback: both eras, every status the endpoint answers,
//! sessions, one thread under eight concurrent clients, and a slow client that blocks
//! nobody.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::support::{Tai, free_port, sample_threads};

pub(crate) const KEY: &str = "test-key-0123456789";

pub(crate) struct Served {
    pub(crate) child: std::process::Child,
    pub(crate) port: u16,
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(self.child.id() as i32),
            nix::sys::signal::Signal::SIGTERM,
        );
        let _ = self.child.wait();
    }
}

pub(crate) fn serve(t: &Tai) -> Served {
    serve_with(t, &[])
}

/// `tai --serve-mcp KEY` on a free port with `extra` flags, once it accepts connections.
pub(crate) fn serve_with(t: &Tai, extra: &[&str]) -> Served {
    let port = free_port();
    let p = port.to_string();
    let mut args = vec!["--serve-mcp", KEY, "--mcp-port", &p];
    args.extend_from_slice(extra);
    let child = t
        .cmd(&args)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let until = Instant::now() + Duration::from_secs(10);
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(Instant::now() < until, "the server did not start");
        std::thread::sleep(Duration::from_millis(20));
    }
    Served { child, port }
}

/// One raw request on its own connection: (status, headers, body).
pub(crate) fn raw(
    port: u16,
    method: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> (u16, String, String) {
    let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let mut req = format!(
        "{method} /mcp HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-length: {}\r\nconnection: close\r\n",
        body.len()
    );
    for (k, v) in headers {
        req.push_str(&format!("{k}: {v}\r\n"));
    }
    req.push_str("\r\n");
    req.push_str(body);
    s.write_all(req.as_bytes()).unwrap();
    let mut out = String::new();
    let _ = s.read_to_string(&mut out);
    let (head, body) = out.split_once("\r\n\r\n").unwrap_or((&out, ""));
    let status = head
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    (status, head.to_lowercase(), body.to_string())
}

pub(crate) const AUTH: (&str, &str) = ("authorization", "Bearer test-key-0123456789");
pub(crate) const CT: (&str, &str) = ("content-type", "application/json");

/// One 2026-07-28 `tools/call` on its own connection (the `_meta` and the `Mcp-*`
/// headers the era wants): (status, body).
pub(crate) fn modern_call(port: u16, id: u64, tool: &str, arguments: Value) -> (u16, String) {
    let meta = json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}});
    let body = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": {"_meta": meta, "name": tool, "arguments": arguments}});
    let (status, _, out) = raw(
        port,
        "POST",
        &[
            CT,
            AUTH,
            ("mcp-protocol-version", "2026-07-28"),
            ("mcp-method", "tools/call"),
            ("mcp-name", tool),
        ],
        &body.to_string(),
    );
    (status, out)
}

fn code(body: &str) -> i64 {
    serde_json::from_str::<Value>(body)
        .ok()
        .and_then(|v| v["error"]["code"].as_i64())
        .unwrap_or(0)
}

#[test]
fn both_eras_through_tais_client() {
    let t = Tai::new("http-serve-eras");
    let s = serve(&t);
    let url = format!("http://127.0.0.1:{}/mcp", s.port);
    for (protocol, era) in [
        ("auto", "modern"),
        ("2025-11-25", "legacy"),
        ("2026-07-28", "modern"),
    ] {
        let run = t.run(&[
            "mcp",
            "probe",
            &url,
            "--json",
            "--protocol",
            protocol,
            "--header",
            &format!("Authorization: Bearer {KEY}"),
            "--call",
            "list_dir",
            "--args",
            r#"{"path": "/"}"#,
        ]);
        let v: Value = serde_json::from_str(run.ok()).unwrap();
        assert_eq!(
            (v["era"].as_str(), v["server"]["name"].as_str()),
            (Some(era), Some("tai")),
            "{protocol}"
        );
        assert!(
            v["call"]["content"][0]["text"]
                .as_str()
                .unwrap()
                .contains("tmp/")
        );
    }
    // without the key: an error about credentials, not a guess about the era
    let err = t.run(&["mcp", "probe", &url]).fails(1).to_string();
    assert!(err.contains("HTTP 401"), "{err}");
}

#[test]
fn every_status_the_endpoint_answers() {
    let t = Tai::new("http-serve-status");
    let s = serve(&t);
    let p = s.port;
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}}).to_string();
    assert_eq!(raw(p, "POST", &[CT], &init).0, 401, "no key");
    assert_eq!(
        raw(
            p,
            "POST",
            &[CT, ("authorization", "Bearer wrong-key-000000")],
            &init
        )
        .0,
        401,
        "wrong key"
    );
    assert_eq!(
        raw(
            p,
            "POST",
            &[CT, AUTH, ("origin", "http://evil.example")],
            &init
        )
        .0,
        403
    );
    assert_eq!(
        raw(
            p,
            "POST",
            &[CT, AUTH, ("origin", "http://localhost:3000")],
            &init
        )
        .0,
        200
    );
    assert_eq!(raw(p, "GET", &[AUTH], "").0, 405);
    let (status, _, body) = raw(p, "POST", &[CT, AUTH], "{not json");
    assert_eq!((status, code(&body)), (400, -32700));
    let (status, _, body) = raw(
        p,
        "POST",
        &[CT, AUTH],
        r#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#,
    );
    assert_eq!((status, code(&body)), (400, -32600));
    // 413 before the body is read: announce 11 MB and send none of it
    let mut sock = TcpStream::connect(("127.0.0.1", p)).unwrap();
    sock.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    sock.write_all(format!("POST /mcp HTTP/1.1\r\nhost: x\r\nauthorization: Bearer {KEY}\r\ncontent-length: 11000000\r\n\r\n").as_bytes()).unwrap();
    let mut head = [0u8; 64];
    let n = sock.read(&mut head).unwrap();
    assert!(String::from_utf8_lossy(&head[..n]).starts_with("HTTP/1.1 413"));

    // legacy sessions
    let (status, head, _) = raw(p, "POST", &[CT, AUTH], &init);
    assert_eq!(status, 200);
    let sid = head
        .lines()
        .find_map(|l| l.strip_prefix("mcp-session-id: "))
        .unwrap()
        .trim()
        .to_string();
    let list = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}).to_string();
    assert_eq!(raw(p, "POST", &[CT, AUTH], &list).0, 400, "no session");
    assert_eq!(
        raw(p, "POST", &[CT, AUTH, ("mcp-session-id", "nope")], &list).0,
        404,
        "unknown session"
    );
    let (status, _, body) = raw(p, "POST", &[CT, AUTH, ("mcp-session-id", &sid)], &list);
    assert_eq!(status, 200);
    assert!(body.contains("\"chat\""));
    let note = json!({"jsonrpc": "2.0", "method": "notifications/initialized"}).to_string();
    assert_eq!(
        raw(p, "POST", &[CT, AUTH, ("mcp-session-id", &sid)], &note).0,
        202
    );
    assert_eq!(
        raw(p, "DELETE", &[AUTH, ("mcp-session-id", &sid)], "").0,
        200
    );
    assert_eq!(
        raw(p, "POST", &[CT, AUTH, ("mcp-session-id", &sid)], &list).0,
        404,
        "deleted"
    );

    // 2026-07-28: headers must match the body
    let meta = json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}});
    let modern = |method: &str, extra: Value| {
        let mut params = json!({"_meta": meta});
        if let (Some(p), Some(e)) = (params.as_object_mut(), extra.as_object()) {
            p.extend(e.clone());
        }
        json!({"jsonrpc": "2.0", "id": 9, "method": method, "params": params}).to_string()
    };
    let v26 = ("mcp-protocol-version", "2026-07-28");
    let (status, _, body) = raw(
        p,
        "POST",
        &[CT, AUTH, v26, ("mcp-method", "tools/list")],
        &modern("tools/list", json!({})),
    );
    assert_eq!(status, 200);
    assert_eq!(
        serde_json::from_str::<Value>(&body).unwrap()["result"]["resultType"],
        "complete"
    );
    let (status, _, body) = raw(
        p,
        "POST",
        &[CT, AUTH, v26, ("mcp-method", "tools/call")],
        &modern("tools/list", json!({})),
    );
    assert_eq!((status, code(&body)), (400, -32020), "Mcp-Method mismatch");
    let (status, _, body) = raw(
        p,
        "POST",
        &[CT, AUTH, ("mcp-method", "tools/list")],
        &modern("tools/list", json!({})),
    );
    assert_eq!(
        (status, code(&body)),
        (400, -32020),
        "no MCP-Protocol-Version"
    );
    let call = modern(
        "tools/call",
        json!({"name": "secret_list", "arguments": {}}),
    );
    let (status, _, body) = raw(
        p,
        "POST",
        &[
            CT,
            AUTH,
            v26,
            ("mcp-method", "tools/call"),
            ("mcp-name", "read_file"),
        ],
        &call,
    );
    assert_eq!((status, code(&body)), (400, -32020), "Mcp-Name mismatch");
    let (status, _, body) = raw(
        p,
        "POST",
        &[
            CT,
            AUTH,
            v26,
            ("mcp-method", "tools/call"),
            ("mcp-name", "secret_list"),
        ],
        &call,
    );
    assert_eq!(status, 200, "{body}");
    let (status, _, body) = raw(
        p,
        "POST",
        &[CT, AUTH, v26, ("mcp-method", "ping")],
        &modern("ping", json!({})),
    );
    assert_eq!(
        (status, code(&body)),
        (404, -32601),
        "ping does not exist in 2026"
    );
    let bad = json!({"jsonrpc": "2.0", "id": 3, "method": "tools/list", "params": {"_meta": {"io.modelcontextprotocol/protocolVersion": "2027-01-01", "io.modelcontextprotocol/clientCapabilities": {}}}}).to_string();
    let (status, _, body) = raw(
        p,
        "POST",
        &[
            CT,
            AUTH,
            ("mcp-protocol-version", "2027-01-01"),
            ("mcp-method", "tools/list"),
        ],
        &bad,
    );
    assert_eq!((status, code(&body)), (400, -32022));
}

#[test]
fn sessions_expire_when_idle() {
    let mut t = Tai::new("http-serve-idle");
    t.env("TAI_MCP_SESSION_IDLE", "1");
    let s = serve(&t);
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}}).to_string();
    let (_, head, _) = raw(s.port, "POST", &[CT, AUTH], &init);
    let sid = head
        .lines()
        .find_map(|l| l.strip_prefix("mcp-session-id: "))
        .unwrap()
        .trim()
        .to_string();
    let ping = json!({"jsonrpc": "2.0", "id": 2, "method": "ping"}).to_string();
    assert_eq!(
        raw(s.port, "POST", &[CT, AUTH, ("mcp-session-id", &sid)], &ping).0,
        200
    );
    std::thread::sleep(Duration::from_millis(1300));
    assert_eq!(
        raw(s.port, "POST", &[CT, AUTH, ("mcp-session-id", &sid)], &ping).0,
        404,
        "expired"
    );
}

#[test]
fn one_thread_for_eight_clients_and_a_slow_one_blocks_nobody() {
    let t = Tai::new("http-serve-load");
    let s = serve(&t);
    let url = format!("http://127.0.0.1:{}/mcp", s.port);
    // a slow client: half a request, never finished
    let mut slow = TcpStream::connect(("127.0.0.1", s.port)).unwrap();
    slow.write_all(b"POST /mcp HTTP/1.1\r\nhost: x\r\ncontent-le")
        .unwrap();
    let t0 = Instant::now();
    let quick = t.run(&[
        "mcp",
        "probe",
        &url,
        "--header",
        &format!("Authorization: Bearer {KEY}"),
        "--call",
        "secret_list",
    ]);
    quick.ok();
    assert!(
        t0.elapsed() < Duration::from_secs(5),
        "the slow client held others up: {:?}",
        t0.elapsed()
    );
    // eight at once, each a persistent connection making calls
    let clients: Vec<std::process::Child> = (0..8)
        .map(|_| {
            t.cmd(&[
                "mcp",
                "probe",
                &url,
                "--header",
                &format!("Authorization: Bearer {KEY}"),
                "--call",
                "list_dir",
                "--args",
                r#"{"path": "/"}"#,
                "--repeat",
                "60",
            ])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap()
        })
        .collect();
    let counts = sample_threads(s.child.id(), 6, 100);
    for mut c in clients {
        assert!(c.wait().unwrap().success());
    }
    assert!(
        counts.iter().all(|n| *n == 1),
        "the server had {counts:?} threads"
    );
    drop(slow);
}

/// The Python SDK's client over HTTP, with the bearer key, in both eras.
#[test]
fn the_python_sdk_client_over_http() {
    let p = crate::support::peers();
    let t = Tai::new("http-serve-python");
    let s = serve(&t);
    let url = format!("http://127.0.0.1:{}/mcp", s.port);
    let client = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/peers/py_client.py");
    for (mode, want) in [
        ("legacy", "2025-11-25"),
        ("auto", "2026-07-28"),
        ("2026-07-28", "2026-07-28"),
    ] {
        let out = std::process::Command::new(&p.python)
            .arg(&client)
            .args([mode, "--http", &url, KEY])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{mode}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let v: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(v["protocol"], want, "{mode}");
        assert!(
            v["tools"]
                .as_array()
                .unwrap()
                .iter()
                .any(|t| t == "completions"),
            "{mode}: {v}"
        );
        assert_eq!(
            (
                v["list_dir_error"].as_bool(),
                v["missing_file_error"].as_bool()
            ),
            (Some(false), Some(true)),
            "{mode}"
        );
    }
}

/// The MCP Inspector's CLI and mcporter list and call tools on tai with the bearer header.
#[test]
fn inspector_cli_and_mcporter() {
    let p = crate::support::peers();
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(".peers/clients/node_modules");
    let inspector = root.join("@modelcontextprotocol/inspector/clients/launcher/build/index.js");
    let mcporter = root.join("mcporter/dist/cli.js");
    assert!(
        inspector.exists() && mcporter.exists(),
        "missing peers: run tests/peers/install.sh"
    );
    let t = Tai::new("http-serve-clients");
    std::fs::create_dir_all(t.dir.path().join("docs")).unwrap();
    std::fs::write(t.dir.path().join("docs/a.md"), "x").unwrap();
    let s = serve(&t);
    let url = format!("http://127.0.0.1:{}/mcp", s.port);
    let dir = t.dir.path().join("docs").display().to_string();
    let node = |args: &[&str]| {
        let out = std::process::Command::new(&p.node)
            .args(args)
            .env("HOME", t.dir.path().join("home"))
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let auth = format!("Authorization: Bearer {KEY}");
    let ins = inspector.display().to_string();
    let listed = node(&[
        &ins,
        "--cli",
        &url,
        "--transport",
        "http",
        "--header",
        &auth,
        "--method",
        "tools/list",
    ]);
    assert!(
        listed.contains("\"completions\"") && listed.contains("\"read_file\""),
        "{listed:.300}"
    );
    let called = node(&[
        &ins,
        "--cli",
        &url,
        "--transport",
        "http",
        "--header",
        &auth,
        "--method",
        "tools/call",
        "--tool-name",
        "list_dir",
        "--tool-arg",
        &format!("path={dir}"),
    ]);
    assert!(called.contains("a.md"), "{called}");
    let mcp = mcporter.display().to_string();
    let header = format!("Authorization=Bearer {KEY}");
    let listed = node(&[
        &mcp,
        "list",
        "--http-url",
        &url,
        "--allow-http",
        "--header",
        &header,
        "--json",
    ]);
    assert!(listed.contains("\"chat\""), "{listed:.300}");
    let args = json!({"path": dir}).to_string();
    let called = node(&[
        &mcp,
        "call",
        "--http-url",
        &url,
        "--allow-http",
        "--header",
        &header,
        "--tool",
        "list_dir",
        "--args",
        &args,
        "--output",
        "json",
    ]);
    assert!(called.contains("a.md"), "{called}");
}

/// `subscriptions/listen`: acknowledged first, then held open inside the poll loop while
/// other requests are served; the client ending it closes it.
#[test]
fn a_listen_stream_stays_open_without_blocking_others() {
    let t = Tai::new("http-serve-listen");
    let s = serve(&t);
    let meta = json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}});
    let listen = json!({"jsonrpc": "2.0", "id": "sub-1", "method": "subscriptions/listen",
        "params": {"notifications": {"toolsListChanged": true, "resourceSubscriptions": ["file:///x"]}, "_meta": meta}}).to_string();
    let mut sock = TcpStream::connect(("127.0.0.1", s.port)).unwrap();
    sock.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let req = format!(
        "POST /mcp HTTP/1.1\r\nhost: x\r\nauthorization: Bearer {KEY}\r\ncontent-type: application/json\r\nmcp-protocol-version: 2026-07-28\r\nmcp-method: subscriptions/listen\r\ncontent-length: {}\r\n\r\n{listen}",
        listen.len()
    );
    sock.write_all(req.as_bytes()).unwrap();
    let mut got = Vec::new();
    let mut buf = [0u8; 4096];
    while !String::from_utf8_lossy(&got).contains("acknowledged") {
        let n = sock.read(&mut buf).expect("the acknowledgement arrives");
        assert!(
            n > 0,
            "the stream closed early: {}",
            String::from_utf8_lossy(&got)
        );
        got.extend_from_slice(&buf[..n]);
    }
    let text = String::from_utf8_lossy(&got).to_lowercase();
    assert!(
        text.starts_with("http/1.1 200") && text.contains("content-type: text/event-stream"),
        "{text}"
    );
    assert!(
        text.contains(r#"/subscriptionid":"sub-1""#) && text.contains(r#""toolslistchanged":true"#),
        "{text}"
    );
    assert!(
        !text.contains("resourcesubscriptions"),
        "tai serves no resources, so it honours no resource subscription"
    );
    // the stream is still open, and others are served meanwhile
    let list =
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {"_meta": meta}})
            .to_string();
    let list_status = || {
        let headers = [
            CT,
            AUTH,
            ("mcp-protocol-version", "2026-07-28"),
            ("mcp-method", "tools/list"),
        ];
        raw(s.port, "POST", &headers, &list).0
    };
    assert_eq!(list_status(), 200);
    sock.set_read_timeout(Some(Duration::from_millis(300)))
        .unwrap();
    let still_open = matches!(sock.read(&mut buf), Err(e) if e.kind() == std::io::ErrorKind::WouldBlock || e.kind() == std::io::ErrorKind::TimedOut);
    assert!(still_open, "the listen stream must stay open");
    drop(sock);
    assert_eq!(
        list_status(),
        200,
        "the server goes on after the client ends its stream"
    );
}

/// `chat` over stateless HTTP: the conversation handle comes back in the result and is
/// accepted in `session`; `completions` answers once. The stub model stands behind both.
#[test]
fn chat_handles_and_completions_over_http() {
    let dir = crate::support::TempDir::new("http-serve-chat");
    let model = crate::support::ModelStub::start(
        dir.path(),
        json!([{"text": "first answer"}, {"text": "second answer"}, {"text": "completed"}]),
    );
    let mut t = Tai::new("http-serve-chat-run");
    t.env("TAI_BASE_URL", &model.url)
        .env("TAI_MODEL", "stub-model");
    let s = serve(&t);
    let meta = json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}});
    let call = |name: &str, args: Value| {
        let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": name, "arguments": args, "_meta": meta}}).to_string();
        let (status, _, out) = raw(
            s.port,
            "POST",
            &[
                CT,
                AUTH,
                ("mcp-protocol-version", "2026-07-28"),
                ("mcp-method", "tools/call"),
                ("mcp-name", name),
            ],
            &body,
        );
        assert_eq!(status, 200, "{out}");
        let v: Value = serde_json::from_str(&out).unwrap();
        v["result"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .to_string()
    };
    let first: Value = serde_json::from_str(&call("chat", json!({"message": "hello"}))).unwrap();
    assert_eq!(first["answer"], "first answer");
    let handle = first["session"].as_str().unwrap().to_string();
    let second: Value = serde_json::from_str(&call(
        "chat",
        json!({"message": "again", "session": handle}),
    ))
    .unwrap();
    assert_eq!(
        (second["answer"].as_str(), second["session"].as_str()),
        (Some("second answer"), Some(handle.as_str()))
    );
    let users = crate::support::user_messages(&model.requests()[1]);
    assert_eq!(
        users,
        ["hello", "again"],
        "the handle continued the conversation"
    );
    assert!(
        call("chat", json!({"message": "x", "session": "conv-unknown"}))
            .contains("no conversation")
    );
    assert_eq!(
        call(
            "completions",
            json!({"messages": [{"role": "user", "content": "hi"}]})
        ),
        "completed"
    );
}

/// The server key given on the command line and the API key join the redaction set from
/// the start: a served tool that reads them back returns markers.
#[test]
fn served_tools_never_return_the_server_key_or_the_api_key() {
    let dir = crate::support::TempDir::new("http-serve-keys");
    let file = dir.path().join("keys.txt");
    std::fs::write(&file, format!("server {KEY} api sk-served-api-key-42")).unwrap();
    let mut t = Tai::new("http-serve-keys-run");
    t.env("TAI_API_KEY", "sk-served-api-key-42");
    let s = serve(&t);
    let meta = json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}});
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "read_file", "arguments": {"path": file}, "_meta": meta}}).to_string();
    let (status, _, out) = raw(
        s.port,
        "POST",
        &[
            CT,
            AUTH,
            ("mcp-protocol-version", "2026-07-28"),
            ("mcp-method", "tools/call"),
            ("mcp-name", "read_file"),
        ],
        &body,
    );
    assert_eq!(status, 200, "{out}");
    assert!(
        !out.contains(KEY) && !out.contains("sk-served-api-key-42"),
        "{out}"
    );
    assert!(
        out.contains("[REDACTED:server-key]") && out.contains("[REDACTED:api-key]"),
        "{out}"
    );
}
