"""rnsfhe.lwe at the InsecureTest preset: LWE encryption round trips, arithmetic and modulus switching, the
errors of operands that do not fit together, look-up tables of Python functions within the bound of PEGASUS
Eq. (3) (``LutSession.error_bound``, i.e. ``rnsfhe_lwe::LutEvaluator::error_bound``) for the three blind-rotation
algorithms and inputs of other moduli, ``lut_many`` equal to ``lut``, key switching back to the LWE key, secret
keys that are neither printed nor pickled, and the wire format of ciphertexts, secret keys and switching keys
(round trips, MACs, hostile bytes)."""

import copy
import math
import pickle

import numpy as np
import pytest

import rnsfhe
from conftest import assert_doctests_pass
from rnsfhe import lwe

# The error width of LweSecretKey.encrypt's default; fresh errors lie within 6 sigma (the sampler's tail cut
# is wider, but a value beyond 6 sigma has probability below 2e-9 per sample).
SIGMA = 3.2
SIX_SIGMA = 6 * SIGMA
DELTA = 2**20  # a scale for integer messages, far above the errors


@pytest.fixture(scope="module")
def session():
    return lwe.LutSession("InsecureTest", seed=7, allow_insecure=True)


@pytest.fixture(scope="module")
def key():
    return lwe.LweSecretKey.generate(64, seed=5)


@pytest.fixture(scope="module")
def q0():
    return lwe.PegasusParams.from_preset("InsecureTest").q0


def sigmoid(x):
    return 1.0 / (1.0 + math.exp(-x))


def relu(x):
    return max(x, 0.0)


def test_presets_and_security():
    assert lwe.presets() == ["PegasusTable4", "PegasusTable4FastSpecial", "Secure128", "InsecureTest"]
    p = lwe.PegasusParams.from_preset("insecuretest")
    assert (p.lwe_dimension, p.lut_log_n, p.ckks_log_n, p.lwe_hamming_weight) == (64, 10, 11, 64)
    assert (p.ks_base_log, p.ks_digits, p.ks_sigma, p.lut_sigma) == (7, 7, 8192.0, 1024.0)
    assert p.q0 % (2 << p.ckks_log_n) == 1 and p.special != p.q0
    assert pickle.loads(pickle.dumps(p)).q0 == p.q0
    table4 = lwe.PegasusParams.from_preset("PegasusTable4").security()
    # PEGASUS claims 119 bits; our estimator puts the switching key below that, and below 128.
    assert table4.switching_key_bits < 119 < table4.evaluation_key_bits
    assert table4.bits == table4.switching_key_bits
    with pytest.raises(ValueError, match="unknown LWE preset"):
        lwe.PegasusParams.from_preset("Table5")
    assert lwe.PegasusParams.from_preset("PegasusTable4").blind_rotation == "ternary"
    secure = lwe.PegasusParams.from_preset("Secure128")
    assert (secure.lwe_secret, secure.blind_rotation, secure.lwe_hamming_weight) == ("uniform binary", "binary", None)
    assert 2**25 < secure.ks_modulus < 2**26 and secure.ks_modulus != secure.q0
    assert secure.security().bits >= 128


def test_secure128_session_round_trip():
    """Our 128-bit set at full size, without the opt-in: LWE ciphertexts modulo the 26-bit q_ks, tables
    by the binary algorithm, outputs modulo q0 switched down and back to the LWE key."""
    s = lwe.LutSession("Secure128", seed=5)
    assert s.algorithm == "binary" and s.lwe_modulus == s.params.ks_modulus
    x = np.array([-7.5, -2.0, 0.25, 3.0, 7.0])
    cts = s.encrypt(x)
    assert all(ct.modulus == s.lwe_modulus and ct.dimension == 1024 for ct in cts)
    assert np.max(np.abs(s.decrypt(cts) - x)) < 1e-3
    y = s.lut_many(cts, math.tanh)
    assert all(ct.modulus == s.q0 and ct.dimension == 4096 for ct in y)
    assert np.all(np.abs(s.decrypt(y) - np.tanh(x)) <= s.error_bound(1.0))
    back = [s.switch_to_lwe(ct) for ct in y]
    assert all(ct.modulus == s.lwe_modulus and ct.dimension == 1024 for ct in back)
    assert np.max(np.abs(s.decrypt(back) - np.tanh(x))) < 2 * s.error_bound(1.0)


