"""What the tests share: pure-Python references (Python integers only, never the extension), and the checks
and fixtures every scheme module (rnsfhe.ckks, rnsfhe.bfv) and the examples go through."""

import copy
import doctest
import pathlib
import pickle

import pytest

EXAMPLES = pathlib.Path(__file__).resolve().parents[1] / "examples"


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


# ------------------------------------------------------------------------------------------------------
# Checks of the scheme modules and the examples
# ------------------------------------------------------------------------------------------------------


def assert_doctests_pass(module):
    """The examples of the docstrings of `module` exist and pass."""
    result = doctest.testmod(module, verbose=False)
    assert result.attempted > 0 and result.failed == 0


def assert_public_names_documented(module):
    """Every name of `module.__all__` has a docstring, and so has every public method or property of its
    classes."""
    for name in module.__all__:
        obj = getattr(module, name)
        assert obj.__doc__, name
        if isinstance(obj, type):
            for member, value in vars(obj).items():
                if not member.startswith("_") and callable(getattr(value, "__get__", None)):
                    assert getattr(obj, member).__doc__, f"{name}.{member}"


def assert_secret_holders_not_picklable(session, ct):
    """Pickling what holds the secret key or keys meant to be rebuilt (a session, its key set, secret key,
    encryptor, decryptor, evaluator) raises a TypeError that says what to do instead; copies of an
    immutable `ct` are `ct` itself, those of a CKKS ciphertext (which `+=` updates in place) new objects
    with the same bytes."""
    keys = session.keys
    for obj in [keys, keys.secret, session.evaluator, session.encryptor, session.decryptor, session]:
        with pytest.raises(TypeError, match="cannot be pickled: .*(secret|to_bytes)"):
            pickle.dumps(obj)
    for c in (copy.copy(ct), copy.deepcopy(ct)):
        if hasattr(ct, "__iadd__"):
            assert c is not ct and c.to_bytes() == ct.to_bytes()
        else:
            assert c is ct


def sums_and_differences(a, b, x, y):
    """(result, expected) pairs: the sums and differences of the ciphertexts `a` and `b` (of the arrays `x`
    and `y`) with each other and with `y`, the array on either side."""
    return [(a + b, x + y), (a - b, x - y), (a + y, x + y), (y + a, x + y), (a - y, x - y), (y - a, y - x)]


def plaintext_and_array_results(ct, pt, y, ev):
    """(result with the plaintext `pt`, result with the array `y` it encodes) pairs: the operators on either
    side and the evaluator methods `ev.multiply`, `ev.add`, `ev.sub`, for the ciphertext `ct`."""
    return [
        (ct * pt, ct * y),
        (pt * ct, y * ct),
        (ct + pt, ct + y),
        (pt + ct, y + ct),
        (ct - pt, ct - y),
        (pt - ct, y - ct),
        (ev.multiply(ct, pt), ev.multiply(ct, y)),
        (ev.add(ct, pt), ev.add(ct, y)),
        (ev.sub(ct, pt), ev.sub(ct, y)),
    ]


@pytest.fixture
def run_example(capsys):
    """run_example(name) runs main() of python/examples/<name>.py and returns what it printed."""

    def run(name):
        path = EXAMPLES / f"{name}.py"
        namespace = {"__name__": "example"}
        exec(compile(path.read_text(encoding="utf-8"), str(path), "exec"), namespace)
        namespace["main"]()
        return capsys.readouterr().out

    return run
