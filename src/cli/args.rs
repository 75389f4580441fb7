//! Command-line parsing, stage one: argv to a plain `RawArgs` with no I/O (lexopt).
//!
//! Global flags are accepted anywhere on the line. Every problem is a `UsageError`,
//! which `cli::run` prints as one line and turns into exit code 2.

use std::ffi::OsString;

use lexopt::prelude::*;

use crate::config::Approval;

mod chat;
mod commands;
mod mcp;
mod profile;
mod vault;

pub use commands::{ChatArgs, Command, McpCmd, ProbeArgs, ProfileCmd, RawArgs, VaultCmd};
pub use mcp::mcp_topic;

/// A command line that cannot be run; the message is one line.
#[derive(Debug, PartialEq, Eq)]
pub struct UsageError(pub String);

impl From<lexopt::Error> for UsageError {
    fn from(e: lexopt::Error) -> Self {
        UsageError(e.to_string())
    }
}

type Result<T> = std::result::Result<T, UsageError>;

/// Parse the arguments after the program name.
pub fn parse<I>(args: I) -> Result<RawArgs>
where
    I: IntoIterator,
    I::Item: Into<OsString>,
{
    let mut args: Vec<OsString> = args.into_iter().map(Into::into).collect();
    // `tai mcp add [NAME] [FLAGS] -- CMD ARGS…`: the words after `--` are the command,
    // taken whole (lexopt would read `-y` as a flag).
    let dashes = args.iter().position(|a| a == "--");
    let is_add = |before: &[OsString]| {
        before
            .windows(2)
            .any(|w| w[0] == "mcp" && (w[1] == "add" || w[1] == "add-json"))
    };
    let after_dashes = match dashes {
        Some(i) if is_add(&args[..i]) => {
            let rest: Vec<OsString> = args.drain(i..).skip(1).collect();
            Some(
                rest.into_iter()
                    .map(|a| string(a, "the command"))
                    .collect::<Result<Vec<String>>>()?,
            )
        }
        _ => None,
    };
    let mut p = Parser {
        inner: lexopt::Parser::from_args(args),
        raw: RawGlobals::default(),
        ctx: "tai",
        after_dashes,
    };
    let command = p.top()?;
    let RawGlobals {
        profile,
        auto,
        yolo,
        json,
    } = p.raw;
    let approval = match (auto, yolo) {
        (true, true) => {
            return Err(UsageError(
                "--auto and --yolo cannot be used together".into(),
            ));
        }
        (true, false) => Approval::Auto,
        (false, true) => Approval::Yolo,
        (false, false) => Approval::Ask,
    };
    Ok(RawArgs {
        profile,
        approval,
        command,
        json,
    })
}

#[derive(Default)]
struct RawGlobals {
    profile: Option<String>,
    auto: bool,
    yolo: bool,
    /// Some command took `--json`.
    json: bool,
}

struct Parser {
    inner: lexopt::Parser,
    raw: RawGlobals,
    /// The command being parsed, for error messages.
    ctx: &'static str,
    /// `mcp add`'s words after `--`.
    after_dashes: Option<Vec<String>>,
}

/// One step of the parse after globals are taken out.
enum Step {
    Arg(lexopt::Arg<'static>),
    Help,
    End,
}

impl Parser {
    /// The next argument that is not a global flag.
    fn next(&mut self) -> Result<Step> {
        loop {
            let Some(arg) = self.inner.next()? else {
                return Ok(Step::End);
            };
            match arg {
                Long("profile") => {
                    let v = string(self.inner.value()?, "--profile")?;
                    crate::vault::check_name("profile", &v)
                        .map_err(|e| UsageError(e.to_string()))?;
                    self.raw.profile = Some(v);
                }
                Long("auto") => self.raw.auto = true,
                Long("yolo") => self.raw.yolo = true,
                Short('h') | Long("help") => return Ok(Step::Help),
                Value(v) => return Ok(Step::Arg(Value(v))),
                Long(l) => match KNOWN_LONG.iter().find(|k| **k == l) {
                    Some(k) => {
                        self.raw.json |= *k == "json";
                        return Ok(Step::Arg(Long(k)));
                    }
                    None => {
                        return Err(UsageError(format!(
                            "unknown option '--{l}' (see '{}')",
                            help_cmd(self.ctx)
                        )));
                    }
                },
                Short(c) => return Ok(Step::Arg(Short(c))),
            }
        }
    }

