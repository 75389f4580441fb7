//! The `shell` tool: `sh -c COMMAND` in its own process group, output captured through
//! `poll(2)` under one deadline for the whole run and a cap; on timeout or Ctrl-C the
//! command and what it left behind are stopped through `crate::child`.

use std::io::Read;
use std::os::fd::AsFd;
use std::time::Duration;

use nix::poll::{PollFd, PollFlags, poll};
use serde_json::{Map, Value, json};

use super::{NativeTool, ToolContext, ToolDef, ToolOutput, arg_str};

use crate::deadline::Deadline;
use crate::limits::{
    SHELL_DEFAULT_TIMEOUT_SECS, SHELL_INTERRUPT_CHECK, SHELL_MAX_TIMEOUT_SECS, SHELL_OUTPUT_CAP,
    SHELL_STOP_GRACE,
};

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
    /// Stopped by Ctrl-C.
    pub interrupted: bool,
    pub dropped: usize,
}

fn keep(buf: &mut Vec<u8>, data: &[u8], dropped: &mut usize) {
    let room = SHELL_OUTPUT_CAP.saturating_sub(buf.len());
    buf.extend_from_slice(&data[..data.len().min(room)]);
    *dropped += data.len().saturating_sub(room);
}

/// Run `sh -c command` with a deadline over the whole run (output and exit alike),
/// reading both streams as they come. Ctrl-C (`interrupted`) stops it like the deadline
/// does: SIGTERM to its group and what it left behind, then SIGKILL after a grace. `env`
/// is the child's whole environment (`crate::child_env::for_shell`).
pub fn run(
    command: &str,
    cwd: Option<&str>,
    timeout: Duration,
    env: &[(String, String)],
    interrupted: &dyn Fn() -> bool,
) -> Result<Captured, String> {
    let args = ["-c".to_string(), command.to_string()];
    let mut child = crate::child::start(&crate::child::Launch {
        program: "sh",
        args: &args,
        env,
        cwd: cwd.map(std::path::Path::new),
        stdin: false,
        channel: None,
    })
    .map_err(|e| format!("cannot run sh: {e}"))?;
    let (mut out, mut err) = (child.stdout.take(), child.stderr.take());
    let (mut obuf, mut ebuf, mut dropped) = (Vec::new(), Vec::new(), 0usize);
    let deadline = Deadline::after(timeout);
    let mut chunk = [0u8; 16 * 1024];
    let mut stopped_early = false;
    while out.is_some() || err.is_some() {
        if deadline.expired() || interrupted() {
            stopped_early = true;
            break;
        }
        let mut fds = Vec::new();
        if let Some(o) = &out {
            fds.push(PollFd::new(o.as_fd(), PollFlags::POLLIN));
        }
        if let Some(e) = &err {
            fds.push(PollFd::new(e.as_fd(), PollFlags::POLLIN));
        }
        // Short rounds, so Ctrl-C is seen even when no signal interrupts the poll.
        if poll(
            &mut fds,
            deadline.within(SHELL_INTERRUPT_CHECK).poll_timeout(),
        )
        .is_err()
        {
            continue; // EINTR: look at the clock and the flag again
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
    // The pipes are closed (or time is up): the exit is waited for by the same deadline.
    let status = match stopped_early {
        false => crate::child::wait_until(&mut child, deadline, interrupted),
        true => None,
    };
    let status = match status {
        Some(s) => Some(s),
        None => {
            stopped_early = true;
            crate::child::stop(&mut child, SHELL_STOP_GRACE)
        }
    };
    let was_interrupted = stopped_early && interrupted();
    Ok(Captured {
        status: status.and_then(|s| s.code()),
        stdout: String::from_utf8_lossy(&obuf).into_owned(),
        stderr: String::from_utf8_lossy(&ebuf).into_owned(),
        timed_out: stopped_early && !was_interrupted,
        interrupted: was_interrupted,
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
            .unwrap_or(SHELL_DEFAULT_TIMEOUT_SECS)
            .clamp(1, SHELL_MAX_TIMEOUT_SECS);
        let c = match run(
            arg_str(args, "command"),
            args.get("cwd").and_then(Value::as_str),
            Duration::from_secs(secs),
            &child_env(ctx),
            &crate::sigint::interrupted,
        ) {
            Ok(c) => c,
            Err(e) => return ToolOutput::error(e),
        };
        let mut text = String::new();
        if c.interrupted {
            text.push_str(if crate::sigint::deadline_passed() {
                "the turn's deadline passed; the command was stopped\n"
            } else {
                "interrupted (Ctrl-C); the command was stopped\n"
            });
        } else if c.timed_out {
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
                SHELL_OUTPUT_CAP / 1024
            ));
        }
        ToolOutput {
            text,
            is_error: c.timed_out || c.interrupted || c.status != Some(0),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Instant;

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
        let never = || false;
        let c = run(
            "echo out; echo err >&2; exit 3",
            None,
            Duration::from_secs(5),
            &env,
            &never,
        )
        .unwrap();
        assert_eq!(
            (c.status, c.stdout.as_str(), c.stderr.as_str(), c.timed_out),
            (Some(3), "out\n", "err\n", false)
        );
        let t0 = Instant::now();
        let c = run("sleep 5", None, Duration::from_millis(300), &env, &never).unwrap();
        assert!(c.timed_out && t0.elapsed() < Duration::from_secs(3));
        let c = run(
            "head -c 300000 /dev/zero",
            None,
            Duration::from_secs(5),
            &env,
            &never,
        )
        .unwrap();
        assert_eq!(
            (c.stdout.len(), c.dropped),
            (SHELL_OUTPUT_CAP, 300_000 - SHELL_OUTPUT_CAP)
        );
    }

    /// A command whose pipes close while it keeps running (a background job holding no
    /// pipe, waited for) ends at its deadline, not when the job does.
    #[test]
    fn the_deadline_covers_waiting_after_the_pipes_close() {
        let never = || false;
        let t0 = Instant::now();
        let c = run(
            "sleep 30 >/dev/null 2>&1 & exec >/dev/null 2>&1; wait",
            None,
            Duration::from_millis(500),
            &crate::child_env::parent(),
            &never,
        )
        .unwrap();
        assert!(c.timed_out, "{:?}", c.status);
        assert!(t0.elapsed() < Duration::from_secs(4), "{:?}", t0.elapsed());
    }

    #[test]
    fn an_interrupt_stops_the_command() {
        let t0 = Instant::now();
        let asked = || t0.elapsed() > Duration::from_millis(300);
        let env = crate::child_env::parent();
        let c = run("sleep 30", None, Duration::from_secs(60), &env, &asked).unwrap();
        assert!(c.interrupted && !c.timed_out);
        assert!(t0.elapsed() < Duration::from_secs(3), "{:?}", t0.elapsed());
    }
}
