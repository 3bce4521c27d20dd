//! `rnsfhe._rnsfhe.ckks`: Python bindings of the CKKS scheme (`rnsfhe::ckks`), re-exported by the pure-Python
//! module `rnsfhe.ckks` (which adds the `Session` convenience class).
//!
//! Objects: `Context` (checked parameters), `KeySet` and its keys, `Encryptor`, `Decryptor`, `Evaluator`,
//! `Ciphertext` (with Python operators), `PrecisionStats` and `Polynomial` (the plaintext side of
//! polynomial and function evaluation). Every `Ciphertext` holds a shared reference to the
//! evaluator that made it (`Arc<Eval>`), so `a * b` needs no evaluator argument. Errors of the Rust layers
//! become `ValueError` with the Rust message (a lack of levels its subclass `NotEnoughLevelsError`);
//! keygen, encryption, decryption and every homomorphic operation run with the GIL released. Python
//! functions to interpolate are called with the GIL held, their exceptions kept and raised unchanged. What this module shares with `bfv` (the key classes, and the
//! members every `Context`, `KeySet`, `Evaluator` and `Ciphertext` has) is written by the macros of
//! [`crate::common`].

use std::cell::RefCell;
use std::sync::Arc;

use numpy::{PyArray1, PyArrayDescrMethods, PyArrayMethods, PyUntypedArray, PyUntypedArrayMethods};
use pyo3::exceptions::{PyTypeError, PyValueError, PyZeroDivisionError};
use pyo3::prelude::*;
use pyo3::types::{PyComplex, PyDict, PyFloat, PyInt, PyType};
use rnsfhe::ckks::{
    self, approximation, BinaryOp, ChebyshevSeries, Ciphertext, CkksContext, CkksDecryptor,
    CkksEncryptor, CkksParams, Complex64, Csprng, Evaluator, ExpMethod, GaloisKeys, InverseMethod,
    KeyGenerator, Operand, PartStats, Polynomial, PolynomialBasis, PrecisionStats, Preset,
    PublicKey, RelinKey, RescalingPolicy, SecretDistribution, SecretKey, SecurityLevel,
    SeededCiphertext, Serializable, SigmoidMethod,
};

use crate::common::{
    add_scheme_classes, as_array, ciphertext_methods, ciphertext_wire_class, context_methods,
    evaluator_methods, key_classes, keyset_methods, load_object, mode_name, operator_result,
    parse_mode, preset_name, preset_names, preset_prefix, py_bool, rotations_of_elements,
    value_error_with_hint, warn_user, wire_context, wire_key_class, wire_methods, wire_objects,
    wrong_dimensions, BinOp, ContextCache, Int, Scheme, WireClass, WireObject,
};

const SCHEME: Scheme = Scheme {
    module: "ckks",
    name: "CKKS",
};

/// Contexts loaded from bytes (`Context.from_bytes`, unpickling), by their exact bytes: the keyless
/// evaluator of each (which owns the context), held weakly.
static CONTEXTS: ContextCache<Eval> = ContextCache::new();

wire_context!(CkksContext);

wire_objects!(CkksContext {
    PublicKey => |c| &**c.rlwe(),
    RelinKey => |c| &**c.rlwe(),
    GaloisKeys => |c| &**c.rlwe(),
    Ciphertext => |c| c,
});

/// A CKKS error as a Python `ValueError` with the Rust message, plus a Python hint for missing keys; a
/// lack of levels is a [`NotEnoughLevelsError`] (a `ValueError`) naming the levels needed and available.
pub(crate) fn ckks_error(err: ckks::Error) -> PyErr {
    let hint = match &err {
        ckks::Error::Insecure { .. } => {
            " (Python: pass allow_insecure=True to use them anyway)".to_string()
        }
        ckks::Error::MissingKey { .. } => {
            " (Python: build the evaluator from a KeySet, ctx.evaluator(keys), or use a ckks.Session)"
                .to_string()
        }
        ckks::Error::Core(rnsfhe::core::Error::MissingGaloisKey { step: Some(s), .. }) => format!(
            " (Python: include {s} in keygen(rotations=[...]); keygen(sum_slots=True) covers sum())"
        ),
        ckks::Error::Core(rnsfhe::core::Error::MissingGaloisKey { step: None, .. }) => {
            " (Python: conjugation needs keygen(conjugate=True))".to_string()
        }
        ckks::Error::PolynomialTooDeep { depth, level, .. } => {
            return not_enough_levels(
                format!("{err} (Python: Context.generate(depth), a larger preset)"),
                *depth,
                level.saturating_sub(1),
            );
        }
        ckks::Error::NewtonTooDeep { needed, level, .. } => {
            return not_enough_levels(err.to_string(), *needed, level.saturating_sub(1));
        }
        ckks::Error::NotEnoughLevels { level, needed, .. } => {
            // Rust counts the smallest level (limbs) the operation accepts; Python users count levels.
            let (needed, available) = (needed.saturating_sub(1), level.saturating_sub(1));
            return not_enough_levels(
                format!(
                    "{err} (Python: the operation uses {needed} levels, the ciphertext has {available} \
                     left)"
                ),
                needed,
                available,
            );
        }
        _ => String::new(),
    };
    value_error_with_hint(err, &hint)
}

/// ValueError (naming both fingerprints) unless `object`, of the parameter fingerprint `got`, belongs
/// to `ctx`: what every binding taking a ciphertext, key or evaluator checks at the call.
fn check_context(ctx: &CkksContext, got: u64, object: &'static str) -> PyResult<()> {
    let expected = ctx.fingerprint();
    if expected == got {
        Ok(())
    } else {
        Err(ckks_error(ckks::Error::ContextMismatch {
            object,
            expected,
            got,
        }))
    }
}

fn secret_name(s: SecretDistribution) -> String {
    match s {
        SecretDistribution::Ternary => "ternary".to_string(),
        SecretDistribution::HammingWeight(h) => format!("hamming:{h}"),
    }
}

fn parse_secret(s: &str) -> PyResult<SecretDistribution> {
    if s == "ternary" {
        return Ok(SecretDistribution::Ternary);
    }
    if s == "hamming" {
        return Ok(SecretDistribution::HammingWeight(
            rnsfhe::core::DEFAULT_HAMMING_WEIGHT,
        ));
    }
    if let Some(h) = s.strip_prefix("hamming:") {
        if let Ok(h) = h.parse::<usize>() {
            return Ok(SecretDistribution::HammingWeight(h));
        }
    }
    Err(PyValueError::new_err(format!(
        "unknown secret distribution {s:?}: expected 'ternary' or 'hamming:H' (H nonzero coefficients, \
         e.g. 'hamming:64')"
    )))
}

fn rescaling_name(r: RescalingPolicy) -> &'static str {
    match r {
        RescalingPolicy::FixedNominalScale => "nominal",
        RescalingPolicy::ExactScale => "exact",
    }
}

fn parse_rescaling(s: &str) -> PyResult<RescalingPolicy> {
    match s {
        "nominal" => Ok(RescalingPolicy::FixedNominalScale),
        "exact" => Ok(RescalingPolicy::ExactScale),
        other => Err(PyValueError::new_err(format!(
            "unknown rescaling policy {other:?}: expected 'nominal' (RNS-CKKS fixed scale 2^log_scale) or \
             'exact' (Kim-Papadimitriou-Polyakov exact per-level scales)"
        ))),
    }
}

// ------------------------------------------------------------------------------------------------------
// numpy and Python values
// ------------------------------------------------------------------------------------------------------

/// Slot values read from Python.
enum Values {
    Real(Vec<f64>),
    Complex(Vec<Complex64>),
}

impl Values {
    fn into_complex(self) -> Vec<Complex64> {
        match self {
            Values::Real(v) => v.into_iter().map(|x| Complex64::new(x, 0.0)).collect(),
            Values::Complex(v) => v,
        }
    }
}

/// The values of a numeric numpy array (any shape, flattened), or `None` for a non-numeric dtype.
fn numeric_values(arr: &Bound<'_, PyUntypedArray>) -> PyResult<Option<Values>> {
    let py = arr.py();
    let kind = arr.dtype().kind();
    let flat = arr.call_method0("ravel")?;
    Ok(match kind {
        b'c' => {
            let a = flat.call_method1("astype", (numpy::dtype::<Complex64>(py),))?;
            let a = a.downcast::<PyArray1<Complex64>>()?.readonly();
            Some(Values::Complex(a.as_array().iter().copied().collect()))
        }
        b'f' | b'i' | b'u' | b'b' => {
            let a = flat.call_method1("astype", (numpy::dtype::<f64>(py),))?;
            let a = a.downcast::<PyArray1<f64>>()?.readonly();
            Some(Values::Real(a.as_array().iter().copied().collect()))
        }
        _ => None,
    })
}

/// Reads a 1-D sequence of real or complex numbers (numpy array, list, tuple).
fn read_values(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<Values> {
    let arr = as_array(obj)?;
    if arr.ndim() != 1 {
        return Err(wrong_dimensions(
            format_args!("{what}: expected a 1-D array of real or complex numbers"),
            arr.ndim(),
        ));
    }
    numeric_values(&arr)?.ok_or_else(|| {
        PyTypeError::new_err(format!(
            "{what}: expected real or complex numbers, got dtype {}",
            arr.dtype()
        ))
    })
}

/// The right operand of an arithmetic operation with a ciphertext, as read from Python.
enum Arg<'a> {
    Ct(&'a Ciphertext),
    Int(i64),
    Real(f64),
    Complex(Complex64),
    Vector(Vec<Complex64>),
}

impl Arg<'_> {
    /// The operand of [`Evaluator::apply`] (borrows the values: no copy).
    fn operand(&self) -> Operand<'_> {
        match self {
            Arg::Ct(ct) => Operand::Ciphertext(ct),
            Arg::Int(k) => Operand::Int(*k),
            Arg::Real(x) => Operand::Constant(Complex64::new(*x, 0.0)),
            Arg::Complex(z) => Operand::Constant(*z),
            Arg::Vector(v) => Operand::Values(v),
        }
    }
}