    fn top(&mut self) -> Result<Command> {
        match self.next()? {
            Step::End => Ok(Command::Chat(ChatArgs::default())),
            Step::Help => Ok(Command::Help("")),
            Step::Arg(Short('p')) => self.chat_args(Some("prompt")),
            Step::Arg(Long("serve-mcp-stdio")) => {
                let (mut tools, mut workers) = (None, None);
                loop {
                    match self.next()? {
                        Step::End => break,
                        Step::Help => return Ok(Command::Help("serve")),
                        Step::Arg(Long("serve-tools")) => tools = Some(self.tool_list()?),
                        Step::Arg(Long("serve-workers")) => workers = Some(self.workers()?),
                        Step::Arg(a) => return Err(unexpected(a, "serve")),
                    }
                }
                Ok(Command::ServeStdio { tools, workers })
            }
            Step::Arg(Long("serve-tools")) => Err(UsageError(
                "--serve-tools goes with --serve-mcp KEY or --serve-mcp-stdio (see 'tai help serve')".into(),
            )),
            Step::Arg(Long("serve-mcp")) => {
                let key = string(self.inner.value()?, "--serve-mcp")?;
                // `tai --serve-mcp --help` asks for help; it is not a key
                if key == "--help" || key == "-h" {
                    return Ok(Command::Help("serve"));
                }
                let (mut port, mut bind, mut tools, mut workers) = (None, None, None, None);
                loop {
                    match self.next()? {
                        Step::End => break,
                        Step::Help => return Ok(Command::Help("serve")),
                        Step::Arg(Long("serve-tools")) => tools = Some(self.tool_list()?),
                        Step::Arg(Long("mcp-port")) => {
                            let v = string(self.inner.value()?, "--mcp-port")?;
                            port = Some(v.parse().map_err(|_| {
                                UsageError(format!("--mcp-port needs a port number, not '{v}'"))
                            })?);
                        }
                        Step::Arg(Long("mcp-bind")) => {
                            bind = Some(string(self.inner.value()?, "--mcp-bind")?)
                        }
                        Step::Arg(Long("serve-workers")) => workers = Some(self.workers()?),
                        Step::Arg(a) => return Err(unexpected(a, "serve")),
                    }
                }
                Ok(Command::ServeHttp {
                    key,
                    port,
                    bind,
                    tools,
                    workers,
                })
            }
            Step::Arg(Long(flag @ ("prompt" | "continue" | "json" | "max-steps"))) => {
                self.chat_args(Some(flag))
            }
            Step::Arg(Short('V') | Long("version")) => self.done(Command::Version),
            Step::Arg(Value(v)) => match string(v, "command")?.as_str() {
                "status" => {
                    self.ctx = "status";
                    self.status()
                }
                "profile" => {
                    self.ctx = "profile";
                    self.profile()
                }
                "vault" => {
                    self.ctx = "vault";
                    self.vault()
                }
                "mcp" => {
                    self.ctx = "mcp";
                    self.mcp()
                }
                "help" => self.help_topic(),
                "man" => {
                    self.ctx = "man";
                    self.done(Command::Man)
                }
                "completions" | "completion" => {
                    self.ctx = "completions";
                    let shell = match self.positional("a SHELL: bash, zsh or fish", "completions")? {
                        Ok(s) => s,
                        Err(t) => return Ok(Command::Help(t)),
                    };
                    if !matches!(shell.as_str(), "bash" | "zsh" | "fish") {
                        return Err(UsageError(format!(
                            "completions are made for bash, zsh or fish, not '{shell}'"
                        )));
                    }
                    self.done(Command::Completions(shell))
                }
                other => Err(UsageError(format!(
                    "unknown command '{other}' (see 'tai --help')"
                ))),
            },
            Step::Arg(a) => Err(unexpected(a, "tai")),
        }
    }

