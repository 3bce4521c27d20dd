//! In-place additions: `a += b`, `a -= b`, `ct += pt`, `ct -= pt` without a fresh ciphertext.
//!
//! RNS-CKKS `Add` (Cheon-Han-Kim-Kim-Song 2018, Section 3) is one modular addition per residue: a pass
//! over memory that costs about what reading the operands costs, so the allocation (and first touch) of
//! a fresh output is a visible part of [`Evaluator::add`]. The `*_assign` forms here write the sum into
//! the left operand instead, with the same alignment of levels and scales as the out-of-place forms and
//! bit-for-bit the same result: when the operands are already aligned (the common case), nothing is
//! allocated; otherwise the left operand is replaced by its aligned copy first, as [`Evaluator::add`]
//! would have made it.

use std::borrow::Cow;

use rnsfhe_ring::{Ntt, Poly};

use crate::error::Result;
use crate::evaluator::Evaluator;
use crate::plaintext::{Ciphertext, Plaintext};

/// Keeps the owned side of an alignment (a replaced operand); a borrowed side needs nothing.
fn owned<T: Clone>(value: Cow<'_, T>) -> Option<T> {
    match value {
        Cow::Owned(v) => Some(v),
        Cow::Borrowed(_) => None,
    }
}

impl Evaluator {
    /// `a += b` (RNS-CKKS `Add`) in place: the same result as [`Evaluator::add`]`(a, b)`, levels and
    /// scales aligned the same way (`a` takes the aligned level and scale), without allocating when
    /// they already match.
    ///
    /// Errors: as [`Evaluator::add`]; on an error `a` is unchanged.
    pub fn add_assign(&self, a: &mut Ciphertext, b: &Ciphertext) -> Result<()> {
        self.add_sub_assign(a, b, false, "ciphertext addition")
    }

    /// `a -= b` in place: the same result as [`Evaluator::sub`]`(a, b)`. Errors: as [`Evaluator::sub`];
    /// on an error `a` is unchanged.
    pub fn sub_assign(&self, a: &mut Ciphertext, b: &Ciphertext) -> Result<()> {
        self.add_sub_assign(a, b, true, "ciphertext subtraction")
    }

    /// `ct += pt` in place: the same result as [`Evaluator::add_plain`]`(ct, pt)` (the plaintext at the
    /// ciphertext's scale; its level aligned as there). Errors: as [`Evaluator::add_plain`]; on an error
    /// `ct` is unchanged.
    pub fn add_plain_assign(&self, ct: &mut Ciphertext, pt: &Plaintext) -> Result<()> {
        self.add_sub_plain_assign(ct, pt, false, "ciphertext-plaintext addition")
    }

    /// `ct -= pt` in place: the same result as [`Evaluator::sub_plain`]`(ct, pt)`. Errors: as
    /// [`Evaluator::sub_plain`]; on an error `ct` is unchanged.
    pub fn sub_plain_assign(&self, ct: &mut Ciphertext, pt: &Plaintext) -> Result<()> {
        self.add_sub_plain_assign(ct, pt, true, "ciphertext-plaintext subtraction")
    }

    fn add_sub_assign(
        &self,
        a: &mut Ciphertext,
        b: &Ciphertext,
        negate: bool,
        operation: &'static str,
    ) -> Result<()> {
        let (new_a, new_b) = {
            let (x, y) = self.align(a, b, operation, true)?;
            (owned(x), owned(y))
        };
        let b = new_b.as_ref().unwrap_or(b);
        // Both operands are at one level now: the part-wise sums cannot fail on a basis mismatch
        // unless the ciphertexts are malformed, and those errors are returned before `a` changes
        // (checked below, before the first write).
        let target = match new_a {
            Some(aligned) => {
                let mut aligned = aligned;
                Self::combine_parts(&mut aligned, b, negate)?;
                *a = aligned;
                return Ok(());
            }
            None => a,
        };
        for (x, y) in target.inner.parts.iter().zip(&b.inner.parts) {
            x.basis().check_same(y.basis(), operation)?;
        }
        Self::combine_parts(target, b, negate)
    }

    /// `a.parts op= b.parts` part by part; parts `b` has beyond `a`'s are appended (negated for a
    /// difference), as [`Evaluator::add`] and [`Evaluator::sub`] make them.
    fn combine_parts(a: &mut Ciphertext, b: &Ciphertext, negate: bool) -> Result<()> {
        let parts = &mut a.inner.parts;
        for (x, y) in parts.iter_mut().zip(&b.inner.parts) {
            if negate {
                x.sub_assign(y)?;
            } else {
                x.add_assign(y)?;
            }
        }
        for y in b.inner.parts.iter().skip(parts.len()) {
            let mut y = y.clone();
            if negate {
                y.neg_assign();
            }
            parts.push(y);
        }
        Ok(())
    }

    fn add_sub_plain_assign(
        &self,
        ct: &mut Ciphertext,
        pt: &Plaintext,
        negate: bool,
        operation: &'static str,
    ) -> Result<()> {
        let (new_ct, new_poly) = {
            let (c, p) = self.align_plain(ct, pt, operation, true)?;
            (owned(c), owned(p))
        };
        let poly: &Poly<Ntt> = new_poly.as_ref().unwrap_or(pt.poly());
        if let Some(aligned) = new_ct {
            *ct = aligned;
        }
        let first = &mut ct.inner.parts[0];
        if negate {
            first.sub_assign(poly)?;
        } else {
            first.add_assign(poly)?;
        }
        Ok(())
    }
}
