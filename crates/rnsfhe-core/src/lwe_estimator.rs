//! A built-in estimate of the security of LWE / RLWE parameters against lattice reduction: the primal
//! uSVP attack and the dual (distinguishing) attack, both with the small-secret rescaling, costed in
//! the **core-SVP** model (`0.292 beta` bits, classical sieving) and in the **cost model of the
//! Homomorphic Encryption Standard** (`0.292 beta + 16.4 + log2(8 d)`).
//!
//! The estimate is pure `f64` arithmetic (some ten thousand evaluations of closed formulas, about a
//! millisecond per parameter set; the 17 presets of `rnsfhe params` take well under a second with their
//! contexts), so the command line computes it for every preset.
//!
//! # Models and sources
//!
//! * **Root-Hermite factor** of BKZ with block size `beta` (Chen's thesis, 2013; the formula of every
//!   lattice estimator):
//!   `delta(beta) = ((pi beta)^(1/beta) beta / (2 pi e))^(1 / (2 (beta - 1)))`, used for `beta >= 40`
//!   ([`MIN_BLOCK_SIZE`]; below that the asymptotic formula is meaningless and the cost is floored there).
//! * **Primal uSVP** (Alkim-Ducas-Pöppelmann-Schwabe, "NewHope", 2016, Section 6.3), with the
//!   Bai-Galbraith embedding (2014) and the small-secret rescaling of the lattice estimator: from `m`
//!   samples `b = A s + e mod q`, the lattice
//!   `{(nu x, y, t) : A x + y = t b mod q}` of dimension `d = m + n + 1` and volume `q^m nu^n` contains
//!   `(nu s, e, 1)`, whose coordinates all have standard deviation `sigma` when
//!   `nu = sigma / sigma_s` (`sigma_s` the standard deviation of a secret coefficient). BKZ-`beta`
//!   recovers it when `sqrt(beta) sigma <= delta(beta)^(2 beta - d) Vol^(1/d)`. For each `m` the smallest
//!   such `beta` is found by bisection (the condition is monotone in `beta`); `m` is optimized over
//!   `1 ..= samples`.
//! * **Dual attack** (Micciancio-Regev 2009, with the secret rescaling of Albrecht, "On dual lattice
//!   attacks against small-secret LWE", Eurocrypt 2017): short vectors `(w, c u)` of the lattice
//!   `{(w, c u) : u = A^T w mod q}` (dimension `d = m + n`, volume `(c q)^n`, `c = sigma_s / sigma`) have
//!   length `l = delta^d (c q)^(n/d)` after BKZ-`beta`, and `<w, b> = <u, s> + <w, e>` is then a
//!   Gaussian of standard deviation `l sigma` modulo `q`, distinguished from uniform with advantage
//!   `eps = exp(-pi (l sigma sqrt(2 pi) / q)^2)`. The attack repeats `1 / eps^2` times:
//!   `log2_repetitions = 4 pi^2 (l sigma / q)^2 / ln 2`, added to the reduction cost. It is optimized over
//!   `beta` and `m <= samples`. Each repetition is charged a full reduction (no amortization of the many
//!   short vectors one sieve produces), so the dual estimate is an upper bound on that attack's cost; with
//!   amortization it comes within a bit of the primal one at the HE Standard's points.
//! * **Cost.** [`AttackCost::core_svp_bits`] is `0.292 beta` (Becker-Ducas-Gama-Laarhoven sieving, one SVP
//!   call; ADPS16's "core-SVP") plus the repetitions. [`AttackCost::he_standard_bits`] is the
//!   `BKZ.sieve` model with which the HE Standard's tables were computed (the 2018 lattice estimator,
//!   Albrecht-Player-Scott): `2^(0.292 beta + 16.4)` operations per SVP call and `8 d` SVP calls per BKZ
//!   tour, i.e. `0.292 beta + 16.4 + log2(8 d)`. The two differ by 30-36 bits for HE parameters.
//!
//! # Which number to compare with 128 bits
//!
//! The HE Standard's table is reproduced by the HE-Standard model, **not** by core-SVP alone: at the
//! table's 128-bit points core-SVP gives 93-101 bits, at the 192-bit points 157-166, at 256 221-235 (see
//! the tests). A "128-bit" claim made by the standard (and by every library that uses its table) is
//! therefore a claim in the HE-Standard model; [`LweEstimate::security_bits`] is that number, and
//! [`LweEstimate::core_svp_bits`] is shown beside it as the more conservative figure.
//!
//! Measured against the HE Standard Table 1 (uniform ternary secret, `sigma = 3.2`, `m <= n` samples as
//! for RLWE): at every point `(N, log q, level)` with `N = 2^10 .. 2^15`, the level lies between our
//! estimate at `log q + 1` and at `log q` (the table lists the largest `log q` meeting the level) at 17 of
//! the 18 points, and misses it by 0.23 bits at the last (`N = 2^12`, 128-bit, `log q = 109`: 127.8).
//! Our estimate at the table's own `log q` is `level - 0.2` to `level + 9.3` bits (the large excesses
//! are at `N = 2^10`, where one bit of `q` moves the estimate by 5-18 bits). The 128-bit entries for
//! `N = 2^16, 2^17` (1747, 3523, from OpenFHE) come out at 130.4 and 130.2 bits, and the extrapolated
//! 192/256-bit entries of [`crate::security`] at 195.2 / 260.0 (`2^16`) and 194.5 / 258.7 (`2^17`):
//! conservative. See the tests `reproduces_the_he_standard_table` and `beyond_the_standard_table`.
//!
//! # PEGASUS parameters
//!
//! PEGASUS Table IV (all secrets of Hamming weight 64) claims "at least 119-bit" security after the
//! Albrecht-Player-Scott estimator. Here (HE Standard model / core-SVP): the LWE key-switching set
//! `n = 2^10, q ~ 2^45, sigma = 2^13` gives **97.7 / 67.5 bits** (103.6 / 73.3 with a uniform ternary
//! secret), below the claim even without hybrid attacks; the RGSW set `n = 2^12, q' q_0 ~ 2^105,
//! sigma = 2^10` gives 141.5 / 109.2 and the CKKS set `N = 2^16, log Q = 795, sigma = 3.19` 314.9 / 278.6.
//! At `q = 2^45, sigma = 2^13`, 128 bits in the HE Standard model need `n` of about 1344 (`h = 64`) or
//! 1280 (uniform ternary). See the test `pegasus_table_iv`.
//!
//! # Samples
//!
//! An RLWE sample in degree `N` gives `N` LWE samples in dimension `N`; with one public key (or one
//! ciphertext) the attacker has `m = N` samples, and [`LweParams::rlwe`] uses `samples = n`, which is what
//! reproduces the HE Standard. The primal optimum is below `n` for HE parameters (about `0.9 n`), so the
//! cap binds only for the dual attack.
//!
//! # Not modelled
//!
//! * **Hybrid and guessing attacks on sparse secrets** (Howgrave-Graham's hybrid, Son-Cheon's
//!   sparse-secret attacks, dropping columns of `A` where the secret is zero): for a fixed Hamming weight
//!   `h` the secret is only rescaled (standard deviation `sqrt(h / n)`), so **the estimate for sparse
//!   secrets is optimistic** and can exceed the real cost by tens of bits (the RNS-CKKS presets with
//!   `h = 64`, which their paper puts at 80 bits, come out well above 80 here).
//! * The decoding (BDD) attack, Arora-Ge and BKW (irrelevant at these error sizes), quantum speed-ups,
//!   the MATZOV (2022) improvements of the dual attack and the refined uSVP success condition of
//!   Dachman-Soled et al. (both lower the cost by a few bits).
//! * The ring structure (no known attack uses it for these parameters).

