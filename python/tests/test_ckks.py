"""rnsfhe.ckks: encrypted arithmetic checked against numpy with PrecisionStats thresholds.

Thresholds (bits of precision, -log2 |error|, at scale 2^40 with N = 2^13, preset Rec128N13):
a fresh public-key encryption has coefficient noise v e + e_0 + e_1 s of standard deviation about
sigma sqrt(4N/3) ~ 2^8.4, hence a slot error of about 2^8.4 sqrt(N/2) / 2^40 ~ 2^-25.6 (RNS-CKKS Lemma 1 /
Section 5.1). The worst of 4096 slots lies about 2 bits below: FRESH = 20 bits leaves a margin of about
3.5 bits. One multiplication of values in [-1, 1] (relinearization and rescaling errors are far smaller)
keeps the same bound. A sum of all slots adds 4096 independent errors (sqrt growth: 6 bits): SUM = 16.
"""

import pickle
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

from conftest import (
    assert_doctests_pass,
    assert_secret_holders_not_picklable,
    assert_public_names_documented,
    plaintext_and_array_results,
    sums_and_differences,
)
from rnsfhe import ckks

FRESH = 20.0
PRODUCT = 20.0
SUM = 16.0


@pytest.fixture(scope="module")
def session():
    return ckks.Session("Rec128N13", rotations=[1, -1, 3, -5], conjugate=True)


@pytest.fixture(scope="module")
def ctx(session):
    return session.context


@pytest.fixture
def x(session):
    return np.random.default_rng(1).uniform(-1, 1, session.slots)


@pytest.fixture
def y(session):
    return np.random.default_rng(2).uniform(-1, 1, session.slots)


@pytest.fixture
def z(session):
    r = np.random.default_rng(3)
    return r.uniform(-1, 1, session.slots) + 1j * r.uniform(-1, 1, session.slots)


def bits(expected, got):
    return ckks.precision(expected, got).min_bits


# ------------------------------------------------------------------------------------------------------
# Context
# ------------------------------------------------------------------------------------------------------


def test_presets_and_properties():
    names = ckks.presets()
    assert "Rec128N13" in names and "PaperTable3" in names and len(names) == 16
    assert names[-6:-3] == ["FastPrime128L5", "FastPrime128L10", "FastPrime128L15"]
    assert names[-3:] == ["Boot128N16", "Boot128N16Precise", "BootTestN15"]
    ctx = ckks.Context.from_preset("rec128n13")  # case-insensitive
    assert (ctx.n, ctx.slots, ctx.levels, ctx.max_level, ctx.log_scale) == (8192, 4096, 3, 4, 40)
    assert ctx.preset == "Rec128N13"
    assert 160 < ctx.log_q < ctx.log_qp <= 218  # 45 + 3 * 40 bits, plus a 50-bit P
    assert "128-bit" in ctx.security and not ctx.is_insecure and ctx.security_warning is None
    assert len(ctx.q_moduli) == 4 and len(ctx.p_moduli) == 1
    assert abs(np.log2(ctx.level_scale(4)) - 40) < 1e-3
    assert repr(ctx).startswith('Context("Rec128N13", N=2^13')


def test_literal_parameters_defaults_are_rec128n13():
    preset = ckks.Context.from_preset("Rec128N13")
    literal = ckks.Context(log_n=13, log_scale=40, q0_bits=45, levels=3, special_primes=1, special_bits=50)
    assert literal.fingerprint == ckks.Context().fingerprint == preset.fingerprint
    assert literal.preset is None
    assert literal.params == {
        "log_n": 13,
        "log_scale": 40,
        "q0_bits": 45,
        "levels": 3,
        "special_primes": 1,
        "special_bits": 50,
        "dnum": 4,
        "secret": "ternary",
        "sigma": 3.2,
        "conversion": "fast",
        "rescaling": "exact",
        "bootstrap_primes": [],
    }
    assert ckks.Context(**literal.params).fingerprint == literal.fingerprint


