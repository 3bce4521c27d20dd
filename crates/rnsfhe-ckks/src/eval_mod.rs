//! Approximate reduction modulo `q_0` on ciphertexts ("EvalMod", PEGASUS `F_mod`): slots holding
//! `t = I + eps` with an unknown integer `I` become slots holding `factor * eps`.
//!
//! PEGASUS repacks LWE ciphertexts into CKKS by evaluating their decryption `A s + b` as a linear
//! transform, which leaves `Delta T(v) + q_0 I` per slot with unknown integers `I` (PEGASUS Fig. 6,
//! steps 8-9); `F_mod` (Fig. 1d, Fig. 6 step 10) removes `q_0 I`. Scaled by `1 / q_0` this is
//! `t = I + eps` with `eps = Delta T(v) / q_0`, and `eps = t mod 1` (centered). PEGASUS instantiates
//! `F_mod` after Han and Ki ("Better bootstrapping for approximate homomorphic encryption", CT-RSA 2020,
//! Section 4; PEGASUS Section VI: 9 levels; Table V: 7.06 s); CKKS bootstrapping needs the same
//! function after its CoeffsToSlots.
//!
//! # Method
//!
//! With `u = t - 1/4`, `K' = K + eps_max + 1/4` (so that every `u` lies in `[-K', K']`) and `r`
//! double-angle steps:
//!
//! 1. **normalization**: `x = u / K' = t / K' - 1 / (4 K')` in `[-1, 1]`. The division is free when the
//!    input's scale is `Delta_l / K'` ([`EvalMod::normalized_scale`], `Delta_l` the default scale of its
//!    level): the same ciphertext then encodes `t / K'` at `Delta_l`. Otherwise one multiplication by an
//!    integer constant and a rescaling bring it there (one level). The shift is a constant addition;
//! 2. **scaled cosine**: `y_0 = c p(x)`, `p` the Chebyshev interpolant of degree `d` on `[-1, 1]` of
//!    `cos(2 pi K' x / 2^r) = cos(2 pi (t - 1/4) / 2^r)` ([`Evaluator::evaluate_polynomial_to_scale`]:
//!    `ceil(log2(d + 1))` levels, the interval `[-1, 1]` maps for free). The shift by `1/4` makes the
//!    function even, as in Lattigo's `mod1` evaluator: only even `T_k` appear, which saves about a third
//!    of the products (degree 31: 9 instead of 13);
//! 3. **double angle**, `r` times: `y_{j+1} = 2 y_j^2 - c^(2^(j+1))` (one level each), so that
//!    `y_j = c^(2^j) cos(2^j theta)` and `y_r = c^(2^r) cos(2 pi (t - 1/4)) = c^(2^r) sin(2 pi t)`;
//! 4. without arcsine, `c = (|factor| / (2 pi))^(1 / 2^r)` (folded into the coefficients, as Lattigo's
//!    `mod1` evaluator does) and `y_r = factor sin(2 pi eps) / (2 pi) ~ factor eps`; with an arcsine of
//!    odd degree `a`, `c = 1` and the output is `factor / (2 pi) A_a(y_r)`, `A_a` the Taylor polynomial
//!    of `arcsin` of degree `a` (`ceil(log2(a + 1))` more levels), which undoes the sine:
//!    `arcsin(sin(2 pi eps)) = 2 pi eps` for `|eps| < 1/4`.
//!
//! The output is at the default scale of its level ([`crate::CkksContext::level_scale`]): each step's
//! input scale is computed backwards from it (the polynomial evaluator's target-scale scheme, Bossuat,
//! Mouchet, Troncoso-Pastoriza, Hubaux, Eurocrypt 2021), so no level is spent on scale corrections.
//!
//! # Error bound
//!
//! [`EvalMod::error_bound`] promises, for every `t = I + eps` with integer `|I| <= K` and
//! `|eps| <= eps_max = 2^-log_message_ratio`, `|out / factor - eps| <= total` for the function computed
//! in exact arithmetic ([`EvalMod::evaluate`]); CKKS rounding and encryption noise come on top (see
//! [Noise](#noise)). The terms, in `eps` units:
//!
//! * **polynomial**: the Chebyshev coefficients of `cos(omega x)`, `omega = 2 pi K' / 2^r`, are
//!   `a_k = 2 (-1)^(k/2) J_k(omega)` for even `k` and 0 for odd `k` (Jacobi-Anger), so
//!   `|a_k| <= 2 |J_k(omega)| <= 2 (omega / 2)^k / k!`, and the interpolant of degree `d` at Chebyshev
//!   nodes is within `2 sum_{k > d} |a_k|` of the function (aliasing bound). Hence
//!   `rho_0 = 4 sum_{k > d, k even} (omega / 2)^k / k!` (plus `f64` rounding of the coefficients), the
//!   error of `y_0` relative to `c`;
//! * **double angle**: if `y_j` is off by `delta_j`, `2 (y_j + delta_j)^2 - 2 y_j^2 = 4 y_j delta_j +
//!   2 delta_j^2` with `|y_j| <= c^(2^j)`; in units of `c^(2^j)`, `rho_{j+1} <= 4 kappa_j rho_j +
//!   2 rho_j^2` with `kappa_j = 1`, except for the last step where `y_{r-1}` is
//!   `c^(2^(r-1)) cos(pi (eps - 1/4))` and `kappa_{r-1} = cos(pi / 4 - pi eps_max)` (about `1 / sqrt 2`).
//!   Without arcsine the output's error is `factor rho_r / (2 pi)`, term `double_angle = rho_r / (2 pi)`;
//!   with it, `y_r` is off by `rho_r` (absolute, `c = 1`) and the arcsine's slope, at most
//!   `1 / sqrt(1 - u^2)` on `|y| <= u = sin(2 pi eps_max) + rho_r`, multiplies it:
//!   `double_angle = rho_r / (2 pi sqrt(1 - u^2))`;
//! * **sine** (without arcsine): `|eps - sin(2 pi eps) / (2 pi)| <= (2 pi)^2 eps_max^3 / 6`
//!   (`|x - sin x| <= |x|^3 / 6`); about `2^-24.3` at `eps_max = 2^-9`;
//! * **arcsine** (with it): the Taylor coefficients `c_k` of `arcsin` are positive and decreasing, so the
//!   truncation after degree `a` is at most `c_{a+2} s^(a+2) / (1 - s^2)` at `s = sin(2 pi eps_max)`,
//!   divided by `2 pi`.
//!
//! [`EvalMod::new`] refuses parameters whose total is not below `eps_max` (nothing would be left of
//! `eps`).
//!
//! # Noise
//!
//! The input's own noise passes to the output with slope at most 1 (`d/dt sin(2 pi t) / (2 pi) =
//! cos(2 pi t)`), in `t` units: a normalized input, at scale `Delta_l / K'`, carries `K'` times (about
//! 4 bits) more of it than one at `Delta_l`, the price of the saved level. The roundings of the
//! evaluation itself are amplified by up to 4 per level: `T_2m = 2 T_m^2 - 1` and `2 y^2 - c^2` multiply
//! the error of their operand by `4 T_m` and `4 y`, and near `x = 0` (the slots with `I = 0`, the most
//! frequent ones) every `T_{2^j}` is close to `+-1`; so about `4^depth / (2 pi)` times the rounding of
//! one rescaling, relative to the working scale.
//!
//! # Choosing `K` and `r`
//!
//! `I` is the rounding of `(b + <a, s>) / q_0` over uniform `a`: a sum of `||s||^2 + 1` uniform
//! variables on `[-1/2, 1/2)`, of standard deviation `sigma_I = sqrt((||s||^2 + 1) / 12)` (the variance
//! of PEGASUS Appendix C.2) ([`EvalModParams::k_for_secret`]). Each double angle halves the frequency
//! `omega` of the cosine, so the degree needed for a given `rho_0` drops roughly by half, at the price
//! of one level and of a factor 4 on the noise.
//!
//! | preset | `K` | `eps_max` | `r` | `d` | arcsine | levels | bound (bits) | for |
//! |---|---|---|---|---|---|---|---|---|
//! | [`EvalModParams::pegasus_table4`] | 16 | `2^-9` | 3 | 31 | - | 8 | 24.1 | PEGASUS Table IV, `h = 64`: `sigma_I = 2.33`, `K = 6.9 sigma_I` |
//! | [`EvalModParams::pegasus_secure128`] | 48 | `2^-9` | 4 | 63 | - | 10 | 24.3 | dense binary LWE key of dimension 1024: `sigma_I = 6.5`, `K = 7.3 sigma_I` |
//! | [`EvalModParams::bootstrapping`] | 16 | `2^-8` | 3 | 31 | 3 | 10 | 27.1 | CKKS bootstrapping with a sparse secret `h <= 64` |
//!
//! Levels count a normalized input (one more otherwise). The PEGASUS use fits the paper's 9 levels with
//! the normalization included.

