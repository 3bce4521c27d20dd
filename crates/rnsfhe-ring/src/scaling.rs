//! Halevi-Polyakov-Shoup scaling in CRT representation: simple scaling ([`SimpleScaler`], HPS Section 2.3,
//! used by BFV decryption, Section 4.4) and complex scaling ([`ComplexScaler`], HPS Section 2.4, used by BFV
//! multiplication, Section 4.5).
//!
//! Both procedures split precomputed rationals `t * qtilde_i / q_i` (simple) or `t * Qtilde_i * p / q_i`
//! (complex) into an integral part `omega_i` and a fractional part `theta_i` (HPS Section 4.2), and compute
//! per coefficient an integer inner product with the `omega`s plus the rounded sum `v = round(sum_i x_i
//! theta_i)`. The only inexact step is `v`.
//!
//! # Precision of `v`
//!
//! HPS store `theta_i` as one `f64`, which bounds the error of `v` by about `k * 2^-54 * max q_i`: below
//! 1/4 for moduli up to 2^47 (their decryption condition, Section 2.3, where `t x / Q` is known to be
//! within 1/4 of an integer), but a *uniformly random* `x` is then rounded to the wrong integer with
//! probability of order `k 2^(bits - 54)`: measured in `tests/scaling_bigint.rs` with five moduli, about 1
//! in 1000 inputs for 45-bit moduli, 40% for 55-bit and nearly all for 60-bit moduli. This
//! module computes `v` so that it equals the exact rounding except when `sum_i x_i theta_i` lies within a
//! tiny distance `eps` of a half-integer, on one of two paths chosen in the constructors
//! ([`FractionPath`]):
//!
//! - [`FractionPath::Float`], for moduli below `2^FLOAT_PATH_MAX_MODULUS_BITS` (47 bits, the HPS bound)
//!   and fewer than 128 limbs: `f64` arithmetic only, with `theta_i` held as an unevaluated sum of two
//!   doubles (about 106 bits) and each product `x_i * theta_i` split exactly into an integer and a
//!   fraction by Dekker's two-product. `eps < (k^2 + k) 2^-53` (below `2^-42` for 32 limbs, `2^-39` for
//!   127).
//! - [`FractionPath::Wide`], for any moduli below `2^62`: `theta_i` as a 128-bit fixed-point fraction
//!   `floor(theta_i 2^128)`, products in exact 192-bit integer arithmetic. The computed sum is never above
//!   the exact one and below it by less than `k 2^-66`, so `v` is exact unless the fractional part of the
//!   exact sum lies in `[1/2, 1/2 + k 2^-66)`. Simple scaling computes this path in one pass with
//!   [`rnsfhe_math::simd::scaled_rounding`] (integral and fractional parts together, AVX-512 IFMA where
//!   available), which gives the same integers as the scalar loop.
//!
//! Rounding is `round(z) = floor(z + 1/2)`. Since every modulus is odd, `t x / Q` is never a half-integer,
//! so the exact rounding is unambiguous.

use std::sync::Arc;

use rayon::prelude::*;
use rnsfhe_math::simd::{
    map_in_place, scaled_rounding, FixedWeight, Fresh, ModAdd, Weights, NARROW_BOUND,
    SCALED_ROUNDING_MAX_ROWS,
};
use rnsfhe_math::{simd, Modulus, ShoupConstant};

use crate::basis::RnsBasis;
use crate::error::{Error, Result};
use crate::parallel;
use crate::poly::{Coeff, Poly};

/// Largest plaintext modulus accepted by the scalers: `t <= 2^60`, so that `t * qtilde_i < 2^122` is exact
/// in 128-bit arithmetic and `t` is a valid word modulus for Shoup multiplication.
pub const MAX_PLAINTEXT_MODULUS: u64 = 1 << 60;

/// The [`FractionPath::Float`] path is used (and allowed) only when every modulus whose residues multiply
/// the fractional parts is below `2^FLOAT_PATH_MAX_MODULUS_BITS`: residues then convert exactly to `f64`
/// and `x_i * theta_i < 2^47` leaves room for the exact integer/fraction split (HPS Section 2.3 bound).
pub const FLOAT_PATH_MAX_MODULUS_BITS: u32 = 47;

/// The [`FractionPath::Float`] path keeps the integer parts of the products in one `f64`, exact while
/// `k * 2^47 < 2^53`: it is used only for fewer than this many limbs.
pub const FLOAT_PATH_MAX_LIMBS: usize = 128;

/// Coefficients handled per inner block: the unit of rayon work, and the length of the stack accumulators
/// (limb-outer, coefficient-inner loops keep one constant in registers per limb and vectorize).
const BLOCK: usize = 256;

/// The rounded fraction sum `v` of complex scaling enters its output sums as `v_lo + v_hi 2^V_SPLIT`:
/// 60 bits keeps both parts below [`NARROW_BOUND`].
const V_SPLIT: u32 = 60;

