//! How a stored server is shown: one JSON shape per object (server, tool, call result,
//! error) shared by every command with `--json`, `tai mcp get`, `tai mcp export` and
//! `tai mcp list --check`.
//!
//! Shapes (documented in docs/mcp.md, "JSON output"):
//! - server: `{name, transport, command, args, url, cwd, env, headers, envFile, project,
//!   source, protocol, connectTimeoutMs, callTimeoutMs, enabledProfiles, created, updated,
//!   lastError, tools: [tool]}`; env and header values are masked unless they are
//!   `${NAME}` references;
//! - tool: `{server, name, description, inputSchema, pinned, allowed, trusted}`;
//! - call result: `{server, tool, outcome, isError, text}`;
//! - error: `{"error": message}`, with a non-zero exit.

use std::collections::BTreeMap;

use rusqlite::OptionalExtension;
use serde_json::{Map, Value, json};

use crate::mcp_servers::normalize::Leg;
use crate::mcp_servers::store::{self, ServerRow};
use crate::vault::Store;

/// A value as shown: `${NAME}` references stay, anything else is masked.
pub fn mask(value: &str) -> String {
    if value.contains("${") {
        value.to_string()
    } else {
        "****".to_string()
    }
}

fn masked(m: &BTreeMap<String, String>) -> Map<String, Value> {
    m.iter().map(|(k, v)| (k.clone(), mask(v).into())).collect()
}

/// The tool object.
pub fn tool_json(store: &Store, row: &ServerRow, t: &store::StoredTool) -> Value {
    let server = &row.entry.name;
    let trusted = crate::mcp_servers::trust::state(store, server, &t.name)
        .ok()
        .flatten()
        == Some(true);
    json!({
        "server": server,
        "name": t.name,
        "description": t.description,
        "inputSchema": t.schema,
        "pinned": t.pinned,
        "allowed": store::allowed(&row.entry, &t.name),
        "trusted": trusted,
    })
}

/// The latest failure the audit trail holds for a server (its calls included).
fn last_error(store: &Store, server: &str) -> Option<Value> {
    let prefix = format!("{server}/");
    // The newest rows may still be in the audit journal.
    store.audit_fold().ok()?;
    store
        .conn()
        .query_row(
            "SELECT time, kind, outcome, detail FROM audit
             WHERE (subject = ?1 OR substr(subject, 1, ?2) = ?3)
               AND (outcome LIKE '%error%' OR outcome LIKE '%fail%' OR outcome = 'timeout')
             ORDER BY id DESC LIMIT 1",
            rusqlite::params![server, prefix.len() as i64, prefix],
            |r| {
                Ok(json!({
                    "time": super::render::iso8601(r.get(0)?),
                    "kind": r.get::<_, String>(1)?,
                    "outcome": r.get::<_, String>(2)?,
                    "detail": r.get::<_, Option<String>>(3)?,
                }))
            },
        )
        .optional()
        .ok()
        .flatten()
}

/// The server object.
pub fn server_json(store: &Store, row: &ServerRow) -> crate::vault::Result<Value> {
    let e = &row.entry;
    let (transport, command, args, url, cwd, env, headers) = match &e.leg {
        Leg::Stdio {
            command,
            args,
            env,
            cwd,
        } => (
            "stdio",
            Some(command.clone()),
            args.clone(),
            None,
            cwd.clone(),
            masked(env),
            Map::new(),
        ),
        Leg::Http { url, headers } => (
            "http",
            None,
            Vec::new(),
            Some(url.clone()),
            None,
            Map::new(),
            masked(headers),
        ),
    };
    let profiles: Vec<String> = store::profiles(store, &e.name)?
        .into_iter()
        .filter(|(_, on)| *on)
        .map(|(p, _)| p)
        .collect();
    let tools: Vec<Value> = store::tools(store, &e.name)?
        .iter()
        .map(|t| tool_json(store, row, t))
        .collect();
    Ok(json!({
        "name": e.name,
        "transport": transport,
        "command": command,
        "args": args,
        "url": url,
        "cwd": cwd,
        "env": env,
        "headers": headers,
        "envFile": e.options.env_file,
        "project": e.options.project,
        "source": row.source,
        "protocol": match e.protocol {
            crate::mcp::era::EraChoice::Auto => "auto",
            crate::mcp::era::EraChoice::Pinned(era) => era.version(),
        },
        "connectTimeoutMs": e.options.connect_timeout_ms.unwrap_or(crate::mcp::caps::MCP_CONNECT_TIMEOUT.as_millis() as u64),
        "callTimeoutMs": e.options.call_timeout_ms.unwrap_or(crate::mcp::caps::MCP_CALL_TIMEOUT.as_millis() as u64),
        "enabledProfiles": profiles,
        "created": super::render::iso8601(row.created),
        "updated": super::render::iso8601(row.updated),
        "lastError": last_error(store, &e.name),
        "tools": tools,
    }))
}

