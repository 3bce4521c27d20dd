//! Private decision-tree evaluation (PEGASUS Section V.B) by `rnsfhe_apps::decision_tree`: the client
//! ([`TreeClient`]: keys, queries, labels), the server's tree ([`TreeServer`], `EncryptedTree` here,
//! made from a scikit-learn `DecisionTreeClassifier`), the public feature map and the two messages.
//! Evaluation runs with the GIL released.

use std::sync::Arc;

use numpy::PyReadonlyArray2;
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use rnsfhe::lwe::PegasusPreset;
use rnsfhe_apps::decision_tree::{
    DecisionTree, EncryptedLabel, EncryptedQuery, FeatureScaling, TreeClient, TreeParams,
    TreeServer, TreeServerKey,
};

use crate::common::{
    decode_error, integrity, load_limits, mac_key, randomness, read_bytes, to_py_bytes,
    value_error, Int,
};
use crate::lwe::csprng;
use pyo3::types::PyBytes;
use rnsfhe::core::serialization::LoadLimits;
use rnsfhe::math::wire::{Deserializable, PublicRandomness, Serializable};

fn not_picklable(what: &str) -> PyErr {
    PyTypeError::new_err(format!(
        "rnsfhe.apps.{what} cannot be pickled; make a new one on the receiving side"
    ))
}

/// The preset named `name` (its Rust name, any case).
fn preset(name: &str) -> PyResult<PegasusPreset> {
    PegasusPreset::ALL
        .iter()
        .find(|p| format!("{p:?}").eq_ignore_ascii_case(name))
        .copied()
        .ok_or_else(|| {
            let names: Vec<String> = PegasusPreset::ALL
                .iter()
                .map(|p| format!("{p:?}"))
                .collect();
            PyValueError::new_err(format!(
                "unknown preset {name:?}: expected one of {}",
                names.join(", ")
            ))
        })
}

/// The rows of a 2-D float64 array.
fn rows(x: &PyReadonlyArray2<'_, f64>) -> Vec<Vec<f64>> {
    x.as_array()
        .rows()
        .into_iter()
        .map(|r| r.to_vec())
        .collect()
}

/// TreeScaling(knots): the public map of every raw feature into [0, 1] (piecewise linear through
/// ``knots[j]``, clamped outside), which client and server share. ``TreeScaling.ranges(x)`` fits the
/// ranges of the rows of ``x``, ``TreeScaling.quantiles(x, k)`` ``k + 1`` quantiles (what it reveals of
/// the training data is public by design; the tree stays secret). ValueError for knots that are not
/// strictly increasing and finite.
#[pyclass(name = "TreeScaling", module = "rnsfhe.apps", frozen)]
#[derive(Clone)]
pub(crate) struct PyTreeScaling {
    inner: FeatureScaling,
}

#[pymethods]
impl PyTreeScaling {
    #[new]
    fn new(knots: Vec<Vec<f64>>) -> PyResult<Self> {
        Ok(Self {
            inner: FeatureScaling::from_knots(knots).map_err(value_error)?,
        })
    }

    /// The map from the ranges of the rows of ``x`` (a constant feature gets ``[v, v + 1]``).
    #[staticmethod]
    fn ranges(x: PyReadonlyArray2<'_, f64>) -> PyResult<Self> {
        Ok(Self {
            inner: FeatureScaling::fit_ranges(&rows(&x)).map_err(value_error)?,
        })
    }

    /// The map through ``k + 1`` empirical quantiles of each column of ``x``.
    #[staticmethod]
    fn quantiles(x: PyReadonlyArray2<'_, f64>, k: Int) -> PyResult<Self> {
        Ok(Self {
            inner: FeatureScaling::quantiles(&rows(&x), k.get("k")?).map_err(value_error)?,
        })
    }

    /// The knots of every feature.
    #[getter]
    fn knots(&self) -> Vec<Vec<f64>> {
        self.inner.knots().to_vec()
    }

    /// The mapped features of ``x`` (each in [0, 1]).
    fn normalize(&self, x: Vec<f64>) -> PyResult<Vec<f64>> {
        self.inner.normalize(&x).map_err(value_error)
    }

    fn __reduce__(&self) -> PyResult<PyObject> {
        Err(not_picklable("TreeScaling"))
    }
}

/// The server's evaluation keys (public material made by a :class:`TreeClient`).
#[pyclass(name = "TreeServerKey", module = "rnsfhe.apps", frozen)]
pub(crate) struct PyTreeServerKey {
    inner: Arc<TreeServerKey>,
}

