#!/usr/bin/env python3
"""Driver of the PEGASUS comparison: our look-up tables (rnsfhe.lwe.LutSession) against OpenFHE's binfhe (EvalFunc
with GINX, LMKCDEY and AP, EvalSign, SwitchCTtoqn, CKKS -> FHEW scheme switching), on this machine, in one run.

Processes (the line protocol of README.md, "Protocol"), one per implementation and group of rows:
  ours     .venv/bin/python bench/peers/rnsfhe_lut.py --ops <ours ops of the group>
  OpenFHE  .venv-peers/openfhe/bin/python bench/peers/openfhe_binfhe.py --ops <OpenFHE ops of the group>
Each row pairs one operation of ours with its nearest OpenFHE counterpart (or has one side only); for each row, R
rounds ask both processes in turn (the order alternating) for `reps` calls, whose median is that round's sample. The
table gives the median over rounds and the median of the per-round ratios rnsfhe / OpenFHE. The rows run in groups,
each group with processes of its own (OpenFHE's keys for the large-precision contexts take about 5 GB each).

The row "KS N -> n per LWE" takes ours from `rnsfhe bench pegasus-table5` (the Python API has no switching key from
the CKKS dimension), run once before the rounds (or read from --table5 FILE): that row is not interleaved.

These are not like-for-like computations (see docs/bench/pegasus-peers.md): OpenFHE's tables map Z_p to Z_p with
p = 8 or 16 at 128-bit parameters, ours map real numbers on a grid of 4096 points at PEGASUS's Table IV parameters,
whose switching key our estimator puts at about 98 bits.

Stdlib only: runs with any python3 >= 3.8. Needs bench/peers/setup.sh (OpenFHE), `make python-ext` (ours) and
`cargo build --release -p rnsfhe-cli` (pegasus-table5); `make bench-peers-pegasus` does all three.
"""

import argparse
import datetime
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

# Same directory; stdlib only.
from compare_table1 import ROOT, HERE, Peer, cpu_model, fmt_ms, fmt_ratio
from compare_functions import load_average

IMPLS = ("ours", "openfhe")
LABEL = {"ours": "rnsfhe", "openfhe": "OpenFHE binfhe"}
FS = "PegasusTable4FastSpecial"
T4 = "PegasusTable4"
TABLE5_KS = "table5:KS N"  # ours from pegasus-table5: the row whose operation starts with "KS N"

