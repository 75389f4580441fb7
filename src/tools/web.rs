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
            html_to_text(&raw)
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

/// HTML → readable text: scripts and styles dropped, block elements as line breaks,
/// the common entities decoded, blank space collapsed and empty lines dropped.
pub fn html_to_text(html: &str) -> String {
    let mut out = String::with_capacity(html.len() / 2);
    let mut rest = html;
    while let Some(lt) = rest.find('<') {
        out.push_str(&rest[..lt]);
        let after = &rest[lt + 1..];
        let Some(gt) = after.find('>') else {
            rest = "";
            break;
        };
        let tag = after[..gt].trim().to_ascii_lowercase();
        let name: String = tag
            .trim_start_matches('/')
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric())
            .collect();
        rest = &after[gt + 1..];
        if (name == "script" || name == "style") && !tag.starts_with('/') {
            let close = format!("</{name}");
            match rest.to_ascii_lowercase().find(&close) {
                Some(end) => rest = rest[end..].split_once('>').map_or("", |(_, r)| r),
                None => rest = "",
            }
            continue;
        }
        if matches!(
            name.as_str(),
            "p" | "div"
                | "br"
                | "li"
                | "tr"
                | "h1"
                | "h2"
                | "h3"
                | "h4"
                | "h5"
                | "h6"
                | "pre"
                | "section"
                | "article"
                | "header"
                | "footer"
                | "ul"
                | "ol"
                | "table"
                | "title"
        ) {
            out.push('\n');
        }
    }
    out.push_str(rest);
    let decoded = decode_entities(&out);
    let lines: Vec<String> = decoded
        .lines()
        .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
        .filter(|l| !l.is_empty())
        .collect();
    lines.join("\n")
}

fn decode_entities(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(amp) = rest.find('&') {
        out.push_str(&rest[..amp]);
        let after = &rest[amp..];
        let end = after.find(';').filter(|e| *e <= 10);
        let decoded = end.and_then(|e| {
            let ent = &after[1..e];
            let c = match ent {
                "amp" => Some('&'),
                "lt" => Some('<'),
                "gt" => Some('>'),
                "quot" => Some('"'),
                "apos" | "#39" => Some('\''),
                "nbsp" => Some(' '),
                _ => ent
                    .strip_prefix("#x")
                    .and_then(|h| u32::from_str_radix(h, 16).ok())
                    .or_else(|| ent.strip_prefix('#').and_then(|d| d.parse().ok()))
                    .and_then(char::from_u32),
            };
            c.map(|c| (c, e))
        });
        match decoded {
            Some((c, e)) => {
                out.push(c);
                rest = &after[e + 1..];
            }
            None => {
                out.push('&');
                rest = &after[1..];
            }
        }
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::html_to_text;

    #[test]
    fn html_table() {
        let cases = [
            (
                "<p>Hello <b>world</b></p><p>Second</p>",
                "Hello world\nSecond",
            ),
            ("<script>var x = '<p>no</p>';</script>Text", "Text"),
            ("<STYLE>p{}</STYLE><h1>Title</h1>body", "Title\nbody"),
            (
                "a &amp; b &lt;c&gt; &quot;d&quot; &#233; &#x41; &nbsp;e",
                "a & b <c> \"d\" é A e",
            ),
            ("fish & chips &unknown; end", "fish & chips &unknown; end"),
            ("<ul><li>one</li><li>two</li></ul>", "one\ntwo"),
            ("unclosed <tag", "unclosed"),
        ];
        for (html, want) in cases {
            assert_eq!(html_to_text(html), want, "{html}");
        }
    }
}
