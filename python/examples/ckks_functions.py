"""CKKS functions: approximate a function by a Chebyshev polynomial, evaluate it encrypted, check with numpy.

One concept: CKKS only adds and multiplies, so a function such as tanh is evaluated through a polynomial
that approximates it on an interval the data lie in. The degree sets both the accuracy and the cost:

    1. chebyshev_approx(f, interval, degree) interpolates f (any Python function) and reports
       max |f - p| on the interval, and how many levels p.depth the encrypted evaluation will use
       (ceil(log2(degree + 1)), plus one to map an interval whose width is not 2 onto [-1, 1]);
    2. ct.polyval(p) evaluates p on every slot of the ciphertext;
    3. the decrypted result differs from f by the approximation error plus the (much smaller) CKKS noise.

Run with the virtualenv of `make test` / `make demo`:  .venv/bin/python python/examples/ckks_functions.py
"""

import numpy as np

from rnsfhe import ckks


def main() -> None:
    """Approximates tanh on [-4, 4], evaluates it on 1000 encrypted values, checks the result with numpy."""
    interval = (-4.0, 4.0)

    # 1. The approximation, in plaintext: more degree, less error, more levels.
    print("degree  levels  max |tanh - p| on [-4, 4]")
    for degree in (7, 15, 31):
        p, error = ckks.chebyshev_approx(np.tanh, interval, degree)
        print(f"{degree:6d}  {p.depth:6d}  {error:.2e}")

    # Degree 31 on an interval of width 8 uses 6 levels: preset "Rec128N14" (N = 2^14, 8192 slots, scale
    # 2^40, 6 levels, 128-bit security) has exactly those.
    p, error = ckks.chebyshev_approx(np.tanh, interval, 31)
    session = ckks.Session("Rec128N14")
    x = np.linspace(-4.0, 4.0, 1000)
    ct = session.encrypt(x)

    # 2. The encrypted evaluation (ct.chebyshev(np.tanh, interval, 31) does steps 1 and 2 at once).
    out = ct.polyval(p)
    print(f"ciphertext {ct} -> {out}")

    # 3. Compare with numpy.
    got = session.decrypt(out, real=True)[: len(x)]
    vs_polynomial = np.max(np.abs(got - p(x)))
    vs_tanh = np.max(np.abs(got - np.tanh(x)))
    print(f"max |decrypted - p(x)|    = {vs_polynomial:.2e}   (CKKS noise)")
    print(f"max |decrypted - tanh(x)| = {vs_tanh:.2e}   (approximation error {error:.2e} + noise)")
    for i in (0, 250, 500, 999):
        print(f"tanh({x[i]:+.3f}): encrypted {got[i]:+.6f}   numpy {np.tanh(x[i]):+.6f}")
    if vs_tanh > error + 1e-5:
        raise SystemExit("the encrypted tanh is less precise than expected")


if __name__ == "__main__":
    main()
