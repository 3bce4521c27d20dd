//! Look-up tables on LWE ciphertexts by blind rotation (PEGASUS Section III.B, Fig. 2).
//!
//! A table is a polynomial `f` of the ring of degree `n` over `q_0`: for inputs modulo `q` (the table's
//! input modulus, `q_0` unless chosen otherwise), an input scale `Delta_in`, the grid
//! `eta_k = k q / (2 n Delta_in)` and a function `T`,
//!
//! ```text
//! f_0 = round(Delta_out T(0)),   f_j = round(Delta_out T(-eta_j)) for 1 <= j <= n/2,
//! f_j = -round(Delta_out T(eta_(n-j))) for n/2 < j < n       (PEGASUS Fig. 2 step 1).
//! ```
//!
//! The LWE input `(b, a)` modulo `q` (any `q >= 2n`) is switched to `2n` (step 2; with the mask rounded
//! to odd values for [`crate::BlindRotation::Lmkcdey`]), blind rotation computes `f X^(b~ + <a~, s>)`
//! (steps 3-6, [`crate::BlindRotationKey`]) and the constant coefficient, extracted (step 7), encrypts
//! `Delta_out T(m)` modulo `q_0` for the input message `Delta_in m`, up to the grid's rounding.
//!
//! **Input contract**: `|Delta_in m| < q / 4`, so that the index `b~ + <a~, s>` stays in `[-n/2, n/2)`
//! (PEGASUS Appendix B); outside it the table reads a negated value. For a negacyclic `T`
//! (`T(x + q/(2 Delta_in)) = -T(x)`) the whole range works. The error is bounded by PEGASUS Eq. (3)
//! ([`LookupTable::error_bound`], and [`LutEvaluator::error_bound`] for every algorithm).

use std::sync::Arc;

use rayon::prelude::*;
use rnsfhe_core::{ConversionMode, RlweContext, RlweParams, SecretDistribution};
use rnsfhe_ring::{Coeff, Poly};

use crate::blind_rotation::{external_product_variance, BlindRotation, BlindRotationKey};
use crate::ciphertext::LweCiphertext;
use crate::error::{LweError, LweResult};
use crate::extract::extract;
use crate::security::{check, estimate, Security};
use rnsfhe_core::lwe_estimator::LweEstimate;

/// Parameters of the look-up-table ring, a literal struct (PEGASUS Table IV second row: `n = 2^12`,
/// `q' ~ 2^60`, `sigma_lut = 2^10`, over the `q_0 ~ 2^45` of the LWE ciphertexts).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LutParams {
    /// `log2` of the ring degree `n`.
    pub log_n: u32,
    /// The modulus `q_0` of the LWE ciphertexts and of the accumulator: a prime `= 1 mod 2n`.
    pub q0: u64,
    /// The special modulus `q'` of the RGSW gadget `g_rns` (a prime `= 1 mod 2n`, distinct from `q_0`).
    pub special: u64,
    /// Standard deviation of the evaluation key's errors (`sigma_lut`).
    pub sigma: f64,
    /// The distribution of the ring secret (PEGASUS: Hamming weight 64).
    pub secret: SecretDistribution,
}

impl LutParams {
    /// The RLWE context of the accumulator: `Q = {q_0}`, `P = {q'}`, one digit (the gadget `g_rns` of
    /// PEGASUS Section IV.A), exact (centered) basis conversion, error width `sigma_lut`. Refuses
    /// parameters whose evaluation keys (RLWE of degree `n` over `q_0 q'`) the estimator puts below 128
    /// bits ([`crate::security`]).
    ///
    /// Errors: [`LweError::Insecure`]; [`LweError::Core`] for invalid moduli, degree or width.
    pub fn context(&self) -> LweResult<Arc<RlweContext>> {
        self.context_with(Security::Check)
    }

    /// [`LutParams::context`] without the security check: the caller's explicit opt-in (tests, small
    /// examples, reproducing a paper's parameters).
    ///
    /// Errors: [`LweError::Core`] for invalid moduli, degree or width.
    pub fn context_allowing_insecure(&self) -> LweResult<Arc<RlweContext>> {
        self.context_with(Security::AllowInsecure)
    }

