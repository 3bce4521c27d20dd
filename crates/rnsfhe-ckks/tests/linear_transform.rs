//! Homomorphic linear transforms (baby-step giant-step on the diagonals, hoisted baby rotations) against
//! the plaintext matrix product, with the error bound derived below.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::sync::Arc;

use rnsfhe_ckks::{
    CkksContext, CkksParams, Complex64, ConversionMode, Error, Evaluator, LinearTransform,
    RescalingPolicy, SecretDistribution,
};

use common::{complex_values, Setup};

const HAMMING_WEIGHT: usize = 64;

/// `N = 2^11`, scale `2^40`, `q_0` of 50 bits, 3 scaling primes, one 55-bit special prime, one prime per
/// digit, secret of Hamming weight 64 (PEGASUS, Section VI).
fn context() -> Arc<CkksContext> {
    CkksContext::new(CkksParams {
        log_n: 11,
        log_scale: 40,
        q0_bits: 50,
        levels: 3,
        bootstrap_primes: Vec::new(),
        special_primes: 1,
        special_bits: 55,
        dnum: 4,
        secret: SecretDistribution::HammingWeight(HAMMING_WEIGHT),
        sigma: 3.2,
        conversion: ConversionMode::Fast,
        rescaling: RescalingPolicy::ExactScale,
        insecure_for_testing: true,
    })
    .unwrap()
}

fn setup() -> Setup {
    Setup::new(context(), 1)
}

/// High-probability bound (6 standard deviations, RNS-CKKS Appendix A.2) on the error of one real or
/// imaginary part of an output slot of `M ct` rescaled, for `ct` fresh (secret-key encryption) of the
/// slots `x` (replicated to the transform's `n` slots) at scale `delta`, the transform evaluated at
/// `level` with diagonals encoded at scale `q` (the dropped prime). Per coefficient the errors are, with
/// `h` the secret's Hamming weight:
///
/// * encryption `sigma^2` plus the encoding's rounding `1/12`;
/// * one key switch per baby rotation, `V_ks` ([`rnsfhe_core::RlweContext::key_switch_noise`]);
/// * the rounding of each encoded diagonal, `1/12` at scale `q`;
/// * the rescaling's rounding of `c_0 + c_1 s`, `(1 + h) / 12`.
///
/// The giant rotations act on products at scale `delta q` and lose their key-switching error in the
/// rescaling (divided by `q`): they are left out. A real part of a slot sums `n` of the subring's `2n`
/// coefficients with unit weights, so its variance is `n` times the coefficient's. Output slot `p` is
/// `sum_k d_k[p] x_k[p]` over the `D` diagonals, the `x_k` (rotations of the input) and the `d_k`
/// carrying independent errors, whence
///
/// ```text
/// Var <= D dmax^2 n (sigma^2 + 1/12 + V_ks) / delta^2 + D n max|x|^2 / (12 q^2) + n (1 + h) / (12 delta^2),
/// ```
///
/// `dmax` the largest entry of any diagonal in absolute value.
fn error_bound(
    ctx: &CkksContext,
    lt: &LinearTransform,
    level: usize,
    delta: f64,
    x: &[Complex64],
) -> f64 {
    let n = lt.slots() as f64;
    let sigma = ctx.params().sigma;
    let q = LinearTransform::exact_rescale_scale(ctx, level).unwrap();
    let v_ks = ctx
        .rlwe()
        .key_switch_noise(level, HAMMING_WEIGHT)
        .unwrap()
        .std_dev
        .powi(2);
    let dmax = lt
        .diagonal_indices()
        .flat_map(|k| lt.diagonal(k as i64).unwrap().iter().map(|z| z.norm()))
        .fold(0.0, f64::max);
    let x2 = x.iter().map(|z| z.norm_sqr()).fold(0.0, f64::max);
    let d = lt.diagonal_count() as f64;
    let d2 = delta * delta;
    let var = d * dmax * dmax * n * (sigma * sigma + 1.0 / 12.0 + v_ks) / d2
        + d * n * x2 / (12.0 * q * q)
        + n * (1.0 + HAMMING_WEIGHT as f64) / (12.0 * d2);
    6.0 * var.sqrt()
}

fn max_error(want: &[Complex64], got: &[Complex64]) -> f64 {
    assert_eq!(want.len(), got.len());
    want.iter()
        .zip(got)
        .map(|(a, b)| (a.re - b.re).abs().max((a.im - b.im).abs()))
        .fold(0.0, f64::max)
}

/// Encrypts `values` in `ct_slots` slots at `level`, applies `lt` with baby step `baby`, rescales, and
/// checks the decryption against `lt.apply(values)` within [`error_bound`].
fn check(
    s: &Setup,
    lt: &LinearTransform,
    values: &[Complex64],
    ct_slots: usize,
    baby: Option<usize>,
) {
    let level = 3;
    let scale = LinearTransform::exact_rescale_scale(&s.ctx, level).unwrap();
    let encoded = lt.encode(&s.ctx, level, scale, baby).unwrap();
    let eval = s.evaluator(&encoded.rotation_steps(), false);
    let ct = s.encrypt(values, ct_slots, level);
    let out = eval.linear_transform(&ct, &encoded).unwrap();
    assert_eq!(out.slots(), lt.slots());
    assert_eq!(out.level(), level);
    assert_eq!(out.scale(), ct.scale() * scale);
    let out = eval.rescale(&out).unwrap();
    // The diagonals' scale is the dropped prime: the input's scale comes back.
    assert!((out.scale() / ct.scale() - 1.0).abs() < 1e-15);
    let got = s.dec.decrypt(&out).unwrap();
    let want = lt.apply(values).unwrap();
    let err = max_error(&want, &got);
    let bound = error_bound(&s.ctx, lt, level, ct.scale(), values);
    eprintln!(
        "{} slots, {} diagonals, baby {}: error 2^{:.2}, bound 2^{:.2}",
        lt.slots(),
        lt.diagonal_count(),
        encoded.baby_step(),
        err.log2(),
        bound.log2()
    );
    assert!(err <= bound, "error {err:e} above the bound {bound:e}");
}

