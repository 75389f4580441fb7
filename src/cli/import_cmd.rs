//! Reading servers from where other tools keep them: `tai mcp import TOOL|FILE|-` and the
//! SOURCE rules of `tai mcp add` (a SOURCE that looks like a path is a file).
//!
//! Each tool's documented locations are a table (`LOCATIONS`); the servers are pulled
//! out of each file (`extract`, pure) so a settings file's other keys are not reported
//! as servers. VS Code `promptString` inputs are asked on the terminal and kept as vault
//! secrets by id; `${workspaceFolder}` and friends are substituted on the way in.

use crate::limits::FILE_MAX;
use std::io::Read;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value, json};

use super::{Context, Failure, Result};
use crate::config::process_env;
use crate::mcp_servers::editor_vars::EditorVars;
use crate::mcp_servers::normalize::Normalized;

/// The tools `tai mcp import TOOL` knows, with their config files. `~` is the home
/// folder, `@` the current project (the current directory up to the repository root).
pub const LOCATIONS: &[(&str, &[&str])] = &[
    (
        "claude-desktop",
        &[
            "~/.config/Claude/claude_desktop_config.json",
            "~/Library/Application Support/Claude/claude_desktop_config.json",
        ],
    ),
    ("claude-code", &["~/.claude.json", "@/.mcp.json"]),
    ("cursor", &["~/.cursor/mcp.json", "@/.cursor/mcp.json"]),
    (
        "vscode",
        &[
            "~/.config/Code/User/mcp.json",
            "~/.config/Code/User/settings.json",
            "~/Library/Application Support/Code/User/mcp.json",
            "@/.vscode/mcp.json",
        ],
    ),
    ("codex", &["~/.codex/config.toml"]),
    ("windsurf", &["~/.codeium/windsurf/mcp_config.json"]),
    (
        "gemini",
        &["~/.gemini/settings.json", "@/.gemini/settings.json"],
    ),
];

/// The tool names, for help and completions.
pub fn tool_names() -> Vec<&'static str> {
    LOCATIONS.iter().map(|(t, _)| *t).collect()
}

/// Whether a SOURCE is meant as a file: one word that names a config by its extension,
/// or starts like a path (`/`, `./`, `../`, `~/`). An existing executable is a command.
pub fn looks_like_path(source: &str) -> bool {
    let s = source.trim();
    if s.is_empty() || s.contains(char::is_whitespace) || s.contains("://") || s.starts_with('{') {
        return false;
    }
    let ext = [".json", ".jsonc", ".toml", ".yaml", ".yml"];
    ext.iter().any(|e| s.to_ascii_lowercase().ends_with(e))
        || ["/", "./", "../", "~/"].iter().any(|p| s.starts_with(p))
}

fn expand_home(path: &str) -> PathBuf {
    match (path.strip_prefix("~/"), process_env("HOME")) {
        (Some(rest), Some(home)) => Path::new(&home).join(rest),
        _ => PathBuf::from(path),
    }
}

/// A SOURCE's text: `-` reads stdin, a path is read as a file (a missing one says so),
/// anything else is the text itself. The second value is the file read, if any.
pub fn read_source(source: &str) -> Result<(String, Option<PathBuf>)> {
    if source == "-" {
        let mut s = String::new();
        std::io::stdin()
            .lock()
            .take(1 << 20)
            .read_to_string(&mut s)?;
        return Ok((s, None));
    }
    use std::os::unix::fs::PermissionsExt;
    let path = expand_home(source);
    let meta = std::fs::metadata(&path);
    let executable = meta
        .as_ref()
        .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0);
    let is_file = meta.as_ref().is_ok_and(|m| m.is_file());
    if executable && !looks_like_config_name(source) {
        return Ok((source.to_string(), None));
    }
    if is_file && !source.trim_start().starts_with('{') {
        let text =
            crate::regular_file::read_text(&path.to_string_lossy(), FILE_MAX).map_err(Failure)?;
        return Ok((config_text(&text, &path)?, Some(path)));
    }
    if looks_like_path(source) {
        return Err(Failure(format!(
            "{source}: no such file (a SOURCE that looks like a path is read as a config file; \
             to run a command, give the command line)"
        )));
    }
    Ok((source.to_string(), None))
}

