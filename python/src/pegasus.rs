//! `rnsfhe._rnsfhe.pegasus`: Python bindings of the whole PEGASUS pipeline (`rnsfhe-pegasus`; Lu et al.,
//! IEEE S&P 2021, Fig. 6), re-exported by the pure-Python module `rnsfhe.pegasus` (which adds the
//! `Session` convenience class, a `ckks.Session` with PEGASUS keys).
//!
//! [`Pegasus`] is the evaluation side: the Rust [`PegasusEvaluator`] of a session, shared by `Arc` with
//! the CKKS evaluator of that session (`crate::ckks`), so that every CKKS ciphertext the session makes
//! carries it and `ct.lut(f)` / `ct.to_lwe()` need no other argument, as `ct * ct` needs no
//! relinearization key argument. [`pipeline`] holds the Python class `Pipeline`: key generation, the
//! secrets (encryption at the pipeline's input level, decryption of LWE ciphertexts) and the methods a
//! `Session` forwards to; [`server`] the class `PipelineServer`, the evaluation side loaded from bytes. Python callables become look-up tables with the GIL held (their exceptions kept
//! and raised unchanged, as for `ckks.Ciphertext.chebyshev`); the pipeline itself (slots to coefficients,
//! extraction, blind rotations, repacking) runs with the GIL released. The cryptographic choices (the
//! input scale, the table grid, the output scale F_mod allows) are the Rust crate's; this module reads
//! Python values, checks what Python users get wrong (slot counts, the input range, levels, scales, a
//! ciphertext of another session, a table of another pipeline) and converts results.

use std::cell::{Cell, RefCell};
use std::sync::{Arc, Mutex};

use numpy::{PyArray1, PyReadonlyArray1};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use rnsfhe::ckks::{Ciphertext, CkksContext, CkksEncryptor, KeyGenerator};
use rnsfhe::lwe::{LookupTable, LweCiphertext, LweError};
use rnsfhe::math::sampling::Csprng;
use rnsfhe::pegasus::{
    DimensionSwitch, PegasusError, PegasusEvaluator, PegasusKeys, PegasusSecretKeys,
    PipelineOptions, PipelinePreset, Repacking,
};

use crate::common::{
    preset_name, preset_names, value_error, value_error_with_hint, warn_user, Int, PyCallable,
    Scheme,
};
use crate::lwe::{
    algorithm_name, csprng, decrypt_phases, parse_algorithm, read_ciphertexts, PyLookupTable,
    PyLweCiphertext, PyPegasusParams,
};

mod pipeline;
pub(crate) mod server;

pub(crate) use pipeline::PyPipeline;
use server::PyPipelineServer;

const SCHEME: Scheme = Scheme {
    module: "pegasus",
    name: "PEGASUS",
};

/// A pipeline error as a Python exception: CKKS errors as `ckks` raises them (a lack of levels is a
/// `NotEnoughLevelsError`), keys below 128 bits with the Python opt-in named, the rest a `ValueError`
/// with the Rust message.
fn pegasus_error(err: PegasusError) -> PyErr {
    match err {
        PegasusError::Ckks(e) => crate::ckks::ckks_error(e),
        PegasusError::Lwe(e @ LweError::Insecure { .. }) => value_error_with_hint(
            e,
            " (Python: pass allow_insecure=True to rnsfhe.pegasus.Session to use them anyway)",
        ),
        other => value_error(other),
    }
}

/// The evaluation side of a PEGASUS session: the Rust pipeline with its evaluation keys, and the LWE
/// side of its parameters as Python shows them (the ring of its look-up tables).
pub(crate) struct Pegasus {
    evaluator: PegasusEvaluator,
    /// The LWE side (`q_0` the CKKS chain's), for the `LookupTable` objects of the session.
    lwe_params: PyPegasusParams,
}

impl Pegasus {
    /// The Rust pipeline (the comparisons of `crate::apps` run on it).
    pub(crate) fn evaluator(&self) -> &PegasusEvaluator {
        &self.evaluator
    }

    fn context(&self) -> &Arc<CkksContext> {
        self.evaluator.context()
    }

    fn options(&self) -> &PipelineOptions {
        self.evaluator.options()
    }

