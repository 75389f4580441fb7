//! `tai mcp ...`: server commands for people (`probe` so far).

use std::io::Read;
use std::time::{Duration, Instant};

use serde_json::{Map, Value, json};

use super::args::{McpCmd, ProbeArgs};
use super::render::{out, table};
use super::{Context, Failure, Result, import_cmd, server_view};
use crate::approval::{Approver, TerminalApprover};
use crate::bridge::gate::{self, Ask, Entrance};
use crate::config::process_env;
use crate::mcp::client::{McpClient, ServerSpec, Timeouts};
use crate::mcp::era::{Era, EraChoice};
use crate::mcp::protocol::Tool;
use crate::mcp_servers::dispatch;
use crate::mcp_servers::intake::{self, AddOptions};
use crate::mcp_servers::store;
use crate::resolver::Target;
use crate::sanitize;
use crate::tools::ToolContext;
use crate::vault::audit::{Event, Outcome};

pub fn run(cmd: &McpCmd, json_out: bool, load: impl FnOnce() -> Result<Context>) -> Result {
    match cmd {
        McpCmd::Probe(a) => probe(a),
        McpCmd::Add {
            source,
            name,
            replace,
            json,
            pick,
            explicit,
            connect_timeout,
            call_timeout,
        } => {
            let mut ctx = load()?;
            let paste = match Target::parse(source) {
                Some(target) => {
                    let r = resolve_github(&ctx, &target, *pick, *json)
                        .map_err(|f| Failure(f.to_string()))?;
                    intake::paste_resolved(r.chosen.entry.clone(), r.notes(), r.source.clone())
                }
                None if pick.is_some() => {
                    return Err(Failure("--pick chooses among a GitHub URL's candidates; this source is not a GitHub URL".into()));
                }
                None => {
                    let (text, _) = import_cmd::read_source(source)?;
                    ctx.unlock()?;
                    let mut paste = intake::paste(&ctx.store, &text).map_err(Failure)?;
                    let here = std::env::current_dir()?;
                    let exists = |p: &std::path::Path| p.exists();
                    let workspace =
                        crate::mcp_servers::project::repo_root(&here, &exists).unwrap_or(here);
                    let vars = import_cmd::editor_vars(&workspace);
                    paste
                        .normalized
                        .entries
                        .iter_mut()
                        .for_each(|e| vars.apply_entry(e));
                    import_cmd::ask_inputs(&mut ctx, &paste.normalized)?;
                    if *explicit {
                        paste.source = "explicit".into();
                    }
                    paste
                }
            };
            let mut paste = paste;
            let ms = |s: &Option<f64>| s.map(|s| (s * 1000.0).round() as u64);
            for e in &mut paste.normalized.entries {
                e.options.connect_timeout_ms = ms(connect_timeout).or(e.options.connect_timeout_ms);
                e.options.call_timeout_ms = ms(call_timeout).or(e.options.call_timeout_ms);
            }
            let mut summary = Summary::default();
            add_paste(
                &mut ctx,
                paste,
                name.as_deref(),
                *replace,
                *json,
                true,
                &mut summary,
            )?;
            summary.finish(&ctx, *json, true)
        }
        McpCmd::Resolve { url, pick, json } => {
            let ctx = load()?;
            let Some(target) = Target::parse(url) else {
                return Err(Failure(format!(
                    "{url:?} is not a GitHub repository URL (https://github.com/OWNER/REPO[/tree/REF/PATH])"
                )));
            };
            match resolve_github(&ctx, &target, *pick, *json) {
                Ok(r) if *json => Ok(super::render::out_json(&json!(r))?),
                Ok(r) => Ok(out(&sanitize::block(&resolution_text(&r, url, *pick)))?),
                Err(f) if *json => {
                    // the error object, with the resolver's failure and evidence beside it
                    let why = format!("could not resolve {} to one server", target.display());
                    let mut v = json!(f);
                    if let Some(o) = v.as_object_mut() {
                        o.insert("error".into(), Value::String(why.clone()));
                    }
                    super::render::out_json(&v)?;
                    Err(Failure(why))
                }
                Err(f) => Err(Failure(f.to_string())),
            }
        }
        McpCmd::Import {
            file,
            replace,
            json,
            anywhere,
        } => {
            let mut origins = import_cmd::origins(file)?;
            if *anywhere {
                origins.iter_mut().for_each(|o| o.project = None);
            }
            let mut ctx = load()?;
            ctx.unlock()?;
            import_origins(&mut ctx, origins, *replace, *json).map(|_| ())
        }
        McpCmd::List { json, check } => list(&mut load()?, *json, *check),
        McpCmd::Get { server, json } => {
            let mut ctx = load()?;
            ctx.unlock()?;
            let row = store::load(&ctx.store, server)?.ok_or_else(|| {
                Failure(format!(
                    "no MCP server named {server:?} (see `tai mcp list`)"
                ))
            })?;
            let v = server_view::server_json(&ctx.store, &row)?;
            if *json {
                Ok(super::render::out_json(&v)?)
            } else {
                Ok(out(&server_view::get_text(&v))?)
            }
        }
        McpCmd::Export { servers, format } => {
            let mut ctx = load()?;
            ctx.unlock()?;
            let mut rows = Vec::new();
            if servers.is_empty() {
                rows = store::list(&ctx.store)?;
            }
            for s in servers {
                rows.push(store::load(&ctx.store, s)?.ok_or_else(|| {
                    Failure(format!("no MCP server named {s:?} (see `tai mcp list`)"))
                })?);
            }
            let (text, notes) = server_view::export(&rows, format);
            for n in notes {
                eprintln!("tai: note: {n} (set it in the other tool, or export the variable)");
            }
            Ok(out(&text)?)
        }
        McpCmd::Trust { server, tool } => {
            let mut ctx = load()?;
            let names =
                crate::mcp_servers::trust::trust(&ctx.store, server, tool).map_err(Failure)?;
            for n in &names {
                ctx.store.audit(Event::new(
                    "mcp-trust",
                    &format!("{server}/{n}"),
                    Outcome::Trusted,
                ))?;
            }
            if json_out {
                return Ok(super::render::out_json(
                    &json!({"server": server, "trusted": names}),
                )?);
            }
            Ok(out(&format!(
                "trusted {server}: {} (calls go without asking while each stays as it is now; `tai mcp untrust {server} {tool}` undoes it)\n",
                names.join(", ")
            ))?)
        }
        McpCmd::Untrust { server, tool } => {
            let mut ctx = load()?;
            let n = crate::mcp_servers::trust::untrust(&ctx.store, server, tool)?;
            ctx.store.audit(Event::new(
                "mcp-trust",
                &format!("{server}/{tool}"),
                Outcome::Untrusted,
            ))?;
            if json_out {
                return Ok(super::render::out_json(
                    &json!({"server": server, "untrusted": n}),
                )?);
            }
            Ok(out(&format!("{server}/{tool}: {n} trust(s) removed\n"))?)
        }
        McpCmd::Enable { server } | McpCmd::Disable { server } => {
            let mut ctx = load()?;
            ctx.unlock_if_given()?;
            let on = matches!(cmd, McpCmd::Enable { .. });
            store::set_enabled(&ctx.store, server, &ctx.config.profile, on)?;
            ctx.store.audit(Event {
                detail: Some(format!("profile {}", ctx.config.profile)),
                ..Event::new(
                    "mcp-enable",
                    server,
                    if on {
                        Outcome::Enabled
                    } else {
                        Outcome::Disabled
                    },
                )
            })?;
            let verb = if on { "enabled" } else { "disabled" };
            if json_out {
                return Ok(super::render::out_json(
                    &json!({"server": server, "profile": ctx.config.profile, "enabled": on}),
                )?);
            }
            Ok(out(&format!(
                "{server}: {verb} for profile {}\n",
                ctx.config.profile
            ))?)
        }
        McpCmd::Remove { server } => {
            let mut ctx = load()?;
            ctx.unlock_if_given()?;
            if !store::exists(&ctx.store, server)? {
                return Err(Failure(format!(
                    "no MCP server named {server:?} (see `tai mcp list`)"
                )));
            }
            let mut approver = TerminalApprover::new(ctx.config.approval);
            let what = format!(
                "remove the MCP server {server:?} with its tools, pins and profile settings"
            );
            if !approver.approve(&what, "").map_err(Failure)? {
                return Err(Failure(format!(
                    "{what}: not approved; nothing was removed"
                )));
            }
            store::remove(&mut ctx.store, server)?;
            ctx.store
                .audit(Event::new("mcp-remove", server, Outcome::Removed))?;
            if json_out {
                return Ok(super::render::out_json(
                    &json!({"server": server, "removed": true}),
                )?);
            }
            Ok(out(&format!("removed {server}\n"))?)
        }
        McpCmd::Tools { server, json } => tools(&mut load()?, server.as_deref(), *json),
        McpCmd::Approve { server, tool } => {
            let mut ctx = load()?;
            let report = crate::bridge::approve(&mut ctx.store, server, tool).map_err(Failure)?;
            if json_out {
                return Ok(super::render::out_json(
                    &json!({"server": server, "tool": tool, "approved": true}),
                )?);
            }
            Ok(out(&format!(
                "{}approved {server}/{}: it is offered again\n",
                sanitize::block(&report),
                sanitize::line(tool)
            ))?)
        }
        McpCmd::Call {
            server,
            tool,
            args,
            json,
        } => call(&mut load()?, server, tool, args.as_deref(), *json),
        McpCmd::Login {
            server,
            client_id,
            status,
        } => match status {
            true => super::mcp_login::status(&mut load()?, server),
            false => super::mcp_login::login(&mut load()?, server, client_id.as_deref()),
        },
        McpCmd::Logout { server } => super::mcp_login::logout(&mut load()?, server),
    }
}

