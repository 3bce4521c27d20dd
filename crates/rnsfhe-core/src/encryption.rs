//! RLWE ciphertexts, encryption (public and secret key) and decryption.
//!
//! A ciphertext at level `l` is a list of polynomials `(c_0, c_1[, c_2])` over `Q_l = q_0 .. q_{l-1}` in
//! NTT form, decrypting to `c_0 + c_1 s (+ c_2 s^2) mod Q_l` (RNS-CKKS Section 4, `Enc`/`Dec`; the
//! plaintext encoding, scale and slots belong to the scheme crates).

use std::borrow::Cow;
use std::sync::Arc;

use rnsfhe_math::sampling::{Csprng, Seed};
use rnsfhe_ring::{Coeff, Ntt, Poly, RnsBasis};

use crate::context::RlweContext;
use crate::error::{Error, Result};
use crate::keys::{PublicKey, SecretKey};
use crate::samplers::{expand_uniform, sample_error, sample_error_coeff, sample_ternary_poly};

/// An RLWE ciphertext: `parts` in NTT form over the same level `Q_l` (2 parts normally, 3 after a tensor
/// product), decrypting to `sum_i parts[i] s^i`.
#[derive(Clone, Debug, PartialEq)]
pub struct RlweCiphertext {
    /// The polynomials `c_0, c_1, ...`, all over the same basis `Q_l`.
    pub parts: Vec<Poly<Ntt>>,
}

impl RlweCiphertext {
    /// Wraps parts, checking that there is at least one and that all share a basis.
    ///
    /// Errors: [`Error::WrongPartCount`] for no parts; [`Error::LevelMismatch`] (or a ring basis
    /// mismatch) when the parts do not share one basis.
    pub fn new(parts: Vec<Poly<Ntt>>) -> Result<Self> {
        let Some(first) = parts.first() else {
            return Err(Error::WrongPartCount {
                operation: "ciphertext construction",
                expected: 2,
                got: 0,
            });
        };
        for p in &parts[1..] {
            if p.limb_count() != first.limb_count() {
                return Err(Error::LevelMismatch {
                    operation: "ciphertext construction (parts)",
                    left: first.limb_count(),
                    right: p.limb_count(),
                });
            }
            first
                .basis()
                .check_same(p.basis(), "ciphertext construction (parts)")?;
        }
        Ok(Self { parts })
    }

    /// The level: the number of limbs `l` of the parts (the ciphertext lives over `q_0 .. q_{l-1}`).
    pub fn level(&self) -> usize {
        self.parts.first().map_or(0, |p| p.limb_count())
    }

    /// Number of parts (2 for a fresh ciphertext, 3 after a tensor product).
    pub fn part_count(&self) -> usize {
        self.parts.len()
    }

    /// Checks that `ct` is a well-formed ciphertext of `ctx` with `parts` parts (any number if `None`);
    /// returns its level.
    pub(crate) fn check(
        &self,
        ctx: &RlweContext,
        parts: Option<usize>,
        operation: &'static str,
    ) -> Result<usize> {
        if let Some(expected) = parts {
            if self.parts.len() != expected {
                return Err(Error::WrongPartCount {
                    operation,
                    expected,
                    got: self.parts.len(),
                });
            }
        }
        let Some(first) = self.parts.first() else {
            return Err(Error::WrongPartCount {
                operation,
                expected: parts.unwrap_or(2),
                got: 0,
            });
        };
        let level = ctx.level_of(first, "ciphertext")?;
        for p in &self.parts[1..] {
            if p.limb_count() != level {
                return Err(Error::LevelMismatch {
                    operation,
                    left: level,
                    right: p.limb_count(),
                });
            }
            first.basis().check_same(p.basis(), operation)?;
        }
        Ok(level)
    }

    /// Part-wise sum; the result has as many parts as the longer operand.
    ///
    /// Errors: [`Error::LevelMismatch`] if the levels differ.
    pub fn add(&self, other: &Self) -> Result<Self> {
        if self.level() != other.level() {
            return Err(Error::LevelMismatch {
                operation: "ciphertext addition",
                left: self.level(),
                right: other.level(),
            });
        }
        let (long, short) = if self.parts.len() >= other.parts.len() {
            (self, other)
        } else {
            (other, self)
        };
        let mut parts = Vec::with_capacity(long.parts.len());
        for (p, q) in long.parts.iter().zip(&short.parts) {
            parts.push(p.add(q)?);
        }
        parts.extend(long.parts[short.parts.len()..].iter().cloned());
        Ok(Self { parts })
    }

