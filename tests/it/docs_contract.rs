//! The docs contract (the seed's McpDocTests): `docs/mcp.md` and the code name the same
//! caps, wire methods, vault tables, agent tools and served extras, both ways.

use std::collections::BTreeSet;

use tai::testing::mcp::{self, caps, methods};
use tai::testing::vault::schema;

/// The text under `heading` up to the next heading of the same or a higher level.
fn section<'a>(doc: &'a str, heading: &str) -> Option<&'a str> {
    let level = heading.chars().take_while(|c| *c == '#').count();
    let start = doc.lines().position(|l| l.trim_end() == heading)?;
    let lines: Vec<&str> = doc.lines().collect();
    let body_start: usize = lines[..=start].iter().map(|l| l.len() + 1).sum();
    let rest = &doc[body_start.min(doc.len())..];
    let end = rest
        .lines()
        .scan(0usize, |off, l| {
            let at = *off;
            *off += l.len() + 1;
            Some((at, l))
        })
        .find(|(_, l)| {
            let hashes = l.chars().take_while(|c| *c == '#').count();
            hashes > 0 && hashes <= level && l[hashes..].starts_with(' ')
        })
        .map_or(rest.len(), |(at, _)| at);
    Some(&rest[..end])
}

/// Cell `col` of every data row of the markdown tables in `text`, backticks removed.
fn column(text: &str, col: usize) -> Vec<String> {
    text.lines()
        .filter(|l| l.trim_start().starts_with('|'))
        .filter_map(|l| {
            l.trim()
                .trim_matches('|')
                .split('|')
                .nth(col)
                .map(|c| c.trim().to_string())
        })
        .filter(|c| !c.is_empty() && !c.starts_with("---"))
        .filter(|c| c.starts_with('`'))
        .map(|c| c.trim_matches('`').to_string())
        .collect()
}

/// Every standalone `MCP_[A-Z_]+` token in the text (not `TAI_MCP_PORT`, not a path's
/// `schema::MCP_TABLES`).
fn cap_tokens(text: &str) -> BTreeSet<String> {
    let mut found = BTreeSet::new();
    for (at, _) in text.match_indices("MCP_") {
        let before = text[..at].bytes().last();
        if before.is_some_and(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b':') {
            continue;
        }
        let len = text[at..]
            .bytes()
            .take_while(|b| b.is_ascii_uppercase() || *b == b'_')
            .count();
        found.insert(text[at..at + len].trim_end_matches('_').to_string());
    }
    found
}

fn compare(what: &str, code: &[&str], doc: &[String], problems: &mut Vec<String>) {
    let code: BTreeSet<&str> = code.iter().copied().collect();
    let doc: BTreeSet<&str> = doc.iter().map(String::as_str).collect();
    for missing in code.difference(&doc) {
        problems.push(format!(
            "{what} `{missing}` is in the code but not in docs/mcp.md"
        ));
    }
    for extra in doc.difference(&code) {
        problems.push(format!(
            "{what} `{extra}` is in docs/mcp.md but not in the code"
        ));
    }
}

