//! Each native tool: its happy path and its errors, run through `tools::dispatch`.

use serde_json::{Map, Value, json};

use tai::testing::approval::Approver;
use tai::testing::config::{self, FlagSettings, Paths};
use tai::testing::tools::{self, ToolContext, ToolOutput};
use tai::testing::vault::Store;

use crate::support::TempDir;

struct No;
impl Approver for No {
    fn approve(&mut self, _: &str, _: &str) -> Result<bool, String> {
        Ok(false)
    }
}

fn run(store: &mut Store, name: &str, args: Value) -> ToolOutput {
    let paths = Paths {
        home: "/nonexistent".into(),
        config: "/nonexistent/c.toml".into(),
    };
    let cfg = config::resolve(
        &paths,
        None,
        &|_: &str| None,
        &FlagSettings::default(),
        None,
        |_| None,
    );
    let mut ctx = ToolContext {
        store,
        config: &cfg,
        approver: &mut No,
        env: &|_: &str| None,
    };
    let args: Map<String, Value> = args.as_object().cloned().unwrap();
    tools::dispatch(name, &mut ctx, &args).unwrap_or_else(|| panic!("no tool {name}"))
}

#[test]
fn file_tools() {
    let dir = TempDir::new("native-files");
    let d = dir.path();
    let mut store = Store::open(&d.join("vault.db")).unwrap();
    let p = |name: &str| d.join(name).display().to_string();

    let w = run(
        &mut store,
        "write_file",
        json!({"path": p("sub/a.txt"), "content": "one\ntwo\ntwo\nthree\n"}),
    );
    assert!(
        !w.is_error && w.text.contains("wrote 18 bytes"),
        "{}",
        w.text
    );
    let r = run(
        &mut store,
        "read_file",
        json!({"path": p("sub/a.txt"), "offset": 2, "limit": 2}),
    );
    assert_eq!(
        r.text,
        "     2\ttwo\n     3\ttwo\n… 1 more lines (read on with offset=4)\n"
    );
    assert!(run(&mut store, "read_file", json!({"path": p("missing.txt")})).is_error);
    assert!(
        run(&mut store, "read_file", json!({"path": p("sub")}))
            .text
            .contains("is a directory")
    );

    let e = run(
        &mut store,
        "edit_file",
        json!({"path": p("sub/a.txt"), "old_string": "two", "new_string": "2"}),
    );
    assert!(
        e.is_error && e.text.contains("occurs 2 times"),
        "{}",
        e.text
    );
    let e = run(
        &mut store,
        "edit_file",
        json!({"path": p("sub/a.txt"), "old_string": "nine", "new_string": "9"}),
    );
    assert!(e.is_error && e.text.contains("does not occur"));
    let e = run(
        &mut store,
        "edit_file",
        json!({"path": p("sub/a.txt"), "old_string": "two", "new_string": "2", "replace_all": true}),
    );
    assert!(!e.is_error && e.text.contains("replaced 2 occurrences"));
    let e = run(
        &mut store,
        "edit_file",
        json!({"path": p("sub/a.txt"), "old_string": "three", "new_string": "3"}),
    );
    assert!(!e.is_error);
    assert_eq!(
        std::fs::read_to_string(d.join("sub/a.txt")).unwrap(),
        "one\n2\n2\n3\n"
    );

    std::fs::write(d.join("sub/b.rs"), "fn main() {}\n// TODO later\n").unwrap();
    let l = run(&mut store, "list_dir", json!({"path": p("sub")}));
    assert_eq!(l.text, "a.txt\nb.rs");
    assert!(run(&mut store, "list_dir", json!({"path": p("nope")})).is_error);
    let g = run(&mut store, "glob", json!({"pattern": "**/*.rs", "path": d}));
    assert_eq!(g.text, "sub/b.rs");
    let g = run(
        &mut store,
        "grep",
        json!({"pattern": "todo", "path": d, "ignore_case": true}),
    );
    assert_eq!(g.text, "sub/b.rs:2:// TODO later");
    let g = run(
        &mut store,
        "grep",
        json!({"pattern": "fn|one", "path": d, "glob": "**/*.txt"}),
    );
    assert_eq!(g.text, "sub/a.txt:1:one");
    assert!(
        run(&mut store, "grep", json!({"pattern": "(unclosed"}))
            .text
            .contains("invalid regular expression")
    );
    // schema checks
    assert!(
        run(&mut store, "write_file", json!({"path": p("x")}))
            .text
            .contains("missing the required argument \"content\"")
    );
    assert!(
        run(
            &mut store,
            "read_file",
            json!({"path": p("x"), "limit": "ten"})
        )
        .text
        .contains("must be of type")
    );
}

