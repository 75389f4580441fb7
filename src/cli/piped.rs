//! `echo context | tai -p "summarize"`: text piped to a one-turn run is appended to the
//! prompt as a fenced block, as `claude -p` and `gemini -p` do.
//!
//! The block is capped at `PIPED_MAX` (cut on a character boundary, with a note to the
//! model and on stderr). Reading stdin waits at most `PIPED_WAIT` for the writer to
//! finish and stops on Ctrl-C; a terminal on stdin is never read.

use std::io::{IsTerminal, Read};
use std::os::fd::AsFd;
use std::time::Duration;

use nix::poll::{PollFd, PollFlags, poll};

use crate::deadline::Deadline;
use crate::limits::PIPED_INTERRUPT_CHECK;
pub use crate::limits::{PIPED_MAX, PIPED_WAIT};

/// The prompt with the piped text appended (pure). `total` is how many bytes arrived (more
/// than `piped.len()` when the reader stopped at the cap); the second value is the note
/// shown on stderr when the text was cut.
pub fn append(prompt: &str, piped: &[u8], total: usize, cap: usize) -> (String, Option<String>) {
    let text = String::from_utf8_lossy(piped);
    if text.trim().is_empty() {
        return (prompt.to_string(), None);
    }
    let mut end = text.len().min(cap);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    let kept = &text[..end];
    let cut = end < text.len() || total > piped.len();
    // A fence longer than any run of backticks inside, so the block cannot be closed early.
    let longest = kept.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let fence = "`".repeat(longest.max(2) + 1);
    let mut s = format!("{prompt}\n\n{fence}text\n{}", kept.trim_end_matches('\n'));
    s.push_str(&format!("\n{fence}\n"));
    let note = cut.then(|| {
        format!(
            "the piped input was cut to its first {} KB ({total} bytes arrived)",
            cap / 1024
        )
    });
    if let Some(n) = &note {
        s.push_str(&format!("({n})\n"));
    }
    (s, note)
}

/// Stdin's text when it is a pipe or a file: at most `cap + 1` bytes, within `wait`,
/// stopping on Ctrl-C. Returns the bytes and how many arrived.
pub fn read_stdin(cap: usize, wait: Duration) -> std::io::Result<(Vec<u8>, usize)> {
    let stdin = std::io::stdin();
    if stdin.is_terminal() {
        return Ok((Vec::new(), 0));
    }
    let until = Deadline::after(wait);
    let mut data = Vec::new();
    let mut total = 0;
    let mut buf = [0u8; 16 * 1024];
    let mut lock = stdin.lock();
    loop {
        if until.expired() || crate::sigint::interrupted() {
            eprintln!("tai: note: stdin was still open; using what arrived");
            break;
        }
        let ready = {
            let mut fds = [PollFd::new(lock.as_fd(), PollFlags::POLLIN)];
            match poll(&mut fds, until.within(PIPED_INTERRUPT_CHECK).poll_timeout()) {
                Ok(n) => n > 0,
                Err(nix::errno::Errno::EINTR) => false,
                Err(e) => return Err(e.into()),
            }
        };
        if !ready {
            continue;
        }
        let n = match lock.read(&mut buf) {
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if n == 0 {
            break;
        }
        total += n;
        let room = (cap + 1).saturating_sub(data.len());
        data.extend_from_slice(&buf[..n.min(room)]);
    }
    Ok((data, total))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table() {
        let cases: &[(&str, &str, usize, &str, bool)] = &[
            // prompt, piped, cap, result, cut
            ("sum", "", 100, "sum", false),
            ("sum", " \n\n", 100, "sum", false),
            ("sum", "a\nb\n", 100, "sum\n\n```text\na\nb\n```\n", false),
            (
                "q",
                "has ``` inside",
                100,
                "q\n\n````text\nhas ``` inside\n````\n",
                false,
            ),
            (
                "q",
                "abcdef",
                4,
                "q\n\n```text\nabcd\n```\n(the piped input was cut to its first 0 KB (6 bytes arrived))\n",
                true,
            ),
            // a cut never splits a character
            (
                "q",
                "ééé",
                3,
                "q\n\n```text\né\n```\n(the piped input was cut to its first 0 KB (6 bytes arrived))\n",
                true,
            ),
        ];
        for (prompt, piped, cap, want, cut) in cases {
            let (got, note) = append(prompt, piped.as_bytes(), piped.len(), *cap);
            assert_eq!(got, *want, "{piped:?}");
            assert_eq!(note.is_some(), *cut, "{piped:?}");
        }
        // the reader stopped at the cap: more arrived than was kept
        let (got, note) = append("q", b"abc", 10_000, 1024);
        assert!(
            got.ends_with("(10000 bytes arrived))\n") && note.is_some(),
            "{got}"
        );
    }
}
