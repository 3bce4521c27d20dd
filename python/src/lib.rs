//! `rnsfhe._rnsfhe`: the PyO3 extension behind the Python package `rnsfhe`.
//!
//! This crate is the only place that knows PyO3. It converts Python values to Rust ones, calls the Rust
//! layers, and converts results back: integers as Python `int`, polynomials as numpy `uint64` arrays.
//! Every error of the Rust layers becomes a Python `ValueError` carrying the Rust message; heavy calls
//! release the GIL.
//!
//! Sections below, one per Rust layer: primes (rnsfhe-math), NTT (rnsfhe-math), basis conversion
//! (rnsfhe-ring). Each function is registered in [`_rnsfhe`] at the bottom. The CKKS scheme lives in
//! [`ckks`], registered as the submodule `_rnsfhe.ckks` (the Python module `rnsfhe.ckks` re-exports it);
//! BFV likewise in [`bfv`] (`_rnsfhe.bfv`, re-exported by `rnsfhe.bfv`), the applications of
//! `rnsfhe-apps` in [`apps`] (`_rnsfhe.apps`, completed by the Python module `rnsfhe.apps`), the LWE look-up
//! tables in [`lwe`] and the whole PEGASUS pipeline in [`pegasus`] (`_rnsfhe.pegasus`, completed by
//! `rnsfhe.pegasus`, whose ciphertexts are the CKKS ones of [`ckks`] carrying the pipeline). What the
//! bindings share (error conversion, numpy input, and the classes and methods both schemes have) is in
//! [`common`].

