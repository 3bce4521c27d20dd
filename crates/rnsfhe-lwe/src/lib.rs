//! # rnsfhe-lwe
//!
//! LWE ciphertexts, the half of PEGASUS (Lu et al., IEEE S&P 2021) that evaluates non-polynomial
//! functions: CKKS slots become LWE ciphertexts by sample extraction, LWE ciphertexts are key-switched to a
//! small dimension and go through look-up tables by blind rotation, and the results are repacked into
//! CKKS.
//!
//! * [`LweDimension`]: the dimension as a type ([`dimension`]).
//! * [`LweCiphertext`]: `(b, a)` over one modulus with addition, subtraction, integer multiples, public
//!   additions and modulus switching ([`ciphertext`]).
//! * [`LweSecretKey`]: ternary secrets, encryption and decryption for clients and tests ([`secret`]).
//! * [`extract()`] / [`extract_many`]: sample extraction of RLWE coefficients (PEGASUS Section II.C).
//! * [`LweSwitchingKey`]: key switching between dimensions in the ring form of PEGASUS Fig. 9, on the
//!   core's gadget ciphertexts ([`keyswitch`]).
//! * [`BlindRotationKey`] (RGSW encryptions of the LWE key, and automorphism keys for the algorithm of
//!   Lee et al.) and blind rotation by one of three algorithms ([`BlindRotation`]: PEGASUS Fig. 2 steps
//!   3-6 for ternary keys, the binary-key form, and the automorphism-based LMKCDEY of Eurocrypt 2023;
//!   [`blind_rotation`]); [`LookupTable`] and [`LutEvaluator`]: any function as a look-up table on LWE
//!   ciphertexts of any modulus `q >= 2n` ([`lut`], PEGASUS Section III.B).
//! * [`PegasusPreset`] / [`PegasusParams`]: the parameter sets (PEGASUS Table IV and variants) and their
//!   estimated security ([`params`]).
//! * Wire encodings of every object above ([`serialization`], format in [`rnsfhe_math::wire`]):
//!   ciphertexts load into an [`LweSpace`], switching keys into an [`LweSwitchingKeyContext`], tables and
//!   blind-rotation keys into the look-up-table ring; secret keys only through explicitly named
//!   functions.
//!
//! Conventions follow PEGASUS Section II.B: `LWE_s^{n,q}(m) = (m + e - <a, s>, a)`, decrypted by the
//! phase `b + <a, s>`; RLWE ciphertexts `(c_0, c_1)` decrypt to `c_0 + c_1 s` as in `rnsfhe-core`.

pub mod blind_rotation;
pub mod ciphertext;
pub mod dimension;
pub mod error;
pub mod extract;
pub mod keyswitch;
pub mod lut;
pub mod params;
pub mod secret;
pub mod security;
pub mod serialization;

pub use blind_rotation::{BlindRotation, BlindRotationKey, LMKCDEY_DEFAULT_WINDOW};
pub use ciphertext::{LweCiphertext, ModulusSwitch};
pub use dimension::{LweDimension, MAX_LWE_DIMENSION};
pub use error::{LweError, LweResult};
pub use extract::{extract, extract_many};
pub use keyswitch::{LweKeySwitchParams, LweSwitchingKey, LweSwitchingKeyContext};
pub use lut::{LookupTable, LutEvaluator, LutParams};
pub use params::{PegasusParams, PegasusPreset, PegasusSecurity};
pub use secret::{LweSecretDistribution, LweSecretKey};
pub use security::MIN_SECURITY_BITS;
pub use serialization::LweSpace;
