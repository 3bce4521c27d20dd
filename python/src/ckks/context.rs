//! `Context`: the checked CKKS parameters (from literal parameters, a preset or a depth), keygen, and the
//! factories of encryptors, decryptors and evaluators; the names of its options.

use super::*;

pub(super) fn secret_name(s: SecretDistribution) -> String {
    match s {
        SecretDistribution::Ternary => "ternary".to_string(),
        SecretDistribution::HammingWeight(h) => format!("hamming:{h}"),
    }
}

pub(super) fn parse_secret(s: &str) -> PyResult<SecretDistribution> {
    if s == "ternary" {
        return Ok(SecretDistribution::Ternary);
    }
    if s == "hamming" {
        return Ok(SecretDistribution::HammingWeight(
            rnsfhe::core::DEFAULT_HAMMING_WEIGHT,
        ));
    }
    if let Some(h) = s.strip_prefix("hamming:") {
        if let Ok(h) = h.parse::<usize>() {
            return Ok(SecretDistribution::HammingWeight(h));
        }
    }
    Err(PyValueError::new_err(format!(
        "unknown secret distribution {s:?}: expected 'ternary' or 'hamming:H' (H nonzero coefficients, \
         e.g. 'hamming:64')"
    )))
}

pub(super) fn rescaling_name(r: RescalingPolicy) -> &'static str {
    match r {
        RescalingPolicy::FixedNominalScale => "nominal",
        RescalingPolicy::ExactScale => "exact",
    }
}

pub(super) fn parse_rescaling(s: &str) -> PyResult<RescalingPolicy> {
    match s {
        "nominal" => Ok(RescalingPolicy::FixedNominalScale),
        "exact" => Ok(RescalingPolicy::ExactScale),
        other => Err(PyValueError::new_err(format!(
            "unknown rescaling policy {other:?}: expected 'nominal' (RNS-CKKS fixed scale 2^log_scale) or \
             'exact' (Kim-Papadimitriou-Polyakov exact per-level scales)"
        ))),
    }
}
/// The checked, immutable parameters of CKKS: prime chain, encoder, per-level scales, security estimate.
///
/// Context(log_n=13, log_scale=40, q0_bits=45, levels=3, special_primes=1, special_bits=50, dnum=None,
/// secret="ternary", sigma=3.2, conversion="fast", rescaling="exact", allow_insecure=False,
/// bootstrap_primes=None)
///
/// * ``log_n``: N = 2^log_n is the ring degree; a ciphertext holds N/2 complex slots.
/// * ``log_scale``: the scale 2^log_scale (about log_scale - 20 bits of precision after a multiplication).
/// * ``q0_bits``: the first prime; values must stay below 2^(q0_bits - log_scale - 1) in magnitude.
/// * ``levels``: multiplicative depth (number of rescalings).
/// * ``special_primes``, ``special_bits``, ``dnum``: key switching (P and the number of digit groups;
///   ``dnum=None`` means one prime per digit).
/// * ``bootstrap_primes``: bit sizes of the bootstrapping primes above the user's levels, bottom first
///   (None or [] for none). Fresh ciphertexts and default encodings stay at ``user_max_level``;
///   bootstrapping raises to ``max_level`` and comes back down.
/// * ``secret``: "ternary" (uniform, HE Standard) or "hamming:H" (sparse, h nonzero coefficients).
/// * ``conversion``: basis conversion of key switching: "fast", "exact_float" or "exact_integer".
/// * ``rescaling``: "exact" (exact per-level scales) or "nominal" (RNS-CKKS fixed scale 2^log_scale).
///
/// The defaults are the 128-bit preset "Rec128N13". Parameters not established as 128-bit secure by the
/// HE Standard raise ValueError unless ``allow_insecure=True`` (then a UserWarning is issued).
/// Use ``Context.from_preset(name)`` for named presets (see ``rnsfhe.ckks.presets()``) and
/// ``Context.generate(depth)`` to choose parameters from a depth.
#[pyclass(name = "Context", module = "rnsfhe.ckks", frozen)]
pub(super) struct PyContext {
    pub(super) ctx: Arc<CkksContext>,
    pub(super) preset: Option<Preset>,
    /// Keyless evaluator attached to ciphertexts encrypted without an explicit evaluator.
    pub(super) plain: Arc<Eval>,
}

