//! Parameter sets of the LWE layer: the three encryptions of PEGASUS Table IV (the LWE key switch over
//! `q_0`, the RGSW evaluation key over `q_0 q'`, the CKKS ring they come from) as literal structs, and
//! their security by the built-in lattice estimator ([`rnsfhe_core::lwe_estimator`]).
//!
//! PEGASUS claims at least 119 bits for Table IV (by the lattice estimator of Albrecht,
//! Player and Scott). Our estimator gives less for the LWE switching key (`n_lwe = 1024`, `q_0 ~ 2^45`,
//! `sigma = 2^13`, `h = 64`): the figure is reported, not hidden ([`PegasusParams::security`], and `rnsfhe
//! params`), and the key constructors refuse such sets without the explicit opt-in
//! ([`crate::security`]).

use rnsfhe_core::lwe_estimator::LweEstimate;
use rnsfhe_core::SecretDistribution;
use rnsfhe_math::primes::ntt_primes_of_bits;

use crate::error::LweResult;
use crate::keyswitch::LweKeySwitchParams;
use crate::lut::LutParams;
use crate::security::estimate;

/// The LWE-side parameters of PEGASUS, one literal struct per encryption of Table IV.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PegasusParams {
    /// `log2` of the CKKS ring degree `N` (the dimension of extracted LWE ciphertexts).
    pub ckks_log_n: u32,
    /// The LWE dimension `n_lwe` the look-up tables take their inputs in.
    pub lwe_dimension: usize,
    /// The distribution of the LWE secret.
    pub lwe_secret: SecretDistribution,
    /// The LWE switching keys (`SwK`, over `q_0`).
    pub key_switch: LweKeySwitchParams,
    /// The look-up-table ring (`EK`, over `q_0 q'`).
    pub lut: LutParams,
}

/// The named parameter sets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum PegasusPreset {
    /// PEGASUS Table IV exactly: `N = 2^16`, `n_lwe = 2^10`, `q_0 ~ 2^45`, `sigma_ks = 2^13`, `B_ks = 2^7`,
    /// `d_ks = 7`; `n = 2^12`, `q' ~ 2^60`, `sigma_lut = 2^10`; Hamming weight 64 everywhere.
    PegasusTable4,
    /// Table IV with a special modulus below `2^50`, so every transform of blind rotation takes the
    /// vector (IFMA) path; the blind-rotation error grows by `2^5` in standard deviation, far below the
    /// output scale (PEGASUS Appendix C.2), and the evaluation key's ring gains security.
    PegasusTable4FastSpecial,
    /// Small dimensions for tests and examples (`N = 2^11`, `n_lwe = 64`, `n = 2^10`): not secure.
    InsecureTest,
}

impl PegasusPreset {
    /// Every preset.
    pub const ALL: [PegasusPreset; 3] = [
        PegasusPreset::PegasusTable4,
        PegasusPreset::PegasusTable4FastSpecial,
        PegasusPreset::InsecureTest,
    ];

    /// The parameters: `q_0` is the first 45-bit prime `= 1 mod 2^(ckks_log_n + 1)` (NTT-friendly for
    /// every ring of the set), `q'` the first prime of its size `= 1 mod 2n` other than `q_0`.
    ///
    /// Errors: [`crate::LweError::Math`] if the prime search fails (it does not for these sizes).
    pub fn params(self) -> LweResult<PegasusParams> {
        let (ckks_log_n, lwe_dimension, log_lut, special_bits) = match self {
            Self::PegasusTable4 => (16, 1024, 12, 60),
            Self::PegasusTable4FastSpecial => (16, 1024, 12, 50),
            Self::InsecureTest => (11, 64, 10, 60),
        };
        let two_n = 1u64 << (ckks_log_n + 1);
        let q0 = ntt_primes_of_bits(45, two_n, 1, &[])?[0];
        let special = ntt_primes_of_bits(special_bits, two_n, 1, &[q0])?[0];
        let h64 = SecretDistribution::HammingWeight(64);
        Ok(PegasusParams {
            ckks_log_n,
            lwe_dimension,
            lwe_secret: h64,
            key_switch: LweKeySwitchParams {
                modulus: q0,
                base_log: 7,
                digits: 7,
                sigma: 8192.0,
            },
            lut: LutParams {
                log_n: log_lut,
                q0,
                special,
                sigma: 1024.0,
                secret: h64,
            },
        })
    }
}

