"""rnsfhe.bfv: encrypted integer arithmetic checked for exact equality with numpy modulo t.

Most tests run on small insecure parameters (N = 2^10, three 55-bit primes, t = 65537: a fresh noise
budget of about 130 bits, about 28 bits per multiplication), built once per module; the depth-3 circuits
also run on generated 128-bit parameters (t = 65537) and on the HPS Table 3 preset T2Depth5 (t = 2,
coefficient encoding, N = 2^12).
"""

import math
import pickle
import warnings
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
from rnsfhe import bfv, ckks

T = 65537


def small_context(t=T, log_n=10, q_count=3, **kwargs):
    """Small insecure parameters for fast tests (the UserWarning is expected and silenced)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return bfv.Context(log_n, t, 55, q_count, allow_insecure=True, **kwargs)


@pytest.fixture(scope="module")
def ctx():
    return small_context()


ROTATIONS = [1, -1, 3, -5]


@pytest.fixture(scope="module")
def session(ctx):
    return bfv.Session(ctx, rotations=ROTATIONS, column_swap=True)


@pytest.fixture
def x(ctx):
    return np.random.default_rng(1).integers(-(T // 2), T // 2 + 1, ctx.n)


@pytest.fixture
def y(ctx):
    return np.random.default_rng(2).integers(0, T, ctx.n)


@pytest.fixture
def z(ctx):
    return np.random.default_rng(3).integers(-(T - 1), T, ctx.n)


def r(values, t=T):
    """numpy values modulo t, centered (the form decrypt returns)."""
    return bfv.reduce(values, t)


def negacyclic(a, b, t):
    """a * b in Z_t[X]/(X^N + 1) with numpy (schoolbook convolution in int64, then X^N = -1)."""
    a, b = np.asarray(a, dtype=np.int64), np.asarray(b, dtype=np.int64)
    n = len(a)
    assert int(np.abs(a).max()) * int(np.abs(b).max()) * n < 2**62, "int64 would overflow"
    full = np.convolve(a, b)
    out = full[:n].copy()
    out[: n - 1] -= full[n:]
    return bfv.reduce(out, t)


def circuit(a, b, c, ops):
    """The depth-3 circuit of the tests, with the operations of `ops` (ciphertexts or numpy)."""
    mul, sub_scalar = ops
    u = mul(a, b) + c  # depth 1
    v = mul(u, u) - sub_scalar(a, 3)  # depth 2
    return mul(v, c - b) + sub_scalar(u, 7) + 5  # depth 3


def numpy_circuit(a, b, c, t):
    """circuit() on numpy values, reduced modulo t after each step (no int64 overflow)."""
    mul = lambda p, q: r(r(p, t) * r(q, t), t)  # noqa: E731
    scale = lambda p, k: r(r(p, t) * k, t)  # noqa: E731
    return r(circuit(a, b, c, (mul, scale)), t)


def encrypted_circuit(a, b, c):
    return circuit(a, b, c, (lambda p, q: p * q, lambda p, k: p * k))


# ------------------------------------------------------------------------------------------------------
# Context
# ------------------------------------------------------------------------------------------------------


def test_presets_and_properties():
    names = bfv.presets()
    assert names == ["T2Depth1", "T2Depth5", "T2Depth10", "T2Depth20", "T2Depth30", "T2Depth50", "T2Depth100"]
    c = bfv.Context.from_preset("t2depth1")  # case-insensitive
    assert (c.n, c.t, c.depth, c.preset, c.encoding) == (2048, 2, 1, "T2Depth1", "coeff")
    assert not c.supports_batching and not c.is_insecure and c.security_warning is None
    assert len(c.q_moduli) == 1 and 53 < c.log_q <= 54 and c.log_p >= c.log_q + 1 + 11 + 1
    assert c.relin_base_log == 30
    assert repr(c).startswith('Context("T2Depth1", N=2^11, t=2,')


def test_generate_literal_and_explicit_moduli():
    g = bfv.Context.generate(t=T, depth=2)
    assert (g.n, g.t, g.depth, g.encoding) == (4096, T, 2, "batch") and not g.is_insecure
    literal = bfv.Context(13, T, 50, 3, relin_base_log=25)
    assert literal.depth is None and literal.preset is None and literal.relin_base_log == 25
    assert len(literal.q_moduli) == 3 and all(q.bit_length() == 50 for q in literal.q_moduli)
    assert literal.params == {
        "log_n": 13,
        "t": T,
        "q_moduli": literal.q_moduli,
        "p_moduli": literal.p_moduli,
        "relin_base_log": 25,
        "sigma": bfv.HPS_SIGMA,
        "galois_base_log": None,
    }
    assert bfv.Context.from_moduli(**literal.params).fingerprint == literal.fingerprint
    assert bfv.Context.from_moduli(**g.params).fingerprint == g.fingerprint
    assert bfv.Context(13, T, 50, 3).fingerprint != literal.fingerprint  # the decomposition differs


def test_generate_chooses_key_switching():
    # Depth 20 at t = 65537: room for two special primes above log2 Q = 770 (bound 881) -> hybrid, dnum 7.
    auto = bfv.Context.generate(T, 20)
    assert (auto.key_switching, auto.dnum, len(auto.special_moduli)) == ("hybrid", 7, 2)
    assert auto.extended_public_key and not auto.is_insecure
    assert auto.log_key_modulus == pytest.approx(auto.log_q + sum(math.log2(p) for p in auto.special_moduli))
    assert auto.params["dnum"] == 7 and bfv.Context.from_moduli(**auto.params).fingerprint == auto.fingerprint
    crt = bfv.Context.generate(T, 20, key_switching="crt")
    assert (crt.key_switching, crt.dnum, crt.special_moduli) == ("crt", None, [])
    assert crt.q_moduli == auto.q_moduli and crt.fingerprint != auto.fingerprint
    assert "dnum" not in crt.params
    # Depth 5: log2 Q is at the bound; "auto" keeps CRT, "hybrid" has no room.
    assert bfv.Context.generate(T, 5).key_switching == "crt"
    with pytest.raises(ValueError, match="room"):
        bfv.Context.generate(T, 5, key_switching="hybrid")
    with pytest.raises(ValueError, match="key_switching"):
        bfv.Context.generate(T, 5, key_switching="bv")
    with pytest.raises(ValueError, match="both"):
        bfv.Context.from_moduli(**{**crt.params, "dnum": 7})
    # A hybrid session computes like a CRT one; its context and keys travel as bytes and pickles.
    s = bfv.Session(bfv.Context.generate(T, 7), rotations=[1])
    assert s.context.key_switching == "hybrid"
    clone = pickle.loads(pickle.dumps(s.context))
    assert (clone.fingerprint, clone.params) == (s.context.fingerprint, s.context.params)
    rk = s.keys.relin
    assert bfv.RelinKey.from_bytes(rk.to_bytes(), clone).to_bytes() == rk.to_bytes()
    x = np.arange(s.n, dtype=np.int64) % 1000
    y = s.decrypt(s.evaluator.rotate_rows(s.encrypt(x) * s.encrypt(x), 1))
    rows = (x * x).reshape(2, s.n // 2)
    assert np.array_equal(y, bfv.reduce(np.roll(rows, -1, axis=1).ravel(), T))


def test_context_pickles(ctx):
    for c in [bfv.Context.generate(T, 1), ctx]:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            clone = pickle.loads(pickle.dumps(c))
        assert clone.fingerprint == c.fingerprint and clone.params == c.params
        assert clone.is_insecure == c.is_insecure


def test_insecure_parameters_need_opt_in():
    with pytest.raises(ValueError, match="allow_insecure=True"):
        bfv.Context(10, T, 55, 3)
    with pytest.raises(ValueError, match="allow_insecure=True"):
        bfv.Context(12, T, 55, 2)  # log2 Q = 110 > 109
    with pytest.warns(UserWarning, match="not established as 128-bit secure"):
        c = bfv.Context(10, T, 55, 3, allow_insecure=True)
    assert c.is_insecure and "N = 1024" in c.security_warning and repr(c).endswith("INSECURE)")


@pytest.mark.parametrize(
    "args, kwargs, message",
    [
        ((30, T), {}, "log_n"),
        ((12, 1), {}, "plaintext modulus t = 1"),
        ((12, 2**61), {}, "plaintext modulus"),
        ((12, T, 10, 1), {}, "q primes"),
        ((12, T, 54, 0), {}, "q primes"),
        ((12, T, 54, 2), {"relin_base_log": 60}, "relin_base_log"),
        ((12, T, 54, 2), {"sigma": -1.0}, "sigma"),
    ],
)
def test_bad_parameters_raise_value_error(args, kwargs, message):
    with pytest.raises(ValueError, match=message):
        bfv.Context(*args, **kwargs)


def test_bad_generate_preset_and_moduli():
    with pytest.raises(ValueError, match="unknown BFV preset"):
        bfv.Context.from_preset("T2Depth7")
    with pytest.raises(ValueError, match="depth"):
        bfv.Context.generate(T, 0)
    with pytest.raises(ValueError, match="no ring degree"):
        bfv.Context.generate(T, 1000)
    good = bfv.Context(13, T, 50, 2).params
    with pytest.raises(ValueError, match="auxiliary basis P"):
        bfv.Context.from_moduli(**{**good, "p_moduli": good["p_moduli"][:1]})
    with pytest.raises(ValueError, match="coprime|below every"):
        bfv.Context.from_moduli(**{**good, "t": good["q_moduli"][0]})


# ------------------------------------------------------------------------------------------------------
# Encryption, decryption, encodings
# ------------------------------------------------------------------------------------------------------


def test_round_trip_signed_and_unsigned(session, x):
    ct = session.encrypt(x)
    assert (ct.encoding, ct.parts, ct.n, ct.t) == ("batch", 2, 1024, T)
    got = session.decrypt(ct)
    assert got.dtype == np.int64 and got.shape == (1024,)
    assert np.array_equal(got, x)
    unsigned = session.decrypt(ct, signed=False)
    assert np.array_equal(unsigned, np.mod(x, T)) and unsigned.min() >= 0 and unsigned.max() < T
    assert np.array_equal(bfv.reduce(x, T, signed=False), unsigned)
    # Short inputs, lists, bools, unsigned and narrow dtypes; missing values are zero.
    for values in [[1, -2, 3], (5,), np.array([True, False, True]), np.array([7, 8], dtype=np.uint16),
                   np.array([-3], dtype=np.int8), []]:
        want = np.zeros(1024, dtype=np.int64)
        want[: len(values)] = np.asarray(values, dtype=np.int64)
        assert np.array_equal(session.decrypt(session.encrypt(values)), want)
    # Extreme values of the range -t < v < t.
    edge = [T - 1, -(T - 1), T // 2, -(T // 2), T // 2 + 1]
    assert session.decrypt(session.encrypt(edge))[:5].tolist() == [-1, 1, T // 2, -(T // 2), -(T // 2)]


def test_secret_key_encryptor_and_separate_objects(ctx, session, x):
    keys = session.keys
    enc = ctx.encryptor(keys.secret, evaluator=session.evaluator)
    dec = ctx.decryptor(keys)
    ct = enc.encrypt(x)
    assert np.array_equal(dec.decrypt(ct), x)
    # Secret-key encryptions carry a little less noise: sigma = 3.2 per coefficient against the rounding of
    # the public-key encryption's division by the special prime, sqrt((1 + h) / 12) = 7.5 at h ~ 2N/3,
    # 1.2 bits (the key's u * e term, 5 bits here, is divided away). Measured on m = 0, where the budget
    # sees the encryption noise alone; for dense x the HPS rounding term r_t(Q) m, the same for both
    # encryptions, dominates it. Over 200 pairs at this N the gap was 0.58-1.78 bits, mean 1.24.
    zero = np.zeros_like(x)
    gap = dec.noise_budget(enc.encrypt(zero)) - session.noise_budget(session.encrypt(zero))
    assert 0.25 < gap < 2.5, gap
    assert np.array_equal(dec.decrypt(ct * ct), r(x * x))
    assert "secret" in repr(enc) and "public" in repr(ctx.encryptor(keys))
    assert "hidden" in repr(keys.secret) and "secret key" in repr(dec)
    assert keys.relin.components == 3 * 1  # three residues, one CRT digit each (relin_base_log=None)


def test_coefficient_encoding_with_batching_modulus(session, ctx):
    rng = np.random.default_rng(4)
    a, b = rng.integers(-100, 100, 1024), rng.integers(-100, 100, 1024)
    ca, cb = session.encrypt(a, encoding="coeff"), session.encrypt(b, encoding="coeff")
    assert ca.encoding == "coeff"
    assert np.array_equal(session.decrypt(ca), a)
    assert np.array_equal(session.decrypt(ca * cb), negacyclic(a, b, T))
    assert np.array_equal(session.decrypt(ca * b), negacyclic(a, b, T))
    # An integer is the constant polynomial: + k changes coefficient 0 only, * k every coefficient.
    plus = a.copy()
    plus[0] += 9
    assert np.array_equal(session.decrypt(ca + 9), r(plus))
    assert np.array_equal(session.decrypt(ca * -3), r(-3 * a))
    # The same ciphertext read as slots is the NTT of the coefficients: decrypt can override.
    assert not np.array_equal(session.decrypt(ca, encoding="batch"), a)
    assert np.array_equal(ctx.decryptor(session.keys).decrypt(ca, encoding="coeff"), a)


def test_batching_unavailable_needs_coefficient_encoding():
    c = small_context(t=257)  # 257 = 1 mod 256 but not 1 mod 2N = 2048
    assert not c.supports_batching and c.encoding == "coeff"
    s = bfv.Session(c)
    ct = s.encrypt([1, 2, 3])
    assert ct.encoding == "coeff" and s.decrypt(ct)[:3].tolist() == [1, 2, 3]
    with pytest.raises(ValueError, match=r"batching is unavailable for t = 257.*encoding=\"coeff\""):
        s.encrypt([1, 2, 3], encoding="batch")
    with pytest.raises(ValueError, match="batching is unavailable"):
        s.decrypt(ct, encoding="batch")


# ------------------------------------------------------------------------------------------------------
# Arithmetic, exact against numpy modulo t
# ------------------------------------------------------------------------------------------------------


def test_add_sub_negate_ciphertexts_arrays_integers(session, x, y, z):
    a, b = session.encrypt(x), session.encrypt(y)
    cases = sums_and_differences(a, b, x, y) + [
        (a + z, x + z),
        (a + 3, x + 3),
        (3 - a, 3 - x),
        (a - (T - 1), x + 1),
        (-a, -x),
        (a + np.int64(2), x + 2),
        (a + np.int32(-2), x - 2),
        (a + True, x + 1),
        (session.evaluator.add(a, b), x + y),
        (session.evaluator.sub(a, 5), x - 5),
        (session.evaluator.negate(b), -y),
    ]
    for ct, want in cases:
        assert isinstance(ct, bfv.Ciphertext) and ct.parts == 2
        assert np.array_equal(session.decrypt(ct), r(want))


def test_multiply_ciphertexts_arrays_integers(session, x, y, z):
    a, b = session.encrypt(x), session.encrypt(y)
    cases = [
        (a * b, r(x * y)),
        (a * y, r(x * y)),
        (y * a, r(x * y)),
        (a * z, r(x * z)),
        (a * 3, r(3 * x)),
        (-2 * a, r(-2 * x)),
        (a * (T - 1), r(-x)),
        (a.square(), r(x * x)),
        (session.evaluator.multiply(a, b), r(x * y)),
        (session.evaluator.square(b), r(y * y)),
        (session.evaluator.multiply(a, 7), r(7 * x)),
    ]
    for ct, want in cases:
        assert ct.parts == 2
        assert np.array_equal(session.decrypt(ct), want)


def test_multiply_without_relinearization(session, x, y):
    a, b = session.encrypt(x), session.encrypt(y)
    ev = session.evaluator
    p = ev.multiply(a, b, relinearize=False)
    assert p.parts == 3
    assert np.array_equal(session.decrypt(p), r(x * y))  # decryption accepts three parts
    assert np.array_equal(session.decrypt(p + a), r(x * y + x))
    q = ev.relinearize(p)
    assert q.parts == 2 and np.array_equal(session.decrypt(q), r(x * y))
    with pytest.raises(ValueError, match="needs a ciphertext with 2 parts, got 3"):
        p * a
    with pytest.raises(ValueError, match="relinearization needs a ciphertext with 3 parts, got 2"):
        ev.relinearize(q)


def test_depth_3_circuit_small_parameters(session, x, y, z):
    a, b, c = session.encrypt(x), session.encrypt(y), session.encrypt(z)
    got = session.decrypt(encrypted_circuit(a, b, c))
    assert np.array_equal(got, numpy_circuit(x, y, z, T))
    # Mixed with plaintext operands: the noise of a product by an arbitrary array mod t is about N t / 2.
    w = np.random.default_rng(5).integers(0, T, 1024)
    got = session.decrypt(encrypted_circuit(a, w, c) * w - z)
    want = r(r(numpy_circuit(x, w, z, T) * w) - z)
    assert np.array_equal(got, want)


def test_depth_3_circuit_generated_128_bit_batch():
    s = bfv.Session(bfv.Context.generate(T, 3))
    assert s.context.encoding == "batch" and not s.context.is_insecure
    rng = np.random.default_rng(6)
    x, y, z = (rng.integers(0, T, s.n) for _ in range(3))
    ct = encrypted_circuit(s.encrypt(x), s.encrypt(y), s.encrypt(z))
    assert np.array_equal(s.decrypt(ct), numpy_circuit(x, y, z, T))
    assert np.array_equal(s.decrypt(ct, signed=False), np.mod(numpy_circuit(x, y, z, T), T))
    assert s.noise_budget(ct) > 0


def test_depth_3_circuit_t2_coefficient_encoding_preset():
    s = bfv.Session("T2Depth5")
    assert (s.t, s.n, s.context.encoding) == (2, 4096, "coeff")
    rng = np.random.default_rng(7)
    x, y, z = (rng.integers(0, 2, s.n) for _ in range(3))
    a, b, c = s.encrypt(x), s.encrypt(y), s.encrypt(z)
    # Products of polynomials mod (2, X^N + 1); "+ 1" flips coefficient 0, "- 1" is "+ 1" mod 2.
    u = negacyclic(x, y, 2) ^ z
    v = negacyclic(u, u, 2) ^ x
    want = negacyclic(v, z ^ y, 2)
    want[0] ^= 1
    got = s.decrypt(((a * b + c) * (a * b + c) - a) * (c - b) + 1)
    assert got.min() >= 0 and got.max() <= 1  # centered (-1, 1] = {0, 1} for t = 2
    assert np.array_equal(got, want)
    assert np.array_equal(s.decrypt(-a), x)  # -1 = 1 mod 2
    assert np.array_equal(s.decrypt(a * -1, signed=False), x)


def test_noise_budget_is_a_decreasing_diagnostic(session, x):
    ct = session.encrypt(x)
    fresh = session.noise_budget(ct)
    assert 100 < fresh < 165
    assert session.noise_budget(ct + ct) <= fresh + 1
    budgets, want = [fresh], r(x)
    while budgets[-1] >= 1 and len(budgets) < 10:
        assert np.array_equal(session.decrypt(ct), want)  # exact while budget is left
        ct, want = ct * ct, r(want * want)
        budgets.append(session.noise_budget(ct))
    assert all(b1 < b0 - 20 for b0, b1 in zip(budgets, budgets[1:-1]))  # about 25 bits per product
    assert 4 <= len(budgets) - 1 <= 6
    # Exhausted: the noise fills the modulus (the measured budget is then a fraction of a bit, not a
    # bound) and decryption returns garbage.
    assert budgets[-1] < 1 and not np.array_equal(session.decrypt(ct), want)
    doc = bfv.Decryptor.noise_budget.__doc__
    assert "diagnostic" in doc and "secret key" in doc


# ------------------------------------------------------------------------------------------------------
# Rotations of the 2 x N/2 slot matrix
# ------------------------------------------------------------------------------------------------------


def roll_rows(v, k):
    """Both rows of the 2 x N/2 slot matrix rotated left by k."""
    return np.roll(np.asarray(v).reshape(2, -1), -k, axis=1).ravel()


def swap_rows(v):
    return np.asarray(v).reshape(2, -1)[::-1].ravel()


@pytest.mark.parametrize("k", [1, -1, 3, -5, 0, 512, 513, -511, -1024])
def test_rotate_rows_matches_np_roll_of_each_row(session, x, k):
    # Steps are taken modulo N/2 = 512: 513 and -511 use the key of 1; 0, 512 and -1024 need no key.
    got = session.decrypt(session.encrypt(x).rotate_rows(k))
    assert np.array_equal(got, roll_rows(x, k))


def test_rotate_columns_and_compositions(session, x, y):
    a, b = session.encrypt(x), session.encrypt(y)
    assert np.array_equal(session.decrypt(a.rotate_columns()), swap_rows(x))
    assert np.array_equal(session.decrypt(a.rotate_columns().rotate_columns()), x)
    got = session.decrypt((a * b).rotate_rows(3).rotate_columns() - y)
    assert np.array_equal(got, r(swap_rows(roll_rows(r(x * y), 3)) - y))
    ev = session.evaluator
    assert np.array_equal(session.decrypt(ev.rotate_rows(a, -5)), roll_rows(x, -5))
    assert np.array_equal(session.decrypt(ev.rotate_columns(b)), r(swap_rows(y)))
    assert ev.rotations == ROTATIONS and ev.column_swap


@pytest.mark.parametrize("depth", [2, 3, 4])
def test_generated_parameters_leave_room_for_a_rotation_per_level(depth):
    # Context.generate(t, depth) budgets one rotation of each ciphertext after encryption and after each
    # multiplication; a rotation of a fresh ciphertext used to cost as much as a multiplication, and
    # rotate_rows(1).square().square() at depth 2 decrypted wrongly.
    s = bfv.Session(bfv.Context.generate(T, depth), rotations=[1], column_swap=True)
    x = np.random.default_rng(depth).integers(0, T, s.n)
    ct, want = s.encrypt(x).rotate_rows(1), roll_rows(x, 1)
    for level in range(depth):
        ct, want = ct.square(), r(want * want)
        assert np.array_equal(s.decrypt(ct), want), f"level {level + 1}"
        if level % 2 == 0:
            ct, want = ct.rotate_columns(), swap_rows(want)
        else:
            ct, want = ct.rotate_rows(1), roll_rows(want, 1)
    assert np.array_equal(s.decrypt(ct), want)
    assert s.noise_budget(ct) > 0
    if depth == 2:  # the reported circuit, exactly
        y = s.encrypt(x).rotate_rows(1).square().square()
        assert np.array_equal(s.decrypt(y), r(r(roll_rows(x, 1) ** 2) ** 2))
        assert s.noise_budget(y) > 0


def test_generate_rotations_per_level():
    one = bfv.Context.generate(T, 2)
    assert one.params == bfv.Context.generate(T, 2, rotations_per_level=1).params
    assert one.galois_base_log == 14 and one.relin_base_log == 30 and one.n == 4096
    # Multiplications only (HPS Section 6.1): the same N and primes, Galois keys as relinearization's.
    none = bfv.Context.generate(T, 2, rotations_per_level=0)
    assert none.galois_base_log is None and none.q_moduli == one.q_moduli
    assert bfv.Context.from_moduli(**one.params).fingerprint == one.fingerprint
    assert one.fingerprint != none.fingerprint


def test_sum_of_all_slots_by_rotations(ctx, x):
    steps = [2**i for i in range(9)]  # 1, 2, ..., 256 = N/4
    s = bfv.Session(ctx, rotations=steps, column_swap=True)
    total = s.encrypt(x)
    for k in steps:
        total = total + total.rotate_rows(k)
    total = total + total.rotate_columns()
    assert np.array_equal(s.decrypt(total), np.full(1024, r(np.sum(x))))
    # Ten key switchings with the plain CRT decomposition (55-bit digits) cost about 55 bits here.
    assert s.noise_budget(total) > 60


def test_rotation_errors(ctx, session, x):
    ct = session.encrypt(x)
    with pytest.raises(ValueError, match=r"row rotation by step 7\b.*rotations=\[\.\.\.\]"):
        ct.rotate_rows(7)
    plain = bfv.Session(ctx)
    assert plain.keys.rotations == [] and not plain.keys.column_swap and plain.keys.galois.elements == []
    with pytest.raises(ValueError, match=r"column swap.*keygen\(column_swap=True\)"):
        plain.encrypt(x).rotate_columns()
    relin_only = ctx.evaluator(relin_key=session.keys.relin)
    with pytest.raises(ValueError, match="row rotation needs Galois keys"):
        relin_only.rotate_rows(ct, 1)
    with pytest.raises(ValueError, match="column swap needs Galois keys"):
        ctx.encryptor(session.keys).encrypt(x).rotate_columns()  # keyless evaluator
    with pytest.raises(ValueError, match="batch-encoded"):
        session.encrypt(x[:10], encoding="coeff").rotate_rows(1)
    with pytest.raises(ValueError, match="batch-encoded"):
        session.evaluator.rotate_columns(session.encrypt(x[:10], encoding="coeff"))
    with pytest.raises(ValueError, match="needs a ciphertext with 2 parts, got 3"):
        session.evaluator.multiply(ct, ct, relinearize=False).rotate_rows(1)


def test_server_side_galois_keys(ctx, session, x):
    keys = session.keys
    galois = keys.galois
    assert galois.rotations == keys.rotations == ROTATIONS and galois.column_swap
    assert len(galois.elements) == len(ROTATIONS) + 1 and 2 * 1024 - 1 in galois.elements
    assert "rotations=[1, -1, 3, -5], column_swap=True" in repr(galois)
    server = ctx.evaluator(relin_key=keys.relin, galois_keys=galois)
    ct = server.attach(ctx.encryptor(keys.public).encrypt(x))
    assert np.array_equal(session.decrypt((ct * ct).rotate_rows(-1)), roll_rows(r(x * x), -1))
    other = bfv.Session(bfv.Context.generate(T, 1), rotations=[1])
    with pytest.raises(ValueError, match="Galois key set belongs to another BFV context"):
        ctx.evaluator(galois_keys=other.keys.galois)


# ------------------------------------------------------------------------------------------------------
# Keys and evaluators
# ------------------------------------------------------------------------------------------------------


def test_keyless_and_server_side_evaluators(ctx, session, x, y):
    keys = session.keys
    keyless = ctx.encryptor(keys.public).encrypt(x)  # attached to a keyless evaluator
    assert not keyless.evaluator.has_relin_key
    assert np.array_equal(session.decrypt(keyless * 3 + y), r(3 * x + y))
    with pytest.raises(ValueError, match="relinearization key"):
        keyless * keyless
    with pytest.raises(ValueError, match="relinearization key"):
        keyless.square()
    assert np.array_equal(session.decrypt(session.evaluator.multiply(keyless, keyless)), r(x * x))
    server = ctx.evaluator(relin_key=keys.relin)
    assert server.has_relin_key and "relin_key=True" in repr(server)
    ct = server.attach(keyless)
    assert ct.evaluator.has_relin_key
    assert np.array_equal(session.decrypt(ct * ct - y), r(x * x - y))


def test_objects_of_other_contexts_raise_value_error(ctx, session, x):
    other = bfv.Session(bfv.Context.generate(T, 1))
    a, b = session.encrypt(x), other.encrypt(x[:10])
    with pytest.raises(ValueError, match="another BFV context"):
        a + b
    with pytest.raises(ValueError, match="another BFV context"):
        a * b
    with pytest.raises(ValueError, match="another BFV context"):
        session.decrypt(b)
    with pytest.raises(ValueError, match="another BFV context"):
        session.evaluator.attach(b)
    with pytest.raises(ValueError, match="another BFV context"):
        ctx.evaluator(other.keys)
    with pytest.raises(ValueError, match="another BFV context"):
        ctx.encryptor(other.keys.public)
    with pytest.raises(ValueError, match="another BFV context"):
        ctx.decryptor(other.keys.secret)
    with pytest.raises(ValueError, match="another BFV context"):
        ctx.encryptor(session.keys.public, evaluator=other.evaluator)
    # Keys of the other scheme are the wrong type.
    ck = ckks.Context.generate(1).keygen()
    with pytest.raises(TypeError, match="bfv KeySet"):
        ctx.encryptor(ck.public)
    with pytest.raises(TypeError, match="bfv KeySet"):
        ctx.decryptor(ck)
    with pytest.raises(TypeError):
        ctx.evaluator(ck)


# ------------------------------------------------------------------------------------------------------
# Input errors, pickling, threads, numpy interplay
# ------------------------------------------------------------------------------------------------------


def test_input_errors(session, x):
    ct = session.encrypt(x)
    with pytest.raises(ValueError, match="1025 values do not fit in a plaintext of N = 1024"):
        session.encrypt(np.zeros(1025, dtype=np.int64))
    with pytest.raises(ValueError, match="do not fit"):
        ct + np.zeros(2000, dtype=np.int64)
    with pytest.raises(ValueError, match=r"value 65537 at index 1 is out of range .* t = 65537"):
        session.encrypt([0, T])
    with pytest.raises(ValueError, match="value -65537 at index 0 is out of range"):
        ct * np.array([-T])
    with pytest.raises(ValueError, match="out of range"):
        ct + T
    with pytest.raises(ValueError, match="out of range"):
        ct * np.int64(-T)
    with pytest.raises(ValueError, match="does not fit in int64"):
        session.encrypt(np.array([2**63], dtype=np.uint64))
    with pytest.raises(ValueError, match="does not fit in int64"):
        session.encrypt([1, 2**70])
    with pytest.raises(ValueError, match="does not fit in int64"):
        ct + 2**64
    with pytest.raises(ValueError, match="1-D"):
        session.encrypt(np.zeros((2, 2), dtype=np.int64))
    with pytest.raises(ValueError, match="1-D"):
        ct * np.zeros((2, 2), dtype=np.int64)
    with pytest.raises(ValueError, match="unknown encoding"):
        session.encrypt([1], encoding="slots")
    with pytest.raises(ValueError, match='cannot combine a "batch"-encoded ciphertext with a "coeff"'):
        ct + session.encrypt([1], encoding="coeff")
    for bad in [0.5, np.float64(2.0), np.array([1.0, 2.0]), [1, 2.5], 1j]:
        with pytest.raises(TypeError, match="expected integers"):
            ct + bad
    with pytest.raises(TypeError, match="expected integers"):
        session.encrypt(np.array([1.0, 2.0]))
    with pytest.raises(TypeError):
        session.encrypt(["a", "b"])
    with pytest.raises(TypeError):
        ct + "abc"
    with pytest.raises(TypeError):
        ct / 2
    with pytest.raises(TypeError, match="expected a Ciphertext, a 1-D array of integers or an integer"):
        session.evaluator.add(ct, object())


def test_pickling_secret_holders_raises_type_error(session, x):
    # Public keys and ciphertexts pickle: python/tests/test_serialization.py.
    assert_secret_holders_not_picklable(session, session.encrypt(x))


def test_numpy_arrays_on_the_left_give_ciphertexts(session, x, y):
    ct = session.encrypt(x)
    for result in [y + ct, y - ct, y * ct, np.int64(2) * ct, np.int64(2) - ct]:
        assert isinstance(result, bfv.Ciphertext)
    assert np.array_equal(session.decrypt(np.int64(2) - ct), r(2 - x))


def test_operations_from_several_threads(session):
    inputs = [np.random.default_rng(10 + i).integers(0, T, 1024) for i in range(6)]
    cts = [session.encrypt(v) for v in inputs]

    def work(ct):
        return session.decrypt(ct * ct + ct * 5)

    with ThreadPoolExecutor(max_workers=3) as pool:
        results = list(pool.map(work, cts))
    for v, got in zip(inputs, results):
        assert np.array_equal(got, r(r(v * v) + 5 * v))


def test_reduce_helper():
    assert bfv.reduce([-1, 0, 1, T, T + 1, T // 2 + 1], T).tolist() == [-1, 0, 1, 0, 1, -(T // 2)]
    assert bfv.reduce(np.array([[3, -3]]), 4).tolist() == [[-1, 1]]  # (-2, 2] for even t
    assert bfv.reduce([2, -2], 4).tolist() == [2, 2]
    assert bfv.reduce([-1], 7, signed=False).tolist() == [6]
    with pytest.raises(ValueError, match="at least 2"):
        bfv.reduce([1], 1)


def test_reprs_and_docstrings(session, x):
    ct = session.encrypt(x)
    assert repr(ct) == 'Ciphertext(N=1024, t=65537, encoding="batch", parts=2)'
    assert repr(session.keys) == (
        "KeySet(N=1024, t=65537, relin_components=3, rotations=[1, -1, 3, -5], column_swap=True)"
    )
    assert "relin_key=True, rotations=[1, -1, 3, -5], column_swap=True" in repr(session.evaluator)
    assert repr(session).startswith("Session(Context(N=2^10, t=65537")
    assert_public_names_documented(bfv)


def test_module_docstring_examples():
    assert_doctests_pass(bfv)


def test_example_bfv_dot_product_runs(run_example):
    out = run_example("bfv_dot_product")
    assert "encrypted total" in out and "exact: True" in out


# ------------------------------------------------------------------------------------------------------
# Plaintext
# ------------------------------------------------------------------------------------------------------


def test_plaintext_operands_equal_raw_values(session, ctx, x, y):
    ct = session.encrypt(x)
    pt = ctx.encode(y)
    assert pt.encoding == "batch" and repr(pt) == f'Plaintext(N={ctx.n}, t={T}, encoding="batch")'
    assert np.array_equal(pt.decode(), r(y)) and np.array_equal(pt.decode(signed=False), y % T)
    ev = session.evaluator
    for got, raw in plaintext_and_array_results(ct, pt, y, ev):
        assert np.array_equal(session.decrypt(got), session.decrypt(raw))
    assert np.array_equal(session.decrypt(ct * pt), r(x * y))
    # Coefficient encoding: products are negacyclic convolutions, as with arrays.
    small = np.arange(ctx.n) % 7 - 3
    cc = session.encrypt(small, encoding="coeff")
    pc = ctx.encode(small, encoding="coeff")
    assert pc.encoding == "coeff"
    assert np.array_equal(session.decrypt(cc * pc), negacyclic(small, small, T))


def test_plaintext_wire_and_errors(session, ctx, x, y):
    pt = ctx.encode(y, encoding="coeff")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # the small test context is insecure
        unpickled = pickle.loads(pickle.dumps(pt))
    for back in [unpickled, bfv.Plaintext.from_bytes(pt.to_bytes(), ctx, encoding="coeff")]:
        assert back.encoding == "coeff" and np.array_equal(back.decode(), pt.decode())
    assert len(pt.to_bytes()) == pt.serialized_size()
    ct = session.encrypt(x)
    with pytest.raises(ValueError, match='"batch"-encoded ciphertext with a "coeff"-encoded plaintext'):
        ct + pt
    with pytest.raises(ValueError, match="another"):
        ct * small_context(q_count=2).encode(y)
    with pytest.raises(ValueError, match="do not fit"):
        ctx.encode(np.zeros(ctx.n + 1, dtype=np.int64))
    with pytest.raises(TypeError):
        ctx.encode([0.5])
    with pytest.raises(ValueError, match="unknown encoding"):
        ctx.encode(y, encoding="slots")
