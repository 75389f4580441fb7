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
        (codex["connectTimeoutMs"].as_u64(), codex["callTimeoutMs"].as_u64()),
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
        run.stderr.matches("--auto approved: run the MCP server").count(),
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
    write(&repo.path().join(".env"), "# the token\nTOKEN=\"from-env-file\"\n");
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
    tmux.run(&["new-session", "-d", "-s", "t", "-x", "160", "-y", "40", &line]);
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
    assert!(!pane.contains("typed-s3cret"), "the password was echoed:\n{pane}");
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
        (v["config"]["model"].as_str(), v["config"]["base_url"].as_str()),
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
    t.env("TAI_BASE_URL", &model.url).env("TAI_MODEL", "stub-model");
    let run = t.run_stdin(&["-p", "summarize"], "line one\nline two\n");
    assert_eq!(run.ok(), "a summary\n");
    let user = |n: usize| model.requests()[n]["messages"][1]["content"]
        .as_str()
        .unwrap()
        .to_string();
    assert_eq!(user(0), "summarize\n\n```text\nline one\nline two\n```\n");
    // over the cap: cut on a character boundary, with a note to the model and on stderr
    let big = "é".repeat(100 * 1024); // 200 KB
    let run = t.run_stdin(&["-p", "summarize"], &big);
    assert!(
        run.stderr.contains("the piped input was cut to its first 128 KB (204800 bytes arrived)"),
        "{}",
        run.stderr
    );
    let sent = user(1);
    assert!(sent.len() < 132 * 1024 && sent.len() > 127 * 1024, "{}", sent.len());
    assert!(sent.contains("(the piped input was cut"), "the model is told too");
    // nothing piped (stdin is /dev/null): the prompt alone
    t.run(&["-p", "plain"]).ok();
    assert_eq!(user(2), "plain");
}
