//! The one trust gate: every tool call — native, bridged, the agent's `mcp_call`, the
//! served HTTP and stdio surfaces, `tai mcp call` — passes [`call`], in this order:
//!
//! 1. **resolve** the target: a native tool, a caller-local tool (`tool_search`), or one
//!    tool of a stored MCP server (a bridged name, `mcp_call {server, tool}`, or named
//!    directly by `tai mcp call`);
//! 2. **policy**: the served surface reaches no foreign tool; the server exists, is
//!    enabled for the profile (every entrance but a person's `tai mcp call`), lists the
//!    tool in its stored list, its allow/deny lets it through, and its pin holds — checked
//!    against the stored pins, then against the live listing of the connection (a
//!    drifted or added tool is refused; a server whose tools cannot be listed is refused
//!    for the turn);
//! 3. **approval**: unless the tool is read-only, the question names the server, the tool,
//!    its pin and the argument digest, and "always" is keyed on an [`ApprovalKey`]
//!    (for MCP tools, on the pin);
//! 4. **the call**, with its deadline (native tools' own, `MCP_CALL_TIMEOUT` for MCP);
//! 5. **redaction** of every known secret value;
//! 6. **spill** of a result over `MCP_RESULT_MAX` to a vault record;
//! 7. **audit**: one row per call, refusals included with their reason; when the row
//!    cannot be written the result is not returned (fail closed).
//!
//! No step here ever changes a pin: only a person does (`bridge::approve`).

use std::time::Instant;

use serde_json::{Map, Value};

use super::Bridge;
use crate::approval::ApprovalKey;
use crate::mcp::caps::MCP_RESULT_MAX;
use crate::mcp_servers::store::{self, pin_hash};
use crate::tools::{self, Native, ToolContext, ToolDef, ToolOutput};
use crate::vault::audit::{Event, Outcome};

/// Who is asking. Policy differs only where the issue of trust differs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Entrance {
    /// The agent's model (the REPL, `tai -p`, the served `chat`): servers must be enabled
    /// for the profile.
    Model,
    /// A person's explicit act (`tai mcp call`): may reach a disabled server, never a
    /// drifted tool.
    Person,
    /// A client of `--serve-mcp` / `--serve-mcp-stdio` calling a served tool: never
    /// routed to a foreign server's tools.
    Network,
}

/// What is asked for.
#[derive(Clone, Copy, Debug)]
pub enum Ask<'a> {
    /// A tool by the name the caller used: native, caller-local, bridged
    /// (`mcp_<server>_<tool>`) or `mcp_call`.
    Named(&'a str),
    /// One tool of a stored server, named directly (`tai mcp call SERVER TOOL`).
    Mcp { server: &'a str, tool: &'a str },
}

/// A tool that lives with the caller (the agent's `tool_search`, the served `chat` and
/// `completions`), still gated, redacted, spilled and audited.
pub struct Local<'f> {
    pub def: ToolDef,
    pub run: &'f mut dyn FnMut(&mut ToolContext<'_>, &Map<String, Value>) -> ToolOutput,
}

/// What the gate let through, or why not.
#[derive(Debug)]
pub struct Passed {
    /// Redacted, spilled; for a refusal, the reason (what to do next).
    pub output: ToolOutput,
    /// The audit outcome: ok, tool-error, denied, not-enabled, not-listed, not-allowed,
    /// withheld, unverified, not-served, unknown-tool, unknown-server, bad-arguments,
    /// protocol-error, timeout, audit-failed.
    pub outcome: Outcome,
    /// The record a large result spilled to.
    pub record: Option<String>,
}

