//! The import rules between tai's top-level modules, checked on the source text.
//!
//! Every file under `src/` (but the crate root, `lib.rs` and `main.rs`) is read; each
//! `crate::X`, `crate::{X, Y::…}` and `super::X` that leaves its top-level module is an
//! edge. The rules (docs/ARCHITECTURE.md, "Import rules"): every module sits in one layer
//! of [`LAYERS`]; an edge goes to a strictly lower layer, except that leaves may use other
//! leaves; and there is no cycle between top-level modules. A violation names the file and
//! line. A new top-level module fails here until it is given a layer.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// The layers, bottom first: a module may import modules of lower layers only (leaves
/// may also import leaves). `deadline` and `limits` are leaves too (added beside this).
const LAYERS: &[(&str, &[&str])] = &[
    (
        "leaves: no knowledge of MCP or of tai's application",
        &[
            "base64",
            "child",
            "child_env",
            "clock",
            "deadline",
            "entropy",
            "html_text",
            "http",
            "jsonc",
            "jsonrpc",
            "limits",
            "regular_file",
            "sanitize",
            "shell_words",
            "sigint",
            "term",
        ],
    ),
    (
        "the MCP protocol, the vault, the approval policy",
        &["mcp", "vault", "approval"],
    ),
    ("the server registry", &["mcp_servers"]),
    ("the GitHub resolver", &["resolver"]),
    ("configuration", &["config"]),
    ("native tools, the chat client", &["tools", "chat"]),
    ("the bridge and its trust gate", &["bridge"]),
    ("the agent", &["agent"]),
    ("tai as an MCP server", &["server"]),
    ("the command line", &["cli"]),
];

/// One reference from a file to another top-level module.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Edge {
    from: String,
    to: String,
    at: String,
}

/// The top-level module a file under `src/` belongs to, and how deep it sits (the number
/// of `super::` that lead to the crate root). `None` for the crate root itself.
fn module_of(rel: &str) -> Option<(String, usize)> {
    let parts: Vec<&str> = rel.split('/').collect();
    let top = parts[0].trim_end_matches(".rs");
    if parts.len() == 1 && matches!(top, "lib" | "main") {
        return None;
    }
    let last = parts[parts.len() - 1];
    let depth = parts.len() - usize::from(last == "mod.rs");
    Some((top.to_string(), depth))
}

fn ident(s: &str) -> &str {
    let end = s
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .unwrap_or(s.len());
    &s[..end]
}

/// The first segment of each path in a `{…}` group that starts at `s[0]`.
fn group_heads(s: &str) -> Vec<&str> {
    let mut heads = Vec::new();
    let mut depth = 0;
    let mut item_start = 1;
    for (i, c) in s.char_indices() {
        match c {
            '{' => depth += 1,
            '}' | ',' if depth == 1 => {
                heads.push(ident(s[item_start..i].trim_start()));
                item_start = i + 1;
                if c == '}' {
                    break;
                }
            }
            '}' => depth -= 1,
            _ => {}
        }
    }
    heads
}

