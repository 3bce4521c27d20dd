//! Look-up tables by blind rotation (PEGASUS Fig. 2) at small insecure sizes: every output is within
//! the bound of PEGASUS Eq. (3) of the function's value, for several functions and inputs spread over the
//! whole admissible range `|Delta m| < q_0 / 4`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;
use common::lut_ring;

use rand::Rng;

use rnsfhe_core::{SecretDistribution, SecretKey};
use rnsfhe_lwe::{
    BlindRotation, BlindRotationKey, LookupTable, LutEvaluator, LweDimension, LweError,
    LweSecretDistribution, LweSecretKey,
};
use rnsfhe_math::sampling::DiscreteGaussian;
use rnsfhe_math::Modulus;

/// A named function and its Lipschitz constant.
type Case = (&'static str, fn(f64) -> f64, f64);

#[test]
fn tables_of_several_functions_meet_the_error_bound() {
    let (ctx, q0, mut r) = lut_ring(60, 11);
    let ring_sk = SecretKey::generate(&ctx, &mut r).unwrap();
    let lwe_sk = LweSecretKey::generate(
        LweDimension::new(64).unwrap(),
        SecretDistribution::Ternary,
        &mut r,
    )
    .unwrap();
    let key = BlindRotationKey::generate(&ctx, &ring_sk, &lwe_sk, &mut r).unwrap();
    let eval = LutEvaluator::new(key);
    let out_sk = LweSecretKey::from_ring_key(&ring_sk).unwrap();
    let modulus = Modulus::new(q0).unwrap();
    let noise = DiscreteGaussian::with_sigma(3.2).unwrap();
    // Inputs m in [-8, 8) with Delta = q_0 / 64: |Delta m| < q_0 / 8, inside the contract.
    let delta = q0 as f64 / 64.0;
    let key_norm_sq = lwe_sk.coefficients().iter().map(|c| (c * c) as f64).sum();
    let functions: [Case; 4] = [
        ("sigmoid", |x| 1.0 / (1.0 + (-x).exp()), 0.25),
        ("tanh", f64::tanh, 1.0),
        ("relu", |x| x.max(0.0), 1.0),
        ("identity", |x| x, 1.0),
    ];
    let inputs: Vec<f64> = (0..12).map(|_| r.gen_range(-8.0..8.0)).collect();
    let cts: Vec<_> = inputs
        .iter()
        .map(|&m| lwe_sk.encrypt((m * delta).round() as i64, &modulus, &noise, &mut r))
        .collect();
    for (name, f, lipschitz) in functions {
        let table = LookupTable::from_fn(&ctx, delta, delta, f).unwrap();
        let bound = table.error_bound(&ctx, lipschitz, 3.2, key_norm_sq, 64);
        let outs = eval.evaluate_many(&cts, &table).unwrap();
        for (out, &m) in outs.iter().zip(&inputs) {
            assert_eq!(out.dimension().get(), ctx.n());
            let got = out_sk.decrypt(out).unwrap() as f64 / delta;
            assert!(
                (got - f(m)).abs() <= bound,
                "{name}({m}) = {}, got {got}, bound {bound}",
                f(m)
            );
        }
    }
    // A ciphertext of another modulus or dimension is refused.
    let other = lwe_sk.encrypt(1, &Modulus::new((1 << 40) - 87).unwrap(), &noise, &mut r);
    let table = LookupTable::from_fn(&ctx, delta, delta, |x| x).unwrap();
    assert!(matches!(
        eval.evaluate(&other, &table),
        Err(LweError::ModulusMismatch { .. })
    ));
    let wide = out_sk.encrypt(1, &modulus, &noise, &mut r);
    assert!(matches!(
        eval.evaluate(&wide, &table),
        Err(LweError::DimensionMismatch { .. })
    ));
    assert!(LookupTable::from_fn(&ctx, delta, 1e30, |x| x).is_err());
    assert!(LookupTable::from_fn(&ctx, f64::NAN, delta, |x| x).is_err());
}

/// The error added by blind rotation over 1000 look-up tables of a constant function (whose output is
/// exactly `Delta c` plus that error) has the variance of `BlindRotationKey::added_variance` within 10 %,
/// for both algorithms, at small dimensions with both of its terms (key errors and ModDown roundings) of
/// similar size.
#[test]
fn blind_rotation_noise_matches_the_variance_formula() {
    let (ctx, q0, mut r) = lut_ring(50, 12);
    let two_n = 2 * ctx.n() as u64;
    let ring_sk = SecretKey::generate(&ctx, &mut r).unwrap();
    let dim = LweDimension::new(16).unwrap();
    let out_sk = LweSecretKey::from_ring_key(&ring_sk).unwrap();
    let modulus = Modulus::new(q0).unwrap();
    let noise = DiscreteGaussian::with_sigma(3.2).unwrap();
    // A small output value keeps the first product's (non-uniform) input small, as the formula assumes.
    let (delta, c) = (2f64.powi(20), 3.0);
    let table = LookupTable::from_fn(&ctx, q0 as f64 / 64.0, delta, |_| c).unwrap();
    for algorithm in [BlindRotation::Ternary, BlindRotation::Binary] {
        let lwe_sk = match algorithm {
            BlindRotation::Binary => {
                LweSecretKey::generate(dim, LweSecretDistribution::UniformBinary, &mut r).unwrap()
            }
            _ => LweSecretKey::generate(dim, SecretDistribution::Ternary, &mut r).unwrap(),
        };
        let key =
            BlindRotationKey::generate_with(algorithm, &ctx, &ring_sk, &lwe_sk, &mut r).unwrap();
        assert_eq!(key.algorithm(), algorithm);
        let (mut sum_sq, mut expected, samples) = (0.0, 0.0, 1000);
        for _ in 0..samples {
            let m = r.gen_range(-(q0 as i64) / 8..(q0 as i64) / 8);
            let ct = lwe_sk.encrypt(m, &modulus, &noise, &mut r);
            let switched = ct.switch_modulus(two_n).unwrap();
            let nonzero = switched.a().iter().filter(|&&a| a != 0).count();
            expected += key.added_variance(nonzero);
            let rotated = key.rotate(table.poly(), &switched).unwrap();
            let out = rnsfhe_lwe::extract(&rotated, 0).unwrap();
            let e = (out_sk.decrypt(&out).unwrap() as f64) - delta * c;
            sum_sq += e * e;
        }
        let ratio = sum_sq / expected;
        eprintln!("{algorithm:?} blind rotation error variance: measured / formula = {ratio:.3}");
        assert!(
            (0.9..=1.1).contains(&ratio),
            "{algorithm:?}: measured {:.2}, formula {:.2} (ratio {ratio:.3})",
            sum_sq / samples as f64,
            expected / samples as f64
        );
    }
    // A ternary key cannot make a binary blind-rotation key.
    let ternary = LweSecretKey::from_coefficients(&[1, -1, 0, 1]).unwrap();
    assert!(matches!(
        BlindRotationKey::generate_with(BlindRotation::Binary, &ctx, &ring_sk, &ternary, &mut r),
        Err(LweError::InvalidParams { .. })
    ));
}

/// Several functions read by one blind rotation (`LookupTable::from_fns_for_input_modulus`,
/// `LutEvaluator::evaluate_all`): each output is within the bound of `LutEvaluator::error_bound` (the grid
/// `k` times coarser) for both algorithms that allow it, its coefficients are those of the one-function
/// tables on the coarser grid, and the misuses are errors.
#[test]
fn one_rotation_reads_several_functions() {
    let (ctx, q0, mut r) = lut_ring(50, 13);
    let ring_sk = SecretKey::generate(&ctx, &mut r).unwrap();
    let out_sk = LweSecretKey::from_ring_key(&ring_sk).unwrap();
    let dim = LweDimension::new(64).unwrap();
    let modulus = Modulus::new(q0).unwrap();
    let noise = DiscreteGaussian::with_sigma(3.2).unwrap();
    let delta = q0 as f64 / 64.0;
    let sigmoid = |x: f64| 1.0 / (1.0 + (-x).exp());
    let relu = |x: f64| x.max(0.0);
    let wave = |x: f64| (x / 4.0).sin();
    let fs: [(&dyn Fn(f64) -> f64, f64); 4] = [
        (&sigmoid, 0.25),
        (&f64::tanh, 1.0),
        (&relu, 1.0),
        (&wave, 0.25),
    ];
    let inputs: Vec<f64> = (0..10).map(|_| r.gen_range(-8.0..8.0)).collect();
    for algorithm in [BlindRotation::Ternary, BlindRotation::Binary] {
        let distribution = match algorithm {
            BlindRotation::Binary => LweSecretDistribution::BinaryWeight(32),
            _ => LweSecretDistribution::TernaryWeight(32),
        };
        let lwe_sk = LweSecretKey::generate(dim, distribution, &mut r).unwrap();
        let key_norm_sq = 32.0;
        let eval = LutEvaluator::new(
            BlindRotationKey::generate_with(algorithm, &ctx, &ring_sk, &lwe_sk, &mut r).unwrap(),
        );
        for k in [2usize, 4] {
            let chosen: Vec<&dyn Fn(f64) -> f64> = fs[..k].iter().map(|(f, _)| *f).collect();
            let table =
                LookupTable::from_fns_for_input_modulus(&ctx, q0, delta, delta, &chosen).unwrap();
            assert_eq!(table.functions(), k);
            // Coefficient i + k m is function i on the coarser grid: the one-function table of the
            // scale delta / k (the same grid) at m for the points m <= n / 2k of -x, at n - (n/k - m)
            // for the negated points of x above.
            // (A smaller output scale for the comparison: the one-function grid reaches k times further.)
            let n = ctx.n();
            let (small, multi) = (
                delta / 16.0,
                LookupTable::from_fns_for_input_modulus(&ctx, q0, delta, delta / 16.0, &chosen)
                    .unwrap(),
            );
            for (i, f) in chosen.iter().enumerate() {
                let single = LookupTable::from_fn(&ctx, delta / k as f64, small, f).unwrap();
                for m in [0, 1, n / (2 * k), n / (2 * k) + 1, n / k - 1] {
                    let j = if m <= n / (2 * k) { m } else { n - n / k + m };
                    assert_eq!(
                        multi.poly().data()[i + k * m],
                        single.poly().data()[j],
                        "k = {k}, function {i}, grid point {m}"
                    );
                }
            }
            assert!(matches!(
                eval.evaluate(&lwe_sk.encrypt(0, &modulus, &noise, &mut r), &table),
                Err(LweError::InvalidParams { .. })
            ));
            for &m in &inputs {
                let ct = lwe_sk.encrypt((m * delta).round() as i64, &modulus, &noise, &mut r);
                let outs = eval.evaluate_all(&ct, &table).unwrap();
                assert_eq!(outs.len(), k);
                for (out, (f, lipschitz)) in outs.iter().zip(&fs) {
                    let bound = eval.error_bound(&table, *lipschitz, 3.2, key_norm_sq);
                    // Eq. (3) of the table alone counts the coarser grid as well.
                    let eq3 = table.error_bound(&ctx, *lipschitz, 3.2, key_norm_sq, 64);
                    let got = out_sk.decrypt(out).unwrap() as f64 / delta;
                    assert!(
                        (got - f(m)).abs() <= bound.min(eq3),
                        "{algorithm:?}, k = {k}: f({m}) = {}, got {got}, bounds {bound}, {eq3}",
                        f(m)
                    );
                }
            }
        }
    }
    // A count that is not a power of two, or above n/4; LMKCDEY cannot read several functions.
    let three: Vec<&dyn Fn(f64) -> f64> = vec![&sigmoid, &relu, &wave];
    assert!(LookupTable::from_fns_for_input_modulus(&ctx, q0, delta, delta, &three).is_err());
    let many: Vec<&dyn Fn(f64) -> f64> = vec![&relu; ctx.n() / 2];
    assert!(LookupTable::from_fns_for_input_modulus(&ctx, q0, delta, delta, &many).is_err());
    let lwe_sk = LweSecretKey::generate(dim, SecretDistribution::Ternary, &mut r).unwrap();
    let lmkcdey = LutEvaluator::new(
        BlindRotationKey::generate_with(BlindRotation::Lmkcdey, &ctx, &ring_sk, &lwe_sk, &mut r)
            .unwrap(),
    );
    let pair: Vec<&dyn Fn(f64) -> f64> = vec![&sigmoid, &relu];
    let table = LookupTable::from_fns_for_input_modulus(&ctx, q0, delta, delta, &pair).unwrap();
    let ct = lwe_sk.encrypt(0, &modulus, &noise, &mut r);
    assert!(matches!(
        lmkcdey.evaluate_all(&ct, &table),
        Err(LweError::InvalidParams { .. })
    ));
}
