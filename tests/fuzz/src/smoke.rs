//! The fuzz targets' CI smoke on a stable toolchain (no libFuzzer): every file of each
//! target's seed corpus (`corpus/NAME/`), then a fixed-seed mutation pass over them
//! (byte flips, inserts, deletes, splices), so a run is the same on every machine.
//! Usage: `smoke [ROUNDS]` (default 20000 mutated inputs per target).

use std::path::Path;

type Target = fn(&[u8]);

const TARGETS: &[(&str, Target)] = &[
    ("sse", tai_fuzz::sse),
    ("ndjson", tai_fuzz::ndjson),
    ("jsonrpc", tai_fuzz::jsonrpc),
    ("config", tai_fuzz::config),
    ("redact", tai_fuzz::redact),
    ("server_request", tai_fuzz::server_request),
];

/// xorshift64*: a fixed sequence, so the smoke is reproducible.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            (self.next() % n as u64) as usize
        }
    }
}

fn mutate(rng: &mut Rng, seeds: &[Vec<u8>]) -> Vec<u8> {
    let mut v = seeds[rng.below(seeds.len())].clone();
    for _ in 0..1 + rng.below(4) {
        match rng.below(5) {
            0 if !v.is_empty() => {
                let i = rng.below(v.len());
                v[i] ^= 1 << rng.below(8);
            }
            1 => {
                let i = rng.below(v.len() + 1);
                let interesting = b"\0\r\n:{}[]\"\\$-,0 \xff\xe4";
                v.insert(i, interesting[rng.below(interesting.len())]);
            }
            2 if !v.is_empty() => {
                let i = rng.below(v.len());
                let n = 1 + rng.below(8.min(v.len() - i));
                v.drain(i..i + n);
            }
            3 => {
                let other = &seeds[rng.below(seeds.len())];
                let from = rng.below(other.len() + 1);
                let to = from + rng.below(other.len() - from + 1);
                let at = rng.below(v.len() + 1);
                v.splice(at..at, other[from..to].iter().copied());
            }
            _ => {
                let i = rng.below(v.len() + 1);
                v.insert(i, rng.next() as u8);
            }
        }
    }
    v
}

fn main() {
    let rounds: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(20_000);
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("corpus");
    for (name, target) in TARGETS {
        let mut seeds: Vec<Vec<u8>> = Vec::new();
        if let Ok(dir) = std::fs::read_dir(root.join(name)) {
            let mut paths: Vec<_> = dir.flatten().map(|e| e.path()).collect();
            paths.sort();
            for p in paths {
                if let Ok(b) = std::fs::read(&p) {
                    seeds.push(b);
                }
            }
        }
        if seeds.is_empty() {
            eprintln!(
                "fuzz smoke: no seed corpus for {name} in {}",
                root.display()
            );
            std::process::exit(1);
        }
        for s in &seeds {
            target(s);
        }
        let mut rng = Rng(0x7a1_f022 ^ name.len() as u64);
        for _ in 0..rounds {
            target(&mutate(&mut rng, &seeds));
        }
        println!(
            "fuzz smoke: {name}: {} seeds + {rounds} mutated inputs, no failure",
            seeds.len()
        );
    }
    let _ = std::fs::remove_dir_all(tai_fuzz::scratch_dir());
}