/// The command or URL of an entry on one line (values masked).
pub fn target(row: &ServerRow) -> String {
    match &row.entry.leg {
        Leg::Stdio { command, args, .. } => {
            let mut words = vec![crate::mcp::client::quote(command)];
            words.extend(args.iter().map(|a| crate::mcp::client::quote(a)));
            words.join(" ")
        }
        Leg::Http { url, .. } => url.clone(),
    }
}

/// `tai mcp get NAME` for people.
pub fn get_text(v: &Value) -> String {
    let s = |k: &str| v[k].as_str().unwrap_or("-").to_string();
    let mut out = format!("{}\n", s("name"));
    let line = |out: &mut String, k: &str, val: String| out.push_str(&format!("  {k:<13}{val}\n"));
    line(&mut out, "transport", s("transport"));
    if v["transport"] == "stdio" {
        let mut argv = vec![s("command")];
        argv.extend(
            v["args"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .map(str::to_string),
        );
        line(&mut out, "command", argv.join(" "));
        if let Some(cwd) = v["cwd"].as_str() {
            line(&mut out, "cwd", cwd.to_string());
        }
    } else {
        line(&mut out, "url", s("url"));
    }
    for key in ["env", "headers"] {
        if let Some(m) = v[key].as_object().filter(|m| !m.is_empty()) {
            let pairs: Vec<String> = m
                .iter()
                .map(|(k, x)| format!("{k}={}", x.as_str().unwrap_or("")))
                .collect();
            line(&mut out, key, pairs.join(" "));
        }
    }
    for (key, label) in [("envFile", "envFile"), ("project", "project")] {
        if let Some(x) = v[key].as_str() {
            line(&mut out, label, x.to_string());
        }
    }
    line(&mut out, "source", s("source"));
    line(&mut out, "protocol", s("protocol"));
    line(
        &mut out,
        "timeouts",
        format!(
            "connect {} s, call {} s",
            v["connectTimeoutMs"].as_u64().unwrap_or(0) as f64 / 1000.0,
            v["callTimeoutMs"].as_u64().unwrap_or(0) as f64 / 1000.0
        ),
    );
    let profiles: Vec<&str> = v["enabledProfiles"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    line(
        &mut out,
        "enabled for",
        if profiles.is_empty() {
            "- (disabled everywhere)".into()
        } else {
            profiles.join(", ")
        },
    );
    line(&mut out, "verified", s("updated"));
    if let Some(err) = v["lastError"].as_object() {
        line(
            &mut out,
            "last error",
            format!(
                "{} {} {}: {}",
                err["time"].as_str().unwrap_or(""),
                err["kind"].as_str().unwrap_or(""),
                err["outcome"].as_str().unwrap_or(""),
                err["detail"]
                    .as_str()
                    .unwrap_or("")
                    .lines()
                    .next()
                    .unwrap_or("")
            ),
        );
    }
    out.push_str("  tools:\n");
    for t in v["tools"].as_array().into_iter().flatten() {
        let mut flags = Vec::new();
        if t["pinned"] != true {
            flags.push("CHANGED: review, then `tai mcp approve`");
        }
        if t["allowed"] != true {
            flags.push("not allowed");
        }
        if t["trusted"] == true {
            flags.push("trusted");
        }
        let d: String = t["description"]
            .as_str()
            .unwrap_or("")
            .lines()
            .next()
            .unwrap_or("")
            .chars()
            .take(60)
            .collect();
        out.push_str(&format!(
            "    {}  [{}]  {d}\n",
            t["name"].as_str().unwrap_or(""),
            if flags.is_empty() {
                "pinned".to_string()
            } else {
                flags.join(", ")
            }
        ));
    }
    out
}

/// A placeholder for a literal value on export: `${NAME}` from the key.
fn placeholder(key: &str) -> String {
    let name: String = key
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_uppercase()
            } else {
                '_'
            }
        })
        .collect();
    format!("${{{name}}}")
}

