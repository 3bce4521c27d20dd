//! Decryption with noise flooding, for CKKS results that are shared (the IND-CPA-D mitigation).
//!
//! # Why
//!
//! A CKKS decryption is `m + e`, the message plus the ciphertext's error, and `e` is a known linear
//! function of the secret key and the ciphertext: whoever sees a decrypted result *and* the ciphertext it
//! came from can set up linear equations in `s` and recover the key (Li and Micciancio, "On the Security of
//! Homomorphic Encryption on Approximate Numbers", Eurocrypt 2021; CKKS is IND-CPA but not IND-CPA-D).
//! Adding fresh noise to `m + e` before decoding hides `e` statistically; OpenFHE does this in its
//! `NOISE_FLOODING_DECRYPT` mode and Lattigo in its decryption with a flooding sampler.
//!
//! # What
//!
//! [`CkksDecryptor::decrypt_flooded`] computes `m + e = <ct, (1, s, ...)>`, adds a fresh integer
//! polynomial whose coefficients are independent discrete Gaussians of standard deviation `2^bits`
//! ([`WideGaussian`], sampled once as integers and reduced modulo every prime, so all limbs hold the same
//! integer noise), then decodes. `bits = 0` adds nothing (the result is exactly
//! [`CkksDecryptor::decrypt`]'s).
//!
//! # How many bits
//!
//! With flooding noise `f` of standard deviation `sigma` per coefficient, the result with error `e` and
//! the result with error 0 differ in distribution by a Kullback-Leibler divergence of
//! `||e||_2^2 / (2 sigma^2)` (Gaussian shift; `||e||_2` the Euclidean norm of the error's coefficient
//! vector), and `q` shared decryptions add up. Requiring a divergence of at most `2^-s` (the usual
//! requirement for `s`-bit security of search problems such as key recovery, Micciancio-Walter, "On the
//! Bit Security of Cryptographic Primitives", Eurocrypt 2018) gives
//!
//! ```text
//! sigma >= ||e||_2 sqrt(q / 2) 2^(s/2),   bits = ceil(log2 ||e||_2 + s/2 + log2(q)/2 - 1/2),
//! ```
//!
//! the rule "flooding = noise x 2^(s/2)" of Li-Micciancio and of the OpenFHE documentation (which writes
//! `sqrt(24 N alpha) 2^(s/2)` times a per-coefficient noise estimate for `alpha` queries;
//! `||e||_2 <= sqrt(N) ||e||_inf` makes the two agree up to a constant factor). OpenFHE's default is
//! `s = 30` ([`DEFAULT_STATISTICAL_SECURITY`]). [`recommended_flooding_bits`] computes it;
//! [`CkksDecryptor::noise_log2`] measures `log2 ||e||_2` of a ciphertext whose result is known.
//!
//! The noise of a circuit must be measured on a **separate run** with representative, non-sensitive
//! inputs (OpenFHE's `EXEC_NOISE_ESTIMATION`): a noise level measured on the very ciphertext that is
//! shared is itself a function of the secret data.
//!
//! # What it costs
//!
//! Each slot's real (and imaginary) part gets an error of standard deviation `2^bits sqrt(slots) / scale`
//! (the decoding sums `2 slots` coefficients with unit-modulus weights), so about
//!
//! ```text
//! precision ~ log2(scale) - bits - log2(sqrt(slots))   bits per slot
//! ```
//!
//! remain ([`flooded_precision_bits`]; the mean of `-log2 |error|` over slots is 0.92 bit above it, the
//! worst slot a few bits below). A flooding that leaves no bit (or approaches the modulus) is refused with
//! [`Error::FloodingTooLarge`] naming the bits asked and the headroom ([`CkksDecryptor::max_flooding_bits`]).
//! Example: a fresh public-key encryption at `N = 2^12` has `log2 ||e||_2 = 9.9` (13.9 with a key over
//! `Q` only); with `s = 30` that is 25 flooding bits, and at scale `2^50` with `2^11` slots about
//! `50 - 25 - 5.5 = 19.5` bits remain. At scale `2^40` only 9.5 would: share results at a larger scale
//! than the one you compute with.

