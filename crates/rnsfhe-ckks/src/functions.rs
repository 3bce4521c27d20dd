//! Non-polynomial functions on ciphertexts (RNS-CKKS Section 5.2, Table 2): the sigmoid, `exp`
//! and `1/x` as the paper evaluates them, Chebyshev approximations of each on a user interval, the
//! least-squares sigmoids of encrypted logistic regression, and square roots by Newton's method.
//!
//! | function | method | depth |
//! |---|---|---|
//! | [`Evaluator::exp_taylor`], [`Evaluator::sigmoid_taylor`] | Taylor polynomial of degree 7 at 0 (Table 2) | 3 |
//! | [`Evaluator::inverse`] | Cheon-Kim-Kim-Song, Algorithm 2, `r` iterations: degree `2^(r+1) - 1` (Table 2: `r = 3`, degree 15) | `r + 1` |
//! | [`Evaluator::sigmoid_least_squares`] | Kim-Song-Kim-Lee-Cheon (BMC Med. Genomics 2018), degree 3, 5 or 7 on `[-8, 8]` | 2, 3, 3 |
//! | [`Evaluator::sigmoid_chebyshev`], [`Evaluator::exp_chebyshev`], [`Evaluator::inverse_chebyshev`] | Chebyshev interpolation on `[a, b]` ([`Evaluator::evaluate_function`]) | see [`Polynomial::depth`] |
//! | [`Evaluator::inverse_sqrt`], [`Evaluator::sqrt`] | degree-3 Chebyshev start, then Newton `y <- y (3 - x y^2) / 2` | `2 + 2k` (+1 for `sqrt`) |
//!
//! The plaintext polynomials ([`exp_taylor_polynomial`], [`sigmoid_taylor_polynomial`],
//! [`inverse_polynomial`], [`sigmoid_least_squares`]) are the reference "exact polynomial" of Table 2's
//! precision; [`sigmoid`] is the true function.

use crate::chebyshev::{check_interval, ChebyshevSeries};
use crate::error::{Error, Result};
use crate::evaluator::Evaluator;
use crate::plaintext::Ciphertext;
use crate::polynomial::Polynomial;

/// The logistic function `1 / (1 + e^-x)`.
pub fn sigmoid(x: f64) -> f64 {
    1.0 / (1.0 + (-x).exp())
}

/// The least-squares sigmoid approximations of Kim, Song, Kim, Lee, Cheon ("Logistic regression model
/// training based on the approximate homomorphic encryption", BMC Medical Genomics 11, 2018), fitted on
/// `[-8, 8]` and used by the RNS-CKKS paper's logistic regression (Section 5.3, Table 4), power basis.
const SIGMOID_LS3: [f64; 4] = [0.5, 0.15012, 0.0, -0.001593];
const SIGMOID_LS5: [f64; 6] = [0.5, 0.19131, 0.0, -0.0045963, 0.0, 0.000_041_233_2];
const SIGMOID_LS7: [f64; 8] = [
    0.5,
    0.21687,
    0.0,
    -0.008191,
    0.0,
    0.000_165_81,
    0.0,
    -0.000_001_195_9,
];

/// The least-squares sigmoid polynomial of degree 3, 5 or 7 on `[-8, 8]` (Kim et al. 2018; see the module
/// documentation): `0.5 + 0.15012 x - 0.001593 x^3` for degree 3.
///
/// # Errors
///
/// [`Error::InvalidArgument`] for another degree.
pub fn sigmoid_least_squares(degree: usize) -> Result<Polynomial> {
    let coeffs: &[f64] = match degree {
        3 => &SIGMOID_LS3,
        5 => &SIGMOID_LS5,
        7 => &SIGMOID_LS7,
        _ => {
            return Err(Error::InvalidArgument {
                operation: "least-squares sigmoid",
                reason: format!("degree {degree} is not one of 3, 5, 7 (Kim et al. 2018)"),
            })
        }
    };
    Polynomial::power(coeffs.to_vec())
}