/// Veltkamp's splitter `2^27 + 1`: splits a double into two halves of at most 26 significant bits.
const SPLITTER: f64 = 134_217_729.0;
/// `2^52`: adding and subtracting it rounds a double in `[0, 2^51)` to the nearest integer.
const ROUND_UNSIGNED: f64 = 4_503_599_627_370_496.0;
/// `1.5 * 2^52`: adding and subtracting it rounds a double in `(-2^51, 2^51)` to the nearest integer.
const ROUND_SIGNED: f64 = 6_755_399_441_055_744.0;

/// How the fractional sum `v = round(sum_i x_i theta_i)` of HPS Eq. 4 (and its Section 2.4 analogue) is
/// computed. See the module documentation for the error bounds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FractionPath {
    /// `f64` arithmetic with double-double `theta_i` and exact two-products; moduli below 2^47.
    Float,
    /// 128-bit fixed-point `theta_i` with exact 192-bit products; any modulus below 2^62.
    Wide,
}

impl FractionPath {
    /// The path the constructors choose: [`FractionPath::Float`] when every one of `moduli` is below
    /// `2^FLOAT_PATH_MAX_MODULUS_BITS` and there are fewer than [`FLOAT_PATH_MAX_LIMBS`] of them,
    /// [`FractionPath::Wide`] otherwise.
    pub fn select(moduli: &[Modulus]) -> Self {
        if Self::float_available(moduli).is_ok() {
            FractionPath::Float
        } else {
            FractionPath::Wide
        }
    }

    fn float_available(moduli: &[Modulus]) -> Result<()> {
        let widest = moduli.iter().max_by_key(|m| m.value());
        match widest {
            Some(m)
                if m.bits() > FLOAT_PATH_MAX_MODULUS_BITS
                    || moduli.len() >= FLOAT_PATH_MAX_LIMBS =>
            {
                Err(Error::FloatScalingUnavailable {
                    modulus: m.value(),
                    bits: m.bits(),
                    limbs: moduli.len(),
                    max_bits: FLOAT_PATH_MAX_MODULUS_BITS,
                    max_limbs: FLOAT_PATH_MAX_LIMBS,
                })
            }
            _ => Ok(()),
        }
    }
}

/// A fractional part `theta = rho / q` in `[0, 1)` in the two representations of [`FractionPath`].
#[derive(Clone, Copy, Debug)]
struct FloatFraction {
    /// The double nearest to `theta`.
    hi: f64,
    /// `theta - hi`, rounded to a double.
    lo: f64,
    /// Veltkamp split of `hi` (`hi = hi_a + hi_b`, each at most 26 significant bits), for Dekker's product.
    hi_a: f64,
    hi_b: f64,
}

/// The fractional parts `theta_i` of one scaling procedure, stored for the selected path only.
#[derive(Clone, Debug)]
enum Fractions {
    /// `floor(theta_i 2^128)` as `(high word, low word)`.
    Wide(Vec<(u64, u64)>),
    Float(Vec<FloatFraction>),
}

/// `floor(rho * 2^128 / q)` for `rho < q < 2^62`, by two steps of long division.
fn fixed_point_fraction(rho: u64, q: u64) -> (u64, u64) {
    debug_assert!(rho < q);
    let num = (rho as u128) << 64;
    let hi = (num / q as u128) as u64;
    let rem = num % q as u128;
    let lo = ((rem << 64) / q as u128) as u64;
    (hi, lo)
}

fn float_fraction(rho: u64, q: u64) -> FloatFraction {
    let (whi, wlo) = fixed_point_fraction(rho, q);
    let theta_fixed = ((whi as u128) << 64) | wlo as u128;
    let two_m128 = 2f64.powi(-128);
    // u128 -> f64 rounds to nearest; the scaling by a power of two is exact.
    let hi = theta_fixed as f64 * two_m128;
    // The fixed-point image of `hi` (saturating to 2^128 - 1 if `hi` rounded up to 1.0: an error of
    // 2^-128, far below what matters). The difference is tiny, so it fits an i128.
    let hi_fixed = (hi * 2f64.powi(128)) as u128;
    let lo = (theta_fixed.wrapping_sub(hi_fixed) as i128) as f64 * two_m128;
    let c = SPLITTER * hi;
    let hi_a = c - (c - hi);
    let hi_b = hi - hi_a;
    FloatFraction { hi, lo, hi_a, hi_b }
}

impl Fractions {
    /// Builds the fractions `rho_i / q_i` for the given path.
    fn new(rhos: &[u64], moduli: &[Modulus], path: FractionPath) -> Self {
        match path {
            FractionPath::Wide => Fractions::Wide(
                rhos.iter()
                    .zip(moduli)
                    .map(|(&r, m)| fixed_point_fraction(r, m.value()))
                    .collect(),
            ),
            FractionPath::Float => Fractions::Float(
                rhos.iter()
                    .zip(moduli)
                    .map(|(&r, m)| float_fraction(r, m.value()))
                    .collect(),
            ),
        }
    }

