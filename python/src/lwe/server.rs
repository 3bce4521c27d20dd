//! `LutServer`: the evaluation keys of a `LutSession` without its secrets, the side of PEGASUS Fig. 6
//! that runs on a server (or a worker of `rnsfhe.distributed`), loadable from bytes.

use super::*;

/// The public half of a look-up-table session: the blind-rotation key, the switching key back to the
/// LWE key and the defaults (scale, moduli) that `LutSession` and `LutServer` share. Tables are
/// built and evaluated here; the session adds only the secret keys (encryption, decryption, bounds).
pub(super) struct EvaluationKeys {
    pub(super) params: PyPegasusParams,
    pub(super) ctx: Arc<RlweContext>,
    pub(super) evaluator: LutEvaluator,
    pub(super) switching_key: Arc<LweSwitchingKey>,
    pub(super) q0: Modulus,
    /// The modulus of ciphertexts under the LWE key (the switching keys').
    pub(super) lwe_modulus: Modulus,
    pub(super) scale: f64,
}

/// The moduli and default scale of a parameter set: q0, the LWE modulus and `scale` (q0 / 64 if None),
/// checked.
pub(super) fn moduli_and_scale(
    params: &PegasusParams,
    scale: Option<f64>,
) -> PyResult<(Modulus, Modulus, f64)> {
    let q0 = Modulus::new(params.lut.q0).map_err(value_error)?;
    let lwe_modulus = Modulus::new(params.key_switch.modulus).map_err(value_error)?;
    let scale = scale.unwrap_or(q0.value() as f64 / 64.0);
    if !(scale.is_finite() && scale >= 1.0) {
        return Err(PyValueError::new_err(format!(
            "scale = {scale} must be a finite number >= 1"
        )));
    }
    Ok((q0, lwe_modulus, scale))
}

/// A look-up-table error, with the Python remedy for an input still under the ring key.
fn lut_error(err: LweError) -> PyErr {
    let hint = match err {
        LweError::DimensionMismatch { .. } => {
            " (Python: a look-up-table output is under the ring key; switch_to_lwe(ct) first)"
        }
        _ => "",
    };
    crate::common::value_error_with_hint(err, hint)
}

impl EvaluationKeys {
    /// The scales of a table: the given ones or the default.
    fn scales(&self, input: Option<f64>, output: Option<f64>) -> (f64, f64) {
        (input.unwrap_or(self.scale), output.unwrap_or(self.scale))
    }

    /// The scale, at `modulus`, of a value encrypted with `scale` at q0: `scale * modulus / q0`, the
    /// factor a modulus switch applies (so a value keeps its scale across `switch_modulus`).
    pub(super) fn scale_at(&self, scale: f64, modulus: u64) -> f64 {
        scale * modulus as f64 / self.q0.value() as f64
    }

    /// The blind-rotation algorithm of the key.
    pub(super) fn algorithm(&self) -> BlindRotation {
        self.evaluator.key().algorithm()
    }

