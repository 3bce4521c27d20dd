//! BFV ciphertexts, encryption (public or secret key) and decryption by HPS simple scaling, plus the
//! noise budget.
//!
//! Ciphertexts are kept in **coefficient form** over `Q`: HPS multiplication (Section 4.5) starts with a
//! basis extension and decryption (Section 4.4) ends with a scaling, both coefficient-wise, so this saves
//! transforms; NTTs are computed where products are taken.
//!
//! The RLWE part is `rnsfhe-core`'s, in its coefficient form: a [`Ciphertext`] wraps an
//! [`RlweCiphertext<Coeff>`], the [`Encryptor`] scales the message by `Delta` and hands it to core's
//! [`rnsfhe_core::Encryptor`] (public or secret key, seeded or not), and the [`Decryptor`] takes
//! `c_1 s (+ c_2 s^2)` from core's [`rnsfhe_core::Decryptor`] and does the HPS scaling itself.

use std::sync::Arc;

use rnsfhe_core::RlweCiphertext;
use rnsfhe_math::sampling::Csprng;
use rnsfhe_ring::{Coeff, ConversionMode, ModSwitcher, Poly, SimpleScaler};

use crate::encoder::Plaintext;
use crate::error::{BfvError, BfvResult};
use crate::serialization::SeededCiphertext;

use crate::keys::{PublicKey, SecretKey};
use crate::params::BfvContext;

/// A BFV ciphertext: polynomials `(c_0, c_1[, c_2])` over `Q` in coefficient form with
/// `[c_0 + c_1 s (+ c_2 s^2)]_Q = Delta m + v` (HPS Section 3.1 decryption invariant, `Delta = floor(Q/t)`).
/// Two parts normally, three after a multiplication without relinearization.
#[derive(Clone, Debug, PartialEq)]
pub struct Ciphertext {
    pub(crate) fingerprint: u64,
    /// The RLWE ciphertext of `rnsfhe-core`, in coefficient form over `Q`.
    pub(crate) rlwe: RlweCiphertext<Coeff>,
}

impl Ciphertext {
    /// A ciphertext of `ctx` from its parts `(c_0, c_1[, c_2])` in coefficient form over `Q` (for
    /// deserialization and for tests that build ciphertexts with chosen noise; the inverse of
    /// [`Ciphertext::parts`]). Nothing about the decryption invariant is checked.
    ///
    /// Errors: [`BfvError::WrongPartCount`] unless there are 2 or 3 parts; [`BfvError::Ring`] (basis
    /// mismatch) if a part is not over the context's `Q`.
    pub fn from_parts(ctx: &BfvContext, parts: Vec<Poly<Coeff>>) -> BfvResult<Self> {
        Self::from_rlwe(ctx, RlweCiphertext { parts })
    }

    /// A ciphertext of `ctx` from an RLWE ciphertext of `rnsfhe-core` in coefficient form over `Q` (for
    /// example one converted from NTT form with [`RlweCiphertext::into_coeff`]). Nothing about the
    /// decryption invariant is checked.
    ///
    /// Errors: as [`Ciphertext::from_parts`].
    pub fn from_rlwe(ctx: &BfvContext, mut rlwe: RlweCiphertext<Coeff>) -> BfvResult<Self> {
        let count = rlwe.part_count();
        if !(2..=3).contains(&count) {
            return Err(BfvError::WrongPartCount {
                operation: "ciphertext construction",
                expected: if count < 2 { 2 } else { 3 },
                got: count,
            });
        }
        for p in &mut rlwe.parts {
            p.rebase(ctx.q_basis())?;
        }
        Ok(Self {
            fingerprint: ctx.fingerprint(),
            rlwe,
        })
    }

    /// The polynomials `c_0, c_1, ...` (coefficient form over `Q`).
    pub fn parts(&self) -> &[Poly<Coeff>] {
        &self.rlwe.parts
    }

    /// The underlying RLWE ciphertext of `rnsfhe-core` (coefficient form over `Q`).
    pub fn rlwe(&self) -> &RlweCiphertext<Coeff> {
        &self.rlwe
    }

