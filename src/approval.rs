//! Approvals: one policy for running servers and (later) tool calls — asked on the
//! terminal, automatic with `--auto` (one line on stderr), silent with `--yolo`.

use std::io::{BufRead, BufReader, Write};

use crate::config::Approval;

/// Something that decides whether an action may go ahead.
pub trait Approver {
    /// `what` is one line naming the action; `detail` is shown before the question.
    fn approve(&mut self, what: &str, detail: &str) -> Result<bool, String>;

    /// Like `approve`, for an MCP tool call a person may also trust lastingly: `Ok((true,
    /// true))` when they answered "always (remember)" (`tai mcp trust`, kept in the vault).
    fn approve_or_remember(&mut self, what: &str, detail: &str) -> Result<(bool, bool), String> {
        self.approve(what, detail).map(|ok| (ok, false))
    }

    /// Ask the person a free-form question (`ask_user`); an error when nobody can answer.
    fn ask(&mut self, _question: &str) -> Result<String, String> {
        Err("there is no user to ask here; decide with what you have, or say what you need".into())
    }
}

/// The terminal policy for a mode. "always" answers hold for the rest of the session.
pub struct TerminalApprover {
    pub mode: Approval,
    always: std::collections::HashSet<String>,
}

impl TerminalApprover {
    pub fn new(mode: Approval) -> TerminalApprover {
        TerminalApprover {
            mode,
            always: Default::default(),
        }
    }
}

/// What an "always" answer covers: the action without its argument digest, so "run the
/// tool write_file (arguments …)" covers every later write_file call of the session.
fn always_key(what: &str) -> &str {
    what.split(" (arguments").next().unwrap_or(what)
}

impl Approver for TerminalApprover {
    fn approve(&mut self, what: &str, detail: &str) -> Result<bool, String> {
        self.decide(what, detail, false).map(|(ok, _)| ok)
    }

    fn approve_or_remember(&mut self, what: &str, detail: &str) -> Result<(bool, bool), String> {
        self.decide(what, detail, true)
    }

    fn ask(&mut self, question: &str) -> Result<String, String> {
        self.ask_line(question)
    }
}

impl TerminalApprover {
    /// The question on the terminal; `remember` offers "always (remember)" too.
    fn decide(&mut self, what: &str, detail: &str, remember: bool) -> Result<(bool, bool), String> {
        let ok = |b: bool| Ok((b, false));
        match self.mode {
            Approval::Yolo => ok(true),
            Approval::Auto => {
                eprintln!("tai: --auto approved: {what}");
                ok(true)
            }
            Approval::Ask if self.always.contains(always_key(what)) => ok(true),
            Approval::Ask => {
                let tty = std::fs::OpenOptions::new().read(true).write(true).open("/dev/tty").map_err(|_| {
                    format!("{what}: needs approval, and there is no terminal to ask on; rerun with --auto (approve, with a line) or --yolo")
                })?;
                let mut out = &tty;
                let choices = if remember {
                    "[y]es / [N]o / [a]lways this session / [r]emember: always (remember)"
                } else {
                    "[y]es / [N]o / [a]lways this session"
                };
                let _ = write!(out, "\n{detail}\n{what}? {choices}: ");
                let _ = out.flush();
                let mut line = String::new();
                BufReader::new(&tty)
                    .read_line(&mut line)
                    .map_err(|e| e.to_string())?;
                match line.trim().to_ascii_lowercase().as_str() {
                    "y" | "yes" => ok(true),
                    "a" | "always" => {
                        self.always.insert(always_key(what).to_string());
                        ok(true)
                    }
                    "r" | "remember" if remember => {
                        self.always.insert(always_key(what).to_string());
                        Ok((true, true))
                    }
                    _ => ok(false),
                }
            }
        }
    }

    fn ask_line(&mut self, question: &str) -> Result<String, String> {
        let tty = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open("/dev/tty")
            .map_err(|_| {
                "there is no terminal to ask the user on; decide with what you have".to_string()
            })?;
        let mut out = &tty;
        let _ = write!(out, "\n{question}\n> ");
        let _ = out.flush();
        let mut line = String::new();
        BufReader::new(&tty)
            .read_line(&mut line)
            .map_err(|e| e.to_string())?;
        Ok(line.trim_end().to_string())
    }
}
