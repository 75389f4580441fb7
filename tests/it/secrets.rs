//! Secrets stay in: child environments built without tai's secrets, every secret kind
//! redacted before the model, the terminal, spill records, conversations and the audit
//! trail; a sealed vault holds no plaintext; the audit chain detects removal and forgery.

use serde_json::{Value, json};

use crate::support::{HttpStub, ModelStub, Run, Tai, TempDir, file_contains, stub_log, stub_stdio};

const PASSPHRASE: &str = "passphrase-value-4444";
const API_KEY: &str = "sk-api-key-value-3333";
const SERVER_KEY: &str = "server-key-value-8888";
const GITHUB: &str = "ghp_github_token_value_9999";
const VAULT_SECRET: &str = "vault-secret-VALUE-1111";
const VAR_VALUE: &str = "env-var-value-2222";
const LITERAL_ENV: &str = "ghp_literal_env_token_5555";
const HEADER_TOKEN: &str = "header-token-value-6666";
const QUOTED: &str = "q\"uote\\back-7777";

/// Every secret value of the scenario, each with the forms it may take in text.
fn every_form() -> Vec<(String, &'static str)> {
    let mut out = Vec::new();
    for (v, what) in [
        (PASSPHRASE, "passphrase"),
        (API_KEY, "api key"),
        (SERVER_KEY, "server key"),
        (GITHUB, "GITHUB_TOKEN"),
        (VAULT_SECRET, "vault secret"),
        (VAR_VALUE, "${VAR} value"),
        (LITERAL_ENV, "literal env token"),
        (HEADER_TOKEN, "literal header value"),
        (QUOTED, "secret with a quote and a backslash"),
    ] {
        out.push((v.to_string(), what));
        let escaped = Value::String(v.into()).to_string();
        out.push((escaped[1..escaped.len() - 1].to_string(), what));
    }
    out
}

#[track_caller]
fn assert_no_secret(text: &str, place: &str) {
    for (form, what) in every_form() {
        assert!(
            !text.contains(&form),
            "the {what} ({form:?}) reached {place}:\n{text}"
        );
    }
}

/// A tai whose environment holds every one of its own secrets.
fn tai_with_secrets(tag: &str) -> Tai {
    let mut t = Tai::new(tag);
    t.env("TAI_VAULT_PASSPHRASE", PASSPHRASE)
        .env("TAI_API_KEY", API_KEY)
        .env("TAI_MCP_KEY", SERVER_KEY)
        .env("GITHUB_TOKEN", GITHUB)
        .env("MY_TOKEN", VAR_VALUE)
        .env("PROJECT_DIR", "/srv/project")
        .env("UNLISTED", "not-for-servers")
        .env("COPY_OF_SECRET", VAULT_SECRET);
    t
}

#[test]
fn a_stdio_server_gets_the_allowlist_its_env_and_its_passthrough_only() {
    let mut t = tai_with_secrets("child-env");
    // Too short to be redacted, so only its name keeps it from the child.
    t.env("TAI_MCP_KEY", "tiny");
    t.run_stdin(&["vault", "secret", "set", "vtok"], VAULT_SECRET)
        .ok();
    let log = t.dir.path().join("env.log");
    let entry = json!({"mcpServers": {"envy": {
        "command": stub_stdio(),
        "args": ["--dump-env", "--env-tool", "--log", log.display().to_string()],
        "env": {"NAMED_TOKEN": "${GITHUB_TOKEN}", "LITERAL": LITERAL_ENV},
        "env_vars": ["PROJECT_DIR", "COPY_OF_SECRET", "TAI_API_KEY", "TAI_MCP_KEY"],
    }}});
    let added = t.run(&["--yolo", "mcp", "add", &entry.to_string()]);
    let shown = added.ok().to_string() + &added.stderr;
    // consent (here: --yolo's note of what it approved) names the passthrough
    assert!(t.run(&["mcp", "list"]).ok().contains("envy"), "{shown}");
    let run = t.run(&["--yolo", "mcp", "call", "envy", "env"]);
    run.ok();
    let envs: Vec<Value> = stub_log(&log)
        .into_iter()
        .filter_map(|l| l.get("env").cloned())
        .collect();
    assert!(envs.len() >= 2, "both spawns dumped their environment");
    for env in &envs {
        let env = env.as_object().unwrap();
        for name in [
            "TAI_VAULT_PASSPHRASE",
            "TAI_API_KEY",
            "TAI_MCP_KEY",
            "GITHUB_TOKEN",
            "UNLISTED",
            "TAI_HOME",
            "COPY_OF_SECRET",
        ] {
            assert!(
                !env.contains_key(name),
                "{name} reached the server: {env:?}"
            );
        }
        let text = Value::Object(env.clone()).to_string();
        for v in [PASSPHRASE, API_KEY, SERVER_KEY, VAULT_SECRET] {
            assert!(!text.contains(v), "{v} reached the server: {text}");
        }
        // what the entry names explicitly, and the allowlist, are there
        assert_eq!(env["NAMED_TOKEN"], GITHUB);
        assert_eq!(env["LITERAL"], LITERAL_ENV);
        assert_eq!(env["PROJECT_DIR"], "/srv/project");
        assert!(env.contains_key("PATH") && env.contains_key("HOME"));
    }
    // the server's own answer is redacted on the way back
    assert_no_secret(&run.stdout, "the terminal");
    assert!(
        run.stdout.contains("PROJECT_DIR=/srv/project"),
        "{}",
        run.stdout
    );
}

