//! # rnsfhe-ckks
//!
//! RNS-CKKS (Cheon-Han-Kim-Kim-Song, "A Full RNS Variant of Approximate Homomorphic Encryption") for rnsfhe.
//!
//! So far this crate holds:
//!
//! * [`encoder`]: the [`Encoder`], mapping complex (or real) vectors of up to `N/2` slots to scaled integer
//!   polynomials through the inverse canonical embedding (a "special FFT" over the powers of 5) and back,
//!   with sparse packing for fewer slots. Its slot order fixes the meaning of rotations: Galois element
//!   `5^r mod 2N` rotates the slots left by `r`, and `2N - 1` conjugates them.
//! * [`precision`]: [`PrecisionStats`], the min / mean / median / max of the bits of precision over all
//!   slots, the source of every CKKS test threshold.
//!
//! Errors of this crate are [`Error`] (module [`error`]).

pub mod encoder;
pub mod precision;

pub mod ckks_error;
pub mod context;
pub mod encryption;
pub mod evaluator;
pub mod keys;
pub mod params;
pub mod plaintext;

pub use ckks_error::{CkksError, CkksResult};
pub use context::{CkksContext, EXACT_SCALE_TOLERANCE};
pub use encryption::{CkksDecryptor, CkksEncryptor, SlotValues};
pub use evaluator::Evaluator;
pub use keys::{GaloisKeys, KeyGenerator, KeySet, PublicKey, RelinKey, SecretKey};
pub use params::{CkksParams, Preset, RescalingPolicy};
pub use plaintext::{Ciphertext, Plaintext};
pub use rnsfhe_core::security::{self, max_log_qp, SecurityEstimate, SecurityLevel};
pub use rnsfhe_core::{ConversionMode, SecretDistribution};
pub use rnsfhe_math::sampling::Csprng;

pub use encoder::Encoder;
pub use error::{Error, Result};
pub use num_complex::Complex64;
pub use precision::{PartStats, PrecisionStats, PRECISION_CAP_BITS};

/// Errors of the CKKS layer.
pub mod error {
    use thiserror::Error;

    /// Everything that can go wrong in `rnsfhe-ckks`; variants carry the values at fault.
    #[derive(Debug, Clone, PartialEq, Error)]
    pub enum Error {
        /// An error from the ring layer (basis mismatch, malformed polynomial, ...).
        #[error(transparent)]
        Ring(#[from] rnsfhe_ring::Error),
        /// An error from the math layer (degree, modulus, ...).
        #[error(transparent)]
        Math(#[from] rnsfhe_math::Error),
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
        #[error(
            "scale {scale} is invalid: it must be a finite number > 0 (typically 2^40 to 2^60)"
        )]
        InvalidScale {
            /// The scale given.
            scale: f64,
        },
        /// A NaN or infinite value among the inputs.
        #[error(
            "{what} at index {index} is not finite ({value}): only finite numbers can be encoded"
        )]
        NonFinite {
            /// Which input.
            what: &'static str,
            /// Position in the input.
            index: usize,
            /// The offending value (real or imaginary part).
            value: f64,
        },
        /// Scaled coefficients that do not fit the centered range of the modulus.
        #[error("scale too large for the modulus: log2(scale) = {log2_scale:.2} gives coefficients up to 2^{log2_max_coeff:.2}, but the modulus only holds |c| < Q/2 = 2^{log2_half_q:.2}; lower the scale, shrink the values, or encode at a higher level")]
        ScaleTooLarge {
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
    }

    /// Result alias of this crate.
    pub type Result<T> = std::result::Result<T, Error>;
}
