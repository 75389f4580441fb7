//! tai-stub-mcp-oauth: an OAuth-protected MCP server for the tests — an authorization
//! server (metadata, dynamic registration, authorize with PKCE S256, tokens, refresh)
//! and a protected resource (metadata, `/mcp` answering through mcp_core.rs) on one
//! loopback port. Independent of tai's code: std, serde_json and sha2 only.
//!
//! `tai-stub-mcp-oauth [--log FILE] [--expires-in SECS] [--control DIR] [--preregistered
//! ID:SECRET]` (no registration; Basic client auth) prints
//! `listening on http://127.0.0.1:PORT/mcp`. While `DIR/revoked` exists, every token is
//! refused and refresh answers `invalid_grant`. `tai-stub-mcp-oauth browse URL` is the
//! headless browser for `TAI_OAUTH_BROWSER` (`browse [--delay MS] URL`): it opens the
//! authorization URL and follows its redirect to tai's loopback listener.

#[path = "http_io.rs"]
mod http_io;
#[path = "mcp_core.rs"]
mod mcp_core;

use std::collections::HashMap;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::time::{Duration, Instant};

use http_io::{read_request, respond};
use mcp_core::{Action, Script, State, handle};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

fn b64(data: &[u8], url: bool) -> String {
    let t: &[u8; 64] = if url {
        b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
    } else {
        b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
    };
    let mut s = String::new();
    for c in data.chunks(3) {
        let n = (c[0] as u32) << 16
            | (*c.get(1).unwrap_or(&0) as u32) << 8
            | *c.get(2).unwrap_or(&0) as u32;
        for i in 0..4 {
            if i <= c.len() {
                s.push(t[(n >> (18 - 6 * i) & 63) as usize] as char);
            } else if !url {
                s.push('=');
            }
        }
    }
    s
}

