//! The JSON shapes: a `mcpServers` (Claude Desktop, Cursor, Claude Code, Windsurf),
//! `servers` (VS Code, with `inputs`), `mcp_servers` or `context_servers` (Zed) wrapper,
//! or one bare entry; each field mapped or named in a note. Pure.

use std::collections::BTreeMap;

use serde_json::Value;

use super::{
    Entry, Input, Leg, NormalizeError, Normalized, Source, derive_name, entry, valid_name,
};
use crate::mcp::era::{EraChoice, LEGACY_VERSION, MODERN_VERSION};
use crate::mcp_servers::expand::cursor_to_plain;
use crate::mcp_servers::server_options::bounded_ms;

pub(super) fn json_doc(v: &Value) -> Result<Normalized, NormalizeError> {
    let obj = v
        .as_object()
        .ok_or_else(|| NormalizeError::Unrecognized("the JSON must be an object".into()))?;
    let mut n = Normalized {
        source: Some(Source::ConfigJson),
        ..Normalized::default()
    };
    let wrapper = ["mcpServers", "servers", "mcp_servers", "context_servers"]
        .into_iter()
        .find(|w| obj.contains_key(*w));
    let Some(wrapper) = wrapper else {
        if obj.contains_key("command") || obj.contains_key("url") || obj.contains_key("serverUrl") {
            match json_entry("", obj, &mut n.notes) {
                Ok(mut e) => {
                    e.name = derive_name(&e.leg);
                    n.entries.push(e);
                }
                Err(why) => n.refused.push(("(entry)".into(), why)),
            }
            return Ok(n);
        }
        return Err(NormalizeError::Unrecognized(
            "this JSON has no mcpServers or servers wrapper and is not one server entry (it needs \"command\" or \"url\")".into(),
        ));
    };
    let servers = obj[wrapper].as_object().ok_or_else(|| {
        NormalizeError::Unrecognized(format!("\"{wrapper}\" must be an object of servers"))
    })?;
    for key in obj.keys().filter(|k| *k != wrapper) {
        match key.as_str() {
            "inputs" => {
                for input in obj["inputs"].as_array().into_iter().flatten() {
                    let Some(id) = input.get("id").and_then(Value::as_str) else {
                        continue;
                    };
                    let ty = input.get("type").and_then(Value::as_str).unwrap_or("");
                    if ty == "promptString" {
                        n.inputs.push(Input {
                            id: id.to_string(),
                            description: input
                                .get("description")
                                .and_then(Value::as_str)
                                .unwrap_or("")
                                .to_string(),
                            password: input.get("password").and_then(Value::as_bool) == Some(true),
                        });
                    }
                    n.notes.push(format!(
                        "input {id:?} is read from the vault secret {id:?} at use time (`tai vault secret set {id}`)"
                    ));
                }
            }
            other => n.notes.push(format!(
                "ignored the top-level key {other:?} (not a server)"
            )),
        }
    }
    for (name, v) in servers {
        let Some(o) = v.as_object() else {
            n.refused
                .push((name.clone(), "the entry is not an object".into()));
            continue;
        };
        if !valid_name(name) {
            n.refused.push((
                name.clone(),
                format!("{name:?} is not a valid server name (use A-Z a-z 0-9 _ -, at most 64)"),
            ));
            continue;
        }
        match json_entry(name, o, &mut n.notes) {
            Ok(e) => n.entries.push(e),
            Err(why) => n.refused.push((name.clone(), why)),
        }
    }
    Ok(n)
}

fn strings(key: &str, v: &Value, name: &str) -> Result<BTreeMap<String, String>, String> {
    match v {
        Value::Null => Ok(BTreeMap::new()),
        Value::Object(m) => m
            .iter()
            .map(|(k, v)| match v {
                Value::String(s) => Ok((k.clone(), cursor_to_plain(s))),
                Value::Number(x) => Ok((k.clone(), x.to_string())),
                Value::Bool(b) => Ok((k.clone(), b.to_string())),
                other => Err(format!(
                    "{name}: \"{key}.{k}\" must be a string, not {other}"
                )),
            })
            .collect(),
        _ => Err(format!("{name}: \"{key}\" must be an object of strings")),
    }
}

