"""Shared pure-Python references for the tests: they use only Python integers, never the extension."""

import pytest


def _small_primes(limit: int) -> list:
    """The primes below `limit`, by the sieve of Eratosthenes."""
    sieve = bytearray([1]) * limit
    sieve[:2] = b"\x00\x00"
    for i in range(2, int(limit**0.5) + 1):
        if sieve[i]:
            sieve[i * i :: i] = bytearray(len(range(i * i, limit, i)))
    return [i for i in range(limit) if sieve[i]]


SMALL_PRIMES = _small_primes(10_000)


def is_prime_reference(n: int) -> bool:
    """Primality by Python integers: trial division below 10^4, then Miller-Rabin with 24 prime bases
    (deterministic far beyond 2^64)."""
    if n < 2:
        return False
    small = SMALL_PRIMES
    for p in small:
        if n % p == 0:
            return n == p
    if n < 10_000**2:
        return True
    d, s = n - 1, 0
    while d % 2 == 0:
        d, s = d // 2, s + 1
    for a in small[:24]:
        x = pow(a, d, n)
        if x in (1, n - 1):
            continue
        for _ in range(s - 1):
            x = x * x % n
            if x == n - 1:
                break
        else:
            return False
    return True


def negacyclic_product(a, b, p):
    """Schoolbook a * b mod (X^N + 1, p) with Python integers."""
    n = len(a)
    out = [0] * n
    for i, ai in enumerate(a):
        for j, bj in enumerate(b):
            k = i + j
            if k < n:
                out[k] += ai * bj
            else:
                out[k - n] -= ai * bj
    return [c % p for c in out]


def bit_reverse(j: int, bits: int) -> int:
    """The lowest `bits` bits of j in reverse order."""
    return int(format(j, f"0{bits}b")[::-1], 2) if bits else 0


@pytest.fixture
def rng():
    """A seeded random generator, so that failures reproduce."""
    import random

    return random.Random(20240601)
