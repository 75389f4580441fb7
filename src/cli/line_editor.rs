//! The REPL's line editor, hand-written on nix termios (no crate, no thread): arrows,
//! Home/End, Ctrl-A/E/B/F/U/K/W, Backspace/Delete, Up/Down through history, Ctrl-C to
//! drop the line, Ctrl-D to leave on an empty line.
//!
//! Pure core: `decode` turns terminal bytes into keys (escape sequences may arrive split
//! across reads: `decode` says when it needs more), `Editor::key` applies a key to the
//! line. `read_line` is the only I/O: raw mode on the terminal, render, restore.

use std::io::{Read, Write};
use std::os::fd::AsFd;

use nix::sys::termios::{self, InputFlags, LocalFlags, SetArg};

/// One key press.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Key {
    Char(char),
    Enter,
    Backspace,
    Delete,
    Left,
    Right,
    Up,
    Down,
    Home,
    End,
    /// Ctrl-U: delete to the start.
    KillStart,
    /// Ctrl-K: delete to the end.
    KillEnd,
    /// Ctrl-W: delete the word before the cursor.
    KillWord,
    /// Ctrl-C: drop the line.
    Cancel,
    /// Ctrl-D: leave on an empty line, else delete under the cursor.
    Eof,
    /// A sequence tai does not use (ignored).
    Other,
}

/// The first key in `bytes` and how many bytes it took; `None` when `bytes` ends inside
/// a key (an escape sequence or a UTF-8 character cut by the read).
pub fn decode(bytes: &[u8]) -> Option<(Key, usize)> {
    let b = *bytes.first()?;
    let key = match b {
        b'\r' | b'\n' => Key::Enter,
        0x7f | 0x08 => Key::Backspace,
        0x01 => Key::Home,
        0x05 => Key::End,
        0x02 => Key::Left,
        0x06 => Key::Right,
        0x10 => Key::Up,
        0x0e => Key::Down,
        0x15 => Key::KillStart,
        0x0b => Key::KillEnd,
        0x17 => Key::KillWord,
        0x03 => Key::Cancel,
        0x04 => Key::Eof,
        0x1b => return escape(bytes),
        _ if b < 0x20 => Key::Other,
        _ => {
            let len = match b {
                0xc0..=0xdf => 2,
                0xe0..=0xef => 3,
                0xf0..=0xf7 => 4,
                _ => 1,
            };
            if bytes.len() < len {
                return None;
            }
            let key = std::str::from_utf8(&bytes[..len])
                .ok()
                .and_then(|s| s.chars().next())
                .map_or(Key::Other, Key::Char);
            return Some((key, len));
        }
    };
    Some((key, 1))
}

/// `ESC [ X`, `ESC O X`, `ESC [ N ~`; a lone ESC followed by anything else is Other.
fn escape(bytes: &[u8]) -> Option<(Key, usize)> {
    let second = *bytes.get(1)?;
    if second != b'[' && second != b'O' {
        return Some((Key::Other, 1));
    }
    // the final byte of a CSI sequence is in 0x40..=0x7e
    let end = bytes[2..].iter().position(|b| (0x40..=0x7e).contains(b))?;
    let body = &bytes[2..2 + end];
    let fin = bytes[2 + end];
    let key = match (body, fin) {
        (_, b'A') => Key::Up,
        (_, b'B') => Key::Down,
        (_, b'C') => Key::Right,
        (_, b'D') => Key::Left,
        (_, b'H') => Key::Home,
        (_, b'F') => Key::End,
        (b"1" | b"7", b'~') => Key::Home,
        (b"4" | b"8", b'~') => Key::End,
        (b"3", b'~') => Key::Delete,
        _ => Key::Other,
    };
    Some((key, 2 + end + 1))
}

/// What a key did to the line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Done {
    /// Keep editing.
    More,
    Line(String),
    /// Ctrl-C: an empty line, nothing sent.
    Cancelled,
    /// Ctrl-D on an empty line.
    Eof,
}

/// The line being edited, with a cursor and a way through the history.
#[derive(Clone, Debug, Default)]
pub struct Editor {
    pub line: Vec<char>,
    pub cursor: usize,
    history: Vec<String>,
    /// Where Up/Down stand in `history` (`history.len()`: the line being typed).
    at: usize,
    /// The line being typed, kept while browsing the history.
    typed: Vec<char>,
}

impl Editor {
    pub fn new(history: Vec<String>) -> Editor {
        Editor {
            at: history.len(),
            history,
            ..Editor::default()
        }
    }

    fn show(&mut self, chars: Vec<char>) {
        self.cursor = chars.len();
        self.line = chars;
    }