@pytest.mark.parametrize("conversion", ["fast", "exact_float", "exact_integer"])
@pytest.mark.parametrize("rescaling", ["exact", "nominal"])
def test_literal_modes_multiply(conversion, rescaling):
    ctx = ckks.Context(
        log_n=13, log_scale=40, q0_bits=40, levels=2, special_primes=1, special_bits=50,
        conversion=conversion, rescaling=rescaling,
    )
    assert ctx.params["conversion"] == conversion and ctx.params["rescaling"] == rescaling
    s = ckks.Session(ctx, rotations=[1], sum_slots=False)
    a = np.linspace(-1, 1, 16)
    ct = s.encrypt(a) * s.encrypt(a[::-1])
    assert ct.level == 2
    assert bits(a * a[::-1], s.decrypt(ct, real=True)[:16]) >= PRODUCT
    assert bits(np.roll(a, -1)[:15], s.decrypt(s.encrypt(a).rotate(1), real=True)[:15]) >= FRESH


def test_context_generate_and_pickle():
    ctx = ckks.Context.generate(1)
    assert ctx.levels == 1 and not ctx.is_insecure
    clone = pickle.loads(pickle.dumps(ctx))
    assert clone.fingerprint == ctx.fingerprint and clone.params == ctx.params


def test_insecure_parameters_need_opt_in():
    with pytest.raises(ValueError, match="allow_insecure=True"):
        ckks.Context(log_n=12)
    with pytest.raises(ValueError, match="allow_insecure=True"):
        ckks.Context.from_preset("PaperTable1L5")
    with pytest.warns(UserWarning, match="not established as 128-bit secure"):
        ctx = ckks.Context(log_n=12, levels=1, secret="hamming:64", allow_insecure=True)
    assert ctx.is_insecure and ctx.params["secret"] == "hamming:64"


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"log_n": 30}, "log_n"),
        ({"q0_bits": 30}, "q0_bits"),
        ({"secret": "binary"}, "secret distribution"),
        ({"conversion": "slow"}, "conversion mode"),
        ({"rescaling": "none"}, "rescaling policy"),
    ],
)
def test_bad_parameters_raise_value_error(kwargs, message):
    with pytest.raises(ValueError, match=message):
        ckks.Context(**kwargs)
    with pytest.raises(ValueError, match="unknown CKKS preset"):
        ckks.Context.from_preset("Rec128N99")
    with pytest.raises(ValueError, match="security"):
        ckks.Context.generate(2, security=100)


# ------------------------------------------------------------------------------------------------------
# Encryption
# ------------------------------------------------------------------------------------------------------


def test_round_trip_real_and_complex(session, x, z):
    ct = session.encrypt(x)
    assert (ct.level, ct.slots) == (4, 4096) and abs(ct.log2_scale - 40) < 1e-3
    assert ct.scale == pytest.approx(2.0**ct.log2_scale, rel=1e-12)
    got = session.decrypt(ct, real=True)
    assert got.dtype == np.float64 and got.shape == (4096,)
    stats = ckks.precision(x, got)
    assert stats.real.min >= FRESH and stats.slots == 4096
    assert stats.real.min <= stats.real.median <= stats.real.max
    got = session.decrypt(session.encrypt(z))
    assert got.dtype == np.complex128
    stats = ckks.precision(z, got)
    assert stats.real.min >= FRESH and stats.imag.min >= FRESH
    assert set(stats.as_dict()) == {"real", "imag", "slots", "min_bits"}
    assert set(stats.real.as_dict()) == {"min", "mean", "median", "max"}
    assert "bits" in str(stats) and repr(stats).startswith("PrecisionStats(")


def test_short_inputs_lists_and_sparse_slots(session):
    got = session.decrypt(session.encrypt([1, 2, 3]), real=True)
    assert bits([1, 2, 3], got[:3]) >= FRESH - 2 and bits(np.zeros(4093), got[3:]) >= FRESH
    a = np.arange(8) / 8
    ct = session.encrypt(a, slots=8)
    assert ct.slots == 8
    assert bits(np.roll(a, -1), session.decrypt(ct.rotate(1), real=True)) >= FRESH
    # Steps are taken modulo the slot count: 11 = 3 (mod 8) and -7 = 1 (mod 8) use the keys of 3 and 1.
    assert bits(np.roll(a, -11), session.decrypt(ct.rotate(11), real=True)) >= FRESH
    assert bits(np.roll(a, 7), session.decrypt(ct.rotate(-7), real=True)) >= FRESH
    with pytest.raises(ValueError, match="rotation step -3"):
        ct.rotate(-3)  # = 5 (mod 8): no key for 5 or -3