#[test]
fn shell_tool() {
    let dir = TempDir::new("native-shell");
    let mut store = Store::open(&dir.path().join("vault.db")).unwrap();
    let ok = run(
        &mut store,
        "shell",
        json!({"command": "echo hi; echo warn >&2", "cwd": dir.path()}),
    );
    assert_eq!(
        (ok.is_error, ok.text.as_str()),
        (
            false,
            "exit code 0\n--- stdout ---\nhi\n--- stderr ---\nwarn\n"
        )
    );
    let fail = run(&mut store, "shell", json!({"command": "exit 4"}));
    assert!(fail.is_error && fail.text.starts_with("exit code 4"));
    let slow = run(
        &mut store,
        "shell",
        json!({"command": "sleep 10", "timeout": 1}),
    );
    assert!(
        slow.is_error && slow.text.contains("timed out after 1s"),
        "{}",
        slow.text
    );
    let flood = run(
        &mut store,
        "shell",
        json!({"command": "head -c 200000 /dev/zero | tr '\\\\0' a"}),
    );
    assert!(
        flood.text.contains("more bytes of output were not kept"),
        "{:.200}",
        flood.text
    );
}

#[test]
fn vault_tools() {
    let dir = TempDir::new("native-vault");
    let mut store = Store::open(&dir.path().join("vault.db")).unwrap();
    store.secret_set("gh", "ghp_value").unwrap();
    let id = store.record_put("tool:x", &"é".repeat(40_000)).unwrap();
    let page = run(
        &mut store,
        "record_get",
        json!({"id": id, "offset": 1, "limit": 10}),
    );
    assert!(
        page.text.starts_with("éééé") && page.text.contains("more bytes"),
        "{}",
        page.text
    );
    assert!(run(&mut store, "record_get", json!({"id": "rec_nope"})).is_error);
    assert!(run(&mut store, "record_list", json!({})).text.contains(&id));
    let names = run(&mut store, "secret_list", json!({}));
    assert_eq!(names.text, "[\"gh\"]");
    let tail = run(&mut store, "audit_tail", json!({"limit": 5}));
    assert!(!tail.is_error);
    let ask = run(&mut store, "ask_user", json!({"question": "ok?"}));
    assert!(ask.is_error && ask.text.contains("no user to ask"));
}

#[test]
fn web_fetch_tool() {
    let dir = TempDir::new("native-web");
    std::fs::write(
        dir.path().join("page.html"),
        "<html><title>T</title><body><p>Hello &amp; welcome</p><script>x()</script></body></html>",
    )
    .unwrap();
    std::fs::write(dir.path().join("big.txt"), "z".repeat(300_000)).unwrap();
    let port = crate::support::free_port();
    let mut cmd = std::process::Command::new("python3");
    cmd.args([
        "-m",
        "http.server",
        &port.to_string(),
        "--bind",
        "127.0.0.1",
        "--directory",
    ])
    .arg(dir.path());
    let _server = crate::support::Server::start(cmd, port);
    let mut store = Store::open(&dir.path().join("vault.db")).unwrap();
    let base = format!("http://127.0.0.1:{port}");
    let page = run(
        &mut store,
        "web_fetch",
        json!({"url": format!("{base}/page.html")}),
    );
    assert!(!page.is_error, "{}", page.text);
    assert!(page.text.ends_with("T\nHello & welcome"), "{}", page.text);
    let capped = run(
        &mut store,
        "web_fetch",
        json!({"url": format!("{base}/big.txt"), "max_bytes": 1000}),
    );
    assert!(
        capped
            .text
            .contains("larger than 1000 bytes; only the first 1000 were read"),
        "{:.200}",
        capped.text
    );
    assert_eq!(capped.text.matches('z').count(), 1000);
    let missing = run(
        &mut store,
        "web_fetch",
        json!({"url": format!("{base}/nope")}),
    );
    assert!(missing.is_error && missing.text.contains("HTTP 404"));
    assert!(
        run(
            &mut store,
            "web_fetch",
            json!({"url": "file:///etc/passwd"})
        )
        .is_error
    );
}
