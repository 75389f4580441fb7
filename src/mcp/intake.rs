//! Registration: a normalized entry → `${VAR}` resolved → argv shown and consented →
//! verified live (connect + tools/list) → stored in one transaction. A failed check
//! stores nothing and reports the evidence.

use sha2::{Digest, Sha256};

use super::caps::MCP_MAX_SERVERS;
use super::client::{McpClient, ServerSpec, Timeouts};
use super::http::HttpSpec;
use super::protocol::Tool;
use super::stdio::StdioSpec;
use super::store;
use crate::approval::Approver;
use crate::config::expand::{Expanded, Sources, expand};
use crate::config::normalize::{Entry, Leg, Normalized, valid_name};
use crate::vault::redact::{Secret, redact};
use crate::vault::{Store, audit::Event};

/// An entry with every `${VAR}` resolved, ready to spawn or dial.
#[derive(Debug)]
pub struct Resolved {
    pub spec: ServerSpec,
    /// `(reference, value)` pairs used: they join the redaction set.
    pub values: Vec<(String, String)>,
}

impl Resolved {
    /// The consent text: the exact argv (or URL and header names), with every resolved
    /// value replaced by a marker naming it.
    pub fn shown(&self) -> String {
        let secrets: Vec<Secret> = self
            .values
            .iter()
            .map(|(k, v)| Secret {
                name: k.clone(),
                value: v.clone(),
            })
            .collect();
        let mut s = redact(&self.spec.describe(), &secrets);
        if let ServerSpec::Stdio(st) = &self.spec {
            if !st.env.is_empty() {
                let names: Vec<&str> = st.env.iter().map(|(k, _)| k.as_str()).collect();
                s.push_str(&format!("\n  env: {}", names.join(", ")));
            }
            if let Some(cwd) = &st.cwd {
                s.push_str(&format!("\n  cwd: {}", cwd.display()));
            }
        }
        s
    }

    /// What consent covers: a hash of everything that decides what runs.
    pub fn consent_hash(&self) -> String {
        let canonical = match &self.spec {
            ServerSpec::Stdio(s) => {
                serde_json::json!({"command": s.command, "args": s.args, "env": s.env, "cwd": s.cwd})
            }
            ServerSpec::Http(h) => serde_json::json!({"url": h.url, "headers": h.headers}),
        };
        crate::entropy::hex(&Sha256::digest(canonical.to_string().as_bytes()))
    }
}

