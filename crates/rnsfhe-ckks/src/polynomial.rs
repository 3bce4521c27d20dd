//! Polynomial evaluation on ciphertexts: a baby-step giant-step (Paterson-Stockmeyer style) schedule in the
//! power basis or the Chebyshev basis, at the minimal depth, with exact scale management (the
//! functions of RNS-CKKS Section 5.2, Table 2, are polynomials evaluated this way).
//!
//! # What is evaluated
//!
//! A [`Polynomial`] is `p(x) = sum_k c_k x^k` ([`Polynomial::power`]) or `p(x) = sum_k c_k T_k(y)` with
//! `y = (2x - a - b) / (b - a)` ([`Polynomial::chebyshev`], or any [`ChebyshevSeries`]);
//! [`Evaluator::evaluate_polynomial`] applies it slot-wise to a ciphertext and
//! [`Evaluator::evaluate_function`] interpolates a function first.
//!
//! # Depth
//!
//! A polynomial of degree `d` consumes `D = ceil(log2(d + 1))` levels, the minimum for any evaluation by
//! products of two operands. A Chebyshev polynomial on an interval whose map `y = alpha x + beta` has a
//! non-integer `alpha = 2 / (b - a)` consumes one more level, for the multiplication by `alpha` (a
//! constant that is not an integer needs a rescaling; an integer `alpha`, in particular `[-1, 1]` and any
//! interval of width 2 or `2 / k`, is free). To avoid that level, fold `alpha` and `beta` into the
//! computation that produces the input and evaluate on `[-1, 1]`. [`Polynomial::depth`] gives the count.
//!
//! # Schedule
//!
//! With `2^l` baby steps (chosen by a dry run of the schedule for every `l`, minimising the non-scalar
//! multiplications), the polynomial is split recursively: `p = q * P_m + r` with `m` the largest power of
//! two `<= deg p` and `P_m` the power `x^m` or `T_m(y)` (in the Chebyshev basis the split uses
//! `T_i = 2 T_m T_{i-m} - T_{2m-i}`). A part becomes a leaf, `sum_i c_i P_i` over computed powers with
//! scalar multiplications only, as soon as all its powers have a level to spare for the scalar product.
//! The leading chain (the `q` parts) gets no slack and is split down to degree 1; every remainder `r` has
//! one level of slack, enough for leaves of degree up to `2^l - 1`. The powers are `P_2 .. P_{2^l - 1}`
//! and `P_{2^l}, P_{2^(l+1)}, ..., P_{2^(D-1)}` (only those a part uses: odd polynomials need only odd
//! baby steps). The number of non-scalar multiplications, [`Polynomial::multiplications`], is at most
//! `2 sqrt(d) + log2(d)` and about `sqrt(2d) + log2(d)` for odd polynomials (degree 7: 5, degree 15: 8,
//! degree 255: 36, odd: 32; degree 1023: 70, odd: 59).
//!
//! # Scales
//!
//! The output has exactly the input's scale (up to `f64` rounding), at level `input level - depth`. Each
//! part is evaluated towards a target `(level, scale)` computed top-down: a leaf at `(lambda, T)`
//! multiplies each power `P_i` by `c_i` encoded at scale `T q_lambda / scale(P_i)`, sums at level
//! `lambda + 1` and rescales once, landing on `T` exactly; a split `q * P_m + r` evaluates `q` towards
//! `(lambda + 1, T q_lambda / scale(P_m))` so that the product, rescaled, lands on `T` too. The constants
//! are thus encoded at about `q` (40 to 60 bits of precision each), and no scale drift accumulates,
//! whatever the scales of the powers (Bossuat, Mouchet, Troncoso-Pastoriza, Hubaux, Eurocrypt 2021,
//! Section 4.2, describe the same target-scale idea). In the Chebyshev basis,
//! `T_i = 2 T_a T_b - T_c` subtracts `T_c` after bringing it to the product's level and scale with one
//! integer multiplication and a rescaling of `T_c`, which always has a level to spare.

use rayon::prelude::*;

use rnsfhe_core::RlweCiphertext;
use rnsfhe_ring::parallel::active_wait;
use rnsfhe_ring::{Ntt, Poly};

use crate::chebyshev::{check_degree, check_interval, ChebyshevSeries, MAX_DEGREE};
use crate::error::{Error, Result};
use crate::evaluator::{f64_residue, Evaluator};
use crate::plaintext::Ciphertext;

/// Chebyshev coefficients below this fraction of the sum of their magnitudes are treated as zero: since
/// `|T_k| <= 1` on the interval they change the result by less than that fraction, far below the
/// precision of CKKS, and skipping them keeps odd and even functions on their cheaper schedule.
const NEGLIGIBLE_CHEBYSHEV: f64 = 1e-15;

/// Largest `log2` by which the scale of the highest power computed may drift from the input's scale
/// (the drift of `x^(2^k)` is `2^k` times the input's distance to its level's default scale).
const MAX_POWER_SCALE_DRIFT_BITS: f64 = 8.0;

/// The basis a [`Polynomial`] is written in.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum PolynomialBasis {
    /// Monomials `x^k`.
    Power,
    /// Chebyshev polynomials `T_k(y)` of `y = (2x - a - b) / (b - a)`, which maps `[a, b]` onto `[-1, 1]`.
    Chebyshev {
        /// Left end of the interval.
        a: f64,
        /// Right end of the interval.
        b: f64,
    },
}

