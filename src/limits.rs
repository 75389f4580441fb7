//! Every time and size limit in tai, each with its one value and why (like ureq's
//! `timings.rs`). A wait takes its [`crate::deadline::Deadline`] from one of these; a read,
//! a buffer or a loop is capped by one of these. Nothing else in `src/` spells a limit as a
//! literal (tests keep their own).
//!
//! The `MCP_*` constants are the contract's caps (docs/mcp.md names them; `mcp::caps`
//! re-exports them beside their contract table). The rest are tai's own, grouped by the
//! part that waits or reads.

use std::time::Duration;

// ---- The MCP contract's caps ---------------------------------------------------------------

/// Spawn (or dial) plus handshake, per server.
pub const MCP_CONNECT_TIMEOUT: Duration = Duration::from_secs(20);
/// One `tools/call`; then a cancel notification and a local failure.
pub const MCP_CALL_TIMEOUT: Duration = Duration::from_secs(60);
/// Tool result text kept inline; a larger result spills whole to a vault record.
pub const MCP_RESULT_MAX: usize = 64 * 1024;
/// Largest request or response body on either HTTP leg (and one stdio line).
pub const MCP_HTTP_MAX_BODY: usize = 10 * 1024 * 1024;
/// Registered servers; the 33rd registration is refused.
pub const MCP_MAX_SERVERS: usize = 32;
/// Tools bridged per server; extras are listed but not offered.
pub const MCP_MAX_TOOLS: usize = 100;
/// Idle server-side MCP sessions are dropped after this long.
pub const MCP_SESSION_IDLE: Duration = Duration::from_secs(3600);
/// Deadline for one served `chat` turn.
pub const MCP_CHAT_TIMEOUT: Duration = Duration::from_secs(600);
/// The longest per-server connect or call timeout a server entry may set (flags,
/// `startup_timeout_sec`, `tool_timeout_sec`, `timeout` in imports); larger is clamped.
pub const MCP_TIMEOUT_MAX: Duration = Duration::from_secs(600);
/// Default port of `tai --serve-mcp`.
pub const MCP_DEFAULT_PORT: u16 = 8765;

// ---- tai's MCP client ----------------------------------------------------------------------

/// How long a stdio server may stay silent on the 2026 `server/discover` probe: an older
/// server may ignore it, so a silence falls back to `initialize` within `MCP_CONNECT_TIMEOUT`.
pub const MCP_PROBE_TIMEOUT: Duration = Duration::from_secs(10);
/// Answering a server's own request mid-call (a ping, or the refusal of what tai does not
/// offer): a server that does not read its input must not hold the call past this.
pub const MCP_REPLY_TIMEOUT: Duration = Duration::from_secs(5);
/// Sending `notifications/cancelled` after a call timed out or was interrupted: best effort,
/// so the person is not kept waiting on a server that stopped reading.
pub const MCP_CANCEL_TIMEOUT: Duration = Duration::from_secs(2);
/// Rounds of `input_required` one tool call may go through (SEP-2322; a loop guard).
pub const MCP_MAX_INPUT_ROUNDS: usize = 4;
/// Pages of a cursor-paged listing read at most (a server that never ends its cursor).
pub const MCP_MAX_LIST_PAGES: usize = 1000;
/// How often a wait on a stdio server looks at the Ctrl-C flag (also the HTTP agent's read
/// slice): the most a Ctrl-C waits to be seen.
pub const INTERRUPT_CHECK: Duration = Duration::from_millis(100);
/// Each shutdown step of a stdio server (stdin closed, then SIGTERM): a well-behaved server
/// exits well within it; then SIGKILL.
pub const STDIO_SHUTDOWN_STEP: Duration = Duration::from_millis(1500);
/// A stdio server closed its stdout: how long its exit status is waited for, to say it.
pub const STDIO_EXIT_WAIT: Duration = Duration::from_millis(500);
/// How much of a stdio server's stderr is kept (the newest bytes), for error messages.
pub const STDIO_STDERR_KEEP: usize = 64 * 1024;
/// The most of an HTTP MCP server's error (or empty 202) body read: enough for a message.
pub const MCP_HTTP_ERROR_BODY_MAX: usize = 64 * 1024;
/// SSE resumptions (GET + `Last-Event-ID`) of one HTTP response before it is given up.
pub const MCP_HTTP_MAX_RESUMPTIONS: usize = 5;
/// The wait before an SSE resumption when the server sent no `retry:` field.
pub const MCP_HTTP_DEFAULT_RETRY: Duration = Duration::from_secs(1);

