//! `tai completions bash|zsh|fish`: completion scripts made from one table of commands,
//! subcommands and flags (the words `--help` documents).

use super::import_cmd::tool_names;

/// Top-level commands.
const COMMANDS: &[&str] = &[
    "status",
    "profile",
    "vault",
    "mcp",
    "help",
    "completions",
    "man",
];
/// Flags of `tai` itself (and the globals).
const TOP_FLAGS: &[&str] = &[
    "-p",
    "--prompt",
    "--json",
    "--continue",
    "--max-steps",
    "--profile",
    "--auto",
    "--yolo",
    "--help",
    "--version",
    "--serve-mcp",
    "--serve-mcp-stdio",
    "--mcp-port",
    "--mcp-bind",
    "--serve-tools",
    "--serve-workers",
];
/// Subcommands of each command.
const SUBCOMMANDS: &[(&str, &[&str])] = &[
    ("profile", &["list", "add", "set", "use", "remove"]),
    ("vault", &["secret", "seal", "unseal", "audit", "record"]),
    (
        "mcp",
        &[
            "add", "add-json", "import", "resolve", "list", "get", "export", "enable", "disable",
            "remove", "tools", "call", "approve", "trust", "untrust", "probe",
        ],
    ),
    ("completions", &["bash", "zsh", "fish"]),
    (
        "help",
        &[
            "status",
            "profile",
            "vault",
            "mcp",
            "serve",
            "completions",
            "man",
        ],
    ),
];
/// Flags after a command.
const COMMAND_FLAGS: &[(&str, &[&str])] = &[
    ("status", &["--json"]),
    (
        "profile",
        &["--json", "--model", "--base-url", "--api-key-secret"],
    ),
    ("vault", &["--json", "--limit", "--verify"]),
    (
        "mcp",
        &[
            "--json",
            "--name",
            "--replace",
            "--pick",
            "-e",
            "--env",
            "--env-var",
            "-H",
            "--header",
            "--url",
            "--connect-timeout",
            "--call-timeout",
            "--check",
            "--format",
            "--protocol",
            "--call",
            "--args",
            "--repeat",
            "--probe-timeout",
            "--anywhere",
        ],
    ),
];

fn words(list: &[&str]) -> String {
    list.join(" ")
}

fn lookup<'a>(table: &'a [(&str, &'a [&str])], key: &str) -> &'a [&'a str] {
    table
        .iter()
        .find(|(k, _)| *k == key)
        .map_or(&[], |(_, v)| v)
}

pub fn script(shell: &str) -> String {
    match shell {
        "zsh" => zsh(),
        "fish" => fish(),
        _ => bash(),
    }
}

/// The `case` arms both bash and zsh use: `$cmd` and `$sub` are the first two words.
fn case_arms() -> String {
    let mut s = String::new();
    for (cmd, subs) in SUBCOMMANDS {
        let flags = words(lookup(COMMAND_FLAGS, cmd));
        s.push_str(&format!(
            "        {cmd}) if [ -z \"$sub\" ]; then opts=\"{} {flags}\"; ",
            words(subs)
        ));
        if *cmd == "mcp" {
            s.push_str(&format!(
                "elif [ \"$sub\" = import ]; then opts=\"{} - {flags}\"; ",
                words(&tool_names())
            ));
        }
        s.push_str(&format!("else opts=\"{flags}\"; fi ;;\n"));
    }
    s.push_str(&format!(
        "        status) opts=\"{}\" ;;\n        '') opts=\"{} {}\" ;;\n        *) opts=\"\" ;;\n",
        words(lookup(COMMAND_FLAGS, "status")),
        words(COMMANDS),
        words(TOP_FLAGS)
    ));
    s
}

/// Finds `$cmd` and `$sub` among the words before the cursor, skipping flags and the
/// values of the flags that take one.
const SCAN: &str = r#"    cmd=""; sub=""; skip=""
    for w in "${before[@]}"; do
        if [ -n "$skip" ]; then skip=""; continue; fi
        case "$w" in
            --profile|--max-steps|--mcp-port|--mcp-bind|--serve-mcp|--serve-tools|--serve-workers|-p|--prompt|--name|--pick|-e|--env|--env-var|-H|--header|--url|--connect-timeout|--call-timeout|--format|--model|--base-url|--api-key-secret|--limit) skip=1 ;;
            -*) ;;
            *) if [ -z "$cmd" ]; then cmd="$w"; elif [ -z "$sub" ]; then sub="$w"; fi ;;
        esac
    done
"#;

fn bash() -> String {
    format!(
        r#"# bash completion for tai (tai completions bash)
_tai() {{
    local cur cmd sub skip opts w
    cur="${{COMP_WORDS[COMP_CWORD]}}"
    local before=("${{COMP_WORDS[@]:1:COMP_CWORD-1}}")
{SCAN}    case "$cmd" in
{arms}    esac
    COMPREPLY=($(compgen -W "$opts" -- "$cur"))
}}
complete -o default -F _tai tai
"#,
        arms = case_arms()
    )
}

fn zsh() -> String {
    format!(
        r#"#compdef tai
# zsh completion for tai (tai completions zsh)
_tai() {{
    local cmd sub skip opts w
    local -a before
    before=("${{(@)words[2,CURRENT-1]}}")
{SCAN}    case "$cmd" in
{arms}    esac
    compadd -- ${{=opts}}
}}
if [ "$funcstack[1]" = "_tai" ]; then
    _tai "$@"
else
    compdef _tai tai
fi
"#,
        arms = case_arms()
    )
}

fn fish() -> String {
    let mut s =
        String::from("# fish completion for tai (tai completions fish)\ncomplete -c tai -f\n");
    let commands = words(COMMANDS);
    s.push_str(&format!(
        "complete -c tai -n 'not __fish_seen_subcommand_from {commands}' -a '{commands}'\n"
    ));
    for flag in TOP_FLAGS.iter().filter(|f| f.starts_with("--")) {
        s.push_str(&format!("complete -c tai -l {}\n", &flag[2..]));
    }
    for (cmd, subs) in SUBCOMMANDS {
        let subs = words(subs);
        s.push_str(&format!(
            "complete -c tai -n '__fish_seen_subcommand_from {cmd}; and not __fish_seen_subcommand_from {subs}' -a '{subs}'\n"
        ));
        for flag in lookup(COMMAND_FLAGS, cmd)
            .iter()
            .filter(|f| f.starts_with("--"))
        {
            s.push_str(&format!(
                "complete -c tai -n '__fish_seen_subcommand_from {cmd}' -l {}\n",
                &flag[2..]
            ));
        }
    }
    s.push_str(&format!(
        "complete -c tai -n '__fish_seen_subcommand_from import' -a '{} -'\n",
        words(&tool_names())
    ));
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_mcp_subcommand_has_a_help_topic() {
        for sub in lookup(SUBCOMMANDS, "mcp") {
            assert_ne!(super::super::args::mcp_topic(sub), "mcp", "{sub}");
        }
        for shell in ["bash", "zsh", "fish"] {
            assert!(script(shell).contains("add-json"), "{shell}");
        }
    }
}