    /// The underlying RLWE ciphertext, by value.
    pub fn into_rlwe(self) -> RlweCiphertext<Coeff> {
        self.rlwe
    }

    /// Number of parts (2, or 3 before relinearization).
    pub fn part_count(&self) -> usize {
        self.rlwe.part_count()
    }

    /// Fingerprint of the BFV context the ciphertext belongs to.
    pub fn fingerprint(&self) -> u64 {
        self.fingerprint
    }
}

/// `Delta m = floor(Q/t) m` over `Q` (HPS Section 4.1 "Encryption").
pub(crate) fn scaled_message(ctx: &BfvContext, pt: &Plaintext) -> BfvResult<Poly<Coeff>> {
    ctx.check_fingerprint(pt.fingerprint, "plaintext")?;
    let mut m = Poly::from_u64_reduced(ctx.q_basis(), &pt.coeffs)?;
    m.mul_scalars_assign(ctx.delta())?;
    Ok(m)
}

/// Encrypts plaintexts (HPS Section 4.1 "Encryption"), with the public key or with the secret key: the
/// message scaled by `Delta`, encrypted by core's [`rnsfhe_core::Encryptor`] in coefficient form.
#[derive(Clone, Debug)]
pub struct Encryptor {
    ctx: Arc<BfvContext>,
    inner: rnsfhe_core::Encryptor,
}

impl Encryptor {
    /// Public-key encryption: `ct = [u pk + (e_0, e_1) + (Delta m, 0)]_Q` with `u <- chi_k` (uniform
    /// ternary) and `e_0, e_1 <- chi_e`.
    ///
    /// Errors: [`BfvError::ContextMismatch`] if the key belongs to other parameters;
    /// [`BfvError::Insecure`] for an extended key where the context makes keys over `Q` only
    /// ([`BfvContext::extended_public_key`]).
    pub fn with_public_key(ctx: &Arc<BfvContext>, pk: &PublicKey) -> BfvResult<Self> {
        ctx.check_public_key(pk)?;
        Ok(Self {
            ctx: Arc::clone(ctx),
            inner: rnsfhe_core::Encryptor::with_public_key(ctx.rlwe(), pk)?,
        })
    }

    /// Secret-key encryption: `ct = ([-a s + e + Delta m]_Q, a)` with `a` uniform and `e <- chi_e`.
    ///
    /// Errors: [`BfvError::ContextMismatch`] if the key belongs to other parameters.
    pub fn with_secret_key(ctx: &Arc<BfvContext>, sk: &SecretKey) -> BfvResult<Self> {
        ctx.check_rlwe_fingerprint(sk.fingerprint(), "secret key")?;
        Ok(Self {
            ctx: Arc::clone(ctx),
            inner: rnsfhe_core::Encryptor::with_secret_key(ctx.rlwe(), sk)?,
        })
    }

    /// Encrypts `pt`: `Delta m` joins the error `e_0` in coefficient form, at no extra pass.
    ///
    /// Errors: [`BfvError::ContextMismatch`] for a plaintext of another context.
    pub fn encrypt(&self, pt: &Plaintext, rng: &mut Csprng) -> BfvResult<Ciphertext> {
        // The scaling of the message and the encryption in one region of active waiting (see
        // `rnsfhe_core::long_operation`): the pool's other worker stays awake between the two.
        let words = self.ctx.q_basis().len() * self.ctx.n();
        rnsfhe_core::long_operation(words, || {
            let m = scaled_message(&self.ctx, pt)?;
            let rlwe = self.inner.encrypt_coeff_in::<Coeff>(&m, rng)?;
            Ok(self.wrap(rlwe))
        })
    }

    /// An encryption of zero.
    ///
    /// Errors: sampler errors.
    pub fn encrypt_zero(&self, rng: &mut Csprng) -> BfvResult<Ciphertext> {
        let rlwe = self
            .inner
            .encrypt_zero_in::<Coeff>(self.ctx.q_basis().len(), rng)?;
        Ok(self.wrap(rlwe))
    }