fn random_dense(n: usize, seed: u64) -> Vec<Vec<Complex64>> {
    (0..n).map(|p| complex_values(n, seed + p as u64)).collect()
}

#[test]
fn dense_matrices_match_the_plaintext_product() {
    let s = setup();
    for n in [4usize, 32] {
        let rows = random_dense(n, 10);
        let lt = LinearTransform::from_dense(&rows).unwrap();
        let values = complex_values(n, 77);
        // The plaintext reference is the row-by-column product.
        let direct: Vec<Complex64> = rows
            .iter()
            .map(|r| r.iter().zip(&values).map(|(a, b)| a * b).sum())
            .collect();
        assert!(max_error(&direct, &lt.apply(&values).unwrap()) < 1e-12);
        check(&s, &lt, &values, n, None);
    }
}

#[test]
fn few_diagonals_at_full_packing_and_every_baby_step() {
    let s = setup();
    let n = s.ctx.max_slots();
    let lt = LinearTransform::from_diagonals(
        n,
        [0i64, 1, -3, 100, 512, 700]
            .iter()
            .map(|&k| (k, complex_values(n, 300 + k.unsigned_abs()))),
    )
    .unwrap();
    let values = complex_values(n, 5);
    for baby in [None, Some(1), Some(n)] {
        check(&s, &lt, &values, n, baby);
    }
}

#[test]
fn fewer_slots_stand_for_their_replication() {
    let s = setup();
    let n = 64;
    let lt = LinearTransform::from_dense(&random_dense(n, 40)).unwrap();
    for m in [1usize, 8] {
        let values = complex_values(m, 9);
        let replicated: Vec<Complex64> = (0..n).map(|i| values[i % m]).collect();
        assert!(max_error(&lt.apply(&values).unwrap(), &lt.apply(&replicated).unwrap()) < 1e-12);
        check(&s, &lt, &values, m, None);
    }
}

#[test]
fn errors_for_slots_levels_and_keys() {
    let s = setup();
    let n = 16;
    let lt =
        LinearTransform::from_diagonals(n, (0..4).map(|k| (k, complex_values(n, 60 + k as u64))))
            .unwrap();
    let scale = LinearTransform::exact_rescale_scale(&s.ctx, 2).unwrap();
    let encoded = lt.encode(&s.ctx, 2, scale, Some(2)).unwrap();
    assert_eq!(encoded.baby_steps(), &[1]);
    assert_eq!(encoded.giant_steps(), vec![2]);
    assert_eq!(encoded.rotation_steps(), vec![1, 2]);
    let eval = s.evaluator(&encoded.rotation_steps(), false);
    let values = complex_values(n, 1);

    // More slots than the transform, or a slot count that does not divide it.
    let wide = s.encrypt(&values, 2 * n, 3);
    assert!(matches!(
        eval.linear_transform(&wide, &encoded),
        Err(Error::SlotsMismatch {
            left: 32,
            right: 16,
            ..
        })
    ));
    // A ciphertext below the transform's level.
    let low = s.encrypt(&values, n, 1);
    assert!(matches!(
        eval.linear_transform(&low, &encoded),
        Err(Error::NotEnoughLevels {
            level: 1,
            needed: 2,
            ..
        })
    ));
    // A ciphertext above it is dropped to it.
    let high = s.encrypt(&values, n, 4);
    let out = eval.linear_transform(&high, &encoded).unwrap();
    assert_eq!(out.level(), 2);
    // Unless the evaluator is strict.
    let strict = Evaluator::strict(&s.ctx)
        .with_galois_keys(eval.galois().unwrap().clone())
        .unwrap();
    assert!(matches!(
        strict.linear_transform(&high, &encoded),
        Err(Error::LevelMismatch {
            left_level: 4,
            right_level: 2,
            ..
        })
    ));
    assert!(strict
        .linear_transform(&s.encrypt(&values, n, 2), &encoded)
        .is_ok());
    // No Galois keys at all, then a key missing for the giant step.
    let ct = s.encrypt(&values, n, 2);
    assert!(matches!(
        Evaluator::new(&s.ctx).linear_transform(&ct, &encoded),
        Err(Error::MissingKey { .. })
    ));
    let partial = s.evaluator(&[1], false);
    match partial.linear_transform(&ct, &encoded) {
        Err(Error::Core(rnsfhe_core::Error::MissingGaloisKey { step, .. })) => {
            assert_eq!(step, Some(2))
        }
        other => panic!("expected a missing Galois key, got {other:?}"),
    }
    // Encoding: a slot count above N/2, a bad baby step, level 1 has no rescaling prime.
    let big =
        LinearTransform::from_diagonals(2048, [(0, vec![Complex64::new(1.0, 0.0); 2048])]).unwrap();
    assert!(matches!(
        big.encode(&s.ctx, 2, scale, None),
        Err(Error::InvalidSlots { .. })
    ));
    assert!(matches!(
        lt.encode(&s.ctx, 2, scale, Some(3)),
        Err(Error::InvalidArgument { .. })
    ));
    assert!(matches!(
        LinearTransform::exact_rescale_scale(&s.ctx, 1),
        Err(Error::InvalidArgument { .. })
    ));
}
