//! The MCP servers tai knows: its server registry, the application above the protocol
//! layer (`crate::mcp`).
//!
//! Pasted text becomes entries in exactly one place (`normalize`), `${VAR}` references are
//! resolved by `expand`, `intake` registers an entry (consent, live verify, store),
//! `store` keeps the vault's MCP tables, `dispatch` rebuilds a stored server's spec
//! before it starts, `trust` keeps lasting trust, and `oauth_vault` keeps each server's
//! OAuth state as vault secrets.

pub mod dispatch;
pub mod editor_vars;
pub mod envfile;
pub mod expand;
pub mod intake;
pub mod listing;
pub mod normalize;
pub mod oauth_vault;
pub mod probe;
pub mod project;
pub mod server_options;
pub mod store;
pub mod trust;
