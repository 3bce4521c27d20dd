"""Applications: logistic-regression training on encrypted data (RNS-CKKS Section 5.3 and Table 4), and
comparisons on PEGASUS data (PEGASUS Section V.A).

**Secure k-means** (docs/apps-kmeans.md): :class:`KMeans`, whose centroid updates run on encrypted points
(PEGASUS Section V.C), with scikit-learn's ``fit`` / ``predict`` / ``cluster_centers_`` / ``labels_``.

**Comparisons** (docs/apps-comparison.md): :func:`min`, :func:`max`, :func:`max_pool`, :func:`sort`,
:func:`argmin` and :func:`argmax` on the LWE ciphertexts, the CKKS ciphertexts or plain numpy arrays of a
:class:`rnsfhe.pegasus.Session`, by its look-up tables; :func:`comparator` gives the :class:`Comparator`
they run on and its error bounds.

**Private decision trees** (PEGASUS Section V.B, docs/apps-decision-tree.md): the client makes keys with
:class:`TreeClient`, the server wraps its fitted scikit-learn ``DecisionTreeClassifier`` with
:meth:`EncryptedTree.from_sklearn` and a public :class:`TreeScaling`; one encrypted query in, one
encrypted label out, sanitized so that it reveals the label and nothing else about the tree::

    client = TreeClient("InsecureTest", allow_insecure=True)        # tests; default "PegasusTable4"
    tree = EncryptedTree.from_sklearn(clf, client.server_key, TreeScaling.ranges(X_train))
    label = client.decrypt(tree.predict(client.encrypt(tree.scaling, x)))   # == clf.predict([x])[0]

The rest of this docstring is about logistic regression.

The method is Kim, Song, Kim, Lee and Cheon's ("Logistic regression model training based on the approximate
homomorphic encryption", BMC Medical Genomics 2018), which the RNS-CKKS paper re-implements for its Table 4:
the whole dataset in **one** ciphertext, Nesterov's accelerated gradient descent (5 iterations by default,
learning rate ``alpha_t = learning_rate / (t + 1)``), the sigmoid replaced by its least-squares polynomial
on [-8, 8] of degree 3, 5 or 7. The computation runs in Rust (crate ``rnsfhe-apps``); this module is its
scikit-learn-like front end.

Who does what:

1. the **data owner** normalizes the features into [-1, 1] (:func:`load_lbw` / :func:`load_uis` do it,
   :func:`normalize` for other data), makes a CKKS session with the rotation keys of the packing
   (:class:`PackedLayout` ``.rotation_steps``) and encrypts ``X`` and ``y`` with :func:`encrypt_dataset`:
   the rows ``(1, x_i)`` of ``X`` in one ciphertext (:class:`EncryptedFeatures`), the labels as -1/+1 in
   the same layout in another (:class:`EncryptedLabels`);
2. the **server** trains, ``LogisticRegression().fit(X_enc, y_enc)``, with the evaluation keys only: it
   first multiplies the two ciphertexts into the packed matrix ``Z = [y_i (1, x_i)]`` of the paper (one
   level), then runs the iterations; the weights stay encrypted (``encrypted_weights_``);
3. the **data owner** decrypts the model, ``model.decrypt(session)``, and uses it like any scikit-learn
   classifier: ``coef_``, ``intercept_``, ``predict_proba(X)``, ``predict(X)``, ``score(X, y)``,
   ``evaluate(X, y)`` (accuracy and AUC). ``predict_proba`` also takes encrypted features
   (:func:`encrypt_features`) and returns encrypted probabilities (:class:`EncryptedProbabilities`).

Kim et al.'s data owner packs ``Z = [y_i (1, x_i)]`` herself; :func:`encrypt_z` does that
(:class:`EncryptedZ`, trained by ``LogisticRegression().fit(Z_enc)``) and saves the level of the product.

Depth: ``LogisticRegression().levels_needed()`` levels: 1 for ``Z`` (not with :func:`encrypt_z`), 1 for
the first iteration and ``ceil(log2(degree + 1)) + 3`` for each further one, so 22 (21 on ``Z``) for 5
iterations of degree 3 and 26 (25) for degrees 5 and 7, against the 25 of the preset "PaperTable4". Too
few raise :class:`rnsfhe.ckks.NotEnoughLevelsError` before anything is computed.

The plaintext references: :meth:`LogisticRegression.fit_plain` runs the Rust reference procedure, and
:func:`train_numpy` the same procedure written in numpy (same polynomial, schedule and iterations); the
encrypted training agrees with both up to the CKKS error (weights to about 2^-24 at scale 2^40).

>>> import numpy as np, warnings
>>> from rnsfhe import apps, ckks
>>> X, y = apps.load_lbw()                       # 189 x 9, normalized into [-1, 1], labels 0/1
>>> layout = apps.PackedLayout(*X.shape)         # 256 x 16 = 4096 slots
>>> with warnings.catch_warnings():              # insecure, small: N = 2^13 with 22 levels (tests only)
...     warnings.simplefilter("ignore")
...     ctx = ckks.Context(log_n=13, log_scale=40, q0_bits=61, levels=22, special_primes=6,
...                        special_bits=60, dnum=3, secret="hamming:64", allow_insecure=True)
>>> session = ckks.Session(ctx, rotations=layout.rotation_steps, sum_slots=False)
>>> X_enc, y_enc = apps.encrypt_dataset(session, X, y)
>>> model = apps.LogisticRegression().fit(X_enc, y_enc)     # the server: weights stay encrypted
>>> model.decrypt(session).coef_.shape                      # the data owner
(1, 9)
>>> reference = apps.train_numpy(X, y)                      # the same procedure in numpy
>>> bool(np.max(np.abs(model.weights_ - reference)) < 1e-5)
True
>>> m = model.evaluate(X, y)
>>> round(m.accuracy, 4), round(m.auc, 4), apps.PAPER_TABLE4["lbw"]
(0.6878, 0.7216, Metrics(accuracy=0.6973, auc=0.62))

Errors are ValueError with the sizes at fault (shapes, non-finite values, labels other than 0/1 or -1/+1,
a dataset whose padded matrix needs more slots than N/2, which names the smallest ring that fits),
TypeError for plain data where encrypted data is expected and vice versa, NotEnoughLevelsError for too few
levels, and :class:`NotFittedError` for a model without (decrypted) weights.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple, Type, Union

import numpy as np

from . import ckks
from ._rnsfhe import apps as _apps
from ._rnsfhe.apps import Comparator, EncryptedModel, PackedLayout
from ._rnsfhe.apps import (
    EncryptedLabel,
    EncryptedQuery,
    EncryptedTree,
    TreeClient,
    TreeScaling,
    TreeServerKey,
)
from ._rnsfhe.apps import KMeansServer, KMeansSession
from ._rnsfhe.lwe import LweCiphertext
from ._rnsfhe.pegasus import Pipeline as _Pipeline
from .ckks import NotEnoughLevelsError

#: Feature names of the lbw dataset (RNS-CKKS Table 4: 9 features; race coded by two indicators).
LBW_FEATURES = ("age", "lwt", "race_black", "race_other", "smoke", "ptl", "ht", "ui", "ftv")
#: Feature names of the uis dataset (RNS-CKKS Table 4: 8 features).
UIS_FEATURES = ("AGE", "BECK", "HC", "IV", "NDT", "RACE", "TREAT", "SITE")

#: Kim et al.'s least-squares approximations of the sigmoid on [-8, 8], coefficients of x^0, x^1, ...
SIGMOID_LEAST_SQUARES = {
    3: (0.5, 0.15012, 0.0, -0.001593),
    5: (0.5, 0.19131, 0.0, -0.0045963, 0.0, 0.0000412332),
    7: (0.5, 0.21687, 0.0, -0.008191, 0.0, 0.00016581, 0.0, -0.0000011959),
}

#: lambda_0 of Nesterov's sequence (Kim et al.'s implementation).
NESTEROV_LAMBDA0 = 0.01


@dataclasses.dataclass(frozen=True)
class Metrics:
    """Accuracy (fraction of samples classified correctly, in [0, 1]) and AUC (area under the ROC curve)."""

    accuracy: float
    auc: float

    def __str__(self) -> str:
        return f"accuracy {100 * self.accuracy:.2f}%, AUC {self.auc:.3f}"


#: RNS-CKKS Table 4: accuracy and AUC of the encrypted training (5 iterations, degree-3 sigmoid).
PAPER_TABLE4 = {"lbw": Metrics(0.6973, 0.62), "uis": Metrics(0.7443, 0.59)}


class NotFittedError(ValueError, AttributeError):
    """The model has no weights to use yet: call ``fit`` or ``fit_plain`` first, and ``decrypt`` after an
    encrypted ``fit`` (a ValueError and an AttributeError, as scikit-learn's)."""


# ------------------------------------------------------------------------------------------------------
# Input checks
# ------------------------------------------------------------------------------------------------------

_ENCRYPTED: Tuple[Type[Any], ...] = ()  # filled below with the encrypted containers, for the type checks


def _matrix(X: Any, what: str = "X", n_features: Optional[int] = None) -> np.ndarray:
    """``X`` as a C-contiguous float64 array of shape (n_samples, n_features), checked."""
    if isinstance(X, _ENCRYPTED + (ckks.Ciphertext,)):
        raise TypeError(f"{what} is encrypted ({type(X).__name__}); this call takes a plain 2-D array")
    a = np.asarray(X)
    if a.dtype.kind not in "biuf":
        raise TypeError(f"{what} must hold real numbers, got dtype {a.dtype}")
    if a.ndim != 2:
        raise ValueError(f"{what} must be a 2-D array of shape (n_samples, n_features), got shape {a.shape}")
    if a.shape[0] == 0 or a.shape[1] == 0:
        raise ValueError(f"{what} is empty (shape {a.shape}): it needs at least one sample and one feature")
    if n_features is not None and a.shape[1] != n_features:
        raise ValueError(f"{what} has {a.shape[1]} features, but the model has {n_features}")
    a = np.ascontiguousarray(a, dtype=np.float64)
    bad = np.argwhere(~np.isfinite(a))
    if bad.size:
        i, j = bad[0]
        raise ValueError(f"{what}[{i}, {j}] is not finite ({a[i, j]}): remove or impute it first")
    return a


def _labels(y: Any, n_samples: Optional[int], what: str = "y") -> Tuple[np.ndarray, Tuple[int, int]]:
    """``y`` as a float64 array of ``n_samples`` labels (any number if None), all 0/1 or all -1/+1, and the
    classes (0, 1) or (-1, 1)."""
    if isinstance(y, _ENCRYPTED + (ckks.Ciphertext,)):
        raise TypeError(f"{what} is encrypted ({type(y).__name__}); this call takes a plain 1-D array")
    a = np.asarray(y)
    if a.dtype.kind not in "biuf":
        raise TypeError(f"{what} must hold the labels 0/1 or -1/+1, got dtype {a.dtype}")
    if a.ndim != 1:
        raise ValueError(f"{what} must be a 1-D array of labels, got shape {a.shape} (use y.ravel())")
    if n_samples is not None and len(a) != n_samples:
        raise ValueError(f"{what} has {len(a)} labels, but X has {n_samples} samples")
    a = a.astype(np.float64)
    for allowed, classes in (((0.0, 1.0), (0, 1)), ((-1.0, 1.0), (-1, 1))):
        if np.all(np.isin(a, allowed)):
            return a, classes
    outside = np.flatnonzero(~np.isin(a, (-1.0, 0.0, 1.0)))
    if outside.size:
        i = outside[0]
        raise ValueError(f"labels must be 0/1 or -1/+1: {what}[{i}] is {a[i]}")
    raise ValueError(f"{what} mixes the labels 0 and -1: use 0/1 or -1/+1")


def _signed(y: np.ndarray) -> np.ndarray:
    """Labels 0/1 or -1/+1 as -1/+1."""
    return np.where(y > 0, 1.0, -1.0)


# ------------------------------------------------------------------------------------------------------
# Datasets
# ------------------------------------------------------------------------------------------------------


def load_lbw(*, normalize: bool = True, path: Optional[str] = None) -> Tuple[np.ndarray, np.ndarray]:
    """The low birth weight study of RNS-CKKS Table 4 (Hosmer and Lemeshow; R's MASS ``birthwt``):
    ``(X, y)`` with ``X`` float64 of shape (189, 9) (features :data:`LBW_FEATURES`; race as two
    indicators, white the reference) and ``y`` float64 labels 0/1 (``low``, 59 positives).

    Read by the Rust loader from the repository's ``data/lbw.csv`` (or from ``path``); with ``normalize``
    every feature is divided by its largest absolute value, as the encrypted training expects (see
    :func:`normalize`). Raises ValueError if the file cannot be read, saying where the data live.
    """
    X, y, _ = _apps.load_dataset("lbw", path, normalize)
    return X, y


def load_uis(*, normalize: bool = True, path: Optional[str] = None) -> Tuple[np.ndarray, np.ndarray]:
    """The UMARU impact study of RNS-CKKS Table 4 (Hosmer, Lemeshow and May; R's quantreg ``uis``):
    ``(X, y)`` with ``X`` float64 of shape (575, 8) (features :data:`UIS_FEATURES`) and ``y`` float64
    labels 0/1 (``DFREE``, 147 positives, derived from the time to relapse as data/README.md says).

    As :func:`load_lbw`: from the repository's ``data/uis.csv`` or ``path``, normalized by default.
    """
    X, y, _ = _apps.load_dataset("uis", path, normalize)
    return X, y


def normalize(X: Any) -> Tuple[np.ndarray, np.ndarray]:
    """``(X / scales, scales)``: every feature divided by its largest absolute value over the samples
    (1 for a feature that is zero everywhere), into [-1, 1], as the Rust ``Dataset::normalize``. The
    inner products of training then stay inside [-8, 8], where the sigmoid polynomials approximate the
    sigmoid. Apply ``X_new / scales`` to new samples. Raises ValueError or TypeError for a bad ``X``."""
    a = _matrix(X)
    scales = np.max(np.abs(a), axis=0)
    scales[scales == 0] = 1.0
    return a / scales, scales


# ------------------------------------------------------------------------------------------------------
# The numpy reference
# ------------------------------------------------------------------------------------------------------


def sigmoid_coefficients(degree: int = 3) -> np.ndarray:
    """The least-squares sigmoid of ``degree`` 3, 5 or 7 on [-8, 8] (Kim et al.), coefficients of x^0,
    x^1, ... as float64 (:data:`SIGMOID_LEAST_SQUARES`). Raises ValueError for another degree."""
    if degree not in SIGMOID_LEAST_SQUARES:
        raise ValueError(f"sigmoid degree {degree}: the least-squares sigmoids have degree 3, 5 or 7")
    return np.array(SIGMOID_LEAST_SQUARES[degree])


def nesterov_schedule(iterations: int = 5, learning_rate: float = 10.0) -> np.ndarray:
    """The steps of training, an array of shape (iterations, 2): row ``t`` is ``(alpha_t, gamma_t)``, the
    learning rate ``learning_rate / (t + 1)`` and the mixing ``gamma_t = (1 - lambda_t) / lambda_(t+1)``
    of Nesterov's sequence ``lambda_(t+1) = (1 + sqrt(1 + 4 lambda_t^2)) / 2``, ``lambda_0 = 0.01``.
    Raises ValueError for fewer than 1 iteration or a learning rate that is not a finite number > 0."""
    if int(iterations) != iterations or iterations < 1:
        raise ValueError(f"iterations = {iterations}: training needs at least one iteration")
    if not (np.isfinite(learning_rate) and learning_rate > 0):
        raise ValueError(f"learning rate {learning_rate}: it must be a finite number > 0")
    steps = np.empty((int(iterations), 2))
    lam = NESTEROV_LAMBDA0
    for t in range(int(iterations)):
        nxt = (1.0 + np.sqrt(1.0 + 4.0 * lam * lam)) / 2.0
        steps[t] = (learning_rate / (t + 1), (1.0 - lam) / nxt)
        lam = nxt
    return steps


def train_numpy(X: Any, y: Any, *, iterations: int = 5, sigmoid_degree: int = 3,
                learning_rate: float = 10.0) -> np.ndarray:
    """The training procedure in numpy, the reference of the encrypted training: the weights ``beta``
    (intercept first, shape (n_features + 1,)).

    With ``z_i = y_i (1, x_i)`` (``y_i`` as -1/+1), ``beta = v = 0`` and, for each step ``(alpha, gamma)``
    of :func:`nesterov_schedule`::

        g     = (alpha / n) sum_i sigma(-z_i^T v) z_i      (sigma: sigmoid_coefficients(sigmoid_degree))
        beta' = v + g
        v     = (1 - gamma) beta' + gamma beta
        beta  = beta'

    Normalize ``X`` first (:func:`normalize`). Raises ValueError or TypeError for bad inputs.
    """
    a = _matrix(X)
    labels, _ = _labels(y, len(a))
    coeffs = sigmoid_coefficients(sigmoid_degree)
    schedule = nesterov_schedule(iterations, learning_rate)
    Z = _signed(labels)[:, None] * np.hstack([np.ones((len(a), 1)), a])
    n = len(a)
    beta = np.zeros(Z.shape[1])
    v = np.zeros(Z.shape[1])
    for alpha, gamma in schedule:
        h = np.polynomial.polynomial.polyval(-(Z @ v), coeffs)
        nxt = v + alpha / n * (h @ Z)
        v = (1.0 - gamma) * nxt + gamma * beta
        beta = nxt
    return beta


# ------------------------------------------------------------------------------------------------------
# Metrics
# ------------------------------------------------------------------------------------------------------


def accuracy(y_true: Any, y_pred: Any) -> float:
    """The fraction of predicted labels ``y_pred`` equal to ``y_true`` (each 0/1 or -1/+1; 0 and -1 both
    mean the negative class), by the Rust metrics. Raises ValueError for mismatched lengths or other
    labels."""
    truth, _ = _labels(y_true, None, "y_true")
    pred, _ = _labels(y_pred, len(truth), "y_pred")
    return _apps.accuracy_of_scores(_signed(pred).tolist(), truth.tolist())


def auc(y_true: Any, y_score: Any) -> float:
    """The area under the ROC curve of the scores ``y_score`` (any increasing function of the probability
    of the positive class: decision values or probabilities) against ``y_true`` (0/1 or -1/+1), by the
    rank statistic with ties counting one half (Rust). Raises ValueError for mismatched lengths,
    non-finite scores, other labels or a single class."""
    truth, _ = _labels(y_true, None, "y_true")
    scores = np.asarray(y_score, dtype=np.float64)
    if scores.shape != truth.shape:
        raise ValueError(f"y_score must have the shape of y_true, {truth.shape}, got {scores.shape}")
    return _apps.auc_of_scores(scores.tolist(), truth.tolist())


# ------------------------------------------------------------------------------------------------------
# Encrypted data
# ------------------------------------------------------------------------------------------------------


class _EncryptedPacked:
    """A matrix packed by ``layout`` (:class:`PackedLayout`) and encrypted in one CKKS ciphertext
    (``ciphertext``, of ``layout.slots`` slots). The shape is public; the values are not."""

    def __init__(self, ciphertext: ckks.Ciphertext, layout: PackedLayout) -> None:
        if not isinstance(ciphertext, ckks.Ciphertext):
            raise TypeError(f"expected a rnsfhe.ckks.Ciphertext, got {type(ciphertext).__name__}")
        if ciphertext.slots != layout.slots:
            raise ValueError(f"the ciphertext has {ciphertext.slots} slots, the layout {layout.slots}: "
                             "encrypt the packed values with session.encrypt(values, slots=layout.slots)")
        self.ciphertext = ciphertext
        self.layout = layout

    @property
    def n_samples(self) -> int:
        """Number of samples."""
        return self.layout.n_samples

    @property
    def n_features(self) -> int:
        """Number of features (without the constant column)."""
        return self.layout.n_features

    @property
    def shape(self) -> Tuple[int, int]:
        """``(n_samples, n_features)``, as the plain array's."""
        return (self.n_samples, self.n_features)

    @property
    def level(self) -> int:
        """The ciphertext's level (limbs; ``level - 1`` rescalings remain)."""
        return self.ciphertext.level

    def __repr__(self) -> str:
        return f"{type(self).__name__}(shape={self.shape}, level={self.level}, slots={self.layout.slots})"


class EncryptedFeatures(_EncryptedPacked):
    """The rows ``(1, x_i)`` of a feature matrix, packed by ``layout`` (:class:`PackedLayout`:
    ``layout.pack_x``) and encrypted in one ciphertext (``ciphertext``). Made by :func:`encrypt_dataset`
    (for training) or :func:`encrypt_features` (for prediction). Attributes ``ciphertext``, ``layout``,
    ``n_samples``, ``n_features``, ``shape``, ``level``."""


class EncryptedLabels(_EncryptedPacked):
    """Labels as -1/+1, ``y_i`` in the ``n_features + 1`` entries of row ``i`` of ``layout``
    (``layout.pack_labels``), encrypted in one ciphertext: their product with :class:`EncryptedFeatures`
    of the same layout is the matrix ``Z`` of the training. ``classes`` is the label encoding the data
    owner used, (0, 1) or (-1, 1) (public: the encoding, not the labels). Made by
    :func:`encrypt_dataset`."""

    def __init__(self, ciphertext: ckks.Ciphertext, layout: PackedLayout,
                 classes: Tuple[int, int] = (0, 1)) -> None:
        super().__init__(ciphertext, layout)
        self.classes = tuple(classes)


class EncryptedZ(EncryptedLabels):
    """The training matrix ``Z = [y_i (1, x_i)]`` (``y_i`` as -1/+1) packed by ``layout``
    (``layout.pack_z``) and encrypted in one ciphertext, as Kim et al.'s data owner prepares it: training
    on it (``LogisticRegression().fit(Z_enc)``) uses one level less than on separately encrypted features
    and labels. ``classes`` as for :class:`EncryptedLabels`. Made by :func:`encrypt_z`."""


class EncryptedProbabilities:
    """Encrypted ``P(y = 1 | x_i)`` by the least-squares sigmoid polynomial (in column 0 of row ``i`` of
    ``layout``): the result of ``LogisticRegression.predict_proba`` on :class:`EncryptedFeatures`.
    Decrypt with :meth:`decrypt`."""

    def __init__(self, ciphertext: ckks.Ciphertext, layout: PackedLayout) -> None:
        self.ciphertext = ciphertext
        self.layout = layout

    def decrypt(self, key: Any) -> np.ndarray:
        """The probabilities as scikit-learn's ``predict_proba`` returns them: float64 of shape
        (n_samples, 2), columns ``P(y = 0)`` and ``P(y = 1)``. ``key`` is a ``ckks.Session`` or a
        ``ckks.Decryptor`` (the data owner's secret key)."""
        decryptor = getattr(key, "decryptor", key)
        p = self.layout.read_first_column(decryptor.decrypt(self.ciphertext, real=True))
        return np.column_stack([1.0 - p, p])

    def __repr__(self) -> str:
        return f"EncryptedProbabilities(n_samples={self.layout.n_samples}, level={self.ciphertext.level})"


_ENCRYPTED = (_EncryptedPacked, EncryptedProbabilities)


def _check_session(session: Any, layout: PackedLayout) -> None:
    """ValueError unless the session's ring holds ``layout`` and its keys have the rotations training
    needs."""
    if not (hasattr(session, "encrypt") and hasattr(session, "context") and hasattr(session, "keys")):
        raise TypeError(f"expected a rnsfhe.ckks.Session, got {type(session).__name__}")
    layout.check_fits(session.context.slots)
    have = set(session.keys.rotations)
    missing = [s for s in layout.rotation_steps if s not in have]
    if missing:
        raise ValueError(
            f"the session's keys lack the rotations {missing} that training and prediction on "
            f"{layout.n_samples} x {layout.n_features} data use: make the session with "
            f"ckks.Session(context, rotations=apps.PackedLayout({layout.n_samples}, {layout.n_features})"
            ".rotation_steps, sum_slots=False)"
        )


def encrypt_features(session: ckks.Session, X: Any) -> EncryptedFeatures:
    """The data owner's step for encrypted prediction: the rows ``(1, x_i)`` of ``X`` (float64, shape
    (n_samples, n_features), normalized as for training) packed by ``PackedLayout(*X.shape)`` and
    encrypted at the top level of ``session`` (a ``ckks.Session`` with the layout's rotation keys).

    Raises ValueError for a bad ``X``, a layout that needs more slots than N/2 (naming the sizes and the
    smallest ring degree that fits) or missing rotation keys.
    """
    a = _matrix(X)
    layout = PackedLayout(*a.shape)
    _check_session(session, layout)
    return EncryptedFeatures(session.encrypt(layout.pack_x(a), slots=layout.slots), layout)


def encrypt_dataset(session: ckks.Session, X: Any, y: Any) -> Tuple[EncryptedFeatures, EncryptedLabels]:
    """The data owner's step for encrypted training: ``(X_enc, y_enc)`` for ``LogisticRegression.fit``.

    ``X`` (float64, shape (n_samples, n_features), normalized into [-1, 1]: :func:`normalize`) is packed
    as the rows ``(1, x_i)`` (:class:`EncryptedFeatures`) and ``y`` (labels 0/1 or -1/+1) as -1/+1 in the
    same layout (:class:`EncryptedLabels`), each encrypted in one ciphertext at the top level of
    ``session``, a ``ckks.Session`` whose keys include ``PackedLayout(*X.shape).rotation_steps``.

    Raises ValueError for mismatched shapes, non-finite values, other labels, a layout that needs more
    slots than N/2 (naming the sizes and the smallest ring degree that fits), or missing rotation keys;
    TypeError for non-numeric data.
    """
    a = _matrix(X)
    labels, classes = _labels(y, len(a))
    layout = PackedLayout(*a.shape)
    _check_session(session, layout)
    x_ct = session.encrypt(layout.pack_x(a), slots=layout.slots)
    y_ct = session.encrypt(layout.pack_labels(labels), slots=layout.slots)
    return EncryptedFeatures(x_ct, layout), EncryptedLabels(y_ct, layout, classes)


def encrypt_z(session: ckks.Session, X: Any, y: Any) -> EncryptedZ:
    """Kim et al.'s packing for encrypted training: the matrix ``Z = [y_i (1, x_i)]`` computed by the data
    owner and encrypted in one ciphertext (:class:`EncryptedZ`), for ``LogisticRegression().fit(Z_enc)``.
    Training then needs one level less than after :func:`encrypt_dataset` (21 instead of 22 for 5
    iterations of degree 3; 25 instead of 26 for degrees 5 and 7, which the preset "PaperTable4" holds).
    Arguments and errors as :func:`encrypt_dataset`.
    """
    a = _matrix(X)
    labels, classes = _labels(y, len(a))
    layout = PackedLayout(*a.shape)
    _check_session(session, layout)
    return EncryptedZ(session.encrypt(layout.pack_z(a, labels), slots=layout.slots), layout, classes)


# ------------------------------------------------------------------------------------------------------
# The estimator
# ------------------------------------------------------------------------------------------------------

_PARAMS = ("iterations", "sigmoid_degree", "learning_rate", "keep_levels")


class LogisticRegression:
    """Logistic regression trained on encrypted data by Nesterov's accelerated gradient with a
    least-squares sigmoid (Kim et al. 2018; RNS-CKKS Section 5.3), with a scikit-learn-like interface.

    ``LogisticRegression(iterations=5, sigmoid_degree=3, learning_rate=10.0, keep_levels=0)``:

    * ``iterations``: Nesterov iterations (5 in RNS-CKKS Table 4);
    * ``sigmoid_degree``: 3, 5 or 7, the least-squares polynomial replacing the sigmoid on [-8, 8];
    * ``learning_rate``: ``a`` in ``alpha_t = a / (t + 1)``;
    * ``keep_levels``: levels left in the encrypted weights (``1 + ceil(log2(degree + 1))``, 3 for degree
      3, lets the server predict on encrypted features with the still encrypted weights).

    Training: :meth:`fit` on :class:`EncryptedFeatures` and :class:`EncryptedLabels`
    (:func:`encrypt_dataset`), which leaves the weights encrypted (``encrypted_weights_``) until
    :meth:`decrypt`; :meth:`fit_plain` on plain arrays (the Rust reference procedure). Then ``coef_``
    (shape (1, n_features)), ``intercept_`` (shape (1,)), ``weights_`` (intercept first), ``classes_``,
    :meth:`decision_function`, :meth:`predict_proba`, :meth:`predict`, :meth:`score` (accuracy) and
    :meth:`evaluate` (accuracy and AUC) on plain data; :meth:`predict_proba` also on encrypted features.
    Prediction on plain data uses the exact sigmoid (the polynomial is only the training's device);
    encrypted prediction the polynomial.
    """

    def __init__(self, iterations: int = 5, sigmoid_degree: int = 3, learning_rate: float = 10.0,
                 keep_levels: int = 0) -> None:
        self.iterations = iterations
        self.sigmoid_degree = sigmoid_degree
        self.learning_rate = learning_rate
        self.keep_levels = keep_levels
        self.encrypted_model_: Optional[EncryptedModel] = None
        self._weights: Optional[np.ndarray] = None

    # -- parameters ------------------------------------------------------------------------------------

    def get_params(self, deep: bool = True) -> Dict[str, Any]:
        """The constructor's parameters, as a dict (scikit-learn's convention)."""
        return {name: getattr(self, name) for name in _PARAMS}

    def set_params(self, **params: Any) -> "LogisticRegression":
        """Sets constructor parameters by name; returns ``self``. Raises ValueError for an unknown name."""
        for name, value in params.items():
            if name not in _PARAMS:
                raise ValueError(f"unknown parameter {name!r}: expected one of {', '.join(_PARAMS)}")
            setattr(self, name, value)
        return self

    def levels_needed(self, packed_z: bool = False) -> int:
        """Levels :meth:`fit` needs in the encrypted inputs (``ct.level - 1``): 1 to combine features and
        labels into ``Z`` (none if ``packed_z``: training on :class:`EncryptedZ`), ``1 + (iterations - 1)
        (ceil(log2(degree + 1)) + 3)`` for the iterations, and ``keep_levels``. 22 for the defaults (21 on
        ``Z``). Raises ValueError for invalid settings."""
        iterations, degree, _, keep = self._settings()
        return (0 if packed_z else 1) + _apps.levels_needed(iterations, degree) + keep

    def _settings(self) -> Tuple[int, int, float, int]:
        """``(iterations, sigmoid_degree, learning_rate, keep_levels)`` as int, int, float, int; ValueError
        for values that are not whole numbers (or negative); the Rust side checks the rest."""
        out = []
        for name in ("iterations", "sigmoid_degree", "keep_levels"):
            value = getattr(self, name)
            if isinstance(value, bool) or not float(value).is_integer() or value < 0:
                raise ValueError(f"invalid {name}: {value!r}: it must be a whole number >= 0")
            out.append(int(value))
        return out[0], out[1], float(self.learning_rate), out[2]

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.get_params().items())
        return f"LogisticRegression({args})"

    # -- training --------------------------------------------------------------------------------------

    def fit(self, X: Union[EncryptedFeatures, EncryptedZ],
            y: Optional[EncryptedLabels] = None, *,
            bootstrapper: Optional[ckks.Bootstrapper] = None) -> "LogisticRegression":
        """Trains on encrypted data (the server's step); returns ``self`` with ``encrypted_model_``, whose
        ``weights`` ciphertext holds ``beta`` (intercept first), and ``levels_``.

        ``fit(X_enc, y_enc)`` with ``X_enc, y_enc = encrypt_dataset(session, X, y)``: the product of the two
        ciphertexts is the packed matrix ``Z`` (1 level); or ``fit(Z_enc)`` with ``Z_enc = encrypt_z(session,
        X, y)``. The iterations then run on the evaluator the ciphertexts are attached to (it needs the
        relinearization key and the Galois keys of ``X.layout.rotation_steps``), with the GIL released.
        With ``bootstrapper`` (a :class:`rnsfhe.ckks.Bootstrapper` of ``X.layout.slots`` slots, whose keys
        the session made: ``ckks.Session(..., bootstrapper=...)``) there may be more iterations than the
        chain holds: the weights are bootstrapped when the levels run out
        (``encrypted_model_.bootstraps`` counts the bootstrappings; the weights must stay below 4 in
        magnitude).

        Raises TypeError for plain arrays (use :meth:`fit_plain`, or encrypt them), ValueError for
        mismatched layouts or invalid settings, NotEnoughLevelsError (levels needed and available) if the
        ciphertexts have fewer than :meth:`levels_needed` levels and no bootstrapper is given.
        """
        if isinstance(X, EncryptedZ):
            if y is not None:
                raise TypeError("fit(Z_enc) takes no y: the labels are packed in Z (encrypt_z)")
            cts: Tuple[ckks.Ciphertext, Optional[ckks.Ciphertext]] = (X.ciphertext, None)
            classes = X.classes
        else:
            if not isinstance(X, EncryptedFeatures):
                raise TypeError(
                    "fit trains on encrypted data: X must be EncryptedFeatures (with y EncryptedLabels, "
                    "from rnsfhe.apps.encrypt_dataset(session, X, y)) or EncryptedZ (encrypt_z); for the "
                    "plaintext procedure call fit_plain(X, y)"
                )
            if not isinstance(y, EncryptedLabels) or isinstance(y, EncryptedZ):
                raise TypeError("fit trains on encrypted data: y must be EncryptedLabels, from "
                                "rnsfhe.apps.encrypt_dataset(session, X, y)")
            if X.layout != y.layout:
                raise ValueError(f"X and y were packed for different shapes: {X.layout} and {y.layout}")
            cts = (X.ciphertext, y.ciphertext)
            classes = y.classes
        self.encrypted_model_ = _apps.fit_encrypted(cts[0], cts[1], X.layout, *self._settings(),
                                                    bootstrapper)
        self._weights = None
        self.classes_ = np.array(classes)
        self.n_features_in_ = X.n_features
        return self

    def fit_plain(self, X: Any, y: Any) -> "LogisticRegression":
        """Trains on plain data by the same procedure in Rust (``LogisticRegression::fit_plain``, the
        reference of the encrypted training); returns ``self`` with plain weights. Normalize ``X`` first.
        Raises ValueError or TypeError for bad inputs or settings."""
        a = _matrix(X)
        labels, classes = _labels(y, len(a))
        iterations, degree, rate, _ = self._settings()
        w = _apps.fit_plain(a, labels, iterations, degree, rate)
        self.encrypted_model_ = None
        self._weights = np.asarray(w)
        self.classes_ = np.array(classes)
        self.n_features_in_ = a.shape[1]
        return self

    def decrypt(self, key: Any) -> "LogisticRegression":
        """Decrypts the encrypted weights (the data owner's step; ``key`` is a ``ckks.Session`` or a
        ``ckks.Decryptor``): the mean of the replicas in the rows of the layout. Returns ``self`` with
        ``coef_``, ``intercept_`` and ``weights_``. Raises NotFittedError before an encrypted :meth:`fit`,
        ValueError if decryption gives non-finite values."""
        if self.encrypted_model_ is None:
            raise NotFittedError("there are no encrypted weights to decrypt: call fit(X_enc, y_enc) first")
        decryptor = getattr(key, "decryptor", key)
        model = self.encrypted_model_
        w = model.layout.read_replicated(decryptor.decrypt(model.weights, real=True))
        if not np.all(np.isfinite(w)):
            raise ValueError("decryption gave non-finite weights: is this the data owner's key?")
        self._weights = np.asarray(w)
        return self

    # -- fitted attributes -----------------------------------------------------------------------------

    @property
    def weights_(self) -> np.ndarray:
        """The plain weights ``beta``, intercept first, shape (n_features + 1,). Raises NotFittedError if
        the model is not trained, or trained on encrypted data and not decrypted."""
        if self._weights is None:
            if self.encrypted_model_ is not None:
                raise NotFittedError("the weights are encrypted: decrypt them first with "
                                     "model.decrypt(session) (the data owner's secret key)")
            raise NotFittedError("this LogisticRegression is not trained yet: call fit or fit_plain")
        return self._weights.copy()

    @property
    def coef_(self) -> np.ndarray:
        """The feature weights, shape (1, n_features) (scikit-learn's binary layout)."""
        return self.weights_[1:][None, :]

    @property
    def intercept_(self) -> np.ndarray:
        """The intercept, shape (1,)."""
        return self.weights_[:1]

    @property
    def encrypted_weights_(self) -> ckks.Ciphertext:
        """The encrypted weights after :meth:`fit` (``beta`` replicated in every row of the layout).
        Raises NotFittedError otherwise."""
        if self.encrypted_model_ is None:
            raise NotFittedError("no encrypted weights: the model was not trained with fit(X_enc, y_enc)")
        return self.encrypted_model_.weights

    @property
    def levels_(self) -> List[int]:
        """The depth trace of :meth:`fit` (levels in limbs): the features and labels (not after
        ``fit(Z_enc)``), ``Z``, ``v`` after each iteration, the weights."""
        if self.encrypted_model_ is None:
            raise NotFittedError("no encrypted training: the model was not trained with fit(X_enc, y_enc)")
        return self.encrypted_model_.levels

    # -- prediction ------------------------------------------------------------------------------------

    def decision_function(self, X: Any) -> np.ndarray:
        """The scores ``beta^T (1, x_i)`` of the plain samples ``X`` (shape (n_samples, n_features)),
        float64 of shape (n_samples,)."""
        w = self.weights_
        a = _matrix(X, n_features=len(w) - 1)
        return w[0] + a @ w[1:]

    def predict_proba(self, X: Any, *, encrypted_weights: Optional[bool] = None
                      ) -> Union[np.ndarray, EncryptedProbabilities]:
        """Probabilities of the two classes.

        * Plain ``X``: float64 of shape (n_samples, 2), columns ``P(y = classes_[0])`` and
          ``P(y = classes_[1])``, by the exact sigmoid of :meth:`decision_function`.
        * :class:`EncryptedFeatures` (:func:`encrypt_features`): :class:`EncryptedProbabilities`, the
          least-squares sigmoid of the scores computed homomorphically (``1 + ceil(log2(degree + 1))``
          levels); ``.decrypt(session)`` gives the same (n_samples, 2) array. With plain weights (after
          :meth:`fit_plain` or :meth:`decrypt`) they are encoded; otherwise, or with
          ``encrypted_weights=True``, the encrypted weights are used: then ``X`` must have the training
          layout's slot count and the model ``keep_levels`` at least the levels of the prediction.

        Raises NotFittedError, NotEnoughLevelsError, ValueError for a feature count other than the model's.
        """
        if isinstance(X, _ENCRYPTED):
            return self._predict_proba_encrypted(X, encrypted_weights)
        p = 1.0 / (1.0 + np.exp(-self.decision_function(X)))
        return np.column_stack([1.0 - p, p])

    def _predict_proba_encrypted(self, X: EncryptedFeatures, encrypted_weights: Optional[bool]
                                 ) -> EncryptedProbabilities:
        """Encrypted prediction, with the encrypted or the plain weights (see :meth:`predict_proba`)."""
        if not isinstance(X, EncryptedFeatures):
            raise TypeError(
                f"predict_proba takes EncryptedFeatures (encrypt_features), not {type(X).__name__}"
            )
        use_encrypted = encrypted_weights
        if use_encrypted is None:
            use_encrypted = self._weights is None and self.encrypted_model_ is not None
        if use_encrypted:
            if self.encrypted_model_ is None:
                raise NotFittedError("no encrypted weights: the model was not trained with fit(X_enc, y_enc)")
            if X.n_features != self.n_features_in_:
                raise ValueError(f"X has {X.n_features} features, but the model has {self.n_features_in_}")
            ct = self.encrypted_model_.predict_proba(X.ciphertext)
        else:
            w = self.weights_
            if X.n_features != len(w) - 1:
                raise ValueError(f"X has {X.n_features} features, but the model has {len(w) - 1}")
            ct = _apps.predict_proba_encrypted(X.ciphertext, X.layout, w.tolist(), self._settings()[1])
        return EncryptedProbabilities(ct, X.layout)

    def predict(self, X: Any) -> np.ndarray:
        """The predicted labels of the plain samples ``X``: ``classes_[1]`` where the score is > 0
        (probability above 1/2), else ``classes_[0]``; int64 of shape (n_samples,). Encrypted features
        raise TypeError: predict their probabilities and threshold them after decryption."""
        if isinstance(X, _ENCRYPTED):
            raise TypeError("predict takes plain data; for encrypted features use "
                            "model.predict_proba(X_enc).decrypt(session)[:, 1] > 0.5")
        scores = self.decision_function(X)
        return np.where(scores > 0, self.classes_[1], self.classes_[0]).astype(np.int64)

    def score(self, X: Any, y: Any) -> float:
        """The accuracy on the plain samples ``X`` with labels ``y`` (scikit-learn's ``score``)."""
        return self.evaluate(X, y).accuracy

    def evaluate(self, X: Any, y: Any) -> Metrics:
        """Accuracy and AUC (:class:`Metrics`) on the plain samples ``X`` with labels ``y`` (0/1 or
        -1/+1), as RNS-CKKS Table 4 reports them (Rust ``Metrics::of_scores``). Raises ValueError for
        mismatched shapes, other labels, or labels of a single class (no AUC)."""
        scores = self.decision_function(X)
        labels, _ = _labels(y, len(scores))
        acc, area = _apps.metrics(scores.tolist(), labels.tolist())
        return Metrics(acc, area)



