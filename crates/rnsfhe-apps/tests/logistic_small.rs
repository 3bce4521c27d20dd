//! Encrypted logistic-regression training at small, **insecure** parameters (the `Preset::PaperTable4`
//! chain at `N = 2^13`, for speed): encrypted weights, accuracy and AUC against the plaintext reference,
//! both rescaling policies and all three sigmoid degrees, encrypted prediction, and the error cases.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{max_diff, setup, small_params};
use rnsfhe_apps::{Dataset, Error, LogisticRegression, PackedLayout};
use rnsfhe_ckks::{Evaluator, RescalingPolicy};

/// Encrypted and plaintext weights agree to 13 bits at least (the weights are of order 1; the CKKS error,
/// about 2^-20 relative per slot at scale 2^40, grows with the sums over up to 2^8 rows).
const WEIGHT_TOLERANCE: f64 = 1.0 / 8192.0;

/// Trains on `data` encrypted and in plaintext and checks the acceptance (weights close; accuracy and AUC
/// within 1 percentage point) and the depth used.
fn check(data: &Dataset, lr: LogisticRegression, policy: RescalingPolicy, levels: usize, seed: u8) {
    let layout = PackedLayout::for_dataset(data).unwrap();
    let mut s = setup(small_params(levels, policy), &[layout], seed);
    let z = layout
        .encrypt(&s.ctx, &s.enc, &layout.pack_z(data).unwrap(), &mut s.rng)
        .unwrap();
    let em = lr.fit_encrypted(&s.eval, &z, &layout).unwrap();
    let model = em.decrypt(&s.dec).unwrap();
    let reference = lr.fit_plain(data).unwrap();
    let diff = max_diff(model.weights(), reference.weights());
    let m = model.evaluate(data).unwrap();
    let r = reference.evaluate(data).unwrap();
    println!(
        "{} (n = {}), degree {}, {} iterations, {policy:?}: levels {:?}, max |beta_enc - beta_plain| = 2^{:.1}; \
         accuracy {:.4} / {:.4}, AUC {:.4} / {:.4} (encrypted / plain)",
        data.name(),
        data.n_samples(),
        lr.sigmoid_degree,
        lr.iterations,
        em.levels(),
        diff.log2(),
        m.accuracy,
        r.accuracy,
        m.auc,
        r.auc
    );
    assert_eq!(
        em.levels()[0] - em.weights().level(),
        lr.levels_needed().unwrap(),
        "the documented depth"
    );
    assert_eq!(em.weights().level(), 1, "no level kept by default");
    assert_eq!(em.levels().len(), lr.iterations + 1);
    assert!(
        diff < WEIGHT_TOLERANCE,
        "max weight difference 2^{:.1}",
        diff.log2()
    );
    assert!((m.accuracy - r.accuracy).abs() <= 0.01);
    assert!((m.auc - r.auc).abs() <= 0.01);
}

#[test]
fn lbw_degree_3_five_iterations_fixed_nominal_scale() {
    let (data, _) = Dataset::load_lbw().unwrap().normalize();
    check(
        &data,
        LogisticRegression::default(),
        RescalingPolicy::FixedNominalScale,
        21,
        1,
    );
}

#[test]
fn uis_subset_degrees_5_and_7_exact_scale() {
    // 255 samples: 256 x 16 = 4096 slots, the most N = 2^13 holds.
    let (data, _) = Dataset::load_uis().unwrap().head(255).unwrap().normalize();
    check(
        &data,
        LogisticRegression::default()
            .with_sigmoid_degree(7)
            .with_iterations(3),
        RescalingPolicy::ExactScale,
        13,
        2,
    );
    check(
        &data,
        LogisticRegression::default()
            .with_sigmoid_degree(5)
            .with_iterations(2),
        RescalingPolicy::FixedNominalScale,
        7,
        3,
    );
}

