//! `mcp_normalize`: a pasted server config in any common shape → tai's server entries (pure).
//!
//! Accepted: JSON with a `mcpServers` wrapper (Claude Desktop, Cursor, Claude Code), a
//! `servers` wrapper (VS Code, with `inputs`), or one bare entry; TOML with
//! `[mcp_servers.NAME]` tables (Codex); a URL; a command line. Every field of the input
//! is mapped or named in a note: nothing is dropped silently. This is the one parser of
//! pasted text (`tai mcp add`, `add-json`, `import`, `probe`, the agent's `mcp_add`).
//!
//! Here: the entry types and which shape a text is; `json.rs` and `toml.rs` read the
//! shapes; `names.rs` validates and derives server names.

use std::collections::BTreeMap;

use serde_json::Value;

mod json;
mod names;
mod toml;

pub use names::{derive_name, sanitize_name, valid_name};

use super::server_options::ServerOptions;
use crate::mcp::era::EraChoice;

/// How to reach a server, with `${VAR}` references still in place.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Leg {
    Stdio {
        command: String,
        args: Vec<String>,
        env: BTreeMap<String, String>,
        cwd: Option<String>,
    },
    Http {
        url: String,
        headers: BTreeMap<String, String>,
    },
}

/// One normalized server.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    pub name: String,
    pub leg: Leg,
    pub protocol: EraChoice,
    /// Only these tools are offered (`None`: all).
    pub allow: Option<Vec<String>>,
    pub deny: Vec<String>,
    /// TOML `enabled` (and JSON `disabled`): the registering profile's enablement.
    pub enabled: Option<bool>,
    /// `env_vars`: names of tai's environment passed through to a stdio server beside the
    /// base allowlist (see `child_env`); shown at consent.
    pub env_vars: Vec<String>,
    /// Timeouts, `envFile`, project: kept beside the row (`mcp_servers::server_options`).
    pub options: ServerOptions,
}

/// A VS Code `inputs` entry: a value asked for once and kept as the vault secret `id`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Input {
    pub id: String,
    pub description: String,
    /// Asked without echo.
    pub password: bool,
}

/// What was pasted.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Source {
    ConfigJson,
    ConfigToml,
    Explicit,
    Github { owner: String, repo: String },
}

impl Source {
    pub fn as_str(&self) -> String {
        match self {
            Source::ConfigJson => "config-json".into(),
            Source::ConfigToml => "config-toml".into(),
            Source::Explicit => "explicit".into(),
            Source::Github { owner, repo } => format!("github:{owner}/{repo}"),
        }
    }
}

/// The normalizer's answer: the entries, entries refused with why, and notes for the user.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Normalized {
    pub entries: Vec<Entry>,
    pub refused: Vec<(String, String)>,
    pub notes: Vec<String>,
    pub source: Option<Source>,
    /// VS Code `promptString` inputs the entries refer to as `${input:id}`.
    pub inputs: Vec<Input>,
}

/// Why nothing could be read at all.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NormalizeError {
    /// Malformed JSON/TOML, with line and column.
    Syntax(String),
    /// A GitHub URL: not a config; the resolver handles it.
    Github {
        owner: String,
        repo: String,
        rest: String,
    },
    Empty,
    Unrecognized(String),
}

impl std::fmt::Display for NormalizeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            NormalizeError::Syntax(m) => f.write_str(m),
            NormalizeError::Github { owner, repo, .. } => write!(
                f,
                "github.com/{owner}/{repo} is a repository, not a server config: \
                 `tai mcp add https://github.com/{owner}/{repo}` resolves it to one server \
                 (`tai mcp resolve URL` shows how)"
            ),
            NormalizeError::Empty => {
                f.write_str("nothing to add: paste a server config, a command line or a URL")
            }
            NormalizeError::Unrecognized(m) => f.write_str(m),
        }
    }
}