# The rows: group (processes of their own), label, our op, OpenFHE's op, calls per round sample, in --quick?
# A group named in OPTIONAL runs only when asked for (--groups or its flag).
ROWS = [
    ("switch", "KS N -> n per LWE ciphertext: ours KS 2^16 -> 1024 (PEGASUS Fig. 9); OpenFHE EvalCKKStoFHEW / slots",
     TABLE5_KS, "ckks_to_fhew:{slots}", 1, True),
    ("ks", "KS n_lut -> n: ours switch_to_lwe 4096 -> 1024; OpenFHE SwitchCTtoqn 1024 -> 554",
     f"ks:{FS}", "ks:STD128:GINX", 20, True),
    ("lut", "LUT, 1 blind rotation, ternary key, q' ~ 2^60 (PEGASUS Table IV) vs EvalFunc GINX (STD128)",
     f"lut:ternary:{T4}:sigmoid", "evalfunc:nega:STD128:GINX", 1, False),
    ("lut", "LUT, 1 blind rotation, ternary key, q' < 2^50 vs EvalFunc GINX (STD128)",
     f"lut:ternary:{FS}:sigmoid", "evalfunc:nega:STD128:GINX", 1, True),
    ("lut", "LUT, 1 blind rotation, binary key, q' < 2^50 vs EvalFunc GINX (STD128)",
     f"lut:binary:{FS}:sigmoid", "evalfunc:nega:STD128:GINX", 1, True),
    ("lut", "LUT, 1 blind rotation, LMKCDEY, q' < 2^50 vs EvalFunc LMKCDEY (STD128_LMKCDEY)",
     f"lut:lmkcdey:{FS}:sigmoid", "evalfunc:nega:STD128_LMKCDEY:LMKCDEY", 1, True),
    ("lut", "EvalFunc LMKCDEY with p = 16 (STD128Q_4_LMKCDEY, N = 2048)",
     None, "evalfunc:nega:STD128Q_4_LMKCDEY:LMKCDEY", 1, False),
    ("lut", "Bootstrap of a bit, LMKCDEY (STD128_LMKCDEY)",
     None, "bootstrap:STD128_LMKCDEY:LMKCDEY", 1, False),
    ("arb", "LUT, ternary key (PEGASUS Table IV) vs EvalFunc of a table on all of Z_p (2 bootstrappings, GINX)",
     f"lut:ternary:{T4}:sigmoid", "evalfunc:arb", 1, False),
    ("sign", "Sign: ours LUT of sign (4096-point grid) vs EvalSign, 13-bit plaintext (modulus 2^21)",
     f"lut:ternary:{FS}:sign", "sign:21", 1, False),
    ("ap", "LUT, ternary key, q' < 2^50 vs EvalFunc AP (STD128_AP)",
     f"lut:ternary:{FS}:sigmoid", "evalfunc:nega:STD128_AP:AP", 1, False),
    ("fhew_to_ckks", "FHEW -> CKKS per LWE ciphertext: EvalFHEWtoCKKS / slots (ours: repacking not built)",
     None, "fhew_to_ckks:{slots}", 1, False),
    ("argmin", "min + arg-min of {values} values, CKKS in and out, 128-bit: ours min_and_argmin (Secure128) vs "
     "EvalMinSchemeSwitching (N = 2^16)",
     "argmin:Secure128:{values}", "argmin:{values}", 1, False),
    ("argmin", "min + arg-min of {values} values, smoke run at insecure sizes (InsecureTest vs HEStd_NotSet / TOY)",
     "argmin:InsecureTest:{values}", "argmin:{values}:toy", 1, True),
]
GROUPS = ["switch", "ks", "lut", "arb", "sign", "ap", "fhew_to_ckks", "argmin"]
OPTIONAL = {"ap": "OpenFHE's AP keys: about 50 s of key generation and 3.5 GB",
            "fhew_to_ckks": "CKKS depth 13 at ring 2^16: about 90 s of set-up, 30 s per call of 256 slots",
            "argmin": "OpenFHE's scheme-switching arg-min at ring 2^16 (minutes of set-up, about 100 s per call) "
                      "and our Secure128 pipeline keys: several GB each"}


def rows_for(args):
    """The rows to run: (group, label, ours op, OpenFHE op, reps), the slots filled in."""
    out = []
    for group, label, ours, theirs, reps, quick in ROWS:
        if group not in args.groups or (args.quick and not quick and not args.groups_given):
            continue
        if group == "argmin" and (quick != args.quick):
            continue  # the 128-bit row in full runs, the smoke row in --quick runs
        slots = args.slots if group == "switch" else args.back_slots
        fill = (lambda op: op.format(slots=slots, values=args.argmin_values) if op else None)
        out.append((group, fill(label), fill(ours), fill(theirs), reps))
    return out


def table5(args):
    """(rows of pegasus-table5's JSON, where they came from) or (None, why not)."""
    if args.no_table5:
        return None, "not asked for (--no-table5)"
    path = args.table5
    if path is None and args.quick:
        path = os.path.join(ROOT, "bench-results", "pegasus-table5.json")
        if not os.path.exists(path):
            return None, f"--quick and no {os.path.relpath(path, ROOT)} to read (run `rnsfhe bench pegasus-table5`)"
    if path is None:
        binary = os.path.join(ROOT, "target", "release", "rnsfhe")
        if not os.path.exists(binary):
            return None, "target/release/rnsfhe not found (build it: cargo build --release -p rnsfhe-cli)"
        out_dir = tempfile.mkdtemp(prefix="pegasus-table5-")
        print("== running rnsfhe bench pegasus-table5 --part lwe (1 thread for the rows; a few minutes) ...",
              file=sys.stderr)
        # Only the LWE rows: the pipeline rows (about an hour) are not compared here.
        res = subprocess.run([binary, "bench", "pegasus-table5", "--part", "lwe", "--out", out_dir], cwd=ROOT, text=True,
                             capture_output=True)
        if res.returncode != 0:
            return None, f"rnsfhe bench pegasus-table5 failed (exit {res.returncode}): {res.stderr.strip()[-300:]}"
        path = os.path.join(out_dir, "pegasus-table5.json")
        source = "rnsfhe bench pegasus-table5, run by this driver before the rounds"
    else:
        source = f"{os.path.relpath(path, os.getcwd())}"
    try:
        with open(path) as f:
            data = json.load(f)
    except (OSError, ValueError) as e:
        return None, f"cannot read {path}: {e}"
    if any("Insecure" in str(p) for p in data.get("presets", [])):
        return None, f"{path} is a --quick run at the small test dimensions (presets {data.get('presets')})"
    date = (data.get("machine") or {}).get("date")
    return {"source": source + (f" (measured {date})" if date else ""), "rows": data.get("rows", [])}, None