    /// The tensor product of two 2-part ciphertexts, `(c_0 c'_0, c_0 c'_1 + c_1 c'_0, c_1 c'_1)`, which
    /// decrypts to the product of the two decryptions under `(1, s, s^2)` (RNS-CKKS `Mult`, first step).
    ///
    /// Errors: [`Error::WrongPartCount`] unless both have 2 parts; [`Error::LevelMismatch`] if the levels
    /// differ.
    pub fn tensor(&self, other: &Self) -> Result<Self> {
        for ct in [self, other] {
            if ct.parts.len() != 2 {
                return Err(Error::WrongPartCount {
                    operation: "tensor product",
                    expected: 2,
                    got: ct.parts.len(),
                });
            }
        }
        if self.level() != other.level() {
            return Err(Error::LevelMismatch {
                operation: "tensor product",
                left: self.level(),
                right: other.level(),
            });
        }
        let (a0, a1) = (&self.parts[0], &self.parts[1]);
        let (b0, b1) = (&other.parts[0], &other.parts[1]);
        let d0 = a0.mul(b0)?;
        let d1 = a0.mul_pair_sum(b1, a1, b0)?;
        let d2 = a1.mul(b1)?;
        Ok(Self {
            parts: vec![d0, d1, d2],
        })
    }

    /// The same ciphertext modulo the lower level `Q_level` (drops the last limbs of every part).
    ///
    /// Errors: ring [`rnsfhe_ring::Error::InvalidLimbCount`] unless `1 <= level <= self.level()`.
    pub fn drop_to_level(&self, level: usize) -> Result<Self> {
        Ok(Self {
            parts: self
                .parts
                .iter()
                .map(|p| p.drop_to(level))
                .collect::<rnsfhe_ring::Result<Vec<_>>>()?,
        })
    }
}

/// The key an [`Encryptor`] uses.
#[derive(Clone, Debug)]
enum EncryptionKey {
    Public(PublicKey),
    Secret(SecretKey),
}

/// Encrypts plaintext polynomials (RNS-CKKS `Enc`), with a public key or with the secret key.
#[derive(Clone, Debug)]
pub struct Encryptor {
    ctx: Arc<RlweContext>,
    key: EncryptionKey,
}

impl Encryptor {
    /// Public-key encryption: `(c_0, c_1) = v (b, a) + (m + e_0, e_1)` with `v` uniform ternary and
    /// `e_0, e_1 <- chi_err`.
    ///
    /// Errors: [`Error::ContextMismatch`] if the key belongs to another context.
    pub fn with_public_key(ctx: &Arc<RlweContext>, pk: &PublicKey) -> Result<Self> {
        ctx.check_fingerprint(pk.fingerprint(), "public key")?;
        Ok(Self {
            ctx: Arc::clone(ctx),
            key: EncryptionKey::Public(pk.clone()),
        })
    }

    /// Secret-key encryption: `(c_0, c_1) = (-a s + m + e, a)` with `a` uniform and `e <- chi_err`.
    ///
    /// Errors: [`Error::ContextMismatch`] if the key belongs to another context.
    pub fn with_secret_key(ctx: &Arc<RlweContext>, sk: &SecretKey) -> Result<Self> {
        ctx.check_fingerprint(sk.fingerprint(), "secret key")?;
        Ok(Self {
            ctx: Arc::clone(ctx),
            key: EncryptionKey::Secret(sk.clone()),
        })
    }

    /// Encrypts `m` (NTT form, over a prefix `Q_l` of the chain); the ciphertext has level `l`.
    ///
    /// Errors: [`Error::NotOnChain`] if `m` is not over a prefix of the chain.
    pub fn encrypt(&self, m: &Poly<Ntt>, rng: &mut Csprng) -> Result<RlweCiphertext> {
        let level = self.ctx.level_of(m, "plaintext")?;
        let mut ct = self.encrypt_zero(level, rng)?;
        ct.parts[0].add_assign(m)?;
        Ok(ct)
    }