/// `tai mcp resolve` for people: what runs, from where, what it needs, the evidence.
fn resolution_text(r: &crate::resolver::Resolution, url: &str, pick: Option<usize>) -> String {
    let mut s = format!(
        "{}\n  from: {}\n  runs: {}\n",
        r.target,
        r.chosen.origin,
        r.chosen.shown()
    );
    for n in r.notes().iter().skip(1) {
        s.push_str(&format!("  note: {n}\n"));
    }
    let pick = pick.unwrap_or(1);
    let others = (1..).filter(|n| *n != pick).zip(&r.others);
    for (n, c) in others {
        s.push_str(&format!("  also: [{n}] {}: {}\n", c.origin, c.shown()));
    }
    s.push_str("evidence:\n");
    for (i, e) in r.evidence.iter().enumerate() {
        s.push_str(&format!("  {}. {e}\n", i + 1));
    }
    let flag = if r.others.is_empty() {
        String::new()
    } else {
        format!(" --pick {pick}")
    };
    s.push_str(&format!("add it with: tai mcp add {url}{flag}\n"));
    s
}

/// Resolve a GitHub URL, saying on stderr which step is running (a long wait otherwise).
fn resolve_github(
    ctx: &Context,
    target: &Target,
    pick: Option<usize>,
    quiet: bool,
) -> std::result::Result<crate::resolver::Resolution, crate::resolver::Failure> {
    let mut progress = |step: &str| {
        if !quiet {
            eprintln!(
                "tai: resolving {}: {} ...",
                sanitize::line(&target.display()),
                sanitize::line(step)
            );
        }
    };
    crate::resolver::resolve_online(
        target,
        &ctx.config.resolver,
        pick,
        &process_env,
        &mut progress,
    )
}

