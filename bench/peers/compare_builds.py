"""Two builds of rnsfhe, interleaved in one run: the no-regression check of a refactoring.

    python3 bench/peers/compare_builds.py --old OLD/target/release/rnsfhe --new target/release/rnsfhe
    python3 bench/peers/compare_builds.py --old ... --new ... --ckks-ops add,cmult --preset PaperTable1L15


Starts each binary's line-protocol servers (`rnsfhe bench ckks-op` at PaperTable1L10 and `rnsfhe bench
bfv-op` at t = 65537, depths 10 and 20; the protocol of README.md), single thread, and times the same
operations in both, alternating which build goes first in each round (`--ckks-ops`: instead, those
`rnsfhe bench ckks-op` operations at each `--preset`, 10 calls per round sample as in compare_table1.py;
`--threads N`: RAYON_NUM_THREADS=N on both sides). Per operation: the median over rounds
of each build's per-round median, and the median of the per-round ratios new / old (the figure to compare
with a tolerance: drift of the machine affects both sides of a round alike). Prints a markdown table with
the load average before and after; the machine should be otherwise idle.
"""

import argparse
import os
import statistics
import sys
import time

from compare_table1 import Peer, cpu_model

#: (label, arguments of `rnsfhe`, operations, repetitions per round).
CASES = [
    ("CKKS PaperTable1L10", ["bench", "ckks-op", "--preset", "PaperTable1L10"],
     [("mult_rs", "Mult&RS"), ("rotate", "Rotate"), ("encode_encrypt", "Enc")], 5),
    ("BFV t = 65537, depth 10", ["bench", "bfv-op", "--depth", "10"], [("mult_relin", "Mul + Relin")], 5),
    ("BFV t = 65537, depth 20", ["bench", "bfv-op", "--depth", "20"], [("mult_relin", "Mul + Relin")], 3),
]


def start(name, argv, env, timeout):
    peer = Peer(name, argv, env)
    if not peer.wait_ready(timeout):
        tail = " | ".join(peer.stderr_tail[-5:])
        peer.close()
        sys.exit(f"{name}: {' '.join(argv)} did not start: {tail}")
    return peer


def sample(peer, op, reps):
    msg = peer.ask(op, reps)
    if "error" in msg:
        sys.exit(f"{peer.name}: {op}: {msg['error']}")
    return statistics.median(msg["seconds"])


def run_case(args, env, label, argv, ops, reps):
    builds = {name: start(name, [path] + argv, env, args.setup_timeout)
              for name, path in (("old", args.old), ("new", args.new))}
    rows = []
    try:
        for op, op_label in ops:
            for peer in builds.values():  # warm-up
                sample(peer, op, reps)
            times = {"old": [], "new": []}
            ratios = []
            for r in range(args.rounds):
                order = ("old", "new") if r % 2 == 0 else ("new", "old")
                got = {name: sample(builds[name], op, reps) for name in order}
                for name in order:
                    times[name].append(got[name])
                ratios.append(got["new"] / got["old"])
            rows.append((label, op_label, statistics.median(times["old"]) * 1e3,
                         statistics.median(times["new"]) * 1e3, statistics.median(ratios),
                         min(ratios), max(ratios)))
            print(f"  {label} {op_label}: ratio {rows[-1][4]:.3f}", file=sys.stderr)
    finally:
        for peer in builds.values():
            peer.close()
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--old", required=True, help="the reference build's rnsfhe binary")
    ap.add_argument("--new", required=True, help="the build under test's rnsfhe binary")
    ap.add_argument("--rounds", type=int, default=9, help="interleaved rounds per operation (default 9)")
    ap.add_argument("--setup-timeout", type=float, default=600)
    ap.add_argument("--ckks-ops", help="comma-separated `bench ckks-op` operations instead of the default cases")
    ap.add_argument("--preset", action="append", help="preset of --ckks-ops (repeatable; default PaperTable1L10)")
    ap.add_argument("--threads", type=int, default=1, help="RAYON_NUM_THREADS of both builds (default 1)")
    args = ap.parse_args()
    cases = CASES
    if args.ckks_ops:
        ops = [(op.strip(), op.strip()) for op in args.ckks_ops.split(",") if op.strip()]
        cases = [(f"CKKS {p}", ["bench", "ckks-op", "--preset", p], ops, 10)
                 for p in args.preset or ["PaperTable1L10"]]
    env = dict(os.environ, OMP_NUM_THREADS="1", RAYON_NUM_THREADS=str(args.threads))
    load_before = os.getloadavg()
    start_time = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    rows = []
    for label, argv, ops, reps in cases:
        rows += run_case(args, env, label, argv, ops, reps)
    load_after = os.getloadavg()
    print(f"- date: {start_time}; CPU: {cpu_model()}; RAYON_NUM_THREADS={args.threads}; {args.rounds} "
          f"interleaved rounds per operation, order alternating")
    print(f"- old: `{args.old}`; new: `{args.new}`")
    print(f"- load average before {load_before[0]:.2f} / {load_before[1]:.2f} / {load_before[2]:.2f}, after "
          f"{load_after[0]:.2f} / {load_after[1]:.2f} / {load_after[2]:.2f}")
    print()
    print("| parameters | operation | old (ms) | new (ms) | new / old (median of rounds) | min | max |")
    print("|---|---|---:|---:|---:|---:|---:|")
    for label, op, old, new, ratio, lo, hi in rows:
        print(f"| {label} | {op} | {old:.2f} | {new:.2f} | {ratio:.3f} | {lo:.3f} | {hi:.3f} |")


if __name__ == "__main__":
    main()