    /// [`Encryptor::encrypt`] of a plaintext in coefficient form: `m` is added to the error `e_0` before
    /// its NTT, which saves the `l` NTTs of transforming `m` separately.
    ///
    /// Errors: [`Error::NotOnChain`] if `m` is not over a prefix of the chain.
    pub fn encrypt_coeff(&self, m: &Poly<Coeff>, rng: &mut Csprng) -> Result<RlweCiphertext> {
        let level = self.ctx.level_of(m, "plaintext")?;
        self.encrypt_with(level, Some(m), rng)
    }

    /// An encryption of zero at level `l`.
    ///
    /// Errors: [`Error::LevelOutOfRange`] unless `1 <= l <= L`.
    pub fn encrypt_zero(&self, level: usize, rng: &mut Csprng) -> Result<RlweCiphertext> {
        self.encrypt_with(level, None, rng)
    }

    /// Secret-key encryption of `m` (coefficient form, over a prefix `Q_l` of the chain) whose uniform
    /// part `a` is kept as its public seed: a [`SeededRlweCiphertext`] is about half the size on the wire
    /// (SEAL's seeded symmetric ciphertexts). It supports no arithmetic: send it, and the receiver loads
    /// a full ciphertext, or call [`SeededRlweCiphertext::expand`].
    ///
    /// Errors: [`Error::InvalidParams`] for an encryptor built with the public key (its ciphertexts have
    /// no uniform part); [`Error::NotOnChain`] if `m` is not over a prefix of the chain.
    pub fn encrypt_coeff_seeded(
        &self,
        m: &Poly<Coeff>,
        rng: &mut Csprng,
    ) -> Result<SeededRlweCiphertext> {
        if matches!(self.key, EncryptionKey::Public(_)) {
            return Err(Error::InvalidParams {
                what: "seeded encryption",
                reason:
                    "a seeded ciphertext needs secret-key encryption (build the encryptor with \
                         the secret key); public-key ciphertexts have no uniform part to seed"
                        .into(),
            });
        }
        let level = self.ctx.level_of(m, "plaintext")?;
        let seed = rng.fresh_seed();
        let mut ct = self.encrypt_with_seed(level, Some(m), seed, rng)?;
        let c0 = ct.parts.swap_remove(0);
        Ok(SeededRlweCiphertext { c0, seed })
    }

    /// `c_0`'s error term plus the message `m` (coefficient form), transformed to NTT form.
    fn error_plus(
        &self,
        basis: &Arc<RnsBasis>,
        m: Option<&Poly<Coeff>>,
        rng: &mut Csprng,
    ) -> Result<Poly<Ntt>> {
        let mut e = sample_error_coeff(&self.ctx, basis, rng)?;
        if let Some(m) = m {
            e.add_assign(m)?;
        }
        Ok(e.into_ntt())
    }

    fn encrypt_with(
        &self,
        level: usize,
        m: Option<&Poly<Coeff>>,
        rng: &mut Csprng,
    ) -> Result<RlweCiphertext> {
        let basis = self.ctx.basis_at(level)?;
        match &self.key {
            EncryptionKey::Public(pk) => {
                // Wrapped at once so that `v` is wiped on every return path, errors included.
                let v = crate::keys::SecretPoly::new(sample_ternary_poly(basis, rng)?);
                let mut c0 = self.error_plus(basis, m, rng)?;
                c0.mul_add_assign(v.get(), &*key_at_level(pk.b(), basis)?)?;
                let mut c1 = sample_error(&self.ctx, basis, rng)?;
                c1.mul_add_assign(v.get(), &*key_at_level(pk.a(), basis)?)?;
                Ok(RlweCiphertext {
                    parts: vec![c0, c1],
                })
            }
            EncryptionKey::Secret(_) => {
                let seed = rng.fresh_seed();
                self.encrypt_with_seed(level, m, seed, rng)
            }
        }
    }

