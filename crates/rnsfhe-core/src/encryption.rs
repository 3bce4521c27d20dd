//! RLWE ciphertexts, encryption (public and secret key) and decryption, in either polynomial form.
//!
//! A ciphertext at level `l` is a list of polynomials `(c_0, c_1[, c_2])` over `Q_l = q_0 .. q_{l-1}`,
//! decrypting to `c_0 + c_1 s (+ c_2 s^2) mod Q_l` (RNS-CKKS Section 4, `Enc`/`Dec`; HPS Section 4.1 for
//! BFV; the plaintext encoding, scale and slots belong to the scheme crates). Its form is part of its
//! type, [`RlweCiphertext<F>`] for the ring's forms [`Ntt`] (the default: CKKS computes on evaluations)
//! and [`Coeff`] (BFV, whose multiplication and decryption work coefficient-wise, and sample extraction,
//! which reads coefficients); [`RlweCiphertext::into_coeff`] and [`RlweCiphertext::into_ntt`] convert.
//!
//! One [`Encryptor`] and one [`Decryptor`] serve both forms ([`RlweForm`]): encryption samples the
//! error (and takes the message) in coefficient form and multiplies by the key in NTT form, so each form
//! costs the transforms of its own representation only, at most `l` per part: the NTT of `e_i (+ m)` for
//! an NTT ciphertext, the inverse NTT of `v pk_i` (public key) or of `a s` and `a` (secret key) for a
//! coefficient one, never a round trip.

use std::borrow::Cow;
use std::sync::Arc;

use rnsfhe_math::sampling::{Csprng, Seed, Substreams};
use rnsfhe_ring::{parallel, Coeff, Form, ModSwitcher, Ntt, Poly, RnsBasis};

use crate::context::RlweContext;
use crate::error::{Error, Result};
use crate::gadget::long_operation;
use crate::keys::{PublicKey, SecretKey, SecretPoly};
use crate::samplers::{expand_uniform, sample_error_coeff, sample_ternary_poly};

/// The polynomial forms RLWE ciphertexts are computed in, [`Ntt`] and [`Coeff`]: the few operations
/// whose cost depends on the form, so that encryption, decryption and seed expansion are written once.
/// Every product is taken in NTT form (the ring has no other); what differs is which side is transformed.
/// Implemented for the ring's two forms only (its [`Form`] is sealed).
pub trait RlweForm: Form + Sized {
    /// `p` in this form: `p` itself for [`Coeff`], its forward NTT for [`Ntt`].
    fn from_coeff(p: Poly<Coeff>) -> Poly<Self>;

    /// `p` in this form: `p` itself for [`Ntt`], its inverse NTT for [`Coeff`].
    fn from_ntt(p: Poly<Ntt>) -> Poly<Self>;

    /// `p` in NTT form: borrowed for [`Ntt`], a transformed copy for [`Coeff`].
    fn ntt_of(p: &Poly<Self>) -> Cow<'_, Poly<Ntt>>;

    /// `p s` in this form, for `s` in NTT form ([`Coeff`]: [`Poly::mul_by_ntt`], limb by limb in cache).
    ///
    /// Errors: ring basis mismatch.
    fn mul_ntt(p: &Poly<Self>, s: &Poly<Ntt>) -> Result<Poly<Self>>;

    /// `acc += a b` for `a`, `b` in NTT form, where the product is secret (encryption randomness times a
    /// key): [`Ntt`] accumulates in one fused pass; [`Coeff`] transforms the product back and wipes it.
    ///
    /// Errors: ring basis mismatch.
    fn add_secret_product(acc: &mut Poly<Self>, a: &Poly<Ntt>, b: &Poly<Ntt>) -> Result<()> {
        let product = Wiped(Self::from_ntt(a.mul(b)?));
        Ok(acc.add_assign(&product.0)?)
    }

    /// `acc -= a b` for `a`, `b` in NTT form, where the product is secret (`a s` of secret-key
    /// encryption); the product is wiped after use.
    ///
    /// Errors: ring basis mismatch.
    fn sub_secret_product(acc: &mut Poly<Self>, a: &Poly<Ntt>, b: &Poly<Ntt>) -> Result<()> {
        let product = Wiped(Self::from_ntt(a.mul(b)?));
        Ok(acc.sub_assign(&product.0)?)
    }

