//! Repository files → runnable candidates (pure): `package.json`, `pyproject.toml`,
//! `Cargo.toml` (advice only), a README's run block, and config blocks on a web page.

use std::collections::BTreeMap;

use serde_json::Value;

use super::Candidate;

use crate::mcp::era::EraChoice;
use crate::mcp_servers::normalize::{Entry, Leg, normalize, sanitize_name};
use crate::shell_words::split_words;

fn candidate(name: &str, leg: Leg, origin: String) -> Candidate {
    Candidate {
        entry: Entry {
            name: sanitize_name(name),
            leg,
            protocol: EraChoice::Auto,
            allow: None,
            deny: Vec::new(),
            enabled: None,
            env_vars: Vec::new(),
            options: Default::default(),
        },
        origin,
        needs: Vec::new(),
        note: None,
        sha: None,
    }
}

fn stdio(command: &str, args: &[&str]) -> Leg {
    Leg::Stdio {
        command: command.to_string(),
        args: args.iter().map(|s| s.to_string()).collect(),
        env: BTreeMap::new(),
        cwd: None,
    }
}

/// What `package.json` says about running the package.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct PackageJson {
    pub name: String,
    pub bins: Vec<String>,
    pub mcp_name: Option<String>,
    pub private: bool,
}

pub fn package_json(text: &str) -> Result<PackageJson, String> {
    let v: Value =
        serde_json::from_str(text).map_err(|e| format!("package.json does not parse: {e}"))?;
    let name = v
        .get("name")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    let bins = match v.get("bin") {
        Some(Value::String(_)) => vec![name.rsplit('/').next().unwrap_or(&name).to_string()],
        Some(Value::Object(m)) => m.keys().cloned().collect(),
        _ => Vec::new(),
    };
    Ok(PackageJson {
        name,
        bins,
        mcp_name: v.get("mcpName").and_then(Value::as_str).map(str::to_string),
        private: v.get("private").and_then(Value::as_bool).unwrap_or(false),
    })
}

/// `npx -y <name>` (one binary), or one candidate per binary (`npx -y -p <name> <bin>`).
pub fn npm_candidates(p: &PackageJson) -> Result<Vec<Candidate>, String> {
    if p.name.is_empty() {
        return Err("no \"name\"".into());
    }
    if p.private {
        return Err(format!("{} is private (not published to npm)", p.name));
    }
    let short = p.name.rsplit('/').next().unwrap_or(&p.name);
    let origin = |b: &str| format!("package.json {} (bin {b})", p.name);
    match p.bins.as_slice() {
        [] => Err(format!("{} has no \"bin\": nothing for npx to run", p.name)),
        [one] => Ok(vec![candidate(
            short,
            stdio("npx", &["-y", &p.name]),
            origin(one),
        )]),
        many => Ok(many
            .iter()
            .map(|b| candidate(b, stdio("npx", &["-y", "-p", &p.name, b]), origin(b)))
            .collect()),
    }
}

/// `[project.scripts]` → `uvx <name>` (the script named like the project), or
/// `uvx --from <name> <script>` per script.
pub fn pyproject_candidates(text: &str) -> Result<Vec<Candidate>, String> {
    let v: toml::Value = toml::from_str(text)
        .map_err(|e| format!("pyproject.toml does not parse: {}", e.message()))?;
    let project = v.get("project").ok_or("no [project] table")?;
    let name = project
        .get("name")
        .and_then(toml::Value::as_str)
        .ok_or("no project name")?;
    let scripts: Vec<&String> = project
        .get("scripts")
        .and_then(toml::Value::as_table)
        .map(|t| t.keys().collect())
        .unwrap_or_default();
    let origin = |s: &str| format!("pyproject.toml {name} (script {s})");
    match scripts.as_slice() {
        [] => Err(format!(
            "{name} has no [project.scripts]: nothing for uvx to run"
        )),
        [one] if *one == name => Ok(vec![candidate(name, stdio("uvx", &[name]), origin(one))]),
        many => Ok(many
            .iter()
            .map(|s| candidate(s, stdio("uvx", &["--from", name, s]), origin(s)))
            .collect()),
    }
}

