//! `tai` (the REPL) and `tai -p PROMPT` (one turn): the agent on the terminal. Model
//! output and notes are shown through `sanitize`; in the REPL a withheld (redefined or
//! added) MCP tool is reviewed inline, old and new definitions side by side, and only the
//! person's `y` re-pins it (never a mode, never the model).

use std::io::{IsTerminal, Read, Write};

use serde_json::{Value, json};

use super::args::ChatArgs;
use super::render::out;
use super::{Context, Failure, Result, VERSION};
use crate::agent::{Agent, TurnUi};
use crate::approval::TerminalApprover;
use crate::bridge::{self, Bridge};
use crate::chat::ChatClient;
use crate::config::{ApiKeySource, process_env};
use crate::sanitize;
use crate::tools::ToolContext;

use crate::limits::MODEL_TIMEOUT;

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
            let _ = o.write_all(sanitize::block(piece).as_bytes());
            let _ = o.flush();
        }
    }

    fn note(&mut self, line: &str) {
        let line = sanitize::block(line);
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
    // project scope: say what this repository's MCP configs hold; the REPL offers them
    super::project_offer::offer(ctx, a.prompt.is_none())?;
    let mut bridge = Bridge::load(&ctx.store, &ctx.config.profile).map_err(Failure)?;
    if a.prompt.is_none() {
        // The REPL asks before a new OAuth login; `-p` fails naming `tai mcp login NAME`.
        bridge.oauth_interaction = crate::mcp::oauth::Interaction::Ask;
    }
    for note in &bridge.notes {
        eprintln!("tai: note: {}", sanitize::line(note));
    }
    if a.prompt.is_some() {
        for (server, tool) in &bridge.withheld {
            eprintln!(
                "tai: the MCP tool {server}/{} changed since it was approved and is withheld: review it with `tai mcp tools {server}`, approve it with `tai mcp approve {server} {}`",
                sanitize::line(tool),
                sanitize::line(tool)
            );
        }
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
        // text piped in joins the prompt as a fenced block (capped, with a note when cut)
        let (data, total) =
            super::piped::read_stdin(super::piped::PIPED_MAX, super::piped::PIPED_WAIT)?;
        let (prompt, note) = super::piped::append(prompt, &data, total, super::piped::PIPED_MAX);
        if let Some(n) = note {
            eprintln!("tai: note: {n}");
        }
        prompt
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
        super::render::out_json(&json!(result))?;
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
    // the terminal gets line editing and history; piped input stays plain lines
    let mut prompter = super::history::Prompter::new(&process_env);
    let mut hinted = false;
    // One approver for the session, so "always" answers last until /exit.
    let mut approver = TerminalApprover::new(config.approval);
    let mut reviewed = std::collections::HashSet::new();
    review_withheld(ctx, agent, &mut reviewed)?;
    loop {
        crate::sigint::clear();
        let mut prompt = format!(
            "\ntai {}·{}> ",
            config.profile,
            config.model.as_deref().unwrap_or("?")
        );
        let mut input = String::new();
        loop {
            match prompter.next_line(&std::mem::take(&mut prompt)) {
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
        // Ctrl-C at the prompt drops the line; twice within 2 s quits.
        if crate::sigint::quit_requested() {
            return Err(Failure("Ctrl-C twice: quitting".into()));
        }
        if crate::sigint::interrupted() && !hinted {
            hinted = true;
            eprintln!("(Ctrl-C again within 2 s quits; /exit or Ctrl-D leaves too)");
        }
        let typed = input.trim_end().to_string();
        let input = input.trim();
        if input.is_empty() {
            continue;
        }
        // (a redaction set that cannot be read means nothing is written)
        if let Ok(redacted) = ctx.store.redact(&typed) {
            prompter.remember(&typed, &redacted);
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
                    {
                        let b = agent.bridge();
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
                            out(&format!(
                                "  not offered (over MCP_MAX_TOOLS): {s}/{}\n",
                                sanitize::line(t)
                            ))?;
                        }
                        for (s, t) in &b.withheld {
                            let t = sanitize::line(t);
                            out(&format!(
                                "  withheld for review: {s}/{t} (`tai mcp approve {s} {t}`)\n"
                            ))?;
                        }
                    }
                }
                "mcp" => {
                    for s in crate::mcp_servers::store::summaries(&ctx.store)? {
                        out(&format!(
                            "{}  {}  enabled for: {}  tools: {}\n",
                            s.name,
                            s.transport,
                            s.enabled_profiles.join(","),
                            s.tools
                        ))?;
                    }
                }
                "profile" if !config.knows_profile(rest.trim()) => out(&format!(
                    "no profile named {:?}: create it with `tai profile add {}`\n",
                    rest.trim(),
                    rest.trim()
                ))?,
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
            Err(e) => eprintln!("tai: {}", sanitize::block(&e)),
        }
        review_withheld(ctx, agent, &mut reviewed)?;
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

/// The REPL's inline drift review: each withheld MCP tool not yet reviewed this session is
/// shown whole (old and new definitions side by side) and re-pinned only when the person
/// answers `y` on the terminal — no approval mode answers this. Re-pinned tools are
/// offered from the next turn.
fn review_withheld(
    ctx: &mut Context,
    agent: &mut Agent<'_>,
    reviewed: &mut std::collections::HashSet<(String, String)>,
) -> Result {
    let pending: Vec<(String, String)> = agent
        .bridge()
        .withheld
        .iter()
        .filter(|p| !reviewed.contains(*p))
        .cloned()
        .collect();
    let mut repinned = false;
    for (server, tool) in pending {
        reviewed.insert((server.clone(), tool.clone()));
        let Some(review) = bridge::review(&ctx.store, &server, &tool).map_err(Failure)? else {
            continue;
        };
        let question = format!("re-pin {server}/{tool} to what the server now says");
        match crate::approval::ask_person(&bridge::review_text(&review), &question) {
            Some(true) => {
                bridge::approve(&mut ctx.store, &server, &tool).map_err(Failure)?;
                eprintln!("tai: re-pinned {server}/{}", sanitize::line(&tool));
                repinned = true;
            }
            _ => eprintln!(
                "tai: {server}/{} stays withheld; approve it later with `tai mcp approve {server} {}`",
                sanitize::line(&tool),
                sanitize::line(&tool)
            ),
        }
    }
    if repinned {
        agent.set_bridge(Bridge::load(&ctx.store, &ctx.config.profile).map_err(Failure)?);
    }
    Ok(())
}
