//! Security levels of RLWE parameters after the Homomorphic Encryption Standard
//! (Albrecht et al., "Homomorphic Encryption Standard", 2018/2019, Table 1 for a uniform ternary secret and
//! an error of standard deviation 3.2, classical attacks).
//!
//! [`max_log_qp`] gives the largest `log2(QP)` (the whole key-switching modulus, chain `Q` times special
//! primes `P`: the key-switching keys are RLWE samples modulo `QP`) for a ring degree and a level. The
//! standard's table stops at `N = 2^15`; the 128-bit entries for `N = 2^16, 2^17` (1747, 3523) are those of
//! OpenFHE's `stdlatticeparms.cpp`. The 192- and 256-bit entries for `N = 2^16, 2^17` are **extrapolated**
//! here (the 2^15 entry times the 128-bit growth ratio, rounded down: 1211 / 2442 and 943 / 1901); check
//! them with the lattice estimator before relying on them.
//!
//! The table assumes a **uniform ternary** secret and an error of standard deviation at least
//! `8 / sqrt(2 pi) ≈ 3.19` ([`MIN_STANDARD_SIGMA`]). Every parameter of the two distributions enters the
//! check ([`estimate`]):
//!
//! * a narrower error voids the table: at `sigma -> 0` a public key `b = -a s + e` gives the secret away by
//!   linear algebra, whatever `N` and `Q`. Such parameters are [`SecurityEstimate::ErrorTooNarrow`] and
//!   need the explicit opt-in of the scheme's parameters;
//! * a wider error only makes the lattice problem harder, so the table's bound stays a valid (conservative)
//!   one; an error wider than [`MAX_SIGMA`] is refused outright ([`check_sigma`]): it would swamp the
//!   messages, and the sampler is not built for it;
//! * for a sparse secret (fixed Hamming weight `h`, as the RNS-CKKS paper's `h = 64`) the table does not
//!   apply and no level is claimed ([`SecurityEstimate::Unknown`]); the built-in estimator
//!   ([`crate::lwe_estimator`]) takes `h` into account, but it does not model the hybrid attacks that
//!   matter most for sparse secrets, so its figure is shown, never used to claim a level.

use crate::context::SecretDistribution;

/// The smallest error standard deviation the HE Standard table holds for: the standard's
/// `8 / sqrt(2 pi) ≈ 3.1915`, written as OpenFHE writes it (3.19; SEAL uses 3.2).
pub const MIN_STANDARD_SIGMA: f64 = 3.19;

/// The largest error standard deviation a context accepts (the discrete Gaussian sampler's limit,
/// `2^13`; the papers use 3.2 for RLWE).
pub const MAX_SIGMA: f64 = rnsfhe_math::sampling::MAX_SIGMA;

/// Checks that `sigma` is a usable error width: finite, positive and at most [`MAX_SIGMA`]. Whether it is
/// wide enough for security is [`estimate`]'s question.
///
/// Errors: the reason, for the caller's error type.
pub fn check_sigma(sigma: f64) -> Result<(), String> {
    if sigma.is_finite() && sigma > 0.0 && sigma <= MAX_SIGMA {
        Ok(())
    } else {
        Err(format!(
            "sigma = {sigma} must be a finite error width in (0, {MAX_SIGMA}]: the HE Standard's is \
             {MIN_STANDARD_SIGMA} (narrower needs the insecure opt-in), wider errors swamp the messages"
        ))
    }
}

/// A classical security level of the Homomorphic Encryption Standard.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum SecurityLevel {
    /// 128-bit classical security.
    Bits128,
    /// 192-bit classical security.
    Bits192,
    /// 256-bit classical security.
    Bits256,
}

impl SecurityLevel {
    /// The level in bits.
    pub fn bits(self) -> u32 {
        match self {
            SecurityLevel::Bits128 => 128,
            SecurityLevel::Bits192 => 192,
            SecurityLevel::Bits256 => 256,
        }
    }

    /// All levels, weakest first.
    pub const ALL: [SecurityLevel; 3] = [
        SecurityLevel::Bits128,
        SecurityLevel::Bits192,
        SecurityLevel::Bits256,
    ];
}

impl std::fmt::Display for SecurityLevel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}-bit", self.bits())
    }
}

/// `(log2 N, [max log2 QP at 128, 192, 256 bits])` for a uniform ternary secret, `sigma = 3.2`.
const TABLE: [(u32, [u32; 3]); 8] = [
    (10, [27, 19, 14]),
    (11, [54, 37, 29]),
    (12, [109, 75, 58]),
    (13, [218, 152, 118]),
    (14, [438, 305, 237]),
    (15, [881, 611, 476]),
    (16, [1747, 1211, 943]),
    (17, [3523, 2442, 1901]),
];

/// The largest `log2(QP)` of the HE Standard table (uniform ternary secret, classical attacks) for ring
/// degree `n` and `level`; `None` when `n` is not a power of two in `[2^10, 2^17]`.
pub fn max_log_qp(n: usize, level: SecurityLevel) -> Option<u32> {
    if !n.is_power_of_two() {
        return None;
    }
    let log_n = n.trailing_zeros();
    let idx = match level {
        SecurityLevel::Bits128 => 0,
        SecurityLevel::Bits192 => 1,
        SecurityLevel::Bits256 => 2,
    };
    TABLE
        .iter()
        .find(|(l, _)| *l == log_n)
        .map(|(_, row)| row[idx])
}