// ---- OAuth (the MCP authorization flow) ----------------------------------------------------

/// How long a person has to finish a login in the browser.
pub const OAUTH_LOGIN_TIMEOUT: Duration = Duration::from_secs(300);
/// `tai mcp login`'s connect: the login itself plus 30 s for the handshake after it.
pub const OAUTH_LOGIN_CONNECT: Duration = Duration::from_secs(OAUTH_LOGIN_TIMEOUT.as_secs() + 30);
/// Authorizations one request may trigger before tai gives up (step-up loops end here).
pub const OAUTH_MAX_AUTHORIZATIONS: usize = 3;
/// An access token is refreshed this long before it expires (or a tenth of its lifetime,
/// when that is shorter), so a call never starts with a token about to lapse.
pub const OAUTH_REFRESH_MARGIN_MS: i64 = 30_000;
/// The largest metadata, registration or token document read.
pub const OAUTH_MAX_DOC: u64 = 1 << 20;
/// How often the redirect wait looks at the Ctrl-C flag, the browser hook and the pasted line.
pub const OAUTH_REDIRECT_CHECK: Duration = Duration::from_millis(200);
/// Reading the browser's one request on the loopback listener (a client that connects and
/// says nothing must not hold the login).
pub const OAUTH_REDIRECT_READ: Duration = Duration::from_secs(5);
/// The largest head of the browser's redirect request read.
pub const OAUTH_REDIRECT_HEAD_MAX: usize = 16 * 1024;

// ---- Outbound HTTP (model, resolver, web_fetch) --------------------------------------------

/// TCP connect to any HTTP peer (model, registry, GitHub, a fetched page, OAuth endpoints).
pub const HTTP_CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// One model call from the terminal (`tai`, `tai -p`): long answers stream for minutes.
pub const MODEL_TIMEOUT: Duration = Duration::from_secs(300);
/// The longest a 429's `Retry-After` is honoured; a longer one fails the call.
pub const CHAT_MAX_RETRY_WAIT: Duration = Duration::from_secs(30);
/// Retries of a rate-limited (429) model call.
pub const CHAT_MAX_RETRIES: usize = 3;
/// The largest streamed model response read.
pub const CHAT_MAX_BODY: usize = 16 * 1024 * 1024;
/// The most of a failed model response read for its error message.
pub const CHAT_ERROR_BODY_MAX: u64 = 64 * 1024;
/// The resolver's whole GET (registry page, repository file, package).
pub const RESOLVER_TIMEOUT: Duration = Duration::from_secs(30);
/// The largest document the resolver reads (a registry page, README, manifest).
pub const RESOLVER_DOC_MAX: usize = 2 * 1024 * 1024;
/// The largest package the resolver downloads to check a `fileSha256`.
pub const RESOLVER_PACKAGE_MAX: usize = 64 * 1024 * 1024;
/// Pages read per registry query (100 servers each).
pub const RESOLVER_REGISTRY_PAGES: usize = 5;
/// `web_fetch`'s whole GET.
pub const WEB_FETCH_TIMEOUT: Duration = Duration::from_secs(30);
/// `web_fetch`'s default `max_bytes`.
pub const WEB_FETCH_DEFAULT_MAX: usize = 1024 * 1024;
/// The most `web_fetch`'s `max_bytes` may ask for.
pub const WEB_FETCH_HARD_MAX: usize = 10 * 1024 * 1024;

// ---- Children and the terminal -------------------------------------------------------------

