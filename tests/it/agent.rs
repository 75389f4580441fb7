//! The agent against the scripted model: multi-step turns, recovery, limits, cut
//! streams, rate limits, approvals, Ctrl-C, --continue, transcripts and spills.

use serde_json::{Value, json};

use crate::support::{ModelStub, Tai};

fn tai_with(model: &ModelStub, tag: &str) -> Tai {
    let mut t = Tai::new(tag);
    t.env("TAI_BASE_URL", &model.url)
        .env("TAI_MODEL", "stub-model");
    t
}

#[test]
fn a_multi_step_turn_with_two_tool_calls() {
    let dir = crate::support::TempDir::new("agent-steps");
    let file = dir.path().join("notes.txt");
    std::fs::write(&file, "alpha\nbeta\n").unwrap();
    let model = ModelStub::start(
        dir.path(),
        json!([
            {"text": "Let me look.", "tool_calls": [
                {"name": "read_file", "arguments": json!({"path": file}).to_string()},
                {"name": "list_dir", "arguments": json!({"path": dir.path()}).to_string()}
            ]},
            {"text": "The file says alpha and beta."}
        ]),
    );
    let t = tai_with(&model, "agent-steps-run");
    let run = t.run(&["-p", "what is in notes.txt?"]);
    assert_eq!(run.ok(), "Let me look.The file says alpha and beta.\n");
    assert!(
        run.stderr.contains("→ read_file") && run.stderr.contains("→ list_dir"),
        "{}",
        run.stderr
    );
    let reqs = model.requests();
    assert_eq!(reqs.len(), 2);
    assert_eq!(reqs[0]["stream"], true);
    assert_eq!(reqs[0]["messages"][1]["content"], "what is in notes.txt?");
    let offered0 = ModelStub::offered(&reqs[0]);
    assert!(
        offered0.contains(&"read_file".to_string())
            && offered0.contains(&"tool_search".to_string()),
        "{offered0:?}"
    );
    assert!(
        offered0.len() <= 24,
        "the lazy selection offers a budget, not everything: {offered0:?}"
    );
    let results = ModelStub::tool_messages(&reqs[1]);
    assert!(
        results[0].contains("1\talpha") && results[0].contains("2\tbeta"),
        "{results:?}"
    );
    assert!(results[1].contains("notes.txt"), "{results:?}");
}

#[test]
fn malformed_arguments_go_back_to_the_model() {
    let dir = crate::support::TempDir::new("agent-bad-args");
    let model = ModelStub::start(
        dir.path(),
        json!([
            {"tool_calls": [{"name": "read_file", "arguments": "{\"path\": oops"}]},
            {"tool_calls": [{"name": "read_file", "arguments": "{}"}]},
            {"tool_calls": [{"name": "no_such_tool", "arguments": "{}"}]},
            {"text": "Recovered."}
        ]),
    );
    let t = tai_with(&model, "agent-bad-args-run");
    assert_eq!(t.run(&["-p", "read it"]).ok(), "Recovered.\n");
    let reqs = model.requests();
    assert!(
        ModelStub::tool_messages(&reqs[1])[0].contains("not a JSON object"),
        "{:?}",
        ModelStub::tool_messages(&reqs[1])
    );
    assert!(
        ModelStub::tool_messages(&reqs[2])[1].contains("missing the required argument \"path\"")
    );
    assert!(ModelStub::tool_messages(&reqs[3])[2].contains("no tool named \"no_such_tool\""));
}

