//! `tai mcp ...`: server commands for people (`probe` so far).

use std::io::Read;
use std::time::{Duration, Instant};

use serde_json::{Map, Value, json};

use super::args::{McpCmd, ProbeArgs};
use super::render::{out, table};
use super::{Failure, Result};
use crate::mcp::client::{McpClient, ServerSpec, Timeouts};
use crate::mcp::era::{Era, EraChoice};
use crate::mcp::protocol::Tool;

pub fn run(cmd: &McpCmd) -> Result {
    match cmd {
        McpCmd::Probe(a) => probe(a),
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
    let (mut spec, mut choice) = crate::mcp::entry::parse(&text).map_err(Failure)?;
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
        eprintln!("tai: connecting to {}", spec.describe());
    }
    let mut client =
        McpClient::connect(&spec, choice, timeouts).map_err(|e| Failure(e.to_string()))?;
    let tools = client.list_tools().map_err(|e| Failure(e.to_string()))?;
    for w in client.warnings.drain(..) {
        eprintln!("tai: warning: {w}");
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
            "era": match era { Era::Legacy => "legacy", Era::Modern => "modern" },
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
        out(&format!("{v:#}\n"))?;
    } else {
        out(&human(&info, era, &version, &tools, skipped))?;
        if let Some((tool, r, n, median, p99)) = &call_report {
            let verdict = if r.is_error { "tool error" } else { "ok" };
            out(&format!(
                "\ncall {tool}: {verdict} ({n} call{}: median {median:.3} ms, p99 {p99:.3} ms)\n{}\n",
                if *n == 1 { "" } else { "s" },
                r.text()
            ))?;
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
    let era_name = match era {
        Era::Legacy => "legacy era: initialize + session",
        Era::Modern => "modern era: stateless",
    };
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
    let rows: Vec<Vec<String>> = tools
        .iter()
        .map(|t| {
            let d = t
                .description
                .as_deref()
                .unwrap_or("")
                .lines()
                .next()
                .unwrap_or("");
            let d: String = d.chars().take(90).collect();
            vec![format!("  {}", t.name), d]
        })
        .collect();
    s.push_str(&table(&["  NAME", "DESCRIPTION"], &rows));
    s
}
