//! Keys: the secret key, the public key, key-switching keys (hybrid, with special primes), the
//! relinearization key and Galois keys, and the [`KeyGenerator`] that samples them.
//!
//! Key generation follows RNS-CKKS Section 4 (`KeyGen`, `KSGen`) with the hybrid gadget of Han-Ki
//! Section 2.4: for `dnum` digit groups `Q_j` with CRT constants `g_j = (Q/Q_j) [(Q/Q_j)^-1]_{Q_j}`, a
//! key-switching key from `s'` to `s` is `dnum` RLWE samples over `QP`,
//!
//! ```text
//! (b_j, a_j),   a_j <- U(R_QP),   b_j = -a_j s + e_j + [P g_j] s'  (mod QP),   e_j <- chi_err,
//! ```
//!
//! stored in NTT form. With `dnum = 1` this is GHS/RNS-CKKS `KSGen` (`g_0 = 1`, `b = -a s + e + P s'`).

use std::collections::BTreeMap;
use std::sync::Arc;

use rnsfhe_math::sampling::{fill_ternary, fill_ternary_hamming, Csprng, Seed, Substreams};
use rnsfhe_ring::{parallel, Coeff, GaloisElement, GaloisGroup, Ntt, Poly, RnsBasis};
use zeroize::Zeroize;

use crate::context::{RlweContext, SecretDistribution};
use crate::error::{Error, Result};
use crate::gadget::{long_operation, Gadget, GadgetCiphertext};
use crate::samplers::{expand_uniform, sample_error};

/// A polynomial holding secret material (a secret key in NTT form, a product with it, encryption
/// randomness): its residues are overwritten with zeros when it is dropped.
pub struct SecretPoly(Poly<Ntt>);

impl SecretPoly {
    /// Takes ownership of secret material.
    pub fn new(p: Poly<Ntt>) -> Self {
        Self(p)
    }

    /// The polynomial.
    pub fn get(&self) -> &Poly<Ntt> {
        &self.0
    }
}

impl Clone for SecretPoly {
    fn clone(&self) -> Self {
        Self(self.0.clone())
    }
}

impl std::fmt::Debug for SecretPoly {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SecretPoly(<redacted>)")
    }
}

impl Drop for SecretPoly {
    fn drop(&mut self) {
        self.0.zeroize();
    }
}

/// The secret key `s`: small signed coefficients (ternary) and their NTT form over the extended basis
/// `QP`, both overwritten with zeros on drop and never printed by `Debug`.
#[derive(Clone)]
pub struct SecretKey {
    fingerprint: u64,
    coeffs: Vec<i64>,
    ntt: SecretPoly,
}

impl std::fmt::Debug for SecretKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SecretKey { <redacted> }")
    }
}

impl Drop for SecretKey {
    fn drop(&mut self) {
        self.coeffs.zeroize();
    }
}

impl zeroize::ZeroizeOnDrop for SecretKey {}

impl SecretKey {
    /// Samples a secret from the context's [`SecretDistribution`] (RNS-CKKS `KeyGen`: `s <- chi_key`).
    pub fn generate(ctx: &RlweContext, rng: &mut Csprng) -> Result<Self> {
        // Sampling, then the transforms over `QP`: one region of active waiting (see `long_operation`).
        long_operation(ctx.n() * ctx.extended_basis().len(), || {
            let mut coeffs = vec![0i64; ctx.n()];
            match ctx.params().secret {
                SecretDistribution::Ternary => fill_ternary(rng, &mut coeffs),
                SecretDistribution::HammingWeight(h) => fill_ternary_hamming(rng, h, &mut coeffs)?,
            }
            let sk = Self::from_coefficients(ctx, &coeffs);
            coeffs.zeroize();
            sk
        })
    }