/// A Rust crate with a binary: how to install it (tai does not build or run it).
pub fn cargo_advice(text: &str, owner: &str, repo: &str) -> Result<String, String> {
    let v: toml::Value =
        toml::from_str(text).map_err(|e| format!("Cargo.toml does not parse: {}", e.message()))?;
    let name = v
        .get("package")
        .and_then(|p| p.get("name"))
        .and_then(toml::Value::as_str)
        .ok_or("no [package] (a workspace root)")?;
    let bins: Vec<&str> = v
        .get("bin")
        .and_then(toml::Value::as_array)
        .map(|a| a.iter().filter_map(|b| b.get("name")?.as_str()).collect())
        .unwrap_or_default();
    if v.get("lib").is_some() && bins.is_empty() {
        return Err(format!("{name} is a library crate"));
    }
    let bin = bins.first().copied().unwrap_or(name);
    Ok(format!(
        "the Rust crate {name} builds a binary: tai does not build it; install it with \
         `cargo install --git https://github.com/{owner}/{repo} {name}`, then `tai mcp add {bin}`"
    ))
}

/// The fenced blocks of a Markdown text: (info string, content).
fn fenced_blocks(md: &str) -> Vec<(String, String)> {
    let mut blocks = Vec::new();
    let mut open: Option<(String, String, String)> = None; // (fence, info, content)
    for line in md.lines() {
        let t = line.trim_start();
        match &mut open {
            None => {
                for fence in ["```", "~~~"] {
                    if let Some(info) = t.strip_prefix(fence) {
                        let info = info.trim_start_matches(&fence[..1]).trim();
                        open = Some((fence.to_string(), info.to_ascii_lowercase(), String::new()));
                        break;
                    }
                }
            }
            Some((fence, info, content)) => {
                if t.starts_with(fence.as_str()) {
                    blocks.push((std::mem::take(info), std::mem::take(content)));
                    open = None;
                } else {
                    content.push_str(line);
                    content.push('\n');
                }
            }
        }
    }
    blocks
}

/// JSONC as READMEs write it → JSON: `//` and `/* */` comments and trailing commas go;
/// a bare `"mcpServers": {...}` fragment gains its braces.
pub fn jsonc_to_json(text: &str) -> String {
    // the one JSONC reader (comments and trailing commas blanked, strings untouched)
    let out = crate::jsonc::strip(text);
    let t = out.trim();
    if t.starts_with('"') {
        // braced, then stripped again: a fragment's trailing comma is now before `}`
        crate::jsonc::strip(&format!("{{{t}}}"))
    } else {
        t.to_string()
    }
}

fn config_candidates(text: &str, origin: &str, out: &mut Vec<Candidate>, notes: &mut Vec<String>) {
    match normalize(text, false) {
        Ok(n) => {
            for e in n.entries {
                let label = format!("{origin} server {:?}", e.name);
                out.push(Candidate {
                    entry: e,
                    origin: label,
                    needs: Vec::new(),
                    note: None,
                    sha: None,
                });
            }
            for (name, why) in n.refused {
                notes.push(format!("{origin} server {name:?} refused: {why}"));
            }
        }
        Err(e) => notes.push(format!("{origin}: {e}")),
    }
}

