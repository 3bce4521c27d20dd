//! `Encryptor` and `Decryptor` (with the diagnostic noise budget).

use super::*;

/// Encrypts integer vectors. Made by ``Context.encryptor(key, evaluator=None)``.
#[pyclass(name = "Encryptor", module = "rnsfhe.bfv", frozen)]
pub(super) struct PyEncryptor {
    pub(super) enc: Encryptor,
    pub(super) eval: Arc<Eval>,
    pub(super) with_secret: bool,
}

impl PyEncryptor {
    /// An encryptor of `ctx` with `key`; its ciphertexts are attached to `eval`, which must be of `ctx`.
    pub(super) fn new(
        ctx: &Arc<BfvContext>,
        key: EncryptionKey,
        eval: Arc<Eval>,
    ) -> PyResult<Self> {
        let (enc, with_secret) = match key {
            EncryptionKey::Public(pk) => (Encryptor::with_public_key(ctx, &pk), false),
            EncryptionKey::Secret(sk) => (Encryptor::with_secret_key(ctx, &sk), true),
        };
        check_same_context(ctx, eval.ctx(), "the evaluator")?;
        let enc = enc.map_err(bfv_error)?;
        Ok(Self {
            enc,
            eval,
            with_secret,
        })
    }
}

#[pymethods]
impl PyEncryptor {
    /// encrypt(values, encoding=None) -> Ciphertext
    ///
    /// Encrypts a 1-D array of at most N integers (int64, or anything numpy converts to integers) with
    /// -t < v < t (negative values are taken modulo t); missing values are zero. ``encoding``: "batch"
    /// (N slots, operations act slot-wise; needs a prime t = 1 mod 2N), "coeff" (the values are the
    /// coefficients of the plaintext polynomial, so products are negacyclic convolutions; any t) or None
    /// (``Context.encoding``: batch when t allows it). Raises ValueError for too many values or values out
    /// of range, TypeError for non-integers. The GIL is released.
    ///
    /// With a SecretKey, the ciphertext keeps the 32-byte seed of its uniform part: its ``to_bytes()``
    /// (and pickle) is about half the size of ``to_bytes(seeded=False)``, which is what a data owner
    /// sends to a server. The receiver loads it as an ordinary Ciphertext. Results of operations and
    /// public-key ciphertexts have no seed.
    #[pyo3(signature = (values, encoding = None))]
    fn encrypt(
        &self,
        py: Python<'_>,
        values: &Bound<'_, PyAny>,
        encoding: Option<&str>,
    ) -> PyResult<PyCiphertext> {
        let ctx = self.eval.ctx();
        let encoding = Encoding::parse(encoding, ctx)?;
        let values = read_values(values, ctx, "encrypt")?;
        if self.with_secret {
            let seeded = release(py, || -> Result<SeededCiphertext, BfvError> {
                let pt = self.eval.enc.encode(&values, encoding)?;
                let mut rng = Csprng::from_os()?;
                self.enc.encrypt_seeded(&pt, &mut rng)
            })
            .map_err(bfv_error)?;
            return PyCiphertext::with_seed(seeded, &self.eval, encoding);
        }
        let ct = release(py, || -> Result<Ciphertext, BfvError> {
            let pt = self.eval.enc.encode(&values, encoding)?;
            let mut rng = Csprng::from_os()?;
            self.enc.encrypt(&pt, &mut rng)
        })
        .map_err(bfv_error)?;
        Ok(PyCiphertext::new(ct, &self.eval, encoding))
    }

    fn __repr__(&self) -> String {
        format!(
            "Encryptor(N={}, t={}, key={})",
            self.eval.ctx().n(),
            self.eval.ctx().plaintext_modulus(),
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

/// Decrypts ciphertexts to numpy int64 arrays, and measures their noise budget. Made by
/// ``Context.decryptor(key)``.
#[pyclass(name = "Decryptor", module = "rnsfhe.bfv", frozen)]
pub(super) struct PyDecryptor {
    pub(super) dec: Decryptor,
    pub(super) enc: Encoders,
}

impl PyDecryptor {
    pub(super) fn new(ctx: &Arc<BfvContext>, sk: &SecretKey) -> PyResult<Self> {
        let dec = Decryptor::new(ctx, sk).map_err(bfv_error)?;
        Ok(Self {
            dec,
            enc: Encoders::new(ctx),
        })
    }
}

#[pymethods]
impl PyDecryptor {
    /// decrypt(ct, signed=True, encoding=None) -> numpy.ndarray[int64]
    ///
    /// The N decrypted values (slots or coefficients, by ``ct.encoding`` unless ``encoding`` overrides
    /// it), exact modulo t: the centered representatives in (-t/2, t/2] if ``signed`` (so small negative
    /// results come out negative; for t = 2 the values are 0 and 1), else the representatives in [0, t).
    /// ``rnsfhe.bfv.reduce(x, t, signed)`` maps numpy results to the same form. Correct while the noise
    /// budget is positive. Raises ValueError for a ciphertext of another context. The GIL is released.
    #[pyo3(signature = (ct, signed = true, encoding = None))]
    fn decrypt<'py>(
        &self,
        py: Python<'py>,
        ct: &PyCiphertext,
        signed: bool,
        encoding: Option<&str>,
    ) -> PyResult<Bound<'py, PyArray1<i64>>> {
        let encoding = match encoding {
            None => ct.encoding,
            Some(e) => Encoding::parse(Some(e), self.enc.ctx.as_ref())?,
        };
        let values = release(py, || {
            let pt = self.dec.decrypt(&ct.ct)?;
            self.enc.decode(&pt, encoding, signed)
        })
        .map_err(bfv_error)?;
        Ok(PyArray1::from_vec(py, values))
    }

    /// noise_budget(ct) -> float
    ///
    /// The invariant noise budget of ``ct`` in bits: how much noise it can still absorb before decryption
    /// fails. Below 1 bit the result may be wrong: once the noise has filled the modulus the measurement
    /// saturates near 0 (a fraction of a bit) and says nothing more. Each ciphertext product uses about
    /// log2(t) + log2(N) bits and more. A **diagnostic** for the data owner: it needs the secret key, and
    /// neither the budget nor the decryption of an exhausted ciphertext should be revealed to an untrusted
    /// party. The GIL is released.
    fn noise_budget(&self, py: Python<'_>, ct: &PyCiphertext) -> PyResult<f64> {
        release(py, || self.dec.noise_budget(&ct.ct)).map_err(bfv_error)
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
