//! `tai profile list|add|set|use|remove`.
//!
//! A profile lives in one place: the config file's `[profiles.NAME]` when the file
//! defines it, else the vault's row; `add` and `set` change vault rows only.

use super::args::ProfileCmd;
use super::render::{out, table};
use super::{Context, Failure, Result};
use crate::config::DEFAULT_PROFILE;
use crate::vault::ProfileRow;
use crate::vault::audit::{Event, Outcome};

pub fn run(ctx: &mut Context, cmd: &ProfileCmd) -> Result {
    match cmd {
        ProfileCmd::List { json } => list(ctx, *json),
        ProfileCmd::Add {
            name,
            model,
            base_url,
            api_key_secret,
        } => {
            if ctx
                .file
                .as_ref()
                .is_some_and(|f| f.profiles.contains_key(name))
            {
                return Err(Failure(format!(
                    "profile {name:?} is defined in {}; edit it there",
                    ctx.config.config_path.display()
                )));
            }
            let row = ProfileRow {
                name: name.clone(),
                model: model.clone(),
                base_url: base_url.clone(),
                api_key_secret: api_key_secret.clone(),
            };
            ctx.store.profile_add(&row)?;
            ctx.store
                .audit(Event::new("profile", name, Outcome::Added))?;
            out(&format!(
                "added profile {name} (make it current with `tai profile use {name}`)\n"
            ))?;
            Ok(())
        }
        ProfileCmd::Use { name } => {
            if !known(ctx)?.iter().any(|(n, _)| n == name) {
                return Err(Failure(format!(
                    "no profile named {name:?}: create it with `tai profile add {name}` (see `tai profile list`)"
                )));
            }
            ctx.store.meta_set("current_profile", name.as_str())?;
            ctx.store
                .audit(Event::new("profile", name, Outcome::Used))?;
            let shadow = crate::config::process_env("TAI_PROFILE").filter(|p| p != name);
            let note = shadow
                .map(|p| format!(" (TAI_PROFILE={p} still overrides it in this shell)"))
                .unwrap_or_default();
            out(&format!("current profile: {name}{note}\n"))?;
            Ok(())
        }
        ProfileCmd::Set { name, key, value } => {
            if ctx
                .file
                .as_ref()
                .is_some_and(|f| f.profiles.contains_key(name))
            {
                return Err(Failure(format!(
                    "profile {name:?} is defined in {}; edit it there (a profile lives in one place)",
                    ctx.config.config_path.display()
                )));
            }
            if name != DEFAULT_PROFILE && !stored(ctx, name)? {
                return Err(Failure(format!(
                    "no profile named {name:?}: create it with `tai profile add {name}` (see `tai profile list`)"
                )));
            }
            let value = (!value.is_empty()).then_some(value.as_str());
            ctx.store.profile_set(name, key, value)?;
            ctx.store.audit(Event {
                detail: Some(key.clone()),
                ..Event::new("profile", name, Outcome::Set)
            })?;
            let shown = value.map_or("(unset: the top-level setting applies)".to_string(), |v| {
                v.to_string()
            });
            out(&format!("{name}: {key} = {shown}\n"))?;
            Ok(())
        }
        ProfileCmd::Remove { name } => {
            if name == DEFAULT_PROFILE {
                return Err(Failure("the default profile cannot be removed".into()));
            }
            if ctx
                .file
                .as_ref()
                .is_some_and(|f| f.profiles.contains_key(name))
                && !stored(ctx, name)?
            {
                return Err(Failure(format!(
                    "profile {name:?} is defined in {}; remove it there",
                    ctx.config.config_path.display()
                )));
            }
            ctx.store.profile_remove(name)?;
            ctx.store
                .audit(Event::new("profile", name, Outcome::Removed))?;
            out(&format!("removed profile {name}\n"))?;
            Ok(())
        }
    }
}

fn stored(ctx: &Context, name: &str) -> Result<bool> {
    Ok(ctx.store.profiles()?.iter().any(|p| p.name == name))
}

/// Every profile with where it is defined: built in, the vault, the config file.
pub fn known(ctx: &Context) -> Result<Vec<(String, &'static str)>> {
    let mut all = vec![(DEFAULT_PROFILE.to_string(), "built-in")];
    for p in ctx.store.profiles()? {
        match all.iter_mut().find(|(n, _)| *n == p.name) {
            Some(entry) => entry.1 = "vault",
            None => all.push((p.name, "vault")),
        }
    }
    if let Some(f) = &ctx.file {
        for name in f.profiles.keys() {
            match all.iter_mut().find(|(n, _)| n == name) {
                Some(entry) => entry.1 = "config",
                None => all.push((name.clone(), "config")),
            }
        }
    }
    all.sort();
    Ok(all)
}

fn list(ctx: &Context, json: bool) -> Result {
    let current = &ctx.config.profile;
    let all = known(ctx)?;
    if json {
        let v: Vec<_> = all
            .iter()
            .map(|(n, from)| serde_json::json!({ "name": n, "defined_in": from, "current": n == current }))
            .collect();
        return Ok(out(&format!("{:#}\n", serde_json::Value::Array(v)))?);
    }
    let rows: Vec<Vec<String>> = all
        .iter()
        .map(|(n, from)| {
            vec![
                if n == current {
                    "*".into()
                } else {
                    String::new()
                },
                n.clone(),
                from.to_string(),
            ]
        })
        .collect();
    Ok(out(&table(&["", "PROFILE", "DEFINED IN"], &rows))?)
}