#[derive(Debug, Clone, PartialEq)]
enum Form {
    Power(Vec<f64>),
    Chebyshev(ChebyshevSeries),
}

/// A real polynomial to evaluate on ciphertexts, in the power basis or the Chebyshev basis of an interval
/// (see the [module documentation](self)).
///
/// ```
/// use rnsfhe_ckks::Polynomial;
///
/// // 1 + 2x + 3x^2
/// let p = Polynomial::power(vec![1.0, 2.0, 3.0]).unwrap();
/// assert_eq!(p.degree(), 2);
/// assert_eq!(p.depth(), 2);
/// assert_eq!(p.evaluate(2.0), 17.0);
///
/// // T_3 on [0, 4]: y = (2x - 4) / 4, alpha = 1/2 is not an integer, one more level
/// let t3 = Polynomial::chebyshev(vec![0.0, 0.0, 0.0, 1.0], 0.0, 4.0).unwrap();
/// assert_eq!(t3.depth(), 3);
/// assert!((t3.evaluate(4.0) - 1.0).abs() < 1e-12);
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct Polynomial {
    form: Form,
    /// Index of the highest non-negligible coefficient.
    degree: usize,
}

impl Polynomial {
    /// `p(x) = coeffs[0] + coeffs[1] x + ... + coeffs[d] x^d`.
    ///
    /// # Errors
    ///
    /// * [`Error::InvalidArgument`] if a coefficient is NaN or infinite;
    /// * [`Error::InvalidDegree`] if the degree (the index of the last non-zero coefficient) is 0 (a
    ///   constant: add it with [`Evaluator::add_real`] instead) or above [`MAX_DEGREE`].
    pub fn power(coeffs: Vec<f64>) -> Result<Self> {
        check_finite(&coeffs, "Polynomial::power")?;
        let degree = coeffs.iter().rposition(|&c| c != 0.0).unwrap_or(0);
        check_degree(degree)?;
        Ok(Self {
            form: Form::Power(coeffs),
            degree,
        })
    }

    /// `p(x) = sum_k coeffs[k] T_k((2x - a - b) / (b - a))`.
    ///
    /// # Errors
    ///
    /// * [`Error::InvalidInterval`] unless `a < b`, both finite;
    /// * [`Error::InvalidArgument`] if a coefficient is NaN or infinite;
    /// * [`Error::InvalidDegree`] if the degree (last non-negligible coefficient) is 0 or above
    ///   [`MAX_DEGREE`].
    pub fn chebyshev(coeffs: Vec<f64>, a: f64, b: f64) -> Result<Self> {
        check_interval(a, b)?;
        check_finite(&coeffs, "Polynomial::chebyshev")?;
        let threshold = chebyshev_threshold(&coeffs);
        let degree = coeffs
            .iter()
            .rposition(|c| c.abs() > threshold)
            .unwrap_or(0);
        check_degree(degree)?;
        let mut coeffs = coeffs;
        coeffs.truncate(degree + 1);
        Ok(Self {
            form: Form::Chebyshev(ChebyshevSeries::from_coeffs(coeffs, a, b)?),
            degree,
        })
    }

    /// The basis the coefficients are given in.
    pub fn basis(&self) -> PolynomialBasis {
        match &self.form {
            Form::Power(_) => PolynomialBasis::Power,
            Form::Chebyshev(s) => {
                let (a, b) = s.interval();
                PolynomialBasis::Chebyshev { a, b }
            }
        }
    }

    /// The coefficients, in the polynomial's basis.
    pub fn coeffs(&self) -> &[f64] {
        match &self.form {
            Form::Power(c) => c,
            Form::Chebyshev(s) => s.coeffs(),
        }
    }

    /// The degree `d` (index of the last non-zero coefficient; for the Chebyshev basis, of the last
    /// non-negligible one).
    pub fn degree(&self) -> usize {
        self.degree
    }

    /// Evaluates the polynomial at a real point, in plaintext (Horner's rule, or Clenshaw's recurrence for
    /// the Chebyshev basis): the reference the homomorphic evaluation is compared with.
    pub fn evaluate(&self, x: f64) -> f64 {
        match &self.form {
            Form::Power(c) => c.iter().rev().fold(0.0, |acc, &ck| acc * x + ck),
            Form::Chebyshev(s) => s.evaluate(x),
        }
    }

    /// The levels [`Evaluator::evaluate_polynomial`] consumes: `ceil(log2(d + 1))`, plus one for a
    /// Chebyshev interval whose `alpha = 2 / (b - a)` is not an integer (see the
    /// [module documentation](self)).
    pub fn depth(&self) -> usize {
        ceil_log2(self.degree + 1) + usize::from(self.change_of_variable().costs_level())
    }

    /// The number of non-scalar multiplications (ciphertext products, each with a relinearization)
    /// [`Evaluator::evaluate_polynomial`] performs: the powers it computes and the giant-step products.
    pub fn multiplications(&self) -> usize {
        Schedule::new(self).multiplications()
    }

