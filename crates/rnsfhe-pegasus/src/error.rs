//! Errors of the CKKS <-> LWE bridge.

/// An error of the PEGASUS bridge: a CKKS or LWE error, invalid parameters, a missing key, or inputs the
/// pipeline cannot take.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PegasusError {
    /// A math-layer error (moduli, samplers).
    #[error(transparent)]
    Math(#[from] rnsfhe_math::Error),
    /// A ring-layer error (bases, polynomials).
    #[error(transparent)]
    Ring(#[from] rnsfhe_ring::Error),
    /// An RLWE-layer error (contexts, keys, missing Galois keys).
    #[error(transparent)]
    Core(#[from] rnsfhe_core::Error),
    /// A CKKS error (levels, scales, slots, rotations).
    #[error(transparent)]
    Ckks(#[from] rnsfhe_ckks::Error),
    /// An LWE error (dimensions, moduli, look-up tables).
    #[error(transparent)]
    Lwe(#[from] rnsfhe_lwe::LweError),
    /// An invalid parameter value.
    #[error("invalid {what}: {reason}")]
    InvalidParams {
        /// The parameter.
        what: &'static str,
        /// Why it is invalid and what is accepted.
        reason: String,
    },
    /// A key the operation needs was not given.
    #[error("{operation} needs the {key}; generate it with the key generator of this crate")]
    MissingKey {
        /// The operation attempted.
        operation: &'static str,
        /// The key that is missing.
        key: &'static str,
    },
    /// A coefficient position outside the ring of the ciphertext.
    #[error(
        "{operation}: coefficient position {position} is not below the ring degree N = {degree}"
    )]
    PositionOutOfRange {
        /// The operation attempted.
        operation: &'static str,
        /// The position asked for.
        position: usize,
        /// The ring degree `N`.
        degree: usize,
    },
    /// A ciphertext and a key of different CKKS contexts.
    #[error("{operation}: the {key} was made for the CKKS context with fingerprint {expected:#018x}, the ciphertext belongs to {got:#018x}; use keys generated from the secret key of the ciphertext's context")]
    KeyMismatch {
        /// The operation attempted.
        operation: &'static str,
        /// The key.
        key: &'static str,
        /// The fingerprint of the key's context.
        expected: u64,
        /// The fingerprint of the ciphertext's context.
        got: u64,
    },
}

/// Result alias of this crate.
pub type PegasusResult<T> = std::result::Result<T, PegasusError>;