/// Classifies a Python operand: a Ciphertext, a Python/numpy number, or a 1-D array-like of numbers.
/// `None` for anything else (the operators then return `NotImplemented`).
fn classify<'a>(other: &'a Bound<'_, PyAny>) -> PyResult<Option<Arg<'a>>> {
    if let Ok(ct) = other.downcast::<PyCiphertext>() {
        return Ok(Some(Arg::Ct(&ct.get().ct)));
    }
    if other.is_instance_of::<PyInt>() {
        return Ok(Some(match other.extract::<i64>() {
            Ok(k) => Arg::Int(k),
            Err(_) => Arg::Real(other.extract::<f64>()?),
        }));
    }
    if other.is_instance_of::<PyFloat>() {
        return Ok(Some(Arg::Real(other.extract::<f64>()?)));
    }
    if let Ok(z) = other.downcast::<PyComplex>() {
        return Ok(Some(Arg::Complex(Complex64::new(z.real(), z.imag()))));
    }
    let arr = match as_array(other) {
        Ok(a) => a,
        Err(_) => return Ok(None),
    };
    let kind = arr.dtype().kind();
    let values = match numeric_values(&arr)? {
        Some(v) => v,
        None => return Ok(None),
    };
    match arr.ndim() {
        0 => Ok(Some(match (kind, values) {
            (b'i' | b'u' | b'b', Values::Real(v)) => match other.call_method0("__int__")?.extract()
            {
                Ok(k) => Arg::Int(k),
                Err(_) => Arg::Real(v[0]),
            },
            (_, Values::Real(v)) => Arg::Real(v[0]),
            (_, Values::Complex(v)) => Arg::Complex(v[0]),
        })),
        1 => Ok(Some(Arg::Vector(values.into_complex()))),
        d => Err(wrong_dimensions("expected a 1-D array of slot values", d)),
    }
}

// ------------------------------------------------------------------------------------------------------
// The evaluator shared by ciphertexts
// ------------------------------------------------------------------------------------------------------

/// A Rust evaluator (with its automatic rescaling) and the keys it has as Python shows them; shared by
/// `Arc` between an `Evaluator` and the ciphertexts it produced.
struct Eval {
    ev: Evaluator,
    rotations: Vec<i64>,
    conjugate: bool,
}

impl Eval {
    fn keyless(ctx: &Arc<CkksContext>, auto_rescale: bool) -> Self {
        Self {
            ev: Evaluator::new(ctx).with_auto_rescale(auto_rescale),
            rotations: Vec::new(),
            conjugate: false,
        }
    }

    fn ctx(&self) -> &Arc<CkksContext> {
        self.ev.context()
    }

    /// ValueError unless `ct` belongs to this evaluator's context.
    fn check(&self, ct: &Ciphertext) -> PyResult<()> {
        check_context(self.ctx(), ct.fingerprint(), "the ciphertext")
    }
}

/// The Rust operation of a Python operator.
fn bin_op(op: BinOp) -> BinaryOp {
    match op {
        BinOp::Add => BinaryOp::Add,
        BinOp::Sub => BinaryOp::Sub,
        BinOp::RSub => BinaryOp::ReverseSub,
        BinOp::Mul => BinaryOp::Mul,
    }
}

/// Runs `op` on `a` and `other` with the GIL released; `None` for an unsupported operand.
fn binary(
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
        eval.check(b)?;
    }
    let ct = py
        .allow_threads(|| eval.ev.apply(&a.ct, bin_op(op), b.operand()))
        .map_err(ckks_error)?;
    Ok(Some(PyCiphertext::new(ct, eval)))
}

/// Runs a unary operation with the GIL released.
fn unary(
    py: Python<'_>,
    eval: &Arc<Eval>,
    a: &Ciphertext,
    f: impl FnOnce(&Evaluator, &Ciphertext) -> ckks::Result<Ciphertext> + Send,
) -> PyResult<PyCiphertext> {
    eval.check(a)?;
    let ct = py.allow_threads(|| f(&eval.ev, a)).map_err(ckks_error)?;
    Ok(PyCiphertext::new(ct, eval))
}

// ------------------------------------------------------------------------------------------------------
// Polynomials, functions and statistics
// ------------------------------------------------------------------------------------------------------

pyo3::create_exception!(
    rnsfhe.ckks,
    NotEnoughLevelsError,
    PyValueError,
    "An operation needs more levels than the ciphertext has left (a subclass of ValueError).\n\n\
     Attributes: ``levels_needed`` (the levels, i.e. rescalings, the operation consumes) and \
     ``levels_available`` (those the ciphertext has left, ``ct.level - 1``). Use a lower degree or fewer \
     iterations, or a context with more levels (``Context.generate(depth)``, a larger preset)."
);

/// A [`NotEnoughLevelsError`] with `message` and the attributes `levels_needed` and `levels_available`.
pub(crate) fn not_enough_levels(message: String, needed: usize, available: usize) -> PyErr {
    Python::with_gil(|py| {
        let err = NotEnoughLevelsError::new_err(message);
        let value = err.value(py);
        match (
            value.setattr("levels_needed", needed),
            value.setattr("levels_available", available),
        ) {
            (Ok(()), Ok(())) => err,
            (Err(e), _) | (_, Err(e)) => e,
        }
    })
}

/// Default number of samples of `Polynomial.max_error` and `chebyshev_approx`.
const ERROR_SAMPLES: Int = Int::new(10_001);

/// A count argument (`degree`, `iterations`, `samples`) as `usize`: ValueError if negative or too large.
fn read_count(value: Int, what: &str) -> PyResult<usize> {
    value.get::<usize>(what).map_err(|_| {
        PyValueError::new_err(format!(
            "{what} must be a non-negative integer below 2^64, got {value}"
        ))
    })
}

/// An optional count argument.
fn read_optional_count(value: Option<Int>, what: &str) -> PyResult<Option<usize>> {
    value.map(|v| read_count(v, what)).transpose()
}

/// An `interval` argument: any sequence of two real numbers `(a, b)`, or None. The ends are checked
/// where the interval is used (the Rust layer's `InvalidInterval` for `a >= b` or non-finite ends).
fn read_interval(interval: Option<&Bound<'_, PyAny>>) -> PyResult<Option<(f64, f64)>> {
    let Some(obj) = interval.filter(|o| !o.is_none()) else {
        return Ok(None);
    };
    let ends: Vec<f64> = obj.extract().map_err(|_| {
        let name = obj
            .get_type()
            .name()
            .map_or_else(|_| "?".to_string(), |n| n.to_string());
        PyTypeError::new_err(format!(
            "interval must be a pair (a, b) of real numbers, got {name}"
        ))
    })?;
    match ends[..] {
        [a, b] => Ok(Some((a, b))),
        _ => Err(PyValueError::new_err(format!(
            "interval must be a pair (a, b) of real numbers, got {} numbers",
            ends.len()
        ))),
    }
}

/// A required `interval` argument, checked: finite ends with `a < b`.
fn required_interval(interval: &Bound<'_, PyAny>) -> PyResult<(f64, f64)> {
    let (a, b) = read_interval(Some(interval))?
        .ok_or_else(|| PyTypeError::new_err("interval must be a pair (a, b), got None"))?;
    if a.is_finite() && b.is_finite() && a < b {
        Ok((a, b))
    } else {
        Err(ckks_error(ckks::Error::InvalidInterval { a, b }))
    }
}

/// A Python callable `f(x: float) -> float` seen from Rust as `Fn(f64) -> f64`, with the GIL held. The
/// first exception raised by `f` (or a TypeError for a result that is not a real number) is kept and NaN
/// returned from then on, which stops [`ChebyshevSeries::interpolate`] at once; [`PyCallable::finish`]
/// then raises the exception instead of the Rust result.
struct PyCallable<'a, 'py> {
    f: &'a Bound<'py, PyAny>,
    error: RefCell<Option<PyErr>>,
}

impl<'a, 'py> PyCallable<'a, 'py> {
    /// TypeError unless `f` is callable.
    fn new(f: &'a Bound<'py, PyAny>) -> PyResult<Self> {
        if !f.is_callable() {
            return Err(PyTypeError::new_err(format!(
                "expected a callable f(x: float) -> float, got {}",
                f.get_type().name()?
            )));
        }
        Ok(Self {
            f,
            error: RefCell::new(None),
        })
    }

    /// `f(x)`, or NaN once `f` has failed.
    fn call(&self, x: f64) -> f64 {
        if self.failed() {
            return f64::NAN;
        }
        let value = self.f.call1((x,)).and_then(|v| {
            v.extract::<f64>().map_err(|_| {
                let name = v
                    .get_type()
                    .name()
                    .map_or_else(|_| "?".to_string(), |n| n.to_string());
                PyTypeError::new_err(format!(
                    "the function must return a real number: f({x}) returned {name}"
                ))
            })
        });
        value.unwrap_or_else(|err| {
            *self.error.borrow_mut() = Some(err);
            f64::NAN
        })
    }

    fn failed(&self) -> bool {
        self.error.borrow().is_some()
    }

    /// The exception `f` raised, if any; otherwise `result` (a Rust error as ValueError).
    fn finish<T>(self, result: ckks::Result<T>) -> PyResult<T> {
        match self.error.into_inner() {
            Some(err) => Err(err),
            None => result.map_err(ckks_error),
        }
    }
}

/// Chebyshev interpolation of the Python callable `f` on `[a, b]` (called `degree + 1` times, GIL held).
fn interpolate_callable(
    f: &Bound<'_, PyAny>,
    a: f64,
    b: f64,
    degree: usize,
) -> PyResult<Polynomial> {
    let call = PyCallable::new(f)?;
    let result = ChebyshevSeries::interpolate(|x| call.call(x), a, b, degree);
    Polynomial::nonconstant(call.finish(result)?).map_err(ckks_error)
}

/// The interval and degree of a function approximation (`None`: the method's default).
type ApproximationArgs = (Option<(f64, f64)>, Option<usize>);

/// The `interval` and `degree` arguments of a function approximation (None: the method's default).
fn approximation_args(
    interval: Option<&Bound<'_, PyAny>>,
    degree: Option<Int>,
) -> PyResult<ApproximationArgs> {
    Ok((
        read_interval(interval)?,
        read_optional_count(degree, "degree")?,
    ))
}