    /// ModDown of `y` (NTT form, over `Q_l ∪ P` of `switcher`) to `Q_l` in this form: [`Ntt`] transforms
    /// the `P` limbs back and the correction forward ([`ModSwitcher::mod_down_ntt`]); [`Coeff`] transforms
    /// every limb back once and divides in coefficient form ([`ModSwitcher::mod_down`]).
    ///
    /// Errors: ring basis mismatch.
    fn mod_down_from_ntt(switcher: &ModSwitcher, y: Poly<Ntt>) -> Result<Poly<Self>>;

    /// The uniform polynomial over `basis` expanded from the public `seed`, in this form: the one
    /// expansion of the wire format ([`expand_uniform`] in NTT form from [`Csprng::from_public_seed`];
    /// the coefficient form is its inverse transform, still uniform), so one seed serves every scheme.
    ///
    /// Errors: ring errors only if the basis were inconsistent.
    fn expand_seed(basis: &Arc<RnsBasis>, seed: Seed) -> Result<Poly<Self>> {
        Ok(Self::from_ntt(expand_uniform(
            basis,
            &mut Csprng::from_public_seed(seed),
        )?))
    }
}

impl RlweForm for Ntt {
    fn from_coeff(p: Poly<Coeff>) -> Poly<Ntt> {
        p.into_ntt()
    }

    fn from_ntt(p: Poly<Ntt>) -> Poly<Ntt> {
        p
    }

    fn ntt_of(p: &Poly<Ntt>) -> Cow<'_, Poly<Ntt>> {
        Cow::Borrowed(p)
    }

    fn mul_ntt(p: &Poly<Ntt>, s: &Poly<Ntt>) -> Result<Poly<Ntt>> {
        Ok(p.mul(s)?)
    }

    fn add_secret_product(acc: &mut Poly<Ntt>, a: &Poly<Ntt>, b: &Poly<Ntt>) -> Result<()> {
        // Fused: the product never exists on its own, so there is nothing to wipe.
        Ok(acc.mul_add_assign(a, b)?)
    }

    fn mod_down_from_ntt(switcher: &ModSwitcher, y: Poly<Ntt>) -> Result<Poly<Ntt>> {
        Ok(switcher.mod_down_ntt(&y)?)
    }
}

impl RlweForm for Coeff {
    fn from_coeff(p: Poly<Coeff>) -> Poly<Coeff> {
        p
    }

    fn from_ntt(p: Poly<Ntt>) -> Poly<Coeff> {
        p.into_coeff()
    }

    fn ntt_of(p: &Poly<Coeff>) -> Cow<'_, Poly<Ntt>> {
        Cow::Owned(p.clone().into_ntt())
    }

    fn mul_ntt(p: &Poly<Coeff>, s: &Poly<Ntt>) -> Result<Poly<Coeff>> {
        Ok(p.mul_by_ntt(s)?)
    }

    fn mod_down_from_ntt(switcher: &ModSwitcher, y: Poly<Ntt>) -> Result<Poly<Coeff>> {
        Ok(switcher.mod_down(&y.into_coeff())?)
    }
}

/// A polynomial of either form holding secret material for a moment (a key product, an error plus the
/// message), overwritten with zeros when dropped, on error paths too.
struct Wiped<F: Form>(Poly<F>);

impl<F: Form> Drop for Wiped<F> {
    fn drop(&mut self) {
        self.0.zeroize();
    }
}

/// An RLWE ciphertext: `parts` in form `F` ([`Ntt`] unless named) over the same level `Q_l` (2 parts
/// normally, 3 after a tensor product), decrypting to `sum_i parts[i] s^i`.
#[derive(Clone, Debug, PartialEq)]
pub struct RlweCiphertext<F: Form = Ntt> {
    /// The polynomials `c_0, c_1, ...`, all over the same basis `Q_l`.
    pub parts: Vec<Poly<F>>,
}

