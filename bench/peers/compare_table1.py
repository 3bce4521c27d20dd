#!/usr/bin/env python3
"""Driver of the Table 1 comparison: rnsfhe (ours) against OpenFHE and SEAL, on this machine, in one run.

Starts one benchmark process per implementation, all speaking the line protocol of README.md ("Protocol"):
  ours     target/release/rnsfhe bench ckks-op --preset <name>       (skipped, and said so, when missing)
  OpenFHE  .venv-peers/openfhe/bin/python bench/peers/openfhe_table1.py --preset <name> --params <json>
  SEAL     .venv-peers/seal/bin/python    bench/peers/seal_table1.py    --preset <name> --params <json>
For each operation it runs R rounds; a round asks every implementation in turn (the order rotates from round to
round: A B C, B C A, C A B, ...) for `reps` timed calls, whose median is that round's sample. The table gives the
median over rounds of each implementation's samples and, pair by pair, the median over rounds of the per-round
ratios (ours / OpenFHE is computed inside each round, so slow phases of the shared machine cancel out).

Stdlib only: runs with any python3 >= 3.8. Run bench/peers/setup.sh first (make bench-peers does both).
"""

import argparse
import datetime
import json
import os
import platform
import queue
import statistics
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))

# The operations of the paper's Table 1 (plus Rotate and KeyGen), in table order, with calls per round sample.
TABLE_OPS = [
    ("keygen", "KeyGen (sk + pk + relin + 1 rotation key)", 1),
    ("encode_encrypt", "Encode + Encrypt (pk)", 3),
    ("decrypt_decode", "Decrypt + Decode (top level)", 3),
    ("add", "Add", 10),
    ("cmult", "CMult (x plaintext vector) + Rescale", 5),
    ("mult_rs", "Mult + Relin + Rescale", 3),
    ("rotate", "Rotate by 1", 3),
]
# Extra rows, not in the paper's table: they separate costs the table's rows mix.
EXTRA_OPS = [
    ("encrypt", "Encrypt alone (pre-encoded)", 3),
    ("decrypt_decode_l0", "Decrypt + Decode (level 0, one prime)", 5),
]

IMPLS = ("ours", "openfhe", "seal")
LABEL = {"ours": "ours", "openfhe": "OpenFHE", "seal": "SEAL"}


def load_presets():
    with open(os.path.join(HERE, "presets.json")) as f:
        return {k: v for k, v in json.load(f).items() if not k.startswith("_")}


