//! Server names: which are valid, and a name for an entry that came without one (after
//! its package, image, script or host). Pure.

use super::Leg;

/// Names: `[A-Za-z0-9_-]`, 1 to 64 characters.
pub fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 64
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// A name for an entry that came without one (a bare entry, a URL, a command line).
pub fn derive_name(leg: &Leg) -> String {
    let raw = match leg {
        Leg::Http { url, .. } => url
            .split("://")
            .nth(1)
            .and_then(|r| r.split(['/', ':', '?']).next())
            .unwrap_or("server")
            .to_string(),
        Leg::Stdio { command, args, .. } => {
            // `npx -y @scope/server-foo@1` → server-foo; `uvx mcp-server-time` → mcp-server-time
            let runner = [
                "npx", "uvx", "bunx", "pnpx", "docker", "node", "python", "python3", "deno",
            ];
            let base = command.rsplit('/').next().unwrap_or(command);
            let positional = |a: &&String| !a.starts_with('-');
            let pick = if base == "docker" {
                args.iter()
                    .rfind(positional)
                    .cloned()
                    .unwrap_or(base.to_string()) // the image
            } else if runner.contains(&base) {
                args.iter()
                    .find(positional)
                    .cloned()
                    .unwrap_or(base.to_string()) // the package or script
            } else {
                base.to_string()
            };
            let pick = pick.rsplit('/').next().unwrap_or(&pick).to_string();
            pick.split('@')
                .find(|s| !s.is_empty())
                .unwrap_or("server")
                .trim_end_matches(".py")
                .trim_end_matches(".js")
                .to_string()
        }
    };
    sanitize_name(&raw)
}

/// Any text → a valid server name: other characters become `-`, at most 64, never empty.
pub fn sanitize_name(raw: &str) -> String {
    let name: String = raw
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '-'
            }
        })
        .take(64)
        .collect();
    let name = name.trim_matches('-');
    if name.is_empty() {
        "server".into()
    } else {
        name.to_string()
    }
}
