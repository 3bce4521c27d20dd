//! CKKS bootstrapping: a ciphertext at the bottom of the chain becomes one of the same slots at a high
//! level (Cheon-Han-Kim-Kim-Song, "Bootstrapping for Approximate Homomorphic Encryption", Eurocrypt
//! 2018; with the merged DFT levels and the scale management of Bossuat-Mouchet-Troncoso-Pastoriza-
//! Hubaux, "Efficient Bootstrapping for Approximate Homomorphic Encryption with Non-Sparse Keys",
//! Eurocrypt 2021).
//!
//! # The circuit
//!
//! [`Evaluator::bootstrap`] runs, for a ciphertext of `n` slots holding `Delta z` (`Delta` its scale):
//!
//! 1. **drop to `q_0`** (level 1) and **ModRaise** to the top of the chain ([`Evaluator::mod_raise`]):
//!    the plaintext becomes `m + q_0 I`, `m = Delta z` read as a polynomial, `I` an integer polynomial
//!    (of standard deviation `sigma_I = sqrt((1 + ||s||^2) / 12)` per coefficient,
//!    [`crate::mod_raise`]). With [`BootstrapParams::sparse_secret`] `= Some(h)` the raise runs under a
//!    sparse secret of Hamming weight `h` instead ([`SparseEncapsulation::raise_ciphertext`], Bossuat-
//!    Troncoso-Pastoriza-Hubaux, ACNS 2022, Section 4): one key switch to it over `q_0 P`, the raise,
//!    one key switch back at the top, and `sigma_I = sqrt((1 + h) / 12)` whatever the CKKS secret (1.7
//!    for `h = 32` against 42 for a dense ternary secret at `N = 2^15`). The raised
//!    ciphertext is **declared** at the scale `S = Delta_c / K'` ([`EvalMod::normalized_scale`] of
//!    CoeffsToSlots' output level `c`): the declaration costs nothing, and CoeffsToSlots' factor
//!    `S / (q_0 g)` is chosen so that its slots read `t = c_k / q_0 = I_k + m_k / q_0` at that scale;
//! 2. **sparse slots** (`2n <= N/2`): the coefficients outside the subring of `n` slots are cleared by
//!    the trace ([`Evaluator::subring_trace`], `log2(g)` key switches, `g = N / (2n)`; it multiplies the
//!    subring's coefficients by `g`, which the factor above divides out). It runs before CoeffsToSlots'
//!    last matrix, where its key switches are cheaper: the matrices before commute with it;
//! 3. **CoeffsToSlots** ([`crate::dft`]) into real slots: full slots (`n = N/2`) give two ciphertexts,
//!    the real and imaginary parts ([`CoeffsToSlotsOutput::RealImaginary`]); sparse slots give one
//!    ciphertext of `2n` slots, the real parts then the imaginary parts
//!    ([`CoeffsToSlots::paired_last_matrix`], Bossuat et al. 2021, Section 4);
//! 4. **EvalMod** ([`Evaluator::eval_mod`], cosine, double angles, optional arcsine) with the factor
//!    `q_0 / Delta`: `t = I + m_k / q_0` becomes `m_k / Delta`, the coefficients of `z`. Full slots
//!    reduce the two halves separately (two EvalMods), sparse slots in one;
//! 5. **SlotsToCoeffs** ([`crate::dft`], factor 1): full slots first join the halves as
//!    `real + i imaginary` (the monomial `X^(N/2)`, exact); sparse slots join them in its first matrix
//!    ([`SlotsToCoeffs::paired_first_matrix`]). The coefficients go back where the encoder reads them:
//!    the slots hold `z` again.
//!
//! Every DFT matrix is encoded at the prime its rescaling drops (the scale passes through exactly), and
//! EvalMod takes its input at the scale it needs without a level and returns the default scale of its
//! output level ([`crate::CkksContext::level_scale`]); the result has
//! [`Bootstrapper::output_scale`], the default scale of the result's own level (SlotsToCoeffs'
//! matrices carry the ratio of that scale to EvalMod's, see [`crate::context`]'s Scales), at level
//! [`Bootstrapper::output_level`], `top - c2s_levels - EvalMod::depth - s2c_levels` (limbs), leaving
//! [`Bootstrapper::levels_left`] multiplications to the user.
//!
//! # The message scale against `q_0`
//!
//! EvalMod promises its result for `|m_k| / q_0 <= eps_max = 2^-log_message_ratio`
//! ([`EvalModParams::log_message_ratio`]). The coefficients of an encoding are averages of the slots
//! times roots of unity, so `|m_k| <= Delta max |z|`: values `|z| <= 1` need `q_0 / Delta >=
//! 2^log_message_ratio`, which [`Evaluator::bootstrap`] checks on the input's scale (the one error it
//! can detect on the inputs; values above 1 in magnitude are the caller's to avoid). The ratio is also
//! the factor by which EvalMod's approximation error and the CKKS noise before it reach the output:
//! a larger `q_0` against `Delta` lowers the sine's error, a smaller one lowers the noise.
//!
//! When `q_0` is much larger than the input's scale (a chain with bootstrapping primes,
//! [`crate::CkksParams::bootstrap_primes`]: `q_0` of 60 bits under a user scale of `2^40`), the input
//! is first multiplied at level 1 by the largest integer `c` keeping `c Delta <= q_0
//! 2^-log_message_ratio` (no level, exact), so that the circuit runs at the ratio it was made for
//! rather than at `q_0 / Delta` (Lattigo's bootstrapper does the same; Bossuat et al. 2021, Section 6).
//!
//! # Error
//!
//! [`Bootstrapper::error_bound`] bounds the real or imaginary part of the error of one output slot
//! against the input's decryption, in units of the values, as the sum of four terms, five with the
//! encapsulation (each a high-probability bound: errors of different coefficients taken as
//! independent, RNS-CKKS Appendix A.2's heuristic, `6` standard deviations; for bounded terms
//! Hoeffding's inequality gives the same `6 sqrt(n) b`):
//!
//! * **EvalMod's approximation**: each coefficient is off by at most `(q_0 / Delta) b_em`, `b_em` the
//!   [`EvalMod::error_bound`] total; SlotsToCoeffs sums `2n` such coefficients with unit weights into a
//!   slot (a real part sees `n` of them in variance): `6 sqrt(n) (q_0 / Delta) b_em`;
//! * **the noise of CoeffsToSlots' output**, in `t` units: the rounding of its last rescaling
//!   (coefficient variance `(1 + ||s||^2) / 12`, doubled by `w + conj(w)`) and the key switch of the
//!   conjugation ([`rnsfhe_core::RlweContext::key_switch_noise`]), `N` times that variance per slot
//!   over `S^2`; for sparse slots, the trace's `log2(g)` key switches, multiplied by the last matrix's
//!   largest squared row norm; and the rounding of the encoded diagonals ([`crate::dft`]: about
//!   `sqrt(D N / 6) |x| / q_l` per slot on slot values `x`, which are large on the raised ciphertext,
//!   `sqrt(N) q_0 sigma_I / S`), through the later matrices. EvalMod passes it with slope at most 1
//!   (`d/dt sin(2 pi t) / (2 pi)`), times `q_0 / Delta`, and SlotsToCoeffs sums `n` in variance as
//!   above;
//! * **EvalMod's own rounding**: each rescaling rounds with a slot error of standard deviation
//!   `epsilon = sqrt(N (1 + ||s||^2) / 24) / Delta_w` relative to the working scale `Delta_w`, and an
//!   error in an intermediate value reaches the output times the derivative of the rest of the
//!   circuit ([`eval_mod_amplification`]): `T_k` of the cosine's power basis is computed through
//!   `ceil(log2 k)` products, each of which multiplies the error of its operands by at most 4 (the
//!   worst case of [`crate::eval_mod`]'s noise model, reached near `x = 0`), so the cosine carries
//!   `sum_k |a_k| 4^ceil(log2 k)` plus one rounding per level; each double angle multiplies it by
//!   `4 |y_j| <= 4` (the last by `4 cos(pi / 4 - pi eps_max)`) and adds its own; the arcsine's slope
//!   and levels follow; `eps` units divide by `2 pi`. Then as above. The last rescaling rounds at
//!   EvalMod's output scale, in units of the values (`6 sqrt(n)` times its slot deviation over that
//!   scale): on a chain with bootstrapping primes that scale is the user's, well below the working
//!   scale;
//! * **SlotsToCoeffs' own noise**: per matrix, the rescaling's rounding and its rotations' key switches
//!   at the output scale, amplified by at most `n` (the squared row norms of its butterflies, 2 per
//!   stage).
//!
//! * **the encapsulation's key switches** (with [`BootstrapParams::sparse_secret`]): both add their
//!   noise to the coefficients before the reduction, `e / q_0` in `t` units
//!   ([`SparseEncapsulation::low_key_switch_noise`] and the top level's key switch), then as the
//!   CKKS noise above.
//!
//! The input's own error passes through unchanged (EvalMod's slope is 1): it is not part of the bound.
//!
//! # Failure probability
//!
//! EvalMod is correct for `|I_k| <= K` only. Each `I_k` is a sum of `1 + ||s||^2` (or `1 + h` under
//! the encapsulation) uniform variables on `[-1/2, 1/2)`, strictly sub-Gaussian, so
//! `P(|I_k| > K) <= 2 exp(-K^2 / (2 sigma_I^2))` ([`EvalModParams::k_for_secret`]); a bootstrapping
//! reduces `2n` coefficients (all `N` for full slots), and [`Bootstrapper::failure_probability`] is the
//! union bound `2n 2 exp(-K^2 / (2 sigma_I^2))` over them (`~2e-6` at `N = 2^15`, full slots, for the
//! `K` of [`BootstrapParams::for_context`]).
//!
//! # Around it
//!
//! META-BTS (Bae et al. 2022, a second pass on the scaled-up error) is [`Evaluator::bootstrap_meta`]
//! ([`crate::meta_bootstrap`]); automatic bootstrapping before a product that has no level left is
//! the opt-in [`Evaluator::with_auto_bootstrap`] ([`crate::auto_bootstrap`]); the keys travel as one
//! wire object, [`BootstrappingKeys`].
//!
//! # Measuring the steps
//!
//! [`Evaluator::bootstrap_stages`] keeps the ciphertext after each step ([`BootstrapStages`]) so that
//! each step's error can be measured with the secret key (`docs/ckks-bootstrapping.md`, stage table).