impl PyContext {
    pub(super) fn build(
        py: Python<'_>,
        params: CkksParams,
        preset: Option<Preset>,
        allow_insecure: bool,
    ) -> PyResult<Self> {
        // The Rust opt-in is exactly the Python one (it travels in the context's bytes); a refusal
        // names the Python spelling.
        let params = CkksParams {
            insecure_for_testing: allow_insecure,
            ..params
        };
        let ctx = crate::common::release(py, || CkksContext::new(params)).map_err(ckks_error)?;
        if let Some(warning) = ctx.security_warning() {
            warn_user(py, &warning)?;
        }
        let plain = Arc::new(Eval::keyless(&ctx, true));
        Ok(Self { ctx, preset, plain })
    }

    /// The keyless evaluator of a context loaded from bytes (auto-rescaling, as `Context()`'s).
    pub(super) fn keyless(ctx: &Arc<CkksContext>) -> Eval {
        Eval::keyless(ctx, true)
    }

    /// The context whose keyless evaluator is `plain`, named after the preset with its parameters (the
    /// insecure opt-in aside), if any.
    pub(super) fn from_plain(plain: Arc<Eval>) -> Self {
        let ctx = Arc::clone(plain.ctx());
        let params = ctx.params();
        let preset = Preset::ALL.iter().copied().find(|p| {
            CkksParams {
                insecure_for_testing: params.insecure_for_testing,
                ..p.params()
            } == *params
        });
        Self { ctx, preset, plain }
    }

    /// ValueError unless `ct` was made with this context's parameters.
    pub(super) fn check_own(&self, ct: &PyCiphertext) -> PyResult<()> {
        let (expected, got) = (self.ctx.fingerprint(), ct.eval.ctx().fingerprint());
        if expected == got {
            Ok(())
        } else {
            Err(ckks_error(ckks::Error::ContextMismatch {
                object: "the ciphertext",
                expected,
                got,
            }))
        }
    }

    pub(super) fn make_eval(
        &self,
        relin: Option<&Arc<RelinKey>>,
        galois: Option<(&Arc<GaloisKeys>, &[i64], bool)>,
        encapsulation: Option<&Arc<SparseEncapsulation>>,
        auto_rescale: bool,
        strict: bool,
        auto_bootstrap: Option<&PyBootstrapper>,
    ) -> PyResult<Eval> {
        let mut ev = if strict {
            Evaluator::strict(&self.ctx)
        } else {
            Evaluator::new(&self.ctx)
        }
        .with_auto_rescale(auto_rescale);
        if let Some(rk) = relin {
            ev = ev.with_relin_key(Arc::clone(rk)).map_err(ckks_error)?;
        }
        if let Some(enc) = encapsulation {
            ev = ev.with_encapsulation(Arc::clone(enc)).map_err(ckks_error)?;
        }
        let (mut rotations, mut conjugate) = (Vec::new(), false);
        if let Some((gk, steps, conj)) = galois {
            ev = ev.with_galois_keys(Arc::clone(gk)).map_err(ckks_error)?;
            rotations = steps.to_vec();
            conjugate = conj;
        }
        if let Some(b) = auto_bootstrap {
            ev = ev
                .with_auto_bootstrap(Arc::clone(&b.btp))
                .map_err(ckks_error)?;
        }
        Ok(Eval {
            ev,
            rotations,
            conjugate,
            pegasus: None,
        })
    }
}

