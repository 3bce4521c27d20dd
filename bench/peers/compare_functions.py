#!/usr/bin/env python3
"""Driver of the function and statistics comparison (RNS-CKKS Tables 2 and 3): rnsfhe (ours) against OpenFHE.

Operations (one row each; names as in `rnsfhe bench ckks-fn-op` and openfhe_functions.py):
  mean, variance        of 2^13 numbers in [-1, 1] (the partial-sum algorithm, x 1/n, rescale)
  cheb:F:A:B:D          F = sigmoid, exp, inverse, interpolated at D + 1 Chebyshev nodes of [A, B] and evaluated
                        (ours: Evaluator::evaluate_function; OpenFHE: EvalChebyshevFunction), D = 7, 15, 27, 31, 59
All at N = 2^14 on 2^13 slots, 55-bit scaling primes, q0 of 60 bits, dnum = 3, single thread, uniform ternary
secret, the same input points on both sides. Each side gets the smallest depth its own evaluation needs (its
--plan answer: ours Polynomial::depth, OpenFHE's GetMultiplicativeDepthByCoeffVector), so Q can differ between
the two for one row (--same-depth gives both the larger); the table shows the levels of each.

Processes (the line protocol of README.md, "Protocol"), one per implementation and depth:
  ours     target/release/rnsfhe bench ckks-fn-op --params <json> --ops <names>
  OpenFHE  .venv-peers/openfhe/bin/python bench/peers/openfhe_functions.py --params <json> --ops <names>
For each row, R rounds; a round asks both implementations in turn (the order alternating) for one call. The table
gives the median over rounds, the median of the per-round ratios ours / OpenFHE, and each side's precision in
bits against the true function (-log2 of the largest error over the slots). The iso-precision table compares,
for each precision OpenFHE reaches, the fastest row of each implementation reaching it (within --tolerance bits).

Stdlib only: runs with any python3 >= 3.8. Run bench/peers/setup.sh first (make bench-peers-functions does both).
"""

import argparse
import datetime
import json
import os
import statistics
import subprocess
import sys
import time

# Same directory; stdlib only.
from compare_table1 import ROOT, HERE, Peer, cpu_model, fmt_ms, fmt_ratio

FUNCTIONS = [("sigmoid", -4.0, 4.0), ("exp", -4.0, 4.0), ("inverse", 0.5, 1.5)]
DEGREES = [7, 15, 27, 31, 59]
QUICK_DEGREES = [7, 15]
STATS = ["mean", "variance"]
STATS_DEPTH = 2  # RNS-CKKS Table 3: log Q_L = 171, two 55-bit primes above q0
IMPLS = ("ours", "openfhe")
LABEL = {"ours": "ours", "openfhe": "OpenFHE"}
BASE = {"log_n": 14, "q0_bits": 60, "scale_bits": 55, "special_bits": 60, "dnum": 3}


def num(x):
    return f"{x:g}"


def op_name(fn, a, b, degree, method="cheb"):
    return f"{method}:{fn}:{num(a)}:{num(b)}:{degree}"


