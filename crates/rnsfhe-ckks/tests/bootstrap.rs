//! CKKS bootstrapping ([`Evaluator::bootstrap`]) at small insecure parameters: full and sparse slots,
//! real and complex values in `[-1, 1]`, within [`Bootstrapper::error_bound`] of the input's
//! decryption, at the documented level and scale; ten bootstraps with a product between each; errors
//! for missing keys, slot counts, contexts, chains too short and scales too large.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::sync::Arc;

use common::{c, complex_values, rng, values};
use rnsfhe_ckks::{
    BootstrapParams, Bootstrapper, Ciphertext, CkksContext, CkksDecryptor, CkksEncryptor,
    CkksParams, Complex64, Error, Evaluator, KeyGenerator, PrecisionStats, SecretDistribution,
};

/// The shared chain (`common::bootstrapping::context`): `N = 2^11`, scale `2^51`, `q_0` of 60 bits
/// (`q_0 / Delta ~ 2^9`), `levels` scaling primes, digits of 4 primes under `P` of four 55-bit primes,
/// Hamming weight 64 (`K = 17`); not secure.
fn context(levels: usize) -> Arc<CkksContext> {
    common::bootstrapping::context(levels)
}

/// [`context`] with another secret.
fn context_with(levels: usize, secret: SecretDistribution) -> Arc<CkksContext> {
    common::bootstrapping::context_with(levels, secret)
}

/// Levels of the test chain: the circuit's 17 (3 + 11 + 3) and two for the user.
const LEVELS: usize = 19;

struct Setup {
    ctx: Arc<CkksContext>,
    keys: KeyGenerator,
    enc: CkksEncryptor,
    dec: CkksDecryptor,
}

impl Setup {
    fn new(seed: u8) -> Self {
        Self::with_context(context(LEVELS), seed)
    }

    fn with_context(ctx: Arc<CkksContext>, seed: u8) -> Self {
        let keys = KeyGenerator::new(&ctx, &mut rng(seed)).unwrap();
        Self {
            enc: CkksEncryptor::with_secret_key(&ctx, keys.secret_key()).unwrap(),
            dec: CkksDecryptor::new(&ctx, keys.secret_key()).unwrap(),
            ctx,
            keys,
        }
    }

    fn bootstrapper(&self, slots: usize) -> Bootstrapper {
        let params = BootstrapParams::for_context(&self.ctx, slots).unwrap();
        Bootstrapper::new(&self.ctx, params).unwrap()
    }

    /// An evaluator with the relinearization key and exactly the bootstrapper's Galois keys.
    fn evaluator(&self, btp: &Bootstrapper) -> Evaluator {
        let mut r = rng(77);
        Evaluator::new(&self.ctx)
            .with_relin_key(self.keys.relin_key(&mut r).unwrap())
            .unwrap()
            .with_bootstrapping_keys(self.keys.bootstrapping_keys(btp, &mut r).unwrap())
            .unwrap()
    }

    /// `z` encrypted at level 1 (`q_0` alone) with the level's default scale.
    fn encrypt_low(&self, z: &[Complex64], slots: usize) -> Ciphertext {
        let pt = self.ctx.encode(z, slots, 1).unwrap();
        self.enc.encrypt_plaintext(&pt, &mut rng(5)).unwrap()
    }
}

/// The largest error of a real or imaginary part.
fn max_error(want: &[Complex64], got: &[Complex64]) -> f64 {
    want.iter()
        .zip(got)
        .map(|(a, b)| (a.re - b.re).abs().max((a.im - b.im).abs()))
        .fold(0.0, f64::max)
}

