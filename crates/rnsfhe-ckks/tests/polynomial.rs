//! Homomorphic polynomial evaluation: agreement with the plaintext evaluation of the same
//! polynomial, the depth `ceil(log2(d + 1))`, the output scale, and the error cases. Full-size checks at the
//! RNS-CKKS Table 2 parameters (degrees 7 and 15, >= 30 bits) and degree 255 on `[-1, 1]` (>= 20 bits).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::sync::Arc;

use common::{rng, values};
use rnsfhe_ckks::{
    ChebyshevSeries, Ciphertext, CkksContext, CkksDecryptor, CkksEncryptor, CkksParams,
    ConversionMode, Error, Evaluator, KeyGenerator, Polynomial, Preset, RescalingPolicy,
    SecretDistribution,
};

struct Setup {
    ctx: Arc<CkksContext>,
    enc: CkksEncryptor,
    dec: CkksDecryptor,
    eval: Evaluator,
}

fn setup(params: CkksParams, seed: u8) -> Setup {
    let ctx = CkksContext::new(params).unwrap();
    let mut r = rng(seed);
    let kg = KeyGenerator::new(&ctx, &mut r).unwrap();
    let keys = kg.generate_all(&[], false, &mut r).unwrap();
    Setup {
        enc: CkksEncryptor::with_public_key(&ctx, &keys.public).unwrap(),
        dec: CkksDecryptor::new(&ctx, &keys.secret).unwrap(),
        eval: Evaluator::new(&ctx).with_relin_key(keys.relin).unwrap(),
        ctx,
    }
}

/// `N = 2^13`, scale `2^50`, `levels` levels (fast, not secure: for schedule coverage). A fresh
/// encryption has about 35 bits of precision here.
fn medium(levels: usize, policy: RescalingPolicy) -> CkksParams {
    CkksParams {
        log_n: 13,
        log_scale: 50,
        q0_bits: 60,
        levels,
        bootstrap_primes: Vec::new(),
        special_primes: 3,
        special_bits: 60,
        dnum: 3,
        secret: SecretDistribution::Ternary,
        sigma: 3.2,
        conversion: ConversionMode::ExactFloat,
        rescaling: policy,
        insecure_for_testing: true,
    }
}

/// Evaluates `p` on `x` and returns (ciphertext, max error against `p` in plaintext, in bits).
fn run(s: &Setup, p: &Polynomial, x: &[f64]) -> (Ciphertext, f64) {
    let mut r = rng(9);
    let ct = s.enc.encrypt(x, &mut r).unwrap();
    let out = s.eval.evaluate_polynomial(&ct, p).unwrap();
    assert_eq!(
        out.level(),
        ct.level() - p.depth(),
        "depth of degree {}",
        p.degree()
    );
    assert!(
        (out.scale() / ct.scale() - 1.0).abs() < 1e-12,
        "output scale 2^{} vs input 2^{}",
        out.log2_scale(),
        ct.log2_scale()
    );
    let got = s.dec.decrypt(&out).unwrap();
    let err = x
        .iter()
        .zip(&got)
        .map(|(&v, z)| (z.re - p.evaluate(v)).abs().max(z.im.abs()))
        .fold(0.0f64, f64::max);
    (out, -err.log2())
}

fn random_coeffs(d: usize, seed: u64) -> Vec<f64> {
    // Coefficients decaying like those of a smooth function keep |p| and |p'| moderate on [-1, 1] (the
    // error of a homomorphic evaluation is the input's error times |p'|, plus rounding).
    values(d + 1, seed)
        .into_iter()
        .enumerate()
        .map(|(i, c)| c / (1.0 + i as f64).powi(2))
        .collect()
}

#[test]
fn every_degree_up_to_33_both_bases_both_policies() {
    for policy in [
        RescalingPolicy::ExactScale,
        RescalingPolicy::FixedNominalScale,
    ] {
        let s = setup(medium(7, policy), 1);
        let x = values(s.ctx.max_slots(), 5);
        for d in 1..=33 {
            let coeffs = random_coeffs(d, d as u64);
            for p in [
                Polynomial::power(coeffs.clone()).unwrap(),
                Polynomial::chebyshev(coeffs, -1.0, 1.0).unwrap(),
            ] {
                if p.depth() + 1 > s.ctx.max_level() {
                    continue;
                }
                let (_, bits) = run(&s, &p, &x);
                // Measured: 31.4 to 36.5 bits (a fresh encryption has about 36.5).
                assert!(
                    bits >= 30.0,
                    "{policy:?} degree {d} {:?}: {bits:.1} bits",
                    p.basis()
                );
            }
        }
    }
}