/// `tai mcp export`: the servers as a config another tool (or tai) reads back. Literal
/// env and header values are written as `${NAME}` references (listed in the notes);
/// references stay as they are.
pub fn export(rows: &[ServerRow], format: &str) -> (String, Vec<String>) {
    let mut notes = Vec::new();
    let mut servers = Map::new();
    let mut toml = String::new();
    for row in rows {
        let e = &row.entry;
        let mut keep = |m: &BTreeMap<String, String>| -> BTreeMap<String, String> {
            m.iter()
                .map(|(k, v)| {
                    if v.contains("${") {
                        (k.clone(), v.clone())
                    } else {
                        let p = placeholder(k);
                        notes.push(format!("{}: {k} is written as {p}", e.name));
                        (k.clone(), p)
                    }
                })
                .collect()
        };
        let mut o = Map::new();
        match &e.leg {
            Leg::Stdio {
                command,
                args,
                env,
                cwd,
            } => {
                if format == "vscode" {
                    o.insert("type".into(), "stdio".into());
                }
                o.insert("command".into(), command.clone().into());
                o.insert("args".into(), json!(args));
                let env = keep(env);
                if !env.is_empty() {
                    o.insert("env".into(), json!(env));
                }
                if let Some(c) = cwd {
                    o.insert("cwd".into(), c.clone().into());
                }
            }
            Leg::Http { url, headers } => {
                o.insert("type".into(), "http".into());
                o.insert("url".into(), url.clone().into());
                let h = keep(headers);
                if !h.is_empty() {
                    let key = if format == "codex" {
                        "http_headers"
                    } else {
                        "headers"
                    };
                    o.insert(key.into(), json!(h));
                }
            }
        }
        if let Some(f) = &e.options.env_file {
            o.insert("envFile".into(), f.clone().into());
        }
        let secs = |ms: Option<u64>| ms.map(|ms| (ms as f64 / 1000.0).ceil() as u64);
        if format == "codex" {
            o.remove("type");
            o.remove("envFile");
            if let Some(s) = secs(e.options.connect_timeout_ms) {
                o.insert("startup_timeout_sec".into(), s.into());
            }
            if let Some(s) = secs(e.options.call_timeout_ms) {
                o.insert("tool_timeout_sec".into(), s.into());
            }
            if let Some(a) = &e.allow {
                o.insert("enabled_tools".into(), json!(a));
            }
            if !e.deny.is_empty() {
                o.insert("disabled_tools".into(), json!(e.deny));
            }
            let mut t = toml::Table::new();
            let mut inner = toml::Table::new();
            if let Ok(toml::Value::Table(tbl)) = toml::Value::try_from(Value::Object(o)) {
                inner.insert(e.name.clone(), toml::Value::Table(tbl));
            }
            t.insert("mcp_servers".into(), toml::Value::Table(inner));
            toml.push_str(&toml::to_string(&t).unwrap_or_default());
            toml.push('\n');
        } else {
            if let Some(ms) = e.options.connect_timeout_ms {
                o.insert("startup_timeout_ms".into(), ms.into());
            }
            if let Some(ms) = e.options.call_timeout_ms {
                o.insert("timeout".into(), ms.into());
            }
            servers.insert(e.name.clone(), Value::Object(o));
        }
    }
    let text = match format {
        "codex" => toml,
        "vscode" => format!("{:#}\n", json!({ "servers": servers })),
        _ => format!("{:#}\n", json!({ "mcpServers": servers })),
    };
    (text, notes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mcp_servers::normalize::normalize;

    fn rows(text: &str) -> Vec<ServerRow> {
        normalize(text, false)
            .unwrap()
            .entries
            .into_iter()
            .map(|entry| ServerRow {
                entry,
                source: "config-json".into(),
                created: 0,
                updated: 0,
            })
            .collect()
    }

    #[test]
    fn masking_keeps_references_only() {
        for (v, want) in [
            ("${TOKEN}", "${TOKEN}"),
            ("Bearer ${TOKEN}", "Bearer ${TOKEN}"),
            ("ghp_literal", "****"),
            ("", "****"),
        ] {
            assert_eq!(mask(v), want, "{v}");
        }
    }

    #[test]
    fn export_round_trips_through_the_normalizer_in_every_format() {
        let original = rows(
            r#"{"mcpServers": {
                "mem": {"command": "npx", "args": ["-y", "srv"], "env": {"API_KEY": "sk-literal", "HOME_DIR": "${HOME}"},
                        "startup_timeout_sec": 40, "tool_timeout_sec": 90},
                "web": {"url": "https://h/mcp", "headers": {"Authorization": "Bearer ${TOKEN}", "X-Key": "lit"}}
            }}"#,
        );
        for format in ["claude", "vscode", "codex"] {
            let (text, notes) = export(&original, format);
            assert!(
                !text.contains("sk-literal") && !text.contains("\"lit\""),
                "{format}: {text}"
            );
            assert_eq!(notes.len(), 2, "{format}: {notes:?}");
            let back = normalize(&text, false).unwrap_or_else(|e| panic!("{format}: {e}\n{text}"));
            assert!(back.refused.is_empty(), "{format}: {back:?}");
            let mem = back.entries.iter().find(|e| e.name == "mem").unwrap();
            let Leg::Stdio {
                command, args, env, ..
            } = &mem.leg
            else {
                panic!("{format}: stdio")
            };
            assert_eq!(
                (command.as_str(), args.clone()),
                ("npx", vec!["-y".to_string(), "srv".into()])
            );
            assert_eq!(
                env["API_KEY"], "${API_KEY}",
                "{format}: secrets as ${{NAME}}"
            );
            assert_eq!(env["HOME_DIR"], "${HOME}");
            assert_eq!(
                (mem.options.connect_timeout_ms, mem.options.call_timeout_ms),
                (Some(40_000), Some(90_000)),
                "{format}"
            );
            let web = back.entries.iter().find(|e| e.name == "web").unwrap();
            let Leg::Http { url, headers } = &web.leg else {
                panic!("{format}: http")
            };
            assert_eq!(url, "https://h/mcp");
            assert_eq!(headers["Authorization"], "Bearer ${TOKEN}");
            assert_eq!(headers["X-Key"], "${X_KEY}");
        }
    }
}