    /// The estimator's figure for the evaluation keys of this ring.
    ///
    /// Errors: [`LweError::InvalidParams`] if the estimator rejects the parameters.
    pub fn security(&self) -> LweResult<LweEstimate> {
        let log_q = (self.q0 as f64).log2() + (self.special as f64).log2();
        estimate(1 << self.log_n, log_q, self.sigma, self.secret)
    }

    fn context_with(&self, security: Security) -> LweResult<Arc<RlweContext>> {
        check(
            &self.security()?,
            "look-up-table ring (blind-rotation keys)",
            security,
        )?;
        Ok(RlweContext::new(RlweParams {
            log_n: self.log_n,
            q_moduli: vec![self.q0],
            p_moduli: vec![self.special],
            dnum: 1,
            conversion: ConversionMode::ExactFloat,
            secret: self.secret,
            sigma: self.sigma,
        })?)
    }
}

/// A table polynomial for one function, or for several read by one blind rotation, with the input
/// modulus and the scales it was built for (see the module documentation).
///
/// **Several functions** (`k`, a power of two; [`LookupTable::from_fns_for_input_modulus`]): their
/// tables are interleaved, coefficient `i + k m` holding function `i` at grid point `m` of a grid `k`
/// times coarser, and the input is switched to `2n / k` and scaled by `k`, so that the look-up index is
/// a multiple of `k` and coefficient `i` of the rotated accumulator reads function `i`
/// ([`LutEvaluator::evaluate_all`]; the "many-LUT" technique of Chillotti, Ligier, Orfila and Tap,
/// Asiacrypt 2021, on PEGASUS Fig. 2). One rotation for `k` functions, each at the accuracy of a ring
/// of degree `n / k`.
#[derive(Clone, Debug, PartialEq)]
pub struct LookupTable {
    poly: Poly<Coeff>,
    input_scale: f64,
    output_scale: f64,
    /// The modulus `q` of the inputs: the grid is `k q / (2 n Delta_in)`.
    input_modulus: u64,
    /// The number of functions interleaved in the table.
    functions: usize,
}

impl LookupTable {
    /// The table of `f` for inputs modulo `q_0` encrypted with scale `input_scale` (`Delta_in`) and
    /// outputs with scale `output_scale` (`Delta_out`), over the first prime `q_0` of `ctx` (PEGASUS
    /// Fig. 2 step 1): [`LookupTable::from_fn_for_input_modulus`] with `q = q_0`.
    ///
    /// Errors: as [`LookupTable::from_fn_for_input_modulus`].
    pub fn from_fn(
        ctx: &RlweContext,
        input_scale: f64,
        output_scale: f64,
        f: impl Fn(f64) -> f64,
    ) -> LweResult<Self> {
        let q0 = ctx.chain().moduli()[0].value();
        Self::from_fn_for_input_modulus(ctx, q0, input_scale, output_scale, f)
    }

    /// The table of `f` for inputs modulo `input_modulus` (`q`, any modulus `>= 2n`: the grid is
    /// `k q / (2 n Delta_in)`) encrypted with scale `input_scale`, outputs modulo `q_0` with scale
    /// `output_scale`.
    ///
    /// Errors: [`LweError::InvalidParams`] for a scale that is not finite and positive, an input modulus
    /// below `2n`, or a function value whose scaled image does not fit in `(-q_0/2, q_0/2)`.
    pub fn from_fn_for_input_modulus(
        ctx: &RlweContext,
        input_modulus: u64,
        input_scale: f64,
        output_scale: f64,
        f: impl Fn(f64) -> f64,
    ) -> LweResult<Self> {
        Self::from_fns_for_input_modulus(ctx, input_modulus, input_scale, output_scale, &[&f])
    }

