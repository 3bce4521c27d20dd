"""rnsfhe.ckks polynomials, functions and statistics against numpy.

Every encrypted result is compared twice: with the exact polynomial the method evaluates (``ckks.Polynomial``,
evaluated in float64), which measures the encryption, and with the true function, which adds the
approximation error ``p.max_error(f)`` the polynomial has by construction.

Parameters: N = 2^12, scale 2^40, 9 levels (insecure, for speed and depth; the 128-bit presets give the same
precision at N = 2^13 to 2^15 with fewer levels). Thresholds (bits, -log2 |error|): a fresh encryption has a
slot error of about sigma sqrt(4N/3) sqrt(N/2) / 2^40 ~ 2^-26.6 (RNS-CKKS Lemma 1, as in test_ckks.py), 2^-24
on the worst of 2048 slots. The polynomial evaluator encodes its constants at about 2^40 and lands on the
input's scale exactly, so what remains is the input's error times |p'| (any evaluation of p on a noisy input
has it; an interval of width below 2 multiplies it by 2 / (b - a) too). The test polynomials have
coefficients decaying like 1/k^2, as smooth functions do (|p'| <= 13), and the functions have |f'| <= 1 on
their intervals: measured 23.7-27 bits. POLY = 20 bits leaves a margin of at least 3.7 bits. The Newton
iterations of sqrt and the squarings of CKKS Algorithm 2 amplify the input error by a few more bits:
NEWTON = 18.
"""

import math
import pickle
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

from rnsfhe import ckks

POLY = 20.0
NEWTON = 18.0
CKKS_ERROR = 2.0**-POLY


@pytest.fixture(scope="module")
def session():
    with pytest.warns(UserWarning, match="insecure|security|128"):
        ctx = ckks.Context(log_n=12, levels=9, q0_bits=50, special_bits=55, allow_insecure=True)
    return ckks.Session(ctx)


@pytest.fixture(scope="module")
def slots(session):
    return session.slots


def uniform(session, a, b, seed=1):
    return np.random.default_rng(seed).uniform(a, b, session.slots)


def bits(expected, got):
    return ckks.precision(expected, got).min_bits


def sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def run(session, ct, name, *args, **kwargs):
    """(decrypted result, levels consumed) of ct.name(*args, **kwargs)."""
    out = getattr(ct, name)(*args, **kwargs)
    return session.decrypt(out, real=True), ct.level - out.level


def check_function(x, got, used, p, f, domain):
    """The encrypted result `got` (`used` levels) of the polynomial `p` approximating `f` on `domain`, for the
    slots `x`: as precise as the encryption against `p`, within p's approximation error against `f`."""
    assert used == p.depth
    assert bits(p(x), got) >= POLY
    assert np.max(np.abs(got - f(x))) <= p.max_error(f, interval=domain) + CKKS_ERROR


# ------------------------------------------------------------------------------------------------------
# Polynomial evaluation
# ------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("degree", [1, 2, 3, 4, 7, 8, 15, 16, 31, 63, 127])
def test_power_basis_matches_numpy_at_depth_ceil_log2(session, degree):
    coeffs = np.random.default_rng(degree).uniform(-1, 1, degree + 1) / np.arange(1, degree + 2) ** 2
    x = uniform(session, -1, 1)
    got, used = run(session, session.encrypt(x), "polyval", coeffs)
    assert used == math.ceil(math.log2(degree + 1)) == ckks.Polynomial(coeffs).depth
    assert bits(np.polynomial.polynomial.polyval(x, coeffs), got) >= POLY


@pytest.mark.parametrize(
    "degree, interval, extra",
    [
        (7, (-1, 1), 0),
        (15, (0, 2), 0),
        (31, (-0.5, 0.5), 0),
        (15, (0, 4), 1),
        (63, (-3, 5), 1),
        (255, (-1, 1), 0),
    ],
)
def test_chebyshev_basis_matches_numpy(session, degree, interval, extra):
    # Width 2 / k maps onto [-1, 1] with an integer factor (no level); other widths use one more level.
    a, b = interval
    coeffs = np.random.default_rng(degree).uniform(-1, 1, degree + 1) / np.arange(1, degree + 2) ** 2
    x = uniform(session, a, b)
    got, used = run(session, session.encrypt(x), "polyval", coeffs, basis="chebyshev", interval=interval)
    assert used == math.ceil(math.log2(degree + 1)) + extra
    want = np.polynomial.Chebyshev(coeffs, domain=[a, b])(x)
    assert bits(want, got) >= POLY


