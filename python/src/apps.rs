//! `rnsfhe._rnsfhe.apps`: Python bindings of the applications crate `rnsfhe-apps`, re-exported and
//! completed by the pure-Python module `rnsfhe.apps` (the scikit-learn-like `LogisticRegression`, the
//! numpy reference, the encrypted data containers).
//!
//! What lives here is what must run in Rust: the packing of Kim, Song, Kim, Lee and Cheon
//! ([`PackedLayout`], as the class `PackedLayout`), the datasets of RNS-CKKS Table 4 (read by
//! `Dataset::load_lbw` / `load_uis`), the plaintext reference training (`fit_plain`), the encrypted
//! training (`fit_encrypted`, which first combines the encrypted features and labels into the matrix `Z`
//! with one homomorphic product) and encrypted prediction (`EncryptedModel.predict_proba`,
//! `predict_proba_encrypted`), and the metrics. Ciphertexts come from and go back to `rnsfhe.ckks`: a
//! result is attached to the evaluator of the ciphertext it was computed from. Heavy calls release the GIL.
//! Errors become `ValueError` with the Rust message; a lack of levels is `rnsfhe.ckks.NotEnoughLevelsError`.

use numpy::{PyArray1, PyArray2, PyReadonlyArray1, PyReadonlyArray2};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use rnsfhe::ckks::{self, Ciphertext, Evaluator};
use rnsfhe_apps::{
    accuracy, auc, sigmoid_polynomial, Dataset, EncryptedModel, Error, LogisticModel,
    LogisticRegression, PackedLayout,
};

use crate::ckks::{ckks_error, not_enough_levels, PyBootstrapper, PyCiphertext};

mod comparison;
mod decision_tree;
mod kmeans;
use crate::common::{value_error, Int};

/// An error of `rnsfhe-apps` as a Python exception: CKKS errors as `rnsfhe.ckks` raises them, a lack of
/// levels as [`not_enough_levels`] (`NotEnoughLevelsError`), the rest as `ValueError` with the Rust message.
fn apps_error(err: Error) -> PyErr {
    match err {
        Error::Ckks(e) => ckks_error(e),
        Error::NotEnoughLevels {
            needed,
            keep,
            available,
            ..
        } => not_enough_levels(err.to_string(), needed + keep, available),
        Error::Io { .. } => PyValueError::new_err(format!(
            "{err} (the datasets ship in the data/ directory of the rnsfhe repository, not in the wheel: \
             they are found when the extension was built from a checkout; otherwise pass path= to a copy \
             of the CSV file)"
        )),
        other => value_error(other),
    }
}

/// The rows of a 2-D float64 array.
fn read_rows(x: &PyReadonlyArray2<'_, f64>) -> Vec<Vec<f64>> {
    x.as_array()
        .rows()
        .into_iter()
        .map(|r| r.to_vec())
        .collect()
}

/// A 1-D float64 array as a vector.
fn read_vector(x: &PyReadonlyArray1<'_, f64>) -> Vec<f64> {
    x.as_array().to_vec()
}

/// A [`Dataset`] of the features `x` (one row per sample) and the labels `y` (0/1 or -1/+1), with the
/// checks of [`Dataset::new`] (shapes, finite values, labels).
fn dataset(x: &PyReadonlyArray2<'_, f64>, y: &PyReadonlyArray1<'_, f64>) -> PyResult<Dataset> {
    let features = read_rows(x);
    let d = x.as_array().ncols();
    let names = (0..d).map(|j| format!("x{j}")).collect();
    Dataset::new("data", names, features, &read_vector(y)).map_err(apps_error)
}

/// The labels `y` as -1/+1 (0 and -1 mean -1, 1 means +1), checked as [`Dataset::new`] checks them.
fn signed_labels(y: &[f64]) -> PyResult<Vec<f64>> {
    y.iter()
        .enumerate()
        .map(|(row, &v)| {
            if v == 1.0 {
                Ok(1.0)
            } else if v == 0.0 || v == -1.0 {
                Ok(-1.0)
            } else {
                Err(apps_error(Error::InvalidLabel { row, value: v }))
            }
        })
        .collect()
}

