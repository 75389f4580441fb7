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

/// The name with the identity's hash (`extra` more hex characters after a clash):
/// for names that are too long or already taken.
fn hashed(server: &str, tool: &str, extra: usize) -> String {
    let mut suffix = short_hash(server, tool);
    if extra > 0 {
        let mut h = Sha256::new();
        h.update(server.as_bytes());
        h.update([0]);
        h.update(tool.as_bytes());
        h.update([0]);
        h.update(extra.to_le_bytes());
        suffix.push_str(&crate::entropy::hex(&h.finalize()[..4]));
    }
    let mut base = plain(server, tool);
    base.truncate(MAX_NAME - suffix.len() - 1);
    format!("{base}_{suffix}")
}

/// Names for every `(server, tool)` pair, in order (earliest registered first): plain
/// where it fits and no earlier pair holds it, otherwise shortened and told apart with a
/// hash of the full identity. A later pair never takes a name an earlier one holds,
/// plain or hashed, so adding a server never renames (or takes over) an existing tool.
pub fn assign(pairs: &[(&str, &str)]) -> Vec<String> {
    let mut taken: std::collections::HashSet<String> = Default::default();
    let mut names = Vec::with_capacity(pairs.len());
    for (s, t) in pairs {
        let p = plain(s, t);
        let mut name = if p.len() <= MAX_NAME && !taken.contains(&p) {
            p
        } else {
            hashed(s, t, 0)
        };
        let mut extra = 0;
        while taken.contains(&name) {
            extra += 1;
            name = hashed(s, t, extra);
        }
        taken.insert(name.clone());
        names.push(name);
    }
    names
}

/// Whether `name` is the plain name of `(server, tool)` (else it was told apart).
pub fn is_plain(server: &str, tool: &str, name: &str) -> bool {
    plain(server, tool) == name
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
        // the earlier keeps the plain name; the later one is told apart
        assert_eq!(names[2], "mcp_fs_read_file");
        assert!(
            names[3].starts_with("mcp_fs_read_file_")
                && names[3].len() == "mcp_fs_read_file_".len() + 8
        );
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
        // stable: the same identities in the same order give the same names
        assert_eq!(assign(&pairs), names);
    }

    /// A later server cannot take over an earlier tool's name, plain or hashed: a tool
    /// named after an earlier tool's hashed name gets yet another name.
    #[test]
    fn a_later_server_never_takes_over_a_name() {
        let first = assign(&[("good", "echo"), ("good", "ECHO")]);
        assert_eq!(first[0], "mcp_good_echo");
        let hashed_name = first[1].clone();
        let suffix = hashed_name.rsplit('_').next().unwrap().to_string();
        // the attacker registers later, naming a tool so its plain name is the hashed one
        let evil_tool = format!("echo_{suffix}");
        let pairs = [
            ("good", "echo"),
            ("good", "ECHO"),
            ("good", evil_tool.as_str()),
            ("Good", "echo"),
        ];
        let names = assign(&pairs);
        assert_eq!(&names[..2], &first[..], "earlier names are unchanged");
        assert_ne!(
            names[2], hashed_name,
            "the later tool does not take the hashed name"
        );
        assert_ne!(
            names[3], "mcp_good_echo",
            "a case variant does not take the plain name"
        );
        let unique: std::collections::HashSet<&String> = names.iter().collect();
        assert_eq!(unique.len(), names.len());
        // its plain form is exactly the hashed name, so it was told apart
        assert_eq!(format!("mcp_good_{evil_tool}"), hashed_name);
        assert!(!is_plain("good", &evil_tool, &names[2]));
    }
}