/// Add every server of `origins` (each with its consent), print the summary, and return
/// the names added; a failure when anything was skipped.
pub(super) fn import_origins(
    ctx: &mut Context,
    origins: Vec<import_cmd::Origin>,
    replace: bool,
    json: bool,
) -> Result<Vec<String>> {
    let mut summary = Summary::default();
    for o in origins {
        if !json {
            eprintln!("tai: reading {}", o.label);
        }
        let mut paste = match crate::mcp_servers::normalize::normalize(&o.text, cfg!(windows)) {
            Ok(n) => intake::Paste {
                source: n
                    .source
                    .as_ref()
                    .map_or_else(|| "explicit".into(), |s| s.as_str()),
                normalized: n,
                refresh: false,
            },
            Err(e) => {
                summary.skipped.push((o.label.clone(), e.to_string()));
                continue;
            }
        };
        let vars = import_cmd::editor_vars(&o.workspace);
        for e in &mut paste.normalized.entries {
            vars.apply_entry(e);
            e.options.project = o.project.as_ref().map(|p| p.display().to_string());
        }
        import_cmd::ask_inputs(ctx, &paste.normalized)?;
        add_paste(ctx, paste, None, replace, json, false, &mut summary)?;
    }
    let added = summary.added.iter().map(|r| r.name.clone()).collect();
    summary.finish(ctx, json, false)?;
    Ok(added)
}

