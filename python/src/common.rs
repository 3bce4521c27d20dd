//! What the bindings share: error conversion, numpy input, conversion modes, presets, warnings, the
//! registration of a scheme submodule, serialization (the `DecodeError` exception, the [`WireContext`],
//! [`WireObject`] and [`WireClass`] traits, the process-wide [`ContextCache`], pickling through
//! `rnsfhe._common._load`), and the macros that write the Python classes and `#[pymethods]` the scheme
//! submodules [`crate::ckks`] and [`crate::bfv`] have in common.
//!
//! The two scheme submodules expose one object model under the same Rust names: `PyContext`, `PyKeySet`,
//! `PySecretKey`, `PyPublicKey`, `PyRelinKey`, `PyGaloisKeys`, `PyEncryptor`, `PyDecryptor`, `PyEvaluator`
//! and `PyCiphertext`, a shared evaluator `Eval`, and a constant `SCHEME: Scheme` naming the scheme. The
//! macros refer to these names at the place they are invoked (see each macro for what it needs).
//!
//! The `*_methods!` macros take a scheme's `impl` block and add the shared members to it (PyO3 allows one
//! `#[pymethods]` block per class). rustfmt does not format inside macro invocations: keep those blocks
//! as rustfmt would format them without the macro line.

use std::cell::RefCell;
use std::fmt::{Debug, Display};
use std::sync::{Arc, Mutex, Weak};

use numpy::PyUntypedArray;
use pyo3::exceptions::{PyOverflowError, PyTypeError, PyUserWarning, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyType};
use rnsfhe::core::serialization::LoadLimits;
use rnsfhe::math::wire::{self, Integrity, MacKey, PublicRandomness};
use rnsfhe::ring::conversion::ConversionMode;
use rnsfhe::ring::GaloisGroup;

/// Runs `op` with the GIL released, on a worker thread of a rayon pool, and returns its result: what
/// every homomorphic operation, encryption, decryption and key generation of the bindings goes through.
///
/// Called from a Python thread, which is not a worker of a pool, each parallel section of an operation
/// (dozens in a key switch: one per NTT batch, basis conversion, inner product) would be injected into
/// the global pool separately while the caller sleeps, and cost two wake-ups each (the worker's, then the
/// caller's). With the whole operation on a worker, its sections are forks of that worker, as in a Rust
/// program running inside its pool (`ThreadPool::install`):
///
/// * with one thread (`RAYON_NUM_THREADS=1`), the calling thread becomes the one worker of a pool of its
///   own ([`adopt_thread`]) and runs everything itself: no hand-off at all, and Python threads run
///   their operations side by side instead of queueing for the one global worker;
/// * with more, the thread that imported rnsfhe becomes the first worker of a pool of that many
///   threads: it runs its operations itself and the other workers take its forks, so that two threads
///   from Python scale like two threads from Rust; other Python threads move each operation to a
///   worker of the global pool ([`on_pool`]: one hand-off per operation).
///
/// `op` must not take the GIL (error conversions that build Python objects run after it returns): a
/// worker waiting for the GIL would stall the pool for a thread that holds the GIL and waits for it.
pub(crate) fn release<T: Send>(py: Python<'_>, op: impl FnOnce() -> T + Send) -> T {
    py.allow_threads(|| on_pool(op))
}

thread_local! {
    /// Whether this thread has tried to become the worker of a pool of its own ([`adopt_thread`]).
    static ADOPTED: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// The thread that imported the extension (the Python main thread, as a rule).
static IMPORTER: std::sync::OnceLock<std::thread::ThreadId> = std::sync::OnceLock::new();

/// Records the calling thread as the one that imported the extension (see [`adopt_thread`]).
pub(crate) fn note_importing_thread() {
    // A second import (a subinterpreter) keeps the first thread.
    let _ = IMPORTER.set(std::thread::current().id());
}

/// Makes the calling thread the first worker of a rayon pool of its own, of as many threads as the
/// global pool (`RAYON_NUM_THREADS`), once per thread: its operations then run on it, their forks taken
/// by the pool's other workers, without the hand-off of [`on_pool`] (two wake-ups, the worker's and the
/// caller's). With one thread every Python thread does this (the pool is the thread itself); with more,
/// only the thread that imported the extension, since each such pool keeps its other workers for the
/// life of the process (rayon keeps the registry of a pool that took over an existing thread,
/// `ThreadPoolBuilder::use_current_thread`), and a program that starts many short-lived Python threads
/// would collect idle workers. If rayon refuses, operations go to the global pool.
fn adopt_thread() {
    if rayon::current_thread_index().is_some() || ADOPTED.with(|a| a.replace(true)) {
        return;
    }
    let threads = rayon::current_num_threads();
    if threads != 1 && IMPORTER.get() != Some(&std::thread::current().id()) {
        return;
    }
    if let Ok(pool) = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .use_current_thread()
        .build()
    {
        // Dropping the pool would terminate it while this thread stays registered as its worker.
        std::mem::forget(pool);
    }
}

/// Runs `op` with the GIL released on the calling thread: for the operations of one pass over memory
/// (additions, negation: about 0.1 ms at N = 2^15), which have no parallel section worth a hand-off to
/// the pool (measured at PaperTable1L5: the hand-off of [`release`] made `ev.add` 1.4 times as long).
pub(crate) fn release_inline<T: Send>(py: Python<'_>, op: impl FnOnce() -> T + Send) -> T {
    adopt_thread();
    py.allow_threads(op)
}

/// [`release_inline`] for an operation of one pass over memory (`one_pass`), else [`release`].
pub(crate) fn release_as<T: Send>(
    py: Python<'_>,
    one_pass: bool,
    op: impl FnOnce() -> T + Send,
) -> T {
    if one_pass {
        release_inline(py, op)
    } else {
        release(py, op)
    }
}

/// `op()` on a worker of a rayon pool: directly when the calling thread is a worker of a pool (or
/// becomes the worker of its own, [`adopt_thread`]), else moved to a worker of the global pool
/// ([`rayon::scope`] runs its body on a worker and waits).
pub(crate) fn on_pool<T: Send>(op: impl FnOnce() -> T + Send) -> T {
    adopt_thread();
    if rayon::current_thread_index().is_some() {
        op()
    } else {
        rayon::scope(|_| op())
    }
}

/// The public key `keygen` makes, from its `public_key` keyword: `true` for the key over `Q` and the
/// first special prime ("extended", the default), `false` for the key over `Q` only ("over_q").
pub(crate) fn extended_public_key(kind: &str) -> PyResult<bool> {
    match kind {
        "extended" => Ok(true),
        "over_q" => Ok(false),
        other => Err(PyValueError::new_err(format!(
            "public_key must be \"extended\" (over Q and the first special prime: more precise fresh \
             ciphertexts, slower encryption) or \"over_q\" (over Q only), got {other:?}"
        ))),
    }
}

/// Converts an error of the Rust layers into a Python `ValueError` with the same message.
pub(crate) fn value_error(err: impl Display) -> PyErr {
    PyValueError::new_err(err.to_string())
}

/// A Python `ValueError` with the message of `err` followed by `hint` (a Python hint, or empty).
pub(crate) fn value_error_with_hint(err: impl Display, hint: &str) -> PyErr {
    PyValueError::new_err(format!("{err}{hint}"))
}

/// `"True"` or `"False"`, as Python prints a bool (for `__repr__`).
pub(crate) fn py_bool(b: bool) -> &'static str {
    if b {
        "True"
    } else {
        "False"
    }
}

// ------------------------------------------------------------------------------------------------------
// numpy and Python values
// ------------------------------------------------------------------------------------------------------

/// `numpy.asarray(obj)`.
pub(crate) fn as_array<'py>(obj: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyUntypedArray>> {
    let np = obj.py().import("numpy")?;
    Ok(np
        .call_method1("asarray", (obj,))?
        .downcast_into::<PyUntypedArray>()?)
}

/// The `ValueError` of an array of `ndim` dimensions where `expected` (a 1-D array of something) was.
pub(crate) fn wrong_dimensions(expected: impl Display, ndim: usize) -> PyErr {
    PyValueError::new_err(format!("{expected}, got {ndim} dimensions"))
}

/// A Python integer argument (an `int`, or anything with `__index__` such as a numpy integer), read
/// whatever its size and converted to the Rust type a binding needs by [`Int::get`], which raises a
/// `ValueError` naming the argument and the allowed range. PyO3's own integer extraction raises
/// `OverflowError` without the argument's name for a negative or too large value; every integer argument
/// of the bindings goes through this type instead. Anything else raises PyO3's `TypeError` naming the
/// argument.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Int {
    /// A value in the range of `i128`.
    Small(i128),
    /// A value beyond `i128` (its sign and bit length, for the message).
    Huge { negative: bool, bits: u64 },
}

