//! The `annotations` tai's served tools carry, derived from each tool's nature, so a host
//! can tell reads from writes (pure): `readOnlyHint`, `destructiveHint`,
//! `idempotentHint`, `openWorldHint`.

use serde_json::{Value, json};

/// What a tool does, for its hints.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Nature {
    /// Reads local state only.
    Read,
    /// Reads the world beyond this machine (the web, a model).
    ReadWorld,
    /// Changes local files or tai's state; running it again gives the same state.
    WriteIdempotent,
    /// Changes local files or tai's state in a way that may destroy or differ per run.
    Write,
    /// Runs arbitrary things: a shell command, another server's tool, an agent turn.
    RunAnything,
}

fn nature(name: &str, safe: bool) -> Nature {
    match name {
        "shell" | "mcp_call" | "chat" => Nature::RunAnything,
        "web_fetch" | "web_search" | "mcp_resolve" | "completions" => Nature::ReadWorld,
        "write_file" | "mcp_enable" | "mcp_disable" => Nature::WriteIdempotent,
        "edit_file" | "mcp_add" | "mcp_remove" => Nature::Write,
        _ if safe => Nature::Read,
        _ => Nature::Write,
    }
}

/// The annotations of one served tool; `safe` is the native tool's own flag (it runs
/// without approval in the agent).
pub fn for_tool(name: &str, safe: bool) -> Value {
    let (read_only, destructive, idempotent, open_world) = match nature(name, safe) {
        Nature::Read => (true, false, true, false),
        Nature::ReadWorld => (true, false, true, true),
        Nature::WriteIdempotent => (false, false, true, false),
        Nature::Write => (false, true, false, false),
        Nature::RunAnything => (false, true, false, true),
    };
    json!({
        "readOnlyHint": read_only,
        "destructiveHint": destructive,
        "idempotentHint": idempotent,
        "openWorldHint": open_world,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table() {
        // name, safe, readOnly, destructive, idempotent, openWorld
        let cases = [
            ("read_file", true, true, false, true, false),
            ("grep", true, true, false, true, false),
            ("web_fetch", true, true, false, true, true),
            ("write_file", false, false, false, true, false),
            ("edit_file", false, false, true, false, false),
            ("shell", false, false, true, false, true),
            ("mcp_call", false, false, true, false, true),
            ("chat", false, false, true, false, true),
            ("completions", false, true, false, true, true),
            ("some_new_unsafe_tool", false, false, true, false, false),
        ];
        for (name, safe, ro, de, id, ow) in cases {
            let a = for_tool(name, safe);
            assert_eq!(
                (
                    a["readOnlyHint"].as_bool(),
                    a["destructiveHint"].as_bool(),
                    a["idempotentHint"].as_bool(),
                    a["openWorldHint"].as_bool()
                ),
                (Some(ro), Some(de), Some(id), Some(ow)),
                "{name}"
            );
        }
    }
}