/// Evaluates `p` on `ct` with the GIL released, after checking the levels.
fn evaluate(
    py: Python<'_>,
    eval: &Arc<Eval>,
    ct: &Ciphertext,
    p: &Polynomial,
    what: &'static str,
) -> PyResult<PyCiphertext> {
    unary(py, eval, ct, |e, c| e.evaluate_polynomial_for(c, p, what))
}

/// The polynomial of a `polyval` argument: a [`PyPolynomial`], a `numpy.polynomial` series of any kind
/// (the same function of x, its domain and window included: converted to the Chebyshev basis on its
/// domain unless it is a power series whose window is its domain), or a 1-D sequence of
/// real coefficients in `basis` ("power", or "chebyshev" on `interval`, default [-1, 1]).
fn read_polynomial(
    obj: &Bound<'_, PyAny>,
    basis: &str,
    interval: Option<(f64, f64)>,
) -> PyResult<Polynomial> {
    let py = obj.py();
    let given = |what: &str| -> PyResult<()> {
        if basis != "power" || interval.is_some() {
            return Err(PyValueError::new_err(format!(
                "{what} carries its own basis and interval: do not pass basis= or interval="
            )));
        }
        Ok(())
    };
    if let Ok(p) = obj.downcast::<PyPolynomial>() {
        given("a Polynomial")?;
        return Ok(p.get().poly.clone());
    }
    let np_poly = py.import("numpy.polynomial")?;
    let power = np_poly.getattr("Polynomial")?;
    let chebyshev = np_poly.getattr("Chebyshev")?;
    let mut is_series = false;
    for name in [
        "Polynomial",
        "Chebyshev",
        "Legendre",
        "Laguerre",
        "Hermite",
        "HermiteE",
    ] {
        is_series |= obj.is_instance(&np_poly.getattr(name)?)?;
    }
    if is_series {
        given("a numpy.polynomial series")?;
        let domain: Vec<f64> = obj.getattr("domain")?.call_method0("tolist")?.extract()?;
        let window: Vec<f64> = obj.getattr("window")?.call_method0("tolist")?.extract()?;
        if obj.is_instance(&power)? && domain == window {
            let coef: Vec<f64> = obj.getattr("coef")?.call_method0("tolist")?.extract()?;
            return Polynomial::power(coef).map_err(ckks_error);
        }
        // A series evaluates its basis at the image of x under the linear map of `domain` onto `window`.
        // Converting it to a Chebyshev series on the same domain with the window [-1, 1] keeps the
        // function (numpy composes the series by Clenshaw's recurrence in the Chebyshev basis, stable for
        // every kind and degree, unlike a detour through the power basis): sum_k c_k T_k(y) with y the map
        // of the domain [a, b] onto [-1, 1], the library's Chebyshev series on the interval (a, b).
        let (a, b) = match domain[..] {
            [a, b] => (a, b),
            _ => {
                return Err(PyValueError::new_err(
                    "a numpy.polynomial domain has two ends",
                ))
            }
        };
        let kwargs = PyDict::new(py);
        kwargs.set_item("kind", &chebyshev)?;
        kwargs.set_item("domain", vec![a, b])?;
        kwargs.set_item("window", vec![-1.0, 1.0])?;
        let series = obj.call_method("convert", (), Some(&kwargs))?;
        let mut coef: Vec<f64> = series.getattr("coef")?.call_method0("tolist")?.extract()?;
        if a > b {
            // A reversed domain: the map onto [-1, 1] is the negative of that of [b, a], and
            // T_k(-y) = (-1)^k T_k(y).
            for c in coef.iter_mut().skip(1).step_by(2) {
                *c = -*c;
            }
            return Polynomial::chebyshev(coef, b, a).map_err(ckks_error);
        }
        return Polynomial::chebyshev(coef, a, b).map_err(ckks_error);
    }
    let coeffs = match read_values(obj, "polynomial coefficients")? {
        Values::Real(c) => c,
        Values::Complex(_) => {
            return Err(PyTypeError::new_err(
                "polynomial coefficients must be real numbers, got complex ones",
            ))
        }
    };
    match basis {
        "power" => match interval {
            None => Polynomial::power(coeffs).map_err(ckks_error),
            Some((a, b)) => Err(PyValueError::new_err(format!(
                "interval=({a}, {b}) applies to basis=\"chebyshev\" only (a power series has no interval)"
            ))),
        },
        "chebyshev" => {
            let (a, b) = interval.unwrap_or((-1.0, 1.0));
            Polynomial::chebyshev(coeffs, a, b).map_err(ckks_error)
        }
        other => Err(PyValueError::new_err(format!(
            "unknown basis {other:?}: expected \"power\" or \"chebyshev\""
        ))),
    }
}