/// The README's run block: config blocks (JSON with `mcpServers`/`servers`, TOML with
/// `[mcp_servers.*]`) first; when there are none, shell lines that start a server.
pub fn readme_candidates(md: &str) -> (Vec<Candidate>, Vec<String>) {
    let (mut configs, mut shells, mut notes) = (Vec::new(), Vec::new(), Vec::new());
    for (i, (info, content)) in fenced_blocks(md).iter().enumerate() {
        let origin = format!(
            "README block {} ({})",
            i + 1,
            if info.is_empty() { "plain" } else { info }
        );
        let jsonish = matches!(info.as_str(), "json" | "jsonc" | "json5" | "")
            || content.trim_start().starts_with('{');
        if jsonish && (content.contains("\"mcpServers\"") || content.contains("\"servers\"")) {
            config_candidates(&jsonc_to_json(content), &origin, &mut configs, &mut notes);
        } else if info == "toml" && content.contains("[mcp_servers") {
            config_candidates(content, &origin, &mut configs, &mut notes);
        } else if matches!(
            info.as_str(),
            "" | "bash" | "sh" | "shell" | "console" | "zsh" | "sh-session"
        ) {
            for line in joined_lines(content) {
                if let Some(c) = command_line(&line, &origin) {
                    shells.push(c);
                }
            }
        }
    }
    (
        dedupe(if configs.is_empty() { shells } else { configs }),
        notes,
    )
}

