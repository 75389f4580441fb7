//! `select_tools` over 3,300 schemas (32 servers × 100 tools + the native tools): the
//! time to pick one step's tools for a message. Target: under 1 ms.
//!
//! Run: `taskset -c 0 cargo bench --bench select_tools`

use std::collections::HashSet;
use std::time::Instant;

use tai::testing::tools::select::ToolIndex;

const WORDS: &[&str] = &[
    "issue",
    "repository",
    "file",
    "search",
    "create",
    "delete",
    "update",
    "list",
    "weather",
    "forecast",
    "calendar",
    "event",
    "email",
    "send",
    "message",
    "channel",
    "database",
    "query",
    "table",
    "row",
    "image",
    "render",
    "deploy",
    "build",
    "test",
    "log",
    "metric",
    "alert",
    "user",
    "team",
    "invoice",
    "payment",
    "ticket",
    "comment",
    "branch",
];

fn main() {
    let mut tools: Vec<(String, String)> = Vec::new();
    for s in 0..32 {
        for t in 0..100 {
            let w = |k: usize| WORDS[(s * 7 + t * 3 + k * 11) % WORDS.len()];
            tools.push((
                format!("mcp_server{s:02}_{}_{}_{t:03}", w(0), w(1)),
                format!(
                    "{} the {} of a {} in the {} with {} and {}",
                    w(2),
                    w(3),
                    w(4),
                    w(5),
                    w(6),
                    w(7)
                ),
            ));
        }
    }
    for t in tai::testing::tools::all() {
        let d = t.def();
        tools.push((d.name.to_string(), d.description.to_string()));
    }
    let t0 = Instant::now();
    let index = ToolIndex::new(tools.iter().map(|(n, d)| (n.as_str(), d.as_str())));
    let build = t0.elapsed();
    let messages = [
        "open an issue in the repository about the failing build and comment on the ticket",
        "what's the weather forecast for the calendar event tomorrow?",
        "query the database table for the user rows and send an email to the team",
        "hello there",
    ];
    let loaded = HashSet::new();
    let rounds = 7;
    let per_round = 2000;
    let mut medians = Vec::new();
    for _ in 0..rounds {
        let mut took = Vec::with_capacity(per_round);
        for i in 0..per_round {
            let t = Instant::now();
            let picked = index.select(messages[i % messages.len()], &loaded, 24);
            took.push(t.elapsed().as_secs_f64() * 1e6);
            assert!(!picked.is_empty());
        }
        took.sort_by(|a, b| a.total_cmp(b));
        medians.push(took[took.len() / 2]);
    }
    medians.sort_by(|a, b| a.total_cmp(b));
    println!(
        "select_tools over {} schemas ({} rounds x {} selections)",
        index.len(),
        rounds,
        per_round
    );
    println!(
        "  index build (once per tool-list change): {:.2} ms",
        build.as_secs_f64() * 1e3
    );
    println!(
        "  one selection: median {:.1} µs, spread {:.1}..{:.1} µs (target: under 1000 µs)",
        medians[rounds / 2],
        medians[0],
        medians[rounds - 1]
    );
}