/// Resolve an entry's references from the environment and the vault. Missing names are
/// an error naming each, with what to do.
pub fn resolve(
    entry: &Entry,
    store: &Store,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Resolved, String> {
    let secret = |k: &str| store.secret_get(k).ok().flatten();
    let src = Sources {
        env,
        secret: &secret,
    };
    let mut values: Vec<(String, String)> = Vec::new();
    let mut missing: Vec<String> = Vec::new();
    let mut one = |text: &str| -> String {
        let Expanded {
            text,
            missing: m,
            resolved,
        } = expand(text, &src);
        for r in resolved {
            if !values.contains(&r) {
                values.push(r);
            }
        }
        for name in m {
            if !missing.contains(&name) {
                missing.push(name);
            }
        }
        text
    };
    let mut from_file: Vec<(String, String)> = Vec::new();
    let spec = match &entry.leg {
        Leg::Stdio {
            command,
            args,
            env,
            cwd,
        } => {
            let mut env: Vec<(String, String)> =
                env.iter().map(|(k, v)| (k.clone(), one(v))).collect();
            if let Some(path) = &entry.options.env_file {
                // Read at every start; the entry's own `env` wins over the file.
                for (k, v) in read_env_file(&entry.name, &one(path))? {
                    if !env.iter().any(|(have, _)| *have == k) {
                        from_file.push((format!("envFile:{k}"), v.clone()));
                        env.push((k, v));
                    }
                }
            }
            ServerSpec::Stdio(StdioSpec {
                command: one(command),
                args: args.iter().map(|a| one(a)).collect(),
                env,
                cwd: cwd.as_deref().map(|c| one(c).into()),
            })
        }
        Leg::Http { url, headers } => ServerSpec::Http(HttpSpec {
            url: one(url),
            headers: headers.iter().map(|(k, v)| (k.clone(), one(v))).collect(),
        }),
    };
    values.extend(from_file);
    if !missing.is_empty() {
        let how: Vec<String> = missing
            .iter()
            .map(|m| match m.strip_prefix("input:") {
                Some(id) => format!("${{{m}}} (`tai vault secret set {id}`)"),
                None => format!("${{{m}}} (export {m}, or `tai vault secret set {m}`)"),
            })
            .collect();
        return Err(format!(
            "{}: unresolved {}; nothing was started",
            entry.name,
            how.join(", ")
        ));
    }
    Ok(Resolved { spec, values })
}

/// The variables of a server's `envFile` (VS Code), read now.
fn read_env_file(server: &str, path: &str) -> Result<Vec<(String, String)>, String> {
    let text = std::fs::read_to_string(path).map_err(|e| {
        format!("{server}: its envFile {path:?} cannot be read ({e}); nothing was started")
    })?;
    crate::config::envfile::parse(&text)
        .map_err(|e| format!("{server}: its envFile {path:?}: {e}; nothing was started"))
}

/// Add the resolved values to the store's redaction set: every value that came from the
/// vault, and values from the environment of 8 characters or more (tokens and keys; a
/// short value such as a flag or a word would scrub ordinary text everywhere).
pub fn remember_values(store: &mut Store, r: &Resolved) {
    for (k, v) in &r.values {
        let from_vault = store
            .secret_get(k.strip_prefix("input:").unwrap_or(k))
            .ok()
            .flatten()
            .as_deref()
            == Some(v.as_str());
        if from_vault || v.chars().count() >= 8 {
            store.add_resolved(k, v);
        }
    }
}

/// Options of one registration.
pub struct AddOptions<'a> {
    pub profile: &'a str,
    pub replace: bool,
    pub timeouts: Timeouts,
    pub env: &'a dyn Fn(&str) -> Option<String>,
}

/// What a registration did.
#[derive(Debug, serde::Serialize)]
pub struct AddReport {
    pub name: String,
    pub transport: &'static str,
    pub era: String,
    pub server: String,
    pub tools: Vec<(String, Option<String>)>,
    pub enabled_for: Option<String>,
}

/// Register one entry: resolve, consent, verify live, store (all or nothing).
pub fn add(
    store: &mut Store,
    entry: &Entry,
    source: &str,
    opts: &AddOptions<'_>,
    approver: &mut dyn Approver,
) -> Result<AddReport, String> {
    let existing = store::load(store, &entry.name).map_err(|e| e.to_string())?;
    if existing.is_some() && !opts.replace {
        return Err(format!(
            "a server named {:?} is already stored; choose another name (--name) or replace it (--replace)",
            entry.name
        ));
    }
    if existing.is_none() && store::count(store).map_err(|e| e.to_string())? >= MCP_MAX_SERVERS {
        return Err(format!(
            "{} servers are stored, the most tai keeps (MCP_MAX_SERVERS); remove one first (`tai mcp remove NAME`)",
            MCP_MAX_SERVERS
        ));
    }
    let resolved = resolve(entry, store, opts.env)?;
    remember_values(store, &resolved);
    let what = match &resolved.spec {
        ServerSpec::Stdio(_) => format!("run the MCP server {:?}", entry.name),
        ServerSpec::Http(_) => format!("connect to the MCP server {:?}", entry.name),
    };
    let decision = approver.approve(&what, &format!("  {}", resolved.shown()));
    if decision != Ok(true) {
        let _ = store.audit(Event::new("mcp-add", &entry.name, "denied"));
        return Err(decision
            .err()
            .unwrap_or_else(|| format!("{what}: not approved; nothing was stored")));
    }
    let (tools, era, server) = verify(&resolved.spec, entry, entry.options.timeouts(opts.timeouts))
        .map_err(|e| {
            let text = store
                .redact(&e)
                .unwrap_or_else(|_| "(the error could not be redacted and is withheld)".into());
            let _ = store.audit(Event {
                detail: Some(text.clone()),
                ..Event::new("mcp-add", &entry.name, "verify-failed")
            });
            format!(
                "{}: the live check failed, nothing was stored:\n{text}",
                entry.name
            )
        })?;
    let enable = entry.enabled.map(|on| (opts.profile, on));
    store::save(
        store,
        entry,
        source,
        &tools,
        &resolved.consent_hash(),
        enable,
    )
    .map_err(|e| e.to_string())?;
    let _ = store.audit(Event {
        detail: Some(format!("{} tools, {era}", tools.len())),
        ..Event::new("mcp-add", &entry.name, "stored")
    });
    Ok(AddReport {
        name: entry.name.clone(),
        transport: match entry.leg {
            Leg::Stdio { .. } => "stdio",
            Leg::Http { .. } => "http",
        },
        era,
        server,
        tools: tools.into_iter().map(|t| (t.name, t.description)).collect(),
        enabled_for: entry
            .enabled
            .filter(|on| *on)
            .map(|_| opts.profile.to_string()),
    })
}

