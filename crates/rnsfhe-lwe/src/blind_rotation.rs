//! Blind rotation: `X^(b~ + <a~, s>)` times a table polynomial, computed under RGSW encryptions of the LWE
//! key (PEGASUS Fig. 2 steps 3-6, after Micciancio and Polyakov's ternary-key variant of FHEW).
//!
//! For an LWE ciphertext `(b~, a~)` modulo `2n` (the ring degree `n`), the accumulator starts as the
//! trivial encryption of `f X^b~` and absorbs one key coefficient at a time: with
//! `EK_{j,0} = RGSW(I(s_j >= 0))` and `EK_{j,1} = RGSW(I(s_j <= 0))`,
//!
//! ```text
//! t_j      = ((X^(a~_j) - 1) AC_j) ⊙ EK_{j,0} + AC_j,
//! AC_{j+1} = ((X^(-a~_j) - 1) t_j) ⊙ EK_{j,1} + t_j,
//! ```
//!
//! which multiplies the accumulator by `X^(a~_j s_j)` for `s_j` in `{-1, 0, 1}` (PEGASUS Appendix B, proof
//! of Theorem 1). After `n_lwe` steps it encrypts `f X^(b~ + <a~, s>)`. The accumulator stays in
//! coefficient form, where the monomial products are rotations; each external product is one sum of two
//! hybrid gadget products ([`rnsfhe_core::RlweContext::external_product`]).

use std::sync::Arc;

use rnsfhe_core::{RgswCiphertext, RlweCiphertext, RlweContext, SecretDistribution, SecretKey};
use rnsfhe_math::sampling::Csprng;
use rnsfhe_ring::{Coeff, Poly};

use crate::ciphertext::LweCiphertext;
use crate::dimension::LweDimension;
use crate::error::{LweError, LweResult};
use crate::secret::LweSecretKey;

/// The blind-rotation algorithm, chosen with the key (OpenFHE's explicit choice of technique).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum BlindRotation {
    /// PEGASUS Fig. 2 (Micciancio-Polyakov's ternary variant): `RGSW(I(s_j >= 0))` and
    /// `RGSW(I(s_j <= 0))` per coefficient, two external products each; any ternary LWE key.
    #[default]
    Ternary,
    /// The binary-key form (FHEW / CGGI): `RGSW(s_j)` per coefficient and one external product
    /// `AC + ((X^(a_j) - 1) AC) ⊙ RGSW(s_j)`, half the work; the LWE key must be binary (PEGASUS Section
    /// VI.B: "the performance of our LUT evaluation would be accelerated by 2x").
    Binary,
}

/// The variance one external product of the accumulator ring `ctx` adds, as its two terms `(key, rounding)`:
/// the key errors through the special modulus, `n q_0^2 sigma^2 / (6 q'^2)` for an input of uniform
/// residues, and ModDown's roundings, `(1 + ||s||^2) / 12` (see [`BlindRotationKey::added_variance`]).
pub(crate) fn external_product_variance(ctx: &RlweContext) -> (f64, f64) {
    let params = ctx.params();
    let n = ctx.n() as f64;
    let q0 = ctx.chain().moduli()[0].value() as f64;
    let special = ctx.special_basis().moduli()[0].value() as f64;
    let norm_sq = match params.secret {
        SecretDistribution::HammingWeight(h) => h as f64,
        SecretDistribution::Ternary => 2.0 * n / 3.0,
    };
    let key = n * q0 * q0 * params.sigma * params.sigma / (6.0 * special * special);
    (key, (1.0 + norm_sq) / 12.0)
}

/// The blind-rotation (evaluation) key of PEGASUS Fig. 2 and Fig. 6 under the ring secret of the
/// look-up-table context: per coefficient `s_j` of the LWE secret, `RGSW(I(s_j >= 0))` and
/// `RGSW(I(s_j <= 0))` (`EK_{j,0}`, `EK_{j,1}`; [`BlindRotation::Ternary`]) or `RGSW(s_j)`
/// ([`BlindRotation::Binary`]).
#[derive(Clone, Debug)]
pub struct BlindRotationKey {
    ctx: Arc<RlweContext>,
    lwe_dimension: LweDimension,
    algorithm: BlindRotation,
    /// Per LWE coefficient, the RGSW ciphertexts its step multiplies by, in order.
    keys: Vec<Vec<RgswCiphertext>>,
}

