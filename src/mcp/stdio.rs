//! `McpStdioTransport`: a server as a child process speaking newline-delimited JSON-RPC.
//!
//! One `poll(2)` loop owns the child's three pipes: stdout is framed into messages,
//! stderr is drained into a capped ring (never parsed) so a chatty server cannot block,
//! and stdin is written without blocking while both are drained. The child runs in its
//! own process group; shutdown closes stdin, waits, then SIGTERMs and SIGKILLs the group.

use std::collections::VecDeque;
use std::io::{ErrorKind, Read, Write};
use std::os::fd::AsFd;
use std::path::PathBuf;
use std::process::{Child, ChildStderr, ChildStdin, ChildStdout};
use std::time::Duration;

use nix::fcntl::{FcntlArg, OFlag, fcntl};
use nix::poll::{PollFd, PollFlags, poll};

use super::caps::MCP_HTTP_MAX_BODY;
use super::ndjson::{Frame, LineSplitter};
use super::transport::{Result, Transport, TransportError};
use crate::jsonrpc::Message;

use crate::deadline::Deadline;
use crate::limits::{
    CHILD_REAP_CHECK, INTERRUPT_CHECK, STDIO_EXIT_WAIT, STDIO_SHUTDOWN_STEP as SHUTDOWN_STEP,
    STDIO_STDERR_KEEP as STDERR_KEEP,
};

/// What to run.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct StdioSpec {
    pub command: String,
    pub args: Vec<String>,
    /// The entry's own variables; the child's whole environment is built from these by
    /// `crate::child_env` (`StdioSpec::environment`).
    pub env: Vec<(String, String)>,
    pub cwd: Option<PathBuf>,
    /// Names passed through from tai's environment beside the base allowlist.
    pub env_vars: Vec<String>,
    /// Known secret values: a variable holding one is never passed through.
    pub withheld_values: Vec<String>,
}

impl StdioSpec {
    /// The server's whole environment, from this process's (`child_env::for_server`).
    pub fn environment(&self) -> Vec<(String, String)> {
        let withheld: Vec<&str> = self.withheld_values.iter().map(String::as_str).collect();
        crate::child_env::for_server(
            &crate::child_env::parent(),
            &self.env,
            &self.env_vars,
            &withheld,
        )
    }
}

pub struct McpStdioTransport {
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: Option<ChildStdout>,
    stderr: Option<ChildStderr>,
    lines: LineSplitter,
    inbox: VecDeque<Message>,
    stderr_ring: VecDeque<u8>,
    skipped: usize,
    /// A line over the cap arrived: the in-flight request cannot be answered.
    too_long: Option<usize>,
    status: Option<std::process::ExitStatus>,
}

fn nonblocking(fd: impl AsFd) -> std::io::Result<()> {
    let flags = fcntl(fd.as_fd(), FcntlArg::F_GETFL).map_err(std::io::Error::from)?;
    let flags = OFlag::from_bits_truncate(flags) | OFlag::O_NONBLOCK;
    fcntl(fd.as_fd(), FcntlArg::F_SETFL(flags)).map_err(std::io::Error::from)?;
    Ok(())
}

