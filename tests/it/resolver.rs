//! The GitHub URL resolver against `tai-stub-http-fixtures` (canned registry answers and
//! repository files, offline): each source, the fall-through order, disagreement and
//! `--pick`, the evidence of a failure, and `tai mcp add URL` end to end.

use serde_json::{Value, json};

use crate::support::{FixturesStub, HttpStub, Tai, TempDir, stub_stdio};

/// A repository world: files under a folder, served by the fixtures stub.
struct World {
    dir: TempDir,
}

impl World {
    fn new(tag: &str) -> World {
        World {
            dir: TempDir::new(tag),
        }
    }

    fn file(&self, rel: &str, text: &str) -> &World {
        let path = self.dir.path().join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
        self
    }

    fn registry(&self, items: Value) -> &World {
        self.file("registry.json", &items.to_string())
    }

    /// Serve the world and point a fresh tai at it.
    fn serve(&self, tag: &str) -> (Tai, FixturesStub) {
        let stub = FixturesStub::start(self.dir.path());
        let mut t = Tai::new(tag);
        point(&mut t, &stub.url);
        (t, stub)
    }
}

fn point(t: &mut Tai, base: &str) {
    t.env("TAI_REGISTRY_URL", base)
        .env("TAI_GITHUB_API_URL", &format!("{base}/api"))
        .env("TAI_GITHUB_RAW_URL", &format!("{base}/raw"))
        .env("TAI_GLAMA_URL", &format!("{base}/glama"));
}

/// One registry listing item.
fn item(name: &str, version: &str, repo: &str, status: &str, latest: bool, body: Value) -> Value {
    let mut server = json!({"name": name, "version": version, "description": "d",
                            "repository": {"url": format!("https://github.com/{repo}"), "source": "github"}});
    for (k, v) in body.as_object().unwrap() {
        server[k] = v.clone();
    }
    json!({"server": server, "_meta": {"io.modelcontextprotocol.registry/official":
        {"status": status, "isLatest": latest}}})
}

fn resolve_json(t: &Tai, url: &str, extra: &[&str]) -> Value {
    let mut args = vec!["mcp", "resolve", url, "--json"];
    args.extend(extra);
    let run = t.run(&args);
    serde_json::from_str(run.ok()).unwrap_or_else(|e| panic!("{e}: {run:?}"))
}

/// The chosen entry's one server object.
fn chosen(v: &Value) -> (&str, &Value) {
    let servers = v["chosen"]["entry"]["mcpServers"].as_object().unwrap();
    let (name, entry) = servers.iter().next().unwrap();
    (name.as_str(), entry)
}

fn argv(entry: &Value) -> String {
    match entry["command"].as_str() {
        Some(c) => {
            let mut v = vec![c.to_string()];
            v.extend(
                entry["args"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|a| a.as_str().unwrap().to_string()),
            );
            v.join(" ")
        }
        None => entry["url"].as_str().unwrap().to_string(),
    }
}

fn steps(v: &Value) -> Vec<String> {
    v["evidence"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["step"].as_str().unwrap().to_string())
        .collect()
}

/// `tai --yolo mcp add URL`, which must fail; its stderr.
fn add_fails(t: &Tai, url: &str) -> String {
    t.run(&["--yolo", "mcp", "add", url]).fails(1).to_string()
}

fn rows(t: &Tai) -> i64 {
    t.raw_db()
        .query_row("SELECT count(*) FROM mcp_servers", [], |r| r.get(0))
        .unwrap()
}

