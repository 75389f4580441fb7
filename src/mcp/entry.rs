//! One server entry from text, for `tai mcp probe`: a JSON entry, a URL, or a command line.
//!
//! Pure. (Whole editor configs, `${VAR}` expansion and stored names are the intake's.)

use serde_json::Value;

use super::client::ServerSpec;
use super::era::EraChoice;
use super::http::HttpSpec;
use super::stdio::StdioSpec;

/// Parse one entry. JSON may be a bare entry or a wrapper (`mcpServers`/`servers`) that
/// holds exactly one server.
pub fn parse(text: &str) -> Result<(ServerSpec, EraChoice), String> {
    let text = text.trim();
    if text.is_empty() {
        return Err("no server given: pass a command line, a URL or a JSON entry".into());
    }
    if crate::jsonc::strip(text)
        .trim_start()
        .starts_with('{')
    {
        let v: Value = crate::jsonc::parse(text)
            .map_err(|e| format!("the JSON entry does not parse: {e}"))?;
        return from_json(&v);
    }
    if text.starts_with("http://") || text.starts_with("https://") {
        if text.contains(char::is_whitespace) {
            return Err("a URL cannot contain spaces".into());
        }
        return Ok((
            ServerSpec::Http(HttpSpec {
                url: text.into(),
                headers: Vec::new(),
            }),
            EraChoice::Auto,
        ));
    }
    let mut words = crate::shell_words::split_words(text)?;
    let command = words.remove(0);
    Ok((
        ServerSpec::Stdio(StdioSpec {
            command,
            args: words,
            env: Vec::new(),
            cwd: None,
            ..StdioSpec::default()
        }),
        EraChoice::Auto,
    ))
}

fn from_json(v: &Value) -> Result<(ServerSpec, EraChoice), String> {
    let obj = v.as_object().ok_or("the JSON entry must be an object")?;
    for wrapper in ["mcpServers", "servers", "mcp_servers"] {
        if let Some(inner) = obj.get(wrapper) {
            let servers = inner
                .as_object()
                .ok_or(format!("\"{wrapper}\" must be an object"))?;
            return match servers.len() {
                1 => from_json(servers.values().next().unwrap_or(&Value::Null)),
                0 => Err(format!("\"{wrapper}\" holds no server")),
                n => Err(format!(
                    "\"{wrapper}\" holds {n} servers ({}); probe one at a time",
                    servers.keys().cloned().collect::<Vec<_>>().join(", ")
                )),
            };
        }
    }
    let protocol = match obj.get("protocol").and_then(Value::as_str) {
        Some(p) => EraChoice::parse(p).ok_or(format!(
            "unknown protocol {p:?}: use auto, 2025-11-25 or 2026-07-28"
        ))?,
        None => EraChoice::Auto,
    };
    let strings = |key: &str| -> Result<Vec<(String, String)>, String> {
        match obj.get(key) {
            None | Some(Value::Null) => Ok(Vec::new()),
            Some(Value::Object(m)) => m
                .iter()
                .map(|(k, v)| match v {
                    Value::String(s) => Ok((k.clone(), s.clone())),
                    other => Err(format!("\"{key}.{k}\" must be a string, not {other}")),
                })
                .collect(),
            Some(_) => Err(format!("\"{key}\" must be an object of strings")),
        }
    };
    if obj.get("type").and_then(Value::as_str) == Some("sse") {
        return Err("type \"sse\" is the legacy HTTP+SSE transport, which tai does not support; use Streamable HTTP".into());
    }
    if let Some(url) = obj.get("url") {
        let url = url.as_str().ok_or("\"url\" must be a string")?;
        return Ok((
            ServerSpec::Http(HttpSpec {
                url: url.into(),
                headers: strings("headers")?,
            }),
            protocol,
        ));
    }
    let command = obj
        .get("command")
        .and_then(Value::as_str)
        .ok_or("the entry needs \"command\" or \"url\"")?;
    let args = match obj.get("args") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(a)) => a
            .iter()
            .map(|x| {
                x.as_str()
                    .map(str::to_string)
                    .ok_or("\"args\" must be strings".to_string())
            })
            .collect::<Result<_, _>>()?,
        Some(_) => return Err("\"args\" must be an array of strings".into()),
    };
    let cwd = obj.get("cwd").and_then(Value::as_str).map(Into::into);
    Ok((
        ServerSpec::Stdio(StdioSpec {
            command: command.into(),
            args,
            env: strings("env")?,
            cwd,
            env_vars: obj
                .get("env_vars")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect(),
            withheld_values: Vec::new(),
        }),
        protocol,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mcp::era::Era;

    #[test]
    fn entries() {
        let (s, c) =
            parse(r#"{"mcpServers":{"fs":{"command":"npx","args":["-y","x"],"env":{"K":"v"}}}}"#)
                .unwrap();
        assert_eq!(c, EraChoice::Auto);
        let ServerSpec::Stdio(st) = s else {
            panic!("stdio expected")
        };
        assert_eq!(
            (st.command.as_str(), st.args.len(), st.env[0].0.as_str()),
            ("npx", 2, "K")
        );
        let (s, c) = parse(r#"{"url":"http://127.0.0.1:1/mcp","headers":{"Authorization":"Bearer x"},"protocol":"2026-07-28"}"#).unwrap();
        assert_eq!(c, EraChoice::Pinned(Era::Modern));
        assert!(matches!(s, ServerSpec::Http(h) if h.headers.len() == 1));
        assert!(matches!(
            parse("https://example.test/mcp").unwrap().0,
            ServerSpec::Http(_)
        ));
        for (bad, want) in [
            (r#"{"type":"sse","url":"http://x"}"#, "legacy HTTP+SSE"),
            (
                r#"{"servers":{"a":{"command":"x"},"b":{"command":"y"}}}"#,
                "2 servers",
            ),
            (r#"{"args":["x"]}"#, "needs \"command\" or \"url\""),
            (r#"{"command":"x","args":"y"}"#, "array of strings"),
            (r#"{"command":"x","env":{"A":1}}"#, "must be a string"),
            (r#"{"command":"x","protocol":"2024"}"#, "unknown protocol"),
            ("{nope", "does not parse"),
        ] {
            let e = parse(bad).unwrap_err();
            assert!(e.contains(want), "{bad}: {e}");
        }
    }
}