enum Target {
    Local,
    Native(&'static Native),
    Mcp {
        server: String,
        tool: String,
        arguments: Map<String, Value>,
        /// The schema to check arguments against (bridged names only).
        schema: Option<Value>,
    },
}

/// A refusal: its audit outcome and the text the caller gets.
type Refused = (Outcome, String);

/// Pass one call through the gate. `note` gets one-line progress for a person
/// (`→ tool`, `denied: …`).
pub fn call(
    ctx: &mut ToolContext<'_>,
    bridge: &mut Bridge,
    entrance: Entrance,
    ask: Ask<'_>,
    args: Map<String, Value>,
    mut local: Option<Local<'_>>,
    note: &mut dyn FnMut(&str),
) -> Passed {
    let started = Instant::now();
    let arg_digest = ctx
        .store
        .arg_digest(serde_json::to_string(&args).unwrap_or_default().as_bytes());
    let shown_name = match ask {
        Ask::Named(n) => n.to_string(),
        Ask::Mcp { server, tool } => format!("{server}/{tool}"),
    };
    let (kind, subject, result) = match resolve(bridge, entrance, ask, &args, &local) {
        Err((outcome, text)) => ("tool-call", shown_name.clone(), Err((outcome, text))),
        Ok(target) => {
            let (kind, subject) = match &target {
                Target::Mcp { server, tool, .. } => ("mcp-call", format!("{server}/{tool}")),
                _ => ("tool-call", shown_name.clone()),
            };
            let r = run(
                ctx,
                bridge,
                entrance,
                target,
                &shown_name,
                args,
                &arg_digest,
                local.as_mut(),
                note,
            );
            (kind, subject, r)
        }
    };
    let (output, outcome, record) = match result {
        // Stopped by Ctrl-C (or a served turn's deadline): audited as such.
        Ok((out, Outcome::ToolError | Outcome::ProtocolError))
            if out.is_error && crate::sigint::interrupted() =>
        {
            finish(ctx, &shown_name, out, Outcome::Interrupted)
        }
        Ok((out, outcome)) => finish(ctx, &shown_name, out, outcome),
        Err((outcome, text)) => {
            let text = ctx
                .store
                .redact(&text)
                .unwrap_or_else(|_| format!("refused ({outcome})"));
            (ToolOutput::error(text), outcome, None)
        }
    };
    audit(
        ctx,
        kind,
        &subject,
        &arg_digest,
        outcome,
        started,
        output,
        record,
    )
}

/// Redact, then spill (a result over `MCP_RESULT_MAX` is stored whole, the caller gets the id).
fn finish(
    ctx: &mut ToolContext<'_>,
    source: &str,
    out: ToolOutput,
    outcome: Outcome,
) -> (ToolOutput, Outcome, Option<String>) {
    let text = match ctx.store.redact(&out.text) {
        Ok(t) => t,
        Err(e) => {
            return (
                ToolOutput::error(format!(
                    "the result was withheld: it could not be checked for secrets ({e})"
                )),
                Outcome::Withheld,
                None,
            );
        }
    };
    if !outcome.answered() {
        // Failed on the wire or refused by the bridge: an error, not spilled.
        return (ToolOutput::error(text), outcome, None);
    }
    let (text, record) = spill(ctx, source, text);
    (
        ToolOutput {
            text,
            is_error: out.is_error,
        },
        outcome,
        record,
    )
}

/// The audit row; when it cannot be written the result is not returned.
#[allow(clippy::too_many_arguments)]
fn audit(
    ctx: &mut ToolContext<'_>,
    kind: &str,
    subject: &str,
    arg_digest: &str,
    outcome: Outcome,
    started: Instant,
    output: ToolOutput,
    record: Option<String>,
) -> Passed {
    let detail = match (&record, output.is_error && !outcome.answered()) {
        (Some(r), _) => Some(format!("spilled to {r}")),
        // A refusal's reason, so the trail says why.
        (None, true) => Some(output.text.chars().take(300).collect()),
        (None, false) => None,
    };
    let written = ctx.store.audit(Event {
        arg_digest: Some(arg_digest.to_string()),
        duration_ms: Some(started.elapsed().as_millis() as i64),
        size: Some(output.text.len() as i64),
        detail,
        ..Event::new(kind, subject, outcome)
    });
    match written {
        Ok(_) => Passed {
            output,
            outcome,
            record,
        },
        Err(e) => Passed {
            output: ToolOutput::error(format!(
                "the result of {subject} is withheld: its audit row could not be written ({e}). \
                 Nothing of it is returned; check the vault with `tai vault audit --verify`"
            )),
            outcome: Outcome::AuditFailed,
            record,
        },
    }
}

/// Step 1: what the call is for. Only a call bound for an MCP server copies the arguments.
fn resolve(
    bridge: &Bridge,
    entrance: Entrance,
    ask: Ask<'_>,
    args: &Map<String, Value>,
    local: &Option<Local<'_>>,
) -> Result<Target, Refused> {
    let name = match ask {
        Ask::Mcp { server, tool } => {
            return Ok(Target::Mcp {
                server: server.to_string(),
                tool: tool.to_string(),
                arguments: args.clone(),
                schema: None,
            });
        }
        Ask::Named(name) => name,
    };
    if let Some(l) = local.as_ref().filter(|l| l.def.name == name) {
        tools::check_args(&l.def.parameters, args)
            .map_err(|why| (Outcome::BadArguments, format!("{name}: {why}")))?;
        return Ok(Target::Local);
    }
    if let Some(t) = bridge.lookup(name) {
        return Ok(Target::Mcp {
            server: t.server.clone(),
            tool: t.tool.clone(),
            arguments: args.clone(),
            schema: Some(t.schema.clone()),
        });
    }
    let Some(native) = tools::find(name) else {
        return Err((
            Outcome::UnknownTool,
            if name.starts_with("mcp_") {
                format!(
                    "there is no MCP tool named {name:?} here: its server is not enabled for this profile, or the tool is withheld for review (`tai mcp tools`, `tai mcp approve SERVER TOOL`)"
                )
            } else {
                format!("there is no tool named {name:?}; find tools with tool_search")
            },
        ));
    };
    tools::check_args(&native.def.parameters, args)
        .map_err(|why| (Outcome::BadArguments, format!("{name}: {why}")))?;
    if name == "mcp_call" {
        if entrance == Entrance::Network {
            return Err((
                Outcome::NotServed,
                "mcp_call is not served: tai's MCP server never routes to another server's tools"
                    .into(),
            ));
        }
        return Ok(Target::Mcp {
            server: tools::arg_str(args, "server").to_string(),
            tool: tools::arg_str(args, "tool").to_string(),
            arguments: args
                .get("args")
                .and_then(Value::as_object)
                .cloned()
                .unwrap_or_default(),
            schema: None,
        });
    }
    Ok(Target::Native(native))
}

/// Steps 2 to 4: policy, approval, the call.
#[allow(clippy::too_many_arguments)]
fn run(
    ctx: &mut ToolContext<'_>,
    bridge: &mut Bridge,
    entrance: Entrance,
    target: Target,
    shown_name: &str,
    args: Map<String, Value>,
    arg_digest: &str,
    local: Option<&mut Local<'_>>,
    note: &mut dyn FnMut(&str),
) -> Result<(ToolOutput, Outcome), Refused> {
    match target {
        Target::Local => {
            let Some(l) = local else {
                return Err((
                    Outcome::UnknownTool,
                    format!("{shown_name} is not available"),
                ));
            };
            if !l.def.safe {
                approve(
                    ctx,
                    &ApprovalKey::Tool(shown_name.into()),
                    &format!("run the tool {shown_name} (arguments {arg_digest})"),
                    &args,
                    note,
                )?;
            }
            note(&format!("→ {shown_name}"));
            let out = (l.run)(ctx, &args);
            let outcome = Outcome::of_call(out.is_error);
            Ok((out, outcome))
        }
        Target::Native(Native { def, tool }) => {
            if let Some(only) = &ctx.config.served_tools
                && !only.iter().any(|n| n == def.name)
            {
                return Err((
                    Outcome::NotServed,
                    format!(
                        "{} is not among the tools this server serves (--serve-tools)",
                        def.name
                    ),
                ));
            }
            let command = tools::arg_str(&args, "command");
            // /proc and tai's own files: the in-process file tools never read them (in
            // tai's own process `/proc/self` is tai, and a match/no-match answer leaks
            // what redaction hides); a shell line that reaches them asks.
            let protected = tools::protected::reached_by_call(def.name, &args, ctx.config);
            if protected && def.name != "shell" {
                return Err((
                    Outcome::NotAllowed,
                    format!(
                        "{} does not read /proc or tai's own files (its vault folder, its config file): {}",
                        def.name,
                        tools::arg_str(&args, "path")
                    ),
                ));
            }
            let safe =
                (def.safe || (def.name == "shell" && tools::shell::is_safe(command))) && !protected;
            if !safe {
                let (key, what) = match def.name {
                    "shell" => (
                        ApprovalKey::Shell(command.to_string()),
                        format!("run `{command}`"),
                    ),
                    "web_fetch" => {
                        let url = tools::arg_str(&args, "url");
                        (ApprovalKey::Fetch(url.to_string()), format!("fetch {url}"))
                    }
                    name => (
                        ApprovalKey::Tool(name.to_string()),
                        format!("run the tool {name} (arguments {arg_digest})"),
                    ),
                };
                approve(ctx, &key, &what, &args, note)?;
            }
            note(&format!("→ {shown_name}"));
            let out = tool.run(ctx, &args);
            let outcome = Outcome::of_call(out.is_error);
            Ok((out, outcome))
        }
        Target::Mcp {
            server,
            tool,
            arguments,
            schema,
        } => {
            if entrance == Entrance::Network || ctx.config.served_tools.is_some() {
                return Err((
                    Outcome::NotServed,
                    "tai's MCP server never routes to another server's tools".into(),
                ));
            }
            if let Some(schema) = &schema {
                tools::check_args(schema, &arguments)
                    .map_err(|why| (Outcome::BadArguments, format!("{shown_name}: {why}")))?;
            }
            let pin = mcp_policy(ctx, bridge, entrance, &server, &tool)?;
            let key = ApprovalKey::Mcp {
                server: server.clone(),
                tool: tool.clone(),
                pin: pin.clone(),
            };
            let what = format!(
                "call the MCP tool {server}/{tool} [pin {}] (arguments {arg_digest})",
                &pin[..pin.len().min(12)]
            );
            // Lasting trust (`tai mcp trust`) is kept against the pin: a redefinition
            // drops it. A person may answer "remember" to keep one.
            if crate::mcp_servers::trust::is_trusted(ctx.store, &server, &tool, &pin) {
                note(&format!(
                    "trusted: {shown_name} (`tai mcp untrust {server} {tool}` to ask again)"
                ));
            } else if approve_mcp(ctx, &key, &what, &arguments, note)? {
                match crate::mcp_servers::trust::trust_one(ctx.store, &server, &tool) {
                    Ok(_) => note(&format!("remembered: {server}/{tool} is trusted")),
                    Err(e) => note(&format!("not remembered: {e}")),
                }
            }
            note(&format!("→ {shown_name}"));
            Ok(bridge.call_tool(ctx.store, &server, &tool, arguments, ctx.approver, ctx.env))
        }
    }
}

/// Step 2 for an MCP tool: the stored state, then the live listing. Returns the pin.
fn mcp_policy(
    ctx: &mut ToolContext<'_>,
    bridge: &mut Bridge,
    entrance: Entrance,
    server: &str,
    tool: &str,
) -> Result<String, Refused> {
    let err = |e: crate::vault::Error| (Outcome::ProtocolError, e.to_string());
    let Some(row) = store::load(ctx.store, server).map_err(err)? else {
        return Err((
            Outcome::UnknownServer,
            format!("no MCP server named {server:?} (see `tai mcp list`)"),
        ));
    };
    if entrance != Entrance::Person
        && !store::is_enabled(ctx.store, server, &ctx.config.profile).map_err(err)?
    {
        return Err((
            Outcome::NotEnabled,
            format!(
                "the MCP server {server} is not enabled for the profile {}; a person enables it with `tai mcp enable {server}`",
                ctx.config.profile
            ),
        ));
    }
    if !store::allowed(&row.entry, tool) {
        return Err((
            Outcome::NotAllowed,
            format!("{server}: the tool {tool:?} is not allowed by the server's tool list"),
        ));
    }
    let pinned = |ctx: &mut ToolContext<'_>, bridge: &Bridge| -> Result<String, Refused> {
        let stored = store::tools(ctx.store, server)
            .map_err(err)?
            .into_iter()
            .find(|t| t.name == tool);
        let Some(t) = stored else {
            return Err((
                Outcome::NotListed,
                format!(
                    "the MCP server {server} does not list a tool {tool:?} (see `tai mcp tools {server}`)"
                ),
            ));
        };
        if !t.pinned || bridge.is_withheld(server, tool) {
            return Err((Outcome::Withheld, super::withheld_error(server, tool).text));
        }
        Ok(pin_hash(&t.name, t.description.as_deref(), &t.schema))
    };
    pinned(ctx, bridge)?;
    // The live listing: connecting re-lists the tools and applies the pins.
    bridge
        .connect(ctx.store, server, ctx.approver, ctx.env)
        .map_err(|(text, outcome)| (outcome, text))?;
    pinned(ctx, bridge)
}

