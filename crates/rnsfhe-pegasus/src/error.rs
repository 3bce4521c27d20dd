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
}

/// Result alias of this crate.
pub type PegasusResult<T> = std::result::Result<T, PegasusError>;
