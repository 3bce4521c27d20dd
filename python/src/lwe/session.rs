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
#[pyclass(name = "LutSession", module = "rnsfhe.lwe", frozen)]
pub(super) struct PyLutSession {
    params: PyPegasusParams,
    ctx: Arc<RlweContext>,
    lwe_key: Arc<LweSecretKey>,
    /// The ring key as an LWE key of dimension n: the key of look-up-table outputs.
    ring_key: LweSecretKey,
    evaluator: LutEvaluator,
    switching_key: Arc<LweSwitchingKey>,
    q0: Modulus,
    scale: f64,
    /// The modulus of ciphertexts under the LWE key (the switching keys').
    lwe_modulus: Modulus,
    /// The blind-rotation algorithm of the key.
    algorithm: BlindRotation,
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

impl PyLutSession {
    /// The scales of a table: the given ones or the session's.
    fn scales(&self, input: Option<f64>, output: Option<f64>) -> (f64, f64) {
        (input.unwrap_or(self.scale), output.unwrap_or(self.scale))
    }

    /// The scale, at `modulus`, of a value encrypted with `scale` at q0: `scale * modulus / q0`, the
    /// factor a modulus switch applies (so a value keeps its scale across `switch_modulus`).
    fn scale_at(&self, scale: f64, modulus: u64) -> f64 {
        scale * modulus as f64 / self.q0.value() as f64
    }

    /// The table `f` stands for: a `LookupTable` as it is (no scales may be given with it), a sequence
    /// of callables as one table of all of them (`LookupTable::from_fns_for_input_modulus`), or one
    /// callable, for inputs modulo `input_modulus` on the grid of PEGASUS Fig. 2 step 1; the callables are
    /// called with the GIL held and their exceptions are raised unchanged.
    fn table_of(
        &self,
        f: &Bound<'_, PyAny>,
        input_modulus: u64,
        input_scale: Option<f64>,
        output_scale: Option<f64>,
    ) -> PyResult<Arc<LookupTable>> {
        if let Ok(table) = f.downcast::<PyLookupTable>() {
            if input_scale.is_some() || output_scale.is_some() {
                return Err(PyValueError::new_err(
                    "a LookupTable carries its scales: give input_scale / output_scale to \
                     session.table(f, ...) instead",
                ));
            }
            return Ok(Arc::clone(&table.get().table));
        }
        let callables: Vec<Bound<'_, PyAny>> = if f.is_callable() {
            vec![f.clone()]
        } else if let Ok(list) = f.extract::<Vec<Bound<'_, PyAny>>>() {
            list
        } else {
            return Err(PyTypeError::new_err(format!(
                "expected a callable f(x: float) -> float, a sequence of them or a LookupTable, got \
                 {}",
                f.get_type().name()?
            )));
        };
        let (input, output) = self.scales(input_scale, output_scale);
        let input = self.scale_at(input, input_modulus);
        let calls = callables
            .iter()
            .map(PyCallable::new)
            .collect::<PyResult<Vec<_>>>()?;
        let fns: Vec<Box<dyn Fn(f64) -> f64 + '_>> = calls
            .iter()
            .map(|c| Box::new(move |x| c.call(x)) as Box<dyn Fn(f64) -> f64>)
            .collect();
        let refs: Vec<&dyn Fn(f64) -> f64> = fns.iter().map(|f| f.as_ref()).collect();
        let table =
            LookupTable::from_fns_for_input_modulus(&self.ctx, input_modulus, input, output, &refs);
        drop(refs);
        drop(fns);
        if let Some(err) = calls.into_iter().find_map(|c| c.error.into_inner()) {
            return Err(err);
        }
        table.map(Arc::new).map_err(lwe_error)
    }
}