# Every numpy.polynomial kind with a non-default domain (and window): the series evaluates its basis at the
# image of x under the linear map of the domain onto the window. Before the domain was kept, a Chebyshev
# series on [0, 16] was expanded on [-1, 1] and evaluated at x up to 16 (error 0.27), a Legendre one lost
# everything (0.91). The reference route is Rust's own Chebyshev interpolation of the series on its domain
# (ckks.Polynomial.interpolate, exact for a polynomial of that degree): the same degree, depth and scale,
# so its encrypted error is the CKKS error bound of that polynomial.
NUMPY_SERIES = [
    (np.polynomial.Chebyshev, (0, 16), None),
    (np.polynomial.Chebyshev, (0, 16), (-0.5, 0.5)),
    (np.polynomial.Chebyshev, (16, 0), None),
    (np.polynomial.Legendre, (0, 16), None),
    (np.polynomial.Legendre, (-3, 5), (-1, 0.5)),
    (np.polynomial.Hermite, (-4, 4), None),
    (np.polynomial.Hermite, (0, 16), (0, 1)),
    (np.polynomial.HermiteE, (-6, 2), None),
    (np.polynomial.Laguerre, (0, 8), (0, 2)),
    (np.polynomial.Polynomial, (0, 16), None),
    (np.polynomial.Polynomial, (-3, 5), (0, 2)),
]


@pytest.mark.parametrize("degree", [7, 31])
@pytest.mark.parametrize("kind, domain, window", NUMPY_SERIES)
def test_numpy_series_keep_domain_and_window(session, kind, domain, window, degree):
    window = kind.window if window is None else window
    # Coefficients decaying like 1/k^2 relative to the size of their basis function on the window (Hermite
    # and power bases grow fast), so that the series stays of order 1, as smooth functions do.
    t = np.linspace(*window, 1001)
    size = [np.max(np.abs(kind.basis(k, domain=window, window=window)(t))) for k in range(degree + 1)]
    coeffs = np.random.default_rng(degree).uniform(-1, 1, degree + 1) / np.arange(1, degree + 2) ** 2
    series = kind(coeffs / size, domain=list(domain), window=list(window))
    lo, hi = min(domain), max(domain)
    x = uniform(session, lo, hi)
    want = series(x)
    reference = ckks.Polynomial.interpolate(lambda t: float(series(t)), (lo, hi), degree)
    assert reference.max_error(series) < 1e-9 * max(1.0, np.max(np.abs(want)))
    ct = session.encrypt(x)
    got, used = run(session, ct, "polyval", series)
    ref, ref_used = run(session, ct, "polyval", reference)
    assert used == ref_used == reference.depth
    assert ckks.Polynomial(series).depth == reference.depth
    err, ref_err = np.max(np.abs(got - want)), np.max(np.abs(ref - want))
    assert bits(want, got) >= POLY, (err, ref_err)
    # As precise as the reference evaluation of the same polynomial (encryption noise differs by less than
    # a bit between evaluations; two bits of margin).
    assert err <= 4 * ref_err, (err, ref_err)


