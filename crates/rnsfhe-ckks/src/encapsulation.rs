//! Sparse-secret encapsulation (Bossuat, Troncoso-Pastoriza, Hubaux, "Bootstrapping for approximate
//! homomorphic encryption with negligible failure-probability by using sparse-secret encapsulation",
//! ACNS 2022): the modulus raise of a ciphertext over `q_0` under a **sparse** secret.
//!
//! Raising `(c_0, c_1)` from `q_0` to a higher level adds `q_0 I` to the plaintext with
//! `I = round((c_0 + c_1 s) / q_0)` ([`crate::mod_raise`]), whose coefficients have a standard
//! deviation of `sqrt((1 + ||s||^2) / 12)`: about 60 for a dense ternary secret of degree `2^16`, 2.3
//! for a Hamming weight of 64. The approximate reduction modulo `q_0` ([`crate::eval_mod`]: PEGASUS's
//! F_mod, bootstrapping's EvalMod) grows in cost and error with the bound `K` on `|I|` (each doubling
//! of `K` costs a double angle, which multiplies the noise by 4). The encapsulation switches the
//! ciphertext, while it is over `q_0` alone, to a sparse secret `s'` of Hamming weight `h` (one key
//! switch in a context over `q_0 P` only), raises it there, and switches it back to the CKKS secret at
//! the target level (one key switch): `I` then has the small deviation `sqrt((1 + h) / 12)` whatever
//! the CKKS secret is.
//!
//! Both key switches add their noise to the plaintext **before** the reduction modulo `q_0`, as a
//! coefficient error: `e / q_0` in the units `t = c / q_0` EvalMod works in, where `q_0 / P` (the low
//! key, about `2^10`) and the top level's key-switching noise are far below the rounding noise the
//! later steps add ([`crate::Bootstrapper::error_bound`] counts them).
//!
//! **Security.** The key from `s` to `s'` is RLWE under the sparse `s'`, but only over `q_0 P` (about
//! 110 bits), where a sparse secret is safe; [`SparseEncapsulation::security`] gives the estimator's
//! figure and generation refuses less than [`MIN_SECURITY_BITS`] without the explicit opt-in. The key
//! back, from `s'` to `s`, is an ordinary key of the CKKS context (RLWE under the CKKS secret).

use std::sync::Arc;

use rnsfhe_core::lwe_estimator::{estimate_rlwe, LweEstimate};
use rnsfhe_core::{
    ConversionMode, KeyGenerator, KeySwitchKey, RlweCiphertext, RlweContext, RlweParams,
    SecretDistribution, SecretKey,
};
use rnsfhe_math::primes::ntt_primes_of_bits;
use rnsfhe_math::sampling::Csprng;
use rnsfhe_ring::{Coeff, Poly};

use crate::context::CkksContext;
use crate::error::{Error, Result};
use crate::evaluator::Evaluator;
use crate::plaintext::Ciphertext;

/// Hamming weight of the sparse secret by default: `I` then has a standard deviation of
/// `sqrt(33 / 12) = 1.7` (`K = 12` at 7 standard deviations), and the key to it is far above 128
/// bits over `q_0 P` at `N >= 2^15`.
pub const DEFAULT_SPARSE_WEIGHT: usize = 32;

/// The lattice estimate below which [`SparseEncapsulation::generate`] refuses the key to the sparse
/// secret without the explicit opt-in: 128 bits.
pub const MIN_SECURITY_BITS: f64 = 128.0;

/// Bits of the special prime of the encapsulation context (below `2^50`: the vector NTT path).
const SPECIAL_BITS: u32 = 50;

const WHAT: &str = "sparse-secret encapsulation key";

/// The two keys of the encapsulation for one CKKS context and secret.
#[derive(Clone, Debug)]
pub struct SparseEncapsulation {
    low: Arc<RlweContext>,
    to_sparse: KeySwitchKey,
    to_dense: KeySwitchKey,
    weight: usize,
}

impl SparseEncapsulation {
    /// The context of the key to the sparse secret: `Q = {q_0}`, one special prime of 50 bits, a
    /// Hamming-weight-`weight` secret, the CKKS error width.
    ///
    /// Errors: [`Error::Math`] if no special prime exists; [`Error::Core`] for a context the core
    /// refuses (a weight of 0 or above `N`).
    pub fn low_context(ckks: &CkksContext, weight: usize) -> Result<Arc<RlweContext>> {
        let rlwe = ckks.rlwe();
        let q0 = rlwe.chain().moduli()[0].value();
        let two_n = 2 * rlwe.n() as u64;
        let special = ntt_primes_of_bits(SPECIAL_BITS, two_n, 1, &[q0])?[0];
        Ok(RlweContext::new(RlweParams {
            log_n: rlwe.params().log_n,
            q_moduli: vec![q0],
            p_moduli: vec![special],
            dnum: 1,
            conversion: ConversionMode::ExactFloat,
            secret: SecretDistribution::HammingWeight(weight),
            sigma: rlwe.params().sigma,
        })?)
    }