/// `ct.polyval(coeffs, basis, interval)` with `eval`.
fn polyval_on(
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
fn chebyshev_on(
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

/// `ct.sigmoid(method, interval, degree)` with `eval`.
fn sigmoid_on(
    py: Python<'_>,
    eval: &Arc<Eval>,
    ct: &Ciphertext,
    method: &str,
    interval: Option<&Bound<'_, PyAny>>,
    degree: Option<Int>,
) -> PyResult<PyCiphertext> {
    let method: SigmoidMethod = method.parse().map_err(ckks_error)?;
    let (interval, degree) = approximation_args(interval, degree)?;
    unary(py, eval, ct, |e, c| e.sigmoid(c, method, interval, degree))
}

/// `ct.exp(method, interval, degree)` with `eval`.
fn exp_on(
    py: Python<'_>,
    eval: &Arc<Eval>,
    ct: &Ciphertext,
    method: &str,
    interval: Option<&Bound<'_, PyAny>>,
    degree: Option<Int>,
) -> PyResult<PyCiphertext> {
    let method: ExpMethod = method.parse().map_err(ckks_error)?;
    let (interval, degree) = approximation_args(interval, degree)?;
    unary(py, eval, ct, |e, c| e.exp(c, method, interval, degree))
}

/// `ct.inverse(iterations, interval, degree)` with `eval`.
fn inverse_on(
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
fn sqrt_on(
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
fn dot_on(
    py: Python<'_>,
    eval: &Arc<Eval>,
    a: &Ciphertext,
    other: &Bound<'_, PyAny>,
) -> PyResult<PyCiphertext> {
    eval.check(a)?;
    let b = match classify(other)? {
        Some(b @ (Arg::Ct(_) | Arg::Vector(_))) => b,
        _ => {
            return Err(PyTypeError::new_err(format!(
                "dot: expected a Ciphertext or a 1-D array of slot values, got {}",
                other.get_type().name()?
            )))
        }
    };
    if let Arg::Ct(b) = &b {
        eval.check(b)?;
    }
    unary(py, eval, a, |e, c| e.dot(c, b.operand()))
}

/// The Rust ciphertexts of a Python sequence of Ciphertexts; ValueError for one of another context than
/// `eval`'s.
fn read_ciphertexts(eval: &Eval, cts: &[Bound<'_, PyCiphertext>]) -> PyResult<Vec<Ciphertext>> {
    cts.iter()
        .map(|c| {
            eval.check(&c.get().ct)?;
            Ok(c.get().ct.clone())
        })
        .collect()
}

/// A polynomial for encrypted evaluation: ``sum_k coeffs[k] x^k`` (power basis) or
/// ``sum_k coeffs[k] T_k((2x - a - b) / (b - a))`` (Chebyshev basis on ``interval = (a, b)``).
///
/// Polynomial(coeffs, basis="power", interval=None)
///
/// * ``coeffs``: real coefficients in increasing order (``coeffs[k]`` multiplies x^k or T_k, as in
///   ``numpy.polynomial``; the reverse of ``numpy.polyval``);
/// * ``basis``: "power" or "chebyshev"; ``interval``: the Chebyshev interval (default (-1, 1)).
///
/// Also made by ``Polynomial.interpolate(f, interval, degree)`` (Chebyshev interpolation of any Python
/// function), ``Polynomial.sigmoid(...)``, ``Polynomial.exp(...)`` and ``Polynomial.inverse(...)`` (the
/// polynomials ``Ciphertext.sigmoid()``, ``exp()`` and ``inverse()`` evaluate). ``p(x)`` evaluates it in
/// plaintext (numbers or numpy arrays), ``p.max_error(f)`` measures ``max |f - p|``, ``ct.polyval(p)``
/// evaluates it on a ciphertext using ``p.depth`` levels. Raises ValueError for non-finite coefficients,
/// a degree of 0 (a constant) or above 4095, an interval with a >= b. Picklable.
#[pyclass(name = "Polynomial", module = "rnsfhe.ckks", frozen)]
struct PyPolynomial {
    poly: Polynomial,
}

#[pymethods]
impl PyPolynomial {
    #[new]
    #[pyo3(signature = (coeffs, basis = "power", interval = None))]
    fn new(
        coeffs: &Bound<'_, PyAny>,
        basis: &str,
        interval: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let poly = read_polynomial(coeffs, basis, read_interval(interval)?)?;
        Ok(Self { poly })
    }

    /// Polynomial.interpolate(f, interval, degree) -> Polynomial
    ///
    /// Chebyshev interpolation of the Python callable ``f(x: float) -> float`` on ``interval = (a, b)`` at
    /// the ``degree + 1`` Chebyshev nodes (computed in Rust; ``f`` is called once per node). Exceptions
    /// raised by ``f`` propagate; ValueError for a >= b, a degree of 0 or above 4095, or a non-finite value
    /// of ``f`` (naming the node). See ``rnsfhe.ckks.chebyshev_approx`` for the approximation error.
    #[staticmethod]
    fn interpolate(
        f: &Bound<'_, PyAny>,
        interval: &Bound<'_, PyAny>,
        degree: Int,
    ) -> PyResult<Self> {
        let (a, b) = read_interval(Some(interval))?
            .ok_or_else(|| PyTypeError::new_err("interval must be a pair (a, b), got None"))?;
        let degree = read_count(degree, "degree")?;
        Ok(Self {
            poly: interpolate_callable(f, a, b, degree)?,
        })
    }

    /// Polynomial.sigmoid(method="chebyshev", interval=None, degree=None) -> Polynomial
    ///
    /// The polynomial ``Ciphertext.sigmoid`` evaluates with the same arguments (see there for the methods
    /// and defaults): compare it with the true sigmoid with ``max_error``.
    #[staticmethod]
    #[pyo3(signature = (method = "chebyshev", interval = None, degree = None))]
    fn sigmoid(
        method: &str,
        interval: Option<&Bound<'_, PyAny>>,
        degree: Option<Int>,
    ) -> PyResult<Self> {
        let method: SigmoidMethod = method.parse().map_err(ckks_error)?;
        let (interval, degree) = approximation_args(interval, degree)?;
        let poly = approximation::sigmoid_polynomial(method, interval, degree);
        Ok(Self {
            poly: poly.map_err(ckks_error)?,
        })
    }

    /// Polynomial.exp(method="chebyshev", interval=None, degree=None) -> Polynomial
    ///
    /// The polynomial ``Ciphertext.exp`` evaluates with the same arguments (see there).
    #[staticmethod]
    #[pyo3(signature = (method = "chebyshev", interval = None, degree = None))]
    fn exp(
        method: &str,
        interval: Option<&Bound<'_, PyAny>>,
        degree: Option<Int>,
    ) -> PyResult<Self> {
        let method: ExpMethod = method.parse().map_err(ckks_error)?;
        let (interval, degree) = approximation_args(interval, degree)?;
        let poly = approximation::exp_polynomial(method, interval, degree);
        Ok(Self {
            poly: poly.map_err(ckks_error)?,
        })
    }

    /// Polynomial.inverse(iterations=None, interval=None, degree=None) -> Polynomial
    ///
    /// The polynomial ``Ciphertext.inverse`` computes with the same arguments (see there): without an
    /// interval, CKKS Algorithm 2's ``(1 - (1 - x)^(2^(r+1))) / x`` of degree ``2^(r+1) - 1`` in the power
    /// basis (its large alternating coefficients make plaintext evaluation lose a few bits beyond r = 3);
    /// with one, the Chebyshev interpolant of 1/x.
    #[staticmethod]
    #[pyo3(signature = (iterations = None, interval = None, degree = None))]
    fn inverse(
        iterations: Option<Int>,
        interval: Option<&Bound<'_, PyAny>>,
        degree: Option<Int>,
    ) -> PyResult<Self> {
        let iterations = read_optional_count(iterations, "iterations")?;
        let (interval, degree) = approximation_args(interval, degree)?;
        let poly =
            InverseMethod::new(iterations, interval, degree).and_then(InverseMethod::polynomial);
        Ok(Self {
            poly: poly.map_err(ckks_error)?,
        })
    }

    /// The coefficients (float64 array) in the polynomial's basis, in increasing order.
    #[getter]
    fn coeffs<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<f64>> {
        PyArray1::from_slice(py, self.poly.coeffs())
    }

    /// "power" or "chebyshev".
    #[getter]
    fn basis(&self) -> &'static str {
        match self.poly.basis() {
            PolynomialBasis::Power => "power",
            PolynomialBasis::Chebyshev { .. } => "chebyshev",
        }
    }

    /// The Chebyshev interval (a, b), or None in the power basis.
    #[getter]
    fn interval(&self) -> Option<(f64, f64)> {
        match self.poly.basis() {
            PolynomialBasis::Power => None,
            PolynomialBasis::Chebyshev { a, b } => Some((a, b)),
        }
    }

    /// The degree (index of the last nonzero coefficient; negligible Chebyshev coefficients, below 1e-15
    /// of their total, do not count).
    #[getter]
    fn degree(&self) -> usize {
        self.poly.degree()
    }

    /// The levels an encrypted evaluation uses: ceil(log2(degree + 1)), plus one in the Chebyshev basis
    /// when 2 / (b - a) is not an integer (the map of [a, b] onto [-1, 1] then needs a rescaling).
    #[getter]
    fn depth(&self) -> usize {
        self.poly.depth()
    }

    /// The ciphertext products (each with a relinearization) of an encrypted evaluation (baby-step
    /// giant-step: about sqrt(2 degree) + log2(degree)).
    #[getter]
    fn multiplications(&self) -> usize {
        self.poly.multiplications()
    }

    /// p(x) in plaintext for a number (a float) or an array-like of real numbers (an array of the same
    /// shape), by Horner's rule or Clenshaw's recurrence: the reference for encrypted evaluation.
    fn __call__<'py>(&self, x: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
        let py = x.py();
        if x.is_instance_of::<PyFloat>() || x.is_instance_of::<PyInt>() {
            let v = self.poly.evaluate(x.extract()?);
            return Ok(PyFloat::new(py, v).into_any());
        }
        let arr = as_array(x)?;
        let shape = arr.shape().to_vec();
        let values = match numeric_values(&arr)? {
            Some(Values::Real(v)) => v,
            _ => {
                return Err(PyTypeError::new_err(format!(
                    "a Polynomial evaluates real numbers, got dtype {}",
                    arr.dtype()
                )))
            }
        };
        let out: Vec<f64> = values.iter().map(|&v| self.poly.evaluate(v)).collect();
        if shape.is_empty() {
            return Ok(PyFloat::new(py, out[0]).into_any());
        }
        PyArray1::from_vec(py, out).call_method1("reshape", (shape,))
    }

    /// max_error(f, samples=10001, interval=None) -> float
    ///
    /// ``max |f(x) - p(x)|`` over ``samples`` evenly spaced points of ``interval`` (both ends included;
    /// default: the Chebyshev interval; required in the power basis), with ``f`` any Python callable
    /// float -> float (its exceptions propagate). NaN if ``f`` returns NaN somewhere.
    #[pyo3(signature = (f, samples = ERROR_SAMPLES, interval = None))]
    #[pyo3(text_signature = "($self, f, samples=10001, interval=None)")]
    fn max_error(
        &self,
        f: &Bound<'_, PyAny>,
        samples: Int,
        interval: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<f64> {
        let (a, b) = match (interval.filter(|i| !i.is_none()), self.interval()) {
            (Some(i), _) => required_interval(i)?,
            (None, Some(i)) => i,
            (None, None) => {
                return Err(PyValueError::new_err(
                    "a power-basis polynomial has no interval: pass interval=(a, b)",
                ))
            }
        };
        let samples = read_count(samples, "samples")?;
        if samples < 2 {
            return Err(PyValueError::new_err(format!(
                "samples must be at least 2 (both ends of the interval), got {samples}"
            )));
        }
        let call = PyCallable::new(f)?;
        let mut max = 0.0_f64;
        for i in 0..samples {
            let x = if i + 1 == samples {
                b
            } else {
                a + (b - a) * (i as f64 / (samples - 1) as f64)
            };
            let err = (call.call(x) - self.poly.evaluate(x)).abs();
            if err.is_nan() {
                max = f64::NAN;
                break;
            }
            max = max.max(err);
        }
        call.finish(Ok(max))
    }

    fn __repr__(&self) -> String {
        let interval = match self.interval() {
            Some((a, b)) => format!(", interval=({a:?}, {b:?})"),
            None => String::new(),
        };
        format!(
            "Polynomial(degree={}, basis={:?}{interval}, depth={})",
            self.poly.degree(),
            self.basis(),
            self.poly.depth()
        )
    }

    /// Pickling rebuilds the polynomial from its coefficients, basis and interval.
    #[allow(clippy::type_complexity)]
    fn __reduce__(
        slf: &Bound<'_, Self>,
    ) -> (Py<PyType>, (Vec<f64>, &'static str, Option<(f64, f64)>)) {
        let this = slf.get();
        (
            slf.get_type().unbind(),
            (this.poly.coeffs().to_vec(), this.basis(), this.interval()),
        )
    }
}

/// Runs an operation of several ciphertexts with the GIL released.
fn unary_many(
    py: Python<'_>,
    eval: &Arc<Eval>,
    f: impl FnOnce(&Evaluator) -> ckks::Result<Ciphertext> + Send,
) -> PyResult<PyCiphertext> {
    let ct = py.allow_threads(|| f(&eval.ev)).map_err(ckks_error)?;
    Ok(PyCiphertext::new(ct, eval))
}

// ------------------------------------------------------------------------------------------------------
// Context
// ------------------------------------------------------------------------------------------------------

/// The checked, immutable parameters of CKKS: prime chain, encoder, per-level scales, security estimate.
///
/// Context(log_n=13, log_scale=40, q0_bits=45, levels=3, special_primes=1, special_bits=50, dnum=None,
/// secret="ternary", sigma=3.2, conversion="fast", rescaling="exact", allow_insecure=False)
///
/// * ``log_n``: N = 2^log_n is the ring degree; a ciphertext holds N/2 complex slots.
/// * ``log_scale``: the scale 2^log_scale (about log_scale - 20 bits of precision after a multiplication).
/// * ``q0_bits``: the first prime; values must stay below 2^(q0_bits - log_scale - 1) in magnitude.
/// * ``levels``: multiplicative depth (number of rescalings).
/// * ``special_primes``, ``special_bits``, ``dnum``: key switching (P and the number of digit groups;
///   ``dnum=None`` means levels + 1, one prime per digit).
/// * ``secret``: "ternary" (uniform, HE Standard) or "hamming:H" (sparse, h nonzero coefficients).
/// * ``conversion``: basis conversion of key switching: "fast", "exact_float" or "exact_integer".
/// * ``rescaling``: "exact" (exact per-level scales) or "nominal" (RNS-CKKS fixed scale 2^log_scale).
///
/// The defaults are the 128-bit preset "Rec128N13". Parameters not established as 128-bit secure by the
/// HE Standard raise ValueError unless ``allow_insecure=True`` (then a UserWarning is issued).
/// Use ``Context.from_preset(name)`` for named presets (see ``rnsfhe.ckks.presets()``) and
/// ``Context.generate(depth)`` to choose parameters from a depth.
#[pyclass(name = "Context", module = "rnsfhe.ckks", frozen)]
struct PyContext {
    ctx: Arc<CkksContext>,
    preset: Option<Preset>,
    /// Keyless evaluator attached to ciphertexts encrypted without an explicit evaluator.
    plain: Arc<Eval>,
}

impl PyContext {
    fn build(
        py: Python<'_>,
        params: CkksParams,
        preset: Option<Preset>,
        allow_insecure: bool,
    ) -> PyResult<Self> {
        // The Rust opt-in is exactly the Python one (it travels in the context's bytes); a refusal
        // names the Python spelling.
        let params = CkksParams {
            insecure_for_testing: allow_insecure,
            ..params
        };
        let ctx = py
            .allow_threads(|| CkksContext::new(params))
            .map_err(ckks_error)?;
        if let Some(warning) = ctx.security_warning() {
            warn_user(py, &warning)?;
        }
        let plain = Arc::new(Eval::keyless(&ctx, true));
        Ok(Self { ctx, preset, plain })
    }

    /// The keyless evaluator of a context loaded from bytes (auto-rescaling, as `Context()`'s).
    fn keyless(ctx: &Arc<CkksContext>) -> Eval {
        Eval::keyless(ctx, true)
    }

    /// The context whose keyless evaluator is `plain`, named after the preset with its parameters (the
    /// insecure opt-in aside), if any.
    fn from_plain(plain: Arc<Eval>) -> Self {
        let ctx = Arc::clone(plain.ctx());
        let params = ctx.params();
        let preset = Preset::ALL.iter().copied().find(|p| {
            CkksParams {
                insecure_for_testing: params.insecure_for_testing,
                ..p.params()
            } == *params
        });
        Self { ctx, preset, plain }
    }

    /// ValueError unless `ct` was made with this context's parameters.
    fn check_own(&self, ct: &PyCiphertext) -> PyResult<()> {
        let (expected, got) = (self.ctx.fingerprint(), ct.eval.ctx().fingerprint());
        if expected == got {
            Ok(())
        } else {
            Err(ckks_error(ckks::Error::ContextMismatch {
                object: "the ciphertext",
                expected,
                got,
            }))
        }
    }

    fn make_eval(
        &self,
        relin: Option<&RelinKey>,
        galois: Option<(&GaloisKeys, &[i64], bool)>,
        auto_rescale: bool,
        strict: bool,
    ) -> PyResult<Eval> {
        let mut ev = if strict {
            Evaluator::strict(&self.ctx)
        } else {
            Evaluator::new(&self.ctx)
        }
        .with_auto_rescale(auto_rescale);
        if let Some(rk) = relin {
            ev = ev.with_relin_key(rk.clone()).map_err(ckks_error)?;
        }
        let (mut rotations, mut conjugate) = (Vec::new(), false);
        if let Some((gk, steps, conj)) = galois {
            ev = ev.with_galois_keys(gk.clone()).map_err(ckks_error)?;
            rotations = steps.to_vec();
            conjugate = conj;
        }
        Ok(Eval {
            ev,
            rotations,
            conjugate,
        })
    }
}

context_methods! {
    /// encryptor(key, evaluator=None) -> Encryptor
    ///
    /// An encryptor with a PublicKey, a KeySet (its public key) or a SecretKey (secret-key encryption, less
    /// noise). Its ciphertexts are attached to ``evaluator`` (default: a keyless evaluator of this context
    /// with auto-rescaling, enough for additions and plaintext/scalar products).
    fn encryptor;

    impl PyContext(CkksContext) {
        #[new]
        #[pyo3(signature = (log_n = Int::new(13), log_scale = Int::new(40), q0_bits = Int::new(45),
                            levels = Int::new(3), special_primes = Int::new(1),
                            special_bits = Int::new(50), dnum = None, secret = "ternary", sigma = 3.2,
                            conversion = "fast", rescaling = "exact", allow_insecure = false))]
        #[pyo3(
            text_signature = "(log_n=13, log_scale=40, q0_bits=45, levels=3, special_primes=1, \
                                 special_bits=50, dnum=None, secret=\"ternary\", sigma=3.2, \
                                 conversion=\"fast\", rescaling=\"exact\", allow_insecure=False)"
        )]
        #[allow(clippy::too_many_arguments)]
        fn new(
            py: Python<'_>,
            log_n: Int,
            log_scale: Int,
            q0_bits: Int,
            levels: Int,
            special_primes: Int,
            special_bits: Int,
            dnum: Option<Int>,
            secret: &str,
            sigma: f64,
            conversion: &str,
            rescaling: &str,
            allow_insecure: bool,
        ) -> PyResult<Self> {
            let levels = levels.get::<usize>("levels")?;
            let params = CkksParams {
                log_n: log_n.get("log_n")?,
                log_scale: log_scale.get("log_scale")?,
                q0_bits: q0_bits.get("q0_bits")?,
                levels,
                special_primes: special_primes.get("special_primes")?,
                special_bits: special_bits.get("special_bits")?,
                dnum: Int::get_opt(dnum, "dnum")?.unwrap_or(levels.saturating_add(1)),
                secret: parse_secret(secret)?,
                sigma,
                conversion: parse_mode(conversion)?,
                rescaling: parse_rescaling(rescaling)?,
                insecure_for_testing: allow_insecure,
            };
            Self::build(py, params, None, allow_insecure)
        }

        /// Context.from_preset(name, allow_insecure=False) -> Context
        ///
        /// The context of a named preset (``rnsfhe.ckks.presets()``; case-insensitive): "Rec128N13" to
        /// "Rec128N16" (128-bit, scale 2^40, depth 3 / 6 / 15 / 32) or the RNS-CKKS paper's Table 1 settings
        /// "PaperTable1L5", "PaperTable1L10", "PaperTable1L15" (sparse secret, 80-bit target: they need
        /// ``allow_insecure=True``). Raises ValueError for an unknown name.
        #[staticmethod]
        #[pyo3(signature = (name, allow_insecure = false))]
        fn from_preset(py: Python<'_>, name: &str, allow_insecure: bool) -> PyResult<Self> {
            let preset = SCHEME.find_preset(&Preset::ALL, name)?;
            Self::build(py, preset.params(), Some(preset), allow_insecure)
        }

        /// Context.generate(depth, log_scale=40, security=128) -> Context
        ///
        /// Chooses parameters for a multiplicative ``depth`` at scale 2^log_scale and a security level (128,
        /// 192 or 256 bits; HE Standard, uniform ternary secret), with the smallest N that fits, in the manner
        /// of OpenFHE's CCParams. Raises ValueError when no N up to 2^17 fits.
        #[staticmethod]
        #[pyo3(signature = (depth, log_scale = Int::new(40), security = Int::new(128)))]
        #[pyo3(text_signature = "(depth, log_scale=40, security=128)")]
        fn generate(py: Python<'_>, depth: Int, log_scale: Int, security: Int) -> PyResult<Self> {
            let (depth, log_scale) = (depth.get("depth")?, log_scale.get("log_scale")?);
            let level = match security.get::<u32>("security")? {
                128 => SecurityLevel::Bits128,
                192 => SecurityLevel::Bits192,
                256 => SecurityLevel::Bits256,
                other => {
                    return Err(PyValueError::new_err(format!(
                        "security = {other} is not supported: expected 128, 192 or 256 (bits)"
                    )))
                }
            };
            let params = CkksParams::generate(depth, log_scale, level).map_err(ckks_error)?;
            Self::build(py, params, None, false)
        }

        /// keygen(rotations=(), conjugate=False, sum_slots=False) -> KeySet
        ///
        /// Samples a secret key and the public, relinearization and Galois keys: rotation keys for each step
        /// in ``rotations`` (left by k for k > 0, right for k < 0), the conjugation key if ``conjugate``, and,
        /// if ``sum_slots``, the rotations by 1, 2, 4, ..., slots/2 that ``Ciphertext.sum()`` and ``mean()``
        /// need. Randomness comes from the operating system (ChaCha20). The GIL is released.
        #[pyo3(signature = (rotations = Vec::new(), conjugate = false, sum_slots = false))]
        fn keygen(
            &self,
            py: Python<'_>,
            rotations: Vec<Int>,
            conjugate: bool,
            sum_slots: bool,
        ) -> PyResult<PyKeySet> {
            let rotations: Vec<i64> = Int::get_all(&rotations, "rotations")?;
            let slots = self.ctx.max_slots() as i64;
            let mut steps: Vec<i64> = Vec::new();
            let extra = if sum_slots {
                KeyGenerator::power_of_two_steps(self.ctx.max_slots())
            } else {
                Vec::new()
            };
            for s in rotations.into_iter().chain(extra) {
                if s.rem_euclid(slots) != 0 && !steps.contains(&s) {
                    steps.push(s);
                }
            }
            let ctx = &self.ctx;
            let keys = py
                .allow_threads(|| -> ckks::Result<_> {
                    let mut rng = Csprng::from_os()?;
                    let kg = KeyGenerator::new(ctx, &mut rng)?;
                    kg.generate_all(&steps, conjugate, &mut rng)
                })
                .map_err(ckks_error)?;
            Ok(PyKeySet {
                ctx: Arc::clone(ctx),
                secret: Arc::new(keys.secret),
                public: Arc::new(keys.public),
                relin: Arc::new(keys.relin),
                galois: Arc::new(keys.galois),
                rotations: steps,
                conjugate,
            })
        }

        /// evaluator(keys=None, *, relin_key=None, galois_keys=None, auto_rescale=True, strict=False) -> Evaluator
        ///
        /// An evaluator with the relinearization and Galois keys of ``keys`` (a KeySet), or with the keys given
        /// separately (a server never sees the secret key). ``auto_rescale``: every multiplication by a
        /// ciphertext, an array or a float rescales its result (one level). ``strict``: operands at different
        /// levels or scales are errors instead of being aligned.
        #[pyo3(signature = (keys = None, *, relin_key = None, galois_keys = None, auto_rescale = true,
                            strict = false))]
        fn evaluator(
            &self,
            py: Python<'_>,
            keys: Option<&PyKeySet>,
            relin_key: Option<&PyRelinKey>,
            galois_keys: Option<&PyGaloisKeys>,
            auto_rescale: bool,
            strict: bool,
        ) -> PyResult<PyEvaluator> {
            let relin = relin_key.map(|k| &*k.key).or(keys.map(|k| &*k.relin));
            let galois = match (galois_keys, keys) {
                (Some(g), _) => Some((&*g.key, &g.rotations[..], g.conjugate)),
                (None, Some(k)) => Some((&*k.galois, &k.rotations[..], k.conjugate)),
                (None, None) => None,
            };
            // Cloning the keys into the evaluator copies megabytes: without the GIL.
            let eval = py.allow_threads(|| self.make_eval(relin, galois, auto_rescale, strict))?;
            Ok(PyEvaluator {
                eval: Arc::new(eval),
            })
        }

        /// level_scale(level) -> float: the default scale of a plaintext encoded at ``level`` (limbs, 1 to
        /// max_level).
        fn level_scale(&self, level: Int) -> PyResult<f64> {
            self.ctx.level_scale(level.get("level")?).map_err(ckks_error)
        }

        /// polyval(ct, coeffs, basis="power", interval=None) -> Ciphertext
        ///
        /// The polynomial of ``coeffs`` applied to every slot of ``ct``, with the evaluator ``ct`` is
        /// attached to: see ``Ciphertext.polyval``. Raises ValueError if ``ct`` belongs to another context.
        #[pyo3(signature = (ct, coeffs, basis = "power", interval = None))]
        fn polyval(
            &self,
            py: Python<'_>,
            ct: &PyCiphertext,
            coeffs: &Bound<'_, PyAny>,
            basis: &str,
            interval: Option<&Bound<'_, PyAny>>,
        ) -> PyResult<PyCiphertext> {
            self.check_own(ct)?;
            polyval_on(py, &ct.eval, &ct.ct, coeffs, basis, interval)
        }

        /// chebyshev(ct, f, interval, degree) -> Ciphertext
        ///
        /// ``f`` (any Python callable float -> float) applied to every slot of ``ct`` through its Chebyshev
        /// interpolant of ``degree`` on ``interval``, with the evaluator ``ct`` is attached to: see
        /// ``Ciphertext.chebyshev``. Raises ValueError if ``ct`` belongs to another context.
        fn chebyshev(
            &self,
            py: Python<'_>,
            ct: &PyCiphertext,
            f: &Bound<'_, PyAny>,
            interval: &Bound<'_, PyAny>,
            degree: Int,
        ) -> PyResult<PyCiphertext> {
            self.check_own(ct)?;
            chebyshev_on(py, &ct.eval, &ct.ct, f, interval, degree)
        }

        /// Ring degree N.
        #[getter]
        fn n(&self) -> usize {
            self.ctx.n()
        }

        /// Number of complex slots of a ciphertext, N/2.
        #[getter]
        fn slots(&self) -> usize {
            self.ctx.max_slots()
        }

        /// Multiplicative depth: how many rescalings a fresh ciphertext allows.
        #[getter]
        fn levels(&self) -> usize {
            self.ctx.params().levels
        }

        /// Level of a fresh ciphertext in limbs (levels + 1); Ciphertext.level counts limbs too.
        #[getter]
        fn max_level(&self) -> usize {
            self.ctx.max_level()
        }

        /// log2 of the scale parameter (the scaling primes are close to 2^log_scale).
        #[getter]
        fn log_scale(&self) -> u32 {
            self.ctx.params().log_scale
        }

        /// log2(Q) of the full chain q_0 ... q_L.
        #[getter]
        fn log_q(&self) -> f64 {
            self.ctx.log_q()
        }

        /// log2(QP) including the special primes (what the security table bounds).
        #[getter]
        fn log_qp(&self) -> f64 {
            self.ctx.log_qp()
        }

        /// The security estimate as text: the verdict of the HE Standard table (N, log2(QP), the secret
        /// distribution and sigma, which must be at least 3.19) and the built-in lattice estimate of the
        /// same parameters (bits in the HE Standard's cost model and in core-SVP).
        #[getter]
        fn security(&self) -> String {
            self.ctx.security_summary()
        }

        /// True unless 128-bit security is established by the HE Standard table.
        #[getter]
        fn is_insecure(&self) -> bool {
            self.ctx.is_insecure()
        }

        /// The ciphertext chain q_0 ... q_L.
        #[getter]
        fn q_moduli(&self) -> Vec<u64> {
            self.ctx.q_moduli().to_vec()
        }

        /// The special (key-switching) primes.
        #[getter]
        fn p_moduli(&self) -> Vec<u64> {
            self.ctx.p_moduli().to_vec()
        }

        /// The preset name, or None for literal parameters.
        #[getter]
        fn preset(&self) -> Option<String> {
            self.preset.map(preset_name)
        }

        /// The parameters as a dict of the constructor's keyword arguments.
        #[getter]
        fn params<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
            let p = self.ctx.params();
            let d = PyDict::new(py);
            d.set_item("log_n", p.log_n)?;
            d.set_item("log_scale", p.log_scale)?;
            d.set_item("q0_bits", p.q0_bits)?;
            d.set_item("levels", p.levels)?;
            d.set_item("special_primes", p.special_primes)?;
            d.set_item("special_bits", p.special_bits)?;
            d.set_item("dnum", p.dnum)?;
            d.set_item("secret", secret_name(p.secret))?;
            d.set_item("sigma", p.sigma)?;
            d.set_item("conversion", mode_name(p.conversion))?;
            d.set_item("rescaling", rescaling_name(p.rescaling))?;
            Ok(d)
        }

        fn __repr__(&self) -> String {
            let p = self.ctx.params();
            let name = preset_prefix(self.preset);
            format!(
                "Context({name}N=2^{}, log_scale={}, levels={}, log_qp={:.1}, security={:?})",
                p.log_n,
                p.log_scale,
                p.levels,
                self.ctx.log_qp(),
                self.ctx.security().to_string()
            )
        }

    }
}