def test_polyval_inputs_and_entry_points(session):
    x = uniform(session, -2, 2)
    ct = session.encrypt(x)
    cheb = np.polynomial.Chebyshev([0.1, 0.5, -0.25, 0.125], domain=[-2, 2])
    legendre = np.polynomial.Legendre([0.3, -0.2, 0.7], domain=[-2, 2])
    power = np.polynomial.Polynomial([1.0, -0.5, 0.25])
    cases = [
        (ct.polyval([1, 2, 3]), 1 + 2 * x + 3 * x * x),  # integers, a list
        (ct.polyval(np.array([0.5, 0.0, 0.0, -0.125])), 0.5 - 0.125 * x**3),
        (ct.polyval(cheb), cheb(x)),  # the domain is the interval
        (ct.polyval(legendre), legendre(x)),  # converted to Chebyshev on its domain
        (ct.polyval(power), power(x)),
        (ct.polyval(ckks.Polynomial([0.1, 0.5, -0.25, 0.125], "chebyshev", (-2, 2))), cheb(x)),
        (session.context.polyval(ct, [1, 2, 3]), 1 + 2 * x + 3 * x * x),
        (session.evaluator.polyval(ct, [1, 2, 3]), 1 + 2 * x + 3 * x * x),
        (session.polyval(ct, [0.1, 0.5, -0.25, 0.125], basis="chebyshev", interval=[-2, 2]), cheb(x)),
    ]
    for out, want in cases:
        assert isinstance(out, ckks.Ciphertext)
        assert bits(want, session.decrypt(out, real=True)) >= POLY


def test_polyval_after_products_and_on_sparse_slots(session):
    x = uniform(session, -1, 1)
    ct = session.encrypt(x) * 0.5  # one level down, rescaled
    got = session.decrypt(ct.sigmoid(), real=True)
    assert bits(ckks.Polynomial.sigmoid()(x * 0.5), got) >= POLY
    short = session.encrypt(x[:16], slots=16)
    out = short.exp()
    assert out.slots == 16
    assert bits(ckks.Polynomial.exp()(x[:16]), session.decrypt(out, real=True)) >= POLY


def test_chebyshev_of_any_callable(session):
    x = uniform(session, -3, 3)
    ct = session.encrypt(x)

    def gelu(v):
        return 0.5 * v * (1.0 + math.erf(v / math.sqrt(2.0)))

    calls = []

    def logged(v):
        calls.append(v)
        return math.tanh(v)

    p = ckks.Polynomial.interpolate(gelu, (-3, 3), 31)
    check_function(x, *run(session, ct, "chebyshev", gelu, (-3, 3), 31), p, np.vectorize(gelu), (-3, 3))
    for out in [
        ct.chebyshev(logged, (-3, 3), 15),
        session.context.chebyshev(ct, np.tanh, (-3, 3), 15),  # a numpy ufunc returns numpy floats
        session.evaluator.chebyshev(ct, np.tanh, [-3, 3], 15),
        session.chebyshev(ct, np.tanh, np.array([-3.0, 3.0]), 15),
    ]:
        q = ckks.Polynomial.interpolate(np.tanh, (-3, 3), 15)
        check_function(x, session.decrypt(out, real=True), ct.level - out.level, q, np.tanh, (-3, 3))
    assert len(calls) == 16 and all(-3 < v < 3 for v in calls)  # once per Chebyshev node


# ------------------------------------------------------------------------------------------------------
# Functions
# ------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "kwargs, domain, min_bits",
    [
        ({}, (-8, 8), POLY),  # Chebyshev, degree 31 on [-8, 8]: 6 levels
        ({"degree": 15}, (-8, 8), POLY),
        ({"method": "chebyshev", "interval": (-4, 4), "degree": 63}, (-4, 4), POLY),
        ({"method": "taylor"}, (-1, 1), POLY),  # Table 2: degree 7
        ({"method": "least_squares"}, (-8, 8), POLY),  # Kim et al.: degree 3
        # Power basis on [-8, 8]: the powers up to x^7 = 2^21 amplify the noise of the terms with small
        # coefficients. The Rust test measures 25.6 and 19.3 bits at scale 2^50; at 2^40, 17 and 10-11 bits,
        # far below the approximation errors (0.047 and 0.033, under 5 bits) that dominate against the
        # sigmoid.
        ({"method": "least_squares", "degree": 5}, (-8, 8), 14.0),
        ({"method": "least_squares", "degree": 7}, (-8, 8), 8.0),
    ],
)
def test_sigmoid(session, kwargs, domain, min_bits):
    x = uniform(session, *domain)
    p = ckks.Polynomial.sigmoid(**kwargs)
    got, used = run(session, session.encrypt(x), "sigmoid", **kwargs)
    assert used == p.depth and bits(p(x), got) >= min_bits
    assert np.max(np.abs(got - sigmoid(x))) <= p.max_error(sigmoid, interval=domain) + 2.0**-min_bits
    assert p.interval in (None, domain)