def test_encrypt_decrypt_round_trip(key, q0):
    values = np.array([0, 1, -1, 5, -123456, 2**20], dtype=np.int64)
    cts = key.encrypt_many(values * DELTA, q0)
    assert all(ct.dimension == 64 and ct.modulus == q0 for ct in cts)
    phases = key.decrypt_many(cts)
    assert phases.dtype == np.int64
    assert np.all(np.abs(phases - values * DELTA) <= SIX_SIGMA)
    ct = key.encrypt(-3, q0, sigma=0.5)
    assert abs(key.decrypt(ct) + 3) <= 3
    assert ct.a.dtype == np.uint64 and ct.a.shape == (64,) and np.all(ct.a < q0) and ct.b < q0
    weighted = lwe.LweSecretKey.generate(128, hamming_weight=16)
    assert weighted.dimension == 128
    with pytest.raises(ValueError, match="dimension must be"):
        lwe.LweSecretKey.generate(-1)
    with pytest.raises(TypeError, match="integer array"):
        key.encrypt_many(np.array([0.5]), q0)


def test_arithmetic(key, q0):
    a, b = key.encrypt(7 * DELTA, q0), key.encrypt(-2 * DELTA, q0)

    def message(ct, errors):
        phase = key.decrypt(ct)
        assert abs(phase - round(phase / DELTA) * DELTA) <= errors * SIX_SIGMA
        return round(phase / DELTA)

    assert message(a + b, 2) == 5
    assert message(a - b, 2) == 9
    assert message(-a, 1) == -7
    assert message(3 * a, 3) == 21 and message(a * -3, 3) == -21
    assert message(np.int64(2) * b, 2) == -4
    assert message(a.add_plain(4 * DELTA), 1) == 11
    # The components of a sum are the sums of the components modulo q.
    assert (a + b).b == (a.b + b.b) % q0
    assert np.array_equal((a + b).a, (a.a + b.a) % np.uint64(q0))
    assert copy.deepcopy(a) is a
    with pytest.raises(TypeError):
        a * 1.5
    with pytest.raises(TypeError):
        a + 1


def test_modulus_switching_and_parts(key, q0):
    ct = key.encrypt(3 * DELTA, q0)
    small = 2**30
    switched = ct.switch_modulus(small)
    assert switched.modulus == small and switched.dimension == 64
    # The message scales by small / q0; rounding adds at most (1 + ||s||_1) / 2 <= 32.5 for a ternary key
    # of dimension 64, and the scaled error is below one.
    expected = 3 * DELTA * small / q0
    assert abs(key.decrypt(switched) - expected) <= (1 + 64) / 2 + 1
    back = lwe.LweCiphertext.from_parts(ct.modulus, ct.b, ct.a)
    assert back.b == ct.b and np.array_equal(back.a, ct.a)
    unpickled = pickle.loads(pickle.dumps(ct))
    assert unpickled.b == ct.b and np.array_equal(unpickled.a, ct.a)
    with pytest.raises(ValueError, match="not reduced"):
        lwe.LweCiphertext.from_parts(17, 3, [1, 17])


def test_mismatched_operands_raise_with_the_rust_message(key, q0):
    a = key.encrypt(1, q0)
    wider = lwe.LweSecretKey.generate(128).encrypt(1, q0)
    other_modulus = key.encrypt(1, 2**40)
    with pytest.raises(ValueError, match="LWE addition: dimension 64 does not match dimension 128"):
        a + wider
    with pytest.raises(ValueError, match=f"LWE subtraction: modulus {q0} does not match modulus {2**40}"):
        a - other_modulus
    with pytest.raises(ValueError, match="LWE decryption: dimension 64 does not match dimension 128"):
        key.decrypt(wider)


