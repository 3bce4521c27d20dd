"""Prime search: results checked with Python's own integers (primality, congruence, size, closeness)."""

import math

import pytest

import rnsfhe
from conftest import is_prime_reference


def test_is_prime_agrees_with_trial_division_below_5000():
    for n in range(5000):
        assert rnsfhe.is_prime(n) == is_prime_reference(n), n


@pytest.mark.parametrize(
    "n, expected",
    [
        (2**61 - 1, True),  # Mersenne prime
        (2**62 - 57, True),
        (2**64 - 59, True),  # largest 64-bit prime
        (2**64 - 1, False),
        (3215031751, False),  # strong pseudoprime to bases 2, 3, 5, 7
        (3825123056546413051, False),  # strong pseudoprime to the first nine prime bases
        (1099511627791, True),
    ],
)
def test_is_prime_on_hard_cases(n, expected):
    assert rnsfhe.is_prime(n) is expected
    assert is_prime_reference(n) is expected


def test_is_prime_rejects_negative_and_huge_integers():
    with pytest.raises(ValueError, match=r"n must be an integer in \[0, 18446744073709551615\], got -7"):
        rnsfhe.is_prime(-7)
    with pytest.raises(ValueError, match=r"n must be an integer in \[0, 18446744073709551615\], got 18446744073709551616"):
        rnsfhe.is_prime(2**64)


@pytest.mark.parametrize("bits, log_two_n, count", [(30, 11, 4), (49, 14, 3), (55, 17, 8), (61, 17, 3)])
def test_ntt_primes_of_bits(bits, log_two_n, count):
    two_n = 1 << log_two_n
    primes = rnsfhe.ntt_primes_of_bits(bits, two_n, count)
    assert len(primes) == count == len(set(primes))
    assert primes == sorted(primes, reverse=True)
    for p in primes:
        assert p.bit_length() == bits
        assert p % two_n == 1
        assert is_prime_reference(p)
    # Largest first: nothing prime and = 1 mod 2N lies between the top one and 2^bits.
    assert not any(is_prime_reference(c) for c in range(primes[0] + two_n, 1 << bits, two_n))


def test_ntt_primes_of_bits_exclude():
    two_n = 1 << 12
    first = rnsfhe.ntt_primes_of_bits(40, two_n, 3)
    rest = rnsfhe.ntt_primes_of_bits(40, two_n, 3, exclude=first)
    assert not set(first) & set(rest)
    assert rnsfhe.ntt_primes_of_bits(40, two_n, 3, first[:1])[:2] == first[1:]
    assert rnsfhe.ntt_primes_of_bits(40, two_n, 1, exclude=(first[0],)) == [first[1]]


@pytest.mark.parametrize("bits, log_two_n, count", [(40, 12, 6), (55, 17, 10), (60, 16, 5)])
def test_ntt_primes_near_power_of_two(bits, log_two_n, count):
    two_n = 1 << log_two_n
    primes = rnsfhe.ntt_primes_near_power_of_two(bits, two_n, count)
    assert len(primes) == count == len(set(primes))
    target = 1 << bits
    for p in primes:
        assert p % two_n == 1
        assert is_prime_reference(p)
        assert abs(p - target) < target >> 10, "close to 2^bits"
    assert any(p > target for p in primes) and any(p < target for p in primes)
    # Every prefix product stays near 2^(bits * i): better than any single prime's distance compounding.
    worst_single = max(abs(math.log2(p) - bits) for p in primes)
    product = 1
    for i, p in enumerate(primes, start=1):
        product *= p
        drift = abs(math.log2(product) - bits * i)
        assert drift <= 2 * worst_single + 1e-12


def test_qu_xu_eta_and_primes():
    m, two_n, count = 55, 1 << 17, 8
    eta = rnsfhe.qu_xu_max_eta(m, two_n, count)
    assert eta >= 1
    primes = rnsfhe.qu_xu_primes(m, eta, two_n, count)
    assert len(primes) == count == len(set(primes))
    lower = 2**m / (1 + 2**-eta)
    upper = 2**m / (1 - 2**-eta)
    for p in primes:
        assert p % two_n == 1
        assert is_prime_reference(p)
        assert lower <= p <= upper
    # eta is maximal: one step closer to 2^m there are fewer than `count` such primes.
    with pytest.raises(ValueError):
        rnsfhe.qu_xu_primes(m, eta + 1, two_n, count)
    # exclude skips primes and takes the next ones in the interval.
    wider = rnsfhe.qu_xu_primes(m, eta - 2, two_n, count, exclude=primes[:2])
    assert not set(wider) & set(primes[:2])
    assert all(is_prime_reference(p) and p % two_n == 1 for p in wider)


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: rnsfhe.ntt_primes_of_bits(40, 1000, 1), "2N"),
        (lambda: rnsfhe.ntt_primes_of_bits(63, 1 << 12, 1), "bit size"),
        (lambda: rnsfhe.ntt_primes_of_bits(1, 1 << 12, 1), "bit size"),
        (lambda: rnsfhe.ntt_primes_of_bits(14, 1 << 12, 50), "found only"),
        (lambda: rnsfhe.ntt_primes_near_power_of_two(55, 3 << 10, 2), "2N"),
        (lambda: rnsfhe.ntt_primes_near_power_of_two(70, 1 << 12, 2), "bit size"),
        (lambda: rnsfhe.ntt_primes_near_power_of_two(20, 1 << 12, 10**6), "count"),
        (lambda: rnsfhe.qu_xu_max_eta(55, 1 << 12, 0), "number of primes"),
        (lambda: rnsfhe.qu_xu_max_eta(5, 1 << 12, 2), "bit size"),
        (lambda: rnsfhe.qu_xu_primes(55, 0, 1 << 12, 2), "eta"),
        (lambda: rnsfhe.qu_xu_primes(55, 200, 1 << 12, 2), "eta"),
        (lambda: rnsfhe.qu_xu_primes(55, 40, 1 << 17, 4), "Qu-Xu interval"),
    ],
)
def test_errors_raise_value_error_with_the_rust_message(call, message):
    with pytest.raises(ValueError, match=message):
        call()
