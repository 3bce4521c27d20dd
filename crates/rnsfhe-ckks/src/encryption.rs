//! CKKS encryption and decryption of slot vectors (RNS-CKKS Section 4, `Enc` / `Dec`, with the encoding of
//! Section 2.1).

use std::sync::Arc;

use rnsfhe_core::{Decryptor, Encryptor, PublicKey, SecretKey};
use rnsfhe_math::sampling::Csprng;

use crate::context::CkksContext;
use crate::error::Result;
use crate::plaintext::{Ciphertext, Plaintext};
use crate::serialization::SeededCiphertext;
use crate::Complex64;

/// Slot values that can be encrypted directly: `[f64]` (real slots) and `[Complex64]`.
pub trait SlotValues {
    /// The values as complex numbers.
    fn to_complex(&self) -> Vec<Complex64>;
}

impl SlotValues for [f64] {
    fn to_complex(&self) -> Vec<Complex64> {
        self.iter().map(|&x| Complex64::new(x, 0.0)).collect()
    }
}

impl SlotValues for [Complex64] {
    fn to_complex(&self) -> Vec<Complex64> {
        self.to_vec()
    }
}

impl<const K: usize> SlotValues for [f64; K] {
    fn to_complex(&self) -> Vec<Complex64> {
        self.as_slice().to_complex()
    }
}

impl SlotValues for Vec<f64> {
    fn to_complex(&self) -> Vec<Complex64> {
        self.as_slice().to_complex()
    }
}

impl SlotValues for Vec<Complex64> {
    fn to_complex(&self) -> Vec<Complex64> {
        self.clone()
    }
}

/// Encrypts slot vectors, with the public key or (for the smallest noise) the secret key.
#[derive(Clone, Debug)]
pub struct CkksEncryptor {
    ctx: Arc<CkksContext>,
    inner: Encryptor,
}

impl CkksEncryptor {
    /// Public-key encryption (`ct = v pk + (m + e_0, e_1)`).
    ///
    /// Errors: [`crate::Error::Core`] (context mismatch) for a key of other parameters.
    pub fn with_public_key(ctx: &Arc<CkksContext>, pk: &PublicKey) -> Result<Self> {
        Ok(Self {
            ctx: Arc::clone(ctx),
            inner: Encryptor::with_public_key(ctx.rlwe(), pk)?,
        })
    }

    /// Secret-key encryption (`ct = (-a s + m + e, a)`): fresh noise `sigma` per coefficient instead of
    /// about `sigma sqrt(2N/3)`.
    ///
    /// Errors: as [`CkksEncryptor::with_public_key`].
    pub fn with_secret_key(ctx: &Arc<CkksContext>, sk: &SecretKey) -> Result<Self> {
        Ok(Self {
            ctx: Arc::clone(ctx),
            inner: Encryptor::with_secret_key(ctx.rlwe(), sk)?,
        })
    }

    /// Encrypts `values` in all `N/2` slots (missing values are zero) at the user's top level
    /// ([`CkksContext::user_max_level`]) and its default scale ([`CkksContext::level_scale`]).
    ///
    /// Errors: more than `N/2` values, non-finite values, scale too large
    /// ([`crate::Error::EncodingScaleTooLarge`]).
    pub fn encrypt<V: SlotValues + ?Sized>(
        &self,
        values: &V,
        rng: &mut Csprng,
    ) -> Result<Ciphertext> {
        let slots = self.ctx.max_slots();
        let level = self.ctx.user_max_level();
        let scale = self.ctx.level_scale(level)?;
        let values = values.to_complex();
        // The encoding (special FFT, rounding, residues) runs beside the sampling and the key product
        // of `c_1`, which do not depend on the message.
        let inner = self.inner.encrypt_coeff_with(
            level,
            || -> Result<_> { Ok(self.ctx.encode_coeff(&values, slots, level)?.0) },
            rng,
        )?;
        Ok(Ciphertext::from_parts(
            inner,
            scale,
            slots,
            self.ctx.fingerprint(),
        ))
    }