def test_sigmoid_defaults_and_accuracy():
    # The documented defaults and errors.
    default = ckks.Polynomial.sigmoid()
    assert (default.degree, default.interval, default.depth) == (31, (-8.0, 8.0), 6)
    assert 2e-6 < default.max_error(sigmoid) < 4e-6
    taylor = ckks.Polynomial.sigmoid("taylor")
    np.testing.assert_allclose(taylor.coeffs, [0.5, 0.25, 0, -1 / 48, 0, 1 / 480, 0, -17 / 80640], atol=1e-15)
    assert ckks.Polynomial.sigmoid("least_squares").coeffs.tolist() == [0.5, 0.15012, 0.0, -0.001593]
    assert ckks.Polynomial.sigmoid("least_squares").max_error(sigmoid, interval=(-8, 8)) < 0.12


@pytest.mark.parametrize(
    "kwargs, domain",
    [
        ({}, (-1, 1)),  # Chebyshev, degree 7 on [-1, 1]: 3 levels, 22 bits
        ({"method": "taylor"}, (-1, 1)),  # Table 2
        ({"interval": (-4, 0), "degree": 15}, (-4, 0)),
        ({"interval": (-2, 2), "degree": 31}, (-2, 2)),
    ],
)
def test_exp(session, kwargs, domain):
    x = uniform(session, *domain)
    p = ckks.Polynomial.exp(**kwargs)
    check_function(x, *run(session, session.encrypt(x), "exp", **kwargs), p, np.exp, domain)
    assert ckks.Polynomial.exp().max_error(np.exp) < 3e-7


@pytest.mark.parametrize("iterations", [1, 3, 5])
def test_inverse_algorithm_2(session, iterations):
    x = uniform(session, 0.5, 1.5)
    got, used = run(session, session.encrypt(x), "inverse", iterations)
    assert used == iterations + 1
    assert ckks.Polynomial.inverse(iterations).degree == 2 ** (iterations + 1) - 1
    # The algorithm in float64 (the power-basis polynomial loses bits to cancellation beyond r = 3).
    a, b = 2 - x, 1 - x
    for _ in range(iterations):
        b = b * b
        a = a * (1 + b)
    assert bits(a, got) >= NEWTON
    if iterations <= 3:
        assert bits(ckks.Polynomial.inverse(iterations)(x), got) >= NEWTON
    # Relative error |1 - x|^(2^(r+1)) of the algorithm, plus the encryption's.
    assert np.all(np.abs(got * x - 1) <= 0.5 ** (2 ** (iterations + 1)) + 2.0**-NEWTON)


def test_inverse_default_and_chebyshev(session):
    x = uniform(session, 0.5, 1.5)
    ct = session.encrypt(x)
    assert ct.level - ct.inverse().level == 4  # Table 2: r = 3, degree 15
    cases = [{"interval": (0.5, 1.5), "degree": 15}, {"interval": (0.25, 2)}, {"interval": (-2, -0.25)}]
    for kwargs in cases:
        domain = kwargs["interval"]
        xs = x if domain[0] > 0 else -x
        p = ckks.Polynomial.inverse(**kwargs)
        got, used = run(session, session.encrypt(xs), "inverse", **kwargs)
        check_function(xs, got, used, p, lambda v: 1 / v, domain)
    assert ckks.Polynomial.inverse(interval=(0.25, 2)).degree == 31