impl<F: Form> RlweCiphertext<F> {
    /// Wraps parts, checking that there is at least one and that all share a basis.
    ///
    /// Errors: [`Error::WrongPartCount`] for no parts; [`Error::LevelMismatch`] (or a ring basis
    /// mismatch) when the parts do not share one basis.
    pub fn new(parts: Vec<Poly<F>>) -> Result<Self> {
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

impl RlweCiphertext<Ntt> {
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
        // Three products of parallel sections each: one region of active waiting.
        long_operation(a0.data().len(), || {
            let d0 = a0.mul(b0)?;
            let d1 = a0.mul_pair_sum(b1, a1, b0)?;
            let d2 = a1.mul(b1)?;
            Ok(Self {
                parts: vec![d0, d1, d2],
            })
        })
    }

    /// The same ciphertext in coefficient form (the inverse NTT of every part, in place): what sample
    /// extraction reads, since an LWE sample is made of coefficients.
    pub fn into_coeff(self) -> RlweCiphertext<Coeff> {
        RlweCiphertext {
            parts: self.parts.into_iter().map(Poly::into_coeff).collect(),
        }
    }
}

impl RlweCiphertext<Coeff> {
    /// The same ciphertext in NTT form (the forward NTT of every part, in place).
    pub fn into_ntt(self) -> RlweCiphertext<Ntt> {
        RlweCiphertext {
            parts: self.parts.into_iter().map(Poly::into_ntt).collect(),
        }
    }
}

/// The secret key with `s` in NTT form over the whole chain `Q`, taken once: at the top level (every
/// fresh CKKS ciphertext, every BFV ciphertext) encryption and decryption borrow it instead of copying
/// `s` per call; lower levels copy its first limbs.
#[derive(Clone, Debug)]
struct ChainSecret {
    top: SecretPoly,
}

impl ChainSecret {
    fn new(ctx: &RlweContext, sk: &SecretKey) -> Result<Self> {
        Ok(Self {
            top: sk.ntt_at(ctx, ctx.max_level())?,
        })
    }

    /// `s` in NTT form over `Q_level` (`level` checked by the caller's ciphertext or plaintext).
    fn at(&self, level: usize) -> Result<Cow<'_, SecretPoly>> {
        if level == self.top.get().limb_count() {
            return Ok(Cow::Borrowed(&self.top));
        }
        Ok(Cow::Owned(SecretPoly::new(self.top.get().drop_to(level)?)))
    }
}

/// The key an [`Encryptor`] uses.
#[derive(Clone, Debug)]
enum EncryptionKey {
    Public(PublicKey),
    Secret(ChainSecret),
}

