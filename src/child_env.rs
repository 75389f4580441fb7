//! The one place a child process's environment is built (pure: the parent's variables,
//! the entry's `env`, its passthrough list and the known secret values come in as values;
//! the child's exact environment goes out, and the spawn sites clear theirs and set this).
//!
//! A stdio MCP server gets the base allowlist (what a program needs to run), then the
//! passthrough names the entry lists (`env_vars`), then the entry's own `env`. A shell-tool
//! child gets the user's environment. Neither ever gets tai's own secrets
//! (`WITHHELD_NAMES`) or a variable whose value equals a known secret value, unless an
//! entry names it in its `env` (which consent showed).

/// Variables a program needs to run, passed to every stdio MCP server.
pub const BASE_ALLOWLIST: &[&str] = &[
    "PATH",
    "HOME",
    "USER",
    "LOGNAME",
    "LANG",
    "LANGUAGE",
    "TERM",
    "TMPDIR",
    "SHELL",
    "TZ",
    // Windows equivalents
    "SYSTEMROOT",
    "SystemRoot",
    "WINDIR",
    "COMSPEC",
    "PATHEXT",
    "USERPROFILE",
    "APPDATA",
    "LOCALAPPDATA",
    "TEMP",
    "TMP",
    "HOMEDRIVE",
    "HOMEPATH",
    "PROGRAMFILES",
];

/// Prefixes of allowlisted variables (the locale categories `LC_ALL`, `LC_CTYPE`, …).
pub const BASE_PREFIXES: &[&str] = &["LC_"];

/// tai's own secrets: never passed on unless an entry names them in its `env`.
pub const WITHHELD_NAMES: &[&str] = &[
    "TAI_VAULT_PASSPHRASE",
    "TAI_API_KEY",
    "TAI_MCP_KEY",
    "GITHUB_TOKEN",
];

/// Whether a parent variable may pass on at all: not one of tai's secrets, and its value
/// is not a known secret value.
fn passable(name: &str, value: &str, secret_values: &[&str]) -> bool {
    !WITHHELD_NAMES.contains(&name) && !secret_values.contains(&value)
}

fn in_allowlist(name: &str) -> bool {
    BASE_ALLOWLIST.contains(&name) || BASE_PREFIXES.iter().any(|p| name.starts_with(p))
}

/// A stdio MCP server's environment: the allowlisted and passed-through parent
/// variables (minus tai's secrets), then the entry's own `env`, which wins.
pub fn for_server(
    parent: &[(String, String)],
    entry_env: &[(String, String)],
    passthrough: &[String],
    secret_values: &[&str],
) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = parent
        .iter()
        .filter(|(k, v)| {
            (in_allowlist(k) || passthrough.iter().any(|p| p == k)) && passable(k, v, secret_values)
        })
        .cloned()
        .collect();
    for (k, v) in entry_env {
        out.retain(|(name, _)| name != k);
        out.push((k.clone(), v.clone()));
    }
    out
}

/// A shell-tool child's environment: the user's, minus tai's secrets, with git's
/// `core.fsmonitor` switched off (a repository's own `.git/config` could name a program
/// that `git status`, a read-only command, would run).
pub fn for_shell(parent: &[(String, String)], secret_values: &[&str]) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = parent
        .iter()
        .filter(|(k, v)| passable(k, v, secret_values))
        .cloned()
        .collect();
    let count = out
        .iter()
        .find(|(k, _)| k == "GIT_CONFIG_COUNT")
        .and_then(|(_, v)| v.parse::<usize>().ok())
        .unwrap_or(0);
    out.retain(|(k, _)| k != "GIT_CONFIG_COUNT");
    out.push((format!("GIT_CONFIG_KEY_{count}"), "core.fsmonitor".into()));
    out.push((format!("GIT_CONFIG_VALUE_{count}"), "false".into()));
    out.push(("GIT_CONFIG_COUNT".into(), (count + 1).to_string()));
    out
}

/// A served call's worker (`tai --serve-worker`, tai itself): the server's environment
/// minus tai's secrets, which reach the worker on its stdin instead (`server::worker`).
pub fn for_worker(parent: &[(String, String)]) -> Vec<(String, String)> {
    parent
        .iter()
        .filter(|(k, _)| !WITHHELD_NAMES.contains(&k.as_str()) && k != crate::child::MARK)
        .cloned()
        .collect()
}