use std::f64::consts::PI;
use std::sync::Arc;

use rnsfhe_core::SecretDistribution;
use rnsfhe_ring::parallel::active_wait;

use crate::context::CkksContext;
use crate::dft::{
    dft_factors, CoeffsToSlots, CoeffsToSlotsOutput, CoeffsToSlotsResult, DftDirection,
    SlotsToCoeffs,
};
use crate::encapsulation::{SparseEncapsulation, DEFAULT_SPARSE_WEIGHT};
use crate::error::{Error, Result};
use crate::eval_mod::{EvalMod, EvalModParams, MAX_DOUBLE_ANGLE};
use crate::evaluator::Evaluator;
use crate::keys::{GaloisKeys, KeyGenerator};
use crate::linear_transform::{EncodedLinearTransform, LinearTransform};
use crate::mod_raise::subring_trace_elements;
use crate::plaintext::Ciphertext;
use crate::Complex64;
use rnsfhe_math::sampling::Csprng;

const OP: &str = "bootstrapping";

/// Standard deviations of the `I` bound `K` chosen by [`BootstrapParams::for_context`]: `P(|I| > K)
/// <= 2 exp(-49 / 2) ~ 5e-11` per coefficient ([`EvalModParams::k_for_secret`]).
pub const DEFAULT_K_SIGMAS: f64 = 7.0;

/// The accuracy [`BootstrapParams::for_context`] asks of the cosine after its double angles
/// ([`crate::EvalModBound::double_angle`]): `2^-26`, below the precision CKKS noise leaves at these
/// scales, so that more double angles (one level and a factor 4 on the noise each) would buy nothing.
pub const DEFAULT_DOUBLE_ANGLE_ACCURACY: f64 = 1.0 / (1u64 << 26) as f64;

/// The sine's own error ([`crate::EvalModBound::sine`]) above which [`BootstrapParams::for_context`]
/// adds an arcsine of degree 3 (two levels): `2^-26`, as [`DEFAULT_DOUBLE_ANGLE_ACCURACY`].
pub const DEFAULT_SINE_ACCURACY: f64 = DEFAULT_DOUBLE_ANGLE_ACCURACY;

/// The message ratio `log2(q_0 / Delta)` [`BootstrapParams::for_context`] chooses on a chain with
/// bootstrapping primes (when `q_0 / Delta_1` is larger): `2^5`. The input is multiplied up to
/// `q_0 2^-5` before ModRaise. The ratio multiplies every error before the reduction and EvalMod's own
/// rounding, the largest term of [`crate::Preset::Boot128N16`] (`docs/ckks-bootstrapping.md`, stage
/// table): 5 instead of Lattigo's 8 (Bossuat et al. 2021, Section 6 and Table 5 use 8 to 9 bits) gains
/// about 1.6 bits of precision at `N = 2^15` and `2^16` under a dense secret, while the arcsine of
/// degree [`BOOTSTRAP_PRIMES_ARCSINE_DEGREE`] keeps the approximation error at the worst message (one
/// coefficient at `eps_max`, a constant `z = 1`) near `2^-24` (its Taylor remainder, about
/// `(q_0 / Delta) (2 pi eps_max)^9 / (33 * 2 pi)`; `2^-25` for degree 3 at `2^8`), below what the
/// noise leaves at `N = 2^16`.
pub const BOOTSTRAP_PRIMES_MESSAGE_RATIO: f64 = 5.0;

/// The arcsine's degree [`BootstrapParams::for_context`] chooses on a chain with bootstrapping primes
/// (3 levels; 3 on other chains, 2 levels): see [`BOOTSTRAP_PRIMES_MESSAGE_RATIO`].
pub const BOOTSTRAP_PRIMES_ARCSINE_DEGREE: usize = 7;

/// The message ratios and arcsine degrees [`BootstrapParams::for_context`] tries on a chain with
/// bootstrapping primes, lowest ratio first: it takes the first whose EvalMod leaves CoeffsToSlots its
/// most levels (4 for 16 slots or more) and SlotsToCoeffs its fewest
/// (`ceil(log2(slots) / MAX_DFT_RADIX_BITS)`), else the last. Each halving of the ratio halves
/// EvalMod's rounding and the errors before the reduction (the largest terms once the user's scale is
/// `2^43`: `docs/ckks-bootstrapping.md`, stage table), and the arcsine's degree doubles to keep its
/// Taylor remainder at the worst message, `(q_0 / Delta) c_(a+2) sin(2 pi eps_max)^(a+2) / (2 pi)`,
/// below `2^-28` (`2^-29.9` for degree 31 at `2^3.25`, `2^-28.5` for 15 at `2^4`, `2^-23.9` for 7 at
/// `2^5`): one more level each. [`crate::Preset::Boot128N16`] (17 bootstrapping primes) gets ratio
/// `2^5` and degree 7, [`crate::Preset::Boot128N16Precise`] (19) ratio `2^3.25` and degree 31.
pub const BOOTSTRAP_PRIMES_EVAL_MOD_CHOICES: [(f64, usize); 3] = [
    (3.25, 31),
    (4.0, 15),
    (
        BOOTSTRAP_PRIMES_MESSAGE_RATIO,
        BOOTSTRAP_PRIMES_ARCSINE_DEGREE,
    ),
];

