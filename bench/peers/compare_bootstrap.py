#!/usr/bin/env python3
"""Driver of the CKKS bootstrapping comparison: rnsfhe (ours) against OpenFHE's EvalBootstrap, on this machine,
in one run, single thread.

For each set-up (N, slot count, security) it starts one process per implementation, both speaking the protocol
below, then runs R rounds; a round asks each process in turn (the order alternating from round to round) for
one timed bootstrapping. It prints one markdown table per set-up (bootstrapping time, precision, levels left,
key generation time, key sizes, peak memory, side by side) and writes everything to
<out-dir>/peers-bootstrap[-quick].json, with `uptime` before and after.

  OpenFHE  .venv-peers/openfhe/bin/python bench/peers/openfhe_bootstrap.py --params '<set-up JSON>'
  ours     OURS_CMD (below) + ["--params", '<set-up JSON>']        (--ours-cmd replaces OURS_CMD)

At N = 2^16 OpenFHE runs, unless --openfhe-matched, --security or --levels-after is given, the set-up of the
issue's reference figure (OPENFHE_REFERENCE below: HEStd_NotSet, 6 levels after bootstrapping, 3 digits, log QP
2312), because it refuses level budget [4, 4] at HEStd_128_classic with its default digits; the table warns
about every log QP over the HE Standard's 128-bit bound.

When our side is missing (no binary, or the binary has no such subcommand yet, or its ready line lacks a
required field) the driver prints "ours: not available (<reason>)" and still produces OpenFHE's table.

Protocol (one JSON object per line on stdin / stdout, UTF-8, flushed; logs go to stderr; as the Table 1
protocol of README.md, with the op `bootstrap` and the fields below):

1. Command line: `<command> --params '<JSON>'`, the set-up:
     {"log_n": 16, "slots": 32768, "security": "128", "secret": "uniform_ternary",
      "level_budget": [4, 4], "scale_bits": 59, "first_mod_bits": 60, "technique": "FLEXIBLEAUTO",
      "levels_after": null, "key_sizes": true}
   Every process must honour log_n (N = 2^log_n), slots (a power of two <= N / 2; below N / 2 sparse packing),
   security ("128": 128-bit classical security, log QP within the HE Standard's bound for N; "none": insecure
   parameters allowed, the quick smoke set-up) and secret (the distribution of the main secret). The other keys
   are OpenFHE's knobs (its example's set-up): a process may use them as hints or ignore them, and reports
   what it chose in its ready line. levels_after null means "as many levels after bootstrapping as the
   security level allows". key_sizes false skips serializing the keys.
2. Setup, then one ready line:
     {"ready": true, "impl": "rnsfhe", "version": "...", "threads": 1, "ops": ["bootstrap"],
      "params": {"log_n": 16, "slots": 32768, "secret": "...", "security": "...", "log_qp": 1555.0,
                 "levels_after": 9, "bootstrap_depth": 14, ...},
      "keygen": {"keygen_s": 12.3, ...},
      "keys": {"total_bytes": 3100000000, "counted": "which keys the total counts", ...},
      "max_rss_bytes": 9000000000,
      "check": {"seconds": 20.1, "min_bits": 19.5, "median_bits": 24.0, "levels_left": 9}}
   Required: ready, version, ops (with "bootstrap"), params.log_n, params.slots, and check.min_bits,
   check.median_bits, check.levels_left (one untimed bootstrapping of the input at setup, which also warms up).
   Optional, shown as n/a when absent: params.secret, params.security, params.log_qp, params.levels_after,
   params.bootstrap_depth and any other params (kept in the JSON); keygen.keygen_s (seconds to generate the
   secret, public, relinearization and bootstrapping keys; other keygen fields are a breakdown); keys.total_bytes
   (serialized size of the evaluation keys bootstrapping needs) with keys.counted saying which; max_rss_bytes
   (peak resident memory of the process after setup).
   The input: x_j = peerlib.test_vector(slots, 1)[j] (reals in [-1, 1] from a fixed LCG: the same points in
   every implementation), imaginary parts 0, encrypted once at setup at the level bootstrapping takes as input
   (OpenFHE: one level left).
3. `{"op": "bootstrap", "reps": R}` runs R bootstrappings of that ciphertext and answers
     {"op": "bootstrap", "seconds": [s_1, ..., s_R], "min_bits": [...], "median_bits": [...],
      "levels_left": [...], "max_rss_bytes": 9100000000}
   seconds: wall clock (monotonic) of the bootstrapping call alone. After each call, untimed, the process
   decrypts the result and measures it against x: per slot -log2 |Re(x'_j) - x_j| (64 for an exact slot, -inf
   for a non-finite one: the conventions of rnsfhe_ckks::PrecisionStats), min_bits the minimum and median_bits
   the median over the slots; levels_left the multiplicative levels the result has left for the user.
   A missing reps means 1. Optional: max_rss_bytes, and cpu_seconds (a list of R: the CPU time of each call,
   which on a loaded machine shows what the wall clock lost to other work).
4. Errors: `{"op": "bootstrap", "error": "..."}` and the process keeps serving; a malformed line answers
   `{"error": "..."}`. `{"op": "quit"}` answers `{"op": "quit", "ok": true}` and the process exits 0; end of
   stdin ends it too.

Stdlib only: runs with any python3 >= 3.8. Run bench/peers/setup.sh first (make bench-peers-bootstrap does it).
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
from compare_table1 import HERE, ROOT, Peer, cpu_model, fmt_ratio

# Our side's command (the lead connects it when `Evaluator::bootstrap` lands); "--params <JSON>" is appended.
OURS_CMD = [os.path.join(ROOT, "target", "release", "rnsfhe"), "bench", "ckks-bootstrap-op"]

IMPLS = ("openfhe", "ours")
LABEL = {"openfhe": "OpenFHE", "ours": "ours"}

# The set-up: OpenFHE's simple-ckks-bootstrapping example at N = 2^16, 128-bit classical security.
FULL = {"log_n": 16, "security": "128", "secret": "uniform_ternary", "level_budget": [4, 4], "scale_bits": 59,
        "first_mod_bits": 60, "technique": "FLEXIBLEAUTO", "levels_after": None, "key_sizes": True}
DEFAULT_SLOTS = [1 << 15, 1 << 12]
# What OpenFHE runs instead by default (--openfhe-matched drops it): the set-up of the reference figure
# (6 levels left, 12.9 GB). OpenFHE refuses level budget [4, 4] at HEStd_128_classic and N = 2^16 with its
# default 3 key-switching digits; it accepts at most 4 levels after bootstrapping there, with one digit per
# prime (27 digits), whose keys do not fit in this machine's memory. With 3 digits and 6 levels log QP is 2312,
# over the 128-bit bound; the table says so (HE_STANDARD_128 below).
OPENFHE_REFERENCE = {"security": "none", "levels_after": 6}
# --quick: N = 2^12, insecure, a few levels after bootstrapping: seconds per side.
QUICK = dict(FULL, log_n=12, security="none", level_budget=[2, 2], levels_after=2)
QUICK_SLOTS = [1 << 11]
# The largest log QP of 128-bit classical security for a uniform ternary secret, by N (the HE Standard's table).
HE_STANDARD_128 = {12: 109, 13: 218, 14: 438, 15: 881, 16: 1772}

REQUIRED_READY = (("ready",), ("version",), ("ops",), ("params", "log_n"), ("params", "slots"),
                  ("check", "min_bits"), ("check", "median_bits"), ("check", "levels_left"))
REPLY_LISTS = ("seconds", "min_bits", "median_bits", "levels_left")


def field(msg, path):
    """msg[path[0]][path[1]]..., or None when any part is missing."""
    for key in path:
        if not isinstance(msg, dict) or key not in msg:
            return None
        msg = msg[key]
    return msg


def ready_problems(msg):
    """What a ready line lacks of the protocol (an empty list when it is complete)."""
    if not isinstance(msg, dict):
        return ["not a JSON object"]
    out = [".".join(path) + " missing" for path in REQUIRED_READY if field(msg, path) is None]
    if msg.get("ready") is not True and "ready missing" not in out:
        out.append("ready is not true")
    if isinstance(msg.get("ops"), list) and "bootstrap" not in msg["ops"]:
        out.append("ops does not offer bootstrap")
    return out


def reply_problems(msg, reps):
    """What an answer to {"op": "bootstrap", "reps": reps} lacks (empty when it is complete)."""
    if not isinstance(msg, dict):
        return ["not a JSON object"]
    if "error" in msg:
        return [f"error: {msg['error']}"]
    out = []
    if msg.get("op") != "bootstrap":
        out.append(f"op is {msg.get('op')!r}, not 'bootstrap'")
    for key in REPLY_LISTS:
        val = msg.get(key)
        if not isinstance(val, list) or len(val) != reps:
            out.append(f"{key} is not a list of {reps} numbers")
        elif not all(isinstance(v, (int, float)) for v in val):
            out.append(f"{key} has a value that is not a number")
    return out


def uptime():
    """`uptime`'s line (load averages), or /proc/loadavg where uptime is missing."""
    try:
        return subprocess.run(["uptime"], capture_output=True, text=True, timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        try:
            with open("/proc/loadavg") as f:
                return "load average: " + " ".join(f.read().split()[:3])
        except OSError:
            return None


def mem_available_gb():
    """MemAvailable of /proc/meminfo in GB (10^9 bytes), or None."""
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024 / 1e9
    except (OSError, ValueError, IndexError):
        pass
    return None


def setup_label(setup):
    slots, n = setup["slots"], 1 << setup["log_n"]
    packing = "full" if slots == n // 2 else "sparse"
    sec = "128-bit asked for" if setup["security"] == "128" else "insecure"
    return f"N = 2^{setup['log_n']}, {slots} slots ({packing}), {sec}"


def commands(args, setup):
    """{name: argv} of the processes to run and {name: why not} of those that will not."""
    cmds, skipped = {}, {}
    if args.no_openfhe:
        skipped["openfhe"] = "not asked for (--no-openfhe)"
    else:
        py = os.path.join(ROOT, ".venv-peers", "openfhe", "bin", "python")
        if os.path.exists(py):
            ojson = json.dumps(dict(setup, **args.openfhe_overrides))
            cmds["openfhe"] = [py, os.path.join(HERE, "openfhe_bootstrap.py"), "--params", ojson]
        else:
            skipped["openfhe"] = f"{py} missing: run bench/peers/setup.sh"
    if args.no_ours:
        skipped["ours"] = "not asked for (--no-ours)"
    else:
        base = args.ours_cmd.split() if args.ours_cmd else OURS_CMD
        if args.ours_cmd or os.path.exists(base[0]):
            cmds["ours"] = base + ["--params", json.dumps(dict(setup, **args.ours_overrides))]
        else:
            skipped["ours"] = (f"{os.path.relpath(base[0], ROOT)} not found "
                               f"(build it: cargo build --release -p rnsfhe-cli)")
    return cmds, skipped


def start(name, argv, args, env):
    """Starts one process and waits for a complete ready line: (Peer, None) or (None, why not)."""
    free = mem_available_gb()
    if free is not None and free < args.min_available_gb:
        return None, (f"only {free:.1f} GB of memory available (< --min-available-gb {args.min_available_gb}); "
                      f"free memory or use --sequential")
    print(f"   {LABEL[name]}: starting ({free:.1f} GB available) ..." if free is not None
          else f"   {LABEL[name]}: starting ...", file=sys.stderr)
    p = Peer(name, argv, env, args.cpu)
    if p.wait_ready(args.setup_timeout):
        problems = ready_problems(p.ready)
        if not problems:
            return p, None
        p.close()
        return None, f"its ready line does not follow the protocol: {'; '.join(problems)}"
    p.close()
    said = " | ".join(line for line in p.stderr_tail[-6:] if line.strip()) or "no output"
    if name == "ours":
        return None, f"`{' '.join(argv[1:-2])}` did not start the protocol (the subcommand may not exist yet): {said}"
    return None, f"failed to start: {said}"


def ask(peer, args):
    """One timed bootstrapping: the reply's first call as {seconds, min_bits, median_bits, levels_left}."""
    msg = peer.ask("bootstrap", 1, timeout=args.call_timeout)
    problems = reply_problems(msg, 1)
    if problems:
        raise RuntimeError(f"{peer.name}: bad answer to bootstrap: {'; '.join(problems)}")
    call = {k: msg[k][0] for k in REPLY_LISTS}
    call["max_rss_bytes"] = msg.get("max_rss_bytes")
    cpu = msg.get("cpu_seconds")
    call["cpu_seconds"] = cpu[0] if isinstance(cpu, list) and len(cpu) == 1 else None
    return call


def run_rounds(args, cmds, env, skipped):
    """The calls of every implementation: {name: [call, ...]} (interleaved, or one process at a time with
    --sequential), {name: ready line}, and the order of the rounds ({name: [round index of each call]})."""
    calls, infos = {}, {}
    groups = [[n] for n in IMPLS if n in cmds] if args.sequential else [[n for n in IMPLS if n in cmds]]
    for group in groups:
        peers = {}
        try:
            for name in group:
                p, why = start(name, cmds[name], args, env)
                if p is None:
                    skipped[name] = why
                else:
                    peers[name] = p
                    infos[name] = p.ready
                    calls[name] = []
            order = [n for n in group if n in peers]
            for r in range(args.rounds):
                turn = order[r % len(order):] + order[:r % len(order)] if order else []
                for name in turn:
                    try:
                        call = ask(peers[name], args)
                    except RuntimeError as e:  # the other side goes on; the table says why this one stopped
                        skipped[name] = f"stopped in round {r + 1}: {e}"
                        order.remove(name)
                        continue
                    calls[name].append(call)
                    print(f"   round {r + 1}/{args.rounds}: {LABEL[name]} {call['seconds']:.2f} s, "
                          f"{call['min_bits']:.1f} / {call['median_bits']:.1f} bits", file=sys.stderr)
        finally:
            for p in peers.values():
                p.close()
    return calls, infos


def summary(info, calls):
    """One implementation's figures: medians over its calls, its worst precision, what its ready line says."""
    params, keys, keygen = info.get("params") or {}, info.get("keys") or {}, info.get("keygen") or {}
    secs = [c["seconds"] for c in calls]
    cpu = [c["cpu_seconds"] for c in calls if c.get("cpu_seconds") is not None]
    rss = [c["max_rss_bytes"] for c in calls if c.get("max_rss_bytes")] + \
        ([info["max_rss_bytes"]] if info.get("max_rss_bytes") else [])
    return {
        "bootstrap_s_median": statistics.median(secs) if secs else None,
        "bootstrap_s_min": min(secs) if secs else None,
        "bootstrap_cpu_s_median": statistics.median(cpu) if cpu else None,
        "calls": len(secs),
        "min_bits": min(c["min_bits"] for c in calls) if calls else info["check"]["min_bits"],
        "median_bits": statistics.median(c["median_bits"] for c in calls) if calls else info["check"]["median_bits"],
        "levels_left": min(c["levels_left"] for c in calls) if calls else info["check"]["levels_left"],
        "check": info.get("check"),
        "keygen_s": keygen.get("keygen_s"),
        "key_bytes": keys.get("total_bytes"),
        "keys_counted": keys.get("counted"),
        "max_rss_bytes": max(rss) if rss else None,
        "log_qp": params.get("log_qp"),
        "levels_after": params.get("levels_after"),
        "bootstrap_depth": params.get("bootstrap_depth"),
        "secret": params.get("secret"),
        "security": params.get("security"),
    }


def params_warnings(setup, infos):
    """Differences from the set-up asked for, and a log QP over the 128-bit bound of the HE Standard."""
    out = []
    bound = HE_STANDARD_128.get(setup["log_n"])
    for name, info in infos.items():
        got = info.get("params") or {}
        for key in ("log_n", "slots"):
            if got.get(key) != setup[key]:
                out.append(f"{LABEL[name]}: {key} = {got.get(key)}, asked for {setup[key]}")
        log_qp = got.get("log_qp")
        if bound and isinstance(log_qp, (int, float)) and log_qp > bound:
            out.append(f"{LABEL[name]}: log QP = {log_qp:.0f} is over the 128-bit bound {bound} of the HE "
                       f"Standard for N = 2^{setup['log_n']}: not 128-bit secure")
    return out


def run_setup(args, setup):
    label = setup_label(setup)
    print(f"== {label}: {args.rounds} rounds", file=sys.stderr)
    t_start = time.time()
    head = {"setup": setup, "label": label, "openfhe_overrides": args.openfhe_overrides,
            "ours_overrides": args.ours_overrides,
            "date_utc": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
            "cpu": cpu_model(), "logical_cpus": os.cpu_count(), "threads": 1, "pinned_cpu": args.cpu,
            "rounds": args.rounds, "mode": "sequential" if args.sequential else "interleaved",
            "uptime_before": uptime(), "mem_available_gb_before": mem_available_gb()}
    env = dict(os.environ, OMP_NUM_THREADS="1", RAYON_NUM_THREADS="1")
    cmds, skipped = commands(args, setup)
    calls, infos = run_rounds(args, cmds, env, skipped)
    for name, why in skipped.items():
        print(f"   {LABEL[name]}: not available ({why})", file=sys.stderr)
    sums = {n: summary(infos[n], calls[n]) for n in infos}
    ratio = None
    if not args.sequential and calls.get("ours") and calls.get("openfhe"):
        # Round r holds the r-th call of each side (a side that stopped early pairs only its rounds).
        pairs = list(zip(calls["ours"], calls["openfhe"]))
        ratio = statistics.median(a["seconds"] / b["seconds"] for a, b in pairs)
    return {**head, "uptime_after": uptime(), "wall_seconds": round(time.time() - t_start, 1),
            "implementations": {n: {k: v for k, v in infos[n].items() if k != "ready"} for n in infos},
            "not_run": skipped, "warnings": params_warnings(setup, infos), "calls": calls, "summary": sums,
            "ratio_ours_openfhe": ratio}


def fmt(x, spec, scale=1.0, unit=""):
    return "n/a" if x is None else f"{x / scale:{spec}}{unit}"


def markdown(res):
    lines = [f"### {res['label']}", ""]
    lines.append(f"- date: {res['date_utc']}; CPU: {res['cpu']} ({res['logical_cpus']} logical CPUs)"
                 + (f", pinned to CPU {res['pinned_cpu']}" if res["pinned_cpu"] is not None else "")
                 + "; 1 thread in every implementation (OMP_NUM_THREADS=1, RAYON_NUM_THREADS=1)")
    lines.append(f"- uptime before: `{res['uptime_before']}`")
    lines.append(f"- uptime after: `{res['uptime_after']}`")
    lines.append(f"- {res['rounds']} rounds, {res['mode']}"
                 + (" (order alternating); ratio = median of the per-round ratios" if res["mode"] == "interleaved"
                    else " (one process at a time; the ratio is of medians measured at different times)"))
    for n in IMPLS:
        info = res["implementations"].get(n)
        if info:
            p = info.get("params") or {}
            extra = {k: v for k, v in p.items() if k not in ("q_bits", "p_bits")}
            lines.append(f"- {LABEL[n]}: {info.get('version')}; {json.dumps(extra)}")
            if (info.get("keys") or {}).get("counted"):
                lines.append(f"  - keys counted: {info['keys']['counted']}")
            if n in res["not_run"]:
                lines.append(f"  - incomplete: {res['not_run'][n]}")
        else:
            lines.append(f"- {LABEL[n]}: not available ({res['not_run'].get(n)})")
    if res.get("openfhe_overrides") and "openfhe" in res["implementations"]:
        lines.append(f"- OpenFHE's set-up differs from the one asked for: {json.dumps(res['openfhe_overrides'])}")
    if res.get("ours_overrides") and "ours" in res["implementations"]:
        lines.append(f"- Our set-up differs from the one asked for: {json.dumps(res['ours_overrides'])}")
    for w in res["warnings"]:
        lines.append(f"- WARNING: {w}")
    s = res["summary"]
    cols = [n for n in IMPLS if n in s]
    ratio = res["ratio_ours_openfhe"]
    if ratio is None and "ours" in s and "openfhe" in s:
        a, b = s["ours"]["bootstrap_s_median"], s["openfhe"]["bootstrap_s_median"]
        ratio = a / b if a and b else None
    both = len(cols) == 2
    lines += ["", "| | " + " | ".join(LABEL[n] for n in cols) + (" | ours / OpenFHE |" if both else " |"),
              "|---|" + "---|" * (len(cols) + both)]
    rows = [
        ("bootstrapping (s), median over calls", lambda x: fmt(x["bootstrap_s_median"], ".2f"), ratio),
        ("bootstrapping (s), fastest call", lambda x: fmt(x["bootstrap_s_min"], ".2f"), None),
        ("bootstrapping, CPU time of the process (s), median", lambda x: fmt(x["bootstrap_cpu_s_median"], ".2f"),
         None),
        ("precision, min over slots (bits; worst call)", lambda x: fmt(x["min_bits"], ".1f"), None),
        ("precision, median over slots (bits; median over calls)", lambda x: fmt(x["median_bits"], ".1f"), None),
        ("levels left after bootstrapping", lambda x: fmt(x["levels_left"], ".0f"), None),
        ("levels bootstrapping consumes", lambda x: fmt(x["bootstrap_depth"], ".0f"), None),
        ("key generation (s)", lambda x: fmt(x["keygen_s"], ".1f"), None),
        ("evaluation keys, serialized (GB)", lambda x: fmt(x["key_bytes"], ".2f", 1e9), None),
        ("peak resident memory (GB)", lambda x: fmt(x["max_rss_bytes"], ".1f", 1e9), None),
        ("log QP (bits)", lambda x: fmt(x["log_qp"], ".0f"), None),
        ("secret", lambda x: str(x["secret"]), None),
    ]
    for i, (label, cell, r) in enumerate(rows):
        # Only the time has a ratio (the first row); the other rows leave the column empty.
        lines.append(f"| {label} | " + " | ".join(cell(s[n]) for n in cols)
                     + ((f" | {fmt_ratio(r)} |" if i == 0 else " | |") if both else " |"))
    return "\n".join(lines)


def parse_args(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, help="bootstrapping calls per implementation and set-up "
                                               "(default 3; 2 with --quick)")
    ap.add_argument("--slots", help="comma-separated slot counts, one set-up each "
                                    f"(default {','.join(map(str, DEFAULT_SLOTS))}; --quick {QUICK_SLOTS[0]})")
    ap.add_argument("--log-n", type=int, help="N = 2^LOG_N (default 16; --quick 12)")
    ap.add_argument("--level-budget", help="OpenFHE's level budget CoeffsToSlots,SlotsToCoeffs (default 4,4; "
                                           "--quick 2,2)")
    ap.add_argument("--levels-after", type=int,
                    help="levels after bootstrapping (default: the most the security level allows; --quick 2)")
    ap.add_argument("--security", choices=["128", "none"], help="128-bit classical (default) or none (insecure)")
    ap.add_argument("--quick", action="store_true",
                    help="the insecure smoke set-up: N = 2^12, 2048 slots, level budget 2,2, 2 levels after, 2 rounds")
    ap.add_argument("--no-ours", action="store_true", help="run OpenFHE only")
    ap.add_argument("--no-openfhe", action="store_true", help="run ours only")
    ap.add_argument("--ours-cmd", help="command of our side instead of " + " ".join(OURS_CMD[1:])
                    + " (--params JSON is appended)")
    ap.add_argument("--openfhe-matched", action="store_true",
                    help="OpenFHE at the set-up asked for (by default, at N = 2^16, it runs the issue's reference "
                         f"set-up instead: {json.dumps(OPENFHE_REFERENCE)}). CAUTION: at 128 bits with level "
                         "budget [4, 4] OpenFHE's most levels need 27 digits, about 62 GB of keys at 2^15 slots; "
                         "add --levels-after 1 --openfhe-params '{\"dnum\": 6}' for a set-up of about 18 GB")
    ap.add_argument("--openfhe-params", help="JSON object of set-up keys for OpenFHE alone (applied last)")
    ap.add_argument("--ours-params", help="JSON object of set-up keys for our side alone (applied last), e.g. "
                    "'{\"preset\": \"Boot128N16\"}' for our 128-bit chain with bootstrapping primes")
    ap.add_argument("--no-key-sizes", action="store_true", help="do not serialize the keys to measure them")
    ap.add_argument("--sequential", action="store_true",
                    help="one process at a time (all its rounds, then the next): for less memory, not interleaved")
    ap.add_argument("--min-available-gb", type=float, default=4.0,
                    help="do not start a process when less memory than this is available (default 4)")
    ap.add_argument("--cpu", type=int, help="pin every process to this CPU (default: no pinning)")
    ap.add_argument("--setup-timeout", type=float, default=3600, help="seconds a process may take to get ready")
    ap.add_argument("--call-timeout", type=float, default=1800, help="seconds one bootstrapping may take")
    ap.add_argument("--out-dir", default=os.path.join(ROOT, "bench-results"))
    args = ap.parse_args(argv)
    if args.no_ours and args.no_openfhe:
        ap.error("--no-ours and --no-openfhe leave nothing to run")
    base = dict(QUICK if args.quick else FULL)
    for key, val in (("log_n", args.log_n), ("levels_after", args.levels_after), ("security", args.security)):
        if val is not None:
            base[key] = val
    if args.level_budget:
        base["level_budget"] = [int(x) for x in args.level_budget.split(",")]
    if args.no_key_sizes:
        base["key_sizes"] = False
    if base["security"] == "none" and base["levels_after"] is None:
        ap.error("--security none needs --levels-after")
    slots = [int(x) for x in args.slots.split(",")] if args.slots else (QUICK_SLOTS if args.quick else DEFAULT_SLOTS)
    for s in slots:
        if s < 1 or s & (s - 1) or s > 1 << (base["log_n"] - 1):
            ap.error(f"slot count {s}: a power of two <= N / 2 = {1 << (base['log_n'] - 1)}")
    if args.rounds is None:
        args.rounds = 2 if args.quick else 3
    explicit = args.security is not None or args.levels_after is not None
    args.openfhe_overrides = {} if args.quick or args.openfhe_matched or explicit or base["log_n"] != 16 \
        else dict(OPENFHE_REFERENCE)
    if args.openfhe_params:
        args.openfhe_overrides.update(json.loads(args.openfhe_params))
    args.ours_overrides = json.loads(args.ours_params) if args.ours_params else {}
    return args, [dict(base, slots=s) for s in slots]


def main(argv=None):
    args, setups = parse_args(argv)
    os.makedirs(args.out_dir, exist_ok=True)
    results = []
    for setup in setups:
        res = run_setup(args, setup)
        res["markdown"] = markdown(res)
        print(res["markdown"])
        print()
        sys.stdout.flush()
        results.append(res)
    out = os.path.join(args.out_dir, "peers-bootstrap-quick.json" if args.quick else "peers-bootstrap.json")
    with open(out, "w") as f:
        json.dump(results, f, indent=1)
    print(f"(written {os.path.relpath(out, os.getcwd())})", file=sys.stderr)
    if not any(r["summary"] for r in results):
        raise SystemExit("nothing ran")
    return results


if __name__ == "__main__":
    main()