use numpy::{
    dtype, PyArray1, PyArray2, PyArrayDescrMethods, PyArrayMethods, PyUntypedArray,
    PyUntypedArrayMethods,
};
use pyo3::exceptions::{PyOverflowError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use rnsfhe::math::{primes, NttPlan};
use rnsfhe::ring::conversion::BasisConverter;
use rnsfhe::ring::{Coeff, Poly, RnsBasis};

use crate::common::{mode_name, parse_mode, value_error, Int};

/// mimalloc for every Rust allocation of the extension (Python's own objects keep Python's allocator): as
/// in the `rnsfhe` command, it keeps freed multi-MB polynomial buffers mapped instead of page-faulting
/// them back on every operation (10-15 % of a BFV multiplication at depth 20).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

mod apps;
mod bfv;
mod ckks;
mod common;
mod lwe;
mod pegasus;

/// Largest number of primes one search may return (bounds the memory a call can ask for).
const MAX_PRIME_COUNT: usize = 1 << 16;

fn check_count(count: usize) -> PyResult<()> {
    if count > MAX_PRIME_COUNT {
        return Err(PyValueError::new_err(format!(
            "count = {count} is out of range: at most {MAX_PRIME_COUNT} primes per search"
        )));
    }
    Ok(())
}

// ------------------------------------------------------------------------------------------------------
// Primes (rnsfhe_math::primes)
// ------------------------------------------------------------------------------------------------------

/// is_prime(n: int) -> bool
///
/// Deterministic Miller-Rabin primality test, exact for every integer in [0, 2^64).
#[pyfunction]
fn is_prime(n: Int) -> PyResult<bool> {
    Ok(primes::is_prime(n.get("n")?))
}

/// ntt_primes_near_power_of_two(bits: int, two_n: int, count: int) -> list[int]
///
/// `count` distinct primes p = 1 mod two_n closest to 2^bits, taken alternately above and below 2^bits so
/// that every prefix product stays close to 2^(bits * i) (the RNS-CKKS moduli chain, Appendix B).
/// `two_n` is 2N, a power of two up to 2^20; `bits` is in [10, 62].
///
/// Raises ValueError if the arguments are out of range or not enough primes exist.
#[pyfunction]
fn ntt_primes_near_power_of_two(
    py: Python<'_>,
    bits: Int,
    two_n: Int,
    count: Int,
) -> PyResult<Vec<u64>> {
    let (bits, two_n, count) = (bits.get("bits")?, two_n.get("two_n")?, count.get("count")?);
    check_count(count)?;
    py.allow_threads(|| primes::ntt_primes_near_power_of_two(bits, two_n, count))
        .map_err(value_error)
}

/// ntt_primes_of_bits(bits: int, two_n: int, count: int, exclude: Sequence[int] = ()) -> list[int]
///
/// `count` distinct primes p = 1 mod two_n of exactly `bits` bits, largest first, skipping the primes in
/// `exclude` (for special key-switching moduli and BFV moduli, where closeness to 2^bits does not matter).
///
/// Raises ValueError if the arguments are out of range or not enough primes exist.
#[pyfunction]
#[pyo3(signature = (bits, two_n, count, exclude = Vec::new()))]
#[pyo3(text_signature = "(bits, two_n, count, exclude=())")]
fn ntt_primes_of_bits(
    py: Python<'_>,
    bits: Int,
    two_n: Int,
    count: Int,
    exclude: Vec<Int>,
) -> PyResult<Vec<u64>> {
    let (bits, two_n, count) = (bits.get("bits")?, two_n.get("two_n")?, count.get("count")?);
    let exclude: Vec<u64> = Int::get_all(&exclude, "exclude")?;
    check_count(count)?;
    py.allow_threads(|| primes::ntt_primes_of_bits(bits, two_n, count, &exclude))
        .map_err(value_error)
}

/// qu_xu_max_eta(m: int, two_n: int, count: int) -> int
///
/// Qu-Xu Algorithm 2: the largest eta such that at least `count` primes p = 1 mod two_n lie in
/// [2^m / (1 + 2^-eta), 2^m / (1 - 2^-eta)]. Larger eta means primes closer to 2^m and a smaller failure
/// probability of integer-only exact basis conversion.
///
/// Raises ValueError if the arguments are out of range or no eta >= 1 admits `count` primes.
#[pyfunction]
fn qu_xu_max_eta(py: Python<'_>, m: Int, two_n: Int, count: Int) -> PyResult<u32> {
    let (m, two_n, count) = (m.get("m")?, two_n.get("two_n")?, count.get("count")?);
    check_count(count)?;
    py.allow_threads(|| primes::qu_xu_max_eta(m, two_n, count))
        .map_err(value_error)
}

/// qu_xu_primes(m: int, eta: int, two_n: int, count: int, exclude: Sequence[int] = ()) -> list[int]
///
/// Qu-Xu Algorithm 3: the first `count` primes p = 1 mod two_n walking down from the top of the interval
/// [2^m / (1 + 2^-eta), 2^m / (1 - 2^-eta)], skipping the primes in `exclude`. Use `qu_xu_max_eta` for eta.
///
/// Raises ValueError if the arguments are out of range or the interval holds fewer than `count` primes.
#[pyfunction]
#[pyo3(signature = (m, eta, two_n, count, exclude = Vec::new()))]
#[pyo3(text_signature = "(m, eta, two_n, count, exclude=())")]
fn qu_xu_primes(
    py: Python<'_>,
    m: Int,
    eta: Int,
    two_n: Int,
    count: Int,
    exclude: Vec<Int>,
) -> PyResult<Vec<u64>> {
    let (m, eta, two_n): (u32, u32, u64) = (m.get("m")?, eta.get("eta")?, two_n.get("two_n")?);
    let count = count.get("count")?;
    let exclude: Vec<u64> = Int::get_all(&exclude, "exclude")?;
    check_count(count)?;
    // The interval needs 1 <= eta (eta = 0 is the whole half-line) and 2^(m + eta) to fit the search.
    if !(1..=64).contains(&eta) {
        return Err(PyValueError::new_err(format!(
            "eta = {eta} is out of range: it must be in [1, 64]"
        )));
    }
    py.allow_threads(|| primes::qu_xu_primes(m, eta, two_n, count, &exclude))
        .map_err(value_error)
}

// ------------------------------------------------------------------------------------------------------
// NTT (rnsfhe_math::ntt)
// ------------------------------------------------------------------------------------------------------

/// Reads a 1-D sequence of non-negative integers (a numpy integer array or any Python sequence of ints)
/// into a vector. Non-integer input raises TypeError, negative or too large values ValueError.
fn read_coefficients(a: &Bound<'_, PyAny>) -> PyResult<Vec<u64>> {
    let py = a.py();
    if let Ok(array) = a.downcast::<PyUntypedArray>() {
        if array.ndim() != 1 {
            return Err(PyValueError::new_err(format!(
                "expected a 1-D array of coefficients, got {} dimensions",
                array.ndim()
            )));
        }
        let kind = array.dtype().kind();
        let converted = match kind {
            b'u' => a.call_method1("astype", (dtype::<u64>(py),))?,
            b'i' => {
                let signed = a.call_method1("astype", (dtype::<i64>(py),))?;
                let signed = signed.downcast::<PyArray1<i64>>()?.readonly();
                return signed
                    .as_array()
                    .iter()
                    .enumerate()
                    .map(|(i, &x)| {
                        u64::try_from(x).map_err(|_| {
                            PyValueError::new_err(format!("coefficient {i} is negative ({x})"))
                        })
                    })
                    .collect();
            }
            _ => {
                return Err(PyTypeError::new_err(format!(
                    "expected an integer array, got dtype {}",
                    array.dtype()
                )))
            }
        };
        let converted = converted.downcast::<PyArray1<u64>>()?.readonly();
        return Ok(match converted.as_slice() {
            Ok(s) => s.to_vec(),
            Err(_) => converted.as_array().iter().copied().collect(),
        });
    }
    a.extract::<Vec<u64>>().map_err(|err| {
        if err.is_instance_of::<PyOverflowError>(py) {
            PyValueError::new_err(format!("coefficients must be integers in [0, 2^64): {err}"))
        } else {
            err
        }
    })
}

/// A negacyclic number-theoretic transform of size n modulo a prime p = 1 mod 2n (p < 2^62), over
/// Z_p[X]/(X^n + 1).
///
/// NttPlan(n, p): n is a power of two in [16, 2^17]. Raises ValueError otherwise, or if p is not a prime
/// congruent to 1 mod 2n. The engine is tfhe-ntt (AVX2 / AVX-512 / IFMA chosen at run time).
///
/// forward(a) maps coefficients to evaluations at the odd powers of `psi` in bit-reversed order, inverse(a)
/// maps them back; a pointwise product of two forward transforms is, after inverse, the negacyclic product.
#[pyclass(name = "NttPlan", module = "rnsfhe", frozen)]
struct PyNttPlan {
    plan: NttPlan,
}

impl PyNttPlan {
    /// Reads `a`, checks its length and range, and applies `transform` with the GIL released.
    fn apply<'py>(
        &self,
        a: &Bound<'py, PyAny>,
        transform: fn(&NttPlan, &mut [u64]) -> rnsfhe::math::Result<()>,
    ) -> PyResult<Bound<'py, PyArray1<u64>>> {
        let py = a.py();
        let mut v = read_coefficients(a)?;
        let plan = &self.plan;
        let p = plan.modulus().value();
        py.allow_threads(|| {
            if let Some((i, &x)) = v.iter().enumerate().find(|(_, &x)| x >= p) {
                return Err(format!(
                    "coefficient {i} = {x} is not reduced: NTT input must be in [0, p) with p = {p}"
                ));
            }
            transform(plan, &mut v).map_err(|e| e.to_string())
        })
        .map_err(PyValueError::new_err)?;
        Ok(PyArray1::from_vec(py, v))
    }
}

