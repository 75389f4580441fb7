//! File tools: `read_file`, `write_file`, `edit_file`, `list_dir`, `glob`, `grep`.
//! Reads are safe; writes ask approval (through the agent's policy).

use std::path::{Path, PathBuf};

use serde_json::{Map, Value, json};

use super::{NativeTool, ToolContext, ToolDef, ToolOutput, arg_str};

use crate::limits::{FILE_MAX, GREP_MAX_MATCHES, READ_LIMIT_DEFAULT, WALK_MAX_FILES};
use crate::regular_file::write_text;

pub fn tools() -> Vec<Box<dyn NativeTool>> {
    vec![
        Box::new(ReadFile),
        Box::new(WriteFile),
        Box::new(EditFile),
        Box::new(ListDir),
        Box::new(Glob),
        Box::new(Grep),
    ]
}

fn int(args: &Map<String, Value>, key: &str) -> Option<usize> {
    args.get(key).and_then(Value::as_u64).map(|n| n as usize)
}

/// `path` read as UTF-8 text, at most `FILE_MAX` bytes, regular files only.
fn read_text(path: &str) -> Result<String, String> {
    crate::regular_file::read_text(path, FILE_MAX)
}

struct ReadFile;
impl NativeTool for ReadFile {
    fn def(&self) -> ToolDef {
        ToolDef {
            name: "read_file",
            description: "Read a text file with line numbers. offset is the first line (1-based), limit the number of lines (default 2000).",
            parameters: json!({"type": "object", "properties": {
                "path": {"type": "string"}, "offset": {"type": "integer"}, "limit": {"type": "integer"}
            }, "required": ["path"]}),
            safe: true,
        }
    }

    fn run(&self, _ctx: &mut ToolContext<'_>, args: &Map<String, Value>) -> ToolOutput {
        let path = arg_str(args, "path");
        let text = match read_text(path) {
            Ok(t) => t,
            Err(e) => return ToolOutput::error(e),
        };
        let offset = int(args, "offset").unwrap_or(1).max(1);
        let limit = int(args, "limit").unwrap_or(READ_LIMIT_DEFAULT).max(1);
        let total = text.lines().count();
        let mut out: String = text
            .lines()
            .enumerate()
            .skip(offset - 1)
            .take(limit)
            .map(|(i, l)| format!("{:>6}\t{l}\n", i + 1))
            .collect();
        if offset - 1 + limit < total {
            out.push_str(&format!(
                "… {} more lines (read on with offset={})\n",
                total - (offset - 1 + limit),
                offset + limit
            ));
        }
        if out.is_empty() {
            out = format!("({path} has {total} lines; nothing at offset {offset})");
        }
        ToolOutput::ok(out)
    }
}

struct WriteFile;
impl NativeTool for WriteFile {
    fn def(&self) -> ToolDef {
        ToolDef {
            name: "write_file",
            description: "Write a whole text file (created or replaced), creating parent directories.",
            parameters: json!({"type": "object", "properties": {
                "path": {"type": "string"}, "content": {"type": "string"}
            }, "required": ["path", "content"]}),
            safe: false,
        }
    }

    fn run(&self, _ctx: &mut ToolContext<'_>, args: &Map<String, Value>) -> ToolOutput {
        let (path, content) = (arg_str(args, "path"), arg_str(args, "content"));
        if let Some(dir) = Path::new(path)
            .parent()
            .filter(|d| !d.as_os_str().is_empty())
            && let Err(e) = std::fs::create_dir_all(dir)
        {
            return ToolOutput::error(format!("{}: {e}", dir.display()));
        }
        match write_text(path, content) {
            Ok(()) => ToolOutput::ok(format!("wrote {} bytes to {path}", content.len())),
            Err(e) => ToolOutput::error(e),
        }
    }
}

struct EditFile;
impl NativeTool for EditFile {
    fn def(&self) -> ToolDef {
        ToolDef {
            name: "edit_file",
            description: "Replace an exact string in a file. old_string must occur exactly once unless replace_all is true.",
            parameters: json!({"type": "object", "properties": {
                "path": {"type": "string"}, "old_string": {"type": "string"}, "new_string": {"type": "string"},
                "replace_all": {"type": "boolean"}
            }, "required": ["path", "old_string", "new_string"]}),
            safe: false,
        }
    }