fn unescape(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%'
            && let Some(v) = s
                .get(i + 1..i + 3)
                .and_then(|h| u8::from_str_radix(h, 16).ok())
        {
            out.push(v);
            i += 3;
            continue;
        }
        out.push(if b[i] == b'+' { b' ' } else { b[i] });
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn pairs(q: &str) -> HashMap<String, String> {
    q.split('&')
        .filter_map(|p| p.split_once('='))
        .map(|(k, v)| (unescape(k), unescape(v)))
        .collect()
}

fn escape(s: &str) -> String {
    s.bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
                (b as char).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect()
}

/// `browse URL`: GET the URL, then GET its Location (tai's redirect listener).
fn browse(url: &str) {
    let get = |url: &str| -> String {
        let rest = url
            .strip_prefix("http://")
            .unwrap_or_else(|| mcp_core::die("browse: http only"));
        let (host, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
        let mut s =
            TcpStream::connect(host).unwrap_or_else(|e| mcp_core::die(&format!("browse: {e}")));
        let _ = s.set_read_timeout(Some(Duration::from_secs(20)));
        let _ = write!(
            s,
            "GET {} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n",
            if path.is_empty() { "/" } else { path }
        );
        let mut out = String::new();
        let _ = s.read_to_string(&mut out);
        out
    };
    let answer = get(url);
    let location = answer
        .lines()
        .find_map(|l| l.strip_prefix("Location: "))
        .unwrap_or_else(|| mcp_core::die("browse: the authorization endpoint did not redirect"));
    let back = get(location.trim());
    if !back.starts_with("HTTP/1.1 200") {
        mcp_core::die("browse: tai's redirect listener did not accept the redirect");
    }
}

struct Token {
    expires: Instant,
}

struct Grant {
    challenge: String,
    redirect_uri: String,
    client_id: String,
    resource: String,
    scope: String,
}

fn main() {
    let mut args = std::env::args().skip(1);
    let (mut log, mut expires_in, mut control) = (None, 3600u64, None::<PathBuf>);
    // `--preregistered ID:SECRET`: no registration; the token endpoint wants Basic auth.
    let mut preregistered: Option<(String, String)> = None;
    while let Some(a) = args.next() {
        match a.as_str() {
            "browse" => {
                // `browse [--delay MS] URL`: a person taking MS milliseconds to approve.
                let mut url = args.next().unwrap_or_default();
                if url == "--delay" {
                    let ms = args.next().and_then(|v| v.parse().ok()).unwrap_or(0);
                    std::thread::sleep(Duration::from_millis(ms));
                    url = args.next().unwrap_or_default();
                }
                return browse(&url);
            }
            "--log" => log = args.next(),
            "--expires-in" => expires_in = args.next().and_then(|v| v.parse().ok()).unwrap_or(3600),
            "--control" => control = args.next().map(PathBuf::from),
            "--preregistered" => {
                preregistered = args.next().and_then(|v| {
                    v.split_once(':')
                        .map(|(a, b)| (a.to_string(), b.to_string()))
                })
            }
            other => mcp_core::die(&format!("unknown flag {other}")),
        }
    }
    let script = Script {
        era: "modern".into(),
        log,
        ..Script::default()
    };
    let listener = TcpListener::bind(("127.0.0.1", 0))
        .unwrap_or_else(|e| mcp_core::die(&format!("bind: {e}")));
    let port = listener.local_addr().map(|a| a.port()).unwrap_or(0);
    let base = format!("http://127.0.0.1:{port}");
    let issuer = format!("{base}/as");
    let resource = format!("{base}/mcp");
    println!("listening on {resource}");
    let _ = std::io::stdout().flush();
    let revoked = || control.as_ref().is_some_and(|d| d.join("revoked").exists());
    let mut st = State::default();
    let (mut access, mut refresh): (HashMap<String, Token>, HashMap<String, String>) =
        Default::default();
    let mut grants: HashMap<String, Grant> = HashMap::new();
    let mut n = 0u64;
    let pid = std::process::id();
    for stream in listener.incoming() {
        let Ok(stream) = stream else { continue };
        let Some(req) = read_request(&stream) else {
            continue;
        };
        let (path, query) = req.path.split_once('?').unwrap_or((req.path.as_str(), ""));
        let form = pairs(&String::from_utf8_lossy(&req.body));
        script.record(&json!({"oauth": {"method": req.method, "path": path,
            "grant_type": form.get("grant_type"), "authorization": req.header("authorization")}}));
        let json_ok = |stream: &TcpStream, status: &str, v: Value| {
            respond(stream, status, &[], "application/json", &v.to_string())
        };
        match (req.method.as_str(), path) {
            ("GET", "/.well-known/oauth-protected-resource/mcp") => json_ok(
                &stream,
                "200 OK",
                json!({
                "resource": resource, "authorization_servers": [issuer], "scopes_supported": ["tools"]}),
            ),
            ("GET", "/.well-known/oauth-authorization-server/as") => {
                let mut m = json!({
                "issuer": issuer, "authorization_endpoint": format!("{issuer}/authorize"),
                "token_endpoint": format!("{issuer}/token"), "registration_endpoint": format!("{issuer}/register"),
                "response_types_supported": ["code"], "grant_types_supported": ["authorization_code", "refresh_token"],
                "code_challenge_methods_supported": ["S256"], "token_endpoint_auth_methods_supported": ["none"],
                "authorization_response_iss_parameter_supported": true});
                if preregistered.is_some() {
                    m["registration_endpoint"] = Value::Null;
                    m["token_endpoint_auth_methods_supported"] = json!(["client_secret_basic"]);
                }
                json_ok(&stream, "200 OK", m)
            }
            ("POST", "/as/register") if preregistered.is_some() => respond(
                &stream,
                "404 Not Found",
                &[],
                "text/plain",
                "no registration here",
            ),
            ("POST", "/as/register") => {
                n += 1;
                let body: Value = serde_json::from_slice(&req.body).unwrap_or_default();
                json_ok(
                    &stream,
                    "201 Created",
                    json!({"client_id": format!("client-{n}"),
                    "redirect_uris": body["redirect_uris"], "token_endpoint_auth_method": "none"}),
                );
            }
            ("GET", "/as/authorize") => {
                let q = pairs(query);
                let get = |k: &str| q.get(k).cloned().unwrap_or_default();
                if get("code_challenge_method") != "S256" || get("resource") != resource {
                    respond(
                        &stream,
                        "400 Bad Request",
                        &[],
                        "text/plain",
                        "S256 and the resource are required",
                    );
                    continue;
                }
                n += 1;
                let code = format!("code-{n}-{pid}");
                let location = format!(
                    "{}?code={code}&state={}&iss={}",
                    get("redirect_uri"),
                    escape(&get("state")),
                    escape(&issuer)
                );
                grants.insert(
                    code,
                    Grant {
                        challenge: get("code_challenge"),
                        redirect_uri: get("redirect_uri"),
                        client_id: get("client_id"),
                        resource: get("resource"),
                        scope: get("scope"),
                    },
                );
                respond(
                    &stream,
                    "302 Found",
                    &[("Location", location)],
                    "text/plain",
                    "",
                );
            }
            ("POST", "/as/token") => {
                // The client: Basic credentials for a pre-registered one, else the form's id.
                let client = match &preregistered {
                    Some((id, secret)) => {
                        let want =
                            format!("Basic {}", b64(format!("{id}:{secret}").as_bytes(), false));
                        if req.header("authorization") != Some(want.as_str()) {
                            json_ok(
                                &stream,
                                "401 Unauthorized",
                                json!({"error": "invalid_client"}),
                            );
                            continue;
                        }
                        id.clone()
                    }
                    None => form.get("client_id").cloned().unwrap_or_default(),
                };
                let get = |k: &str| form.get(k).cloned().unwrap_or_default();
                let ok = match get("grant_type").as_str() {
                    "authorization_code" => grants
                        .remove(&get("code"))
                        .filter(|g| {
                            b64(&Sha256::digest(get("code_verifier").as_bytes()), true)
                                == g.challenge
                                && g.redirect_uri == get("redirect_uri")
                                && g.client_id == client
                                && g.resource == get("resource")
                                && !g.scope.is_empty()
                        })
                        .is_some(),
                    "refresh_token" => {
                        !revoked()
                            && refresh
                                .remove(&get("refresh_token"))
                                .is_some_and(|c| c == client)
                    }
                    _ => false,
                };
                if !ok {
                    json_ok(
                        &stream,
                        "400 Bad Request",
                        json!({"error": "invalid_grant", "error_description": "the grant is not valid (revoked, reused or mismatched)"}),
                    );
                    continue;
                }
                n += 1;
                let (at, rt) = (
                    format!("tai-stub-AT-{n}-{pid}"),
                    format!("tai-stub-RT-{n}-{pid}"),
                );
                access.insert(
                    at.clone(),
                    Token {
                        expires: Instant::now() + Duration::from_secs(expires_in),
                    },
                );
                refresh.insert(rt.clone(), client);
                script.record(&json!({"issued": {"access_token": at, "refresh_token": rt}}));
                json_ok(
                    &stream,
                    "200 OK",
                    json!({"access_token": at, "token_type": "Bearer", "expires_in": expires_in,
                    "refresh_token": rt, "scope": "tools"}),
                );
            }
            // Any /mcp… path is the resource (so a test can reach it under a mismatched name).
            ("POST", p) if p.starts_with("/mcp") => {
                let token = req
                    .header("authorization")
                    .and_then(|h| h.strip_prefix("Bearer "));
                let valid = !revoked()
                    && token
                        .and_then(|t| access.get(t))
                        .is_some_and(|t| t.expires > Instant::now());
                if !valid {
                    let www = format!(
                        "Bearer resource_metadata=\"{base}/.well-known/oauth-protected-resource/mcp\", scope=\"tools\""
                    );
                    respond(
                        &stream,
                        "401 Unauthorized",
                        &[("WWW-Authenticate", www)],
                        "application/json",
                        r#"{"error":"invalid_token"}"#,
                    );
                    continue;
                }
                let Ok(msg) = serde_json::from_slice::<Value>(&req.body) else {
                    respond(&stream, "400 Bad Request", &[], "", "");
                    continue;
                };
                match handle(&script, &mut st, &msg) {
                    Action::Reply(msgs) => {
                        json_ok(&stream, "200 OK", msgs.last().cloned().unwrap_or_default())
                    }
                    _ => respond(&stream, "202 Accepted", &[], "", ""),
                }
            }
            _ => respond(&stream, "404 Not Found", &[], "text/plain", "not found"),
        }
    }
}
