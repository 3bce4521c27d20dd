//! `rnsfhe._rnsfhe.ckks`: Python bindings of the CKKS scheme (`rnsfhe::ckks`), re-exported by the pure-Python
//! module `rnsfhe.ckks` (which adds the `Session` convenience class).
//!
//! One submodule per object: [`context`] (`Context`), [`keys`] (`KeySet` and its keys), [`plaintext`] (`Plaintext`), [`encryption`]
//! (`Encryptor`, `Decryptor`), [`evaluator`] (`Evaluator`), [`ciphertext`] (`Ciphertext`, with Python
//! operators), [`polynomial`] (`Polynomial`, the plaintext side of polynomial and function evaluation),
//! [`functions`] (the polynomial functions on ciphertexts), [`stats`] (`PrecisionStats`), and [`values`]
//! (slot values and operands read from Python). Every `Ciphertext` holds a shared reference to the
//! evaluator that made it (`Arc<Eval>`), so `a * b` needs no evaluator argument. The binding reads
//! arguments and converts results; the library policy (automatic rescaling, rotation steps of sparse
//! ciphertexts, defaults of the function approximations, level checks) is the Rust crate's. Errors of the
//! Rust layers become `ValueError` with the Rust message (a lack of levels its subclass
//! `NotEnoughLevelsError`); keygen, encryption, decryption and every homomorphic operation run with the GIL
//! released. Python functions to interpolate are called with the GIL held, their exceptions kept and raised
//! unchanged. What this module shares with `bfv` (the key classes, and the members every `Context`,
//! `KeySet`, `Evaluator` and `Ciphertext` has) is written by the macros of [`crate::common`].

use std::sync::Arc;

use numpy::{PyArray1, PyArrayDescrMethods, PyArrayMethods, PyUntypedArray, PyUntypedArrayMethods};
use pyo3::exceptions::{PyTypeError, PyValueError, PyZeroDivisionError};
use pyo3::prelude::*;
use pyo3::types::{PyComplex, PyDict, PyFloat, PyInt, PyType};
use rnsfhe::ckks::{
    self, approximation, BinaryOp, BootstrappingKeys, ChebyshevSeries, Ciphertext, CkksContext,
    CkksDecryptor, CkksEncryptor, CkksParams, Complex64, Csprng, Evaluator, GaloisKeys,
    InverseMethod, KeyGenerator, Operand, PartStats, Plaintext, Polynomial, PolynomialBasis,
    PrecisionStats, Preset, PublicKey, RelinKey, RescalingPolicy, SecretDistribution, SecretKey,
    SecurityLevel, SeededCiphertext, Serializable, SparseEncapsulation,
};

use crate::common::{
    add_scheme_classes, as_array, ciphertext_methods, ciphertext_wire_class, context_methods,
    evaluator_methods, extended_public_key, key_classes, keyset_methods, load_object, mode_name,
    operator_result, parse_mode, preset_name, preset_names, preset_prefix, py_bool, release,
    release_as, release_inline, rotations_of_elements, value_error_with_hint, warn_user,
    wire_context, wire_key_class, wire_methods, wire_objects, wrong_dimensions, BinOp,
    ContextCache, Int, PyCallable, Scheme, WireClass, WireObject,
};

mod bootstrap;
mod ciphertext;
mod context;
mod encryption;
mod evaluator;
mod functions;
mod keys;
mod plaintext;
mod polynomial;
mod stats;
mod values;

pub(crate) use bootstrap::PyBootstrapper;
use bootstrap::*;
pub(crate) use ciphertext::PyCiphertext;
use context::*;
use encryption::*;
use evaluator::*;
use functions::*;
use keys::*;
use plaintext::*;
use polynomial::*;
use stats::*;
use values::*;

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
    BootstrappingKeys => |c| c,
    Ciphertext => |c| c,
    Plaintext => |c| c,
});

