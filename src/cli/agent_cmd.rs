//! `tai` (the REPL) and `tai -p PROMPT` (one turn): the agent on the terminal.

use std::io::{IsTerminal, Read, Write};
use std::os::fd::AsFd;
use std::time::Duration;

use serde_json::{Value, json};

use super::args::ChatArgs;
use super::render::out;
use super::{Context, Failure, Result, VERSION};
use crate::agent::{Agent, TurnUi};
use crate::approval::TerminalApprover;
use crate::chat::ChatClient;
use crate::config::{ApiKeySource, process_env};
use crate::tools::ToolContext;

/// Deadline of one model call.
const MODEL_TIMEOUT: Duration = Duration::from_secs(300);

/// Streams answer text to stdout; tool chatter to stderr, dimmed on a colour terminal.
struct TerminalUi {
    color: bool,
    /// `-p --json`: nothing streams; the transcript is printed at the end.
    quiet: bool,
}

impl TurnUi for TerminalUi {
    fn text(&mut self, piece: &str) {
        if !self.quiet {
            let mut o = std::io::stdout().lock();
            let _ = o.write_all(piece.as_bytes());
            let _ = o.flush();
        }
    }

    fn note(&mut self, line: &str) {
        if self.color {
            eprintln!("\x1b[2m{line}\x1b[0m");
        } else {
            eprintln!("{line}");
        }
    }
}

fn chat_client(ctx: &mut Context) -> Result<ChatClient> {
    let c = &ctx.config;
    let model = c.model.clone().ok_or_else(|| {
        Failure("no model is set: export TAI_MODEL=NAME, or `tai profile add NAME --model M` and `tai profile use NAME`".into())
    })?;
    let key = match &c.api_key {
        ApiKeySource::None => None,
        ApiKeySource::Env => process_env("TAI_API_KEY"),
        ApiKeySource::Secret(name) => {
            let name = name.clone();
            ctx.unlock()?;
            Some(ctx.store.secret_get(&name)?.ok_or_else(|| {
                Failure(format!(
                    "the API key secret {name:?} is not in the vault: `tai vault secret set {name}`"
                ))
            })?)
        }
    };
    if let Some(k) = &key {
        ctx.store.add_resolved("api-key", k);
    }
    Ok(ChatClient::new(
        &ctx.config.base_url,
        &model,
        key,
        MODEL_TIMEOUT,
    ))
}

pub fn run(ctx: &mut Context, a: &ChatArgs) -> Result {
    crate::sigint::install();
    let chat = chat_client(ctx)?;
    ctx.unlock()?;
    let bridge = crate::bridge::Bridge::load(&ctx.store, &ctx.config.profile).map_err(Failure)?;
    for (server, tool) in &bridge.withheld {
        eprintln!(
            "tai: the MCP tool {server}/{tool} changed since it was approved and is withheld: review it with `tai mcp tools {server}`, approve it with `tai mcp approve {server} {tool}`"
        );
    }
    let mut agent = Agent::new(&chat).with_bridge(bridge);
    if let Some(n) = a.max_steps {
        agent.max_steps = n;
    }
    let mut conversation = None;
    if a.resume {
        match ctx.store.conversation_last()? {
            Some((id, Value::Array(messages))) => {
                conversation = Some(id);
                agent.history = messages;
            }
            _ => eprintln!("tai: no earlier conversation to continue; starting a new one"),
        }
    }
    let color = std::io::stderr().is_terminal() && process_env("NO_COLOR").is_none();
    match &a.prompt {
        Some(p) => one_turn(ctx, &mut agent, p, a.json, color, conversation),
        None => repl(ctx, &mut agent, color, conversation),
    }
}