#[pymethods]
impl PyNttPlan {
    #[new]
    fn new(py: Python<'_>, n: Int, p: Int) -> PyResult<Self> {
        let (n, p) = (n.get("n")?, p.get("p")?);
        let plan = py
            .allow_threads(|| NttPlan::new(n, p))
            .map_err(value_error)?;
        Ok(Self { plan })
    }

    /// forward(a) -> numpy.ndarray[uint64]
    ///
    /// Forward negacyclic NTT of the n coefficients `a` (a list or a 1-D numpy integer array, values in
    /// [0, p)). Returns a new uint64 array of evaluations in [0, p), in bit-reversed order; `a` is not
    /// modified. Raises ValueError for a wrong length or unreduced values.
    fn forward<'py>(&self, a: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyArray1<u64>>> {
        self.apply(a, NttPlan::forward)
    }

    /// inverse(a) -> numpy.ndarray[uint64]
    ///
    /// Inverse negacyclic NTT (including the factor 1/n): evaluations in [0, p) back to coefficients.
    /// Returns a new uint64 array; raises ValueError for a wrong length or unreduced values.
    fn inverse<'py>(&self, a: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyArray1<u64>>> {
        self.apply(a, NttPlan::inverse)
    }

    /// The ring degree n.
    #[getter]
    fn n(&self) -> usize {
        self.plan.degree()
    }

    /// The prime modulus p.
    #[getter]
    fn p(&self) -> u64 {
        self.plan.modulus().value()
    }

    /// The primitive 2n-th root of unity psi mod p: entry j of forward(a) is a(psi^(2 bitrev(j) + 1)).
    #[getter]
    fn psi(&self) -> u64 {
        self.plan.psi()
    }

    /// Whether the engine runs its AVX-512 IFMA kernels for this plan (primes below 2^50 on IFMA CPUs).
    #[getter]
    fn uses_ifma(&self) -> bool {
        self.plan.uses_ifma()
    }

    fn __repr__(&self) -> String {
        format!("NttPlan(n={}, p={})", self.n(), self.p())
    }

    /// Pickling rebuilds the plan from (n, p).
    fn __reduce__(slf: &Bound<'_, Self>) -> (Py<pyo3::types::PyType>, (usize, u64)) {
        let this = slf.get();
        (slf.get_type().unbind(), (this.n(), this.p()))
    }
}

