//! The bridge end to end: enabled servers' tools offered to the model, approved, called
//! on a kept connection, redacted, spilled, audited; drift withheld until approved.

use serde_json::{Value, json};

use crate::support::{ModelStub, Tai, TempDir, peers, stub_log, stub_stdio, wait_gone};

fn setup(model: &ModelStub, tag: &str, args: &[&str]) -> Tai {
    let mut t = Tai::new(tag);
    t.env("TAI_BASE_URL", &model.url)
        .env("TAI_MODEL", "stub-model");
    let source =
        json!({"mcpServers": {"stub": {"command": stub_stdio(), "args": args}}}).to_string();
    t.run(&["--yolo", "mcp", "add", &source]).ok();
    t.run(&["mcp", "enable", "stub"]).ok();
    t
}

fn call(name: &str, args: Value) -> Value {
    json!({"tool_calls": [{"name": name, "arguments": args.to_string()}]})
}

#[test]
fn a_bridged_call_is_approved_redacted_and_audited() {
    let dir = TempDir::new("bridge-call");
    let model = ModelStub::start(
        dir.path(),
        json!([
            call("mcp_stub_echo", json!({"text": "the token is tok-SECRET-123"})), {"text": "denied, fine"},
            call("mcp_stub_echo", json!({"text": "the token is tok-SECRET-123"})), {"text": "done"}
        ]),
    );
    let log = dir.path().join("mcp.log");
    let t = setup(
        &model,
        "bridge-call-run",
        &["--era", "legacy", "--log", &log.display().to_string()],
    );
    t.run_stdin(&["vault", "secret", "set", "token"], "tok-SECRET-123")
        .ok();
    // asked, with no terminal: denied, and the server never sees the call
    t.run(&["-p", "echo the token"]).ok();
    assert!(ModelStub::tool_messages(&model.requests()[1])[0].contains("did not approve"));
    assert!(!stub_log(&log).iter().any(|l| l["method"] == "tools/call"));
    // the tool is offered under its bridged name, with the server's schema
    let req0 = &model.requests()[0];
    assert!(
        ModelStub::offered(req0).contains(&"mcp_stub_echo".to_string()),
        "{:?}",
        ModelStub::offered(req0)
    );
    let echo = req0["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|x| x["function"]["name"] == "mcp_stub_echo")
        .unwrap();
    assert_eq!(echo["function"]["parameters"]["required"], json!(["text"]));
    assert!(
        echo["function"]["description"]
            .as_str()
            .unwrap()
            .starts_with("[MCP server stub, tool echo]")
    );
    // --yolo: called; the secret in the result is redacted before the model sees it
    let run = t.run(&["--yolo", "-p", "echo the token"]);
    assert_eq!(run.ok(), "done\n");
    let result = &ModelStub::tool_messages(&model.requests()[3])[0];
    assert_eq!(result, "the token is [REDACTED:token]");
    let audit: Value =
        serde_json::from_str(t.run(&["vault", "audit", "--json", "--limit", "100"]).ok()).unwrap();
    let calls: Vec<&str> = audit
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["kind"] == "mcp-call")
        .map(|r| r["outcome"].as_str().unwrap())
        .collect();
    assert_eq!(calls, ["denied", "ok"]);
    assert!(
        !audit.to_string().contains("tok-SECRET-123"),
        "the secret never reaches the trail"
    );
    t.run(&["vault", "audit", "--verify"]).ok();
    // every stub process is gone after tai exits
    let pids: Vec<u32> = stub_log(&log)
        .iter()
        .filter_map(|l| l["pid"].as_u64())
        .map(|p| p as u32)
        .collect();
    assert!(pids.len() >= 2);
    for pid in pids {
        assert_eq!(wait_gone(pid), None, "stub {pid} outlived tai");
    }
}

#[test]
fn a_large_result_spills_whole() {
    let dir = TempDir::new("bridge-spill");
    let model = ModelStub::start(
        dir.path(),
        json!([
            call("mcp_stub_big", json!({"size": 1_000_000})),
            call("record_get", json!({"id": "$RECORD", "offset": 999_990, "limit": 100})),
            {"text": "ok"}
        ]),
    );
    let t = setup(&model, "bridge-spill-run", &["--era", "dual"]);
    t.run(&["--yolo", "-p", "big one"]).ok();
    // the model read the end back with record_get
    assert_eq!(
        ModelStub::tool_messages(&model.requests()[2])[1],
        "6789abcdef"
    );
    let msg = &ModelStub::tool_messages(&model.requests()[1])[0];
    assert!(
        msg.contains("stored whole as record rec_") && msg.len() < 5000,
        "{:.300}",
        msg
    );
    let id = msg
        .split("record ")
        .nth(1)
        .unwrap()
        .split('.')
        .next()
        .unwrap();
    let whole = t.run(&["vault", "record", "get", id]).ok().to_string();
    assert_eq!(whole.len(), 1_000_000);
}

