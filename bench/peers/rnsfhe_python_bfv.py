"""Our BFV Python API as a benchmark process of the line protocol (peerlib.py): what a user calling rnsfhe.bfv
from Python pays, to be set beside `rnsfhe bench bfv-op` (the same operations called from Rust) by
compare_python.py (`--scheme bfv`).

Run through the project's virtualenv (.venv/bin/python, with the extension built: `make python-ext`).
Threads: RAYON_NUM_THREADS as the driver sets it (1 unless given), before rnsfhe is imported.

The parameters are `bfv.Context.generate(t, depth)`, which is `BfvParams::generate(t, depth)` of the Rust side;
the inputs are N values mod t, as there. Each operation is the call a user writes:
  encrypt      encryptor.encrypt(numpy int64 array)           (encode + public-key encryption)
  decrypt      decryptor.decrypt(ct)                          (decrypt + decode, numpy int64 out)
  add          ev.add(x, y)
  mult         ev.multiply(x, y, relinearize=False)           (HPS Section 4.5, three parts)
  relin        ev.relinearize(xy)                             (of that three-part product)
  mult_relin   ev.multiply(x, y)
"""

import os
import sys

os.environ.setdefault("RAYON_NUM_THREADS", "1")  # before rnsfhe (and its thread pool) is loaded

import numpy as np  # noqa: E402

import peerlib  # noqa: E402

from rnsfhe import bfv  # noqa: E402


def main():
    import argparse

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--depth", type=int, required=True, help="multiplicative depth of Context.generate")
    ap.add_argument("--t", type=int, default=65537, help="plaintext modulus (default 65537)")
    args = ap.parse_args()

    ctx = bfv.Context.generate(args.t, args.depth)
    keys = ctx.keygen()
    enc = ctx.encryptor(keys.public)
    dec = ctx.decryptor(keys.secret)
    ev = ctx.evaluator(keys)
    rng = np.random.default_rng(1)
    x_values = rng.integers(0, args.t, ctx.n, dtype=np.int64)
    y_values = rng.integers(0, args.t, ctx.n, dtype=np.int64)
    x = enc.encrypt(x_values)
    y = enc.encrypt(y_values)
    xy = ev.multiply(x, y, relinearize=False)

    def exact(ct, want):
        return bool(np.array_equal(dec.decrypt(ct, signed=False), np.asarray(want) % args.t))

    batch = ctx.encoding == "batch"
    check = {
        "encoding": ctx.encoding,
        "exact": exact(x, x_values) and exact(ev.add(x, y), x_values + y_values)
        and (not batch or exact(ev.multiply(x, y), x_values * y_values % args.t)),
    }
    ops = {
        "encrypt": peerlib.timed_with_release(lambda: enc.encrypt(x_values)),
        "decrypt": peerlib.timed_with_release(lambda: dec.decrypt(x)),
        "add": peerlib.timed_with_release(lambda: ev.add(x, y)),
        "mult": peerlib.timed_with_release(lambda: ev.multiply(x, y, relinearize=False)),
        "relin": peerlib.timed_with_release(lambda: ev.relinearize(xy)),
        "mult_relin": peerlib.timed_with_release(lambda: ev.multiply(x, y)),
    }
    actual = {
        "t": ctx.t,
        "depth": args.depth,
        "log_n": ctx.n.bit_length() - 1,
        "n": ctx.n,
        "q_bits": [m.bit_length() for m in ctx.q_moduli],
        "log_q": round(ctx.log_q, 2),
        "p_bits": [m.bit_length() for m in ctx.p_moduli],
        "relin_digit_bits": ctx.relin_base_log,
        "security": ctx.security,
    }
    import rnsfhe

    version = f"rnsfhe {getattr(rnsfhe, '__version__', '?')} Python API (python {sys.version.split()[0]})"
    peerlib.serve("python", version, actual, ops, check)


if __name__ == "__main__":
    main()
