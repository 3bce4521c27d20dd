//! `Ciphertext`: an encrypted vector with its Python operators and methods, attached to an evaluator.

use super::*;

/// An encrypted vector of ``slots`` complex numbers at a level (limbs; ``level - 1`` more rescalings are
/// possible) and an exact scale.
///
/// Operations return new ciphertexts; only ``a += b`` and ``a -= b`` update ``a`` in place (one pass, no
/// new ciphertext: see ``__iadd__``), and ``copy.copy(ct)`` is a new object. Operators ``+ - *`` take Ciphertexts, Plaintexts
/// (``Context.encode``), 1-D arrays and numbers on either side, ``/`` numbers, unary ``-``; they and the
/// methods use the evaluator the ciphertext is attached to (``ct.evaluator``: the one that made it, or the one given to the encryptor).
/// Errors raise ValueError with the Rust message. ``to_bytes()`` / ``Ciphertext.from_bytes(data,
/// context)``; picklable (unpickled ciphertexts are attached to the keyless evaluator of their
/// context: use ``evaluator.attach(ct)``).
#[pyclass(name = "Ciphertext", module = "rnsfhe.ckks")]
pub(crate) struct PyCiphertext {
    pub(super) ct: Ciphertext,
    pub(super) eval: Arc<Eval>,
    /// The seeded form of a fresh secret-key encryption (half the wire size), if this is one.
    pub(super) seeded: Option<Arc<SeededCiphertext>>,
}

impl PyCiphertext {
    pub(super) fn new(ct: Ciphertext, eval: &Arc<Eval>) -> Self {
        Self {
            ct,
            eval: Arc::clone(eval),
            seeded: None,
        }
    }

    /// A fresh secret-key ciphertext that keeps its seeded form for `to_bytes`.
    pub(super) fn with_seed(seeded: SeededCiphertext, eval: &Arc<Eval>) -> PyResult<Self> {
        Ok(Self {
            ct: seeded.expand().map_err(ckks_error)?,
            eval: Arc::clone(eval),
            seeded: Some(Arc::new(seeded)),
        })
    }

    /// The Rust ciphertext (for the bindings of the applications, [`crate::apps`]).
    pub(crate) fn ciphertext(&self) -> &Ciphertext {
        &self.ct
    }

    /// The Rust evaluator this ciphertext is attached to (its keys run the applications' computations).
    pub(crate) fn rust_evaluator(&self) -> &Evaluator {
        &self.eval.ev
    }

    /// `ct` as a Python ciphertext attached to the same evaluator as `self`.
    pub(crate) fn sibling(&self, ct: Ciphertext) -> Self {
        Self::new(ct, &self.eval)
    }

    /// The context of the evaluator this ciphertext is attached to (a PEGASUS session compares it with
    /// its own to tell its ciphertexts from another session's of the same parameters).
    pub(crate) fn context(&self) -> &Arc<CkksContext> {
        self.eval.ctx()
    }

    /// The PEGASUS pipeline of the evaluator, or the Python error that says how to get one.
    fn pegasus(&self, method: &str) -> PyResult<&crate::pegasus::Pegasus> {
        self.eval.pegasus.as_deref().ok_or_else(|| {
            PyValueError::new_err(format!(
                "Ciphertext.{method} needs the PEGASUS keys, and this ciphertext is attached to an \
                 evaluator without them: encrypt with an rnsfhe.pegasus.Session (session.encrypt), or \
                 attach the ciphertext to its evaluator (session.evaluator.attach(ct))"
            ))
        })
    }
}

ciphertext_wire_class!(CkksContext);