#[test]
fn max_steps_cut_streams_and_rate_limits() {
    let dir = crate::support::TempDir::new("agent-limits");
    let call = json!({"tool_calls": [{"name": "list_dir", "arguments": "{}"}]});
    let model = ModelStub::start(
        dir.path(),
        json!([call, call, {"text": "the partial answer goes on and on", "cut": true},
               {"status": 429, "retry_after": 1}, {"text": "after the wait"}]),
    );
    let t = tai_with(&model, "agent-limits-run");
    let err = t
        .run(&["-p", "loop", "--max-steps", "2"])
        .fails(1)
        .to_string();
    assert!(
        err.contains("stopped after 2 steps") && err.contains("max_steps"),
        "{err}"
    );
    let run = t.run(&["-p", "talk"]);
    assert!(run.stdout.starts_with("the partial"), "{run:?}");
    assert!(run.fails(1).contains("was cut"), "{run:?}");
    let t0 = std::time::Instant::now();
    let run = t.run(&["-p", "again"]);
    assert_eq!(run.ok(), "after the wait\n");
    assert!(
        run.stderr
            .contains("rate limited (HTTP 429); retrying in 1s"),
        "{run:?}"
    );
    assert!(t0.elapsed() >= std::time::Duration::from_millis(900));
}

#[test]
fn approvals_in_all_three_modes() {
    let dir = crate::support::TempDir::new("agent-approve");
    let target = dir.path().join("out.txt");
    let write = json!({"tool_calls": [{"name": "write_file", "arguments": json!({"path": target, "content": "written"}).to_string()}]});
    let model = ModelStub::start(
        dir.path(),
        json!([write, {"text": "ok"}, write, {"text": "ok"}, write, {"text": "ok"}]),
    );
    let t = tai_with(&model, "agent-approve-run");
    // asked: no terminal here, so denied, and the model is told
    let run = t.run(&["-p", "write it"]);
    run.ok();
    assert!(!target.exists());
    assert!(
        run.stderr
            .contains("no terminal to ask on; rerun with --auto"),
        "{run:?}"
    );
    assert!(ModelStub::tool_messages(&model.requests()[1])[0].contains("did not approve"));
    // --auto: approved with one line
    let run = t.run(&["--auto", "-p", "write it"]);
    run.ok();
    assert!(
        run.stderr
            .contains("--auto approved: run the tool write_file"),
        "{run:?}"
    );
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "written");
    std::fs::remove_file(&target).unwrap();
    // --yolo: approved silently
    let run = t.run(&["--yolo", "-p", "write it"]);
    run.ok();
    assert!(!run.stderr.contains("approved"), "{run:?}");
    assert!(target.exists());
    let audit: Value = serde_json::from_str(t.run(&["vault", "audit", "--json"]).ok()).unwrap();
    let outcomes: Vec<&str> = audit
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["subject"] == "write_file")
        .map(|r| r["outcome"].as_str().unwrap())
        .collect();
    assert_eq!(outcomes, ["denied", "ok", "ok"]);
}

