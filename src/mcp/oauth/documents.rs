//! Pure: the JSON documents of the flow, decoded and checked — protected resource
//! metadata (RFC 9728), authorization server metadata (RFC 8414), the registration
//! answer (RFC 7591), token answers (RFC 6749 §5) — and the redirect back (RFC 9207).

use serde_json::Value;

use super::discovery;

/// What the protected resource says about itself.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ResourceMetadata {
    pub resource: Option<String>,
    pub authorization_servers: Vec<String>,
    pub scopes_supported: Option<Vec<String>>,
}

/// What an authorization server says about itself.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ServerMetadata {
    pub issuer: String,
    pub authorization_endpoint: String,
    pub token_endpoint: String,
    pub registration_endpoint: Option<String>,
    pub scopes_supported: Option<Vec<String>>,
    pub auth_methods: Vec<String>,
    pub cimd_supported: bool,
    pub iss_parameter_supported: bool,
    pub pkce_methods: Option<Vec<String>>,
}

/// A token answer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Tokens {
    pub access_token: String,
    pub refresh_token: Option<String>,
    pub expires_in: Option<u64>,
    pub scope: Option<String>,
}

/// A server's own words (error codes, descriptions) made safe to print: control
/// characters become `?`, and at most 200 characters are kept.
pub fn plain(s: &str) -> String {
    s.chars()
        .take(200)
        .map(|c| if c.is_control() { '?' } else { c })
        .collect()
}

fn strings(v: &Value, key: &str) -> Option<Vec<String>> {
    v.get(key)?.as_array().map(|a| {
        a.iter()
            .filter_map(Value::as_str)
            .map(str::to_string)
            .collect()
    })
}

fn text(v: &Value, key: &str) -> Option<String> {
    v.get(key)?.as_str().map(str::to_string)
}

pub fn resource_metadata(body: &[u8]) -> Result<ResourceMetadata, String> {
    let v: Value = serde_json::from_slice(body)
        .map_err(|e| format!("the protected resource metadata is not JSON: {e}"))?;
    // Only http(s) URLs of visible ASCII (they are printed and fetched).
    let servers: Vec<String> = strings(&v, "authorization_servers")
        .unwrap_or_default()
        .into_iter()
        .filter(|s| discovery::split(s).is_some())
        .collect();
    if servers.is_empty() {
        return Err("the protected resource metadata names no authorization server".into());
    }
    Ok(ResourceMetadata {
        resource: text(&v, "resource"),
        authorization_servers: servers,
        scopes_supported: strings(&v, "scopes_supported"),
    })
}

/// Decode and check server metadata fetched for `issuer`: the document's `issuer` must
/// be the very string the well-known URL was built from (RFC 8414 §3.3), and the
/// endpoints must be http(s) URLs.
pub fn server_metadata(body: &[u8], issuer: &str) -> Result<ServerMetadata, String> {
    let v: Value = serde_json::from_slice(body)
        .map_err(|e| format!("the authorization server metadata is not JSON: {e}"))?;
    let got = text(&v, "issuer").unwrap_or_default();
    if got != issuer {
        return Err(format!(
            "the authorization server metadata names issuer {got:?}, not {issuer:?}: refusing it (RFC 8414 §3.3)"
        ));
    }
    let endpoint = |k: &str| -> Result<String, String> {
        let e = text(&v, k).ok_or(format!("the authorization server metadata has no {k}"))?;
        if !discovery::secure_or_loopback(&e) {
            return Err(format!(
                "the {k} {e:?} is not an https URL (plain http is accepted for loopback only)"
            ));
        }
        Ok(e)
    };
    Ok(ServerMetadata {
        issuer: got,
        authorization_endpoint: endpoint("authorization_endpoint")?,
        token_endpoint: endpoint("token_endpoint")?,
        registration_endpoint: text(&v, "registration_endpoint")
            .filter(|e| discovery::secure_or_loopback(e)),
        scopes_supported: strings(&v, "scopes_supported"),
        auth_methods: strings(&v, "token_endpoint_auth_methods_supported")
            .unwrap_or_else(|| vec!["client_secret_basic".into()]),
        cimd_supported: v.get("client_id_metadata_document_supported") == Some(&Value::Bool(true)),
        iss_parameter_supported: v.get("authorization_response_iss_parameter_supported")
            == Some(&Value::Bool(true)),
        pkce_methods: strings(&v, "code_challenge_methods_supported"),
    })
}

