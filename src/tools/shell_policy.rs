//! Which shell command lines may run without approval (pure): an allowlist, not a
//! denylist. A line skips approval only when this parser proves it read-only.
//!
//! The line is tokenized as `sh` would for a small safe subset: plain words of letters,
//! digits and `-_./=:,@%+^`, single quotes, and double quotes without `$`, backticks,
//! backslashes or `!`. Any other shell syntax (redirections, substitutions, globs, `;`,
//! `&&`, `||`, `&`, newlines, variables) makes the line ask. Segments joined by `|` must
//! each be safe on their own. Each segment's program must be in `PROGRAMS` (or be a
//! listed `git` subcommand, or `find` with listed predicates), and every option must be in
//! that program's allowlist: an option that writes a file (`sort -o`, `tree -o`,
//! `git diff --output`), runs a program (`find -exec`, `rg --pre`, `sort
//! --compress-program`), reads config that can run programs (`git -c`), changes
//! repository state (`git branch -D`) or is simply unknown (including GNU's abbreviated
//! long options) makes the line ask. No `env`, `xargs`, interpreters or shells are listed.

/// Why a line is not proven read-only (for tests and notes).
pub type Refusal = String;

/// What one program accepts.
struct Spec {
    name: &'static str,
    /// Short options without a value (each character one option, clustered freely).
    flags: &'static str,
    /// Short options that take a value (attached or the next word).
    valued: &'static str,
    /// Long options without a value.
    long: &'static [&'static str],
    /// Long options that take a value, accepted only as `--x=V`: many of them take an
    /// *optional* value (`git log --color`, `date --iso-8601`), so a program would read
    /// the next word as an option where a checker skipping it as a value would not.
    long_valued: &'static [&'static str],
    /// At most this many operands (None: any).
    max_operands: Option<usize>,
    /// `-20` style counts (head, tail, git log).
    numeric: bool,
    /// Every operand must start with this (date's `+FORMAT`; any other operand sets the clock).
    operand_prefix: Option<&'static str>,
    /// Any words at all (echo, true): the program reads and writes nothing.
    any_args: bool,
    /// A valued short option may share its word with other flags (`-rk2`). Off for
    /// programs that take a clustered option's value from the *next* word and keep
    /// reading the cluster (`tree -Lo 2 FILE` writes FILE).
    clusters: bool,
}

const fn spec(name: &'static str) -> Spec {
    Spec {
        name,
        flags: "",
        valued: "",
        long: &[],
        long_valued: &[],
        max_operands: None,
        numeric: false,
        operand_prefix: None,
        any_args: false,
        clusters: true,
    }
}