impl BlindRotationKey {
    /// The ternary key of PEGASUS Fig. 2 ([`BlindRotationKey::generate_with`] and
    /// [`BlindRotation::Ternary`]).
    ///
    /// Errors: as [`BlindRotationKey::generate_with`].
    pub fn generate(
        ctx: &Arc<RlweContext>,
        ring_sk: &SecretKey,
        lwe_sk: &LweSecretKey,
        rng: &mut Csprng,
    ) -> LweResult<Self> {
        Self::generate_with(BlindRotation::Ternary, ctx, ring_sk, lwe_sk, rng)
    }

    /// Encrypts the key material `algorithm` needs for every coefficient of `lwe_sk` under `ring_sk` (a
    /// key of `ctx`, the ring of degree `n` over `q_0` with the special modulus `q'` and the error width
    /// `sigma_lut` of PEGASUS Table IV).
    ///
    /// Errors: [`LweError::InvalidParams`] for [`BlindRotation::Binary`] with a key that is not binary;
    /// [`LweError::Core`] for a ring key of another context; sampler errors.
    pub fn generate_with(
        algorithm: BlindRotation,
        ctx: &Arc<RlweContext>,
        ring_sk: &SecretKey,
        lwe_sk: &LweSecretKey,
        rng: &mut Csprng,
    ) -> LweResult<Self> {
        let coeffs = lwe_sk.coefficients();
        if algorithm == BlindRotation::Binary && coeffs.iter().any(|&s| !(0..=1).contains(&s)) {
            return Err(LweError::InvalidParams {
                what: "LWE secret key",
                reason:
                    "binary blind rotation needs a key in {0, 1}^n (LweSecretKey::generate_binary)"
                        .into(),
            });
        }
        let keys = coeffs
            .iter()
            .map(|&s| {
                let bits = match algorithm {
                    // I(s >= 0) and I(s <= 0) for s in {-1, 0, 1}, without a branch on the key.
                    BlindRotation::Ternary => {
                        vec![(s + 1) >> 1 | (s + 1) & 1, (1 - s) >> 1 | (1 - s) & 1]
                    }
                    BlindRotation::Binary => vec![s],
                };
                bits.into_iter()
                    .map(|bit| Ok(RgswCiphertext::encrypt_scalar(ctx, ring_sk, bit, rng)?))
                    .collect::<LweResult<Vec<_>>>()
            })
            .collect::<LweResult<Vec<_>>>()?;
        Ok(Self {
            ctx: Arc::clone(ctx),
            lwe_dimension: lwe_sk.dimension(),
            algorithm,
            keys,
        })
    }

    /// The algorithm the key was made for.
    pub fn algorithm(&self) -> BlindRotation {
        self.algorithm
    }

    /// The ring context of the accumulator.
    pub fn context(&self) -> &Arc<RlweContext> {
        &self.ctx
    }

    /// The dimension of the LWE ciphertexts it rotates by.
    pub fn lwe_dimension(&self) -> LweDimension {
        self.lwe_dimension
    }

