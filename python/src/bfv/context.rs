//! `Context`: the checked BFV parameters (literal, from moduli, a preset of HPS Table 3, or a depth),
//! keygen, and the factories of encryptors, decryptors and evaluators.

use super::*;

/// The checked, immutable parameters of BFV in the Halevi-Polyakov-Shoup form: ring degree N, plaintext
/// modulus t, ciphertext primes Q, auxiliary primes P of multiplication, relinearization decomposition.
///
/// Context(log_n, t, q_bits=55, q_count=2, *, relin_base_log=None, sigma=8/sqrt(2 pi),
/// allow_insecure=False)
///
/// * ``log_n``: N = 2^log_n is the ring degree (4 to 17); a plaintext holds N values.
/// * ``t``: the plaintext modulus, 2 <= t <= 2^60; arithmetic is exact modulo t. Batching (N SIMD
///   slots, slot-wise products) needs a prime t = 1 mod 2N, e.g. 65537 for N <= 2^15; any t works with
///   the coefficient encoding.
/// * ``q_bits``, ``q_count``: Q is ``q_count`` NTT primes of ``q_bits`` bits (20 to 61). Each
///   multiplication costs about log2(t) + log2(N) + a few bits of noise budget (``Decryptor.noise_budget``).
/// * ``relin_base_log``: base-2^w digits of each residue in relinearization (HPS Section 3.3; less noise,
///   larger keys); None for the plain CRT decomposition.
/// * ``sigma``: standard deviation of the error (HPS: 8 / sqrt(2 pi)).
///
/// The auxiliary basis P >= 2 t N Q is chosen automatically. Parameters not established as 128-bit secure
/// by the HE Standard (log2 Q above its bound for N) raise ValueError unless ``allow_insecure=True`` (then
/// a UserWarning is issued). ``Context.from_preset(name)`` builds the rows of HPS Table 3
/// (``rnsfhe.bfv.presets()``), ``Context.generate(t, depth)`` chooses N and Q for a depth, and
/// ``Context.from_moduli`` takes explicit primes.
#[pyclass(name = "Context", module = "rnsfhe.bfv", frozen)]
pub(super) struct PyContext {
    pub(super) ctx: Arc<BfvContext>,
    pub(super) preset: Option<BfvPreset>,
    pub(super) depth: Option<usize>,
    /// Keyless evaluator attached to ciphertexts encrypted without an explicit evaluator.
    pub(super) plain: Arc<Eval>,
}

impl PyContext {
    pub(super) fn build(
        py: Python<'_>,
        mut params: BfvParams,
        preset: Option<BfvPreset>,
        depth: Option<usize>,
        allow_insecure: bool,
    ) -> PyResult<Self> {
        params.insecure_for_testing = allow_insecure;
        let ctx = crate::common::release(py, || BfvContext::new(params)).map_err(bfv_error)?;
        if let Some(warning) = ctx.security_warning() {
            warn_user(py, &warning)?;
        }
        let plain = Arc::new(Self::keyless(&ctx));
        Ok(Self {
            ctx,
            preset,
            depth,
            plain,
        })
    }

    /// The keyless evaluator of a context.
    pub(super) fn keyless(ctx: &Arc<BfvContext>) -> Eval {
        Eval::new(ctx, None, None)
    }

    /// The context (loaded from bytes) whose keyless evaluator is `plain`: no preset name or depth
    /// (finding the preset would mean generating every preset's primes).
    pub(super) fn from_plain(plain: Arc<Eval>) -> Self {
        Self {
            ctx: Arc::clone(plain.ctx()),
            preset: None,
            depth: None,
            plain,
        }
    }
}

