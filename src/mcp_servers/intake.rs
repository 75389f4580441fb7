//! Registration: a normalized entry → `${VAR}` resolved → argv shown and consented →
//! verified live (connect + tools/list) → stored in one transaction. A failed check
//! stores nothing and reports the evidence.

use sha2::{Digest, Sha256};

use super::store;
use crate::approval::Approver;
use crate::mcp::caps::MCP_MAX_SERVERS;
use crate::mcp::client::{McpClient, ServerSpec, Timeouts};
use crate::mcp::http::HttpSpec;
use crate::mcp::protocol::Tool;
use crate::mcp::stdio::StdioSpec;
use crate::mcp_servers::expand::{Expanded, Sources, expand};
use crate::mcp_servers::normalize::{Entry, Leg, Normalized, valid_name};
use crate::sanitize;
use crate::vault::Store;
use crate::vault::audit::{Event, Outcome};
use crate::vault::redact::{Secret, redact};

/// An entry with every `${VAR}` resolved, ready to spawn or dial.
#[derive(Debug)]
pub struct Resolved {
    pub spec: ServerSpec,
    /// `(reference, value)` pairs used: they join the redaction set.
    pub values: Vec<(String, String)>,
    /// The entry as stored (its `${NAME}` references unexpanded), for the consent text.
    pub entry: Entry,
    /// What the command resolves to: the executable's path after the `PATH` lookup with
    /// the entry's env, and where that `PATH` came from.
    pub executable: Option<Executable>,
}

/// Where a stdio server's command resolves.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Executable {
    /// The file that runs, or `None` when nothing on `PATH` matches.
    pub path: Option<std::path::PathBuf>,
    /// The `PATH` searched (None: the command names a path).
    pub search: Option<String>,
    /// Whether that `PATH` is the entry's own (its env sets `PATH`).
    pub from_entry: bool,
}

/// Whether an env name looks like it holds a secret (its literal value is masked).
fn secret_like(name: &str) -> bool {
    let n = name.to_ascii_uppercase();
    [
        "KEY",
        "TOKEN",
        "SECRET",
        "PASS",
        "AUTH",
        "CREDENTIAL",
        "COOKIE",
        "SESSION",
    ]
    .iter()
    .any(|w| n.contains(w))
}

/// A value masked for the consent screen: its length only.
fn masked(value: &str) -> String {
    format!("•••• ({} characters, hidden)", value.chars().count())
}

/// How one env or header value is shown: a `${NAME}` reference as written (its value
/// hidden), a literal in full unless `hide` (then masked).
fn shown_value(template: &str, hide: bool) -> String {
    if template.contains("${") {
        format!("{template}  (resolved; the value is hidden)")
    } else if hide {
        masked(template)
    } else {
        template.to_string()
    }
}

/// `command` looked up as `execvp` would: a name with a `/` is a path (relative to `cwd`);
/// otherwise the first executable file of that name in `search`'s directories.
pub fn find_executable(
    command: &str,
    search: &str,
    cwd: Option<&std::path::Path>,
) -> Option<std::path::PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    let runnable = |p: &std::path::Path| {
        std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    };
    if command.contains('/') {
        let p = std::path::Path::new(command);
        let p = match cwd {
            Some(dir) if p.is_relative() => dir.join(p),
            _ => p.to_path_buf(),
        };
        return Some(p);
    }
    search
        .split(':')
        .map(|dir| if dir.is_empty() { "." } else { dir })
        .map(|dir| std::path::Path::new(dir).join(command))
        .find(|p| runnable(p))
}

