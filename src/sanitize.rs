//! The one sanitizer for untrusted text shown to a person (pure).
//!
//! Commands, argv, env values, tool descriptions, drift diffs, tool results, model output
//! and server stderr come from models, MCP servers, pasted configs and READMEs: any of
//! them may carry `\r`, ANSI escapes (`\e[2K`, `\e[A`), bells, C1 controls or Unicode
//! bidi overrides that make a terminal redraw what a person is about to approve. Every
//! such character is shown visibly (`\r`, `\e`, `\x07`, `\u{202e}`), never interpreted.
//! [`line()`] is for one-line text (a question, a command, a name): newlines and tabs are
//! escaped too. [`block()`] is for multi-line text shown whole (a description, a result,
//! an answer): newlines and tabs stay, everything else is escaped. Nothing is truncated.
//! [`json_text()`] makes serialized JSON terminal-safe while keeping it the same JSON:
//! serde escapes only C0 controls, so DEL, C1 controls and bidi characters become
//! `\uXXXX` escapes.

/// Whether a character must not reach a terminal as itself: C0 and C1 controls, DEL,
/// and the invisible formatting characters that reorder or hide text.
fn is_hazard(c: char) -> bool {
    c.is_control()
        || matches!(c,
            '\u{200b}'..='\u{200f}'   // zero-width space/joiners, LRM/RLM
            | '\u{2028}' | '\u{2029}' // line and paragraph separators
            | '\u{202a}'..='\u{202e}' // bidi embeddings and overrides
            | '\u{2060}'..='\u{2064}' // word joiner, invisible operators
            | '\u{2066}'..='\u{2069}' // bidi isolates
            | '\u{feff}'              // zero-width no-break space
        )
}

/// The visible form of one hazardous character.
fn escape(c: char, out: &mut String) {
    match c {
        '\n' => out.push_str("\\n"),
        '\r' => out.push_str("\\r"),
        '\t' => out.push_str("\\t"),
        '\x1b' => out.push_str("\\e"),
        c if (c as u32) < 0x80 => out.push_str(&format!("\\x{:02x}", c as u32)),
        c => out.push_str(&format!("\\u{{{:x}}}", c as u32)),
    }
}

fn clean(text: &str, keep_lines: bool) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if keep_lines && (c == '\n' || c == '\t') {
            out.push(c);
        } else if is_hazard(c) {
            escape(c, &mut out);
        } else {
            out.push(c);
        }
    }
    out
}

/// One-line text for a person: every control and invisible formatting character,
/// newlines and tabs included, shown as an escape.
/// Serialized JSON with every hazardous character written as a JSON `\uXXXX` escape
/// (the document means the same; a terminal shows it inert).
pub fn json_text(json: &str) -> String {
    let mut out = String::with_capacity(json.len());
    for c in json.chars() {
        if is_hazard(c) && !matches!(c, '\n' | '\t') {
            let mut units = [0u16; 2];
            for u in c.encode_utf16(&mut units) {
                out.push_str(&format!("\\u{:04x}", u));
            }
        } else {
            out.push(c);
        }
    }
    out
}

pub fn line(text: &str) -> String {
    clean(text, false)
}

/// Multi-line text for a person, whole: newlines and tabs kept, every other control and
/// invisible formatting character shown as an escape.
pub fn block(text: &str) -> String {
    clean(text, true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sanitizer_table() {
        let cases: &[(&str, &str, &str)] = &[
            // (input, line, block)
            ("ls -la", "ls -la", "ls -la"),
            (
                "rm -rf ~\r\x1b[2Kls -la",
                "rm -rf ~\\r\\e[2Kls -la",
                "rm -rf ~\\r\\e[2Kls -la",
            ),
            ("a\x1b[Ab", "a\\e[Ab", "a\\e[Ab"),
            ("bell\x07", "bell\\x07", "bell\\x07"),
            ("two\nlines", "two\\nlines", "two\nlines"),
            ("tab\there", "tab\\there", "tab\there"),
            ("del\x7f", "del\\x7f", "del\\x7f"),
            ("csi\u{9b}2J", "csi\\u{9b}2J", "csi\\u{9b}2J"),
            (
                "evil\u{202e}txt.exe",
                "evil\\u{202e}txt.exe",
                "evil\\u{202e}txt.exe",
            ),
            (
                "zero\u{200b}width",
                "zero\\u{200b}width",
                "zero\\u{200b}width",
            ),
            ("bom\u{feff}", "bom\\u{feff}", "bom\\u{feff}"),
            ("größe ✓ 日本", "größe ✓ 日本", "größe ✓ 日本"),
            ("nul\0", "nul\\x00", "nul\\x00"),
            ("", "", ""),
        ];
        for (input, want_line, want_block) in cases {
            assert_eq!(line(input), *want_line, "line({input:?})");
            assert_eq!(block(input), *want_block, "block({input:?})");
        }
    }

    /// No output of either form contains a raw hazard (beyond block's newline and tab),
    /// whatever the input, and nothing is dropped: every input character is accounted for.
    #[test]
    fn nothing_hazardous_survives_any_char() {
        for cp in (0u32..0x3000).chain([0xfeff, 0x10ffff]) {
            let Some(c) = char::from_u32(cp) else {
                continue;
            };
            let input = format!("a{c}b");
            let l = line(&input);
            assert!(!l.chars().any(is_hazard), "line({cp:#x}) = {l:?}");
            let b = block(&input);
            assert!(
                !b.chars().any(|x| is_hazard(x) && x != '\n' && x != '\t'),
                "block({cp:#x}) = {b:?}"
            );
            assert!(l.starts_with('a') && l.ends_with('b') && l.len() >= input.len());
        }
    }

    #[test]
    fn json_text_keeps_the_document_and_shows_no_hazard() {
        let v = serde_json::json!({"name": "c1\u{9b}31mRED\u{202e}X\u{7f}", "n": "a\nb"});
        let text = json_text(&format!("{v:#}"));
        assert!(text.chars().all(|c| !is_hazard(c) || c == '\n'), "{text:?}");
        assert_eq!(serde_json::from_str::<serde_json::Value>(&text).unwrap(), v);
    }
}
