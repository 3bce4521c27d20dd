//! CKKS parameters as a plain literal struct, named presets and a generator.
//!
//! A [`CkksParams`] gives bit sizes, not primes: [`crate::CkksContext::new`] searches the primes
//! (RNS-CKKS Section 3.1 and Appendix B: scaling primes `q_j = 1 mod 2N` within `2^-eta` of `2^log_scale`)
//! and checks everything. The chain has `levels + 1` primes: `q_0` of `q0_bits` bits (decryption needs
//! `|m| < q_0 / 2`, RNS-CKKS Section 5.1) and `levels` scaling primes; `special_primes` primes of
//! `special_bits` bits form `P` for key switching (Section 3.3) with `dnum` digit groups (Han-Ki hybrid
//! key switching; GHS when `dnum = 1`).
//!
//! ## Presets
//!
//! [`Preset`] holds the RNS-CKKS paper's Table 1 settings (N, log q = 55, log Q_L), recommended
//! 128-bit settings of our own and 128-bit fast-prime settings at the depths of Table 1 (every prime below
//! `2^50`, the AVX-512 IFMA path of the NTT), and bootstrapping chains whose upper primes
//! ([`CkksParams::bootstrap_primes`]) have the sizes the bootstrapping circuit wants
//! ([`Preset::Boot128N16`], [`Preset::BootTestN15`]); [`CkksParams::generate`] chooses parameters from a
//! depth, a scale and a security level in the manner of OpenFHE's `CCParams`.
//!
//! ## Conversion modes
//!
//! Every preset builds in every [`ConversionMode`] ([`Preset::params_with_conversion`]). `Fast` and
//! `ExactFloat` use the preset's chain and key-switching layout unchanged. `ExactInteger` (Qu-Xu
//! Algorithms 1 and 4) needs each conversion source (every digit group of ModUp, `P` of ModDown) within a
//! factor `1 ± 2^-eta` of one power of two with `eta > log2((r + l) / r)` (Qu-Xu Theorem 1); the chain's
//! primes are then drawn by Qu-Xu Algorithms 2 and 3 ([`crate::context`]). Digit groups are `alpha`
//! consecutive primes from `q_0` (Han-Ki hybrid key switching), so when `q_0` is larger than the scaling
//! primes and `alpha > 1` its group mixes two powers of two and no choice of primes satisfies Theorem 1.
//! [`CkksParams::for_exact_integer`] then arranges the digits one prime each (`dnum = levels + 1`), with
//! the fewest special primes covering the largest digit (`q_0`): `N`, the depth, the scale, `q_0` (hence
//! `log Q` and the decryptable range) stay as promised and `log QP` only shrinks, at the cost of larger
//! key-switching keys and more NTTs per key switch (`levels + 1` digits instead of `dnum`).

use rnsfhe_core::{ConversionMode, SecretDistribution, DEFAULT_HAMMING_WEIGHT};

use crate::error::{Error, Result};
use rnsfhe_core::security::{max_log_qp, SecurityLevel};

/// How scales evolve under rescaling (DESIGN "Core types": the two policies of the papers).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum RescalingPolicy {
    /// RNS-CKKS (Cheon-Han-Kim-Kim-Song, Section 3.1): every level is encoded at the nominal scale
    /// `2^log_scale`; rescaling divides the exact scale by the dropped prime `q_l ≈ 2^log_scale`. Scales of
    /// operands at the same level then differ by the approximation error of the basis (relative
    /// `≈ 2^-eta`), which binary operations accept as part of the CKKS approximation error (tolerance
    /// [`crate::CkksContext::scale_tolerance`]).
    #[default]
    FixedNominalScale,
    /// Kim-Papadimitriou-Polyakov exact per-level scale factors (Qu-Xu Sections 2.4 and 5, "ExactRescaling"):
    /// the top level uses `Delta_L = q_{L}` (the last prime) and `Delta_{l-1} = Delta_l^2 / q_l`, so a
    /// product rescaled once lands exactly on the next level's scale and operands at one level agree
    /// (tolerance `2^-40`, rounding only).
    ExactScale,
}

