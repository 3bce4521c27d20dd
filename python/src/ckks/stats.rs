//! `PrecisionStats` and `precision()`: bits of precision of computed slots against expected ones.

use super::*;

/// Min / mean / median / max bits of precision of one part (real or imaginary) over the slots.
#[pyclass(name = "PartStats", module = "rnsfhe.ckks", frozen, get_all)]
#[derive(Clone)]
pub(super) struct PyPartStats {
    /// Smallest precision over the slots (the worst slot).
    pub(super) min: f64,
    /// Mean precision.
    pub(super) mean: f64,
    /// Median precision.
    pub(super) median: f64,
    /// Largest precision (the best slot).
    pub(super) max: f64,
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
pub(super) struct PyPrecisionStats {
    pub(super) stats: PrecisionStats,
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
pub(super) fn precision(
    expected: &Bound<'_, PyAny>,
    got: &Bound<'_, PyAny>,
) -> PyResult<PyPrecisionStats> {
    let e = read_values(expected, "precision (expected)")?;
    let g = read_values(got, "precision (got)")?;
    let stats = match (e, g) {
        (Values::Real(e), Values::Real(g)) => PrecisionStats::compare_real(&e, &g),
        (e, g) => PrecisionStats::compare(&e.into_complex(), &g.into_complex()),
    }
    .map_err(|err| PyValueError::new_err(err.to_string()))?;
    Ok(PyPrecisionStats { stats })
}
