//! Approvals: one policy for running servers and tool calls — asked on the terminal,
//! automatic with `--auto` (one line on stderr), silent with `--yolo`.
//!
//! An "always" answer is remembered as an [`ApprovalKey`], never as the question's
//! display text: an MCP tool's key holds its pin, so a redefinition (a new pin) is asked
//! again. Every question and detail is shown through `sanitize`, so a command or argument
//! carrying `\r` or ANSI escapes cannot redraw the screen a person is deciding on.

use std::io::Write;

use crate::deadline::Deadline;
use crate::sanitize;

/// How tool calls that need approval are decided.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Approval {
    /// Ask on the terminal (deny when there is none).
    #[default]
    Ask,
    /// Approve, printing one line per call (`--auto`).
    Auto,
    /// Approve silently (`--yolo`).
    Yolo,
}

/// What an "always this session" answer covers.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum ApprovalKey {
    /// A one-off question (consent to run a server, removal): never remembered.
    Once,
    /// Every later call of a native tool.
    Tool(String),
    /// This exact shell command line.
    Shell(String),
    /// This exact URL.
    Fetch(String),
    /// One MCP tool *as pinned*: a redefinition has another pin, so another key.
    Mcp {
        server: String,
        tool: String,
        pin: String,
    },
}

/// Something that decides whether an action may go ahead.
pub trait Approver {
    /// A one-off question: `what` is one line naming the action; `detail` is shown before
    /// the question. An "always" answer is not remembered.
    fn approve(&mut self, what: &str, detail: &str) -> Result<bool, String>;

    /// A question whose "always" answer covers `key` for the rest of the session.
    fn approve_keyed(
        &mut self,
        _key: &ApprovalKey,
        what: &str,
        detail: &str,
    ) -> Result<bool, String> {
        self.approve(what, detail)
    }

    /// Like `approve_keyed`, for an MCP tool call a person may also trust lastingly:
    /// `Ok((true, true))` when they answered "remember" (`tai mcp trust`, kept in the
    /// vault, keyed on the pin).
    fn approve_or_remember(
        &mut self,
        key: &ApprovalKey,
        what: &str,
        detail: &str,
    ) -> Result<(bool, bool), String> {
        self.approve_keyed(key, what, detail).map(|ok| (ok, false))
    }

    /// Whether a person answers these questions (not `--auto`, `--yolo` or a served
    /// surface): some acts only a person may approve.
    fn person_present(&self) -> bool {
        false
    }

    /// Ask the person a free-form question (`ask_user`); an error when nobody can answer.
    fn ask(&mut self, _question: &str) -> Result<String, String> {
        Err("there is no user to ask here; decide with what you have, or say what you need".into())
    }
}

/// The "always" answers of a session, by key.
#[derive(Default, Debug)]
pub struct Remembered(std::collections::HashSet<ApprovalKey>);

impl Remembered {
    pub fn covers(&self, key: &ApprovalKey) -> bool {
        *key != ApprovalKey::Once && self.0.contains(key)
    }

    pub fn remember(&mut self, key: &ApprovalKey) {
        if *key != ApprovalKey::Once {
            self.0.insert(key.clone());
        }
    }
}

/// The terminal policy for a mode. "always" answers hold for the rest of the session.
pub struct TerminalApprover {
    pub mode: Approval,
    always: Remembered,
}

impl TerminalApprover {
    pub fn new(mode: Approval) -> TerminalApprover {
        TerminalApprover {
            mode,
            always: Remembered::default(),
        }
    }
}

fn open_tty() -> std::io::Result<std::fs::File> {
    std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open("/dev/tty")
}

/// Write `text` (already sanitized) to the terminal and read one answer line. The read
/// waits in short `poll(2)` rounds, so a Ctrl-C (which sets the flag; a blocking read
/// would be restarted) ends the question as a refusal.
fn prompt_tty(text: &str) -> Result<Option<String>, String> {
    use nix::poll::{PollFd, PollFlags, poll};
    use std::os::fd::AsFd;
    let Ok(tty) = open_tty() else {
        return Ok(None);
    };
    let mut out = &tty;
    let _ = write!(out, "{text}");
    let _ = out.flush();
    let mut line = Vec::new();
    let mut buf = [0u8; 1024];
    loop {
        if crate::sigint::interrupted() {
            let _ = writeln!(out);
            return Err("interrupted (Ctrl-C): not approved".into());
        }
        let mut fds = [PollFd::new(tty.as_fd(), PollFlags::POLLIN)];
        let check = Deadline::after(crate::limits::APPROVAL_INTERRUPT_CHECK);
        match poll(&mut fds, check.poll_timeout()) {
            Ok(0) | Err(_) => continue, // the clock or a signal: look at the flag again
            Ok(_) => {}
        }
        match nix::unistd::read(tty.as_fd(), &mut buf) {
            Ok(0) => break,
            Ok(n) => {
                line.extend_from_slice(&buf[..n]);
                if line.contains(&b'\n') {
                    break;
                }
            }
            Err(nix::errno::Errno::EINTR | nix::errno::Errno::EAGAIN) => {}
            Err(e) => return Err(e.to_string()),
        }
    }
    Ok(Some(String::from_utf8_lossy(&line).into_owned()))
}

