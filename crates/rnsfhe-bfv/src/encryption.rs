//! BFV ciphertexts, encryption (public or secret key) and decryption by HPS simple scaling, plus the
//! noise budget.
//!
//! Ciphertexts are kept in **coefficient form** over `Q`: HPS multiplication (Section 4.5) starts with a
//! basis extension and decryption (Section 4.4) ends with a scaling, both coefficient-wise, so this saves
//! transforms; NTTs are computed where products are taken.

use std::sync::Arc;

use rnsfhe_core::serialization::SeedExpansion;
use rnsfhe_math::sampling::{fill_ternary, Csprng, Seed};
use rnsfhe_ring::{Coeff, Ntt, Poly};
use zeroize::Zeroize;

use crate::encoder::Plaintext;
use crate::error::{BfvError, BfvResult};
use crate::serialization::SeededCiphertext;

use crate::keys::{sample_error, secret_ntt, PublicKey, SecretKey, SecretPoly};
use crate::params::BfvContext;

/// A BFV ciphertext: polynomials `(c_0, c_1[, c_2])` over `Q` in coefficient form with
/// `[c_0 + c_1 s (+ c_2 s^2)]_Q = Delta m + v` (HPS Section 3.1 decryption invariant, `Delta = floor(Q/t)`).
/// Two parts normally, three after a multiplication without relinearization.
#[derive(Clone, Debug, PartialEq)]
pub struct Ciphertext {
    pub(crate) fingerprint: u64,
    pub(crate) parts: Vec<Poly<Coeff>>,
}

impl Ciphertext {
    /// A ciphertext of `ctx` from its parts `(c_0, c_1[, c_2])` in coefficient form over `Q` (for
    /// deserialization and for tests that build ciphertexts with chosen noise; the inverse of
    /// [`Ciphertext::parts`]). Nothing about the decryption invariant is checked.
    ///
    /// Errors: [`BfvError::WrongPartCount`] unless there are 2 or 3 parts; [`BfvError::Ring`] (basis
    /// mismatch) if a part is not over the context's `Q`.
    pub fn from_parts(ctx: &BfvContext, parts: Vec<Poly<Coeff>>) -> BfvResult<Self> {
        if !(2..=3).contains(&parts.len()) {
            return Err(BfvError::WrongPartCount {
                operation: "ciphertext construction",
                expected: if parts.len() < 2 { 2 } else { 3 },
                got: parts.len(),
            });
        }
        let mut parts = parts;
        for p in &mut parts {
            p.rebase(ctx.q_basis())?;
        }
        Ok(Self {
            fingerprint: ctx.fingerprint(),
            parts,
        })
    }

    /// The polynomials `c_0, c_1, ...` (coefficient form over `Q`).
    pub fn parts(&self) -> &[Poly<Coeff>] {
        &self.parts
    }