class Peer:
    """One benchmark process. Reads its stdout in a thread so that waits can time out."""

    def __init__(self, name, argv, env, cpu=None):
        self.name = name
        self.argv = argv
        self.lines = queue.Queue()
        self.stderr_tail = []
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     text=True, bufsize=1, env=env, cwd=ROOT)
        if cpu is not None and hasattr(os, "sched_setaffinity"):
            os.sched_setaffinity(self.proc.pid, {cpu})
        self.pumps = [threading.Thread(target=self._pump, args=(stream, is_out), daemon=True)
                      for stream, is_out in ((self.proc.stdout, True), (self.proc.stderr, False))]
        for t in self.pumps:
            t.start()
        self.ready = None

    def _pump(self, stream, is_stdout):
        for line in stream:
            if is_stdout:
                self.lines.put(line)
            else:
                self.stderr_tail = (self.stderr_tail + [line.rstrip()])[-20:]
        if is_stdout:
            self.lines.put(None)  # EOF

    def read(self, timeout):
        """The next JSON object on stdout; None at EOF or time-out. Non-JSON lines are reported and skipped."""
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            try:
                line = self.lines.get(timeout=left)
            except queue.Empty:
                return None
            if line is None:
                return None
            line = line.strip()
            if not line:
                continue
            try:
                return json.loads(line)
            except json.JSONDecodeError:
                print(f"  [{self.name}] (not JSON, ignored) {line[:200]}", file=sys.stderr)

    def wait_ready(self, timeout):
        msg = self.read(timeout)
        if not msg or not msg.get("ready"):
            return False
        self.ready = msg
        return True

    def ask(self, op, reps, timeout=600, threads=None):
        """Runs `reps` calls of `op` (on a pool of `threads` threads when given: README, "Protocol")."""
        cmd = {"op": op, "reps": reps}
        if threads is not None:
            cmd["threads"] = threads
        self.proc.stdin.write(json.dumps(cmd) + "\n")
        self.proc.stdin.flush()
        msg = self.read(timeout)
        if msg is None:
            raise RuntimeError(f"{self.name}: no answer to {op} (process ended or timed out); "
                               f"stderr: {' | '.join(self.stderr_tail[-5:])}")
        return msg

    def close(self):
        try:
            if self.proc.poll() is None:
                self.proc.stdin.write(json.dumps({"op": "quit"}) + "\n")
                self.proc.stdin.flush()
                self.proc.wait(timeout=30)
        except (BrokenPipeError, OSError, subprocess.TimeoutExpired):
            pass
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        for t in self.pumps:  # so that stderr_tail holds everything the process said
            t.join(timeout=5)


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def start_processes(cmds, env, args):
    """Starts one Peer per {name: argv} and waits for its ready line. Returns ({name: Peer}, {name: what the
    process said on stderr}) for the processes that started and those that did not."""
    peers, failed = {}, {}
    for name, argv in cmds.items():
        p = Peer(name, argv, env, args.cpu)
        if p.wait_ready(args.setup_timeout):
            peers[name] = p
        else:
            p.close()
            failed[name] = " | ".join(l for l in p.stderr_tail[-6:] if l.strip()) or "no output"
    return peers, failed


def start_peers(args, preset, params):
    """Starts the processes; returns ({name: Peer}, {name: reason it is not running})."""
    env = dict(os.environ, OMP_NUM_THREADS="1", RAYON_NUM_THREADS="1")
    pjson = json.dumps(params)
    venvs = os.path.join(ROOT, ".venv-peers")
    cmds = {}
    skipped = {}
    if not args.no_ours:
        if args.ours_cmd:
            cmds["ours"] = args.ours_cmd.split() + ["--preset", preset]
        else:
            binary = os.path.join(ROOT, "target", "release", "rnsfhe")
            if os.path.exists(binary):
                cmds["ours"] = [binary, "bench", "ckks-op", "--preset", preset]
            else:
                skipped["ours"] = "target/release/rnsfhe not found (build it: cargo build --release -p rnsfhe-cli)"
    else:
        skipped["ours"] = "not asked for (--no-ours)"
    for name, script in (("openfhe", "openfhe_table1.py"), ("seal", "seal_table1.py")):
        if name in args.skip:
            skipped[name] = "not asked for (--skip)"
            continue
        py = os.path.join(venvs, name, "bin", "python")
        if not os.path.exists(py):
            skipped[name] = f"{py} missing: run bench/peers/setup.sh"
            continue
        cmds[name] = [py, os.path.join(HERE, script), "--preset", preset, "--params", pjson]

    peers, failed = start_processes(cmds, env, args)
    for name, why in failed.items():
        if name == "ours":
            skipped[name] = (f"`{' '.join(cmds[name][1:])}` did not start the protocol (the subcommand may not "
                             f"exist yet): {why}")
        else:
            skipped[name] = f"failed to start: {why}"
    return peers, skipped


