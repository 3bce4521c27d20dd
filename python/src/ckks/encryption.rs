//! `Encryptor` and `Decryptor` (with flooding for shared decryptions), and the flooding advice.

use super::*;

/// Encrypts real or complex vectors. Made by ``Context.encryptor(key, evaluator=None)``.
#[pyclass(name = "Encryptor", module = "rnsfhe.ckks", frozen)]
pub(super) struct PyEncryptor {
    pub(super) enc: CkksEncryptor,
    pub(super) ctx: Arc<CkksContext>,
    pub(super) eval: Arc<Eval>,
    pub(super) with_secret: bool,
}

impl PyEncryptor {
    /// An encryptor of `ctx` with `key`; its ciphertexts are attached to `eval`, which must be of `ctx`.
    pub(super) fn new(
        ctx: &Arc<CkksContext>,
        key: EncryptionKey,
        eval: Arc<Eval>,
    ) -> PyResult<Self> {
        check_context(ctx, eval.ctx().fingerprint(), "the evaluator")?;
        let (enc, with_secret) = match key {
            EncryptionKey::Public(pk) => (CkksEncryptor::with_public_key(ctx, &pk), false),
            EncryptionKey::Secret(sk) => (CkksEncryptor::with_secret_key(ctx, &sk), true),
        };
        Ok(Self {
            enc: enc.map_err(ckks_error)?,
            ctx: Arc::clone(ctx),
            eval,
            with_secret,
        })
    }
}

#[pymethods]
impl PyEncryptor {
    /// encrypt(values, slots=None) -> Ciphertext
    ///
    /// Encrypts a 1-D array (float64 or complex128, or anything numpy converts to one) of at most
    /// ``slots`` values at the top level and its default scale; missing values are zero. ``slots``
    /// (a power of two up to N/2, default N/2) sets the slot count: rotations act on that many slots.
    /// Raises ValueError for too many values or non-finite values. The GIL is released.
    ///
    /// With a SecretKey and all N/2 slots, the ciphertext keeps the 32-byte seed of its uniform part:
    /// its ``to_bytes()`` (and pickle) is about half the size of ``to_bytes(seeded=False)``, which is
    /// what a data owner sends to a server. The receiver loads it as an ordinary Ciphertext. Results of
    /// operations, public-key ciphertexts and fewer slots have no seed.
    #[pyo3(signature = (values, slots = None))]
    fn encrypt(
        &self,
        py: Python<'_>,
        values: &Bound<'_, PyAny>,
        slots: Option<Int>,
    ) -> PyResult<PyCiphertext> {
        let values = read_values(values, "encrypt")?;
        let max_slots = self.ctx.max_slots();
        let slots = Int::get_opt(slots, "slots")?.unwrap_or(max_slots);
        if slots == max_slots && !self.with_secret {
            // The path of Rust's `encrypt`, with the values as given (real values are not widened to
            // complex here: the encoder does it in its own pass): the message is added in coefficient
            // form, one transform fewer than encoding to a plaintext first.
            let ct = release(py, || -> ckks::Result<Ciphertext> {
                let mut rng = Csprng::from_os()?;
                match &values {
                    Values::Real(v) => self.enc.encrypt(&v[..], &mut rng),
                    Values::Complex(v) => self.enc.encrypt(&v[..], &mut rng),
                }
            })
            .map_err(ckks_error)?;
            return Ok(PyCiphertext::new(ct, &self.eval));
        }
        let values = values.into_complex();
        if self.with_secret && slots == max_slots {
            let seeded = release(py, || -> ckks::Result<SeededCiphertext> {
                let mut rng = Csprng::from_os()?;
                self.enc.encrypt_seeded(&values[..], &mut rng)
            })
            .map_err(ckks_error)?;
            return PyCiphertext::with_seed(seeded, &self.eval);
        }
        // Fewer slots: encoded to a plaintext of that slot count first.
        let ct = release(py, || -> ckks::Result<Ciphertext> {
            let mut rng = Csprng::from_os()?;
            let pt = self.ctx.encode(&values, slots, self.ctx.user_max_level())?;
            self.enc.encrypt_plaintext(&pt, &mut rng)
        })
        .map_err(ckks_error)?;
        Ok(PyCiphertext::new(ct, &self.eval))
    }

    fn __repr__(&self) -> String {
        format!(
            "Encryptor(N={}, key={})",
            self.ctx.n(),
            if self.with_secret { "secret" } else { "public" }
        )
    }

    /// Raises TypeError: pickle its PublicKey instead and build an encryptor from it.
    fn __reduce__(&self) -> PyResult<PyObject> {
        Err(SCHEME.not_picklable(
            "Encryptor",
            "pickle (or to_bytes()) its PublicKey and build an encryptor with ctx.encryptor(key)",
        ))
    }
}

/// Decrypts ciphertexts to numpy arrays. Made by ``Context.decryptor(key)``.
#[pyclass(name = "Decryptor", module = "rnsfhe.ckks", frozen)]
pub(super) struct PyDecryptor {
    pub(super) dec: CkksDecryptor,
    pub(super) ctx: Arc<CkksContext>,
}

