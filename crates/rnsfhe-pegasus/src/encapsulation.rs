//! Sparse-secret encapsulation (Bossuat, Troncoso-Pastoriza, Hubaux, "Bootstrapping for approximate
//! homomorphic encryption with negligible failure-probability by using sparse-secret encapsulation",
//! ACNS 2022): the modulus raise of a ciphertext over `q_0` under a **sparse** secret.
//!
//! Raising `(c_0, c_1)` from `q_0` to the top of the chain adds `q_0 I` to the plaintext with
//! `I = round((c_0 + c_1 s) / q_0)` ([`rnsfhe_ckks::mod_raise`]), whose coefficients have a standard
//! deviation of `sqrt((1 + ||s||^2) / 12)`: about 60 for a dense ternary secret of degree `2^16`, 2.3 for
//! PEGASUS's `h = 64`. F_mod's cost and error grow with that bound (each doubling of `K` costs a
//! double angle, which multiplies the noise by 4). The encapsulation switches the ciphertext, while it is
//! over `q_0` alone, to a sparse secret `s'` of Hamming weight `h` (one key switch in a context over
//! `q_0 P` only), raises it there, and switches it back to the CKKS secret at the top of the chain (one
//! key switch): `I` then has the small deviation `sqrt((1 + h) / 12)` whatever the CKKS secret is.
//!
//! **Security.** The key from `s` to `s'` is RLWE under the sparse `s'`, but only over `q_0 P` (about 95
//! bits at `N = 2^16`), where a sparse secret is safe; [`SparseEncapsulation::security`] gives the
//! estimator's figure and generation refuses less than 128 bits without the explicit opt-in. The key
//! back, from `s'` to `s`, is an ordinary key of the CKKS context (RLWE under the CKKS secret).

use std::sync::Arc;

use rnsfhe_ckks::{Ciphertext, CkksContext, Csprng, Evaluator};
use rnsfhe_core::lwe_estimator::{estimate_rlwe, LweEstimate};
use rnsfhe_core::{
    ConversionMode, KeyGenerator, KeySwitchKey, RlweCiphertext, RlweContext, RlweParams,
    SecretDistribution, SecretKey,
};
use rnsfhe_lwe::{LweError, MIN_SECURITY_BITS};
use rnsfhe_math::primes::ntt_primes_of_bits;
use rnsfhe_ring::{Coeff, Poly};

use crate::error::{PegasusError, PegasusResult};

/// Hamming weight of the sparse secret by default: `I` then has a standard deviation of
/// `sqrt(33 / 12) = 1.7`, and the key to it is far above 128 bits over `q_0 P` at `N = 2^16`.
pub const DEFAULT_SPARSE_WEIGHT: usize = 32;