/// The cosine degrees [`BootstrapParams::for_context`] tries on a chain with bootstrapping primes,
/// each with its fewest double angles. For `K = 12` (the encapsulation's `h = 32`) degree 127 needs
/// none (7 levels) where degree 31 needs 3 (8 levels): the level saved pays for the arcsine of degree
/// 7. EvalMod's measured rounding noise is the same for degree 31 with 3 double angles, 63 with 2, 127
/// with 1 and 255 with none (`docs/ckks-bootstrapping.md`).
pub const BOOTSTRAP_PRIMES_COSINE_DEGREES: [usize; 4] = [31, 63, 127, 255];

/// On a chain with bootstrapping primes, [`BootstrapParams::for_context`] gives each DFT at least
/// `ceil(log2(slots) / 5)` levels (3 for `2^15` slots): at most `2^5` butterflies' worth of diagonals
/// per merged matrix (Bossuat et al. 2021, Section 4: the merged levels trade depth for diagonals).
pub const MAX_DFT_RADIX_BITS: usize = 5;

/// The parameters of a bootstrapping circuit (see the [module documentation](self)), as a literal
/// struct checked by [`Bootstrapper::new`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BootstrapParams {
    /// The slot count of the ciphertexts to bootstrap: a power of two up to `N/2` (full slots); below
    /// `N/2` the sparse-slot circuit runs (trace, one EvalMod on `2 slots` slots).
    pub slots: usize,
    /// Levels (merged matrices) of CoeffsToSlots, 1 to `min(4, log2(slots))`.
    pub c2s_levels: usize,
    /// Levels of SlotsToCoeffs, 1 to `min(4, log2(slots))`.
    pub s2c_levels: usize,
    /// The approximate reduction modulo `q_0`; its `start_level` must be `None` (it runs right after
    /// CoeffsToSlots). Its `k` must cover the integer parts of the raise: `sigma_I` of the CKKS secret,
    /// or of `sparse_secret` when set ([`Bootstrapper::failure_probability`]).
    pub eval_mod: EvalModParams,
    /// `Some(h)`: ModRaise under a sparse secret of Hamming weight `h` (sparse-secret encapsulation,
    /// [`SparseEncapsulation`]; its keys come from [`KeyGenerator::bootstrapping_keys`]); `None`: under
    /// the CKKS secret.
    pub sparse_secret: Option<usize>,
}

/// `E||s||^2` of the secret the raise runs under: `h` of the encapsulation, else the CKKS secret's.
fn raise_norm_sq(ctx: &CkksContext, sparse_secret: Option<usize>) -> f64 {
    sparse_secret.map_or_else(
        || expected_norm_sq(ctx.params().secret, ctx.n()),
        |h| h as f64,
    )
}

/// The expected `||s||^2` of a secret of the distribution, in the ring of degree `n`.
pub(crate) fn expected_norm_sq(secret: SecretDistribution, n: usize) -> f64 {
    match secret {
        SecretDistribution::Ternary => 2.0 * n as f64 / 3.0,
        SecretDistribution::HammingWeight(h) => h as f64,
    }
}

impl BootstrapParams {
    /// Defaults for `ctx` and `slots`: an EvalMod for the context's secret and chain, and
    /// CoeffsToSlots and SlotsToCoeffs on 3 levels (fewer for fewer than 8 slots) on a chain without
    /// bootstrapping primes; on a chain with them ([`crate::CkksParams::bootstrap_primes`]), the circuit fills
    /// exactly the bootstrapping levels, so that its output lands at the user's top level
    /// ([`CkksContext::user_max_level`]): what EvalMod leaves is split between CoeffsToSlots (the larger
    /// half) and SlotsToCoeffs, each `ceil(log2(slots) / MAX_DFT_RADIX_BITS)` to `min(4, log2(slots))`
    /// levels (SlotsToCoeffs lowest, on the bottom primes). EvalMod:
    ///
    /// * sparse-secret encapsulation with `h =` [`DEFAULT_SPARSE_WEIGHT`] for a dense (uniform ternary)
    ///   secret, none for a Hamming-weight secret;
    /// * `K = ceil(7 sigma_I)`, `sigma_I = sqrt((1 + E||s||^2) / 12)`, `E||s||^2` the CKKS secret's or
    ///   `h` under the encapsulation ([`EvalModParams::k_for_secret`], [`DEFAULT_K_SIGMAS`]):
    ///   `P(|I_k| > K) <= 2 exp(-24.5) ~ 5e-11` per coefficient, so about `N 5e-11` per bootstrapping
    ///   (`3e-6` at `N = 2^16`), the failure probability of EvalMod
    ///   ([`Bootstrapper::failure_probability`]);
    /// * `log_message_ratio = log2(q_0 / Delta_1)`, `Delta_1` the default scale of level 1 (rounded
    ///   down to `1/16`): values `|z| <= 1` at that scale; on a chain with bootstrapping primes at most
    ///   the ratio of [`BOOTSTRAP_PRIMES_EVAL_MOD_CHOICES`] that fits (`2^5`,
    ///   [`BOOTSTRAP_PRIMES_MESSAGE_RATIO`], when no lower one does; the input is then multiplied up,
    ///   [`Evaluator::bootstrap`]);
    /// * a Chebyshev cosine of degree 31 with the fewest double angles whose error is at most
    ///   [`DEFAULT_DOUBLE_ANGLE_ACCURACY`], and an arcsine of degree 3 when the sine's own error exceeds
    ///   [`DEFAULT_SINE_ACCURACY`]; on a chain with bootstrapping primes, the shallowest of the cosines
    ///   of [`BOOTSTRAP_PRIMES_COSINE_DEGREES`] and the arcsine's degree of the chosen ratio in
    ///   [`BOOTSTRAP_PRIMES_EVAL_MOD_CHOICES`] (the first whose EvalMod leaves CoeffsToSlots 4 levels
    ///   and SlotsToCoeffs at least its fewest).
    ///
    /// Errors: [`Error::InvalidSlots`]; [`Error::InvalidEvalMod`] when no double-angle count reaches
    /// the accuracy (a `K` beyond what 16 double angles cover) or the ratio is outside EvalMod's range;
    /// [`Error::InvalidArgument`] when the bootstrapping primes leave the DFTs fewer levels than that
    /// besides EvalMod (naming the levels).
    pub fn for_context(ctx: &CkksContext, slots: usize) -> Result<Self> {
        let sparse_secret =
            (ctx.params().secret == SecretDistribution::Ternary).then_some(DEFAULT_SPARSE_WEIGHT);
        Self::for_context_with_sparse_secret(ctx, slots, sparse_secret)
    }

