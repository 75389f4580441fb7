//! Approvals: one policy for running servers and (later) tool calls — asked on the
//! terminal, automatic with `--auto` (one line on stderr), silent with `--yolo`.

use std::io::{BufRead, BufReader, Write};

use crate::config::Approval;

/// Something that decides whether an action may go ahead.
pub trait Approver {
    /// `what` is one line naming the action; `detail` is shown before the question.
    fn approve(&mut self, what: &str, detail: &str) -> Result<bool, String>;

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
        match self.mode {
            Approval::Yolo => Ok(true),
            Approval::Auto => {
                eprintln!("tai: --auto approved: {what}");
                Ok(true)
            }
            Approval::Ask if self.always.contains(always_key(what)) => Ok(true),
            Approval::Ask => {
                let tty = std::fs::OpenOptions::new().read(true).write(true).open("/dev/tty").map_err(|_| {
                    format!("{what}: needs approval, and there is no terminal to ask on; rerun with --auto (approve, with a line) or --yolo")
                })?;
                let mut out = &tty;
                let _ = write!(
                    out,
                    "\n{detail}\n{what}? [y]es / [N]o / [a]lways this session: "
                );
                let _ = out.flush();
                let mut line = String::new();
                BufReader::new(&tty)
                    .read_line(&mut line)
                    .map_err(|e| e.to_string())?;
                match line.trim().to_ascii_lowercase().as_str() {
                    "y" | "yes" => Ok(true),
                    "a" | "always" => {
                        self.always.insert(always_key(what).to_string());
                        Ok(true)
                    }
                    _ => Ok(false),
                }
            }
        }
    }

    fn ask(&mut self, question: &str) -> Result<String, String> {
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
