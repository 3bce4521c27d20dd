//! Chebyshev interpolation of real functions on an interval (plaintext math, no encryption).
//!
//! CKKS evaluates non-polynomial functions (the sigmoid, `exp`, `1/x` of the RNS-CKKS paper, Section 5.2 and
//! Table 2) through polynomial approximations. We provide Chebyshev interpolation of any
//! `Fn(f64) -> f64` on `[a, b]` to a requested degree, with its approximation error reported; this module is
//! that plaintext half: [`ChebyshevSeries::interpolate`] builds the series, [`ChebyshevSeries::evaluate`]
//! evaluates it (Clenshaw), [`ChebyshevSeries::max_error`] measures `max |f - p|`, and
//! [`ChebyshevSeries::to_power_basis`] converts small degrees to the monomial basis.
//!
//! The series is `p(x) = sum_{k=0}^{d} c_k T_k(y)` with `y = (2x - a - b) / (b - a)`, which maps `[a, b]`
//! onto `[-1, 1]`. Interpolation is at the `d + 1` Chebyshev nodes of the first kind,
//! `y_j = cos(pi (j + 1/2) / (d + 1))`, so `p` agrees with `f` at every node and is exact for polynomials
//! of degree `<= d`; near-minimax accuracy follows for smooth `f`.
//!
//! ```
//! use rnsfhe_ckks::ChebyshevSeries;
//!
//! let sigmoid = |x: f64| 1.0 / (1.0 + (-x).exp());
//! let p = ChebyshevSeries::interpolate(sigmoid, -8.0, 8.0, 15).unwrap();
//! assert_eq!(p.degree(), 15);
//! let err = p.max_error(sigmoid, 10_000);
//! assert!(err < 1e-2);
//! assert!((p.evaluate(0.0) - 0.5).abs() < 1e-12);
//! ```

use crate::error::{Error, Result};

/// Largest degree [`ChebyshevSeries::interpolate`] and [`ChebyshevSeries::from_coeffs`] accept.
///
/// The interpolation costs `O(d^2)` operations (a direct discrete cosine transform), about 17 million
/// multiply-adds at this degree; the polynomial evaluator needs degrees up to at least 255.
pub const MAX_DEGREE: usize = 4095;

/// A polynomial `p(x) = sum_{k=0}^{d} c_k T_k(y)` in the Chebyshev basis on an interval `[a, b]`, with
/// `y = (2x - a - b) / (b - a)`.
///
/// Built by [`interpolate`](Self::interpolate) (or [`from_coeffs`](Self::from_coeffs)); it is the
/// plaintext form of the Chebyshev approximations of the functions (sigmoid, `exp`, `1/x` as in the RNS-CKKS
/// paper, Section 5.2). The interval is always finite with `a < b`, and the degree is between 1 and
/// [`MAX_DEGREE`].
#[derive(Debug, Clone, PartialEq)]
pub struct ChebyshevSeries {
    /// `c_0, ..., c_d`.
    coeffs: Vec<f64>,
    /// Left end of the interval.
    a: f64,
    /// Right end of the interval.
    b: f64,
}

