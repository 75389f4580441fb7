//! MCP servers that make a client wait: a sequential HTTP server whose SSE answers stay
//! open until the client lets go (tai releases each stream once its response arrived).

use std::time::{Duration, Instant};

use serde_json::Value;

use crate::support::{HttpStub, Tai};

/// A single-threaded server that holds each SSE stream open: the handshake and a call
/// finish in under 2 s, in both eras.
#[test]
fn a_sequential_sse_server_is_not_kept_waiting() {
    let t = Tai::new("sse-hold");
    for era in ["legacy", "modern"] {
        let stub = HttpStub::start(&["--era", era, "--sse-hold"]);
        let t0 = Instant::now();
        let run = t.run(&[
            "mcp",
            "probe",
            &stub.url,
            "--json",
            "--call",
            "echo",
            "--args",
            r#"{"text":"held"}"#,
        ]);
        let took = t0.elapsed();
        let v: Value = serde_json::from_str(run.ok()).unwrap_or_else(|e| panic!("{e}: {run:?}"));
        assert!(v.to_string().contains("held"), "{era}: {v}");
        assert!(took < Duration::from_secs(2), "{era}: took {took:?}");
    }
}