/// Step 3: ask, keyed. A refusal carries the reason.
fn approve(
    ctx: &mut ToolContext<'_>,
    key: &ApprovalKey,
    what: &str,
    args: &Map<String, Value>,
    note: &mut dyn FnMut(&str),
) -> Result<(), Refused> {
    ask(ctx, key, what, args, note, false).map(|_| ())
}

/// An MCP tool's question, which also offers a lasting "remember"; `Ok(true)` when the
/// person chose it.
fn approve_mcp(
    ctx: &mut ToolContext<'_>,
    key: &ApprovalKey,
    what: &str,
    args: &Map<String, Value>,
    note: &mut dyn FnMut(&str),
) -> Result<bool, Refused> {
    ask(ctx, key, what, args, note, true)
}

fn ask(
    ctx: &mut ToolContext<'_>,
    key: &ApprovalKey,
    what: &str,
    args: &Map<String, Value>,
    note: &mut dyn FnMut(&str),
    offer_remember: bool,
) -> Result<bool, Refused> {
    let detail = serde_json::to_string_pretty(args).unwrap_or_default();
    let detail = ctx
        .store
        .redact(&detail)
        .unwrap_or_else(|_| "(arguments withheld)".into());
    let decision = if offer_remember {
        ctx.approver.approve_or_remember(key, what, &detail)
    } else {
        ctx.approver
            .approve_keyed(key, what, &detail)
            .map(|ok| (ok, false))
    };
    match decision {
        Ok((true, remember)) => Ok(remember),
        decision => {
            // With no terminal the reason says which flag to use.
            note(&match &decision {
                Err(why) => format!("denied: {why}"),
                _ => format!("denied: {what}"),
            });
            Err((Outcome::Denied, format!("the user did not approve: {what}")))
        }
    }
}

