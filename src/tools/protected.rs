//! Places a read-only tool may not look into without asking: `/proc` (every process's
//! `environ`, including an MCP server started with a secret in its `env` and the shell
//! that started tai) and tai's own files (the vault directory and the config file).
//!
//! Redaction cannot stop a model that transforms what it reads (`tr a-z b-za`, one
//! character a line), so the sources are guarded instead: a read-only `shell` line that
//! names such a place — or, for a search that recurses, a folder that holds one (`grep -r
//! x ~`, `find /`) — asks like any other action; `read_file`, `list_dir`, `glob` and
//! `grep`, which run inside tai's own process (`/proc/self` is tai), refuse in every
//! mode. Paths are resolved against the tool's working folder and, when they exist,
//! through their symlinks.

use std::path::{Component, Path, PathBuf};

use serde_json::{Map, Value};

use crate::config::Config;

/// The protected places of one process.
#[derive(Clone, Debug)]
pub struct Protected {
    roots: Vec<PathBuf>,
}

/// Programs of the read-only shell allowlist that can walk a folder tree (`ls` only
/// with `-R`).
const RECURSIVE_PROGRAMS: &[&str] = &["grep", "rg", "find", "du", "tree"];

fn recurses(program: &str, args: &[String]) -> bool {
    RECURSIVE_PROGRAMS.contains(&program)
        || (program == "ls"
            && args.iter().any(|a| {
                a == "--recursive"
                    || (a.starts_with('-') && !a.starts_with("--") && a.contains('R'))
            }))
}

impl Protected {
    /// `/proc` and tai's own files: the folder holding the vault, and the config file.
    pub fn new(vault_dir: &Path, config_file: &Path) -> Protected {
        let mut roots = vec![PathBuf::from("/proc")];
        for p in [vault_dir, config_file] {
            roots.push(resolve(p, Path::new("/")));
        }
        Protected { roots }
    }

    /// Whether reading `path` (relative to `cwd`) can reach a protected place: it lies
    /// inside one, or — when the read recurses — it is a folder that holds one.
    pub fn reaches(&self, path: &str, cwd: &Path, recursive: bool) -> bool {
        let p = resolve(Path::new(path), cwd);
        self.roots
            .iter()
            .any(|root| p.starts_with(root) || (recursive && root.starts_with(&p)))
    }

    /// Whether a shell line's words (segments of words, as the read-only classifier
    /// split them) can reach a protected place, run in `cwd`.
    pub fn reached_by_words(&self, segments: &[Vec<String>], cwd: &Path) -> bool {
        segments.iter().any(|words| {
            let Some((program, rest)) = words.split_first() else {
                return false;
            };
            let recursive = recurses(program, rest);
            for w in rest {
                if w.contains("environ") {
                    return true;
                }
                for candidate in path_candidates(w) {
                    if self.reaches(candidate, cwd, recursive) {
                        return true;
                    }
                }
            }
            // A search may walk the working folder whatever its words say (which word is
            // a pattern and which a folder is the program's business, not a guess here).
            recursive && self.reaches(".", cwd, true)
        })
    }
}

/// The paths a word may name: the word, an option's attached value (`--file=P`), and
/// from the first `/` of an option word (`-f/proc/self/environ`).
fn path_candidates(word: &str) -> Vec<&str> {
    let mut out = Vec::new();
    if !word.starts_with('-') {
        out.push(word);
    }
    if let Some((_, value)) = word.split_once('=') {
        out.push(value);
    }
    if word.starts_with('-')
        && let Some(at) = word.find('/')
    {
        out.push(&word[at..]);
    }
    out
}

/// Whether the native tool call `tool(args)`, otherwise read-only, reaches a protected
/// place of this process (and so must ask).
pub fn reached_by_call(tool: &str, args: &Map<String, Value>, config: &Config) -> bool {
    if !matches!(tool, "read_file" | "list_dir" | "glob" | "grep" | "shell") {
        return false;
    }
    let vault_dir = config.vault_path.parent().unwrap_or(Path::new("/"));
    with_own_places(vault_dir, &config.config_path, |places| {
        let path = |key: &str| args.get(key).and_then(Value::as_str).unwrap_or(".");
        // The working folder only matters for a relative path (`join` drops it otherwise).
        let here = || std::env::current_dir().unwrap_or_else(|_| PathBuf::from("/"));
        let base = |p: &str| {
            if Path::new(p).is_absolute() {
                PathBuf::from("/")
            } else {
                here()
            }
        };
        match tool {
            "read_file" | "list_dir" => places.reaches(path("path"), &base(path("path")), false),
            "glob" | "grep" => places.reaches(path("path"), &base(path("path")), true),
            _ => {
                let cwd = resolve(Path::new(path("cwd")), &here());
                let command = args.get("command").and_then(Value::as_str).unwrap_or("");
                // A line the classifier cannot split asks anyway.
                super::shell_policy::segments(command)
                    .is_ok_and(|segments| places.reached_by_words(&segments, &cwd))
            }
        }
    })
}

/// tai's own places as last resolved: the inputs, what each named then (device and
/// inode, `None` when absent), and the resolved places.
struct OwnPlaces {
    vault_dir: PathBuf,
    config_file: PathBuf,
    identities: [Option<(u64, u64)>; 2],
    places: Protected,
}

thread_local! {
    /// The server checks every read-only call against tai's own places; resolving them
    /// through their symlinks each time was 8 `readlink`s a call (docs/benchmarks.md).
    static OWN_PLACES: std::cell::RefCell<Option<OwnPlaces>> = const { std::cell::RefCell::new(None) };
}

