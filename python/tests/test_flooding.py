"""CKKS decryption with noise flooding from Python (IND-CPA-D; SECURITY.md): the recommended bits follow the
documented rule, the flooded result loses the predicted precision and no more, and floods that would leave
nothing are refused."""

import math

import numpy as np
import pytest

from rnsfhe import ckks


@pytest.fixture(scope="module")
def session():
    return ckks.Session("Rec128N13", sum_slots=False)


def test_recommended_bits_follow_the_rule():
    # ceil(noise + s/2 + log2(q)/2 - 1/2)
    assert ckks.recommended_flooding_bits(15.0) == math.ceil(15.0 + 15 - 0.5)
    assert ckks.recommended_flooding_bits(15.0, 40, 16) == math.ceil(15.0 + 20 + 2 - 0.5)
    for bad in ((-1.0,), (float("nan"),), (10.0, 129), (10.0, 30, 0)):
        with pytest.raises(ValueError):
            ckks.recommended_flooding_bits(*bad)


def test_flooded_decryption_costs_the_predicted_precision(session):
    x = np.random.default_rng(1).uniform(-1, 1, session.slots)
    ct = session.encrypt(x)
    dec = session.decryptor
    exact = dec.decrypt(ct, real=True)
    assert np.array_equal(exact, dec.decrypt(ct, real=True, flooding_bits=0))
    noise = dec.noise_log2(ct, x)
    assert 5 < noise < 25  # a fresh public-key encryption at N = 2^13
    bits = 20
    flooded = dec.decrypt(ct, real=True, flooding_bits=bits)
    # Each slot's error has standard deviation 2^bits sqrt(slots) / scale (flooding dominates).
    sigma = 2.0**bits * math.sqrt(session.slots) / ct.scale
    err = flooded - x
    assert 0.8 * sigma < np.std(err) < 1.2 * sigma
    assert np.max(np.abs(exact - x)) < sigma / 100  # the unflooded error is far below the flooding


def test_too_much_flooding_is_refused(session):
    ct = session.encrypt(np.ones(4))
    top = session.decryptor.max_flooding_bits(ct)
    assert 20 < top < 40
    session.decryptor.decrypt(ct, flooding_bits=top)
    with pytest.raises(ValueError, match="flooding"):
        session.decryptor.decrypt(ct, flooding_bits=top + 1)