#[test]
fn the_shell_tool_child_gets_none_of_tais_secrets() {
    let dir = TempDir::new("shell-env");
    let model = ModelStub::start(
        dir.path(),
        json!([
            {"tool_calls": [{"name": "shell", "arguments": json!({"command": "env"}).to_string()}]},
            {"text": "done"}
        ]),
    );
    let mut t = tai_with_secrets("shell-env-run");
    // Too short to be redacted, so only its name keeps it from the child.
    t.env("TAI_MCP_KEY", "tiny");
    t.env("TAI_BASE_URL", &model.url)
        .env("TAI_MODEL", "stub-model");
    t.run_stdin(&["vault", "secret", "set", "vtok"], VAULT_SECRET)
        .ok();
    t.run(&["--yolo", "-p", "show the environment"]).ok();
    let out = &ModelStub::tool_messages(&model.requests()[1])[0];
    for name in [
        "TAI_VAULT_PASSPHRASE=",
        "TAI_API_KEY=",
        "TAI_MCP_KEY=",
        "GITHUB_TOKEN=",
        "COPY_OF_SECRET=",
    ] {
        assert!(!out.contains(name), "{name} reached the shell: {out}");
    }
    // the rest of the user's environment is there
    assert!(out.contains("UNLISTED=not-for-servers"), "{out}");
    assert!(out.contains("PROJECT_DIR=/srv/project"), "{out}");
}

/// The scenario of the issue: a hostile server echoes back every secret kind; nothing of
/// them reaches the model, the terminal, a spill record, the conversation or the audit
/// trail; and the sealed vault's files hold none of them, nor the conversation's text.
#[test]
fn a_server_echoing_every_secret_kind_leaks_none_of_them() {
    let dir = TempDir::new("echo-secrets");
    let say = dir.path().join("say.txt");
    let escaped_quoted = Value::String(QUOTED.into()).to_string();
    let mut said = String::new();
    for v in [
        PASSPHRASE,
        API_KEY,
        SERVER_KEY,
        GITHUB,
        VAULT_SECRET,
        VAR_VALUE,
        LITERAL_ENV,
        HEADER_TOKEN,
        QUOTED,
    ] {
        said.push_str(&format!("raw {v}\njson {}\n", Value::String(v.into())));
    }
    said.push_str(&format!("{{\"nested\": {escaped_quoted}}}\n"));
    // Past the inline cap, so the result spills; the secrets again at the end.
    said.push_str(&"padding ".repeat(10_000));
    said.push_str(&format!("\nend {QUOTED} {HEADER_TOKEN} {API_KEY}\n"));
    std::fs::write(&say, &said).unwrap();

    let model = ModelStub::start(
        dir.path(),
        json!([
            {"tool_calls": [{"name": "mcp_echo_env", "arguments": "{}"}]},
            {"text": "PROMPT-REPLY-marker-text"}
        ]),
    );
    let remote = HttpStub::start(&["--era", "legacy"]);
    let mut t = tai_with_secrets("echo-secrets-run");
    t.env("TAI_BASE_URL", &model.url)
        .env("TAI_MODEL", "stub-model");
    t.run_stdin(&["vault", "secret", "set", "vtok"], VAULT_SECRET)
        .ok();
    t.run_stdin(&["vault", "secret", "set", "quoted"], QUOTED)
        .ok();
    t.run(&["vault", "seal"]).ok();
    let entry = json!({"mcpServers": {
        "echo": {
            "command": stub_stdio(),
            "args": ["--env-tool", "--say-file", say.display().to_string()],
            "env": {"FROM_VAR": "${MY_TOKEN}", "LITERAL_TOKEN": LITERAL_ENV},
        },
        "remote": {"url": remote.url, "headers": {"Authorization": format!("Bearer {HEADER_TOKEN}")}},
    }});
    import(&t, &entry);
    t.run(&["mcp", "enable", "echo"]).ok();
    let run = t.run(&[
        "--yolo",
        "-p",
        "PROMPT-USER-marker-text: what does echo say?",
    ]);
    run.ok();

    // the model
    let requests = model.requests();
    assert_eq!(requests.len(), 2);
    for r in &requests {
        assert_no_secret(&r.to_string(), "the model request");
    }
    let result = &ModelStub::tool_messages(&requests[1])[0];
    assert!(result.contains("[REDACTED:"), "{result}");
    assert!(result.contains("stored whole as record"), "{result}");
    // the terminal
    assert_no_secret(&run.stdout, "stdout");
    assert_no_secret(&run.stderr, "stderr");
    // the spill record (opened from the seal)
    let records: Value =
        serde_json::from_str(t.run(&["vault", "record", "list", "--json"]).ok()).unwrap();
    let id = records[0]["id"].as_str().unwrap();
    let record = t.run(&["vault", "record", "get", id]).ok().to_string();
    assert!(record.contains("padding padding") && record.contains("[REDACTED:"));
    assert_no_secret(&record, "the spill record");
    // the conversation (opened from the seal)
    let mut store = tai::testing::vault::Store::open(&t.vault_path()).unwrap();
    store.unlock(PASSPHRASE).unwrap();
    let (_, messages) = store.conversation_last().unwrap().unwrap();
    let messages = messages.to_string();
    assert!(messages.contains("PROMPT-USER-marker-text"));
    assert_no_secret(&messages, "the conversation");
    drop(store);
    // the audit trail
    let audit = t
        .run(&["vault", "audit", "--json", "--limit", "1000"])
        .ok()
        .to_string();
    assert!(
        audit.contains("mcp_echo_env") || audit.contains("echo/env"),
        "{audit}"
    );
    assert_no_secret(&audit, "the audit trail");

    // the sealed files hold no secret, no conversation text and no literal token
    let home = t.home();
    for f in ["vault.db", "vault.db-wal", "vault.db-shm", "vault.db-audit"] {
        let path = home.join(f);
        for (form, what) in every_form() {
            assert!(
                !file_contains(&path, form.as_bytes()),
                "the {what} is in {f}"
            );
        }
        for text in [
            "PROMPT-USER-marker-text",
            "PROMPT-REPLY-marker-text",
            "padding padding",
        ] {
            assert!(!file_contains(&path, text.as_bytes()), "{text:?} is in {f}");
        }
    }
    assert!(home.join("vault.db").exists());
}

