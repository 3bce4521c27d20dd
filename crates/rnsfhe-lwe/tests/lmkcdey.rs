//! The automorphism-based blind rotation of Lee et al. (Eurocrypt 2023, Algorithm 3;
//! `BlindRotation::Lmkcdey`) and look-up tables on inputs of any modulus `q >= 2n`, at small insecure
//! sizes: outputs within the error bound for ternary (fixed weight and uniform) and binary LWE keys and
//! for every window, the rotation error's variance against its formula, the rounding of the modulus
//! switch to odd masks against its variance, and errors for misuse.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;
use common::lut_ring;

use rand::Rng;

use rnsfhe_core::{SecretDistribution, SecretKey};
use rnsfhe_lwe::{
    extract, BlindRotation, BlindRotationKey, LookupTable, LutEvaluator, LweCiphertext,
    LweDimension, LweError, LweSecretDistribution, LweSecretKey, LMKCDEY_DEFAULT_WINDOW,
};
use rnsfhe_math::sampling::{Csprng, DiscreteGaussian};
use rnsfhe_math::Modulus;

/// The LWE keys of the tests: fixed Hamming weight, uniform ternary and binary.
fn lwe_keys(dimension: usize, r: &mut Csprng) -> Vec<(&'static str, LweSecretKey)> {
    let dim = LweDimension::new(dimension).unwrap();
    vec![
        (
            "ternary h = 32",
            LweSecretKey::generate(dim, SecretDistribution::HammingWeight(32), r).unwrap(),
        ),
        (
            "uniform ternary",
            LweSecretKey::generate(dim, SecretDistribution::Ternary, r).unwrap(),
        ),
        (
            "binary",
            LweSecretKey::generate(dim, LweSecretDistribution::UniformBinary, r).unwrap(),
        ),
    ]
}

fn norm_sq(key: &LweSecretKey) -> f64 {
    key.coefficients().iter().map(|c| (c * c) as f64).sum()
}

