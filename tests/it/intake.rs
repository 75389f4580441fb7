//! Server intake end to end: `tai mcp add|import|list|enable|call|remove` against the
//! stubs and server-everything, with consent, caps, the seal and the audit trail.

use serde_json::Value;

use crate::support::{HttpStub, Tai, file_contains, peers, stub_stdio};

fn rows(t: &Tai, table: &str) -> i64 {
    t.raw_db()
        .query_row(&format!("SELECT count(*) FROM {table}"), [], |r| r.get(0))
        .unwrap()
}

fn json(run: &crate::support::Run) -> Value {
    serde_json::from_str(run.ok()).unwrap_or_else(|e| panic!("{e}: {run:?}"))
}

#[test]
fn add_enable_call_remove_leaves_no_rows() {
    let t = Tai::new("intake-flow");
    let source = format!(
        r#"{{"mcpServers": {{"stub": {{"command": "{}", "args": ["--era", "dual"]}}}}}}"#,
        stub_stdio()
    );
    // without a terminal and without --auto/--yolo nothing runs and nothing is stored
    let err = t.run(&["mcp", "add", &source]).fails(1).to_string();
    assert!(
        err.contains("no terminal to ask on") && err.contains("--auto"),
        "{err}"
    );
    assert_eq!(rows(&t, "mcp_servers"), 0);

    let run = t.run(&["--auto", "mcp", "add", &source]);
    assert!(
        run.stderr
            .contains("--auto approved: run the MCP server \"stub\""),
        "{run:?}"
    );
    assert!(run.ok().contains("added stub (stdio"), "{run:?}");
    assert_eq!(
        (
            rows(&t, "mcp_servers"),
            rows(&t, "mcp_server_tools"),
            rows(&t, "mcp_tool_pins")
        ),
        (1, 7, 7)
    );
    let source_col: String = t
        .raw_db()
        .query_row("SELECT source FROM mcp_servers", [], |r| r.get(0))
        .unwrap();
    assert_eq!(source_col, "config-json");
    // disabled everywhere until enabled, then per profile
    let list = json(&t.run(&["mcp", "list", "--json"]));
    assert_eq!(list[0]["enabledProfiles"], serde_json::json!([]));
    t.run(&["mcp", "enable", "stub"]).ok();
    t.run(&["profile", "add", "work"]).ok();
    t.run(&["--profile", "work", "mcp", "disable", "stub"]).ok();
    let list = json(&t.run(&["mcp", "list", "--json"]));
    assert_eq!(list[0]["enabledProfiles"], serde_json::json!(["default"]));
    let pinned = list[0]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| t["pinned"] == true);
    assert_eq!(pinned.count(), 7);
    // a call: approval, the result, the audit row
    let v = json(&t.run(&[
        "--yolo",
        "mcp",
        "call",
        "stub",
        "echo",
        r#"{"text":"called"}"#,
        "--json",
    ]));
    assert_eq!(
        (v["text"].as_str(), v["outcome"].as_str()),
        (Some("called"), Some("ok"))
    );
    let run = t.run(&["--yolo", "mcp", "call", "stub", "fail"]);
    assert!(run.fails(1).contains("ran and reported an error"));
    let audit = json(&t.run(&["vault", "audit", "--json"]));
    let outcomes: Vec<(&str, &str)> = audit
        .as_array()
        .unwrap()
        .iter()
        .map(|r| (r["kind"].as_str().unwrap(), r["outcome"].as_str().unwrap()))
        .collect();
    for want in [
        ("mcp-add", "denied"),
        ("mcp-add", "stored"),
        ("mcp-enable", "enabled"),
        ("mcp-call", "ok"),
        ("mcp-call", "tool-error"),
    ] {
        assert!(outcomes.contains(&want), "{want:?} not in {outcomes:?}");
    }
    // removal asks first, then takes every row with it
    assert!(
        t.run(&["mcp", "remove", "stub"])
            .fails(1)
            .contains("no terminal")
    );
    t.run(&["--yolo", "mcp", "remove", "stub"]).ok();
    for table in [
        "mcp_servers",
        "mcp_server_profiles",
        "mcp_server_tools",
        "mcp_tool_pins",
    ] {
        assert_eq!(rows(&t, table), 0, "{table}");
    }
    let keys: i64 = t
        .raw_db()
        .query_row(
            "SELECT count(*) FROM meta WHERE key LIKE 'mcp.%'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(keys, 0);
}

#[test]
fn a_failing_server_stores_nothing() {
    let t = Tai::new("intake-fail");
    let err = t
        .run(&["--yolo", "mcp", "add", "/bin/false", "--name", "broken"])
        .fails(1)
        .to_string();
    assert!(
        err.contains("the live check failed, nothing was stored"),
        "{err}"
    );
    assert_eq!(rows(&t, "mcp_servers"), 0);
    let err = t
        .run(&["--yolo", "mcp", "add", "no-such-command-xyz"])
        .fails(1)
        .to_string();
    assert!(err.contains("is it installed and on PATH"), "{err}");
    assert_eq!(rows(&t, "mcp_servers"), 0);
}

