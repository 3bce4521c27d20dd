#!/usr/bin/env python3
"""Driver of the BFV comparison: rnsfhe (ours) against OpenFHE BFVRNS (HPS and HPSPOVERQLEVELED), one run.

Starts one benchmark process per implementation, all speaking the line protocol of README.md ("Protocol"):
  ours              target/release/rnsfhe bench bfv-op --depth L --t T
  OpenFHE HPS       .venv-peers/openfhe/bin/python bench/peers/openfhe_bfv.py --params <json> --technique HPS
  OpenFHE HPSPOQL   ... --technique HPSPOVERQLEVELED
  (--native adds the same two with OpenFHE's own parameters for t and L: the setting of the reference times)
For each operation it runs R rounds; a round asks every implementation in turn (the order rotates from round to
round) for `reps` timed calls, whose median is that round's sample. The table gives the median over rounds of
each implementation's samples and the median over rounds of the per-round ratios ours / OpenFHE (computed inside
each round, so slow phases of the shared machine cancel out), also against the faster OpenFHE technique of that
round ("best").

Stdlib only: runs with any python3 >= 3.8. Run bench/peers/setup.sh first (make bench-peers-bfv does both).
"""

import argparse
import json
import os
import statistics
import sys
import time

# Same directory; stdlib only.
from compare_table1 import (HERE, ROOT, add_run_args, error_lines, fmt_ms, fmt_ratio, interleave, machine_lines,
                            parse_run_args, run_header, run_presets, start_processes, times_ms)
from peerlib import load_presets

# Operations in table order, with calls per round sample.
OPS = [
    ("mult_relin", "Mul + Relin (EvalMult)", 3),
    ("mult", "Mul, no relin (EvalMultNoRelin)", 3),
    ("relin", "Relin (Relinearize)", 3),
    ("decrypt", "Decrypt + Decode", 5),
    ("encrypt", "Encode + Encrypt (pk)", 3),
    ("add", "Add", 10),
]

OPENFHE = ("ofhe_hps", "ofhe_poql")
NATIVE = ("ofhe_hps_native", "ofhe_poql_native")
LABEL = {"ours": "ours", "ofhe_hps": "OpenFHE HPS", "ofhe_poql": "OpenFHE HPSPOVERQLEVELED",
         "ofhe_hps_native": "OpenFHE HPS (native params)",
         "ofhe_poql_native": "OpenFHE HPSPOVERQLEVELED (native params)"}
SHORT = {"ours": "ours", "ofhe_hps": "HPS", "ofhe_poql": "POQL", "ofhe_hps_native": "HPS nat.",
         "ofhe_poql_native": "POQL nat."}
TECH = {"ofhe_hps": "HPS", "ofhe_poql": "HPSPOVERQLEVELED", "ofhe_hps_native": "HPS",
        "ofhe_poql_native": "HPSPOVERQLEVELED"}
DEFAULT_PRESETS = ["BfvT65537L1", "BfvT65537L5", "BfvT65537L10", "BfvT65537L20"]


def start_peers(args, preset, params):
    env = dict(os.environ, OMP_NUM_THREADS="1", RAYON_NUM_THREADS="1")
    pjson = json.dumps({k: v for k, v in params.items() if k != "issue_ref_ms"})
    py = os.path.join(ROOT, ".venv-peers", "openfhe", "bin", "python")
    script = os.path.join(HERE, "openfhe_bfv.py")
    cmds, skipped = {}, {}
    if args.no_ours:
        skipped["ours"] = "not asked for (--no-ours)"
    else:
        binary = os.path.join(ROOT, "target", "release", "rnsfhe")
        base = args.ours_cmd.split() if args.ours_cmd else [binary, "bench", "bfv-op"]
        if args.ours_cmd or os.path.exists(binary):
            cmds["ours"] = base + ["--depth", str(params["depth"]), "--t", str(params["t"])]
        else:
            skipped["ours"] = "target/release/rnsfhe not found (build it: cargo build --release -p rnsfhe-cli)"
    names = list(OPENFHE) + (list(NATIVE) if args.native else [])
    for name in names:
        if not os.path.exists(py):
            skipped[name] = f"{py} missing: run bench/peers/setup.sh"
            continue
        cmds[name] = [py, script, "--params", pjson, "--technique", TECH[name]] \
            + (["--native"] if name in NATIVE else [])
    print(f"   starting {', '.join(LABEL[n] for n in cmds)} ...", file=sys.stderr)
    peers, failed = start_processes(cmds, env, args)
    for name, why in failed.items():
        skipped[name] = f"failed to start: {why}"
    return peers, skipped


