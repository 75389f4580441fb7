//! The MCP registry's `server.json` shape → runnable candidates (pure).
//!
//! One server description (from the registry API or a repository's `server.json`) maps to
//! one candidate per package and per remote: npm → `npx -y id@version`, pypi → `uvx
//! id==version`, oci → `docker run -i --rm image:version`, nuget → `dnx id@version --yes`.
//! Arguments are built as argv (never through a shell); inputs without a value become
//! `${NAME}` references the user provides at use time, so no secret is ever written here.

use std::collections::BTreeMap;

use serde_json::Value;

use super::Candidate;
use crate::mcp::era::EraChoice;
use crate::mcp_servers::normalize::{Entry, Leg, sanitize_name};

/// The `_meta` key the official registry puts its status under.
pub const OFFICIAL: &str = "io.modelcontextprotocol.registry/official";

/// A server as listed by the registry: its description and the registry's view of it.
#[derive(Clone, Debug, PartialEq)]
pub struct Listed {
    pub server: Value,
    pub status: String,
    pub is_latest: Option<bool>,
}

impl Listed {
    pub fn name(&self) -> &str {
        self.server
            .get("name")
            .and_then(Value::as_str)
            .unwrap_or("")
    }
    pub fn version(&self) -> &str {
        self.server
            .get("version")
            .or_else(|| self.server.pointer("/version_detail/version"))
            .and_then(Value::as_str)
            .unwrap_or("")
    }
    pub fn repository(&self) -> Option<&str> {
        self.server
            .pointer("/repository/url")
            .and_then(Value::as_str)
    }
    pub fn subfolder(&self) -> Option<&str> {
        self.server
            .pointer("/repository/subfolder")
            .and_then(Value::as_str)
            .map(|s| s.trim_matches('/'))
            .filter(|s| !s.is_empty())
    }
}

/// One page of `GET /v0.1/servers`: the servers and the cursor of the next page.
pub fn parse_page(body: &Value) -> Result<(Vec<Listed>, Option<String>), String> {
    let list = body
        .get("servers")
        .and_then(Value::as_array)
        .ok_or("the answer has no \"servers\" array")?;
    let servers = list
        .iter()
        .filter_map(|item| {
            // v0.1 wraps each server as {server, _meta}; older mirrors list them bare.
            let (server, meta) = match item.get("server") {
                Some(s) => (
                    s.clone(),
                    item.pointer(&format!("/_meta/{}", esc(OFFICIAL))),
                ),
                None => (item.clone(), None),
            };
            server.is_object().then(|| listed(server, meta))
        })
        .collect();
    let next = body
        .pointer("/metadata/nextCursor")
        .or_else(|| body.pointer("/metadata/next_cursor"))
        .and_then(Value::as_str)
        .filter(|c| !c.is_empty())
        .map(str::to_string);
    Ok((servers, next))
}

/// A `server.json` read from a repository (no registry metadata: its own `status` counts).
pub fn from_file(server: Value) -> Listed {
    listed(server, None)
}

fn listed(server: Value, meta: Option<&Value>) -> Listed {
    let status = meta
        .and_then(|m| m.get("status"))
        .or_else(|| server.get("status"))
        .and_then(Value::as_str)
        .unwrap_or("active")
        .to_string();
    let is_latest = meta
        .and_then(|m| m.get("isLatest"))
        .and_then(Value::as_bool);
    Listed {
        server,
        status,
        is_latest,
    }
}

