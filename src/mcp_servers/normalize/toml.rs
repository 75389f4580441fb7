//! The TOML shape: Codex's `[mcp_servers.NAME]` tables, mapped onto the JSON rules
//! (`http_headers`, `env_http_headers` and `bearer_token_env_var` become headers). Pure.

use serde_json::Value;

use super::json::json_entry;
use super::{Entry, NormalizeError, Normalized, Source, valid_name};

pub(super) fn toml_doc(t: &str) -> Result<Normalized, NormalizeError> {
    let doc: toml::Table = toml::from_str(t).map_err(|e| {
        let at = e.span().map(|s| {
            let before = &t[..s.start.min(t.len())];
            (
                before.matches('\n').count() + 1,
                before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1,
            )
        });
        match at {
            Some((l, c)) => NormalizeError::Syntax(format!(
                "TOML error at line {l}, column {c}: {}",
                e.message()
            )),
            None => NormalizeError::Syntax(format!("TOML error: {}", e.message())),
        }
    })?;
    let mut n = Normalized {
        source: Some(Source::ConfigToml),
        ..Normalized::default()
    };
    let Some(servers) = doc.get("mcp_servers") else {
        return Err(NormalizeError::Unrecognized(
            "this TOML has no [mcp_servers.NAME] tables".into(),
        ));
    };
    let others: Vec<&str> = doc
        .keys()
        .filter(|k| *k != "mcp_servers")
        .map(String::as_str)
        .collect();
    if !others.is_empty() {
        n.notes.push(format!(
            "ignored top-level keys that are not MCP servers: {}",
            others.join(", ")
        ));
    }
    let servers = servers
        .as_table()
        .ok_or_else(|| NormalizeError::Unrecognized("mcp_servers must be a table".into()))?;
    for (name, v) in servers {
        let Some(tbl) = v.as_table() else {
            n.refused.push((name.clone(), "not a table".into()));
            continue;
        };
        if !valid_name(name) {
            n.refused.push((
                name.clone(),
                format!("{name:?} is not a valid server name (use A-Z a-z 0-9 _ -, at most 64)"),
            ));
            continue;
        }
        // Map TOML to JSON so one set of rules reads both.
        let json: Value = serde_json::to_value(tbl).unwrap_or(Value::Null);
        match toml_entry(name, &json, &mut n.notes) {
            Ok(e) => n.entries.push(e),
            Err(why) => n.refused.push((name.clone(), why)),
        }
    }
    Ok(n)
}

fn toml_entry(name: &str, v: &Value, notes: &mut Vec<String>) -> Result<Entry, String> {
    let mut o = v.as_object().cloned().unwrap_or_default();
    let mut headers = serde_json::Map::new();
    if let Some(Value::Object(h)) = o.remove("http_headers") {
        headers.extend(h);
    }
    if let Some(Value::Object(h)) = o.remove("env_http_headers") {
        for (header, var) in h {
            if let Some(var) = var.as_str() {
                headers.insert(header, Value::String(format!("${{{var}}}")));
            }
        }
    }
    if let Some(var) = o.remove("bearer_token_env_var") {
        let var = var
            .as_str()
            .ok_or("bearer_token_env_var must be a string")?;
        headers.insert(
            "Authorization".into(),
            Value::String(format!("Bearer ${{{var}}}")),
        );
    }
    if !headers.is_empty() {
        o.insert("headers".into(), Value::Object(headers));
    }
    json_entry(name, &o, notes)
}