/// The parameters a server key loads into: a parameter set's bytes (``TreeClient.params_bytes()``),
/// read under the process-wide load limits (``rnsfhe.load_limits``) with ``allow_insecure`` as the
/// reader's own opt-in, or a preset name.
fn tree_params(
    py: Python<'_>,
    params: &Bound<'_, PyAny>,
    allow_insecure: bool,
) -> PyResult<TreeParams> {
    if let Ok(name) = params.extract::<String>() {
        let p = TreeParams::new(self::preset(&name)?).map_err(value_error)?;
        return Ok(if allow_insecure {
            p.allowing_insecure()
        } else {
            p
        });
    }
    let limits = LoadLimits {
        allow_insecure: allow_insecure || load_limits().allow_insecure,
        ..load_limits()
    };
    let data = read_bytes(params)?;
    let bytes = data.as_bytes();
    py.allow_threads(|| TreeParams::from_bytes_with(bytes, &limits))
        .map_err(decode_error)
}

#[pymethods]
impl PyTreeServerKey {
    /// TreeServerKey.from_bytes(data, params, allow_insecure=False, mac_key=None) -> TreeServerKey
    ///
    /// Loads the keys a client sent (bytes-like, from ``to_bytes``) into ``params``: the parameter
    /// set's bytes (``TreeClient.params_bytes()``; sets below 128 bits load only with
    /// ``allow_insecure=True``, the reader's own opt-in) or a preset name. Checks the digest (a MAC
    /// under ``mac_key`` when given) before anything else, that the header's fingerprint is that of
    /// the parameters, and every key against them. Raises rnsfhe.DecodeError (a ValueError) naming the
    /// field and byte offset otherwise. The GIL is released.
    #[staticmethod]
    #[pyo3(signature = (data, params, allow_insecure = false, mac_key = None))]
    fn from_bytes(
        py: Python<'_>,
        data: &Bound<'_, PyAny>,
        params: &Bound<'_, PyAny>,
        allow_insecure: bool,
        mac_key: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let params = tree_params(py, params, allow_insecure)?;
        let key = self::mac_key(mac_key)?;
        let data = read_bytes(data)?;
        let bytes = data.as_bytes();
        let inner = py
            .allow_threads(|| TreeServerKey::from_bytes_sealed(bytes, &params, integrity(&key)))
            .map_err(decode_error)?;
        Ok(Self {
            inner: Arc::new(inner),
        })
    }

    /// to_bytes(seeded=True, mac_key=None) -> bytes
    ///
    /// The keys in rnsfhe's wire format (blind-rotation key, switching key back to the LWE key, public
    /// key of the query ring; uniform parts as 32-byte seeds unless ``seeded=False``), sealed by a
    /// BLAKE3 digest or a MAC under ``mac_key``. Public material: send it to the server.
    #[pyo3(signature = (seeded = true, mac_key = None))]
    fn to_bytes<'py>(
        &self,
        py: Python<'py>,
        seeded: bool,
        mac_key: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let key = self::mac_key(mac_key)?;
        Ok(to_py_bytes(py, || {
            self.inner
                .to_bytes_sealed(randomness(seeded), integrity(&key))
        }))
    }

    /// serialized_size(seeded=True) -> int: the length of ``to_bytes(seeded)``, without writing.
    #[pyo3(signature = (seeded = true))]
    fn serialized_size(&self, seeded: bool) -> u64 {
        self.inner.serialized_size_with(randomness(seeded))
    }

    /// params_bytes() -> bytes: the parameter set of the keys, which ``from_bytes`` loads into.
    fn params_bytes<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        to_py_bytes(py, || self.inner.params().to_bytes())
    }

    fn __reduce__(&self) -> PyResult<PyObject> {
        Err(not_picklable("TreeServerKey"))
    }
}

/// The client's encrypted features: one seeded RLWE ciphertext.
#[pyclass(name = "EncryptedQuery", module = "rnsfhe.apps", frozen)]
pub(crate) struct PyEncryptedQuery {
    inner: EncryptedQuery,
}

