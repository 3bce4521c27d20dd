//! Raising the modulus of a ciphertext at the last level: the first step of CKKS bootstrapping
//! (Cheon-Han-Kim-Kim-Song, Eurocrypt 2018, Section 4.1) and of repacking LWE ciphertexts into CKKS by
//! ring packing (PEGASUS's alternative to Fig. 5, Section III.C: the packed ciphertext lives over `q_0`).
//!
//! A ciphertext `(c_0, c_1)` over `q_0` alone decrypts to `m = c_0 + c_1 s mod q_0`. Read with its
//! coefficients lifted to `(-q_0/2, q_0/2]` and reduced into the primes of a higher level, the same pair
//! decrypts over `Q_l` to `c_0 + c_1 s = m + q_0 I` with an integer polynomial `I` of coefficients
//! bounded by about `(1 + ||s||_1) / 2` (and of standard deviation `sqrt((1 + ||s||^2) / 12)` for uniform
//! `c_1`): the message gains multiples of `q_0` that an approximate reduction modulo `q_0`
//! ([`crate::eval_mod`]) removes after the values are brought into the slots.
//!
//! The multiples land in **every** coefficient. A ciphertext of `n < N/2` slots has its values in the
//! subring `Z[X^g]`, `g = N / (2n)`, and a homomorphic CoeffsToSlots on `n` slots reads only that subring
//! correctly: the other coefficients must first be cleared. [`Evaluator::subring_trace`] does it with the
//! trace of `R_N` over the subring (Cheon-Han-Hhan, "Faster homomorphic DFT and speeding up CKKS
//! bootstrapping for sparse slots", and the "SubSum" of CKKS bootstrapping for sparse slots):
//! `log2(g)` automorphisms `X -> X^(2N/2^i + 1)`, each one key switch, which multiply the subring's
//! coefficients by `g` and zero the others.

use rayon::prelude::*;
use rnsfhe_core::RlweCiphertext;
use rnsfhe_math::simd::centered_lift;
use rnsfhe_ring::parallel::active_wait;
use rnsfhe_ring::{Coeff, Poly};

use crate::error::{Error, Result};
use crate::evaluator::Evaluator;
use crate::plaintext::Ciphertext;

impl Evaluator {
    /// `ct` (at level 1, over `q_0` only) read over the first `level` primes of the chain: each
    /// coefficient's centered lift modulo `q_0`, reduced into every prime. The scale and slot count are
    /// kept; the plaintext becomes `m + q_0 I` (see the [module documentation](crate::mod_raise)).
    ///
    /// Errors: [`Error::ContextMismatch`]; [`Error::InvalidArgument`] unless `ct` is at level 1 with two
    /// parts and `1 <= level <= max_level`.
    pub fn mod_raise(&self, ct: &Ciphertext, level: usize) -> Result<Ciphertext> {
        active_wait(|| self.mod_raise_waiting(ct, level))
    }