impl ChebyshevSeries {
    /// Interpolates `f` on `[a, b]` at the `degree + 1` Chebyshev nodes of the first kind.
    ///
    /// The coefficients are `c_k = (2 - [k = 0]) / (d + 1) * sum_j f(x_j) cos(pi k (j + 1/2) / (d + 1))`, a
    /// direct `O(d^2)` discrete cosine transform whose cosines come from an exact-symmetry table, so odd and
    /// even functions on a symmetric interval get exact zeros where they should. The nodes `x_j` lie strictly
    /// inside `(a, b)`; `f` is called exactly `degree + 1` times.
    ///
    /// # Errors
    ///
    /// * [`Error::InvalidInterval`] if `a` or `b` is not finite or `a >= b`;
    /// * [`Error::InvalidDegree`] if `degree` is 0 or above [`MAX_DEGREE`];
    /// * [`Error::NonFiniteFunctionValue`] if `f` returns NaN or an infinity at a node (naming the node).
    pub fn interpolate(f: impl Fn(f64) -> f64, a: f64, b: f64, degree: usize) -> Result<Self> {
        check_interval(a, b)?;
        check_degree(degree)?;
        let n = degree + 1;
        let table = CosTable::new(n);
        let (mid, half) = ((a + b) / 2.0, (b - a) / 2.0);
        let mut values = Vec::with_capacity(n);
        for j in 0..n {
            // y_j = cos(pi (2j + 1) / (2n)), strictly inside (-1, 1); the clamp guards against rounding.
            let x = (mid + half * table.cos(2 * j + 1)).clamp(a, b);
            let value = f(x);
            if !value.is_finite() {
                return Err(Error::NonFiniteFunctionValue { x, value });
            }
            values.push(value);
        }
        let scale = 2.0 / n as f64;
        let coeffs = (0..n)
            .map(|k| {
                let sum: f64 = values
                    .iter()
                    .enumerate()
                    .map(|(j, v)| v * table.cos(k * (2 * j + 1)))
                    .sum();
                if k == 0 {
                    sum * scale / 2.0
                } else {
                    sum * scale
                }
            })
            .collect();
        Ok(Self { coeffs, a, b })
    }

    /// A series from given Chebyshev coefficients `c_0, ..., c_d` on `[a, b]` (for example coefficients
    /// computed elsewhere, or a truncated interpolant).
    ///
    /// # Errors
    ///
    /// * [`Error::InvalidInterval`] if `a` or `b` is not finite or `a >= b`;
    /// * [`Error::InvalidDegree`] if `coeffs` has fewer than 2 or more than `MAX_DEGREE + 1` entries;
    /// * [`Error::InvalidArgument`] if a coefficient is NaN or infinite.
    pub fn from_coeffs(coeffs: Vec<f64>, a: f64, b: f64) -> Result<Self> {
        check_interval(a, b)?;
        check_degree(coeffs.len().saturating_sub(1))?;
        if let Some((index, &value)) = coeffs.iter().enumerate().find(|(_, c)| !c.is_finite()) {
            return Err(Error::InvalidArgument {
                operation: "ChebyshevSeries::from_coeffs",
                reason: format!("coefficient c_{index} is not finite ({value})"),
            });
        }
        Ok(Self { coeffs, a, b })
    }

    /// The degree `d` (the number of coefficients minus one; the leading coefficient may be zero, e.g. for
    /// an even function at odd degree).
    pub fn degree(&self) -> usize {
        self.coeffs.len() - 1
    }

    /// The interval `(a, b)` the series was built on.
    pub fn interval(&self) -> (f64, f64) {
        (self.a, self.b)
    }

    /// The Chebyshev coefficients `c_0, ..., c_d` (of `T_k(y)`, `y` the image of `x` in `[-1, 1]`).
    pub fn coeffs(&self) -> &[f64] {
        &self.coeffs
    }

    /// Evaluates `p(x)` by Clenshaw's recurrence (`b_k = c_k + 2y b_{k+1} - b_{k+2}`,
    /// `p = c_0 + y b_1 - b_2`), numerically stable for every degree.
    ///
    /// Points outside `[a, b]` are extrapolated (the polynomial is defined everywhere, but the
    /// approximation of `f` only holds on the interval, and `|T_k|` grows fast outside it); a non-finite `x`
    /// gives a non-finite result.
    pub fn evaluate(&self, x: f64) -> f64 {
        let y = (2.0 * x - self.a - self.b) / (self.b - self.a);
        let two_y = 2.0 * y;
        let (mut b1, mut b2) = (0.0, 0.0);
        for &c in self.coeffs[1..].iter().rev() {
            let b0 = c + two_y * b1 - b2;
            b2 = b1;
            b1 = b0;
        }
        self.coeffs[0] + y * b1 - b2
    }