    /// Like [`CkksEncryptor::encrypt`], keeping the uniform part as its 32-byte public seed: the result is
    /// about half the size on the wire and loads as an ordinary [`Ciphertext`] (SEAL's seeded symmetric
    /// encryption). Needs an encryptor built with the secret key.
    ///
    /// Errors: as [`CkksEncryptor::encrypt`]; [`crate::Error::Core`] for a public-key encryptor.
    pub fn encrypt_seeded<V: SlotValues + ?Sized>(
        &self,
        values: &V,
        rng: &mut Csprng,
    ) -> Result<SeededCiphertext> {
        let slots = self.ctx.max_slots();
        let (m, scale) =
            self.ctx
                .encode_coeff(&values.to_complex(), slots, self.ctx.user_max_level())?;
        Ok(SeededCiphertext {
            inner: self.inner.encrypt_coeff_seeded(&m, rng)?,
            scale,
            slots,
            fingerprint: self.ctx.fingerprint(),
        })
    }

    /// Encrypts an encoded plaintext at its level, scale and slot count.
    ///
    /// Errors: [`crate::Error::ContextMismatch`] for a plaintext of another context.
    pub fn encrypt_plaintext(&self, pt: &Plaintext, rng: &mut Csprng) -> Result<Ciphertext> {
        self.ctx.check_fingerprint(pt.fingerprint(), "plaintext")?;
        let inner = self.inner.encrypt(pt.poly(), rng)?;
        Ok(Ciphertext::from_parts(
            inner,
            pt.scale(),
            pt.slots(),
            self.ctx.fingerprint(),
        ))
    }
}

/// Decrypts ciphertexts to slot vectors (`<ct, sk>` then decoding at the ciphertext's exact scale).
#[derive(Clone, Debug)]
pub struct CkksDecryptor {
    // Crate-visible for the flooded decryption of `crate::flooding`.
    pub(crate) ctx: Arc<CkksContext>,
    pub(crate) inner: Decryptor,
}

impl CkksDecryptor {
    /// A decryptor for `sk`.
    ///
    /// Errors: [`crate::Error::Core`] (context mismatch) for a key of other parameters.
    pub fn new(ctx: &Arc<CkksContext>, sk: &SecretKey) -> Result<Self> {
        Ok(Self {
            ctx: Arc::clone(ctx),
            inner: Decryptor::new(ctx.rlwe(), sk)?,
        })
    }

    /// The plaintext `<ct, (1, s, s^2)>` with the ciphertext's scale and slot count.
    ///
    /// Errors: [`crate::Error::ContextMismatch`]; malformed ciphertexts ([`crate::Error::Core`]).
    pub fn decrypt_plaintext(&self, ct: &Ciphertext) -> Result<Plaintext> {
        self.ctx.check_fingerprint(ct.fingerprint(), "ciphertext")?;
        let poly = self.inner.decrypt(&ct.inner)?;
        Ok(Plaintext::from_parts(
            poly,
            ct.scale(),
            ct.slots(),
            self.ctx.fingerprint(),
        ))
    }

    /// The decrypted slots (`ct.slots()` of them).
    ///
    /// Errors: as [`CkksDecryptor::decrypt_plaintext`], decoding errors.
    pub fn decrypt(&self, ct: &Ciphertext) -> Result<Vec<Complex64>> {
        let pt = self.decrypt_plaintext(ct)?;
        self.ctx.decode(&pt)
    }

    /// The real parts of [`CkksDecryptor::decrypt`].
    ///
    /// Errors: as [`CkksDecryptor::decrypt`].
    pub fn decrypt_real(&self, ct: &Ciphertext) -> Result<Vec<f64>> {
        Ok(self.decrypt(ct)?.into_iter().map(|z| z.re).collect())
    }
}