/// Normalize pasted text. `windows` wraps `npx` in `cmd /c` (passed in to stay pure).
pub fn normalize(text: &str, windows: bool) -> Result<Normalized, NormalizeError> {
    let t = text.trim().trim_start_matches('\u{feff}');
    if t.is_empty() {
        return Err(NormalizeError::Empty);
    }
    if let Some(gh) = github(t) {
        return Err(gh);
    }
    let json = crate::jsonc::strip(t);
    let mut n = if json.trim_start().starts_with('{') {
        let v: Value = serde_json::from_str(&json).map_err(|e| {
            NormalizeError::Syntax(format!(
                "JSON error at line {}, column {}: {e}",
                e.line(),
                e.column()
            ))
        })?;
        json::json_doc(&v)?
    } else if t.starts_with("http://") || t.starts_with("https://") {
        let leg = Leg::Http {
            url: t.to_string(),
            headers: BTreeMap::new(),
        };
        let mut n = Normalized {
            source: Some(Source::Explicit),
            ..Normalized::default()
        };
        n.entries.push(entry(derive_name(&leg), leg));
        n
    } else if t.starts_with('[') || looks_like_toml(t) {
        toml::toml_doc(t)?
    } else {
        let mut words = crate::shell_words::split_words(t).map_err(NormalizeError::Unrecognized)?;
        let command = words.remove(0);
        let leg = Leg::Stdio {
            command,
            args: words,
            env: BTreeMap::new(),
            cwd: None,
        };
        let mut n = Normalized {
            source: Some(Source::Explicit),
            ..Normalized::default()
        };
        n.entries.push(entry(derive_name(&leg), leg));
        n
    };
    if windows {
        for e in &mut n.entries {
            if let Leg::Stdio { command, args, .. } = &mut e.leg
                && command == "npx"
            {
                args.insert(0, "npx".into());
                args.insert(0, "/c".into());
                *command = "cmd".into();
            }
        }
    }
    Ok(n)
}

fn entry(name: String, leg: Leg) -> Entry {
    Entry {
        name,
        leg,
        protocol: EraChoice::Auto,
        allow: None,
        deny: Vec::new(),
        enabled: None,
        env_vars: Vec::new(),
        options: ServerOptions::default(),
    }
}

fn github(t: &str) -> Option<NormalizeError> {
    let rest = t
        .strip_prefix("https://")
        .or_else(|| t.strip_prefix("http://"))
        .unwrap_or(t);
    let rest = rest
        .strip_prefix("www.")
        .unwrap_or(rest)
        .strip_prefix("github.com/")?;
    let mut parts = rest.splitn(3, '/');
    let owner = parts.next().filter(|s| !s.is_empty())?.to_string();
    let repo = parts
        .next()
        .filter(|s| !s.is_empty())?
        .trim_end_matches(".git")
        .to_string();
    Some(NormalizeError::Github {
        owner,
        repo,
        rest: parts.next().unwrap_or("").to_string(),
    })
}

