//! JSONC, the JSON editors write (VS Code's `mcp.json`, Cursor, Windsurf): `//` and
//! `/* */` comments and trailing commas, read wherever tai reads JSON config (pure).
//!
//! `strip` blanks comments and trailing commas with spaces (newlines kept), so a syntax
//! error's line and column still point into the text the user wrote. Strings are never
//! touched: `"http://x"` keeps its `//`.

use serde_json::Value;

/// JSONC → JSON of the same length and line layout.
pub fn strip(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out: Vec<u8> = Vec::with_capacity(bytes.len());
    // Index in `out` of the last comma outside a string, while only blanks followed it.
    let mut comma: Option<usize> = None;
    // The last byte outside strings and comments that is not white space.
    let mut last: Option<u8> = None;
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        match b {
            b'"' => {
                comma = None;
                last = Some(b'"');
                let end = string_end(bytes, i);
                out.extend_from_slice(&bytes[i..end]);
                i = end;
                continue;
            }
            b'/' if bytes.get(i + 1) == Some(&b'/') => {
                while i < bytes.len() && bytes[i] != b'\n' {
                    out.push(b' ');
                    i += 1;
                }
                continue;
            }
            b'/' if bytes.get(i + 1) == Some(&b'*') => {
                let close = text[i + 2..]
                    .find("*/")
                    .map_or(bytes.len(), |p| i + 2 + p + 2);
                for &c in &bytes[i..close] {
                    out.push(if c == b'\n' { b'\n' } else { b' ' });
                }
                i = close;
                continue;
            }
            // a comma right after `{`, `[` or another comma is an error to keep
            b',' => {
                comma = match last {
                    Some(b'{' | b'[' | b',') | None => None,
                    _ => Some(out.len()),
                }
            }
            b'}' | b']' => {
                if let Some(at) = comma.take() {
                    out[at] = b' ';
                }
            }
            b' ' | b'\t' | b'\r' | b'\n' => {}
            _ => comma = None,
        }
        if !b.is_ascii_whitespace() {
            last = Some(b);
        }
        out.push(b);
        i += 1;
    }
    // Only ASCII bytes were replaced by ASCII bytes, and strings were copied whole.
    String::from_utf8(out).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}

/// The index just past the string that starts at `start` (a `"`), or the end of input.
fn string_end(bytes: &[u8], start: usize) -> usize {
    let mut i = start + 1;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' => i += 2,
            b'"' => return i + 1,
            _ => i += 1,
        }
    }
    bytes.len()
}

/// Parse JSONC; errors carry the line and column of the text as written.
pub fn parse(text: &str) -> Result<Value, serde_json::Error> {
    serde_json::from_str(&strip(text))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn table() {
        let cases: &[(&str, Value)] = &[
            ("{}", json!({})),
            ("{\"a\": 1,}", json!({"a": 1})),
            ("[1, 2, ]", json!([1, 2])),
            ("[1, 2,\n // last\n]", json!([1, 2])),
            ("{\"a\": [1,],\n}", json!({"a": [1]})),
            ("// head\n{\"a\": 1}", json!({"a": 1})),
            ("{\"a\": /* inline */ 1}", json!({"a": 1})),
            ("{\"a\": 1 /* multi\nline */}", json!({"a": 1})),
            ("{\"u\": \"http://x//y\"}", json!({"u": "http://x//y"})),
            ("{\"u\": \"/* not */\"}", json!({"u": "/* not */"})),
            ("{\"q\": \"a\\\"// b\"}", json!({"q": "a\"// b"})),
            ("{\"c\": \",}\"}", json!({"c": ",}"})),
            ("{\"é\": \"ключ\", }", json!({"é": "ключ"})),
            ("{\"a\": 1, /* c */ }", json!({"a": 1})),
        ];
        for (text, want) in cases {
            let got = parse(text).unwrap_or_else(|e| panic!("{text:?}: {e}"));
            assert_eq!(&got, want, "{text:?}");
            assert_eq!(strip(text).len(), text.len(), "{text:?} keeps its length");
        }
    }

    #[test]
    fn commas_that_are_not_trailing_stay_errors() {
        for text in ["{,}", "[,1]", "{\"a\": 1,, }", "{\"a\" 1}"] {
            assert!(parse(text).is_err(), "{text:?} should not parse");
        }
    }

    #[test]
    fn errors_point_into_the_text_as_written() {
        let text = "{\n  // a comment\n  /* and\n  another */\n  \"a\": nope\n}";
        let e = parse(text).expect_err("not JSON");
        assert_eq!((e.line(), e.column()), (5, 9), "{e}");
    }

    #[test]
    fn unclosed_comments_and_strings_end_quietly() {
        // every prefix of a valid JSONC text strips without panicking and keeps its length
        let text = "{\"a\": \"x//y\", /* c */ \"b\": [1,], // t\n}";
        for cut in 0..=text.len() {
            let prefix = &text[..cut];
            assert_eq!(strip(prefix).len(), prefix.len(), "{prefix:?}");
        }
        assert_eq!(parse(text).unwrap(), json!({"a": "x//y", "b": [1]}));
    }
}
