//! `LutSession`: every key of look-up-table evaluation (PEGASUS Section III.B) in one object, with
//! tables of any Python function.

use super::*;

/// Look-up tables on encrypted numbers in a few lines: the keys of one parameter set, encryption of
/// real values at a scale, any Python function ``f(x: float) -> float`` as a table, and decryption.
///
/// ``LutSession(preset="InsecureTest", seed=None, scale=None, algorithm=None, allow_insecure=False)``
/// generates the ring key of the look-up-table ring (degree n), the LWE key (dimension
/// ``lwe_dimension``), the blind-rotation key (PEGASUS Fig. 2 and Fig. 6) and the switching key from the
/// ring key back to the LWE key (``switching_key``, PEGASUS Fig. 9). ``preset`` is a name of
/// ``presets()`` or a ``PegasusParams``; ``seed`` (an integer) makes every key and encryption
/// deterministic, for tests only (**not secure**); ``scale`` is the default scale of ``encrypt``, ``lut``
/// and ``decrypt`` at q0, q0 / 64 if None (a ciphertext modulo q carries ``scale * q / q0``, so
/// ``switch_modulus`` keeps values); ``algorithm`` is the blind rotation, the preset's
/// (``params.blind_rotation``) if None: ``"ternary"`` (PEGASUS Fig. 2, two external products per LWE
/// coefficient, the preset's ternary LWE key), ``"binary"`` (one external product per coefficient: half
/// the time; the preset's key if it is binary, as "Secure128"'s, a uniform binary one otherwise, which
/// the preset's security estimate does not cover) or ``"lmkcdey"`` (Lee et al., Eurocrypt 2023:
/// automorphisms and one external product per coefficient with the preset's key, half the ternary
/// key's size; the mask is rounded to odd values, which doubles the index error's standard deviation,
/// see ``error_bound``). Keys the lattice estimator puts below 128 bits are refused (``ValueError``)
/// unless ``allow_insecure=True``: the ``"InsecureTest"`` preset always needs it, and so does
/// ``"PegasusTable4"`` (its switching key is about 98 bits); ``"Secure128"`` does not.
///
/// ``encrypt`` gives LWE ciphertexts of dimension ``lwe_dimension`` modulo ``lwe_modulus`` (q0, or the
/// switching keys' smaller modulus for "Secure128"); ``lut`` maps one (or one switched to any modulus
/// of at least ``2 * lut_dimension``) to an encryption of ``f`` of its value modulo q0 **under the ring
/// key** (dimension ``lut_dimension``); ``decrypt`` reads both kinds. To feed a result to another table,
/// switch it back with ``switch_to_lwe`` (``lut`` does not do it by itself: a switch costs a
/// key-switching product and adds ``switching_key.added_variance()`` to the error, which a final result
/// need not pay). Inputs must satisfy ``|scale * x| < q0 / 4`` (PEGASUS Appendix B); ``encrypt``
/// refuses larger values. Not picklable (it holds secret keys).
#[pyclass(name = "LutSession", module = "rnsfhe.lwe", frozen, extends = PyLutServer)]
pub(super) struct PyLutSession {
    /// The public half: the base class's (a session is a `LutServer` that also holds the secrets).
    keys: Arc<EvaluationKeys>,
    lwe_key: Arc<LweSecretKey>,
    /// The ring key as an LWE key of dimension n: the key of look-up-table outputs.
    ring_key: LweSecretKey,
    rng: Mutex<Csprng>,
}

/// The keys of a session (see [`PyLutSession`]).
struct Keys {
    ctx: Arc<RlweContext>,
    lwe_key: LweSecretKey,
    ring_key: LweSecretKey,
    evaluator: LutEvaluator,
    switching_key: LweSwitchingKey,
}

impl Keys {
    fn generate(
        params: &PegasusParams,
        algorithm: BlindRotation,
        allow_insecure: bool,
        rng: &mut Csprng,
    ) -> Result<Self, LweError> {
        let ctx = if allow_insecure {
            params.lut.context_allowing_insecure()?
        } else {
            params.lut.context()?
        };
        let ring_sk = SecretKey::generate(&ctx, rng)?;
        let dimension = LweDimension::new(params.lwe_dimension)?;
        // The binary algorithm on a ternary set: a uniform binary key of the same dimension.
        let distribution = match algorithm {
            BlindRotation::Binary if !params.lwe_secret.is_binary() => {
                LweSecretDistribution::UniformBinary
            }
            _ => params.lwe_secret,
        };
        let lwe_key = LweSecretKey::generate(dimension, distribution, rng)?;
        let evaluator = LutEvaluator::new(BlindRotationKey::generate_with(
            algorithm, &ctx, &ring_sk, &lwe_key, rng,
        )?);
        let ring_key = LweSecretKey::from_ring_key(&ring_sk)?;
        let switching_key = if allow_insecure {
            LweSwitchingKey::generate_allowing_insecure(
                &ring_key,
                &lwe_key,
                params.key_switch,
                rng,
            )?
        } else {
            LweSwitchingKey::generate(&ring_key, &lwe_key, params.key_switch, rng)?
        };
        Ok(Self {
            ctx,
            lwe_key,
            ring_key,
            evaluator,
            switching_key,
        })
    }
}