/// Bootstraps `ct` and checks the result against the input's decryption and the bound; returns it.
fn check(
    s: &Setup,
    eval: &Evaluator,
    btp: &Bootstrapper,
    ct: &Ciphertext,
    label: &str,
) -> Ciphertext {
    let want = s.dec.decrypt(ct).unwrap();
    let out = eval.bootstrap(ct, btp).unwrap();
    assert_eq!(out.level(), btp.output_level(), "{label}");
    assert_eq!(out.slots(), ct.slots(), "{label}");
    let scale = btp.output_scale().unwrap();
    assert!((out.scale() / scale - 1.0).abs() < 1e-12, "{label}");
    let got = s.dec.decrypt(&out).unwrap();
    let err = max_error(&want, &got);
    let bound = btp.error_bound(ct.scale()).unwrap();
    let stats = PrecisionStats::compare(&want, &got).unwrap();
    eprintln!(
        "{label}: error 2^{:.2} (real min {:.1} / median {:.1} bits, imaginary min {:.1} / median {:.1}), \
         bound 2^{:.2} (EvalMod 2^{:.1}, C2S noise 2^{:.1}, EvalMod noise 2^{:.1}, S2C noise 2^{:.1}, \
         encapsulation 2^{:.1}), {} levels left, failure probability {:.1e}",
        err.log2(),
        stats.real.min,
        stats.real.median,
        stats.imag.min,
        stats.imag.median,
        bound.total.log2(),
        bound.eval_mod.log2(),
        bound.c2s_noise.log2(),
        bound.eval_mod_noise.log2(),
        bound.s2c_noise.log2(),
        bound.encapsulation_noise.log2(),
        btp.levels_left(),
        btp.failure_probability()
    );
    assert!(err <= bound.total, "{label}: {err:e} > {:e}", bound.total);
    out
}

#[test]
fn full_slots_real_and_complex() {
    let s = Setup::new(1);
    let slots = s.ctx.max_slots();
    let btp = s.bootstrapper(slots);
    assert!(!btp.is_sparse());
    assert_eq!(btp.depth(), LEVELS - 2);
    assert_eq!(btp.levels_left(), 2);
    // Full slots: no trace.
    assert!(btp.trace_elements().is_empty());
    let eval = s.evaluator(&btp);
    let real = s.encrypt_low(&c(&values(slots, 3)), slots);
    check(&s, &eval, &btp, &real, "full slots, real");
    let complex = s.encrypt_low(&complex_values(slots, 4), slots);
    check(&s, &eval, &btp, &complex, "full slots, complex");
}

#[test]
fn sparse_slots_real_and_complex() {
    let s = Setup::new(2);
    // N/4 (the paired matrices on N/2 slots) and a small count (six trace steps).
    for slots in [s.ctx.max_slots() / 2, 16] {
        let btp = s.bootstrapper(slots);
        assert!(btp.is_sparse());
        let g = s.ctx.max_slots() / slots;
        assert_eq!(btp.trace_elements().len(), g.trailing_zeros() as usize);
        let eval = s.evaluator(&btp);
        let real = s.encrypt_low(&c(&values(slots, 5)), slots);
        check(&s, &eval, &btp, &real, &format!("{slots} slots, real"));
        let complex = s.encrypt_low(&complex_values(slots, 6), slots);
        check(
            &s,
            &eval,
            &btp,
            &complex,
            &format!("{slots} slots, complex"),
        );
    }
}

/// Ten bootstraps, each followed by `x -> 2 x^2 - 1` (a product, one level; the values stay in
/// `[-1, 1]`): every bootstrap stays within its bound, from inputs at a level above 1 too.
#[test]
fn ten_bootstraps_with_a_product_between_each() {
    let s = Setup::new(3);
    let slots = 64;
    let btp = s.bootstrapper(slots);
    let eval = s.evaluator(&btp);
    // Real values: 2 x^2 - 1 keeps them in [-1, 1] (complex ones would leave EvalMod's range).
    let mut x = s.encrypt_low(&c(&values(slots, 7)), slots);
    for i in 0..10 {
        let b = check(&s, &eval, &btp, &x, &format!("bootstrap {i}"));
        let sq = eval.multiply_rescale(&b, &b).unwrap();
        x = eval
            .add_real(&eval.multiply_int(&sq, 2).unwrap(), -1.0)
            .unwrap();
        assert_eq!(x.level(), btp.output_level() - 1);
    }
}

