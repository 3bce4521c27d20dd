"""Arguments a binding must refuse at the call, with an error that names what was wrong.

* Integer arguments out of the range of their Rust type (negative counts, levels and sizes; 2^70; -2^70)
  raise ValueError naming the argument and its range (PyO3's own conversion raised OverflowError, which is
  not a ValueError, without the argument's name); arguments that are not integers raise TypeError naming
  the argument. Walked over every binding with an integer argument: rnsfhe.ckks, rnsfhe.bfv,
  rnsfhe.apps, the prime searches, NttPlan and BasisConverter.
* CKKS objects tied to a context (ciphertexts, keys, evaluators, the parts of a Session) are refused by
  every binding of another context at the call, with a ValueError naming both fingerprints, instead of
  failing at the first operation (or never, for a rotation by 0).
"""

import re
import warnings

import numpy as np
import pytest

import rnsfhe
from rnsfhe import apps, bfv, ckks
from rnsfhe._rnsfhe import apps as apps_bindings

HUGE = 2**70


@pytest.fixture(scope="module")
def ck():
    """A small CKKS session (insecure, for speed) and a fresh ciphertext of it."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        ctx = ckks.Context(log_n=11, levels=3, q0_bits=50, special_bits=55, allow_insecure=True)
    session = ckks.Session(ctx, rotations=[1])
    return session, session.encrypt(np.linspace(0.5, 1.0, session.slots))


@pytest.fixture(scope="module")
def bf():
    """A small BFV session (insecure, for speed) and a fresh ciphertext of it."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        ctx = bfv.Context(log_n=11, t=65537, q_bits=55, q_count=2, allow_insecure=True)
    session = bfv.Session(ctx, rotations=[1])
    return session, session.encrypt(np.arange(16))


def unsigned(name):
    return [(-1, name), (HUGE, name), (-HUGE, name)]


def signed(name):
    return [(HUGE, name), (-HUGE, name)]


