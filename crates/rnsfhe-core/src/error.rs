//! Errors of the RLWE layer.

use thiserror::Error;

/// Everything that can go wrong in `rnsfhe-core`; every variant carries the numbers at fault and says what
/// to do.
#[derive(Debug, Clone, PartialEq, Error)]
#[non_exhaustive]
pub enum Error {
    /// An error from the ring layer (bases, polynomials, conversions, gadgets).
    #[error(transparent)]
    Ring(#[from] rnsfhe_ring::Error),
    /// An error from the math layer (moduli, NTT plans, samplers).
    #[error(transparent)]
    Math(#[from] rnsfhe_math::Error),
    /// Parameters rejected by [`crate::RlweContext::new`].
    #[error("invalid RLWE parameter {what}: {reason}")]
    InvalidParams {
        /// The parameter at fault.
        what: &'static str,
        /// Why, with the numbers, and what to do.
        reason: String,
    },
    /// Two operands (or an operand and what the operation expects) have different levels.
    ///
    /// Levels count limbs: a level-`l` object lives over `q_0 .. q_{l-1}`.
    #[error("level mismatch in {operation}: left operand has level {left} (limbs), right has level {right}; drop the higher one to the lower level first")]
    LevelMismatch {
        /// The operation attempted.
        operation: &'static str,
        /// Level (limb count) of the left operand.
        left: usize,
        /// Level (limb count) of the right operand.
        right: usize,
    },
    /// A level outside `[1, L]`.
    #[error("level {level} is out of range for {operation}: levels (limb counts) run from 1 to L = {max}")]
    LevelOutOfRange {
        /// The operation attempted.
        operation: &'static str,
        /// The level requested.
        level: usize,
        /// The top level `L` of the context.
        max: usize,
    },
    /// Rescaling asked of a ciphertext at level 1 (no limb left to divide by).
    #[error("{operation} divides by the last prime and needs level >= 2, got level {level}")]
    NoLevelToRescale {
        /// The operation.
        operation: &'static str,
        /// The ciphertext's level (limb count).
        level: usize,
    },
    /// An object (key, ciphertext, polynomial) that does not belong to this context.
    #[error("{object} belongs to another context: its parameter fingerprint is {got:#018x}, this context's is {expected:#018x} (ring degree, moduli and dnum must agree); use objects made with the same parameters")]
    ContextMismatch {
        /// What was passed.
        object: &'static str,
        /// This context's fingerprint.
        expected: u64,
        /// The object's fingerprint.
        got: u64,
    },
    /// A polynomial that is not over a prefix of the context's modulus chain `Q`.
    #[error("{object} is not over a prefix of this context's modulus chain: it has {limbs} limb(s) of degree N = {n}, moduli {moduli:?}; the chain has L = {chain_limbs} limbs of degree {chain_n}")]
    NotOnChain {
        /// What was passed.
        object: &'static str,
        /// Its limb count.
        limbs: usize,
        /// Its ring degree.
        n: usize,
        /// Its moduli.
        moduli: Vec<u64>,
        /// Limbs of the context's chain.
        chain_limbs: usize,
        /// Degree of the context.
        chain_n: usize,
    },
    /// A ciphertext with the wrong number of parts for an operation.
    #[error("{operation} needs a ciphertext with {expected} parts, got {got}")]
    WrongPartCount {
        /// The operation attempted.
        operation: &'static str,
        /// Expected number of parts (for example 3 for relinearization).
        expected: usize,
        /// Actual number of parts.
        got: usize,
    },
    /// No Galois key for the requested automorphism.
    #[error("no Galois key for Galois element {element}{}: the available elements are {available:?}; generate it with KeyGenerator::galois_keys (the rotation by step r of a Galois group with generator g uses g^r mod 2N, conjugation 2N - 1)", match .step { Some(s) => format!(" (rotation step {s})"), None => String::new() })]
    MissingGaloisKey {
        /// The Galois element `k` of `X -> X^k`.
        element: usize,
        /// The rotation step, when the caller asked for a rotation.
        step: Option<i64>,
        /// Galois elements that do have keys.
        available: Vec<usize>,
    },
    /// A gadget product whose decomposition belongs to another gadget than the gadget ciphertext's
    /// (for example a BFV Galois key used with the relinearization decomposition).
    #[error("{operation}: the gadget ciphertext was made for {key}, the decomposition is {decomposition}; use the key generated for this operation")]
    GadgetMismatch {
        /// The operation attempted.
        operation: &'static str,
        /// The gadget of the key.
        key: crate::gadget::Gadget,
        /// The gadget of the decomposition.
        decomposition: crate::gadget::Gadget,
    },
    /// A hoisted decomposition used with a ciphertext other than the one it was computed from.
    #[error("the hoisted decomposition was computed at level {hoisted_level} for another ciphertext (level {level}); compute it from the ciphertext being rotated")]
    HoistMismatch {
        /// Level of the hoisted decomposition.
        hoisted_level: usize,
        /// Level of the ciphertext.
        level: usize,
    },
}

/// Result alias of this crate.
pub type Result<T> = std::result::Result<T, Error>;
