//! Command-line parsing, stage one: argv to a plain `RawArgs` with no I/O (lexopt).
//!
//! Global flags are accepted anywhere on the line. Every problem is a `UsageError`,
//! which `cli::run` prints as one line and turns into exit code 2.

use std::ffi::OsString;

use lexopt::prelude::*;

use crate::config::Approval;

/// What the user asked for.
#[derive(Clone, Debug, PartialEq)]
pub struct RawArgs {
    pub profile: Option<String>,
    pub approval: Approval,
    pub command: Command,
    /// `--json` was given: the command's output, and its errors, are JSON.
    pub json: bool,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Command {
    /// `--help` for a topic (`&[]` is the top level).
    Help(&'static str),
    Version,
    /// `tai status [--json]`: paths, profile, model and vault state.
    Status {
        json: bool,
    },
    Profile(ProfileCmd),
    Vault(VaultCmd),
    Mcp(McpCmd),
    /// The agent: `tai` (the REPL) or `tai -p PROMPT` (one turn).
    Chat(ChatArgs),
    /// `tai --serve-mcp-stdio [--serve-tools LIST]`: serve MCP over stdio.
    ServeStdio {
        tools: Option<Vec<String>>,
        /// `--serve-workers N`: long calls running at once.
        workers: Option<usize>,
    },
    /// `tai --serve-mcp KEY [--mcp-port N] [--mcp-bind ADDR] [--serve-tools LIST]`: serve
    /// MCP over HTTP.
    ServeHttp {
        key: String,
        port: Option<u16>,
        bind: Option<String>,
        tools: Option<Vec<String>>,
        workers: Option<usize>,
    },
    /// `tai completions bash|zsh|fish`
    Completions(String),
    /// `tai man`: the man page.
    Man,
}

/// `tai [-p PROMPT|-] [--continue] [--json] [--max-steps N]`
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ChatArgs {
    /// One turn with this prompt (`-` reads stdin); `None` opens the REPL.
    pub prompt: Option<String>,
    pub resume: bool,
    pub json: bool,
    pub max_steps: Option<usize>,
}

#[derive(Clone, Debug, PartialEq)]
pub enum McpCmd {
    Probe(ProbeArgs),
    Add {
        source: String,
        name: Option<String>,
        replace: bool,
        json: bool,
        /// Which candidate a GitHub URL's resolution takes when several disagree (1-based).
        pick: Option<usize>,
        /// The common grammar (`NAME [-e K=V]… [-H 'K: V']… [--url URL] [-- CMD ARGS…]`):
        /// `source` is then the entry built from the flags, as JSON.
        explicit: bool,
        /// `--connect-timeout S` / `--call-timeout S`, kept with the entry.
        connect_timeout: Option<f64>,
        call_timeout: Option<f64>,
    },
    /// `tai mcp resolve URL [--pick N] [--json]`: what a GitHub URL resolves to, and why.
    Resolve {
        url: String,
        pick: Option<usize>,
        json: bool,
    },
    Import {
        file: String,
        replace: bool,
        json: bool,
        /// `--anywhere`: a project's servers are not tied to their project.
        anywhere: bool,
    },
    /// `tai mcp list [--json] [--check]`: `--check` connects to each for a live status.
    List {
        json: bool,
        check: bool,
    },
    /// `tai mcp get NAME [--json]`: one server whole (secrets masked).
    Get {
        server: String,
        json: bool,
    },
    /// `tai mcp export [NAME…] --format claude|vscode|codex`.
    Export {
        servers: Vec<String>,
        format: String,
    },
    /// `tai mcp trust SERVER TOOL|'*'`: calls need no approval while the tool is unchanged.
    Trust {
        server: String,
        tool: String,
    },
    Untrust {
        server: String,
        tool: String,
    },
    Enable {
        server: String,
    },
    Disable {
        server: String,
    },
    Remove {
        server: String,
    },
    Tools {
        server: Option<String>,
        json: bool,
    },
    Call {
        server: String,
        tool: String,
        args: Option<String>,
        json: bool,
    },
    Approve {
        server: String,
        tool: String,
    },
    /// `tai mcp login NAME [--client-id ID] [--status]`: the OAuth flow, or its state.
    Login {
        server: String,
        client_id: Option<String>,
        status: bool,
    },
    /// `tai mcp logout NAME`: forget the server's OAuth tokens.
    Logout {
        server: String,
    },
}

/// `tai mcp probe SOURCE ...`
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ProbeArgs {
    /// A command line, a URL, a JSON entry, or `-` for stdin.
    pub source: String,
    pub json: bool,
    pub protocol: Option<String>,
    pub headers: Vec<(String, String)>,
    pub call: Option<String>,
    pub args: Option<String>,
    pub repeat: usize,
    pub connect_timeout: Option<f64>,
    pub call_timeout: Option<f64>,
    pub probe_timeout: Option<f64>,
    /// A pre-registered OAuth client id (its secret, if any, in TAI_OAUTH_CLIENT_SECRET).
    pub client_id: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ProfileCmd {
    List {
        json: bool,
    },
    Add {
        name: String,
        model: Option<String>,
        base_url: Option<String>,
        api_key_secret: Option<String>,
    },
    Use {
        name: String,
    },
    Remove {
        name: String,
    },
    /// `tai profile set NAME KEY VALUE` (an empty VALUE clears the setting).
    Set {
        name: String,
        key: String,
        value: String,
    },
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum VaultCmd {
    SecretSet {
        name: String,
    },
    SecretList {
        json: bool,
    },
    SecretRemove {
        name: String,
    },
    Seal,
    Unseal,
    Audit {
        limit: Option<usize>,
        json: bool,
        verify: bool,
    },
    RecordGet {
        id: String,
    },
    RecordList {
        json: bool,
    },
}

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

    fn profile(&mut self) -> Result<Command> {
        let sub = match self.positional("a subcommand: list, add, set, use or remove", "profile")? {
            Ok(s) => s,
            Err(t) => return Ok(Command::Help(t)),
        };
        let cmd = match sub.as_str() {
            "list" => match self.json_only("profile")? {
                Ok(json) => ProfileCmd::List { json },
                Err(t) => return Ok(Command::Help(t)),
            },
            "add" => {
                let Ok(name) = self.positional("a profile NAME", "profile")? else {
                    return Ok(Command::Help("profile"));
                };
                let (mut model, mut base_url, mut api_key_secret) = (None, None, None);
                loop {
                    match self.next()? {
                        Step::End => break,
                        Step::Help => return Ok(Command::Help("profile")),
                        Step::Arg(Long("model")) => {
                            model = Some(string(self.inner.value()?, "--model")?)
                        }
                        Step::Arg(Long("base-url")) => {
                            base_url = Some(string(self.inner.value()?, "--base-url")?)
                        }
                        Step::Arg(Long("api-key-secret")) => {
                            api_key_secret = Some(string(self.inner.value()?, "--api-key-secret")?)
                        }
                        Step::Arg(a) => return Err(unexpected(a, "profile add")),
                    }
                }
                ProfileCmd::Add {
                    name,
                    model,
                    base_url,
                    api_key_secret,
                }
            }
            "set" => {
                let mut words = Vec::new();
                for what in [
                    "a profile NAME",
                    "a KEY (model, base_url, api_key_secret)",
                    "a VALUE",
                ] {
                    match self.positional(what, "profile")? {
                        Ok(w) => words.push(w),
                        Err(t) => return Ok(Command::Help(t)),
                    }
                }
                let value = words.pop().unwrap_or_default();
                let key = words.pop().unwrap_or_default().replace('-', "_");
                let name = words.pop().unwrap_or_default();
                crate::vault::check_name("profile", &name)
                    .map_err(|e| UsageError(e.to_string()))?;
                if !matches!(key.as_str(), "model" | "base_url" | "api_key_secret") {
                    return Err(UsageError(format!(
                        "a profile has no setting '{key}' (model, base_url, api_key_secret)"
                    )));
                }
                return self.done(Command::Profile(ProfileCmd::Set { name, key, value }));
            }
            "use" | "remove" | "rm" => {
                let Ok(name) = self.positional("a profile NAME", "profile")? else {
                    return Ok(Command::Help("profile"));
                };
                let cmd = if sub == "use" {
                    ProfileCmd::Use { name }
                } else {
                    ProfileCmd::Remove { name }
                };
                return self.done(Command::Profile(cmd));
            }
            other => {
                return Err(UsageError(format!(
                    "unknown profile command '{other}' (see 'tai profile --help')"
                )));
            }
        };
        Ok(Command::Profile(cmd))
    }

    fn vault(&mut self) -> Result<Command> {
        let sub = match self.positional(
            "a subcommand: secret, seal, unseal, audit or record",
            "vault",
        )? {
            Ok(s) => s,
            Err(t) => return Ok(Command::Help(t)),
        };
        let cmd = match sub.as_str() {
            "seal" => VaultCmd::Seal,
            "unseal" => VaultCmd::Unseal,
            "secret" => {
                let Ok(action) = self.positional("set, list or rm", "vault")? else {
                    return Ok(Command::Help("vault"));
                };
                match action.as_str() {
                    "set" | "rm" | "remove" => {
                        let Ok(name) = self.positional("a secret NAME", "vault")? else {
                            return Ok(Command::Help("vault"));
                        };
                        crate::vault::check_name("secret", &name)
                            .map_err(|e| UsageError(e.to_string()))?;
                        if action == "set" {
                            VaultCmd::SecretSet { name }
                        } else {
                            VaultCmd::SecretRemove { name }
                        }
                    }
                    "list" | "ls" => match self.json_only("vault")? {
                        Ok(json) => return Ok(Command::Vault(VaultCmd::SecretList { json })),
                        Err(t) => return Ok(Command::Help(t)),
                    },
                    other => {
                        return Err(UsageError(format!(
                            "unknown secret command '{other}' (see 'tai vault --help')"
                        )));
                    }
                }
            }
            "audit" => {
                let (mut limit, mut json, mut verify) = (None, false, false);
                loop {
                    match self.next()? {
                        Step::End => break,
                        Step::Help => return Ok(Command::Help("vault")),
                        Step::Arg(Long("json")) => json = true,
                        Step::Arg(Long("verify")) => verify = true,
                        Step::Arg(Long("limit")) => {
                            let v = string(self.inner.value()?, "--limit")?;
                            limit = Some(v.parse::<usize>().ok().filter(|n| *n > 0).ok_or_else(
                                || {
                                    UsageError(format!(
                                        "--limit needs a positive number, not '{v}'"
                                    ))
                                },
                            )?);
                        }
                        Step::Arg(a) => return Err(unexpected(a, "vault audit")),
                    }
                }
                return Ok(Command::Vault(VaultCmd::Audit {
                    limit,
                    json,
                    verify,
                }));
            }
            "record" => {
                let Ok(action) = self.positional("get or list", "vault")? else {
                    return Ok(Command::Help("vault"));
                };
                match action.as_str() {
                    "get" => {
                        let Ok(id) = self.positional("a record ID", "vault")? else {
                            return Ok(Command::Help("vault"));
                        };
                        VaultCmd::RecordGet { id }
                    }
                    "list" | "ls" => match self.json_only("vault")? {
                        Ok(json) => return Ok(Command::Vault(VaultCmd::RecordList { json })),
                        Err(t) => return Ok(Command::Help(t)),
                    },
                    other => {
                        return Err(UsageError(format!(
                            "unknown record command '{other}' (see 'tai vault --help')"
                        )));
                    }
                }
            }
            other => {
                return Err(UsageError(format!(
                    "unknown vault command '{other}' (see 'tai vault --help')"
                )));
            }
        };
        self.done(Command::Vault(cmd))
    }
}

impl Parser {
    fn mcp(&mut self) -> Result<Command> {
        let sub = match self.positional(
            "a subcommand: probe, add, resolve, import, list, enable, disable, remove, tools or call",
            "mcp",
        )? {
            Ok(s) => s,
            Err(t) => return Ok(Command::Help(t)),
        };
        if sub == "probe" {
            return self.probe();
        }
        if sub == "add" || sub == "add-json" {
            return self.mcp_add(&sub);
        }
        // The rest share one shape: positionals, then --json, --replace, --pick N, --check,
        // --format F.
        let (mut pos, mut json, mut replace) = (Vec::new(), false, false);
        let (mut pick, mut check, mut format) = (None, false, None);
        let mut anywhere = false;
        let topic = mcp_topic(&sub);
        let (mut client_id, mut status) = (None, false);
        loop {
            match self.next()? {
                Step::End => break,
                Step::Help => return Ok(Command::Help(topic)),
                Step::Arg(Value(v)) => pos.push(string(v, "argument")?),
                Step::Arg(Long("json")) => json = true,
                Step::Arg(Long("replace")) if sub == "import" => replace = true,
                Step::Arg(Long("anywhere")) if sub == "import" => anywhere = true,
                Step::Arg(Long("check")) if matches!(sub.as_str(), "list" | "ls") => check = true,
                Step::Arg(Long("format")) if sub == "export" => {
                    let v = string(self.inner.value()?, "--format")?;
                    if !matches!(v.as_str(), "claude" | "vscode" | "codex") {
                        return Err(UsageError(format!(
                            "--format takes claude, vscode or codex, not '{v}'"
                        )));
                    }
                    format = Some(v);
                }
                Step::Arg(Long("pick")) if sub == "resolve" => {
                    let v = string(self.inner.value()?, "--pick")?;
                    pick = Some(v.parse::<usize>().ok().filter(|n| *n > 0).ok_or_else(|| {
                        UsageError(format!(
                            "--pick needs a candidate number (1, 2, ...), not '{v}'"
                        ))
                    })?);
                }
                Step::Arg(Long("client-id")) if sub == "login" => {
                    client_id = Some(string(self.inner.value()?, "--client-id")?)
                }
                Step::Arg(Long("status")) if sub == "login" => status = true,
                Step::Arg(a) => return Err(unexpected(a, topic)),
            }
        }
        let want = |n: usize, what: &str| -> Result<()> {
            if pos.len() < n {
                return Err(UsageError(format!(
                    "'tai mcp {sub}' needs {what} (see 'tai {topic} --help')"
                )));
            }
            Ok(())
        };
        let cmd = match sub.as_str() {
            "resolve" => {
                want(1, "a GitHub URL")?;
                McpCmd::Resolve {
                    url: pos.remove(0),
                    pick,
                    json,
                }
            }
            "import" => {
                want(1, "a TOOL, a FILE or - (stdin)")?;
                McpCmd::Import {
                    file: pos.remove(0),
                    replace,
                    json,
                    anywhere,
                }
            }
            "list" | "ls" => McpCmd::List { json, check },
            "get" => {
                want(1, "a SERVER name")?;
                McpCmd::Get {
                    server: pos.remove(0),
                    json,
                }
            }
            "export" => McpCmd::Export {
                servers: std::mem::take(&mut pos),
                format: format.unwrap_or_else(|| "claude".into()),
            },
            "trust" | "untrust" => {
                want(2, "a SERVER and a TOOL (or '*' for every tool)")?;
                let server = pos.remove(0);
                let tool = pos.remove(0);
                if sub == "trust" {
                    McpCmd::Trust { server, tool }
                } else {
                    McpCmd::Untrust { server, tool }
                }
            }
            "enable" | "disable" | "remove" | "rm" => {
                want(1, "a SERVER name")?;
                let server = pos.remove(0);
                match sub.as_str() {
                    "enable" => McpCmd::Enable { server },
                    "disable" => McpCmd::Disable { server },
                    _ => McpCmd::Remove { server },
                }
            }
            "tools" => McpCmd::Tools {
                server: (!pos.is_empty()).then(|| pos.remove(0)),
                json,
            },
            "approve" => {
                want(2, "a SERVER and a TOOL")?;
                let server = pos.remove(0);
                McpCmd::Approve {
                    server,
                    tool: pos.remove(0),
                }
            }
            "login" => {
                want(1, "a SERVER name")?;
                McpCmd::Login {
                    server: pos.remove(0),
                    client_id: client_id.take(),
                    status,
                }
            }
            "logout" => {
                want(1, "a SERVER name")?;
                McpCmd::Logout {
                    server: pos.remove(0),
                }
            }
            "call" => {
                want(2, "a SERVER and a TOOL")?;
                let server = pos.remove(0);
                let tool = pos.remove(0);
                McpCmd::Call {
                    server,
                    tool,
                    args: (!pos.is_empty()).then(|| pos.remove(0)),
                    json,
                }
            }
            other => {
                return Err(UsageError(format!(
                    "unknown mcp command '{other}' (see 'tai mcp --help')"
                )));
            }
        };
        if !pos.is_empty() {
            return Err(UsageError(format!(
                "unexpected argument '{}' (see 'tai {topic} --help')",
                pos[0]
            )));
        }
        Ok(Command::Mcp(cmd))
    }

    /// `tai mcp add SOURCE [--name N] [--replace] [--json] [--pick N]`, the common grammar
    /// `tai mcp add NAME [-e K=V]… [--env-var NAME]… [-H 'K: V']… [--url URL]
    /// [--connect-timeout S] [--call-timeout S] [-- CMD ARGS…]` (also `NAME CMD ARGS…` and
    /// `NAME URL`), and `tai mcp add-json NAME JSON`.
    fn mcp_add(&mut self, sub: &str) -> Result<Command> {
        let ctx = if sub == "add" {
            "mcp add"
        } else {
            "mcp add-json"
        };
        let mut pos: Vec<String> = Vec::new();
        let (mut json, mut name, mut replace, mut pick) = (false, None, false, None);
        let (mut env, mut env_vars, mut headers) = (Vec::new(), Vec::new(), Vec::new());
        let (mut url, mut connect_timeout, mut call_timeout) = (None, None, None);
        loop {
            match self.next()? {
                Step::End => break,
                Step::Help => {
                    return Ok(Command::Help(if sub == "add" {
                        "mcp add"
                    } else {
                        "mcp add-json"
                    }));
                }
                Step::Arg(Value(v)) => {
                    pos.push(string(v, "argument")?);
                    // `NAME CMD ARGS…`: everything after the command is its own
                    if sub == "add" && pos.len() == 2 {
                        for a in self.inner.raw_args()? {
                            pos.push(string(a, "argument")?);
                        }
                    }
                }
                Step::Arg(Long("json")) => json = true,
                Step::Arg(Long("replace")) => replace = true,
                Step::Arg(Long("name")) => name = Some(string(self.inner.value()?, "--name")?),
                Step::Arg(Long("pick")) => {
                    let v = string(self.inner.value()?, "--pick")?;
                    pick = Some(v.parse::<usize>().ok().filter(|n| *n > 0).ok_or_else(|| {
                        UsageError(format!(
                            "--pick needs a candidate number (1, 2, ...), not '{v}'"
                        ))
                    })?);
                }
                Step::Arg(Short('e') | Long("env")) => {
                    let v = string(self.inner.value()?, "-e")?;
                    let (k, val) = v
                        .split_once('=')
                        .filter(|(k, _)| is_var_name(k))
                        .ok_or_else(|| UsageError(format!("-e takes NAME=VALUE, not '{v}'")))?;
                    env.push((k.to_string(), val.to_string()));
                }
                Step::Arg(Long("env-var")) => {
                    let v = string(self.inner.value()?, "--env-var")?;
                    if !is_var_name(&v) {
                        return Err(UsageError(format!(
                            "--env-var takes a variable NAME, not '{v}'"
                        )));
                    }
                    env_vars.push(v);
                }
                Step::Arg(Short('H') | Long("header")) => {
                    let v = string(self.inner.value()?, "-H")?;
                    let (k, val) = v
                        .split_once(':')
                        .filter(|(k, _)| !k.trim().is_empty())
                        .ok_or_else(|| UsageError("-H takes 'Name: value'".into()))?;
                    headers.push((k.trim().to_string(), val.trim().to_string()));
                }
                Step::Arg(Long("url")) => url = Some(string(self.inner.value()?, "--url")?),
                Step::Arg(Long(flag @ ("connect-timeout" | "call-timeout"))) => {
                    let v = string(self.inner.value()?, flag)?;
                    let max = crate::mcp::caps::MCP_TIMEOUT_MAX.as_secs_f64();
                    let secs: f64 = v
                        .parse()
                        .ok()
                        .filter(|s: &f64| *s > 0.0 && *s <= max)
                        .ok_or_else(|| {
                            UsageError(format!(
                                "--{flag} needs seconds between 0 and {max} (MCP_TIMEOUT_MAX), not '{v}'"
                            ))
                        })?;
                    if flag == "connect-timeout" {
                        connect_timeout = Some(secs);
                    } else {
                        call_timeout = Some(secs);
                    }
                }
                Step::Arg(a) => return Err(unexpected(a, ctx)),
            }
        }
        let command = self.after_dashes.take().unwrap_or_default();
        if sub == "add-json" {
            if pos.len() != 2 || !command.is_empty() {
                return Err(UsageError(
                    "'tai mcp add-json' needs a NAME and a JSON entry (see 'tai mcp add-json --help')".into(),
                ));
            }
            let source = pos.remove(1);
            return Ok(Command::Mcp(McpCmd::Add {
                source,
                name: Some(pos.remove(0)),
                replace,
                json,
                pick: None,
                explicit: false,
                connect_timeout,
                call_timeout,
            }));
        }
        let flagged = !env.is_empty() || !env_vars.is_empty() || !headers.is_empty();
        let explicit = !command.is_empty() || url.is_some() || flagged || pos.len() >= 2;
        if !explicit {
            let Some(source) = pos.pop() else {
                return Err(UsageError(
                    "'tai mcp add' needs a SOURCE (a config file, - for stdin, the config text, a GitHub URL) or NAME -- CMD ARGS… (see 'tai mcp add --help')".into(),
                ));
            };
            return Ok(Command::Mcp(McpCmd::Add {
                source,
                name,
                replace,
                json,
                pick,
                explicit: false,
                connect_timeout,
                call_timeout,
            }));
        }
        if name.is_some() || pick.is_some() {
            return Err(UsageError(
                "--name and --pick go with a SOURCE; in 'tai mcp add NAME ...' the NAME comes first".into(),
            ));
        }
        // NAME, then the command (after `--`, or as the following words) or the URL
        let mut words = pos.into_iter();
        let server_name = words.next();
        let mut command: Vec<String> = command;
        let rest: Vec<String> = words.collect();
        if command.is_empty() && url.is_none() {
            match rest.first() {
                Some(first) if first.starts_with("http://") || first.starts_with("https://") => {
                    if rest.len() > 1 {
                        return Err(UsageError(format!(
                            "unexpected argument '{}' after the URL (see 'tai mcp add --help')",
                            rest[1]
                        )));
                    }
                    url = Some(first.clone());
                }
                _ => command = rest,
            }
        } else if !rest.is_empty() {
            return Err(UsageError(format!(
                "unexpected argument '{}' (the command goes after --; see 'tai mcp add --help')",
                rest[0]
            )));
        }
        let entry = match (url, command.is_empty()) {
            (Some(_), false) => {
                return Err(UsageError(
                    "give either --url URL or -- CMD ARGS…, not both".into(),
                ));
            }
            (None, true) => {
                return Err(UsageError(
                    "'tai mcp add NAME' needs the server: -- CMD ARGS… or --url URL (see 'tai mcp add --help')".into(),
                ));
            }
            (Some(u), true) => {
                if !env.is_empty() || !env_vars.is_empty() {
                    return Err(UsageError(
                        "-e and --env-var set a command's environment; an HTTP server takes -H"
                            .into(),
                    ));
                }
                let h: serde_json::Map<String, serde_json::Value> =
                    headers.into_iter().map(|(k, v)| (k, v.into())).collect();
                serde_json::json!({"url": u, "headers": h})
            }
            (None, false) => {
                if !headers.is_empty() {
                    return Err(UsageError(
                        "-H sets an HTTP server's headers; a command takes -e".into(),
                    ));
                }
                let mut e: serde_json::Map<String, serde_json::Value> = env_vars
                    .into_iter()
                    .map(|n| {
                        let r = format!("${{{n}}}");
                        (n, r.into())
                    })
                    .collect();
                e.extend(env.into_iter().map(|(k, v)| (k, v.into())));
                let program = command.remove(0);
                serde_json::json!({"command": program, "args": command, "env": e})
            }
        };
        let source = match &server_name {
            Some(n) => serde_json::json!({"mcpServers": {n.as_str(): entry}}).to_string(),
            None => entry.to_string(),
        };
        Ok(Command::Mcp(McpCmd::Add {
            source,
            name: None,
            replace,
            json,
            pick: None,
            explicit: true,
            connect_timeout,
            call_timeout,
        }))
    }

    fn probe(&mut self) -> Result<Command> {
        let mut a = ProbeArgs {
            repeat: 1,
            ..ProbeArgs::default()
        };
        let mut source = None;
        loop {
            match self.next()? {
                Step::End => break,
                Step::Help => return Ok(Command::Help("mcp probe")),
                Step::Arg(Value(v)) if source.is_none() => source = Some(string(v, "SOURCE")?),
                Step::Arg(Long("json")) => a.json = true,
                Step::Arg(Long("protocol")) => {
                    let v = string(self.inner.value()?, "--protocol")?;
                    if crate::mcp::era::EraChoice::parse(&v).is_none() {
                        return Err(UsageError(format!(
                            "--protocol takes auto, 2025-11-25 or 2026-07-28, not '{v}'"
                        )));
                    }
                    a.protocol = Some(v);
                }
                Step::Arg(Long("header")) => {
                    let v = string(self.inner.value()?, "--header")?;
                    let (k, val) = v
                        .split_once(':')
                        .filter(|(k, _)| !k.trim().is_empty())
                        .ok_or_else(|| UsageError("--header takes 'Name: value'".into()))?;
                    a.headers
                        .push((k.trim().to_string(), val.trim().to_string()));
                }
                Step::Arg(Long("call")) => a.call = Some(string(self.inner.value()?, "--call")?),
                Step::Arg(Long("client-id")) => {
                    a.client_id = Some(string(self.inner.value()?, "--client-id")?)
                }
                Step::Arg(Long("args")) => a.args = Some(string(self.inner.value()?, "--args")?),
                Step::Arg(Long("repeat")) => {
                    let v = string(self.inner.value()?, "--repeat")?;
                    a.repeat = v.parse().ok().filter(|n| *n > 0).ok_or_else(|| {
                        UsageError(format!("--repeat needs a positive number, not '{v}'"))
                    })?;
                }
                Step::Arg(Long(flag @ ("connect-timeout" | "call-timeout" | "probe-timeout"))) => {
                    let v = string(self.inner.value()?, flag)?;
                    let secs: f64 = v
                        .parse()
                        .ok()
                        .filter(|s: &f64| *s > 0.0 && s.is_finite())
                        .ok_or_else(|| {
                            UsageError(format!(
                                "--{flag} needs a positive number of seconds, not '{v}'"
                            ))
                        })?;
                    match flag {
                        "connect-timeout" => a.connect_timeout = Some(secs),
                        "call-timeout" => a.call_timeout = Some(secs),
                        _ => a.probe_timeout = Some(secs),
                    }
                }
                Step::Arg(a) => return Err(unexpected(a, "mcp probe")),
            }
        }
        a.source = source.ok_or_else(|| {
            UsageError("'tai mcp probe' needs a SOURCE: a command line, a URL or a JSON entry (see 'tai mcp --help')".into())
        })?;
        if a.args.is_some() && a.call.is_none() {
            return Err(UsageError("--args needs --call TOOL".into()));
        }
        Ok(Command::Mcp(McpCmd::Probe(a)))
    }
}

impl Parser {
    /// The agent's flags; `first` is the one `top` already took (lexopt cannot push back).
    fn chat_args(&mut self, first: Option<&'static str>) -> Result<Command> {
        let mut a = ChatArgs::default();
        let mut pending = first;
        loop {
            let flag = match pending.take() {
                Some(f) => f,
                None => match self.next()? {
                    Step::End => break,
                    Step::Help => return Ok(Command::Help("")),
                    Step::Arg(Short('p')) => "prompt",
                    Step::Arg(Long(l)) => l,
                    Step::Arg(a) => return Err(unexpected(a, "tai")),
                },
            };
            match flag {
                "prompt" => a.prompt = Some(string(self.inner.value()?, "-p")?),
                "continue" => a.resume = true,
                "json" => a.json = true,
                "max-steps" => {
                    let v = string(self.inner.value()?, "--max-steps")?;
                    a.max_steps = Some(v.parse().ok().filter(|n| *n > 0).ok_or_else(|| {
                        UsageError(format!("--max-steps needs a positive number, not '{v}'"))
                    })?);
                }
                other => {
                    return Err(UsageError(format!(
                        "unknown option '--{other}' (see 'tai --help')"
                    )));
                }
            }
        }
        if a.json && a.prompt.is_none() {
            return Err(UsageError(
                "--json goes with -p PROMPT (a one-turn run)".into(),
            ));
        }
        Ok(Command::Chat(a))
    }
}

/// The help topic of `tai mcp SUB`.
pub fn mcp_topic(sub: &str) -> &'static str {
    match sub {
        "probe" => "mcp probe",
        "add" => "mcp add",
        "add-json" => "mcp add-json",
        "resolve" => "mcp resolve",
        "import" => "mcp import",
        "list" | "ls" => "mcp list",
        "get" => "mcp get",
        "export" => "mcp export",
        "enable" | "disable" => "mcp enable",
        "remove" | "rm" => "mcp remove",
        "tools" => "mcp tools",
        "call" => "mcp call",
        "approve" => "mcp approve",
        "trust" | "untrust" => "mcp trust",
        "login" | "logout" => "mcp login",
        _ => "mcp",
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