use std::f64::consts::PI;

use rnsfhe_ring::parallel::active_wait;

use crate::chebyshev::{check_degree, ChebyshevSeries};
use crate::error::{Error, Result};
use crate::evaluator::Evaluator;
use crate::plaintext::Ciphertext;
use crate::polynomial::{degree_levels, Polynomial};
use crate::CkksContext;

/// Largest number of double-angle steps: each multiplies the noise by up to 4, and `4^16 = 2^32` of
/// amplification leaves nothing of a 60-bit scale.
pub const MAX_DOUBLE_ANGLE: u32 = 16;

/// Largest degree of the arcsine correction: beyond degree 31 its Taylor truncation is below `2^-56` for
/// any `eps_max <= 2^-4`, far below the CKKS noise.
pub const MAX_ARCSINE_DEGREE: usize = 31;

/// Relative distance between an input's scale times `K'` ([`EvalMod::interval_bound`]) and its level's
/// default scale within which the
/// input counts as normalized (no level spent on the division by `K'`). The powers of the Chebyshev
/// evaluation then drift from their default scales by at most `2^-10` relative per squaring, which
/// changes nothing (the output scale is exact regardless).
pub const NORMALIZED_SCALE_TOLERANCE: f64 = 1.0 / 1024.0;

const OP: &str = "EvalMod (approximate reduction modulo q_0)";

