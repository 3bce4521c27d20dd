#!/usr/bin/env python3
"""What a Python call of the PEGASUS pipeline costs over the same Rust call: ct.lut(table), ct.lut(np.tanh) and
ct.to_lwe() timed from Python and from Rust, interleaved in one run.

Two benchmark processes speak the line protocol of README.md ("Protocol"):
  Rust    target/release/examples/pegasus_peer --preset P --slots S   (crates/rnsfhe/examples/pegasus_peer.rs)
  Python  .venv/bin/python bench/peers/rnsfhe_pegasus_python.py --preset P --slots S   (rnsfhe.pegasus.Session)
Both make the pipeline of the same preset and slot count (keys from a fixed seed), encrypt the same values at the
pipeline's input level and build the table of tanh at setup. Rounds alternate the two (order rotating), a round's
sample is the median of its calls, and the ratio Python / Rust is the median of the per-round ratios, so slow
phases of the shared machine cancel out. The goal (README, "Measuring honestly"): a Python call costs what the
Rust call costs, within a few percent; rows above compare_python.GOAL_RATIO are marked (the result and its
table are compare_python.py's). Results go to
bench-results/python-overhead-pegasus-<preset>-<slots>.json.

Stdlib only. Needs `cargo build --release -p rnsfhe --example pegasus_peer` and the extension in .venv
(`make python-ext`).

  python3 bench/peers/compare_pegasus_python.py                       InsecureTest, 8 slots, 15 rounds
  python3 bench/peers/compare_pegasus_python.py --preset Secure128 --slots 8 --rounds 5
"""

import argparse
import json
import os
import sys
import time

import compare_python
import compare_table1 as drv

# op, label, calls per round sample
OPS = [
    ("lut", "ct.lut(table): the whole pipeline, table built once", 3),
    ("lut_fn", "ct.lut(np.tanh): the table built in the call (Rust: f64::tanh)", 3),
    ("to_lwe", "ct.to_lwe(): slots to coefficients, extraction, dimension switch", 5),
]


def start(args):
    env = dict(os.environ, OMP_NUM_THREADS="1", RAYON_NUM_THREADS="1")
    common = ["--preset", args.preset, "--slots", str(args.slots)]
    binary = os.path.join(drv.ROOT, "target", "release", "examples", "pegasus_peer")
    py = os.path.join(drv.ROOT, ".venv", "bin", "python")
    missing = [what for what, path in ((f"{binary} (cargo build --release -p rnsfhe --example pegasus_peer)", binary),
                                       (f"{py} (make python-ext)", py)) if not os.path.exists(path)]
    if missing:
        raise SystemExit(f"missing: {'; '.join(missing)}")
    cmds = {"ours": [binary, *common],
            "python": [py, os.path.join(drv.HERE, "rnsfhe_pegasus_python.py"), *common]}
    peers, failed = drv.start_processes(cmds, env, args)
    if failed:
        for p in peers.values():
            p.close()
        raise SystemExit(f"failed to start: {failed}")
    return peers


def run(args):
    print(f"== {args.preset}, {args.slots} slots: starting processes ...", file=sys.stderr)
    t_start = time.time()
    load_before = os.getloadavg()
    peers = start(args)
    head = {"preset": f"PEGASUS pipeline, {args.preset}, {args.slots} slots", "pipeline_preset": args.preset,
            "slots": args.slots}
    return compare_python.compare(args, peers, OPS, head, t_start, load_before)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--preset", default="InsecureTest", help="InsecureTest (default), Secure128 or Table4")
    ap.add_argument("--slots", type=int, default=8, help="values per ciphertext (default 8)")
    ap.add_argument("--rounds", type=int, default=15, help="interleaved rounds per operation (default 15)")
    ap.add_argument("--cpu", type=int, help="pin both processes to this CPU (default: no pinning)")
    ap.add_argument("--setup-timeout", type=float, default=1800, help="seconds a process may take to get ready")
    ap.add_argument("--out-dir", default=os.path.join(drv.ROOT, "bench-results"))
    args = ap.parse_args()
    res = run(args)
    os.makedirs(args.out_dir, exist_ok=True)
    path = os.path.join(args.out_dir, f"python-overhead-pegasus-{args.preset}-{args.slots}.json")
    with open(path, "w") as f:
        json.dump(res, f, indent=1)
    print(compare_python.markdown(res))
    print(f"\n(raw results: {path})", file=sys.stderr)


if __name__ == "__main__":
    main()