context_methods! {
    /// encryptor(key, evaluator=None) -> Encryptor
    ///
    /// An encryptor with a PublicKey, a KeySet (its public key) or a SecretKey (secret-key encryption,
    /// less noise). Its ciphertexts are attached to ``evaluator`` (default: a keyless evaluator of this
    /// context, enough for additions and plaintext / integer products, not for ciphertext products).
    fn encryptor;

    impl PyContext(BfvContext) {
        #[new]
        #[pyo3(signature = (log_n, t, q_bits = Int::new(55), q_count = Int::new(2), *, relin_base_log = None,
                            sigma = HPS_SIGMA, allow_insecure = false))]
        #[pyo3(
            text_signature = "(log_n, t, q_bits=55, q_count=2, *, relin_base_log=None, \
                                 sigma=3.1915382432114616, allow_insecure=False)"
        )]
        #[allow(clippy::too_many_arguments)]
        fn new(
            py: Python<'_>,
            log_n: Int,
            t: Int,
            q_bits: Int,
            q_count: Int,
            relin_base_log: Option<Int>,
            sigma: f64,
            allow_insecure: bool,
        ) -> PyResult<Self> {
            let (log_n, t) = (log_n.get::<u32>("log_n")?, t.get::<u64>("t")?);
            let (q_bits, q_count) = (q_bits.get::<u32>("q_bits")?, q_count.get::<usize>("q_count")?);
            let relin_base_log = Int::get_opt::<u32>(relin_base_log, "relin_base_log")?;
            if q_count > 256 {
                return Err(PyValueError::new_err(format!(
                    "q_count = {q_count} is out of range: at most 256 ciphertext primes"
                )));
            }
            let mut params = crate::common::release(py, || BfvParams::with_bit_sizes(log_n, t, q_bits, q_count))
                .map_err(bfv_error)?;
            params.relin_base_log = relin_base_log;
            params.sigma = sigma;
            Self::build(py, params, None, None, allow_insecure)
        }

        /// Context.from_moduli(log_n, t, q_moduli, p_moduli, relin_base_log=None, sigma=8/sqrt(2 pi),
        /// allow_insecure=False, galois_base_log=None, special_moduli=None, dnum=None) -> Context
        ///
        /// A context with explicit primes: ``q_moduli`` (the ciphertext modulus Q) and ``p_moduli`` (the
        /// auxiliary basis of multiplication, P >= 2 t N Q), all distinct NTT primes p = 1 mod 2N below 2^62.
        /// The keyword arguments are those of ``Context.params``, so ``Context.from_moduli(**ctx.params)``
        /// rebuilds ``ctx``. ``galois_base_log``: base-2^w digits of each residue in the key switching of
        /// rotations, None for the relinearization decomposition (``Context.generate`` sets it where a
        /// rotation of a fresh ciphertext would otherwise cost too much noise). ``special_moduli`` and
        /// ``dnum``: hybrid key switching (keys over Q and these special primes, dnum digit groups of Q;
        /// they count in the security check), both or neither; None for HPS CRT key switching. Raises
        /// ValueError for invalid parameters.
        #[staticmethod]
        #[pyo3(signature = (log_n, t, q_moduli, p_moduli, relin_base_log = None, sigma = HPS_SIGMA,
                            allow_insecure = false, galois_base_log = None, special_moduli = None,
                            dnum = None))]
        #[allow(clippy::too_many_arguments)]
        fn from_moduli(
            py: Python<'_>,
            log_n: Int,
            t: Int,
            q_moduli: Vec<Int>,
            p_moduli: Vec<Int>,
            relin_base_log: Option<Int>,
            sigma: f64,
            allow_insecure: bool,
            galois_base_log: Option<Int>,
            special_moduli: Option<Vec<Int>>,
            dnum: Option<Int>,
        ) -> PyResult<Self> {
            let key_switching = match (special_moduli, dnum) {
                (None, None) => KeySwitchTechnique::Crt,
                (Some(special), Some(dnum)) => KeySwitchTechnique::Hybrid {
                    special_moduli: Int::get_all(&special, "special_moduli")?,
                    dnum: dnum.get("dnum")?,
                },
                _ => {
                    return Err(PyValueError::new_err(
                        "hybrid key switching needs both special_moduli and dnum (neither for CRT key switching)",
                    ))
                }
            };
            let params = BfvParams {
                log_n: log_n.get("log_n")?,
                plaintext_modulus: t.get("t")?,
                q_moduli: Int::get_all(&q_moduli, "q_moduli")?,
                p_moduli: Int::get_all(&p_moduli, "p_moduli")?,
                relin_base_log: Int::get_opt(relin_base_log, "relin_base_log")?,
                galois_base_log: Int::get_opt(galois_base_log, "galois_base_log")?,
                sigma,
                insecure_for_testing: allow_insecure,
                conversion: rnsfhe_bfv::ConversionMode::ExactFloat,
                key_switching,
            };
            Self::build(py, params, None, None, allow_insecure)
        }

        /// Context.from_preset(name) -> Context
        ///
        /// The context of a row of HPS Table 3 (``rnsfhe.bfv.presets()``; case-insensitive): "T2Depth1"
        /// (N = 2^11), "T2Depth5" (2^12), "T2Depth10" (2^13), "T2Depth20" (2^14), "T2Depth30" (2^15),
        /// "T2Depth50" (2^16), "T2Depth100" (2^17), all with t = 2 (coefficient encoding) and 128-bit security.
        /// Raises ValueError for an unknown name.
        #[staticmethod]
        fn from_preset(py: Python<'_>, name: &str) -> PyResult<Self> {
            let preset = SCHEME.find_preset(&BfvPreset::ALL, name)?;
            let params = crate::common::release(py, || preset.params()).map_err(bfv_error)?;
            Self::build(py, params, Some(preset), Some(preset.depth()), false)
        }

        /// Context.generate(t, depth, rotations_per_level=1, key_switching="auto") -> Context
        ///
        /// Parameters for plaintext modulus ``t`` and multiplicative ``depth`` by the procedure of HPS
        /// Section 6.1: the smallest N (2^10 to 2^17) whose ciphertext modulus of 55-bit primes satisfies the
        /// noise bound (HPS Eqs. (10)-(13)) of a depth-``depth`` circuit within the 128-bit HE Standard
        /// bound. Every circuit of ``depth`` multiplications (each relinearized) decrypts correctly even when
        /// each ciphertext is rotated (``rotate_rows``, ``rotate_columns``) up to ``rotations_per_level``
        /// times after encryption and after each multiplication: rotate, multiply, rotate, multiply, ...,
        /// rotate. ``rotations_per_level=0`` budgets multiplications only, as HPS Section 6.1 (the presets);
        /// then a rotation of a fresh ciphertext can cost as much noise budget as a multiplication. Additions
        /// are not budgeted (adding a ciphertexts costs at most log2(a) bits).
        ///
        /// ``key_switching`` (relinearization and rotations): "auto" (default) takes hybrid key switching
        /// (special primes, as CKKS) where the 128-bit bound leaves room for special primes above Q and it
        /// is the faster (depths 7 and 12 to 30 at t = 65537, except 22-24: smaller keys, faster
        /// relinearization and rotations, less rotation noise), HPS CRT key switching elsewhere; "crt"
        /// always the CRT decomposition of HPS Sections 3.3 and 4.5; "hybrid" hybrid wherever a special
        /// prime fits (ValueError where none does). Raises ValueError for depth 0, an unsupported t, or
        /// when no N up to 2^17 fits.
        #[staticmethod]
        #[pyo3(signature = (t, depth, rotations_per_level = Int::new(1), key_switching = "auto"))]
        #[pyo3(text_signature = "(t, depth, rotations_per_level=1, key_switching=\"auto\")")]
        fn generate(
            py: Python<'_>,
            t: Int,
            depth: Int,
            rotations_per_level: Int,
            key_switching: &str,
        ) -> PyResult<Self> {
            let (t, depth) = (t.get::<u64>("t")?, depth.get::<usize>("depth")?);
            let rotations_per_level = rotations_per_level.get::<usize>("rotations_per_level")?;
            if !matches!(key_switching, "auto" | "crt" | "hybrid") {
                return Err(PyValueError::new_err(format!(
                    "key_switching must be \"auto\" (hybrid where it fits and is faster), \"crt\" or \"hybrid\", got {key_switching:?}"
                )));
            }
            let params = crate::common::release(py, || {
                let crt = BfvParams::generate_with_rotations(t, depth, rotations_per_level)?;
                match key_switching {
                    "crt" => Ok(crt),
                    "hybrid" => crt.with_hybrid_key_switching(),
                    _ => crt.with_key_switching_for_room(),
                }
            })
            .map_err(bfv_error)?;
            Self::build(py, params, None, Some(depth), false)
        }

        /// keygen(rotations=(), column_swap=False, *, public_key="extended") -> KeySet
        ///
        /// Samples a secret key (uniform ternary) and the public, relinearization and Galois keys: a row
        /// rotation key for each step in ``rotations`` (left by k for k > 0, right for k < 0; steps are taken
        /// modulo N/2, and multiples of N/2 need no key) and, if ``column_swap``, the key that swaps the two
        /// rows. Each Galois key has ``Context.galois_base_log``'s decomposition: as many components as the
        /// relinearization key when it is None, more with digits of its own (parameters from ``generate``
        /// at some depths, so that a rotation of a fresh ciphertext stays within the noise budget).
        /// Randomness comes from the operating system (ChaCha20). The GIL is released.
        ///
        /// ``public_key``: "extended" (default) makes the key over Q and one more prime p_0 (the first
        /// special prime with hybrid key switching, else the first auxiliary prime) where the security
        /// check counts it (``Context.extended_public_key``; the key is an RLWE sample modulo Q p_0): an
        /// encryption is computed over Q p_0 and divided by p_0, which removes the key's share of the
        /// fresh noise, sigma sqrt(2N/3 + 1 + h) per coefficient, for a slower encryption. With CRT key
        /// switching and log2(Q) within a prime of the 128-bit bound (``generate`` at depths 1-6 and 8-11
        /// at t = 65537) the key is over Q instead. "over_q" makes the key of HPS Section 4.1, over Q only. The gain shows where the key's share dominates the
        /// fresh noise: at a small t, or for small messages; for dense messages at a large t the rounding
        /// term (Q mod t) m of the fresh noise dominates both. Measured at N = 2^12, 3 primes, dense
        /// messages: 157.3 against 153.2 bits of fresh noise budget at t = 2, 134.43 against 134.37 at
        /// t = 65537. ``PublicKey.is_extended`` tells the keys apart; both serialize and pickle.
        #[pyo3(signature = (rotations = Vec::new(), column_swap = false, *, public_key = "extended"))]
        fn keygen(
            &self,
            py: Python<'_>,
            rotations: Vec<Int>,
            column_swap: bool,
            public_key: &str,
        ) -> PyResult<PyKeySet> {
            let extended = extended_public_key(public_key)?;
            let rotations: Vec<i64> = Int::get_all(&rotations, "rotations")?;
            let ctx = &self.ctx;
            let mut steps: Vec<i64> = Vec::new();
            for s in rotations {
                if !steps.contains(&s) {
                    steps.push(s);
                }
            }
            let (secret, public, relin, galois) = release(py, || -> Result<_, BfvError> {
                    let mut rng = Csprng::from_os()?;
                    let kg = KeyGenerator::new(ctx, &mut rng)?;
                    let public = if extended {
                        kg.public_key(&mut rng)?
                    } else {
                        kg.public_key_over_q(&mut rng)?
                    };
                    let relin = kg.relin_key(&mut rng)?;
                    let galois = kg.galois_keys(&steps, column_swap, &mut rng)?;
                    Ok((kg.secret_key().clone(), public, relin, galois))
                })
                .map_err(bfv_error)?;
            Ok(PyKeySet {
                ctx: Arc::clone(ctx),
                secret: Arc::new(secret),
                public: Arc::new(public),
                relin: Arc::new(relin),
                galois: Galois {
                    keys: Arc::new(galois),
                    rotations: steps,
                    column_swap,
                },
            })
        }

        /// evaluator(keys=None, *, relin_key=None, galois_keys=None) -> Evaluator
        ///
        /// An evaluator with the relinearization and Galois keys of ``keys`` (a KeySet), or with the keys
        /// given separately (a server never sees the secret key). Without a relinearization key, ciphertext
        /// products raise ValueError; without Galois keys, rotations do; everything else works.
        #[pyo3(signature = (keys = None, *, relin_key = None, galois_keys = None))]
        fn evaluator(
            &self,
            keys: Option<&PyKeySet>,
            relin_key: Option<&PyRelinKey>,
            galois_keys: Option<&PyGaloisKeys>,
        ) -> PyResult<PyEvaluator> {
            let relin = relin_key
                .map(|k| Arc::clone(&k.key))
                .or(keys.map(|k| Arc::clone(&k.relin)));
            let galois = galois_keys
                .map(|g| g.galois.clone())
                .or(keys.map(|k| k.galois.clone()));
            if let Some(k) = &relin {
                check_fingerprint(&self.ctx, k.fingerprint(), "relinearization key")?;
            }
            if let Some(g) = &galois {
                check_fingerprint(&self.ctx, g.keys.fingerprint(), "Galois key set")?;
            }
            Ok(PyEvaluator {
                eval: Arc::new(Eval::new(&self.ctx, relin, galois)),
            })
        }

        /// encode(values, encoding=None) -> Plaintext
        ///
        /// Encodes a 1-D integer array of at most N values in (-t, t) (missing values are zero) once, as
        /// ``encoding``: "batch" (slots), "coeff" (coefficients) or None (``context.encoding``). The
        /// Plaintext is then reused in sums and products with ciphertexts of that encoding without
        /// encoding again. Raises TypeError for floats, ValueError for too many or out-of-range values or
        /// an unknown encoding. The GIL is released.
        #[pyo3(signature = (values, encoding = None))]
        fn encode(
            &self,
            py: Python<'_>,
            values: &Bound<'_, PyAny>,
            encoding: Option<&str>,
        ) -> PyResult<PyPlaintext> {
            let encoding = Encoding::parse(encoding, &self.ctx)?;
            let values = read_values(values, &self.ctx, "encode")?;
            let plain = &self.plain;
            let pt = release(py, || plain.enc.encode(&values, encoding))
                .map_err(bfv_error)?;
            Ok(PyPlaintext {
                pt,
                encoding,
                plain: Arc::clone(plain),
            })
        }

        /// Ring degree N (the number of slots or coefficients of a plaintext).
        #[getter]
        fn n(&self) -> usize {
            self.ctx.n()
        }

        /// The plaintext modulus t.
        #[getter]
        fn t(&self) -> u64 {
            self.ctx.plaintext_modulus()
        }

        /// Whether batching (N SIMD slots) is available: t is a prime = 1 mod 2N.
        #[getter]
        fn supports_batching(&self) -> bool {
            self.ctx.supports_batching()
        }

        /// The default encoding of ``encrypt``: "batch" if t allows batching, else "coeff".
        #[getter]
        fn encoding(&self) -> &'static str {
            default_encoding(&self.ctx).name()
        }

        /// The multiplicative depth the parameters were generated for (presets and ``generate``), else None.
        #[getter]
        fn depth(&self) -> Option<usize> {
            self.depth
        }

        /// log2(Q) of the ciphertext modulus.
        #[getter]
        fn log_q(&self) -> f64 {
            self.ctx.log_q()
        }

        /// log2 of the largest modulus of a key this context makes, which the security check counts:
        /// Q and the special primes with hybrid key switching; Q, or Q p_0 where public keys are
        /// extended, with CRT key switching.
        #[getter]
        fn log_key_modulus(&self) -> f64 {
            self.ctx.log_key_modulus()
        }

        /// Whether ``keygen`` makes extended public keys (over Q and p_0): always with hybrid key
        /// switching (p_0 is a special prime, already counted); with CRT key switching where log2(Q p_0)
        /// is within the 128-bit bound, or for contexts built with ``allow_insecure``.
        #[getter]
        fn extended_public_key(&self) -> bool {
            self.ctx.extended_public_key()
        }

        /// log2(P) of the auxiliary basis of multiplication.
        #[getter]
        fn log_p(&self) -> f64 {
            self.ctx.log_p()
        }

        /// The ciphertext primes q_1 ... q_k.
        #[getter]
        fn q_moduli(&self) -> Vec<u64> {
            self.ctx.params().q_moduli.clone()
        }

        /// The auxiliary primes p_1 ... p_k' of multiplication.
        #[getter]
        fn p_moduli(&self) -> Vec<u64> {
            self.ctx.params().p_moduli.clone()
        }

        /// log2 of the relinearization digit base w, or None for the plain CRT decomposition.
        #[getter]
        fn relin_base_log(&self) -> Option<u32> {
            self.ctx.params().relin_base_log
        }

        /// log2 of the digit base w of the Galois (rotation) keys, or None for the relinearization
        /// decomposition.
        #[getter]
        fn galois_base_log(&self) -> Option<u32> {
            self.ctx.params().galois_base_log
        }

        /// "crt" (HPS CRT key switching, keys over Q) or "hybrid" (special primes, keys over Q and them).
        #[getter]
        fn key_switching(&self) -> &'static str {
            match self.ctx.key_switching() {
                KeySwitchTechnique::Crt => "crt",
                KeySwitchTechnique::Hybrid { .. } => "hybrid",
            }
        }

        /// The special primes of hybrid key switching (empty for CRT key switching).
        #[getter]
        fn special_moduli(&self) -> Vec<u64> {
            match self.ctx.key_switching() {
                KeySwitchTechnique::Crt => Vec::new(),
                KeySwitchTechnique::Hybrid { special_moduli, .. } => special_moduli.clone(),
            }
        }

        /// The digit groups of hybrid key switching, or None for CRT key switching.
        #[getter]
        fn dnum(&self) -> Option<usize> {
            match self.ctx.key_switching() {
                KeySwitchTechnique::Crt => None,
                KeySwitchTechnique::Hybrid { dnum, .. } => Some(*dnum),
            }
        }

        /// True unless 128-bit security is established by the HE Standard table.
        #[getter]
        fn is_insecure(&self) -> bool {
            !self.ctx.is_secure()
        }

        /// The security estimate as text: the verdict of the HE Standard table (N, log2(Q), a uniform
        /// ternary secret and sigma, which must be at least 3.19) and the built-in lattice estimate of
        /// the same parameters (bits in the HE Standard's cost model and in core-SVP).
        #[getter]
        fn security(&self) -> String {
            self.ctx.security_summary()
        }

        /// The preset name, or None.
        #[getter]
        fn preset(&self) -> Option<String> {
            self.preset.map(preset_name)
        }

        /// The parameters as a dict of ``Context.from_moduli``'s keyword arguments.
        #[getter]
        fn params<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
            let p = self.ctx.params();
            let d = PyDict::new(py);
            d.set_item("log_n", p.log_n)?;
            d.set_item("t", p.plaintext_modulus)?;
            d.set_item("q_moduli", p.q_moduli.clone())?;
            d.set_item("p_moduli", p.p_moduli.clone())?;
            d.set_item("relin_base_log", p.relin_base_log)?;
            d.set_item("sigma", p.sigma)?;
            d.set_item("galois_base_log", p.galois_base_log)?;
            if let KeySwitchTechnique::Hybrid { special_moduli, dnum } = &p.key_switching {
                d.set_item("special_moduli", special_moduli.clone())?;
                d.set_item("dnum", *dnum)?;
            }
            Ok(d)
        }

        fn __repr__(&self) -> String {
            let p = self.ctx.params();
            let name = preset_prefix(self.preset);
            format!(
                "Context({name}N=2^{}, t={}, log_q={:.1}, k={}, encoding={:?}{})",
                p.log_n,
                p.plaintext_modulus,
                self.ctx.log_q(),
                p.q_moduli.len(),
                self.encoding(),
                if self.ctx.is_secure() {
                    ""
                } else {
                    ", INSECURE"
                }
            )
        }

    }
}

/// ValueError unless `object` (of the fingerprint `got`) belongs to the context `ctx`.
pub(super) fn check_fingerprint(ctx: &BfvContext, got: u64, object: &'static str) -> PyResult<()> {
    if got != ctx.fingerprint() {
        return Err(bfv_error(BfvError::ContextMismatch {
            object,
            expected: ctx.fingerprint(),
            got,
        }));
    }
    Ok(())
}

/// ValueError unless `other` has the fingerprint of `ctx`.
pub(super) fn check_same_context(
    ctx: &BfvContext,
    other: &BfvContext,
    object: &'static str,
) -> PyResult<()> {
    check_fingerprint(ctx, other.fingerprint(), object)
}
/// presets() -> list[str]: the names accepted by ``Context.from_preset`` (the rows of HPS Table 3).
#[pyfunction]
pub(super) fn presets() -> Vec<String> {
    preset_names(&BfvPreset::ALL)
}