    /// The modulus and scale of the LWE ciphertexts of `to_lwe` (the tables' inputs).
    fn lwe_input(&self) -> PyResult<(u64, f64)> {
        let e = &self.evaluator;
        Ok((
            e.lwe_modulus().map_err(pegasus_error)?,
            e.lwe_input_scale().map_err(pegasus_error)?,
        ))
    }

    /// ValueError unless `ct` is an input of the pipeline: its slot count and the default scale (S2C
    /// folds the input scale `Delta_in` of the table into its matrices for that scale, so another one
    /// would shift every value). Levels are the Rust check's (`NotEnoughLevelsError`).
    fn check_input(&self, ct: &Ciphertext, method: &str) -> PyResult<()> {
        let slots = self.options().slots;
        if ct.slots() != slots {
            return Err(PyValueError::new_err(format!(
                "{method}: the ciphertext has {} slots, the session's pipeline was made for {slots} \
                 (Session(slots=...)); encrypt its inputs with session.encrypt",
                ct.slots()
            )));
        }
        let ctx = self.context();
        let expected = ctx
            .level_scale(self.evaluator.input_level())
            .map_err(crate::ckks::ckks_error)?;
        if (ct.scale() / expected - 1.0).abs() > ctx.scale_tolerance() {
            return Err(PyValueError::new_err(format!(
                "{method}: the ciphertext's scale 2^{:.3} is not the pipeline's input scale 2^{:.3} \
                 (the default scale of its level): rescale products first (an evaluator with \
                 auto_rescale does)",
                ct.scale().log2(),
                expected.log2()
            )));
        }
        Ok(())
    }

    /// The table `f` stands for: a `LookupTable` of this pipeline as it is, or the table of a Python
    /// callable (`PegasusEvaluator::table`: sampled on `[-B, B]`, called with the GIL held, its first
    /// exception raised unchanged).
    fn table_of(&self, f: &Bound<'_, PyAny>) -> PyResult<Arc<LookupTable>> {
        if let Ok(table) = f.downcast::<PyLookupTable>() {
            let table = &table.get().table;
            self.check_table(table)?;
            return Ok(Arc::clone(table));
        }
        let call = PyCallable::new(f)?;
        if let Some(table) = self.ufunc_table(f)? {
            return Ok(Arc::new(table));
        }
        let table = self.evaluator.table(|x| call.call(x));
        call.finish(table, pegasus_error).map(Arc::new)
    }

