//! `Evaluator` and the Rust evaluator it shares with the ciphertexts it made (`Eval`): every operation
//! runs there with the GIL released.

use super::*;

/// A Rust evaluator (with its automatic rescaling) and the keys it has as Python shows them; shared by
/// `Arc` between an `Evaluator` and the ciphertexts it produced.
pub(super) struct Eval {
    pub(super) ev: Evaluator,
    pub(super) rotations: Vec<i64>,
    pub(super) conjugate: bool,
    /// The PEGASUS pipeline of a `rnsfhe.pegasus.Session` (`Ciphertext.lut`, `Ciphertext.to_lwe`), if
    /// this evaluator belongs to one.
    pub(super) pegasus: Option<Arc<crate::pegasus::Pegasus>>,
}

impl Eval {
    pub(super) fn keyless(ctx: &Arc<CkksContext>, auto_rescale: bool) -> Self {
        Self {
            ev: Evaluator::new(ctx).with_auto_rescale(auto_rescale),
            rotations: Vec::new(),
            conjugate: false,
            pegasus: None,
        }
    }

    pub(super) fn ctx(&self) -> &Arc<CkksContext> {
        self.ev.context()
    }

    /// ValueError unless `ct` belongs to this evaluator's context.
    pub(super) fn check(&self, ct: &Ciphertext) -> PyResult<()> {
        check_context(self.ctx(), ct.fingerprint(), "the ciphertext")
    }
}

/// The Rust operation of a Python operator.
pub(super) fn bin_op(op: BinOp) -> BinaryOp {
    match op {
        BinOp::Add => BinaryOp::Add,
        BinOp::Sub => BinaryOp::Sub,
        BinOp::RSub => BinaryOp::ReverseSub,
        BinOp::Mul => BinaryOp::Mul,
    }
}

/// Runs `op` on `a` and `other` with the GIL released; `None` for an unsupported operand.
pub(super) fn binary(
    py: Python<'_>,
    eval: &Arc<Eval>,
    a: &PyCiphertext,
    other: &Bound<'_, PyAny>,
    op: BinOp,
) -> PyResult<Option<PyCiphertext>> {
    let Some(b) = classify(other)? else {
        return Ok(None);
    };
    eval.check(&a.ct)?;
    if let Arg::Ct(b) = &b {
        eval.check(&b.ct)?;
    }
    let operand = b.operand();
    let ct = release_as(py, is_one_pass(op, &operand), || {
        eval.ev.apply(&a.ct, bin_op(op), operand)
    })
    .map_err(ckks_error)?;
    Ok(Some(PyCiphertext::new(ct, eval)))
}

/// Whether `op` with `operand` is one pass over the ciphertext (a sum or difference with a ciphertext,
/// an encoded plaintext or a number), run on the calling thread by [`release_inline`]; products, and
/// sums with slot values (which are encoded first), go to the pool ([`release`]).
pub(super) fn is_one_pass(op: BinOp, operand: &Operand<'_>) -> bool {
    !matches!(op, BinOp::Mul) && !matches!(operand, Operand::Values(_))
}

/// Runs a unary operation with the GIL released ([`release_as`]: `one_pass` for one pass over memory).
fn unary_as(
    py: Python<'_>,
    eval: &Arc<Eval>,
    a: &Ciphertext,
    one_pass: bool,
    f: impl FnOnce(&Evaluator, &Ciphertext) -> ckks::Result<Ciphertext> + Send,
) -> PyResult<PyCiphertext> {
    eval.check(a)?;
    let ct = release_as(py, one_pass, || f(&eval.ev, a)).map_err(ckks_error)?;
    Ok(PyCiphertext::new(ct, eval))
}

/// Runs a unary operation with the GIL released.
pub(super) fn unary(
    py: Python<'_>,
    eval: &Arc<Eval>,
    a: &Ciphertext,
    f: impl FnOnce(&Evaluator, &Ciphertext) -> ckks::Result<Ciphertext> + Send,
) -> PyResult<PyCiphertext> {
    unary_as(py, eval, a, false, f)
}

/// [`unary`] for negation and dropping limbs, one pass over memory each ([`release_inline`]).
pub(super) fn unary_inline(
    py: Python<'_>,
    eval: &Arc<Eval>,
    a: &Ciphertext,
    f: impl FnOnce(&Evaluator, &Ciphertext) -> ckks::Result<Ciphertext> + Send,
) -> PyResult<PyCiphertext> {
    unary_as(py, eval, a, true, f)
}

