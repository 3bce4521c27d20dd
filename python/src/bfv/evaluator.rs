//! `Evaluator` and the Rust evaluator it shares with the ciphertexts it made (`Eval`, which owns the
//! relinearization and Galois keys): every operation runs there with the GIL released.

use super::*;

/// A Rust evaluator with its keys and the encoders; shared by `Arc` between an `Evaluator` and the
/// ciphertexts it produced.
pub(super) struct Eval {
    pub(super) ev: Evaluator,
    pub(super) enc: Encoders,
    pub(super) relin: Option<Arc<RelinKey>>,
    pub(super) galois: Option<Galois>,
}

/// Galois keys with the rotation steps and column swap they were generated for.
#[derive(Clone)]
pub(super) struct Galois {
    pub(super) keys: Arc<GaloisKeys>,
    pub(super) rotations: Vec<i64>,
    pub(super) column_swap: bool,
}

impl Eval {
    pub(super) fn new(
        ctx: &Arc<BfvContext>,
        relin: Option<Arc<RelinKey>>,
        galois: Option<Galois>,
    ) -> Self {
        Self {
            ev: Evaluator::new(ctx),
            enc: Encoders::new(ctx),
            relin,
            galois,
        }
    }

    pub(super) fn galois_keys(&self, operation: &str) -> PyResult<&GaloisKeys> {
        self.galois
            .as_ref()
            .map(|g| g.keys.as_ref())
            .ok_or_else(|| missing_galois_keys(operation))
    }

    /// Both rows of the `2 x N/2` slot matrix rotated left by `step`.
    pub(super) fn rotate_rows(&self, a: &Ciphertext, step: i64) -> PyResult<Ciphertext> {
        let gk = self.galois_keys("row rotation")?;
        self.ev.rotate_rows(a, step, gk).map_err(bfv_error)
    }

    /// The two rows of the slot matrix swapped.
    pub(super) fn rotate_columns(&self, a: &Ciphertext) -> PyResult<Ciphertext> {
        let gk = self.galois_keys("column swap")?;
        self.ev.rotate_columns(a, gk).map_err(bfv_error)
    }

    pub(super) fn ctx(&self) -> &Arc<BfvContext> {
        self.ev.context()
    }

    /// `a * b` relinearized (`relinearize`) or with three parts.
    pub(super) fn multiply(
        &self,
        a: &Ciphertext,
        b: &Ciphertext,
        relinearize: bool,
    ) -> PyResult<Ciphertext> {
        if !relinearize {
            return self.ev.multiply_no_relin(a, b).map_err(bfv_error);
        }
        let rk = self.relin.as_deref().ok_or_else(missing_relin_key)?;
        self.ev.multiply(a, b, rk).map_err(bfv_error)
    }

    pub(super) fn relinearize(&self, a: &Ciphertext) -> PyResult<Ciphertext> {
        let rk = self.relin.as_deref().ok_or_else(missing_relin_key)?;
        self.ev.relinearize(a, rk).map_err(bfv_error)
    }

    pub(super) fn apply(
        &self,
        a: &Ciphertext,
        encoding: Encoding,
        op: BinOp,
        b: &Operand<'_>,
    ) -> PyResult<Ciphertext> {
        let ev = &self.ev;
        let plain = |pt: &Plaintext| -> Result<Ciphertext, BfvError> {
            match op {
                BinOp::Add => ev.add_plain(a, pt),
                BinOp::Sub => ev.sub_plain(a, pt),
                BinOp::RSub => ev.add_plain(&ev.negate(a)?, pt),
                BinOp::Mul => ev.multiply_plain(a, pt),
            }
        };
        match b {
            Operand::Ct(b) => match op {
                BinOp::Add => ev.add(a, &b.ct).map_err(bfv_error),
                BinOp::Sub => ev.sub(a, &b.ct).map_err(bfv_error),
                BinOp::RSub => ev.sub(&b.ct, a).map_err(bfv_error),
                BinOp::Mul => self.multiply(a, &b.ct, true),
            },
            Operand::Int(k) => match op {
                BinOp::Mul => ev.multiply_scalar(a, *k).map_err(bfv_error),
                _ => self
                    .enc
                    .constant(*k)
                    .and_then(|pt| plain(&pt))
                    .map_err(bfv_error),
            },
            Operand::Pt(p) => plain(&p.pt).map_err(bfv_error),
            Operand::Vector(v) => self
                .enc
                .encode(v, encoding)
                .and_then(|pt| plain(&pt))
                .map_err(bfv_error),
        }
    }
}

