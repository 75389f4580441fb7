//! Long served calls in worker processes, so the server's one-threaded loop never waits on
//! them. A `tools/call` of one of the `LONG_TOOLS` becomes a [`Job`]; the [`Pool`] starts
//! `tai --serve-worker` through the one child-process driver (`child`), in its own process
//! group, with tai's environment minus its secrets (`child_env::for_worker`), and writes the
//! job as JSON on its stdin, the secrets the worker needs (API key, vault passphrase) in
//! it. Its stdin and stdout are one end of a socket pair, not pipes: another process of
//! the same user cannot open a socket again through `/proc/<worker>/fd/…` in the moment
//! before the worker makes itself undumpable, so it can neither read the job nor hold the
//! reply open. The worker opens the vault, resolves the same profile and runs the call
//! through the very same dispatcher and trust gate (`McpServer::handle`, entrance
//! `Network`), then writes the JSON-RPC reply on stdout and exits; it ends with the server
//! (`PR_SET_PDEATHSIG`, SIGTERM: the call stops as on a cancel). The loop polls the
//! workers' sockets beside its connections and hands each finished reply to whoever
//! waits for it.
//!
//! Each worker carries a deadline (the served turn's plus a margin); past it, or when the
//! client that waits goes away, cancels, or its session is deleted, the worker and
//! everything it started are ended. At most `cap` run at once: the transport refuses
//! (HTTP 503) or queues (stdio) beyond it.

use std::io::{ErrorKind, Read, Write};
use std::net::Shutdown;
use std::os::fd::{AsFd, BorrowedFd};
use std::os::unix::net::UnixStream;
use std::process::{Child, ChildStderr};
use std::time::{Duration, Instant};

use nix::fcntl::{FcntlArg, OFlag, fcntl};
use nix::poll::PollFlags;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::McpServer;
use crate::jsonrpc::{ErrorObject, Id, Message};
use crate::limits::serve::{
    WORKER_DEADLINE_MARGIN as DEADLINE_MARGIN, WORKER_STOP_GRACE as STOP_GRACE,
};
use crate::mcp::caps::MCP_HTTP_MAX_BODY;
use crate::mcp::era::Era;

/// The hidden argument that makes `tai` a worker (never typed by a person).
pub const WORKER_ARG: &str = "--serve-worker";
/// Workers running at once unless `--serve-workers N` (or `serve_workers`) says otherwise.
pub const DEFAULT_WORKERS: usize = crate::limits::serve::WORKERS;
/// A reply a worker writes at most (a tool's output is capped far below this).
const MAX_REPLY: usize = 4 * MCP_HTTP_MAX_BODY;
/// What of a worker's stderr is kept for the server's log.
const MAX_STDERR: usize = 16 * 1024;
/// A job read by a worker at most: the request (≤ MCP_HTTP_MAX_BODY) and its settings.
const MAX_JOB: usize = MCP_HTTP_MAX_BODY + 64 * 1024;
/// JSON-RPC's "internal error": the worker failed, not the tool.
const INTERNAL_ERROR: i64 = -32603;

/// One long call, as a worker receives it on stdin.
#[derive(Debug, Serialize, Deserialize)]
pub struct Job {
    /// The `tools/call` request, whole.
    pub message: Value,
    /// The era the request is answered in.
    pub modern: bool,
    /// The 2025-11-25 session (or the stdio connection's), `chat`'s default conversation.
    pub session: Option<String>,
    /// The server's resolved profile.
    pub profile: String,
    pub serve_only: Option<Vec<String>>,
    pub chat_timeout_ms: u64,
    pub idle_ms: u64,
    /// tai's secrets (`child_env::WITHHELD_NAMES` present in the server's environment, and
    /// the vault passphrase): never in the worker's environment.
    pub secrets: Vec<(String, String)>,
    /// The server's process id: a worker whose parent is another has lost its server.
    pub server_pid: u32,
}

impl Job {
    /// The job for `message` on `server`, answered in `era`.
    pub fn new(server: &McpServer, message: &Message, era: Era, session: Option<&str>) -> Job {
        Job {
            message: message.to_value(),
            modern: era == Era::Modern,
            session: session.map(str::to_string),
            profile: server.config.profile.clone(),
            serve_only: server.serve_only.clone(),
            chat_timeout_ms: u64::try_from(server.chat_timeout.as_millis()).unwrap_or(u64::MAX),
            idle_ms: u64::try_from(server.idle.as_millis()).unwrap_or(u64::MAX),
            secrets: server.secrets.clone(),
            server_pid: std::process::id(),
        }
    }
}

