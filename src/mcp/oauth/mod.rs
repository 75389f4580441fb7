//! The MCP authorization flow on the client side (OAuth 2.1 for remote servers).
//!
//! On a 401 (or a 403 `insufficient_scope`) the HTTP transport hands the challenge to
//! `OAuth`, which discovers the protected resource and authorization server metadata,
//! finds a client identity (pre-registered, a Client ID Metadata Document URL, or dynamic
//! registration), runs the authorization code flow with PKCE through a loopback redirect,
//! and keeps the tokens; before each request it refreshes a token about to expire. The
//! pure parts (header parsing, URL lists, documents, PKCE) are table-tested on their own;
//! `flow` is the one I/O owner; `vault` stores the state as vault secrets per server.

pub mod challenge;
pub mod discovery;
pub mod documents;
pub mod flow;
pub mod pkce;

use std::time::Duration;

use serde::{Deserialize, Serialize};

/// The environment variable naming a command that is given the authorization URL as its
/// last argument (instead of a browser): for headless machines and tests.
pub const BROWSER_HOOK_ENV: &str = "TAI_OAUTH_BROWSER";
/// The environment variable holding tai's Client ID Metadata Document URL.
pub const CLIENT_METADATA_URL_ENV: &str = "TAI_OAUTH_CLIENT_METADATA_URL";
/// The environment variable holding a pre-registered client's secret (with `--client-id`).
pub const CLIENT_SECRET_ENV: &str = "TAI_OAUTH_CLIENT_SECRET";
/// The environment variable naming a pre-registered client id for `tai mcp add`.
pub const CLIENT_ID_ENV: &str = "TAI_OAUTH_CLIENT_ID";
pub use crate::limits::{
    OAUTH_LOGIN_TIMEOUT as LOGIN_TIMEOUT, OAUTH_MAX_AUTHORIZATIONS as MAX_AUTHORIZATIONS,
};

/// What may happen when a server wants a (new) login.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Interaction {
    /// Fail with an error naming `tai mcp login NAME` (`-p`, served modes).
    Never,
    /// Ask on the terminal first (the REPL, `tai mcp add`).
    Ask,
    /// Log in (`tai mcp login`, `tai mcp probe`).
    Always,
}

/// The client identity used with one authorization server.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct Client {
    /// The issuer it was registered with; `None` for pre-registered credentials.
    pub issuer: Option<String>,
    pub client_id: String,
    /// Stored as its own vault secret, never in the state document.
    #[serde(skip)]
    pub client_secret: Option<String>,
    /// `none`, `client_secret_basic` or `client_secret_post`.
    pub auth_method: String,
    /// The redirect URI registered with it (dynamic registration only).
    pub redirect_uri: Option<String>,
    pub preregistered: bool,
}

/// Everything tai keeps about one server's authorization.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct AuthState {
    pub issuer: Option<String>,
    pub resource: Option<String>,
    pub token_endpoint: Option<String>,
    pub client: Option<Client>,
    /// Secrets: stored as their own vault secrets.
    #[serde(skip)]
    pub access_token: Option<String>,
    #[serde(skip)]
    pub refresh_token: Option<String>,
    /// Unix milliseconds.
    pub expires_at_ms: Option<i64>,
    pub lifetime_ms: Option<i64>,
    /// The scopes asked for (and granted, when the server says).
    pub scopes: Vec<String>,
}

impl AuthState {
    /// Whether the access token should be refreshed now: within a tenth of its lifetime
    /// (at most 30 s) of expiry.
    pub fn due_for_refresh(&self, now_ms: i64) -> bool {
        let Some(exp) = self.expires_at_ms else {
            return false;
        };
        let most = crate::limits::OAUTH_REFRESH_MARGIN_MS;
        let margin = self.lifetime_ms.map_or(most, |l| (l / 10).min(most));
        now_ms >= exp - margin
    }