/// What `add` and `import` did, over every config they read.
#[derive(Default)]
struct Summary {
    added: Vec<intake::AddReport>,
    skipped: Vec<(String, String)>,
    notes: Vec<String>,
}

impl Summary {
    /// Print the summary; a failure when nothing was added or anything was skipped.
    fn finish(self, ctx: &Context, json: bool, single: bool) -> Result {
        let Summary {
            added,
            skipped,
            notes,
        } = self;
        if json {
            let mut servers = Vec::new();
            for r in &added {
                if let Some(row) = store::load(&ctx.store, &r.name)? {
                    servers.push(server_view::server_json(&ctx.store, &row)?);
                }
            }
            let v = serde_json::json!({
                "added": servers,
                "skipped": skipped.iter().map(|(k, v)| serde_json::json!({"name": k, "why": v})).collect::<Vec<_>>(),
                "notes": notes,
            });
            super::render::out_json(&v)?;
        } else {
            for r in &added {
                let enabled = match &r.enabled_for {
                    Some(p) => format!("enabled for profile {p}"),
                    None => format!("disabled until `tai mcp enable {}`", r.name),
                };
                // The server's own words (its name, version, tools): shown escaped.
                let mut s = format!(
                    "added {} ({}, {}, {}): {} tools; {}\n",
                    sanitize::line(&r.name),
                    r.transport,
                    sanitize::line(&r.server),
                    sanitize::line(&r.era),
                    r.tools.len(),
                    sanitize::line(&enabled)
                );
                for (t, d) in &r.tools {
                    s.push_str(&format!("  {}\n", sanitize::line(t)));
                    for l in d.as_deref().unwrap_or("").lines() {
                        s.push_str(&format!("      {}\n", sanitize::line(l)));
                    }
                }
                out(&s)?;
            }
            for (k, why) in &skipped {
                eprintln!(
                    "tai: skipped {}: {}",
                    sanitize::line(k),
                    sanitize::block(why)
                );
            }
            if !single || added.len() + skipped.len() > 1 {
                eprintln!("tai: {} added, {} skipped", added.len(), skipped.len());
            }
        }
        if added.is_empty() || !skipped.is_empty() {
            let why: Vec<String> = skipped.iter().map(|(k, v)| format!("{k}: {v}")).collect();
            return Err(Failure(if json {
                why.join("; ")
            } else if added.is_empty() {
                "nothing was added".into()
            } else {
                format!("{} server(s) were skipped (see above)", skipped.len())
            }));
        }
        Ok(())
    }
}

