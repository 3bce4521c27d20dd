"""rnsfhe.apps comparisons (PEGASUS Section V.A) at "InsecureTest" size: min / max, max-pooling, bitonic sort
and arg-min / arg-max on numpy arrays, CKKS ciphertexts and LWE ciphertexts of a pegasus.Session, against
numpy within the comparator's error bounds; and the errors of wrong uses. The Rust tests of
crates/rnsfhe-apps/tests/comparison.rs run the hundreds of trials; these check the Python paths."""

import pickle
import warnings

import numpy as np
import pytest

from rnsfhe import apps, pegasus

SLOTS = 16
REPACK = 2.0**-10  # what repacking adds (about 2^-15 of the output range, docs/pegasus.md), with room


def _session(seed):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return pegasus.Session("InsecureTest", slots=SLOTS, seed=seed, allow_insecure=True)


@pytest.fixture(scope="module")
def session():
    return _session(11)


@pytest.fixture(scope="module")
def cmp(session):
    return apps.comparator(session)


def gapped(rng, t, bound, gap):
    """Groups of t values in [-bound, bound] whose minimum is at least `gap` below the others, and its bits."""
    x, bits = [], []
    for _ in range(SLOTS // t):
        low = rng.uniform(-bound, bound - gap)
        at = rng.integers(t)
        group = rng.uniform(low + gap, bound, size=t)
        group[at] = low
        x.extend(group)
        bits.extend(int(i == at) for i in range(t))
    return np.array(x), np.array(bits)


def test_numpy_in_and_out_agree_with_numpy(session, cmp):
    rng = np.random.default_rng(1)
    v = cmp.bound
    assert v == session.input_bound / 2 and cmp.domain == session.input_bound
    x = rng.uniform(-v, v, SLOTS)
    got = apps.sort(x, session=session)
    assert np.max(np.abs(got - np.sort(x))) <= cmp.sort_error_bound(SLOTS) + REPACK
    got = apps.sort(x, session=session, descending=True)
    assert np.max(np.abs(got - np.sort(x)[::-1])) <= cmp.sort_error_bound(SLOTS) + REPACK
    for t in (2, 4):
        groups = x.reshape(-1, t)
        got = apps.min(x, session=session, group=t)
        assert got.shape == (SLOTS // t,)
        assert np.max(np.abs(got - groups.min(axis=1))) <= cmp.tree_error_bound(t) + REPACK
        got = apps.max(x, session=session, group=t)
        assert np.max(np.abs(got - groups.max(axis=1))) <= cmp.tree_error_bound(t) + REPACK
    for t in (4, SLOTS):
        x, bits = gapped(rng, t, v, 1.05 * cmp.argmin_resolution(t))
        got = apps.argmin(x, session=session, group=t)
        assert got.dtype == np.int64 and np.array_equal(got, bits)
        assert np.array_equal(apps.argmax(-x, session=session, group=t), bits)


def test_max_pool(session):
    rng = np.random.default_rng(2)
    for t in (4, 16):
        pool = apps.comparator(session, session.input_bound / t)
        x = rng.uniform(-pool.bound, pool.bound, SLOTS)
        got = apps.max_pool(x, t, session=session)
        assert got.shape == (SLOTS // t,)
        assert np.max(np.abs(got - x.reshape(-1, t).max(axis=1))) <= pool.max_pool_error_bound(t) + REPACK


def test_ckks_ciphertexts_stay_encrypted(session, cmp):
    rng = np.random.default_rng(3)
    x = rng.uniform(-cmp.bound, cmp.bound, SLOTS)
    ct = session.encrypt(x)
    out = apps.sort(ct, session=session)
    assert out.slots == SLOTS
    got = session.decrypt(out, real=True)
    assert np.max(np.abs(got - np.sort(x))) <= cmp.sort_error_bound(SLOTS) + REPACK
    # Arithmetic goes on: the result is an ordinary ciphertext of the session.
    twice = session.decrypt(out + out, real=True)
    assert np.max(np.abs(twice - 2 * got)) < 2.0**-8
    got = session.decrypt(apps.max(ct, session=session, group=8), real=True)
    assert np.max(np.abs(got[:2] - x.reshape(2, 8).max(axis=1))) <= cmp.tree_error_bound(8) + REPACK
    assert np.max(np.abs(got[2:])) <= REPACK


def test_lwe_ciphertexts(session, cmp):
    rng = np.random.default_rng(4)
    x, bits = gapped(rng, 8, cmp.bound, 1.05 * cmp.argmin_resolution(8))
    lwes = session.encrypt(x).to_lwe()
    pair = cmp.pair_error_bound()
    assert abs(session.decrypt_lwe(apps.max(lwes[0], lwes[1], session=session))[0] - max(x[:2])) <= pair
    assert abs(session.decrypt_lwe(apps.min(lwes[0], lwes[1], session=session))[0] - min(x[:2])) <= pair
    out = apps.sort(lwes[:8], session=session)
    assert len(out) == 8 and all(c.dimension == session.lwe_dimension for c in out)
    assert np.max(np.abs(session.decrypt_lwe(out) - np.sort(x[:8]))) <= cmp.sort_error_bound(8)
    mins = apps.min(lwes, session=session, group=8)
    assert np.max(np.abs(session.decrypt_lwe(mins) - x.reshape(2, 8).min(axis=1))) <= cmp.tree_error_bound(8)
    got = session.decrypt_lwe(apps.argmin(lwes, session=session, group=8))
    assert np.max(np.abs(got - bits)) < 0.25
    # The outputs feed further comparisons: the maximum of the two minima.
    top = apps.max(mins[0], mins[1], session=session)
    want = x.reshape(2, 8).min(axis=1).max()
    assert abs(session.decrypt_lwe(top)[0] - want) <= cmp.tree_error_bound(8) + pair


def test_min_and_argmin_from_one_tree(session, cmp):
    rng = np.random.default_rng(5)
    t = 8
    x, bits = gapped(rng, t, cmp.bound, 1.05 * cmp.argmin_resolution(t))
    groups = x.reshape(-1, t)
    # numpy in and out: the minima (one per group) and the bits.
    mins, got = apps.min_and_argmin(x, session=session, group=t)
    assert mins.shape == (SLOTS // t,) and got.dtype == np.int64
    assert np.max(np.abs(mins - groups.min(axis=1))) <= cmp.min_and_argmin_error_bound(t, True) + REPACK
    assert np.array_equal(got, bits)
    maxs, got = apps.max_and_argmax(-x, session=session, group=t)
    assert np.max(np.abs(maxs + groups.min(axis=1))) <= cmp.min_and_argmin_error_bound(t, True) + REPACK
    assert np.array_equal(got, bits)
    # A CKKS ciphertext (one group of all slots): two ciphertexts of the session.
    y, ybits = gapped(rng, SLOTS, cmp.bound, 1.05 * cmp.argmin_resolution(SLOTS))
    m, b = apps.min_and_argmin(session.encrypt(y), session=session)
    assert abs(session.decrypt(m, real=True)[0] - y.min()) <= cmp.min_and_argmin_error_bound(SLOTS, True) + REPACK
    assert np.array_equal(np.rint(session.decrypt(b, real=True)).astype(np.int64), ybits)
    # LWE ciphertexts: the minima at the LWE side, ready for more comparisons.
    lwes = session.encrypt(x).to_lwe()
    mins, got = apps.min_and_argmin(lwes, session=session, group=t)
    assert len(mins) == SLOTS // t and all(c.dimension == session.lwe_dimension for c in mins)
    assert np.max(np.abs(session.decrypt_lwe(mins) - groups.min(axis=1))) <= cmp.min_and_argmin_error_bound(t)
    assert np.max(np.abs(session.decrypt_lwe(got) - bits)) < 0.25


def test_errors(session, cmp):
    x = np.linspace(-1, 1, SLOTS)
    ct = session.encrypt(x)
    lwes = ct.to_lwe()
    with pytest.raises(ValueError, match="power of two"):
        apps.sort(lwes[:6], session=session)
    with pytest.raises(ValueError, match="multiple"):
        apps.argmin(lwes[:6], session=session, group=4)
    with pytest.raises(ValueError, match="multiple"):
        apps.min(ct, session=session, group=3)
    with pytest.raises(ValueError):
        apps.sort([], session=session)
    with pytest.raises(ValueError, match="slots"):
        apps.sort(x[:8], session=session)
    with pytest.raises(ValueError, match="domain"):
        apps.comparator(session, session.input_bound)
    with pytest.raises(ValueError, match="domain"):
        apps.max_pool(x, 4, session=session, bound=session.input_bound / 2)
    with pytest.raises(TypeError, match="pegasus.Session"):
        apps.sort(x, session=object())
    # Table outputs (dimension lut_dimension) are not inputs of a comparison.
    table = session.table(abs)
    with pytest.raises(ValueError, match="dimension"):
        apps.max(session.lut_lwe(lwes[:1], table)[0], lwes[1], session=session)
    # A ciphertext of another session.
    other = _session(12)
    with pytest.raises(ValueError, match="session"):
        apps.sort(other.encrypt(x), session=session)
    with pytest.raises(TypeError, match="pickle"):
        pickle.dumps(cmp)
