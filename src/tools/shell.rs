//! The `shell` tool: `sh -c COMMAND` in its own process group, output captured through
//! `poll(2)` under a deadline and a cap, the group killed on timeout.

use std::io::Read;
use std::os::fd::AsFd;
use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;
use serde_json::{Map, Value, json};

use super::{NativeTool, ToolContext, ToolDef, ToolOutput, arg_str};

const DEFAULT_TIMEOUT: u64 = 120;
const MAX_TIMEOUT: u64 = 600;
/// Output kept per stream; the rest is counted and said.
const OUTPUT_CAP: usize = 100 * 1024;

pub struct Shell;

/// Whether a command line may run without approval: only when the argv-parsing
/// allowlist in `shell_policy` proves it read-only.
pub fn is_safe(command: &str) -> bool {
    super::shell_policy::is_read_only(command)
}

/// What a command did.
pub struct Captured {
    pub status: Option<i32>,
    pub stdout: String,
    pub stderr: String,
    pub timed_out: bool,
    pub dropped: usize,
}

fn keep(buf: &mut Vec<u8>, data: &[u8], dropped: &mut usize) {
    let room = OUTPUT_CAP.saturating_sub(buf.len());
    buf.extend_from_slice(&data[..data.len().min(room)]);
    *dropped += data.len().saturating_sub(room);
}

/// Run `sh -c command` with a deadline, reading both streams as they come. `env` is the
/// child's whole environment (`crate::child_env::for_shell`).
pub fn run(
    command: &str,
    cwd: Option<&str>,
    timeout: Duration,
    env: &[(String, String)],
) -> Result<Captured, String> {
    let mut cmd = Command::new("sh");
    cmd.arg("-c")
        .arg(command)
        .env_clear()
        .envs(env.iter().map(|(k, v)| (k, v)))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    if let Some(d) = cwd {
        cmd.current_dir(d);
    }
    let mut child = cmd.spawn().map_err(|e| format!("cannot run sh: {e}"))?;
    let (mut out, mut err) = (child.stdout.take(), child.stderr.take());
    let (mut obuf, mut ebuf, mut dropped) = (Vec::new(), Vec::new(), 0usize);
    let deadline = Instant::now() + timeout;
    let mut timed_out = false;
    let mut chunk = [0u8; 16 * 1024];
    while out.is_some() || err.is_some() {
        let Some(left) = deadline
            .checked_duration_since(Instant::now())
            .filter(|d| !d.is_zero())
        else {
            timed_out = true;
            break;
        };
        let mut fds = Vec::new();
        if let Some(o) = &out {
            fds.push(PollFd::new(o.as_fd(), PollFlags::POLLIN));
        }
        if let Some(e) = &err {
            fds.push(PollFd::new(e.as_fd(), PollFlags::POLLIN));
        }
        let ms = left.as_millis().clamp(1, u16::MAX as u128) as u16;
        if poll(&mut fds, PollTimeout::from(ms)).is_err() {
            continue; // EINTR: look at the clock again
        }
        let ready: Vec<bool> = fds
            .iter()
            .map(|f| f.revents().is_some_and(|r| !r.is_empty()))
            .collect();
        drop(fds);
        let mut i = 0;
        if out.is_some() {
            if ready[i] {
                match out.as_mut().map(|o| o.read(&mut chunk)) {
                    Some(Ok(n)) if n > 0 => keep(&mut obuf, &chunk[..n], &mut dropped),
                    _ => out = None,
                }
            }
            i += 1;
        }
        if err.is_some() && ready[i] {
            match err.as_mut().map(|e| e.read(&mut chunk)) {
                Some(Ok(n)) if n > 0 => keep(&mut ebuf, &chunk[..n], &mut dropped),
                _ => err = None,
            }
        }
    }
    let pgid = Pid::from_raw(child.id() as i32);
    if timed_out {
        let _ = killpg(pgid, Signal::SIGTERM);
        crate::clock::sleep(Duration::from_millis(200));
        let _ = killpg(pgid, Signal::SIGKILL);
    }
    let status = child.wait().map_err(|e| e.to_string())?.code();
    Ok(Captured {
        status,
        stdout: String::from_utf8_lossy(&obuf).into_owned(),
        stderr: String::from_utf8_lossy(&ebuf).into_owned(),
        timed_out,
        dropped,
    })
}