/// Add the servers of one paste: exactly the named one (`add --name`), or each in turn,
/// with consent each; outcomes go to `summary`.
fn add_paste(
    ctx: &mut Context,
    paste: intake::Paste,
    name: Option<&str>,
    replace: bool,
    json: bool,
    single: bool,
    summary: &mut Summary,
) -> Result {
    let intake::Paste {
        normalized: n,
        source,
        refresh,
    } = paste;
    let replace = replace || refresh;
    for note in &n.notes {
        if !json {
            eprintln!("tai: note: {}", sanitize::block(note));
        }
    }
    summary.notes.extend(n.notes.iter().cloned());
    summary.skipped.extend(n.refused.iter().cloned());
    let entries = match intake::select(&n, name, single) {
        Ok(e) => e,
        Err(why) if n.entries.is_empty() && !n.refused.is_empty() => {
            let _ = why; // every entry was refused: they are in the summary already
            return Ok(());
        }
        Err(why) => return Err(Failure(why)),
    };
    ctx.unlock()?;
    let mut approver = TerminalApprover::new(ctx.config.approval);
    let opts = AddOptions {
        profile: &ctx.config.profile.clone(),
        replace,
        timeouts: Timeouts::default(),
        env: &process_env,
    };
    for e in &entries {
        if !json {
            eprintln!("tai: checking {} ...", sanitize::line(&e.name));
        }
        match intake::add(&mut ctx.store, e, &source, &opts, &mut approver) {
            Ok(r) => summary.added.push(r),
            Err(why) => summary.skipped.push((e.name.clone(), why)),
        }
    }
    Ok(())
}

