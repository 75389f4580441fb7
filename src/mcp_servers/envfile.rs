//! A dotenv file as VS Code's `envFile` names it: `KEY=VALUE` lines (pure).
//!
//! Blank lines and `#` comments are skipped; `export ` prefixes are allowed; a value in
//! double quotes takes `\n`, `\"` and `\\` escapes, in single quotes is literal, bare is
//! trimmed and ends at ` #`. No `${VAR}` expansion and no shell: the text is data.

/// The variables of a dotenv text, in order; a line that is not `KEY=VALUE` is an error
/// naming its line number.
pub fn parse(text: &str) -> Result<Vec<(String, String)>, String> {
    let mut out = Vec::new();
    for (n, raw) in text.lines().enumerate() {
        let line = raw.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let line = line.strip_prefix("export ").unwrap_or(line).trim_start();
        let Some((key, value)) = line.split_once('=') else {
            return Err(format!("line {}: expected KEY=VALUE", n + 1));
        };
        let key = key.trim();
        let valid = key
            .bytes()
            .next()
            .is_some_and(|b| b.is_ascii_alphabetic() || b == b'_')
            && key.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_');
        if !valid {
            return Err(format!("line {}: {key:?} is not a variable name", n + 1));
        }
        out.push((key.to_string(), value_of(value.trim(), n + 1)?));
    }
    Ok(out)
}

fn value_of(v: &str, line: usize) -> Result<String, String> {
    let unclosed = || format!("line {line}: the quoted value is not closed");
    if let Some(rest) = v.strip_prefix('"') {
        let mut s = String::new();
        let mut chars = rest.chars();
        while let Some(c) = chars.next() {
            match c {
                '"' => return Ok(s),
                '\\' => match chars.next() {
                    Some('n') => s.push('\n'),
                    Some(c) => s.push(c),
                    None => return Err(unclosed()),
                },
                c => s.push(c),
            }
        }
        return Err(unclosed());
    }
    if let Some(rest) = v.strip_prefix('\'') {
        return rest
            .find('\'')
            .map(|end| rest[..end].to_string())
            .ok_or_else(unclosed);
    }
    Ok(v.split(" #").next().unwrap_or("").trim_end().to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table() {
        let cases: &[(&str, &[(&str, &str)])] = &[
            ("", &[]),
            ("# only a comment\n\n", &[]),
            ("A=1", &[("A", "1")]),
            ("A = spaced  \nB=2", &[("A", "spaced"), ("B", "2")]),
            ("export TOKEN=abc", &[("TOKEN", "abc")]),
            ("A=x # note", &[("A", "x")]),
            ("A=x#y", &[("A", "x#y")]),
            ("A=\"two\\nlines \\\"q\\\"\"", &[("A", "two\nlines \"q\"")]),
            ("A='lit $HOME \\n'", &[("A", "lit $HOME \\n")]),
            ("A=", &[("A", "")]),
            ("URL=http://x/?a=b", &[("URL", "http://x/?a=b")]),
            ("A=${B}", &[("A", "${B}")]),
        ];
        for (text, want) in cases {
            let got = parse(text).unwrap_or_else(|e| panic!("{text:?}: {e}"));
            let want: Vec<(String, String)> = want
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect();
            assert_eq!(got, want, "{text:?}");
        }
    }

    #[test]
    fn bad_lines_name_their_number() {
        for (text, want) in [
            ("A=1\nnot a pair", "line 2: expected KEY=VALUE"),
            ("1A=x", "line 1: \"1A\" is not a variable name"),
            ("A=\"open", "line 1: the quoted value is not closed"),
            ("A='open", "line 1: the quoted value is not closed"),
        ] {
            assert_eq!(parse(text).unwrap_err(), want, "{text:?}");
        }
    }
}
