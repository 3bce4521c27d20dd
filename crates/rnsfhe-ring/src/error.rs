//! Errors of the ring layer.

use thiserror::Error;

/// Everything that can go wrong in `rnsfhe-ring`; variants carry the values at fault.
#[derive(Debug, Clone, PartialEq, Error)]
#[non_exhaustive]
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
    /// A Galois element that is not an odd residue below `2N`.
    #[error(
        "Galois element {element} is invalid for N = {n}: it must be odd and below 2N = {two_n}"
    )]
    InvalidGaloisElement {
        /// The element (the exponent `k` of `X -> X^k`).
        element: usize,
        /// Ring degree.
        n: usize,
        /// `2N`.
        two_n: usize,
    },
    /// A Galois element made for one ring degree applied in a ring of another.
    #[error("Galois element {element} belongs to the ring of degree N = {element_n}, but the {operation} is in degree N = {n}: make the element from this context's Galois group")]
    GaloisDegreeMismatch {
        /// The operation attempted.
        operation: &'static str,
        /// The element.
        element: usize,
        /// The degree it was made for.
        element_n: usize,
        /// The degree of the operand.
        n: usize,
    },
    /// A ring degree and generator that do not make a rotation group.
    #[error("no Galois group of N = {n} with generator {generator}: {reason}")]
    InvalidGaloisGroup {
        /// Ring degree.
        n: usize,
        /// The generator given.
        generator: usize,
        /// What is wrong.
        reason: &'static str,
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
    /// An operation that divides out the last modulus (rescaling) applied to a polynomial with too few limbs.
    #[error("cannot {operation} a polynomial with {limbs} limb(s): it needs at least 2, since the last modulus is divided out and one must remain; the value is at the lowest level (bootstrap it or start from a longer modulus chain)")]
    NotEnoughLimbs {
        /// The operation attempted.
        operation: &'static str,
        /// Limbs of the operand.
        limbs: usize,
    },
    /// A plaintext modulus outside the range supported by HPS scaling.
    #[error("plaintext modulus t = {t} is not supported by HPS scaling: it must satisfy 2 <= t <= {max} (2^60)")]
    InvalidPlaintextModulus {
        /// The modulus given.
        t: u64,
        /// Largest accepted.
        max: u64,
    },
    /// The floating-point path of HPS scaling was requested for moduli it cannot handle exactly.
    #[error("the f64 path of HPS scaling needs fewer than {max_limbs} limbs, all below 2^{max_bits}; got modulus {modulus} ({bits} bits) in a basis of {limbs} limbs: use the wide path")]
    FloatScalingUnavailable {
        /// The widest modulus.
        modulus: u64,
        /// Its bit length.
        bits: u32,
        /// Number of limbs.
        limbs: usize,
        /// Largest supported bit length (exclusive power).
        max_bits: u32,
        /// Limb count limit (exclusive).
        max_limbs: usize,
    },
    /// A number of key-switching digit groups outside `[1, L]`.
    #[error("dnum = {dnum} is invalid for a basis of {limbs} limbs: need 1 <= dnum <= {limbs} (dnum = 1 is GHS key switching, dnum = {limbs} one limb per digit)")]
    InvalidDnum {
        /// The requested number of groups.
        dnum: usize,
        /// Limbs of the basis.
        limbs: usize,
    },
    /// Unusable parameters for a signed base-2^k digit decomposition.
    #[error("invalid digit decomposition with base 2^{base_log} and {count} digits for a {modulus_bits}-bit modulus: {reason}")]
    InvalidDigitDecomposition {
        /// log2 of the base.
        base_log: u32,
        /// Number of digits.
        count: usize,
        /// Bit length of the modulus.
        modulus_bits: u32,
        /// What is wrong and what to do.
        reason: &'static str,
    },
}

/// Result alias of this crate.
pub type Result<T> = std::result::Result<T, Error>;
