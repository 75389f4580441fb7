//! The agent's own flags (`tai [-p PROMPT] [--model M] …`): its grammar.

use lexopt::prelude::*;

use super::{ChatArgs, Command, Parser, Result, Step, UsageError, string, unexpected};

impl Parser {
    /// The agent's flags; `first` is the one `top` already took (lexopt cannot push back).
    pub(super) fn chat_args(&mut self, first: Option<&'static str>) -> Result<Command> {
        let mut a = ChatArgs::default();
        let mut pending = first;
        loop {
            let flag = match pending.take() {
                Some(f) => f,
                None => match self.next()? {
                    Step::End => break,
                    Step::Help => return Ok(Command::Help("")),
                    Step::Arg(Short('p')) => "prompt",
                    Step::Arg(Long(l)) => l,
                    Step::Arg(a) => return Err(unexpected(a, "tai")),
                },
            };
            match flag {
                "prompt" => a.prompt = Some(string(self.inner.value()?, "-p")?),
                "continue" => a.resume = true,
                "json" => a.json = true,
                "max-steps" => {
                    let v = string(self.inner.value()?, "--max-steps")?;
                    a.max_steps = Some(v.parse().ok().filter(|n| *n > 0).ok_or_else(|| {
                        UsageError(format!("--max-steps needs a positive number, not '{v}'"))
                    })?);
                }
                other => {
                    return Err(UsageError(format!(
                        "unknown option '--{other}' (see 'tai --help')"
                    )));
                }
            }
        }
        if a.json && a.prompt.is_none() {
            return Err(UsageError(
                "--json goes with -p PROMPT (a one-turn run)".into(),
            ));
        }
        Ok(Command::Chat(a))
    }
}