/// `a += other` (`op` Add) or `a -= other` (Sub) in place, `a` the Python ciphertext `slf`: with a
/// ciphertext or a plaintext by the one-pass [`Evaluator::add_assign`] family on the calling thread;
/// with a number or slot values computed as `a + other` (encoding first) and stored in `a`. The seeded
/// form of a fresh encryption is dropped (the bytes change). TypeError for another operand;
/// RuntimeError if `a` is in use by another thread.
pub(super) fn in_place(
    slf: &Bound<'_, PyCiphertext>,
    other: &Bound<'_, PyAny>,
    op: BinOp,
) -> PyResult<()> {
    let py = slf.py();
    if other.is(slf) {
        // `a += a`: the operand is the target, which cannot be read while it is written.
        let sum = {
            let a = slf.try_borrow()?;
            let (eval, ct) = (&a.eval, &a.ct);
            eval.check(ct)?;
            release_inline(py, || {
                eval.ev.apply(ct, bin_op(op), Operand::Ciphertext(ct))
            })
            .map_err(ckks_error)?
        };
        let mut a = slf.try_borrow_mut()?;
        a.ct = sum;
        a.seeded = None;
        return Ok(());
    }
    let Some(b) = classify(other)? else {
        return Err(PyTypeError::new_err(format!(
            "unsupported operand type(s) for {}=: 'Ciphertext' and '{}'",
            if matches!(op, BinOp::Sub) { "-" } else { "+" },
            other.get_type().name()?
        )));
    };
    let mut a = slf.try_borrow_mut()?;
    let eval = Arc::clone(&a.eval);
    eval.check(&a.ct)?;
    if let Arg::Ct(b) = &b {
        eval.check(&b.ct)?;
    }
    let operand = b.operand();
    let (ev, target) = (&eval.ev, &mut a.ct);
    let sub = matches!(op, BinOp::Sub);
    match operand {
        Operand::Ciphertext(b) => release_inline(py, || {
            if sub {
                ev.sub_assign(target, b)
            } else {
                ev.add_assign(target, b)
            }
        }),
        Operand::Plaintext(pt) => release_inline(py, || {
            if sub {
                ev.sub_plain_assign(target, pt)
            } else {
                ev.add_plain_assign(target, pt)
            }
        }),
        operand => release_as(py, is_one_pass(op, &operand), || {
            ev.apply(target, bin_op(op), operand)
        })
        .map(|ct| *target = ct),
    }
    .map_err(ckks_error)?;
    a.seeded = None;
    Ok(())
}