    /// A secret key with the given small signed coefficients (for example an LWE key embedded in a ring
    /// key, or a fixed key in tests).
    ///
    /// Errors: [`Error::InvalidParams`] if there are not `N` coefficients or one of them is not in
    /// `{-1, 0, 1}`.
    pub fn from_coefficients(ctx: &RlweContext, coeffs: &[i64]) -> Result<Self> {
        if coeffs.len() != ctx.n() {
            return Err(Error::InvalidParams {
                what: "secret key coefficients",
                reason: format!(
                    "expected N = {} coefficients, got {}",
                    ctx.n(),
                    coeffs.len()
                ),
            });
        }
        // The check scans every coefficient without a data-dependent branch or early exit (`c + 1` is in
        // {0, 1, 2} exactly for ternary `c`; wrapping keeps hostile values from overflowing), so the
        // time taken says nothing about a valid key; only for an invalid one is the position searched.
        let invalid = coeffs.iter().fold(0u64, |acc, &c| {
            acc | u64::from(c.wrapping_add(1) as u64 > 2)
        });
        if invalid != 0 {
            let i = coeffs
                .iter()
                .position(|c| !(-1..=1).contains(c))
                .unwrap_or_default();
            return Err(Error::InvalidParams {
                what: "secret key coefficients",
                reason: format!("coefficient {i} is not ternary (must be -1, 0 or 1)"),
            });
        }
        let ntt = Poly::<Coeff>::from_i64(ctx.extended_basis(), coeffs)?.into_ntt();
        Ok(Self {
            fingerprint: ctx.fingerprint(),
            coeffs: coeffs.to_vec(),
            ntt: SecretPoly::new(ntt),
        })
    }

    /// The signed coefficients of `s`.
    pub fn coefficients(&self) -> &[i64] {
        &self.coeffs
    }

    /// Number of nonzero coefficients `h` (enters the noise estimates: `||s||_2^2 = h`).
    pub fn hamming_weight(&self) -> usize {
        // `c & 1` is 1 for -1 and 1, 0 for 0: a count without a branch on the secret coefficients.
        self.coeffs.iter().map(|&c| (c & 1) as usize).sum()
    }

    /// Fingerprint of the context the key belongs to.
    pub fn fingerprint(&self) -> u64 {
        self.fingerprint
    }

    /// `s` in NTT form over `QP`.
    pub(crate) fn ntt_qp(&self) -> &Poly<Ntt> {
        self.ntt.get()
    }

    /// `s` in NTT form over `Q_l` (a copy, zeroized on drop).
    pub(crate) fn ntt_at(&self, ctx: &RlweContext, level: usize) -> Result<SecretPoly> {
        self.ntt_over(ctx.basis_at(level)?)
    }

    /// `s` in NTT form over `basis`, a prefix of `QP` (`Q_l`, or `Q ∪ {p_0}` of public keys): a copy of
    /// its first limbs, zeroized on drop.
    pub(crate) fn ntt_over(&self, basis: &Arc<RnsBasis>) -> Result<SecretPoly> {
        let data = self.ntt.get().data()[..basis.len() * basis.degree()].to_vec();
        Ok(SecretPoly::new(Poly::from_data(basis, data)?))
    }
}

/// The public key `(b, a) = (-a s + e, a)` in NTT form (RNS-CKKS `KeyGen`), over `Q ∪ {p_0}`
/// ([`KeyGenerator::public_key`], the default) or over the chain `Q` ([`KeyGenerator::public_key_over_q`]).
#[derive(Clone, Debug, PartialEq)]
pub struct PublicKey {
    pub(crate) fingerprint: u64,
    pub(crate) b: Poly<Ntt>,
    pub(crate) a: Poly<Ntt>,
    /// The public seed `a` was expanded from ([`expand_uniform`]), when known: the wire format then
    /// stores 32 bytes instead of `a`.
    pub(crate) seed: Option<Seed>,
    /// Whether the key is over `Q ∪ {p_0}` rather than over `Q` (the bases have no name of their own
    /// without the context).
    pub(crate) extended: bool,
}

impl PublicKey {
    /// `b = -a s + e`.
    pub fn b(&self) -> &Poly<Ntt> {
        &self.b
    }

    /// The uniform `a`.
    pub fn a(&self) -> &Poly<Ntt> {
        &self.a
    }

    /// Fingerprint of the context the key belongs to.
    pub fn fingerprint(&self) -> u64 {
        self.fingerprint
    }

    /// Whether the key is over `Q ∪ {p_0}` (its encryptions are divided by `p_0`,
    /// [`RlweContext::public_key_basis`]) rather than over `Q`
    /// ([`KeyGenerator::public_key_over_q`]).
    pub fn is_extended(&self) -> bool {
        self.extended
    }

    /// The public seed `a` was expanded from, if known (keys from [`KeyGenerator`] always have one).
    pub fn seed(&self) -> Option<&Seed> {
        self.seed.as_ref()
    }
}

/// A key-switching key from a secret `s'` to `s`: the [`GadgetCiphertext`] of `s'` under `s`. The keys
/// of this crate use the context's hybrid gadget (RNS-CKKS `KSGen` generalized to `dnum` digits, Han-Ki
/// Section 2.4): one row `(b_j, a_j)` over `QP` per digit group `j`, `b_j = -a_j s + e_j + [P g_j] s'`;
/// BFV's use its per-limb digit gadgets over `Q` (HPS Section 3.3).
pub type KeySwitchKey = GadgetCiphertext;