/// How often a wait for a child's exit (or its family's) looks again.
pub const CHILD_REAP_CHECK: Duration = Duration::from_millis(10);
/// The `shell` tool's timeout when the model names none, in seconds.
pub const SHELL_DEFAULT_TIMEOUT_SECS: u64 = 120;
/// The longest `timeout` the model may give the `shell` tool, in seconds.
pub const SHELL_MAX_TIMEOUT_SECS: u64 = 600;
/// How often a running shell command's wait looks at the Ctrl-C flag.
pub const SHELL_INTERRUPT_CHECK: Duration = Duration::from_millis(250);
/// How long a stopped shell command has between SIGTERM and SIGKILL.
pub const SHELL_STOP_GRACE: Duration = Duration::from_millis(1000);
/// Output kept per stream of a shell command; the rest is counted and said.
pub const SHELL_OUTPUT_CAP: usize = 100 * 1024;
/// How often an approval question on the terminal looks at the Ctrl-C flag.
pub const APPROVAL_INTERRUPT_CHECK: Duration = Duration::from_millis(250);
/// Two Ctrl-C presses this close together end tai.
pub const QUIT_WINDOW: Duration = Duration::from_secs(2);
/// Text piped to `tai -p` kept (the rest is cut, and said).
pub const PIPED_MAX: usize = 128 * 1024;
/// How long `tai -p` waits for piped stdin to end before using what arrived.
pub const PIPED_WAIT: Duration = Duration::from_secs(30);
/// How often the piped-stdin wait looks at the Ctrl-C flag.
pub const PIPED_INTERRUPT_CHECK: Duration = Duration::from_millis(200);
/// What `record_get` returns of a spilled record when the model names no `limit` (bytes).
pub const RECORD_GET_DEFAULT_LIMIT: u64 = 32 * 1024;
/// How long a vault operation waits for another tai holding the database lock before it
/// fails (SQLite's busy timeout): a lock is an error after this, not a hang.
pub const VAULT_BUSY_TIMEOUT: Duration = Duration::from_secs(5);
/// How often a wait for the audit journal's lock (another tai appending) tries again.
pub const VAULT_LOCK_RETRY: Duration = Duration::from_millis(1);
/// The audit journal is folded into the vault's table once it holds this much (about a
/// thousand rows): a fold is one transaction, so this bounds both the journal and the
/// pause a fold adds to the call that triggers it.
pub const AUDIT_JOURNAL_FOLD_BYTES: u64 = 256 * 1024;
/// A journal larger than this was not written by tai (folds keep it near the size above):
/// it is damage, not read.
pub const AUDIT_JOURNAL_MAX_BYTES: u64 = 16 * 1024 * 1024;
/// Lines kept in the REPL's history file.
pub const HISTORY_MAX: usize = 1000;

// ---- Native file tools ---------------------------------------------------------------------

/// Lines `read_file` returns when the model names no limit.
pub const READ_LIMIT_DEFAULT: usize = 2000;
/// Matches `grep` returns at most.
pub const GREP_MAX_MATCHES: usize = 200;
/// Files a `glob` or `grep` walk visits at most.
pub const WALK_MAX_FILES: usize = 20_000;
/// Files larger than this are not searched or read whole.
pub const FILE_MAX: u64 = 10 * 1024 * 1024;

// ---- tai as an MCP server -------------------------------------------------------------------

/// The served side's defaults (`server::http::Limits`, tests shorten them through
/// `TAI_MCP_TEST_LIMITS`), its workers and the state it keeps in the vault.
pub mod serve {
    use std::time::Duration;

