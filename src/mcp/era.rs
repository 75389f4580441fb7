//! The two MCP protocol eras as one enum, negotiated once and then matched on.

/// 2025-11-25: `initialize` opens a session (`Mcp-Session-Id` over HTTP).
pub const LEGACY_VERSION: &str = "2025-11-25";
/// 2026-07-28: stateless; version and capabilities ride in every request's `_meta`.
pub const MODERN_VERSION: &str = "2026-07-28";

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
}