#[pymethods]
impl PyLutSession {
    #[new]
    #[pyo3(signature = (preset = None, seed = None, scale = None, algorithm = None, allow_insecure = false))]
    fn new(
        py: Python<'_>,
        preset: Option<&Bound<'_, PyAny>>,
        seed: Option<Int>,
        scale: Option<f64>,
        algorithm: Option<&str>,
        allow_insecure: bool,
    ) -> PyResult<PyClassInitializer<Self>> {
        let params = pegasus_params(preset, "InsecureTest")?;
        let algorithm = match algorithm {
            Some(name) => parse_algorithm(name)?,
            None => params.params.blind_rotation,
        };
        let (q0, lwe_modulus, scale) = moduli_and_scale(&params.params, scale)?;
        let mut rng = csprng(seed)?;
        let p = params.params;
        let keys = crate::common::release(py, || {
            Keys::generate(&p, algorithm, allow_insecure, &mut rng)
        })
        .map_err(lwe_error)?;
        let public = Arc::new(EvaluationKeys {
            params,
            ctx: keys.ctx,
            evaluator: keys.evaluator,
            switching_key: Arc::new(keys.switching_key),
            q0,
            lwe_modulus,
            scale,
        });
        Ok(PyClassInitializer::from(PyLutServer {
            keys: Arc::clone(&public),
        })
        .add_subclass(Self {
            keys: public,
            lwe_key: Arc::new(keys.lwe_key),
            ring_key: keys.ring_key,
            rng: Mutex::new(rng),
        }))
    }

    /// server() -> LutServer: the evaluation keys without the secret keys (they share the keys), for a
    /// server or the workers of ``rnsfhe.distributed``; its bytes are ``blind_rotation_key_bytes()``
    /// and ``switching_key.to_bytes()``.
    fn server(&self) -> PyLutServer {
        PyLutServer {
            keys: Arc::clone(&self.keys),
        }
    }

    /// The LWE secret key (never printed, not picklable).
    #[getter]
    fn lwe_key(&self) -> PyLweSecretKey {
        PyLweSecretKey {
            key: Arc::clone(&self.lwe_key),
        }
    }

    /// encrypt(values, scale=None) -> list[LweCiphertext]
    ///
    /// One LWE ciphertext of ``round(scale * q / q0 * x)`` modulo ``q = lwe_modulus`` under the LWE key
    /// for every value x of a 1-D real array, with errors of width sigma_ks (``params.ks_sigma``, the
    /// width the security estimate of the LWE key assumes). ValueError unless that message is below
    /// ``q / 4`` in absolute value (the input range of the tables, PEGASUS Appendix B). The GIL is
    /// released.
    #[pyo3(signature = (values, scale = None))]
    fn encrypt(
        &self,
        py: Python<'_>,
        values: &Bound<'_, PyAny>,
        scale: Option<f64>,
    ) -> PyResult<Vec<PyLweCiphertext>> {
        let modulus = self.keys.lwe_modulus;
        let scale = self
            .keys
            .scale_at(scale.unwrap_or(self.keys.scale), modulus.value());
        let limit = modulus.value() / 4;
        let messages = read_reals(values)?
            .into_iter()
            .enumerate()
            .map(|(i, x)| {
                let m = (x * scale).round();
                if m.is_finite() && m.abs() < limit as f64 {
                    Ok(m as i64)
                } else {
                    Err(PyValueError::new_err(format!(
                        "values[{i}] = {x} times the scale {scale} is not below q/4 = {limit} in \
                         absolute value (the input range of the look-up tables): use a smaller scale"
                    )))
                }
            })
            .collect::<PyResult<Vec<i64>>>()?;
        let noise = gaussian(self.keys.params.params.key_switch.sigma)?;
        let cts = crate::common::release(py, || {
            let mut rng = self.rng.lock().map_err(|_| {
                PyValueError::new_err("the session's random generator is poisoned by a panic")
            })?;
            Ok::<_, PyErr>(
                messages
                    .into_iter()
                    .map(|m| self.lwe_key.encrypt(m, &modulus, &noise, &mut rng))
                    .collect::<Vec<_>>(),
            )
        })?;
        Ok(cts.into_iter().map(PyLweCiphertext::from).collect())
    }