use crate::context::SecretDistribution;

/// Exponent of classical lattice sieving: one SVP call in dimension `beta` costs `2^(0.292 beta)`
/// (Becker-Ducas-Gama-Laarhoven 2016).
pub const SIEVE_EXPONENT: f64 = 0.292;

/// The constant of the HE Standard's `BKZ.sieve` cost model: `2^(0.292 beta + 16.4)` operations per SVP
/// call (the 2018 lattice estimator).
pub const HE_STANDARD_SIEVE_CONSTANT: f64 = 16.4;

/// SVP calls per dimension in the HE Standard's `BKZ.sieve` model: `8 d` calls for a lattice of dimension
/// `d`.
pub const HE_STANDARD_SVP_CALLS_PER_DIMENSION: f64 = 8.0;

/// The smallest block size the estimate uses: the root-Hermite formula is an asymptotic one and is not
/// meaningful below about 40 (BKZ-40 is cheap anyway: 11.7 bits in core-SVP).
pub const MIN_BLOCK_SIZE: u32 = 40;

/// Largest LWE dimension accepted (keeps the search bounded; RLWE degrees stop at `2^17` here).
pub const MAX_DIMENSION: usize = 1 << 20;

/// Points per pass of the coarse-to-fine integer minimization ([`minimize_int`]).
const GRID_POINTS: usize = 32;

/// Invalid input of the estimator.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum LweEstimatorError {
    /// A parameter outside the range the estimator models.
    #[error("LWE estimator: {what} = {value} is invalid: {reason}")]
    InvalidParameter {
        /// The parameter at fault (`n`, `log_q`, `sigma`, `secret`, `samples`).
        what: &'static str,
        /// Its value.
        value: f64,
        /// The accepted range, and what to do.
        reason: String,
    },
}

