#!/usr/bin/env python3
"""What a Python call costs over the same Rust call: our CKKS operations of Table 1 (or the BFV operations of
compare_bfv.py, `--scheme bfv`) timed from Rust and from Python, interleaved in one run.

Two benchmark processes speak the line protocol of README.md ("Protocol"):
  CKKS  Rust    target/release/rnsfhe bench ckks-op --preset <name>
        Python  .venv/bin/python bench/peers/rnsfhe_python_table1.py --preset <name>   (our Python API)
  BFV   Rust    target/release/rnsfhe bench bfv-op --depth L --t T                     (presets_bfv.json)
        Python  .venv/bin/python bench/peers/rnsfhe_python_bfv.py --depth L --t T
`--threads N` runs both sides on N threads (RAYON_NUM_THREADS=N; default 1); the result file names the count.
`--pairs K` repeats the comparison on K fresh process pairs and reports the median ratio over pairs (on two
threads a pair's two processes drift apart by up to 10 %, as any two processes on the shared host).
Rounds alternate the two (order rotating), a round's sample is the median of its calls, and the ratio
Python / Rust is the median of the per-round ratios, so slow phases of the shared machine cancel out. The goal
(README, "Measuring honestly"): a Python call costs what the Rust call costs, within a few percent; rows above
GOAL_RATIO are marked.

Stdlib only. Needs `cargo build --release -p rnsfhe-cli` and the extension in .venv (`make python-ext`);
`make bench-python` does both.
"""

import argparse
import json
import os
import statistics
import sys
import time

import compare_bfv
import compare_table1 as drv
import peerlib

GOAL_RATIO = 1.03
IMPLS = ("ours", "python")
LABEL = {"ours": "Rust", "python": "Python"}


def start(args, preset, params):
    env = dict(os.environ, OMP_NUM_THREADS="1", RAYON_NUM_THREADS=str(args.threads))
    cmds, skipped = {}, {}
    binary = os.path.join(drv.ROOT, "target", "release", "rnsfhe")
    py = os.path.join(drv.ROOT, ".venv", "bin", "python")
    if args.scheme == "bfv":
        # The parameters of compare_bfv.py: BfvParams::generate(t, depth) on both sides.
        rust = ["bfv-op", "--depth", str(params["depth"]), "--t", str(params["t"])]
        script = ["rnsfhe_python_bfv.py", "--depth", str(params["depth"]), "--t", str(params["t"])]
    else:
        rust = ["ckks-op", "--preset", preset]
        script = ["rnsfhe_python_table1.py", "--preset", preset]
    if args.ours_cmd:
        # The Rust side of another build: its command replaces `rnsfhe bench <op>`, the op's arguments stay.
        cmds["ours"] = args.ours_cmd.split() + rust[1:]
    elif os.path.exists(binary):
        cmds["ours"] = [binary, "bench"] + rust
    else:
        skipped["ours"] = "target/release/rnsfhe not found (cargo build --release -p rnsfhe-cli)"
    if os.path.exists(py):
        cmds["python"] = [py, os.path.join(drv.HERE, script[0])] + script[1:]
    else:
        skipped["python"] = ".venv/bin/python not found (make python-ext)"
    peers, failed = drv.start_processes(cmds, env, args)
    skipped.update({n: f"failed to start: {why}" for n, why in failed.items()})
    return peers, skipped


def run_preset(args, preset, params):
    table = compare_bfv.OPS if args.scheme == "bfv" else drv.TABLE_OPS
    ops = [o for o in table if not args.ops or o[0] in args.ops]
    head = {"preset": preset, "scheme": args.scheme, "threads": args.threads, "params_requested": params}
    results = []
    for pair in range(args.pairs):
        print(f"== {preset}: starting processes (pair {pair + 1} of {args.pairs}) ...", file=sys.stderr)
        t_start = time.time()
        load_before = os.getloadavg()
        peers, skipped = start(args, preset, params)
        if len(peers) != 2:
            raise SystemExit(f"both sides are needed: {skipped}")
        results.append(compare(args, peers, ops, head, t_start, load_before))
    return combine_pairs(results)


def combine_pairs(results):
    """One result from the runs of several process pairs (`--pairs`): per row, the median over pairs of the
    ratio and of both times, and each pair's ratio (`pair_ratios`). On two threads the processes of one pair
    drift apart by up to 10 % (as any two processes on the shared host), so a single pair's ratio moves by
    that much; the median over fresh pairs does not. One pair is returned as it is."""
    if len(results) == 1:
        return results[0]
    res = dict(results[0], pairs=len(results), load_average_after=results[-1]["load_average_after"])
    rows = []
    for i, row in enumerate(results[0]["rows"]):
        per_pair = [r["rows"][i] for r in results]
        ratios = [x["ratio_python_rust"] for x in per_pair if x["ratio_python_rust"] is not None]

        def median_ms(side):
            times = [x[side]["median_ms"] for x in per_pair if x[side].get("median_ms") is not None]
            return {**row[side], "median_ms": statistics.median(times) if times else None}

        rows.append({**row, "rust": median_ms("rust"), "python": median_ms("python"),
                     "ratio_python_rust": statistics.median(ratios) if ratios else None,
                     "pair_ratios": ratios})
    res["rows"] = rows
    return res


