//! The two MCP protocol eras as one enum, negotiated once, and what each era implies.
//!
//! The rest of tai asks the era (`has_sessions`, `meta_in_every_request`, …) instead of
//! comparing it or its version strings: every protocol version string lives in this file.
//! [`of_request`] is the one decision of a served request's era from what a server sees.

use serde_json::Value;

use super::protocol::PROTOCOL_VERSION_KEY;

/// 2025-11-25: `initialize` opens a session (`Mcp-Session-Id` over HTTP).
pub const LEGACY_VERSION: &str = "2025-11-25";
/// 2026-07-28: stateless; version and capabilities ride in every request's `_meta`.
pub const MODERN_VERSION: &str = "2026-07-28";
/// Legacy versions tai accepts in an `initialize` answer (the tools wire is the same).
pub const LEGACY_VERSIONS: &[&str] = &[LEGACY_VERSION, "2025-06-18", "2025-03-26", "2024-11-05"];

/// Which wire a connection speaks. Chosen once per connection (client) or per
/// request (server); the rest of the code matches on it instead of comparing strings.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Era {
    /// `initialize` + sessions, protocol 2025-11-25.
    Legacy,
    /// Stateless, `server/discover`, protocol 2026-07-28.
    Modern,
}

impl Era {
    /// The protocol version string tai sends in this era.
    pub fn version(self) -> &'static str {
        match self {
            Era::Legacy => LEGACY_VERSION,
            Era::Modern => MODERN_VERSION,
        }
    }

    /// The era a version string belongs to. Versions are `YYYY-MM-DD`, so string order is
    /// date order: anything from 2026-07-28 on is modern, anything earlier legacy.
    pub fn of_version(version: &str) -> Era {
        if version >= MODERN_VERSION {
            Era::Modern
        } else {
            Era::Legacy
        }
    }

    /// The era's name for a person and for `--json`: `legacy` or `modern`.
    pub fn name(self) -> &'static str {
        match self {
            Era::Legacy => "legacy",
            Era::Modern => "modern",
        }
    }

    /// How the era talks, in a few words (`tai mcp probe`).
    pub fn summary(self) -> &'static str {
        match self {
            Era::Legacy => "legacy era: initialize + session",
            Era::Modern => "modern era: stateless",
        }
    }

    /// `initialize` opens a session; over HTTP it is named by `Mcp-Session-Id`, can expire
    /// and is opened again once.
    pub fn has_sessions(self) -> bool {
        self == Era::Legacy
    }

    /// Every request carries the protocol version, the client's capabilities and info in
    /// `params._meta`.
    pub fn meta_in_every_request(self) -> bool {
        self == Era::Modern
    }

    /// Over HTTP, a request names its method (and tool) in `Mcp-Method`/`Mcp-Name`, and a
    /// tool's `x-mcp-header` parameters are validated and mirrored into headers.
    pub fn routing_headers(self) -> bool {
        self == Era::Modern
    }

    /// A call in flight is cancelled by ending its exchange (closing the HTTP stream) rather
    /// than by `notifications/cancelled`: 2026 over HTTP, where a request is its own stream.
    pub fn cancels_by_closing_the_stream(self, over_http: bool) -> bool {
        self == Era::Modern && over_http
    }

    /// Results name their `resultType`, and a `tools/call` may answer `input_required` and
    /// continue in rounds.
    pub fn typed_results(self) -> bool {
        self == Era::Modern
    }

    /// A `tools/list` answer's `ttlMs` says how long the list may be kept.
    pub fn caches_tool_lists(self) -> bool {
        self == Era::Modern
    }

    /// An empty `nextCursor` ends a listing (2025 servers send one on the last page); in
    /// 2026 a cursor is opaque and only its absence ends.
    pub fn empty_cursor_ends_listing(self) -> bool {
        self == Era::Legacy
    }

    /// Liveness is `ping`; 2026 has no ping (`server/discover` serves instead).
    pub fn has_ping(self) -> bool {
        self == Era::Legacy
    }
}

/// The protocol version a message's `params._meta` claims (only 2026 messages carry one).
pub fn claimed_version(params: Option<&Value>) -> Option<&str> {
    params?.get("_meta")?.get(PROTOCOL_VERSION_KEY)?.as_str()
}

/// Why a served request has no era.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RequestEraError {
    /// `MCP-Protocol-Version` names a 2026 version but the body has no `_meta` version:
    /// answer 400 with JSON-RPC `INVALID_PARAMS`.
    ModernHeaderWithoutMeta,
}

/// The era of one served request, from what a server sees: the body's `params` and, over
/// HTTP, the `MCP-Protocol-Version` header (`None` on stdio). A `_meta` protocol version
/// makes it a 2026 request (the server then checks it is a version it speaks, and over HTTP
/// that the header equals it); without one it is a 2025 message (over HTTP, `initialize`
/// or one inside a session), unless the header claims 2026.
pub fn of_request(params: Option<&Value>, header: Option<&str>) -> Result<Era, RequestEraError> {
    of_claim(claimed_version(params), header)
}