def params_warnings(preset_params, peers):
    out = []
    for name, p in peers.items():
        got = p.ready.get("params", {})
        if got.get("log_n") != preset_params["log_n"]:
            out.append(f"{LABEL[name]}: N = 2^{got.get('log_n')}, preset 2^{preset_params['log_n']}")
        if got.get("q_bits") and list(got["q_bits"]) != list(preset_params["q_bits"]):
            out.append(f"{LABEL[name]}: q bits {got['q_bits']}, preset {preset_params['q_bits']}")
        if name == "seal":
            continue  # SEAL's one special prime and per-prime digits are a known, documented difference
        if got.get("p_bits") is not None and list(got["p_bits"]) != list(preset_params["p_bits"]):
            out.append(f"{LABEL[name]}: special primes {got['p_bits']}, preset {preset_params['p_bits']}")
        if got.get("dnum") is not None and got["dnum"] != preset_params["dnum"]:
            out.append(f"{LABEL[name]}: dnum {got['dnum']}, preset {preset_params['dnum']}")
    return out


def interleave(peers, order, ops, rounds, label):
    """Times every (op, label, reps) of `ops` on the processes `peers`, in the order `order`: one discarded warm-up
    call each, then `rounds` rounds that ask every process in turn (the order rotating from round to round) for
    `reps` calls. Closes the processes. Returns (samples, raw, errors, infos): samples[op][name] the median of
    each round's calls, raw[op][name] each round's calls (seconds), errors[op][name] why a process did not run
    op, infos[name] its ready line. `label` names a process in the progress lines."""
    samples = {op: {n: [] for n in order} for op, _, _ in ops}   # per round: median of that round's calls
    raw = {op: {n: [] for n in order} for op, _, _ in ops}       # every call
    errors = {}
    try:
        for op, _, reps in ops:
            avail = [n for n in order if op in peers[n].ready.get("ops", [op])]
            for n in order:
                if n not in avail:
                    errors.setdefault(op, {})[n] = "op not offered"
            # Warm-up: one call each, discarded.
            for n in list(avail):
                msg = peers[n].ask(op, 1)
                if "error" in msg:
                    errors.setdefault(op, {})[n] = msg["error"]
                    avail.remove(n)
            print(f"   {op}: {rounds} rounds x {reps} calls, {', '.join(label[n] for n in avail)}",
                  file=sys.stderr)
            for r in range(rounds):
                k = r % len(avail) if avail else 0
                for n in avail[k:] + avail[:k]:
                    msg = peers[n].ask(op, reps)
                    if "error" in msg:
                        raise RuntimeError(f"{n} {op}: {msg['error']}")
                    secs = msg["seconds"]
                    raw[op][n].append(secs)
                    samples[op][n].append(statistics.median(secs))
    finally:
        infos = {n: p.ready for n, p in peers.items()}
        for p in peers.values():
            p.close()
    return samples, raw, errors, infos


def times_ms(samples, raw):
    """The JSON of one implementation's times for one op: median over rounds, fastest call, round medians."""
    return {"median_ms": statistics.median(samples) * 1e3 if samples else None,
            "min_ms": min(min(c) for c in raw) * 1e3 if samples else None,
            "round_medians_ms": [x * 1e3 for x in samples]}


def run_header(args, t_start, infos):
    """The first fields of a preset's result: date, machine, threads, rounds, time taken, what each process
    reported in its ready line."""
    return {
        "date_utc": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "cpu": cpu_model(),
        "logical_cpus": os.cpu_count(),
        "threads": getattr(args, "threads", 1),
        "pinned_cpu": getattr(args, "cpu", None),
        "rounds": args.rounds,
        "wall_seconds": round(time.time() - t_start, 1),
        "implementations": {n: {"version": i.get("version"), "params": i.get("params"), "check": i.get("check")}
                            for n, i in infos.items()},
    }


