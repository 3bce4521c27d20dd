//! `LweCiphertext`: `(b, a)` over one modulus, with Python operators and modulus switching.

use super::*;

/// The arguments of `LweCiphertext.from_parts`: `(modulus, b, a)`.
type Parts<'py> = (u64, u64, Bound<'py, PyArray1<u64>>);

/// An LWE ciphertext ``(b, a)`` modulo ``modulus`` of dimension ``dimension`` (PEGASUS Section II.B:
/// its phase ``b + <a, s>`` is the message plus a small error).
///
/// Immutable; operations return new ciphertexts. ``ct1 + ct2``, ``ct1 - ct2`` and ``-ct`` encrypt the
/// sum, difference and negation of the messages; ``ct * k`` and ``k * ct`` for an integer k multiply the
/// message (and the error) by k; ``ct.add_plain(m)`` adds a public integer without noise. Operands of
/// another dimension or modulus raise ValueError with the Rust message. ``b`` and ``a`` are the
/// components (``a`` a numpy uint64 array); ``LweCiphertext.from_parts(modulus, b, a)`` builds one
/// back. ``to_bytes()`` / ``LweCiphertext.from_bytes(data, dimension, modulus)`` in rnsfhe's wire
/// format. Picklable (by its components: a ciphertext is public).
#[pyclass(name = "LweCiphertext", module = "rnsfhe.lwe", frozen)]
pub(crate) struct PyLweCiphertext {
    pub(crate) ct: LweCiphertext,
}

impl From<LweCiphertext> for PyLweCiphertext {
    fn from(ct: LweCiphertext) -> Self {
        Self { ct }
    }
}

impl PyLweCiphertext {
    /// `self op other` for another ciphertext, `self * k` for an integer; `None` for another operand.
    fn binary(&self, other: &Bound<'_, PyAny>, op: BinOp) -> PyResult<Option<Self>> {
        let result = match (op, other.downcast::<Self>()) {
            (BinOp::Add, Ok(o)) => self.ct.add(&o.get().ct),
            (BinOp::Sub, Ok(o)) => self.ct.sub(&o.get().ct),
            (BinOp::RSub, Ok(o)) => o.get().ct.sub(&self.ct),
            (BinOp::Mul, Err(_)) => match other.extract::<Int>() {
                Ok(k) => {
                    let mut ct = self.ct.clone();
                    ct.mul_scalar_assign(k.get("multiplier")?);
                    Ok(ct)
                }
                Err(_) => return Ok(None),
            },
            _ => return Ok(None),
        };
        result.map(Self::from).map(Some).map_err(lwe_error)
    }

    /// The Python result of an operator (`NotImplemented` for an unsupported operand).
    fn operator(&self, py: Python<'_>, other: &Bound<'_, PyAny>, op: BinOp) -> PyResult<PyObject> {
        operator_result(py, self.binary(other, op)?)
    }
}

#[pymethods]
impl PyLweCiphertext {
    /// LweCiphertext.from_parts(modulus, b, a) -> LweCiphertext
    ///
    /// A ciphertext from its components: ``a`` (a 1-D integer array) gives the dimension; every
    /// component must be reduced below ``modulus`` (ValueError otherwise).
    #[staticmethod]
    fn from_parts(modulus: Int, b: Int, a: &Bound<'_, PyAny>) -> PyResult<Self> {
        let a = read_integers(a)?
            .into_iter()
            .enumerate()
            .map(|(i, x)| {
                u64::try_from(x)
                    .map_err(|_| PyValueError::new_err(format!("a[{i}] = {x} is negative")))
            })
            .collect::<PyResult<Vec<u64>>>()?;
        LweCiphertext::from_parts(modulus.get("modulus")?, b.get("b")?, a)
            .map(Self::from)
            .map_err(lwe_error)
    }

    /// LweCiphertext.from_bytes(data, dimension, modulus, mac_key=None) -> LweCiphertext
    ///
    /// Loads a ciphertext written by ``to_bytes`` (bytes, bytearray or memoryview), checking its digest
    /// (a MAC under ``mac_key`` when given), that the header names an LWE ciphertext of this dimension
    /// and modulus (its fingerprint), and that every component is below the modulus. Raises
    /// rnsfhe.DecodeError naming the field and byte offset otherwise; ValueError for a dimension or
    /// modulus out of range. The GIL is released.
    #[staticmethod]
    #[pyo3(signature = (data, dimension, modulus, mac_key = None))]
    fn from_bytes(
        py: Python<'_>,
        data: &Bound<'_, PyAny>,
        dimension: Int,
        modulus: Int,
        mac_key: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let dimension = LweDimension::new(dimension.get("dimension")?).map_err(lwe_error)?;
        let space = LweSpace::new(dimension, modulus.get("modulus")?).map_err(lwe_error)?;
        let key = crate::common::mac_key(mac_key)?;
        let data = read_bytes(data)?;
        let bytes = data.as_bytes();
        py.allow_threads(|| LweCiphertext::from_bytes_sealed(bytes, &space, integrity(&key)))
            .map(Self::from)
            .map_err(decode_error)
    }

