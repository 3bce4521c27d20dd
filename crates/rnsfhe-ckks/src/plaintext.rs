//! CKKS plaintexts and ciphertexts: polynomials with their exact scale and slot count.

use rnsfhe_core::RlweCiphertext;
use rnsfhe_ring::{Ntt, Poly};

use crate::context::CkksContext;
use crate::encoder::Encoder;
use crate::error::{Error, Result};

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
    // Private to the crate: the scale and slot count must stay consistent with the RLWE parts (a wrong
    // scale decodes to wrong values silently), so other crates build one through `Ciphertext::new`.
    pub(crate) inner: RlweCiphertext,
    /// The exact scale `Delta` (product of the operands' scales, divided by each dropped prime).
    pub(crate) scale: f64,
    /// Number of slots (a power of two up to `N/2`).
    pub(crate) slots: usize,
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

    /// A ciphertext of `ctx` from its RLWE parts, exact scale and slot count, checked: 2 or 3 parts over
    /// the basis of the context's chain at their level (`1..=max_level` limbs), `scale` finite and
    /// positive, `slots` a power of two up to `N/2`. The level is that of the parts (their limb count).
    /// For crates that compute on the RLWE layer themselves and hand back a CKKS ciphertext; the scale
    /// is taken as given (it must be the one the parts decrypt at, RNS-CKKS Section 4).
    ///
    /// Errors: [`Error::InvalidArgument`] for a part count other than 2 or 3 or a level off the chain;
    /// [`Error::Ring`] for parts over other moduli than the chain's at that level;
    /// [`Error::InvalidScale`]; [`Error::InvalidSlots`].
    pub fn new(ctx: &CkksContext, inner: RlweCiphertext, scale: f64, slots: usize) -> Result<Self> {
        const OP: &str = "ciphertext construction";
        if !(2..=3).contains(&inner.part_count()) {
            return Err(Error::InvalidArgument {
                operation: OP,
                reason: format!(
                    "a CKKS ciphertext has 2 parts (3 before relinearization), got {}",
                    inner.part_count()
                ),
            });
        }
        let level = inner.level();
        ctx.check_level(level, OP)?;
        let basis = ctx.basis(level)?;
        for part in &inner.parts {
            basis.check_same(part.basis(), OP)?;
        }
        Encoder::check_scale(scale)?;
        ctx.encoder().check_slots(slots)?;
        Ok(Self::from_parts(inner, scale, slots, ctx.fingerprint()))
    }

    /// The RLWE ciphertext (parts over `q_0 .. q_{l-1}`, NTT form).
    pub fn inner(&self) -> &RlweCiphertext {
        &self.inner
    }

    /// The RLWE ciphertext, without the scale and slot count.
    pub fn into_inner(self) -> RlweCiphertext {
        self.inner
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