impl Int {
    /// The integer `value` (a default of a signature).
    pub(crate) const fn new(value: i128) -> Self {
        Int::Small(value)
    }

    /// The value as a `T`, or a `ValueError` "`name` must be an integer in [min, max], got ...".
    pub(crate) fn get<T: IntType>(&self, name: &str) -> PyResult<T> {
        let converted = match *self {
            Int::Small(v) => T::try_from(v).ok(),
            Int::Huge { .. } => None,
        };
        converted.ok_or_else(|| {
            PyValueError::new_err(format!(
                "{name} must be an integer in [{}, {}], got {self}",
                T::MIN,
                T::MAX
            ))
        })
    }

    /// An optional argument as an optional `T` ([`Int::get`]).
    pub(crate) fn get_opt<T: IntType>(value: Option<Int>, name: &str) -> PyResult<Option<T>> {
        value.map(|v| v.get(name)).transpose()
    }

    /// A sequence argument as `T`s ([`Int::get`]; an element out of range is named `name[i]`).
    pub(crate) fn get_all<T: IntType>(values: &[Int], name: &str) -> PyResult<Vec<T>> {
        values
            .iter()
            .enumerate()
            .map(|(i, v)| v.get(&format!("{name}[{i}]")))
            .collect()
    }
}

impl Display for Int {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match *self {
            Int::Small(v) => write!(f, "{v}"),
            Int::Huge { negative, bits } => {
                write!(
                    f,
                    "{}an integer of {bits} bits",
                    if negative { "-" } else { "" }
                )
            }
        }
    }
}

impl<'py> FromPyObject<'py> for Int {
    fn extract_bound(ob: &Bound<'py, PyAny>) -> PyResult<Self> {
        match ob.extract::<i128>() {
            Ok(v) => Ok(Int::Small(v)),
            Err(err) if err.is_instance_of::<PyOverflowError>(ob.py()) => {
                let index = ob.py().import("operator")?.call_method1("index", (ob,))?;
                let negative = index.lt(0)?;
                let bits = index.call_method0("bit_length")?.extract()?;
                Ok(Int::Huge { negative, bits })
            }
            Err(err) => Err(err),
        }
    }
}

/// A Rust integer type an [`Int`] converts to, with its range.
pub(crate) trait IntType: TryFrom<i128> {
    /// The smallest value.
    const MIN: i128;
    /// The largest value.
    const MAX: i128;
}

macro_rules! int_types {
    ($($t:ty),*) => {$(
        impl IntType for $t {
            const MIN: i128 = <$t>::MIN as i128;
            const MAX: i128 = <$t>::MAX as i128;
        }
    )*};
}

int_types!(u8, u16, u32, u64, usize, i32, i64);

/// A Python callable `f(x: float) -> float` seen from Rust as `Fn(f64) -> f64`, with the GIL held. The
/// first exception raised by `f` (or a TypeError for a result that is not a real number) is kept and NaN
/// returned from then on, which stops the Rust consumer at once (a Chebyshev interpolation, a look-up table); [`PyCallable::finish`]
/// then raises the exception instead of the Rust result.
pub(crate) struct PyCallable<'a, 'py> {
    pub(crate) f: &'a Bound<'py, PyAny>,
    pub(crate) error: RefCell<Option<PyErr>>,
}