@pytest.mark.parametrize("iterations", [0, 1, 2, 3])
def test_sqrt_and_inv_sqrt(session, iterations):
    x = uniform(session, 0.5, 2)
    ct = session.encrypt(x)
    # Newton from a degree-3 Chebyshev start: relative error 8.9e-3 on [0.5, 2], then about 3/2 e^2 per step.
    start_error = 9e-3
    bound = start_error
    for _ in range(iterations):
        bound = 1.5 * bound * bound * 1.01
    got, used = run(session, ct, "inv_sqrt", (0.5, 2), iterations)
    assert used == 2 + 2 * iterations
    assert np.max(np.abs(got * np.sqrt(x) - 1)) <= bound + 2.0**-NEWTON
    got, used = run(session, ct, "sqrt", (0.5, 2), iterations)
    assert used == 3 + 2 * iterations
    assert np.max(np.abs(got / np.sqrt(x) - 1)) <= bound + 2.0**-NEWTON
    if iterations >= 2:
        assert bits(np.sqrt(x), got) >= NEWTON
    ev = session.evaluator
    assert ev.sqrt(ct, (0.5, 2), iterations).level == ct.level - used
    assert ev.inv_sqrt(ct, (0.5, 2), iterations).level == ct.level - used + 1


# ------------------------------------------------------------------------------------------------------
# Statistics
# ------------------------------------------------------------------------------------------------------


def test_sum_mean_var_dot_and_weighted_sums(session, slots):
    x, y, z = (uniform(session, -1, 1, seed) for seed in (1, 2, 3))
    a, b, c = (session.encrypt(v) for v in (x, y, z))
    sum_bits = POLY - 6  # 2048 slot errors add up: sqrt(2048) = 2^5.5
    assert bits(np.full(slots, x.sum()), session.decrypt(a.sum(), real=True)) >= sum_bits
    assert bits(np.full(slots, x.mean()), session.decrypt(a.mean(), real=True)) >= POLY
    assert bits(np.full(slots, x.var()), session.decrypt(a.var(), real=True)) >= POLY
    for out in [a.dot(b), a.dot(y), session.evaluator.dot(a, b), session.evaluator.dot(a, y)]:
        assert a.level - out.level == 1
        assert bits(np.full(slots, x @ y), session.decrypt(out, real=True)) >= sum_bits
    out = a.dot(y[:10])  # shorter arrays are padded with zeros
    assert bits(np.full(slots, x[:10] @ y[:10]), session.decrypt(out, real=True)) >= sum_bits
    w = [0.5, -2.0, 0.25]
    for out in [ckks.weighted_sum([a, b, c], w), session.evaluator.weighted_sum([a, b, c], np.array(w))]:
        assert a.level - out.level == 1
        assert bits(0.5 * x - 2 * y + 0.25 * z, session.decrypt(out, real=True)) >= POLY
    low = ckks.weighted_sum([a * 2.0, b], [1.0, 1.0])  # brought to the lowest level
    assert low.level == a.level - 2
    assert bits(2 * x + y, session.decrypt(low, real=True)) >= POLY
    out = session.evaluator.add_many([a, b, c])
    assert out.level == a.level and bits(x + y + z, session.decrypt(out, real=True)) >= POLY
    assert bits(x + y + z, session.decrypt(sum([a, b, c]), real=True)) >= POLY


# ------------------------------------------------------------------------------------------------------
# Errors
# ------------------------------------------------------------------------------------------------------


def test_not_enough_levels_names_needed_and_available(session):
    ct = session.encrypt(uniform(session, -1, 1)).drop_to_level(4)  # 3 levels left
    cases = [
        (lambda: ct.sigmoid(), 6, r"sigmoid.*degree 31.*uses 6 levels.*5 for degree 31.*\[-8, 8\].*3 left"),
        (lambda: ct.polyval(np.ones(16)), 4, r"polyval.*degree 15 \(power basis\) uses 4 levels.*has 3 left"),
        (lambda: ct.polyval(np.ones(9), basis="chebyshev"), 4, r"uses 4 levels \(4 for degree 8\)"),
        (lambda: ct.chebyshev(abs, (-1, 1), 31), 5, r"chebyshev.*degree 30 .*uses 5 levels.*has 3 left"),
        (lambda: ct.exp(degree=15), 4, r"exp.*uses 4 levels"),
        (lambda: ct.inverse(), 4, r"inverse.*uses 4 levels, the ciphertext has 3 left"),
        (lambda: ct.inverse(interval=(1, 4), degree=7), 4, r"inverse.*uses 4 levels.*plus 1 to map \[1, 4\]"),
        (lambda: ct.sqrt((1, 2), 1), 5, r"sqrt with 1 Newton iterations: it uses 5 levels.*has 3 left"),
        (lambda: ct.inv_sqrt((1, 2), 1), 4, r"inv_sqrt.*uses 4 levels.*has 3 left"),
    ]
    for call, needed, message in cases:
        with pytest.raises(ckks.NotEnoughLevelsError, match=message) as info:
            call()
        assert isinstance(info.value, ValueError)
        assert (info.value.levels_needed, info.value.levels_available) == (needed, 3)
    with pytest.raises(ckks.NotEnoughLevelsError, match="rescale") as info:  # every lack of levels
        ct.drop_to_level(1).rescale()
    assert (info.value.levels_needed, info.value.levels_available) == (1, 0)
    assert ct.exp().level == 1  # degree 7: exactly the 3 levels left