def integer_cases(ck, bf):
    """(call taking the bad value, the values, the argument name the error must give)."""
    s, ct = ck
    ctx, ev, enc, dec = s.context, s.evaluator, s.encryptor, s.decryptor
    b, bct = bf
    f = np.tanh
    poly = ckks.Polynomial([0.0, 1.0, 0.5], "chebyshev", (-1, 1))
    ckks_bytes, bfv_bytes = ctx.to_bytes(), b.context.to_bytes()
    x, y = np.zeros((4, 2)), np.array([0.0, 1.0, 0.0, 1.0])
    layout = apps.PackedLayout(4, 2)
    cases = [
        # rnsfhe.ckks
        (lambda v: ckks.Context(log_n=v), "log_n"),
        (lambda v: ckks.Context(log_scale=v), "log_scale"),
        (lambda v: ckks.Context(q0_bits=v), "q0_bits"),
        (lambda v: ckks.Context(levels=v), "levels"),
        (lambda v: ckks.Context(special_primes=v), "special_primes"),
        (lambda v: ckks.Context(special_bits=v), "special_bits"),
        (lambda v: ckks.Context(dnum=v), "dnum"),
        (lambda v: ckks.Context.generate(v), "depth"),
        (lambda v: ckks.Context.generate(3, log_scale=v), "log_scale"),
        (lambda v: ckks.Context.generate(3, security=v), "security"),
        (lambda v: ckks.Context.from_bytes(ckks_bytes, max_log_n=v), "max_log_n"),
        (lambda v: ckks.Context.from_bytes(ckks_bytes, max_moduli=v), "max_moduli"),
        (lambda v: ckks.Context.from_bytes(ckks_bytes, max_words=v), "max_words"),
        (lambda v: rnsfhe.set_load_limits(max_log_n=v), "max_log_n"),
        (lambda v: ctx.level_scale(v), "level"),
        (lambda v: ctx.chebyshev(ct, f, (-1, 1), v), "degree"),
        (lambda v: enc.encrypt([1.0], slots=v), "slots"),
        (lambda v: dec.decrypt(ct, flooding_bits=v), "flooding_bits"),
        (lambda v: ev.drop_to_level(ct, v), "level"),
        (lambda v: ev.chebyshev(ct, f, (-1, 1), v), "degree"),
        (lambda v: ev.sigmoid(ct, degree=v), "degree"),
        (lambda v: ev.exp(ct, degree=v), "degree"),
        (lambda v: ev.inverse(ct, iterations=v), "iterations"),
        (lambda v: ev.inverse(ct, interval=(0.5, 2), degree=v), "degree"),
        (lambda v: ev.sqrt(ct, (0.5, 2), iterations=v), "iterations"),
        (lambda v: ev.inv_sqrt(ct, (0.5, 2), iterations=v), "iterations"),
        (lambda v: ct.drop_to_level(v), "level"),
        (lambda v: ct.chebyshev(f, (-1, 1), v), "degree"),
        (lambda v: ct.sigmoid(degree=v), "degree"),
        (lambda v: ct.exp(degree=v), "degree"),
        (lambda v: ct.inverse(iterations=v), "iterations"),
        (lambda v: ct.sqrt((0.5, 2), iterations=v), "iterations"),
        (lambda v: ct.inv_sqrt((0.5, 2), iterations=v), "iterations"),
        (lambda v: ckks.Polynomial.interpolate(f, (-1, 1), v), "degree"),
        (lambda v: ckks.Polynomial.sigmoid(degree=v), "degree"),
        (lambda v: ckks.Polynomial.exp(degree=v), "degree"),
        (lambda v: ckks.Polynomial.inverse(iterations=v), "iterations"),
        (lambda v: poly.max_error(f, samples=v), "samples"),
        (lambda v: ckks.chebyshev_approx(f, (-1, 1), 7, samples=v), "samples"),
        (lambda v: ckks.recommended_flooding_bits(10.0, statistical_security=v), "statistical_security"),
        (lambda v: ckks.recommended_flooding_bits(10.0, decryptions=v), "decryptions"),
        # rnsfhe.bfv
        (lambda v: bfv.Context(v, 65537), "log_n"),
        (lambda v: bfv.Context(11, v), "t"),
        (lambda v: bfv.Context(11, 65537, q_bits=v), "q_bits"),
        (lambda v: bfv.Context(11, 65537, q_count=v), "q_count"),
        (lambda v: bfv.Context(11, 65537, relin_base_log=v), "relin_base_log"),
        (lambda v: bfv.Context.from_moduli(v, 65537, [], []), "log_n"),
        (lambda v: bfv.Context.from_moduli(11, v, [], []), "t"),
        (lambda v: bfv.Context.from_moduli(11, 65537, [12289, v], []), r"q_moduli\[1\]"),
        (lambda v: bfv.Context.from_moduli(11, 65537, [12289], [v]), r"p_moduli\[0\]"),
        (lambda v: bfv.Context.from_moduli(11, 65537, [12289], [], relin_base_log=v), "relin_base_log"),
        (lambda v: bfv.Context.generate(v, 2), "t"),
        (lambda v: bfv.Context.generate(65537, v), "depth"),
        (lambda v: bfv.Context.from_bytes(bfv_bytes, max_log_n=v), "max_log_n"),
        # rnsfhe.apps
        (lambda v: apps.PackedLayout(v, 2), "n_samples"),
        (lambda v: apps.PackedLayout(4, v), "n_features"),
        (lambda v: layout.check_fits(v), "slots"),
        (lambda v: apps_bindings.sigmoid_coefficients(v), "degree"),
        (lambda v: apps_bindings.schedule(v, 1.0), "iterations"),
        (lambda v: apps_bindings.levels_needed(v, 3), "iterations"),
        (lambda v: apps_bindings.levels_needed(5, v), "sigmoid_degree"),
        (lambda v: apps_bindings.fit_plain(x, y, v, 3, 1.0), "iterations"),
        (lambda v: apps_bindings.fit_plain(x, y, 5, v, 1.0), "sigmoid_degree"),
        (lambda v: apps_bindings.fit_encrypted(ct, None, layout, v, 3, 1.0, 0), "iterations"),
        (lambda v: apps_bindings.fit_encrypted(ct, None, layout, 5, v, 1.0, 0), "sigmoid_degree"),
        (lambda v: apps_bindings.fit_encrypted(ct, None, layout, 5, 3, 1.0, v), "keep_levels"),
        (lambda v: apps_bindings.predict_proba_encrypted(ct, layout, [0.0] * 3, v), "sigmoid_degree"),
        # primes, NTT, basis conversion
        (lambda v: rnsfhe.is_prime(v), "n"),
        (lambda v: rnsfhe.ntt_primes_near_power_of_two(v, 2048, 2), "bits"),
        (lambda v: rnsfhe.ntt_primes_near_power_of_two(30, v, 2), "two_n"),
        (lambda v: rnsfhe.ntt_primes_near_power_of_two(30, 2048, v), "count"),
        (lambda v: rnsfhe.ntt_primes_of_bits(v, 2048, 2), "bits"),
        (lambda v: rnsfhe.ntt_primes_of_bits(30, v, 2), "two_n"),
        (lambda v: rnsfhe.ntt_primes_of_bits(30, 2048, v), "count"),
        (lambda v: rnsfhe.ntt_primes_of_bits(30, 2048, 2, exclude=[v]), r"exclude\[0\]"),
        (lambda v: rnsfhe.qu_xu_max_eta(v, 2048, 2), "m"),
        (lambda v: rnsfhe.qu_xu_max_eta(40, v, 2), "two_n"),
        (lambda v: rnsfhe.qu_xu_max_eta(40, 2048, v), "count"),
        (lambda v: rnsfhe.qu_xu_primes(v, 8, 2048, 2), "m"),
        (lambda v: rnsfhe.qu_xu_primes(40, v, 2048, 2), "eta"),
        (lambda v: rnsfhe.qu_xu_primes(40, 8, v, 2), "two_n"),
        (lambda v: rnsfhe.qu_xu_primes(40, 8, 2048, v), "count"),
        (lambda v: rnsfhe.qu_xu_primes(40, 8, 2048, 2, exclude=[v]), r"exclude\[0\]"),
        (lambda v: rnsfhe.NttPlan(v, 12289), "n"),
        (lambda v: rnsfhe.NttPlan(16, v), "p"),
        (lambda v: rnsfhe.BasisConverter(v, [12289], [40961]), "n"),
        (lambda v: rnsfhe.BasisConverter(16, [12289, v], [40961]), r"source\[1\]"),
        (lambda v: rnsfhe.BasisConverter(16, [12289], [v]), r"target\[0\]"),
    ]
    out = [(call, unsigned(name)) for call, name in cases]
    # Arguments whose negative values are valid (rotation steps).
    out += [
        (lambda v: ctx.keygen(rotations=[1, v]), signed(r"rotations\[1\]")),
        (lambda v: ev.rotate(ct, v), signed("k")),
        (lambda v: ev.rotate_many(ct, [v]), signed(r"steps\[0\]")),
        (lambda v: ct.rotate(v), signed("k")),
        (lambda v: b.context.keygen(rotations=[v]), signed(r"rotations\[0\]")),
        (lambda v: b.evaluator.rotate_rows(bct, v), signed("step")),
        (lambda v: bct.rotate_rows(v), signed("step")),
    ]
    return out


