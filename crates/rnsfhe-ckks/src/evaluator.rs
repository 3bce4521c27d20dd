//! The CKKS evaluator: arithmetic on ciphertexts with level and scale management (RNS-CKKS Section 4:
//! `Add`, `Mult`, `RS`; rotations and conjugation by key switching; Section 5.2: sums of slots).
//!
//! # Levels and scales
//!
//! Levels count limbs (as in `rnsfhe-core`): a ciphertext at level `l` lives modulo `q_0 .. q_{l-1}` and
//! can be rescaled `l - 1` more times. Every ciphertext carries its exact scale: a product has the product
//! of the scales, [`Evaluator::rescale`] divides by the dropped prime `q_{l-1}` exactly.
//!
//! Binary operations align their operands first. The **default** evaluator ([`Evaluator::new`]):
//!
//! 1. **scales**: if `|s_a / s_b - 1|` exceeds the context's tolerance
//!    ([`crate::CkksContext::scale_tolerance`]: `2^-40` for exact scales, the basis approximation error
//!    `16 * 2^-eta` for the paper's fixed nominal scale), one operand is brought to the other's scale:
//!    * if the ratio of the scales is (within the tolerance) an integer `k >= 2`, the operand with the
//!      smaller scale is multiplied by `k` (no level used);
//!    * otherwise the operand with the **higher level** (the left one on a tie) is multiplied by the
//!      integer `round(r q)`, `r` the ratio of the scales and `q` the prime its next rescaling drops, and
//!      rescaled: its scale becomes the other's up to a relative `2^-log2(q)`, at the cost of one of its
//!      levels (often free, since the lower operand would have forced a drop anyway);
//!    * when neither is possible (both at level 1), [`Error::ScaleMismatch`] is returned;
//! 2. **levels**: the operand with the higher level is dropped to the other's level (limbs removed,
//!    scale unchanged);
//! 3. additions and subtractions return the left operand's scale (the right one differs from it by at most
//!    the tolerance, a relative error of the same size on the right operand's slots).
//!
//! A **strict** evaluator ([`Evaluator::strict`]) does neither: operands at different levels, or with
//! scales differing by more than the tolerance, give [`Error::LevelMismatch`] /
//! [`Error::ScaleMismatch`], naming the operation and both operands' level and `log2` scale.
//!
//! Plaintext operands are dropped to the ciphertext's level freely (dropping limbs of an encoding is
//! exact); a plaintext at a lower level than the ciphertext drops the ciphertext (default) or is an error
//! (strict). Encode plaintexts at the ciphertext's scale ([`Evaluator::encode_like`]) to avoid scale
//! corrections.
//!
//! Constants are encoded on the fly: additions at the ciphertext's scale, multiplications at the scale
//! `q_{l-1}` of the prime the next rescaling drops, so that [`Evaluator::rescale`] restores the
//! ciphertext's scale exactly (the "next prime" choice of the exact-scale policy, used for both policies).

use std::borrow::Cow;
use std::sync::Arc;

use rayon::prelude::*;

use rnsfhe_core::{GaloisKeys, RelinKey, RlweCiphertext};
use rnsfhe_math::Modulus;
use rnsfhe_ring::{Ntt, Poly};

use crate::context::CkksContext;
use crate::encapsulation::SparseEncapsulation;
use crate::error::{Error, Result};
use crate::plaintext::{Ciphertext, Plaintext};
use crate::Complex64;

/// Homomorphic operations on [`Ciphertext`]s of one [`CkksContext`].
///
/// Holds the context and, optionally, the relinearization key, Galois keys and the sparse-secret
/// encapsulation of bootstrapping; no mutable state, so it is
/// `Send + Sync` and can be shared by threads.
#[derive(Clone, Debug)]
pub struct Evaluator {
    ctx: Arc<CkksContext>,
    // Shared, not owned: an evaluator made from keys the caller keeps (a Python key set, a server's
    // loaded keys) must not copy them; at N = 2^16 bootstrapping's Galois keys are gigabytes.
    relin: Option<Arc<RelinKey>>,
    galois: Option<Arc<GaloisKeys>>,
    /// The sparse-secret encapsulation of bootstrapping's raise ([`crate::bootstrap`]).
    encapsulation: Option<Arc<SparseEncapsulation>>,
    strict: bool,
    auto_rescale: bool,
    /// Automatic bootstrapping, opt-in ([`crate::auto_bootstrap`]).
    pub(crate) auto_bootstrap: Option<Arc<crate::auto_bootstrap::AutoBootstrap>>,
}

/// `|a / b - 1|`.
fn relative_difference(a: f64, b: f64) -> f64 {
    (a / b - 1.0).abs()
}

/// The residue modulo `m` of an integer-valued finite `f64` (any magnitude).
pub(crate) fn f64_residue(v: f64, m: &Modulus) -> u64 {
    if v.abs() < 9.0e18 {
        return m.reduce_i64(v as i64);
    }
    let bits = v.abs().to_bits();
    let exp = ((bits >> 52) & 0x7ff) as i64 - 1075;
    let mant = (bits & ((1u64 << 52) - 1)) | (1u64 << 52);
    // |v| >= 2^63 implies exp > 0.
    let r = m.mul(m.reduce(mant), m.pow(2, exp.max(0) as u64));
    if v < 0.0 {
        m.neg(r)
    } else {
        r
    }
}

