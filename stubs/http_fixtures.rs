//! `tai-stub-http-fixtures`: canned registry answers and repository files from a folder,
//! so the GitHub URL resolver is tested offline.
//!
//! `--dir DIR` serves `GET /PATH` from `DIR/PATH` (the query is ignored; `..` refused);
//! `DIR/PATH.status` (say `403 Forbidden`) answers with that status instead of 200.
//! When `DIR/registry.json` (an array of `{server, _meta}` items) exists, `GET
//! /v0.1/servers?search=S&cursor=C` filters it by name substring and pages it
//! (`--page-size N`, default 2, cursor = offset). `--log FILE` appends one JSON line per
//! request: the path, the Accept header and whether an Authorization header came.
//! `--delay-ms N` waits before each answer (a slow network, to watch the client wait).
//! Prints `listening on http://127.0.0.1:PORT` first.

#[path = "http_io.rs"]
mod http_io;

use std::io::Write;
use std::net::TcpListener;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use http_io::{read_request, respond, respond_bytes};

fn die(msg: &str) -> ! {
    eprintln!("tai-stub-http-fixtures: {msg}");
    std::process::exit(2)
}

fn query(path: &str, key: &str) -> Option<String> {
    let q = path.split_once('?')?.1;
    q.split('&').find_map(|kv| {
        let (k, v) = kv.split_once('=')?;
        (k == key).then(|| decode(v))
    })
}

fn decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%'
            && i + 2 < b.len()
            && let Some(x) = std::str::from_utf8(&b[i + 1..i + 3])
                .ok()
                .and_then(|h| u8::from_str_radix(h, 16).ok())
        {
            out.push(x);
            i += 3;
            continue;
        }
        out.push(if b[i] == b'+' { b' ' } else { b[i] });
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn registry(dir: &Path, path: &str, page_size: usize) -> Option<Value> {
    let text = std::fs::read_to_string(dir.join("registry.json")).ok()?;
    let all: Vec<Value> =
        serde_json::from_str(&text).unwrap_or_else(|e| die(&format!("registry.json: {e}")));
    let search = query(path, "search").unwrap_or_default().to_lowercase();
    let hits: Vec<&Value> = all
        .iter()
        .filter(|s| {
            s.pointer("/server/name")
                .and_then(Value::as_str)
                .is_some_and(|n| n.to_lowercase().contains(&search))
        })
        .collect();
    let from: usize = query(path, "cursor")
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    let page: Vec<&Value> = hits.iter().skip(from).take(page_size).copied().collect();
    let mut metadata = json!({"count": page.len()});
    if from + page_size < hits.len() {
        metadata["nextCursor"] = json!((from + page_size).to_string());
    }
    Some(json!({"servers": page, "metadata": metadata}))
}

fn main() {
    let (mut dir, mut log, mut page_size) = (None::<PathBuf>, None::<PathBuf>, 2usize);
    let mut delay = std::time::Duration::ZERO;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut val = || {
            args.next()
                .unwrap_or_else(|| die(&format!("{a} needs a value")))
        };
        match a.as_str() {
            "--dir" => dir = Some(val().into()),
            "--log" => log = Some(val().into()),
            "--page-size" => page_size = val().parse().unwrap_or_else(|_| die("--page-size N")),
            "--delay-ms" => {
                let ms = val().parse().unwrap_or_else(|_| die("--delay-ms N"));
                delay = std::time::Duration::from_millis(ms);
            }
            other => die(&format!("unknown flag {other}")),
        }
    }
    let dir = dir.unwrap_or_else(|| die("--dir DIR is required"));
    let listener =
        TcpListener::bind(("127.0.0.1", 0)).unwrap_or_else(|e| die(&format!("bind: {e}")));
    let port = listener.local_addr().map(|a| a.port()).unwrap_or(0);
    println!("listening on http://127.0.0.1:{port}");
    let _ = std::io::stdout().flush();
    for stream in listener.incoming() {
        let Ok(stream) = stream else { continue };
        let Some(req) = read_request(&stream) else {
            continue;
        };
        std::thread::sleep(delay);
        if let Some(log) = &log {
            let line = json!({"path": req.path, "accept": req.header("accept"),
                              "authorization": req.header("authorization").is_some()});
            if let Ok(mut f) = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(log)
            {
                let _ = writeln!(f, "{line}");
            }
        }
        let plain = req.path.split('?').next().unwrap_or("/");
        if plain == "/v0.1/servers"
            && let Some(v) = registry(&dir, &req.path, page_size)
        {
            respond(&stream, "200 OK", &[], "application/json", &v.to_string());
            continue;
        }
        let rel = decode(plain.trim_start_matches('/'));
        if rel.split('/').any(|p| p == "..") {
            respond(&stream, "400 Bad Request", &[], "text/plain", "no ..");
            continue;
        }
        let file = dir.join(&rel);
        let status = std::fs::read_to_string(dir.join(format!("{rel}.status")))
            .map(|s| s.trim().to_string())
            .unwrap_or_else(|_| "200 OK".into());
        match std::fs::read(&file) {
            Ok(body) if file.is_file() => {
                let ctype = match file.extension().and_then(|e| e.to_str()) {
                    Some("json") => "application/json",
                    Some("html") => "text/html",
                    _ => "text/plain",
                };
                respond_bytes(&stream, &status, &[], ctype, &body);
            }
            _ => respond(&stream, "404 Not Found", &[], "text/plain", "not found"),
        }
    }
}