impl Resolved {
    /// The consent text, whole: the exact argv (resolved values masked by name), the file
    /// that will run (after the `PATH` lookup with the entry's env), the cwd, every env
    /// entry with its value (a `${NAME}` reference shown as written, secret-looking
    /// literals masked), or the URL with every header (values masked). The approval
    /// screen shows it through `sanitize`.
    pub fn shown(&self) -> String {
        let secrets: Vec<Secret> = self
            .values
            .iter()
            .map(|(k, v)| Secret {
                name: k.clone(),
                value: v.clone(),
            })
            .collect();
        let mut s = String::new();
        match (&self.spec, &self.entry.leg) {
            (ServerSpec::Stdio(st), Leg::Stdio { env, .. }) => {
                s.push_str(&format!(
                    "command: {}\n",
                    redact(&self.spec.describe(), &secrets)
                ));
                if let Some(x) = &self.executable {
                    let found = match &x.path {
                        Some(p) => p.display().to_string(),
                        None => format!("(no {:?} found on PATH)", st.command),
                    };
                    s.push_str(&format!("runs: {found}\n"));
                    if let Some(search) = &x.search {
                        let whose = if x.from_entry {
                            "the entry's env"
                        } else {
                            "tai's environment"
                        };
                        s.push_str(&format!(
                            "  found on PATH={} (from {whose})\n",
                            sanitize::line(&redact(search, &secrets))
                        ));
                    }
                }
                if let Some(cwd) = &st.cwd {
                    s.push_str(&format!(
                        "cwd: {}\n",
                        sanitize::line(&redact(&cwd.display().to_string(), &secrets))
                    ));
                }
                if env.is_empty() {
                    s.push_str("env: (none set by the entry)\n");
                } else {
                    s.push_str("env:\n");
                    for (k, template) in env {
                        s.push_str(&format!(
                            "  {}={}\n",
                            sanitize::line(k),
                            sanitize::line(&shown_value(template, secret_like(k)))
                        ));
                    }
                }
                if !st.env_vars.is_empty() {
                    s.push_str(&format!(
                        "passed through from your environment: {}\n",
                        sanitize::line(&st.env_vars.join(", "))
                    ));
                }
                // An envFile's variables reach the server like `env`: shown the same way.
                if let Some(file) = &self.entry.options.env_file {
                    s.push_str(&format!(
                        "envFile: {} (read at every start)\n",
                        sanitize::line(&redact(file, &secrets))
                    ));
                    for (k, v) in &self.values {
                        if let Some(name) = k.strip_prefix("envFile:") {
                            s.push_str(&format!(
                                "  {}={}\n",
                                sanitize::line(name),
                                sanitize::line(&shown_value(v, secret_like(name)))
                            ));
                        }
                    }
                }
            }
            (ServerSpec::Http(h), Leg::Http { headers, .. }) => {
                s.push_str(&format!(
                    "url: {}\n",
                    sanitize::line(&redact(&h.url, &secrets))
                ));
                if headers.is_empty() {
                    s.push_str("headers: (none)\n");
                } else {
                    s.push_str("headers:\n");
                    for (k, template) in headers {
                        s.push_str(&format!(
                            "  {}: {}\n",
                            sanitize::line(k),
                            sanitize::line(&shown_value(template, true))
                        ));
                    }
                }
            }
            _ => s.push_str(&redact(&self.spec.describe(), &secrets)),
        }
        s.trim_end().to_string()
    }

    /// What consent covers: a hash of everything that decides what runs.
    pub fn consent_hash(&self) -> String {
        let canonical = match &self.spec {
            ServerSpec::Stdio(s) if s.env_vars.is_empty() => {
                serde_json::json!({"command": s.command, "args": s.args, "env": s.env, "cwd": s.cwd})
            }
            ServerSpec::Stdio(s) => {
                serde_json::json!({"command": s.command, "args": s.args, "env": s.env, "cwd": s.cwd, "env_vars": s.env_vars})
            }
            ServerSpec::Http(h) => serde_json::json!({"url": h.url, "headers": h.headers}),
        };
        crate::entropy::hex(&Sha256::digest(canonical.to_string().as_bytes()))
    }
}

/// The names of the vault secrets an entry would hand its server (`${NAME}`,
/// `${NAME:-default}`, `${env:NAME}` or `${input:ID}` that the environment does not
/// answer and the vault does).
pub fn vault_references(
    entry: &Entry,
    store: &Store,
    env: &dyn Fn(&str) -> Option<String>,
) -> Vec<String> {
    let mut texts: Vec<&str> = Vec::new();
    match &entry.leg {
        Leg::Stdio {
            command,
            args,
            env: vars,
            cwd,
        } => {
            texts.push(command);
            texts.extend(args.iter().map(String::as_str));
            texts.extend(vars.values().map(String::as_str));
            texts.extend(cwd.as_deref());
        }
        Leg::Http { url, headers } => {
            texts.push(url);
            texts.extend(headers.values().map(String::as_str));
        }
    }
    texts.extend(entry.options.env_file.as_deref());
    let mut out = Vec::new();
    for text in texts {
        let mut rest = text;
        while let Some(at) = rest.find("${") {
            let Some(len) = rest[at + 2..].find('}') else {
                break;
            };
            let inner = &rest[at + 2..at + 2 + len];
            rest = &rest[at + 2 + len..];
            let (name, from_env_first) = match inner.split_once(':') {
                Some(("input", id)) => (id, false),
                Some(("env", n)) => (n, true),
                Some((n, _default)) => (n, true),
                None => (inner, true),
            };
            let answered_by_env = from_env_first && env(name).is_some();
            if !answered_by_env
                && store.secret_get(name).ok().flatten().is_some()
                && !out.iter().any(|o| o == name)
            {
                out.push(name.to_string());
            }
        }
    }
    out
}