/// The training settings, checked.
fn settings(
    iterations: usize,
    sigmoid_degree: usize,
    learning_rate: f64,
    keep_levels: usize,
) -> PyResult<LogisticRegression> {
    let lr = LogisticRegression::new()
        .with_iterations(iterations)
        .with_sigmoid_degree(sigmoid_degree)
        .with_learning_rate(learning_rate)
        .with_keep_levels(keep_levels);
    lr.validate().map_err(apps_error)?;
    Ok(lr)
}

/// `ValueError` unless `a` and `b` were made with the same CKKS parameters.
fn check_same_context(a: &PyCiphertext, b: &PyCiphertext, what: &'static str) -> PyResult<()> {
    let expected = a.rust_evaluator().context().fingerprint();
    let got = b.rust_evaluator().context().fingerprint();
    if expected == got {
        Ok(())
    } else {
        Err(ckks_error(ckks::Error::ContextMismatch {
            object: what,
            expected,
            got,
        }))
    }
}

// ------------------------------------------------------------------------------------------------------
// Packing
// ------------------------------------------------------------------------------------------------------

/// The packing of Kim, Song, Kim, Lee and Cheon (BMC Medical Genomics 2018): ``n_samples`` rows of
/// ``n_features + 1`` entries, padded with zeros to ``rows x columns`` (powers of two), row-major in the
/// ``slots = rows * columns`` slots of one ciphertext (sparse packing when that is less than N/2).
///
/// ``PackedLayout(n_samples, n_features)``. Raises ValueError for no samples or no features.
///
/// ``rotation_steps`` are the Galois keys training and prediction need (give them to
/// ``ckks.Session(..., rotations=layout.rotation_steps)``); ``pack_x`` / ``pack_z`` / ``pack_labels``
/// produce the ``slots`` values to encrypt (``session.encrypt(values, slots=layout.slots)``);
/// ``read_replicated`` and ``read_first_column`` read decrypted results back. Picklable.
#[pyclass(name = "PackedLayout", module = "rnsfhe.apps", frozen, eq)]
#[derive(Clone, PartialEq)]
pub(crate) struct PyPackedLayout {
    layout: PackedLayout,
}

#[pymethods]
impl PyPackedLayout {
    #[new]
    fn new(n_samples: Int, n_features: Int) -> PyResult<Self> {
        let (n_samples, n_features) = (n_samples.get("n_samples")?, n_features.get("n_features")?);
        let layout = PackedLayout::new(n_samples, n_features).map_err(apps_error)?;
        Ok(Self { layout })
    }

    /// Number of samples ``n`` (rows before padding).
    #[getter]
    fn n_samples(&self) -> usize {
        self.layout.samples()
    }

    /// Number of features ``d`` (without the constant column).
    #[getter]
    fn n_features(&self) -> usize {
        self.layout.width() - 1
    }

    /// Entries per row before padding, ``d + 1`` (the constant column first).
    #[getter]
    fn width(&self) -> usize {
        self.layout.width()
    }

    /// Rows after padding (the next power of two of ``n_samples``).
    #[getter]
    fn rows(&self) -> usize {
        self.layout.rows()
    }

    /// Columns after padding (the next power of two of ``width``).
    #[getter]
    fn columns(&self) -> usize {
        self.layout.columns()
    }

    /// Slots of the ciphertext, ``rows * columns`` (at most N/2).
    #[getter]
    fn slots(&self) -> usize {
        self.layout.slots()
    }

    /// The rotation steps training and encrypted prediction use: ``1, 2, ..., columns/2``, their
    /// negatives, and ``columns, 2 columns, ..., rows/2 columns`` (``2 log2(columns) + log2(rows)`` keys).
    #[getter]
    fn rotation_steps(&self) -> Vec<i64> {
        self.layout.rotation_steps()
    }

    /// check_fits(slots) -> None: raises ValueError, naming the sizes and the smallest ring degree N that
    /// fits, if the layout needs more than ``slots`` slots (N/2 of a context).
    fn check_fits(&self, slots: Int) -> PyResult<()> {
        self.layout
            .check_fits(slots.get("slots")?)
            .map_err(apps_error)
    }