#[test]
fn a_one_character_api_key_leaves_words_intact() {
    let dir = TempDir::new("short-key");
    let say = dir.path().join("say.txt");
    std::fs::write(&say, "day_of_week keys kk k").unwrap();
    let model = ModelStub::start(
        dir.path(),
        json!([
            {"tool_calls": [{"name": "mcp_echo_env", "arguments": "{}"}]},
            {"text": "ok"}
        ]),
    );
    let mut t = Tai::new("short-key-run");
    t.env("TAI_BASE_URL", &model.url)
        .env("TAI_MODEL", "stub-model")
        .env("TAI_API_KEY", "k");
    let entry = json!({"mcpServers": {"echo": {
        "command": stub_stdio(),
        "args": ["--env-tool", "--say-file", say.display().to_string()],
    }}});
    t.run(&["--yolo", "mcp", "add", &entry.to_string()]).ok();
    t.run(&["mcp", "enable", "echo"]).ok();
    t.run(&["--yolo", "-p", "go"]).ok();
    let result = &ModelStub::tool_messages(&model.requests()[1])[0];
    assert!(result.contains("day_of_week keys kk k"), "{result}");
    assert!(!result.contains("REDACTED"), "{result}");
    // `tai vault secret set` warns about such a value
    let warned = t.run_stdin(&["vault", "secret", "set", "tiny"], "ollama");
    warned.ok();
    assert!(warned.stderr.contains("not redacted"), "{}", warned.stderr);
}

/// `tai mcp import` of a config with several servers.
fn import(t: &Tai, config: &Value) {
    let file = t.dir.path().join("servers.json");
    std::fs::write(&file, config.to_string()).unwrap();
    t.run(&["--yolo", "mcp", "import", &file.display().to_string()])
        .ok();
}

/// `tai ARGS` with or without the passphrase in the environment.
fn run_as(t: &Tai, passphrase: bool, args: &[&str]) -> Run {
    let mut c = t.cmd(args);
    if !passphrase {
        c.env_remove("TAI_VAULT_PASSPHRASE");
    }
    Run::from(c.output().unwrap())
}

#[test]
fn server_commands_work_on_a_sealed_vault_with_and_without_the_passphrase() {
    let remote = HttpStub::start(&["--era", "legacy"]);
    let mut t = Tai::new("sealed-mcp");
    t.env("TAI_VAULT_PASSPHRASE", PASSPHRASE);
    for passphrase in [false, true] {
        let entry = json!({"mcpServers": {
            "local": {"command": stub_stdio(), "env": {"TOKEN": LITERAL_ENV}},
            "remote": {"url": remote.url, "headers": {"Authorization": format!("Bearer {HEADER_TOKEN}")}},
        }});
        import(&t, &entry);
        if !passphrase {
            t.run(&["vault", "seal"]).ok();
        }
        let status = run_as(&t, passphrase, &["status"]).ok().to_string();
        assert!(
            status.contains("conversations") && status.contains("stay readable"),
            "{status}"
        );
        for f in ["vault.db", "vault.db-wal", "vault.db-audit"] {
            let path = t.home().join(f);
            assert!(!file_contains(&path, LITERAL_ENV.as_bytes()), "{f}");
            assert!(!file_contains(&path, HEADER_TOKEN.as_bytes()), "{f}");
        }
        let list = run_as(&t, passphrase, &["mcp", "list"]).ok().to_string();
        assert!(list.contains("local") && list.contains("remote"), "{list}");
        let tools = run_as(&t, passphrase, &["mcp", "tools", "remote"])
            .ok()
            .to_string();
        assert!(tools.contains("echo"), "{tools}");
        run_as(&t, passphrase, &["mcp", "enable", "remote"]).ok();
        assert!(
            run_as(&t, passphrase, &["mcp", "list", "--json"])
                .ok()
                .contains("default")
        );
        run_as(&t, passphrase, &["mcp", "disable", "remote"]).ok();
        run_as(&t, passphrase, &["--yolo", "mcp", "remove", "remote"]).ok();
        run_as(&t, passphrase, &["--yolo", "mcp", "remove", "local"]).ok();
        assert!(
            !run_as(&t, passphrase, &["mcp", "list"])
                .ok()
                .contains("remote")
        );
    }
    // The trail verifies; the rows the locked commands appended are named as unkeyed.
    let verified = t.run(&["vault", "audit", "--verify"]).ok().to_string();
    assert!(
        verified.contains("keyed with a key derived from the sealed key"),
        "{verified}"
    );
    // and --verify needs the passphrase when sealed
    run_as(&t, false, &["vault", "audit", "--verify"]).fails(1);
}

/// A trail of a few rows, made through the CLI.
fn trail(t: &Tai) {
    for name in ["one", "two", "three", "four"] {
        t.run_stdin(&["vault", "secret", "set", name], "value-long-enough")
            .ok();
    }
}

/// Remove the newest `n` rows of the audit table, as someone holding the file can.
fn cut_newest_table_rows(t: &Tai, n: i64) {
    let conn = raw_without_triggers(t);
    let last: i64 = conn
        .query_row("SELECT max(id) FROM audit", [], |r| r.get(0))
        .unwrap();
    conn.execute("DELETE FROM audit WHERE id > ?1", [last - n])
        .unwrap();
}

/// Bypass the append-only triggers, as someone holding the file can.
fn raw_without_triggers(t: &Tai) -> rusqlite::Connection {
    let conn = t.raw_db();
    conn.execute_batch("DROP TRIGGER audit_no_update; DROP TRIGGER audit_no_delete;")
        .unwrap();
    conn
}