impl<'a, 'py> PyCallable<'a, 'py> {
    /// TypeError unless `f` is callable.
    pub(crate) fn new(f: &'a Bound<'py, PyAny>) -> PyResult<Self> {
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
    pub(crate) fn call(&self, x: f64) -> f64 {
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

    pub(crate) fn failed(&self) -> bool {
        self.error.borrow().is_some()
    }

    /// The exception `f` raised, if any; otherwise `result` (a Rust error through `error`).
    pub(crate) fn finish<T, E>(
        self,
        result: Result<T, E>,
        error: impl FnOnce(E) -> PyErr,
    ) -> PyResult<T> {
        match self.error.into_inner() {
            Some(err) => Err(err),
            None => result.map_err(error),
        }
    }
}

/// An arithmetic operation of a ciphertext with a right operand.
#[derive(Clone, Copy)]
pub(crate) enum BinOp {
    Add,
    Sub,
    /// `other - ct`.
    RSub,
    Mul,
}

/// The Python result of a binary operator: the new object, or `NotImplemented` (`None`: the operand is
/// not supported, so that Python tries the reflected operation of `other`).
pub(crate) fn operator_result<T>(py: Python<'_>, result: Option<T>) -> PyResult<PyObject>
where
    T: pyo3::PyClass + Into<pyo3::PyClassInitializer<T>>,
{
    match result {
        Some(obj) => Ok(Py::new(py, obj)?.into_any()),
        None => Ok(py.NotImplemented()),
    }
}

/// The result of a binary operation of an evaluator method, or (`None`: `other` is not an operand) a
/// `TypeError` naming the type of `other`; `expected` lists what would have been accepted.
pub(crate) fn require_operand<T>(
    result: Option<T>,
    other: &Bound<'_, PyAny>,
    expected: &str,
) -> PyResult<T> {
    match result {
        Some(obj) => Ok(obj),
        None => Err(PyTypeError::new_err(format!(
            "expected {expected}, got {}",
            other.get_type().name()?
        ))),
    }
}

// ------------------------------------------------------------------------------------------------------
// Basis conversion modes (rnsfhe_ring::conversion)
// ------------------------------------------------------------------------------------------------------

/// "fast", "exact_float" or "exact_integer".
pub(crate) fn parse_mode(mode: &str) -> PyResult<ConversionMode> {
    match mode {
        "fast" => Ok(ConversionMode::Fast),
        "exact_float" => Ok(ConversionMode::ExactFloat),
        "exact_integer" => Ok(ConversionMode::ExactInteger),
        other => Err(PyValueError::new_err(format!(
            "unknown conversion mode {other:?}: expected 'fast', 'exact_float' or 'exact_integer'"
        ))),
    }
}

/// The name [`parse_mode`] reads.
pub(crate) fn mode_name(mode: ConversionMode) -> &'static str {
    match mode {
        ConversionMode::Fast => "fast",
        ConversionMode::ExactFloat => "exact_float",
        ConversionMode::ExactInteger => "exact_integer",
    }
}

// ------------------------------------------------------------------------------------------------------
// Schemes
// ------------------------------------------------------------------------------------------------------

/// The name of a preset in Python: its Rust name ("Rec128N13", "T2Depth5").
pub(crate) fn preset_name(preset: impl Debug) -> String {
    format!("{preset:?}")
}

/// The names of `presets`, in order.
pub(crate) fn preset_names<P: Debug>(presets: &[P]) -> Vec<String> {
    presets.iter().map(preset_name).collect()
}

/// `"Name", ` for a context made from a preset, else empty (the start of a `Context` repr).
pub(crate) fn preset_prefix(preset: Option<impl Debug>) -> String {
    preset
        .map(|p| format!("{:?}, ", preset_name(p)))
        .unwrap_or_default()
}

/// Issues a Python `UserWarning` (insecure parameters the caller asked for).
pub(crate) fn warn_user(py: Python<'_>, message: &str) -> PyResult<()> {
    let msg = std::ffi::CString::new(message).unwrap_or_default();
    PyErr::warn(py, &py.get_type::<PyUserWarning>(), &msg, 1)
}

/// A scheme submodule as Python sees it: `rnsfhe.<module>`, "<name>" in messages.
pub(crate) struct Scheme {
    /// The submodule: `_rnsfhe.<module>`, re-exported by the Python module `rnsfhe.<module>`.
    pub(crate) module: &'static str,
    /// The scheme in messages ("CKKS", "BFV").
    pub(crate) name: &'static str,
}

impl Scheme {
    /// The `TypeError` of pickling `what` (the secret key and the objects holding keys), saying `why` and
    /// what to do instead.
    pub(crate) fn not_picklable(&self, what: &str, why: &str) -> PyErr {
        PyTypeError::new_err(format!(
            "rnsfhe.{}.{what} cannot be pickled: {why}",
            self.module
        ))
    }

    /// The preset of `presets` named `name` (case-insensitive), or a `ValueError` listing the names.
    pub(crate) fn find_preset<P: Copy + Debug>(&self, presets: &[P], name: &str) -> PyResult<P> {
        presets
            .iter()
            .copied()
            .find(|p| preset_name(p).eq_ignore_ascii_case(name))
            .ok_or_else(|| {
                PyValueError::new_err(format!(
                    "unknown {} preset {name:?}: expected one of {:?}",
                    self.name,
                    preset_names(presets)
                ))
            })
    }

    /// Builds the submodule `_rnsfhe.<module>` of `parent` with the classes and functions `fill` adds.
    /// It is also entered in `sys.modules` as `rnsfhe._rnsfhe.<module>`, so that the Python module
    /// `rnsfhe.<module>` can import its names.
    pub(crate) fn register(
        &self,
        parent: &Bound<'_, PyModule>,
        fill: impl FnOnce(&Bound<'_, PyModule>) -> PyResult<()>,
    ) -> PyResult<()> {
        let py = parent.py();
        let m = PyModule::new(py, self.module)?;
        // setattr, not add: add would also list the docstring in the module's __all__.
        m.setattr(
            "__doc__",
            format!(
                "{} bindings (import rnsfhe.{}, which re-exports them and adds Session).",
                self.name, self.module
            ),
        )?;
        fill(&m)?;
        parent.add_submodule(&m)?;
        py.import("sys")?
            .getattr("modules")?
            .set_item(format!("rnsfhe._rnsfhe.{}", self.module), &m)?;
        Ok(())
    }
}

// ------------------------------------------------------------------------------------------------------
// Serialization (the wire format of rnsfhe_math::wire)
// ------------------------------------------------------------------------------------------------------

pyo3::create_exception!(
    rnsfhe,
    DecodeError,
    PyValueError,
    "Bytes that do not decode to the object asked for (a subclass of ValueError): corrupted, truncated, \
     hostile, of another object kind or of other parameters.\n\n\
     Attributes: ``field`` (the field being read, as a path such as \"ciphertext.c0.limb[1]\" or \
     \"header.fingerprint\") and ``offset`` (its byte offset from the start of the object). The message \
     is the Rust message: field, offset and what was wrong. Shared by rnsfhe.ckks and rnsfhe.bfv."
);

/// The 16-byte header that opens every serialized rnsfhe object (`rnsfhe.read_header(data)`): format
/// version, object kind (its name and code), parameter fingerprint, and whether the kind holds secret
/// material. Read without parsing the payload, so a server can refuse what it must never hold (a secret
/// key) or did not ask for before doing any work.
#[pyclass(name = "WireHeader", module = "rnsfhe", frozen, get_all)]
pub(crate) struct PyWireHeader {
    /// The format version the object was written with.
    version: u16,
    /// The object kind in words ("CKKS ciphertext", "relinearization key", "secret key", ...).
    kind: String,
    /// The object kind's code in the header.
    kind_code: u16,
    /// The fingerprint of the parameters the object belongs to.
    fingerprint: u64,
    /// Whether objects of this kind hold secret material (a server must refuse them).
    is_secret: bool,
}

#[pymethods]
impl PyWireHeader {
    fn __repr__(&self) -> String {
        format!(
            "WireHeader(version={}, kind={:?}, fingerprint={:#018x}, is_secret={})",
            self.version,
            self.kind,
            self.fingerprint,
            py_bool(self.is_secret)
        )
    }
}

/// read_header(data) -> WireHeader
///
/// The header of a serialized rnsfhe object (bytes, bytearray or memoryview; only its first 16 bytes are
/// read): magic, a readable format version and a known kind are checked. Raises rnsfhe.DecodeError naming
/// the field and byte offset otherwise.
#[pyfunction]
pub(crate) fn read_header(data: &Bound<'_, PyAny>) -> PyResult<PyWireHeader> {
    let data = read_bytes(data)?;
    let header = wire::peek_header(data.as_bytes()).map_err(decode_error)?;
    let code = header.kind_code;
    let kind = rnsfhe::object_kind(code).ok_or_else(|| {
        decode_error(wire::DecodeError::new(
            "header.kind",
            6,
            wire::DecodeErrorKind::Invalid(format!("unknown object kind code {code}")),
        ))
    })?;
    Ok(PyWireHeader {
        version: header.version,
        kind: kind.to_string(),
        kind_code: code,
        fingerprint: header.fingerprint,
        is_secret: kind.is_secret(),
    })
}

/// reseal(data) -> bytes
///
/// The object ``data`` (bytes-like) with its digest recomputed over its header and payload: for tests and
/// tools that edit an object deliberately, so that the edit reaches the payload's validation instead of
/// stopping at the digest. The digest detects corruption, not an adversary (anyone can recompute it);
/// objects that cross a network nobody trusts carry a MAC (``to_bytes(mac_key=...)``), which this cannot
/// make. Objects shorter than a digest come back unchanged.
#[pyfunction]
pub(crate) fn reseal<'py>(data: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyBytes>> {
    let mut bytes = read_bytes(data)?.as_bytes().to_vec();
    wire::reseal(&mut bytes);
    Ok(PyBytes::new(data.py(), &bytes))
}

/// A [`DecodeError`] (Python) with the Rust message and the attributes `field` and `offset`.
pub(crate) fn decode_error(err: wire::DecodeError) -> PyErr {
    // A header of another kind: name the kind found (the wire layer knows only its code).
    let found = match &err.kind {
        wire::DecodeErrorKind::WrongKind { found, .. } => {
            rnsfhe::object_kind(*found).map(|k| format!(" (a {k})"))
        }
        _ => None,
    };
    Python::with_gil(|py| {
        let py_err = DecodeError::new_err(format!("{err}{}", found.unwrap_or_default()));
        let value = py_err.value(py);
        match (
            value.setattr("field", err.field.as_str()),
            value.setattr("offset", err.offset),
        ) {
            (Ok(()), Ok(())) => py_err,
            (Err(e), _) | (_, Err(e)) => e,
        }
    })
}

/// The Rust choice behind a Python `seeded` argument.
pub(crate) fn randomness(seeded: bool) -> PublicRandomness {
    if seeded {
        PublicRandomness::Seeded
    } else {
        PublicRandomness::Expanded
    }
}

/// The bytes of a Python `data` argument: `bytes` as is, anything else `bytes(data)` accepts (bytearray,
/// memoryview, ...) copied into a `bytes` object; a TypeError for the rest (a str, a number).
pub(crate) fn read_bytes<'py>(data: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyBytes>> {
    if let Ok(b) = data.downcast::<PyBytes>() {
        return Ok(b.clone());
    }
    let name = data.get_type().name()?;
    if data.is_instance_of::<pyo3::types::PyString>() || data.is_instance_of::<pyo3::types::PyInt>()
    {
        return Err(PyTypeError::new_err(format!(
            "expected bytes (or a bytearray / memoryview), got {name}"
        )));
    }
    let builtins = data.py().import("builtins")?;
    builtins
        .getattr("bytes")?
        .call1((data,))
        .and_then(|b| Ok(b.downcast_into::<PyBytes>()?))
        .map_err(|_| {
            PyTypeError::new_err(format!(
                "expected bytes (or a bytearray / memoryview), got {name}"
            ))
        })
}

/// `bytes` of what `write` returns, computed with the GIL released (a buffer that wipes itself, such as
/// `Zeroizing<Vec<u8>>`, is wiped once copied into the Python object).
pub(crate) fn to_py_bytes<'py, B: AsRef<[u8]> + Send>(
    py: Python<'py>,
    write: impl FnOnce() -> B + Send,
) -> Bound<'py, PyBytes> {
    let bytes = py.allow_threads(write);
    PyBytes::new(py, bytes.as_ref())
}