/// The parameters of the approximate reduction modulo `q_0` (see the [module documentation](self)),
/// declared as a literal struct and checked by [`EvalMod::new`].
///
/// ```
/// use rnsfhe_ckks::{EvalMod, EvalModParams};
///
/// let params = EvalModParams {
///     k: 16,
///     log_message_ratio: 9.0,
///     double_angle: 3,
///     cos_degree: 31,
///     arcsine_degree: 0,
///     start_level: None,
/// };
/// assert_eq!(params, EvalModParams::pegasus_table4());
/// let em = EvalMod::new(params).unwrap();
/// assert_eq!(em.depth(), 8); // 5 for degree 31, 3 double angles
/// assert!(em.error_bound().total < 2f64.powi(-23));
/// // t = 3 + 0.001: the reduction keeps 0.001 (times the factor asked for)
/// assert!((em.evaluate(3.001, 1.0) - 0.001).abs() <= em.error_bound().total);
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct EvalModParams {
    /// Bound `K` on the integer part: inputs are `t = I + eps` with `|I| <= K`.
    pub k: u32,
    /// `log2(q_0 / max |m|)`: the fractional parts satisfy `|eps| <= eps_max = 2^-log_message_ratio`
    /// (PEGASUS Table IV: `q_0 ~ 2^45`, `Delta ~ 2^36`, so 9 for `|T(v)| <= 1`). At least 2
    /// (`eps_max <= 1/4`, where the sine is still increasing).
    pub log_message_ratio: f64,
    /// Number `r` of double-angle steps (one level each), at most [`MAX_DOUBLE_ANGLE`].
    pub double_angle: u32,
    /// Degree `d` of the Chebyshev interpolant of the scaled cosine, at least 2 (`ceil(log2(d + 1))`
    /// levels; the cosine is even, so an odd `d` acts as `d - 1`).
    pub cos_degree: usize,
    /// Degree of the arcsine correction: 0 for none, otherwise odd, from 3 to [`MAX_ARCSINE_DEGREE`]
    /// (`ceil(log2(a + 1))` levels).
    pub arcsine_degree: usize,
    /// The level (limb count) to drop the input to before evaluating (fewer limbs, faster), or `None`
    /// to evaluate at the input's level. An input below it is an error.
    pub start_level: Option<usize>,
}

impl EvalModParams {
    /// PEGASUS with Table IV's parameters: `K = 16` (`h = 64`: `sigma_I = sqrt(65 / 12) = 2.33`, so
    /// `K = 6.9 sigma_I`, `P(|I| > K) <= 1e-10` per slot, about `6e-12` for a normal law),
    /// `eps_max = 2^-9` (`q_0 / Delta = 2^45 / 2^36`), `r = 3`, degree 31, no arcsine: 8 levels, 9 with
    /// the normalization (PEGASUS Section VI: 9).
    /// Bound: `2^-24.1` (the sine's own `2^-24.3` dominates; the polynomial, through the double angles,
    /// contributes `2^-27.2`).
    pub const fn pegasus_table4() -> Self {
        Self {
            k: 16,
            log_message_ratio: 9.0,
            double_angle: 3,
            cos_degree: 31,
            arcsine_degree: 0,
            start_level: None,
        }
    }

