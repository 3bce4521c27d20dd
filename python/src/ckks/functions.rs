//! Polynomials and functions on ciphertexts (`polyval`, `chebyshev`, `sigmoid`, `exp`, `inverse`, `sqrt`,
//! `dot`), shared by the methods of `Evaluator`, `Ciphertext` and `Context`: the arguments read here, the
//! policy (defaults, level checks) in `rnsfhe::ckks::approximation`.

use super::*;

/// Evaluates `p` on `ct` with the GIL released, after checking the levels.
pub(super) fn evaluate(
    py: Python<'_>,
    eval: &Arc<Eval>,
    ct: &Ciphertext,
    p: &Polynomial,
    what: &'static str,
) -> PyResult<PyCiphertext> {
    unary(py, eval, ct, |e, c| e.evaluate_polynomial_for(c, p, what))
}

/// `ct.polyval(coeffs, basis, interval)` with `eval`.
pub(super) fn polyval_on(
    py: Python<'_>,
    eval: &Arc<Eval>,
    ct: &Ciphertext,
    coeffs: &Bound<'_, PyAny>,
    basis: &str,
    interval: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyCiphertext> {
    eval.check(ct)?;
    let p = read_polynomial(coeffs, basis, read_interval(interval)?)?;
    evaluate(py, eval, ct, &p, "polyval")
}

/// `ct.chebyshev(f, interval, degree)` with `eval`: the interpolation calls `f` with the GIL held, the
/// evaluation runs without it.
pub(super) fn chebyshev_on(
    py: Python<'_>,
    eval: &Arc<Eval>,
    ct: &Ciphertext,
    f: &Bound<'_, PyAny>,
    interval: &Bound<'_, PyAny>,
    degree: Int,
) -> PyResult<PyCiphertext> {
    eval.check(ct)?;
    let (a, b) = read_interval(Some(interval))?
        .ok_or_else(|| PyTypeError::new_err("interval must be a pair (a, b), got None"))?;
    let degree = read_count(degree, "degree")?;
    let p = interpolate_callable(f, a, b, degree)?;
    evaluate(py, eval, ct, &p, "chebyshev")
}

/// `ct.sigmoid(...)` or `ct.exp(...)` with `eval`: the method `M` named `method` by `f`
/// ([`Evaluator::sigmoid`], [`Evaluator::exp`]) with the `interval` and `degree` given (None: defaults).
#[allow(clippy::too_many_arguments)]
pub(super) fn approximation_on<M: std::str::FromStr<Err = ckks::Error> + Send>(
    py: Python<'_>,
    eval: &Arc<Eval>,
    ct: &Ciphertext,
    method: &str,
    interval: Option<&Bound<'_, PyAny>>,
    degree: Option<Int>,
    f: impl FnOnce(
            &Evaluator,
            &Ciphertext,
            M,
            Option<(f64, f64)>,
            Option<usize>,
        ) -> ckks::Result<Ciphertext>
        + Send,
) -> PyResult<PyCiphertext> {
    let method: M = method.parse().map_err(ckks_error)?;
    let (interval, degree) = approximation_args(interval, degree)?;
    unary(py, eval, ct, |e, c| f(e, c, method, interval, degree))
}

/// `ct.inverse(iterations, interval, degree)` with `eval`.
pub(super) fn inverse_on(
    py: Python<'_>,
    eval: &Arc<Eval>,
    ct: &Ciphertext,
    iterations: Option<Int>,
    interval: Option<&Bound<'_, PyAny>>,
    degree: Option<Int>,
) -> PyResult<PyCiphertext> {
    let iterations = read_optional_count(iterations, "iterations")?;
    let (interval, degree) = approximation_args(interval, degree)?;
    unary(py, eval, ct, |e, c| {
        e.inverse_approx(c, iterations, interval, degree)
    })
}

/// `ct.sqrt(interval, iterations)` (or `inv_sqrt` if `inverse`) with `eval`.
pub(super) fn sqrt_on(
    py: Python<'_>,
    eval: &Arc<Eval>,
    ct: &Ciphertext,
    interval: &Bound<'_, PyAny>,
    iterations: Int,
    inverse: bool,
) -> PyResult<PyCiphertext> {
    let (a, b) = read_interval(Some(interval))?
        .ok_or_else(|| PyTypeError::new_err("interval must be a pair (a, b), got None"))?;
    let iterations = read_count(iterations, "iterations")?;
    unary(py, eval, ct, |e, c| {
        if inverse {
            e.inverse_sqrt(c, a, b, iterations)
        } else {
            e.sqrt(c, a, b, iterations)
        }
    })
}

/// `a.dot(other)` with `eval`: the inner product with a ciphertext or a 1-D array, in every slot.
pub(super) fn dot_on(
    py: Python<'_>,
    eval: &Arc<Eval>,
    a: &Ciphertext,
    other: &Bound<'_, PyAny>,
) -> PyResult<PyCiphertext> {
    eval.check(a)?;
    let b = match classify(other)? {
        Some(b @ (Arg::Ct(_) | Arg::Pt(_) | Arg::Vector(_))) => b,
        _ => {
            return Err(PyTypeError::new_err(format!(
                "dot: expected a Ciphertext or a 1-D array of slot values, got {}",
                other.get_type().name()?
            )))
        }
    };
    if let Arg::Ct(b) = &b {
        eval.check(&b.ct)?;
    }
    let operand = b.operand();
    unary(py, eval, a, |e, c| e.dot(c, operand))
}