    /// The table of the `k = fs.len()` functions `fs`, all read by one blind rotation
    /// ([`LutEvaluator::evaluate_all`], see the type's documentation): coefficient `j = i + k m` holds
    /// `T_i(-eta_m)` for `m <= n / (2k)` and `-T_i(eta_(n/k - m))` above, on the grid `eta_m = m k q /
    /// (2 n Delta_in)` (PEGASUS Fig. 2 step 1 on a grid `k` times coarser; `k = 1` is that step exactly).
    ///
    /// Errors: as [`LookupTable::from_fn_for_input_modulus`], and [`LweError::InvalidParams`] unless `k`
    /// is a power of two with `k <= n / 4`.
    pub fn from_fns_for_input_modulus(
        ctx: &RlweContext,
        input_modulus: u64,
        input_scale: f64,
        output_scale: f64,
        fs: &[&dyn Fn(f64) -> f64],
    ) -> LweResult<Self> {
        for (what, s) in [("input scale", input_scale), ("output scale", output_scale)] {
            if !(s.is_finite() && s > 0.0) {
                return Err(LweError::InvalidParams {
                    what,
                    reason: format!("{s} is not a finite positive number"),
                });
            }
        }
        check_input_modulus(ctx, input_modulus)?;
        let n = ctx.n();
        let k = fs.len();
        if !k.is_power_of_two() || k > n / 4 {
            return Err(LweError::InvalidParams {
                what: "look-up table functions",
                reason: format!(
                    "{k} functions: one blind rotation reads a power of two of them, at most n/4 = {}",
                    n / 4
                ),
            });
        }
        let q = input_modulus as f64;
        let eta = |m: usize| (m * k) as f64 * q / (2.0 * n as f64 * input_scale);
        let values: Vec<f64> = (0..n)
            .map(|j| {
                let (m, f) = (j / k, fs[j % k]);
                if m == 0 {
                    f(0.0)
                } else if m <= n / (2 * k) {
                    f(-eta(m))
                } else {
                    -f(eta(n / k - m))
                }
            })
            .collect();
        let mut table = Self::from_values_for_input_modulus(
            ctx,
            input_modulus,
            &values,
            input_scale,
            output_scale,
        )?;
        table.functions = k;
        Ok(table)
    }

    /// A table for inputs modulo `q_0` from its `n` values (already in the order of the coefficients of
    /// `f`, unscaled: the coefficient `j` is `round(output_scale values[j])`).
    ///
    /// Errors: as [`LookupTable::from_values_for_input_modulus`].
    pub fn from_values(
        ctx: &RlweContext,
        values: &[f64],
        input_scale: f64,
        output_scale: f64,
    ) -> LweResult<Self> {
        let q0 = ctx.chain().moduli()[0].value();
        Self::from_values_for_input_modulus(ctx, q0, values, input_scale, output_scale)
    }

    /// [`LookupTable::from_values`] for inputs modulo `input_modulus` (any modulus `>= 2n`).
    ///
    /// Errors: as [`LookupTable::from_fn_for_input_modulus`], and [`LweError::InvalidParams`] unless
    /// there are `n` values.
    pub fn from_values_for_input_modulus(
        ctx: &RlweContext,
        input_modulus: u64,
        values: &[f64],
        input_scale: f64,
        output_scale: f64,
    ) -> LweResult<Self> {
        check_input_modulus(ctx, input_modulus)?;
        let n = ctx.n();
        if values.len() != n {
            return Err(LweError::InvalidParams {
                what: "look-up table",
                reason: format!("{} values for a ring of degree n = {n}", values.len()),
            });
        }
        let q0 = ctx.chain().moduli()[0].value() as f64;
        let coeffs = values
            .iter()
            .enumerate()
            .map(|(j, &v)| {
                let c = (v * output_scale).round();
                if c.is_finite() && c.abs() < q0 / 2.0 {
                    Ok(c as i64)
                } else {
                    Err(LweError::InvalidParams {
                        what: "look-up table",
                        reason: format!(
                            "coefficient {j}: value {v} times the output scale {output_scale} is not \
                             below q_0/2 = {:.3e} in absolute value",
                            q0 / 2.0
                        ),
                    })
                }
            })
            .collect::<LweResult<Vec<i64>>>()?;
        Ok(Self {
            poly: Poly::from_i64(ctx.basis_at(1)?, &coeffs)?,
            input_scale,
            output_scale,
            input_modulus,
            functions: 1,
        })
    }