    /// pack_x(X) -> numpy.ndarray[float64] of ``slots`` values: the rows ``(1, x_i)`` of the float64
    /// array ``X`` of shape (n_samples, n_features), row-major with zero padding (for encrypted training
    /// with ``pack_labels``, and for encrypted prediction). Raises ValueError for another shape or a
    /// non-finite value.
    fn pack_x<'py>(
        &self,
        py: Python<'py>,
        x: PyReadonlyArray2<'py, f64>,
    ) -> PyResult<Bound<'py, PyArray1<f64>>> {
        let values = self.layout.pack_x(&read_rows(&x)).map_err(apps_error)?;
        Ok(PyArray1::from_vec(py, values))
    }

    /// pack_labels(y) -> numpy.ndarray[float64] of ``slots`` values: the label ``y_i`` as -1/+1 in the
    /// ``width`` entries of row ``i`` (zero padding), so that the slot-wise product with ``pack_x(X)`` is
    /// ``pack_z(X, y)``. ``y`` is a float64 array of ``n_samples`` labels 0/1 or -1/+1. Raises ValueError
    /// for another length or another label.
    fn pack_labels<'py>(
        &self,
        py: Python<'py>,
        y: PyReadonlyArray1<'py, f64>,
    ) -> PyResult<Bound<'py, PyArray1<f64>>> {
        let labels = signed_labels(&read_vector(&y))?;
        let rows: Vec<Vec<f64>> = labels
            .iter()
            .map(|&l| vec![l; self.layout.width()])
            .collect();
        let values = self.layout.pack_rows(&rows).map_err(apps_error)?;
        Ok(PyArray1::from_vec(py, values))
    }

    /// pack_z(X, y) -> numpy.ndarray[float64] of ``slots`` values: the rows ``z_i = y_i (1, x_i)`` (``y_i``
    /// as -1/+1) of the training matrix of RNS-CKKS Section 5.3, as Kim et al.'s client packs it. Raises
    /// ValueError for mismatched shapes, non-finite values or labels other than 0/1, -1/+1.
    fn pack_z<'py>(
        &self,
        py: Python<'py>,
        x: PyReadonlyArray2<'py, f64>,
        y: PyReadonlyArray1<'py, f64>,
    ) -> PyResult<Bound<'py, PyArray1<f64>>> {
        let data = dataset(&x, &y)?;
        let values = self.layout.pack_z(&data).map_err(apps_error)?;
        Ok(PyArray1::from_vec(py, values))
    }

    /// replicate(values) -> numpy.ndarray[float64]: ``values`` (``width`` of them) in every row (the
    /// layout of the weights).
    fn replicate<'py>(
        &self,
        py: Python<'py>,
        values: Vec<f64>,
    ) -> PyResult<Bound<'py, PyArray1<f64>>> {
        let out = self.layout.replicate(&values).map_err(apps_error)?;
        Ok(PyArray1::from_vec(py, out))
    }

    /// read_replicated(slots) -> numpy.ndarray[float64] of ``width`` values: a replicated vector read
    /// back from decrypted slots (the mean over the rows, which averages the CKKS error).
    fn read_replicated<'py>(
        &self,
        py: Python<'py>,
        slots: PyReadonlyArray1<'py, f64>,
    ) -> PyResult<Bound<'py, PyArray1<f64>>> {
        let out = self
            .layout
            .read_replicated(&read_vector(&slots))
            .map_err(apps_error)?;
        Ok(PyArray1::from_vec(py, out))
    }

    /// read_first_column(slots) -> numpy.ndarray[float64] of ``n_samples`` values: column 0 of every
    /// sample's row (one result per sample, e.g. an encrypted prediction) from decrypted slots.
    fn read_first_column<'py>(
        &self,
        py: Python<'py>,
        slots: PyReadonlyArray1<'py, f64>,
    ) -> PyResult<Bound<'py, PyArray1<f64>>> {
        let out = self
            .layout
            .read_first_column(&read_vector(&slots))
            .map_err(apps_error)?;
        Ok(PyArray1::from_vec(py, out))
    }

    fn __repr__(&self) -> String {
        format!(
            "PackedLayout(n_samples={}, n_features={}; {} x {} = {} slots)",
            self.n_samples(),
            self.n_features(),
            self.rows(),
            self.columns(),
            self.slots()
        )
    }

    /// Pickling rebuilds the layout from (n_samples, n_features).
    fn __reduce__(slf: &Bound<'_, Self>) -> (Py<pyo3::types::PyType>, (usize, usize)) {
        let this = slf.get();
        (
            slf.get_type().unbind(),
            (this.n_samples(), this.n_features()),
        )
    }
}

// ------------------------------------------------------------------------------------------------------
// Datasets, the plaintext procedure, metrics
// ------------------------------------------------------------------------------------------------------