def test_bad_intervals_degrees_and_coefficients(session):
    ct = session.encrypt(uniform(session, -1, 1))
    invalid_interval = r"invalid interval \[2, -2\].*a < b"
    for call in [
        lambda: ct.polyval([0, 1, 1], basis="chebyshev", interval=(2, -2)),
        lambda: ct.chebyshev(np.exp, (2, -2), 7),
        lambda: ct.sigmoid(interval=(2, -2)),
        lambda: ct.exp(interval=(2, -2)),
        lambda: ct.sqrt((2, -2)),
        lambda: ckks.Polynomial.interpolate(np.exp, (2, -2), 7),
        lambda: ckks.chebyshev_approx(np.exp, (2, -2), 7),
    ]:
        with pytest.raises(ValueError, match=invalid_interval):
            call()
    with pytest.raises(ValueError, match=r"invalid interval \[1, 1\]"):
        ct.chebyshev(np.exp, (1, 1), 7)
    with pytest.raises(ValueError, match="invalid interval"):
        ct.chebyshev(np.exp, (0, np.inf), 7)
    with pytest.raises(ValueError, match="pair"):
        ct.chebyshev(np.exp, (0, 1, 2), 7)
    with pytest.raises(TypeError, match="pair"):
        ct.chebyshev(np.exp, "ab", 7)
    with pytest.raises(ValueError, match="coefficient c_1 is not finite"):
        ct.polyval([1.0, np.nan])
    with pytest.raises(ValueError, match="coefficient c_2 is not finite"):
        ckks.Polynomial([1.0, 1.0, np.inf], basis="chebyshev")
    with pytest.raises(TypeError, match="real"):
        ct.polyval([1.0, 1j])
    for degree, message in [(0, "degree 0"), (4096, "degree 4096.*4095"), (-1, "non-negative")]:
        with pytest.raises(ValueError, match=message):
            ct.chebyshev(np.exp, (-1, 1), degree)
    with pytest.raises(ValueError, match="degree 0"):
        ct.polyval([3.0, 0.0])  # a constant
    with pytest.raises(ValueError, match="constant 2"):
        ct.chebyshev(lambda v: 2.0, (-1, 1), 5)
    with pytest.raises(ValueError, match="unknown basis"):
        ct.polyval([0, 1], basis="legendre")
    with pytest.raises(ValueError, match="chebyshev"):
        ct.polyval([0, 1], interval=(0, 1))  # a power series has no interval
    with pytest.raises(ValueError, match="own basis"):
        ct.polyval(ckks.Polynomial([0, 1]), basis="chebyshev")
    with pytest.raises(ValueError, match="unknown sigmoid method"):
        ct.sigmoid("pade")
    with pytest.raises(ValueError, match="unknown exp method"):
        ct.exp("least_squares")
    with pytest.raises(ValueError, match="applies to method=\"chebyshev\" only"):
        ct.sigmoid("taylor", interval=(-1, 1))
    with pytest.raises(ValueError, match="3, 5, 7"):
        ct.sigmoid("least_squares", degree=4)
    with pytest.raises(ValueError, match="contains 0"):
        ct.inverse(interval=(-1, 1))
    with pytest.raises(ValueError, match="iterations=3 applies to CKKS Algorithm 2"):
        ct.inverse(3, interval=(1, 2))
    with pytest.raises(ValueError, match="pass interval"):
        ct.inverse(degree=15)
    with pytest.raises(ValueError, match="at least one iteration"):
        ct.inverse(0)
    with pytest.raises(ValueError, match="x > 0"):
        ct.sqrt((0, 1))
    with pytest.raises(ValueError, match="at most 10"):
        ckks.Polynomial.inverse(11)