fn list(ctx: &mut Context, json: bool, check: bool) -> Result {
    // Names, commands and tool lists need no passphrase; --check starts servers.
    if check {
        ctx.unlock()?;
    } else {
        ctx.unlock_if_given()?;
    }
    let rows = if ctx.store.is_locked()? {
        store::list_public(&ctx.store)?
    } else {
        store::list(&ctx.store)?
    };
    let mut items = Vec::new();
    for row in &rows {
        let mut v = server_view::server_json(&ctx.store, row)?;
        if check {
            v["status"] = live_status(ctx, &row.entry.name);
        }
        items.push(v);
    }
    if json {
        return Ok(super::render::out_json(&Value::Array(items))?);
    }
    if items.is_empty() {
        return Ok(out(
            "no MCP servers stored; add one with `tai mcp add SOURCE` (see `tai mcp --help`)\n",
        )?);
    }
    let rows: Vec<Vec<String>> = rows
        .iter()
        .zip(&items)
        .map(|(row, v)| {
            let on: Vec<&str> = v["enabledProfiles"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .collect();
            let tools = v["tools"].as_array().map_or(0, Vec::len);
            let pinned = v["tools"]
                .as_array()
                .into_iter()
                .flatten()
                .filter(|t| t["pinned"] == true)
                .count();
            let target: String = server_view::target(row).chars().take(60).collect();
            let mut cells = vec![
                row.entry.name.clone(),
                v["transport"].as_str().unwrap_or("").to_string(),
                target,
                if on.is_empty() {
                    "-".into()
                } else {
                    on.join(",")
                },
                format!("{tools} ({pinned} pinned)"),
            ];
            if check {
                let s = &v["status"];
                cells.push(if s["ok"] == true {
                    format!("ok: {}", s["detail"].as_str().unwrap_or(""))
                } else {
                    format!("FAILED: {}", s["detail"].as_str().unwrap_or(""))
                });
            }
            cells
        })
        .collect();
    let mut header = vec![
        "SERVER",
        "TRANSPORT",
        "COMMAND / URL",
        "ENABLED FOR",
        "TOOLS",
    ];
    if check {
        header.push("STATUS");
    }
    Ok(out(&table(&header, &rows))?)
}

/// `list --check`: connect, list the tools, close; `{ok, detail}` (errors redacted).
fn live_status(ctx: &mut Context, server: &str) -> Value {
    let mut approver = TerminalApprover::new(ctx.config.approval);
    let result = dispatch::prepare(&mut ctx.store, server, None, &mut approver, &process_env)
        .and_then(|(entry, resolved)| {
            let mut c = McpClient::connect(
                &resolved.spec,
                entry.protocol,
                entry.options.timeouts(Timeouts::default()),
            )
            .map_err(|e| e.to_string())?;
            let tools = c.list_tools().map_err(|e| e.to_string())?;
            let era = c.protocol_version().to_string();
            c.close();
            Ok(format!("{} tools, {era}", tools.len()))
        });
    match result {
        Ok(detail) => json!({"ok": true, "detail": detail}),
        Err(e) => {
            let e = ctx
                .store
                .redact(&e)
                .unwrap_or_else(|_| "(withheld: the error could not be redacted)".into());
            json!({"ok": false, "detail": e.lines().next().unwrap_or("").to_string()})
        }
    }
}

fn tools(ctx: &mut Context, server: Option<&str>, json: bool) -> Result {
    ctx.unlock_if_given()?;
    let stored = store::list_public(&ctx.store)?;
    let servers: Vec<String> = match server {
        Some(s) => {
            if !stored.iter().any(|r| r.entry.name == s) {
                return Err(Failure(format!(
                    "no MCP server named {s:?} (see `tai mcp list`)"
                )));
            }
            vec![s.to_string()]
        }
        None => stored.iter().map(|r| r.entry.name.clone()).collect(),
    };
    let mut all = Vec::new();
    for s in &servers {
        let entry = stored.iter().find(|r| r.entry.name == *s).map(|r| &r.entry);
        for t in store::tools(&ctx.store, s)? {
            let ok = entry.as_ref().is_some_and(|e| store::allowed(e, &t.name));
            all.push((s.clone(), t, ok));
        }
    }
    if json {
        let mut v: Vec<Value> = Vec::new();
        for (s, t, _) in &all {
            if let Some(row) = store::load(&ctx.store, s)? {
                v.push(server_view::tool_json(&ctx.store, &row, t));
            }
        }
        return Ok(super::render::out_json(&Value::Array(v))?);
    }
    // Each tool whole: its full description (every line, sanitized) and its state, so an
    // injected second line or an escape sequence is visible, never hidden or interpreted.
    let mut text = String::new();
    for (s, t, ok) in &all {
        let state = match (t.pinned, *ok) {
            (_, false) => "not allowed".to_string(),
            (true, true) => "pinned".to_string(),
            (false, true) => format!(
                "CHANGED: review with `tai mcp approve {s} {}`",
                sanitize::line(&t.name)
            ),
        };
        text.push_str(&format!("{s}/{}  [{state}]\n", sanitize::line(&t.name)));
        for l in t.description.as_deref().unwrap_or("").split('\n') {
            text.push_str(&format!("    {}\n", sanitize::line(l)));
        }
    }
    if all.is_empty() {
        text.push_str("no tools stored\n");
    }
    Ok(out(&text)?)
}

/// `tai mcp call`: one call through the trust gate, as a person's explicit act (a
/// disabled server may be reached; a drifted or unlisted tool never).
fn call(ctx: &mut Context, server: &str, tool: &str, args: Option<&str>, json: bool) -> Result {
    ctx.unlock()?;
    let arguments: Map<String, Value> = match args {
        None => Map::new(),
        Some(text) => match serde_json::from_str(&args_text(text)?) {
            Ok(Value::Object(m)) => m,
            Ok(_) => return Err(Failure("the arguments must be a JSON object".into())),
            Err(e) => return Err(Failure(format!("the arguments are not JSON: {e}"))),
        },
    };
    let mut approver = TerminalApprover::new(ctx.config.approval);
    let config = ctx.config.clone();
    let mut tctx = ToolContext {
        store: &mut ctx.store,
        config: &config,
        approver: &mut approver,
        env: &process_env,
    };
    let mut bridge = crate::bridge::Bridge::empty();
    let passed = gate::call(
        &mut tctx,
        &mut bridge,
        Entrance::Person,
        Ask::Mcp { server, tool },
        arguments,
        None,
        &mut |line| eprintln!("tai: {}", sanitize::line(line)),
    );
    drop(bridge);
    let o = passed.output;
    // The call ran (or failed on the wire): a call result. Refused by the gate: an error.
    let ran = matches!(
        passed.outcome,
        Outcome::Ok
            | Outcome::ToolError
            | Outcome::ProtocolError
            | Outcome::Timeout
            | Outcome::Interrupted
    );
    if json && ran {
        let v = json!({"server": server, "tool": tool, "outcome": passed.outcome, "isError": o.is_error, "text": o.text});
        super::render::out_json(&v)?;
    } else if passed.outcome.answered() {
        out(&format!("{}\n", sanitize::block(&o.text)))?;
    }
    match passed.outcome {
        Outcome::Ok => Ok(()),
        Outcome::ToolError => Err(Failure(format!(
            "{server}/{tool} ran and reported an error"
        ))),
        _ => Err(Failure(o.text)),
    }
}

fn probe(a: &ProbeArgs) -> Result {
    let text = if a.source == "-" {
        let mut s = String::new();
        std::io::stdin()
            .lock()
            .take(1 << 20)
            .read_to_string(&mut s)?;
        s
    } else {
        a.source.clone()
    };
    let (mut spec, mut choice) =
        crate::mcp_servers::probe::one_server(&text, cfg!(windows)).map_err(Failure)?;
    if let Some(p) = &a.protocol {
        choice = EraChoice::parse(p).unwrap_or_default();
    }
    if !a.headers.is_empty() {
        match &mut spec {
            ServerSpec::Http(h) => h.headers.extend(a.headers.iter().cloned()),
            ServerSpec::Stdio(_) => {
                return Err(Failure("--header applies to HTTP servers only".into()));
            }
        }
    }
    let call_args: Map<String, Value> = match &a.args {
        None => Map::new(),
        Some(text) => match serde_json::from_str(&args_text(text)?) {
            Ok(Value::Object(m)) => m,
            Ok(_) => return Err(Failure("--args must be a JSON object".into())),
            Err(e) => return Err(Failure(format!("--args is not JSON: {e}"))),
        },
    };
    let secs = |v: Option<f64>, default: Duration| v.map_or(default, Duration::from_secs_f64);
    let d = Timeouts::default();
    let timeouts = Timeouts {
        connect: secs(a.connect_timeout, d.connect),
        call: secs(a.call_timeout, d.call),
        probe: secs(a.probe_timeout, d.probe),
    };
    if !a.json {
        eprintln!("tai: connecting to {}", sanitize::line(&spec.describe()));
    }
    // A server behind OAuth gets a login (in memory only: probe stores nothing).
    let oauth = match &spec {
        ServerSpec::Http(h)
            if !h
                .headers
                .iter()
                .any(|(k, _)| k.eq_ignore_ascii_case("authorization")) =>
        {
            let o = crate::mcp::oauth::OAuth::new(
                "",
                Default::default(),
                crate::mcp::oauth::Interaction::Always,
                &process_env,
            );
            Some(match &a.client_id {
                Some(id) => o.with_client(id, process_env(crate::mcp::oauth::CLIENT_SECRET_ENV)),
                None => o,
            })
        }
        _ => None,
    };
    let mut client = McpClient::connect_with(&spec, choice, timeouts, oauth)
        .map_err(|e| Failure(e.to_string()))?;
    let tools = client.list_tools().map_err(|e| Failure(e.to_string()))?;
    for w in client.warnings.drain(..) {
        eprintln!("tai: warning: {}", sanitize::block(&w));
    }
    let mut call_report = None;
    let mut tool_failed = false;
    if let Some(tool) = &a.call {
        let mut took = Vec::with_capacity(a.repeat);
        let mut last = None;
        for _ in 0..a.repeat {
            let t0 = Instant::now();
            let r = client
                .call_tool(tool, call_args.clone())
                .map_err(|e| Failure(e.to_string()))?;
            took.push(t0.elapsed());
            last = Some(r);
        }
        let Some(result) = last else {
            return Err(Failure("no call was made".into()));
        };
        tool_failed = result.is_error;
        took.sort();
        let ms = |d: Duration| d.as_secs_f64() * 1000.0;
        let median = ms(took[took.len() / 2]);
        let p99 = ms(took[((took.len() * 99).div_ceil(100)).saturating_sub(1)]);
        call_report = Some((tool.clone(), result, took.len(), median, p99));
    }
    let info = client.server_info().clone();
    let (era, version) = (client.era(), client.protocol_version().to_string());
    let skipped = client.skipped_lines();
    client.close();

    if a.json {
        let v = json!({
            "era": era.name(),
            "protocolVersion": version,
            "server": { "name": info.name, "version": info.version },
            "instructions": info.instructions,
            "capabilities": info.capabilities,
            "tools": tools.iter().map(|t| json!({"name": t.name, "description": t.description, "inputSchema": t.input_schema})).collect::<Vec<_>>(),
            "skippedStdoutLines": skipped,
            "call": call_report.as_ref().map(|(tool, r, n, median, p99)| json!({
                "tool": tool, "isError": r.is_error, "content": r.content, "structuredContent": r.structured_content,
                "calls": n, "medianMs": median, "p99Ms": p99,
            })),
        });
        super::render::out_json(&v)?;
    } else {
        out(&sanitize::block(&human(
            &info, era, &version, &tools, skipped,
        )))?;
        if let Some((tool, r, n, median, p99)) = &call_report {
            let verdict = if r.is_error { "tool error" } else { "ok" };
            out(&sanitize::block(&format!(
                "\ncall {tool}: {verdict} ({n} call{}: median {median:.3} ms, p99 {p99:.3} ms)\n{}\n",
                if *n == 1 { "" } else { "s" },
                r.text()
            )))?;
        }
    }
    if tool_failed {
        return Err(Failure(format!(
            "the tool {:?} ran and reported an error",
            a.call.as_deref().unwrap_or("")
        )));
    }
    Ok(())
}

/// `--args` text, or the file named after an `@`.
fn args_text(text: &str) -> Result<String> {
    match text.strip_prefix('@') {
        Some(path) => {
            std::fs::read_to_string(path).map_err(|e| Failure(format!("--args @{path}: {e}")))
        }
        None => Ok(text.to_string()),
    }
}

fn human(
    info: &crate::mcp::client::ServerInfo,
    era: Era,
    version: &str,
    tools: &[Tool],
    skipped: usize,
) -> String {
    let era_name = era.summary();
    let mut s = format!(
        "server    {} {}\nprotocol  {version} ({era_name})\n",
        info.name, info.version
    );
    if let Some(i) = info
        .instructions
        .as_deref()
        .filter(|i| !i.trim().is_empty())
    {
        s.push_str(&format!(
            "instructions:\n  {}\n",
            i.trim().replace('\n', "\n  ")
        ));
    }
    if skipped > 0 {
        s.push_str(&format!(
            "note      {skipped} non-JSON line(s) on the server's stdout were skipped\n"
        ));
    }
    s.push_str(&format!(
        "\n{} tool{}:\n",
        tools.len(),
        if tools.len() == 1 { "" } else { "s" }
    ));
    // Every description whole (each line escaped): a second line is never hidden.
    for t in tools {
        s.push_str(&format!("  {}\n", sanitize::line(&t.name)));
        for l in t.description.as_deref().unwrap_or("").split('\n') {
            s.push_str(&format!("      {}\n", sanitize::line(l)));
        }
    }
    s
}