    /// The table `f` stands for: a `LookupTable` as it is (no scales may be given with it), a sequence
    /// of callables as one table of all of them (`LookupTable::from_fns_for_input_modulus`), or one
    /// callable, for inputs modulo `input_modulus` on the grid of PEGASUS Fig. 2 step 1; the callables are
    /// called with the GIL held and their exceptions are raised unchanged.
    pub(super) fn table_of(
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

    /// `LutSession.table` / `LutServer.table`.
    pub(super) fn table(
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

    /// `lut`: one blind rotation (PEGASUS Fig. 2), the GIL released.
    pub(super) fn lut(
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

    /// `lut_many`: the blind rotations of a batch in parallel (rayon), the GIL released.
    pub(super) fn lut_many(
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
        self.with_table(py, f, modulus, (input_scale, output_scale), |table| {
            self.evaluator.evaluate_many(&cts, table)
        })
    }

    /// `lut_all`: several functions from one blind rotation, the GIL released.
    pub(super) fn lut_all(
        &self,
        py: Python<'_>,
        ct: &PyLweCiphertext,
        fs: &Bound<'_, PyAny>,
        input_scale: Option<f64>,
        output_scale: Option<f64>,
    ) -> PyResult<Vec<PyLweCiphertext>> {
        let ct = &ct.ct;
        self.with_table(
            py,
            fs,
            ct.modulus().value(),
            (input_scale, output_scale),
            |table| self.evaluator.evaluate_all(ct, table),
        )
    }

    /// `op` on the table of `f` for inputs modulo `modulus` (at the given input and output scales), the
    /// GIL released: its outputs as Python ciphertexts.
    fn with_table(
        &self,
        py: Python<'_>,
        f: &Bound<'_, PyAny>,
        modulus: u64,
        (input_scale, output_scale): (Option<f64>, Option<f64>),
        op: impl FnOnce(&LookupTable) -> Result<Vec<LweCiphertext>, LweError> + Send,
    ) -> PyResult<Vec<PyLweCiphertext>> {
        let table = self.table_of(f, modulus, input_scale, output_scale)?;
        let outs = crate::common::release(py, || op(&table)).map_err(lut_error)?;
        Ok(outs.into_iter().map(PyLweCiphertext::from).collect())
    }

    /// `switch_to_lwe`: a table output back to the LWE key (PEGASUS Fig. 9), the GIL released.
    pub(super) fn switch_to_lwe(
        &self,
        py: Python<'_>,
        ct: &PyLweCiphertext,
    ) -> PyResult<PyLweCiphertext> {
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

    /// The switching key as its Python object.
    pub(super) fn py_switching_key(&self) -> PyLweSwitchingKey {
        PyLweSwitchingKey {
            key: Arc::clone(&self.switching_key),
            params: self.params.clone(),
        }
    }
}

/// The evaluation keys of a :class:`LutSession` without its secret keys: what a server (or a worker of
/// ``rnsfhe.distributed``) needs to evaluate look-up tables on the client's LWE ciphertexts (PEGASUS
/// Fig. 2) and to switch their outputs back to the LWE key (Fig. 9).
///
/// A ``LutSession`` is a ``LutServer`` that also holds the secret keys: ``table``, ``lut``, ``lut_many``,
/// ``lut_all`` and ``switch_to_lwe`` are defined here and give the same results bit for bit on either.
/// ``session.server()`` gives the server alone; ``blind_rotation_key_bytes()`` and
/// ``switching_key.to_bytes()`` are its wire form, and ``LutServer.from_bytes(params, blind_rotation_key,
/// switching_key, scale=None, mac_key=None)`` loads it (picklable through them; a session is not).
#[pyclass(name = "LutServer", module = "rnsfhe.lwe", frozen, subclass)]
pub(super) struct PyLutServer {
    pub(super) keys: Arc<EvaluationKeys>,
}

#[pymethods]
impl PyLutServer {
    /// LutServer.from_bytes(params, blind_rotation_key, switching_key, scale=None, mac_key=None)
    ///
    /// Loads the evaluation keys of a session of ``params`` (a ``PegasusParams`` or a preset name):
    /// ``blind_rotation_key`` from ``blind_rotation_key_bytes()`` and ``switching_key`` from
    /// ``switching_key.to_bytes()``. Both are checked by the Rust loaders (digest or MAC under
    /// ``mac_key``, kind, the fingerprint of the parameter set's look-up-table ring and switching
    /// parameters, every residue): keys of another context raise rnsfhe.DecodeError naming the field.
    /// ``scale`` is the default scale of tables (q0 / 64 if None, as the session's). The GIL is
    /// released.
    #[staticmethod]
    #[pyo3(signature = (params, blind_rotation_key, switching_key, scale = None, mac_key = None))]
    fn from_bytes(
        py: Python<'_>,
        params: &Bound<'_, PyAny>,
        blind_rotation_key: &Bound<'_, PyAny>,
        switching_key: &Bound<'_, PyAny>,
        scale: Option<f64>,
        mac_key: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let params = pegasus_params(Some(params), "InsecureTest")?;
        let p = params.params;
        let (q0, lwe_modulus, scale) = moduli_and_scale(&p, scale)?;
        let ctx = p.lut.context_allowing_insecure().map_err(lwe_error)?;
        let ks_ctx = LweSwitchingKeyContext::new(
            LweDimension::new(1 << p.lut.log_n).map_err(lwe_error)?,
            LweDimension::new(p.lwe_dimension).map_err(lwe_error)?,
            p.key_switch,
        )
        .map_err(lwe_error)?;
        let key = crate::common::mac_key(mac_key)?;
        let brk = read_bytes(blind_rotation_key)?;
        let ksk = read_bytes(switching_key)?;
        let (brk, ksk) = (brk.as_bytes(), ksk.as_bytes());
        let (brk, ksk) = crate::common::release(py, || {
            Ok::<_, rnsfhe::math::wire::DecodeError>((
                BlindRotationKey::from_bytes_sealed(brk, &ctx, integrity(&key))?,
                LweSwitchingKey::from_bytes_sealed(ksk, &ks_ctx, integrity(&key))?,
            ))
        })
        .map_err(decode_error)?;
        Ok(Self {
            keys: Arc::new(EvaluationKeys {
                params,
                ctx,
                evaluator: LutEvaluator::new(brk),
                switching_key: Arc::new(ksk),
                q0,
                lwe_modulus,
                scale,
            }),
        })
    }

    /// blind_rotation_key_bytes(seeded=True, mac_key=None) -> bytes
    ///
    /// The blind-rotation key in rnsfhe's wire format (kind "blind-rotation key", the look-up-table
    /// ring's fingerprint; with ``seeded`` the uniform parts of its RGSW ciphertexts as seeds), ending
    /// in a BLAKE3 digest or a MAC under ``mac_key``. The GIL is released.
    #[pyo3(signature = (seeded = true, mac_key = None))]
    fn blind_rotation_key_bytes<'py>(
        &self,
        py: Python<'py>,
        seeded: bool,
        mac_key: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let key = crate::common::mac_key(mac_key)?;
        let brk = self.keys.evaluator.key();
        Ok(to_py_bytes(py, || {
            brk.to_bytes_sealed(randomness(seeded), integrity(&key))
        }))
    }

    /// The parameter set.
    #[getter]
    fn params(&self) -> PyPegasusParams {
        self.keys.params.clone()
    }

    /// The default scale of ``encrypt``, ``lut`` and ``decrypt``, at q0: a ciphertext modulo q carries
    /// ``scale * q / q0`` (so that ``switch_modulus`` keeps its value).
    #[getter]
    fn scale(&self) -> f64 {
        self.keys.scale
    }

    /// The blind-rotation algorithm: ``"ternary"``, ``"binary"`` or ``"lmkcdey"``.
    #[getter]
    fn algorithm(&self) -> &'static str {
        algorithm_name(self.keys.algorithm())
    }

    /// The modulus q0 of the look-up tables' outputs (and of ``encrypt``'s ciphertexts when
    /// ``lwe_modulus`` is q0).
    #[getter]
    fn q0(&self) -> u64 {
        self.keys.q0.value()
    }

    /// The modulus of ``encrypt``'s and ``switch_to_lwe``'s ciphertexts under the LWE key: the switching
    /// keys' (q0 for PEGASUS Table IV, a 26-bit prime for "Secure128", where LWE ciphertexts of the
    /// LWE key at q0 would be below 128 bits).
    #[getter]
    fn lwe_modulus(&self) -> u64 {
        self.keys.lwe_modulus.value()
    }

    /// The dimension of the inputs of ``lut``, n_lwe.
    #[getter]
    fn lwe_dimension(&self) -> usize {
        self.keys.switching_key.to_dimension().get()
    }

    /// The dimension of ``lut``'s outputs: the degree n of the look-up-table ring.
    #[getter]
    fn lut_dimension(&self) -> usize {
        self.keys.ctx.n()
    }

    /// The switching key from the ring key (dimension ``lut_dimension``) to the LWE key.
    #[getter]
    fn switching_key(&self) -> PyLweSwitchingKey {
        self.keys.py_switching_key()
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
        self.keys.table(f, input_scale, output_scale, input_modulus)
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
        self.keys.lut(py, ct, f, input_scale, output_scale)
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
        self.keys.lut_many(py, cts, f, input_scale, output_scale)
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
        self.keys.lut_all(py, ct, fs, input_scale, output_scale)
    }

    /// switch_to_lwe(ct) -> LweCiphertext
    ///
    /// A look-up-table output (dimension ``lut_dimension``) switched to the LWE key (dimension
    /// ``lwe_dimension``, PEGASUS Fig. 9) modulo ``lwe_modulus`` (first switched down to it when it is
    /// not q0, as "Secure128" does), ready for another ``lut``; the GIL is released.
    fn switch_to_lwe(&self, py: Python<'_>, ct: &PyLweCiphertext) -> PyResult<PyLweCiphertext> {
        self.keys.switch_to_lwe(py, ct)
    }

    fn __repr__(&self) -> String {
        format!(
            "LutServer({:?}, lwe_dimension={}, lut_dimension={}, q0={}, scale={}, algorithm={:?})",
            preset_name(self.keys.params.preset),
            self.lwe_dimension(),
            self.lut_dimension(),
            self.q0(),
            self.keys.scale,
            self.algorithm()
        )
    }

    /// Pickles through the parameter set, the (seeded) key bytes and the scale; unpickling loads them
    /// with ``from_bytes``, validated.
    #[allow(clippy::type_complexity)]
    fn __reduce__<'py>(
        slf: &Bound<'py, Self>,
    ) -> PyResult<(
        PyObject,
        (
            PyPegasusParams,
            Bound<'py, PyBytes>,
            Bound<'py, PyBytes>,
            f64,
        ),
    )> {
        let this = slf.get();
        let from_bytes = slf.get_type().getattr("from_bytes")?.unbind();
        let brk = this.keys.evaluator.key();
        let brk = to_py_bytes(slf.py(), || brk.to_bytes());
        let ksk = to_py_bytes(slf.py(), || this.keys.switching_key.to_bytes());
        Ok((
            from_bytes,
            (this.keys.params.clone(), brk, ksk, this.keys.scale),
        ))
    }
}
