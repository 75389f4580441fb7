//! HTTP plumbing with no MCP knowledge: the ureq agent (thread-free), the SSE parser.

pub mod agent;
pub mod sse;