# ---- comparisons on PEGASUS data (PEGASUS Section V.A) ----------------------------------------------------
#
# These shadow the builtins min and max inside this module: nothing above calls them; code below that needs
# the builtins uses builtins.min / builtins.max.

_LweInput = Union[LweCiphertext, Sequence[LweCiphertext]]


def comparator(session: Any, bound: Optional[float] = None) -> Comparator:
    """The :class:`Comparator` of a :class:`rnsfhe.pegasus.Session` for values within ``bound`` (default
    ``session.input_bound / 2``), made once per session and bound and kept on the session (making one
    generates a key switch from the look-up-table ring back to the LWE key, PEGASUS Fig. 9).
    TypeError for another kind of session; ValueError for a bound beyond what the tables' domain allows."""
    pipeline = getattr(session, "pipeline", None)
    if not isinstance(pipeline, _Pipeline):
        raise TypeError(
            f"session must be a rnsfhe.pegasus.Session (comparisons run on its look-up tables), not "
            f"{type(session).__name__}"
        )
    cache = session.__dict__.setdefault("_apps_comparators", {})
    key = None if bound is None else float(bound)
    if key not in cache:
        cache[key] = Comparator(pipeline, key)
    return cache[key]


def _is_lwe_list(x: Any) -> bool:
    return isinstance(x, (list, tuple)) and all(isinstance(c, LweCiphertext) for c in x)