#[test]
fn the_33rd_server_is_refused_and_names_clash() {
    let t = Tai::new("intake-cap");
    let add = |name: &str| {
        t.run(&[
            "--yolo",
            "mcp",
            "add",
            &format!("{} --era legacy", stub_stdio()),
            "--name",
            name,
        ])
    };
    add("first").ok();
    let err = add("first").fails(1).to_string();
    assert!(
        err.contains("already stored") && err.contains("--replace"),
        "{err}"
    );
    t.run(&[
        "--yolo",
        "mcp",
        "add",
        &format!("{} --era legacy", stub_stdio()),
        "--name",
        "first",
        "--replace",
    ])
    .ok();
    let conn = t.raw_db();
    for i in 0..31 {
        conn.execute(
            "INSERT INTO mcp_servers(name, transport, command, source, created, updated) VALUES (?1, 'stdio', 'x', 'explicit', 0, 0)",
            [format!("filler{i}")],
        )
        .unwrap();
    }
    drop(conn);
    let err = add("thirty-third").fails(1).to_string();
    assert!(
        err.contains("32 servers are stored") && err.contains("MCP_MAX_SERVERS"),
        "{err}"
    );
    assert_eq!(rows(&t, "mcp_servers"), 32);
}

#[test]
fn a_changed_command_asks_again() {
    let mut t = Tai::new("intake-consent");
    t.env("STUB_ERA", "dual");
    let source = format!(
        r#"{{"command": "{}", "args": ["--era", "${{STUB_ERA}}"]}}"#,
        stub_stdio()
    );
    t.run(&["--yolo", "mcp", "add", &source, "--name", "moving"])
        .ok();
    // the same expansion: only the call itself needs approval
    let err = t
        .run(&["mcp", "call", "moving", "echo", r#"{"text":"x"}"#])
        .fails(1)
        .to_string();
    assert!(
        err.contains("call the MCP tool moving/echo [pin ") && !err.contains("changed"),
        "{err}"
    );
    t.env("STUB_ERA", "legacy");
    let err = t
        .run(&["mcp", "call", "moving", "echo", r#"{"text":"x"}"#])
        .fails(1)
        .to_string();
    assert!(
        err.contains("whose command changed since it was approved"),
        "{err}"
    );
    let run = t.run(&[
        "--auto",
        "mcp",
        "call",
        "moving",
        "echo",
        r#"{"text":"now"}"#,
    ]);
    assert!(
        run.stderr.contains("command changed since it was approved"),
        "{run:?}"
    );
    assert_eq!(run.ok(), "now\n");
    // once approved, the new command is the consented one
    let run = t.run(&[
        "--auto",
        "mcp",
        "call",
        "moving",
        "echo",
        r#"{"text":"again"}"#,
    ]);
    assert!(!run.stderr.contains("changed"), "{run:?}");
}

#[test]
fn missing_variables_refuse_the_spawn() {
    let t = Tai::new("intake-vars");
    let source = r#"{"mcpServers": {"gh": {"command": "npx", "args": ["-y", "x"], "env": {"TOKEN": "${input:gh-token}", "OTHER": "${NOT_SET_ANYWHERE}"}}}}"#;
    let err = t
        .run(&["--yolo", "mcp", "add", source])
        .fails(1)
        .to_string();
    assert!(
        err.contains("${input:gh-token} (`tai vault secret set gh-token`)"),
        "{err}"
    );
    assert!(
        err.contains("${NOT_SET_ANYWHERE} (export NOT_SET_ANYWHERE"),
        "{err}"
    );
    assert!(err.contains("nothing was started"), "{err}");
}

#[test]
fn import_reports_each_server() {
    let t = Tai::new("intake-import");
    let file = t.dir.path().join("claude_desktop_config.json");
    let stub = stub_stdio();
    std::fs::write(
        &file,
        format!(
            r#"{{"mcpServers": {{
                "one": {{"command": "{stub}", "args": ["--era", "legacy"]}},
                "two": {{"command": "{stub}", "args": ["--era", "modern"], "alwaysAllow": ["echo"]}},
                "old": {{"type": "sse", "url": "http://127.0.0.1:1/sse"}},
                "dead": {{"command": "/bin/false"}}
            }}}}"#
        ),
    )
    .unwrap();
    // something was skipped: the summary is printed and the exit is 1
    let run = t.run(&[
        "--yolo",
        "mcp",
        "import",
        &file.display().to_string(),
        "--json",
    ]);
    assert_eq!(run.code, 1, "{run:?}");
    let v: Value = serde_json::from_str(&run.stdout).unwrap_or_else(|e| panic!("{e}: {run:?}"));
    let added: Vec<&str> = v["added"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["name"].as_str().unwrap())
        .collect();
    assert_eq!(added, ["one", "two"]);
    let skipped: Vec<&str> = v["skipped"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["name"].as_str().unwrap())
        .collect();
    assert_eq!(skipped, ["old", "dead"]);
    assert!(v["notes"].to_string().contains("alwaysAllow"), "{v}");
    // `add` with a multi-server paste tries each in turn (these are stored already)
    let text = std::fs::read_to_string(&file).unwrap();
    let err = t.run(&["--yolo", "mcp", "add", &text]).fails(1).to_string();
    assert!(
        err.contains("skipped one: a server named \"one\" is already stored")
            && err.contains("skipped two: a server named \"two\" is already stored")
            && err.contains("0 added, 4 skipped"),
        "{err}"
    );
    // one of them by name
    let err = t
        .run(&["--yolo", "mcp", "add", &text, "--name", "nope"])
        .fails(1)
        .to_string();
    assert!(err.contains("holds no server named \"nope\""), "{err}");
}