    fn change_of_variable(&self) -> ChangeOfVariable {
        match &self.form {
            Form::Power(_) => ChangeOfVariable::None,
            Form::Chebyshev(s) => {
                let (a, b) = s.interval();
                let alpha = 2.0 / (b - a);
                let beta = -(a + b) / (b - a);
                if alpha == alpha.round() && alpha < 9.0e15 {
                    ChangeOfVariable::Integer {
                        alpha: alpha as i64,
                        beta,
                    }
                } else {
                    ChangeOfVariable::Rescaled { alpha, beta }
                }
            }
        }
    }

    fn is_chebyshev(&self) -> bool {
        matches!(self.form, Form::Chebyshev(_))
    }

    /// The coefficients up to the degree, negligible Chebyshev ones set to zero.
    fn working_coeffs(&self) -> Vec<f64> {
        let c = &self.coeffs()[..=self.degree];
        if self.is_chebyshev() {
            let threshold = chebyshev_threshold(c);
            c.iter()
                .map(|&x| if x.abs() > threshold { x } else { 0.0 })
                .collect()
        } else {
            c.to_vec()
        }
    }
}

impl Polynomial {
    /// The polynomial of an interpolant, refusing a constant one (nothing to evaluate: the function is
    /// flat on the interval at this degree, and the constant is added to the ciphertext instead).
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] naming the interval and the constant.
    pub fn nonconstant(series: ChebyshevSeries) -> Result<Self> {
        let (a, b) = series.interval();
        let c0 = series.coeffs().first().copied().unwrap_or(0.0);
        let p = Self::from(series);
        if p.degree() == 0 {
            return Err(Error::InvalidArgument {
                operation: "Chebyshev interpolation",
                reason: format!(
                    "the interpolant on [{a}, {b}] is the constant {c0}: add it to the ciphertext \
                     (ct * 0 + c) instead of evaluating a polynomial"
                ),
            });
        }
        Ok(p)
    }
}

impl From<ChebyshevSeries> for Polynomial {
    fn from(series: ChebyshevSeries) -> Self {
        let threshold = chebyshev_threshold(series.coeffs());
        let degree = series
            .coeffs()
            .iter()
            .rposition(|c| c.abs() > threshold)
            .unwrap_or(0);
        Self {
            form: Form::Chebyshev(series),
            degree,
        }
    }
}

fn check_finite(coeffs: &[f64], operation: &'static str) -> Result<()> {
    if coeffs.is_empty() {
        return Err(Error::InvalidDegree {
            degree: 0,
            max: MAX_DEGREE,
        });
    }
    if let Some((index, &value)) = coeffs.iter().enumerate().find(|(_, c)| !c.is_finite()) {
        return Err(Error::InvalidArgument {
            operation,
            reason: format!("coefficient c_{index} is not finite ({value})"),
        });
    }
    Ok(())
}

fn chebyshev_threshold(coeffs: &[f64]) -> f64 {
    NEGLIGIBLE_CHEBYSHEV * coeffs.iter().map(|c| c.abs()).sum::<f64>()
}

/// `ceil(log2(n))` for `n >= 1`.
fn ceil_log2(n: usize) -> usize {
    n.next_power_of_two().trailing_zeros() as usize
}

/// `ceil(log2(degree + 1))`: the levels of a polynomial of `degree` without the interval map.
pub(crate) fn degree_levels(degree: usize) -> usize {
    ceil_log2(degree.saturating_add(1))
}

/// The map from `x` to the Chebyshev variable `y = alpha x + beta`.
#[derive(Debug, Clone, Copy)]
enum ChangeOfVariable {
    /// Power basis: `y = x`.
    None,
    /// `alpha` an integer: a free multiplication by an integer, then `+ beta`.
    Integer { alpha: i64, beta: f64 },
    /// A multiplication by a constant and a rescaling (one level), then `+ beta`.
    Rescaled { alpha: f64, beta: f64 },
}

impl ChangeOfVariable {
    fn costs_level(self) -> bool {
        matches!(self, ChangeOfVariable::Rescaled { .. })
    }
}

// --------------------------------------------------------------------------------------------------
// The schedule: a plan computed from the coefficients and level budgets only
// --------------------------------------------------------------------------------------------------

/// One part of the recursive split. Budgets count the levels between the input's level and the part's
/// target level: the power `P_i` sits `ceil(log2 i)` levels below the input, so a leaf with budget `b`
/// may use `P_i` iff `ceil(log2 i) + 1 <= b` (one level for the scalar products).
#[derive(Debug, Clone)]
enum Node {
    /// `c_0 + sum c_i P_i` with scalar products and one rescaling.
    Leaf { terms: Vec<(usize, f64)>, c0: f64 },
    /// `q * P_m + r`; `r` may be a bare constant.
    Split {
        m: usize,
        q: Box<Node>,
        r: Option<Box<Node>>,
        r_constant: f64,
    },
}

/// The plan of one evaluation: baby-step count, tree, and the powers it needs.
#[derive(Debug, Clone)]
struct Schedule {
    chebyshev: bool,
    root: Node,
    /// `needed[i]`: the power `P_i` is computed (index 0 unused; `P_1` is the input).
    needed: Vec<bool>,
}