/// The Taylor polynomial of `e^x` at 0 of the given degree, `sum_k x^k / k!` (Table 2: degree 7).
///
/// # Errors
///
/// [`Error::InvalidDegree`] for degree 0 or above [`crate::chebyshev::MAX_DEGREE`].
pub fn exp_taylor_polynomial(degree: usize) -> Result<Polynomial> {
    let mut coeffs = Vec::with_capacity(degree + 1);
    let mut term = 1.0;
    for k in 0..=degree {
        if k > 0 {
            term /= k as f64;
        }
        coeffs.push(term);
    }
    Polynomial::power(coeffs)
}

/// The Taylor polynomial of the sigmoid at 0 of the given degree (Table 2: degree 7,
/// `1/2 + x/4 - x^3/48 + x^5/480 - 17 x^7/80640`), from the reciprocal of the series of `1 + e^-x`.
///
/// # Errors
///
/// [`Error::InvalidDegree`] for degree 0 or above [`crate::chebyshev::MAX_DEGREE`].
pub fn sigmoid_taylor_polynomial(degree: usize) -> Result<Polynomial> {
    // a(x) = 1 + e^-x = 2 - x + x^2/2 - ...; b = 1 / a by b_n = -(sum_{k=1}^{n} a_k b_{n-k}) / a_0.
    let mut a = Vec::with_capacity(degree + 1);
    let mut term = 1.0;
    for k in 0..=degree {
        if k > 0 {
            term *= -1.0 / k as f64;
        }
        a.push(if k == 0 { 2.0 } else { term });
    }
    let mut b: Vec<f64> = Vec::with_capacity(degree + 1);
    for n in 0..=degree {
        let s: f64 = (1..=n).map(|k| a[k] * b[n - k]).sum();
        b.push(if n == 0 { 1.0 / a[0] } else { -s / a[0] });
    }
    // The even coefficients beyond the constant vanish (sigmoid - 1/2 is odd); make them exactly 0.
    for (k, c) in b.iter_mut().enumerate() {
        if k > 0 && k % 2 == 0 {
            *c = 0.0;
        }
    }
    Polynomial::power(b)
}

/// The polynomial [`Evaluator::inverse`] computes with `iterations = r`:
/// `prod_{i=0}^{r} (1 + (1 - x)^(2^i)) = (1 - (1 - x)^(2^(r+1))) / x`, of degree `2^(r+1) - 1`.
///
/// # Errors
///
/// [`Error::InvalidArgument`] for `iterations` above 10 (degree 2047).
///
/// The monomial coefficients are binomial coefficients of alternating sign (`C(16, 8) = 12870` at
/// `r = 3`): fine for the paper's degree 15, but their cancellation costs `log2 C(2^(r+1), 2^r)` bits in
/// plaintext evaluation at larger `r`.
pub fn inverse_polynomial(iterations: usize) -> Result<Polynomial> {
    check_iterations(iterations, 10, "inverse polynomial")?;
    // Power basis of (1 - (1 - x)^n) / x, n = 2^(r+1): sum_{k=0}^{n-1} (-1)^k C(n, k+1) x^k.
    let n = 1usize << (iterations + 1);
    let mut binom = 1.0; // C(n, 0)
    let mut coeffs = Vec::with_capacity(n);
    for k in 0..n {
        binom = binom * (n - k) as f64 / (k + 1) as f64; // C(n, k+1)
        coeffs.push(if k % 2 == 0 { binom } else { -binom });
    }
    Polynomial::power(coeffs)
}

/// Degree of the Chebyshev start of [`Evaluator::inverse_sqrt`] (evaluated in the power basis: 2 levels).
const NEWTON_START_DEGREE: usize = 3;

/// The levels [`Evaluator::inverse_sqrt`] (`inverse = true`) or [`Evaluator::sqrt`] uses with `iterations`
/// Newton steps: 2 for the degree-3 start, 2 per step, and 1 for the final product `x * x^(-1/2)` of
/// `sqrt`.
pub fn newton_sqrt_depth(iterations: usize, inverse: bool) -> usize {
    let start = (NEWTON_START_DEGREE + 1)
        .next_power_of_two()
        .trailing_zeros() as usize;
    start
        .saturating_add(iterations.saturating_mul(2))
        .saturating_add(usize::from(!inverse))
}