#[test]
fn errors_for_keys_slots_contexts_levels_and_scales() {
    let s = Setup::new(4);
    let slots = 16;
    let btp = s.bootstrapper(slots);
    let ct = s.encrypt_low(&c(&values(slots, 8)), slots);
    let mut r = rng(9);
    let relin = s.keys.relin_key(&mut r).unwrap();

    // Without Galois keys at all, and without the relinearization key.
    let bare = Evaluator::new(&s.ctx)
        .with_relin_key(relin.clone())
        .unwrap();
    assert!(matches!(
        bare.bootstrap(&ct, &btp),
        Err(Error::MissingKey { .. })
    ));
    let no_relin = Evaluator::new(&s.ctx)
        .with_bootstrapping_keys(s.keys.bootstrapping_keys(&btp, &mut r).unwrap())
        .unwrap();
    assert!(matches!(
        no_relin.bootstrap(&ct, &btp),
        Err(Error::MissingKey { .. })
    ));

    // One rotation key missing: the error names its element and step. (The trace's elements are
    // rotations too, `2N/2^i + 1 = 5^k`: the dropped step is one that is not among them.)
    let steps = btp.rotation_steps();
    let trace = btp.trace_elements();
    let group = s.ctx.galois_group();
    let dropped = steps
        .iter()
        .find(|&&k| !trace.contains(&group.element_of_step(k).value()))
        .unwrap();
    let rest: Vec<i64> = steps.iter().copied().filter(|k| k != dropped).collect();
    let gk = s
        .keys
        .galois_keys_with_elements(&rest, true, &trace, &mut r)
        .unwrap();
    let partial = Evaluator::new(&s.ctx)
        .with_relin_key(relin.clone())
        .unwrap()
        .with_galois_keys(gk)
        .unwrap();
    let element = group.element_of_step(*dropped).value();
    match partial.bootstrap(&ct, &btp) {
        Err(Error::Core(rnsfhe_core::Error::MissingGaloisKey {
            element: e, step, ..
        })) => {
            assert_eq!(e, element);
            assert_eq!(step, Some(*dropped));
        }
        other => panic!("expected a missing Galois key, got {other:?}"),
    }
    // The conjugation key missing.
    let gk = s
        .keys
        .galois_keys_with_elements(&steps, false, &btp.trace_elements(), &mut r)
        .unwrap();
    let no_conj = Evaluator::new(&s.ctx)
        .with_relin_key(relin.clone())
        .unwrap()
        .with_galois_keys(gk)
        .unwrap();
    let conj = s.ctx.galois_group().conjugation().value();
    assert!(matches!(
        no_conj.bootstrap(&ct, &btp),
        Err(Error::Core(rnsfhe_core::Error::MissingGaloisKey { element, step: None, .. })) if element == conj
    ));
    // Every element galois_elements lists is what bootstrapping_keys makes.
    let full = s.keys.bootstrapping_keys(&btp, &mut r).unwrap();
    // A Hamming-weight secret raises under itself: no encapsulation.
    assert!(full.encapsulation.is_none() && btp.sparse_secret().is_none());
    let mut made = full.galois.elements();
    made.sort_unstable();
    let listed: Vec<usize> = btp.galois_elements().iter().map(|(e, _)| *e).collect();
    assert_eq!(made, listed);
    let eval = Evaluator::new(&s.ctx)
        .with_relin_key(relin)
        .unwrap()
        .with_bootstrapping_keys(full)
        .unwrap();

    // Unsupported slot counts, and a ciphertext of another slot count.
    for bad in [0usize, 48, 2 * s.ctx.max_slots()] {
        assert!(
            matches!(
                BootstrapParams::for_context(&s.ctx, bad),
                Err(Error::InvalidSlots { .. })
            ),
            "{bad}"
        );
        let params = BootstrapParams {
            slots: bad,
            ..BootstrapParams::for_context(&s.ctx, slots).unwrap()
        };
        assert!(matches!(
            Bootstrapper::new(&s.ctx, params),
            Err(Error::InvalidSlots { .. })
        ));
    }
    let other_slots = s.encrypt_low(&c(&values(32, 8)), 32);
    assert!(matches!(
        eval.bootstrap(&other_slots, &btp),
        Err(Error::SlotsMismatch {
            left: 32,
            right: 16,
            ..
        })
    ));

    // A ciphertext of another context, and a bootstrapper of another context.
    let other = context(LEVELS + 1);
    let other_keys = KeyGenerator::new(&other, &mut rng(10)).unwrap();
    let other_enc = CkksEncryptor::with_secret_key(&other, other_keys.secret_key()).unwrap();
    let foreign = other_enc
        .encrypt_plaintext(
            &other.encode(&c(&values(slots, 8)), slots, 1).unwrap(),
            &mut rng(11),
        )
        .unwrap();
    assert!(matches!(
        eval.bootstrap(&foreign, &btp),
        Err(Error::ContextMismatch { .. })
    ));
    let other_btp =
        Bootstrapper::new(&other, BootstrapParams::for_context(&other, slots).unwrap()).unwrap();
    assert!(matches!(
        eval.bootstrap(&ct, &other_btp),
        Err(Error::ContextMismatch { .. })
    ));
    assert!(matches!(
        s.keys.bootstrapping_keys(&other_btp, &mut rng(12)),
        Err(Error::ContextMismatch { .. })
    ));

    // A chain too short: the error says how many levels the circuit needs.
    let short = context(12);
    let params = BootstrapParams::for_context(&short, slots).unwrap();
    match Bootstrapper::new(&short, params) {
        Err(e @ Error::BootstrapTooDeep { .. }) => {
            let Error::BootstrapTooDeep {
                needed, available, ..
            } = e
            else {
                unreachable!()
            };
            assert_eq!(needed, LEVELS - 2 + 1);
            assert_eq!(available, 13);
            assert!(
                e.to_string().contains(&format!("needs {needed} levels")),
                "{e}"
            );
        }
        other => panic!("expected BootstrapTooDeep, got {other:?}"),
    }
    // EvalMod with a start level, DFT levels out of range.
    let base = BootstrapParams::for_context(&s.ctx, slots).unwrap();
    let mut with_start = base;
    with_start.eval_mod.start_level = Some(10);
    assert!(matches!(
        Bootstrapper::new(&s.ctx, with_start),
        Err(Error::InvalidEvalMod { .. })
    ));
    for (c2s_levels, s2c_levels) in [(0, 3), (3, 5)] {
        let p = BootstrapParams {
            c2s_levels,
            s2c_levels,
            ..base
        };
        assert!(matches!(
            Bootstrapper::new(&s.ctx, p),
            Err(Error::InvalidArgument { .. })
        ));
    }

    // A scale too large for the EvalMod range (q_0 / Delta below 2^log_message_ratio).
    let big = s
        .ctx
        .encode_at_scale(&c(&values(slots, 8)), slots, 1, btp.max_input_scale() * 4.0)
        .unwrap();
    let big = s.enc.encrypt_plaintext(&big, &mut rng(13)).unwrap();
    assert!(matches!(
        eval.bootstrap(&big, &btp),
        Err(Error::InvalidArgument { .. })
    ));
    assert!(btp.error_bound(btp.max_input_scale() * 4.0).is_err());
}