#[pymethods]
impl PyEncryptedQuery {
    /// EncryptedQuery.from_bytes(data, server_key, mac_key=None) -> EncryptedQuery
    ///
    /// Loads a client's query (bytes-like, from ``to_bytes``) into the query ring of ``server_key``:
    /// digest (or MAC) first, then the header's fingerprint (a query of other keys' ring is refused),
    /// the feature count (1 to ``n_lwe``), the seeded layout and every residue. Raises
    /// rnsfhe.DecodeError naming the field and byte offset otherwise.
    #[staticmethod]
    #[pyo3(signature = (data, server_key, mac_key = None))]
    fn from_bytes(
        py: Python<'_>,
        data: &Bound<'_, PyAny>,
        server_key: PyRef<'_, PyTreeServerKey>,
        mac_key: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let key = self::mac_key(mac_key)?;
        let ctx = Arc::clone(server_key.inner.query_context());
        let data = read_bytes(data)?;
        let bytes = data.as_bytes();
        py.allow_threads(|| EncryptedQuery::from_bytes_sealed(bytes, &ctx, integrity(&key)))
            .map(|inner| Self { inner })
            .map_err(decode_error)
    }

    /// to_bytes(mac_key=None) -> bytes
    ///
    /// The query in rnsfhe's wire format (its uniform part as a 32-byte seed: one polynomial), sealed
    /// by a BLAKE3 digest or a MAC under ``mac_key``: what the client sends (``wire_size`` bytes).
    #[pyo3(signature = (mac_key = None))]
    fn to_bytes<'py>(
        &self,
        py: Python<'py>,
        mac_key: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let key = self::mac_key(mac_key)?;
        Ok(to_py_bytes(py, || {
            self.inner
                .to_bytes_sealed(PublicRandomness::Seeded, integrity(&key))
        }))
    }

    /// Bytes on the wire (what the client sends).
    #[getter]
    fn wire_size(&self) -> u64 {
        self.inner.wire_size()
    }

    /// The number of features.
    #[getter]
    fn features(&self) -> usize {
        self.inner.features()
    }

    fn __reduce__(&self) -> PyResult<PyObject> {
        Err(not_picklable("EncryptedQuery"))
    }
}

/// The server's answer: one LWE ciphertext of the label.
#[pyclass(name = "EncryptedLabel", module = "rnsfhe.apps", frozen)]
pub(crate) struct PyEncryptedLabel {
    inner: EncryptedLabel,
}

#[pymethods]
impl PyEncryptedLabel {
    /// EncryptedLabel.from_bytes(data, client, mac_key=None) -> EncryptedLabel
    ///
    /// Loads a server's answer (bytes-like, from ``to_bytes``) into the LWE space of ``client``'s
    /// labels: digest (or MAC) first, then the header's fingerprint, the class count and step, and
    /// every residue. Raises rnsfhe.DecodeError naming the field and byte offset otherwise.
    #[staticmethod]
    #[pyo3(signature = (data, client, mac_key = None))]
    fn from_bytes(
        py: Python<'_>,
        data: &Bound<'_, PyAny>,
        client: PyRef<'_, PyTreeClient>,
        mac_key: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let key = self::mac_key(mac_key)?;
        let space = client.inner.label_space().map_err(value_error)?;
        let data = read_bytes(data)?;
        let bytes = data.as_bytes();
        py.allow_threads(|| EncryptedLabel::from_bytes_sealed(bytes, &space, integrity(&key)))
            .map(|inner| Self { inner })
            .map_err(decode_error)
    }

    /// to_bytes(mac_key=None) -> bytes
    ///
    /// The answer in rnsfhe's wire format (class count, label step, the LWE ciphertext), sealed by a
    /// BLAKE3 digest or a MAC under ``mac_key``: what the server sends (``wire_size`` bytes).
    #[pyo3(signature = (mac_key = None))]
    fn to_bytes<'py>(
        &self,
        py: Python<'py>,
        mac_key: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let key = self::mac_key(mac_key)?;
        Ok(to_py_bytes(py, || {
            self.inner
                .to_bytes_sealed(PublicRandomness::Seeded, integrity(&key))
        }))
    }

    /// Bytes on the wire (what the server sends).
    #[getter]
    fn wire_size(&self) -> u64 {
        self.inner.wire_size()
    }

    /// The class count.
    #[getter]
    fn classes(&self) -> usize {
        self.inner.classes()
    }

    fn __reduce__(&self) -> PyResult<PyObject> {
        Err(not_picklable("EncryptedLabel"))
    }
}

/// TreeClient(preset="PegasusTable4", allow_insecure=False, seed=None): the client of private decision
/// trees: new secret keys for the LWE side of ``preset`` (PegasusTable4, PegasusTable4FastSpecial,
/// Secure128, InsecureTest) and the server's keys (``server_key``). Presets the estimator puts below 128
/// bits (PegasusTable4's switching key, InsecureTest) need ``allow_insecure=True``. ``seed``:
/// deterministic keys, tests only. Not picklable.
#[pyclass(name = "TreeClient", module = "rnsfhe.apps", frozen)]
pub(crate) struct PyTreeClient {
    inner: TreeClient,
    key: Py<PyTreeServerKey>,
}

