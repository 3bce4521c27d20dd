//! `PegasusParams` and `PegasusSecurity`: the parameter sets of PEGASUS Table IV and variants, and their
//! estimated security.

use super::*;

/// presets() -> list[str]
///
/// The names ``PegasusParams.from_preset`` and ``LutSession(preset=...)`` accept: "PegasusTable4"
/// (PEGASUS Table IV; below 128 bits by our estimator, see ``security()``), "PegasusTable4FastSpecial"
/// (a special modulus below 2^50) and "InsecureTest" (small dimensions for tests and examples).
#[pyfunction]
pub(super) fn presets() -> Vec<String> {
    preset_names(&PegasusPreset::ALL)
}

/// The LWE-side parameters of PEGASUS (Table IV): the LWE dimension the look-up tables read, the LWE
/// switching key over ``q0`` and the look-up-table ring of degree ``2^lut_log_n`` over ``q0 * special``.
/// ``PegasusParams.from_preset(name)`` (names in ``presets()``); immutable and picklable (by name).
/// The LWE side of an ``rnsfhe.pegasus`` pipeline (``Pipeline.lwe_params``) is the preset's with ``q0``
/// the CKKS chain's first prime; it pickles by the pipeline's preset name.
#[pyclass(name = "PegasusParams", module = "rnsfhe.lwe", frozen)]
#[derive(Clone)]
pub(crate) struct PyPegasusParams {
    pub(crate) preset: PegasusPreset,
    pub(crate) params: PegasusParams,
    /// The PEGASUS pipeline preset these parameters are the LWE side of (`q0` moved onto its CKKS
    /// chain, `rnsfhe_pegasus::PipelineParams::new`), None for the LWE preset's own parameters.
    pub(crate) pipeline: Option<rnsfhe::pegasus::PipelinePreset>,
}

impl PyPegasusParams {
    /// The parameters of the preset named `name` (case-insensitive).
    pub(super) fn named(name: &str) -> PyResult<Self> {
        let preset = SCHEME.find_preset(&PegasusPreset::ALL, name)?;
        let params = preset.params().map_err(lwe_error)?;
        Ok(Self {
            preset,
            params,
            pipeline: None,
        })
    }
}

/// The parameters named by a Python argument: a `PegasusParams`, a preset name, or (`None`) the default
/// `default`.
pub(super) fn pegasus_params(
    arg: Option<&Bound<'_, PyAny>>,
    default: &str,
) -> PyResult<PyPegasusParams> {
    match arg {
        None => PyPegasusParams::named(default),
        Some(p) => match p.downcast::<PyPegasusParams>() {
            Ok(p) => Ok(p.get().clone()),
            Err(_) => PyPegasusParams::named(p.extract::<&str>().map_err(|_| {
                PyTypeError::new_err("preset must be a preset name (str) or a PegasusParams")
            })?),
        },
    }
}

#[pymethods]
impl PyPegasusParams {
    /// PegasusParams.from_preset(name) -> PegasusParams
    ///
    /// The parameters of a named set (``presets()``); ValueError listing the names for an unknown one.
    #[staticmethod]
    fn from_preset(name: &str) -> PyResult<Self> {
        Self::named(name)
    }

    /// The preset's name.
    #[getter]
    fn preset(&self) -> String {
        preset_name(self.preset)
    }

    /// log2 of the CKKS ring degree N (the dimension of LWE ciphertexts extracted from CKKS).
    #[getter]
    fn ckks_log_n(&self) -> u32 {
        self.params.ckks_log_n
    }

    /// The LWE dimension n_lwe the look-up tables take their inputs in.
    #[getter]
    fn lwe_dimension(&self) -> usize {
        self.params.lwe_dimension
    }

    /// The Hamming weight of the LWE secret, or None for a uniform (ternary or binary) secret.
    #[getter]
    fn lwe_hamming_weight(&self) -> Option<usize> {
        match self.params.lwe_secret {
            LweSecretDistribution::TernaryWeight(h) | LweSecretDistribution::BinaryWeight(h) => {
                Some(h)
            }
            _ => None,
        }
    }

    /// The distribution of the LWE secret: "uniform ternary", "ternary, h = 64", "uniform binary" or
    /// "binary, h = 64".
    #[getter]
    fn lwe_secret(&self) -> String {
        self.params.lwe_secret.to_string()
    }

    /// The blind-rotation algorithm of the set, the default of ``LutSession``: "ternary" or "binary".
    #[getter]
    fn blind_rotation(&self) -> String {
        algorithm_name(self.params.blind_rotation).to_string()
    }

    /// The modulus of the LWE switching keys (q_ks): q0 for PEGASUS Table IV, a 26-bit prime for
    /// "Secure128", whose LWE ciphertexts are switched down to it before every key switch.
    #[getter]
    fn ks_modulus(&self) -> u64 {
        self.params.key_switch.modulus
    }

    /// The modulus q0 of the LWE ciphertexts (a prime, NTT-friendly for every ring of the set).
    #[getter]
    fn q0(&self) -> u64 {
        self.params.lut.q0
    }

    /// The special modulus q' of the look-up-table ring (the RGSW gadget of PEGASUS Section IV.A).
    #[getter]
    fn special(&self) -> u64 {
        self.params.lut.special
    }

    /// log2 of the look-up-table ring degree n (outputs of a table are LWE ciphertexts of dimension n).
    #[getter]
    fn lut_log_n(&self) -> u32 {
        self.params.lut.log_n
    }