/// The outcome of the security check of a parameter set.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum SecurityEstimate {
    /// At least this level by the HE Standard table (the strongest level met).
    AtLeast(SecurityLevel),
    /// Below 128 bits: `log2(QP)` exceeds the 128-bit bound for this `N` (or `N` is below the table).
    Below128,
    /// Below 128 bits: the error is narrower than the HE Standard's ([`MIN_STANDARD_SIGMA`]), for which
    /// its table does not hold (at `sigma -> 0` the public key reveals the secret key).
    ErrorTooNarrow,
    /// The table does not apply (sparse secret, or `N` above the table): no level is claimed.
    Unknown,
}

impl SecurityEstimate {
    /// Whether a 128-bit level (or more) is established.
    pub fn is_secure(self) -> bool {
        matches!(self, SecurityEstimate::AtLeast(_))
    }
}

impl std::fmt::Display for SecurityEstimate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SecurityEstimate::AtLeast(l) => {
                write!(f, "at least {l} (HE Standard, uniform ternary)")
            }
            SecurityEstimate::Below128 => f.write_str("below 128-bit (HE Standard bound exceeded)"),
            SecurityEstimate::ErrorTooNarrow => write!(
                f,
                "below 128-bit (error narrower than the HE Standard's sigma = {MIN_STANDARD_SIGMA})"
            ),
            SecurityEstimate::Unknown => f.write_str(
                "unknown (the HE Standard table does not cover this secret distribution or N)",
            ),
        }
    }
}

/// Estimates the security of ring degree `n`, `log2(QP) = log_qp`, the secret distribution and the error
/// width `sigma` against the HE Standard table (see the module documentation for how each enters).
pub fn estimate(n: usize, log_qp: f64, secret: SecretDistribution, sigma: f64) -> SecurityEstimate {
    // NaN is not wide enough either.
    if sigma.is_nan() || sigma < MIN_STANDARD_SIGMA {
        return SecurityEstimate::ErrorTooNarrow;
    }
    if let SecretDistribution::HammingWeight(_) = secret {
        return SecurityEstimate::Unknown;
    }
    if n > (1 << 17) {
        return SecurityEstimate::Unknown;
    }
    let mut best = None;
    for level in SecurityLevel::ALL {
        match max_log_qp(n, level) {
            Some(max) if log_qp <= max as f64 => best = Some(level),
            _ => {}
        }
    }
    match best {
        Some(l) => SecurityEstimate::AtLeast(l),
        None => SecurityEstimate::Below128,
    }
}

/// One line for people: the verdict of [`estimate`] and the built-in lattice estimate
/// ([`crate::lwe_estimator`]) of the same parameters (ring degree `n`, `log2` of the modulus the keys live
/// under, the secret distribution and `sigma`), e.g. `at least 128-bit (HE Standard, uniform ternary);
/// lattice estimate 131.2 bits (primal uSVP), core-SVP 98.0 (uniform ternary secret, sigma 3.2)`.
pub fn summary(n: usize, log_q: f64, secret: SecretDistribution, sigma: f64) -> String {
    let verdict = estimate(n, log_q, secret, sigma);
    let secret_text = crate::lwe_estimator::LweSecret::from(secret);
    match crate::lwe_estimator::estimate_rlwe(n, log_q, sigma, secret) {
        Ok(e) => {
            let attack = e
                .best()
                .map_or_else(|| "no attack".to_string(), |(a, _)| a.to_string());
            format!(
                "{verdict}; lattice estimate {:.1} bits ({attack}), core-SVP {:.1} ({secret_text} \
                 secret, sigma {sigma})",
                e.security_bits(),
                e.core_svp_bits()
            )
        }
        Err(err) => format!("{verdict}; no lattice estimate: {err}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_lookups() {
        assert_eq!(max_log_qp(1 << 15, SecurityLevel::Bits128), Some(881));
        assert_eq!(max_log_qp(1 << 13, SecurityLevel::Bits256), Some(118));
        assert_eq!(max_log_qp(1 << 9, SecurityLevel::Bits128), None);
        assert_eq!(max_log_qp(3000, SecurityLevel::Bits128), None);
        let t = SecretDistribution::Ternary;
        assert_eq!(
            estimate(1 << 15, 611.0, t, 3.2),
            SecurityEstimate::AtLeast(SecurityLevel::Bits192)
        );
        assert_eq!(estimate(1 << 15, 900.0, t, 3.2), SecurityEstimate::Below128);
        assert_eq!(
            estimate(1 << 15, 100.0, SecretDistribution::HammingWeight(64), 3.2),
            SecurityEstimate::Unknown
        );
    }

    #[test]
    fn the_error_width_enters_the_check() {
        let t = SecretDistribution::Ternary;
        // The HE Standard's own width and anything wider keep the table's verdict.
        for sigma in [
            MIN_STANDARD_SIGMA,
            3.2,
            8.0 / (2.0 * std::f64::consts::PI).sqrt(),
            100.0,
        ] {
            assert_eq!(
                estimate(1 << 13, 200.0, t, sigma),
                SecurityEstimate::AtLeast(SecurityLevel::Bits128),
                "sigma {sigma}"
            );
        }
        // Narrower errors are insecure whatever N and Q (tiny log Q would otherwise be 256-bit).
        for sigma in [1e-9, 1.0, 3.18, 0.0, -1.0, f64::NAN] {
            let e = estimate(1 << 15, 50.0, t, sigma);
            assert_eq!(e, SecurityEstimate::ErrorTooNarrow, "sigma {sigma}");
            assert!(!e.is_secure());
        }
        assert!(check_sigma(3.2).is_ok() && check_sigma(1e-9).is_ok());
        for sigma in [0.0, -3.2, f64::NAN, f64::INFINITY, 1e9, MAX_SIGMA * 1.01] {
            assert!(check_sigma(sigma).is_err(), "sigma {sigma}");
        }
    }
}
