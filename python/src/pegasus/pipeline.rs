//! `Pipeline`: the keys of a PEGASUS session (CKKS and LWE side, from one CKKS secret), encryption at
//! the pipeline's input level, and the pipeline's operations on the session's ciphertexts.

use super::*;

/// The PEGASUS pipeline of one CKKS secret (Lu et al., IEEE S&P 2021, Fig. 6): the Rust half of
/// ``rnsfhe.pegasus.Session``, which makes one and forwards to it; use the Session.
///
/// ``Pipeline(preset="Secure128", *, slots, input_bound=8.0, repacking="ring", dimension_switch="whole",
/// algorithm=None, s2c_levels=2, c2s_levels=3, rotations=(), conjugate=False, sum_slots=False,
/// seed=None, allow_insecure=False, lut_log_n=None)`` builds the CKKS context of the preset
/// (``presets()``; ``lut_log_n``: the look-up tables in a ring of degree ``2^lut_log_n`` instead of the
/// preset's, ``rnsfhe_pegasus::PipelineParams::with_lut_log_n``: each doubling halves the tables' error
/// and doubles their time and blind-rotation key, PEGASUS Fig. 7; from log2(n_lwe) to log2(N),
/// ValueError otherwise) and samples
/// a CKKS secret, its public, relinearization and Galois keys (``rotations``, ``conjugate``, and with
/// ``sum_slots`` the rotations ``ct.sum()`` needs for ``slots`` slots: the ``keys`` of a
/// ``ckks.Session``), and every key of the pipeline for ``slots`` values per ciphertext in
/// ``[-input_bound, input_bound]``: the rotation keys of slots-to-coefficients, the dimension switch to
/// a new LWE secret (``"whole"``: one RLWE key switch of the whole ciphertext; ``"per_ciphertext"``:
/// PEGASUS Fig. 9 on each LWE ciphertext), the blind-rotation key (``algorithm``: ``"ternary"``,
/// ``"binary"``, ``"lmkcdey"``, or the preset's) and the repacking keys (``"ring"``: ring packing,
/// modulus raise and CoeffsToSlots; ``"linear_transform"``: PEGASUS Fig. 6 steps 6-10 with the
/// linear transform of Fig. 5), both ending with the reduction F_mod. ``s2c_levels`` and
/// ``c2s_levels`` (1 to 4) are the levels of slots-to-coefficients and of CoeffsToSlots. ``seed`` (an
/// integer) makes the keys and ``encrypt`` deterministic, for tests only (**not secure**). Parameters
/// below 128 bits ("Table4", "InsecureTest") raise ValueError unless ``allow_insecure=True`` (then a
/// UserWarning is issued). Key generation runs with the GIL released.
///
/// ``context``, ``keys`` and ``evaluator`` are the ``ckks`` objects of the session: the evaluator
/// (auto-rescaling, with ``keys``) carries the pipeline to every ciphertext it makes, so
/// ``ct.lut(f)`` and ``ct.to_lwe()`` work on them. Not picklable (it holds secret keys).
#[pyclass(name = "Pipeline", module = "rnsfhe.pegasus", frozen)]
pub(crate) struct PyPipeline {
    pegasus: Arc<Pegasus>,
    preset: PipelinePreset,
    /// The `ckks.Context`, `ckks.KeySet` and `ckks.Evaluator` of the session.
    context: PyObject,
    keys: PyObject,
    evaluator: PyObject,
    /// The LWE-side secrets (decryption of LWE ciphertexts).
    secrets: PegasusSecretKeys,
    /// Secret-key encryption at the input level (less noise than a public-key encryption).
    encryptor: CkksEncryptor,
    rng: Mutex<Csprng>,
}

/// Everything key generation makes (see [`PyPipeline`]).
struct Generated {
    evaluator: PegasusEvaluator,
    user: rnsfhe::ckks::KeySet,
    secrets: PegasusSecretKeys,
    encryptor: CkksEncryptor,
}