    /// Secret-key encryption with `a` expanded from the public `seed`.
    fn encrypt_with_seed(
        &self,
        level: usize,
        m: Option<&Poly<Coeff>>,
        seed: Seed,
        rng: &mut Csprng,
    ) -> Result<RlweCiphertext> {
        let EncryptionKey::Secret(sk) = &self.key else {
            return Err(Error::InvalidParams {
                what: "seeded encryption",
                reason: "needs the secret key".into(),
            });
        };
        let basis = self.ctx.basis_at(level)?;
        let s = sk.ntt_at(&self.ctx, level)?;
        let a = expand_uniform(basis, &mut Csprng::from_public_seed(seed))?;
        let mut c0 = self.error_plus(basis, m, rng)?;
        let a_s = crate::keys::SecretPoly::new(a.mul(s.get())?);
        c0.sub_assign(a_s.get())?;
        Ok(RlweCiphertext { parts: vec![c0, a] })
    }
}

/// A fresh secret-key ciphertext `(c_0, a)` whose uniform part `a` is kept as the public seed it expands
/// from ([`Encryptor::encrypt_coeff_seeded`]). Only for sending: [`SeededRlweCiphertext::expand`] gives
/// the ciphertext to compute with.
#[derive(Clone, Debug, PartialEq)]
pub struct SeededRlweCiphertext {
    pub(crate) c0: Poly<Ntt>,
    pub(crate) seed: Seed,
}

impl SeededRlweCiphertext {
    /// `c_0 = -a s + m + e` (NTT form over `Q_l`).
    pub fn c0(&self) -> &Poly<Ntt> {
        &self.c0
    }

    /// The public seed of `a`.
    pub fn seed(&self) -> &Seed {
        &self.seed
    }

    /// The level (limb count).
    pub fn level(&self) -> usize {
        self.c0.limb_count()
    }

    /// The full ciphertext `(c_0, a)`, `a` expanded from the seed.
    ///
    /// Errors: none in practice (ring errors if the basis were inconsistent).
    pub fn expand(&self) -> Result<RlweCiphertext> {
        let a = expand_uniform(self.c0.basis(), &mut Csprng::from_public_seed(self.seed))?;
        Ok(RlweCiphertext {
            parts: vec![self.c0.clone(), a],
        })
    }
}

/// A public-key polynomial at the level of `basis` (a prefix of the chain): the key itself at the top
/// level (no copy), else a copy of its first limbs.
fn key_at_level<'a>(k: &'a Poly<Ntt>, basis: &Arc<RnsBasis>) -> Result<Cow<'a, Poly<Ntt>>> {
    if k.limb_count() == basis.len() {
        return Ok(Cow::Borrowed(k));
    }
    let mut low = k.drop_to(basis.len())?;
    low.rebase(basis)?;
    Ok(Cow::Owned(low))
}

/// Decrypts ciphertexts with the secret key (RNS-CKKS `Dec`): `sum_i c_i s^i mod Q_l`.
#[derive(Clone, Debug)]
pub struct Decryptor {
    ctx: Arc<RlweContext>,
    sk: SecretKey,
}

impl Decryptor {
    /// A decryptor for `sk`.
    ///
    /// Errors: [`Error::ContextMismatch`] if the key belongs to another context.
    pub fn new(ctx: &Arc<RlweContext>, sk: &SecretKey) -> Result<Self> {
        ctx.check_fingerprint(sk.fingerprint(), "secret key")?;
        Ok(Self {
            ctx: Arc::clone(ctx),
            sk: sk.clone(),
        })
    }

    /// `c_0 + c_1 s + c_2 s^2 + ...` (Horner) in NTT form over the ciphertext's level.
    ///
    /// Errors: [`Error::NotOnChain`], [`Error::LevelMismatch`] or [`Error::WrongPartCount`] for a
    /// malformed ciphertext or one of another chain.
    pub fn decrypt(&self, ct: &RlweCiphertext) -> Result<Poly<Ntt>> {
        let level = ct.check(&self.ctx, None, "decryption")?;
        let s = self.sk.ntt_at(&self.ctx, level)?;
        let mut parts = ct.parts.iter().rev();
        let Some(last) = parts.next() else {
            return Err(Error::WrongPartCount {
                operation: "decryption",
                expected: 2,
                got: 0,
            });
        };
        let mut acc = last.clone();
        for c in parts {
            acc.mul_assign(s.get())?;
            acc.add_assign(c)?;
        }
        Ok(acc)
    }

    /// [`Decryptor::decrypt`] followed by the inverse NTT.
    pub fn decrypt_coeff(&self, ct: &RlweCiphertext) -> Result<Poly<Coeff>> {
        Ok(self.decrypt(ct)?.into_coeff())
    }
}