pub(super) fn json_entry(
    name: &str,
    o: &serde_json::Map<String, Value>,
    notes: &mut Vec<String>,
) -> Result<Entry, String> {
    let label = if name.is_empty() { "the entry" } else { name };
    let ty = o
        .get("type")
        .or_else(|| o.get("transport"))
        .and_then(Value::as_str)
        .unwrap_or("");
    if ty == "sse" {
        return Err("type \"sse\" is the legacy HTTP+SSE transport, which tai does not support (use a Streamable HTTP URL)".into());
    }
    // Gemini CLI names its Streamable HTTP endpoint `httpUrl` (its `url` is SSE).
    let url = o
        .get("url")
        .or_else(|| o.get("serverUrl"))
        .or_else(|| o.get("httpUrl"))
        .and_then(Value::as_str);
    let leg = if let Some(url) = url {
        if !matches!(ty, "" | "http" | "streamable-http" | "streamableHttp") {
            return Err(format!("unknown type {ty:?} for a URL entry"));
        }
        Leg::Http {
            url: cursor_to_plain(url),
            headers: strings("headers", o.get("headers").unwrap_or(&Value::Null), label)?,
        }
    } else {
        let command = o
            .get("command")
            .and_then(Value::as_str)
            .ok_or("the entry needs \"command\" or \"url\"")?;
        let args = match o.get("args") {
            None | Some(Value::Null) => Vec::new(),
            Some(Value::Array(a)) => a
                .iter()
                .map(|x| match x {
                    Value::String(s) => Ok(cursor_to_plain(s)),
                    Value::Number(n) => Ok(n.to_string()),
                    _ => Err(format!("{label}: \"args\" must be strings")),
                })
                .collect::<Result<_, _>>()?,
            Some(_) => return Err(format!("{label}: \"args\" must be an array")),
        };
        Leg::Stdio {
            command: cursor_to_plain(command),
            args,
            env: strings("env", o.get("env").unwrap_or(&Value::Null), label)?,
            cwd: o.get("cwd").and_then(Value::as_str).map(cursor_to_plain),
        }
    };
    let mut e = entry(name.to_string(), leg);
    for (k, v) in o {
        match k.as_str() {
            "command" | "args" | "env" | "cwd" | "url" | "serverUrl" | "httpUrl" | "headers"
            | "type" | "transport" => {}
            "protocol" => {
                e.protocol = v.as_str().and_then(EraChoice::parse).ok_or_else(|| {
                    format!(
                        "{label}: \"protocol\" must be auto, {LEGACY_VERSION} or {MODERN_VERSION}"
                    )
                })?
            }
            "disabled" => e.enabled = v.as_bool().map(|d| !d),
            "enabled" => e.enabled = v.as_bool(),
            "enabled_tools" | "allowedTools" | "includeTools" => e.allow = Some(str_list(v)),
            "disabled_tools" | "excludeTools" => e.deny = str_list(v),
            "env_vars" => e.env_vars = str_list(v),
            "envFile" => match v.as_str() {
                Some(path) => e.options.env_file = Some(cursor_to_plain(path)),
                None => return Err(format!("{label}: \"envFile\" must be a path")),
            },
            "startup_timeout_sec"
            | "startup_timeout_ms"
            | "initTimeout"
            | "tool_timeout_sec"
            | "timeout" => {
                let ms = timeout_ms(k, v)
                    .ok_or_else(|| format!("{label}: \"{k}\" must be a positive number"))?;
                let ms = bounded_ms(ms).unwrap_or_else(|max| {
                    notes.push(format!(
                        "{label}: \"{k}\" is above MCP_TIMEOUT_MAX; {} s is used",
                        max / 1000
                    ));
                    max
                });
                match k.as_str() {
                    "tool_timeout_sec" | "timeout" => e.options.call_timeout_ms = Some(ms),
                    _ => e.options.connect_timeout_ms = Some(ms),
                }
            }
            other => notes.push(format!(
                "{label}: dropped the field {other:?} (tai has no use for it)"
            )),
        }
    }
    Ok(e)
}

/// An imported timeout in milliseconds: `*_sec` keys count seconds (Codex), the rest
/// milliseconds (`startup_timeout_ms`; `timeout` as Gemini CLI and Cursor write it).
fn timeout_ms(key: &str, v: &Value) -> Option<u64> {
    let x = v.as_f64().filter(|x| *x > 0.0 && x.is_finite())?;
    let ms = if key.ends_with("_sec") { x * 1000.0 } else { x };
    Some(ms.round() as u64)
}

fn str_list(v: &Value) -> Vec<String> {
    v.as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .map(str::to_string)
        .collect()
}