/// JSON-pointer escaping of one key.
fn esc(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

/// `https://github.com/Owner/Repo.git/` → `github.com/owner/repo`.
pub fn repo_key(url: &str) -> String {
    let u = url.trim().to_ascii_lowercase();
    let u = u.split("://").nth(1).unwrap_or(&u).to_string();
    let u = u.strip_prefix("www.").unwrap_or(&u);
    u.trim_end_matches('/').trim_end_matches(".git").to_string()
}

/// Compare dotted versions numerically where both parts are numbers (`1.10.0 > 1.9.2`),
/// textually otherwise.
pub fn version_cmp(a: &str, b: &str) -> std::cmp::Ordering {
    let parts = |s: &str| -> Vec<String> {
        s.trim_start_matches('v')
            .split(['.', '-', '+'])
            .map(str::to_string)
            .collect()
    };
    let (pa, pb) = (parts(a), parts(b));
    for (x, y) in pa.iter().zip(&pb) {
        let o = match (x.parse::<u64>(), y.parse::<u64>()) {
            (Ok(x), Ok(y)) => x.cmp(&y),
            _ => x.cmp(y),
        };
        if o.is_ne() {
            return o;
        }
    }
    pa.len().cmp(&pb.len())
}

/// Keep one version per server name: the one marked latest, else the highest.
pub fn latest(servers: Vec<Listed>) -> Vec<Listed> {
    let mut by_name: BTreeMap<String, Listed> = BTreeMap::new();
    for s in servers {
        let keep = match by_name.get(s.name()) {
            None => true,
            Some(old) => match (s.is_latest, old.is_latest) {
                (Some(true), Some(true)) | (None, None) | (Some(false), Some(false)) => {
                    version_cmp(s.version(), old.version()).is_gt()
                }
                (Some(true), _) => true,
                (_, Some(true)) => false,
                _ => version_cmp(s.version(), old.version()).is_gt(),
            },
        };
        if keep {
            by_name.insert(s.name().to_string(), s);
        }
    }
    by_name.into_values().collect()
}

/// The name an entry is stored under: the part after the namespace, sanitized.
pub fn entry_name(server_name: &str) -> String {
    let last = server_name.rsplit('/').next().unwrap_or(server_name);
    sanitize_name(last)
}

/// A check the caller makes before offering a candidate: the package file's SHA-256.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ShaCheck {
    pub registry_type: String,
    pub base_url: String,
    pub identifier: String,
    pub version: String,
    pub sha256: String,
}

/// Every candidate of one server description; what cannot run is said in `skipped`.
pub fn candidates(listed: &Listed, origin: &str, skipped: &mut Vec<String>) -> Vec<Candidate> {
    let s = &listed.server;
    let name = entry_name(listed.name());
    let version = listed.version();
    let mut out = Vec::new();
    for (i, p) in arr(s, "packages").iter().enumerate() {
        let label = format!(
            "{origin} {} {version}, package {} ({})",
            listed.name(),
            i + 1,
            str_of(p, &["registryType", "registry_type"]).unwrap_or("?")
        );
        match package(p, &name) {
            Ok(mut c) => {
                c.origin = label;
                out.push(c);
            }
            Err(why) => skipped.push(format!("{label}: {why}")),
        }
    }
    for (i, r) in arr(s, "remotes").iter().enumerate() {
        let label = format!("{origin} {} {version}, remote {}", listed.name(), i + 1);
        match remote(r, &name) {
            Ok(mut c) => {
                c.origin = label;
                out.push(c);
            }
            Err(why) => skipped.push(format!("{label}: {why}")),
        }
    }
    out
}

fn arr<'a>(v: &'a Value, key: &str) -> &'a [Value] {
    arr_of(v, &[key])
}

/// The first of `keys` (camelCase, then the older snake_case) that is an array.
fn arr_of<'a>(v: &'a Value, keys: &[&str]) -> &'a [Value] {
    keys.iter()
        .find_map(|k| v.get(*k).and_then(Value::as_array))
        .map_or(&[], Vec::as_slice)
}

/// The first of `keys` (camelCase, then the older snake_case) that is a string.
fn str_of<'a>(v: &'a Value, keys: &[&str]) -> Option<&'a str> {
    keys.iter().find_map(|k| v.get(*k).and_then(Value::as_str))
}

fn flag(v: &Value, keys: &[&str]) -> bool {
    keys.iter()
        .find_map(|k| v.get(*k).and_then(Value::as_bool))
        .unwrap_or(false)
}