impl PyDecryptor {
    pub(super) fn new(ctx: &Arc<CkksContext>, sk: &SecretKey) -> PyResult<Self> {
        let dec = CkksDecryptor::new(ctx, sk).map_err(ckks_error)?;
        Ok(Self {
            dec,
            ctx: Arc::clone(ctx),
        })
    }

    /// ValueError unless `ct` belongs to this decryptor's context.
    pub(super) fn check(&self, ct: &PyCiphertext) -> PyResult<()> {
        check_context(&self.ctx, ct.ct.fingerprint(), "the ciphertext")
    }
}

#[pymethods]
impl PyDecryptor {
    /// decrypt(ct, real=False, *, flooding_bits=0) -> numpy.ndarray
    ///
    /// The ``ct.slots`` decrypted slot values: complex128, or float64 (the real parts) if ``real``.
    /// ``flooding_bits``: for results that are shared with anyone who saw ciphertexts (IND-CPA-D, see
    /// SECURITY.md), a fresh Gaussian noise of standard deviation 2^flooding_bits is added to every
    /// coefficient before decoding (``recommended_flooding_bits`` says how many); it costs about
    /// ``flooding_bits + log2(slots) / 2`` bits of precision. 0 decrypts exactly. Raises ValueError when the
    /// flooding would leave no precision (``max_flooding_bits``). The GIL is released.
    #[pyo3(signature = (ct, real = false, *, flooding_bits = Int::new(0)))]
    #[pyo3(text_signature = "($self, ct, real=False, *, flooding_bits=0)")]
    fn decrypt<'py>(
        &self,
        py: Python<'py>,
        ct: &PyCiphertext,
        real: bool,
        flooding_bits: Int,
    ) -> PyResult<Bound<'py, PyAny>> {
        let flooding_bits: u32 = flooding_bits.get("flooding_bits")?;
        self.check(ct)?;
        let values = release(py, || {
            if flooding_bits == 0 {
                return self.dec.decrypt(&ct.ct);
            }
            let mut rng = Csprng::from_os()?;
            self.dec.decrypt_flooded(&ct.ct, flooding_bits, &mut rng)
        })
        .map_err(ckks_error)?;
        Ok(slot_array(py, values, real))
    }

    /// max_flooding_bits(ct) -> int: the most flooding bits ``decrypt`` accepts for ``ct`` (some precision
    /// must remain, and the noise must stay far below the modulus).
    fn max_flooding_bits(&self, ct: &PyCiphertext) -> PyResult<u32> {
        self.check(ct)?;
        self.dec.max_flooding_bits(&ct.ct).map_err(ckks_error)
    }

    /// noise_log2(ct, expected) -> float: log2 of the Euclidean norm of the error of ``ct``, whose slots
    /// should hold ``expected``. A diagnostic that uses the secret key: measure a representative run with
    /// non-sensitive inputs and feed the result to ``recommended_flooding_bits``; never measure the
    /// ciphertext you share.
    fn noise_log2(
        &self,
        py: Python<'_>,
        ct: &PyCiphertext,
        expected: &Bound<'_, PyAny>,
    ) -> PyResult<f64> {
        self.check(ct)?;
        let expected = read_values(expected, "expected")?.into_complex();
        release(py, || self.dec.noise_log2(&ct.ct, &expected)).map_err(ckks_error)
    }

    fn __repr__(&self) -> &'static str {
        "Decryptor(<secret key>)"
    }

    /// Raises TypeError: it holds the secret key, which is saved only explicitly.
    fn __reduce__(&self) -> PyResult<PyObject> {
        Err(SCHEME.not_picklable(
            "Decryptor",
            "it holds the secret key; save the SecretKey explicitly with to_secret_bytes()",
        ))
    }
}
/// recommended_flooding_bits(noise_log2, statistical_security=30, decryptions=1) -> int
///
/// The flooding bits for shared decryptions of results whose error has norm 2^noise_log2
/// (``Decryptor.noise_log2`` on a representative run): ceil(noise_log2 + s/2 + log2(decryptions)/2 - 1/2),
/// the "noise x 2^(s/2)" rule of Li-Micciancio and OpenFHE (default s = 30, as OpenFHE). Raises ValueError for
/// a negative or non-finite noise, s above 128 or no decryptions.
#[pyfunction]
#[pyo3(signature = (noise_log2, statistical_security = Int::new(ckks::DEFAULT_STATISTICAL_SECURITY as i128), decryptions = Int::new(1)))]
#[pyo3(text_signature = "(noise_log2, statistical_security=30, decryptions=1)")]
pub(super) fn recommended_flooding_bits(
    noise_log2: f64,
    statistical_security: Int,
    decryptions: Int,
) -> PyResult<u32> {
    ckks::recommended_flooding_bits(
        noise_log2,
        statistical_security.get("statistical_security")?,
        decryptions.get("decryptions")?,
    )
    .map_err(ckks_error)
}
