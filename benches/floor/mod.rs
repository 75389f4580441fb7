//! The C floor shared by the HTTP benchmarks: builds `floor_server.c` and `load_client.c`
//! with `cc -O2` into the benchmark's temporary directory, starts the floor server, and
//! runs the load client against any endpoint, returning its per-round figures.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

/// Compile one C file of this directory; the path of the program.
pub fn build(name: &str) -> PathBuf {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("benches/floor/{name}.c"));
    let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    let status = Command::new("cc")
        .args(["-O2", "-Wall", "-o"])
        .arg(&out)
        .arg(&src)
        .status()
        .expect("run cc (a C compiler is needed for the floor)");
    assert!(status.success(), "cc failed on {}", src.display());
    out
}

/// The floor server, killed on drop.
pub struct FloorServer {
    pub child: Child,
    pub port: u16,
}

impl FloorServer {
    pub fn start() -> FloorServer {
        let mut child = Command::new(build("floor_server"))
            .stdout(Stdio::piped())
            .spawn()
            .expect("start the floor server");
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let port = line
            .trim()
            .trim_start_matches("listening on ")
            .parse()
            .expect("the floor server's port");
        FloorServer { child, port }
    }
}

impl Drop for FloorServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// One round of the load client: requests/s, median round trip (µs), server CPU per
/// request (µs, from the server's schedstat; 0 without a pid).
#[derive(Clone, Copy, Debug)]
pub struct Round {
    pub rps: f64,
    pub rtt_us: f64,
    pub cpu_us: f64,
}

/// Run the C load client: `rounds` rounds of `calls` sequential `tools/call` on one
/// keep-alive connection, in `era` ("legacy" or "modern").
#[allow(clippy::too_many_arguments)]
pub fn load(
    client: &Path,
    port: u16,
    era: &str,
    key: &str,
    tool: &str,
    args: &str,
    calls: usize,
    rounds: usize,
    server_pid: u32,
) -> Vec<Round> {
    let out = Command::new(client)
        .args([
            &port.to_string(),
            era,
            key,
            tool,
            args,
            &calls.to_string(),
            &rounds.to_string(),
            &server_pid.to_string(),
        ])
        .stderr(Stdio::inherit())
        .output()
        .expect("run the load client");
    assert!(out.status.success(), "the load client failed");
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| {
            let v: Vec<f64> = l.split_whitespace().map(|x| x.parse().unwrap()).collect();
            Round {
                rps: v[0],
                rtt_us: v[1],
                cpu_us: v[2],
            }
        })
        .collect()
}

/// The median and the spread (min, max) of a figure.
pub fn stats(v: impl Iterator<Item = f64>) -> (f64, f64, f64) {
    let mut s: Vec<f64> = v.collect();
    s.sort_by(|a, b| a.total_cmp(b));
    (s[s.len() / 2], s[0], s[s.len() - 1])
}

/// A process's resident memory figure (`VmRSS`, `VmHWM`, ...) in KiB.
pub fn status_kib(pid: u32, field: &str) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with(field))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|n| n.parse().ok())
        })
        .unwrap_or(0)
}
