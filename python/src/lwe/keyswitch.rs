//! `LweSwitchingKey`: key switching between LWE dimensions (PEGASUS Fig. 9).

use super::*;

/// A key that switches LWE ciphertexts modulo q0 from one secret (dimension ``from_dimension``) to
/// another (``to_dimension``), in the ring form of PEGASUS Fig. 9; each switch adds an error of variance
/// ``added_variance()`` (PEGASUS Appendix C.1). ``LutSession.switching_key`` is the one from the
/// look-up-table ring's key back to the LWE key. Public material: ``to_bytes()`` /
/// ``LweSwitchingKey.from_bytes(data, params, from_dimension=None, to_dimension=None)`` in rnsfhe's
/// wire format (its gadget ciphertexts' uniform parts as seeds), and picklable through them.
#[pyclass(name = "LweSwitchingKey", module = "rnsfhe.lwe", frozen)]
pub(super) struct PyLweSwitchingKey {
    pub(super) key: Arc<LweSwitchingKey>,
    /// The parameter set the key belongs to (its switching parameters are `params.key_switch`).
    pub(super) params: PyPegasusParams,
}

#[pymethods]
impl PyLweSwitchingKey {
    /// LweSwitchingKey.from_bytes(data, params, from_dimension=None, to_dimension=None, mac_key=None)
    ///
    /// Loads a switching key written by ``to_bytes`` into the parameter set ``params`` (a
    /// ``PegasusParams`` or a preset name): its switching parameters (q0, ks_base_log, ks_digits,
    /// ks_sigma) and dimensions, by default those of ``LutSession.switching_key`` (from the look-up-table
    /// ring's degree 2^lut_log_n to lwe_dimension). Checks the digest (a MAC under ``mac_key`` when
    /// given), the header (kind and the fingerprint of the dimensions and parameters) and every residue;
    /// a seed is expanded. Raises rnsfhe.DecodeError naming the field and byte offset for bad bytes,
    /// ValueError for dimensions the parameters do not support. The GIL is released.
    #[staticmethod]
    #[pyo3(signature = (data, params, from_dimension = None, to_dimension = None, mac_key = None))]
    fn from_bytes(
        py: Python<'_>,
        data: &Bound<'_, PyAny>,
        params: &Bound<'_, PyAny>,
        from_dimension: Option<Int>,
        to_dimension: Option<Int>,
        mac_key: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let params = pegasus_params(Some(params), "InsecureTest")?;
        let p = &params.params;
        let from = Int::get_opt(from_dimension, "from_dimension")?.unwrap_or(1 << p.lut.log_n);
        let to = Int::get_opt(to_dimension, "to_dimension")?.unwrap_or(p.lwe_dimension);
        let ctx = LweSwitchingKeyContext::new(
            LweDimension::new(from).map_err(lwe_error)?,
            LweDimension::new(to).map_err(lwe_error)?,
            p.key_switch,
        )
        .map_err(lwe_error)?;
        let key = crate::common::mac_key(mac_key)?;
        let data = read_bytes(data)?;
        let bytes = data.as_bytes();
        let loaded = crate::common::release(py, || {
            LweSwitchingKey::from_bytes_sealed(bytes, &ctx, integrity(&key))
        })
        .map_err(decode_error)?;
        Ok(Self {
            key: Arc::new(loaded),
            params,
        })
    }

    /// to_bytes(seeded=True, mac_key=None) -> bytes
    ///
    /// The key in rnsfhe's versioned wire format: a 16-byte header (kind "LWE switching key", the
    /// fingerprint of its dimensions and parameters), its gadget ciphertexts (with ``seeded``, their
    /// uniform parts as 32-byte seeds: about half the size), and a 32-byte BLAKE3 digest, or a MAC under
    /// ``mac_key``. The GIL is released.
    #[pyo3(signature = (seeded = true, mac_key = None))]
    fn to_bytes<'py>(
        &self,
        py: Python<'py>,
        seeded: bool,
        mac_key: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let key = crate::common::mac_key(mac_key)?;
        Ok(to_py_bytes(py, || {
            self.key
                .to_bytes_sealed(randomness(seeded), integrity(&key))
        }))
    }

    /// serialized_size(seeded=True) -> int: the length of ``to_bytes(seeded)``, without writing.
    #[pyo3(signature = (seeded = true))]
    fn serialized_size(&self, seeded: bool) -> u64 {
        self.key.serialized_size_with(randomness(seeded))
    }

    /// The parameter set the key belongs to.
    #[getter]
    fn params(&self) -> PyPegasusParams {
        self.params.clone()
    }

    /// The source dimension N'.
    #[getter(from_dimension)]
    fn source_dimension(&self) -> usize {
        self.key.from_dimension().get()
    }

    /// The target dimension n.
    #[getter]
    fn to_dimension(&self) -> usize {
        self.key.to_dimension().get()
    }

    /// The modulus q0 of the ciphertexts it switches.
    #[getter]
    fn modulus(&self) -> u64 {
        self.key.params().modulus
    }

    /// added_variance() -> float: the variance one switch adds to the error: sum over the N' d digit
    /// products of E[d^2] sigma^2 (PEGASUS Appendix C.1's N' d B^2 sigma^2 / 12 with the top digit's
    /// actual size, `rnsfhe_lwe::LweSwitchingKey::added_variance`).
    fn added_variance(&self) -> f64 {
        self.key.added_variance()
    }

    /// switch(ct) -> LweCiphertext
    ///
    /// An encryption of the same message under the target secret (PEGASUS Fig. 9), with the GIL
    /// released. ValueError for a ciphertext of another dimension or modulus.
    pub(super) fn switch(&self, py: Python<'_>, ct: &PyLweCiphertext) -> PyResult<PyLweCiphertext> {
        let (key, ct) = (&*self.key, &ct.ct);
        crate::common::release(py, || key.switch(ct))
            .map(PyLweCiphertext::from)
            .map_err(lwe_error)
    }

    fn __repr__(&self) -> String {
        format!(
            "LweSwitchingKey(from_dimension={}, to_dimension={}, modulus={})",
            self.source_dimension(),
            self.to_dimension(),
            self.modulus()
        )
    }

    /// Pickling writes the key's (seeded) bytes with its parameter set and dimensions; unpickling loads
    /// them with ``from_bytes``, validated.
    #[allow(clippy::type_complexity)]
    fn __reduce__<'py>(
        slf: &Bound<'py, Self>,
    ) -> PyResult<(
        PyObject,
        (Bound<'py, PyBytes>, PyPegasusParams, usize, usize),
    )> {
        let this = slf.get();
        let from_bytes = slf.get_type().getattr("from_bytes")?.unbind();
        let bytes = to_py_bytes(slf.py(), || this.key.to_bytes());
        Ok((
            from_bytes,
            (
                bytes,
                this.params.clone(),
                this.source_dimension(),
                this.to_dimension(),
            ),
        ))
    }
}
