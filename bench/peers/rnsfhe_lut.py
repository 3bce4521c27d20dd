"""Our side of the PEGASUS comparison through the Python API (rnsfhe.lwe.LutSession): look-up tables by blind
rotation (PEGASUS Fig. 2) and the key switch of their outputs (PEGASUS Fig. 9), a benchmark process speaking the
line protocol of peerlib.py, driven by compare_pegasus.py.

Run through the repository's .venv/bin/python (made by `make python-ext`, which installs rnsfhe into it).
Single-threaded: RAYON_NUM_THREADS=1 is set below before rnsfhe is imported.

Operations (--ops, comma-separated):
  lut:ALGORITHM:PRESET:FUNCTION   session.lut(ct, f): one LUT of an LWE ciphertext (dimension n_lwe, modulo q0) into
                                  an LWE ciphertext under the ring key (dimension n). ALGORITHM: what
                                  LutSession(algorithm=...) accepts ("ternary", "binary", ...); PRESET a name of
                                  rnsfhe.lwe.presets(); FUNCTION sigmoid or sign. The timed call includes building the
                                  table from the Python function (n calls of f, about 1 % of the time)
  ks:PRESET                       session.switch_to_lwe(ct): a LUT output (dimension n) back to the LWE key
                                  (dimension n_lwe), PEGASUS's KS(s -> s_)
  argmin:PRESET:VALUES             rnsfhe.apps.min_and_argmin(ct, session=s): the minimum AND the one-hot arg-min of
                                  a CKKS ciphertext of VALUES values, CKKS in and CKKS out (extraction, the
                                  min-tree and the predicate tables, two repackings), on a rnsfhe.pegasus.Session
                                  of PRESET ("Secure128": every key at 128 bits or more; "InsecureTest" for a
                                  smoke run) with VALUES slots: OpenFHE's EvalMinSchemeSwitching counterpart
Sessions are made once per (preset, algorithm) with allow_insecure=True: the PEGASUS Table IV sets are below 128
bits by our estimator (their switching key; the ready line gives the estimator's figures). The input of every
timed call is one ciphertext of x = 1.5 at the session's scale (q0 / 64), encrypted once at setup; the ready line
gives, per operation, the parameters and a correctness check on a grid of inputs (the largest error against the
function and PEGASUS Eq. (3)'s bound, or the count of wrong signs).
"""

import os
import sys

os.environ["RAYON_NUM_THREADS"] = "1"  # before rnsfhe (and its thread pool) is loaded

import argparse  # noqa: E402
import math  # noqa: E402
import subprocess  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402

import peerlib  # noqa: E402

import rnsfhe  # noqa: E402
import numpy as np  # noqa: E402
from rnsfhe import apps, lwe, pegasus  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(peerlib.HERE))
X_TIMED = 1.5


def sigmoid(x):
    return 1.0 / (1.0 + math.exp(-x))


def sign(x):
    return 1.0 if x >= 0 else -1.0


FUNCTIONS = {"sigmoid": sigmoid, "sign": sign}


class Sessions:
    """One LutSession per (preset, algorithm), made on first use."""

    def __init__(self):
        self.cache = {}

    def get(self, preset, algorithm):
        key = (preset, algorithm)
        if key not in self.cache:
            peerlib.log(f"rnsfhe: LutSession({preset!r}, algorithm={algorithm!r}) ...")
            t0 = time.perf_counter()
            s = lwe.LutSession(preset, algorithm=algorithm, allow_insecure=True)
            self.cache[key] = (s, round(time.perf_counter() - t0, 2))
        return self.cache[key]

    def any_of(self, preset):
        """(session, key generation seconds, algorithm): a session of the preset made earlier, whatever its
        algorithm (the switching key does not depend on it), or a new ternary one."""
        for (p, algorithm), value in self.cache.items():
            if p == preset:
                return value + (algorithm,)
        return self.get(preset, "ternary") + ("ternary",)


