//! `Plaintext`: integer values encoded once (batch or coefficient encoding) to reuse in sums and
//! products with ciphertexts.

use super::*;

/// N integers modulo t encoded once, made by ``Context.encode(values, encoding=None)``. Accepted wherever
/// an integer array is: ``ct + pt``, ``ct - pt``, ``pt - ct``, ``ct * pt``, ``ev.add/sub/multiply(ct,
/// pt)``; its encoding ("batch" or "coeff") must be the ciphertext's (ValueError otherwise), and a
/// plaintext of another context raises ValueError. ``decode(signed=True)`` gives the values back.
/// Immutable. ``to_bytes()`` / ``Plaintext.from_bytes(data, context, encoding=None)``; picklable (with
/// its encoding).
#[pyclass(name = "Plaintext", module = "rnsfhe.bfv", frozen)]
pub(super) struct PyPlaintext {
    pub(super) pt: Plaintext,
    pub(super) encoding: Encoding,
    /// The keyless evaluator of the context (its encoders decode).
    pub(super) plain: Arc<Eval>,
}

impl WireClass for PyPlaintext {
    type Context = BfvContext;
    type Object = Plaintext;

    fn context(&self) -> &BfvContext {
        self.plain.ctx()
    }

    fn object(&self) -> &Plaintext {
        &self.pt
    }

    fn load_options<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyDict>>> {
        let options = PyDict::new(py);
        options.set_item("encoding", self.encoding.name())?;
        Ok(Some(options))
    }
}

wire_methods! {
    impl PyPlaintext {
        /// Plaintext.from_bytes(data, context, encoding=None, mac_key=None) -> Plaintext
        ///
        /// Loads a plaintext written by ``to_bytes`` into ``context``, validating it (header,
        /// fingerprint, coefficients below t). The bytes do not hold the encoding: ``encoding`` is
        /// "batch", "coeff" or None (``context.encoding``). Raises rnsfhe.DecodeError (a ValueError)
        /// naming the field and byte offset of bad bytes, ValueError for an unknown encoding.
        #[staticmethod]
        #[pyo3(signature = (data, context, encoding = None, mac_key = None))]
        fn from_bytes(
            py: Python<'_>,
            data: &Bound<'_, PyAny>,
            context: &PyContext,
            encoding: Option<&str>,
            mac_key: Option<&Bound<'_, PyAny>>,
        ) -> PyResult<Self> {
            let encoding = Encoding::parse(encoding, &context.ctx)?;
            let pt = load_object(py, data, &*context.ctx, mac_key)?;
            Ok(Self {
                pt,
                encoding,
                plain: Arc::clone(&context.plain),
            })
        }

        /// decode(signed=True) -> numpy.ndarray
        ///
        /// The N encoded values (int64): centered in (-t/2, t/2] if ``signed``, else in [0, t).
        #[pyo3(signature = (signed = true))]
        fn decode<'py>(&self, py: Python<'py>, signed: bool) -> PyResult<Bound<'py, PyArray1<i64>>> {
            let values = self
                .plain
                .enc
                .decode(&self.pt, self.encoding, signed)
                .map_err(bfv_error)?;
            Ok(PyArray1::from_vec(py, values))
        }

        /// "batch" (N slots) or "coeff" (N coefficients).
        #[getter]
        fn encoding(&self) -> &'static str {
            self.encoding.name()
        }

        fn __repr__(&self) -> String {
            let ctx = self.plain.ctx();
            format!(
                "Plaintext(N={}, t={}, encoding={:?})",
                ctx.n(),
                ctx.plaintext_modulus(),
                self.encoding.name()
            )
        }
    }
}