def table5_ms(t5, prefix):
    for row in (t5 or {}).get("rows", []):
        if str(row.get("operation", "")).startswith(prefix):
            return row.get("ms"), row.get("operation")
    return None, None


def start_group(args, rows, env):
    """Starts the processes of one group; returns ({impl: Peer}, {impl: why it is not running})."""
    ops = {"ours": [], "openfhe": []}
    for _, _, ours, theirs, _ in rows:
        for impl, op in (("ours", ours), ("openfhe", theirs)):
            if op and not op.startswith("table5:") and op not in ops[impl]:
                ops[impl].append(op)
    cmds, skipped = {}, {}
    py = {"ours": args.ours_python, "openfhe": os.path.join(ROOT, ".venv-peers", "openfhe", "bin", "python")}
    script = {"ours": "rnsfhe_lut.py", "openfhe": "openfhe_binfhe.py"}
    for impl in IMPLS:
        if not ops[impl]:
            continue
        if getattr(args, f"no_{impl}"):
            skipped[impl] = f"not asked for (--no-{impl})"
        elif not os.path.exists(py[impl]):
            skipped[impl] = (f"{py[impl]} missing: run "
                             + ("`make python-ext`" if impl == "ours" else "bench/peers/setup.sh"))
        else:
            cmds[impl] = [py[impl], os.path.join(HERE, script[impl]), "--ops", ",".join(ops[impl])]
            if impl == "openfhe" and args.key_sizes:
                cmds[impl].append("--key-sizes")
    peers = {}
    for impl, argv in cmds.items():
        print(f"   starting {LABEL[impl]}: {', '.join(ops[impl])} ...", file=sys.stderr)
        p = Peer(impl, argv, env, args.cpu)
        if p.wait_ready(args.setup_timeout):
            peers[impl] = p
        else:
            p.close()
            skipped[impl] = "failed to start: " + (" | ".join(l for l in p.stderr_tail[-6:] if l.strip())
                                                    or "no output")
    return peers, skipped


def run_group(args, group, rows, env, t5, t5_why):
    print(f"== group {group} ...", file=sys.stderr)
    peers, skipped = start_group(args, rows, env)
    out = []
    try:
        for _, label, ours, theirs, reps in rows:
            ops = {"ours": ours, "openfhe": theirs}
            row = {"group": group, "label": label, "reps_per_round": reps, "rounds": args.rounds, "errors": {}}
            avail = []
            for impl in IMPLS:
                op = ops[impl]
                cell = {"op": op, "median_ms": None, "min_ms": None, "round_ms": [], "params": None, "check": None}
                row[impl] = cell
                if op is None:
                    continue
                if op.startswith("table5:"):
                    if args.no_ours:
                        row["errors"][impl] = "not asked for (--no-ours)"
                        continue
                    ms, name = table5_ms(t5, op.split(":", 1)[1])
                    cell.update(median_ms=ms, source=(t5 or {}).get("source"), table5_operation=name)
                    if ms is None:
                        row["errors"][impl] = t5_why or "no such row in the pegasus-table5 results"
                    continue
                peer = peers.get(impl)
                if peer is None:
                    row["errors"][impl] = skipped.get(impl, "not running")
                    continue
                cell["params"] = (peer.ready.get("params") or {}).get(op)
                cell["check"] = (peer.ready.get("check") or {}).get(op)
                if op not in peer.ready.get("ops", []):
                    row["errors"][impl] = (cell["check"] or {}).get("error", "op not offered")
                    continue
                msg = peer.ask(op, 1)  # warm-up, discarded
                if "error" in msg:
                    row["errors"][impl] = msg["error"]
                    continue
                avail.append(impl)
            print(f"   {label[:70]}: {args.rounds} rounds x {reps}, {', '.join(LABEL[i] for i in avail)}",
                  file=sys.stderr)
            samples = {impl: [] for impl in avail}
            for r in range(args.rounds):
                k = r % len(avail) if avail else 0
                for impl in avail[k:] + avail[:k]:
                    msg = peers[impl].ask(ops[impl], reps)
                    if "error" in msg:
                        raise RuntimeError(f"{impl} {ops[impl]}: {msg['error']}")
                    samples[impl].append(statistics.median(msg["seconds"]))
            for impl, s in samples.items():
                row[impl].update(median_ms=statistics.median(s) * 1e3 if s else None,
                                 min_ms=min(s) * 1e3 if s else None, round_ms=[x * 1e3 for x in s])
            a, b = samples.get("ours"), samples.get("openfhe")
            if a and b:
                row["ratio"] = statistics.median(x / y for x, y in zip(a, b))
                row["ratio_from"] = "median of per-round ratios"
            elif row["ours"]["median_ms"] and row["openfhe"]["median_ms"]:
                row["ratio"] = row["ours"]["median_ms"] / row["openfhe"]["median_ms"]
                row["ratio_from"] = "ratio of medians (ours not interleaved)"
            else:
                row["ratio"] = None
            out.append(row)
    finally:
        infos = {impl: {"version": p.ready.get("version")} for impl, p in peers.items()}
        for p in peers.values():
            p.close()
    return out, infos, skipped


