//! tai's MCP client against real third-party servers: the TypeScript SDK's
//! `server-everything` and a server written with the Python SDK, over stdio and HTTP.

use std::process::Command;

use serde_json::Value;

use crate::support::{Server, Tai, free_port, peers};

fn probe(t: &Tai, source: &str, extra: &[&str]) -> Value {
    let mut args = vec!["mcp", "probe", source, "--json"];
    args.extend_from_slice(extra);
    let run = t.run(&args);
    serde_json::from_str(&run.stdout).unwrap_or_else(|e| panic!("{e}: {run:?}"))
}

fn text(v: &Value) -> &str {
    v["call"]["content"][0]["text"].as_str().unwrap_or_default()
}

/// The checks both transports of server-everything must pass.
fn everything_checks(t: &Tai, source: &str) {
    let v = probe(
        t,
        source,
        &["--call", "echo", "--args", r#"{"message":"hello there"}"#],
    );
    assert_eq!(
        v["era"], "legacy",
        "server-everything speaks 2025-11-25 only"
    );
    assert_eq!(v["server"]["name"], "mcp-servers/everything");
    let names: Vec<&str> = v["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    for want in ["echo", "get-sum", "get-tiny-image", "gzip-file-as-resource"] {
        assert!(names.contains(&want), "{want} missing from {names:?}");
    }
    assert_eq!(text(&v), "Echo: hello there");
    // a tool that ran and failed: a result with isError, not a protocol error
    let v = probe(t, source, &["--call", "echo", "--args", "{}"]);
    assert_eq!(v["call"]["isError"], true);
    assert!(text(&v).contains("message"), "{v}");
    // a large result (an embedded gzip resource of ~200 KB) arrives whole
    // 150 KB of pseudo-random letters: gzip cannot shrink it below the 64 KB cap.
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    let raw: String = (0..150_000)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            char::from(b'a' + (x % 26) as u8)
        })
        .collect();
    let data = format!("data:text/plain,{raw}");
    let args =
        serde_json::json!({"name": "big.txt", "data": data, "outputType": "resource"}).to_string();
    let file = t.dir.path().join("gz-args.json");
    std::fs::write(&file, args).unwrap();
    let v = probe(
        t,
        source,
        &[
            "--call",
            "gzip-file-as-resource",
            "--args",
            &format!("@{}", file.display()),
        ],
    );
    assert_eq!(v["call"]["isError"], false, "{}", v["call"]);
    let blob = v["call"]["content"]
        .as_array()
        .unwrap()
        .iter()
        .find_map(|c| c["resource"]["blob"].as_str())
        .unwrap_or("");
    assert!(
        blob.len() > 64 * 1024,
        "the resource blob is {} bytes",
        blob.len()
    );
}

#[test]
fn server_everything_over_stdio() {
    let p = peers();
    let t = Tai::new("everything-stdio");
    everything_checks(
        &t,
        &format!("{} {}", p.node.display(), p.everything.display()),
    );
}

#[test]
fn server_everything_over_http() {
    let p = peers();
    let t = Tai::new("everything-http");
    let port = free_port();
    let mut cmd = Command::new(&p.node);
    cmd.arg(&p.everything)
        .arg("streamableHttp")
        .env("PORT", port.to_string());
    let _server = Server::start(cmd, port);
    everything_checks(&t, &format!("http://127.0.0.1:{port}/mcp"));
}

fn python_checks(t: &Tai, source: &str) {
    for (protocol, era) in [
        ("auto", "modern"),
        ("2026-07-28", "modern"),
        ("2025-11-25", "legacy"),
    ] {
        let v = probe(
            t,
            source,
            &[
                "--protocol",
                protocol,
                "--call",
                "add",
                "--args",
                r#"{"a":2,"b":40}"#,
            ],
        );
        assert_eq!(v["era"], era, "{protocol}");
        assert_eq!(v["server"]["name"], "py-peer");
        let names: Vec<&str> = v["tools"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|t| t["name"].as_str())
            .collect();
        assert_eq!(names, ["echo", "add", "fail", "big"]);
        assert_eq!(text(&v), "42", "{protocol}");
        let v = probe(t, source, &["--protocol", protocol, "--call", "fail"]);
        assert_eq!(v["call"]["isError"], true, "{protocol}");
        let err = t
            .run(&[
                "mcp",
                "probe",
                source,
                "--protocol",
                protocol,
                "--call",
                "nope",
            ])
            .fails(1)
            .to_string();
        assert!(err.contains("nope"), "{protocol}: {err}");
    }
}

#[test]
fn python_sdk_server_over_stdio_in_both_eras() {
    let p = peers();
    let t = Tai::new("py-stdio");
    python_checks(
        &t,
        &format!("{} {}", p.python.display(), p.py_server.display()),
    );
}

#[test]
fn python_sdk_server_over_http_in_both_eras() {
    let p = peers();
    let t = Tai::new("py-http");
    let port = free_port();
    let mut cmd = Command::new(&p.python);
    cmd.arg(&p.py_server).arg("http").arg(port.to_string());
    let _server = Server::start(cmd, port);
    python_checks(&t, &format!("http://127.0.0.1:{port}/mcp"));
}
