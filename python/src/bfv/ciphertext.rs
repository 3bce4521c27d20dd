//! `Ciphertext`: an encrypted vector with its encoding, Python operators and rotations, attached to an
//! evaluator.

use super::*;

/// An encrypted vector of N integers modulo t: N slots (``encoding == "batch"``) or the N coefficients
/// of a polynomial (``encoding == "coeff"``).
///
/// Immutable; operations return new ciphertexts. Operators ``+ - *`` take Ciphertexts, Plaintexts
/// (``Context.encode``), 1-D integer arrays and integers on either side, and unary ``-``; all results are exact modulo t while the noise
/// budget lasts (``Decryptor.noise_budget``). An integer k is the constant polynomial k: k in every slot
/// (batch) or added to coefficient 0 only (coeff); ``ct * k`` multiplies every value by k in both
/// encodings. Batch slots form a 2 x N/2 matrix (slots 0 .. N/2-1 and N/2 .. N-1): ``rotate_rows(k)``
/// rotates both rows left by k, ``rotate_columns()`` swaps them. Operators and methods use the evaluator
/// the ciphertext is attached to (``ct.evaluator``: the one that made it, or the one given to the
/// encryptor). Errors raise ValueError with the Rust message; floats
/// raise TypeError. ``to_bytes()`` / ``Ciphertext.from_bytes(data, context, evaluator=None,
/// encoding=None)``; picklable (with its encoding; unpickled ciphertexts are attached to the keyless
/// evaluator of their context: use ``evaluator.attach(ct)`` or evaluator methods).
#[pyclass(name = "Ciphertext", module = "rnsfhe.bfv", frozen)]
pub(super) struct PyCiphertext {
    pub(super) ct: Ciphertext,
    pub(super) eval: Arc<Eval>,
    pub(super) encoding: Encoding,
    /// The seeded form of a fresh secret-key encryption (half the wire size), if this is one.
    pub(super) seeded: Option<Arc<SeededCiphertext>>,
}

impl PyCiphertext {
    pub(super) fn new(ct: Ciphertext, eval: &Arc<Eval>, encoding: Encoding) -> Self {
        Self {
            ct,
            eval: Arc::clone(eval),
            encoding,
            seeded: None,
        }
    }

    /// A fresh secret-key ciphertext that keeps its seeded form for `to_bytes`.
    pub(super) fn with_seed(
        seeded: SeededCiphertext,
        eval: &Arc<Eval>,
        encoding: Encoding,
    ) -> PyResult<Self> {
        Ok(Self {
            ct: seeded.expand().map_err(bfv_error)?,
            eval: Arc::clone(eval),
            encoding,
            seeded: Some(Arc::new(seeded)),
        })
    }
}

ciphertext_wire_class!(BfvContext;
    fn load_options<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyDict>>> {
        let options = PyDict::new(py);
        options.set_item("encoding", self.encoding.name())?;
        Ok(Some(options))
    }
);

ciphertext_methods! {
    wire;
    impl PyCiphertext {
        /// Ciphertexts are immutable: a copy is the same object.
        fn __copy__(slf: Py<Self>) -> Py<Self> {
            slf
        }

        /// Ciphertexts are immutable: a deep copy is the same object.
        fn __deepcopy__(slf: Py<Self>, _memo: &Bound<'_, PyAny>) -> Py<Self> {
            slf
        }

        /// Ciphertext.from_bytes(data, context, evaluator=None, encoding=None, mac_key=None) -> Ciphertext
        ///
        /// Loads a ciphertext written by ``to_bytes`` (seeded or not) into ``context``, validating it
        /// (header, fingerprint, part count, residues below their moduli). The bytes do not hold the
        /// encoding: ``encoding`` is "batch", "coeff" or None (``context.encoding``). It is attached to
        /// ``evaluator`` (of the same parameters) if given, else to the context's keyless evaluator;
        /// evaluator methods (``ev.multiply(a, b)``) work either way. The GIL is released. Raises
        /// rnsfhe.DecodeError (a ValueError) naming the field and byte offset of bad bytes (wrong
        /// parameters: ``header.fingerprint``), ValueError for an evaluator of other parameters or an
        /// unknown encoding.
        #[staticmethod]
        #[pyo3(signature = (data, context, evaluator = None, encoding = None, mac_key = None))]
        fn from_bytes(
            py: Python<'_>,
            data: &Bound<'_, PyAny>,
            context: &PyContext,
            evaluator: Option<&PyEvaluator>,
            encoding: Option<&str>,
            mac_key: Option<&Bound<'_, PyAny>>,
        ) -> PyResult<Self> {
            let eval = match evaluator {
                Some(e) => {
                    check_same_context(&context.ctx, e.eval.ctx(), "the evaluator")?;
                    &e.eval
                }
                None => &context.plain,
            };
            let encoding = Encoding::parse(encoding, &context.ctx)?;
            let ct = load_object(py, data, &*context.ctx, mac_key)?;
            Ok(Self::new(ct, eval, encoding))
        }

        fn __neg__(&self, py: Python<'_>) -> PyResult<PyCiphertext> {
            unary(py, &self.eval, self, |e, c| {
                e.ev.negate(c).map_err(bfv_error)
            })
        }

        /// square() -> Ciphertext: self * self, relinearized.
        fn square(&self, py: Python<'_>) -> PyResult<PyCiphertext> {
            unary(py, &self.eval, self, |e, c| e.multiply(c, c, true))
        }

        /// rotate_rows(step) -> Ciphertext: both rows of the 2 x N/2 slot matrix rotated left by ``step``
        /// (right for step < 0), like ``numpy.roll(x.reshape(2, -1), -step, axis=1).ravel()``. Needs batch
        /// encoding and the key of ``step`` (``keygen(rotations=[...])``; ValueError naming the step
        /// otherwise).
        fn rotate_rows(&self, py: Python<'_>, step: Int) -> PyResult<PyCiphertext> {
            rotate(py, &self.eval, self, Some(step.get("step")?))
        }

        /// rotate_columns() -> Ciphertext: the two rows of the slot matrix swapped, like
        /// ``x.reshape(2, -1)[::-1].ravel()``. Needs batch encoding and ``keygen(column_swap=True)``.
        fn rotate_columns(&self, py: Python<'_>) -> PyResult<PyCiphertext> {
            rotate(py, &self.eval, self, None)
        }

        /// "batch" (N slots) or "coeff" (N polynomial coefficients).
        #[getter]
        fn encoding(&self) -> &'static str {
            self.encoding.name()
        }

        /// Number of polynomials: 2, or 3 for a product that was not relinearized.
        #[getter]
        fn parts(&self) -> usize {
            self.ct.part_count()
        }

        /// Number of values (slots or coefficients), N.
        #[getter]
        fn n(&self) -> usize {
            self.eval.ctx().n()
        }

        /// The plaintext modulus t.
        #[getter]
        fn t(&self) -> u64 {
            self.eval.ctx().plaintext_modulus()
        }

        fn __repr__(&self) -> String {
            format!(
                "Ciphertext(N={}, t={}, encoding={:?}, parts={})",
                self.n(),
                self.t(),
                self.encoding.name(),
                self.ct.part_count()
            )
        }
    }
}