impl Evaluator {
    /// An evaluator without keys that aligns levels and scales automatically (see the
    /// [module documentation](self)).
    pub fn new(ctx: &Arc<CkksContext>) -> Self {
        Self {
            ctx: Arc::clone(ctx),
            relin: None,
            galois: None,
            encapsulation: None,
            strict: false,
            auto_rescale: false,
            auto_bootstrap: None,
        }
    }

    /// A strict evaluator: level or scale mismatches are errors instead of being corrected.
    pub fn strict(ctx: &Arc<CkksContext>) -> Self {
        Self {
            strict: true,
            ..Self::new(ctx)
        }
    }

    /// Adds the relinearization key (needed by [`Evaluator::multiply`], [`Evaluator::square`],
    /// [`Evaluator::relinearize`]).
    ///
    /// Errors: [`Error::ContextMismatch`] for a key of other parameters.
    pub fn with_relin_key(mut self, rk: impl Into<Arc<RelinKey>>) -> Result<Self> {
        let rk = rk.into();
        self.ctx
            .check_fingerprint(rk.key().fingerprint(), "relinearization key")?;
        self.relin = Some(rk);
        Ok(self)
    }

    /// Adds Galois keys (needed by rotations, conjugation and sums of slots): owned, or shared with the
    /// caller as an `Arc` (not copied).
    ///
    /// Errors: [`Error::ContextMismatch`] for keys of other parameters.
    pub fn with_galois_keys(mut self, gk: impl Into<Arc<GaloisKeys>>) -> Result<Self> {
        let gk = gk.into();
        self.ctx
            .check_fingerprint(gk.fingerprint(), "Galois keys")?;
        self.galois = Some(gk);
        Ok(self)
    }

    /// Adds the sparse-secret encapsulation keys (needed by [`Evaluator::bootstrap`] with a
    /// [`crate::Bootstrapper`] whose [`crate::BootstrapParams::sparse_secret`] is set; made by
    /// [`crate::KeyGenerator::bootstrapping_keys`]).
    ///
    /// Errors: [`Error::ContextMismatch`] for keys of other parameters.
    pub fn with_encapsulation(mut self, enc: Arc<SparseEncapsulation>) -> Result<Self> {
        self.ctx.check_fingerprint(
            enc.to_dense_key().fingerprint(),
            "sparse-secret encapsulation key",
        )?;
        self.encapsulation = Some(enc);
        Ok(self)
    }

    /// The sparse-secret encapsulation keys, if any ([`Evaluator::with_encapsulation`]).
    pub fn encapsulation(&self) -> Option<&Arc<SparseEncapsulation>> {
        self.encapsulation.as_ref()
    }

    /// Sets automatic rescaling: with it, the products of [`Evaluator::apply`] and
    /// [`Evaluator::finish_product`] are rescaled (one level) while a level is left, as the Python
    /// operators do; without it (the default), every rescaling is the caller's.
    pub fn with_auto_rescale(mut self, on: bool) -> Self {
        self.auto_rescale = on;
        self
    }

    /// Whether products are rescaled automatically ([`Evaluator::with_auto_rescale`]).
    pub fn auto_rescale(&self) -> bool {
        self.auto_rescale
    }

    /// Whether the evaluator has a relinearization key.
    pub fn has_relin_key(&self) -> bool {
        self.relin.is_some()
    }

    /// The relinearization key, if any (to send a running evaluator's keys on).
    pub fn relin(&self) -> Option<&RelinKey> {
        self.relin.as_deref()
    }

    /// The Galois keys, if any.
    pub fn galois(&self) -> Option<&GaloisKeys> {
        self.galois.as_deref()
    }

    /// The context.
    pub fn context(&self) -> &Arc<CkksContext> {
        &self.ctx
    }

    /// Whether this evaluator is strict.
    pub fn is_strict(&self) -> bool {
        self.strict
    }

    // ----------------------------------------------------------------------------------------------
    // Checks and alignment
    // ----------------------------------------------------------------------------------------------

    pub(crate) fn check_ct(&self, ct: &Ciphertext) -> Result<()> {
        self.ctx.check_fingerprint(ct.fingerprint(), "ciphertext")
    }

    fn check_slots(&self, a: usize, b: usize, operation: &'static str) -> Result<()> {
        if a != b {
            return Err(Error::SlotsMismatch {
                operation,
                left: a,
                right: b,
            });
        }
        Ok(())
    }

    fn level_mismatch(
        operation: &'static str,
        (l1, s1): (usize, f64),
        (l2, s2): (usize, f64),
    ) -> Error {
        Error::LevelMismatch {
            operation,
            left_level: l1,
            left_log_scale: s1.log2(),
            right_level: l2,
            right_log_scale: s2.log2(),
        }
    }

