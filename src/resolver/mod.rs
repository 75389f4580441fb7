//! The GitHub URL resolver: `github.com/<owner>/<repo>[/tree/<ref>/<path>]` → exactly one
//! server entry, or a failure that lists every step's evidence.
//!
//! Deterministic and model-free. The steps, in order, stopping at the first that yields a
//! runnable entry: the MCP registry API, the repository's `server.json` (and `mcpName` in
//! `package.json`), its package manifests, its README's run block, its Glama page. What
//! is found is only a candidate: the intake shows its argv for consent and verifies it
//! with a live handshake before anything is stored. All I/O goes through [`Fetch`], so
//! the steps are tested with tables and, end to end, against a fixtures server.

pub mod fetch;
pub mod registry;
pub mod sources;

use serde_json::Value;

use crate::mcp_servers::normalize::{Entry, Leg};
use registry::{Listed, ShaCheck};

/// Where the resolver looks; every base is configurable (mirrors, air-gapped use, tests).
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Urls {
    pub registry: String,
    pub github_api: String,
    pub github_raw: String,
    pub glama: String,
}

impl Default for Urls {
    fn default() -> Urls {
        Urls {
            registry: "https://registry.modelcontextprotocol.io".into(),
            github_api: "https://api.github.com".into(),
            github_raw: "https://raw.githubusercontent.com".into(),
            glama: "https://glama.ai".into(),
        }
    }
}

/// A repository and, when the URL named one, a ref and a folder in it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Target {
    pub owner: String,
    pub repo: String,
    pub git_ref: Option<String>,
    pub subpath: Option<String>,
}

impl Target {
    /// `https://github.com/o/r`, `github.com/o/r.git`, `…/tree/main/src/foo`,
    /// `…/blob/main/src/foo/README.md` (its folder); `None` for anything else.
    pub fn parse(text: &str) -> Option<Target> {
        let t = text.trim();
        if t.contains(char::is_whitespace) {
            return None;
        }
        let rest = t
            .strip_prefix("https://")
            .or_else(|| t.strip_prefix("http://"))
            .unwrap_or(t);
        let rest = rest.strip_prefix("www.").unwrap_or(rest);
        let rest = rest.strip_prefix("github.com/")?;
        let rest = rest.split(['#', '?']).next().unwrap_or("");
        let mut parts = rest.split('/').filter(|s| !s.is_empty());
        let owner = parts.next()?.to_string();
        let repo = parts.next()?.trim_end_matches(".git").to_string();
        let ok = |s: &str| {
            !s.is_empty()
                && s.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b"-_.".contains(&b))
        };
        if !ok(&owner) || !ok(&repo) {
            return None;
        }
        let mut target = Target {
            owner,
            repo,
            git_ref: None,
            subpath: None,
        };
        let kind = parts.next();
        if let (Some(kind @ ("tree" | "blob")), Some(git_ref)) = (kind, parts.next()) {
            target.git_ref = Some(git_ref.to_string());
            let mut path: Vec<&str> = parts.collect();
            if kind == "blob" {
                path.pop(); // a file: its folder
            }
            if !path.is_empty() {
                target.subpath = Some(path.join("/"));
            }
        }
        Some(target)
    }

    /// `github:<owner>/<repo>`, the `source` stored with the server.
    pub fn source(&self) -> String {
        format!("github:{}/{}", self.owner, self.repo)
    }

    pub fn display(&self) -> String {
        let mut s = format!("github.com/{}/{}", self.owner, self.repo);
        if let Some(p) = &self.subpath {
            s.push_str(&format!(" (folder {p})"));
        }
        s
    }

    fn raw(&self, urls: &Urls, file: &str) -> String {
        let dir = self
            .subpath
            .as_deref()
            .map_or(String::new(), |p| format!("{p}/"));
        format!(
            "{}/{}/{}/{}/{dir}{file}",
            urls.github_raw,
            self.owner,
            self.repo,
            self.git_ref.as_deref().unwrap_or("HEAD")
        )
    }
}