impl McpStdioTransport {
    /// Spawn the server (no shell) in its own process group.
    pub fn spawn(spec: &StdioSpec) -> Result<McpStdioTransport> {
        // Exactly the built environment: never tai's secrets (`child_env`).
        let environment = spec.environment();
        let mut child = crate::child::start(&crate::child::Launch {
            program: &spec.command,
            args: &spec.args,
            env: &environment,
            cwd: spec.cwd.as_deref(),
            stdin: true,
            channel: None,
        })
        .map_err(|e| {
            let hint = if e.kind() == ErrorKind::NotFound {
                " (is it installed and on PATH?)"
            } else {
                ""
            };
            TransportError::Io(format!("cannot start {:?}: {e}{hint}", spec.command))
        })?;
        let (stdin, stdout, stderr) =
            (child.stdin.take(), child.stdout.take(), child.stderr.take());
        let io_err =
            |e: std::io::Error| TransportError::Io(format!("setting up the server's pipes: {e}"));
        for fd in [
            stdin.as_ref().map(|s| s.as_fd()),
            stdout.as_ref().map(|s| s.as_fd()),
            stderr.as_ref().map(|s| s.as_fd()),
        ]
        .into_iter()
        .flatten()
        {
            nonblocking(fd).map_err(io_err)?;
        }
        Ok(McpStdioTransport {
            child,
            stdin,
            stdout,
            stderr,
            lines: LineSplitter::new(MCP_HTTP_MAX_BODY),
            inbox: VecDeque::new(),
            stderr_ring: VecDeque::new(),
            skipped: 0,
            too_long: None,
            status: None,
        })
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// One round of the loop: wait up to `wait` for any pipe, then move what is ready.
    /// Returns bytes of `out` written to stdin.
    fn pump(&mut self, until: Deadline, out: &[u8]) -> Result<usize> {
        let mut fds = Vec::with_capacity(3);
        let mut roles = Vec::with_capacity(3);
        if let Some(s) = &self.stdout {
            fds.push(PollFd::new(s.as_fd(), PollFlags::POLLIN));
            roles.push(0);
        }
        if let Some(s) = &self.stderr {
            fds.push(PollFd::new(s.as_fd(), PollFlags::POLLIN));
            roles.push(1);
        }
        if !out.is_empty()
            && let Some(s) = &self.stdin
        {
            fds.push(PollFd::new(s.as_fd(), PollFlags::POLLOUT));
            roles.push(2);
        }
        if fds.is_empty() {
            return Ok(0);
        }
        match poll(&mut fds, until.poll_timeout()) {
            Ok(_) => {}
            Err(nix::errno::Errno::EINTR) => return Ok(0),
            Err(e) => return Err(TransportError::Io(format!("poll: {e}"))),
        }
        let ready: Vec<(usize, bool)> = fds
            .iter()
            .zip(&roles)
            .map(|(fd, role)| (*role, fd.revents().is_some_and(|r| !r.is_empty())))
            .collect();
        drop(fds);
        let mut written = 0;
        for (role, is_ready) in ready {
            if !is_ready {
                continue;
            }
            match role {
                0 => self.read_stdout(),
                1 => self.read_stderr(),
                _ => written = self.write_stdin(out)?,
            }
        }
        Ok(written)
    }

    fn read_stdout(&mut self) {
        let mut buf = [0u8; 64 * 1024];
        let Some(stdout) = self.stdout.as_mut() else {
            return;
        };
        let mut frames = Vec::new();
        loop {
            match stdout.read(&mut buf) {
                Ok(0) => {
                    self.stdout = None;
                    break;
                }
                Ok(n) => {
                    self.lines.feed(&buf[..n], &mut frames);
                    if n < buf.len() {
                        break; // drained for now; poll says when there is more
                    }
                }
                Err(e) if e.kind() == ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                Err(_) => {
                    self.stdout = None;
                    break;
                }
            }
        }
        for frame in frames {
            match frame {
                Frame::Line(line) => match Message::parse(&line) {
                    Ok(m) => self.inbox.push_back(m),
                    Err(_) => self.skipped += 1, // a log line on stdout: skipped, counted
                },
                Frame::TooLong(n) => self.too_long = Some(n),
            }
        }
    }

    fn read_stderr(&mut self) {
        let mut buf = [0u8; 16 * 1024];
        let Some(stderr) = self.stderr.as_mut() else {
            return;
        };
        loop {
            match stderr.read(&mut buf) {
                Ok(0) => {
                    self.stderr = None;
                    break;
                }
                Ok(n) => {
                    self.stderr_ring.extend(&buf[..n]);
                    let over = self.stderr_ring.len().saturating_sub(STDERR_KEEP);
                    self.stderr_ring.drain(..over);
                }
                Err(e) if e.kind() == ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                Err(_) => {
                    self.stderr = None;
                    break;
                }
            }
        }
    }

    fn write_stdin(&mut self, out: &[u8]) -> Result<usize> {
        let Some(stdin) = self.stdin.as_mut() else {
            return Err(self.exited());
        };
        match stdin.write(out) {
            Ok(n) => Ok(n),
            Err(e) if e.kind() == ErrorKind::WouldBlock || e.kind() == ErrorKind::Interrupted => {
                Ok(0)
            }
            Err(e) if e.kind() == ErrorKind::BrokenPipe => {
                self.stdin = None;
                Err(self.exited())
            }
            Err(e) => Err(TransportError::Io(format!("writing to the server: {e}"))),
        }
    }

    /// The child's exit, waited for briefly (its stdout is closed, so it is ending).
    fn exited(&mut self) -> TransportError {
        let until = Deadline::after(STDIO_EXIT_WAIT);
        while self.status.is_none() {
            match self.child.try_wait() {
                Ok(Some(s)) => self.status = Some(s),
                Ok(None) if !until.expired() => {
                    let _ = self.pump(Deadline::after(CHILD_REAP_CHECK), &[]);
                }
                _ => break,
            }
        }
        let status = match self.status {
            Some(s) => describe_status(s),
            None => "closed its stdout".to_string(),
        };
        TransportError::Exited { status }
    }

    /// Wait up to `wait` for the child to exit, draining its pipes meanwhile.
    fn wait_exit(&mut self, wait: Duration) -> bool {
        let until = Deadline::after(wait);
        loop {
            if let Ok(Some(s)) = self.child.try_wait() {
                self.status = Some(s);
                return true;
            }
            if until.expired() {
                return false;
            }
            // With both pipes closed there is nothing to poll but the clock.
            let step = until.within(CHILD_REAP_CHECK);
            if self.stdout.is_none() && self.stderr.is_none() {
                crate::clock::sleep_until(step);
            } else {
                let _ = self.pump(step, &[]);
            }
        }
    }
}

/// The end of `text`, at most `max` bytes, starting on a character boundary.
fn last_bytes(text: &str, max: usize) -> &str {
    let mut from = text.len().saturating_sub(max);
    while !text.is_char_boundary(from) {
        from += 1;
    }
    &text[from..]
}

fn describe_status(s: std::process::ExitStatus) -> String {
    use std::os::unix::process::ExitStatusExt;
    match (s.code(), s.signal()) {
        (Some(c), _) => format!("exit code {c}"),
        (None, Some(sig)) => format!("killed by signal {sig}"),
        _ => s.to_string(),
    }
}

impl Transport for McpStdioTransport {
    fn send(&mut self, msg: &Message, deadline: Deadline) -> Result<()> {
        let mut line = msg.to_bytes();
        line.push(b'\n');
        // Try the write straight away (the pipe almost always has room); poll only when it
        // is full, draining stdout and stderr meanwhile so the child never blocks on them.
        let mut at = match self.stdin.is_some() && self.status.is_none() {
            true => self.write_stdin(&line)?,
            false => 0,
        };
        while at < line.len() {
            if self.stdin.is_none() || self.status.is_some() {
                return Err(self.exited());
            }
            if deadline.expired() {
                return Err(TransportError::Timeout);
            }
            at += self.pump(deadline, &line[at..])?;
        }
        Ok(())
    }