    /// A table from its polynomial, scales and input modulus as they were (the wire reader,
    /// [`crate::serialization`], which checks the scales and the modulus and reads the polynomial over
    /// `q_0`).
    pub(crate) fn from_parts(
        poly: Poly<Coeff>,
        input_scale: f64,
        output_scale: f64,
        input_modulus: u64,
        functions: usize,
    ) -> Self {
        Self {
            poly,
            input_scale,
            output_scale,
            input_modulus,
            functions,
        }
    }

    /// The number of functions the table holds (1 but for
    /// [`LookupTable::from_fns_for_input_modulus`]).
    pub fn functions(&self) -> usize {
        self.functions
    }

    /// The table polynomial `f` (coefficient form over `q_0`).
    pub fn poly(&self) -> &Poly<Coeff> {
        &self.poly
    }

    /// The input scale `Delta_in`.
    pub fn input_scale(&self) -> f64 {
        self.input_scale
    }

    /// The output scale `Delta_out`.
    pub fn output_scale(&self) -> f64 {
        self.output_scale
    }

    /// The modulus `q` of the inputs the table is read for.
    pub fn input_modulus(&self) -> u64 {
        self.input_modulus
    }

    /// The value blind rotation reads for the look-up index `k = b~ + <a~, s> mod 2n` (PEGASUS Appendix B):
    /// the constant coefficient of `f X^k`, that is `f_0` for `k = 0`, `-f_(n-k)` for `0 < k < n`, and
    /// the negation of the value at `k - n` for `n <= k < 2n` (any integer `k` is taken modulo `2n`),
    /// signed (centered modulo `q_0`). The output of a look-up table is this value plus the error of
    /// blind rotation; divided by the output scale it is `T` at the grid point `k q_0 / (2 n Delta_in)`
    /// for `|k| < n/2`.
    pub fn value_at(&self, index: i64) -> i64 {
        let n = self.poly.degree() as i64;
        let q0 = self.poly.basis().moduli()[0];
        let k = index.rem_euclid(2 * n);
        let (k, sign) = if k < n { (k, 1) } else { (k - n, -1) };
        let coeff = |j: i64| q0.center(self.poly.data()[j as usize]);
        sign * if k == 0 { coeff(0) } else { -coeff(n - k) }
    }

    /// The largest input scale `Delta_in` at which every input `|m| <= max_abs_input` keeps its look-up
    /// index inside the range the table covers, with the margin of PEGASUS Eq. (3) (six standard
    /// deviations of the index error): `Delta_in max_abs_input + 6 sigma <= q_0 / 4` (the input contract
    /// of Fig. 2), or `<= q_0 / 2` for a `negacyclic` function (`T(x + q_0 / (2 Delta_in)) = -T(x)` over
    /// the inputs, such as the sign `+-1`, whose antiperiodic extension past `q_0 / 4` is the function
    /// itself). `sigma^2 = input_sigma^2 + (q_0 / 2n)^2 (key_norm_sq + 1) / 12` is the error of the phase
    /// after the modulus switch to `2n`, in units of `q_0` (PEGASUS Appendix C.2: the input error and
    /// the roundings of `b` and of the `a_i` met by the LWE key of squared norm `key_norm_sq`).
    ///
    /// A larger scale is a finer grid (the grid step `q_0 / (2 n Delta_in)` times the Lipschitz constant
    /// is the main term of the error); past this one, inputs near the ends of the range read the
    /// negated antiperiodic copy of the table with non-negligible probability.
    ///
    /// Errors: [`LweError::InvalidParams`] for a bound or a width that is not finite and non-negative
    /// (the bound positive), or when the margin alone exceeds the range.
    pub fn max_input_scale(
        ctx: &RlweContext,
        max_abs_input: f64,
        input_sigma: f64,
        key_norm_sq: f64,
        negacyclic: bool,
    ) -> LweResult<f64> {
        for (what, v) in [
            ("largest input", max_abs_input),
            ("input error width", input_sigma),
            ("squared key norm", key_norm_sq),
        ] {
            if !(v.is_finite() && v >= 0.0) {
                return Err(LweError::InvalidParams {
                    what,
                    reason: format!("{v} is not a finite non-negative number"),
                });
            }
        }
        if max_abs_input == 0.0 {
            return Err(LweError::InvalidParams {
                what: "largest input",
                reason: "must be positive".into(),
            });
        }
        let n = ctx.n() as f64;
        let q0 = ctx.chain().moduli()[0].value() as f64;
        let step = q0 / (2.0 * n);
        let sigma = (input_sigma * input_sigma + step * step * (key_norm_sq + 1.0) / 12.0).sqrt();
        let range = if negacyclic { q0 / 2.0 } else { q0 / 4.0 };
        let room = range - 6.0 * sigma;
        if room <= 0.0 {
            return Err(LweError::InvalidParams {
                what: "look-up table input",
                reason: format!(
                    "the index error margin 6 sigma = {:.3e} exceeds the input range {range:.3e}",
                    6.0 * sigma
                ),
            });
        }
        Ok(room / max_abs_input)
    }

