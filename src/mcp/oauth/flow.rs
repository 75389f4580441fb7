//! The one I/O owner of the authorization flow: metadata fetches, registration, token
//! requests (thread-free ureq, each with the caller's deadline), and the redirect — a
//! loopback listener on 127.0.0.1 polled with `poll(2)` together with a pasted redirect
//! URL on a terminal, while the browser (or `TAI_OAUTH_BROWSER`) runs as a child process.
//! Nothing here prints a token; errors say what to do next.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::os::fd::AsFd;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use nix::poll::{PollFd, PollFlags, poll};
use serde_json::json;

use super::documents::{self, ResourceMetadata, ServerMetadata, Tokens};
use super::{Client, Interaction, MAX_AUTHORIZATIONS, OAuth, challenge, discovery, pkce};

use crate::deadline::Deadline;
use crate::limits::{
    HTTP_CONNECT_TIMEOUT, OAUTH_MAX_DOC as MAX_DOC, OAUTH_REDIRECT_CHECK, OAUTH_REDIRECT_HEAD_MAX,
    OAUTH_REDIRECT_READ,
};

fn now_ms() -> i64 {
    crate::clock::now_ms()
}

fn left(deadline: Deadline) -> Result<Duration, String> {
    deadline
        .timeout()
        .ok_or_else(|| "the authorization flow ran out of time".to_string())
}

/// One HTTP exchange: status and body (capped).
fn exchange(
    method: &str,
    url: &str,
    headers: &[(&str, String)],
    body: Option<(&str, String)>,
    deadline: Deadline,
) -> Result<(u16, Vec<u8>), String> {
    let agent = crate::http::agent::agent(HTTP_CONNECT_TIMEOUT);
    let timeout = Some(left(deadline)?);
    let result = match body {
        None => {
            let mut req = agent.get(url);
            for (k, v) in headers {
                req = req.header(*k, v.as_str());
            }
            req.config().timeout_global(timeout).build().call()
        }
        Some((ctype, text)) => {
            let mut req = if method == "POST" {
                agent.post(url)
            } else {
                agent.put(url)
            };
            req = req.header("Content-Type", ctype);
            for (k, v) in headers {
                req = req.header(*k, v.as_str());
            }
            req.config()
                .timeout_global(timeout)
                .build()
                .send(text.as_bytes())
        }
    };
    let resp = result.map_err(|e| format!("{method} {url}: {e}"))?;
    let status = resp.status().as_u16();
    let mut out = Vec::new();
    resp.into_body()
        .into_reader()
        .take(MAX_DOC)
        .read_to_end(&mut out)
        .map_err(|e| format!("{method} {url}: reading the answer: {e}"))?;
    Ok((status, out))
}

fn random_text() -> Result<String, String> {
    crate::entropy::bytes::<32>()
        .map(|b| pkce::verifier(&b))
        .map_err(|e| format!("no random bytes: {e}"))
}

/// What discovery found for one challenge.
struct Discovered {
    resource: ResourceMetadata,
    server: ServerMetadata,
}

impl OAuth {
    /// The Authorization header value to send to `url`, refreshing a token about to
    /// expire first. A refresh that fails drops the tokens: the request then goes without,
    /// and the server's 401 decides (a login, or an error naming `tai mcp login NAME`).
    /// Sent only over https or to loopback, and only to the resource the token was issued
    /// for (a server whose URL changed under the same name gets no token).
    pub fn bearer(&mut self, url: &str, deadline: Deadline) -> Option<String> {
        let for_this_url = discovery::secure_or_loopback(url)
            && self
                .state
                .resource
                .as_deref()
                .is_none_or(|r| discovery::resource_allowed(url, r));
        if !for_this_url {
            return None;
        }
        if self.state.access_token.is_some()
            && self.state.due_for_refresh(now_ms())
            && self.state.refresh_token.is_some()
            && self.refresh(deadline).is_err()
        {
            self.drop_tokens();
        }
        self.state
            .access_token
            .as_ref()
            .map(|t| format!("Bearer {t}"))
    }

    fn drop_tokens(&mut self) {
        self.state.access_token = None;
        self.state.refresh_token = None;
        self.state.expires_at_ms = None;
        self.changed = true;
    }

