//! The man page, made from the same text as `--help` (`help::TOPICS`): `tai man` prints
//! it and docs/tai.1 is a copy a test keeps in sync.

use super::VERSION;
use super::help::TOPICS;

/// Text as roff: backslashes escaped, a line starting with `.` or `'` kept literal.
fn roff(text: &str) -> String {
    let mut out = String::new();
    for line in text.lines() {
        let line = line.replace('\\', "\\e");
        if line.starts_with('.') || line.starts_with('\'') {
            out.push_str("\\&");
        }
        out.push_str(&line);
        out.push('\n');
    }
    out
}

/// The whole page (no date in it, so it is the same on every build of a version).
pub fn page() -> String {
    let mut s = format!(
        ".TH TAI 1 \"\" \"tai {VERSION}\" \"User Commands\"\n.SH NAME\ntai \\- a terminal AI agent with a complete MCP layer\n"
    );
    for (topic, text) in TOPICS {
        let title = if topic.is_empty() {
            "DESCRIPTION".to_string()
        } else {
            format!("TAI {}", topic.to_uppercase())
        };
        s.push_str(&format!(".SH \"{title}\"\n.nf\n{}.fi\n", roff(text)));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_topic_is_a_section_and_text_stays_literal() {
        let p = page();
        for (topic, _) in TOPICS.iter().filter(|(t, _)| !t.is_empty()) {
            let title = format!(".SH \"TAI {}\"", topic.to_uppercase());
            assert!(p.contains(&title), "{title}");
        }
        assert_eq!(roff(".x\n'y\na\\b\n"), "\\&.x\n\\&'y\na\\eb\n");
    }
}