/// `value_hint` / a name → an environment-style variable name: `API_KEY`.
fn var_name(raw: &str) -> String {
    let s: String = raw
        .trim_start_matches('-')
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_uppercase()
            } else {
                '_'
            }
        })
        .collect();
    if s.is_empty() { "VALUE".into() } else { s }
}

/// An input's value: its `value` with `{var}` replaced, else its default, else (when
/// required, or always for secrets that are required) a `${NAME}` reference. `None`
/// when an optional input has nothing to say.
fn input(v: &Value, var: &str, needs: &mut Vec<String>) -> Option<String> {
    let secret = flag(v, &["isSecret", "is_secret"]);
    let required = flag(v, &["isRequired", "is_required"]);
    if secret {
        // A secret is never written into the entry, even when the description shows one.
        if required || v.get("value").is_some() {
            return Some(reference(var, needs));
        }
        return None;
    }
    if let Some(value) = v.get("value").and_then(Value::as_str) {
        return Some(substitute(value, v.get("variables"), needs));
    }
    if let Some(d) = v.get("default").and_then(Value::as_str) {
        return Some(d.to_string());
    }
    required.then(|| reference(var, needs))
}

fn reference(var: &str, needs: &mut Vec<String>) -> String {
    if !needs.iter().any(|n| n == var) {
        needs.push(var.to_string());
    }
    format!("${{{var}}}")
}

/// `{name}` in a value → the variable's value, default or `${NAME}`; unknown names stay.
fn substitute(text: &str, vars: Option<&Value>, needs: &mut Vec<String>) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(open) = rest.find('{') {
        let Some(close) = rest[open..].find('}') else {
            break;
        };
        let key = &rest[open + 1..open + close];
        out.push_str(&rest[..open]);
        match vars.and_then(|m| m.get(key)) {
            Some(var) => {
                let v = input(var, &var_name(key), needs).unwrap_or_default();
                out.push_str(&v);
            }
            None => out.push_str(&rest[open..=open + close]),
        }
        rest = &rest[open + close + 1..];
    }
    out.push_str(rest);
    out
}

/// Positional and named arguments → argv words.
fn arguments(list: &[Value], needs: &mut Vec<String>) -> Vec<String> {
    let mut argv = Vec::new();
    for a in list {
        match str_of(a, &["type"]) {
            Some("named") => {
                let Some(name) = str_of(a, &["name"]) else {
                    continue;
                };
                let has_value = a.get("value").is_some()
                    || a.get("default").is_some()
                    || flag(a, &["isRequired", "is_required"]);
                if !has_value {
                    continue; // an optional flag with nothing set
                }
                if let Some(v) = input(a, &var_name(name), needs) {
                    argv.push(name.to_string());
                    argv.push(v);
                }
            }
            _ => {
                let hint = str_of(a, &["valueHint", "value_hint"]).unwrap_or("value");
                if let Some(v) = input(a, &var_name(hint), needs) {
                    argv.push(v);
                }
            }
        }
    }
    argv
}

/// Environment variables: set values, and `${NAME}` references (named as the variable)
/// for the required ones.
fn environment(list: &[Value], needs: &mut Vec<String>) -> BTreeMap<String, String> {
    named_inputs(list, needs, str::to_string)
}

/// Headers: as the environment, with references named after the header (`X_API_KEY`).
fn headers(list: &[Value], needs: &mut Vec<String>) -> BTreeMap<String, String> {
    named_inputs(list, needs, var_name)
}

fn named_inputs(
    list: &[Value],
    needs: &mut Vec<String>,
    var: fn(&str) -> String,
) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    for item in list {
        let Some(name) = str_of(item, &["name"]) else {
            continue;
        };
        if let Some(v) = input(item, &var(name), needs) {
            out.insert(name.to_string(), v);
        }
    }
    out
}

