//! Slot values and operands read from Python: numpy arrays, sequences and numbers as real or complex
//! values, and the right operand of an arithmetic operation with a ciphertext.

use super::*;

/// Slot values read from Python.
pub(super) enum Values {
    Real(Vec<f64>),
    Complex(Vec<Complex64>),
}

impl Values {
    pub(super) fn into_complex(self) -> Vec<Complex64> {
        match self {
            Values::Real(v) => v.into_iter().map(|x| Complex64::new(x, 0.0)).collect(),
            Values::Complex(v) => v,
        }
    }
}

/// The values of a numeric numpy array (any shape, flattened), or `None` for a non-numeric dtype.
pub(super) fn numeric_values(arr: &Bound<'_, PyUntypedArray>) -> PyResult<Option<Values>> {
    // The common inputs, contiguous float64 and complex128 arrays, are copied once, without the
    // flattened copy of `astype` (a pass over N/2 values that Rust callers do not make).
    if let Ok(a) = arr.downcast::<PyArray1<f64>>() {
        if let Ok(r) = a.try_readonly() {
            if let Ok(s) = r.as_slice() {
                return Ok(Some(Values::Real(s.to_vec())));
            }
        }
    }
    if let Ok(a) = arr.downcast::<PyArray1<Complex64>>() {
        if let Ok(r) = a.try_readonly() {
            if let Ok(s) = r.as_slice() {
                return Ok(Some(Values::Complex(s.to_vec())));
            }
        }
    }
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
pub(super) fn read_values(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<Values> {
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

/// Decrypted or decoded slot values as a numpy array: complex128, or float64 (the real parts) if `real`.
pub(super) fn slot_array(py: Python<'_>, values: Vec<Complex64>, real: bool) -> Bound<'_, PyAny> {
    if real {
        let re: Vec<f64> = values.iter().map(|z| z.re).collect();
        PyArray1::from_vec(py, re).into_any()
    } else {
        PyArray1::from_vec(py, values).into_any()
    }
}

/// The right operand of an arithmetic operation with a ciphertext, as read from Python.
pub(super) enum Arg<'a> {
    /// A ciphertext, borrowed for the operation (`a += b` holds the left one mutably).
    Ct(PyRef<'a, PyCiphertext>),
    Pt(&'a Plaintext),
    Int(i64),
    Real(f64),
    Complex(Complex64),
    Vector(Vec<Complex64>),
}

impl Arg<'_> {
    /// The operand of [`Evaluator::apply`] (borrows the values: no copy).
    pub(super) fn operand(&self) -> Operand<'_> {
        match self {
            Arg::Ct(ct) => Operand::Ciphertext(&ct.ct),
            Arg::Pt(pt) => Operand::Plaintext(pt),
            Arg::Int(k) => Operand::Int(*k),
            Arg::Real(x) => Operand::Constant(Complex64::new(*x, 0.0)),
            Arg::Complex(z) => Operand::Constant(*z),
            Arg::Vector(v) => Operand::Values(v),
        }
    }
}

/// Classifies a Python operand: a Ciphertext, a Plaintext, a Python/numpy number, or a 1-D array-like of numbers.
/// `None` for anything else (the operators then return `NotImplemented`).
pub(super) fn classify<'a>(other: &'a Bound<'_, PyAny>) -> PyResult<Option<Arg<'a>>> {
    if let Ok(ct) = other.downcast::<PyCiphertext>() {
        return Ok(Some(Arg::Ct(ct.try_borrow()?)));
    }
    if let Ok(pt) = other.downcast::<PyPlaintext>() {
        return Ok(Some(Arg::Pt(&pt.get().key)));
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