#[test]
fn verify_detects_removed_newest_rows_and_edits() {
    for sealed in [false, true] {
        let mut t = Tai::new("audit-cut");
        t.env("TAI_VAULT_PASSPHRASE", PASSPHRASE);
        if sealed {
            t.run(&["vault", "seal"]).ok();
        }
        trail(&t);
        let ok = t.run(&["vault", "audit", "--verify"]).ok().to_string();
        assert!(ok.contains("intact"), "{ok}");
        if !sealed {
            assert!(
                ok.contains("not a forger"),
                "the unsealed limit is said: {ok}"
            );
        }
        // the newest rows removed
        cut_newest_table_rows(&t, 2);
        let err = t.run(&["vault", "audit", "--verify"]).fails(1).to_string();
        assert!(err.contains("truncated"), "sealed {sealed}: {err}");

        // an edited row
        let t = Tai::new("audit-edit");
        let mut t = t;
        t.env("TAI_VAULT_PASSPHRASE", PASSPHRASE);
        if sealed {
            t.run(&["vault", "seal"]).ok();
        }
        trail(&t);
        let conn = raw_without_triggers(&t);
        conn.execute("UPDATE audit SET outcome = 'nothing' WHERE id = 2", [])
            .unwrap();
        drop(conn);
        let err = t.run(&["vault", "audit", "--verify"]).fails(1).to_string();
        assert!(err.contains("broken at row 2"), "sealed {sealed}: {err}");
    }
}

/// The forger edits a row and recomputes the chain from it on, with everything the file
/// holds: the public key (or plain SHA-256), and a new head.
fn forge(t: &Tai, chain: i64) {
    use tai::testing::vault::audit::{self, Event, Head, PUBLIC_KEY};
    let conn = raw_without_triggers(t);
    conn.execute("UPDATE audit SET outcome = 'nothing' WHERE id = 2", [])
        .unwrap();
    let rows: Vec<(i64, i64, Event)> = {
        let mut st = conn
            .prepare("SELECT id, time, kind, subject, arg_digest, outcome, duration, size, detail FROM audit ORDER BY id")
            .unwrap();
        st.query_map([], |r| {
            Ok((
                r.get(0)?,
                r.get(1)?,
                Event {
                    kind: r.get(2)?,
                    subject: r.get(3)?,
                    arg_digest: r.get(4)?,
                    outcome: r.get(5)?,
                    duration_ms: r.get(6)?,
                    size: r.get(7)?,
                    detail: r.get(8)?,
                },
            ))
        })
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap()
    };
    let mut prev = String::new();
    for (id, time, e) in &rows {
        let hash = if chain == audit::CHAIN_LEGACY {
            audit::chain_hash(&prev, *id, *time, e)
        } else {
            audit::link(PUBLIC_KEY, chain, &prev, *id, *time, e)
        };
        conn.execute(
            "UPDATE audit SET hash = ?1, chain = ?2 WHERE id = ?3",
            rusqlite::params![hash, chain, id],
        )
        .unwrap();
        prev = hash;
    }
    let head = Head::new(PUBLIC_KEY, rows.len() as i64, &prev);
    conn.execute(
        "UPDATE meta SET value = ?1 WHERE key = 'audit_head'",
        [head.encode()],
    )
    .unwrap();
}

#[test]
fn a_recomputed_chain_fails_verify_when_sealed_and_is_said_to_pass_unsealed() {
    use tai::testing::vault::audit::{CHAIN_LEGACY, CHAIN_PUBLIC, CHAIN_SEALED};
    for chain in [CHAIN_PUBLIC, CHAIN_LEGACY, CHAIN_SEALED] {
        let mut t = Tai::new("audit-forge");
        t.env("TAI_VAULT_PASSPHRASE", PASSPHRASE);
        t.run(&["vault", "seal"]).ok();
        trail(&t);
        let honest = t.run(&["vault", "audit", "--verify"]).ok().to_string();
        assert!(
            honest.contains("keyed with a key derived from the sealed key"),
            "{honest}"
        );
        forge(&t, chain);
        let err = t.run(&["vault", "audit", "--verify"]).fails(1).to_string();
        assert!(err.contains("audit trail"), "chain {chain}: {err}");
        if chain == CHAIN_SEALED {
            // rows claiming the sealed key, hashed without it: the first one is named
            assert!(err.contains("broken at row 1"), "{err}");
        }
    }
    // Unsealed, the public key cannot tell a forger from tai: said plainly.
    let mut t = Tai::new("audit-forge-open");
    t.env("TAI_VAULT_PASSPHRASE", PASSPHRASE);
    trail(&t);
    forge(&t, CHAIN_PUBLIC);
    let out = t.run(&["vault", "audit", "--verify"]).ok().to_string();
    assert!(out.contains("not a forger who has the file"), "{out}");
}

