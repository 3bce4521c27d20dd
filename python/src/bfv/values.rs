//! Integer values and operands read from Python (numpy `int64` arrays, sequences, numbers), checked
//! against the plaintext modulus and the ring degree.

use super::*;

/// The error of a non-integer operand or input.
pub(super) fn not_integers(what: &str, dtype: impl std::fmt::Display) -> PyErr {
    PyTypeError::new_err(format!(
        "{what}: expected integers (an int64 array or Python ints), got dtype {dtype}; BFV computes \
         exactly modulo t, so convert deliberately (e.g. numpy.rint(x).astype(numpy.int64))"
    ))
}

/// Checks `-t < v < t` for every value.
pub(super) fn check_range(values: &[i64], t: u64, what: &str) -> PyResult<()> {
    let t = t as i64; // t <= 2^60
    if let Some((i, &v)) = values.iter().enumerate().find(|(_, &v)| v <= -t || v >= t) {
        return Err(PyValueError::new_err(format!(
            "{what}: value {v} at index {i} is out of range for the plaintext modulus t = {t}: values \
             must satisfy -t < v < t (reduce them first, e.g. numpy.mod(x, t))"
        )));
    }
    Ok(())
}

/// The integers of an array of any shape, flattened, or `None` for a non-integer dtype. Integers that do
/// not fit in int64 raise ValueError.
pub(super) fn integer_values(
    arr: &Bound<'_, PyUntypedArray>,
    what: &str,
) -> PyResult<Option<Vec<i64>>> {
    let py = arr.py();
    if arr.len() == 0 {
        return Ok(Some(Vec::new()));
    }
    let flat = arr.call_method0("ravel")?;
    let overflow = |i: usize, v: &dyn std::fmt::Display| {
        PyValueError::new_err(format!(
            "{what}: value {v} at index {i} does not fit in int64"
        ))
    };
    Ok(match arr.dtype().kind() {
        b'i' | b'b' => {
            let a = flat.call_method1("astype", (numpy::dtype::<i64>(py),))?;
            let a = a.downcast::<PyArray1<i64>>()?.readonly();
            Some(a.as_array().iter().copied().collect())
        }
        b'u' => {
            let a = flat.call_method1("astype", (numpy::dtype::<u64>(py),))?;
            let a = a.downcast::<PyArray1<u64>>()?.readonly();
            let v = a.as_array();
            Some(
                v.iter()
                    .enumerate()
                    .map(|(i, &x)| i64::try_from(x).map_err(|_| overflow(i, &x)))
                    .collect::<PyResult<Vec<i64>>>()?,
            )
        }
        // Python ints too large for a numpy integer dtype land in an object array.
        b'O' => {
            let items: Vec<Bound<'_, PyAny>> = flat.call_method0("tolist")?.extract()?;
            if !items.iter().all(|x| x.is_instance_of::<PyInt>()) {
                return Ok(None);
            }
            Some(
                items
                    .iter()
                    .enumerate()
                    .map(|(i, x)| {
                        x.extract::<i64>().map_err(|err| {
                            if err.is_instance_of::<PyOverflowError>(py) {
                                overflow(i, x)
                            } else {
                                err
                            }
                        })
                    })
                    .collect::<PyResult<Vec<i64>>>()?,
            )
        }
        _ => None,
    })
}

/// Reads a 1-D sequence of integers (numpy array, list, tuple) with `-t < v < t` and at most `n` values.
pub(super) fn read_values(
    obj: &Bound<'_, PyAny>,
    ctx: &BfvContext,
    what: &str,
) -> PyResult<Vec<i64>> {
    let arr = as_array(obj)?;
    if arr.ndim() != 1 {
        return Err(wrong_dimensions(
            format_args!("{what}: expected a 1-D array of integers"),
            arr.ndim(),
        ));
    }
    let values = integer_values(&arr, what)?.ok_or_else(|| not_integers(what, arr.dtype()))?;
    check_length(values.len(), ctx, what)?;
    check_range(&values, ctx.plaintext_modulus(), what)?;
    Ok(values)
}

pub(super) fn check_length(len: usize, ctx: &BfvContext, what: &str) -> PyResult<()> {
    if len > ctx.n() {
        return Err(PyValueError::new_err(format!(
            "{what}: {len} values do not fit in a plaintext of N = {} slots or coefficients",
            ctx.n()
        )));
    }
    Ok(())
}

/// The right operand of an arithmetic operation with a ciphertext.
pub(super) enum Operand<'a> {
    Ct(&'a PyCiphertext),
    Pt(&'a PyPlaintext),
    Int(i64),
    Vector(Vec<i64>),
}

/// Classifies a Python operand: a Ciphertext, a Plaintext, an integer (Python or numpy), or a 1-D array-like of
/// integers. Floats and float arrays raise TypeError (BFV is exact); anything else gives `None` (the
/// operators then return `NotImplemented`). Values out of range raise ValueError.
pub(super) fn classify<'a>(
    other: &'a Bound<'_, PyAny>,
    ctx: &BfvContext,
) -> PyResult<Option<Operand<'a>>> {
    let what = "operand";
    if let Ok(ct) = other.downcast::<PyCiphertext>() {
        return Ok(Some(Operand::Ct(ct.get())));
    }
    if let Ok(pt) = other.downcast::<PyPlaintext>() {
        return Ok(Some(Operand::Pt(pt.get())));
    }
    let t = ctx.plaintext_modulus();
    if other.is_instance_of::<PyInt>() {
        let k = other.extract::<i64>().map_err(|_| {
            PyValueError::new_err(format!("{what}: the integer {other} does not fit in int64"))
        })?;
        check_range(&[k], t, what)?;
        return Ok(Some(Operand::Int(k)));
    }
    if other.is_instance_of::<PyFloat>() {
        return Err(not_integers(what, "float"));
    }
    let Ok(arr) = as_array(other) else {
        return Ok(None);
    };
    let kind = arr.dtype().kind();
    if !matches!(kind, b'i' | b'u' | b'b' | b'O') && arr.len() > 0 {
        return if matches!(kind, b'f' | b'c') {
            Err(not_integers(what, arr.dtype()))
        } else {
            Ok(None)
        };
    }
    let Some(values) = integer_values(&arr, what)? else {
        return Ok(None);
    };
    match arr.ndim() {
        0 => {
            check_range(&values, t, what)?;
            Ok(Some(Operand::Int(values[0])))
        }
        1 => {
            check_length(values.len(), ctx, what)?;
            check_range(&values, t, what)?;
            Ok(Some(Operand::Vector(values)))
        }
        d => Err(wrong_dimensions(
            format_args!("{what}: expected a 1-D array of integers"),
            d,
        )),
    }
}