fn looks_like_config_name(source: &str) -> bool {
    [".json", ".jsonc", ".toml"]
        .iter()
        .any(|e| source.to_ascii_lowercase().ends_with(e))
}

/// A file's text when it is a JSON(C) or TOML config; anything else (a goose
/// `config.yaml`, a script) is refused rather than run.
fn config_text(text: &str, path: &Path) -> Result<String> {
    let t = crate::jsonc::strip(text);
    let t = t.trim_start().trim_start_matches('\u{feff}');
    let toml_like = text.lines().any(|l| l.trim_start().starts_with('['));
    let raw = text.trim_start();
    let url = raw.starts_with("https://") || raw.starts_with("http://");
    if t.starts_with('{') || toml_like || url {
        return Ok(text.to_string());
    }
    Err(Failure(format!(
        "{}: not a JSON or TOML MCP config (tai reads Claude, Cursor, VS Code, Windsurf and \
         Gemini JSON and Codex TOML; YAML is not read)",
        path.display()
    )))
}

/// Only the servers of a tool's file, as a config tai normalizes: `mcpServers` (and, in
/// `~/.claude.json`, the current project's `projects[cwd].mcpServers`), VS Code's
/// `servers` + `inputs` (or `mcp` in `settings.json`). `None`: the file holds no servers.
pub fn extract(doc: &Value, cwd: &str) -> Option<Value> {
    let obj = doc.as_object()?;
    let mut servers = Map::new();
    if let Some(m) = obj.get("mcpServers").and_then(Value::as_object) {
        servers.extend(m.clone());
    }
    let project = obj
        .get("projects")
        .and_then(|p| p.get(cwd))
        .and_then(|p| p.get("mcpServers"))
        .and_then(Value::as_object);
    if let Some(m) = project {
        servers.extend(m.clone());
    }
    if !servers.is_empty() {
        return Some(json!({ "mcpServers": servers }));
    }
    let vscode = obj.get("mcp").filter(|m| m.is_object()).unwrap_or(doc);
    let servers = vscode.get("servers").filter(|s| s.is_object())?;
    let mut out = json!({ "servers": servers });
    if let Some(inputs) = vscode.get("inputs") {
        out["inputs"] = inputs.clone();
    }
    Some(out)
}

/// A tool's config file that exists; `project` is the folder of a project's own config.
pub struct Found {
    pub file: PathBuf,
    pub project: Option<PathBuf>,
}

/// The files of one tool that exist, in the table's order (`None`: not a tool).
pub fn tool_files(tool: &str, home: &Path, cwd: &Path) -> Option<Vec<Found>> {
    let (_, paths) = LOCATIONS.iter().find(|(t, _)| *t == tool)?;
    let codex_home = process_env("CODEX_HOME").map(PathBuf::from);
    let exists = |p: &Path| p.exists();
    let root = crate::mcp_servers::project::repo_root(cwd, &exists);
    let mut out = Vec::new();
    for p in *paths {
        if let Some(rest) = p.strip_prefix("@/") {
            // this directory, then its parents up to the repository root
            for dir in cwd.ancestors() {
                out.push(Found {
                    file: dir.join(rest),
                    project: Some(dir.to_path_buf()),
                });
                if root.as_deref().is_none_or(|r| r == dir) {
                    break;
                }
            }
        } else if let Some(rest) = p.strip_prefix("~/") {
            let file = match (&codex_home, rest.strip_prefix(".codex/")) {
                (Some(ch), Some(r)) => ch.join(r),
                _ => home.join(rest),
            };
            out.push(Found {
                file,
                project: None,
            });
        }
    }
    out.retain(|f| f.file.is_file());
    Some(out)
}