/// CKKS parameters, declared as a literal struct and checked by [`crate::CkksContext::new`].
///
/// Levels count **limbs** as in `rnsfhe-core`: a fresh ciphertext has level `levels + 1` (all primes) and
/// each rescaling removes one; `levels` is therefore the multiplicative depth.
#[derive(Clone, Debug, PartialEq)]
pub struct CkksParams {
    /// `log2(N)`, `N` the ring degree; `N/2` complex slots.
    pub log_n: u32,
    /// `log2` of the scale `Delta`; the scaling primes are chosen close to `2^log_scale`.
    pub log_scale: u32,
    /// Bit size of the first prime `q_0` (at least `log_scale`; its excess over `log_scale` bounds the
    /// magnitude of decryptable values: `|x| < 2^(q0_bits - log_scale - 1)`).
    pub q0_bits: u32,
    /// Number of scaling primes `q_1 .. q_L` (the multiplicative depth `L` left to the user).
    pub levels: usize,
    /// Bit sizes of the **bootstrapping primes** `q_{L+1} ..` above the `levels` scaling primes, bottom
    /// first (each in `[10, 61]`); empty for a chain of one scaling-prime size (the primes are then those
    /// of a chain without the field, byte for byte). Bootstrapping raises to the very top and consumes
    /// them (SlotsToCoeffs lowest, then EvalMod, then CoeffsToSlots, as in Bossuat et al., Eurocrypt
    /// 2021, Section 6 and Table 5); fresh encryptions and default encodings stay at the user's top
    /// level `levels + 1` ([`crate::CkksContext::user_max_level`]). Their scales: see
    /// [`crate::context`]'s [Scales](crate::context#scales).
    pub bootstrap_primes: Vec<u32>,
    /// Number of special primes `p_i` (key switching, RNS-CKKS Section 3.3).
    pub special_primes: usize,
    /// Bit size of each special prime.
    pub special_bits: u32,
    /// Digit groups of hybrid key switching, `1 <= dnum <=` [`CkksParams::chain_len`] (1 is GHS).
    pub dnum: usize,
    /// Secret key distribution (the paper uses Hamming weight 64).
    pub secret: SecretDistribution,
    /// Standard deviation of the error (3.2 in the papers).
    pub sigma: f64,
    /// Basis conversion of ModUp / ModDown (Fast, ExactFloat, ExactInteger).
    pub conversion: ConversionMode,
    /// Rescaling policy.
    pub rescaling: RescalingPolicy,
    /// Explicit opt-in for parameters the HE Standard table does not establish as 128-bit secure (too
    /// large a `log2(QP)` for `N`, or a sparse secret the table does not cover, as in the papers' presets).
    /// Without it [`crate::CkksContext::new`] refuses them ([`crate::Error::Insecure`]); with it the
    /// context is built and [`crate::CkksContext::security_warning`] says why it is insecure. For tests and
    /// paper reproduction only.
    pub insecure_for_testing: bool,
}

impl CkksParams {
    /// Ring degree `N`.
    pub fn n(&self) -> usize {
        1usize << self.log_n.min(usize::BITS - 2)
    }

    /// Nominal `log2(Q P)` from the bit sizes (the context reports the exact value of its primes).
    pub fn nominal_log_qp(&self) -> u64 {
        self.q0_bits as u64
            + self.levels as u64 * self.log_scale as u64
            + self.bootstrap_primes.iter().map(|&b| b as u64).sum::<u64>()
            + self.special_primes as u64 * self.special_bits as u64
    }

    /// The number of primes of `Q`: `q_0`, the `levels` scaling primes and the bootstrapping primes
    /// (the top level of the whole chain, in limbs).
    pub fn chain_len(&self) -> usize {
        self.levels + 1 + self.bootstrap_primes.len()
    }

    /// Digits per group of hybrid key switching, `alpha = ceil(chain_len / dnum)` (`dnum` clamped to
    /// at least 1).
    pub fn alpha(&self) -> usize {
        self.chain_len().div_ceil(self.dnum.max(1))
    }

