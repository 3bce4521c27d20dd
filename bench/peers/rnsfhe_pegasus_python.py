"""The Python side of compare_pegasus_python.py: the whole PEGASUS pipeline (Lu et al., IEEE S&P 2021, Fig. 6)
timed through the Python API (rnsfhe.pegasus.Session), a benchmark process of the line protocol of peerlib.py
beside the Rust example `pegasus_peer` (crates/rnsfhe/examples/pegasus_peer.rs), which times the same calls
from Rust.

Run through the repository's .venv/bin/python (made by `make python-ext`). Single-threaded: RAYON_NUM_THREADS=1
is set below before rnsfhe is imported.

Setup as the Rust side: the session of the preset (the insecure opt-in for "InsecureTest" and "Table4"), keys
from a fixed seed, one ciphertext of `slots` values spread over [-7.5, 7.5] at the pipeline's input level, the
table of tanh. Operations:
  lut      ct.lut(table)        (Rust: PegasusEvaluator::apply_table)
  lut_fn   ct.lut(np.tanh)      (Rust: PegasusEvaluator::apply with f64::tanh; here the table of the numpy
                                 ufunc is built in the call, by one vectorized call)
  to_lwe   ct.to_lwe()          (Rust: PegasusEvaluator::to_lwe; here also one Python LweCiphertext per slot)
"""

import os
import sys

os.environ["RAYON_NUM_THREADS"] = "1"  # before rnsfhe (and its thread pool) is loaded

import argparse  # noqa: E402
import warnings  # noqa: E402

import numpy as np  # noqa: E402

import peerlib  # noqa: E402

import rnsfhe  # noqa: E402
from rnsfhe import pegasus  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--preset", default="InsecureTest", help="a name of rnsfhe.pegasus.presets()")
    ap.add_argument("--slots", type=int, default=8)
    args = ap.parse_args()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # the insecure opt-in of the test preset warns
        s = pegasus.Session(args.preset, slots=args.slots, seed=7, allow_insecure=args.preset != "Secure128")
    x = np.linspace(-7.5, 7.5, args.slots)
    ct = s.encrypt(x)
    table = s.table(np.tanh)
    error = float(np.max(np.abs(s.decrypt(ct.lut(table), real=True) - np.tanh(x))))
    ops = {
        "lut": peerlib.timed(lambda: ct.lut(table)),
        "lut_fn": peerlib.timed(lambda: ct.lut(np.tanh)),
        "to_lwe": peerlib.timed(lambda: ct.to_lwe()),
    }
    params = {"preset": args.preset, "slots": args.slots, "log_n": int(s.context.n).bit_length() - 1, "input_level": s.input_level,
              "lwe_dimension": s.lwe_dimension, "function": "tanh"}
    version = (f"rnsfhe {rnsfhe.__version__} (Python API rnsfhe.pegasus.Session, python {sys.version.split()[0]}, "
               "RAYON_NUM_THREADS=1)")
    peerlib.serve("rnsfhe", version, params, ops, {"lut_max_error": error})


if __name__ == "__main__":
    main()
