//! Secret redaction: every known secret value in a text becomes a marker naming it.
//!
//! Pure: the secrets are passed in. Each value is looked for, without regard to ASCII
//! case, raw and in the encodings a server may hand it back in: JSON-escaped (once,
//! twice, with `\/`), `\uXXXX` escapes, percent-encoding and base64 (see `forms`). A
//! model that transforms what it reads (`tr a-z b-za`) is not stopped by redaction: the
//! sources are guarded instead (`tools::protected`). Occurrences of all patterns are found in one pass over the
//! original text (overlaps included) and every covered byte is replaced, so no partial
//! secret is left behind when two secrets overlap or one sits inside another. A marker
//! already in the text (one naming known secrets) is never redacted again, and values
//! shorter than `MIN_SECRET_CHARS` are not patterns: `k` or `ollama` would scrub
//! ordinary words.
//!
//! `RedactionSet` is the set a process holds: built once, updated as secrets become known
//! or change, asked to redact text bound for the model, a terminal or the disk.

/// Values shorter than this (in characters) are not credentials and are not redacted.
pub const MIN_SECRET_CHARS: usize = 8;

/// A named secret value to scrub.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret {
    pub name: String,
    pub value: String,
}

impl std::fmt::Debug for Secret {
    /// The name only: a secret value never reaches a debug print.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Secret({:?})", self.name)
    }
}

/// Whether a value is too short to be used as a redaction pattern.
pub fn too_short(value: &str) -> bool {
    value.chars().count() < MIN_SECRET_CHARS
}

/// The marker that stands for the secrets `names` in redacted text.
pub fn marker(names: &[&str]) -> String {
    format!("[REDACTED:{}]", names.join(","))
}

/// The forms a value takes in text, matched without regard to ASCII case: raw,
/// JSON-escaped (once, twice, and with `\/`), every character as a `\uXXXX` escape,
/// percent-encoded, and base64 (standard and URL alphabets, at each of the three
/// alignments a value can have inside a longer encoded text). Distinct forms only; a
/// derived form shorter than `MIN_SECRET_CHARS` is not used.
fn forms(value: &str) -> Vec<String> {
    let escape = |v: &str| {
        let quoted = serde_json::Value::String(v.to_string()).to_string();
        quoted[1..quoted.len() - 1].to_string()
    };
    let once = escape(value);
    let twice = escape(&once);
    let slashed = once.replace('/', "\\/");
    let unicode: String = value
        .encode_utf16()
        .map(|u| format!("\\u{u:04x}"))
        .collect();
    let percent: String = value
        .bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02x}"),
        })
        .collect();
    let mut out = vec![value.to_string()];
    let mut derived = vec![once, twice, slashed, unicode, percent];
    derived.extend(base64_forms(value.as_bytes()));
    for f in derived {
        if f.chars().count() >= MIN_SECRET_CHARS && !out.contains(&f) {
            out.push(f);
        }
    }
    for f in &mut out {
        f.make_ascii_lowercase();
    }
    out.dedup();
    out
}

/// The base64 text that stands for `value` wherever it sits in a longer encoded text:
/// for each alignment, the groups that hold only the value's bits.
fn base64_forms(value: &[u8]) -> Vec<String> {
    use crate::base64::{Alphabet, encode};
    let mut out = Vec::new();
    for shift in 0..3usize {
        let mut bytes = vec![0u8; shift];
        bytes.extend_from_slice(value);
        // Whole groups only: a partial last group depends on what follows the value.
        let whole = bytes.len() / 3 * 3;
        // The first group mixes in the zeros of the alignment.
        let skip = if shift == 0 { 0 } else { 4 };
        for alphabet in [Alphabet::Url, Alphabet::Standard] {
            let text = encode(&bytes[..whole], alphabet, false);
            out.push(text.get(skip..).unwrap_or("").to_string());
        }
    }
    out
}