/// The relinearization key: a [`KeySwitchKey`] from `s^2` to `s` (RNS-CKKS `evk = KSGen(s^2, s)`).
#[derive(Clone, Debug, PartialEq)]
pub struct RelinKey(pub(crate) KeySwitchKey);

impl RelinKey {
    /// The underlying key-switching key.
    pub fn key(&self) -> &KeySwitchKey {
        &self.0
    }

    /// The underlying key-switching key, by value.
    pub fn into_key(self) -> KeySwitchKey {
        self.0
    }
}

/// Galois keys: for each Galois element `k`, a [`KeySwitchKey`] from `s(X^k)` to `s` (rotation keys
/// `KSGen(kappa_k(s), s)` of the CKKS papers).
#[derive(Clone, Debug, PartialEq)]
pub struct GaloisKeys {
    pub(crate) fingerprint: u64,
    pub(crate) keys: BTreeMap<usize, KeySwitchKey>,
}

impl GaloisKeys {
    /// The key of Galois element `element` (its value, [`GaloisElement::value`]), if generated.
    pub fn get(&self, element: usize) -> Option<&KeySwitchKey> {
        self.keys.get(&element)
    }

    /// The keys by Galois element value, by value.
    pub fn into_keys(self) -> BTreeMap<usize, KeySwitchKey> {
        self.keys
    }

    /// The Galois elements that have keys, in increasing order.
    pub fn elements(&self) -> Vec<usize> {
        self.keys.keys().copied().collect()
    }

    /// Fingerprint of the context the keys belong to.
    pub fn fingerprint(&self) -> u64 {
        self.fingerprint
    }

    /// The key of `element`, or [`Error::MissingGaloisKey`] naming it (and `step` if given).
    pub(crate) fn require(
        &self,
        element: GaloisElement,
        step: Option<i64>,
    ) -> Result<&KeySwitchKey> {
        self.keys
            .get(&element.value())
            .ok_or_else(|| Error::MissingGaloisKey {
                element: element.value(),
                step,
                available: self.elements(),
            })
    }
}

/// Samples keys for one context from one secret key (RNS-CKKS Section 4 `KeyGen`/`KSGen`). All randomness
/// comes from the [`Csprng`] passed to each method.
#[derive(Debug)]
pub struct KeyGenerator {
    ctx: Arc<RlweContext>,
    sk: SecretKey,
}

impl KeyGenerator {
    /// Samples a fresh secret key from the context's distribution.
    pub fn new(ctx: &Arc<RlweContext>, rng: &mut Csprng) -> Result<Self> {
        Ok(Self {
            ctx: Arc::clone(ctx),
            sk: SecretKey::generate(ctx, rng)?,
        })
    }

    /// A generator for an existing secret key.
    ///
    /// Errors: [`Error::ContextMismatch`] if the key belongs to another context.
    pub fn from_secret_key(ctx: &Arc<RlweContext>, sk: SecretKey) -> Result<Self> {
        ctx.check_fingerprint(sk.fingerprint, "secret key")?;
        Ok(Self {
            ctx: Arc::clone(ctx),
            sk,
        })
    }

    /// The secret key.
    pub fn secret_key(&self) -> &SecretKey {
        &self.sk
    }

    /// The context.
    pub fn context(&self) -> &Arc<RlweContext> {
        &self.ctx
    }

    /// A public key `(b, a) = (-a s + e, a)` (RNS-CKKS `KeyGen`) over `Q ∪ {p_0}`
    /// ([`RlweContext::public_key_basis`]): its encryptions are divided by the special prime `p_0`, which
    /// removes the key's error and leaves the rounding error (SEAL's public-key encryption), about 4 bits
    /// more precise at `N = 2^16` for 1 limb more of key and about 1.5 times the encryption time.
    /// [`KeyGenerator::public_key_over_q`] makes the smaller, faster and noisier key.
    pub fn public_key(&self, rng: &mut Csprng) -> Result<PublicKey> {
        self.public_key_over(&self.ctx.public_key_basis()?, rng)
    }

