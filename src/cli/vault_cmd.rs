//! `tai vault ...`: secrets, the seal, the audit trail and records.

use std::io::{IsTerminal, Read};

use super::args::VaultCmd;
use super::render::{iso8601, out, table};
use super::{Context, Failure, Result};
use crate::config::process_env;
use crate::vault::audit::{Event, Outcome, Verdict};
use crate::vault::redact::{MIN_SECRET_CHARS, too_short};
use crate::vault::seal::KdfParams;

pub fn run(ctx: &mut Context, cmd: &VaultCmd) -> Result {
    match cmd {
        VaultCmd::SecretSet { name } => {
            ctx.unlock()?;
            let value = read_secret_value(name)?;
            if too_short(&value) {
                eprintln!(
                    "tai: warning: the value of {name} is shorter than {MIN_SECRET_CHARS} characters, so it is not redacted from output (a short value would scrub ordinary words); a real credential is longer"
                );
            }
            ctx.store.secret_set(name, &value)?;
            ctx.store.audit(Event::new("secret", name, Outcome::Set))?;
            out(&format!("stored secret {name}\n"))?;
            Ok(())
        }
        VaultCmd::SecretList { json } => {
            let names = ctx.store.secret_names()?;
            if *json {
                return Ok(out(&format!("{}\n", serde_json::json!(names)))?);
            }
            let text: String = names.iter().map(|n| format!("{n}\n")).collect();
            Ok(out(&text)?)
        }
        VaultCmd::SecretRemove { name } => {
            ctx.store.secret_remove(name)?;
            ctx.store
                .audit(Event::new("secret", name, Outcome::Removed))?;
            out(&format!("removed secret {name}\n"))?;
            Ok(())
        }
        VaultCmd::Seal => {
            if ctx.store.is_sealed()? {
                return Err(Failure("the vault is already sealed".into()));
            }
            let passphrase = new_passphrase()?;
            ctx.store.seal(&passphrase, KdfParams::DEFAULT)?;
            ctx.store
                .audit(Event::new("vault", "seal", Outcome::Sealed))?;
            out(&format!("vault sealed: {}\n", crate::vault::SEAL_COVERS))?;
            Ok(())
        }
        VaultCmd::Unseal => {
            if !ctx.store.is_sealed()? {
                return Err(Failure("the vault is not sealed".into()));
            }
            ctx.unlock()?;
            ctx.store.unseal()?;
            ctx.store
                .audit(Event::new("vault", "seal", Outcome::Unsealed))?;
            out("vault unsealed: secret values are stored in plain text\n")?;
            Ok(())
        }
        VaultCmd::Audit {
            limit,
            json,
            verify,
        } => audit_cmd(ctx, *limit, *json, *verify),
        // A record is a tool's result (untrusted): its text whole, escapes made visible.
        VaultCmd::RecordGet { id } => {
            ctx.unlock()?; // records are sealed while the seal is on
            Ok(out(&crate::sanitize::block(
                &ctx.store.record_get(id)?.content,
            ))?)
        }
        VaultCmd::RecordList { json } => {
            let records = ctx.store.record_list(1000)?;
            if *json {
                return Ok(out(&format!("{:#}\n", serde_json::json!(records)))?);
            }
            let rows: Vec<Vec<String>> = records
                .iter()
                .map(|r| {
                    vec![
                        r.id.clone(),
                        iso8601(r.created),
                        r.size.to_string(),
                        r.source.clone(),
                    ]
                })
                .collect();
            Ok(out(&table(&["ID", "CREATED", "BYTES", "SOURCE"], &rows))?)
        }
    }
}