    /// Handle a 401 or 403 for `server_url`: get a token that may work, or say why not.
    /// `attempt` counts the authorizations this request has already triggered.
    pub fn challenged(
        &mut self,
        server_url: &str,
        status: u16,
        www_authenticate: &str,
        attempt: usize,
        deadline: Deadline,
    ) -> Result<(), String> {
        let bearer = challenge::bearer(www_authenticate).unwrap_or_default();
        if !discovery::secure_or_loopback(server_url) {
            return Err(format!(
                "HTTP {status}: tai sends OAuth tokens over https only (or plain http to a loopback address); {server_url} is neither"
            ));
        }
        let step_up = status == 403;
        if step_up && bearer.error.as_deref() != Some("insufficient_scope") {
            return Err("HTTP 403: the server refused the credentials".into());
        }
        if attempt >= MAX_AUTHORIZATIONS {
            return Err(format!(
                "HTTP {status}: still refused after {attempt} authorizations{}; giving up",
                bearer
                    .scope
                    .as_deref()
                    .map(|s| format!(" (the server asks for scope {s:?})"))
                    .unwrap_or_default()
            ));
        }
        let found = self
            .discover(server_url, bearer.resource_metadata.as_deref(), deadline)
            .map_err(|e| format!("HTTP {status}: {e}"))?;
        let issuer = found.server.issuer.clone();
        // The same authorization server and a refresh token: try that first (not for a
        // step-up, which needs a new grant).
        if !step_up
            && self.state.issuer.as_deref() == Some(issuer.as_str())
            && self.state.refresh_token.is_some()
        {
            self.state.token_endpoint = Some(found.server.token_endpoint.clone());
            if self.refresh(deadline).is_ok() {
                return Ok(());
            }
            self.drop_tokens();
        }
        match self.interaction {
            Interaction::Never => {
                return Err(format!(
                    "{} needs a new login: {}",
                    self.label(),
                    self.login_hint()
                ));
            }
            Interaction::Ask if !crate::term::has_tty() && self.browser_hook.is_none() => {
                return Err(format!(
                    "{} wants an OAuth login and there is no terminal to ask on: run this in a terminal, or set {} (see `tai mcp --help`)",
                    self.label(),
                    super::BROWSER_HOOK_ENV
                ));
            }
            Interaction::Ask if !self.ask()? => {
                return Err("the OAuth login was declined".into());
            }
            _ => {}
        }
        let previous = if step_up {
            self.state.scopes.clone()
        } else {
            Vec::new()
        };
        let scopes = discovery::scopes_to_request(
            bearer.scope.as_deref(),
            &previous,
            found.resource.scopes_supported.as_deref(),
            found.server.scopes_supported.as_deref(),
        );
        let resource = found
            .resource
            .resource
            .clone()
            .unwrap_or_else(|| discovery::canonical_resource(server_url));
        let login_deadline = Deadline::after(self.login_timeout);
        self.login(
            &found.server,
            &resource,
            &scopes,
            login_deadline.max(deadline),
        )
    }

    fn label(&self) -> String {
        if self.server.is_empty() {
            "the server".into()
        } else {
            format!("MCP server {}", self.server)
        }
    }

    fn ask(&self) -> Result<bool, String> {
        if !crate::term::has_tty() {
            // No one to ask: the hook is the standing answer of a headless setup.
            return Ok(self.browser_hook.is_some());
        }
        let answer = crate::term::read_line(&format!(
            "{} wants you to log in (OAuth). Log in now? [y/N] ",
            self.label()
        ))
        .map_err(|e| format!("reading the answer: {e}"))?;
        Ok(matches!(answer.trim(), "y" | "Y" | "yes"))
    }

    /// RFC 9728 then RFC 8414 / OpenID discovery, with the resource and issuer checks.
    fn discover(
        &self,
        server_url: &str,
        from_header: Option<&str>,
        deadline: Deadline,
    ) -> Result<Discovered, String> {
        let mut resource = None;
        for url in discovery::resource_metadata_urls(server_url, from_header) {
            if let Ok((200, body)) = exchange("GET", &url, &[], None, deadline)
                && let Ok(m) = documents::resource_metadata(&body)
            {
                resource = Some(m);
                break;
            }
        }
        let resource = resource.ok_or(
            "the server asks for credentials but publishes no OAuth protected resource metadata \
             (add a static header instead, e.g. --header 'Authorization: Bearer ${TOKEN}')",
        )?;
        if let Some(r) = &resource.resource
            && !discovery::resource_allowed(server_url, r)
        {
            return Err(format!(
                "the server's metadata names resource {r:?}, which is not {server_url}: refusing to authorize for it"
            ));
        }
        let issuer = resource.authorization_servers[0].clone();
        let mut why = format!("no authorization server metadata found for {issuer}");
        for url in discovery::server_metadata_urls(&issuer) {
            match exchange("GET", &url, &[], None, deadline) {
                Ok((200, body)) => match documents::server_metadata(&body, &issuer) {
                    Ok(server) => return Ok(Discovered { resource, server }),
                    Err(e) => why = e,
                },
                Ok(_) => {}
                Err(e) => why = e,
            }
        }
        Err(why)
    }

