//! META-BTS: bootstrapping precision beyond one bootstrapping's own (Bae, Cheon, Cho, Kim, Kim,
//! "META-BTS: Bootstrapping Precision Beyond the Limit", CCS 2022).
//!
//! # The iteration
//!
//! One bootstrapping ([`Evaluator::bootstrap`]) returns `z + e_1` for slots `z`, with `|e_1|` below
//! [`Bootstrapper::error_bound`], an error set by EvalMod's approximation and the noise of the
//! circuit, in absolute units of the values: it does not shrink with `z`. META-BTS bootstraps the
//! error itself, scaled up to the full range, so that the second bootstrapping's own error is scaled
//! down with it. [`Evaluator::bootstrap_meta`] with `passes = p`:
//!
//! 1. `ct_1 = BTS(ct)` (a plain bootstrapping);
//! 2. for each further pass `i = 2 .. p`:
//!    * `d = ct_(i-1) - ct` at the input's level (the evaluator brings `ct_(i-1)`, which is higher, to
//!      the input's scale and level: one rescaling of `ct_(i-1)`); `d` decrypts to the error
//!      `e_(i-1)` at the input's scale, exactly but for that rescaling's rounding;
//!    * `2^k_i d` (an integer multiplication: exact, no level): values `2^k_i e_(i-1)`, at most 1 in
//!      magnitude by the choice `k_i = floor(-log2(sqrt(2) B_(i-1)))`, `B_(i-1)` the bound of the
//!      error before (the `sqrt(2)` covers the complex magnitude of a bound on real and imaginary
//!      parts): the full range EvalMod was made for;
//!    * `BTS(2^k_i d)` holds `2^k_i e_(i-1) + e'` with `|e'| <= B_1`; multiplied by the constant
//!      `2^-k_i` and rescaled (**one level**), it holds `e_(i-1) + 2^-k_i e'`;
//!    * `ct_i = ct_(i-1) - that`: the error left is `2^-k_i e'` and the roundings.
//!
//! # Levels
//!
//! One pass is a plain bootstrapping: [`Bootstrapper::output_level`]. Two or more passes end one level
//! lower ([`Bootstrapper::meta_output_level`]): every correction is at the level below the output after
//! its multiplication by `2^-k`, and every later pass subtracts at that level again. The chain must
//! therefore leave at least one level after a bootstrapping ([`Bootstrapper::levels_left`] `>= 1`,
//! `depth + 2` levels in all) for two passes, and two for three or more (`depth + 3`: from the third
//! pass on, the corrected result, one level below the output, must still be above level 1 to be
//! brought to the input's scale for the next difference); the result has
//! [`Bootstrapper::levels_left`] `- 1` multiplications left.
//! Each pass costs one bootstrapping and the same keys.
//!
//! # Error
//!
//! [`Bootstrapper::meta_error_bound`]: `B_1` the bound of one bootstrapping, then
//! `B_i = B_1 / 2^k_i + R`, `R` the roundings of one correction (three rescalings: the alignment of
//! `ct_(i-1)` to the input for the difference, the multiplication by `2^-k_i`, the alignment of
//! `ct_(i-1)` to the correction; each `6 sqrt(N (1 + ||s||^2) / 24) / Delta` in the real or imaginary
//! part of a slot, at the smaller of the scales involved, taken as independent; and the rounding of the
//! encoded constants, at most `1 / Delta`). The gain of a pass is about `k_i ~ -log2 B_(i-1)` bits
//! until `R` is reached.

use num_complex::Complex64;

use crate::bootstrap::{expected_norm_sq, Bootstrapper};
use crate::error::{Error, Result};
use crate::evaluator::Evaluator;
use crate::plaintext::Ciphertext;

const OP: &str = "META-BTS bootstrapping";

/// The bound of [`Evaluator::bootstrap_meta`] ([`Bootstrapper::meta_error_bound`]): the bound after
/// each pass and the scaling exponent of each correction, in units of the values (real or imaginary
/// part of one slot, against the input's decryption, values `|z| <= 1`).
#[derive(Clone, Debug, PartialEq)]
pub struct MetaBootstrapBound {
    /// The bound on the error left after pass `i + 1` (`passes[0]` is [`Bootstrapper::error_bound`]'s
    /// total).
    pub passes: Vec<f64>,
    /// The exponent `k` of the scaling `2^k` of each correction (pass 2 onwards; one fewer than
    /// `passes`).
    pub shifts: Vec<u32>,
    /// The roundings of one correction (`R` of the [module documentation](self#error)).
    pub rounding: f64,
    /// The bound after the last pass.
    pub total: f64,
}

impl Bootstrapper {
    /// The level (limbs) of [`Evaluator::bootstrap_meta`]'s result: [`Bootstrapper::output_level`] for
    /// one pass, one less for two or more (see the [module documentation](crate::meta_bootstrap#levels)).
    pub fn meta_output_level(&self, passes: usize) -> usize {
        if passes <= 1 {
            self.output_level()
        } else {
            self.output_level() - 1
        }
    }