/// Checks that a ciphertext or plaintext operand uses the encoding `a` of the ciphertext.
pub(super) fn check_encodings(a: Encoding, b: &Operand<'_>) -> PyResult<()> {
    let (b, what, advice) = match b {
        Operand::Ct(b) => (b.encoding, "one", "encrypt both with the same encoding"),
        Operand::Pt(p) => (
            p.encoding,
            "plaintext",
            "encode the plaintext with the ciphertext's encoding",
        ),
        _ => return Ok(()),
    };
    if b != a {
        return Err(PyValueError::new_err(format!(
            "cannot combine a {:?}-encoded ciphertext with a {:?}-encoded {what}: their values are laid \
             out differently in the plaintext polynomial; {advice}",
            a.name(),
            b.name()
        )));
    }
    Ok(())
}

/// Runs `op` on `a` and `other` with the GIL released; `None` for an unsupported operand.
pub(super) fn binary(
    py: Python<'_>,
    eval: &Arc<Eval>,
    a: &PyCiphertext,
    other: &Bound<'_, PyAny>,
    op: BinOp,
) -> PyResult<Option<PyCiphertext>> {
    let Some(b) = classify(other, eval.ctx())? else {
        return Ok(None);
    };
    check_encodings(a.encoding, &b)?;
    // A sum or difference of two ciphertexts is one pass over memory: on the calling thread (a hand-off
    // to the pool would cost a visible part of it); everything else on the pool.
    let one_pass = !matches!(op, BinOp::Mul) && matches!(b, Operand::Ct(_));
    let ct = release_as(py, one_pass, || eval.apply(&a.ct, a.encoding, op, &b))?;
    Ok(Some(PyCiphertext::new(ct, eval, a.encoding)))
}

/// Runs a unary operation with the GIL released; the result keeps `a`'s encoding.
pub(super) fn unary(
    py: Python<'_>,
    eval: &Arc<Eval>,
    a: &PyCiphertext,
    f: impl FnOnce(&Eval, &Ciphertext) -> PyResult<Ciphertext> + Send,
) -> PyResult<PyCiphertext> {
    let ct = release(py, || f(eval, &a.ct))?;
    Ok(PyCiphertext::new(ct, eval, a.encoding))
}
/// A row rotation by `step` (`Some`) or the column swap (`None`) with the GIL released.
pub(super) fn rotate(
    py: Python<'_>,
    eval: &Arc<Eval>,
    a: &PyCiphertext,
    step: Option<i64>,
) -> PyResult<PyCiphertext> {
    let operation = if step.is_some() {
        "row rotation"
    } else {
        "column swap"
    };
    if a.encoding != Encoding::Batch {
        return Err(rotation_needs_batch(operation));
    }
    unary(py, eval, a, |e, c| match step {
        Some(k) => e.rotate_rows(c, k),
        None => e.rotate_columns(c),
    })
}
/// Homomorphic operations. Made by ``Context.evaluator(keys)`` (or ``relin_key=...``).
///
/// Every method returns a new Ciphertext attached to this evaluator, so that its Python operators
/// (``+ - *``, unary ``-``) use this evaluator's keys. Right operands may be Ciphertexts (of the same
/// context and encoding), 1-D integer arrays (encoded like the ciphertext; shorter arrays are padded with
/// zeros) or integers (the constant polynomial: the integer in every slot with batch encoding, the
/// constant coefficient with coefficient encoding). Every value must satisfy -t < v < t. Products of
/// ciphertexts are relinearized. Batch-encoded slots form a 2 x N/2 matrix: ``rotate_rows`` rotates both
/// rows, ``rotate_columns`` swaps them (Galois keys from ``keygen(rotations=[...], column_swap=True)``).
/// The GIL is released during every operation; evaluators can be shared by threads.
#[pyclass(name = "Evaluator", module = "rnsfhe.bfv", frozen)]
pub(super) struct PyEvaluator {
    pub(super) eval: Arc<Eval>,
}

impl PyEvaluator {
    pub(super) fn check(&self, a: &PyCiphertext) -> PyResult<()> {
        check_same_context(self.eval.ctx(), a.eval.ctx(), "ciphertext")
    }
}