    /// [`BootstrapParams::for_context`] with the encapsulation chosen by the caller: `Some(h)` raises
    /// under a sparse secret of Hamming weight `h`, `None` under the CKKS secret (for a dense secret,
    /// `K` about `7 sqrt(N / 18)`: 296 at `N = 2^15`, and more double angles).
    ///
    /// Errors: as [`BootstrapParams::for_context`].
    pub fn for_context_with_sparse_secret(
        ctx: &CkksContext,
        slots: usize,
        sparse_secret: Option<usize>,
    ) -> Result<Self> {
        ctx.encoder().check_slots(slots)?;
        let k = EvalModParams::k_for_secret(raise_norm_sq(ctx, sparse_secret), DEFAULT_K_SIGMAS)?;
        let q0 = ctx.q_moduli()[0] as f64;
        let ratio = ((q0 / ctx.level_scale(1)?).log2() * 16.0).floor() / 16.0;
        let upper = ctx.bootstrap_levels();
        let log_slots = slots.trailing_zeros().max(1) as usize;
        let max_dft = 4usize.min(log_slots);
        // A DFT level merges at most 2^MAX_DFT_RADIX_BITS butterflies' worth of diagonals: fewer levels
        // would encode thousands of diagonals at the top of the chain.
        let min_dft = log_slots.div_ceil(MAX_DFT_RADIX_BITS).clamp(1, max_dft);
        let fit = |eval_mod: EvalModParams, depth: usize| -> Result<Self> {
            let (c2s_levels, s2c_levels) = if upper == 0 {
                let levels = 3usize.min(max_dft);
                (levels, levels)
            } else {
                let left = upper
                    .checked_sub(depth)
                    .filter(|&l| l >= 2 * min_dft)
                    .ok_or_else(|| Error::InvalidArgument {
                        operation: "BootstrapParams::for_context",
                        reason: format!(
                            "the chain has {upper} bootstrapping primes, but EvalMod (K = {k}) takes \
                             {depth} levels and each DFT on {slots} slots at least {min_dft}: add \
                             bootstrapping primes (at least {}) or use a sparser secret (smaller K)",
                            depth + 2 * min_dft
                        ),
                    })?;
                let c2s = left.div_ceil(2).min(max_dft);
                (c2s, (left - c2s).clamp(1, max_dft))
            };
            Ok(Self {
                slots,
                c2s_levels,
                s2c_levels,
                eval_mod,
                sparse_secret,
            })
        };
        // The EvalMod of one message ratio and the arcsine's degree where the sine needs one.
        let eval_mod_for = |ratio: f64, arcsine: usize| -> Result<(EvalModParams, usize)> {
            let eps_max = ratio.exp2().recip();
            let sine = (2.0 * PI * eps_max).powi(3) / 6.0 / (2.0 * PI);
            let arcsine_degree = if sine > DEFAULT_SINE_ACCURACY {
                arcsine
            } else {
                0
            };
            // Chains with bootstrapping primes: the shallowest cosine of
            // BOOTSTRAP_PRIMES_COSINE_DEGREES (the lowest degree among equals) and its fewest double
            // angles, whose level pays for the arcsine's third; otherwise degree 31.
            let degrees: &[usize] = if upper > 0 {
                &BOOTSTRAP_PRIMES_COSINE_DEGREES
            } else {
                &[31]
            };
            let mut last = None;
            let mut best: Option<(EvalModParams, usize)> = None;
            for &cos_degree in degrees {
                for double_angle in 0..=MAX_DOUBLE_ANGLE {
                    let eval_mod = EvalModParams {
                        k,
                        log_message_ratio: ratio,
                        double_angle,
                        cos_degree,
                        arcsine_degree,
                        start_level: None,
                    };
                    match EvalMod::new(eval_mod) {
                        Ok(em)
                            if em.error_bound().double_angle <= DEFAULT_DOUBLE_ANGLE_ACCURACY =>
                        {
                            if best.is_none_or(|(_, depth)| em.depth() < depth) {
                                best = Some((eval_mod, em.depth()));
                            }
                            break;
                        }
                        Ok(_) => {}
                        Err(e) => last = Some(e),
                    }
                }
            }
            best.ok_or_else(|| {
                last.unwrap_or(Error::InvalidEvalMod {
                    parameter: "double_angle",
                    reason: format!(
                        "no double-angle count up to {MAX_DOUBLE_ANGLE} brings a cosine of degree \
                         {degrees:?} within 2^-26 for K = {k}"
                    ),
                })
            })
        };
        if upper == 0 {
            let (eval_mod, depth) = eval_mod_for(ratio, 3)?;
            return fit(eval_mod, depth);
        }
        // A lower ratio where its deeper arcsine leaves the DFTs their levels, the last choice
        // otherwise (and its error when even that does not fit).
        let [lower @ .., (last_ratio, last_arcsine)] = BOOTSTRAP_PRIMES_EVAL_MOD_CHOICES;
        for (choice, arcsine) in lower.into_iter().filter(|&(choice, _)| choice < ratio) {
            let fitted =
                eval_mod_for(choice, arcsine).and_then(|(eval_mod, depth)| fit(eval_mod, depth));
            if let Ok(bp) = fitted {
                if bp.c2s_levels == max_dft && bp.s2c_levels >= min_dft {
                    return Ok(bp);
                }
            }
        }
        let (eval_mod, depth) = eval_mod_for(ratio.min(last_ratio), last_arcsine)?;
        fit(eval_mod, depth)
    }
}

/// The terms of [`Bootstrapper::error_bound`] (see the [module documentation](self#error)): bounds on
/// the real or imaginary part of one output slot's error against the input's decryption, in units of
/// the values.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BootstrapBound {
    /// EvalMod's approximation error ([`EvalMod::error_bound`]) through SlotsToCoeffs.
    pub eval_mod: f64,
    /// The CKKS noise of CoeffsToSlots' output (and the trace's), through EvalMod and SlotsToCoeffs.
    pub c2s_noise: f64,
    /// EvalMod's own rounding ([`crate::eval_mod`]'s noise model), through SlotsToCoeffs.
    pub eval_mod_noise: f64,
    /// SlotsToCoeffs' own rescalings and key switches.
    pub s2c_noise: f64,
    /// The two key switches of the sparse-secret encapsulation (0 without it).
    pub encapsulation_noise: f64,
    /// The sum of the terms.
    pub total: f64,
}

/// The ciphertexts between the steps of one bootstrapping ([`Evaluator::bootstrap_stages`]), for
/// measuring each step's error with the secret key (see the [module documentation](self)'s steps).
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct BootstrapStages {
    /// The integer `c` the input was multiplied by at level 1 ([`Bootstrapper::max_input_scale`]).
    pub input_multiplier: i64,
    /// EvalMod's factor `q_0 / (c Delta)`: it maps `t = c_k / q_0` units to units of the values.
    pub factor: f64,
    /// The input at level 1 after the multiplication by `input_multiplier` (step 1).
    pub scaled_input: Option<Ciphertext>,
    /// After ModRaise (and the encapsulation's key switches): plaintext `m + q_0 I` at the top.
    pub raised: Option<Ciphertext>,
    /// After CoeffsToSlots: full slots, the real and the imaginary halves (slot `j` reads
    /// `t_rev(j)` and `t_(N/2 + rev(j))`, [`crate::dft`]); sparse slots, one ciphertext of both.
    pub coeffs_to_slots: Vec<Ciphertext>,
    /// After EvalMod, in the same layout: `factor * eps`, the coefficients of the values.
    pub eval_mod: Vec<Ciphertext>,
    /// The bootstrapped ciphertext, as [`Evaluator::bootstrap`] returns it.
    pub output: Option<Ciphertext>,
}

/// A bootstrapping circuit built once for a context: the encoded DFT matrices, the EvalMod, the scale
/// of the raised ciphertext and the Galois elements it needs ([`Bootstrapper::galois_elements`],
/// [`KeyGenerator::bootstrapping_keys`]). Apply it with [`Evaluator::bootstrap`].
#[derive(Debug, Clone)]
pub struct Bootstrapper {
    ctx: Arc<CkksContext>,
    params: BootstrapParams,
    eval_mod: EvalMod,
    c2s: CoeffsToSlots,
    s2c: SlotsToCoeffs,
    /// Sparse slots: CoeffsToSlots' last matrix on `2 slots` slots and SlotsToCoeffs' first.
    paired: Option<(EncodedLinearTransform, EncodedLinearTransform)>,
    /// The scale the raised ciphertext is declared at, `Delta_c / K'`.
    raised_scale: f64,
}