/// What was stored before the seal is sealed by it: records, conversations, env; and
/// what is stored in a conversation is redacted first.
#[test]
fn sealing_seals_what_was_stored_before() {
    use tai::testing::vault::{Store, seal::KdfParams};
    let fast = KdfParams {
        m_cost_kib: 64,
        t_cost: 1,
        p_cost: 1,
    };
    let dir = TempDir::new("seal-before");
    let path = dir.path().join("vault.db");
    let mut store = Store::open(&path).unwrap();
    store.secret_set("vtok", VAULT_SECRET).unwrap();
    let id = store
        .record_put("tool:x", "record-plaintext-marker")
        .unwrap();
    let said = json!([{"role": "user", "content": format!("conversation-plaintext-marker {VAULT_SECRET} {QUOTED}")}]);
    store.secret_set("quoted", QUOTED).unwrap();
    let conv = store.conversation_save(None, "default", &said).unwrap();
    let (_, back) = store.conversation_last().unwrap().unwrap();
    let back = back.to_string();
    assert!(
        back.contains("conversation-plaintext-marker [REDACTED:vtok] [REDACTED:quoted]"),
        "{back}"
    );
    store.seal(PASSPHRASE, fast).unwrap();
    drop(store);
    for f in ["vault.db", "vault.db-wal", "vault.db-shm", "vault.db-audit"] {
        let p = dir.path().join(f);
        for marker in [
            "record-plaintext-marker",
            "conversation-plaintext-marker",
            VAULT_SECRET,
        ] {
            assert!(!file_contains(&p, marker.as_bytes()), "{marker} in {f}");
        }
    }
    let mut store = Store::open(&path).unwrap();
    assert!(
        store.record_get(&id).is_err(),
        "locked: the record stays sealed"
    );
    store.unlock(PASSPHRASE).unwrap();
    assert_eq!(
        store.record_get(&id).unwrap().content,
        "record-plaintext-marker"
    );
    assert_eq!(store.conversation_last().unwrap().unwrap().0, conv);
    // and back: unsealing leaves them readable in plain text
    store.unseal().unwrap();
    assert_eq!(
        store.record_get(&id).unwrap().content,
        "record-plaintext-marker"
    );
}

/// Served: the API key (and tai's other secrets) are redacted from what the served
/// `chat` and a served tool return, and from what the model is sent.
#[test]
fn served_chat_and_tools_never_return_the_api_key() {
    let dir = TempDir::new("serve-keys");
    let file = dir.path().join("notes.txt");
    std::fs::write(
        &file,
        format!("api {API_KEY} server {SERVER_KEY} pass {PASSPHRASE}"),
    )
    .unwrap();
    let read = json!({"path": file}).to_string();
    let model = ModelStub::start(
        dir.path(),
        json!([
            {"tool_calls": [{"name": "read_file", "arguments": read}]},
            {"text": "read it"}
        ]),
    );
    let mut t = tai_with_secrets("serve-keys-run");
    t.env("TAI_BASE_URL", &model.url)
        .env("TAI_MODEL", "stub-model");
    let call = |id: i64, name: &str, args: Value| {
        json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": name, "arguments": args}}).to_string()
    };
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "x", "version": "1"}}}).to_string();
    let lines = [
        init,
        // a served tool first: the key is in the set from the start, not once chat ran
        call(1, "read_file", json!({"path": file})),
        call(2, "chat", json!({"message": "read the notes"})),
    ];
    let run = t.run_stdin(&["--serve-mcp-stdio"], &(lines.join("\n") + "\n"));
    let out = run.ok();
    assert_eq!(out.lines().count(), 3, "{out}");
    assert!(out.contains("[REDACTED:api-key]"), "{out}");
    assert_no_secret(out, "the served answers");
    assert_no_secret(&run.stderr, "the server's stderr");
    for r in model.requests() {
        assert_no_secret(&r.to_string(), "the model request");
    }
    assert!(ModelStub::tool_messages(&model.requests()[1])[0].contains("[REDACTED:server-key]"));
}