/// A dataset as numpy arrays: features (n, d), labels 0/1 (n,), feature names.
type NumpyDataset<'py> = (
    Bound<'py, PyArray2<f64>>,
    Bound<'py, PyArray1<f64>>,
    Vec<String>,
);

/// load_dataset(name, path=None, normalize=True) -> (X, y, feature_names)
///
/// The dataset ``name`` of RNS-CKKS Table 4, "lbw" (189 x 9) or "uis" (575 x 8), read by the Rust
/// loaders from the repository's ``data/`` (or from the CSV file ``path``), with every feature divided by
/// its largest absolute value if ``normalize`` (``Dataset::normalize``). ``X`` is float64 (n, d), ``y``
/// float64 0/1. Raises ValueError for another name, or a file that cannot be read (saying where the data
/// live).
#[pyfunction]
#[pyo3(signature = (name, path = None, normalize = true))]
fn load_dataset<'py>(
    py: Python<'py>,
    name: &str,
    path: Option<std::path::PathBuf>,
    normalize: bool,
) -> PyResult<NumpyDataset<'py>> {
    let data = match (name, path) {
        ("lbw", None) => Dataset::load_lbw(),
        ("lbw", Some(p)) => Dataset::load_lbw_from(p),
        ("uis", None) => Dataset::load_uis(),
        ("uis", Some(p)) => Dataset::load_uis_from(p),
        (other, _) => {
            return Err(PyValueError::new_err(format!(
                "unknown dataset {other:?}: the datasets of RNS-CKKS Table 4 are \
                 \"lbw\" and \"uis\""
            )))
        }
    }
    .map_err(apps_error)?;
    let data = if normalize { data.normalize().0 } else { data };
    let x = PyArray2::from_vec2(py, data.features()).map_err(value_error)?;
    let y: Vec<f64> = data
        .labels()
        .iter()
        .map(|&l| if l > 0.0 { 1.0 } else { 0.0 })
        .collect();
    Ok((x, PyArray1::from_vec(py, y), data.feature_names().to_vec()))
}

/// sigmoid_coefficients(degree) -> list[float]: the least-squares sigmoid of Kim et al. on [-8, 8] of
/// ``degree`` 3, 5 or 7, coefficients of x^0, x^1, ... (the polynomial training evaluates). Raises
/// ValueError for another degree.
#[pyfunction]
fn sigmoid_coefficients(degree: Int) -> PyResult<Vec<f64>> {
    Ok(sigmoid_polynomial(degree.get("degree")?)
        .map_err(apps_error)?
        .coeffs()
        .to_vec())
}

/// schedule(iterations, learning_rate) -> list[tuple[float, float]]: ``(alpha_t, gamma_t)`` of each
/// iteration, the learning rate ``learning_rate / (t + 1)`` and Nesterov's mixing (``lambda_0 = 0.01``).
/// Raises ValueError for invalid settings.
#[pyfunction]
fn schedule(iterations: Int, learning_rate: f64) -> PyResult<Vec<(f64, f64)>> {
    let lr = settings(iterations.get("iterations")?, 3, learning_rate, 0)?;
    Ok(lr.schedule().iter().map(|s| (s.alpha, s.gamma)).collect())
}

/// levels_needed(iterations, sigmoid_degree) -> int: the levels encrypted training of the packed matrix
/// ``Z`` uses, ``1 + (iterations - 1) (ceil(log2(degree + 1)) + 3)`` (21 for 5 iterations of degree 3).
/// Raises ValueError for invalid settings.
#[pyfunction]
fn levels_needed(iterations: Int, sigmoid_degree: Int) -> PyResult<usize> {
    let (iterations, sigmoid_degree) = (
        iterations.get("iterations")?,
        sigmoid_degree.get("sigmoid_degree")?,
    );
    settings(iterations, sigmoid_degree, 1.0, 0)?
        .levels_needed()
        .map_err(apps_error)
}