    /// `v[c] = round(sum_i x_i[start + c] * theta_i)` for `c < v.len() <= BLOCK`, where limb `i` of the
    /// input is `data[i n .. (i + 1) n]`.
    fn round_sums(&self, data: &[u64], n: usize, start: usize, v: &mut [u128]) {
        let len = v.len();
        debug_assert!(len <= BLOCK);
        match self {
            Fractions::Wide(fr) => {
                // Integer parts and 128-bit fractions; fraction overflows carry into the integer sum.
                let mut int_sum = [0u128; BLOCK];
                let mut frac_sum = [0u128; BLOCK];
                for (i, &(hi, lo)) in fr.iter().enumerate() {
                    let xs = &data[i * n + start..i * n + start + len];
                    for ((&x, is), fs) in xs.iter().zip(&mut int_sum).zip(&mut frac_sum) {
                        // x * theta * 2^128 = b 2^64 + a, a 190-bit product split at bit 128.
                        let a = x as u128 * lo as u128;
                        let b = x as u128 * hi as u128;
                        let (frac, c1) = a.overflowing_add(b << 64);
                        let (f2, c2) = fs.overflowing_add(frac);
                        *fs = f2;
                        *is += (b >> 64) + c1 as u128 + c2 as u128;
                    }
                }
                for ((out, is), fs) in v.iter_mut().zip(&int_sum).zip(&frac_sum) {
                    *out = is + (fs >> 127);
                }
            }
            Fractions::Float(fr) => {
                // Integer parts (exact integers below 2^53) and remainders (small) kept apart, so the
                // only rounding errors are those of adding numbers below ~k in magnitude.
                let mut int_sum = [0f64; BLOCK];
                let mut rem_sum = [0f64; BLOCK];
                for (i, f) in fr.iter().enumerate() {
                    let xs = &data[i * n + start..i * n + start + len];
                    for ((&x, is), rs) in xs.iter().zip(&mut int_sum).zip(&mut rem_sum) {
                        // x < 2^47: exact as a double (via i64, one instruction).
                        let xf = x as i64 as f64;
                        let p = xf * f.hi;
                        // Dekker's two-product: p + e = xf * hi exactly (Veltkamp splits, no FMA).
                        let c = SPLITTER * xf;
                        let xh = c - (c - xf);
                        let xl = xf - xh;
                        let e = ((xh * f.hi_a - p) + xh * f.hi_b + xl * f.hi_a) + xl * f.hi_b;
                        // p in [0, 2^47): its nearest integer, and the exact remainder in [-1/2, 1/2].
                        let pi = (p + ROUND_UNSIGNED) - ROUND_UNSIGNED;
                        *is += pi;
                        *rs += (p - pi) + (e + xf * f.lo);
                    }
                }
                for ((out, is), rs) in v.iter_mut().zip(&int_sum).zip(&rem_sum) {
                    let r = (rs + ROUND_SIGNED) - ROUND_SIGNED;
                    // The exact sum is non-negative; a computed -0 saturates to 0.
                    *out = (is + r) as u64 as u128;
                }
            }
        }
    }
}

fn check_plaintext_modulus(t: u64) -> Result<Modulus> {
    if !(2..=MAX_PLAINTEXT_MODULUS).contains(&t) {
        return Err(Error::InvalidPlaintextModulus {
            t,
            max: MAX_PLAINTEXT_MODULUS,
        });
    }
    Ok(Modulus::new(t)?)
}

fn choose_path(moduli: &[Modulus], path: Option<FractionPath>) -> Result<FractionPath> {
    match path {
        None => Ok(FractionPath::select(moduli)),
        Some(FractionPath::Float) => {
            FractionPath::float_available(moduli)?;
            Ok(FractionPath::Float)
        }
        Some(FractionPath::Wide) => Ok(FractionPath::Wide),
    }
}

/// HPS simple scaling (Section 2.3, Eq. 4): for `x` in `Z_Q` given by its residues, computes
/// `round(t/Q * x) mod t`. This is BFV decryption (HPS Section 4.4) after the inner product `<ct, sk>`.
///
/// Precomputed as in HPS Section 4.2: for each `q_i`, with `qtilde_i = [(Q/q_i)^-1]_{q_i}`, the rational
/// `t qtilde_i / q_i = omega_i + theta_i` with `omega_i = floor(t qtilde_i / q_i) < t` (stored with its Shoup
/// companion modulo `t`) and `theta_i in [0, 1)` (stored for the selected [`FractionPath`]). Then
/// `round(t x / Q) = [sum_i x_i omega_i + round(sum_i x_i theta_i)]_t`.
///
/// The result does not depend on the representative of `x`: `x` in `[0, Q)` and the centered `x - Q` give
/// values of `t x / Q` differing by `t`, hence the same rounding modulo `t`. Exact (equal to the
/// big-integer rounding) outside the negligible boundary region described in the module documentation.
#[derive(Clone, Debug)]
pub struct SimpleScaler {
    q: Arc<RnsBasis>,
    t: Modulus,
    path: FractionPath,
    /// `omega_i` modulo `t`, with Shoup companions.
    omega: Vec<ShoupConstant>,
    fractions: Fractions,
    /// `omega_i + theta_i` as [`FixedWeight`]s (`theta_i` the `Wide` path's 128-bit fixed-point fraction)
    /// for the one-pass kernel [`scaled_rounding`], when it applies: the `Wide` path, at most
    /// [`SCALED_ROUNDING_MAX_ROWS`] limbs, and `sum_i (q_i - 1)(omega_i + 1) < 2^128` (which bounds the
    /// rounded sum). `None` otherwise (always for the `Float` path, whose rounding differs).
    one_pass: Option<Vec<FixedWeight>>,
}

