//! The resolver's steps, in order (the registry API, `server.json`, package manifests, the
//! README, the Glama page): each reads through [`Fetch`] and records what it saw as
//! [`Evidence`], so a failure can list every step's evidence.

use serde_json::Value;

use super::registry::{self, Listed};
use super::{Candidate, Evidence, Fetch, Target, Urls, sources};

use crate::limits::{RESOLVER_DOC_MAX, RESOLVER_PACKAGE_MAX, RESOLVER_REGISTRY_PAGES};

pub(super) struct Run<'a> {
    pub(super) target: &'a Target,
    pub(super) urls: &'a Urls,
    pub(super) fetch: &'a mut dyn Fetch,
    pub(super) progress: &'a mut dyn FnMut(&str),
    pub(super) evidence: Vec<Evidence>,
    pub(super) advice: Vec<String>,
    /// `package.json`, read once by the server.json step (for `mcpName`) and reused.
    pub(super) package: Option<sources::PackageJson>,
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
        match self.fetch.get(url, accept, RESOLVER_DOC_MAX) {
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
        for _ in 0..RESOLVER_REGISTRY_PAGES {
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
                    "search {query:?}: stopped after {RESOLVER_REGISTRY_PAGES} pages (more were listed)"
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
                    .get(&tarball, "application/octet-stream", RESOLVER_PACKAGE_MAX)
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

/// The steps in order, each named as failures and `found_by` name it.
type Step = fn(&mut Run) -> Vec<Candidate>;
pub(super) const STEPS: [(&str, Step); 5] = [
    ("the registry", |r| r.step_registry()),
    ("server.json", |r| r.step_server_json()),
    ("package manifests", |r| r.step_manifests()),
    ("the README", |r| r.step_readme()),
    ("the Glama page", |r| r.step_glama()),
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn query_values_are_percent_encoded() {
        assert_eq!(encode("io.github.o/ x"), "io.github.o%2F%20x");
    }
}