def run_preset(args, preset, params):
    print(f"== {preset}: starting processes ...", file=sys.stderr)
    t_start = time.time()
    peers, skipped = start_peers(args, preset, params)
    for name, why in skipped.items():
        print(f"   {LABEL[name]}: NOT RUN: {why}", file=sys.stderr)
    if not peers:
        raise SystemExit("nothing to run")
    order = [n for n in IMPLS if n in peers]
    ops = [o for o in TABLE_OPS + EXTRA_OPS if not args.ops or o[0] in args.ops]
    samples, raw, errors, infos = interleave(peers, order, ops, args.rounds, LABEL)

    def ratio(op, a, b):
        sa, sb = samples[op].get(a), samples[op].get(b)
        if not sa or not sb or len(sa) != len(sb):
            return None
        return statistics.median(x / y for x, y in zip(sa, sb))

    rows = []
    for op, label, reps in ops:
        row = {"op": op, "label": label, "reps_per_round": reps, "rounds": args.rounds}
        for n in IMPLS:
            row[n] = times_ms(samples[op].get(n) or [], raw[op].get(n) or [])
        row["ratio_ours_openfhe"] = ratio(op, "ours", "openfhe")
        row["ratio_ours_seal"] = ratio(op, "ours", "seal")
        row["ratio_seal_openfhe"] = ratio(op, "seal", "openfhe")
        row["errors"] = errors.get(op, {})
        rows.append(row)

    result = {
        "preset": preset,
        "params_requested": params,
        **run_header(args, t_start, infos),
        "not_run": skipped,
        "warnings": params_warnings(params, peers),
        "rows": rows,
    }
    return result


def fmt_ms(x):
    if x is None:
        return "n/a"
    return f"{x:.3g}" if x < 10 else f"{x:.0f}" if x >= 100 else f"{x:.1f}"


def fmt_ratio(x):
    return "n/a" if x is None else f"{x:.2f}"


def machine_lines(res):
    """The markdown lines on when, where and with how many threads a result was measured."""
    return [f"- date: {res['date_utc']}",
            f"- CPU: {res['cpu']} ({res['logical_cpus']} logical CPUs)"
            + (f", all processes pinned to CPU {res['pinned_cpu']}" if res["pinned_cpu"] is not None else ""),
            f"- threads: {res.get('threads', 1)} in every implementation (OMP_NUM_THREADS=1, "
            f"RAYON_NUM_THREADS={res.get('threads', 1)})"]


def error_lines(res, label):
    """The markdown lines listing the errors of a result's rows (none if there were none)."""
    errs = [(row["label"], n, e) for row in res["rows"] for n, e in row["errors"].items()]
    return [""] + [f"- {lab}: {label[n]}: {e}" for lab, n, e in errs] if errs else []


def markdown(res):
    p = res["params_requested"]
    lines = [f"### {res['preset']}: N = 2^{p['log_n']}, L = {len(p['q_bits']) - 1}, "
             f"log Q = {sum(p['q_bits'])} ({len(p['q_bits'])} primes: {p['q_bits'][0]} + {len(p['q_bits']) - 1} x "
             f"{p['q_bits'][1] if len(p['q_bits']) > 1 else '-'} bits), special primes {p['p_bits']}, "
             f"dnum = {p['dnum']}, scale 2^{p['scale_bits']}", ""]
    lines += machine_lines(res)
    for n in IMPLS:
        info = res["implementations"].get(n)
        if info:
            ap = info["params"] or {}
            lines.append(f"- {LABEL[n]}: {info['version']}; log Q = {ap.get('log_q')}, log QP = {ap.get('log_qp')}, "
                         f"special primes {ap.get('p_bits')}, key switching: {ap.get('key_switching')}; "
                         f"security: {ap.get('security')}")
            chk = info.get("check") or {}
            if chk:
                lines.append(f"  - correctness (bits of precision, min over slots): "
                             + ", ".join(f"{k.replace('_bits', '')} {v:.1f}" for k, v in chk.items()))
        else:
            lines.append(f"- {LABEL[n]}: NOT RUN: {res['not_run'].get(n)}")
    for w in res["warnings"]:
        lines.append(f"- WARNING: parameters differ: {w}")
    lines.append(f"- {res['rounds']} interleaved rounds per operation (order rotating); a round's sample is the "
                 f"median of its calls; times are medians over rounds; ratios are medians of per-round ratios")
    lines.append("")
    lines.append("| operation | ours (ms) | OpenFHE (ms) | SEAL (ms) | ours / OpenFHE | ours / SEAL | SEAL / OpenFHE |")
    lines.append("|---|---|---|---|---|---|---|")
    for row in res["rows"]:
        lines.append(f"| {row['label']} | {fmt_ms(row['ours']['median_ms'])} | {fmt_ms(row['openfhe']['median_ms'])} "
                     f"| {fmt_ms(row['seal']['median_ms'])} | {fmt_ratio(row['ratio_ours_openfhe'])} "
                     f"| {fmt_ratio(row['ratio_ours_seal'])} | {fmt_ratio(row['ratio_seal_openfhe'])} |")
    lines += error_lines(res, LABEL)
    return "\n".join(lines)


