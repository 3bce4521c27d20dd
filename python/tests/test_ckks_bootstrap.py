"""CKKS bootstrapping from Python (``ckks.Bootstrapper``, ``Context.keygen(bootstrapper=...)``,
``Ciphertext.bootstrap``, ``Evaluator.bootstrap``) at small insecure parameters: the slots come back
within the bound the Rust layer states, at the promised level, and the errors name what is missing."""

import numpy as np
import pytest

from rnsfhe import ckks

# The chains here are test chains (a sparse secret the HE Standard table does not cover): their warning
# is expected.
pytestmark = pytest.mark.filterwarnings("ignore:WARNING. these CKKS parameters:UserWarning")


def _chain(levels=19, secret="hamming:64"):
    """N = 2^11, scale 2^51, q_0 of 60 bits, Hamming weight 64: 17 levels of bootstrapping and 2 for
    the user (the Rust tests' chain, crates/rnsfhe-ckks/tests/bootstrap.rs)."""
    return ckks.Context(
        log_n=11,
        log_scale=51,
        q0_bits=60,
        levels=levels,
        special_primes=4,
        special_bits=55,
        dnum=5,
        secret=secret,
        allow_insecure=True,
    )


@pytest.fixture(scope="module")
def ctx():
    return _chain()


@pytest.fixture(scope="module")
def btp(ctx):
    return ckks.Bootstrapper(ctx, 64)


@pytest.fixture(scope="module")
def keys(ctx, btp):
    return ctx.keygen(bootstrapper=btp)


def test_bootstrap_restores_levels_within_the_bound(ctx, btp, keys):
    assert btp.slots == 64 and btp.levels_left == btp.output_level - 1 == 2
    assert btp.depth == ctx.max_level - btp.output_level
    assert set(btp.galois_elements) <= set(keys.galois.elements)
    ev = ctx.evaluator(keys)
    enc, dec = ctx.encryptor(keys, ev), ctx.decryptor(keys)
    rng = np.random.default_rng(1)
    z = rng.uniform(-1, 1, 64) + 1j * rng.uniform(-1, 1, 64)
    ct = enc.encrypt(z, slots=64)
    want = dec.decrypt(ct)
    out = ct.bootstrap(btp)
    assert out.level == btp.output_level and out.slots == 64
    got = dec.decrypt(out)
    err = max(np.abs(got.real - want.real).max(), np.abs(got.imag - want.imag).max())
    bound = btp.error_bound(ct.scale)
    assert set(bound) == {
        "eval_mod",
        "c2s_noise",
        "eval_mod_noise",
        "s2c_noise",
        "encapsulation_noise",
        "total",
    }
    # A Hamming-weight secret raises under itself: no encapsulation, no encapsulation noise.
    assert btp.sparse_secret is None and keys.sparse_secret is None
    assert bound["encapsulation_noise"] == 0.0
    assert err <= bound["total"]
    # The evaluator's method is the same operation; the result multiplies like any ciphertext.
    again = ev.bootstrap(ct, btp)
    assert np.abs(dec.decrypt(again) - want).max() <= 2 * bound["total"]
    sq = out * out
    assert sq.level == btp.output_level - 1


def test_bootstrap_errors(ctx, btp, keys):
    with pytest.raises(ValueError, match="invalid slot count"):
        ckks.Bootstrapper(ctx, 48)
    short = _chain(levels=8)
    with pytest.raises(ValueError, match="bootstrapping needs 18 levels"):
        ckks.Bootstrapper(short, 64)
    # Keys without the bootstrapper's: the error names the missing element.
    plain = ctx.keygen()
    ev = ctx.evaluator(plain)
    ct = ctx.encryptor(plain, ev).encrypt(np.zeros(64), slots=64)
    with pytest.raises(ValueError, match="needs a Galois key set|Galois"):
        ct.bootstrap(btp)
    # Another slot count.
    ev = ctx.evaluator(keys)
    other = ctx.encryptor(keys, ev).encrypt(np.zeros(32), slots=32)
    with pytest.raises(ValueError, match="slot count mismatch"):
        other.bootstrap(btp)