/// A named function and its Lipschitz constant.
type Case = (&'static str, fn(f64) -> f64, f64);

const FUNCTIONS: [Case; 3] = [
    ("sigmoid", |x| 1.0 / (1.0 + (-x).exp()), 0.25),
    ("relu", |x| x.max(0.0), 1.0),
    ("identity", |x| x, 1.0),
];

#[test]
fn lmkcdey_tables_meet_the_error_bound_for_every_key_kind() {
    let (ctx, q0, mut r) = lut_ring(60, 21);
    let ring_sk = SecretKey::generate(&ctx, &mut r).unwrap();
    let out_sk = LweSecretKey::from_ring_key(&ring_sk).unwrap();
    let modulus = Modulus::new(q0).unwrap();
    let noise = DiscreteGaussian::with_sigma(3.2).unwrap();
    // Inputs m in [-8, 8) with Delta = q_0 / 64: |Delta m| < q_0 / 8, inside the contract.
    let delta = q0 as f64 / 64.0;
    let inputs: Vec<f64> = (0..8).map(|_| r.gen_range(-8.0..8.0)).collect();
    for (kind, lwe_sk) in lwe_keys(64, &mut r) {
        let key = BlindRotationKey::generate_with(
            BlindRotation::Lmkcdey,
            &ctx,
            &ring_sk,
            &lwe_sk,
            &mut r,
        )
        .unwrap();
        assert_eq!(key.algorithm(), BlindRotation::Lmkcdey);
        assert_eq!(key.window(), Some(LMKCDEY_DEFAULT_WINDOW));
        assert_eq!(key.rgsw_keys().len(), 64);
        assert!(key.rgsw_keys().iter().all(|k| k.len() == 1));
        assert_eq!(
            key.galois_keys().unwrap().elements().len(),
            LMKCDEY_DEFAULT_WINDOW + 1
        );
        let eval = LutEvaluator::new(key);
        let cts: Vec<_> = inputs
            .iter()
            .map(|&m| lwe_sk.encrypt((m * delta).round() as i64, &modulus, &noise, &mut r))
            .collect();
        for (name, f, lipschitz) in FUNCTIONS {
            let table = LookupTable::from_fn(&ctx, delta, delta, f).unwrap();
            let bound = eval.error_bound(&table, lipschitz, 3.2, norm_sq(&lwe_sk));
            for (out, &m) in eval
                .evaluate_many(&cts, &table)
                .unwrap()
                .iter()
                .zip(&inputs)
            {
                assert_eq!(out.dimension().get(), ctx.n());
                assert_eq!(out.modulus().value(), q0);
                let got = out_sk.decrypt(out).unwrap() as f64 / delta;
                assert!(
                    (got - f(m)).abs() <= bound,
                    "{kind}, {name}({m}) = {}, got {got}, bound {bound}",
                    f(m)
                );
            }
        }
    }
}

/// Every window gives the same rotation up to its error: the schedule merges the automorphisms of empty
/// classes correctly for runs of any length (`w = 1`: no merging at all); the expected number of
/// automorphisms of `added_variance` is the mean over random masks.
#[test]
fn every_window_rotates_by_the_phase() {
    let (ctx, _, mut r) = lut_ring(60, 22);
    let two_n = 2 * ctx.n() as u64;
    let ring_sk = SecretKey::generate(&ctx, &mut r).unwrap();
    let out_sk = LweSecretKey::from_ring_key(&ring_sk).unwrap();
    let lwe_sk = LweSecretKey::generate(
        LweDimension::new(24).unwrap(),
        SecretDistribution::Ternary,
        &mut r,
    )
    .unwrap();
    // The table f = sum_j j X^j (coefficient j = j): f X^k has constant coefficient -(n - k) for
    // 0 < k < n, so the rotation's index k = b + <a, s> mod 2n reads back exactly.
    let n = ctx.n();
    let delta = 1i64 << 20;
    let values: Vec<f64> = (0..n).map(|j| j as f64).collect();
    let table = LookupTable::from_values(&ctx, &values, 1.0, delta as f64).unwrap();
    let modulus = Modulus::new(two_n).unwrap();
    let cts: Vec<LweCiphertext> = (0..6)
        .map(|_| {
            let b = r.gen_range(0..two_n);
            let a = (0..24).map(|_| 2 * r.gen_range(0..two_n / 2) + 1).collect();
            LweCiphertext::from_parts(modulus.value(), b, a).unwrap()
        })
        .collect();
    for window in [1, 3, 7, 40, n / 2 - 1] {
        let key =
            BlindRotationKey::generate_lmkcdey(&ctx, &ring_sk, &lwe_sk, window, &mut r).unwrap();
        assert_eq!(key.window(), Some(window));
        for ct in &cts {
            let k = lwe_sk.decrypt(ct).unwrap().rem_euclid(two_n as i64) as usize;
            // X^k = -X^(k - n) for k >= n.
            let (index, sign) = if k < n { (k, 1) } else { (k - n, -1) };
            let expected = if index == 0 {
                0
            } else {
                -(sign * (n - index) as i64)
            };
            let out = extract(&key.rotate(table.poly(), ct).unwrap(), 0).unwrap();
            let got = out_sk.decrypt(&out).unwrap();
            assert_eq!(
                (got as f64 / delta as f64).round() as i64,
                expected,
                "window {window}, index {k}"
            );
        }
        // added_variance is the mean of rotation_variance over random odd masks (the schedule alone, no
        // rotation: cheap).
        let masks = 400;
        let mean = (0..masks)
            .map(|_| {
                let a = (0..24).map(|_| 2 * r.gen_range(0..two_n / 2) + 1).collect();
                let ct = LweCiphertext::from_parts(two_n, 0, a).unwrap();
                key.rotation_variance(&ct).unwrap()
            })
            .sum::<f64>()
            / masks as f64;
        let ratio = mean / key.added_variance(24);
        eprintln!("window {window}: mean exact variance / added_variance = {ratio:.4}");
        assert!((0.98..=1.02).contains(&ratio), "window {window}: {ratio}");
    }
}

/// The error added by LMKCDEY blind rotation over 1000 look-up tables of a constant function (whose output
/// is exactly `Delta c` plus that error) has the variance of `BlindRotationKey::rotation_variance` (the
/// formula with the ciphertext's own number of automorphisms) and of `added_variance` (the formula with
/// the expected number) within 10 %, at small dimensions with both of its terms (key errors and ModDown
/// roundings) present.
#[test]
fn lmkcdey_noise_matches_the_variance_formula() {
    let (ctx, q0, mut r) = lut_ring(50, 23);
    let two_n = 2 * ctx.n() as u64;
    let ring_sk = SecretKey::generate(&ctx, &mut r).unwrap();
    let dim = LweDimension::new(16).unwrap();
    let out_sk = LweSecretKey::from_ring_key(&ring_sk).unwrap();
    let modulus = Modulus::new(q0).unwrap();
    let noise = DiscreteGaussian::with_sigma(3.2).unwrap();
    let lwe_sk = LweSecretKey::generate(dim, SecretDistribution::Ternary, &mut r).unwrap();
    // A small output value keeps the first product's (non-uniform) input small, as the formula assumes.
    let (delta, c) = (2f64.powi(20), 3.0);
    let table = LookupTable::from_fn(&ctx, q0 as f64 / 64.0, delta, |_| c).unwrap();
    let key =
        BlindRotationKey::generate_with(BlindRotation::Lmkcdey, &ctx, &ring_sk, &lwe_sk, &mut r)
            .unwrap();
    let (mut sum_sq, mut expected, mut mean, samples) = (0.0, 0.0, 0.0, 1000);
    for _ in 0..samples {
        let m = r.gen_range(-(q0 as i64) / 8..(q0 as i64) / 8);
        let ct = lwe_sk.encrypt(m, &modulus, &noise, &mut r);
        let switched = ct.switch_modulus_odd_mask(two_n).unwrap();
        expected += key.rotation_variance(&switched).unwrap();
        mean += key.added_variance(16);
        let out = extract(&key.rotate(table.poly(), &switched).unwrap(), 0).unwrap();
        let e = (out_sk.decrypt(&out).unwrap() as f64) - delta * c;
        sum_sq += e * e;
    }
    // Against the exact count of every ciphertext, and against the mean over masks.
    for (name, formula) in [("rotation_variance", expected), ("added_variance", mean)] {
        let ratio = sum_sq / formula;
        eprintln!("LMKCDEY blind rotation error variance: measured / {name} = {ratio:.3}");
        assert!(
            (0.9..=1.1).contains(&ratio),
            "measured {:.2}, {name} {:.2} (ratio {ratio:.3})",
            sum_sq / samples as f64,
            formula / samples as f64
        );
    }
}

/// The rounding error of the modulus switch to `2n`, measured over 4000 ciphertexts, has the variance
/// `(1 + ||s||^2) / 12` when rounding to the nearest integer and `1/12 + ||s||^2 / 3` when the mask is
/// rounded to odd values (within 10 %); the odd switch gives odd masks only.
#[test]
fn modulus_switch_rounding_variances() {
    let mut r = Csprng::insecure_from_seed_for_tests([24; 32]);
    let q = (1u64 << 45) - 55;
    let modulus = Modulus::new(q).unwrap();
    let noise = DiscreteGaussian::with_sigma(3.2).unwrap();
    let key = LweSecretKey::generate(
        LweDimension::new(64).unwrap(),
        SecretDistribution::HammingWeight(40),
        &mut r,
    )
    .unwrap();
    let two_n = 2048u64;
    let s2 = norm_sq(&key);
    let (mut plain, mut odd, samples) = (0.0, 0.0, 4000);
    for _ in 0..samples {
        let m = r.gen_range(-(q as i64) / 4..(q as i64) / 4);
        let ct = key.encrypt(m, &modulus, &noise, &mut r);
        // The phase scaled to 2n (the input error scales to about 2^-31: negligible).
        let exact = key.decrypt(&ct).unwrap() as f64 * two_n as f64 / q as f64;
        let rounded = ct.switch_modulus(two_n).unwrap();
        let to_odd = ct.switch_modulus_odd_mask(two_n).unwrap();
        assert!(to_odd.a().iter().all(|&a| a % 2 == 1 && a < two_n));
        assert_eq!(to_odd.b(), rounded.b());
        for (sum, switched) in [(&mut plain, &rounded), (&mut odd, &to_odd)] {
            let e = key.decrypt(switched).unwrap() as f64 - exact;
            assert!(e.abs() <= 0.5 + 2.0 * s2, "{e}");
            *sum += e * e;
        }
    }
    for (name, sum, formula) in [
        ("nearest", plain, (1.0 + s2) / 12.0),
        ("odd", odd, 1.0 / 12.0 + s2 / 3.0),
    ] {
        let ratio = sum / samples as f64 / formula;
        assert!((0.9..=1.1).contains(&ratio), "{name}: ratio {ratio:.3}");
    }
    // Odd residues are units only modulo an even modulus.
    let ct = key.encrypt(1, &modulus, &noise, &mut r);
    assert!(matches!(
        ct.switch_modulus_odd_mask(2047),
        Err(LweError::InvalidParams { .. })
    ));
}

/// Inputs modulo any `q >= 2n` (a power of two and a prime near `2^20`, and `2n` itself) go through the
/// tables of every algorithm; the outputs are modulo `q_0`, within the evaluator's bound.
#[test]
fn tables_on_inputs_of_any_modulus() {
    let (ctx, q0, mut r) = lut_ring(60, 25);
    let ring_sk = SecretKey::generate(&ctx, &mut r).unwrap();
    let out_sk = LweSecretKey::from_ring_key(&ring_sk).unwrap();
    let dim = LweDimension::new(32).unwrap();
    let ternary =
        LweSecretKey::generate(dim, SecretDistribution::HammingWeight(16), &mut r).unwrap();
    let binary = LweSecretKey::generate(dim, LweSecretDistribution::UniformBinary, &mut r).unwrap();
    let noise = DiscreteGaussian::with_sigma(3.2).unwrap();
    let prime = (1u64 << 20) - 3;
    // Trial division up to sqrt(q) < 1024: a prime.
    assert!((2..1024).all(|d| !prime.is_multiple_of(d)));
    let out_scale = q0 as f64 / 64.0;
    let inputs = [-7.5, -2.25, 0.0, 1.0, 3.5, 7.0];
    for algorithm in [
        BlindRotation::Ternary,
        BlindRotation::Binary,
        BlindRotation::Lmkcdey,
    ] {
        let lwe_sk = if algorithm == BlindRotation::Binary {
            &binary
        } else {
            &ternary
        };
        let key =
            BlindRotationKey::generate_with(algorithm, &ctx, &ring_sk, lwe_sk, &mut r).unwrap();
        let eval = LutEvaluator::new(key);
        for q in [1u64 << 20, prime] {
            let modulus = Modulus::new(q).unwrap();
            // |Delta m| <= q / 8 for |m| <= 8.
            let delta = q as f64 / 64.0;
            let table = LookupTable::from_fn_for_input_modulus(&ctx, q, delta, out_scale, |x| {
                1.0 / (1.0 + (-x).exp())
            })
            .unwrap();
            assert_eq!(table.input_modulus(), q);
            let bound = eval.error_bound(&table, 0.25, 3.2, norm_sq(lwe_sk));
            for &m in &inputs {
                let ct = lwe_sk.encrypt((m * delta).round() as i64, &modulus, &noise, &mut r);
                let out = eval.evaluate(&ct, &table).unwrap();
                assert_eq!(out.modulus().value(), q0);
                let got = out_sk.decrypt(&out).unwrap() as f64 / out_scale;
                let want = 1.0 / (1.0 + f64::exp(-m));
                assert!(
                    (got - want).abs() <= bound,
                    "{algorithm:?}, q = {q}: sigmoid({m}) = {want}, got {got}, bound {bound}"
                );
            }
            // A table for q_0 does not read a ciphertext modulo q.
            let ct = lwe_sk.encrypt(1, &modulus, &noise, &mut r);
            let q0_table =
                LookupTable::from_fn(&ctx, q0 as f64 / 64.0, out_scale, f64::tanh).unwrap();
            assert!(matches!(
                eval.evaluate(&ct, &q0_table),
                Err(LweError::ModulusMismatch { .. })
            ));
        }
        // q = 2n: the switch keeps the components (the mask is made odd for LMKCDEY).
        let two_n = 2 * ctx.n() as u64;
        let table =
            LookupTable::from_fn_for_input_modulus(&ctx, two_n, 32.0, out_scale, |x| x).unwrap();
        let ct = lwe_sk.encrypt(96, &Modulus::new(two_n).unwrap(), &noise, &mut r);
        let got = out_sk
            .decrypt(&eval.evaluate(&ct, &table).unwrap())
            .unwrap() as f64
            / out_scale;
        let bound = eval.error_bound(&table, 1.0, 3.2, norm_sq(lwe_sk));
        assert!((got - 3.0).abs() <= bound, "{algorithm:?} at q = 2n: {got}");
        // Moduli below 2n are refused, by the table and by the evaluator.
        let small = Modulus::new(two_n - 2).unwrap();
        let ct = lwe_sk.encrypt(1, &small, &noise, &mut r);
        assert!(matches!(
            eval.evaluate(&ct, &table),
            Err(LweError::InvalidParams { .. })
        ));
        assert!(matches!(
            LookupTable::from_fn_for_input_modulus(&ctx, two_n - 2, 1.0, 1.0, |x| x),
            Err(LweError::InvalidParams { .. })
        ));
    }
}

#[test]
fn misuse_is_an_error() {
    let (ctx, q0, mut r) = lut_ring(60, 26);
    let ring_sk = SecretKey::generate(&ctx, &mut r).unwrap();
    let lwe_sk = LweSecretKey::generate(
        LweDimension::new(16).unwrap(),
        SecretDistribution::Ternary,
        &mut r,
    )
    .unwrap();
    // Windows outside [1, n/2).
    for window in [0, ctx.n() / 2] {
        assert!(matches!(
            BlindRotationKey::generate_lmkcdey(&ctx, &ring_sk, &lwe_sk, window, &mut r),
            Err(LweError::InvalidParams { .. })
        ));
    }
    // A ring key of another context.
    let (other_ctx, ..) = lut_ring(50, 27);
    let foreign = SecretKey::generate(&other_ctx, &mut r).unwrap();
    assert!(matches!(
        BlindRotationKey::generate_with(BlindRotation::Lmkcdey, &ctx, &foreign, &lwe_sk, &mut r),
        Err(LweError::Core(_))
    ));
    // A ternary key for the binary algorithm (LMKCDEY takes it).
    assert!(matches!(
        BlindRotationKey::generate_with(BlindRotation::Binary, &ctx, &ring_sk, &lwe_sk, &mut r),
        Err(LweError::InvalidParams { .. })
    ));
    let key = BlindRotationKey::generate_lmkcdey(&ctx, &ring_sk, &lwe_sk, 4, &mut r).unwrap();
    let two_n = 2 * ctx.n() as u64;
    let q0_table = LookupTable::from_fn(&ctx, q0 as f64 / 64.0, 1.0, |x| x).unwrap();
    // An even mask value for LMKCDEY; zeros are skipped (a trivial ciphertext rotates by b).
    let mut a = vec![1u64; 16];
    a[3] = 6;
    let even = LweCiphertext::from_parts(two_n, 5, a).unwrap();
    assert!(matches!(
        key.rotate(q0_table.poly(), &even),
        Err(LweError::InvalidParams { .. })
    ));
    assert!(matches!(
        key.rotation_variance(&even),
        Err(LweError::InvalidParams { .. })
    ));
    let trivial = LweCiphertext::from_parts(two_n, 0, vec![0; 16]).unwrap();
    assert_eq!(key.rotation_variance(&trivial).unwrap(), 0.0);
    let rotated = key.rotate(q0_table.poly(), &trivial).unwrap();
    assert_eq!(rotated.parts[0], *q0_table.poly());
    // Wrong dimension or modulus for the rotation and the evaluator.
    let wide = LweCiphertext::from_parts(two_n, 0, vec![1; 17]).unwrap();
    assert!(matches!(
        key.rotate(q0_table.poly(), &wide),
        Err(LweError::DimensionMismatch { .. })
    ));
    let eval = LutEvaluator::new(key.clone());
    let noise = DiscreteGaussian::with_sigma(3.2).unwrap();
    let out_sk = LweSecretKey::from_ring_key(&ring_sk).unwrap();
    let under_ring_key = out_sk.encrypt(1, &Modulus::new(q0).unwrap(), &noise, &mut r);
    assert!(matches!(
        eval.evaluate(&under_ring_key, &q0_table),
        Err(LweError::DimensionMismatch { .. })
    ));
    assert!(matches!(
        key.rotate(q0_table.poly(), &under_ring_key),
        Err(LweError::DimensionMismatch { .. })
    ));
    let not_2n = lwe_sk.encrypt(1, &Modulus::new(q0).unwrap(), &noise, &mut r);
    assert!(matches!(
        key.rotate(q0_table.poly(), &not_2n),
        Err(LweError::ModulusMismatch { .. })
    ));
    assert!(key.size_bytes() > 0);
}
