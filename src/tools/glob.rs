//! Glob patterns (pure): `*` within a path segment, `**` across segments, `?`, `[abc]`,
//! `[a-z]`, `[!x]`. Paths use `/`.

/// Whether `path` matches `pattern` in whole.
pub fn matches(pattern: &str, path: &str) -> bool {
    let p: Vec<&str> = pattern.split('/').filter(|s| !s.is_empty()).collect();
    let s: Vec<&str> = path.split('/').filter(|s| !s.is_empty()).collect();
    segments(&p, &s)
}

fn segments(p: &[&str], s: &[&str]) -> bool {
    match p.first() {
        None => s.is_empty(),
        Some(&"**") => (0..=s.len()).any(|skip| segments(&p[1..], &s[skip..])),
        Some(seg) => {
            !s.is_empty() && segment(seg.as_bytes(), s[0].as_bytes()) && segments(&p[1..], &s[1..])
        }
    }
}

/// One segment, with `*`, `?` and classes; backtracking over `*` only.
fn segment(p: &[u8], s: &[u8]) -> bool {
    let (mut pi, mut si) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while si < s.len() {
        if pi < p.len() {
            match p[pi] {
                b'*' => {
                    star = Some((pi, si));
                    pi += 1;
                    continue;
                }
                b'?' => {
                    pi += 1;
                    si += 1;
                    continue;
                }
                b'[' => {
                    if let Some((hit, next)) = class(&p[pi..], s[si])
                        && hit
                    {
                        pi += next;
                        si += 1;
                        continue;
                    }
                }
                c if c == s[si] => {
                    pi += 1;
                    si += 1;
                    continue;
                }
                _ => {}
            }
        }
        match star {
            Some((sp, ss)) => {
                pi = sp + 1;
                si = ss + 1;
                star = Some((sp, ss + 1));
            }
            None => return false,
        }
    }
    p[pi..].iter().all(|&c| c == b'*')
}

/// `[...]` at the start of `p`: whether `c` is in it, and the class's length.
fn class(p: &[u8], c: u8) -> Option<(bool, usize)> {
    let end = p.iter().skip(2).position(|&b| b == b']')? + 2;
    let body = &p[1..end];
    let (negate, body) = match body.first() {
        Some(b'!' | b'^') => (true, &body[1..]),
        _ => (false, body),
    };
    let mut hit = false;
    let mut i = 0;
    while i < body.len() {
        if i + 2 < body.len() && body[i + 1] == b'-' {
            hit |= (body[i]..=body[i + 2]).contains(&c);
            i += 3;
        } else {
            hit |= body[i] == c;
            i += 1;
        }
    }
    Some((hit != negate, end + 1))
}

#[cfg(test)]
mod tests {
    use super::matches;

    #[test]
    fn table() {
        let cases = [
            ("*.rs", "main.rs", true),
            ("*.rs", "src/main.rs", false),
            ("**/*.rs", "src/main.rs", true),
            ("**/*.rs", "main.rs", true),
            ("src/**/mod.rs", "src/a/b/mod.rs", true),
            ("src/**", "src/a/b", true),
            ("src/*/mod.rs", "src/a/b/mod.rs", false),
            ("?.txt", "a.txt", true),
            ("?.txt", "ab.txt", false),
            ("[ab]*.md", "beta.md", true),
            ("[!ab]*.md", "beta.md", false),
            ("[a-c].log", "c.log", true),
            ("[a-c].log", "d.log", false),
            ("*test*", "it_tests_here", true),
            ("Cargo.toml", "Cargo.toml", true),
            ("*.toml", "Cargo.lock", false),
        ];
        for (p, s, want) in cases {
            assert_eq!(matches(p, s), want, "{p} vs {s}");
        }
    }
}
