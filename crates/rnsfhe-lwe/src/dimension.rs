//! The LWE dimension as a type.

use crate::error::{LweError, LweResult};

/// The largest supported LWE dimension: the largest ring degree of the RLWE layer, so that every
/// coefficient extracted from an RLWE ciphertext fits.
pub const MAX_LWE_DIMENSION: usize = 1 << 17;

/// The dimension `n` of an LWE ciphertext `(b, a)`, `a in Z_q^n`, and of its secret (PEGASUS Section II.B:
/// the `n` of `LWE_s^{n,q}`). A newtype so that a dimension is checked once and is never confused with a
/// count, an index or a modulus; PEGASUS works with three of them (`n_lwe`, the LUT ring degree and the
/// CKKS ring degree, Table IV).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct LweDimension(usize);

impl LweDimension {
    /// A dimension `1 <= n <= MAX_LWE_DIMENSION`.
    ///
    /// Errors: [`LweError::InvalidParams`] outside that range.
    pub fn new(n: usize) -> LweResult<Self> {
        if (1..=MAX_LWE_DIMENSION).contains(&n) {
            Ok(Self(n))
        } else {
            Err(LweError::InvalidParams {
                what: "LWE dimension",
                reason: format!("{n} is not in [1, {MAX_LWE_DIMENSION}]"),
            })
        }
    }

    /// The dimension `n`.
    pub fn get(self) -> usize {
        self.0
    }

    /// Checks that `other` is the same dimension.
    ///
    /// Errors: [`LweError::DimensionMismatch`] naming `operation`.
    pub fn check_same(self, other: Self, operation: &'static str) -> LweResult<()> {
        if self == other {
            Ok(())
        } else {
            Err(LweError::DimensionMismatch {
                operation,
                left: self.0,
                right: other.0,
            })
        }
    }
}

impl std::fmt::Display for LweDimension {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.0)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn range_is_checked() {
        assert_eq!(LweDimension::new(1024).unwrap().get(), 1024);
        assert!(LweDimension::new(0).is_err());
        assert!(LweDimension::new(MAX_LWE_DIMENSION + 1).is_err());
        let (a, b) = (
            LweDimension::new(8).unwrap(),
            LweDimension::new(16).unwrap(),
        );
        assert!(matches!(
            a.check_same(b, "test"),
            Err(LweError::DimensionMismatch {
                left: 8,
                right: 16,
                ..
            })
        ));
    }
}