context_methods! {
    /// encryptor(key, evaluator=None) -> Encryptor
    ///
    /// An encryptor with a PublicKey, a KeySet (its public key) or a SecretKey (secret-key encryption, less
    /// noise). Its ciphertexts are attached to ``evaluator`` (default: a keyless evaluator of this context
    /// with auto-rescaling, enough for additions and plaintext/scalar products).
    fn encryptor;

    impl PyContext(CkksContext) {
        #[new]
        #[pyo3(signature = (log_n = Int::new(13), log_scale = Int::new(40), q0_bits = Int::new(45),
                            levels = Int::new(3), special_primes = Int::new(1),
                            special_bits = Int::new(50), dnum = None, secret = "ternary", sigma = 3.2,
                            conversion = "fast", rescaling = "exact", allow_insecure = false,
                            bootstrap_primes = None))]
        #[pyo3(
            text_signature = "(log_n=13, log_scale=40, q0_bits=45, levels=3, special_primes=1, \
                                 special_bits=50, dnum=None, secret=\"ternary\", sigma=3.2, \
                                 conversion=\"fast\", rescaling=\"exact\", allow_insecure=False, \
                                 bootstrap_primes=None)"
        )]
        #[allow(clippy::too_many_arguments)]
        fn new(
            py: Python<'_>,
            log_n: Int,
            log_scale: Int,
            q0_bits: Int,
            levels: Int,
            special_primes: Int,
            special_bits: Int,
            dnum: Option<Int>,
            secret: &str,
            sigma: f64,
            conversion: &str,
            rescaling: &str,
            allow_insecure: bool,
            bootstrap_primes: Option<Vec<Int>>,
        ) -> PyResult<Self> {
            let levels = levels.get::<usize>("levels")?;
            let bootstrap_primes =
                Int::get_all::<u32>(&bootstrap_primes.unwrap_or_default(), "bootstrap_primes")?;
            let chain = levels
                .saturating_add(1)
                .saturating_add(bootstrap_primes.len());
            let params = CkksParams {
                log_n: log_n.get("log_n")?,
                log_scale: log_scale.get("log_scale")?,
                q0_bits: q0_bits.get("q0_bits")?,
                levels,
                bootstrap_primes,
                special_primes: special_primes.get("special_primes")?,
                special_bits: special_bits.get("special_bits")?,
                dnum: Int::get_opt(dnum, "dnum")?.unwrap_or(chain),
                secret: parse_secret(secret)?,
                sigma,
                conversion: parse_mode(conversion)?,
                rescaling: parse_rescaling(rescaling)?,
                insecure_for_testing: allow_insecure,
            };
            Self::build(py, params, None, allow_insecure)
        }

        /// Context.from_preset(name, allow_insecure=False) -> Context
        ///
        /// The context of a named preset (``rnsfhe.ckks.presets()``; case-insensitive): "Rec128N13" to
        /// "Rec128N16" (128-bit, scale 2^40, depth 3 / 6 / 15 / 32) or the RNS-CKKS paper's Table 1 settings
        /// "PaperTable1L5", "PaperTable1L10", "PaperTable1L15" (sparse secret, 80-bit target: they need
        /// ``allow_insecure=True``); "Boot128N16" (128-bit bootstrapping chain, nine user levels),
        /// "Boot128N16Precise" (the same at 25 bits minimum: scale 2^43, larger keys) and "BootTestN15"
        /// (an insecure N = 2^15 test variant). Raises ValueError for an unknown name.
        #[staticmethod]
        #[pyo3(signature = (name, allow_insecure = false))]
        fn from_preset(py: Python<'_>, name: &str, allow_insecure: bool) -> PyResult<Self> {
            let preset = SCHEME.find_preset(&Preset::ALL, name)?;
            Self::build(py, preset.params(), Some(preset), allow_insecure)
        }

        /// Context.generate(depth, log_scale=40, security=128) -> Context
        ///
        /// Chooses parameters for a multiplicative ``depth`` at scale 2^log_scale and a security level (128,
        /// 192 or 256 bits; HE Standard, uniform ternary secret), with the smallest N that fits, in the manner
        /// of OpenFHE's CCParams. Raises ValueError when no N up to 2^17 fits.
        #[staticmethod]
        #[pyo3(signature = (depth, log_scale = Int::new(40), security = Int::new(128)))]
        #[pyo3(text_signature = "(depth, log_scale=40, security=128)")]
        fn generate(py: Python<'_>, depth: Int, log_scale: Int, security: Int) -> PyResult<Self> {
            let (depth, log_scale) = (depth.get("depth")?, log_scale.get("log_scale")?);
            let level = match security.get::<u32>("security")? {
                128 => SecurityLevel::Bits128,
                192 => SecurityLevel::Bits192,
                256 => SecurityLevel::Bits256,
                other => {
                    return Err(PyValueError::new_err(format!(
                        "security = {other} is not supported: expected 128, 192 or 256 (bits)"
                    )))
                }
            };
            let params = CkksParams::generate(depth, log_scale, level).map_err(ckks_error)?;
            Self::build(py, params, None, false)
        }

        /// keygen(rotations=(), conjugate=False, sum_slots=False, *, public_key="extended", bootstrapper=None) -> KeySet
        ///
        /// Samples a secret key and the public, relinearization and Galois keys: rotation keys for each step
        /// in ``rotations`` (left by k for k > 0, right for k < 0), the conjugation key if ``conjugate``, and,
        /// if ``sum_slots``, the rotations by 1, 2, 4, ..., slots/2 that ``Ciphertext.sum()`` and ``mean()``
        /// need. Randomness comes from the operating system (ChaCha20). The GIL is released.
        ///
        /// ``public_key``: "extended" (default) makes the public key over Q and the first special prime
        /// p_0: an encryption is computed over Q p_0 and divided by p_0 (as SEAL does), so the fresh
        /// error is about the rounding's instead of the key's, sigma sqrt(2N/3 + 1 + h) per coefficient
        /// (at PaperTable1L10, N = 2^15 and scale 2^55: about 43.7 bits of fresh precision against about
        /// 36), for encode + encrypt 1.3 to 1.6 times as long. "over_q" makes the key of RNS-CKKS
        /// ``KeyGen`` over Q only: faster encryption, less precision. ``PublicKey.is_extended`` tells
        /// them apart; both serialize and pickle.
        ///
        /// ``bootstrapper`` (a Bootstrapper of this context): the Galois keys also cover its rotations,
        /// the conjugation and its trace, and the key set holds its sparse-secret encapsulation keys
        /// when it raises under a sparse secret (``Bootstrapper.sparse_secret``): everything
        /// ``Ciphertext.bootstrap`` needs. Raises ValueError for an encapsulation key below 128 bits
        /// in a context made without ``allow_insecure``.
        #[pyo3(signature = (rotations = Vec::new(), conjugate = false, sum_slots = false, *,
                            public_key = "extended", bootstrapper = None))]
        fn keygen(
            &self,
            py: Python<'_>,
            rotations: Vec<Int>,
            conjugate: bool,
            sum_slots: bool,
            public_key: &str,
            bootstrapper: Option<&PyBootstrapper>,
        ) -> PyResult<PyKeySet> {
            let extended = extended_public_key(public_key)?;
            let rotations: Vec<i64> = Int::get_all(&rotations, "rotations")?;
            let slots = self.ctx.max_slots() as i64;
            let mut steps: Vec<i64> = Vec::new();
            let extra = if sum_slots {
                KeyGenerator::power_of_two_steps(self.ctx.max_slots())
            } else {
                Vec::new()
            };
            let boot_steps = bootstrapper.map(|b| b.btp.rotation_steps()).unwrap_or_default();
            for s in rotations.into_iter().chain(extra).chain(boot_steps) {
                if s.rem_euclid(slots) != 0 && !steps.contains(&s) {
                    steps.push(s);
                }
            }
            // Bootstrapping needs the conjugation and the trace's automorphisms.
            let conjugate = conjugate || bootstrapper.is_some();
            let trace = bootstrapper.map(|b| b.btp.trace_elements()).unwrap_or_default();
            if let Some(b) = bootstrapper {
                check_context(&self.ctx, b.btp.fingerprint(), "the bootstrapper")?;
            }
            let ctx = &self.ctx;
            let btp = bootstrapper.map(|b| Arc::clone(&b.btp));
            let (keys, encapsulation) = release(py, || -> ckks::Result<_> {
                    let mut rng = Csprng::from_os()?;
                    let kg = KeyGenerator::new(ctx, &mut rng)?;
                    let keys = if extended && trace.is_empty() {
                        kg.generate_all(&steps, conjugate, &mut rng)?
                    } else {
                        let public = if extended {
                            kg.public_key(&mut rng)?
                        } else {
                            kg.public_key_over_q(&mut rng)?
                        };
                        ckks::KeySet {
                            secret: kg.secret_key().clone(),
                            public,
                            relin: kg.relin_key(&mut rng)?,
                            galois: kg.galois_keys_with_elements(&steps, conjugate, &trace, &mut rng)?,
                        }
                    };
                    // The bootstrapper's sparse-secret encapsulation, when it raises under one.
                    let encapsulation = match &btp {
                        Some(b) => kg.encapsulation_keys(b, &mut rng)?,
                        None => None,
                    };
                    Ok((keys, encapsulation))
                })
                .map_err(ckks_error)?;
            Ok(PyKeySet {
                ctx: Arc::clone(ctx),
                secret: Arc::new(keys.secret),
                public: Arc::new(keys.public),
                relin: Arc::new(keys.relin),
                galois: Arc::new(keys.galois),
                encapsulation,
                rotations: steps,
                conjugate,
            })
        }

        /// evaluator(keys=None, *, relin_key=None, galois_keys=None, bootstrapping_keys=None,
        /// auto_rescale=True, strict=False, auto_bootstrap=None) -> Evaluator
        ///
        /// An evaluator with the relinearization and Galois keys of ``keys`` (a KeySet), or with the keys given
        /// separately (a server never sees the secret key). ``bootstrapping_keys``
        /// (``KeySet.bootstrapping_keys``, e.g. loaded with ``BootstrappingKeys.from_bytes``) gives the
        /// Galois keys and the sparse-secret encapsulation keys ``Evaluator.bootstrap`` needs, in place of
        /// ``galois_keys`` (ValueError if both are given). ``auto_rescale``: every multiplication by a
        /// ciphertext, an array or a float rescales its result (one level). ``strict``: operands at different
        /// levels or scales are errors instead of being aligned. ``auto_bootstrap`` (a Bootstrapper of this
        /// context, opt-in): every product first bootstraps its ciphertext operands at level 1 (values must
        /// lie in [-1, 1]; the keys must include ``keygen(bootstrapper=...)``'s), counted by
        /// ``Evaluator.bootstraps_done``. Raises ValueError for a bootstrapper of another context or one
        /// that leaves no level.
        #[pyo3(signature = (keys = None, *, relin_key = None, galois_keys = None,
                            bootstrapping_keys = None, auto_rescale = true, strict = false,
                            auto_bootstrap = None))]
        #[allow(clippy::too_many_arguments)]
        fn evaluator(
            &self,
            keys: Option<&PyKeySet>,
            relin_key: Option<&PyRelinKey>,
            galois_keys: Option<&PyGaloisKeys>,
            bootstrapping_keys: Option<&PyBootstrappingKeys>,
            auto_rescale: bool,
            strict: bool,
            auto_bootstrap: Option<&PyBootstrapper>,
        ) -> PyResult<PyEvaluator> {
            if galois_keys.is_some() && bootstrapping_keys.is_some() {
                return Err(PyValueError::new_err(
                    "bootstrapping_keys carry their own Galois keys: pass galois_keys or \
                     bootstrapping_keys, not both (KeySet.bootstrapping_keys holds every Galois key of \
                     the set)",
                ));
            }
            let relin = relin_key.map(|k| &k.key).or(keys.map(|k| &k.relin));
            // The steps of the bootstrapping keys' Galois elements, as GaloisKeys.from_bytes finds them.
            let boot_steps = bootstrapping_keys
                .map(|b| rotations_of_elements(self.ctx.galois_group(), &b.key.galois.elements()));
            let galois = match (galois_keys, bootstrapping_keys, keys) {
                (Some(g), _, _) => Some((&g.key, &g.rotations[..], g.conjugate)),
                (None, Some(b), _) => boot_steps
                    .as_ref()
                    .map(|(steps, conj)| (&b.key.galois, &steps[..], *conj)),
                (None, None, Some(k)) => Some((&k.galois, &k.rotations[..], k.conjugate)),
                (None, None, None) => None,
            };
            // The evaluator shares the keys (no copy).
            let encapsulation = match bootstrapping_keys {
                Some(b) => b.key.encapsulation.as_ref(),
                None => keys.and_then(|k| k.encapsulation.as_ref()),
            };
            let eval =
                self.make_eval(relin, galois, encapsulation, auto_rescale, strict, auto_bootstrap)?;
            Ok(PyEvaluator {
                eval: Arc::new(eval),
            })
        }

        /// encode(values, level=None, scale=None, slots=None) -> Plaintext
        ///
        /// Encodes a 1-D array (float64 or complex128, or anything numpy converts to one) of at most
        /// ``slots`` values (a power of two up to N/2, default N/2; missing values are zero) at ``level``
        /// (limbs, 1 to max_level, default max_level) and ``scale`` (default ``level_scale(level)``), once:
        /// the Plaintext is then reused in sums and products without encoding again. To add it to a
        /// ciphertext without any correction, encode at ``level=ct.level, scale=ct.scale, slots=ct.slots``.
        /// Raises ValueError for a level off the chain, a scale that is not finite and positive or too
        /// large for the modulus, too many or non-finite values. The GIL is released.
        #[pyo3(signature = (values, level = None, scale = None, slots = None))]
        fn encode(
            &self,
            py: Python<'_>,
            values: &Bound<'_, PyAny>,
            level: Option<Int>,
            scale: Option<f64>,
            slots: Option<Int>,
        ) -> PyResult<PyPlaintext> {
            let values = read_values(values, "encode")?.into_complex();
            let ctx = &self.ctx;
            let level = Int::get_opt(level, "level")?.unwrap_or(ctx.user_max_level());
            let slots = Int::get_opt(slots, "slots")?.unwrap_or(ctx.max_slots());
            let pt = release(py, || {
                    // The level is checked first (its default scale exists only on the chain).
                    let default = ctx.level_scale(level)?;
                    ctx.encode_at_scale(&values, slots, level, scale.unwrap_or(default))
                })
                .map_err(ckks_error)?;
            Ok(PyPlaintext {
                key: Arc::new(pt),
                ctx: Arc::clone(ctx),
            })
        }

        /// level_scale(level) -> float: the default scale of a plaintext encoded at ``level`` (limbs, 1 to
        /// max_level).
        fn level_scale(&self, level: Int) -> PyResult<f64> {
            self.ctx.level_scale(level.get("level")?).map_err(ckks_error)
        }

        /// polyval(ct, coeffs, basis="power", interval=None) -> Ciphertext
        ///
        /// The polynomial of ``coeffs`` applied to every slot of ``ct``, with the evaluator ``ct`` is
        /// attached to: see ``Ciphertext.polyval``. Raises ValueError if ``ct`` belongs to another context.
        #[pyo3(signature = (ct, coeffs, basis = "power", interval = None))]
        fn polyval(
            &self,
            py: Python<'_>,
            ct: &PyCiphertext,
            coeffs: &Bound<'_, PyAny>,
            basis: &str,
            interval: Option<&Bound<'_, PyAny>>,
        ) -> PyResult<PyCiphertext> {
            self.check_own(ct)?;
            polyval_on(py, &ct.eval, &ct.ct, coeffs, basis, interval)
        }

        /// chebyshev(ct, f, interval, degree) -> Ciphertext
        ///
        /// ``f`` (any Python callable float -> float) applied to every slot of ``ct`` through its Chebyshev
        /// interpolant of ``degree`` on ``interval``, with the evaluator ``ct`` is attached to: see
        /// ``Ciphertext.chebyshev``. Raises ValueError if ``ct`` belongs to another context.
        fn chebyshev(
            &self,
            py: Python<'_>,
            ct: &PyCiphertext,
            f: &Bound<'_, PyAny>,
            interval: &Bound<'_, PyAny>,
            degree: Int,
        ) -> PyResult<PyCiphertext> {
            self.check_own(ct)?;
            chebyshev_on(py, &ct.eval, &ct.ct, f, interval, degree)
        }

        /// Ring degree N.
        #[getter]
        fn n(&self) -> usize {
            self.ctx.n()
        }

        /// Number of complex slots of a ciphertext, N/2.
        #[getter]
        fn slots(&self) -> usize {
            self.ctx.max_slots()
        }

        /// Multiplicative depth: how many rescalings a fresh ciphertext allows.
        #[getter]
        fn levels(&self) -> usize {
            self.ctx.params().levels
        }

        /// The top level of the whole chain in limbs (user_max_level plus bootstrap_levels; bootstrapping
        /// raises to it); Ciphertext.level counts limbs too.
        #[getter]
        fn max_level(&self) -> usize {
            self.ctx.max_level()
        }

        /// Level of a fresh ciphertext in limbs (levels + 1), the default of ``encode``.
        #[getter]
        fn user_max_level(&self) -> usize {
            self.ctx.user_max_level()
        }

        /// The levels above the user's, one per bootstrapping prime (``params["bootstrap_primes"]``).
        #[getter]
        fn bootstrap_levels(&self) -> usize {
            self.ctx.bootstrap_levels()
        }

        /// log2 of the scale parameter (the scaling primes are close to 2^log_scale).
        #[getter]
        fn log_scale(&self) -> u32 {
            self.ctx.params().log_scale
        }

        /// log2(Q) of the full chain q_0 ... q_L.
        #[getter]
        fn log_q(&self) -> f64 {
            self.ctx.log_q()
        }

        /// log2(QP) including the special primes (what the security table bounds).
        #[getter]
        fn log_qp(&self) -> f64 {
            self.ctx.log_qp()
        }

        /// The security estimate as text: the verdict of the HE Standard table (N, log2(QP), the secret
        /// distribution and sigma, which must be at least 3.19) and the built-in lattice estimate of the
        /// same parameters (bits in the HE Standard's cost model and in core-SVP).
        #[getter]
        fn security(&self) -> String {
            self.ctx.security_summary()
        }

        /// True unless 128-bit security is established by the HE Standard table.
        #[getter]
        fn is_insecure(&self) -> bool {
            self.ctx.is_insecure()
        }

        /// The ciphertext chain q_0 ... q_L.
        #[getter]
        fn q_moduli(&self) -> Vec<u64> {
            self.ctx.q_moduli().to_vec()
        }

        /// The special (key-switching) primes.
        #[getter]
        fn p_moduli(&self) -> Vec<u64> {
            self.ctx.p_moduli().to_vec()
        }

        /// The preset name, or None for literal parameters.
        #[getter]
        fn preset(&self) -> Option<String> {
            self.preset.map(preset_name)
        }

        /// The parameters as a dict of the constructor's keyword arguments.
        #[getter]
        fn params<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
            let p = self.ctx.params();
            let d = PyDict::new(py);
            d.set_item("log_n", p.log_n)?;
            d.set_item("log_scale", p.log_scale)?;
            d.set_item("q0_bits", p.q0_bits)?;
            d.set_item("levels", p.levels)?;
            d.set_item("special_primes", p.special_primes)?;
            d.set_item("special_bits", p.special_bits)?;
            d.set_item("dnum", p.dnum)?;
            d.set_item("secret", secret_name(p.secret))?;
            d.set_item("sigma", p.sigma)?;
            d.set_item("conversion", mode_name(p.conversion))?;
            d.set_item("rescaling", rescaling_name(p.rescaling))?;
            d.set_item("bootstrap_primes", p.bootstrap_primes.clone())?;
            Ok(d)
        }

        fn __repr__(&self) -> String {
            let p = self.ctx.params();
            let name = preset_prefix(self.preset);
            format!(
                "Context({name}N=2^{}, log_scale={}, levels={}{}, log_qp={:.1}, security={:?})",
                p.log_n,
                p.log_scale,
                p.levels,
                if p.bootstrap_primes.is_empty() {
                    String::new()
                } else {
                    format!(", bootstrap_primes={:?}", p.bootstrap_primes)
                },
                self.ctx.log_qp(),
                self.ctx.security().to_string()
            )
        }

    }
}
/// presets() -> list[str]: the names accepted by ``Context.from_preset``.
#[pyfunction]
pub(super) fn presets() -> Vec<String> {
    preset_names(&Preset::ALL)
}