    /// The bound of PEGASUS Eq. (3) on `|T(m) - output / Delta_out|` for an `lipschitz`-Lipschitz `T`,
    /// an input error of standard deviation `input_sigma`, an LWE key of squared norm `key_norm_sq`
    /// and dimension `lwe_dimension`, in the ring of `ctx` with evaluation-key width `sigma_lut`:
    /// `6 (L sqrt((sigma_0/Delta)^2 + q^2 (||s||^2 + 2) / (48 n^2 Delta^2)) + sigma_rot / Delta_out)` for
    /// inputs modulo `q` (the paper's `q = q_0`), with the grid step `q / (2 n Delta)` times `k` for a
    /// table of `k` functions. The index term is that of the rounding modulus switch of the ternary and
    /// binary algorithms; [`LutEvaluator::error_bound`] has the bound of every algorithm.
    ///
    /// Eq. (3) takes `sigma_rot^2 = 4 n_lwe q_0 sigma_lut^2 / q'` (Appendix C.2), which falls short of
    /// the measured blind-rotation error when `q'` is not much larger than `q_0` (with `q' < 2^50` and
    /// Table IV otherwise, `2^13.5` against a measured `2^15.2`; the key term grows as `(q_0 / q')^2`, not
    /// `q_0 / q'`): `sigma_rot^2` is the larger of the paper's figure and the variance of
    /// [`BlindRotationKey::added_variance`] for the ternary algorithm with every mask coefficient nonzero
    /// and its first step counted in full, `n_lwe (4K 2n / (2n - 1) + R)` (`K`, `R` the key and rounding
    /// terms of one external product), above the binary algorithm's `n_lwe (K + R)`.
    pub fn error_bound(
        &self,
        ctx: &RlweContext,
        lipschitz: f64,
        input_sigma: f64,
        key_norm_sq: f64,
        lwe_dimension: usize,
    ) -> f64 {
        let q0 = ctx.chain().moduli()[0].value() as f64;
        let q_special = ctx.special_basis().moduli()[0].value() as f64;
        let sigma_lut = ctx.params().sigma;
        let switch = (1.0 + key_norm_sq) / 12.0;
        let index = self.index_variance(input_sigma, switch);
        let paper = 4.0 * lwe_dimension as f64 * q0 * sigma_lut * sigma_lut / q_special;
        let (key, rounding) = external_product_variance(ctx);
        // A ternary step adds 4K + R, 8K + R for the mask value n (probability 1 / (2n - 1)).
        let two_n = 2.0 * ctx.n() as f64;
        let measured = lwe_dimension as f64 * (4.0 * key * two_n / (two_n - 1.0) + rounding);
        let rotation = paper.max(measured).sqrt();
        6.0 * (lipschitz * index.sqrt() + rotation / self.output_scale)
    }