#[pymethods]
impl PyTreeClient {
    #[new]
    #[pyo3(signature = (preset = "PegasusTable4", allow_insecure = false, seed = None))]
    fn new(
        py: Python<'_>,
        preset: &str,
        allow_insecure: bool,
        seed: Option<Int>,
    ) -> PyResult<Self> {
        let mut params = TreeParams::new(self::preset(preset)?).map_err(value_error)?;
        if allow_insecure {
            params = params.allowing_insecure();
        }
        let mut rng = csprng(seed)?;
        let (inner, key) = crate::common::release(py, || TreeClient::generate(params, &mut rng))
            .map_err(value_error)?;
        Ok(Self {
            inner,
            key: Py::new(
                py,
                PyTreeServerKey {
                    inner: Arc::new(key),
                },
            )?,
        })
    }

    /// The keys to send to the server.
    #[getter]
    fn server_key(&self, py: Python<'_>) -> Py<PyTreeServerKey> {
        self.key.clone_ref(py)
    }

    /// params_bytes() -> bytes: the parameter set, for the server (``TreeServerKey.from_bytes``).
    fn params_bytes<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        to_py_bytes(py, || self.inner.params().to_bytes())
    }

    /// The most features one query packs (``n_lwe``).
    #[getter]
    fn max_features(&self) -> usize {
        self.inner.params().max_features()
    }

    /// The query of the raw features ``x`` mapped by the server's public ``scaling``. ``seed``:
    /// deterministic encryption, tests only. ValueError for another feature count than the scaling's,
    /// more than ``max_features``, or values that are not finite.
    #[pyo3(signature = (scaling, x, seed = None))]
    fn encrypt(
        &self,
        scaling: &PyTreeScaling,
        x: Vec<f64>,
        seed: Option<Int>,
    ) -> PyResult<PyEncryptedQuery> {
        let mut rng = csprng(seed)?;
        Ok(PyEncryptedQuery {
            inner: self
                .inner
                .encrypt(&scaling.inner, &x, &mut rng)
                .map_err(value_error)?,
        })
    }

    /// The label (an index into the classifier's ``classes_``) of a server's answer. ValueError for an
    /// answer of other keys' dimension or modulus.
    fn decrypt(&self, label: &PyEncryptedLabel) -> PyResult<usize> {
        self.inner.decrypt(&label.inner).map_err(value_error)
    }

    fn __reduce__(&self) -> PyResult<PyObject> {
        Err(not_picklable("TreeClient"))
    }
}

/// EncryptedTree(feature, threshold, children_left, children_right, labels, classes, scaling,
/// server_key): the server's secret tree, evaluated on encrypted queries (PEGASUS Section V.B). Made
/// from a scikit-learn ``DecisionTreeClassifier`` by ``EncryptedTree.from_sklearn(clf, server_key,
/// scaling)``, or from the arrays of ``clf.tree_`` (a leaf has both children -1; ``labels[i]`` the
/// label of node i). ValueError for an invalid tree, or one deeper, wider or with more features than
/// the parameters allow (the message names the limit). Not picklable.
#[pyclass(name = "EncryptedTree", module = "rnsfhe.apps", frozen)]
pub(crate) struct PyEncryptedTree {
    inner: TreeServer,
    scaling: Py<PyTreeScaling>,
}

impl PyEncryptedTree {
    #[allow(clippy::too_many_arguments)]
    fn build(
        py: Python<'_>,
        feature: Vec<i64>,
        threshold: Vec<f64>,
        children_left: Vec<i64>,
        children_right: Vec<i64>,
        labels: Vec<usize>,
        classes: usize,
        scaling: Py<PyTreeScaling>,
        server_key: &PyTreeServerKey,
    ) -> PyResult<Self> {
        let map = scaling.bind(py).get().inner.clone();
        let tree = DecisionTree::from_sklearn_arrays(
            &feature,
            &threshold,
            &children_left,
            &children_right,
            &labels,
            map.features(),
            classes,
        )
        .map_err(value_error)?;
        let key = Arc::clone(&server_key.inner);
        let inner =
            crate::common::release(py, || TreeServer::new(tree, map, key)).map_err(value_error)?;
        Ok(Self { inner, scaling })
    }
}

