//! `rnsfhe._rnsfhe.bfv`: Python bindings of the BFV scheme (`rnsfhe-bfv`, HPS form), re-exported by the
//! pure-Python module `rnsfhe.bfv` (which adds the `Session` convenience class and `reduce`).
//!
//! One submodule per object: [`context`] (`Context`), [`keys`] (`KeySet` and its keys), [`plaintext`] (`Plaintext`), [`encryption`]
//! (`Encryptor`, `Decryptor` with the diagnostic noise budget), [`evaluator`] (`Evaluator`),
//! [`ciphertext`] (`Ciphertext`, with Python operators and row / column rotations), [`encoding`] (the
//! "batch" and "coeff" encodings) and [`values`] (integer values and operands read from Python). As in
//! `rnsfhe.ckks`, every `Ciphertext` holds a shared reference to the evaluator that made it
//! (`Arc<Eval>`, which owns the relinearization and Galois keys), so `a * b` needs no key argument; it
//! also remembers its encoding so that `ct + array` encodes the array the same way and decryption
//! decodes it. Values are numpy `int64` in and out. Errors of the Rust layers become `ValueError` with
//! the Rust message; key generation, encryption, decryption and every homomorphic operation run with the
//! GIL released. What this module shares with `ckks` (the key classes, and the members every `Context`,
//! `KeySet`, `Evaluator` and `Ciphertext` has) is written by the macros of [`crate::common`].

use std::sync::Arc;

use numpy::{PyArray1, PyArrayDescrMethods, PyArrayMethods, PyUntypedArray, PyUntypedArrayMethods};
use pyo3::exceptions::{PyOverflowError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyFloat, PyInt};
use rnsfhe::math::sampling::Csprng;
use rnsfhe::math::wire::Serializable;
use rnsfhe_bfv::{
    BatchEncoder, BfvContext, BfvError, BfvParams, BfvPreset, Ciphertext, CoeffEncoder, Decryptor,
    Encryptor, Evaluator, GaloisKeys, KeyGenerator, KeySwitchTechnique, Plaintext, PublicKey,
    RelinKey, SecretKey, SeededCiphertext, HPS_SIGMA,
};

use crate::common::{
    add_scheme_classes, as_array, ciphertext_methods, ciphertext_wire_class, context_methods,
    evaluator_methods, extended_public_key, key_classes, keyset_methods, load_object, preset_name,
    preset_names, preset_prefix, py_bool, release, release_as, rotations_of_elements,
    value_error_with_hint, warn_user, wire_context, wire_key_class, wire_methods, wire_objects,
    wrong_dimensions, BinOp, ContextCache, Int, Scheme, WireClass, WireObject,
};

mod ciphertext;
mod context;
mod encoding;
mod encryption;
mod evaluator;
mod keys;
mod plaintext;
mod values;

use ciphertext::*;
use context::*;
use encoding::*;
use encryption::*;
use evaluator::*;
use keys::*;
use plaintext::*;
use values::*;

const SCHEME: Scheme = Scheme {
    module: "bfv",
    name: "BFV",
};

/// Contexts loaded from bytes (`Context.from_bytes`, unpickling), by their exact bytes: the keyless
/// evaluator of each (which owns the context), held weakly.
static CONTEXTS: ContextCache<Eval> = ContextCache::new();

wire_context!(BfvContext);

wire_objects!(BfvContext {
    PublicKey => |c| &**c.rlwe(),
    RelinKey => |c| c,
    GaloisKeys => |c| c,
    Ciphertext => |c| c,
    Plaintext => |c| c,
});

/// A BFV error as a Python `ValueError` with the Rust message, plus a Python hint where one helps.
fn bfv_error(err: BfvError) -> PyErr {
    let hint = match &err {
        BfvError::Insecure { .. } => " (Python: pass allow_insecure=True)".to_string(),
        BfvError::BatchingUnavailable { .. } => {
            " (Python: encrypt(values, encoding=\"coeff\"))".to_string()
        }
        BfvError::MissingGaloisKey { step: Some(s), .. } => {
            format!(" (Python: include {s} in ctx.keygen(rotations=[...]))")
        }
        BfvError::MissingGaloisKey { step: None, .. } => {
            " (Python: ctx.keygen(column_swap=True))".to_string()
        }
        _ => String::new(),
    };
    value_error_with_hint(err, &hint)
}

/// Error of a rotation by an evaluator without Galois keys.
fn missing_galois_keys(operation: &str) -> PyErr {
    PyValueError::new_err(format!(
        "{operation} needs Galois keys: generate them with ctx.keygen(rotations=[...], column_swap=True) \
         and build the evaluator from that KeySet, ctx.evaluator(keys) (or galois_keys=...), or use \
         bfv.Session(ctx, rotations=[...], column_swap=True)"
    ))
}

/// Error of a rotation of a coefficient-encoded ciphertext.
fn rotation_needs_batch(operation: &str) -> PyErr {
    PyValueError::new_err(format!(
        "{operation} acts on the slots of a batch-encoded ciphertext; this one is coefficient-encoded \
         (its automorphism X -> X^g would not rotate the values)"
    ))
}

/// Error of a ciphertext multiplication by an evaluator without a relinearization key.
fn missing_relin_key() -> PyErr {
    PyValueError::new_err(
        "ciphertext multiplication needs a relinearization key: build the evaluator from a KeySet, \
         ctx.evaluator(keys), or give it relin_key=..., or use a bfv.Session",
    )
}

/// Builds the submodule `bfv` of `_rnsfhe`.
pub(crate) fn register(parent: &Bound<'_, PyModule>) -> PyResult<()> {
    SCHEME.register(parent, |m| {
        add_scheme_classes!(m);
        m.add_class::<PyPlaintext>()?;
        m.add_function(wrap_pyfunction!(context::presets, m)?)?;
        m.add("HPS_SIGMA", HPS_SIGMA)?;
        Ok(())
    })
}