#[test]
fn encrypted_prediction_with_plain_and_encrypted_weights() {
    let (data, _) = Dataset::load_lbw().unwrap().normalize();
    let layout = PackedLayout::for_dataset(&data).unwrap();
    // 11 levels of training, 3 kept for a prediction with the degree-3 sigmoid, 2 surplus levels.
    let lr = LogisticRegression::default()
        .with_iterations(3)
        .with_keep_levels(3);
    let mut s = setup(
        small_params(16, RescalingPolicy::FixedNominalScale),
        &[layout],
        4,
    );
    let z = layout
        .encrypt(&s.ctx, &s.enc, &layout.pack_z(&data).unwrap(), &mut s.rng)
        .unwrap();
    let x = layout
        .encrypt(
            &s.ctx,
            &s.enc,
            &layout.pack_x(data.features()).unwrap(),
            &mut s.rng,
        )
        .unwrap();
    let em = lr.fit_encrypted(&s.eval, &z, &layout).unwrap();
    assert_eq!(z.level(), 17);
    assert_eq!(em.levels()[0], 15, "surplus levels dropped first");
    assert_eq!(em.weights().level(), 4, "3 levels kept");
    let model = em.decrypt(&s.dec).unwrap();
    let poly = lr.sigmoid().unwrap();
    let expected: Vec<f64> = model
        .decision_function(data.features())
        .unwrap()
        .into_iter()
        .map(|score| poly.evaluate(score))
        .collect();
    let from_encrypted = em.predict_proba_encrypted(&s.eval, &x).unwrap();
    let from_plain = model
        .predict_proba_encrypted(&s.eval, &x, &layout, 3)
        .unwrap();
    for (ct, what) in [(from_encrypted, "encrypted"), (from_plain, "plain")] {
        let got = layout
            .read_first_column(&s.dec.decrypt_real(&ct).unwrap())
            .unwrap();
        let err = max_diff(&got, &expected);
        println!(
            "prediction with {what} weights: max error 2^{:.1}",
            err.log2()
        );
        assert!(
            err < WEIGHT_TOLERANCE,
            "{what} weights: error 2^{:.1}",
            err.log2()
        );
    }
}

#[test]
fn bad_inputs_give_clear_errors() {
    let (lbw, _) = Dataset::load_lbw().unwrap().normalize();
    let layout = PackedLayout::for_dataset(&lbw).unwrap();
    let mut s = setup(
        small_params(6, RescalingPolicy::FixedNominalScale),
        &[layout],
        5,
    );
    let z = layout
        .encrypt(&s.ctx, &s.enc, &layout.pack_z(&lbw).unwrap(), &mut s.rng)
        .unwrap();

    // More samples x padded width than slots: uis needs 1024 x 16 slots, N = 2^13 has 4096.
    let (uis, _) = Dataset::load_uis().unwrap().normalize();
    let uis_layout = PackedLayout::for_dataset(&uis).unwrap();
    let err = uis_layout
        .encrypt(
            &s.ctx,
            &s.enc,
            &uis_layout.pack_z(&uis).unwrap(),
            &mut s.rng,
        )
        .unwrap_err();
    assert!(
        matches!(
            err,
            Error::TooManySlots {
                samples: 575,
                needed: 16384,
                available: 4096,
                ..
            }
        ),
        "{err}"
    );
    println!("{err}");

    // Too few levels: 5 iterations of degree 3 need 21, the chain has 6.
    let err = LogisticRegression::default()
        .fit_encrypted(&s.eval, &z, &layout)
        .unwrap_err();
    assert!(
        matches!(
            err,
            Error::NotEnoughLevels {
                needed: 21,
                available: 6,
                ..
            }
        ),
        "{err}"
    );
    let msg = err.to_string();
    assert!(
        msg.contains("needs 21 levels") && msg.contains("has 6"),
        "{msg}"
    );
    println!("{msg}");

    // A ciphertext of another layout.
    let small = PackedLayout::new(10, 9).unwrap();
    let err = LogisticRegression::default()
        .with_iterations(1)
        .fit_encrypted(&s.eval, &z, &small)
        .unwrap_err();
    assert!(
        matches!(
            err,
            Error::LayoutMismatch {
                ciphertext: 4096,
                layout: 256
            }
        ),
        "{err}"
    );

    // Invalid settings.
    let err = LogisticRegression::default()
        .with_sigmoid_degree(4)
        .fit_encrypted(&s.eval, &z, &layout)
        .unwrap_err();
    assert!(matches!(err, Error::InvalidArgument { .. }), "{err}");

    // No Galois keys: the evaluator's error passes through.
    let bare = Evaluator::new(&s.ctx);
    let err = LogisticRegression::default()
        .with_iterations(1)
        .fit_encrypted(&bare, &z, &layout)
        .unwrap_err();
    assert!(matches!(err, Error::Ckks(_)), "{err}");

    // Empty data and non-finite values.
    assert!(matches!(
        Dataset::new("empty", vec!["a".into()], vec![], &[]),
        Err(Error::EmptyData { .. })
    ));
    assert!(matches!(
        Dataset::new("nan", vec!["a".into()], vec![vec![f64::NAN]], &[1.0]),
        Err(Error::NonFinite { .. })
    ));
}
