//! # rnsfhe-bfv: RNS-BFV in the Halevi-Polyakov-Shoup form
//!
//! Exact arithmetic modulo a plaintext modulus `t` on encrypted vectors (batching) or polynomials
//! (coefficient encoding), after Halevi, Polyakov and Shoup, "An Improved RNS Variant of the BFV
//! Homomorphic Encryption Scheme" (HPS):
//!
//! * [`BfvParams`] / [`BfvContext`]: the ciphertext modulus `Q = q_1 ... q_k`, the auxiliary basis
//!   `P = p_1 ... p_k'` of multiplication (`P >= 2 t N Q`, HPS Section 4.2) and every table of HPS
//!   Section 4.2 ([`params`]).
//! * [`CoeffEncoder`] (any `t >= 2`) and [`BatchEncoder`] (`N` SIMD slots for a prime `t = 1 mod 2N`)
//!   ([`encoder`]).
//! * Keys ([`keys`]): secret and public keys of `rnsfhe-core`; the [`RelinKey`] and [`GaloisKeys`] (the
//!   same [`KeySwitchKey`] construction from `s(X^g)` instead of `s^2`), made by
//!   [`KeyGenerator::relin_key`] and [`KeyGenerator::galois_keys`], in the technique of
//!   [`BfvParams::key_switching`]: HPS CRT decomposition without special primes (optional base-`w`
//!   digits, Sections 3.3 and 4.1; core's [`rnsfhe_core::GadgetCiphertext::product`]) or hybrid key
//!   switching with special primes (core's hybrid gadget, as CKKS; [`KeySwitchTechnique`]).
//! * [`Encryptor`] (public or secret key, `Delta = floor(Q/t)`), [`Decryptor`] (HPS simple scaling,
//!   Sections 2.3 and 4.4) with the diagnostic [`Decryptor::noise_budget`] ([`encryption`]): the scheme's
//!   scalings on top of the RLWE encryptor and decryptor of `rnsfhe-core` in coefficient form, whose
//!   [`rnsfhe_core::RlweCiphertext<Coeff>`](rnsfhe_core::RlweCiphertext) a [`Ciphertext`] wraps.
//! * [`Evaluator`]: addition, subtraction, negation, plaintext and scalar operations, and multiplication
//!   per HPS Section 4.5 (basis extension `Q -> P`, tensor product in `R_QP`, complex scaling, extension
//!   back to `Q`, relinearization), and Galois automorphisms with the same key switching:
//!   [`Evaluator::rotate_rows`] (both rows of the `2 x N/2` batching matrix, left by `step`, Galois
//!   element `3^step mod 2N` as in SEAL), [`Evaluator::rotate_columns`] (row swap, `2N - 1`) and
//!   [`Evaluator::apply_galois`] (any `X -> X^g`, also on coefficient-encoded plaintexts)
//!   ([`evaluator`], [`galois`]).
//! * [`BfvParams::generate`] and [`BfvPreset`]: the parameter selection of HPS Section 6.1 and the rows
//!   of HPS Table 3 ([`generator`]).
//! * The wire format ([`serialization`]): parameters, relinearization and Galois keys, plaintexts and
//!   ciphertexts as versioned bytes (`to_bytes` / `from_bytes`), keys with the seeds of their uniform
//!   parts, and [`Encryptor::encrypt_seeded`] for a [`SeededCiphertext`] of about half the size.
//!
//! ```
//! use rnsfhe_bfv::{BatchEncoder, BfvContext, BfvParams, Decryptor, Encryptor, Evaluator, KeyGenerator};
//! use rnsfhe_math::sampling::Csprng;
//!
//! # fn main() -> Result<(), rnsfhe_bfv::BfvError> {
//! let mut params = BfvParams::with_bit_sizes(12, 65537, 55, 2)?;
//! params.insecure_for_testing = true; // small test parameters (log2 Q = 110 > 109 for N = 2^12)
//! let ctx = BfvContext::new(params)?;
//! let mut rng = Csprng::from_os()?;
//! let keygen = KeyGenerator::new(&ctx, &mut rng)?;
//! let pk = keygen.public_key(&mut rng)?;
//! let rk = keygen.relin_key(&mut rng)?;
//! let encoder = BatchEncoder::new(&ctx)?;
//! let enc = Encryptor::with_public_key(&ctx, &pk)?;
//! let x = enc.encrypt(&encoder.encode_u64(&[1, 2, 3])?, &mut rng)?;
//! let y = enc.encrypt(&encoder.encode_u64(&[4, 5, 6])?, &mut rng)?;
//! let ev = Evaluator::new(&ctx);
//! let z = ev.multiply(&x, &y, &rk)?;
//! let dec = Decryptor::new(&ctx, keygen.secret_key())?;
//! assert_eq!(&encoder.decode_u64(&dec.decrypt(&z)?)?[..3], &[4, 10, 18]);
//! assert!(dec.noise_budget(&z)? > 0.0);
//! // Rotate both rows of the 2 x N/2 slot matrix left by one, then swap the rows.
//! let gk = keygen.galois_keys(&[1], true, &mut rng)?;
//! let rotated = ev.rotate_rows(&z, 1, &gk)?;
//! assert_eq!(&encoder.decode_u64(&dec.decrypt(&rotated)?)?[..2], &[10, 18]);
//! let swapped = ev.rotate_columns(&z, &gk)?;
//! assert_eq!(&encoder.decode_u64(&dec.decrypt(&swapped)?)?[ctx.n() / 2..][..3], &[4, 10, 18]);
//! # Ok(())
//! # }
//! ```

pub mod encoder;
pub mod encryption;
pub mod error;
pub mod evaluator;
pub mod galois;
pub mod generator;
pub mod keys;
pub mod params;
pub mod serialization;

pub use encoder::{BatchEncoder, CoeffEncoder, Plaintext};
pub use encryption::{
    Ciphertext, Decryptor, Encryptor, MAX_BUDGET_LOG_Q, REDUCED_DECRYPTION_MARGIN_BITS,
};
pub use error::{BfvError, BfvResult};
pub use evaluator::Evaluator;
pub use galois::{galois_elements, ROW_ROTATION_GENERATOR};
pub use generator::BfvPreset;
pub use keys::{GaloisKeys, KeyGenerator, KeySwitchKey, PublicKey, RelinKey, SecretKey};
pub use params::{
    max_log_q_128, BfvContext, BfvParams, KeySwitchTechnique, HPS_SIGMA, MAX_PLAINTEXT_MODULUS,
};
pub use rnsfhe_core::serialization::LoadLimits;
pub use rnsfhe_math::wire::{Integrity, MacKey};
/// The basis-conversion modes of [`BfvParams::conversion`] (re-exported from `rnsfhe-ring`).
pub use rnsfhe_ring::ConversionMode;
pub use rnsfhe_ring::{GaloisElement, GaloisGroup};
pub use serialization::{SeededCiphertext, MAX_WIRE_MODULI};