/// Lines with `\` continuations joined.
fn joined_lines(block: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    for l in block.lines() {
        match l.trim_end().strip_suffix('\\') {
            Some(head) => {
                cur.push_str(head);
                cur.push(' ');
            }
            None => {
                cur.push_str(l);
                out.push(std::mem::take(&mut cur));
            }
        }
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

/// One shell line that starts a server: `npx …`, `uvx …`, `bunx …`, `pipx run …`,
/// `docker run -i …`, or what follows `--` in `claude mcp add … -- CMD` / `codex mcp add`.
/// `VAR=value` prefixes become the entry's environment.
fn command_line(line: &str, origin: &str) -> Option<Candidate> {
    let t = line.trim();
    let t = t.strip_prefix("$ ").unwrap_or(t);
    if t.contains("inspector") {
        return None; // `npx @modelcontextprotocol/inspector …` starts a debugger around it
    }
    let mut words = split_words(t).ok()?;
    if let Some(c) = words.iter().position(|w| w.starts_with('#')) {
        words.truncate(c);
    }
    if words.len() > 3
        && matches!(words[0].as_str(), "claude" | "codex")
        && words[1] == "mcp"
        && words[2] == "add"
    {
        let dash = words.iter().position(|w| w == "--")?;
        words.drain(..=dash);
    }
    let mut env = BTreeMap::new();
    while let Some((k, v)) = words.first().and_then(|w| w.split_once('=')) {
        if k.is_empty()
            || !k
                .bytes()
                .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_')
        {
            break;
        }
        env.insert(k.to_string(), v.to_string());
        words.remove(0);
    }
    let first = words.first()?.as_str();
    let runs = match first {
        "npx" | "bunx" | "pnpx" | "uvx" => words.iter().skip(1).any(|w| !w.starts_with('-')),
        "pipx" => words.get(1).is_some_and(|w| w == "run"),
        "docker" => {
            words.get(1).is_some_and(|w| w == "run")
                && words
                    .iter()
                    .any(|w| matches!(w.as_str(), "-i" | "-it" | "-ti" | "--interactive"))
        }
        _ => false,
    };
    if !runs {
        return None;
    }
    let command = words.remove(0);
    let leg = Leg::Stdio {
        command,
        args: words,
        env,
        cwd: None,
    };
    let name = crate::mcp_servers::normalize::derive_name(&leg);
    Some(candidate(&name, leg, format!("{origin}: `{t}`")))
}

/// Config objects (`{"mcpServers": …}` or `{"servers": …}`) anywhere in a text, such as
/// a directory page reduced to text.
pub fn page_candidates(text: &str, origin: &str) -> (Vec<Candidate>, Vec<String>) {
    let (mut out, mut notes) = (Vec::new(), Vec::new());
    let mut from = 0;
    while let Some(at) = text[from..].find('{') {
        let start = from + at;
        from = start + 1;
        let after = text[start + 1..].trim_start();
        if !(after.starts_with("\"mcpServers\"") || after.starts_with("\"servers\"")) {
            continue;
        }
        if let Some(len) = balanced(&text[start..]) {
            config_candidates(
                &jsonc_to_json(&text[start..start + len]),
                origin,
                &mut out,
                &mut notes,
            );
            from = start + len;
        }
    }
    (dedupe(out), notes)
}

/// Length of the balanced `{…}` at the start of `s` (strings respected).
fn balanced(s: &str) -> Option<usize> {
    let (mut depth, mut in_str, mut escaped) = (0usize, false, false);
    for (i, c) in s.char_indices() {
        if in_str {
            match (escaped, c) {
                (true, _) => escaped = false,
                (false, '\\') => escaped = true,
                (false, '"') => in_str = false,
                _ => {}
            }
            continue;
        }
        match c {
            '"' => in_str = true,
            '{' => depth += 1,
            '}' => {
                depth = depth.checked_sub(1)?;
                if depth == 0 {
                    return Some(i + 1);
                }
            }
            _ => {}
        }
    }
    None
}

/// One candidate per distinct way of running (the first origin is kept).
pub fn dedupe(list: Vec<Candidate>) -> Vec<Candidate> {
    let mut out: Vec<Candidate> = Vec::new();
    for c in list {
        if !out.iter().any(|o| o.entry.leg == c.entry.leg) {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argv(c: &Candidate) -> String {
        match &c.entry.leg {
            Leg::Stdio { command, args, .. } => format!("{command} {}", args.join(" ")),
            Leg::Http { url, .. } => url.clone(),
        }
    }

    #[test]
    fn npm_manifests() {
        let p = package_json(r#"{"name": "@a/weather-mcp", "bin": "dist/index.js", "mcpName": "io.github.a/weather"}"#).unwrap();
        assert_eq!(p.mcp_name.as_deref(), Some("io.github.a/weather"));
        let c = npm_candidates(&p).unwrap();
        assert_eq!(
            (argv(&c[0]).as_str(), c[0].entry.name.as_str()),
            ("npx -y @a/weather-mcp", "weather-mcp")
        );
        let p = package_json(r#"{"name": "multi", "bin": {"srv-a": "a.js", "srv-b": "b.js"}}"#)
            .unwrap();
        let c = npm_candidates(&p).unwrap();
        assert_eq!(
            c.iter().map(argv).collect::<Vec<_>>(),
            ["npx -y -p multi srv-a", "npx -y -p multi srv-b"]
        );
        for (text, why) in [
            (r#"{"name": "lib"}"#, "no \"bin\""),
            (
                r#"{"name": "x", "bin": "a.js", "private": true}"#,
                "private",
            ),
            (r#"{"bin": "a.js"}"#, "no \"name\""),
        ] {
            let e = npm_candidates(&package_json(text).unwrap()).unwrap_err();
            assert!(e.contains(why), "{e}");
        }
        assert!(
            package_json("{nope")
                .unwrap_err()
                .contains("does not parse")
        );
    }

    #[test]
    fn python_and_rust_manifests() {
        let c = pyproject_candidates("[project]\nname = \"mcp-server-time\"\n[project.scripts]\nmcp-server-time = \"x:main\"\n").unwrap();
        assert_eq!(argv(&c[0]), "uvx mcp-server-time");
        let c = pyproject_candidates(
            "[project]\nname = \"pkg\"\n[project.scripts]\nserve = \"x:main\"\n",
        )
        .unwrap();
        assert_eq!(argv(&c[0]), "uvx --from pkg serve");
        assert!(
            pyproject_candidates("[project]\nname = \"pkg\"\n")
                .unwrap_err()
                .contains("no [project.scripts]")
        );
        assert!(
            pyproject_candidates("[tool.poetry]\n")
                .unwrap_err()
                .contains("no [project]")
        );
        let advice = cargo_advice("[package]\nname = \"srv\"\n", "o", "r").unwrap();
        assert!(
            advice.contains("cargo install --git https://github.com/o/r srv"),
            "{advice}"
        );
        assert!(
            cargo_advice("[package]\nname = \"l\"\n[lib]\n", "o", "r")
                .unwrap_err()
                .contains("library")
        );
        assert!(cargo_advice("[workspace]\n", "o", "r").is_err());
    }

    #[test]
    fn readme_config_blocks_win_over_shell_lines() {
        let md = "# Srv\n\n```bash\nnpm install -g srv\nnpx -y srv --stdio\n```\n\n```jsonc\n{\n  // Claude Desktop\n  \"mcpServers\": {\n    \"srv\": {\"command\": \"npx\", \"args\": [\"-y\", \"srv\"],},\n  },\n}\n```\n";
        let (c, notes) = readme_candidates(md);
        assert_eq!(c.len(), 1, "{c:?} {notes:?}");
        assert_eq!(
            (argv(&c[0]).as_str(), c[0].entry.name.as_str()),
            ("npx -y srv", "srv")
        );
        assert!(
            c[0].origin.starts_with("README block 2 (jsonc)"),
            "{}",
            c[0].origin
        );
    }

    #[test]
    fn readme_shell_lines() {
        let md = "```sh\n$ npx @modelcontextprotocol/inspector node dist/index.js\npip install x\nAPI_KEY=abc uvx \\\n  mcp-server-x --flag # comment\nclaude mcp add x -s user -- docker run -i --rm img\ndocker run -p 80:80 web\n```\n";
        let (c, _) = readme_candidates(md);
        let got: Vec<String> = c.iter().map(argv).collect();
        assert_eq!(got, ["uvx mcp-server-x --flag", "docker run -i --rm img"]);
        let Leg::Stdio { env, .. } = &c[0].entry.leg else {
            panic!()
        };
        assert_eq!(env["API_KEY"], "abc");
    }

    #[test]
    fn fragments_toml_and_duplicates() {
        let md = "```json\n\"mcpServers\": {\"a\": {\"command\": \"uvx\", \"args\": [\"a\"]}}\n```\n```toml\n[mcp_servers.a]\ncommand = \"uvx\"\nargs = [\"a\"]\n```\n";
        let (c, _) = readme_candidates(md);
        assert_eq!(c.len(), 1, "{c:?}");
        let md = "```json\n{\"mcpServers\": {\"a\": {\"command\": \"uvx\", \"args\": [\"a\"]}, \"b\": {\"url\": \"https://x/mcp\"}}}\n```\n";
        let (c, _) = readme_candidates(md);
        assert_eq!(
            c.iter().map(argv).collect::<Vec<_>>(),
            ["uvx a", "https://x/mcp"]
        );
        let (c, notes) = readme_candidates(
            "```json\n{\"mcpServers\": {\"bad name!\": {\"command\": \"x\"}}}\n```\n",
        );
        assert!(c.is_empty() && notes[0].contains("refused"), "{notes:?}");
    }

    #[test]
    fn page_text_objects() {
        let text = "Install\n{ \"mcpServers\": { \"w\": { \"command\": \"npx\", \"args\": [\"-y\", \"w-mcp\"] } } }\nother {braces} and {\"servers\": {\"w\": {\"command\": \"npx\", \"args\": [\"-y\", \"w-mcp\"]}}}";
        let (c, _) = page_candidates(text, "Glama");
        assert_eq!(c.len(), 1, "{c:?}");
        assert_eq!(argv(&c[0]), "npx -y w-mcp");
        assert!(page_candidates("{\"mcpServers\": {", "Glama").0.is_empty());
    }

    #[test]
    fn jsonc_cleanup_keeps_strings() {
        let v: Value = serde_json::from_str(&jsonc_to_json(
            "{\"u\": \"http://x//y\", /* c */ \"a\": [1,2,],}",
        ))
        .unwrap();
        assert_eq!(v, serde_json::json!({"u": "http://x//y", "a": [1, 2]}));
        let v: Value =
            serde_json::from_str(&jsonc_to_json("\"mcpServers\": {\"s\": {}}, // c")).unwrap();
        assert_eq!(v, serde_json::json!({"mcpServers": {"s": {}}}));
    }
}
