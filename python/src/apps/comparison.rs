//! `Comparator`: min / max, max-pooling, bitonic sorting and min-index / max-index (PEGASUS Section V.A)
//! on the LWE ciphertexts and the CKKS ciphertexts of a `rnsfhe.pegasus` session, by the Rust
//! [`Comparator`] of `rnsfhe-apps` (`rnsfhe_apps::comparison`). The pure-Python module `rnsfhe.apps`
//! wraps it in the functions `min`, `max`, `max_pool`, `sort`, `argmin`, `argmax`. Every call runs with
//! the GIL released; results on LWE ciphertexts are at the LWE side of the session (what
//! ``ct.to_lwe()`` gives, read by ``session.decrypt_lwe``), results on CKKS ciphertexts are attached to
//! the session's evaluator.

use std::borrow::Borrow;
use std::sync::Arc;

use pyo3::prelude::*;
use rnsfhe::ckks::Ciphertext;
use rnsfhe::lwe::LweCiphertext;
use rnsfhe::pegasus::{PegasusError, PegasusEvaluator};
use rnsfhe_apps::{Comparator, ComparisonKey, Error, Form, Order, Outputs};

use crate::common::{value_error, Int};
use crate::lwe::{csprng, read_ciphertexts, PyLweCiphertext};
use crate::pegasus::{Pegasus, PyPipeline};

/// The pipeline of a session, shared with its evaluator, as the Rust comparator holds it.
struct Shared(Arc<Pegasus>);

impl Borrow<PegasusEvaluator> for Shared {
    fn borrow(&self) -> &PegasusEvaluator {
        self.0.evaluator()
    }
}

/// An error of the comparisons as a Python exception: CKKS errors (a lack of levels, another context)
/// as `rnsfhe.ckks` raises them, the rest `ValueError` with the Rust message.
fn comparison_error(err: Error) -> PyErr {
    match err {
        Error::Ckks(e) | Error::Pegasus(PegasusError::Ckks(e)) => crate::ckks::ckks_error(e),
        other => value_error(other),
    }
}

/// Comparator(pipeline, bound=None, seed=None): the comparisons of PEGASUS Section V.A on a
/// ``rnsfhe.pegasus`` session's ciphertexts; use the functions of ``rnsfhe.apps`` (``min``, ``max``,
/// ``max_pool``, ``sort``, ``argmin``, ``argmax``), which make one per session and bound.
///
/// ``pipeline`` is ``session.pipeline``. Making one generates the key switch from the look-up-table
/// ring back to the LWE key (PEGASUS Fig. 9), so that a table's output can feed another table
/// (``seed``: deterministic, tests only). ``bound`` is the declared bound V of the values (default
/// ``input_bound / 2``, the largest that min and max allow: ``m0 + m1`` must stay within the tables'
/// domain ``[-input_bound, input_bound]``); ValueError for a larger one. Not picklable.
#[pyclass(name = "Comparator", module = "rnsfhe.apps", frozen)]
pub(crate) struct PyComparator {
    pipeline: Py<PyPipeline>,
    inner: Comparator<Shared>,
}

impl PyComparator {
    fn pipeline<'a>(&'a self, py: Python<'a>) -> &'a PyPipeline {
        self.pipeline.bind(py).get()
    }

    /// LWE ciphertexts out of a call at the LWE side.
    fn lwe<F>(&self, py: Python<'_>, cts: &Bound<'_, PyAny>, f: F) -> PyResult<Vec<PyLweCiphertext>>
    where
        F: FnOnce(&Comparator<Shared>, &[LweCiphertext]) -> Result<Outputs, Error> + Send,
    {
        let cts = read_ciphertexts(cts)?;
        let out = crate::common::release(py, || f(&self.inner, &cts)).map_err(comparison_error)?;
        Ok(out
            .ciphertexts
            .into_iter()
            .map(PyLweCiphertext::from)
            .collect())
    }

