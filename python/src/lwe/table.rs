//! `LookupTable`: a table polynomial of one function, or of several read by one blind rotation, built
//! once by ``LutSession.table`` and reused by ``lut`` / ``lut_many`` / ``lut_all`` (PEGASUS Fig. 2 step
//! 1 is then paid once, not per call).

use super::*;

/// A look-up table (``LutSession.table(f)`` or ``LutSession.table([f, g, ...])``): immutable, reusable
/// across calls and threads. ``functions`` is how many functions one blind rotation reads
/// (``LutSession.lut_all``); ``input_scale`` and ``output_scale`` are the absolute scales at
/// ``input_modulus`` and q0. ``to_bytes()`` / ``LookupTable.from_bytes(data, params)`` in the wire
/// format; pickles through them.
#[pyclass(name = "LookupTable", module = "rnsfhe.lwe", frozen)]
pub(crate) struct PyLookupTable {
    pub(crate) table: Arc<LookupTable>,
    /// The parameter set of the ring the table belongs to (for pickling).
    pub(crate) params: PyPegasusParams,
}

#[pymethods]
impl PyLookupTable {
    /// The number of functions one blind rotation reads from the table.
    #[getter]
    fn functions(&self) -> usize {
        self.table.functions()
    }

    /// The scale of the inputs at ``input_modulus`` (absolute).
    #[getter]
    fn input_scale(&self) -> f64 {
        self.table.input_scale()
    }

    /// The scale of the outputs at q0 (absolute).
    #[getter]
    fn output_scale(&self) -> f64 {
        self.table.output_scale()
    }

    /// The modulus of the ciphertexts the table reads.
    #[getter]
    fn input_modulus(&self) -> u64 {
        self.table.input_modulus()
    }

    /// to_bytes() -> bytes: the table in the wire format (polynomial, scales, input modulus, count).
    fn to_bytes<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        to_py_bytes(py, || self.table.to_bytes())
    }

    /// LookupTable.from_bytes(data, params) -> LookupTable: a table of the look-up-table ring of
    /// ``params`` (a PegasusParams or a preset name); DecodeError for bytes of another ring or invalid
    /// fields.
    #[staticmethod]
    fn from_bytes(data: &Bound<'_, PyAny>, params: &Bound<'_, PyAny>) -> PyResult<Self> {
        let params = pegasus_params(Some(params), "InsecureTest")?;
        let ctx = params
            .params
            .lut
            .context_allowing_insecure()
            .map_err(lwe_error)?;
        let data = read_bytes(data)?;
        let table = LookupTable::from_bytes(data.as_bytes(), &ctx).map_err(decode_error)?;
        Ok(Self {
            table: Arc::new(table),
            params,
        })
    }

    fn __repr__(&self) -> String {
        format!(
            "LookupTable(functions={}, n={}, input_modulus={}, input_scale={:e}, output_scale={:e})",
            self.table.functions(),
            self.table.poly().degree(),
            self.table.input_modulus(),
            self.table.input_scale(),
            self.table.output_scale()
        )
    }

    /// Pickles through ``to_bytes`` and the parameter set.
    fn __reduce__<'py>(
        slf: &Bound<'py, Self>,
    ) -> PyResult<(PyObject, (Bound<'py, PyBytes>, PyPegasusParams))> {
        let this = slf.get();
        let from_bytes = slf.get_type().getattr("from_bytes")?.unbind();
        let bytes = to_py_bytes(slf.py(), || this.table.to_bytes());
        Ok((from_bytes, (bytes, this.params.clone())))
    }
}
