//! tai: a terminal AI agent whose heart is a complete MCP layer in both directions.
//!
//! The modules, top layer first (docs/ARCHITECTURE.md draws the layers; a module imports
//! only lower layers, checked by `tests/it/architecture.rs`):
//!
//! - [`cli`]: argv → `RawArgs` (no I/O) → `Config` → one command; exit codes; the REPL.
//! - [`server`]: tai as an MCP server over stdio and HTTP, both eras.
//! - [`agent`]: the turn loop (select → stream → each call through the gate → repeat).
//! - [`bridge`]: MCP servers' tools in the agent, and [`bridge::gate`], the one trust gate
//!   every tool call passes (resolve → policy → approval → call → redact → spill → audit).
//! - [`tools`]: the native tools; [`chat`]: the OpenAI-compatible chat client.
//! - [`config`]: the config file, the environment and the flags resolved into `Config`.
//! - [`resolver`]: a GitHub URL → one server entry (verified live by the intake), with its evidence.
//! - [`mcp_servers`]: tai's server registry — the one parser of pasted text, `${VAR}`,
//!   intake, the vault's MCP tables, drift, trust, OAuth state in the vault.
//! - [`mcp`]: the MCP protocol only — eras, methods, envelopes, handshake, framing,
//!   transports, the client, the OAuth protocol; it imports nothing of the application.
//! - [`vault`]: the SQLite store — schema and migrations, secrets and the seal,
//!   redaction, spilled records, the hash-chained audit trail (typed
//!   outcomes), conversations, profiles; one file per concern.
//! - [`approval`]: the approval mode and policy; "always" remembered by key.
//! - Leaves, used by anyone: [`base64`], [`child`] (a child process's life), [`child_env`]
//!   (its environment, without tai's secrets), [`clock`], [`deadline`] (the one deadline type every wait takes), [`entropy`], [`html_text`],
//!   [`http`] (the thread-free agent, SSE), [`jsonc`], [`jsonrpc`], [`limits`] (every time and size limit, one named constant each), [`sanitize`] (the one
//!   sanitizer for untrusted text shown to a person), [`shell_words`], [`sigint`] (Ctrl-C
//!   and stop deadlines), [`term`] (the controlling terminal).
//!
//! Invariants (see docs/ARCHITECTURE.md): no threads, every wait has a deadline, pure
//! protocol cores with few I/O owners, nothing lost and no secret leaked.

// A panic is never how tai reports a failure: outside tests, `unwrap`/`expect` do not compile
// (clippy runs with `-D warnings` in tests/run).
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

pub(crate) mod agent;
pub(crate) mod approval;
pub(crate) mod base64;
pub(crate) mod bridge;
pub(crate) mod chat;
pub(crate) mod child;
pub(crate) mod child_env;
pub(crate) mod cli;
pub(crate) mod clock;
pub(crate) mod config;
pub(crate) mod deadline;
pub(crate) mod entropy;
pub(crate) mod html_text;
pub(crate) mod http;
pub(crate) mod jsonc;
pub(crate) mod jsonrpc;
pub(crate) mod limits;
pub(crate) mod mcp;
pub(crate) mod mcp_servers;
pub(crate) mod regular_file;
pub(crate) mod resolver;
pub(crate) mod sanitize;
pub(crate) mod server;
pub(crate) mod shell_words;
pub(crate) mod sigint;
pub(crate) mod term;
pub(crate) mod tools;
pub(crate) mod vault;

pub use cli::run;

/// What the integration tests, the benchmarks and the fuzz targets drive directly.
///
/// Every module above is `pub(crate)`, so the compiler reports code nothing uses; this
/// surface names, item by item, what is reached from outside the crate. Not a stable API.
#[doc(hidden)]
pub mod testing {
    pub mod approval {
        pub use crate::approval::{ApprovalKey, Approver, Remembered};
    }
    pub mod bridge {
        pub use crate::bridge::{Bridge, approve, gate};
    }
    pub mod chat {
        pub use crate::chat::ChatClient;
    }
    pub mod cli {
        pub mod args {
            pub use crate::cli::args::KNOWN_LONG;
        }
    }
    pub mod config {
        pub use crate::config::{FlagSettings, Paths, resolve};
    }
    pub mod entropy {
        pub use crate::entropy::hex;
    }
    pub mod http {
        pub use crate::http::sse;
    }
    pub mod jsonrpc {
        pub use crate::jsonrpc::Message;
    }
    pub mod mcp {
        pub use crate::mcp::{AGENT_TOOLS, SERVED_EXTRAS, caps, client, era, methods, ndjson};
        pub use crate::mcp::{http, stdio};
    }
    pub mod mcp_servers {
        pub use crate::mcp_servers::{expand, intake, normalize, store};
    }
    pub mod server {
        pub use crate::server::{McpServer, http};
    }
    pub mod tools {
        pub use crate::bridge::gate::dispatch;
        pub use crate::tools::{ToolContext, ToolOutput, all, mcp_admin, select};
    }
    pub mod vault {
        pub use crate::vault::{Error, Store, audit, redact, schema, seal};
    }
}