/// fit_plain(X, y, iterations, sigmoid_degree, learning_rate) -> numpy.ndarray[float64]
///
/// The plaintext reference training (``LogisticRegression::fit_plain``): the weights, intercept first.
/// ``X`` float64 (n, d), ``y`` float64 labels 0/1 or -1/+1. Raises ValueError for invalid settings,
/// mismatched shapes, non-finite values or other labels.
#[pyfunction]
fn fit_plain<'py>(
    py: Python<'py>,
    x: PyReadonlyArray2<'py, f64>,
    y: PyReadonlyArray1<'py, f64>,
    iterations: Int,
    sigmoid_degree: Int,
    learning_rate: f64,
) -> PyResult<Bound<'py, PyArray1<f64>>> {
    let (iterations, sigmoid_degree) = (
        iterations.get("iterations")?,
        sigmoid_degree.get("sigmoid_degree")?,
    );
    let lr = settings(iterations, sigmoid_degree, learning_rate, 0)?;
    let data = dataset(&x, &y)?;
    let model = crate::common::release(py, || lr.fit_plain(&data)).map_err(apps_error)?;
    Ok(PyArray1::from_vec(py, model.weights().to_vec()))
}

/// metrics(scores, labels) -> tuple[float, float]: ``(accuracy, auc)`` of the decision values
/// ``scores`` (the prediction is positive for a score > 0) against the labels (0/1 or -1/+1), by
/// ``Metrics::of_scores`` (AUC by the rank statistic, ties counting one half). Raises ValueError for
/// mismatched lengths, non-finite scores, other labels, or a single class.
#[pyfunction]
fn metrics(scores: Vec<f64>, labels: Vec<f64>) -> PyResult<(f64, f64)> {
    Ok((
        accuracy(&scores, &labels).map_err(apps_error)?,
        auc(&scores, &labels).map_err(apps_error)?,
    ))
}

/// accuracy_of_scores(scores, labels) -> float: the fraction of samples whose sign of the score (> 0:
/// positive) matches the label. Raises ValueError as ``metrics`` (a single class is allowed).
#[pyfunction]
fn accuracy_of_scores(scores: Vec<f64>, labels: Vec<f64>) -> PyResult<f64> {
    accuracy(&scores, &labels).map_err(apps_error)
}

/// auc_of_scores(scores, labels) -> float: the area under the ROC curve of the scores against the
/// labels. Raises ValueError as ``metrics``.
#[pyfunction]
fn auc_of_scores(scores: Vec<f64>, labels: Vec<f64>) -> PyResult<f64> {
    auc(&scores, &labels).map_err(apps_error)
}

// ------------------------------------------------------------------------------------------------------
// Encrypted training and prediction
// ------------------------------------------------------------------------------------------------------

/// A model trained on encrypted data: its weights ``beta`` (intercept first) stay encrypted, replicated
/// in every row of the training layout. Made by ``fit_encrypted``; ``rnsfhe.apps.LogisticRegression``
/// wraps it.
///
/// ``weights`` is the ciphertext (attached to the evaluator that trained it), ``layout`` the training
/// layout, ``levels`` the trace of the depth used. Decrypt with ``layout.read_replicated(
/// decryptor.decrypt(weights, real=True))``. Not picklable: pickle ``weights`` and ``layout``.
#[pyclass(name = "EncryptedModel", module = "rnsfhe.apps", frozen)]
pub(crate) struct PyEncryptedModel {
    model: EncryptedModel,
    weights: Py<PyCiphertext>,
    levels: Vec<usize>,
}

/// The levels (rescalings) encrypted prediction uses: the product with the weights and the sigmoid
/// polynomial.
fn prediction_levels(degree: usize) -> PyResult<usize> {
    Ok(1 + sigmoid_polynomial(degree).map_err(apps_error)?.depth())
}

/// A `NotEnoughLevelsError` unless `ct` (``what``) has the levels of an encrypted prediction with the
/// degree-`degree` sigmoid.
fn check_prediction_levels(
    ct: &Ciphertext,
    degree: usize,
    what: &str,
    remedy: &str,
) -> PyResult<()> {
    let needed = prediction_levels(degree)?;
    let available = ct.level().saturating_sub(1);
    if available < needed {
        return Err(not_enough_levels(
            format!(
                "encrypted prediction with the degree-{degree} sigmoid uses {needed} levels (1 for the \
                 product with the weights, {} for the polynomial), but {what} have {available} left; \
                 {remedy}",
                needed - 1
            ),
            needed,
            available,
        ));
    }
    Ok(())
}

#[pymethods]
impl PyEncryptedModel {
    /// The encrypted weights (a ``rnsfhe.ckks.Ciphertext`` of ``layout.slots`` slots, ``beta`` in every
    /// row).
    #[getter]
    fn weights(&self, py: Python<'_>) -> Py<PyCiphertext> {
        self.weights.clone_ref(py)
    }