impl Schedule {
    /// The schedule with the fewest non-scalar multiplications over all baby-step counts.
    fn new(p: &Polynomial) -> Self {
        let coeffs = p.working_coeffs();
        let depth = ceil_log2(p.degree() + 1);
        (1..=depth.max(1))
            .map(|l| Self::with_baby_steps(&coeffs, p.is_chebyshev(), depth, 1 << l))
            .min_by_key(Self::multiplications)
            .unwrap_or_else(|| Self::with_baby_steps(&coeffs, p.is_chebyshev(), depth, 2))
    }

    fn with_baby_steps(coeffs: &[f64], chebyshev: bool, depth: usize, baby: usize) -> Self {
        let planner = Planner { chebyshev, baby };
        let root = planner.plan(coeffs, depth);
        let mut needed = vec![false; coeffs.len().next_power_of_two() + 1];
        mark_powers(&root, &mut needed);
        // Dependencies: P_i needs P_hi and P_lo (and T_{hi - lo} in the Chebyshev basis).
        for i in (2..needed.len()).rev() {
            if needed[i] {
                let (hi, lo) = power_split(i);
                needed[hi] = true;
                needed[lo] = true;
                if chebyshev && hi != lo {
                    needed[hi - lo] = true;
                }
            }
        }
        Self {
            chebyshev,
            root,
            needed,
        }
    }

    fn multiplications(&self) -> usize {
        let powers = self.needed.iter().skip(2).filter(|&&n| n).count();
        powers + count_products(&self.root)
    }
}

struct Planner {
    chebyshev: bool,
    baby: usize,
}

impl Planner {
    /// `P_i` is among the powers the schedule may compute: a baby step or a power of two.
    fn available(&self, i: usize) -> bool {
        i < self.baby || i.is_power_of_two()
    }

    /// Plans `sum_i coeffs[i] P_i` (degree >= 1) with `budget` levels.
    fn plan(&self, coeffs: &[f64], budget: usize) -> Node {
        let d = coeffs.iter().rposition(|&c| c != 0.0).unwrap_or(0);
        let leaf_ok = (1..=d)
            .filter(|&i| coeffs[i] != 0.0)
            .all(|i| self.available(i) && ceil_log2(i) < budget);
        if leaf_ok {
            return leaf(coeffs);
        }
        let m = 1usize << (usize::BITS - 1 - d.leading_zeros());
        let (q, r) = self.split(&coeffs[..=d], m);
        let r_degree = r.iter().rposition(|&c| c != 0.0).unwrap_or(0);
        let (r_node, r_constant) = if r_degree == 0 {
            (None, r[0])
        } else {
            (Some(Box::new(self.plan(&r, budget))), 0.0)
        };
        let q_degree = q.iter().rposition(|&c| c != 0.0).unwrap_or(0);
        if q_degree == 0 {
            // q * P_m is a scalar product: one more leaf term (merged into a leaf remainder).
            let term = (m, q[0]);
            return match r_node.map(|b| *b) {
                Some(Node::Leaf { mut terms, c0 }) => {
                    terms.push(term);
                    Node::Leaf { terms, c0 }
                }
                None => Node::Leaf {
                    terms: vec![term],
                    c0: r_constant,
                },
                Some(other) => Node::Split {
                    m: 1,
                    q: Box::new(Node::Leaf {
                        terms: vec![term],
                        c0: 0.0,
                    }),
                    r: Some(Box::new(other)),
                    r_constant: 0.0,
                },
            };
        }
        Node::Split {
            m,
            q: Box::new(self.plan(&q, budget.saturating_sub(1))),
            r: r_node,
            r_constant,
        }
    }

    /// `p = q * P_m + r` with `deg r < m`.
    fn split(&self, coeffs: &[f64], m: usize) -> (Vec<f64>, Vec<f64>) {
        let d = coeffs.len() - 1;
        let mut q = vec![0.0; d - m + 1];
        let mut r = coeffs[..m].to_vec();
        if self.chebyshev {
            // T_i = 2 T_m T_{i-m} - T_{2m-i} for m < i < 2m.
            q[0] = coeffs[m];
            for i in m + 1..=d {
                q[i - m] += 2.0 * coeffs[i];
                r[2 * m - i] -= coeffs[i];
            }
        } else {
            q.copy_from_slice(&coeffs[m..]);
        }
        (q, r)
    }
}

fn leaf(coeffs: &[f64]) -> Node {
    Node::Leaf {
        terms: coeffs
            .iter()
            .enumerate()
            .skip(1)
            .filter(|(_, &c)| c != 0.0)
            .map(|(i, &c)| (i, c))
            .collect(),
        c0: coeffs[0],
    }
}

fn mark_powers(node: &Node, needed: &mut [bool]) {
    match node {
        Node::Leaf { terms, .. } => terms.iter().for_each(|&(i, _)| needed[i] = true),
        Node::Split { m, q, r, .. } => {
            needed[*m] = true;
            mark_powers(q, needed);
            if let Some(r) = r {
                mark_powers(r, needed);
            }
        }
    }
}

fn count_products(node: &Node) -> usize {
    match node {
        Node::Leaf { .. } => 0,
        Node::Split { m, q, r, .. } => {
            // m == 1 marks a sum of two parts without a product (see `Planner::plan`).
            usize::from(*m > 1) + count_products(q) + r.as_deref().map_or(0, count_products)
        }
    }
}