/// A registration answer: client id, secret, and the auth method the server chose.
pub fn registration(body: &[u8]) -> Result<(String, Option<String>, Option<String>), String> {
    let v: Value = serde_json::from_slice(body)
        .map_err(|e| format!("the registration answer is not JSON: {e}"))?;
    let id = text(&v, "client_id")
        .filter(|s| !s.is_empty())
        .ok_or("the registration answer has no client_id")?;
    Ok((
        id,
        text(&v, "client_secret").filter(|s| !s.is_empty()),
        text(&v, "token_endpoint_auth_method"),
    ))
}

/// A token answer, or the server's error (`error` and `error_description`) as text.
pub fn tokens(status: u16, body: &[u8]) -> Result<Tokens, String> {
    let v: Value = serde_json::from_slice(body).unwrap_or(Value::Null);
    if !(200..300).contains(&status) || v.get("error").is_some() {
        let err = text(&v, "error").map_or_else(|| format!("HTTP {status}"), |e| plain(&e));
        let desc = text(&v, "error_description")
            .map(|d| format!(": {}", plain(&d)))
            .unwrap_or_default();
        return Err(format!("the token endpoint refused: {err}{desc}"));
    }
    let access = text(&v, "access_token")
        .filter(|s| !s.is_empty())
        .ok_or("the token answer has no access_token")?;
    let kind = text(&v, "token_type").unwrap_or_default();
    if !kind.eq_ignore_ascii_case("bearer") {
        return Err(format!(
            "the token answer's token_type {kind:?} is not Bearer"
        ));
    }
    Ok(Tokens {
        access_token: access,
        refresh_token: text(&v, "refresh_token").filter(|s| !s.is_empty()),
        expires_in: v.get("expires_in").and_then(Value::as_u64),
        scope: text(&v, "scope"),
    })
}

