//! CKKS plaintexts and ciphertexts: polynomials with their exact scale and slot count.

use rnsfhe_core::RlweCiphertext;
use rnsfhe_ring::{Ntt, Poly};

/// An encoded message (RNS-CKKS Section 2.1: `m = round(Delta * tau^-1(z))`) in NTT form over a prefix of
/// the chain, with the scale `Delta` it was encoded at and its slot count.
#[derive(Clone, Debug, PartialEq)]
pub struct Plaintext {
    poly: Poly<Ntt>,
    scale: f64,
    slots: usize,
    fingerprint: u64,
}

impl Plaintext {
    pub(crate) fn from_parts(poly: Poly<Ntt>, scale: f64, slots: usize, fingerprint: u64) -> Self {
        Self {
            poly,
            scale,
            slots,
            fingerprint,
        }
    }

    /// The polynomial (NTT form).
    pub fn poly(&self) -> &Poly<Ntt> {
        &self.poly
    }

    /// The scale `Delta` (exact, as a double).
    pub fn scale(&self) -> f64 {
        self.scale
    }

    /// Number of slots encoded (a power of two up to `N/2`).
    pub fn slots(&self) -> usize {
        self.slots
    }

    /// The level: number of limbs of the polynomial.
    pub fn level(&self) -> usize {
        self.poly.limb_count()
    }

    /// Fingerprint of the context the plaintext belongs to.
    pub fn fingerprint(&self) -> u64 {
        self.fingerprint
    }
}

/// A CKKS ciphertext: an RLWE ciphertext (2 parts, or 3 before relinearization) at level `l` (its limb
/// count, as in `rnsfhe-core`), decrypting to `Delta * z + e` where `Delta` is the exact [`scale`]
/// and `z` the encrypted slots (RNS-CKKS Section 4).
///
/// [`scale`]: Ciphertext::scale
#[derive(Clone, Debug, PartialEq)]
pub struct Ciphertext {
    /// The RLWE ciphertext.
    pub inner: RlweCiphertext,
    /// The exact scale `Delta` (product of the operands' scales, divided by each dropped prime).
    pub scale: f64,
    /// Number of slots (a power of two up to `N/2`).
    pub slots: usize,
    pub(crate) fingerprint: u64,
}

impl Ciphertext {
    pub(crate) fn from_parts(
        inner: RlweCiphertext,
        scale: f64,
        slots: usize,
        fingerprint: u64,
    ) -> Self {
        Self {
            inner,
            scale,
            slots,
            fingerprint,
        }
    }

    /// The level: number of limbs `l` (the ciphertext lives modulo `q_0 .. q_{l-1}`); `l - 1` more
    /// rescalings are possible.
    pub fn level(&self) -> usize {
        self.inner.level()
    }

    /// The exact scale.
    pub fn scale(&self) -> f64 {
        self.scale
    }

    /// `log2` of the scale.
    pub fn log2_scale(&self) -> f64 {
        self.scale.log2()
    }

    /// Number of slots.
    pub fn slots(&self) -> usize {
        self.slots
    }

    /// Number of RLWE parts (2, or 3 after a multiplication without relinearization).
    pub fn part_count(&self) -> usize {
        self.inner.part_count()
    }

    /// Fingerprint of the context the ciphertext belongs to.
    pub fn fingerprint(&self) -> u64 {
        self.fingerprint
    }
}