#[test]
fn a_registry_hit_with_npm_follows_pages_and_leaves_secrets_as_references() {
    let w = World::new("resolve-npm");
    let npm = |v: &str| {
        json!({"packages": [{"registryType": "npm", "identifier": "@acme/weather", "version": v,
            "transport": {"type": "stdio"},
            "environmentVariables": [{"name": "WEATHER_KEY", "isRequired": true, "isSecret": true},
                                     {"name": "UNITS", "default": "metric"}]}]})
    };
    w.registry(json!([
        item(
            "io.github.acme/weather",
            "1.1.0",
            "acme/weather",
            "active",
            false,
            npm("1.1.0")
        ),
        item(
            "io.github.other/weather",
            "9.0.0",
            "other/weather",
            "active",
            true,
            npm("9.0.0")
        ),
        item(
            "io.github.acme/weather",
            "1.2.0",
            "acme/weather",
            "active",
            true,
            npm("1.2.0")
        ),
        item(
            "io.github.acme/unrelated",
            "1.0.0",
            "acme/unrelated",
            "active",
            true,
            npm("1.0.0")
        ),
    ]));
    let (t, stub) = w.serve("resolve-npm");
    let v = resolve_json(&t, "https://github.com/acme/weather", &[]);
    let (name, entry) = chosen(&v);
    assert_eq!(name, "weather");
    assert_eq!(argv(entry), "npx -y @acme/weather@1.2.0");
    assert_eq!(
        entry["env"],
        json!({"WEATHER_KEY": "${WEATHER_KEY}", "UNITS": "metric"})
    );
    assert_eq!(v["chosen"]["needs"], json!(["WEATHER_KEY"]));
    assert_eq!(v["source"], "github:acme/weather");
    let paths = stub.paths();
    // three servers match "weather": two pages of two, the second asked for by cursor
    assert!(
        paths
            .iter()
            .any(|p| p.contains("search=weather") && p.contains("cursor=2")),
        "{paths:?}"
    );
    assert!(
        paths.iter().any(|p| p.contains("search=io.github.acme%2F")),
        "{paths:?}"
    );
    // the registry answered: no repository file was read
    assert!(
        paths.iter().all(|p| p.starts_with("/v0.1/servers")),
        "{paths:?}"
    );
    // human output names the origin and the way to add it
    let human = t
        .run(&["mcp", "resolve", "github.com/acme/weather"])
        .ok()
        .to_string();
    assert!(
        human.contains("runs: npx -y @acme/weather@1.2.0 (env: UNITS, WEATHER_KEY)"),
        "{human}"
    );
    assert!(human.contains("it needs ${WEATHER_KEY}"), "{human}");
    // adding it: the missing secret refuses the spawn with what to do, nothing stored
    let err = add_fails(&t, "https://github.com/acme/weather");
    assert!(
        err.contains("unresolved ${WEATHER_KEY} (export WEATHER_KEY"),
        "{err}"
    );
    assert_eq!(rows(&t), 0);
}

#[test]
fn registry_pypi_and_sha256_checks() {
    let w = World::new("resolve-pypi");
    w.registry(json!([item("io.github.acme/time", "0.3.0", "acme/time", "active", true,
        json!({"packages": [{"registryType": "pypi", "identifier": "mcp-time", "version": "0.3.0"}]}))]));
    let (t, _stub) = w.serve("resolve-pypi");
    let v = resolve_json(&t, "https://github.com/acme/time", &[]);
    assert_eq!(argv(chosen(&v).1), "uvx mcp-time==0.3.0");

    // fileSha256: the npm tarball matches and is kept; the PyPI digest does not and is dropped
    use sha2::Digest;
    let w = World::new("resolve-sha");
    let tarball = b"pretend this is a tarball";
    let good = tai::testing::entropy::hex(&sha2::Sha256::digest(tarball));
    let stub = FixturesStub::start(w.dir.path());
    let base = stub.url.clone();
    w.file("npm/tarballs/hash-1.0.0.tgz", std::str::from_utf8(tarball).unwrap())
        .file("npm/hash/1.0.0", &json!({"dist": {"tarball": format!("{base}/npm/tarballs/hash-1.0.0.tgz")}}).to_string())
        .file("pypi/pypi/hash-py/1.0.0/json", &json!({"urls": [{"digests": {"sha256": "0".repeat(64)}}]}).to_string())
        .registry(json!([item("io.github.acme/hash", "1.0.0", "acme/hash", "active", true, json!({"packages": [
            {"registryType": "npm", "registryBaseUrl": format!("{base}/npm"), "identifier": "hash", "version": "1.0.0", "fileSha256": good},
            {"registryType": "pypi", "registryBaseUrl": format!("{base}/pypi"), "identifier": "hash-py", "version": "1.0.0", "fileSha256": "1".repeat(64)}
        ]}))]));
    let mut t = Tai::new("resolve-sha");
    point(&mut t, &base);
    let v = resolve_json(&t, "https://github.com/acme/hash", &[]);
    assert_eq!(argv(chosen(&v).1), "npx -y hash@1.0.0");
    let outcomes = v["evidence"].to_string();
    assert!(outcomes.contains("SHA-256 matches"), "{outcomes}");
    assert!(outcomes.contains("SHA-256 does not match"), "{outcomes}");
}