/// The weights of [`SimpleScaler::one_pass`], or `None` where it does not apply.
fn one_pass_weights(
    q: &RnsBasis,
    omega: &[ShoupConstant],
    fractions: &Fractions,
) -> Option<Vec<FixedWeight>> {
    let Fractions::Wide(fractions) = fractions else {
        return None;
    };
    if q.len() > SCALED_ROUNDING_MAX_ROWS {
        return None;
    }
    // The rounded sum is at most this bound; the check is that computing it does not overflow.
    let mut bound = 0u128;
    for (m, w) in q.moduli().iter().zip(omega) {
        let term = (m.value() as u128 - 1).checked_mul(w.value as u128 + 1)?;
        bound = bound.checked_add(term)?;
    }
    Some(
        omega
            .iter()
            .zip(fractions)
            .map(|(w, &(fraction_hi, fraction_lo))| FixedWeight {
                integer: w.value,
                fraction_hi,
                fraction_lo,
            })
            .collect(),
    )
}

impl SimpleScaler {
    /// Precomputes the tables of HPS Section 4.2 for scaling from `Q = q` down to `Z_t`, choosing the
    /// [`FractionPath`] from the moduli ([`FractionPath::select`]).
    ///
    /// Errors: [`Error::InvalidPlaintextModulus`] unless `2 <= t <= 2^60`.
    pub fn new(q: &Arc<RnsBasis>, t: u64) -> Result<Self> {
        Self::build(q, t, None)
    }

    /// As [`SimpleScaler::new`] with an explicit path (for tests and benchmarks of both paths).
    ///
    /// Errors additionally with [`Error::FloatScalingUnavailable`] when `Float` is requested for moduli of
    /// more than 47 bits or 128 limbs or more.
    pub fn with_path(q: &Arc<RnsBasis>, t: u64, path: FractionPath) -> Result<Self> {
        Self::build(q, t, Some(path))
    }

    fn build(q: &Arc<RnsBasis>, t: u64, path: Option<FractionPath>) -> Result<Self> {
        let tm = check_plaintext_modulus(t)?;
        let path = choose_path(q.moduli(), path)?;
        let mut omega = Vec::with_capacity(q.len());
        let mut rhos = Vec::with_capacity(q.len());
        for (qi, qtilde) in q.moduli().iter().zip(q.qhat_inv()) {
            // t * qtilde_i < 2^60 * 2^62: exact in u128.
            let prod = t as u128 * qtilde.value as u128;
            let w = (prod / qi.value() as u128) as u64;
            rhos.push((prod % qi.value() as u128) as u64);
            omega.push(tm.shoup(w));
        }
        let fractions = Fractions::new(&rhos, q.moduli(), path);
        Ok(Self {
            q: Arc::clone(q),
            one_pass: one_pass_weights(q, &omega, &fractions),
            t: tm,
            path,
            omega,
            fractions,
        })
    }

    /// The basis `Q` of the inputs.
    pub fn basis(&self) -> &Arc<RnsBasis> {
        &self.q
    }

    /// The plaintext modulus `t`.
    pub fn plaintext_modulus(&self) -> u64 {
        self.t.value()
    }

    /// The path used for the fractional sum.
    pub fn path(&self) -> FractionPath {
        self.path
    }

    /// `round(t/Q * x) mod t` for every coefficient of `x` (HPS Eq. 4), in `[0, t)`.
    ///
    /// Errors: [`Error::BasisMismatch`] if `x` is not over the scaler's basis.
    pub fn scale(&self, x: &Poly<Coeff>) -> Result<Vec<u64>> {
        let mut out = vec![0u64; x.degree()];
        self.scale_into(x, &mut out)?;
        Ok(out)
    }