    /// A public key over the chain `Q` only: encryption with it costs 3 transforms per limb instead of
    /// about 5, and its error is the key's `v e + e_0 + e_1 s` (RNS-CKKS `Enc` as written). Prefer
    /// [`KeyGenerator::public_key`] unless encryption time matters more than 4 bits of fresh precision.
    pub fn public_key_over_q(&self, rng: &mut Csprng) -> Result<PublicKey> {
        self.public_key_over(self.ctx.chain(), rng)
    }

    /// `(-a s + e, a)` over `basis`: the chain `Q`, or `Q ∪ {p_0}` whose limbs are the first `L + 1` of
    /// `Q ∪ P` (where the secret is kept in NTT form).
    fn public_key_over(&self, basis: &Arc<RnsBasis>, rng: &mut Csprng) -> Result<PublicKey> {
        let seed = rng.fresh_seed();
        let s = self.sk.ntt_over(basis)?;
        // The public expansion of `a` is one serial stream (wire format): it runs beside the error.
        let (a, b) = parallel::join(
            || expand_uniform(basis, &mut Csprng::from_public_seed(seed)),
            || sample_error(&self.ctx, basis, rng),
        );
        let (a, mut b) = (a?, b?);
        let a_s = SecretPoly::new(a.mul(s.get())?);
        b.sub_assign(a_s.get())?;
        Ok(PublicKey {
            fingerprint: self.ctx.fingerprint(),
            b,
            a,
            seed: Some(seed),
            extended: basis.len() > self.ctx.max_level(),
        })
    }

    /// A key-switching key from `s' = new` (given in NTT form over `QP`) to this generator's `s`: the
    /// gadget ciphertext of `s'` with the context's hybrid gadget.
    fn key_switch_key_ntt(&self, new: &Poly<Ntt>, rng: &mut Csprng) -> Result<KeySwitchKey> {
        GadgetCiphertext::encrypt(
            self.ctx.fingerprint(),
            Gadget::of_context(&self.ctx),
            self.ctx.gaussian(),
            self.sk.ntt_qp(),
            new,
            self.ctx.special_constants(),
            rng,
        )
    }

    /// A key-switching key from the secret `from` to this generator's secret (RNS-CKKS `KSGen(s', s)`).
    ///
    /// Errors: [`Error::ContextMismatch`] if `from` belongs to another context.
    pub fn key_switch_key(&self, from: &SecretKey, rng: &mut Csprng) -> Result<KeySwitchKey> {
        self.ctx
            .check_fingerprint(from.fingerprint, "source secret key")?;
        self.key_switch_key_ntt(from.ntt_qp(), rng)
    }

    /// The relinearization key `KSGen(s^2, s)`.
    pub fn relin_key(&self, rng: &mut Csprng) -> Result<RelinKey> {
        let s = self.sk.ntt_qp();
        let s2 = SecretPoly::new(s.mul(s)?);
        Ok(RelinKey(self.key_switch_key_ntt(s2.get(), rng)?))
    }

    /// The key-switching key from `s(X^k)` to `s` for one Galois element `k`.
    ///
    /// Errors: a ring error if `element` belongs to another ring degree; sampler errors.
    pub fn galois_key(&self, element: GaloisElement, rng: &mut Csprng) -> Result<KeySwitchKey> {
        let perm = self.ctx.galois_permutation(element)?;
        let s = self.sk.ntt_qp();
        let n = self.ctx.n();
        let mut data = vec![0u64; s.data().len()];
        for (dst, src) in data.chunks_exact_mut(n).zip(s.limbs()) {
            for (d, &p) in dst.iter_mut().zip(perm.iter()) {
                *d = src[p];
            }
        }
        let sk = SecretPoly::new(Poly::from_data(s.basis(), data)?);
        self.key_switch_key_ntt(sk.get(), rng)
    }

    /// Galois keys for each of `elements` (duplicates are generated once). The keys are independent, so
    /// they are generated side by side, key `i` (in the order of first appearance) from stream `i` of a
    /// [`Substreams`] drawn from `rng`: the same keys on any number of threads.
    ///
    /// Errors: a ring error if an element belongs to another ring degree; sampler errors.
    pub fn galois_keys(&self, elements: &[GaloisElement], rng: &mut Csprng) -> Result<GaloisKeys> {
        let mut unique: Vec<(u64, GaloisElement)> = Vec::with_capacity(elements.len());
        for &k in elements {
            if !unique.iter().any(|(_, u)| u.value() == k.value()) {
                unique.push((unique.len() as u64, k));
            }
        }
        let streams = Substreams::new(rng);
        let generated = parallel::map(&unique, &|&(i, k)| {
            self.galois_key(k, &mut streams.stream(i))
        });
        let mut keys = BTreeMap::new();
        for ((_, k), key) in unique.iter().zip(generated) {
            keys.insert(k.value(), key?);
        }
        Ok(GaloisKeys {
            fingerprint: self.ctx.fingerprint(),
            keys,
        })
    }