    /// to_bytes(mac_key=None) -> bytes
    ///
    /// The ciphertext in rnsfhe's versioned wire format: a 16-byte header (kind "LWE ciphertext", the
    /// fingerprint of its dimension and modulus), b and a packed at the modulus' bit width, and a 32-byte
    /// BLAKE3 digest, or a MAC under ``mac_key`` (32 bytes the parties share). Load with
    /// ``LweCiphertext.from_bytes(data, dimension, modulus)``.
    #[pyo3(signature = (mac_key = None))]
    fn to_bytes<'py>(
        &self,
        py: Python<'py>,
        mac_key: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let key = crate::common::mac_key(mac_key)?;
        Ok(to_py_bytes(py, || {
            self.ct
                .to_bytes_sealed(PublicRandomness::Seeded, integrity(&key))
        }))
    }

    /// serialized_size() -> int: the length of ``to_bytes()``, without writing.
    fn serialized_size(&self) -> u64 {
        self.ct.serialized_size()
    }

    /// The dimension n (the length of ``a``).
    #[getter]
    fn dimension(&self) -> usize {
        self.ct.dimension().get()
    }

    /// The modulus q.
    #[getter]
    fn modulus(&self) -> u64 {
        self.ct.modulus().value()
    }

    /// The body b, in [0, q).
    #[getter]
    fn b(&self) -> u64 {
        self.ct.b()
    }

    /// The mask a as a new numpy uint64 array, values in [0, q).
    #[getter]
    fn a<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<u64>> {
        PyArray1::from_slice(py, self.ct.a())
    }

    /// add_plain(m) -> LweCiphertext: an encryption of the message plus the public integer ``m`` (no
    /// noise added).
    fn add_plain(&self, m: Int) -> PyResult<Self> {
        let mut ct = self.ct.clone();
        ct.add_plain_assign(m.get("m")?);
        Ok(Self::from(ct))
    }

    /// switch_modulus(q) -> LweCiphertext
    ///
    /// Every component x becomes round(x q / modulus) (PEGASUS Fig. 2 step 2): the message is scaled by
    /// q / modulus, plus a rounding error of at most (1 + ||s||_1) / 2. ValueError for q outside
    /// [2, 2^62).
    fn switch_modulus(&self, q: Int) -> PyResult<Self> {
        self.ct
            .switch_modulus(q.get("q")?)
            .map(Self::from)
            .map_err(lwe_error)
    }

    /// numpy defers to the ciphertext's operators (``k * ct`` for a numpy integer k is a ciphertext).
    #[classattr]
    fn __array_ufunc__(py: Python<'_>) -> PyObject {
        py.None()
    }

    fn __add__(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<PyObject> {
        self.operator(py, other, BinOp::Add)
    }

    fn __radd__(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<PyObject> {
        self.operator(py, other, BinOp::Add)
    }

    fn __sub__(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<PyObject> {
        self.operator(py, other, BinOp::Sub)
    }

    fn __rsub__(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<PyObject> {
        self.operator(py, other, BinOp::RSub)
    }

    fn __mul__(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<PyObject> {
        self.operator(py, other, BinOp::Mul)
    }

    fn __rmul__(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<PyObject> {
        self.operator(py, other, BinOp::Mul)
    }

    fn __neg__(&self) -> Self {
        Self::from(self.ct.neg())
    }

    fn __repr__(&self) -> String {
        format!(
            "LweCiphertext(dimension={}, modulus={})",
            self.dimension(),
            self.modulus()
        )
    }

    /// Ciphertexts are immutable: a copy is the same object.
    fn __copy__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    /// Ciphertexts are immutable: a deep copy is the same object.
    fn __deepcopy__(slf: Py<Self>, _memo: &Bound<'_, PyAny>) -> Py<Self> {
        slf
    }

    /// Pickling rebuilds the ciphertext with ``from_parts(modulus, b, a)``.
    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> PyResult<(PyObject, Parts<'py>)> {
        let this = slf.get();
        let from_parts = slf.get_type().getattr("from_parts")?.unbind();
        Ok((from_parts, (this.modulus(), this.b(), this.a(slf.py()))))
    }
}