    /// As [`SimpleScaler::scale`], writing into `out` (of length `N`).
    ///
    /// Errors: [`Error::BasisMismatch`], or [`Error::LengthMismatch`] if `out.len() != N`.
    pub fn scale_into(&self, x: &Poly<Coeff>, out: &mut [u64]) -> Result<()> {
        self.check_input(x, out)?;
        let n = x.degree();
        let data = x.data();
        if let Some(weights) = &self.one_pass {
            out.par_chunks_mut(BLOCK)
                .enumerate()
                .for_each(|(b, chunk)| {
                    let range = b * BLOCK..b * BLOCK + chunk.len();
                    let rows: Vec<&[u64]> = (0..self.q.len())
                        .map(|i| &data[i * n + range.start..i * n + range.end])
                        .collect();
                    scaled_rounding(&self.t, &rows, weights, chunk);
                });
            return Ok(());
        }
        let t = &self.t;
        out.par_chunks_mut(BLOCK)
            .enumerate()
            .for_each(|(b, chunk)| {
                let start = b * BLOCK;
                let len = chunk.len();
                // acc = v + sum_i x_i omega_i with lazy Shoup products (each < 2t) in 128 bits:
                // v < k 2^62 and the products add less than k 2^61, far from overflow; one reduction
                // modulo t per coefficient.
                let mut acc = [0u128; BLOCK];
                let acc = &mut acc[..len];
                self.fractions.round_sums(data, n, start, acc);
                for (i, &w) in self.omega.iter().enumerate() {
                    let xs = &data[i * n + start..i * n + start + len];
                    for (a, &x) in acc.iter_mut().zip(xs) {
                        *a += t.mul_shoup_lazy(x, w) as u128;
                    }
                }
                for (o, &a) in chunk.iter_mut().zip(acc.iter()) {
                    *o = t.reduce_wide(a);
                }
            });
        Ok(())
    }

    /// `round(t/Q * [a + b]_Q) mod t` for every coefficient (HPS Eq. 4 applied to a sum, in `[0, t)`):
    /// BFV decryption scales `x = c_0 + c_1 s` (HPS Section 4.4). With the one-pass kernel the addition
    /// is fused into the scaling, block by block through a cache-resident buffer, instead of a separate
    /// pass that writes `x` out whole; the result is that of [`SimpleScaler::scale`] on `a + b`.
    ///
    /// Errors: [`Error::BasisMismatch`] if `a` or `b` is not over the scaler's basis.
    pub fn scale_sum(&self, a: &Poly<Coeff>, b: &Poly<Coeff>) -> Result<Vec<u64>> {
        let mut out = vec![0u64; a.degree()];
        self.check_input(a, &out)?;
        self.check_input(b, &out)?;
        let Some(weights) = &self.one_pass else {
            self.scale_into(&a.add(b)?, &mut out)?;
            return Ok(out);
        };
        let k = self.q.len();
        out.par_chunks_mut(BLOCK).enumerate().for_each_init(
            || vec![0u64; k * BLOCK],
            |sum, (blk, chunk)| {
                let (start, len) = (blk * BLOCK, chunk.len());
                let limbs = a.limbs().zip(b.limbs()).zip(self.q.moduli());
                for (row, ((ai, bi), m)) in sum.chunks_exact_mut(BLOCK).zip(limbs) {
                    let range = start..start + len;
                    map_in_place(
                        m,
                        &mut row[..len],
                        [&ai[range.clone()], &bi[range]],
                        &Fresh(&ModAdd),
                    );
                }
                let rows: Vec<&[u64]> = sum.chunks_exact(BLOCK).map(|r| &r[..len]).collect();
                scaled_rounding(&self.t, &rows, weights, chunk);
            },
        );
        Ok(out)
    }

    /// Checks that `x` is over the scaler's basis and `out` has one entry per coefficient.
    fn check_input(&self, x: &Poly<Coeff>, out: &[u64]) -> Result<()> {
        self.q.check_same(x.basis(), "simple scaling (HPS 2.3)")?;
        if out.len() != x.degree() {
            return Err(Error::LengthMismatch {
                what: "simple scaling output",
                expected: x.degree(),
                got: out.len(),
            });
        }
        Ok(())
    }
}

