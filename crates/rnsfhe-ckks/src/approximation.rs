//! Choosing an approximation of the sigmoid, `exp` and `1/x`: the method, its interval and degree, with
//! the defaults the Python bindings document, so that Rust callers get the same functions from the same
//! arguments ([`Evaluator::sigmoid`], [`Evaluator::exp`], [`Evaluator::inverse_approx`]).
//!
//! The building blocks are those of [`crate::functions`] (RNS-CKKS Section 5.2, Table 2): Taylor
//! polynomials at 0, Cheon-Kim-Kim-Song's Algorithm 2 for `1/x`, the least-squares sigmoids of encrypted
//! logistic regression, and Chebyshev interpolation on an interval ([`ChebyshevSeries`]). Every
//! evaluation checks the levels first ([`Evaluator::evaluate_polynomial_for`]): a lack of them is an
//! [`Error::PolynomialTooDeep`] naming the levels needed and available.
//!
//! | function | default | error on the default interval | levels |
//! |---|---|---|---|
//! | sigmoid | Chebyshev, degree [`SIGMOID_DEGREE`] on [`SIGMOID_INTERVAL`] | `3e-6` (18 bits) | 6 |
//! | `exp` | Chebyshev, degree [`EXP_DEGREE`] on [`EXP_INTERVAL`] | `2e-7` (22 bits) | 3 |
//! | `1/x` | Algorithm 2 with [`INVERSE_ITERATIONS`] iterations, inputs in `(0, 2)` | `|1 - x|^16` relative | 4 |

use std::str::FromStr;

use crate::chebyshev::ChebyshevSeries;
use crate::error::{Error, Result};
use crate::evaluator::Evaluator;
use crate::functions::{
    exp_taylor_polynomial, inverse_polynomial, sigmoid, sigmoid_least_squares,
    sigmoid_taylor_polynomial,
};
use crate::plaintext::Ciphertext;
use crate::polynomial::Polynomial;

/// Default interval of the Chebyshev sigmoid: 18 bits on `[-8, 8]` at degree [`SIGMOID_DEGREE`].
pub const SIGMOID_INTERVAL: (f64, f64) = (-8.0, 8.0);
/// Default degree of the Chebyshev sigmoid (6 levels on [`SIGMOID_INTERVAL`], one of them for its map
/// onto `[-1, 1]`).
pub const SIGMOID_DEGREE: usize = 31;
/// Default degree of the Taylor methods (RNS-CKKS Table 2: degree 7, 3 levels).
pub const TAYLOR_DEGREE: usize = 7;
/// Default degree of the least-squares sigmoid (Kim et al. 2018: degree 3, 2 levels).
pub const LEAST_SQUARES_DEGREE: usize = 3;
/// Default interval of the Chebyshev `exp`: 22 bits on `[-1, 1]` at degree [`EXP_DEGREE`].
pub const EXP_INTERVAL: (f64, f64) = (-1.0, 1.0);
/// Default degree of the Chebyshev `exp` (3 levels on an interval of width 2).
pub const EXP_DEGREE: usize = 7;
/// Default iterations of Algorithm 2 for `1/x` (RNS-CKKS Table 2: degree 15, 4 levels).
pub const INVERSE_ITERATIONS: usize = 3;
/// Default degree of the Chebyshev `1/x`.
pub const INVERSE_DEGREE: usize = 31;

/// How [`Evaluator::sigmoid`] approximates `1 / (1 + e^-x)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum SigmoidMethod {
    /// Chebyshev interpolation on an interval (default [`SIGMOID_INTERVAL`], degree [`SIGMOID_DEGREE`]);
    /// slots outside the interval get meaningless values.
    Chebyshev,
    /// The Taylor polynomial at 0 (RNS-CKKS Table 2, default degree [`TAYLOR_DEGREE`]); accurate near 0
    /// only (the series converges for `|x| < pi`).
    Taylor,
    /// The least-squares fit on `[-8, 8]` of encrypted logistic regression (Kim et al. 2018), degree 3
    /// (default), 5 or 7.
    LeastSquares,
}

/// How [`Evaluator::exp`] approximates `e^x`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ExpMethod {
    /// Chebyshev interpolation on an interval (default [`EXP_INTERVAL`], degree [`EXP_DEGREE`]).
    Chebyshev,
    /// The Taylor polynomial at 0 (RNS-CKKS Table 2, default degree [`TAYLOR_DEGREE`]).
    Taylor,
}

impl SigmoidMethod {
    /// The name [`FromStr`] reads: `"chebyshev"`, `"taylor"` or `"least_squares"`.
    pub fn name(self) -> &'static str {
        match self {
            Self::Chebyshev => "chebyshev",
            Self::Taylor => "taylor",
            Self::LeastSquares => "least_squares",
        }
    }
}

impl FromStr for SigmoidMethod {
    type Err = Error;

