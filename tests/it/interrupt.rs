//! Impatient users and children that misbehave: Ctrl-C during a tool call (a hung bridged
//! MCP call, a `shell` command) returns to the REPL prompt, tells the server and is
//! audited; a second Ctrl-C quits; `tai -p` interrupted exits 130 (also while it waits
//! for the audit journal's lock); nothing a server left behind (even in its own session)
//! outlives tai.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::support::{ModelStub, Tai, TempDir, stub_log, stub_stdio, wait_gone};

fn call(name: &str, args: Value) -> Value {
    json!({"tool_calls": [{"name": name, "arguments": args.to_string()}]})
}

/// tai with a stub model and the stdio stub registered and enabled as `stub`.
fn with_stub_server(model: &ModelStub, tag: &str, stub_args: &[&str]) -> Tai {
    let mut t = Tai::new(tag);
    t.env("TAI_BASE_URL", &model.url)
        .env("TAI_MODEL", "stub-model");
    let source =
        json!({"mcpServers": {"stub": {"command": stub_stdio(), "args": stub_args}}}).to_string();
    t.run(&["--yolo", "mcp", "add", &source]).ok();
    t.run(&["mcp", "enable", "stub"]).ok();
    t
}

/// The REPL under tmux: Ctrl-C during a hung bridged call and during `shell sleep 30`
/// each bring the prompt back within 2 s; the server logged the cancel; the audit trail
/// says `interrupted`; then Ctrl-C twice quits.
#[test]
fn ctrl_c_during_a_tool_call_returns_to_the_prompt() {
    let dir = TempDir::new("int-repl");
    let model = ModelStub::start(
        dir.path(),
        json!([
            call("mcp_stub_slow", json!({"ms": 60000})),
            call("shell", json!({"command": "sleep 30"})),
        ]),
    );
    let log = dir.path().join("stub.log");
    let t = with_stub_server(
        &model,
        "int-repl-run",
        &["--era", "legacy", "--log", &log.display().to_string()],
    );
    let socket = format!("tai-int-{}", std::process::id());
    let tmux = |args: &[&str]| {
        std::process::Command::new("tmux")
            .arg("-L")
            .arg(&socket)
            .args(args)
            .output()
            .expect("tmux")
    };
    let command = format!(
        "env -i PATH=/usr/bin:/bin HOME={home} TAI_HOME={tai_home} TAI_CONFIG={cfg} TAI_BASE_URL={url} TAI_MODEL=stub-model TERM=xterm {bin} --yolo",
        home = t.dir.path().display(),
        tai_home = t.home().display(),
        cfg = t.config_path().display(),
        url = model.url,
        bin = env!("CARGO_BIN_EXE_tai"),
    );
    assert!(
        tmux(&[
            "new-session",
            "-d",
            "-s",
            "t",
            "-x",
            "160",
            "-y",
            "50",
            &command
        ])
        .status
        .success()
    );
    let screen =
        || String::from_utf8_lossy(&tmux(&["capture-pane", "-p", "-t", "t"]).stdout).into_owned();
    let prompt = "tai default·stub-model>";
    // How long until `needle` shows `n` times (panics after `limit`).
    let wait_count = |needle: &str, n: usize, limit: Duration| -> Duration {
        let t0 = Instant::now();
        while t0.elapsed() < limit {
            if screen().matches(needle).count() >= n {
                return t0.elapsed();
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let s = screen();
        let _ = tmux(&["kill-server"]);
        panic!("{needle:?} never appeared {n} times within {limit:?}:\n{s}");
    };
    wait_count(prompt, 1, Duration::from_secs(10));

    // A bridged call that would hang for a minute.
    tmux(&["send-keys", "-t", "t", "wait for the slow tool", "Enter"]);
    wait_count("→ mcp_stub_slow", 1, Duration::from_secs(10));
    let until = Instant::now() + Duration::from_secs(10);
    while !stub_log(&log).iter().any(|l| l["method"] == "tools/call") {
        assert!(Instant::now() < until, "the stub never got the call");
        std::thread::sleep(Duration::from_millis(20));
    }
    std::thread::sleep(Duration::from_millis(200));
    tmux(&["send-keys", "-t", "t", "C-c"]);
    let back = wait_count(prompt, 2, Duration::from_secs(10));
    assert!(
        back < Duration::from_secs(2),
        "the prompt came back after {back:?}"
    );
    let call_id = stub_log(&log)
        .iter()
        .find(|l| l["method"] == "tools/call")
        .map(|l| l["id"].clone())
        .unwrap();
    let until = Instant::now() + Duration::from_secs(5);
    while !stub_log(&log)
        .iter()
        .any(|l| l["method"] == "notifications/cancelled" && l["params"]["requestId"] == call_id)
    {
        assert!(
            Instant::now() < until,
            "the stub never logged the cancel: {:?}",
            stub_log(&log)
        );
        std::thread::sleep(Duration::from_millis(20));
    }

    // A shell command that would run for 30 s. Wait past the quit window first, so this
    // Ctrl-C is a first press again.
    std::thread::sleep(Duration::from_millis(2100));
    tmux(&["send-keys", "-t", "t", "now sleep", "Enter"]);
    wait_count("→ shell", 1, Duration::from_secs(10));
    std::thread::sleep(Duration::from_millis(300));
    let sleeping = shell_sleep_pids();
    assert!(!sleeping.is_empty(), "no `sleep 30` is running");
    tmux(&["send-keys", "-t", "t", "C-c"]);
    let back = wait_count(prompt, 3, Duration::from_secs(10));
    assert!(
        back < Duration::from_secs(2),
        "the prompt came back after {back:?}"
    );
    for pid in sleeping {
        assert_eq!(
            wait_gone(pid),
            None,
            "the shell's sleep {pid} survived Ctrl-C"
        );
    }

    // Ctrl-C twice at the prompt within 2 s: tai ends.
    std::thread::sleep(Duration::from_millis(2100));
    tmux(&["send-keys", "-t", "t", "C-c"]);
    std::thread::sleep(Duration::from_millis(300));
    tmux(&["send-keys", "-t", "t", "C-c"]);
    let until = Instant::now() + Duration::from_secs(10);
    while tmux(&["has-session", "-t", "t"]).status.success() {
        if Instant::now() > until {
            let s = screen();
            let _ = tmux(&["kill-server"]);
            panic!("tai did not quit on Ctrl-C twice:\n{s}");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let _ = tmux(&["kill-server"]);

    // Both interruptions are in the audit trail as such.
    let audit: Value =
        serde_json::from_str(t.run(&["vault", "audit", "--json", "--limit", "100"]).ok()).unwrap();
    let outcomes: Vec<(String, String)> = audit
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["kind"] == "mcp-call" || r["kind"] == "tool-call")
        .map(|r| {
            (
                r["subject"].as_str().unwrap_or_default().to_string(),
                r["outcome"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect();
    assert!(
        outcomes.contains(&("stub/slow".into(), "interrupted".into()))
            && outcomes.contains(&("shell".into(), "interrupted".into())),
        "{outcomes:?}"
    );
}

/// Processes running `sleep 30` (the shell tool's command).
fn shell_sleep_pids() -> Vec<u32> {
    sleeping(b"sleep\x0030\x00")
}

/// `tai -p` interrupted during a `shell` command exits 130, promptly.
/// `tai --yolo -p PROMPT`, sent SIGINT `settle` after the model's first request: its
/// output and how long it took to end after the signal.
fn interrupt_prompt(
    t: &Tai,
    model: &ModelStub,
    prompt: &str,
    settle: Duration,
) -> (std::process::Output, Duration) {
    let child = t
        .cmd(&["--yolo", "-p", prompt])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    model.wait_for_requests(1);
    std::thread::sleep(settle);
    let t0 = Instant::now();
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(child.id() as i32),
        nix::sys::signal::Signal::SIGINT,
    )
    .unwrap();
    let out = child.wait_with_output().unwrap();
    (out, t0.elapsed())
}

#[test]
fn an_interrupted_prompt_exits_130() {
    let dir = TempDir::new("int-p");
    let model = ModelStub::start(
        dir.path(),
        json!([call("shell", json!({"command": "sleep 31"}))]),
    );
    let mut t = Tai::new("int-p-run");
    t.env("TAI_BASE_URL", &model.url)
        .env("TAI_MODEL", "stub-model");
    let (out, waited) = interrupt_prompt(&t, &model, "sleep a while", Duration::from_millis(500));
    assert!(waited < Duration::from_secs(3), "{waited:?}");
    assert_eq!(out.status.code(), Some(130), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stderr).contains("interrupted"));
}

/// A server that leaves a process behind in a session of its own (`setsid`, its parent
/// gone): after tai exits, that process is gone too (tai is the subreaper and ends it).
#[test]
fn a_servers_setsid_grandchild_does_not_outlive_tai() {
    let dir = TempDir::new("int-setsid");
    let model = ModelStub::start(
        dir.path(),
        json!([call("mcp_stub_echo", json!({"text": "hi"})), {"text": "done"}]),
    );
    let log = dir.path().join("stub.log");
    let t = with_stub_server(
        &model,
        "int-setsid-run",
        &[
            "--era",
            "legacy",
            "--spawn-detached",
            "--log",
            &log.display().to_string(),
        ],
    );
    assert_eq!(t.run(&["--yolo", "-p", "echo hi"]).ok(), "done\n");
    let detached: Vec<u32> = stub_log(&log)
        .iter()
        .filter_map(|l| l["detached"].as_u64())
        .map(|p| p as u32)
        .collect();
    assert!(
        detached.len() >= 2,
        "registration and the call each left one: {detached:?}"
    );
    for pid in detached {
        assert_eq!(
            wait_gone(pid),
            None,
            "the setsid grandchild {pid} outlived tai"
        );
    }
}

/// A served `chat` whose model keeps calling a slow tool stops at the turn's deadline
/// (MCP_CHAT_TIMEOUT, shortened here), not after every step's own timeout.
#[test]
fn a_served_chat_stops_at_the_turn_deadline() {
    use std::io::{BufRead, Write};
    let dir = TempDir::new("int-chat-deadline");
    let slow = call("shell", json!({"command": "sleep 5"}));
    let model = ModelStub::start(dir.path(), json!([slow, slow, slow, slow, slow, slow]));
    let mut t = Tai::new("int-chat-deadline-run");
    t.env("TAI_BASE_URL", &model.url)
        .env("TAI_MODEL", "stub-model")
        .env("TAI_MCP_CHAT_TIMEOUT_MS", "1500");
    let mut child = t
        .cmd(&["--serve-mcp-stdio"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = std::io::BufReader::new(child.stdout.take().unwrap());
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}});
    let chat = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "chat", "arguments": {"message": "keep sleeping"}}});
    writeln!(stdin, "{init}").unwrap();
    let mut line = String::new();
    stdout.read_line(&mut line).unwrap();
    let t0 = Instant::now();
    writeln!(stdin, "{chat}").unwrap();
    line.clear();
    stdout.read_line(&mut line).unwrap();
    let took = t0.elapsed();
    let reply: Value = serde_json::from_str(&line).unwrap();
    let text = reply["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default();
    let answer: Value = serde_json::from_str(text).unwrap_or_else(|_| panic!("{line}"));
    assert!(
        answer["stopped"]
            .as_str()
            .is_some_and(|s| s.starts_with("deadline")),
        "{answer}"
    );
    assert_eq!(reply["result"]["isError"], true, "{line}");
    assert!(took < Duration::from_secs(4), "the turn took {took:?}");
    assert!(
        model.requests().len() <= 2,
        "{} model requests",
        model.requests().len()
    );
    drop(stdin);
    let _ = child.wait();
}

/// A `shell` command that leaves a detached process behind (`setsid … &`, holding the
/// output pipe) returns by its deadline, and the process is ended with it.
#[test]
fn a_shell_command_that_detaches_returns_by_its_deadline() {
    let dir = TempDir::new("int-detach");
    let model = ModelStub::start(
        dir.path(),
        json!([
            call("shell", json!({"command": "setsid sleep 37 & echo started", "timeout": 1})),
            {"text": "done"}
        ]),
    );
    let mut t = Tai::new("int-detach-run");
    t.env("TAI_BASE_URL", &model.url)
        .env("TAI_MODEL", "stub-model");
    let t0 = Instant::now();
    assert_eq!(t.run(&["--yolo", "-p", "start it"]).ok(), "done\n");
    assert!(t0.elapsed() < Duration::from_secs(8), "{:?}", t0.elapsed());
    let result = &ModelStub::tool_messages(&model.requests()[1])[0];
    assert!(
        result.contains("timed out after 1s") && result.contains("started"),
        "{result}"
    );
    let left: Vec<u32> = sleeping(b"sleep\x0037\x00")
        .into_iter()
        .filter(|p| wait_gone(*p).is_some())
        .collect();
    assert!(left.is_empty(), "the detached sleep survived: {left:?}");
}

/// Processes whose command line is exactly `cmdline`.
fn sleeping(cmdline: &[u8]) -> Vec<u32> {
    let mut found = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Some(pid) = e.file_name().to_str().and_then(|s| s.parse::<u32>().ok()) else {
            continue;
        };
        if std::fs::read(e.path().join("cmdline")).is_ok_and(|c| c == cmdline) {
            found.push(pid);
        }
    }
    found
}

/// Ctrl-C during a hung bridged call to an HTTP server ends it promptly too.
#[test]
fn ctrl_c_during_a_hung_http_call() {
    let dir = TempDir::new("int-http");
    let model = ModelStub::start(
        dir.path(),
        json!([call("mcp_web_slow", json!({"ms": 60000}))]),
    );
    let log = dir.path().join("stub.log");
    let stub =
        crate::support::HttpStub::start(&["--era", "legacy", "--log", &log.display().to_string()]);
    let mut t = Tai::new("int-http-run");
    t.env("TAI_BASE_URL", &model.url)
        .env("TAI_MODEL", "stub-model");
    t.run(&["--yolo", "mcp", "add", &stub.url, "--name", "web"])
        .ok();
    t.run(&["mcp", "enable", "web"]).ok();
    let child = t
        .cmd(&["--yolo", "-p", "wait"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let until = Instant::now() + Duration::from_secs(10);
    while !stub_log(&log).iter().any(|l| l["method"] == "tools/call") {
        assert!(Instant::now() < until, "the stub never got the call");
        std::thread::sleep(Duration::from_millis(20));
    }
    std::thread::sleep(Duration::from_millis(200));
    let t0 = Instant::now();
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(child.id() as i32),
        nix::sys::signal::Signal::SIGINT,
    )
    .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(t0.elapsed() < Duration::from_secs(2), "{:?}", t0.elapsed());
    assert_eq!(out.status.code(), Some(130), "{out:?}");
}

/// Ctrl-C ends a wait for the audit journal's lock (another tai process holding it):
/// `tai -p` whose call waits to append its row exits 130 at once, not after the vault's
/// busy timeout, and the result of the call it could not audit is not shown.
#[test]
fn ctrl_c_ends_a_wait_for_the_audit_journals_lock() {
    use nix::fcntl::{Flock, FlockArg};
    let dir = TempDir::new("int-journal");
    let listed = TempDir::new("int-journal-listed");
    std::fs::write(listed.path().join("never-shown.txt"), "x").unwrap();
    let model = ModelStub::start(
        dir.path(),
        json!([call("list_dir", json!({"path": listed.path()})), {"text": "done"}]),
    );
    let mut t = Tai::new("int-journal-run");
    t.env("TAI_BASE_URL", &model.url)
        .env("TAI_MODEL", "stub-model");
    t.run(&["vault", "audit"]).ok(); // the vault and its journal exist
    let journal = format!("{}-audit", t.vault_path().display());
    let held = Flock::lock(
        std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(&journal)
            .unwrap(),
        FlockArg::LockExclusiveNonblock,
    )
    .map_err(|(_, e)| e)
    .unwrap();
    let (out, waited) = interrupt_prompt(&t, &model, "list it", Duration::from_millis(700));
    drop(held);
    // The vault's busy timeout is 5 s: the wait ended on Ctrl-C, well before it.
    assert!(waited < Duration::from_secs(2), "{waited:?}: {out:?}");
    assert_eq!(out.status.code(), Some(130), "{out:?}");
    assert!(
        !String::from_utf8_lossy(&out.stdout).contains("never-shown"),
        "{out:?}"
    );
}