    /// The estimate of the key to the sparse secret: RLWE of degree `N` over `q_0 P` under a secret of
    /// Hamming weight `weight`.
    ///
    /// Errors: as [`SparseEncapsulation::low_context`]; [`Error::InvalidParams`] if the estimator
    /// rejects the parameters.
    pub fn security(ckks: &CkksContext, weight: usize) -> Result<LweEstimate> {
        let low = Self::low_context(ckks, weight)?;
        let log_q = low.extended_basis().log2_product();
        estimate_rlwe(low.n(), log_q, low.params().sigma, low.params().secret).map_err(|e| {
            Error::InvalidParams {
                what: WHAT,
                reason: e.to_string(),
            }
        })
    }

    /// Makes a sparse secret of Hamming weight `weight` and the two keys for the CKKS secret `sk`;
    /// refuses a key to the sparse secret below [`MIN_SECURITY_BITS`] unless `allow_insecure`.
    ///
    /// Errors: [`Error::InsecureKey`]; as [`SparseEncapsulation::low_context`]; [`Error::Core`] for a
    /// secret key of another context.
    pub fn generate(
        ckks: &CkksContext,
        sk: &SecretKey,
        weight: usize,
        allow_insecure: bool,
        rng: &mut Csprng,
    ) -> Result<Self> {
        let low = Self::low_context(ckks, weight)?;
        if !allow_insecure {
            let bits = Self::security(ckks, weight)?.security_bits();
            if bits < MIN_SECURITY_BITS {
                return Err(Error::InsecureKey {
                    what: WHAT,
                    bits,
                    minimum: MIN_SECURITY_BITS,
                });
            }
        }
        let sparse = SecretKey::generate(&low, rng)?;
        let dense_low = SecretKey::from_coefficients(&low, sk.coefficients())?;
        let to_sparse =
            KeyGenerator::from_secret_key(&low, sparse.clone())?.key_switch_key(&dense_low, rng)?;
        let sparse_high = SecretKey::from_coefficients(ckks.rlwe(), sparse.coefficients())?;
        let to_dense = KeyGenerator::from_secret_key(ckks.rlwe(), sk.clone())?
            .key_switch_key(&sparse_high, rng)?;
        Ok(Self {
            low,
            to_sparse,
            to_dense,
            weight,
        })
    }

    /// The encapsulation of weight `weight` for `ckks` from its two keys (as a reader of a wire format
    /// gets them: `to_sparse` in [`SparseEncapsulation::low_context`], `to_dense` in the CKKS context).
    ///
    /// Errors: as [`SparseEncapsulation::low_context`]; [`Error::ContextMismatch`] for keys of other
    /// contexts.
    pub fn from_keys(
        ckks: &CkksContext,
        weight: usize,
        to_sparse: KeySwitchKey,
        to_dense: KeySwitchKey,
    ) -> Result<Self> {
        let low = Self::low_context(ckks, weight)?;
        check_key_context(low.fingerprint(), &to_sparse, "key to the sparse secret")?;
        ckks.check_fingerprint(to_dense.fingerprint(), "key back to the CKKS secret")?;
        Ok(Self {
            low,
            to_sparse,
            to_dense,
            weight,
        })
    }

    /// The key to the sparse secret, in [`SparseEncapsulation::low_context`].
    pub fn to_sparse_key(&self) -> &KeySwitchKey {
        &self.to_sparse
    }

    /// The key back to the CKKS secret, in the CKKS context.
    pub fn to_dense_key(&self) -> &KeySwitchKey {
        &self.to_dense
    }

    /// The bytes of the two keys as the core encodes them ([`KeySwitchKey::wire_size`]); the wire
    /// object ([`crate::serialization::kinds::ENCAPSULATION_KEYS`]) adds the 4-byte weight and the
    /// header.
    pub fn keys_wire_size(&self, randomness: rnsfhe_math::wire::PublicRandomness) -> u64 {
        self.to_sparse.wire_size(randomness) + self.to_dense.wire_size(randomness)
    }

    /// The Hamming weight `h` of the sparse secret (the squared norm behind the integer parts `I`).
    pub fn weight(&self) -> usize {
        self.weight
    }

    /// The standard deviation of one coefficient of the noise the key switch to the sparse secret of
    /// weight `weight` adds over `q_0` ([`RlweContext::key_switch_noise`] of
    /// [`SparseEncapsulation::low_context`]); the key switch back is an ordinary one of the CKKS
    /// context at the level of the raise.
    ///
    /// Errors: as [`SparseEncapsulation::low_context`].
    pub fn low_key_switch_noise(ckks: &CkksContext, weight: usize) -> Result<f64> {
        Ok(Self::low_context(ckks, weight)?
            .key_switch_noise(1, weight)?
            .std_dev)
    }