/// The user's environment minus tai's secrets and any variable holding a known secret.
fn child_env(ctx: &ToolContext<'_>) -> Vec<(String, String)> {
    let values = ctx.store.secret_values();
    let values: Vec<&str> = values.iter().map(String::as_str).collect();
    crate::child_env::for_shell(&crate::child_env::parent(), &values)
}

impl NativeTool for Shell {
    fn def(&self) -> ToolDef {
        ToolDef {
            name: "shell",
            description: "Run a shell command line (sh -c) in a directory, with a timeout in seconds (default 120, at most 600). Returns exit code, stdout and stderr. Read-only commands run without asking; others need approval.",
            parameters: json!({"type": "object", "properties": {
                "command": {"type": "string"}, "cwd": {"type": "string"}, "timeout": {"type": "integer"}
            }, "required": ["command"]}),
            safe: false,
        }
    }

    fn run(&self, ctx: &mut ToolContext<'_>, args: &Map<String, Value>) -> ToolOutput {
        let secs = args
            .get("timeout")
            .and_then(Value::as_u64)
            .unwrap_or(DEFAULT_TIMEOUT)
            .clamp(1, MAX_TIMEOUT);
        let c = match run(
            arg_str(args, "command"),
            args.get("cwd").and_then(Value::as_str),
            Duration::from_secs(secs),
            &child_env(ctx),
        ) {
            Ok(c) => c,
            Err(e) => return ToolOutput::error(e),
        };
        let mut text = String::new();
        if c.timed_out {
            text.push_str(&format!(
                "timed out after {secs}s; the command was killed\n"
            ));
        } else {
            text.push_str(&format!(
                "exit code {}\n",
                c.status
                    .map_or("none (killed by a signal)".into(), |s| s.to_string())
            ));
        }
        if !c.stdout.is_empty() {
            text.push_str(&format!("--- stdout ---\n{}\n", c.stdout.trim_end()));
        }
        if !c.stderr.is_empty() {
            text.push_str(&format!("--- stderr ---\n{}\n", c.stderr.trim_end()));
        }
        if c.dropped > 0 {
            text.push_str(&format!(
                "… {} more bytes of output were not kept (over {} KB per stream)\n",
                c.dropped,
                OUTPUT_CAP / 1024
            ));
        }
        ToolOutput {
            text,
            is_error: c.timed_out || c.status != Some(0),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn safe_table() {
        for ok in [
            "ls -la",
            "git status",
            "git log --oneline",
            "cat README.md",
            "find . -name x",
            "wc -l src/lib.rs",
        ] {
            assert!(is_safe(ok), "{ok}");
        }
        for bad in [
            "rm -rf x",
            "ls; rm x",
            "cat a > b",
            "echo $(id)",
            "git push",
            "find . -delete",
            "ls | sh",
            "curl x",
            "",
        ] {
            assert!(!is_safe(bad), "{bad}");
        }
    }

    #[test]
    fn capture_timeout_and_cap() {
        let env = crate::child_env::parent();
        let c = run(
            "echo out; echo err >&2; exit 3",
            None,
            Duration::from_secs(5),
            &env,
        )
        .unwrap();
        assert_eq!(
            (c.status, c.stdout.as_str(), c.stderr.as_str(), c.timed_out),
            (Some(3), "out\n", "err\n", false)
        );
        let t0 = Instant::now();
        let c = run("sleep 5", None, Duration::from_millis(300), &env).unwrap();
        assert!(c.timed_out && t0.elapsed() < Duration::from_secs(3));
        let c = run(
            "head -c 300000 /dev/zero",
            None,
            Duration::from_secs(5),
            &env,
        )
        .unwrap();
        assert_eq!(
            (c.stdout.len(), c.dropped),
            (OUTPUT_CAP, 300_000 - OUTPUT_CAP)
        );
    }
}
