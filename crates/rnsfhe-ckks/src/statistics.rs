//! Statistics on encrypted slots (RNS-CKKS Section 5.2, Table 3): partial sums by rotate-and-add,
//! the sum, mean and variance of the slots, the inner product of two ciphertexts, and sums and weighted sums
//! across ciphertexts.
//!
//! The division by `n` of the mean is a multiplication by the constant `1/n` and one rescaling, as the paper
//! does ("multiplying the constant `floor(q/n)` and rescaling by one level"); the constant is encoded at
//! [`Evaluator::factor_scale`], so the result lands on the next level's default scale.

use crate::error::{Error, Result};
use crate::evaluator::Evaluator;
use crate::plaintext::Ciphertext;
use rnsfhe_ring::GaloisGroup;

impl Evaluator {
    /// Partial sums (RNS-CKKS Section 5.2, after [9, Algorithm 2]): `log2(n)` rotations by
    /// `1, 2, ..., n/2` and additions, so that slot `j` of the result holds
    /// `sum_{i < n} slot_{j + i mod slots}`. Needs the Galois keys of those steps
    /// ([`crate::KeyGenerator::power_of_two_steps`]). No level used.
    ///
    /// Errors: [`Error::InvalidArgument`] unless `n` is a power of two in `[1, slots]`; as
    /// [`Evaluator::rotate`].
    pub fn partial_sums(&self, ct: &Ciphertext, n: usize) -> Result<Ciphertext> {
        self.check_ct(ct)?;
        if !n.is_power_of_two() || n > ct.slots() {
            return Err(Error::InvalidArgument {
                operation: "partial sums",
                reason: format!(
                    "n = {n} must be a power of two in [1, slots = {}]",
                    ct.slots()
                ),
            });
        }
        let mut acc = ct.clone();
        for step in GaloisGroup::power_of_two_steps(n) {
            let r = self.rotate(&acc, step)?;
            acc = self.add(&acc, &r)?;
        }
        Ok(acc)
    }

    /// The sum of all slots, in every slot ([`Evaluator::partial_sums`] with `n = slots`).
    ///
    /// Errors: as [`Evaluator::partial_sums`].
    pub fn sum_slots(&self, ct: &Ciphertext) -> Result<Ciphertext> {
        self.partial_sums(ct, ct.slots())
    }

    /// The mean of the slots in every slot (RNS-CKKS Section 5.2): [`Evaluator::sum_slots`], then a
    /// multiplication by `1 / slots` and a rescaling (one level).
    ///
    /// Errors: as [`Evaluator::sum_slots`] and [`Evaluator::rescale`].
    pub fn mean(&self, ct: &Ciphertext) -> Result<Ciphertext> {
        let s = self.sum_slots(ct)?;
        let m = self.multiply_real(&s, 1.0 / ct.slots() as f64)?;
        self.rescale(&m)
    }

    /// The variance of the slots in every slot (RNS-CKKS Section 5.2, Table 3): the mean of the squares
    /// minus the square of the mean, `E[x^2] - E[x]^2` (two levels: a squaring and a mean on each side).
    /// Real slot values are assumed (for complex slots this is `E[x^2] - E[x]^2` without conjugation).
    ///
    /// Errors: [`Error::NotEnoughLevels`] below level 3; as [`Evaluator::mean`] and
    /// [`Evaluator::multiply_rescale`].
    pub fn variance(&self, ct: &Ciphertext) -> Result<Ciphertext> {
        self.check_ct(ct)?;
        self.check_levels(ct, 2, "variance")?;
        let mean_square = self.mean(&self.multiply_rescale(ct, ct)?)?;
        let mean = self.mean(ct)?;
        let square_mean = self.multiply_rescale(&mean, &mean)?;
        self.sub(&mean_square, &square_mean)
    }

    /// The inner product `sum_j a_j b_j` of the slots of two ciphertexts, in every slot: a product with
    /// rescaling (one level) and [`Evaluator::sum_slots`]. Needs the relinearization key and the
    /// power-of-two rotation keys.
    ///
    /// Errors: as [`Evaluator::multiply_rescale`] and [`Evaluator::sum_slots`].
    pub fn inner_product(&self, a: &Ciphertext, b: &Ciphertext) -> Result<Ciphertext> {
        self.sum_slots(&self.multiply_rescale(a, b)?)
    }

    /// The slot-wise sum of several ciphertexts, added in order with levels and scales aligned as in
    /// [`Evaluator::add`]: the result is at the lowest level of the inputs (higher ones are brought down
    /// to it, a higher one of another scale by a constant product and a rescaling onto that scale), one
    /// level lower still when inputs at one level have scales that differ by a non-integer factor (the
    /// left operand is rescaled onto the right one's scale). No level is used when all inputs share one
    /// level.
    ///
    /// Errors: [`Error::Empty`] for no ciphertext; as [`Evaluator::add`], among them
    /// [`Error::ScaleMismatch`] for inputs at level 1 with different scales (neither can be rescaled).
    pub fn add_many(&self, cts: &[Ciphertext]) -> Result<Ciphertext> {
        let (first, rest) = cts.split_first().ok_or(Error::Empty {
            what: "the ciphertexts to add",
        })?;
        // One accumulator updated in place ([`Evaluator::add_assign`], the bytes of `add`), instead of
        // a fresh ciphertext per term.
        let mut acc = first.clone();
        for ct in rest {
            self.add_assign(&mut acc, ct)?;
        }
        Ok(acc)
    }

    /// The slot-wise weighted sum `sum_i w_i ct_i` (one level): the ciphertexts are brought to one level,
    /// each is multiplied by its weight encoded at [`Evaluator::factor_scale`] without rescaling, and the
    /// sum is rescaled once.
    ///
    /// Errors: [`Error::Empty`]; [`Error::LengthMismatch`] unless there is one weight per ciphertext;
    /// [`Error::InvalidArgument`] for non-finite weights; [`Error::ScaleMismatch`] when the ciphertexts'
    /// scales differ (beyond the tolerance) at one level; [`Error::NotEnoughLevels`] at level 1.
    pub fn weighted_sum(&self, cts: &[Ciphertext], weights: &[f64]) -> Result<Ciphertext> {
        if cts.is_empty() {
            return Err(Error::Empty {
                what: "the ciphertexts of a weighted sum",
            });
        }
        if weights.len() != cts.len() {
            return Err(Error::LengthMismatch {
                what: "weights of a weighted sum (one per ciphertext)",
                expected: cts.len(),
                got: weights.len(),
            });
        }
        let level = cts.iter().map(Ciphertext::level).min().unwrap_or(1);
        let terms = cts
            .iter()
            .zip(weights)
            .map(|(ct, &w)| self.multiply_real(&self.drop_to_level(ct, level)?, w))
            .collect::<Result<Vec<_>>>()?;
        self.rescale(&self.add_many(&terms)?)
    }
}
