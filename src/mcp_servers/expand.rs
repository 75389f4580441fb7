//! `mcp_expand_vars`: `${VAR}` references in server entries, expanded at use time (pure).
//!
//! `${NAME}` and `${NAME:-default}` come from the process environment first, then vault
//! secrets; `${input:id}` (VS Code) only from the vault secret `id`; `${env:NAME}`
//! (Cursor) is `${NAME}`. A default may hold references itself. Anything else — `$$`,
//! `$NAME`, `${}`, an unclosed `${` — is left exactly as written; no shell is involved.

/// The result of expanding one string.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Expanded {
    /// The text, with unresolved references kept literally (for display).
    pub text: String,
    /// References that resolved to nothing (`NAME` or `input:id`).
    pub missing: Vec<String>,
    /// `(reference, value)` for every reference that resolved: these join the redaction set.
    pub resolved: Vec<(String, String)>,
}

/// Where values come from: the environment and the vault's secrets.
pub struct Sources<'a> {
    pub env: &'a dyn Fn(&str) -> Option<String>,
    pub secret: &'a dyn Fn(&str) -> Option<String>,
}

fn is_name(s: &str) -> bool {
    let mut b = s.bytes();
    matches!(b.next(), Some(c) if c.is_ascii_alphabetic() || c == b'_')
        && b.all(|c| c.is_ascii_alphanumeric() || c == b'_')
}

/// The end (index of the matching `}`) of a reference whose body starts at `from`.
fn closing(text: &str, from: usize) -> Option<usize> {
    let mut depth = 1;
    let bytes = text.as_bytes();
    let mut i = from;
    while i < bytes.len() {
        match bytes[i] {
            b'$' if bytes.get(i + 1) == Some(&b'{') => {
                depth += 1;
                i += 1;
            }
            b'}' => {
                depth -= 1;
                if depth == 0 {
                    return Some(i);
                }
            }
            _ => {}
        }
        i += 1;
    }
    None
}

/// Expand every reference in `text`.
pub fn expand(text: &str, src: &Sources<'_>) -> Expanded {
    let mut out = Expanded::default();
    let mut rest = text;
    while let Some(at) = rest.find("${") {
        out.text.push_str(&rest[..at]);
        let body_start = at + 2;
        let Some(end) = closing(rest, body_start) else {
            out.text.push_str(&rest[at..]);
            rest = "";
            break;
        };
        let body = &rest[body_start..end];
        match reference(body, src, &mut out) {
            Some(value) => out.text.push_str(&value),
            None => out.text.push_str(&rest[at..=end]),
        }
        rest = &rest[end + 1..];
    }
    out.text.push_str(rest);
    out
}

/// The value of one reference body (between `${` and `}`), or `None` to keep it literally.
fn reference(body: &str, src: &Sources<'_>, out: &mut Expanded) -> Option<String> {
    let (name, default) = match body.split_once(":-") {
        Some((n, d)) => (n, Some(d)),
        None => (body, None),
    };
    let (key, value) = if let Some(id) = name.strip_prefix("input:") {
        if id.is_empty() {
            return None;
        }
        (name.to_string(), (src.secret)(id))
    } else {
        let name = name.strip_prefix("env:").unwrap_or(name);
        if !is_name(name) {
            return None;
        }
        let v = (src.env)(name)
            .filter(|v| !v.is_empty())
            .or_else(|| (src.secret)(name));
        (name.to_string(), v)
    };
    match (value.filter(|v| !v.is_empty()), default) {
        (Some(v), _) => {
            if !out.resolved.iter().any(|(k, _)| *k == key) {
                out.resolved.push((key, v.clone()));
            }
            Some(v)
        }
        (None, Some(d)) => {
            let inner = expand(d, src);
            out.missing.extend(inner.missing);
            out.resolved.extend(inner.resolved);
            Some(inner.text)
        }
        (None, None) => {
            if !out.missing.contains(&key) {
                out.missing.push(key);
            }
            None
        }
    }
}

/// Rewrite Cursor's `${env:NAME}` to `${NAME}` (the stored form), leaving all else alone.
pub fn cursor_to_plain(text: &str) -> String {
    text.replace("${env:", "${")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(text: &str) -> Expanded {
        let env = |k: &str| match k {
            "SET" => Some("value".to_string()),
            "EMPTY" => Some(String::new()),
            "UNI" => Some("ключ🔑".to_string()),
            "B" => Some("bee".to_string()),
            _ => None,
        };
        let secret = |k: &str| match k {
            "GH" => Some("ghp_secret".to_string()),
            "SET" => Some("from-vault".to_string()),
            "api" => Some("input-secret".to_string()),
            _ => None,
        };
        expand(
            text,
            &Sources {
                env: &env,
                secret: &secret,
            },
        )
    }

    #[test]
    fn table() {
        let cases: &[(&str, &str, &[&str])] = &[
            ("plain text", "plain text", &[]),
            ("${SET}", "value", &[]),
            ("a-${SET}-b", "a-value-b", &[]),
            ("${GH}", "ghp_secret", &[]), // vault secret when env lacks it
            ("${UNSET}", "${UNSET}", &["UNSET"]),
            ("${UNSET:-x}", "x", &[]),
            ("${EMPTY:-x}", "x", &[]),   // empty counts as unset
            ("${SET:-x}", "value", &[]), // env wins over the vault
            ("${UNSET:-}", "", &[]),
            ("${UNSET:-${B}}", "bee", &[]), // nested default
            ("${UNSET:-${NOPE}}", "${NOPE}", &["NOPE"]),
            ("${UNSET:-a${B}c}", "abeec", &[]),
            ("${env:SET}", "value", &[]),          // Cursor form
            ("${input:api}", "input-secret", &[]), // VS Code input from the vault
            ("${input:missing}", "${input:missing}", &["input:missing"]),
            ("${UNI}/x", "ключ🔑/x", &[]),
            ("é${SET}é", "évalueé", &[]),
            ("$$ $SET ${} ${1X} ${A B}", "$$ $SET ${} ${1X} ${A B}", &[]),
            ("${SET", "${SET", &[]),
            ("${UNSET} and ${UNSET}", "${UNSET} and ${UNSET}", &["UNSET"]),
        ];
        for (text, want, missing) in cases {
            let e = run(text);
            assert_eq!(e.text, *want, "{text}");
            assert_eq!(e.missing, *missing, "{text}");
        }
    }

    #[test]
    fn resolved_values_are_reported_for_redaction() {
        let e = run("--token=${GH} --x=${SET} ${GH}");
        assert_eq!(
            e.resolved,
            vec![
                ("GH".to_string(), "ghp_secret".to_string()),
                ("SET".to_string(), "value".to_string())
            ]
        );
        assert_eq!(cursor_to_plain("${env:A} ${B} $env:C"), "${A} ${B} $env:C");
    }
}