fn one_turn(
    ctx: &mut Context,
    agent: &mut Agent<'_>,
    prompt: &str,
    json: bool,
    color: bool,
    conversation: Option<i64>,
) -> Result {
    let prompt = if prompt == "-" {
        let mut s = String::new();
        std::io::stdin()
            .lock()
            .take(1 << 20)
            .read_to_string(&mut s)?;
        s
    } else {
        prompt.to_string()
    };
    let mut ui = TerminalUi { color, quiet: json };
    let mut approver = TerminalApprover::new(ctx.config.approval);
    let config = ctx.config.clone();
    let mut tctx = ToolContext {
        store: &mut ctx.store,
        config: &config,
        approver: &mut approver,
        env: &process_env,
    };
    let result = agent.run_turn(&mut tctx, &prompt, &mut ui, &crate::sigint::interrupted);
    ctx.store.conversation_save(
        conversation,
        &config.profile,
        &Value::Array(agent.history.clone()),
    )?;
    let result = result.map_err(Failure)?;
    if json {
        out(&format!("{:#}\n", json!(result)))?;
    } else if !result.answer.is_empty() && !result.answer.ends_with('\n') {
        out("\n")?;
    }
    match result.stopped.as_deref() {
        None => Ok(()),
        Some("interrupted") => Err(Failure("interrupted".into())),
        Some("cut") => Err(Failure(
            "the model's answer was cut off (see above for what arrived)".into(),
        )),
        Some(other) => Err(Failure(format!("the turn stopped early: {other}"))),
    }
}

const REPL_HELP: &str = "\
/help            this help
/tools           the native tools
/mcp             stored MCP servers (see `tai mcp --help`)
/profile NAME    make NAME the current profile (takes effect at the next start)
/clear           start a new conversation
/exit            leave (Ctrl-D works too)
A line ending in \\ continues on the next line. Ctrl-C stops the current turn or tool
call; Ctrl-C twice within 2 s quits.
";

fn repl(
    ctx: &mut Context,
    agent: &mut Agent<'_>,
    color: bool,
    mut conversation: Option<i64>,
) -> Result {
    let config = ctx.config.clone();
    eprintln!(
        "tai {VERSION} · profile {} · model {} · /help for commands",
        config.profile,
        config.model.as_deref().unwrap_or("?")
    );
    let mut lines = PromptInput::default();
    // One approver for the session, so "always" answers last until /exit.
    let mut approver = TerminalApprover::new(config.approval);
    loop {
        crate::sigint::clear();
        let mut o = std::io::stdout().lock();
        let _ = write!(
            o,
            "\ntai {}·{}> ",
            config.profile,
            config.model.as_deref().unwrap_or("?")
        );
        let _ = o.flush();
        drop(o);
        let mut input = String::new();
        loop {
            match lines.next() {
                Some(Err(quit)) => return Err(quit),
                Some(Ok(l)) => match l.strip_suffix('\\') {
                    Some(head) => {
                        input.push_str(head);
                        input.push('\n');
                    }
                    None => {
                        input.push_str(&l);
                        break;
                    }
                },
                _ => {
                    if input.trim().is_empty() {
                        out("\n")?;
                        return Ok(());
                    }
                    break;
                }
            }
        }
        let input = input.trim();
        if input.is_empty() {
            continue;
        }
        if let Some(cmd) = input.strip_prefix('/') {
            let (name, rest) = cmd.split_once(' ').unwrap_or((cmd, ""));
            match name {
                "exit" | "quit" => return Ok(()),
                "help" => out(REPL_HELP)?,
                "clear" => {
                    agent.history.clear();
                    conversation = None;
                    out("(a new conversation)\n")?;
                }
                "tools" => {
                    let names: Vec<String> = crate::tools::all()
                        .iter()
                        .map(|t| t.def().name.to_string())
                        .collect();
                    out(&format!("{}\n", names.join(" ")))?;
                    if let Some(b) = agent.bridge() {
                        let offered: Vec<&str> = b.tools.iter().map(|t| t.name.as_str()).collect();
                        out(&format!(
                            "MCP: {}\n",
                            if offered.is_empty() {
                                "(none enabled)".to_string()
                            } else {
                                offered.join(" ")
                            }
                        ))?;
                        for (s, t) in &b.not_offered {
                            out(&format!("  not offered (over MCP_MAX_TOOLS): {s}/{t}\n"))?;
                        }
                        for (s, t) in &b.withheld {
                            out(&format!(
                                "  withheld for review: {s}/{t} (`tai mcp approve {s} {t}`)\n"
                            ))?;
                        }
                    }
                }
                "mcp" => {
                    for s in crate::mcp::store::summaries(&ctx.store)? {
                        out(&format!(
                            "{}  {}  enabled for: {}  tools: {}\n",
                            s.name,
                            s.transport,
                            s.enabled_profiles.join(","),
                            s.tools
                        ))?;
                    }
                }
                "profile" if !rest.trim().is_empty() => {
                    ctx.store.meta_set("current_profile", rest.trim())?;
                    out(&format!(
                        "profile {} is current from the next start\n",
                        rest.trim()
                    ))?;
                }
                _ => out(&format!("unknown command /{name}; /help lists them\n"))?,
            }
            continue;
        }
        let mut ui = TerminalUi {
            color,
            quiet: false,
        };
        let mut tctx = ToolContext {
            store: &mut ctx.store,
            config: &config,
            approver: &mut approver,
            env: &process_env,
        };
        match agent.run_turn(&mut tctx, input, &mut ui, &crate::sigint::interrupted) {
            Ok(r) if !r.answer.ends_with('\n') => out("\n")?,
            Ok(_) => {}
            Err(e) => eprintln!("tai: {e}"),
        }
        conversation = Some(ctx.store.conversation_save(
            conversation,
            &config.profile,
            &Value::Array(agent.history.clone()),
        )?);
        if crate::sigint::quit_requested() {
            return Err(Failure(
                "Ctrl-C twice: quitting (the conversation is saved; `tai --continue` resumes it)"
                    .into(),
            ));
        }
    }
}