#[test]
fn a_registry_remote_is_added_end_to_end_with_its_github_source() {
    let server = HttpStub::start(&["--era", "dual"]);
    let w = World::new("resolve-remote");
    w.registry(json!([item(
        "io.github.acme/remote",
        "1.0.0",
        "acme/remote",
        "active",
        true,
        json!({"remotes": [{"type": "streamable-http", "url": server.url}]})
    )]));
    let (t, _stub) = w.serve("resolve-remote");
    let run = t.run(&["--auto", "mcp", "add", "https://github.com/acme/remote"]);
    assert!(run.ok().contains("added remote (http"), "{run:?}");
    assert!(
        run.stderr.contains(&format!(
            "resolved by registry io.github.acme/remote 1.0.0, remote 1: {}",
            server.url
        )),
        "{run:?}"
    );
    assert!(
        run.stderr
            .contains("--auto approved: connect to the MCP server \"remote\""),
        "{run:?}"
    );
    let (source, url): (String, String) = t
        .raw_db()
        .query_row("SELECT source, url FROM mcp_servers", [], |r| {
            Ok((r.get(0)?, r.get(1)?))
        })
        .unwrap();
    assert_eq!(
        (source.as_str(), url.as_str()),
        ("github:acme/remote", server.url.as_str())
    );
}