    /// Standard deviation of the evaluation key's errors (sigma_lut).
    #[getter]
    fn lut_sigma(&self) -> f64 {
        self.params.lut.sigma
    }

    /// log2 of the digit base B_ks of the LWE switching key.
    #[getter]
    fn ks_base_log(&self) -> u32 {
        self.params.key_switch.base_log
    }

    /// Number of digits d_ks of the LWE switching key.
    #[getter]
    fn ks_digits(&self) -> usize {
        self.params.key_switch.digits
    }

    /// Standard deviation of the switching key's errors (sigma_ks); ``LutSession.encrypt`` uses it for
    /// fresh LWE encryptions too, the width the security estimate of the LWE key assumes.
    #[getter]
    fn ks_sigma(&self) -> f64 {
        self.params.key_switch.sigma
    }

    /// security() -> PegasusSecurity
    ///
    /// The built-in lattice estimator's figures for the switching key and the evaluation key
    /// (``rnsfhe_lwe::PegasusParams::security``). PEGASUS claims at least 119 bits for Table IV; our
    /// estimator finds its switching key below that. The GIL is released.
    fn security(&self, py: Python<'_>) -> PyResult<PyPegasusSecurity> {
        let params = self.params;
        let s = py.allow_threads(|| params.security()).map_err(lwe_error)?;
        Ok(PyPegasusSecurity {
            switching_key_bits: s.switching_key.security_bits(),
            evaluation_key_bits: s.evaluation_key.security_bits(),
        })
    }

    fn __repr__(&self) -> String {
        let p = &self.params;
        format!(
            "PegasusParams({:?}, lwe_dimension={}, q0={}, special={}, lut_log_n={}, ks_base_log={}, \
             ks_digits={}, ks_sigma={}, lut_sigma={})",
            preset_name(self.preset),
            p.lwe_dimension,
            p.lut.q0,
            p.lut.special,
            p.lut.log_n,
            p.key_switch.base_log,
            p.key_switch.digits,
            p.key_switch.sigma,
            p.lut.sigma
        )
    }

    /// Pickling rebuilds the parameters from the preset name (the LWE side of a pipeline from the
    /// pipeline's preset name and its look-up-table ring degree, `rnsfhe.pegasus.Pipeline._lwe_params`).
    fn __reduce__(slf: &Bound<'_, Self>) -> PyResult<(PyObject, PyObject)> {
        let this = slf.get();
        let py = slf.py();
        if let Some(pipeline) = this.pipeline {
            let rebuild = py
                .import("rnsfhe._rnsfhe.pegasus")?
                .getattr("Pipeline")?
                .getattr("_lwe_params")?
                .unbind();
            let args = (preset_name(pipeline), this.params.lut.log_n);
            return Ok((rebuild, args.into_pyobject(py)?.into_any().unbind()));
        }
        let from_preset = slf.get_type().getattr("from_preset")?.unbind();
        let args = (preset_name(this.preset),);
        Ok((from_preset, args.into_pyobject(py)?.into_any().unbind()))
    }
}

/// The Hamming weight of a secret distribution (None: uniform ternary).
/// The Python name of a blind-rotation algorithm.
pub(crate) fn algorithm_name(algorithm: BlindRotation) -> &'static str {
    match algorithm {
        BlindRotation::Ternary => "ternary",
        BlindRotation::Binary => "binary",
        BlindRotation::Lmkcdey => "lmkcdey",
        _ => "unknown",
    }
}

/// The algorithm of a Python name (case-insensitive).
pub(crate) fn parse_algorithm(name: &str) -> PyResult<BlindRotation> {
    match name.to_ascii_lowercase().as_str() {
        "ternary" => Ok(BlindRotation::Ternary),
        "binary" => Ok(BlindRotation::Binary),
        "lmkcdey" => Ok(BlindRotation::Lmkcdey),
        other => Err(PyValueError::new_err(format!(
            "unknown blind-rotation algorithm {other:?}: expected \"ternary\" (PEGASUS Fig. 2, any \
             ternary LWE key), \"binary\" (a binary LWE key, one external product per coefficient) \
             or \"lmkcdey\" (Lee et al., automorphisms and one external product per coefficient, any \
             LWE key)"
        ))),
    }
}

/// The estimated security of the two key encryptions of a parameter set, in bits
/// (``PegasusParams.security()``).
#[pyclass(name = "PegasusSecurity", module = "rnsfhe.lwe", frozen)]
pub(super) struct PyPegasusSecurity {
    switching_key_bits: f64,
    evaluation_key_bits: f64,
}

#[pymethods]
impl PyPegasusSecurity {
    /// The LWE switching key (RLWE of degree n_lwe over q0 with sigma_ks, under the LWE key).
    #[getter]
    fn switching_key_bits(&self) -> f64 {
        self.switching_key_bits
    }

    /// The evaluation (blind-rotation) key (RLWE of degree n over q0 q' with sigma_lut).
    #[getter]
    fn evaluation_key_bits(&self) -> f64 {
        self.evaluation_key_bits
    }

    /// The smaller of the two: the security of the parameter set.
    #[getter]
    fn bits(&self) -> f64 {
        self.switching_key_bits.min(self.evaluation_key_bits)
    }

    fn __repr__(&self) -> String {
        format!(
            "PegasusSecurity(switching_key_bits={:.1}, evaluation_key_bits={:.1})",
            self.switching_key_bits, self.evaluation_key_bits
        )
    }
}
