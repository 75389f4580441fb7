//! The resolver's HTTP: one GET per call on tai's thread-free agent, with a deadline, a
//! size cap and up to 5 redirects. `GITHUB_TOKEN`, when set, goes to the GitHub API
//! only (it lifts the anonymous rate limit) and never into evidence or errors.

use std::io::Read;

use super::{Fetch, Fetched};

use crate::limits::{HTTP_CONNECT_TIMEOUT, RESOLVER_TIMEOUT};

pub struct HttpFetch {
    agent: ureq::Agent,
    api_base: String,
    token: Option<String>,
}

impl HttpFetch {
    pub fn new(api_base: &str, token: Option<String>) -> HttpFetch {
        HttpFetch {
            agent: crate::http::agent::agent(HTTP_CONNECT_TIMEOUT),
            api_base: api_base.trim_end_matches('/').to_string(),
            token: token.filter(|t| !t.is_empty()),
        }
    }
}

impl Fetch for HttpFetch {
    fn get(&mut self, url: &str, accept: &str, max: usize) -> Result<Fetched, String> {
        let mut req = self
            .agent
            .get(url)
            .header("Accept", accept)
            .config()
            .timeout_global(Some(RESOLVER_TIMEOUT))
            .max_redirects(5)
            .build();
        if let Some(t) = &self.token
            && url.starts_with(&format!("{}/", self.api_base))
        {
            req = req.header("Authorization", &format!("Bearer {t}"));
        }
        // ureq's errors name the host and the cause, never request headers.
        let resp = req.call().map_err(|e| e.to_string())?;
        let status = resp.status().as_u16();
        let mut body = Vec::new();
        resp.into_body()
            .into_reader()
            .take(max as u64 + 1)
            .read_to_end(&mut body)
            .map_err(|e| format!("reading the body: {e}"))?;
        if body.len() > max {
            return Err(format!("larger than {max} bytes"));
        }
        Ok(Fetched { status, body })
    }
}