/// One way of running the server, and where it was found.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Candidate {
    #[serde(serialize_with = "entry_json")]
    pub entry: Entry,
    pub origin: String,
    /// `${NAME}` references the user must provide (environment or vault).
    pub needs: Vec<String>,
    /// What the user must know (an HTTP package they start themselves).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    #[serde(skip)]
    pub sha: Option<ShaCheck>,
}

impl Candidate {
    /// The argv (or URL and header names) for display; `${NAME}` references stay.
    pub fn shown(&self) -> String {
        match &self.entry.leg {
            Leg::Stdio {
                command, args, env, ..
            } => {
                let mut argv = vec![crate::mcp::client::quote(command)];
                argv.extend(args.iter().map(|a| crate::mcp::client::quote(a)));
                let mut s = argv.join(" ");
                if !env.is_empty() {
                    let names: Vec<&str> = env.keys().map(String::as_str).collect();
                    s.push_str(&format!(" (env: {})", names.join(", ")));
                }
                s
            }
            Leg::Http { url, headers } if headers.is_empty() => url.clone(),
            Leg::Http { url, headers } => {
                let names: Vec<&str> = headers.keys().map(String::as_str).collect();
                format!("{url} (headers: {})", names.join(", "))
            }
        }
    }
}

/// The entry as a `mcpServers`-style object (what `mcp_add` accepts back).
fn entry_json<S: serde::Serializer>(e: &Entry, s: S) -> Result<S::Ok, S::Error> {
    let v = match &e.leg {
        Leg::Stdio {
            command,
            args,
            env,
            cwd,
        } => {
            let mut o = serde_json::json!({"command": command, "args": args});
            if !env.is_empty() {
                o["env"] = serde_json::json!(env);
            }
            if let Some(c) = cwd {
                o["cwd"] = serde_json::json!(c);
            }
            o
        }
        Leg::Http { url, headers } => {
            let mut o = serde_json::json!({"type": "http", "url": url});
            if !headers.is_empty() {
                o["headers"] = serde_json::json!(headers);
            }
            o
        }
    };
    serde::Serialize::serialize(&serde_json::json!({"mcpServers": {&e.name: v}}), s)
}

/// What one step looked at and what came of it.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Evidence {
    pub step: &'static str,
    pub url: String,
    pub outcome: String,
}

impl std::fmt::Display for Evidence {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {} → {}", self.step, self.url, self.outcome)
    }
}

/// A resolved entry with the evidence that led to it.
#[derive(Debug, serde::Serialize)]
pub struct Resolution {
    pub target: String,
    pub source: String,
    /// The step that found it: the registry, server.json, package manifests, the README
    /// or the Glama page.
    pub found_by: &'static str,
    pub chosen: Candidate,
    /// The other candidates at the same step (when `--pick` chose among several).
    pub others: Vec<Candidate>,
    pub evidence: Vec<Evidence>,
}

/// Why no single entry came out.
#[derive(Debug, serde::Serialize)]
#[serde(tag = "failure", rename_all = "lowercase")]
pub enum Failure {
    /// Nothing runnable anywhere; `advice` says what was found that tai does not run.
    Nothing {
        target: String,
        evidence: Vec<Evidence>,
        advice: Vec<String>,
    },
    /// Several candidates at one step, and no (valid) `--pick`.
    Ambiguous {
        target: String,
        step: &'static str,
        candidates: Vec<Candidate>,
        evidence: Vec<Evidence>,
        pick: Option<usize>,
    },
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let evidence = |f: &mut std::fmt::Formatter<'_>, ev: &[Evidence]| {
            writeln!(f, "evidence:")?;
            for (i, e) in ev.iter().enumerate() {
                writeln!(f, "  {}. {e}", i + 1)?;
            }
            Ok(())
        };
        match self {
            Failure::Nothing {
                target,
                evidence: ev,
                advice,
            } => {
                writeln!(f, "could not resolve {target} to a server tai can run")?;
                evidence(f, ev)?;
                for a in advice {
                    writeln!(f, "note: {a}")?;
                }
                write!(
                    f,
                    "what to do: paste the server's config (its mcpServers JSON or Codex TOML) or its command line, e.g. `tai mcp add 'npx -y PACKAGE'`"
                )
            }
            Failure::Ambiguous {
                target,
                step,
                candidates,
                evidence: ev,
                pick,
            } => {
                if let Some(n) = pick {
                    writeln!(
                        f,
                        "--pick {n} is out of range: {step} gave {} candidates",
                        candidates.len()
                    )?;
                }
                writeln!(
                    f,
                    "{target}: {step} gave {} candidates that disagree:",
                    candidates.len()
                )?;
                for (i, c) in candidates.iter().enumerate() {
                    writeln!(f, "  [{}] {}: {}", i + 1, c.origin, c.shown())?;
                }
                evidence(f, ev)?;
                write!(f, "what to do: choose one with --pick N")
            }
        }
    }
}