    /// Checks that META-BTS with `passes` passes fits the chain: at least one pass, and the levels
    /// left after a bootstrapping of the [module documentation](crate::meta_bootstrap#levels).
    fn check_meta(&self, passes: usize) -> Result<()> {
        if passes == 0 {
            return Err(Error::InvalidArgument {
                operation: OP,
                reason:
                    "0 passes: META-BTS runs one bootstrapping and passes - 1 corrections; pass 1 \
                         for a plain bootstrapping"
                        .into(),
            });
        }
        // The levels a correction needs after the output: the scaling by 2^-k, and from the third
        // pass on one more, to bring the corrected result (one level lower) to the input's scale.
        let extra = passes.saturating_sub(1).min(2);
        if self.levels_left() < extra {
            let p = self.params();
            return Err(Error::BootstrapTooDeep {
                // The circuit's levels, one for the output and the corrections'.
                needed: self.depth() + 1 + extra,
                available: self.context().max_level(),
                c2s_levels: p.c2s_levels,
                eval_mod_levels: self.eval_mod().depth(),
                s2c_levels: p.s2c_levels,
            });
        }
        Ok(())
    }

    /// The bound of [`Evaluator::bootstrap_meta`] with `passes` passes for an input at `input_scale`
    /// (see the [module documentation](crate::meta_bootstrap#error)), with the scaling exponents the
    /// corrections use.
    ///
    /// Errors: [`Error::InvalidArgument`] for 0 passes or a scale above
    /// [`Bootstrapper::max_input_scale`]; [`Error::BootstrapTooDeep`] (naming the levels needed) when
    /// the chain leaves fewer levels after a bootstrapping than the passes need (1 for two passes, 2
    /// for more).
    pub fn meta_error_bound(&self, input_scale: f64, passes: usize) -> Result<MetaBootstrapBound> {
        const SIGMAS: f64 = rnsfhe_core::noise::HIGH_PROBABILITY_SIGMAS;
        self.check_meta(passes)?;
        let one = self.error_bound(input_scale)?.total;
        let ctx = self.context();
        // The smallest scale a rounding happens at: the input's, or the default scale of the level
        // the corrections end at (present whenever passes > 1).
        let low = if passes > 1 {
            input_scale.min(ctx.level_scale(self.meta_output_level(passes))?)
        } else {
            input_scale
        };
        let norm_sq = expected_norm_sq(ctx.params().secret, ctx.n());
        // One rescaling's rounding in the real part of a slot: variance N (1 + ||s||^2) / 12 over 2.
        let var = ctx.n() as f64 * (1.0 + norm_sq) / 24.0 / (low * low);
        let rounding = SIGMAS * (3.0 * var).sqrt() + 1.0 / low;
        let mut passes_bound = vec![one];
        let mut shifts = Vec::with_capacity(passes.saturating_sub(1));
        for _ in 1..passes {
            let k = shift_for(passes_bound[passes_bound.len() - 1]);
            shifts.push(k);
            passes_bound.push(one / f64::from(k).exp2() + rounding);
        }
        let total = passes_bound[passes_bound.len() - 1];
        Ok(MetaBootstrapBound {
            passes: passes_bound,
            shifts,
            rounding,
            total,
        })
    }
}

/// The exponent `k` with `2^k sqrt(2) bound <= 1`: errors of real and imaginary parts below `bound`
/// scaled by `2^k` stay in EvalMod's range `|z| <= 1`. At most 62 (an `i64` factor).
fn shift_for(bound: f64) -> u32 {
    let k = (-(std::f64::consts::SQRT_2 * bound).log2()).floor();
    k.clamp(0.0, 62.0) as u32
}

impl Evaluator {
    /// META-BTS with `passes` passes (see the [module documentation](crate::meta_bootstrap)): one
    /// bootstrapping, then `passes - 1` bootstrappings of the error scaled up by `2^k`, each
    /// subtracted after scaling down. The result has the slots of `ct` within
    /// [`Bootstrapper::meta_error_bound`], at level [`Bootstrapper::meta_output_level`] and the default
    /// scale of that level; it costs `passes` bootstrappings. `ct` is as for
    /// [`Evaluator::bootstrap`] (values `|z| <= 1`, scale up to
    /// [`Bootstrapper::max_input_scale`]).
    ///
    /// Errors: those of [`Evaluator::bootstrap`]; [`Error::InvalidArgument`] for 0 passes;
    /// [`Error::BootstrapTooDeep`] (naming the levels needed) when the chain leaves fewer levels after
    /// a bootstrapping than the passes need (1 for two passes, 2 for more).
    pub fn bootstrap_meta(
        &self,
        ct: &Ciphertext,
        btp: &Bootstrapper,
        passes: usize,
    ) -> Result<Ciphertext> {
        let bound = btp.meta_error_bound(ct.scale(), passes)?;
        // At `q_0` already (the bootstrapping drops it there anyway; exact, scale unchanged): every
        // difference below then brings the higher `out` to the input's scale, never the reverse.
        let ct = self.drop_to_level(&self.relinearize(ct)?, 1)?;
        let mut out = self.bootstrap(&ct, btp)?;
        for &k in &bound.shifts {
            // The error of `out` at the input's scale and level, scaled to EvalMod's full range.
            let diff = self.sub(&out, &ct)?;
            let scaled = self.multiply_int(&diff, 1i64 << k)?;
            let fixed = self.bootstrap(&scaled, btp)?;
            let correction = self.rescale(
                &self.multiply_const(&fixed, Complex64::new(f64::from(k).exp2().recip(), 0.0))?,
            )?;
            out = self.sub(&out, &correction)?;
        }
        Ok(out)
    }
}
