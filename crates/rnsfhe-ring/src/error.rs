//! Errors of the ring layer.

use thiserror::Error;

/// Everything that can go wrong in `rnsfhe-ring`; variants carry the values at fault.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum Error {
    /// An error from the math layer (modulus, degree, NTT plan, prime search).
    #[error(transparent)]
    Math(#[from] rnsfhe_math::Error),
    /// An RNS basis with no moduli.
    #[error("an RNS basis needs at least one modulus")]
    EmptyBasis,
    /// The same modulus appears twice in a basis (or in two bases that must be coprime).
    #[error("modulus {modulus} appears twice in {context}: RNS moduli must be pairwise coprime")]
    RepeatedModulus {
        /// The repeated modulus.
        modulus: u64,
        /// Where it was found.
        context: &'static str,
    },
    /// Two operands live over different RNS bases.
    #[error("basis mismatch in {operation}: left operand has {left_limbs} limbs (N = {left_n}), right has {right_limbs} (N = {right_n}), or their moduli differ")]
    BasisMismatch {
        /// The operation attempted.
        operation: &'static str,
        /// Limbs of the left operand.
        left_limbs: usize,
        /// Ring degree of the left operand.
        left_n: usize,
        /// Limbs of the right operand.
        right_limbs: usize,
        /// Ring degree of the right operand.
        right_n: usize,
    },
    /// A buffer of the wrong length.
    #[error("length mismatch in {what}: expected {expected}, got {got}")]
    LengthMismatch {
        /// Which buffer.
        what: &'static str,
        /// Expected length.
        expected: usize,
        /// Actual length.
        got: usize,
    },
    /// A residue not below its modulus.
    #[error(
        "residue {value} at limb {limb}, coefficient {index} is not below its modulus {modulus}"
    )]
    ResidueOutOfRange {
        /// The value.
        value: u64,
        /// Limb index.
        limb: usize,
        /// Coefficient index.
        index: usize,
        /// The limb's modulus.
        modulus: u64,
    },
    /// A limb count out of range (dropping to more limbs than there are, or to none).
    #[error(
        "cannot keep {requested} limbs of a basis with {available}: need 1 <= limbs <= {available}"
    )]
    InvalidLimbCount {
        /// Requested number of limbs.
        requested: usize,
        /// Limbs available.
        available: usize,
    },
    /// A Galois element that is not an odd residue modulo 2N.
    #[error(
        "automorphism exponent {k} is invalid for N = {n}: it must be odd and below 2N = {two_n}"
    )]
    InvalidGaloisElement {
        /// The exponent.
        k: usize,
        /// Ring degree.
        n: usize,
        /// 2N.
        two_n: usize,
    },
    /// A basis conversion mode whose precondition the bases do not meet.
    #[error("{mode} basis conversion is not available for this basis: {reason}")]
    ConversionUnavailable {
        /// The mode requested.
        mode: &'static str,
        /// Why it is refused, with the numbers.
        reason: String,
    },
    /// A parameter outside its supported range.
    #[error("{what} = {value} is out of range: it must be in [{min}, {max}]")]
    OutOfRange {
        /// Parameter name.
        what: &'static str,
        /// Value given.
        value: f64,
        /// Smallest accepted.
        min: f64,
        /// Largest accepted.
        max: f64,
    },
}

/// Result alias of this crate.
pub type Result<T> = std::result::Result<T, Error>;