/// The edges one file makes: `crate::…` anywhere, `super::…` that climbs to the root.
/// Comment lines are skipped.
fn edges_of(rel: &str, text: &str) -> Vec<Edge> {
    let Some((from, depth)) = module_of(rel) else {
        return Vec::new();
    };
    // Blank out comment lines, keeping every offset (so line numbers stay true).
    let code: String = text
        .lines()
        .map(|l| {
            if l.trim_start().starts_with("//") {
                " ".repeat(l.len())
            } else {
                l.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join("\n");
    let line_at = |pos: usize| code[..pos].matches('\n').count() + 1;
    let mut out = Vec::new();
    let mut push = |to: &str, pos: usize| {
        if !to.is_empty() && to != "self" && to != from {
            out.push(Edge {
                from: from.clone(),
                to: to.to_string(),
                at: format!("src/{rel}:{}", line_at(pos)),
            });
        }
    };
    let word_start =
        |pos: usize| pos == 0 || !code[..pos].ends_with(|c: char| c.is_alphanumeric() || c == '_');
    for (pos, _) in code.match_indices("crate::") {
        if !word_start(pos) {
            continue;
        }
        let rest = &code[pos + "crate::".len()..];
        if rest.starts_with('{') {
            for head in group_heads(rest) {
                push(head, pos);
            }
        } else {
            push(ident(rest), pos);
        }
    }
    let mut pos = 0;
    while let Some(found) = code[pos..].find("super::") {
        let start = pos + found;
        let mut rest = &code[start..];
        let mut climbs = 0;
        while let Some(r) = rest.strip_prefix("super::") {
            climbs += 1;
            rest = r;
        }
        if word_start(start) && climbs >= depth {
            if rest.starts_with('{') {
                for head in group_heads(rest) {
                    push(head, start);
                }
            } else {
                push(ident(rest), start);
            }
        }
        pos = code.len() - rest.len();
    }
    out
}

/// Every violation of the rules among `files` (path under src/, text).
fn check(files: &[(String, String)], layers: &[(&str, &[&str])]) -> Vec<String> {
    let layer_of = |m: &str| layers.iter().position(|(_, ms)| ms.contains(&m));
    let mut problems = Vec::new();
    let mut graph: BTreeMap<String, BTreeMap<String, String>> = BTreeMap::new();
    let mut unplaced = BTreeSet::new();
    for (rel, text) in files {
        if let Some((m, _)) = module_of(rel)
            && layer_of(&m).is_none()
        {
            unplaced.insert((m, rel.clone()));
        }
        for e in edges_of(rel, text) {
            let (Some(from), Some(to)) = (layer_of(&e.from), layer_of(&e.to)) else {
                continue;
            };
            let allowed = to < from || (to == 0 && from == 0);
            if !allowed {
                problems.push(format!(
                    "{}: {} ({}) imports {} ({}): a module imports only lower layers",
                    e.at, e.from, layers[from].0, e.to, layers[to].0
                ));
            }
            graph
                .entry(e.from.clone())
                .or_default()
                .entry(e.to.clone())
                .or_insert(e.at);
        }
    }
    for (m, rel) in unplaced {
        problems.push(format!(
            "src/{rel}: the module {m} has no layer: add it to LAYERS in tests/it/architecture.rs and to docs/ARCHITECTURE.md"
        ));
    }
    problems.extend(cycles(&graph));
    problems
}

/// Each cycle between modules, once, as `a → b → … → a` with where each step is made.
fn cycles(graph: &BTreeMap<String, BTreeMap<String, String>>) -> Vec<String> {
    let mut found = BTreeSet::new();
    for start in graph.keys() {
        // Depth-first from `start`, looking for a path back to it.
        let mut stack: Vec<(String, Vec<String>)> = vec![(start.clone(), vec![start.clone()])];
        let mut seen = BTreeSet::new();
        while let Some((node, path)) = stack.pop() {
            for next in graph.get(&node).into_iter().flat_map(|m| m.keys()) {
                if next == start {
                    let mut ring = path.clone();
                    // One name per cycle: rotated to start at its smallest module.
                    let min = ring
                        .iter()
                        .enumerate()
                        .min_by_key(|(_, m)| *m)
                        .map_or(0, |x| x.0);
                    ring.rotate_left(min);
                    found.insert(ring);
                } else if seen.insert(next.clone()) {
                    let mut p = path.clone();
                    p.push(next.clone());
                    stack.push((next.clone(), p));
                }
            }
        }
    }
    found
        .into_iter()
        .map(|ring| {
            let steps: Vec<String> = ring
                .iter()
                .zip(ring.iter().cycle().skip(1))
                .map(|(a, b)| format!("{a} → {b} ({})", graph[a][b]))
                .collect();
            format!("a cycle: {}", steps.join(", "))
        })
        .collect()
}

fn sources(dir: &Path, root: &Path, out: &mut Vec<(String, String)>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            sources(&p, root, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            let rel = p.strip_prefix(root).unwrap().to_string_lossy().into_owned();
            out.push((rel, std::fs::read_to_string(&p).unwrap()));
        }
    }
}

#[test]
fn the_import_rules_hold_for_src() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    sources(&root, &root, &mut files);
    assert!(files.len() > 50, "src/ was read: {} files", files.len());
    let edges: usize = files.iter().map(|(r, t)| edges_of(r, t).len()).sum();
    assert!(edges > 100, "edges were found: {edges}");
    let problems = check(&files, LAYERS);
    assert!(problems.is_empty(), "\n{}\n", problems.join("\n"));
}

#[test]
fn every_module_in_src_has_a_layer_and_no_layer_names_a_stranger() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let on_disk: BTreeSet<String> = std::fs::read_dir(&root)
        .unwrap()
        .filter_map(|e| {
            let name = e.unwrap().file_name().into_string().unwrap();
            Some(name.trim_end_matches(".rs").to_string())
                .filter(|n| !matches!(n.as_str(), "lib" | "main"))
        })
        .collect();
    let placed: BTreeSet<String> = LAYERS
        .iter()
        .flat_map(|(_, ms)| ms.iter().map(|m| m.to_string()))
        .collect();
    // `deadline` and `limits` are placed ahead of their arrival from a parallel branch.
    let ahead: BTreeSet<String> = ["deadline", "limits"].map(String::from).into();
    let strangers: Vec<&String> = placed
        .difference(&on_disk)
        .filter(|m| !ahead.contains(*m))
        .collect();
    assert!(
        strangers.is_empty(),
        "LAYERS names modules src/ lacks: {strangers:?}"
    );
    let unplaced: Vec<&String> = on_disk.difference(&placed).collect();
    assert!(unplaced.is_empty(), "modules without a layer: {unplaced:?}");
}