    /// PEGASUS with a dense uniform binary LWE key of dimension 1024 (`||s||^2 ~ 512`, `sigma_I = 6.5`):
    /// `K = 48 = 7.3 sigma_I` (`P(|I| > K) <= 4e-12` per slot, about `2e-13` for a normal law),
    /// `eps_max = 2^-9`, `r = 4`, degree 63, no arcsine: 10 levels (11 with the normalization). Bound:
    /// `2^-24.3`.
    ///
    /// Centering the key (`s - 1/2` in `{-1/2, 1/2}`, the constant `<a, 1/2>` folded into `b` modulo
    /// `q_0` in the clear) quarters the variance of the sum: `sigma_I = sqrt(n / 48 + 1 / 12) = 4.6`, and
    /// `K = 32` with `r = 4`, degree 31 (9 levels) keeps 6.9 standard deviations.
    pub const fn pegasus_secure128() -> Self {
        Self {
            k: 48,
            log_message_ratio: 9.0,
            double_angle: 4,
            cos_degree: 63,
            arcsine_degree: 0,
            start_level: None,
        }
    }

    /// CKKS bootstrapping after CoeffsToSlots with a sparse secret (`h <= 64`, `sigma_I <= 2.33`):
    /// `K = 16`, `q_0 / max |m| = 2^8`, `r = 3`, degree 31 and an arcsine of degree 3, which removes the
    /// sine's `2^-21.3` error: 10 levels, bound `2^-27.1`.
    pub const fn bootstrapping() -> Self {
        Self {
            k: 16,
            log_message_ratio: 8.0,
            double_angle: 3,
            cos_degree: 31,
            arcsine_degree: 3,
            start_level: None,
        }
    }

    /// The bound `K = ceil(sigmas * sigma_I)` on `|I|` for inputs `t = (b + <a, s>) / q_0` with uniform
    /// `a`, `b` and a secret of squared norm `norm_sq`: `sigma_I = sqrt((norm_sq + 1) / 12)` (the
    /// variance of PEGASUS Appendix C.2, a sum of at most `norm_sq + 1` uniform variables on
    /// `[-1/2, 1/2)`). The uniform law is strictly sub-Gaussian (its moment generating function
    /// `sinh(l / 2) / (l / 2)` is at most `exp(l^2 / 24)`), so `P(|I| > K) <= 2 exp(-sigmas^2 / 2)`
    /// (Chernoff), `1e-10` at 6.9 standard deviations.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidEvalMod`] unless `norm_sq >= 0` and `sigmas > 0` are finite and `K` fits a `u32`.
    pub fn k_for_secret(norm_sq: f64, sigmas: f64) -> Result<u32> {
        if !(norm_sq.is_finite() && norm_sq >= 0.0 && sigmas.is_finite() && sigmas > 0.0) {
            return Err(Error::InvalidEvalMod {
                parameter: "k",
                reason: format!(
                    "the squared norm {norm_sq} must be finite and >= 0 and the number of standard \
                     deviations {sigmas} finite and > 0"
                ),
            });
        }
        let k = (sigmas * ((norm_sq + 1.0) / 12.0).sqrt()).ceil();
        if k > u32::MAX as f64 {
            return Err(Error::InvalidEvalMod {
                parameter: "k",
                reason: format!("K = {k} does not fit a u32"),
            });
        }
        Ok((k as u32).max(1))
    }
}

/// The terms of the error bound of an [`EvalMod`], in units of `eps` (see the
/// [module documentation](self#error-bound)): the output `out` satisfies `|out / factor - eps| <= total`
/// in exact arithmetic.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct EvalModBound {
    /// `rho_0`: the Chebyshev interpolant's error, relative to the amplitude `c` of the scaled cosine.
    pub polynomial: f64,
    /// `rho_0` carried through the double angles (and the arcsine's slope), divided by `2 pi`.
    pub double_angle: f64,
    /// `(2 pi)^2 eps_max^3 / 6`, the sine's deviation from `eps` (0 with the arcsine correction).
    pub sine: f64,
    /// The arcsine's Taylor truncation divided by `2 pi` (0 without it).
    pub arcsine: f64,
    /// The bound: `double_angle + sine + arcsine`.
    pub total: f64,
}

/// A checked [`EvalModParams`] with its interpolant, arcsine polynomial, depth and error bound; apply it
/// with [`Evaluator::eval_mod`].
#[derive(Debug, Clone, PartialEq)]
pub struct EvalMod {
    params: EvalModParams,
    /// `cos(2 pi K' x / 2^r)` on `[-1, 1]`, amplitude 1 (even: odd coefficients exactly 0).
    cosine: Polynomial,
    /// Taylor coefficients of `arcsin` up to the arcsine degree (power basis; empty without arcsine).
    arcsine: Vec<f64>,
    bound: EvalModBound,
}

