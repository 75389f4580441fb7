#!/usr/bin/env python3
"""Startup benchmark: wall time of `tai --version` beside `/bin/true` (the process floor).

Run:  cargo build --release && python3 tests/bench/startup.py [path/to/tai]
Both commands are pinned to CPU 0 (taskset) when it is available; each round runs each
command RUNS times, alternating, and the round's median is kept. Prints the median of
the round medians with the spread (min..max) across rounds, in milliseconds.
"""
import os, shutil, statistics, subprocess, sys, time

ROUNDS, RUNS = 7, 200
tai = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "../../target/release/tai")
tai = os.path.abspath(tai)
if not os.path.exists(tai):
    sys.exit(f"no binary at {tai}: run `cargo build --release` first")
if shutil.which("taskset"):
    os.sched_setaffinity(0, {0})  # children inherit the pinning

cmds = {"tai --version": [tai, "--version"], "/bin/true": ["/bin/true"]}
medians = {name: [] for name in cmds}
for _ in range(ROUNDS):
    samples = {name: [] for name in cmds}
    for _ in range(RUNS):
        for name, argv in cmds.items():
            t0 = time.perf_counter()
            subprocess.run(argv, stdout=subprocess.DEVNULL, check=True)
            samples[name].append(time.perf_counter() - t0)
    for name in cmds:
        medians[name].append(statistics.median(samples[name]) * 1000)

print(f"{'command':<16} {'median ms':>10} {'spread ms':>16}   ({ROUNDS} rounds x {RUNS} runs, CPU 0)")
for name, m in medians.items():
    print(f"{name:<16} {statistics.median(m):>10.3f} {min(m):>7.3f}..{max(m):<7.3f}")
over = statistics.median(medians["tai --version"]) - statistics.median(medians["/bin/true"])
print(f"tai's own startup over the exec floor: {over:.3f} ms")
