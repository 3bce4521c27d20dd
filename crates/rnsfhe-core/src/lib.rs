//! # rnsfhe-core
//!
//! The scheme-agnostic RLWE layer shared by CKKS, BFV and PEGASUS:
//!
//! * [`RlweParams`] / [`RlweContext`]: the modulus chain `Q`, the special primes `P`, the extended basis
//!   `QP`, the hybrid key-switching gadget with `dnum` digits and cached ModUp / ModDown tables
//!   ([`context`]). **A level is a limb count**: level `l` means the basis `q_0 .. q_{l-1}` (the papers'
//!   level `l - 1`).
//! * Gadget ciphertexts ([`gadget`]): [`GadgetCiphertext`] over any [`Gadget`] (hybrid RNS digits with
//!   special primes, CRT digits, signed base-`2^w` digits) and the one gadget product every scheme's key
//!   switching runs through; [`RgswCiphertext`] (a pair of them) and the external product
//!   ([`RlweContext::external_product`], [`rgsw`]).
//! * Keys ([`keys`]): [`SecretKey`], [`PublicKey`], [`KeySwitchKey`] (a gadget ciphertext of the source
//!   secret), [`RelinKey`], [`GaloisKeys`] and the [`KeyGenerator`] (RNS-CKKS Section 4 `KeyGen` /
//!   `KSGen`, hybrid as in Han-Ki Section 2.4).
//! * Encryption ([`encryption`]): [`RlweCiphertext`] typed by form (NTT by default, or coefficient:
//!   [`RlweForm`]), one [`Encryptor`] (public or secret key, seeded ciphertexts) and one [`Decryptor`]
//!   for both forms, on which the schemes add only their encodings and scalings.
//! * Key switching ([`keyswitch`]): [`RlweContext::key_switch`], [`RlweContext::relinearize`],
//!   [`RlweContext::apply_galois`] / [`RlweContext::rotate`] (Galois elements and groups are the
//!   ring's [`GaloisElement`] and [`GaloisGroup`]; each scheme owns its generator), the same in
//!   coefficient form ([`RlweContext::apply_galois_coeff`], for blind rotation) and hoisted
//!   automorphisms ([`HoistedDecomposition`]), in any basis-conversion mode (fast, HPS, Qu-Xu).
//! * Wire encodings of keys and ciphertext parts ([`serialization`], format in
//!   [`rnsfhe_math::wire`]).
//! * Noise estimates ([`noise`]) after RNS-CKKS Appendix A, used by the tests as bounds.
//!
//! All randomness comes from [`rnsfhe_math::sampling::Csprng`]; secrets are zeroized on drop and never
//! printed.

pub mod context;
pub mod encryption;
pub mod error;
pub mod gadget;
pub mod keys;
pub mod keyswitch;
pub mod lwe_estimator;
pub mod noise;
pub mod rgsw;
pub mod samplers;
mod scratch;
pub mod security;
pub mod serialization;

pub use context::{RlweContext, RlweParams, SecretDistribution, DEFAULT_HAMMING_WEIGHT};
pub use encryption::{Decryptor, Encryptor, RlweCiphertext, RlweForm, SeededRlweCiphertext};
pub use error::{Error, Result};
pub use gadget::{long_operation, Gadget, GadgetCiphertext};
pub use keys::{GaloisKeys, KeyGenerator, KeySwitchKey, PublicKey, RelinKey, SecretKey};
pub use keyswitch::HoistedDecomposition;
pub use lwe_estimator::{
    estimate_lwe, estimate_rlwe, LweEstimate, LweEstimatorError, LweParams, LweSecret,
};
pub use noise::{NoiseEstimate, HIGH_PROBABILITY_SIGMAS};
pub use rgsw::RgswCiphertext;
pub use rnsfhe_ring::{ConversionMode, GaloisElement, GaloisGroup};
pub use security::{max_log_qp, SecurityEstimate, SecurityLevel};