// ------------------------------------------------------------------------------------------------------
// Keys
// ------------------------------------------------------------------------------------------------------

/// All keys of one secret: ``secret`` (SecretKey), ``public`` (PublicKey), ``relin`` (RelinKey) and
/// ``galois`` (GaloisKeys). Made by ``Context.keygen``; give ``keys`` to ``Context.evaluator``,
/// ``Context.encryptor`` and ``Context.decryptor``. Hand a server only ``relin`` and ``galois``
/// (``to_bytes()`` or pickling). Not picklable (it holds the secret key: see
/// ``SecretKey.to_secret_bytes``).
#[pyclass(name = "KeySet", module = "rnsfhe.ckks", frozen)]
struct PyKeySet {
    ctx: Arc<CkksContext>,
    secret: Arc<SecretKey>,
    public: Arc<PublicKey>,
    relin: Arc<RelinKey>,
    galois: Arc<GaloisKeys>,
    rotations: Vec<i64>,
    conjugate: bool,
}

keyset_methods! {
    impl PyKeySet {
        /// The Galois keys (rotations and conjugation).
        #[getter]
        fn galois(&self) -> PyGaloisKeys {
            PyGaloisKeys {
                key: Arc::clone(&self.galois),
                rotations: self.rotations.clone(),
                conjugate: self.conjugate,
                ctx: Arc::clone(&self.ctx),
            }
        }

        /// The rotation steps that have keys.
        #[getter]
        fn rotations(&self) -> Vec<i64> {
            self.rotations.clone()
        }

        /// Whether the conjugation key was generated.
        #[getter]
        fn conjugate(&self) -> bool {
            self.conjugate
        }

        fn __repr__(&self) -> String {
            format!(
                "KeySet(N={}, rotations={:?}, conjugate={})",
                self.ctx.n(),
                self.rotations,
                py_bool(self.conjugate)
            )
        }
    }
}

