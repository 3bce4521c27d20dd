//! Approximate reduction modulo `q_0` (PEGASUS `F_mod`, Fig. 6 step 10): the plaintext model stays
//! within the promised bound over the whole claimed input range, the homomorphic evaluation matches
//! `t mod 1` (centered) within that bound plus the CKKS noise, at the documented depth and output scale,
//! and bad parameters or levels give errors.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::sync::Arc;

use common::{rng, values};
use rnsfhe_ckks::{
    CkksContext, CkksDecryptor, CkksEncryptor, CkksParams, Complex64, ConversionMode, Error,
    EvalMod, EvalModParams, Evaluator, KeyGenerator, RescalingPolicy, SecretDistribution,
};

const LOG_N: u32 = 12;
const LOG_SCALE: u32 = 55;

struct Setup {
    ctx: Arc<CkksContext>,
    enc: CkksEncryptor,
    dec: CkksDecryptor,
    eval: Evaluator,
}

/// `N = 2^12`, scale `2^55`, `q_0` of 60 bits, `levels` levels; not secure. The large scale keeps the
/// CKKS noise (see [`noise_allowance`]) well below the approximation bounds under test.
fn params(levels: usize, policy: RescalingPolicy) -> CkksParams {
    CkksParams {
        log_n: LOG_N,
        log_scale: LOG_SCALE,
        q0_bits: 60,
        levels,
        bootstrap_primes: Vec::new(),
        special_primes: 2,
        special_bits: 60,
        // Digits of two primes (at most 115 bits) under P of 120 bits.
        dnum: (levels + 2) / 2,
        secret: SecretDistribution::Ternary,
        sigma: 3.2,
        conversion: ConversionMode::Fast,
        rescaling: policy,
        insecure_for_testing: true,
    }
}