def session_params(session, keygen_s, algorithm):
    p = session.params
    sec = p.security()
    q0 = session.q0
    weight = p.lwe_hamming_weight
    security = (f"PEGASUS Table IV claims >= 119 bits; our estimator: switching key {sec.switching_key_bits:.1f} "
                f"bits, evaluation key {sec.evaluation_key_bits:.1f} bits (below 128: allow_insecure=True)")
    if algorithm != "ternary":
        security += f"; the estimate is for the preset's ternary LWE key, not the {algorithm} key used here"
    return {
        "preset": p.preset, "algorithm": algorithm, "n_lwe": session.lwe_dimension, "n": session.lut_dimension,
        "q0": q0, "log_q0": round(math.log2(q0), 2), "special": p.special, "log_special": round(math.log2(p.special), 2),
        "lwe_secret": ("uniform binary (algorithm 'binary')" if algorithm == "binary"
                       else f"ternary, Hamming weight {weight}" if weight else "uniform ternary"),
        "ks_base_log": p.ks_base_log, "ks_digits": p.ks_digits, "ks_sigma": p.ks_sigma, "lut_sigma": p.lut_sigma,
        "scale": session.scale,
        # The table's input grid: n points over |scale x| < q0 / 4 (PEGASUS Appendix B), step q0 / (2 n scale).
        "input_points": session.lut_dimension, "grid_step": q0 / (2 * session.lut_dimension * session.scale),
        "input_range": q0 / (4 * session.scale),
        "keygen_s": keygen_s, "security": security,
    }


def op_lut(sessions, parts):
    if len(parts) != 3:
        raise ValueError("expected lut:ALGORITHM:PRESET:FUNCTION")
    algorithm, preset, fn_name = parts
    if fn_name not in FUNCTIONS:
        raise ValueError(f"unknown function {fn_name!r}; known: {', '.join(FUNCTIONS)}")
    f = FUNCTIONS[fn_name]
    s, keygen_s = sessions.get(preset, algorithm)
    params = dict(session_params(s, keygen_s, algorithm), function=fn_name)
    if fn_name == "sigmoid":
        xs = [-8.0 + 2.0 * i for i in range(9)]
        got = s.decrypt(s.lut_many(s.encrypt(xs), f))
        err = max(abs(float(g) - f(x)) for g, x in zip(got, xs))
        bound = s.error_bound(0.25)
        check = {"inputs": len(xs), "max_error": err, "bits": -math.log2(err) if err > 0 else None,
                 "bound_eq3": bound, "within_bound": bool(err <= bound)}
    else:
        # Inputs at least 8 grid steps away from the jump at 0; an output is right when it has the right sign
        # and is within 1/2 of +-1.
        xs = [-6.5, -3.0, -1.0, -0.25, 0.25, 1.0, 3.0, 6.5]
        got = s.decrypt(s.lut_many(s.encrypt(xs), f))
        check = {"inputs": len(xs), "wrong": sum(abs(float(g) - f(x)) > 0.5 for g, x in zip(got, xs)),
                 "max_error": max(abs(float(g) - f(x)) for g, x in zip(got, xs))}
    ct = s.encrypt([X_TIMED])[0]
    return peerlib.timed(lambda: s.lut(ct, f)), params, check


def op_ks(sessions, parts):
    if len(parts) != 1:
        raise ValueError("expected ks:PRESET")
    s, keygen_s, algorithm = sessions.any_of(parts[0])
    xs = [-6.0, -1.0, 0.5, 4.0]
    outs = s.lut_many(s.encrypt(xs), sigmoid)
    switched = [s.switch_to_lwe(ct) for ct in outs]
    # The switch adds switching_key.added_variance() to the error; 6 sigma of it plus the LUT's own bound.
    bound = s.error_bound(0.25) + 6.0 * math.sqrt(s.switching_key.added_variance()) / s.scale
    err = max(abs(float(g) - sigmoid(x)) for g, x in zip(s.decrypt(switched), xs))
    params = dict(session_params(s, keygen_s, algorithm),
                  from_dimension=outs[0].dimension, to_dimension=switched[0].dimension, modulus=s.q0)
    params.pop("keygen_s")
    check = {"inputs": len(xs), "max_error": err, "bits": -math.log2(err) if err > 0 else None,
             "bound": bound, "within_bound": bool(err <= bound)}
    ct = outs[2]
    return peerlib.timed(lambda: s.switch_to_lwe(ct)), params, check