/// The Rust ciphertexts of a Python sequence of Ciphertexts; ValueError for one of another context than
/// `eval`'s.
pub(super) fn read_ciphertexts(
    eval: &Eval,
    cts: &[Bound<'_, PyCiphertext>],
) -> PyResult<Vec<Ciphertext>> {
    cts.iter()
        .map(|c| {
            let c = c.try_borrow()?;
            eval.check(&c.ct)?;
            Ok(c.ct.clone())
        })
        .collect()
}
/// Runs an operation of several ciphertexts with the GIL released.
pub(super) fn unary_many(
    py: Python<'_>,
    eval: &Arc<Eval>,
    f: impl FnOnce(&Evaluator) -> ckks::Result<Ciphertext> + Send,
) -> PyResult<PyCiphertext> {
    let ct = release(py, || f(&eval.ev)).map_err(ckks_error)?;
    Ok(PyCiphertext::new(ct, eval))
}
/// Homomorphic operations. Made by ``Context.evaluator(keys, auto_rescale=True, strict=False)``.
///
/// Every method returns a new Ciphertext attached to this evaluator, so that its Python operators
/// (``+ - * /``, unary ``-``) and methods use this evaluator's keys and options. Right operands may be
/// Ciphertexts, Plaintexts (``Context.encode``: encoded once, reused), 1-D arrays (encoded at the
/// ciphertext's level on each use; shorter arrays are padded with zeros) or numbers: ints multiply
/// exactly without using a level, floats and complex numbers use one level (rescaled automatically when
/// ``auto_rescale``). Operands at different levels or scales are aligned
/// unless the evaluator is strict: the result is at the lower level; when the scales differ, the operand
/// at the higher level (the left one at equal levels) is multiplied by a constant and rescaled onto the
/// other's scale, which costs a level at equal levels, and two operands at level 1 with different scales
/// raise ValueError (scale mismatch). The GIL is released during every operation; evaluators can be shared
/// by threads.
#[pyclass(name = "Evaluator", module = "rnsfhe.ckks", frozen)]
pub(super) struct PyEvaluator {
    pub(super) eval: Arc<Eval>,
}

evaluator_methods! {
    operands = "a Ciphertext, a Plaintext, an array or a number";
    expected = "a Ciphertext, a Plaintext, a 1-D array of numbers or a number";
    impl PyEvaluator {
        /// attach(ct) -> Ciphertext: the same ciphertext, attached to this evaluator (its operators then use
        /// this evaluator's keys and options). Raises ValueError if ``ct`` belongs to another context.
        fn attach(&self, ct: &PyCiphertext) -> PyResult<PyCiphertext> {
            self.eval.check(&ct.ct)?;
            Ok(PyCiphertext {
                seeded: ct.seeded.clone(),
                ..PyCiphertext::new(ct.ct.clone(), &self.eval)
            })
        }

        /// multiply(a, b) -> Ciphertext: a * b (b a Ciphertext, an array or a number), relinearized, and
        /// rescaled if auto_rescale (except for int factors, which are exact).
        fn multiply(
            &self,
            py: Python<'_>,
            a: &PyCiphertext,
            b: &Bound<'_, PyAny>,
        ) -> PyResult<PyCiphertext> {
            self.binary_strict(py, a, b, BinOp::Mul)
        }

        /// square(a) -> Ciphertext: a * a (rescaled if auto_rescale).
        fn square(&self, py: Python<'_>, a: &PyCiphertext) -> PyResult<PyCiphertext> {
            unary(py, &self.eval, &a.ct, |e, c| {
                e.multiply_finished(c, c)
            })
        }

        /// negate(a) -> Ciphertext: -a.
        fn negate(&self, py: Python<'_>, a: &PyCiphertext) -> PyResult<PyCiphertext> {
            unary_inline(py, &self.eval, &a.ct, |e, c| e.negate(c))
        }

        /// rescale(a) -> Ciphertext: divides by the last prime of the level (one level less, scale divided by
        /// that prime). Raises ValueError at level 1.
        fn rescale(&self, py: Python<'_>, a: &PyCiphertext) -> PyResult<PyCiphertext> {
            unary(py, &self.eval, &a.ct, |e, c| e.rescale(c))
        }

        /// drop_to_level(a, level) -> Ciphertext: the same message at a lower level (limbs removed).
        fn drop_to_level(
            &self,
            py: Python<'_>,
            a: &PyCiphertext,
            level: Int,
        ) -> PyResult<PyCiphertext> {
            let level = level.get("level")?;
            unary_inline(py, &self.eval, &a.ct, |e, c| e.drop_to_level(c, level))
        }

        /// rotate(a, k) -> Ciphertext: slots rotated left by k (right for k < 0), like numpy.roll(x, -k).
        /// Raises ValueError naming the step if its key was not generated.
        fn rotate(&self, py: Python<'_>, a: &PyCiphertext, k: Int) -> PyResult<PyCiphertext> {
            let k = k.get("k")?;
            unary(py, &self.eval, &a.ct, |e, c| e.rotate(c, k))
        }

        /// rotate_many(a, steps) -> list[Ciphertext]: rotations by each step, sharing one decomposition
        /// (hoisted rotations; faster than separate rotate calls).
        fn rotate_many(
            &self,
            py: Python<'_>,
            a: &PyCiphertext,
            steps: Vec<Int>,
        ) -> PyResult<Vec<PyCiphertext>> {
            let steps: Vec<i64> = Int::get_all(&steps, "steps")?;
            self.eval.check(&a.ct)?;
            let cts = release(py, || self.eval.ev.rotate_hoisted(&a.ct, &steps))
                .map_err(ckks_error)?;
            Ok(cts
                .into_iter()
                .map(|c| PyCiphertext::new(c, &self.eval))
                .collect())
        }

        /// conjugate(a) -> Ciphertext: complex conjugate of every slot (needs keygen(conjugate=True)).
        fn conjugate(&self, py: Python<'_>, a: &PyCiphertext) -> PyResult<PyCiphertext> {
            unary(py, &self.eval, &a.ct, |e, c| e.conjugate(c))
        }

        /// bootstrap(a, bootstrapper, passes=1) -> Ciphertext: CKKS bootstrapping of ``a``, META-BTS for
        /// ``passes`` > 1 (see ``Ciphertext.bootstrap``). The GIL is released.
        #[pyo3(signature = (a, bootstrapper, passes = Int::new(1)))]
        #[pyo3(text_signature = "($self, a, bootstrapper, passes=1)")]
        fn bootstrap(
            &self,
            py: Python<'_>,
            a: &PyCiphertext,
            bootstrapper: &PyBootstrapper,
            passes: Int,
        ) -> PyResult<PyCiphertext> {
            bootstrap_with(py, &self.eval, &a.ct, bootstrapper, passes)
        }

        /// sum(a) -> Ciphertext: the sum of all slots, in every slot (needs keygen(sum_slots=True)).
        fn sum(&self, py: Python<'_>, a: &PyCiphertext) -> PyResult<PyCiphertext> {
            unary(py, &self.eval, &a.ct, |e, c| e.sum_slots(c))
        }

        /// mean(a) -> Ciphertext: the mean of all ``a.slots`` slots (zero padding included), in every slot;
        /// uses one level (needs keygen(sum_slots=True)).
        fn mean(&self, py: Python<'_>, a: &PyCiphertext) -> PyResult<PyCiphertext> {
            unary(py, &self.eval, &a.ct, |e, c| e.mean(c))
        }

        /// var(a) -> Ciphertext: the variance of all ``a.slots`` slots (zero padding included), in every
        /// slot, as ``E[x^2] - E[x]^2`` of real values; uses two levels (needs keygen(sum_slots=True)).
        fn var(&self, py: Python<'_>, a: &PyCiphertext) -> PyResult<PyCiphertext> {
            unary(py, &self.eval, &a.ct, |e, c| e.variance(c))
        }

        /// polyval(ct, coeffs, basis="power", interval=None) -> Ciphertext: see ``Ciphertext.polyval``.
        #[pyo3(signature = (ct, coeffs, basis = "power", interval = None))]
        fn polyval(
            &self,
            py: Python<'_>,
            ct: &PyCiphertext,
            coeffs: &Bound<'_, PyAny>,
            basis: &str,
            interval: Option<&Bound<'_, PyAny>>,
        ) -> PyResult<PyCiphertext> {
            polyval_on(py, &self.eval, &ct.ct, coeffs, basis, interval)
        }

        /// chebyshev(ct, f, interval, degree) -> Ciphertext: see ``Ciphertext.chebyshev``.
        fn chebyshev(
            &self,
            py: Python<'_>,
            ct: &PyCiphertext,
            f: &Bound<'_, PyAny>,
            interval: &Bound<'_, PyAny>,
            degree: Int,
        ) -> PyResult<PyCiphertext> {
            chebyshev_on(py, &self.eval, &ct.ct, f, interval, degree)
        }

        /// sigmoid(ct, method="chebyshev", interval=None, degree=None) -> Ciphertext: see
        /// ``Ciphertext.sigmoid``.
        #[pyo3(signature = (ct, method = "chebyshev", interval = None, degree = None))]
        fn sigmoid(
            &self,
            py: Python<'_>,
            ct: &PyCiphertext,
            method: &str,
            interval: Option<&Bound<'_, PyAny>>,
            degree: Option<Int>,
        ) -> PyResult<PyCiphertext> {
            approximation_on(py, &self.eval, &ct.ct, method, interval, degree, Evaluator::sigmoid)
        }

        /// exp(ct, method="chebyshev", interval=None, degree=None) -> Ciphertext: see ``Ciphertext.exp``.
        #[pyo3(signature = (ct, method = "chebyshev", interval = None, degree = None))]
        fn exp(
            &self,
            py: Python<'_>,
            ct: &PyCiphertext,
            method: &str,
            interval: Option<&Bound<'_, PyAny>>,
            degree: Option<Int>,
        ) -> PyResult<PyCiphertext> {
            approximation_on(py, &self.eval, &ct.ct, method, interval, degree, Evaluator::exp)
        }

        /// inverse(ct, iterations=None, interval=None, degree=None) -> Ciphertext: see
        /// ``Ciphertext.inverse``.
        #[pyo3(signature = (ct, iterations = None, interval = None, degree = None))]
        fn inverse(
            &self,
            py: Python<'_>,
            ct: &PyCiphertext,
            iterations: Option<Int>,
            interval: Option<&Bound<'_, PyAny>>,
            degree: Option<Int>,
        ) -> PyResult<PyCiphertext> {
            inverse_on(py, &self.eval, &ct.ct, iterations, interval, degree)
        }

        /// sqrt(ct, interval, iterations=2) -> Ciphertext: see ``Ciphertext.sqrt``.
        #[pyo3(signature = (ct, interval, iterations = Int::new(2)))]
        #[pyo3(text_signature = "($self, ct, interval, iterations=2)")]
        fn sqrt(
            &self,
            py: Python<'_>,
            ct: &PyCiphertext,
            interval: &Bound<'_, PyAny>,
            iterations: Int,
        ) -> PyResult<PyCiphertext> {
            sqrt_on(py, &self.eval, &ct.ct, interval, iterations, false)
        }

        /// inv_sqrt(ct, interval, iterations=2) -> Ciphertext: see ``Ciphertext.inv_sqrt``.
        #[pyo3(signature = (ct, interval, iterations = Int::new(2)))]
        #[pyo3(text_signature = "($self, ct, interval, iterations=2)")]
        fn inv_sqrt(
            &self,
            py: Python<'_>,
            ct: &PyCiphertext,
            interval: &Bound<'_, PyAny>,
            iterations: Int,
        ) -> PyResult<PyCiphertext> {
            sqrt_on(py, &self.eval, &ct.ct, interval, iterations, true)
        }

        /// dot(a, b) -> Ciphertext: the inner product of ``a`` with a Ciphertext or a 1-D array ``b``, in
        /// every slot; see ``Ciphertext.dot``.
        fn dot(
            &self,
            py: Python<'_>,
            a: &PyCiphertext,
            b: &Bound<'_, PyAny>,
        ) -> PyResult<PyCiphertext> {
            dot_on(py, &self.eval, &a.ct, b)
        }

        /// add_many(cts) -> Ciphertext: the slot-wise sum of a non-empty sequence of Ciphertexts, added in
        /// order with levels and scales aligned as by ``+``. The result is at the lowest level among
        /// ``cts``: inputs at higher levels are brought down to it (limbs dropped; one whose scale differs
        /// is first multiplied by a constant and rescaled onto the other's scale), so the sum uses no level
        /// only when all inputs share one level. Inputs at one level whose scales differ (not by an integer
        /// factor, as after different rescaling histories) cost one more level, and at level 1 they raise
        /// ValueError (a scale mismatch naming both levels and scales: neither operand can be rescaled);
        /// a strict evaluator raises ValueError for any difference of levels or scales. ValueError for an
        /// empty sequence.
        fn add_many(
            &self,
            py: Python<'_>,
            cts: Vec<Bound<'_, PyCiphertext>>,
        ) -> PyResult<PyCiphertext> {
            // Borrowed, not copied: one accumulator updated in place, as `Evaluator::add_many` does.
            let held = cts.iter().map(|c| c.try_borrow()).collect::<Result<Vec<_>, _>>()?;
            let refs: Vec<&Ciphertext> = held.iter().map(|c| &c.ct).collect();
            for c in &refs {
                self.eval.check(c)?;
            }
            unary_many(py, &self.eval, |e| match refs.split_first() {
                None => e.add_many(&[]),
                Some((first, rest)) => {
                    let mut acc = (*first).clone();
                    for c in rest {
                        e.add_assign(&mut acc, c)?;
                    }
                    Ok(acc)
                }
            })
        }

        /// weighted_sum(cts, weights) -> Ciphertext: ``sum_i weights[i] * cts[i]`` slot-wise, one real weight
        /// per ciphertext, with a single rescaling (one level, from the lowest level among ``cts``).
        /// ValueError for an empty sequence, a different number of weights, or non-finite weights.
        fn weighted_sum(
            &self,
            py: Python<'_>,
            cts: Vec<Bound<'_, PyCiphertext>>,
            weights: Vec<f64>,
        ) -> PyResult<PyCiphertext> {
            let cts = read_ciphertexts(&self.eval, &cts)?;
            unary_many(py, &self.eval, |e| e.weighted_sum(&cts, &weights))
        }

        /// Whether products are rescaled automatically.
        #[getter]
        fn auto_rescale(&self) -> bool {
            self.eval.ev.auto_rescale()
        }

        /// How many bootstrappings this evaluator ran by itself (``auto_bootstrap``; 0 without it).
        #[getter]
        fn bootstraps_done(&self) -> usize {
            self.eval.ev.bootstraps_done()
        }

        /// Whether products bootstrap operands at level 1 by themselves (``Context.evaluator(...,
        /// auto_bootstrap=bootstrapper)``).
        #[getter]
        fn auto_bootstrap(&self) -> bool {
            self.eval.ev.auto_bootstrapper().is_some()
        }

        /// Whether level or scale mismatches are errors (instead of being aligned).
        #[getter]
        fn strict(&self) -> bool {
            self.eval.ev.is_strict()
        }

        /// Whether the evaluator has a relinearization key (needed by ciphertext products).
        #[getter]
        fn has_relin_key(&self) -> bool {
            self.eval.ev.has_relin_key()
        }

        /// The rotation steps with keys ([] without Galois keys).
        #[getter]
        fn rotations(&self) -> Vec<i64> {
            self.eval.rotations.clone()
        }

        /// Whether the evaluator can conjugate.
        #[getter]
        fn conjugate_key(&self) -> bool {
            self.eval.ev.galois().is_some() && self.eval.conjugate
        }

        fn __repr__(&self) -> String {
            format!(
                "Evaluator(N={}, relin_key={}, rotations={:?}, conjugate={}, auto_rescale={}, strict={}, auto_bootstrap={})",
                self.eval.ctx().n(),
                py_bool(self.eval.ev.has_relin_key()),
                self.eval.rotations,
                py_bool(self.conjugate_key()),
                py_bool(self.eval.ev.auto_rescale()),
                py_bool(self.strict()),
                py_bool(self.auto_bootstrap())
            )
        }
    }
}

/// _rust_reference(evaluator, op, a, b) -> Ciphertext: for the tests of the Python path only.
///
/// The Rust calls that `rnsfhe bench ckks-op` times, made directly on the Rust objects with the keys of
/// ``evaluator``: "add" ``Evaluator::add(a, b)``, "mult_rs" ``multiply_rescale(a, b)`` (the fused
/// RNS-CKKS Mult, relinearization and RS), "cmult" ``rescale(multiply_plain(a, b))`` (``b`` a
/// Plaintext), "rotate" ``rotate(a, b)`` (``b`` an int). The tests compare its bytes with those of the
/// Python operators on the same inputs, so that a Python path that does more or other work than Rust
/// (a separate relinearization and rescaling, say, which rounds differently) shows.
#[pyfunction]
pub(super) fn _rust_reference(
    py: Python<'_>,
    evaluator: &PyEvaluator,
    op: &str,
    a: &PyCiphertext,
    b: &Bound<'_, PyAny>,
) -> PyResult<PyCiphertext> {
    let eval = &evaluator.eval;
    let ev = &eval.ev;
    eval.check(&a.ct)?;
    let ct = match op {
        "add" | "mult_rs" => {
            let b = b.downcast::<PyCiphertext>()?.try_borrow()?;
            eval.check(&b.ct)?;
            let (x, y) = (&a.ct, &b.ct);
            release(py, || {
                if op == "add" {
                    ev.add(x, y)
                } else {
                    ev.multiply_rescale(x, y)
                }
            })
        }
        "cmult" => {
            let pt = &b.downcast::<PyPlaintext>()?.get().key;
            release(py, || ev.rescale(&ev.multiply_plain(&a.ct, pt)?))
        }
        "rotate" => {
            let k: i64 = b.extract()?;
            release(py, || ev.rotate(&a.ct, k))
        }
        other => {
            return Err(PyValueError::new_err(format!(
                "unknown operation {other:?}: add, mult_rs, cmult or rotate"
            )))
        }
    }
    .map_err(ckks_error)?;
    Ok(PyCiphertext::new(ct, eval))
}