/// The programs that may run without approval, each with its option allowlist.
const PROGRAMS: &[Spec] = &[
    Spec {
        flags: "aAbBcCdfFgGhHiklLmnNopqQrRsStuUvxX1Z",
        long: &[
            "--all",
            "--almost-all",
            "--human-readable",
            "--recursive",
            "--reverse",
            "--size",
            "--classify",
            "--directory",
            "--inode",
            "--color",
            "--full-time",
        ],
        long_valued: &["--color", "--sort", "--format", "--time-style"],
        ..spec("ls")
    },
    Spec {
        flags: "LP",
        max_operands: Some(0),
        ..spec("pwd")
    },
    Spec {
        flags: "AbeEnsTtuv",
        long: &["--number", "--show-all", "--squeeze-blank"],
        ..spec("cat")
    },
    Spec {
        flags: "qvz",
        valued: "nc",
        long_valued: &["--lines", "--bytes"],
        numeric: true,
        ..spec("head")
    },
    // No -f/-F/--follow: they never end.
    Spec {
        flags: "qvz",
        valued: "nc",
        long_valued: &["--lines", "--bytes"],
        numeric: true,
        ..spec("tail")
    },
    Spec {
        flags: "clmwL",
        long: &[
            "--lines",
            "--words",
            "--bytes",
            "--chars",
            "--max-line-length",
        ],
        ..spec("wc")
    },
    Spec {
        any_args: true,
        ..spec("echo")
    },
    Spec {
        any_args: true,
        ..spec("true")
    },
    Spec {
        any_args: true,
        ..spec("false")
    },
    Spec {
        flags: "iyvwxcLlonhHbqsrREFGPaIUz",
        valued: "eABCfmd",
        long: &[
            "--ignore-case",
            "--invert-match",
            "--word-regexp",
            "--line-regexp",
            "--count",
            "--files-with-matches",
            "--files-without-match",
            "--line-number",
            "--no-filename",
            "--with-filename",
            "--recursive",
            "--dereference-recursive",
            "--extended-regexp",
            "--fixed-strings",
            "--perl-regexp",
            "--quiet",
            "--silent",
            "--only-matching",
            "--text",
            "--color",
            "--colour",
        ],
        long_valued: &[
            "--include",
            "--exclude",
            "--exclude-dir",
            "--color",
            "--colour",
            "--regexp",
            "--context",
            "--after-context",
            "--before-context",
            "--max-count",
        ],
        ..spec("grep")
    },
    // No -z/--search-zip (runs decompressors), --pre/--pre-glob (run a program).
    Spec {
        flags: "iIlcvwFSsnNuLHxo.0",
        valued: "egtTABCmMj",
        long: &[
            "--hidden",
            "--no-ignore",
            "--files",
            "--count",
            "--files-with-matches",
            "--fixed-strings",
            "--ignore-case",
            "--smart-case",
            "--case-sensitive",
            "--line-number",
            "--no-heading",
            "--with-filename",
            "--json",
            "--vimgrep",
            "--follow",
            "--only-matching",
            "--word-regexp",
            "--invert-match",
        ],
        long_valued: &[
            "--glob",
            "--iglob",
            "--type",
            "--type-not",
            "--max-count",
            "--max-depth",
            "--context",
            "--after-context",
            "--before-context",
            "--regexp",
            "--color",
        ],
        ..spec("rg")
    },
    Spec {
        flags: "a",
        ..spec("which")
    },
    // No -s/--set; an operand must be +FORMAT.
    Spec {
        flags: "uR",
        valued: "dr",
        long: &["--utc", "--rfc-email"],
        long_valued: &["--date", "--iso-8601", "--rfc-3339", "--reference"],
        operand_prefix: Some("+"),
        ..spec("date")
    },
    Spec {
        flags: "asnrvmpio",
        long: &["--all"],
        max_operands: Some(0),
        ..spec("uname")
    },
    Spec {
        max_operands: Some(0),
        ..spec("whoami")
    },
    Spec {
        flags: "ugGnrz",
        max_operands: Some(1),
        ..spec("id")
    },
    // No -C (compiles a magic file), -z/-Z (decompressors).
    Spec {
        flags: "bhiLNk0rs",
        long: &["--brief", "--mime", "--mime-type", "--dereference"],
        ..spec("file")
    },
    Spec {
        flags: "LftZ",
        valued: "c",
        long: &["--dereference", "--terse", "--file-system"],
        long_valued: &["--format", "--printf"],
        ..spec("stat")
    },
    Spec {
        flags: "achHLsSbkmxl0",
        valued: "dB",
        long: &[
            "--summarize",
            "--human-readable",
            "--all",
            "--total",
            "--apparent-size",
        ],
        long_valued: &["--max-depth", "--block-size"],
        ..spec("du")
    },
    Spec {
        flags: "ahHiklPT",
        valued: "tx",
        long: &[
            "--human-readable",
            "--inodes",
            "--print-type",
            "--local",
            "--all",
        ],
        long_valued: &["--type", "--output"],
        ..spec("df")
    },
    // No -o (writes a file), -R/-H (write HTML files), --fromfile.
    Spec {
        flags: "adfglpsuDFhiqNrtvCnJ",
        valued: "LPI",
        long: &["--noreport", "--dirsfirst"],
        clusters: false,
        ..spec("tree")
    },
    // No -o/--output, -T/--temporary-directory, --compress-program, --files0-from.
    Spec {
        flags: "bdfgiMhnRrVsuzcC",
        valued: "kt",
        long: &[
            "--numeric-sort",
            "--reverse",
            "--unique",
            "--human-numeric-sort",
            "--version-sort",
            "--ignore-case",
            "--check",
            "--stable",
        ],
        long_valued: &["--key", "--field-separator"],
        ..spec("sort")
    },
    // A second operand is an output file.
    Spec {
        flags: "cdDiuz",
        valued: "fsw",
        long: &["--count", "--repeated", "--unique", "--ignore-case"],
        max_operands: Some(1),
        ..spec("uniq")
    },
    Spec {
        flags: "uqrNwbBiyatpsdE",
        valued: "UC",
        long: &[
            "--unified",
            "--brief",
            "--recursive",
            "--new-file",
            "--ignore-all-space",
            "--side-by-side",
            "--report-identical-files",
            "--text",
            "--strip-trailing-cr",
            "--ignore-case",
            "--color",
        ],
        long_valued: &["--color", "--unified", "--label"],
        ..spec("diff")
    },
    Spec {
        flags: "snz",
        valued: "bcdf",
        long: &["--complement", "--only-delimited"],
        ..spec("cut")
    },
    Spec {
        flags: "cdsCt",
        max_operands: Some(2),
        ..spec("tr")
    },
    Spec {
        flags: "az",
        valued: "s",
        ..spec("basename")
    },
    Spec {
        flags: "z",
        ..spec("dirname")
    },
    Spec {
        flags: "emsqLPz",
        ..spec("realpath")
    },
    Spec {
        flags: "femnqsvz",
        ..spec("readlink")
    },
];

