"""NttPlan: round trips, evaluations, and negacyclic products against pure-Python schoolbook."""

import pickle
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

import rnsfhe
from conftest import bit_reverse, negacyclic_product


def primes_for(n):
    """A few NTT primes for degree n: small, IFMA-sized, CKKS-sized and the largest supported size."""
    two_n = 2 * n
    return [
        rnsfhe.ntt_primes_of_bits(20, two_n, 1)[0],
        rnsfhe.ntt_primes_of_bits(49, two_n, 1)[0],
        rnsfhe.ntt_primes_near_power_of_two(55, two_n, 1)[0],
        rnsfhe.ntt_primes_of_bits(62, two_n, 1)[0],
    ]


CASES = [(n, p) for n in (16, 32, 64) for p in primes_for(n)]


@pytest.mark.parametrize("n, p", CASES)
def test_round_trip(n, p, rng):
    plan = rnsfhe.NttPlan(n, p)
    a = [rng.randrange(p) for _ in range(n)]
    f = plan.forward(a)
    assert isinstance(f, np.ndarray) and f.dtype == np.uint64 and f.shape == (n,)
    assert all(int(x) < p for x in f)
    back = plan.inverse(f)
    assert back.dtype == np.uint64
    assert [int(x) for x in back] == a


@pytest.mark.parametrize("n, p", CASES)
def test_negacyclic_product_matches_schoolbook(n, p, rng):
    plan = rnsfhe.NttPlan(n, p)
    a = [rng.randrange(p) for _ in range(n)]
    b = [rng.randrange(p) for _ in range(n)]
    fa, fb = plan.forward(a), plan.forward(b)
    pointwise = [int(x) * int(y) % p for x, y in zip(fa, fb)]
    product = plan.inverse(pointwise)
    assert [int(x) for x in product] == negacyclic_product(a, b, p)


@pytest.mark.parametrize("n, p", CASES)
def test_forward_evaluates_at_odd_powers_of_psi_in_bit_reversed_order(n, p, rng):
    plan = rnsfhe.NttPlan(n, p)
    psi = plan.psi
    assert pow(psi, n, p) == p - 1, "psi is a primitive 2n-th root of unity"
    a = [rng.randrange(p) for _ in range(n)]
    f = plan.forward(a)
    log_n = n.bit_length() - 1
    for j in range(n):
        x = pow(psi, 2 * bit_reverse(j, log_n) + 1, p)
        assert int(f[j]) == sum(c * pow(x, i, p) for i, c in enumerate(a)) % p


def test_x_times_x_to_the_n_minus_1_is_minus_one():
    n, p = 32, rnsfhe.ntt_primes_of_bits(30, 64, 1)[0]
    plan = rnsfhe.NttPlan(n, p)
    x = [0] * n
    x[1] = 1
    y = [0] * n
    y[n - 1] = 1
    prod = plan.inverse((plan.forward(x).astype(object) * plan.forward(y).astype(object) % p).tolist())
    assert prod.tolist() == [p - 1] + [0] * (n - 1)


def test_accepts_lists_tuples_and_numpy_integer_arrays():
    n = 64
    p = rnsfhe.ntt_primes_of_bits(40, 2 * n, 1)[0]
    plan = rnsfhe.NttPlan(n, p)
    a = list(range(n))
    expected = plan.forward(a)
    inputs = [
        tuple(a),
        np.arange(n, dtype=np.uint64),
        np.arange(n, dtype=np.int64),
        np.arange(n, dtype=np.uint32),
        np.arange(n, dtype=np.int16),
        np.arange(2 * n, dtype=np.uint64)[::2] // 2,  # non-contiguous
    ]
    for x in inputs:
        np.testing.assert_array_equal(plan.forward(x), expected)
    # The input is not modified.
    x = np.arange(n, dtype=np.uint64)
    plan.forward(x)
    np.testing.assert_array_equal(x, np.arange(n, dtype=np.uint64))


def test_plan_attributes_repr_and_pickle():
    n, p = 16, rnsfhe.ntt_primes_of_bits(49, 32, 1)[0]
    plan = rnsfhe.NttPlan(n, p)
    assert (plan.n, plan.p) == (n, p)
    assert isinstance(plan.uses_ifma, bool)
    assert repr(plan) == f"NttPlan(n={n}, p={p})"
    clone = pickle.loads(pickle.dumps(plan))
    assert (clone.n, clone.p, clone.psi) == (n, p, plan.psi)
    # A prime of 55 bits never takes the IFMA path (it needs p < 2^50).
    assert rnsfhe.NttPlan(n, rnsfhe.ntt_primes_near_power_of_two(55, 32, 1)[0]).uses_ifma is False


def test_transforms_from_several_threads_agree():
    n = 1 << 14
    p = rnsfhe.ntt_primes_near_power_of_two(55, 2 * n, 1)[0]
    plan = rnsfhe.NttPlan(n, p)
    inputs = [np.random.default_rng(i).integers(0, p, n, dtype=np.uint64) for i in range(8)]
    expected = [plan.forward(a) for a in inputs]
    with ThreadPoolExecutor(max_workers=4) as pool:
        got = list(pool.map(lambda a: plan.inverse(plan.forward(a)), inputs))
    for a, back in zip(inputs, got):
        np.testing.assert_array_equal(back, a)
    with ThreadPoolExecutor(max_workers=4) as pool:
        again = list(pool.map(plan.forward, inputs))
    for e, g in zip(expected, again):
        np.testing.assert_array_equal(e, g)


@pytest.mark.parametrize(
    "n, p, message",
    [
        (1000, 12289, "power of two"),
        (8, 17, "power of two"),
        (1 << 18, 12289, "power of two"),
        (1024, 12289 + 2048, "negacyclic NTT"),  # = 1 mod 2048 but composite
        (1024, 7681, "negacyclic NTT"),  # prime but not = 1 mod 2048
        (1024, (1 << 62) + 1, "not supported"),
    ],
)
def test_bad_plans_raise_value_error(n, p, message):
    with pytest.raises(ValueError, match=message):
        rnsfhe.NttPlan(n, p)


def test_bad_inputs_raise():
    n = 16
    p = rnsfhe.ntt_primes_of_bits(30, 2 * n, 1)[0]
    plan = rnsfhe.NttPlan(n, p)
    with pytest.raises(ValueError, match="length mismatch"):
        plan.forward([0] * (n - 1))
    with pytest.raises(ValueError, match="length mismatch"):
        plan.inverse(np.zeros(2 * n, dtype=np.uint64))
    with pytest.raises(ValueError, match="not reduced"):
        plan.forward([p] + [0] * (n - 1))
    with pytest.raises(ValueError, match="not reduced"):
        plan.inverse(np.full(n, 2**64 - 1, dtype=np.uint64))
    with pytest.raises(ValueError, match=r"\[0, 2\^64\)"):
        plan.forward([-1] + [0] * (n - 1))
    with pytest.raises(ValueError, match="negative"):
        plan.forward(np.array([-1] + [0] * (n - 1), dtype=np.int64))
    with pytest.raises(ValueError, match="1-D"):
        plan.forward(np.zeros((2, n // 2), dtype=np.uint64))
    with pytest.raises(ValueError, match=r"\[0, 2\^64\)"):
        plan.forward([2**64] + [0] * (n - 1))
    with pytest.raises(TypeError):
        plan.forward(np.zeros(n, dtype=np.float64))
    with pytest.raises(TypeError):
        plan.forward([0.5] * n)
    with pytest.raises(TypeError):
        plan.forward("0" * n)
