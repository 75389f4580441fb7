//! Pure: where to look for metadata and what to accept from it.
//!
//! The protected resource metadata (RFC 9728) is tried at the `WWW-Authenticate`
//! header's `resource_metadata`, then at the path-inserted well-known URI, then at the
//! root; the authorization server metadata (RFC 8414 and OpenID Connect Discovery) at the
//! path-inserted OAuth and OpenID URIs, then the path-appended OpenID URI (for an issuer
//! without a path: the two root URIs). Also here: URL pieces, form and query encoding,
//! the resource check (RFC 8707), and the scope to ask for.

/// `scheme://authority`, the path (without query or fragment) and the query.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UrlParts {
    pub origin: String,
    pub path: String,
    pub query: String,
}

/// Split an http(s) URL; `None` for anything else, including any byte that is not
/// visible ASCII (so a URL from a server is safe to print).
pub fn split(url: &str) -> Option<UrlParts> {
    if !url.bytes().all(|b| b.is_ascii_graphic()) {
        return None;
    }
    let (scheme, rest) = url.split_once("://")?;
    let scheme = scheme.to_ascii_lowercase();
    if scheme != "http" && scheme != "https" {
        return None;
    }
    let rest = rest.split('#').next().unwrap_or("");
    let end = rest.find(['/', '?']).unwrap_or(rest.len());
    let (authority, tail) = rest.split_at(end);
    if authority.is_empty() || authority.contains('@') {
        return None;
    }
    let (path, query) = match tail.split_once('?') {
        Some((p, q)) => (p, q),
        None => (tail, ""),
    };
    Some(UrlParts {
        origin: format!("{scheme}://{}", authority.to_ascii_lowercase()),
        path: path.to_string(),
        query: query.to_string(),
    })
}

/// Whether credentials may travel to `url`: https, or plain http to a loopback host
/// (OAuth 2.1 §1.5; local development and tests).
pub fn secure_or_loopback(url: &str) -> bool {
    let Some(u) = split(url) else {
        return false;
    };
    if u.origin.starts_with("https://") {
        return true;
    }
    let authority = &u.origin["http://".len()..];
    let host = match authority.strip_prefix('[') {
        Some(v6) => v6.split(']').next().unwrap_or(""),
        None => authority.split(':').next().unwrap_or(""),
    };
    host == "localhost"
        || host
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

/// Where the protected resource metadata may be, in the order to try.
pub fn resource_metadata_urls(server_url: &str, from_header: Option<&str>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    if let Some(h) = from_header.filter(|h| split(h).is_some()) {
        out.push(h.to_string());
    }
    if let Some(u) = split(server_url) {
        let path = u.path.trim_end_matches('/');
        if !path.is_empty() {
            out.push(format!(
                "{}/.well-known/oauth-protected-resource{path}",
                u.origin
            ));
        }
        out.push(format!("{}/.well-known/oauth-protected-resource", u.origin));
    }
    out.dedup();
    out
}

/// Where an issuer's authorization server metadata may be, in the order to try.
pub fn server_metadata_urls(issuer: &str) -> Vec<String> {
    let Some(u) = split(issuer) else {
        return Vec::new();
    };
    let path = u.path.trim_end_matches('/');
    if path.is_empty() {
        vec![
            format!("{}/.well-known/oauth-authorization-server", u.origin),
            format!("{}/.well-known/openid-configuration", u.origin),
        ]
    } else {
        vec![
            format!("{}/.well-known/oauth-authorization-server{path}", u.origin),
            format!("{}/.well-known/openid-configuration{path}", u.origin),
            format!("{}{path}/.well-known/openid-configuration", u.origin),
        ]
    }
}

/// Whether the metadata's `resource` may stand for `server_url`: the same origin, and
/// the resource's path a whole-segment prefix of the server's (RFC 9728 §3.3, RFC 8707).
pub fn resource_allowed(server_url: &str, resource: &str) -> bool {
    let (Some(s), Some(r)) = (split(server_url), split(resource)) else {
        return false;
    };
    if s.origin != r.origin || resource.contains('#') {
        return false;
    }
    let rp = r.path.trim_end_matches('/');
    let sp = s.path.trim_end_matches('/');
    rp.is_empty() || sp == rp || sp.starts_with(&format!("{rp}/"))
}

/// The canonical resource for a server without metadata: its URL without query or fragment.
pub fn canonical_resource(server_url: &str) -> String {
    match split(server_url) {
        Some(u) => format!("{}{}", u.origin, u.path),
        None => server_url.to_string(),
    }
}

/// The scopes to ask for: the challenge's (joined with the scopes asked for before, for
/// a step-up), else every scope the resource metadata lists, else none; plus
/// `offline_access` when the authorization server lists it (SEP-2207).
pub fn scopes_to_request(
    challenged: Option<&str>,
    previous: &[String],
    resource_supported: Option<&[String]>,
    server_supported: Option<&[String]>,
) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let add = |out: &mut Vec<String>, s: &str| {
        if !s.is_empty() && !out.iter().any(|o| o == s) {
            out.push(s.to_string());
        }
    };
    match challenged {
        Some(c) => {
            for s in previous
                .iter()
                .map(String::as_str)
                .chain(c.split_whitespace())
            {
                add(&mut out, s);
            }
        }
        None => {
            let listed = resource_supported
                .filter(|l| !l.is_empty())
                .unwrap_or(previous);
            for s in listed {
                add(&mut out, s);
            }
        }
    }
    let offline = server_supported.is_some_and(|l| l.iter().any(|s| s == "offline_access"));
    if !out.is_empty() && offline {
        add(&mut out, "offline_access");
    }
    out
}

