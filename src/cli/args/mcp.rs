//! `tai mcp …`: the grammar of every MCP subcommand (`add` and `add-json` with the
//! common `NAME CMD ARGS…` / `NAME URL` forms, `probe`, …) and their help topics.

use lexopt::prelude::*;

use super::{
    Command, McpCmd, Parser, ProbeArgs, Result, Step, UsageError, is_var_name, string, unexpected,
};

impl Parser {
    pub(super) fn mcp(&mut self) -> Result<Command> {
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