/// A fetched body, or why not.
pub struct Fetched {
    pub status: u16,
    pub body: Vec<u8>,
}

/// The resolver's only I/O: GET a URL (with an Accept type and a size cap).
pub trait Fetch {
    fn get(&mut self, url: &str, accept: &str, max: usize) -> Result<Fetched, String>;
}

const DOC_MAX: usize = 2 * 1024 * 1024;
const PACKAGE_MAX: usize = 64 * 1024 * 1024;
/// Pages read per registry query (100 servers each).
const REGISTRY_PAGES: usize = 5;

struct Run<'a> {
    target: &'a Target,
    urls: &'a Urls,
    fetch: &'a mut dyn Fetch,
    progress: &'a mut dyn FnMut(&str),
    evidence: Vec<Evidence>,
    advice: Vec<String>,
    /// `package.json`, read once by the server.json step (for `mcpName`) and reused.
    package: Option<sources::PackageJson>,
}

impl Run<'_> {
    fn note(&mut self, step: &'static str, url: &str, outcome: impl Into<String>) {
        self.evidence.push(Evidence {
            step,
            url: url.to_string(),
            outcome: outcome.into(),
        });
    }

    /// GET a text: `Some(text)` on 2xx; otherwise the evidence says what happened.
    fn text(&mut self, step: &'static str, url: &str, accept: &str) -> Option<String> {
        match self.fetch.get(url, accept, DOC_MAX) {
            Ok(f) if (200..300).contains(&f.status) => {
                Some(String::from_utf8_lossy(&f.body).into_owned())
            }
            Ok(f) if f.status == 404 => {
                self.note(step, url, "not found (404)");
                None
            }
            Ok(f) => {
                let head: String = String::from_utf8_lossy(&f.body).chars().take(120).collect();
                let mut outcome = format!("HTTP {}: {}", f.status, head.trim());
                if matches!(f.status, 403 | 429) && url.starts_with(&self.urls.github_api) {
                    outcome.push_str(" (GitHub's anonymous rate limit? set GITHUB_TOKEN)");
                }
                self.note(step, url, outcome);
                None
            }
            Err(e) => {
                self.note(step, url, format!("unreachable: {e}"));
                None
            }
        }
    }

    fn json(&mut self, step: &'static str, url: &str) -> Option<Value> {
        let text = self.text(step, url, "application/json")?;
        match serde_json::from_str(&text) {
            Ok(v) => Some(v),
            Err(e) => {
                self.note(step, url, format!("not JSON: {e}"));
                None
            }
        }
    }

    /// Every server a registry search returns, across pages.
    fn search(&mut self, query: &str) -> Vec<Listed> {
        let mut all = Vec::new();
        let mut cursor: Option<String> = None;
        for _ in 0..REGISTRY_PAGES {
            let mut url = format!(
                "{}/v0.1/servers?search={}&limit=100",
                self.urls.registry,
                encode(query)
            );
            if let Some(c) = &cursor {
                url.push_str(&format!("&cursor={}", encode(c)));
            }
            let Some(v) = self.json("registry", &url) else {
                return all;
            };
            match registry::parse_page(&v) {
                Ok((servers, next)) => {
                    self.note(
                        "registry",
                        &url,
                        format!("{} servers listed", servers.len()),
                    );
                    all.extend(servers);
                    cursor = next;
                }
                Err(e) => {
                    self.note("registry", &url, e);
                    return all;
                }
            }
            if cursor.is_none() {
                return all;
            }
        }
        if cursor.is_some() {
            let url = self.urls.registry.clone();
            self.note(
                "registry",
                &url,
                format!(
                    "search {query:?}: stopped after {REGISTRY_PAGES} pages (more were listed)"
                ),
            );
        }
        all
    }

    /// Registry servers from this repository (narrowed to the URL's folder), active, latest.
    fn registry_candidates(&mut self, found: Vec<Listed>, why: &str) -> Vec<Candidate> {
        let want =
            format!("github.com/{}/{}", self.target.owner, self.target.repo).to_ascii_lowercase();
        let mut mine: Vec<Listed> = found
            .into_iter()
            .filter(|s| {
                s.repository()
                    .is_some_and(|u| registry::repo_key(u) == want)
            })
            .collect();
        // (both searches may list a server: `latest` keeps one per name and version)
        if let Some(sub) = &self.target.subpath {
            let exact: Vec<Listed> = mine
                .iter()
                .filter(|s| s.subfolder() == Some(sub.as_str()))
                .cloned()
                .collect();
            mine = if exact.is_empty() {
                mine.into_iter()
                    .filter(|s| s.subfolder().is_none())
                    .collect()
            } else {
                exact
            };
        }
        let mut out = Vec::new();
        for s in registry::latest(mine) {
            let label = format!("{} {}", s.name(), s.version());
            if s.status != "active" {
                let url = self.urls.registry.clone();
                self.note(
                    "registry",
                    &url,
                    format!("{label} skipped: status {}", s.status),
                );
                continue;
            }
            let mut skipped = Vec::new();
            let cands = registry::candidates(&s, why, &mut skipped);
            for k in skipped {
                let url = self.urls.registry.clone();
                self.note("registry", &url, format!("skipped {k}"));
            }
            for c in cands {
                if let Some(c) = self.checked(c) {
                    out.push(c);
                }
            }
        }
        out
    }

    /// A candidate whose package names a `fileSha256` is kept only when the file matches.
    fn checked(&mut self, c: Candidate) -> Option<Candidate> {
        let Some(sha) = c.sha.clone() else {
            return Some(c);
        };
        let (file_url, actual) = match sha.registry_type.as_str() {
            "npm" => {
                let meta = format!("{}/{}/{}", sha.base_url, sha.identifier, sha.version);
                let tarball = self
                    .json("fileSha256", &meta)?
                    .pointer("/dist/tarball")
                    .and_then(Value::as_str)
                    .map(str::to_string);
                let Some(tarball) = tarball else {
                    self.note(
                        "fileSha256",
                        &meta,
                        "no dist.tarball to check; candidate dropped",
                    );
                    return None;
                };
                match self
                    .fetch
                    .get(&tarball, "application/octet-stream", PACKAGE_MAX)
                {
                    Ok(f) if f.status == 200 => {
                        use sha2::Digest;
                        let digest = crate::entropy::hex(&sha2::Sha256::digest(&f.body));
                        (tarball, vec![digest])
                    }
                    Ok(f) => {
                        self.note(
                            "fileSha256",
                            &tarball,
                            format!("HTTP {}; candidate dropped", f.status),
                        );
                        return None;
                    }
                    Err(e) => {
                        self.note(
                            "fileSha256",
                            &tarball,
                            format!("unreachable: {e}; candidate dropped"),
                        );
                        return None;
                    }
                }
            }
            "pypi" => {
                let meta = format!(
                    "{}/pypi/{}/{}/json",
                    sha.base_url, sha.identifier, sha.version
                );
                let v = self.json("fileSha256", &meta)?;
                let digests = v
                    .get("urls")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .filter_map(|u| u.pointer("/digests/sha256")?.as_str().map(str::to_string))
                    .collect();
                (meta, digests)
            }
            _ => {
                let url = sha.base_url.clone();
                self.note(
                    "fileSha256",
                    &url,
                    format!(
                        "{}: no way to check a {} file; candidate kept",
                        c.origin, sha.registry_type
                    ),
                );
                return Some(c);
            }
        };
        if actual.iter().any(|d| d.eq_ignore_ascii_case(&sha.sha256)) {
            self.note(
                "fileSha256",
                &file_url,
                format!("{}: SHA-256 matches", c.origin),
            );
            Some(c)
        } else {
            self.note(
                "fileSha256",
                &file_url,
                format!(
                    "{}: SHA-256 does not match {}; candidate dropped",
                    c.origin, sha.sha256
                ),
            );
            None
        }
    }

    fn step_registry(&mut self) -> Vec<Candidate> {
        (self.progress)("the MCP registry");
        let t = self.target;
        let mut found = self.search(&t.repo);
        found.extend(self.search(&format!("io.github.{}/", t.owner)));
        let out = self.registry_candidates(found, "registry");
        if out.is_empty() {
            let url = self.urls.registry.clone();
            self.note("registry", &url, "no active server from this repository");
        }
        out
    }

    fn step_server_json(&mut self) -> Vec<Candidate> {
        (self.progress)("server.json");
        let url = self.target.raw(self.urls, "server.json");
        if let Some(v) = self.json("server.json", &url) {
            let listed = registry::from_file(v);
            if listed.status != "active" {
                self.note(
                    "server.json",
                    &url,
                    format!("status {}: skipped", listed.status),
                );
            } else {
                let mut skipped = Vec::new();
                let cands = registry::candidates(&listed, "server.json", &mut skipped);
                for k in &skipped {
                    self.note("server.json", &url, format!("skipped {k}"));
                }
                let cands: Vec<Candidate> =
                    cands.into_iter().filter_map(|c| self.checked(c)).collect();
                if !cands.is_empty() {
                    self.note("server.json", &url, format!("{} candidates", cands.len()));
                    return cands;
                }
            }
        }
        let url = self.target.raw(self.urls, "package.json");
        let Some(text) = self.text("package.json", &url, "application/json") else {
            return Vec::new();
        };
        match sources::package_json(&text) {
            Ok(p) => {
                let mcp_name = p.mcp_name.clone();
                self.package = Some(p);
                if let Some(name) = mcp_name {
                    self.note(
                        "mcpName",
                        &url,
                        format!("mcpName {name}: looked up in the registry"),
                    );
                    let found: Vec<Listed> = self
                        .search(&name)
                        .into_iter()
                        .filter(|s| s.name() == name)
                        .collect();
                    let cands = self.registry_candidates(found, "registry (mcpName)");
                    if !cands.is_empty() {
                        return cands;
                    }
                    let reg = self.urls.registry.clone();
                    self.note(
                        "mcpName",
                        &reg,
                        format!("{name}: no active registry entry from this repository"),
                    );
                }
            }
            Err(e) => self.note("package.json", &url, e),
        }
        Vec::new()
    }

    fn step_manifests(&mut self) -> Vec<Candidate> {
        (self.progress)("package manifests");
        if let Some(p) = self.package.take() {
            let url = self.target.raw(self.urls, "package.json");
            match sources::npm_candidates(&p) {
                Ok(c) => {
                    self.note(
                        "package.json",
                        &url,
                        format!("{} (bin: {})", p.name, p.bins.join(", ")),
                    );
                    return c;
                }
                Err(e) => self.note("package.json", &url, e),
            }
        }
        let url = self.target.raw(self.urls, "pyproject.toml");
        if let Some(text) = self.text("pyproject.toml", &url, "text/plain") {
            match sources::pyproject_candidates(&text) {
                Ok(c) => {
                    self.note("pyproject.toml", &url, format!("{} scripts", c.len()));
                    return c;
                }
                Err(e) => self.note("pyproject.toml", &url, e),
            }
        }
        let url = self.target.raw(self.urls, "Cargo.toml");
        if let Some(text) = self.text("Cargo.toml", &url, "text/plain") {
            match sources::cargo_advice(&text, &self.target.owner, &self.target.repo) {
                Ok(advice) => {
                    self.note("Cargo.toml", &url, "a Rust binary: advice only, not run");
                    self.advice.push(advice);
                }
                Err(e) => self.note("Cargo.toml", &url, e),
            }
        }
        Vec::new()
    }

    fn step_readme(&mut self) -> Vec<Candidate> {
        (self.progress)("the README");
        let t = self.target;
        let mut url = format!(
            "{}/repos/{}/{}/readme",
            self.urls.github_api, t.owner, t.repo
        );
        if let Some(p) = &t.subpath {
            url.push_str(&format!("/{p}"));
        }
        if let Some(r) = &t.git_ref {
            url.push_str(&format!("?ref={}", encode(r)));
        }
        let Some(md) = self.text("README", &url, "application/vnd.github.raw") else {
            return Vec::new();
        };
        let (cands, notes) = sources::readme_candidates(&md);
        for n in notes {
            self.note("README", &url, n);
        }
        self.note("README", &url, format!("{} candidates", cands.len()));
        cands
    }

    fn step_glama(&mut self) -> Vec<Candidate> {
        (self.progress)("the Glama page");
        let t = self.target;
        let url = format!("{}/mcp/servers/@{}/{}", self.urls.glama, t.owner, t.repo);
        let Some(page) = self.text("Glama", &url, "text/html") else {
            return Vec::new();
        };
        let text = crate::html_text::html_to_text(&page);
        let (cands, notes) = sources::page_candidates(&text, "Glama page");
        for n in notes {
            self.note("Glama", &url, n);
        }
        self.note("Glama", &url, format!("{} candidates", cands.len()));
        cands
    }
}

