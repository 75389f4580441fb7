//! Bridged tool names (pure): `mcp_<server>_<tool>` in `[a-z0-9_]`, at most 64 characters,
//! unique, and derived only from the names, so they stay the same across restarts.

use sha2::{Digest, Sha256};

/// Model APIs cap function names at 64 characters.
pub const MAX_NAME: usize = 64;

fn sanitize(part: &str) -> String {
    part.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '_'
            }
        })
        .collect()
}

fn short_hash(server: &str, tool: &str) -> String {
    let mut h = Sha256::new();
    h.update(server.as_bytes());
    h.update([0]);
    h.update(tool.as_bytes());
    crate::entropy::hex(&h.finalize()[..4])
}

/// The plain name, before collisions are considered.
fn plain(server: &str, tool: &str) -> String {
    let s = sanitize(server);
    let t = sanitize(tool);
    let s = if s.is_empty() {
        format!("s{}", short_hash(server, ""))
    } else {
        s
    };
    let t = if t.is_empty() {
        format!("t{}", short_hash(server, tool))
    } else {
        t
    };
    format!("mcp_{s}_{t}")
}

/// The name with the identity's hash: for names that are too long or collide.
fn hashed(server: &str, tool: &str) -> String {
    let suffix = short_hash(server, tool);
    let mut base = plain(server, tool);
    base.truncate(MAX_NAME - suffix.len() - 1);
    format!("{base}_{suffix}")
}

/// Names for every `(server, tool)` pair, in order: plain where it fits and is unique,
/// otherwise shortened and told apart with a short hash of the full identity.
pub fn assign(pairs: &[(&str, &str)]) -> Vec<String> {
    let plains: Vec<String> = pairs.iter().map(|(s, t)| plain(s, t)).collect();
    pairs
        .iter()
        .enumerate()
        .map(|(i, (s, t))| {
            let p = &plains[i];
            let clash = plains.iter().enumerate().any(|(j, q)| j != i && q == p);
            if p.len() > MAX_NAME || clash {
                hashed(s, t)
            } else {
                p.clone()
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn naming_table() {
        let long_tool = "x".repeat(200);
        let pairs = [
            ("github", "create_issue"),
            ("My-Server", "get.weather"),
            ("fs", "read-file"),
            ("fs", "read_file"), // sanitizes like the one above: both hashed
            ("uni", "größe/ü"),
            ("s", ""),
            ("s", "!!!"),
            ("long", long_tool.as_str()),
        ];
        let names = assign(&pairs);
        assert_eq!(names[0], "mcp_github_create_issue");
        assert_eq!(names[1], "mcp_my_server_get_weather");
        assert!(
            names[2].starts_with("mcp_fs_read_file_") && names[3].starts_with("mcp_fs_read_file_")
        );
        assert_ne!(names[2], names[3]);
        assert_eq!(names[4], "mcp_uni_gr__e__");
        assert!(names[5].starts_with("mcp_s_t") && names[5].len() == "mcp_s_t".len() + 8);
        assert_eq!(names[6], "mcp_s____");
        assert_eq!(names[7].len(), MAX_NAME);
        for n in &names {
            assert!(
                n.len() <= MAX_NAME
                    && n.bytes()
                        .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_'),
                "{n}"
            );
        }
        let unique: std::collections::HashSet<&String> = names.iter().collect();
        assert_eq!(unique.len(), names.len());
        // stable: the same identities give the same names, in any order
        let again = assign(&[pairs[7], pairs[3], pairs[2]]);
        assert_eq!(
            (again[0].as_str(), again[1].as_str(), again[2].as_str()),
            (names[7].as_str(), names[3].as_str(), names[2].as_str())
        );
    }
}