/// What `path` names now (following symlinks): device and inode, `None` when absent.
fn identity(path: &Path) -> Option<(u64, u64)> {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata(path).ok().map(|m| (m.dev(), m.ino()))
}

/// Run `check` with tai's own places (`/proc`, the vault folder, the config file). They
/// are resolved again whenever either path names another file than when last resolved
/// (one `stat` each per call instead of resolving every component): a symlink swapped,
/// a config file created or removed while tai serves is seen on the next call.
fn with_own_places<R>(
    vault_dir: &Path,
    config_file: &Path,
    check: impl FnOnce(&Protected) -> R,
) -> R {
    let identities = [identity(vault_dir), identity(config_file)];
    OWN_PLACES.with(|cell| {
        let mut cached = cell.borrow_mut();
        let current = cached.as_ref().is_some_and(|c| {
            c.vault_dir == vault_dir && c.config_file == config_file && c.identities == identities
        });
        if !current {
            *cached = Some(OwnPlaces {
                vault_dir: vault_dir.to_path_buf(),
                config_file: config_file.to_path_buf(),
                identities,
                places: Protected::new(vault_dir, config_file),
            });
        }
        match cached.as_ref() {
            Some(c) => check(&c.places),
            None => check(&Protected::new(vault_dir, config_file)),
        }
    })
}

/// `path` made absolute against `cwd`, through its symlinks when it exists, else
/// normalized by its components (`.` dropped, `..` climbs).
fn resolve(path: &Path, cwd: &Path) -> PathBuf {
    let joined = cwd.join(path);
    if let Ok(real) = std::fs::canonicalize(&joined) {
        return real;
    }
    let mut out = PathBuf::from("/");
    for c in joined.components() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::Normal(n) => out.push(n),
            Component::RootDir | Component::CurDir | Component::Prefix(_) => {}
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn places() -> Protected {
        Protected::new(
            Path::new("/home/u/.local/share/tai"),
            Path::new("/home/u/.config/tai/config.toml"),
        )
    }

    #[test]
    fn paths_inside_or_holding_a_protected_place() {
        let p = places();
        let cwd = Path::new("/home/u/project");
        let table: &[(&str, bool, bool)] = &[
            // (path, recursive, reaches)
            ("/proc/self/environ", false, true),
            ("/proc/1/environ", false, true),
            ("../../../../proc/1/environ", false, true),
            ("/home/u/.local/share/tai/vault.db", false, true),
            ("../.local/share/tai/vault.db", false, true),
            ("/home/u/.config/tai/config.toml", false, true),
            ("src/main.rs", false, false),
            ("README.md", false, false),
            (".", true, false),
            ("/home/u", false, false),
            ("/home/u", true, true),
            ("/", true, true),
            ("..", true, true),
            ("/etc", true, false),
            ("/home/u/.config/tai/other.toml", false, false),
        ];
        for (path, recursive, want) in table {
            assert_eq!(
                p.reaches(path, cwd, *recursive),
                *want,
                "{path} {recursive}"
            );
        }
    }

    #[test]
    fn own_places_are_resolved_again_when_a_path_names_another_file() {
        let dir = std::env::temp_dir().join(format!("tai-protected-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let (vault, elsewhere) = (dir.join("vault"), dir.join("elsewhere"));
        std::fs::create_dir_all(&vault).unwrap();
        std::fs::create_dir_all(&elsewhere).unwrap();
        let target = elsewhere.join("real.toml");
        std::fs::write(&target, "x").unwrap();
        let config = dir.join("config.toml");
        let target_s = target.display().to_string();
        let reaches = || {
            with_own_places(&vault, &config, |p| {
                p.reaches(&target_s, Path::new("/"), false)
            })
        };
        // No config file yet: the file elsewhere is not tai's.
        assert!(!reaches());
        assert!(!reaches());
        // The config file appears as a symlink to it: from the next call on it is.
        std::os::unix::fs::symlink(&target, &config).unwrap();
        assert!(reaches());
        // Swapped to point elsewhere: the old target is no longer tai's, the new one is.
        std::fs::remove_file(&config).unwrap();
        let other = elsewhere.join("other.toml");
        std::fs::write(&other, "y").unwrap();
        std::os::unix::fs::symlink(&other, &config).unwrap();
        assert!(!reaches());
        assert!(with_own_places(&vault, &config, |p| {
            p.reaches(&other.display().to_string(), Path::new("/"), false)
        }));
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn shell_words() {
        let p = places();
        let seg = |line: &str| -> Vec<Vec<String>> {
            line.split('|')
                .map(|s| s.split_whitespace().map(String::from).collect())
                .collect()
        };
        let project = Path::new("/home/u/project");
        let home = Path::new("/home/u");
        let table: &[(&str, &Path, bool)] = &[
            ("cat /proc/self/environ", project, true),
            ("cat /proc/1/environ | tr a-z b-za", project, true),
            ("grep -ra --include=environ -o x /proc", project, true),
            ("grep -f/proc/self/environ x", project, true),
            ("grep -rn x --include=*environ*", project, true),
            ("grep -r TODO", home, true),
            ("grep -r TODO", project, false),
            ("grep -r TODO src", home, true),
            ("grep -r -A 3 TODO", home, true),
            ("find / -name x", project, true),
            ("cat Cargo.toml", home, false),
            ("cat ../.local/share/tai/vault.db", project, true),
            ("ls", project, false),
            ("ls ..", project, false),
            ("ls -R ..", project, true),
            ("git status", project, false),
            ("echo hello", Path::new("/"), false),
        ];
        for (line, cwd, want) in table {
            assert_eq!(
                p.reached_by_words(&seg(line), cwd),
                *want,
                "{line} in {cwd:?}"
            );
        }
    }
}