def test_dense_secret_bootstraps_under_the_encapsulation():
    # The same chain with a uniform ternary secret: the bootstrapper raises under a sparse secret of
    # Hamming weight 32 (K = 12 instead of 75), and keygen(bootstrapper=...) makes its keys.
    dense = _chain(secret="ternary")
    btp = ckks.Bootstrapper(dense, 64)
    assert btp.sparse_secret == 32 and btp.k == 12
    without = ckks.Bootstrapper(dense, 64, sparse_secret=0)
    assert without.sparse_secret is None and without.k == 75
    assert without.double_angle > btp.double_angle
    assert 0.0 < btp.failure_probability < 1e-6
    assert ckks.Bootstrapper(dense, 64, sparse_secret=40).sparse_secret == 40
    keys = dense.keygen(bootstrapper=btp)
    assert keys.sparse_secret == 32
    ev = dense.evaluator(keys)
    enc, dec = dense.encryptor(keys, ev), dense.decryptor(keys)
    z = np.random.default_rng(2).uniform(-1, 1, 64)
    ct = enc.encrypt(z, slots=64)
    want = dec.decrypt(ct)
    out = ct.bootstrap(btp)
    bound = btp.error_bound(ct.scale)
    assert 0.0 < bound["encapsulation_noise"] < bound["total"]
    assert np.abs(dec.decrypt(out).real - want.real).max() <= bound["total"]
    # Keys made without the bootstrapper hold no encapsulation: a clear error, not a crash.
    plain = dense.keygen(rotations=btp.rotation_steps, conjugate=True)
    ev = dense.evaluator(plain)
    ct = dense.encryptor(plain, ev).encrypt(z, slots=64)
    with pytest.raises(ValueError, match="encapsulation"):
        ct.bootstrap(btp)
    with pytest.raises(ValueError, match="Hamming weight"):
        ckks.Bootstrapper(dense, 64, sparse_secret=dense.n + 1)


def test_bootstrapping_primes_chain():
    # The Rust test chain of crates/rnsfhe-ckks/tests/bootstrap_chain.rs: a user scale of 2^40 with two
    # user levels, then 17 bootstrapping primes (3 x 50 SlotsToCoeffs, 10 x 60 EvalMod, 4 x 56
    # CoeffsToSlots), h = 32.
    upper = [50] * 3 + [60] * 10 + [56] * 4
    c = ckks.Context(
        log_n=11,
        log_scale=40,
        q0_bits=60,
        levels=2,
        special_primes=4,
        special_bits=60,
        dnum=5,
        secret="hamming:32",
        allow_insecure=True,
        bootstrap_primes=upper,
    )
    assert c.params["bootstrap_primes"] == upper
    assert (c.user_max_level, c.bootstrap_levels, c.max_level) == (3, 17, 20)
    assert "bootstrap_primes=[50, 50, 50, 60" in repr(c)
    # Fresh ciphertexts and default encodings are at the user's top level.
    assert c.encode([0.5]).level == 3
    b = ckks.Bootstrapper(c)
    assert b.output_level == c.user_max_level and b.levels_left == 2
    k = c.keygen(bootstrapper=b)
    ev = c.evaluator(k)
    enc, dec = c.encryptor(k, ev), c.decryptor(k)
    rng = np.random.default_rng(3)
    z = rng.uniform(-1, 1, c.slots) + 1j * rng.uniform(-1, 1, c.slots)
    ct = enc.encrypt(z)
    assert ct.level == 3
    out = ct.bootstrap(b)
    assert out.level == 3 and out.scale == c.level_scale(3)
    got, want = dec.decrypt(out), dec.decrypt(ct)
    err = max(np.abs(got.real - want.real).max(), np.abs(got.imag - want.imag).max())
    assert err <= b.error_bound(ct.scale)["total"]
    assert err < 2.0**-20
    # The bootstrapping presets carry the field too.
    test = ckks.Context.from_preset("BootTestN15", allow_insecure=True)
    # The presets' SlotsToCoeffs primes are 55-bit (docs/ckks-bootstrapping.md, stage table).
    assert test.params["bootstrap_primes"] == [55] * 3 + upper[3:]
    assert (test.user_max_level, test.bootstrap_levels, test.max_level) == (4, 17, 21)
    # Sizes out of range are refused with the field's name.
    with pytest.raises(ValueError, match="bootstrap_primes"):
        ckks.Context(log_n=11, levels=2, allow_insecure=True, bootstrap_primes=[9])