impl EvalMod {
    /// Checks the parameters, interpolates the scaled cosine and derives the error bound.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidEvalMod`] for `k = 0`, a `log_message_ratio` outside `[2, 60]` or not finite,
    /// more than [`MAX_DOUBLE_ANGLE`] double angles, a cosine degree outside `[1, MAX_DEGREE]`
    /// ([`crate::chebyshev::MAX_DEGREE`]), an arcsine degree other than 0 or an odd number in
    /// `[3, MAX_ARCSINE_DEGREE]`, a start level of 0 or not above the depth, or a bound not below
    /// `eps_max` (naming the bound and what to raise).
    pub fn new(params: EvalModParams) -> Result<Self> {
        let invalid =
            |parameter: &'static str, reason: String| Error::InvalidEvalMod { parameter, reason };
        if params.k == 0 {
            return Err(invalid("k", "K must be at least 1".into()));
        }
        let ratio = params.log_message_ratio;
        if !(ratio.is_finite() && (2.0..=60.0).contains(&ratio)) {
            return Err(invalid(
                "log_message_ratio",
                format!(
                    "{ratio} is not in [2, 60]: eps_max = 2^-log_message_ratio must be at most 1/4 \
                     (where sin(2 pi eps) still increases) and at least 2^-60"
                ),
            ));
        }
        if params.double_angle > MAX_DOUBLE_ANGLE {
            return Err(invalid(
                "double_angle",
                format!(
                    "{} double angles; at most {MAX_DOUBLE_ANGLE} (each multiplies the noise by up to 4)",
                    params.double_angle
                ),
            ));
        }
        if params.cos_degree < 2 || check_degree(params.cos_degree).is_err() {
            return Err(invalid(
                "cos_degree",
                format!(
                    "degree {} is not in [2, {}] (the cosine is even: degree 1 is a constant)",
                    params.cos_degree,
                    crate::chebyshev::MAX_DEGREE
                ),
            ));
        }
        let a = params.arcsine_degree;
        if a != 0 && (a.is_multiple_of(2) || !(3..=MAX_ARCSINE_DEGREE).contains(&a)) {
            return Err(invalid(
                "arcsine_degree",
                format!(
                    "degree {a} is neither 0 (no correction) nor odd in [3, {MAX_ARCSINE_DEGREE}]"
                ),
            ));
        }
        let k_prime = interval_bound(params.k, ratio);
        let omega = 2.0 * PI * k_prime / f64::from(params.double_angle).exp2();
        let cosine = Polynomial::nonconstant(ChebyshevSeries::interpolate(
            |x| (omega * x).cos(),
            -1.0,
            1.0,
            params.cos_degree,
        )?)?;
        let arcsine = if a == 0 {
            Vec::new()
        } else {
            arcsine_taylor(a + 2)[..=a].to_vec()
        };
        let mut em = Self {
            params,
            cosine,
            arcsine,
            bound: EvalModBound {
                polynomial: 0.0,
                double_angle: 0.0,
                sine: 0.0,
                arcsine: 0.0,
                total: 0.0,
            },
        };
        em.bound = em.derive_bound(omega);
        let eps_max = em.eps_max();
        if em.bound.total.is_nan() || em.bound.total >= eps_max {
            return Err(invalid(
                "cos_degree",
                format!(
                    "the error bound 2^{:.1} (polynomial 2^{:.1} after {} double angles: 2^{:.1}; sine \
                     2^{:.1}; arcsine 2^{:.1}) is not below eps_max = 2^{:.1}: raise the cosine degree \
                     or the double angles, or lower K",
                    em.bound.total.log2(),
                    em.bound.polynomial.log2(),
                    params.double_angle,
                    em.bound.double_angle.log2(),
                    em.bound.sine.log2(),
                    em.bound.arcsine.log2(),
                    eps_max.log2()
                ),
            ));
        }
        if let Some(start) = params.start_level {
            if start <= em.depth() {
                return Err(invalid(
                    "start_level",
                    format!(
                        "start level {start} leaves no level for the output: the evaluation uses {} \
                         levels (one more for an input that is not normalized), so the start level must \
                         be at least {}",
                        em.depth(),
                        em.depth() + 1
                    ),
                ));
            }
        }
        Ok(em)
    }