def add_run_args(ap, quick_preset, ops_help, no_ours_help, ours_cmd, setup_timeout):
    """Adds the options every driver has: --rounds, --quick (5 rounds, `quick_preset`), --ops, --no-ours,
    --ours-cmd (instead of target/release/rnsfhe `ours_cmd`), --cpu, --setup-timeout, --out-dir."""
    ap.add_argument("--rounds", type=int, default=15, help="interleaved rounds per operation (default 15)")
    ap.add_argument("--quick", action="store_true", help=f"5 rounds, {quick_preset} only")
    ap.add_argument("--ops", help=ops_help)
    ap.add_argument("--no-ours", action="store_true", help=no_ours_help)
    ap.add_argument("--ours-cmd", help=f"command for our side instead of target/release/rnsfhe {ours_cmd}")
    ap.add_argument("--cpu", type=int, help="pin every benchmark process to this CPU (default: no pinning)")
    ap.add_argument("--setup-timeout", type=float, default=setup_timeout,
                    help="seconds a process may take to get ready")
    ap.add_argument("--out-dir", default=os.path.join(ROOT, "bench-results"))


def parse_run_args(ap, default_names, quick_preset):
    """Parses the command line (with the options of add_run_args); returns (args, the preset names to run):
    --preset's, else `default_names`, or with --quick `quick_preset` and 5 rounds unless given."""
    args = ap.parse_args()
    args.ops = [s.strip() for s in args.ops.split(",")] if args.ops else None
    names = args.preset or list(default_names)
    if args.quick:
        names = args.preset or [quick_preset]
        if "--rounds" not in sys.argv:
            args.rounds = 5
    return args, names


def run_presets(ap, args, names, presets, run_preset, markdown, prefix):
    """Runs `run_preset(args, name, params)` for each preset name, prints `markdown(result)` and writes the result
    (with that markdown) to <out-dir>/<prefix><name>.json. Unknown names are an error before anything runs."""
    for name in names:
        if name not in presets:
            ap.error(f"unknown preset {name!r}; known: {', '.join(presets)}")
    os.makedirs(args.out_dir, exist_ok=True)
    for name in names:
        res = run_preset(args, name, presets[name])
        md = markdown(res)
        print(md)
        print()
        res["markdown"] = md
        out = os.path.join(args.out_dir, f"{prefix}{name}.json")
        with open(out, "w") as f:
            json.dump(res, f, indent=1)
        print(f"(written {os.path.relpath(out, os.getcwd())})", file=sys.stderr)
        sys.stdout.flush()


def main():
    presets = load_presets()
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--preset", action="append", help=f"one of {', '.join(presets)} (repeatable; default: all)")
    ap.add_argument("--skip", default="", help="comma-separated peers not to run (openfhe, seal)")
    add_run_args(ap, "PaperTable1L5", "comma-separated subset of operations (default: all)", "run the peers only",
                 "bench ckks-op (--preset NAME is appended)", 600)
    args, names = parse_run_args(ap, presets, "PaperTable1L5")
    args.skip = [s.strip() for s in args.skip.split(",") if s.strip()]
    run_presets(ap, args, names, presets, run_preset, markdown, "peers-")


if __name__ == "__main__":
    main()