#[test]
fn codex_toml_enables_the_registering_profile_and_filters_tools() {
    let t = Tai::new("intake-toml");
    let toml = format!(
        "[mcp_servers.codexstub]\ncommand = \"{}\"\nargs = [\"--era\", \"legacy\"]\nenabled = true\nenabled_tools = [\"echo\"]\nstartup_timeout_sec = 5\n",
        stub_stdio()
    );
    t.run(&["profile", "add", "work"]).ok();
    let run = t.run(&["--yolo", "--profile", "work", "mcp", "add", &toml]);
    assert!(run.ok().contains("enabled for profile work"), "{run:?}");
    let list = json(&t.run(&["mcp", "list", "--json"]));
    assert_eq!(
        (
            list[0]["enabledProfiles"].clone(),
            list[0]["source"].as_str()
        ),
        (serde_json::json!(["work"]), Some("config-toml"))
    );
    let tools: serde_json::Value =
        serde_json::from_str(t.run(&["mcp", "tools", "codexstub", "--json"]).ok()).unwrap();
    let allowed = |n: &str| {
        tools
            .as_array()
            .unwrap()
            .iter()
            .find(|x| x["name"] == n)
            .map(|x| x["allowed"].clone())
    };
    assert_eq!(
        (allowed("echo"), allowed("fail")),
        (
            Some(serde_json::json!(true)),
            Some(serde_json::json!(false))
        )
    );
    let err = t
        .run(&["--yolo", "mcp", "call", "codexstub", "fail"])
        .fails(1)
        .to_string();
    assert!(
        err.contains("not allowed by the server's tool list"),
        "{err}"
    );
    t.run(&[
        "--yolo",
        "mcp",
        "call",
        "codexstub",
        "echo",
        r#"{"text":"allowed"}"#,
    ])
    .ok();
}

#[test]
fn sealed_header_values_stay_off_disk() {
    let mut t = Tai::new("intake-seal");
    t.env("TAI_VAULT_PASSPHRASE", "pass");
    t.run(&["vault", "seal"]).ok();
    let stub = HttpStub::start(&["--era", "dual"]);
    let source = format!(
        r#"{{"url": "{}", "headers": {{"X-Api-Key": "LITERAL-HEADER-SECRET-4f2a"}}}}"#,
        stub.url
    );
    let run = t.run(&["--yolo", "mcp", "add", &source, "--name", "web"]);
    assert!(
        !run.stdout.contains("LITERAL-HEADER") && !run.stderr.contains("LITERAL-HEADER"),
        "{run:?}"
    );
    run.ok();
    let v = t.vault_path();
    for f in [
        v.clone(),
        v.with_extension("db-wal"),
        v.with_extension("db-shm"),
        v.with_extension("db-audit"),
    ] {
        assert!(
            !file_contains(&f, b"LITERAL-HEADER-SECRET-4f2a"),
            "{}",
            f.display()
        );
    }
    // and the stored header still works for a call
    let v = json(&t.run(&[
        "--yolo",
        "mcp",
        "call",
        "web",
        "echo",
        r#"{"text":"sealed ok"}"#,
        "--json",
    ]));
    assert_eq!(v["text"], "sealed ok");
}

#[test]
fn server_everything_end_to_end() {
    let p = peers();
    let t = Tai::new("intake-everything");
    let source = format!(
        r#"{{"mcpServers": {{"everything": {{"command": "{}", "args": ["{}"]}}}}}}"#,
        p.node.display(),
        p.everything.display()
    );
    let run = t.run(&["--yolo", "mcp", "add", &source]);
    assert!(
        run.ok()
            .contains("added everything (stdio, mcp-servers/everything"),
        "{run:?}"
    );
    t.run(&["mcp", "enable", "everything"]).ok();
    let v = json(&t.run(&[
        "--yolo",
        "mcp",
        "call",
        "everything",
        "echo",
        r#"{"message":"via tai"}"#,
        "--json",
    ]));
    assert_eq!(v["text"], "Echo: via tai");
    t.run(&["--yolo", "mcp", "remove", "everything"]).ok();
    assert_eq!(
        rows(&t, "mcp_servers") + rows(&t, "mcp_server_tools") + rows(&t, "mcp_tool_pins"),
        0
    );
}
