//! The MCP protocol, as its own layer: it imports nothing of tai's application (no vault,
//! approval, config, registry, resolver, bridge, tools, server or CLI), only leaves.
//!
//! - `caps`: the contract's MCP_* caps; `methods`: every method and notification name;
//!   `era`: the two eras, what each implies, every version string, a request's era.
//! - `protocol`: the typed method table, tools, results, `_meta`, `x-mcp-header`.
//! - `handshake`: probe-answer classification and initialize checks (pure).
//! - `ndjson`: stdio line framing; `transport`: the Transport trait; `stdio` and `http`:
//!   the two transports (`http` also holds the header value codecs).
//! - `client`: McpClient — connect, negotiate the era, list, call, cancel.
//! - `oauth`: the MCP authorization flow (challenges, discovery, documents, PKCE, the flow).
//!
//! `docs/mcp.md` names the caps and methods; the docs-contract test fails when the two
//! drift apart. tai's registry of servers is `crate::mcp_servers`, one layer up.

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
