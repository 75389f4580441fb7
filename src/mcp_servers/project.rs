//! Project scope: the MCP configs a repository carries (`.mcp.json` for Claude Code,
//! `.vscode/mcp.json`, `.cursor/mcp.json`), found in the current directory or a parent up
//! to the repository root (the nearest folder holding `.git`). Pure: existence is asked
//! through a closure.

use std::path::{Path, PathBuf};

/// Where a repository keeps its MCP config, relative to a folder, and whose it is.
pub const PROJECT_FILES: &[(&str, &str)] = &[
    (".mcp.json", "Claude Code"),
    (".vscode/mcp.json", "VS Code"),
    (".cursor/mcp.json", "Cursor"),
];

/// The repository root above `cwd` (the nearest folder with `.git`), if any.
pub fn repo_root(cwd: &Path, exists: &dyn Fn(&Path) -> bool) -> Option<PathBuf> {
    cwd.ancestors()
        .find(|d| exists(&d.join(".git")))
        .map(Path::to_path_buf)
}

/// Whether a server tied to `project` (`None`: not tied) is in scope from `cwd`.
pub fn inside(project: Option<&str>, cwd: &Path) -> bool {
    project.is_none_or(|p| cwd.starts_with(p))
}

/// One project config found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProjectConfig {
    pub path: PathBuf,
    /// The folder the config belongs to (`${workspaceFolder}`, the recorded project).
    pub root: PathBuf,
    pub tool: &'static str,
}

/// The project configs in `cwd` and its parents, nearest first, stopping at the
/// repository root (only `cwd` itself when there is no repository).
pub fn find(cwd: &Path, exists: &dyn Fn(&Path) -> bool) -> Vec<ProjectConfig> {
    let stop = repo_root(cwd, exists);
    let mut out = Vec::new();
    for dir in cwd.ancestors() {
        for (rel, tool) in PROJECT_FILES {
            let path = dir.join(rel);
            if exists(&path) {
                out.push(ProjectConfig {
                    path,
                    root: dir.to_path_buf(),
                    tool,
                });
            }
        }
        if stop.as_deref().is_none_or(|s| s == dir) {
            break;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fs(files: &'static [&'static str]) -> impl Fn(&Path) -> bool {
        move |p: &Path| files.iter().any(|f| Path::new(f) == p)
    }

    #[test]
    fn table() {
        let cases: &[(&str, &[&str], &[&str])] = &[
            // cwd, files present, configs found
            ("/r/a/b", &["/r/.git", "/r/.mcp.json"], &["/r/.mcp.json"]),
            (
                "/r/a",
                &["/r/.git", "/r/a/.vscode/mcp.json", "/r/.cursor/mcp.json"],
                &["/r/a/.vscode/mcp.json", "/r/.cursor/mcp.json"],
            ),
            // above the repository root is never read
            ("/r/a", &["/r/a/.git", "/r/.mcp.json"], &[]),
            // no repository: the current directory only
            (
                "/x/y",
                &["/x/.mcp.json", "/x/y/.mcp.json"],
                &["/x/y/.mcp.json"],
            ),
            ("/x/y", &[], &[]),
        ];
        for (cwd, files, want) in cases {
            let files: &'static [&'static str] = files;
            let got: Vec<String> = find(Path::new(cwd), &fs(files))
                .iter()
                .map(|c| c.path.display().to_string())
                .collect();
            assert_eq!(got, *want, "{cwd} with {files:?}");
        }
        assert!(inside(None, Path::new("/x")));
        assert!(inside(Some("/r"), Path::new("/r/a")));
        assert!(!inside(Some("/r"), Path::new("/rr")));
        assert!(!inside(Some("/r/a"), Path::new("/r")));
        let found = find(Path::new("/r/a"), &fs(&["/r/.git", "/r/.vscode/mcp.json"]));
        assert_eq!(
            (found[0].root.as_path(), found[0].tool),
            (Path::new("/r"), "VS Code")
        );
    }
}
