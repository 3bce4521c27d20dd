//! Automatic bootstrapping, opt-in: an evaluator that bootstraps an operand by itself when a product
//! would need a level the operand does not have.
//!
//! [`Evaluator::with_auto_bootstrap`] returns an evaluator that, before every product
//! ([`Evaluator::multiply`] and the operations built on it, [`Evaluator::multiply_plain`],
//! [`Evaluator::multiply_const`] and [`Evaluator::multiply_finished`], hence the operators), bootstraps
//! each ciphertext operand at level 1 ([`Evaluator::bootstrap`]): at level 1 the product could not be
//! rescaled (its scale `Delta^2` would not even fit `q_0`). Operands at level 2 or more are used as
//! they are, so the bootstrappings happen as late as possible and each one buys
//! [`Bootstrapper::levels_left`] products. A product of a ciphertext with itself bootstraps it once.
//! Rescaling, additions and rotations never bootstrap: they need no level (a rescaling at level 1 is
//! of a product made there, which this evaluator never makes).
//!
//! Without the opt-in nothing changes: a product at level 1 fails as before
//! ([`Error::NotEnoughLevels`] or [`Error::ScaleTooLarge`]).
//!
//! # Cost and precision
//!
//! Every automatic bootstrapping is counted: [`Evaluator::bootstraps_done`] reads the counter, shared
//! by the evaluator and its clones (an atomic: evaluators stay `Send + Sync` and hold no other
//! mutable state); [`Evaluator::with_auto_bootstrap`] starts a new one at zero. Each bootstrapping
//! adds an error within [`Bootstrapper::error_bound`] to the operand's slots, and requires what
//! [`Evaluator::bootstrap`] requires: values `|z| <= 1` (larger values give wrong slots, undetectably:
//! scale them down before their level runs out), a scale at level 1 up to
//! [`Bootstrapper::max_input_scale`], and the relinearization and bootstrapping keys
//! ([`crate::KeyGenerator::bootstrapping_keys`]) in the evaluator.

use std::borrow::Cow;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use crate::bootstrap::Bootstrapper;
use crate::error::{Error, Result};
use crate::evaluator::Evaluator;
use crate::plaintext::Ciphertext;

/// The bootstrapper of an evaluator with automatic bootstrapping and its counter.
#[derive(Debug)]
pub struct AutoBootstrap {
    btp: Arc<Bootstrapper>,
    done: AtomicUsize,
}

impl Evaluator {
    /// This evaluator, bootstrapping operands of products by itself with `btp` (see the
    /// [module documentation](crate::auto_bootstrap)); its counter
    /// ([`Evaluator::bootstraps_done`]) starts at zero.
    ///
    /// Errors: [`Error::ContextMismatch`] for a bootstrapper of another context;
    /// [`Error::InvalidArgument`] when the bootstrapper leaves no level
    /// ([`Bootstrapper::levels_left`] `= 0`: a bootstrapped operand would still be at level 1).
    /// Missing keys are reported by the first bootstrapping ([`Evaluator::bootstrap`]).
    pub fn with_auto_bootstrap(mut self, btp: Arc<Bootstrapper>) -> Result<Self> {
        self.context()
            .check_fingerprint(btp.fingerprint(), "bootstrapper")?;
        if btp.levels_left() == 0 {
            return Err(Error::InvalidArgument {
                operation: "automatic bootstrapping",
                reason: format!(
                    "the bootstrapper's output is at level {} (limbs), which leaves no \
                     multiplication; use a chain with more levels than its depth {} + 1",
                    btp.output_level(),
                    btp.depth()
                ),
            });
        }
        self.auto_bootstrap = Some(Arc::new(AutoBootstrap {
            btp,
            done: AtomicUsize::new(0),
        }));
        Ok(self)
    }

    /// The bootstrapper of automatic bootstrapping, if opted in.
    pub fn auto_bootstrapper(&self) -> Option<&Arc<Bootstrapper>> {
        self.auto_bootstrap.as_ref().map(|a| &a.btp)
    }

    /// How many bootstrappings this evaluator (and its clones) ran automatically; 0 without the
    /// opt-in.
    pub fn bootstraps_done(&self) -> usize {
        self.auto_bootstrap
            .as_ref()
            .map_or(0, |a| a.done.load(Ordering::Relaxed))
    }

    /// `ct`, bootstrapped if automatic bootstrapping is on and it is at level 1; borrowed otherwise.
    pub(crate) fn refresh_operand<'a>(&self, ct: &'a Ciphertext) -> Result<Cow<'a, Ciphertext>> {
        match &self.auto_bootstrap {
            Some(auto) if ct.level() < 2 => {
                let out = self.bootstrap(ct, &auto.btp)?;
                auto.done.fetch_add(1, Ordering::Relaxed);
                Ok(Cow::Owned(out))
            }
            _ => Ok(Cow::Borrowed(ct)),
        }
    }

    /// Both operands of a product through [`Evaluator::refresh_operand`]; the same ciphertext twice
    /// (a square) is bootstrapped once.
    pub(crate) fn refresh_operands<'a>(
        &self,
        a: &'a Ciphertext,
        b: &'a Ciphertext,
    ) -> Result<(Cow<'a, Ciphertext>, Cow<'a, Ciphertext>)> {
        let ra = self.refresh_operand(a)?;
        let rb = if std::ptr::eq(a, b) {
            ra.clone()
        } else {
            self.refresh_operand(b)?
        };
        Ok((ra, rb))
    }
}