def fmt_bytes(n):
    return "n/a" if n is None else f"{n / 2**20:.0f} MiB"


def describe(impl, cell):
    """The parameters of one side of a row, in a few words."""
    p = cell.get("params") or {}
    if impl == "ours":
        if cell.get("table5_operation"):
            return f"{cell['table5_operation']} (pegasus-table5: q0 ~ 2^45, B_ks = 2^7, d_ks = 7)"
        if not p:
            return ""
        if "values" in p:
            return (f"pegasus.Session({p['preset']}): CKKS N = {p['ckks_ring_dim']}, log QP = {p['ckks_log_qp']:.0f}, "
                    f"n_lwe = {p['n_lwe']}, n = {p['n']}, {p['tables']} tables")
        if "from_dimension" in p:
            return (f"{p['from_dimension']} -> {p['to_dimension']} mod q0 ~ 2^{p['log_q0']:.0f}, "
                    f"B_ks = 2^{p['ks_base_log']}, d_ks = {p['ks_digits']}")
        return (f"{p['algorithm']} blind rotation, n_lwe = {p['n_lwe']}, n = {p['n']}, q0 ~ 2^{p['log_q0']:.0f}, "
                f"q' ~ 2^{p['log_special']:.0f}, LWE key {p['lwe_secret']}; {p['function']} on a grid of "
                f"{p['input_points']} points over |x| < {p['input_range']:g}")
    if not p:
        return ""
    if "values" in p:
        return (f"EvalMinSchemeSwitching: CKKS N = {p['ckks_ring_dim']}, log Q = {p['ckks_log_q']:.0f}, "
                f"FHEW n = {p['fhew_n']}, N = {p['fhew_N']}")
    if "ckks_ring_dim" in p:
        return (f"CKKS N = {p['ckks_ring_dim']}, log Q = {p['ckks_log_q']:.0f}, {p['slots']} slots -> LWE "
                f"n = {p['fhew_n']} mod 2^{p['lwe_modulus'].bit_length() - 1}")
    text = f"n = {p['n']}, N = {p['N']}, q = {p['q']}, Q ~ 2^{p['log_Q']:.0f}"
    if "from_dimension" in p:
        return f"{p['from_dimension']} -> {p['to_dimension']}, mod {p['from_modulus']} -> {p['to_modulus']}; {text}"
    if "p_bits" in p:
        return f"{text}, input mod 2^{p['input_modulus'].bit_length() - 1}, p = 2^{p['p_bits']:.0f}"
    if "p" in p:
        # A negacyclic table is free on half of Z_p only (the other half is its negation).
        text += f", p = {p['p']}" + (" (free on p/2 inputs)" if "negacyclic" in p.get("function", "") else "")
    return text + f"; {p['context'].replace('GenerateBinFHEContext', '')}" + (
        f", keys {fmt_bytes(p['bootstrapping_key_bytes'])}" if p.get("bootstrapping_key_bytes") else "")


def security(impl, cell):
    p = cell.get("params") or {}
    if impl == "ours" and cell.get("table5_operation"):
        return "PEGASUS Table IV dimensions (security: see the LUT rows)"
    s = p.get("security") or ""
    if impl == "ours" and "our estimator: " in s:
        return "estimator: " + s.split("our estimator: ", 1)[1].split(" (below")[0] + " (< 128)"
    return s.split(":")[0] if impl == "openfhe" and s else s