/// The distribution of the secret coefficients, as far as the attacks see it (through its standard
/// deviation; the mean is zero for all three).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum LweSecret {
    /// Uniform ternary: each coefficient in `{-1, 0, 1}` with probability 1/3 (standard deviation
    /// `sqrt(2/3)`).
    Ternary,
    /// Ternary with exactly `h` nonzero coefficients among `n` (standard deviation `sqrt(h / n)`); the
    /// estimate is optimistic (see the module documentation: no hybrid attack).
    HammingWeight(usize),
    /// Any centred distribution of this standard deviation (for example `sigma` itself for a secret drawn
    /// like the error, the "normal form" of LWE).
    StdDev(f64),
}

impl From<SecretDistribution> for LweSecret {
    fn from(s: SecretDistribution) -> Self {
        match s {
            SecretDistribution::Ternary => LweSecret::Ternary,
            SecretDistribution::HammingWeight(h) => LweSecret::HammingWeight(h),
        }
    }
}

impl std::fmt::Display for LweSecret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LweSecret::Ternary => f.write_str("uniform ternary"),
            LweSecret::HammingWeight(h) => write!(f, "ternary of Hamming weight {h}"),
            LweSecret::StdDev(s) => write!(f, "standard deviation {s}"),
        }
    }
}

impl LweSecret {
    /// Standard deviation of one secret coefficient in dimension `n`.
    fn std_dev(self, n: usize) -> Result<f64, LweEstimatorError> {
        match self {
            LweSecret::Ternary => Ok((2.0f64 / 3.0).sqrt()),
            LweSecret::HammingWeight(h) if (1..=n).contains(&h) => Ok((h as f64 / n as f64).sqrt()),
            LweSecret::HammingWeight(h) => Err(LweEstimatorError::InvalidParameter {
                what: "secret Hamming weight h",
                value: h as f64,
                reason: format!("h must be in [1, n = {n}]"),
            }),
            LweSecret::StdDev(s) if s.is_finite() && s > 0.0 => Ok(s),
            LweSecret::StdDev(s) => Err(LweEstimatorError::InvalidParameter {
                what: "secret standard deviation",
                value: s,
                reason: "it must be finite and positive".into(),
            }),
        }
    }
}

/// The LWE parameters the estimator takes: dimension, modulus (as `log2 q`, so that RNS products of many
/// primes fit), error and secret distributions, and the number of samples the attacker has.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LweParams {
    /// The LWE dimension `n` (the ring degree `N` for RLWE).
    pub n: usize,
    /// `log2 q` (for RLWE keys with special primes: `log2(QP)`).
    pub log_q: f64,
    /// Standard deviation of the (discrete Gaussian) error.
    pub sigma: f64,
    /// The secret distribution.
    pub secret: LweSecret,
    /// Largest number of samples `m` the attacks may use.
    pub samples: usize,
}

impl LweParams {
    /// RLWE parameters of degree `n`: `samples = n` (one RLWE sample; see the module documentation).
    pub fn rlwe(n: usize, log_q: f64, sigma: f64, secret: impl Into<LweSecret>) -> Self {
        Self {
            n,
            log_q,
            sigma,
            secret: secret.into(),
            samples: n,
        }
    }

    /// Checks the ranges and returns the secret's standard deviation.
    fn validate(&self) -> Result<f64, LweEstimatorError> {
        let bad = |what, value: f64, reason: String| {
            Err(LweEstimatorError::InvalidParameter {
                what,
                value,
                reason,
            })
        };
        if !(1..=MAX_DIMENSION).contains(&self.n) {
            return bad(
                "n",
                self.n as f64,
                format!("the dimension must be in [1, {MAX_DIMENSION}]"),
            );
        }
        if !(self.log_q.is_finite() && self.log_q > 0.0 && self.log_q <= 1e5) {
            return bad("log_q", self.log_q, "log2 q must be in (0, 100000]".into());
        }
        if !(self.sigma.is_finite() && self.sigma > 0.0) {
            return bad(
                "sigma",
                self.sigma,
                "the error standard deviation must be finite and positive".into(),
            );
        }
        if self.samples == 0 || self.samples > MAX_DIMENSION {
            return bad(
                "samples",
                self.samples as f64,
                format!("the number of samples must be in [1, {MAX_DIMENSION}]"),
            );
        }
        self.secret.std_dev(self.n)
    }
}

/// The two attacks of the estimate.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Attack {
    /// Primal uSVP (ADPS16 success condition, Bai-Galbraith embedding).
    PrimalUsvp,
    /// Dual distinguishing attack (with `1 / eps^2` repetitions).
    Dual,
}

