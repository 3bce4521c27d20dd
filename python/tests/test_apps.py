"""rnsfhe.apps: encrypted logistic-regression training (RNS-CKKS Section 5.3) against the numpy reference and
the Rust plaintext procedure, encrypted prediction, the datasets, the metrics and the error cases.

The encrypted runs use the moduli chain of the preset "PaperTable4" (q_0 of 61 bits, primes of 40 bits,
secret of Hamming weight 64, dnum = 3) at N = 2^13, as the Rust tests of rnsfhe-apps do: INSECURE, for speed
(4096 slots: lbw's 256 x 16 packing, or the first 255 samples of uis).
"""

import pickle
import warnings

import numpy as np
import pytest

from rnsfhe import apps, ckks
from rnsfhe._rnsfhe import apps as _apps
from conftest import assert_doctests_pass, assert_public_names_documented

#: Encrypted and plaintext weights agree to 13 bits at least (the weights are of order 1; the CKKS error,
#: about 2^-20 relative per slot at scale 2^40, grows with the sums over up to 2^8 rows): the bound of the
#: Rust tests (crates/rnsfhe-apps/tests/logistic_small.rs).
WEIGHT_TOLERANCE = 1.0 / 8192
#: The acceptance criterion: accuracy and AUC within 1 percentage point of the plaintext procedure.
METRIC_TOLERANCE = 0.01