    /// A CKKS ciphertext of the session out of a call on one.
    fn ckks<F>(
        &self,
        py: Python<'_>,
        ct: &crate::ckks::PyCiphertext,
        method: &str,
        f: F,
    ) -> PyResult<crate::ckks::PyCiphertext>
    where
        F: FnOnce(&Comparator<Shared>, &Ciphertext) -> Result<Ciphertext, Error> + Send,
    {
        let pipeline = self.pipeline(py);
        let ct = pipeline.own(ct, method)?;
        let out = crate::common::release(py, || f(&self.inner, ct)).map_err(comparison_error)?;
        pipeline.attach(py, out)
    }

    /// Two lists of LWE ciphertexts out of a call at the LWE side that returns two outputs.
    fn lwe_pair<F>(
        &self,
        py: Python<'_>,
        cts: &Bound<'_, PyAny>,
        f: F,
    ) -> PyResult<(Vec<PyLweCiphertext>, Vec<PyLweCiphertext>)>
    where
        F: FnOnce(&Comparator<Shared>, &[LweCiphertext]) -> Result<(Outputs, Outputs), Error>
            + Send,
    {
        let cts = read_ciphertexts(cts)?;
        let (a, b) =
            crate::common::release(py, || f(&self.inner, &cts)).map_err(comparison_error)?;
        let wrap = |o: Outputs| {
            o.ciphertexts
                .into_iter()
                .map(PyLweCiphertext::from)
                .collect()
        };
        Ok((wrap(a), wrap(b)))
    }

    /// Two CKKS ciphertexts of the session out of a call on one.
    fn ckks_pair<F>(
        &self,
        py: Python<'_>,
        ct: &crate::ckks::PyCiphertext,
        method: &str,
        f: F,
    ) -> PyResult<(crate::ckks::PyCiphertext, crate::ckks::PyCiphertext)>
    where
        F: FnOnce(&Comparator<Shared>, &Ciphertext) -> Result<(Ciphertext, Ciphertext), Error>
            + Send,
    {
        let pipeline = self.pipeline(py);
        let ct = pipeline.own(ct, method)?;
        let (a, b) = crate::common::release(py, || f(&self.inner, ct)).map_err(comparison_error)?;
        Ok((pipeline.attach(py, a)?, pipeline.attach(py, b)?))
    }
}

/// The order of `descending`.
fn order(descending: bool) -> Order {
    if descending {
        Order::Descending
    } else {
        Order::Ascending
    }
}

#[pymethods]
impl PyComparator {
    #[new]
    #[pyo3(signature = (pipeline, bound = None, seed = None))]
    fn new(
        py: Python<'_>,
        pipeline: Py<PyPipeline>,
        bound: Option<f64>,
        seed: Option<Int>,
    ) -> PyResult<Self> {
        let mut rng = csprng(seed)?;
        let (pegasus, secrets) = pipeline.bind(py).get().comparison_parts();
        let pegasus = Arc::clone(pegasus);
        let inner = crate::common::release(py, || {
            let key = ComparisonKey::generate(pegasus.evaluator(), secrets, &mut rng)?;
            Comparator::new(Shared(pegasus), key, bound)
        })
        .map_err(comparison_error)?;
        Ok(Self { pipeline, inner })
    }

    /// The declared bound V of the values.
    #[getter]
    fn bound(&self) -> f64 {
        self.inner.bound()
    }

    /// The tables' domain B (the session's ``input_bound``).
    #[getter]
    fn domain(&self) -> f64 {
        self.inner.domain()
    }

    /// pair_error_bound() -> float: the error bound of one min or max (PEGASUS Eq. (3) at six standard
    /// deviations for its tables, plus the key switch back).
    fn pair_error_bound(&self) -> PyResult<f64> {
        self.inner.pair_error_bound().map_err(comparison_error)
    }

    /// tree_error_bound(t) -> float: the error bound of the min or max of ``t`` values.
    fn tree_error_bound(&self, t: Int) -> PyResult<f64> {
        self.inner
            .tree_error_bound(t.get("t")?)
            .map_err(comparison_error)
    }

    /// sort_error_bound(t) -> float: the error bound of every output of a sort of ``t`` values.
    fn sort_error_bound(&self, t: Int) -> PyResult<f64> {
        self.inner
            .sort_error_bound(t.get("t")?)
            .map_err(comparison_error)
    }