    /// The variance of a look-up index, in input units: the input error's, plus the modulus switch's
    /// rounding (`switch`, in grid steps squared) and the index's own rounding to the grid (`1/12`), both
    /// scaled by the grid step `k q / (2 n Delta_in)` (`k` functions read a grid `k` times coarser).
    fn index_variance(&self, input_sigma: f64, switch: f64) -> f64 {
        let n = self.poly.degree() as f64;
        let step = self.functions as f64 * self.input_modulus as f64 / (2.0 * n * self.input_scale);
        (input_sigma / self.input_scale).powi(2) + step * step * (switch + 1.0 / 12.0)
    }
}

/// Checks that inputs modulo `q` can be switched to `2n` for blind rotation (`q >= 2n`).
///
/// Errors: [`LweError::InvalidParams`] naming both numbers.
pub(crate) fn check_input_modulus(ctx: &RlweContext, q: u64) -> LweResult<()> {
    let two_n = 2 * ctx.n() as u64;
    if q < two_n {
        return Err(LweError::InvalidParams {
            what: "look-up-table input modulus",
            reason: format!(
                "q = {q} is below 2n = {two_n}: blind rotation switches its inputs down to 2n \
                 (switch to a modulus of at least 2n first)"
            ),
        });
    }
    Ok(())
}

/// Evaluates look-up tables on LWE ciphertexts modulo any `q >= 2n` under the LWE key of a
/// [`BlindRotationKey`] (PEGASUS Fig. 2): the outputs are LWE ciphertexts of dimension `n` (the ring
/// degree) modulo `q_0` under the ring secret's coefficients, to be key-switched back to the LWE key.
#[derive(Clone, Debug)]
pub struct LutEvaluator {
    key: BlindRotationKey,
}

impl LutEvaluator {
    /// An evaluator with the blind-rotation key `key`.
    pub fn new(key: BlindRotationKey) -> Self {
        Self { key }
    }

    /// The blind-rotation key.
    pub fn key(&self) -> &BlindRotationKey {
        &self.key
    }

    /// `LWE(Delta_out T(m))` modulo `q_0` from `ct = LWE(Delta_in m)` modulo the table's input modulus
    /// `q >= 2n` (PEGASUS Fig. 2: modulus switch to `2n`, blind rotation, extraction of the constant
    /// coefficient). The switch rounds every component to the nearest integer
    /// ([`LweCiphertext::switch_modulus`]), except for [`BlindRotation::Lmkcdey`], whose mask is rounded
    /// to the nearest odd integer ([`LweCiphertext::switch_modulus_odd_mask`]: a larger index error,
    /// which [`LutEvaluator::error_bound`] accounts for).
    ///
    /// Errors: [`LweError::InvalidParams`] for a ciphertext modulo less than `2n` or a table of several
    /// functions ([`LutEvaluator::evaluate_all`] reads them); [`LweError::ModulusMismatch`] for a
    /// ciphertext of another modulus than the table's input modulus; [`LweError::DimensionMismatch`]
    /// for a ciphertext of another dimension than the key's; ring errors for a table of another ring.
    pub fn evaluate(&self, ct: &LweCiphertext, table: &LookupTable) -> LweResult<LweCiphertext> {
        if table.functions != 1 {
            return Err(LweError::InvalidParams {
                what: "look-up table",
                reason: format!(
                    "a table of {} functions: LutEvaluator::evaluate_all reads them all",
                    table.functions
                ),
            });
        }
        let mut outputs = self.evaluate_all(ct, table)?;
        outputs.pop().ok_or(LweError::InvalidParams {
            what: "look-up table",
            reason: "no output".into(),
        })
    }

