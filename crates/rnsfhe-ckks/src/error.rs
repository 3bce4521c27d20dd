//! Errors of `rnsfhe-ckks`: the encoder, the precision statistics and the scheme layer (parameters,
//! context, keys, encryption, evaluator) all report [`Error`](enum@Error).
//!
//! [`Error`](enum@Error) wraps the core's, the ring's and the math layer's errors and adds the encoder's and the
//! scheme-level ones. Every variant carries the numbers at fault (levels are limb counts, as in
//! `rnsfhe-core`; scales are given as `log2`) and says what to do.

use thiserror::Error;

use crate::polynomial::{degree_levels, PolynomialBasis};

/// Everything that can go wrong in `rnsfhe-ckks`; variants carry the values at fault.
#[derive(Debug, Clone, PartialEq, Error)]
#[non_exhaustive]
pub enum Error {
    /// An error of the RLWE layer (keys, key switching, missing Galois key naming the step, ...).
    #[error(transparent)]
    Core(#[from] rnsfhe_core::Error),
    /// An error of the ring layer (basis mismatch, malformed polynomial, ...).
    #[error(transparent)]
    Ring(#[from] rnsfhe_ring::Error),
    /// An error of the math layer (degree, modulus, prime search, samplers).
    #[error(transparent)]
    Math(#[from] rnsfhe_math::Error),
    /// Parameters the HE Standard table does not establish as 128-bit secure, without the explicit
    /// opt-in [`crate::CkksParams::insecure_for_testing`].
    #[error("insecure CKKS parameters: N = {n}, log2(QP) = {log_qp:.1}, secret {secret:?}, sigma = {sigma}: {estimate} (128-bit bound for a uniform ternary secret and sigma >= 3.19: {bound}); use a larger N, fewer or smaller primes, a uniform ternary secret and sigma >= 3.19 (or a 128-bit preset such as Rec128N14), or set insecure_for_testing = true for tests")]
    Insecure {
        /// Ring degree.
        n: usize,
        /// `log2(QP)`.
        log_qp: f64,
        /// The table's 128-bit bound on `log2(QP)` for `N` (0 outside the table).
        bound: u32,
        /// The secret distribution.
        secret: rnsfhe_core::SecretDistribution,
        /// The error standard deviation.
        sigma: f64,
        /// The estimate that failed.
        estimate: rnsfhe_core::SecurityEstimate,
    },
    /// Bytes that do not decode to the object asked for (names the field and byte offset).
    #[error(transparent)]
    Decode(#[from] rnsfhe_math::wire::DecodeError),
    /// A slot count that is not a power of two in `[1, N/2]`.
    #[error("invalid slot count {slots} for N = {n}: it must be a power of two between 1 and N/2 = {max}")]
    InvalidSlots {
        /// The requested slot count.
        slots: usize,
        /// Ring degree.
        n: usize,
        /// Largest slot count, `N/2`.
        max: usize,
    },
    /// More values than slots.
    #[error("{values} values do not fit in {slots} slots: encode at most {slots} values, or use more slots (up to N/2 = {max})")]
    TooManyValues {
        /// Number of values given.
        values: usize,
        /// Slot count requested.
        slots: usize,
        /// Largest slot count, `N/2`.
        max: usize,
    },
    /// A polynomial whose ring degree differs from the encoder's.
    #[error("ring degree mismatch: the encoder is for N = {encoder}, the polynomial or basis has N = {other}")]
    DegreeMismatch {
        /// The encoder's degree.
        encoder: usize,
        /// The operand's degree.
        other: usize,
    },
    /// A scale that is not a positive finite number.
    #[error("scale {scale} is invalid: it must be a finite number > 0 (typically 2^40 to 2^60)")]
    InvalidScale {
        /// The scale given.
        scale: f64,
    },
    /// A NaN or infinite value among the inputs.
    #[error("{what} at index {index} is not finite ({value}): only finite numbers can be encoded")]
    NonFinite {
        /// Which input.
        what: &'static str,
        /// Position in the input.
        index: usize,
        /// The offending value (real or imaginary part).
        value: f64,
    },
    /// Scaled coefficients that do not fit the centered range of the modulus (encoder).
    #[error("scale too large for the modulus: log2(scale) = {log2_scale:.2} gives coefficients up to 2^{log2_max_coeff:.2}, but the modulus only holds |c| < Q/2 = 2^{log2_half_q:.2}; lower the scale, shrink the values, or encode at a higher level")]
    EncodingScaleTooLarge {
        /// `log2` of the scale.
        log2_scale: f64,
        /// `log2` of the largest scaled coefficient (`inf` when not finite).
        log2_max_coeff: f64,
        /// `log2(Q / 2)` of the basis.
        log2_half_q: f64,
    },
    /// Two inputs whose lengths must agree.
    #[error("length mismatch in {what}: expected {expected}, got {got}")]
    LengthMismatch {
        /// Which inputs.
        what: &'static str,
        /// Expected length.
        expected: usize,
        /// Actual length.
        got: usize,
    },
    /// An input that must not be empty.
    #[error("{what} must not be empty")]
    Empty {
        /// Which input.
        what: &'static str,
    },
    /// Parameters rejected by [`crate::CkksContext::new`] or by the parameter generator.
    #[error("invalid CKKS parameter {what}: {reason}")]
    InvalidParams {
        /// The parameter at fault.
        what: &'static str,
        /// Why, with the numbers, and what to do.
        reason: String,
    },
    /// Two operands at different levels, in strict mode (the default evaluator drops the higher one).
    #[error("level mismatch in {operation}: left operand has level {left_level} (limbs) and log2 scale {left_log_scale:.3}, right operand has level {right_level} and log2 scale {right_log_scale:.3}; drop the higher one with Evaluator::drop_to_level, or use a non-strict evaluator")]
    LevelMismatch {
        /// The operation attempted.
        operation: &'static str,
        /// Level (limb count) of the left operand.
        left_level: usize,
        /// `log2` of the left operand's scale.
        left_log_scale: f64,
        /// Level (limb count) of the right operand.
        right_level: usize,
        /// `log2` of the right operand's scale.
        right_log_scale: f64,
    },
    /// Two operands whose scales differ by more than the tolerance and could not be aligned.
    #[error("scale mismatch in {operation}: left operand has level {left_level} (limbs) and log2 scale {left_log_scale:.6}, right operand has level {right_level} and log2 scale {right_log_scale:.6} (relative difference {relative:.3e} > tolerance {tolerance:.3e}); {hint}")]
    ScaleMismatch {
        /// The operation attempted.
        operation: &'static str,
        /// Level (limb count) of the left operand.
        left_level: usize,
        /// `log2` of the left operand's scale.
        left_log_scale: f64,
        /// Level (limb count) of the right operand.
        right_level: usize,
        /// `log2` of the right operand's scale.
        right_log_scale: f64,
        /// `|s_left / s_right - 1|`.
        relative: f64,
        /// The tolerance of the context's rescaling policy.
        tolerance: f64,
        /// What to do.
        hint: &'static str,
    },
    /// An operation needs more levels than the operand has left.
    #[error("not enough levels for {operation}: the operand is at level {level} (limbs) with log2 scale {log_scale:.3}, the operation needs at least level {needed} ({more} more); use parameters with more levels (CkksParams::levels) or rescale less often")]
    NotEnoughLevels {
        /// The operation attempted.
        operation: &'static str,
        /// Level (limb count) of the operand.
        level: usize,
        /// `log2` of its scale.
        log_scale: f64,
        /// The smallest level the operation accepts.
        needed: usize,
        /// How many levels are missing.
        more: usize,
    },
    /// A result scale that leaves no room for the message in the modulus (evaluator).
    #[error("scale too large for the modulus in {operation}: the result would have log2 scale {log_scale:.3} at level {level} (limbs), whose modulus only has log2 Q / 2 = {log_half_q:.3}; rescale the operands first")]
    ScaleTooLarge {
        /// The operation attempted.
        operation: &'static str,
        /// `log2` of the resulting scale.
        log_scale: f64,
        /// The level (limb count).
        level: usize,
        /// `log2(Q_l / 2)`.
        log_half_q: f64,
    },
    /// Operands encoding different numbers of slots.
    #[error("slot count mismatch in {operation}: left operand has {left} slots, right has {right}; encode both with the same slot count")]
    SlotsMismatch {
        /// The operation attempted.
        operation: &'static str,
        /// Slots of the left operand.
        left: usize,
        /// Slots of the right operand.
        right: usize,
    },
    /// A ciphertext, plaintext or key made with other parameters.
    #[error("{object} belongs to another CKKS context: its parameter fingerprint is {got:#018x}, this context's is {expected:#018x}; use objects made with the same parameters")]
    ContextMismatch {
        /// What was passed.
        object: &'static str,
        /// This context's fingerprint.
        expected: u64,
        /// The object's fingerprint.
        got: u64,
    },
    /// An evaluator without the key an operation needs.
    #[error("{operation} needs a {key}, but the evaluator has none; build it with Evaluator::new(ctx).with_relin_key(..) / .with_galois_keys(..) (keys from ckks::KeyGenerator)")]
    MissingKey {
        /// The operation attempted.
        operation: &'static str,
        /// Which key.
        key: &'static str,
    },
    /// An invalid argument (a step count, a level, a non-finite constant, ...).
    #[error("invalid argument to {operation}: {reason}")]
    InvalidArgument {
        /// The operation attempted.
        operation: &'static str,
        /// Why, with the numbers.
        reason: String,
    },
    /// A polynomial that needs more levels than the ciphertext has left
    /// ([`crate::Evaluator::evaluate_polynomial_for`] and the functions built on it): names the levels of
    /// the degree and of the interval map, and what to change.
    #[error("not enough levels for {operation}: the polynomial of degree {degree} ({}) uses {depth} levels ({}), but the ciphertext has {} left (level {level}); use a lower degree (degree 2^k - 1 uses k levels){}, or a context with more levels", basis_name(.basis), depth_parts(*.degree, .basis, *.depth), .level.saturating_sub(1), interval_advice(*.degree, .basis, *.depth))]
    PolynomialTooDeep {
        /// The operation attempted (`"sigmoid"`, `"polyval"`, ...).
        operation: &'static str,
        /// Degree of the polynomial.
        degree: usize,
        /// Its basis (and Chebyshev interval).
        basis: PolynomialBasis,
        /// The levels its evaluation uses ([`crate::Polynomial::depth`]).
        depth: usize,
        /// Level (limbs) of the ciphertext.
        level: usize,
    },
    /// A Newton square root ([`crate::Evaluator::sqrt`], [`crate::Evaluator::inverse_sqrt`]) with more
    /// iterations than the ciphertext has levels for.
    #[error("not enough levels for {operation} with {iterations} Newton iterations: it uses {needed} levels (2 for the degree-3 start, 2 per iteration{}), but the ciphertext has {} left (level {level}); use fewer iterations or a context with more levels", if *.inverse { "" } else { ", 1 for the product x * x^(-1/2)" }, .level.saturating_sub(1))]
    NewtonTooDeep {
        /// `"sqrt"` or `"inv_sqrt"`.
        operation: &'static str,
        /// Newton iterations asked for.
        iterations: usize,
        /// Whether this is `1 / sqrt(x)` (no final product).
        inverse: bool,
        /// The levels the evaluation uses ([`crate::functions::newton_sqrt_depth`]).
        needed: usize,
        /// Level (limbs) of the ciphertext.
        level: usize,
    },
    /// A method name that [`crate::SigmoidMethod`] or [`crate::ExpMethod`] does not
    /// know.
    #[error("unknown {function} method {name:?}: expected {expected}")]
    UnknownMethod {
        /// The function (`"sigmoid"`, `"exp"`).
        function: &'static str,
        /// The name given.
        name: String,
        /// The names accepted.
        expected: &'static str,
    },
    /// A flooded decryption ([`crate::CkksDecryptor::decrypt_flooded`]) whose noise would destroy the
    /// message: the flooding standard deviation `2^bits` must leave at least one bit of precision per slot
    /// (`bits < log2(scale) - log2(sqrt(slots))`) and stay far below the modulus (`bits + 4 < log2(Q_l) - 1`),
    /// and `bits <= 58`.
    #[error("flooding of {bits} bits is too large for this ciphertext: at most {max_bits} bits leave any precision (log2 scale {log2_scale:.2}, {slots} slots, log2 Q_l {log2_q:.2} at level {level}); flooding of b bits leaves about log2(scale) - b - log2(sqrt(slots)) bits of precision: decrypt at a higher level or scale, or flood with fewer bits")]
    FloodingTooLarge {
        /// The flooding bits asked for.
        bits: u32,
        /// The largest number of flooding bits this ciphertext admits (the headroom; 0 if none).
        max_bits: u32,
        /// `log2` of the ciphertext's scale.
        log2_scale: f64,
        /// Number of slots.
        slots: usize,
        /// `log2(Q_l)` of the ciphertext's level.
        log2_q: f64,
        /// The level (limbs).
        level: usize,
    },
    /// An interval `[a, b]` for Chebyshev interpolation ([`crate::chebyshev`]) that is empty, reversed or not
    /// finite.
    #[error("invalid interval [{a}, {b}]: both ends must be finite numbers with a < b (left end a = {a}, right end b = {b})")]
    InvalidInterval {
        /// Left end given.
        a: f64,
        /// Right end given.
        b: f64,
    },
    /// A polynomial degree out of range (Chebyshev interpolation, [`crate::chebyshev`]).
    #[error("invalid polynomial degree {degree}: it must be between 1 and {max}")]
    InvalidDegree {
        /// The degree requested (for a coefficient list, its length minus one).
        degree: usize,
        /// The largest degree accepted.
        max: usize,
    },
    /// A function to interpolate that returned NaN or an infinity at a sample point ([`crate::chebyshev`]).
    #[error("the function to interpolate is not finite at x = {x} (it returned {value}); choose an interval on which it is finite, e.g. one that excludes its poles")]
    NonFiniteFunctionValue {
        /// The sample point.
        x: f64,
        /// The value returned there.
        value: f64,
    },
    /// Parameters of the approximate reduction modulo `q_0` ([`crate::EvalModParams`]) out of range, or
    /// whose promised error bound is not below the message bound `2^-log_message_ratio`.
    #[error("invalid EvalMod parameter {parameter}: {reason}")]
    InvalidEvalMod {
        /// The parameter at fault (`"k"`, `"cos_degree"`, ...).
        parameter: &'static str,
        /// Why, with the numbers, and what to change.
        reason: String,
    },
    /// A bootstrapping circuit ([`crate::BootstrapParams`]) that needs more levels than the context's
    /// chain has: names the levels of each step and the total.
    #[error("bootstrapping needs {needed} levels (limbs) in the chain: {c2s_levels} for CoeffsToSlots, {eval_mod_levels} for EvalMod and {s2c_levels} for SlotsToCoeffs from the top, plus 1 for the output; the context has {available} ({} scaling primes needed, it has {}); use parameters with more levels (CkksParams::levels), fewer DFT levels, or an EvalMod of smaller degree or fewer double angles", .needed.saturating_sub(1), .available.saturating_sub(1))]
    BootstrapTooDeep {
        /// The levels (limbs) the circuit needs, `c2s_levels + eval_mod_levels + s2c_levels + 1`.
        needed: usize,
        /// The context's top level (limbs).
        available: usize,
        /// Levels of CoeffsToSlots.
        c2s_levels: usize,
        /// Levels of EvalMod ([`crate::EvalMod::depth`]).
        eval_mod_levels: usize,
        /// Levels of SlotsToCoeffs.
        s2c_levels: usize,
    },
    /// A key whose lattice estimate ([`rnsfhe_core::lwe_estimator`]) is below
    /// [`crate::encapsulation::MIN_SECURITY_BITS`], generated without the explicit opt-in (the
    /// sparse-secret encapsulation key, [`crate::encapsulation::SparseEncapsulation::security`]).
    #[error("insecure {what}: the lattice estimator gives {bits:.1} bits, below the {minimum} required; use a larger Hamming weight, a smaller q_0 or a larger ring degree, or (tests only) a context with insecure_for_testing")]
    InsecureKey {
        /// The key.
        what: &'static str,
        /// The estimate, in bits.
        bits: f64,
        /// The bits required.
        minimum: f64,
    },
}

/// How [`Error::PolynomialTooDeep`] names a basis.
fn basis_name(basis: &PolynomialBasis) -> String {
    match basis {
        PolynomialBasis::Chebyshev { a, b } => format!("Chebyshev basis on [{a}, {b}]"),
        PolynomialBasis::Power => "power basis".to_string(),
    }
}

/// Whether a polynomial of `degree` and `depth` in `basis` spends a level on the map of its interval
/// onto `[-1, 1]` (its depth exceeds that of the degree alone).
fn maps_interval(degree: usize, basis: &PolynomialBasis, depth: usize) -> Option<(f64, f64)> {
    match basis {
        PolynomialBasis::Chebyshev { a, b } if depth > degree_levels(degree) => Some((*a, *b)),
        _ => None,
    }
}

/// The levels of [`Error::PolynomialTooDeep`] by cause: the degree's, and the interval map's.
fn depth_parts(degree: usize, basis: &PolynomialBasis, depth: usize) -> String {
    let for_degree = degree_levels(degree);
    match maps_interval(degree, basis, depth) {
        Some((a, b)) => {
            format!("{for_degree} for degree {degree}, plus 1 to map [{a}, {b}] onto [-1, 1]")
        }
        None => format!("{for_degree} for degree {degree}"),
    }
}

/// The advice of [`Error::PolynomialTooDeep`] on the interval: one of width 2 maps for free.
fn interval_advice(degree: usize, basis: &PolynomialBasis, depth: usize) -> &'static str {
    match maps_interval(degree, basis, depth) {
        Some(_) => ", an interval of width 2 such as [-1, 1] (whose map uses no level)",
        None => "",
    }
}

/// Result alias of this crate.
pub type Result<T> = std::result::Result<T, Error>;