/// Encrypts plaintext polynomials (RNS-CKKS `Enc`, HPS Section 4.1 "Encryption" without the scaling by
/// `Delta`), with a public key or with the secret key, into ciphertexts of either form: the `*_in`
/// methods name the form ([`RlweForm`]), the others give [`Ntt`] ciphertexts.
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
            key: EncryptionKey::Secret(ChainSecret::new(ctx, sk)?),
        })
    }

    /// Whether the encryptor was built with the secret key (only such an encryptor makes seeded
    /// ciphertexts).
    pub fn has_secret_key(&self) -> bool {
        matches!(self.key, EncryptionKey::Secret(_))
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
    /// its NTT, which saves the `l` NTTs of transforming `m` separately. [`Encryptor::encrypt_coeff_in`]
    /// in NTT form.
    ///
    /// Errors: [`Error::NotOnChain`] if `m` is not over a prefix of the chain.
    pub fn encrypt_coeff(&self, m: &Poly<Coeff>, rng: &mut Csprng) -> Result<RlweCiphertext> {
        self.encrypt_coeff_in(m, rng)
    }

    /// Encrypts `m` (coefficient form, over a prefix `Q_l` of the chain) into a ciphertext of form `F`
    /// and level `l`. `m` is added to the error `e_0` in coefficient form, so it costs no transform: an
    /// [`Ntt`] ciphertext transforms `e_i (+ m)`, a [`Coeff`] one the products with the key.
    ///
    /// Errors: [`Error::NotOnChain`] if `m` is not over a prefix of the chain.
    pub fn encrypt_coeff_in<F: RlweForm>(
        &self,
        m: &Poly<Coeff>,
        rng: &mut Csprng,
    ) -> Result<RlweCiphertext<F>> {
        let level = self.ctx.level_of(m, "plaintext")?;
        self.encrypt_with(level, || Ok::<_, Error>(Some(Cow::Borrowed(m))), rng)
    }

    /// [`Encryptor::encrypt_coeff_in`] of the message `message()` computes (coefficient form, over
    /// `Q_level`), for a message that takes time to make, such as the CKKS encoding of slot values
    /// (RNS-CKKS Section 2.1): `message` runs on one thread while the encryption randomness of the other
    /// part is sampled and multiplied by the key on another, so the encoding costs no time of its own on
    /// two threads. The ciphertext is the one [`Encryptor::encrypt_coeff_in`] gives for the same message
    /// and generator state.
    ///
    /// Errors: what `message` returns; [`Error::LevelMismatch`] (as `E`) if the message is not over
    /// `Q_level`; [`Error::LevelOutOfRange`] unless `1 <= level <= L`.
    pub fn encrypt_coeff_with<F: RlweForm, E: From<Error> + Send>(
        &self,
        level: usize,
        message: impl FnOnce() -> std::result::Result<Poly<Coeff>, E> + Send,
        rng: &mut Csprng,
    ) -> std::result::Result<RlweCiphertext<F>, E> {
        self.encrypt_with(level, || Ok(Some(Cow::Owned(message()?))), rng)
    }

    /// An encryption of zero at level `l` ([`Encryptor::encrypt_zero_in`] in NTT form).
    ///
    /// Errors: [`Error::LevelOutOfRange`] unless `1 <= l <= L`.
    pub fn encrypt_zero(&self, level: usize, rng: &mut Csprng) -> Result<RlweCiphertext> {
        self.encrypt_zero_in(level, rng)
    }

    /// An encryption of zero at level `l` in form `F`.
    ///
    /// Errors: [`Error::LevelOutOfRange`] unless `1 <= l <= L`.
    pub fn encrypt_zero_in<F: RlweForm>(
        &self,
        level: usize,
        rng: &mut Csprng,
    ) -> Result<RlweCiphertext<F>> {
        self.encrypt_with(level, || Ok::<_, Error>(None), rng)
    }

    /// Secret-key encryption of `m` (coefficient form, over a prefix `Q_l` of the chain) whose uniform
    /// part `a` is kept as its public seed: a [`SeededRlweCiphertext`] is about half the size on the wire
    /// (SEAL's seeded symmetric ciphertexts). It supports no arithmetic: send it, and the receiver loads
    /// a full ciphertext, or call [`SeededRlweCiphertext::expand`]. [`Encryptor::encrypt_coeff_seeded_in`]
    /// in NTT form.
    ///
    /// Errors: [`Error::InvalidParams`] for an encryptor built with the public key (its ciphertexts have
    /// no uniform part); [`Error::NotOnChain`] if `m` is not over a prefix of the chain.
    pub fn encrypt_coeff_seeded(
        &self,
        m: &Poly<Coeff>,
        rng: &mut Csprng,
    ) -> Result<SeededRlweCiphertext> {
        self.encrypt_coeff_seeded_in(m, rng)
    }

    /// [`Encryptor::encrypt_coeff_seeded`] with `c_0` in form `F`.
    ///
    /// Errors: as [`Encryptor::encrypt_coeff_seeded`].
    pub fn encrypt_coeff_seeded_in<F: RlweForm>(
        &self,
        m: &Poly<Coeff>,
        rng: &mut Csprng,
    ) -> Result<SeededRlweCiphertext<F>> {
        if !self.has_secret_key() {
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
        let (c0, _) = self.secret_c0(level, Some(m), seed, rng)?;
        Ok(SeededRlweCiphertext { c0, seed })
    }

    /// `e (+ m)` in form `F` for a fresh error `e <- chi_err` over `basis`: sampled in coefficient form,
    /// where adding the message costs no transform.
    fn error_plus<F: RlweForm>(
        &self,
        basis: &Arc<RnsBasis>,
        m: Option<&Poly<Coeff>>,
        rng: &mut Csprng,
    ) -> Result<Poly<F>> {
        let mut e = sample_error_coeff(&self.ctx, basis, rng)?;
        if let Some(m) = m {
            e.add_assign(m)?;
        }
        Ok(F::from_coeff(e))
    }

    /// The encryption of `message()` (or of zero for `None`) at `level`: the randomness is split first
    /// ([`Substreams`] drawn from `rng` in a fixed order), then the two parts are computed side by side
    /// (`message` runs in the branch of `c_0`), so the ciphertext depends on `rng` alone, not on the
    /// number of threads.
    fn encrypt_with<'m, F: RlweForm, E: From<Error> + Send>(
        &self,
        level: usize,
        message: impl FnOnce() -> std::result::Result<Option<Cow<'m, Poly<Coeff>>>, E> + Send,
        rng: &mut Csprng,
    ) -> std::result::Result<RlweCiphertext<F>, E> {
        let basis = self.ctx.basis_at(level)?;
        // The message, checked to be over `Q_level` (a lazy message is known only once made).
        let message = || -> std::result::Result<Option<Cow<'m, Poly<Coeff>>>, E> {
            let m = message()?;
            if let Some(m) = &m {
                let got = self.ctx.level_of(m, "plaintext")?;
                if got != level {
                    return Err(Error::LevelMismatch {
                        operation: "encryption (message level)",
                        left: level,
                        right: got,
                    }
                    .into());
                }
            }
            Ok(m)
        };
        // Sampling, transforms and products of both parts: one region of active waiting.
        long_operation(basis.len() * self.ctx.n(), || match &self.key {
            EncryptionKey::Public(pk) if pk.is_extended() => {
                self.encrypt_divided_by_p0(pk, level, message, rng)
            }
            EncryptionKey::Public(pk) => {
                let streams = Substreams::new(rng);
                // Wrapped at once so that `v` is wiped on every return path, errors included.
                let v = SecretPoly::new(sample_ternary_poly(basis, &mut streams.stream(0))?);
                let (c0, c1) = parallel::join(
                    || -> std::result::Result<Poly<F>, E> {
                        let m = message()?;
                        let mut c0 =
                            self.error_plus::<F>(basis, m.as_deref(), &mut streams.stream(1))?;
                        F::add_secret_product(&mut c0, v.get(), &*key_at_level(pk.b(), basis)?)?;
                        Ok(c0)
                    },
                    || -> Result<Poly<F>> {
                        let mut c1 = self.error_plus::<F>(basis, None, &mut streams.stream(2))?;
                        F::add_secret_product(&mut c1, v.get(), &*key_at_level(pk.a(), basis)?)?;
                        Ok(c1)
                    },
                );
                Ok(RlweCiphertext {
                    parts: vec![c0?, c1?],
                })
            }
            EncryptionKey::Secret(_) => {
                let seed = rng.fresh_seed();
                let (c0, a) = self.secret_c0_with(level, message, seed, rng)?;
                Ok(RlweCiphertext {
                    parts: vec![c0, F::from_ntt(a)],
                })
            }
        })
    }

    /// Public-key encryption with a key over `Q ∪ {p_0}` ([`RlweContext::public_key_basis`]):
    /// `c_i = round((v pk_i + e_i + [i = 0] p_0 m) / p_0)` over `Q_l`, computed over `Q_l ∪ {p_0}` and
    /// divided by ModDown. Dividing `p_0 m` gives `m` exactly, so the message joins the error before its
    /// transform, as in the encryption over `Q`; the ciphertext's error is the rounding `r_0 + r_1 s`
    /// (`|r_i| <= 1/2`) plus `(v e + e_0 + e_1 s) / p_0`, which is below `2^-30` for any set-up here.
    /// The two parts run side by side (`message` in the branch of `c_0`), each from its own stream.
    fn encrypt_divided_by_p0<'m, F: RlweForm, E: From<Error> + Send>(
        &self,
        pk: &PublicKey,
        level: usize,
        message: impl FnOnce() -> std::result::Result<Option<Cow<'m, Poly<Coeff>>>, E> + Send,
        rng: &mut Csprng,
    ) -> std::result::Result<RlweCiphertext<F>, E> {
        let switcher = self.ctx.encryption_switcher(level)?;
        let ext = switcher.qp();
        let streams = Substreams::new(rng);
        let v = SecretPoly::new(sample_ternary_poly(ext, &mut streams.stream(0))?);
        let part =
            |key: &Poly<Ntt>, message: Option<&Poly<Coeff>>, stream: u64| -> Result<Poly<F>> {
                let mut c = self.error_plus::<Ntt>(ext, message, &mut streams.stream(stream))?;
                c.mul_add_assign(v.get(), &*extended_key_at_level(key, ext)?)?;
                F::mod_down_from_ntt(&switcher, c)
            };
        let (c0, c1) = parallel::join(
            || -> std::result::Result<Poly<F>, E> {
                let m = message()?;
                let m_times_p0 = m.map(|m| times_p0(&m, ext)).transpose()?;
                Ok(part(pk.b(), m_times_p0.as_ref().map(|w| &w.0), 1)?)
            },
            || part(pk.a(), None, 2),
        );
        Ok(RlweCiphertext {
            parts: vec![c0?, c1?],
        })
    }

    /// Secret-key encryption with `a` expanded from the public `seed`: `c_0 = -a s + e (+ m)` in form
    /// `F`, and `a` in NTT form (a seeded ciphertext drops it without transforming it).
    fn secret_c0<F: RlweForm>(
        &self,
        level: usize,
        m: Option<&Poly<Coeff>>,
        seed: Seed,
        rng: &mut Csprng,
    ) -> Result<(Poly<F>, Poly<Ntt>)> {
        self.secret_c0_with(level, || Ok::<_, Error>(m.map(Cow::Borrowed)), seed, rng)
    }

    /// [`Encryptor::secret_c0`] of the message `message()` makes: the public expansion of `a` (one
    /// serial ChaCha20 stream, part of the wire format) runs beside the message and the error.
    fn secret_c0_with<'m, F: RlweForm, E: From<Error> + Send>(
        &self,
        level: usize,
        message: impl FnOnce() -> std::result::Result<Option<Cow<'m, Poly<Coeff>>>, E> + Send,
        seed: Seed,
        rng: &mut Csprng,
    ) -> std::result::Result<(Poly<F>, Poly<Ntt>), E> {
        let EncryptionKey::Secret(secret) = &self.key else {
            return Err(Error::InvalidParams {
                what: "seeded encryption",
                reason: "needs the secret key".into(),
            }
            .into());
        };
        let basis = self.ctx.basis_at(level)?;
        let s = secret.at(level)?;
        let (a, c0) = parallel::join(
            || expand_uniform(basis, &mut Csprng::from_public_seed(seed)),
            || -> std::result::Result<Poly<F>, E> {
                let m = message()?;
                Ok(self.error_plus::<F>(basis, m.as_deref(), rng)?)
            },
        );
        let (a, mut c0) = (a?, c0?);
        F::sub_secret_product(&mut c0, &a, s.get())?;
        Ok((c0, a))
    }
}