/// HPS complex scaling, first step (Section 2.4): for `x` in `Z_{QP}` given by its residues over
/// `Q ∪ P`, computes `y' = [round(t/Q * x)]_P` in the basis `P`. This is the "scale back down" of BFV
/// multiplication (HPS Section 4.5), which then extends `y'` from `P` to `Q` (HPS Section 2.2, the exact
/// basis conversion of [`crate::conversion`]) and discards `P`.
///
/// With `Qtilde_i = [(Q P / q_i)^-1]_{q_i}`, HPS split `t Qtilde_i P / q_i = omega'_i + theta'_i` and
/// store `omega'_{i,j} = [omega'_i]_{p_j}` and `lambda_j = [t Qtilde'_j p_j^*]_{p_j}` (Section 4.2); then
/// `y'_j = [round(sum_i theta'_i x_i) + lambda_j x'_j + sum_i omega'_{i,j} x_i]_{p_j}`. Here the tables
/// are computed without big integers: `theta'_i` equals the simple-scaling fraction `{t qtilde_i / q_i}`
/// (because `Qtilde_i [P]_{q_i} = qtilde_i mod q_i`), `omega'_{i,j} = [-rho_i q_i^-1]_{p_j}` with
/// `rho_i = [t qtilde_i]_{q_i}` (because `P = 0 mod p_j`), and `lambda_j = [t Q^-1]_{p_j}`.
///
/// The result is `[round(t x / Q)]_P` for *any* representative `x` of the residues (shifting `x` by `QP`
/// shifts `t x / Q` by `t P = 0 mod P`). HPS require `x` in `[-QP/2t, QP/2t)` only so that `y'` in
/// `[-P/2, P/2)` is then the integer `round(t x / Q)` itself, which the extension back to `Q` needs; that
/// is a condition on the parameters (`P` large enough), not on this procedure.
///
/// The opposite direction (keep `Q`, scale by `t / P`, as in variants of BFV multiplication that keep the
/// tensor in the other basis) is `ComplexScaler::new(p, q, t)` applied with
/// [`ComplexScaler::scale_parts`]`(x_p, x_q)`: roles are symmetric.
#[derive(Clone, Debug)]
pub struct ComplexScaler {
    q: Arc<RnsBasis>,
    p: Arc<RnsBasis>,
    qp: Arc<RnsBasis>,
    t: u64,
    path: FractionPath,
    fractions: Fractions,
    /// Per `p_j`, the `k + 3` weights of its output sum with Shoup companions modulo `p_j`:
    /// `lambda_j = [t Q^-1]_{p_j}` (of `x'_j`), `omega'_{i,j}` (of `x_i`, `i < k`), then `1` and
    /// `[2^60]_{p_j}` (of the low and high parts of the rounded fraction sum `v`). Entry `j (k + 3) + i`.
    weights: Vec<ShoupConstant>,
    /// Every modulus of `Q` and `P` is at most [`NARROW_BOUND`], so all rows of the output sums (residues
    /// and the two parts of `v`) fit the faster [`Weights::PerRowNarrow`] kernel.
    narrow: bool,
}

impl ComplexScaler {
    /// Precomputes the tables of HPS Section 4.2 for scaling `Q ∪ P -> P` by `t / Q`.
    ///
    /// Errors: [`Error::InvalidPlaintextModulus`] unless `2 <= t <= 2^60`; [`Error::BasisMismatch`] if the
    /// degrees differ; [`Error::RepeatedModulus`] if `Q` and `P` share a modulus.
    pub fn new(q: &Arc<RnsBasis>, p: &Arc<RnsBasis>, t: u64) -> Result<Self> {
        Self::build(q, p, t, None)
    }

    /// As [`ComplexScaler::new`] with an explicit path. `Float` requires the moduli of `Q` (the ones whose
    /// residues multiply `theta'_i`) below 2^47; errors with [`Error::FloatScalingUnavailable`] otherwise.
    pub fn with_path(
        q: &Arc<RnsBasis>,
        p: &Arc<RnsBasis>,
        t: u64,
        path: FractionPath,
    ) -> Result<Self> {
        Self::build(q, p, t, Some(path))
    }

    fn build(
        q: &Arc<RnsBasis>,
        p: &Arc<RnsBasis>,
        t: u64,
        path: Option<FractionPath>,
    ) -> Result<Self> {
        check_plaintext_modulus(t)?;
        // Checks degrees and disjointness (concat errors on a shared modulus).
        let qp = q.concat(p)?;
        let path = choose_path(q.moduli(), path)?;
        let k = q.len();
        let mut rhos = Vec::with_capacity(k);
        for (qi, qtilde) in q.moduli().iter().zip(q.qhat_inv()) {
            rhos.push(qi.mul(qi.reduce(t), qtilde.value));
        }
        let mut weights = Vec::with_capacity((k + 3) * p.len());
        for pj in p.moduli() {
            let q_inv = pj.inv(q.product_mod(pj))?;
            weights.push(pj.shoup(pj.mul(pj.reduce(t), q_inv)));
            for (qi, &rho) in q.moduli().iter().zip(&rhos) {
                let qi_inv = pj.inv(pj.reduce(qi.value()))?;
                weights.push(pj.shoup(pj.neg(pj.mul(pj.reduce(rho), qi_inv))));
            }
            weights.push(pj.shoup(1 % pj.value()));
            weights.push(pj.shoup(pj.reduce(1 << V_SPLIT)));
        }
        let narrow = qp.moduli().iter().all(|m| m.value() <= NARROW_BOUND);
        Ok(Self {
            q: Arc::clone(q),
            p: Arc::clone(p),
            qp,
            narrow,
            t,
            path,
            fractions: Fractions::new(&rhos, q.moduli(), path),
            weights,
        })
    }

    /// The basis `Q` divided out.
    pub fn q_basis(&self) -> &Arc<RnsBasis> {
        &self.q
    }

    /// The basis `P` of the result.
    pub fn p_basis(&self) -> &Arc<RnsBasis> {
        &self.p
    }

    /// The extended basis `Q ∪ P` (limbs of `Q` first) expected by [`ComplexScaler::scale`].
    pub fn extended_basis(&self) -> &Arc<RnsBasis> {
        &self.qp
    }

