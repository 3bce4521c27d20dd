//! Encrypted logistic regression on lbw for more iterations than the chain holds, bootstrapping the
//! Nesterov state when the levels run out ([`LogisticRegression::fit_encrypted_bootstrapped`]):
//! accuracy and AUC within 1 point of the plaintext model trained by the same procedure.
//!
//! The chain (insecure, for tests only): `N = 2^13`, the smallest ring whose `N/2 = 4096` slots hold
//! lbw's packing (256 rows of 16 columns); the bootstrapping chain of the CKKS tests (scale `2^51`,
//! `q_0` of 60 bits, so EvalMod's message ratio `q_0 / Delta = 2^9` keeps its error small; a secret of
//! Hamming weight 64, so that `K` and hence EvalMod's depth stay small): 17 levels of bootstrapping and
//! 11 for the training, so that a refresh (one level) buys two iterations of 5 levels.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::time::Instant;

use common::{max_diff, rng, small_params};
use rnsfhe_apps::{Dataset, EncryptedModel, LogisticRegression, PackedLayout, WEIGHT_RANGE};
use rnsfhe_ckks::{
    BootstrapParams, Bootstrapper, CkksContext, CkksDecryptor, CkksEncryptor, CkksParams,
    Evaluator, KeyGenerator, RescalingPolicy,
};

/// Levels of the bootstrapping circuit on this chain (3 + 11 + 3).
const BOOTSTRAP_DEPTH: usize = 17;
/// Levels left after a bootstrapping: two iterations of 5 and the refresh's own level.
const USER_LEVELS: usize = 11;

/// Trains `iterations` iterations on lbw, encrypted with bootstrapping and in plaintext; checks the
/// acceptance (accuracy and AUC within 1 point, weights within the refreshes' bound) and returns the
/// model.
fn train(iterations: usize) -> EncryptedModel {
    let levels = BOOTSTRAP_DEPTH + USER_LEVELS;
    // The tests' PaperTable4 chain at N = 2^13 (Hamming weight 64), with the bootstrapping chain's
    // scale and moduli.
    let ctx = CkksContext::new(CkksParams {
        log_scale: 51,
        q0_bits: 60,
        special_primes: 4,
        special_bits: 55,
        dnum: (levels + 1).div_ceil(4),
        ..small_params(levels, RescalingPolicy::ExactScale)
    })
    .unwrap();
    let (data, _) = Dataset::load_lbw().unwrap().normalize();
    let layout = PackedLayout::for_dataset(&data).unwrap();
    let btp = Bootstrapper::new(
        &ctx,
        BootstrapParams::for_context(&ctx, layout.slots()).unwrap(),
    )
    .unwrap();
    assert_eq!(btp.levels_left(), USER_LEVELS);
    let mut r = rng(1);
    let start = Instant::now();
    let kg = KeyGenerator::new(&ctx, &mut r).unwrap();
    let mut steps = layout.rotation_steps();
    steps.extend(btp.rotation_steps());
    steps.sort_unstable();
    steps.dedup();
    let galois = kg
        .galois_keys_with_elements(&steps, true, &btp.trace_elements(), &mut r)
        .unwrap();
    let eval = Evaluator::new(&ctx)
        .with_relin_key(kg.relin_key(&mut r).unwrap())
        .unwrap()
        .with_galois_keys(galois)
        .unwrap();
    let keygen = start.elapsed();
    let enc = CkksEncryptor::with_secret_key(&ctx, kg.secret_key()).unwrap();
    let dec = CkksDecryptor::new(&ctx, kg.secret_key()).unwrap();
    let z = layout
        .encrypt(&ctx, &enc, &layout.pack_z(&data).unwrap(), &mut r)
        .unwrap();

    let lr = LogisticRegression::new().with_iterations(iterations);
    assert!(
        lr.levels_needed().unwrap() > z.level() - 1,
        "more than the chain"
    );
    let start = Instant::now();
    let em = lr
        .fit_encrypted_bootstrapped(&eval, &z, &layout, &btp)
        .unwrap();
    let time = start.elapsed();
    let model = em.decrypt(&dec).unwrap();
    let reference = lr.fit_plain(&data).unwrap();
    let diff = max_diff(model.weights(), reference.weights());
    let m = model.evaluate(&data).unwrap();
    let p = reference.evaluate(&data).unwrap();
    let bound = btp.error_bound(ctx.level_scale(1).unwrap()).unwrap().total;
    println!(
        "lbw, {iterations} iterations, {} thread(s): {} bootstrappings, levels {:?}; training {:.1} s, \
         keys {:.1} s; max |beta_enc - beta_plain| = 2^{:.1} (one refresh adds at most R B = 2^{:.1}); \
         accuracy {:.4} / {:.4}, AUC {:.4} / {:.4} (encrypted / plain)",
        rayon::current_num_threads(),
        em.bootstraps(),
        em.levels(),
        time.as_secs_f64(),
        keygen.as_secs_f64(),
        diff.log2(),
        (WEIGHT_RANGE as f64 * bound).log2(),
        m.accuracy,
        p.accuracy,
        m.auc,
        p.auc
    );
    assert!((m.accuracy - p.accuracy).abs() <= 0.01);
    assert!((m.auc - p.auc).abs() <= 0.01);
    // Each refresh (three bootstrappings) adds at most R B to a weight, carried on with a factor at
    // most 1 (module documentation of rnsfhe_apps::logistic_bootstrap), on top of the CKKS noise the
    // training without bootstrapping is held to (2^-13, tests/logistic_small.rs).
    let refreshes = em.bootstraps().div_ceil(3) as f64;
    assert!(diff <= refreshes * WEIGHT_RANGE as f64 * bound + 1.0 / 8192.0);
    em
}

/// Eight iterations (36 levels, the chain has 28): one refresh of the three state ciphertexts before
/// the sixth iteration.
#[test]
fn eight_iterations_with_a_refresh() {
    let em = train(8);
    assert_eq!(em.bootstraps(), 3);
}

/// Thirty iterations (146 levels): a refresh every two iterations after the fifth, 36
/// bootstrappings at `N = 2^13` (about 3 minutes on 2 loaded cores), so only on request:
/// `cargo test --release -p rnsfhe-apps --test logistic_bootstrap -- --ignored --nocapture`.
#[test]
#[ignore = "36 bootstrappings at N = 2^13: minutes; run with --ignored"]
fn thirty_iterations() {
    let em = train(30);
    assert_eq!(em.bootstraps(), 3 * 12);
}
