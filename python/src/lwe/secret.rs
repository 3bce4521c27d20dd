//! `LweSecretKey`: ternary LWE secrets, encryption and decryption of integers (one or a numpy vector).

use super::*;

/// An LWE secret key s in {-1, 0, 1}^n (PEGASUS Section II.B): encrypts integers modulo any q as
/// ``(m + e - <a, s>, a)`` and decrypts by the phase ``b + <a, s>``. For clients and tests: a server
/// never holds it.
///
/// ``LweSecretKey.generate(dimension, hamming_weight=None, seed=None)``. Zeroized when freed, never
/// printed, not picklable: saved only explicitly with ``to_secret_bytes()`` and loaded with
/// ``LweSecretKey.from_secret_bytes(data, dimension)``.
#[pyclass(name = "LweSecretKey", module = "rnsfhe.lwe", frozen)]
pub(super) struct PyLweSecretKey {
    pub(super) key: Arc<LweSecretKey>,
}

#[pymethods]
impl PyLweSecretKey {
    /// LweSecretKey.generate(dimension, hamming_weight=None, seed=None) -> LweSecretKey
    ///
    /// A ternary secret of ``dimension`` coefficients: uniform, or with exactly ``hamming_weight``
    /// nonzero ones (PEGASUS Table IV: 64). ``seed`` (an integer) makes the key deterministic, for tests
    /// only: it is **not secure**. Raises ValueError for a dimension outside [1, 2^17] or a weight above
    /// the dimension.
    #[staticmethod]
    #[pyo3(signature = (dimension, hamming_weight = None, seed = None))]
    fn generate(
        py: Python<'_>,
        dimension: Int,
        hamming_weight: Option<Int>,
        seed: Option<Int>,
    ) -> PyResult<Self> {
        let dimension = LweDimension::new(dimension.get("dimension")?).map_err(lwe_error)?;
        let distribution = match Int::get_opt(hamming_weight, "hamming_weight")? {
            Some(h) => SecretDistribution::HammingWeight(h),
            None => SecretDistribution::Ternary,
        };
        let mut rng = csprng(seed)?;
        let key = py
            .allow_threads(|| LweSecretKey::generate(dimension, distribution, &mut rng))
            .map_err(lwe_error)?;
        Ok(Self { key: Arc::new(key) })
    }

    /// The dimension n.
    #[getter]
    fn dimension(&self) -> usize {
        self.key.dimension().get()
    }

    /// to_secret_bytes() -> bytes
    ///
    /// The **secret** key in rnsfhe's wire format (kind "LWE secret key", the fingerprint of its
    /// dimension, the coefficients at 2 bits each, a digest). Only its owner should ever hold these bytes;
    /// never send them to a server (``rnsfhe.read_header(data).is_secret`` is True).
    fn to_secret_bytes<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        to_py_bytes(py, || self.key.to_secret_bytes())
    }

    /// LweSecretKey.from_secret_bytes(data, dimension) -> LweSecretKey
    ///
    /// Loads a secret key written by ``to_secret_bytes``, checking the digest, the header (an LWE secret
    /// key of this dimension) and that every coefficient is ternary. Raises rnsfhe.DecodeError naming
    /// the field and byte offset otherwise; ValueError for a dimension outside [1, 2^17].
    #[staticmethod]
    fn from_secret_bytes(
        py: Python<'_>,
        data: &Bound<'_, PyAny>,
        dimension: Int,
    ) -> PyResult<Self> {
        let dimension = LweDimension::new(dimension.get("dimension")?).map_err(lwe_error)?;
        let data = read_bytes(data)?;
        let bytes = data.as_bytes();
        let key = py
            .allow_threads(|| LweSecretKey::from_secret_bytes(bytes, dimension))
            .map_err(decode_error)?;
        Ok(Self { key: Arc::new(key) })
    }

    /// encrypt(m, modulus, sigma=3.2) -> LweCiphertext
    ///
    /// An encryption of the signed integer ``m`` modulo ``modulus`` (in [2, 2^62)) with a fresh
    /// uniform mask and a discrete Gaussian error of width ``sigma``.
    #[pyo3(signature = (m, modulus, sigma = 3.2))]
    fn encrypt(&self, m: Int, modulus: Int, sigma: f64) -> PyResult<PyLweCiphertext> {
        let mut cts = self.encrypt_all(vec![m.get("m")?], modulus, sigma)?;
        Ok(PyLweCiphertext::from(cts.remove(0)))
    }

    /// encrypt_many(values, modulus, sigma=3.2) -> list[LweCiphertext]
    ///
    /// ``encrypt`` of every value of a 1-D integer array (int64 range), with the GIL released.
    #[pyo3(signature = (values, modulus, sigma = 3.2))]
    fn encrypt_many(
        &self,
        py: Python<'_>,
        values: &Bound<'_, PyAny>,
        modulus: Int,
        sigma: f64,
    ) -> PyResult<Vec<PyLweCiphertext>> {
        let values = read_integers(values)?;
        let cts = py.allow_threads(|| self.encrypt_all(values, modulus, sigma))?;
        Ok(cts.into_iter().map(PyLweCiphertext::from).collect())
    }

    /// decrypt(ct) -> int
    ///
    /// The phase ``b + <a, s>`` centered in (-q/2, q/2]: the message plus the error (divide by the scale
    /// and round for scaled messages). ValueError for a ciphertext of another dimension.
    fn decrypt(&self, ct: &PyLweCiphertext) -> PyResult<i64> {
        self.key.decrypt(&ct.ct).map_err(lwe_error)
    }

    /// decrypt_many(cts) -> numpy.ndarray[int64]
    ///
    /// ``decrypt`` of every ciphertext of a sequence, with the GIL released.
    fn decrypt_many<'py>(
        &self,
        py: Python<'py>,
        cts: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyArray1<i64>>> {
        decrypt_to_array(py, &[&*self.key], cts)
    }

    fn __repr__(&self) -> String {
        format!("LweSecretKey(dimension={}, <hidden>)", self.dimension())
    }

    /// Raises TypeError: the secret key is saved only explicitly, with ``to_secret_bytes()``.
    fn __reduce__(&self) -> PyResult<PyObject> {
        Err(SCHEME.not_picklable(
            "LweSecretKey",
            "it is a secret key; save it explicitly with to_secret_bytes() and load it with \
             LweSecretKey.from_secret_bytes(data, dimension) (never send it to a server)",
        ))
    }
}

