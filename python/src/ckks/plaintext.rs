//! `Plaintext`: slot values encoded once, at a level and scale, to reuse in sums and products with
//! ciphertexts (each use then skips the encoding: the special FFT and the NTT of every limb).

use super::*;

/// Slot values encoded at a level and an exact scale, made by ``Context.encode(values, level=None,
/// scale=None, slots=None)``. Accepted wherever an array is: ``ct + pt``, ``ct - pt``, ``pt - ct``,
/// ``ct * pt`` (rescaled when the evaluator auto-rescales), ``ev.add/sub/multiply(ct, pt)``,
/// ``ct.dot(pt)``. A plaintext at another level than the ciphertext is dropped to it, or the ciphertext to
/// the plaintext's (a strict evaluator refuses); sums need the ciphertext's scale (encode with
/// ``level=ct.level, scale=ct.scale``), else the ciphertext is brought to the plaintext's scale at the cost
/// of a level, and at level 1 that raises ValueError (scale mismatch). ``decode()`` gives the values back.
/// Immutable. ``to_bytes()`` / ``Plaintext.from_bytes(data, context)``; picklable.
#[pyclass(name = "Plaintext", module = "rnsfhe.ckks", frozen)]
pub(super) struct PyPlaintext {
    pub(super) pt: Plaintext,
    pub(super) ctx: Arc<CkksContext>,
}

impl WireClass for PyPlaintext {
    type Context = CkksContext;
    type Object = Plaintext;

    fn context(&self) -> &CkksContext {
        &self.ctx
    }

    fn object(&self) -> &Plaintext {
        &self.pt
    }
}

wire_methods! {
    impl PyPlaintext {
        /// Plaintext.from_bytes(data, context, mac_key=None) -> Plaintext
        ///
        /// Loads a plaintext written by ``to_bytes`` into ``context``, validating it (header,
        /// fingerprint, level within the chain, scale, slot count, residues below their moduli). The
        /// GIL is released. Raises rnsfhe.DecodeError (a ValueError) naming the field and byte offset.
        #[staticmethod]
        #[pyo3(signature = (data, context, mac_key = None))]
        fn from_bytes(
            py: Python<'_>,
            data: &Bound<'_, PyAny>,
            context: &PyContext,
            mac_key: Option<&Bound<'_, PyAny>>,
        ) -> PyResult<Self> {
            let pt = load_object(py, data, &*context.ctx, mac_key)?;
            Ok(Self {
                pt,
                ctx: Arc::clone(&context.ctx),
            })
        }

        /// decode(real=False) -> numpy.ndarray
        ///
        /// The ``slots`` encoded values (up to the rounding of the encoding, about 1/scale): complex128,
        /// or float64 (the real parts) if ``real``. The GIL is released.
        #[pyo3(signature = (real = false))]
        fn decode<'py>(&self, py: Python<'py>, real: bool) -> PyResult<Bound<'py, PyAny>> {
            let values = py
                .allow_threads(|| self.ctx.decode(&self.pt))
                .map_err(ckks_error)?;
            Ok(slot_array(py, values, real))
        }

        /// Level in limbs (the plaintext lives modulo q_0 ... q_{level-1}).
        #[getter]
        fn level(&self) -> usize {
            self.pt.level()
        }

        /// The exact scale.
        #[getter]
        fn scale(&self) -> f64 {
            self.pt.scale()
        }

        /// Number of slots (a power of two up to N/2).
        #[getter]
        fn slots(&self) -> usize {
            self.pt.slots()
        }

        fn __repr__(&self) -> String {
            format!(
                "Plaintext(level={}, log2_scale={:.3}, slots={})",
                self.pt.level(),
                self.pt.scale().log2(),
                self.pt.slots()
            )
        }
    }
}
