//! tai as an MCP server over stdio: both eras, through tai's own client, the Python SDK
//! client and raw frames; `chat` and `completions` against the stub model; bridged tools
//! never re-served.

use serde_json::{Value, json};

use crate::support::{ModelStub, Tai, TempDir, peers, stub_stdio};

fn serve_cmd() -> String {
    format!("{} --serve-mcp-stdio", env!("CARGO_BIN_EXE_tai"))
}

fn probe(t: &Tai, extra: &[&str]) -> Value {
    let mut args = vec!["mcp", "probe", "-", "--json"];
    args.extend_from_slice(extra);
    let run = t.run_stdin(&args, &serve_cmd());
    serde_json::from_str(run.ok()).unwrap_or_else(|e| panic!("{e}: {run:?}"))
}

#[test]
fn tais_client_against_tais_server_in_both_eras() {
    let t = Tai::new("serve-self");
    for (protocol, era) in [
        ("auto", "modern"),
        ("2026-07-28", "modern"),
        ("2025-11-25", "legacy"),
    ] {
        let v = probe(
            &t,
            &[
                "--protocol",
                protocol,
                "--call",
                "list_dir",
                "--args",
                r#"{"path": "/"}"#,
            ],
        );
        assert_eq!(
            (v["era"].as_str(), v["server"]["name"].as_str()),
            (Some(era), Some("tai")),
            "{protocol}"
        );
        let names: Vec<&str> = v["tools"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|t| t["name"].as_str())
            .collect();
        for want in ["read_file", "shell", "mcp_add", "chat", "completions"] {
            assert!(names.contains(&want), "{want} not served: {names:?}");
        }
        assert!(
            v["call"]["content"][0]["text"]
                .as_str()
                .unwrap()
                .contains("tmp/"),
            "{v}"
        );
    }
    // a tool error stays a result; an unknown tool is a protocol error
    let run = t.run_stdin(
        &[
            "mcp",
            "probe",
            "-",
            "--call",
            "read_file",
            "--args",
            r#"{"path":"/nonexistent"}"#,
        ],
        &serve_cmd(),
    );
    assert!(run.fails(1).contains("ran and reported an error"));
    let err = t
        .run_stdin(&["mcp", "probe", "-", "--call", "nope"], &serve_cmd())
        .fails(1)
        .to_string();
    assert!(
        err.contains("Unknown tool: nope") && err.contains("-32602"),
        "{err}"
    );
}