def test_secret_key_encryptor_and_separate_objects(ctx, session, x):
    enc = ctx.encryptor(session.keys.secret)
    dec = ctx.decryptor(session.keys)
    assert bits(x, dec.decrypt(enc.encrypt(x), real=True)) >= FRESH
    assert "secret" in repr(enc) and "hidden" in repr(session.keys.secret)


# ------------------------------------------------------------------------------------------------------
# Arithmetic
# ------------------------------------------------------------------------------------------------------


def test_add_sub_ciphertexts_arrays_scalars(session, x, y, z):
    a, b = session.encrypt(x), session.encrypt(y)
    cases = sums_and_differences(a, b, x, y) + [
        (a + 3, x + 3),
        (3 - a, 3 - x),
        (a - 0.25, x - 0.25),
        (0.5 + a, x + 0.5),
        (-a, -x),
        (a + np.float64(2.0), x + 2),
        (a + np.int32(2), x + 2),
    ]
    for ct, want in cases:
        assert isinstance(ct, ckks.Ciphertext)
        assert ct.level == 4
        assert bits(want, session.decrypt(ct, real=True)) >= FRESH - 1
    c = session.encrypt(z)
    for ct, want in [(c + 1j, z + 1j), (c - z, np.zeros_like(z)), (z + c, 2 * z), (a + c, x + z)]:
        assert bits(want, session.decrypt(ct)) >= FRESH - 1


def test_multiply_ciphertexts_arrays_scalars(session, x, y, z):
    a, b = session.encrypt(x), session.encrypt(y)
    cases = [
        (a * b, x * y, 3),
        (a * y, x * y, 3),
        (y * a, x * y, 3),
        (a * 0.75, x * 0.75, 3),
        (0.75 * a, x * 0.75, 3),
        (a / 4, x / 4, 3),
        (a * 3, x * 3, 4),  # an int: exact, no level used
        (-2 * a, -2 * x, 4),
        (a.square(), x * x, 3),
        (session.evaluator.multiply(a, b), x * y, 3),
    ]
    for ct, want, level in cases:
        assert ct.level == level
        assert abs(ct.log2_scale - 40) < 1e-3
        assert bits(want, session.decrypt(ct, real=True)) >= PRODUCT - 2
    c = session.encrypt(z)
    for ct, want in [(c * c, z * z), (c * (1 - 2j), z * (1 - 2j)), (c * z, z * z), (c / 1j, z / 1j)]:
        assert bits(want, session.decrypt(ct)) >= PRODUCT - 2


def test_one_multiplication_is_at_least_20_bits(session, x, y):
    got = session.decrypt(session.encrypt(x) * session.encrypt(y), real=True)
    stats = ckks.precision(x * y, got)
    assert stats.real.min >= PRODUCT
    assert stats.real.mean >= PRODUCT + 3


def test_products_land_on_the_default_scales(ctx, session, x):
    """Products with numbers, arrays and ciphertexts at one level land on the next level's default scale, so
    that mixing their results needs no scale correction (which would cost a level)."""
    ct = session.encrypt(x)
    n = 1000
    for r in [ct * 0.5, ct * x, ct * ct, ct * (0.5 + 1j), ct.mean(), (ct * 0.3) * (ct * 0.2), ct.sum() / n]:
        assert r.scale == pytest.approx(ctx.level_scale(r.level), rel=2.0**-40)
    mean = ct.sum() * (1 / n)
    variance = (ct * ct).sum() * (1 / n) - mean * mean
    assert (mean.level, variance.level) == (3, 2)


def test_depth_is_used_up_then_value_error(session, x):
    ct = session.encrypt(x)
    p = ct * ct * ct * ct  # three products, three levels
    assert p.level == 1
    assert bits(x**4, session.decrypt(p, real=True)) >= PRODUCT - 2
    with pytest.raises(ValueError, match="scale too large for the modulus"):
        p * p
    with pytest.raises(ValueError, match="not enough levels for rescale"):
        p.rescale()
    assert bits(x**4 + x, session.decrypt(p + ct, real=True)) >= PRODUCT - 2  # levels aligned


