//! `tools/call` round trips on one persistent connection, side by side in one run:
//! the raw floor (a bare line over a pipe to the same server), tai's `McpClient` and
//! the Python SDK's client, over stdio; over Streamable HTTP, the C floor client
//! (`benches/floor/load_client.c`) and tai's `McpClient` against the same C floor
//! server (`benches/floor/floor_server.c`, one keep-alive connection, rounds
//! interleaved), so the only difference is the client; tai vs the Python client against `tai-stub-mcp-http`; and
//! the peak resident memory of `tai mcp probe` (ru_maxrss, `benches/floor/peak_rss.c`).
//!
//! Run: `tests/peers/install.sh && taskset -c 0 cargo bench --features stubs --bench mcp_roundtrip`
//! Each row is the median per-call time over ROUNDS rounds of CALLS calls, with the
//! spread (min..max) of the round medians. The server is `tai-stub-mcp-stdio` /
//! `tai-stub-mcp-http` (release build), whose own work per call is tiny.

// Shared with serve_throughput, which reads the figures this bench does not.
#[allow(dead_code)]
#[path = "floor/mod.rs"]
mod floor;

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::time::Instant;

use serde_json::{Map, Value, json};
use tai::testing::mcp::client::{McpClient, ServerSpec, Timeouts};
use tai::testing::mcp::era::{Era, EraChoice};
use tai::testing::mcp::http::HttpSpec;
use tai::testing::mcp::stdio::StdioSpec;

const CALLS: usize = 2000;
const ROUNDS: usize = 7;

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

/// Per-round medians in microseconds.
fn rounds(mut one_call: impl FnMut()) -> Vec<f64> {
    for _ in 0..200 {
        one_call(); // warm-up
    }
    (0..ROUNDS)
        .map(|_| {
            let mut took: Vec<f64> = (0..CALLS)
                .map(|_| {
                    let t0 = Instant::now();
                    one_call();
                    t0.elapsed().as_secs_f64() * 1e6
                })
                .collect();
            median(&mut took)
        })
        .collect()
}

fn stub_stdio() -> StdioSpec {
    StdioSpec {
        command: env!("CARGO_BIN_EXE_tai-stub-mcp-stdio").into(),
        args: vec!["--era".into(), "dual".into()],
        env: Vec::new(),
        cwd: None,
        ..StdioSpec::default()
    }
}

/// The floor: the same request line written to the same server, its answer line read
/// back, with no JSON-RPC bookkeeping at all. `modern` sends the 2026 form (with `_meta`),
/// which the server answers with a larger result.
fn floor(modern: bool) -> Vec<f64> {
    let spec = stub_stdio();
    let mut child = Command::new(&spec.command)
        .args(&spec.args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("start the stub");
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let init = json!({"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"floor","version":"0"}}});
    let mut line = String::new();
    writeln!(stdin, "{init}").unwrap();
    stdout.read_line(&mut line).unwrap();
    let mut call = json!({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"ping"}}});
    if modern {
        call["params"]["_meta"] = json!({
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {},
            "io.modelcontextprotocol/clientInfo": {"name": "floor", "version": "0"},
        });
    }
    let call = call.to_string();
    let r = rounds(|| {
        writeln!(stdin, "{call}").unwrap();
        line.clear();
        stdout.read_line(&mut line).unwrap();
    });
    drop(stdin);
    let _ = child.wait();
    r
}

fn tai(spec: ServerSpec, era: Era) -> Vec<f64> {
    let mut client =
        McpClient::connect(&spec, EraChoice::Pinned(era), Timeouts::default()).expect("connect");
    let mut args = Map::new();
    args.insert("text".into(), Value::from("ping"));
    let r = rounds(|| {
        let res = client.call_tool("echo", args.clone()).expect("call");
        assert!(!res.is_error);
    });
    client.close();
    r
}

fn python(kind: &str, target: &str, mode: &str) -> Option<Vec<f64>> {
    let root = env!("CARGO_MANIFEST_DIR");
    let py = format!("{root}/.peers/venv/bin/python");
    if !std::path::Path::new(&py).exists() {
        eprintln!("(the Python SDK is not installed: run tests/peers/install.sh)");
        return None;
    }
    let calls = (CALLS / 4).to_string(); // the Python client is slow; fewer calls per round
    let out = Command::new(py)
        .args([
            &format!("{root}/tests/bench/py_client.py"),
            kind,
            target,
            &calls,
            &ROUNDS.to_string(),
            mode,
        ])
        .output()
        .ok()?;
    let v: Vec<f64> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.trim().parse().ok())
        .collect();
    (!v.is_empty()).then_some(v)
}

struct HttpStub(std::process::Child, String);

impl HttpStub {
    fn start() -> HttpStub {
        let mut child = Command::new(env!("CARGO_BIN_EXE_tai-stub-mcp-http"))
            .args(["--era", "dual"])
            .stdout(Stdio::piped())
            .spawn()
            .expect("start the HTTP stub");
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let url = line.trim().trim_start_matches("listening on ").to_string();
        HttpStub(child, url)
    }
}