    /// `ct` (two parts over `q_0` in coefficient form, under the CKKS secret, from any context whose
    /// first prime is `q_0`) raised to `level` of the CKKS chain under the CKKS secret, with `scale` and
    /// `slots`: the plaintext gains `q_0 I` with `I` of the sparse secret's size (see the [module
    /// documentation](self)).
    ///
    /// Errors: [`Error::InvalidArgument`] for a ciphertext over another modulus or degree;
    /// [`Error::ContextMismatch`] for an evaluator of another context; errors of the raise and the key
    /// switches.
    pub fn raise(
        &self,
        eval: &Evaluator,
        ct: &RlweCiphertext<Coeff>,
        scale: f64,
        slots: usize,
        level: usize,
    ) -> Result<Ciphertext> {
        let ctx: &Arc<CkksContext> = eval.context();
        ctx.check_fingerprint(
            self.to_dense.fingerprint(),
            "sparse-secret encapsulation key",
        )?;
        let low_basis = self.low.basis_at(1)?;
        if ct.parts.len() != 2
            || ct.parts.iter().any(|p| {
                p.limb_count() != 1
                    || p.degree() != ctx.n()
                    || p.basis().moduli()[0].value() != low_basis.moduli()[0].value()
            })
        {
            return Err(Error::InvalidArgument {
                operation: "sparse-secret encapsulation",
                reason:
                    "the ciphertext to raise must have two parts over q_0 alone, of the CKKS ring \
                         degree"
                        .into(),
            });
        }
        // Under the sparse secret, still over q_0.
        let rebased = |p: &Poly<Coeff>| Poly::from_data(low_basis, p.data().to_vec());
        let c0 = rebased(&ct.parts[0])?.into_ntt();
        let c1 = rebased(&ct.parts[1])?.into_ntt();
        let (u0, u1) = self.low.key_switch(&c1, &self.to_sparse)?;
        let sparse = RlweCiphertext {
            parts: vec![c0.add(&u0)?.into_coeff(), u1.into_coeff()],
        };
        let low = ciphertext_at_q0(ctx, &sparse, scale, slots)?;
        let raised = eval.mod_raise(&low, level)?.into_inner();
        // Back to the CKKS secret at the target level.
        let (u0, u1) = ctx.rlwe().key_switch(&raised.parts[1], &self.to_dense)?;
        let parts = vec![raised.parts[0].add(&u0)?, u1];
        Ciphertext::new(ctx, RlweCiphertext { parts }, scale, slots)
    }

    /// [`SparseEncapsulation::raise`] of a CKKS ciphertext of the evaluator's context at level 1 (the
    /// raise of bootstrapping), keeping its scale and slot count.
    ///
    /// Errors: [`Error::InvalidArgument`] unless `ct` has two parts at level 1; as
    /// [`SparseEncapsulation::raise`].
    pub fn raise_ciphertext(
        &self,
        eval: &Evaluator,
        ct: &Ciphertext,
        level: usize,
    ) -> Result<Ciphertext> {
        if ct.level() != 1 || ct.part_count() != 2 {
            return Err(Error::InvalidArgument {
                operation: "sparse-secret encapsulation",
                reason: format!(
                    "the ciphertext must be at level 1 (q_0 alone) with 2 parts; it is at level {} with \
                     {} parts (drop it to level 1, relinearize first)",
                    ct.level(),
                    ct.part_count()
                ),
            });
        }
        let parts = ct
            .inner()
            .parts
            .iter()
            .map(|p| p.clone().into_coeff())
            .collect();
        self.raise(
            eval,
            &RlweCiphertext { parts },
            ct.scale(),
            ct.slots(),
            level,
        )
    }
}

/// [`Error::ContextMismatch`] unless `key` belongs to the context of fingerprint `expected`.
fn check_key_context(expected: u64, key: &KeySwitchKey, what: &'static str) -> Result<()> {
    if key.fingerprint() == expected {
        Ok(())
    } else {
        Err(Error::ContextMismatch {
            object: what,
            expected,
            got: key.fingerprint(),
        })
    }
}

/// A 2-part RLWE ciphertext over `q_0` in coefficient form, from any context whose first prime is `q_0`
/// (PEGASUS's packing context, the encapsulation context), read as a CKKS ciphertext of `ctx` at level
/// 1 with `scale` and `slots`: the same residues in the CKKS chain's basis.
///
/// Errors: [`Error::Ring`] for parts of another degree or limb count; as [`Ciphertext::new`].
pub fn ciphertext_at_q0(
    ctx: &Arc<CkksContext>,
    ct: &RlweCiphertext<Coeff>,
    scale: f64,
    slots: usize,
) -> Result<Ciphertext> {
    let basis = ctx.rlwe().basis_at(1)?;
    let parts = ct
        .parts
        .iter()
        .map(|p| Ok(Poly::from_data(basis, p.data().to_vec())?.into_ntt()))
        .collect::<Result<Vec<_>>>()?;
    Ciphertext::new(ctx, RlweCiphertext { parts }, scale, slots)
}