/// A fresh secret-key ciphertext `(c_0, a)` whose uniform part `a` is kept as the public seed it expands
/// from ([`Encryptor::encrypt_coeff_seeded`]), `c_0` in form `F`. Only for sending:
/// [`SeededRlweCiphertext::expand`] gives the ciphertext to compute with.
#[derive(Clone, Debug, PartialEq)]
pub struct SeededRlweCiphertext<F: Form = Ntt> {
    pub(crate) c0: Poly<F>,
    pub(crate) seed: Seed,
}

impl<F: Form> SeededRlweCiphertext<F> {
    /// A seeded ciphertext from the parts it travels as: `c_0` (over `Q_l`, in form `F`) and the public
    /// seed of `a` (a loader's constructor: the pair means something only under the secret it was
    /// made with, which the reader's context fingerprint stands for).
    pub fn from_parts(c0: Poly<F>, seed: Seed) -> Self {
        Self { c0, seed }
    }

    /// `c_0 = -a s + m + e` (over `Q_l`, in form `F`).
    pub fn c0(&self) -> &Poly<F> {
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
}

impl<F: RlweForm> SeededRlweCiphertext<F> {
    /// The full ciphertext `(c_0, a)`, `a` expanded from the seed ([`RlweForm::expand_seed`]).
    ///
    /// Errors: none in practice (ring errors if the basis were inconsistent).
    pub fn expand(&self) -> Result<RlweCiphertext<F>> {
        let a = F::expand_seed(self.c0.basis(), self.seed)?;
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

/// A key over `Q ∪ {p_0}` at the level of `ext = Q_l ∪ {p_0}`: the key itself at the top level, else a
/// copy of its first `l` limbs and its last.
fn extended_key_at_level<'a>(k: &'a Poly<Ntt>, ext: &Arc<RnsBasis>) -> Result<Cow<'a, Poly<Ntt>>> {
    if k.limb_count() == ext.len() {
        return Ok(Cow::Borrowed(k));
    }
    let n = k.degree();
    let l = ext.len() - 1;
    let data = k.data();
    let mut limbs = Vec::with_capacity(ext.len() * n);
    limbs.extend_from_slice(&data[..l * n]);
    limbs.extend_from_slice(&data[data.len() - n..]);
    Ok(Cow::Owned(Poly::from_data(ext, limbs)?))
}

/// `p_0 m` over `ext = Q_l ∪ {p_0}` for `m` over `Q_l` (coefficient form): `[p_0]_{q_j} m_j` in the
/// limbs of `Q_l` and 0 modulo `p_0`. Wiped after use: it carries the message.
fn times_p0(m: &Poly<Coeff>, ext: &Arc<RnsBasis>) -> Result<Wiped<Coeff>> {
    let n = m.degree();
    let mut data = Vec::with_capacity(ext.len() * n);
    data.extend_from_slice(m.data());
    data.resize(ext.len() * n, 0);
    let mut scaled = Wiped(Poly::from_data(ext, data)?);
    let moduli = ext.moduli();
    let p0 = moduli[moduli.len() - 1].value();
    let factors: Vec<u64> = moduli.iter().map(|q| q.reduce(p0)).collect();
    scaled.0.mul_scalars_assign(&factors)?;
    Ok(scaled)
}

/// Decrypts ciphertexts of either form with the secret key (RNS-CKKS `Dec`): `sum_i c_i s^i mod Q_l`.
/// The schemes decode from there (CKKS) or scale it (BFV, HPS Section 4.4, which takes
/// [`Decryptor::secret_part`] to fuse the addition of `c_0` into its scaling).
#[derive(Clone, Debug)]
pub struct Decryptor {
    ctx: Arc<RlweContext>,
    secret: ChainSecret,
}

impl Decryptor {
    /// A decryptor for `sk`.
    ///
    /// Errors: [`Error::ContextMismatch`] if the key belongs to another context.
    pub fn new(ctx: &Arc<RlweContext>, sk: &SecretKey) -> Result<Self> {
        ctx.check_fingerprint(sk.fingerprint(), "secret key")?;
        Ok(Self {
            ctx: Arc::clone(ctx),
            secret: ChainSecret::new(ctx, sk)?,
        })
    }

