//! `tai profile list|add|set|use|remove`: its grammar.

use lexopt::prelude::*;

use super::{Command, Parser, ProfileCmd, Result, Step, UsageError, string, unexpected};

impl Parser {
    pub(super) fn profile(&mut self) -> Result<Command> {
        let sub = match self.positional("a subcommand: list, add, set, use or remove", "profile")? {
            Ok(s) => s,
            Err(t) => return Ok(Command::Help(t)),
        };
        let cmd = match sub.as_str() {
            "list" => match self.json_only("profile")? {
                Ok(json) => ProfileCmd::List { json },
                Err(t) => return Ok(Command::Help(t)),
            },
            "add" => {
                let Ok(name) = self.positional("a profile NAME", "profile")? else {
                    return Ok(Command::Help("profile"));
                };
                let (mut model, mut base_url, mut api_key_secret) = (None, None, None);
                loop {
                    match self.next()? {
                        Step::End => break,
                        Step::Help => return Ok(Command::Help("profile")),
                        Step::Arg(Long("model")) => {
                            model = Some(string(self.inner.value()?, "--model")?)
                        }
                        Step::Arg(Long("base-url")) => {
                            base_url = Some(string(self.inner.value()?, "--base-url")?)
                        }
                        Step::Arg(Long("api-key-secret")) => {
                            api_key_secret = Some(string(self.inner.value()?, "--api-key-secret")?)
                        }
                        Step::Arg(a) => return Err(unexpected(a, "profile add")),
                    }
                }
                ProfileCmd::Add {
                    name,
                    model,
                    base_url,
                    api_key_secret,
                }
            }
            "set" => {
                let mut words = Vec::new();
                for what in [
                    "a profile NAME",
                    "a KEY (model, base_url, api_key_secret)",
                    "a VALUE",
                ] {
                    match self.positional(what, "profile")? {
                        Ok(w) => words.push(w),
                        Err(t) => return Ok(Command::Help(t)),
                    }
                }
                let value = words.pop().unwrap_or_default();
                let key = words.pop().unwrap_or_default().replace('-', "_");
                let name = words.pop().unwrap_or_default();
                crate::vault::check_name("profile", &name)
                    .map_err(|e| UsageError(e.to_string()))?;
                if !matches!(key.as_str(), "model" | "base_url" | "api_key_secret") {
                    return Err(UsageError(format!(
                        "a profile has no setting '{key}' (model, base_url, api_key_secret)"
                    )));
                }
                return self.done(Command::Profile(ProfileCmd::Set { name, key, value }));
            }
            "use" | "remove" | "rm" => {
                let Ok(name) = self.positional("a profile NAME", "profile")? else {
                    return Ok(Command::Help("profile"));
                };
                let cmd = if sub == "use" {
                    ProfileCmd::Use { name }
                } else {
                    ProfileCmd::Remove { name }
                };
                return self.done(Command::Profile(cmd));
            }
            other => {
                return Err(UsageError(format!(
                    "unknown profile command '{other}' (see 'tai profile --help')"
                )));
            }
        };
        Ok(Command::Profile(cmd))
    }
}