/// `a b/c` → `a%20b%2Fc` (a query value).
fn encode(s: &str) -> String {
    let mut out = String::new();
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || b"-_.~".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// [`resolve`] over the network with tai's HTTP agent; `GITHUB_TOKEN` (from `env`) goes
/// to the GitHub API only.
pub fn resolve_online(
    target: &Target,
    urls: &Urls,
    pick: Option<usize>,
    env: &dyn Fn(&str) -> Option<String>,
    progress: &mut dyn FnMut(&str),
) -> Result<Resolution, Failure> {
    let mut fetch = fetch::HttpFetch::new(&urls.github_api, env("GITHUB_TOKEN"));
    resolve(target, urls, &mut fetch, pick, progress)
}

impl Resolution {
    /// What the user reads before consenting: where the entry came from, what it runs,
    /// and what it still needs.
    pub fn notes(&self) -> Vec<String> {
        let c = &self.chosen;
        let mut notes = vec![format!(
            "{} resolved by {}: {}",
            self.target,
            c.origin,
            c.shown()
        )];
        if !self.others.is_empty() {
            notes.push(format!(
                "picked 1 of {} candidates (see `tai mcp resolve URL`)",
                self.others.len() + 1
            ));
        }
        if let Some(n) = &c.note {
            notes.push(n.clone());
        }
        for var in &c.needs {
            notes.push(match var.strip_prefix("input:") {
                Some(id) => format!("it needs ${{{var}}}: `tai vault secret set {id}`"),
                None => format!(
                    "it needs ${{{var}}}: export {var}=..., or `tai vault secret set {var}`"
                ),
            });
        }
        notes
    }
}

/// The `${NAME}` references an entry still needs (those without a default), wherever
/// they came from (a registry input, a README's env block).
fn references(e: &Entry) -> Vec<String> {
    let nothing = |_: &str| None;
    let src = crate::mcp_servers::expand::Sources {
        env: &nothing,
        secret: &nothing,
    };
    let texts: Vec<&String> = match &e.leg {
        Leg::Stdio {
            command,
            args,
            env,
            cwd,
        } => std::iter::once(command)
            .chain(args)
            .chain(env.values())
            .chain(cwd)
            .collect(),
        Leg::Http { url, headers } => std::iter::once(url).chain(headers.values()).collect(),
    };
    let mut out: Vec<String> = Vec::new();
    for t in texts {
        for m in crate::mcp_servers::expand::expand(t, &src).missing {
            if !out.contains(&m) {
                out.push(m);
            }
        }
    }
    out
}

/// The steps in order, each named as failures and `found_by` name it.
type Step = fn(&mut Run) -> Vec<Candidate>;
const STEPS: [(&str, Step); 5] = [
    ("the registry", |r| r.step_registry()),
    ("server.json", |r| r.step_server_json()),
    ("package manifests", |r| r.step_manifests()),
    ("the README", |r| r.step_readme()),
    ("the Glama page", |r| r.step_glama()),
];

/// Resolve a repository to one entry. `pick` (1-based) chooses among disagreeing
/// candidates of the step that found them; `progress` hears each step's name.
pub fn resolve(
    target: &Target,
    urls: &Urls,
    fetch: &mut dyn Fetch,
    pick: Option<usize>,
    progress: &mut dyn FnMut(&str),
) -> Result<Resolution, Failure> {
    let mut run = Run {
        target,
        urls,
        fetch,
        progress,
        evidence: Vec::new(),
        advice: Vec::new(),
        package: None,
    };
    let mut found: Option<(&'static str, Vec<Candidate>)> = None;
    for (step, look) in STEPS {
        let mut cands = sources::dedupe(look(&mut run));
        for c in &mut cands {
            for r in references(&c.entry) {
                if !c.needs.contains(&r) {
                    c.needs.push(r);
                }
            }
        }
        if !cands.is_empty() {
            found = Some((step, cands));
            break;
        }
    }
    let name = target.display();
    let Some((step, mut cands)) = found else {
        return Err(Failure::Nothing {
            target: name,
            evidence: run.evidence,
            advice: run.advice,
        });
    };
    let index = match (cands.len(), pick) {
        (1, None | Some(1)) => 0,
        (n, Some(k)) if (1..=n).contains(&k) => k - 1,
        (_, pick) => {
            return Err(Failure::Ambiguous {
                target: name,
                step,
                candidates: cands,
                evidence: run.evidence,
                pick,
            });
        }
    };
    let chosen = cands.remove(index);
    Ok(Resolution {
        target: name,
        source: target.source(),
        found_by: step,
        chosen,
        others: cands,
        evidence: run.evidence,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_from_urls() {
        let t = |owner: &str, repo: &str, r: Option<&str>, sub: Option<&str>| Target {
            owner: owner.into(),
            repo: repo.into(),
            git_ref: r.map(Into::into),
            subpath: sub.map(Into::into),
        };
        let table = [
            ("https://github.com/o/r", Some(t("o", "r", None, None))),
            ("github.com/o/r.git", Some(t("o", "r", None, None))),
            ("http://www.github.com/o/r/", Some(t("o", "r", None, None))),
            (
                "https://github.com/o/r#readme",
                Some(t("o", "r", None, None)),
            ),
            (
                "https://github.com/o/r?tab=readme",
                Some(t("o", "r", None, None)),
            ),
            (
                "https://github.com/o/r/tree/main",
                Some(t("o", "r", Some("main"), None)),
            ),
            (
                "https://github.com/o/r/tree/v2/src/a/b",
                Some(t("o", "r", Some("v2"), Some("src/a/b"))),
            ),
            (
                "https://github.com/o/r/blob/main/src/a/README.md",
                Some(t("o", "r", Some("main"), Some("src/a"))),
            ),
            (
                "https://github.com/o/r/issues/3",
                Some(t("o", "r", None, None)),
            ),
            ("https://github.com/o", None),
            ("https://gitlab.com/o/r", None),
            ("npx -y github.com/o/r", None),
            ("https://github.com/o/r$x", None),
        ];
        for (url, want) in table {
            assert_eq!(Target::parse(url), want, "{url}");
        }
        let mono = Target::parse("https://github.com/o/r/tree/dev/pkgs/x").unwrap();
        assert_eq!(
            mono.raw(&Urls::default(), "server.json"),
            "https://raw.githubusercontent.com/o/r/dev/pkgs/x/server.json"
        );
        assert_eq!(mono.source(), "github:o/r");
        assert_eq!(encode("io.github.o/ x"), "io.github.o%2F%20x");
    }
}
