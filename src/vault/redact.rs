//! Secret redaction: every known secret value in a text becomes a marker naming it.
//!
//! Pure: the secrets are passed in. Occurrences of all secrets are found first (overlaps
//! included) and every covered byte is replaced, so no partial secret is ever left behind
//! when two secrets overlap or one sits inside another.

/// A named secret value to scrub.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Secret {
    pub name: String,
    pub value: String,
}

/// The marker that stands for the secrets `names` in redacted text.
pub fn marker(names: &[&str]) -> String {
    format!("[REDACTED:{}]", names.join(","))
}

/// Replace every occurrence of every secret value in `text` with a marker.
///
/// Overlapping or nested occurrences merge into one marker that names each secret whose
/// occurrence is not wholly inside a longer one; empty values are ignored.
pub fn redact(text: &str, secrets: &[Secret]) -> String {
    // (start, end, secret index) of every occurrence, overlapping ones included.
    let mut hits: Vec<(usize, usize, usize)> = Vec::new();
    for (i, s) in secrets.iter().enumerate() {
        let needle = s.value.as_str();
        if needle.is_empty() {
            continue;
        }
        let mut from = 0;
        while let Some(pos) = text[from..].find(needle) {
            let start = from + pos;
            hits.push((start, start + needle.len(), i));
            // Step one char, not one match, so overlapping occurrences are found too.
            from = start + text[start..].chars().next().map_or(1, char::len_utf8);
        }
    }
    if hits.is_empty() {
        return text.to_string();
    }
    // Longest first at each start, so a nested hit is seen after the one that holds it.
    hits.sort_by(|a, b| a.0.cmp(&b.0).then(b.1.cmp(&a.1)));

    let mut out = String::with_capacity(text.len());
    let mut copied = 0; // bytes of `text` already handled
    let mut i = 0;
    while i < hits.len() {
        let (start, mut end, first) = hits[i];
        let mut names: Vec<&str> = vec![&secrets[first].name];
        let mut j = i + 1;
        // Merge every hit that starts before the merged span ends.
        while j < hits.len() && hits[j].0 < end {
            let (_, e, k) = hits[j];
            if e > end {
                end = e;
                // It sticks out of the span so far: it is not wholly inside another.
                if !names.contains(&secrets[k].name.as_str()) {
                    names.push(&secrets[k].name);
                }
            }
            j += 1;
        }
        out.push_str(&text[copied..start]);
        out.push_str(&marker(&names));
        copied = end;
        i = j;
    }
    out.push_str(&text[copied..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(name: &str, value: &str) -> Secret {
        Secret {
            name: name.into(),
            value: value.into(),
        }
    }

    #[test]
    fn table() {
        let cases: &[(&str, &[Secret], &str)] = &[
            ("no secrets here", &[s("a", "xyz")], "no secrets here"),
            ("key=hunter2!", &[s("pw", "hunter2")], "key=[REDACTED:pw]!"),
            (
                "hunter2 and hunter2",
                &[s("pw", "hunter2")],
                "[REDACTED:pw] and [REDACTED:pw]",
            ),
            // one secret inside another: only the outer is named, nothing of either is left
            (
                "tok=sk-abc123-xyz",
                &[s("inner", "abc123"), s("outer", "sk-abc123-xyz")],
                "tok=[REDACTED:outer]",
            ),
            // overlapping secrets: the union is covered, both named
            (
                "abcdefghi",
                &[s("left", "abcdef"), s("right", "defghi")],
                "[REDACTED:left,right]",
            ),
            (
                "xxabcdefghiyy",
                &[s("right", "defghi"), s("left", "abcdef")],
                "xx[REDACTED:left,right]yy",
            ),
            // self-overlapping occurrences of one secret
            ("aaaa", &[s("aa", "aaa")], "[REDACTED:aa]"),
            // adjacent occurrences stay two markers
            ("abcabc", &[s("k", "abc")], "[REDACTED:k][REDACTED:k]"),
            // unicode around and inside the secret
            (
                "пароль=ключ🔑секрет, ok",
                &[s("u", "ключ🔑секрет")],
                "пароль=[REDACTED:u], ok",
            ),
            (
                "ééé",
                &[s("e", "é")],
                "[REDACTED:e][REDACTED:e][REDACTED:e]",
            ),
            // empty value never matches
            ("text", &[s("empty", "")], "text"),
            ("", &[s("a", "abc")], ""),
        ];
        for (text, secrets, want) in cases {
            assert_eq!(redact(text, secrets), *want, "redact({text:?})");
        }
    }

    #[test]
    fn no_partial_secret_survives() {
        let secrets = [s("a", "0123456789"), s("b", "56789abcde"), s("c", "cdefgh")];
        let text = "..0123456789abcdefgh..";
        let out = redact(text, &secrets);
        for sec in &secrets {
            for w in 3..=sec.value.len() {
                for part in sec.value.as_bytes().windows(w) {
                    let part = std::str::from_utf8(part).unwrap();
                    assert!(
                        !out.contains(part),
                        "{part:?} of {} survived in {out:?}",
                        sec.name
                    );
                }
            }
        }
        assert_eq!(out, "..[REDACTED:a,b,c]..");
    }
}
