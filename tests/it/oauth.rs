//! Remote MCP servers behind OAuth, end to end against tai-stub-mcp-oauth (an
//! authorization server and a protected MCP server on loopback): `tai mcp add URL` logs
//! in through the TAI_OAUTH_BROWSER hook, the tokens are stored (sealed with the seal),
//! a bridged call uses them, an expired token is refreshed silently, a revoked refresh
//! ends in a message naming `tai mcp login NAME`; the tokens never reach the vault file
//! in plaintext while sealed, the audit trail, or the model; one thread throughout.

use std::path::PathBuf;
use std::process::{Command, Stdio};

use serde_json::{Value, json};

use crate::support::{ModelStub, Tai, TempDir, file_contains, stub_log, thread_count};

struct OAuthStub {
    child: std::process::Child,
    url: String,
    log: PathBuf,
    control: PathBuf,
}

impl OAuthStub {
    fn start(dir: &TempDir, expires_in: u64, extra: &[&str]) -> OAuthStub {
        use std::io::BufRead;
        let log = dir.path().join("oauth.log");
        let control = dir.path().join("control");
        std::fs::create_dir_all(&control).unwrap();
        let mut child = Command::new(env!("CARGO_BIN_EXE_tai-stub-mcp-oauth"))
            .args([
                "--log",
                &log.display().to_string(),
                "--expires-in",
                &expires_in.to_string(),
            ])
            .args(["--control", &control.display().to_string()])
            .args(extra)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut line = String::new();
        std::io::BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let url = line
            .trim()
            .strip_prefix("listening on ")
            .unwrap()
            .to_string();
        OAuthStub {
            child,
            url,
            log,
            control,
        }
    }

    /// Every token the stub handed out or saw (access and refresh).
    fn tokens(&self) -> Vec<String> {
        let text = std::fs::read_to_string(&self.log).unwrap_or_default();
        let mut out: Vec<String> = text
            .split(|c: char| !(c.is_ascii_alphanumeric() || c == '-'))
            .filter(|w| w.starts_with("tai-stub-AT-") || w.starts_with("tai-stub-RT-"))
            .map(str::to_string)
            .collect();
        out.sort();
        out.dedup();
        out
    }

    fn grants(&self, kind: &str) -> usize {
        stub_log(&self.log)
            .iter()
            .filter(|l| l["oauth"]["grant_type"] == kind)
            .count()
    }
}