    fn run(&self, _ctx: &mut ToolContext<'_>, args: &Map<String, Value>) -> ToolOutput {
        let (path, old, new) = (
            arg_str(args, "path"),
            arg_str(args, "old_string"),
            arg_str(args, "new_string"),
        );
        let all = args
            .get("replace_all")
            .and_then(Value::as_bool)
            .unwrap_or(false);
        if old.is_empty() {
            return ToolOutput::error(
                "old_string must not be empty (use write_file to create a file)",
            );
        }
        let text = match read_text(path) {
            Ok(t) => t,
            Err(e) => return ToolOutput::error(e),
        };
        let n = text.matches(old).count();
        let edited = match (n, all) {
            (0, _) => {
                return ToolOutput::error(format!(
                    "old_string does not occur in {path}; read the file and copy the text exactly"
                ));
            }
            (1, _) | (_, true) => text.replace(old, new),
            (n, false) => {
                return ToolOutput::error(format!(
                    "old_string occurs {n} times in {path}; add surrounding lines to make it unique, or set replace_all"
                ));
            }
        };
        match write_text(path, &edited) {
            Ok(()) => ToolOutput::ok(format!(
                "replaced {n} occurrence{} in {path}",
                if n == 1 { "" } else { "s" }
            )),
            Err(e) => ToolOutput::error(e),
        }
    }
}

struct ListDir;
impl NativeTool for ListDir {
    fn def(&self) -> ToolDef {
        ToolDef {
            name: "list_dir",
            description: "List a directory's entries (directories end in /), sorted.",
            parameters: json!({"type": "object", "properties": {"path": {"type": "string"}}}),
            safe: true,
        }
    }

    fn run(&self, _ctx: &mut ToolContext<'_>, args: &Map<String, Value>) -> ToolOutput {
        let path = args.get("path").and_then(Value::as_str).unwrap_or(".");
        let rd = match std::fs::read_dir(path) {
            Ok(r) => r,
            Err(e) => return ToolOutput::error(format!("{path}: {e}")),
        };
        let mut names: Vec<String> = rd
            .filter_map(Result::ok)
            .map(|e| {
                let dir = e.file_type().is_ok_and(|t| t.is_dir());
                format!(
                    "{}{}",
                    e.file_name().to_string_lossy(),
                    if dir { "/" } else { "" }
                )
            })
            .collect();
        names.sort();
        ToolOutput::ok(if names.is_empty() {
            format!("({path} is empty)")
        } else {
            names.join("\n")
        })
    }
}

/// Files under `root` (skipping hidden directories and `target`), relative paths with `/`.
fn walk(root: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&dir) else {
            continue;
        };
        let mut entries: Vec<_> = rd.filter_map(Result::ok).collect();
        entries.sort_by_key(|e| e.file_name());
        for e in entries.into_iter().rev() {
            let name = e.file_name().to_string_lossy().to_string();
            let Ok(t) = e.file_type() else { continue };
            if t.is_dir() {
                if !name.starts_with('.') && name != "target" && name != "node_modules" {
                    stack.push(e.path());
                }
            } else if t.is_file() {
                out.push(e.path());
                if out.len() >= WALK_MAX_FILES {
                    return out;
                }
            }
        }
    }
    out.sort();
    out
}

fn rel(root: &Path, p: &Path) -> String {
    p.strip_prefix(root)
        .unwrap_or(p)
        .to_string_lossy()
        .replace('\\', "/")
}

struct Glob;
impl NativeTool for Glob {
    fn def(&self) -> ToolDef {
        ToolDef {
            name: "glob",
            description: "Find files by glob pattern (*, **, ?, [abc]) under a directory (default .).",
            parameters: json!({"type": "object", "properties": {
                "pattern": {"type": "string"}, "path": {"type": "string"}
            }, "required": ["pattern"]}),
            safe: true,
        }
    }

    fn run(&self, _ctx: &mut ToolContext<'_>, args: &Map<String, Value>) -> ToolOutput {
        let root = PathBuf::from(args.get("path").and_then(Value::as_str).unwrap_or("."));
        let pattern = arg_str(args, "pattern");
        let hits: Vec<String> = walk(&root)
            .iter()
            .map(|p| rel(&root, p))
            .filter(|r| super::glob::matches(pattern, r))
            .collect();
        ToolOutput::ok(if hits.is_empty() {
            format!("no files match {pattern:?}")
        } else {
            hits.join("\n")
        })
    }
}

struct Grep;
impl NativeTool for Grep {
    fn def(&self) -> ToolDef {
        ToolDef {
            name: "grep",
            description: "Search file contents with a regular expression; path is a file or directory (default .), glob filters file names (e.g. **/*.rs). Returns path:line:text, at most 200 matches.",
            parameters: json!({"type": "object", "properties": {
                "pattern": {"type": "string"}, "path": {"type": "string"}, "glob": {"type": "string"},
                "ignore_case": {"type": "boolean"}
            }, "required": ["pattern"]}),
            safe: true,
        }
    }