    /// The work of [`Self::mod_raise`], which runs it inside [`active_wait`] (a long
    /// sequence of short parallel sections).
    fn mod_raise_waiting(&self, ct: &Ciphertext, level: usize) -> Result<Ciphertext> {
        const OP: &str = "modulus raise";
        self.check_ct(ct)?;
        let ctx = self.context();
        ctx.check_level(level, OP)?;
        if ct.level() != 1 || ct.part_count() != 2 {
            return Err(Error::InvalidArgument {
                operation: OP,
                reason: format!(
                    "the ciphertext must be at level 1 (q_0 alone) with 2 parts; it is at level {} with {} \
                     parts (drop it to level 1, relinearize first)",
                    ct.level(),
                    ct.part_count()
                ),
            });
        }
        let basis = ctx.rlwe().basis_at(level)?;
        let q0 = &basis.moduli()[0];
        let n = ctx.n();
        // The two parts, and the lifts to the new limbs, are independent: on several threads they
        // run side by side (the inverse transform of each part's one limb is the serial step).
        let parts = ct
            .inner
            .parts
            .par_iter()
            .map(|part| -> Result<_> {
                let coeffs = part.clone().into_coeff();
                let input = coeffs.data();
                let mut data = vec![0u64; n * level];
                data[..n].copy_from_slice(input);
                data[n..]
                    .par_chunks_mut(n)
                    .zip(basis.moduli()[1..].par_iter())
                    .for_each(|(out, p)| centered_lift(q0, p, input, out));
                Ok(Poly::<Coeff>::from_data(basis, data)?.into_ntt())
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(self.wrap(RlweCiphertext { parts }, ct.scale(), ct.slots()))
    }
}

/// The Galois elements of [`Evaluator::subring_trace`] for `slots` slots of ring degree `n`:
/// `N + 1, N/2 + 1, ..., 2N/g + 1` with `g = N / (2 slots)` (none for `N/2` slots).
pub fn subring_trace_elements(n: usize, slots: usize) -> Vec<usize> {
    let gap = (n / 2) / slots.max(1);
    let mut elements = Vec::new();
    let mut step = n;
    while step >= 2 * n / gap.max(1) && gap > 1 {
        elements.push(step + 1);
        step /= 2;
    }
    elements
}

impl Evaluator {
    /// The trace of `ct` onto the subring of `slots` slots (see the [module
    /// documentation](crate::mod_raise)): the plaintext's coefficients at multiples of `g = N / (2 slots)`
    /// are multiplied by `g`, the others become zero; the slot count becomes `slots`. No level is used;
    /// `log2(g)` key switches.
    ///
    /// Errors: [`Error::InvalidSlots`]; [`Error::MissingKey`] without Galois keys; [`Error::Core`]
    /// (`MissingGaloisKey`) for an element of [`subring_trace_elements`] without a key.
    pub fn subring_trace(&self, ct: &Ciphertext, slots: usize) -> Result<Ciphertext> {
        active_wait(|| self.subring_trace_waiting(ct, slots))
    }

    /// The work of [`Self::subring_trace`], which runs it inside [`active_wait`] (a long
    /// sequence of short parallel sections).
    fn subring_trace_waiting(&self, ct: &Ciphertext, slots: usize) -> Result<Ciphertext> {
        self.check_ct(ct)?;
        let ctx = self.context();
        ctx.encoder().check_slots(slots)?;
        let elements = subring_trace_elements(ctx.n(), slots);
        if elements.is_empty() {
            return Ok(self.wrap(ct.inner.clone(), ct.scale(), slots));
        }
        let gk = self.galois().ok_or(Error::MissingKey {
            operation: "subring trace",
            key: "Galois key set",
        })?;
        let mut acc = ct.inner.clone();
        for value in elements {
            let element = ctx.rlwe().galois_element(value)?;
            let image = ctx.rlwe().apply_galois(&acc, element, gk)?;
            for (a, b) in acc.parts.iter_mut().zip(&image.parts) {
                a.add_assign(b)?;
            }
        }
        Ok(self.wrap(acc, ct.scale(), slots))
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::{CkksContext, CkksDecryptor, CkksEncryptor, CkksParams, Csprng, KeyGenerator};
    use rnsfhe_core::{ConversionMode, SecretDistribution};

    /// An insecure test context: `N = 2^log_n`, scale `2^40`, `q_0` of 50 bits and `levels` scaling
    /// primes, one 60-bit special prime and one prime per digit.
    fn test_context(log_n: u32, levels: usize) -> std::sync::Arc<CkksContext> {
        CkksContext::new(CkksParams {
            log_n,
            log_scale: 40,
            q0_bits: 50,
            levels,
            bootstrap_primes: Vec::new(),
            special_primes: 1,
            special_bits: 60,
            dnum: levels + 1,
            secret: SecretDistribution::Ternary,
            sigma: 3.2,
            conversion: ConversionMode::Fast,
            rescaling: crate::RescalingPolicy::FixedNominalScale,
            insecure_for_testing: true,
        })
        .unwrap()
    }

    #[test]
    fn the_raised_plaintext_is_the_message_plus_multiples_of_q0() {
        let ctx = test_context(10, 3);
        let mut rng = Csprng::insecure_from_seed_for_tests([5; 32]);
        let keygen = KeyGenerator::new(&ctx, &mut rng).unwrap();
        let enc = CkksEncryptor::with_secret_key(&ctx, keygen.secret_key()).unwrap();
        let dec = CkksDecryptor::new(&ctx, keygen.secret_key()).unwrap();
        let eval = Evaluator::new(&ctx);
        let values: Vec<f64> = (0..ctx.max_slots())
            .map(|i| (i as f64 * 0.37).sin())
            .collect();
        let ct = enc.encrypt(&values[..], &mut rng).unwrap();
        let low = eval.drop_to_level(&ct, 1).unwrap();
        let q0 = ctx.q_moduli()[0] as f64;
        for level in [1, 2, ctx.max_level()] {
            let raised = eval.mod_raise(&low, level).unwrap();
            assert_eq!(raised.level(), level);
            // Decrypted over Q_level the plaintext's coefficients are m + q_0 I: modulo q_0 they are m.
            let pt = dec.decrypt_plaintext(&raised).unwrap();
            let coeffs = crate::dft::plaintext_coefficients(&ctx, &pt).unwrap();
            let want = dec.decrypt_plaintext(&low).unwrap();
            let want = crate::dft::plaintext_coefficients(&ctx, &want).unwrap();
            let mut multiples = 0;
            // (plaintext_coefficients divides by the scale.)
            for (c, w) in coeffs.iter().zip(&want) {
                let k = (c - w) * raised.scale() / q0;
                assert!(
                    (k - k.round()).abs() < 1e-6,
                    "{c} - {w} is not a multiple of q_0"
                );
                multiples += usize::from(k.round() != 0.0);
            }
            // Above level 1 the uniform c_1 s wraps around q_0 in almost every coefficient.
            if level > 1 {
                assert!(multiples > ctx.n() / 2, "{multiples}");
            }
        }
        assert!(eval.mod_raise(&ct, 2).is_err());
    }

    /// The stages run the same arithmetic with the threads waiting actively or not
    /// (`rnsfhe_ring::parallel::active_wait`): bit-identical ciphertexts on 1, 2 and 3 threads, for a
    /// ring large enough that key switching and the polynomial passes fork.
    #[test]
    fn active_waiting_changes_no_result() {
        use rnsfhe_ring::parallel::{active_wait, set_active_wait};
        let ctx = test_context(13, 4);
        let mut rng = Csprng::insecure_from_seed_for_tests([6; 32]);
        let keygen = KeyGenerator::new(&ctx, &mut rng).unwrap();
        let slots = 64;
        let elements = subring_trace_elements(ctx.n(), slots);
        let eval = Evaluator::new(&ctx)
            .with_relin_key(keygen.relin_key(&mut rng).unwrap())
            .unwrap()
            .with_galois_keys(
                keygen
                    .galois_keys_with_elements(&[], false, &elements, &mut rng)
                    .unwrap(),
            )
            .unwrap();
        let enc = CkksEncryptor::with_secret_key(&ctx, keygen.secret_key()).unwrap();
        let values: Vec<f64> = (0..ctx.max_slots()).map(|i| (i as f64).cos()).collect();
        let ct = enc.encrypt(&values[..], &mut rng).unwrap();
        let low = eval.drop_to_level(&ct, 1).unwrap();
        let run = || {
            let squared = active_wait(|| eval.multiply_rescale(&ct, &ct).unwrap());
            let raised = eval.mod_raise(&low, ctx.max_level()).unwrap();
            let traced = eval.subring_trace(&raised, slots).unwrap();
            (squared, raised, traced)
        };
        let want = rayon::ThreadPoolBuilder::new()
            .num_threads(1)
            .build()
            .unwrap()
            .install(run);
        for threads in [2, 3] {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap();
            assert!(pool.install(run) == want, "{threads} threads, active");
            set_active_wait(false);
            let passive = pool.install(run);
            set_active_wait(true);
            assert!(passive == want, "{threads} threads, passive");
        }
    }
}