/// The read-only `git` subcommands, each with its option allowlist. Options before the
/// subcommand (`-c`, `-C`, `--git-dir`, `--exec-path`, `-p`) always ask. No `--output`,
/// `--ext-diff` or `--textconv` anywhere; `branch`, `tag` and `remote` only list.
const GIT: &[Spec] = &[
    Spec {
        flags: "sbvz",
        long: &["--short", "--branch", "--porcelain", "--long", "--ignored"],
        long_valued: &["--porcelain", "--untracked-files"],
        ..spec("status")
    },
    Spec {
        flags: "pq",
        valued: "n",
        numeric: true,
        long: &[
            "--oneline",
            "--graph",
            "--stat",
            "--shortstat",
            "--name-only",
            "--name-status",
            "--all",
            "--decorate",
            "--no-decorate",
            "--reverse",
            "--patch",
            "--no-merges",
            "--merges",
            "--first-parent",
            "--abbrev-commit",
            "--no-color",
            "--follow",
            "--date-order",
            "--topo-order",
        ],
        long_valued: &[
            "--format",
            "--pretty",
            "--since",
            "--until",
            "--after",
            "--before",
            "--author",
            "--committer",
            "--grep",
            "--max-count",
            "--date",
            "--color",
        ],
        ..spec("log")
    },
    // `-U` takes an optional value in git, so it is not listed (`-U3` asks).
    Spec {
        flags: "pRwb",
        long: &[
            "--stat",
            "--cached",
            "--staged",
            "--name-only",
            "--name-status",
            "--shortstat",
            "--numstat",
            "--no-color",
            "--word-diff",
            "--patch",
            "--ignore-all-space",
            "--check",
            "--summary",
            "--raw",
        ],
        long_valued: &["--unified", "--color", "--word-diff", "--diff-filter"],
        ..spec("diff")
    },
    Spec {
        flags: "pq",
        long: &[
            "--stat",
            "--oneline",
            "--name-only",
            "--name-status",
            "--no-patch",
            "--shortstat",
            "--no-color",
            "--abbrev-commit",
        ],
        long_valued: &["--format", "--pretty", "--color"],
        ..spec("show")
    },
    Spec {
        flags: "arv",
        long: &[
            "--list",
            "--all",
            "--remotes",
            "--verbose",
            "--show-current",
            "--no-color",
        ],
        long_valued: &[
            "--contains",
            "--merged",
            "--no-merged",
            "--sort",
            "--format",
        ],
        max_operands: Some(0),
        ..spec("branch")
    },
    Spec {
        long: &[
            "--show-toplevel",
            "--git-dir",
            "--abbrev-ref",
            "--short",
            "--verify",
            "--is-inside-work-tree",
            "--show-prefix",
            "--symbolic-full-name",
        ],
        ..spec("rev-parse")
    },
    Spec {
        flags: "swelnfpc",
        valued: "L",
        ..spec("blame")
    },
    Spec {
        flags: "v",
        max_operands: Some(0),
        ..spec("remote")
    },
    Spec {
        flags: "cdmoiskz",
        long: &[
            "--others",
            "--cached",
            "--modified",
            "--deleted",
            "--exclude-standard",
        ],
        ..spec("ls-files")
    },
    Spec {
        flags: "l",
        long: &["--list"],
        max_operands: Some(0),
        ..spec("tag")
    },
];

