//! The parameter sets of the whole PEGASUS pipeline: the CKKS chain the values live in and the LWE side
//! (switching keys, look-up-table ring) the tables run on, tied together by one modulus `q_0`.
//!
//! PEGASUS Table IV: `N = 2^16` with `L = 16` primes of about 45 bits (`q_0 ~ 2^45`, the others slightly
//! larger), `log QP = 795`; `n_lwe = 2^10`; the look-up-table ring `n = 2^12` over `q_0 q'`. Section IV.B:
//! the LWE side works over the first CKKS modulus `q_0` alone (Fig. 6 drops every other modulus before
//! step 3), so the two halves must agree on it: [`PipelineParams::new`] takes `q_0` from the CKKS chain.

use rnsfhe_ckks::{CkksContext, CkksParams, RescalingPolicy};
use rnsfhe_core::{ConversionMode, SecretDistribution, DEFAULT_HAMMING_WEIGHT};
use rnsfhe_lwe::{PegasusParams, PegasusPreset};
use std::sync::Arc;

use crate::error::{PegasusError, PegasusResult};

/// The named pipeline sets.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum PipelinePreset {
    /// PEGASUS Table IV: the CKKS chain `N = 2^16`, 16 primes of 45 bits (`q_0` and 15 scaling primes),
    /// Hamming-weight-64 secret, `sigma = 3.2`; key switching with 4 digits of 4 primes and `P` = 4
    /// primes of 45 bits (`log QP ~ 900`; the paper's SEAL chain has `log QP = 795`, one special prime
    /// per digit, which our hybrid key switching replaces by fewer, wider digits, all primes below `2^50`
    /// for the vector NTT); the LWE side is [`PegasusPreset::PegasusTable4`]. Not 128-bit secure: the
    /// sparse CKKS secret is outside the HE Standard table and the LWE switching keys estimate at about
    /// 98 bits (the paper claims 119).
    Table4,
    /// Our 128-bit set: Table IV's CKKS chain with a dense uniform ternary secret (`log QP ~ 900`, far
    /// below the HE Standard's 1747 for `N = 2^16`) and the LWE side [`PegasusPreset::Secure128`] (every
    /// key at 128 bits or more by the built-in estimator). The dense secret would give the integer parts
    /// of the modulus raise a standard deviation of about 60 (2.3 with `h = 64`); the pipeline raises
    /// under a sparse secret instead ([`crate::encapsulation`]).
    Secure128,
    /// Small dimensions for tests and examples: Table IV's chain at `N = 2^11` and the LWE side
    /// [`PegasusPreset::InsecureTest`]. Not secure.
    InsecureTest,
}

impl PipelinePreset {
    /// Every preset.
    pub const ALL: [PipelinePreset; 3] = [Self::Table4, Self::Secure128, Self::InsecureTest];

    /// The CKKS parameters of the preset (see each variant).
    pub fn ckks_params(self) -> CkksParams {
        let (log_n, levels, secret, insecure) = match self {
            Self::Table4 => (
                16,
                15,
                SecretDistribution::HammingWeight(DEFAULT_HAMMING_WEIGHT),
                true,
            ),
            Self::Secure128 => (16, 15, SecretDistribution::Ternary, false),
            Self::InsecureTest => (
                11,
                15,
                SecretDistribution::HammingWeight(DEFAULT_HAMMING_WEIGHT),
                true,
            ),
        };
        CkksParams {
            log_n,
            log_scale: 45,
            q0_bits: 45,
            levels,
            special_primes: 4,
            special_bits: 45,
            // Digits of at most 4 primes (180 bits), the size of P.
            dnum: (levels + 1).div_ceil(4),
            secret,
            sigma: 3.2,
            conversion: ConversionMode::Fast,
            rescaling: RescalingPolicy::FixedNominalScale,
            insecure_for_testing: insecure,
        }
    }

    /// The LWE-side preset.
    pub fn lwe_preset(self) -> PegasusPreset {
        match self {
            Self::Table4 => PegasusPreset::PegasusTable4,
            Self::Secure128 => PegasusPreset::Secure128,
            Self::InsecureTest => PegasusPreset::InsecureTest,
        }
    }