def test_integer_arguments_out_of_range_raise_value_error_naming_them(ck, bf):
    checked = 0
    for call, values in integer_cases(ck, bf):
        for value, name in values:
            with pytest.raises(ValueError, match=rf"^{name} must be a.* integer.*got -?") as info:
                call(value)
            assert not isinstance(info.value, OverflowError)
            message = str(info.value)
            # The allowed range or sign, and the value (or its size, beyond 128 bits).
            assert re.search(r"in \[-?\d+, \d+\]|non-negative", message), message
            assert str(value) in message, message
            checked += 1
    assert checked > 250


def test_integers_beyond_128_bits_and_numpy_integers(ck):
    s, ct = ck
    with pytest.raises(ValueError, match=r"^level must be an integer in \[0, \d+\], got an integer of 201 bits"):
        ct.drop_to_level(2**200)
    with pytest.raises(ValueError, match=r"^k must be .* got -an integer of 201 bits"):
        ct.rotate(-(2**200))
    with pytest.raises(ValueError, match=r"^n must be an integer in \[0, 18446744073709551615\], got -7"):
        rnsfhe.is_prime(np.int64(-7))
    assert rnsfhe.is_prime(np.uint64(2**61 - 1)) and rnsfhe.is_prime(2**64 - 59)
    # In range, numpy integers work as Python ints do.
    assert ct.drop_to_level(np.int32(2)).level == 2
    assert np.allclose(s.decrypt(ct.rotate(np.int64(1)), real=True)[:4],
                       np.roll(np.linspace(0.5, 1.0, s.slots), -1)[:4], atol=1e-4)


def test_non_integer_arguments_raise_type_error_naming_them(ck, bf):
    s, ct = ck
    b, bct = bf
    cases = [
        (lambda: ct.drop_to_level(1.5), "level"),
        (lambda: ct.rotate("1"), "k"),
        (lambda: s.context.keygen(rotations=[1.0]), "rotations"),
        (lambda: ckks.Context(log_n=12.0), "log_n"),
        (lambda: s.decryptor.decrypt(ct, flooding_bits=None), "flooding_bits"),
        (lambda: bfv.Context(11.0, 65537), "log_n"),
        (lambda: bct.rotate_rows(0.5), "step"),
        (lambda: rnsfhe.is_prime(7.0), "n"),
        (lambda: rnsfhe.NttPlan("16", 12289), "n"),
        (lambda: apps.PackedLayout(4.0, 2), "n_samples"),
    ]
    for call, name in cases:
        with pytest.raises(TypeError, match=f"argument '{name}'"):
            call()


# ------------------------------------------------------------------------------------------------------
# CKKS objects of another context
# ------------------------------------------------------------------------------------------------------