impl PyPipeline {
    /// ValueError unless `ct` (a `ckks.Ciphertext`) belongs to this session: attached to an evaluator
    /// of the session's own context. Two sessions of one preset have equal parameters (fingerprints)
    /// but different secrets, so the context object, not the fingerprint, tells them apart.
    pub(crate) fn own<'a>(
        &self,
        ct: &'a crate::ckks::PyCiphertext,
        method: &str,
    ) -> PyResult<&'a Ciphertext> {
        if Arc::ptr_eq(ct.context(), self.pegasus.context()) {
            Ok(ct.ciphertext())
        } else if ct.context().fingerprint() == self.pegasus.context().fingerprint() {
            Err(PyValueError::new_err(format!(
                "{method}: the ciphertext is not attached to this session (one of another session has \
                 the same parameters but another secret key): use this session's ciphertexts \
                 (session.encrypt), or attach one of its own loaded from bytes with \
                 session.evaluator.attach(ct)"
            )))
        } else {
            Err(crate::ckks::ckks_error(
                rnsfhe::ckks::Error::ContextMismatch {
                    object: "the ciphertext",
                    expected: self.pegasus.context().fingerprint(),
                    got: ct.context().fingerprint(),
                },
            ))
        }
    }

    /// The pipeline and its LWE-side secrets, for the comparisons of `crate::apps` (whose switching
    /// key back from the table ring is made from them).
    pub(crate) fn comparison_parts(&self) -> (&Arc<Pegasus>, &PegasusSecretKeys) {
        (&self.pegasus, &self.secrets)
    }

    /// `ct` as a ciphertext of the session's evaluator.
    pub(crate) fn attach(
        &self,
        py: Python<'_>,
        ct: Ciphertext,
    ) -> PyResult<crate::ckks::PyCiphertext> {
        crate::ckks::attach_to(self.evaluator.bind(py), ct)
    }

    /// The scale, at `modulus`, of a value at `scale` at `reference`: a modulus switch scales both the
    /// message and the scale by `modulus / reference`.
    fn scale_at(scale: f64, modulus: u64, reference: u64) -> f64 {
        scale * modulus as f64 / reference as f64
    }
}