/// The two factors of `P_i`: `(i/2, i/2)` for a power of two, else `(2^k, i - 2^k)` with `2^k` the
/// largest power of two below `i`; both have depth below `ceil(log2 i)`.
fn power_split(i: usize) -> (usize, usize) {
    if i.is_power_of_two() {
        (i / 2, i / 2)
    } else {
        let hi = 1usize << (usize::BITS - 1 - i.leading_zeros());
        (hi, i - hi)
    }
}

// --------------------------------------------------------------------------------------------------
// Execution
// --------------------------------------------------------------------------------------------------

const OP: &str = "polynomial evaluation";

impl Evaluator {
    /// Evaluates `p` slot-wise on `ct` (see the [module documentation](self)): the result is at level
    /// `ct.level() - p.depth()` with the scale of `ct`.
    ///
    /// Needs the relinearization key. The slots should lie where the polynomial is meant to be used (for a
    /// Chebyshev polynomial, in `[a, b]`: outside, `T_k` grows like `(|y| + sqrt(y^2 - 1))^k`).
    ///
    /// # Errors
    ///
    /// * [`Error::NotEnoughLevels`] if `ct.level() < p.depth() + 1`, naming the levels needed and
    ///   available;
    /// * [`Error::InvalidArgument`] if the scale of `ct` is so far from its level's default scale that the
    ///   powers' scales would drift by more than `2^8` (bring it to the default scale first, e.g. with
    ///   [`Evaluator::multiply_real`] by 1 and [`Evaluator::rescale`]);
    /// * [`Error::MissingKey`] without a relinearization key; [`Error::ContextMismatch`];
    /// * [`Error::ScaleTooLarge`] when the values are too large for the modulus at the output level.
    pub fn evaluate_polynomial(&self, ct: &Ciphertext, p: &Polynomial) -> Result<Ciphertext> {
        self.evaluate_polynomial_to_scale(ct, p, ct.scale())
    }

    /// [`Evaluator::evaluate_polynomial`] with the output at `scale` instead of the input's scale: the
    /// top-down targets of the [module documentation](self#scales) start from `scale`, so the output lands
    /// on it exactly at no extra cost. A caller that multiplies the result further (the double-angle
    /// steps of [`crate::eval_mod`]) picks the scale that makes its own products land on the scale it
    /// wants.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidScale`] unless `scale` is finite and positive; as
    /// [`Evaluator::evaluate_polynomial`].
    pub fn evaluate_polynomial_to_scale(
        &self,
        ct: &Ciphertext,
        p: &Polynomial,
        scale: f64,
    ) -> Result<Ciphertext> {
        active_wait(|| self.evaluate_polynomial_to_scale_waiting(ct, p, scale))
    }

    /// The work of [`Self::evaluate_polynomial_to_scale`], which runs it inside [`active_wait`] (a long
    /// sequence of short parallel sections).
    fn evaluate_polynomial_to_scale_waiting(
        &self,
        ct: &Ciphertext,
        p: &Polynomial,
        scale: f64,
    ) -> Result<Ciphertext> {
        if !(scale.is_finite() && scale > 0.0) {
            return Err(Error::InvalidScale { scale });
        }
        self.check_ct(ct)?;
        self.relin_key(OP)?;
        if p.degree() == 0 {
            // Only a Chebyshev series built from negligible coefficients gets here.
            return Err(Error::InvalidDegree {
                degree: 0,
                max: MAX_DEGREE,
            });
        }
        self.check_levels(ct, p.depth(), OP)?;
        let target_scale = scale;
        let x = self.relinearize(ct)?;
        let y = match p.change_of_variable() {
            ChangeOfVariable::None => x,
            ChangeOfVariable::Integer { alpha, beta } => {
                let y = if alpha == 1 {
                    x
                } else {
                    self.multiply_int(&x, alpha)?
                };
                self.add_real(&y, beta)?
            }
            ChangeOfVariable::Rescaled { alpha, beta } => {
                let y = self.rescale(&self.multiply_real(&x, alpha)?)?;
                self.add_real(&y, beta)?
            }
        };
        let schedule = Schedule::new(p);
        let top_power = schedule.needed.iter().rposition(|&n| n).unwrap_or(1).max(1);
        let default = self.context().level_scale(y.level())?;
        let drift = (y.scale() / default).log2().abs() * (top_power as f64 / 2.0).max(1.0);
        if drift > MAX_POWER_SCALE_DRIFT_BITS {
            return Err(Error::InvalidArgument {
                operation: OP,
                reason: format!(
                    "the input's log2 scale {:.2} is {:.2} bits from the default scale of its level {} \
                     ({:.2}); the powers up to {} would drift by 2^{drift:.1}: bring the ciphertext to \
                     its level's default scale first (multiply_real by 1.0, then rescale)",
                    y.log2_scale(),
                    (y.scale() / default).log2(),
                    y.level(),
                    default.log2(),
                    top_power
                ),
            });
        }
        let powers = self.compute_powers(&y, &schedule)?;
        let level = y.level() - ceil_log2(p.degree() + 1);
        let mut out = self.execute(&schedule.root, &powers, level, target_scale)?;
        out.scale = target_scale;
        Ok(out)
    }