    /// The table of a numpy ufunc (`np.tanh`) by one vectorized call instead of one Python call per
    /// sample (about 2 us each, 5 n of them): a first pass records the points the table samples, the
    /// ufunc maps them all at once, and a second pass replays the values. The sampling of
    /// `PegasusEvaluator::table` does not depend on the values, but the replay checks every point and
    /// gives up (`None`: the caller calls `f` point by point) if a point differs, so a change of that
    /// order costs speed, never correctness. `None` for other callables too.
    fn ufunc_table(&self, f: &Bound<'_, PyAny>) -> PyResult<Option<LookupTable>> {
        let py = f.py();
        let ufunc = py.import("numpy")?.getattr("ufunc")?;
        if !f.is_instance(&ufunc)? {
            return Ok(None);
        }
        let points = RefCell::new(Vec::new());
        let recorded = self.evaluator.table(|x| {
            points.borrow_mut().push(x);
            0.0
        });
        let points = points.into_inner();
        if recorded.is_err() {
            return Ok(None);
        }
        let ys = f.call1((PyArray1::from_slice(py, &points),))?;
        let Ok(ys) = ys.extract::<PyReadonlyArray1<'_, f64>>() else {
            return Ok(None);
        };
        let ys = ys.as_slice()?;
        if ys.len() != points.len() {
            return Ok(None);
        }
        let next = Cell::new(0usize);
        let replayed = Cell::new(true);
        let table = self.evaluator.table(|x| {
            let i = next.get();
            next.set(i + 1);
            match (points.get(i), ys.get(i)) {
                (Some(p), Some(&y)) if p.to_bits() == x.to_bits() => y,
                _ => {
                    replayed.set(false);
                    f64::NAN
                }
            }
        });
        if !replayed.get() || next.get() != points.len() {
            return Ok(None);
        }
        table.map(Some).map_err(pegasus_error)
    }

    /// ValueError unless `table` reads this pipeline's LWE ciphertexts (their modulus and scale) in its
    /// look-up-table ring: a table of an `lwe.LutSession` or of a pipeline of other parameters would
    /// read the values at the wrong scale.
    fn check_table(&self, table: &LookupTable) -> PyResult<()> {
        let (modulus, scale) = self.lwe_input()?;
        let n = 1usize << self.lwe_params.params.lut.log_n;
        if table.input_modulus() != modulus
            || (table.input_scale() / scale - 1.0).abs() > 1e-12
            || table.poly().degree() != n
        {
            return Err(PyValueError::new_err(format!(
                "this LookupTable was not made for the session's pipeline (it reads inputs modulo {} at \
                 scale {:e} in a ring of degree {}; the pipeline's are modulo {modulus} at scale \
                 {scale:e}, degree {n}): build it with session.table(f)",
                table.input_modulus(),
                table.input_scale(),
                table.poly().degree()
            )));
        }
        Ok(())
    }

    /// The look-up table of `f` (a callable) as a Python `LookupTable`.
    fn table(&self, f: &Bound<'_, PyAny>) -> PyResult<PyLookupTable> {
        Ok(PyLookupTable {
            table: self.table_of(f)?,
            params: self.lwe_params.clone(),
        })
    }

    /// `f` on every slot of `ct` (PEGASUS Fig. 6): the table with the GIL held, the pipeline without.
    pub(crate) fn lut(
        &self,
        py: Python<'_>,
        ct: &Ciphertext,
        f: &Bound<'_, PyAny>,
    ) -> PyResult<Ciphertext> {
        self.check_input(ct, "lut")?;
        let table = self.table_of(f)?;
        crate::common::release(py, || self.evaluator.apply_table(ct, &table)).map_err(pegasus_error)
    }

    /// The slots of `ct` as LWE ciphertexts (Fig. 6 steps 1-4), the GIL released.
    pub(crate) fn to_lwe(&self, py: Python<'_>, ct: &Ciphertext) -> PyResult<Vec<PyLweCiphertext>> {
        self.check_input(ct, "to_lwe")?;
        let lwes =
            crate::common::release(py, || self.evaluator.to_lwe(ct)).map_err(pegasus_error)?;
        Ok(lwes.into_iter().map(PyLweCiphertext::from).collect())
    }

    /// Step 5 on every ciphertext of `cts` (in parallel, the GIL released).
    fn lut_lwe(
        &self,
        py: Python<'_>,
        cts: &Bound<'_, PyAny>,
        f: &Bound<'_, PyAny>,
    ) -> PyResult<Vec<PyLweCiphertext>> {
        let cts = read_ciphertexts(cts)?;
        let table = self.table_of(f)?;
        let outs = crate::common::release(py, || self.evaluator.lut(&cts, &table))
            .map_err(pegasus_error)?;
        Ok(outs.into_iter().map(PyLweCiphertext::from).collect())
    }

    /// The outputs of `lut_lwe` back into one CKKS ciphertext (the GIL released).
    fn repack(
        &self,
        py: Python<'_>,
        cts: &Bound<'_, PyAny>,
        f: &Bound<'_, PyAny>,
    ) -> PyResult<Ciphertext> {
        let cts = read_ciphertexts(cts)?;
        let table = self.table_of(f)?;
        crate::common::release(py, || self.evaluator.repack(&cts, &table)).map_err(pegasus_error)
    }
}

/// The Python name of a repacking path.
fn repacking_name(r: Repacking) -> &'static str {
    match r {
        Repacking::RingPacking => "ring",
        Repacking::LinearTransform => "linear_transform",
        _ => "unknown",
    }
}

/// The repacking path of a Python name.
fn parse_repacking(name: &str) -> PyResult<Repacking> {
    match name.to_ascii_lowercase().as_str() {
        "ring" => Ok(Repacking::RingPacking),
        "linear_transform" => Ok(Repacking::LinearTransform),
        other => Err(PyValueError::new_err(format!(
            "unknown repacking {other:?}: expected \"ring\" (ring packing, modulus raise, \
             CoeffsToSlots and F_mod) or \"linear_transform\" (PEGASUS Fig. 6 steps 6-10: key switch, \
             the linear transform of Fig. 5, F_mod)"
        ))),
    }
}