@pytest.mark.parametrize("name, f, lipschitz", [("sigmoid", sigmoid, 0.25), ("relu", relu, 1.0)])
def test_lut_within_the_error_bound(session, name, f, lipschitz):
    # 16 inputs over [-8, 8]: |scale x| <= q0 / 8, inside the input range |scale x| < q0 / 4.
    x = np.linspace(-8.0, 8.0, 16)
    cts = session.encrypt(x)
    assert all(ct.dimension == session.lwe_dimension for ct in cts)
    outs = session.lut_many(cts, f)
    assert all(ct.dimension == session.lut_dimension == 1024 for ct in outs)
    bound = session.error_bound(lipschitz)
    # The bound's main term is the grid step q0 / (2 n scale) = 1/32 times L (times 6, and the rounding of
    # the index): it is a real constraint, not a loose one.
    grid_step = session.q0 / (2 * session.lut_dimension * session.scale)
    assert lipschitz * grid_step < bound < 4 * lipschitz
    errors = np.abs(session.decrypt(outs) - np.array([f(v) for v in x]))
    assert errors.max() <= bound, (name, errors.max(), bound)


def test_binary_blind_rotation_meets_the_same_bound():
    # One external product per coefficient with a binary LWE key (BlindRotation::Binary).
    s = lwe.LutSession("InsecureTest", seed=3, algorithm="binary", allow_insecure=True)
    x = np.linspace(-8.0, 8.0, 16)
    errors = np.abs(s.decrypt(s.lut_many(s.encrypt(x), sigmoid)) - np.array([sigmoid(v) for v in x]))
    assert errors.max() <= s.error_bound(0.25)
    assert s.algorithm == "binary"
    with pytest.raises(ValueError, match="unknown blind-rotation algorithm"):
        lwe.LutSession("InsecureTest", seed=3, algorithm="cggi", allow_insecure=True)


def test_lmkcdey_blind_rotation_meets_its_bound():
    # Automorphisms and one external product per coefficient with the preset's ternary key
    # (BlindRotation::Lmkcdey); the mask is rounded to odd values, which the bound counts.
    s = lwe.LutSession("InsecureTest", seed=4, algorithm="LMKCDEY", allow_insecure=True)
    assert s.algorithm == "lmkcdey" and "lmkcdey" in repr(s)
    x = np.linspace(-8.0, 8.0, 16)
    for f, lipschitz in [(sigmoid, 0.25), (relu, 1.0)]:
        errors = np.abs(s.decrypt(s.lut_many(s.encrypt(x), f)) - np.array([f(v) for v in x]))
        assert errors.max() <= s.error_bound(lipschitz), (f, errors.max())
    # Rounding to odd values doubles the switch's share of the index error: a larger bound than ternary's.
    ternary = lwe.LutSession("InsecureTest", seed=4, allow_insecure=True)
    assert s.error_bound(1.0) > ternary.error_bound(1.0)


@pytest.mark.parametrize("algorithm", ["ternary", "binary", "lmkcdey"])
def test_lut_on_inputs_of_another_modulus(algorithm):
    # Ciphertexts switched from q0 to 2^20 (any modulus of at least 2n = 2048 works) go through the tables;
    # the outputs stay modulo q0. Scales are given at q0: the switch keeps the values (decrypt reads them).
    s = lwe.LutSession("InsecureTest", seed=5, algorithm=algorithm, allow_insecure=True)
    q = 2**20
    x = np.array([-7.0, -1.5, 0.0, 2.0, 6.5])
    cts = [ct.switch_modulus(q) for ct in s.encrypt(x)]
    assert np.max(np.abs(s.decrypt(cts) - x)) < 1e-2
    outs = s.lut_many(cts, sigmoid)
    assert all(ct.modulus == s.q0 for ct in outs)
    assert s.lut(cts[0], sigmoid).modulus == s.q0
    # The switch to q adds its rounding, (1 + ||s||^2) / 12 with ||s||^2 <= 64, to the input's variance.
    sigma = math.hypot(s.params.ks_sigma * q / s.q0, math.sqrt(65 / 12))
    bound = s.error_bound(0.25, input_sigma=sigma, input_modulus=q)
    errors = np.abs(s.decrypt(outs) - np.array([sigmoid(v) for v in x]))
    assert errors.max() <= bound, (errors.max(), bound)
    with pytest.raises(ValueError, match="below 2n = 2048"):
        s.lut(cts[0].switch_modulus(1024), sigmoid)
    with pytest.raises(ValueError, match="modulus"):
        s.lut_many([cts[0], s.encrypt([1.0])[0]], sigmoid)


