//! `tai mcp login NAME [--client-id ID] [--status]` and `tai mcp logout NAME`: the OAuth
//! flow for a stored HTTP server run on purpose, its state shown (never a token), and its
//! tokens forgotten. Tokens are stored as vault secrets (sealed with the seal).

use super::render::out;
use super::{Context, Failure, Result};
use crate::approval::TerminalApprover;
use crate::config::process_env;
use crate::mcp::client::{McpClient, Timeouts};
use crate::mcp::oauth::{self, Interaction};
use crate::vault::audit::{Event, Outcome};

/// Log in to `server`: connect with an authorizer that logs in when asked, and list the
/// tools once so the server sees the token; store the result.
pub fn login(ctx: &mut Context, server: &str, client_id: Option<&str>) -> Result {
    ctx.unlock()?;
    let mut approver = TerminalApprover::new(ctx.config.approval);
    let (entry, resolved) = crate::mcp_servers::dispatch::prepare(
        &mut ctx.store,
        server,
        None,
        &mut approver,
        &process_env,
    )
    .map_err(Failure)?;
    let mut auth = crate::mcp_servers::oauth_vault::authorizer(&ctx.store, server, &resolved.spec, Interaction::Always, &process_env)
        .ok_or_else(|| {
            Failure(format!(
                "{server} is not an HTTP server without a static Authorization header: there is nothing to log in to"
            ))
        })?;
    // A fresh login: drop the old tokens so the server's challenge decides.
    auth.state.access_token = None;
    auth.state.refresh_token = None;
    if let Some(id) = client_id {
        auth = auth.with_client(id, process_env(oauth::CLIENT_SECRET_ENV));
    }
    let timeouts = Timeouts {
        connect: crate::limits::OAUTH_LOGIN_CONNECT,
        ..Timeouts::default()
    };
    let mut client = McpClient::connect_with(&resolved.spec, entry.protocol, timeouts, Some(auth))
        .map_err(|e| Failure(format!("{server}: {e}")))?;
    let listed = client.list_tools();
    let state = client.oauth().map(|o| o.state.clone()).unwrap_or_default();
    client.close();
    listed.map_err(|e| Failure(format!("{server}: {e}")))?;
    if state.access_token.is_none() {
        return Err(Failure(format!(
            "{server} did not ask for a login (it answered without one); nothing was stored"
        )));
    }
    crate::mcp_servers::oauth_vault::save(&ctx.store, server, &state)?;
    ctx.store
        .audit(Event::new("mcp-oauth", server, Outcome::Login))?;
    Ok(out(&format!(
        "{server}: {}\n",
        state.describe(crate::vault::now_ms())
    ))?)
}

/// Show the stored authorization state.
pub fn status(ctx: &mut Context, server: &str) -> Result {
    ctx.unlock()?;
    if crate::mcp_servers::store::load(&ctx.store, server)?.is_none() {
        return Err(Failure(format!(
            "no MCP server named {server:?} (see `tai mcp list`)"
        )));
    }
    let line = match crate::mcp_servers::oauth_vault::load(&ctx.store, server)? {
        Some(st) => st.describe(crate::vault::now_ms()),
        None => "oauth: not logged in".into(),
    };
    Ok(out(&format!("{server}: {line}\n"))?)
}

/// Forget the server's tokens and client registration.
pub fn logout(ctx: &mut Context, server: &str) -> Result {
    ctx.unlock()?;
    if !crate::mcp_servers::oauth_vault::remove(&ctx.store, server)? {
        return Err(Failure(format!("{server} has no OAuth login stored")));
    }
    ctx.store
        .audit(Event::new("mcp-oauth", server, Outcome::Logout))?;
    Ok(out(&format!("{server}: logged out\n"))?)
}
