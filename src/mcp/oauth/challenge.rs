//! Pure: the `WWW-Authenticate` header (RFC 9110 §11.6.1) and the Bearer parameters MCP
//! reads from it (RFC 6750 §3, RFC 9728 §5.1): `resource_metadata`, `scope`, `error`.
//!
//! Several challenges may share one header (or several headers, joined with commas);
//! parameters are `name=token` or `name="quoted string"` with backslash escapes. A value
//! that does not parse ends that challenge, never the whole header.

/// One challenge: its scheme (lower-cased) and its parameters (names lower-cased).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Challenge {
    pub scheme: String,
    pub params: Vec<(String, String)>,
}

/// What a Bearer challenge tells an MCP client.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Bearer {
    pub resource_metadata: Option<String>,
    pub scope: Option<String>,
    pub error: Option<String>,
}

fn is_tchar(c: char) -> bool {
    c.is_ascii_alphanumeric() || "!#$%&'*+-.^_`|~".contains(c)
}

/// Every challenge in `header`, in order.
pub fn parse(header: &str) -> Vec<Challenge> {
    let s: Vec<char> = header.chars().collect();
    let mut i = 0;
    let mut out: Vec<Challenge> = Vec::new();
    let skip_ws = |i: &mut usize| {
        while *i < s.len() && (s[*i] == ' ' || s[*i] == '\t') {
            *i += 1;
        }
    };
    let token = |i: &mut usize| {
        let start = *i;
        while *i < s.len() && (is_tchar(s[*i]) || s[*i] == '/') {
            *i += 1;
        }
        s[start..*i].iter().collect::<String>()
    };
    while i < s.len() {
        skip_ws(&mut i);
        if i < s.len() && s[i] == ',' {
            i += 1;
            continue;
        }
        let name = token(&mut i);
        if name.is_empty() {
            i += 1; // a stray character: skip it
            continue;
        }
        skip_ws(&mut i);
        if i < s.len() && s[i] == '=' {
            // A parameter of the current challenge (or token68 padding, which Bearer has not).
            i += 1;
            skip_ws(&mut i);
            let value = if i < s.len() && s[i] == '"' {
                i += 1;
                let mut v = String::new();
                while i < s.len() && s[i] != '"' {
                    if s[i] == '\\' && i + 1 < s.len() {
                        i += 1;
                    }
                    v.push(s[i]);
                    i += 1;
                }
                i += 1; // the closing quote
                v
            } else {
                // A token (leniently: anything up to a comma or blank, as servers send
                // unquoted URLs too).
                let start = i;
                while i < s.len() && s[i] != ',' && s[i] != ' ' && s[i] != '\t' {
                    i += 1;
                }
                s[start..i].iter().collect::<String>()
            };
            if let Some(c) = out.last_mut() {
                c.params.push((name.to_ascii_lowercase(), value));
            }
            skip_ws(&mut i);
            if i < s.len() && s[i] == ',' {
                i += 1;
            }
        } else {
            out.push(Challenge {
                scheme: name.to_ascii_lowercase(),
                params: Vec::new(),
            });
        }
    }
    out
}

/// The first Bearer challenge's MCP parameters, if there is a Bearer challenge.
pub fn bearer(header: &str) -> Option<Bearer> {
    let c = parse(header).into_iter().find(|c| c.scheme == "bearer")?;
    let get = |k: &str| {
        c.params
            .iter()
            .find(|(n, _)| n == k)
            .map(|(_, v)| v.clone())
    };
    Some(Bearer {
        resource_metadata: get("resource_metadata"),
        scope: get("scope").filter(|s| !s.trim().is_empty()),
        error: get("error"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bearer_parameters_in_every_shape() {
        let cases: &[(&str, Option<Bearer>)] = &[
            ("", None),
            ("Basic realm=\"x\"", None),
            ("Bearer", Some(Bearer::default())),
            (
                r#"Bearer resource_metadata="http://h/.well-known/oauth-protected-resource/mcp""#,
                Some(Bearer {
                    resource_metadata: Some(
                        "http://h/.well-known/oauth-protected-resource/mcp".into(),
                    ),
                    ..Bearer::default()
                }),
            ),
            (
                r#"Bearer scope="mcp:basic", resource_metadata="http://h/m""#,
                Some(Bearer {
                    resource_metadata: Some("http://h/m".into()),
                    scope: Some("mcp:basic".into()),
                    error: None,
                }),
            ),
            (
                r#"bearer error="insufficient_scope", scope="a b",resource_metadata=http://h/m, error_description="never, \"ever\"""#,
                Some(Bearer {
                    resource_metadata: Some("http://h/m".into()),
                    scope: Some("a b".into()),
                    error: Some("insufficient_scope".into()),
                }),
            ),
            (
                r#"Basic realm="a, b", Bearer error=invalid_token, DPoP algs="ES256""#,
                Some(Bearer {
                    error: Some("invalid_token".into()),
                    ..Bearer::default()
                }),
            ),
            (r#"Bearer scope="""#, Some(Bearer::default())),
        ];
        for (header, want) in cases {
            assert_eq!(&bearer(header), want, "{header}");
        }
    }

    #[test]
    fn several_challenges_keep_their_own_parameters() {
        let got = parse(
            r#"Newauth realm="apps", type=1, title="Login to \"apps\"", Basic realm="simple""#,
        );
        assert_eq!(got.len(), 2);
        assert_eq!(got[0].scheme, "newauth");
        assert_eq!(
            got[0].params[2],
            ("title".into(), "Login to \"apps\"".into())
        );
        assert_eq!(got[1].params, vec![("realm".into(), "simple".into())]);
    }

    #[test]
    fn garbage_never_panics() {
        for h in [
            "=",
            "\"",
            "Bearer =\"",
            "Bearer a=\"unterminated",
            ",,,",
            "Bearer ,=,=",
            "é=é",
        ] {
            let _ = parse(h);
        }
    }
}
