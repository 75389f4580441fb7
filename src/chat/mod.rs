//! `ChatClient`: an OpenAI-compatible `/chat/completions` client (ureq, blocking, no
//! threads), streaming over the same SSE parser as the MCP HTTP leg.
//!
//! Errors say what to do next: no endpoint listening (which URL, how to set it), a
//! refused key, an unknown model, rate limits (Retry-After honoured, bounded), server
//! errors, and a stream cut mid-answer (what arrived is kept and flagged).

pub mod delta;

use std::io::Read;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::deadline::Deadline;
use crate::http::sse;
use crate::limits::{
    CHAT_ERROR_BODY_MAX, CHAT_MAX_BODY, CHAT_MAX_RETRIES, CHAT_MAX_RETRY_WAIT, HTTP_CONNECT_TIMEOUT,
};
pub use delta::{Answer, ToolCall};

pub struct ChatClient {
    agent: ureq::Agent,
    pub base_url: String,
    pub model: String,
    api_key: Option<String>,
    /// Deadline of one model call.
    pub timeout: Duration,
    /// A deadline over every call (a served `chat` turn's), when sooner than `timeout`.
    pub until: Option<Instant>,
}

impl ChatClient {
    pub fn new(
        base_url: &str,
        model: &str,
        api_key: Option<String>,
        timeout: Duration,
    ) -> ChatClient {
        ChatClient {
            agent: crate::http::agent::agent(HTTP_CONNECT_TIMEOUT),
            base_url: base_url.trim_end_matches('/').to_string(),
            model: model.to_string(),
            api_key,
            timeout,
            until: None,
        }
    }

    /// When the call starting now must end: `timeout` from now, or `until` if sooner.
    fn call_deadline(&self) -> Deadline {
        let own = Deadline::after(self.timeout);
        self.until.map_or(own, |u| Deadline::at(u).min(own))
    }

    fn url(&self) -> String {
        format!("{}/chat/completions", self.base_url)
    }

    /// One request, with bounded retries on 429; returns the response to read.
    fn post(
        &self,
        body: &Value,
        deadline: Deadline,
    ) -> Result<ureq::http::Response<ureq::Body>, String> {
        let bytes = serde_json::to_vec(body).map_err(|e| e.to_string())?;
        let url = self.url();
        for attempt in 0..=CHAT_MAX_RETRIES {
            let left = deadline.timeout().ok_or_else(|| {
                format!(
                    "the model did not answer in time ({}s)",
                    self.timeout.as_secs()
                )
            })?;
            let mut req = self
                .agent
                .post(&url)
                .header("Content-Type", "application/json");
            if let Some(k) = &self.api_key {
                req = req.header("Authorization", format!("Bearer {k}"));
            }
            let resp = req
                .config()
                .timeout_global(Some(left))
                .build()
                .send(&bytes[..])
                .map_err(|e| self.net_error(e))?;
            let status = resp.status().as_u16();
            if (200..300).contains(&status) {
                return Ok(resp);
            }
            let retry_after = resp
                .headers()
                .get("retry-after")
                .and_then(|v| v.to_str().ok())
                .and_then(|v| v.trim().parse::<u64>().ok());
            let mut reader = resp.into_body().into_reader();
            let mut text = String::new();
            let _ = (&mut reader)
                .take(CHAT_ERROR_BODY_MAX)
                .read_to_string(&mut text);
            let detail = error_detail(&text);
            match status {
                429 if attempt < CHAT_MAX_RETRIES => {
                    let wait = Duration::from_secs(retry_after.unwrap_or(1 << attempt))
                        .min(CHAT_MAX_RETRY_WAIT);
                    if wait >= deadline.remaining() {
                        return Err(format!(
                            "rate limited by {url} (HTTP 429) and the retry would pass the deadline"
                        ));
                    }
                    eprintln!(
                        "tai: rate limited (HTTP 429); retrying in {}s",
                        wait.as_secs()
                    );
                    crate::clock::sleep(wait);
                }
                429 => {
                    return Err(format!(
                        "rate limited by {url} (HTTP 429) after {CHAT_MAX_RETRIES} retries: {detail}"
                    ));
                }
                401 | 403 => {
                    return Err(format!(
                        "the endpoint {url} refused the API key (HTTP {status}): set TAI_API_KEY, or name a vault secret with `api_key_secret` in the profile. {detail}"
                    ));
                }
                404 => {
                    return Err(format!(
                        "HTTP 404 from {url}: the model {:?} or the endpoint was not found; set TAI_MODEL (or the profile's model) and check TAI_BASE_URL. {detail}",
                        self.model
                    ));
                }
                s if s >= 500 => {
                    return Err(format!("the model endpoint failed (HTTP {s}): {detail}"));
                }
                s => return Err(format!("the model endpoint answered HTTP {s}: {detail}")),
            }
        }
        Err(format!("rate limited by {url} (HTTP 429)"))
    }