    /// A client identity for `server`: the one held (pre-registered, or registered with
    /// this very issuer), a Client ID Metadata Document URL, or a new registration.
    fn client_for(
        &mut self,
        server: &ServerMetadata,
        redirect_uri: &str,
        deadline: Deadline,
    ) -> Result<Client, String> {
        if let Some(c) = &self.state.client
            && (c.preregistered
                || (c.issuer.as_deref() == Some(server.issuer.as_str())
                    && c.redirect_uri.as_deref().is_none_or(|r| r == redirect_uri)))
        {
            let mut c = c.clone();
            if c.preregistered {
                c.auth_method = match (
                    &c.client_secret,
                    server
                        .auth_methods
                        .iter()
                        .any(|m| m == "client_secret_basic"),
                ) {
                    (None, _) => "none".into(),
                    (Some(_), true) => "client_secret_basic".into(),
                    (Some(_), false)
                        if server
                            .auth_methods
                            .iter()
                            .any(|m| m == "client_secret_post") =>
                    {
                        "client_secret_post".into()
                    }
                    (Some(_), false) => "client_secret_basic".into(),
                };
            }
            return Ok(c);
        }
        if server.cimd_supported
            && let Some(url) = &self.client_metadata_url
        {
            return Ok(Client {
                issuer: Some(server.issuer.clone()),
                client_id: url.clone(),
                client_secret: None,
                auth_method: "none".into(),
                redirect_uri: None,
                preregistered: false,
            });
        }
        let Some(endpoint) = &server.registration_endpoint else {
            return Err(format!(
                "{} supports neither dynamic registration nor client metadata documents: \
                 register tai there and pass its client id (`tai mcp login NAME --client-id ID`, \
                 or {} for `tai mcp add`; the secret in {})",
                server.issuer,
                super::CLIENT_ID_ENV,
                super::CLIENT_SECRET_ENV
            ));
        };
        let method = if server.auth_methods.iter().any(|m| m == "none") {
            "none"
        } else if server
            .auth_methods
            .iter()
            .any(|m| m == "client_secret_basic")
        {
            "client_secret_basic"
        } else {
            "client_secret_post"
        };
        let body = json!({
            "client_name": "tai",
            "redirect_uris": [redirect_uri],
            "grant_types": ["authorization_code", "refresh_token"],
            "response_types": ["code"],
            "token_endpoint_auth_method": method,
            "application_type": "native",
        });
        let (status, answer) = exchange(
            "POST",
            endpoint,
            &[("Accept", "application/json".into())],
            Some(("application/json", body.to_string())),
            deadline,
        )?;
        if !(200..300).contains(&status) {
            return Err(format!(
                "registering with {} failed (HTTP {status}): pass --client-id to use a pre-registered client",
                server.issuer
            ));
        }
        let (client_id, client_secret, chosen) = documents::registration(&answer)?;
        let auth_method = match (chosen, &client_secret) {
            (Some(m), _) => m,
            (None, None) => "none".into(),
            (None, Some(_)) => method.to_string(),
        };
        let client = Client {
            issuer: Some(server.issuer.clone()),
            client_id,
            client_secret,
            auth_method,
            redirect_uri: Some(redirect_uri.to_string()),
            preregistered: false,
        };
        self.state.client = Some(client.clone());
        self.changed = true;
        Ok(client)
    }