    /// The training layout (of the data and of the weights).
    #[getter]
    fn layout(&self) -> PyPackedLayout {
        PyPackedLayout {
            layout: *self.model.layout(),
        }
    }

    /// The sigmoid degree used in training and encrypted prediction.
    #[getter]
    fn sigmoid_degree(&self) -> usize {
        self.model.sigmoid_degree()
    }

    /// The bootstrappings the training ran (0 without a bootstrapper).
    #[getter]
    fn bootstraps(&self) -> usize {
        self.model.bootstraps()
    }

    /// The trace of the depth: the level (limbs) of the encrypted features and labels when training
    /// started, of ``Z`` after their product, of ``v`` after each iteration and of the final weights.
    #[getter]
    fn levels(&self) -> Vec<usize> {
        self.levels.clone()
    }

    /// predict_proba(x) -> Ciphertext
    ///
    /// Encrypted prediction with the encrypted weights: for the encrypted rows ``(1, x_i)`` packed with
    /// the training layout's slot count (``layout.pack_x``), column 0 of row ``i`` of the result holds the
    /// least-squares sigmoid of ``beta^T (1, x_i)`` (read with ``layout.read_first_column``). Uses ``1 +
    /// ceil(log2(degree + 1))`` levels of ``x`` and of the weights (train with ``keep_levels`` at least
    /// that). Runs on the evaluator of ``x``. Raises NotEnoughLevelsError, ValueError for another slot
    /// count or other parameters.
    fn predict_proba(&self, py: Python<'_>, x: &Bound<'_, PyCiphertext>) -> PyResult<PyCiphertext> {
        let x = x.try_borrow()?;
        let weights = self.weights.bind(py).try_borrow()?;
        let (x, weights) = (&*x, &*weights);
        check_same_context(weights, x, "the features")?;
        let degree = self.model.sigmoid_degree();
        check_prediction_levels(
            weights.ciphertext(),
            degree,
            "the encrypted weights",
            "train with keep_levels at least that many, or decrypt the model and predict with plain \
             weights",
        )?;
        check_prediction_levels(
            x.ciphertext(),
            degree,
            "the encrypted features",
            "encrypt them at a higher level",
        )?;
        let (eval, ct) = (x.rust_evaluator(), x.ciphertext());
        let out = crate::common::release(py, || self.model.predict_proba_encrypted(eval, ct))
            .map_err(apps_error)?;
        Ok(x.sibling(out))
    }

    fn __repr__(&self) -> String {
        let layout = self.model.layout();
        format!(
            "EncryptedModel(n_samples={}, n_features={}, sigmoid_degree={}, level={})",
            layout.samples(),
            layout.width() - 1,
            self.model.sigmoid_degree(),
            self.model.weights().level()
        )
    }

    /// Raises TypeError: pickle its parts instead (``weights``, a Ciphertext, and ``layout``).
    fn __reduce__(&self) -> PyResult<PyObject> {
        Err(PyTypeError::new_err(
            "rnsfhe.apps.EncryptedModel cannot be pickled: pickle (or to_bytes()) its weights \
             (a rnsfhe.ckks.Ciphertext) and its layout instead, or decrypt the model and pickle the \
             plain weights",
        ))
    }
}

/// fit_encrypted(x, y, layout, iterations, sigmoid_degree, learning_rate, keep_levels, bootstrapper=None)
/// -> EncryptedModel
///
/// Encrypted logistic-regression training (RNS-CKKS Section 5.3, Kim et al. 2018) on the packed matrix
/// ``Z = [y_i (1, x_i)]``, by ``LogisticRegression::fit_encrypted`` (``levels_needed(iterations,
/// degree)`` levels), leaving ``keep_levels`` levels in the weights. Either ``x`` encrypts
/// ``layout.pack_x(X)`` and ``y`` encrypts ``layout.pack_labels(y)`` (same keys): their slot-wise product,
/// one more level, is ``Z``; or ``y`` is None and ``x`` encrypts ``layout.pack_z(X, y)``, as Kim et al.'s
/// client packs it. Every ciphertext has ``layout.slots`` slots and is first dropped to the level it needs.
/// Runs on the evaluator of ``x``, which needs the relinearization key and the Galois keys of
/// ``layout.rotation_steps``. With ``bootstrapper`` (a ``rnsfhe.ckks.Bootstrapper`` of ``layout.slots``
/// slots, keys from ``keygen(bootstrapper=...)`` too) the training may take more levels than the
/// ciphertexts have: the Nesterov state is bootstrapped when they run out
/// (``LogisticRegression::fit_encrypted_bootstrapped``; ``EncryptedModel.bootstraps`` counts them). The
/// GIL is released.
///
/// Raises NotEnoughLevelsError (levels needed and available) before computing anything (without a
/// bootstrapper), ValueError for invalid settings, ciphertexts of another slot count or other
/// parameters, a layout that does not fit, a bootstrapper leaving fewer levels than an iteration and a
/// refresh need, or a missing key (naming its step).
#[pyfunction]
#[pyo3(signature = (x, y, layout, iterations, sigmoid_degree, learning_rate, keep_levels,
                    bootstrapper = None))]
