//! The look-up-table ring degree as a choice (`PipelineParams::with_lut_log_n`, PEGASUS Fig. 7 and
//! Section VI.C.1): the same LWE ciphertexts through tables in rings of degree `n = 2^10` and `2n` at the
//! small insecure dimensions (`N = 2^11`, so `2n` still divides `q_0 - 1`), one CKKS secret and one LWE
//! secret for both, a table of the identity (its error is the input's, unweighted by a varying slope, so
//! 512 values measure the mean within a few per cent). The larger ring's error is smaller by the factor
//! its grid step predicts, and both round trips stay within their Eq. (3) bounds.
//!
//! **The prediction** (derived from the parameters, nothing fitted). Blind rotation reads the table at
//! the index `b~ + <a~, s>` of the input switched to `2n` (PEGASUS Fig. 2 step 2), where `b~ = round(2n
//! b / q)` and `a~_i = round(2n a_i / q)`: the index differs from the exact `2n (Delta m + e) / q` by
//! `1 + ||s||^2` independent roundings, uniform on `[-1/2, 1/2]`, a variance of `(1 + ||s||^2) / 12`
//! grid steps squared (Appendix C.2). A grid step is `q / (2n Delta)` in input units, so the input the
//! table reads is off by `delta` with `Var(delta) = (q / (2n Delta))^2 (1 + ||s||^2) / 12 + sigma_in^2
//! / Delta^2` (`sigma_in` the dimension switch's error, [`PegasusEvaluator::lwe_input_variance`]), and
//! the output of a smooth `f` at `v` is off by `f'(v) delta` (`delta` itself for the identity) plus
//! blind rotation's own error
//! `e_br / Delta_out` ([`rnsfhe_lwe::BlindRotationKey::added_variance`], `2^-25` of the output here).
//! With `1 + ||s||^2 = 65` roundings the error is Gaussian to a good approximation, so the expected
//! absolute error at `v` is `sqrt(2 / pi) sigma(v)`, `sigma(v)^2 = f'(v)^2 Var(delta) + Var(e_br) /
//! Delta_out^2`, and the mean over the inputs has a standard error of `sqrt(sum sigma(v)^2 (1 - 2 /
//! pi)) / M`. Doubling `n` halves the grid term: the factor is just below 2 (the other two terms do not
//! shrink).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::f64::consts::PI;

use rand::{Rng, SeedableRng};
use rnsfhe_ckks::{CkksDecryptor, CkksEncryptor, Csprng, KeyGenerator};
use rnsfhe_lwe::{LookupTable, LweCiphertext, LweSecretKey};
use rnsfhe_pegasus::{
    PegasusEvaluator, PegasusKeys, PegasusSecretKeys, PipelineOptions, PipelineParams,
    PipelinePreset,
};

/// Values per ciphertext, the sample of the mean errors.
const SLOTS: usize = 512;

/// The function of the tables, 1-Lipschitz on the inputs' range `[-8, 8]`.
fn identity(x: f64) -> f64 {
    x
}

/// One pipeline of the comparison and the secret of its look-up-table ring.
struct Ring {
    pegasus: PegasusEvaluator,
    lut_ring: LweSecretKey,
}

/// What one ring gives for the inputs: the measured mean error of the tables' outputs, its prediction
/// and the prediction's standard error, and the round trip's mean and largest error with its bound.
#[derive(Debug)]
struct Measured {
    mean: f64,
    predicted: f64,
    standard_error: f64,
    round_trip_mean: f64,
    round_trip_max: f64,
    round_trip_bound: f64,
}