fn looks_like_toml(t: &str) -> bool {
    t.lines()
        .any(|l| l.trim_start().starts_with("[mcp_servers"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stdio(cmd: &str, args: &[&str], env: &[(&str, &str)]) -> Leg {
        Leg::Stdio {
            command: cmd.into(),
            args: args.iter().map(|s| s.to_string()).collect(),
            env: env
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            cwd: None,
        }
    }

    fn http(url: &str, headers: &[(&str, &str)]) -> Leg {
        Leg::Http {
            url: url.into(),
            headers: headers
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        }
    }

    fn ok(text: &str) -> Normalized {
        normalize(text, false).unwrap_or_else(|e| panic!("{e}: {text}"))
    }

    #[test]
    fn claude_desktop_with_several_servers() {
        let n = ok(r#"{"mcpServers": {
            "filesystem": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "/Users/me/Desktop"]},
            "github": {"command": "docker", "args": ["run", "-i", "--rm", "-e", "GITHUB_PERSONAL_ACCESS_TOKEN", "ghcr.io/github/github-mcp-server"],
                       "env": {"GITHUB_PERSONAL_ACCESS_TOKEN": "${GITHUB_TOKEN}"}},
            "remote": {"url": "https://mcp.example.com/mcp", "headers": {"Authorization": "Bearer ${API_KEY}"}}
        }}"#);
        assert_eq!(n.source, Some(Source::ConfigJson));
        let names: Vec<&str> = n.entries.iter().map(|e| e.name.as_str()).collect();
        assert_eq!(names, ["filesystem", "github", "remote"]);
        assert_eq!(
            n.entries[0].leg,
            stdio(
                "npx",
                &[
                    "-y",
                    "@modelcontextprotocol/server-filesystem",
                    "/Users/me/Desktop"
                ],
                &[]
            )
        );
        assert_eq!(
            n.entries[2].leg,
            http(
                "https://mcp.example.com/mcp",
                &[("Authorization", "Bearer ${API_KEY}")]
            )
        );
        assert!(n.notes.is_empty() && n.refused.is_empty(), "{n:?}");
    }

    #[test]
    fn cursor_with_env_forms_and_env_file() {
        let n = ok(
            r#"{"mcpServers": {"db": {"command": "uvx", "args": ["mcp-server-postgres", "${env:DATABASE_URL}"],
            "env": {"PGPASSWORD": "${env:PGPASSWORD}"}, "envFile": ".env", "timeout": 30000, "alwaysAllow": ["query"]}}}"#,
        );
        assert_eq!(
            n.entries[0].leg,
            stdio(
                "uvx",
                &["mcp-server-postgres", "${DATABASE_URL}"],
                &[("PGPASSWORD", "${PGPASSWORD}")]
            )
        );
        let notes = n.notes.join("\n");
        let o = &n.entries[0].options;
        assert_eq!(
            (o.env_file.as_deref(), o.call_timeout_ms),
            (Some(".env"), Some(30_000))
        );
        assert!(
            notes.contains("dropped the field \"alwaysAllow\""),
            "{notes}"
        );
    }

    #[test]
    fn vscode_with_inputs() {
        let n = ok(
            r#"{"inputs": [{"type": "promptString", "id": "gh-token", "description": "GitHub token", "password": true}],
            "servers": {
                "github": {"type": "http", "url": "https://api.githubcopilot.com/mcp/", "headers": {"Authorization": "Bearer ${input:gh-token}"}},
                "time": {"type": "stdio", "command": "uvx", "args": ["mcp-server-time"]}
            }}"#,
        );
        assert_eq!(
            n.entries[0].leg,
            http(
                "https://api.githubcopilot.com/mcp/",
                &[("Authorization", "Bearer ${input:gh-token}")]
            )
        );
        assert_eq!(n.entries[1].leg, stdio("uvx", &["mcp-server-time"], &[]));
        assert!(
            n.notes
                .iter()
                .any(|m| m.contains("tai vault secret set gh-token")),
            "{:?}",
            n.notes
        );
    }

    #[test]
    fn codex_toml_with_every_key() {
        let n = ok(r#"
model = "o3"
approval_policy = "never"

[mcp_servers.docs]
command = "npx"
args = ["-y", "mcp-docs"]
env = { DOCS_TOKEN = "abc" }
env_vars = ["HOME_DIR"]
cwd = "/srv/docs"
enabled = false
enabled_tools = ["search", "read"]
disabled_tools = ["delete"]
startup_timeout_sec = 20
tool_timeout_sec = 60

[mcp_servers.remote]
url = "https://mcp.example.com/mcp"
http_headers = { "X-Team" = "core" }
env_http_headers = { "X-Api-Key" = "EXAMPLE_KEY" }
bearer_token_env_var = "EXAMPLE_TOKEN"
protocol = "2026-07-28"
"#);
        assert_eq!(n.source, Some(Source::ConfigToml));
        let docs = &n.entries[0];
        assert_eq!(
            docs.leg,
            Leg::Stdio {
                command: "npx".into(),
                args: vec!["-y".into(), "mcp-docs".into()],
                env: [("DOCS_TOKEN".to_string(), "abc".to_string())].into(),
                cwd: Some("/srv/docs".into()),
            }
        );
        // env_vars is a passthrough list, not an env value
        assert_eq!(docs.env_vars, ["HOME_DIR"]);
        assert_eq!(
            (docs.enabled, docs.allow.clone(), docs.deny.clone()),
            (
                Some(false),
                Some(vec!["search".into(), "read".into()]),
                vec!["delete".into()]
            )
        );
        let remote = &n.entries[1];
        assert_eq!(
            remote.leg,
            http(
                "https://mcp.example.com/mcp",
                &[
                    ("Authorization", "Bearer ${EXAMPLE_TOKEN}"),
                    ("X-Api-Key", "${EXAMPLE_KEY}"),
                    ("X-Team", "core")
                ]
            )
        );
        assert_eq!(
            remote.protocol,
            EraChoice::Pinned(crate::mcp::era::Era::Modern)
        );
        let notes = n.notes.join("\n");
        assert!(
            notes.contains(
                "ignored top-level keys that are not MCP servers: approval_policy, model"
            ),
            "{notes}"
        );
        assert_eq!(
            (
                docs.options.connect_timeout_ms,
                docs.options.call_timeout_ms
            ),
            (Some(20_000), Some(60_000))
        );
        assert!(!notes.contains("timeout"), "{notes}");
    }

    #[test]
    fn vscode_jsonc_as_written_on_disk() {
        let n = ok(r#"// VS Code writes JSONC
{
  "inputs": [
    {"type": "promptString", "id": "api-key", "description": "API key", "password": true},
    {"type": "pickString", "id": "mode", "options": ["a", "b"]},
  ],
  "servers": {
    /* the memory server */
    "memory": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-memory",],
               "envFile": "${workspaceFolder}/.env"},
  },
}"#);
        assert_eq!(n.entries.len(), 1, "{n:?}");
        assert_eq!(
            n.entries[0].options.env_file.as_deref(),
            Some("${workspaceFolder}/.env")
        );
        assert_eq!(
            n.inputs,
            vec![Input {
                id: "api-key".into(),
                description: "API key".into(),
                password: true
            }]
        );
    }

    #[test]
    fn gemini_settings_and_timeout_bounds() {
        let n = ok(r#"{"mcpServers": {
            "remote": {"httpUrl": "https://mcp.example.com/mcp", "timeout": 900000,
                       "includeTools": ["a"], "excludeTools": ["b"]},
            "slow": {"command": "uvx", "args": ["slow"], "startup_timeout_sec": 40},
            "bad": {"command": "x", "tool_timeout_sec": "soon"}
        }}"#);
        let remote = &n.entries[0];
        assert_eq!(remote.leg, http("https://mcp.example.com/mcp", &[]));
        assert_eq!(
            (remote.allow.clone(), remote.deny.clone()),
            (Some(vec!["a".to_string()]), vec!["b".to_string()])
        );
        assert_eq!(remote.options.call_timeout_ms, Some(600_000), "clamped");
        assert!(
            n.notes.iter().any(|m| m.contains("above MCP_TIMEOUT_MAX")),
            "{:?}",
            n.notes
        );
        assert_eq!(n.entries[1].options.connect_timeout_ms, Some(40_000));
        assert_eq!(n.refused[0].0, "bad");
        assert!(n.refused[0].1.contains("must be a positive number"));
    }

    #[test]
    fn bare_entries_urls_and_command_lines() {
        let n =
            ok(r#"{"command": "npx", "args": ["-y", "@modelcontextprotocol/server-everything"]}"#);
        assert_eq!(n.entries[0].name, "server-everything");
        let n = ok(r#"{"url": "http://127.0.0.1:3001/mcp"}"#);
        assert_eq!(
            (n.entries[0].name.as_str(), &n.entries[0].leg),
            ("127-0-0-1", &http("http://127.0.0.1:3001/mcp", &[]))
        );
        let n = ok("https://mcp.deepwiki.com/mcp");
        assert_eq!(
            (n.entries[0].name.as_str(), n.source.clone()),
            ("mcp-deepwiki-com", Some(Source::Explicit))
        );
        let n = ok("uvx mcp-server-time --local-timezone 'Europe/Oslo'");
        assert_eq!(
            n.entries[0].leg,
            stdio(
                "uvx",
                &["mcp-server-time", "--local-timezone", "Europe/Oslo"],
                &[]
            )
        );
        assert_eq!(n.entries[0].name, "mcp-server-time");
        assert_eq!(
            ok("docker run -i --rm ghcr.io/github/github-mcp-server").entries[0].name,
            "github-mcp-server"
        );
        assert_eq!(ok("python3 /opt/srv/weather.py").entries[0].name, "weather");
    }

    #[test]
    fn refusals_and_errors() {
        let n = ok(
            r#"{"mcpServers": {"old": {"type": "sse", "url": "http://x/sse"}, "bad name": {"command": "x"}, "ok": {"command": "x"}}}"#,
        );
        assert_eq!(n.entries.len(), 1);
        let refused: Vec<&str> = n.refused.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(refused, ["bad name", "old"]);
        assert!(n.refused[1].1.contains("legacy HTTP+SSE"));
        for (text, want) in [
            (
                "{\"mcpServers\": {\n  \"a\": {\"command\" \"x\"}\n}}",
                "JSON error at line 2, column",
            ),
            (
                "[mcp_servers.a]\ncommand = \n",
                "TOML error at line 2, column",
            ),
            ("", "nothing to add"),
            ("{\"name\": \"x\"}", "no mcpServers or servers wrapper"),
            (
                "https://github.com/modelcontextprotocol/servers/tree/main/src/time",
                "is a repository",
            ),
        ] {
            let e = normalize(text, false).expect_err(text).to_string();
            assert!(e.contains(want), "{text}: {e}");
        }
    }

    #[test]
    fn npx_is_wrapped_on_windows_only() {
        let n = normalize("npx -y pkg", true).unwrap();
        assert_eq!(
            n.entries[0].leg,
            stdio("cmd", &["/c", "npx", "-y", "pkg"], &[])
        );
        let n = normalize("uvx pkg", true).unwrap();
        assert_eq!(n.entries[0].leg, stdio("uvx", &["pkg"], &[]));
        assert_eq!(
            normalize("npx -y pkg", false).unwrap().entries[0].leg,
            stdio("npx", &["-y", "pkg"], &[])
        );
    }
}