/// The checker on tiny module graphs: what it must find, and what it must let pass.
#[test]
fn the_checker_finds_each_kind_of_violation() {
    const SMALL: &[(&str, &[&str])] = &[
        ("leaves", &["clock", "sigint"]),
        ("protocol", &["mcp"]),
        ("app", &["vault", "cli"]),
    ];
    let f = |files: &[(&str, &str)]| -> Vec<String> {
        let owned: Vec<(String, String)> = files
            .iter()
            .map(|(p, t)| (p.to_string(), t.to_string()))
            .collect();
        check(&owned, SMALL)
    };
    // (files, the violations' expected beginnings; empty: passes)
    type Case<'a> = (&'a [(&'a str, &'a str)], &'a [&'a str]);
    let table: &[Case] = &[
        // a clean graph: down the layers, a leaf using a leaf, inside-module `super::`
        (
            &[
                (
                    "mcp/client.rs",
                    "use super::era::Era;\nuse crate::clock::sleep;",
                ),
                ("mcp/mod.rs", "pub mod client;"),
                ("clock.rs", "use crate::sigint;"),
                (
                    "cli/mod.rs",
                    "use crate::{mcp::client, clock};\nfn f() { crate::clock::sleep(d) }",
                ),
                ("lib.rs", "pub use crate::cli::run; use crate::vault;"),
            ],
            &[],
        ),
        // the protocol importing the application, by path, group and nested group
        (
            &[("mcp/client.rs", "use std::io;\nuse crate::vault::Store;")],
            &["src/mcp/client.rs:2: mcp (protocol) imports vault (app)"],
        ),
        (
            &[(
                "mcp/http.rs",
                "use crate::{\n    clock,\n    vault::{Store, Error},\n};",
            )],
            &["src/mcp/http.rs:1: mcp (protocol) imports vault (app)"],
        ),
        // `super::` from a `mod.rs` and from a top-level file climbs out of the module
        (
            &[("mcp/mod.rs", "use super::cli;")],
            &["src/mcp/mod.rs:1: mcp (protocol) imports cli (app)"],
        ),
        (
            &[(
                "mcp/oauth/flow.rs",
                "fn f() { super::super::super::vault::x() }",
            )],
            &["src/mcp/oauth/flow.rs:1: mcp (protocol) imports vault (app)"],
        ),
        // a leaf importing a layer above it
        (
            &[("sigint.rs", "\n\nlet x = crate::mcp::caps::MAX;")],
            &["src/sigint.rs:3: sigint (leaves) imports mcp (protocol)"],
        ),
        // a sideways import inside a layer, and the cycle it closes
        (
            &[
                ("vault/mod.rs", "use crate::cli::Args;"),
                ("cli/mod.rs", "use crate::vault::Store;"),
            ],
            &[
                "src/vault/mod.rs:1: vault (app) imports cli (app)",
                "src/cli/mod.rs:1: cli (app) imports vault (app)",
                "a cycle: cli → vault (src/cli/mod.rs:1), vault → cli (src/vault/mod.rs:1)",
            ],
        ),
        // leaves may use leaves, but not in a ring
        (
            &[
                ("clock.rs", "use crate::sigint;"),
                ("sigint.rs", "fn f() { crate::clock::sleep(d) }"),
            ],
            &["a cycle: clock → sigint (src/clock.rs:1), sigint → clock (src/sigint.rs:1)"],
        ),
        // a module with no layer
        (
            &[("stray.rs", "use crate::clock;")],
            &["src/stray.rs: the module stray has no layer"],
        ),
        // what is not an import: comments, a longer name, `super::` inside a module, `self`
        (
            &[
                (
                    "mcp/a.rs",
                    "// use crate::vault;\n/// see crate::cli\nuse super::b;",
                ),
                (
                    "mcp/b.rs",
                    "use tai_crate::vault; use my_crate::cli;\nuse crate::{self as c};",
                ),
                ("mcp/c/d.rs", "use super::super::client;"),
            ],
            &[],
        ),
    ];
    for (files, want) in table {
        let got = f(files);
        assert_eq!(got.len(), want.len(), "{files:?}: {got:#?}");
        for (g, w) in got.iter().zip(want.iter()) {
            assert!(g.starts_with(w), "{files:?}:\n got {g}\nwant {w}");
        }
    }
}