impl Bootstrapper {
    /// Checks `params` against `ctx` and encodes the circuit.
    ///
    /// Errors: [`Error::InvalidSlots`] for a slot count that is not a power of two up to `N/2`;
    /// [`Error::InvalidEvalMod`] for EvalMod parameters out of range or with a start level;
    /// [`Error::InvalidArgument`] for DFT levels outside `1..=min(4, log2(slots))` or a sparse-secret
    /// weight outside `1..=N`;
    /// [`Error::BootstrapTooDeep`] when the chain has fewer levels than the circuit needs (naming how
    /// many it needs); encoding errors.
    pub fn new(ctx: &Arc<CkksContext>, params: BootstrapParams) -> Result<Self> {
        let slots = params.slots;
        ctx.encoder().check_slots(slots)?;
        if let Some(start) = params.eval_mod.start_level {
            return Err(Error::InvalidEvalMod {
                parameter: "start_level",
                reason: format!(
                    "start level {start}: in bootstrapping EvalMod runs right after CoeffsToSlots, at \
                     the level it leaves; set it to None"
                ),
            });
        }
        let eval_mod = EvalMod::new(params.eval_mod)?;
        if let Some(h) = params.sparse_secret.filter(|&h| h == 0 || h > ctx.n()) {
            return Err(Error::InvalidArgument {
                operation: OP,
                reason: format!(
                    "sparse_secret = Some({h}): the Hamming weight of the encapsulated secret must be \
                     from 1 to N = {} ({DEFAULT_SPARSE_WEIGHT} by default); None raises under the \
                     CKKS secret",
                    ctx.n()
                ),
            });
        }
        let top = ctx.max_level();
        let needed = params.c2s_levels + eval_mod.depth() + params.s2c_levels + 1;
        if top < needed {
            return Err(Error::BootstrapTooDeep {
                needed,
                available: top,
                c2s_levels: params.c2s_levels,
                eval_mod_levels: eval_mod.depth(),
                s2c_levels: params.s2c_levels,
            });
        }
        let c2s_out = top - params.c2s_levels;
        let raised_scale = eval_mod.normalized_scale(ctx, c2s_out)?;
        let q0 = ctx.q_moduli()[0] as f64;
        let gap = (ctx.n() / 2 / slots) as f64;
        let c2s = CoeffsToSlots::new(
            ctx,
            slots,
            params.c2s_levels,
            top,
            raised_scale / (q0 * gap),
            CoeffsToSlotsOutput::RealImaginary,
        )?;
        // EvalMod leaves the default scale of its output level; the matrices bring it to the default
        // scale of the level they leave (the user's scale, see crate::context's "Scales").
        let s2c_start = c2s_out - eval_mod.depth();
        let s2c_factor =
            ctx.level_scale(s2c_start - params.s2c_levels)? / ctx.level_scale(s2c_start)?;
        let s2c = SlotsToCoeffs::new(ctx, slots, params.s2c_levels, s2c_start, s2c_factor)?;
        let paired = if 2 * slots <= ctx.max_slots() {
            Some((c2s.paired_last_matrix(ctx)?, s2c.paired_first_matrix(ctx)?))
        } else {
            None
        };
        Ok(Self {
            ctx: Arc::clone(ctx),
            params,
            eval_mod,
            c2s,
            s2c,
            paired,
            raised_scale,
        })
    }

    /// The context it was built for.
    pub fn context(&self) -> &Arc<CkksContext> {
        &self.ctx
    }

    /// The fingerprint of its context ([`CkksContext::fingerprint`]).
    pub fn fingerprint(&self) -> u64 {
        self.ctx.fingerprint()
    }

    /// The parameters.
    pub fn params(&self) -> &BootstrapParams {
        &self.params
    }

    /// The slot count of the ciphertexts it bootstraps.
    pub fn slots(&self) -> usize {
        self.params.slots
    }

    /// Whether the sparse-slot circuit runs (`2 slots <= N/2`).
    pub fn is_sparse(&self) -> bool {
        self.paired.is_some()
    }

    /// The EvalMod of step 4.
    pub fn eval_mod(&self) -> &EvalMod {
        &self.eval_mod
    }

    /// The Hamming weight of the sparse secret the raise runs under, `None` without encapsulation
    /// ([`BootstrapParams::sparse_secret`]).
    pub fn sparse_secret(&self) -> Option<usize> {
        self.params.sparse_secret
    }

    /// The standard deviation `sigma_I = sqrt((1 + E||s||^2) / 12)` of one integer part of the raise,
    /// `E||s||^2` of the CKKS secret or the encapsulation's `h` (see the [module
    /// documentation](self#failure-probability)).
    pub fn integer_part_std_dev(&self) -> f64 {
        ((1.0 + raise_norm_sq(&self.ctx, self.params.sparse_secret)) / 12.0).sqrt()
    }

    /// The probability that one bootstrapping fails, an `|I_k|` above EvalMod's `K` (see the [module
    /// documentation](self#failure-probability)): the union bound `2n 2 exp(-K^2 / (2 sigma_I^2))`
    /// over the `2n` coefficients EvalMod reduces (`n` the slots), capped at 1.
    pub fn failure_probability(&self) -> f64 {
        let sigma = self.integer_part_std_dev();
        let k = f64::from(self.eval_mod.params().k);
        let per_coefficient = 2.0 * (-k * k / (2.0 * sigma * sigma)).exp();
        (2.0 * self.params.slots as f64 * per_coefficient).min(1.0)
    }

    /// The levels the circuit uses: CoeffsToSlots', EvalMod's and SlotsToCoeffs'.
    pub fn depth(&self) -> usize {
        self.params.c2s_levels + self.eval_mod.depth() + self.params.s2c_levels
    }

    /// The level (limbs) of a bootstrapped ciphertext: the top minus [`Bootstrapper::depth`].
    pub fn output_level(&self) -> usize {
        self.s2c.output_level()
    }

    /// The multiplications (rescalings) left to the user after a bootstrapping,
    /// `output_level - 1`.
    pub fn levels_left(&self) -> usize {
        self.output_level() - 1
    }

    /// The scale of a bootstrapped ciphertext: the default scale of [`Bootstrapper::output_level`]
    /// (EvalMod leaves the default scale of its own level, SlotsToCoeffs' matrices carry the ratio).
    ///
    /// Errors: none in practice (the level is on the chain).
    pub fn output_scale(&self) -> Result<f64> {
        self.ctx.level_scale(self.output_level())
    }

    /// The largest input scale the EvalMod range admits for values `|z| <= 1`:
    /// `q_0 2^-log_message_ratio` (see the [module documentation](self#the-message-scale-against-q_0)).
    pub fn max_input_scale(&self) -> f64 {
        self.ctx.q_moduli()[0] as f64 * self.eval_mod.eps_max()
    }

    /// The rotation steps the circuit needs keys for (sorted, without duplicates): those of the DFT
    /// matrices it evaluates (for sparse slots, the paired matrices in place of CoeffsToSlots' last and
    /// SlotsToCoeffs' first).
    pub fn rotation_steps(&self) -> Vec<i64> {
        let c2s = self.c2s.matrices();
        let s2c = self.s2c.matrices();
        let mut steps: Vec<i64> = match &self.paired {
            None => c2s
                .iter()
                .chain(s2c)
                .flat_map(|m| m.rotation_steps())
                .collect(),
            Some((last, first)) => c2s[..c2s.len() - 1]
                .iter()
                .chain([last, first])
                .chain(&s2c[1..])
                .flat_map(|m| m.rotation_steps())
                .collect(),
        };
        steps.sort_unstable();
        steps.dedup();
        steps
    }

    /// The trace's Galois elements (none for full slots, [`subring_trace_elements`]).
    pub fn trace_elements(&self) -> Vec<usize> {
        subring_trace_elements(self.ctx.n(), self.params.slots)
    }

