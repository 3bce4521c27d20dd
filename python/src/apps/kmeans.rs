//! `KMeansSession`: one party's view of the secure k-means of PEGASUS Section V.C (`rnsfhe_apps::kmeans`)
//! for `rnsfhe.apps.KMeans`. It holds the client's secret keys (CKKS, and the pipeline's LWE-side secrets
//! for the assignment bits) and the server's evaluator with the evaluation keys only; `update` runs
//! client (pack and encrypt points and centroids) -> server (the five sectors on ciphertexts) -> client
//! (decrypt the new centroids), with the GIL released. `KMeansServer`: the per-point part of the
//! min-index sector (`KMeansEvaluator::assignment_bits`) on keys loaded from the bytes a session writes,
//! for the workers of `rnsfhe.distributed`.

use std::sync::{Arc, Mutex};

use numpy::{PyArray2, PyReadonlyArray2};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use rnsfhe::ckks::{CkksDecryptor, CkksEncryptor, Csprng, KeyGenerator};
use rnsfhe::lwe::LweCiphertext;
use rnsfhe::math::wire::Serializable;
use rnsfhe::pegasus::{
    PegasusEvaluator, PegasusKeys, PegasusSecretKeys, PipelineOptions, PipelinePreset,
};
use rnsfhe_apps::kmeans::{plain, Assignment, EncryptedCentroids, EncryptedPoints};
use rnsfhe_apps::{ComparisonKey, KMeansEvaluator, KMeansKeys, KMeansLayout, KMeansOptions};

use super::apps_error;
use crate::common::{preset_name, value_error, Int};
use crate::lwe::{csprng, read_ciphertexts, PyLweCiphertext};
use crate::pegasus::checked_pipeline_params;

/// KMeansSession(points, clusters, features, radius, preset="InsecureTest", lut_log_n=None,
/// distance_bound=None, threshold=None, seed=None, allow_insecure=False): the keys and the server of
/// one secure k-means update (PEGASUS Section V.C) for ``points`` points of ``features`` features in
/// ``clusters`` clusters; use ``rnsfhe.apps.KMeans``, which makes one per ``fit``.
///
/// ``radius`` bounds the norm of every point (the client checks it: past it a distance could wrap a
/// look-up table around); ``distance_bound`` (default ``3 radius^2``) is what the distances are scaled
/// by, ``threshold`` the predicate's (tables' units). The pipeline is made with the slot count the
/// layout needs (``slots``); ValueError when the sizes are beyond the preset's packing, or for a preset
/// below 128 bits ("Table4", "InsecureTest") without ``allow_insecure=True`` (then a UserWarning).
/// ``seed``: deterministic keys, tests only. Not picklable. The min-index sector runs whole
/// (``min_index``) or in parts on ``server()``; the ``*_to_bytes`` methods write the keys a
/// ``KMeansServer`` loads elsewhere (``rnsfhe.distributed.kmeans_keys``).
#[pyclass(name = "KMeansSession", module = "rnsfhe.apps", frozen)]
pub(crate) struct PyKMeansSession {
    server: Arc<KMeansEvaluator<PegasusEvaluator>>,
    secrets: PegasusSecretKeys,
    encryptor: CkksEncryptor,
    decryptor: CkksDecryptor,
    rng: Mutex<Csprng>,
}

/// The new centroids and the assignment bits of an update.
type TwoArrays<'py> = (Bound<'py, PyArray2<f64>>, Bound<'py, PyArray2<f64>>);

/// The options of `KMeansSession` and `KMeansServer.from_bytes`.
fn kmeans_options(
    radius: f64,
    distance_bound: Option<f64>,
    threshold: Option<f64>,
) -> KMeansOptions {
    KMeansOptions {
        distance_bound,
        threshold,
        ..KMeansOptions::new(radius)
    }
}

/// `(dimension, modulus)` of the distances (the LWE side) and of the bits (the table ring, `q_0`).
type Spaces = ((usize, u64), (usize, u64));

fn wrap(cts: Vec<LweCiphertext>) -> Vec<PyLweCiphertext> {
    cts.into_iter().map(PyLweCiphertext::from).collect()
}

fn rows(a: &PyReadonlyArray2<'_, f64>) -> Vec<Vec<f64>> {
    a.as_array()
        .rows()
        .into_iter()
        .map(|r| r.to_vec())
        .collect()
}