    /// max_pool_error_bound(t) -> float: the error bound of max-pooling over ``t`` values.
    fn max_pool_error_bound(&self, t: Int) -> PyResult<f64> {
        self.inner
            .max_pool_error_bound(t.get("t")?)
            .map_err(comparison_error)
    }

    /// argmin_threshold(t) -> float: the threshold tau of arg-min over ``t`` values (bits
    /// ``m_i - min <= tau``).
    fn argmin_threshold(&self, t: Int) -> PyResult<f64> {
        self.inner
            .argmin_threshold(t.get("t")?)
            .map_err(comparison_error)
    }

    /// argmin_resolution(t) -> float: the gap between the minimum and the next value above which
    /// arg-min over ``t`` values is exact (2 tau).
    fn argmin_resolution(&self, t: Int) -> PyResult<f64> {
        self.inner
            .argmin_resolution(t.get("t")?)
            .map_err(comparison_error)
    }

    /// min_and_argmin_error_bound(t, repack=False) -> float: the error bound of the minima of
    /// ``min_and_argmin`` (LWE side) or ``min_and_argmin_ckks`` (``repack=True``: one identity table
    /// more, before the repacking's own error).
    #[pyo3(signature = (t, repack = false))]
    fn min_and_argmin_error_bound(&self, t: Int, repack: bool) -> PyResult<f64> {
        let form = if repack { Form::Repack } else { Form::Lwe };
        self.inner
            .min_and_argmin_error_bound(t.get("t")?, form)
            .map_err(comparison_error)
    }

    /// min(a, b) -> LweCiphertext: the minimum of two LWE ciphertexts of the session (two tables).
    fn min(
        &self,
        py: Python<'_>,
        a: &Bound<'_, PyAny>,
        b: &Bound<'_, PyAny>,
    ) -> PyResult<PyLweCiphertext> {
        let (a, b) = (read_one(a)?, read_one(b)?);
        crate::common::release(py, || self.inner.min(&a, &b))
            .map(PyLweCiphertext::from)
            .map_err(comparison_error)
    }

    /// max(a, b) -> LweCiphertext: the maximum of two LWE ciphertexts of the session (two tables).
    fn max(
        &self,
        py: Python<'_>,
        a: &Bound<'_, PyAny>,
        b: &Bound<'_, PyAny>,
    ) -> PyResult<PyLweCiphertext> {
        let (a, b) = (read_one(a)?, read_one(b)?);
        crate::common::release(py, || self.inner.max(&a, &b))
            .map(PyLweCiphertext::from)
            .map_err(comparison_error)
    }

    /// min_of(cts, t) -> list[LweCiphertext]: the minimum of every group of ``t`` consecutive
    /// ciphertexts (a tree, ``2 (t - 1)`` tables per group).
    fn min_of(
        &self,
        py: Python<'_>,
        cts: &Bound<'_, PyAny>,
        t: Int,
    ) -> PyResult<Vec<PyLweCiphertext>> {
        let t = t.get("t")?;
        self.lwe(py, cts, |c, x| c.min_of(x, t, Form::Lwe))
    }

    /// max_of(cts, t) -> list[LweCiphertext]: the maximum of every group of ``t`` consecutive
    /// ciphertexts.
    fn max_of(
        &self,
        py: Python<'_>,
        cts: &Bound<'_, PyAny>,
        t: Int,
    ) -> PyResult<Vec<PyLweCiphertext>> {
        let t = t.get("t")?;
        self.lwe(py, cts, |c, x| c.max_of(x, t, Form::Lwe))
    }

    /// max_pool(cts, t) -> list[LweCiphertext]: max-pooling over groups of ``t`` (a power of two)
    /// consecutive ciphertexts by the scaled max (``t`` tables per group; values within ``domain / t``).
    fn max_pool(
        &self,
        py: Python<'_>,
        cts: &Bound<'_, PyAny>,
        t: Int,
    ) -> PyResult<Vec<PyLweCiphertext>> {
        let t = t.get("t")?;
        self.lwe(py, cts, |c, x| c.max_pool(x, t, Form::Lwe))
    }

