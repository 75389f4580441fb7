//! A server's authorization state in the vault, as secrets: `oauth.<server>.access`,
//! `.refresh`, `.client` (a client secret) and `.state` (the rest, a JSON document with no
//! secret in it). Secrets are sealed with the vault's seal like every other secret and
//! are part of the redaction set; removing a server's login removes all four.

use sha2::{Digest, Sha256};

use crate::mcp::client::{McpClient, ServerSpec};
use crate::mcp::oauth::{AuthState, Interaction, OAuth};
use crate::vault::audit::{Event, Outcome};
use crate::vault::{self, Store};

/// The secret-name stem for `server`, within the vault's 64-character name limit.
pub fn stem(server: &str) -> String {
    if server.len() <= 44 {
        format!("oauth.{server}")
    } else {
        let h = Sha256::digest(server.as_bytes());
        format!("oauth.{}.{}", &server[..32], crate::entropy::hex(&h[..3]))
    }
}

const PARTS: [&str; 4] = ["access", "refresh", "client", "state"];

/// The stored state, or `None` when the server has no login.
pub fn load(store: &Store, server: &str) -> vault::Result<Option<AuthState>> {
    let stem = stem(server);
    let Some(doc) = store.secret_get(&format!("{stem}.state"))? else {
        return Ok(None);
    };
    let mut st: AuthState = serde_json::from_str(&doc).unwrap_or_default();
    st.access_token = store.secret_get(&format!("{stem}.access"))?;
    st.refresh_token = store.secret_get(&format!("{stem}.refresh"))?;
    if let Some(c) = st.client.as_mut() {
        c.client_secret = store.secret_get(&format!("{stem}.client"))?;
    }
    Ok(Some(st))
}

/// Store the state (each secret part set or removed).
pub fn save(store: &Store, server: &str, st: &AuthState) -> vault::Result<()> {
    let stem = stem(server);
    let doc = serde_json::to_string(st).unwrap_or_default();
    let parts = [
        ("access", st.access_token.clone()),
        ("refresh", st.refresh_token.clone()),
        (
            "client",
            st.client.as_ref().and_then(|c| c.client_secret.clone()),
        ),
        ("state", Some(doc)),
    ];
    for (part, value) in parts {
        let name = format!("{stem}.{part}");
        match value {
            Some(v) if !v.is_empty() => store.secret_set(&name, &v)?,
            _ => {
                if store.secret_get(&name)?.is_some() {
                    store.secret_remove(&name)?;
                }
            }
        }
    }
    Ok(())
}

/// Forget the login; `Ok(false)` when there was none.
pub fn remove(store: &Store, server: &str) -> vault::Result<bool> {
    let stem = stem(server);
    let mut any = false;
    for part in PARTS {
        let name = format!("{stem}.{part}");
        if store.secret_get(&name)?.is_some() {
            store.secret_remove(&name)?;
            any = true;
        }
    }
    Ok(any)
}

/// The authorizer for the stored server `server`: for an HTTP server that has no static
/// `Authorization` header, with its login from the vault (if any).
pub fn authorizer(
    store: &Store,
    server: &str,
    spec: &ServerSpec,
    interaction: Interaction,
    env: &dyn Fn(&str) -> Option<String>,
) -> Option<OAuth> {
    let ServerSpec::Http(h) = spec else {
        return None;
    };
    if h.headers
        .iter()
        .any(|(k, _)| k.eq_ignore_ascii_case("authorization"))
    {
        return None;
    }
    let state = load(store, server).ok().flatten().unwrap_or_default();
    Some(OAuth::new(server, state, interaction, env))
}

/// Store what the connection's authorizer changed (new, refreshed or dropped tokens),
/// with an audit row that names the event and never a value.
pub fn persist(store: &mut Store, server: &str, client: &mut McpClient) {
    let Some(o) = client.oauth() else {
        return;
    };
    if !std::mem::take(&mut o.changed) {
        return;
    }
    let state = o.state.clone();
    let outcome = if state.access_token.is_some() {
        Outcome::TokensStored
    } else {
        Outcome::TokensDropped
    };
    if save(store, server, &state).is_ok() {
        let _ = store.audit(Event::new("mcp-oauth", server, outcome));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stems_fit_the_name_limit() {
        assert_eq!(stem("linear"), "oauth.linear");
        let long = "x".repeat(64);
        let s = stem(&long);
        assert!(s.len() + ".refresh".len() <= 64, "{s}");
        assert_ne!(stem(&long), stem(&format!("{}y", "x".repeat(63))));
        for p in PARTS {
            assert!(vault::check_name("secret", &format!("{s}.{p}")).is_ok());
        }
    }
}