def test_add_many_lands_at_the_lowest_level(session, x):
    """What ``Evaluator.add_many`` documents: the sum is at the lowest level of its inputs (no level used
    only when they share one), one level lower when inputs at one level have different scales, and two
    level-1 inputs of different scales raise the scale mismatch."""
    ev = session.evaluator
    ct = session.encrypt(x)
    square = ct * ct  # level 3
    cube = square * ct  # level 2, the default scale of level 2
    assert (ct.level, square.level, cube.level) == (4, 3, 2)
    want = x + x**2 + x**3
    for order in [(ct, square, cube), (cube, square, ct), (square, ct, cube)]:
        total = ev.add_many(list(order))
        assert total.level == 2
        assert bits(want, session.decrypt(total, real=True)) >= PRODUCT - 2
    assert ev.add_many([ct, ct, ct]).level == 4  # one level: none used
    # One level, different scales (a fresh scale dropped to level 2, and level 2's own): one level lower.
    dropped = ct.drop_to_level(2)
    assert dropped.scale != cube.scale
    total = ev.add_many([dropped, cube])
    assert total.level == 1
    assert bits(x + x**3, session.decrypt(total, real=True)) >= PRODUCT - 2
    # At level 1 neither can be rescaled onto the other's scale.
    low_a, low_b = ct.drop_to_level(1), cube.drop_to_level(1)
    assert low_a.scale != low_b.scale
    with pytest.raises(ValueError, match="scale mismatch in ciphertext addition: .*both operands are at level 1"):
        ev.add_many([low_a, low_b])
    with pytest.raises(ValueError, match="scale mismatch in ciphertext addition: .*both operands are at level 1"):
        low_a + low_b


def test_without_auto_rescale(ctx, session, x, y):
    ev = ctx.evaluator(session.keys, auto_rescale=False)
    assert not ev.auto_rescale and ev.has_relin_key
    a, b = ev.attach(session.encrypt(x)), session.encryptor.encrypt(y)
    assert a.evaluator.auto_rescale is False and b.evaluator.auto_rescale is True
    p = a * b
    assert p.level == 4 and abs(p.log2_scale - 80) < 1e-3
    assert bits(x * y, session.decrypt(p, real=True)) >= PRODUCT
    r = p.rescale()
    assert r.level == 3 and abs(r.log2_scale - 40) < 1e-3
    assert bits(x * y, session.decrypt(r, real=True)) >= PRODUCT
    q = a * 0.5
    assert q.level == 4 and bits(x * 0.5, session.decrypt(q.rescale(), real=True)) >= PRODUCT


def test_strict_evaluator_and_other_contexts(ctx, session, x):
    strict = ctx.evaluator(session.keys, strict=True)
    a = session.encrypt(x)
    with pytest.raises(ValueError, match="level mismatch"):
        strict.add(a, a * a)
    assert bits(2 * x, session.decrypt(strict.add(a, a), real=True)) >= FRESH - 1
    other = ckks.Session(ckks.Context.generate(1), sum_slots=False)
    with pytest.raises(ValueError, match="another CKKS context"):
        a + other.encrypt(x)
    with pytest.raises(ValueError, match="another CKKS context"):
        session.decrypt(other.encrypt(x))


# ------------------------------------------------------------------------------------------------------
# Rotations, conjugation, sums
# ------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("k", [1, -1, 3, -5, 2, 64, 0, 4096])
def test_rotation_matches_np_roll(session, x, k):
    got = session.decrypt(session.encrypt(x).rotate(k), real=True)
    assert bits(np.roll(x, -k), got) >= FRESH


def test_rotate_many_and_conjugate(session, x, z):
    ct = session.encrypt(x)
    for k, r in zip([1, 3, -1], session.evaluator.rotate_many(ct, [1, 3, -1])):
        assert bits(np.roll(x, -k), session.decrypt(r, real=True)) >= FRESH
    got = session.decrypt(session.encrypt(z).conjugate())
    assert bits(np.conj(z), got) >= FRESH


def test_sum_and_mean(session, x, z):
    got = session.decrypt(session.encrypt(x).sum(), real=True)
    assert bits(np.full(4096, np.sum(x)), got) >= SUM
    got = session.decrypt(session.encrypt(z).sum())
    assert bits(np.full(4096, np.sum(z)), got) >= SUM
    ct = session.encrypt(x).mean()
    assert ct.level == 3
    assert bits(np.full(4096, np.mean(x)), session.decrypt(ct, real=True)) >= FRESH
    v = np.arange(1.0, 11.0)
    got = session.decrypt(session.encrypt(v).sum() / len(v), real=True)
    assert abs(got[0] - 5.5) < 2.0**-SUM
    ct = session.encrypt(x).var()
    assert ct.level == 2
    assert bits(np.full(4096, np.var(x)), session.decrypt(ct, real=True)) >= FRESH
    low = session.encrypt(x).mean().mean()
    with pytest.raises(ValueError, match="variance"):
        low.var()