    /// The bound of the [module documentation](self#error-bound).
    fn derive_bound(&self, omega: f64) -> EvalModBound {
        let d = self.params.cos_degree;
        // 4 sum_{k > d, k even} (omega / 2)^k / k!, summed in log space until the terms vanish.
        let half = omega / 2.0;
        let mut tail = 0.0;
        let mut k = (d + 1).next_multiple_of(2);
        loop {
            let term = (k as f64 * half.ln() - ln_factorial(k)).exp();
            tail += term;
            if (k as f64 > half && term <= tail * 1e-17) || k > d + 100_000 {
                break;
            }
            k += 2;
        }
        // f64 rounding of the interpolation and of the coefficients the evaluator drops as negligible
        // (below 1e-15 of their sum, crate::polynomial).
        let magnitude: f64 = self.cosine.coeffs().iter().map(|c| c.abs()).sum();
        let rounding = (d as f64 + 1.0) * 2e-15 * magnitude;
        let polynomial = 4.0 * tail + rounding;
        let r = self.params.double_angle;
        let eps_max = self.eps_max();
        let mut rho = polynomial;
        for j in 0..r {
            let kappa = if j + 1 == r {
                (PI / 4.0 - PI * eps_max).cos()
            } else {
                1.0
            };
            rho = 4.0 * kappa * rho + 2.0 * rho * rho;
        }
        let (double_angle, sine, arcsine) = if self.arcsine.is_empty() {
            let x = 2.0 * PI * eps_max;
            (rho / (2.0 * PI), x * x * x / 6.0 / (2.0 * PI), 0.0)
        } else {
            let s = (2.0 * PI * eps_max).sin();
            let u = s + rho;
            let slope = if u < 1.0 {
                (1.0 - u * u).sqrt().recip()
            } else {
                f64::INFINITY
            };
            let a = self.params.arcsine_degree;
            let next = arcsine_taylor(a + 2)[a + 2];
            let truncation = next * s.powi(a as i32 + 2) / (1.0 - s * s);
            (rho * slope / (2.0 * PI), 0.0, truncation / (2.0 * PI))
        };
        EvalModBound {
            polynomial,
            double_angle,
            sine,
            arcsine,
            total: double_angle + sine + arcsine,
        }
    }

    /// The parameters.
    pub fn params(&self) -> &EvalModParams {
        &self.params
    }

    /// `eps_max = 2^-log_message_ratio`.
    pub fn eps_max(&self) -> f64 {
        self.params.log_message_ratio.exp2().recip()
    }

    /// `K' = K + eps_max + 1/4`, the half-width of the interval the cosine is interpolated on, in
    /// `u = t - 1/4`.
    pub fn interval_bound(&self) -> f64 {
        interval_bound(self.params.k, self.params.log_message_ratio)
    }

    /// The error bound (see [`EvalModBound`]).
    pub fn error_bound(&self) -> &EvalModBound {
        &self.bound
    }

    /// The Chebyshev interpolant of `cos(2 pi K' x / 2^r)` on `[-1, 1]` (amplitude 1), evaluated at
    /// `x = (t - 1/4) / K'`.
    pub fn cosine(&self) -> &Polynomial {
        &self.cosine
    }

    /// The levels used on a normalized input ([`EvalMod::normalized_scale`]): `ceil(log2(d + 1))` for
    /// the cosine, `r`, and `ceil(log2(a + 1))` for an arcsine of degree `a`; one more for any other
    /// input.
    pub fn depth(&self) -> usize {
        let arcsine = if self.arcsine.is_empty() {
            0
        } else {
            degree_levels(self.params.arcsine_degree)
        };
        self.cosine.depth() + self.params.double_angle as usize + arcsine
    }

    /// The ciphertext products (each with a relinearization) of one evaluation: those of the cosine's
    /// schedule ([`Polynomial::multiplications`]), one per double angle, and the arcsine's.
    pub fn multiplications(&self) -> usize {
        let cosine = self.cosine.multiplications();
        let arcsine = if self.arcsine.is_empty() {
            0
        } else {
            Polynomial::power(self.arcsine.clone()).map_or(0, |p| p.multiplications())
        };
        cosine + self.params.double_angle as usize + arcsine
    }

    /// The scale at which an input at `level` holding `t` is already normalized: `Delta_l / K'`
    /// ([`EvalMod::interval_bound`]), so that the same ciphertext holds `t / K'` at the level's default
    /// scale `Delta_l` and no level is spent on the division (a linear transform producing the input can
    /// fold `1 / K'` into its constants).
    ///
    /// Errors: [`Error::InvalidArgument`] for a level outside `[1, max_level]`.
    pub fn normalized_scale(&self, ctx: &CkksContext, level: usize) -> Result<f64> {
        Ok(ctx.level_scale(level)? / self.interval_bound())
    }

    /// Whether `ct` (at the start level, if one is set) is normalized: its scale times `K'` is within
    /// [`NORMALIZED_SCALE_TOLERANCE`] of its level's default scale.
    ///
    /// Errors: [`Error::InvalidArgument`] for a level outside the context's chain.
    pub fn is_normalized(&self, ctx: &CkksContext, ct: &Ciphertext) -> Result<bool> {
        let level = self.params.start_level.unwrap_or(ct.level());
        let ratio = ct.scale() * self.interval_bound() / ctx.level_scale(level)?;
        Ok((ratio - 1.0).abs() <= NORMALIZED_SCALE_TOLERANCE)
    }

