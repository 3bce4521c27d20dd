//! Errors of the BFV layer.

use thiserror::Error;

/// Everything that can go wrong in `rnsfhe-bfv`; every variant carries the numbers at fault and says
/// what to do.
#[derive(Debug, Clone, PartialEq, Error)]
#[non_exhaustive]
pub enum BfvError {
    /// An error from the RLWE layer (keys, contexts, levels).
    #[error(transparent)]
    Core(#[from] rnsfhe_core::Error),
    /// An error from the ring layer (bases, conversions, scaling, gadgets).
    #[error(transparent)]
    Ring(#[from] rnsfhe_ring::Error),
    /// An error from the math layer (moduli, primes, NTT plans, samplers).
    #[error(transparent)]
    Math(#[from] rnsfhe_math::Error),
    /// Parameters rejected by [`crate::BfvContext::new`] or a parameter helper.
    #[error("invalid BFV parameter {what}: {reason}")]
    InvalidParams {
        /// The parameter at fault.
        what: &'static str,
        /// Why, with the numbers, and what to do.
        reason: String,
    },
    /// A plaintext modulus `t` that these parameters cannot use.
    #[error("plaintext modulus t = {t} is not supported: {reason}")]
    InvalidPlaintextModulus {
        /// The modulus given.
        t: u64,
        /// Why, and what to do.
        reason: String,
    },
    /// The auxiliary basis `P` of HPS multiplication (Section 4.2) is too small for the tensor product.
    #[error("the auxiliary basis P has log2(P) = {log_p:.1} bits but HPS multiplication (Section 4.2) needs P >= 2 t N Q, i.e. at least {needed:.1} bits (log2 Q = {log_q:.1}, log2 t = {log_t:.1}, log2 N = {log_n}); add auxiliary primes")]
    AuxiliaryBasisTooSmall {
        /// `log2(P)`.
        log_p: f64,
        /// The required `log2(2 t N Q)`.
        needed: f64,
        /// `log2(Q)`.
        log_q: f64,
        /// `log2(t)`.
        log_t: f64,
        /// `log2(N)`.
        log_n: u32,
    },
    /// Parameters that the Homomorphic Encryption Standard table does not establish as 128-bit secure,
    /// without the explicit opt-in.
    #[error("insecure BFV parameters: N = {n}, log2 of the key modulus = {log_key_modulus:.1}, sigma = {sigma}: {estimate} (128-bit HE Standard bound for a uniform ternary secret and sigma >= 3.19: {bound}); use a larger N, fewer primes and sigma >= 3.19, or set insecure_for_testing = true for tests")]
    Insecure {
        /// Ring degree.
        n: usize,
        /// `log2` of the largest modulus of a key the parameters make
        /// ([`crate::BfvParams::log2_key_modulus`]): `Q`, or `Q` and the primes keys add to it.
        log_key_modulus: f64,
        /// The table's bound on `log2(Q)` at 128 bits (0 when `N` is below the table).
        bound: u32,
        /// The error standard deviation.
        sigma: f64,
        /// The verdict that failed.
        estimate: rnsfhe_core::SecurityEstimate,
    },
    /// Batching (SIMD slots) needs a prime `t = 1 mod 2N`.
    #[error("batching is unavailable for t = {t} and N = {n}: it needs a prime t = 1 mod 2N = {two_n}; use the coefficient encoder or choose such a t (e.g. 65537 for N <= 2^15)")]
    BatchingUnavailable {
        /// The plaintext modulus.
        t: u64,
        /// Ring degree.
        n: usize,
        /// `2N`.
        two_n: usize,
    },
    /// More values than a plaintext holds.
    #[error("{what}: got {got} values but a plaintext holds at most {max}")]
    TooManyValues {
        /// What was encoded.
        what: &'static str,
        /// Number of values given.
        got: usize,
        /// Capacity (`N` slots or coefficients).
        max: usize,
    },
    /// An object that belongs to another BFV context.
    #[error("{object} belongs to another BFV context: its fingerprint is {got:#018x}, this context's is {expected:#018x} (ring degree, moduli, t and the relinearization decomposition must agree); use objects made with the same parameters")]
    ContextMismatch {
        /// What was passed.
        object: &'static str,
        /// This context's fingerprint.
        expected: u64,
        /// The object's fingerprint.
        got: u64,
    },
    /// A ciphertext with the wrong number of parts for an operation.
    #[error("{operation} needs a ciphertext with {expected} parts, got {got}; relinearize 3-part ciphertexts first")]
    WrongPartCount {
        /// The operation attempted.
        operation: &'static str,
        /// Expected number of parts.
        expected: usize,
        /// Actual number of parts.
        got: usize,
    },
    /// No Galois key for the automorphism a rotation or [`crate::Evaluator::apply_galois`] needs.
    #[error("no Galois key for the {operation}{}: Galois element {element} is not among the generated elements {available:?}; generate it with KeyGenerator::galois_keys (row rotation by r uses 3^r mod 2N, the column swap 2N - 1) and pass those keys", match .step { Some(s) => format!(" by step {s}"), None => String::new() })]
    MissingGaloisKey {
        /// The operation attempted: "row rotation", "column swap" or "Galois automorphism".
        operation: &'static str,
        /// The Galois element `g` of `X -> X^g`.
        element: usize,
        /// The row-rotation step, when the caller asked for a rotation.
        step: Option<i64>,
        /// The Galois elements that do have keys.
        available: Vec<usize>,
    },
    /// The noise budget is computed through `f64` and is not available for a very large `Q`.
    #[error("the noise budget is unavailable for log2(Q) = {log_q:.0} > {max:.0}; decrypt to check correctness instead")]
    NoiseBudgetUnavailable {
        /// `log2(Q)`.
        log_q: f64,
        /// Largest supported `log2(Q)`.
        max: f64,
    },
}

/// Result alias of this crate.
pub type BfvResult<T> = std::result::Result<T, BfvError>;