def test_missing_keys_raise_value_error_naming_the_step(ctx, session, x):
    ct = session.encrypt(x)
    with pytest.raises(ValueError, match=r"rotation step 7\b.*rotations=\[\.\.\.\]"):
        ct.rotate(7)
    plain = ckks.Session(ctx, sum_slots=False)
    with pytest.raises(ValueError, match="keygen\\(conjugate=True\\)"):
        plain.encrypt(x).conjugate()
    with pytest.raises(ValueError, match="rotation step 1"):
        plain.encrypt(x).sum()
    keyless = ctx.encryptor(session.keys.public).encrypt(x)  # attached to a keyless evaluator
    assert bits(2 * x, session.decrypt(keyless + keyless, real=True)) >= FRESH - 1
    with pytest.raises(ValueError, match="relinearization key"):
        keyless * keyless
    with pytest.raises(ValueError, match="Galois key set"):
        keyless.rotate(1)
    assert bits(np.roll(x, -1), session.decrypt(session.evaluator.rotate(keyless, 1), real=True)) >= FRESH


def test_server_side_evaluator_from_separate_keys(ctx, session, x):
    keys = session.keys
    ev = ctx.evaluator(relin_key=keys.relin, galois_keys=keys.galois)
    assert ev.rotations == keys.rotations == keys.galois.rotations and ev.conjugate_key
    assert len(keys.galois.elements) == len(keys.rotations) + 1
    ct = ev.attach(session.encrypt(x))
    assert bits(np.roll(x * x, 1), session.decrypt((ct * ct).rotate(-1), real=True)) >= PRODUCT


# ------------------------------------------------------------------------------------------------------
# Errors, pickling, threads, numpy interplay
# ------------------------------------------------------------------------------------------------------


def test_input_errors(session, x):
    ct = session.encrypt(x)
    with pytest.raises(ValueError, match="4097 values do not fit in 4096 slots"):
        session.encrypt(np.zeros(4097))
    with pytest.raises(ValueError, match="do not fit"):
        ct + np.zeros(5000)
    with pytest.raises(ValueError, match="not finite"):
        session.encrypt([1.0, np.nan])
    with pytest.raises(ValueError, match="1-D"):
        session.encrypt(np.zeros((2, 2)))
    with pytest.raises(ValueError, match="1-D"):
        ct * np.zeros((2, 2))
    with pytest.raises(TypeError):
        session.encrypt(["a", "b"])
    with pytest.raises(TypeError):
        ct + "abc"
    with pytest.raises(TypeError):
        ct / ct
    with pytest.raises(TypeError):
        session.evaluator.add(ct, object())
    with pytest.raises(ZeroDivisionError):
        ct / 0
    with pytest.raises(ValueError, match="invalid slot count"):
        session.encrypt(x[:4], slots=3)
    with pytest.raises(ValueError, match="length mismatch"):
        ckks.precision([1.0, 2.0], [1.0])
    with pytest.raises(ValueError, match="must not be empty"):
        ckks.precision([], [])


def test_pickling_secret_holders_raises_type_error(session, x):
    # Public keys and ciphertexts pickle: python/tests/test_serialization.py.
    assert_secret_holders_not_picklable(session, session.encrypt(x))


def test_numpy_arrays_on_the_left_give_ciphertexts(session, x, y):
    ct = session.encrypt(x)
    for result in [y + ct, y - ct, y * ct, np.float64(2.0) * ct]:
        assert isinstance(result, ckks.Ciphertext)


def test_operations_from_several_threads(session, x):
    inputs = [np.random.default_rng(10 + i).uniform(-1, 1, 4096) for i in range(6)]
    cts = [session.encrypt(v) for v in inputs]

    def work(ct):
        return session.decrypt((ct * ct).rotate(1) + ct, real=True)

    with ThreadPoolExecutor(max_workers=3) as pool:
        results = list(pool.map(work, cts))
    for v, got in zip(inputs, results):
        assert bits(np.roll(v * v, -1) + v, got) >= PRODUCT - 1


