//! What the bindings share: error conversion, numpy input, conversion modes, presets, warnings, the
//! registration of a scheme submodule, and the macros that write the Python classes and `#[pymethods]`
//! the scheme submodules [`crate::ckks`] and [`crate::bfv`] have in common.
//!
//! The two scheme submodules expose one object model under the same Rust names: `PyContext`, `PyKeySet`,
//! `PySecretKey`, `PyPublicKey`, `PyRelinKey`, `PyGaloisKeys`, `PyEncryptor`, `PyDecryptor`, `PyEvaluator`
//! and `PyCiphertext`, a shared evaluator `Eval`, and a constant `SCHEME: Scheme` naming the scheme. The
//! macros refer to these names at the place they are invoked (see each macro for what it needs).
//!
//! The `*_methods!` macros take a scheme's `impl` block and add the shared members to it (PyO3 allows one
//! `#[pymethods]` block per class). rustfmt does not format inside macro invocations: keep those blocks
//! as rustfmt would format them without the macro line.

use std::fmt::{Debug, Display};

use numpy::PyUntypedArray;
use pyo3::exceptions::{PyTypeError, PyUserWarning, PyValueError};
use pyo3::prelude::*;
use rnsfhe::ring::conversion::ConversionMode;

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
    /// The `TypeError` of pickling `what` (keys, ciphertexts and the objects holding them), which cannot
    /// be serialized yet.
    pub(crate) fn not_picklable(&self, what: &str) -> PyErr {
        PyTypeError::new_err(format!(
            "rnsfhe.{}.{what} cannot be pickled yet: serialization of {} keys and ciphertexts comes with \
             the serialization issue (a Context can be pickled; it is rebuilt from its parameters)",
            self.module, self.name
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
        m.add(
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
/// wrapping the scheme's `SecretKey` and `PublicKey` (in scope), and the functions that read the key
/// argument of `Context.encryptor` and `Context.decryptor`:
///
/// * `encryption_key(key)`: a `KeySet` (its public key), a `PublicKey` or a `SecretKey`, as an
///   `EncryptionKey`; otherwise a `TypeError` "encryptor needs `$encryptor_keys`, got ...";
/// * `decryption_key(key)`: the secret key of a `KeySet` or a `SecretKey`; otherwise a `TypeError`
///   "decryptor needs `$decryptor_keys`, got ...".
///
/// Needs `SCHEME` and a `PyKeySet` with fields `secret: Arc<SecretKey>` and `public: Arc<PublicKey>`.
macro_rules! key_classes {
    (module = $module:tt, encryptor_keys = $encryptor_keys:tt, decryptor_keys = $decryptor_keys:tt) => {
        /// The secret key (zeroized when freed, never printed). Not picklable yet.
        #[pyclass(name = "SecretKey", module = $module, frozen)]
        struct PySecretKey {
            key: Arc<SecretKey>,
        }

        #[pymethods]
        impl PySecretKey {
            fn __repr__(&self) -> &'static str {
                "SecretKey(<hidden>)"
            }

            /// Raises TypeError: keys cannot be pickled until serialization exists.
            fn __reduce__(&self) -> PyResult<PyObject> {
                Err(SCHEME.not_picklable("SecretKey"))
            }
        }

        /// The public encryption key. Not picklable yet.
        #[pyclass(name = "PublicKey", module = $module, frozen)]
        struct PyPublicKey {
            key: Arc<PublicKey>,
        }

        #[pymethods]
        impl PyPublicKey {
            fn __repr__(&self) -> String {
                format!("PublicKey(fingerprint={:#018x})", self.key.fingerprint())
            }

            /// Raises TypeError: keys cannot be pickled until serialization exists.
            fn __reduce__(&self) -> PyResult<PyObject> {
                Err(SCHEME.not_picklable("PublicKey"))
            }
        }

        /// The key of an encryptor.
        enum EncryptionKey {
            Public(Arc<PublicKey>),
            /// Secret-key encryption (less noise).
            Secret(Arc<SecretKey>),
        }

        /// The key argument of `Context.encryptor`.
        fn encryption_key(key: &Bound<'_, PyAny>) -> PyResult<EncryptionKey> {
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
        fn decryption_key(key: &Bound<'_, PyAny>) -> PyResult<Arc<SecretKey>> {
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

/// `#[pymethods] impl PyContext` with the scheme's own `$items` and the members every `Context` has:
/// `encryptor(key, evaluator=None)` (with the doc comment written before `fn encryptor;`, which names
/// the scheme's keyless default evaluator), `decryptor(key)`, and the getters `security_warning` and
/// `fingerprint`.
///
/// `encryptor` attaches its ciphertexts to `evaluator`, or to the context's keyless evaluator. Needs a
/// `PyContext` with fields `ctx: Arc<the scheme's context>` and `plain: Arc<Eval>` (that keyless
/// evaluator), the functions of `key_classes!`, and the constructors
/// `PyEncryptor::new(&Arc<context>, EncryptionKey, Arc<Eval>) -> PyResult<PyEncryptor>` and
/// `PyDecryptor::new(&Arc<context>, &SecretKey) -> PyResult<PyDecryptor>` (run with the GIL released).
macro_rules! context_methods {
    ($(#[$encryptor_doc:meta])* fn encryptor; impl $ty:ident { $($items:tt)* }) => {
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
        }
    };
}

/// `#[pymethods] impl PyKeySet` with the scheme's own `$items` and the members every `KeySet` has: the
/// getters `secret`, `public` and `relin`, and a `__reduce__` that raises `TypeError`.
///
/// Needs `SCHEME` and a `PyKeySet` with fields `secret`, `public` and `relin` (`Arc`s of the keys that
/// `PySecretKey`, `PyPublicKey` and `PyRelinKey` wrap in their field `key`).
macro_rules! keyset_methods {
    (impl $ty:ident { $($items:tt)* }) => {
        #[pymethods]
        impl $ty {
            /// The secret key (never printed).
            #[getter]
            fn secret(&self) -> PySecretKey {
                PySecretKey {
                    key: Arc::clone(&self.secret),
                }
            }

            /// The public encryption key.
            #[getter]
            fn public(&self) -> PyPublicKey {
                PyPublicKey {
                    key: Arc::clone(&self.public),
                }
            }

            /// The relinearization key (needed by ciphertext multiplication).
            #[getter]
            fn relin(&self) -> PyRelinKey {
                PyRelinKey {
                    key: Arc::clone(&self.relin),
                }
            }

            $($items)*

            /// Raises TypeError: keys cannot be pickled until serialization exists.
            fn __reduce__(&self) -> PyResult<PyObject> {
                Err(SCHEME.not_picklable("KeySet"))
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

            /// Raises TypeError: holds keys, which cannot be pickled until serialization exists.
            fn __reduce__(&self) -> PyResult<PyObject> {
                Err(SCHEME.not_picklable("Evaluator"))
            }
        }
    };
}

/// `#[pymethods] impl PyCiphertext` with the scheme's own `$items` and the members every `Ciphertext`
/// has: the operators `+ - *` on either side (numpy arrays on the left defer to them), the getter
/// `evaluator`, `__copy__` and `__deepcopy__` (ciphertexts are immutable), and a `__reduce__` that raises
/// `TypeError`.
///
/// Needs `SCHEME`, a `PyCiphertext` with a field `eval: Arc<Eval>`, a `PyEvaluator { eval }`, and a
/// function `binary(py, &Arc<Eval>, &PyCiphertext, &Bound<PyAny>, BinOp) ->
/// PyResult<Option<PyCiphertext>>` (`None` for an unsupported operand).
macro_rules! ciphertext_methods {
    (impl $ty:ident { $($items:tt)* }) => {
        #[pymethods]
        impl $ty {
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

            /// Ciphertexts are immutable: a copy is the same object.
            fn __copy__(slf: Py<Self>) -> Py<Self> {
                slf
            }

            /// Ciphertexts are immutable: a deep copy is the same object.
            fn __deepcopy__(slf: Py<Self>, _memo: &Bound<'_, PyAny>) -> Py<Self> {
                slf
            }

            /// Raises TypeError: ciphertexts cannot be pickled until serialization exists.
            fn __reduce__(&self) -> PyResult<PyObject> {
                Err(SCHEME.not_picklable("Ciphertext"))
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
}

pub(crate) use {
    add_scheme_classes, ciphertext_methods, context_methods, evaluator_methods, key_classes,
    keyset_methods,
};