/// The whole approval screen: the detail (multi-line, whole) and the question (one line),
/// both sanitized.
fn screen_with_choices(what: &str, detail: &str, always: bool, remember: bool) -> String {
    let detail = sanitize::block(detail);
    let what = sanitize::line(what);
    let choices = match (always, remember) {
        (true, true) => "[y]es / [N]o / [a]lways this session / [r]emember: always (remember)",
        (true, false) => "[y]es / [N]o / [a]lways this session",
        (false, _) => "[y]es / [N]o",
    };
    format!("\n{detail}\n{what}? {choices}: ")
}

impl Approver for TerminalApprover {
    fn person_present(&self) -> bool {
        self.mode == Approval::Ask
    }

    fn approve(&mut self, what: &str, detail: &str) -> Result<bool, String> {
        self.approve_keyed(&ApprovalKey::Once, what, detail)
    }

    fn approve_keyed(
        &mut self,
        key: &ApprovalKey,
        what: &str,
        detail: &str,
    ) -> Result<bool, String> {
        self.decide(key, what, detail, false).map(|(ok, _)| ok)
    }

    fn approve_or_remember(
        &mut self,
        key: &ApprovalKey,
        what: &str,
        detail: &str,
    ) -> Result<(bool, bool), String> {
        self.decide(key, what, detail, true)
    }

    fn ask(&mut self, question: &str) -> Result<String, String> {
        let text = format!("\n{}\n> ", sanitize::block(question));
        match prompt_tty(&text)? {
            Some(line) => Ok(line.trim_end().to_string()),
            None => {
                Err("there is no terminal to ask the user on; decide with what you have".into())
            }
        }
    }
}

impl TerminalApprover {
    /// The question on the terminal; `remember` offers a lasting "remember" too.
    fn decide(
        &mut self,
        key: &ApprovalKey,
        what: &str,
        detail: &str,
        remember: bool,
    ) -> Result<(bool, bool), String> {
        let ok = |b: bool| Ok((b, false));
        match self.mode {
            Approval::Yolo => ok(true),
            Approval::Auto => {
                eprintln!("tai: --auto approved: {}", sanitize::line(what));
                ok(true)
            }
            Approval::Ask if self.always.covers(key) => ok(true),
            Approval::Ask => {
                let always = *key != ApprovalKey::Once;
                let screen = screen_with_choices(what, detail, always, remember && always);
                let Some(line) = prompt_tty(&screen)? else {
                    return Err(format!(
                        "{}: needs approval, and there is no terminal to ask on; rerun with --auto (approve, with a line) or --yolo",
                        sanitize::line(what)
                    ));
                };
                match line.trim().to_ascii_lowercase().as_str() {
                    "y" | "yes" => ok(true),
                    "a" | "always" if always => {
                        self.always.remember(key);
                        ok(true)
                    }
                    "r" | "remember" if always && remember => {
                        self.always.remember(key);
                        Ok((true, true))
                    }
                    _ => ok(false),
                }
            }
        }
    }
}

/// Ask the person at the terminal directly — never a mode, never a model: for decisions
/// only a person may take (re-pinning a redefined MCP tool). `text` is shown sanitized
/// and whole. `None` when there is no terminal.
pub fn ask_person(text: &str, question: &str) -> Option<bool> {
    let screen = format!(
        "\n{}\n{}? [y]es / [N]o: ",
        sanitize::block(text),
        sanitize::line(question)
    );
    let line = prompt_tty(&screen).ok()??;
    Some(matches!(
        line.trim().to_ascii_lowercase().as_str(),
        "y" | "yes"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn always_is_keyed_on_the_pin_not_the_text() {
        let mut r = Remembered::default();
        let old = ApprovalKey::Mcp {
            server: "s".into(),
            tool: "echo".into(),
            pin: "aaaa".into(),
        };
        let redefined = ApprovalKey::Mcp {
            server: "s".into(),
            tool: "echo".into(),
            pin: "bbbb".into(),
        };
        r.remember(&old);
        assert!(r.covers(&old));
        assert!(!r.covers(&redefined), "a new pin is a new question");
        r.remember(&ApprovalKey::Once);
        assert!(
            !r.covers(&ApprovalKey::Once),
            "one-off questions are never remembered"
        );
        assert!(!r.covers(&ApprovalKey::Shell("ls -la".into())));
    }

    #[test]
    fn the_screen_shows_escapes_not_effects() {
        let s = screen_with_choices(
            "run `rm -rf ~\r\x1b[2Kls -la`",
            "{\"c\": \"\x1b[A\"}\nline two",
            true,
            false,
        );
        assert!(s.contains("run `rm -rf ~\\r\\e[2Kls -la`?"), "{s:?}");
        assert!(s.contains("{\"c\": \"\\e[A\"}\nline two"), "{s:?}");
        assert!(!s.contains('\x1b') && !s.contains('\r'));
    }
}
