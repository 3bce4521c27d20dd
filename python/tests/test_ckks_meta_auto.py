"""META-BTS (``ct.bootstrap(btp, passes)``) and automatic bootstrapping (``Context.evaluator(...,
auto_bootstrap=btp)``, ``Session(..., bootstrapper=btp, auto_bootstrap=True)``) from Python at the
insecure N = 2^11 chain of the Rust tests (crates/rnsfhe-ckks/tests/common/bootstrapping.rs) with 3
levels left after a bootstrapping: the bounds the Rust layer states, the levels, the counter, the errors."""

import numpy as np
import pytest

from rnsfhe import ckks

pytestmark = pytest.mark.filterwarnings("ignore:WARNING. these CKKS parameters:UserWarning")

SLOTS = 64


@pytest.fixture(scope="module")
def ctx():
    # 17 levels of bootstrapping, 3 for the user.
    return ckks.Context(log_n=11, log_scale=51, q0_bits=60, levels=20, special_primes=4, special_bits=55,
                        dnum=6, secret="hamming:64", allow_insecure=True)


@pytest.fixture(scope="module")
def btp(ctx):
    return ckks.Bootstrapper(ctx, SLOTS)


@pytest.fixture(scope="module")
def keys(ctx, btp):
    return ctx.keygen(bootstrapper=btp)


def max_error(want, got):
    return max(np.abs(got.real - want.real).max(), np.abs(got.imag - want.imag).max())


def test_meta_bts_gains_precision(ctx, btp, keys):
    ev = ctx.evaluator(keys)
    enc, dec = ctx.encryptor(keys, ev), ctx.decryptor(keys)
    z = np.random.default_rng(3).uniform(-1, 1, SLOTS)
    ct = enc.encrypt(z, slots=SLOTS)
    want = dec.decrypt(ct)
    one = max_error(want, dec.decrypt(ct.bootstrap(btp)))
    out = ct.bootstrap(btp, passes=2)
    assert out.level == btp.meta_output_level(2) == btp.output_level - 1
    two = max_error(want, dec.decrypt(out))
    bound = btp.meta_error_bound(ct.scale, 2)
    assert set(bound) == {"passes", "shifts", "rounding", "total"}
    assert len(bound["passes"]) == 2 and len(bound["shifts"]) == 1
    assert two <= bound["total"] < bound["passes"][0]
    # Measured: about 24 bits for one pass, 41 for two (the Rust tests' figures).
    assert two * 1024 <= one
    assert max_error(want, dec.decrypt(ev.bootstrap(ct, btp, 2))) <= bound["total"]
    with pytest.raises(ValueError, match="0 passes"):
        ct.bootstrap(btp, passes=0)
    with pytest.raises(ValueError, match="passes must be"):
        ct.bootstrap(btp, passes=-1)


def test_auto_bootstrap_lets_products_go_on(ctx, btp, keys):
    z = np.random.default_rng(4).uniform(-1, 1, SLOTS)
    y = np.sign(z[::-1]) * (0.9 + 0.1 * np.abs(z[::-1]))
    plain = ctx.evaluator(keys)
    auto = ctx.evaluator(keys, auto_bootstrap=btp)
    assert auto.auto_bootstrap and not plain.auto_bootstrap and "auto_bootstrap=True" in repr(auto)
    dec = ctx.decryptor(keys)
    for ev in (plain, auto):
        enc = ctx.encryptor(keys, ev)
        x = ev.drop_to_level(enc.encrypt(z, slots=SLOTS), btp.output_level)
        cy = enc.encrypt(y, slots=SLOTS)
        if ev is plain:
            # Three levels, three products: the fourth fails.
            for _ in range(3):
                x = x * cy
            with pytest.raises(ValueError):
                x * cy
            assert plain.bootstraps_done == 0
            continue
        bound = btp.error_bound(ctx.level_scale(1))["total"]
        for i in range(10):
            before = dec.decrypt(x)
            boots = x.level < 2
            x = x * cy
            err = max_error(before * y, dec.decrypt(x))
            # A bootstrapping adds at most its bound (times |y| <= 1); a product about 2^-42.
            assert err <= (bound if boots else 0) + 2**-35, (i, err)
        assert auto.bootstraps_done == 3


def test_session_opt_in(ctx, btp):
    with pytest.raises(ValueError, match="needs a bootstrapper"):
        ckks.Session(ctx, auto_bootstrap=True)
    s = ckks.Session(ctx, bootstrapper=btp, auto_bootstrap=True)
    rng = np.random.default_rng(5)
    z = rng.uniform(-1, 1, SLOTS)
    y = rng.choice([-1, 1], SLOTS) * rng.uniform(0.9, 1, SLOTS)
    x, cy = s.encrypt(z, slots=SLOTS), s.encrypt(y, slots=SLOTS)
    # From the top (21 limbs): 20 products, then a bootstrapping before products 21, 24 and 27.
    for _ in range(27):
        x = x * cy
    boots = s.evaluator.bootstraps_done
    assert boots == 3
    # Each step's error is carried on multiplied by |y| <= 1: the sum of the steps' bounds.
    bound = btp.error_bound(ctx.level_scale(1))["total"]
    assert np.abs(s.decrypt(x, real=True) - z * y**27).max() <= boots * bound + 27 * 2**-35
    # Without the opt-in the bootstrapping keys are there, and nothing bootstraps by itself.
    plain = ckks.Session(ctx, bootstrapper=btp)
    assert not plain.evaluator.auto_bootstrap
    assert plain.decrypt(plain.encrypt(z, slots=SLOTS).bootstrap(btp), real=True).shape == (SLOTS,)