    /// Every Galois element the circuit needs a key for, with the rotation step of each rotation:
    /// the rotations of [`Bootstrapper::rotation_steps`], the conjugation (`2N - 1`) and the trace's
    /// elements. [`KeyGenerator::bootstrapping_keys`] makes exactly these keys.
    pub fn galois_elements(&self) -> Vec<(usize, Option<i64>)> {
        let group = self.ctx.galois_group();
        let mut out: Vec<(usize, Option<i64>)> = self
            .rotation_steps()
            .into_iter()
            .map(|s| (group.element_of_step(s).value(), Some(s)))
            .collect();
        out.push((group.conjugation().value(), None));
        out.extend(self.trace_elements().into_iter().map(|e| (e, None)));
        out.sort_unstable();
        out.dedup_by_key(|(e, _)| *e);
        out
    }

    /// The integer `c >= 1` an input at `scale` is multiplied by at level 1 before ModRaise, and
    /// `q_0 / (c scale)`, the factor of EvalMod: the largest `c` keeping `c scale` at most
    /// [`Bootstrapper::max_input_scale`], so that the message fills EvalMod's range (Bossuat et al.
    /// 2021, Section 6: a `q_0` much larger than the user's scale is used at the message ratio the
    /// circuit was made for, not at `q_0 / Delta`). `c = 1` when the ratio is `log2(q_0 / Delta_1)`, the
    /// default of chains without bootstrapping primes. Errors: [`Error::InvalidArgument`] for a scale
    /// above [`Bootstrapper::max_input_scale`].
    fn input_scaling(&self, scale: f64) -> Result<(i64, f64)> {
        let factor = self.input_factor(scale)?;
        // Below 2^52 the product c scale stays exact enough in f64 and c fits i64.
        let c = (self.max_input_scale() / scale)
            .floor()
            .clamp(1.0, (1u64 << 52) as f64);
        Ok((c as i64, factor / c))
    }

    /// `q_0 / scale`, the factor of EvalMod for an input at `scale`, after checking that the scale is
    /// at most [`Bootstrapper::max_input_scale`].
    fn input_factor(&self, scale: f64) -> Result<f64> {
        let q0 = self.ctx.q_moduli()[0] as f64;
        let ratio = self.eval_mod.params().log_message_ratio;
        // Relative slack for the rounding of the scale bookkeeping only.
        if !(scale.is_finite() && scale > 0.0) || scale > self.max_input_scale() * (1.0 + 1e-9) {
            return Err(Error::InvalidArgument {
                operation: OP,
                reason: format!(
                    "the input's scale 2^{:.3} leaves q_0 / scale = 2^{:.3}, below the 2^{ratio} the \
                     EvalMod range needs for values |z| <= 1 (Delta |z| / q_0 <= 2^-{ratio}); rescale \
                     or drop to a lower scale first, or build the bootstrapper with a smaller \
                     log_message_ratio",
                    scale.log2(),
                    (q0 / scale).log2()
                ),
            });
        }
        Ok(q0 / scale)
    }

    /// Checks that `eval` has the relinearization key, a Galois key for every element of
    /// [`Bootstrapper::galois_elements`] and the encapsulation of [`BootstrapParams::sparse_secret`]
    /// (returned).
    fn check_keys<'a>(&self, eval: &'a Evaluator) -> Result<Option<&'a SparseEncapsulation>> {
        eval.relin_key(OP)?;
        let encapsulation = match self.params.sparse_secret {
            None => None,
            Some(h) => {
                let enc = eval.encapsulation().ok_or(Error::MissingKey {
                    operation: OP,
                    key: "sparse-secret encapsulation key (the bootstrapper raises under a sparse \
                          secret: KeyGenerator::bootstrapping_keys, Evaluator::with_bootstrapping_keys)",
                })?;
                if enc.weight() != h {
                    return Err(Error::InvalidArgument {
                        operation: OP,
                        reason: format!(
                            "the evaluator's encapsulation key is for a sparse secret of Hamming \
                             weight {}, the bootstrapper's EvalMod was made for {h}; generate the keys \
                             with KeyGenerator::bootstrapping_keys for this bootstrapper",
                            enc.weight()
                        ),
                    });
                }
                Some(enc.as_ref())
            }
        };
        let gk = eval.galois().ok_or(Error::MissingKey {
            operation: OP,
            key: "Galois key set (KeyGenerator::bootstrapping_keys)",
        })?;
        for (element, step) in self.galois_elements() {
            if gk.get(element).is_none() {
                return Err(rnsfhe_core::Error::MissingGaloisKey {
                    element,
                    step,
                    available: gk.elements(),
                }
                .into());
            }
        }
        Ok(encapsulation)
    }

    /// The bound on the error of [`Evaluator::bootstrap`] for an input at `input_scale` (see the
    /// [module documentation](self#error)): the real or imaginary part of each output slot is within
    /// `total` of the input's decryption with high probability, for values `|z| <= 1`.
    ///
    /// Errors: [`Error::InvalidArgument`] for a scale above [`Bootstrapper::max_input_scale`]; errors
    /// of the key-switching noise estimate (none in practice).
    pub fn error_bound(&self, input_scale: f64) -> Result<BootstrapBound> {
        const SIGMAS: f64 = rnsfhe_core::noise::HIGH_PROBABILITY_SIGMAS;
        let ctx = &self.ctx;
        let (_, factor) = self.input_scaling(input_scale)?;
        let big_n = ctx.n() as f64;
        let n = self.params.slots as f64;
        let norm_sq = expected_norm_sq(ctx.params().secret, ctx.n());
        let weight = norm_sq.round() as usize;
        let rounding = (1.0 + norm_sq) / 12.0;
        let v_ks = |level: usize| -> Result<f64> {
            let e = ctx.rlwe().key_switch_noise(level, weight)?;
            Ok(e.std_dev * e.std_dev)
        };
        // Through EvalMod (slope 1 in t units, times the factor) and SlotsToCoeffs (n in variance for
        // a real part): a standard deviation of `sd` per slot in t units becomes this bound.
        let through = |sd: f64| SIGMAS * n.sqrt() * factor * sd;

        let eval_mod = through(self.eval_mod.error_bound().total);

        let c2s_out = self.c2s.output_level();
        let s = self.raised_scale;
        let top = ctx.max_level();
        let levels = self.params.c2s_levels;
        let gap = (ctx.n() / 2) as f64 / n;
        let q0 = ctx.q_moduli()[0] as f64;
        // CoeffsToSlots' matrices as encoded (the factor with the 1/2 of w + conj(w)).
        let factors = dft_factors(
            ctx.encoder(),
            self.params.slots,
            levels,
            DftDirection::CoeffsToSlots,
            s / (q0 * gap) / 2.0,
        )?;
        // w + conj(w): the last rescaling's rounding twice (real part) and the conjugation's key
        // switch.
        let mut var_t = big_n * (2.0 * rounding + v_ks(c2s_out)?) / (2.0 * s * s);
        if let Some((last, _)) = &self.paired {
            // The trace's key switches before the last matrix, each doubling the errors before it
            // (g V_ks in all), through the last matrix (its largest squared row norm) and
            // w + conj(w) (4 in variance).
            let rho = factors.last().map_or(1.0, row_norm_sq);
            var_t += 4.0 * rho * gap * big_n * v_ks(last.level())? / (2.0 * s * s);
        }
        // The rounding of CoeffsToSlots' encoded diagonals (crate::dft): about sqrt(D N / 6) |x| / q_l
        // per slot on slot values x (complex variance D N / 6 |x|^2 / q_l^2), x entering the first
        // matrix of standard deviation sqrt(N) q_0 sigma_I / S (the coefficients are q_0 I), grown
        // at most by each matrix's largest row sum; each error goes through the later matrices
        // (their largest squared row norms), the trace (all but the last matrix, for sparse slots:
        // g copies) and w + conj(w).
        let sigma_i = self.integer_part_std_dev();
        let mut x = SIGMAS * big_n.sqrt() * q0 * sigma_i / s;
        for (i, m) in factors.iter().enumerate() {
            let q = ctx.q_moduli()[top - i - 1] as f64;
            let added = m.diagonal_count() as f64 * big_n / 6.0 * x * x / (q * q);
            let later: f64 = factors[i + 1..].iter().map(row_norm_sq).product();
            let trace = if self.paired.is_some() && i + 1 < levels {
                gap
            } else {
                1.0
            };
            var_t += 4.0 * added * later * trace / 2.0;
            x *= row_abs_sum(m);
        }
        let c2s_noise = through(var_t.sqrt());

        let working = ctx.level_scale(c2s_out)?;
        let epsilon = (big_n * rounding / 2.0).sqrt() / working;
        // EvalMod's last rescaling rounds at its output scale, already in units of the values: on a
        // chain with bootstrapping primes that scale (the user's) is far below the working scale.
        let last = (big_n * rounding / 2.0).sqrt() / ctx.level_scale(self.s2c.start_level())?;
        let eval_mod_noise =
            through(eval_mod_amplification(&self.eval_mod) * epsilon) + SIGMAS * n.sqrt() * last;

        let out = self.output_scale()?;
        // Per matrix: its rotations' key switches and its rescaling's rounding at the output scale,
        // and its encoded diagonals' rounding on values at most 1 in magnitude (the coefficients of
        // |z| <= 1, then partial DFTs of them), each amplified by at most n (2 per butterfly stage).
        let mut var_s2c = 0.0;
        for m in self.s2c.matrices() {
            let q = ctx.q_moduli()[m.level() - 1] as f64;
            let diagonals = m.diagonal_count() as f64 * big_n / 6.0 / (q * q) * n;
            var_s2c += n * big_n * (v_ks(m.level())? + rounding) / (2.0 * out * out) + diagonals;
        }
        let s2c_noise = SIGMAS * var_s2c.sqrt();

        // The encapsulation's key switches: coefficient errors before the reduction, e / q_0 in t
        // units, as CoeffsToSlots' noise.
        let encapsulation_noise = match self.params.sparse_secret {
            None => 0.0,
            Some(h) => {
                let low = SparseEncapsulation::low_key_switch_noise(ctx, h)?;
                through((low * low + v_ks(top)?).sqrt() / q0)
            }
        };
        Ok(BootstrapBound {
            eval_mod,
            c2s_noise,
            eval_mod_noise,
            s2c_noise,
            encapsulation_noise,
            total: eval_mod + c2s_noise + eval_mod_noise + s2c_noise + encapsulation_noise,
        })
    }
}