/// A scheme context that travels as bytes (its parameters): `Context.to_bytes` / `Context.from_bytes`
/// and the pickling of the objects of it.
pub(crate) trait WireContext: Send + Sync + Sized {
    /// The context's parameters in the wire format, digest in the mode `integrity`.
    fn parameter_bytes(&self, integrity: Integrity<'_>) -> PyResult<Vec<u8>>;

    /// Rebuilds and validates a context from exactly `bytes` under `limits`.
    fn from_parameter_bytes(
        bytes: &[u8],
        limits: &LoadLimits,
        integrity: Integrity<'_>,
    ) -> Result<Arc<Self>, wire::DecodeError>;

    /// `log2 N` and the number of primes (what [`LoadLimits`] bounds), of a built context.
    fn size(&self) -> (u32, usize);

    /// The security verdict of the context (the HE Standard check).
    fn security(&self) -> rnsfhe::core::SecurityEstimate;

    /// Whether the context is not established as 128-bit secure.
    fn is_insecure(&self) -> bool {
        !self.security().is_secure()
    }

    /// The warning text of insecure parameters, if they are.
    fn insecure_warning(&self) -> Option<String>;
}

/// Implements [`WireContext`] for a scheme context `$context` with `Serializable`, `params()` of a
/// `WireParams` type, `from_bytes_sealed(bytes, limits, integrity)` and `security_warning()` (the
/// contexts of both schemes have them under the same names).
macro_rules! wire_context {
    ($context:ty) => {
        impl $crate::common::WireContext for $context {
            fn parameter_bytes(
                &self,
                integrity: rnsfhe::math::wire::Integrity<'_>,
            ) -> PyResult<Vec<u8>> {
                Ok(rnsfhe::math::wire::Serializable::to_bytes_sealed(
                    self,
                    rnsfhe::math::wire::PublicRandomness::Seeded,
                    integrity,
                ))
            }

            fn from_parameter_bytes(
                bytes: &[u8],
                limits: &rnsfhe::core::serialization::LoadLimits,
                integrity: rnsfhe::math::wire::Integrity<'_>,
            ) -> Result<Arc<Self>, rnsfhe::math::wire::DecodeError> {
                <$context>::from_bytes_sealed(bytes, limits, integrity)
            }

            fn size(&self) -> (u32, usize) {
                rnsfhe::core::serialization::WireParams::size(self.params())
            }

            fn security(&self) -> rnsfhe::core::SecurityEstimate {
                <$context>::security(self)
            }

            fn insecure_warning(&self) -> Option<String> {
                self.security_warning()
            }
        }
    };
}

/// The process-wide limits of `Context.from_bytes` and of unpickling (`rnsfhe.set_load_limits`),
/// [`LoadLimits::DEFAULT`] until changed.
static LOAD_LIMITS: Mutex<LoadLimits> = Mutex::new(LoadLimits::DEFAULT);

/// The process-wide limits now in force.
pub(crate) fn load_limits() -> LoadLimits {
    *LOAD_LIMITS.lock().unwrap_or_else(|e| e.into_inner())
}

/// The limits as a Python dict (`rnsfhe.get_load_limits()`).
fn limits_dict<'py>(py: Python<'py>, limits: &LoadLimits) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("max_log_n", limits.max_log_n)?;
    d.set_item("max_moduli", limits.max_moduli)?;
    d.set_item("max_words", limits.max_words)?;
    d.set_item("allow_insecure", limits.allow_insecure)?;
    Ok(d)
}

/// `limits` with the keyword arguments that are given (not None) applied.
pub(crate) fn limits_with(
    mut limits: LoadLimits,
    max_log_n: Option<u32>,
    max_moduli: Option<u32>,
    max_words: Option<u64>,
    allow_insecure: Option<bool>,
) -> LoadLimits {
    if let Some(v) = max_log_n {
        limits.max_log_n = v;
    }
    if let Some(v) = max_moduli {
        limits.max_moduli = v;
    }
    if let Some(v) = max_words {
        limits.max_words = v;
    }
    if let Some(v) = allow_insecure {
        limits.allow_insecure = v;
    }
    limits
}

/// get_load_limits() -> dict
///
/// The process-wide limits that ``Context.from_bytes`` (for the arguments it is not given) and unpickling
/// apply to parameters loaded from bytes: ``max_log_n`` (largest log2 N, default 16), ``max_moduli`` (most
/// primes in Q and P together, default 64), ``max_words`` (largest N x primes, default 2^16 x 48) and
/// ``allow_insecure`` (whether parameters not established as 128-bit secure load, default False).
#[pyfunction]
pub(crate) fn get_load_limits(py: Python<'_>) -> PyResult<Bound<'_, PyDict>> {
    limits_dict(py, &load_limits())
}

/// set_load_limits(*, max_log_n=None, max_moduli=None, max_words=None, allow_insecure=None) -> dict
///
/// Changes the process-wide limits of ``get_load_limits()`` (the arguments given; None keeps a limit)
/// and returns the previous ones. ``rnsfhe.load_limits(...)`` does the same for a ``with`` block. Raise
/// them only for bytes you trust: they bound the work and memory a hostile parameter blob can cost.
#[pyfunction]
#[pyo3(signature = (*, max_log_n = None, max_moduli = None, max_words = None, allow_insecure = None))]
pub(crate) fn set_load_limits(
    py: Python<'_>,
    max_log_n: Option<Int>,
    max_moduli: Option<Int>,
    max_words: Option<Int>,
    allow_insecure: Option<bool>,
) -> PyResult<Bound<'_, PyDict>> {
    let (max_log_n, max_moduli, max_words) = (
        Int::get_opt(max_log_n, "max_log_n")?,
        Int::get_opt(max_moduli, "max_moduli")?,
        Int::get_opt(max_words, "max_words")?,
    );
    let mut guard = LOAD_LIMITS.lock().unwrap_or_else(|e| e.into_inner());
    let previous = *guard;
    *guard = limits_with(previous, max_log_n, max_moduli, max_words, allow_insecure);
    drop(guard);
    limits_dict(py, &previous)
}

/// The MAC key of a Python `mac_key` argument: None, or 32 bytes (bytes, bytearray, memoryview).
pub(crate) fn mac_key(arg: Option<&Bound<'_, PyAny>>) -> PyResult<Option<MacKey>> {
    let Some(arg) = arg else {
        return Ok(None);
    };
    let data = read_bytes(arg)?;
    MacKey::from_slice(data.as_bytes()).map(Some).ok_or_else(|| {
        PyValueError::new_err(format!(
            "mac_key must be {} bytes (e.g. secrets.token_bytes(32), shared by the parties), got {}",
            MacKey::LEN,
            data.as_bytes().len()
        ))
    })
}

/// The digest mode of an optional MAC key.
pub(crate) fn integrity(key: &Option<MacKey>) -> Integrity<'_> {
    match key {
        Some(k) => Integrity::Mac(k),
        None => Integrity::Digest,
    }
}

/// A Rust object with a wire form, loaded against the scheme context `C` (validated: fingerprint,
/// residues, levels, forms).
pub(crate) trait WireObject<C>: Sized + Send + Sync {
    /// The object's bytes; public `a` parts as seeds if `seeded` and the object has them; the digest in
    /// the mode `integrity`.
    fn wire_bytes(&self, seeded: bool, integrity: Integrity<'_>) -> Vec<u8>;
    /// The length of [`WireObject::wire_bytes`].
    fn wire_size(&self, seeded: bool) -> u64;
    /// Reads exactly `bytes` as an object of `ctx`, checking the digest in the mode `integrity`.
    fn read_wire(
        bytes: &[u8],
        ctx: &C,
        integrity: Integrity<'_>,
    ) -> Result<Self, wire::DecodeError>;
}

/// Implements [`WireObject<$ctx>`] for Rust types that are `Serializable` and
/// `Deserializable<T>`, where `|$c| $inner` maps the scheme context `$c: &$ctx` to that `&T` (the
/// context itself, or its RLWE context for keys).
macro_rules! wire_objects {
    ($ctx:ty { $($t:ty => |$c:ident| $inner:expr),* $(,)? }) => {$(
        impl $crate::common::WireObject<$ctx> for $t {
            fn wire_bytes(
                &self,
                seeded: bool,
                integrity: rnsfhe::math::wire::Integrity<'_>,
            ) -> Vec<u8> {
                rnsfhe::math::wire::Serializable::to_bytes_sealed(
                    self,
                    $crate::common::randomness(seeded),
                    integrity,
                )
            }

            fn wire_size(&self, seeded: bool) -> u64 {
                rnsfhe::math::wire::Serializable::serialized_size_with(
                    self,
                    $crate::common::randomness(seeded),
                )
            }

            fn read_wire(
                bytes: &[u8],
                $c: &$ctx,
                integrity: rnsfhe::math::wire::Integrity<'_>,
            ) -> Result<Self, rnsfhe::math::wire::DecodeError> {
                rnsfhe::math::wire::Deserializable::from_bytes_sealed(bytes, $inner, integrity)
            }
        }
    )*};
}

/// Reads `data` (bytes-like) as a `T` of `ctx` with the GIL released, checking its digest (a MAC under
/// the Python `mac_key` argument when given); a [`DecodeError`] naming the field and offset for bad
/// bytes.
pub(crate) fn load_object<C: Sync, T: WireObject<C>>(
    py: Python<'_>,
    data: &Bound<'_, PyAny>,
    ctx: &C,
    key: Option<&Bound<'_, PyAny>>,
) -> PyResult<T> {
    let key = mac_key(key)?;
    let data = read_bytes(data)?;
    let bytes = data.as_bytes();
    py.allow_threads(|| T::read_wire(bytes, ctx, integrity(&key)))
        .map_err(decode_error)
}

/// A Python class whose objects have a wire form and belong to a context: what `wire_methods!` needs.
pub(crate) trait WireClass: Sync {
    /// The scheme's Rust context.
    type Context: WireContext;
    /// The Rust object written.
    type Object: WireObject<Self::Context>;

    /// The context the object belongs to.
    fn context(&self) -> &Self::Context;

    /// The Rust object.
    fn object(&self) -> &Self::Object;

    /// The bytes `to_bytes(seeded, mac_key)` returns (by default the object's).
    fn object_bytes(&self, seeded: bool, integrity: Integrity<'_>) -> Vec<u8> {
        self.object().wire_bytes(seeded, integrity)
    }