    /// `c_0 + c_1 s + c_2 s^2 + ...` in NTT form over the ciphertext's level ([`Decryptor::phase`] of an
    /// NTT ciphertext).
    ///
    /// Errors: [`Error::NotOnChain`], [`Error::LevelMismatch`] or [`Error::WrongPartCount`] for a
    /// malformed ciphertext or one of another chain.
    pub fn decrypt(&self, ct: &RlweCiphertext) -> Result<Poly<Ntt>> {
        self.phase(ct)
    }

    /// [`Decryptor::decrypt`] followed by the inverse NTT.
    ///
    /// Errors: as [`Decryptor::decrypt`].
    pub fn decrypt_coeff(&self, ct: &RlweCiphertext) -> Result<Poly<Coeff>> {
        Ok(self.decrypt(ct)?.into_coeff())
    }

    /// The phase `c_0 + c_1 s + c_2 s^2 + ...` over the ciphertext's level, in the ciphertext's form.
    ///
    /// Errors: as [`Decryptor::decrypt`].
    pub fn phase<F: RlweForm>(&self, ct: &RlweCiphertext<F>) -> Result<Poly<F>> {
        let mut x = self.secret_part(ct)?;
        x.add_assign(&ct.parts[0])?;
        Ok(x)
    }

    /// The phase without `c_0`, `c_1 s + c_2 s^2 + ...` (zero for a 1-part ciphertext), in the
    /// ciphertext's form, for a caller that adds `c_0` in a pass of its own (BFV fuses it into the
    /// scaling of decryption). Two parts take one product ([`RlweForm::mul_ntt`]: for [`Coeff`] limb
    /// by limb, transform, product and inverse transform in cache); more take Horner's rule in NTT form,
    /// with one inverse transform at the end for [`Coeff`].
    ///
    /// Errors: as [`Decryptor::decrypt`].
    pub fn secret_part<F: RlweForm>(&self, ct: &RlweCiphertext<F>) -> Result<Poly<F>> {
        let level = ct.check(&self.ctx, None, "decryption")?;
        let s = self.secret.at(level)?;
        let s = s.get();
        let Some((top, middle)) = ct.parts.get(1..).and_then(|h| h.split_last()) else {
            return Ok(Poly::zero(ct.parts[0].basis()));
        };
        if middle.is_empty() {
            return F::mul_ntt(top, s);
        }
        let mut acc = F::ntt_of(top).into_owned();
        acc.mul_assign(s)?;
        for c in middle.iter().rev() {
            acc.add_assign(&F::ntt_of(c))?;
            acc.mul_assign(s)?;
        }
        Ok(F::from_ntt(acc))
    }
}