/// The largest squared row norm `max_p sum_k |d_k[p]|^2` of a matrix: the factor by which it can
/// multiply the variance of independent slot errors.
fn row_norm_sq(m: &LinearTransform) -> f64 {
    row_sums(m, |z| z.norm_sqr())
}

/// The largest row sum `max_p sum_k |d_k[p]|`: the factor by which it can multiply the largest slot.
fn row_abs_sum(m: &LinearTransform) -> f64 {
    row_sums(m, |z| z.norm())
}

fn row_sums(m: &LinearTransform, f: impl Fn(&Complex64) -> f64) -> f64 {
    (0..m.slots())
        .map(|p| {
            m.diagonal_indices()
                .filter_map(|k| m.diagonal(k as i64).map(|d| f(&d[p])))
                .sum::<f64>()
        })
        .fold(0.0, f64::max)
}

/// The factor by which one rescaling's rounding (`epsilon`, relative to the working scale) reaches
/// EvalMod's output, in `eps` units (see the [module documentation](self#error)): the cosine's
/// `C = sum_k |a_k| 4^ceil(log2 k) + levels`, then `rho <- 4 kappa_j rho + 1` for each double angle
/// (`kappa_j = 1` but for the last, `cos(pi / 4 - pi eps_max)`), times the arcsine's largest slope
/// `1 / sqrt(1 - sin(2 pi eps_max)^2)` plus one rounding per arcsine level, over `2 pi`.
pub fn eval_mod_amplification(em: &EvalMod) -> f64 {
    let p = em.params();
    let cosine: f64 = em
        .cosine()
        .coeffs()
        .iter()
        .enumerate()
        .map(|(k, a)| {
            let products = usize::BITS - k.saturating_sub(1).leading_zeros();
            a.abs() * 4f64.powi(products as i32)
        })
        .sum::<f64>()
        + em.cosine().depth() as f64;
    let eps_max = em.eps_max();
    let mut rho = cosine;
    for j in 0..p.double_angle {
        let kappa = if j + 1 == p.double_angle {
            (PI / 4.0 - PI * eps_max).cos()
        } else {
            1.0
        };
        rho = 4.0 * kappa * rho + 1.0;
    }
    if p.arcsine_degree > 0 {
        let s = (2.0 * PI * eps_max).sin();
        let levels = usize::BITS - p.arcsine_degree.leading_zeros();
        rho = rho / (1.0 - s * s).sqrt() + f64::from(levels);
    }
    rho / (2.0 * PI)
}

/// The keys a [`Bootstrapper`] needs besides the relinearization key, from
/// [`KeyGenerator::bootstrapping_keys`]; give them to [`Evaluator::with_bootstrapping_keys`].
#[derive(Debug, Clone)]
pub struct BootstrappingKeys {
    /// Exactly the Galois keys of [`Bootstrapper::galois_elements`] (rotations, conjugation, trace);
    /// shared (an evaluator made from them holds the same keys, [`Evaluator::with_bootstrapping_keys`]).
    pub galois: Arc<GaloisKeys>,
    /// The sparse-secret encapsulation ([`BootstrapParams::sparse_secret`]), `None` when the
    /// bootstrapper raises under the CKKS secret.
    pub encapsulation: Option<Arc<SparseEncapsulation>>,
}

impl KeyGenerator {
    /// The keys of `btp` ([`BootstrappingKeys`]): its Galois keys and, when it raises under a sparse
    /// secret, the encapsulation of that weight for this generator's secret. The encapsulation key is
    /// refused below [`crate::encapsulation::MIN_SECURITY_BITS`] unless the context was made with
    /// `insecure_for_testing`.
    ///
    /// Errors: [`Error::ContextMismatch`] for a bootstrapper of another context;
    /// [`Error::InsecureKey`]; sampler errors.
    pub fn bootstrapping_keys(
        &self,
        btp: &Bootstrapper,
        rng: &mut Csprng,
    ) -> Result<BootstrappingKeys> {
        let ctx = self.context();
        ctx.check_fingerprint(btp.ctx.fingerprint(), "bootstrapper")?;
        let galois = self.galois_keys_with_elements(
            &btp.rotation_steps(),
            true,
            &btp.trace_elements(),
            rng,
        )?;
        Ok(BootstrappingKeys {
            galois: Arc::new(galois),
            encapsulation: self.encapsulation_keys(btp, rng)?,
        })
    }

    /// The encapsulation part of [`KeyGenerator::bootstrapping_keys`] alone (for callers that make
    /// the Galois keys together with others): `None` when `btp` raises under the CKKS secret.
    ///
    /// Errors: as [`KeyGenerator::bootstrapping_keys`].
    pub fn encapsulation_keys(
        &self,
        btp: &Bootstrapper,
        rng: &mut Csprng,
    ) -> Result<Option<Arc<SparseEncapsulation>>> {
        let ctx = self.context();
        ctx.check_fingerprint(btp.ctx.fingerprint(), "bootstrapper")?;
        btp.sparse_secret()
            .map(|h| {
                let insecure = ctx.params().insecure_for_testing;
                SparseEncapsulation::generate(ctx, self.secret_key(), h, insecure, rng)
                    .map(Arc::new)
            })
            .transpose()
    }
}

