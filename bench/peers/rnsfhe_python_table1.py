"""Our Python API as a benchmark process of the Table 1 protocol (peerlib.py): what a user calling rnsfhe from
Python pays, to be set beside `rnsfhe bench ckks-op` (the same operations called from Rust) by
compare_python.py.

Run through the project's virtualenv (.venv/bin/python, with the extension built: `make python-ext`).
Threads: RAYON_NUM_THREADS as the driver sets it (compare_python.py --threads; 1 unless given), before rnsfhe is
imported.

Each operation is the call a user writes, on the same preset (`--preset`, a name of our CKKS presets, which
presets.json mirrors) and the same kind of inputs (N/2 reals in [-1, 1]) as the Rust side:
  keygen            ctx.keygen(rotations=[1], sum_slots=False): sk, pk, relin, one rotation key
  encode_encrypt    encryptor.encrypt(numpy array)             (public-key encryption)
  decrypt_decode    decryptor.decrypt(ct)                      (complex numpy array out)
  decrypt_decode_l0 decryptor.decrypt(ct at level 0)           (the peers' level-0 row: one prime)
  add               ev.add(x, y)
  cmult             ev.multiply(x, plaintext) with auto-rescale (the plaintext encoded once)
  mult_rs           ev.multiply(x, y) with auto-rescale        (the fused multiply, relinearize, rescale)
  rotate            ev.rotate(x, 1)
"""

import os
import sys
import warnings

os.environ.setdefault("RAYON_NUM_THREADS", "1")  # before rnsfhe (and its thread pool) is loaded

import numpy as np  # noqa: E402

import peerlib  # noqa: E402

from rnsfhe import ckks  # noqa: E402


def main():
    import argparse

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--preset", required=True, help="one of rnsfhe.ckks.presets()")
    ap.add_argument("--params", help="ignored (the preset defines the parameters); accepted for the driver")
    args = ap.parse_args()
    if args.preset not in ckks.presets():
        ap.error(f"unknown preset {args.preset!r}; known: {', '.join(ckks.presets())}")

    # The paper presets have a sparse secret (h = 64) that the HE Standard table does not cover: the same
    # opt-in as the Rust side, which builds them without the check.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ctx = ckks.Context.from_preset(args.preset, allow_insecure=True)
    keys = ctx.keygen(rotations=[1], sum_slots=False)
    enc = ctx.encryptor(keys.public)
    dec = ctx.decryptor(keys.secret)
    ev = ctx.evaluator(keys, auto_rescale=True)
    slots = ctx.slots
    x_values = np.array(peerlib.test_vector(slots, 1))
    y_values = np.array(peerlib.test_vector(slots, 2))
    c_values = np.array(peerlib.test_vector(slots, 3))
    x = enc.encrypt(x_values)
    y = enc.encrypt(y_values)
    c = ctx.encode(c_values)
    x_l0 = ev.drop_to_level(x, 1)  # levels count limbs: level 1 is q_0 alone (the peers' "level 0")

    def bits(ct, want):
        return peerlib.max_err_bits(dec.decrypt(ct, real=True)[:slots], want)

    check = {
        "encode_encrypt_bits": bits(enc.encrypt(x_values), x_values),
        "decrypt_l0_bits": bits(x_l0, x_values),
        "add_bits": bits(ev.add(x, y), x_values + y_values),
        "cmult_bits": bits(ev.multiply(x, c), x_values * c_values),
        "mult_rs_bits": bits(ev.multiply(x, y), x_values * y_values),
        "rotate_bits": bits(ev.rotate(x, 1), np.roll(x_values, -1)),
    }
    ops = {
        "keygen": peerlib.timed_with_release(lambda: ctx.keygen(rotations=[1], sum_slots=False)),
        "encode_encrypt": peerlib.timed_with_release(lambda: enc.encrypt(x_values)),
        "decrypt_decode": peerlib.timed_with_release(lambda: dec.decrypt(x)),
        "decrypt_decode_l0": peerlib.timed_with_release(lambda: dec.decrypt(x_l0)),
        "add": peerlib.timed_with_release(lambda: ev.add(x, y)),
        "cmult": peerlib.timed_with_release(lambda: ev.multiply(x, c)),
        "mult_rs": peerlib.timed_with_release(lambda: ev.multiply(x, y)),
        "rotate": peerlib.timed_with_release(lambda: ev.rotate(x, 1)),
    }
    p = ctx.params
    actual = {
        "log_n": p.get("log_n"),
        "q_bits": [m.bit_length() for m in ctx.q_moduli],
        "p_bits": [m.bit_length() for m in ctx.p_moduli],
        "dnum": p.get("dnum"),
        "log_q": round(ctx.log_q, 2),
        "log_qp": round(ctx.log_qp, 2),
        "key_switching": "hybrid (the Rust library's)",
        "security": ctx.security,
    }
    import rnsfhe

    version = f"rnsfhe {getattr(rnsfhe, '__version__', '?')} Python API (python {sys.version.split()[0]})"
    peerlib.serve("python", version, actual, ops, check)


if __name__ == "__main__":
    main()
