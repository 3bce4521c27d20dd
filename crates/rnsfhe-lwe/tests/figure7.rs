//! The functions of PEGASUS Fig. 7 and Table VI (sigmoid, tanh, `sqrt|x|`, ReLU, sign, `1/x`) as look-up
//! tables: at the Table IV dimensions (`n = 2^12`, `n_lwe = 1024`, `h = 64`, the binary algorithm with
//! `q' < 2^50`) their mean errors are within the paper's range for Table IV (Section VI.C.1: LUT errors
//! "within `[2^-10, 2^-7]`"), and at small insecure sizes over many inputs and both algorithms every
//! output is within the bound of PEGASUS Eq. (3). The table polynomial is checked coefficient by
//! coefficient against Fig. 2 step 1, and sample extraction against a schoolbook negacyclic product in
//! big integers.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;

use num_bigint::BigInt;
use rand::Rng;
use rayon::prelude::*;
use rnsfhe_core::{RlweContext, SecretKey};
use rnsfhe_lwe::{
    extract, BlindRotation, BlindRotationKey, LookupTable, LutEvaluator, LweDimension,
    LweSecretDistribution, LweSecretKey, PegasusParams, PegasusPreset,
};
use rnsfhe_math::sampling::{Csprng, DiscreteGaussian};
use rnsfhe_math::Modulus;

/// How a function's error is bounded.
#[derive(Clone, Copy)]
enum Bound {
    /// PEGASUS Eq. (3) with this Lipschitz constant.
    Lipschitz(f64),
    /// Not Lipschitz (the sign, `sqrt|x|` at 0): Eq. (3) before its Lipschitz step, see
    /// [`windowed_bound`].
    Window,
}