#[test]
fn ctrl_c_stops_the_turn_and_continue_resumes() {
    let dir = crate::support::TempDir::new("agent-sigint");
    let model = ModelStub::start(
        dir.path(),
        json!([{"text": "a slow answer that streams for a long while", "delay_ms": 250}, {"text": "resumed"}]),
    );
    let t = tai_with(&model, "agent-sigint-run");
    let child = t
        .cmd(&["-p", "first question"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Interrupt while the slow answer streams (not before tai has even asked).
    model.interrupt_while_answering(&child, 1);
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("interrupted"),
        "{out:?}"
    );
    let run = t.run(&["--continue", "-p", "second question"]);
    assert_eq!(run.ok(), "resumed\n");
    let last = model.requests().pop().unwrap();
    let users = crate::support::user_messages(&last);
    assert_eq!(users, ["first question", "second question"]);
}

#[test]
fn json_transcripts_exit_codes_and_spills() {
    let dir = crate::support::TempDir::new("agent-json");
    let big = dir.path().join("big.txt");
    std::fs::write(&big, format!("{}\n", "x".repeat(80)).repeat(1500)).unwrap();
    let model = ModelStub::start(
        dir.path(),
        json!([{"tool_calls": [{"name": "read_file", "arguments": json!({"path": big}).to_string()}]}, {"text": "done"}]),
    );
    let t = tai_with(&model, "agent-json-run");
    let v: Value = serde_json::from_str(t.run(&["-p", "read big", "--json"]).ok()).unwrap();
    assert_eq!(
        (
            v["answer"].as_str(),
            v["steps"].as_u64(),
            v["tool_calls"][0]["name"].as_str()
        ),
        (Some("done"), Some(2), Some("read_file"))
    );
    let spilled = &ModelStub::tool_messages(&model.requests()[1])[0];
    assert!(
        spilled.contains("over the 64 KB inline cap; stored whole as record rec_"),
        "{spilled:.300}"
    );
    let id = spilled
        .split("record ")
        .nth(1)
        .unwrap()
        .split('.')
        .next()
        .unwrap();
    let whole = t.run(&["vault", "record", "get", id]).ok().to_string();
    assert_eq!(whole.lines().count(), 1500);
    assert!(whole.starts_with("     1\txxxx"));
    // no model configured, no endpoint listening: clear errors, exit 1
    let bare = Tai::new("agent-nomodel");
    assert!(bare.run(&["-p", "hi"]).fails(1).contains("no model is set"));
    let mut down = Tai::new("agent-down");
    down.env("TAI_MODEL", "m")
        .env("TAI_BASE_URL", "http://127.0.0.1:9/v1");
    let err = down.run(&["-p", "hi"]).fails(1).to_string();
    assert!(
        err.contains("no model endpoint at http://127.0.0.1:9/v1") && err.contains("TAI_BASE_URL"),
        "{err}"
    );
}

#[test]
fn tool_search_loads_tools_for_the_next_step() {
    let dir = crate::support::TempDir::new("agent-search");
    let model = ModelStub::start(
        dir.path(),
        json!([{"tool_calls": [{"name": "tool_search", "arguments": "{\"query\": \"vault secret names\"}"}]}, {"text": "found"}]),
    );
    let t = tai_with(&model, "agent-search-run");
    assert_eq!(t.run(&["-p", "hello"]).ok(), "found\n");
    let reqs = model.requests();
    assert!(
        !ModelStub::offered(&reqs[0]).contains(&"secret_list".to_string()),
        "{:?}",
        ModelStub::offered(&reqs[0])
    );
    assert!(ModelStub::tool_messages(&reqs[1])[0].contains("secret_list:"));
    assert!(
        ModelStub::offered(&reqs[1]).contains(&"secret_list".to_string()),
        "{:?}",
        ModelStub::offered(&reqs[1])
    );
}

/// The process has one thread while a turn streams from the model and runs a tool.
#[test]
fn one_thread_during_a_turn() {
    let dir = crate::support::TempDir::new("agent-threads");
    let model = ModelStub::start(
        dir.path(),
        json!([{"tool_calls": [{"name": "shell", "arguments": "{\"command\": \"sleep 1\"}"}]}, {"text": "slow text here", "delay_ms": 200}]),
    );
    let t = tai_with(&model, "agent-threads-run");
    let mut child = t
        .cmd(&["--yolo", "-p", "go"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let counts = crate::support::sample_threads(child.id(), 8, 200);
    assert!(child.wait().unwrap().success());
    assert!(
        counts.iter().all(|c| *c <= 1) && counts.contains(&1),
        "{counts:?}"
    );
}

/// The REPL in a real terminal (tmux): the prompt, an approval asked and answered, the
/// answer streamed, slash commands.
#[test]
fn the_repl_in_a_terminal() {
    let dir = crate::support::TempDir::new("agent-repl");
    let target = dir.path().join("from-repl.txt");
    let model = ModelStub::start(
        dir.path(),
        json!([
            {"tool_calls": [{"name": "write_file", "arguments": json!({"path": target, "content": "hi"}).to_string()}]},
            {"text": "Wrote the file for you.", "delay_ms": 20},
            {"tool_calls": [{"name": "write_file", "arguments": json!({"path": target, "content": "again"}).to_string()}]},
            {"text": "Second write done."},
            {"tool_calls": [{"name": "write_file", "arguments": json!({"path": target, "content": "third"}).to_string()}]},
            {"text": "Third write done, no question asked."}
        ]),
    );
    let t = tai_with(&model, "agent-repl-run");
    let socket = format!("tai-test-{}", std::process::id());
    let tmux = |args: &[&str]| {
        std::process::Command::new("tmux")
            .arg("-L")
            .arg(&socket)
            .args(args)
            .output()
            .expect("tmux")
    };
    let command = format!(
        "env -i PATH=/usr/bin:/bin HOME={home} TAI_HOME={tai_home} TAI_CONFIG={cfg} TAI_BASE_URL={url} TAI_MODEL=stub-model TERM=xterm {bin}",
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
    let wait_count = |needle: &str, n: usize| {
        for _ in 0..100 {
            if screen().matches(needle).count() >= n {
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
        let s = screen();
        let _ = tmux(&["kill-server"]);
        panic!(
            "{needle:?} never appeared {n} times (seen {}):\n{s}",
            s.matches(needle).count()
        );
    };
    let wait_for = |needle: &str| wait_count(needle, 1);
    wait_for("tai default·stub-model>");
    tmux(&["send-keys", "-t", "t", "please write the file", "Enter"]);
    wait_for("run the tool write_file");
    assert!(screen().contains("[y]es / [N]o / [a]lways this session"));
    tmux(&["send-keys", "-t", "t", "y", "Enter"]);
    wait_for("Wrote the file for you.");
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "hi");
    // "always" covers the rest of the session
    tmux(&["send-keys", "-t", "t", "write it again", "Enter"]);
    wait_count("[a]lways this session:", 2);
    tmux(&["send-keys", "-t", "t", "a", "Enter"]);
    wait_for("Second write done.");
    tmux(&["send-keys", "-t", "t", "and once more", "Enter"]);
    wait_for("Third write done, no question asked.");
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "third");
    assert_eq!(screen().matches("[y]es / [N]o").count(), 2, "{}", screen());
    tmux(&["send-keys", "-t", "t", "/tools", "Enter"]);
    wait_for("read_file write_file");
    tmux(&["send-keys", "-t", "t", "/exit", "Enter"]);
    std::thread::sleep(std::time::Duration::from_millis(300));
    let _ = tmux(&["kill-server"]);
}

#[test]
fn api_key_stdin_prompt_and_complete() {
    let dir = crate::support::TempDir::new("agent-key");
    let model = ModelStub::start(
        dir.path(),
        json!([{"text": "one"}, {"text": "two"}, {"text": "whole answer"}]),
    );
    let mut t = tai_with(&model, "agent-key-run");
    t.env("TAI_API_KEY", "sk-test-key-123");
    assert_eq!(
        t.run_stdin(&["-p", "-"], "a prompt from stdin\n").ok(),
        "one\n"
    );
    let log = crate::support::stub_log(&model.log);
    assert_eq!(log[0]["authorization"], "Bearer sk-test-key-123");
    assert_eq!(
        log[0]["body"]["messages"][1]["content"],
        "a prompt from stdin\n"
    );
    // the key can come from the vault, named by the profile
    let v = tai_with(&model, "agent-key-vault");
    v.write_config("api_key_secret = \"llm\"\n");
    v.run_stdin(&["vault", "secret", "set", "llm"], "sk-from-vault")
        .ok();
    assert_eq!(v.run(&["-p", "hi"]).ok(), "two\n");
    assert_eq!(
        crate::support::stub_log(&model.log)[1]["authorization"],
        "Bearer sk-from-vault"
    );
    // complete(): one non-streamed answer
    let client = tai::testing::chat::ChatClient::new(
        &model.url,
        "stub-model",
        None,
        std::time::Duration::from_secs(10),
    );
    let answer = client
        .complete(&[json!({"role": "user", "content": "x"})])
        .unwrap();
    assert_eq!(answer, "whole answer");
    assert_eq!(model.requests()[2]["stream"], false);
}