/// Bits of the special prime of the encapsulation context (below `2^50`: the vector NTT path).
const SPECIAL_BITS: u32 = 50;

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
    /// Errors: [`PegasusError::Math`] if no special prime exists; [`PegasusError::Core`] for a context
    /// the core refuses (a weight of 0 or above `N`).
    pub fn low_context(ckks: &CkksContext, weight: usize) -> PegasusResult<Arc<RlweContext>> {
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
    /// Errors: as [`SparseEncapsulation::low_context`]; [`PegasusError::InvalidParams`] if the estimator
    /// rejects the parameters.
    pub fn security(ckks: &CkksContext, weight: usize) -> PegasusResult<LweEstimate> {
        let low = Self::low_context(ckks, weight)?;
        let log_q = low.extended_basis().log2_product();
        estimate_rlwe(low.n(), log_q, low.params().sigma, low.params().secret).map_err(|e| {
            PegasusError::InvalidParams {
                what: "sparse-secret encapsulation key",
                reason: e.to_string(),
            }
        })
    }

    /// Makes a sparse secret of Hamming weight `weight` and the two keys for the CKKS secret `sk`;
    /// refuses a key to the sparse secret below 128 bits unless `allow_insecure`.
    ///
    /// Errors: [`PegasusError::Lwe`] with [`LweError::Insecure`]; as
    /// [`SparseEncapsulation::low_context`]; [`PegasusError::Core`] for a secret key of another context.
    pub fn generate(
        ckks: &CkksContext,
        sk: &SecretKey,
        weight: usize,
        allow_insecure: bool,
        rng: &mut Csprng,
    ) -> PegasusResult<Self> {
        let low = Self::low_context(ckks, weight)?;
        if !allow_insecure {
            let bits = Self::security(ckks, weight)?.security_bits();
            if bits < MIN_SECURITY_BITS {
                return Err(LweError::Insecure {
                    what: "sparse-secret encapsulation key",
                    bits,
                }
                .into());
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

    /// The key to the sparse secret (in the low context) and the key back to the CKKS secret: what
    /// the wire carries.
    pub(crate) fn keys(&self) -> (&KeySwitchKey, &KeySwitchKey) {
        (&self.to_sparse, &self.to_dense)
    }

    /// The encapsulation of weight `weight` for `ckks` from keys loaded from the wire (read in
    /// [`SparseEncapsulation::low_context`] and in the CKKS context).
    ///
    /// Errors: as [`SparseEncapsulation::low_context`].
    pub(crate) fn from_wire(
        ckks: &CkksContext,
        weight: usize,
        to_sparse: KeySwitchKey,
        to_dense: KeySwitchKey,
    ) -> PegasusResult<Self> {
        Ok(Self {
            low: Self::low_context(ckks, weight)?,
            to_sparse,
            to_dense,
            weight,
        })
    }

    /// The Hamming weight `h` of the sparse secret (the squared norm behind the integer parts `I`).
    pub fn weight(&self) -> usize {
        self.weight
    }

    /// `ct` (two parts over `q_0` in coefficient form, under the CKKS secret, from any context whose
    /// first prime is `q_0`) raised to `level` of the CKKS chain under the CKKS secret, with `scale` and
    /// `slots`: the plaintext gains `q_0 I` with `I` of the sparse secret's size (see the [module
    /// documentation](self)).
    ///
    /// Errors: [`PegasusError::InvalidParams`] for a ciphertext over another modulus or degree;
    /// CKKS and core errors of the raise and the key switches.
    pub fn raise(
        &self,
        eval: &Evaluator,
        ct: &RlweCiphertext<Coeff>,
        scale: f64,
        slots: usize,
        level: usize,
    ) -> PegasusResult<Ciphertext> {
        let ctx: &Arc<CkksContext> = eval.context();
        let low_basis = self.low.basis_at(1)?;
        if ct.parts.len() != 2
            || ct.parts.iter().any(|p| {
                p.limb_count() != 1
                    || p.degree() != ctx.n()
                    || p.basis().moduli()[0].value() != low_basis.moduli()[0].value()
            })
        {
            return Err(PegasusError::InvalidParams {
                what: "ciphertext to raise",
                reason: "it must have two parts over q_0 alone, of the CKKS ring degree".into(),
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
        // Back to the CKKS secret at the top.
        let (u0, u1) = ctx.rlwe().key_switch(&raised.parts[1], &self.to_dense)?;
        let parts = vec![raised.parts[0].add(&u0)?, u1];
        Ok(Ciphertext::new(
            ctx,
            RlweCiphertext { parts },
            scale,
            slots,
        )?)
    }
}

/// A 2-part RLWE ciphertext over `q_0` in coefficient form, from any context whose first prime is `q_0`
/// (the packing and encapsulation contexts), read as a CKKS ciphertext of `ctx` at level 1 with `scale`
/// and `slots`: the same residues in the CKKS chain's basis.
pub(crate) fn ciphertext_at_q0(
    ctx: &Arc<CkksContext>,
    ct: &RlweCiphertext<Coeff>,
    scale: f64,
    slots: usize,
) -> PegasusResult<Ciphertext> {
    let basis = ctx.rlwe().basis_at(1)?;
    let parts = ct
        .parts
        .iter()
        .map(|p| Ok(Poly::from_data(basis, p.data().to_vec())?.into_ntt()))
        .collect::<PegasusResult<Vec<_>>>()?;
    Ok(Ciphertext::new(
        ctx,
        RlweCiphertext { parts },
        scale,
        slots,
    )?)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::params::PipelinePreset;

    #[test]
    fn the_key_to_the_sparse_secret_is_secure_at_the_pipeline_sizes() {
        let params = PipelinePreset::Secure128.params().unwrap();
        let bits = SparseEncapsulation::security(&params.ckks, DEFAULT_SPARSE_WEIGHT)
            .unwrap()
            .security_bits();
        eprintln!("sparse-secret encapsulation key at Secure128: {bits:.1} bits");
        assert!(bits >= MIN_SECURITY_BITS, "{bits}");
        // The estimator's figure falls with the weight: a weight of 1 is refused.
        let test = PipelinePreset::InsecureTest.params().unwrap();
        let mut rng = Csprng::insecure_from_seed_for_tests([3; 32]);
        let keygen = rnsfhe_ckks::KeyGenerator::new(&test.ckks, &mut rng).unwrap();
        let err =
            SparseEncapsulation::generate(&test.ckks, keygen.secret_key(), 1, false, &mut rng)
                .unwrap_err();
        assert!(err.to_string().contains("bits"), "{err}");
    }
}