    /// One line for `tai mcp list`-style output: never a token.
    pub fn describe(&self, now_ms: i64) -> String {
        if self.access_token.is_none() {
            return "oauth: not logged in".into();
        }
        let scopes = if self.scopes.is_empty() {
            "no scopes".to_string()
        } else {
            format!("scopes {}", self.scopes.join(" "))
        };
        let expiry = match self.expires_at_ms {
            None => "no expiry".to_string(),
            Some(e) if e <= now_ms => "access token expired".to_string(),
            Some(e) => format!("expires in {}s", (e - now_ms) / 1000),
        };
        let refresh = if self.refresh_token.is_some() {
            ", refreshable"
        } else {
            ""
        };
        format!(
            "oauth: logged in at {} ({scopes}, {expiry}{refresh})",
            self.issuer.as_deref().unwrap_or("?")
        )
    }
}

/// One server's authorizer, owned by its HTTP transport.
pub struct OAuth {
    /// The stored server's name (for messages naming `tai mcp login NAME`); empty for probe.
    pub server: String,
    pub state: AuthState,
    pub interaction: Interaction,
    /// The state changed (new tokens): the caller stores it.
    pub changed: bool,
    pub login_timeout: Duration,
    pub client_metadata_url: Option<String>,
    pub browser_hook: Option<String>,
    pub browser: Option<String>,
    pub has_display: bool,
}

impl OAuth {
    /// An authorizer with its settings read from `env`.
    pub fn new(
        server: &str,
        state: AuthState,
        interaction: Interaction,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> OAuth {
        let set = |k: &str| env(k).filter(|v| !v.trim().is_empty());
        OAuth {
            server: server.to_string(),
            state,
            interaction,
            changed: false,
            login_timeout: LOGIN_TIMEOUT,
            client_metadata_url: set(CLIENT_METADATA_URL_ENV),
            browser_hook: set(BROWSER_HOOK_ENV),
            browser: set("BROWSER"),
            has_display: set("DISPLAY").is_some() || set("WAYLAND_DISPLAY").is_some(),
        }
    }

    /// Pre-registered client credentials (they are used with whatever issuer the
    /// server names).
    pub fn with_client(mut self, client_id: &str, secret: Option<String>) -> OAuth {
        self.state.client = Some(Client {
            issuer: None,
            client_id: client_id.to_string(),
            client_secret: secret,
            auth_method: String::new(),
            redirect_uri: None,
            preregistered: true,
        });
        self
    }

    /// What to tell a person who must log in again.
    pub fn login_hint(&self) -> String {
        if self.server.is_empty() {
            "log in again".into()
        } else {
            format!("run `tai mcp login {}`", self.server)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refresh_margin_scales_with_lifetime() {
        let s = |exp: i64, life: Option<i64>| AuthState {
            expires_at_ms: Some(exp),
            lifetime_ms: life,
            ..AuthState::default()
        };
        // A 3 s token is refreshed in its last 0.3 s, an hour-long one in its last 30 s.
        assert!(!s(10_000, Some(3_000)).due_for_refresh(9_600));
        assert!(s(10_000, Some(3_000)).due_for_refresh(9_700));
        assert!(!s(3_600_000, Some(3_600_000)).due_for_refresh(3_569_999));
        assert!(s(3_600_000, Some(3_600_000)).due_for_refresh(3_570_000));
        assert!(!AuthState::default().due_for_refresh(i64::MAX));
    }

    #[test]
    fn state_document_never_holds_secrets() {
        let st = AuthState {
            access_token: Some("AT-secret".into()),
            refresh_token: Some("RT-secret".into()),
            client: Some(Client {
                client_id: "cid".into(),
                client_secret: Some("CS-secret".into()),
                ..Client::default()
            }),
            scopes: vec!["a".into()],
            ..AuthState::default()
        };
        let doc = serde_json::to_string(&st).unwrap();
        assert!(doc.contains("cid") && !doc.contains("secret"), "{doc}");
        assert!(!st.describe(0).contains("secret"));
    }
}