    /// Whether [`ConversionMode::ExactInteger`] can convert these parameters' digit groups as laid out:
    /// one prime per digit (`alpha = 1`), or, without bootstrapping primes, `q_0` of the scaling primes'
    /// size (`q0_bits == log_scale`), so that every group is close to one power of two (Qu-Xu Theorem
    /// 1). A group mixing primes of several sizes is never close to one power of two. The special primes
    /// are always chosen close to `2^special_bits` in that mode.
    pub fn digits_admit_exact_integer(&self) -> bool {
        self.alpha() <= 1
            || (self.bootstrap_primes.is_empty()
                && (self.q0_bits == self.log_scale || self.levels == 0))
    }

    /// These parameters in [`ConversionMode::ExactInteger`], with the digit layout Qu-Xu Theorem 1 admits
    /// (see the [module documentation](self#conversion-modes)): unchanged but for the mode when
    /// [`CkksParams::digits_admit_exact_integer`]; otherwise one prime per digit (`dnum =`
    /// [`CkksParams::chain_len`]) and `min(special_primes, ceil(b / special_bits))` special primes of
    /// `special_bits` bits, `b` the largest prime's bit size (`q_0` or a bootstrapping prime), so that `P`
    /// covers the largest digit as RNS-CKKS Section 3.3 asks whenever the original `P` did.
    /// `N`, `levels`, the scale, `q_0`, the secret and the rescaling policy are kept; `log QP` does not
    /// grow (the largest digit only shrinks, and `P` keeps at most its primes).
    pub fn for_exact_integer(&self) -> Self {
        let mut p = Self {
            conversion: ConversionMode::ExactInteger,
            ..self.clone()
        };
        if !p.digits_admit_exact_integer() {
            p.dnum = p.chain_len();
            let largest = p.bootstrap_primes.iter().copied().fold(p.q0_bits, u32::max);
            let cover = largest.div_ceil(p.special_bits.max(1)) as usize;
            p.special_primes = p.special_primes.min(cover.max(1));
        }
        p
    }

    /// Chooses parameters for multiplicative `depth`, scale `2^log_scale` and a security `level`, in the
    /// manner of OpenFHE's `CCParams` defaults: `q_0` of `min(log_scale + 10, 60)` bits, `dnum = 3` for
    /// depth above 3 (2 for depth 1-3, 1 for depth 0), `P` with as many primes as a digit has limbs and
    /// at least the digit's bit size (primes of at most 60 bits), the smallest `N` in `[2^12, 2^17]` with
    /// `log2(QP)` under the HE Standard bound ([`max_log_qp`]). Uniform ternary secret, `sigma = 3.2`,
    /// fast conversion, exact-scale rescaling.
    ///
    /// Errors: [`Error::InvalidParams`] for `log_scale` outside `[20, 60]` or when no `N <= 2^17`
    /// fits.
    pub fn generate(depth: usize, log_scale: u32, level: SecurityLevel) -> Result<Self> {
        if !(20..=60).contains(&log_scale) {
            return Err(Error::InvalidParams {
                what: "log_scale",
                reason: format!("log_scale = {log_scale} must be in [20, 60]"),
            });
        }
        let q0_bits = (log_scale + 10).min(60);
        let limbs = depth + 1;
        let dnum = match depth {
            0 => 1,
            1..=3 => 2,
            _ => 3,
        }
        .min(limbs);
        let alpha = limbs.div_ceil(dnum);
        // The largest digit is the first group: q_0 and alpha - 1 scaling primes.
        let digit_bits = q0_bits as u64 + (alpha as u64 - 1) * log_scale as u64;
        let special_primes = alpha;
        let special_bits = (digit_bits.div_ceil(alpha as u64) as u32 + 1).clamp(30, 60);
        let mut params = Self {
            log_n: 12,
            log_scale,
            q0_bits,
            levels: depth,
            bootstrap_primes: Vec::new(),
            special_primes,
            special_bits,
            dnum,
            secret: SecretDistribution::Ternary,
            sigma: 3.2,
            conversion: ConversionMode::Fast,
            rescaling: RescalingPolicy::ExactScale,
            insecure_for_testing: false,
        };
        let need = params.nominal_log_qp();
        for log_n in 12..=17u32 {
            if let Some(max) = max_log_qp(1 << log_n, level) {
                if need <= max as u64 {
                    params.log_n = log_n;
                    return Ok(params);
                }
            }
        }
        Err(Error::InvalidParams {
            what: "depth",
            reason: format!(
                "depth {depth} at log_scale {log_scale} needs log2(QP) ≈ {need}, beyond the {level} bound of \
                 N = 2^17 ({}); lower the depth or the scale, or bootstrap (Preset::Boot128N16)",
                max_log_qp(1 << 17, level).unwrap_or(0)
            ),
        })
    }
}

