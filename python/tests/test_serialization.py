"""Serialization of the Python objects: ``to_bytes`` / ``from_bytes``, pickling, validation on load.

Parameters: CKKS with N = 2^10, a 50-bit q_0, two 40-bit scaling primes and one 50-bit special prime
(insecure, for speed: a level-1 ciphertext is about 13 KB, so every truncation can be tried). Sizes: a
seeded object stores a 32-byte seed instead of its uniform polynomial, so seeded / expanded is about
0.50 (docs/wire-sizes.md: 0.50 for every object of every preset); the window 0.45..0.6 leaves room for
headers and the seed at this small N.
"""

import pickle
import random
import warnings

import numpy as np
import pytest

import rnsfhe
from rnsfhe import bfv, ckks

#: Bits of precision of one product at scale 2^40 and N = 2^10 (fresh slot errors about 2^-30).
BITS = 20.0
SEEDED_RATIO = (0.45, 0.6)

# Loading the insecure test parameters warns (once per context built): expected here.
pytestmark = pytest.mark.filterwarnings("ignore:.*not established as 128-bit secure:UserWarning")


def small_context(**overrides):
    params = dict(log_n=10, log_scale=40, q0_bits=50, levels=2, special_primes=1, special_bits=50,
                  allow_insecure=True)
    params.update(overrides)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return ckks.Context(**params)