/// A worker under way.
pub struct Running<T> {
    /// Who waits for the answer (the transport's own mark: a connection, a request).
    pub tag: T,
    /// The request's id, its session and its conversation (for cancel and "busy").
    pub id: Id,
    pub session: Option<String>,
    pub conversation: Option<String>,
    child: Child,
    /// The server's end of the worker's stdin and stdout (`None` once the reply ended).
    channel: Option<UnixStream>,
    /// The job still to write (the write side is shut once it is all written).
    input: Vec<u8>,
    input_shut: bool,
    output: Vec<u8>,
    stderr: Option<ChildStderr>,
    errors: Vec<u8>,
    deadline: Instant,
}

/// The workers of one server.
pub struct Pool<T> {
    /// How many may run at once.
    pub cap: usize,
    running: Vec<Running<T>>,
    program: String,
    env: Vec<(String, String)>,
}

fn nonblocking(fd: impl AsFd) -> std::io::Result<()> {
    let flags = fcntl(fd.as_fd(), FcntlArg::F_GETFL).map_err(std::io::Error::from)?;
    let flags = OFlag::from_bits_truncate(flags) | OFlag::O_NONBLOCK;
    fcntl(fd.as_fd(), FcntlArg::F_SETFL(flags)).map_err(std::io::Error::from)?;
    Ok(())
}

/// Read what a non-blocking pipe has; `false` once it is closed (or broken).
fn drain(pipe: &mut impl Read, into: &mut Vec<u8>, cap: usize) -> bool {
    let mut buf = [0u8; 16 * 1024];
    loop {
        match pipe.read(&mut buf) {
            Ok(0) => return false,
            Ok(n) => {
                let room = cap.saturating_sub(into.len());
                into.extend_from_slice(&buf[..n.min(room)]);
            }
            Err(e) if e.kind() == ErrorKind::WouldBlock => return true,
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(_) => return false,
        }
    }
}

fn failure(id: &Id, message: String) -> Message {
    Message::Error {
        id: Some(id.clone()),
        error: ErrorObject::new(INTERNAL_ERROR, message),
    }
}

impl<T> Pool<T> {
    /// A pool of `cap` workers running this very program.
    pub fn new(cap: usize) -> std::io::Result<Pool<T>> {
        let program = std::env::current_exe()?.to_string_lossy().into_owned();
        let parent = crate::child_env::parent();
        Ok(Pool {
            cap: cap.max(1),
            running: Vec::new(),
            program,
            env: crate::child_env::for_worker(&parent),
        })
    }

    pub fn is_full(&self) -> bool {
        self.running.len() >= self.cap
    }

    /// Whether a worker for conversation `key` is under way.
    pub fn busy(&self, key: &str) -> bool {
        self.running
            .iter()
            .any(|r| r.conversation.as_deref() == Some(key))
    }

    /// The process ids of the workers under way.
    pub fn pids(&self) -> Vec<u32> {
        self.running.iter().map(|r| r.child.id()).collect()
    }

    /// Start a worker for `job`; `deadline` is the call's own (the margin is added here).
    pub fn start(
        &mut self,
        tag: T,
        job: &Job,
        id: Id,
        conversation: Option<String>,
        deadline: Instant,
    ) -> Result<(), String> {
        let input = serde_json::to_vec(job).map_err(|e| format!("encoding the job: {e}"))?;
        let args = [WORKER_ARG.to_string()];
        let (ours, theirs) =
            UnixStream::pair().map_err(|e| format!("cannot make a worker's socket: {e}"))?;
        let mut child = crate::child::start(&crate::child::Launch {
            program: &self.program,
            args: &args,
            env: &self.env,
            cwd: None,
            stdin: false,
            channel: Some(theirs.as_fd()),
        })
        .map_err(|e| format!("cannot start a worker ({}): {e}", self.program))?;
        drop(theirs);
        let stderr = child.stderr.take();
        let ready = [
            Some(ours.set_nonblocking(true)),
            stderr.as_ref().map(nonblocking),
        ];
        if ready.iter().any(|r| !matches!(r, Some(Ok(())))) {
            crate::child::stop(&mut child, Duration::ZERO);
            return Err("cannot set up a worker's pipes".into());
        }
        self.running.push(Running {
            tag,
            id,
            session: job.session.clone(),
            conversation,
            child,
            channel: Some(ours),
            input,
            input_shut: false,
            output: Vec::new(),
            stderr,
            errors: Vec::new(),
            deadline: deadline + DEADLINE_MARGIN,
        });
        Ok(())
    }

