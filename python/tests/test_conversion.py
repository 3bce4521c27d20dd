"""BasisConverter: the three modes of RNS basis conversion against a pure-Python CRT reference."""

import math
import random

import numpy as np
import pytest

import rnsfhe

N = 64


def crt(residues, moduli):
    """The integer x in [0, Q) with x = residues[i] mod moduli[i] (Python integers only)."""
    q = math.prod(moduli)
    x = 0
    for r, m in zip(residues, moduli):
        qhat = q // m
        x += r * qhat * pow(qhat, -1, m)
    return x % q, q


def random_input(moduli, rng):
    return np.array([[rng.randrange(m) for _ in range(N)] for m in moduli], dtype=np.uint64)


def bases(l, k):
    two_n = 2 * N
    eta = rnsfhe.qu_xu_max_eta(50, two_n, l)
    source = rnsfhe.qu_xu_primes(50, eta, two_n, l)
    target = rnsfhe.ntt_primes_of_bits(60, two_n, k, exclude=source)
    return source, target


@pytest.mark.parametrize("l, k", [(2, 1), (5, 3), (12, 4)])
def test_modes_match_crt_reference(l, k):
    rng = random.Random(l * 10 + k)
    source, target = bases(l, k)
    x = random_input(source, rng)
    values = [crt([int(x[i, c]) for i in range(l)], source) for c in range(N)]
    q = values[0][1]
    fast = rnsfhe.BasisConverter(N, source, target, "fast").convert(x)
    for mode in ("exact_float", "exact_integer"):
        conv = rnsfhe.BasisConverter(N, source, target, mode)
        assert conv.mode == mode
        out = conv.convert(x)
        assert out.shape == (k, N) and out.dtype == np.uint64
        for c, (v, _) in enumerate(values):
            centered = v - q if v > q // 2 else v
            for j, p in enumerate(target):
                assert int(out[j, c]) == centered % p, (mode, c, j)
    # Fast (centered y_i): x + alpha Q with -ceil(l/2) <= alpha < ceil(l/2).
    half = (l + 1) // 2
    for c, (v, _) in enumerate(values):
        alphas = {
            a for a in range(-half, half) if all(int(fast[j, c]) == (v + a * q) % p for j, p in enumerate(target))
        }
        assert alphas, f"coefficient {c}: fast output is not x + alpha Q for any -{half} <= alpha < {half}"


def test_unguarded_qu_xu_term_respects_theorem_1():
    rng = random.Random(5)
    l, two_n = 8, 2 * N
    source = rnsfhe.qu_xu_primes(40, 10, two_n, l)  # eta = 10: failures are frequent enough to count
    target = rnsfhe.ntt_primes_of_bits(60, two_n, 1)
    with pytest.raises(ValueError, match="ExactInteger"):
        rnsfhe.BasisConverter(N, source, target, "exact_integer")  # r = 2^-10 needs eta > 13
    big = rnsfhe.qu_xu_primes(50, rnsfhe.qu_xu_max_eta(50, two_n, l), two_n, l)
    conv = rnsfhe.BasisConverter(N, big, target, "exact_integer")
    assert conv.eta >= 14 and 0 < conv.theorem1_bound < 1e-3
    x = random_input(big, rng)
    exact = conv.error_terms(x)
    raw = conv.unguarded_error_terms(x)
    assert np.all(np.abs(exact.astype(np.int64) - raw.astype(np.int64)) <= 1)


def test_bad_arguments_raise_value_error():
    source, target = bases(3, 1)
    with pytest.raises(ValueError, match="mode"):
        rnsfhe.BasisConverter(N, source, target, "approximate")
    conv = rnsfhe.BasisConverter(N, source, target)
    with pytest.raises(ValueError, match="shape"):
        conv.convert(np.zeros((2, N), dtype=np.uint64))
    with pytest.raises(TypeError):
        conv.convert(np.zeros((3, N), dtype=np.int32))
    bad = np.zeros((3, N), dtype=np.uint64)
    bad[1, 5] = source[1]
    with pytest.raises(ValueError, match="not below its modulus"):
        conv.convert(bad)
    with pytest.raises(ValueError):
        rnsfhe.BasisConverter(100, source, target)