    /// [`Evaluator::evaluate_polynomial`] for the named `operation` (`"sigmoid"`, ...), with the levels
    /// checked first: a ciphertext without `p.depth()` levels left gives [`Error::PolynomialTooDeep`],
    /// which names the levels of the degree and of the interval map and what to change (the message the
    /// functions of [`crate::functions`] and the Python bindings give).
    ///
    /// # Errors
    ///
    /// [`Error::ContextMismatch`]; [`Error::PolynomialTooDeep`]; as [`Evaluator::evaluate_polynomial`].
    pub fn evaluate_polynomial_for(
        &self,
        ct: &Ciphertext,
        p: &Polynomial,
        operation: &'static str,
    ) -> Result<Ciphertext> {
        self.check_ct(ct)?;
        let depth = p.depth();
        if ct.level() <= depth {
            return Err(Error::PolynomialTooDeep {
                operation,
                degree: p.degree(),
                basis: p.basis(),
                depth,
                level: ct.level(),
            });
        }
        self.evaluate_polynomial(ct, p)
    }

    /// Interpolates `f` on `[a, b]` at `degree + 1` Chebyshev nodes ([`ChebyshevSeries::interpolate`])
    /// and evaluates the interpolant on `ct` ([`Evaluator::evaluate_polynomial`]). The approximation error
    /// of the interpolant is [`ChebyshevSeries::max_error`]; build the series yourself to inspect it.
    ///
    /// # Errors
    ///
    /// As [`ChebyshevSeries::interpolate`] ([`Error::InvalidInterval`] for `a >= b`,
    /// [`Error::InvalidDegree`], [`Error::NonFiniteFunctionValue`]) and
    /// [`Evaluator::evaluate_polynomial`].
    pub fn evaluate_function(
        &self,
        ct: &Ciphertext,
        f: impl Fn(f64) -> f64,
        a: f64,
        b: f64,
        degree: usize,
    ) -> Result<Ciphertext> {
        let series = ChebyshevSeries::interpolate(f, a, b, degree)?;
        self.evaluate_polynomial(ct, &Polynomial::from(series))
    }

    /// The powers `P_i` the schedule needs, `P_1 = y`, layer by layer of depth (the powers of one layer
    /// in parallel).
    fn compute_powers(
        &self,
        y: &Ciphertext,
        schedule: &Schedule,
    ) -> Result<Vec<Option<Ciphertext>>> {
        let n = schedule.needed.len();
        let mut powers: Vec<Option<Ciphertext>> = vec![None; n];
        if n > 1 {
            powers[1] = Some(y.clone());
        }
        let max_depth = ceil_log2(n.max(2) - 1);
        for depth in 1..=max_depth {
            let layer: Vec<usize> = (2..n)
                .filter(|&i| schedule.needed[i] && ceil_log2(i) == depth)
                .collect();
            let computed = layer
                .par_iter()
                .map(|&i| self.power(&powers, i, schedule.chebyshev))
                .collect::<Result<Vec<_>>>()?;
            for (i, ct) in layer.into_iter().zip(computed) {
                powers[i] = Some(ct);
            }
        }
        Ok(powers)
    }

    /// `P_i` from lower powers: `x^hi x^lo`, or `2 T_hi T_lo - T_{hi - lo}` (`- 1` for a power of two).
    fn power(
        &self,
        powers: &[Option<Ciphertext>],
        i: usize,
        chebyshev: bool,
    ) -> Result<Ciphertext> {
        let (hi, lo) = power_split(i);
        let get = |k: usize| {
            powers[k]
                .as_ref()
                .ok_or_else(|| internal(format!("power {k} missing")))
        };
        let product = self.multiply_rescale(get(hi)?, get(lo)?)?;
        if !chebyshev {
            return Ok(product);
        }
        let mut doubled = product;
        doubled
            .inner
            .parts
            .iter_mut()
            .for_each(|p| p.mul_i64_assign(2));
        if hi == lo {
            return self.add_real(&doubled, -1.0);
        }
        let t = self.bring_to(get(hi - lo)?, doubled.level(), doubled.scale())?;
        let mut out = self.sub(&doubled, &t)?;
        out.scale = doubled.scale();
        Ok(out)
    }

    /// `ct` at `level` (below its own) with scale `scale`: dropped to `level + 1`, multiplied by the
    /// integer `round(scale q_level / scale(ct))` and rescaled (message error `2^-log2(q)` relative).
    fn bring_to(&self, ct: &Ciphertext, level: usize, scale: f64) -> Result<Ciphertext> {
        if ct.level() <= level {
            return Err(internal(format!(
                "cannot bring a power at level {} to level {level}",
                ct.level()
            )));
        }
        let top = self.drop_to_level(ct, level + 1)?;
        let q = self.context().q_moduli()[level] as f64;
        let k = (scale * q / ct.scale()).round();
        let basis = self.context().basis(level + 1)?;
        let residues: Vec<u64> = basis.moduli().iter().map(|m| f64_residue(k, m)).collect();
        let mut scaled = top;
        for part in scaled.inner.parts.iter_mut() {
            part.mul_scalars_assign(&residues)?;
        }
        scaled.scale *= k;
        self.rescale(&scaled)
    }