/// This process's environment as values (variables that are not UTF-8 are left out).
pub fn parent() -> Vec<(String, String)> {
    std::env::vars_os()
        .filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_worker_gets_the_environment_without_the_secrets() {
        let parent: Vec<(String, String)> = [
            ("PATH", "/bin"),
            ("TAI_HOME", "/h"),
            ("TAI_API_KEY", "k"),
            ("TAI_VAULT_PASSPHRASE", "p"),
            ("TAI_MCP_KEY", "m"),
            ("GITHUB_TOKEN", "g"),
            ("TAI_CHILD", "1-1"),
        ]
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
        let names: Vec<String> = for_worker(&parent).into_iter().map(|(k, _)| k).collect();
        assert_eq!(names, ["PATH", "TAI_HOME"]);
    }

    fn vars(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    fn names(env: &[(String, String)]) -> Vec<&str> {
        env.iter().map(|(k, _)| k.as_str()).collect()
    }

    const PARENT: &[(&str, &str)] = &[
        ("PATH", "/usr/bin"),
        ("HOME", "/home/u"),
        ("LC_ALL", "C.UTF-8"),
        ("TAI_VAULT_PASSPHRASE", "correct horse"),
        ("TAI_API_KEY", "sk-live-123456"),
        ("TAI_MCP_KEY", "serve-key-123"),
        ("GITHUB_TOKEN", "ghp_abcdefgh"),
        ("AWS_SECRET", "vault-held-value"),
        ("EDITOR", "vi"),
        ("PROJECT_DIR", "/src"),
    ];

    #[test]
    fn server_table() {
        let parent = vars(PARENT);
        let secrets = ["vault-held-value"];
        // (the entry's env, the passthrough list, the names the server gets)
        type Case<'a> = (&'a [(&'a str, &'a str)], &'a [&'a str], &'a [&'a str]);
        let cases: &[Case] = &[
            // nothing asked for: the allowlist only
            (&[], &[], &["PATH", "HOME", "LC_ALL"]),
            // a passthrough name is passed
            (
                &[],
                &["PROJECT_DIR"],
                &["PATH", "HOME", "LC_ALL", "PROJECT_DIR"],
            ),
            // passthrough cannot carry tai's secrets or a secret-valued variable
            (
                &[],
                &["GITHUB_TOKEN", "AWS_SECRET", "TAI_API_KEY", "MISSING"],
                &["PATH", "HOME", "LC_ALL"],
            ),
            // the entry's own env wins and may name anything (consent showed it)
            (
                &[("GITHUB_TOKEN", "ghp_entry"), ("PATH", "/opt/bin")],
                &[],
                &["HOME", "LC_ALL", "GITHUB_TOKEN", "PATH"],
            ),
        ];
        for (entry, pass, want) in cases {
            let pass: Vec<String> = pass.iter().map(|s| s.to_string()).collect();
            let env = for_server(&parent, &vars(entry), &pass, &secrets);
            assert_eq!(names(&env), *want, "entry {entry:?} pass {pass:?}");
        }
        let env = for_server(&parent, &vars(&[("PATH", "/opt/bin")]), &[], &secrets);
        assert!(env.contains(&("PATH".into(), "/opt/bin".into())));
    }

    #[test]
    fn shell_drops_only_secrets() {
        let git = ["GIT_CONFIG_KEY_0", "GIT_CONFIG_VALUE_0", "GIT_CONFIG_COUNT"];
        let env = for_shell(&vars(PARENT), &["vault-held-value"]);
        let mut want = vec!["PATH", "HOME", "LC_ALL", "EDITOR", "PROJECT_DIR"];
        want.extend(git);
        assert_eq!(names(&env), want);
        // a secret value under any name is dropped
        let env = for_shell(
            &vars(&[("X", "s3cret-value"), ("Y", "ok")]),
            &["s3cret-value"],
        );
        let mut want = vec!["Y"];
        want.extend(git);
        assert_eq!(names(&env), want);
    }

    /// git's fsmonitor is off for every shell child, after the user's own
    /// command-line config.
    #[test]
    fn shell_switches_off_git_fsmonitor() {
        let env = for_shell(
            &vars(&[
                ("GIT_CONFIG_COUNT", "1"),
                ("GIT_CONFIG_KEY_0", "user.name"),
                ("GIT_CONFIG_VALUE_0", "u"),
            ]),
            &[],
        );
        let get = |k: &str| env.iter().find(|(n, _)| n == k).map(|(_, v)| v.as_str());
        assert_eq!(get("GIT_CONFIG_KEY_0"), Some("user.name"));
        assert_eq!(get("GIT_CONFIG_KEY_1"), Some("core.fsmonitor"));
        assert_eq!(get("GIT_CONFIG_VALUE_1"), Some("false"));
        assert_eq!(get("GIT_CONFIG_COUNT"), Some("2"));
    }
}