    fn run(&self, _ctx: &mut ToolContext<'_>, args: &Map<String, Value>) -> ToolOutput {
        let pattern = arg_str(args, "pattern");
        let re = match regex_lite::RegexBuilder::new(pattern)
            .case_insensitive(
                args.get("ignore_case")
                    .and_then(Value::as_bool)
                    .unwrap_or(false),
            )
            .build()
        {
            Ok(r) => r,
            Err(e) => return ToolOutput::error(format!("invalid regular expression: {e}")),
        };
        let root = PathBuf::from(args.get("path").and_then(Value::as_str).unwrap_or("."));
        let files = if root.is_file() {
            vec![root.clone()]
        } else {
            walk(&root)
        };
        let filter = args.get("glob").and_then(Value::as_str);
        let mut out = Vec::new();
        let mut more = false;
        for f in &files {
            let name = if root.is_file() {
                f.to_string_lossy().to_string()
            } else {
                rel(&root, f)
            };
            if filter.is_some_and(|g| !super::glob::matches(g, &name)) {
                continue;
            }
            let Ok(text) = read_text(&f.to_string_lossy()) else {
                continue;
            };
            for (i, line) in text.lines().enumerate() {
                if re.is_match(line) {
                    if out.len() == GREP_MAX_MATCHES {
                        more = true;
                        break;
                    }
                    out.push(format!(
                        "{name}:{}:{}",
                        i + 1,
                        line.chars().take(300).collect::<String>()
                    ));
                }
            }
            if more {
                break;
            }
        }
        if out.is_empty() {
            return ToolOutput::ok(format!("no matches for {pattern:?}"));
        }
        if more {
            out.push(format!(
                "… stopped at {GREP_MAX_MATCHES} matches; narrow the pattern, path or glob"
            ));
        }
        ToolOutput::ok(out.join("\n"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::OpenOptionsExt;

    fn scratch(tag: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("tai-files-unit-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    fn fifo(dir: &Path) -> String {
        let path = dir.join("pipe");
        nix::unistd::mkfifo(&path, nix::sys::stat::Mode::from_bits_truncate(0o600)).unwrap();
        path.to_string_lossy().to_string()
    }

    /// Every non-regular file is refused at once (a FIFO without a writer would block the
    /// open forever, /dev/zero would be read until memory ran out), with the message that
    /// says what tai reads; a directory points to list_dir; a regular file is read.
    #[test]
    fn read_refuses_everything_but_a_regular_file_without_blocking() {
        let dir = scratch("read");
        let link = dir.join("zero-link");
        std::os::unix::fs::symlink("/dev/zero", &link).unwrap();
        let big = dir.join("big");
        std::fs::File::create(&big)
            .unwrap()
            .set_len(FILE_MAX + 1)
            .unwrap();
        let text = dir.join("text");
        std::fs::write(&text, "one\ntwo\n").unwrap();
        let s = |p: &Path| p.to_string_lossy().to_string();
        let table: Vec<(String, Result<&str, &str>)> = vec![
            ("/dev/zero".into(), Err("is not a regular file")),
            ("/dev/null".into(), Err("is not a regular file")),
            (fifo(&dir), Err("is not a regular file")),
            (s(&link), Err("is not a regular file")),
            (s(&dir), Err("is a directory (use list_dir)")),
            (s(&big), Err("over the 10 MB")),
            (s(&text), Ok("one\ntwo\n")),
        ];
        for (path, want) in table {
            match (read_text(&path), want) {
                (Ok(got), Ok(want)) => assert_eq!(got, want, "{path}"),
                (Err(got), Err(want)) => assert!(got.contains(want), "{path}: {got}"),
                (got, want) => panic!("{path}: got {got:?}, want {want:?}"),
            }
        }
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// A write to a FIFO is refused whether or not a reader waits on it (without one the
    /// open would block forever; with one not a byte reaches it), to a device likewise; a
    /// regular file is created, and replaced in whole by shorter content.
    #[test]
    fn write_refuses_everything_but_a_regular_file_without_blocking() {
        let dir = scratch("write");
        let pipe = fifo(&dir);
        let link = dir.join("null-link");
        std::os::unix::fs::symlink("/dev/null", &link).unwrap();
        for path in [
            pipe.clone(),
            "/dev/null".to_string(),
            link.to_string_lossy().to_string(),
        ] {
            let got = write_text(&path, "payload");
            assert!(
                got.as_ref()
                    .is_err_and(|e| e.contains("is not a regular file")),
                "{path}: {got:?}"
            );
        }
        // A reader on the FIFO: the open succeeds, the check on the opened descriptor refuses.
        let mut reader = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(nix::fcntl::OFlag::O_NONBLOCK.bits())
            .open(&pipe)
            .unwrap();
        let got = write_text(&pipe, "payload");
        assert!(
            got.as_ref()
                .is_err_and(|e| e.contains("is not a regular file")),
            "{got:?}"
        );
        let mut seen = [0u8; 16];
        let n = std::io::Read::read(&mut reader, &mut seen).unwrap_or(0);
        assert_eq!(n, 0, "bytes reached the FIFO's reader");

        let file = dir.join("sub-file");
        let path = file.to_string_lossy().to_string();
        write_text(&path, "a longer first text").unwrap();
        write_text(&path, "short").unwrap();
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "short");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