    fn help_topic(&mut self) -> Result<Command> {
        let mut words = Vec::new();
        loop {
            match self.next()? {
                Step::Arg(Value(v)) => words.push(string(v, "topic")?),
                Step::Arg(Long(l)) => words.push(format!("--{l}")),
                Step::End | Step::Help => break,
                Step::Arg(a) => return Err(unexpected(a, "tai")),
            }
        }
        if words.is_empty() {
            return Ok(Command::Help(""));
        }
        match super::help::topic_of(&words) {
            Some(t) => Ok(Command::Help(t)),
            None => Err(UsageError(format!(
                "no help topic '{}' (topics: {})",
                words.join(" "),
                super::help::TOPICS
                    .iter()
                    .map(|(t, _)| *t)
                    .filter(|t| !t.is_empty())
                    .collect::<Vec<_>>()
                    .join(", ")
            ))),
        }
    }

    /// `--serve-workers N` (1 or more).
    fn workers(&mut self) -> Result<usize> {
        let v = string(self.inner.value()?, "--serve-workers")?;
        match v.parse::<usize>() {
            Ok(n) if n >= 1 => Ok(n),
            _ => Err(UsageError(format!(
                "--serve-workers needs a number of workers, 1 or more, not '{v}'"
            ))),
        }
    }

    /// `--serve-tools a,b,c`.
    fn tool_list(&mut self) -> Result<Vec<String>> {
        let v = string(self.inner.value()?, "--serve-tools")?;
        let names: Vec<String> = v
            .split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(str::to_string)
            .collect();
        if names.is_empty() {
            return Err(UsageError(
                "--serve-tools takes tool names, comma-separated".into(),
            ));
        }
        Ok(names)
    }

    /// Only globals may follow; then `cmd`.
    fn done(&mut self, cmd: Command) -> Result<Command> {
        match self.next()? {
            Step::End => Ok(cmd),
            Step::Help => Ok(Command::Help(help_for(&cmd))),
            Step::Arg(a) => Err(unexpected(a, command_name(&cmd))),
        }
    }

    /// Flags `--json` only, then done.
    fn json_only(&mut self, ctx: &'static str) -> Result<std::result::Result<bool, &'static str>> {
        let mut json = false;
        loop {
            match self.next()? {
                Step::End => return Ok(Ok(json)),
                Step::Help => return Ok(Err(ctx)),
                Step::Arg(Long("json")) => json = true,
                Step::Arg(a) => return Err(unexpected(a, ctx)),
            }
        }
    }

    fn status(&mut self) -> Result<Command> {
        Ok(match self.json_only("status")? {
            Ok(json) => Command::Status { json },
            Err(topic) => Command::Help(topic),
        })
    }

    fn positional(
        &mut self,
        what: &str,
        ctx: &'static str,
    ) -> Result<std::result::Result<String, &'static str>> {
        match self.next()? {
            Step::Arg(Value(v)) => Ok(Ok(string(v, what)?)),
            Step::Help => Ok(Err(ctx)),
            Step::End => Err(UsageError(format!(
                "'tai {ctx}' needs {what} (see 'tai {ctx} --help')"
            ))),
            Step::Arg(a) => Err(unexpected(a, ctx)),
        }
    }
}

fn command_name(cmd: &Command) -> &'static str {
    match cmd {
        Command::Help(_) | Command::Version => "tai",
        Command::Status { .. } => "status",
        Command::Profile(_) => "profile",
        Command::Vault(_) => "vault",
        Command::Mcp(_) => "mcp",
        Command::Chat(_) => "tai",
        Command::ServeStdio { .. } | Command::ServeHttp { .. } => "serve",
        Command::Completions(_) => "completions",
        Command::Man => "man",
    }
}

fn help_for(cmd: &Command) -> &'static str {
    match cmd {
        Command::Help(t) => t,
        Command::Version => "",
        other => command_name(other),
    }
}

/// An environment variable's name: `[A-Za-z_][A-Za-z0-9_]*`.
fn is_var_name(s: &str) -> bool {
    let mut b = s.bytes();
    matches!(b.next(), Some(c) if c.is_ascii_alphabetic() || c == b'_')
        && b.all(|c| c.is_ascii_alphanumeric() || c == b'_')
}

fn string(v: OsString, what: &str) -> Result<String> {
    v.into_string()
        .map_err(|v| UsageError(format!("{what}: {v:?} is not valid UTF-8")))
}