    /// The plaintext modulus `t`.
    pub fn plaintext_modulus(&self) -> u64 {
        self.t
    }

    /// The path used for the fractional sum.
    pub fn path(&self) -> FractionPath {
        self.path
    }

    /// `[round(t/Q * x)]_P` for `x` over the extended basis `Q ∪ P` ([`ComplexScaler::extended_basis`],
    /// limbs of `Q` first), as a polynomial over `P`.
    ///
    /// Errors: [`Error::BasisMismatch`] if `x` is not over `Q ∪ P`.
    pub fn scale(&self, x: &Poly<Coeff>) -> Result<Poly<Coeff>> {
        self.qp
            .check_same(x.basis(), "complex scaling (HPS 2.4) input over Q ∪ P")?;
        let n = x.degree();
        let (xq, xp) = x.data().split_at(self.q.len() * n);
        self.scale_slices(xq, xp, n)
    }

    /// As [`ComplexScaler::scale`] with `x` given as its two parts: `x_q` over `Q` and `x_p` over `P`.
    ///
    /// Errors: [`Error::BasisMismatch`] if `x_q` is not over `Q` or `x_p` not over `P`.
    pub fn scale_parts(&self, x_q: &Poly<Coeff>, x_p: &Poly<Coeff>) -> Result<Poly<Coeff>> {
        self.q
            .check_same(x_q.basis(), "complex scaling (HPS 2.4) part over Q")?;
        self.p
            .check_same(x_p.basis(), "complex scaling (HPS 2.4) part over P")?;
        self.scale_slices(x_q.data(), x_p.data(), x_q.degree())
    }

    fn scale_slices(&self, xq: &[u64], xp: &[u64], n: usize) -> Result<Poly<Coeff>> {
        // Pass 1: v = round(sum_i x_i theta'_i) per coefficient, shared by every p_j, split as
        // v_lo + v_hi 2^60 (v < k 2^62, so v_hi < 4 k; both below 2^60, the bound of the narrow kernel)
        // for the vectorized sum of pass 2. Block by block in parallel, each block's two halves
        // written once into fresh memory (a serial zero-fill and split of the whole `v` cost a tenth of
        // the two-thread speed-up of BFV multiplication).
        const LOW60: u128 = (1 << V_SPLIT) - 1;
        let [v_lo, v_hi] = parallel::from_chunk_groups(n, BLOCK, &|b, [lo, hi]| {
            let mut v = [0u128; BLOCK];
            let v = &mut v[..lo.len()];
            self.fractions.round_sums(xq, n, b * BLOCK, v);
            [
                simd::write_uninit(lo, v.iter().map(|&x| (x & LOW60) as u64)),
                simd::write_uninit(hi, v.iter().map(|&x| (x >> V_SPLIT) as u64)),
            ]
        });
        // Pass 2: y'_j = [lambda_j x'_j + sum_i omega'_{i,j} x_i + v]_{p_j}, parallel over limbs, each
        // written into fresh memory (no serial zero-fill of the whole output first).
        let k = self.q.len();
        let moduli = self.p.moduli();
        let out = parallel::from_chunks(self.p.len() * n, n, &|j, limb| {
            let mut rows: Vec<&[u64]> = Vec::with_capacity(k + 3);
            rows.push(&xp[j * n..(j + 1) * n]);
            rows.extend(xq.chunks_exact(n));
            rows.push(&v_lo);
            rows.push(&v_hi);
            let w = &self.weights[j * (k + 3)..(j + 1) * (k + 3)];
            let w = Weights::per_row(w, self.narrow);
            simd::sum_of_products_uninit(&moduli[j], &rows, w, limb)
        });
        Ok(Poly::from_data_unchecked(&self.p, out))
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use rnsfhe_math::primes::ntt_primes_of_bits;

    fn basis(bits: u32, count: usize, exclude: &[u64]) -> Arc<RnsBasis> {
        RnsBasis::new(16, &ntt_primes_of_bits(bits, 32, count, exclude).unwrap()).unwrap()
    }

    #[test]
    fn fraction_representations() {
        for &(rho, q) in &[
            (1u64, 3u64),
            (2, 3),
            ((1 << 46) + 12345, (1 << 47) - 115),
            ((1 << 61) - 1, (1 << 61) + 1),
            (0, 17),
            (16, 17),
        ] {
            let (hi, lo) = fixed_point_fraction(rho, q);
            assert_eq!(hi as u128, ((rho as u128) << 64) / q as u128);
            let fixed = ((hi as u128) << 64) | lo as u128;
            // The double-double form carries about 106 bits: hi + lo = fixed / 2^128 up to the rounding
            // of lo (relative 2^-53) and the saturation of hi = 1.0 (absolute 2^-128).
            let f = float_fraction(rho, q);
            assert_eq!(f.hi_a + f.hi_b, f.hi);
            let hi_fixed = (f.hi * 2f64.powi(128)) as u128;
            let d = fixed.wrapping_sub(hi_fixed) as i128;
            let lo_fixed = (f.lo * 2f64.powi(128)) as i128;
            assert!(
                (d - lo_fixed).abs() <= 2.max(d.abs() >> 52),
                "rho = {rho}, q = {q}"
            );
            assert!(d.abs() <= 1i128 << 75);
        }
    }

    /// The one-pass kernel of simple scaling (and its fused sum) against the scalar `Wide` loop, on uniform
    /// residues with the edge values 0 and `q_i - 1`, for moduli up to 61 bits, plaintext moduli from 2 to
    /// `2^60`, and degrees below and above one block.
    #[test]
    fn simple_scaling_one_pass_matches_scalar() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(0x5ca1e);
        for (bits, limbs, n) in [
            (55u32, 7usize, 1024usize),
            (55, 14, 16),
            (61, 3, 512),
            (48, 2, 32),
        ] {
            let primes = ntt_primes_of_bits(bits, 2 * n as u64, limbs, &[]).unwrap();
            let q = RnsBasis::new(n, &primes).unwrap();
            let uniform = |rng: &mut rand_chacha::ChaCha20Rng| {
                let mut data = Vec::new();
                for m in q.moduli() {
                    let start = data.len();
                    data.extend((0..n).map(|_| rng.gen_range(0..m.value())));
                    data[start] = m.value() - 1;
                    data[start + 1] = 0;
                    data[start + 2] = m.value() - 1;
                }
                Poly::<Coeff>::from_data(&q, data).unwrap()
            };
            for t in [2u64, 65537, (1 << 60) - 93, MAX_PLAINTEXT_MODULUS] {
                let s = SimpleScaler::with_path(&q, t, FractionPath::Wide).unwrap();
                assert!(s.one_pass.is_some(), "{bits}-bit moduli");
                let mut scalar = s.clone();
                scalar.one_pass = None;
                let (a, b) = (uniform(&mut rng), uniform(&mut rng));
                let sum = a.add(&b).unwrap();
                let want = scalar.scale(&sum).unwrap();
                assert_eq!(s.scale(&sum).unwrap(), want, "bits {bits}, t {t}");
                assert_eq!(s.scale_sum(&a, &b).unwrap(), want, "bits {bits}, t {t}");
                assert_eq!(scalar.scale_sum(&a, &b).unwrap(), want);
            }
        }
        // Rounded sums that may reach 2^128 (600 limbs of 61 bits with t = 2^60), and the Float path:
        // the scalar loops.
        let q = basis(61, 600, &[]);
        assert!(SimpleScaler::new(&q, MAX_PLAINTEXT_MODULUS)
            .unwrap()
            .one_pass
            .is_none());
        assert!(SimpleScaler::new(&q, 65537).unwrap().one_pass.is_some());
        assert!(SimpleScaler::new(&basis(30, 2, &[]), 3)
            .unwrap()
            .one_pass
            .is_none());
    }