/// The REPL's input: lines from stdin read through `poll(2)` in short rounds, so a Ctrl-C
/// at the prompt is seen (a hint the first time, quitting on a second press within 2 s).
#[derive(Default)]
struct PromptInput {
    pending: Vec<u8>,
    eof: bool,
    hinted: bool,
}

impl Iterator for PromptInput {
    /// A line; `Err` when Ctrl-C twice asks to quit; `None` at the end of input.
    type Item = std::result::Result<String, Failure>;

    fn next(&mut self) -> Option<Self::Item> {
        use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
        loop {
            if let Some(nl) = self.pending.iter().position(|b| *b == b'\n') {
                let line: Vec<u8> = self.pending.drain(..=nl).collect();
                let text = String::from_utf8_lossy(&line[..nl]);
                return Some(Ok(text.trim_end_matches('\r').to_string()));
            }
            if self.eof {
                if self.pending.is_empty() {
                    return None;
                }
                let rest = std::mem::take(&mut self.pending);
                return Some(Ok(String::from_utf8_lossy(&rest).into_owned()));
            }
            if crate::sigint::quit_requested() {
                return Some(Err(Failure("Ctrl-C twice: quitting".into())));
            }
            if crate::sigint::interrupted() {
                crate::sigint::clear();
                if !self.hinted {
                    self.hinted = true;
                    eprintln!("\n(Ctrl-C again within 2 s quits; /exit or Ctrl-D leaves too)");
                }
            }
            let stdin = std::io::stdin();
            let mut fds = [PollFd::new(stdin.as_fd(), PollFlags::POLLIN)];
            match poll(&mut fds, PollTimeout::from(250u16)) {
                Ok(0) | Err(_) => continue, // the clock or a signal: look at the flags again
                Ok(_) => {}
            }
            let mut buf = [0u8; 4096];
            match nix::unistd::read(stdin.as_fd(), &mut buf) {
                Ok(0) => self.eof = true,
                Ok(n) => self.pending.extend_from_slice(&buf[..n]),
                Err(nix::errno::Errno::EINTR | nix::errno::Errno::EAGAIN) => {}
                Err(_) => self.eof = true,
            }
        }
    }
}