// ------------------------------------------------------------------------------------------------------
// Basis conversion (rnsfhe_ring::conversion)
// ------------------------------------------------------------------------------------------------------

/// Reads a 2-D uint64 array of shape (limbs, n) into a limb-major buffer.
fn read_limbs(a: &Bound<'_, PyAny>, limbs: usize, n: usize) -> PyResult<Vec<u64>> {
    let array = a.downcast::<PyArray2<u64>>().map_err(|_| {
        PyTypeError::new_err("expected a 2-D numpy array of dtype uint64 with shape (limbs, n)")
    })?;
    let ro = array.readonly();
    let shape = ro.shape();
    if shape != [limbs, n] {
        return Err(PyValueError::new_err(format!(
            "expected shape ({limbs}, {n}), got {shape:?}"
        )));
    }
    Ok(match ro.as_slice() {
        Ok(s) => s.to_vec(),
        Err(_) => ro.as_array().iter().copied().collect(),
    })
}

/// RNS basis conversion Conv_{C -> B} from the source primes C to the target primes B, for polynomials of
/// degree n (the primes must be NTT primes for n: p = 1 mod 2n).
///
/// BasisConverter(n, source, target, mode="fast"): mode is
///
/// * "fast" (Bajard, with centered y_i; RNS-CKKS Section 2.2): the output is x + alpha Q with
///   -ceil(l/2) <= alpha < ceil(l/2), l = len(source);
/// * "exact_float" (HPS Section 2.2): the centered representative of x, via a floating-point rounding term;
/// * "exact_integer" (Qu-Xu Algorithms 1 and 4): the centered representative with integer operations only;
///   the source primes must lie within 2^-eta of a power of two (see qu_xu_primes) or ValueError is raised.
///
/// convert(x) takes a numpy uint64 array of shape (len(source), n) (residue i of coefficient c at [i, c])
/// and returns one of shape (len(target), n). The GIL is released while it runs.
#[pyclass(name = "BasisConverter", module = "rnsfhe", frozen)]
struct PyBasisConverter {
    converter: BasisConverter,
}

impl PyBasisConverter {
    /// Reads `x` (shape (source limbs, n)) and applies a per-coefficient function of the converter with the
    /// GIL released.
    fn per_coefficient<'py>(
        &self,
        x: &Bound<'py, PyAny>,
        f: fn(&BasisConverter, &[u64]) -> rnsfhe::ring::Result<Vec<u64>>,
    ) -> PyResult<Bound<'py, PyArray1<u64>>> {
        let py = x.py();
        let from = self.converter.from();
        let input = read_limbs(x, from.len(), from.degree())?;
        let v = py
            .allow_threads(|| f(&self.converter, &input))
            .map_err(value_error)?;
        Ok(PyArray1::from_vec(py, v))
    }
}

#[pymethods]
impl PyBasisConverter {
    #[new]
    #[pyo3(signature = (n, source, target, mode = "fast"))]
    fn new(
        py: Python<'_>,
        n: Int,
        source: Vec<Int>,
        target: Vec<Int>,
        mode: &str,
    ) -> PyResult<Self> {
        let n = n.get("n")?;
        let source: Vec<u64> = Int::get_all(&source, "source")?;
        let target: Vec<u64> = Int::get_all(&target, "target")?;
        let mode = parse_mode(mode)?;
        let converter = py
            .allow_threads(|| -> rnsfhe::ring::Result<BasisConverter> {
                let from = RnsBasis::new(n, &source)?;
                let to = RnsBasis::new(n, &target)?;
                BasisConverter::new(&from, &to, mode)
            })
            .map_err(value_error)?;
        Ok(Self { converter })
    }

