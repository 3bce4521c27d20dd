//! # rnsfhe-ckks
//!
//! RNS-CKKS (Cheon-Han-Kim-Kim-Song, "A Full RNS Variant of Approximate Homomorphic Encryption") for rnsfhe.
//!
//! So far this crate holds:
//!
//! * [`encoder`]: the [`Encoder`], mapping complex (or real) vectors of up to `N/2` slots to scaled integer
//!   polynomials through the inverse canonical embedding (a "special FFT" over the powers of 5) and back,
//!   with sparse packing for fewer slots. Its slot order fixes the meaning of rotations: Galois element
//!   `5^r mod 2N` rotates the slots left by `r`, and `2N - 1` conjugates them (the
//!   [`GaloisGroup`] of [`ROTATION_GENERATOR`], [`CkksContext::galois_group`]).
//! * [`precision`]: [`PrecisionStats`], the min / mean / median / max of the bits of precision over all
//!   slots, the source of every CKKS test threshold.
//! * [`chebyshev`]: [`ChebyshevSeries`], Chebyshev interpolation of any function on an interval with its
//!   approximation error (plaintext; the basis of the sigmoid, exp and 1/x approximations of Section 5.2).
//!
//! * [`polynomial`]: [`Polynomial`] in the power or Chebyshev basis and its homomorphic evaluation
//!   ([`Evaluator::evaluate_polynomial`]) at the minimal depth with exact scales.
//! * [`statistics`]: sums, mean and variance of the slots, inner products, weighted sums (Table 3).
//! * [`functions`]: sigmoid, `exp`, `1/x` (Taylor, CKKS Algorithm 2, Chebyshev), least-squares sigmoids,
//!   square roots by Newton's method (RNS-CKKS Table 2).
//! * [`approximation`]: the method, interval and degree of the sigmoid, `exp` and `1/x` approximations
//!   with their defaults ([`Evaluator::sigmoid`], [`Evaluator::exp`], [`Evaluator::inverse_approx`]),
//!   levels checked with advice ([`Error::PolynomialTooDeep`]).
//! * [`operators`]: arithmetic with any right operand as operators do ([`Evaluator::apply`], with
//!   automatic rescaling and [`Evaluator::dot`]).
//! * [`eval_mod`]: [`EvalMod`], the approximate reduction modulo `q_0` (PEGASUS `F_mod`; scaled cosine,
//!   double angles, optional arcsine) with its depth and error bound ([`Evaluator::eval_mod`]).
//! * [`serialization`]: parameters, plaintexts, ciphertexts and seeded ciphertexts as versioned bytes
//!   ([`Serializable`] / [`Deserializable`]; keys through `rnsfhe_core::serialization`).
//!
//! * [`linear_transform`]: [`LinearTransform`], matrices on the slots held as diagonals, evaluated by
//!   baby-step giant-step with hoisted rotations ([`Evaluator::linear_transform`]).
//!
//! * [`dft`]: the homomorphic DFT, SlotsToCoeffs ([`Evaluator::slots_to_coeffs`], PEGASUS's S2C) and
//!   CoeffsToSlots ([`Evaluator::coeffs_to_slots`]), as 1 to 4 merged sparse factors of the special FFT.
//!
//! * [`bootstrap`]: CKKS bootstrapping ([`Evaluator::bootstrap`] with a [`Bootstrapper`] built from
//!   [`BootstrapParams`]): ModRaise, CoeffsToSlots, EvalMod, SlotsToCoeffs, for full and sparse slots.
//! * [`encapsulation`]: [`SparseEncapsulation`], the modulus raise under a sparse secret (Bossuat et al.,
//!   ACNS 2022) that bootstrapping with a dense secret and PEGASUS's ring packing use.
//!
//! Errors of this crate are [`Error`] (module [`error`]).

pub mod chebyshev;
pub mod encoder;
pub mod error;
pub mod precision;

pub mod approximation;
pub mod assign;
pub mod auto_bootstrap;
pub mod bootstrap;
pub mod context;
pub mod dft;
pub mod encapsulation;
pub mod encryption;
pub mod eval_mod;
pub mod evaluator;
pub mod flooding;
pub mod functions;
pub mod keys;
pub mod linear_transform;
pub mod meta_bootstrap;
pub mod mod_raise;
pub mod operators;
pub mod params;
pub mod plaintext;
pub mod polynomial;
pub mod serialization;
pub mod statistics;

pub use approximation::{ExpMethod, InverseMethod, SigmoidMethod};
pub use bootstrap::{
    BootstrapBound, BootstrapParams, BootstrapStages, Bootstrapper, BootstrappingKeys,
};
pub use context::{
    CkksContext, EXACT_SCALE_TOLERANCE, MAX_BOOTSTRAP_PRIMES, MAX_DIGIT_EXCESS_BITS,
};
pub use dft::{
    dft_factors, plaintext_coefficients, real_value_positions, slot_coefficient_positions,
    CoeffsToSlots, CoeffsToSlotsOutput, CoeffsToSlotsResult, DftDirection, SlotsToCoeffs,
    MAX_DFT_LEVELS,
};
pub use encapsulation::{SparseEncapsulation, DEFAULT_SPARSE_WEIGHT};
pub use encryption::{CkksDecryptor, CkksEncryptor, SlotValues};
pub use eval_mod::{EvalMod, EvalModBound, EvalModParams};
pub use evaluator::Evaluator;
pub use flooding::{
    flooded_precision_bits, recommended_flooding_bits, DEFAULT_STATISTICAL_SECURITY,
    MAX_FLOODING_BITS,
};
pub use keys::{GaloisKeys, KeyGenerator, KeySet, PublicKey, RelinKey, SecretKey};
pub use linear_transform::{EncodedLinearTransform, LinearTransform};
pub use meta_bootstrap::MetaBootstrapBound;
pub use operators::{BinaryOp, Operand};
pub use params::{CkksParams, Preset, RescalingPolicy};
pub use plaintext::{Ciphertext, Plaintext};
pub use polynomial::{Polynomial, PolynomialBasis};
pub use rnsfhe_core::security::{self, max_log_qp, SecurityEstimate, SecurityLevel};
pub use rnsfhe_core::serialization::LoadLimits;
pub use rnsfhe_core::{ConversionMode, RlweCiphertext, SecretDistribution};
pub use rnsfhe_math::sampling::Csprng;
pub use rnsfhe_math::wire::{
    DecodeError, Deserializable, Integrity, MacKey, PublicRandomness, Serializable,
};
pub use rnsfhe_ring::{GaloisElement, GaloisGroup};
pub use serialization::SeededCiphertext;

pub use chebyshev::ChebyshevSeries;
pub use encoder::{Encoder, ROTATION_GENERATOR};
pub use error::{Error, Result};
pub use num_complex::Complex64;
pub use precision::{PartStats, PrecisionStats, PRECISION_CAP_BITS};