impl PyLweSecretKey {
    /// Encryptions of `values` modulo `modulus` with errors of width `sigma` (randomness from the
    /// operating system).
    fn encrypt_all(
        &self,
        values: Vec<i64>,
        modulus: Int,
        sigma: f64,
    ) -> PyResult<Vec<LweCiphertext>> {
        let modulus = Modulus::new(modulus.get("modulus")?).map_err(value_error)?;
        let noise = gaussian(sigma)?;
        let mut rng = csprng(None)?;
        Ok(values
            .into_iter()
            .map(|m| self.key.encrypt(m, &modulus, &noise, &mut rng))
            .collect())
    }
}

/// A 1-D array-like of integers (any numpy integer dtype, a list) as int64 values.
pub(super) fn read_integers(obj: &Bound<'_, PyAny>) -> PyResult<Vec<i64>> {
    read_vector(obj, "an integer", |kind| matches!(kind, b'i' | b'u' | b'b'))
}

/// A 1-D array-like of real numbers (integer or float dtypes) as float64 values.
pub(crate) fn read_reals(obj: &Bound<'_, PyAny>) -> PyResult<Vec<f64>> {
    read_vector(obj, "a real", |kind| {
        matches!(kind, b'i' | b'u' | b'b' | b'f')
    })
}

/// A 1-D array-like whose numpy dtype kind `accepts`, converted to `T` by numpy's `astype`; TypeError
/// for other dtypes (a list of integers beyond int64 is an object array, so it is refused here too).
fn read_vector<T: numpy::Element + Copy>(
    obj: &Bound<'_, PyAny>,
    what: &str,
    accepts: fn(u8) -> bool,
) -> PyResult<Vec<T>> {
    use numpy::PyArrayDescrMethods;
    let arr = as_array(obj)?;
    if arr.ndim() != 1 {
        return Err(wrong_dimensions(
            format_args!("expected a 1-D array of {what} values"),
            arr.ndim(),
        ));
    }
    let kind = arr.dtype().kind();
    if !accepts(kind) {
        return Err(PyTypeError::new_err(format!(
            "expected {what} array, got dtype {}",
            arr.dtype()
        )));
    }
    let converted = arr.call_method1("astype", (numpy::dtype::<T>(obj.py()),))?;
    Ok(converted.downcast::<PyArray1<T>>()?.to_vec()?)
}

/// The ciphertexts of `obj`: one `LweCiphertext` or a sequence of them (copied, for a call without the
/// GIL).
pub(crate) fn read_ciphertexts(obj: &Bound<'_, PyAny>) -> PyResult<Vec<LweCiphertext>> {
    if let Ok(ct) = obj.downcast::<PyLweCiphertext>() {
        return Ok(vec![ct.get().ct.clone()]);
    }
    obj.try_iter()?
        .map(|item| Ok(item?.downcast::<PyLweCiphertext>()?.get().ct.clone()))
        .collect()
}

/// The decryptions of `cts` (see [`read_ciphertexts`]) as an int64 array, each under the key of `keys`
/// of its dimension (the first key for any other dimension, whose error names the mismatch). The GIL is
/// released.
pub(super) fn decrypt_to_array<'py>(
    py: Python<'py>,
    keys: &[&LweSecretKey],
    cts: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyArray1<i64>>> {
    let phases = decrypt_phases(py, keys, &read_ciphertexts(cts)?)?;
    Ok(PyArray1::from_vec(py, phases))
}

/// The phases of `cts`, each under the key of `keys` with its dimension (the first key otherwise, whose
/// error names the mismatch); the GIL is released.
pub(crate) fn decrypt_phases(
    py: Python<'_>,
    keys: &[&LweSecretKey],
    cts: &[LweCiphertext],
) -> PyResult<Vec<i64>> {
    py.allow_threads(|| {
        cts.iter()
            .map(|ct| {
                let key = keys
                    .iter()
                    .find(|k| k.dimension() == ct.dimension())
                    .or(keys.first())
                    .ok_or_else(|| LweError::InvalidParams {
                        what: "decryption keys",
                        reason: "none given".to_string(),
                    })?;
                key.decrypt(ct)
            })
            .collect::<Result<Vec<i64>, LweError>>()
    })
    .map_err(lwe_error)
}