    fn scale_mismatch(
        &self,
        operation: &'static str,
        (l1, s1): (usize, f64),
        (l2, s2): (usize, f64),
        hint: &'static str,
    ) -> Error {
        Error::ScaleMismatch {
            operation,
            left_level: l1,
            left_log_scale: s1.log2(),
            right_level: l2,
            right_log_scale: s2.log2(),
            relative: relative_difference(s1, s2),
            tolerance: self.ctx.scale_tolerance(),
            hint,
        }
    }

    fn scales_match(&self, a: f64, b: f64) -> bool {
        relative_difference(a, b) <= self.ctx.scale_tolerance()
    }

    /// Multiplies by the integer `round(r q)` and rescales by `q` (the prime the next rescaling drops), so
    /// that the scale is multiplied by `r` up to `2^-log2(q)`; costs one level.
    pub(crate) fn adjust_scale(
        &self,
        ct: &Ciphertext,
        target: f64,
        operation: &'static str,
    ) -> Result<Ciphertext> {
        self.check_levels(ct, 1, operation)?;
        let level = ct.level();
        let q = self.ctx.q_moduli()[level - 1] as f64;
        let c = (target / ct.scale() * q).round();
        if !(c.is_finite() && c >= 1.0) {
            return Err(Error::InvalidArgument {
                operation,
                reason: format!(
                    "cannot bring log2 scale {:.3} to {:.3}",
                    ct.log2_scale(),
                    target.log2()
                ),
            });
        }
        let basis = self.ctx.basis(level)?;
        let residues: Vec<u64> = basis.moduli().iter().map(|m| f64_residue(c, m)).collect();
        let mut parts = ct.inner.parts.clone();
        for p in parts.iter_mut() {
            p.mul_scalars_assign(&residues)?;
        }
        let scaled = Ciphertext::from_parts(
            RlweCiphertext { parts },
            ct.scale() * c,
            ct.slots(),
            ct.fingerprint(),
        );
        self.rescale(&scaled)
    }

