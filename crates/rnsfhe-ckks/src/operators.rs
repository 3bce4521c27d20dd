//! Arithmetic of a ciphertext with any right operand, as operators behave: [`Evaluator::apply`] takes a
//! ciphertext, a plaintext, an integer, a constant or slot values, picks the matching evaluator
//! operation, and rescales products when the evaluator rescales automatically
//! ([`Evaluator::with_auto_rescale`]). The Python operators (`ct + x`, `x - ct`, `ct * x`) are this
//! function, so Rust callers get the same results from the same operands.
//!
//! Integers multiply exactly (no level, [`Evaluator::multiply_int`]); constants and slot values are
//! encoded at the ciphertext's scale for sums and at [`Evaluator::factor_scale`] for products, so that
//! the rescaled product lands on the next level's default scale.

use crate::error::{Error, Result};
use crate::evaluator::Evaluator;
use crate::plaintext::{Ciphertext, Plaintext};
use crate::Complex64;

/// The right operand of [`Evaluator::apply`].
#[derive(Clone, Copy, Debug)]
#[non_exhaustive]
pub enum Operand<'a> {
    /// A ciphertext (levels and scales aligned as by [`Evaluator::add`]).
    Ciphertext(&'a Ciphertext),
    /// An encoded plaintext (dropped to the ciphertext's level; see [`Evaluator::add_plain`]).
    Plaintext(&'a Plaintext),
    /// An integer: products are exact and use no level.
    Int(i64),
    /// A constant in every slot.
    Constant(Complex64),
    /// Slot values, fewer than the slots padded with zeros.
    Values(&'a [Complex64]),
}

/// The operation of [`Evaluator::apply`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum BinaryOp {
    /// `ct + operand`.
    Add,
    /// `ct - operand`.
    Sub,
    /// `operand - ct` (the reflected subtraction of an operator).
    ReverseSub,
    /// `ct * operand`, relinearized, and rescaled under automatic rescaling (except integer factors).
    Mul,
}

impl Evaluator {
    /// `product` rescaled (one level) when this evaluator rescales automatically and a level is left;
    /// unchanged otherwise.
    ///
    /// Errors: as [`Evaluator::rescale`].
    pub fn finish_product(&self, product: Ciphertext) -> Result<Ciphertext> {
        if self.auto_rescale() && product.level() >= 2 {
            self.rescale(&product)
        } else {
            Ok(product)
        }
    }

    /// `a * b` relinearized and, when this evaluator rescales automatically and a level is left, rescaled
    /// in the same pass ([`Evaluator::multiply_rescale`]: relinearization's ModDown merged with the
    /// rescaling), so that `ct * ct` under automatic rescaling costs what Mult&RS costs; otherwise
    /// [`Evaluator::multiply`] then [`Evaluator::finish_product`].
    ///
    /// Errors: as [`Evaluator::multiply`] and [`Evaluator::rescale`].
    pub fn multiply_finished(&self, a: &Ciphertext, b: &Ciphertext) -> Result<Ciphertext> {
        let (a, b) = self.refresh_operands(a, b)?;
        let (a, b) = (&*a, &*b);
        if self.auto_rescale() && a.level().min(b.level()) >= 2 {
            self.multiply_rescale(a, b)
        } else {
            self.finish_product(self.multiply(a, b)?)
        }
    }

    /// `ct op operand` (see the [module documentation](self)).
    ///
    /// Errors: those of the operation chosen ([`Evaluator::add`], [`Evaluator::add_plain`],
    /// [`Evaluator::add_const`], [`Evaluator::multiply`], [`Evaluator::multiply_plain`],
    /// [`Evaluator::multiply_const`], [`Evaluator::multiply_values`], [`Evaluator::encode_like`],
    /// [`Evaluator::rescale`]).
    pub fn apply(&self, ct: &Ciphertext, op: BinaryOp, operand: Operand<'_>) -> Result<Ciphertext> {
        match operand {
            Operand::Ciphertext(b) => match op {
                BinaryOp::Add => self.add(ct, b),
                BinaryOp::Sub => self.sub(ct, b),
                BinaryOp::ReverseSub => self.sub(b, ct),
                BinaryOp::Mul => self.multiply_finished(ct, b),
            },
            Operand::Plaintext(pt) => match op {
                BinaryOp::Add => self.add_plain(ct, pt),
                BinaryOp::Sub => self.sub_plain(ct, pt),
                BinaryOp::ReverseSub => self.add_plain(&self.negate(ct)?, pt),
                BinaryOp::Mul => self.finish_product(self.multiply_plain(ct, pt)?),
            },
            Operand::Int(k) if op == BinaryOp::Mul => self.multiply_int(ct, k),
            Operand::Int(k) => self.apply_constant(ct, op, Complex64::new(k as f64, 0.0)),
            Operand::Constant(c) => self.apply_constant(ct, op, c),
            Operand::Values(v) => match op {
                BinaryOp::Mul => self.finish_product(self.multiply_values(ct, v)?),
                _ => {
                    let pt = self.encode_like(v, ct)?;
                    self.apply(ct, op, Operand::Plaintext(&pt))
                }
            },
        }
    }

    /// `ct op c` for a constant in every slot.
    fn apply_constant(&self, ct: &Ciphertext, op: BinaryOp, c: Complex64) -> Result<Ciphertext> {
        match op {
            BinaryOp::Add => self.add_const(ct, c),
            BinaryOp::Sub => self.add_const(ct, -c),
            BinaryOp::ReverseSub => self.add_const(&self.negate(ct)?, c),
            BinaryOp::Mul => self.finish_product(self.multiply_const(ct, c)?),
        }
    }

    /// The inner product `sum_j x_j y_j` of the slots of `ct` with those of `operand` (a ciphertext, a
    /// plaintext or slot values), in every slot: one product, rescaled (one level, whatever the
    /// automatic rescaling), then [`Evaluator::sum_slots`] (RNS-CKKS Section 5.2).
    ///
    /// Errors: [`Error::InvalidArgument`] for a number; as [`Evaluator::inner_product`],
    /// [`Evaluator::multiply_plain`] and [`Evaluator::sum_slots`].
    pub fn dot(&self, ct: &Ciphertext, operand: Operand<'_>) -> Result<Ciphertext> {
        let product =
            match operand {
                Operand::Ciphertext(b) => return self.inner_product(ct, b),
                Operand::Plaintext(pt) => self.multiply_plain(ct, pt)?,
                Operand::Values(v) => self.multiply_values(ct, v)?,
                Operand::Int(_) | Operand::Constant(_) => return Err(Error::InvalidArgument {
                    operation: "dot",
                    reason:
                        "the inner product needs a ciphertext, a plaintext or slot values, not a \
                             number"
                            .to_string(),
                }),
            };
        self.sum_slots(&self.rescale(&product)?)
    }
}