def test_reprs_and_docstrings(session, x):
    ct = session.encrypt(x)
    assert repr(ct) == "Ciphertext(level=4, log2_scale=40.000, slots=4096)"
    assert "rotations=[1, -1, 3, -5, 2, 4" in repr(session.keys)
    assert "auto_rescale=True" in repr(session.evaluator)
    assert_public_names_documented(ckks)


def test_module_docstring_examples():
    assert_doctests_pass(ckks)


# ------------------------------------------------------------------------------------------------------
# Plaintext
# ------------------------------------------------------------------------------------------------------


def test_plaintext_operands_equal_raw_values(session, ctx, x, y, z):
    ct = session.encrypt(x)
    pt = ctx.encode(y)
    assert (pt.level, pt.slots, pt.scale) == (ctx.max_level, ctx.slots, ctx.level_scale(ctx.max_level))
    assert "Plaintext(level=4" in repr(pt)
    assert bits(y, pt.decode(real=True)) >= 30 and bits(z, ctx.encode(z).decode()) >= 30
    ev = session.evaluator
    for got, raw in plaintext_and_array_results(ct, pt, y, ev):
        assert (got.level, got.slots) == (raw.level, raw.slots)
        assert bits(session.decrypt(raw), session.decrypt(got)) >= PRODUCT
    assert bits(x * y, session.decrypt(ct * pt, real=True)) >= PRODUCT
    assert bits(x - y, session.decrypt(ct - pt, real=True)) >= FRESH
    # One encoding, many uses; a plaintext at a lower level brings the ciphertext down to it.
    low = ctx.encode(y, level=2)
    assert (ct * low).level == 1 and bits(x * y, session.decrypt(ct * low, real=True)) >= PRODUCT
    # Sparse slots.
    sparse = session.encrypt(x[:8], slots=8)
    assert bits(x[:8] + y[:8], session.decrypt(sparse + ctx.encode(y[:8], slots=8), real=True)) >= FRESH


def test_plaintext_dot_and_wire(session, ctx, x, y):
    s = ckks.Session(ctx, sum_slots=True)
    ct = s.encrypt(x)
    got = s.decrypt(ct.dot(ctx.encode(y)), real=True)
    assert abs(got[0] - x @ y) < 1e-3
    pt = ctx.encode(y[:1024], level=3, scale=2.0**35, slots=1024)
    for back in [pickle.loads(pickle.dumps(pt)), ckks.Plaintext.from_bytes(pt.to_bytes(), ctx)]:
        assert (back.level, back.scale, back.slots) == (3, 2.0**35, 1024)
        assert np.array_equal(back.decode(), pt.decode())
    assert len(pt.to_bytes()) == pt.serialized_size()


def test_plaintext_errors(session, ctx, x, y):
    ct = session.encrypt(x)
    other = ckks.Context.from_preset("Rec128N14")
    with pytest.raises(ValueError, match="plaintext belongs to another CKKS context"):
        ct + other.encode(y)
    with pytest.raises(ValueError, match="plaintext belongs to another CKKS context"):
        ct * other.encode(y)
    with pytest.raises(ValueError, match=r"level 9 is outside \[1, 4\]"):
        ctx.encode(y, level=9)
    with pytest.raises(ValueError, match="scale NaN is invalid"):
        ctx.encode(y, scale=float("nan"))
    with pytest.raises(ValueError, match="do not fit in 8 slots"):
        ctx.encode(y[:9], slots=8)
    # A sum at level 1 with a plaintext of another scale: neither can be brought to the other's.
    last = ct.drop_to_level(1)
    with pytest.raises(ValueError, match=r"scale mismatch in ciphertext-plaintext addition.*ctx\.encode"):
        last + ctx.encode(y, level=1, scale=2.0**41)
    # A strict evaluator refuses a plaintext at another level.
    strict = ctx.evaluator(session.keys, strict=True)
    with pytest.raises(ValueError, match="level mismatch in ciphertext-plaintext addition"):
        strict.add(ct, ctx.encode(y, level=2, scale=ct.scale))
    same = ctx.encode(y, level=ct.level, scale=ct.scale)
    assert bits(x + y, session.decrypt(strict.add(ct, same), real=True)) >= FRESH
    with pytest.raises(TypeError):
        ct / ctx.encode(y)