key_classes!(
    module = "rnsfhe.ckks",
    context = CkksContext,
    encryptor_keys = "a KeySet, a PublicKey or a SecretKey",
    decryptor_keys = "a KeySet or a SecretKey"
);

wire_key_class! {
    /// The relinearization key. ``to_bytes()`` / ``RelinKey.from_bytes(data, context)``; picklable.
    struct PyRelinKey("RelinKey" in "rnsfhe.ckks"): RelinKey, CkksContext;
    /// RelinKey.from_bytes(data, context) -> RelinKey
    ///
    /// Loads a relinearization key written by ``to_bytes`` into ``context``, validating it (header,
    /// fingerprint, one key-switching pair per digit group, residues below their moduli; seeds
    /// expanded). The GIL is released. Raises rnsfhe.DecodeError (a ValueError) naming the field
    /// and byte offset of bad bytes.
    fn from_bytes;

    fn __repr__(&self) -> String {
        format!(
            "RelinKey(fingerprint={:#018x})",
            self.key.key().fingerprint()
        )
    }
}

/// Galois keys for slot rotations (and conjugation). ``to_bytes()`` /
/// ``GaloisKeys.from_bytes(data, context)``; picklable.
#[pyclass(name = "GaloisKeys", module = "rnsfhe.ckks", frozen)]
struct PyGaloisKeys {
    key: Arc<GaloisKeys>,
    rotations: Vec<i64>,
    conjugate: bool,
    ctx: Arc<CkksContext>,
}

impl WireClass for PyGaloisKeys {
    type Context = CkksContext;
    type Object = GaloisKeys;

    fn context(&self) -> &CkksContext {
        &self.ctx
    }

    fn object(&self) -> &GaloisKeys {
        &self.key
    }
}

wire_methods! {
    impl PyGaloisKeys {
        /// GaloisKeys.from_bytes(data, context, mac_key=None) -> GaloisKeys
        ///
        /// Loads Galois keys written by ``to_bytes`` into ``context``, validating them (header,
        /// fingerprint, elements odd, below 2N and increasing, residues below their moduli; seeds
        /// expanded). ``rotations`` and ``conjugate`` are recovered from the Galois elements (rotation
        /// by k is 5^k mod 2N, conjugation 2N - 1), each step in (-N/4, N/4] (a step k and k - N/2 are
        /// the same rotation: keygen(rotations=[-1]) comes back as -1, [N/2 - 1] as -1 too). The GIL is
        /// released. Raises rnsfhe.DecodeError (a ValueError) naming the field and byte offset.
        #[staticmethod]
        #[pyo3(signature = (data, context, mac_key = None))]
        fn from_bytes(
            py: Python<'_>,
            data: &Bound<'_, PyAny>,
            context: &PyContext,
            mac_key: Option<&Bound<'_, PyAny>>,
        ) -> PyResult<Self> {
            let key: GaloisKeys = load_object(py, data, &*context.ctx, mac_key)?;
            let (rotations, conjugate) =
                rotations_of_elements(context.ctx.galois_group(), &key.elements());
            Ok(Self {
                key: Arc::new(key),
                rotations,
                conjugate,
                ctx: Arc::clone(&context.ctx),
            })
        }

        /// The rotation steps that have keys.
        #[getter]
        fn rotations(&self) -> Vec<i64> {
            self.rotations.clone()
        }

        /// Whether the conjugation key is present.
        #[getter]
        fn conjugate(&self) -> bool {
            self.conjugate
        }

        /// The Galois elements that have keys (5^k mod 2N for rotation by k, 2N - 1 for conjugation).
        #[getter]
        fn elements(&self) -> Vec<usize> {
            self.key.elements()
        }

        fn __repr__(&self) -> String {
            format!(
                "GaloisKeys(rotations={:?}, conjugate={})",
                self.rotations,
                py_bool(self.conjugate)
            )
        }
    }
}