    /// A request must arrive whole within this.
    pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(10);
    /// An admitted keep-alive connection with nothing to do is closed after this.
    pub const IDLE_TIMEOUT: Duration = Duration::from_secs(60);
    /// A connection with no admitted request yet lives this long from its accept.
    pub const UNAUTHENTICATED_TIMEOUT: Duration = Duration::from_secs(5);
    /// Output waiting for a client that does not read: closed after this.
    pub const WRITE_TIMEOUT: Duration = Duration::from_secs(10);
    /// A `subscriptions/listen` stream with no event is ended after this.
    pub const LISTEN_IDLE: Duration = Duration::from_secs(600);
    /// A `:` comment on a listen stream this often (keeps proxies from closing it).
    pub const KEEPALIVE: Duration = Duration::from_secs(15);
    /// How long a refused or finished connection may still send (discarded) before it is
    /// closed, so the answer reaches the client instead of a reset; also the last write of a
    /// listen stream at shutdown.
    pub const CLOSE_GRACE: Duration = Duration::from_secs(1);
    /// Connections served at once.
    pub const MAX_CONNECTIONS: usize = 64;
    /// Connections not yet admitted hold at most this many slots (the oldest is evicted).
    pub const UNAUTHENTICATED_SLOTS: usize = 16;
    /// Connections from one address at most (its oldest unadmitted one is evicted first).
    pub const PER_PEER: usize = 32;
    /// No further request on a connection is read while this much output is unsent.
    pub const OUTBOX: usize = 1024 * 1024;
    /// A listen stream whose unsent output passes this is closed.
    pub const LISTEN_OUTBOX: usize = 64 * 1024;
    /// The largest request head read.
    pub const MAX_HEADER_BYTES: usize = 64 * 1024;
    /// Connections accepted per poll round: the earlier ones are read before more arrive.
    pub const ACCEPTS_PER_ROUND: usize = 16;
    /// `ttlMs` of a served list (2026 list caching): the lists change only with a restart.
    pub const LIST_TTL_MS: u64 = 3_600_000;
    /// Long calls running at once in worker processes unless `--serve-workers N` (or
    /// `serve_workers`) says otherwise; beyond it HTTP answers 503 + Retry-After.
    pub const WORKERS: usize = 4;
    /// A worker lives this much past its call's own deadline before it is ended.
    pub const WORKER_DEADLINE_MARGIN: Duration = Duration::from_secs(10);
    /// Between SIGTERM and SIGKILL when a worker is ended (its call was cancelled, its
    /// client left or its session was deleted).
    pub const WORKER_STOP_GRACE: Duration = Duration::from_millis(300);
    /// How long past the turn's own deadline a served `chat` lease on a conversation lasts:
    /// a worker that crashed mid-turn frees the handle by itself after this.
    pub const LEASE_MARGIN: Duration = Duration::from_secs(30);
    /// A session in use is re-confirmed in the vault (and marked seen there) at most this
    /// often: a session deleted through another server ends here within this.
    pub const SESSION_SYNC_EVERY: Duration = Duration::from_secs(30);
}

// ---- the HTTP client ------------------------------------------------------------------------

/// Write deadlines at least this long are rounded down to whole seconds, so the socket's
/// send timeout stays the same from one request to the next (not set again per request).
pub const STEADY_WRITE_TIMEOUT_FROM: Duration = Duration::from_secs(2);