impl Drop for OAuthStub {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn call(name: &str, args: Value) -> Value {
    json!({"tool_calls": [{"name": name, "arguments": args.to_string()}]})
}

fn vault_files(t: &Tai) -> [PathBuf; 4] {
    let p = t.vault_path();
    [
        p.clone(),
        p.with_extension("db-wal"),
        p.with_extension("db-shm"),
        p.with_extension("db-audit"),
    ]
}

#[test]
fn add_login_call_refresh_revoke_with_tokens_kept_secret() {
    let dir = TempDir::new("oauth-e2e");
    let stub = OAuthStub::start(&dir, 2, &[]);
    let model = ModelStub::start(
        dir.path(),
        json!([
            call("mcp_remote_echo", json!({"text": "first"})), {"text": "done 1"},
            call("mcp_remote_echo", json!({"text": "after expiry"})), {"text": "done 2"},
            call("mcp_remote_echo", json!({"text": "after revocation"})), {"text": "done 3"},
        ]),
    );
    let mut t = Tai::new("oauth-e2e-run");
    let hook = format!(
        "{} browse --delay 1500",
        env!("CARGO_BIN_EXE_tai-stub-mcp-oauth")
    );
    t.env("TAI_OAUTH_BROWSER", &hook)
        .env("TAI_BASE_URL", &model.url)
        .env("TAI_MODEL", "stub-model")
        .env("TAI_VAULT_PASSPHRASE", "oauth pass phrase");

    // add: the server answers 401, tai discovers, registers, and logs in through the
    // hook (which takes 1.5 s, like a person); sampled meanwhile: one thread.
    let child = t
        .cmd(&["--yolo", "mcp", "add", &stub.url, "--name", "remote"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut samples = Vec::new();
    for _ in 0..8 {
        std::thread::sleep(std::time::Duration::from_millis(150));
        samples.push(thread_count(child.id()));
    }
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        samples.iter().filter(|n| **n > 0).count() >= 4,
        "{samples:?}"
    );
    assert!(
        samples.iter().all(|n| *n <= 1),
        "tai had more than one thread during a login: {samples:?}"
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("/as/authorize?"),
        "the URL is always printed: {stderr}"
    );
    assert!(stub.grants("authorization_code") == 1);
    let status = t
        .run(&["mcp", "login", "remote", "--status"])
        .ok()
        .to_string();
    assert!(
        status.contains("logged in")
            && status.contains("scopes tools")
            && status.contains("refreshable"),
        "{status}"
    );
    let first = stub.tokens();
    assert_eq!(
        first.len(),
        2,
        "one access and one refresh token: {first:?}"
    );
    assert!(!status.contains("tai-stub-"), "{status}");
    // Stored unsealed so far (the check can see plaintext); then sealed in place.
    assert!(
        vault_files(&t)
            .iter()
            .any(|f| file_contains(f, first[0].as_bytes()))
    );
    t.run(&["mcp", "enable", "remote"]).ok();
    t.run(&["vault", "seal"]).ok();

    // A bridged call with the stored token.
    t.run(&["--yolo", "-p", "echo first"]).ok();
    let mcp_calls = |tok: &str| {
        stub_log(&stub.log)
            .iter()
            .filter(|l| {
                l["oauth"]["path"] == "/mcp"
                    && l["oauth"]["authorization"] == format!("Bearer {tok}")
            })
            .count()
    };
    let access1 = first.iter().find(|x| x.contains("-AT-")).unwrap().clone();
    assert!(mcp_calls(&access1) >= 1);
    assert!(ModelStub::tool_messages(&model.requests()[1])[0].contains("first"));

    // The token expires (2 s): the next call refreshes it silently first.
    std::thread::sleep(std::time::Duration::from_millis(2300));
    t.run(&["--yolo", "-p", "echo after expiry"]).ok();
    assert_eq!(stub.grants("refresh_token"), 1);
    assert!(ModelStub::tool_messages(&model.requests()[3])[0].contains("after expiry"));
    let second = stub.tokens();
    assert_eq!(
        second.len(),
        4,
        "a new access and a rotated refresh token: {second:?}"
    );
    // Stored again, sealed: no token of either login in the vault's files.
    for token in &second {
        for f in vault_files(&t) {
            assert!(
                !file_contains(&f, token.as_bytes()),
                "{token} in {}",
                f.display()
            );
        }
    }
    assert!(
        t.run(&["mcp", "login", "remote", "--status"])
            .ok()
            .contains("refreshable")
    );

    // The grant is revoked: refresh fails, and the result says how to log in again.
    std::fs::write(stub.control.join("revoked"), "").unwrap();
    std::thread::sleep(std::time::Duration::from_millis(2300));
    t.run(&["--yolo", "-p", "echo after revocation"]).ok();
    let msg = &ModelStub::tool_messages(&model.requests()[5])[0];
    assert!(msg.contains("tai mcp login remote"), "{msg}");

    // Logging in again (the grant no longer revoked) stores new tokens; logout forgets them.
    std::fs::remove_file(stub.control.join("revoked")).unwrap();
    let login = t.run(&["mcp", "login", "remote"]).ok().to_string();
    assert!(
        login.contains("logged in") && !login.contains("tai-stub-"),
        "{login}"
    );
    assert_eq!(stub.grants("authorization_code"), 2);
    t.run(&["mcp", "logout", "remote"]).ok();
    let status = t
        .run(&["mcp", "login", "remote", "--status"])
        .ok()
        .to_string();
    assert!(status.contains("not logged in"), "{status}");

    // No token anywhere it must not be: the sealed vault files, the audit trail, the
    // model's requests.
    let audit = t.run(&["vault", "audit", "--json"]).ok().to_string();
    assert!(audit.contains("mcp-oauth"), "{audit}");
    let requests = serde_json::to_string(&model.requests()).unwrap();
    let all = stub.tokens();
    assert_eq!(all.len(), 6, "{all:?}");
    for token in &all {
        for f in vault_files(&t) {
            assert!(
                !file_contains(&f, token.as_bytes()),
                "{token} in {}",
                f.display()
            );
        }
        assert!(
            !audit.contains(token.as_str()),
            "{token} in the audit trail"
        );
        assert!(
            !requests.contains(token.as_str()),
            "{token} sent to the model"
        );
    }
}

#[test]
fn a_server_that_names_another_resource_is_refused() {
    // The same check the conformance suite's auth/resource-mismatch makes, from the
    // CLI: probe a URL whose metadata names a different resource.
    let dir = TempDir::new("oauth-mismatch");
    let stub = OAuthStub::start(&dir, 60, &[]);
    let mut t = Tai::new("oauth-mismatch-run");
    t.env(
        "TAI_OAUTH_BROWSER",
        &format!("{} browse", env!("CARGO_BIN_EXE_tai-stub-mcp-oauth")),
    );
    // The stub's metadata names .../mcp; reaching it under another path is a mismatch.
    let other = stub.url.replace("/mcp", "/mcp-other");
    let err = t.run(&["mcp", "probe", &other]).fails(1).to_string();
    assert!(err.contains("refusing to authorize"), "{err}");
    assert_eq!(stub.grants("authorization_code"), 0);
}

#[test]
fn a_pre_registered_client_for_a_server_without_registration() {
    let dir = TempDir::new("oauth-prereg");
    let stub = OAuthStub::start(&dir, 60, &["--preregistered", "tai-cli:s3cret-client-9d2"]);
    let mut t = Tai::new("oauth-prereg-run");
    t.env(
        "TAI_OAUTH_BROWSER",
        &format!("{} browse", env!("CARGO_BIN_EXE_tai-stub-mcp-oauth")),
    );
    // No registration endpoint and no client id: the add fails saying what to pass.
    let err = t
        .run(&["--yolo", "mcp", "add", &stub.url, "--name", "pre"])
        .fails(1)
        .to_string();
    assert!(err.contains("TAI_OAUTH_CLIENT_ID"), "{err}");
    assert!(
        t.run(&["mcp", "list"])
            .ok()
            .lines()
            .all(|l| !l.starts_with("pre "))
    );
    // With the pre-registered client: Basic auth at the token endpoint, and the client
    // secret kept as a vault secret (its value never printed).
    t.env("TAI_OAUTH_CLIENT_ID", "tai-cli")
        .env("TAI_OAUTH_CLIENT_SECRET", "s3cret-client-9d2");
    t.run(&["--yolo", "mcp", "add", &stub.url, "--name", "pre"])
        .ok();
    assert_eq!(stub.grants("authorization_code"), 1);
    let names = t.run(&["vault", "secret", "list"]).ok().to_string();
    assert!(
        names.contains("oauth.pre.client") && !names.contains("s3cret"),
        "{names}"
    );
    let status = t.run(&["mcp", "login", "pre", "--status"]).ok().to_string();
    assert!(status.contains("logged in"), "{status}");
    // Removing the server removes its login.
    t.run(&["--yolo", "mcp", "remove", "pre"]).ok();
    let names = t.run(&["vault", "secret", "list"]).ok().to_string();
    assert!(!names.contains("oauth.pre"), "{names}");
}

/// Drive `tai --yolo` (the REPL) on a pseudo-terminal: send `lines` one by one, each
/// after the text before it appeared; returns everything the terminal showed.
fn repl_on_a_pty(t: &Tai, steps: &[(&str, &str)]) -> String {
    const DRIVER: &str = r#"
import json, os, pty, select, sys, time
steps = json.loads(sys.argv[1])
pid, fd = pty.fork()
if pid == 0:
    os.execv(sys.argv[2], [sys.argv[2], "--yolo"])
seen = b""
def wait_for(text, secs=30):
    global seen
    end = time.time() + secs
    while text.encode() not in seen:
        left = end - time.time()
        if left <= 0:
            return False
        r, _, _ = select.select([fd], [], [], left)
        if r:
            try:
                chunk = os.read(fd, 4096)
            except OSError:
                return False
            if not chunk:
                return False
            seen += chunk
    return True
for want, send in steps:
    if not wait_for(want):
        break
    seen = seen.replace(want.encode(), b"<" + want.encode() + b">", 1)
    os.write(fd, send.encode())
wait_for("\x00", 3)
os.kill(pid, 9)
sys.stdout.write(seen.decode("utf-8", "replace"))
"#;
    let steps: Vec<(String, String)> = steps
        .iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect();
    let tai = t.cmd(&[]).get_program().to_owned();
    let mut cmd = Command::new("python3");
    cmd.args(["-c", DRIVER, &serde_json::to_string(&steps).unwrap()])
        .arg(tai);
    // The same scrubbed environment tai's commands get.
    cmd.env_clear();
    for (k, v) in t.cmd(&[]).get_envs() {
        if let Some(v) = v {
            cmd.env(k, v);
        }
    }
    let o = cmd.output().unwrap();
    String::from_utf8_lossy(&o.stdout).into_owned()
}

#[test]
fn the_repl_asks_before_a_new_login() {
    let dir = TempDir::new("oauth-repl");
    let stub = OAuthStub::start(&dir, 60, &[]);
    let model = ModelStub::start(
        dir.path(),
        json!([call("mcp_remote_echo", json!({"text": "hello"})), {"text": "done 1"}]),
    );
    let mut t = Tai::new("oauth-repl-run");
    t.env(
        "TAI_OAUTH_BROWSER",
        &format!("{} browse", env!("CARGO_BIN_EXE_tai-stub-mcp-oauth")),
    )
    .env("TAI_BASE_URL", &model.url)
    .env("TAI_MODEL", "stub-model");
    t.run(&["--yolo", "mcp", "add", &stub.url, "--name", "remote"])
        .ok();
    t.run(&["mcp", "enable", "remote"]).ok();
    t.run(&["mcp", "logout", "remote"]).ok();
    // Logged out: the REPL's bridged call meets a 401 and asks; "y" logs in again.
    let shown = repl_on_a_pty(
        &t,
        &[
            ("> ", "echo hello\n"),
            ("Log in now? [y/N]", "y\n"),
            ("done 1", "/exit\n"),
        ],
    );
    assert!(shown.contains("<Log in now? [y/N]>"), "{shown}");
    assert!(shown.contains("<done 1>"), "{shown}");
    assert_eq!(stub.grants("authorization_code"), 2);
    assert!(ModelStub::tool_messages(&model.requests()[1])[0].contains("hello"));
    let status = t
        .run(&["mcp", "login", "remote", "--status"])
        .ok()
        .to_string();
    assert!(status.contains("logged in"), "{status}");
}
