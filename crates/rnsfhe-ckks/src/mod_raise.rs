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

use rnsfhe_core::RlweCiphertext;
use rnsfhe_math::simd::centered_lift;
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
        let parts = ct
            .inner
            .parts
            .iter()
            .map(|part| -> Result<_> {
                let coeffs = part.clone().into_coeff();
                let input = coeffs.data();
                let mut data = vec![0u64; n * level];
                data[..n].copy_from_slice(input);
                for (p, out) in basis.moduli()[1..].iter().zip(data[n..].chunks_exact_mut(n)) {
                    centered_lift(q0, p, input, out);
                }
                Ok(Poly::<Coeff>::from_data(basis, data)?.into_ntt())
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(self.wrap(RlweCiphertext { parts }, ct.scale(), ct.slots()))
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::{CkksContext, CkksDecryptor, CkksEncryptor, CkksParams, Csprng, KeyGenerator};
    use rnsfhe_core::{ConversionMode, SecretDistribution};

    #[test]
    fn the_raised_plaintext_is_the_message_plus_multiples_of_q0() {
        let ctx = CkksContext::new(CkksParams {
            log_n: 10,
            log_scale: 40,
            q0_bits: 50,
            levels: 3,
            special_primes: 1,
            special_bits: 60,
            dnum: 4,
            secret: SecretDistribution::Ternary,
            sigma: 3.2,
            conversion: ConversionMode::Fast,
            rescaling: crate::RescalingPolicy::FixedNominalScale,
            insecure_for_testing: true,
        })
        .unwrap();
        let mut rng = Csprng::insecure_from_seed_for_tests([5; 32]);
        let keygen = KeyGenerator::new(&ctx, &mut rng).unwrap();
        let enc = CkksEncryptor::with_secret_key(&ctx, keygen.secret_key()).unwrap();
        let dec = CkksDecryptor::new(&ctx, keygen.secret_key()).unwrap();
        let eval = Evaluator::new(&ctx);
        let values: Vec<f64> = (0..ctx.max_slots()).map(|i| (i as f64 * 0.37).sin()).collect();
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
            for (c, w) in coeffs.iter().zip(&want) {
                let k = (c - w) / q0;
                assert!((k - k.round()).abs() < 1e-6, "{c} - {w} is not a multiple of q_0");
                multiples += usize::from(k.round() != 0.0);
            }
            // Above level 1 the uniform c_1 s wraps around q_0 in almost every coefficient.
            if level > 1 {
                assert!(multiples > ctx.n() / 2, "{multiples}");
            }
        }
        assert!(eval.mod_raise(&ct, 2).is_err());
    }
}