    /// The client's credentials on a token request (header or form fields).
    fn authenticate(
        client: &Client,
        form: &mut Vec<(&'static str, String)>,
    ) -> Vec<(&'static str, String)> {
        match (client.auth_method.as_str(), &client.client_secret) {
            ("client_secret_basic", Some(secret)) => {
                return vec![("Authorization", pkce::basic(&client.client_id, secret))];
            }
            ("client_secret_post", Some(secret)) => {
                form.push(("client_id", client.client_id.clone()));
                form.push(("client_secret", secret.clone()));
            }
            _ => form.push(("client_id", client.client_id.clone())),
        }
        Vec::new()
    }

    fn token_request(
        &mut self,
        endpoint: &str,
        client: &Client,
        mut form: Vec<(&'static str, String)>,
        deadline: Deadline,
    ) -> Result<Tokens, String> {
        let mut headers = Self::authenticate(client, &mut form);
        headers.push(("Accept", "application/json".into()));
        let pairs: Vec<(&str, &str)> = form.iter().map(|(k, v)| (*k, v.as_str())).collect();
        let (status, body) = exchange(
            "POST",
            endpoint,
            &headers,
            Some(("application/x-www-form-urlencoded", discovery::form(&pairs))),
            deadline,
        )?;
        documents::tokens(status, &body)
    }

    fn keep(&mut self, t: Tokens, asked: &[String]) {
        let now = now_ms();
        self.state.access_token = Some(t.access_token);
        if t.refresh_token.is_some() {
            self.state.refresh_token = t.refresh_token;
        }
        self.state.lifetime_ms = t.expires_in.map(|s| s as i64 * 1000);
        self.state.expires_at_ms = self.state.lifetime_ms.map(|l| now + l);
        self.state.scopes = match t.scope {
            // Scope tokens are visible ASCII (RFC 6749 §3.3); anything else is dropped.
            Some(s) => s
                .split_whitespace()
                .filter(|x| x.bytes().all(|b| b.is_ascii_graphic()))
                .map(str::to_string)
                .collect(),
            None => asked.to_vec(),
        };
        self.changed = true;
    }

    /// Use the refresh token (RFC 6749 §6) with the same resource.
    pub fn refresh(&mut self, deadline: Deadline) -> Result<(), String> {
        let (Some(rt), Some(endpoint), Some(client)) = (
            self.state.refresh_token.clone(),
            self.state.token_endpoint.clone(),
            self.state.client.clone(),
        ) else {
            return Err("nothing to refresh with".into());
        };
        let mut form = vec![
            ("grant_type", "refresh_token".to_string()),
            ("refresh_token", rt),
        ];
        if let Some(r) = &self.state.resource {
            form.push(("resource", r.clone()));
        }
        let scopes = self.state.scopes.clone();
        let t = self.token_request(&endpoint, &client, form, deadline)?;
        self.keep(t, &scopes);
        Ok(())
    }

    /// The authorization code flow with PKCE through the loopback redirect.
    fn login(
        &mut self,
        server: &ServerMetadata,
        resource: &str,
        scopes: &[String],
        deadline: Deadline,
    ) -> Result<(), String> {
        if server
            .pkce_methods
            .as_ref()
            .is_some_and(|m| !m.iter().any(|x| x == "S256"))
        {
            return Err(format!(
                "{} does not support PKCE S256: refusing to log in without it",
                server.issuer
            ));
        }
        // Reuse the port of a registered redirect URI when it is free.
        let wanted_port = self
            .state
            .client
            .as_ref()
            .filter(|c| c.issuer.as_deref() == Some(server.issuer.as_str()))
            .and_then(|c| c.redirect_uri.as_deref())
            .and_then(|r| r.strip_prefix("http://127.0.0.1:"))
            .and_then(|r| r.split('/').next())
            .and_then(|p| p.parse::<u16>().ok());
        let listener = wanted_port
            .and_then(|p| TcpListener::bind(("127.0.0.1", p)).ok())
            .map_or_else(|| TcpListener::bind(("127.0.0.1", 0)), Ok)
            .map_err(|e| format!("cannot listen on 127.0.0.1 for the redirect: {e}"))?;
        listener
            .set_nonblocking(true)
            .map_err(|e| format!("the redirect listener: {e}"))?;
        let port = listener.local_addr().map_err(|e| e.to_string())?.port();
        let redirect_uri = format!("http://127.0.0.1:{port}/callback");
        let client = self.client_for(server, &redirect_uri, deadline)?;
        let verifier = random_text()?;
        let state = random_text()?;
        let mut query = vec![
            ("response_type", "code".to_string()),
            ("client_id", client.client_id.clone()),
            ("redirect_uri", redirect_uri.clone()),
            ("code_challenge", pkce::challenge(&verifier)),
            ("code_challenge_method", "S256".into()),
            ("state", state.clone()),
            ("resource", resource.to_string()),
        ];
        if !scopes.is_empty() {
            query.push(("scope", scopes.join(" ")));
        }
        let pairs: Vec<(&str, &str)> = query.iter().map(|(k, v)| (*k, v.as_str())).collect();
        let sep = if server.authorization_endpoint.contains('?') {
            '&'
        } else {
            '?'
        };
        let url = format!(
            "{}{sep}{}",
            server.authorization_endpoint,
            discovery::form(&pairs)
        );
        let back = self.redirect(&url, &listener, deadline)?;
        let code = documents::callback(
            &back,
            &state,
            &server.issuer,
            server.iss_parameter_supported,
        )?;
        let form = vec![
            ("grant_type", "authorization_code".to_string()),
            ("code", code),
            ("redirect_uri", redirect_uri),
            ("code_verifier", verifier),
            ("resource", resource.to_string()),
        ];
        // Tokens from another issuer are never kept alongside these.
        if self.state.issuer.as_deref() != Some(server.issuer.as_str()) {
            self.state.refresh_token = None;
        }
        let t = self.token_request(&server.token_endpoint, &client, form, deadline)?;
        self.state.issuer = Some(server.issuer.clone());
        self.state.resource = Some(resource.to_string());
        self.state.token_endpoint = Some(server.token_endpoint.clone());
        self.state.client = Some(client);
        self.keep(t, scopes);
        eprintln!("tai: logged in to {} at {}", self.label(), server.issuer);
        Ok(())
    }

    /// Show the URL, open it, and wait for the redirect (or a pasted redirect URL).
    /// Returns the redirect's query string.
    fn redirect(
        &self,
        url: &str,
        listener: &TcpListener,
        deadline: Deadline,
    ) -> Result<String, String> {
        eprintln!(
            "tai: to log in to {}, open this URL:\n  {url}",
            self.label()
        );
        let mut child = self.open_browser(url)?;
        // The terminal itself (not stdin, which the REPL holds locked) takes a paste.
        let paste = match self.browser_hook {
            None => std::fs::File::open("/dev/tty").ok(),
            Some(_) => None,
        };
        if paste.is_some() {
            eprintln!("tai: or paste the address the browser ends on here and press Enter:");
        }
        let result = wait_for_redirect(listener, paste.as_ref(), &mut child, deadline);
        if let Some(mut c) = child {
            if c.try_wait().ok().flatten().is_none() {
                let _ = c.kill();
            }
            let _ = c.wait();
        }
        result
    }

    /// Start the hook, `$BROWSER`, or the desktop's opener; `None` when there is none.
    fn open_browser(&self, url: &str) -> Result<Option<Child>, String> {
        let command = match (&self.browser_hook, &self.browser) {
            (Some(hook), _) => Some((hook.clone(), true)),
            (None, Some(b)) => Some((b.clone(), false)),
            (None, None) if cfg!(target_os = "macos") => Some(("open".to_string(), false)),
            (None, None) if self.has_display => Some(("xdg-open".to_string(), false)),
            _ => None,
        };
        let Some((line, is_hook)) = command else {
            return Ok(None);
        };
        let mut words = crate::shell_words::split_words(&line)
            .map_err(|e| format!("{}: {e}", super::BROWSER_HOOK_ENV))?;
        if words.is_empty() {
            return Ok(None);
        }
        let program = words.remove(0);
        // A browser lives on after the login: it gets the user's environment without
        // tai's secrets (`child_env`), like every other child.
        let spawned = Command::new(&program)
            .args(words)
            .arg(url)
            .env_clear()
            .envs(crate::child_env::for_shell(
                &crate::child_env::parent(),
                &[],
            ))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(if is_hook {
                Stdio::inherit()
            } else {
                Stdio::null()
            })
            .spawn();
        match spawned {
            Ok(c) => Ok(Some(c)),
            Err(e) if is_hook => Err(format!(
                "cannot run {} ({program}): {e}",
                super::BROWSER_HOOK_ENV
            )),
            Err(_) => Ok(None),
        }
    }
}

/// Poll the listener (and the terminal, for a paste) until a redirect arrives, the deadline
/// passes, Ctrl-C is pressed, or the hook fails.
fn wait_for_redirect(
    listener: &TcpListener,
    paste: Option<&std::fs::File>,
    child: &mut Option<Child>,
    deadline: Deadline,
) -> Result<String, String> {
    loop {
        if crate::sigint::interrupted() {
            return Err("the login was interrupted".into());
        }
        if deadline.expired() {
            return Err("the login timed out: nothing came back to the redirect address".into());
        }
        if let Some(c) = child
            && let Ok(Some(status)) = c.try_wait()
            && !status.success()
        {
            return Err(format!("{} failed ({status})", super::BROWSER_HOOK_ENV));
        }
        let mut fds = vec![PollFd::new(listener.as_fd(), PollFlags::POLLIN)];
        if let Some(tty) = paste {
            fds.push(PollFd::new(tty.as_fd(), PollFlags::POLLIN));
        }
        match poll(
            &mut fds,
            deadline.within(OAUTH_REDIRECT_CHECK).poll_timeout(),
        ) {
            Ok(0) | Err(nix::errno::Errno::EINTR) => continue,
            Err(e) => return Err(format!("waiting for the redirect: {e}")),
            Ok(_) => {}
        }
        let pasted = fds
            .get(1)
            .and_then(|f| f.revents())
            .is_some_and(|r| !r.is_empty());
        drop(fds);
        if let (true, Some(mut tty)) = (pasted, paste) {
            // The terminal is in canonical mode: one read is one line.
            let mut buf = [0u8; 8192];
            let n = tty.read(&mut buf).unwrap_or(0);
            let line = String::from_utf8_lossy(&buf[..n]);
            if let Some((_, q)) = line.trim().split_once('?') {
                return Ok(q.split('#').next().unwrap_or("").to_string());
            }
            eprintln!("tai: that is not the redirect address (it has no ?code=…); try again:");
            continue;
        }
        match listener.accept() {
            Ok((stream, _)) => {
                if let Some(q) = answer_redirect(stream, deadline) {
                    return Ok(q);
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
            Err(e) => return Err(format!("the redirect listener: {e}")),
        }
    }
}

/// Read one request from the browser; answer it; return the query of `GET /callback?…`.
fn answer_redirect(mut stream: TcpStream, deadline: Deadline) -> Option<String> {
    let wait = deadline.within(OAUTH_REDIRECT_READ).timeout()?;
    stream.set_nonblocking(false).ok()?;
    stream.set_read_timeout(Some(wait)).ok()?;
    let mut head = Vec::new();
    let mut buf = [0u8; 2048];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") && head.len() < OAUTH_REDIRECT_HEAD_MAX {
        match stream.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => head.extend_from_slice(&buf[..n]),
        }
    }
    let text = String::from_utf8_lossy(&head);
    let target = text
        .lines()
        .next()
        .and_then(|l| l.strip_prefix("GET "))
        .and_then(|l| l.split(' ').next())
        .unwrap_or("");
    let query = target.strip_prefix("/callback?").map(str::to_string);
    let (status, page) = if query.is_some() {
        (
            "200 OK",
            "tai received the login; you can close this window.",
        )
    } else {
        ("404 Not Found", "not the tai login redirect")
    };
    let _ = write!(
        stream,
        "HTTP/1.1 {status}\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{page}",
        page.len()
    );
    query
}

#[cfg(test)]
mod bearer_tests {
    use super::*;
    use crate::mcp::oauth::{AuthState, Interaction, OAuth};

    /// A token goes only to the resource it was issued for, over https or loopback.
    #[test]
    fn a_token_goes_only_to_its_resource() {
        let state = AuthState {
            resource: Some("http://127.0.0.1:4100/mcp".into()),
            access_token: Some("tok".into()),
            ..Default::default()
        };
        let mut o = OAuth::new("s", state, Interaction::Never, &|_: &str| None);
        let soon = Deadline::after(Duration::from_secs(5));
        assert_eq!(
            o.bearer("http://127.0.0.1:4100/mcp", soon).as_deref(),
            Some("Bearer tok")
        );
        for other in [
            "http://127.0.0.1:4101/mcp",
            "http://127.0.0.1:4100/other",
            "http://attacker.example/mcp",
        ] {
            assert_eq!(o.bearer(other, soon), None, "{other}");
        }
    }
}