    /// decrypt(cts, scale=None) -> numpy.ndarray[float64]
    ///
    /// The values of one ciphertext or a sequence of them (the phase divided by ``scale * q / q0`` for a
    /// ciphertext modulo q), each under the LWE key or the ring key, whichever has its dimension. The
    /// GIL is released.
    #[pyo3(signature = (cts, scale = None))]
    fn decrypt<'py>(
        &self,
        py: Python<'py>,
        cts: &Bound<'py, PyAny>,
        scale: Option<f64>,
    ) -> PyResult<Bound<'py, PyArray1<f64>>> {
        let scale = scale.unwrap_or(self.keys.scale);
        let cts = read_ciphertexts(cts)?;
        let phases = decrypt_phases(py, &[&*self.lwe_key, &self.ring_key], &cts)?;
        let values: Vec<f64> = phases
            .into_iter()
            .zip(&cts)
            .map(|(m, ct)| m as f64 / self.keys.scale_at(scale, ct.modulus().value()))
            .collect();
        Ok(PyArray1::from_vec(py, values))
    }

    /// error_bound(lipschitz, input_scale=None, output_scale=None, input_sigma=None, input_modulus=None,
    /// functions=1) -> float
    ///
    /// The bound of PEGASUS Eq. (3) on ``|f(x) - decrypt(lut(ct, f))|`` for an L-Lipschitz ``f``
    /// (``lipschitz`` = L), inputs modulo ``input_modulus`` (default ``lwe_modulus``) and an input error
    /// of standard deviation ``input_sigma`` (in units of that modulus; default sigma_ks, the width of
    /// ``encrypt``; after ``switch_to_lwe`` add ``switching_key.added_variance()`` to its square), for a
    /// table of ``functions`` functions (``lut_all``: a grid that many times coarser):
    /// ``rnsfhe_lwe::LutEvaluator::error_bound`` with this session's LWE key norm, which counts the
    /// rounding of the session's algorithm (to odd values for ``"lmkcdey"``) and its blind-rotation
    /// variance. Its main term is the grid step ``functions * q / (2 n input_scale)`` times L.
    #[pyo3(signature = (lipschitz, input_scale = None, output_scale = None, input_sigma = None, input_modulus = None, functions = 1))]
    fn error_bound(
        &self,
        lipschitz: f64,
        input_scale: Option<f64>,
        output_scale: Option<f64>,
        input_sigma: Option<f64>,
        input_modulus: Option<u64>,
        functions: usize,
    ) -> PyResult<f64> {
        let (input, output) = (
            input_scale.unwrap_or(self.keys.scale),
            output_scale.unwrap_or(self.keys.scale),
        );
        let modulus = input_modulus.unwrap_or(self.keys.lwe_modulus.value());
        // The bound depends on the table only through its modulus, scales and function count: zero
        // functions carry them.
        let zero = |_: f64| 0.0;
        let zeros: Vec<&dyn Fn(f64) -> f64> = vec![&zero; functions];
        let table = LookupTable::from_fns_for_input_modulus(
            &self.keys.ctx,
            modulus,
            self.keys.scale_at(input, modulus),
            output,
            &zeros,
        )
        .map_err(lwe_error)?;
        let key_norm_sq = self
            .lwe_key
            .coefficients()
            .iter()
            .map(|c| (c * c) as f64)
            .sum();
        Ok(self.keys.evaluator.error_bound(
            &table,
            lipschitz,
            input_sigma.unwrap_or(self.keys.params.params.key_switch.sigma),
            key_norm_sq,
        ))
    }

    fn __repr__(&self) -> String {
        format!(
            "LutSession({:?}, lwe_dimension={}, lut_dimension={}, q0={}, scale={}, algorithm={:?})",
            preset_name(self.keys.params.preset),
            self.lwe_key.dimension().get(),
            self.keys.ctx.n(),
            self.keys.q0.value(),
            self.keys.scale,
            algorithm_name(self.keys.algorithm())
        )
    }

    /// Raises TypeError: a session holds secret keys.
    fn __reduce__(&self) -> PyResult<PyObject> {
        Err(SCHEME.not_picklable(
            "LutSession",
            "it holds secret keys (save lwe_key explicitly with to_secret_bytes(); switching_key \
             pickles and has to_bytes())",
        ))
    }
}