use rnsfhe_core::keys::SecretPoly;
use rnsfhe_core::samplers::sample_wide_gaussian;
use rnsfhe_math::sampling::{Csprng, WideGaussian, MAX_WIDE_SIGMA};
use rnsfhe_ring::CrtComposer;

use crate::encryption::CkksDecryptor;
use crate::error::{Error, Result};
use crate::plaintext::{Ciphertext, Plaintext};
use crate::Complex64;

/// Largest number of flooding bits accepted (the standard deviation `2^58` of [`MAX_WIDE_SIGMA`]).
pub const MAX_FLOODING_BITS: u32 = 58;

/// The statistical security parameter OpenFHE uses by default in `NOISE_FLOODING_DECRYPT` mode.
pub const DEFAULT_STATISTICAL_SECURITY: u32 = 30;

/// Largest statistical security parameter [`recommended_flooding_bits`] accepts.
pub const MAX_STATISTICAL_SECURITY: u32 = 128;

/// Bits kept between the flooding's standard deviation and `Q_l / 2`: the flooding samples stay below
/// about `12.1 sigma < 2^3.6 sigma`, so with 4 bits the flooded value never wraps modulo `Q_l` because of
/// the flooding alone.
const MODULUS_MARGIN_BITS: f64 = 4.0;

/// The flooding bits for a result whose error has Euclidean norm `2^noise_log2` (over its coefficient
/// vector, as [`CkksDecryptor::noise_log2`] measures it), statistical security `statistical_security`
/// and `decryptions` decrypted results that an adversary may see from ciphertexts of this error level:
/// `ceil(noise_log2 + s/2 + log2(decryptions)/2 - 1/2)`, at least 1 (see the
/// [module documentation](self#how-many-bits) for the derivation and sources).
///
/// Errors: [`Error::InvalidArgument`] for a `noise_log2` that is not a finite number `>= 0` (an error
/// norm below 1 is at most a rounding), `statistical_security` above [`MAX_STATISTICAL_SECURITY`] or
/// `decryptions == 0`.
pub fn recommended_flooding_bits(
    noise_log2: f64,
    statistical_security: u32,
    decryptions: u64,
) -> Result<u32> {
    let operation = "recommended_flooding_bits";
    if !(noise_log2.is_finite() && noise_log2 >= 0.0) {
        return Err(Error::InvalidArgument {
            operation,
            reason: format!(
                "noise_log2 = {noise_log2} must be a finite number >= 0 (log2 of the error's Euclidean norm)"
            ),
        });
    }
    if statistical_security > MAX_STATISTICAL_SECURITY {
        return Err(Error::InvalidArgument {
            operation,
            reason: format!(
                "statistical security {statistical_security} is above {MAX_STATISTICAL_SECURITY} bits (OpenFHE's default is {DEFAULT_STATISTICAL_SECURITY})"
            ),
        });
    }
    if decryptions == 0 {
        return Err(Error::InvalidArgument {
            operation,
            reason: "decryptions = 0: count at least the one decryption being shared".into(),
        });
    }
    let bits =
        noise_log2 + statistical_security as f64 / 2.0 + (decryptions as f64).log2() / 2.0 - 0.5;
    // noise_log2 is finite and the other terms are bounded, so the cast cannot saturate in practice.
    Ok((bits.ceil().max(1.0)) as u32)
}

/// The predicted precision (in bits, `-log2` of the standard deviation of each slot's real-part error)
/// that flooding with `flooding_bits` leaves at scale `2^log2_scale` with `slots` slots:
/// `log2_scale - flooding_bits - log2(slots) / 2`. It ignores the ciphertext's own error, which flooding
/// dominates by construction. The mean over slots of `-log2 |error|` is about 0.92 bit above it.
pub fn flooded_precision_bits(log2_scale: f64, flooding_bits: u32, slots: usize) -> f64 {
    log2_scale - flooding_bits as f64 - (slots.max(1) as f64).log2() / 2.0
}

/// The largest integer strictly below `x`, clamped to `[0, MAX_FLOODING_BITS]`.
fn largest_integer_below(x: f64) -> u32 {
    if x.is_nan() || x <= 0.0 {
        return 0;
    }
    ((x.ceil() - 1.0).max(0.0) as u32).min(MAX_FLOODING_BITS)
}