    /// The preset's parameters with `q_0` taken from its CKKS chain ([`PipelineParams::new`]).
    ///
    /// Errors: as [`PipelineParams::new`].
    pub fn params(self) -> PegasusResult<PipelineParams> {
        PipelineParams::new(self.ckks_params(), self.lwe_preset().params()?)
    }
}

/// The parameters of the whole pipeline: the CKKS context and the LWE side over its first modulus.
#[derive(Clone, Debug)]
pub struct PipelineParams {
    /// The CKKS context (its first prime is `q_0`).
    pub ckks: Arc<CkksContext>,
    /// The LWE side: its look-up-table modulus is the CKKS `q_0`, and so is its key-switching modulus
    /// when the LWE preset switches over `q_0` (Table IV; `Secure128` switches over its own 26-bit
    /// modulus).
    pub lwe: PegasusParams,
}

impl PipelineParams {
    /// Builds the CKKS context of `ckks` and moves the LWE side `lwe` onto its first prime `q_0`: the
    /// look-up-table modulus becomes `q_0`, and the key-switching modulus too if it was the LWE preset's
    /// own `q_0`.
    ///
    /// Errors: [`PegasusError::Ckks`] if the CKKS parameters are invalid or insecure without the opt-in;
    /// [`PegasusError::InvalidParams`] if the CKKS ring degree is not the LWE side's `N`, or `q_0` is not
    /// `1 mod 2n` for the look-up-table ring `n`, or equals the special modulus `q'`.
    pub fn new(ckks: CkksParams, mut lwe: PegasusParams) -> PegasusResult<Self> {
        if ckks.log_n != lwe.ckks_log_n {
            return Err(PegasusError::InvalidParams {
                what: "ring degree",
                reason: format!(
                    "the CKKS ring degree 2^{} is not the LWE side's N = 2^{}",
                    ckks.log_n, lwe.ckks_log_n
                ),
            });
        }
        let ctx = CkksContext::new(ckks)?;
        let q0 = ctx.q_moduli()[0];
        let two_n = 2u64 << lwe.lut.log_n;
        if q0 % two_n != 1 || q0 == lwe.lut.special {
            return Err(PegasusError::InvalidParams {
                what: "q_0",
                reason: format!(
                    "the CKKS q_0 = {q0} must be 1 mod 2n = {two_n} and differ from the special modulus \
                     q' = {} of the look-up-table ring",
                    lwe.lut.special
                ),
            });
        }
        if lwe.key_switch.modulus == lwe.lut.q0 {
            lwe.key_switch.modulus = q0;
        }
        lwe.lut.q0 = q0;
        Ok(Self { ckks: ctx, lwe })
    }

    /// `q_0`, the modulus the LWE side works over.
    pub fn q0(&self) -> u64 {
        self.lwe.lut.q0
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn the_two_halves_share_q0() {
        for preset in [PipelinePreset::InsecureTest, PipelinePreset::Table4] {
            let p = preset.params().unwrap();
            assert_eq!(p.q0(), p.ckks.q_moduli()[0]);
            assert_eq!(p.ckks.q_moduli().len(), 16);
            assert!(p.q0() < 1 << 45 && p.q0() > 1 << 44);
            if preset == PipelinePreset::Table4 {
                assert_eq!(p.lwe.key_switch.modulus, p.q0());
            }
        }
        let secure = PipelinePreset::Secure128.params().unwrap();
        assert!(!secure.ckks.is_insecure());
        assert!(secure.lwe.key_switch.modulus < 1 << 26);
    }

    #[test]
    fn mismatched_ring_degrees_are_refused() {
        let lwe = PegasusPreset::InsecureTest.params().unwrap();
        let err = PipelineParams::new(PipelinePreset::Table4.ckks_params(), lwe).unwrap_err();
        assert!(matches!(
            err,
            PegasusError::InvalidParams {
                what: "ring degree",
                ..
            }
        ));
    }
}