    /// Galois keys for the rotations of `group` by `steps` ([`GaloisGroup::element_of_step`]) and, if
    /// `conjugate`, for its conjugation ([`GaloisGroup::conjugation`]).
    ///
    /// Errors: a ring error if `group` belongs to another ring degree; sampler errors.
    pub fn galois_keys_for_steps(
        &self,
        group: &GaloisGroup,
        steps: &[i64],
        conjugate: bool,
        rng: &mut Csprng,
    ) -> Result<GaloisKeys> {
        let mut elements = group.elements_of_steps(steps);
        if conjugate {
            elements.push(group.conjugation());
        }
        self.galois_keys(&elements, rng)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use crate::context::RlweParams;
    use crate::encryption::{Decryptor, Encryptor};
    use rnsfhe_math::primes::ntt_primes_of_bits;

    fn small_ctx(secret: SecretDistribution) -> Arc<RlweContext> {
        let q = ntt_primes_of_bits(50, 2048, 2, &[]).unwrap();
        let p = ntt_primes_of_bits(60, 2048, 1, &[]).unwrap();
        RlweContext::new(RlweParams {
            log_n: 10,
            q_moduli: q,
            p_moduli: p,
            dnum: 2,
            conversion: rnsfhe_ring::ConversionMode::Fast,
            secret,
            sigma: 3.2,
        })
        .unwrap()
    }

    /// Debug output of every type holding the secret key shows no coefficient: neither the signed
    /// coefficients (as `{:?}` of a slice would print them) nor any residue of its NTT form.
    #[test]
    fn secret_holders_debug_is_redacted() {
        let ctx = small_ctx(SecretDistribution::Ternary);
        let mut rng = Csprng::insecure_from_seed_for_tests([5; 32]);
        let kg = KeyGenerator::new(&ctx, &mut rng).unwrap();
        let sk = kg.secret_key().clone();
        let coeffs = format!("{:?}", &sk.coefficients()[..6]);
        let coeffs = coeffs.trim_matches(|c| c == '[' || c == ']');
        let residues: Vec<String> = sk.ntt_qp().data()[..32]
            .iter()
            .filter(|&&r| r > 1_000_000)
            .map(|r| r.to_string())
            .collect();
        assert!(!residues.is_empty());
        let outputs = [
            format!("{sk:?}"),
            format!("{sk:#?}"),
            format!("{kg:?}"),
            format!("{:?}", Decryptor::new(&ctx, &sk).unwrap()),
            format!("{:?}", Encryptor::with_secret_key(&ctx, &sk).unwrap()),
            format!("{:?}", sk.ntt_at(&ctx, 2).unwrap()),
        ];
        assert_eq!(outputs[0], "SecretKey { <redacted> }");
        for out in &outputs {
            assert!(out.contains("<redacted>"), "{out}");
            assert!(!out.contains(coeffs), "coefficients {coeffs} in {out}");
            for r in &residues {
                assert!(!out.contains(r.as_str()), "NTT residue {r} in the output");
            }
        }
    }

    #[test]
    fn secret_key_checks_and_weight() {
        let ctx = small_ctx(SecretDistribution::HammingWeight(64));
        let mut rng = Csprng::insecure_from_seed_for_tests([6; 32]);
        let sk = SecretKey::generate(&ctx, &mut rng).unwrap();
        assert_eq!(sk.hamming_weight(), 64);
        assert_eq!(
            sk.hamming_weight(),
            sk.coefficients().iter().filter(|&&c| c != 0).count()
        );
        let mut bad = vec![0i64; 1024];
        for (pos, value) in [(3usize, 2i64), (1023, -2), (0, i64::MIN), (7, i64::MAX)] {
            bad.fill(1);
            bad[pos] = value;
            match SecretKey::from_coefficients(&ctx, &bad) {
                Err(Error::InvalidParams { reason, .. }) => {
                    assert!(reason.contains(&format!("coefficient {pos} ")), "{reason}")
                }
                other => panic!("unexpected {other:?}"),
            }
        }
        bad.fill(-1);
        assert_eq!(
            SecretKey::from_coefficients(&ctx, &bad)
                .unwrap()
                .hamming_weight(),
            1024
        );
    }
}
