//! The bodies of tai's fuzz targets: each takes arbitrary bytes, drives one parser of
//! untrusted input, and asserts a property beyond "does not panic" where one exists
//! (same result for any split of the input, a round trip, no secret left in the output).
//! `fuzz_targets/*.rs` hand them to libFuzzer; `src/smoke.rs` replays the seed corpus
//! and a fixed-seed mutation pass through them on a stable toolchain.

use tai::testing::mcp_servers::expand::{Sources, expand};
use tai::testing::mcp_servers::normalize::normalize;
use tai::testing::http::sse;
use tai::testing::jsonrpc::Message;
use tai::testing::mcp::ndjson::{Frame, LineSplitter};
use tai::testing::vault::redact::{self as redaction, Secret};

/// Where to split an input in two, chosen by its first byte (so every split is reachable).
fn split_point(data: &[u8]) -> usize {
    match data.first() {
        Some(b) if !data.is_empty() => usize::from(*b) % data.len(),
        _ => 0,
    }
}

/// The SSE parser: events are the same whether the bytes come whole, in two pieces, or
/// one byte at a time.
pub fn sse(data: &[u8]) {
    let run = |pieces: &mut dyn Iterator<Item = &[u8]>| {
        let mut p = sse::Parser::new();
        let mut out = Vec::new();
        for piece in pieces {
            p.feed(piece, &mut out);
        }
        (out, p.retry_ms())
    };
    let whole = run(&mut std::iter::once(data));
    let at = split_point(data);
    let halves = run(&mut [&data[..at], &data[at..]].into_iter());
    assert_eq!(whole, halves, "split at {at}");
    if data.len() <= 4096 {
        let bytes = run(&mut data.chunks(1));
        assert_eq!(whole, bytes, "byte by byte");
    }
}

/// stdio framing: same frames for any split; no line is ever longer than the cap.
pub fn ndjson(data: &[u8]) {
    const CAP: usize = 64;
    let run = |pieces: &[&[u8]]| {
        let mut s = LineSplitter::new(CAP);
        let mut out = Vec::new();
        for p in pieces {
            s.feed(p, &mut out);
        }
        out
    };
    let whole = run(&[data]);
    let at = split_point(data);
    assert_eq!(whole, run(&[&data[..at], &data[at..]]), "split at {at}");
    for f in &whole {
        if let Frame::Line(l) = f {
            assert!(l.len() <= CAP, "a line of {} bytes passed the cap", l.len());
        }
    }
}

/// The JSON-RPC decoder: whatever it accepts re-encodes to a message that decodes the same.
pub fn jsonrpc(data: &[u8]) {
    if let Ok(m) = Message::parse(data) {
        let again = Message::parse(&m.to_bytes()).expect("a decoded message re-encodes validly");
        assert_eq!(m, again);
        let _ = m.method();
    }
}

/// The config normalizer (both platforms' rules) and `${VAR}` expansion of its text.
pub fn config(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let _ = normalize(text, false);
    let _ = normalize(text, true);
    let env = |k: &str| k.len().is_multiple_of(2).then(|| format!("v-{k}"));
    let secret = |k: &str| k.len().is_multiple_of(3).then(|| format!("s-{k}"));
    let out = expand(
        text,
        &Sources {
            env: &env,
            secret: &secret,
        },
    );
    // Without a `$` there is nothing to expand: the text comes back as it was.
    if !text.contains('$') {
        assert_eq!(out.text, text);
        assert!(out.missing.is_empty() && out.resolved.is_empty());
    }
}

