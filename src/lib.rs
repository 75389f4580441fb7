//! tai: a terminal AI agent whose heart is a complete MCP layer in both directions.
//!
//! Reading order, with what each module owns:
//!
//! - [`cli`]: argv → `RawArgs` (no I/O) → `Config` → one command; exit codes.
//! - [`config`]: the config file, the environment and the flags resolved into `Config`.
//! - [`vault`]: the SQLite store — schema and migrations, secrets and the seal,
//!   redaction, spilled records, the hash-chained audit trail, profiles.
//! - [`mcp`]: the MCP contract's constants — caps, the two protocol eras, the wire table.
//! - [`resolver`]: a GitHub URL → one server entry (verified live by the intake), with its evidence.
//! - [`child_env`]: the one place a child process's environment is built (no tai secrets).
//! - [`bridge`]: MCP servers' tools in the agent, and [`bridge::gate`], the one trust gate
//!   every tool call passes (resolve → policy → approval → call → redact → spill → audit).
//! - [`sanitize`]: the one sanitizer for untrusted text shown to a person.
//! - [`term`]: the controlling terminal (hidden input).
//! - [`entropy`]: random bytes for nonces, salts and ids.
//!
//! Invariants (see docs/ARCHITECTURE.md): no threads, every wait has a deadline, pure
//! protocol cores with few I/O owners, nothing lost and no secret leaked.

pub mod agent;
pub mod approval;
pub mod base64;
pub mod bridge;
pub mod chat;
pub mod child;
pub mod child_env;
pub mod cli;
pub mod clock;
pub mod config;
pub mod entropy;
pub mod http;
pub mod jsonrpc;
pub mod mcp;
pub mod resolver;
pub mod sanitize;
pub mod server;
pub mod sigint;
pub mod term;
pub mod tools;
pub mod vault;
