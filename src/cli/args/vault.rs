//! `tai vault secret|seal|unseal|audit|record`: its grammar.

use lexopt::prelude::*;

use super::{Command, Parser, Result, Step, UsageError, VaultCmd, string, unexpected};

impl Parser {
    pub(super) fn vault(&mut self) -> Result<Command> {
        let sub = match self.positional(
            "a subcommand: secret, seal, unseal, audit or record",
            "vault",
        )? {
            Ok(s) => s,
            Err(t) => return Ok(Command::Help(t)),
        };
        let cmd = match sub.as_str() {
            "seal" => VaultCmd::Seal,
            "unseal" => VaultCmd::Unseal,
            "secret" => {
                let Ok(action) = self.positional("set, list or rm", "vault")? else {
                    return Ok(Command::Help("vault"));
                };
                match action.as_str() {
                    "set" | "rm" | "remove" => {
                        let Ok(name) = self.positional("a secret NAME", "vault")? else {
                            return Ok(Command::Help("vault"));
                        };
                        crate::vault::check_name("secret", &name)
                            .map_err(|e| UsageError(e.to_string()))?;
                        if action == "set" {
                            VaultCmd::SecretSet { name }
                        } else {
                            VaultCmd::SecretRemove { name }
                        }
                    }
                    "list" | "ls" => match self.json_only("vault")? {
                        Ok(json) => return Ok(Command::Vault(VaultCmd::SecretList { json })),
                        Err(t) => return Ok(Command::Help(t)),
                    },
                    other => {
                        return Err(UsageError(format!(
                            "unknown secret command '{other}' (see 'tai vault --help')"
                        )));
                    }
                }
            }
            "audit" => {
                let (mut limit, mut json, mut verify) = (None, false, false);
                loop {
                    match self.next()? {
                        Step::End => break,
                        Step::Help => return Ok(Command::Help("vault")),
                        Step::Arg(Long("json")) => json = true,
                        Step::Arg(Long("verify")) => verify = true,
                        Step::Arg(Long("limit")) => {
                            let v = string(self.inner.value()?, "--limit")?;
                            limit = Some(v.parse::<usize>().ok().filter(|n| *n > 0).ok_or_else(
                                || {
                                    UsageError(format!(
                                        "--limit needs a positive number, not '{v}'"
                                    ))
                                },
                            )?);
                        }
                        Step::Arg(a) => return Err(unexpected(a, "vault audit")),
                    }
                }
                return Ok(Command::Vault(VaultCmd::Audit {
                    limit,
                    json,
                    verify,
                }));
            }
            "record" => {
                let Ok(action) = self.positional("get or list", "vault")? else {
                    return Ok(Command::Help("vault"));
                };
                match action.as_str() {
                    "get" => {
                        let Ok(id) = self.positional("a record ID", "vault")? else {
                            return Ok(Command::Help("vault"));
                        };
                        VaultCmd::RecordGet { id }
                    }
                    "list" | "ls" => match self.json_only("vault")? {
                        Ok(json) => return Ok(Command::Vault(VaultCmd::RecordList { json })),
                        Err(t) => return Ok(Command::Help(t)),
                    },
                    other => {
                        return Err(UsageError(format!(
                            "unknown record command '{other}' (see 'tai vault --help')"
                        )));
                    }
                }
            }
            other => {
                return Err(UsageError(format!(
                    "unknown vault command '{other}' (see 'tai vault --help')"
                )));
            }
        };
        self.done(Command::Vault(cmd))
    }
}