    /// Evaluates one node of the schedule towards `(level, scale)`.
    fn execute(
        &self,
        node: &Node,
        powers: &[Option<Ciphertext>],
        level: usize,
        scale: f64,
    ) -> Result<Ciphertext> {
        match node {
            Node::Leaf { terms, c0 } => self.leaf(terms, *c0, powers, level, scale),
            Node::Split {
                m,
                q,
                r,
                r_constant,
            } => {
                if *m == 1 {
                    // Two parts summed (a scalar term of a power of two beside a split remainder).
                    let r = r
                        .as_deref()
                        .ok_or_else(|| internal("empty remainder".into()))?;
                    let (a, b) = rayon::join(
                        || self.execute(q, powers, level, scale),
                        || self.execute(r, powers, level, scale),
                    );
                    return self.add_exact(&a?, &b?, scale);
                }
                let pm = powers[*m]
                    .as_ref()
                    .ok_or_else(|| internal(format!("power {m} missing")))?;
                let q_prime = self.context().q_moduli()[level] as f64;
                let q_scale = scale * q_prime / pm.scale();
                let (product, remainder) = rayon::join(
                    || -> Result<Ciphertext> {
                        let qc = self.execute(q, powers, level + 1, q_scale)?;
                        self.multiply_rescale(&qc, pm)
                    },
                    || r.as_deref().map(|r| self.execute(r, powers, level, scale)),
                );
                let mut product = product?;
                product.scale = scale;
                match remainder {
                    Some(r) => self.add_exact(&product, &r?, scale),
                    None if *r_constant != 0.0 => self.add_real(&product, *r_constant),
                    None => Ok(product),
                }
            }
        }
    }

    /// `a + b` for two ciphertexts evaluated towards the same `(level, scale)`.
    fn add_exact(&self, a: &Ciphertext, b: &Ciphertext, scale: f64) -> Result<Ciphertext> {
        let mut out = self.add(a, b)?;
        out.scale = scale;
        Ok(out)
    }

    /// `c0 + sum c_i P_i` at `(level, scale)`: each `P_i` (at level `>= level + 1`) times `c_i` encoded at
    /// `scale q_level / scale(P_i)`, summed at level `level + 1`, rescaled once.
    fn leaf(
        &self,
        terms: &[(usize, f64)],
        c0: f64,
        powers: &[Option<Ciphertext>],
        level: usize,
        scale: f64,
    ) -> Result<Ciphertext> {
        let top = level + 1;
        let q = self.context().q_moduli()[level] as f64;
        let sum_scale = scale * q;
        self.check_product_scale(top, sum_scale, OP)?;
        let basis = self.context().basis(top)?;
        let x = powers[1]
            .as_ref()
            .ok_or_else(|| internal("the input is missing".into()))?;
        let mut scaled: Vec<(&Ciphertext, Vec<u64>)> = Vec::with_capacity(terms.len());
        for &(i, c) in terms {
            let p = powers[i]
                .as_ref()
                .ok_or_else(|| internal(format!("power {i} missing")))?;
            if p.level() < top || p.part_count() != 2 {
                return Err(internal(format!(
                    "power {i} at level {} with {} parts cannot serve a leaf at level {top}",
                    p.level(),
                    p.part_count()
                )));
            }
            let k = (c * sum_scale / p.scale()).round();
            if k != 0.0 {
                scaled.push((
                    p,
                    basis.moduli().iter().map(|m| f64_residue(k, m)).collect(),
                ));
            }
        }
        // Every coefficient rounded to zero at this scale: the leaf is the constant alone.
        let mut parts = if scaled.is_empty() {
            vec![Poly::zero(basis), Poly::zero(basis)]
        } else {
            (0..2)
                .map(|part| {
                    let terms: Vec<(&Poly<Ntt>, &[u64])> = scaled
                        .iter()
                        .map(|(p, r)| (&p.inner.parts[part], &r[..]))
                        .collect();
                    Poly::linear_combination(basis, &terms)
                })
                .collect::<rnsfhe_ring::Result<Vec<_>>>()?
        };
        if c0 != 0.0 {
            let k = self.constant_poly(c0.into(), sum_scale, top, OP)?;
            parts[0].add_assign(&k)?;
        }
        let sum = self.wrap(RlweCiphertext { parts }, sum_scale, x.slots());
        let mut out = self.rescale(&sum)?;
        out.scale = scale;
        Ok(out)
    }
}