// The orderings the code relies on, checked when tai is built, so a retuned value cannot
// break them silently.
const _: () = {
    let ms = Duration::as_millis;
    assert!(ms(&MCP_PROBE_TIMEOUT) < ms(&MCP_CONNECT_TIMEOUT));
    assert!(ms(&MCP_CONNECT_TIMEOUT) <= ms(&MCP_TIMEOUT_MAX));
    assert!(ms(&MCP_CALL_TIMEOUT) <= ms(&MCP_TIMEOUT_MAX));
    assert!(ms(&MCP_CANCEL_TIMEOUT) < ms(&MCP_CALL_TIMEOUT));
    assert!(ms(&MCP_REPLY_TIMEOUT) < ms(&MCP_CALL_TIMEOUT));
    assert!(2 * ms(&STDIO_SHUTDOWN_STEP) < ms(&MCP_CONNECT_TIMEOUT));
    assert!(ms(&OAUTH_LOGIN_CONNECT) > ms(&OAUTH_LOGIN_TIMEOUT));
    assert!(SHELL_DEFAULT_TIMEOUT_SECS <= SHELL_MAX_TIMEOUT_SECS);
    assert!(WEB_FETCH_DEFAULT_MAX <= WEB_FETCH_HARD_MAX);
    assert!(MCP_RESULT_MAX <= MCP_HTTP_MAX_BODY);
    assert!(serve::UNAUTHENTICATED_SLOTS <= serve::MAX_CONNECTIONS);
    assert!(serve::PER_PEER <= serve::MAX_CONNECTIONS);
    // A journal folds long before it could be mistaken for damage.
    assert!(4 * AUDIT_JOURNAL_FOLD_BYTES <= AUDIT_JOURNAL_MAX_BYTES);
    assert!(ms(&VAULT_LOCK_RETRY) < ms(&VAULT_BUSY_TIMEOUT));
    // Each Ctrl-C check is short enough to feel immediate.
    assert!(ms(&INTERRUPT_CHECK) <= 250);
    assert!(ms(&SHELL_INTERRUPT_CHECK) <= 250);
    assert!(ms(&APPROVAL_INTERRUPT_CHECK) <= 250);
    assert!(ms(&PIPED_INTERRUPT_CHECK) <= 250);
    assert!(ms(&OAUTH_REDIRECT_CHECK) <= 250);
};

#[cfg(test)]
mod tests {
    use std::path::Path;

    /// Every `.rs` file under `dir`, with its text up to its `#[cfg(test)]` (tests keep
    /// their own literals).
    fn sources(dir: &Path, out: &mut Vec<(String, String)>) {
        let mut entries: Vec<_> = std::fs::read_dir(dir).unwrap().flatten().collect();
        entries.sort_by_key(|e| e.path());
        for e in entries {
            let path = e.path();
            if path.is_dir() {
                sources(&path, out);
            } else if path.extension().is_some_and(|x| x == "rs") {
                let text = std::fs::read_to_string(&path).unwrap();
                let code = text.split("#[cfg(test)]").next().unwrap_or("").to_string();
                out.push((path.display().to_string(), code));
            }
        }
    }

    /// A literal wait outside this file: `Duration::from_secs(10)`, `PollTimeout::from(250)`.
    fn literal_waits(code: &str) -> Vec<String> {
        let literal = regex_lite::Regex::new(
            r"(Duration::from_(secs|millis|micros|nanos|secs_f64)|PollTimeout::from)\(\s*[0-9]",
        )
        .unwrap();
        code.lines()
            .filter(|l| !l.trim_start().starts_with("//") && literal.is_match(l))
            .map(|l| l.trim().to_string())
            .collect()
    }

    #[test]
    fn the_scan_finds_literal_waits_and_passes_named_ones() {
        let table = [
            ("let d = Duration::from_secs(10);", 1),
            ("poll(&mut fds, PollTimeout::from(250u16))", 1),
            ("Duration::from_millis( 5)", 1),
            ("Duration::from_millis(ms)", 0),
            ("Duration::from_secs(retry_after.unwrap_or(1))", 0),
            ("// Duration::from_secs(3) in a comment", 0),
            ("deadline.within(INTERRUPT_CHECK)", 0),
        ];
        for (code, n) in table {
            assert_eq!(literal_waits(code).len(), n, "{code}");
        }
    }

    /// Every time limit is named here: no other file in src/ spells one as a literal.
    #[test]
    fn no_literal_waits_outside_limits() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let mut files = Vec::new();
        sources(&root, &mut files);
        assert!(files.len() > 50, "{} files", files.len());
        let mut found = Vec::new();
        for (path, code) in &files {
            let own = ["limits.rs", "deadline.rs"]
                .iter()
                .any(|f| path.ends_with(f));
            if own {
                continue;
            }
            for line in literal_waits(code) {
                found.push(format!("{path}: {line}"));
            }
        }
        assert!(
            found.is_empty(),
            "name these in src/limits.rs:\n{}",
            found.join("\n")
        );
    }
}
