//! Errors of the math layer.

use thiserror::Error;

/// Everything that can go wrong in `rnsfhe-math`, each variant carrying the offending value and the limit.
#[derive(Debug, Clone, PartialEq, Error)]
#[non_exhaustive]
pub enum Error {
    /// A modulus outside the supported range `[2, 2^62)`.
    #[error(
        "modulus {value} is not supported: moduli must be in [2, 2^{max_bits}) (got {bits} bits)"
    )]
    ModulusOutOfRange {
        /// The rejected modulus.
        value: u64,
        /// Its bit length.
        bits: u32,
        /// The largest supported bit length (exclusive power).
        max_bits: u32,
    },
    /// The ring degree is not a power of two in the supported range.
    #[error("ring degree N = {n} is not supported: N must be a power of two in [{min}, {max}]")]
    InvalidDegree {
        /// The rejected degree.
        n: usize,
        /// Smallest supported degree.
        min: usize,
        /// Largest supported degree.
        max: usize,
    },
    /// A modulus that is not a prime congruent to 1 mod 2N, so no negacyclic NTT of size N exists.
    #[error("modulus {modulus} does not support a negacyclic NTT of size N = {n}: it must be a prime with p = 1 mod {two_n}")]
    NotNttFriendly {
        /// The modulus.
        modulus: u64,
        /// The ring degree.
        n: usize,
        /// 2N.
        two_n: u64,
    },
    /// An element that has no inverse modulo the modulus.
    #[error("{value} is not invertible modulo {modulus}")]
    NotInvertible {
        /// The element.
        value: u64,
        /// The modulus.
        modulus: u64,
    },
    /// A prime search that could not find enough primes.
    #[error("found only {found} of the {requested} requested primes p = 1 mod {two_n} of {bits} bits{detail}")]
    NotEnoughPrimes {
        /// How many primes were requested.
        requested: usize,
        /// How many were found.
        found: usize,
        /// Target bit size.
        bits: u32,
        /// The congruence 2N.
        two_n: u64,
        /// Extra context (for example the interval searched).
        detail: String,
    },
    /// A bit size outside what a search or sampler supports.
    #[error("{what} = {value} is out of range: it must be in [{min}, {max}]")]
    OutOfRange {
        /// The parameter name.
        what: &'static str,
        /// The value given.
        value: f64,
        /// Smallest accepted value.
        min: f64,
        /// Largest accepted value.
        max: f64,
    },
    /// Two buffers whose lengths must agree do not.
    #[error("length mismatch in {what}: expected {expected}, got {got}")]
    LengthMismatch {
        /// Which buffer.
        what: &'static str,
        /// The expected length.
        expected: usize,
        /// The actual length.
        got: usize,
    },
    /// The operating system's random source (getrandom) failed, so no CSPRNG could be seeded.
    #[error("the operating system random source failed: {detail}; rnsfhe needs getrandom (on Linux the getrandom syscall or a readable /dev/urandom) to seed its CSPRNG")]
    Entropy {
        /// The error reported by the operating system.
        detail: String,
    },
}

/// Result alias of this crate.
pub type Result<T> = std::result::Result<T, Error>;