    #[test]
    fn constructors_validate() {
        let q = basis(30, 2, &[]);
        assert!(matches!(
            SimpleScaler::new(&q, 1),
            Err(Error::InvalidPlaintextModulus { t: 1, .. })
        ));
        assert!(matches!(
            SimpleScaler::new(&q, 0),
            Err(Error::InvalidPlaintextModulus { .. })
        ));
        assert!(SimpleScaler::new(&q, MAX_PLAINTEXT_MODULUS).is_ok());
        assert!(matches!(
            SimpleScaler::new(&q, MAX_PLAINTEXT_MODULUS + 1),
            Err(Error::InvalidPlaintextModulus { .. })
        ));
        assert_eq!(
            SimpleScaler::new(&q, 2).unwrap().path(),
            FractionPath::Float
        );
        let big = basis(55, 2, &[]);
        assert_eq!(
            SimpleScaler::new(&big, 2).unwrap().path(),
            FractionPath::Wide
        );
        assert!(matches!(
            SimpleScaler::with_path(&big, 2, FractionPath::Float),
            Err(Error::FloatScalingUnavailable { bits: 55, .. })
        ));
        assert!(matches!(
            ComplexScaler::new(&q, &q, 2),
            Err(Error::RepeatedModulus { .. })
        ));
        let other_degree = RnsBasis::new(32, &ntt_primes_of_bits(40, 64, 1, &[]).unwrap()).unwrap();
        assert!(matches!(
            ComplexScaler::new(&q, &other_degree, 2),
            Err(Error::BasisMismatch { .. })
        ));
        let s = SimpleScaler::new(&q, 65537).unwrap();
        assert!(matches!(
            s.scale(&Poly::zero(&big)),
            Err(Error::BasisMismatch { .. })
        ));
        let mut short = vec![0u64; 3];
        assert!(matches!(
            s.scale_into(&Poly::zero(&q), &mut short),
            Err(Error::LengthMismatch { .. })
        ));
    }
}
