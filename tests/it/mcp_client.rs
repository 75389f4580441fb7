//! The MCP client end to end: `tai mcp probe` against the scripted stubs, over stdio and
//! HTTP, in both eras, through every misbehaviour the stubs can script.

use serde_json::{Value, json};

use crate::support::{HttpStub, Tai, stub_log, stub_stdio, thread_count, wait_gone};

fn probe(t: &Tai, source: &str, extra: &[&str]) -> Value {
    let mut args = vec!["mcp", "probe", source, "--json"];
    args.extend_from_slice(extra);
    let run = t.run(&args);
    serde_json::from_str(run.ok()).unwrap_or_else(|e| panic!("{e}: {run:?}"))
}

fn stdio(flags: &str) -> String {
    format!("{} {flags}", stub_stdio())
}

fn pids(log: &[Value]) -> Vec<u32> {
    log.iter()
        .filter_map(|l| l.get("pid").and_then(Value::as_u64))
        .map(|p| p as u32)
        .collect()
}

fn methods(log: &[Value]) -> Vec<String> {
    log.iter()
        .filter_map(|l| l.get("method").and_then(Value::as_str))
        .map(str::to_string)
        .collect()
}

#[test]
fn stdio_eras_auto_and_pinned() {
    let t = Tai::new("eras");
    let table: &[(&str, &[&str], &str)] = &[
        ("--era dual", &[], "modern"),
        ("--era legacy", &[], "legacy"),
        ("--era modern", &[], "modern"),
        ("--era dual", &["--protocol", "2025-11-25"], "legacy"),
        ("--era dual", &["--protocol", "2026-07-28"], "modern"),
        ("--era legacy", &["--protocol", "2025-11-25"], "legacy"),
    ];
    for (flags, extra, want) in table {
        let mut args = extra.to_vec();
        args.extend(["--call", "echo", "--args", r#"{"text":"hi"}"#]);
        let v = probe(&t, &stdio(flags), &args);
        assert_eq!(v["era"], *want, "{flags} {extra:?}");
        assert_eq!(v["server"]["name"], "tai-stub");
        assert_eq!(v["call"]["content"][0]["text"], "hi");
        assert_eq!(v["tools"].as_array().unwrap().len(), 7);
    }
    // pinned eras the server does not speak are clear errors
    let err = t
        .run(&[
            "mcp",
            "probe",
            &stdio("--era legacy"),
            "--protocol",
            "2026-07-28",
        ])
        .fails(1)
        .to_string();
    assert!(err.contains("does not speak 2026-07-28"), "{err}");
    let err = t
        .run(&[
            "mcp",
            "probe",
            &stdio("--era modern"),
            "--protocol",
            "2025-11-25",
        ])
        .fails(1)
        .to_string();
    assert!(err.contains("-32022"), "{err}");
}

#[test]
fn legacy_servers_that_exit_or_stay_silent_on_the_probe() {
    let t = Tai::new("probe-fallback");
    let log = t.dir.path().join("exit.log");
    let flags = format!(
        "--era legacy --exit-on-unexpected-first --log {}",
        log.display()
    );
    let v = probe(
        &t,
        &stdio(&flags),
        &["--call", "echo", "--args", r#"{"text":"again"}"#],
    );
    assert_eq!(
        (v["era"].as_str(), v["call"]["content"][0]["text"].as_str()),
        (Some("legacy"), Some("again"))
    );
    let log = stub_log(&log);
    let spawned = pids(&log);
    assert_eq!(
        spawned.len(),
        2,
        "the probe's child exited, so the server was started again: {log:?}"
    );
    for pid in spawned {
        assert_ne!(wait_gone(pid), Some('R'), "stub {pid} outlived tai");
    }
    let log = t.dir.path().join("silent.log");
    let flags = format!("--era legacy --silent-on-unknown --log {}", log.display());
    let v = probe(&t, &stdio(&flags), &["--probe-timeout", "0.3"]);
    assert_eq!(v["era"], "legacy");
    assert_eq!(
        methods(&stub_log(&log))[..2],
        ["server/discover", "initialize"]
    );
}

#[test]
fn pagination_is_followed_to_the_end() {
    let t = Tai::new("pages");
    let log = t.dir.path().join("pages.log");
    let flags = format!("--page-size 2 --tools 7 --log {}", log.display());
    let v = probe(&t, &stdio(&flags), &[]);
    let names: Vec<&str> = v["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(names.len(), 14);
    assert_eq!((names[0], names[13]), ("echo", "tool_006"));
    assert_eq!(
        methods(&stub_log(&log))
            .iter()
            .filter(|m| *m == "tools/list")
            .count(),
        7
    );
}

#[test]
fn tool_errors_stay_results_and_protocol_errors_stay_errors() {
    let t = Tai::new("errors");
    for era in ["legacy", "modern"] {
        let run = t.run(&[
            "mcp",
            "probe",
            &stdio(&format!("--era {era}")),
            "--json",
            "--call",
            "fail",
        ]);
        let v: Value = serde_json::from_str(&run.stdout).unwrap();
        assert_eq!(v["call"]["isError"], true, "{era}");
        assert!(run.fails(1).contains("ran and reported an error"));
        let err = t
            .run(&[
                "mcp",
                "probe",
                &stdio(&format!("--era {era}")),
                "--call",
                "nope",
            ])
            .fails(1)
            .to_string();
        assert!(
            err.contains("Unknown tool: nope") && err.contains("JSON-RPC -32602"),
            "{era}: {err}"
        );
    }
}

#[test]
fn noise_around_the_answer_is_tolerated() {
    let t = Tai::new("noise");
    let log = t.dir.path().join("noise.log");
    let flags = format!(
        "--era legacy --garbage-stdout --stderr-flood 1000000 --notify-before --wrong-id --log {}",
        log.display()
    );
    let v = probe(
        &t,
        &stdio(&flags),
        &["--call", "echo", "--args", r#"{"text":"through"}"#],
    );
    assert_eq!(v["call"]["content"][0]["text"], "through");
    assert!(v["skippedStdoutLines"].as_u64().unwrap() >= 3, "{v}");
    // the server's requests were answered: ping with {}, roots/list with -32601
    let log = stub_log(&log);
    let answer = |id: &str| {
        log.iter()
            .find(|l| l["id"] == id)
            .cloned()
            .unwrap_or(Value::Null)
    };
    assert_eq!(answer("srv-2")["result"], json!({}));
    assert_eq!(answer("srv-1")["error"]["code"], -32601);
}

#[test]
fn a_crash_mid_call_is_a_clear_error_with_the_stderr_tail() {
    let t = Tai::new("crash");
    let log = t.dir.path().join("crash.log");
    let flags = format!("--log {}", log.display());
    let err = t
        .run(&["mcp", "probe", &stdio(&flags), "--call", "crash"])
        .fails(1)
        .to_string();
    assert!(err.contains("exited (exit code 3)"), "{err}");
    assert!(err.contains("crashing mid-call as asked"), "{err}");
    for pid in pids(&stub_log(&log)) {
        assert_eq!(
            wait_gone(pid),
            None,
            "stub {pid} left behind (a zombie or alive)"
        );
    }
}

#[test]
fn a_slow_call_is_cancelled_on_its_deadline() {
    let t = Tai::new("slow");
    let log = t.dir.path().join("slow.log");
    let flags = format!("--era legacy --log {}", log.display());
    let err = t
        .run(&[
            "mcp",
            "probe",
            &stdio(&flags),
            "--call",
            "slow",
            "--args",
            r#"{"ms":900}"#,
            "--call-timeout",
            "0.3",
        ])
        .fails(1)
        .to_string();
    assert!(
        err.contains("cancelled after 0.3s") && err.contains("timed out"),
        "{err}"
    );
    let log = stub_log(&log);
    let call_id = log
        .iter()
        .find(|l| l["method"] == "tools/call")
        .map(|l| l["id"].clone())
        .unwrap();
    let cancel = log
        .iter()
        .find(|l| l["method"] == "notifications/cancelled")
        .expect("a cancel notification");
    assert_eq!(cancel["params"]["requestId"], call_id);
    for pid in pids(&log) {
        assert_eq!(wait_gone(pid), None);
    }
}

#[test]
fn oversized_messages_are_refused() {
    let t = Tai::new("big");
    let big = r#"{"size":10500000}"#;
    let err = t
        .run(&[
            "mcp",
            "probe",
            &stdio("--era legacy"),
            "--call",
            "big",
            "--args",
            big,
        ])
        .fails(1)
        .to_string();
    assert!(err.contains("over MCP_HTTP_MAX_BODY"), "{err}");
    let stub = HttpStub::start(&["--era", "legacy"]);
    let err = t
        .run(&["mcp", "probe", &stub.url, "--call", "big", "--args", big])
        .fails(1)
        .to_string();
    assert!(err.contains("over MCP_HTTP_MAX_BODY"), "{err}");
    // just under the cap arrives whole
    let v = probe(
        &t,
        &stdio("--era legacy"),
        &["--call", "big", "--args", r#"{"size":9000000}"#],
    );
    assert_eq!(
        v["call"]["content"][0]["text"].as_str().unwrap().len(),
        9_000_000
    );
}

#[test]
fn http_eras_headers_and_sse() {
    let t = Tai::new("http");
    for (era, sse, want) in [
        ("dual", false, "modern"),
        ("legacy", false, "legacy"),
        ("modern", true, "modern"),
        ("legacy", true, "legacy"),
    ] {
        let log = t.dir.path().join(format!("{era}-{sse}.log"));
        let log_s = log.display().to_string();
        let mut args = vec!["--era", era, "--log", &log_s];
        if sse {
            args.push("--sse");
        }
        let stub = HttpStub::start(&args);
        let v = probe(
            &t,
            &stub.url,
            &[
                "--call",
                "echo",
                "--args",
                r#"{"text":"over http"}"#,
                "--header",
                "Authorization: Bearer tok-1",
            ],
        );
        assert_eq!(
            (v["era"].as_str(), v["call"]["content"][0]["text"].as_str()),
            (Some(want), Some("over http")),
            "{era} sse={sse}"
        );
        let http: Vec<Value> = stub_log(&log)
            .into_iter()
            .filter_map(|l| l.get("http").cloned())
            .collect();
        assert!(
            http.iter().all(|h| h["authorization"] == "Bearer tok-1"),
            "stored headers ride on every POST"
        );
        let call = http.iter().find(|h| h["method"] == "tools/call").unwrap();
        if want == "modern" {
            assert_eq!(
                (call["mcp-method"].as_str(), call["mcp-name"].as_str()),
                (Some("tools/call"), Some("echo"))
            );
            assert_eq!(call["mcp-protocol-version"], "2026-07-28");
            assert!(call["mcp-session-id"].is_null());
        } else {
            assert_eq!(call["mcp-protocol-version"], "2025-11-25");
            assert_eq!(call["mcp-session-id"], "sess-1");
            assert!(call["mcp-method"].is_null());
        }
    }
}

/// Over HTTP in 2026, `x-mcp-header` arguments are mirrored into `Mcp-Param-*` headers,
/// and a tool whose annotation is invalid is dropped (and refused locally).
#[test]
fn http_param_headers_are_mirrored_and_invalid_tools_dropped() {
    let t = Tai::new("params");
    let log = t.dir.path().join("params.log");
    let stub = HttpStub::start(&["--era", "modern", "--log", &log.display().to_string()]);
    let run = t.run(&[
        "mcp",
        "probe",
        &stub.url,
        "--json",
        "--call",
        "regional",
        "--args",
        r#"{"region":"eu wést"}"#,
    ]);
    let v: Value = serde_json::from_str(run.ok()).unwrap();
    let names: Vec<&str> = v["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert!(
        names.contains(&"regional") && !names.contains(&"bad_header"),
        "{names:?}"
    );
    assert!(
        run.stderr.contains("dropped the tool \"bad_header\""),
        "{}",
        run.stderr
    );
    let http: Vec<Value> = stub_log(&log)
        .into_iter()
        .filter_map(|l| l.get("http").cloned())
        .collect();
    let call = http.iter().find(|h| h["method"] == "tools/call").unwrap();
    assert_eq!(call["mcp-param-region"], "=?base64?ZXUgd8Opc3Q=?=");
    let err = t
        .run(&["mcp", "probe", &stub.url, "--call", "bad_header"])
        .fails(1)
        .to_string();
    assert!(
        err.contains("is not offered") && err.contains("x-mcp-header"),
        "{err}"
    );
    assert_eq!(
        stub_log(&log)
            .iter()
            .filter(|l| l["params"]["name"] == "bad_header")
            .count(),
        0
    );
}

#[test]
fn an_expired_http_session_is_renewed_once() {
    let t = Tai::new("expire");
    let log = t.dir.path().join("expire.log");
    let stub = HttpStub::start(&[
        "--era",
        "legacy",
        "--expire-session-after",
        "3",
        "--log",
        &log.display().to_string(),
    ]);
    let v = probe(
        &t,
        &stub.url,
        &[
            "--protocol",
            "2025-11-25",
            "--call",
            "echo",
            "--args",
            r#"{"text":"still here"}"#,
        ],
    );
    assert_eq!(v["call"]["content"][0]["text"], "still here");
    let inits = methods(&stub_log(&log))
        .iter()
        .filter(|m| *m == "initialize")
        .count();
    assert_eq!(inits, 2, "one re-initialize after the 404");
}

/// 2026 `tools/list` answers are reused while their `ttlMs` lasts, and dropped at once on
/// `notifications/tools/list_changed`; legacy answers are never cached.
#[test]
fn tools_list_cache_follows_ttl_and_list_changed() {
    use tai::testing::mcp::client::{McpClient, ServerSpec, Timeouts};
    use tai::testing::mcp::era::EraChoice;
    use tai::testing::mcp::stdio::StdioSpec;
    let t = Tai::new("ttl");
    let lists = |flags: &[&str], name: &str, with_notify_call: bool| {
        let log = t.dir.path().join(name);
        let mut args: Vec<String> = flags.iter().map(|s| s.to_string()).collect();
        args.extend(["--log".to_string(), log.display().to_string()]);
        let spec = ServerSpec::Stdio(StdioSpec {
            command: stub_stdio().into(),
            args,
            env: Vec::new(),
            cwd: None,
            ..StdioSpec::default()
        });
        let mut c = McpClient::connect(&spec, EraChoice::Auto, Timeouts::default()).unwrap();
        let first = c.list_tools().unwrap();
        if with_notify_call {
            let mut a = serde_json::Map::new();
            a.insert("text".into(), "x".into());
            c.call_tool("echo", a).unwrap();
            assert!(c.tools_changed);
        }
        assert_eq!(c.list_tools().unwrap(), first);
        c.close();
        methods(&stub_log(&log))
            .iter()
            .filter(|m| *m == "tools/list")
            .count()
    };
    assert_eq!(
        lists(
            &["--era", "modern", "--tools-ttl-ms", "60000"],
            "cached.log",
            false
        ),
        1
    );
    assert_eq!(
        lists(
            &["--era", "modern", "--tools-ttl-ms", "0"],
            "ttl0.log",
            false
        ),
        2
    );
    assert_eq!(lists(&["--era", "legacy"], "legacy.log", false), 2);
    assert_eq!(
        lists(
            &[
                "--era",
                "modern",
                "--tools-ttl-ms",
                "60000",
                "--notify-before"
            ],
            "changed.log",
            true
        ),
        2
    );
}

#[test]
fn http_failures_name_what_to_do() {
    let t = Tai::new("httpfail");
    // TLS against a plain-HTTP server names the host
    let stub = HttpStub::start(&["--era", "dual"]);
    let https = stub.url.replace("http://", "https://");
    let err = t.run(&["mcp", "probe", &https]).fails(1).to_string();
    assert!(err.contains("TLS") && err.contains("127.0.0.1"), "{err}");
    // a request body over the cap is refused before it is sent
    let big = format!("{{\"text\":\"{}\"}}", "z".repeat(10_500_000));
    let file = t.dir.path().join("big-args.json");
    std::fs::write(&file, big).unwrap();
    let err = t
        .run(&[
            "mcp",
            "probe",
            &stub.url,
            "--call",
            "echo",
            "--args",
            &format!("@{}", file.display()),
        ])
        .fails(1)
        .to_string();
    assert!(err.contains("over MCP_HTTP_MAX_BODY"), "{err}");
    let err = t
        .run(&["mcp", "probe", "http://127.0.0.1:9/mcp"])
        .fails(1)
        .to_string();
    assert!(
        err.contains("127.0.0.1:9") && err.contains("connect"),
        "{err}"
    );
    let err = t
        .run(&["mcp", "probe", "http://no-such-host.invalid/mcp"])
        .fails(1)
        .to_string();
    assert!(err.contains("no-such-host.invalid"), "{err}");
}

/// The process has one thread while it calls a stdio server and an HTTP server.
#[test]
fn one_thread_while_calling() {
    let t = Tai::new("threads");
    let stub = HttpStub::start(&["--era", "dual"]);
    for source in [stdio("--era dual"), stdio("--era legacy"), stub.url.clone()] {
        let mut child = t
            .cmd(&[
                "mcp",
                "probe",
                &source,
                "--call",
                "slow",
                "--args",
                r#"{"ms":1200}"#,
            ])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(std::time::Duration::from_millis(700));
        let threads = thread_count(child.id());
        let status = child.wait().unwrap();
        assert!(status.success(), "{source}");
        assert_eq!(
            threads, 1,
            "tai had {threads} threads while calling {source}"
        );
    }
}

/// `tai mcp probe` reads pasted text with the one normalizer `tai mcp add` uses: Zed's
/// `context_servers` wrapper and Windsurf's `serverUrl` connect like any other shape.
#[test]
fn probe_reads_every_shape_add_reads() {
    let t = Tai::new("probe-shapes");
    let zed = json!({"context_servers": {"stub": {
        "command": stub_stdio(), "args": ["--era", "legacy"]
    }}});
    let v = probe(&t, &zed.to_string(), &[]);
    assert_eq!(
        (v["era"].as_str(), v["server"]["name"].as_str()),
        (Some("legacy"), Some("tai-stub"))
    );
    let stub = HttpStub::start(&["--era", "modern"]);
    let windsurf = json!({"mcpServers": {"w": {"serverUrl": stub.url}}});
    let v = probe(
        &t,
        &windsurf.to_string(),
        &["--call", "echo", "--args", r#"{"text":"hi"}"#],
    );
    assert_eq!(v["era"], "modern");
    assert_eq!(v["call"]["content"][0]["text"], "hi");
}
