//! `tai --serve-mcp` against hostile network clients: admission on the head before any
//! body, unauthenticated connections in their own small share of slots, write and listen
//! deadlines, smuggling-shaped framing, the Host check beyond loopback, and the stdio
//! server's line cap.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use serde_json::json;

use crate::serve_http::{AUTH, CT, KEY, Served, raw, serve};
use crate::support::{Tai, free_port};

const MODERN_LIST: &str = r#"{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#;
const V26: (&str, &str) = ("mcp-protocol-version", "2026-07-28");
const LIST: (&str, &str) = ("mcp-method", "tools/list");

/// Resident memory of a process in kB (VmRSS), from /proc.
fn rss_kb(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .unwrap_or_default()
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

/// One authenticated request: its status and how long it took.
fn timed_list(port: u16) -> (u16, Duration) {
    let t0 = Instant::now();
    let status = raw(port, "POST", &[CT, AUTH, V26, LIST], MODERN_LIST).0;
    (status, t0.elapsed())
}

/// Read until the server closes (EOF or reset) or `limit` passes; (bytes, closed).
fn read_to_close(sock: &mut TcpStream, limit: Duration) -> (Vec<u8>, bool) {
    let until = Instant::now() + limit;
    sock.set_read_timeout(Some(Duration::from_millis(200)))
        .unwrap();
    let mut got = Vec::new();
    let mut buf = [0u8; 64 * 1024];
    while Instant::now() < until {
        match sock.read(&mut buf) {
            Ok(0) => return (got, true),
            Ok(n) => got.extend_from_slice(&buf[..n]),
            Err(e)
                if e.kind() == std::io::ErrorKind::WouldBlock
                    || e.kind() == std::io::ErrorKind::TimedOut => {}
            Err(_) => return (got, true), // reset: closed
        }
    }
    (got, false)
}

/// 64 connections that never authenticate, opened again and again, do not keep an
/// authenticated client from being served within 1 s.
#[test]
fn unauthenticated_connections_cannot_starve_a_keyed_client() {
    let t = Tai::new("hostile-slots");
    let s = serve(&t);
    let port = s.port;
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let flood = {
        let stop = stop.clone();
        std::thread::spawn(move || {
            // 64 sockets kept open: one the server closes (or refuses) is opened again.
            let open = || {
                let c = TcpStream::connect(("127.0.0.1", port)).ok()?;
                let mut c = c;
                // Half a head, then nothing: a slot held as long as the server allows.
                c.write_all(b"POST /mcp HTTP/1.1\r\nhost: x\r\n").ok()?;
                c.set_nonblocking(true).ok()?;
                Some(c)
            };
            let mut held: Vec<Option<TcpStream>> = (0..64).map(|_| open()).collect();
            let mut buf = [0u8; 256];
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                for slot in held.iter_mut() {
                    let closed = match slot {
                        None => true,
                        Some(c) => match c.read(&mut buf) {
                            Ok(_) => true, // an answer (503, 408…) or EOF: the slot was lost
                            Err(e) => e.kind() != std::io::ErrorKind::WouldBlock,
                        },
                    };
                    if closed {
                        *slot = open();
                    }
                }
                std::thread::sleep(Duration::from_millis(5));
            }
        })
    };
    std::thread::sleep(Duration::from_millis(800)); // the flood is at 64 and churning
    for _ in 0..5 {
        let (status, took) = timed_list(port);
        assert_eq!(status, 200);
        assert!(took < Duration::from_secs(1), "served after {took:?}");
        std::thread::sleep(Duration::from_millis(100));
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    flood.join().unwrap();
}

/// 20 unauthenticated 9 MB bodies are refused on their heads: the server never holds
/// them (RSS stays under 32 MB) and answers 401.
#[test]
fn unauthenticated_bodies_are_never_buffered() {
    let t = Tai::new("hostile-bodies");
    let s = serve(&t);
    let port = s.port;
    let pid = s.child.id();
    let senders: Vec<_> = (0..20)
        .map(|_| {
            std::thread::spawn(move || {
                let mut c = TcpStream::connect(("127.0.0.1", port)).unwrap();
                c.set_write_timeout(Some(Duration::from_secs(5))).unwrap();
                let size = 9 * 1024 * 1024;
                let _ = c.write_all(
                    format!("POST /mcp HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: {size}\r\n\r\n")
                        .as_bytes(),
                );
                let chunk = vec![b' '; 64 * 1024];
                let mut sent = 0;
                while sent < size {
                    if c.write_all(&chunk).is_err() {
                        break; // refused and closed: as it should be
                    }
                    sent += chunk.len();
                }
                let (got, _) = read_to_close(&mut c, Duration::from_secs(3));
                String::from_utf8_lossy(&got).into_owned()
            })
        })
        .collect();
    let mut peak = 0;
    while !senders.iter().all(|h| h.is_finished()) {
        peak = peak.max(rss_kb(pid));
        std::thread::sleep(Duration::from_millis(10));
    }
    let answers: Vec<String> = senders.into_iter().map(|h| h.join().unwrap()).collect();
    peak = peak.max(rss_kb(pid));
    assert!(peak > 0, "no RSS sample");
    assert!(peak < 32 * 1024, "the server's RSS reached {peak} kB");
    assert!(
        answers.iter().any(|a| a.starts_with("HTTP/1.1 401")),
        "{answers:?}"
    );
    assert_eq!(timed_list(port).0, 200, "the server goes on");
}

/// A client that asks and asks but never reads is closed by the write deadline, and
/// no more of its requests are read meanwhile (the answers are not all produced).
#[test]
fn a_client_that_does_not_read_is_closed() {
    let mut t = Tai::new("hostile-noread");
    // Only the write deadline is short: nothing else may close the connection first.
    t.env("TAI_MCP_TEST_LIMITS", "write=400,request=60000,idle=60000");
    let s = serve(&t);
    let mut sock = TcpStream::connect(("127.0.0.1", s.port)).unwrap();
    let one = format!(
        "POST /mcp HTTP/1.1\r\nhost: x\r\nauthorization: Bearer {KEY}\r\ncontent-type: application/json\r\nmcp-protocol-version: 2026-07-28\r\nmcp-method: tools/list\r\ncontent-length: {}\r\n\r\n{MODERN_LIST}",
        MODERN_LIST.len()
    );
    let n = 20000;
    sock.set_write_timeout(Some(Duration::from_secs(3)))
        .unwrap();
    let mut written = 0;
    for _ in 0..n {
        if sock.write_all(one.as_bytes()).is_err() {
            break;
        }
        written += 1;
    }
    std::thread::sleep(Duration::from_millis(2000)); // well past the write deadline
    let (got, closed) = read_to_close(&mut sock, Duration::from_secs(10));
    let answered = String::from_utf8_lossy(&got)
        .matches("HTTP/1.1 200")
        .count();
    assert!(
        closed,
        "the connection is still open after {answered} answers"
    );
    assert!(
        answered < written,
        "every one of {written} requests was answered: nothing held the reader back"
    );
}

/// A listen stream nobody reads ends at its idle limit: the stream's response and the
/// last chunk, then the connection closes.
#[test]
fn an_unread_listen_stream_is_ended() {
    let mut t = Tai::new("hostile-listen");
    t.env("TAI_MCP_TEST_LIMITS", "listen_idle=800,keepalive=50");
    let s = serve(&t);
    let listen = json!({"jsonrpc": "2.0", "id": "sub-9", "method": "subscriptions/listen",
        "params": {"notifications": {"toolsListChanged": true}, "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}}}}).to_string();
    let mut sock = TcpStream::connect(("127.0.0.1", s.port)).unwrap();
    sock.write_all(format!(
        "POST /mcp HTTP/1.1\r\nhost: x\r\nauthorization: Bearer {KEY}\r\ncontent-type: application/json\r\nmcp-protocol-version: 2026-07-28\r\nmcp-method: subscriptions/listen\r\ncontent-length: {}\r\n\r\n{listen}",
        listen.len()
    ).as_bytes()).unwrap();
    std::thread::sleep(Duration::from_millis(2500)); // unread, past the idle limit
    let (got, closed) = read_to_close(&mut sock, Duration::from_secs(5));
    let text = String::from_utf8_lossy(&got);
    assert!(closed, "the listen stream is still open: {text}");
    assert!(
        text.contains("acknowledged") && text.contains(r#""resultType":"complete""#),
        "{text}"
    );
    assert!(text.matches(": keepalive").count() >= 2, "{text}");
}

/// One raw request of exactly `head` and `body` on its own connection; what came back
/// and whether the server closed the connection after it.
fn exchange(port: u16, head: &str, body: &[u8]) -> (String, bool) {
    let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    s.write_all(head.as_bytes()).unwrap();
    s.write_all(body).unwrap();
    let (got, closed) = read_to_close(&mut s, Duration::from_secs(3));
    (String::from_utf8_lossy(&got).into_owned(), closed)
}

/// Framing a proxy could read two ways is refused and the connection closed; an unknown
/// transfer coding is 501; the auth scheme is case-insensitive.
#[test]
fn smuggling_shapes_and_the_auth_scheme() {
    let t = Tai::new("hostile-framing");
    let s = serve(&t);
    let p = s.port;
    let body = MODERN_LIST.as_bytes();
    let chunked = format!("{:x}\r\n{MODERN_LIST}\r\n0\r\n\r\n", body.len());
    let head = |extra: &str| {
        format!(
            "POST /mcp HTTP/1.1\r\nhost: x\r\nauthorization: Bearer {KEY}\r\ncontent-type: application/json\r\nmcp-protocol-version: 2026-07-28\r\nmcp-method: tools/list\r\n{extra}\r\n"
        )
    };
    // Content-Length and Transfer-Encoding together: 400, closed.
    let (got, closed) = exchange(
        p,
        &head(&format!(
            "content-length: {}\r\ntransfer-encoding: chunked\r\n",
            chunked.len()
        )),
        chunked.as_bytes(),
    );
    assert!(got.starts_with("HTTP/1.1 400"), "{got}");
    assert!(closed && got.matches("HTTP/1.1").count() == 1, "{got}");
    // An unknown transfer coding (not "chunked"): 501.
    for coding in ["xchunked", "gzip, chunked", "chunked, chunked"] {
        let (got, closed) = exchange(
            p,
            &head(&format!("transfer-encoding: {coding}\r\n")),
            chunked.as_bytes(),
        );
        assert!(got.starts_with("HTTP/1.1 501"), "{coding}: {got}");
        assert!(closed, "{coding}");
    }
    // Chunked alone is fine.
    let (got, _) = exchange(
        p,
        &head("transfer-encoding: chunked\r\nconnection: close\r\n"),
        chunked.as_bytes(),
    );
    assert!(got.starts_with("HTTP/1.1 200"), "{got}");
    // Conflicting lengths: 400.
    let (got, _) = exchange(
        p,
        &head("content-length: 5\r\ncontent-length: 6\r\n"),
        b"123456",
    );
    assert!(got.starts_with("HTTP/1.1 400"), "{got}");
    // The scheme in any case.
    for scheme in ["bearer", "BEARER", "Bearer"] {
        let auth = format!("{scheme} {KEY}");
        let (status, _, body) = raw(
            p,
            "POST",
            &[CT, ("authorization", &auth), V26, LIST],
            MODERN_LIST,
        );
        assert_eq!(status, 200, "{scheme}: {body}");
    }
    let (status, _, _) = raw(
        p,
        "POST",
        &[CT, ("authorization", KEY), V26, LIST],
        MODERN_LIST,
    );
    assert_eq!(status, 401, "a key with no scheme");
}

/// A body that arrives in two pieces, split anywhere (inside a chunk's size line, its
/// data, its CRLF, the last chunk), is read whole: the answer is the same as for one
/// write, nothing of the body lost or doubled.
#[test]
fn a_body_split_anywhere_is_read_whole() {
    let t = Tai::new("hostile-split-body");
    let s = serve(&t);
    let head = |framing: &str| {
        format!(
            "POST /mcp HTTP/1.1\r\nhost: x\r\nauthorization: Bearer {KEY}\r\ncontent-type: application/json\r\nmcp-protocol-version: 2026-07-28\r\nmcp-method: tools/list\r\nconnection: close\r\n{framing}\r\n"
        )
    };
    let chunked = format!(
        "{:x}\r\n{}\r\n{:x}\r\n{}\r\n0\r\n\r\n",
        40,
        &MODERN_LIST[..40],
        MODERN_LIST.len() - 40,
        &MODERN_LIST[40..]
    );
    let cases = [
        (
            head(&format!("content-length: {}\r\n", MODERN_LIST.len())),
            MODERN_LIST.to_string(),
        ),
        (head("transfer-encoding: chunked\r\n"), chunked),
    ];
    for (head, body) in &cases {
        for cut in 0..=body.len() {
            let mut sock = TcpStream::connect(("127.0.0.1", s.port)).unwrap();
            sock.set_nodelay(true).unwrap();
            sock.write_all(head.as_bytes()).unwrap();
            sock.write_all(&body.as_bytes()[..cut]).unwrap();
            std::thread::sleep(Duration::from_millis(2));
            sock.write_all(&body.as_bytes()[cut..]).unwrap();
            let (got, _) = read_to_close(&mut sock, Duration::from_secs(5));
            let got = String::from_utf8_lossy(&got);
            assert!(got.starts_with("HTTP/1.1 200"), "cut {cut}: {got}");
            assert!(
                got.contains(r#""id":2"#) && got.contains(r#""name":"list_dir""#),
                "cut {cut} of {head}: {got}"
            );
        }
    }
}

const LONG_KEY: &str = "k-0123456789abcdef0123456789abcdef";

fn serve_bound(t: &Tai, bind: &str, key: &str) -> Result<Served, String> {
    let port = free_port();
    let mut child = t
        .cmd(&[
            "--serve-mcp",
            key,
            "--mcp-port",
            &port.to_string(),
            "--mcp-bind",
            bind,
        ])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let until = Instant::now() + Duration::from_secs(10);
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        if let Ok(Some(_)) = child.try_wait() {
            let mut err = String::new();
            let _ = child.stderr.take().unwrap().read_to_string(&mut err);
            return Err(err);
        }
        assert!(Instant::now() < until, "the server did not start");
        std::thread::sleep(Duration::from_millis(20));
    }
    Ok(Served { child, port })
}

/// Beyond loopback: a short key is refused at start-up; with a long one the Host header
/// must name an IP address (DNS rebinding), and the start-up says so.
#[test]
fn beyond_loopback_the_key_is_long_and_host_is_checked() {
    let t = Tai::new("hostile-bind");
    let err = serve_bound(&t, "0.0.0.0", "short-key-123")
        .err()
        .expect("refused");
    assert!(err.contains("at least 32 characters"), "{err}");
    let mut s = serve_bound(&t, "0.0.0.0", LONG_KEY).unwrap();
    let auth = format!("Bearer {LONG_KEY}");
    let ask = |host: &str| {
        let (got, _) = exchange(
            s.port,
            &format!(
                "POST /mcp HTTP/1.1\r\nhost: {host}\r\nauthorization: {auth}\r\ncontent-type: application/json\r\nmcp-protocol-version: 2026-07-28\r\nmcp-method: tools/list\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
                MODERN_LIST.len()
            ),
            MODERN_LIST.as_bytes(),
        );
        got.split_whitespace().nth(1).unwrap_or("").to_string()
    };
    assert_eq!(ask(&format!("127.0.0.1:{}", s.port)), "200");
    assert_eq!(ask("[::1]"), "200");
    assert_eq!(ask("localhost"), "200");
    assert_eq!(ask("rebound.evil.example"), "403");
    assert_eq!(ask(&format!("rebound.evil.example:{}", s.port)), "403");
    let _ = nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(s.child.id() as i32),
        nix::sys::signal::Signal::SIGTERM,
    );
    let mut err = String::new();
    let _ = s.child.stderr.take().unwrap().read_to_string(&mut err);
    assert!(
        err.contains("beyond loopback at 0.0.0.0") && err.contains("Host must be"),
        "{err}"
    );
}

/// On loopback the Host is not checked (a local client may name itself any way).
#[test]
fn on_loopback_any_host_is_served() {
    let t = Tai::new("hostile-host-lo");
    let s = serve(&t);
    let (got, _) = exchange(
        s.port,
        &format!(
            "POST /mcp HTTP/1.1\r\nhost: my-laptop.local\r\nauthorization: Bearer {KEY}\r\ncontent-type: application/json\r\nmcp-protocol-version: 2026-07-28\r\nmcp-method: tools/list\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
            MODERN_LIST.len()
        ),
        MODERN_LIST.as_bytes(),
    );
    assert!(got.starts_with("HTTP/1.1 200"), "{got}");
}

/// `--serve-mcp-stdio` and a 20 MB line: answered with a JSON-RPC error, never held whole
/// (the server's RSS grows by less than the line), and the next request is served.
#[test]
fn a_huge_stdio_line_is_an_error_with_bounded_memory() {
    use std::io::BufRead;
    let t = Tai::new("hostile-stdio-line");
    let mut child = t
        .cmd(&["--serve-mcp-stdio"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let pid = child.id();
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = std::io::BufReader::new(child.stdout.take().unwrap());
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}});
    writeln!(stdin, "{init}").unwrap();
    let mut line = String::new();
    stdout.read_line(&mut line).unwrap();
    assert!(line.contains("\"protocolVersion\""), "{line}");
    let baseline = rss_kb(pid);
    let writer = std::thread::spawn(move || {
        let chunk = vec![b'a'; 1024 * 1024];
        for _ in 0..20 {
            stdin.write_all(&chunk).unwrap();
        }
        stdin.write_all(b"\n").unwrap();
        let ping = json!({"jsonrpc": "2.0", "id": 2, "method": "ping"});
        writeln!(stdin, "{ping}").unwrap();
        stdin
    });
    let mut peak = baseline;
    while !writer.is_finished() {
        peak = peak.max(rss_kb(pid));
        std::thread::sleep(Duration::from_millis(5));
    }
    let stdin = writer.join().unwrap();
    line.clear();
    stdout.read_line(&mut line).unwrap();
    peak = peak.max(rss_kb(pid));
    assert!(
        peak.saturating_sub(baseline) < 16 * 1024,
        "RSS grew from {baseline} kB to {peak} kB for one line"
    );
    let err: serde_json::Value = serde_json::from_str(&line).unwrap();
    assert_eq!(err["error"]["code"], -32600, "{line}");
    assert!(
        err["error"]["message"]
            .as_str()
            .unwrap()
            .contains("MCP_HTTP_MAX_BODY"),
        "{line}"
    );
    line.clear();
    stdout.read_line(&mut line).unwrap();
    assert!(
        line.contains(r#""id":2"#) && line.contains("result"),
        "{line}"
    );
    drop(stdin);
    assert!(child.wait().unwrap().success());
}

/// A served `read_file` of a FIFO planted in the working directory (no writer: the open
/// would block the one loop forever) and of a symlink to /dev/zero (read until memory ran
/// out) each answer with an error, while another client's `tools/list` is still answered
/// within 5 s.
#[test]
fn a_fifo_or_device_in_the_served_directory_is_refused_without_stalling_the_loop() {
    let t = Tai::new("hostile-fifo");
    let work = t.dir.path().join("work");
    std::fs::create_dir_all(&work).unwrap();
    nix::unistd::mkfifo(
        &work.join("pipe"),
        nix::sys::stat::Mode::from_bits_truncate(0o600),
    )
    .unwrap();
    std::os::unix::fs::symlink("/dev/zero", work.join("zero")).unwrap();
    let port = free_port();
    let child = t
        .cmd(&["--serve-mcp", KEY, "--mcp-port", &port.to_string()])
        .current_dir(&work)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let served = Served { child, port };
    let until = Instant::now() + Duration::from_secs(10);
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(Instant::now() < until, "the server did not start");
        std::thread::sleep(Duration::from_millis(20));
    }
    let read = |path: &str| {
        let body = json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {
            "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                      "io.modelcontextprotocol/clientCapabilities": {}},
            "name": "read_file", "arguments": {"path": path}}})
        .to_string();
        let headers = [
            CT,
            AUTH,
            V26,
            ("mcp-method", "tools/call"),
            ("mcp-name", "read_file"),
        ];
        std::thread::spawn(move || raw(port, "POST", &headers, &body))
    };
    let mut failures = Vec::new();
    for path in ["pipe", "zero"] {
        let call = read(path);
        std::thread::sleep(Duration::from_millis(300));
        let (status, took) = timed_list(served.port);
        if status != 200 || took >= Duration::from_secs(5) {
            failures.push(format!(
                "tools/list answered {status} after {took:?} while read_file {path} ran"
            ));
        }
        let (status, _, body) = call.join().unwrap();
        let v: serde_json::Value = serde_json::from_str(&body).unwrap_or_default();
        if status != 200
            || v["result"]["isError"] != true
            || !body.contains("is not a regular file")
        {
            failures.push(format!("read_file {path}: {status} {body}"));
        }
    }
    if !failures.is_empty() {
        // A loop stuck in open(2) would not end on the SIGTERM `Served` sends when dropped.
        let _ = nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(served.child.id() as i32),
            nix::sys::signal::Signal::SIGKILL,
        );
    }
    assert!(failures.is_empty(), "{failures:#?}");
}