    pub fn key(&mut self, key: Key) -> Done {
        match key {
            Key::Char(c) => {
                self.line.insert(self.cursor, c);
                self.cursor += 1;
            }
            Key::Enter => return Done::Line(self.line.iter().collect()),
            Key::Backspace if self.cursor > 0 => {
                self.cursor -= 1;
                self.line.remove(self.cursor);
            }
            Key::Delete if self.cursor < self.line.len() => {
                self.line.remove(self.cursor);
            }
            Key::Eof if self.line.is_empty() => return Done::Eof,
            Key::Eof if self.cursor < self.line.len() => {
                self.line.remove(self.cursor);
            }
            Key::Left => self.cursor = self.cursor.saturating_sub(1),
            Key::Right => self.cursor = (self.cursor + 1).min(self.line.len()),
            Key::Home => self.cursor = 0,
            Key::End => self.cursor = self.line.len(),
            Key::KillStart => {
                self.line.drain(..self.cursor);
                self.cursor = 0;
            }
            Key::KillEnd => self.line.truncate(self.cursor),
            Key::KillWord => {
                let mut start = self.cursor;
                while start > 0 && self.line[start - 1] == ' ' {
                    start -= 1;
                }
                while start > 0 && self.line[start - 1] != ' ' {
                    start -= 1;
                }
                self.line.drain(start..self.cursor);
                self.cursor = start;
            }
            Key::Up if self.at > 0 => {
                if self.at == self.history.len() {
                    self.typed = self.line.clone();
                }
                self.at -= 1;
                self.show(self.history[self.at].chars().collect());
            }
            Key::Down if self.at < self.history.len() => {
                self.at += 1;
                let next = match self.history.get(self.at) {
                    Some(h) => h.chars().collect(),
                    None => std::mem::take(&mut self.typed),
                };
                self.show(next);
            }
            Key::Cancel => return Done::Cancelled,
            _ => {}
        }
        Done::More
    }
}

/// Control characters made visible, so a recalled line cannot drive the terminal.
fn visible(chars: &[char]) -> String {
    chars
        .iter()
        .map(|c| if c.is_control() { '?' } else { *c })
        .collect()
}

/// Read one line from the terminal with editing; `None` at Ctrl-D on an empty line,
/// `Some("")` when Ctrl-C dropped it.
pub fn read_line(prompt: &str, history: &[String]) -> std::io::Result<Option<String>> {
    let tty = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open("/dev/tty")?;
    let saved = termios::tcgetattr(tty.as_fd()).map_err(std::io::Error::from)?;
    let mut raw = saved.clone();
    raw.local_flags
        .remove(LocalFlags::ICANON | LocalFlags::ECHO | LocalFlags::ISIG | LocalFlags::IEXTEN);
    raw.input_flags.remove(InputFlags::ICRNL | InputFlags::IXON);
    termios::tcsetattr(tty.as_fd(), SetArg::TCSADRAIN, &raw).map_err(std::io::Error::from)?;
    let result = edit(&tty, prompt, history);
    let restored =
        termios::tcsetattr(tty.as_fd(), SetArg::TCSADRAIN, &saved).map_err(std::io::Error::from);
    let line = result?;
    restored?;
    Ok(line)
}

