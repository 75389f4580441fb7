//! The habits users bring from other MCP tools: their config files where those tools keep
//! them (fixture homes laid out as each tool lays them out), JSONC, VS Code variables,
//! inputs and envFile, stdin, per-server timeouts.

use std::path::Path;
use std::process::Stdio;

use serde_json::Value;

use crate::support::{Run, Tai, TempDir, stub_stdio};

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// A JSON server entry running the stdio stub.
fn stub(era: &str) -> String {
    format!(
        r#"{{"command": "{}", "args": ["--era", "{era}"]}}"#,
        stub_stdio()
    )
}

/// `tai ARGS` run in `cwd`.
fn run_in(t: &Tai, cwd: &Path, args: &[&str]) -> Run {
    Run::from(t.cmd(args).current_dir(cwd).output().unwrap())
}

fn json_out(run: &Run) -> Value {
    serde_json::from_str(&run.stdout).unwrap_or_else(|e| panic!("{e}: {run:?}"))
}

fn names(v: &Value, key: &str) -> Vec<String> {
    v[key]
        .as_array()
        .unwrap_or_else(|| panic!("no {key} in {v}"))
        .iter()
        .map(|a| a["name"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn import_from_each_tools_documented_location() {
    let t = Tai::new("import-tools");
    let home = t.dir.path().join("home");
    let project = TempDir::new("import-project");
    let cwd = project.path();
    let cwd_s = cwd.display().to_string();
    let s = stub("legacy");
    write(
        &home.join(".config/Claude/claude_desktop_config.json"),
        &format!(r#"{{"mcpServers": {{"desk": {s}}}, "globalShortcut": "Ctrl+Space"}}"#),
    );
    write(
        &home.join(".claude.json"),
        &format!(
            r#"{{"numStartups": 4, "mcpServers": {{"ccuser": {s}}},
                "projects": {{"{cwd_s}": {{"mcpServers": {{"cclocal": {s}}}}}, "/elsewhere": {{"mcpServers": {{"other": {s}}}}}}}}}"#
        ),
    );
    write(
        &cwd.join(".mcp.json"),
        &format!(r#"{{"mcpServers": {{"ccproj": {s}}}}}"#),
    );
    write(
        &home.join(".cursor/mcp.json"),
        &format!(r#"{{"mcpServers": {{"cur": {s}}}}}"#),
    );
    write(
        &home.join(".config/Code/User/mcp.json"),
        &format!(
            "// VS Code's user mcp.json is JSONC\n{{\n  \"servers\": {{\n    /* a stub */\n    \"code\": {s},\n  }},\n}}\n"
        ),
    );
    write(
        &home.join(".codex/config.toml"),
        &format!(
            "model = \"o3\"\n\n[mcp_servers.codex]\ncommand = \"{}\"\nargs = [\"--era\", \"legacy\"]\nstartup_timeout_sec = 30\ntool_timeout_sec = 90\n",
            stub_stdio()
        ),
    );
    write(
        &home.join(".codeium/windsurf/mcp_config.json"),
        &format!(r#"{{"mcpServers": {{"surf": {s}}}}}"#),
    );
    write(
        &home.join(".gemini/settings.json"),
        &format!(r#"{{"theme": "GitHub", "mcpServers": {{"gem": {s}}}}}"#),
    );
    let cases: &[(&str, &[&str])] = &[
        ("claude-desktop", &["desk"]),
        ("claude-code", &["cclocal", "ccuser", "ccproj"]),
        ("cursor", &["cur"]),
        ("vscode", &["code"]),
        ("codex", &["codex"]),
        ("windsurf", &["surf"]),
        ("gemini", &["gem"]),
    ];
    for (tool, want) in cases {
        let run = run_in(&t, cwd, &["--yolo", "mcp", "import", tool, "--json"]);
        assert_eq!(run.code, 0, "{tool}: {run:?}");
        let v = json_out(&run);
        assert_eq!(names(&v, "added"), *want, "{tool}: {v}");
        assert_eq!(v["skipped"], serde_json::json!([]), "{tool}: {v}");
        assert!(
            !v["notes"].to_string().contains("top-level key"),
            "{tool}: settings keys are not servers: {v}"
        );
    }
    // the project's own server records its project; the user's do not
    let options = |name: &str| -> Option<String> {
        t.raw_db()
            .query_row(
                "SELECT value FROM meta WHERE key = ?1",
                [format!("mcp.options.{name}")],
                |r| r.get(0),
            )
            .ok()
    };
    let proj: Value = serde_json::from_str(&options("ccproj").unwrap()).unwrap();
    assert_eq!(proj["project"].as_str(), Some(cwd_s.as_str()));
    assert_eq!(options("ccuser"), None);
    // Codex's timeouts are kept with the entry
    let codex: Value = serde_json::from_str(&options("codex").unwrap()).unwrap();
    assert_eq!(
        (
            codex["connectTimeoutMs"].as_u64(),
            codex["callTimeoutMs"].as_u64()
        ),
        (Some(30_000), Some(90_000))
    );
    // a tool with nothing on disk says where it looked
    let empty = Tai::new("import-nothing");
    let err = run_in(&empty, cwd, &["mcp", "import", "windsurf"])
        .fails(1)
        .to_string();
    assert!(
        err.contains("no windsurf servers found") && err.contains("mcp_config.json"),
        "{err}"
    );
}

#[test]
fn import_reads_stdin_and_exits_1_when_something_was_skipped() {
    let t = Tai::new("import-stdin");
    let text = format!(
        r#"{{"mcpServers": {{"good": {}, "old": {{"type": "sse", "url": "http://127.0.0.1:1/sse"}}}}}}"#,
        stub("legacy")
    );
    let run = t.run_stdin(&["--yolo", "mcp", "import", "-"], &text);
    assert_eq!(run.code, 1, "{run:?}");
    assert!(run.stdout.contains("added good"), "{run:?}");
    assert!(
        run.stderr.contains("skipped old") && run.stderr.contains("1 added, 1 skipped"),
        "{run:?}"
    );
    let ok = format!(r#"{{"mcpServers": {{"fine": {}}}}}"#, stub("legacy"));
    t.run_stdin(&["--yolo", "mcp", "import", "-"], &ok).ok();
}

#[test]
fn a_source_that_looks_like_a_path_is_a_file() {
    let t = Tai::new("source-path");
    // a mistyped file name is not run as a command
    let err = t
        .run(&["--yolo", "mcp", "add", "claude_desktop_confg.json"])
        .fails(1)
        .to_string();
    assert!(
        err.contains("claude_desktop_confg.json: no such file"),
        "{err}"
    );
    assert!(!err.contains("cannot start"), "{err}");
    // a goose config.yaml is refused, not run
    let yaml = t.dir.path().join("config.yaml");
    write(&yaml, "extensions:\n  fetch:\n    cmd: uvx\n");
    let err = t
        .run(&["--yolo", "mcp", "add", yaml.to_str().unwrap()])
        .fails(1)
        .to_string();
    assert!(err.contains("not a JSON or TOML MCP config"), "{err}");
    // `import` of something that is neither a tool nor a file
    let err = t.run(&["mcp", "import", "nvim"]).fails(1).to_string();
    assert!(
        err.contains("not a tool tai imports from") && err.contains("claude-desktop"),
        "{err}"
    );
    // add FILE with several servers adds each, with consent each
    let file = t.dir.path().join("two.json");
    write(
        &file,
        &format!(
            r#"{{"mcpServers": {{"a1": {}, "a2": {}}}}}"#,
            stub("legacy"),
            stub("modern")
        ),
    );
    let run = t.run(&["--auto", "mcp", "add", file.to_str().unwrap()]);
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(
        run.stderr
            .matches("--auto approved: run the MCP server")
            .count(),
        2,
        "{run:?}"
    );
    assert!(
        run.stdout.contains("added a1") && run.stdout.contains("added a2"),
        "{run:?}"
    );
}

#[test]
fn vscode_variables_and_env_file_are_read_at_use_time() {
    let t = Tai::new("vscode-vars");
    let repo = TempDir::new("vscode-repo");
    std::fs::create_dir_all(repo.path().join(".git")).unwrap();
    let sub = repo.path().join("src/deep");
    std::fs::create_dir_all(&sub).unwrap();
    write(
        &repo.path().join(".env"),
        "# the token\nTOKEN=\"from-env-file\"\n",
    );
    // the server starts only when TOKEN arrived from the envFile and ROOT is the workspace
    let script = format!(
        "test \"$TOKEN\" = from-env-file && test \"$ROOT\" = \"{}\" && exec {} --era legacy",
        repo.path().display(),
        stub_stdio()
    );
    let config = serde_json::json!({
        "servers": {"vars": {
            "command": "sh",
            "args": ["-c", script],
            "env": {"ROOT": "${workspaceFolder}"},
            "envFile": "${workspaceFolder}${pathSeparator}.env"
        }}
    });
    let file = repo.path().join("mcp.jsonc");
    write(&file, &format!("// JSONC\n{config}\n"));
    let run = run_in(&t, &sub, &["--yolo", "mcp", "add", file.to_str().unwrap()]);
    assert_eq!(run.code, 0, "{run:?}");
    t.run(&["--yolo", "mcp", "call", "vars", "echo", r#"{"text":"hi"}"#])
        .ok();
    // the file is read at every start: a changed value reaches the next start
    write(&repo.path().join(".env"), "TOKEN=changed\n");
    let err = t
        .run(&["--yolo", "mcp", "call", "vars", "echo", r#"{"text":"hi"}"#])
        .fails(1)
        .to_string();
    assert!(!err.contains("from-env-file"), "{err}");
    std::fs::remove_file(repo.path().join(".env")).unwrap();
    let err = t
        .run(&["--yolo", "mcp", "call", "vars", "echo", r#"{"text":"hi"}"#])
        .fails(1)
        .to_string();
    assert!(
        err.contains("envFile") && err.contains("cannot be read"),
        "{err}"
    );
}

/// A tmux session on its own socket, killed when dropped.
struct Tmux {
    socket: String,
}

impl Tmux {
    fn run(&self, args: &[&str]) -> String {
        let out = std::process::Command::new("tmux")
            .arg("-L")
            .arg(&self.socket)
            .args(args)
            .stdin(Stdio::null())
            .output()
            .expect("tmux");
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    fn pane(&self) -> String {
        self.run(&["capture-pane", "-p", "-t", "t"])
    }

    fn wait_for(&self, needle: &str) -> String {
        let until = std::time::Instant::now() + std::time::Duration::from_secs(30);
        loop {
            let pane = self.pane();
            if pane.contains(needle) {
                return pane;
            }
            assert!(
                std::time::Instant::now() < until,
                "{needle:?} never appeared:\n{pane}"
            );
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        self.run(&["kill-server"]);
    }
}

#[test]
fn prompt_string_inputs_are_asked_at_a_terminal_and_kept_in_the_vault() {
    let t = Tai::new("inputs-pty");
    let script = format!(
        "test \"$TOKEN\" = typed-s3cret && test \"$REGION\" = north && exec {} --era legacy",
        stub_stdio()
    );
    let config = serde_json::json!({
        "inputs": [
            {"type": "promptString", "id": "api-token", "description": "API token", "password": true},
            {"type": "promptString", "id": "region", "description": "Region"}
        ],
        "servers": {"asked": {
            "command": "sh", "args": ["-c", script],
            "env": {"TOKEN": "${input:api-token}", "REGION": "${input:region}"}
        }}
    });
    let file = t.dir.path().join("mcp.json");
    write(&file, &config.to_string());
    let done = t.dir.path().join("exit-code");
    let tai = env!("CARGO_BIN_EXE_tai");
    let line = format!(
        "env -i PATH=\"$PATH\" HOME={} TAI_HOME={} TAI_CONFIG={} {tai} --yolo mcp import {}; echo $? > {}; sleep 60",
        t.dir.path().join("home").display(),
        t.home().display(),
        t.config_path().display(),
        file.display(),
        done.display()
    );
    let tmux = Tmux {
        socket: format!("tai-it-{}", std::process::id()),
    };
    tmux.run(&[
        "new-session",
        "-d",
        "-s",
        "t",
        "-x",
        "160",
        "-y",
        "40",
        &line,
    ]);
    tmux.wait_for("API token (kept as the vault secret \"api-token\"):");
    tmux.run(&["send-keys", "-t", "t", "typed-s3cret", "Enter"]);
    tmux.wait_for("Region (kept as the vault secret \"region\"):");
    tmux.run(&["send-keys", "-t", "t", "north", "Enter"]);
    let until = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while !done.exists() {
        assert!(std::time::Instant::now() < until, "{}", tmux.pane());
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let pane = tmux.pane();
    assert_eq!(
        std::fs::read_to_string(&done).unwrap().trim(),
        "0",
        "{pane}"
    );
    assert!(
        !pane.contains("typed-s3cret"),
        "the password was echoed:\n{pane}"
    );
    assert!(pane.contains("north"), "a plain input is echoed:\n{pane}");
    let secrets = t.run(&["vault", "secret", "list"]).ok().to_string();
    assert!(
        secrets.contains("api-token") && secrets.contains("region"),
        "{secrets}"
    );
}

#[test]
fn a_server_that_needs_25_s_to_start_succeeds_with_startup_timeout_sec_40() {
    let t = Tai::new("slow-start");
    let toml = format!(
        "[mcp_servers.slow]\ncommand = \"sh\"\nargs = [\"-c\", \"sleep 25; exec {} --era legacy\"]\nstartup_timeout_sec = 40\n",
        stub_stdio()
    );
    let t0 = std::time::Instant::now();
    let run = t.run(&["--yolo", "mcp", "add", &toml]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(t0.elapsed() >= std::time::Duration::from_secs(25));
    assert!(run.stdout.contains("added slow"), "{run:?}");
}

#[test]
fn profiles_set_inherit_and_unknown_names_are_errors() {
    let mut t = Tai::new("profiles-set");
    t.write_config(
        "base_url = \"http://top:1/v1\"\nmodel = \"top-model\"\napi_key_secret = \"top-key\"\n\n[profiles.filed]\nmodel = \"file-model\"\n",
    );
    let status = |t: &Tai, args: &[&str]| -> Value {
        let mut a = args.to_vec();
        a.extend(["status", "--json"]);
        serde_json::from_str(t.run(&a).ok()).unwrap()
    };
    t.run(&["profile", "add", "work", "--model", "m1"]).ok();
    // a profile inherits every top-level setting it does not set
    let v = status(&t, &["--profile", "work"]);
    assert_eq!(
        (
            v["config"]["model"].as_str(),
            v["config"]["base_url"].as_str(),
            v["config"]["api_key"]["name"].as_str()
        ),
        (Some("m1"), Some("http://top:1/v1"), Some("top-key"))
    );
    // set changes it later; an empty value clears it (the top level applies again)
    t.run(&["profile", "set", "work", "base_url", "http://gpu:2/v1"])
        .ok();
    t.run(&["profile", "set", "work", "model", "m2"]).ok();
    let v = status(&t, &["--profile", "work"]);
    assert_eq!(
        (
            v["config"]["model"].as_str(),
            v["config"]["base_url"].as_str()
        ),
        (Some("m2"), Some("http://gpu:2/v1"))
    );
    t.run(&["profile", "set", "work", "model", ""]).ok();
    assert_eq!(
        status(&t, &["--profile", "work"])["config"]["model"].as_str(),
        Some("top-model")
    );
    // a file profile is edited in the file: one place per profile
    let err = t
        .run(&["profile", "set", "filed", "model", "x"])
        .fails(1)
        .to_string();
    assert!(err.contains("edit it there"), "{err}");
    let err = t
        .run(&["profile", "set", "work", "colour", "x"])
        .fails(2)
        .to_string();
    assert!(err.contains("no setting 'colour'"), "{err}");
    let err = t
        .run(&["profile", "set", "ghost", "model", "x"])
        .fails(1)
        .to_string();
    assert!(err.contains("no profile named \"ghost\""), "{err}");
    // an unknown profile is an error everywhere, and enables nothing
    for args in [
        &["--profile", "nope", "status"][..],
        &["--profile", "nope", "mcp", "enable", "x"],
        &["--profile", "nope", "mcp", "list"],
        &["--profile", "nope", "-p", "hi"],
    ] {
        let err = t.run(args).fails(1).to_string();
        assert!(
            err.contains("no profile named \"nope\"") && err.contains("tai profile add nope"),
            "{args:?}: {err}"
        );
    }
    // the REPL's /profile refuses an unknown name too (piped input: no terminal needed)
    let dir = TempDir::new("profiles-model");
    let model = crate::support::ModelStub::start(
        dir.path(),
        serde_json::json!([
            {"tool_calls": [{"name": "mcp_enable", "arguments": "{\"server\":\"x\",\"profile\":\"ghost\"}"}]},
            {"text": "done"}
        ]),
    );
    t.env("TAI_MODEL", "m")
        .env("TAI_BASE_URL", &model.url)
        .env("TAI_API_KEY", "k");
    // the model's mcp_enable with an unknown profile is refused
    t.run(&["--yolo", "-p", "enable x for ghost"]).ok();
    let msg = &crate::support::ModelStub::tool_messages(&model.requests()[1])[0];
    assert!(msg.contains("no profile named \"ghost\""), "{msg}");
    let run = t.run_stdin(&[], "/profile ghost\n/exit\n");
    assert!(run.ok().contains("no profile named \"ghost\""), "{run:?}");
    let current: Option<String> = t
        .raw_db()
        .query_row(
            "SELECT value FROM meta WHERE key = 'current_profile'",
            [],
            |r| r.get(0),
        )
        .ok();
    assert_ne!(current.as_deref(), Some("ghost"));
    t.env("TAI_PROFILE", "nope2");
    let err = t.run(&["mcp", "list"]).fails(1).to_string();
    assert!(err.contains("no profile named \"nope2\""), "{err}");
    let rows: i64 = t
        .raw_db()
        .query_row("SELECT count(*) FROM mcp_server_profiles", [], |r| r.get(0))
        .unwrap();
    assert_eq!(rows, 0);
}

#[test]
fn piped_stdin_joins_the_prompt_as_a_fenced_block_capped() {
    let dir = TempDir::new("piped");
    let model = crate::support::ModelStub::start(
        dir.path(),
        serde_json::json!([{"text": "a summary"}, {"text": "another"}, {"text": "third"}]),
    );
    let mut t = Tai::new("piped-run");
    t.env("TAI_BASE_URL", &model.url)
        .env("TAI_MODEL", "stub-model");
    let run = t.run_stdin(&["-p", "summarize"], "line one\nline two\n");
    assert_eq!(run.ok(), "a summary\n");
    let user = |n: usize| {
        model.requests()[n]["messages"][1]["content"]
            .as_str()
            .unwrap()
            .to_string()
    };
    assert_eq!(user(0), "summarize\n\n```text\nline one\nline two\n```\n");
    // over the cap: cut on a character boundary, with a note to the model and on stderr
    let big = "é".repeat(100 * 1024); // 200 KB
    let run = t.run_stdin(&["-p", "summarize"], &big);
    assert!(
        run.stderr
            .contains("the piped input was cut to its first 128 KB (204800 bytes arrived)"),
        "{}",
        run.stderr
    );
    let sent = user(1);
    assert!(
        sent.len() < 132 * 1024 && sent.len() > 127 * 1024,
        "{}",
        sent.len()
    );
    assert!(
        sent.contains("(the piped input was cut"),
        "the model is told too"
    );
    // nothing piped (stdin is /dev/null): the prompt alone
    t.run(&["-p", "plain"]).ok();
    assert_eq!(user(2), "plain");
}

fn get_json(t: &Tai, name: &str) -> Value {
    serde_json::from_str(t.run(&["mcp", "get", name, "--json"]).ok()).unwrap()
}

#[test]
fn the_common_grammar_adds_servers() {
    let mut t = Tai::new("grammar");
    let stub_path = stub_stdio();
    // claude/codex/gemini `mcp add NAME -e K=V -- CMD ARGS…`
    let run = t.run(&[
        "--yolo",
        "mcp",
        "add",
        "mem",
        "-e",
        "FOO=1",
        "--connect-timeout",
        "40",
        "--call-timeout",
        "5",
        "--",
        stub_path,
        "--era",
        "legacy",
    ]);
    assert!(run.ok().contains("added mem"), "{run:?}");
    let v = get_json(&t, "mem");
    assert_eq!(
        (
            v["command"].as_str(),
            v["args"].clone(),
            v["env"]["FOO"].as_str()
        ),
        (
            Some(stub_path),
            serde_json::json!(["--era", "legacy"]),
            Some("****")
        )
    );
    assert_eq!(
        (
            v["connectTimeoutMs"].as_u64(),
            v["callTimeoutMs"].as_u64(),
            v["source"].as_str()
        ),
        (Some(40_000), Some(5_000), Some("explicit"))
    );
    // NAME CMD ARGS… without `--` (the words after the command are its own, -y included)
    t.run(&["--yolo", "mcp", "add", "mem2", stub_path, "--era", "modern"])
        .ok();
    assert_eq!(
        get_json(&t, "mem2")["args"],
        serde_json::json!(["--era", "modern"])
    );
    // `-- CMD ARGS…` with no name: named after the program
    let run = t.run(&["--yolo", "mcp", "add", "--", stub_path, "--era", "legacy"]);
    assert!(run.ok().contains("added tai-stub-mcp-stdio"), "{run:?}");
    // --env-var passes a variable through from tai's environment
    let script = format!("test \"$PASSED\" = through && exec {stub_path} --era legacy");
    t.env("PASSED", "through");
    t.run(&[
        "--yolo",
        "mcp",
        "add",
        "passenv",
        "--env-var",
        "PASSED",
        "--",
        "sh",
        "-c",
        &script,
    ])
    .ok();
    assert_eq!(get_json(&t, "passenv")["env"]["PASSED"], "${PASSED}");
    // HTTP: --url with -H, and NAME URL
    let http = crate::support::HttpStub::start(&["--era", "dual"]);
    t.run(&[
        "--yolo",
        "mcp",
        "add",
        "web",
        "--url",
        &http.url,
        "-H",
        "X-Team: core",
    ])
    .ok();
    let v = get_json(&t, "web");
    assert_eq!(
        (
            v["url"].as_str(),
            v["headers"]["X-Team"].as_str(),
            v["transport"].as_str()
        ),
        (Some(http.url.as_str()), Some("****"), Some("http"))
    );
    t.run(&["--yolo", "mcp", "add", "web2", &http.url]).ok();
    assert_eq!(
        get_json(&t, "web2")["url"].as_str(),
        Some(http.url.as_str())
    );
    // add-json NAME JSON
    t.run(&["--yolo", "mcp", "add-json", "fromjson", &stub("legacy")])
        .ok();
    assert_eq!(
        get_json(&t, "fromjson")["command"].as_str(),
        Some(stub_path)
    );
    // list shows the command or URL
    let list = t.run(&["mcp", "list"]).ok().to_string();
    assert!(
        list.contains("COMMAND / URL") && list.contains(&http.url) && list.contains("sh -c 'test"),
        "{list}"
    );
}

#[test]
fn get_shows_the_entry_and_list_check_the_live_status() {
    let t = Tai::new("get-check");
    t.run(&[
        "--yolo",
        "mcp",
        "add",
        "good",
        "-e",
        "TOKEN=sk-live-123456",
        "--",
        stub_stdio(),
        "--era",
        "legacy",
    ])
    .ok();
    t.run(&["mcp", "enable", "good"]).ok();
    let text = t.run(&["mcp", "get", "good"]).ok().to_string();
    for want in [
        "good\n",
        "transport    stdio",
        "TOKEN=****",
        "enabled for  default",
        "verified",
        "echo  [pinned]",
    ] {
        assert!(text.contains(want), "{want:?} in:\n{text}");
    }
    assert!(!text.contains("sk-live-123456"), "{text}");
    // a server that dies: list --check says so, and get shows the last error
    let dir = TempDir::new("get-check-dead");
    let flag = dir.path().join("alive");
    std::fs::write(&flag, "").unwrap();
    let script = format!(
        "test -e {} && exec {} --era legacy",
        flag.display(),
        stub_stdio()
    );
    t.run(&["--yolo", "mcp", "add", "flaky", "--", "sh", "-c", &script])
        .ok();
    std::fs::remove_file(&flag).unwrap();
    let run = t.run(&["--yolo", "mcp", "list", "--check"]);
    let out = run.ok();
    let line = |name: &str| {
        out.lines()
            .find(|l| l.starts_with(name))
            .unwrap_or("")
            .to_string()
    };
    assert!(line("good").contains("ok: 7 tools"), "{out}");
    assert!(line("flaky").contains("FAILED"), "{out}");
    let v: Value =
        serde_json::from_str(t.run(&["--yolo", "mcp", "list", "--check", "--json"]).ok()).unwrap();
    assert_eq!(v[0]["status"]["ok"], false, "{v}");
    assert_eq!(v[1]["status"]["ok"], true, "{v}");
    t.run(&["--yolo", "mcp", "call", "flaky", "echo", r#"{"text":"x"}"#])
        .fails(1);
    let v = get_json(&t, "flaky");
    assert!(v["lastError"]["outcome"].is_string(), "{v}");
}

#[test]
fn export_is_re_importable_in_every_format() {
    let t = Tai::new("export");
    t.run(&[
        "--yolo",
        "mcp",
        "add",
        "one",
        "-e",
        "API_KEY=sk-secret-value",
        "--call-timeout",
        "90",
        "--",
        stub_stdio(),
        "--era",
        "legacy",
    ])
    .ok();
    for format in ["claude", "vscode", "codex"] {
        let run = t.run(&["mcp", "export", "--format", format]);
        let text = run.ok().to_string();
        assert!(!text.contains("sk-secret-value"), "{format}: {text}");
        assert!(text.contains("${API_KEY}"), "{format}: {text}");
        assert!(
            run.stderr.contains("API_KEY is written as ${API_KEY}"),
            "{run:?}"
        );
        let mut other = Tai::new("export-back");
        other.env("API_KEY", "sk-secret-value");
        let file = other.dir.path().join(if format == "codex" {
            "c.toml"
        } else {
            "c.json"
        });
        write(&file, &text);
        other
            .run(&["--yolo", "mcp", "import", file.to_str().unwrap()])
            .ok();
        let v = get_json(&other, "one");
        assert_eq!(
            (v["env"]["API_KEY"].as_str(), v["callTimeoutMs"].as_u64()),
            (Some("${API_KEY}"), Some(90_000)),
            "{format}: {v}"
        );
    }
    let err = t.run(&["mcp", "export", "nope"]).fails(1).to_string();
    assert!(err.contains("no MCP server named \"nope\""), "{err}");
}

/// The keys of a JSON object, sorted.
fn keys(v: &Value) -> Vec<String> {
    let mut k: Vec<String> = v
        .as_object()
        .unwrap_or_else(|| panic!("not an object: {v}"))
        .keys()
        .cloned()
        .collect();
    k.sort();
    k
}

const SERVER_KEYS: &[&str] = &[
    "args",
    "callTimeoutMs",
    "command",
    "connectTimeoutMs",
    "created",
    "cwd",
    "enabledProfiles",
    "env",
    "envFile",
    "headers",
    "lastError",
    "name",
    "project",
    "protocol",
    "source",
    "tools",
    "transport",
    "updated",
    "url",
];
const TOOL_KEYS: &[&str] = &[
    "allowed",
    "description",
    "inputSchema",
    "name",
    "pinned",
    "server",
    "trusted",
];

#[test]
fn json_shape_of_a_server_is_one_across_add_import_get_list() {
    let t = Tai::new("shape-server");
    let add: Value = serde_json::from_str(
        t.run(&[
            "--yolo",
            "mcp",
            "add",
            "s1",
            "--json",
            "--",
            stub_stdio(),
            "--era",
            "legacy",
        ])
        .ok(),
    )
    .unwrap();
    let text = format!(r#"{{"mcpServers": {{"s2": {}}}}}"#, stub("legacy"));
    let import: Value = serde_json::from_str(
        t.run_stdin(&["--yolo", "mcp", "import", "-", "--json"], &text)
            .ok(),
    )
    .unwrap();
    let get = get_json(&t, "s1");
    let list: Value = serde_json::from_str(t.run(&["mcp", "list", "--json"]).ok()).unwrap();
    for (from, v) in [
        ("add", &add["added"][0]),
        ("import", &import["added"][0]),
        ("get", &get),
        ("list", &list[0]),
        ("list", &list[1]),
    ] {
        assert_eq!(keys(v), SERVER_KEYS, "{from}: {v}");
        assert!(
            v["tools"].is_array() && v["enabledProfiles"].is_array(),
            "{from}"
        );
    }
    assert_eq!(keys(&add), ["added", "notes", "skipped"]);
    assert_eq!(add["added"][0], get, "add and get print the same object");
}

#[test]
fn json_shape_of_a_tool_is_one_across_get_list_tools() {
    let t = Tai::new("shape-tool");
    t.run(&[
        "--yolo",
        "mcp",
        "add",
        "s1",
        "--",
        stub_stdio(),
        "--era",
        "legacy",
    ])
    .ok();
    let tools: Value = serde_json::from_str(t.run(&["mcp", "tools", "--json"]).ok()).unwrap();
    let get = get_json(&t, "s1");
    let list: Value = serde_json::from_str(t.run(&["mcp", "list", "--json"]).ok()).unwrap();
    for (from, v) in [
        ("tools", &tools[0]),
        ("get", &get["tools"][0]),
        ("list", &list[0]["tools"][0]),
    ] {
        assert_eq!(keys(v), TOOL_KEYS, "{from}: {v}");
        assert_eq!(v["name"], "echo", "{from}");
        assert_eq!(v["server"], "s1", "{from}");
    }
    assert_eq!(tools[0], get["tools"][0]);
}

#[test]
fn json_shape_of_a_call_result_and_of_errors() {
    let t = Tai::new("shape-call");
    t.run(&[
        "--yolo",
        "mcp",
        "add",
        "s1",
        "--",
        stub_stdio(),
        "--era",
        "legacy",
    ])
    .ok();
    let ok: Value = serde_json::from_str(
        t.run(&[
            "--yolo",
            "mcp",
            "call",
            "s1",
            "echo",
            r#"{"text":"hi"}"#,
            "--json",
        ])
        .ok(),
    )
    .unwrap();
    let run = t.run(&["--yolo", "mcp", "call", "s1", "fail", "--json"]);
    assert_eq!(run.code, 1);
    let failed: Value = serde_json::from_str(&run.stdout).unwrap();
    for v in [&ok, &failed] {
        assert_eq!(
            keys(v),
            ["isError", "outcome", "server", "text", "tool"],
            "{v}"
        );
    }
    assert_eq!(
        (ok["isError"].clone(), failed["isError"].clone()),
        (Value::Bool(false), Value::Bool(true))
    );
    // every command that takes --json answers an error as {"error": …} with a non-zero exit
    for args in [
        &["mcp", "get", "nope", "--json"][..],
        &["mcp", "tools", "nope", "--json"],
        &["mcp", "call", "nope", "x", "--json"],
        &["mcp", "enable", "nope", "--json"],
        &["mcp", "list", "--json", "--bogus"],
        &["vault", "record", "list", "--json", "extra"],
    ] {
        let run = t.run(args);
        assert_ne!(run.code, 0, "{args:?}");
        let v: Value =
            serde_json::from_str(&run.stdout).unwrap_or_else(|e| panic!("{args:?}: {e}: {run:?}"));
        assert_eq!(keys(&v), ["error"], "{args:?}: {v}");
        assert!(
            v["error"].as_str().is_some_and(|s| !s.is_empty()),
            "{args:?}"
        );
    }
    // enable --json prints JSON
    let v: Value = serde_json::from_str(t.run(&["mcp", "enable", "s1", "--json"]).ok()).unwrap();
    assert_eq!(
        v,
        serde_json::json!({"server": "s1", "profile": "default", "enabled": true})
    );
}

#[test]
fn lasting_trust_is_kept_in_the_vault_and_dropped_on_redefinition() {
    let mut t = Tai::new("trust");
    let stub_path = stub_stdio();
    t.run(&[
        "--yolo",
        "mcp",
        "add",
        "stub",
        "--",
        stub_path,
        "--era",
        "legacy",
        "--redefine",
        "${REDEF:-none}",
    ])
    .ok();
    let call = |t: &Tai| t.run(&["mcp", "call", "stub", "echo", r#"{"text":"hi"}"#]);
    // no terminal and no --auto: an untrusted call cannot be approved
    assert!(call(&t).fails(1).contains("no terminal to ask on"));
    t.run(&["mcp", "trust", "stub", "echo"]).ok();
    assert_eq!(call(&t).ok(), "hi\n", "a trusted call needs no question");
    assert_eq!(get_json(&t, "stub")["tools"][0]["trusted"], true);
    assert!(
        t.run(&["mcp", "get", "stub"])
            .ok()
            .contains("echo  [trusted]")
    );
    // other tools are not covered
    assert!(
        t.run(&["mcp", "call", "stub", "fail"])
            .fails(1)
            .contains("no terminal")
    );
    // the server redefines echo and a person re-adds it: the trust no longer applies
    t.env("REDEF", "echo");
    t.run(&["--yolo", "mcp", "add", "stub"]).ok();
    // (re-adding never re-pins: a person approves the redefinition)
    t.run(&["mcp", "approve", "stub", "echo"]).ok();
    assert_eq!(get_json(&t, "stub")["tools"][0]["trusted"], false);
    assert!(call(&t).fails(1).contains("no terminal to ask on"));
    // '*' trusts every tool as it is now; untrust undoes it
    t.run(&["mcp", "trust", "stub", "*"]).ok();
    assert_eq!(call(&t).ok(), "hi\n");
    t.run(&["mcp", "untrust", "stub", "*"]).ok();
    assert!(call(&t).fails(1).contains("no terminal to ask on"));
    let err = t
        .run(&["mcp", "trust", "stub", "nope"])
        .fails(1)
        .to_string();
    assert!(err.contains("stub/nope: no such tool"), "{err}");
    // removing the server removes its trusts
    t.run(&["mcp", "trust", "stub", "echo"]).ok();
    t.run(&["--yolo", "mcp", "remove", "stub"]).ok();
    let left: i64 = t
        .raw_db()
        .query_row(
            "SELECT count(*) FROM meta WHERE key LIKE 'mcp.trust.%'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(left, 0);
}

#[test]
fn a_trusted_tool_goes_without_asking_from_the_agent_too() {
    let dir = TempDir::new("trust-agent");
    let call = |text: &str| serde_json::json!({"tool_calls": [{"name": "mcp_stub_echo", "arguments": serde_json::json!({"text": text}).to_string()}]});
    let model = crate::support::ModelStub::start(
        dir.path(),
        serde_json::json!([call("first"), {"text": "one"}, call("second"), {"text": "two"}]),
    );
    let mut t = Tai::new("trust-agent-run");
    t.env("TAI_BASE_URL", &model.url)
        .env("TAI_MODEL", "stub-model");
    t.run(&[
        "--yolo",
        "mcp",
        "add",
        "stub",
        "--",
        stub_stdio(),
        "--era",
        "legacy",
    ])
    .ok();
    t.run(&["mcp", "enable", "stub"]).ok();
    // not trusted: no terminal to ask on, so the model hears it was not approved
    t.run(&["-p", "go"]).ok();
    let msg = &crate::support::ModelStub::tool_messages(&model.requests()[1])[0];
    assert!(msg.contains("did not approve"), "{msg}");
    t.run(&["mcp", "trust", "stub", "echo"]).ok();
    let run = t.run(&["-p", "again"]);
    assert!(run.ok().contains("two"), "{run:?}");
    assert!(run.stderr.contains("trusted: mcp_stub_echo"), "{run:?}");
    let msg = &crate::support::ModelStub::tool_messages(&model.requests()[3])[0];
    assert_eq!(msg, "second");
}

/// Every help text tai has: the top level and each topic.
fn all_help(t: &Tai) -> String {
    let mut all = t.run(&["--help"]).ok().to_string();
    for topic in [
        "status",
        "profile",
        "vault",
        "mcp",
        "serve",
        "completions",
        "man",
    ] {
        all.push_str(t.run(&["help", topic]).ok());
    }
    for sub in [
        "add", "add-json", "import", "resolve", "list", "get", "export", "enable", "remove",
        "tools", "call", "approve", "trust", "probe",
    ] {
        all.push_str(t.run(&["help", "mcp", sub]).ok());
    }
    all
}

#[test]
fn help_names_every_flag_command_and_variable() {
    let t = Tai::new("help-all");
    let top = t.run(&["--help"]).ok().to_string();
    let all = all_help(&t);
    for flag in tai::testing::cli::args::KNOWN_LONG {
        assert!(
            all.contains(&format!("--{flag}")),
            "--{flag} is in no help text"
        );
    }
    for flag in [
        "--serve-mcp KEY",
        "--mcp-port",
        "--mcp-bind",
        "--serve-tools",
        "--serve-mcp-stdio",
    ] {
        assert!(top.contains(flag), "{flag} not in tai --help");
    }
    for cmd in [
        "status",
        "profile",
        "vault",
        "mcp",
        "completions",
        "man",
        "help",
    ] {
        assert!(
            top.contains(&format!("\n  {cmd}")),
            "{cmd} not in tai --help"
        );
    }
    // every TAI_* variable the code reads is in `tai --help`
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut vars = std::collections::BTreeSet::new();
    let mut stack = vec![src];
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "rs") {
                let text = std::fs::read_to_string(&p).unwrap();
                for piece in text.split("\"TAI_").skip(1) {
                    let name: String = piece
                        .chars()
                        .take_while(|c| c.is_ascii_uppercase() || *c == '_')
                        .collect();
                    if piece[name.len()..].starts_with('"') {
                        vars.insert(format!("TAI_{name}"));
                    }
                }
            }
        }
    }
    assert!(vars.contains("TAI_MCP_KEY") && vars.len() > 10, "{vars:?}");
    for v in &vars {
        assert!(
            top.contains(v.as_str()),
            "{v} is read by the code but not in tai --help"
        );
    }
}

#[test]
fn per_command_help_shows_that_command() {
    let t = Tai::new("help-each");
    let add = t.run(&["mcp", "add", "--help"]).ok().to_string();
    assert!(add.contains("tai mcp add NAME [-e K=V]"), "{add}");
    assert!(!add.contains("tai mcp probe SOURCE"), "only add: {add}");
    assert_eq!(add, t.run(&["help", "mcp", "add"]).ok());
    // `tai --serve-mcp --help` is help, not a key
    let serve = t.run(&["--serve-mcp", "--help"]);
    assert!(serve.ok().contains("--mcp-bind ADDR"), "{serve:?}");
    assert_eq!(serve.stdout, t.run(&["--serve-mcp-stdio", "--help"]).ok());
    for (args, topic) in [
        (&["mcp", "list", "--help"][..], &["help", "mcp", "list"][..]),
        (
            &["mcp", "disable", "x", "--help"],
            &["help", "mcp", "enable"],
        ),
        (&["mcp", "probe", "--help"], &["help", "mcp", "probe"]),
        (&["profile", "set", "--help"], &["help", "profile"]),
        (&["completions", "--help"], &["help", "completions"]),
        (&["man", "--help"], &["help", "man"]),
    ] {
        assert_eq!(t.run(args).ok(), t.run(topic).ok(), "{args:?}");
    }
    let err = t.run(&["help", "nope"]).fails(2).to_string();
    assert!(
        err.contains("no help topic 'nope'") && err.contains("mcp add"),
        "{err}"
    );
}

#[test]
fn the_man_page_is_made_from_the_help_and_docs_tai_1_is_in_sync() {
    let t = Tai::new("man");
    let page = t.run(&["man"]).ok().to_string();
    let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/tai.1");
    let on_disk = std::fs::read_to_string(&file).unwrap_or_default();
    assert!(
        page == on_disk,
        "docs/tai.1 is out of date: regenerate it with `cargo run -- man > docs/tai.1`"
    );
    // every line of every help text is in the page
    for line in all_help(&t).lines().filter(|l| !l.trim().is_empty()) {
        let roffed = line.replace('\\', "\\e");
        assert!(
            page.contains(roffed.trim_start_matches(['.', '\''])),
            "{line:?}"
        );
    }
}

#[test]
fn completion_scripts_load_in_bash() {
    let t = Tai::new("completions");
    for shell in ["bash", "zsh", "fish"] {
        let s = t.run(&["completions", shell]).ok().to_string();
        assert!(
            s.contains("add-json") && s.contains("claude-desktop"),
            "{shell}"
        );
    }
    let script = t.dir.path().join("tai.bash");
    write(&script, t.run(&["completions", "bash"]).ok());
    let bash = |code: &str| {
        let out = std::process::Command::new("bash")
            .arg("--norc")
            .arg("-c")
            .arg(code)
            .output()
            .unwrap();
        (
            out.status.success(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
        )
    };
    let (ok, _) = bash(&format!("bash -n {}", script.display()));
    assert!(ok, "bash -n fails");
    let (ok, out) = bash(&format!("source {} && complete -p tai", script.display()));
    assert!(
        ok && out.contains("-F _tai") && out.trim_end().ends_with(" tai"),
        "{out}"
    );
    // and it completes
    let complete = |words: &str| {
        let n = words.split(' ').count() - 1;
        bash(&format!(
            "source {} && COMP_WORDS=({words}) && COMP_CWORD={n} && _tai && echo \"${{COMPREPLY[@]}}\"",
            script.display()
        ))
        .1
    };
    assert_eq!(complete("tai mcp im").trim(), "import");
    assert_eq!(complete("tai --profile work mcp ad").trim(), "add add-json");
    assert!(complete("tai mcp import c").contains("claude-code"));
    assert_eq!(complete("tai compl").trim(), "completions");
    let err = t.run(&["completions", "tcsh"]).fails(2).to_string();
    assert!(err.contains("bash, zsh or fish"), "{err}");
}

#[test]
fn served_tools_carry_annotations_and_serve_tools_narrows_them() {
    let t = Tai::new("serve-annotations");
    let init = serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "x", "version": "1"}}}).to_string();
    let list = serde_json::json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}).to_string();
    let call = serde_json::json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "shell", "arguments": {"command": "echo hi"}}}).to_string();
    let input = format!("{init}\n{list}\n{call}\n");
    let replies = |args: &[&str]| -> Vec<Value> {
        t.run_stdin(args, &input)
            .ok()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    };
    let all = replies(&["--serve-mcp-stdio"]);
    let tools = all[1]["result"]["tools"].as_array().unwrap().clone();
    let hint = |name: &str, h: &str| {
        tools
            .iter()
            .find(|x| x["name"] == name)
            .map(|x| x["annotations"][h].clone())
    };
    assert!(
        tools.iter().all(|x| x["annotations"].is_object()),
        "every tool is annotated"
    );
    assert_eq!(hint("read_file", "readOnlyHint"), Some(Value::Bool(true)));
    assert_eq!(hint("shell", "destructiveHint"), Some(Value::Bool(true)));
    assert_eq!(hint("write_file", "readOnlyHint"), Some(Value::Bool(false)));
    assert_eq!(hint("web_fetch", "openWorldHint"), Some(Value::Bool(true)));
    assert_eq!(
        all[2]["result"]["isError"],
        Value::Bool(false),
        "{:?}",
        all[2]
    );
    // --serve-tools: only these are listed, and the others cannot be called
    let some = replies(&["--serve-mcp-stdio", "--serve-tools", "read_file,grep"]);
    let names: Vec<&str> = some[1]["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["read_file", "grep"]);
    assert_eq!(some[2]["error"]["code"], -32602, "{:?}", some[2]);
    let err = t
        .run(&["--serve-mcp-stdio", "--serve-tools", "read_file,nope"])
        .fails(1)
        .to_string();
    assert!(
        err.contains("no tool named nope") && err.contains("read_file"),
        "{err}"
    );
}

#[test]
fn cargo_install_leaves_the_test_stubs_out() {
    let text =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("Cargo.toml")).unwrap();
    let manifest: toml::Table = toml::from_str(&text).unwrap();
    let bins = manifest["bin"].as_array().unwrap();
    let stubs: Vec<&toml::Value> = bins
        .iter()
        .filter(|b| b["name"].as_str().unwrap().starts_with("tai-stub-"))
        .collect();
    assert_eq!(stubs.len(), 5);
    for b in &stubs {
        assert_eq!(
            b.get("required-features")
                .and_then(|f| f.as_array())
                .map(|f| f.len()),
            Some(1),
            "{b}: a stub needs the stubs feature, so `cargo install` skips it"
        );
        assert_eq!(b["required-features"][0].as_str(), Some("stubs"));
    }
    let default = manifest["features"]["default"].as_array().unwrap();
    assert!(
        !default.iter().any(|f| f.as_str() == Some("stubs")),
        "stubs is not a default feature"
    );
    let tai = bins
        .iter()
        .find(|b| b["name"].as_str() == Some("tai"))
        .unwrap();
    assert!(
        tai.get("required-features").is_none(),
        "tai itself is always built"
    );
    // `repository` is a real address or absent
    if let Some(repo) = manifest["package"]
        .get("repository")
        .and_then(|r| r.as_str())
    {
        assert!(
            repo.starts_with("https://") && !repo.contains(".invalid"),
            "{repo}"
        );
    }
}

#[test]
fn project_scope_is_said_at_start_offered_in_the_repl_and_kept_to_the_project() {
    let dir = TempDir::new("project-scope");
    let call = serde_json::json!({"tool_calls": [{"name": "mcp_projstub_echo", "arguments": "{\"text\":\"x\"}"}]});
    let model = crate::support::ModelStub::start(
        dir.path(),
        serde_json::json!([{"text": "one"}, call, {"text": "two"}, call, {"text": "three"}]),
    );
    let mut t = Tai::new("project-scope-run");
    t.env("TAI_BASE_URL", &model.url)
        .env("TAI_MODEL", "stub-model");
    let repo = TempDir::new("project-repo");
    std::fs::create_dir_all(repo.path().join(".git")).unwrap();
    let sub = repo.path().join("src");
    std::fs::create_dir_all(&sub).unwrap();
    write(
        &repo.path().join(".mcp.json"),
        &format!(r#"{{"mcpServers": {{"projstub": {}}}}}"#, stub("legacy")),
    );
    // -p says so (never silently) and imports nothing
    let run = run_in(&t, &sub, &["-p", "hi"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(
        run.stderr
            .contains(".mcp.json (Claude Code) lists MCP servers tai has not stored: projstub")
            && run.stderr.contains("tai mcp import"),
        "{run:?}"
    );
    assert!(t.run(&["mcp", "get", "projstub"]).code != 0);
    // the REPL on a terminal offers them (only where a person answers consent); yes
    // imports them, each consented on the terminal
    let home = t.dir.path().join("home");
    let line = format!(
        "cd {} && env -i PATH=\"$PATH\" HOME={} TAI_HOME={} TAI_CONFIG={} TAI_BASE_URL={} TAI_MODEL=stub-model TERM=xterm {}; sleep 60",
        sub.display(),
        home.display(),
        t.home().display(),
        t.config_path().display(),
        model.url,
        env!("CARGO_BIN_EXE_tai"),
    );
    let tmux = Tmux {
        socket: format!("tai-it-proj-{}", std::process::id()),
    };
    tmux.run(&[
        "new-session",
        "-d",
        "-s",
        "t",
        "-x",
        "200",
        "-y",
        "50",
        &line,
    ]);
    tmux.wait_for("Import them now?");
    tmux.run(&["send-keys", "-t", "t", "y", "Enter"]);
    tmux.wait_for("[y]es / [N]o:");
    tmux.run(&["send-keys", "-t", "t", "y", "Enter"]);
    tmux.wait_for("projstub is enabled for profile default in this project");
    tmux.run(&["send-keys", "-t", "t", "/exit", "Enter"]);
    let until = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while t.run(&["mcp", "get", "projstub"]).code != 0 {
        assert!(std::time::Instant::now() < until, "{}", tmux.pane());
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    let v = get_json(&t, "projstub");
    assert_eq!(
        v["project"].as_str(),
        Some(repo.path().to_str().unwrap()),
        "{v}"
    );
    assert_eq!(v["enabledProfiles"], serde_json::json!(["default"]));
    // its tool works inside the project, and does not exist outside it
    run_in(&t, &sub, &["--yolo", "-p", "inside"]).ok();
    let reqs = model.requests();
    assert_eq!(
        crate::support::ModelStub::tool_messages(reqs.last().unwrap())[0],
        "x"
    );
    let elsewhere = TempDir::new("project-elsewhere");
    run_in(&t, elsewhere.path(), &["--yolo", "-p", "outside"]).ok();
    let reqs = model.requests();
    let msg = &crate::support::ModelStub::tool_messages(reqs.last().unwrap())[0];
    assert!(
        msg.contains("no MCP tool named \"mcp_projstub_echo\""),
        "{msg}"
    );
}

#[test]
fn the_repl_edits_lines_keeps_history_without_secrets_and_one_thread() {
    let dir = TempDir::new("repl-edit");
    let model = crate::support::ModelStub::start(
        dir.path(),
        serde_json::json!([{"text": "A1"}, {"text": "A2"}, {"text": "A3"}, {"text": "A4"}]),
    );
    let t = Tai::new("repl-edit-run");
    t.run_stdin(&["vault", "secret", "set", "tok"], "vault-secret-value-77")
        .ok();
    let state = t.dir.path().join("state");
    let line = format!(
        "exec env -i PATH=\"$PATH\" HOME={} XDG_STATE_HOME={} TAI_HOME={} TAI_CONFIG={} TAI_BASE_URL={} TAI_MODEL=stub-model TERM=xterm {}",
        t.dir.path().join("home").display(),
        state.display(),
        t.home().display(),
        t.config_path().display(),
        model.url,
        env!("CARGO_BIN_EXE_tai"),
    );
    let tmux = Tmux {
        socket: format!("tai-it-repl-{}", std::process::id()),
    };
    tmux.run(&[
        "new-session",
        "-d",
        "-s",
        "t",
        "-x",
        "160",
        "-y",
        "50",
        &line,
    ]);
    tmux.wait_for("tai default·stub-model>");
    // the REPL waiting at its prompt is one thread
    let pid: u32 = tmux
        .run(&["list-panes", "-t", "t", "-F", "#{pane_pid}"])
        .trim()
        .parse()
        .unwrap();
    assert_eq!(crate::support::thread_count(pid), 1);
    // arrows move the cursor instead of reaching the model as escape codes
    tmux.run(&["send-keys", "-t", "t", "helo", "Left", "l", "Enter"]);
    tmux.wait_for("A1");
    // Up recalls the line; End and more text edit it
    tmux.run(&["send-keys", "-t", "t", "Up", "End", " again", "Enter"]);
    tmux.wait_for("A2");
    // a line holding a vault secret, or a token, or starting with a space is not kept
    tmux.run(&[
        "send-keys",
        "-t",
        "t",
        "the value is vault-secret-value-77",
        "Enter",
    ]);
    tmux.wait_for("A3");
    tmux.run(&["send-keys", "-t", "t", " private words", "Enter"]);
    tmux.wait_for("A4");
    tmux.run(&["send-keys", "-t", "t", "/exit", "Enter"]);
    let users: Vec<String> = model
        .requests()
        .iter()
        .map(|r| {
            let m = r["messages"].as_array().unwrap();
            m.iter().rev().find(|x| x["role"] == "user").unwrap()["content"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();
    assert_eq!(users[0], "hello");
    assert_eq!(users[1], "hello again");
    // once tai has left, the history holds the plain lines (and /exit), nothing secret
    let left = crate::support::wait_gone(pid);
    assert!(
        left.is_none() || left == Some('Z'),
        "tai did not leave: {left:?}"
    );
    let file = state.join("tai/history");
    let history = std::fs::read_to_string(&file).unwrap_or_default();
    assert_eq!(history, "hello\nhello again\n/exit\n");
    use std::os::unix::fs::PermissionsExt;
    assert_eq!(
        std::fs::metadata(&file).unwrap().permissions().mode() & 0o777,
        0o600
    );
}

#[test]
fn the_repl_approval_offers_always_remember_for_an_mcp_tool() {
    let dir = TempDir::new("repl-remember");
    let call = serde_json::json!({"tool_calls": [{"name": "mcp_stub_echo", "arguments": "{\"text\":\"r\"}"}]});
    let model = crate::support::ModelStub::start(
        dir.path(),
        serde_json::json!([call, {"text": "B1"}, call, {"text": "B2"}]),
    );
    let t = Tai::new("repl-remember-run");
    t.run(&[
        "--yolo",
        "mcp",
        "add",
        "stub",
        "--",
        stub_stdio(),
        "--era",
        "legacy",
    ])
    .ok();
    t.run(&["mcp", "enable", "stub"]).ok();
    let line = format!(
        "env -i PATH=\"$PATH\" HOME={} TAI_HOME={} TAI_CONFIG={} TAI_BASE_URL={} TAI_MODEL=stub-model TERM=xterm {}; sleep 60",
        t.dir.path().join("home").display(),
        t.home().display(),
        t.config_path().display(),
        model.url,
        env!("CARGO_BIN_EXE_tai"),
    );
    let tmux = Tmux {
        socket: format!("tai-it-remember-{}", std::process::id()),
    };
    tmux.run(&[
        "new-session",
        "-d",
        "-s",
        "t",
        "-x",
        "200",
        "-y",
        "50",
        &line,
    ]);
    tmux.wait_for("tai default·stub-model>");
    tmux.run(&["send-keys", "-t", "t", "echo it", "Enter"]);
    tmux.wait_for("[r]emember: always (remember)");
    tmux.run(&["send-keys", "-t", "t", "r", "Enter"]);
    tmux.wait_for("B1");
    tmux.run(&["send-keys", "-t", "t", "/exit", "Enter"]);
    // the trust outlives the session: the next run asks nothing (no terminal, no flag)
    let v = get_json(&t, "stub");
    let echo = v["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|x| x["name"] == "echo")
        .unwrap()
        .clone();
    assert_eq!(echo["trusted"], true, "{v}");
    let mut t = t;
    t.env("TAI_BASE_URL", &model.url)
        .env("TAI_MODEL", "stub-model");
    let run = t.run(&["-p", "again"]);
    assert!(run.ok().contains("B2"), "{run:?}");
    let msg = &crate::support::ModelStub::tool_messages(&model.requests()[3])[0];
    assert_eq!(msg, "r");
}

#[test]
fn serve_tools_narrows_the_http_server_too_in_both_eras() {
    let t = Tai::new("serve-tools-http");
    let port = crate::support::free_port();
    let key = "serve-tools-key-0123";
    let server = crate::support::Server::start(
        t.cmd(&[
            "--serve-mcp",
            key,
            "--mcp-port",
            &port.to_string(),
            "--serve-tools",
            "read_file,completions",
        ]),
        port,
    );
    let url = format!("http://127.0.0.1:{port}/mcp");
    for protocol in ["2025-11-25", "2026-07-28"] {
        let probe = |call: &str| {
            t.run(&[
                "mcp",
                "probe",
                &url,
                "--json",
                "--protocol",
                protocol,
                "--header",
                &format!("Authorization: Bearer {key}"),
                "--call",
                call,
                "--args",
                r#"{"path":"/etc/hostname"}"#,
            ])
        };
        let run = probe("read_file");
        let v: Value = serde_json::from_str(run.ok()).unwrap();
        let names: Vec<&str> = v["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x["name"].as_str().unwrap())
            .collect();
        assert_eq!(names, ["read_file", "completions"], "{protocol}");
        let err = probe("shell").fails(1).to_string();
        assert!(err.contains("Unknown tool: shell"), "{protocol}: {err}");
    }
    drop(server);
}