/// [`of_request`] from the version the body's `_meta` claims (a server that read only
/// that much of the body asks this).
pub fn of_claim(claimed: Option<&str>, header: Option<&str>) -> Result<Era, RequestEraError> {
    match (claimed, header) {
        (Some(_), _) => Ok(Era::Modern),
        (None, Some(v)) if Era::of_version(v) == Era::Modern => {
            Err(RequestEraError::ModernHeaderWithoutMeta)
        }
        (None, _) => Ok(Era::Legacy),
    }
}

/// A per-server choice: probe, or pin one era and skip the probe.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum EraChoice {
    #[default]
    Auto,
    Pinned(Era),
}

impl EraChoice {
    /// Parse the `protocol` setting: `auto`, `2025-11-25` or `2026-07-28`.
    pub fn parse(text: &str) -> Option<EraChoice> {
        match text {
            "auto" => Some(EraChoice::Auto),
            LEGACY_VERSION => Some(EraChoice::Pinned(Era::Legacy)),
            MODERN_VERSION => Some(EraChoice::Pinned(Era::Modern)),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_map_to_eras() {
        for (v, era) in [
            ("2024-11-05", Era::Legacy),
            ("2025-06-18", Era::Legacy),
            ("2025-11-25", Era::Legacy),
            ("2026-07-28", Era::Modern),
            ("2027-01-01", Era::Modern),
        ] {
            assert_eq!(Era::of_version(v), era, "{v}");
        }
        assert_eq!(Era::Legacy.version(), "2025-11-25");
        assert_eq!(Era::Modern.version(), "2026-07-28");
    }

    #[test]
    fn protocol_setting_parses() {
        assert_eq!(EraChoice::parse("auto"), Some(EraChoice::Auto));
        assert_eq!(
            EraChoice::parse("2025-11-25"),
            Some(EraChoice::Pinned(Era::Legacy))
        );
        assert_eq!(
            EraChoice::parse("2026-07-28"),
            Some(EraChoice::Pinned(Era::Modern))
        );
        assert_eq!(EraChoice::parse("2024-11-05"), None);
        assert_eq!(EraChoice::parse(""), None);
    }

    #[test]
    fn capabilities_per_era() {
        // (era, sessions, _meta, routing headers, typed results, ttl cache, "" ends, ping)
        let table = [
            (Era::Legacy, true, false, false, false, false, true, true),
            (Era::Modern, false, true, true, true, true, false, false),
        ];
        for (era, sessions, meta, routing, typed, cache, empty_ends, ping) in table {
            assert_eq!(
                (
                    era.has_sessions(),
                    era.meta_in_every_request(),
                    era.routing_headers(),
                    era.typed_results(),
                    era.caches_tool_lists(),
                    era.empty_cursor_ends_listing(),
                    era.has_ping(),
                ),
                (sessions, meta, routing, typed, cache, empty_ends, ping),
                "{era:?}"
            );
        }
        for (era, http, closes) in [
            (Era::Legacy, false, false),
            (Era::Legacy, true, false),
            (Era::Modern, false, false),
            (Era::Modern, true, true),
        ] {
            assert_eq!(
                era.cancels_by_closing_the_stream(http),
                closes,
                "{era:?} {http}"
            );
        }
        assert_eq!(
            (Era::Legacy.name(), Era::Modern.name()),
            ("legacy", "modern")
        );
    }

    #[test]
    fn the_era_of_a_served_request() {
        use serde_json::json;
        let modern = json!({"_meta": {PROTOCOL_VERSION_KEY: "2026-07-28"}});
        let other = json!({"_meta": {PROTOCOL_VERSION_KEY: "2099-01-01"}});
        let plain = json!({"name": "x"});
        let bare_meta = json!({"_meta": {"progressToken": 1}});
        let modern_header_without_meta = Err(RequestEraError::ModernHeaderWithoutMeta);
        type Case<'a> = (
            Option<&'a Value>,
            Option<&'a str>,
            Result<Era, RequestEraError>,
        );
        let table: &[Case] = &[
            (Some(&modern), None, Ok(Era::Modern)),
            (Some(&modern), Some("2026-07-28"), Ok(Era::Modern)),
            // The body decides; a mismatching header is the server's header check.
            (Some(&modern), Some("2025-11-25"), Ok(Era::Modern)),
            (Some(&other), None, Ok(Era::Modern)),
            (Some(&plain), None, Ok(Era::Legacy)),
            (None, None, Ok(Era::Legacy)),
            (Some(&bare_meta), Some("2025-11-25"), Ok(Era::Legacy)),
            (Some(&plain), Some("2025-06-18"), Ok(Era::Legacy)),
            (
                Some(&plain),
                Some("2026-07-28"),
                modern_header_without_meta.clone(),
            ),
            (None, Some("2027-01-01"), modern_header_without_meta),
        ];
        for (params, header, want) in table {
            assert_eq!(of_request(*params, *header), *want, "{params:?} {header:?}");
        }
        assert_eq!(claimed_version(Some(&other)), Some("2099-01-01"));
        assert_eq!(claimed_version(Some(&bare_meta)), None);
    }
}
