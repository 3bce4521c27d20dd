"""The Python front end of rnsfhe today: prime search and the negacyclic NTT, with numpy arrays.

Run with the virtualenv of `make test` / `make demo`:  .venv/bin/python python/examples/demo.py
"""

import time

import numpy as np

import rnsfhe


def main() -> None:
    """Finds a CKKS-style prime chain, multiplies two polynomials by NTT and checks the product."""
    n = 1 << 12
    chain = rnsfhe.ntt_primes_near_power_of_two(55, 2 * n, 4)
    print(f"rnsfhe {rnsfhe.__version__} from Python: N = {n}")
    print("primes near 2^55, p = 1 mod 2N:", chain)
    eta = rnsfhe.qu_xu_max_eta(55, 2 * n, 4)
    print(f"Qu-Xu: 4 primes within 2^-{eta} of 2^55:", rnsfhe.qu_xu_primes(55, eta, 2 * n, 4))

    p = chain[0]
    plan = rnsfhe.NttPlan(n, p)
    rng = np.random.default_rng(1)
    a = rng.integers(0, p, n, dtype=np.uint64)
    b = np.zeros(n, dtype=np.uint64)
    b[1] = 1  # the polynomial X: multiplying by X rotates negacyclically
    start = time.perf_counter()
    fa, fb = plan.forward(a), plan.forward(b)
    # Products of 55-bit residues overflow uint64: multiply as Python integers (object arrays).
    pointwise = fa.astype(object) * fb.astype(object) % p
    product = plan.inverse(pointwise.tolist())
    elapsed = time.perf_counter() - start
    expected = np.empty(n, dtype=np.uint64)
    expected[0] = (p - int(a[-1])) % p
    expected[1:] = a[:-1]
    ok = np.array_equal(product, expected)
    print(f"a * X mod (X^N + 1) by NTT equals the negacyclic shift of a: {ok}")
    print(f"(two forward and one inverse NTT plus the pointwise product in Python: {elapsed * 1e3:.1f} ms)")
    if not ok:
        raise SystemExit("the NTT product check failed")


if __name__ == "__main__":
    main()