    /// The amplitude `c` of the scaled cosine and the amplitude `g = c^(2^r)` after the double angles:
    /// `g = |factor| / (2 pi)` without arcsine (the output is `y_r` itself), 1 with it.
    fn amplitudes(&self, factor: f64) -> (f64, f64) {
        let g = if self.arcsine.is_empty() {
            factor.abs() / (2.0 * PI)
        } else {
            1.0
        };
        (
            g.powf(f64::from(self.params.double_angle).exp2().recip()),
            g,
        )
    }

    /// The arcsine polynomial times `|factor| / (2 pi)` (power basis).
    fn scaled_arcsine(&self, factor: f64) -> Vec<f64> {
        let s = factor.abs() / (2.0 * PI);
        self.arcsine.iter().map(|c| c * s).collect()
    }

    /// The function [`Evaluator::eval_mod`] computes, in `f64` arithmetic (the same coefficients and
    /// steps): about `factor * (t mod 1)` for `t = I + eps` in the claimed range, within
    /// `|factor| * error_bound().total`. Outside the range (`|I| > K` or `|eps| > eps_max`) the value is
    /// meaningless.
    pub fn evaluate(&self, t: f64, factor: f64) -> f64 {
        let k_prime = self.interval_bound();
        let x = t / k_prime - 0.25 / k_prime;
        let (c, _) = self.amplitudes(factor);
        let mut y = c * self.cosine.evaluate(x);
        let mut amplitude = c;
        for _ in 0..self.params.double_angle {
            amplitude *= amplitude;
            y = 2.0 * y * y - amplitude;
        }
        if !self.arcsine.is_empty() {
            y = self
                .scaled_arcsine(factor)
                .iter()
                .rev()
                .fold(0.0, |acc, c| acc * y + c);
        }
        if factor < 0.0 {
            -y
        } else {
            y
        }
    }
}

/// `K' = K + eps_max + 1/4`: `u = t - 1/4` lies in `[-K', K']` for every input.
fn interval_bound(k: u32, log_message_ratio: f64) -> f64 {
    f64::from(k) + log_message_ratio.exp2().recip() + 0.25
}

/// `ln(k!)`, exactly summed for small `k` and by Stirling's series beyond.
fn ln_factorial(k: usize) -> f64 {
    if k < 64 {
        (2..=k).map(|i| (i as f64).ln()).sum()
    } else {
        let n = k as f64;
        n * n.ln() - n + 0.5 * (2.0 * PI * n).ln() + 1.0 / (12.0 * n) - 1.0 / (360.0 * n * n * n)
    }
}

/// The Taylor coefficients of `arcsin` up to `degree` (power basis): `c_1 = 1`,
/// `c_{k+2} = c_k k^2 / ((k + 1)(k + 2))`, even ones 0.
fn arcsine_taylor(degree: usize) -> Vec<f64> {
    let mut c = vec![0.0; degree + 1];
    if degree >= 1 {
        c[1] = 1.0;
    }
    let mut k = 1;
    while k + 2 <= degree {
        let kf = k as f64;
        c[k + 2] = c[k] * kf * kf / ((kf + 1.0) * (kf + 2.0));
        k += 2;
    }
    c
}

impl Evaluator {
    /// The approximate reduction modulo 1 of the slots (PEGASUS `F_mod`, Fig. 6 step 10; see the
    /// [module documentation](crate::eval_mod)): for slots holding `t = I + eps` with integer `|I| <= K`
    /// and `|eps| <= eps_max`, returns a ciphertext holding `factor * eps` within
    /// `|factor| * em.error_bound().total` plus the CKKS noise, at the default scale of level
    /// `start - depth` (`start` the input's level or the start level, `depth` [`EvalMod::depth`], plus
    /// one unless the input is normalized, [`EvalMod::is_normalized`]).
    ///
    /// PEGASUS, with `t = (A s + b) / q_0` and `eps = Delta T(v) / q_0`, passes `factor = q_0 / Delta`
    /// to get `T(v)` back; bootstrapping passes its own ratio. Needs the relinearization key.
    ///
    /// # Errors
    ///
    /// * [`Error::InvalidArgument`] for a factor that is zero or not finite;
    /// * [`Error::NotEnoughLevels`] if the input is below the start level, or its level leaves fewer
    ///   than the levels the evaluation uses (naming the levels needed and available);
    /// * [`Error::MissingKey`] without a relinearization key; [`Error::ContextMismatch`];
    /// * as [`Evaluator::evaluate_polynomial_to_scale`] and [`Evaluator::multiply_rescale`].
    pub fn eval_mod(&self, ct: &Ciphertext, em: &EvalMod, factor: f64) -> Result<Ciphertext> {
        active_wait(|| self.eval_mod_waiting(ct, em, factor))
    }

