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

/// The terminal policy for a mode.
pub struct TerminalApprover {
    pub mode: Approval,
}

impl Approver for TerminalApprover {
    fn approve(&mut self, what: &str, detail: &str) -> Result<bool, String> {
        match self.mode {
            Approval::Yolo => Ok(true),
            Approval::Auto => {
                eprintln!("tai: --auto approved: {what}");
                Ok(true)
            }
            Approval::Ask => {
                let tty = std::fs::OpenOptions::new().read(true).write(true).open("/dev/tty").map_err(|_| {
                    format!("{what}: needs approval, and there is no terminal to ask on; rerun with --auto (approve, with a line) or --yolo")
                })?;
                let mut out = &tty;
                let _ = write!(out, "\n{detail}\n{what}? [y/N] ");
                let _ = out.flush();
                let mut line = String::new();
                BufReader::new(&tty)
                    .read_line(&mut line)
                    .map_err(|e| e.to_string())?;
                Ok(matches!(line.trim(), "y" | "Y" | "yes" | "Yes"))
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