/// Every long option some command takes; any other is reported where it is met.
pub const KNOWN_LONG: &[&str] = &[
    "version",
    "json",
    "model",
    "base-url",
    "api-key-secret",
    "limit",
    "verify",
    "protocol",
    "header",
    "call",
    "args",
    "repeat",
    "connect-timeout",
    "call-timeout",
    "probe-timeout",
    "client-id",
    "status",
    "name",
    "replace",
    "prompt",
    "continue",
    "max-steps",
    "pick",
    "serve-mcp-stdio",
    "serve-mcp",
    "mcp-port",
    "mcp-bind",
    "serve-tools",
    "serve-workers",
    "env",
    "env-var",
    "url",
    "format",
    "check",
    "anywhere",
];

fn help_cmd(ctx: &str) -> String {
    if ctx == "tai" {
        "tai --help".to_string()
    } else {
        format!("tai {ctx} --help")
    }
}

fn unexpected(arg: lexopt::Arg<'_>, ctx: &str) -> UsageError {
    let help = help_cmd(ctx);
    UsageError(match arg {
        Long(l) => format!("unknown option '--{l}' (see '{help}')"),
        Short(c) => format!("unknown option '-{c}' (see '{help}')"),
        Value(v) => format!(
            "unexpected argument '{}' (see '{help}')",
            v.to_string_lossy()
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(args: &[&str]) -> RawArgs {
        parse(args.iter().copied()).unwrap_or_else(|e| panic!("{args:?}: {}", e.0))
    }

    fn err(args: &[&str]) -> String {
        parse(args.iter().copied())
            .expect_err(&format!("{args:?} should fail"))
            .0
    }

    #[test]
    fn commands_parse() {
        let table: &[(&[&str], Command)] = &[
            (&[], Command::Chat(ChatArgs::default())),
            (
                &["-p", "hi there", "--json", "--max-steps", "3"],
                Command::Chat(ChatArgs {
                    prompt: Some("hi there".into()),
                    json: true,
                    max_steps: Some(3),
                    resume: false,
                }),
            ),
            (
                &["--continue"],
                Command::Chat(ChatArgs {
                    resume: true,
                    ..ChatArgs::default()
                }),
            ),
            (
                &["--serve-mcp-stdio"],
                Command::ServeStdio {
                    tools: None,
                    workers: None,
                },
            ),
            (
                &["--yolo", "-p", "-"],
                Command::Chat(ChatArgs {
                    prompt: Some("-".into()),
                    ..ChatArgs::default()
                }),
            ),
            (&["--help"], Command::Help("")),
            (&["-V"], Command::Version),
            (&["--version"], Command::Version),
            (&["status", "--json"], Command::Status { json: true }),
            (&["status", "--help"], Command::Help("status")),
            (&["help", "vault"], Command::Help("vault")),
            (
                &["profile", "list"],
                Command::Profile(ProfileCmd::List { json: false }),
            ),
            (&["profile", "--help"], Command::Help("profile")),
            (
                &["profile", "use", "work"],
                Command::Profile(ProfileCmd::Use {
                    name: "work".into(),
                }),
            ),
            (
                &[
                    "profile",
                    "add",
                    "w",
                    "--model",
                    "m",
                    "--base-url",
                    "http://x/v1",
                ],
                Command::Profile(ProfileCmd::Add {
                    name: "w".into(),
                    model: Some("m".into()),
                    base_url: Some("http://x/v1".into()),
                    api_key_secret: None,
                }),
            ),
            (
                &["vault", "secret", "set", "gh"],
                Command::Vault(VaultCmd::SecretSet { name: "gh".into() }),
            ),
            (
                &["mcp", "login", "linear", "--client-id", "cid"],
                Command::Mcp(McpCmd::Login {
                    server: "linear".into(),
                    client_id: Some("cid".into()),
                    status: false,
                }),
            ),
            (
                &["mcp", "login", "linear", "--status"],
                Command::Mcp(McpCmd::Login {
                    server: "linear".into(),
                    client_id: None,
                    status: true,
                }),
            ),
            (
                &["mcp", "logout", "linear"],
                Command::Mcp(McpCmd::Logout {
                    server: "linear".into(),
                }),
            ),
            (
                &["vault", "secret", "list", "--json"],
                Command::Vault(VaultCmd::SecretList { json: true }),
            ),
            (
                &["vault", "audit", "--limit", "5", "--verify"],
                Command::Vault(VaultCmd::Audit {
                    limit: Some(5),
                    json: false,
                    verify: true,
                }),
            ),
            (
                &["vault", "record", "get", "rec_1"],
                Command::Vault(VaultCmd::RecordGet { id: "rec_1".into() }),
            ),
            (&["vault", "seal", "--help"], Command::Help("vault")),
            (&["mcp", "--help"], Command::Help("mcp")),
            (&["mcp", "probe", "--help"], Command::Help("mcp probe")),
            (
                &[
                    "mcp", "probe", "npx -y x", "--call", "echo", "--args", "{}", "--repeat", "3",
                    "--header", "A: b:c",
                ],
                Command::Mcp(McpCmd::Probe(ProbeArgs {
                    source: "npx -y x".into(),
                    call: Some("echo".into()),
                    args: Some("{}".into()),
                    repeat: 3,
                    headers: vec![("A".into(), "b:c".into())],
                    ..ProbeArgs::default()
                })),
            ),
        ];
        for (args, want) in table {
            assert_eq!(ok(args).command, *want, "{args:?}");
        }
    }

    #[test]
    fn globals_anywhere() {
        let a = ok(&["vault", "--profile", "work", "seal", "--yolo"]);
        assert_eq!(
            (a.profile.as_deref(), a.approval),
            (Some("work"), Approval::Yolo)
        );
        assert_eq!(ok(&["--auto", "status"]).approval, Approval::Auto);
        assert_eq!(ok(&["status"]).approval, Approval::Ask);
    }

    #[test]
    fn usage_errors_are_one_clear_line() {
        let table: &[(&[&str], &str)] = &[
            (&["--frobnicate"], "unknown option '--frobnicate'"),
            (&["-x"], "unknown option '-x'"),
            (&["launch"], "unknown command 'launch'"),
            (&["--profile"], "missing argument for option '--profile'"),
            (&["--profile", "bad name"], "invalid profile name"),
            (&["--auto", "--yolo", "status"], "cannot be used together"),
            (
                &["vault", "audit", "--limit", "0"],
                "--limit needs a positive number",
            ),
            (
                &["vault", "audit", "--limit", "x"],
                "--limit needs a positive number",
            ),
            (&["vault", "secret", "set"], "needs a secret NAME"),
            (&["vault", "secret", "set", "a b"], "invalid secret name"),
            (
                &["vault", "secret", "set", "x", "value"],
                "unexpected argument 'value'",
            ),
            (&["vault"], "needs a subcommand"),
            (&["profile", "nuke"], "unknown profile command 'nuke'"),
            (&["status", "extra"], "unexpected argument 'extra'"),
            (&["--version", "status"], "unexpected argument 'status'"),
            (&["mcp", "probe"], "needs a SOURCE"),
            (&["mcp", "login"], "needs a SERVER name"),
            (&["mcp", "logout", "a", "b"], "unexpected argument 'b'"),
            (&["mcp", "list", "--client-id", "x"], "--client-id"),
            (
                &["mcp", "probe", "x", "--protocol", "2024-01-01"],
                "--protocol takes",
            ),
            (&["mcp", "probe", "x", "--repeat", "0"], "--repeat needs"),
            (
                &["mcp", "probe", "x", "--args", "{}"],
                "--args needs --call",
            ),
            (
                &["mcp", "probe", "x", "--header", "novalue"],
                "--header takes",
            ),
            (
                &["mcp", "probe", "x", "--call-timeout", "-1"],
                "positive number of seconds",
            ),
            (&["mcp", "probe", "x", "y"], "unexpected argument 'y'"),
            (&["mcp", "frob"], "unknown mcp command"),
            (&["mcp", "add"], "needs a SOURCE"),
            (&["-p"], "missing argument"),
            (&["--json"], "--json goes with -p"),
            (&["-p", "x", "--max-steps", "0"], "--max-steps needs"),
            (&["mcp", "call", "srv"], "needs a SERVER and a TOOL"),
            (&["mcp", "enable"], "needs a SERVER"),
            (&["mcp", "list", "--replace"], "unknown option '--replace'"),
            (&["mcp", "list", "extra"], "unexpected argument 'extra'"),
        ];
        for (args, want) in table {
            let e = err(args);
            assert!(e.contains(want), "{args:?}: {e:?} should contain {want:?}");
            assert!(!e.contains('\n'), "{args:?}: {e:?} is more than one line");
        }
    }
}