    /// The approximation error `max |f(x) - p(x)|` over `samples` uniformly spaced points of `[a, b]`
    /// (both ends included when `samples >= 2`; the midpoint when `samples == 1`) and the `d + 1`
    /// interpolation nodes.
    ///
    /// At the nodes the error is only rounding; between them it is what an "approximation error"
    /// means, so use a dense grid (10^4 or more points for degrees up to a few hundred). Returns NaN if `f`
    /// or `p` is NaN at a sampled point, and infinity if one of them is infinite there.
    pub fn max_error(&self, f: impl Fn(f64) -> f64, samples: usize) -> f64 {
        let n = self.coeffs.len();
        let table = CosTable::new(n);
        let (mid, half) = ((self.a + self.b) / 2.0, (self.b - self.a) / 2.0);
        let nodes = (0..n).map(|j| (mid + half * table.cos(2 * j + 1)).clamp(self.a, self.b));
        let grid = (0..samples).map(|i| match samples {
            1 => mid,
            _ if i + 1 == samples => self.b,
            _ => self.a + (self.b - self.a) * (i as f64 / (samples - 1) as f64),
        });
        let mut max = 0.0_f64;
        for x in grid.chain(nodes) {
            let err = (f(x) - self.evaluate(x)).abs();
            if err.is_nan() {
                return f64::NAN;
            }
            max = max.max(err);
        }
        max
    }

    /// The same polynomial in the power basis of `x`: `p(x) = sum_{i=0}^{d} m_i x^i`, returned as
    /// `[m_0, ..., m_d]`.
    ///
    /// Meant for small degrees (up to about 15, e.g. to feed a power-basis evaluator or to compare with
    /// Taylor or least-squares polynomials): the conversion is numerically poor for large degrees, because
    /// the monomial coefficients of `T_k` grow like `2^(k-1)` and cancel, and the change of variable from
    /// `y` to `x` multiplies them by powers of `2 / (b - a)` and `(a + b) / (b - a)`. Prefer the Chebyshev
    /// form ([`evaluate`](Self::evaluate), [`coeffs`](Self::coeffs)) beyond that.
    pub fn to_power_basis(&self) -> Vec<f64> {
        let n = self.coeffs.len();
        // Power basis in y: accumulate c_k T_k(y) with T_{k+1} = 2y T_k - T_{k-1}.
        let mut in_y = vec![0.0; n];
        let mut t_prev = vec![0.0; n];
        let mut t_cur = vec![0.0; n];
        t_prev[0] = 1.0; // T_0
        in_y[0] = self.coeffs[0];
        if n > 1 {
            t_cur[1] = 1.0; // T_1
            in_y[1] += self.coeffs[1];
        }
        for k in 2..n {
            let mut t_next = vec![0.0; n];
            for i in 0..k {
                t_next[i + 1] += 2.0 * t_cur[i];
                t_next[i] -= t_prev[i];
            }
            for (acc, t) in in_y.iter_mut().zip(&t_next) {
                *acc += self.coeffs[k] * t;
            }
            t_prev = std::mem::replace(&mut t_cur, t_next);
        }
        // Substitute y = alpha x + beta by Horner's rule on polynomials in x.
        let alpha = 2.0 / (self.b - self.a);
        let beta = -(self.a + self.b) / (self.b - self.a);
        let mut in_x = vec![0.0; n];
        in_x[0] = in_y[n - 1];
        for (len, &e) in (1..n).zip(in_y.iter().rev().skip(1)) {
            // in_x (length len) := in_x * (beta + alpha x) + e.
            for i in (0..=len).rev() {
                let shifted = if i > 0 { alpha * in_x[i - 1] } else { 0.0 };
                let kept = if i < len { beta * in_x[i] } else { 0.0 };
                in_x[i] = shifted + kept;
            }
            in_x[0] += e;
        }
        in_x
    }
}

/// Rejects non-finite ends and empty or reversed intervals.
pub(crate) fn check_interval(a: f64, b: f64) -> Result<()> {
    if a.is_finite() && b.is_finite() && a < b {
        Ok(())
    } else {
        Err(Error::InvalidInterval { a, b })
    }
}