fn setup(levels: usize, policy: RescalingPolicy, seed: u8) -> Setup {
    let ctx = CkksContext::new(params(levels, policy)).unwrap();
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

/// Inputs `t = I + eps` covering the claimed range: random `I` in `[-K, K]` and `eps` in
/// `[-eps_max, eps_max]`, with the four corners `(+-K, +-eps_max)` first. Returns `(t, eps)`.
fn inputs(em: &EvalMod, count: usize, seed: u64) -> (Vec<f64>, Vec<f64>) {
    let k = em.params().k as f64;
    let e = em.eps_max();
    let u = values(2 * count, seed);
    let mut t = vec![k + e, k - e, -k + e, -k - e];
    let mut eps = vec![e, -e, e, -e];
    for i in 4..count {
        let int = ((u[2 * i] + 1.0) / 2.0 * (2.0 * k + 1.0)).floor() - k;
        let int = int.clamp(-k, k);
        let frac = u[2 * i + 1] * e;
        t.push(int + frac);
        eps.push(frac);
    }
    (t, eps)
}

/// Every preset and a few other choices (continuous sine with `r = 0`, more double angles, an arcsine
/// of degree 5).
fn all_params() -> Vec<EvalModParams> {
    let base = EvalModParams::pegasus_table4();
    vec![
        base,
        EvalModParams::pegasus_secure128(),
        EvalModParams::bootstrapping(),
        EvalModParams {
            k: 4,
            log_message_ratio: 10.0,
            double_angle: 0,
            cos_degree: 63,
            ..base
        },
        EvalModParams {
            k: 12,
            double_angle: 5,
            cos_degree: 15,
            ..base
        },
        EvalModParams {
            arcsine_degree: 5,
            ..EvalModParams::bootstrapping()
        },
    ]
}

#[test]
fn presets_depths_and_bounds() {
    // (preset, levels, bound in bits at least) as the module documentation's table states them.
    for (p, depth, bits) in [
        (EvalModParams::pegasus_table4(), 8, 24.1),
        (EvalModParams::pegasus_secure128(), 10, 24.2),
        (EvalModParams::bootstrapping(), 10, 27.1),
    ] {
        let em = EvalMod::new(p).unwrap();
        let b = em.error_bound();
        println!(
            "{p:?}: depth {}, {} products, bound 2^{:.2} (polynomial 2^{:.1}, double angle 2^{:.1}, sine 2^{:.1}, arcsine 2^{:.1})",
            em.depth(),
            em.multiplications(),
            b.total.log2(),
            b.polynomial.log2(),
            b.double_angle.log2(),
            b.sine.log2(),
            b.arcsine.log2()
        );
        assert_eq!(em.depth(), depth, "{p:?}");
        assert!(-b.total.log2() >= bits, "{p:?}: 2^{}", b.total.log2());
        assert!(
            (b.total - (b.double_angle + b.sine + b.arcsine)).abs() <= 1e-18,
            "{b:?}"
        );
    }
    // The PEGASUS use fits the paper's 9 levels with the normalization (Section VI).
    assert!(
        EvalMod::new(EvalModParams::pegasus_table4())
            .unwrap()
            .depth()
            < 9
    );
    // K from the secret: h = 64 at 6.5 standard deviations gives Table IV's 16; the dense binary key of
    // dimension 1024 at 7.3 gives 48.
    assert_eq!(EvalModParams::k_for_secret(64.0, 6.5).unwrap(), 16);
    assert_eq!(EvalModParams::k_for_secret(512.0, 7.3).unwrap(), 48);
}

#[test]
fn plaintext_model_within_the_bound_over_the_whole_range() {
    for p in all_params() {
        let em = EvalMod::new(p).unwrap();
        let bound = em.error_bound().total;
        let e = em.eps_max();
        let k = p.k as i64;
        let mut worst = 0.0f64;
        for int in -k..=k {
            for j in 0..=200 {
                let eps = e * (j as f64 / 100.0 - 1.0);
                for factor in [1.0, -3.5, 512.0] {
                    let got = em.evaluate(int as f64 + eps, factor) / factor;
                    let err = (got - eps).abs();
                    assert!(
                        err <= bound,
                        "{p:?}: t = {int} + {eps:e}, factor {factor}: error {err:e} > bound {bound:e}"
                    );
                    worst = worst.max(err);
                }
            }
        }
        println!(
            "{p:?}: max error 2^{:.2} against the bound 2^{:.2}",
            worst.log2(),
            bound.log2()
        );
        // Without arcsine the sine's own error, reached at eps_max, dominates: the bound is tight there.
        if p.arcsine_degree == 0 && em.error_bound().sine > em.error_bound().double_angle {
            assert!(worst >= bound / 2.0, "{p:?}: {worst:e} vs {bound:e}");
        }
    }
}

/// The error of one evaluation: (max |dec / factor - eps|, max |dec - model(t)| / |factor|, the input's
/// noise), over all slots, in eps units.
fn run(s: &Setup, em: &EvalMod, normalized: bool, factor: f64, seed: u64) -> (f64, f64, f64) {
    let slots = s.ctx.max_slots();
    let (t, eps) = inputs(em, slots, seed);
    let top = s.ctx.max_level();
    let scale = if normalized {
        em.normalized_scale(&s.ctx, top).unwrap()
    } else {
        s.ctx.level_scale(top).unwrap()
    };
    let tc: Vec<Complex64> = t.iter().map(|&v| Complex64::new(v, 0.0)).collect();
    let pt = s.ctx.encode_at_scale(&tc, slots, top, scale).unwrap();
    let ct = s.enc.encrypt_plaintext(&pt, &mut rng(seed as u8)).unwrap();
    assert_eq!(em.is_normalized(&s.ctx, &ct).unwrap(), normalized);
    // The input's own noise passes to the output unchanged (the derivative of sin(2 pi t) / (2 pi) is at
    // most 1).
    let input_noise = s
        .dec
        .decrypt(&ct)
        .unwrap()
        .iter()
        .zip(&t)
        .map(|(z, &v)| (z.re - v).abs())
        .fold(0.0, f64::max);
    let out = s.eval.eval_mod(&ct, em, factor).unwrap();
    let depth = em.depth() + usize::from(!normalized);
    assert_eq!(out.level(), top - depth, "{:?}", em.params());
    let default = s.ctx.level_scale(out.level()).unwrap();
    assert!(
        (out.scale() / default - 1.0).abs() < 1e-12,
        "output scale 2^{} vs default 2^{}",
        out.log2_scale(),
        default.log2()
    );
    let got = s.dec.decrypt(&out).unwrap();
    let mut err = 0.0f64;
    let mut noise = 0.0f64;
    for ((z, &ti), &ei) in got.iter().zip(&t).zip(&eps) {
        err = err
            .max((z.re / factor - ei).abs())
            .max(z.im.abs() / factor.abs());
        noise = noise.max((z.re - em.evaluate(ti, factor)).abs() / factor.abs());
    }
    (err, noise, input_noise)
}

/// The CKKS noise allowed on top of the input's own noise, in eps units. One rescaling (or the ModDown
/// of a relinearization) rounds `c_0 + c_1 s` by a polynomial of coefficient variance
/// `(1 + ||s||^2) / 12 ~ N / 18` (ternary secret), so `N / sqrt(18)` per slot (canonical embedding),
/// 6 standard deviations over all slots, relative to a working scale of about `2^LOG_SCALE`. Every level
/// of products multiplies the noise already present by at most 4 (`T_2m = 2 T_m^2 - 1` and
/// `2 y^2 - c^2` with operands within their amplitude), so the cosine's levels and the double angles
/// amplify it by at most `4^(levels + r)`, and the division by `2 pi` brings it to eps units.
fn noise_allowance(em: &EvalMod) -> f64 {
    let p = em.params();
    let levels = em.depth() as i32 - (p.double_angle as i32);
    let rounding = 6.0 * 2f64.powi(LOG_N as i32) / 18f64.sqrt() / 2f64.powi(LOG_SCALE as i32);
    rounding * 4f64.powi(levels + p.double_angle as i32) / (2.0 * std::f64::consts::PI)
}

#[test]
fn homomorphic_reduction_matches_t_mod_1() {
    let s = setup(13, RescalingPolicy::ExactScale, 1);
    for (i, p) in [
        EvalModParams::pegasus_table4(),
        EvalModParams::pegasus_secure128(),
        EvalModParams::bootstrapping(),
        EvalModParams {
            k: 12,
            double_angle: 5,
            cos_degree: 15,
            ..EvalModParams::pegasus_table4()
        },
    ]
    .into_iter()
    .enumerate()
    {
        let em = EvalMod::new(p).unwrap();
        let bound = em.error_bound().total;
        // PEGASUS's factor q_0 / Delta = 2^9 gives T(v) back; 1 and a negative factor too.
        for (normalized, factor) in [(true, 512.0), (false, 1.0), (true, -0.75)] {
            let (err, noise, input_noise) = run(&s, &em, normalized, factor, 10 + i as u64);
            let allowance = input_noise + noise_allowance(&em);
            println!(
                "{p:?} normalized {normalized} factor {factor}: error 2^{:.2} (bound 2^{:.2}), CKKS noise 2^{:.2} (allowance 2^{:.2})",
                err.log2(),
                bound.log2(),
                noise.log2(),
                allowance.log2()
            );
            assert!(noise <= allowance, "{p:?}: noise {noise:e} > {allowance:e}");
            assert!(
                err <= bound + allowance,
                "{p:?}: error {err:e} > bound {bound:e} + noise {allowance:e}"
            );
        }
    }
}

#[test]
fn fixed_nominal_scale_and_start_level() {
    let s = setup(12, RescalingPolicy::FixedNominalScale, 2);
    let p = EvalModParams {
        start_level: Some(10),
        ..EvalModParams::pegasus_table4()
    };
    let em = EvalMod::new(p).unwrap();
    let (t, eps) = inputs(&em, s.ctx.max_slots(), 3);
    let ct = s.enc.encrypt(&t[..], &mut rng(4)).unwrap();
    assert_eq!(ct.level(), 13);
    let out = s.eval.eval_mod(&ct, &em, 1.0).unwrap();
    // Dropped to 10, one level to normalize, 8 for the reduction.
    assert_eq!(out.level(), 1);
    let got = s.dec.decrypt_real(&out).unwrap();
    let err = got
        .iter()
        .zip(&eps)
        .map(|(z, e)| (z - e).abs())
        .fold(0.0, f64::max);
    let input_noise = s
        .dec
        .decrypt_real(&ct)
        .unwrap()
        .iter()
        .zip(&t)
        .map(|(z, v)| (z - v).abs())
        .fold(0.0, f64::max);
    let limit = em.error_bound().total + noise_allowance(&em) + input_noise;
    assert!(err <= limit, "error {err:e} > {limit:e}");
}

#[test]
fn invalid_parameters_are_errors() {
    let base = EvalModParams::pegasus_table4();
    let bad = |p: EvalModParams, parameter: &str| match EvalMod::new(p) {
        Err(Error::InvalidEvalMod {
            parameter: got,
            reason,
        }) => {
            assert_eq!(got, parameter, "{reason}");
            assert!(!reason.is_empty());
        }
        other => panic!("{p:?}: {other:?}"),
    };
    bad(EvalModParams { k: 0, ..base }, "k");
    for ratio in [1.0, 61.0, f64::NAN, f64::INFINITY] {
        bad(
            EvalModParams {
                log_message_ratio: ratio,
                ..base
            },
            "log_message_ratio",
        );
    }
    bad(
        EvalModParams {
            double_angle: 17,
            ..base
        },
        "double_angle",
    );
    bad(
        EvalModParams {
            cos_degree: 0,
            ..base
        },
        "cos_degree",
    );
    bad(
        EvalModParams {
            cos_degree: 4096,
            ..base
        },
        "cos_degree",
    );
    for a in [1, 2, 4, 33] {
        bad(
            EvalModParams {
                arcsine_degree: a,
                ..base
            },
            "arcsine_degree",
        );
    }
    // Degree 15 cannot follow cos(2 pi (16 x - 1/4) / 8): the bound names the degree.
    bad(
        EvalModParams {
            cos_degree: 15,
            ..base
        },
        "cos_degree",
    );
    for start in [0, 8] {
        bad(
            EvalModParams {
                start_level: Some(start),
                ..base
            },
            "start_level",
        );
    }
    assert!(EvalMod::new(EvalModParams {
        start_level: Some(9),
        ..base
    })
    .is_ok());
    assert!(matches!(
        EvalModParams::k_for_secret(-1.0, 6.0),
        Err(Error::InvalidEvalMod { .. })
    ));
    assert!(matches!(
        EvalModParams::k_for_secret(64.0, f64::NAN),
        Err(Error::InvalidEvalMod { .. })
    ));
}

#[test]
fn levels_factor_and_keys_are_checked() {
    let s = setup(9, RescalingPolicy::ExactScale, 5);
    let em = EvalMod::new(EvalModParams::pegasus_table4()).unwrap();
    let (t, _) = inputs(&em, 16, 6);
    // 10 limbs: 9 levels, enough for a normalized input (8) and for another one (9).
    let ct = s.enc.encrypt(&t[..], &mut rng(7)).unwrap();
    assert_eq!(ct.level(), 10);
    assert!(s.eval.eval_mod(&ct, &em, 1.0).is_ok());
    // One level fewer: 9 limbs leave 8 levels, one short of the normalization.
    let low = s.eval.drop_to_level(&ct, 9).unwrap();
    match s.eval.eval_mod(&low, &em, 1.0) {
        Err(
            e @ Error::NotEnoughLevels {
                level: 9,
                needed: 10,
                more: 1,
                ..
            },
        ) => {
            assert!(e.to_string().contains("EvalMod"), "{e}")
        }
        other => panic!("{other:?}"),
    }
    // A start level above the ciphertext's level.
    let started = EvalMod::new(EvalModParams {
        start_level: Some(10),
        ..EvalModParams::pegasus_table4()
    })
    .unwrap();
    assert!(matches!(
        s.eval.eval_mod(&low, &started, 1.0),
        Err(Error::NotEnoughLevels { needed: 10, .. })
    ));
    for factor in [0.0, f64::NAN, f64::INFINITY] {
        assert!(matches!(
            s.eval.eval_mod(&ct, &em, factor),
            Err(Error::InvalidArgument { .. })
        ));
    }
    let keyless = Evaluator::new(&s.ctx);
    assert!(matches!(
        keyless.eval_mod(&ct, &em, 1.0),
        Err(Error::MissingKey { .. })
    ));
}

#[test]
fn polynomial_to_a_chosen_scale() {
    // The double angles rely on it: the output lands on the scale asked for, with the same values.
    let s = setup(4, RescalingPolicy::ExactScale, 8);
    let x = values(s.ctx.max_slots(), 9);
    let ct = s.enc.encrypt(&x[..], &mut rng(10)).unwrap();
    let p = rnsfhe_ckks::Polynomial::chebyshev(vec![0.1, 0.5, -0.25, 0.125], -1.0, 1.0).unwrap();
    let target = ct.scale() * 1.37;
    let out = s
        .eval
        .evaluate_polynomial_to_scale(&ct, &p, target)
        .unwrap();
    assert_eq!(out.level(), ct.level() - p.depth());
    assert_eq!(out.scale(), target);
    let got = s.dec.decrypt_real(&out).unwrap();
    let err = got
        .iter()
        .zip(&x)
        .map(|(g, &v)| (g - p.evaluate(v)).abs())
        .fold(0.0, f64::max);
    assert!(err < 2f64.powi(-30), "error {err:e}");
    for bad in [0.0, -1.0, f64::NAN, f64::INFINITY] {
        assert!(matches!(
            s.eval.evaluate_polynomial_to_scale(&ct, &p, bad),
            Err(Error::InvalidScale { .. })
        ));
    }
}