def test_insecure_parameters_need_the_opt_in():
    # The estimator puts every key of the test set, and Table IV's switching key, below 128 bits.
    with pytest.raises(ValueError, match="below 128; use the \\*_allowing_insecure"):
        lwe.LutSession("InsecureTest", seed=3)


def test_lut_many_equals_lut(session):
    cts = session.encrypt(np.array([-2.5, 0.0, 1.0, 6.0]))
    many = session.lut_many(cts, np.tanh)
    for ct, out in zip(cts, many):
        one = session.lut(ct, np.tanh)
        # Blind rotation is deterministic: the same table and input give the same ciphertext.
        assert one.b == out.b and np.array_equal(one.a, out.a)


def test_switch_back_and_chain(session):
    x = np.array([-3.0, -1.0, 0.5, 2.0])
    first = [session.switch_to_lwe(ct) for ct in session.lut_many(session.encrypt(x), relu)]
    assert all(ct.dimension == session.lwe_dimension for ct in first)
    relu_bound = session.error_bound(1.0)
    assert np.all(np.abs(session.decrypt(first) - np.maximum(x, 0)) <= relu_bound)
    # The second table's input error is the first table's (at most relu_bound, in units of the scale) plus
    # the switch's; taking that maximum as its width over-covers it (Eq. (3) multiplies the width by 6 L).
    sigma_in = math.hypot(relu_bound * session.scale, math.sqrt(session.switching_key.added_variance()))
    # An affine map with |f| * scale < q0 / 2 over the whole grid (|v| <= q0 / (2 scale) = 32).
    second = session.lut_many(first, lambda v: 0.5 * v - 1.0)
    bound = session.error_bound(0.5, input_sigma=sigma_in)
    assert np.all(np.abs(session.decrypt(second) - (0.5 * np.maximum(x, 0) - 1)) <= bound)
    ks = session.switching_key
    assert (ks.from_dimension, ks.to_dimension, ks.modulus) == (1024, 64, session.q0)


def test_lut_errors(session):
    ct = session.encrypt([1.0])[0]
    out = session.lut(ct, relu)
    with pytest.raises(ValueError, match="switch_to_lwe"):
        session.lut(out, relu)
    with pytest.raises(ValueError, match="input range"):
        session.encrypt([16.0])

    def failing(v):
        raise ZeroDivisionError("from f")

    with pytest.raises(ZeroDivisionError, match="from f"):
        session.lut(ct, failing)
    with pytest.raises(TypeError, match="callable"):
        session.lut(ct, 3)
    with pytest.raises(ValueError, match="look-up table"):
        session.lut(ct, lambda v: 1e30)


def test_secret_keys_are_redacted_and_not_picklable(session, key):
    assert repr(key) == "LweSecretKey(dimension=64, <hidden>)"
    assert repr(session.lwe_key) == "LweSecretKey(dimension=64, <hidden>)"
    assert not hasattr(key, "to_bytes")
    for obj in (key, session, session.lwe_key):
        with pytest.raises(TypeError, match="cannot be pickled"):
            pickle.dumps(obj)
    with pytest.raises(TypeError, match="to_secret_bytes"):
        pickle.dumps(key)
    assert "InsecureTest" in repr(session)