fn audit_cmd(ctx: &mut Context, limit: Option<usize>, json: bool, verify: bool) -> Result {
    if verify {
        ctx.unlock()?; // a sealed vault's chain is keyed from the sealed key
        return match ctx.store.audit_verify()? {
            Verdict::Intact {
                rows,
                keyed,
                unkeyed_tail,
                headless,
                former_keyed,
                unkeyed_inner,
            } => {
                let mut text =
                    format!("audit trail intact: {rows} rows, chain and head verified\n");
                if keyed {
                    text.push_str("the chain is keyed with a key derived from the sealed key: nobody holding only the file can edit, remove or add rows unnoticed (restoring an older copy of the whole file is not detectable from the file)\n");
                } else {
                    text.push_str("the vault is not sealed, so the chain's key is public: it detects edits and removed rows, not a forger who has the file (`tai vault seal` keys it)\n");
                }
                if unkeyed_tail > 0 {
                    text.push_str(&format!("the newest {unkeyed_tail} rows were appended while the vault was locked: chained, not keyed\n"));
                }
                if unkeyed_inner > 0 {
                    text.push_str(&format!("{unkeyed_inner} earlier rows were appended while the vault was locked (chained, not keyed); keyed rows follow them\n"));
                }
                if former_keyed > 0 {
                    text.push_str(&format!("{former_keyed} rows are keyed with the key of a seal since removed (kept in the clear when it came off): they are checked against edits, not against a forger\n"));
                }
                if headless {
                    text.push_str("the trail has no authenticated head yet (written by an older tai): removal of its newest rows cannot be checked\n");
                }
                Ok(out(&text)?)
            }
            Verdict::BrokenAt(id) => Err(Failure(format!(
                "audit trail broken at row {id}: that row was edited or inserted, or the one before it removed"
            ))),
            Verdict::Truncated { head, found } => Err(Failure(format!(
                "audit trail truncated: its authenticated head covers {head} rows but {found} remain; the newest rows were removed"
            ))),
            Verdict::BadHead(why) => Err(Failure(format!("audit trail not authentic: {why}"))),
        };
    }
    let rows = ctx.store.audit_rows(Some(limit.unwrap_or(50)))?;
    if json {
        return Ok(out(&format!("{:#}\n", serde_json::json!(rows)))?);
    }
    let opt = |v: Option<i64>, unit: &str| v.map(|n| format!("{n}{unit}")).unwrap_or_default();
    let table_rows: Vec<Vec<String>> = rows
        .iter()
        .map(|r| {
            let e = &r.event;
            vec![
                r.id.to_string(),
                iso8601(r.time),
                e.kind.clone(),
                e.subject.clone(),
                e.outcome.clone(),
                opt(e.duration_ms, "ms"),
                opt(e.size, "B"),
                e.detail.clone().unwrap_or_default(),
            ]
        })
        .collect();
    Ok(out(&table(
        &[
            "ID", "TIME", "KIND", "SUBJECT", "OUTCOME", "TOOK", "SIZE", "DETAIL",
        ],
        &table_rows,
    ))?)
}

/// A secret value from stdin when it is piped, else from a no-echo prompt.
fn read_secret_value(name: &str) -> Result<String> {
    let stdin = std::io::stdin();
    let value = if stdin.is_terminal() {
        crate::term::read_hidden(&format!("Value for {name}: "))?
    } else {
        let mut s = String::new();
        stdin.lock().take(1 << 20).read_to_string(&mut s)?;
        s.strip_suffix('\n')
            .map(|t| t.strip_suffix('\r').unwrap_or(t))
            .unwrap_or(&s)
            .to_string()
    };
    if value.is_empty() {
        return Err(Failure(format!(
            "no value for secret {name}: pipe it in (`printf %s \"$VALUE\" | tai vault secret set {name}`) or run in a terminal"
        )));
    }
    Ok(value)
}

/// A new passphrase: `TAI_VAULT_PASSPHRASE`, or asked twice on the terminal.
fn new_passphrase() -> Result<String> {
    if let Some(p) = process_env("TAI_VAULT_PASSPHRASE") {
        return Ok(p);
    }
    if !crate::term::has_tty() {
        return Err(Failure(
            "no passphrase: set TAI_VAULT_PASSPHRASE or run in a terminal".into(),
        ));
    }
    let first = crate::term::read_hidden("New vault passphrase: ")?;
    let again = crate::term::read_hidden("Again: ")?;
    if first != again {
        return Err(Failure(
            "the passphrases did not match; nothing was changed".into(),
        ));
    }
    if first.is_empty() {
        return Err(Failure("the passphrase must not be empty".into()));
    }
    Ok(first)
}