    /// The size `serialized_size(seeded)` returns (by default the object's).
    fn object_size(&self, seeded: bool) -> u64 {
        self.object().wire_size(seeded)
    }

    /// Keyword arguments of `from_bytes` that unpickling must pass to restore what the wire format does
    /// not hold (a BFV ciphertext's encoding); none by default.
    fn load_options<'py>(&self, _py: Python<'py>) -> PyResult<Option<Bound<'py, PyDict>>> {
        Ok(None)
    }
}

/// `__reduce__` of a [`WireClass`] object: `rnsfhe._common._load(cls, context bytes, object bytes,
/// options, insecure)` (the [`WireClass::load_options`], if any), which loads the context through the
/// process-wide cache (`Context.from_bytes`, under the process-wide limits) and then the object with
/// `cls.from_bytes`. `insecure` is the context's own insecure opt-in: unpickling is trusted input by
/// Python's rules (a pickle can run any code), so a pickle carries the opt-in of the context it was made
/// from; the size limits still apply.
pub(crate) fn reduce_object<T: WireClass>(
    obj: &T,
    cls: Bound<'_, PyType>,
) -> PyResult<(PyObject, PyObject)> {
    let py = cls.py();
    let loader = py.import("rnsfhe._common")?.getattr("_load")?;
    let context = obj.context().parameter_bytes(Integrity::Digest)?;
    let bytes = py.allow_threads(|| obj.object_bytes(true, Integrity::Digest));
    let (context, bytes) = (PyBytes::new(py, &context), PyBytes::new(py, &bytes));
    let options = obj.load_options(py)?;
    let insecure = obj.context().is_insecure();
    let args = (cls, context, bytes, options, insecure).into_pyobject(py)?;
    Ok((loader.unbind(), args.into_any().unbind()))
}

/// A process-wide cache of loaded contexts keyed by their exact bytes (which start with the header and
/// its parameter fingerprint), holding weak references: unpickling many objects of one context builds
/// it once, and a context nobody uses any more is freed. Keying by the whole bytes (about 60) rather
/// than the fingerprint alone means a cached context is returned only for the very bytes it was built
/// and validated from.
pub(crate) struct ContextCache<T> {
    entries: Mutex<Vec<(Vec<u8>, Weak<T>)>>,
}

impl<T> ContextCache<T> {
    /// An empty cache.
    pub(crate) const fn new() -> Self {
        Self {
            entries: Mutex::new(Vec::new()),
        }
    }

    /// The live entry for `bytes`, if any.
    pub(crate) fn get(&self, bytes: &[u8]) -> Option<Arc<T>> {
        let entries = self.entries.lock().unwrap_or_else(|e| e.into_inner());
        entries
            .iter()
            .find(|(key, _)| key.as_slice() == bytes)
            .and_then(|(_, value)| value.upgrade())
    }

    /// Records `value` for `bytes` (and forgets the entries whose value was freed).
    pub(crate) fn insert(&self, bytes: &[u8], value: &Arc<T>) {
        let mut entries = self.entries.lock().unwrap_or_else(|e| e.into_inner());
        entries.retain(|(key, v)| v.strong_count() > 0 && key.as_slice() != bytes);
        entries.push((bytes.to_vec(), Arc::downgrade(value)));
    }
}

/// Loads a context from the bytes-like `data` through `cache` under `limits` and the digest mode of
/// `key`: the live cached value for these exact bytes (its digest checked again and the limits applied
/// to it, so a context cached under other limits or another key is not handed out), or the context
/// built from `bytes` with the GIL released (a [`DecodeError`] for bad bytes) and recorded. The flag is
/// true when the value was built now (so that the caller warns about insecure parameters once, not on
/// every unpickled object). `get` maps a cached value to its scheme context.
pub(crate) fn cached_context<T: Send + Sync, C: WireContext>(
    py: Python<'_>,
    cache: &ContextCache<T>,
    data: &Bound<'_, PyAny>,
    limits: &LoadLimits,
    key: &Option<MacKey>,
    get: impl Fn(&T) -> &C,
    build: impl FnOnce(Arc<C>) -> T + Send,
) -> PyResult<(Arc<T>, bool)> {
    let data = read_bytes(data)?;
    let bytes = data.as_bytes();
    let integrity = integrity(key);
    if let Some(value) = cache.get(bytes) {
        wire::verify_digest(bytes, integrity).map_err(decode_error)?;
        let ctx = get(&value);
        let (log_n, moduli) = ctx.size();
        limits.check(log_n, moduli).map_err(decode_error)?;
        limits
            .check_security(ctx.security())
            .map_err(decode_error)?;
        return Ok((value, false));
    }
    let value = py
        .allow_threads(|| C::from_parameter_bytes(bytes, limits, integrity).map(build))
        .map_err(decode_error)?;
    let value = Arc::new(value);
    cache.insert(bytes, &value);
    Ok((value, true))
}

/// The rotation steps and whether the conjugation (CKKS) or column-swap (BFV) key is present, from the
/// Galois elements of loaded keys, by the inverse map of the context's Galois group
/// ([`GaloisGroup::step_of_element`]; generator 5 for CKKS slots, 3 for BFV rows). Steps are given in
/// `(-N/4, N/4]` (a step and that step minus N/2 are the same rotation), sorted by magnitude; the identity
/// and elements of neither kind (never made by keygen) are left out.
pub(crate) fn rotations_of_elements(group: &GaloisGroup, elements: &[usize]) -> (Vec<i64>, bool) {
    let conjugation = group.conjugation().value();
    let mut steps: Vec<i64> = elements
        .iter()
        .filter_map(|&e| group.step_of_element(group.element(e).ok()?))
        .filter(|&s| s != 0)
        .collect();
    steps.sort_by_key(|&s| (s.abs(), s < 0));
    (steps, elements.contains(&conjugation))
}

// ------------------------------------------------------------------------------------------------------
// Classes and methods every scheme submodule has
// ------------------------------------------------------------------------------------------------------

/// Adds the classes of the common object model (see the module documentation) to the submodule `$m`.
macro_rules! add_scheme_classes {
    ($m:expr) => {{
        let m = $m;
        m.add_class::<PyContext>()?;
        m.add_class::<PyKeySet>()?;
        m.add_class::<PySecretKey>()?;
        m.add_class::<PyPublicKey>()?;
        m.add_class::<PyRelinKey>()?;
        m.add_class::<PyGaloisKeys>()?;
        m.add_class::<PyEncryptor>()?;
        m.add_class::<PyDecryptor>()?;
        m.add_class::<PyEvaluator>()?;
        m.add_class::<PyCiphertext>()?;
    }};
}