/// Check the redirect back and return its code. `state` must match; a present `iss`
/// must equal the issuer by simple string comparison, and an issuer that advertises
/// `iss` must send it (RFC 9207 §2.4).
pub fn callback(
    query: &str,
    state: &str,
    issuer: &str,
    iss_advertised: bool,
) -> Result<String, String> {
    let pairs = discovery::query_pairs(query);
    let get = |k: &str| pairs.iter().find(|(n, _)| n == k).map(|(_, v)| v.as_str());
    if get("state") != Some(state) {
        return Err("the redirect's state does not match this login: refusing it".into());
    }
    match get("iss") {
        Some(iss) if iss != issuer => {
            return Err(format!(
                "the redirect names issuer {iss:?}, not {issuer:?}: refusing it (RFC 9207)"
            ));
        }
        None if iss_advertised => {
            return Err(
                "the authorization server promised an iss parameter and the redirect has none: refusing it (RFC 9207)"
                    .into(),
            );
        }
        _ => {}
    }
    if let Some(e) = get("error") {
        let desc = get("error_description")
            .map(|d| format!(": {}", plain(d)))
            .unwrap_or_default();
        return Err(format!(
            "the authorization server refused: {}{desc}",
            plain(e)
        ));
    }
    get("code")
        .filter(|c| !c.is_empty())
        .map(str::to_string)
        .ok_or("the redirect carries no code".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    const AS: &str = r#"{"issuer":"http://a:1","authorization_endpoint":"https://a:1/authorize",
        "token_endpoint":"https://a:1/token","registration_endpoint":"https://a:1/register",
        "scopes_supported":["x","offline_access"],"token_endpoint_auth_methods_supported":["client_secret_post"],
        "client_id_metadata_document_supported":true,"authorization_response_iss_parameter_supported":true}"#;

    #[test]
    fn server_metadata_issuer_must_match_exactly() {
        let m = server_metadata(AS.as_bytes(), "http://a:1").unwrap();
        assert_eq!(m.token_endpoint, "https://a:1/token");
        assert_eq!(m.auth_methods, ["client_secret_post"]);
        assert!(m.cimd_supported && m.iss_parameter_supported);
        for wrong in [
            "http://a:1/",
            "https://a:1",
            "http://A:1",
            "http://attacker",
        ] {
            assert!(server_metadata(AS.as_bytes(), wrong).is_err(), "{wrong}");
        }
        let no_token = r#"{"issuer":"i","authorization_endpoint":"https://a/x"}"#;
        assert!(
            server_metadata(no_token.as_bytes(), "i")
                .unwrap_err()
                .contains("token_endpoint")
        );
        let js = r#"{"issuer":"i","authorization_endpoint":"javascript:alert(1)","token_endpoint":"http://a/t"}"#;
        assert!(server_metadata(js.as_bytes(), "i").is_err());
        let plain = r#"{"issuer":"i","authorization_endpoint":"https://a/x","token_endpoint":"http://a.example/t"}"#;
        assert!(
            server_metadata(plain.as_bytes(), "i")
                .unwrap_err()
                .contains("not an https URL")
        );
        let minimal = r#"{"issuer":"i","authorization_endpoint":"https://a/x","token_endpoint":"https://a/t"}"#;
        let m = server_metadata(minimal.as_bytes(), "i").unwrap();
        assert_eq!(m.auth_methods, ["client_secret_basic"]);
        assert!(
            !m.cimd_supported && !m.iss_parameter_supported && m.registration_endpoint.is_none()
        );
    }

    #[test]
    fn resource_metadata_needs_a_server() {
        let r = resource_metadata(br#"{"resource":"http://h/mcp","authorization_servers":["http://a"],"scopes_supported":["s"]}"#).unwrap();
        assert_eq!(r.authorization_servers, ["http://a"]);
        assert_eq!(r.scopes_supported, Some(vec!["s".to_string()]));
        assert!(resource_metadata(br#"{"resource":"x"}"#).is_err());
        assert!(
            resource_metadata(b"{\"authorization_servers\":[\"http://a/\\u001b[2J\"]}").is_err()
        );
        assert!(resource_metadata(b"<html>").is_err());
    }

    #[test]
    fn token_answers() {
        let t = tokens(200, br#"{"access_token":"A","token_type":"bearer","expires_in":60,"refresh_token":"R","scope":"a b"}"#).unwrap();
        assert_eq!(
            (
                t.access_token.as_str(),
                t.refresh_token.as_deref(),
                t.expires_in
            ),
            ("A", Some("R"), Some(60))
        );
        let cases: &[(u16, &str, &str)] = &[
            (
                400,
                r#"{"error":"invalid_grant","error_description":"revoked"}"#,
                "invalid_grant: revoked",
            ),
            (200, r#"{"error":"invalid_grant"}"#, "invalid_grant"),
            (500, "oops", "HTTP 500"),
            (
                400,
                r#"{"error":"x\u001b[2J","error_description":"bad\u0007"}"#,
                "x?[2J: bad?",
            ),
            (200, r#"{"token_type":"Bearer"}"#, "no access_token"),
            (
                200,
                r#"{"access_token":"A","token_type":"DPoP"}"#,
                "not Bearer",
            ),
        ];
        for (status, body, want) in cases {
            let e = tokens(*status, body.as_bytes()).unwrap_err();
            assert!(e.contains(want), "{e}");
        }
        assert_eq!(registration(br#"{"client_id":"c","client_secret":"s","token_endpoint_auth_method":"client_secret_basic"}"#).unwrap(),
            ("c".into(), Some("s".into()), Some("client_secret_basic".into())));
        assert!(registration(br#"{"client_secret":"s"}"#).is_err());
    }

    #[test]
    fn callback_rules() {
        let ok = "code=C&state=S";
        let cases: &[(&str, bool, Result<&str, &str>)] = &[
            (ok, false, Ok("C")),
            ("code=C&state=S&iss=http%3A%2F%2Fa%3A1", true, Ok("C")),
            ("code=C&state=S&iss=http%3A%2F%2Fa%3A1", false, Ok("C")),
            // Advertised and missing, wrong, or only equal after normalization: refused.
            (ok, true, Err("promised an iss")),
            (
                "code=C&state=S&iss=https%3A%2F%2Fevil.example.com",
                true,
                Err("RFC 9207"),
            ),
            (
                "code=C&state=S&iss=https%3A%2F%2Fevil.example.com",
                false,
                Err("RFC 9207"),
            ),
            (
                "code=C&state=S&iss=http%3A%2F%2Fa%3A1%2F",
                true,
                Err("RFC 9207"),
            ),
            ("code=C&state=T", false, Err("state does not match")),
            ("code=C", false, Err("state does not match")),
            ("state=S&error=access_denied", false, Err("access_denied")),
            ("state=S&error=e%1B%5B31m", false, Err("refused: e?[31m")),
            ("state=S", false, Err("no code")),
        ];
        for (q, advertised, want) in cases {
            let got = callback(q, "S", "http://a:1", *advertised);
            match want {
                Ok(code) => assert_eq!(got.as_deref(), Ok(*code), "{q}"),
                Err(part) => assert!(got.as_ref().unwrap_err().contains(part), "{q}: {got:?}"),
            }
        }
    }
}