/// Rejects degree 0 and degrees above [`MAX_DEGREE`].
pub(crate) fn check_degree(degree: usize) -> Result<()> {
    if (1..=MAX_DEGREE).contains(&degree) {
        Ok(())
    } else {
        Err(Error::InvalidDegree {
            degree,
            max: MAX_DEGREE,
        })
    }
}

/// `cos(pi m / (2n))` for any integer `m`, from a quarter-period table built with exact symmetry
/// (`cos(pi/2) = 0` exactly, `cos(pi - t) = -cos(t)` bit for bit).
struct CosTable {
    /// `n`, the number of nodes.
    n: usize,
    /// `cos(pi r / (2n))` for `r = 0..=n`.
    quarter: Vec<f64>,
}

impl CosTable {
    /// The table for `n` nodes.
    fn new(n: usize) -> Self {
        let step = std::f64::consts::PI / (2 * n) as f64;
        let quarter = (0..=n)
            .map(|r| {
                if 2 * r <= n {
                    (step * r as f64).cos()
                } else {
                    (step * (n - r) as f64).sin()
                }
            })
            .collect();
        Self { n, quarter }
    }

    /// `cos(pi m / (2n))`.
    fn cos(&self, m: usize) -> f64 {
        let m = m % (4 * self.n);
        let (q, r) = (m / self.n, m % self.n);
        match q {
            0 => self.quarter[r],
            1 => -self.quarter[self.n - r],
            2 => -self.quarter[r],
            _ => self.quarter[self.n - r],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sigmoid(x: f64) -> f64 {
        1.0 / (1.0 + (-x).exp())
    }

    /// `T_k(y)` by its three-term recurrence, for direct evaluation.
    fn chebyshev_t(k: usize, y: f64) -> f64 {
        let (mut t0, mut t1) = (1.0, y);
        if k == 0 {
            return t0;
        }
        for _ in 1..k {
            (t0, t1) = (t1, 2.0 * y * t1 - t0);
        }
        t1
    }

    #[test]
    fn exp_degree_15() {
        let p = ChebyshevSeries::interpolate(f64::exp, -1.0, 1.0, 15).unwrap();
        let err = p.max_error(f64::exp, 10_001);
        println!("exp on [-1, 1], degree 15: max error {err:.3e}");
        assert!(err < 1e-12, "error {err:e}");
        assert_eq!(p.degree(), 15);
        assert_eq!(p.interval(), (-1.0, 1.0));
        // Coefficients of exp are the modified Bessel values 2 I_k(1): c_0 = I_0(1) = 1.2660658777520082.
        assert!((p.coeffs()[0] - 1.266_065_877_752_008_2).abs() < 1e-14);
    }

    #[test]
    fn sigmoid_errors_decrease_with_degree() {
        let mut errors = Vec::new();
        for degree in [7, 15, 31, 63] {
            let p = ChebyshevSeries::interpolate(sigmoid, -8.0, 8.0, degree).unwrap();
            let err = p.max_error(sigmoid, 20_001);
            println!(
                "sigmoid on [-8, 8], degree {degree}: max error {err:.3e} ({:.1} bits)",
                -err.log2()
            );
            // Odd function minus 1/2: even coefficients above c_0 vanish exactly by symmetry.
            assert!((p.coeffs()[0] - 0.5).abs() < 1e-15);
            for c in p.coeffs().iter().skip(2).step_by(2) {
                assert!(c.abs() < 1e-15, "even coefficient {c:e}");
            }
            errors.push(err);
        }
        assert!(errors.windows(2).all(|w| w[1] < w[0] / 2.0), "{errors:?}");
        assert!(errors[0] < 3.2e-2, "degree 7: {:e}", errors[0]);
        assert!(errors[1] < 2e-3, "degree 15: {:e}", errors[1]);
    }

    #[test]
    fn inverse_on_tenth_to_one() {
        let inv = |x: f64| 1.0 / x;
        let mut previous = f64::INFINITY;
        for degree in [7, 15, 31, 63] {
            let p = ChebyshevSeries::interpolate(inv, 0.1, 1.0, degree).unwrap();
            let err = p.max_error(inv, 20_001);
            println!("1/x on [0.1, 1], degree {degree}: max error {err:.3e}");
            assert!(
                err < previous / 10.0,
                "degree {degree}: {err:e} after {previous:e}"
            );
            previous = err;
        }
        assert!(previous < 1e-12, "degree 63: {previous:e}");
    }

    #[test]
    fn exact_for_polynomials_up_to_the_degree() {
        let f = |x: f64| x * x * x - 2.0 * x;
        let p = ChebyshevSeries::interpolate(f, 0.0, 3.0, 3).unwrap();
        let err = p.max_error(f, 1_001);
        assert!(err < 1e-12, "error {err:e}");
        let power = p.to_power_basis();
        let expected = [0.0, -2.0, 0.0, 1.0];
        assert_eq!(power.len(), 4);
        for (got, want) in power.iter().zip(expected) {
            assert!((got - want).abs() < 1e-12, "{power:?}");
        }
        // A higher degree than needed leaves the extra coefficients at rounding level.
        let q = ChebyshevSeries::interpolate(f, 0.0, 3.0, 6).unwrap();
        assert!(
            q.coeffs()[4..].iter().all(|c| c.abs() < 1e-13),
            "{:?}",
            q.coeffs()
        );
        assert!(q.max_error(f, 1_001) < 1e-12);
    }

    #[test]
    fn power_basis_matches_evaluation_up_to_degree_15() {
        for (a, b) in [(-1.0, 1.0), (-8.0, 8.0), (0.1, 1.0), (2.0, 5.0)] {
            for degree in [1, 2, 5, 7, 11, 15] {
                let p =
                    ChebyshevSeries::interpolate(|x| (0.3 * x).sin() + 0.1 * x * x, a, b, degree)
                        .unwrap();
                let power = p.to_power_basis();
                assert_eq!(power.len(), degree + 1);
                let scale: f64 = p.coeffs().iter().map(|c| c.abs()).sum();
                for i in 0..=100 {
                    let x = a + (b - a) * i as f64 / 100.0;
                    let horner = power.iter().rev().fold(0.0, |acc, m| acc * x + m);
                    let diff = (horner - p.evaluate(x)).abs();
                    assert!(
                        diff < 1e-9 * scale.max(1.0),
                        "[{a}, {b}] degree {degree} x = {x}: {diff:e}"
                    );
                }
            }
        }
    }

    #[test]
    fn clenshaw_matches_direct_sum() {
        let coeffs: Vec<f64> = (0..40)
            .map(|k| ((k * 7 % 11) as f64 - 5.0) / (k as f64 + 1.0))
            .collect();
        let p = ChebyshevSeries::from_coeffs(coeffs.clone(), -2.0, 3.0).unwrap();
        assert_eq!(p.degree(), 39);
        for i in 0..=200 {
            let x = -2.0 + 5.0 * i as f64 / 200.0;
            let y = (2.0 * x - 1.0) / 5.0;
            let direct: f64 = coeffs
                .iter()
                .enumerate()
                .map(|(k, c)| c * chebyshev_t(k, y))
                .sum();
            let trig: f64 = coeffs
                .iter()
                .enumerate()
                .map(|(k, c)| c * (k as f64 * y.clamp(-1.0, 1.0).acos()).cos())
                .sum();
            assert!((p.evaluate(x) - direct).abs() < 1e-12, "x = {x}");
            assert!((p.evaluate(x) - trig).abs() < 1e-11, "x = {x}");
        }
    }

    #[test]
    fn interpolates_at_the_nodes_and_high_degree() {
        let f = |x: f64| (5.0 * x).sin() * (-x * x).exp();
        let p = ChebyshevSeries::interpolate(f, -3.0, 3.0, 1023).unwrap();
        let err = p.max_error(f, 50_001);
        println!("sin(5x) exp(-x^2) on [-3, 3], degree 1023: max error {err:.3e}");
        assert!(err < 1e-13, "error {err:e}");
        let n = 1024;
        for j in (0..n).step_by(37) {
            let x = 3.0 * (std::f64::consts::PI * (j as f64 + 0.5) / n as f64).cos();
            assert!((p.evaluate(x) - f(x)).abs() < 1e-13);
        }
        assert!(ChebyshevSeries::interpolate(f, -3.0, 3.0, MAX_DEGREE).is_ok());
    }

    #[test]
    fn cos_table_is_exact_at_symmetry_points() {
        for n in [1, 2, 3, 8, 9, 1024] {
            let t = CosTable::new(n);
            assert_eq!(t.cos(0), 1.0);
            assert_eq!(t.cos(n), 0.0);
            assert_eq!(t.cos(2 * n), -1.0);
            for m in 0..8 * n {
                let exact = (std::f64::consts::PI * m as f64 / (2 * n) as f64).cos();
                assert!((t.cos(m) - exact).abs() < 1e-14, "n = {n}, m = {m}");
            }
        }
    }

    #[test]
    fn max_error_edge_cases() {
        let p = ChebyshevSeries::interpolate(f64::exp, 0.0, 1.0, 4).unwrap();
        // Nodes only, then one midpoint: both small and finite.
        assert!(p.max_error(f64::exp, 0) < 1e-14);
        assert!(p.max_error(f64::exp, 1) < 1e-3);
        assert!(p
            .max_error(|x| if x > 0.5 { f64::NAN } else { x.exp() }, 100)
            .is_nan());
        assert_eq!(
            p.max_error(|x| if x > 0.5 { f64::INFINITY } else { x.exp() }, 100),
            f64::INFINITY
        );
    }

    #[test]
    fn bad_inputs_are_errors() {
        let f = |x: f64| x;
        for (a, b) in [
            (1.0, 1.0),
            (2.0, -1.0),
            (f64::NAN, 1.0),
            (0.0, f64::NAN),
            (f64::NEG_INFINITY, 0.0),
            (0.0, f64::INFINITY),
        ] {
            let err = ChebyshevSeries::interpolate(f, a, b, 5).unwrap_err();
            assert!(matches!(err, Error::InvalidInterval { .. }), "{err}");
            let msg = err.to_string();
            assert!(
                msg.contains(&a.to_string()) && msg.contains(&b.to_string()),
                "{msg}"
            );
            assert!(ChebyshevSeries::from_coeffs(vec![1.0, 2.0], a, b).is_err());
        }
        for degree in [0, MAX_DEGREE + 1, usize::MAX] {
            let err = ChebyshevSeries::interpolate(f, -1.0, 1.0, degree).unwrap_err();
            assert_eq!(
                err,
                Error::InvalidDegree {
                    degree,
                    max: MAX_DEGREE
                }
            );
        }
        let err = ChebyshevSeries::interpolate(f64::ln, -1.0, 1.0, 7).unwrap_err();
        assert!(
            matches!(err, Error::NonFiniteFunctionValue { x, value } if x < 0.0 && value.is_nan()),
            "{err}"
        );
        // Odd degree on a symmetric interval: no node at 0, so 1/x is finite at every node (if useless);
        // even degree puts a node exactly at 0.
        assert!(ChebyshevSeries::interpolate(|x: f64| 1.0 / x, -1.0, 1.0, 3).is_ok());
        let err = ChebyshevSeries::interpolate(|x: f64| 1.0 / x, -1.0, 1.0, 4).unwrap_err();
        assert_eq!(
            err,
            Error::NonFiniteFunctionValue {
                x: 0.0,
                value: f64::INFINITY
            }
        );
        assert!(err.to_string().contains("x = 0"), "{err}");
        assert!(matches!(
            ChebyshevSeries::from_coeffs(vec![1.0], 0.0, 1.0),
            Err(Error::InvalidDegree { degree: 0, .. })
        ));
        assert!(matches!(
            ChebyshevSeries::from_coeffs(vec![], 0.0, 1.0),
            Err(Error::InvalidDegree { degree: 0, .. })
        ));
        assert!(matches!(
            ChebyshevSeries::from_coeffs(vec![1.0, f64::NAN], 0.0, 1.0),
            Err(Error::InvalidArgument { .. })
        ));
    }
}