/// Defines the Python classes `SecretKey` and `PublicKey` of the submodule `$module` ("rnsfhe.ckks"),
/// wrapping the scheme's `SecretKey` and `PublicKey` (in scope) with the scheme context `$context` they
/// belong to, and the functions that read the key argument of `Context.encryptor` and
/// `Context.decryptor`:
///
/// * `encryption_key(key)`: a `KeySet` (its public key), a `PublicKey` or a `SecretKey`, as an
///   `EncryptionKey`; otherwise a `TypeError` "encryptor needs `$encryptor_keys`, got ...";
/// * `decryption_key(key)`: the secret key of a `KeySet` or a `SecretKey`; otherwise a `TypeError`
///   "decryptor needs `$decryptor_keys`, got ...".
///
/// `SecretKey` serializes only through `to_secret_bytes` / `from_secret_bytes` and refuses pickling;
/// `PublicKey` has the members of `wire_methods!` and `from_bytes(data, context)`. Needs `SCHEME`, a
/// `PyContext` with a field `ctx: Arc<$context>`, `$context::rlwe()`, `WireObject<$context>` for
/// `PublicKey` (`wire_objects!`), and a `PyKeySet` with fields `secret: Arc<SecretKey>` and
/// `public: Arc<PublicKey>`.
macro_rules! key_classes {
    (
        module = $module:tt,
        context = $context:ty,
        encryptor_keys = $encryptor_keys:tt,
        decryptor_keys = $decryptor_keys:tt
    ) => {
        /// The secret key (zeroized when freed, never printed). Saved only explicitly, with
        /// ``to_secret_bytes()``; not picklable.
        #[pyclass(name = "SecretKey", module = $module, frozen)]
        pub(crate) struct PySecretKey {
            pub(crate) key: Arc<SecretKey>,
            pub(crate) ctx: Arc<$context>,
        }

        #[pymethods]
        impl PySecretKey {
            /// to_secret_bytes() -> bytes
            ///
            /// The **secret** key in the wire format (header and ternary coefficients at 2 bits each):
            /// only the decryptor should ever hold these bytes; never send them to a server. The Python
            /// ``bytes`` object cannot be zeroized: keep it no longer than needed.
            fn to_secret_bytes<'py>(&self, py: Python<'py>) -> Bound<'py, pyo3::types::PyBytes> {
                $crate::common::to_py_bytes(py, || self.key.to_secret_bytes(self.ctx.rlwe()))
            }

            /// SecretKey.from_secret_bytes(data, context) -> SecretKey
            ///
            /// Loads a secret key written by ``to_secret_bytes`` into ``context`` (a Context with the
            /// parameters it was made with), checking the header, the fingerprint, that every
            /// coefficient is ternary and the secret distribution. Raises rnsfhe.DecodeError (a
            /// ValueError) naming the field and byte offset of bad bytes.
            #[staticmethod]
            fn from_secret_bytes(
                py: Python<'_>,
                data: &Bound<'_, PyAny>,
                context: &PyContext,
            ) -> PyResult<Self> {
                let data = $crate::common::read_bytes(data)?;
                let bytes = data.as_bytes();
                let ctx = &context.ctx;
                let key = py
                    .allow_threads(|| SecretKey::from_secret_bytes(bytes, ctx.rlwe()))
                    .map_err($crate::common::decode_error)?;
                Ok(Self {
                    key: Arc::new(key),
                    ctx: Arc::clone(ctx),
                })
            }

            fn __repr__(&self) -> &'static str {
                "SecretKey(<hidden>)"
            }

            /// Raises TypeError: the secret key is saved only explicitly, with ``to_secret_bytes()``.
            fn __reduce__(&self) -> PyResult<PyObject> {
                Err(SCHEME.not_picklable(
                    "SecretKey",
                    "it is the secret key; save it explicitly with to_secret_bytes() and load it with \
                     SecretKey.from_secret_bytes(data, context) (never send it to a server)",
                ))
            }
        }

        $crate::common::wire_key_class! {
            /// The public encryption key. ``to_bytes()`` / ``PublicKey.from_bytes(data, context)``;
            /// picklable.
            struct PyPublicKey("PublicKey" in $module): PublicKey, $context;
            /// PublicKey.from_bytes(data, context) -> PublicKey
            ///
            /// Loads a public key written by ``to_bytes`` into ``context``, validating it (header,
            /// fingerprint, every residue below its modulus; a seed is expanded). Raises
            /// rnsfhe.DecodeError (a ValueError) naming the field and byte offset of bad bytes.
            fn from_bytes;

            /// Whether the key is over Q and the first special prime p_0 (``keygen(public_key="extended")``,
            /// the default: encryptions are made over Q p_0 and divided by p_0, so the fresh error is the
            /// rounding's, not the key's) rather than over Q only (``public_key="over_q"``).
            #[getter]
            fn is_extended(&self) -> bool {
                self.key.is_extended()
            }

            fn __repr__(&self) -> String {
                format!(
                    "PublicKey(fingerprint={:#018x}, extended={})",
                    self.key.fingerprint(),
                    $crate::common::py_bool(self.key.is_extended())
                )
            }
        }

        /// The key of an encryptor.
        pub(crate) enum EncryptionKey {
            Public(Arc<PublicKey>),
            /// Secret-key encryption (less noise).
            Secret(Arc<SecretKey>),
        }

        /// The key argument of `Context.encryptor`.
        pub(crate) fn encryption_key(key: &Bound<'_, PyAny>) -> PyResult<EncryptionKey> {
            if let Ok(ks) = key.downcast::<PyKeySet>() {
                Ok(EncryptionKey::Public(Arc::clone(&ks.get().public)))
            } else if let Ok(pk) = key.downcast::<PyPublicKey>() {
                Ok(EncryptionKey::Public(Arc::clone(&pk.get().key)))
            } else if let Ok(sk) = key.downcast::<PySecretKey>() {
                Ok(EncryptionKey::Secret(Arc::clone(&sk.get().key)))
            } else {
                Err(pyo3::exceptions::PyTypeError::new_err(format!(
                    concat!("encryptor needs ", $encryptor_keys, ", got {}"),
                    key.get_type().name()?
                )))
            }
        }

        /// The key argument of `Context.decryptor`.
        pub(crate) fn decryption_key(key: &Bound<'_, PyAny>) -> PyResult<Arc<SecretKey>> {
            if let Ok(ks) = key.downcast::<PyKeySet>() {
                Ok(Arc::clone(&ks.get().secret))
            } else if let Ok(sk) = key.downcast::<PySecretKey>() {
                Ok(Arc::clone(&sk.get().key))
            } else {
                Err(pyo3::exceptions::PyTypeError::new_err(format!(
                    concat!("decryptor needs ", $decryptor_keys, ", got {}"),
                    key.get_type().name()?
                )))
            }
        }
    };
}

/// The [`WireClass`] implementation of a scheme's `PyCiphertext` (fields `ct: Ciphertext`, `eval:
/// Arc<Eval>` with `Eval::ctx() -> &$context`, and `seeded: Option<Arc<SeededCiphertext>>`, the seeded
/// form a fresh secret-key encryption keeps): seeded bytes come from that form while it exists, the
/// expanded ciphertext otherwise (results of operations have no seed). `$extra`: further members of the
/// implementation (BFV's `load_options`).
macro_rules! ciphertext_wire_class {
    ($context:ty $(; $($extra:tt)*)?) => {
        impl $crate::common::WireClass for PyCiphertext {
            type Context = $context;
            type Object = Ciphertext;

            fn context(&self) -> &$context {
                self.eval.ctx()
            }

            fn object(&self) -> &Ciphertext {
                &self.ct
            }

            fn object_bytes(
                &self,
                seeded: bool,
                integrity: rnsfhe::math::wire::Integrity<'_>,
            ) -> Vec<u8> {
                match (&self.seeded, seeded) {
                    (Some(s), true) => s.to_bytes_sealed(
                        rnsfhe::math::wire::PublicRandomness::Seeded,
                        integrity,
                    ),
                    _ => self.ct.wire_bytes(false, integrity),
                }
            }

            fn object_size(&self, seeded: bool) -> u64 {
                match (&self.seeded, seeded) {
                    (Some(s), true) => s.serialized_size(),
                    _ => self.ct.wire_size(false),
                }
            }

            $($($extra)*)?
        }
    };
}