    fn net_error(&self, e: ureq::Error) -> String {
        match e {
            ureq::Error::ConnectionFailed | ureq::Error::HostNotFound => format!(
                "no model endpoint at {}: start one (for example `ollama serve`) or set TAI_BASE_URL (or the profile's base_url)",
                self.base_url
            ),
            ureq::Error::Io(io) if io.kind() == std::io::ErrorKind::ConnectionRefused => format!(
                "no model endpoint at {}: start one (for example `ollama serve`) or set TAI_BASE_URL (or the profile's base_url)",
                self.base_url
            ),
            ureq::Error::Timeout(_) => format!(
                "the model did not answer in time ({}s)",
                self.timeout.as_secs()
            ),
            other => format!("{}: {other}", self.url()),
        }
    }

    /// Stream one answer; `on_text` gets each piece of text as it arrives; `stop` is
    /// checked between reads (Ctrl-C).
    pub fn stream(
        &self,
        messages: &[Value],
        tools: &[Value],
        on_text: &mut dyn FnMut(&str),
        stop: &dyn Fn() -> bool,
    ) -> Result<Answer, String> {
        let deadline = self.call_deadline();
        let mut body = json!({"model": self.model, "messages": messages, "stream": true});
        if !tools.is_empty() {
            body["tools"] = Value::Array(tools.to_vec());
        }
        let resp = self.post(&body, deadline)?;
        let is_sse = resp
            .headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .is_some_and(|c| c.starts_with("text/event-stream"));
        let mut reader = resp.into_body().into_reader();
        let mut acc = delta::Accumulator::new();
        if !is_sse {
            // Some endpoints ignore `stream` and answer with one JSON body.
            let mut text = String::new();
            (&mut reader)
                .take(CHAT_MAX_BODY as u64)
                .read_to_string(&mut text)
                .map_err(|e| format!("reading the answer: {e}"))?;
            let piece = acc.feed(&text)?;
            on_text(&piece);
            let mut a = acc.finish();
            a.cut = false;
            return Ok(a);
        }
        let mut parser = sse::Parser::new();
        let mut buf = [0u8; 8192];
        let mut read = 0usize;
        loop {
            if stop() {
                break;
            }
            let n = match reader.read(&mut buf) {
                Ok(n) => n,
                Err(_) => break, // a cut stream: keep what arrived
            };
            if n == 0 {
                break;
            }
            read += n;
            if read > CHAT_MAX_BODY {
                return Err("the model's answer is over 16 MB; stopped reading".into());
            }
            let mut events = Vec::new();
            parser.feed(&buf[..n], &mut events);
            for e in events {
                if e.data.is_empty() {
                    continue;
                }
                let piece = acc.feed(&e.data)?;
                if !piece.is_empty() {
                    on_text(&piece);
                }
            }
        }
        Ok(acc.finish())
    }

    /// One non-streamed answer with no tools (the served `completions` tool).
    pub fn complete(&self, messages: &[Value]) -> Result<String, String> {
        let deadline = self.call_deadline();
        let body = json!({"model": self.model, "messages": messages, "stream": false});
        let resp = self.post(&body, deadline)?;
        let mut text = String::new();
        resp.into_body()
            .into_reader()
            .take(CHAT_MAX_BODY as u64)
            .read_to_string(&mut text)
            .map_err(|e| format!("reading the answer: {e}"))?;
        let mut acc = delta::Accumulator::new();
        acc.feed(&text)?;
        Ok(acc.finish().text)
    }
}

/// The `error.message` of an OpenAI-style error body, or the body's start.
fn error_detail(body: &str) -> String {
    serde_json::from_str::<Value>(body)
        .ok()
        .and_then(|v| {
            v.pointer("/error/message")
                .and_then(Value::as_str)
                .map(str::to_string)
        })
        .unwrap_or_else(|| body.trim().chars().take(200).collect())
}
