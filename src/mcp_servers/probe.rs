//! One pasted server for `tai mcp probe`: the normalizer's one entry (the same parser
//! `tai mcp add` uses, so every shape add accepts, probe accepts) as a spec to connect
//! to. Pure; nothing is expanded, asked or stored (`${VAR}` stays as written).

use crate::mcp::client::ServerSpec;
use crate::mcp::era::EraChoice;
use crate::mcp::http::HttpSpec;
use crate::mcp::stdio::StdioSpec;

use super::normalize::{Leg, NormalizeError, normalize};

/// The one server in `text` (a JSON entry or wrapper holding one server, TOML, a URL, a
/// command line) and the era its entry asks for.
pub fn one_server(text: &str, windows: bool) -> Result<(ServerSpec, EraChoice), String> {
    let n = match normalize(text, windows) {
        Ok(n) => n,
        Err(NormalizeError::Empty) => {
            return Err("no server given: pass a command line, a URL or a JSON entry".into());
        }
        Err(e) => return Err(e.to_string()),
    };
    let entry = match (n.entries.as_slice(), n.refused.as_slice()) {
        ([one], []) => one.clone(),
        ([], [(name, why)]) if name == "(entry)" => return Err(why.clone()),
        ([], [(name, why)]) => return Err(format!("{name}: {why}")),
        ([], []) => return Err("the config holds no server".into()),
        _ => {
            let mut names: Vec<&str> = n.entries.iter().map(|e| e.name.as_str()).collect();
            names.extend(n.refused.iter().map(|(name, _)| name.as_str()));
            return Err(format!(
                "the config holds {} servers ({}); probe one at a time",
                names.len(),
                names.join(", ")
            ));
        }
    };
    let spec = match entry.leg {
        Leg::Stdio {
            command,
            args,
            env,
            cwd,
        } => ServerSpec::Stdio(StdioSpec {
            command,
            args,
            env: env.into_iter().collect(),
            cwd: cwd.map(Into::into),
            env_vars: entry.env_vars,
            withheld_values: Vec::new(),
        }),
        Leg::Http { url, headers } => ServerSpec::Http(HttpSpec {
            url,
            headers: headers.into_iter().collect(),
        }),
    };
    Ok((spec, entry.protocol))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mcp::era::Era;

    fn stdio(text: &str) -> StdioSpec {
        match one_server(text, false) {
            Ok((ServerSpec::Stdio(s), _)) => s,
            other => panic!("{text}: {other:?}"),
        }
    }

    fn http(text: &str) -> (HttpSpec, EraChoice) {
        match one_server(text, false) {
            Ok((ServerSpec::Http(h), c)) => (h, c),
            other => panic!("{text}: {other:?}"),
        }
    }

    #[test]
    fn every_shape_add_accepts() {
        // (text, command, args): the wrappers of every editor, a bare entry, a command line, TOML
        let table: &[(&str, &str, &[&str])] = &[
            (
                r#"{"mcpServers":{"fs":{"command":"npx","args":["-y","x"],"env":{"K":"v"}}}}"#,
                "npx",
                &["-y", "x"],
            ),
            (r#"{"servers":{"a":{"command":"a"}}}"#, "a", &[]),
            (r#"{"mcp_servers":{"a":{"command":"a"}}}"#, "a", &[]),
            (
                r#"{"context_servers":{"zed":{"command":"uvx","args":["mcp-server-time"]}}}"#,
                "uvx",
                &["mcp-server-time"],
            ),
            (r#"{"command":"x","args":["1"]}"#, "x", &["1"]),
            ("python3 -c 'print(1)'", "python3", &["-c", "print(1)"]),
            (
                "[mcp_servers.t]\ncommand = \"t\"\nargs = [\"a\"]\n",
                "t",
                &["a"],
            ),
        ];
        for (text, command, args) in table {
            let s = stdio(text);
            assert_eq!(s.command, *command, "{text}");
            assert_eq!(s.args, *args, "{text}");
        }
        let s =
            stdio(r#"{"mcpServers":{"fs":{"command":"npx","env":{"K":"v"},"env_vars":["HOME"]}}}"#);
        assert_eq!(
            (s.env, s.env_vars),
            (vec![("K".into(), "v".into())], vec!["HOME".into()])
        );
    }

    #[test]
    fn urls_by_every_key_with_headers_and_era() {
        for text in [
            r#"{"url":"http://127.0.0.1:1/mcp"}"#,
            r#"{"serverUrl":"http://127.0.0.1:1/mcp"}"#,
            r#"{"mcpServers":{"w":{"serverUrl":"http://127.0.0.1:1/mcp"}}}"#,
            r#"{"mcpServers":{"g":{"httpUrl":"http://127.0.0.1:1/mcp"}}}"#,
            "http://127.0.0.1:1/mcp",
        ] {
            assert_eq!(http(text).0.url, "http://127.0.0.1:1/mcp", "{text}");
        }
        let (h, c) = http(
            r#"{"url":"http://x/mcp","headers":{"Authorization":"Bearer ${T}"},"protocol":"2026-07-28"}"#,
        );
        assert_eq!(h.headers, [("Authorization".into(), "Bearer ${T}".into())]);
        assert_eq!(c, EraChoice::Pinned(Era::Modern));
    }

    #[test]
    fn refusals_name_what_to_do() {
        for (bad, want) in [
            ("", "no server given"),
            ("   ", "no server given"),
            (r#"{"type":"sse","url":"http://x"}"#, "legacy HTTP+SSE"),
            (
                r#"{"servers":{"a":{"command":"x"},"b":{"command":"y"}}}"#,
                "2 servers (a, b); probe one at a time",
            ),
            (r#"{"servers":{}}"#, "holds no server"),
            (r#"{"args":["x"]}"#, "needs \"command\" or \"url\""),
            (r#"{"command":"x","args":"y"}"#, "must be an array"),
            (
                r#"{"command":"x","protocol":"2024"}"#,
                "\"protocol\" must be auto",
            ),
            (r#"{"mcpServers":{"bad name":{"command":"x"}}}"#, "bad name"),
            ("{nope", "JSON error at line 1"),
            ("a 'b", "unclosed '"),
            (
                "https://github.com/o/r",
                "tai mcp add https://github.com/o/r",
            ),
        ] {
            let e = one_server(bad, false).unwrap_err();
            assert!(e.contains(want), "{bad}: {e}");
        }
    }
}
