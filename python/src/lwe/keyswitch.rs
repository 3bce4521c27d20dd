//! `LweSwitchingKey`: key switching between LWE dimensions (PEGASUS Fig. 9).

use super::*;

/// A key that switches LWE ciphertexts modulo q0 from one secret (dimension ``from_dimension``) to
/// another (``to_dimension``), in the ring form of PEGASUS Fig. 9; each switch adds an error of variance
/// ``added_variance()`` (PEGASUS Appendix C.1). ``LutSession.switching_key`` is the one from the
/// look-up-table ring's key back to the LWE key. Public material, but with no wire format yet: not
/// picklable.
#[pyclass(name = "LweSwitchingKey", module = "rnsfhe.lwe", frozen)]
pub(super) struct PyLweSwitchingKey {
    pub(super) key: Arc<LweSwitchingKey>,
}

#[pymethods]
impl PyLweSwitchingKey {
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

    /// added_variance() -> float: the variance one switch adds to the error, N' d B^2 sigma^2 / 12.
    fn added_variance(&self) -> f64 {
        self.key.added_variance()
    }

    /// switch(ct) -> LweCiphertext
    ///
    /// An encryption of the same message under the target secret (PEGASUS Fig. 9), with the GIL
    /// released. ValueError for a ciphertext of another dimension or modulus.
    pub(super) fn switch(&self, py: Python<'_>, ct: &PyLweCiphertext) -> PyResult<PyLweCiphertext> {
        let (key, ct) = (&*self.key, &ct.ct);
        py.allow_threads(|| key.switch(ct))
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

    /// Raises TypeError: LWE switching keys have no wire format yet.
    fn __reduce__(&self) -> PyResult<PyObject> {
        Err(SCHEME.not_picklable(
            "LweSwitchingKey",
            "LWE switching keys have no wire format yet (make it again with a LutSession)",
        ))
    }
}