/// A function of the figure: name, `f`, input interval, `sup |f|` there, negacyclic, bound.
type Case = (&'static str, fn(f64) -> f64, (f64, f64), f64, bool, Bound);

fn sigmoid(x: f64) -> f64 {
    1.0 / (1.0 + (-x).exp())
}

fn sign(x: f64) -> f64 {
    if x < 0.0 {
        -1.0
    } else {
        1.0
    }
}

/// `1/x` on `[1, 8]` (PEGASUS K-means inverts positive counts), constant past the interval, so that the
/// table (whose grid covers the whole range, 0 included) is 1-Lipschitz.
fn reciprocal(x: f64) -> f64 {
    1.0 / x.clamp(1.0, 8.0)
}

const CASES: [Case; 6] = [
    (
        "sigmoid",
        sigmoid,
        (-8.0, 8.0),
        1.0,
        false,
        Bound::Lipschitz(0.25),
    ),
    (
        "tanh",
        f64::tanh,
        (-8.0, 8.0),
        1.0,
        false,
        Bound::Lipschitz(1.0),
    ),
    (
        "sqrt|x|",
        |x| x.abs().sqrt(),
        (-8.0, 8.0),
        2.83,
        false,
        Bound::Window,
    ),
    (
        "ReLU",
        |x| x.max(0.0),
        (-8.0, 8.0),
        8.0,
        false,
        Bound::Lipschitz(1.0),
    ),
    ("sign", sign, (-8.0, 8.0), 1.0, true, Bound::Window),
    (
        "1/x",
        reciprocal,
        (1.0, 8.0),
        1.0,
        false,
        Bound::Lipschitz(1.0),
    ),
];

/// The parameters of `preset` with a look-up-table ring of degree `2^log_n`.
fn params(preset: PegasusPreset, log_n: u32) -> PegasusParams {
    let mut p = preset.params().unwrap();
    p.lut.log_n = log_n;
    p
}

/// Eq. (3) before its Lipschitz step (PEGASUS Appendix C.2): the look-up index is within six standard
/// deviations of `2 n Delta_in m / q_0`, i.e. the input grid point read is within `window =
/// error_bound(L = 1) - error_bound(L = 0)` of `m`, and the rotation error is within `error_bound(L =
/// 0)`. The bound is the largest distance from `f(m)` of the values the table holds in that window
/// ([`LookupTable::value_at`]) plus the rotation part; for an `L`-Lipschitz `f` it is at most Eq. (3).
fn windowed_bound(
    table: &LookupTable,
    ctx: &RlweContext,
    f: fn(f64) -> f64,
    m: f64,
    eq3: impl Fn(f64) -> f64,
) -> f64 {
    let rotation = eq3(0.0);
    let window = eq3(1.0) - rotation;
    let q0 = ctx.chain().moduli()[0].value() as f64;
    let step = q0 / (2.0 * ctx.n() as f64 * table.input_scale());
    let (lo, hi) = (
        ((m - window) / step).floor() as i64,
        ((m + window) / step).ceil() as i64,
    );
    let worst = (lo..=hi)
        .map(|k| (table.value_at(k) as f64 / table.output_scale() - f(m)).abs())
        .fold(0.0, f64::max);
    worst + rotation
}

/// Keys and evaluator of `algorithm` at `p`, with the LWE key (ternary of the preset's weight, or binary
/// of that weight) and the ring secret.
fn setup(
    p: &PegasusParams,
    algorithm: BlindRotation,
    r: &mut Csprng,
) -> (Arc<RlweContext>, LweSecretKey, SecretKey, LutEvaluator) {
    let ctx = p.lut.context_allowing_insecure().unwrap();
    let dim = LweDimension::new(p.lwe_dimension).unwrap();
    let distribution = match algorithm {
        BlindRotation::Binary => LweSecretDistribution::BinaryWeight(64.min(p.lwe_dimension / 2)),
        _ => p.lwe_secret,
    };
    let lwe_sk = LweSecretKey::generate(dim, distribution, r).unwrap();
    let ring_sk = SecretKey::generate(&ctx, r).unwrap();
    let key = BlindRotationKey::generate_with(algorithm, &ctx, &ring_sk, &lwe_sk, r).unwrap();
    (ctx, lwe_sk, ring_sk, LutEvaluator::new(key))
}

/// Per case, the inputs and the absolute errors of their look-up tables, after checking every output
/// against its bound.
fn evaluate_cases(
    p: &PegasusParams,
    algorithm: BlindRotation,
    samples: usize,
    seed: u8,
) -> Vec<(&'static str, Vec<f64>)> {
    let mut r = Csprng::insecure_from_seed_for_tests([seed; 32]);
    let (ctx, lwe_sk, ring_sk, eval) = setup(p, algorithm, &mut r);
    let out_sk = LweSecretKey::from_ring_key(&ring_sk).unwrap();
    let q0 = ctx.chain().moduli()[0].value();
    let modulus = Modulus::new(q0).unwrap();
    let sigma = 3.2;
    let noise = DiscreteGaussian::with_sigma(sigma).unwrap();
    let key_norm_sq: f64 = lwe_sk.coefficients().iter().map(|c| (c * c) as f64).sum();
    CASES
        .iter()
        .map(|&(name, f, (lo, hi), max_abs, negacyclic, bound)| {
            let input_scale = LookupTable::max_input_scale(&ctx, lo.abs().max(hi.abs()), sigma, key_norm_sq, negacyclic).unwrap();
            let table = LookupTable::from_fn(&ctx, input_scale, q0 as f64 / (8.0 * max_abs), f).unwrap();
            let inputs: Vec<f64> = (0..samples).map(|_| r.gen_range(lo..=hi)).collect();
            let cts: Vec<_> = inputs
                .iter()
                .map(|&m| lwe_sk.encrypt((m * input_scale).round() as i64, &modulus, &noise, &mut r))
                .collect();
            let eq3 = |l: f64| table.error_bound(&ctx, l, sigma, key_norm_sq, p.lwe_dimension);
            let errors = eval
                .evaluate_many(&cts, &table)
                .unwrap()
                .par_iter()
                .zip(&inputs)
                .map(|(out, &m)| {
                    let got = out_sk.decrypt(out).unwrap() as f64 / table.output_scale();
                    let error = (got - f(m)).abs();
                    let limit = match bound {
                        Bound::Lipschitz(l) => eq3(l),
                        Bound::Window => windowed_bound(&table, &ctx, f, m, eq3),
                    };
                    assert!(
                        error <= limit,
                        "{algorithm:?} {name}({m}) = {}, got {got}: error {error:.3e} above the bound {limit:.3e}",
                        f(m)
                    );
                    error
                })
                .collect();
            (name, errors)
        })
        .collect()
}

/// 64 inputs per function at the Table IV dimensions (the binary algorithm, `q' < 2^50`): every output
/// within its bound, and the mean error of every function at or below the upper end of the paper's
/// range for Table IV, `2^-7` (PEGASUS Section VI.C.1 and Fig. 7).
#[test]
fn table4_dimensions_meet_the_papers_accuracy() {
    let p = params(PegasusPreset::PegasusTable4FastSpecial, 12);
    for (name, errors) in evaluate_cases(&p, BlindRotation::Binary, 64, 71) {
        let mean = errors.iter().sum::<f64>() / errors.len() as f64;
        eprintln!("{name}: mean error 2^{:.2}", mean.log2());
        assert!(
            mean <= 2f64.powi(-7),
            "{name}: mean error 2^{:.2} above 2^-7",
            mean.log2()
        );
    }
}

/// 150 inputs per function and algorithm at small insecure sizes (`n = 2^10`, `n_lwe = 64`): every
/// output within its bound.
#[test]
fn small_sizes_meet_the_error_bound_for_every_input() {
    let p = params(PegasusPreset::InsecureTest, 10);
    for (i, algorithm) in [BlindRotation::Ternary, BlindRotation::Binary]
        .into_iter()
        .enumerate()
    {
        let cases = evaluate_cases(&p, algorithm, 150, 72 + i as u8);
        assert_eq!(cases.len(), CASES.len());
        assert!(cases.iter().all(|(_, e)| e.len() == 150));
    }
}

/// The table polynomial, coefficient by coefficient, against PEGASUS Fig. 2 step 1 evaluated apart:
/// `eta_k = k q_0 / (2 n Delta_in)` with `k q_0` exact (a big integer, rounded once to `f64`), `f_0 =
/// round(Delta_out T(0))`, `f_j = round(Delta_out T(-eta_j))` for `1 <= j <= n/2`, `f_j = round(-Delta_out
/// T(eta_(n-j)))` above, reduced modulo `q_0`; and `value_at` against the constant coefficient of `f X^k`
/// computed by a schoolbook negacyclic product.
#[test]
fn table_coefficients_follow_figure_2_step_1() {
    let p = params(PegasusPreset::InsecureTest, 10);
    let ctx = p.lut.context_allowing_insecure().unwrap();
    let (n, q0) = (ctx.n(), ctx.chain().moduli()[0].value());
    let q0_big = BigInt::from(q0);
    for &(name, f, (lo, hi), max_abs, negacyclic, _) in &CASES {
        let input_scale =
            LookupTable::max_input_scale(&ctx, lo.abs().max(hi.abs()), 3.2, 64.0, negacyclic)
                .unwrap();
        let output_scale = q0 as f64 / (8.0 * max_abs);
        let table = LookupTable::from_fn(&ctx, input_scale, output_scale, f).unwrap();
        let eta = |k: usize| {
            let exact = BigInt::from(k) * &q0_big;
            num_traits::ToPrimitive::to_f64(&exact).unwrap() / (2.0 * n as f64 * input_scale)
        };
        let reference: Vec<BigInt> = (0..n)
            .map(|j| {
                let v = if j == 0 {
                    output_scale * f(0.0)
                } else if j <= n / 2 {
                    output_scale * f(-eta(j))
                } else {
                    -(output_scale * f(eta(n - j)))
                };
                BigInt::from(v.round() as i64)
            })
            .collect();
        let coeffs = table.poly().data();
        for (j, (c, want)) in coeffs.iter().zip(&reference).enumerate() {
            let want = ((want % &q0_big) + &q0_big) % &q0_big;
            assert_eq!(BigInt::from(*c), want, "{name}: coefficient {j}");
        }
        // value_at(k) is the constant coefficient of f X^k, for k in [0, 2n) and shifted by 2n.
        for k in (0..2 * n)
            .step_by(7)
            .chain([1, n / 2, n - 1, n, n + 1, 2 * n - 1])
        {
            let want = schoolbook_constant(&reference, k, n);
            assert_eq!(
                BigInt::from(table.value_at(k as i64)),
                want,
                "{name}: value at {k}"
            );
            assert_eq!(
                table.value_at(k as i64),
                table.value_at(k as i64 - 2 * n as i64)
            );
        }
    }
}

/// Coefficient 0 of `f X^k` modulo `X^n + 1`, multiplied out term by term (`X^(j + k)` with `j + k`
/// reduced modulo `2n` and `X^n = -1`), with `f`'s coefficients signed.
fn schoolbook_constant(f: &[BigInt], k: usize, n: usize) -> BigInt {
    let mut constant = BigInt::from(0);
    for (j, c) in f.iter().enumerate() {
        let e = (j + k) % (2 * n);
        if e == 0 {
            constant += c;
        } else if e == n {
            constant -= c;
        }
    }
    constant
}

/// Every coefficient extracted from a blind-rotation output decrypts (under the ring secret as an LWE
/// key) to the coefficient of `c_0 + c_1 s` computed by a schoolbook negacyclic product in big integers.
#[test]
fn extraction_matches_a_schoolbook_negacyclic_product() {
    let p = params(PegasusPreset::InsecureTest, 10);
    let mut r = Csprng::insecure_from_seed_for_tests([73; 32]);
    let (ctx, lwe_sk, ring_sk, eval) = setup(&p, BlindRotation::Ternary, &mut r);
    let (n, q0) = (ctx.n(), ctx.chain().moduli()[0].value());
    let modulus = Modulus::new(q0).unwrap();
    let input_scale = LookupTable::max_input_scale(&ctx, 8.0, 3.2, 64.0, false).unwrap();
    let table = LookupTable::from_fn(&ctx, input_scale, q0 as f64 / 8.0, f64::tanh).unwrap();
    let noise = DiscreteGaussian::with_sigma(3.2).unwrap();
    let ct = lwe_sk.encrypt((1.5 * input_scale) as i64, &modulus, &noise, &mut r);
    let rotated = eval
        .key()
        .rotate(table.poly(), &ct.switch_modulus(2 * n as u64).unwrap())
        .unwrap();
    let (c0, c1) = (&rotated.parts[0].data()[..n], &rotated.parts[1].data()[..n]);
    let s = ring_sk.coefficients();
    let q0_big = BigInt::from(q0);
    let out_sk = LweSecretKey::from_ring_key(&ring_sk).unwrap();
    for (k, &c0k) in c0.iter().enumerate() {
        // Coefficient k of c_1 s: sum over i + j = k of c_{1,i} s_j, minus over i + j = n + k.
        let mut phase = BigInt::from(c0k);
        for (j, &sj) in s.iter().enumerate() {
            let (i, sign) = if j <= k { (k - j, 1) } else { (n + k - j, -1) };
            phase += BigInt::from(c1[i]) * BigInt::from(sj * sign);
        }
        let phase = ((phase % &q0_big) + &q0_big) % &q0_big;
        let want = if phase > &q0_big / 2 {
            phase - &q0_big
        } else {
            phase
        };
        let got = out_sk.decrypt(&extract(&rotated, k).unwrap()).unwrap();
        assert_eq!(BigInt::from(got), want, "coefficient {k}");
    }
    // The constant coefficient is the table's output: tanh(1.5) up to the grid and the noise.
    let got = out_sk.decrypt(&extract(&rotated, 0).unwrap()).unwrap() as f64 / table.output_scale();
    assert!((got - 1.5f64.tanh()).abs() < 0.05, "{got}");
}