impl Ring {
    /// The pipeline of `params` for the CKKS secret of `keygen` and the LWE secret `lwe`, with a new
    /// secret for its look-up-table ring.
    fn new(
        params: &PipelineParams,
        keygen: &KeyGenerator,
        lwe: &LweSecretKey,
        rng: &mut Csprng,
    ) -> Self {
        let options = PipelineOptions {
            allow_insecure: true,
            ..PipelineOptions::new(SLOTS)
        };
        let lut_ctx = params.lwe.lut.context_allowing_insecure().unwrap();
        let secrets = PegasusSecretKeys {
            lwe: lwe.clone(),
            lut_ring: LweSecretKey::from_ring_key(
                &rnsfhe_core::SecretKey::generate(&lut_ctx, rng).unwrap(),
            )
            .unwrap(),
        };
        let keys = PegasusKeys::generate_for(params, &options, keygen, &secrets, rng).unwrap();
        Self {
            pegasus: PegasusEvaluator::new(params.clone(), options, keys).unwrap(),
            lut_ring: secrets.lut_ring,
        }
    }

    /// The tables' outputs for `lwes` (the encryptions of `values`), with the prediction of the module
    /// documentation for the LWE key `lwe`, and the round trip: those outputs repacked and decrypted
    /// by `dec`.
    fn measure(
        &self,
        lwe: &LweSecretKey,
        lwes: &[LweCiphertext],
        values: &[f64],
        dec: &CkksDecryptor,
    ) -> Measured {
        let p = &self.pegasus;
        let table: LookupTable = p.table(identity).unwrap();
        let outs = p.lut(lwes, &table).unwrap();
        let errors: Vec<f64> = outs
            .iter()
            .zip(values)
            .map(|(ct, &v)| {
                let y = self.lut_ring.decrypt(ct).unwrap() as f64 / table.output_scale();
                (y - identity(v)).abs()
            })
            .collect();
        let mean = errors.iter().sum::<f64>() / errors.len() as f64;

        let n = p.lut_evaluator().key().context().n() as f64;
        let (q, scale) = (
            p.lwe_modulus().unwrap() as f64,
            p.lwe_input_scale().unwrap(),
        );
        let norm_sq: f64 = lwe.coefficients().iter().map(|&s| (s * s) as f64).sum();
        let step = q / (2.0 * n * scale);
        let input = step * step * (1.0 + norm_sq) / 12.0
            + p.lwe_input_variance().unwrap() / (scale * scale);
        let key = p.lut_evaluator().key();
        let rotation = key.added_variance(key.lwe_dimension().get()) / table.output_scale().powi(2);
        let variances: Vec<f64> = values.iter().map(|_| input + rotation).collect();
        let m = values.len() as f64;
        let predicted = variances
            .iter()
            .map(|s2| (2.0 / PI * s2).sqrt())
            .sum::<f64>()
            / m;
        let standard_error = (variances.iter().sum::<f64>() * (1.0 - 2.0 / PI)).sqrt() / m;

        let round_trip = dec.decrypt_real(&p.repack(&outs, &table).unwrap()).unwrap();
        let rt: Vec<f64> = round_trip
            .iter()
            .zip(values)
            .map(|(&y, &v)| (y - identity(v)).abs())
            .collect();
        Measured {
            mean,
            predicted,
            standard_error,
            round_trip_mean: rt.iter().sum::<f64>() / m,
            round_trip_max: rt.iter().copied().fold(0.0, f64::max),
            // The table's Eq. (3) bound plus the repacking's share, as in tests/pipeline.rs.
            round_trip_bound: p.lut_error_bound(&table, 1.0).unwrap() + 2f64.powi(-12),
        }
    }
}