/// A child runs as the same user as tai, so tai's own `/proc/PID/environ` (which holds the
/// secrets it was started with) must not be readable by it: tai makes itself
/// non-dumpable. As root, tai and the reader run as `nobody` (through `setpriv`).
#[test]
fn tais_own_environment_is_not_readable_by_its_user() {
    use std::io::Read;
    let dir = TempDir::new("environ");
    use std::os::unix::fs::MetadataExt;
    let root = std::fs::metadata("/proc/self").unwrap().uid() == 0;
    // A copy anyone can run, in a directory anyone can enter.
    let bin = dir.path().join("tai");
    std::fs::copy(env!("CARGO_BIN_EXE_tai"), &bin).unwrap();
    use std::os::unix::fs::PermissionsExt;
    for (p, mode) in [(dir.path(), 0o777), (bin.as_path(), 0o755)] {
        std::fs::set_permissions(p, std::fs::Permissions::from_mode(mode)).unwrap();
    }
    let as_user = |program: &std::path::Path| {
        let mut c = if root {
            let mut c = std::process::Command::new("setpriv");
            c.args(["--reuid=65534", "--regid=65534", "--clear-groups"])
                .arg(program);
            c
        } else {
            std::process::Command::new(program)
        };
        c.env_clear();
        c
    };
    let mut tai = as_user(&bin);
    tai.arg("--serve-mcp-stdio")
        .env("HOME", dir.path())
        .env("TAI_HOME", dir.path().join("home"))
        .env("TAI_CONFIG", dir.path().join("config.toml"))
        .env("TAI_API_KEY", API_KEY)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let mut child = tai.spawn().unwrap();
    // It answers a ping once it is up (its vault opened, its prctl done).
    {
        use std::io::Write;
        let stdin = child.stdin.as_mut().unwrap();
        writeln!(stdin, r#"{{"jsonrpc":"2.0","id":1,"method":"ping"}}"#).unwrap();
        let mut byte = [0u8; 1];
        child
            .stdout
            .as_mut()
            .unwrap()
            .read_exact(&mut byte)
            .unwrap();
    }
    // tai's pid: the child itself, or setpriv's exec of it (same pid).
    let pid = child.id();
    let read = as_user(std::path::Path::new("/bin/cat"))
        .arg(format!("/proc/{pid}/environ"))
        .output()
        .unwrap();
    drop(child.stdin.take());
    let _ = child.wait();
    let text = String::from_utf8_lossy(&read.stdout);
    assert!(
        !text.contains(API_KEY),
        "tai's environ was readable: {text}"
    );
    assert!(
        String::from_utf8_lossy(&read.stderr).contains("Permission denied"),
        "{read:?}"
    );
}

/// Consent names what a server will be handed: its `env` names and the passthrough list;
/// a change to the passthrough list asks again.
#[test]
fn consent_shows_the_passthrough_list_and_covers_it() {
    use tai::testing::mcp_servers::intake;
    use tai::testing::mcp_servers::normalize::normalize;
    let dir = TempDir::new("consent-pass");
    let store = tai::testing::vault::Store::open(&dir.path().join("vault.db")).unwrap();
    let toml = "[mcp_servers.docs]\ncommand = \"docs-server\"\nenv = { DOCS_TOKEN = \"${T}\" }\nenv_vars = [\"PROJECT_DIR\", \"LANG_EXTRA\"]\n";
    let entry = normalize(toml, false).unwrap().entries.remove(0);
    assert_eq!(entry.env_vars, ["PROJECT_DIR", "LANG_EXTRA"]);
    let env = |k: &str| (k == "T").then(|| "token-value-123".to_string());
    let resolved = intake::resolve(&entry, &store, &env).unwrap();
    let shown = resolved.shown();
    assert!(shown.contains("DOCS_TOKEN=${T}"), "{shown}");
    assert!(
        shown.contains("passed through from your environment: PROJECT_DIR, LANG_EXTRA"),
        "{shown}"
    );
    assert!(!shown.contains("token-value-123"), "{shown}");
    let mut fewer = entry.clone();
    fewer.env_vars.pop();
    let other = intake::resolve(&fewer, &store, &env).unwrap();
    assert_ne!(resolved.consent_hash(), other.consent_hash());
}

/// A vault sealed before v3 held server env, conversations and records in plain text;
/// the first unlock seals them, and the trail (no head yet) verifies.
#[test]
fn the_first_unlock_after_the_upgrade_seals_what_v2_left_plain() {
    use tai::testing::vault::{Store, audit::Verdict, seal::KdfParams};
    let fast = KdfParams {
        m_cost_kib: 64,
        t_cost: 1,
        p_cost: 1,
    };
    let dir = TempDir::new("upgrade-seal");
    let path = dir.path().join("vault.db");
    let mut store = Store::open(&path).unwrap();
    store.seal(PASSPHRASE, fast).unwrap();
    drop(store);
    // what a v2 tai left: plain text in the columns v3 seals, no audit head
    let conn = rusqlite::Connection::open(&path).unwrap();
    conn.execute_batch(&format!(
        "INSERT INTO mcp_servers(name, transport, command, args_json, env_json, source, created, updated)
           VALUES ('old', 'stdio', 'x', '[]', '{{\"TOKEN\":\"{LITERAL_ENV}\"}}', 'explicit', 1, 1);
         INSERT INTO conversations(profile, created, updated, messages_json)
           VALUES ('default', 1, 1, '[{{\"role\":\"user\",\"content\":\"old-conversation-text\"}}]');
         INSERT INTO records(id, source, size, created, content) VALUES ('rec_old', 'tool:x', 8, 1, 'old-record-text');"
    ))
    .unwrap();
    drop(conn);
    let mut store = Store::open(&path).unwrap();
    // locked: listing works, the env stays closed
    assert_eq!(
        tai::testing::mcp_servers::store::list_public(&store).unwrap()[0]
            .entry
            .name,
        "old"
    );
    store.unlock(PASSPHRASE).unwrap();
    drop(store);
    for f in ["vault.db", "vault.db-wal", "vault.db-audit"] {
        let p = dir.path().join(f);
        for text in [LITERAL_ENV, "old-conversation-text", "old-record-text"] {
            assert!(!file_contains(&p, text.as_bytes()), "{text} in {f}");
        }
    }
    let mut store = Store::open(&path).unwrap();
    store.unlock(PASSPHRASE).unwrap();
    let row = tai::testing::mcp_servers::store::load(&store, "old")
        .unwrap()
        .unwrap();
    assert!(format!("{:?}", row.entry.leg).contains(LITERAL_ENV));
    assert_eq!(
        store.record_get("rec_old").unwrap().content,
        "old-record-text"
    );
    let (_, messages) = store.conversation_last().unwrap().unwrap();
    assert!(messages.to_string().contains("old-conversation-text"));
    // locked appends before any head: reported, not failed
    drop(store);
    let mut locked = Store::open(&path).unwrap();
    locked
        .audit(tai::testing::vault::audit::Event::new(
            "mcp-enable",
            "old",
            tai::testing::vault::audit::Outcome::Enabled,
        ))
        .unwrap();
    drop(locked);
    let mut store = Store::open(&path).unwrap();
    store.unlock(PASSPHRASE).unwrap();
    assert!(matches!(
        store.audit_verify().unwrap(),
        Verdict::Intact {
            unkeyed_tail: 1,
            headless: true,
            ..
        }
    ));
}

/// tai's own secrets reach a server only through its `env`: never its argv, URL or cwd
/// (a hostile pasted config approved with --auto would otherwise send them anywhere).
#[test]
fn own_secrets_only_through_env() {
    use tai::testing::mcp_servers::intake;
    use tai::testing::mcp_servers::normalize::normalize;
    let dir = TempDir::new("own-secrets");
    let store = tai::testing::vault::Store::open(&dir.path().join("vault.db")).unwrap();
    let env = |k: &str| {
        k.starts_with("TAI_")
            .then(|| "a-long-secret-value".to_string())
    };
    let refused = [
        r#"{"command": "srv", "args": ["${TAI_VAULT_PASSPHRASE}"]}"#,
        r#"{"command": "srv", "args": ["--key=${env:TAI_API_KEY}"]}"#,
        r#"{"url": "http://127.0.0.1:9/${TAI_MCP_KEY}"}"#,
        r#"{"url": "http://127.0.0.1:9/?t=${GITHUB_TOKEN}"}"#,
        r#"{"url": "http://127.0.0.1:9/", "headers": {"X": "${TAI_API_KEY:-x}"}}"#,
    ];
    for json in refused {
        let entry = normalize(json, false).unwrap().entries.remove(0);
        let err = intake::resolve(&entry, &store, &env).unwrap_err();
        assert!(err.contains("one of tai's own secrets"), "{json}: {err}");
    }
    let allowed = [
        r#"{"command": "srv", "env": {"KEY": "${TAI_API_KEY}"}}"#,
        r#"{"url": "http://127.0.0.1:9/", "headers": {"Authorization": "Bearer ${GITHUB_TOKEN}"}}"#,
    ];
    // OAuth tokens are never `${…}` values, whoever adds the entry.

    store
        .secret_set("oauth.x.access", "tok-oauth-0123456789")
        .unwrap();
    let entry = normalize(
        r#"{"command": "srv", "args": ["${input:oauth.x.access}"]}"#,
        false,
    )
    .unwrap()
    .entries
    .remove(0);
    let err = intake::resolve(&entry, &store, &|_: &str| None).unwrap_err();
    assert!(err.contains("unresolved ${input:oauth.x.access}"), "{err}");
    let env = |k: &str| Some(format!("value-of-{k}"));
    for json in allowed {
        let entry = normalize(json, false).unwrap().entries.remove(0);
        assert!(intake::resolve(&entry, &store, &env).is_ok(), "{json}");
    }
}

/// An envFile's variables reach the server like `env`, so consent shows them the same
/// way: each name, its value unless it looks secret (a hostile repository's `.env` with
/// `LD_PRELOAD` is seen before it runs).
#[test]
fn consent_shows_what_an_env_file_sets() {
    use tai::testing::mcp_servers::intake;
    use tai::testing::mcp_servers::normalize::normalize;
    let dir = TempDir::new("consent-envfile");
    let env_file = dir.path().join(".env");
    std::fs::write(
        &env_file,
        "LD_PRELOAD=/tmp/evil.so\nAPI_TOKEN=tok-0123456789abcdef\n",
    )
    .unwrap();
    let store = tai::testing::vault::Store::open(&dir.path().join("vault.db")).unwrap();
    let json = serde_json::json!({"command": "srv", "envFile": env_file}).to_string();
    let entry = normalize(&json, false).unwrap().entries.remove(0);
    let resolved = intake::resolve(&entry, &store, &|_: &str| None).unwrap();
    let shown = resolved.shown();
    assert!(shown.contains("envFile: "), "{shown}");
    assert!(shown.contains("LD_PRELOAD=/tmp/evil.so"), "{shown}");
    assert!(shown.contains("API_TOKEN="), "{shown}");
    assert!(!shown.contains("tok-0123456789abcdef"), "{shown}");
}

/// Every tai process on a vault appends to one audit chain: a server answering calls (its
/// rows wait in the journal beside the vault) and CLI processes appending and folding as
/// they close, all at once. Nothing is lost, nothing is chained twice, the chain verifies,
/// and a reader sees the server's rows while it still runs.
#[test]
fn processes_appending_at_once_keep_one_intact_chain() {
    use crate::serve_http::{modern_call, serve};
    let t = Tai::new("audit-many");
    let server = serve(&t);
    let port = server.port;
    let listed = TempDir::new("audit-many-listed");
    let dir = listed.path().to_path_buf();
    let calls: u64 = 60;
    let client = std::thread::spawn(move || {
        for i in 0..calls {
            let (status, out) = modern_call(port, i, "list_dir", json!({"path": dir}));
            assert_eq!(status, 200, "{out}");
            assert!(out.contains("\"isError\":false"), "{out}");
        }
    });
    let writers: Vec<_> = (0..3)
        .map(|w| {
            let cmd = |n: usize| {
                let mut c = t.cmd(&["vault", "secret", "set", &format!("w{w}s{n}")]);
                c.stdin(std::process::Stdio::piped())
                    .stdout(std::process::Stdio::null())
                    .stderr(std::process::Stdio::piped());
                c
            };
            let cmds: Vec<_> = (0..8).map(cmd).collect();
            std::thread::spawn(move || {
                for mut c in cmds {
                    let mut child = c.spawn().unwrap();
                    use std::io::Write;
                    child
                        .stdin
                        .take()
                        .unwrap()
                        .write_all(b"value-long-enough")
                        .unwrap();
                    let out = child.wait_with_output().unwrap();
                    assert!(
                        out.status.success(),
                        "{}",
                        String::from_utf8_lossy(&out.stderr)
                    );
                }
            })
        })
        .collect();
    client.join().unwrap();
    writers.into_iter().for_each(|w| w.join().unwrap());
    // The server still runs, its newest rows in the journal: the reader folds them in.
    let listed = t
        .run(&["vault", "audit", "--limit", "1000", "--json"])
        .ok()
        .to_string();
    let rows: Vec<Value> = serde_json::from_str(&listed).unwrap();
    let count = |kind: &str| rows.iter().filter(|r| r["kind"] == kind).count();
    assert_eq!(count("tool-call"), calls as usize, "{listed}");
    assert_eq!(count("secret"), 3 * 8, "{listed}");
    let ids: Vec<i64> = rows.iter().map(|r| r["id"].as_i64().unwrap()).collect();
    assert_eq!(
        ids,
        (1..=ids.len() as i64).collect::<Vec<_>>(),
        "one gapless chain"
    );
    let verdict = t.run(&["vault", "audit", "--verify"]).ok().to_string();
    assert!(verdict.contains("intact"), "{verdict}");
    drop(server);
}

/// tai processes killed (SIGKILL) at any moment of their append or fold: the trail
/// goes on and verifies. A kill between a row's write and its head's must not leave a
/// journal the next append refuses, nor a torn line a row.
#[test]
fn processes_killed_at_any_moment_leave_a_trail_that_goes_on_and_verifies() {
    let t = Tai::new("audit-kill");
    t.run_stdin(&["vault", "secret", "set", "first"], "value-long-enough")
        .ok();
    let spawn = |n: usize| {
        let mut child = t
            .cmd(&["vault", "secret", "set", &format!("k{n}")])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        use std::io::Write;
        let _ = child.stdin.take().unwrap().write_all(b"value-long-enough");
        child
    };
    for n in 0..40 {
        let mut pair = [spawn(2 * n), spawn(2 * n + 1)];
        // Spread the kills over a process's life (start-up, append, fold at close).
        std::thread::sleep(std::time::Duration::from_millis((n as u64 * 7) % 45));
        for child in &mut pair {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
    t.run_stdin(&["vault", "secret", "set", "last"], "value-long-enough")
        .ok();
    let verdict = t.run(&["vault", "audit", "--verify"]).ok().to_string();
    assert!(verdict.contains("intact"), "{verdict}");
}

/// Another process holding the journal's lock: tai fails within the busy timeout (it
/// does not hang), and Ctrl-C ends the wait sooner.
#[test]
fn a_journal_lock_held_elsewhere_fails_in_time_and_ctrl_c_ends_the_wait() {
    use nix::fcntl::{Flock, FlockArg};
    let t = Tai::new("audit-lock");
    t.run_stdin(&["vault", "secret", "set", "first"], "value-long-enough")
        .ok();
    let mut journal = t.vault_path().into_os_string();
    journal.push("-audit");
    let file = std::fs::File::open(&journal).unwrap();
    let _held = Flock::lock(file, FlockArg::LockExclusiveNonblock).unwrap();
    let started = std::time::Instant::now();
    let err = t.run(&["vault", "audit"]).fails(1).to_string();
    let took = started.elapsed();
    assert!(err.contains("held it for"), "{err}");
    assert!(
        took >= std::time::Duration::from_secs(4) && took < std::time::Duration::from_secs(20),
        "{took:?}"
    );
    let mut child = t
        .cmd(&["vault", "audit"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(500));
    let started = std::time::Instant::now();
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(child.id() as i32),
        nix::sys::signal::Signal::SIGINT,
    )
    .unwrap();
    let status = child.wait().unwrap();
    assert!(!status.success());
    assert!(
        started.elapsed() < std::time::Duration::from_secs(3),
        "{:?}",
        started.elapsed()
    );
}

/// The served entrance: after the newest rows were cut from the trail (the table's
/// rows, once folded), a served call is not audited under a new head that would hide
/// the cut: a row records the cut first, and `--verify` names it.
#[test]
fn served_calls_after_a_cut_trail_record_the_cut_first() {
    use crate::serve_http::{modern_call, serve};
    let t = Tai::new("audit-served-cut");
    let server = serve(&t);
    let listed = TempDir::new("audit-served-cut-dir");
    std::fs::write(listed.path().join("marker-file.txt"), "x").unwrap();
    let call = |name: &str| {
        let (status, out) = modern_call(server.port, 1, name, json!({"path": listed.path()}));
        (status, out)
    };
    for _ in 0..3 {
        let (status, out) = call("list_dir");
        assert_eq!(status, 200, "{out}");
        assert!(out.contains("marker-file.txt"), "{out}");
    }
    // Fold, then cut the newest two rows from the table, as someone with the file can.
    t.run(&["vault", "audit"]).ok();
    cut_newest_table_rows(&t, 2);
    let (_, out) = call("list_dir");
    assert!(out.contains("marker-file.txt"), "{out}");
    let listed = t
        .run(&["vault", "audit", "--limit", "1000", "--json"])
        .ok()
        .to_string();
    let rows: Vec<Value> = serde_json::from_str(&listed).unwrap();
    let gap = rows
        .iter()
        .find(|r| r["kind"] == "audit-gap")
        .unwrap_or_else(|| panic!("no row records the cut: {listed}"));
    assert!(gap["detail"].as_str().unwrap().contains("removed"), "{gap}");
    assert_eq!(
        rows.last().unwrap()["subject"],
        "list_dir",
        "the call's own row follows"
    );
    let err = t.run(&["vault", "audit", "--verify"]).fails(1).to_string();
    assert!(
        err.contains(&format!("broken at row {}", gap["id"])),
        "{err}"
    );
    drop(server);
}

/// The seal comes off (and goes on again with another passphrase): the rows keyed while
/// it was on still verify, with the key `unseal` kept in the clear, and `--verify` says
/// what they are checked against. Before, the first of them was reported as broken.
#[test]
fn the_trail_verifies_after_the_seal_comes_off_and_goes_on_again() {
    let mut t = Tai::new("audit-unseal");
    t.env("TAI_VAULT_PASSPHRASE", PASSPHRASE);
    t.run(&["vault", "seal"]).ok();
    trail(&t);
    t.run(&["vault", "unseal"]).ok();
    let ok = t.run(&["vault", "audit", "--verify"]).ok().to_string();
    assert!(
        ok.contains("intact") && ok.contains("seal since removed"),
        "{ok}"
    );
    t.env("TAI_VAULT_PASSPHRASE", "another passphrase entirely");
    t.run(&["vault", "seal"]).ok();
    trail(&t);
    let ok = t.run(&["vault", "audit", "--verify"]).ok().to_string();
    assert!(
        ok.contains("intact") && ok.contains("keyed with a key derived from the sealed key"),
        "{ok}"
    );
    // The kept key is what verifies those rows: without it they are broken.
    t.raw_db()
        .execute("DELETE FROM meta WHERE key = 'audit_former_keys'", [])
        .unwrap();
    let err = t.run(&["vault", "audit", "--verify"]).fails(1).to_string();
    assert!(err.contains("broken at row"), "{err}");
}