#[allow(clippy::too_many_arguments)]
fn fit_encrypted(
    py: Python<'_>,
    x: &Bound<'_, PyCiphertext>,
    y: Option<&Bound<'_, PyCiphertext>>,
    layout: &PyPackedLayout,
    iterations: Int,
    sigmoid_degree: Int,
    learning_rate: f64,
    keep_levels: Int,
    bootstrapper: Option<&PyBootstrapper>,
) -> PyResult<PyEncryptedModel> {
    let (iterations, sigmoid_degree, keep_levels): (usize, usize, usize) = (
        iterations.get("iterations")?,
        sigmoid_degree.get("sigmoid_degree")?,
        keep_levels.get("keep_levels")?,
    );
    let lr = settings(iterations, sigmoid_degree, learning_rate, keep_levels)?;
    let xs = x.try_borrow()?;
    let ys = y.map(|y| y.try_borrow()).transpose()?;
    let (xs, ys) = (&*xs, ys.as_deref());
    if let Some(ys) = ys {
        check_same_context(xs, ys, "the encrypted labels")?;
    }
    let layout = layout.layout;
    let eval: &Evaluator = xs.rust_evaluator();
    layout
        .check_fits(eval.context().max_slots())
        .map_err(apps_error)?;
    let inputs: Vec<&Ciphertext> = std::iter::once(xs.ciphertext())
        .chain(ys.map(PyCiphertext::ciphertext))
        .collect();
    for ct in &inputs {
        layout.check_ciphertext(ct).map_err(apps_error)?;
    }
    let training = lr.levels_needed().map_err(apps_error)?;
    // One level for Z = X * y (unless Z is given), then the training, then the levels to keep.
    let product = usize::from(ys.is_some());
    let needed = product + training + keep_levels;
    let level = inputs.iter().map(|ct| ct.level()).min().unwrap_or(0);
    let available = level.saturating_sub(1);
    // With a bootstrapper the state is refreshed when the levels run out
    // (LogisticRegression::fit_encrypted_bootstrapped checks what it needs).
    if available < needed && bootstrapper.is_none() {
        let combine = if product == 1 {
            "combining the encrypted features and labels into Z uses 1 level, "
        } else {
            ""
        };
        return Err(not_enough_levels(
            format!(
                "not enough levels for encrypted training: {combine}{iterations} iterations with the \
                 degree-{sigmoid_degree} sigmoid use {training}, and {keep_levels} are to be kept in the \
                 weights: {needed} in all, but the ciphertexts have {available}; use fewer iterations, a \
                 lower degree, fewer kept levels, or a context with at least {needed} levels (e.g. the \
                 preset \"PaperTable4\" has 25)"
            ),
            needed,
            available,
        ));
    }
    let start = (needed + 1).min(level);
    let (xc, yc) = (xs.ciphertext(), ys.map(PyCiphertext::ciphertext));
    let btp = bootstrapper.map(|b| std::sync::Arc::clone(&b.btp));
    let model = crate::common::release(py, || -> rnsfhe_apps::Result<EncryptedModel> {
        let xd = eval.drop_to_level(xc, start)?;
        let z = match yc {
            Some(yc) => eval.multiply_rescale(&xd, &eval.drop_to_level(yc, start)?)?,
            None => xd,
        };
        match &btp {
            Some(btp) => lr.fit_encrypted_bootstrapped(eval, &z, &layout, btp),
            None => lr.fit_encrypted(eval, &z, &layout),
        }
    })
    .map_err(apps_error)?;
    let mut levels = if product == 1 { vec![start] } else { vec![] };
    levels.extend_from_slice(model.levels());
    let weights = Py::new(py, xs.sibling(model.weights().clone()))?;
    Ok(PyEncryptedModel {
        model,
        weights,
        levels,
    })
}