    /// Number of parts (2, or 3 before relinearization).
    pub fn part_count(&self) -> usize {
        self.parts.len()
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

/// Adds a fresh error `e <- chi_e` to `c` and overwrites the error's buffer.
fn add_error(ctx: &BfvContext, c: &mut Poly<Coeff>, rng: &mut Csprng) -> BfvResult<()> {
    let e = sample_error(ctx, rng)?;
    c.add_assign(&e)?;
    e.into_data().zeroize();
    Ok(())
}

#[derive(Clone, Debug)]
enum EncryptionKey {
    Public(PublicKey),
    /// The secret key (its NTT form over `Q` is recomputed per encryption and zeroized after use).
    Secret(SecretKey),
}

/// Encrypts plaintexts (HPS Section 4.1 "Encryption"), with the public key or with the secret key.
#[derive(Clone, Debug)]
pub struct Encryptor {
    ctx: Arc<BfvContext>,
    key: EncryptionKey,
}

impl Encryptor {
    /// Public-key encryption: `ct = [u pk + (e_0, e_1) + (Delta m, 0)]_Q` with `u <- chi_k` (uniform
    /// ternary) and `e_0, e_1 <- chi_e`.
    ///
    /// Errors: [`BfvError::ContextMismatch`] if the key belongs to other parameters.
    pub fn with_public_key(ctx: &Arc<BfvContext>, pk: &PublicKey) -> BfvResult<Self> {
        ctx.check_rlwe_fingerprint(pk.fingerprint(), "public key")?;
        Ok(Self {
            ctx: Arc::clone(ctx),
            key: EncryptionKey::Public(pk.clone()),
        })
    }

    /// Secret-key encryption: `ct = ([-a s + e + Delta m]_Q, a)` with `a` uniform and `e <- chi_e`.
    ///
    /// Errors: [`BfvError::ContextMismatch`] if the key belongs to other parameters.
    pub fn with_secret_key(ctx: &Arc<BfvContext>, sk: &SecretKey) -> BfvResult<Self> {
        ctx.check_rlwe_fingerprint(sk.fingerprint(), "secret key")?;
        Ok(Self {
            ctx: Arc::clone(ctx),
            key: EncryptionKey::Secret(sk.clone()),
        })
    }

    /// Encrypts `pt`.
    ///
    /// Errors: [`BfvError::ContextMismatch`] for a plaintext of another context.
    pub fn encrypt(&self, pt: &Plaintext, rng: &mut Csprng) -> BfvResult<Ciphertext> {
        let m = scaled_message(&self.ctx, pt)?;
        let mut ct = self.encrypt_zero(rng)?;
        ct.parts[0].add_assign(&m)?;
        Ok(ct)
    }

    /// An encryption of zero.
    ///
    /// Errors: sampler errors.
    pub fn encrypt_zero(&self, rng: &mut Csprng) -> BfvResult<Ciphertext> {
        let ctx = &self.ctx;
        let q = ctx.q_basis();
        let parts = match &self.key {
            EncryptionKey::Public(pk) => {
                let mut u = vec![0i64; ctx.n()];
                fill_ternary(rng, &mut u);
                let u_poly = Poly::from_i64(q, &u);
                u.zeroize();
                let u_ntt = SecretPoly::new(u_poly?.into_ntt());
                let mut b = pk.b().clone();
                b.rebase(q)?;
                let mut a = pk.a().clone();
                a.rebase(q)?;
                let mut c0 = b.mul(u_ntt.get())?.into_coeff();
                add_error(ctx, &mut c0, rng)?;
                let mut c1 = a.mul(u_ntt.get())?.into_coeff();
                add_error(ctx, &mut c1, rng)?;
                vec![c0, c1]
            }
            EncryptionKey::Secret(sk) => {
                let seed = rng.fresh_seed();
                let c0 = secret_c0(ctx, sk, &seed, rng)?;
                vec![c0, Coeff::expand_seed(q, seed)?]
            }
        };
        Ok(Ciphertext {
            fingerprint: ctx.fingerprint(),
            parts,
        })
    }

    /// Secret-key encryption of `pt` whose uniform part `a` is kept as the 32-byte public seed it expands
    /// from: a [`SeededCiphertext`] is about half the size of a [`Ciphertext`] on the wire (SEAL's seeded
    /// symmetric ciphertexts), for the data owner's uploads. It supports no arithmetic: the receiver
    /// loads it as a [`Ciphertext`], or [`SeededCiphertext::expand`] gives one.
    ///
    /// Errors: [`BfvError::InvalidParams`] for an encryptor built with the public key (its ciphertexts
    /// have no uniform part to seed); [`BfvError::ContextMismatch`] for a plaintext of another context.
    pub fn encrypt_seeded(&self, pt: &Plaintext, rng: &mut Csprng) -> BfvResult<SeededCiphertext> {
        let EncryptionKey::Secret(sk) = &self.key else {
            return Err(BfvError::InvalidParams {
                what: "seeded encryption",
                reason:
                    "a seeded ciphertext needs secret-key encryption (Encryptor::with_secret_key); \
                         public-key ciphertexts have no uniform part to seed"
                        .into(),
            });
        };
        let m = scaled_message(&self.ctx, pt)?;
        let seed = rng.fresh_seed();
        let mut c0 = secret_c0(&self.ctx, sk, &seed, rng)?;
        c0.add_assign(&m)?;
        Ok(SeededCiphertext {
            fingerprint: self.ctx.fingerprint(),
            c0,
            seed,
        })
    }
}

/// `c_0 = [-a s + e]_Q` (coefficient form) of a secret-key encryption of zero whose `a` expands from the
/// public `seed` ([`SeedExpansion`]); `a s` is overwritten after use.
fn secret_c0(
    ctx: &BfvContext,
    sk: &SecretKey,
    seed: &Seed,
    rng: &mut Csprng,
) -> BfvResult<Poly<Coeff>> {
    let s = secret_ntt(ctx, sk)?;
    let a = Ntt::expand_seed(ctx.q_basis(), *seed)?;
    let a_s = SecretPoly::new(a.mul(s.get())?);
    let mut c0 = sample_error(ctx, rng)?;
    let a_s = a_s.get().clone().into_coeff();
    c0.sub_assign(&a_s)?;
    a_s.into_data().zeroize();
    Ok(c0)
}

/// Largest `log2(Q)` for which [`Decryptor::noise_budget`] is available (its composition goes through
/// `f64`).
pub const MAX_BUDGET_LOG_Q: f64 = 2000.0;

/// Decrypts ciphertexts with the secret key by HPS simple scaling (Sections 2.3 and 4.4), and measures
/// their noise budget (a diagnostic that needs the secret key).
pub struct Decryptor {
    ctx: Arc<BfvContext>,
    /// `s` in NTT form over `Q` (zeroized on drop).
    s: SecretPoly,
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
        Ok(Self {
            ctx: Arc::clone(ctx),
            s: secret_ntt(ctx, sk)?,
        })
    }

    /// `y = [c_1 s (+ c_2 s^2)]_Q` in coefficient form, so that `x = [c_0 + y]_Q` (HPS Section 4.4, first
    /// step). Two parts (the usual case) take one product, [`Poly::mul_by_ntt`] (limb by limb: transform,
    /// product, inverse transform), which leaves `c_0` to be added by the caller in its own pass over `y`.
    /// More parts take Horner's rule in NTT form over `c_1, c_2, ...`, which needs one inverse transform
    /// for all of them.
    fn secret_part(&self, ct: &Ciphertext) -> BfvResult<Poly<Coeff>> {
        self.ctx.check_fingerprint(ct.fingerprint, "ciphertext")?;
        let Some((top, middle)) = ct.parts.get(1..).and_then(|h| h.split_last()) else {
            return Err(BfvError::WrongPartCount {
                operation: "decryption",
                expected: 2,
                got: ct.parts.len(),
            });
        };
        let s = self.s.get();
        if middle.is_empty() {
            return Ok(top.mul_by_ntt(s)?);
        }
        let mut acc = top.clone().into_ntt();
        acc.mul_assign(s)?;
        for c in middle.iter().rev() {
            acc.add_assign(&c.clone().into_ntt())?;
            acc.mul_assign(s)?;
        }
        Ok(acc.into_coeff())
    }

    /// `x = [c_0 + c_1 s (+ c_2 s^2)]_Q` in coefficient form (HPS Section 4.4, first step).
    fn phase(&self, ct: &Ciphertext) -> BfvResult<Poly<Coeff>> {
        let mut x = self.secret_part(ct)?;
        x.add_assign(&ct.parts[0])?;
        Ok(x)
    }

    /// Decrypts: `m = [round(t/Q x)]_t` with `x = [c_0 + c_1 s (+ c_2 s^2)]_Q`, computed by HPS simple
    /// scaling (Section 2.3, Eq. 4; ring [`rnsfhe_ring::SimpleScaler`], exact for moduli up to 62 bits).
    /// Correct while the noise budget is positive.
    ///
    /// Errors: [`BfvError::ContextMismatch`] or [`BfvError::WrongPartCount`] for a malformed ciphertext.
    pub fn decrypt(&self, ct: &Ciphertext) -> BfvResult<Plaintext> {
        let y = self.secret_part(ct)?;
        let coeffs = self.ctx.simple_scaler().scale_sum(&ct.parts[0], &y)?;
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
        let mut x = self.phase(ct)?;
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