/// Run one native tool by name outside a turn (the integration tests' entrance): each
/// tool as `tools::dispatch` runs it, and `mcp_call`, which only the gate can run,
/// through [`call`] as the model's, with no kept connections.
pub fn dispatch(
    name: &str,
    ctx: &mut ToolContext<'_>,
    args: &Map<String, Value>,
) -> Option<ToolOutput> {
    if name != "mcp_call" {
        return tools::dispatch(name, ctx, args);
    }
    let def = &tools::find(name)?.def;
    if let Err(why) = tools::check_args(&def.parameters, args) {
        return Some(ToolOutput::error(format!("{name}: {why}")));
    }
    let mut bridge = Bridge::empty();
    let passed = call(
        ctx,
        &mut bridge,
        Entrance::Model,
        Ask::Named("mcp_call"),
        args.clone(),
        None,
        &mut |_| {},
    );
    Some(passed.output)
}

/// A result over `MCP_RESULT_MAX` is stored whole as a vault record; the model gets the
/// id, the size, a short head and how to read more. Never a silent truncation.
fn spill(ctx: &mut ToolContext<'_>, source: &str, text: String) -> (String, Option<String>) {
    if text.len() <= MCP_RESULT_MAX {
        return (text, None);
    }
    match ctx.store.record_put(&format!("tool:{source}"), &text) {
        Ok(id) => {
            let head_end = (0..=2000.min(text.len()))
                .rev()
                .find(|i| text.is_char_boundary(*i))
                .unwrap_or(0);
            let msg = format!(
                "[the result is {} bytes, over the {} KB inline cap; stored whole as record {id}. Read it with record_get(id=\"{id}\", offset, limit). It begins:]\n{}",
                text.len(),
                MCP_RESULT_MAX / 1024,
                &text[..head_end]
            );
            (msg, Some(id))
        }
        Err(e) => (
            format!(
                "[the result is {} bytes and could not be stored: {e}]",
                text.len()
            ),
            None,
        ),
    }
}
