#!/usr/bin/env python3
"""Thread scaling of our operations measured in one process: one-thread and multi-thread calls of the same
operation on the same inputs, interleaved.

Speed-ups taken from separate one-thread and two-thread processes mix the scaling with the drift of a shared
host between the processes (on the development machine two processes of the same binary differ by up to 10 %
on two threads). Here one benchmark process serves both: each command names its pool size (`"threads"`,
README "Protocol"), rounds alternate one thread and `--threads` threads (order rotating), a round's sample is
the median of its calls, and the speed-up is the median of the per-round ratios (one thread / N threads).

  python3 bench/peers/thread_scaling.py --preset PaperTable1L10 --ops mult_rs,rotate,keygen
  python3 bench/peers/thread_scaling.py --scheme bfv --depth 20          # BFV at t = 65537

Prints the load average before and after (measure on a quiet machine: README, "Measuring honestly") and writes
bench-results/thread-scaling-<preset>.json. Stdlib only; needs `cargo build --release -p rnsfhe-cli`.
"""

import argparse
import json
import os
import statistics
import time

import compare_table1 as drv

GOAL_SPEEDUP = 1.8


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scheme", choices=("ckks", "bfv"), default="ckks")
    ap.add_argument("--preset", default="PaperTable1L10", help="CKKS preset (ckks-op --preset)")
    ap.add_argument("--depth", type=int, default=20, help="BFV depth (bfv-op --depth, t = 65537)")
    ap.add_argument("--key-switching", choices=("generated", "crt", "hybrid"), default="generated",
                    help="BFV key switching (bfv-op --key-switching; generated: BfvParams::generate's choice)")
    ap.add_argument("--ops", default="keygen,encode_encrypt,cmult,mult_rs,rotate",
                    help="comma-separated operation names of the protocol")
    ap.add_argument("--threads", type=int, default=2, help="the multi-thread pool size (default 2)")
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--reps", type=int, default=8, help="calls per round and thread count")
    ap.add_argument("--ours-cmd", help="our side's command instead of target/release/rnsfhe bench")
    ap.add_argument("--out", default=os.path.join(drv.ROOT, "bench-results"))
    args = ap.parse_args()

    if args.scheme == "bfv":
        sub = ["bfv-op", "--depth", str(args.depth), "--t", "65537", "--key-switching", args.key_switching]
        label = f"bfv-depth{args.depth}" + ("" if args.key_switching == "generated" else f"-{args.key_switching}")
    else:
        sub, label = ["ckks-op", "--preset", args.preset], args.preset
    base = args.ours_cmd.split() if args.ours_cmd else [os.path.join(drv.ROOT, "target", "release", "rnsfhe"), "bench"]
    argv = base + sub
    # The default pool has the multi-thread count: the set-up runs as in a multi-thread user program.
    env = dict(os.environ, OMP_NUM_THREADS="1", RAYON_NUM_THREADS=str(args.threads))
    load_before = os.getloadavg()
    print(f"load average before: {load_before[0]:.2f} {load_before[1]:.2f} {load_before[2]:.2f}", flush=True)
    peer = drv.Peer("ours", argv, env)
    if not peer.wait_ready(1800):
        peer.close()
        raise SystemExit(f"{' '.join(argv)} did not start: {' | '.join(peer.stderr_tail[-5:])}")
    ops = [o for o in args.ops.split(",") if o]
    counts = (1, args.threads)
    rows = {}
    try:
        for op in ops:
            for t in counts:  # warm-up: builds the pool, fills the allocator's caches
                msg = peer.ask(op, 2, threads=t)
                if "error" in msg:
                    raise SystemExit(f"{op} on {t} threads: {msg['error']}")
            medians = {t: [] for t in counts}
            for r in range(args.rounds):
                for t in (counts if r % 2 == 0 else counts[::-1]):
                    medians[t].append(statistics.median(peer.ask(op, args.reps, threads=t)["seconds"]))
            ratios = [a / b for a, b in zip(medians[1], medians[args.threads])]
            rows[op] = {
                "ms_1": 1e3 * statistics.median(medians[1]),
                f"ms_{args.threads}": 1e3 * statistics.median(medians[args.threads]),
                "speedup": statistics.median(ratios),
                "speedup_min": min(ratios),
                "speedup_max": max(ratios),
            }
            row = rows[op]
            mark = "" if row["speedup"] >= GOAL_SPEEDUP else f"  (below {GOAL_SPEEDUP}x)"
            print(f"{op:18s} 1 thread {row['ms_1']:9.3f} ms  {args.threads} threads "
                  f"{row[f'ms_{args.threads}']:9.3f} ms  speed-up {row['speedup']:.2f}x "
                  f"(rounds {row['speedup_min']:.2f}-{row['speedup_max']:.2f}){mark}", flush=True)
    finally:
        peer.close()
    load_after = os.getloadavg()
    print(f"load average after: {load_after[0]:.2f} {load_after[1]:.2f} {load_after[2]:.2f}")
    os.makedirs(args.out, exist_ok=True)
    path = os.path.join(args.out, f"thread-scaling-{label}.json")
    with open(path, "w") as f:
        json.dump({"argv": argv, "threads": args.threads, "rounds": args.rounds, "reps": args.reps,
                   "date_utc": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
                   "load_average_before": load_before, "load_average_after": load_after, "rows": rows},
                  f, indent=2)
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
