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
mod steps;
mod target;

use crate::mcp_servers::normalize::{Entry, Leg};
use registry::ShaCheck;
use steps::{Run, STEPS};
pub use target::{Target, Urls};

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