impl Evaluator {
    /// Adds the keys of [`KeyGenerator::bootstrapping_keys`]: the Galois keys
    /// ([`Evaluator::with_galois_keys`], replacing any) and the encapsulation, if any
    /// ([`Evaluator::with_encapsulation`]).
    ///
    /// Errors: [`Error::ContextMismatch`] for keys of other parameters.
    pub fn with_bootstrapping_keys(self, keys: BootstrappingKeys) -> Result<Self> {
        let eval = self.with_galois_keys(keys.galois)?;
        match keys.encapsulation {
            Some(enc) => eval.with_encapsulation(enc),
            None => Ok(eval),
        }
    }
}

impl Evaluator {
    /// Bootstraps `ct` (see the [module documentation](crate::bootstrap)): a ciphertext of the same
    /// slots, at level [`Bootstrapper::output_level`] and scale [`Bootstrapper::output_scale`], whose slots
    /// are those of `ct` within [`Bootstrapper::error_bound`]. `ct` may be at any level (it is dropped
    /// to `q_0`) and scale up to [`Bootstrapper::max_input_scale`]; its values must satisfy
    /// `|z| <= 1`, the range EvalMod was made for (larger values give wrong slots, undetectably).
    /// A ciphertext of three parts is relinearized first.
    ///
    /// Errors: [`Error::ContextMismatch`] for a ciphertext or bootstrapper of another context;
    /// [`Error::SlotsMismatch`] for a ciphertext of another slot count than the bootstrapper's;
    /// [`Error::MissingKey`] without the relinearization key, Galois keys or (for a bootstrapper with
    /// [`BootstrapParams::sparse_secret`]) the encapsulation keys; [`Error::InvalidArgument`] for
    /// encapsulation keys of another weight; [`Error::Core`]
    /// (`MissingGaloisKey`, naming the element and the rotation step) for an element of
    /// [`Bootstrapper::galois_elements`] without a key; [`Error::InvalidArgument`] for a scale above
    /// [`Bootstrapper::max_input_scale`].
    pub fn bootstrap(&self, ct: &Ciphertext, btp: &Bootstrapper) -> Result<Ciphertext> {
        active_wait(|| self.bootstrap_waiting(ct, btp))
    }

    /// The work of [`Self::bootstrap`], which runs it inside [`active_wait`] (a long sequence of
    /// short parallel sections).
    fn bootstrap_waiting(&self, ct: &Ciphertext, btp: &Bootstrapper) -> Result<Ciphertext> {
        let mut out = self.bootstrap_circuit(ct, btp, None)?;
        // SlotsToCoeffs folded Delta_out / Delta_s in (into its entries above 1, into its plaintexts'
        // scales below, crate::dft): either way the plaintext holds the values at Delta_out, which is
        // declared exactly (Bootstrapper::output_scale) rather than through the scales' rounding.
        out.scale = btp.output_scale()?;
        Ok(out)
    }

    /// [`Self::bootstrap`], keeping the ciphertext after each step of the circuit
    /// ([`BootstrapStages`]) for a diagnosis with the secret key: the stage errors of
    /// `docs/ckks-bootstrapping.md` are measured on them. The output is that of [`Self::bootstrap`].
    ///
    /// Errors: as [`Self::bootstrap`].
    pub fn bootstrap_stages(&self, ct: &Ciphertext, btp: &Bootstrapper) -> Result<BootstrapStages> {
        active_wait(|| {
            let mut stages = BootstrapStages::default();
            let mut out = self.bootstrap_circuit(ct, btp, Some(&mut stages))?;
            out.scale = btp.output_scale()?;
            stages.output = Some(out);
            Ok(stages)
        })
    }

    /// The circuit of [`Self::bootstrap`], before its output scale is declared; with `stages`, the
    /// intermediate ciphertexts are kept there.
    fn bootstrap_circuit(
        &self,
        ct: &Ciphertext,
        btp: &Bootstrapper,
        mut stages: Option<&mut BootstrapStages>,
    ) -> Result<Ciphertext> {
        self.check_ct(ct)?;
        let ctx = self.context();
        ctx.check_fingerprint(btp.ctx.fingerprint(), "bootstrapper")?;
        let slots = btp.slots();
        if ct.slots() != slots {
            return Err(Error::SlotsMismatch {
                operation: OP,
                left: ct.slots(),
                right: slots,
            });
        }
        let encapsulation = btp.check_keys(self)?;
        let (up, factor) = btp.input_scaling(ct.scale())?;
        let ct = if ct.part_count() > 2 {
            self.relinearize(ct)?
        } else {
            ct.clone()
        };
        let mut low = self.drop_to_level(&ct, 1)?;
        if up > 1 {
            // The same values at `up` times the scale: the message fills EvalMod's range.
            let scale = low.scale * up as f64;
            low = self.multiply_int(&low, up)?;
            low.scale = scale;
        }
        let raised = match encapsulation {
            Some(enc) => enc.raise_ciphertext(self, &low, ctx.max_level())?,
            None => self.mod_raise(&low, ctx.max_level())?,
        };
        // The same plaintext m + q_0 I, declared at the scale that makes CoeffsToSlots' slots read
        // t = c / q_0 at EvalMod's normalized scale.
        let raised = self.wrap(raised.inner, btp.raised_scale, slots);
        if let Some(st) = stages.as_deref_mut() {
            st.factor = factor;
            st.input_multiplier = up;
            st.scaled_input = Some(low.clone());
            st.raised = Some(raised.clone());
        }
        match &btp.paired {
            None => {
                let CoeffsToSlotsResult::RealImaginary { real, imaginary } =
                    self.coeffs_to_slots(&raised, &btp.c2s)?
                else {
                    return Err(Error::InvalidArgument {
                        operation: OP,
                        reason: "CoeffsToSlots returned complex slots".into(),
                    });
                };
                let reduced_real = self.eval_mod(&real, &btp.eval_mod, factor)?;
                let reduced_imaginary = self.eval_mod(&imaginary, &btp.eval_mod, factor)?;
                if let Some(st) = stages {
                    st.coeffs_to_slots = vec![real, imaginary];
                    st.eval_mod = vec![reduced_real.clone(), reduced_imaginary.clone()];
                }
                let (real, imaginary) = (reduced_real, reduced_imaginary);
                let joined = self.add(&real, &self.multiply_by_i(&imaginary, false)?)?;
                self.slots_to_coeffs(&joined, &btp.s2c)
            }
            Some((last, first)) => {
                let matrices = btp.c2s.matrices();
                let mut acc = raised;
                for m in &matrices[..matrices.len() - 1] {
                    acc = self.rescale(&self.linear_transform(&acc, m)?)?;
                }
                // The trace commutes with the matrices before the last (their diagonals lie in the
                // subring, rotations commute), so it runs here, at a lower level than the top.
                let acc = self.subring_trace(&acc, slots)?;
                let w = self.rescale(&self.linear_transform(&acc, last)?)?;
                let halves = self.add(&w, &self.conjugate(&w)?)?;
                let reduced = self.eval_mod(&halves, &btp.eval_mod, factor)?;
                if let Some(st) = stages {
                    st.coeffs_to_slots = vec![halves];
                    st.eval_mod = vec![reduced.clone()];
                }
                let mut acc = self.rescale(&self.linear_transform(&reduced, first)?)?;
                // Period `slots`: the same plaintext read on `slots` slots.
                acc.slots = slots;
                for m in &btp.s2c.matrices()[1..] {
                    acc = self.rescale(&self.linear_transform(&acc, m)?)?;
                }
                Ok(acc)
            }
        }
    }
}