/// Pasted text made ready to add: normalized, or — when the text is the name of a
/// stored server — that server's entry again (re-verified and refreshed on add).
pub struct Paste {
    pub normalized: Normalized,
    pub source: String,
    /// The text named a stored server: adding it replaces the stored row.
    pub refresh: bool,
}

pub fn paste(store: &Store, text: &str) -> Result<Paste, String> {
    let word = text.trim();
    if valid_name(word)
        && let Some(row) = store::load(store, word).map_err(|e| e.to_string())?
    {
        let normalized = Normalized {
            entries: vec![row.entry],
            ..Normalized::default()
        };
        return Ok(Paste {
            normalized,
            source: row.source,
            refresh: true,
        });
    }
    let normalized =
        crate::config::normalize::normalize(text, cfg!(windows)).map_err(|e| e.to_string())?;
    let source = normalized
        .source
        .as_ref()
        .map_or_else(|| "explicit".to_string(), |s| s.as_str());
    Ok(Paste {
        normalized,
        source,
        refresh: false,
    })
}

/// A GitHub URL's resolution as a paste: its one entry, `source = github:<owner>/<repo>`.
pub fn paste_resolved(r: &crate::resolver::Resolution) -> Paste {
    Paste {
        normalized: Normalized {
            entries: vec![r.chosen.entry.clone()],
            notes: r.notes(),
            ..Normalized::default()
        },
        source: r.source.clone(),
        refresh: false,
    }
}

/// The entries to add from a normalized paste. `single` (add): the one picked by `name`
/// when the paste holds several (all of them without a name), renamed to `name` when it
/// holds one; otherwise (import) all of them.
pub fn select(n: &Normalized, name: Option<&str>, single: bool) -> Result<Vec<Entry>, String> {
    let mut entries = n.entries.clone();
    if !single {
        return Ok(entries);
    }
    if entries.len() > 1 {
        // Several servers and no name: each in turn, each with its own consent.
        let Some(want) = name else {
            return Ok(entries);
        };
        let Some(pick) = entries.iter().position(|e| e.name == want) else {
            let names: Vec<&str> = entries.iter().map(|e| e.name.as_str()).collect();
            return Err(format!(
                "the config holds no server named {want:?} (it holds {})",
                names.join(", ")
            ));
        };
        return Ok(vec![entries.swap_remove(pick)]);
    }
    if let (Some(e), Some(want)) = (entries.first_mut(), name) {
        if !valid_name(want) {
            return Err(format!(
                "invalid server name {want:?}: use 1 to 64 of A-Z a-z 0-9 _ -"
            ));
        }
        e.name = want.to_string();
    }
    if entries.is_empty() {
        let why: Vec<String> = n.refused.iter().map(|(k, v)| format!("{k}: {v}")).collect();
        return Err(format!("no server to add: {}", why.join("; ")));
    }
    Ok(entries)
}

/// Connect, list tools, close: the live check before anything is stored.
pub fn verify(
    spec: &ServerSpec,
    entry: &Entry,
    timeouts: Timeouts,
) -> Result<(Vec<Tool>, String, String), String> {
    let mut client =
        McpClient::connect(spec, entry.protocol, timeouts).map_err(|e| e.to_string())?;
    let tools = client.list_tools().map_err(|e| e.to_string())?;
    let era = format!("{} ({:?} era)", client.protocol_version(), client.era()).to_lowercase();
    let info = client.server_info();
    let server = format!("{} {}", info.name, info.version).trim().to_string();
    client.close();
    Ok((tools, era, server))
}