    /// convert(x) -> numpy.ndarray[uint64] of shape (len(target), n)
    fn convert<'py>(&self, x: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyArray2<u64>>> {
        let py = x.py();
        let (l, k, n) = (
            self.converter.from().len(),
            self.converter.to().len(),
            self.converter.from().degree(),
        );
        let input = read_limbs(x, l, n)?;
        let out = py
            .allow_threads(|| {
                let poly = Poly::<Coeff>::from_data(self.converter.from(), input)?;
                self.converter.convert(&poly)
            })
            .map_err(value_error)?;
        let rows: Vec<Vec<u64>> = out.limbs().map(<[u64]>::to_vec).collect();
        debug_assert_eq!(rows.len(), k);
        PyArray2::from_vec2(py, &rows).map_err(value_error)
    }

    /// error_terms(x) -> numpy.ndarray[uint64] of shape (n,): the multiple v of Q the mode subtracts for each
    /// coefficient (for "fast" the number of y_i above q_i / 2; round(sum_i y_i / q_i) for the exact modes).
    fn error_terms<'py>(&self, x: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyArray1<u64>>> {
        self.per_coefficient(x, BasisConverter::error_terms)
    }

    /// unguarded_error_terms(x) -> numpy.ndarray[uint64] of shape (n,): the raw Qu-Xu Algorithm 4 term
    /// (with rounding) without the exactness guard; it differs from error_terms by +-1 with probability below
    /// theorem1_bound (Qu-Xu Theorem 1). Only for mode "exact_integer".
    fn unguarded_error_terms<'py>(
        &self,
        x: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyArray1<u64>>> {
        self.per_coefficient(x, BasisConverter::qu_xu_error_terms_unguarded)
    }

    /// The conversion mode: "fast", "exact_float" or "exact_integer".
    #[getter]
    fn mode(&self) -> &'static str {
        mode_name(self.converter.mode())
    }

    /// Qu-Xu eta of the source primes (None unless the mode is "exact_integer").
    #[getter]
    fn eta(&self) -> Option<u32> {
        self.converter.eta()
    }

    /// Qu-Xu Theorem 1 bound l 2^-eta / (1 - 2^-eta) on the failure rate of the unguarded term (None unless
    /// the mode is "exact_integer").
    #[getter]
    fn theorem1_bound(&self) -> Option<f64> {
        self.converter.theorem1_bound()
    }

    fn __repr__(&self) -> String {
        format!(
            "BasisConverter(n={}, source={:?}, target={:?}, mode={:?})",
            self.converter.from().degree(),
            self.converter.from().values(),
            self.converter.to().values(),
            self.mode()
        )
    }
}

/// rnsfhe._rnsfhe: the compiled core of the `rnsfhe` package (import from `rnsfhe`, not from here).
#[pymodule]
fn _rnsfhe(m: &Bound<'_, PyModule>) -> PyResult<()> {
    common::note_importing_thread();
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    // Primes.
    m.add_function(wrap_pyfunction!(is_prime, m)?)?;
    m.add_function(wrap_pyfunction!(ntt_primes_near_power_of_two, m)?)?;
    m.add_function(wrap_pyfunction!(ntt_primes_of_bits, m)?)?;
    m.add_function(wrap_pyfunction!(qu_xu_max_eta, m)?)?;
    m.add_function(wrap_pyfunction!(qu_xu_primes, m)?)?;
    // NTT.
    m.add_class::<PyNttPlan>()?;
    // Basis conversion.
    m.add_class::<PyBasisConverter>()?;
    // Serialization errors of every scheme.
    m.add("DecodeError", m.py().get_type::<common::DecodeError>())?;
    m.add_class::<common::PyWireHeader>()?;
    m.add_function(wrap_pyfunction!(common::read_header, m)?)?;
    m.add_function(wrap_pyfunction!(common::get_load_limits, m)?)?;
    m.add_function(wrap_pyfunction!(common::reseal, m)?)?;
    m.add_function(wrap_pyfunction!(common::set_load_limits, m)?)?;
    // CKKS (submodule `ckks`).
    ckks::register(m)?;
    // BFV (submodule `bfv`).
    bfv::register(m)?;
    // Applications: encrypted logistic regression (submodule `apps`).
    apps::register(m)?;
    // The LWE half of PEGASUS: LWE ciphertexts and look-up tables (submodule `lwe`).
    lwe::register(m)?;
    // The whole PEGASUS pipeline: CKKS -> LWE -> look-up tables -> CKKS (submodule `pegasus`).
    pegasus::register(m)?;
    Ok(())
}
