//! The `MCP_*` caps of the contract by name: each value lives in `crate::limits` (the one
//! table of every limit) and is re-exported here beside `ALL`, the contract's own list.

pub use crate::limits::{
    MCP_CALL_TIMEOUT, MCP_CHAT_TIMEOUT, MCP_CONNECT_TIMEOUT, MCP_DEFAULT_PORT, MCP_HTTP_MAX_BODY,
    MCP_MAX_SERVERS, MCP_MAX_TOOLS, MCP_RESULT_MAX, MCP_SESSION_IDLE, MCP_TIMEOUT_MAX,
};

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
