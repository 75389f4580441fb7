//! The REPL's history: `$XDG_STATE_HOME/tai/history` (else `~/.local/state/tai/history`),
//! one line per entry, mode 0600, the last `HISTORY_MAX` kept.
//!
//! Secrets are never written: a line holding a value the vault knows (the redaction
//! set), a line that looks like it carries a key or token, and a line starting with a
//! space (as in shells) stay out of the file.

use std::io::Write;
use std::path::PathBuf;

/// Lines kept in the history file.
pub use crate::limits::HISTORY_MAX;

/// Where the history lives, from the environment (`None`: no home to put it in).
pub fn path(env: &dyn Fn(&str) -> Option<String>) -> Option<PathBuf> {
    let state = env("XDG_STATE_HOME")
        .map(PathBuf::from)
        .or_else(|| env("HOME").map(|h| PathBuf::from(h).join(".local/state")))?;
    Some(state.join("tai/history"))
}

/// Whether a line may be written (pure): `redacted` is the line after the vault's
/// redaction; it differs when the line holds a known secret.
pub fn may_keep(line: &str, redacted: &str) -> bool {
    const TOKEN_PREFIXES: &[&str] = &[
        "sk-",
        "ghp_",
        "gho_",
        "ghs_",
        "github_pat_",
        "xoxb-",
        "xoxp-",
        "AKIA",
        "glpat-",
        "hf_",
        "AIza",
    ];
    let looks_secret = line
        .split(|c: char| c.is_whitespace() || c == '=' || c == '"' || c == '\'')
        .any(|w| {
            TOKEN_PREFIXES
                .iter()
                .any(|p| w.starts_with(p) && w.len() >= p.len() + 8)
        });
    !line.trim().is_empty()
        && !line.starts_with(' ')
        && !line.contains('\n')
        && line == redacted
        && !looks_secret
}

/// The kept lines, oldest first (a missing file is an empty history).
pub fn load(path: &std::path::Path) -> Vec<String> {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let lines: Vec<String> = text.lines().map(str::to_string).collect();
    let skip = lines.len().saturating_sub(HISTORY_MAX);
    lines.into_iter().skip(skip).collect()
}

/// Append one line (the caller checked `may_keep`), creating the file 0600.
pub fn append(path: &std::path::Path, line: &str) -> std::io::Result<()> {
    use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
    if let Some(dir) = path.parent() {
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)?;
    }
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .mode(0o600)
        .open(path)?;
    writeln!(f, "{line}")
}

/// Where the REPL's lines come from: the terminal through the line editor (with
/// history), or stdin as plain lines when it is not a terminal.
pub struct Prompter {
    piped: Option<std::io::Lines<std::io::StdinLock<'static>>>,
    lines: Vec<String>,
    file: Option<PathBuf>,
}

impl Prompter {
    pub fn new(env: &dyn Fn(&str) -> Option<String>) -> Prompter {
        use std::io::{BufRead, IsTerminal};
        let terminal = std::io::stdin().is_terminal() && crate::term::has_tty();
        let file = path(env);
        Prompter {
            piped: (!terminal).then(|| std::io::stdin().lock().lines()),
            lines: match (&file, terminal) {
                (Some(f), true) => load(f),
                _ => Vec::new(),
            },
            file,
        }
    }

    /// The next line (`None` at the end of input). Piped input gets the prompt on stdout
    /// as before; the terminal gets the editor.
    pub fn next_line(&mut self, prompt: &str) -> Option<std::io::Result<String>> {
        match &mut self.piped {
            Some(lines) => {
                let _ = super::render::out(prompt);
                lines.next()
            }
            None => super::line_editor::read_line(prompt, &self.lines).transpose(),
        }
    }

    /// Keep an entered line in the history unless it may hold a secret.
    pub fn remember(&mut self, line: &str, redacted: &str) {
        if self.piped.is_some() || !may_keep(line, redacted) {
            return;
        }
        if self.lines.last().map(String::as_str) != Some(line) {
            self.lines.push(line.to_string());
            if let Some(f) = &self.file {
                let _ = append(f, line);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_is_kept() {
        for (line, redacted, keep) in [
            ("explain main.rs", "explain main.rs", true),
            (
                "use the key sk-abcdefgh12345",
                "use the key sk-abcdefgh12345",
                false,
            ),
            (
                "token=ghp_0123456789abcdef",
                "token=ghp_0123456789abcdef",
                false,
            ),
            (
                "my vault value hunter2-long",
                "my vault value [secret:x]",
                false,
            ),
            (" private line", " private line", false),
            ("", "", false),
            ("sk- is a prefix", "sk- is a prefix", true),
        ] {
            assert_eq!(may_keep(line, redacted), keep, "{line:?}");
        }
        let env = |k: &str| match k {
            "HOME" => Some("/home/me".to_string()),
            _ => None,
        };
        assert_eq!(
            path(&env),
            Some(PathBuf::from("/home/me/.local/state/tai/history"))
        );
        let xdg = |k: &str| (k == "XDG_STATE_HOME").then(|| "/s".to_string());
        assert_eq!(path(&xdg), Some(PathBuf::from("/s/tai/history")));
    }
}
