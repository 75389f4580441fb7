//! The lazy tool system: which tool schemas the model gets this step.
//!
//! Core tools always; then the tools whose name and description words share stems with
//! the user's message and the recent turn (stop words out, light stemming), best score
//! first, up to a budget; plus any the model loaded with `tool_search`. The index is built
//! once from any iterator of `(name, description)` (native and bridged alike), so a
//! selection over thousands of schemas is a few hash lookups per message word.

use std::collections::{HashMap, HashSet};

/// Always offered.
pub const CORE: &[&str] = &[
    "read_file",
    "list_dir",
    "glob",
    "grep",
    "shell",
    "edit_file",
    "write_file",
    "tool_search",
];

const STOP: &[&str] = &[
    "a", "an", "the", "and", "or", "of", "to", "in", "on", "for", "with", "is", "are", "be", "it",
    "this", "that", "me", "my", "i", "you", "your", "please", "can", "could", "would", "what",
    "how", "do", "does", "from", "at", "by", "as", "all", "any", "some", "use", "using", "tool",
    "tools", "mcp", "get", "set", "want", "need", "now", "then",
];

/// Lower-case words of `text`, stop words removed, lightly stemmed.
pub fn stems(text: &str) -> impl Iterator<Item = String> + '_ {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| w.len() > 1)
        .map(str::to_lowercase)
        .filter(|w| !STOP.contains(&w.as_str()))
        .map(|w| stem(&w))
}

fn stem(w: &str) -> String {
    for suffix in ["ing", "ed", "es", "s"] {
        if let Some(base) = w.strip_suffix(suffix)
            && base.len() >= 3
        {
            return base.to_string();
        }
    }
    w.to_string()
}

pub struct ToolIndex {
    names: Vec<String>,
    /// stem → (tool index, weight): a word of the name weighs 2, of the description 1.
    postings: HashMap<String, Vec<(u32, u8)>>,
}

impl ToolIndex {
    pub fn new<'a>(tools: impl IntoIterator<Item = (&'a str, &'a str)>) -> ToolIndex {
        let mut names = Vec::new();
        let mut postings: HashMap<String, Vec<(u32, u8)>> = HashMap::new();
        for (i, (name, description)) in tools.into_iter().enumerate() {
            names.push(name.to_string());
            let mut seen: HashMap<String, u8> = HashMap::new();
            for s in stems(name) {
                seen.insert(s, 2);
            }
            for s in stems(description) {
                seen.entry(s).or_insert(1);
            }
            for (s, w) in seen {
                postings.entry(s).or_default().push((i as u32, w));
            }
        }
        ToolIndex { names, postings }
    }

    pub fn len(&self) -> usize {
        self.names.len()
    }

    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }

    /// Tools scored against `text`, best first (ties by name), at most `limit`.
    pub fn search(&self, text: &str, limit: usize) -> Vec<&str> {
        let mut score: HashMap<u32, u32> = HashMap::new();
        let words: HashSet<String> = stems(text).collect();
        for w in &words {
            for &(i, weight) in self.postings.get(w).map(Vec::as_slice).unwrap_or(&[]) {
                *score.entry(i).or_default() += u32::from(weight);
            }
        }
        let mut hits: Vec<(u32, &str)> = score
            .into_iter()
            .map(|(i, s)| (s, self.names[i as usize].as_str()))
            .collect();
        hits.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(b.1)));
        hits.into_iter().take(limit).map(|(_, n)| n).collect()
    }

    /// The tools for this step: core, loaded, then the best matches, within `budget`.
    pub fn select(&self, text: &str, loaded: &HashSet<String>, budget: usize) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        let known: HashSet<&str> = self.names.iter().map(String::as_str).collect();
        for c in CORE.iter().filter(|c| known.contains(**c)) {
            out.push(c.to_string());
        }
        let mut loaded: Vec<&String> = loaded
            .iter()
            .filter(|l| known.contains(l.as_str()))
            .collect();
        loaded.sort();
        for l in loaded {
            if !out.contains(l) {
                out.push(l.clone());
            }
        }
        for n in self.search(text, budget) {
            if out.len() >= budget {
                break;
            }
            if !out.iter().any(|o| o == n) {
                out.push(n.to_string());
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn index() -> ToolIndex {
        ToolIndex::new([
            ("read_file", "Read a text file with line numbers"),
            ("list_dir", "List a directory"),
            ("shell", "Run a shell command line"),
            ("tool_search", "Find tools by words"),
            ("mcp_add", "Add an MCP server from a pasted config"),
            ("mcp_list", "List the stored MCP servers"),
            ("secret_list", "List the names of the secrets in the vault"),
            (
                "mcp_github_create_issue",
                "Create a new issue in a GitHub repository",
            ),
            (
                "mcp_github_list_issues",
                "List issues of a GitHub repository",
            ),
            ("mcp_weather_forecast", "Weather forecast for a city"),
            ("audit_tail", "The newest rows of the audit trail"),
        ])
    }

    #[test]
    fn selection_table() {
        let idx = index();
        let none = HashSet::new();
        let table: &[(&str, &[&str], &[&str])] = &[
            (
                "open an issue on github about the crash",
                &["mcp_github_create_issue", "mcp_github_list_issues"],
                &["mcp_weather_forecast"],
            ),
            (
                "what's the weather forecast in Oslo?",
                &["mcp_weather_forecast"],
                &["mcp_github_create_issue"],
            ),
            (
                "which secrets are stored",
                &["secret_list"],
                &["mcp_weather_forecast"],
            ),
            ("add this server config", &["mcp_add"], &["audit_tail"]),
            ("hello", &[], &["mcp_add", "secret_list"]),
        ];
        for (msg, want, not) in table {
            let got = idx.select(msg, &none, 12);
            for c in ["read_file", "list_dir", "shell", "tool_search"] {
                assert!(
                    got.iter().any(|g| g == c),
                    "{msg}: core {c} missing from {got:?}"
                );
            }
            for w in *want {
                assert!(
                    got.iter().any(|g| g == w),
                    "{msg}: {w} missing from {got:?}"
                );
            }
            for n in *not {
                assert!(
                    !got.iter().any(|g| g == n),
                    "{msg}: {n} should not be in {got:?}"
                );
            }
        }
        // loaded tools stay; the budget holds
        let loaded: HashSet<String> = ["audit_tail".to_string()].into();
        assert!(
            idx.select("hello", &loaded, 12)
                .contains(&"audit_tail".to_string())
        );
        assert_eq!(idx.select("list list list", &none, 5).len(), 5);
        assert_eq!(idx.search("issues", 1), ["mcp_github_list_issues"]);
    }
}