/// A Python class that wraps one wire object of a scheme (a key, or a CKKS plaintext, which needs nothing
/// more) with the context it belongs to: the `#[pyclass]` `$py` (Python name `$name` in `$module`) with
/// fields `key: Arc<$object>` (the object, whatever it is) and
/// `ctx: Arc<$context>`, its [`WireClass`] implementation, the members of `wire_methods!`, a static
/// `from_bytes(data, context)` documented by the attributes before `fn from_bytes;`, and the class's own
/// `$items`. Needs a `PyContext` with a field `ctx: Arc<$context>` and `WireObject<$context>` for
/// `$object` (`wire_objects!`).
macro_rules! wire_key_class {
    (
        $(#[$class_doc:meta])*
        struct $py:ident($name:literal in $module:tt): $object:ty, $context:ty;
        $(#[$load_doc:meta])*
        fn from_bytes;
        $($items:tt)*
    ) => {
        $(#[$class_doc])*
        #[pyclass(name = $name, module = $module, frozen)]
        pub(crate) struct $py {
            pub(crate) key: Arc<$object>,
            pub(crate) ctx: Arc<$context>,
        }

        impl $crate::common::WireClass for $py {
            type Context = $context;
            type Object = $object;

            fn context(&self) -> &$context {
                &self.ctx
            }

            fn object(&self) -> &$object {
                &self.key
            }
        }

        $crate::common::wire_methods! {
            impl $py {
                $(#[$load_doc])*
                #[staticmethod]
                #[pyo3(signature = (data, context, mac_key = None))]
                fn from_bytes(
                    py: Python<'_>,
                    data: &Bound<'_, PyAny>,
                    context: &PyContext,
                    mac_key: Option<&Bound<'_, PyAny>>,
                ) -> PyResult<Self> {
                    let key = $crate::common::load_object(py, data, &*context.ctx, mac_key)?;
                    Ok(Self {
                        key: Arc::new(key),
                        ctx: Arc::clone(&context.ctx),
                    })
                }

                $($items)*
            }
        }
    };
}

/// `#[pymethods] impl $ty` with the scheme's own `$items` and the serialization members of a
/// [`WireClass`]: `to_bytes(seeded=True)`, `serialized_size(seeded=True)` and a `__reduce__` that
/// pickles the context's parameters and the object's bytes. The class writes its own `from_bytes`
/// (its constructor differs).
macro_rules! wire_methods {
    (impl $ty:ident { $($items:tt)* }) => {
        #[pymethods]
        impl $ty {
            /// to_bytes(seeded=True, mac_key=None) -> bytes
            ///
            /// The object in rnsfhe's versioned wire format: a 16-byte header (magic "RNSF", format
            /// version, object kind, parameter fingerprint), the payload, residues packed at their
            /// modulus' width, and a 32-byte BLAKE3 digest of both, which loading checks first. With
            /// ``seeded``, uniform public parts are written as 32-byte PRNG seeds where the object has
            /// them (keys, and a ciphertext fresh from a secret-key encryptor), about half the size;
            /// ``seeded=False`` writes them expanded. With ``mac_key`` (32 bytes the parties share) the
            /// digest is a MAC under it, which only key holders can make: load with the same key. Load
            /// with ``from_bytes(data, context, mac_key=None)``. The GIL is released.
            #[pyo3(signature = (seeded = true, mac_key = None))]
            fn to_bytes<'py>(
                &self,
                py: Python<'py>,
                seeded: bool,
                mac_key: Option<&Bound<'py, PyAny>>,
            ) -> PyResult<Bound<'py, pyo3::types::PyBytes>> {
                let key = $crate::common::mac_key(mac_key)?;
                Ok($crate::common::to_py_bytes(py, || {
                    $crate::common::WireClass::object_bytes(
                        self,
                        seeded,
                        $crate::common::integrity(&key),
                    )
                }))
            }

            /// serialized_size(seeded=True) -> int: the length of ``to_bytes(seeded)``, without
            /// writing.
            #[pyo3(signature = (seeded = true))]
            fn serialized_size(&self, seeded: bool) -> u64 {
                $crate::common::WireClass::object_size(self, seeded)
            }

            /// Pickling writes the context's parameters and the object's (seeded) bytes; unpickling
            /// loads the context through a process-wide cache (one context for many objects), then the
            /// object, validated.
            fn __reduce__(slf: &Bound<'_, Self>) -> PyResult<(PyObject, PyObject)> {
                $crate::common::reduce_object(&*slf.try_borrow()?, slf.get_type())
            }

            $($items)*
        }
    };
}

/// `#[pymethods] impl PyContext` with the scheme's own `$items` and the members every `Context` has:
/// `encryptor(key, evaluator=None)` (with the doc comment written before `fn encryptor;`, which names
/// the scheme's keyless default evaluator), `decryptor(key)`, the getters `security_warning` and
/// `fingerprint`, `to_bytes()`, `from_bytes(data, max_log_n=None)` (a classmethod, through the scheme's
/// `static CONTEXTS: ContextCache<Eval>`) and a `__reduce__` by `from_bytes`.
///
/// `encryptor` attaches its ciphertexts to `evaluator`, or to the context's keyless evaluator. Needs a
/// `PyContext` with fields `ctx: Arc<the scheme's context>` and `plain: Arc<Eval>` (that keyless
/// evaluator), the functions of `key_classes!`, and the constructors
/// `PyEncryptor::new(&Arc<context>, EncryptionKey, Arc<Eval>) -> PyResult<PyEncryptor>` and
/// `PyDecryptor::new(&Arc<context>, &SecretKey) -> PyResult<PyDecryptor>` (run with the GIL released),
/// [`WireContext`] for the scheme context `$context`, `PyContext::keyless(&Arc<context>) -> Eval` (the keyless
/// evaluator of a loaded context), `PyContext::from_plain(Arc<Eval>) -> PyContext` and `Eval::ctx()`.
macro_rules! context_methods {
    ($(#[$encryptor_doc:meta])* fn encryptor; impl $ty:ident($context:ty) { $($items:tt)* }) => {
        #[pymethods]
        impl $ty {
            $(#[$encryptor_doc])*
            #[pyo3(signature = (key, evaluator = None))]
            fn encryptor(
                &self,
                key: &Bound<'_, PyAny>,
                evaluator: Option<&PyEvaluator>,
            ) -> PyResult<PyEncryptor> {
                let key = encryption_key(key)?;
                let eval = evaluator.map_or(&self.plain, |e| &e.eval);
                PyEncryptor::new(&self.ctx, key, Arc::clone(eval))
            }

            /// decryptor(key) -> Decryptor
            ///
            /// A decryptor with a SecretKey or a KeySet (its secret key).
            fn decryptor(&self, py: Python<'_>, key: &Bound<'_, PyAny>) -> PyResult<PyDecryptor> {
                let sk = decryption_key(key)?;
                let ctx = &self.ctx;
                py.allow_threads(|| PyDecryptor::new(ctx, &sk))
            }

            $($items)*

            /// The warning text for insecure parameters, or None.
            #[getter]
            fn security_warning(&self) -> Option<String> {
                self.ctx.security_warning()
            }

            /// Fingerprint of the parameters (equal contexts have equal fingerprints).
            #[getter]
            fn fingerprint(&self) -> u64 {
                self.ctx.fingerprint()
            }

            /// to_bytes(mac_key=None) -> bytes
            ///
            /// The parameters in rnsfhe's versioned wire format (header with the fingerprint, the
            /// literal parameters, including the insecure opt-in, and a BLAKE3 digest; a MAC under
            /// ``mac_key``): ``Context.from_bytes(data)`` rebuilds and validates the same context.
            #[pyo3(signature = (mac_key = None))]
            fn to_bytes<'py>(
                &self,
                py: Python<'py>,
                mac_key: Option<&Bound<'py, PyAny>>,
            ) -> PyResult<Bound<'py, pyo3::types::PyBytes>> {
                let key = $crate::common::mac_key(mac_key)?;
                let bytes = $crate::common::WireContext::parameter_bytes(
                    &*self.ctx,
                    $crate::common::integrity(&key),
                )?;
                Ok(pyo3::types::PyBytes::new(py, &bytes))
            }

            /// Context.from_bytes(data, *, max_log_n=None, max_moduli=None, max_words=None,
            /// allow_insecure=None, mac_key=None) -> Context
            ///
            /// The context of parameters written by ``Context.to_bytes()`` (bytes, bytearray or
            /// memoryview). The digest (a MAC under ``mac_key``) is checked first; then every field's
            /// range and the limits: ``max_log_n`` (largest log2 N), ``max_moduli`` (most primes in Q
            /// and P together), ``max_words`` (largest N x primes) and ``allow_insecure`` (whether
            /// parameters not established as 128-bit secure load at all: the reader's own opt-in, which
            /// the bytes cannot give); each None takes the process-wide value of
            /// ``rnsfhe.get_load_limits()`` (defaults 16, 64, 2^16 x 48, False). The fingerprint is
            /// compared with the header's and the security verdict taken before any table is built, so
            /// hostile bytes cost milliseconds. Insecure parameters that are allowed load with a
            /// UserWarning. Contexts are cached process-wide by their bytes while any object uses them,
            /// so loading the same bytes again (unpickling many ciphertexts) does not rebuild. Raises
            /// rnsfhe.DecodeError (a ValueError) naming the field and byte offset of bad bytes.
            #[classmethod]
            #[pyo3(signature = (data, *, max_log_n = None, max_moduli = None, max_words = None,
                                allow_insecure = None, mac_key = None))]
            #[allow(clippy::too_many_arguments)]
            fn from_bytes(
                _cls: &Bound<'_, pyo3::types::PyType>,
                py: Python<'_>,
                data: &Bound<'_, PyAny>,
                max_log_n: Option<$crate::common::Int>,
                max_moduli: Option<$crate::common::Int>,
                max_words: Option<$crate::common::Int>,
                allow_insecure: Option<bool>,
                mac_key: Option<&Bound<'_, PyAny>>,
            ) -> PyResult<Self> {
                let limits = $crate::common::limits_with(
                    $crate::common::load_limits(),
                    $crate::common::Int::get_opt(max_log_n, "max_log_n")?,
                    $crate::common::Int::get_opt(max_moduli, "max_moduli")?,
                    $crate::common::Int::get_opt(max_words, "max_words")?,
                    allow_insecure,
                );
                let key = $crate::common::mac_key(mac_key)?;
                let (plain, built) = $crate::common::cached_context(
                    py,
                    &CONTEXTS,
                    data,
                    &limits,
                    &key,
                    |plain: &Eval| &**plain.ctx(),
                    |ctx: Arc<$context>| Self::keyless(&ctx),
                )?;
                if built {
                    if let Some(warning) =
                        $crate::common::WireContext::insecure_warning(&**plain.ctx())
                    {
                        $crate::common::warn_user(py, &warning)?;
                    }
                }
                Ok(Self::from_plain(plain))
            }

            /// Pickling writes ``to_bytes()``; unpickling is ``Context.from_bytes`` under the
            /// process-wide limits (same parameters, same fingerprint, the process-wide cache), with the
            /// context's own insecure opt-in (a pickle is trusted input by Python's rules).
            fn __reduce__(slf: &Bound<'_, Self>) -> PyResult<(PyObject, PyObject)> {
                let py = slf.py();
                let load = py.import("rnsfhe._common")?.getattr("_load_context")?.unbind();
                let ctx = &*slf.get().ctx;
                let bytes = $crate::common::WireContext::parameter_bytes(
                    ctx,
                    rnsfhe::math::wire::Integrity::Digest,
                )?;
                let insecure = $crate::common::WireContext::is_insecure(ctx);
                let args = (slf.get_type(), pyo3::types::PyBytes::new(py, &bytes), insecure)
                    .into_pyobject(py)?;
                Ok((load, args.into_any().unbind()))
            }
        }
    };
}