def _run(x: Any, session: Any, bound: Optional[float], on_lwe: Callable[[Comparator, Any], Any],
         on_ckks: Callable[[Comparator, ckks.Ciphertext], Any], keep: Optional[int] = None,
         bits: bool = False, decrypt: Optional[Callable[[Any], Any]] = None) -> Any:
    """Dispatches on the kind of ``x``: LWE ciphertexts (one or a list) to ``on_lwe``, a CKKS ciphertext to
    ``on_ckks``, a 1-D array of exactly ``session.slots`` values to ``on_ckks`` between encryption and
    ``decrypt`` (default: the first ``keep`` results of the one ciphertext; ``bits``: rounded to 0/1
    integers)."""
    cmp = comparator(session, bound)
    if isinstance(x, LweCiphertext) or _is_lwe_list(x):
        return on_lwe(cmp, x)
    if isinstance(x, ckks.Ciphertext):
        return on_ckks(cmp, x)
    out = on_ckks(cmp, session.encrypt(_slot_values(x, session)))
    return decrypt(out) if decrypt is not None else _decrypted(session, out, keep, bits)


def _slot_values(x: Any, session: Any) -> np.ndarray:
    """``x`` as a 1-D float array of exactly ``session.slots`` values (ValueError otherwise)."""
    values = np.asarray(x, dtype=np.float64)
    if values.ndim != 1 or values.shape[0] != session.slots:
        raise ValueError(
            f"expected LWE ciphertexts, a ckks.Ciphertext of the session, or a 1-D array of exactly "
            f"{session.slots} values (the session's slots); got an array of shape {values.shape}"
        )
    return values