#[test]
fn chebyshev_on_other_intervals_and_sparse_polynomials() {
    let s = setup(medium(7, RescalingPolicy::ExactScale), 2);
    let x01: Vec<f64> = values(s.ctx.max_slots(), 6)
        .into_iter()
        .map(|v| 4.0 * v)
        .collect();
    // [-4, 4]: alpha = 1/4 costs a level.
    let sig = ChebyshevSeries::interpolate(|t| 1.0 / (1.0 + (-t).exp()), -4.0, 4.0, 15).unwrap();
    let p = Polynomial::from(sig);
    assert_eq!(p.depth(), 5);
    let (_, bits) = run(&s, &p, &x01);
    assert!(bits >= 25.0, "sigmoid on [-4, 4]: {bits:.1} bits");
    // [-0.5, 0.5]: alpha = 2, free.
    let x_small: Vec<f64> = values(s.ctx.max_slots(), 7)
        .iter()
        .map(|v| v / 2.0)
        .collect();
    let p = Polynomial::chebyshev(random_coeffs(9, 3), -0.5, 0.5).unwrap();
    assert_eq!(p.depth(), 4);
    let (_, bits) = run(&s, &p, &x_small);
    assert!(bits >= 25.0, "[-0.5, 0.5]: {bits:.1} bits");
    // Odd and even polynomials with exact zeros, a monomial, a polynomial with only its top coefficient.
    let x = values(s.ctx.max_slots(), 8);
    for coeffs in [
        vec![0.0, 0.3, 0.0, -0.2, 0.0, 0.1, 0.0, -0.05],
        vec![0.4, 0.0, -0.3, 0.0, 0.2, 0.0, 0.0, 0.0, 0.1],
        vec![
            0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0,
        ],
        vec![
            0.7, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.5,
        ],
    ] {
        for p in [
            Polynomial::power(coeffs.clone()).unwrap(),
            Polynomial::chebyshev(coeffs.clone(), -1.0, 1.0).unwrap(),
        ] {
            let (_, bits) = run(&s, &p, &x);
            assert!(bits >= 25.0, "{coeffs:?} {:?}: {bits:.1} bits", p.basis());
        }
    }
}

#[test]
fn bad_inputs_give_clear_errors() {
    let s = setup(medium(3, RescalingPolicy::ExactScale), 3);
    let mut r = rng(4);
    let ct = s.enc.encrypt(&values(8, 1)[..], &mut r).unwrap();
    // Degree 15 needs 4 levels + the output's: level 5; the ciphertext has 4.
    let p = Polynomial::power(vec![0.1; 16]).unwrap();
    match s.eval.evaluate_polynomial(&ct, &p) {
        Err(e @ Error::NotEnoughLevels { .. }) => {
            let msg = e.to_string();
            assert!(msg.contains("level 4") && msg.contains("level 5"), "{msg}");
        }
        other => panic!("expected NotEnoughLevels, got {other:?}"),
    }
    assert!(matches!(
        s.eval.evaluate_function(&ct, f64::exp, 1.0, -1.0, 3),
        Err(Error::InvalidInterval { .. })
    ));
    assert!(matches!(
        s.eval.evaluate_function(&ct, f64::exp, 1.0, 1.0, 3),
        Err(Error::InvalidInterval { .. })
    ));
    let no_key = Evaluator::new(&s.ctx);
    assert!(matches!(
        no_key.evaluate_polynomial(&ct, &Polynomial::power(vec![0.0, 1.0, 1.0]).unwrap()),
        Err(Error::MissingKey { .. })
    ));
}

/// RNS-CKKS Table 2 parameters (`N = 2^14`, `log q = 55`, `log Q_L = 281`): degrees 7 and 15 in both
/// bases agree with the plaintext polynomial to >= 30 bits, using 3 and 4 levels.
#[test]
fn paper_table2_degrees_7_and_15_at_least_30_bits() {
    let s = setup(Preset::PaperTable2.params(), 5);
    assert_eq!(s.ctx.log_q().round() as u32, 281);
    let x = values(s.ctx.max_slots(), 11);
    for d in [7, 15] {
        let coeffs = random_coeffs(d, 100 + d as u64);
        for p in [
            Polynomial::power(coeffs.clone()).unwrap(),
            Polynomial::chebyshev(coeffs, -1.0, 1.0).unwrap(),
        ] {
            let (out, bits) = run(&s, &p, &x);
            println!(
                "PaperTable2 degree {d} {:?}: {bits:.1} bits, output level {}",
                p.basis(),
                out.level()
            );
            assert!(bits >= 30.0, "degree {d}: {bits:.1} bits");
        }
    }
}

/// Degree 255 on `[-1, 1]` (the size the approximate modular reduction of PEGASUS needs): >= 20 bits,
/// 8 levels.
#[test]
fn degree_255_chebyshev_at_least_20_bits() {
    let mut params = medium(9, RescalingPolicy::ExactScale);
    params.log_n = 14;
    params.log_scale = 50;
    params.q0_bits = 60;
    // Digits of 4 primes (210 bits) need P of about as many bits.
    params.special_primes = 4;
    let s = setup(params, 6);
    let x = values(s.ctx.max_slots(), 12);
    // A genuine degree 255 (a smooth function's interpolant would have negligible coefficients long
    // before), and the interpolant of |t|^3, whose coefficients decay only like k^-4 (degree 254: even).
    let series = ChebyshevSeries::interpolate(|t: f64| t.abs().powi(3), -1.0, 1.0, 255).unwrap();
    for p in [
        Polynomial::chebyshev(random_coeffs(255, 255), -1.0, 1.0).unwrap(),
        Polynomial::from(series),
    ] {
        assert_eq!(p.depth(), 8, "degree {}", p.degree());
        let (_, bits) = run(&s, &p, &x);
        println!(
            "degree {}: {bits:.1} bits, {} products",
            p.degree(),
            p.multiplications()
        );
        assert!(bits >= 20.0, "degree {}: {bits:.1} bits", p.degree());
    }
}