/// Named parameter sets: the RNS-CKKS paper's Table 1, recommended 128-bit settings and 128-bit
/// fast-prime settings at the depths of Table 1.
///
/// [`Preset::params`] is the preset in [`ConversionMode::Fast`]; [`Preset::params_with_conversion`] gives
/// it in any mode (all three build on every preset, see the [module documentation](self#conversion-modes)).
///
/// The paper fixes N, log q and log Q_L but not the key-switching decomposition; the Table 1 presets use
/// hybrid key switching with `dnum = 3` and as many 60-bit special primes as a digit has primes, which is
/// what OpenFHE chooses for the same chain, so that `bench/peers` compares the same computation.
///
/// Security is stated per preset and checked by [`crate::CkksContext::new`]
/// ([`crate::CkksContext::security`]); the paper's presets are **not** 128-bit secure by the HE Standard:
/// they use a sparse secret (`h = 64`) and target 80-bit security (Section 5.1), so the context flags them
/// ([`crate::CkksContext::is_insecure`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Preset {
    /// RNS-CKKS Table 1, `L = 5`: `N = 2^15`, `log q = 55`, `log Q_L = 336` (`q_0` of 61 bits and five
    /// 55-bit primes), `h = 64`, `sigma = 3.2`. Key switching: `dnum = 3` (digits of 2 primes, at most
    /// 116 bits), `P` = 2 primes of 60 bits; `log2(QP) ≈ 456`. Security: the paper's 80-bit target; not
    /// established by the HE Standard table (sparse secret).
    PaperTable1L5,
    /// RNS-CKKS Table 1, `L = 10`: `N = 2^15`, `log q = 55`, `log Q_L = 611` (`q_0` of 61 bits and ten
    /// 55-bit primes), `h = 64`, `sigma = 3.2`. Key switching: `dnum = 3` (digits of 4 primes, at most
    /// 226 bits), `P` = 4 primes of 60 bits; `log2(QP) ≈ 851`. Security: the paper's 80-bit target; not
    /// established by the HE Standard table (sparse secret).
    PaperTable1L10,
    /// RNS-CKKS Table 1, `L = 15`: `N = 2^16`, `log q = 55`, `log Q_L = 886` (`q_0` of 61 bits and fifteen
    /// 55-bit primes), `h = 64`, `sigma = 3.2`. Key switching: `dnum = 3` (digits of 6 primes, at most
    /// 336 bits), `P` = 6 primes of 60 bits; `log2(QP) ≈ 1246`. Security: the paper's 80-bit target; not
    /// established by the HE Standard table (sparse secret).
    PaperTable1L15,
    /// RNS-CKKS Table 2 (x^-1, exp, sigmoid on `2^13` slots): `N = 2^14`, `log q = 55`, `log Q_L = 281`
    /// (`q_0` of 61 bits and four 55-bit primes: depth 4, enough for the degree-15 inverse), `h = 64`.
    /// Key switching: `dnum = 3` (digits of 2 primes), `P` = 2 primes of 60 bits; `log2(QP) ≈ 401`.
    /// Security: the paper's 80-bit target (sparse secret).
    PaperTable2,
    /// RNS-CKKS Table 3 (mean and variance of `2^13` numbers): `N = 2^14`, `log q = 55`, `log Q_L = 171`
    /// (`q_0` of 61 bits and two 55-bit primes: the two levels of the variance), `h = 64`. Key
    /// switching: `dnum = 3` (one prime per digit), `P` = 2 primes of 60 bits; `log2(QP) ≈ 291`.
    /// Security: the paper's 80-bit target (sparse secret).
    PaperTable3,
    /// RNS-CKKS Table 4 (logistic regression on lbw and uis): `N = 2^16`, `log q = 40`, `log Q_L = 1061`
    /// (`q_0` of 61 bits and twenty-five 40-bit primes), `h = 64`. Key switching: `dnum = 3` (digits of
    /// 9 primes, at most 381 bits), `P` = 7 primes of 60 bits; `log2(QP) ≈ 1481`. Security: the paper's
    /// 80-bit target (sparse secret).
    PaperTable4,
    /// Recommended, 128-bit (HE Standard, uniform ternary): `N = 2^13`, scale `2^40`, `q_0` of 45 bits,
    /// depth 3, `dnum = 4` (one prime per digit), `P` = one 50-bit prime; `log2(QP) ≈ 215 <= 218`.
    /// All primes at most 50 bits (IFMA NTT).
    Rec128N13,
    /// Recommended, 128-bit: `N = 2^14`, scale `2^40`, `q_0` of 50 bits, depth 6, `dnum = 3` (digits of
    /// at most 3 primes, 130 bits), `P` = 3 primes of 44 bits; `log2(QP) ≈ 422 <= 438`. Primes at most
    /// 50 bits.
    Rec128N14,
    /// Recommended, 128-bit: `N = 2^15`, scale `2^40`, `q_0` of 50 bits, depth 15, `dnum = 4` (digits of
    /// 4 primes, at most 170 bits), `P` = 4 primes of 43 bits; `log2(QP) ≈ 822 <= 881`. Primes at most
    /// 50 bits.
    Rec128N15,
    /// Recommended, 128-bit: `N = 2^16`, scale `2^40`, `q_0` of 50 bits, depth 32, `dnum = 4` (digits of
    /// 9 primes, at most 370 bits), `P` = 9 primes of 42 bits; `log2(QP) ≈ 1708 <= 1747`. Primes at most
    /// 50 bits.
    Rec128N16,
    /// Fast-prime, 128-bit, at the depth of [`Preset::PaperTable1L5`]: `N = 2^15`, scale `2^45`, `q_0` of
    /// 49 bits (decryptable `|x| < 8`), five 45-bit scaling primes, `dnum = 3` (digits of 2 primes, at
    /// most 94 bits), `P` = 2 primes of 49 bits; `log Q ≈ 274`, `log2(QP) ≈ 372 <= 881`, uniform ternary
    /// secret, exact-scale rescaling. Every prime is below `2^50`, so every NTT takes tfhe-ntt's AVX-512
    /// IFMA path (about twice as fast as the 64-bit path the 55- and 60-bit primes of the paper presets
    /// take; measured end to end, Mult&RS and Rotate take 0.7-0.85 of the 55-bit presets' time, `rnsfhe
    /// bench ckks-table1`); the price is 10 bits of scale against the paper's `2^55`, hence 10 bits of
    /// precision, and about 4 more for the dense secret 128-bit security needs (the paper's is `h = 64`).
    FastPrime128L5,
    /// Fast-prime, 128-bit, at the depth of [`Preset::PaperTable1L10`]: `N = 2^15`, scale `2^45`, `q_0`
    /// of 49 bits, ten 45-bit scaling primes, `dnum = 3` (digits of 4 primes, at most 184 bits), `P` = 4
    /// primes of 49 bits; `log Q ≈ 499`, `log2(QP) ≈ 695 <= 881`. Primes below `2^50` (see
    /// [`Preset::FastPrime128L5`]).
    FastPrime128L10,
    /// Fast-prime, 128-bit, at the depth of [`Preset::PaperTable1L15`]: `N = 2^16`, scale `2^45`, `q_0`
    /// of 49 bits, fifteen 45-bit scaling primes, `dnum = 3` (digits of 6 primes, at most 274 bits), `P`
    /// = 6 primes of 49 bits; `log Q ≈ 724`, `log2(QP) ≈ 1018 <= 1747`. Primes below `2^50` (see
    /// [`Preset::FastPrime128L5`]).
    FastPrime128L15,
    /// Bootstrapping, 128-bit (HE Standard and our estimator, dense ternary secret): `N = 2^16`, user
    /// scale `2^40`, `q_0` of 60 bits and nine 40-bit scaling primes (the user's levels: 9
    /// multiplications after each bootstrapping of full slots), then the bootstrapping primes, bottom
    /// first: 3 x 55 bits (SlotsToCoeffs), 10 x 60 bits (EvalMod for `K = 12` at a working scale near
    /// `2^60`: [`crate::BootstrapParams::for_context`] chooses a cosine of degree 127 without double
    /// angles and an arcsine of degree 7 at a message ratio of `2^5`,
    /// [`crate::bootstrap::BOOTSTRAP_PRIMES_MESSAGE_RATIO`]), 4 x 56 bits (CoeffsToSlots);
    /// `dnum = 6` (digits of at most 5 primes, at most 300 bits), `P` = 5 primes of 60 bits;
    /// `log Q ≈ 1409`, `log2(QP) ≈ 1709 <= 1747`. The shape of Lattigo's default bootstrapping
    /// parameters (Bossuat et al. 2021, Table 5), with SlotsToCoeffs primes 15 bits above the user's
    /// scale: EvalMod then ends at about `2^53` rather than `2^40`, and SlotsToCoeffs lowers the scale
    /// to the user's matrix by matrix (50-bit primes there gained 3 to 4 bits over 40-bit ones at
    /// `N = 2^11` and `2^13`; 55-bit ones 0.5 more at `N = 2^16` under the dense secret). EvalMod has
    /// the depth of `K = 12`, i.e. of a secret of Hamming weight 32 after sparse-secret encapsulation
    /// (`K = ceil(7 sqrt(33 / 12))`), which [`crate::BootstrapParams::for_context`] applies to this
    /// dense secret (itself `K ≈ 423`, more double angles than the chain has). Precision at full slots
    /// (`docs/ckks-bootstrapping.md`, indicative): about 23.2 / 26.4 bits min / median, at the floor of
    /// one rescaling at the user's scale `2^40` under a dense secret (about 23 bits min); 25 bits at
    /// the minimum need [`Preset::Boot128N16Precise`].
    Boot128N16,
    /// Bootstrapping at 25 bits of precision, 128-bit (HE Standard and our estimator, dense ternary
    /// secret): [`Preset::Boot128N16`] at a user scale of `2^43` with a lower message ratio. `N =
    /// 2^16`, `q_0` of 60 bits and nine 43-bit scaling primes (9 levels after each bootstrapping of
    /// full slots), then 3 x 55 bits (SlotsToCoeffs), 12 x 60 bits (EvalMod: a cosine of degree 127
    /// without double angles and an arcsine of degree 31 at a message ratio of `2^3.25`,
    /// [`crate::bootstrap::BOOTSTRAP_PRIMES_EVAL_MOD_CHOICES`]), 4 x 56 bits (CoeffsToSlots);
    /// `dnum = 10` (digits of at most 3 primes, at most 180 bits), `P` = 3 primes of 60 bits; `log Q ≈
    /// 1556`, `log2(QP) ≈ 1736 <= 1747`. Each of its three changes removes one limit of
    /// [`Preset::Boot128N16`]'s precision (`docs/ckks-bootstrapping.md`, stage table): the user's scale
    /// `2^43` the last rescaling's floor (23.1 bits min at `2^40`), the ratio `2^3.25` (against `2^5`)
    /// EvalMod's rounding and the errors before the reduction, which it multiplies; the smaller `P`
    /// pays the EvalMod level this costs. Precision at full slots (indicative): about 25.6 / 28.3 bits
    /// min / median, against 23.2 / 26.4. The price: key-switching keys of 10 digits instead of 6
    /// (about 1.6 times the size) and a slower bootstrapping, which is why it is not the default.
    Boot128N16Precise,
    /// Bootstrapping for tests and benchmarks, **insecure** (`log2(QP) ≈ 1469` is beyond the 881 of
    /// `N = 2^15`, and the secret is sparse, `h = 32`): the bootstrapping primes of
    /// [`Preset::Boot128N16`] at `N = 2^15` with three user levels. No 128-bit set fits at this `N`: the
    /// circuit alone takes about 970 bits of `Q`.
    BootTestN15,
}