// ------------------------------------------------------------------------------------------------------
// Encryption and decryption
// ------------------------------------------------------------------------------------------------------

/// Encrypts real or complex vectors. Made by ``Context.encryptor(key, evaluator=None)``.
#[pyclass(name = "Encryptor", module = "rnsfhe.ckks", frozen)]
struct PyEncryptor {
    enc: CkksEncryptor,
    ctx: Arc<CkksContext>,
    eval: Arc<Eval>,
    with_secret: bool,
}

impl PyEncryptor {
    /// An encryptor of `ctx` with `key`; its ciphertexts are attached to `eval`, which must be of `ctx`.
    fn new(ctx: &Arc<CkksContext>, key: EncryptionKey, eval: Arc<Eval>) -> PyResult<Self> {
        check_context(ctx, eval.ctx().fingerprint(), "the evaluator")?;
        let (enc, with_secret) = match key {
            EncryptionKey::Public(pk) => (CkksEncryptor::with_public_key(ctx, &pk), false),
            EncryptionKey::Secret(sk) => (CkksEncryptor::with_secret_key(ctx, &sk), true),
        };
        Ok(Self {
            enc: enc.map_err(ckks_error)?,
            ctx: Arc::clone(ctx),
            eval,
            with_secret,
        })
    }
}

#[pymethods]
impl PyEncryptor {
    /// encrypt(values, slots=None) -> Ciphertext
    ///
    /// Encrypts a 1-D array (float64 or complex128, or anything numpy converts to one) of at most
    /// ``slots`` values at the top level and its default scale; missing values are zero. ``slots``
    /// (a power of two up to N/2, default N/2) sets the slot count: rotations act on that many slots.
    /// Raises ValueError for too many values or non-finite values. The GIL is released.
    ///
    /// With a SecretKey and all N/2 slots, the ciphertext keeps the 32-byte seed of its uniform part:
    /// its ``to_bytes()`` (and pickle) is about half the size of ``to_bytes(seeded=False)``, which is
    /// what a data owner sends to a server. The receiver loads it as an ordinary Ciphertext. Results of
    /// operations, public-key ciphertexts and fewer slots have no seed.
    #[pyo3(signature = (values, slots = None))]
    fn encrypt(
        &self,
        py: Python<'_>,
        values: &Bound<'_, PyAny>,
        slots: Option<Int>,
    ) -> PyResult<PyCiphertext> {
        let values = read_values(values, "encrypt")?.into_complex();
        let max_slots = self.ctx.max_slots();
        let slots = Int::get_opt(slots, "slots")?.unwrap_or(max_slots);
        if self.with_secret && slots == max_slots {
            let seeded = py
                .allow_threads(|| -> ckks::Result<SeededCiphertext> {
                    let mut rng = Csprng::from_os()?;
                    self.enc.encrypt_seeded(&values[..], &mut rng)
                })
                .map_err(ckks_error)?;
            return PyCiphertext::with_seed(seeded, &self.eval);
        }
        let ct = py
            .allow_threads(|| -> ckks::Result<Ciphertext> {
                let pt = self.ctx.encode(&values, slots, self.ctx.max_level())?;
                let mut rng = Csprng::from_os()?;
                self.enc.encrypt_plaintext(&pt, &mut rng)
            })
            .map_err(ckks_error)?;
        Ok(PyCiphertext::new(ct, &self.eval))
    }

    fn __repr__(&self) -> String {
        format!(
            "Encryptor(N={}, key={})",
            self.ctx.n(),
            if self.with_secret { "secret" } else { "public" }
        )
    }

    /// Raises TypeError: pickle its PublicKey instead and build an encryptor from it.
    fn __reduce__(&self) -> PyResult<PyObject> {
        Err(SCHEME.not_picklable(
            "Encryptor",
            "pickle (or to_bytes()) its PublicKey and build an encryptor with ctx.encryptor(key)",
        ))
    }
}

/// Decrypts ciphertexts to numpy arrays. Made by ``Context.decryptor(key)``.
#[pyclass(name = "Decryptor", module = "rnsfhe.ckks", frozen)]
struct PyDecryptor {
    dec: CkksDecryptor,
    ctx: Arc<CkksContext>,
}

impl PyDecryptor {
    fn new(ctx: &Arc<CkksContext>, sk: &SecretKey) -> PyResult<Self> {
        let dec = CkksDecryptor::new(ctx, sk).map_err(ckks_error)?;
        Ok(Self {
            dec,
            ctx: Arc::clone(ctx),
        })
    }

    /// ValueError unless `ct` belongs to this decryptor's context.
    fn check(&self, ct: &PyCiphertext) -> PyResult<()> {
        check_context(&self.ctx, ct.ct.fingerprint(), "the ciphertext")
    }
}

#[pymethods]
impl PyDecryptor {
    /// decrypt(ct, real=False, *, flooding_bits=0) -> numpy.ndarray
    ///
    /// The ``ct.slots`` decrypted slot values: complex128, or float64 (the real parts) if ``real``.
    /// ``flooding_bits``: for results that are shared with anyone who saw ciphertexts (IND-CPA-D, see
    /// SECURITY.md), a fresh Gaussian noise of standard deviation 2^flooding_bits is added to every
    /// coefficient before decoding (``recommended_flooding_bits`` says how many); it costs about
    /// ``flooding_bits + log2(slots) / 2`` bits of precision. 0 decrypts exactly. Raises ValueError when the
    /// flooding would leave no precision (``max_flooding_bits``). The GIL is released.
    #[pyo3(signature = (ct, real = false, *, flooding_bits = Int::new(0)))]
    #[pyo3(text_signature = "($self, ct, real=False, *, flooding_bits=0)")]
    fn decrypt<'py>(
        &self,
        py: Python<'py>,
        ct: &PyCiphertext,
        real: bool,
        flooding_bits: Int,
    ) -> PyResult<Bound<'py, PyAny>> {
        let flooding_bits: u32 = flooding_bits.get("flooding_bits")?;
        self.check(ct)?;
        let values = py
            .allow_threads(|| {
                if flooding_bits == 0 {
                    return self.dec.decrypt(&ct.ct);
                }
                let mut rng = Csprng::from_os()?;
                self.dec.decrypt_flooded(&ct.ct, flooding_bits, &mut rng)
            })
            .map_err(ckks_error)?;
        Ok(if real {
            let re: Vec<f64> = values.iter().map(|z| z.re).collect();
            PyArray1::from_vec(py, re).into_any()
        } else {
            PyArray1::from_vec(py, values).into_any()
        })
    }

    /// max_flooding_bits(ct) -> int: the most flooding bits ``decrypt`` accepts for ``ct`` (some precision
    /// must remain, and the noise must stay far below the modulus).
    fn max_flooding_bits(&self, ct: &PyCiphertext) -> PyResult<u32> {
        self.check(ct)?;
        self.dec.max_flooding_bits(&ct.ct).map_err(ckks_error)
    }

    /// noise_log2(ct, expected) -> float: log2 of the Euclidean norm of the error of ``ct``, whose slots
    /// should hold ``expected``. A diagnostic that uses the secret key: measure a representative run with
    /// non-sensitive inputs and feed the result to ``recommended_flooding_bits``; never measure the
    /// ciphertext you share.
    fn noise_log2(
        &self,
        py: Python<'_>,
        ct: &PyCiphertext,
        expected: &Bound<'_, PyAny>,
    ) -> PyResult<f64> {
        self.check(ct)?;
        let expected = read_values(expected, "expected")?.into_complex();
        py.allow_threads(|| self.dec.noise_log2(&ct.ct, &expected))
            .map_err(ckks_error)
    }

    fn __repr__(&self) -> &'static str {
        "Decryptor(<secret key>)"
    }

    /// Raises TypeError: it holds the secret key, which is saved only explicitly.
    fn __reduce__(&self) -> PyResult<PyObject> {
        Err(SCHEME.not_picklable(
            "Decryptor",
            "it holds the secret key; save the SecretKey explicitly with to_secret_bytes()",
        ))
    }
}

// ------------------------------------------------------------------------------------------------------
// Evaluator
// ------------------------------------------------------------------------------------------------------

/// Homomorphic operations. Made by ``Context.evaluator(keys, auto_rescale=True, strict=False)``.
///
/// Every method returns a new Ciphertext attached to this evaluator, so that its Python operators
/// (``+ - * /``, unary ``-``) and methods use this evaluator's keys and options. Right operands may be
/// Ciphertexts, 1-D arrays (encoded at the ciphertext's level; shorter arrays are padded with zeros) or
/// numbers: ints multiply exactly without using a level, floats and complex numbers use one level
/// (rescaled automatically when ``auto_rescale``). Operands at different levels or scales are aligned
/// unless the evaluator is strict: the result is at the lower level; when the scales differ, the operand
/// at the higher level (the left one at equal levels) is multiplied by a constant and rescaled onto the
/// other's scale, which costs a level at equal levels, and two operands at level 1 with different scales
/// raise ValueError (scale mismatch). The GIL is released during every operation; evaluators can be shared
/// by threads.
#[pyclass(name = "Evaluator", module = "rnsfhe.ckks", frozen)]
struct PyEvaluator {
    eval: Arc<Eval>,
}