#[pymethods]
impl PyPipeline {
    #[new]
    #[pyo3(signature = (preset = "Secure128", *, slots, input_bound = 8.0, repacking = "ring",
                        dimension_switch = "whole", algorithm = None, s2c_levels = Int::new(2),
                        c2s_levels = Int::new(3), rotations = Vec::new(), conjugate = false,
                        sum_slots = false, seed = None, allow_insecure = false, lut_log_n = None))]
    #[pyo3(
        text_signature = "(preset=\"Secure128\", *, slots, input_bound=8.0, repacking=\"ring\", \
                             dimension_switch=\"whole\", algorithm=None, s2c_levels=2, c2s_levels=3, \
                             rotations=(), conjugate=False, sum_slots=False, seed=None, \
                             allow_insecure=False, lut_log_n=None)"
    )]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        preset: &str,
        slots: Int,
        input_bound: f64,
        repacking: &str,
        dimension_switch: &str,
        algorithm: Option<&str>,
        s2c_levels: Int,
        c2s_levels: Int,
        rotations: Vec<Int>,
        conjugate: bool,
        sum_slots: bool,
        seed: Option<Int>,
        allow_insecure: bool,
        lut_log_n: Option<Int>,
    ) -> PyResult<Self> {
        let preset = SCHEME.find_preset(&PipelinePreset::ALL, preset)?;
        let slots: usize = slots.get("slots")?;
        let options = PipelineOptions {
            slots,
            input_bound,
            s2c_levels: s2c_levels.get("s2c_levels")?,
            c2s_levels: c2s_levels.get("c2s_levels")?,
            dimension_switch: parse_dimension_switch(dimension_switch)?,
            repacking: parse_repacking(repacking)?,
            blind_rotation: algorithm.map(parse_algorithm).transpose()?,
            allow_insecure,
            // The Rust defaults for the rest (sparse-secret encapsulation on the ring-packing path).
            ..PipelineOptions::new(slots)
        };
        let rotations: Vec<i64> = Int::get_all(&rotations, "rotations")?;
        let lut_log_n: Option<u32> = Int::get_opt(lut_log_n, "lut_log_n")?;
        let mut rng = csprng(seed)?;
        let params = checked_pipeline_params(py, preset, lut_log_n, allow_insecure)?;
        let ctx = Arc::clone(&params.ckks);
        // The rotations of the user's keys, as `ckks.Context.keygen` takes them; `sum_slots` for the
        // pipeline's slot count (`ct.sum()` rotates within the slots of the ciphertext).
        let extra = if sum_slots {
            KeyGenerator::power_of_two_steps(slots)
        } else {
            Vec::new()
        };
        let max_slots = ctx.max_slots() as i64;
        let mut steps: Vec<i64> = Vec::new();
        for s in rotations.into_iter().chain(extra) {
            if s.rem_euclid(max_slots) != 0 && !steps.contains(&s) {
                steps.push(s);
            }
        }
        let lwe_params = lwe_params_of(preset, params.lwe);
        let generated = crate::common::release(py, || -> Result<Generated, PegasusError> {
                let keygen = KeyGenerator::new(&ctx, &mut rng)?;
                let user = keygen.generate_all(&steps, conjugate, &mut rng)?;
                let (keys, secrets) = PegasusKeys::generate(&params, &options, &keygen, &mut rng)?;
                let encryptor = CkksEncryptor::with_secret_key(&ctx, keygen.secret_key())?;
                let evaluator = PegasusEvaluator::new(params, options, keys)?;
                Ok(Generated {
                    evaluator,
                    user,
                    secrets,
                    encryptor,
                })
            })
            .map_err(|e| match e {
                // The transforms of few slots have few butterfly stages, one level each at most.
                PegasusError::Ckks(
                    e @ rnsfhe::ckks::Error::InvalidArgument {
                        operation: "homomorphic DFT",
                        ..
                    },
                ) => value_error_with_hint(
                    e,
                    " (Python: lower s2c_levels or c2s_levels to at most log2(slots), or use more slots)",
                ),
                e => pegasus_error(e),
            })?;
        let pegasus = Arc::new(Pegasus {
            evaluator: generated.evaluator,
            lwe_params,
        });
        let (context, keys, evaluator) = crate::ckks::pegasus_session(
            py,
            &ctx,
            generated.user,
            steps,
            conjugate,
            Arc::clone(&pegasus),
        )?;
        Ok(Self {
            pegasus,
            preset,
            context,
            keys,
            evaluator,
            secrets: generated.secrets,
            encryptor: generated.encryptor,
            rng: Mutex::new(rng),
        })
    }

    /// Pipeline._lwe_params(preset, lut_log_n=None) -> rnsfhe.lwe.PegasusParams: the LWE side of the
    /// pipeline preset ``preset`` with its look-up tables in degree ``2^lut_log_n`` (None: the
    /// preset's), the pickle loader of ``lwe_params`` and of the session's look-up tables; a method of
    /// the class so that pickle finds it as ``rnsfhe.pegasus.Pipeline._lwe_params``. The GIL is
    /// released.
    #[staticmethod]
    #[pyo3(signature = (preset, lut_log_n = None))]
    fn _lwe_params(
        py: Python<'_>,
        preset: &str,
        lut_log_n: Option<Int>,
    ) -> PyResult<PyPegasusParams> {
        let preset = SCHEME.find_preset(&PipelinePreset::ALL, preset)?;
        let lut_log_n: Option<u32> = Int::get_opt(lut_log_n, "lut_log_n")?;
        let params = crate::common::release(py, || pipeline_params(preset, lut_log_n))
            .map_err(pegasus_error)?;
        Ok(lwe_params_of(preset, params.lwe))
    }

    /// keys_to_bytes(seeded=True, mac_key=None) -> bytes
    ///
    /// The pipeline's evaluation keys (relinearization and rotation keys, dimension switch,
    /// blind-rotation key, repacking keys; no secret) as one object of rnsfhe's wire format, uniform
    /// parts as 32-byte seeds unless ``seeded=False``, sealed by a BLAKE3 digest or a MAC under
    /// ``mac_key``: what a server needs besides ``params_to_bytes()`` and ``options_to_bytes()``
    /// (``Pipeline.validate_key_bytes`` checks all three). Gigabytes at the Table IV sets. The GIL is
    /// released.
    #[pyo3(signature = (seeded = true, mac_key = None))]
    fn keys_to_bytes<'py>(
        &self,
        py: Python<'py>,
        seeded: bool,
        mac_key: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, pyo3::types::PyBytes>> {
        let key = crate::common::mac_key(mac_key)?;
        let evaluator = &self.pegasus.evaluator;
        let bytes = py
            .allow_threads(|| {
                evaluator.keys_to_bytes(
                    crate::common::randomness(seeded),
                    crate::common::integrity(&key),
                )
            })
            .map_err(pegasus_error)?;
        Ok(pyo3::types::PyBytes::new(py, &bytes))
    }

    /// params_to_bytes() -> bytes: the pipeline's parameters (CKKS chain and LWE side) in rnsfhe's
    /// wire format.
    fn params_to_bytes<'py>(&self, py: Python<'py>) -> Bound<'py, pyo3::types::PyBytes> {
        use rnsfhe::math::wire::Serializable;
        pyo3::types::PyBytes::new(py, &self.pegasus.evaluator.params().to_bytes())
    }

    /// options_to_bytes() -> bytes: the pipeline's options (slots, bound, paths, levels), bound to its
    /// parameters by their fingerprint.
    fn options_to_bytes<'py>(&self, py: Python<'py>) -> Bound<'py, pyo3::types::PyBytes> {
        let e = &self.pegasus.evaluator;
        pyo3::types::PyBytes::new(py, &e.options().to_bytes(e.params()))
    }

    /// Pipeline.validate_key_bytes(params, options, keys, allow_insecure=False, mac_key=None) -> int
    ///
    /// A server's check of what a client sent (bytes-like, from ``params_to_bytes``,
    /// ``options_to_bytes`` and ``keys_to_bytes``): the parameters under the process-wide load limits
    /// (``rnsfhe.load_limits``; sets below 128 bits only with ``allow_insecure=True``, the reader's own
    /// opt-in), the options for them, then every key against both, and the pipeline they make. Returns
    /// the number of bytes checked; raises rnsfhe.DecodeError naming the field and byte offset of the
    /// first bad byte. The GIL is released.
    #[staticmethod]
    #[pyo3(signature = (params, options, keys, allow_insecure = false, mac_key = None))]
    fn validate_key_bytes(
        py: Python<'_>,
        params: &Bound<'_, PyAny>,
        options: &Bound<'_, PyAny>,
        keys: &Bound<'_, PyAny>,
        allow_insecure: bool,
        mac_key: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<usize> {
        use crate::common::{decode_error, integrity, read_bytes};
        let key = crate::common::mac_key(mac_key)?;
        let (params, options, keys) =
            (read_bytes(params)?, read_bytes(options)?, read_bytes(keys)?);
        let (params, options, keys) = (params.as_bytes(), options.as_bytes(), keys.as_bytes());
        py.allow_threads(|| {
            super::server::evaluator_from_bytes(
                params,
                options,
                keys,
                allow_insecure,
                integrity(&key),
            )?;
            Ok(params.len() + options.len() + keys.len())
        })
        .map_err(decode_error)
    }

    /// The CKKS context (``rnsfhe.ckks.Context``) of the preset's chain.
    #[getter]
    fn context(&self, py: Python<'_>) -> PyObject {
        self.context.clone_ref(py)
    }

    /// The CKKS keys (``rnsfhe.ckks.KeySet``: secret, public, relinearization, and the Galois keys of
    /// ``rotations`` / ``sum_slots`` / ``conjugate``); the pipeline's own rotation keys are not in it.
    #[getter]
    fn keys(&self, py: Python<'_>) -> PyObject {
        self.keys.clone_ref(py)
    }

    /// The CKKS evaluator (``rnsfhe.ckks.Evaluator``, auto-rescaling, with ``keys``) that carries the
    /// pipeline: ciphertexts attached to it have ``lut`` and ``to_lwe``.
    #[getter]
    fn evaluator(&self, py: Python<'_>) -> PyObject {
        self.evaluator.clone_ref(py)
    }

    /// The preset's name.
    #[getter]
    fn preset(&self) -> String {
        preset_name(self.preset)
    }

    /// The LWE side of the parameters (``rnsfhe.lwe.PegasusParams``), with q0 the CKKS chain's first
    /// prime.
    #[getter]
    fn lwe_params(&self) -> PyPegasusParams {
        self.pegasus.lwe_params.clone()
    }

    /// Values per ciphertext (the slot count of the inputs).
    #[getter]
    fn slots(&self) -> usize {
        self.pegasus.options().slots
    }

    /// The bound B: every input value must lie in [-B, B], the domain of the tables.
    #[getter]
    fn input_bound(&self) -> f64 {
        self.pegasus.options().input_bound
    }

    /// The repacking path: ``"ring"`` or ``"linear_transform"``.
    #[getter]
    fn repacking(&self) -> &'static str {
        repacking_name(self.pegasus.options().repacking)
    }

    /// The dimension switch: ``"whole"`` or ``"per_ciphertext"``.
    #[getter]
    fn dimension_switch(&self) -> &'static str {
        dimension_switch_name(self.pegasus.options().dimension_switch)
    }

    /// The blind-rotation algorithm: ``"ternary"``, ``"binary"`` or ``"lmkcdey"``.
    #[getter]
    fn algorithm(&self) -> &'static str {
        let options = self.pegasus.options();
        algorithm_name(
            options
                .blind_rotation
                .unwrap_or(self.pegasus.lwe_params.params.blind_rotation),
        )
    }

    /// The level (limbs) of ``encrypt``'s ciphertexts, the lowest an input may have: one above the
    /// slots-to-coefficients levels.
    #[getter]
    fn input_level(&self) -> usize {
        self.pegasus.evaluator.input_level()
    }

    /// The dimension n_lwe of ``to_lwe``'s ciphertexts (the tables' inputs).
    #[getter]
    fn lwe_dimension(&self) -> usize {
        self.pegasus.lwe_params.params.lwe_dimension
    }

    /// The modulus of ``to_lwe``'s ciphertexts (q0, or the LWE switching keys' smaller modulus for
    /// "Secure128").
    #[getter]
    fn lwe_modulus(&self) -> PyResult<u64> {
        Ok(self.pegasus.lwe_input()?.0)
    }

    /// The scale of the values in ``to_lwe``'s ciphertexts, at ``lwe_modulus``: ``q0 / (4 B) (1 -
    /// 2^-4)`` at q0 (``|scale x| < q0 / 4``, the input range of a table, PEGASUS Section III.B).
    #[getter]
    fn lwe_input_scale(&self) -> PyResult<f64> {
        Ok(self.pegasus.lwe_input()?.1)
    }

    /// The spacing of the table's input grid in value units, ``lwe_modulus / (2 n lwe_input_scale)``:
    /// blind rotation reads the input at this resolution (PEGASUS Fig. 2 step 2), so an L-Lipschitz
    /// function is off by about L times a few grid steps (the rounding of the modulus switch grows with
    /// the LWE key's norm).
    #[getter]
    fn grid_step(&self) -> PyResult<f64> {
        let (modulus, scale) = self.pegasus.lwe_input()?;
        Ok(modulus as f64 / (2.0 * self.lut_dimension() as f64 * scale))
    }

    /// error_bound(lipschitz, table) -> float
    ///
    /// The bound of PEGASUS Eq. (3) on the look-up table's own error, ``|f(x) - output|`` for an
    /// L-Lipschitz ``f`` (``lipschitz`` = L) and ``table`` (of ``table(f)``: its grid and scales), with the
    /// input error of the dimension switch (``rnsfhe_pegasus::PegasusEvaluator::lut_error_bound``): the
    /// error of ``lut_lwe``'s outputs. Repacking adds F_mod's error and the CKKS noise it amplifies, a
    /// fraction of the output range max|f| (``lut``'s results are held to this bound plus that).
    fn error_bound(&self, lipschitz: f64, table: &Bound<'_, PyLookupTable>) -> PyResult<f64> {
        let table = &table.get().table;
        self.pegasus.check_table(table)?;
        self.pegasus
            .evaluator
            .lut_error_bound(table, lipschitz)
            .map_err(pegasus_error)
    }

    /// The dimension n of the look-up tables' outputs (the degree of their ring).
    #[getter]
    fn lut_dimension(&self) -> usize {
        1 << self.lut_log_n()
    }

    /// log2 of ``lut_dimension`` (the ``lut_log_n`` the pipeline was made with, or its preset's).
    #[getter]
    fn lut_log_n(&self) -> u32 {
        self.pegasus.lwe_params.params.lut.log_n
    }

    /// The first CKKS prime q0: the modulus of the tables' outputs.
    #[getter]
    fn q0(&self) -> u64 {
        self.pegasus.lwe_params.params.lut.q0
    }

    /// encrypt(values, level=None) -> ckks.Ciphertext
    ///
    /// Encrypts a 1-D real array of at most ``slots`` values (missing values are zero), each in
    /// ``[-input_bound, input_bound]``, with the secret key at ``level`` (default ``input_level``; a
    /// higher one, up to ``context.max_level``, leaves levels for arithmetic before ``lut``) and its
    /// default scale, with ``slots`` slots, attached to ``evaluator``. ValueError for too many values or
    /// values outside the bound (the tables would wrap around), TypeError for a non-real array. The GIL
    /// is released.
    #[pyo3(signature = (values, level = None))]
    fn encrypt(
        &self,
        py: Python<'_>,
        values: &Bound<'_, PyAny>,
        level: Option<Int>,
    ) -> PyResult<crate::ckks::PyCiphertext> {
        let values = crate::lwe::read_reals(values)?;
        let options = self.pegasus.options();
        let (slots, bound) = (options.slots, options.input_bound);
        if values.len() > slots {
            return Err(PyValueError::new_err(format!(
                "{} values for a session of {slots} slots (Session(slots=...))",
                values.len()
            )));
        }
        if let Some((i, x)) = values
            .iter()
            .enumerate()
            .find(|(_, x)| !x.is_finite() || x.abs() > bound)
        {
            return Err(PyValueError::new_err(format!(
                "values[{i}] = {x} is outside [-{bound}, {bound}] (the session's input_bound): the \
                 look-up tables read values in that range only"
            )));
        }
        let ctx = self.pegasus.context();
        let input_level = self.input_level();
        let level = Int::get_opt(level, "level")?.unwrap_or(input_level);
        if !(input_level..=ctx.max_level()).contains(&level) {
            return Err(PyValueError::new_err(format!(
                "level = {level} is out of range: the pipeline takes inputs at levels {input_level} \
                 (input_level) to {} (the top of the chain)",
                ctx.max_level()
            )));
        }
        let ct = crate::common::release(py, || -> PyResult<Ciphertext> {
            let pt = ctx
                .encode_real(&values, slots, level)
                .map_err(crate::ckks::ckks_error)?;
            let mut rng = self.rng.lock().map_err(|_| {
                PyValueError::new_err("the session's random generator is poisoned by a panic")
            })?;
            self.encryptor
                .encrypt_plaintext(&pt, &mut rng)
                .map_err(crate::ckks::ckks_error)
        })?;
        self.attach(py, ct)
    }

    /// check(ct) -> None: ValueError unless ``ct`` (a ``ckks.Ciphertext``) belongs to this session
    /// (attached to an evaluator of its context): a ciphertext of another session of the same preset has
    /// the same parameters but another secret key.
    fn check(&self, ct: &crate::ckks::PyCiphertext) -> PyResult<()> {
        self.own(ct, "check").map(|_| ())
    }

    /// table(f) -> rnsfhe.lwe.LookupTable
    ///
    /// The look-up table of ``f`` (any Python callable float -> float) for this pipeline: ``f`` is
    /// sampled on [-B, B] (its largest absolute value sets the output scale, so that F_mod keeps the
    /// outputs) and on the table's grid, with the GIL held; its exceptions propagate. ValueError for a
    /// function that is not finite on [-B, B]. Build a table once and pass it to ``lut``,
    /// ``lut_lwe`` and ``repack`` in place of ``f``.
    fn table(&self, f: &Bound<'_, PyAny>) -> PyResult<PyLookupTable> {
        self.pegasus.table(f)
    }

    /// lut(ct, f) -> ckks.Ciphertext: ``ct.lut(f)`` for a ciphertext of this session (ValueError for one
    /// of another session); ``f`` a callable or a table of ``table``.
    fn lut(
        &self,
        py: Python<'_>,
        ct: &crate::ckks::PyCiphertext,
        f: &Bound<'_, PyAny>,
    ) -> PyResult<crate::ckks::PyCiphertext> {
        let out = self.pegasus.lut(py, self.own(ct, "lut")?, f)?;
        self.attach(py, out)
    }

    /// to_lwe(ct) -> list[rnsfhe.lwe.LweCiphertext]: ``ct.to_lwe()`` for a ciphertext of this session
    /// (PEGASUS Fig. 6 steps 1-4).
    fn to_lwe(
        &self,
        py: Python<'_>,
        ct: &crate::ckks::PyCiphertext,
    ) -> PyResult<Vec<PyLweCiphertext>> {
        self.pegasus.to_lwe(py, self.own(ct, "to_lwe")?)
    }

    /// lut_lwe(cts, table) -> list[rnsfhe.lwe.LweCiphertext]
    ///
    /// Step 5 of PEGASUS Fig. 6: ``table`` (of ``table(f)``, or a callable) on each LWE ciphertext of
    /// ``to_lwe`` (a sequence, or one), by blind rotation in parallel, the GIL released: LWE ciphertexts
    /// of dimension ``lut_dimension`` modulo ``q0`` under the key of the look-up-table ring.
    fn lut_lwe(
        &self,
        py: Python<'_>,
        cts: &Bound<'_, PyAny>,
        table: &Bound<'_, PyAny>,
    ) -> PyResult<Vec<PyLweCiphertext>> {
        self.pegasus.lut_lwe(py, cts, table)
    }

    /// repack(cts, table) -> ckks.Ciphertext
    ///
    /// The outputs of ``lut_lwe`` (1 to ``slots`` of them, in slot order) made by ``table`` back into one
    /// CKKS ciphertext of their values (``repacking``, then F_mod), attached to ``evaluator``; missing
    /// slots are zero. Give the table ``lut_lwe`` used: its output scale tells the values. ``to_lwe``,
    /// ``lut_lwe`` and ``repack`` in a row give exactly ``lut``. The GIL is released.
    fn repack(
        &self,
        py: Python<'_>,
        cts: &Bound<'_, PyAny>,
        table: &Bound<'_, PyAny>,
    ) -> PyResult<crate::ckks::PyCiphertext> {
        let out = self.pegasus.repack(py, cts, table)?;
        self.attach(py, out)
    }

    /// decrypt_lwe(cts, table=None) -> numpy.ndarray[float64]
    ///
    /// The values of LWE ciphertexts of this session (one or a sequence): those of ``to_lwe`` (dimension
    /// ``lwe_dimension``, read at ``lwe_input_scale``) and those of ``lut_lwe`` (dimension
    /// ``lut_dimension``, read at the output scale of their ``table``, which must then be given). A
    /// ciphertext switched to another modulus q is read at the scale times q over its modulus. The GIL
    /// is released.
    #[pyo3(signature = (cts, table = None))]
    fn decrypt_lwe<'py>(
        &self,
        py: Python<'py>,
        cts: &Bound<'py, PyAny>,
        table: Option<&Bound<'py, PyLookupTable>>,
    ) -> PyResult<Bound<'py, PyArray1<f64>>> {
        let cts: Vec<LweCiphertext> = read_ciphertexts(cts)?;
        let (lwe_modulus, lwe_scale) = self.pegasus.lwe_input()?;
        let n = self.lut_dimension();
        let output_scale = match table {
            Some(t) => {
                self.pegasus.check_table(&t.get().table)?;
                Some(t.get().table.output_scale())
            }
            None if cts.iter().any(|ct| ct.dimension().get() == n) => {
                return Err(PyValueError::new_err(
                    "decrypt_lwe: look-up-table outputs are read at the output scale of their table: \
                     pass it (decrypt_lwe(cts, table))",
                ))
            }
            None => None,
        };
        let keys = [&self.secrets.lwe, &self.secrets.lut_ring];
        let phases = decrypt_phases(py, &keys, &cts)?;
        let q0 = self.q0();
        let values = phases
            .into_iter()
            .zip(&cts)
            .map(|(m, ct)| {
                let q = ct.modulus().value();
                let scale = match output_scale {
                    Some(s) if ct.dimension().get() == n => Self::scale_at(s, q, q0),
                    _ => Self::scale_at(lwe_scale, q, lwe_modulus),
                };
                m as f64 / scale
            })
            .collect();
        Ok(PyArray1::from_vec(py, values))
    }

    fn __repr__(&self) -> String {
        let options = self.pegasus.options();
        format!(
            "Pipeline({:?}, slots={}, input_bound={}, repacking={:?}, dimension_switch={:?}, \
             algorithm={:?}, lut_log_n={}, input_level={})",
            preset_name(self.preset),
            options.slots,
            options.input_bound,
            self.repacking(),
            self.dimension_switch(),
            self.algorithm(),
            self.lut_log_n(),
            self.input_level()
        )
    }

    /// Raises TypeError: a pipeline holds secret keys.
    fn __reduce__(&self) -> PyResult<PyObject> {
        Err(SCHEME.not_picklable(
            "Pipeline",
            "it holds the secret keys of its session; pickle (or to_bytes()) its context and \
             ciphertexts, and save keys.secret explicitly with to_secret_bytes()",
        ))
    }
}