/// A look-up-table error, with the Python remedy for an input still under the ring key.
fn lut_error(err: LweError) -> PyErr {
    let hint = match err {
        LweError::DimensionMismatch { .. } => {
            " (Python: a look-up-table output is under the ring key; session.switch_to_lwe(ct) first)"
        }
        _ => "",
    };
    crate::common::value_error_with_hint(err, hint)
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
    ) -> PyResult<Self> {
        let params = pegasus_params(preset, "InsecureTest")?;
        let algorithm = match algorithm {
            Some(name) => parse_algorithm(name)?,
            None => params.params.blind_rotation,
        };
        let q0 = Modulus::new(params.params.lut.q0).map_err(value_error)?;
        let lwe_modulus = Modulus::new(params.params.key_switch.modulus).map_err(value_error)?;
        let scale = scale.unwrap_or(q0.value() as f64 / 64.0);
        if !(scale.is_finite() && scale >= 1.0) {
            return Err(PyValueError::new_err(format!(
                "scale = {scale} must be a finite number >= 1"
            )));
        }
        let mut rng = csprng(seed)?;
        let p = params.params;
        let keys = crate::common::release(py, || {
            Keys::generate(&p, algorithm, allow_insecure, &mut rng)
        })
        .map_err(lwe_error)?;
        Ok(Self {
            params,
            ctx: keys.ctx,
            lwe_key: Arc::new(keys.lwe_key),
            ring_key: keys.ring_key,
            evaluator: keys.evaluator,
            switching_key: Arc::new(keys.switching_key),
            q0,
            lwe_modulus,
            scale,
            algorithm,
            rng: Mutex::new(rng),
        })
    }

    /// The blind-rotation algorithm: ``"ternary"``, ``"binary"`` or ``"lmkcdey"``.
    #[getter]
    fn algorithm(&self) -> &'static str {
        algorithm_name(self.algorithm)
    }

    /// The parameter set.
    #[getter]
    fn params(&self) -> PyPegasusParams {
        self.params.clone()
    }

    /// The default scale of ``encrypt``, ``lut`` and ``decrypt``, at q0: a ciphertext modulo q carries
    /// ``scale * q / q0`` (so that ``switch_modulus`` keeps its value).
    #[getter]
    fn scale(&self) -> f64 {
        self.scale
    }

    /// The modulus q0 of the look-up tables' outputs (and of ``encrypt``'s ciphertexts when
    /// ``lwe_modulus`` is q0).
    #[getter]
    fn q0(&self) -> u64 {
        self.q0.value()
    }

    /// The modulus of ``encrypt``'s and ``switch_to_lwe``'s ciphertexts under the LWE key: the switching
    /// keys' (q0 for PEGASUS Table IV, a 26-bit prime for "Secure128", where LWE ciphertexts of the
    /// LWE key at q0 would be below 128 bits).
    #[getter]
    fn lwe_modulus(&self) -> u64 {
        self.lwe_modulus.value()
    }

    /// The dimension of ``encrypt``'s ciphertexts (and of the inputs of ``lut``), n_lwe.
    #[getter]
    fn lwe_dimension(&self) -> usize {
        self.lwe_key.dimension().get()
    }

    /// The dimension of ``lut``'s outputs: the degree n of the look-up-table ring.
    #[getter]
    fn lut_dimension(&self) -> usize {
        self.ctx.n()
    }

    /// The LWE secret key (never printed, not picklable).
    #[getter]
    fn lwe_key(&self) -> PyLweSecretKey {
        PyLweSecretKey {
            key: Arc::clone(&self.lwe_key),
        }
    }

    /// The switching key from the ring key (dimension ``lut_dimension``) to the LWE key.
    #[getter]
    fn switching_key(&self) -> PyLweSwitchingKey {
        PyLweSwitchingKey {
            key: Arc::clone(&self.switching_key),
            params: self.params.clone(),
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
        let modulus = self.lwe_modulus;
        let scale = self.scale_at(scale.unwrap_or(self.scale), modulus.value());
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
        let noise = gaussian(self.params.params.key_switch.sigma)?;
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

    /// lut(ct, f, input_scale=None, output_scale=None) -> LweCiphertext
    ///
    /// An encryption of ``output_scale * f(x)`` modulo q0 under the ring key (dimension
    /// ``lut_dimension``) from an encryption ``ct`` of ``input_scale * q / q0 * x`` under the LWE key
    /// modulo any q >= 2 n (``lwe_modulus`` for ``encrypt``'s ciphertexts; ``ct.switch_modulus(q)``
    /// for others; ValueError below 2 n) (PEGASUS Fig. 2). ``f`` is any callable on floats; it is called once per table coefficient
    /// (n times) on the grid ``k q / (2 n input_scale)``, with the GIL held, and its exceptions propagate.
    /// The blind rotation runs with the GIL released. The result is within ``error_bound(L, ...,
    /// input_modulus=q)`` of ``f(x)`` for an L-Lipschitz f. Scales default to ``scale``.
    #[pyo3(signature = (ct, f, input_scale = None, output_scale = None))]
    fn lut(
        &self,
        py: Python<'_>,
        ct: &PyLweCiphertext,
        f: &Bound<'_, PyAny>,
        input_scale: Option<f64>,
        output_scale: Option<f64>,
    ) -> PyResult<PyLweCiphertext> {
        let ct = &ct.ct;
        let table = self.table_of(f, ct.modulus().value(), input_scale, output_scale)?;
        crate::common::release(py, || self.evaluator.evaluate(ct, &table))
            .map(PyLweCiphertext::from)
            .map_err(lut_error)
    }

    /// lut_many(cts, f, input_scale=None, output_scale=None) -> list[LweCiphertext]
    ///
    /// ``lut`` of every ciphertext of a sequence with one table, the blind rotations in parallel over
    /// the ciphertexts (GIL released); the results are those of ``lut`` one by one. The ciphertexts
    /// share one modulus (ValueError otherwise).
    #[pyo3(signature = (cts, f, input_scale = None, output_scale = None))]
    fn lut_many(
        &self,
        py: Python<'_>,
        cts: &Bound<'_, PyAny>,
        f: &Bound<'_, PyAny>,
        input_scale: Option<f64>,
        output_scale: Option<f64>,
    ) -> PyResult<Vec<PyLweCiphertext>> {
        let cts = read_ciphertexts(cts)?;
        let modulus = cts
            .first()
            .map_or(self.lwe_modulus.value(), |ct| ct.modulus().value());
        let table = self.table_of(f, modulus, input_scale, output_scale)?;
        let outs = crate::common::release(py, || self.evaluator.evaluate_many(&cts, &table))
            .map_err(lut_error)?;
        Ok(outs.into_iter().map(PyLweCiphertext::from).collect())
    }

    /// table(f, input_scale=None, output_scale=None, input_modulus=None) -> LookupTable
    ///
    /// The look-up table of ``f`` (a callable on floats, called n times on the grid, GIL held) or of a
    /// sequence of 2, 4, 8, ... callables read together by one blind rotation (``lut_all``; each on a grid
    /// that many times coarser), for inputs modulo ``input_modulus`` (default ``lwe_modulus``) at
    /// ``input_scale`` and outputs at ``output_scale`` (both at q0, default ``scale``). Build it once and
    /// pass it to ``lut`` / ``lut_many`` / ``lut_all`` instead of the function: the table is then not
    /// rebuilt per call.
    #[pyo3(signature = (f, input_scale = None, output_scale = None, input_modulus = None))]
    fn table(
        &self,
        f: &Bound<'_, PyAny>,
        input_scale: Option<f64>,
        output_scale: Option<f64>,
        input_modulus: Option<u64>,
    ) -> PyResult<PyLookupTable> {
        let modulus = input_modulus.unwrap_or(self.lwe_modulus.value());
        Ok(PyLookupTable {
            table: self.table_of(f, modulus, input_scale, output_scale)?,
            params: self.params.clone(),
        })
    }

    /// lut_all(ct, fs, input_scale=None, output_scale=None) -> list[LweCiphertext]
    ///
    /// Every function of ``fs`` (a sequence of 2, 4, 8, ... callables, or a ``LookupTable`` of several
    /// functions) on ``ct`` from **one** blind rotation (PEGASUS Fig. 2 on interleaved tables): the
    /// results in the order of the functions, each as accurate as a table of a ring ``len(fs)`` times
    /// smaller (``error_bound(L, functions=len(fs))``). The ternary and binary algorithms only
    /// (ValueError for "lmkcdey", whose mask is odd). The GIL is released during the rotation.
    #[pyo3(signature = (ct, fs, input_scale = None, output_scale = None))]
    fn lut_all(
        &self,
        py: Python<'_>,
        ct: &PyLweCiphertext,
        fs: &Bound<'_, PyAny>,
        input_scale: Option<f64>,
        output_scale: Option<f64>,
    ) -> PyResult<Vec<PyLweCiphertext>> {
        let ct = &ct.ct;
        let table = self.table_of(fs, ct.modulus().value(), input_scale, output_scale)?;
        let outs = crate::common::release(py, || self.evaluator.evaluate_all(ct, &table))
            .map_err(lut_error)?;
        Ok(outs.into_iter().map(PyLweCiphertext::from).collect())
    }

    /// switch_to_lwe(ct) -> LweCiphertext
    ///
    /// A look-up-table output (dimension ``lut_dimension``) switched to the LWE key (dimension
    /// ``lwe_dimension``, PEGASUS Fig. 9) modulo ``lwe_modulus`` (first switched down to it when it is
    /// not q0, as "Secure128" does), ready for another ``lut``; the GIL is released.
    fn switch_to_lwe(&self, py: Python<'_>, ct: &PyLweCiphertext) -> PyResult<PyLweCiphertext> {
        let (key, ct, q) = (&*self.switching_key, &ct.ct, self.lwe_modulus.value());
        crate::common::release(py, || {
            if ct.modulus().value() == q {
                key.switch(ct)
            } else {
                key.switch(&ct.switch_modulus(q)?)
            }
        })
        .map(PyLweCiphertext::from)
        .map_err(lwe_error)
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
        let scale = scale.unwrap_or(self.scale);
        let cts = read_ciphertexts(cts)?;
        let phases = decrypt_phases(py, &[&*self.lwe_key, &self.ring_key], &cts)?;
        let values: Vec<f64> = phases
            .into_iter()
            .zip(&cts)
            .map(|(m, ct)| m as f64 / self.scale_at(scale, ct.modulus().value()))
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
        let (input, output) = self.scales(input_scale, output_scale);
        let modulus = input_modulus.unwrap_or(self.lwe_modulus.value());
        // The bound depends on the table only through its modulus, scales and function count: zero
        // functions carry them.
        let zero = |_: f64| 0.0;
        let zeros: Vec<&dyn Fn(f64) -> f64> = vec![&zero; functions];
        let table = LookupTable::from_fns_for_input_modulus(
            &self.ctx,
            modulus,
            self.scale_at(input, modulus),
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
        Ok(self.evaluator.error_bound(
            &table,
            lipschitz,
            input_sigma.unwrap_or(self.params.params.key_switch.sigma),
            key_norm_sq,
        ))
    }

    fn __repr__(&self) -> String {
        format!(
            "LutSession({:?}, lwe_dimension={}, lut_dimension={}, q0={}, scale={}, algorithm={:?})",
            preset_name(self.params.preset),
            self.lwe_dimension(),
            self.lut_dimension(),
            self.q0(),
            self.scale,
            algorithm_name(self.algorithm)
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