def test_ciphertexts_round_trip_through_the_wire_format(key, q0):
    ct = key.encrypt(5 * DELTA, q0)
    data = ct.to_bytes()
    # Header, b and 64 coefficients of a at the modulus' 45 bits, digest.
    assert len(data) == ct.serialized_size() == 16 + 6 + 360 + 32
    header = rnsfhe.read_header(data)
    assert (header.kind, header.kind_code, header.is_secret) == ("LWE ciphertext", 64, False)
    back = lwe.LweCiphertext.from_bytes(bytearray(data), 64, q0)
    assert back.b == ct.b and np.array_equal(back.a, ct.a)
    mac = bytes(range(32))
    sealed = ct.to_bytes(mac_key=mac)
    assert lwe.LweCiphertext.from_bytes(sealed, 64, q0, mac_key=mac).b == ct.b
    with pytest.raises(rnsfhe.DecodeError) as e:
        lwe.LweCiphertext.from_bytes(sealed, 64, q0)
    assert e.value.field == "digest"
    # Another dimension or modulus: the header's fingerprint says the ciphertext is not of it.
    for dimension, modulus in [(128, q0), (64, 2**40)]:
        with pytest.raises(rnsfhe.DecodeError) as e:
            lwe.LweCiphertext.from_bytes(data, dimension, modulus)
        assert e.value.field == "header.fingerprint"
    # A mask coefficient above the modulus, sealed again so that it reaches the payload's validation.
    bad = bytearray(data)
    bad[22:28] = b"\xff" * 6
    with pytest.raises(rnsfhe.DecodeError) as e:
        lwe.LweCiphertext.from_bytes(rnsfhe.reseal(bytes(bad)), 64, q0)
    assert (e.value.field, e.value.offset) == ("lwe_ciphertext.a[0]", 22)
    with pytest.raises(rnsfhe.DecodeError) as e:
        lwe.LweCiphertext.from_bytes(data[:-1], 64, q0)
    assert e.value.field == "digest"
    with pytest.raises(ValueError, match="LWE dimension"):
        lwe.LweCiphertext.from_bytes(data, 0, q0)


def test_secret_keys_save_only_explicitly(key, q0):
    data = key.to_secret_bytes()
    assert len(data) == 16 + 16 + 32  # 64 coefficients at 2 bits
    header = rnsfhe.read_header(data)
    assert (header.kind, header.is_secret) == ("LWE secret key", True)
    back = lwe.LweSecretKey.from_secret_bytes(data, 64)
    ct = key.encrypt(-7 * DELTA, q0)
    assert back.decrypt(ct) == key.decrypt(ct)
    with pytest.raises(rnsfhe.DecodeError) as e:
        lwe.LweSecretKey.from_secret_bytes(data, 32)
    assert e.value.field == "header.fingerprint"
    # A secret key is no ciphertext.
    with pytest.raises(rnsfhe.DecodeError, match="LWE secret key") as e:
        lwe.LweCiphertext.from_bytes(data, 64, q0)
    assert e.value.field == "header.kind"