    /// The variance of the error blind rotation adds for a ciphertext (modulo `2n`) whose mask has `k`
    /// nonzero coefficients (the others skip their external products: two each for the ternary
    /// algorithm, one for the binary one). Each external product
    /// `(d_0, d_1) ⊙ RGSW(m)` adds `(1/q') (d~_0 e_0 + d~_1 e_1) + r_0 + r_1 s`: the centered lifts `d~_i`
    /// of uniform residues modulo `q_0` (variance `q_0^2 / 12`) times the key errors (`sigma_lut^2`, `n`
    /// terms per coefficient), divided by `q'`, and ModDown's roundings (variance `1/12` each, `||s||^2`
    /// terms in `r_1 s`): `n q_0^2 sigma^2 / (6 q'^2) + (1 + ||s||^2) / 12`. The accumulator's earlier
    /// error passes through unchanged in variance (a monomial times it, PEGASUS Appendix B), so the
    /// errors add up over the `2k` products; the first one, on the trivial accumulator `(f X^b, 0)`, has
    /// no uniform input and adds only its roundings. PEGASUS Appendix C.2 gives `4 n_lwe q_0
    /// sigma_lut^2 / q'` instead, which leaves the roundings out (they dominate when `q'` is much larger
    /// than `q_0`) and scales the key term differently; the tests measure this formula within 10 %.
    /// `||s||^2` is the Hamming weight of a fixed-weight ring secret and `2n/3` on average for a uniform
    /// ternary one.
    pub fn added_variance(&self, nonzero: usize) -> f64 {
        if nonzero == 0 {
            return 0.0;
        }
        let (key, rounding) = external_product_variance(&self.ctx);
        let products = match self.algorithm {
            BlindRotation::Ternary => 2 * nonzero,
            BlindRotation::Binary => nonzero,
        };
        products as f64 * (key + rounding) - key
    }

    /// Blind rotation of `table` (coefficient form over `q_0`, the context's first prime) by the LWE
    /// ciphertext `ct` modulo `2n`: the RLWE ciphertext (coefficient form, over `q_0`) of
    /// `table X^(b + <a, s>)` under the ring secret (see the module documentation).
    ///
    /// Errors: [`LweError::DimensionMismatch`] / [`LweError::ModulusMismatch`] for a ciphertext of
    /// another dimension or not modulo `2n`; ring errors for a table over another basis.
    pub fn rotate(
        &self,
        table: &Poly<Coeff>,
        ct: &LweCiphertext,
    ) -> LweResult<RlweCiphertext<Coeff>> {
        self.lwe_dimension
            .check_same(ct.dimension(), "blind rotation")?;
        let two_n = 2 * self.ctx.n() as u64;
        if ct.modulus().value() != two_n {
            return Err(LweError::ModulusMismatch {
                operation: "blind rotation (switch the ciphertext to 2n first)",
                left: two_n,
                right: ct.modulus().value(),
            });
        }
        let q0 = self.ctx.basis_at(1)?;
        q0.check_same(table.basis(), "blind rotation (table basis)")?;
        let mut acc = RlweCiphertext::new(vec![
            table.mul_monomial(ct.b() as usize),
            Poly::<Coeff>::zero(q0),
        ])?;
        let two_n = 2 * self.ctx.n();
        for (&a, keys) in ct.a().iter().zip(&self.keys) {
            if a == 0 {
                // X^0 - 1 = 0: every step leaves the accumulator unchanged.
                continue;
            }
            let a = a as usize;
            // Ternary: times X^a if s_j >= 0, then times X^-a if s_j <= 0, i.e. X^(a s_j) for s_j in
            // {-1, 0, 1} (PEGASUS Appendix B). Binary: times X^a if s_j = 1.
            for (i, key) in keys.iter().enumerate() {
                let k = if i == 0 { a } else { two_n - a };
                acc = self.half_step(acc, k, key)?;
            }
        }
        Ok(acc)
    }

    /// `((X^k - 1) AC) ⊙ EK + AC`.
    fn half_step(
        &self,
        acc: RlweCiphertext<Coeff>,
        k: usize,
        ek: &RgswCiphertext,
    ) -> LweResult<RlweCiphertext<Coeff>> {
        let d = RlweCiphertext::new(
            acc.parts
                .iter()
                .map(|p| p.mul_monomial_minus_one(k))
                .collect(),
        )?;
        let mut out = self.ctx.external_product(&d, ek)?;
        for (o, a) in out.parts.iter_mut().zip(&acc.parts) {
            o.add_assign(a)?;
        }
        Ok(out)
    }
}