/// Spans of markers already in `text` whose every name is one of `names`.
fn marker_spans(text: &str, names: &[&str]) -> Vec<(usize, usize)> {
    const OPEN: &str = "[REDACTED:";
    let mut spans = Vec::new();
    // Most texts hold no marker: a byte scan is cheaper than building a substring searcher.
    if !text.as_bytes().contains(&b'[') {
        return spans;
    }
    let mut from = 0;
    while let Some(pos) = text[from..].find(OPEN) {
        let start = from + pos;
        let inner_start = start + OPEN.len();
        from = inner_start;
        let Some(len) = text[inner_start..].find(']') else {
            break;
        };
        let inner = &text[inner_start..inner_start + len];
        if !inner.is_empty() && inner.split(',').all(|n| names.contains(&n)) {
            spans.push((start, inner_start + len + 1));
            from = inner_start + len + 1;
        }
    }
    spans
}

/// Replace every occurrence of every secret value (raw or JSON-escaped) in `text` with a
/// marker, in one pass.
///
/// Overlapping or nested occurrences merge into one marker that names each secret whose
/// occurrence is not wholly inside a longer one; values under `MIN_SECRET_CHARS` are
/// ignored; occurrences inside a marker naming known secrets are left alone.
pub fn redact(text: &str, secrets: &[Secret]) -> String {
    redact_with(text, secrets, &patterns(secrets))
}

/// `(pattern, secret index)`: every form of every secret long enough to be one.
fn patterns(secrets: &[Secret]) -> Vec<(String, usize)> {
    secrets
        .iter()
        .enumerate()
        .filter(|(_, s)| !too_short(&s.value))
        .flat_map(|(i, s)| forms(&s.value).into_iter().map(move |f| (f, i)))
        .collect()
}

