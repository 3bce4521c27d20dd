//! Logistic-regression training for more iterations than the chain holds: the Nesterov state is
//! bootstrapped ([`rnsfhe_ckks::Evaluator::bootstrap`]) when the levels run out.
//!
//! [`LogisticRegression::fit_encrypted_bootstrapped`] runs the iteration of [`crate::logistic`]
//! unchanged; before an iteration `t >= 1` it refreshes the three ciphertexts the iteration reads,
//! `v^(t)`, `v^(t-1)` and `G_(t-1)` (the Nesterov update's terms), when both
//!
//! * the remaining `r` iterations do not fit: `level(v) < r L + 1`, `L` the levels of one iteration
//!   ([`LogisticRegression::levels_per_iteration`]), and
//! * this iteration would leave `v^(t+1)` below level 2: `level(v) < L + 2`; a refresh needs one
//!   level of its own (below), so it happens at the last iteration that still has it.
//!
//! A refresh of `x` (three bootstrappings, one per ciphertext): `x` dropped to level 2, multiplied by
//! `1 / R` and rescaled to level 1 (its default scale there, which the bootstrapper admits:
//! [`Bootstrapper::max_input_scale`]), bootstrapped, and multiplied by the integer `R` (exact, no
//! level). `R` = [`WEIGHT_RANGE`] = 4 because the weights outgrow EvalMod's range `|z| <= 1` (on lbw
//! `|beta| <= 1.4` after 30 iterations, and the momentum `v` overshoots it), so the values
//! bootstrapped are at most 1 for weights up to 4. Each refresh leaves the state at
//! [`Bootstrapper::output_level`], with `floor((output_level - 2) / L)` iterations before the next;
//! the bootstrapper must leave at least `L + 1` levels ([`Bootstrapper::levels_left`]).
//!
//! # Error
//!
//! A refresh adds to every weight an error of at most `R B`, `B` the bootstrapper's
//! [`Bootstrapper::error_bound`] at the default scale of level 1. The later iterations carry it like
//! the CKKS noise of [`crate::logistic`]: the gradient step is a contraction for the small learning
//! rates of the late iterations, and the momentum factor `|gamma_t| < 1`.

use std::cell::Cell;

use rnsfhe_ckks::{Bootstrapper, Ciphertext, Evaluator};

use crate::error::{Error, Result};
use crate::logistic::{EncryptedModel, LogisticRegression};

/// The bound `R` on the magnitude of the weights a refresh admits (see the
/// [module documentation](self)): values are divided by `R` before a bootstrapping and multiplied by
/// it after. A power of two, so that both are exact but for the rescaling's rounding.
pub const WEIGHT_RANGE: i64 = 4;

impl LogisticRegression {
    /// [`LogisticRegression::fit_encrypted`] for any number of iterations: the Nesterov state is
    /// bootstrapped by `btp` when the levels run out (see the [module documentation](self));
    /// [`EncryptedModel::bootstraps`] counts the bootstrappings. `z` may be at any level from 3 (the
    /// first iteration's output must leave a level for a refresh); it is dropped as by
    /// [`LogisticRegression::fit_encrypted`] when the chain holds the whole training (then nothing is
    /// bootstrapped), otherwise used at its level. [`LogisticRegression::keep_levels`] is honoured by
    /// refreshing early enough. The weights must stay within [`WEIGHT_RANGE`] in magnitude.
    ///
    /// `eval` needs the relinearization key and the Galois keys of both
    /// [`crate::PackedLayout::rotation_steps`] and [`Bootstrapper::galois_elements`].
    ///
    /// Errors: as [`LogisticRegression::fit_encrypted`] but for the depth; [`Error::InvalidArgument`]
    /// for a bootstrapper that leaves fewer than `levels_per_iteration + 1` levels or an input below
    /// level 3; errors of [`rnsfhe_ckks::Evaluator::bootstrap`] (missing keys, another slot count than
    /// the layout's).
    pub fn fit_encrypted_bootstrapped(
        &self,
        eval: &Evaluator,
        z: &Ciphertext,
        layout: &crate::PackedLayout,
        btp: &Bootstrapper,
    ) -> Result<EncryptedModel> {
        let refresh = StateRefresh {
            btp,
            done: Cell::new(0),
        };
        self.fit_refreshing(eval, z, layout, Some(&refresh))
    }
}

/// The refresh of the Nesterov state during one training (see the [module documentation](self)).
pub(crate) struct StateRefresh<'a> {
    btp: &'a Bootstrapper,
    /// Bootstrappings run so far.
    done: Cell<usize>,
}

impl StateRefresh<'_> {
    /// The bootstrappings run so far.
    pub(crate) fn bootstraps(&self) -> usize {
        self.done.get()
    }

    /// Checks that the bootstrapper buys at least one iteration and that the first refresh finds a
    /// level.
    pub(crate) fn check_input(&self, lr: &LogisticRegression, z: &Ciphertext) -> Result<()> {
        let per = lr.levels_per_iteration()?;
        if self.btp.levels_left() < per + 1 {
            return Err(Error::InvalidArgument {
                what: "bootstrapper",
                reason: format!(
                    "it leaves {} levels after a bootstrapping, but an iteration needs {per} and a \
                     refresh 1 more; use a chain with at least {} more levels",
                    self.btp.levels_left(),
                    per + 1 - self.btp.levels_left()
                ),
            });
        }
        if z.level() < 3 {
            return Err(Error::InvalidArgument {
                what: "input level",
                reason: format!(
                    "Z is at level {} (limbs): the first iteration takes one level and a refresh \
                     another, so it needs at least 3",
                    z.level()
                ),
            });
        }
        Ok(())
    }

    /// Refreshes `v`, `v_prev` and `g_prev` if the `remaining` iterations (this one included) would
    /// otherwise run out of levels (the rule of the [module documentation](self)).
    pub(crate) fn before_iteration(
        &self,
        lr: &LogisticRegression,
        eval: &Evaluator,
        remaining: usize,
        state: [&mut Ciphertext; 2],
        v_prev: &mut Option<Ciphertext>,
    ) -> Result<()> {
        let per = lr.levels_per_iteration()?;
        let level = state[0].level();
        if level >= remaining * per + 1 + lr.keep_levels || level >= per + 2 {
            return Ok(());
        }
        for x in state {
            *x = self.refresh(eval, x)?;
        }
        if let Some(vp) = v_prev {
            *vp = self.refresh(eval, vp)?;
        }
        Ok(())
    }

    /// `x` bootstrapped through the range `R`: at level 2 times `1 / R`, rescaled, bootstrapped, times
    /// `R`.
    fn refresh(&self, eval: &Evaluator, x: &Ciphertext) -> Result<Ciphertext> {
        let low = eval.drop_to_level(x, 2)?;
        let shrunk = eval.rescale(&eval.multiply_real(&low, 1.0 / WEIGHT_RANGE as f64)?)?;
        let fresh = eval.bootstrap(&shrunk, self.btp)?;
        self.done.set(self.done.get() + 1);
        Ok(eval.multiply_int(&fresh, WEIGHT_RANGE)?)
    }
}