    /// Reads [`SigmoidMethod::name`]; [`Error::UnknownMethod`] for another name.
    fn from_str(name: &str) -> Result<Self> {
        match name {
            "chebyshev" => Ok(Self::Chebyshev),
            "taylor" => Ok(Self::Taylor),
            "least_squares" => Ok(Self::LeastSquares),
            other => Err(Error::UnknownMethod {
                function: "sigmoid",
                name: other.to_string(),
                expected: "\"chebyshev\", \"taylor\" or \"least_squares\"",
            }),
        }
    }
}

impl ExpMethod {
    /// The name [`FromStr`] reads: `"chebyshev"` or `"taylor"`.
    pub fn name(self) -> &'static str {
        match self {
            Self::Chebyshev => "chebyshev",
            Self::Taylor => "taylor",
        }
    }
}

impl FromStr for ExpMethod {
    type Err = Error;

    /// Reads [`ExpMethod::name`]; [`Error::UnknownMethod`] for another name.
    fn from_str(name: &str) -> Result<Self> {
        match name {
            "chebyshev" => Ok(Self::Chebyshev),
            "taylor" => Ok(Self::Taylor),
            other => Err(Error::UnknownMethod {
                function: "exp",
                name: other.to_string(),
                expected: "\"chebyshev\" or \"taylor\"",
            }),
        }
    }
}

/// The Chebyshev interpolant of `f` on `interval` of `degree`, refusing a constant one.
fn interpolant(f: impl Fn(f64) -> f64, (a, b): (f64, f64), degree: usize) -> Result<Polynomial> {
    Polynomial::nonconstant(ChebyshevSeries::interpolate(f, a, b, degree)?)
}

/// [`Error::InvalidArgument`] unless `interval` is `None`: a method with a fixed polynomial has no
/// interval to choose.
fn no_interval(
    interval: Option<(f64, f64)>,
    function: &'static str,
    method: &'static str,
    why: &str,
) -> Result<()> {
    match interval {
        None => Ok(()),
        Some((a, b)) => Err(Error::InvalidArgument {
            operation: function,
            reason: format!(
                "interval=({a}, {b}) applies to method=\"chebyshev\" only: method={method:?} {why}"
            ),
        }),
    }
}

/// The polynomial [`Evaluator::sigmoid`] evaluates with these arguments (`None` takes the method's
/// default; the interval applies to [`SigmoidMethod::Chebyshev`] only).
///
/// # Errors
///
/// [`Error::InvalidArgument`] for an interval with another method or a least-squares degree other than
/// 3, 5, 7; as [`ChebyshevSeries::interpolate`] ([`Error::InvalidInterval`], [`Error::InvalidDegree`]).
pub fn sigmoid_polynomial(
    method: SigmoidMethod,
    interval: Option<(f64, f64)>,
    degree: Option<usize>,
) -> Result<Polynomial> {
    match method {
        SigmoidMethod::Chebyshev => interpolant(
            sigmoid,
            interval.unwrap_or(SIGMOID_INTERVAL),
            degree.unwrap_or(SIGMOID_DEGREE),
        ),
        SigmoidMethod::Taylor => {
            no_interval(
                interval,
                "sigmoid",
                method.name(),
                "is the Taylor polynomial at 0",
            )?;
            sigmoid_taylor_polynomial(degree.unwrap_or(TAYLOR_DEGREE))
        }
        SigmoidMethod::LeastSquares => {
            no_interval(
                interval,
                "sigmoid",
                method.name(),
                "is the least-squares fit on [-8, 8]",
            )?;
            sigmoid_least_squares(degree.unwrap_or(LEAST_SQUARES_DEGREE))
        }
    }
}

/// The polynomial [`Evaluator::exp`] evaluates with these arguments (`None` takes the method's default;
/// the interval applies to [`ExpMethod::Chebyshev`] only).
///
/// # Errors
///
/// As [`sigmoid_polynomial`].
pub fn exp_polynomial(
    method: ExpMethod,
    interval: Option<(f64, f64)>,
    degree: Option<usize>,
) -> Result<Polynomial> {
    match method {
        ExpMethod::Chebyshev => interpolant(
            f64::exp,
            interval.unwrap_or(EXP_INTERVAL),
            degree.unwrap_or(EXP_DEGREE),
        ),
        ExpMethod::Taylor => {
            no_interval(
                interval,
                "exp",
                method.name(),
                "is the Taylor polynomial at 0",
            )?;
            exp_taylor_polynomial(degree.unwrap_or(TAYLOR_DEGREE))
        }
    }
}

/// How [`Evaluator::inverse_approx`] computes `1/x`: the method its arguments select.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum InverseMethod {
    /// Cheon-Kim-Kim-Song's Algorithm 2 ([`Evaluator::inverse`]) with this many iterations, for inputs in
    /// `(0, 2)`.
    Iterative(usize),
    /// A Chebyshev interpolant of `1/x` on an interval not containing 0.
    Chebyshev(Polynomial),
}