def small_context(levels: int, rescaling: str = "nominal") -> ckks.Context:
    """**Insecure, for fast tests only**: the "PaperTable4" chain at N = 2^13 with ``levels`` levels and
    special primes covering a key-switching digit (crates/rnsfhe-apps/tests/common/mod.rs)."""
    digit = -(-(levels + 1) // 3)
    special = -(-(61 + 40 * (digit - 1)) // 60)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return ckks.Context(log_n=13, log_scale=40, q0_bits=61, levels=levels, special_primes=special,
                            special_bits=60, dnum=3, secret="hamming:64", rescaling=rescaling,
                            allow_insecure=True)


def session_for(levels: int, rescaling: str = "nominal", layout=None) -> ckks.Session:
    """A session of :func:`small_context` with the rotation keys of lbw's packing (``layout``)."""
    layout = layout or apps.PackedLayout(189, 9)
    return ckks.Session(small_context(levels, rescaling), rotations=layout.rotation_steps, sum_slots=False)


def polynomial_sigmoid(scores, degree=3):
    """The least-squares sigmoid of ``degree`` applied to ``scores`` (what encrypted prediction computes)."""
    return np.polynomial.polynomial.polyval(scores, apps.sigmoid_coefficients(degree))


@pytest.fixture(scope="module")
def lbw():
    """lbw, normalized: (X, y)."""
    return apps.load_lbw()


@pytest.fixture(scope="module")
def lbw_trained(lbw):
    """lbw trained encrypted with the defaults (5 iterations, degree 3) at the 22 levels they need, under
    the paper's fixed nominal scale: (session, model with encrypted weights)."""
    X, y = lbw
    session = session_for(22)
    X_enc, y_enc = apps.encrypt_dataset(session, X, y)
    return session, apps.LogisticRegression().fit(X_enc, y_enc)


def check_against_references(model, X, y, what):
    """Weights within WEIGHT_TOLERANCE of the numpy reference and of the Rust plaintext procedure, accuracy
    and AUC within 1 percentage point; returns the metrics (encrypted, numpy)."""
    params = {k: model.get_params()[k] for k in ("iterations", "sigmoid_degree", "learning_rate")}
    reference = apps.train_numpy(X, y, **params)
    rust = apps.LogisticRegression(**params).fit_plain(X, y).weights_
    diff = np.max(np.abs(model.weights_ - reference))
    assert diff < WEIGHT_TOLERANCE, f"{what}: max weight difference 2^{np.log2(diff):.1f}"
    assert np.max(np.abs(model.weights_ - rust)) < WEIGHT_TOLERANCE
    encrypted = model.evaluate(X, y)
    scores = reference[0] + X @ reference[1:]
    plain = apps.Metrics(apps.accuracy(y, scores > 0), apps.auc(y, scores))
    print(f"{what}: max |beta_enc - beta_numpy| = 2^{np.log2(diff):.1f}; encrypted {encrypted}, "
          f"numpy {plain}")
    assert abs(encrypted.accuracy - plain.accuracy) <= METRIC_TOLERANCE
    assert abs(encrypted.auc - plain.auc) <= METRIC_TOLERANCE
    return encrypted, plain


# ------------------------------------------------------------------------------------------------------
# Encrypted training
# ------------------------------------------------------------------------------------------------------


def test_encrypted_lbw_matches_the_numpy_reference(lbw, lbw_trained):
    X, y = lbw
    session, model = lbw_trained
    # The depth: the inputs at 23 limbs (22 levels), Z one lower, the first iteration 1 level, then 5 each.
    assert model.levels_needed() == 22 and model.levels_needed(packed_z=True) == 21
    assert model.levels_ == [23, 22, 21, 16, 11, 6, 1]
    assert model.encrypted_weights_.level == 1 and model.encrypted_weights_.slots == 4096
    with pytest.raises(apps.NotFittedError, match="encrypted: decrypt them first"):
        model.coef_
    model.decrypt(session)
    assert model.coef_.shape == (1, 9) and model.intercept_.shape == (1,)
    assert np.array_equal(model.weights_, np.concatenate([model.intercept_, model.coef_[0]]))
    encrypted, plain = check_against_references(model, X, y, "lbw, degree 3, 5 iterations")
    assert encrypted.accuracy == plain.accuracy  # 68.78% (130 of 189), AUC 0.722
    assert model.score(X, y) == encrypted.accuracy
    assert list(model.classes_) == [0, 1]


def test_encrypted_z_exact_scales_degree_7_on_uis(lbw):
    # Kim et al.'s client-packed Z: 3 iterations of degree 7 need 1 + 2 * 6 = 13 levels, exactly the chain's.
    X, y = apps.load_uis()
    X, y = X[:255], y[:255]  # 256 x 16 = 4096 slots, the most N = 2^13 holds
    layout = apps.PackedLayout(*X.shape)
    session = session_for(13, "exact", layout)
    model = apps.LogisticRegression(iterations=3, sigmoid_degree=7)
    assert model.levels_needed(packed_z=True) == 13
    Z_enc = apps.encrypt_z(session, X, y)
    assert isinstance(Z_enc, apps.EncryptedZ) and Z_enc.shape == (255, 8)
    model.fit(Z_enc)
    assert model.levels_ == [14, 13, 7, 1]
    model.decrypt(session.decryptor)
    check_against_references(model, X, y, "uis[:255], degree 7, 3 iterations, Z packed by the client")


def test_encrypted_prediction_with_encrypted_and_plain_weights(lbw):
    X, y = lbw
    # 1 + 11 levels of training, 3 kept for a prediction with the degree-3 sigmoid, 1 surplus level.
    session = session_for(16)
    model = apps.LogisticRegression(iterations=3, keep_levels=3)
    assert model.levels_needed() == 15
    model.fit(*apps.encrypt_dataset(session, X, y))
    assert model.levels_[0] == 16, "the surplus level is dropped first"
    assert model.encrypted_weights_.level == 4, "3 levels kept"
    X_enc = apps.encrypt_features(session, X)
    from_encrypted = model.predict_proba(X_enc)  # the weights are still encrypted
    assert isinstance(from_encrypted, apps.EncryptedProbabilities)
    model.decrypt(session)
    expected = polynomial_sigmoid(model.decision_function(X))
    from_plain = model.predict_proba(X_enc)  # with the decrypted weights, encoded
    forced = model.predict_proba(X_enc, encrypted_weights=True)
    for probabilities, what in [(from_encrypted, "encrypted"), (from_plain, "plain"), (forced, "encrypted")]:
        p = probabilities.decrypt(session)
        assert p.shape == (189, 2)
        assert np.allclose(p.sum(axis=1), 1.0)
        err = np.max(np.abs(p[:, 1] - expected))
        print(f"prediction with {what} weights: max error 2^{np.log2(err):.1f}")
        assert err < WEIGHT_TOLERANCE, what
    # Plain prediction: the exact sigmoid.
    proba = model.predict_proba(X)
    assert proba.shape == (189, 2)
    assert np.allclose(proba[:, 1], 1 / (1 + np.exp(-model.decision_function(X))))
    labels = model.predict(X)
    assert labels.shape == (189,) and labels.dtype == np.int64
    assert np.array_equal(labels, (proba[:, 1] > 0.5).astype(int))
    with pytest.raises(TypeError, match="predict_proba"):
        model.predict(X_enc)
    # The encrypted weights are replicated over the training layout's rows: other row counts do not fit.
    X_small = apps.encrypt_features(session, X[:100])  # 128 x 16 = 2048 slots
    with pytest.raises(ValueError, match="2048 slots but the layout packs 4096"):
        model.predict_proba(X_small, encrypted_weights=True)
    assert model.predict_proba(X_small).decrypt(session).shape == (100, 2)  # plain weights: any row count


def test_encrypted_prediction_needs_kept_levels(lbw, lbw_trained):
    X, _ = lbw
    session, model = lbw_trained  # keep_levels = 0: the encrypted weights are at level 1
    X_enc = apps.encrypt_features(session, X)
    with pytest.raises(ckks.NotEnoughLevelsError, match="train with keep_levels") as info:
        model.predict_proba(X_enc, encrypted_weights=True)
    assert (info.value.levels_needed, info.value.levels_available) == (3, 0)


# ------------------------------------------------------------------------------------------------------
# Errors
# ------------------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def small_session():
    """A session with 16 levels and lbw's rotation keys."""
    return session_for(16)


def test_dataset_larger_than_the_slots(small_session):
    X, y = apps.load_uis()  # 575 x 9 columns: 1024 x 16 = 16384 slots; N = 2^13 has 4096
    message = (r"575 samples x 9 columns, padded to 1024 x 16 = 16384 slots, do not fit in 4096 slots "
               r"\(N/2\): use a larger ring degree N \(at least 32768\)")
    with pytest.raises(ValueError, match=message):
        apps.encrypt_dataset(small_session, X, y)
    with pytest.raises(ValueError, match=message):
        apps.encrypt_features(small_session, X)


def test_too_few_levels(lbw, small_session):
    X_enc, y_enc = apps.encrypt_dataset(small_session, *lbw)
    with pytest.raises(ckks.NotEnoughLevelsError, match=r"22 in all, but the ciphertexts have 16") as info:
        apps.LogisticRegression().fit(X_enc, y_enc)
    assert (info.value.levels_needed, info.value.levels_available) == (22, 16)
    assert isinstance(info.value, ValueError) and apps.NotEnoughLevelsError is ckks.NotEnoughLevelsError
    with pytest.raises(ckks.NotEnoughLevelsError, match="26 in all"):
        apps.LogisticRegression(sigmoid_degree=5).fit(X_enc, y_enc)


def test_shape_value_and_label_errors(lbw, small_session):
    X, y = lbw
    s = small_session
    with pytest.raises(ValueError, match="y has 188 labels, but X has 189 samples"):
        apps.encrypt_dataset(s, X, y[:-1])
    with pytest.raises(ValueError, match=r"2-D array of shape \(n_samples, n_features\), got shape \(189,\)"):
        apps.encrypt_dataset(s, X[:, 0], y)
    with pytest.raises(ValueError, match=r"1-D array of labels, got shape \(189, 1\)"):
        apps.train_numpy(X, y[:, None])
    bad = X.copy()
    bad[3, 2] = np.nan
    with pytest.raises(ValueError, match=r"X\[3, 2\] is not finite \(nan\)"):
        apps.encrypt_dataset(s, bad, y)
    bad[3, 2] = np.inf
    with pytest.raises(ValueError, match=r"X\[3, 2\] is not finite \(inf\)"):
        apps.LogisticRegression().fit_plain(bad, y)
    labels = y.copy()
    labels[7] = 2
    with pytest.raises(ValueError, match=r"labels must be 0/1 or -1/\+1: y\[7\] is 2.0"):
        apps.encrypt_dataset(s, X, labels)
    labels[7] = -1
    with pytest.raises(ValueError, match="mixes the labels 0 and -1"):
        apps.encrypt_z(s, X, labels)
    with pytest.raises(TypeError, match="real numbers"):
        apps.train_numpy(np.array([["a", "b"]]), [1])
    with pytest.raises(ValueError, match="empty"):
        apps.normalize(np.zeros((0, 3)))
    # The Rust checks behind the Python ones give the same answers.
    with pytest.raises(ValueError, match="label of sample 0 is 2"):
        apps.PackedLayout(1, 1).pack_labels(np.array([2.0]))
    with pytest.raises(ValueError, match="not finite"):
        apps.PackedLayout(1, 1).pack_x(np.array([[np.nan]]))
    with pytest.raises(ValueError, match="no samples"):
        apps.PackedLayout(0, 3)


def test_usage_errors(lbw, small_session):
    X, y = lbw
    model = apps.LogisticRegression()
    with pytest.raises(apps.NotFittedError, match="not trained yet"):
        model.predict(X)
    with pytest.raises(apps.NotFittedError, match="no encrypted weights"):
        model.decrypt(small_session)
    with pytest.raises(TypeError, match="fit_plain"):
        model.fit(X, y)
    X_enc, y_enc = apps.encrypt_dataset(small_session, X, y)
    with pytest.raises(TypeError, match="y must be EncryptedLabels"):
        model.fit(X_enc, y)
    with pytest.raises(TypeError, match="X must be EncryptedFeatures"):
        model.fit(y_enc, X_enc)
    with pytest.raises(TypeError, match="is encrypted"):
        apps.LogisticRegression().fit_plain(X_enc, y)
    _, y_other = apps.encrypt_dataset(small_session, X[:100], y[:100])
    with pytest.raises(ValueError, match="packed for different shapes"):
        model.fit(X_enc, y_other)
    for bad in [apps.LogisticRegression(sigmoid_degree=4), apps.LogisticRegression(iterations=0),
                apps.LogisticRegression(learning_rate=-1.0), apps.LogisticRegression(keep_levels=-1),
                apps.LogisticRegression(iterations=2.5)]:
        with pytest.raises(ValueError, match="invalid"):
            bad.fit(X_enc, y_enc)
        with pytest.raises(ValueError, match="invalid"):
            bad.fit_plain(X, y)
    with pytest.raises(ValueError, match="degree 3, 5 or 7"):
        apps.train_numpy(X, y, sigmoid_degree=4)
    with pytest.raises(ValueError, match="unknown parameter"):
        model.set_params(alpha=1.0)
    # Keys without the packing's rotations.
    bare = ckks.Session(small_session.context, sum_slots=False)
    with pytest.raises(ValueError, match=r"lack the rotations \[1, -1, 2"):
        apps.encrypt_dataset(bare, X, y)
    # A fitted model on another feature count.
    model.fit_plain(X, y)
    with pytest.raises(ValueError, match="X has 3 features, but the model has 9"):
        model.predict(X[:, :3])
    # One iteration uses 1 + 1 levels; the encrypted model cannot be pickled.
    one = apps.LogisticRegression(iterations=1).fit(X_enc, y_enc)
    assert one.levels_ == [3, 2, 1]
    with pytest.raises(TypeError, match="cannot be pickled"):
        pickle.dumps(one.encrypted_model_)


# ------------------------------------------------------------------------------------------------------
# The plaintext procedures, the datasets, the metrics
# ------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["lbw", "uis"])
@pytest.mark.parametrize("degree", [3, 5, 7])
def test_numpy_reference_equals_the_rust_plaintext_procedure(name, degree):
    X, y = apps.load_lbw() if name == "lbw" else apps.load_uis()
    for iterations, rate in [(5, 10.0), (2, 3.0)]:
        beta = apps.train_numpy(X, y, iterations=iterations, sigmoid_degree=degree, learning_rate=rate)
        rust = apps.LogisticRegression(iterations, degree, rate).fit_plain(X, y).weights_
        assert beta.shape == (X.shape[1] + 1,)
        assert np.max(np.abs(beta - rust)) < 1e-12, (name, degree, iterations)
    # -1/+1 labels train the same model.
    assert np.array_equal(apps.train_numpy(X, 2 * y - 1, sigmoid_degree=degree),
                          apps.train_numpy(X, y, sigmoid_degree=degree))


def test_schedule_and_polynomials_equal_rust():
    for iterations, rate in [(1, 1.0), (5, 10.0), (9, 0.5)]:
        assert np.allclose(apps.nesterov_schedule(iterations, rate), _apps.schedule(iterations, rate),
                           rtol=1e-15, atol=0)
    s = apps.nesterov_schedule()
    assert np.allclose(s[:, 0], 10.0 / np.arange(1, 6))
    assert 0.98 < s[0, 1] < 0.99 and np.all(s[1:, 1] < 0)  # then momentum
    for degree in (3, 5, 7):
        assert list(apps.sigmoid_coefficients(degree)) == _apps.sigmoid_coefficients(degree)
        assert _apps.levels_needed(5, degree) == (21 if degree == 3 else 25)
    with pytest.raises(ValueError):
        apps.nesterov_schedule(0)


def test_datasets():
    X, y = apps.load_lbw()
    assert X.shape == (189, 9) and X.dtype == np.float64 and y.shape == (189,) and y.sum() == 59
    raw, raw_y = apps.load_lbw(normalize=False)
    assert list(raw[0]) == [19.0, 182.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0]
    normalized, scales = apps.normalize(raw)
    assert np.array_equal(normalized, X) and np.array_equal(raw_y, y)
    assert np.allclose(np.max(np.abs(X), axis=0), 1.0)
    assert np.array_equal(raw / scales, X)
    X, y = apps.load_uis()
    assert X.shape == (575, 8) and y.sum() == 147
    assert tuple(_apps.load_dataset("lbw")[2]) == apps.LBW_FEATURES
    assert tuple(_apps.load_dataset("uis")[2]) == apps.UIS_FEATURES
    with pytest.raises(ValueError, match="data/ directory of the rnsfhe repository"):
        apps.load_lbw(path="/nonexistent/lbw.csv")
    with pytest.raises(ValueError, match='unknown dataset "iris"'):
        _apps.load_dataset("iris")
    # A feature that is zero everywhere keeps its values.
    n, s = apps.normalize([[0.0, 2.0], [0.0, -4.0]])
    assert list(s) == [1.0, 4.0] and n.tolist() == [[0.0, 0.5], [0.0, -1.0]]


def test_plain_model_is_scikit_learn_like():
    X, y = apps.load_uis()
    model = apps.LogisticRegression().fit_plain(X, 2 * y - 1)
    assert list(model.classes_) == [-1, 1]
    assert set(np.unique(model.predict(X))) <= {-1, 1}
    proba = model.predict_proba(X)
    assert proba.shape == (575, 2) and np.allclose(proba.sum(axis=1), 1)
    m = model.evaluate(X, y)
    assert m.accuracy == model.score(X, y) == apps.accuracy(y, model.predict(X))
    assert m.auc == apps.auc(y, proba[:, 1]) == apps.auc(y, model.decision_function(X))
    # The plaintext procedure reproduces RNS-CKKS Table 4 on uis (74.43%, AUC 0.59).
    assert round(100 * m.accuracy, 2) == 74.43 and round(m.auc, 2) == 0.60
    assert model.get_params() == {"iterations": 5, "sigmoid_degree": 3, "learning_rate": 10.0,
                                  "keep_levels": 0}
    assert "LogisticRegression(iterations=5" in repr(model.set_params(keep_levels=0))


def test_metrics_against_definitions():
    rng = np.random.default_rng(4)
    y = rng.integers(0, 2, 200)
    scores = np.round(rng.normal(size=200) + y, 1)  # with ties
    positives, negatives = scores[y == 1], scores[y == 0]
    pairs = (positives[:, None] > negatives[None, :]) + 0.5 * (positives[:, None] == negatives[None, :])
    assert apps.auc(y, scores) == pytest.approx(pairs.mean(), abs=1e-12)
    assert apps.accuracy(y, scores > 0) == np.mean((scores > 0) == (y == 1))
    with pytest.raises(ValueError, match="both classes"):
        apps.auc(np.ones(3), [0.1, 0.2, 0.3])
    with pytest.raises(ValueError, match="shape of y_true"):
        apps.auc(y, scores[:-1])
    assert str(apps.Metrics(0.5, 0.75)) == "accuracy 50.00%, AUC 0.750"


def test_packed_layout():
    layout = apps.PackedLayout(189, 9)
    assert (layout.rows, layout.columns, layout.slots, layout.width) == (256, 16, 4096, 10)
    assert sorted(layout.rotation_steps) == sorted([1, -1, 2, -2, 4, -4, 8, -8] + [16 << k for k in range(8)])
    assert pickle.loads(pickle.dumps(layout)) == layout
    assert repr(layout) == "PackedLayout(n_samples=189, n_features=9; 256 x 16 = 4096 slots)"
    small = apps.PackedLayout(3, 2)
    X = np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    y = np.array([1.0, 0.0, 1.0])
    # The product of the packed features and labels is the packed Z.
    assert np.array_equal(small.pack_x(X) * small.pack_labels(y), small.pack_z(X, y))
    assert small.pack_z(X, y).tolist()[:8] == [1.0, 1.0, 2.0, 0.0, -1.0, -3.0, -4.0, 0.0]
    assert small.read_first_column(small.pack_x(X)).tolist() == [1.0, 1.0, 1.0]
    assert small.read_replicated(small.replicate([1.0, 2.0, 3.0])).tolist() == [1.0, 2.0, 3.0]


def test_documentation():
    assert_doctests_pass(apps)
    assert_public_names_documented(apps)