/// `#[pymethods] impl PyKeySet` with the scheme's own `$items` and the members every `KeySet` has: the
/// getters `secret`, `public` and `relin`, and a `__reduce__` that raises `TypeError`.
///
/// Needs `SCHEME` and a `PyKeySet` with fields `ctx`, `secret`, `public` and `relin` (`Arc`s of the
/// context and of the keys that `PySecretKey`, `PyPublicKey` and `PyRelinKey` wrap in their fields `ctx`
/// and `key`).
macro_rules! keyset_methods {
    (impl $ty:ident { $($items:tt)* }) => {
        #[pymethods]
        impl $ty {
            /// The secret key (never printed).
            #[getter]
            fn secret(&self) -> PySecretKey {
                PySecretKey {
                    key: Arc::clone(&self.secret),
                    ctx: Arc::clone(&self.ctx),
                }
            }

            /// The public encryption key.
            #[getter]
            fn public(&self) -> PyPublicKey {
                PyPublicKey {
                    key: Arc::clone(&self.public),
                    ctx: Arc::clone(&self.ctx),
                }
            }

            /// The relinearization key (needed by ciphertext multiplication).
            #[getter]
            fn relin(&self) -> PyRelinKey {
                PyRelinKey {
                    key: Arc::clone(&self.relin),
                    ctx: Arc::clone(&self.ctx),
                }
            }

            $($items)*

            /// Raises TypeError: a KeySet holds the secret key; pickle its public parts separately.
            fn __reduce__(&self) -> PyResult<PyObject> {
                Err(SCHEME.not_picklable(
                    "KeySet",
                    "it holds the secret key; pickle (or to_bytes()) keys.public, keys.relin and \
                     keys.galois separately, and save keys.secret explicitly with to_secret_bytes()",
                ))
            }
        }
    };
}

/// `#[pymethods] impl PyEvaluator` with the scheme's own `$items` and the members every `Evaluator` has:
/// `add(a, b)` and `sub(a, b)` (their docstrings say "b `$operands`") and a `__reduce__` that raises
/// `TypeError`; also `PyEvaluator::binary_strict`, an operation of this evaluator that raises a
/// `TypeError` "expected `$expected`, got ..." for an unsupported operand.
///
/// Needs `SCHEME`, a `PyEvaluator` with a field `eval: Arc<Eval>`, and the function `binary` of
/// `ciphertext_methods!`.
macro_rules! evaluator_methods {
    (operands = $operands:tt; expected = $expected:tt; impl $ty:ident { $($items:tt)* }) => {
        impl $ty {
            /// `a op b` by this evaluator; a TypeError for an unsupported operand `b`.
            fn binary_strict(
                &self,
                py: Python<'_>,
                a: &PyCiphertext,
                b: &Bound<'_, PyAny>,
                op: $crate::common::BinOp,
            ) -> PyResult<PyCiphertext> {
                $crate::common::require_operand(binary(py, &self.eval, a, b, op)?, b, $expected)
            }
        }

        #[pymethods]
        impl $ty {
            #[doc = concat!("add(a, b) -> Ciphertext: a + b (b ", $operands, ").")]
            fn add(
                &self,
                py: Python<'_>,
                a: &PyCiphertext,
                b: &Bound<'_, PyAny>,
            ) -> PyResult<PyCiphertext> {
                self.binary_strict(py, a, b, $crate::common::BinOp::Add)
            }

            #[doc = concat!("sub(a, b) -> Ciphertext: a - b (b ", $operands, ").")]
            fn sub(
                &self,
                py: Python<'_>,
                a: &PyCiphertext,
                b: &Bound<'_, PyAny>,
            ) -> PyResult<PyCiphertext> {
                self.binary_strict(py, a, b, $crate::common::BinOp::Sub)
            }

            $($items)*

            /// Raises TypeError: pickle its keys instead (RelinKey, GaloisKeys) and build a new evaluator.
            fn __reduce__(&self) -> PyResult<PyObject> {
                Err(SCHEME.not_picklable(
                    "Evaluator",
                    "pickle (or to_bytes()) its RelinKey and GaloisKeys and build an evaluator from them \
                     with ctx.evaluator(relin_key=..., galois_keys=...)",
                ))
            }
        }
    };
}

/// `#[pymethods] impl PyCiphertext` with the scheme's own `$items` and the members every `Ciphertext`
/// has: the operators `+ - *` on either side (numpy arrays on the left defer to them), the getter
/// `evaluator`, `__copy__` and `__deepcopy__` (ciphertexts are immutable), and, after `wire;`, the
/// serialization members of `wire_methods!` (the scheme's `$items` then include `from_bytes`; the
/// class implements [`WireClass`]); without it, a `__reduce__` that raises `TypeError` (a scheme whose
/// wire format does not exist yet).
///
/// Needs `SCHEME`, a `PyCiphertext` with a field `eval: Arc<Eval>`, a `PyEvaluator { eval }`, and a
/// function `binary(py, &Arc<Eval>, &PyCiphertext, &Bound<PyAny>, BinOp) ->
/// PyResult<Option<PyCiphertext>>` (`None` for an unsupported operand).
macro_rules! ciphertext_methods {
    (wire; impl $ty:ident { $($items:tt)* }) => {
        $crate::common::ciphertext_methods! { @common [wire] $ty { $($items)* } }
    };
    (impl $ty:ident { $($items:tt)* }) => {
        $crate::common::ciphertext_methods! { @common [] $ty { $($items)* } }
    };
    (@common [$($wire:tt)*] $ty:ident { $($items:tt)* }) => {
        $crate::common::ciphertext_methods! {
            @emit [$($wire)*] $ty {
                /// numpy defers to the Ciphertext operators (``array + ct`` is a Ciphertext, not an object array).
                #[classattr]
                fn __array_ufunc__(py: Python<'_>) -> PyObject {
                    py.None()
                }

                fn __add__(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<PyObject> {
                    self.operator(py, other, $crate::common::BinOp::Add)
                }

                fn __radd__(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<PyObject> {
                    self.operator(py, other, $crate::common::BinOp::Add)
                }

                fn __sub__(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<PyObject> {
                    self.operator(py, other, $crate::common::BinOp::Sub)
                }

                fn __rsub__(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<PyObject> {
                    self.operator(py, other, $crate::common::BinOp::RSub)
                }

                fn __mul__(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<PyObject> {
                    self.operator(py, other, $crate::common::BinOp::Mul)
                }

                fn __rmul__(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<PyObject> {
                    self.operator(py, other, $crate::common::BinOp::Mul)
                }

                $($items)*

                /// The evaluator this ciphertext's operators use.
                #[getter]
                fn evaluator(&self) -> PyEvaluator {
                    PyEvaluator {
                        eval: Arc::clone(&self.eval),
                    }
                }

            }
        }

        impl $ty {
            /// An operator: `self op other` attached to `self`'s evaluator, or `NotImplemented`.
            fn operator(
                &self,
                py: Python<'_>,
                other: &Bound<'_, PyAny>,
                op: $crate::common::BinOp,
            ) -> PyResult<PyObject> {
                $crate::common::operator_result(py, binary(py, &self.eval, self, other, op)?)
            }
        }
    };
    (@emit [wire] $ty:ident { $($all:tt)* }) => {
        $crate::common::wire_methods! {
            impl $ty {
                $($all)*
            }
        }
    };
    (@emit [] $ty:ident { $($all:tt)* }) => {
        #[pymethods]
        impl $ty {
            $($all)*

            /// Raises TypeError: this scheme's ciphertexts have no wire format yet.
            fn __reduce__(&self) -> PyResult<PyObject> {
                Err(SCHEME.not_picklable(
                    "Ciphertext",
                    &format!("the {} wire format does not exist yet", SCHEME.name),
                ))
            }
        }
    };
}

pub(crate) use {
    add_scheme_classes, ciphertext_methods, ciphertext_wire_class, context_methods,
    evaluator_methods, key_classes, keyset_methods, wire_context, wire_key_class, wire_methods,
    wire_objects,
};