impl std::fmt::Display for Attack {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Attack::PrimalUsvp => "primal uSVP",
            Attack::Dual => "dual",
        })
    }
}

/// The optimal configuration of one attack and its cost.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AttackCost {
    /// BKZ block size `beta`.
    pub beta: u32,
    /// Number of LWE samples `m` used.
    pub samples: usize,
    /// Dimension `d` of the reduced lattice (`m + n + 1` primal, `m + n` dual).
    pub dimension: usize,
    /// `log2` of the number of repetitions (0 for the primal attack, `log2(1 / eps^2)` for the dual).
    pub log2_repetitions: f64,
}

impl AttackCost {
    /// Core-SVP cost in bits: `0.292 beta + log2_repetitions`.
    pub fn core_svp_bits(&self) -> f64 {
        SIEVE_EXPONENT * self.beta as f64 + self.log2_repetitions
    }

    /// Cost in bits in the HE Standard's `BKZ.sieve` model:
    /// `0.292 beta + 16.4 + log2(8 d) + log2_repetitions`.
    pub fn he_standard_bits(&self) -> f64 {
        self.core_svp_bits()
            + HE_STANDARD_SIEVE_CONSTANT
            + (HE_STANDARD_SVP_CALLS_PER_DIMENSION * self.dimension as f64).log2()
    }
}

/// The estimate of one parameter set: each attack's optimum (`None` when the attack does not succeed
/// with any block size up to the lattice dimension, i.e. costs more than any finite figure here).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LweEstimate {
    /// The parameters estimated.
    pub params: LweParams,
    /// Standard deviation of a secret coefficient used by the rescaling.
    pub secret_std_dev: f64,
    /// Primal uSVP.
    pub primal: Option<AttackCost>,
    /// Dual attack.
    pub dual: Option<AttackCost>,
}

impl LweEstimate {
    fn bits_of(cost: Option<AttackCost>, model: fn(&AttackCost) -> f64) -> f64 {
        cost.as_ref().map_or(f64::INFINITY, model)
    }

    /// Primal uSVP cost in the HE Standard model (`inf` if the attack never succeeds).
    pub fn primal_bits(&self) -> f64 {
        Self::bits_of(self.primal, AttackCost::he_standard_bits)
    }

    /// Dual cost in the HE Standard model (`inf` if the attack never succeeds).
    pub fn dual_bits(&self) -> f64 {
        Self::bits_of(self.dual, AttackCost::he_standard_bits)
    }

    /// The cheaper attack and its configuration, by the HE Standard model; `None` if neither succeeds.
    pub fn best(&self) -> Option<(Attack, AttackCost)> {
        let p = self.primal.map(|c| (Attack::PrimalUsvp, c));
        let d = self.dual.map(|c| (Attack::Dual, c));
        match (p, d) {
            (Some(p), Some(d)) => Some(if d.1.he_standard_bits() < p.1.he_standard_bits() {
                d
            } else {
                p
            }),
            (p, d) => p.or(d),
        }
    }

    /// Security in bits: the cheaper attack in the HE Standard's `BKZ.sieve` model, the model in which
    /// the standard's 128/192/256-bit table holds (`inf` if no attack succeeds).
    pub fn security_bits(&self) -> f64 {
        self.primal_bits().min(self.dual_bits())
    }

    /// Security in bits in the core-SVP model (`0.292 beta` plus repetitions), the cheaper attack: about
    /// 30-36 bits below [`LweEstimate::security_bits`] for HE parameters.
    pub fn core_svp_bits(&self) -> f64 {
        Self::bits_of(self.primal, AttackCost::core_svp_bits)
            .min(Self::bits_of(self.dual, AttackCost::core_svp_bits))
    }
}

/// `log2 delta(beta)`, the root-Hermite factor of BKZ-`beta` (Chen 2013).
pub fn log2_root_hermite(beta: u32) -> f64 {
    let b = beta.max(2) as f64;
    let pi = std::f64::consts::PI;
    let e = std::f64::consts::E;
    ((pi * b).powf(1.0 / b) * b / (2.0 * pi * e)).log2() / (2.0 * (b - 1.0))
}

/// Minimizes `f` over the integers of `[lo, hi]` on successively finer grids (`GRID_POINTS` points per
/// pass, then the neighbourhood of the best point), for the near-unimodal objectives of the attacks.
/// Returns the argument and value; ties keep the smaller argument.
fn minimize_int(lo: usize, hi: usize, f: impl Fn(usize) -> f64) -> (usize, f64) {
    let (mut lo, mut hi) = (lo.min(hi), hi.max(lo));
    let mut best = (lo, f(lo));
    loop {
        let step = ((hi - lo) / GRID_POINTS).max(1);
        let mut x = lo;
        loop {
            let v = f(x);
            if v < best.1 {
                best = (x, v);
            }
            if x == hi {
                break;
            }
            x = (x + step).min(hi);
        }
        if step == 1 {
            return best;
        }
        lo = best.0.saturating_sub(step).max(lo);
        hi = (best.0 + step).min(hi);
    }
}