    fn recv(&mut self, deadline: Deadline) -> Result<Option<Message>> {
        loop {
            if let Some(m) = self.inbox.pop_front() {
                return Ok(Some(m));
            }
            if let Some(n) = self.too_long.take() {
                return Err(TransportError::TooLarge(n));
            }
            if self.stdout.is_none() {
                return Err(self.exited());
            }
            if crate::sigint::interrupted() {
                return Err(TransportError::Interrupted);
            }
            if deadline.expired() {
                return Err(TransportError::Timeout);
            }
            // Short rounds, so Ctrl-C is seen even when no signal interrupts the poll.
            self.pump(deadline.within(INTERRUPT_CHECK), &[])?;
        }
    }

    fn stderr_tail(&self) -> String {
        let bytes: Vec<u8> = self.stderr_ring.iter().copied().collect();
        let text = String::from_utf8_lossy(&bytes);
        let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
        let tail = lines[lines.len().saturating_sub(12)..].join("\n");
        last_bytes(&tail, 2000).to_string()
    }

    fn skipped(&self) -> usize {
        self.skipped
    }

    fn is_stream(&self) -> bool {
        true
    }

    fn close(&mut self) {
        if self.status.is_some() && self.stdin.is_none() {
            return;
        }
        self.stdin = None; // close stdin: a well-behaved server exits
        self.wait_exit(SHUTDOWN_STEP);
        // Then SIGTERM, a grace, SIGKILL — to the server, its group and every process it
        // left behind (npx's node, a `setsid` grandchild), and reap.
        if let Some(s) = crate::child::stop(&mut self.child, SHUTDOWN_STEP) {
            self.status = Some(s);
        }
        self.stdout = None;
        self.stderr = None;
    }
}

impl Drop for McpStdioTransport {
    fn drop(&mut self) {
        self.close();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The stderr tail cut inside a multi-byte character starts at the next boundary.
    #[test]
    fn a_tail_cut_inside_a_character_does_not_panic() {
        let text = "é".repeat(1500); // 3000 bytes: byte 1000 is inside a character
        let tail = last_bytes(&text, 2001);
        assert_eq!(tail.len(), 2000);
        assert!(tail.chars().all(|c| c == 'é'));
        assert_eq!(last_bytes("short", 2000), "short");
        assert_eq!(last_bytes("日本語", 4), "語");
    }
}
