//! The `tai` binary's command line: help, version, exit codes, config errors, profiles.

use crate::support::Tai;

#[test]
fn help_and_version() {
    let t = Tai::new("help");
    let top = t.run(&["--help"]);
    assert!(top.ok().contains("Usage: tai"), "{top:?}");
    for topic in ["status", "profile", "vault"] {
        let by_flag = t.run(&[topic, "--help"]).ok().to_string();
        let by_word = t.run(&["help", topic]).ok().to_string();
        assert!(
            by_flag.contains(&format!("tai {topic}")),
            "{topic}: {by_flag}"
        );
        assert_eq!(by_flag, by_word);
    }
    assert_eq!(
        t.run(&["vault", "secret", "set", "--help"]).ok(),
        t.run(&["vault", "--help"]).ok()
    );
    assert_eq!(
        t.run(&["--version"]).ok(),
        format!("tai {}\n", env!("CARGO_PKG_VERSION"))
    );
    // --help and --version touch nothing on disk
    assert!(!t.vault_path().exists());
}

#[test]
fn exit_codes() {
    let t = Tai::new("codes");
    for bad in [
        &["--nope"][..],
        &["frob"],
        &["vault", "audit", "--limit", "-3"],
        &["--auto", "--yolo", "status"],
        &["profile", "use"],
    ] {
        let err = t.run(bad).fails(2).to_string();
        assert!(
            err.starts_with("tai: ") && err.lines().count() == 1,
            "{bad:?}: {err:?}"
        );
    }
    t.run(&["status"]).ok();
    let err = t
        .run(&["vault", "secret", "rm", "nothere"])
        .fails(1)
        .to_string();
    assert!(err.contains("no secret named \"nothere\""), "{err}");
}

#[test]
fn status_reports_defaults_and_env() {
    let mut t = Tai::new("status");
    let out = t.run(&["status"]).ok().to_string();
    assert!(out.contains("profile   default"), "{out}");
    assert!(out.contains("endpoint  http://127.0.0.1:11434/v1"), "{out}");
    assert!(out.contains("(not present; defaults apply)"), "{out}");
    t.env("TAI_MODEL", "qwen3")
        .env("TAI_BASE_URL", "http://models.local/v1/");
    let v: serde_json::Value = serde_json::from_str(t.run(&["status", "--json"]).ok()).unwrap();
    assert_eq!(v["config"]["model"], "qwen3");
    assert_eq!(v["config"]["base_url"], "http://models.local/v1");
    assert_eq!(
        v["vault"]["schema_version"],
        tai::testing::vault::schema::LATEST
    );
    assert_eq!(v["vault"]["sealed"], false);
}

#[test]
fn malformed_config_is_a_clear_error() {
    let t = Tai::new("badcfg");
    t.write_config("model = \"m\"\n\n[profiles.work]\nmodle = \"x\"\n");
    let err = t.run(&["status"]).fails(1).to_string();
    let want = format!("config error: {}:4:1:", t.config_path().display());
    assert!(err.contains(&want), "{err}");
    assert!(err.contains("modle"), "{err}");
    t.write_config("model = [1,\n");
    let err = t.run(&["status"]).fails(1).to_string();
    assert!(
        err.contains(&format!("{}:", t.config_path().display())),
        "{err}"
    );
}

#[test]
fn profiles_add_use_remove() {
    let t = Tai::new("profiles");
    t.write_config("[profiles.filed]\nmodel = \"from-file\"\n");
    t.run(&[
        "profile",
        "add",
        "work",
        "--model",
        "big",
        "--base-url",
        "http://gpu:8000/v1",
    ])
    .ok();
    assert!(
        t.run(&["profile", "add", "work"])
            .fails(1)
            .contains("already exists")
    );
    let list = t.run(&["profile", "list"]).ok().to_string();
    assert!(
        list.contains("* ")
            && list.contains("default")
            && list.contains("work")
            && list.contains("filed"),
        "{list}"
    );
    assert!(
        t.run(&["profile", "use", "ghost"])
            .fails(1)
            .contains("tai profile add ghost")
    );
    t.run(&["profile", "use", "work"]).ok();
    let v: serde_json::Value = serde_json::from_str(t.run(&["status", "--json"]).ok()).unwrap();
    assert_eq!(
        (
            v["config"]["profile"].as_str(),
            v["config"]["model"].as_str()
        ),
        (Some("work"), Some("big"))
    );
    // --profile overrides the stored choice for one run
    let v: serde_json::Value =
        serde_json::from_str(t.run(&["--profile", "filed", "status", "--json"]).ok()).unwrap();
    assert_eq!(v["config"]["model"], "from-file");
    // removing the current profile falls back to the default, and drops its enablements
    t.raw_db()
        .execute_batch(
            "INSERT INTO mcp_servers(name, transport, source, created, updated) VALUES ('s', 'stdio', 'explicit', 0, 0);
             INSERT INTO mcp_server_profiles VALUES ('s', 'work', 1), ('s', 'default', 1);",
        )
        .unwrap();
    t.run(&["profile", "remove", "work"]).ok();
    let left: i64 = t
        .raw_db()
        .query_row("SELECT count(*) FROM mcp_server_profiles", [], |r| r.get(0))
        .unwrap();
    assert_eq!(left, 1);
    let v: serde_json::Value = serde_json::from_str(t.run(&["status", "--json"]).ok()).unwrap();
    assert_eq!(v["config"]["profile"], "default");
    assert!(
        t.run(&["profile", "remove", "default"])
            .fails(1)
            .contains("cannot be removed")
    );
    assert!(
        t.run(&["profile", "remove", "filed"])
            .fails(1)
            .contains("remove it there")
    );
}