/// A CKKS error as a Python `ValueError` with the Rust message, plus a Python hint for missing keys; a
/// lack of levels is a [`NotEnoughLevelsError`] (a `ValueError`) naming the levels needed and available.
pub(crate) fn ckks_error(err: ckks::Error) -> PyErr {
    let hint = match &err {
        ckks::Error::Insecure { .. } | ckks::Error::InsecureKey { .. } => {
            " (Python: pass allow_insecure=True to use them anyway)".to_string()
        }
        ckks::Error::ScaleMismatch { operation, .. } if operation.contains("plaintext") => {
            " (Python: encode at the ciphertext's level and scale, ctx.encode(values, level=ct.level, \
             scale=ct.scale))"
                .to_string()
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

/// The Python CKKS objects of a PEGASUS session (`rnsfhe.pegasus.Session`, made in [`crate::pegasus`]):
/// the context of `ctx`, the key set `keys` (Galois keys for `rotations`, and conjugation if
/// `conjugate`), and an auto-rescaling evaluator with those keys that carries `pegasus` to every
/// ciphertext it makes, so that `ct.lut(f)` finds the pipeline as `ct * ct` finds the relinearization
/// key.
pub(crate) fn pegasus_session(
    py: Python<'_>,
    ctx: &Arc<CkksContext>,
    keys: ckks::KeySet,
    rotations: Vec<i64>,
    conjugate: bool,
    pegasus: Arc<crate::pegasus::Pegasus>,
) -> PyResult<(PyObject, PyObject, PyObject)> {
    let context = PyContext {
        ctx: Arc::clone(ctx),
        preset: None,
        plain: Arc::new(Eval::keyless(ctx, true)),
    };
    let keys = PyKeySet {
        ctx: Arc::clone(ctx),
        secret: Arc::new(keys.secret),
        public: Arc::new(keys.public),
        relin: Arc::new(keys.relin),
        galois: Arc::new(keys.galois),
        encapsulation: None,
        rotations,
        conjugate,
    };
    let galois = (&keys.galois, &keys.rotations[..], keys.conjugate);
    // The evaluator shares the key set's keys (no copy).
    let eval = context.make_eval(Some(&keys.relin), Some(galois), None, true, false, None)?;
    let evaluator = PyEvaluator {
        eval: Arc::new(Eval {
            pegasus: Some(pegasus),
            ..eval
        }),
    };
    Ok((
        Py::new(py, context)?.into_any(),
        Py::new(py, keys)?.into_any(),
        Py::new(py, evaluator)?.into_any(),
    ))
}

/// `ct` as a Python ciphertext attached to `evaluator` (a `ckks.Evaluator`); TypeError for another object.
pub(crate) fn attach_to(evaluator: &Bound<'_, PyAny>, ct: Ciphertext) -> PyResult<PyCiphertext> {
    let evaluator = evaluator.downcast::<PyEvaluator>()?;
    Ok(PyCiphertext::new(ct, &evaluator.get().eval))
}

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

/// Builds the submodule `ckks` of `_rnsfhe`.
pub(crate) fn register(parent: &Bound<'_, PyModule>) -> PyResult<()> {
    SCHEME.register(parent, |m| {
        add_scheme_classes!(m);
        m.add_class::<PyPartStats>()?;
        m.add_class::<PyPrecisionStats>()?;
        m.add_class::<PyPolynomial>()?;
        m.add_class::<PyPlaintext>()?;
        m.add_class::<PyBootstrapper>()?;
        m.add_class::<PyBootstrappingKeys>()?;
        m.add(
            "NotEnoughLevelsError",
            m.py().get_type::<NotEnoughLevelsError>(),
        )?;
        m.add_function(wrap_pyfunction!(stats::precision, m)?)?;
        m.add_function(wrap_pyfunction!(context::presets, m)?)?;
        // setattr, not add_function: a helper of the tests, kept out of the module's __all__.
        m.setattr(
            "_rust_reference",
            wrap_pyfunction!(evaluator::_rust_reference, m)?,
        )?;
        m.add_function(wrap_pyfunction!(encryption::recommended_flooding_bits, m)?)?;
        Ok(())
    })
}
