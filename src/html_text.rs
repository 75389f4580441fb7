//! HTML → readable text (pure): the one converter `web_fetch` and the GitHub resolver's
//! README reading share. Scripts and styles dropped, block elements as line breaks, the
//! common entities decoded, blank space collapsed.

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
