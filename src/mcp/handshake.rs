//! The era handshake as pure decisions: how a `server/discover` probe's answer is
//! classified, and whether an `initialize` result is acceptable (mcp-wire.md §4.2).

use serde_json::Value;

use super::era::{Era, LEGACY_VERSION, LEGACY_VERSIONS, MODERN_VERSION};
use super::protocol::{DiscoverResult, InitializeResult};
use crate::jsonrpc::{ErrorObject, code};

/// What came back from the probe.
#[derive(Debug)]
pub enum ProbeReply {
    /// A JSON-RPC result.
    Result(Value),
    /// A JSON-RPC error (over HTTP: in any status, when the body held one).
    RpcError(ErrorObject),
    /// An HTTP status with no JSON-RPC error in the body.
    HttpStatus(u16),
    /// stdio: the child exited, closed stdout, or stayed silent until the probe timeout.
    Silent,
}

/// What to do next.
#[derive(Debug, PartialEq)]
pub enum ProbeVerdict {
    /// The server speaks 2026-07-28.
    Modern,
    /// The server rejected our version but named one we speak: probe once more.
    Reprobe,
    /// Fall back to `initialize`.
    Legacy,
    /// Stop: this is an error, not evidence of an era.
    Fail(String),
}

/// Classify the probe's reply. Only a discover result sharing our modern version, or a
/// -32022 naming it, counts as modern; auth failures and 5xx are errors, not "legacy".
pub fn classify(reply: &ProbeReply) -> ProbeVerdict {
    match reply {
        ProbeReply::Result(v) => match serde_json::from_value::<DiscoverResult>(v.clone()) {
            Ok(d) if d.supported_versions.iter().any(|s| s == MODERN_VERSION) => {
                ProbeVerdict::Modern
            }
            _ => ProbeVerdict::Legacy,
        },
        ProbeReply::RpcError(e) if e.code == code::UNSUPPORTED_PROTOCOL_VERSION => {
            let supported: Vec<&str> = e
                .data
                .as_ref()
                .and_then(|d| d.get("supported"))
                .and_then(Value::as_array)
                .map(|a| a.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            if supported.contains(&MODERN_VERSION) {
                ProbeVerdict::Reprobe
            } else if supported.is_empty()
                || supported.iter().any(|v| Era::of_version(v) == Era::Legacy)
            {
                ProbeVerdict::Legacy
            } else {
                ProbeVerdict::Fail(format!(
                    "the server speaks only {} and tai speaks {MODERN_VERSION} or {LEGACY_VERSION}",
                    supported.join(", ")
                ))
            }
        }
        ProbeReply::RpcError(_) => ProbeVerdict::Legacy,
        ProbeReply::HttpStatus(s @ (401 | 403)) => ProbeVerdict::Fail(format!(
            "HTTP {s}: the server refused the credentials (check the stored headers, e.g. Authorization)"
        )),
        ProbeReply::HttpStatus(s) if *s >= 500 => {
            ProbeVerdict::Fail(format!("HTTP {s}: the server failed"))
        }
        ProbeReply::HttpStatus(_) => ProbeVerdict::Legacy,
        ProbeReply::Silent => ProbeVerdict::Legacy,
    }
}

/// Check an `initialize` result: a version tai speaks, and `capabilities.tools`.
pub fn check_initialize(r: &InitializeResult) -> Result<(), String> {
    if !LEGACY_VERSIONS.contains(&r.protocol_version.as_str()) {
        return Err(format!(
            "the server answered initialize with protocol version {:?}, which tai does not speak ({})",
            r.protocol_version,
            LEGACY_VERSIONS.join(", ")
        ));
    }
    if !r.capabilities.contains_key("tools") {
        return Err("the server does not offer tools (capabilities.tools is missing)".into());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn err(code: i64, data: Value) -> ProbeReply {
        ProbeReply::RpcError(ErrorObject::new(code, "x").with_data(data))
    }

    #[test]
    fn probe_classification_table() {
        use ProbeVerdict::*;
        let table: Vec<(ProbeReply, ProbeVerdict)> = vec![
            (
                ProbeReply::Result(
                    json!({"supportedVersions": ["2026-07-28"], "capabilities": {"tools": {}}}),
                ),
                Modern,
            ),
            (
                ProbeReply::Result(json!({"supportedVersions": ["2026-07-28", "2025-11-25"]})),
                Modern,
            ),
            // a stateful go-sdk server lists only legacy versions
            (
                ProbeReply::Result(json!({"supportedVersions": ["2025-11-25"]})),
                Legacy,
            ),
            (ProbeReply::Result(json!({"unexpected": true})), Legacy),
            (ProbeReply::Result(json!("not even an object")), Legacy),
            (
                err(
                    -32022,
                    json!({"supported": ["2026-07-28", "2025-11-25"], "requested": "2027-01-01"}),
                ),
                Reprobe,
            ),
            (err(-32022, json!({"supported": ["2025-06-18"]})), Legacy),
            (err(-32022, json!({})), Legacy),
            (err(-32601, json!(null)), Legacy),
            (err(-32602, json!(null)), Legacy),
            (err(-32000, json!(null)), Legacy),
            // pre-GA and look-alike codes are not proof of a modern server
            (err(-32001, json!(null)), Legacy),
            (err(-32020, json!(null)), Legacy),
            (err(-32021, json!(null)), Legacy),
            (ProbeReply::HttpStatus(400), Legacy),
            (ProbeReply::HttpStatus(404), Legacy),
            (ProbeReply::HttpStatus(405), Legacy),
            (ProbeReply::HttpStatus(406), Legacy),
            (ProbeReply::Silent, Legacy),
        ];
        for (reply, want) in table {
            assert_eq!(classify(&reply), want, "{reply:?}");
        }
        let fails = [
            ProbeReply::HttpStatus(401),
            ProbeReply::HttpStatus(403),
            ProbeReply::HttpStatus(500),
            ProbeReply::HttpStatus(503),
            err(-32022, json!({"supported": ["2027-03-01"]})),
        ];
        for reply in fails {
            assert!(
                matches!(classify(&reply), ProbeVerdict::Fail(_)),
                "{reply:?}"
            );
        }
    }

    #[test]
    fn initialize_results() {
        let ok = |v: Value| check_initialize(&serde_json::from_value(v).unwrap());
        assert!(
            ok(json!({"protocolVersion": "2025-11-25", "capabilities": {"tools": {}}})).is_ok()
        );
        assert!(ok(json!({"protocolVersion": "2025-06-18", "capabilities": {"tools": {"listChanged": true}}})).is_ok());
        assert!(
            ok(json!({"protocolVersion": "2025-11-25", "capabilities": {}}))
                .unwrap_err()
                .contains("capabilities.tools")
        );
        assert!(
            ok(json!({"protocolVersion": "1999-01-01", "capabilities": {"tools": {}}}))
                .unwrap_err()
                .contains("1999")
        );
        assert!(
            serde_json::from_value::<InitializeResult>(json!({"capabilities": {}})).is_err(),
            "a version is required"
        );
    }
}