/// The estimated security of the two key encryptions of a parameter set.
#[derive(Clone, Debug)]
pub struct PegasusSecurity {
    /// The LWE switching key `SwK`: RLWE of degree `n_lwe` over `q_0` with `sigma_ks`, under the LWE key
    /// (the LWE ciphertexts of the look-up tables are under the same key with at most this error).
    pub switching_key: LweEstimate,
    /// The evaluation key `EK`: RLWE of degree `n` over `q_0 q'` with `sigma_lut`.
    pub evaluation_key: LweEstimate,
}

impl PegasusSecurity {
    /// The smaller of the two estimates, in bits.
    pub fn bits(&self) -> f64 {
        self.switching_key
            .security_bits()
            .min(self.evaluation_key.security_bits())
    }
}

impl PegasusParams {
    /// The estimator's figures for the switching and evaluation keys.
    ///
    /// Errors: [`crate::LweError::InvalidParams`] if the estimator rejects the parameters.
    pub fn security(&self) -> LweResult<PegasusSecurity> {
        Ok(PegasusSecurity {
            switching_key: estimate(
                self.lwe_dimension,
                (self.key_switch.modulus as f64).log2(),
                self.key_switch.sigma,
                self.lwe_secret,
            )?,
            evaluation_key: self.lut.security()?,
        })
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::{LweDimension, LweError, LweSecretKey, LweSwitchingKey};

    #[test]
    fn presets_are_consistent_and_table4_is_flagged() {
        for preset in PegasusPreset::ALL {
            let p = preset.params().unwrap();
            let q0 = p.key_switch.modulus;
            assert_eq!(q0, p.lut.q0);
            assert_eq!(
                q0 % (1 << (p.ckks_log_n + 1)),
                1,
                "{preset:?}: q_0 not NTT-friendly"
            );
            assert!(p.key_switch.base_log * p.key_switch.digits as u32 >= 64 - q0.leading_zeros());
            p.lut.context_allowing_insecure().unwrap();
        }
        let table4 = PegasusPreset::PegasusTable4.params().unwrap();
        let s = table4.security().unwrap();
        // The paper claims 119 bits; the estimator finds the switching key well below 128.
        assert!(s.switching_key.security_bits() < 119.0, "{}", s.bits());
        assert!(s.evaluation_key.security_bits() > s.switching_key.security_bits());
        // Without the opt-in, key constructors refuse what the estimator puts below 128 bits: Table IV's
        // switching key (checked before any key material is built) and every key of the test set.
        let mut rng = rnsfhe_math::sampling::Csprng::insecure_from_seed_for_tests([1; 32]);
        let h64 = SecretDistribution::HammingWeight(64);
        let to = LweSecretKey::generate(LweDimension::new(1024).unwrap(), h64, &mut rng).unwrap();
        let from = LweSecretKey::generate(LweDimension::new(2048).unwrap(), h64, &mut rng).unwrap();
        assert!(matches!(
            LweSwitchingKey::generate(&from, &to, table4.key_switch, &mut rng),
            Err(LweError::Insecure { bits, .. }) if bits < 100.0
        ));
        table4.lut.context().unwrap();
        let test = PegasusPreset::InsecureTest.params().unwrap();
        assert!(matches!(test.lut.context(), Err(LweError::Insecure { .. })));
        let fast = PegasusPreset::PegasusTable4FastSpecial.params().unwrap();
        assert!(
            fast.security().unwrap().evaluation_key.security_bits()
                > s.evaluation_key.security_bits()
        );
    }
}