/// `find` predicates without an argument (tests and actions that only print).
const FIND_UNARY: &[&str] = &[
    "-print",
    "-print0",
    "-empty",
    "-true",
    "-false",
    "-a",
    "-and",
    "-o",
    "-or",
    "-not",
    "!",
    "(",
    ")",
    "-depth",
    "-xdev",
    "-mount",
    "-follow",
    "-ls",
    "-readable",
    "-writable",
    "-executable",
    "-prune",
    "-nouser",
    "-nogroup",
    "-quit",
];

/// `find` predicates with one argument. No -exec, -execdir, -ok, -okdir, -delete,
/// -fprint, -fprint0, -fprintf, -fls.
const FIND_BINARY: &[&str] = &[
    "-name",
    "-iname",
    "-path",
    "-ipath",
    "-wholename",
    "-iwholename",
    "-regex",
    "-iregex",
    "-type",
    "-xtype",
    "-maxdepth",
    "-mindepth",
    "-size",
    "-mtime",
    "-mmin",
    "-atime",
    "-amin",
    "-ctime",
    "-cmin",
    "-newer",
    "-user",
    "-group",
    "-perm",
    "-links",
    "-inum",
    "-samefile",
    "-uid",
    "-gid",
    "-printf",
    "-regextype",
    "-fstype",
    "-lname",
    "-ilname",
];

/// Whether `command` is proven read-only (runs without approval).
pub fn is_read_only(command: &str) -> bool {
    classify(command).is_ok()
}

/// `Ok` when every segment of the line is a listed program with listed options only;
/// otherwise why it must ask.
pub fn classify(command: &str) -> Result<(), Refusal> {
    let segments = tokenize(command)?;
    for words in &segments {
        check_segment(words)?;
    }
    Ok(())
}

/// The line's pipeline segments as words, as `sh` would split them (for the protected-
/// place check), or why the line is outside the safe subset.
pub fn segments(command: &str) -> Result<Vec<Vec<String>>, Refusal> {
    tokenize(command)
}

/// Plain characters a word may hold outside quotes.
fn plain(c: char) -> bool {
    c.is_ascii_alphanumeric() || "-_./=:,@%+^".contains(c)
}

/// The line as segments (split on `|`) of words, or the first piece of shell syntax
/// outside the safe subset.
fn tokenize(line: &str) -> Result<Vec<Vec<String>>, Refusal> {
    let mut segments: Vec<Vec<String>> = vec![Vec::new()];
    let mut word: Option<String> = None;
    let mut chars = line.chars().peekable();
    let end_word = |word: &mut Option<String>, segments: &mut Vec<Vec<String>>| {
        if let (Some(w), Some(seg)) = (word.take(), segments.last_mut()) {
            seg.push(w);
        }
    };
    while let Some(c) = chars.next() {
        match c {
            ' ' | '\t' => end_word(&mut word, &mut segments),
            '|' => {
                if chars.peek() == Some(&'|') || chars.peek() == Some(&'&') {
                    return Err("`||` or `|&` chains commands".into());
                }
                end_word(&mut word, &mut segments);
                if segments.last().is_some_and(Vec::is_empty) {
                    return Err("an empty pipeline segment".into());
                }
                segments.push(Vec::new());
            }
            '\'' => {
                let w = word.get_or_insert_with(String::new);
                loop {
                    match chars.next() {
                        Some('\'') => break,
                        Some(q) if q.is_control() => {
                            return Err("a control character in quotes".into());
                        }
                        Some(q) => w.push(q),
                        None => return Err("an unterminated quote".into()),
                    }
                }
            }
            '"' => {
                let w = word.get_or_insert_with(String::new);
                loop {
                    match chars.next() {
                        Some('"') => break,
                        Some(q) if "$`\\!".contains(q) => {
                            return Err(format!("{q:?} inside double quotes expands"));
                        }
                        Some(q) if q.is_control() => {
                            return Err("a control character in quotes".into());
                        }
                        Some(q) => w.push(q),
                        None => return Err("an unterminated quote".into()),
                    }
                }
            }
            c if plain(c) => word.get_or_insert_with(String::new).push(c),
            c => return Err(format!("the shell syntax {c:?}")),
        }
    }
    end_word(&mut word, &mut segments);
    if segments.iter().any(Vec::is_empty) {
        return Err("an empty command".into());
    }
    Ok(segments)
}