/// tai's own secrets (`child_env::WITHHELD_NAMES`) may be handed to a server only through
/// its `env`, which consent shows by name: never in its command, argv (visible to every
/// local user), cwd or URL. `GITHUB_TOKEN` may also fill a header (GitHub's own MCP
/// server takes it so); tai's passphrase and keys never.
fn refuse_own_secrets_outside_env(entry: &Entry) -> Result<(), String> {
    let names_in = |text: &str, allow_github: bool| -> Option<&'static str> {
        crate::child_env::WITHHELD_NAMES.iter().copied().find(|n| {
            !(allow_github && *n == "GITHUB_TOKEN")
                && [
                    format!("${{{n}}}"),
                    format!("${{{n}:-"),
                    format!("${{env:{n}}}"),
                ]
                .iter()
                .any(|r| text.contains(r.as_str()))
        })
    };
    let found = match &entry.leg {
        Leg::Stdio {
            command, args, cwd, ..
        } => std::iter::once(command.as_str())
            .chain(args.iter().map(String::as_str))
            .chain(cwd.as_deref())
            .chain(entry.options.env_file.as_deref())
            .find_map(|t| names_in(t, false)),
        Leg::Http { url, headers } => {
            names_in(url, false).or_else(|| headers.iter().find_map(|(_, v)| names_in(v, true)))
        }
    };
    match found {
        Some(n) => Err(format!(
            "{}: ${{{n}}} is one of tai's own secrets; it may be passed to a server only through the entry's \"env\" (never its command, arguments, cwd, envFile path or URL); nothing was started",
            entry.name
        )),
        None => Ok(()),
    }
}

