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
    /// under a sparse secret instead ([`rnsfhe_ckks::encapsulation`]).
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
            bootstrap_primes: Vec::new(),
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

    /// The preset's parameters with a look-up-table ring of degree `n = 2^lut_log_n`: shorthand for
    /// [`PipelinePreset::params`] then [`PipelineParams::with_lut_log_n`] (read there what a larger ring
    /// buys and costs). `PipelinePreset::Table4.params_with_lut_log_n(13)` is the set of PEGASUS Fig. 7's
    /// `n = 2^13` points.
    ///
    /// Errors: as [`PipelinePreset::params`] and [`PipelineParams::with_lut_log_n`].
    pub fn params_with_lut_log_n(self, lut_log_n: u32) -> PegasusResult<PipelineParams> {
        self.params()?.with_lut_log_n(lut_log_n)
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
        check_lut_moduli(q0, lwe.lut.special, lwe.lut.log_n)?;
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

    /// `log2` of the degree `n` of the look-up-table ring (Table IV: 12).
    pub fn lut_log_n(&self) -> u32 {
        self.lwe.lut.log_n
    }

    /// The same pipeline with the look-up tables in a ring of degree `n = 2^lut_log_n` (the CKKS chain,
    /// `q_0`, `q'`, the LWE dimension and every switching key unchanged).
    ///
    /// **What it buys.** A table reads its input on a grid of step `q_0 / (2 n Delta_in)` (PEGASUS Fig. 2
    /// steps 1-2), and the modulus switch to `2n` moves the index by `sqrt((1 + ||s||^2) / 12)` grid steps
    /// in standard deviation (Appendix C.2; 2.33 for Table IV's `h = 64`): the table's own error, PEGASUS
    /// Eq. (3), is proportional to `1 / n`. Each doubling of `n` halves it, one bit of accuracy for
    /// every table (PEGASUS Fig. 7 and Section VI.C.1: "the accuracy of our LUT can be improved by using a
    /// larger lattice dimension n at a cost of a longer LUT evaluation time"). At Table IV that error is
    /// the round trip's largest: for sigmoid on `[-8, 8]` the model expects a mean of `2^-11.0` at `n =
    /// 2^12` and `2^-12.0` at `2^13` (measured on 1024 values through the whole pipeline: `2^-10.9` and
    /// `2^-11.9`, `docs/bench/pegasus-pipeline.md`).
    ///
    /// **What it costs.** Blind rotation does `n_lwe` (binary) or `2 n_lwe` (ternary) external products
    /// in the ring of degree `n`, each a few transforms of size `n`: the time of every table doubles
    /// with `n`, and so does the blind-rotation key (`O(n_lwe n)` words: about 0.5 GB at Table IV's `n =
    /// 2^12`, 1 GB at `2^13`) and, on the paper's repacking path, the LWE switching key `n -> n_lwe`
    /// of Fig. 6 step 6. The ring-packing key and every CKKS key are unchanged (they live in the CKKS
    /// ring), and so is the rest of the pipeline. The evaluation key of the larger ring is an RLWE
    /// sample of larger degree over the same `q_0 q'`: its security only grows, and it is still
    /// estimated ([`rnsfhe_lwe::PegasusParams::security`]) and checked when the keys are made (the
    /// [`crate::PipelineOptions::allow_insecure`] opt-in is needed below 128 bits, as before).
    ///
    /// **Accepted degrees**: `n_lwe <= n <= N`. The moduli `q_0` and `q'` of the presets are `1 mod 2N`,
    /// so `2n` divides `q_0 - 1` and `q' - 1` (negacyclic transforms of size `n`, checked here for sets
    /// of other moduli); the ring-packing path packs the `n`-dimensional outputs into the CKKS ring,
    /// which needs `n <= N`; and a ring smaller than `n_lwe` would make the tables' outputs, and the key
    /// switch back of the paper's path, of lower dimension than their inputs. The input margin of the
    /// tables (six standard deviations of the index error inside the `1/16` of `q_0 / 4` that the
    /// pipeline's input scale leaves free) is checked when the pipeline is built, for the LWE key the
    /// options choose.
    ///
    /// Errors: [`PegasusError::InvalidParams`] for a degree outside `[n_lwe, N]` or moduli that are not
    /// `1 mod 2n`.
    pub fn with_lut_log_n(mut self, lut_log_n: u32) -> PegasusResult<Self> {
        let ckks_log_n = self.ckks.params().log_n;
        let n_lwe = self.lwe.lwe_dimension;
        let min = n_lwe.next_power_of_two().trailing_zeros();
        if !(min..=ckks_log_n).contains(&lut_log_n) {
            return Err(PegasusError::InvalidParams {
                what: "look-up-table ring degree",
                reason: format!(
                    "log2 n = {lut_log_n}: the ring of the look-up tables must have a degree n from the \
                     LWE dimension n_lwe = {n_lwe} to the CKKS ring degree N = 2^{ckks_log_n} \
                     (log2 n from {min} to {ckks_log_n})"
                ),
            });
        }
        check_lut_moduli(self.q0(), self.lwe.lut.special, lut_log_n)?;
        self.lwe.lut.log_n = lut_log_n;
        Ok(self)
    }
}

