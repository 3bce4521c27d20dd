"""Encrypted logistic regression with bootstrapping in the loop from Python
(``LogisticRegression.fit(..., bootstrapper=...)``): more iterations than the chain holds, within 1 point
of the plaintext model's accuracy and AUC. The chain is the Rust test's
(crates/rnsfhe-apps/tests/logistic_bootstrap.rs): N = 2^13 for lbw's 4096 slots, scale 2^51, q_0 of 60
bits, Hamming weight 64, 17 levels of bootstrapping and 11 for the training; insecure."""

import numpy as np
import pytest

from rnsfhe import apps, ckks

pytestmark = pytest.mark.filterwarnings("ignore:WARNING. these CKKS parameters:UserWarning")


def test_eight_iterations_bootstrap_the_weights():
    ctx = ckks.Context(log_n=13, log_scale=51, q0_bits=60, levels=28, special_primes=4, special_bits=55,
                       dnum=8, secret="hamming:64", allow_insecure=True)
    X, y = apps.load_lbw()
    layout = apps.PackedLayout(*X.shape)
    btp = ckks.Bootstrapper(ctx, layout.slots)
    assert btp.levels_left == 11
    session = ckks.Session(ctx, rotations=layout.rotation_steps, sum_slots=False, bootstrapper=btp)
    z = apps.encrypt_z(session, X, y)
    lr = apps.LogisticRegression(iterations=8)
    assert lr.levels_needed(packed_z=True) > z.level - 1
    # Without the bootstrapper the chain is too short.
    with pytest.raises(apps.NotEnoughLevelsError):
        apps.LogisticRegression(iterations=8).fit(z)
    lr.fit(z, bootstrapper=btp)
    assert lr.encrypted_model_.bootstraps == 3
    lr.decrypt(session)
    plain = apps.LogisticRegression(iterations=8).fit_plain(X, y)
    assert abs(apps.accuracy(y, lr.predict(X)) - apps.accuracy(y, plain.predict(X))) <= 0.01
    assert abs(apps.auc(y, lr.predict_proba(X)[:, 1]) - apps.auc(y, plain.predict_proba(X)[:, 1])) <= 0.01
    # One refresh adds at most 4 B to a weight (B the bootstrapper's bound), on top of the 2^-13 the
    # training without bootstrapping is held to.
    bound = btp.error_bound(ctx.level_scale(1))["total"]
    assert np.abs(lr.weights_ - plain.weights_).max() <= 4 * bound + 2**-13