/// docs/ARCHITECTURE.md's module map names every entry of `src/` and of each folder in
/// it (deeper ones when it likes), and nothing that is not there.
#[test]
fn the_module_map_names_every_entry_of_src() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let doc = std::fs::read_to_string(root.join("docs/ARCHITECTURE.md")).unwrap();
    let map = doc
        .split("## Module map")
        .nth(1)
        .and_then(|rest| rest.split("```").nth(1))
        .expect("a code block under ## Module map");
    // Each line `src/x/`, `  y.rs`, `    z/`: a path by its indentation.
    let mut documented = BTreeSet::new();
    let mut stack: Vec<String> = Vec::new();
    for line in map.lines() {
        let indent = line.len() - line.trim_start().len();
        let Some(word) = line.split_whitespace().next() else {
            continue;
        };
        if indent % 2 != 0 || indent > 4 || !(word.ends_with(".rs") || word.ends_with('/')) {
            continue;
        }
        let word = word.strip_prefix("src/").unwrap_or(word);
        if indent == 0 && !line.starts_with("src/") {
            continue;
        }
        stack.truncate(indent / 2);
        if stack.len() != indent / 2 {
            continue; // a continuation line that happens to start with a path
        }
        let path = format!("{}{word}", stack.concat());
        if word.ends_with('/') {
            stack.push(word.to_string());
        }
        documented.insert(path);
    }
    let mut actual = BTreeSet::new();
    for e in std::fs::read_dir(root.join("src")).unwrap() {
        let e = e.unwrap();
        let name = e.file_name().into_string().unwrap();
        if e.path().is_dir() {
            actual.insert(format!("{name}/"));
            for sub in std::fs::read_dir(e.path()).unwrap() {
                let sub = sub.unwrap();
                let s = sub.file_name().into_string().unwrap();
                if s == "mod.rs" {
                    continue;
                }
                let slash = if sub.path().is_dir() { "/" } else { "" };
                actual.insert(format!("{name}/{s}{slash}"));
            }
        } else {
            actual.insert(name);
        }
    }
    let missing: Vec<&String> = actual.difference(&documented).collect();
    let stale: Vec<&String> = documented
        .iter()
        .filter(|d| !root.join("src").join(d.as_str()).exists())
        .collect();
    assert!(
        missing.is_empty() && stale.is_empty(),
        "docs/ARCHITECTURE.md's module map: missing {missing:?}, names what is not there {stale:?}"
    );
}