/// A dense (uniform ternary) secret: `for_context` raises under a sparse secret of Hamming weight 32
/// (sparse-secret encapsulation), so `K` is that of `h = 32` and EvalMod needs fewer double angles
/// than without it; full and sparse slots stay within the bound. Without the encapsulation key, or
/// with one of another weight, bootstrapping is an error, not a panic.
#[test]
fn dense_secret_bootstraps_under_the_encapsulation() {
    let s = Setup::with_context(context_with(LEVELS, SecretDistribution::Ternary), 30);
    let slots = s.ctx.max_slots();
    let params = BootstrapParams::for_context(&s.ctx, slots).unwrap();
    assert_eq!(
        params.sparse_secret,
        Some(rnsfhe_ckks::DEFAULT_SPARSE_WEIGHT)
    );
    // K = ceil(7 sqrt(33 / 12)) = 12, against ceil(7 sqrt((1 + 2N/3) / 12)) = 75 raised under the
    // dense secret, which needs more double angles.
    assert_eq!(params.eval_mod.k, 12);
    let dense = BootstrapParams {
        sparse_secret: None,
        eval_mod: rnsfhe_ckks::EvalModParams {
            k: rnsfhe_ckks::EvalModParams::k_for_secret(2.0 * s.ctx.n() as f64 / 3.0, 7.0).unwrap(),
            ..params.eval_mod
        },
        ..params
    };
    assert_eq!(dense.eval_mod.k, 75);
    let btp = Bootstrapper::new(&s.ctx, params).unwrap();
    assert_eq!(btp.sparse_secret(), Some(32));
    // The union bound over the N coefficients: N 2 exp(-K^2 / (2 sigma_I^2)), sigma_I^2 = 33 / 12.
    let want = s.ctx.n() as f64 * 2.0 * (-144.0f64 / (2.0 * 33.0 / 12.0)).exp();
    assert!((btp.failure_probability() / want - 1.0).abs() < 1e-12);
    let keys = s.keys.bootstrapping_keys(&btp, &mut rng(31)).unwrap();
    assert_eq!(keys.encapsulation.as_ref().map(|e| e.weight()), Some(32));
    let eval = s.evaluator(&btp);
    let real = s.encrypt_low(&c(&values(slots, 32)), slots);
    check(
        &s,
        &eval,
        &btp,
        &real,
        "dense secret, encapsulated, full slots",
    );
    let sparse = s.bootstrapper(64);
    assert_eq!(sparse.sparse_secret(), Some(32));
    let eval64 = s.evaluator(&sparse);
    let complex = s.encrypt_low(&complex_values(64, 33), 64);
    check(
        &s,
        &eval64,
        &sparse,
        &complex,
        "dense secret, encapsulated, 64 slots",
    );

    // Missing encapsulation key: the evaluator has only the Galois keys.
    let relin = s.keys.relin_key(&mut rng(34)).unwrap();
    let galois_only = Evaluator::new(&s.ctx)
        .with_relin_key(relin.clone())
        .unwrap()
        .with_galois_keys(keys.galois.clone())
        .unwrap();
    match galois_only.bootstrap(&real, &btp) {
        Err(e @ Error::MissingKey { .. }) => {
            assert!(e.to_string().contains("encapsulation"), "{e}");
        }
        other => panic!("expected a missing encapsulation key, got {other:?}"),
    }
    // An encapsulation of another weight than the bootstrapper's EvalMod was made for.
    let heavier = Bootstrapper::new(
        &s.ctx,
        BootstrapParams {
            sparse_secret: Some(40),
            ..params
        },
    )
    .unwrap();
    let eval = galois_only
        .with_encapsulation(keys.encapsulation.unwrap())
        .unwrap();
    assert!(matches!(
        eval.bootstrap(&real, &heavier),
        Err(Error::InvalidArgument { .. })
    ));
    // Weights outside 1..=N.
    for bad in [0, s.ctx.n() + 1] {
        let p = BootstrapParams {
            sparse_secret: Some(bad),
            ..params
        };
        assert!(matches!(
            Bootstrapper::new(&s.ctx, p),
            Err(Error::InvalidArgument { .. })
        ));
    }
}