fn redact_with(text: &str, secrets: &[Secret], patterns: &[(String, usize)]) -> String {
    let names: Vec<&str> = secrets.iter().map(|s| s.name.as_str()).collect();
    let markers = marker_spans(text, &names);
    // Patterns are lower case; ASCII lower-casing keeps every byte offset.
    let folded = text.to_ascii_lowercase();
    // (start, end, secret index) of every occurrence, overlapping ones included.
    let mut hits: Vec<(usize, usize, usize)> = Vec::new();
    let hay = folded.as_bytes();
    for (needle, i) in patterns {
        // Building a substring searcher costs more than scanning a short text (it was the
        // largest user-space cost of a served call after SQLite): a pattern longer than
        // the text, or whose first byte is not in it, cannot occur and is skipped.
        let fits = needle.len() <= hay.len();
        if !fits || !needle.as_bytes().first().is_some_and(|b| hay.contains(b)) {
            continue;
        }
        let mut from = 0;
        while let Some(pos) = folded[from..].find(needle.as_str()) {
            let start = from + pos;
            let end = start + needle.len();
            if !markers.iter().any(|&(a, b)| a <= start && end <= b) {
                hits.push((start, end, *i));
            }
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

/// The redaction set one process holds. Callers add values as they become known (vault
/// secrets, `${VAR}` values, the API key, the passphrase, the server key, stored literal
/// env and header values); a value is held once, under the first name it was added with.
#[derive(Clone, Default)]
pub struct RedactionSet {
    secrets: Vec<Secret>,
    /// Every form of every secret, computed once as values are added.
    patterns: Vec<(String, usize)>,
}

impl std::fmt::Debug for RedactionSet {
    /// Names only: a value (or a form of one) never reaches a debug print.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list()
            .entries(self.secrets.iter().map(|s| &s.name))
            .finish()
    }
}

impl RedactionSet {
    /// Add a value; empty and too-short values are not held. Returns whether it was added.
    pub fn add(&mut self, name: &str, value: &str) -> bool {
        if too_short(value) || self.secrets.iter().any(|s| s.value == value) {
            return false;
        }
        let index = self.secrets.len();
        self.patterns
            .extend(forms(value).into_iter().map(|f| (f, index)));
        self.secrets.push(Secret {
            name: name.into(),
            value: value.into(),
        });
        true
    }

    /// Drop every value held under `name`.
    pub fn remove(&mut self, name: &str) {
        self.secrets.retain(|s| s.name != name);
        self.patterns = patterns(&self.secrets);
    }

    /// Every held value (for keeping them out of child environments).
    pub fn values(&self) -> Vec<&str> {
        self.secrets.iter().map(|s| s.value.as_str()).collect()
    }

    pub fn len(&self) -> usize {
        self.secrets.len()
    }

    pub fn is_empty(&self) -> bool {
        self.secrets.is_empty()
    }

    /// `text` with every held value replaced by a marker.
    pub fn redact(&self, text: &str) -> String {
        redact_with(text, &self.secrets, &self.patterns)
    }
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
            ("no secrets here", &[s("a", "xyzxyzxyz")], "no secrets here"),
            (
                "key=hunter2hunter2!",
                &[s("pw", "hunter2hunter2")],
                "key=[REDACTED:pw]!",
            ),
            (
                "hunter2hunter2 and hunter2hunter2",
                &[s("pw", "hunter2hunter2")],
                "[REDACTED:pw] and [REDACTED:pw]",
            ),
            // one secret inside another: only the outer is named, nothing of either is left
            (
                "tok=sk-abc12345-xyz",
                &[s("inner", "abc12345"), s("outer", "sk-abc12345-xyz")],
                "tok=[REDACTED:outer]",
            ),
            // overlapping secrets: the union is covered, both named
            (
                "abcdefghijkl",
                &[s("left", "abcdefghi"), s("right", "defghijkl")],
                "[REDACTED:left,right]",
            ),
            (
                "xxabcdefghijklyy",
                &[s("right", "defghijkl"), s("left", "abcdefghi")],
                "xx[REDACTED:left,right]yy",
            ),
            // self-overlapping occurrences of one secret
            ("aaaaaaaaaa", &[s("aa", "aaaaaaaaa")], "[REDACTED:aa]"),
            // adjacent occurrences stay two markers
            (
                "abcabcababcabcab",
                &[s("k", "abcabcab")],
                "[REDACTED:k][REDACTED:k]",
            ),
            // unicode around and inside the secret
            (
                "пароль=ключ🔑секрет, ok",
                &[s("u", "ключ🔑секрет")],
                "пароль=[REDACTED:u], ok",
            ),
            // the JSON-escaped form, and the form escaped twice
            (
                r#"{"out":"pa\"ss\\word"}"#,
                &[s("q", "pa\"ss\\word")],
                r#"{"out":"[REDACTED:q]"}"#,
            ),
            (
                r#"{"out":"{\"v\":\"pa\\\"ss\\\\word\"}"}"#,
                &[s("q", "pa\"ss\\word")],
                r#"{"out":"{\"v\":\"[REDACTED:q]\"}"}"#,
            ),
            ("tab\tinside", &[s("t", "tab\tinside")], "[REDACTED:t]"),
            (
                r#""tab\tinside""#,
                &[s("t", "tab\tinside")],
                r#""[REDACTED:t]""#,
            ),
            // too short to be a credential: never a pattern
            ("day_of_week", &[s("api-key", "k")], "day_of_week"),
            ("use ollama", &[s("api-key", "ollama")], "use ollama"),
            ("text", &[s("empty", "")], "text"),
            ("", &[s("a", "abcdefghi")], ""),
            // a marker naming a known secret is never redacted again
            (
                "[REDACTED:api-key-long] and api-key-long",
                &[s("api-key-long", "api-key-long")],
                "[REDACTED:api-key-long] and [REDACTED:api-key-long]",
            ),
            // a look-alike marker naming no known secret does not shelter a value
            (
                "[REDACTED:x sk-secret-1]",
                &[s("k", "sk-secret-1")],
                "[REDACTED:x [REDACTED:k]]",
            ),
        ];
        for (text, secrets, want) in cases {
            assert_eq!(redact(text, secrets), *want, "redact({text:?})");
        }
    }

    /// The encodings a hostile server might hand back instead of the raw value.
    #[test]
    fn encoded_forms_are_redacted() {
        let secret = "ghp_ab/cd+ef\"gh";
        let set = [s("gh", secret)];
        let b64 = |prefix: &str| {
            // standard base64 of prefix + secret + suffix, by hand-free reference: the
            // encoder above checked against known vectors in `base64_vectors`.
            let mut bytes = prefix.as_bytes().to_vec();
            bytes.extend_from_slice(secret.as_bytes());
            bytes.extend_from_slice(b"--tail--");
            encode(&bytes)
        };
        let json_slash = serde_json::Value::String(secret.into())
            .to_string()
            .replace('/', "\\/");
        let unicode: String = secret
            .encode_utf16()
            .map(|u| format!("\\u{u:04X}"))
            .collect();
        let cases = [
            secret.to_uppercase(),
            json_slash,
            unicode,
            "ghp_ab%2Fcd%2Bef%22gh".to_string(),
            "GHP_AB%2fCD%2bEF%22GH".to_string(),
            b64(""),
            b64("x"),
            b64("xy"),
            b64("xy").replace('+', "-").replace('/', "_"),
        ];
        for text in cases {
            let out = redact(&format!("before {text} after"), &set);
            assert!(out.contains("[REDACTED:gh]"), "{text} -> {out}");
        }
        assert_eq!(redact("nothing here at all", &set), "nothing here at all");
    }

    /// Standard base64 of a whole text (for the test above).
    fn encode(bytes: &[u8]) -> String {
        let mut out = base64_forms(bytes).swap_remove(1);
        let rest = bytes.len() % 3;
        if rest > 0 {
            // the tail is not needed by the tests: pad with a marker the secret lacks
            out.push_str(&"=".repeat(3 - rest));
        }
        out
    }

    #[test]
    fn base64_vectors() {
        assert_eq!(base64_forms(b"foobar")[1], "Zm9vYmFy");
        assert_eq!(base64_forms(b"Man")[1], "TWFu");
        // "Zm9vTWFu" is base64 of "fooMan": "Man" at alignment 0 is its second group.
        assert!("Zm9vTWFu".contains(&base64_forms(b"Man")[1]));
    }

    #[test]
    fn redacting_twice_changes_nothing() {
        // a secret whose name is its value: its marker holds the value again
        let set = [s("tokenvalue1", "tokenvalue1"), s("tok", "token-123456")];
        let once = redact("a token-123456 tokenvalue1 b", &set);
        assert_eq!(once, "a [REDACTED:tok] [REDACTED:tokenvalue1] b");
        assert_eq!(redact(&once, &set), once);
    }

    #[test]
    fn every_split_of_a_secret_in_text() {
        // The secret at every position of a longer text, with a JSON-escaped twin.
        let secret = "q\"uo\\te-secret";
        let set = [s("k", secret)];
        let escaped = &serde_json::Value::String(secret.into()).to_string();
        let escaped = &escaped[1..escaped.len() - 1];
        for form in [secret, escaped] {
            for at in 0..=10 {
                let text = format!("{}{form}{}", &"0123456789"[..at], &"abcdefghij"[at..]);
                let out = redact(&text, &set);
                assert_eq!(
                    out,
                    format!("{}[REDACTED:k]{}", &"0123456789"[..at], &"abcdefghij"[at..])
                );
            }
        }
    }

    #[test]
    fn no_partial_secret_survives() {
        let secrets = [
            s("a", "0123456789"),
            s("b", "56789abcde"),
            s("c", "cdefghijkl"),
        ];
        let text = "..0123456789abcdefghijkl..";
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

    #[test]
    fn the_set_holds_each_value_once_and_skips_short_ones() {
        let mut set = RedactionSet::default();
        assert!(set.add("api-key", "sk-0123456789"));
        assert!(!set.add("again", "sk-0123456789"));
        assert!(!set.add("short", "k"));
        assert!(set.add("pw", "hunter2hunter2"));
        assert_eq!(set.len(), 2);
        assert_eq!(
            set.redact("sk-0123456789 hunter2hunter2 k"),
            "[REDACTED:api-key] [REDACTED:pw] k"
        );
        set.remove("pw");
        assert_eq!(set.values(), ["sk-0123456789"]);
        assert!(format!("{:?}", set).contains("api-key"));
        assert!(!format!("{:?}", set).contains("0123456789"));
        // removing rebuilds the patterns: the value is no longer matched
        set.remove("api-key");
        assert_eq!(set.redact("sk-0123456789"), "sk-0123456789");
    }
}
