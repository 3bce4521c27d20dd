//! `Polynomial` (the plaintext side of polynomial and function evaluation) and the arguments of the
//! polynomial functions read from Python: counts, intervals, polynomials, and Python callables to
//! interpolate.

use super::*;

/// Default number of samples of `Polynomial.max_error` and `chebyshev_approx`.
pub(super) const ERROR_SAMPLES: Int = Int::new(10_001);

/// A count argument (`degree`, `iterations`, `samples`) as `usize`: ValueError if negative or too large.
pub(super) fn read_count(value: Int, what: &str) -> PyResult<usize> {
    value.get::<usize>(what).map_err(|_| {
        PyValueError::new_err(format!(
            "{what} must be a non-negative integer below 2^64, got {value}"
        ))
    })
}

/// An optional count argument.
pub(super) fn read_optional_count(value: Option<Int>, what: &str) -> PyResult<Option<usize>> {
    value.map(|v| read_count(v, what)).transpose()
}

/// An `interval` argument: any sequence of two real numbers `(a, b)`, or None. The ends are checked
/// where the interval is used (the Rust layer's `InvalidInterval` for `a >= b` or non-finite ends).
pub(super) fn read_interval(interval: Option<&Bound<'_, PyAny>>) -> PyResult<Option<(f64, f64)>> {
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
pub(super) fn required_interval(interval: &Bound<'_, PyAny>) -> PyResult<(f64, f64)> {
    let (a, b) = read_interval(Some(interval))?
        .ok_or_else(|| PyTypeError::new_err("interval must be a pair (a, b), got None"))?;
    if a.is_finite() && b.is_finite() && a < b {
        Ok((a, b))
    } else {
        Err(ckks_error(ckks::Error::InvalidInterval { a, b }))
    }
}

/// Chebyshev interpolation of the Python callable `f` on `[a, b]` (called `degree + 1` times, GIL held).
pub(super) fn interpolate_callable(
    f: &Bound<'_, PyAny>,
    a: f64,
    b: f64,
    degree: usize,
) -> PyResult<Polynomial> {
    let call = PyCallable::new(f)?;
    let result = ChebyshevSeries::interpolate(|x| call.call(x), a, b, degree);
    Polynomial::nonconstant(call.finish(result, ckks_error)?).map_err(ckks_error)
}

/// The interval and degree of a function approximation (`None`: the method's default).
pub(super) type ApproximationArgs = (Option<(f64, f64)>, Option<usize>);

/// The `interval` and `degree` arguments of a function approximation (None: the method's default).
pub(super) fn approximation_args(
    interval: Option<&Bound<'_, PyAny>>,
    degree: Option<Int>,
) -> PyResult<ApproximationArgs> {
    Ok((
        read_interval(interval)?,
        read_optional_count(degree, "degree")?,
    ))
}
/// The polynomial of a `polyval` argument: a [`PyPolynomial`], a `numpy.polynomial` series of any kind
/// (the same function of x, its domain and window included: converted to the Chebyshev basis on its
/// domain unless it is a power series whose window is its domain), or a 1-D sequence of
/// real coefficients in `basis` ("power", or "chebyshev" on `interval`, default [-1, 1]).
pub(super) fn read_polynomial(
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
/// The polynomial of an approximation method `M` with an interval and a degree (None: defaults).
type PolynomialOf<M> = fn(M, Option<(f64, f64)>, Option<usize>) -> ckks::Result<Polynomial>;

/// The polynomial of the method `M` named `method` that `f` ([`approximation::sigmoid_polynomial`],
/// [`approximation::exp_polynomial`]) gives with the `interval` and `degree` given (None: defaults).
fn approximation_polynomial<M: std::str::FromStr<Err = ckks::Error>>(
    method: &str,
    interval: Option<&Bound<'_, PyAny>>,
    degree: Option<Int>,
    f: PolynomialOf<M>,
) -> PyResult<PyPolynomial> {
    let method: M = method.parse().map_err(ckks_error)?;
    let (interval, degree) = approximation_args(interval, degree)?;
    let poly = f(method, interval, degree).map_err(ckks_error)?;
    Ok(PyPolynomial { poly })
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
pub(super) struct PyPolynomial {
    pub(super) poly: Polynomial,
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
        approximation_polynomial(method, interval, degree, approximation::sigmoid_polynomial)
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
        approximation_polynomial(method, interval, degree, approximation::exp_polynomial)
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
        call.finish(Ok::<_, ckks::Error>(max), ckks_error)
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