/// The integer parts `I` of real ModRaises, dense and encapsulated (`N = 2^11`, 16 encryptions of
/// `N` coefficients each, `M = 32768` samples), against the model behind `K` and
/// [`Bootstrapper::failure_probability`]:
///
/// * the root mean square of `I` is `sigma_I = sqrt((1 + ||s||^2) / 12)` (`||s||^2` the actual
///   secret's, `h` under the encapsulation). Its sampling error: `I_k` and `I_j` of one ciphertext
///   are correlated through the secret's autocorrelation `a_d` (`rho_d = a_d / (1 + ||s||^2)`), and
///   for (nearly) Gaussian `I` the estimate of `sigma_I^2` has variance `2 sigma_I^4 (1 + C) / M`,
///   `C = sum_{d != 0} rho_d^2`, about `||s||^4 / (1 + ||s||^2)^2 < 1` for a random secret (each of
///   the `||s||^2 (||s||^2 - 1)` ordered pairs of nonzero coefficients adds 1 in expectation). The
///   relative standard error of the rms is then at most `sqrt((1 + C) / (2 M)) <= sqrt(1 / M)`
///   (`C <= 1`; sums of uniforms are lighter-tailed than Gaussians); taking `C <= 2` for the secret's
///   own fluctuation, 5 standard errors are `5 sqrt(1.5 / M) = 3.4%`;
/// * the empirical tail `#{|I| > k}` at several `k` is at most the sub-Gaussian bound
///   `M 2 exp(-k^2 / (2 sigma_I^2))` plus 5 binomial standard deviations, and no `|I|` exceeds the
///   `K` of `for_context` (expected count `M 2 exp(-24.5) ~ 2e-6`).
#[test]
fn integer_parts_of_the_raise_follow_the_stated_distribution() {
    let ctx = context_with(3, SecretDistribution::Ternary);
    let keys = KeyGenerator::new(&ctx, &mut rng(40)).unwrap();
    let enc = CkksEncryptor::with_secret_key(&ctx, keys.secret_key()).unwrap();
    let dec = CkksDecryptor::new(&ctx, keys.secret_key()).unwrap();
    let eval = Evaluator::new(&ctx);
    let encapsulation = rnsfhe_ckks::SparseEncapsulation::generate(
        &ctx,
        keys.secret_key(),
        rnsfhe_ckks::DEFAULT_SPARSE_WEIGHT,
        true,
        &mut rng(41),
    )
    .unwrap();
    let q0 = ctx.q_moduli()[0] as f64;
    let slots = ctx.max_slots();
    let level = ctx.max_level();
    let (mut dense, mut sparse) = (Vec::new(), Vec::new());
    for i in 0..16u8 {
        let pt = ctx
            .encode(&c(&values(slots, 50 + u64::from(i))), slots, 1)
            .unwrap();
        let low = enc.encrypt_plaintext(&pt, &mut rng(42 + i)).unwrap();
        let before =
            rnsfhe_ckks::plaintext_coefficients(&ctx, &dec.decrypt_plaintext(&low).unwrap())
                .unwrap();
        let integer_parts = |raised: &Ciphertext, out: &mut Vec<i64>| {
            let after =
                rnsfhe_ckks::plaintext_coefficients(&ctx, &dec.decrypt_plaintext(raised).unwrap())
                    .unwrap();
            for (a, b) in after.iter().zip(&before) {
                // (a - b) Delta = q_0 I, plus the encapsulation's key-switching noise (far below q_0).
                let k = (a - b) * low.scale() / q0;
                assert!((k - k.round()).abs() < 1e-3, "{k}");
                out.push(k.round() as i64);
            }
        };
        integer_parts(&eval.mod_raise(&low, level).unwrap(), &mut dense);
        integer_parts(
            &encapsulation.raise_ciphertext(&eval, &low, level).unwrap(),
            &mut sparse,
        );
    }
    let norm_sq = keys.secret_key().hamming_weight() as f64;
    let h = rnsfhe_ckks::DEFAULT_SPARSE_WEIGHT as f64;
    // The K of for_context for each: 7 standard deviations of the expected norm.
    let k_dense =
        rnsfhe_ckks::EvalModParams::k_for_secret(2.0 * ctx.n() as f64 / 3.0, 7.0).unwrap();
    let k_sparse = rnsfhe_ckks::EvalModParams::k_for_secret(h, 7.0).unwrap();
    for (label, parts, norm_sq, big_k) in [
        ("dense", &dense, norm_sq, k_dense),
        ("encapsulated", &sparse, h, k_sparse),
    ] {
        let m = parts.len() as f64;
        let sigma = ((1.0 + norm_sq) / 12.0).sqrt();
        let rms = (parts.iter().map(|&i| (i * i) as f64).sum::<f64>() / m).sqrt();
        let tolerance = 5.0 * (1.5 / m).sqrt();
        eprintln!(
            "{label}: {} samples, rms of I {rms:.6} against sigma_I {sigma:.6} (relative {:+.6}, \
             tolerance {tolerance:.4}), max |I| {} against K = {big_k}",
            parts.len(),
            rms / sigma - 1.0,
            parts.iter().map(|i| i.abs()).max().unwrap()
        );
        assert!(
            (rms / sigma - 1.0).abs() < tolerance,
            "{label}: {rms} vs {sigma}"
        );
        let mut thresholds: Vec<f64> = [1.5, 2.0, 2.5, 3.0, 3.5, 4.0]
            .iter()
            .map(|x| (x * sigma).floor())
            .collect();
        thresholds.dedup();
        for k in thresholds {
            let count = parts.iter().filter(|&&i| i.abs() as f64 > k).count() as f64;
            let bound = m * 2.0 * (-k * k / (2.0 * sigma * sigma)).exp();
            eprintln!("  #{{|I| > {k}}} = {count}, sub-Gaussian bound {bound:.1}");
            assert!(
                count <= bound + 5.0 * bound.sqrt(),
                "{label}: {count} > {bound}"
            );
        }
        assert!(
            parts.iter().all(|i| i.unsigned_abs() <= u64::from(big_k)),
            "{label}"
        );
    }
}