def test_server_from_bytes_bootstraps_a_dense_secret_ciphertext():
    # The client holds the dense secret; the server gets only bytes: the parameters, the relinearization
    # key, the bootstrapping keys (Galois keys and the encapsulation keys) and a ciphertext. It rebuilds
    # everything, bootstraps, and the client decrypts within the bound the bootstrapper states.
    client = _chain(secret="ternary")
    btp = ckks.Bootstrapper(client, 64)
    keys = client.keygen(bootstrapper=btp)
    boot = keys.bootstrapping_keys
    assert boot.sparse_secret == 32 and set(btp.galois_elements) <= set(boot.elements)
    boot_bytes = boot.to_bytes()
    assert len(boot_bytes) == boot.serialized_size()
    # Seeded `a` parts: about half the expanded size.
    assert len(boot_bytes) < 0.55 * boot.serialized_size(seeded=False)
    z = np.random.default_rng(3).uniform(-1, 1, 64)
    enc = client.encryptor(keys)
    ct = enc.encrypt(z, slots=64)
    dec = client.decryptor(keys)
    want = dec.decrypt(ct)
    wire = {
        "params": client.to_bytes(),
        "relin": keys.relin.to_bytes(),
        "boot": boot_bytes,
        "ct": ct.to_bytes(),
    }

    server = ckks.Context.from_bytes(wire["params"], allow_insecure=True)
    loaded = ckks.BootstrappingKeys.from_bytes(wire["boot"], server)
    assert loaded.sparse_secret == 32 and loaded.elements == boot.elements
    ev = server.evaluator(
        relin_key=ckks.RelinKey.from_bytes(wire["relin"], server), bootstrapping_keys=loaded
    )
    server_btp = ckks.Bootstrapper(server, 64)
    out = ckks.Ciphertext.from_bytes(wire["ct"], server)
    back = ev.bootstrap(out, server_btp).to_bytes()

    got = dec.decrypt(ckks.Ciphertext.from_bytes(back, client))
    bound = btp.error_bound(ct.scale)
    assert np.abs(got.real - want.real).max() <= bound["total"]
    # Pickling goes through the same bytes; Galois keys twice is refused.
    import pickle

    assert pickle.loads(pickle.dumps(loaded)).to_bytes() == boot_bytes
    with pytest.raises(ValueError, match="not both"):
        server.evaluator(galois_keys=keys.galois, bootstrapping_keys=loaded)
    # Corrupted bytes name the field (the sparse-secret weight follows the Galois keys and a flag).
    with pytest.raises(ckks.DecodeError):
        ckks.BootstrappingKeys.from_bytes(boot_bytes[:-40], server)
    # Without the encapsulation keys the server cannot raise under the sparse secret: a clear error.
    ev_plain = server.evaluator(relin_key=ckks.RelinKey.from_bytes(wire["relin"], server),
                                galois_keys=ckks.GaloisKeys.from_bytes(keys.galois.to_bytes(), server))
    with pytest.raises(ValueError, match="encapsulation"):
        ev_plain.bootstrap(ckks.Ciphertext.from_bytes(wire["ct"], server), server_btp)