impl CkksDecryptor {
    /// The most flooding bits [`CkksDecryptor::decrypt_flooded`] accepts for `ct`: the largest `b` with
    /// `b < log2(scale) - log2(sqrt(slots))` (at least some precision left, [`flooded_precision_bits`]
    /// `> 0`) and `b + 4 < log2(Q_l) - 1` (the flooding stays far below `Q_l / 2`), at most
    /// [`MAX_FLOODING_BITS`]; 0 if none.
    ///
    /// Errors: [`Error::ContextMismatch`] for a ciphertext of another context.
    pub fn max_flooding_bits(&self, ct: &Ciphertext) -> Result<u32> {
        self.ctx.check_fingerprint(ct.fingerprint(), "ciphertext")?;
        let (by_scale, by_modulus) = self.flooding_limits(ct);
        Ok(largest_integer_below(by_scale).min(largest_integer_below(by_modulus)))
    }

    /// The two real-valued limits of [`CkksDecryptor::max_flooding_bits`] (scale, modulus).
    fn flooding_limits(&self, ct: &Ciphertext) -> (f64, f64) {
        let by_scale = flooded_precision_bits(ct.log2_scale(), 0, ct.slots());
        let log2_q = self.log2_q(ct.level());
        (by_scale, log2_q - 1.0 - MODULUS_MARGIN_BITS)
    }

    /// `log2(Q_l)` of the first `level` primes.
    fn log2_q(&self, level: usize) -> f64 {
        self.ctx
            .q_moduli()
            .iter()
            .take(level)
            .map(|&q| (q as f64).log2())
            .sum()
    }

    /// The plaintext `<ct, (1, s, ...)> + f`, `f` a fresh integer polynomial of independent discrete
    /// Gaussian coefficients of standard deviation `2^flooding_bits` (the same integers in every limb),
    /// with the ciphertext's scale and slot count. `flooding_bits = 0` adds nothing.
    ///
    /// Errors: [`Error::FloodingTooLarge`] when `flooding_bits` exceeds
    /// [`CkksDecryptor::max_flooding_bits`]; as [`CkksDecryptor::decrypt_plaintext`].
    pub fn decrypt_plaintext_flooded(
        &self,
        ct: &Ciphertext,
        flooding_bits: u32,
        rng: &mut Csprng,
    ) -> Result<Plaintext> {
        let max_bits = self.max_flooding_bits(ct)?;
        if flooding_bits > max_bits {
            return Err(Error::FloodingTooLarge {
                bits: flooding_bits,
                max_bits,
                log2_scale: ct.log2_scale(),
                slots: ct.slots(),
                log2_q: self.log2_q(ct.level()),
                level: ct.level(),
            });
        }
        let mut poly = self.inner.decrypt(&ct.inner)?;
        if flooding_bits > 0 {
            // 2^bits <= 2^58 = MAX_WIDE_SIGMA, checked above.
            debug_assert!(f64::from(flooding_bits).exp2() <= MAX_WIDE_SIGMA);
            let sampler = WideGaussian::new(f64::from(flooding_bits).exp2())?;
            let flood: SecretPoly = sample_wide_gaussian(&sampler, poly.basis(), rng)?;
            poly.add_assign(flood.get())?;
        }
        Ok(Plaintext::from_parts(
            poly,
            ct.scale(),
            ct.slots(),
            self.ctx.fingerprint(),
        ))
    }

    /// The decrypted slots with noise flooding of `flooding_bits` bits (standard deviation
    /// `2^flooding_bits` per coefficient): the decryption to hand to anyone who also sees ciphertexts
    /// (see the [module documentation](crate::flooding) for the choice of bits,
    /// [`recommended_flooding_bits`], and the precision it costs, [`flooded_precision_bits`]).
    /// `flooding_bits = 0` gives exactly [`CkksDecryptor::decrypt`].
    ///
    /// Errors: as [`CkksDecryptor::decrypt_plaintext_flooded`]; decoding errors.
    pub fn decrypt_flooded(
        &self,
        ct: &Ciphertext,
        flooding_bits: u32,
        rng: &mut Csprng,
    ) -> Result<Vec<Complex64>> {
        let pt = self.decrypt_plaintext_flooded(ct, flooding_bits, rng)?;
        self.ctx.decode(&pt)
    }