#[test]
fn deprecated_entries_are_skipped_and_each_source_is_tried_in_order() {
    let pkg = r#"{"name": "@acme/srv", "bin": {"srv": "dist/index.js"}}"#;
    // (label, repository files, the argv resolved, the step that found it)
    type Case<'a> = (&'a str, &'a [(&'a str, &'a str)], &'a str, &'a str);
    let cases: &[Case] = &[
        (
            "server.json",
            &[
                (
                    "server.json",
                    r#"{"name": "io.github.acme/srv", "version": "2.0.0", "packages": [{"registryType": "oci", "identifier": "ghcr.io/acme/srv", "version": "2.0.0", "transport": {"type": "stdio"}}]}"#,
                ),
                ("package.json", pkg),
            ],
            "docker run -i --rm ghcr.io/acme/srv:2.0.0",
            "server.json",
        ),
        (
            "package.json",
            &[("package.json", pkg)],
            "npx -y @acme/srv",
            "package manifests",
        ),
        (
            "pyproject.toml",
            &[(
                "pyproject.toml",
                "[project]\nname = \"acme-srv\"\n[project.scripts]\nacme-srv = \"acme_srv:main\"\n",
            )],
            "uvx acme-srv",
            "package manifests",
        ),
        (
            "README",
            &[(
                "README",
                "# srv\n\nRun it:\n\n```json\n{\"mcpServers\": {\"srv\": {\"command\": \"npx\", \"args\": [\"-y\", \"srv-from-readme\"]}}}\n```\n",
            )],
            "npx -y srv-from-readme",
            "the README",
        ),
        (
            "Glama",
            &[(
                "glama",
                "<html><body><h2>Install</h2><pre><code>{\n  &quot;mcpServers&quot;: {\"srv\": {\"command\": \"uvx\", \"args\": [\"srv-from-glama\"]}}\n}</code></pre></body></html>",
            )],
            "uvx srv-from-glama",
            "the Glama page",
        ),
    ];
    for (label, files, want, step) in cases {
        let w = World::new("resolve-order");
        // the registry holds this repository's server, deprecated: it is skipped
        w.registry(json!([item(
            "io.github.acme/srv",
            "1.0.0",
            "acme/srv",
            "deprecated",
            true,
            json!({"packages": [{"registryType": "npm", "identifier": "old", "version": "1.0.0"}]})
        )]));
        for (file, text) in *files {
            let rel = match *file {
                "README" => "api/repos/acme/srv/readme".to_string(),
                "glama" => "glama/mcp/servers/@acme/srv".to_string(),
                f => format!("raw/acme/srv/HEAD/{f}"),
            };
            w.file(&rel, text);
        }
        let (t, _stub) = w.serve("resolve-order");
        let v = resolve_json(&t, "https://github.com/acme/srv", &[]);
        assert_eq!(argv(chosen(&v).1), *want, "{label}: {v:#}");
        assert_eq!(v["found_by"], *step, "{label}");
        let ev = v["evidence"].to_string();
        assert!(
            ev.contains("io.github.acme/srv 1.0.0 skipped: status deprecated"),
            "{label}: {ev}"
        );
        assert_eq!(v["source"], "github:acme/srv", "{label}");
        // earlier sources were looked at and said so
        let seen = steps(&v);
        assert!(seen.contains(&"registry".to_string()), "{label}: {seen:?}");
        if *label == "Glama" {
            for s in [
                "server.json",
                "package.json",
                "pyproject.toml",
                "Cargo.toml",
                "README",
            ] {
                assert!(seen.contains(&s.to_string()), "{label} lacks {s}: {seen:?}");
            }
        }
    }
}

#[test]
fn disagreeing_candidates_fail_with_both_until_one_is_picked() {
    let w = World::new("resolve-pick");
    w.registry(json!([])).file(
        "api/repos/acme/two/readme",
        "## npx\n```json\n{\"mcpServers\": {\"two\": {\"command\": \"npx\", \"args\": [\"-y\", \"two-mcp\"], \"env\": {\"TOKEN\": \"${TWO_TOKEN}\", \"MODE\": \"${TWO_MODE:-fast}\"}}}}\n```\n## Docker\n```json\n{\"mcpServers\": {\"two\": {\"command\": \"docker\", \"args\": [\"run\", \"-i\", \"--rm\", \"acme/two\"]}}}\n```\n",
    );
    let (t, _stub) = w.serve("resolve-pick");
    let err = t
        .run(&["mcp", "resolve", "https://github.com/acme/two"])
        .fails(1)
        .to_string();
    assert!(
        err.contains("the README gave 2 candidates that disagree"),
        "{err}"
    );
    assert!(
        err.contains("[1] README block 1 (json) server \"two\": npx -y two-mcp (env: MODE, TOKEN)"),
        "{err}"
    );
    assert!(
        err.contains("[2] README block 2 (json) server \"two\": docker run -i --rm acme/two"),
        "{err}"
    );
    assert!(err.contains("choose one with --pick N"), "{err}");
    let run = t.run(&["mcp", "resolve", "https://github.com/acme/two", "--json"]);
    let f: Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(
        (
            f["failure"].as_str(),
            f["candidates"].as_array().map(Vec::len)
        ),
        (Some("ambiguous"), Some(2))
    );
    let v = resolve_json(&t, "https://github.com/acme/two", &["--pick", "2"]);
    assert_eq!(argv(chosen(&v).1), "docker run -i --rm acme/two");
    assert_eq!(v["others"].as_array().unwrap().len(), 1);
    let human = t
        .run(&[
            "mcp",
            "resolve",
            "https://github.com/acme/two",
            "--pick",
            "2",
        ])
        .ok()
        .to_string();
    assert!(
        human.contains("runs: docker run -i --rm acme/two")
            && human.contains("also: [1] README block 1 (json)")
            && human.contains("add it with: tai mcp add https://github.com/acme/two --pick 2"),
        "{human}"
    );
    // a README's ${NAME} references are what the entry needs
    let v = resolve_json(&t, "https://github.com/acme/two", &["--pick", "1"]);
    assert_eq!(v["chosen"]["needs"], json!(["TWO_TOKEN"]));
    let err = t
        .run(&[
            "mcp",
            "resolve",
            "https://github.com/acme/two",
            "--pick",
            "3",
        ])
        .fails(1)
        .to_string();
    assert!(err.contains("--pick 3 is out of range"), "{err}");
    // add refuses as well, and stores nothing
    let err = add_fails(&t, "https://github.com/acme/two");
    assert!(err.contains("disagree"), "{err}");
    assert_eq!(rows(&t), 0);
}