evaluator_methods! {
    operands = "a Ciphertext, a Plaintext, an integer array or an integer";
    expected = "a Ciphertext, a 1-D array of integers or an integer";
    impl PyEvaluator {
        /// attach(ct) -> Ciphertext: the same ciphertext, attached to this evaluator (its operators then use
        /// this evaluator's keys).
        fn attach(&self, ct: &PyCiphertext) -> PyResult<PyCiphertext> {
            self.check(ct)?;
            Ok(PyCiphertext {
                seeded: ct.seeded.clone(),
                ..PyCiphertext::new(ct.ct.clone(), &self.eval, ct.encoding)
            })
        }

        /// multiply(a, b, relinearize=True) -> Ciphertext: a * b (b a Ciphertext, an integer array or an
        /// integer). A product of two ciphertexts (HPS Section 4.5) is relinearized unless ``relinearize`` is
        /// False; it then has three parts (``relinearize(ct)`` finishes it; decryption accepts it).
        #[pyo3(signature = (a, b, relinearize = true))]
        fn multiply(
            &self,
            py: Python<'_>,
            a: &PyCiphertext,
            b: &Bound<'_, PyAny>,
            relinearize: bool,
        ) -> PyResult<PyCiphertext> {
            if !relinearize {
                if let Ok(b) = b.downcast::<PyCiphertext>() {
                    let b = b.get();
                    check_encodings(a.encoding, &Operand::Ct(b))?;
                    return unary(py, &self.eval, a, |e, c| e.multiply(c, &b.ct, false));
                }
            }
            self.binary_strict(py, a, b, BinOp::Mul)
        }

        /// square(a) -> Ciphertext: a * a, relinearized.
        fn square(&self, py: Python<'_>, a: &PyCiphertext) -> PyResult<PyCiphertext> {
            unary(py, &self.eval, a, |e, c| e.multiply(c, c, true))
        }

        /// negate(a) -> Ciphertext: -a.
        fn negate(&self, py: Python<'_>, a: &PyCiphertext) -> PyResult<PyCiphertext> {
            unary(py, &self.eval, a, |e, c| e.ev.negate(c).map_err(bfv_error))
        }

        /// relinearize(a) -> Ciphertext: the 2-part form of a 3-part product (CRT relinearization, HPS
        /// Sections 3.3 and 4.5). Raises ValueError for a 2-part ciphertext.
        fn relinearize(&self, py: Python<'_>, a: &PyCiphertext) -> PyResult<PyCiphertext> {
            unary(py, &self.eval, a, |e, c| e.relinearize(c))
        }

        /// rotate_rows(a, step) -> Ciphertext: both rows of the 2 x N/2 slot matrix rotated left by
        /// ``step`` (right for step < 0), like ``numpy.roll(x.reshape(2, -1), -step, axis=1).ravel()``. Needs
        /// a batch-encoded ciphertext and the key of ``step`` (ValueError naming the step otherwise).
        fn rotate_rows(&self, py: Python<'_>, a: &PyCiphertext, step: Int) -> PyResult<PyCiphertext> {
            rotate(py, &self.eval, a, Some(step.get("step")?))
        }

        /// rotate_columns(a) -> Ciphertext: the two rows of the slot matrix swapped, like
        /// ``x.reshape(2, -1)[::-1].ravel()``. Needs a batch-encoded ciphertext and
        /// ``keygen(column_swap=True)``.
        fn rotate_columns(&self, py: Python<'_>, a: &PyCiphertext) -> PyResult<PyCiphertext> {
            rotate(py, &self.eval, a, None)
        }

        /// Whether the evaluator has a relinearization key (needed by ciphertext products).
        #[getter]
        fn has_relin_key(&self) -> bool {
            self.eval.relin.is_some()
        }

        /// The row rotation steps with keys ([] without Galois keys).
        #[getter]
        fn rotations(&self) -> Vec<i64> {
            self.eval
                .galois
                .as_ref()
                .map(|g| g.rotations.clone())
                .unwrap_or_default()
        }

        /// Whether the evaluator can swap the rows (``rotate_columns``).
        #[getter]
        fn column_swap(&self) -> bool {
            self.eval.galois.as_ref().is_some_and(|g| g.column_swap)
        }

        fn __repr__(&self) -> String {
            format!(
                "Evaluator(N={}, t={}, relin_key={}, rotations={:?}, column_swap={})",
                self.eval.ctx().n(),
                self.eval.ctx().plaintext_modulus(),
                py_bool(self.has_relin_key()),
                self.rotations(),
                py_bool(self.column_swap())
            )
        }
    }
}