def op_argmin(sessions, parts):
    if len(parts) != 2:
        raise ValueError("expected argmin:PRESET:VALUES")
    preset, values = parts[0], int(parts[1])
    key = ("pegasus", preset, values)
    if key not in sessions.cache:
        peerlib.log(f"rnsfhe: pegasus.Session({preset!r}, slots={values}) ...")
        t0 = time.perf_counter()
        with warnings.catch_warnings():  # InsecureTest warns; it is for smoke runs only
            warnings.simplefilter("ignore", UserWarning)
            s = pegasus.Session(preset, slots=values, allow_insecure=preset != "Secure128")
        apps.comparator(s)  # its key switch back is part of the key set
        sessions.cache[key] = (s, round(time.perf_counter() - t0, 2))
    s, keygen_s = sessions.cache[key]
    cmp = apps.comparator(s)
    x = np.array(peerlib.argmin_inputs(values))
    ct = s.encrypt(x)
    m, b = apps.min_and_argmin(ct, session=s)
    got_min = float(s.decrypt(m, real=True)[0])
    onehot = np.rint(s.decrypt(b, real=True)[:values]).astype(int)
    want = (x == x.min()).astype(int)
    check = {"inputs": values, "min_error": abs(got_min - x.min()),
             "min_error_bound": cmp.min_and_argmin_error_bound(values, True),
             "argmin_wrong": int(np.sum(onehot != want)),
             "resolution": cmp.argmin_resolution(values)}
    params = {"preset": preset, "values": values, "ckks_ring_dim": s.context.n,
              "ckks_log_qp": round(s.context.log_qp, 1),
              "n_lwe": s.lwe_dimension, "n": s.lut_dimension, "keygen_s": keygen_s,
              "tables": 2 * values,
              "per": "call: the minimum and the one-hot arg-min of all values (two CKKS ciphertexts)",
              "security": ("every key at 128 bits or more (our estimator)" if preset == "Secure128"
                           else f"{preset}: NOT 128-bit (smoke run)")}
    return peerlib.timed(lambda: apps.min_and_argmin(ct, session=s)), params, check


BUILDERS = {"lut": op_lut, "ks": op_ks, "argmin": op_argmin}


def git_version():
    try:
        out = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                             timeout=10)
        return out.stdout.strip() or "unknown commit"
    except (OSError, subprocess.TimeoutExpired):
        return "unknown commit"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ops", required=True, help="comma-separated operations (see the module documentation)")
    args = ap.parse_args()
    sessions = Sessions()
    ops, params, check = {}, {}, {}
    for name in [s.strip() for s in args.ops.split(",") if s.strip()]:
        head, *parts = name.split(":")
        try:
            if head not in BUILDERS:
                raise ValueError(f"unknown operation {name!r}; known: {', '.join(BUILDERS)}")
            ops[name], params[name], check[name] = BUILDERS[head](sessions, parts)
        except ValueError as e:  # an algorithm or preset this build lacks: reported, the others still run
            peerlib.log(f"rnsfhe: {name}: {e}")
            check[name] = {"error": str(e)}
    version = (f"rnsfhe {rnsfhe.__version__} ({git_version()}; Python API rnsfhe.lwe, rnsfhe.pegasus, rnsfhe.apps; python "
               f"{sys.version.split()[0]}, RAYON_NUM_THREADS=1)")
    peerlib.serve("rnsfhe", version, params, ops, check)


if __name__ == "__main__":
    main()