impl Preset {
    /// All presets.
    pub const ALL: [Preset; 16] = [
        Preset::PaperTable1L5,
        Preset::PaperTable1L10,
        Preset::PaperTable1L15,
        Preset::PaperTable2,
        Preset::PaperTable3,
        Preset::PaperTable4,
        Preset::Rec128N13,
        Preset::Rec128N14,
        Preset::Rec128N15,
        Preset::Rec128N16,
        Preset::FastPrime128L5,
        Preset::FastPrime128L10,
        Preset::FastPrime128L15,
        Preset::Boot128N16,
        Preset::Boot128N16Precise,
        Preset::BootTestN15,
    ];

    /// The fast-prime presets, every prime below `2^50` ([`Preset::FastPrime128L5`]), with the paper
    /// preset of the same `N` and depth each is measured against (`rnsfhe bench ckks-table1`).
    pub const FAST_PRIME: [(Preset, Preset); 3] = [
        (Preset::FastPrime128L5, Preset::PaperTable1L5),
        (Preset::FastPrime128L10, Preset::PaperTable1L10),
        (Preset::FastPrime128L15, Preset::PaperTable1L15),
    ];

    /// The parameter literal of the preset (see each variant for the numbers).
    pub fn params(self) -> CkksParams {
        let paper = |log_n: u32, log_scale: u32, levels: usize, special: usize| CkksParams {
            log_n,
            log_scale,
            q0_bits: 61,
            levels,
            bootstrap_primes: Vec::new(),
            special_primes: special,
            special_bits: 60,
            dnum: 3,
            secret: SecretDistribution::HammingWeight(DEFAULT_HAMMING_WEIGHT),
            sigma: 3.2,
            conversion: ConversionMode::Fast,
            rescaling: RescalingPolicy::FixedNominalScale,
            // The paper's sparse-secret, 80-bit parameters: reproduction only.
            insecure_for_testing: true,
        };
        let rec = |log_n: u32, q0: u32, levels: usize, dnum: usize, special: usize, bits: u32| {
            CkksParams {
                log_n,
                log_scale: 40,
                q0_bits: q0,
                levels,
                bootstrap_primes: Vec::new(),
                special_primes: special,
                special_bits: bits,
                dnum,
                secret: SecretDistribution::Ternary,
                sigma: 3.2,
                conversion: ConversionMode::Fast,
                rescaling: RescalingPolicy::ExactScale,
                insecure_for_testing: false,
            }
        };
        // The fast-prime presets: the paper's dnum = 3 with as many special primes as a digit has primes
        // (as the paper presets), every prime below 2^50. Qu-Xu primes near 2^49 stay below 2^50 in
        // ExactInteger mode too, which is why q_0 and P use 49 bits rather than 50.
        let fast = |log_n: u32, levels: usize, special: usize| CkksParams {
            log_n,
            log_scale: 45,
            q0_bits: 49,
            levels,
            bootstrap_primes: Vec::new(),
            special_primes: special,
            special_bits: 49,
            dnum: 3,
            secret: SecretDistribution::Ternary,
            sigma: 3.2,
            conversion: ConversionMode::Fast,
            // Scaling primes within about 2^-21 of 2^45 at these N: the nominal-scale approximation would
            // cost precision at a 45-bit scale, exact scales do not.
            rescaling: RescalingPolicy::ExactScale,
            insecure_for_testing: false,
        };
        // Bootstrapping presets: the user's 40-bit levels, then SlotsToCoeffs (55), EvalMod (60) and
        // CoeffsToSlots (56) primes, bottom first (Preset::Boot128N16).
        let boot = |log_n: u32, levels: usize, secret: SecretDistribution| CkksParams {
            log_n,
            log_scale: 40,
            q0_bits: 60,
            levels,
            bootstrap_primes: [vec![55; 3], vec![60; 10], vec![56; 4]].concat(),
            special_primes: 5,
            special_bits: 60,
            dnum: 6,
            secret,
            sigma: 3.2,
            conversion: ConversionMode::Fast,
            rescaling: RescalingPolicy::ExactScale,
            insecure_for_testing: secret != SecretDistribution::Ternary,
        };
        match self {
            Preset::Boot128N16 => boot(16, 9, SecretDistribution::Ternary),
            Preset::Boot128N16Precise => CkksParams {
                log_scale: 43,
                bootstrap_primes: [vec![55; 3], vec![60; 12], vec![56; 4]].concat(),
                special_primes: 3,
                dnum: 10,
                ..boot(16, 9, SecretDistribution::Ternary)
            },
            Preset::BootTestN15 => boot(15, 3, SecretDistribution::HammingWeight(32)),
            Preset::PaperTable1L5 => paper(15, 55, 5, 2),
            Preset::PaperTable1L10 => paper(15, 55, 10, 4),
            Preset::PaperTable1L15 => paper(16, 55, 15, 6),
            Preset::PaperTable2 => paper(14, 55, 4, 2),
            Preset::PaperTable3 => paper(14, 55, 2, 2),
            Preset::PaperTable4 => paper(16, 40, 25, 7),
            Preset::Rec128N13 => rec(13, 45, 3, 4, 1, 50),
            Preset::Rec128N14 => rec(14, 50, 6, 3, 3, 44),
            Preset::Rec128N15 => rec(15, 50, 15, 4, 4, 43),
            Preset::Rec128N16 => rec(16, 50, 32, 4, 9, 42),
            Preset::FastPrime128L5 => fast(15, 5, 2),
            Preset::FastPrime128L10 => fast(15, 10, 4),
            Preset::FastPrime128L15 => fast(16, 15, 6),
        }
    }