fn check_iterations(iterations: usize, max: usize, operation: &'static str) -> Result<()> {
    if iterations > max {
        return Err(Error::InvalidArgument {
            operation,
            reason: format!("{iterations} iterations; at most {max} are supported"),
        });
    }
    Ok(())
}

/// Rejects intervals on which a function with a pole or branch point at 0 is undefined.
fn check_positive_interval(a: f64, b: f64, what: &'static str) -> Result<()> {
    check_interval(a, b)?;
    if a <= 0.0 {
        return Err(Error::InvalidArgument {
            operation: what,
            reason: format!(
                "the interval [{a}, {b}] must lie in x > 0 (its left end must be positive)"
            ),
        });
    }
    Ok(())
}

impl Evaluator {
    /// `e^x` by its Taylor polynomial of degree 7 at 0 (RNS-CKKS Table 2; 3 levels). Accurate near 0:
    /// about 32 bits against `e^x` on `[-1/4, 1/4]`, 19 bits on `[-1, 1]`.
    ///
    /// Errors: as [`Evaluator::evaluate_polynomial`].
    pub fn exp_taylor(&self, ct: &Ciphertext) -> Result<Ciphertext> {
        self.evaluate_polynomial(ct, &exp_taylor_polynomial(7)?)
    }

    /// The sigmoid by its Taylor polynomial of degree 7 at 0 (RNS-CKKS Table 2; 3 levels). Accurate near 0
    /// only (the series converges for `|x| < pi`).
    ///
    /// Errors: as [`Evaluator::evaluate_polynomial`].
    pub fn sigmoid_taylor(&self, ct: &Ciphertext) -> Result<Ciphertext> {
        self.evaluate_polynomial(ct, &sigmoid_taylor_polynomial(7)?)
    }

    /// The least-squares sigmoid of degree 3, 5 or 7 on `[-8, 8]` ([`sigmoid_least_squares`]), as in
    /// encrypted logistic regression.
    ///
    /// Errors: [`Error::InvalidArgument`] for another degree; as [`Evaluator::evaluate_polynomial`].
    pub fn sigmoid_least_squares(&self, ct: &Ciphertext, degree: usize) -> Result<Ciphertext> {
        self.evaluate_polynomial(ct, &sigmoid_least_squares(degree)?)
    }

    /// `1/x` by Cheon-Kim-Kim-Song's Algorithm 2 ("Homomorphic encryption for arithmetic of approximate
    /// numbers", Asiacrypt 2017), as in RNS-CKKS Table 2: with `b_0 = 1 - x`, `a_0 = 2 - x`, then
    /// `b_{n+1} = b_n^2`, `a_{n+1} = a_n (1 + b_{n+1})` for `n < r`; `a_r` is [`inverse_polynomial`]`(r)`,
    /// whose relative error is `|1 - x|^(2^(r+1))`. The slots must lie in `(0, 2)`; scale the input into
    /// `[1 - 1/2, 1 + 1/2]` or so for a fast convergence (`r = 3` then gives `2^-16` relative error; the
    /// paper's degree 15). Uses `r + 1` levels and `2r` products.
    ///
    /// Errors: [`Error::InvalidArgument`] for `iterations` of 0 or above 10; [`Error::NotEnoughLevels`]
    /// (needed and available); as [`Evaluator::multiply_rescale`].
    pub fn inverse(&self, ct: &Ciphertext, iterations: usize) -> Result<Ciphertext> {
        const OP: &str = "inverse (CKKS Algorithm 2)";
        if iterations == 0 {
            return Err(Error::InvalidArgument {
                operation: OP,
                reason: "at least one iteration is needed".into(),
            });
        }
        check_iterations(iterations, 10, OP)?;
        self.check_levels(ct, iterations + 1, OP)?;
        let relinearized = self.relinearize(ct)?;
        let mut b = self.add_real(&self.negate(&relinearized)?, 1.0)?;
        let mut a = self.add_real(&b, 1.0)?;
        for _ in 0..iterations {
            b = self.multiply_rescale(&b, &b)?;
            a = self.multiply_rescale(&a, &self.add_real(&b, 1.0)?)?;
        }
        Ok(a)
    }