#[test]
fn drift_is_withheld_until_a_person_approves() {
    let dir = TempDir::new("bridge-drift");
    let model = ModelStub::start(
        dir.path(),
        json!([
            call("mcp_stub_echo", json!({"text": "a"})), {"text": "first"},
            call("mcp_stub_echo", json!({"text": "b"})), {"text": "second"},
            call("mcp_stub_echo", json!({"text": "c"})), {"text": "third"}
        ]),
    );
    let mut t = setup(
        &model,
        "bridge-drift-run",
        &[
            "--era",
            "legacy",
            "--redefine",
            "${REDEF:-none}",
            "--tools",
            "${EXTRA:-0}",
        ],
    );
    t.run(&["--yolo", "-p", "one"]).ok();
    assert_eq!(ModelStub::tool_messages(&model.requests()[1])[0], "a");
    // the server now redefines echo and adds a tool: both withheld, even with --yolo
    t.env("REDEF", "echo").env("EXTRA", "1");
    let run = t.run(&["--yolo", "-p", "two"]);
    run.ok();
    let msg = &ModelStub::tool_messages(&model.requests()[3])[0];
    assert!(
        msg.contains("redefined by its server") && msg.contains("tai mcp approve stub echo"),
        "{msg}"
    );
    let tools: Value =
        serde_json::from_str(t.run(&["mcp", "tools", "stub", "--json"]).ok()).unwrap();
    let state = |n: &str| {
        tools
            .as_array()
            .unwrap()
            .iter()
            .find(|x| x["name"] == n)
            .map(|x| x["pinned"].clone())
    };
    assert_eq!(
        (state("echo"), state("tool_000"), state("fail")),
        (Some(json!(false)), Some(json!(false)), Some(json!(true)))
    );
    // the next run says so up front and does not offer them
    let run = t.run(&["--yolo", "-p", "three"]);
    assert!(
        run.stderr
            .contains("stub/echo changed since it was approved"),
        "{run:?}"
    );
    assert!(!ModelStub::offered(&model.requests()[4]).contains(&"mcp_stub_echo".to_string()));
    // a person approves, seeing what changed; then it is offered again
    let audit: Value =
        serde_json::from_str(t.run(&["vault", "audit", "--json", "--limit", "200"]).ok()).unwrap();
    assert!(
        audit
            .as_array()
            .unwrap()
            .iter()
            .any(|r| r["kind"] == "mcp-call" && r["outcome"] == "withheld"),
        "a withheld call is audited as withheld"
    );
    let shown = t.run(&["mcp", "approve", "stub", "echo"]).ok().to_string();
    // old and new side by side: the approved description on the left, the new on the right
    let row = shown
        .lines()
        .find(|l| l.contains("Echo the text back (REDEFINED)"))
        .unwrap_or_else(|| panic!("{shown}"));
    let (left, right) = row.split_once('│').unwrap();
    assert!(
        left.trim() == "Echo the text back" && right.trim() == "Echo the text back (REDEFINED)",
        "{shown}"
    );
    let audit: Value =
        serde_json::from_str(t.run(&["vault", "audit", "--json", "--limit", "200"]).ok()).unwrap();
    let drift: Vec<String> = audit
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["kind"] == "mcp-drift")
        .map(|r| {
            format!(
                "{} {}",
                r["subject"].as_str().unwrap(),
                r["outcome"].as_str().unwrap()
            )
        })
        .collect();
    assert!(
        drift.contains(&"stub/echo changed".to_string())
            && drift.contains(&"stub/tool_000 added".to_string()),
        "{drift:?}"
    );
}

#[test]
fn removals_apply_silently_and_list_changed_triggers_the_check() {
    let dir = TempDir::new("bridge-remove");
    let model = ModelStub::start(
        dir.path(),
        json!([call("mcp_stub_echo", json!({"text": "x"})), {"text": "ok"}]),
    );
    let mut t = setup(
        &model,
        "bridge-remove-run",
        &[
            "--era",
            "legacy",
            "--add-after-call",
            "--without",
            "${GONE:-none}",
        ],
    );
    t.env("GONE", "fail");
    t.run(&["--yolo", "-p", "go"]).ok();
    let tools: Value =
        serde_json::from_str(t.run(&["mcp", "tools", "stub", "--json"]).ok()).unwrap();
    let names: Vec<&str> = tools
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x["name"].as_str().unwrap())
        .collect();
    assert!(
        !names.contains(&"fail"),
        "a removed tool disappears: {names:?}"
    );
    // late_tool arrived with notifications/tools/list_changed during the call: withheld
    let late = tools
        .as_array()
        .unwrap()
        .iter()
        .find(|x| x["name"] == "late_tool")
        .expect("late_tool listed");
    assert_eq!(late["pinned"], false);
}