    /// Every pipe to watch, with what to watch it for.
    pub fn poll_fds(&self) -> Vec<(BorrowedFd<'_>, PollFlags)> {
        let mut fds = Vec::new();
        for r in &self.running {
            if let Some(c) = &r.channel {
                let out = if r.input_shut {
                    PollFlags::empty()
                } else {
                    PollFlags::POLLOUT
                };
                fds.push((c.as_fd(), PollFlags::POLLIN | out));
            }
            if let Some(e) = &r.stderr {
                fds.push((e.as_fd(), PollFlags::POLLIN));
            }
        }
        fds
    }

    /// Move every worker's bytes without blocking; the replies of workers that finished
    /// (or ran out of time) come out with their tags.
    pub fn pump(&mut self, now: Instant) -> Vec<(T, Message)> {
        let mut done = Vec::new();
        let mut i = 0;
        while i < self.running.len() {
            let r = &mut self.running[i];
            if let (Some(sock), false) = (&mut r.channel, r.input_shut) {
                match sock.write(&r.input) {
                    Ok(n) => {
                        r.input.drain(..n);
                    }
                    Err(e) if e.kind() == ErrorKind::WouldBlock => {}
                    Err(e) if e.kind() == ErrorKind::Interrupted => {}
                    Err(_) => r.input.clear(),
                }
                if r.input.is_empty() {
                    // The worker reads the job to its end.
                    let _ = sock.shutdown(Shutdown::Write);
                    r.input_shut = true;
                }
            }
            if let Some(pipe) = &mut r.stderr
                && !drain(pipe, &mut r.errors, MAX_STDERR)
            {
                r.stderr = None;
            }
            if let Some(sock) = &mut r.channel
                && !drain(sock, &mut r.output, MAX_REPLY + 1)
            {
                r.channel = None;
            }
            let finished = r.channel.is_none();
            if finished || now >= r.deadline {
                let mut r = self.running.swap_remove(i);
                let reply = if finished {
                    r.finish()
                } else {
                    crate::child::stop(&mut r.child, STOP_GRACE);
                    failure(
                        &r.id,
                        "the call ran past its deadline and its worker was ended".into(),
                    )
                };
                done.push((r.tag, reply));
                continue;
            }
            i += 1;
        }
        done
    }

    /// End the workers `which` selects (their clients left, cancelled, or their session
    /// was deleted) and everything they started; their tags and request ids come back.
    pub fn cancel(&mut self, which: impl Fn(&Running<T>) -> bool) -> Vec<(T, Id)> {
        let mut ended = Vec::new();
        let mut i = 0;
        while i < self.running.len() {
            if which(&self.running[i]) {
                let mut r = self.running.swap_remove(i);
                crate::child::stop(&mut r.child, STOP_GRACE);
                ended.push((r.tag, r.id));
            } else {
                i += 1;
            }
        }
        ended
    }

    /// End every worker (the server stops).
    pub fn stop_all(&mut self) {
        self.cancel(|_| true);
    }
}

impl<T> Running<T> {
    /// The worker closed its end of the socket: reap it and read its reply.
    fn finish(&mut self) -> Message {
        let exited = crate::child::wait_until(
            &mut self.child,
            crate::deadline::Deadline::after(STOP_GRACE),
            &|| false,
        );
        if exited.is_none() {
            crate::child::stop(&mut self.child, STOP_GRACE);
        }
        if let Some(e) = &mut self.stderr {
            drain(e, &mut self.errors, MAX_STDERR);
        }
        if !self.errors.is_empty() {
            eprintln!(
                "tai: worker {}: {}",
                self.child.id(),
                crate::sanitize::block(&String::from_utf8_lossy(&self.errors))
            );
        }
        if self.output.len() > MAX_REPLY {
            return failure(&self.id, "the worker's answer was too large".into());
        }
        match Message::parse(&self.output) {
            Ok(m @ (Message::Response { .. } | Message::Error { .. })) => m,
            _ => failure(
                &self.id,
                format!(
                    "the worker ended without an answer ({}); see the server's log",
                    exited.map_or("it was stopped".into(), |s| s.to_string())
                ),
            ),
        }
    }
}

