//! Errors of the LWE layer.

/// An error of the LWE layer: invalid parameters, ciphertexts that do not fit together, or an error of a
/// lower layer.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LweError {
    /// A math-layer error (moduli, samplers).
    #[error(transparent)]
    Math(#[from] rnsfhe_math::Error),
    /// A ring-layer error (bases, polynomials).
    #[error(transparent)]
    Ring(#[from] rnsfhe_ring::Error),
    /// An RLWE-layer error (contexts, keys).
    #[error(transparent)]
    Core(#[from] rnsfhe_core::Error),
    /// An invalid parameter value.
    #[error("invalid {what}: {reason}")]
    InvalidParams {
        /// The parameter.
        what: &'static str,
        /// Why it is invalid and what is accepted.
        reason: String,
    },
    /// Parameters the lattice estimator puts below 128 bits, without the explicit opt-in.
    #[error("{what}: the lattice estimator gives {bits:.1} bits of security, below 128; use the *_allowing_insecure constructor to build them anyway (tests, reproducing a paper's parameters)")]
    Insecure {
        /// The key whose parameters are insecure.
        what: &'static str,
        /// The estimate, in bits.
        bits: f64,
    },
    /// Two operands (or a ciphertext and a key) of different dimensions.
    #[error("{operation}: dimension {left} does not match dimension {right}; use ciphertexts and keys of one LWE dimension (key-switch first)")]
    DimensionMismatch {
        /// The operation attempted.
        operation: &'static str,
        /// Dimension of the first operand.
        left: usize,
        /// Dimension of the second operand.
        right: usize,
    },
    /// Two operands (or a ciphertext and a key) over different moduli.
    #[error(
        "{operation}: modulus {left} does not match modulus {right}; switch the modulus first"
    )]
    ModulusMismatch {
        /// The operation attempted.
        operation: &'static str,
        /// Modulus of the first operand.
        left: u64,
        /// Modulus of the second operand.
        right: u64,
    },
}

/// Result alias of this crate.
pub type LweResult<T> = std::result::Result<T, LweError>;