/// The test chain at `N = 2^15` (`2^14` slots, full): one bootstrapping within its bound, with the time,
/// the precision, the levels left and the key sizes printed. About 4.5 GB of Galois keys and a minute
/// of key generation on one core, so it runs only on request:
/// `cargo test --release -p rnsfhe-ckks --test bootstrap -- --ignored --nocapture`.
#[test]
#[ignore = "N = 2^15: gigabytes of keys; run with --ignored"]
fn full_size_n15() {
    use rnsfhe_ckks::{PublicRandomness, Serializable};
    use std::time::Instant;
    let ctx = CkksContext::new(CkksParams {
        log_n: 15,
        ..context(LEVELS).params().clone()
    })
    .unwrap();
    let slots = ctx.max_slots();
    let mut r = rng(21);
    let keys = KeyGenerator::new(&ctx, &mut r).unwrap();
    let btp = Bootstrapper::new(&ctx, BootstrapParams::for_context(&ctx, slots).unwrap()).unwrap();
    let start = Instant::now();
    let relin = keys.relin_key(&mut r).unwrap();
    let galois = keys.bootstrapping_keys(&btp, &mut r).unwrap();
    let keygen = start.elapsed();
    let key_bytes = galois
        .galois
        .serialized_size_with(PublicRandomness::Expanded)
        + relin.serialized_size_with(PublicRandomness::Expanded);
    let eval = Evaluator::new(&ctx)
        .with_relin_key(relin)
        .unwrap()
        .with_bootstrapping_keys(galois)
        .unwrap();
    let enc = CkksEncryptor::with_secret_key(&ctx, keys.secret_key()).unwrap();
    let dec = CkksDecryptor::new(&ctx, keys.secret_key()).unwrap();
    let z = complex_values(slots, 22);
    let ct = enc
        .encrypt_plaintext(&ctx.encode(&z, slots, 1).unwrap(), &mut rng(23))
        .unwrap();
    let want = dec.decrypt(&ct).unwrap();
    let start = Instant::now();
    let out = eval.bootstrap(&ct, &btp).unwrap();
    let time = start.elapsed();
    let got = dec.decrypt(&out).unwrap();
    let err = max_error(&want, &got);
    let bound = btp.error_bound(ct.scale()).unwrap();
    let stats = PrecisionStats::compare(&want, &got).unwrap();
    eprintln!(
        "N = 2^15, {slots} slots, {} thread(s): bootstrap {:.2} s, key generation {:.1} s, keys {:.2} GB \
         ({} Galois elements); precision real min {:.1} / median {:.1} bits, imaginary min {:.1} / \
         median {:.1}; error 2^{:.2}, bound 2^{:.2}; {} levels left",
        rayon::current_num_threads(),
        time.as_secs_f64(),
        keygen.as_secs_f64(),
        key_bytes as f64 / 1e9,
        btp.galois_elements().len(),
        stats.real.min,
        stats.real.median,
        stats.imag.min,
        stats.imag.median,
        err.log2(),
        bound.total.log2(),
        btp.levels_left()
    );
    assert_eq!(out.level(), btp.output_level());
    assert!(err <= bound.total, "{err:e} > {:e}", bound.total);
}
