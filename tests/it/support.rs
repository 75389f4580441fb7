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