fn package(p: &Value, name: &str) -> Result<Candidate, String> {
    let ty = str_of(p, &["registryType", "registry_type"]).unwrap_or("");
    let id = str_of(p, &["identifier", "name"]).ok_or("the package has no identifier")?;
    let version = str_of(p, &["version"]).unwrap_or("");
    let mut needs = Vec::new();
    let pinned = |sep: &str| {
        if version.is_empty() || version == "latest" {
            id.to_string()
        } else {
            format!("{id}{sep}{version}")
        }
    };
    let (default_runtime, prefix, reference, suffix): (&str, Vec<&str>, String, Vec<&str>) =
        match ty {
            "npm" => ("npx", vec!["-y"], pinned("@"), vec![]),
            "pypi" => ("uvx", vec![], pinned("=="), vec![]),
            "oci" | "docker" => {
                let image =
                    if id.contains('@') || id.rsplit('/').next().is_some_and(|l| l.contains(':')) {
                        id.to_string()
                    } else {
                        pinned(":")
                    };
                ("docker", vec!["run", "-i", "--rm"], image, vec![])
            }
            "nuget" => ("dnx", vec![], pinned("@"), vec!["--yes"]),
            "mcpb" => {
                return Err("MCP bundles (.mcpb) are not run by tai; install the bundle and add its command".into());
            }
            other => return Err(format!("registryType {other:?} is not one tai can run")),
        };
    let command = str_of(p, &["runtimeHint", "runtime_hint"])
        .unwrap_or(default_runtime)
        .to_string();
    let runtime_args = arguments(
        arr_of(p, &["runtimeArguments", "runtime_arguments"]),
        &mut needs,
    );
    let package_args = arguments(
        arr_of(p, &["packageArguments", "package_arguments"]),
        &mut needs,
    );
    let env = environment(
        arr_of(p, &["environmentVariables", "environment_variables"]),
        &mut needs,
    );
    let mut args: Vec<String> = Vec::new();
    if command == default_runtime {
        args.extend(prefix.iter().map(|s| s.to_string()));
    }
    for a in runtime_args {
        if !args.contains(&a) || !a.starts_with('-') {
            args.push(a);
        }
    }
    if command == "docker" {
        // A container sees only the variables passed into it.
        for k in env.keys() {
            args.extend(["-e".to_string(), k.clone()]);
        }
    }
    args.push(reference);
    args.extend(suffix.iter().map(|s| s.to_string()));
    args.extend(package_args);
    let sha = str_of(p, &["fileSha256", "file_sha256"]).map(|sha| ShaCheck {
        registry_type: ty.to_string(),
        base_url: str_of(p, &["registryBaseUrl", "registry_base_url"])
            .unwrap_or(match ty {
                "npm" => "https://registry.npmjs.org",
                "pypi" => "https://pypi.org",
                _ => "",
            })
            .trim_end_matches('/')
            .to_string(),
        identifier: id.to_string(),
        version: version.to_string(),
        sha256: sha.to_ascii_lowercase(),
    });
    let transport = p.get("transport");
    let kind = transport
        .and_then(|t| str_of(t, &["type"]))
        .or_else(|| str_of(p, &["transport_type"]))
        .unwrap_or("stdio");
    let leg = match kind {
        "stdio" => Leg::Stdio {
            command: command.clone(),
            args: args.clone(),
            env,
            cwd: None,
        },
        "streamable-http" => {
            let t = transport.unwrap_or(&Value::Null);
            let url = str_of(t, &["url"]).ok_or("a streamable-http transport without a url")?;
            let url = template(url, &known_values(p), &mut needs);
            let mut started = vec![command.clone()];
            started.extend(args.clone());
            let c = Candidate {
                entry: entry(
                    name,
                    Leg::Http {
                        url,
                        headers: headers(arr(t, "headers"), &mut needs),
                    },
                ),
                origin: String::new(),
                needs,
                note: Some(format!(
                    "the package serves HTTP: start it yourself first ({}), then tai connects to the URL",
                    started.join(" ")
                )),
                sha,
            };
            return Ok(c);
        }
        "sse" => return Err("the legacy HTTP+SSE transport, which tai does not support".into()),
        other => return Err(format!("transport {other:?} is not one tai speaks")),
    };
    Ok(Candidate {
        entry: entry(name, leg),
        origin: String::new(),
        needs,
        note: None,
        sha,
    })
}