evaluator_methods! {
    operands = "a Ciphertext, an array or a number";
    expected = "a Ciphertext, a 1-D array of numbers or a number";
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
                e.finish_product(e.square(c)?)
            })
        }

        /// negate(a) -> Ciphertext: -a.
        fn negate(&self, py: Python<'_>, a: &PyCiphertext) -> PyResult<PyCiphertext> {
            unary(py, &self.eval, &a.ct, |e, c| e.negate(c))
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
            unary(py, &self.eval, &a.ct, |e, c| e.drop_to_level(c, level))
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
            let cts = py
                .allow_threads(|| self.eval.ev.rotate_hoisted(&a.ct, &steps))
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
            sigmoid_on(py, &self.eval, &ct.ct, method, interval, degree)
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
            exp_on(py, &self.eval, &ct.ct, method, interval, degree)
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
            let cts = read_ciphertexts(&self.eval, &cts)?;
            unary_many(py, &self.eval, |e| e.add_many(&cts))
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
                "Evaluator(N={}, relin_key={}, rotations={:?}, conjugate={}, auto_rescale={}, strict={})",
                self.eval.ctx().n(),
                py_bool(self.eval.ev.has_relin_key()),
                self.eval.rotations,
                py_bool(self.conjugate_key()),
                py_bool(self.eval.ev.auto_rescale()),
                py_bool(self.strict())
            )
        }
    }
}

// ------------------------------------------------------------------------------------------------------
// Ciphertext
// ------------------------------------------------------------------------------------------------------

/// An encrypted vector of ``slots`` complex numbers at a level (limbs; ``level - 1`` more rescalings are
/// possible) and an exact scale.
///
/// Immutable; operations return new ciphertexts. Operators ``+ - *`` take Ciphertexts, 1-D arrays and
/// numbers on either side, ``/`` numbers, unary ``-``; they and the methods use the evaluator the
/// ciphertext is attached to (``ct.evaluator``: the one that made it, or the one given to the encryptor).
/// Errors raise ValueError with the Rust message. ``to_bytes()`` / ``Ciphertext.from_bytes(data,
/// context)``; picklable (unpickled ciphertexts are attached to the keyless evaluator of their
/// context: use ``evaluator.attach(ct)``).
#[pyclass(name = "Ciphertext", module = "rnsfhe.ckks", frozen)]
pub(crate) struct PyCiphertext {
    ct: Ciphertext,
    eval: Arc<Eval>,
    /// The seeded form of a fresh secret-key encryption (half the wire size), if this is one.
    seeded: Option<Arc<SeededCiphertext>>,
}

impl PyCiphertext {
    fn new(ct: Ciphertext, eval: &Arc<Eval>) -> Self {
        Self {
            ct,
            eval: Arc::clone(eval),
            seeded: None,
        }
    }

    /// A fresh secret-key ciphertext that keeps its seeded form for `to_bytes`.
    fn with_seed(seeded: SeededCiphertext, eval: &Arc<Eval>) -> PyResult<Self> {
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
            let ct = py
                .allow_threads(|| eval.ev.apply(&self.ct, BinaryOp::Mul, Operand::Constant(factor)))
                .map_err(ckks_error)?;
            operator_result(py, Some(PyCiphertext::new(ct, eval)))
        }

        fn __neg__(&self, py: Python<'_>) -> PyResult<PyCiphertext> {
            unary(py, &self.eval, &self.ct, |e, c| e.negate(c))
        }

        /// rescale() -> Ciphertext: divides by the last prime (one level less); ValueError at level 1.
        fn rescale(&self, py: Python<'_>) -> PyResult<PyCiphertext> {
            unary(py, &self.eval, &self.ct, |e, c| e.rescale(c))
        }

        /// square() -> Ciphertext: self * self (rescaled if the evaluator auto-rescales).
        fn square(&self, py: Python<'_>) -> PyResult<PyCiphertext> {
            unary(py, &self.eval, &self.ct, |e, c| {
                e.finish_product(e.square(c)?)
            })
        }

        /// drop_to_level(level) -> Ciphertext: the same message at a lower level (limbs removed).
        fn drop_to_level(&self, py: Python<'_>, level: Int) -> PyResult<PyCiphertext> {
            let level = level.get("level")?;
            unary(py, &self.eval, &self.ct, |e, c| {
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
            sigmoid_on(py, &self.eval, &self.ct, method, interval, degree)
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
            exp_on(py, &self.eval, &self.ct, method, interval, degree)
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

// ------------------------------------------------------------------------------------------------------
// Precision
// ------------------------------------------------------------------------------------------------------

/// Min / mean / median / max bits of precision of one part (real or imaginary) over the slots.
#[pyclass(name = "PartStats", module = "rnsfhe.ckks", frozen, get_all)]
#[derive(Clone)]
struct PyPartStats {
    /// Smallest precision over the slots (the worst slot).
    min: f64,
    /// Mean precision.
    mean: f64,
    /// Median precision.
    median: f64,
    /// Largest precision (the best slot).
    max: f64,
}

impl From<PartStats> for PyPartStats {
    fn from(s: PartStats) -> Self {
        Self {
            min: s.min,
            mean: s.mean,
            median: s.median,
            max: s.max,
        }
    }
}

#[pymethods]
impl PyPartStats {
    /// as_dict() -> dict with keys min, mean, median, max.
    fn as_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        d.set_item("min", self.min)?;
        d.set_item("mean", self.mean)?;
        d.set_item("median", self.median)?;
        d.set_item("max", self.max)?;
        Ok(d)
    }

    fn __repr__(&self) -> String {
        format!(
            "PartStats(min={:.2}, mean={:.2}, median={:.2}, max={:.2})",
            self.min, self.mean, self.median, self.max
        )
    }
}

/// Bits of precision of computed slots against expected ones: ``-log2 |error|`` per slot, summarized for
/// the real and the imaginary parts (``real``, ``imag``: PartStats with min / mean / median / max).
/// An exact slot counts as 64 bits. ``min_bits`` is the worst over both parts.
#[pyclass(name = "PrecisionStats", module = "rnsfhe.ckks", frozen)]
struct PyPrecisionStats {
    stats: PrecisionStats,
}

#[pymethods]
impl PyPrecisionStats {
    /// Statistics of the real parts.
    #[getter]
    fn real(&self) -> PyPartStats {
        self.stats.real.into()
    }

    /// Statistics of the imaginary parts.
    #[getter]
    fn imag(&self) -> PyPartStats {
        self.stats.imag.into()
    }

    /// Number of slots compared.
    #[getter]
    fn slots(&self) -> usize {
        self.stats.slots
    }

    /// The worst precision over all slots and both parts.
    #[getter]
    fn min_bits(&self) -> f64 {
        self.stats.min_bits()
    }

    /// as_dict() -> {"real": {...}, "imag": {...}, "slots": n, "min_bits": b}.
    fn as_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        d.set_item("real", self.real().as_dict(py)?)?;
        d.set_item("imag", self.imag().as_dict(py)?)?;
        d.set_item("slots", self.stats.slots)?;
        d.set_item("min_bits", self.stats.min_bits())?;
        Ok(d)
    }

    fn __str__(&self) -> String {
        self.stats.to_string()
    }

    fn __repr__(&self) -> String {
        format!("PrecisionStats({})", self.stats)
    }
}

/// precision(expected, got) -> PrecisionStats
///
/// Bits of precision of ``got`` against ``expected`` (1-D arrays of equal length, real or complex):
/// min / mean / median / max of ``-log2 |got - expected|`` over the slots, for real and imaginary parts.
/// Raises ValueError for different lengths or empty arrays.
#[pyfunction]
fn precision(expected: &Bound<'_, PyAny>, got: &Bound<'_, PyAny>) -> PyResult<PyPrecisionStats> {
    let e = read_values(expected, "precision (expected)")?;
    let g = read_values(got, "precision (got)")?;
    let stats = match (e, g) {
        (Values::Real(e), Values::Real(g)) => PrecisionStats::compare_real(&e, &g),
        (e, g) => PrecisionStats::compare(&e.into_complex(), &g.into_complex()),
    }
    .map_err(|err| PyValueError::new_err(err.to_string()))?;
    Ok(PyPrecisionStats { stats })
}

/// presets() -> list[str]: the names accepted by ``Context.from_preset``.
#[pyfunction]
fn presets() -> Vec<String> {
    preset_names(&Preset::ALL)
}

/// recommended_flooding_bits(noise_log2, statistical_security=30, decryptions=1) -> int
///
/// The flooding bits for shared decryptions of results whose error has norm 2^noise_log2
/// (``Decryptor.noise_log2`` on a representative run): ceil(noise_log2 + s/2 + log2(decryptions)/2 - 1/2),
/// the "noise x 2^(s/2)" rule of Li-Micciancio and OpenFHE (default s = 30, as OpenFHE). Raises ValueError for
/// a negative or non-finite noise, s above 128 or no decryptions.
#[pyfunction]
#[pyo3(signature = (noise_log2, statistical_security = Int::new(ckks::DEFAULT_STATISTICAL_SECURITY as i128), decryptions = Int::new(1)))]
#[pyo3(text_signature = "(noise_log2, statistical_security=30, decryptions=1)")]
fn recommended_flooding_bits(
    noise_log2: f64,
    statistical_security: Int,
    decryptions: Int,
) -> PyResult<u32> {
    ckks::recommended_flooding_bits(
        noise_log2,
        statistical_security.get("statistical_security")?,
        decryptions.get("decryptions")?,
    )
    .map_err(ckks_error)
}

/// Builds the submodule `ckks` of `_rnsfhe`.
pub(crate) fn register(parent: &Bound<'_, PyModule>) -> PyResult<()> {
    SCHEME.register(parent, |m| {
        add_scheme_classes!(m);
        m.add_class::<PyPartStats>()?;
        m.add_class::<PyPrecisionStats>()?;
        m.add_class::<PyPolynomial>()?;
        m.add(
            "NotEnoughLevelsError",
            m.py().get_type::<NotEnoughLevelsError>(),
        )?;
        m.add_function(wrap_pyfunction!(precision, m)?)?;
        m.add_function(wrap_pyfunction!(presets, m)?)?;
        m.add_function(wrap_pyfunction!(recommended_flooding_bits, m)?)?;
        Ok(())
    })
}