def params_warnings(preset_params, peers):
    out = []
    for name, p in peers.items():
        if name in NATIVE:
            continue
        got = p.ready.get("params", {})
        if got.get("log_n") != preset_params["log_n"]:
            out.append(f"{LABEL[name]}: N = 2^{got.get('log_n')}, preset 2^{preset_params['log_n']}")
        if list(got.get("q_bits") or []) != list(preset_params["q_bits"]):
            out.append(f"{LABEL[name]}: q bits {got.get('q_bits')}, preset {preset_params['q_bits']}")
        if (got.get("relin_digit_bits") or None) != (preset_params.get("relin_digit_bits") or None):
            out.append(f"{LABEL[name]}: relinearization digits 2^{got.get('relin_digit_bits')}, "
                       f"preset 2^{preset_params.get('relin_digit_bits')}")
        if (got.get("dnum") or None) != (preset_params.get("dnum") or None):
            out.append(f"{LABEL[name]}: hybrid key switching dnum {got.get('dnum')}, preset {preset_params.get('dnum')}")
        if not (p.ready.get("check") or {}).get("exact", False):
            out.append(f"{LABEL[name]}: correctness check FAILED: {p.ready.get('check')}")
    return out


def load_average():
    """The 1 / 5 / 15 minute load averages (other work on the machine), or None."""
    try:
        with open("/proc/loadavg") as f:
            return " ".join(f.read().split()[:3])
    except OSError:
        return None


def run_preset(args, preset, params):
    print(f"== {preset}: starting processes ...", file=sys.stderr)
    t_start = time.time()
    load_start = load_average()
    peers, skipped = start_peers(args, preset, params)
    for name, why in skipped.items():
        print(f"   {LABEL[name]}: NOT RUN: {why}", file=sys.stderr)
    if not peers:
        raise SystemExit("nothing to run")
    order = [n for n in ("ours",) + OPENFHE + NATIVE if n in peers]
    ops = [o for o in OPS if not args.ops or o[0] in args.ops]
    samples, raw, errors, infos = interleave(peers, order, ops, args.rounds, SHORT)

    def ratio(op, a, bs):
        """Median over rounds of a / min(b for b in bs) within each round."""
        sa = samples[op].get(a)
        sbs = [samples[op].get(b) for b in bs]
        if not sa or any(not sb or len(sb) != len(sa) for sb in sbs):
            return None
        return statistics.median(x / min(ys) for x, *ys in zip(sa, *sbs))

    rows = []
    for op, label, reps in ops:
        row = {"op": op, "label": label, "reps_per_round": reps, "rounds": args.rounds}
        for n in order:
            row[n] = times_ms(samples[op][n], raw[op][n])
        row["ratio_ours_hps"] = ratio(op, "ours", ["ofhe_hps"])
        row["ratio_ours_poql"] = ratio(op, "ours", ["ofhe_poql"])
        row["ratio_ours_best"] = ratio(op, "ours", list(OPENFHE))
        if args.native:
            row["ratio_ours_best_native"] = ratio(op, "ours", list(NATIVE))
        row["issue_ref_ms"] = (params.get("issue_ref_ms") or {}).get(op)
        row["errors"] = errors.get(op, {})
        rows.append(row)

    return {
        "preset": preset,
        "params_requested": params,
        **run_header(args, t_start, infos),
        "load_average": [load_start, load_average()],
        "order": order,
        "not_run": skipped,
        "warnings": params_warnings(params, peers),
        "rows": rows,
    }