/// Every disagreement between `doc` and the code.
pub fn check(doc: &str) -> Vec<String> {
    let mut problems = Vec::new();
    let mut need = |heading: &str| {
        section(doc, heading).unwrap_or_else(|| {
            problems.push(format!("docs/mcp.md has no section {heading:?}"));
            ""
        })
    };
    let caps_sec = need("## Caps");
    let wire = need("## Wire subset");
    let tables = need("### Vault tables");
    let tools = need("## Agent tools");
    let served = need("### Served tools");

    // Caps: each named with its value in the table, and no unknown MCP_* name anywhere.
    let names: Vec<&str> = caps::ALL.iter().map(|(n, _)| *n).collect();
    compare("cap", &names, &column(caps_sec, 0), &mut problems);
    for row in caps_sec.lines().filter(|l| l.starts_with("| `MCP_")) {
        let cells: Vec<&str> = row.trim_matches('|').split('|').map(str::trim).collect();
        let name = cells[0].trim_matches('`');
        if let Some((_, value)) = caps::ALL.iter().find(|(n, _)| *n == name)
            && cells.get(1) != Some(value)
        {
            let doc_value = cells.get(1);
            problems.push(format!(
                "cap `{name}` is {value} in the code but {doc_value:?} in docs/mcp.md"
            ));
        }
    }
    for token in cap_tokens(doc) {
        if !names.contains(&token.as_str()) {
            problems.push(format!(
                "docs/mcp.md names `{token}`, which is not a cap in the code"
            ));
        }
    }

    // The wire table, with each method's direction.
    let methods_code: Vec<&str> = methods::WIRE.iter().map(|m| m.name).collect();
    compare("method", &methods_code, &column(wire, 1), &mut problems);
    for m in methods::WIRE {
        let want = match m.direction {
            methods::Direction::ClientToServer => "C2S",
            methods::Direction::ServerToClient => "S2C",
            methods::Direction::Both => "both",
        };
        let row = wire
            .lines()
            .find(|l| l.contains(&format!("| `{}` |", m.name)));
        if let Some(row) = row
            && row.trim_matches('|').split('|').next().map(str::trim) != Some(want)
        {
            problems.push(format!("method `{}` should be listed as {want}", m.name));
        }
    }

    // Vault tables: `name(` lines in the section's code block.
    let doc_tables: Vec<String> = tables
        .lines()
        .filter_map(|l| l.split_once('(').map(|(n, _)| n.trim()))
        .filter(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_lowercase() || b == b'_'))
        .map(str::to_string)
        .collect();
    compare(
        "vault table",
        schema::MCP_TABLES,
        &doc_tables,
        &mut problems,
    );

    compare(
        "agent tool",
        mcp::AGENT_TOOLS,
        &column(tools, 0),
        &mut problems,
    );
    compare(
        "served extra",
        mcp::SERVED_EXTRAS,
        &column(served, 0),
        &mut problems,
    );
    problems
}

fn the_doc() -> String {
    std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/mcp.md"))
        .expect("docs/mcp.md")
}

#[test]
fn docs_mcp_md_matches_the_code() {
    let problems = check(&the_doc());
    assert!(
        problems.is_empty(),
        "docs/mcp.md and the code disagree:\n{}",
        problems.join("\n")
    );
}

/// The check can fail: each kind of drift is caught.
#[test]
fn the_check_catches_drift() {
    let doc = the_doc();
    let drifts: &[(&str, &str, &str)] = &[
        // a cap removed from the doc
        (
            "| `MCP_CALL_TIMEOUT` | 60s |",
            "| `CALL_TIMEOUT` | 60s |",
            "cap `MCP_CALL_TIMEOUT` is in the code but not",
        ),
        // a cap's value wrong
        (
            "| `MCP_MAX_SERVERS` | 32 |",
            "| `MCP_MAX_SERVERS` | 33 |",
            "cap `MCP_MAX_SERVERS` is 32 in the code",
        ),
        // a cap the code does not have
        (
            "## Caps\n",
            "## Caps\n\nSee also MCP_MAX_PROMPTS.\n",
            "names `MCP_MAX_PROMPTS`",
        ),
        // a method removed from the wire table
        (
            "| C2S | `server/discover` |",
            "| C2S | server discovery |",
            "method `server/discover` is in the code but not",
        ),
        // a method the code does not have
        (
            "| both | `ping` |",
            "| both | `pong` |",
            "method `pong` is in docs/mcp.md but not",
        ),
        // wrong direction
        (
            "| C2S | `tools/call` |",
            "| S2C | `tools/call` |",
            "method `tools/call` should be listed as C2S",
        ),
        // a vault table renamed
        (
            "mcp_tool_pins(server",
            "mcp_pins(server",
            "vault table `mcp_tool_pins` is in the code but not",
        ),
        // an agent tool dropped
        (
            "| `mcp_remove` |",
            "| mcp_remove |",
            "agent tool `mcp_remove` is in the code but not",
        ),
        // a served extra dropped
        (
            "| `completions` |",
            "| completion |",
            "served extra `completions` is in the code but not",
        ),
        // a whole section gone
        (
            "## Agent tools",
            "## Tools for the agent",
            "no section \"## Agent tools\"",
        ),
    ];
    for (from, to, want) in drifts {
        assert!(
            doc.contains(from),
            "the doc no longer contains {from:?}; update this test"
        );
        let problems = check(&doc.replacen(from, to, 1));
        assert!(
            problems.iter().any(|p| p.contains(want)),
            "replacing {from:?} should report {want:?}, got {problems:#?}"
        );
    }
}