def _decrypted(session: Any, ct: ckks.Ciphertext, keep: Optional[int], bits: bool) -> np.ndarray:
    """The first ``keep`` real values of ``ct`` (default all slots); ``bits``: rounded to 0/1 integers."""
    out = session.decrypt(ct, real=True)[: session.slots if keep is None else keep]
    return np.rint(out).astype(np.int64) if bits else out


def _group(group: Optional[int], x: Any, session: Any) -> int:
    if group is not None:
        return int(group)
    if isinstance(x, LweCiphertext):
        return 1
    return len(x) if _is_lwe_list(x) else session.slots


def min(x: Any, y: Optional[_LweInput] = None, *, session: Any, group: Optional[int] = None,
        bound: Optional[float] = None) -> Any:
    """The minimum, by PEGASUS's ``min(m0, m1) = T0(m0 + m1) - T1(m0 - m1)`` (two look-up tables) and a
    tree over arrays (``2 (t - 1)`` tables for ``t`` values).

    * ``min(a, b, session=s)``: two LWE ciphertexts of ``s`` (from ``ct.to_lwe()``) -> one;
    * ``min(lwes, session=s, group=t)``: the minimum of every ``t`` consecutive ciphertexts (default: all)
      -> a list;
    * ``min(ct, session=s, group=t)``: the minima of the groups of ``t`` consecutive slots of a CKKS
      ciphertext (default: all), in its first slots -> a CKKS ciphertext;
    * ``min(values, session=s, group=t)``: a 1-D array of ``s.slots`` values, encrypted, compared and
      decrypted -> a numpy array of the minima.

    Values must lie within ``bound`` (default ``input_bound / 2``); see :class:`Comparator` for the error
    bounds."""
    if y is not None:
        return comparator(session, bound).min(x, y)
    t = _group(group, x, session)
    return _run(x, session, bound, lambda c, v: c.min_of(v, t), lambda c, ct: c.min_ckks(ct, t),
                keep=session.slots // t)


def max(x: Any, y: Optional[_LweInput] = None, *, session: Any, group: Optional[int] = None,
        bound: Optional[float] = None) -> Any:
    """The maximum, ``T0(m0 + m1) + T1(m0 - m1)``; arguments and results as :func:`min`."""
    if y is not None:
        return comparator(session, bound).max(x, y)
    t = _group(group, x, session)
    return _run(x, session, bound, lambda c, v: c.max_of(v, t), lambda c, ct: c.max_ckks(ct, t),
                keep=session.slots // t)


def max_pool(x: Any, t: int, *, session: Any, bound: Optional[float] = None) -> Any:
    """Max-pooling over groups of ``t`` consecutive values (``t`` a power of two: 4 for a 2x2 window laid out
    consecutively, 16 for 4x4) by PEGASUS's scaled max ``m0 + m1 + |m0 - m1|`` and a final ``x / t``
    (``t`` tables per group). The values must lie within ``bound``, default ``input_bound / t`` (the most
    the scaled maxima allow). ``x``: LWE ciphertexts (-> a list), a CKKS ciphertext (-> one, the maxima in
    its first ``slots / t`` slots) or a 1-D array of ``slots`` values (-> a numpy array)."""
    t = int(t)
    if bound is None:
        bound = session.input_bound / t if t > 0 else None
    return _run(x, session, bound, lambda c, v: c.max_pool(v, t), lambda c, ct: c.max_pool_ckks(ct, t),
                keep=session.slots // t if t > 0 else None)


def sort(x: Any, *, session: Any, descending: bool = False, bound: Optional[float] = None) -> Any:
    """Bitonic sort (PEGASUS Section V.A: ``log t (log t + 1) / 2`` layers of swaps, two tables per swap) of
    a power of two of values: LWE ciphertexts (-> a list), every slot of a CKKS ciphertext (-> one) or a
    1-D array of ``slots`` values (-> a numpy array). Outputs are within
    ``comparator(session).sort_error_bound(t)`` of the sorted values."""
    return _run(x, session, bound, lambda c, v: c.sort(v, descending),
                lambda c, ct: c.sort_ckks(ct, descending))


def argmin(x: Any, *, session: Any, group: Optional[int] = None, bound: Optional[float] = None) -> Any:
    """Min-index: for every group of ``group`` consecutive values (default: all), the bits
    ``I(m_i - min <= tau)`` (PEGASUS's predicate table after a min-tree of one table per pair, ``2t - 1``
    tables; ``tau`` is
    ``comparator(session).argmin_threshold(t)``, so that the minimum is marked despite the tree's error).
    Exact when the minimum is more than ``argmin_resolution(t)`` below every other value; values closer
    to it may be marked too. ``x``: LWE ciphertexts (-> LWE ciphertexts of the bits), a CKKS ciphertext
    (-> one, the bits in the slots of the values) or a 1-D array of ``slots`` values (-> int64 0/1)."""
    t = _group(group, x, session)
    return _run(x, session, bound, lambda c, v: c.argmin(v, t), lambda c, ct: c.argmin_ckks(ct, t),
                bits=True)


def argmax(x: Any, *, session: Any, group: Optional[int] = None, bound: Optional[float] = None) -> Any:
    """Max-index: the bits ``I(max - m_i <= tau)``; arguments and results as :func:`argmin`."""
    t = _group(group, x, session)
    return _run(x, session, bound, lambda c, v: c.argmax(v, t), lambda c, ct: c.argmax_ckks(ct, t),
                bits=True)


def min_and_argmin(x: Any, *, session: Any, group: Optional[int] = None,
                   bound: Optional[float] = None) -> Tuple[Any, Any]:
    """``(min(x, group=t), argmin(x, group=t))`` from one min-tree, what OpenFHE's
    ``EvalMinSchemeSwitching`` returns: ``2t - 1`` tables per group on LWE ciphertexts, one identity table
    more per group on a CKKS ciphertext (against ``4t - 3`` and two extractions for the two calls), whose
    two results come back to CKKS by one repacking, one level below the other CKKS results.
    Arguments and the kinds of results as :func:`min` and :func:`argmin`; the minima are within
    ``comparator(session).min_and_argmin_error_bound(t, repack)`` of the true ones (plus the repacking's
    error on CKKS)."""
    return _run_pair(x, session, bound, group, lambda c, v, t: c.min_and_argmin(v, t),
                     lambda c, ct, t: c.min_and_argmin_ckks(ct, t))


def max_and_argmax(x: Any, *, session: Any, group: Optional[int] = None,
                   bound: Optional[float] = None) -> Tuple[Any, Any]:
    """``(max(x, group=t), argmax(x, group=t))`` from one max-tree; as :func:`min_and_argmin`."""
    return _run_pair(x, session, bound, group, lambda c, v, t: c.max_and_argmax(v, t),
                     lambda c, ct, t: c.max_and_argmax_ckks(ct, t))


def _run_pair(x: Any, session: Any, bound: Optional[float], group: Optional[int],
              on_lwe: Callable[[Comparator, Any, int], Any],
              on_ckks: Callable[[Comparator, ckks.Ciphertext, int], Any]) -> Tuple[Any, Any]:
    """:func:`_run` for the functions with two results (extremes, bits)."""
    t = _group(group, x, session)
    return _run(x, session, bound, lambda c, v: on_lwe(c, v, t), lambda c, ct: on_ckks(c, ct, t),
                decrypt=lambda out: (_decrypted(session, out[0], session.slots // t, False),
                                     _decrypted(session, out[1], None, True)))


__all__ = [
    "LogisticRegression",
    "PackedLayout",
    "EncryptedModel",
    "EncryptedFeatures",
    "EncryptedLabels",
    "EncryptedZ",
    "EncryptedProbabilities",
    "encrypt_dataset",
    "encrypt_features",
    "encrypt_z",
    "load_lbw",
    "load_uis",
    "normalize",
    "train_numpy",
    "nesterov_schedule",
    "sigmoid_coefficients",
    "accuracy",
    "auc",
    "Metrics",
    "NotFittedError",
    "NotEnoughLevelsError",
    "PAPER_TABLE4",
    "LBW_FEATURES",
    "UIS_FEATURES",
    "SIGMOID_LEAST_SQUARES",
    "NESTEROV_LAMBDA0",
    "Comparator",
    "comparator",
    "min",
    "max",
    "max_pool",
    "sort",
    "argmin",
    "argmax",
    "min_and_argmin",
    "max_and_argmax",
    "TreeClient",
    "TreeServerKey",
    "TreeScaling",
    "EncryptedTree",
    "EncryptedQuery",
    "EncryptedLabel",
    "KMeans",
    "KMeansSession",
    "KMeansServer",
]


# ---- secure k-means (PEGASUS Section V.C, docs/apps-kmeans.md) -------------------------------------------


class KMeans:
    """K-means whose centroid updates run on encrypted data (PEGASUS Section V.C), with scikit-learn's
    conventions: ``fit(X)``, ``predict(X)``, ``fit_predict(X)``, ``cluster_centers_``, ``labels_``,
    ``inertia_``, ``n_iter_``.

    Who holds what: the object is the **data owner** (it holds every secret key, in its
    :class:`KMeansSession`) and drives a **server** that sees only ciphertexts and evaluation keys. Each of
    the ``max_iter`` updates: the owner encrypts its points and the current centroids; the server computes
    the distances in CKKS, extracts them to LWE, takes the min-index of every point (one-hot bits), the
    reciprocal of every cluster size by a look-up table, repacks to CKKS and sums the new centroids; the
    owner decrypts the new centroids (the paper's single update needs no CKKS bootstrapping; between
    updates the owner refreshes the centroids by decrypting and encrypting them again, so it sees the
    intermediate centroids of its own data). The initial centroids are ``n_clusters`` distinct points
    drawn with ``random_state``.

    ``preset`` is a PEGASUS pipeline preset ("InsecureTest": small and NOT secure, tests; "Table4": the
    paper's, below 128 bits; "Secure128"); presets below 128 bits need ``allow_insecure=True``.
    ``lut_log_n`` sets the look-up-table ring (the paper's rho rises from about 82% at ``n = 2^12`` to 95%
    at ``2^13``); ``distance_bound`` and ``threshold`` are those of :class:`KMeansSession`. The points and
    clusters must fit the preset's slots (``P K' <= N/2``: points and clusters rounded up to powers of
    two), else ValueError naming the limit.

    After ``fit``: ``cluster_centers_`` (decrypted), ``labels_`` (the owner's plaintext assignment of the
    training points to the final centroids), ``closest_assignment_ratios_`` (rho of every update: the
    fraction of points whose encrypted assignment was exactly their closest centroid's).
    """

    def __init__(self, n_clusters: int = 8, *, max_iter: int = 1, random_state: Optional[int] = None,
                 preset: str = "InsecureTest", lut_log_n: Optional[int] = None,
                 distance_bound: Optional[float] = None, threshold: Optional[float] = None,
                 allow_insecure: bool = False, seed: Optional[int] = None) -> None:
        self.n_clusters = n_clusters
        self.max_iter = max_iter
        self.random_state = random_state
        self.preset = preset
        self.lut_log_n = lut_log_n
        self.distance_bound = distance_bound
        self.threshold = threshold
        self.allow_insecure = allow_insecure
        self.seed = seed

    def get_params(self, deep: bool = True) -> Dict[str, Any]:
        """The constructor's parameters (scikit-learn's convention)."""
        names = ("n_clusters", "max_iter", "random_state", "preset", "lut_log_n", "distance_bound",
                 "threshold", "allow_insecure", "seed")
        return {n: getattr(self, n) for n in names}

    def set_params(self, **params: Any) -> "KMeans":
        """Sets constructor parameters (scikit-learn's convention); ValueError for an unknown one."""
        for name, value in params.items():
            if name not in self.get_params():
                raise ValueError(f"KMeans has no parameter {name!r}")
            setattr(self, name, value)
        return self

    def __repr__(self) -> str:
        return f"KMeans(n_clusters={self.n_clusters}, max_iter={self.max_iter}, preset={self.preset!r})"

    def fit(self, X: Any, y: Any = None) -> "KMeans":
        """Runs ``max_iter`` encrypted updates from ``n_clusters`` random points of ``X`` (``y`` ignored).

        ValueError for fewer points than clusters, fewer than 2 clusters, ``max_iter < 1``, sizes beyond
        the preset's packing, or an insecure preset without ``allow_insecure=True``."""
        x = _matrix(X)
        k = int(self.n_clusters)
        if k < 2 or x.shape[0] < k:
            raise ValueError(f"KMeans needs 2 <= n_clusters <= n_samples; got n_clusters={k} for "
                             f"{x.shape[0]} samples")
        if int(self.max_iter) < 1:
            raise ValueError(f"max_iter must be at least 1; got {self.max_iter}")
        rng = np.random.default_rng(self.random_state)
        centers = x[rng.choice(x.shape[0], size=k, replace=False)].copy()
        radius = float(np.max(np.linalg.norm(x, axis=1)))
        radius = radius if radius > 0 else 1.0
        session = KMeansSession(x.shape[0], k, x.shape[1], radius, preset=self.preset,
                                lut_log_n=self.lut_log_n, distance_bound=self.distance_bound,
                                threshold=self.threshold, seed=self.seed,
                                allow_insecure=self.allow_insecure)
        ratios: List[float] = []
        for _ in range(int(self.max_iter)):
            closest = _closest(x, centers)
            centers, bits = session.update(x, centers)
            ratios.append(KMeansSession.closest_assignment_ratio(bits, [int(c) for c in closest]))
        self.session_ = session
        self.cluster_centers_ = np.asarray(centers)
        self.closest_assignment_ratios_ = ratios
        self.n_iter_ = int(self.max_iter)
        self.labels_ = self.predict(x)
        self.inertia_ = float(np.sum((x - self.cluster_centers_[self.labels_]) ** 2))
        return self

    def _centers(self) -> np.ndarray:
        if not hasattr(self, "cluster_centers_"):
            raise NotFittedError("this KMeans is not fitted yet: call fit(X) first")
        return self.cluster_centers_

    def predict(self, X: Any) -> np.ndarray:
        """The index of the closest fitted centroid of every row of ``X`` (the owner's plaintext step)."""
        centers = self._centers()
        return _closest(_matrix(X, n_features=centers.shape[1]), centers)

    def fit_predict(self, X: Any, y: Any = None) -> np.ndarray:
        """``fit(X)``, then ``labels_``."""
        return self.fit(X).labels_


def _closest(x: np.ndarray, centers: np.ndarray) -> np.ndarray:
    """The closest center of every row (squared Euclidean distance; the first one on a tie)."""
    d = ((x[:, None, :] - centers[None, :, :]) ** 2).sum(axis=2)
    return np.argmin(d, axis=1).astype(np.int64)