#[test]
fn raw_frames_and_era_rules() {
    let t = Tai::new("serve-raw");
    let meta = json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}});
    let lines = [
        json!({"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {"_meta": meta}}).to_string(),
        "not json".to_string(),
        "[{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"ping\"}]".to_string(),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {"_meta": {"io.modelcontextprotocol/protocolVersion": "2027-01-01", "io.modelcontextprotocol/clientCapabilities": {}}}}).to_string(),
        json!({"jsonrpc": "2.0", "id": 3, "method": "tools/list", "params": {"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}}}).to_string(),
        json!({"jsonrpc": "2.0", "id": 4, "method": "initialize", "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "x", "version": "1"}}}).to_string(),
        json!({"jsonrpc": "2.0", "id": 5, "method": "ping", "params": {"_meta": meta}}).to_string(),
        json!({"jsonrpc": "2.0", "id": 6, "method": "tools/call", "params": {"name": "read_file", "arguments": {}, "_meta": meta}}).to_string(),
        json!({"jsonrpc": "2.0", "id": "s7", "method": "tools/call", "params": {"name": "secret_list", "_meta": meta}}).to_string(),
    ];
    let run = t.run_stdin(&["--serve-mcp-stdio"], &(lines.join("\n") + "\n"));
    let replies: Vec<Value> = run
        .ok()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(replies.len(), 9, "{replies:#?}");
    assert_eq!(
        replies[0]["result"]["supportedVersions"],
        json!(["2026-07-28"])
    );
    assert_eq!(replies[0]["result"]["resultType"], "complete");
    assert_eq!(
        replies[0]["result"]["_meta"]["io.modelcontextprotocol/serverInfo"]["name"],
        "tai"
    );
    assert_eq!(replies[1]["error"]["code"], -32700);
    assert_eq!(replies[2]["error"]["code"], -32600);
    assert_eq!(
        (
            replies[3]["error"]["code"].as_i64(),
            replies[3]["error"]["data"]["supported"].clone()
        ),
        (Some(-32022), json!(["2026-07-28"]))
    );
    assert_eq!(replies[4]["error"]["code"], -32602);
    assert_eq!(
        replies[5]["error"]["code"], -32022,
        "initialize on a connection that began modern"
    );
    assert_eq!(
        replies[6]["error"]["code"], -32601,
        "ping does not exist in 2026-07-28"
    );
    assert_eq!(
        replies[7]["result"]["isError"], true,
        "input the tool rejects is the tool's answer"
    );
    assert_eq!(
        (
            replies[8]["id"].as_str(),
            replies[8]["result"]["isError"].as_bool()
        ),
        (Some("s7"), Some(false))
    );
    // stdout carried only MCP messages; the notice went to stderr
    assert!(run.stderr.contains("every tool call is approved"));
}

#[test]
fn chat_and_completions_through_the_server() {
    let dir = TempDir::new("serve-chat");
    let model = ModelStub::start(
        dir.path(),
        json!([
            {"tool_calls": [{"name": "list_dir", "arguments": json!({"path": dir.path()}).to_string()}]},
            {"text": "the directory has a script"},
            {"text": "you asked about the directory"},
            {"text": "a completion"}
        ]),
    );
    let mut t = Tai::new("serve-chat-run");
    t.env("TAI_BASE_URL", &model.url)
        .env("TAI_MODEL", "stub-model");
    let call = |id: i64, name: &str, args: Value| {
        json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": name, "arguments": args}}).to_string()
    };
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "x", "version": "1"}}}).to_string();
    let lines = [
        init,
        call(1, "chat", json!({"message": "what is in the directory?"})),
        call(2, "chat", json!({"message": "and what did I ask?"})),
        call(
            3,
            "completions",
            json!({"messages": [{"role": "user", "content": "hi"}]}),
        ),
        call(
            4,
            "completions",
            json!({"messages": [{"role": "wizard", "content": "hi"}]}),
        ),
        call(5, "ask_user", json!({"question": "anyone?"})),
    ];
    // One worker: the scripted model answers the calls in the order they were sent.
    let run = t.run_stdin(
        &["--serve-mcp-stdio", "--serve-workers", "1"],
        &(lines.join("\n") + "\n"),
    );
    // Long calls run in workers and may be answered out of order: by id.
    let mut replies: Vec<Value> = run
        .ok()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    replies.sort_by_key(|r| r["id"].as_i64());
    assert_eq!(replies.len(), 6, "{replies:?}");
    let text = |i: usize| {
        replies[i]["result"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .to_string()
    };
    let first: Value = serde_json::from_str(&text(1)).unwrap();
    assert_eq!(
        (first["answer"].as_str(), first["steps"].as_u64()),
        (Some("the directory has a script"), Some(2))
    );
    let second: Value = serde_json::from_str(&text(2)).unwrap();
    assert_eq!(
        second["session"], first["session"],
        "the MCP session keeps one conversation"
    );
    let reqs = model.requests();
    let users = crate::support::user_messages(&reqs[2]);
    assert_eq!(users, ["what is in the directory?", "and what did I ask?"]);
    assert_eq!(
        (text(3).as_str(), replies[3]["result"]["isError"].as_bool()),
        ("a completion", Some(false))
    );
    assert_eq!(reqs[3]["stream"], false);
    assert!(
        replies[4]["result"]["isError"].as_bool().unwrap()
            && text(4).contains("role must be system, user or assistant")
    );
    assert!(
        replies[5]["result"]["isError"].as_bool().unwrap()
            && text(5).contains("no user is present")
    );
}

/// Bridged foreign tools are never offered by tai's server, even when enabled.
#[test]
fn bridged_tools_are_never_re_served() {
    let t = Tai::new("serve-no-launder");
    let source =
        json!({"mcpServers": {"stub": {"command": stub_stdio(), "args": ["--era", "legacy"]}}})
            .to_string();
    t.run(&["--yolo", "mcp", "add", &source]).ok();
    t.run(&["mcp", "enable", "stub"]).ok();
    let v = probe(&t, &[]);
    let names: Vec<&str> = v["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert!(
        !names
            .iter()
            .any(|n| n.starts_with("mcp_stub") || *n == "echo" || *n == "crash"),
        "{names:?}"
    );
    assert!(
        names.contains(&"mcp_list") && !names.contains(&"mcp_call"),
        "tai's own management tools are served, but no route to a foreign tool: {names:?}"
    );
}

#[test]
fn the_python_sdk_client_against_tai_in_both_eras() {
    let p = peers();
    let t = Tai::new("serve-python");
    let client = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/peers/py_client.py");
    for (mode, want) in [
        ("legacy", "2025-11-25"),
        ("auto", "2026-07-28"),
        ("2026-07-28", "2026-07-28"),
    ] {
        let out = std::process::Command::new(&p.python)
            .arg(&client)
            .arg(mode)
            .arg(env!("CARGO_BIN_EXE_tai"))
            .arg("--serve-mcp-stdio")
            .env("TAI_HOME", t.home())
            .env("TAI_CONFIG", t.config_path())
            .current_dir(t.dir.path())
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
            v["tools"].as_array().unwrap().iter().any(|t| t == "chat"),
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
        assert!(
            v["list_dir"][0].as_str().unwrap().contains("home/"),
            "{mode}: {v}"
        );
    }
}