    /// sort(cts, descending=False) -> list[LweCiphertext]: bitonic sort of a power of two of ciphertexts.
    #[pyo3(signature = (cts, descending = false))]
    fn sort(
        &self,
        py: Python<'_>,
        cts: &Bound<'_, PyAny>,
        descending: bool,
    ) -> PyResult<Vec<PyLweCiphertext>> {
        self.lwe(py, cts, |c, x| c.sort(x, order(descending), Form::Lwe))
    }

    /// argmin(cts, t) -> list[LweCiphertext]: bits ``I(m_i - min <= tau)`` for every group of ``t``
    /// consecutive ciphertexts, in their order.
    fn argmin(
        &self,
        py: Python<'_>,
        cts: &Bound<'_, PyAny>,
        t: Int,
    ) -> PyResult<Vec<PyLweCiphertext>> {
        let t = t.get("t")?;
        self.lwe(py, cts, |c, x| c.argmin(x, t, Form::Lwe))
    }

    /// argmax(cts, t) -> list[LweCiphertext]: bits ``I(max - m_i <= tau)``, as ``argmin``.
    fn argmax(
        &self,
        py: Python<'_>,
        cts: &Bound<'_, PyAny>,
        t: Int,
    ) -> PyResult<Vec<PyLweCiphertext>> {
        let t = t.get("t")?;
        self.lwe(py, cts, |c, x| c.argmax(x, t, Form::Lwe))
    }

    /// min_and_argmin(cts, t) -> (list[LweCiphertext], list[LweCiphertext]): the minimum of every group
    /// of ``t`` consecutive ciphertexts and the arg-min bits, from one min-tree (``2t - 1`` tables per
    /// group instead of ``4t - 3`` for ``min`` and ``argmin``).
    fn min_and_argmin(
        &self,
        py: Python<'_>,
        cts: &Bound<'_, PyAny>,
        t: Int,
    ) -> PyResult<(Vec<PyLweCiphertext>, Vec<PyLweCiphertext>)> {
        let t = t.get("t")?;
        self.lwe_pair(py, cts, |c, x| c.min_and_argmin(x, t, Form::Lwe))
    }

    /// max_and_argmax(cts, t) -> (list[LweCiphertext], list[LweCiphertext]): as ``min_and_argmin``.
    fn max_and_argmax(
        &self,
        py: Python<'_>,
        cts: &Bound<'_, PyAny>,
        t: Int,
    ) -> PyResult<(Vec<PyLweCiphertext>, Vec<PyLweCiphertext>)> {
        let t = t.get("t")?;
        self.lwe_pair(py, cts, |c, x| c.max_and_argmax(x, t, Form::Lwe))
    }

    /// min_and_argmin_ckks(ct, t) -> (ckks.Ciphertext, ckks.Ciphertext): the minima of groups of ``t``
    /// consecutive slots (in the first slots) and the arg-min bits (in the slots of their values), from
    /// one extraction, one min-tree and one repacking (what OpenFHE's ``EvalMinSchemeSwitching``
    /// returns), one level below the other CKKS results.
    fn min_and_argmin_ckks(
        &self,
        py: Python<'_>,
        ct: &crate::ckks::PyCiphertext,
        t: Int,
    ) -> PyResult<(crate::ckks::PyCiphertext, crate::ckks::PyCiphertext)> {
        let t = t.get("t")?;
        self.ckks_pair(py, ct, "min_and_argmin", |c, x| c.min_and_argmin_ckks(x, t))
    }

    /// max_and_argmax_ckks(ct, t) -> (ckks.Ciphertext, ckks.Ciphertext): as ``min_and_argmin_ckks``.
    fn max_and_argmax_ckks(
        &self,
        py: Python<'_>,
        ct: &crate::ckks::PyCiphertext,
        t: Int,
    ) -> PyResult<(crate::ckks::PyCiphertext, crate::ckks::PyCiphertext)> {
        let t = t.get("t")?;
        self.ckks_pair(py, ct, "max_and_argmax", |c, x| c.max_and_argmax_ckks(x, t))
    }

