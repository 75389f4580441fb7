//! The `MCP_*` caps of the contract: every limit on time and size, with its one value.

use std::time::Duration;

/// Spawn (or dial) plus handshake, per server.
pub const MCP_CONNECT_TIMEOUT: Duration = Duration::from_secs(20);
/// One `tools/call`; then a cancel notification and a local failure.
pub const MCP_CALL_TIMEOUT: Duration = Duration::from_secs(60);
/// Tool result text kept inline; a larger result spills whole to a vault record.
pub const MCP_RESULT_MAX: usize = 64 * 1024;
/// Largest request or response body on either HTTP leg.
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

/// Every cap by its contract name, for the docs-contract check and `--help` texts.
pub const ALL: &[(&str, &str)] = &[
    ("MCP_CONNECT_TIMEOUT", "20s"),
    ("MCP_CALL_TIMEOUT", "60s"),
    ("MCP_RESULT_MAX", "64KB"),
    ("MCP_HTTP_MAX_BODY", "10MB"),
    ("MCP_MAX_SERVERS", "32"),
    ("MCP_MAX_TOOLS", "100"),
    ("MCP_SESSION_IDLE", "3600s"),
    ("MCP_CHAT_TIMEOUT", "600s"),
    ("MCP_TIMEOUT_MAX", "600s"),
    ("MCP_DEFAULT_PORT", "8765"),
];

#[cfg(test)]
mod tests {
    use super::*;

    /// The table and the constants must say the same thing.
    #[test]
    fn table_matches_constants() {
        let shown = |name: &str| ALL.iter().find(|(n, _)| *n == name).map(|(_, v)| *v);
        assert_eq!(
            shown("MCP_CONNECT_TIMEOUT"),
            Some(format!("{}s", MCP_CONNECT_TIMEOUT.as_secs()).as_str())
        );
        assert_eq!(
            shown("MCP_CALL_TIMEOUT"),
            Some(format!("{}s", MCP_CALL_TIMEOUT.as_secs()).as_str())
        );
        assert_eq!(
            shown("MCP_RESULT_MAX"),
            Some(format!("{}KB", MCP_RESULT_MAX / 1024).as_str())
        );
        assert_eq!(
            shown("MCP_HTTP_MAX_BODY"),
            Some(format!("{}MB", MCP_HTTP_MAX_BODY >> 20).as_str())
        );
        assert_eq!(
            shown("MCP_MAX_SERVERS"),
            Some(MCP_MAX_SERVERS.to_string().as_str())
        );
        assert_eq!(
            shown("MCP_MAX_TOOLS"),
            Some(MCP_MAX_TOOLS.to_string().as_str())
        );
        assert_eq!(
            shown("MCP_SESSION_IDLE"),
            Some(format!("{}s", MCP_SESSION_IDLE.as_secs()).as_str())
        );
        assert_eq!(
            shown("MCP_CHAT_TIMEOUT"),
            Some(format!("{}s", MCP_CHAT_TIMEOUT.as_secs()).as_str())
        );
        assert_eq!(
            shown("MCP_DEFAULT_PORT"),
            Some(MCP_DEFAULT_PORT.to_string().as_str())
        );
        assert_eq!(
            shown("MCP_TIMEOUT_MAX"),
            Some(format!("{}s", MCP_TIMEOUT_MAX.as_secs()).as_str())
        );
        assert_eq!(ALL.len(), 10);
    }
}