/// The smallest block size in `[MIN_BLOCK_SIZE, d]` meeting the ADPS16 condition for `m` samples, or
/// `None`. Logs: `0.5 log2 beta + log2 sigma <= (2 beta - d) log2 delta + log2 Vol / d`.
fn primal_beta(n: usize, m: usize, log_q: f64, log_sigma: f64, log_nu: f64) -> Option<u32> {
    let d = m + n + 1;
    let log_vol = m as f64 * log_q + n as f64 * log_nu;
    let holds = |beta: u32| {
        let b = beta as f64;
        0.5 * b.log2() + log_sigma
            <= (2.0 * b - d as f64) * log2_root_hermite(beta) + log_vol / d as f64
    };
    let top = u32::try_from(d).ok()?;
    if top < MIN_BLOCK_SIZE || !holds(top) {
        return None;
    }
    if holds(MIN_BLOCK_SIZE) {
        return Some(MIN_BLOCK_SIZE);
    }
    // holds(lo) is false, holds(hi) is true: the condition is monotone in beta (module documentation).
    let (mut lo, mut hi) = (MIN_BLOCK_SIZE, top);
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if holds(mid) {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    Some(hi)
}

/// Ties between equal block sizes go to the smaller lattice (cheaper in the HE Standard model); the
/// weight keeps the tie-break below one block size for any dimension up to [`MAX_DIMENSION`].
const DIMENSION_TIE_BREAK: f64 = 1e-7;

fn primal_usvp(p: &LweParams, sigma_s: f64) -> Option<AttackCost> {
    let log_sigma = p.sigma.log2();
    let log_nu = (p.sigma / sigma_s).log2();
    let (m, value) = minimize_int(1, p.samples, |m| {
        primal_beta(p.n, m, p.log_q, log_sigma, log_nu).map_or(f64::INFINITY, |b| {
            b as f64 + DIMENSION_TIE_BREAK * (m + p.n + 1) as f64
        })
    });
    if !value.is_finite() {
        return None;
    }
    let beta = primal_beta(p.n, m, p.log_q, log_sigma, log_nu)?;
    Some(AttackCost {
        beta,
        samples: m,
        dimension: m + p.n + 1,
        log2_repetitions: 0.0,
    })
}

/// `log2(1 / eps^2)` for a dual vector of length `2^log_len` (module documentation).
fn dual_log2_repetitions(log_len: f64, log_sigma: f64, log_q: f64) -> f64 {
    let ratio = (log_len + log_sigma - log_q).exp2(); // l sigma / q
    4.0 * std::f64::consts::PI.powi(2) * ratio * ratio / std::f64::consts::LN_2
}

fn dual_cost_at(p: &LweParams, m: usize, beta: u32, log_c: f64) -> f64 {
    let d = (m + p.n) as f64;
    let log_len = d * log2_root_hermite(beta) + p.n as f64 * (p.log_q + log_c) / d;
    SIEVE_EXPONENT * beta as f64 + dual_log2_repetitions(log_len, p.sigma.log2(), p.log_q)
}

/// The best block size for `m` samples: `(beta, cost)`.
fn dual_best_beta(p: &LweParams, m: usize, log_c: f64) -> Option<(u32, f64)> {
    let d = m + p.n;
    let top = u32::try_from(d).ok()?;
    if top < MIN_BLOCK_SIZE {
        return None;
    }
    let (b, v) = minimize_int(MIN_BLOCK_SIZE as usize, d, |b| {
        dual_cost_at(p, m, b as u32, log_c)
    });
    v.is_finite().then_some((b as u32, v))
}

fn dual(p: &LweParams, sigma_s: f64) -> Option<AttackCost> {
    let log_c = (sigma_s / p.sigma).log2();
    let (m, value) = minimize_int(1, p.samples, |m| {
        dual_best_beta(p, m, log_c).map_or(f64::INFINITY, |(_, v)| v)
    });
    if !value.is_finite() {
        return None;
    }
    let (beta, cost) = dual_best_beta(p, m, log_c)?;
    Some(AttackCost {
        beta,
        samples: m,
        dimension: m + p.n,
        log2_repetitions: cost - SIEVE_EXPONENT * beta as f64,
    })
}

/// Estimates the security of `params` against the primal uSVP and the dual attack (see the module
/// documentation for the models and what they leave out).
///
/// Errors: [`LweEstimatorError::InvalidParameter`] for `n` outside `[1, 2^20]`, a non-positive or
/// non-finite `log_q` or `sigma`, a Hamming weight outside `[1, n]`, a non-positive secret standard
/// deviation, or `samples` outside `[1, 2^20]`.
pub fn estimate_lwe(params: &LweParams) -> Result<LweEstimate, LweEstimatorError> {
    let sigma_s = params.validate()?;
    Ok(LweEstimate {
        params: *params,
        secret_std_dev: sigma_s,
        primal: primal_usvp(params, sigma_s),
        dual: dual(params, sigma_s),
    })
}

/// Estimates RLWE parameters: degree `n`, `log2 q` (for keys with special primes, `log2(QP)`), error
/// standard deviation `sigma` and the secret distribution of `rnsfhe-core`, with `m = n` samples
/// ([`LweParams::rlwe`]).
///
/// Errors: those of [`estimate_lwe`].
pub fn estimate_rlwe(
    n: usize,
    log_q: f64,
    sigma: f64,
    secret: SecretDistribution,
) -> Result<LweEstimate, LweEstimatorError> {
    estimate_lwe(&LweParams::rlwe(n, log_q, sigma, secret))
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use crate::security::{max_log_qp, SecurityLevel};

    fn ternary(log_n: u32, log_q: f64) -> LweEstimate {
        estimate_rlwe(1 << log_n, log_q, 3.2, SecretDistribution::Ternary).unwrap()
    }

    #[test]
    fn root_hermite_factor_matches_known_values() {
        // Chen's formula evaluated independently (Python, double precision); delta(100) ~ 1.0093 is the
        // figure usually quoted for BKZ-100.
        for (beta, delta) in [
            (50, 1.012_065),
            (100, 1.009_259),
            (250, 1.005_457),
            (500, 1.003_404),
        ] {
            let got = log2_root_hermite(beta).exp2();
            assert!((got - delta).abs() < 1e-6, "delta({beta}) = {got}");
        }
        // Stronger reduction, smaller factor.
        assert!((41..2000).all(|b| log2_root_hermite(b) < log2_root_hermite(b - 1)));
    }

    #[test]
    fn more_modulus_less_security_larger_dimension_more() {
        for log_n in [10u32, 12, 14] {
            let bound = max_log_qp(1 << log_n, SecurityLevel::Bits128).unwrap() as f64;
            let mut last = f64::INFINITY;
            for k in 0..8 {
                let bits = ternary(log_n, bound * (0.5 + 0.25 * k as f64)).security_bits();
                assert!(bits < last, "N = 2^{log_n}: {bits} after {last}");
                last = bits;
            }
        }
        for log_q in [200.0, 800.0] {
            let mut last = 0.0;
            for log_n in 13..=17u32 {
                let bits = ternary(log_n, log_q).security_bits();
                assert!(
                    bits > last,
                    "log q = {log_q}, N = 2^{log_n}: {bits} after {last}"
                );
                last = bits;
            }
        }
        // A sparser secret is (in this model, without hybrid attacks) easier: smaller rescaled secret.
        let n = 1 << 15;
        let dense = estimate_rlwe(n, 881.0, 3.2, SecretDistribution::Ternary).unwrap();
        let sparse = estimate_rlwe(n, 881.0, 3.2, SecretDistribution::HammingWeight(64)).unwrap();
        assert!(sparse.security_bits() < dense.security_bits());
        // A larger error is harder.
        let wide = estimate_rlwe(n, 881.0, 6.4, SecretDistribution::Ternary).unwrap();
        assert!(wide.security_bits() > dense.security_bits());
    }

    /// Tolerance of the table check, in bits. The table lists, for each `N` and level, the largest integer
    /// `log q` whose estimate (2018 lattice estimator, `BKZ.sieve`) meets the level, so the model agrees
    /// with it when `estimate(log q + 1) < level <= estimate(log q)`. The tolerance covers what this
    /// estimator leaves out of the 2018 one (the decoding attack, its own rounding of `beta` and `m`);
    /// measured: the level is outside the bracket at one point of 18, by 0.23 bits.
    const TABLE_TOLERANCE_BITS: f64 = 3.0;

    #[test]
    fn reproduces_the_he_standard_table() {
        let mut worst: f64 = 0.0;
        for log_n in 10..=15u32 {
            for level in SecurityLevel::ALL {
                let lq = max_log_qp(1 << log_n, level).unwrap() as f64;
                let target = level.bits() as f64;
                let at = ternary(log_n, lq);
                let above = ternary(log_n, lq + 1.0);
                let (b, _) = at.best().unwrap();
                println!(
                    "N = 2^{log_n}, {level}, log q = {lq}: {:.1} bits (core-SVP {:.1}, beta {}, {b}; \
                     primal {:.1}, dual {:.1}), at log q + 1: {:.1}",
                    at.security_bits(),
                    at.core_svp_bits(),
                    at.best().unwrap().1.beta,
                    at.primal_bits(),
                    at.dual_bits(),
                    above.security_bits()
                );
                let miss = (target - at.security_bits()).max(above.security_bits() - target);
                worst = worst.max(miss);
                assert!(
                    at.security_bits() >= target - TABLE_TOLERANCE_BITS,
                    "N = 2^{log_n}, log q = {lq}: {} < {target}",
                    at.security_bits()
                );
                assert!(
                    above.security_bits() <= target + TABLE_TOLERANCE_BITS,
                    "N = 2^{log_n}, log q = {lq} + 1: {} > {target}",
                    above.security_bits()
                );
            }
        }
        println!("worst miss outside the bracket: {worst:.2} bits");
    }

    /// The 128-bit entries for `N = 2^16, 2^17` (from OpenFHE) and the extrapolated 192/256-bit ones of
    /// [`crate::security`]: printed for the record; the 128-bit ones must meet the level.
    #[test]
    fn beyond_the_standard_table() {
        for log_n in [16u32, 17] {
            for level in SecurityLevel::ALL {
                let lq = max_log_qp(1 << log_n, level).unwrap() as f64;
                let e = ternary(log_n, lq);
                println!(
                    "N = 2^{log_n}, {level}, log q = {lq}: {:.1} bits (core-SVP {:.1}); at log q + 1: {:.1}",
                    e.security_bits(),
                    e.core_svp_bits(),
                    ternary(log_n, lq + 1.0).security_bits()
                );
                if level == SecurityLevel::Bits128 {
                    assert!(e.security_bits() >= 128.0 - TABLE_TOLERANCE_BITS);
                }
            }
        }
    }

    /// PEGASUS Table IV (h = 64 everywhere), the paper's claim "at least 119-bit" (after
    /// Albrecht-Player-Scott's estimator). Ours, HE-Standard model / core-SVP:
    /// LWE `n = 2^10, q ~ 2^45, sigma = 2^13`: 97.7 / 67.5 (uniform ternary: 103.6 / 73.3);
    /// RGSW `n = 2^12, q' q_0 ~ 2^105, sigma = 2^10`: 141.5 / 109.2;
    /// CKKS `n = 2^16, log Q = 795, sigma = 3.19`: 314.9 / 278.6.
    /// The LWE set is **below** the paper's claim even in our optimistic sparse-secret model.
    #[test]
    fn pegasus_table_iv() {
        let h = SecretDistribution::HammingWeight(64);
        let lwe = estimate_rlwe(1 << 10, 45.0, 8192.0, h).unwrap();
        let lwe_t = estimate_rlwe(1 << 10, 45.0, 8192.0, SecretDistribution::Ternary).unwrap();
        let rgsw = estimate_rlwe(1 << 12, 105.0, 1024.0, h).unwrap();
        let ckks = estimate_rlwe(1 << 16, 795.0, 3.19, h).unwrap();
        for (name, e) in [
            ("LWE", &lwe),
            ("LWE ternary", &lwe_t),
            ("RGSW", &rgsw),
            ("CKKS", &ckks),
        ] {
            println!(
                "PEGASUS {name}: {:.1} bits (core-SVP {:.1}), best {:?}",
                e.security_bits(),
                e.core_svp_bits(),
                e.best()
            );
        }
        let near = |got: f64, want: f64| (got - want).abs() < 1.0;
        assert!(near(lwe.security_bits(), 97.7), "{}", lwe.security_bits());
        assert!(near(lwe.core_svp_bits(), 67.5), "{}", lwe.core_svp_bits());
        assert!(
            near(lwe_t.security_bits(), 103.6),
            "{}",
            lwe_t.security_bits()
        );
        assert!(
            near(rgsw.security_bits(), 141.5),
            "{}",
            rgsw.security_bits()
        );
        assert!(
            near(ckks.security_bits(), 314.9),
            "{}",
            ckks.security_bits()
        );
        // The paper's claim: at least 119 bits. The switching key's LWE set misses it here.
        assert!(lwe.security_bits() < 119.0);
        assert!(rgsw.security_bits() >= 119.0 && ckks.security_bits() >= 119.0);
    }

    /// The RNS-CKKS paper presets (`h = 64`, `sigma = 3.2`, target 80 bits by the paper's estimator run on
    /// `log Q_L`). Our estimate on `log2(QP)` (the key-switching keys live modulo `QP`), HE-Standard model
    /// / core-SVP: Table 1 L = 5 (N 2^15, 456): 266 / 231; L = 10 (2^15, 851): 132 / 97; L = 15 (2^16,
    /// 1246): 188 / 152; Table 2 (2^14, 401): 140 / 105; Table 3 (2^14, 291): 200 / 165; Table 4 (2^16,
    /// 1481): 155 / 119. Everything lands well above 80: without the hybrid attack the sparse secret is
    /// only rescaled, so these figures are optimistic (module documentation).
    /// The PEGASUS range (`n = 1024`, `q = 2^45`, `sigma` from 3.2 to `2^13`): a wider error is harder,
    /// and the dimension that reaches 128 bits at `sigma = 2^13`.
    #[test]
    fn pegasus_range_of_error_widths() {
        let mut last = 0.0;
        for log_sigma in [1.7, 3.0, 6.0, 9.0, 11.0, 13.0] {
            let sigma = f64::exp2(log_sigma);
            let e = estimate_rlwe(1024, 45.0, sigma, SecretDistribution::Ternary).unwrap();
            println!(
                "n = 1024, q = 2^45, sigma = 2^{log_sigma}: {:.1} bits",
                e.security_bits()
            );
            assert!(e.security_bits() > last);
            last = e.security_bits();
        }
        let h = SecretDistribution::HammingWeight(64);
        let at = |n: usize, s| estimate_rlwe(n, 45.0, 8192.0, s).unwrap().security_bits();
        assert!(at(1344, h) >= 128.0 && at(1280, h) < 128.0);
        let t = SecretDistribution::Ternary;
        assert!(at(1280, t) >= 128.0 && at(1216, t) < 128.0);
    }

    #[test]
    fn rns_ckks_paper_sparse_presets() {
        let h = SecretDistribution::HammingWeight(64);
        for (log_n, log_qp, want) in [
            (15u32, 456.0, 266.3),
            (15, 851.0, 132.3),
            (16, 1246.0, 188.2),
            (14, 401.0, 139.7),
            (14, 291.0, 199.6),
            (16, 1481.0, 155.5),
        ] {
            let e = estimate_rlwe(1 << log_n, log_qp, 3.2, h).unwrap();
            println!(
                "N = 2^{log_n}, log QP = {log_qp}, h = 64: {:.1} bits (core-SVP {:.1})",
                e.security_bits(),
                e.core_svp_bits()
            );
            assert!(
                (e.security_bits() - want).abs() < 1.5,
                "{}",
                e.security_bits()
            );
            assert!(e.security_bits() > 80.0);
        }
    }

    #[test]
    fn rejects_invalid_parameters() {
        let ok = LweParams::rlwe(1024, 27.0, 3.2, LweSecret::Ternary);
        assert!(estimate_lwe(&ok).is_ok());
        let cases = [
            LweParams { n: 0, ..ok },
            LweParams {
                n: MAX_DIMENSION + 1,
                ..ok
            },
            LweParams { log_q: 0.0, ..ok },
            LweParams {
                log_q: f64::NAN,
                ..ok
            },
            LweParams { sigma: -1.0, ..ok },
            LweParams {
                sigma: f64::INFINITY,
                ..ok
            },
            LweParams { samples: 0, ..ok },
            LweParams {
                secret: LweSecret::HammingWeight(0),
                ..ok
            },
            LweParams {
                secret: LweSecret::HammingWeight(1025),
                ..ok
            },
            LweParams {
                secret: LweSecret::StdDev(0.0),
                ..ok
            },
        ];
        for p in cases {
            let err = estimate_lwe(&p).unwrap_err();
            assert!(err.to_string().contains("LWE estimator"), "{err}");
        }
    }

    #[test]
    fn hopeless_attacks_and_tiny_dimensions_do_not_panic() {
        // Error as large as q: no attack succeeds (LWE is uniform).
        let e = estimate_lwe(&LweParams::rlwe(256, 10.0, 2048.0, LweSecret::Ternary)).unwrap();
        assert!(e.primal.is_none() && e.security_bits() > 200.0);
        // Dimension below the smallest block size.
        let e = estimate_lwe(&LweParams::rlwe(4, 30.0, 3.2, LweSecret::Ternary)).unwrap();
        assert!(e.security_bits().is_finite() || e.best().is_none());
        // Huge modulus: the floor block size.
        let e = ternary(10, 1000.0);
        assert_eq!(e.best().unwrap().1.beta, MIN_BLOCK_SIZE);
        // A secret drawn like the error.
        let e = estimate_lwe(&LweParams::rlwe(1024, 27.0, 3.2, LweSecret::StdDev(3.2))).unwrap();
        assert!(e.security_bits() > ternary(10, 27.0).security_bits());
    }

    #[test]
    fn is_fast() {
        let start = std::time::Instant::now();
        let e = ternary(17, 3523.0);
        assert!(e.security_bits() > 100.0);
        assert!(start.elapsed().as_secs_f64() < 0.5, "{:?}", start.elapsed());
    }
}
