//! `rnsfhe._rnsfhe.lwe`: Python bindings of the LWE half of PEGASUS (`rnsfhe-lwe`), re-exported by the
//! pure-Python module `rnsfhe.lwe`.
//!
//! One submodule per object: [`params`] (`PegasusParams`, `PegasusSecurity`, the preset names),
//! [`secret`] (`LweSecretKey`: encryption and decryption, one value or a numpy vector), [`ciphertext`]
//! (`LweCiphertext`, with Python operators and modulus switching), [`keyswitch`] (`LweSwitchingKey`) and
//! [`session`] (`LutSession`: every key of a look-up-table evaluation in one object, and tables of any
//! Python function) and [`server`] (`LutServer`: the session's evaluation keys without its secrets,
//! loadable from bytes). The Rust crate decides everything cryptographic (the table grid, blind rotation, the
//! error bound); this module reads Python values and converts results (vectors as numpy arrays). Errors of
//! the Rust layer become `ValueError` with the Rust message; key generation, vector encryption and
//! decryption, key switching and look-up tables run with the GIL released. Secret keys are never printed
//! and cannot be pickled (`to_secret_bytes` saves one explicitly); ciphertexts and switching keys have
//! `to_bytes` / `from_bytes` in the wire format of `rnsfhe_lwe::serialization`, loaded against the
//! parameters they belong to (`DecodeError` naming the field and offset for bad bytes).

use std::sync::{Arc, Mutex};

use numpy::{PyArray1, PyArrayMethods, PyUntypedArrayMethods};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use rnsfhe::core::{RlweContext, SecretDistribution, SecretKey};
use rnsfhe::lwe::{
    BlindRotation, BlindRotationKey, LookupTable, LutEvaluator, LweCiphertext, LweDimension,
    LweError, LweSecretDistribution, LweSecretKey, LweSpace, LweSwitchingKey,
    LweSwitchingKeyContext, PegasusParams, PegasusPreset,
};
use rnsfhe::math::sampling::{Csprng, DiscreteGaussian};
use rnsfhe::math::wire::{Deserializable, PublicRandomness, Serializable};
use rnsfhe::math::Modulus;

use crate::common::{
    as_array, decode_error, integrity, operator_result, preset_name, preset_names, randomness,
    read_bytes, to_py_bytes, value_error, wrong_dimensions, BinOp, Int, PyCallable, Scheme,
};

mod ciphertext;
mod keyswitch;
mod params;
mod secret;
mod server;
mod session;
mod table;

use keyswitch::*;
use params::*;
use secret::*;
use server::*;
use session::*;

// What the PEGASUS bindings (`crate::pegasus`) take and return: LWE ciphertexts and look-up tables as the
// Python objects of this module.
pub(crate) use ciphertext::PyLweCiphertext;
pub(crate) use params::{algorithm_name, parse_algorithm, PyPegasusParams};
pub(crate) use secret::{decrypt_phases, read_ciphertexts, read_reals};
pub(crate) use table::PyLookupTable;

const SCHEME: Scheme = Scheme {
    module: "lwe",
    name: "LWE",
};

/// An error of the LWE layer as a Python `ValueError` with the Rust message.
fn lwe_error(err: LweError) -> PyErr {
    value_error(err)
}

/// The random generator of key generation and encryption: the operating system's, or (`seed` given) a
/// deterministic one for tests and reproducible examples, which is not secure.
pub(crate) fn csprng(seed: Option<Int>) -> PyResult<Csprng> {
    match seed {
        None => Csprng::from_os().map_err(value_error),
        Some(seed) => {
            let mut bytes = [0u8; 32];
            bytes[..8].copy_from_slice(&seed.get::<u64>("seed")?.to_le_bytes());
            Ok(Csprng::insecure_from_seed_for_tests(bytes))
        }
    }
}

/// The error distribution of width `sigma` (ValueError for a width the sampler refuses).
fn gaussian(sigma: f64) -> PyResult<DiscreteGaussian> {
    DiscreteGaussian::with_sigma(sigma).map_err(value_error)
}

/// Builds the submodule `lwe` of `_rnsfhe`.
pub(crate) fn register(parent: &Bound<'_, PyModule>) -> PyResult<()> {
    SCHEME.register(parent, |m| {
        m.add_class::<PyPegasusParams>()?;
        m.add_class::<PyLookupTable>()?;
        m.add_class::<PyPegasusSecurity>()?;
        m.add_class::<PyLweSecretKey>()?;
        m.add_class::<PyLweCiphertext>()?;
        m.add_class::<PyLweSwitchingKey>()?;
        m.add_class::<PyLutSession>()?;
        m.add_class::<PyLutServer>()?;
        m.add_function(wrap_pyfunction!(params::presets, m)?)?;
        Ok(())
    })
}
