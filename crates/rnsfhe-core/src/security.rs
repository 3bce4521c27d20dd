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
//! The table assumes a **uniform ternary** secret. For a sparse secret (fixed Hamming weight `h`, as the
//! RNS-CKKS paper's `h = 64`) the table does not apply and no level is claimed
//! ([`estimate`] returns [`SecurityEstimate::Unknown`]).

use crate::context::SecretDistribution;

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
pub enum SecurityEstimate {
    /// At least this level by the HE Standard table (the strongest level met).
    AtLeast(SecurityLevel),
    /// Below 128 bits: `log2(QP)` exceeds the 128-bit bound for this `N` (or `N` is below the table).
    Below128,
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
            SecurityEstimate::Unknown => f.write_str(
                "unknown (the HE Standard table does not cover this secret distribution or N)",
            ),
        }
    }
}

/// Estimates the security of ring degree `n`, `log2(QP) = log_qp` and the secret distribution against the
/// HE Standard table.
pub fn estimate(n: usize, log_qp: f64, secret: SecretDistribution) -> SecurityEstimate {
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
            estimate(1 << 15, 611.0, t),
            SecurityEstimate::AtLeast(SecurityLevel::Bits192)
        );
        assert_eq!(estimate(1 << 15, 900.0, t), SecurityEstimate::Below128);
        assert_eq!(
            estimate(1 << 15, 100.0, SecretDistribution::HammingWeight(64)),
            SecurityEstimate::Unknown
        );
    }
}