/// A URL template: `{name}` → `${NAME}`, a value the user provides.
/// `{name}` takes the value of the package's argument or variable of that name (`{port}`
/// ← `--port 3000`), else becomes `${NAME}`.
fn template(url: &str, known: &BTreeMap<String, String>, needs: &mut Vec<String>) -> String {
    let mut out = String::new();
    let mut rest = url;
    while let Some(open) = rest.find('{') {
        let Some(close) = rest[open..].find('}') else {
            break;
        };
        out.push_str(&rest[..open]);
        let var = var_name(&rest[open + 1..open + close]);
        match known.get(&var) {
            Some(v) => out.push_str(v),
            None => out.push_str(&reference(&var, needs)),
        }
        rest = &rest[open + close + 1..];
    }
    out.push_str(rest);
    out
}

/// A package's inputs by variable name (`--port` → `PORT`, a `valueHint`, an environment
/// variable), with the values they were given: what a URL template may refer to.
fn known_values(p: &Value) -> BTreeMap<String, String> {
    let mut scratch = Vec::new();
    let mut known = BTreeMap::new();
    for key in [
        ["runtimeArguments", "runtime_arguments"],
        ["packageArguments", "package_arguments"],
    ] {
        for a in arr_of(p, &key) {
            let label = str_of(a, &["name", "valueHint", "value_hint"]).unwrap_or("");
            if let Some(v) = input(a, &var_name(label), &mut scratch) {
                known.insert(var_name(label), v);
            }
        }
    }
    for e in arr_of(p, &["environmentVariables", "environment_variables"]) {
        if let Some(name) = str_of(e, &["name"])
            && let Some(v) = input(e, name, &mut scratch)
        {
            known.insert(var_name(name), v);
        }
    }
    known
}

fn remote(r: &Value, name: &str) -> Result<Candidate, String> {
    let kind = str_of(r, &["type", "transport_type"]).unwrap_or("streamable-http");
    if kind == "sse" {
        return Err("the legacy HTTP+SSE transport, which tai does not support".into());
    }
    if kind != "streamable-http" && kind != "http" {
        return Err(format!("transport {kind:?} is not one tai speaks"));
    }
    let url = str_of(r, &["url"]).ok_or("a remote without a url")?;
    let mut needs = Vec::new();
    let url = match r.get("variables") {
        Some(vars) => substitute(url, Some(vars), &mut needs),
        None => template(url, &BTreeMap::new(), &mut needs),
    };
    let headers = headers(arr(r, "headers"), &mut needs);
    Ok(Candidate {
        entry: entry(name, Leg::Http { url, headers }),
        origin: String::new(),
        needs,
        note: None,
        sha: None,
    })
}