impl Drop for HttpStub {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn row(name: &str, r: &[f64], floor: f64) {
    let mut s = r.to_vec();
    let m = median(&mut s);
    let (lo, hi) = (s[0], s[s.len() - 1]);
    println!(
        "{name:<40} {m:>9.1} {lo:>9.1}..{hi:<9.1} {:>6.2}x",
        m / floor
    );
}

/// Over HTTP against the C floor server, interleaved round by round so drift hits both
/// alike: a round of the C client (its own connection, 200 warm-up calls), then a round of
/// tai's `McpClient` on its persistent connection. Per-round median round trips (µs).
fn http_vs_floor(server: &floor::FloorServer, era: Era) -> (Vec<f64>, Vec<f64>) {
    let load_client = floor::build("load_client");
    let spec = ServerSpec::Http(HttpSpec {
        url: format!("http://127.0.0.1:{}/mcp", server.port),
        headers: Vec::new(),
    });
    let mut client =
        McpClient::connect(&spec, EraChoice::Pinned(era), Timeouts::default()).expect("connect");
    let mut args = Map::new();
    args.insert("text".into(), Value::from("ping"));
    let mut call = || {
        let res = client.call_tool("echo", args.clone()).expect("call");
        assert!(!res.is_error);
    };
    for _ in 0..200 {
        call(); // warm-up
    }
    let era_name = if era == Era::Modern {
        "modern"
    } else {
        "legacy"
    };
    let (mut c, mut t) = (Vec::new(), Vec::new());
    for _ in 0..ROUNDS {
        let round = floor::load(
            &load_client,
            server.port,
            era_name,
            "k",
            "echo",
            r#"{"text":"ping"}"#,
            CALLS,
            1,
            0,
        );
        c.extend(round.iter().map(|r| r.rtt_us));
        let mut took: Vec<f64> = (0..CALLS)
            .map(|_| {
                let t0 = Instant::now();
                call();
                t0.elapsed().as_secs_f64() * 1e6
            })
            .collect();
        t.push(median(&mut took));
    }
    client.close();
    (c, t)
}

/// Peak resident memory (KiB) of `tai mcp probe SOURCE`, three runs: the median.
fn probe_peak_kib(source: &str) -> f64 {
    let peak_rss = floor::build("peak_rss");
    let home = std::env::temp_dir().join(format!("tai-bench-probe-{}", std::process::id()));
    let mut runs: Vec<f64> = (0..3)
        .map(|_| {
            let out = Command::new(&peak_rss)
                .args([env!("CARGO_BIN_EXE_tai"), "mcp", "probe", source])
                .env("TAI_HOME", home.join("tai"))
                .env("TAI_CONFIG", home.join("config.toml"))
                .stderr(Stdio::null())
                .output()
                .expect("run peak_rss");
            assert!(out.status.success(), "tai mcp probe {source} failed");
            String::from_utf8_lossy(&out.stdout).trim().parse().unwrap()
        })
        .collect();
    let _ = std::fs::remove_dir_all(&home);
    median(&mut runs)
}

fn main() {
    let stub_cmd = format!("{} --era dual", env!("CARGO_BIN_EXE_tai-stub-mcp-stdio"));
    println!("tools/call `echo` round trips, one persistent connection; µs per call");
    println!(
        "{:<40} {:>9} {:>20} {:>7}",
        "client", "median", "spread (rounds)", "/floor"
    );
    println!("(/floor: against the bare pipe in the same era; HTTP rows against the 2025 pipe)");
    let f = floor(false);
    let fm = median(&mut f.clone());
    row("floor: bare line over a pipe, 2025-11-25", &f, fm);
    let f26 = floor(true);
    let fm26 = median(&mut f26.clone());
    row("floor: bare line over a pipe, 2026-07-28", &f26, fm26);
    row(
        "tai McpClient, stdio, 2025-11-25",
        &tai(ServerSpec::Stdio(stub_stdio()), Era::Legacy),
        fm,
    );
    row(
        "tai McpClient, stdio, 2026-07-28",
        &tai(ServerSpec::Stdio(stub_stdio()), Era::Modern),
        fm26,
    );
    if let Some(p) = python("stdio", &stub_cmd, "legacy") {
        row("Python mcp 2.3.0 client, stdio, 2025-11-25", &p, fm);
    }
    if let Some(p) = python("stdio", &stub_cmd, "2026-07-28") {
        row("Python mcp 2.3.0 client, stdio, 2026-07-28", &p, fm26);
    }
    let c_floor = floor::FloorServer::start();
    let floor_url = format!("http://127.0.0.1:{}/mcp", c_floor.port);
    println!(
        "(HTTP against the C floor server, rounds interleaved: /floor is against the C client in the same era)"
    );
    for (era, label) in [(Era::Legacy, "2025-11-25"), (Era::Modern, "2026-07-28")] {
        let (c, t) = http_vs_floor(&c_floor, era);
        let cm = median(&mut c.clone());
        row(&format!("C client -> C floor, HTTP, {label}"), &c, cm);
        row(&format!("tai McpClient -> C floor, HTTP, {label}"), &t, cm);
    }
    let stub = HttpStub::start();
    let http = || {
        ServerSpec::Http(HttpSpec {
            url: stub.1.clone(),
            headers: Vec::new(),
        })
    };
    row(
        "tai McpClient, HTTP, 2025-11-25",
        &tai(http(), Era::Legacy),
        fm,
    );
    row(
        "tai McpClient, HTTP, 2026-07-28",
        &tai(http(), Era::Modern),
        fm,
    );
    if let Some(p) = python("http", &stub.1, "legacy") {
        row("Python mcp 2.3.0 client, HTTP, 2025-11-25", &p, fm);
    }
    if let Some(p) = python("http", &stub.1, "2026-07-28") {
        row("Python mcp 2.3.0 client, HTTP, 2026-07-28", &p, fm);
    }
    println!("\npeak resident memory of `tai mcp probe` (ru_maxrss, median of 3 runs)");
    for (what, source) in [
        ("the C floor over HTTP (2026-07-28)", floor_url.clone()),
        ("tai-stub-mcp-http --era dual", stub.1.clone()),
        (
            "tai-stub-mcp-stdio --era dual (with the child)",
            stub_cmd.clone(),
        ),
    ] {
        println!("{what:<48} {:>6.1} MB", probe_peak_kib(&source) / 1024.0);
    }
}