#[test]
fn nothing_found_lists_every_step_with_its_url_and_outcome() {
    let w = World::new("resolve-none");
    w.registry(json!([]))
        .file(
            "raw/acme/rusty/HEAD/Cargo.toml",
            "[package]\nname = \"rusty-mcp\"\nversion = \"0.1.0\"\n",
        )
        .file(
            "api/repos/acme/rusty/readme",
            r#"{"message": "API rate limit exceeded"}"#,
        )
        .file("api/repos/acme/rusty/readme.status", "403 Forbidden");
    let (mut t, stub) = w.serve("resolve-none");
    let token = "ghp_fixture_token_never_printed_0123456789";
    t.env("GITHUB_TOKEN", token);
    let run = t.run(&["mcp", "resolve", "https://github.com/acme/rusty", "--json"]);
    assert_eq!(run.code, 1, "{run:?}");
    let f: Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(f["failure"], "nothing");
    assert!(
        f["error"]
            .as_str()
            .is_some_and(|e| e.contains("could not resolve")),
        "{f}"
    );
    let ev = f["evidence"].as_array().unwrap();
    let base = &stub.url;
    for (step, url) in [
        (
            "registry",
            format!("{base}/v0.1/servers?search=rusty&limit=100"),
        ),
        (
            "registry",
            format!("{base}/v0.1/servers?search=io.github.acme%2F&limit=100"),
        ),
        (
            "server.json",
            format!("{base}/raw/acme/rusty/HEAD/server.json"),
        ),
        (
            "package.json",
            format!("{base}/raw/acme/rusty/HEAD/package.json"),
        ),
        (
            "pyproject.toml",
            format!("{base}/raw/acme/rusty/HEAD/pyproject.toml"),
        ),
        (
            "Cargo.toml",
            format!("{base}/raw/acme/rusty/HEAD/Cargo.toml"),
        ),
        ("README", format!("{base}/api/repos/acme/rusty/readme")),
        ("Glama", format!("{base}/glama/mcp/servers/@acme/rusty")),
    ] {
        assert!(
            ev.iter().any(|e| e["step"] == step
                && e["url"] == url
                && !e["outcome"].as_str().unwrap().is_empty()),
            "no {step} evidence for {url}: {ev:#?}"
        );
    }
    assert!(
        f["advice"][0]
            .as_str()
            .unwrap()
            .contains("cargo install --git https://github.com/acme/rusty rusty-mcp")
    );
    let human = t
        .run(&["mcp", "resolve", "https://github.com/acme/rusty"])
        .fails(1)
        .to_string();
    assert!(
        human.contains("could not resolve github.com/acme/rusty"),
        "{human}"
    );
    assert!(
        human.contains("Glama: ") && human.contains("not found (404)"),
        "{human}"
    );
    assert!(
        human.contains("HTTP 403: {\"message\": \"API rate limit exceeded\"} (GitHub's anonymous rate limit? set GITHUB_TOKEN)"),
        "{human}"
    );
    assert!(
        human.contains("what to do: paste the server's config"),
        "{human}"
    );
    // the token went to the GitHub API only, and was never printed
    for l in crate::support::stub_log(&stub.log) {
        let api = l["path"].as_str().unwrap().starts_with("/api/");
        assert_eq!(l["authorization"].as_bool(), Some(api), "{l}");
    }
    assert!(!run.stdout.contains(token) && !run.stderr.contains(token) && !human.contains(token));
}