def test_ckks_refuses_objects_of_another_context_at_the_call(ck):
    s, ct = ck
    # Same N, other parameters (another fingerprint).
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        other_ctx = ckks.Context(log_n=11, levels=2, q0_bits=50, special_bits=55, allow_insecure=True)
    other = ckks.Session(other_ctx, rotations=[1])
    foreign = other.encrypt(np.linspace(0.5, 1.0, other.slots))
    mine, theirs = s.context.fingerprint, other_ctx.fingerprint
    assert mine != theirs
    ev, f = s.evaluator, np.tanh
    calls = {
        "encryptor with a foreign evaluator": lambda: s.context.encryptor(s.keys.public, evaluator=other.evaluator),
        "encryptor with a foreign public key": lambda: s.context.encryptor(other.keys.public),
        "encryptor with a foreign secret key": lambda: s.context.encryptor(other.keys.secret),
        "encryptor with a foreign key set": lambda: s.context.encryptor(other.keys),
        "decryptor with a foreign key": lambda: s.context.decryptor(other.keys.secret),
        "evaluator with a foreign key set": lambda: s.context.evaluator(other.keys),
        "evaluator with a foreign relin key": lambda: s.context.evaluator(relin_key=other.keys.relin),
        "evaluator with foreign Galois keys": lambda: s.context.evaluator(galois_keys=other.keys.galois),
        "Ciphertext.from_bytes with a foreign evaluator":
            lambda: ckks.Ciphertext.from_bytes(ct.to_bytes(), s.context, other.evaluator),
        "attach": lambda: ev.attach(foreign),
        "add": lambda: ev.add(foreign, ct),
        "add (right operand)": lambda: ev.add(ct, foreign),
        "sub": lambda: ev.sub(ct, foreign),
        "multiply": lambda: ev.multiply(ct, foreign),
        "multiply by a number": lambda: ev.multiply(foreign, 2),
        "operator +": lambda: ct + foreign,
        "operator *": lambda: foreign * ct,
        "square": lambda: ev.square(foreign),
        "negate": lambda: ev.negate(foreign),
        "rescale": lambda: ev.rescale(foreign),
        "drop_to_level": lambda: ev.drop_to_level(foreign, 2),
        "rotate": lambda: ev.rotate(foreign, 1),
        "rotate by 0": lambda: ev.rotate(foreign, 0),
        "rotate_many": lambda: ev.rotate_many(foreign, [1]),
        "conjugate": lambda: ev.conjugate(foreign),
        "sum": lambda: ev.sum(foreign),
        "mean": lambda: ev.mean(foreign),
        "var": lambda: ev.var(foreign),
        "polyval": lambda: ev.polyval(foreign, [0, 1, 1]),
        "chebyshev": lambda: ev.chebyshev(foreign, f, (-1, 1), 3),
        "sigmoid": lambda: ev.sigmoid(foreign, degree=3),
        "exp": lambda: ev.exp(foreign, degree=3),
        "inverse": lambda: ev.inverse(foreign, iterations=1),
        "sqrt": lambda: ev.sqrt(foreign, (0.5, 2), iterations=0),
        "inv_sqrt": lambda: ev.inv_sqrt(foreign, (0.5, 2), iterations=0),
        "dot": lambda: ev.dot(foreign, ct),
        "dot (right operand)": lambda: ev.dot(ct, foreign),
        "ciphertext dot": lambda: ct.dot(foreign),
        "add_many": lambda: ev.add_many([ct, foreign]),
        "weighted_sum": lambda: ev.weighted_sum([ct, foreign], [1.0, 2.0]),
        "module weighted_sum": lambda: ckks.weighted_sum([ct, foreign], [1.0, 2.0]),
        "context polyval": lambda: s.context.polyval(foreign, [0, 1]),
        "context chebyshev": lambda: s.context.chebyshev(foreign, f, (-1, 1), 3),
        "decrypt": lambda: s.decryptor.decrypt(foreign),
        "decrypt with flooding": lambda: s.decryptor.decrypt(foreign, flooding_bits=10),
        "max_flooding_bits": lambda: s.decryptor.max_flooding_bits(foreign),
        "noise_log2": lambda: s.decryptor.noise_log2(foreign, np.zeros(4)),
        "Session.decrypt": lambda: s.decrypt(foreign),
        "Session.polyval": lambda: s.polyval(foreign, [0, 1]),
        "Session.chebyshev": lambda: s.chebyshev(foreign, f, (-1, 1), 3),
    }
    both = re.compile(f"{theirs:#018x}.*{mine:#018x}|{mine:#018x}.*{theirs:#018x}")
    for what, call in calls.items():
        with pytest.raises(ValueError, match="belongs to another (CKKS )?context") as info:
            call()
        assert both.search(str(info.value)), (what, str(info.value))
    # Nothing above changed what works: the objects of one context still work together.
    assert np.allclose(s.decrypt(ev.attach(ct) + ct, real=True)[:4], 2 * np.linspace(0.5, 1.0, s.slots)[:4],
                       atol=1e-4)