impl PyKMeansSession {
    /// The client's points and centroids, encrypted at the top level.
    fn encrypt(
        &self,
        x: &[Vec<f64>],
        c: &[Vec<f64>],
    ) -> Result<(EncryptedPoints, EncryptedCentroids), rnsfhe_apps::Error> {
        let s = &self.server;
        let layout = *s.layout();
        let ctx = s.comparator().pegasus().context().clone();
        let (e, top) = (s.encoding(), ctx.max_level());
        let mut rng = self.rng.lock().unwrap_or_else(|e| e.into_inner());
        Ok((
            layout.encrypt_points(&ctx, &self.encryptor, x, e, top, &mut rng)?,
            layout.encrypt_centroids(&ctx, &self.encryptor, c, e, top, &mut rng)?,
        ))
    }
}

#[pymethods]
impl PyKMeansSession {
    #[new]
    #[pyo3(signature = (points, clusters, features, radius, preset = "InsecureTest", lut_log_n = None,
                        distance_bound = None, threshold = None, seed = None, allow_insecure = false))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        points: Int,
        clusters: Int,
        features: Int,
        radius: f64,
        preset: &str,
        lut_log_n: Option<Int>,
        distance_bound: Option<f64>,
        threshold: Option<f64>,
        seed: Option<Int>,
        allow_insecure: bool,
    ) -> PyResult<Self> {
        let preset = PipelinePreset::ALL
            .into_iter()
            .find(|p| preset_name(p).eq_ignore_ascii_case(preset))
            .ok_or_else(|| {
                PyValueError::new_err(format!(
                    "unknown PEGASUS preset {preset:?}: expected one of {:?}",
                    PipelinePreset::ALL.map(preset_name)
                ))
            })?;
        let layout = KMeansLayout::new(
            points.get("points")?,
            clusters.get("clusters")?,
            features.get("features")?,
        )
        .map_err(apps_error)?;
        let lut_log_n: Option<u32> = lut_log_n.map(|l| l.get("lut_log_n")).transpose()?;
        let mut rng = csprng(seed)?;
        let params = checked_pipeline_params(py, preset, lut_log_n, allow_insecure)?;
        let ctx = params.ckks.clone();
        let max_slots = ctx.max_slots();
        KMeansLayout::for_slots(
            layout.points(),
            layout.clusters(),
            layout.features(),
            layout.slots().min(max_slots),
        )
        .map_err(apps_error)?;
        let options = kmeans_options(radius, distance_bound, threshold);
        let made = crate::common::release(py, || -> Result<_, rnsfhe_apps::Error> {
            let keygen = KeyGenerator::new(&ctx, &mut rng)?;
            let pipeline = PipelineOptions {
                allow_insecure,
                ..PipelineOptions::new(layout.slots())
            };
            let (keys, secrets) = PegasusKeys::generate(&params, &pipeline, &keygen, &mut rng)?;
            let pegasus = PegasusEvaluator::new(params, pipeline, keys)?;
            let key = ComparisonKey::generate(&pegasus, &secrets, &mut rng)?;
            let kkeys = KMeansKeys::generate(&layout, &keygen, &mut rng)?;
            let server = KMeansEvaluator::new(pegasus, key, kkeys, layout, options)?;
            Ok(Self {
                server: Arc::new(server),
                secrets,
                encryptor: CkksEncryptor::with_secret_key(&ctx, keygen.secret_key())?,
                decryptor: CkksDecryptor::new(&ctx, keygen.secret_key())?,
                rng: Mutex::new(rng),
            })
        });
        made.map_err(apps_error)
    }

    /// The slot count of the layout (``P K'``: points and clusters rounded up to powers of two).
    #[getter]
    fn slots(&self) -> usize {
        self.server.layout().slots()
    }

    /// ``sqrt(s)``: the factor the client multiplies the features by before encrypting them.
    #[getter]
    fn feature_factor(&self) -> f64 {
        self.server.feature_factor()
    }

    /// ``s = V / distance_bound``: a distance reaches the look-up tables multiplied by it.
    #[getter]
    fn distance_scale(&self) -> f64 {
        self.server.distance_scale()
    }

    /// The predicate's threshold (tables' units).
    #[getter]
    fn threshold(&self) -> f64 {
        self.server.threshold()
    }

    /// The separation of distances above which an assignment is exact by the error bounds (distance
    /// units: ``||c||^2 - 2 <x, c>``).
    fn resolution(&self) -> PyResult<f64> {
        self.server.resolution().map_err(apps_error)
    }

    /// update(x, centroids) -> (new_centroids, bits): one encrypted update. The client encrypts ``x``
    /// (``points x features``) and ``centroids`` (``clusters x features``), the server runs the five
    /// sectors on the ciphertexts, the client decrypts the new centroids and the assignment bits
    /// (``points x clusters``, as decrypted: about 0 or 1).
    fn update<'py>(
        &self,
        py: Python<'py>,
        x: PyReadonlyArray2<'py, f64>,
        centroids: PyReadonlyArray2<'py, f64>,
    ) -> PyResult<TwoArrays<'py>> {
        let (x, c) = (rows(&x), rows(&centroids));
        let out = crate::common::release(py, || -> Result<_, rnsfhe_apps::Error> {
            let s = &self.server;
            let layout = *s.layout();
            let f = s.feature_factor();
            let (px, pc) = self.encrypt(&x, &c)?;
            let d = s.distances(&px, &pc)?;
            let assignment = s.min_index(&s.extract(&d)?)?;
            let new = s.centroids(&px, &s.repack(&assignment)?)?;
            let bits = s.decrypt_bits(&self.secrets, &assignment)?;
            Ok((layout.decrypt_centroids(&self.decryptor, &new, f)?, bits))
        });
        let (new, bits) = out.map_err(apps_error)?;
        Ok((
            PyArray2::from_vec2(py, &new).map_err(value_error)?,
            PyArray2::from_vec2(py, &bits).map_err(value_error)?,
        ))
    }

    /// server() -> KMeansServer: the server's side of the session (its evaluation keys, no secret), for
    /// the min-index sector in parts (``assignment_bits``, ``reciprocals``).
    fn server(&self) -> PyKMeansServer {
        PyKMeansServer {
            server: Arc::clone(&self.server),
        }
    }

    /// params_to_bytes() -> bytes: the pipeline's parameters (``KMeansServer.from_bytes`` reads them).
    fn params_to_bytes<'py>(&self, py: Python<'py>) -> Bound<'py, pyo3::types::PyBytes> {
        let p = self.server.comparator().pegasus();
        crate::common::to_py_bytes(py, || p.params().to_bytes())
    }

    /// options_to_bytes() -> bytes: the pipeline's options, bound to its parameters.
    fn options_to_bytes<'py>(&self, py: Python<'py>) -> Bound<'py, pyo3::types::PyBytes> {
        let p = self.server.comparator().pegasus();
        crate::common::to_py_bytes(py, || p.options().to_bytes(p.params()))
    }

    /// keys_to_bytes(seeded=True) -> bytes: the pipeline's evaluation keys (no secret; ``seeded``: the
    /// uniform parts as seeds). The GIL is released.
    #[pyo3(signature = (seeded = true))]
    fn keys_to_bytes<'py>(
        &self,
        py: Python<'py>,
        seeded: bool,
    ) -> PyResult<Bound<'py, pyo3::types::PyBytes>> {
        let p = self.server.comparator().pegasus();
        let bytes = crate::common::release(py, || {
            p.keys_to_bytes(
                crate::common::randomness(seeded),
                rnsfhe::math::wire::Integrity::Digest,
            )
        })
        .map_err(|e| apps_error(rnsfhe_apps::Error::Pegasus(e)))?;
        Ok(pyo3::types::PyBytes::new(py, &bytes))
    }

    /// comparison_key_to_bytes(seeded=True) -> bytes: the switching key from the look-up-table ring
    /// back to the LWE key (PEGASUS Fig. 9) that the min-trees need. The GIL is released.
    #[pyo3(signature = (seeded = true))]
    fn comparison_key_to_bytes<'py>(
        &self,
        py: Python<'py>,
        seeded: bool,
    ) -> Bound<'py, pyo3::types::PyBytes> {
        let key = self.server.comparator().key().switching_key();
        crate::common::to_py_bytes(py, || key.to_bytes_with(crate::common::randomness(seeded)))
    }

    /// distances(x, centroids) -> list[rnsfhe.lwe.LweCiphertext]: the client encrypts ``x`` and
    /// ``centroids`` (as ``update``), the server computes the distances and extracts them to LWE (sectors
    /// 1 and 2): ``points x clusters`` ciphertexts, point-major, the input of the min-index sector.
    fn distances(
        &self,
        py: Python<'_>,
        x: PyReadonlyArray2<'_, f64>,
        centroids: PyReadonlyArray2<'_, f64>,
    ) -> PyResult<Vec<PyLweCiphertext>> {
        let (x, c) = (rows(&x), rows(&centroids));
        let out = crate::common::release(py, || -> Result<_, rnsfhe_apps::Error> {
            let s = &self.server;
            let (px, pc) = self.encrypt(&x, &c)?;
            s.extract(&s.distances(&px, &pc)?)
        });
        Ok(wrap(out.map_err(apps_error)?))
    }

    /// min_index(distances) -> (bits, reciprocals): the min-index sector on the ciphertexts of
    /// ``distances`` (all points): the assignment bits (``points x clusters``, point-major, under the
    /// look-up-table ring's key) and the reciprocals of the cluster sizes (``clusters``).
    fn min_index(
        &self,
        py: Python<'_>,
        distances: &Bound<'_, PyAny>,
    ) -> PyResult<(Vec<PyLweCiphertext>, Vec<PyLweCiphertext>)> {
        let d = read_ciphertexts(distances)?;
        let a = crate::common::release(py, || self.server.min_index(&d)).map_err(apps_error)?;
        Ok((wrap(a.bits), wrap(a.reciprocals)))
    }

    /// decrypt_bits(bits) -> numpy.ndarray: assignment bits (of whole points) decrypted, one row of
    /// ``clusters`` per point (about 0 or 1).
    fn decrypt_bits<'py>(
        &self,
        py: Python<'py>,
        bits: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyArray2<f64>>> {
        let assignment = Assignment {
            bits: read_ciphertexts(bits)?,
            reciprocals: Vec::new(),
        };
        let rows =
            crate::common::release(py, || self.server.decrypt_bits(&self.secrets, &assignment))
                .map_err(apps_error)?;
        PyArray2::from_vec2(py, &rows).map_err(value_error)
    }

    /// closest_assignment_ratio(bits, closest) -> float: the fraction of points whose rounded bits are
    /// exactly the one-hot row of their closest centroid (PEGASUS Table VIII's rho).
    #[staticmethod]
    fn closest_assignment_ratio(
        bits: PyReadonlyArray2<'_, f64>,
        closest: Vec<usize>,
    ) -> PyResult<f64> {
        plain::closest_assignment_ratio(&rows(&bits), &closest).map_err(apps_error)
    }

    fn __repr__(&self) -> String {
        let l = self.server.layout();
        format!(
            "KMeansSession(points={}, clusters={}, features={}, slots={})",
            l.points(),
            l.clusters(),
            l.features(),
            l.slots()
        )
    }
}