class Boom(Exception):
    """A user's exception, which must come out of Rust unchanged."""


def test_exceptions_of_the_function_propagate(session):
    ct = session.encrypt(uniform(session, -1, 1))

    def fails_at_half(v):
        if v > 0.5:
            raise Boom(f"no value at {v}")
        return v

    for call in [
        lambda: ct.chebyshev(fails_at_half, (-1, 1), 15),
        lambda: session.context.chebyshev(ct, fails_at_half, (-1, 1), 15),
        lambda: ckks.Polynomial.interpolate(fails_at_half, (-1, 1), 15),
        lambda: ckks.chebyshev_approx(fails_at_half, (-1, 1), 15),
        lambda: ckks.Polynomial([0, 1]).max_error(fails_at_half, interval=(-1, 1)),
    ]:
        with pytest.raises(Boom, match="no value at 0.") as info:
            call()
        assert info.traceback[-1].name == "fails_at_half"  # the user's frame, not a Rust panic
    calls = []

    def count_then_fail(v):
        calls.append(v)
        raise Boom("first call")

    with pytest.raises(Boom):
        ct.chebyshev(count_then_fail, (-1, 1), 255)
    assert len(calls) == 1  # the interpolation stops at the first exception
    with pytest.raises(TypeError, match=r"must return a real number: f\(.*\) returned str"):
        ct.chebyshev(lambda v: "x", (-1, 1), 7)
    with pytest.raises(TypeError, match="callable"):
        ct.chebyshev(3.0, (-1, 1), 7)
    with pytest.raises(ValueError, match="not finite at x = 0"):
        ct.chebyshev(lambda v: 1 / v if v else math.inf, (-1, 1), 4)
    with pytest.raises(ValueError, match="not finite"):
        with np.errstate(invalid="ignore"):
            ct.chebyshev(np.log, (-1, 1), 7)  # NaN at the negative nodes
    with pytest.raises(ZeroDivisionError):
        ct.chebyshev(lambda v: 1 / (v - v), (-1, 1), 7)


def test_other_operand_and_context_errors(session):
    ct = session.encrypt(uniform(session, -1, 1))
    with pytest.raises(TypeError, match="dot: expected a Ciphertext or a 1-D array"):
        ct.dot("abc")
    with pytest.raises(TypeError, match="dot"):
        ct.dot(2.0)
    with pytest.raises(ValueError, match="do not fit"):
        ct.dot(np.zeros(session.slots + 1))
    with pytest.raises(ValueError, match="length mismatch"):
        ckks.weighted_sum([ct, ct], [1.0])
    with pytest.raises(ValueError, match="at least one ciphertext"):
        ckks.weighted_sum([], [])
    with pytest.raises(ValueError, match="must not be empty"):
        session.evaluator.add_many([])
    with pytest.raises(ValueError, match="not finite"):
        ckks.weighted_sum([ct], [np.nan])
    other = ckks.Context.from_preset("Rec128N13")
    with pytest.raises(ValueError, match="another CKKS context"):
        other.polyval(ct, [0, 1])
    with pytest.raises(ValueError, match="another CKKS context"):
        other.chebyshev(ct, np.exp, (-1, 1), 3)


# ------------------------------------------------------------------------------------------------------
# Plaintext polynomials
# ------------------------------------------------------------------------------------------------------