/// Resolve an entry's references from the environment and the vault. Missing names are
/// an error naming each, with what to do.
pub fn resolve(
    entry: &Entry,
    store: &Store,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Resolved, String> {
    // OAuth tokens are the OAuth layer's alone: never a `${…}` value (argv, URL, env).
    let secret = |k: &str| {
        (!k.starts_with("oauth."))
            .then(|| store.secret_get(k).ok().flatten())
            .flatten()
    };
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
    refuse_own_secrets_outside_env(entry)?;
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
                env_vars: entry.env_vars.clone(),
                withheld_values: store.secret_values(),
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
    let executable = match &spec {
        ServerSpec::Stdio(st) => {
            let own = st
                .env
                .iter()
                .find(|(k, _)| k == "PATH")
                .map(|(_, v)| v.clone());
            let from_entry = own.is_some();
            let search = own.or_else(|| env("PATH")).unwrap_or_default();
            let path = find_executable(&st.command, &search, st.cwd.as_deref());
            Some(Executable {
                path,
                search: (!st.command.contains('/')).then_some(search),
                from_entry,
            })
        }
        ServerSpec::Http(_) => None,
    };
    Ok(Resolved {
        spec,
        values,
        entry: entry.clone(),
        executable,
    })
}

/// The variables of a server's `envFile` (VS Code), read now.
fn read_env_file(server: &str, path: &str) -> Result<Vec<(String, String)>, String> {
    let text = crate::regular_file::read_text(path, crate::limits::FILE_MAX).map_err(|e| {
        format!("{server}: its envFile {path:?} cannot be read ({e}); nothing was started")
    })?;
    crate::mcp_servers::envfile::parse(&text)
        .map_err(|e| format!("{server}: its envFile {path:?}: {e}; nothing was started"))
}

/// Add the resolved values to the store's redaction set. Values under 8 characters are
/// not held, wherever they came from (a short value such as a flag or a word would scrub
/// ordinary text everywhere; see `redact::MIN_SECRET_CHARS`).
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
    // Names are unique case-insensitively: `Good` beside `good` would read as one server.
    if let Some(other) = store::list(store)
        .map_err(|e| e.to_string())?
        .into_iter()
        .map(|r| r.entry.name)
        .find(|n| n != &entry.name && n.eq_ignore_ascii_case(&entry.name))
    {
        return Err(format!(
            "a server named {other:?} is already stored, and names differ in more than case; choose another name (--name)"
        ));
    }
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
    let decision = approver.approve(&what, &resolved.shown());
    if decision != Ok(true) {
        let _ = store.audit(Event::new("mcp-add", &entry.name, Outcome::Denied));
        return Err(decision
            .err()
            .unwrap_or_else(|| format!("{what}: not approved; nothing was stored")));
    }
    let oauth = super::oauth_vault::authorizer(
        store,
        &entry.name,
        &resolved.spec,
        crate::mcp::oauth::Interaction::Ask,
        opts.env,
    )
    .map(|o| match (opts.env)(crate::mcp::oauth::CLIENT_ID_ENV) {
        // A pre-registered client for a server that offers no registration.
        Some(id) if o.state.client.is_none() && !id.is_empty() => {
            o.with_client(&id, (opts.env)(crate::mcp::oauth::CLIENT_SECRET_ENV))
        }
        _ => o,
    });
    let (tools, era, server, auth) = verify(
        &resolved.spec,
        entry,
        entry.options.timeouts(opts.timeouts),
        oauth,
    )
    .map_err(|e| {
        let text = store
            .redact(&e)
            .unwrap_or_else(|_| "(the error could not be redacted and is withheld)".into());
        let _ = store.audit(Event {
            detail: Some(text.clone()),
            ..Event::new("mcp-add", &entry.name, Outcome::VerifyFailed)
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
    if existing.is_some() {
        // Re-verifying a stored server never changes a pin (`--yolo` and the model reach
        // this path): the live list is stored beside the pins, changed and added tools
        // stay withheld until a person approves them.
        super::listing::record_listing(store, &entry.name, &tools);
    }
    if let Some(state) = auth {
        super::oauth_vault::save(store, &entry.name, &state).map_err(|e| e.to_string())?;
        let _ = store.audit(Event::new("mcp-oauth", &entry.name, Outcome::TokensStored));
    }
    let _ = store.audit(Event {
        detail: Some(format!("{} tools, {era}", tools.len())),
        ..Event::new("mcp-add", &entry.name, Outcome::Stored)
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
        crate::mcp_servers::normalize::normalize(text, cfg!(windows)).map_err(|e| e.to_string())?;
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

/// A GitHub URL's resolution as a paste: its one entry, the resolver's notes,
/// `source = github:<owner>/<repo>`.
pub fn paste_resolved(entry: Entry, notes: Vec<String>, source: String) -> Paste {
    Paste {
        normalized: Normalized {
            entries: vec![entry],
            notes,
            ..Normalized::default()
        },
        source,
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

/// Connect, list tools, close: the live check before anything is stored. With `oauth`,
/// a server that demands a login gets one; the new authorization state is returned to be
/// stored with the server.
#[allow(clippy::type_complexity)]
pub fn verify(
    spec: &ServerSpec,
    entry: &Entry,
    timeouts: Timeouts,
    oauth: Option<crate::mcp::oauth::OAuth>,
) -> Result<
    (
        Vec<Tool>,
        String,
        String,
        Option<crate::mcp::oauth::AuthState>,
    ),
    String,
> {
    let mut client = McpClient::connect_with(spec, entry.protocol, timeouts, oauth)
        .map_err(|e| e.to_string())?;
    let tools = client.list_tools().map_err(|e| e.to_string())?;
    let auth = client
        .oauth()
        .filter(|o| o.changed && o.state.access_token.is_some())
        .map(|o| o.state.clone());
    let era = format!("{} ({:?} era)", client.protocol_version(), client.era()).to_lowercase();
    let info = client.server_info();
    let server = format!("{} {}", info.name, info.version).trim().to_string();
    client.close();
    Ok((tools, era, server, auth))
}