/// One file or text to add from, with the folder `${workspaceFolder}` means there.
pub struct Origin {
    pub label: String,
    pub text: String,
    pub workspace: PathBuf,
    /// Set when the config is a project's own (recorded with each server).
    pub project: Option<PathBuf>,
}

/// A config file's servers as text tai normalizes (`None`: it holds none).
pub fn file_origin(file: &Path, cwd: &Path) -> Result<Option<String>> {
    let text =
        crate::regular_file::read_text(&file.to_string_lossy(), FILE_MAX).map_err(Failure)?;
    if file.extension().is_some_and(|e| e == "toml") {
        // Codex's config.toml: only its [mcp_servers.*] (a syntax error is the normalizer's)
        let Ok(mut doc) = toml::from_str::<toml::Table>(&text) else {
            return Ok(Some(text));
        };
        let Some(servers) = doc.remove("mcp_servers") else {
            return Ok(None);
        };
        let mut only = toml::Table::new();
        only.insert("mcp_servers".into(), servers);
        return Ok(Some(toml::to_string(&only).unwrap_or(text)));
    }
    let doc = crate::jsonc::parse(&text).map_err(|e| {
        Failure(format!(
            "{}: JSON error at line {}, column {}: {e}",
            file.display(),
            e.line(),
            e.column()
        ))
    })?;
    Ok(extract(&doc, &cwd.to_string_lossy()).map(|v| v.to_string()))
}

/// The origins `tai mcp import WHAT` reads: a tool's files, a file, or stdin.
pub fn origins(what: &str) -> Result<Vec<Origin>> {
    let cwd = std::env::current_dir()?;
    let home = process_env("HOME").map(PathBuf::from).unwrap_or_default();
    let workspace = {
        let exists = |p: &Path| p.exists();
        crate::mcp_servers::project::repo_root(&cwd, &exists).unwrap_or_else(|| cwd.clone())
    };
    if let Some(files) = tool_files(what, &home, &cwd) {
        let paths = LOCATIONS
            .iter()
            .find(|(t, _)| *t == what)
            .map_or(&[][..], |(_, p)| *p);
        let mut out = Vec::new();
        for Found { file, project } in files {
            if let Some(text) = file_origin(&file, &cwd)? {
                out.push(Origin {
                    label: file.display().to_string(),
                    text,
                    workspace: project.clone().unwrap_or_else(|| workspace.clone()),
                    project,
                });
            }
        }
        if out.is_empty() {
            return Err(Failure(format!(
                "no {what} servers found (looked in {}; @ is this directory and its parents up to the repository root)",
                paths.join(", ")
            )));
        }
        return Ok(out);
    }
    let (text, file) = read_source(what)?;
    if file.is_none() && what != "-" {
        return Err(Failure(format!(
            "{what}: no such file, and not a tool tai imports from ({})",
            tool_names().join(", ")
        )));
    }
    // a repository's own config (`.mcp.json`, `.vscode/mcp.json`, …) stays tied to it
    let project = file.as_ref().and_then(|f| {
        let f = std::fs::canonicalize(f).ok()?;
        crate::mcp_servers::project::PROJECT_FILES
            .iter()
            .find_map(|(rel, _)| {
                let mut root = f.clone();
                for _ in Path::new(rel).components() {
                    root.pop();
                }
                (root.join(rel) == f).then_some(root)
            })
    });
    Ok(vec![Origin {
        label: file.map_or_else(|| "stdin".to_string(), |f| f.display().to_string()),
        text,
        workspace: project.clone().unwrap_or(workspace),
        project,
    }])
}

/// Untrusted text made safe to show: control characters are escaped.
fn visible(text: &str) -> String {
    text.chars()
        .flat_map(|c| {
            let shown: Vec<char> = if c.is_control() {
                c.escape_unicode().collect()
            } else {
                vec![c]
            };
            shown
        })
        .collect()
}