    /// The real parts of [`CkksDecryptor::decrypt_flooded`].
    ///
    /// Errors: as [`CkksDecryptor::decrypt_flooded`].
    pub fn decrypt_real_flooded(
        &self,
        ct: &Ciphertext,
        flooding_bits: u32,
        rng: &mut Csprng,
    ) -> Result<Vec<f64>> {
        Ok(self
            .decrypt_flooded(ct, flooding_bits, rng)?
            .into_iter()
            .map(|z| z.re)
            .collect())
    }

    /// `log2 ||e||_2`, the Euclidean norm of the error's coefficient vector of `ct` whose slots should
    /// hold `expected` (encoded at the ciphertext's scale, level and slot count; the encoding's rounding,
    /// at most 1/2 per coefficient, is included), clamped below at 0. This is the noise measurement for
    /// [`recommended_flooding_bits`]: run the circuit on representative, non-sensitive inputs whose result
    /// you know, measure, and flood the real results with the bits it recommends. **Diagnostic**: it uses
    /// the secret key and its value depends on the inputs, so never measure the ciphertext you share.
    ///
    /// Errors: [`Error::ContextMismatch`]; encoding errors for `expected` (too many values, non-finite);
    /// as [`CkksDecryptor::decrypt_plaintext`].
    pub fn noise_log2(&self, ct: &Ciphertext, expected: &[Complex64]) -> Result<f64> {
        let pt = self.decrypt_plaintext(ct)?;
        let reference = self
            .ctx
            .encode_at_scale(expected, ct.slots(), ct.level(), ct.scale())?;
        let mut error = pt.poly().clone();
        error.sub_assign(reference.poly())?;
        let error = error.into_coeff();
        let values = CrtComposer::new(error.basis()).compose_centered_f64(&error)?;
        let norm2: f64 = values.iter().map(|v| v * v).sum();
        Ok(norm2.sqrt().max(1.0).log2())
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use crate::keys::KeyGenerator;
    use crate::params::{CkksParams, RescalingPolicy};
    use crate::precision::PrecisionStats;
    use crate::{CkksContext, CkksEncryptor, ConversionMode, SecretDistribution};
    use std::sync::Arc;

    fn ctx(log_scale: u32) -> Arc<CkksContext> {
        CkksContext::new(CkksParams {
            log_n: 12,
            log_scale,
            q0_bits: 60,
            levels: 2,
            bootstrap_primes: Vec::new(),
            special_primes: 1,
            special_bits: 60,
            dnum: 3,
            secret: SecretDistribution::Ternary,
            sigma: 3.2,
            conversion: ConversionMode::ExactFloat,
            rescaling: RescalingPolicy::ExactScale,
            insecure_for_testing: true,
        })
        .unwrap()
    }

    struct Setup {
        ctx: Arc<CkksContext>,
        enc: CkksEncryptor,
        dec: CkksDecryptor,
        rng: Csprng,
    }

    fn setup(log_scale: u32) -> Setup {
        let ctx = ctx(log_scale);
        let mut rng = Csprng::insecure_from_seed_for_tests([11u8; 32]);
        let keys = KeyGenerator::new(&ctx, &mut rng).unwrap();
        let pk = keys.public_key(&mut rng).unwrap();
        Setup {
            enc: CkksEncryptor::with_public_key(&ctx, &pk).unwrap(),
            dec: CkksDecryptor::new(&ctx, keys.secret_key()).unwrap(),
            ctx,
            rng,
        }
    }

    fn values(count: usize) -> Vec<f64> {
        (0..count)
            .map(|i| ((i as f64) * 0.37).sin() * 0.9)
            .collect()
    }

    /// The flooding noise itself, coefficient by coefficient: flooded minus plain decryption (both of the
    /// same ciphertext, the plain one deterministic), centered.
    fn flooding_noise(s: &mut Setup, ct: &Ciphertext, bits: u32) -> Vec<f64> {
        let plain = s.dec.decrypt_plaintext(ct).unwrap();
        let flooded = s
            .dec
            .decrypt_plaintext_flooded(ct, bits, &mut s.rng)
            .unwrap();
        let mut d = flooded.poly().clone();
        d.sub_assign(plain.poly()).unwrap();
        let d = d.into_coeff();
        CrtComposer::new(d.basis())
            .compose_centered_f64(&d)
            .unwrap()
    }

    #[test]
    fn secret_holders_debug_is_redacted() {
        // The CKKS types that hold the secret key print it redacted (no coefficient sequence).
        let ctx = ctx(40);
        let mut rng = Csprng::insecure_from_seed_for_tests([12u8; 32]);
        let kg = KeyGenerator::new(&ctx, &mut rng).unwrap();
        let keys = kg.generate_all(&[1], false, &mut rng).unwrap();
        let coeffs = format!("{:?}", &keys.secret.coefficients()[..6]);
        let coeffs = coeffs.trim_matches(|c| c == '[' || c == ']').to_string();
        let dec = CkksDecryptor::new(&ctx, &keys.secret).unwrap();
        let enc = CkksEncryptor::with_secret_key(&ctx, &keys.secret).unwrap();
        for out in [
            format!("{kg:?}"),
            format!("{keys:?}"),
            format!("{dec:?}"),
            format!("{enc:?}"),
        ] {
            assert!(out.contains("<redacted>"), "{out}");
            assert!(!out.contains(&coeffs), "coefficients {coeffs} printed");
        }
    }

    #[test]
    fn flooding_zero_bits_is_plain_decryption() {
        let mut s = setup(40);
        let ct = s.enc.encrypt(&values(2048), &mut s.rng).unwrap();
        let plain = s.dec.decrypt(&ct).unwrap();
        assert_eq!(s.dec.decrypt_flooded(&ct, 0, &mut s.rng).unwrap(), plain);
        assert_eq!(
            s.dec.decrypt_plaintext_flooded(&ct, 0, &mut s.rng).unwrap(),
            s.dec.decrypt_plaintext(&ct).unwrap()
        );
        let re: Vec<f64> = plain.iter().map(|z| z.re).collect();
        assert_eq!(s.dec.decrypt_real_flooded(&ct, 0, &mut s.rng).unwrap(), re);
    }

    #[test]
    fn flooding_noise_variance_matches() {
        // The added noise over the N = 4096 coefficients: mean 0 and variance 2^(2 bits), each within 5
        // standard errors of the sample size (variance of a Gaussian sample variance: 2 sigma^4 / n), and
        // the same integer in every limb (the centered composition over Q_l would otherwise be huge).
        let mut s = setup(50);
        let ct = s.enc.encrypt(&values(2048), &mut s.rng).unwrap();
        for bits in [5u32, 16, 30] {
            let noise = flooding_noise(&mut s, &ct, bits);
            let n = noise.len() as f64;
            let sigma = f64::from(bits).exp2();
            let mean = noise.iter().sum::<f64>() / n;
            assert!(
                mean.abs() < 5.0 * sigma / n.sqrt(),
                "bits {bits}: mean {mean}"
            );
            let var = noise.iter().map(|x| x * x).sum::<f64>() / n;
            let se = sigma * sigma * (2.0 / n).sqrt();
            assert!(
                (var - sigma * sigma).abs() < 5.0 * se,
                "bits {bits}: variance 2^{:.3}, expected 2^{}, se 2^{:.3}",
                var.log2(),
                2 * bits,
                se.log2()
            );
            assert!(noise.iter().all(|x| x.abs() < 13.0 * sigma));
        }
    }

    #[test]
    fn flooding_slot_error_and_precision_match_prediction() {
        // Slot errors (flooded minus plain decryption): the real parts are independent Gaussians of
        // variance 2^(2 bits) slots / scale^2; checked within 5 standard errors (sqrt(2 / slots) relative).
        // The precision against the true values: mean within 0.2 bit of the prediction + 0.92
        // (E[-log2 |g|] for a standard normal g; the standard error of the mean of -log2 |g| over 2048
        // slots is 1.60 / sqrt(2048) = 0.035 bit).
        let mut s = setup(50);
        for slots_log in [11u32, 6] {
            let slots = 1usize << slots_log;
            let x = values(slots);
            let pt = s.ctx.encode_real(&x, slots, s.ctx.max_level()).unwrap();
            let ct = s.enc.encrypt_plaintext(&pt, &mut s.rng).unwrap();
            let plain = s.dec.decrypt(&ct).unwrap();
            let bits = 20;
            let flooded = s.dec.decrypt_flooded(&ct, bits, &mut s.rng).unwrap();
            let std = f64::from(bits).exp2() * (slots as f64).sqrt() / ct.scale();
            let var: f64 = flooded
                .iter()
                .zip(&plain)
                .map(|(f, p)| (f.re - p.re).powi(2))
                .sum::<f64>()
                / slots as f64;
            let tol = 5.0 * std * std * (2.0 / slots as f64).sqrt();
            assert!(
                (var - std * std).abs() < tol,
                "{slots} slots: slot error variance {var:e}, expected {:e}",
                std * std
            );
            let predicted = flooded_precision_bits(ct.log2_scale(), bits, slots);
            let expected: Vec<Complex64> = x.iter().map(|&v| Complex64::new(v, 0.0)).collect();
            let stats = PrecisionStats::compare(&expected, &flooded).unwrap();
            let margin = 5.0 * 1.60 / (slots as f64).sqrt();
            assert!(
                (stats.real.mean - (predicted + 0.92)).abs() < margin,
                "{slots} slots: {stats}, predicted {predicted:.2} (+0.92)"
            );
        }
    }

    #[test]
    fn flooding_refuses_bits_that_destroy_the_message() {
        let mut s = setup(40);
        let ct = s.enc.encrypt(&values(2048), &mut s.rng).unwrap();
        // log2(scale) ~ 40, sqrt(2048) = 2^5.5: at most 34 bits.
        let max = s.dec.max_flooding_bits(&ct).unwrap();
        assert_eq!(max, 34);
        assert!(s.dec.decrypt_flooded(&ct, max, &mut s.rng).is_ok());
        for bits in [max + 1, 40, 58, 59, u32::MAX] {
            let err = s.dec.decrypt_flooded(&ct, bits, &mut s.rng).unwrap_err();
            match &err {
                Error::FloodingTooLarge {
                    bits: b,
                    max_bits,
                    slots,
                    ..
                } => {
                    assert_eq!((*b, *max_bits, *slots), (bits, 34, 2048));
                }
                other => panic!("unexpected {other:?}"),
            }
            let msg = err.to_string();
            assert!(
                msg.contains(&format!("{bits} bits")) && msg.contains("at most 34 bits"),
                "{msg}"
            );
        }
        // A ciphertext of another context.
        let other = setup(30);
        let mut rng = Csprng::insecure_from_seed_for_tests([3u8; 32]);
        let foreign = other.enc.encrypt(&values(8), &mut rng).unwrap();
        assert!(matches!(
            s.dec.decrypt_flooded(&foreign, 10, &mut s.rng),
            Err(Error::ContextMismatch { .. })
        ));
    }

    #[test]
    fn flooding_recommendation_from_measured_noise() {
        let mut s = setup(40);
        let x = values(2048);
        let ct = s.enc.encrypt(&x, &mut s.rng).unwrap();
        let expected: Vec<Complex64> = x.iter().map(|&v| Complex64::new(v, 0.0)).collect();
        // Fresh public-key encryption divided by p_0: per coefficient the rounding r_0 + r_1 s
        // (r_i uniform in [-1/2, 1/2]) plus the encoding's rounding, variance (1 + h + 1) / 12 with
        // h ~ 2N/3 (uniform ternary), so ||e||_2 ~ sqrt(N (2N/3 + 2) / 12) = 2^9.93 over the N = 4096
        // coefficients (the sum of N squares is within a few percent of its mean: 0.1 bit is over 10
        // standard errors).
        let n = 4096.0f64;
        let predicted = 0.5 * (n * (2.0 * n / 3.0 + 2.0) / 12.0).log2();
        let noise = s.dec.noise_log2(&ct, &expected).unwrap();
        assert!(
            (noise - predicted).abs() < 0.1,
            "noise 2^{noise}, predicted 2^{predicted}"
        );
        let bits = recommended_flooding_bits(noise, DEFAULT_STATISTICAL_SECURITY, 1).unwrap();
        assert_eq!(bits, (noise + 15.0 - 0.5).ceil() as u32);
        // Twice the noise, four times the decryptions: one more bit each.
        assert_eq!(recommended_flooding_bits(20.0, 30, 1).unwrap(), 35);
        assert_eq!(recommended_flooding_bits(21.0, 30, 1).unwrap(), 36);
        assert_eq!(recommended_flooding_bits(20.0, 30, 4).unwrap(), 36);
        assert_eq!(recommended_flooding_bits(0.0, 0, 1).unwrap(), 1);
        for (noise, sec, q) in [
            (f64::NAN, 30, 1),
            (-1.0, 30, 1),
            (f64::INFINITY, 30, 1),
            (10.0, 129, 1),
            (10.0, 30, 0),
        ] {
            assert!(
                matches!(
                    recommended_flooding_bits(noise, sec, q),
                    Err(Error::InvalidArgument { .. })
                ),
                "{noise} {sec} {q}"
            );
        }
        // Too many values for the slots is an encoding error, not a panic.
        assert!(s
            .dec
            .noise_log2(&ct, &vec![Complex64::new(0.0, 0.0); 4096])
            .is_err());
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod measurements {
    use super::*;
    use crate::keys::KeyGenerator;
    use crate::precision::PrecisionStats;
    use crate::{CkksContext, CkksEncryptor, Evaluator, Preset};

    /// Precision after flooding at a 128-bit preset (run with `--ignored --nocapture`): fresh and after
    /// one multiplication, at the recommended bits for s = 30 and a few others, beside the prediction.
    #[test]
    #[ignore = "measurement, prints a table"]
    fn flooding_measure_precision() {
        for preset in [Preset::Rec128N13, Preset::Rec128N14, Preset::PaperTable3] {
            let ctx = CkksContext::new(preset.params()).unwrap();
            let mut rng = Csprng::from_os().unwrap();
            let keys = KeyGenerator::new(&ctx, &mut rng).unwrap();
            let pk = keys.public_key(&mut rng).unwrap();
            let rlk = keys.relin_key(&mut rng).unwrap();
            let enc = CkksEncryptor::with_public_key(&ctx, &pk).unwrap();
            let dec = CkksDecryptor::new(&ctx, keys.secret_key()).unwrap();
            let eval = Evaluator::new(&ctx).with_relin_key(rlk).unwrap();
            let slots = ctx.max_slots();
            let x: Vec<f64> = (0..slots).map(|i| ((i as f64) * 0.37).sin()).collect();
            let ct = enc.encrypt(&x, &mut rng).unwrap();
            let sq = eval.rescale(&eval.multiply(&ct, &ct).unwrap()).unwrap();
            for (name, c, want) in [
                ("fresh", &ct, x.clone()),
                ("x^2", &sq, x.iter().map(|v| v * v).collect::<Vec<_>>()),
            ] {
                let expected: Vec<Complex64> =
                    want.iter().map(|&v| Complex64::new(v, 0.0)).collect();
                let noise = dec.noise_log2(c, &expected).unwrap();
                let rec =
                    recommended_flooding_bits(noise, DEFAULT_STATISTICAL_SECURITY, 1).unwrap();
                let max = dec.max_flooding_bits(c).unwrap();
                for bits in [0, 10, 20, rec] {
                    if bits > max {
                        println!("{preset:?} {name}: {bits} bits refused (max {max})");
                        continue;
                    }
                    let got = dec.decrypt_flooded(c, bits, &mut rng).unwrap();
                    let stats = PrecisionStats::compare(&expected, &got).unwrap();
                    println!(
                        "{preset:?} {name}: log2 scale {:.2}, log2||e|| {noise:.2}, rec {rec}, max {max}, bits {bits}: predicted {:.2} (+0.92 mean), measured real mean {:.2} min {:.2}",
                        c.log2_scale(),
                        flooded_precision_bits(c.log2_scale(), bits, slots),
                        stats.real.mean,
                        stats.real.min
                    );
                }
            }
        }
    }
}