def test_polynomial_objects():
    p = ckks.Polynomial([1, 2, 3])
    assert (p.basis, p.interval, p.degree, p.depth, p.multiplications) == ("power", None, 2, 2, 1)
    assert p(2) == 17.0 and isinstance(p(2.0), float)
    assert p(np.array([[0.0, 1.0], [2.0, 3.0]])).tolist() == [[1.0, 6.0], [17.0, 34.0]]
    assert p(np.float64(1.0)) == 6.0
    assert p.max_error(lambda v: 1 + 2 * v + 3 * v * v, interval=(-5, 5)) < 1e-12
    with pytest.raises(ValueError, match="pass interval"):
        p.max_error(np.exp)
    with pytest.raises(ValueError, match="samples"):
        p.max_error(np.exp, samples=1, interval=(0, 1))
    with pytest.raises(TypeError, match="real numbers"):
        p(np.array([1j]))
    c = ckks.Polynomial([0, 0, 0, 1], "chebyshev", (0, 4))  # T_3 on [0, 4]
    assert (c.basis, c.interval, c.degree, c.depth) == ("chebyshev", (0.0, 4.0), 3, 3)
    assert abs(c(4.0) - 1.0) < 1e-12 and abs(c(0.0) + 1.0) < 1e-12
    assert repr(c) == 'Polynomial(degree=3, basis="chebyshev", interval=(0.0, 4.0), depth=3)'
    for q in [p, c, ckks.Polynomial.sigmoid()]:
        r = pickle.loads(pickle.dumps(q))
        assert (r.basis, r.interval, r.degree) == (q.basis, q.interval, q.degree)
        assert r.coeffs.tolist() == q.coeffs.tolist()
    # Degree 255 in the Chebyshev basis: 8 levels, far fewer products than the degree.
    big = ckks.Polynomial(np.ones(256), "chebyshev")
    assert big.depth == 8 and big.multiplications <= 40


def test_chebyshev_approx_reports_the_error():
    errors = []
    for degree in (7, 15, 31, 63):
        p, err = ckks.chebyshev_approx(sigmoid, (-8, 8), degree)
        assert p.degree == degree and p.interval == (-8.0, 8.0)
        grid = np.linspace(-8, 8, 10_001)
        assert err == pytest.approx(np.max(np.abs(p(grid) - sigmoid(grid))), rel=1e-6)
        # numpy's interpolation at the same nodes gives the same coefficients.
        reference = np.polynomial.Chebyshev.interpolate(sigmoid, degree, domain=[-8, 8])
        np.testing.assert_allclose(p.coeffs, reference.coef, atol=1e-13)
        errors.append(err)
    assert all(later < earlier / 10 for earlier, later in zip(errors, errors[1:]))
    _, err = ckks.chebyshev_approx(np.exp, (-1, 1), 15, samples=101)
    assert err < 1e-13


def test_functions_run_in_threads(session):
    x = uniform(session, -8, 8)
    cts = [session.encrypt(x * (0.5 + 0.1 * i)) for i in range(4)]
    with ThreadPoolExecutor(max_workers=2) as pool:
        results = list(pool.map(lambda ct: session.decrypt(ct.sigmoid(degree=15), real=True), cts))
    p = ckks.Polynomial.sigmoid(degree=15)
    for i, got in enumerate(results):
        assert bits(p(x * (0.5 + 0.1 * i)), got) >= POLY


def test_new_methods_are_documented():
    for cls, names in [
        (ckks.Ciphertext, ["polyval", "chebyshev", "sigmoid", "exp", "inverse", "sqrt", "inv_sqrt", "dot"]),
        (ckks.Evaluator, ["polyval", "chebyshev", "sigmoid", "exp", "inverse", "sqrt", "inv_sqrt", "dot",
                          "add_many", "weighted_sum"]),
        (ckks.Context, ["polyval", "chebyshev"]),
        (ckks.Session, ["polyval", "chebyshev"]),
        (ckks.Polynomial, ["interpolate", "sigmoid", "exp", "inverse", "coeffs", "basis", "interval",
                           "degree", "depth", "multiplications", "max_error"]),
    ]:
        for name in names:
            assert getattr(cls, name).__doc__, f"{cls.__name__}.{name}"
    for obj in [ckks.chebyshev_approx, ckks.weighted_sum, ckks.NotEnoughLevelsError, ckks.Polynomial]:
        assert obj.__doc__
    assert issubclass(ckks.NotEnoughLevelsError, ValueError)
    assert ckks.NotEnoughLevelsError.__module__ == "rnsfhe.ckks"
