//! Per-server options kept with a stored entry beside the contract's columns (in `meta`
//! as `mcp.options.NAME`): connect and call timeouts, a VS Code `envFile`, and the project
//! a server was imported from.
//!
//! Timeouts default to the caps (`MCP_CONNECT_TIMEOUT`, `MCP_CALL_TIMEOUT`) and are
//! bounded by `MCP_TIMEOUT_MAX`: a larger value is clamped with a note.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::mcp::caps::MCP_TIMEOUT_MAX;
use crate::mcp::client::Timeouts;

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ServerOptions {
    /// Spawn or dial plus handshake, in milliseconds (`None`: `MCP_CONNECT_TIMEOUT`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub connect_timeout_ms: Option<u64>,
    /// One `tools/call`, in milliseconds (`None`: `MCP_CALL_TIMEOUT`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub call_timeout_ms: Option<u64>,
    /// A dotenv file read at every start (its variables under the entry's own `env`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub env_file: Option<String>,
    /// The project root a project-scoped config came from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub project: Option<String>,
}

impl ServerOptions {
    pub fn is_default(&self) -> bool {
        *self == ServerOptions::default()
    }

    /// `base` with this entry's timeouts in place of the defaults.
    pub fn timeouts(&self, base: Timeouts) -> Timeouts {
        Timeouts {
            connect: self
                .connect_timeout_ms
                .map_or(base.connect, Duration::from_millis),
            call: self
                .call_timeout_ms
                .map_or(base.call, Duration::from_millis),
            probe: base.probe,
        }
    }
}

/// A timeout in milliseconds, bounded by `MCP_TIMEOUT_MAX`; `Err` says it was clamped.
pub fn bounded_ms(ms: u64) -> Result<u64, u64> {
    let max = MCP_TIMEOUT_MAX.as_millis() as u64;
    if ms > max { Err(max) } else { Ok(ms) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timeouts_fall_back_to_the_defaults() {
        let base = Timeouts::default();
        let same = ServerOptions::default().timeouts(base);
        assert_eq!((same.connect, same.call), (base.connect, base.call));
        let o = ServerOptions {
            connect_timeout_ms: Some(40_000),
            ..ServerOptions::default()
        };
        let t = o.timeouts(base);
        assert_eq!((t.connect, t.call), (Duration::from_secs(40), base.call));
        assert_eq!(bounded_ms(600_000), Ok(600_000));
        assert_eq!(bounded_ms(600_001), Err(600_000));
    }

    #[test]
    fn stored_form_omits_what_is_unset() {
        let o = ServerOptions {
            call_timeout_ms: Some(5),
            ..ServerOptions::default()
        };
        let text = serde_json::to_string(&o).unwrap();
        assert_eq!(text, r#"{"callTimeoutMs":5}"#);
        assert_eq!(serde_json::from_str::<ServerOptions>(&text).unwrap(), o);
        assert_eq!(
            serde_json::from_str::<ServerOptions>("{}").unwrap(),
            ServerOptions::default()
        );
    }
}