    /// The checks of the Newton square roots, in the order a caller meets them: the context, the
    /// interval, the levels (all of them, before any work), the iteration count.
    fn check_newton(
        &self,
        ct: &Ciphertext,
        a: f64,
        b: f64,
        iterations: usize,
        inverse: bool,
    ) -> Result<()> {
        let operation = if inverse { "inv_sqrt" } else { "sqrt" };
        self.check_ct(ct)?;
        check_positive_interval(a, b, operation)?;
        let needed = newton_sqrt_depth(iterations, inverse);
        if ct.level() <= needed {
            return Err(Error::NewtonTooDeep {
                operation,
                iterations,
                inverse,
                needed,
                level: ct.level(),
            });
        }
        check_iterations(iterations, 10, operation)
    }

    /// The sigmoid by Chebyshev interpolation of the given degree on `[a, b]`.
    ///
    /// Errors: as [`Evaluator::evaluate_function`].
    pub fn sigmoid_chebyshev(
        &self,
        ct: &Ciphertext,
        a: f64,
        b: f64,
        degree: usize,
    ) -> Result<Ciphertext> {
        self.evaluate_function(ct, sigmoid, a, b, degree)
    }

    /// `e^x` by Chebyshev interpolation of the given degree on `[a, b]`.
    ///
    /// Errors: as [`Evaluator::evaluate_function`].
    pub fn exp_chebyshev(
        &self,
        ct: &Ciphertext,
        a: f64,
        b: f64,
        degree: usize,
    ) -> Result<Ciphertext> {
        self.evaluate_function(ct, f64::exp, a, b, degree)
    }

    /// `1/x` by Chebyshev interpolation of the given degree on `[a, b]`, `0 < a < b`.
    ///
    /// Errors: [`Error::InvalidArgument`] unless `a > 0`; as [`Evaluator::evaluate_function`].
    pub fn inverse_chebyshev(
        &self,
        ct: &Ciphertext,
        a: f64,
        b: f64,
        degree: usize,
    ) -> Result<Ciphertext> {
        check_positive_interval(a, b, "Chebyshev inverse")?;
        self.evaluate_function(ct, |x| 1.0 / x, a, b, degree)
    }

    /// `1 / sqrt(x)` for slots in `[a, b]`, `0 < a < b`: a degree-3 Chebyshev interpolant as the start
    /// (evaluated in the power basis: 2 levels), then `iterations` Newton steps
    /// `y <- y (3 - x y^2) / 2` (2 levels each: `(-x/2 y) y^2` and `3/2 y`, the halving folded into the
    /// scale). The relative error `e` of the start becomes about `3/2 e^2` at each step.
    ///
    /// Errors: [`Error::ContextMismatch`]; [`Error::InvalidInterval`]; [`Error::InvalidArgument`] unless
    /// `a > 0`; [`Error::NewtonTooDeep`] unless `ct` has `2 + 2 iterations` levels left
    /// ([`newton_sqrt_depth`], naming the levels needed and available); [`Error::InvalidArgument`] for
    /// more than 10 iterations.
    pub fn inverse_sqrt(
        &self,
        ct: &Ciphertext,
        a: f64,
        b: f64,
        iterations: usize,
    ) -> Result<Ciphertext> {
        self.check_newton(ct, a, b, iterations, true)?;
        let start = ChebyshevSeries::interpolate(|x| 1.0 / x.sqrt(), a, b, NEWTON_START_DEGREE)?;
        let start = Polynomial::power(start.to_power_basis())?;
        let x = self.relinearize(ct)?;
        let mut y = self.evaluate_polynomial(&x, &start)?;
        // -x/2 once, at the input's level (which has levels to spare).
        let minus_half_x = self.rescale(&self.multiply_real(&x, -0.5)?)?;
        for _ in 0..iterations {
            let y_squared = self.multiply_rescale(&y, &y)?;
            let cubic =
                self.multiply_rescale(&self.multiply_rescale(&minus_half_x, &y)?, &y_squared)?;
            // 3y at the scale of y encodes 3y/2 at twice that scale; the sum aligns that operand (the one
            // with levels to spare) onto the cubic term's scale.
            let mut three_halves_y = self.multiply_int(&y, 3)?;
            three_halves_y.scale *= 2.0;
            y = self.add(&cubic, &three_halves_y)?;
        }
        Ok(y)
    }