/// Checks that `q_0` and the special modulus `q'` of a look-up-table ring of degree `2^log_n` are
/// distinct and `1 mod 2n` (negacyclic NTTs of size `n` for both, PEGASUS Table IV's second row).
fn check_lut_moduli(q0: u64, special: u64, log_n: u32) -> PegasusResult<()> {
    let two_n = 2u64 << log_n;
    if q0 % two_n != 1 || special % two_n != 1 || q0 == special {
        return Err(PegasusError::InvalidParams {
            what: "q_0",
            reason: format!(
                "the CKKS q_0 = {q0} and the special modulus q' = {special} of the look-up-table ring \
                 must differ and be 1 mod 2n = {two_n}"
            ),
        });
    }
    Ok(())
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    /// The sparse-secret encapsulation of the ring-packing path (`rnsfhe_ckks::encapsulation`) is
    /// above 128 bits at the pipeline's sizes, and generation refuses a weight of 1 at the test sizes.
    #[test]
    fn the_key_to_the_sparse_secret_is_secure_at_the_pipeline_sizes() {
        use rnsfhe_ckks::encapsulation::{SparseEncapsulation, MIN_SECURITY_BITS};
        use rnsfhe_ckks::DEFAULT_SPARSE_WEIGHT;
        let params = PipelinePreset::Secure128.params().unwrap();
        let bits = SparseEncapsulation::security(&params.ckks, DEFAULT_SPARSE_WEIGHT)
            .unwrap()
            .security_bits();
        eprintln!("sparse-secret encapsulation key at Secure128: {bits:.1} bits");
        assert!(bits >= MIN_SECURITY_BITS, "{bits}");
        let test = PipelinePreset::InsecureTest.params().unwrap();
        let mut rng = rnsfhe_ckks::Csprng::insecure_from_seed_for_tests([3; 32]);
        let keygen = rnsfhe_ckks::KeyGenerator::new(&test.ckks, &mut rng).unwrap();
        let err =
            SparseEncapsulation::generate(&test.ckks, keygen.secret_key(), 1, false, &mut rng)
                .unwrap_err();
        assert!(
            matches!(err, rnsfhe_ckks::Error::InsecureKey { bits, .. } if bits < MIN_SECURITY_BITS),
            "{err}"
        );
    }

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
    fn the_lut_ring_degree_is_a_validated_choice() {
        let table4 = PipelinePreset::Table4.params().unwrap();
        assert_eq!(table4.lut_log_n(), 12);
        let wide = PipelinePreset::Table4.params_with_lut_log_n(13).unwrap();
        assert_eq!(wide.lut_log_n(), 13);
        // Only the ring changes: q_0, q', the CKKS chain and the LWE dimension stay.
        assert_eq!(wide.q0(), table4.q0());
        assert_eq!(wide.lwe.lut.special, table4.lwe.lut.special);
        assert_eq!(wide.ckks.q_moduli(), table4.ckks.q_moduli());
        assert_eq!(wide.lwe.lwe_dimension, table4.lwe.lwe_dimension);
        assert_eq!(wide.q0() % (2 << 13), 1);
        // The larger ring's evaluation key is estimated, and more secure than Table IV's.
        let bits = |p: &PipelineParams| p.lwe.lut.security().unwrap().security_bits();
        assert!(
            bits(&wide) > bits(&table4),
            "{} <= {}",
            bits(&wide),
            bits(&table4)
        );
        // The test set's ring doubles up to its CKKS degree N = 2^11.
        let test = PipelinePreset::InsecureTest
            .params_with_lut_log_n(11)
            .unwrap();
        assert_eq!(test.lwe.lut.context_allowing_insecure().unwrap().n(), 2048);
        // Out of [n_lwe, N]: errors naming the choice.
        for (preset, log_n) in [
            (PipelinePreset::Table4, 17),
            (PipelinePreset::Table4, 9),
            (PipelinePreset::InsecureTest, 12),
            (PipelinePreset::InsecureTest, 5),
            (PipelinePreset::Secure128, 0),
        ] {
            let err = preset.params_with_lut_log_n(log_n).unwrap_err();
            assert!(
                matches!(
                    err,
                    PegasusError::InvalidParams {
                        what: "look-up-table ring degree",
                        ..
                    }
                ),
                "{preset:?}, {log_n}: {err}"
            );
        }
    }

    #[test]
    fn moduli_that_are_not_1_mod_2n_are_refused() {
        let mut lwe = PegasusPreset::InsecureTest.params().unwrap();
        // A special prime that is 1 mod 2^11 but not mod 2^12 (or 2^13).
        lwe.lut.special = rnsfhe_math::primes::ntt_primes_of_bits(60, 1 << 11, 8, &[])
            .unwrap()
            .into_iter()
            .find(|p| p % (1 << 12) != 1)
            .unwrap();
        let params = PipelineParams::new(PipelinePreset::InsecureTest.ckks_params(), lwe).unwrap();
        assert_eq!(params.lut_log_n(), 10);
        let err = params.with_lut_log_n(11).unwrap_err();
        assert!(
            matches!(err, PegasusError::InvalidParams { what: "q_0", .. }),
            "{err}"
        );
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