    /// The preset in conversion mode `mode`: [`Preset::params`] with `mode` for `Fast` and `ExactFloat`
    /// (the same chain and key-switching layout), [`CkksParams::for_exact_integer`] for `ExactInteger`
    /// (the same layout where `q_0` has its own digit or the scaling primes' size, one prime per digit
    /// otherwise; see the [module documentation](self#conversion-modes)).
    pub fn params_with_conversion(self, mode: ConversionMode) -> CkksParams {
        let p = self.params();
        match mode {
            ConversionMode::ExactInteger => p.for_exact_integer(),
            _ => CkksParams {
                conversion: mode,
                ..p
            },
        }
    }

    /// The security level the preset claims (`None` for the paper's presets, which target 80 bits with a
    /// sparse secret outside the HE Standard table, and for [`Preset::BootTestN15`]).
    pub fn claimed_security(self) -> Option<SecurityLevel> {
        match self {
            Preset::PaperTable1L5
            | Preset::PaperTable1L10
            | Preset::PaperTable1L15
            | Preset::PaperTable2
            | Preset::PaperTable3
            | Preset::PaperTable4
            | Preset::BootTestN15 => None,
            _ => Some(SecurityLevel::Bits128),
        }
    }

    /// `ceil(log2 Q_L)` of the paper's tables for the paper presets (Table 1: 336, 611, 886; Table 2: 281;
    /// Table 3: 171; Table 4: 1061), `None` otherwise.
    pub fn paper_log_q(self) -> Option<u32> {
        match self {
            Preset::PaperTable1L5 => Some(336),
            Preset::PaperTable1L10 => Some(611),
            Preset::PaperTable1L15 => Some(886),
            Preset::PaperTable2 => Some(281),
            Preset::PaperTable3 => Some(171),
            Preset::PaperTable4 => Some(1061),
            _ => None,
        }
    }
}
