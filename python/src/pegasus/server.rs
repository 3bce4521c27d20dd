//! `PipelineServer`: the evaluation side of a PEGASUS pipeline loaded from the bytes a client sends
//! (parameters, options, evaluation keys), without any secret: what a server, or a worker of
//! `rnsfhe.distributed`, needs for the stages of PEGASUS Fig. 6 (extraction, look-up tables, repacking).

use super::*;
use rnsfhe::math::wire::{DecodeError, Deserializable, Integrity, Serializable};

/// The pipeline that `params`, `options` and `keys` (the bytes of `Pipeline.params_to_bytes`,
/// `options_to_bytes` and `keys_to_bytes`) make: the parameters under the process-wide load limits (sets
/// below 128 bits only with `allow_insecure`, the reader's own opt-in), the options for them, then
/// every key against both (`PegasusEvaluator::from_key_bytes`).
pub(crate) fn evaluator_from_bytes(
    params: &[u8],
    options: &[u8],
    keys: &[u8],
    allow_insecure: bool,
    integrity: Integrity<'_>,
) -> Result<PegasusEvaluator, DecodeError> {
    let limits = rnsfhe::core::serialization::LoadLimits {
        allow_insecure: allow_insecure || crate::common::load_limits().allow_insecure,
        ..crate::common::load_limits()
    };
    let p = rnsfhe::pegasus::PipelineParams::from_bytes_sealed(params, &limits, integrity)?;
    let o = PipelineOptions::from_bytes_sealed(options, &p, &limits, integrity)?;
    PegasusEvaluator::from_key_bytes(p, o, keys, integrity)
}

/// The evaluation keys of a PEGASUS pipeline without its secrets, loaded from the client's bytes: the
/// stages of PEGASUS Fig. 6 one by one, for a server or the workers of ``rnsfhe.distributed``.
///
/// ``PipelineServer.from_bytes(preset, params, options, keys, allow_insecure=False, mac_key=None)`` loads
/// what ``Pipeline.params_to_bytes()``, ``options_to_bytes()`` and ``keys_to_bytes()`` wrote (checked as
/// ``Pipeline.validate_key_bytes`` checks them; ``preset`` names the pipeline preset, for the tables'
/// parameter set). CKKS ciphertexts go in and out as their wire bytes (``ct.to_bytes()``,
/// ``ckks.Ciphertext.from_bytes(data, session.context)``): ``to_lwe(ct_bytes)`` (steps 1-4),
/// ``lut_lwe(cts, table)`` (step 5) and ``repack(cts, table)`` (steps 6-10) give, in a row, the
/// ciphertext of ``session.lut``. The GIL is released in each.
#[pyclass(name = "PipelineServer", module = "rnsfhe.pegasus", frozen)]
pub(crate) struct PyPipelineServer {
    pegasus: Pegasus,
}

#[pymethods]
impl PyPipelineServer {
    /// PipelineServer.from_bytes(preset, params, options, keys, allow_insecure=False, mac_key=None)
    ///
    /// The pipeline of the pipeline preset ``preset`` (``presets()``) from the bytes of
    /// ``Pipeline.params_to_bytes()``, ``options_to_bytes()`` and ``keys_to_bytes()``: the parameters
    /// under the load limits (``allow_insecure``: the reader's opt-in for sets below 128 bits), the
    /// options for them, every key against both, each digest (a MAC under ``mac_key``). Raises
    /// rnsfhe.DecodeError naming the field and byte offset. The GIL is released.
    #[staticmethod]
    #[pyo3(signature = (preset, params, options, keys, allow_insecure = false, mac_key = None))]
    fn from_bytes(
        py: Python<'_>,
        preset: &str,
        params: &Bound<'_, PyAny>,
        options: &Bound<'_, PyAny>,
        keys: &Bound<'_, PyAny>,
        allow_insecure: bool,
        mac_key: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        use crate::common::{decode_error, integrity, read_bytes};
        let preset = SCHEME.find_preset(&PipelinePreset::ALL, preset)?;
        let key = crate::common::mac_key(mac_key)?;
        let (params, options, keys) =
            (read_bytes(params)?, read_bytes(options)?, read_bytes(keys)?);
        let (params, options, keys) = (params.as_bytes(), options.as_bytes(), keys.as_bytes());
        let evaluator = crate::common::release(py, || {
            evaluator_from_bytes(params, options, keys, allow_insecure, integrity(&key))
        })
        .map_err(decode_error)?;
        let lwe_params = lwe_params_of(preset, evaluator.params().lwe);
        Ok(Self {
            pegasus: Pegasus {
                evaluator,
                lwe_params,
            },
        })
    }

    /// Values per ciphertext (the slot count of the pipeline's keys).
    #[getter]
    fn slots(&self) -> usize {
        self.pegasus.options().slots
    }

    /// The LWE side of the parameters (``rnsfhe.lwe.PegasusParams``; ``LookupTable.from_bytes`` of the
    /// session's tables reads them against it).
    #[getter]
    fn lwe_params(&self) -> PyPegasusParams {
        self.pegasus.lwe_params.clone()
    }

    /// to_lwe(ct) -> list[rnsfhe.lwe.LweCiphertext]: the slots of a CKKS ciphertext (its wire bytes)
    /// as LWE ciphertexts (PEGASUS Fig. 6 steps 1-4); DecodeError for bytes of another context.
    fn to_lwe(&self, py: Python<'_>, ct: &Bound<'_, PyAny>) -> PyResult<Vec<PyLweCiphertext>> {
        let data = crate::common::read_bytes(ct)?;
        let ct = Ciphertext::from_bytes(data.as_bytes(), self.pegasus.context())
            .map_err(crate::common::decode_error)?;
        self.pegasus.to_lwe(py, &ct)
    }

    /// lut_lwe(cts, table) -> list[rnsfhe.lwe.LweCiphertext]: step 5 on every LWE ciphertext, as
    /// ``Pipeline.lut_lwe``.
    fn lut_lwe(
        &self,
        py: Python<'_>,
        cts: &Bound<'_, PyAny>,
        table: &Bound<'_, PyAny>,
    ) -> PyResult<Vec<PyLweCiphertext>> {
        self.pegasus.lut_lwe(py, cts, table)
    }

    /// repack(cts, table) -> bytes: the outputs of ``lut_lwe`` back into one CKKS ciphertext (steps
    /// 6-10, as ``Pipeline.repack``), as its wire bytes.
    fn repack<'py>(
        &self,
        py: Python<'py>,
        cts: &Bound<'py, PyAny>,
        table: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, pyo3::types::PyBytes>> {
        let out = self.pegasus.repack(py, cts, table)?;
        Ok(crate::common::to_py_bytes(py, || out.to_bytes()))
    }

    fn __repr__(&self) -> String {
        format!(
            "PipelineServer({:?}, slots={})",
            preset_name(self.pegasus.lwe_params.preset),
            self.slots()
        )
    }
}