fn check_segment(words: &[String]) -> Result<(), Refusal> {
    let (program, rest) = words.split_first().ok_or("an empty command")?;
    match program.as_str() {
        "git" => {
            let (sub, rest) = rest.split_first().ok_or("git without a subcommand")?;
            if sub.starts_with('-') {
                return Err(format!("git option {sub:?} before the subcommand"));
            }
            let spec = GIT
                .iter()
                .find(|s| s.name == sub)
                .ok_or_else(|| format!("git {sub} is not a listed read-only subcommand"))?;
            check_options(spec, rest)
        }
        "find" => check_find(rest),
        name => {
            let spec = PROGRAMS
                .iter()
                .find(|s| s.name == name)
                .ok_or_else(|| format!("{name:?} is not a listed read-only program"))?;
            check_options(spec, rest)
        }
    }
}

fn check_options(spec: &Spec, words: &[String]) -> Result<(), Refusal> {
    if spec.any_args {
        return Ok(());
    }
    let name = spec.name;
    let mut operands = 0usize;
    let mut only_operands = false;
    let mut i = 0;
    while i < words.len() {
        let w = words[i].as_str();
        i += 1;
        if only_operands || w == "-" || !w.starts_with('-') {
            if let Some(p) = spec.operand_prefix
                && !w.starts_with(p)
            {
                return Err(format!("{name}: the operand {w:?} does not start with {p}"));
            }
            operands += 1;
            continue;
        }
        if w == "--" {
            only_operands = true;
            continue;
        }
        if let Some(long) = w.strip_prefix("--") {
            let (opt, has_value) = match long.split_once('=') {
                Some((o, _)) => (o, true),
                None => (long, false),
            };
            let opt = format!("--{opt}");
            if !has_value && spec.long.contains(&opt.as_str()) {
                continue;
            }
            if spec.long_valued.contains(&opt.as_str()) {
                if !has_value {
                    return Err(format!(
                        "{name}: {opt} is read-only here only with its value attached ({opt}=VALUE)"
                    ));
                }
                continue;
            }
            return Err(format!("{name}: the option {opt} is not on the allowlist"));
        }
        let cluster = &w[1..];
        if spec.numeric && cluster.bytes().all(|b| b.is_ascii_digit()) {
            continue;
        }
        for (at, c) in cluster.char_indices() {
            if spec.flags.contains(c) && c != '-' {
                continue;
            }
            if spec.valued.contains(c) {
                if !spec.clusters && cluster.len() != c.len_utf8() {
                    return Err(format!(
                        "{name}: -{c} is read-only here only as a word of its own"
                    ));
                }
                if at + c.len_utf8() == cluster.len() {
                    if i >= words.len() {
                        return Err(format!("{name}: -{c} needs a value"));
                    }
                    i += 1;
                }
                break;
            }
            return Err(format!("{name}: the option -{c} is not on the allowlist"));
        }
    }
    match spec.max_operands {
        Some(max) if operands > max => Err(format!(
            "{name}: at most {max} operand(s) are read-only here"
        )),
        _ => Ok(()),
    }
}

