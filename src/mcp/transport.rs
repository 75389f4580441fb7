//! What a transport does for `McpClient`: send one message, receive the next, by a deadline.

use crate::deadline::Deadline;
use crate::jsonrpc::Message;

use super::era::Era;

/// Why a transport could not deliver.
#[derive(Debug, Clone, PartialEq)]
pub enum TransportError {
    /// The deadline passed.
    Timeout,
    /// A person pressed Ctrl-C while waiting.
    Interrupted,
    /// The child process ended (stdio).
    Exited { status: String },
    /// The peer closed the stream.
    Closed(String),
    /// An HTTP status with no JSON-RPC error in its body.
    Http { status: u16, body: String },
    /// The legacy session is gone (HTTP 404 on a request that carried its id).
    SessionExpired,
    /// A body over `MCP_HTTP_MAX_BODY`.
    TooLarge(usize),
    /// Spawn, connect, DNS, TLS or I/O failures, with what failed.
    Io(String),
}

impl std::fmt::Display for TransportError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TransportError::Timeout => f.write_str("timed out"),
            TransportError::Interrupted => f.write_str("interrupted (Ctrl-C)"),
            TransportError::Exited { status } => write!(f, "the server process exited ({status})"),
            TransportError::Closed(what) => write!(f, "the server closed {what}"),
            TransportError::Http { status, body } if body.is_empty() => write!(f, "HTTP {status}"),
            TransportError::Http { status, body } => write!(f, "HTTP {status}: {body}"),
            TransportError::SessionExpired => {
                f.write_str("the server ended the MCP session (HTTP 404)")
            }
            TransportError::TooLarge(n) => write!(
                f,
                "a message of {n} bytes is over MCP_HTTP_MAX_BODY ({} bytes)",
                super::caps::MCP_HTTP_MAX_BODY
            ),
            TransportError::Io(m) => f.write_str(m),
        }
    }
}

pub type Result<T> = std::result::Result<T, TransportError>;

/// One connection to an MCP server, stdio or HTTP.
pub trait Transport {
    /// Send one message. Over HTTP a request opens the exchange `recv` then reads.
    fn send(&mut self, msg: &Message, deadline: Deadline) -> Result<()>;
    /// The next message from the server; `None` when the current exchange has no more
    /// (HTTP: the response stream ended).
    fn recv(&mut self, deadline: Deadline) -> Result<Option<Message>>;
    /// The era and version now in force (HTTP puts them in headers); `None` before a handshake.
    fn set_protocol(&mut self, _protocol: Option<(Era, String)>) {}
    /// Extra headers for the next request only (HTTP: `Mcp-Param-*`; stdio ignores them).
    fn set_request_headers(&mut self, _headers: Vec<(String, String)>) {}
    /// Abandon the exchange in flight (HTTP: close its stream, which cancels in 2026).
    fn abandon(&mut self) {}
    /// The end of the server's stderr, for error messages (stdio).
    fn stderr_tail(&self) -> String {
        String::new()
    }
    /// Lines on stdout that were not JSON-RPC and were skipped.
    fn skipped(&self) -> usize {
        0
    }
    /// Whether a request's answer can arrive on a later exchange (stdio), or only within
    /// its own (HTTP).
    fn is_stream(&self) -> bool;
    /// Shut down: stdio closes stdin, then SIGTERM, then SIGKILL, and reaps.
    fn close(&mut self);
    /// The OAuth authorizer (HTTP with the authorization flow), to read its new tokens.
    fn oauth(&mut self) -> Option<&mut super::oauth::OAuth> {
        None
    }
}