def check_text(impl, cell):
    c = cell.get("check") or {}
    if not c or "error" in c:
        return None
    if "within_bound" in c:
        return f"max error {c['max_error']:.2g} ({c['bits']:.1f} bits), within the bound {c.get('bound_eq3', c.get('bound')):.2g}: {c['within_bound']}"
    if "max_error" in c and "bits" in c:
        return f"{c['inputs']} values, max error {c['max_error']:.2g} ({c['bits']:.1f} bits)"
    if "argmin_wrong" in c:
        bound = f" (bound {c['min_error_bound']:.2g})" if "min_error_bound" in c else ""
        return (f"{c['inputs']} values: min error {c['min_error']:.2g}{bound}, "
                f"{c['inputs'] - c['argmin_wrong']} / {c['inputs']} arg-min bits right")
    if "wrong" in c:
        return f"{c['inputs'] - c['wrong']} / {c['inputs']} inputs right"
    return None


def markdown(res):
    lines = ["## PEGASUS LUTs and key switches: rnsfhe against OpenFHE binfhe", "",
             f"- date: {res['date_utc']}",
             f"- CPU: {res['cpu']} ({res['logical_cpus']} logical CPUs)"
             + (f", all processes pinned to CPU {res['pinned_cpu']}" if res["pinned_cpu"] is not None else ""),
             "- threads: 1 in every process (OMP_NUM_THREADS=1, RAYON_NUM_THREADS=1)",
             f"- load average (1 / 5 / 15 min; other work on the machine): {res['load_average'][0]} before, "
             f"{res['load_average'][1]} after",
             f"- {res['rounds']} interleaved rounds per row (order alternating); times are medians over rounds, "
             "ratios medians of per-round ratios rnsfhe / OpenFHE"]
    for impl, version in res["versions"].items():
        lines.append(f"- {LABEL[impl]}: {version}")
    if res["table5"]:
        lines.append(f"- ours, KS N -> n: {res['table5']['source']}; not interleaved (ratio of medians)")
    elif res["table5_why"]:
        lines.append(f"- ours, KS N -> n: not available: {res['table5_why']}")
    for group, why in res["not_run"].items():
        lines.append(f"- {group}: NOT RUN: {why}")
    if res["quick"]:
        lines.append("- QUICK RUN: few rounds and rows; indicative only")
    lines += ["", "| operation | rnsfhe (ms) | OpenFHE binfhe (ms) | rnsfhe / OpenFHE | parameters | security |",
              "|---|---|---|---|---|---|"]
    for row in res["rows"]:
        o, f = row["ours"], row["openfhe"]
        params = "; ".join(f"{LABEL[i] if i == 'openfhe' else 'ours'}: {d}"
                           for i, d in (("ours", describe("ours", o)), ("openfhe", describe("openfhe", f))) if d)
        sec = "; ".join(f"{'ours' if i == 'ours' else 'OpenFHE'}: {s}"
                        for i, s in (("ours", security("ours", o)), ("openfhe", security("openfhe", f))) if s)
        cell = (lambda c: "—" if c["op"] is None else fmt_ms(c["median_ms"]) if c["median_ms"] is not None else "n/a")
        lines.append(f"| {row['label']} | {cell(o)} | {cell(f)} | {fmt_ratio(row['ratio'])} "
                     f"| {params} | {sec} |")
    notes = []
    for row in res["rows"]:
        for impl in IMPLS:
            c = row[impl]
            text = check_text(impl, c)
            if text:
                notes.append(f"- correctness, {'ours' if impl == 'ours' else 'OpenFHE'} `{c['op']}`: {text}")
        for impl, e in row["errors"].items():
            notes.append(f"- n/a, {'ours' if impl == 'ours' else 'OpenFHE'} `{row[impl]['op']}`: {e}")
    seen = set()
    lines += [""] + [n for n in notes if not (n in seen or seen.add(n))]
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=15, help="interleaved rounds per row (default 15; --quick 3)")
    ap.add_argument("--quick", action="store_true",
                    help="3 rounds, the rows marked quick (no PEGASUS Table IV ternary session, no large-precision "
                         "contexts), 256 slots, pegasus-table5 read from bench-results/ if there")
    ap.add_argument("--groups", help=f"comma-separated groups of rows to run (default: all but "
                                     f"{', '.join(OPTIONAL)}); groups: {', '.join(GROUPS)}")
    ap.add_argument("--ap", action="store_true", help=f"also the AP row ({OPTIONAL['ap']})")
    ap.add_argument("--fhew-to-ckks", action="store_true",
                    help=f"also EvalFHEWtoCKKS ({OPTIONAL['fhew_to_ckks']})")
    ap.add_argument("--argmin", action="store_true", help=f"also the arg-min rows ({OPTIONAL['argmin']})")
    ap.add_argument("--argmin-values", type=int, default=8,
                    help="values of the arg-min rows (a power of two; default 8, the issue's OpenFHE figure)")
    ap.add_argument("--slots", type=int, help="CKKS slots switched to LWE per call (default 1024; --quick 256)")
    ap.add_argument("--back-slots", type=int, default=256, help="LWE ciphertexts switched back to CKKS per call")
    ap.add_argument("--table5", help="read our KS N -> n from this pegasus-table5 JSON instead of running it")
    ap.add_argument("--no-table5", action="store_true", help="no pegasus-table5 (the KS N -> n row has no ours)")
    ap.add_argument("--key-sizes", action="store_true",
                    help="OpenFHE serializes each bootstrapping key set once to report its size (about 1 GB each)")
    ap.add_argument("--no-ours", action="store_true", help="OpenFHE only")
    ap.add_argument("--no-openfhe", action="store_true", help="ours only")
    ap.add_argument("--ours-python", default=os.path.join(ROOT, ".venv", "bin", "python"),
                    help="the python with rnsfhe installed (default .venv/bin/python, made by make python-ext)")
    ap.add_argument("--cpu", type=int, help="pin every benchmark process to this CPU (default: no pinning)")
    ap.add_argument("--setup-timeout", type=float, default=1200, help="seconds a process may take to get ready")
    ap.add_argument("--out-dir", default=os.path.join(ROOT, "bench-results"))
    args = ap.parse_args()
    args.groups_given = args.groups is not None
    if args.groups:
        args.groups = [g.strip() for g in args.groups.split(",") if g.strip()]
        unknown = [g for g in args.groups if g not in GROUPS]
        if unknown:
            ap.error(f"unknown groups {unknown}; known: {', '.join(GROUPS)}")
    else:
        args.groups = [g for g in GROUPS if g not in OPTIONAL or getattr(args, g)]
    if args.quick and "--rounds" not in sys.argv:
        args.rounds = 3
    if args.slots is None:
        args.slots = 256 if args.quick else 1024

    env = dict(os.environ, OMP_NUM_THREADS="1", RAYON_NUM_THREADS="1")
    rows = rows_for(args)
    need_t5 = any(r[2] and r[2].startswith("table5:") for r in rows) and not args.no_ours
    t5, t5_why = table5(args) if need_t5 else (None, None)

    t_start = time.time()
    load_start = load_average()
    all_rows, versions, not_run = [], {}, {}
    for group in [g for g in GROUPS if any(r[0] == g for r in rows)]:
        got, infos, skipped = run_group(args, group, [r for r in rows if r[0] == group], env, t5, t5_why)
        all_rows += got
        versions.update({k: v["version"] for k, v in infos.items()})
        for impl, why in skipped.items():
            if not why.startswith("not asked"):
                not_run[f"{group}, {LABEL[impl]}"] = why
    res = {
        "date_utc": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "cpu": cpu_model(),
        "logical_cpus": os.cpu_count(),
        "threads": 1,
        "pinned_cpu": args.cpu,
        "rounds": args.rounds,
        "quick": args.quick,
        "groups": args.groups,
        "load_average": [load_start, load_average()],
        "wall_seconds": round(time.time() - t_start, 1),
        "versions": versions,
        "table5": t5,
        "table5_why": t5_why,
        "not_run": not_run,
        "rows": all_rows,
    }
    os.makedirs(args.out_dir, exist_ok=True)
    out = os.path.join(args.out_dir, "peers-pegasus.json")
    with open(out, "w") as f:  # the measurements first: a failure of the table below keeps them
        json.dump(res, f, indent=1)
    md = markdown(res)
    print(md)
    res["markdown"] = md
    with open(out, "w") as f:
        json.dump(res, f, indent=1)
    print(f"(written {os.path.relpath(out, os.getcwd())})", file=sys.stderr)


if __name__ == "__main__":
    main()