    /// min_ckks(ct, t) -> ckks.Ciphertext: the minima of groups of ``t`` consecutive slots, in the first
    /// slots.
    fn min_ckks(
        &self,
        py: Python<'_>,
        ct: &crate::ckks::PyCiphertext,
        t: Int,
    ) -> PyResult<crate::ckks::PyCiphertext> {
        let t = t.get("t")?;
        self.ckks(py, ct, "min", |c, x| c.min_ckks(x, t))
    }

    /// max_ckks(ct, t) -> ckks.Ciphertext: the maxima of groups of ``t`` consecutive slots, in the first
    /// slots.
    fn max_ckks(
        &self,
        py: Python<'_>,
        ct: &crate::ckks::PyCiphertext,
        t: Int,
    ) -> PyResult<crate::ckks::PyCiphertext> {
        let t = t.get("t")?;
        self.ckks(py, ct, "max", |c, x| c.max_ckks(x, t))
    }

    /// max_pool_ckks(ct, t) -> ckks.Ciphertext: max-pooling over groups of ``t`` consecutive slots, the
    /// results in the first ``slots / t`` slots.
    fn max_pool_ckks(
        &self,
        py: Python<'_>,
        ct: &crate::ckks::PyCiphertext,
        t: Int,
    ) -> PyResult<crate::ckks::PyCiphertext> {
        let t = t.get("t")?;
        self.ckks(py, ct, "max_pool", |c, x| c.max_pool_ckks(x, t))
    }

    /// sort_ckks(ct, descending=False) -> ckks.Ciphertext: all the slots sorted.
    #[pyo3(signature = (ct, descending = false))]
    fn sort_ckks(
        &self,
        py: Python<'_>,
        ct: &crate::ckks::PyCiphertext,
        descending: bool,
    ) -> PyResult<crate::ckks::PyCiphertext> {
        self.ckks(py, ct, "sort", |c, x| c.sort_ckks(x, order(descending)))
    }

    /// argmin_ckks(ct, t) -> ckks.Ciphertext: the arg-min bits of groups of ``t`` consecutive slots, in
    /// their slots.
    fn argmin_ckks(
        &self,
        py: Python<'_>,
        ct: &crate::ckks::PyCiphertext,
        t: Int,
    ) -> PyResult<crate::ckks::PyCiphertext> {
        let t = t.get("t")?;
        self.ckks(py, ct, "argmin", |c, x| c.argmin_ckks(x, t))
    }

    /// argmax_ckks(ct, t) -> ckks.Ciphertext: the arg-max bits of groups of ``t`` consecutive slots, in
    /// their slots.
    fn argmax_ckks(
        &self,
        py: Python<'_>,
        ct: &crate::ckks::PyCiphertext,
        t: Int,
    ) -> PyResult<crate::ckks::PyCiphertext> {
        let t = t.get("t")?;
        self.ckks(py, ct, "argmax", |c, x| c.argmax_ckks(x, t))
    }

    fn __repr__(&self) -> String {
        format!(
            "Comparator(bound={}, domain={})",
            self.inner.bound(),
            self.inner.domain()
        )
    }

    /// Refuses pickling: the comparator belongs to a session, which holds secret keys.
    fn __reduce__(&self) -> PyResult<PyObject> {
        Err(pyo3::exceptions::PyTypeError::new_err(
            "rnsfhe.apps.Comparator cannot be pickled: it belongs to a pegasus.Session, which holds \
             secret keys; make a new one on the receiving side",
        ))
    }
}

/// One LWE ciphertext (ValueError for a sequence of another length).
fn read_one(obj: &Bound<'_, PyAny>) -> PyResult<LweCiphertext> {
    let mut cts = read_ciphertexts(obj)?;
    match (cts.pop(), cts.is_empty()) {
        (Some(ct), true) => Ok(ct),
        _ => Err(pyo3::exceptions::PyValueError::new_err(
            "expected one rnsfhe.lwe.LweCiphertext",
        )),
    }
}