/// The Python name of a dimension switch.
fn dimension_switch_name(d: DimensionSwitch) -> &'static str {
    match d {
        DimensionSwitch::WholeCiphertext => "whole",
        DimensionSwitch::PerCiphertext => "per_ciphertext",
        _ => "unknown",
    }
}

/// The dimension switch of a Python name.
fn parse_dimension_switch(name: &str) -> PyResult<DimensionSwitch> {
    match name.to_ascii_lowercase().as_str() {
        "whole" => Ok(DimensionSwitch::WholeCiphertext),
        "per_ciphertext" => Ok(DimensionSwitch::PerCiphertext),
        other => Err(PyValueError::new_err(format!(
            "unknown dimension_switch {other:?}: expected \"whole\" (one RLWE key switch of the whole \
             ciphertext, then extraction) or \"per_ciphertext\" (extraction, then PEGASUS Fig. 9 on \
             each LWE ciphertext)"
        ))),
    }
}

/// presets() -> list[str]
///
/// The names ``rnsfhe.pegasus.Session(preset=...)`` accepts: "Table4" (PEGASUS Table IV: N = 2^16, 16
/// primes of 45 bits, n_lwe = 2^10, look-up tables in degree 2^12; a sparse CKKS secret and LWE keys at
/// about 98 bits by our estimator, so it needs ``allow_insecure=True``), "Secure128" (the same
/// dimensions with every key at 128 bits or more) and "InsecureTest" (N = 2^11, n_lwe = 64, tables in
/// degree 2^10: tests and examples, not secure).
#[pyfunction]
fn presets() -> Vec<String> {
    preset_names(&PipelinePreset::ALL)
}

/// The parameters of the pipeline preset `preset`, with the look-up tables in degree `2^lut_log_n` if
/// given (`PipelinePreset::params_with_lut_log_n`).
fn pipeline_params(
    preset: PipelinePreset,
    lut_log_n: Option<u32>,
) -> Result<rnsfhe::pegasus::PipelineParams, PegasusError> {
    match lut_log_n {
        Some(log_n) => preset.params_with_lut_log_n(log_n),
        None => preset.params(),
    }
}

/// The parameters of `preset` (with the look-up-table ring `2^lut_log_n` if given) behind the security
/// gate every pipeline session shares: a preset the estimator puts below 128 bits is refused unless
/// `allow_insecure`, and then used with a Python warning.
pub(crate) fn checked_pipeline_params(
    py: Python<'_>,
    preset: PipelinePreset,
    lut_log_n: Option<u32>,
    allow_insecure: bool,
) -> PyResult<rnsfhe::pegasus::PipelineParams> {
    let params =
        crate::common::release(py, || pipeline_params(preset, lut_log_n)).map_err(pegasus_error)?;
    if let Some(warning) = params.ckks.security_warning() {
        if !allow_insecure {
            return Err(PyValueError::new_err(format!(
                "the PEGASUS preset {:?} is not 128-bit secure ({warning}); pass \
                 allow_insecure=True to use it anyway (tests, the paper's parameters), or use \
                 \"Secure128\"",
                preset_name(preset)
            )));
        }
        warn_user(py, &warning)?;
    }
    Ok(params)
}

/// The LWE side of the pipeline preset `preset` as an `rnsfhe.lwe.PegasusParams` (`q0` the CKKS
/// chain's); pickled `PegasusParams` of a pipeline come back through here.
fn lwe_params_of(preset: PipelinePreset, params: rnsfhe::lwe::PegasusParams) -> PyPegasusParams {
    PyPegasusParams {
        preset: preset.lwe_preset(),
        params,
        pipeline: Some(preset),
    }
}

/// Builds the submodule `pegasus` of `_rnsfhe`.
pub(crate) fn register(parent: &Bound<'_, PyModule>) -> PyResult<()> {
    SCHEME.register(parent, |m| {
        m.add_class::<PyPipeline>()?;
        m.add_class::<PyPipelineServer>()?;
        m.add_function(wrap_pyfunction!(presets, m)?)?;
        Ok(())
    })
}