/// The per-point part of the min-index sector of secure k-means (PEGASUS Section V.C, Eq. (2)) on
/// evaluation keys loaded from bytes, without any secret: what a worker of ``rnsfhe.distributed`` runs
/// on its chunk of points (``rnsfhe.distributed.kmeans_lut_stage``).
///
/// ``KMeansServer.from_bytes(points, clusters, features, radius, params, options, keys, comparison_key,
/// distance_bound=None, threshold=None, allow_insecure=False, mac_key=None)`` loads what a
/// ``KMeansSession`` wrote (``params_to_bytes``, ``options_to_bytes``, ``keys_to_bytes``,
/// ``comparison_key_to_bytes``) for its sizes and options (``layout``, ``radius``, ``distance_bound``,
/// ``threshold``, all on ``session.server()``); its bits are the session's, bit for bit. ``assignment_bits(distances)`` takes the
/// distances of any whole number of points; ``reciprocals(bits)`` the bits of all of them. The GIL is
/// released in each.
#[pyclass(name = "KMeansServer", module = "rnsfhe.apps", frozen)]
pub(crate) struct PyKMeansServer {
    server: Arc<KMeansEvaluator<PegasusEvaluator>>,
}

#[pymethods]
impl PyKMeansServer {
    /// KMeansServer.from_bytes(points, clusters, features, radius, params, options, keys,
    /// comparison_key, distance_bound=None, threshold=None, allow_insecure=False, mac_key=None)
    ///
    /// The pipeline from its bytes (the parameters under the load limits, ``allow_insecure`` the
    /// reader's opt-in for sets below 128 bits; the options; every key), the comparison key against it,
    /// each digest checked (a MAC under ``mac_key``): rnsfhe.DecodeError naming the field and byte
    /// offset. ValueError for sizes or options the pipeline does not fit. The GIL is released.
    #[staticmethod]
    #[pyo3(signature = (points, clusters, features, radius, params, options, keys, comparison_key,
                        distance_bound = None, threshold = None, allow_insecure = false,
                        mac_key = None))]
    #[allow(clippy::too_many_arguments)]
    fn from_bytes(
        py: Python<'_>,
        points: Int,
        clusters: Int,
        features: Int,
        radius: f64,
        params: &Bound<'_, PyAny>,
        options: &Bound<'_, PyAny>,
        keys: &Bound<'_, PyAny>,
        comparison_key: &Bound<'_, PyAny>,
        distance_bound: Option<f64>,
        threshold: Option<f64>,
        allow_insecure: bool,
        mac_key: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        use crate::common::{decode_error, integrity, read_bytes};
        let layout = KMeansLayout::new(
            points.get("points")?,
            clusters.get("clusters")?,
            features.get("features")?,
        )
        .map_err(apps_error)?;
        let key = crate::common::mac_key(mac_key)?;
        let blobs = [
            read_bytes(params)?,
            read_bytes(options)?,
            read_bytes(keys)?,
            read_bytes(comparison_key)?,
        ];
        let [params, options, keys, comparison_key] = blobs.each_ref().map(|b| b.as_bytes());
        let (pegasus, cmp_key) = crate::common::release(py, || {
            let pegasus = crate::pegasus::server::evaluator_from_bytes(
                params,
                options,
                keys,
                allow_insecure,
                integrity(&key),
            )?;
            let cmp_key =
                ComparisonKey::from_bytes_sealed(comparison_key, &pegasus, integrity(&key))?;
            Ok((pegasus, cmp_key))
        })
        .map_err(decode_error)?;
        let options = kmeans_options(radius, distance_bound, threshold);
        let server = crate::common::release(py, || {
            KMeansEvaluator::for_assignment(pegasus, cmp_key, layout, options)
        })
        .map_err(apps_error)?;
        Ok(Self {
            server: Arc::new(server),
        })
    }

    /// The sizes ``(points, clusters, features)``.
    #[getter]
    fn layout(&self) -> (usize, usize, usize) {
        let l = self.server.layout();
        (l.points(), l.clusters(), l.features())
    }

    /// The declared radius of the points.
    #[getter]
    fn radius(&self) -> f64 {
        self.server.options().data_radius
    }

    /// The bound the distances are scaled by (``3 radius^2`` unless declared).
    #[getter]
    fn distance_bound(&self) -> f64 {
        self.server.options().distance_bound()
    }

    /// The predicate's threshold (tables' units).
    #[getter]
    fn threshold(&self) -> f64 {
        self.server.threshold()
    }

    /// ``((dimension, modulus), (dimension, modulus))``: the spaces of the distances it reads (the LWE
    /// side) and of the bits it returns (the look-up-table ring, modulo q0).
    #[getter]
    fn spaces(&self) -> PyResult<Spaces> {
        let p = self.server.comparator().pegasus();
        let modulus = p
            .lwe_modulus()
            .map_err(|e| apps_error(rnsfhe_apps::Error::Pegasus(e)))?;
        let ring = p.lut_evaluator().key().context().n();
        Ok((
            (p.params().lwe.lwe_dimension, modulus),
            (ring, p.params().q0()),
        ))
    }

    /// assignment_bits(distances) -> list[rnsfhe.lwe.LweCiphertext]: the min-tree and the bits
    /// ``I(D_ij - min_i <= threshold)`` of every point of ``distances`` (``clusters`` per point,
    /// point-major; 1 to ``points`` points), under the look-up-table ring's key, modulo q0.
    fn assignment_bits(
        &self,
        py: Python<'_>,
        distances: &Bound<'_, PyAny>,
    ) -> PyResult<Vec<PyLweCiphertext>> {
        let d = read_ciphertexts(distances)?;
        let bits =
            crate::common::release(py, || self.server.assignment_bits(&d)).map_err(apps_error)?;
        Ok(wrap(bits))
    }

    /// reciprocals(bits) -> list[rnsfhe.lwe.LweCiphertext]: the cluster sizes from the bits of all
    /// points, switched back to the LWE key, and their reciprocals by the table (``clusters``).
    fn reciprocals(
        &self,
        py: Python<'_>,
        bits: &Bound<'_, PyAny>,
    ) -> PyResult<Vec<PyLweCiphertext>> {
        let b = read_ciphertexts(bits)?;
        let r = crate::common::release(py, || self.server.reciprocals(&b)).map_err(apps_error)?;
        Ok(wrap(r))
    }

    fn __repr__(&self) -> String {
        let l = self.server.layout();
        format!(
            "KMeansServer(points={}, clusters={}, features={})",
            l.points(),
            l.clusters(),
            l.features()
        )
    }
}