fn check_find(words: &[String]) -> Result<(), Refusal> {
    let mut i = 0;
    while i < words.len() {
        let w = words[i].as_str();
        i += 1;
        if matches!(w, "-L" | "-H" | "-P") || FIND_UNARY.contains(&w) {
            continue;
        }
        if FIND_BINARY.contains(&w) {
            if i >= words.len() {
                return Err(format!("find: {w} needs a value"));
            }
            i += 1;
            continue;
        }
        if w.starts_with('-') {
            return Err(format!("find: {w} is not a listed predicate"));
        }
        // A starting point (a path).
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every class the issue names: accepted read-only lines, and lines that write a
    /// file, run a program, read config that runs programs, change repository state,
    /// or use shell syntax.
    #[test]
    fn classifier_table() {
        let accepted = [
            "ls",
            "ls -la",
            "ls -la src/",
            "ls --color=always -R",
            "pwd",
            "cat README.md",
            "cat -n src/lib.rs",
            "head -n 20 src/main.rs",
            "head -20 src/main.rs",
            "tail -c 100 log.txt",
            "wc -l src/lib.rs",
            "echo hello world",
            "echo 'quoted; not a chain'",
            "grep -rn 'fn main' src",
            "grep -e foo -A 3 --include='*.rs' .",
            "rg -n TODO src",
            "rg --type=rust -g '*.rs' foo",
            "which cargo",
            "date",
            "date +%Y-%m-%d",
            "uname -a",
            "whoami",
            "id -u",
            "file Cargo.toml",
            "stat -c %s Cargo.toml",
            "du -sh .",
            "df -h",
            "tree -L 2",
            "sort -n -k 2 data.txt",
            "sort -rk2 data.txt",
            "uniq -c data.txt",
            "diff -u a.txt b.txt",
            "find . -name x",
            "find . -name '*.rs' -type f",
            "find src -maxdepth 2 -newer Cargo.toml -print",
            "find . -name -delete",
            "git status",
            "git status -sb",
            "git log --oneline",
            "git log -5 --format=%H",
            "git diff",
            "git diff --cached --stat",
            "git show HEAD",
            "git branch",
            "git branch -a -v",
            "git rev-parse --show-toplevel",
            "git blame -L 1,10 src/lib.rs",
            "git remote -v",
            "cat Cargo.toml | grep name",
            "git log --oneline | head -5",
            "true",
            "basename /a/b.txt",
            "tr a-z A-Z",
        ];
        let refused = [
            // write a file
            "find . -fprintf out.txt %p",
            "find . -fprint out.txt",
            "find . -fls out.txt",
            "sort -o out.txt data.txt",
            "sort -no out.txt data.txt",
            "sort --output=out.txt data.txt",
            "sort --out=out.txt data.txt",
            "git diff --output=out.txt",
            "git log --output=out.txt",
            "tree -o out.txt",
            "tree -Lo 2 out.txt",
            "tree -aL 2",
            // an option with an optional value never takes the next word as its value
            "git log -1 --format=tformat:x --color --output=evil.sh",
            "git diff -U --output=out.txt",
            "git diff --unified --output=out.txt",
            "git show --pretty --output=out.txt",
            "git status --untracked-files --output=x",
            "date --iso-8601 --set=2020-01-01",
            "df --output --x",
            "ls --color --format --x",
            "grep --include --exclude-dir=x --include=y .",
            "rg --type rust foo",
            "tree -R -H . ",
            "uniq in.txt out.txt",
            "file -C -m magic",
            "date -s 2020-01-01",
            "date 010100002020",
            // run a program
            "find . -exec rm {} ;",
            "find . -exec rm x",
            "find . -execdir sh x",
            "find . -ok rm x",
            "find . -delete",
            "rg --pre ./evil foo",
            "rg --pre=./evil foo",
            "rg -z foo",
            "rg --search-zip foo",
            "sort --compress-program=./evil data.txt",
            "git diff --ext-diff",
            "git log --textconv -p",
            "env ls",
            "xargs rm",
            "sh -c ls",
            "bash x.sh",
            "python3 -c 1",
            "ls | sh",
            "cat x | xargs rm",
            "awk 1 x",
            "sed -n 1p x",
            // read config that can run programs
            "git -c core.pager=./evil log",
            "git -C /tmp status",
            "git --exec-path=/tmp log",
            "git -p log",
            // change repository state
            "git branch -D main",
            "git branch -d old",
            "git branch newname",
            "git branch -m a b",
            "git tag v1",
            "git remote add x y",
            "git push",
            "git commit -m x",
            "git checkout .",
            "git config user.name x",
            // shell syntax
            "cat a > b",
            "cat < /etc/passwd",
            "ls; rm x",
            "ls && rm x",
            "ls || rm x",
            "ls & rm x",
            "echo $(id)",
            "echo `id`",
            "echo \"$HOME\"",
            "ls *",
            "ls\nrm x",
            "ls\r\x1b[2Kls",
            "ls \\; rm",
            "echo 'unterminated",
            "ls |",
            "| ls",
            "A=1 ls",
            "/bin/ls",
            "tail -f log.txt",
            "rm -rf x",
            "curl x",
            "",
            "   ",
        ];
        assert!(accepted.len() + refused.len() >= 60);
        for line in accepted {
            assert_eq!(classify(line), Ok(()), "{line:?} should be read-only");
        }
        for line in refused {
            assert!(classify(line).is_err(), "{line:?} must ask");
        }
    }
}
