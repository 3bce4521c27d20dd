//! # rnsfhe-math
//!
//! The bottom layer of rnsfhe: word-size modular arithmetic for moduli below 2^62 ([`Modulus`], Barrett
//! and Shoup multiplication), prime search ([`primes`]: near-power-of-two chains after RNS-CKKS
//! Appendix B, the Qu-Xu eta search and generation of Algorithms 2 and 3, generic NTT primes),
//! negacyclic NTT plans ([`NttPlan`], backed by `tfhe-ntt`) and samplers over a ChaCha20 CSPRNG
//! ([`sampling`]) and the versioned binary format every object uses on the wire ([`wire`]).
//!
//! This crate knows nothing of polynomials with several moduli; that is `rnsfhe-ring`.

mod chacha;
pub mod error;
pub mod modulus;
pub mod ntt;
pub mod primes;
pub mod sampling;
pub mod simd;
pub mod wire;

pub use error::{Error, Result};
pub use modulus::{Modulus, ShoupConstant, MAX_MODULUS_BITS};
pub use ntt::{NttPlan, ReferenceNtt};