def compare(args, peers, ops, head, t_start, load_before):
    """Times `ops` on the Rust and Python processes `peers` (named "ours" and "python") in interleaved rounds
    and returns the result that `markdown` prints: `head` (its "preset" names the table), the run header, the
    load average before (`load_before`) and after, and a row per op with both times and the ratio. Shared with
    compare_pegasus_python.py."""
    samples, raw, errors, infos = drv.interleave(peers, list(IMPLS), ops, args.rounds, LABEL)
    rows = []
    for op, label, reps in ops:
        s_rust, s_py = samples[op]["ours"], samples[op]["python"]
        ratio = statistics.median(p / r for p, r in zip(s_py, s_rust)) if s_rust and s_py else None
        rows.append({"op": op, "label": label, "reps_per_round": reps,
                     "rust": drv.times_ms(s_rust, raw[op]["ours"]),
                     "python": drv.times_ms(s_py, raw[op]["python"]),
                     "ratio_python_rust": ratio, "errors": errors.get(op, {})})
    return {**head, **drv.run_header(args, t_start, infos),
            "load_average_before": load_before, "load_average_after": os.getloadavg(),
            "goal_ratio": GOAL_RATIO, "rows": rows}


def markdown(res):
    threads = res.get("threads", 1)
    lines = [f"### {res['preset']}: Python API against Rust, same operations, {threads} thread"
             f"{'s' if threads != 1 else ''}", ""]
    lines += drv.machine_lines(res)
    lines.append("- load average (1, 5, 15 min) before: " + ", ".join(f"{x:.2f}" for x in res["load_average_before"])
                 + "; after: " + ", ".join(f"{x:.2f}" for x in res["load_average_after"]))
    for n in IMPLS:
        info = res["implementations"].get(n) or {}
        lines.append(f"- {LABEL[n]}: {info.get('version')}")
    pairs = res.get("pairs", 1)
    lines.append(f"- {res['rounds']} interleaved rounds per operation; ratio = median of per-round ratios"
                 + (f", then the median over {pairs} fresh process pairs" if pairs > 1 else "")
                 + f"; goal: at most {GOAL_RATIO:.2f}")
    spread = " | pairs" if pairs > 1 else ""
    lines += ["", f"| operation | Rust (ms) | Python (ms) | Python / Rust | goal{spread} |",
              "|---|---|---|---|---|" + ("---|" if pairs > 1 else "")]
    for row in res["rows"]:
        r = row["ratio_python_rust"]
        ok = "n/a" if r is None else ("ok" if r <= GOAL_RATIO else "ABOVE")
        cells = (f"| {row['label']} | {drv.fmt_ms(row['rust']['median_ms'])} "
                 f"| {drv.fmt_ms(row['python']['median_ms'])} | {drv.fmt_ratio(r)} | {ok} |")
        if pairs > 1:
            ratios = row.get("pair_ratios") or []
            cells += (f" {min(ratios):.2f}-{max(ratios):.2f} |" if ratios else " n/a |")
        lines.append(cells)
    lines += drv.error_lines(res, LABEL)
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--preset", action="append",
                    help="a preset of presets.json, with --scheme bfv of presets_bfv.json (repeatable; default all)")
    ap.add_argument("--scheme", choices=("ckks", "bfv"), default="ckks", help="the operations to compare (default ckks)")
    ap.add_argument("--threads", type=int, default=1, help="RAYON_NUM_THREADS of both sides (default 1)")
    ap.add_argument("--pairs", type=int, default=1,
                    help="fresh Rust / Python process pairs per preset; the ratio is the median over pairs "
                         "(default 1; 3-5 on two threads, where one pair's processes drift apart)")
    drv.add_run_args(ap, "PaperTable1L5", "comma-separated op names (default: all of the scheme)",
                     "unused (both sides are ours)", "bench ckks-op (bfv-op with --scheme bfv)", 600)
    bfv = "--scheme" in sys.argv and sys.argv[sys.argv.index("--scheme") + 1:][:1] == ["bfv"]
    presets = peerlib.load_presets("presets_bfv.json" if bfv else "presets.json")
    defaults = compare_bfv.DEFAULT_PRESETS if bfv else presets
    args, names = drv.parse_run_args(ap, defaults, "BfvT65537L5" if bfv else "PaperTable1L5")
    if args.threads < 1:
        ap.error("--threads must be at least 1")
    if args.pairs < 1:
        ap.error("--pairs must be at least 1")
    prefix = "python-overhead-" + ("bfv-" if bfv else "") + (f"{args.threads}t-" if args.threads != 1 else "")
    drv.run_presets(ap, args, names, presets, run_preset, markdown, prefix)


if __name__ == "__main__":
    main()
