//! tai's one integration-test binary: the `tai` executable and the library, end to end.

mod agent;
mod agent_tools;
mod architecture;
mod bridge;
mod cli;
mod docs_contract;
mod habits;
mod hostile_servers;
mod intake;
mod interop;
mod interrupt;
mod mcp_client;
mod native_tools;
mod oauth;
mod resolver;
mod secrets;
mod serve_hostile;
mod serve_http;
mod serve_scale;
mod serve_workers;
mod server;
mod support;
mod trust;
mod vault;
