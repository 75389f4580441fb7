//! Scale-out for real: Debian's nginx (installed by tests/peers/install.sh) in front of
//! two `tai --serve-mcp` processes sharing one vault, configured as docs/serve.md shows:
//! stateless (2026-07-28) requests round-robin, 2025-11-25 requests routed by
//! `Mcp-Session-Id`. One conversation continues across both processes, and a session
//! opened through the proxy works on either server.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::serve_http::{AUTH, CT, KEY, raw, serve};
use crate::support::{ModelStub, Tai, TempDir, free_port};

const NGINX: &str = "/usr/sbin/nginx";

/// The nginx configuration of docs/serve.md, for a temporary prefix.
fn nginx_conf(dir: &Path, listen: u16, servers: &[u16]) -> String {
    let d = dir.display();
    let upstream = |name: &str, extra: &str| {
        let mut u = format!("    upstream {name} {{\n{extra}");
        for p in servers {
            u.push_str(&format!("        server 127.0.0.1:{p};\n"));
        }
        u.push_str("        keepalive 8;\n    }\n");
        u
    };
    format!(
        "worker_processes 1;
daemon off;
pid {d}/nginx.pid;
error_log {d}/error.log info;
events {{ worker_connections 64; }}
http {{
    access_log {d}/access.log;
    client_body_temp_path {d}/body;
    proxy_temp_path {d}/proxy;
    fastcgi_temp_path {d}/fastcgi;
    uwsgi_temp_path {d}/uwsgi;
    scgi_temp_path {d}/scgi;
{stateless}{sessions}    map $http_mcp_session_id $tai_upstream {{
        \"\"      tai_stateless;
        default tai_sessions;
    }}
    server {{
        listen 127.0.0.1:{listen};
        location /mcp {{
            proxy_pass http://$tai_upstream;
            proxy_http_version 1.1;
            proxy_set_header Connection \"\";
            proxy_set_header Host $host;
            proxy_buffering off;
            proxy_read_timeout 660s;
        }}
    }}
}}
",
        stateless = upstream("tai_stateless", ""),
        sessions = upstream(
            "tai_sessions",
            "        hash $http_mcp_session_id consistent;\n"
        ),
    )
}

/// nginx in the foreground on `dir`, stopped when dropped.
struct Nginx(std::process::Child);

impl Drop for Nginx {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn start_nginx(dir: &Path, conf: &str, port: u16) -> Nginx {
    assert!(
        Path::new(NGINX).exists(),
        "missing peer {NGINX}: run tests/peers/install.sh (tests/run does)"
    );
    std::fs::write(dir.join("nginx.conf"), conf).unwrap();
    let child = std::process::Command::new(NGINX)
        .arg("-p")
        .arg(dir)
        .arg("-c")
        .arg(dir.join("nginx.conf"))
        .arg("-e")
        .arg(dir.join("error.log"))
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let until = Instant::now() + Duration::from_secs(10);
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            Instant::now() < until,
            "nginx did not start: {}",
            std::fs::read_to_string(dir.join("error.log")).unwrap_or_default()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    Nginx(child)
}

/// One POST with the key on its own connection (`serve_http::raw`): (status, lower-cased
/// head, body).
fn post(port: u16, body: &str, headers: &[(&str, &str)]) -> (u16, String, String) {
    let mut all = vec![AUTH, CT];
    all.extend_from_slice(headers);
    let (status, head, body) = raw(port, "POST", &all, body);
    // nginx may answer chunked: take the JSON object inside.
    let body = match (body.find('{'), body.rfind('}')) {
        (Some(a), Some(b)) if a <= b => body[a..=b].to_string(),
        _ => body,
    };
    (status, head, body)
}

fn modern_call(port: u16, name: &str, args: Value) -> Value {
    let meta = json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}});
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": name, "arguments": args, "_meta": meta}}).to_string();
    let (status, head, out) = post(
        port,
        &body,
        &[
            ("mcp-protocol-version", "2026-07-28"),
            ("mcp-method", "tools/call"),
            ("mcp-name", name),
        ],
    );
    assert_eq!(status, 200, "{head}{out}");
    serde_json::from_str(&out).unwrap_or_else(|_| panic!("{out}"))
}

/// A shell command whose output is the pid of the tai server it ran under (the shell's
/// parent is the worker; the worker's parent is the server).
const SERVER_PID: &str = "awk '{print $4}' /proc/$PPID/stat";