def test_switching_keys_round_trip_and_pickle(session):
    ks = session.switching_key
    seeded, expanded = ks.to_bytes(), ks.to_bytes(seeded=False)
    assert len(seeded) == ks.serialized_size() and len(expanded) == ks.serialized_size(seeded=False)
    assert 0.5 < len(seeded) / len(expanded) < 0.52
    assert rnsfhe.read_header(seeded).kind == "LWE switching key"
    x = np.array([-2.0, 3.0])
    outs = session.lut_many(session.encrypt(x), relu)
    for data in (seeded, expanded):
        back = lwe.LweSwitchingKey.from_bytes(data, "InsecureTest")
        assert (back.from_dimension, back.to_dimension) == (1024, 64)
        for out in outs:
            one, other = ks.switch(out), back.switch(out)
            # Key switching is deterministic: the same key and input give the same ciphertext.
            assert one.b == other.b and np.array_equal(one.a, other.a)
    unpickled = pickle.loads(pickle.dumps(ks))
    assert unpickled.to_bytes() == seeded and unpickled.params.preset == "InsecureTest"
    mac = bytes(range(32))
    sealed = ks.to_bytes(mac_key=mac)
    assert lwe.LweSwitchingKey.from_bytes(sealed, "InsecureTest", mac_key=mac).to_bytes() == seeded
    with pytest.raises(rnsfhe.DecodeError) as e:
        lwe.LweSwitchingKey.from_bytes(sealed, "InsecureTest")
    assert e.value.field == "digest"
    # Other dimensions or another parameter set: another fingerprint.
    with pytest.raises(rnsfhe.DecodeError) as e:
        lwe.LweSwitchingKey.from_bytes(seeded, session.params, from_dimension=2048)
    assert e.value.field == "header.fingerprint"
    with pytest.raises(rnsfhe.DecodeError) as e:
        lwe.LweSwitchingKey.from_bytes(seeded, "PegasusTable4")
    assert e.value.field == "header.fingerprint"
    with pytest.raises(ValueError, match="LWE dimension"):
        lwe.LweSwitchingKey.from_bytes(seeded, "InsecureTest", to_dimension=0)
    bad = bytearray(seeded)
    bad[16] = 2  # the first block's seeded flag
    with pytest.raises(rnsfhe.DecodeError) as e:
        lwe.LweSwitchingKey.from_bytes(rnsfhe.reseal(bytes(bad)), "InsecureTest")
    assert e.value.field == "switching_key.block[0].seeded"


def test_module_docstring_examples():
    assert_doctests_pass(lwe)


def test_tables_are_built_once_and_reused(session):
    """A LookupTable from session.table is what lut builds from the function; it pickles and loads."""
    x = np.array([-6.0, -1.0, 0.5, 4.0])
    cts = session.encrypt(x)
    table = session.table(np.tanh)
    assert table.functions == 1 and table.input_modulus == session.lwe_modulus
    by_table = session.decrypt(session.lut_many(cts, table))
    assert np.all(np.abs(by_table - np.tanh(x)) <= session.error_bound(1.0))
    again = pickle.loads(pickle.dumps(table))
    assert again.to_bytes() == table.to_bytes()
    assert lwe.LookupTable.from_bytes(table.to_bytes(), session.params).functions == 1
    with pytest.raises(ValueError, match="carries its scales"):
        session.lut(cts[0], table, input_scale=2.0)
    with pytest.raises(TypeError, match="a sequence of them or a LookupTable"):
        session.lut(cts[0], 3.0)
    with pytest.raises(rnsfhe.DecodeError):
        lwe.LookupTable.from_bytes(table.to_bytes()[:-1], session.params)


@pytest.mark.parametrize("algorithm", ["ternary", "binary"])
def test_one_rotation_reads_several_functions(algorithm):
    s = lwe.LutSession("InsecureTest", seed=8, algorithm=algorithm, allow_insecure=True)
    x = np.array([-7.0, -2.5, 0.0, 1.25, 6.0])
    fs = [sigmoid, math.tanh, relu, lambda v: math.sin(v / 4)]
    lipschitz = [0.25, 1.0, 1.0, 0.25]
    table = s.table(fs)
    assert table.functions == 4
    for v, ct in zip(x, s.encrypt(x)):
        outs = s.lut_all(ct, table)
        assert len(outs) == 4
        got = s.decrypt(outs)
        for f, l, y in zip(fs, lipschitz, got):
            assert abs(y - f(v)) <= s.error_bound(l, functions=4), (f, v, y)
    pair = s.lut_all(s.encrypt([1.0])[0], [sigmoid, relu])
    assert len(pair) == 2
    with pytest.raises(ValueError, match="power of two"):
        s.table([sigmoid, relu, math.tanh])
    with pytest.raises(ValueError, match="evaluate_all"):
        s.lut(s.encrypt([1.0])[0], table)


def test_lmkcdey_reads_one_function_per_rotation():
    s = lwe.LutSession("InsecureTest", seed=9, algorithm="lmkcdey", allow_insecure=True)
    with pytest.raises(ValueError, match="odd"):
        s.lut_all(s.encrypt([1.0])[0], [sigmoid, relu])