/// The redactor: the input is `secret NUL secret NUL … NUL text`; no secret value is left
/// (of credential length) in the output once its markers are cut out.
pub fn redact(data: &[u8]) {
    let Ok(all) = std::str::from_utf8(data) else {
        return;
    };
    let mut parts: Vec<&str> = all.split('\0').collect();
    let text = parts.pop().unwrap_or("");
    let secrets: Vec<Secret> = parts
        .iter()
        .take(8)
        .enumerate()
        .map(|(i, v)| Secret {
            name: format!("s{i}"),
            value: v.to_string(),
        })
        .collect();
    let out = redaction::redact(text, &secrets);
    // Cut markers to NUL, which no secret (split on NUL) contains.
    let mut rest = out.as_str();
    let mut cut = String::new();
    while let Some(at) = rest.find("[REDACTED:") {
        cut.push_str(&rest[..at]);
        cut.push('\0');
        rest = match rest[at..].find(']') {
            Some(end) => &rest[at + end + 1..],
            None => "",
        };
    }
    cut.push_str(rest);
    for s in &secrets {
        // Values too short to be credentials are not patterns (they would scrub words).
        if !redaction::too_short(&s.value) {
            assert!(
                !cut.contains(&s.value),
                "secret {:?} left in {out:?}",
                s.value
            );
        }
    }
}

/// The key the fuzzed server expects (the seed corpus's admitted requests carry it).
pub const SERVER_KEY: &str = "fuzz-key-0123456789abcdef0123456789";

thread_local! {
    static ENDPOINT: std::cell::RefCell<Option<tai::testing::server::http::Endpoint>> =
        const { std::cell::RefCell::new(None) };
}

/// One endpoint for the whole run: a vault in a temp dir, no model, sessions that expire
/// at once (so state cannot pile up across inputs).
/// Where the fuzzed server keeps its vault (the smoke removes it when done).
pub fn scratch_dir() -> std::path::PathBuf {
    std::env::temp_dir().join(format!("tai-fuzz-{}", std::process::id()))
}

fn endpoint() -> tai::testing::server::http::Endpoint {
    let dir = scratch_dir();
    let env = {
        let dir = dir.clone();
        move |k: &str| match k {
            "TAI_HOME" => Some(dir.join("home").display().to_string()),
            "TAI_CONFIG" => Some(dir.join("config.toml").display().to_string()),
            _ => None,
        }
    };
    let paths = tai::testing::config::Paths::from_env(&env).expect("paths");
    let config = tai::testing::config::resolve(
        &paths,
        None,
        &env,
        &tai::testing::config::FlagSettings::default(),
        None,
        |_| None,
    );
    std::fs::create_dir_all(&paths.home).expect("fuzz home");
    let store = tai::testing::vault::Store::open(&config.vault_path).expect("fuzz vault");
    let mut server = tai::testing::server::McpServer::new(store, config);
    server.idle = std::time::Duration::ZERO;
    tai::testing::server::http::Endpoint::new(server, SERVER_KEY.into())
}

/// The server's request path from raw bytes (head and body through admission to the
/// answer), whole and split in two: every answer is an HTTP response, both runs answer
/// with the same statuses, and without the key in the input nothing is served (only
/// refusals). Inputs naming `tools/call` are skipped: a fuzzer must never run a tool.
pub fn server_request(data: &[u8]) {
    if data.windows(10).any(|w| w == b"tools/call") {
        return;
    }
    let statuses = |out: &[u8]| -> Vec<String> {
        let text = String::from_utf8_lossy(out);
        text.match_indices("HTTP/1.1 ")
            .map(|(at, _)| text[at + 9..].chars().take(3).collect())
            .collect()
    };
    ENDPOINT.with(|cell| {
        let mut slot = cell.borrow_mut();
        let ep = slot.get_or_insert_with(endpoint);
        let whole = tai::testing::server::http::exchange_bytes(ep, &[data]);
        let at = split_point(data);
        let split = tai::testing::server::http::exchange_bytes(ep, &[&data[..at], &data[at..]]);
        if !whole.is_empty() {
            assert!(
                whole.starts_with(b"HTTP/1.1 "),
                "{:?}",
                String::from_utf8_lossy(&whole)
            );
        }
        assert_eq!(statuses(&whole), statuses(&split), "split at {at}");
        let keyed = data
            .windows(SERVER_KEY.len())
            .any(|w| w == SERVER_KEY.as_bytes());
        if !keyed {
            for s in statuses(&whole) {
                assert!(
                    !s.starts_with('2'),
                    "served without the key: {}",
                    String::from_utf8_lossy(&whole)
                );
            }
        }
    });
}
