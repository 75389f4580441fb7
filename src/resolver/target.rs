//! The resolver's input: a GitHub URL parsed to a repository (and ref and folder), and the
//! bases ([`Urls`]) every step reads from. Pure: text in, values out.

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

    pub(super) fn raw(&self, urls: &Urls, file: &str) -> String {
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
    }
}