    /// The work of [`Self::eval_mod`], which runs it inside [`active_wait`] (a long
    /// sequence of short parallel sections).
    fn eval_mod_waiting(&self, ct: &Ciphertext, em: &EvalMod, factor: f64) -> Result<Ciphertext> {
        self.check_ct(ct)?;
        if !(factor.is_finite() && factor != 0.0) {
            return Err(Error::InvalidArgument {
                operation: OP,
                reason: format!("the output factor {factor} must be finite and non-zero"),
            });
        }
        self.relin_key(OP)?;
        let ctx = self.context();
        let start = match em.params.start_level {
            Some(level) => {
                if ct.level() < level {
                    return Err(Error::NotEnoughLevels {
                        operation: OP,
                        level: ct.level(),
                        log_scale: ct.log2_scale(),
                        needed: level,
                        more: level - ct.level(),
                    });
                }
                self.drop_to_level(ct, level)?
            }
            None => ct.clone(),
        };
        let normalized = em.is_normalized(ctx, &start)?;
        let depth = em.depth() + usize::from(!normalized);
        self.check_levels(&start, depth, OP)?;
        let k_prime = em.interval_bound();
        // t / K': the same ciphertext at scale times K' (free), after bringing its scale to
        // Delta_{l-1} / K' with one integer multiplication and a rescaling when it is elsewhere; then
        // x = t / K' - 1 / (4 K').
        let mut shifted = if normalized {
            self.relinearize(&start)?
        } else {
            let target = ctx.level_scale(start.level() - 1)? / k_prime;
            self.adjust_scale(&self.relinearize(&start)?, target, OP)?
        };
        shifted.scale *= k_prime;
        let x = self.add_real(&shifted, -0.25 / k_prime)?;

        let (c, _) = em.amplitudes(factor);
        let r = em.params.double_angle as usize;
        let cos_levels = em.cosine.depth();
        let after_cosine = x.level() - cos_levels;
        let after_double = after_cosine - r;
        // Scales backwards from the default scale where the double angles end: a step at level `lv`
        // squares (scale s^2), rescales by q_{lv-1} and doubles by halving the scale, so its input
        // needs s = sqrt(2 s' q_{lv-1}) for the output scale s'.
        let q = ctx.q_moduli();
        let double_target = ctx.level_scale(after_double)?;
        let mut cos_target = double_target;
        for lv in after_double + 1..=after_cosine {
            cos_target = (2.0 * cos_target * q[lv - 1] as f64).sqrt();
        }
        let scaled: Vec<f64> = em.cosine.coeffs().iter().map(|a| a * c).collect();
        let cosine = Polynomial::chebyshev(scaled, -1.0, 1.0)?;
        let mut y = self.evaluate_polynomial_to_scale(&x, &cosine, cos_target)?;
        let mut amplitude = c;
        for _ in 0..r {
            amplitude *= amplitude;
            let mut squared = self.multiply_rescale(&y, &y)?;
            squared.scale /= 2.0;
            y = self.add_real(&squared, -amplitude)?;
        }
        y.scale = double_target;
        if !em.arcsine.is_empty() {
            let arcsine = Polynomial::power(em.scaled_arcsine(factor))?;
            let out_level = after_double - degree_levels(em.params.arcsine_degree);
            y = self.evaluate_polynomial_to_scale(&y, &arcsine, ctx.level_scale(out_level)?)?;
        }
        if factor < 0.0 {
            y = self.negate(&y)?;
        }
        Ok(y)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn arcsine_coefficients() {
        let c = arcsine_taylor(7);
        let want = [0.0, 1.0, 0.0, 1.0 / 6.0, 0.0, 3.0 / 40.0, 0.0, 5.0 / 112.0];
        for (g, w) in c.iter().zip(want) {
            assert!((g - w).abs() < 1e-16, "{c:?}");
        }
        let x: f64 = 0.3;
        let series = arcsine_taylor(61)
            .iter()
            .rev()
            .fold(0.0, |acc, c| acc * x + c);
        assert!((series - x.asin()).abs() < 1e-15);
    }

    #[test]
    fn ln_factorial_matches_the_product() {
        for k in [0usize, 1, 5, 20, 63, 64, 100, 170] {
            let exact: f64 = (1..=k).map(|i| i as f64).product::<f64>().ln();
            assert!(
                (ln_factorial(k) - exact).abs() < 1e-9 * exact.max(1.0),
                "{k}"
            );
        }
    }
}