impl InverseMethod {
    /// The method of these arguments: Chebyshev interpolation of `degree` (default [`INVERSE_DEGREE`])
    /// with an interval, Algorithm 2 with `iterations` (default [`INVERSE_ITERATIONS`]) without.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] for a degree without an interval, iterations with one, or an interval
    /// containing 0 (the pole); as [`ChebyshevSeries::interpolate`].
    pub fn new(
        iterations: Option<usize>,
        interval: Option<(f64, f64)>,
        degree: Option<usize>,
    ) -> Result<Self> {
        const OP: &str = "inverse";
        match (interval, iterations) {
            (None, _) => match degree {
                Some(d) => Err(Error::InvalidArgument {
                    operation: OP,
                    reason: format!(
                        "degree={d} applies to the Chebyshev inverse: pass interval=(a, b) too (without \
                         an interval, inverse() runs CKKS Algorithm 2 for inputs in (0, 2))"
                    ),
                }),
                None => Ok(Self::Iterative(iterations.unwrap_or(INVERSE_ITERATIONS))),
            },
            (Some((a, b)), Some(r)) => Err(Error::InvalidArgument {
                operation: OP,
                reason: format!(
                    "iterations={r} applies to CKKS Algorithm 2 (no interval); with interval=({a}, {b}) \
                     the inverse is a Chebyshev interpolant: give degree= instead"
                ),
            }),
            (Some((a, b)), None) => {
                if a < b && a <= 0.0 && b >= 0.0 {
                    return Err(Error::InvalidArgument {
                        operation: OP,
                        reason: format!(
                            "the interval [{a}, {b}] contains 0, the pole of 1/x: choose an interval on \
                             one side of 0 (scale the input if needed)"
                        ),
                    });
                }
                let p = interpolant(|x| 1.0 / x, (a, b), degree.unwrap_or(INVERSE_DEGREE))?;
                Ok(Self::Chebyshev(p))
            }
        }
    }

    /// The polynomial this method computes (Algorithm 2 with `r` iterations is
    /// [`inverse_polynomial`]`(r)`, of degree `2^(r+1) - 1`).
    ///
    /// # Errors
    ///
    /// As [`inverse_polynomial`] for Algorithm 2.
    pub fn polynomial(self) -> Result<Polynomial> {
        match self {
            Self::Iterative(r) => inverse_polynomial(r),
            Self::Chebyshev(p) => Ok(p),
        }
    }
}

impl Evaluator {
    /// The sigmoid of every slot by the polynomial [`sigmoid_polynomial`] gives for these arguments
    /// (`None`: the method's default), its levels checked first.
    ///
    /// # Errors
    ///
    /// [`Error::ContextMismatch`]; as [`sigmoid_polynomial`]; [`Error::PolynomialTooDeep`]; as
    /// [`Evaluator::evaluate_polynomial`].
    pub fn sigmoid(
        &self,
        ct: &Ciphertext,
        method: SigmoidMethod,
        interval: Option<(f64, f64)>,
        degree: Option<usize>,
    ) -> Result<Ciphertext> {
        self.check_ct(ct)?;
        let p = sigmoid_polynomial(method, interval, degree)?;
        self.evaluate_polynomial_for(ct, &p, "sigmoid")
    }

    /// `e^x` of every slot by the polynomial [`exp_polynomial`] gives for these arguments (`None`: the
    /// method's default), its levels checked first.
    ///
    /// # Errors
    ///
    /// As [`Evaluator::sigmoid`], with [`exp_polynomial`].
    pub fn exp(
        &self,
        ct: &Ciphertext,
        method: ExpMethod,
        interval: Option<(f64, f64)>,
        degree: Option<usize>,
    ) -> Result<Ciphertext> {
        self.check_ct(ct)?;
        let p = exp_polynomial(method, interval, degree)?;
        self.evaluate_polynomial_for(ct, &p, "exp")
    }

    /// `1/x` of every slot by the method [`InverseMethod::new`] selects from these arguments: Algorithm 2
    /// ([`Evaluator::inverse`]) without an interval, a Chebyshev interpolant with one.
    ///
    /// # Errors
    ///
    /// [`Error::ContextMismatch`]; as [`InverseMethod::new`]; as [`Evaluator::inverse`]; for the
    /// Chebyshev interpolant, [`Error::PolynomialTooDeep`] and as [`Evaluator::evaluate_polynomial`].
    pub fn inverse_approx(
        &self,
        ct: &Ciphertext,
        iterations: Option<usize>,
        interval: Option<(f64, f64)>,
        degree: Option<usize>,
    ) -> Result<Ciphertext> {
        self.check_ct(ct)?;
        match InverseMethod::new(iterations, interval, degree)? {
            InverseMethod::Iterative(r) => self.inverse(ct, r),
            InverseMethod::Chebyshev(p) => {
                self.evaluate_polynomial_for(ct, &p, "inverse (Chebyshev)")
            }
        }
    }
}