/// `tai --serve-worker`: read one job on stdin, run it, write the reply on stdout.
pub fn run() -> i32 {
    // Ended by the server (cancelled, its client left, its session deleted): SIGTERM stops
    // the call as Ctrl-C would, so a `chat` turn stores its history and frees its
    // conversation's lease before the worker exits (SIGKILL follows after a grace).
    crate::sigint::install_with_term();
    // The worker ends with its server: a killed server's death sends it the same SIGTERM,
    // so the call stops, its command's processes are ended and what it detached (adopted
    // by this worker) with them; no call goes on running on its own. (SIGKILL here would
    // leave the call's own children behind: nobody would be left to end them.)
    let _ = nix::sys::prctl::set_pdeathsig(nix::sys::signal::Signal::SIGTERM);
    let server = std::os::unix::process::parent_id();
    let mut input = Vec::new();
    let read = std::io::stdin()
        .lock()
        .take(MAX_JOB as u64 + 1)
        .read_to_end(&mut input);
    let job: Job = match read.map_err(|e| e.to_string()).and_then(|_| {
        if input.len() > MAX_JOB {
            return Err("the job is too large".into());
        }
        serde_json::from_slice(&input).map_err(|e| e.to_string())
    }) {
        Ok(j) => j,
        Err(e) => {
            eprintln!("tai: worker: no job on stdin: {e}");
            return 2;
        }
    };
    if job.server_pid != server || std::os::unix::process::parent_id() != server {
        // The server died before the death signal was set: nobody waits for this call.
        eprintln!("tai: worker: the server is gone");
        return 2;
    }
    let code = serve_job(job);
    // What the call left running in the background (adopted by this worker, a subreaper)
    // ends with it: nothing a served call starts outlives its worker.
    crate::child::end_adopted(crate::deadline::Deadline::after(STOP_GRACE));
    code
}

/// Answer the job and write the reply on stdout; the worker's exit code.
fn serve_job(job: Job) -> i32 {
    let id = job
        .message
        .get("id")
        .and_then(Id::from_value)
        .unwrap_or(Id::Num(0));
    let reply = match answer(job) {
        Ok(Some(m)) => m,
        Ok(None) => return 0,
        Err(e) => failure(&id, e),
    };
    let mut out = std::io::stdout().lock();
    if out
        .write_all(&reply.to_bytes())
        .and_then(|_| out.flush())
        .is_err()
    {
        return 1;
    }
    0
}

/// Open the vault and the configuration as the server did, then answer the job's request.
fn answer(job: Job) -> Result<Option<Message>, String> {
    use crate::config::{self, FlagSettings, Paths};
    let secrets = job.secrets;
    let env = |name: &str| McpServer::env(&secrets, name);
    let paths = Paths::from_env(&env)?;
    let file = config::read_file(&paths.config).map_err(|e| format!("config error: {e}"))?;
    let mut store =
        crate::vault::Store::open(&paths.home.join("vault.db")).map_err(|e| e.to_string())?;
    for (name, var) in [
        ("api-key", "TAI_API_KEY"),
        ("server-key", "TAI_MCP_KEY"),
        ("vault-passphrase", "TAI_VAULT_PASSPHRASE"),
        ("github-token", "GITHUB_TOKEN"),
    ] {
        if let Some(value) = env(var) {
            store.remember(name, &value);
        }
    }
    if store.is_sealed().map_err(|e| e.to_string())? {
        let passphrase = env("TAI_VAULT_PASSPHRASE")
            .ok_or("the vault is sealed and the server gave its worker no passphrase")?;
        store.unlock(&passphrase).map_err(|e| e.to_string())?;
    }
    let current = store
        .meta_text("current_profile")
        .map_err(|e| e.to_string())?;
    let rows = store.profiles().map_err(|e| e.to_string())?;
    let flags = FlagSettings {
        profile: Some(job.profile),
        ..FlagSettings::default()
    };
    let config = config::resolve_with_profiles(
        &paths,
        file.as_ref(),
        &env,
        &flags,
        current.as_deref(),
        &rows,
    );
    let message = Message::from_value(job.message).map_err(|e| e.0)?;
    let mut server = McpServer::new(store, config);
    server.serve_only(job.serve_only);
    server.chat_timeout = Duration::from_millis(job.chat_timeout_ms);
    server.idle = Duration::from_millis(job.idle_ms);
    server.secrets = secrets.clone();
    let era = if job.modern { Era::Modern } else { Era::Legacy };
    Ok(server.handle(message, era, job.session.as_deref()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_job_round_trips_as_json() {
        let job = Job {
            message: serde_json::json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call"}),
            modern: true,
            session: Some("s".into()),
            profile: "default".into(),
            serve_only: None,
            chat_timeout_ms: 5,
            idle_ms: 6,
            secrets: vec![("TAI_API_KEY".into(), "k".into())],
            server_pid: 1,
        };
        let back: Job = serde_json::from_slice(&serde_json::to_vec(&job).unwrap()).unwrap();
        assert_eq!(
            (back.message, back.secrets, back.idle_ms),
            (job.message, job.secrets, 6)
        );
    }
}