    fn wrap(&self, rlwe: RlweCiphertext<Coeff>) -> Ciphertext {
        Ciphertext {
            fingerprint: self.ctx.fingerprint(),
            rlwe,
        }
    }

    /// Secret-key encryption of `pt` whose uniform part `a` is kept as the 32-byte public seed it expands
    /// from: a [`SeededCiphertext`] is about half the size of a [`Ciphertext`] on the wire (SEAL's seeded
    /// symmetric ciphertexts), for the data owner's uploads. It supports no arithmetic: the receiver
    /// loads it as a [`Ciphertext`], or [`SeededCiphertext::expand`] gives one.
    ///
    /// Errors: [`BfvError::InvalidParams`] for an encryptor built with the public key (its ciphertexts
    /// have no uniform part to seed); [`BfvError::ContextMismatch`] for a plaintext of another context.
    pub fn encrypt_seeded(&self, pt: &Plaintext, rng: &mut Csprng) -> BfvResult<SeededCiphertext> {
        if !self.inner.has_secret_key() {
            return Err(BfvError::InvalidParams {
                what: "seeded encryption",
                reason:
                    "a seeded ciphertext needs secret-key encryption (Encryptor::with_secret_key); \
                         public-key ciphertexts have no uniform part to seed"
                        .into(),
            });
        }
        let m = scaled_message(&self.ctx, pt)?;
        Ok(SeededCiphertext {
            fingerprint: self.ctx.fingerprint(),
            inner: self.inner.encrypt_coeff_seeded_in::<Coeff>(&m, rng)?,
        })
    }
}

/// Largest `log2(Q)` for which [`Decryptor::noise_budget`] is available (its composition goes through
/// `f64`).
pub const MAX_BUDGET_LOG_Q: f64 = 2000.0;

/// Decrypts ciphertexts with the secret key by HPS simple scaling (Sections 2.3 and 4.4), and measures
/// their noise budget (a diagnostic that needs the secret key). The products with `s` are core's
/// [`rnsfhe_core::Decryptor`]; the scaling to `t` is BFV's.
pub struct Decryptor {
    ctx: Arc<BfvContext>,
    inner: rnsfhe_core::Decryptor,
    /// Decryption over a prefix `Q'` of `Q` ([`Decryptor::decrypt`]), when `Q` has more primes than
    /// the margin needs.
    reduced: Option<ReducedDecryption>,
}

/// How far the reduced-modulus decryption may move `t x / Q` at most, as a power of two: `2^-64`. The
/// simple scaler itself is exact only outside a region of width `k 2^-66` (wide path) or
/// `(k^2 + k) 2^-53` (float path) around the rounding boundaries ([`rnsfhe_ring::scaling`]), so the
/// reduced path widens the region where the result may differ from the exact rounding by at most
/// `2^-64`, and only there.
pub const REDUCED_DECRYPTION_MARGIN_BITS: f64 = 64.0;

/// Decryption of 2-part ciphertexts over the prefix `Q' = q_1 ... q_k'` of `Q`: the ciphertext is
/// switched to `Q'` (`c_j' ~ c_j / Q''` with `Q'' = Q / Q'`, RNS-CKKS Algorithm 2 ModDown in `Fast`
/// mode: `|c_j' - c_j / Q''| <= ceil(k''/2)` per coefficient), then decrypted by HPS simple scaling over
/// `Q'` (Sections 2.3 and 4.4). With `x = [c_0 + c_1 s]_Q` and `x' = [c_0' + c_1' s]_{Q'}`,
/// `t x' / Q' = t x / Q + t e / Q' (mod t)` where `||e||_inf <= ceil(k''/2) (1 + ||s||_1)` and
/// `||s||_1 <= N` for a ternary secret, so
/// `round(t x' / Q') = round(t x / Q)` unless the fractional part of `t x / Q` lies within
/// `t ceil(k''/2) (1 + N) / Q' <= 2^-`[`REDUCED_DECRYPTION_MARGIN_BITS`] of `1/2`: `k'` is the
/// smallest prefix for which that holds. A ciphertext whose invariant noise is below `1/2 - 2^-64`
/// (any positive noise budget above `2^-63` bits) decrypts to the same plaintext as over all of `Q`, for
/// `2 + 2 k'` NTTs instead of `2 k` and a conversion of `k - k'` limbs to `k'`.
struct ReducedDecryption {
    switcher: ModSwitcher,
    scaler: SimpleScaler,
}