def markdown(res):
    p = res["params_requested"]
    order = res["order"]
    relin = f"hybrid, dnum {p['dnum']}" if p.get("dnum") else \
        f"base-2^{p['relin_digit_bits']} digits" if p.get("relin_digit_bits") else "CRT only"
    lines = [f"### {res['preset']}: t = {p['t']}, depth {p['depth']}, N = 2^{p['log_n']}, "
             f"log Q = {sum(p['q_bits'])} ({len(p['q_bits'])} primes), relinearization: {relin}", ""]
    lines += machine_lines(res)
    load = res.get("load_average") or [None, None]
    lines.append(f"- load average (1 / 5 / 15 min; other work on the machine): {load[0]} at the start, "
                 f"{load[1]} at the end")
    for n in ("ours",) + OPENFHE + NATIVE:
        info = res["implementations"].get(n)
        if info:
            ap = info["params"] or {}
            extra = f", OpenFHE depth {ap.get('openfhe_depth')}" if n != "ours" else ""
            lines.append(f"- {LABEL[n]}: {info['version']}; N = 2^{ap.get('log_n')}, q bits {ap.get('q_bits')} "
                         f"(log Q = {ap.get('log_q')}){extra}; relin: {ap.get('key_switching')}; "
                         f"security: {ap.get('security')}; check: {info.get('check')}")
        elif n in res["not_run"] and n not in NATIVE:
            lines.append(f"- {LABEL[n]}: NOT RUN: {res['not_run'][n]}")
    for w in res["warnings"]:
        lines.append(f"- WARNING: {w}")
    lines.append(f"- {res['rounds']} interleaved rounds per operation (order rotating); a round's sample is the "
                 f"median of its calls; times are medians over rounds; ratios are medians of per-round ratios; "
                 f"best = the faster OpenFHE technique of each round; ref. = the reference OpenFHE numbers "
                 f"(OpenFHE's own parameters, fastest technique)")
    native = any(n in order for n in NATIVE)
    head = ["operation"] + [f"{SHORT[n]} (ms)" for n in order] \
        + ["ours / HPS", "ours / POQL", "ours / best"] + (["ours / best native"] if native else []) \
        + ["ref. (ms)", "ours / ref."]
    lines += ["", "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for row in res["rows"]:
        ours, ref = row.get("ours", {}).get("median_ms"), row["issue_ref_ms"]
        cells = [row["label"]] + [fmt_ms(row[n]["median_ms"]) for n in order] \
            + [fmt_ratio(row["ratio_ours_hps"]), fmt_ratio(row["ratio_ours_poql"]), fmt_ratio(row["ratio_ours_best"])] \
            + ([fmt_ratio(row.get("ratio_ours_best_native"))] if native else []) \
            + [fmt_ms(ref) if ref else "-", fmt_ratio(ours / ref if ours is not None and ref else None)]
        lines.append("| " + " | ".join(cells) + " |")
    lines += error_lines(res, LABEL)
    return "\n".join(lines)


def main():
    presets = load_presets("presets_bfv.json")
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--preset", action="append",
                    help=f"one of {', '.join(presets)} (repeatable; default: depths 1, 5, 10, 20)")
    ap.add_argument("--depth30", action="store_true", help="add BfvT65537L30 (N = 2^16, 20 primes; slow)")
    ap.add_argument("--native", action="store_true",
                    help="also run OpenFHE with its own parameters for t and the depth (the reference times' setting)")
    add_run_args(ap, "BfvT65537L1", f"comma-separated subset of {', '.join(o for o, _, _ in OPS)}",
                 "run OpenFHE only", "bench bfv-op (--depth L --t T is appended)", 900)
    args, names = parse_run_args(ap, DEFAULT_PRESETS, "BfvT65537L1")
    if args.depth30 and "BfvT65537L30" not in names:
        names.append("BfvT65537L30")
    run_presets(ap, args, names, presets, run_preset, markdown, "peers-bfv-")


if __name__ == "__main__":
    main()