def params_for(depth, args):
    """The parameter JSON for a multiplicative depth: q0 + depth scaling primes, and the special primes OpenFHE
    picks for HYBRID key switching (60-bit, floor(bits of the largest digit / 60) + 1 of them; the OpenFHE
    process reports what it chose and the driver warns on a difference)."""
    q_bits = [args.q0_bits] + [args.scale_bits] * depth
    per_digit = -(-len(q_bits) // args.dnum)
    largest = sum(q_bits[:per_digit])
    p_bits = [BASE["special_bits"]] * (largest // BASE["special_bits"] + 1)
    return {"log_n": args.log_n, "q_bits": q_bits, "p_bits": p_bits, "scale_bits": args.scale_bits,
            "dnum": args.dnum, "secret": args.secret}


def commands(args):
    """Base argv of each implementation (None if it cannot run, with the reason in the second dict)."""
    cmds, skipped = {}, {}
    if args.no_ours:
        skipped["ours"] = "not asked for (--no-ours)"
    else:
        binary = os.path.join(ROOT, "target", "release", "rnsfhe")
        if args.ours_cmd:
            cmds["ours"] = args.ours_cmd.split()
        elif os.path.exists(binary):
            cmds["ours"] = [binary, "bench", "ckks-fn-op"]
        else:
            skipped["ours"] = "target/release/rnsfhe not found (build it: cargo build --release -p rnsfhe-cli)"
    if args.no_openfhe:
        skipped["openfhe"] = "not asked for (--no-openfhe)"
    else:
        py = os.path.join(ROOT, ".venv-peers", "openfhe", "bin", "python")
        if os.path.exists(py):
            cmds["openfhe"] = [py, os.path.join(HERE, "openfhe_functions.py"), "--technique", args.technique]
        else:
            skipped["openfhe"] = f"{py} missing: run bench/peers/setup.sh"
    return cmds, skipped


def plan(name, argv, ops, env):
    """{op: depth or None} from `argv --plan --ops ...`."""
    out = subprocess.run(argv + ["--plan", "--ops", ",".join(ops)], capture_output=True, text=True, env=env,
                         cwd=ROOT, timeout=300)
    for line in out.stdout.splitlines():
        try:
            return json.loads(line)["depths"]
        except (ValueError, KeyError):
            continue
    raise RuntimeError(f"{name}: --plan failed (exit {out.returncode}): {out.stderr.strip()[-500:]}")


def load_average():
    try:
        with open("/proc/loadavg") as f:
            return " ".join(f.read().split()[:3])
    except OSError:
        return None


def start(args, cmds, depths, env):
    """Starts one process per (implementation, depth) with the ops of that depth. Returns
    ({(impl, depth): Peer}, {op: {impl: depth}}, {op: {impl: error}})."""
    groups = {}
    where, errors = {}, {}
    ops = list(next(iter(depths.values())).keys()) if depths else []
    for op in ops:
        need = {impl: depths[impl].get(op) for impl in depths}
        # Mean and variance run on Table 3's chain (two levels) on both sides, as in the paper; no depth is
        # below dnum - 1 (dnum digits need dnum primes).
        floor = max(STATS_DEPTH if op in STATS else 0, args.dnum - 1)
        need = {impl: None if d is None else max(d, floor) for impl, d in need.items()}
        if args.same_depth and all(d is not None for d in need.values()):
            need = {impl: max(need.values()) for impl in need}
        for impl, d in need.items():
            if d is None:
                errors.setdefault(op, {})[impl] = "not offered"
                continue
            groups.setdefault((impl, d), []).append(op)
            where.setdefault(op, {})[impl] = d
    peers = {}
    for (impl, d), group in sorted(groups.items()):
        p = params_for(d, args)
        argv = cmds[impl] + ["--params", json.dumps(p), "--ops", ",".join(group)]
        print(f"   starting {LABEL[impl]} at depth {d} ({len(group)} ops) ...", file=sys.stderr)
        peer = Peer(f"{impl}@{d}", argv, env, args.cpu)
        if peer.wait_ready(args.setup_timeout):
            peers[(impl, d)] = peer
            for op in group:
                chk = (peer.ready.get("check") or {}).get(op) or {}
                if "error" in chk:
                    errors.setdefault(op, {})[impl] = chk["error"]
        else:
            peer.close()
            why = " | ".join(line for line in peer.stderr_tail[-6:] if line.strip()) or "no output"
            for op in group:
                errors.setdefault(op, {})[impl] = f"process at depth {d} failed to start: {why}"
    return peers, where, errors


def run(args, ops):
    env = dict(os.environ, OMP_NUM_THREADS="1", RAYON_NUM_THREADS="1")
    cmds, skipped = commands(args)
    for impl, why in skipped.items():
        print(f"   {LABEL[impl]}: NOT RUN: {why}", file=sys.stderr)
    if not cmds:
        raise SystemExit("nothing to run")
    depths = {}
    for impl, argv in list(cmds.items()):
        try:
            depths[impl] = plan(impl, argv, ops, env)
        except (RuntimeError, OSError, subprocess.TimeoutExpired) as e:
            skipped[impl] = str(e)
            del cmds[impl]
            print(f"   {LABEL[impl]}: NOT RUN: {e}", file=sys.stderr)
    t_start = time.time()
    load_start = load_average()
    peers, where, errors = start(args, cmds, depths, env)
    order = [i for i in IMPLS if i in cmds]
    rows = []
    try:
        for op in ops:
            avail = [i for i in order if (i, where.get(op, {}).get(i)) in peers and i not in errors.get(op, {})]
            samples = {i: [] for i in order}
            for i in list(avail):  # warm-up, discarded
                msg = peers[(i, where[op][i])].ask(op, 1)
                if "error" in msg:
                    errors.setdefault(op, {})[i] = msg["error"]
                    avail.remove(i)
            print(f"   {op}: {args.rounds} rounds, {', '.join(LABEL[i] for i in avail)}", file=sys.stderr)
            for r in range(args.rounds):
                k = r % len(avail) if avail else 0
                for i in avail[k:] + avail[:k]:
                    msg = peers[(i, where[op][i])].ask(op, 1)
                    if "error" in msg:
                        raise RuntimeError(f"{i} {op}: {msg['error']}")
                    samples[i].append(statistics.median(msg["seconds"]))
            row = {"op": op, "rounds": args.rounds, "errors": errors.get(op, {})}
            for i in IMPLS:
                s = samples.get(i) or []
                peer = peers.get((i, where.get(op, {}).get(i)))
                chk = ((peer.ready.get("check") or {}).get(op) if peer else None) or {}
                row[i] = {"median_ms": statistics.median(s) * 1e3 if s else None,
                          "min_ms": min(s) * 1e3 if s else None,
                          "round_ms": [x * 1e3 for x in s],
                          "depth": where.get(op, {}).get(i),
                          "check": chk}
            a, b = samples.get("ours") or [], samples.get("openfhe") or []
            row["ratio"] = statistics.median(x / y for x, y in zip(a, b)) if a and b and len(a) == len(b) else None
            rows.append(row)
    finally:
        infos = {f"{LABEL[i]}@{d}": p.ready for (i, d), p in peers.items()}
        for p in peers.values():
            p.close()
    return {
        "date_utc": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "cpu": cpu_model(),
        "logical_cpus": os.cpu_count(),
        "threads": 1,
        "pinned_cpu": args.cpu,
        "rounds": args.rounds,
        "same_depth": args.same_depth,
        "openfhe_technique": args.technique,
        "tolerance_bits": args.tolerance,
        "load_average": [load_start, load_average()],
        "wall_seconds": round(time.time() - t_start, 1),
        "not_run": skipped,
        "processes": {k: {"version": v.get("version"), "params": v.get("params")} for k, v in infos.items()},
        "rows": rows,
    }


def parse(op):
    if op in STATS:
        return op, None, None, None, None
    kind, fn, a, b, d = op.split(":")
    return kind, fn, float(a), float(b), int(d)


def bits_of(row, impl):
    v = row[impl]["check"].get("bits_true")
    return v if isinstance(v, (int, float)) else None


def iso_precision(res):
    """For each function (and interval), each precision OpenFHE reaches: the fastest row of each side reaching
    it within the tolerance, and the ratio of their median times."""
    tol = res["tolerance_bits"]
    out = []
    groups = {}
    for row in res["rows"]:
        kind, fn, a, b, d = parse(row["op"])
        if kind in STATS:
            continue
        groups.setdefault((fn, a, b), []).append(row)
    for (fn, a, b), rows in groups.items():
        targets = sorted({round(bits_of(r, "openfhe"), 1) for r in rows
                          if bits_of(r, "openfhe") is not None and r["openfhe"]["median_ms"]})
        for p in targets:
            def best(impl):
                cands = [r for r in rows if bits_of(r, impl) is not None and r[impl]["median_ms"]
                         and bits_of(r, impl) >= p - tol]
                return min(cands, key=lambda r: r[impl]["median_ms"]) if cands else None
            o, f = best("ours"), best("openfhe")
            out.append({"function": fn, "interval": [a, b], "target_bits": p,
                        "ours_op": o["op"] if o else None, "ours_ms": o["ours"]["median_ms"] if o else None,
                        "ours_bits": bits_of(o, "ours") if o else None,
                        "openfhe_op": f["op"], "openfhe_ms": f["openfhe"]["median_ms"],
                        "openfhe_bits": bits_of(f, "openfhe"),
                        # One row for both: the median of its per-round ratios (interleaved); two rows: the ratio
                        # of their medians (measured at different times).
                        "ratio": (o["ratio"] if o is f and o["ratio"] is not None
                                  else o["ours"]["median_ms"] / f["openfhe"]["median_ms"] if o else None),
                        "ratio_from": "per-round" if o is f else "medians"})
    return out


def fmt_bits(v):
    return "n/a" if v is None else f"{v:.1f}"


def markdown(res):
    lines = ["## RNS-CKKS Tables 2 and 3: functions and statistics, ours against OpenFHE", "",
             f"- date: {res['date_utc']}",
             f"- CPU: {res['cpu']} ({res['logical_cpus']} logical CPUs)"
             + (f", all processes pinned to CPU {res['pinned_cpu']}" if res["pinned_cpu"] is not None else ""),
             "- threads: 1 in every implementation (OMP_NUM_THREADS=1, RAYON_NUM_THREADS=1)",
             f"- load average (1 / 5 / 15 min; other work on the machine): {res['load_average'][0]} at the start, "
             f"{res['load_average'][1]} at the end",
             "- parameters: N = 2^14, 2^13 slots, q0 60 bits + one 55-bit prime per level, scale 2^55, hybrid key "
             "switching with dnum = 3, uniform ternary secret; each side at the smallest depth its evaluation needs"
             + (" (--same-depth: both at the larger of the two)" if res["same_depth"] else "")
             + f"; OpenFHE scaling technique {res['openfhe_technique']}"]
    versions = sorted({(k.split("@")[0], v["version"]) for k, v in res["processes"].items()})
    for name, version in versions:
        lines.append(f"- {name}: {version}")
    secs = sorted({(k, (v["params"] or {}).get("security")) for k, v in res["processes"].items()})
    insecure = [k for k, s in secs if s and "DISABLED" in str(s)]
    if insecure:
        lines.append(f"- security: OpenFHE refused 128-bit security at N = 2^14 for {', '.join(insecure)} "
                     "(log QP too large) and runs with HEStd_NotSet; ours runs the same primes (not 128-bit "
                     "secure either)")
    for impl, why in res["not_run"].items():
        lines.append(f"- {LABEL[impl]}: NOT RUN: {why}")
    warn = []
    for k, v in res["processes"].items():
        if k.startswith("OpenFHE@"):
            d = int(k.split("@")[1])
            got = (v["params"] or {}).get("num_p_primes")
            ours = [v2 for k2, v2 in res["processes"].items() if k2 == f"ours@{d}"]
            want = len(ours[0]["params"]["p_bits"]) if ours and ours[0]["params"] else None
            if want is not None and got is not None and got != want:
                warn.append(f"depth {d}: OpenFHE chose {got} special primes, ours has {want}")
    for w in warn:
        lines.append(f"- WARNING: parameters differ: {w}")
    lines.append(f"- {res['rounds']} interleaved rounds per row (one call per implementation per round, order "
                 "alternating); times: median over rounds; ratio: median of the per-round ratios; bits: -log2 of the "
                 "largest error over the slots against the true function (statistics: against the plaintext mean "
                 "or variance), and against the exact polynomial evaluated in plaintext")
    lines.append("")
    lines.append("| operation | inputs | degree | depth (levels used) ours / OpenFHE | ours (ms) | OpenFHE (ms) | ours / OpenFHE "
                 "| bits vs function ours / OpenFHE | bits vs polynomial ours / OpenFHE |")
    lines.append("|---|---|---|---|---|---|---|---|---|")
    for row in res["rows"]:
        kind, fn, a, b, d = parse(row["op"])
        what = kind if kind in STATS else f"{fn} ({'Chebyshev' if kind == 'cheb' else kind})"
        inputs = "[-1, 1]" if kind in STATS else f"[{num(a)}, {num(b)}]"
        lv = " / ".join(f"{row[i]['depth'] or 'n/a'} ({row[i]['check'].get('levels_used', 'n/a')})" for i in IMPLS)
        bt = " / ".join(fmt_bits(bits_of(row, i)) for i in IMPLS)
        bp = " / ".join(fmt_bits(row[i]["check"].get("bits_poly")) for i in IMPLS)
        lines.append(f"| {what} | {inputs} | {d if d else '-'} | {lv} | {fmt_ms(row['ours']['median_ms'])} "
                     f"| {fmt_ms(row['openfhe']['median_ms'])} | {fmt_ratio(row['ratio'])} | {bt} "
                     f"| {bp if kind not in STATS else '-'} |")
    iso = res.get("iso_precision") or []
    if iso:
        lines += ["", f"### At equal precision against the true function (within {res['tolerance_bits']} bits)", "",
                  "For each precision OpenFHE reaches: the fastest row of each implementation with at least that "
                  "precision (minus the tolerance); ratio = ours / OpenFHE: the median of the per-round ratios when "
                  "both are the same row (interleaved), else the ratio of the two rows' medians (measured one after "
                  "the other, so machine drift between them enters).", "",
                  "| function | inputs | target (bits) | ours: degree, bits, ms | OpenFHE: degree, bits, ms "
                  "| ours / OpenFHE | ratio from |",
                  "|---|---|---|---|---|---|---|"]
        for e in iso:
            o = (f"{e['ours_op'].split(':')[-1]}, {fmt_bits(e['ours_bits'])}, {fmt_ms(e['ours_ms'])}"
                 if e["ours_op"] else "not reached")
            f = f"{e['openfhe_op'].split(':')[-1]}, {fmt_bits(e['openfhe_bits'])}, {fmt_ms(e['openfhe_ms'])}"
            lines.append(f"| {e['function']} | [{num(e['interval'][0])}, {num(e['interval'][1])}] "
                         f"| {e['target_bits']:.1f} | {o} | {f} | {fmt_ratio(e['ratio'])} | {e['ratio_from']} |")
    errs = [(row["op"], i, e) for row in res["rows"] for i, e in row["errors"].items()]
    if errs:
        lines.append("")
        lines += [f"- {op}: {LABEL[i]}: {e}" for op, i, e in errs]
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=15, help="interleaved rounds per row (default 15)")
    ap.add_argument("--quick", action="store_true", help=f"3 rounds, degrees {QUICK_DEGREES} only")
    ap.add_argument("--degrees", help=f"comma-separated Chebyshev degrees (default {','.join(map(str, DEGREES))})")
    ap.add_argument("--functions", help="comma-separated F:A:B (default "
                                        + ",".join(f"{f}:{num(a)}:{num(b)}" for f, a, b in FUNCTIONS) + ")")
    ap.add_argument("--ops", help="run exactly these operation names instead (e.g. mean,cheb:exp:-1:1:15)")
    ap.add_argument("--no-stats", action="store_true", help="leave out mean and variance")
    ap.add_argument("--same-depth", action="store_true",
                    help="run both implementations at the larger of their two depths for each row")
    ap.add_argument("--technique", default="FIXEDMANUAL", help="OpenFHE scaling technique (default FIXEDMANUAL)")
    ap.add_argument("--secret", default="ternary", choices=["ternary", "sparse"],
                    help="secret distribution on both sides (default uniform ternary, OpenFHE's default)")
    ap.add_argument("--tolerance", type=float, default=0.5,
                    help="bits below a target precision still counted as reaching it (default 0.5)")
    ap.add_argument("--log-n", type=int, default=BASE["log_n"])
    ap.add_argument("--q0-bits", type=int, default=BASE["q0_bits"])
    ap.add_argument("--scale-bits", type=int, default=BASE["scale_bits"])
    ap.add_argument("--dnum", type=int, default=BASE["dnum"])
    ap.add_argument("--no-ours", action="store_true", help="run OpenFHE only")
    ap.add_argument("--no-openfhe", action="store_true", help="run ours only")
    ap.add_argument("--ours-cmd", help="command for our side instead of target/release/rnsfhe bench ckks-fn-op")
    ap.add_argument("--cpu", type=int, help="pin every benchmark process to this CPU (default: no pinning)")
    ap.add_argument("--setup-timeout", type=float, default=600, help="seconds a process may take to get ready")
    ap.add_argument("--out-dir", default=os.path.join(ROOT, "bench-results"))
    args = ap.parse_args()
    if args.quick and "--rounds" not in sys.argv:
        args.rounds = 3
    if args.ops:
        ops = [s.strip() for s in args.ops.split(",") if s.strip()]
    else:
        degrees = ([int(d) for d in args.degrees.split(",")] if args.degrees
                   else QUICK_DEGREES if args.quick else DEGREES)
        functions = FUNCTIONS
        if args.functions:
            functions = []
            for spec in args.functions.split(","):
                fn, a, b = spec.split(":")
                functions.append((fn, float(a), float(b)))
        ops = ([] if args.no_stats else list(STATS)) + [op_name(fn, a, b, d) for fn, a, b in functions
                                                        for d in degrees]
    print(f"== functions: {len(ops)} rows ...", file=sys.stderr)
    res = run(args, ops)
    res["iso_precision"] = iso_precision(res)
    md = markdown(res)
    print(md)
    res["markdown"] = md
    os.makedirs(args.out_dir, exist_ok=True)
    out = os.path.join(args.out_dir, "peers-functions.json")
    with open(out, "w") as f:
        json.dump(res, f, indent=1)
    print(f"(written {os.path.relpath(out, os.getcwd())})", file=sys.stderr)


if __name__ == "__main__":
    main()