/// predict_proba_encrypted(x, layout, weights, sigmoid_degree) -> Ciphertext
///
/// Encrypted prediction with plain weights (``weights``: intercept first, ``layout.width`` of them): for
/// the encrypted rows ``(1, x_i)`` of ``x`` (``layout.pack_x``), column 0 of row ``i`` of the result
/// holds the least-squares sigmoid of ``beta^T (1, x_i)`` (``layout.read_first_column``). Uses ``1 +
/// ceil(log2(degree + 1))`` levels; runs on the evaluator of ``x`` (Galois keys of
/// ``layout.rotation_steps``). Raises NotEnoughLevelsError, ValueError for a slot count other than
/// ``layout.slots``, weights of another length or non-finite weights.
#[pyfunction]
fn predict_proba_encrypted(
    py: Python<'_>,
    x: &Bound<'_, PyCiphertext>,
    layout: &PyPackedLayout,
    weights: Vec<f64>,
    sigmoid_degree: Int,
) -> PyResult<PyCiphertext> {
    let sigmoid_degree: usize = sigmoid_degree.get("sigmoid_degree")?;
    let x = x.try_borrow()?;
    let x = &*x;
    let layout = layout.layout;
    if weights.len() != layout.width() {
        return Err(apps_error(Error::Shape {
            what: "weights (intercept and one per feature of the layout)".into(),
            expected: layout.width(),
            found: weights.len(),
        }));
    }
    let model = LogisticModel::new(weights).map_err(apps_error)?;
    layout
        .check_ciphertext(x.ciphertext())
        .map_err(apps_error)?;
    check_prediction_levels(
        x.ciphertext(),
        sigmoid_degree,
        "the encrypted features",
        "encrypt them at a higher level or use a context with more levels",
    )?;
    let (eval, ct) = (x.rust_evaluator(), x.ciphertext());
    let out = crate::common::release(py, || {
        model.predict_proba_encrypted(eval, ct, &layout, sigmoid_degree)
    })
    .map_err(apps_error)?;
    Ok(x.sibling(out))
}

/// Builds the submodule `apps` of `_rnsfhe`.
pub(crate) fn register(parent: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = parent.py();
    let m = PyModule::new(py, "apps")?;
    // setattr, not add: add would also list the docstring in the module's __all__.
    m.setattr(
        "__doc__",
        "Bindings of rnsfhe-apps (import rnsfhe.apps, which re-exports them and adds LogisticRegression).",
    )?;
    m.add_class::<PyPackedLayout>()?;
    m.add_class::<PyEncryptedModel>()?;
    m.add_class::<comparison::PyComparator>()?;
    m.add_class::<decision_tree::PyTreeClient>()?;
    m.add_class::<decision_tree::PyTreeServerKey>()?;
    m.add_class::<decision_tree::PyTreeScaling>()?;
    m.add_class::<decision_tree::PyEncryptedTree>()?;
    m.add_class::<decision_tree::PyEncryptedQuery>()?;
    m.add_class::<decision_tree::PyEncryptedLabel>()?;
    m.add_class::<kmeans::PyKMeansSession>()?;
    m.add_class::<kmeans::PyKMeansServer>()?;
    m.add_function(wrap_pyfunction!(load_dataset, &m)?)?;
    m.add_function(wrap_pyfunction!(sigmoid_coefficients, &m)?)?;
    m.add_function(wrap_pyfunction!(schedule, &m)?)?;
    m.add_function(wrap_pyfunction!(levels_needed, &m)?)?;
    m.add_function(wrap_pyfunction!(fit_plain, &m)?)?;
    m.add_function(wrap_pyfunction!(metrics, &m)?)?;
    m.add_function(wrap_pyfunction!(accuracy_of_scores, &m)?)?;
    m.add_function(wrap_pyfunction!(auc_of_scores, &m)?)?;
    m.add_function(wrap_pyfunction!(fit_encrypted, &m)?)?;
    m.add_function(wrap_pyfunction!(predict_proba_encrypted, &m)?)?;
    parent.add_submodule(&m)?;
    py.import("sys")?
        .getattr("modules")?
        .set_item("rnsfhe._rnsfhe.apps", &m)?;
    Ok(())
}