/// `application/x-www-form-urlencoded` (also right for query strings).
pub fn form(pairs: &[(&str, &str)]) -> String {
    pairs
        .iter()
        .map(|(k, v)| format!("{}={}", encode(k), encode(v)))
        .collect::<Vec<_>>()
        .join("&")
}

/// Percent-encode everything but the unreserved characters (RFC 3986 §2.3).
pub fn encode(s: &str) -> String {
    let mut out = String::new();
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// Decode one query component (`+` is a space); `None` for bad escapes or non-UTF-8.
pub fn decode(s: &str) -> Option<String> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'%' => {
                let hex = std::str::from_utf8(b.get(i + 1..i + 3)?).ok()?;
                out.push(u8::from_str_radix(hex, 16).ok()?);
                i += 3;
            }
            b'+' => {
                out.push(b' ');
                i += 1;
            }
            c => {
                out.push(c);
                i += 1;
            }
        }
    }
    String::from_utf8(out).ok()
}

/// The query's parameters, decoded (a parameter that does not decode is dropped).
pub fn query_pairs(query: &str) -> Vec<(String, String)> {
    query
        .split('&')
        .filter(|p| !p.is_empty())
        .filter_map(|p| {
            let (k, v) = p.split_once('=').unwrap_or((p, ""));
            Some((decode(k)?, decode(v)?))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resource_metadata_order() {
        let cases: &[(&str, Option<&str>, &[&str])] = &[
            (
                "http://h:1/mcp",
                None,
                &[
                    "http://h:1/.well-known/oauth-protected-resource/mcp",
                    "http://h:1/.well-known/oauth-protected-resource",
                ],
            ),
            (
                "http://h:1/mcp",
                Some("http://h:1/custom/metadata/location.json"),
                &[
                    "http://h:1/custom/metadata/location.json",
                    "http://h:1/.well-known/oauth-protected-resource/mcp",
                    "http://h:1/.well-known/oauth-protected-resource",
                ],
            ),
            (
                "https://H.example/",
                None,
                &["https://h.example/.well-known/oauth-protected-resource"],
            ),
            (
                "https://h/a/b/?x=1#f",
                Some("not a url"),
                &[
                    "https://h/.well-known/oauth-protected-resource/a/b",
                    "https://h/.well-known/oauth-protected-resource",
                ],
            ),
            ("ftp://h/x", None, &[]),
            ("http://h/\u{1b}[31m", None, &[]),
            ("http://h/a b", None, &[]),
        ];
        for (url, header, want) in cases {
            assert_eq!(resource_metadata_urls(url, *header), *want, "{url}");
        }
    }

    #[test]
    fn server_metadata_order() {
        assert_eq!(
            server_metadata_urls("http://a:2"),
            [
                "http://a:2/.well-known/oauth-authorization-server",
                "http://a:2/.well-known/openid-configuration"
            ]
        );
        assert_eq!(
            server_metadata_urls("http://a:2/tenant1/"),
            [
                "http://a:2/.well-known/oauth-authorization-server/tenant1",
                "http://a:2/.well-known/openid-configuration/tenant1",
                "http://a:2/tenant1/.well-known/openid-configuration",
            ]
        );
        assert!(server_metadata_urls("mailto:x").is_empty());
    }

    #[test]
    fn credentials_travel_over_https_or_loopback_only() {
        let cases = [
            ("https://auth.example.com/token", true),
            ("http://127.0.0.1:9/token", true),
            ("http://127.8.9.10/token", true),
            ("http://localhost:3000/x", true),
            ("http://[::1]:8080/x", true),
            ("http://auth.example.com/token", false),
            ("http://127.0.0.1.evil.com/token", false),
            ("http://127.tok.evil.com/token", false),
            ("http://127.a.b.c/token", false),
            ("http://localhost.evil.com/", false),
            ("http://[::2]/x", false),
            ("ftp://127.0.0.1/x", false),
        ];
        for (url, want) in cases {
            assert_eq!(secure_or_loopback(url), want, "{url}");
        }
    }

    #[test]
    fn resource_checks() {
        let cases = [
            ("http://h:1/mcp", "http://h:1/mcp", true),
            ("http://h:1/mcp", "http://h:1", true),
            ("http://h:1/mcp", "http://h:1/", true),
            ("http://h:1/mcp/sub", "http://h:1/mcp", true),
            ("http://h:1/mcp", "https://evil.example.com/mcp", false),
            ("http://h:1/mcp", "http://h:2/mcp", false),
            ("http://h:1/mcpx", "http://h:1/mcp", false),
            ("http://h:1/mcp", "http://h:1/mcp/deeper", false),
            ("http://h:1/mcp", "http://h:1/mcp#frag", false),
            ("http://h:1/mcp", "garbage", false),
        ];
        for (server, resource, want) in cases {
            assert_eq!(
                resource_allowed(server, resource),
                want,
                "{server} vs {resource}"
            );
        }
        assert_eq!(canonical_resource("HTTP://H:1/mcp?x#y"), "http://h:1/mcp");
    }

    #[test]
    fn scope_selection() {
        let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        let none: &[String] = &[];
        // The challenge wins; a step-up keeps what was asked for before.
        assert_eq!(
            scopes_to_request(Some("mcp:basic"), none, Some(&s(&["x"])), None),
            s(&["mcp:basic"])
        );
        assert_eq!(
            scopes_to_request(
                Some("mcp:write"),
                &s(&["mcp:basic"]),
                Some(&s(&["mcp:profile"])),
                None
            ),
            s(&["mcp:basic", "mcp:write"])
        );
        // No challenge scope: everything the resource lists.
        assert_eq!(
            scopes_to_request(None, none, Some(&s(&["a", "b", "c"])), None),
            s(&["a", "b", "c"])
        );
        // Nothing known: no scope at all, and no offline_access alone.
        assert!(scopes_to_request(None, none, None, Some(&s(&["offline_access"]))).is_empty());
        // offline_access only when the authorization server lists it.
        assert_eq!(
            scopes_to_request(
                None,
                none,
                Some(&s(&["mcp:basic"])),
                Some(&s(&["mcp:basic", "offline_access"]))
            ),
            s(&["mcp:basic", "offline_access"])
        );
        assert_eq!(
            scopes_to_request(
                None,
                none,
                Some(&s(&["mcp:basic"])),
                Some(&s(&["mcp:basic", "mcp:read"]))
            ),
            s(&["mcp:basic"])
        );
    }

    #[test]
    fn encoding_round_trips() {
        assert_eq!(encode("a b&c=d/é"), "a%20b%26c%3Dd%2F%C3%A9");
        for s in ["", "plain", "a b&c=d/é", "100%", "+"] {
            assert_eq!(decode(&encode(s)).as_deref(), Some(s));
        }
        assert_eq!(decode("a+b%2B"), Some("a b+".into()));
        assert_eq!(decode("%zz"), None);
        assert_eq!(decode("%4"), None);
        assert_eq!(
            query_pairs("code=x%20y&state=&iss=http%3A%2F%2Fh&&bad=%ff"),
            vec![
                ("code".into(), "x y".into()),
                ("state".into(), "".into()),
                ("iss".into(), "http://h".into())
            ]
        );
        assert_eq!(form(&[("a", "1 2"), ("b", "")]), "a=1%202&b=");
    }
}
