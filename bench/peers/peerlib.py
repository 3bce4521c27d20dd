"""Shared part of the peer benchmark processes (stdlib only): command line, presets, the line protocol.

The protocol (see README.md, "Protocol"), spoken over stdin/stdout, one JSON object per line:

  process -> driver, once, after setup:   {"ready": true, "impl": ..., "version": ..., "params": {...}, ...}
  driver -> process:                      {"op": "mult_rs", "reps": 5}
  process -> driver:                      {"op": "mult_rs", "seconds": [t1, ..., t5]}
                                     or   {"op": "mult_rs", "error": "message"}
  driver -> process:                      {"op": "quit"}
  process -> driver:                      {"op": "quit", "ok": true}        (then exits 0)

Anything else a process wants to say goes to stderr.
"""

import argparse
import json
import math
import os
import sys
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
OPS = ("keygen", "encode_encrypt", "decrypt_decode", "add", "cmult", "mult_rs", "rotate", "encrypt", "decrypt_decode_l0")


def load_presets(filename="presets.json"):
    with open(os.path.join(HERE, filename)) as f:
        return {k: v for k, v in json.load(f).items() if not k.startswith("_")}


def preset_params(ap, args, filename="presets.json"):
    """The parameters of --preset (a name in `filename`), updated by the JSON object of --params."""
    params = {}
    if args.preset:
        presets = load_presets(filename)
        if args.preset not in presets:
            ap.error(f"unknown preset {args.preset!r}; known: {', '.join(presets)}")
        params.update(presets[args.preset])
    if args.params:
        params.update(json.loads(args.params))
    return params


def parse_args(description):
    ap = argparse.ArgumentParser(description=description)
    ap.add_argument("--preset", help="a preset name of presets.json (PaperTable1L5, PaperTable1L10, PaperTable1L15)")
    ap.add_argument("--params", help='CKKS parameters as JSON: {"log_n": 15, "q_bits": [60, 55, ...], '
                                     '"p_bits": [60, 60], "scale_bits": 55, "dnum": 3}')
    ap.add_argument("--log-n", type=int)
    ap.add_argument("--q-bits", help="comma-separated bit sizes of the ciphertext primes q0, q1, ...")
    ap.add_argument("--p-bits", help="comma-separated bit sizes of the special primes")
    ap.add_argument("--scale-bits", type=int)
    ap.add_argument("--dnum", type=int)
    args = ap.parse_args()
    params = preset_params(ap, args)
    for key, val in (("log_n", args.log_n), ("scale_bits", args.scale_bits), ("dnum", args.dnum)):
        if val is not None:
            params[key] = val
    for key, val in (("q_bits", args.q_bits), ("p_bits", args.p_bits)):
        if val is not None:
            params[key] = [int(x) for x in val.split(",") if x.strip()]
    missing = [k for k in ("log_n", "q_bits", "p_bits", "scale_bits", "dnum") if k not in params]
    if missing:
        ap.error(f"parameters incomplete, missing {missing}: give --preset, --params or the separate flags")
    return params


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def send(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def argmin_inputs(values):
    """The inputs of the arg-min rows on both sides: `values` distinct reals in [-4, 4] (our comparator's
    bound), spaced 8 / values apart, the minimum not first."""
    return [4.0 - 8.0 * ((5 * i + 3) % values) / values for i in range(values)]


def test_vector(n, seed):
    """n reproducible pseudo-random reals in [-1, 1] (no numpy needed)."""
    x = seed * 2654435761 % 4294967296
    out = []
    for _ in range(n):
        x = (1103515245 * x + 12345) % 2147483648
        out.append(x / 1073741824.0 - 1.0)
    return out


def max_err_bits(got, want):
    err = max(abs(g - w) for g, w in zip(got, want))
    return -math.log2(err) if err > 0 else float("inf")


def serve(impl_name, version, actual_params, ops, check):
    """Runs the protocol loop. `ops` maps an op name to a callable that performs ONE call of the operation and
    returns the seconds it took (the callable times only the operation itself, not its own bookkeeping)."""
    send({"ready": True, "impl": impl_name, "version": version, "params": actual_params,
          "check": check, "ops": sorted(ops), "threads": 1, "pid": os.getpid()})
    answer_commands({name: (lambda fn: lambda reps: {"seconds": [fn() for _ in range(reps)]})(fn)
                     for name, fn in ops.items()})


def answer_commands(handlers):
    """The command loop after the ready line: `handlers` maps an op name to a callable that runs `reps` calls
    and returns the fields of the answer besides "op" (e.g. {"seconds": [...]}). Handles quit, blank lines,
    malformed lines, unknown ops and failures (reported; the loop keeps serving)."""
    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        try:
            cmd = json.loads(line)
        except json.JSONDecodeError as e:
            send({"error": f"bad JSON: {e}"})
            continue
        op = cmd.get("op")
        if op == "quit":
            send({"op": "quit", "ok": True})
            return
        if op not in handlers:
            send({"op": op, "error": f"unknown op {op!r}; known: {sorted(handlers)}"})
            continue
        try:
            send({"op": op, **handlers[op](int(cmd.get("reps", 1)))})
        except Exception as e:  # report, keep serving
            log(traceback.format_exc())
            send({"op": op, "error": f"{type(e).__name__}: {e}"})


def timed_with_release(fn):
    """Wraps fn() so that a call returns the wall-clock seconds of fn() including the release of its result:
    for our Python drivers beside `rnsfhe bench ckks-op` / `bfv-op`, whose Rust calls drop their result
    inside the timed call (timed() below stops the clock first, which would favour the Python side by the
    cost of freeing a ciphertext of several MB)."""
    clock = time.perf_counter

    def run():
        t0 = clock()
        fn()
        return clock() - t0

    return run


def timed(fn):
    """Wraps fn() so that a call returns the wall-clock seconds of fn(); the result of fn is dropped after the
    clock stops, so freeing it is not timed."""
    clock = time.perf_counter

    def run():
        t0 = clock()
        r = fn()
        t1 = clock()
        del r
        return t1 - t0

    return run