    /// `LWE(Delta_out T_i(m))` modulo `q_0` for every function `T_i` of `table`, from one blind rotation
    /// of `ct = LWE(Delta_in m)` (see [`LookupTable`]): the input is switched to `2n / k` and multiplied
    /// by `k` (so the look-up index is a multiple of `k`), rotated, and coefficient `i` of the accumulator
    /// extracted for function `i`. For one function this is [`LutEvaluator::evaluate`].
    ///
    /// Errors: as [`LutEvaluator::evaluate`]; [`LweError::InvalidParams`] for several functions with
    /// [`BlindRotation::Lmkcdey`] (its mask must be odd, so the index cannot be a multiple of `k`).
    pub fn evaluate_all(
        &self,
        ct: &LweCiphertext,
        table: &LookupTable,
    ) -> LweResult<Vec<LweCiphertext>> {
        let ctx = self.key.context();
        check_input_modulus(ctx, ct.modulus().value())?;
        if ct.modulus().value() != table.input_modulus {
            return Err(LweError::ModulusMismatch {
                operation: "look-up table (the table's input modulus and the ciphertext's)",
                left: table.input_modulus,
                right: ct.modulus().value(),
            });
        }
        let two_n = 2 * ctx.n() as u64;
        let k = table.functions as u64;
        let switched = match self.key.algorithm() {
            BlindRotation::Lmkcdey if k == 1 => ct.switch_modulus_odd_mask(two_n)?,
            BlindRotation::Lmkcdey => {
                return Err(LweError::InvalidParams {
                    what: "look-up table",
                    reason: "several functions per blind rotation need the ternary or binary \
                             algorithm: LMKCDEY's mask is odd, so its index is not a multiple of the \
                             function count"
                        .into(),
                })
            }
            _ if k == 1 => ct.switch_modulus(two_n)?,
            _ => {
                // Modulo 2n / k, then times k: the phase modulo 2n is k times that modulo 2n / k.
                let coarse = ct.switch_modulus(two_n / k)?;
                LweCiphertext::from_parts(
                    two_n,
                    coarse.b() * k,
                    coarse.a().iter().map(|&a| a * k).collect(),
                )?
            }
        };
        let acc = self.key.rotate(table.poly(), &switched)?;
        (0..table.functions).map(|i| extract(&acc, i)).collect()
    }

    /// The bound of PEGASUS Eq. (3) on `|T(m) - output / Delta_out|` for this evaluator's algorithm,
    /// for an `lipschitz`-Lipschitz `T`, an input error of standard deviation `input_sigma` and an LWE
    /// key of squared norm `key_norm_sq`: `6 (L sqrt((sigma_0 / Delta_in)^2 + (q / (2 n Delta_in))^2
    /// (v_ms + 1/12)) + sqrt(v_br) / Delta_out)`, where `q` is the table's input modulus, `v_ms` the
    /// variance of the modulus switch's rounding in units of `1/2n` (`(1 + ||s||^2) / 12` when rounding
    /// to the nearest integer, `1/12 + ||s||^2 / 3` when the mask is rounded to odd values for
    /// [`BlindRotation::Lmkcdey`]), `1/12` the rounding of the index to the grid, and `v_br` the
    /// variance blind rotation adds, [`BlindRotationKey::added_variance`] for a mask without zeros (an
    /// upper bound for LMKCDEY) in place of the paper's Appendix C.2 estimate.
    pub fn error_bound(
        &self,
        table: &LookupTable,
        lipschitz: f64,
        input_sigma: f64,
        key_norm_sq: f64,
    ) -> f64 {
        let switch = match self.key.algorithm() {
            BlindRotation::Lmkcdey => 1.0 / 12.0 + key_norm_sq / 3.0,
            _ => (1.0 + key_norm_sq) / 12.0,
        };
        let index = table.index_variance(input_sigma, switch);
        let rotation = self.key.added_variance(self.key.lwe_dimension().get());
        6.0 * (lipschitz * index.sqrt() + rotation.sqrt() / table.output_scale)
    }

    /// [`LutEvaluator::evaluate`] on every ciphertext of `cts`, in parallel over the ciphertexts (the key
    /// is shared), results in order.
    ///
    /// Errors: the first error of any evaluation.
    pub fn evaluate_many(
        &self,
        cts: &[LweCiphertext],
        table: &LookupTable,
    ) -> LweResult<Vec<LweCiphertext>> {
        cts.par_iter().map(|ct| self.evaluate(ct, table)).collect()
    }
}