impl ReducedDecryption {
    /// The smallest prefix `Q'` of `ctx`'s `Q` meeting the margin, or `None` when it would be all of
    /// `Q`. Secrets are ternary (core's [`rnsfhe_core::SecretKey`] accepts nothing else), so
    /// `||s||_1 <= N`: the bound holds for every key and the choice says nothing about the key.
    fn choose(ctx: &BfvContext) -> BfvResult<Option<Self>> {
        let q = ctx.q_basis();
        let k = q.len();
        let log_t = (ctx.plaintext_modulus() as f64).log2();
        let log_s = ((ctx.n() + 1) as f64).log2();
        for kept in 1..k {
            let log_q_kept = q.prefix(kept)?.log2_product();
            let dropped = k - kept;
            let bound = log_t + (dropped.div_ceil(2) as f64).log2() + log_s;
            // One bit of slack for the floating-point logarithms of the moduli.
            if log_q_kept >= bound + REDUCED_DECRYPTION_MARGIN_BITS + 1.0 {
                let kept_basis = q.prefix(kept)?;
                let switcher =
                    ModSwitcher::new(&kept_basis, &q.slice(kept..k)?, ConversionMode::Fast)?;
                let scaler = SimpleScaler::new(&kept_basis, ctx.plaintext_modulus())?;
                return Ok(Some(Self { switcher, scaler }));
            }
        }
        Ok(None)
    }
}

impl std::fmt::Debug for Decryptor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Decryptor { <secret key redacted> }")
    }
}

impl Decryptor {
    /// A decryptor for `sk`.
    ///
    /// Errors: [`BfvError::ContextMismatch`] if the key belongs to other parameters.
    pub fn new(ctx: &Arc<BfvContext>, sk: &SecretKey) -> BfvResult<Self> {
        ctx.check_rlwe_fingerprint(sk.fingerprint(), "secret key")?;
        Ok(Self {
            ctx: Arc::clone(ctx),
            inner: rnsfhe_core::Decryptor::new(ctx.rlwe(), sk)?,
            reduced: ReducedDecryption::choose(ctx)?,
        })
    }

    /// Number of primes of `Q` that [`Decryptor::decrypt`] decrypts 2-part ciphertexts over (`k'` of
    /// the reduced-modulus decryption, `k` when no prefix of `Q` keeps the margin).
    pub fn decryption_limbs(&self) -> usize {
        self.reduced
            .as_ref()
            .map_or(self.ctx.q_basis().len(), |r| r.switcher.q().len())
    }

    /// `y = [c_1 s (+ c_2 s^2)]_Q` in coefficient form, so that `x = [c_0 + y]_Q` (HPS Section 4.4, first
    /// step): core's [`rnsfhe_core::Decryptor::secret_part`], which for two parts is one
    /// [`Poly::mul_by_ntt`] and leaves `c_0` to be added in the caller's own pass over `y`.
    fn secret_part(&self, ct: &Ciphertext) -> BfvResult<Poly<Coeff>> {
        self.ctx.check_fingerprint(ct.fingerprint, "ciphertext")?;
        Ok(self.inner.secret_part(&ct.rlwe)?)
    }

