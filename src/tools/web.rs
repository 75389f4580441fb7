//! `web_fetch`: one GET with a deadline and a size cap; HTML reduced to text (pure
//! `html_to_text`). Redirects are followed up to 5 hops. Not `safe`: a fetch can carry
//! anything the agent has read to anywhere, so it asks approval like a non-read-only
//! shell command (the trust gate shows the full URL; `--auto` approves it).

use std::io::Read;

use serde_json::{Map, Value, json};

use super::{NativeTool, ToolContext, ToolDef, ToolOutput, arg_str};

use crate::limits::{
    HTTP_CONNECT_TIMEOUT, WEB_FETCH_DEFAULT_MAX, WEB_FETCH_HARD_MAX, WEB_FETCH_TIMEOUT,
};

pub struct WebFetch;

impl NativeTool for WebFetch {
    fn def(&self) -> ToolDef {
        ToolDef {
            name: "web_fetch",
            description: "Fetch a URL (http or https) and return its text; HTML is reduced to readable text. max_bytes caps what is read (default 1 MB).",
            parameters: json!({"type": "object", "properties": {
                "url": {"type": "string"}, "max_bytes": {"type": "integer"}
            }, "required": ["url"]}),
            safe: false,
        }
    }

    fn run(&self, _ctx: &mut ToolContext<'_>, args: &Map<String, Value>) -> ToolOutput {
        let url = arg_str(args, "url");
        if !(url.starts_with("http://") || url.starts_with("https://")) {
            return ToolOutput::error(format!("{url:?} is not an http(s) URL"));
        }
        let max = args
            .get("max_bytes")
            .and_then(Value::as_u64)
            .map_or(WEB_FETCH_DEFAULT_MAX, |n| n as usize)
            .clamp(1, WEB_FETCH_HARD_MAX);
        let agent = crate::http::agent::agent(HTTP_CONNECT_TIMEOUT);
        let resp = agent
            .get(url)
            .config()
            .timeout_global(Some(WEB_FETCH_TIMEOUT))
            .max_redirects(5)
            .build()
            .call();
        let resp = match resp {
            Ok(r) => r,
            Err(e) => return ToolOutput::error(format!("fetching {url}: {e}")),
        };
        let status = resp.status().as_u16();
        let ctype = resp
            .headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .to_string();
        let mut body = Vec::new();
        if let Err(e) = resp
            .into_body()
            .into_reader()
            .take(max as u64 + 1)
            .read_to_end(&mut body)
        {
            return ToolOutput::error(format!("reading {url}: {e}"));
        }
        let over = body.len() > max;
        body.truncate(max);
        let raw = String::from_utf8_lossy(&body);
        let text = if ctype.contains("html") || raw.trim_start().starts_with('<') {
            crate::html_text::html_to_text(&raw)
        } else {
            raw.into_owned()
        };
        let mut out = format!("{url} (HTTP {status}, {ctype})\n\n{text}");
        if over {
            out.push_str(&format!("\n\n[the page is larger than {max} bytes; only the first {max} were read (raise max_bytes, at most {WEB_FETCH_HARD_MAX})]"));
        }
        ToolOutput {
            text: out,
            is_error: !(200..300).contains(&status),
        }
    }
}