fn edit(tty: &std::fs::File, prompt: &str, history: &[String]) -> std::io::Result<Option<String>> {
    let mut ed = Editor::new(history.to_vec());
    let (mut out, mut input) = (tty, tty);
    // the prompt may start with blank lines; only its last line is redrawn
    let (head, last) = match prompt.rfind('\n') {
        Some(i) => (&prompt[..=i], &prompt[i + 1..]),
        None => ("", prompt),
    };
    out.write_all(head.replace('\n', "\r\n").as_bytes())?;
    let mut pending: Vec<u8> = Vec::new();
    let mut buf = [0u8; 256];
    loop {
        let shown = visible(&ed.line);
        let back = ed.line.len() - ed.cursor;
        let mut frame = format!("\r{last}{shown}\x1b[K");
        if back > 0 {
            frame.push_str(&format!("\x1b[{back}D"));
        }
        out.write_all(frame.as_bytes())?;
        out.flush()?;
        let n = match input.read(&mut buf) {
            Ok(0) => return Ok(None),
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        pending.extend_from_slice(&buf[..n]);
        while let Some((key, used)) = decode(&pending) {
            pending.drain(..used);
            match ed.key(key) {
                Done::More => {}
                Done::Line(l) => {
                    out.write_all(b"\r\n")?;
                    return Ok(Some(l));
                }
                Done::Cancelled => {
                    crate::sigint::press();
                    out.write_all(b"^C\r\n")?;
                    return Ok(Some(String::new()));
                }
                Done::Eof => {
                    out.write_all(b"\r\n")?;
                    return Ok(None);
                }
            }
        }
        // a lone ESC with nothing after it in this read is not waited on forever
        if pending == [0x1b] && n == 1 {
            pending.clear();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every key from a byte stream, fed in pieces split at `cut`.
    fn keys_split(bytes: &[u8], cut: usize) -> Vec<Key> {
        let mut pending = Vec::new();
        let mut out = Vec::new();
        for part in [&bytes[..cut], &bytes[cut..]] {
            pending.extend_from_slice(part);
            while let Some((k, used)) = decode(&pending) {
                pending.drain(..used);
                out.push(k);
            }
        }
        assert!(pending.is_empty(), "left over: {pending:?}");
        out
    }

    #[test]
    fn decode_table_at_every_split() {
        let cases: &[(&[u8], &[Key])] = &[
            (b"ab", &[Key::Char('a'), Key::Char('b')]),
            (b"\x1b[D\x1b[C", &[Key::Left, Key::Right]),
            (b"\x1b[A\x1b[B", &[Key::Up, Key::Down]),
            (b"\x1bOH\x1bOF", &[Key::Home, Key::End]),
            (b"\x1b[3~x", &[Key::Delete, Key::Char('x')]),
            (b"\x1b[1;5D", &[Key::Left]),
            (b"\x1b[200~", &[Key::Other]),
            ("é🔑".as_bytes(), &[Key::Char('é'), Key::Char('🔑')]),
            (b"\x7f\r", &[Key::Backspace, Key::Enter]),
            (
                b"\x01\x05\x15\x0b\x17\x03\x04",
                &[
                    Key::Home,
                    Key::End,
                    Key::KillStart,
                    Key::KillEnd,
                    Key::KillWord,
                    Key::Cancel,
                    Key::Eof,
                ],
            ),
        ];
        for (bytes, want) in cases {
            for cut in 0..=bytes.len() {
                assert_eq!(keys_split(bytes, cut), *want, "{bytes:?} cut at {cut}");
            }
        }
    }

    fn typed(ed: &mut Editor, keys: Vec<Key>) -> Done {
        let mut last = Done::More;
        for k in keys {
            last = ed.key(k);
        }
        last
    }

    fn chars(s: &str) -> Vec<Key> {
        s.chars().map(Key::Char).collect()
    }

    #[test]
    fn editing_table() {
        use Key::*;
        let cases: Vec<(Vec<Key>, &str)> = vec![
            ([chars("helo"), vec![Left], chars("l")].concat(), "hello"),
            ([chars("abc"), vec![Home], chars("x")].concat(), "xabc"),
            ([chars("abc"), vec![Home, Right, Delete]].concat(), "ac"),
            ([chars("abc"), vec![Backspace, Backspace]].concat(), "a"),
            (
                [chars("one two three"), vec![KillWord]].concat(),
                "one two ",
            ),
            (
                [chars("one two"), vec![Left, Left, KillEnd]].concat(),
                "one t",
            ),
            (
                [chars("one two"), vec![Left, Left, KillStart]].concat(),
                "wo",
            ),
            ([vec![Backspace, Left, Delete], chars("ok")].concat(), "ok"),
            (
                [chars("ab"), vec![Left, Left, Left, End], chars("c")].concat(),
                "abc",
            ),
        ];
        for (keys, want) in cases {
            let mut ed = Editor::new(Vec::new());
            typed(&mut ed, keys.clone());
            assert_eq!(ed.key(Enter), Done::Line(want.to_string()), "{keys:?}");
        }
    }

    #[test]
    fn history_up_and_down_keep_the_typed_line() {
        use Key::*;
        let mut ed = Editor::new(vec!["first".into(), "second".into()]);
        typed(&mut ed, chars("draft"));
        typed(&mut ed, vec![Up]);
        assert_eq!(ed.line.iter().collect::<String>(), "second");
        typed(&mut ed, vec![Up, Up]);
        assert_eq!(ed.line.iter().collect::<String>(), "first");
        typed(&mut ed, vec![Down, Down]);
        assert_eq!(ed.line.iter().collect::<String>(), "draft");
        assert_eq!(ed.key(Enter), Done::Line("draft".into()));
        let mut ed = Editor::new(Vec::new());
        assert_eq!(ed.key(Eof), Done::Eof);
        typed(&mut ed, chars("x"));
        assert_eq!(ed.key(Cancel), Done::Cancelled);
        assert_eq!(visible(&['a', '\x1b', 'b']), "a?b");
    }
}