    /// `sqrt(x)` for slots in `[a, b]`, `0 < a < b`: `x * `[`Evaluator::inverse_sqrt`] (one more level).
    ///
    /// Errors: as [`Evaluator::inverse_sqrt`], with one level more ([`Error::NewtonTooDeep`] names it).
    pub fn sqrt(&self, ct: &Ciphertext, a: f64, b: f64, iterations: usize) -> Result<Ciphertext> {
        // All levels checked before any work (the final product would fail only at the end).
        self.check_newton(ct, a, b, iterations, false)?;
        let r = self.inverse_sqrt(ct, a, b, iterations)?;
        self.multiply_rescale(ct, &r)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn taylor_coefficients() {
        let s = sigmoid_taylor_polynomial(7).unwrap();
        let want = [
            0.5,
            0.25,
            0.0,
            -1.0 / 48.0,
            0.0,
            1.0 / 480.0,
            0.0,
            -17.0 / 80640.0,
        ];
        for (g, w) in s.coeffs().iter().zip(want) {
            assert!((g - w).abs() < 1e-15, "{g} vs {w}");
        }
        let e = exp_taylor_polynomial(7).unwrap();
        assert!((e.evaluate(0.5) - 0.5f64.exp()).abs() < 1e-6);
        assert!((s.evaluate(0.5) - sigmoid(0.5)).abs() < 1e-6);
    }

    #[test]
    fn inverse_polynomial_is_the_algorithm() {
        for r in 1..=4 {
            let p = inverse_polynomial(r).unwrap();
            assert_eq!(p.degree(), (1 << (r + 1)) - 1);
            for x in [0.6, 0.9, 1.0, 1.3] {
                let (mut a, mut b) = (2.0 - x, 1.0 - x);
                for _ in 0..r {
                    b *= b;
                    a *= 1.0 + b;
                }
                // Horner on binomial coefficients cancels: compare relative to sum |c_k x^k|.
                let size: f64 = p.coeffs().iter().map(|c| (c * x).abs()).sum();
                assert!((p.evaluate(x) - a).abs() < 1e-14 * size, "r {r} x {x}");
            }
        }
    }

    #[test]
    fn least_squares_sigmoids_are_least_squares_fits() {
        // Fit each degree on [-8, 8] (odd part, uniform grid) and compare with Kim et al.'s coefficients.
        for (degree, published) in [
            (3, &SIGMOID_LS3[..]),
            (5, &SIGMOID_LS5[..]),
            (7, &SIGMOID_LS7[..]),
        ] {
            let powers: Vec<usize> = (1..=degree).step_by(2).collect();
            let grid: Vec<f64> = (0..=1600).map(|i| -8.0 + i as f64 * 0.01).collect();
            // Normal equations for sigmoid(x) - 1/2 = sum c_k x^k, k odd.
            let n = powers.len();
            let mut m = vec![vec![0.0; n + 1]; n];
            for &x in &grid {
                let y = sigmoid(x) - 0.5;
                for i in 0..n {
                    for j in 0..n {
                        m[i][j] += x.powi((powers[i] + powers[j]) as i32);
                    }
                    m[i][n] += x.powi(powers[i] as i32) * y;
                }
            }
            for col in 0..n {
                let pivot = m[col].clone();
                for row in m.iter_mut().skip(col + 1) {
                    let f = row[col] / pivot[col];
                    row.iter_mut()
                        .zip(&pivot)
                        .skip(col)
                        .for_each(|(r, p)| *r -= f * p);
                }
            }
            let mut c = vec![0.0; n];
            for row in (0..n).rev() {
                let s: f64 = (row + 1..n).map(|k| m[row][k] * c[k]).sum();
                c[row] = (m[row][n] - s) / m[row][row];
            }
            for (i, &k) in powers.iter().enumerate() {
                let rel = (c[i] - published[k]).abs() / published[k].abs();
                assert!(
                    rel < 0.03,
                    "degree {degree}, x^{k}: fit {} vs {}",
                    c[i],
                    published[k]
                );
            }
        }
        assert!(sigmoid_least_squares(4).is_err());
    }
}