#[pymethods]
impl PyEncryptedTree {
    #[new]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        feature: Vec<i64>,
        threshold: Vec<f64>,
        children_left: Vec<i64>,
        children_right: Vec<i64>,
        labels: Vec<usize>,
        classes: usize,
        scaling: Py<PyTreeScaling>,
        server_key: PyRef<'_, PyTreeServerKey>,
    ) -> PyResult<Self> {
        Self::build(
            py,
            feature,
            threshold,
            children_left,
            children_right,
            labels,
            classes,
            scaling,
            &server_key,
        )
    }

    /// The tree of a fitted scikit-learn ``DecisionTreeClassifier`` ``clf`` (single output): its
    /// ``tree_`` arrays, the arg-max of ``tree_.value`` as leaf labels (indices into ``clf.classes_``),
    /// ``len(clf.classes_)`` classes. ``scaling``: a :class:`TreeScaling` of ``clf.n_features_in_``
    /// features, published to clients.
    #[staticmethod]
    fn from_sklearn(
        py: Python<'_>,
        clf: &Bound<'_, PyAny>,
        server_key: PyRef<'_, PyTreeServerKey>,
        scaling: Py<PyTreeScaling>,
    ) -> PyResult<Self> {
        let t = clf.getattr("tree_").map_err(|_| {
            PyTypeError::new_err(
                "from_sklearn reads a fitted DecisionTreeClassifier (no tree_ attribute)",
            )
        })?;
        let list =
            |name: &str| -> PyResult<Bound<'_, PyAny>> { t.getattr(name)?.call_method0("tolist") };
        let value: Vec<Vec<Vec<f64>>> = list("value")?.extract()?;
        let labels = value
            .iter()
            .map(|node| {
                let [out] = node.as_slice() else {
                    return Err(PyValueError::new_err(
                        "from_sklearn reads single-output classifiers (tree_.value of shape (nodes, 1, classes))",
                    ));
                };
                Ok(out
                    .iter()
                    .enumerate()
                    .fold((0usize, f64::NEG_INFINITY), |best, (i, &v)| {
                        if v > best.1 {
                            (i, v)
                        } else {
                            best
                        }
                    })
                    .0)
            })
            .collect::<PyResult<Vec<_>>>()?;
        let classes = clf.getattr("classes_")?.len()?;
        Self::build(
            py,
            list("feature")?.extract()?,
            list("threshold")?.extract()?,
            list("children_left")?.extract()?,
            list("children_right")?.extract()?,
            labels,
            classes,
            scaling,
            &server_key,
        )
    }

    /// The label of the encrypted query, as one sanitized LWE ciphertext (GIL released). ``seed``:
    /// deterministic sanitization noise, tests only. ValueError for a query of another feature count
    /// or ring.
    #[pyo3(signature = (query, seed = None))]
    fn predict(
        &self,
        py: Python<'_>,
        query: &PyEncryptedQuery,
        seed: Option<Int>,
    ) -> PyResult<PyEncryptedLabel> {
        let mut rng = csprng(seed)?;
        let inner = crate::common::release(py, || self.inner.evaluate(&query.inner, &mut rng))
            .map_err(value_error)?;
        Ok(PyEncryptedLabel { inner })
    }

    /// The public feature map (send it to clients).
    #[getter]
    fn scaling(&self, py: Python<'_>) -> Py<PyTreeScaling> {
        self.scaling.clone_ref(py)
    }

    /// The depth (secret: the server's own information).
    #[getter]
    fn depth(&self) -> usize {
        self.inner.tree().depth()
    }

    /// The number of internal nodes.
    #[getter]
    fn internal_nodes(&self) -> usize {
        self.inner.tree().internal_nodes()
    }

    /// The number of leaves.
    #[getter]
    fn leaves(&self) -> usize {
        self.inner.tree().leaves()
    }

    /// Look-up tables per query (internal nodes + leaves + 1).
    #[getter]
    fn tables_per_query(&self) -> usize {
        self.inner.tables_per_query()
    }

    /// Mapped features closer than this to a mapped threshold may take either branch.
    #[getter]
    fn comparison_resolution(&self) -> f64 {
        self.inner.comparison_resolution()
    }

    /// The label of raw features ``x`` in the clear (the reference).
    fn predict_plain(&self, x: Vec<f64>) -> PyResult<usize> {
        self.inner.tree().predict(&x).map_err(value_error)
    }

    fn __reduce__(&self) -> PyResult<PyObject> {
        Err(not_picklable("EncryptedTree"))
    }
}