    /// Brings two ciphertexts to one level and (within the tolerance) one scale, as documented in the
    /// module documentation.
    /// Operands that need no change are borrowed, not copied.
    pub(crate) fn align<'a>(
        &self,
        a: &'a Ciphertext,
        b: &'a Ciphertext,
        operation: &'static str,
        match_scales: bool,
    ) -> Result<(Cow<'a, Ciphertext>, Cow<'a, Ciphertext>)> {
        self.check_ct(a)?;
        self.check_ct(b)?;
        self.check_slots(a.slots(), b.slots(), operation)?;
        let ia = (a.level(), a.scale());
        let ib = (b.level(), b.scale());
        if self.strict {
            if a.level() != b.level() {
                return Err(Self::level_mismatch(operation, ia, ib));
            }
            if match_scales && !self.scales_match(a.scale(), b.scale()) {
                return Err(self.scale_mismatch(
                    operation,
                    ia,
                    ib,
                    "bring the operands to one scale (Evaluator::multiply_int, multiply_const + rescale), or use a non-strict evaluator",
                ));
            }
            return Ok((Cow::Borrowed(a), Cow::Borrowed(b)));
        }
        let (mut a, mut b) = (Cow::Borrowed(a), Cow::Borrowed(b));
        if match_scales && !self.scales_match(a.scale(), b.scale()) {
            let (big, small) = if a.scale() >= b.scale() {
                (a.scale(), b.scale())
            } else {
                (b.scale(), a.scale())
            };
            let ratio = big / small;
            let k = ratio.round();
            if (2.0..9.0e18).contains(&k)
                && relative_difference(ratio, k) <= self.ctx.scale_tolerance()
            {
                let target = if a.scale() < b.scale() {
                    &mut a
                } else {
                    &mut b
                };
                // Same message, scale times k.
                let mut scaled = self.multiply_int(target, k as i64)?;
                scaled.scale *= k;
                *target = Cow::Owned(scaled);
            } else if a.level() >= b.level() && a.level() >= 2 {
                a = Cow::Owned(self.adjust_scale(&a, b.scale(), operation)?);
            } else if b.level() >= 2 {
                b = Cow::Owned(self.adjust_scale(&b, a.scale(), operation)?);
            } else {
                return Err(self.scale_mismatch(
                    operation,
                    ia,
                    ib,
                    "both operands are at level 1, so neither can be brought to the other's scale; align scales before the last level",
                ));
            }
        }
        let level = a.level().min(b.level());
        if a.level() > level {
            a = Cow::Owned(self.drop_to_level(&a, level)?);
        }
        if b.level() > level {
            b = Cow::Owned(self.drop_to_level(&b, level)?);
        }
        Ok((a, b))
    }

    /// Brings a ciphertext and a plaintext to one level (and scale, for additions).
    pub(crate) fn align_plain<'a>(
        &self,
        ct: &'a Ciphertext,
        pt: &'a Plaintext,
        operation: &'static str,
        match_scales: bool,
    ) -> Result<(Cow<'a, Ciphertext>, Cow<'a, Poly<Ntt>>)> {
        self.check_ct(ct)?;
        self.ctx.check_fingerprint(pt.fingerprint(), "plaintext")?;
        self.check_slots(ct.slots(), pt.slots(), operation)?;
        let ic = (ct.level(), ct.scale());
        let ip = (pt.level(), pt.scale());
        let mut ct = Cow::Borrowed(ct);
        if match_scales && !self.scales_match(ct.scale(), pt.scale()) {
            if self.strict || ct.level() < 2 || pt.level() < ct.level() - 1 {
                return Err(self.scale_mismatch(
                    operation,
                    ic,
                    ip,
                    "encode the plaintext at the ciphertext's scale (Evaluator::encode_like)",
                ));
            }
            ct = Cow::Owned(self.adjust_scale(&ct, pt.scale(), operation)?);
        }
        if pt.level() < ct.level() {
            if self.strict {
                return Err(Self::level_mismatch(operation, ic, ip));
            }
            ct = Cow::Owned(self.drop_to_level(&ct, pt.level())?);
        }
        let basis = self.ctx.basis(ct.level())?;
        if pt.level() == ct.level() && Arc::ptr_eq(pt.poly().basis(), basis) {
            return Ok((ct, Cow::Borrowed(pt.poly())));
        }
        let mut poly = pt.poly().drop_to(ct.level())?;
        poly.rebase(basis)?;
        Ok((ct, Cow::Owned(poly)))
    }

    /// Errors with the levels needed and available unless `ct` can lose `depth` levels.
    pub(crate) fn check_levels(
        &self,
        ct: &Ciphertext,
        depth: usize,
        operation: &'static str,
    ) -> Result<()> {
        if ct.level() < depth + 1 {
            return Err(Error::NotEnoughLevels {
                operation,
                level: ct.level(),
                log_scale: ct.log2_scale(),
                needed: depth + 1,
                more: depth + 1 - ct.level(),
            });
        }
        Ok(())
    }

    pub(crate) fn check_product_scale(
        &self,
        level: usize,
        scale: f64,
        operation: &'static str,
    ) -> Result<()> {
        let log_half_q = self.ctx.basis(level)?.log2_product() - 1.0;
        if !(scale.is_finite() && scale.log2() < log_half_q) {
            return Err(Error::ScaleTooLarge {
                operation,
                log_scale: scale.log2(),
                level,
                log_half_q,
            });
        }
        Ok(())
    }

    pub(crate) fn wrap(&self, inner: RlweCiphertext, scale: f64, slots: usize) -> Ciphertext {
        Ciphertext::from_parts(inner, scale, slots, self.ctx.fingerprint())
    }

    /// `(round(c.re * scale), round(c.im * scale))`, checked: finite, and within half the modulus at
    /// `level`.
    fn rounded_constant(
        &self,
        c: Complex64,
        scale: f64,
        level: usize,
        operation: &'static str,
    ) -> Result<(f64, f64)> {
        for part in [c.re, c.im] {
            if !part.is_finite() {
                return Err(Error::InvalidArgument {
                    operation,
                    reason: format!("the constant {c} is not finite"),
                });
            }
        }
        let basis = self.ctx.basis(level)?;
        let (re, im) = ((c.re * scale).round(), (c.im * scale).round());
        let log_half_q = basis.log2_product() - 1.0;
        let max = re.abs().max(im.abs());
        if max > 0.0 && max.log2() >= log_half_q - 1e-9 {
            return Err(Error::ScaleTooLarge {
                operation,
                log_scale: scale.log2(),
                level,
                log_half_q,
            });
        }
        Ok((re, im))
    }

    /// The NTT form of `round(c.re * scale) + round(c.im * scale) X^(N/2)` at `level` (the constant `c` in
    /// every slot).
    pub(crate) fn constant_poly(
        &self,
        c: Complex64,
        scale: f64,
        level: usize,
        operation: &'static str,
    ) -> Result<Poly<Ntt>> {
        let (re, im) = self.rounded_constant(c, scale, level, operation)?;
        let basis = self.ctx.basis(level)?;
        let mut poly = if im != 0.0 {
            let mut x = self.ctx.x_half_at(level)?;
            let res: Vec<u64> = basis.moduli().iter().map(|m| f64_residue(im, m)).collect();
            x.mul_scalars_assign(&res)?;
            x
        } else {
            Poly::zero(basis)
        };
        if re != 0.0 {
            let res: Vec<u64> = basis.moduli().iter().map(|m| f64_residue(re, m)).collect();
            poly.add_scalars_assign(&res)?;
        }
        Ok(poly)
    }

    // ----------------------------------------------------------------------------------------------
    // Additive operations
    // ----------------------------------------------------------------------------------------------

    fn add_sub(
        &self,
        a: &Ciphertext,
        b: &Ciphertext,
        negate: bool,
        operation: &'static str,
    ) -> Result<Ciphertext> {
        let (a, b) = self.align(a, b, operation, true)?;
        let inner = if negate {
            let (pa, pb) = (&a.inner.parts, &b.inner.parts);
            let mut parts = Vec::with_capacity(pa.len().max(pb.len()));
            for i in 0..pa.len().max(pb.len()) {
                parts.push(match (pa.get(i), pb.get(i)) {
                    (Some(x), Some(y)) => x.sub(y)?,
                    (Some(x), None) => x.clone(),
                    (None, Some(y)) => {
                        let mut y = y.clone();
                        y.neg_assign();
                        y
                    }
                    (None, None) => break,
                });
            }
            RlweCiphertext { parts }
        } else {
            a.inner.add(&b.inner)?
        };
        Ok(self.wrap(inner, a.scale(), a.slots()))
    }

    /// `a + b` (RNS-CKKS `Add`), after aligning levels and scales.
    ///
    /// Errors: [`Error::ContextMismatch`], [`Error::SlotsMismatch`]; in strict mode
    /// [`Error::LevelMismatch`] / [`Error::ScaleMismatch`]; [`Error::ScaleMismatch`] when scales
    /// cannot be aligned.
    pub fn add(&self, a: &Ciphertext, b: &Ciphertext) -> Result<Ciphertext> {
        self.add_sub(a, b, false, "ciphertext addition")
    }

    /// `a - b`. Errors as [`Evaluator::add`].
    pub fn sub(&self, a: &Ciphertext, b: &Ciphertext) -> Result<Ciphertext> {
        self.add_sub(a, b, true, "ciphertext subtraction")
    }

    /// `-a`. Errors: [`Error::ContextMismatch`].
    pub fn negate(&self, a: &Ciphertext) -> Result<Ciphertext> {
        self.check_ct(a)?;
        let mut out = a.clone();
        for p in out.inner.parts.iter_mut() {
            p.neg_assign();
        }
        Ok(out)
    }

    fn add_sub_plain(
        &self,
        ct: &Ciphertext,
        pt: &Plaintext,
        negate: bool,
        operation: &'static str,
    ) -> Result<Ciphertext> {
        let (ct, poly) = self.align_plain(ct, pt, operation, true)?;
        let mut parts = ct.inner.parts.clone();
        parts[0] = if negate {
            ct.inner.parts[0].sub(&poly)?
        } else {
            ct.inner.parts[0].add(&poly)?
        };
        Ok(self.wrap(RlweCiphertext { parts }, ct.scale(), ct.slots()))
    }

    /// `ct + pt` (the plaintext at the ciphertext's scale; see the module documentation).
    ///
    /// Errors: as [`Evaluator::add`], with the plaintext as right operand.
    pub fn add_plain(&self, ct: &Ciphertext, pt: &Plaintext) -> Result<Ciphertext> {
        self.add_sub_plain(ct, pt, false, "ciphertext-plaintext addition")
    }

    /// `ct - pt`. Errors as [`Evaluator::add_plain`].
    pub fn sub_plain(&self, ct: &Ciphertext, pt: &Plaintext) -> Result<Ciphertext> {
        self.add_sub_plain(ct, pt, true, "ciphertext-plaintext subtraction")
    }

    /// `ct + c` in every slot, `c` encoded at the ciphertext's scale (no level used).
    ///
    /// Errors: [`Error::ContextMismatch`]; [`Error::InvalidArgument`] for a non-finite constant;
    /// [`Error::ScaleTooLarge`] if `c * scale` does not fit the modulus.
    pub fn add_const(&self, ct: &Ciphertext, c: Complex64) -> Result<Ciphertext> {
        const OP: &str = "constant addition";
        self.check_ct(ct)?;
        let (re, im) = self.rounded_constant(c, ct.scale(), ct.level(), OP)?;
        let mut out = ct.clone();
        if im == 0.0 {
            // A real constant is the same residue in every NTT slot: added limb by limb in place,
            // without building the constant polynomial (a fresh ciphertext part) first. The same
            // residues as `constant_poly`, so the same result.
            if re != 0.0 {
                let residues: Vec<u64> = self
                    .ctx
                    .basis(ct.level())?
                    .moduli()
                    .iter()
                    .map(|m| f64_residue(re, m))
                    .collect();
                out.inner.parts[0].add_scalars_assign(&residues)?;
            }
        } else {
            let k = self.constant_poly(c, ct.scale(), ct.level(), OP)?;
            out.inner.parts[0].add_assign(&k)?;
        }
        Ok(out)
    }

    /// `ct + c` for a real constant. Errors as [`Evaluator::add_const`].
    pub fn add_real(&self, ct: &Ciphertext, c: f64) -> Result<Ciphertext> {
        self.add_const(ct, Complex64::new(c, 0.0))
    }

    /// `ct - c` in every slot. Errors as [`Evaluator::add_const`].
    pub fn sub_const(&self, ct: &Ciphertext, c: Complex64) -> Result<Ciphertext> {
        self.add_const(ct, -c)
    }

    // ----------------------------------------------------------------------------------------------
    // Multiplicative operations
    // ----------------------------------------------------------------------------------------------

    pub(crate) fn relin_key(&self, operation: &'static str) -> Result<&RelinKey> {
        self.relin.as_deref().ok_or(Error::MissingKey {
            operation,
            key: "relinearization key",
        })
    }

    /// The tensor product `(d_0, d_1, d_2)` of two ciphertexts (RNS-CKKS `Mult`, step 1), without
    /// relinearization; scale `s_a s_b`. Levels are aligned (scales need not agree).
    ///
    /// Errors: [`Error::ScaleTooLarge`] when `s_a s_b >= Q_l / 2`; level mismatch in strict mode;
    /// [`Error::Core`] unless both have 2 parts.
    pub fn multiply_without_relin(&self, a: &Ciphertext, b: &Ciphertext) -> Result<Ciphertext> {
        const OP: &str = "ciphertext multiplication";
        let (a, b) = self.refresh_operands(a, b)?;
        let (a, b) = self.align(&a, &b, OP, false)?;
        let scale = a.scale() * b.scale();
        self.check_product_scale(a.level(), scale, OP)?;
        let inner = a.inner.tensor(&b.inner)?;
        Ok(self.wrap(inner, scale, a.slots()))
    }

    /// `a * b` with relinearization (RNS-CKKS `Mult`: tensor, ModUp, key-switching inner product,
    /// ModDown); scale `s_a s_b`, not rescaled.
    ///
    /// Errors: [`Error::MissingKey`] without a relinearization key; as
    /// [`Evaluator::multiply_without_relin`].
    pub fn multiply(&self, a: &Ciphertext, b: &Ciphertext) -> Result<Ciphertext> {
        let rk = self.relin_key("ciphertext multiplication")?;
        let t = self.multiply_without_relin(a, b)?;
        let inner = self.ctx.rlwe().relinearize(&t.inner, rk)?;
        Ok(self.wrap(inner, t.scale(), t.slots()))
    }

    /// [`Evaluator::multiply`] followed by [`Evaluator::rescale`] ("Mult&RS" of RNS-CKKS Table 1), with the
    /// relinearization's ModDown and the rescaling merged into one division by `P q_{l-1}`
    /// ([`rnsfhe_core::RlweContext::relinearize_rescale`]): same scale and level, one rounding fewer.
    ///
    /// Errors: as both.
    pub fn multiply_rescale(&self, a: &Ciphertext, b: &Ciphertext) -> Result<Ciphertext> {
        let rk = self.relin_key("ciphertext multiplication")?;
        let t = self.multiply_without_relin(a, b)?;
        let level = t.level();
        if level < 2 {
            // No level to rescale to: the rescaling's own error.
            return self.rescale(&t);
        }
        // Relinearization's ModDown and the rescaling merged (one division by P q_{l-1}).
        let mut inner = self.ctx.rlwe().relinearize_rescale(&t.inner, rk)?;
        let basis = self.ctx.basis(level - 1)?;
        for p in inner.parts.iter_mut() {
            p.rebase(basis)?;
        }
        let q = self.ctx.q_moduli()[level - 1] as f64;
        Ok(self.wrap(inner, t.scale() / q, t.slots()))
    }

    /// `a^2` with relinearization. Errors as [`Evaluator::multiply`].
    pub fn square(&self, a: &Ciphertext) -> Result<Ciphertext> {
        self.multiply(a, a)
    }

    /// Relinearizes a 3-part ciphertext (RNS-CKKS `Mult`, steps 2-5); a 2-part one is returned unchanged.
    ///
    /// Errors: [`Error::MissingKey`]; [`Error::Core`] for malformed ciphertexts.
    pub fn relinearize(&self, ct: &Ciphertext) -> Result<Ciphertext> {
        self.check_ct(ct)?;
        if ct.part_count() == 2 {
            return Ok(ct.clone());
        }
        let rk = self.relin_key("relinearization")?;
        let inner = self.ctx.rlwe().relinearize(&ct.inner, rk)?;
        Ok(self.wrap(inner, ct.scale(), ct.slots()))
    }

    /// `ct * pt` (slot-wise); scale `s_ct s_pt`, not rescaled.
    ///
    /// Errors: as [`Evaluator::multiply_without_relin`], with the plaintext as right operand.
    pub fn multiply_plain(&self, ct: &Ciphertext, pt: &Plaintext) -> Result<Ciphertext> {
        const OP: &str = "ciphertext-plaintext multiplication";
        let ct = self.refresh_operand(ct)?;
        let (ct, poly) = self.align_plain(&ct, pt, OP, false)?;
        let scale = ct.scale() * pt.scale();
        self.check_product_scale(ct.level(), scale, OP)?;
        let parts = ct
            .inner
            .parts
            .iter()
            .map(|p| p.mul(&poly))
            .collect::<rnsfhe_ring::Result<Vec<_>>>()?;
        Ok(self.wrap(RlweCiphertext { parts }, scale, ct.slots()))
    }

    /// `ct * c` in every slot, `c` encoded at [`Evaluator::factor_scale`], so that a following
    /// [`Evaluator::rescale`] lands on the next level's default scale. Uses a level once rescaled.
    ///
    /// Errors: [`Error::InvalidArgument`] for a non-finite constant; [`Error::ScaleTooLarge`] if
    /// the product scale does not fit the modulus.
    pub fn multiply_const(&self, ct: &Ciphertext, c: Complex64) -> Result<Ciphertext> {
        const OP: &str = "constant multiplication";
        self.check_ct(ct)?;
        let refreshed = self.refresh_operand(ct)?;
        let ct = &*refreshed;
        let level = ct.level();
        let const_scale = self.factor_scale(ct)?;
        let scale = ct.scale() * const_scale;
        self.check_product_scale(level, scale, OP)?;
        let k = self.constant_poly(c, const_scale, level, OP)?;
        let mut out = ct.clone();
        for p in out.inner.parts.iter_mut() {
            p.mul_assign(&k)?;
        }
        out.scale = scale;
        Ok(out)
    }

    /// The scale at which a constant or plaintext factor of a product with `ct` is encoded: the one that
    /// makes the rescaled product land exactly on the default scale of the next level,
    /// `Delta_{l-1} q_{l-1} / scale(ct)` (about `2^log_scale` for a ciphertext at its level's default scale).
    /// Results of chains of products then stay on the default scales, and later additions need no
    /// alignment (which would cost a level). Falls back to `q_{l-1}` when `ct` is far from its level's
    /// default scale (a product not rescaled yet), and to `2^log_scale` at level 1 (nothing to rescale).
    ///
    /// Errors: [`Error::ContextMismatch`].
    pub fn factor_scale(&self, ct: &Ciphertext) -> Result<f64> {
        self.check_ct(ct)?;
        let nominal = (self.ctx.params().log_scale as f64).exp2();
        let level = ct.level();
        if level < 2 {
            return Ok(nominal);
        }
        let q = self.ctx.q_moduli()[level - 1] as f64;
        let landing = self.ctx.level_scale(level - 1)? * q / ct.scale();
        // Within a factor 256 of the nominal scale the landing scale is safe to encode at; beyond, the
        // ciphertext is off its default scale (not rescaled yet) and `q_{l-1}` keeps the scale unchanged.
        let ratio = landing / nominal;
        Ok(if (1.0 / 256.0..=256.0).contains(&ratio) {
            landing
        } else {
            q
        })
    }

    /// `ct * values` slot-wise, the values encoded at [`Evaluator::factor_scale`] (not rescaled).
    ///
    /// Errors: as [`Evaluator::multiply_plain`]; encoding errors (too many values, non-finite values).
    pub fn multiply_values(&self, ct: &Ciphertext, values: &[Complex64]) -> Result<Ciphertext> {
        let scale = self.factor_scale(ct)?;
        let pt = self
            .ctx
            .encode_at_scale(values, ct.slots(), ct.level(), scale)?;
        self.multiply_plain(ct, &pt)
    }

    /// `ct * c` for a real constant. Errors as [`Evaluator::multiply_const`].
    pub fn multiply_real(&self, ct: &Ciphertext, c: f64) -> Result<Ciphertext> {
        self.multiply_const(ct, Complex64::new(c, 0.0))
    }

    /// `ct * k` for an integer `k`: exact, no level used, scale unchanged.
    ///
    /// Errors: [`Error::ContextMismatch`].
    pub fn multiply_int(&self, ct: &Ciphertext, k: i64) -> Result<Ciphertext> {
        self.check_ct(ct)?;
        let mut out = ct.clone();
        for p in out.inner.parts.iter_mut() {
            p.mul_i64_assign(k);
        }
        Ok(out)
    }

    // ----------------------------------------------------------------------------------------------
    // Levels
    // ----------------------------------------------------------------------------------------------

    /// Rescaling `RS` (RNS-CKKS Section 4): `round(ct / q_{l-1})` at level `l - 1`; the scale is divided by
    /// `q_{l-1}` exactly.
    ///
    /// Errors: [`Error::NotEnoughLevels`] at level 1.
    pub fn rescale(&self, ct: &Ciphertext) -> Result<Ciphertext> {
        self.check_ct(ct)?;
        self.check_levels(ct, 1, "rescale")?;
        let level = ct.level();
        let rescaler = self.ctx.rlwe().rescaler();
        let basis = self.ctx.basis(level - 1)?;
        // The parts in parallel too: each one's serial step (the inverse NTT of its last limb) then
        // overlaps with the other's.
        let parts = ct
            .inner
            .parts
            .par_iter()
            .map(|p| {
                let mut r = rescaler.rescale_ntt(p)?;
                r.rebase(basis)?;
                Ok(r)
            })
            .collect::<Result<Vec<_>>>()?;
        let q = self.ctx.q_moduli()[level - 1] as f64;
        Ok(self.wrap(RlweCiphertext { parts }, ct.scale() / q, ct.slots()))
    }

    /// The same ciphertext at the lower `level` (limbs dropped; scale and message unchanged).
    ///
    /// Errors: [`Error::InvalidArgument`] unless `1 <= level <= ct.level()`.
    pub fn drop_to_level(&self, ct: &Ciphertext, level: usize) -> Result<Ciphertext> {
        self.check_ct(ct)?;
        if level == 0 || level > ct.level() {
            return Err(Error::InvalidArgument {
                operation: "drop to level",
                reason: format!(
                    "level {level} is not in [1, {}] (the ciphertext's level, in limbs)",
                    ct.level()
                ),
            });
        }
        if level == ct.level() {
            return Ok(ct.clone());
        }
        let basis = self.ctx.basis(level)?;
        let mut inner = ct.inner.drop_to_level(level)?;
        for p in inner.parts.iter_mut() {
            p.rebase(basis)?;
        }
        Ok(self.wrap(inner, ct.scale(), ct.slots()))
    }

    /// Encodes `values` at the level, scale and slot count of `ct` (a plaintext that adds to it without
    /// any correction).
    ///
    /// Errors: encoder errors (too many values, non-finite values, scale too large).
    pub fn encode_like(&self, values: &[Complex64], ct: &Ciphertext) -> Result<Plaintext> {
        self.check_ct(ct)?;
        self.ctx
            .encode_at_scale(values, ct.slots(), ct.level(), ct.scale())
    }

    // ----------------------------------------------------------------------------------------------
    // Rotations
    // ----------------------------------------------------------------------------------------------

    fn galois_keys(&self, operation: &'static str) -> Result<&GaloisKeys> {
        self.galois.as_deref().ok_or(Error::MissingKey {
            operation,
            key: "Galois key set",
        })
    }

    /// Rotates the slots left by `step` (right for negative `step`): slot `j` of the result is slot
    /// `j + step mod slots` of the input (automorphism `X -> X^(5^step)` and key switching).
    ///
    /// A ciphertext of `slots < N/2` slots repeats its slots `N / (2 slots)` times, so steps equal modulo
    /// `slots` rotate it alike: a step without a key is replaced by the first equivalent one that has a
    /// key (sparse ciphertexts reuse the keys of the full slot count), and a multiple of `slots` is the
    /// identity (no key needed).
    ///
    /// Errors: [`Error::MissingKey`] without Galois keys; [`Error::Core`] with
    /// `MissingGaloisKey` naming the step and its Galois element when its key was not generated.
    pub fn rotate(&self, ct: &Ciphertext, step: i64) -> Result<Ciphertext> {
        self.check_ct(ct)?;
        if step.rem_euclid(ct.slots() as i64) == 0 {
            return Ok(ct.clone());
        }
        let gk = self.galois_keys("rotation")?;
        let step = self.keyed_step(gk, step, ct.slots());
        let inner = self
            .ctx
            .rlwe()
            .rotate(&ct.inner, self.ctx.galois_group(), step, gk)?;
        Ok(self.wrap(inner, ct.scale(), ct.slots()))
    }

    /// `step`, or the first step equal to it modulo `slots` whose Galois key is in `gk` (see
    /// [`Evaluator::rotate`]); `step` itself when none is, so that the error names the step asked for.
    fn keyed_step(&self, gk: &GaloisKeys, step: i64, slots: usize) -> i64 {
        let group = self.ctx.galois_group();
        let has_key = |s: i64| gk.get(group.element_of_step(s).value()).is_some();
        if has_key(step) {
            return step;
        }
        // The max_slots / slots classes of `step` modulo max_slots (rotations are periodic in N/2).
        let copies = (self.ctx.max_slots() / slots.max(1)) as i64;
        (1..copies)
            .map(|k| step + k * slots as i64)
            .find(|&s| has_key(s))
            .unwrap_or(step)
    }

    /// Conjugates every slot (automorphism `X -> X^(2N-1)`).
    ///
    /// Errors: [`Error::MissingKey`]; [`Error::Core`] if the conjugation key is missing.
    pub fn conjugate(&self, ct: &Ciphertext) -> Result<Ciphertext> {
        self.check_ct(ct)?;
        let gk = self.galois_keys("conjugation")?;
        let conjugation = self.ctx.galois_group().conjugation();
        let inner = self.ctx.rlwe().apply_galois(&ct.inner, conjugation, gk)?;
        Ok(self.wrap(inner, ct.scale(), ct.slots()))
    }

    /// Rotations of one ciphertext by each of `steps`, sharing one decomposition and ModUp of `c_1`
    /// (Halevi-Shoup hoisting).
    ///
    /// Steps without a key are replaced as in [`Evaluator::rotate`].
    ///
    /// Errors: as [`Evaluator::rotate`].
    pub fn rotate_hoisted(&self, ct: &Ciphertext, steps: &[i64]) -> Result<Vec<Ciphertext>> {
        self.check_ct(ct)?;
        let gk = self.galois_keys("hoisted rotation")?;
        let rlwe = self.ctx.rlwe();
        let hoisted = rlwe.hoist(&ct.inner)?;
        let group = self.ctx.galois_group();
        // The rotations are independent once the digits are hoisted: on several threads they run side
        // by side (each one's own key switch splits further by limb), which keeps both threads busy at
        // the low levels where a rotation has too few limbs to share evenly (S2C, F_mod's inputs). On
        // one thread this is the sequential loop.
        steps
            .par_iter()
            .map(|&s| {
                let s = self.keyed_step(gk, s, ct.slots());
                let inner = rlwe.rotate_hoisted(&ct.inner, &hoisted, group, s, gk)?;
                Ok(self.wrap(inner, ct.scale(), ct.slots()))
            })
            .collect()
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn evaluator_is_send_and_sync() {
        fn check<T: Send + Sync>() {}
        check::<Evaluator>();
        check::<CkksContext>();
    }

    #[test]
    fn residues_of_large_integers() {
        let m = Modulus::new(1_152_921_504_606_584_833).unwrap();
        let v = 2f64.powi(80) * 3.0;
        let expect = m.mul(3, m.pow(2, 80));
        assert_eq!(f64_residue(v, &m), expect);
        assert_eq!(f64_residue(-v, &m), m.neg(expect));
        assert_eq!(f64_residue(-5.0, &m), m.neg(5));
    }
}