fn entry(name: &str, leg: Leg) -> Entry {
    Entry {
        name: name.to_string(),
        leg,
        protocol: EraChoice::Auto,
        allow: None,
        deny: Vec::new(),
        enabled: None,
        env_vars: Vec::new(),
        options: Default::default(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn argv(c: &Candidate) -> Vec<String> {
        match &c.entry.leg {
            Leg::Stdio { command, args, .. } => {
                let mut v = vec![command.clone()];
                v.extend(args.clone());
                v
            }
            Leg::Http { url, .. } => vec![url.clone()],
        }
    }

    fn one(server: Value) -> (Vec<Candidate>, Vec<String>) {
        let mut skipped = Vec::new();
        let c = candidates(&from_file(server), "registry", &mut skipped);
        (c, skipped)
    }

    #[test]
    fn packages_map_by_registry_type() {
        let table = [
            (
                json!({"registryType": "npm", "identifier": "@a/srv", "version": "1.2.0"}),
                "npx -y @a/srv@1.2.0",
            ),
            (
                json!({"registryType": "pypi", "identifier": "srv", "version": "0.5.0"}),
                "uvx srv==0.5.0",
            ),
            (
                json!({"registryType": "oci", "identifier": "ghcr.io/a/srv", "version": "2"}),
                "docker run -i --rm ghcr.io/a/srv:2",
            ),
            (
                json!({"registryType": "oci", "identifier": "a/srv:3.1"}),
                "docker run -i --rm a/srv:3.1",
            ),
            (
                json!({"registryType": "nuget", "identifier": "A.Srv", "version": "1.0.0"}),
                "dnx A.Srv@1.0.0 --yes",
            ),
            (
                json!({"registryType": "pypi", "identifier": "srv", "version": "1", "runtimeHint": "pipx"}),
                "pipx srv==1",
            ),
            (
                json!({"registry_type": "npm", "identifier": "old", "version": "1"}),
                "npx -y old@1",
            ),
        ];
        for (p, want) in table {
            let (c, skipped) =
                one(json!({"name": "io.github.a/srv", "version": "1", "packages": [p]}));
            assert!(skipped.is_empty(), "{skipped:?}");
            assert_eq!(argv(&c[0]).join(" "), want);
            assert_eq!(c[0].entry.name, "srv");
        }
    }

    #[test]
    fn arguments_are_argv_with_variables_and_references() {
        let p = json!({
            "registryType": "npm", "identifier": "srv", "version": "1",
            "runtimeArguments": [{"type": "named", "name": "--node-options", "value": "--max-old-space-size=512"}],
            "packageArguments": [
                {"type": "positional", "value": "start"},
                {"type": "positional", "valueHint": "root_dir", "isRequired": true},
                {"type": "positional", "valueHint": "optional_thing"},
                {"type": "named", "name": "--port", "default": "8080"},
                {"type": "named", "name": "--verbose"},
                {"type": "named", "name": "--mount", "value": "src={src};dst={dst}",
                 "variables": {"src": {"isRequired": true}, "dst": {"default": "/project"}}},
                {"type": "positional", "value": "a; rm -rf ~"}
            ],
            "environmentVariables": [
                {"name": "API_KEY", "isRequired": true, "isSecret": true},
                {"name": "LEAKED", "isSecret": true, "value": "sk-should-never-appear"},
                {"name": "LOG_LEVEL", "default": "info"},
                {"name": "OPTIONAL"},
                {"name": "REGION", "isRequired": true}
            ]
        });
        let (c, _) = one(json!({"name": "x/srv", "version": "1", "packages": [p]}));
        assert_eq!(
            argv(&c[0]),
            [
                "npx",
                "-y",
                "--node-options",
                "--max-old-space-size=512",
                "srv@1",
                "start",
                "${ROOT_DIR}",
                "--port",
                "8080",
                "--mount",
                "src=${SRC};dst=/project",
                "a; rm -rf ~"
            ]
        );
        let Leg::Stdio { env, .. } = &c[0].entry.leg else {
            panic!()
        };
        let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        assert_eq!(
            env,
            [
                ("API_KEY", "${API_KEY}"),
                ("LEAKED", "${LEAKED}"),
                ("LOG_LEVEL", "info"),
                ("REGION", "${REGION}")
            ]
        );
        assert_eq!(
            c[0].needs,
            ["ROOT_DIR", "SRC", "API_KEY", "LEAKED", "REGION"]
        );
        assert!(!format!("{c:?}").contains("sk-should-never-appear"));
    }

    #[test]
    fn docker_passes_the_environment_into_the_container() {
        let p = json!({"registryType": "oci", "identifier": "a/srv", "version": "1",
            "environmentVariables": [{"name": "TOKEN", "isRequired": true, "isSecret": true}]});
        let (c, _) = one(json!({"name": "x/srv", "version": "1", "packages": [p]}));
        assert_eq!(argv(&c[0]).join(" "), "docker run -i --rm -e TOKEN a/srv:1");
    }

    #[test]
    fn remotes_and_http_packages() {
        let (c, skipped) = one(json!({"name": "x/srv", "version": "1",
            "remotes": [
                {"type": "streamable-http", "url": "https://{tenant}.example.com/mcp",
                 "headers": [{"name": "Authorization", "value": "Bearer {token}", "variables": {"token": {"isRequired": true, "isSecret": true}}},
                             {"name": "X-Region", "default": "eu"}]},
                {"type": "sse", "url": "https://example.com/sse"}
            ],
            "packages": [{"registryType": "npm", "identifier": "srv", "version": "1",
                "transport": {"type": "streamable-http", "url": "http://{host}:{port}/{path}"},
                "packageArguments": [{"type": "named", "name": "--port", "default": "3000"}],
                "environmentVariables": [{"name": "HOST", "value": "localhost"}]}]
        }));
        assert_eq!(c.len(), 2, "{c:?}");
        let Leg::Http { url, headers } = &c[1].entry.leg else {
            panic!()
        };
        assert_eq!(url, "https://${TENANT}.example.com/mcp");
        assert_eq!(headers["Authorization"], "Bearer ${TOKEN}");
        assert_eq!(headers["X-Region"], "eu");
        let Leg::Http { url, .. } = &c[0].entry.leg else {
            panic!()
        };
        assert_eq!(url, "http://localhost:3000/${PATH}");
        assert_eq!(c[0].needs, ["PATH"]);
        assert!(
            c[0].note
                .as_deref()
                .unwrap()
                .contains("npx -y srv@1 --port 3000")
        );
        assert_eq!(skipped.len(), 1);
        assert!(
            skipped[0].contains("remote 2") && skipped[0].contains("SSE"),
            "{skipped:?}"
        );
    }

    #[test]
    fn unsupported_packages_are_named() {
        let (c, skipped) = one(json!({"name": "x/srv", "version": "1", "packages": [
            {"registryType": "mcpb", "identifier": "https://x/y.mcpb", "version": "1", "fileSha256": "ab"},
            {"registryType": "cargo", "identifier": "srv", "version": "1"}
        ]}));
        assert!(c.is_empty());
        assert!(
            skipped[0].contains(".mcpb") && skipped[1].contains("\"cargo\""),
            "{skipped:?}"
        );
    }

    #[test]
    fn pages_status_and_latest() {
        let page = json!({
            "servers": [
                {"server": {"name": "a/x", "version": "1.9.0"}, "_meta": {OFFICIAL: {"status": "active", "isLatest": false}}},
                {"server": {"name": "a/x", "version": "1.10.0"}, "_meta": {OFFICIAL: {"status": "active", "isLatest": true}}},
                {"server": {"name": "a/y", "version": "2.0.0"}, "_meta": {OFFICIAL: {"status": "deprecated"}}},
                {"name": "bare/z", "version": "1"}
            ],
            "metadata": {"nextCursor": "c2", "count": 4}
        });
        let (servers, next) = parse_page(&page).unwrap();
        assert_eq!(next.as_deref(), Some("c2"));
        assert_eq!(servers[2].status, "deprecated");
        assert_eq!(servers[3].status, "active");
        let l = latest(servers);
        let names: Vec<(&str, &str)> = l.iter().map(|s| (s.name(), s.version())).collect();
        assert_eq!(
            names,
            [("a/x", "1.10.0"), ("a/y", "2.0.0"), ("bare/z", "1")]
        );
        assert!(parse_page(&json!({"oops": 1})).is_err());
        assert_eq!(version_cmp("1.10.0", "1.9.9"), std::cmp::Ordering::Greater);
        assert_eq!(version_cmp("v2", "1.0"), std::cmp::Ordering::Greater);
    }

    #[test]
    fn repository_keys_and_names() {
        assert_eq!(
            repo_key("https://GitHub.com/Owner/Repo.git/"),
            "github.com/owner/repo"
        );
        assert_eq!(repo_key("git+https://www.github.com/o/r"), "github.com/o/r");
        assert_eq!(entry_name("io.github.owner/weather.mcp"), "weather-mcp");
        assert_eq!(sanitize_name("@scope/"), "scope");
        assert_eq!(sanitize_name("///"), "server");
    }
}