#[test]
fn a_crashed_server_is_reconnected_once() {
    let dir = TempDir::new("bridge-crash");
    let model = ModelStub::start(
        dir.path(),
        json!([call("mcp_stub_crash", json!({})), {"text": "ok"}]),
    );
    let flag = dir.path().join("crashed-once");
    let t = setup(
        &model,
        "bridge-crash-run",
        &[
            "--era",
            "legacy",
            "--crash-once",
            &flag.display().to_string(),
        ],
    );
    t.run(&["--yolo", "-p", "crash it"]).ok();
    assert_eq!(
        ModelStub::tool_messages(&model.requests()[1])[0],
        "recovered after a crash"
    );
    assert!(flag.exists());
}

#[test]
fn server_everything_through_the_bridge() {
    let p = peers();
    let dir = TempDir::new("bridge-everything");
    let model = ModelStub::start(
        dir.path(),
        json!([
            call("mcp_everything_echo", json!({"message": "via the bridge"})),
            call("mcp_everything_echo", json!({})),
            call("mcp_everything_get_tiny_image", json!({})),
            {"text": "done"}
        ]),
    );
    let mut t = Tai::new("bridge-everything-run");
    t.env("TAI_BASE_URL", &model.url)
        .env("TAI_MODEL", "stub-model");
    let source = json!({"mcpServers": {"everything": {"command": p.node, "args": [p.everything]}}})
        .to_string();
    t.run(&["--yolo", "mcp", "add", &source]).ok();
    t.run(&["mcp", "enable", "everything"]).ok();
    t.run(&["--yolo", "-p", "echo through everything"]).ok();
    let reqs = model.requests();
    assert_eq!(
        ModelStub::tool_messages(&reqs[1])[0],
        "Echo: via the bridge"
    );
    let image = &ModelStub::tool_messages(&reqs[3])[2];
    assert!(
        image.contains("\"type\":\"image\"") && image.contains("\"mimeType\":\"image/png\""),
        "non-text content arrives as its JSON: {image:.200}"
    );
    let err = &ModelStub::tool_messages(&reqs[2])[1];
    assert!(err.contains("message"), "{err}");
}

/// No server outlives tai: after an error exit and after Ctrl-C.
#[test]
fn no_child_outlives_tai() {
    let dir = TempDir::new("bridge-children");
    // error exit: a bridged call, then the script runs out (HTTP 500) and tai exits 1
    let model = ModelStub::start(
        dir.path(),
        json!([call("mcp_stub_echo", json!({"text": "x"}))]),
    );
    let log = dir.path().join("err.log");
    let t = setup(
        &model,
        "bridge-children-err",
        &["--era", "legacy", "--log", &log.display().to_string()],
    );
    assert!(t.run(&["--yolo", "-p", "go"]).fails(1).contains("HTTP 500"));
    let pids: Vec<u32> = stub_log(&log)
        .iter()
        .filter_map(|l| l["pid"].as_u64())
        .map(|p| p as u32)
        .collect();
    assert!(
        pids.len() >= 2,
        "registration and the call each started one"
    );
    for pid in pids {
        assert_eq!(wait_gone(pid), None, "stub {pid} outlived an error exit");
    }
    // Ctrl-C: a bridged call, then a slow answer interrupted
    let dir2 = TempDir::new("bridge-children-int");
    let model = ModelStub::start(
        dir2.path(),
        json!([call("mcp_stub_echo", json!({"text": "x"})), {"text": "a very slow answer indeed", "delay_ms": 300}]),
    );
    let log = dir2.path().join("int.log");
    let t = setup(
        &model,
        "bridge-children-int-run",
        &["--era", "legacy", "--log", &log.display().to_string()],
    );
    let child = t
        .cmd(&["--yolo", "-p", "go"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // Interrupt while the second (slow) answer streams, after the bridged call.
    model.interrupt_while_answering(&child, 2);
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130));
    for pid in stub_log(&log).iter().filter_map(|l| l["pid"].as_u64()) {
        assert_eq!(wait_gone(pid as u32), None, "stub {pid} outlived Ctrl-C");
    }
}

/// At most MCP_MAX_TOOLS tools per server are offered; the rest are listed, not offered.
#[test]
fn at_most_max_tools_are_offered() {
    let dir = TempDir::new("bridge-max");
    let model = ModelStub::start(dir.path(), json!([]));
    let t = setup(
        &model,
        "bridge-max-run",
        &["--era", "legacy", "--tools", "120"],
    );
    let store = tai::testing::vault::Store::open(&t.vault_path()).unwrap();
    let bridge = tai::testing::bridge::Bridge::load(&store, "default").unwrap();
    assert_eq!(bridge.tools.len(), tai::testing::mcp::caps::MCP_MAX_TOOLS);
    assert_eq!(
        bridge.not_offered.len(),
        127 - tai::testing::mcp::caps::MCP_MAX_TOOLS
    );
    let listed: Value =
        serde_json::from_str(t.run(&["mcp", "tools", "stub", "--json"]).ok()).unwrap();
    assert_eq!(
        listed.as_array().unwrap().len(),
        127,
        "every tool is listed"
    );
    // another profile has none: servers are off until enabled there
    assert!(
        tai::testing::bridge::Bridge::load(&store, "work")
            .unwrap()
            .tools
            .is_empty()
    );
}
