"""The security check and the loaders against hostile inputs, from Python: the error width and the secret
distribution in the security check and the fingerprint, bounded loaders (also when unpickling), the digest
that every object carries and the MAC mode."""

import pickle
import time
import warnings

import numpy as np
import pytest

import rnsfhe
from rnsfhe import bfv, ckks

#: Largest time a hostile parameter blob may cost (the measured cost is about a millisecond).
HOSTILE_SECONDS = 0.1


def quiet(make, *args, **kwargs):
    """``make(*args, **kwargs)`` with the UserWarning of insecure parameters silenced."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return make(*args, **kwargs)


# ------------------------------------------------------------------------------------------------------
# sigma and the secret distribution
# ------------------------------------------------------------------------------------------------------


def test_a_narrow_error_is_insecure_and_needs_the_opt_in():
    # At sigma = 1e-9 a fresh encryption of zero decrypts to exactly zero: the public key gives the secret
    # key away. Such parameters need the explicit opt-in, from Python as from Rust.
    with pytest.raises(ValueError, match="sigma = 0.000000001"):
        ckks.Context(sigma=1e-9)
    ctx = quiet(ckks.Context, sigma=1e-9, allow_insecure=True)
    assert ctx.is_insecure
    assert "error narrower" in ctx.security and "sigma 0.000000001" in ctx.security
    assert "sigma = 0.000000001" in ctx.security_warning
    with pytest.raises(ValueError, match="sigma"):
        bfv.Context(12, 65537, 54, 2, sigma=1e-9)
    b = quiet(bfv.Context, 12, 65537, 54, 2, sigma=1e-9, allow_insecure=True)
    assert b.is_insecure and "error narrower" in b.security
    # The standard width and wider ones keep the table's verdict, and the security text says so.
    for sigma in (3.19, 3.2, 6.4):
        c = ckks.Context(sigma=sigma)
        assert not c.is_insecure and f"sigma {sigma}" in c.security and "lattice estimate" in c.security
    assert not bfv.Context(12, 65537, 54, 2).is_insecure


def test_absurd_widths_are_refused():
    for sigma in (1e9, float("inf"), float("nan"), 0.0, -3.2):
        with pytest.raises(ValueError, match="sigma"):
            ckks.Context(sigma=sigma, allow_insecure=True)
        with pytest.raises(ValueError, match="sigma"):
            bfv.Context(12, 65537, 54, 2, sigma=sigma, allow_insecure=True)


def test_the_fingerprint_covers_sigma_and_the_secret():
    prints = {
        ckks.Context().fingerprint,
        ckks.Context(sigma=6.4).fingerprint,
        ckks.Context(sigma=3.2000001).fingerprint,
        quiet(ckks.Context, secret="hamming:64", allow_insecure=True).fingerprint,
        quiet(ckks.Context, secret="hamming:65", allow_insecure=True).fingerprint,
    }
    assert len(prints) == 5
    assert bfv.Context(12, 65537, 54, 2).fingerprint != bfv.Context(12, 65537, 54, 2, sigma=6.4).fingerprint
    # A sparse secret is outside the HE Standard table: insecure without the opt-in.
    with pytest.raises(ValueError, match="HammingWeight"):
        ckks.Context(secret="hamming:64")


def test_context_bytes_cannot_lower_sigma():
    data = quiet(ckks.Context, sigma=1e-9, allow_insecure=True).to_bytes()
    # Refused by a reader that does not allow insecure parameters itself, whatever the bytes say.
    with pytest.raises(rnsfhe.DecodeError, match="allow_insecure") as e:
        ckks.Context.from_bytes(data)
    assert e.value.field == "parameters"
    # Every single-bit flip of sigma in a secure context's bytes is refused (by the digest).
    secure = bytearray(ckks.Context().to_bytes())
    sigma_at = 16 + 7 * 4 + 5  # after seven u32 fields and the secret distribution (u8 tag, u32 weight)
    assert np.frombuffer(bytes(secure[sigma_at:sigma_at + 8]), "<f8")[0] == 3.2
    for bit in range(64):
        bad = bytearray(secure)
        bad[sigma_at + bit // 8] ^= 1 << (bit % 8)
        with pytest.raises(rnsfhe.DecodeError) as e:
            ckks.Context.from_bytes(bytes(bad))
        assert e.value.field == "digest"
        # Sealed again (anyone can recompute a digest), the width is still checked: every flip is refused
        # (narrower: insecure; wider than 2^13, not finite or not positive: invalid; another width of the
        # standard: another fingerprint than the header's).
        with pytest.raises(rnsfhe.DecodeError) as e:
            ckks.Context.from_bytes(rnsfhe.reseal(bad))
        assert e.value.field in ("parameters", "params.sigma", "header.fingerprint"), e.value


# ------------------------------------------------------------------------------------------------------
# Bounded loaders
# ------------------------------------------------------------------------------------------------------


def hostile_ckks_blob(log_n=17, levels=128, special=128):
    """The 60-byte blob of the report (N = 2^17, 128 + 128 primes, the insecure flag), sealed with a valid
    digest so that it reaches the checks behind it."""
    data = bytearray(quiet(ckks.Context, allow_insecure=True).to_bytes())
    fields = [log_n, 50, 60, levels, special, 60, 1]
    for i, v in enumerate(fields):
        data[16 + 4 * i:20 + 4 * i] = v.to_bytes(4, "little")
    data[-33] = 1
    return rnsfhe.reseal(data)


def refused_quickly(load, field):
    start = time.perf_counter()
    with pytest.raises(rnsfhe.DecodeError) as e:
        load()
    elapsed = time.perf_counter() - start
    assert e.value.field == field, e.value
    assert elapsed < HOSTILE_SECONDS, elapsed
    return e.value


def test_hostile_parameters_are_refused_in_milliseconds():
    err = refused_quickly(lambda: ckks.Context.from_bytes(hostile_ckks_blob()), "params.log_n")
    assert "max_log_n = 16" in str(err)
    refused_quickly(lambda: ckks.Context.from_bytes(hostile_ckks_blob(16, 100, 20)), "params.moduli")
    # Within the limits, a fingerprint that is not the parameters': refused before any table is built.
    refused_quickly(lambda: ckks.Context.from_bytes(hostile_ckks_blob(16, 30, 10)), "header.fingerprint")
    # Unpickling applies the same limits (the process-wide ones).
    blob = hostile_ckks_blob()

    class Hostile:
        def __reduce__(self):
            return rnsfhe._common._load_context, (ckks.Context, blob, True)

    refused_quickly(lambda: pickle.loads(pickle.dumps(Hostile())), "params.log_n")
    # BFV: 2 KB of parameters.
    data = bytearray(bfv.Context(12, 65537, 54, 2).to_bytes())
    body = bytearray(data[:16]) + (16).to_bytes(4, "little") + (65537).to_bytes(8, "little")
    for base in (1 << 55, 1 << 58):
        body += (128).to_bytes(4, "little")
        for i in range(128):
            body += (base + 2 * 65536 * i + 1).to_bytes(8, "little")
    body += bytes(4) + np.float64(3.2).tobytes() + bytes([1, 1]) + bytes(32)
    assert len(body) > 2000
    refused_quickly(lambda: bfv.Context.from_bytes(rnsfhe.reseal(body)), "params.moduli")


def test_limits_are_process_wide_and_raised_explicitly():
    defaults = rnsfhe.get_load_limits()
    assert defaults == {"max_log_n": 16, "max_moduli": 64, "max_words": (1 << 16) * 48,
                        "allow_insecure": False}
    big = ckks.Context(log_n=14, log_scale=40, q0_bits=50, levels=2, special_bits=50)
    data = big.to_bytes()
    with pytest.raises(rnsfhe.DecodeError, match="max_log_n = 13"):
        ckks.Context.from_bytes(data, max_log_n=13)
    with rnsfhe.load_limits(max_log_n=13) as inside:
        assert inside["max_log_n"] == 13
        with pytest.raises(rnsfhe.DecodeError, match="max_log_n = 13"):
            ckks.Context.from_bytes(data)
        # Also for a context already loaded (and cached) under other limits, and for unpickling.
        with pytest.raises(rnsfhe.DecodeError, match="max_log_n = 13"):
            pickle.loads(pickle.dumps(big))
        assert ckks.Context.from_bytes(data, max_log_n=14).n == 1 << 14
    assert rnsfhe.get_load_limits() == defaults
    previous = rnsfhe.set_load_limits(max_moduli=3)
    try:
        assert previous == defaults
        with pytest.raises(rnsfhe.DecodeError, match="max_moduli = 3"):
            ckks.Context.from_bytes(data)
    finally:
        rnsfhe.set_load_limits(**previous)
    assert ckks.Context.from_bytes(data).fingerprint == big.fingerprint


# ------------------------------------------------------------------------------------------------------
# The digest and the MAC
# ------------------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def session():
    return ckks.Session("Rec128N13", rotations=[1])


def test_scale_and_galois_element_flips_are_refused(session):
    ct = session.encrypt(np.linspace(-1, 1, session.slots))
    data = ct.to_bytes()
    # The f64 scale (bytes 16-23): every single-bit flip used to load and change every decrypted value.
    for bit in range(64):
        bad = bytearray(data)
        bad[16 + bit // 8] ^= 1 << (bit % 8)
        with pytest.raises(rnsfhe.DecodeError) as e:
            ckks.Ciphertext.from_bytes(bytes(bad), session.context)
        assert e.value.field == "digest"
    # A Galois element (count @16, first element @20) relabelled: refused.
    keys = session.keys.galois.to_bytes()
    for bit in range(32):
        bad = bytearray(keys)
        bad[20 + bit // 8] ^= 1 << (bit % 8)
        with pytest.raises(rnsfhe.DecodeError, match="digest"):
            ckks.GaloisKeys.from_bytes(bytes(bad), session.context)
    # A residue that stays below its modulus: refused too.
    bad = bytearray(data)
    bad[len(data) // 2] ^= 1
    with pytest.raises(rnsfhe.DecodeError, match="digest"):
        ckks.Ciphertext.from_bytes(bytes(bad), session.context)


def test_mac_mode(session):
    key, other = bytes(range(32)), bytes(32)
    ctx = session.context
    ct = session.encrypt(np.arange(4.0))
    for obj, load in [
        (ctx, lambda d, **k: ckks.Context.from_bytes(d, **k)),
        (ct, lambda d, **k: ckks.Ciphertext.from_bytes(d, ctx, **k)),
        (session.keys.relin, lambda d, **k: ckks.RelinKey.from_bytes(d, ctx, **k)),
        (session.keys.galois, lambda d, **k: ckks.GaloisKeys.from_bytes(d, ctx, **k)),
        (session.keys.public, lambda d, **k: ckks.PublicKey.from_bytes(d, ctx, **k)),
    ]:
        sealed = obj.to_bytes(mac_key=key)
        assert len(sealed) == len(obj.to_bytes()) and sealed != obj.to_bytes()
        assert load(sealed, mac_key=bytearray(key)).to_bytes() == obj.to_bytes()
        for data, k in [(sealed, other), (sealed, None), (obj.to_bytes(), key), (rnsfhe.reseal(sealed), key)]:
            with pytest.raises(rnsfhe.DecodeError, match="MAC") as e:
                load(data, mac_key=k)
            assert e.value.field == "digest"
    back = ckks.Ciphertext.from_bytes(ct.to_bytes(mac_key=key), ctx, mac_key=key)
    # CKKS at scale 2^40: about 30 bits of precision on values of this size.
    assert np.max(np.abs(session.decrypt(back, real=True)[:4] - np.arange(4.0))) < 1e-6
    for bad in (b"short", bytes(33)):
        with pytest.raises(ValueError, match="mac_key must be 32 bytes"):
            ct.to_bytes(mac_key=bad)
    with pytest.raises(TypeError):
        ct.to_bytes(mac_key="a string")
    # BFV objects take the same argument.
    s = bfv.Session(bfv.Context.generate(t=65537, depth=1))
    bct = s.encrypt([1, 2, 3])
    back = bfv.Ciphertext.from_bytes(bct.to_bytes(mac_key=key), s.context, mac_key=key)
    assert list(s.decrypt(back)[:3]) == [1, 2, 3]
    with pytest.raises(rnsfhe.DecodeError, match="MAC"):
        bfv.Ciphertext.from_bytes(bct.to_bytes(mac_key=key), s.context)
