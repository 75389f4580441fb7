//! MCP: the contract's constants (caps, protocol eras, method table, agent tools) in one place.
//!
//! Everything else reads these names and numbers from here; `docs/mcp.md` names each of
//! them, and the docs-contract test fails when the two drift apart.

pub mod caps;
pub mod client;
pub mod era;
pub mod handshake;
pub mod http;
pub mod methods;
pub mod ndjson;
pub mod oauth;
pub mod protocol;
pub mod stdio;
pub mod transport;

/// The name tai gives itself as MCP client and as MCP server.
pub const IMPLEMENTATION_NAME: &str = "tai";

/// The seven agent tools that manage MCP servers (native tools, served too).
pub const AGENT_TOOLS: &[&str] = &[
    "mcp_add",
    "mcp_list",
    "mcp_enable",
    "mcp_disable",
    "mcp_remove",
    "mcp_tools",
    "mcp_call",
];

/// The two tools tai's MCP server offers beyond its native tools.
pub const SERVED_EXTRAS: &[&str] = &["chat", "completions"];