#[test]
fn a_subpath_narrows_a_monorepo() {
    let w = World::new("resolve-mono");
    let server = |n: &str, sub: &str| {
        let mut i = item(
            &format!("io.github.acme/{n}"),
            "1.0.0",
            "acme/servers",
            "active",
            true,
            json!({"packages": [{"registryType": "npm", "identifier": format!("@acme/{n}"), "version": "1.0.0"}]}),
        );
        i["server"]["repository"]["subfolder"] = json!(sub);
        i
    };
    w.registry(json!([server("alpha", "src/alpha"), server("beta", "src/beta")]))
        .file("raw/acme/tools/main/pkgs/x/server.json", r#"{"name": "io.github.acme/x", "version": "1.0.0", "packages": [{"registryType": "npm", "identifier": "x-mcp", "version": "1.0.0"}]}"#);
    let (t, _stub) = w.serve("resolve-mono");
    let err = t
        .run(&["mcp", "resolve", "https://github.com/acme/servers"])
        .fails(1)
        .to_string();
    assert!(err.contains("the registry gave 2 candidates"), "{err}");
    let v = resolve_json(
        &t,
        "https://github.com/acme/servers/tree/main/src/beta",
        &[],
    );
    assert_eq!(argv(chosen(&v).1), "npx -y @acme/beta@1.0.0");
    // the folder also narrows where repository files are read
    let v = resolve_json(
        &t,
        "https://github.com/acme/tools/blob/main/pkgs/x/README.md",
        &[],
    );
    assert_eq!(argv(chosen(&v).1), "npx -y x-mcp@1.0.0");
}

fn readme_world(tag: &str, entry: Value) -> World {
    let w = World::new(tag);
    w.registry(json!([])).file(
        "api/repos/acme/tool/readme",
        &format!(
            "# tool\n\n```json\n{}\n```\n",
            json!({"mcpServers": {"tool": entry}})
        ),
    );
    w
}

#[test]
fn add_resolves_shows_the_argv_verifies_and_stores_the_github_source() {
    let w = readme_world(
        "resolve-e2e",
        json!({"command": stub_stdio(), "args": ["--era", "dual"]}),
    );
    let (t, _stub) = w.serve("resolve-e2e");
    let run = t.run(&["--auto", "mcp", "add", "https://github.com/acme/tool"]);
    assert!(run.ok().contains("added tool (stdio"), "{run:?}");
    let shown = format!(
        "resolved by README block 1 (json) server \"tool\": {} --era dual",
        stub_stdio()
    );
    assert!(run.stderr.contains(&shown), "{run:?}");
    assert!(
        run.stderr
            .contains("resolving github.com/acme/tool: the README"),
        "{run:?}"
    );
    let source: String = t
        .raw_db()
        .query_row(
            "SELECT source FROM mcp_servers WHERE name = 'tool'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(source, "github:acme/tool");
    // --name renames; --pick is for GitHub URLs only
    let run = t.run(&[
        "--yolo",
        "mcp",
        "add",
        "https://github.com/acme/tool",
        "--name",
        "tool2",
        "--json",
    ]);
    let v: Value = serde_json::from_str(run.ok()).unwrap();
    assert_eq!(v["added"][0]["name"], "tool2");
    let err = t
        .run(&["mcp", "add", "uvx x", "--pick", "1"])
        .fails(1)
        .to_string();
    assert!(
        err.contains("--pick chooses among a GitHub URL's candidates"),
        "{err}"
    );
}

#[test]
fn a_failed_live_probe_stores_nothing() {
    let w = readme_world("resolve-probe-fail", json!({"command": "/bin/false"}));
    let (t, _stub) = w.serve("resolve-probe-fail");
    let err = add_fails(&t, "https://github.com/acme/tool");
    assert!(
        err.contains("the live check failed, nothing was stored"),
        "{err}"
    );
    assert_eq!(rows(&t), 0);
}

#[test]
fn the_agent_resolves_and_adds_through_its_tools() {
    use tai::testing::approval::Approver;
    use tai::testing::config::{self, FlagSettings, Paths};
    use tai::testing::tools::{self, ToolContext};

    struct Yes(Vec<String>);
    impl Approver for Yes {
        fn approve(&mut self, what: &str, detail: &str) -> Result<bool, String> {
            self.0.push(format!("{what}\n{detail}"));
            Ok(true)
        }
    }
    let w = readme_world(
        "resolve-agent",
        json!({"command": stub_stdio(), "args": ["--era", "legacy"]}),
    );
    let stub = FixturesStub::start(w.dir.path());
    let dir = TempDir::new("resolve-agent-home");
    let mut store = tai::testing::vault::Store::open(&dir.path().join("vault.db")).unwrap();
    let base = stub.url.clone();
    let env = move |k: &str| match k {
        "TAI_REGISTRY_URL" => Some(base.clone()),
        "TAI_GITHUB_API_URL" => Some(format!("{base}/api")),
        "TAI_GITHUB_RAW_URL" => Some(format!("{base}/raw")),
        "TAI_GLAMA_URL" => Some(format!("{base}/glama")),
        _ => None,
    };
    let paths = Paths {
        home: dir.path().into(),
        config: dir.path().join("c.toml"),
    };
    let cfg = config::resolve(&paths, None, &env, &FlagSettings::default(), None, |_| None);
    let mut yes = Yes(Vec::new());
    let mut call = |store: &mut tai::testing::vault::Store, name: &str, a: Value| {
        let mut ctx = ToolContext {
            store,
            config: &cfg,
            approver: &mut yes,
            env: &env,
        };
        tools::dispatch(name, &mut ctx, a.as_object().unwrap()).expect("a known tool")
    };
    let out = call(
        &mut store,
        "mcp_resolve",
        json!({"url": "https://github.com/acme/tool"}),
    );
    assert!(!out.is_error, "{}", out.text);
    let v: Value = serde_json::from_str(&out.text).unwrap();
    assert_eq!(argv(chosen(&v).1), format!("{} --era legacy", stub_stdio()));
    let out = call(
        &mut store,
        "mcp_add",
        json!({"source": "https://github.com/acme/tool"}),
    );
    assert!(!out.is_error, "{}", out.text);
    let v: Value = serde_json::from_str(&out.text).unwrap();
    assert_eq!(v["added"]["name"], "tool");
    let row = tai::testing::mcp_servers::store::load(&store, "tool")
        .unwrap()
        .unwrap();
    assert_eq!(row.source, "github:acme/tool");
    let out = call(
        &mut store,
        "mcp_resolve",
        json!({"url": "https://gitlab.com/a/b"}),
    );
    assert!(
        out.is_error && out.text.contains("not a GitHub repository URL"),
        "{}",
        out.text
    );
    // the consent question showed the argv
    assert!(
        yes.0[0].contains(&format!("{} --era legacy", stub_stdio())),
        "{:?}",
        yes.0
    );
}

#[test]
fn urls_outside_github_are_not_resolved() {
    let t = Tai::new("resolve-not-github");
    let err = t
        .run(&["mcp", "resolve", "https://example.com/a/b"])
        .fails(1)
        .to_string();
    assert!(err.contains("not a GitHub repository URL"), "{err}");
    // import cannot take a URL; its error says where to go
    let file = t.dir.path().join("gh.txt");
    std::fs::write(&file, "https://github.com/acme/x").unwrap();
    let err = t
        .run(&["mcp", "import", file.to_str().unwrap()])
        .fails(1)
        .to_string();
    assert!(
        err.contains("`tai mcp add https://github.com/acme/x` resolves it"),
        "{err}"
    );
}

#[test]
fn the_model_resolves_then_adds_a_repository_in_one_turn() {
    use crate::support::ModelStub;
    let w = readme_world(
        "resolve-turn",
        json!({"command": stub_stdio(), "args": ["--era", "modern"]}),
    );
    let url = "https://github.com/acme/tool";
    let model = ModelStub::start(
        w.dir.path(),
        json!([
            {"tool_calls": [{"name": "mcp_resolve", "arguments": json!({"url": url}).to_string()}]},
            {"tool_calls": [{"name": "mcp_add", "arguments": json!({"source": url}).to_string()}]},
            {"text": "Added the tool server."}
        ]),
    );
    let (mut t, _stub) = w.serve("resolve-turn");
    t.env("TAI_BASE_URL", &model.url)
        .env("TAI_MODEL", "stub-model");
    let run = t.run(&["--auto", "-p", &format!("add the MCP server from {url}")]);
    assert!(run.ok().contains("Added the tool server."), "{run:?}");
    let reqs = model.requests();
    assert!(
        ModelStub::offered(&reqs[0]).contains(&"mcp_resolve".to_string()),
        "{:?}",
        ModelStub::offered(&reqs[0])
    );
    let resolved = &ModelStub::tool_messages(&reqs[1])[0];
    assert!(
        resolved.contains("\"found_by\":\"the README\""),
        "{resolved}"
    );
    let added = &ModelStub::tool_messages(&reqs[2])[1];
    assert!(added.contains("\"added\""), "{added}");
    let source: String = t
        .raw_db()
        .query_row(
            "SELECT source FROM mcp_servers WHERE name = 'tool'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(source, "github:acme/tool");
}

#[test]
fn one_thread_while_resolving() {
    let w = readme_world("resolve-threads", json!({"command": "uvx", "args": ["x"]}));
    let stub = FixturesStub::start_with(w.dir.path(), &["--delay-ms", "150"]);
    let mut t = Tai::new("resolve-threads");
    point(&mut t, &stub.url);
    let mut child = t
        .cmd(&["mcp", "resolve", "https://github.com/acme/tool"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // nine requests at 150 ms each: sample while tai waits on the network
    let counts = crate::support::sample_threads(child.id(), 8, 120);
    assert!(child.wait().unwrap().success());
    assert!(
        counts.iter().all(|c| *c <= 1) && counts.iter().filter(|c| **c == 1).count() >= 4,
        "{counts:?}"
    );
}

#[test]
fn an_unreachable_registry_is_evidence_and_the_next_source_answers() {
    let w = readme_world(
        "resolve-offline",
        json!({"command": "uvx", "args": ["x-mcp"]}),
    );
    let (mut t, _stub) = w.serve("resolve-offline");
    let closed = format!("http://127.0.0.1:{}", crate::support::free_port());
    t.env("TAI_REGISTRY_URL", &closed);
    let v = resolve_json(&t, "https://github.com/acme/tool", &[]);
    assert_eq!(argv(chosen(&v).1), "uvx x-mcp");
    let ev = v["evidence"].as_array().unwrap();
    let registry: Vec<&Value> = ev.iter().filter(|e| e["step"] == "registry").collect();
    assert!(
        registry.iter().any(|e| e["url"]
            .as_str()
            .unwrap()
            .starts_with(&format!("{closed}/v0.1/servers?search=tool"))
            && e["outcome"].as_str().unwrap().starts_with("unreachable: ")),
        "{registry:#?}"
    );
}
