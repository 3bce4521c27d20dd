//! Noise estimates of the RLWE operations, per coefficient, in the style of RNS-CKKS Appendix A.
//!
//! The paper bounds errors in the canonical embedding norm; the tests of this crate look at the
//! coefficients of the decrypted error, so the same heuristic (errors are sums of many independent terms,
//! hence close to Gaussian) is applied to a single coefficient: each estimate gives the root mean square
//! `std_dev` of one coefficient (over the randomness of the inputs and keys) and the high-probability bound
//! `bound = 6 std_dev` ([`HIGH_PROBABILITY_SIGMAS`], the paper's `6 sqrt(V)` convention), exceeded by a
//! given coefficient with probability about `2 10^-9`.

use rnsfhe_ring::ConversionMode;

use crate::context::RlweContext;
use crate::error::Result;

/// Multiple of the standard deviation used as a high-probability bound (RNS-CKKS Appendix A.2: `6 sqrt(V)`).
pub const HIGH_PROBABILITY_SIGMAS: f64 = 6.0;

/// A per-coefficient noise estimate: root mean square and high-probability bound.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct NoiseEstimate {
    /// Root mean square of one coefficient of the error.
    pub std_dev: f64,
    /// `HIGH_PROBABILITY_SIGMAS * std_dev`, or a deterministic bound when one is smaller.
    pub bound: f64,
}

impl NoiseEstimate {
    fn from_variance(v: f64) -> Self {
        let std_dev = v.sqrt();
        Self {
            std_dev,
            bound: HIGH_PROBABILITY_SIGMAS * std_dev,
        }
    }
}

impl RlweContext {
    /// Error of secret-key encryption: the Gaussian `e` itself, `std_dev = sigma`, bounded deterministically
    /// by the sampler's tail cut `floor(6 sigma)`.
    pub fn fresh_noise_secret(&self) -> NoiseEstimate {
        NoiseEstimate {
            std_dev: self.params().sigma,
            bound: self.gaussian().bound() as f64,
        }
    }

    /// Error of public-key encryption with a key over `Q ∪ {p_0}` (the default,
    /// [`crate::KeyGenerator::public_key`]) and a secret of Hamming weight `h`: the rounding of the
    /// division by `p_0`, `r_0 + r_1 s` with `r_i` uniform in `(-1/2, 1/2)`, plus the key's error divided
    /// by `p_0` ([`RlweContext::fresh_noise_public_over_q`] over `p_0^2`): each coefficient has variance
    /// `(1 + h) / 12 + sigma^2 (2N/3 + 1 + h) / p_0^2`.
    pub fn fresh_noise_public(&self, hamming_weight: usize) -> NoiseEstimate {
        let p0 = self.special_basis().moduli()[0].value() as f64;
        let over_q = self.fresh_noise_public_over_q(hamming_weight).std_dev;
        NoiseEstimate::from_variance(
            (1.0 + hamming_weight as f64) / 12.0 + (over_q / p0) * (over_q / p0),
        )
    }

    /// Error of public-key encryption with a key over `Q` ([`crate::KeyGenerator::public_key_over_q`])
    /// and a secret of Hamming weight `h`: `e = v e_pk + e_0 + e_1 s` with `v` uniform ternary
    /// (`E||v||^2 = 2N/3`), so each coefficient has variance `sigma^2 (2N/3 + 1 + h)` (RNS-CKKS
    /// Appendix A.2, "Encryption", coefficient-wise).
    pub fn fresh_noise_public_over_q(&self, hamming_weight: usize) -> NoiseEstimate {
        let s2 = self.params().sigma * self.params().sigma;
        let n = self.n() as f64;
        NoiseEstimate::from_variance(s2 * (2.0 * n / 3.0 + 1.0 + hamming_weight as f64))
    }

    /// Error `e_ks` of one key switch at `level` (limbs) for a secret of Hamming weight `h`
    /// (RNS-CKKS Appendix A.2 "Multiplication", with the hybrid digits of Han-Ki Section 2.4):
    ///
    /// ```text
    /// e_ks = (1/P) sum_j d~_j e_j + r_0 + r_1 s,
    /// Var  = sum_j N sigma^2 E[d~_j^2] / P^2 + (1 + h) E[r^2],
    /// ```
    ///
    /// where `d~_j` is the ModUp lift of digit `j` (`alpha_j` limbs, product `Q_j` at this level) and `r`
    /// the rounding error of ModDown (`k` special primes):
    ///
    /// * exact modes: `d~_j` uniform in `(-Q_j/2, Q_j/2)`, `E[d~_j^2] = Q_j^2 / 12`; `r` uniform in
    ///   `(-1/2, 1/2)`, `E[r^2] = 1/12`;
    /// * fast mode (Appendix A.1, centered conversion): `d~_j = Q_j sum_i U_i` with `alpha_j` uniform `U_i`
    ///   in `(-1/2, 1/2)`, `E[d~_j^2] = Q_j^2 alpha_j / 12`; likewise `r` is a centered sum of `k` uniforms
    ///   and one rounding, `E[r^2] = (k + 1) / 12`.
    ///
    /// (The textbook fast conversion, with `U_i` in `[0, 1)`, has lifts of mean `alpha_j Q_j / 2`; the
    /// offset adds a random bridge in the coefficient index to `e_ks` that the canonical embedding
    /// concentrates in the slots near the root 1. Centering removes it.)
    ///
    /// The dominant term is about `sqrt(dnum N / 12) sigma Q_j / P`: `P` should be at least the largest
    /// digit `Q_j`.
    ///
    /// Errors: [`crate::Error::LevelOutOfRange`] unless `1 <= level <= L`.
    pub fn key_switch_noise(&self, level: usize, hamming_weight: usize) -> Result<NoiseEstimate> {
        self.check_level(level, "key-switching noise estimate")?;
        let fast = self.params().conversion == ConversionMode::Fast;
        let n = self.n() as f64;
        let s2 = self.params().sigma * self.params().sigma;
        let log_p = self.special_basis().log2_product();
        let q = self.chain().moduli();
        let mut v = 0.0;
        for r in self.gadget().groups_at(level)? {
            let alpha = r.len() as f64;
            let log_qj: f64 = q[r].iter().map(|m| (m.value() as f64).log2()).sum();
            let ratio2 = 2f64.powf(2.0 * (log_qj - log_p));
            let moment = if fast { alpha / 12.0 } else { 1.0 / 12.0 };
            v += n * s2 * moment * ratio2;
        }
        let k = self.special_basis().len() as f64;
        let r2 = if fast { (k + 1.0) / 12.0 } else { 1.0 / 12.0 };
        v += (1.0 + hamming_weight as f64) * r2;
        Ok(NoiseEstimate::from_variance(v))
    }
}