#[test]
fn doubling_the_lut_ring_halves_the_table_error_as_predicted() {
    let small = PipelinePreset::InsecureTest.params().unwrap();
    assert_eq!(small.lut_log_n(), 10);
    let large = small.clone().with_lut_log_n(11).unwrap();
    let ctx = small.ckks.clone();
    let mut rng = Csprng::insecure_from_seed_for_tests([71; 32]);
    let keygen = KeyGenerator::new(&ctx, &mut rng).unwrap();
    let lwe = LweSecretKey::generate(
        rnsfhe_lwe::LweDimension::new(small.lwe.lwe_dimension).unwrap(),
        small.lwe.lwe_secret,
        &mut rng,
    )
    .unwrap();
    let rings = [
        Ring::new(&small, &keygen, &lwe, &mut rng),
        Ring::new(&large, &keygen, &lwe, &mut rng),
    ];

    let mut plain = rand::rngs::StdRng::seed_from_u64(71);
    let values: Vec<f64> = (0..SLOTS).map(|_| plain.gen_range(-8.0..8.0)).collect();
    let input_level = rings[0].pegasus.input_level();
    let pt = ctx.encode_real(&values, SLOTS, input_level).unwrap();
    let ct = CkksEncryptor::with_secret_key(&ctx, keygen.secret_key())
        .unwrap()
        .encrypt_plaintext(&pt, &mut rng)
        .unwrap();
    let dec = CkksDecryptor::new(&ctx, keygen.secret_key()).unwrap();
    // The same LWE ciphertexts for both rings (both blind-rotation keys are under `lwe`).
    let lwes = rings[0].pegasus.to_lwe(&ct).unwrap();

    let measured: Vec<Measured> = rings
        .iter()
        .map(|r| r.measure(&lwe, &lwes, &values, &dec))
        .collect();
    for (r, m) in rings.iter().zip(&measured) {
        let n = r.pegasus.lut_evaluator().key().context().n();
        eprintln!(
            "n = {n}: tables mean 2^{:.3} (predicted 2^{:.3} +- {:.1} %), round trip mean 2^{:.3}, max \
             2^{:.3}, bound 2^{:.3}",
            m.mean.log2(),
            m.predicted.log2(),
            100.0 * m.standard_error / m.predicted,
            m.round_trip_mean.log2(),
            m.round_trip_max.log2(),
            m.round_trip_bound.log2()
        );
        // Each ring's mean error is its prediction within four standard errors.
        assert!(
            (m.mean - m.predicted).abs() <= 4.0 * m.standard_error,
            "n = {n}: {m:?}"
        );
        assert!(m.round_trip_max <= m.round_trip_bound, "n = {n}: {m:?}");
    }
    let (a, b) = (&measured[0], &measured[1]);
    let ratio = a.mean / b.mean;
    let predicted = a.predicted / b.predicted;
    // The relative standard error of a ratio of two independent means.
    let spread = ((a.standard_error / a.predicted).powi(2)
        + (b.standard_error / b.predicted).powi(2))
    .sqrt();
    eprintln!(
        "ratio {ratio:.3}, predicted {predicted:.3} +- {:.1} %",
        100.0 * spread
    );
    assert!(predicted > 1.9 && predicted <= 2.0, "{predicted}");
    assert!(
        (ratio / predicted - 1.0).abs() <= 4.0 * spread,
        "ratio {ratio} against the predicted {predicted}"
    );
    // The round trip gains too: the tables' error is its largest part.
    assert!(
        b.round_trip_mean < a.round_trip_mean * 0.6,
        "{} against {}",
        b.round_trip_mean,
        a.round_trip_mean
    );
}

#[test]
fn a_ring_too_small_for_the_input_margin_is_an_error() {
    // n = 2^8 is a valid degree for n_lwe = 64, but its index error (2.33 grid steps of q_0 / 2^9, six
    // standard deviations) does not fit in the q_0 / 64 the pipeline's input scale leaves free: an error
    // when the keys are made, before any key material.
    let params = PipelinePreset::InsecureTest
        .params_with_lut_log_n(8)
        .unwrap();
    let mut rng = Csprng::insecure_from_seed_for_tests([72; 32]);
    let keygen = KeyGenerator::new(&params.ckks, &mut rng).unwrap();
    let options = PipelineOptions {
        allow_insecure: true,
        ..PipelineOptions::new(8)
    };
    let err = PegasusKeys::generate(&params, &options, &keygen, &mut rng).unwrap_err();
    assert!(
        matches!(
            err,
            rnsfhe_pegasus::PegasusError::InvalidParams {
                what: "look-up-table ring degree",
                ..
            }
        ),
        "{err}"
    );
    // 2^9 leaves the margin (6 x 2.33 / 2^10 < 1/64).
    let params = PipelinePreset::InsecureTest
        .params_with_lut_log_n(9)
        .unwrap();
    assert!(PegasusKeys::generate(&params, &options, &keygen, &mut rng).is_ok());
}