#[test]
fn two_servers_on_one_vault_behind_nginx_continue_one_conversation() {
    let dir = TempDir::new("scale-nginx");
    let shell = json!({"command": SERVER_PID}).to_string();
    let model = ModelStub::start(
        dir.path(),
        json!([
            {"tool_calls": [{"name": "shell", "arguments": shell}]},
            {"text": "one"},
            {"tool_calls": [{"name": "shell", "arguments": shell}]},
            {"text": "two"},
            {"text": "three"}
        ]),
    );
    let mut t = Tai::new("scale-nginx-run");
    t.env("TAI_BASE_URL", &model.url)
        .env("TAI_MODEL", "stub-model");
    let a = serve(&t);
    let b = serve(&t);
    let pids = [a.child.id().to_string(), b.child.id().to_string()];
    let port = free_port();
    let _nginx = start_nginx(
        dir.path(),
        &nginx_conf(dir.path(), port, &[a.port, b.port]),
        port,
    );

    // Stateless: round-robin; the second turn continues the first's handle.
    let text = |v: &Value| {
        v["result"]["content"][0]["text"]
            .as_str()
            .unwrap_or_else(|| panic!("{v}"))
            .to_string()
    };
    let first: Value = serde_json::from_str(&text(&modern_call(
        port,
        "chat",
        json!({"message": "hello"}),
    )))
    .unwrap();
    assert_eq!(first["answer"], "one", "{first}");
    let handle = first["session"].as_str().unwrap().to_string();
    let second: Value = serde_json::from_str(&text(&modern_call(
        port,
        "chat",
        json!({"message": "again", "session": handle}),
    )))
    .unwrap();
    assert_eq!(
        (second["answer"].as_str(), second["session"].as_str()),
        (Some("two"), Some(handle.as_str())),
        "{second}"
    );
    let reqs = model.requests();
    // Which server ran each turn: the shell's answer, as the model saw it.
    let ran_on = |i: usize| -> String {
        let tools = ModelStub::tool_messages(&reqs[i]);
        let last = tools.last().unwrap_or_else(|| panic!("{}", reqs[i]));
        pids.iter()
            .find(|p| last.contains(p.as_str()))
            .unwrap_or_else(|| panic!("no server pid in {last}"))
            .clone()
    };
    assert_ne!(
        ran_on(1),
        ran_on(3),
        "both turns ran on one server: nginx did not spread them"
    );
    let users = crate::support::user_messages(&reqs[3]);
    assert_eq!(
        users,
        ["hello", "again"],
        "the other server continued the conversation"
    );

    // 2025-11-25: initialize goes to either server (no session yet); the session id it
    // returns routes by hash, and works on both servers (they share it in the vault).
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}}).to_string();
    let (status, head, out) = post(port, &init, &[]);
    assert_eq!(status, 200, "{head}{out}");
    let session = head
        .lines()
        .find_map(|l| l.strip_prefix("mcp-session-id:"))
        .map(|v| v.trim().to_string())
        .unwrap_or_else(|| panic!("no session: {head}"));
    let ping = json!({"jsonrpc": "2.0", "id": 2, "method": "ping"}).to_string();
    for p in [port, a.port, b.port] {
        let (status, _, out) = post(p, &ping, &[("mcp-session-id", &session)]);
        assert_eq!(status, 200, "port {p}: {out}");
    }
    let call = json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "chat", "arguments": {"message": "legacy"}}}).to_string();
    let (status, _, out) = post(port, &call, &[("mcp-session-id", &session)]);
    assert_eq!(status, 200, "{out}");
    assert!(out.contains("three"), "{out}");
    // closed through the proxy: gone (the server it hashes to answers 404 at once; the
    // other drops its cached copy when it next checks the vault, within 30 s)
    let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    s.write_all(format!("DELETE /mcp HTTP/1.1\r\nhost: 127.0.0.1\r\nauthorization: Bearer {KEY}\r\nmcp-session-id: {session}\r\ncontent-length: 0\r\nconnection: close\r\n\r\n").as_bytes()).unwrap();
    let mut answer = String::new();
    let _ = s.read_to_string(&mut answer);
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    let (status, _, _) = post(port, &ping, &[("mcp-session-id", &session)]);
    assert_eq!(status, 404, "the deleted session still works");
}
