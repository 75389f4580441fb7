//! Splitting a command line into words (pure), as a person types one: whitespace
//! separates, quotes group, backslash escapes. No expansion and no shell: used for pasted
//! command lines (the normalizer, the resolver) and `TAI_OAUTH_BROWSER`.

/// Split a command line into words: whitespace separates, '…' and "…" quote, backslash
/// escapes outside single quotes. No expansion of any kind; no shell is involved.
pub fn split_words(text: &str) -> Result<Vec<String>, String> {
    let mut words = Vec::new();
    let mut cur = String::new();
    let mut in_word = false;
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        match c {
            c if c.is_whitespace() => {
                if in_word {
                    words.push(std::mem::take(&mut cur));
                    in_word = false;
                }
            }
            '\'' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('\'') => break,
                        Some(c) => cur.push(c),
                        None => return Err("unclosed ' in the command line".into()),
                    }
                }
            }
            '"' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('"') => break,
                        Some('\\') => match chars.next() {
                            Some(c @ ('"' | '\\')) => cur.push(c),
                            Some(c) => {
                                cur.push('\\');
                                cur.push(c);
                            }
                            None => return Err("unclosed \" in the command line".into()),
                        },
                        Some(c) => cur.push(c),
                        None => return Err("unclosed \" in the command line".into()),
                    }
                }
            }
            '\\' => {
                in_word = true;
                cur.push(chars.next().ok_or("a trailing \\ in the command line")?);
            }
            c => {
                in_word = true;
                cur.push(c);
            }
        }
    }
    if in_word {
        words.push(cur);
    }
    if words.is_empty() {
        return Err("an empty command line".into());
    }
    Ok(words)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words() {
        let table: &[(&str, &[&str])] = &[
            (
                "npx -y @modelcontextprotocol/server-everything",
                &["npx", "-y", "@modelcontextprotocol/server-everything"],
            ),
            ("  a   b\tc ", &["a", "b", "c"]),
            (
                "python3 -c 'print(\"hi\")'",
                &["python3", "-c", "print(\"hi\")"],
            ),
            (r#"echo "a \"q\" b" it\'s"#, &["echo", "a \"q\" b", "it's"]),
            ("x ''", &["x", ""]),
            ("$HOME ~ *", &["$HOME", "~", "*"]),
        ];
        for (text, want) in table {
            assert_eq!(split_words(text).unwrap(), *want, "{text}");
        }
        for bad in ["", "   ", "a 'b", "a \"b", "a \\"] {
            assert!(split_words(bad).is_err(), "{bad:?}");
        }
    }
}