ciphertext_methods! {
    wire;
    impl PyCiphertext {
        /// Ciphertext.from_bytes(data, context, evaluator=None, mac_key=None) -> Ciphertext
        ///
        /// Loads a ciphertext written by ``to_bytes`` (seeded or not) into ``context``, validating it
        /// (header, fingerprint, level within the chain, part count, residues below their moduli, scale
        /// and slot count). It is attached to ``evaluator`` (of the same parameters) if given, else to
        /// the context's keyless evaluator; evaluator methods (``ev.mean(ct)``) work either way. The GIL
        /// is released. Raises rnsfhe.DecodeError (a ValueError) naming the field and byte offset of bad
        /// bytes (wrong parameters: ``header.fingerprint``), ValueError for an evaluator of other
        /// parameters.
        #[staticmethod]
        #[pyo3(signature = (data, context, evaluator = None, mac_key = None))]
        fn from_bytes(
            py: Python<'_>,
            data: &Bound<'_, PyAny>,
            context: &PyContext,
            evaluator: Option<&PyEvaluator>,
            mac_key: Option<&Bound<'_, PyAny>>,
        ) -> PyResult<Self> {
            let eval = match evaluator {
                Some(e) => {
                    let (expected, got) = (context.ctx.fingerprint(), e.eval.ctx().fingerprint());
                    if expected != got {
                        return Err(ckks_error(ckks::Error::ContextMismatch {
                            object: "the evaluator",
                            expected,
                            got,
                        }));
                    }
                    &e.eval
                }
                None => &context.plain,
            };
            let ct = load_object(py, data, &*context.ctx, mac_key)?;
            Ok(Self::new(ct, eval))
        }

        fn __truediv__(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<PyObject> {
            let inverse = match classify(other)? {
                Some(Arg::Int(k)) => Complex64::new(k as f64, 0.0),
                Some(Arg::Real(x)) => Complex64::new(x, 0.0),
                Some(Arg::Complex(z)) => z,
                _ => return Ok(py.NotImplemented()),
            };
            if inverse.norm_sqr() == 0.0 {
                return Err(PyZeroDivisionError::new_err(
                    "division of a ciphertext by zero",
                ));
            }
            let factor = if inverse.im == 0.0 {
                Complex64::new(1.0 / inverse.re, 0.0)
            } else {
                inverse.inv()
            };
            let eval = &self.eval;
            let ct = release(py, || eval.ev.apply(&self.ct, BinaryOp::Mul, Operand::Constant(factor)))
                .map_err(ckks_error)?;
            operator_result(py, Some(PyCiphertext::new(ct, eval)))
        }

        fn __neg__(&self, py: Python<'_>) -> PyResult<PyCiphertext> {
            unary_inline(py, &self.eval, &self.ct, |e, c| e.negate(c))
        }

        /// ``a += b`` updates ``a`` in place (``Evaluator::add_assign``: no new ciphertext when the levels
        /// and scales already match; otherwise aligned as by ``+``). Every name bound to ``a`` sees the sum,
        /// as with numpy arrays; ``a = a + b`` makes a new ciphertext instead. ``b``: what ``+`` takes.
        fn __iadd__(slf: &Bound<'_, Self>, other: &Bound<'_, PyAny>) -> PyResult<()> {
            in_place(slf, other, BinOp::Add)
        }

        /// ``a -= b`` updates ``a`` in place (``Evaluator::sub_assign``); see ``__iadd__``.
        fn __isub__(slf: &Bound<'_, Self>, other: &Bound<'_, PyAny>) -> PyResult<()> {
            in_place(slf, other, BinOp::Sub)
        }

        /// A copy (``+=`` and ``-=`` update a ciphertext in place, so a copy is a new object).
        fn __copy__(&self) -> Self {
            Self {
                ct: self.ct.clone(),
                eval: Arc::clone(&self.eval),
                seeded: self.seeded.clone(),
            }
        }

        /// A deep copy: as ``__copy__`` (the evaluator and its keys are shared, never changed).
        fn __deepcopy__(&self, _memo: &Bound<'_, PyAny>) -> Self {
            self.__copy__()
        }

        /// rescale() -> Ciphertext: divides by the last prime (one level less); ValueError at level 1.
        fn rescale(&self, py: Python<'_>) -> PyResult<PyCiphertext> {
            unary(py, &self.eval, &self.ct, |e, c| e.rescale(c))
        }

        /// square() -> Ciphertext: self * self (rescaled if the evaluator auto-rescales).
        fn square(&self, py: Python<'_>) -> PyResult<PyCiphertext> {
            unary(py, &self.eval, &self.ct, |e, c| {
                e.multiply_finished(c, c)
            })
        }

        /// drop_to_level(level) -> Ciphertext: the same message at a lower level (limbs removed).
        fn drop_to_level(&self, py: Python<'_>, level: Int) -> PyResult<PyCiphertext> {
            let level = level.get("level")?;
            unary_inline(py, &self.eval, &self.ct, |e, c| {
                e.drop_to_level(c, level)
            })
        }

        /// rotate(k) -> Ciphertext: slots rotated left by k (right for k < 0), like numpy.roll(x, -k).
        /// Raises ValueError naming the step if its rotation key was not generated.
        fn rotate(&self, py: Python<'_>, k: Int) -> PyResult<PyCiphertext> {
            let k = k.get("k")?;
            unary(py, &self.eval, &self.ct, |e, c| e.rotate(c, k))
        }

        /// conjugate() -> Ciphertext: the complex conjugate of every slot (needs keygen(conjugate=True)).
        fn conjugate(&self, py: Python<'_>) -> PyResult<PyCiphertext> {
            unary(py, &self.eval, &self.ct, |e, c| e.conjugate(c))
        }

        /// bootstrap(bootstrapper, passes=1) -> Ciphertext: the same slots at ``bootstrapper.output_level``
        /// (CKKS bootstrapping; the evaluator needs the keys of ``Context.keygen(bootstrapper=...)``). The
        /// values must lie in [-1, 1]. ``passes`` > 1: META-BTS, the error bootstrapped again ``passes - 1``
        /// times for more precision (``bootstrapper.meta_error_bound``), one level lower
        /// (``bootstrapper.meta_output_level``). Raises ValueError naming the missing key, for another slot
        /// count, for a scale above ``bootstrapper.max_input_scale``, or for a chain without the levels
        /// META-BTS needs. The GIL is released.
        #[pyo3(signature = (bootstrapper, passes = Int::new(1)))]
        #[pyo3(text_signature = "($self, bootstrapper, passes=1)")]
        fn bootstrap(
            &self,
            py: Python<'_>,
            bootstrapper: &PyBootstrapper,
            passes: Int,
        ) -> PyResult<PyCiphertext> {
            bootstrap_with(py, &self.eval, &self.ct, bootstrapper, passes)
        }

        /// sum() -> Ciphertext: the sum of all slots, in every slot (needs keygen(sum_slots=True)); no level
        /// used.
        fn sum(&self, py: Python<'_>) -> PyResult<PyCiphertext> {
            unary(py, &self.eval, &self.ct, |e, c| e.sum_slots(c))
        }

        /// mean() -> Ciphertext: the mean of all ``slots`` slots (zero padding included), in every slot;
        /// uses one level (needs keygen(sum_slots=True)). For the mean of n < slots values use
        /// ``ct.sum() * (1 / n)``.
        fn mean(&self, py: Python<'_>) -> PyResult<PyCiphertext> {
            unary(py, &self.eval, &self.ct, |e, c| e.mean(c))
        }

        /// var() -> Ciphertext: the variance of all ``slots`` slots (zero padding included), in every slot,
        /// as ``E[x^2] - E[x]^2`` of real values; uses two levels (needs keygen(sum_slots=True)).
        fn var(&self, py: Python<'_>) -> PyResult<PyCiphertext> {
            unary(py, &self.eval, &self.ct, |e, c| e.variance(c))
        }

        /// polyval(coeffs, basis="power", interval=None) -> Ciphertext
        ///
        /// The polynomial p applied to every slot, by a baby-step giant-step schedule at the minimal depth;
        /// the result has this ciphertext's scale, ``p.depth`` levels lower.
        ///
        /// * ``coeffs``: real coefficients in increasing order (``coeffs[k]`` multiplies x^k, as
        ///   ``numpy.polynomial.polynomial.polyval``, not ``numpy.polyval``), or a ``ckks.Polynomial``, or a
        ///   ``numpy.polynomial`` series (a ``Chebyshev`` series keeps its domain as the interval);
        /// * ``basis``: "power" (default) or "chebyshev": ``sum_k coeffs[k] T_k((2x - a - b) / (b - a))`` on
        ///   ``interval = (a, b)`` (default (-1, 1)). Slots should lie in the interval: outside it, T_k
        ///   grows fast.
        ///
        /// Degree d uses ceil(log2(d + 1)) levels (degree 7: 3, 15: 4, 31: 5, 255: 8), plus one for a
        /// Chebyshev interval whose width is not 2 (or 2/k). Needs the relinearization key. Raises
        /// NotEnoughLevelsError (a ValueError) naming the levels needed and available, ValueError for
        /// non-finite coefficients, a constant, a degree above 4095, an interval with a >= b.
        #[pyo3(signature = (coeffs, basis = "power", interval = None))]
        fn polyval(
            &self,
            py: Python<'_>,
            coeffs: &Bound<'_, PyAny>,
            basis: &str,
            interval: Option<&Bound<'_, PyAny>>,
        ) -> PyResult<PyCiphertext> {
            polyval_on(py, &self.eval, &self.ct, coeffs, basis, interval)
        }

        /// chebyshev(f, interval, degree) -> Ciphertext
        ///
        /// ``f`` applied to every slot through its Chebyshev interpolant of ``degree`` on
        /// ``interval = (a, b)``: ``f`` is any Python callable float -> float, called at the degree + 1
        /// Chebyshev nodes (in Rust, with the GIL held; the encrypted evaluation then releases it).
        /// Exceptions raised by ``f`` propagate unchanged. Levels as ``polyval`` in the Chebyshev basis.
        /// To see the approximation error first, use ``rnsfhe.ckks.chebyshev_approx(f, interval, degree)``
        /// and evaluate the polynomial it returns with ``polyval``. Raises ValueError for a >= b, a degree of
        /// 0 or above 4095, a non-finite value of ``f`` at a node; NotEnoughLevelsError (a ValueError).
        fn chebyshev(
            &self,
            py: Python<'_>,
            f: &Bound<'_, PyAny>,
            interval: &Bound<'_, PyAny>,
            degree: Int,
        ) -> PyResult<PyCiphertext> {
            chebyshev_on(py, &self.eval, &self.ct, f, interval, degree)
        }

        /// sigmoid(method="chebyshev", interval=None, degree=None) -> Ciphertext
        ///
        /// The logistic function 1 / (1 + exp(-x)) of every slot, by a polynomial
        /// (``Polynomial.sigmoid(method, interval, degree)`` is the same polynomial):
        ///
        /// * "chebyshev" (default): interpolation on ``interval`` (default (-8, 8)) of ``degree`` (default
        ///   31: max error 3e-6, 18 bits, on [-8, 8]; 6 levels, one of them for mapping [-8, 8] onto
        ///   [-1, 1]; degree 15: 1.4e-3, 5 levels; degree 63: 1.4e-11, 7 levels). Slots outside the
        ///   interval get meaningless values.
        /// * "taylor": the Taylor polynomial at 0 of ``degree`` (default 7, RNS-CKKS Table 2: 3 levels);
        ///   accurate near 0 only (2e-5 on [-1, 1], 8e-3 on [-2, 2], diverges beyond |x| = pi).
        /// * "least_squares": the least-squares fit on [-8, 8] of encrypted logistic regression (Kim et al.
        ///   2018) of degree 3 (default, 2 levels, max error 0.11), 5 (0.047) or 7 (0.033; 3 levels). In
        ///   the power basis: on [-8, 8] at scale 2^40, degrees 5 and 7 keep only about 17 and 10 bits
        ///   against their polynomial (the large powers of x amplify the noise), below their own error.
        ///
        /// ``interval`` applies to "chebyshev" only. Raises NotEnoughLevelsError (a ValueError) naming the
        /// levels needed and available, ValueError for an unknown method, a >= b or a bad degree.
        #[pyo3(signature = (method = "chebyshev", interval = None, degree = None))]
        fn sigmoid(
            &self,
            py: Python<'_>,
            method: &str,
            interval: Option<&Bound<'_, PyAny>>,
            degree: Option<Int>,
        ) -> PyResult<PyCiphertext> {
            approximation_on(py, &self.eval, &self.ct, method, interval, degree, Evaluator::sigmoid)
        }

        /// exp(method="chebyshev", interval=None, degree=None) -> Ciphertext
        ///
        /// e^x of every slot, by a polynomial (``Polynomial.exp(method, interval, degree)`` is the same):
        ///
        /// * "chebyshev" (default): interpolation on ``interval`` (default (-1, 1)) of ``degree`` (default 7:
        ///   max error 2e-7, 22 bits, on [-1, 1], 3 levels; degree 15: 1e-14, 4 levels). Wider intervals
        ///   need higher degrees (on [-4, 4]: 3e-2 at degree 7, 1e-8 at 15) and, unless their width is 2,
        ///   one more level. Slots outside the interval get meaningless values.
        /// * "taylor": the Taylor polynomial at 0 of ``degree`` (default 7, RNS-CKKS Table 2: 3 levels;
        ///   3e-5 on [-1, 1]).
        ///
        /// Raises NotEnoughLevelsError (a ValueError), ValueError for an unknown method or bad arguments.
        #[pyo3(signature = (method = "chebyshev", interval = None, degree = None))]
        fn exp(
            &self,
            py: Python<'_>,
            method: &str,
            interval: Option<&Bound<'_, PyAny>>,
            degree: Option<Int>,
        ) -> PyResult<PyCiphertext> {
            approximation_on(py, &self.eval, &self.ct, method, interval, degree, Evaluator::exp)
        }

        /// inverse(iterations=None, interval=None, degree=None) -> Ciphertext
        ///
        /// 1/x of every slot, by one of two methods:
        ///
        /// * without ``interval``: CKKS Algorithm 2 (Cheon-Kim-Kim-Song 2017, RNS-CKKS Table 2) with
        ///   ``iterations`` r (default 3), for slots in (0, 2): relative error |1 - x|^(2^(r+1)) (1.5e-5 on
        ///   [0.5, 1.5] with r = 3; scale the input towards 1 first), r + 1 levels;
        /// * with ``interval = (a, b)`` (not containing 0): the Chebyshev interpolant of ``degree``
        ///   (default 31; the error grows with b / a: 2e-8 on [0.1, 1], 3e-3 on [1, 100]), levels as
        ///   ``polyval``.
        ///
        /// ``Polynomial.inverse(iterations, interval, degree)`` is the same function as a polynomial.
        /// Raises ValueError for iterations with an interval, degree without one, an interval containing 0;
        /// NotEnoughLevelsError (a ValueError) naming the levels needed and available.
        #[pyo3(signature = (iterations = None, interval = None, degree = None))]
        fn inverse(
            &self,
            py: Python<'_>,
            iterations: Option<Int>,
            interval: Option<&Bound<'_, PyAny>>,
            degree: Option<Int>,
        ) -> PyResult<PyCiphertext> {
            inverse_on(py, &self.eval, &self.ct, iterations, interval, degree)
        }

        /// sqrt(interval, iterations=2) -> Ciphertext
        ///
        /// The square root of every slot, for slots in ``interval = (a, b)`` with 0 < a < b: ``x * x^(-1/2)``
        /// with ``inv_sqrt``; 3 + 2 * iterations levels (7 by default). See ``inv_sqrt`` for the accuracy.
        /// Raises ValueError for a bad interval, NotEnoughLevelsError (a ValueError).
        #[pyo3(signature = (interval, iterations = Int::new(2)))]
        #[pyo3(text_signature = "($self, interval, iterations=2)")]
        fn sqrt(
            &self,
            py: Python<'_>,
            interval: &Bound<'_, PyAny>,
            iterations: Int,
        ) -> PyResult<PyCiphertext> {
            sqrt_on(py, &self.eval, &self.ct, interval, iterations, false)
        }

        /// inv_sqrt(interval, iterations=2) -> Ciphertext
        ///
        /// 1 / sqrt(x) of every slot, for slots in ``interval = (a, b)`` with 0 < a < b: a degree-3 Chebyshev
        /// start on the interval, then ``iterations`` Newton steps y <- y (3 - x y^2) / 2, each squaring the
        /// relative error (times 3/2). 2 + 2 * iterations levels (6 by default). Relative error with the
        /// default 2 iterations: 5e-5 on [0.1, 1], 1e-4 on [0.5, 2]... narrow intervals converge fast
        /// (3 iterations: 3e-9 on [0.1, 1]), wide ones slowly (0.1 on [1, 100]). Raises ValueError for a bad
        /// interval, NotEnoughLevelsError (a ValueError).
        #[pyo3(signature = (interval, iterations = Int::new(2)))]
        #[pyo3(text_signature = "($self, interval, iterations=2)")]
        fn inv_sqrt(
            &self,
            py: Python<'_>,
            interval: &Bound<'_, PyAny>,
            iterations: Int,
        ) -> PyResult<PyCiphertext> {
            sqrt_on(py, &self.eval, &self.ct, interval, iterations, true)
        }

        /// lut(f) -> Ciphertext
        ///
        /// ``f`` applied to every slot by the PEGASUS pipeline (Lu et al., IEEE S&P 2021, Fig. 6):
        /// slots to coefficients, extraction of LWE ciphertexts, a look-up table of ``f`` on each by blind
        /// rotation, and repacking into one CKKS ciphertext, ``f(x)`` at a lower level (an ordinary
        /// ciphertext: arithmetic goes on). ``f`` is any Python callable float -> float (``np.tanh``
        /// included), sampled on the session's input range [-B, B] with the GIL held (its exceptions
        /// propagate), or a table of ``session.table(f)`` (built once, reused). Needs a ciphertext of an
        /// ``rnsfhe.pegasus.Session`` (attached to its evaluator) with the session's slot count, every value
        /// in [-B, B] (``input_bound``; outside it the table wraps around), its level at least
        /// ``session.input_level`` and the default scale. The pipeline runs with the GIL released. See
        /// ``rnsfhe.pegasus``.
        fn lut(&self, py: Python<'_>, f: &Bound<'_, PyAny>) -> PyResult<PyCiphertext> {
            let out = self.pegasus("lut")?.lut(py, &self.ct, f)?;
            Ok(self.sibling(out))
        }

        /// to_lwe() -> list[rnsfhe.lwe.LweCiphertext]
        ///
        /// The first half of ``lut`` (PEGASUS Fig. 6 steps 1-4): every slot as an LWE ciphertext of
        /// dimension ``session.lwe_dimension`` modulo ``session.lwe_modulus``, in slot order, ready for
        /// ``session.lut_lwe``. Needs the same ciphertext as ``lut``; the GIL is released.
        fn to_lwe(&self, py: Python<'_>) -> PyResult<Vec<crate::lwe::PyLweCiphertext>> {
            self.pegasus("to_lwe")?.to_lwe(py, &self.ct)
        }

        /// dot(other) -> Ciphertext
        ///
        /// The inner product ``sum_j x_j y_j`` of the slots with those of ``other`` (a Ciphertext, or a 1-D
        /// array of plaintext values, shorter ones padded with zeros), in every slot: one product, rescaled
        /// (one level), then ``sum()`` (needs keygen(sum_slots=True)). Raises TypeError for other operands.
        fn dot(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<PyCiphertext> {
            dot_on(py, &self.eval, &self.ct, other)
        }

        /// Level in limbs: the ciphertext lives modulo q_0 ... q_{level-1}; level - 1 more rescalings remain.
        #[getter]
        fn level(&self) -> usize {
            self.ct.level()
        }

        /// The exact scale (a float, about 2^log_scale after each rescaling).
        #[getter]
        fn scale(&self) -> f64 {
            self.ct.scale()
        }

        /// log2 of the scale.
        #[getter]
        fn log2_scale(&self) -> f64 {
            self.ct.log2_scale()
        }

        /// Number of slots (a power of two up to N/2).
        #[getter]
        fn slots(&self) -> usize {
            self.ct.slots()
        }

        fn __repr__(&self) -> String {
            format!(
                "Ciphertext(level={}, log2_scale={:.3}, slots={})",
                self.ct.level(),
                self.ct.log2_scale(),
                self.ct.slots()
            )
        }
    }
}
