//! `KMeansSession`: one party's view of the secure k-means of PEGASUS Section V.C (`rnsfhe_apps::kmeans`)
//! for `rnsfhe.apps.KMeans`. It holds the client's secret keys (CKKS, and the pipeline's LWE-side secrets
//! for the assignment bits) and the server's evaluator with the evaluation keys only; `update` runs
//! client (pack and encrypt points and centroids) -> server (the five sectors on ciphertexts) -> client
//! (decrypt the new centroids), with the GIL released.

use std::sync::Mutex;

use numpy::{PyArray2, PyReadonlyArray2};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use rnsfhe::ckks::{CkksDecryptor, CkksEncryptor, Csprng, KeyGenerator};
use rnsfhe::pegasus::{
    PegasusEvaluator, PegasusKeys, PegasusSecretKeys, PipelineOptions, PipelinePreset,
};
use rnsfhe_apps::kmeans::plain;
use rnsfhe_apps::{ComparisonKey, KMeansEvaluator, KMeansKeys, KMeansLayout, KMeansOptions};

use super::apps_error;
use crate::common::{preset_name, value_error, Int};
use crate::lwe::csprng;
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
/// ``seed``: deterministic keys, tests only. Not picklable.
#[pyclass(name = "KMeansSession", module = "rnsfhe.apps", frozen)]
pub(crate) struct PyKMeansSession {
    server: KMeansEvaluator<PegasusEvaluator>,
    secrets: PegasusSecretKeys,
    encryptor: CkksEncryptor,
    decryptor: CkksDecryptor,
    rng: Mutex<Csprng>,
}

/// The new centroids and the assignment bits of an update.
type TwoArrays<'py> = (Bound<'py, PyArray2<f64>>, Bound<'py, PyArray2<f64>>);

fn rows(a: &PyReadonlyArray2<'_, f64>) -> Vec<Vec<f64>> {
    a.as_array()
        .rows()
        .into_iter()
        .map(|r| r.to_vec())
        .collect()
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
        let options = KMeansOptions {
            distance_bound,
            threshold,
            ..KMeansOptions::new(radius)
        };
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
                server,
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
            let ctx = s.comparator().pegasus().context().clone();
            let (f, e) = (s.feature_factor(), s.encoding());
            let top = ctx.max_level();
            let (px, pc) = {
                let mut rng = self.rng.lock().unwrap_or_else(|e| e.into_inner());
                (
                    layout.encrypt_points(&ctx, &self.encryptor, &x, e, top, &mut rng)?,
                    layout.encrypt_centroids(&ctx, &self.encryptor, &c, e, top, &mut rng)?,
                )
            };
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