def load_context(data):
    """Context.from_bytes of insecure test parameters (the reader's opt-in), its UserWarning silenced."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return ckks.Context.from_bytes(data, allow_insecure=True)


@pytest.fixture(scope="module")
def ctx():
    return small_context()


@pytest.fixture(scope="module")
def keys(ctx):
    return ctx.keygen(rotations=[1, -1, 3], conjugate=True, sum_slots=True)


@pytest.fixture(scope="module")
def x(ctx):
    return np.random.default_rng(7).uniform(-1, 1, ctx.slots)


@pytest.fixture(scope="module")
def decryptor(ctx, keys):
    return ctx.decryptor(keys)


def bits(expected, got):
    return ckks.precision(expected, got).min_bits


def assert_decode_error(excinfo):
    """A DecodeError is a ValueError whose field and offset are set and named in the message."""
    err = excinfo.value
    assert isinstance(err, ValueError) and isinstance(err, rnsfhe.DecodeError)
    assert isinstance(err.field, str) and err.field and isinstance(err.offset, int) and err.offset >= 0
    assert f"field `{err.field}` at byte {err.offset}" in str(err)
    return err


# ------------------------------------------------------------------------------------------------------
# Round trips
# ------------------------------------------------------------------------------------------------------


def test_decode_error_is_shared_and_exported():
    assert rnsfhe.DecodeError is ckks.DecodeError is bfv.DecodeError
    assert issubclass(rnsfhe.DecodeError, ValueError)
    assert "field" in rnsfhe.DecodeError.__doc__


def test_context_round_trip_and_pickle(ctx):
    data = ctx.to_bytes()
    assert isinstance(data, bytes) and data[:4] == b"RNSF"
    for clone in [load_context(data), load_context(bytearray(data)), load_context(memoryview(data)),
                  pickle.loads(pickle.dumps(ctx))]:
        assert clone.fingerprint == ctx.fingerprint and clone.params == ctx.params
        assert clone.to_bytes() == data and clone.is_insecure
    with pytest.raises(TypeError, match="expected bytes"):
        ckks.Context.from_bytes("RNSF")


def test_presets_round_trip_with_their_name():
    ctx = ckks.Context.from_preset("Rec128N13")
    clone = ckks.Context.from_bytes(ctx.to_bytes())
    assert clone.preset == "Rec128N13" and clone.fingerprint == ctx.fingerprint
    assert not clone.is_insecure and clone.security_warning is None


def test_insecure_parameters_need_the_readers_opt_in():
    # Parameters of this test only, so that the first load builds the context (and warns).
    data = bytearray(small_context(q0_bits=49).to_bytes())
    # The writer's opt-in travels in the bytes, but a reader loads insecure parameters only when it
    # allows them itself: a party handing over parameters cannot switch the receiver's check off.
    with pytest.raises(rnsfhe.DecodeError, match="allow_insecure") as e:
        ckks.Context.from_bytes(bytes(data))
    assert assert_decode_error(e).field == "parameters"
    with pytest.warns(UserWarning, match="not established as 128-bit secure"):
        assert ckks.Context.from_bytes(bytes(data), allow_insecure=True).is_insecure
    # The cached context is not handed out to a reader that does not allow it either.
    with pytest.raises(rnsfhe.DecodeError, match="allow_insecure"):
        ckks.Context.from_bytes(bytes(data))
    with rnsfhe.load_limits(allow_insecure=True):
        assert ckks.Context.from_bytes(bytes(data)).is_insecure
    assert data[-33] == 1  # params.insecure_for_testing, the last payload byte (before the digest)
    data[-33] = 0
    with pytest.raises(rnsfhe.DecodeError, match="digest") as e:
        ckks.Context.from_bytes(bytes(data), allow_insecure=True)
    with pytest.raises(rnsfhe.DecodeError, match="rejected") as e:
        ckks.Context.from_bytes(rnsfhe.reseal(data), allow_insecure=True)
    assert assert_decode_error(e).field == "parameters"
    # A secure context does not carry the opt-in.
    assert ckks.Context.from_preset("Rec128N13").to_bytes()[-33] == 0


def test_keys_round_trip(ctx, keys, x, decryptor):
    pk = ckks.PublicKey.from_bytes(keys.public.to_bytes(), ctx)
    ct = ctx.encryptor(pk).encrypt(x)
    assert bits(x, decryptor.decrypt(ct, real=True)) >= BITS
    for key, cls in [(keys.public, ckks.PublicKey), (keys.relin, ckks.RelinKey), (keys.galois, ckks.GaloisKeys)]:
        for seeded in (True, False):
            data = key.to_bytes(seeded=seeded)
            assert len(data) == key.serialized_size(seeded=seeded)
            assert cls.from_bytes(data, ctx).to_bytes(seeded=seeded) == data
        assert key.to_bytes() == key.to_bytes(seeded=True)
        clone = pickle.loads(pickle.dumps(key))
        assert isinstance(clone, cls) and clone.to_bytes() == key.to_bytes()


def test_secret_key_only_through_explicit_functions(ctx, keys, x, decryptor):
    sk = keys.secret
    assert not hasattr(sk, "to_bytes")
    data = sk.to_secret_bytes()
    assert len(data) == 16 + 5 + ctx.n // 4 + 32  # header, distribution, 2 bits per coefficient, digest
    loaded = ckks.SecretKey.from_secret_bytes(data, ctx)
    ct = ctx.encryptor(keys.public).encrypt(x)
    assert bits(x, ctx.decryptor(loaded).decrypt(ct, real=True)) >= BITS
    for obj in [sk, keys]:
        with pytest.raises(TypeError, match="to_secret_bytes"):
            pickle.dumps(obj)
    with pytest.raises(rnsfhe.DecodeError):
        ckks.SecretKey.from_secret_bytes(data[:-1], ctx)


def test_ciphertext_round_trip_and_pickle(ctx, keys, x, decryptor):
    ev = ctx.evaluator(keys)
    for ct in [ctx.encryptor(keys.public).encrypt(x), ctx.encryptor(keys.secret).encrypt(x),
               ev.multiply(ctx.encryptor(keys).encrypt(x), x), ctx.encryptor(keys).encrypt(x[:8], slots=8)]:
        for seeded in (True, False):
            data = ct.to_bytes(seeded=seeded)
            assert len(data) == ct.serialized_size(seeded=seeded)
            loaded = ckks.Ciphertext.from_bytes(data, ctx)
            assert (loaded.level, loaded.scale, loaded.slots) == (ct.level, ct.scale, ct.slots)
            assert np.array_equal(decryptor.decrypt(loaded), decryptor.decrypt(ct))
        clone = pickle.loads(pickle.dumps(ct))
        assert np.array_equal(decryptor.decrypt(clone), decryptor.decrypt(ct))
    # Many ciphertexts of one context in one pickle (the context is loaded once, from the cache).
    cts = [ctx.encryptor(keys).encrypt(x * k) for k in range(1, 4)]
    for k, c in enumerate(pickle.loads(pickle.dumps(cts)), start=1):
        assert bits(x * k, decryptor.decrypt(c, real=True)) >= BITS


def test_unpickling_builds_a_context_once():
    # Parameters of this test only. Each build of an insecure context warns, so the warnings count the
    # builds: the first unpickled ciphertext builds the context, the others find it in the cache.
    c = small_context(q0_bits=48)
    keys = c.keygen()
    data = pickle.dumps([c.encryptor(keys).encrypt([float(k)]) for k in range(4)])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        cts = pickle.loads(data)
    assert len([w for w in caught if "128-bit" in str(w.message)]) == 1
    dec = c.decryptor(keys)
    assert [round(float(dec.decrypt(ct, real=True)[0]), 6) for ct in cts] == [0.0, 1.0, 2.0, 3.0]


def test_seeded_objects_are_about_half_the_size(ctx, keys, x):
    for obj in [keys.public, keys.relin, keys.galois, ctx.encryptor(keys.secret).encrypt(x)]:
        ratio = obj.serialized_size() / obj.serialized_size(seeded=False)
        assert SEEDED_RATIO[0] < ratio < SEEDED_RATIO[1], (obj, ratio)
    # Attaching to another evaluator keeps the seed (the same ciphertext).
    fresh = ctx.encryptor(keys.secret).encrypt(x)
    assert ctx.evaluator(keys).attach(fresh).to_bytes() == fresh.to_bytes()
    # No seed: public-key encryption, results of operations, fewer slots than N/2.
    for ct in [ctx.encryptor(keys.public).encrypt(x), ctx.encryptor(keys.secret).encrypt(x) + 1.0,
               ctx.encryptor(keys.secret).encrypt(x[:4], slots=4)]:
        assert ct.serialized_size() == ct.serialized_size(seeded=False)


def test_galois_keys_recover_rotations_and_conjugation(ctx, keys):
    loaded = ckks.GaloisKeys.from_bytes(keys.galois.to_bytes(), ctx)
    assert sorted(loaded.rotations) == sorted(keys.rotations) and loaded.conjugate
    assert loaded.elements == keys.galois.elements
    # A step and that step minus N/2 are one rotation: -1 and slots - 1 share a key.
    wide = ctx.keygen(rotations=[ctx.slots - 1, 5])
    assert ckks.GaloisKeys.from_bytes(wide.galois.to_bytes(), ctx).rotations == [-1, 5]
    bare = ctx.keygen()
    none = ckks.GaloisKeys.from_bytes(bare.galois.to_bytes(), ctx)
    assert none.rotations == [] and not none.conjugate


# ------------------------------------------------------------------------------------------------------
# The three parties: a server with a context and evaluation keys loaded from bytes
# ------------------------------------------------------------------------------------------------------


def test_server_computes_with_loaded_keys_and_the_client_decrypts(ctx, keys, x, decryptor):
    # Client -> server: parameters, evaluation keys, one seeded secret-key ciphertext.
    wire = {"context": ctx.to_bytes(), "relin": keys.relin.to_bytes(), "galois": keys.galois.to_bytes(),
            "x": ctx.encryptor(keys.secret).encrypt(x).to_bytes()}
    # Server: a fresh context from the bytes, never the secret key.
    server = load_context(wire["context"])
    ev = server.evaluator(relin_key=ckks.RelinKey.from_bytes(wire["relin"], server),
                          galois_keys=ckks.GaloisKeys.from_bytes(wire["galois"], server))
    ct = ckks.Ciphertext.from_bytes(wire["x"], server)
    attached = ckks.Ciphertext.from_bytes(wire["x"], server, evaluator=ev)
    results = {
        "mean": (ev.mean(ct), np.full(ctx.slots, np.mean(x)), 18.0),
        "var": (ev.var(ct), np.full(ctx.slots, np.var(x)), 18.0),
        "multiply": (ev.multiply(ct, ct), x * x, BITS),
        "operators": (attached * attached + 1.0, x * x + 1.0, BITS),
        "rotate": (ev.rotate(ct, -1), np.roll(x, 1), BITS),
        "rotate 3": (attached.rotate(3), np.roll(x, -3), BITS),
        "conjugate": (ev.conjugate(ct), x, BITS),
    }
    # Server -> client: the results as bytes, loaded into the client's own context object.
    for name, (result, expected, threshold) in results.items():
        back = ckks.Ciphertext.from_bytes(result.to_bytes(), ctx)
        assert bits(expected, decryptor.decrypt(back, real=True)) >= threshold, name
    # Pickled evaluation keys work as well.
    ev2 = server.evaluator(relin_key=pickle.loads(pickle.dumps(keys.relin)),
                           galois_keys=pickle.loads(pickle.dumps(keys.galois)))
    assert bits(np.roll(x, -1), decryptor.decrypt(ev2.rotate(ct, 1), real=True)) >= BITS


def test_evaluator_of_other_parameters_is_refused(ctx, keys, x):
    other = small_context(levels=1)
    data = ctx.encryptor(keys).encrypt(x).to_bytes()
    with pytest.raises(ValueError, match="another CKKS context"):
        ckks.Ciphertext.from_bytes(data, ctx, evaluator=other.evaluator())


# ------------------------------------------------------------------------------------------------------
# Bad bytes: always a DecodeError naming the field and offset, never a crash
# ------------------------------------------------------------------------------------------------------


def test_wrong_context_and_wrong_kind(ctx, keys, x):
    other = small_context(levels=1)
    ct = ctx.encryptor(keys).encrypt(x)
    for cls, data in [(ckks.Ciphertext, ct.to_bytes()), (ckks.RelinKey, keys.relin.to_bytes()),
                      (ckks.PublicKey, keys.public.to_bytes()), (ckks.GaloisKeys, keys.galois.to_bytes())]:
        with pytest.raises(rnsfhe.DecodeError, match="other parameters") as e:
            cls.from_bytes(data, other)
        assert assert_decode_error(e).field == "header.fingerprint" and e.value.offset == 8
    with pytest.raises(rnsfhe.DecodeError, match=r"expected a relinearization key \(kind code 18\), found kind code 33.* \(a CKKS ciphertext\)") as e:
        ckks.RelinKey.from_bytes(ct.to_bytes(), ctx)
    assert assert_decode_error(e).field == "header.kind"
    with pytest.raises(rnsfhe.DecodeError) as e:
        ckks.SecretKey.from_secret_bytes(keys.secret.to_secret_bytes(), other)
    assert assert_decode_error(e).field == "header.fingerprint"
    with pytest.raises(rnsfhe.DecodeError) as e:
        ckks.Context.from_bytes(ct.to_bytes())
    assert assert_decode_error(e).field == "header.kind"


def test_every_truncation_of_a_ciphertext(ctx, keys, x):
    ct = ctx.evaluator().drop_to_level(ctx.encryptor(keys).encrypt(x), 1)  # one limb: about 13 KB
    data = ct.to_bytes()
    for end in range(len(data)):
        with pytest.raises(rnsfhe.DecodeError) as e:
            ckks.Ciphertext.from_bytes(data[:end], ctx)
        err = e.value
        assert err.field and 0 <= err.offset <= end, (end, err)
        # Cut and sealed again (the digest recomputed), the payload's reader runs out of bytes.
        if 16 <= end < len(data) - 32 and end % 97 == 0:
            with pytest.raises(rnsfhe.DecodeError, match="truncated"):
                ckks.Ciphertext.from_bytes(rnsfhe.reseal(data[:end] + bytes(32)), ctx)
    with pytest.raises(rnsfhe.DecodeError, match="digest"):
        ckks.Ciphertext.from_bytes(data + b"\0", ctx)
    with pytest.raises(rnsfhe.DecodeError, match="unexpected bytes") as e:
        ckks.Ciphertext.from_bytes(rnsfhe.reseal(data[:-32] + b"\0" + bytes(32)), ctx)
    assert assert_decode_error(e).field == "end of object"


#: The objects of the hostile-bytes test: the CKKS objects above, and every from_bytes of rnsfhe.pegasus and
#: rnsfhe.apps (fixture ``pegasus_wire`` at the end of this file).
CKKS_HOSTILE = ["seeded ciphertext", "context", "public key", "galois keys"]
PEGASUS_HOSTILE = ["pipeline params", "pipeline options", "pegasus keys", "tree params", "tree server key",
                   "encrypted query", "encrypted label"]


@pytest.mark.parametrize("what", CKKS_HOSTILE + PEGASUS_HOSTILE)
def test_truncations_and_byte_flips(request, ctx, keys, x, what):
    if what in PEGASUS_HOSTILE:
        data, load, count = request.getfixturevalue("pegasus_wire")[what]
    else:
        obj, cls = {
            "seeded ciphertext": (ctx.encryptor(keys.secret).encrypt(x), ckks.Ciphertext),
            "context": (ctx, None),
            "public key": (keys.public, ckks.PublicKey),
            "galois keys": (keys.galois, ckks.GaloisKeys),
        }[what]

        def load(data):
            return load_context(data) if cls is None else cls.from_bytes(data, ctx)

        data, count = obj.to_bytes(), 200
    load(data)  # the valid object loads
    rng = random.Random(20240601)
    ends = sorted(set(range(0, min(len(data), count))) | {rng.randrange(len(data)) for _ in range(count)})
    for end in ends:
        with pytest.raises(rnsfhe.DecodeError) as e:
            load(data[:end])
        assert 0 <= e.value.offset <= end
    # Any flip in the header is caught; elsewhere a flip is caught or decodes to a valid object (a residue
    # that stays below its modulus), never crashes.
    positions = list(range(16)) + [rng.randrange(16, len(data)) for _ in range(count)]
    caught = 0
    for pos in positions:
        bad = bytearray(data)
        bad[pos] ^= 1 << rng.randrange(8)
        try:
            load(bytes(bad))
        except rnsfhe.DecodeError as err:
            assert err.field and err.offset <= len(data)
            caught += 1
        else:
            assert pos >= 16, f"a flip at header byte {pos} was accepted"
    assert caught >= 16
    # Empty, short, header-only, the header with an all-ones payload (huge counts and lengths) as it is
    # and sealed again, and random bytes behind the object's own header: a ValueError (DecodeError).
    header = data[:16]
    for bad in [b"", b"RNSF", header, header + b"\xff" * 64, rnsfhe.reseal(header + b"\xff" * 64 + bytes(32)),
                rnsfhe.reseal(header + b"\xff" * 4096 + bytes(32)),
                rnsfhe.reseal(header + bytes(rng.randrange(256) for _ in range(512)) + bytes(32))]:
        with pytest.raises(ValueError) as e:
            load(bad)
        assert isinstance(e.value, rnsfhe.DecodeError) and e.value.field, (what, len(bad))
    # Huge length, count and code fields sealed again, so that they reach the payload's validation: a
    # ValueError, or a load when the patch left a valid value; never a crash. Header patches never load.
    end = len(data) - 32
    for i in range(max(4, count // 3)):
        at = rng.randrange(end)
        patch = [b"\xff\xff\xff\xff", b"\x00\x00\x00\x80", b"\xff\xff", b"\x00\x00\x00\x00"][i % 4][: end - at]
        patched = bytearray(data)
        patched[at:at + len(patch)] = patch
        try:
            load(rnsfhe.reseal(bytes(patched)))
        except ValueError as err:
            assert isinstance(err, rnsfhe.DecodeError) and err.field
        else:
            assert at >= 16 or bytes(patched[:16]) == header, f"{what}: a header patch at {at} loaded"


def test_hostile_bytes(ctx):
    for data in [b"", b"RNSF", b"\0" * 16, b"RNSF\x01\x00\x21\x00" + b"\xff" * 8, bytes(range(256)) * 4]:
        for load in [lambda d: ckks.Ciphertext.from_bytes(d, ctx), lambda d: ckks.GaloisKeys.from_bytes(d, ctx),
                     lambda d: ckks.SecretKey.from_secret_bytes(d, ctx), ckks.Context.from_bytes]:
            with pytest.raises(rnsfhe.DecodeError):
                load(data)


# ------------------------------------------------------------------------------------------------------
# BFV: the same API (N = 2^10, t = 65537, three 55-bit primes; insecure, for speed)
# ------------------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def bctx():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return bfv.Context(10, 65537, 55, 3, allow_insecure=True)


@pytest.fixture(scope="module")
def bkeys(bctx):
    return bctx.keygen(rotations=[1, -1, 3], column_swap=True)


def bfv_load_context(data):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return bfv.Context.from_bytes(data, allow_insecure=True)


def test_bfv_context_round_trip(bctx):
    data = bctx.to_bytes()
    clone = bfv_load_context(data)
    assert clone.fingerprint == bctx.fingerprint and clone.params == bctx.params and clone.is_insecure
    assert pickle.loads(pickle.dumps(bctx)).to_bytes() == data
    with pytest.raises(rnsfhe.DecodeError) as e:
        bfv.Context.from_bytes(data[:-1])
    assert_decode_error(e)


def test_bfv_keys_round_trip(bctx, bkeys):
    for key, cls in [(bkeys.public, bfv.PublicKey), (bkeys.relin, bfv.RelinKey), (bkeys.galois, bfv.GaloisKeys)]:
        for seeded in (True, False):
            data = key.to_bytes(seeded=seeded)
            assert len(data) == key.serialized_size(seeded=seeded)
            assert cls.from_bytes(data, bctx).to_bytes(seeded=seeded) == data
        ratio = key.serialized_size() / key.serialized_size(seeded=False)
        assert SEEDED_RATIO[0] < ratio < SEEDED_RATIO[1], (key, ratio)
        assert pickle.loads(pickle.dumps(key)).to_bytes() == key.to_bytes()
    galois = bfv.GaloisKeys.from_bytes(bkeys.galois.to_bytes(), bctx)
    assert sorted(galois.rotations) == sorted(bkeys.rotations) and galois.column_swap
    sk = bfv.SecretKey.from_secret_bytes(bkeys.secret.to_secret_bytes(), bctx)
    values = np.arange(16) - 8
    got = bctx.decryptor(sk).decrypt(bctx.encryptor(bkeys.public).encrypt(values))
    assert np.array_equal(got[:16], values)
    for obj in [bkeys, bkeys.secret]:
        with pytest.raises(TypeError, match="to_secret_bytes"):
            pickle.dumps(obj)


def test_bfv_ciphertexts_and_the_server(bctx, bkeys):
    values = np.arange(bctx.n) % 100 - 50
    dec = bctx.decryptor(bkeys)
    seeded = bctx.encryptor(bkeys.secret).encrypt(values)
    assert SEEDED_RATIO[0] < seeded.serialized_size() / seeded.serialized_size(seeded=False) < SEEDED_RATIO[1]
    public = bctx.encryptor(bkeys.public).encrypt(values)
    assert public.serialized_size() == public.serialized_size(seeded=False)
    # A server with the context and the evaluation keys loaded from bytes.
    server = bfv_load_context(bctx.to_bytes())
    ev = server.evaluator(relin_key=bfv.RelinKey.from_bytes(bkeys.relin.to_bytes(), server),
                          galois_keys=bfv.GaloisKeys.from_bytes(bkeys.galois.to_bytes(), server))
    ct = bfv.Ciphertext.from_bytes(seeded.to_bytes(), server)
    attached = bfv.Ciphertext.from_bytes(seeded.to_bytes(), server, evaluator=ev)
    t = bctx.t
    for result, expected in [(ev.multiply(ct, ct), values * values), (attached * attached + 3, values * values + 3),
                             (attached.rotate_rows(-1), np.roll(values.reshape(2, -1), 1, axis=1).ravel())]:
        back = bfv.Ciphertext.from_bytes(result.to_bytes(), bctx)
        assert np.array_equal(dec.decrypt(back), bfv.reduce(expected, t))
    # Pickling keeps the encoding (the bytes do not hold it).
    coeff = bctx.encryptor(bkeys.public).encrypt([1, 2, 3], encoding="coeff")
    clone = pickle.loads(pickle.dumps(coeff))
    assert clone.encoding == "coeff" and np.array_equal(dec.decrypt(clone)[:3], [1, 2, 3])
    assert bfv.Ciphertext.from_bytes(coeff.to_bytes(), bctx, encoding="coeff").encoding == "coeff"
    # Bad bytes and other parameters.
    data = seeded.to_bytes()
    for end in list(range(0, 64)) + list(range(64, len(data), 97)):
        with pytest.raises(rnsfhe.DecodeError):
            bfv.Ciphertext.from_bytes(data[:end], bctx)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        other = bfv.Context(10, 65537, 55, 2, allow_insecure=True)
    with pytest.raises(rnsfhe.DecodeError, match="other parameters"):
        bfv.Ciphertext.from_bytes(data, other)
    with pytest.raises(ValueError, match="evaluator"):
        bfv.Ciphertext.from_bytes(data, bctx, evaluator=other.evaluator())
    with pytest.raises(rnsfhe.DecodeError):
        ckks.Ciphertext.from_bytes(data, small_context())


def test_read_header_names_the_kind_without_loading():
    ctx = ckks.Context.from_preset("Rec128N13")
    keys = ctx.keygen()
    h = rnsfhe.read_header(keys.relin.to_bytes())
    assert (h.kind, h.is_secret, h.version) == ("relinearization key", False, 3)
    assert h.fingerprint == rnsfhe.read_header(ctx.to_bytes()).fingerprint
    secret = rnsfhe.read_header(keys.secret.to_secret_bytes())
    assert secret.kind == "secret key" and secret.is_secret
    with pytest.raises(rnsfhe.DecodeError) as e:
        rnsfhe.read_header(b"RNSF\x09\x00" + bytes(10))  # format version 9
    assert e.value.field == "header.version" and e.value.offset == 4
    with pytest.raises(rnsfhe.DecodeError, match="unknown object kind code 999") as e:
        rnsfhe.read_header(b"RNSF\x02\x00\xe7\x03" + bytes(8))  # a kind code no crate defines
    assert e.value.field == "header.kind" and e.value.offset == 6


def test_context_from_bytes_bounds_the_ring_degree():
    data = ckks.Context.from_preset("Rec128N13").to_bytes()  # N = 2^13
    assert ckks.Context.from_bytes(data, max_log_n=13).n == 1 << 13
    with pytest.raises(rnsfhe.DecodeError, match=r"13 exceeds the loader's limit \(max_log_n = 12"):
        ckks.Context.from_bytes(data, max_log_n=12)
    with pytest.raises(rnsfhe.DecodeError):
        ckks.Context.from_bytes(data[:10], max_log_n=12)
    bfv_data = bfv.Context.generate(t=65537, depth=1).to_bytes()
    with pytest.raises(rnsfhe.DecodeError, match="max_log_n = 10"):
        bfv.Context.from_bytes(bfv_data, max_log_n=10)


# ------------------------------------------------------------------------------------------------------
# PEGASUS and decision-tree objects for test_truncations_and_byte_flips: every from_bytes of rnsfhe.pegasus
# and rnsfhe.apps (InsecureTest sets: the pipeline's keys are about 20 MB, so they get fewer variants)
# ------------------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def pegasus_wire():
    """The bytes a PEGASUS client and a decision-tree client send, and what their servers load them with."""
    from rnsfhe import apps, pegasus

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        session = pegasus.Session("InsecureTest", slots=16, seed=3, allow_insecure=True)
    p = session.pipeline
    params, options, keys = p.params_to_bytes(), p.options_to_bytes(), p.keys_to_bytes()
    client = apps.TreeClient("InsecureTest", allow_insecure=True, seed=11)
    tree_params, key = client.params_bytes(), client.server_key.to_bytes()
    server_key = apps.TreeServerKey.from_bytes(key, tree_params, allow_insecure=True)
    scaling = apps.TreeScaling([[0.0, 1.0], [0.0, 1.0]])
    # x0 <= 0.5 ? 0 : (x1 <= 0.3 ? 1 : 2), as scikit-learn's tree_ arrays.
    tree = apps.EncryptedTree([0, -2, 1, -2, -2], [0.5, -2.0, 0.3, -2.0, -2.0], [1, -1, 3, -1, -1],
                              [2, -1, 4, -1, -1], [0, 0, 0, 1, 2], 3, scaling, server_key)
    query = client.encrypt(scaling, [0.8, 0.1], seed=5).to_bytes()
    label = tree.predict(apps.EncryptedQuery.from_bytes(query, server_key), seed=6).to_bytes()

    def validate(p_, o_, k_):
        return pegasus.Pipeline.validate_key_bytes(p_, o_, k_, allow_insecure=True)

    # name: (the valid bytes, the loader, how many variants of each kind). Every pipeline load builds the
    # N = 2^11 context of the parameters first, and the keys are 20 MB: fewer variants for those.
    return {
        "pipeline params": (params, lambda d: validate(d, options, keys), 120),
        "pipeline options": (options, lambda d: validate(params, d, keys), 80),
        "pegasus keys": (keys, lambda d: validate(params, options, d), 6),
        "tree params": (tree_params, lambda d: apps.TreeServerKey.from_bytes(key, d, allow_insecure=True), 200),
        "tree server key": (key, lambda d: apps.TreeServerKey.from_bytes(d, tree_params, allow_insecure=True), 60),
        "encrypted query": (query, lambda d: apps.EncryptedQuery.from_bytes(d, server_key), 200),
        "encrypted label": (label, lambda d: apps.EncryptedLabel.from_bytes(d, client), 200),
    }