    /// Decrypts: `m = [round(t/Q x)]_t` with `x = [c_0 + c_1 s (+ c_2 s^2)]_Q`. A 2-part ciphertext is
    /// first switched to the prefix `Q'` of [`Decryptor::decryption_limbs`] primes and decrypted there
    /// (the same plaintext as [`Decryptor::decrypt_full`] unless `t x / Q` lies within `2^-64` of a
    /// rounding boundary, see [`REDUCED_DECRYPTION_MARGIN_BITS`]); 3-part ciphertexts, and contexts
    /// where no shorter prefix keeps that margin, take [`Decryptor::decrypt_full`]. Correct while the
    /// noise budget is positive (above `2^-63` bits).
    ///
    /// Errors: [`BfvError::ContextMismatch`] or [`BfvError::WrongPartCount`] for a malformed ciphertext.
    pub fn decrypt(&self, ct: &Ciphertext) -> BfvResult<Plaintext> {
        match &self.reduced {
            Some(reduced) if ct.rlwe.parts.len() == 2 => {
                self.ctx.check_fingerprint(ct.fingerprint, "ciphertext")?;
                let parts = ct
                    .rlwe
                    .parts
                    .iter()
                    .map(|c| reduced.switcher.mod_down(c))
                    .collect::<Result<Vec<_>, _>>()?;
                let switched = RlweCiphertext { parts };
                let y = self.inner.secret_part(&switched)?;
                let coeffs = reduced.scaler.scale_sum(&switched.parts[0], &y)?;
                Ok(Plaintext {
                    fingerprint: self.ctx.fingerprint(),
                    coeffs,
                })
            }
            _ => self.decrypt_full(ct),
        }
    }

    /// Decrypts over all of `Q`: `m = [round(t/Q x)]_t` with `x = [c_0 + c_1 s (+ c_2 s^2)]_Q`, computed
    /// by HPS simple scaling (Section 2.3, Eq. 4; ring [`rnsfhe_ring::SimpleScaler`], exact for moduli up
    /// to 62 bits) with the addition of `c_0` fused into it. Correct while the noise budget is positive.
    ///
    /// Errors: as [`Decryptor::decrypt`].
    pub fn decrypt_full(&self, ct: &Ciphertext) -> BfvResult<Plaintext> {
        let y = self.secret_part(ct)?;
        let coeffs = self.ctx.simple_scaler().scale_sum(&ct.rlwe.parts[0], &y)?;
        Ok(Plaintext {
            fingerprint: self.ctx.fingerprint(),
            coeffs,
        })
    }

    /// The invariant noise budget in bits (**diagnostic**: it needs the secret key and must never be
    /// computed by or revealed to an untrusted party).
    ///
    /// With `x = [c_0 + c_1 s (+ c_2 s^2)]_Q` and `t/Q x = m + v + t a` (the invariant noise `v`, the
    /// "noise" of HPS Section 5.1 divided by `Delta`), decryption is correct while `||v||_inf < 1/2`; the
    /// budget is `-log2(2 ||v||_inf) = log2(Q) - 1 - log2 ||[t x]_Q||_inf`, clamped at 0. It decreases with
    /// every operation; at 0 the ciphertext may no longer decrypt correctly.
    ///
    /// Errors: as [`Decryptor::decrypt`]; [`BfvError::NoiseBudgetUnavailable`] when `log2(Q)` exceeds
    /// [`MAX_BUDGET_LOG_Q`].
    pub fn noise_budget(&self, ct: &Ciphertext) -> BfvResult<f64> {
        self.ctx.check_fingerprint(ct.fingerprint, "ciphertext")?;
        let mut x = self.inner.phase(&ct.rlwe)?;
        x.mul_scalars_assign(self.ctx.t_mod_q())?;
        let log_q = self.ctx.log_q();
        if log_q > MAX_BUDGET_LOG_Q {
            return Err(BfvError::NoiseBudgetUnavailable {
                log_q,
                max: MAX_BUDGET_LOG_Q,
            });
        }
        // Centered values up to Q/2 < 2^2000: divide by 2^shift (exact for a power of two) to stay far
        // inside the f64 range.
        let shift = (log_q - 1000.0).max(0.0).floor();
        let values = self
            .ctx
            .composer()
            .compose_centered_scaled(&x, shift.exp2())?;
        let max = values.iter().fold(0.0f64, |m, v| m.max(v.abs()));
        let log_max = if max > 0.0 { max.log2() + shift } else { 0.0 };
        Ok((log_q - 1.0 - log_max).max(0.0))
    }
}