fn internal(reason: String) -> Error {
    Error::InvalidArgument {
        operation: "polynomial evaluation (internal schedule error, please report)",
        reason,
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn depths_and_multiplication_counts() {
        for (d, depth, mults) in [
            (1, 1, 0),
            (2, 2, 1),
            (3, 2, 2),
            (7, 3, 5),
            (15, 4, 8),
            (255, 8, 36),
        ] {
            let p = Polynomial::power(vec![0.5; d + 1]).unwrap();
            assert_eq!(p.depth(), depth, "degree {d}");
            assert_eq!(p.multiplications(), mults, "degree {d}");
            let c = Polynomial::chebyshev(vec![0.5; d + 1], -1.0, 1.0).unwrap();
            assert_eq!(c.depth(), depth, "degree {d}");
        }
        // Odd polynomials (only odd baby steps): within 10% of sqrt(2d) + log2(d); general ones within
        // 2 sqrt(d) + log2(d) (measured: degree 255, 32 and 36; degree 1023, 59 and 70).
        for d in [31, 63, 127, 255, 511, 1023] {
            let log = (d as f64).log2();
            let odd: Vec<f64> = (0..=d).map(|i| (i % 2) as f64).collect();
            let m = Polynomial::power(odd).unwrap().multiplications() as f64;
            let bound = (2.0 * d as f64).sqrt() + log;
            assert!(m <= 1.1 * bound, "odd degree {d}: {m} > 1.1 ({bound:.1})");
            let m = Polynomial::power(vec![1.0; d + 1])
                .unwrap()
                .multiplications() as f64;
            let bound = 2.0 * (d as f64).sqrt() + log;
            assert!(m <= bound, "degree {d}: {m} > {bound:.1}");
        }
    }

    #[test]
    fn schedule_respects_the_depth() {
        // Every leaf term uses a power with a level to spare; every split's P_m is deep enough.
        fn check(node: &Node, budget: usize) {
            match node {
                Node::Leaf { terms, .. } => {
                    for &(i, _) in terms {
                        assert!(ceil_log2(i) < budget, "P_{i} with budget {budget}");
                    }
                }
                Node::Split { m, q, r, .. } => {
                    if *m > 1 {
                        assert!(ceil_log2(*m) < budget);
                        check(q, budget - 1);
                    } else {
                        check(q, budget);
                    }
                    if let Some(r) = r {
                        check(r, budget);
                    }
                }
            }
        }
        for d in 1..300 {
            for chebyshev in [false, true] {
                let coeffs: Vec<f64> = (0..=d).map(|i| 1.0 / (i + 1) as f64).collect();
                let p = if chebyshev {
                    Polynomial::chebyshev(coeffs, -1.0, 1.0).unwrap()
                } else {
                    Polynomial::power(coeffs).unwrap()
                };
                let s = Schedule::new(&p);
                check(&s.root, ceil_log2(d + 1));
            }
        }
    }

    #[test]
    fn schedule_reconstructs_the_polynomial() {
        // Evaluate the plan in plaintext (powers computed as numbers): it must equal p(x).
        fn run(node: &Node, pw: &[f64]) -> f64 {
            match node {
                Node::Leaf { terms, c0 } => c0 + terms.iter().map(|&(i, c)| c * pw[i]).sum::<f64>(),
                Node::Split {
                    m,
                    q,
                    r,
                    r_constant,
                } => {
                    let qv = run(q, pw);
                    let rv = r.as_deref().map_or(*r_constant, |r| run(r, pw));
                    if *m == 1 {
                        qv + rv
                    } else {
                        qv * pw[*m] + rv
                    }
                }
            }
        }
        for d in [1, 2, 3, 5, 7, 8, 15, 16, 31, 33, 100, 255] {
            for chebyshev in [false, true] {
                let coeffs: Vec<f64> = (0..=d)
                    .map(|i| {
                        if i % 3 == 1 {
                            0.0
                        } else {
                            1.0 / (i + 2) as f64
                        }
                    })
                    .chain(std::iter::once(0.75))
                    .collect();
                let p = if chebyshev {
                    Polynomial::chebyshev(coeffs, -1.0, 1.0).unwrap()
                } else {
                    Polynomial::power(coeffs).unwrap()
                };
                let s = Schedule::new(&p);
                for x in [-0.9, -0.3, 0.0, 0.4, 0.99] {
                    let n = s.needed.len();
                    let pw: Vec<f64> = (0..n)
                        .map(|i| {
                            if chebyshev {
                                (i as f64 * f64::acos(x)).cos()
                            } else {
                                x.powi(i as i32)
                            }
                        })
                        .collect();
                    let got = run(&s.root, &pw);
                    let want = p.evaluate(x);
                    assert!(
                        (got - want).abs() < 1e-9 * (1.0 + want.abs()),
                        "degree {d}, chebyshev {chebyshev}, x {x}: {got} vs {want}"
                    );
                }
            }
        }
    }

    #[test]
    fn bad_polynomials() {
        assert!(matches!(
            Polynomial::power(vec![]),
            Err(Error::InvalidDegree { .. })
        ));
        assert!(matches!(
            Polynomial::power(vec![1.0, 0.0]),
            Err(Error::InvalidDegree { degree: 0, .. })
        ));
        assert!(matches!(
            Polynomial::power(vec![1.0, f64::NAN]),
            Err(Error::InvalidArgument { .. })
        ));
        assert!(matches!(
            Polynomial::chebyshev(vec![1.0, 1.0], 1.0, 1.0),
            Err(Error::InvalidInterval { .. })
        ));
        assert!(matches!(
            Polynomial::chebyshev(vec![1.0, 1.0], 2.0, -1.0),
            Err(Error::InvalidInterval { .. })
        ));
        assert!(matches!(
            Polynomial::power(vec![1.0; MAX_DEGREE + 2]),
            Err(Error::InvalidDegree { .. })
        ));
    }

    #[test]
    fn change_of_variable_depth() {
        let c = vec![0.0, 0.0, 0.0, 1.0];
        assert_eq!(
            Polynomial::chebyshev(c.clone(), -1.0, 1.0).unwrap().depth(),
            2
        );
        assert_eq!(
            Polynomial::chebyshev(c.clone(), 0.0, 2.0).unwrap().depth(),
            2
        );
        assert_eq!(
            Polynomial::chebyshev(c.clone(), -0.5, 0.5).unwrap().depth(),
            2
        );
        assert_eq!(Polynomial::chebyshev(c, -8.0, 8.0).unwrap().depth(), 3);
    }
}