/// The editor variables for configs read from `workspace`.
pub fn editor_vars(workspace: &Path) -> EditorVars {
    EditorVars {
        workspace_folder: workspace.display().to_string(),
        user_home: process_env("HOME").unwrap_or_default(),
    }
}

/// Ask for each `promptString` input the entries use and the vault lacks, on the
/// terminal (hidden when `password`), and keep the answer as the vault secret `id`.
/// Without a terminal nothing is asked: the add then names the missing secret.
pub fn ask_inputs(ctx: &mut Context, n: &Normalized) -> Result {
    for input in &n.inputs {
        if crate::vault::check_name("secret", &input.id).is_err()
            || ctx.store.secret_get(&input.id)?.is_some()
            || !crate::term::has_tty()
        {
            continue;
        }
        let what = if input.description.is_empty() {
            input.id.clone()
        } else {
            visible(&input.description)
        };
        let prompt = format!("{what} (kept as the vault secret {:?}): ", input.id);
        let value = if input.password {
            crate::term::read_hidden(&prompt)?
        } else {
            crate::term::read_line(&prompt)?
        };
        if value.is_empty() {
            continue;
        }
        ctx.store.secret_set(&input.id, &value)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A project's config that is a FIFO (or a link to a device) is refused at once: the
    /// project offer reads what merely exists, and a planted FIFO would wait forever.
    #[test]
    fn a_planted_fifo_or_device_config_is_refused_not_waited_on() {
        let dir = std::env::temp_dir().join(format!("tai-import-fifo-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let fifo = dir.join(".mcp.json");
        nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::S_IRWXU).unwrap();
        let zero = dir.join("zero.json");
        std::os::unix::fs::symlink("/dev/zero", &zero).unwrap();
        for path in [&fifo, &zero] {
            let got = file_origin(path, &dir).map_err(|e| e.0);
            assert!(
                matches!(&got, Err(e) if e.contains("not a regular file")),
                "{}: {got:?}",
                path.display()
            );
        }
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn what_looks_like_a_path() {
        for (s, want) in [
            ("claude_desktop_confg.json", true),
            ("config.yaml", true),
            ("./srv", true),
            ("~/mcp.jsonc", true),
            ("/etc/tai/servers.toml", true),
            ("npx -y pkg", false),
            ("uvx", false),
            ("https://x/mcp.json", false),
            ("{\"command\":\"x\"}", false),
            ("", false),
        ] {
            assert_eq!(looks_like_path(s), want, "{s:?}");
        }
    }

    #[test]
    fn extract_takes_only_the_servers() {
        let cases = [
            (
                json!({"numStartups": 3, "mcpServers": {"a": {"command": "x"}},
                       "projects": {"/p": {"mcpServers": {"b": {"command": "y"}}}, "/q": {"mcpServers": {"c": {}}}}}),
                Some(json!({"mcpServers": {"a": {"command": "x"}, "b": {"command": "y"}}})),
            ),
            (
                json!({"editor.fontSize": 12, "mcp": {"servers": {"s": {"command": "x"}}, "inputs": []}}),
                Some(json!({"servers": {"s": {"command": "x"}}, "inputs": []})),
            ),
            (
                json!({"servers": {"s": {"url": "http://h/mcp"}}}),
                Some(json!({"servers": {"s": {"url": "http://h/mcp"}}})),
            ),
            (json!({"theme": "dark"}), None),
            (json!([1]), None),
        ];
        for (doc, want) in cases {
            assert_eq!(extract(&doc, "/p"), want, "{doc}");
        }
    }

    #[test]
    fn every_tool_has_locations() {
        assert_eq!(
            tool_names(),
            [
                "claude-desktop",
                "claude-code",
                "cursor",
                "vscode",
                "codex",
                "windsurf",
                "gemini"
            ]
        );
    }
}
