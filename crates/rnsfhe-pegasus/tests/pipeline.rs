//! The whole pipeline (PEGASUS Fig. 6) at small insecure dimensions: a CKKS ciphertext of values in
//! `[-8, 8]` in, `T(v)` out, by both repacking paths and both dimension switches.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use rand::{Rng, SeedableRng};
use rnsfhe_ckks::{CkksDecryptor, CkksEncryptor, Csprng, KeyGenerator};
use rnsfhe_pegasus::dimension_switch::DimensionSwitch;
use rnsfhe_pegasus::{PegasusEvaluator, PegasusKeys, PipelineOptions, PipelinePreset, Repacking};

fn sigmoid(x: f64) -> f64 {
    1.0 / (1.0 + (-x).exp())
}

fn run(repacking: Repacking, switch: DimensionSwitch, seed: u8) -> (f64, f64) {
    let params = PipelinePreset::InsecureTest.params().unwrap();
    let ctx = params.ckks.clone();
    let mut rng = Csprng::insecure_from_seed_for_tests([seed; 32]);
    let keygen = KeyGenerator::new(&ctx, &mut rng).unwrap();
    let slots = 64;
    let options = PipelineOptions {
        repacking,
        dimension_switch: switch,
        allow_insecure: true,
        ..PipelineOptions::new(slots)
    };
    let (keys, _secrets) = PegasusKeys::generate(&params, &options, &keygen, &mut rng).unwrap();
    let pegasus = PegasusEvaluator::new(params, options, keys).unwrap();
    let enc = CkksEncryptor::with_secret_key(&ctx, keygen.secret_key()).unwrap();
    let dec = CkksDecryptor::new(&ctx, keygen.secret_key()).unwrap();
    let mut plain = rand::rngs::StdRng::seed_from_u64(seed as u64);
    let values: Vec<f64> = (0..slots).map(|_| plain.gen_range(-8.0..8.0)).collect();
    let pt = ctx
        .encode_real(&values, slots, pegasus.input_level())
        .unwrap();
    let ct = enc.encrypt_plaintext(&pt, &mut rng).unwrap();
    let out = pegasus.apply(&ct, sigmoid).unwrap();
    let got = dec.decrypt_real(&out).unwrap();
    let errors: Vec<f64> = values
        .iter()
        .zip(&got)
        .map(|(&v, &y)| (y - sigmoid(v)).abs())
        .collect();
    let max = errors.iter().cloned().fold(0.0, f64::max);
    let mean = errors.iter().sum::<f64>() / errors.len() as f64;
    (mean, max)
}

#[test]
fn sigmoid_through_ring_packing() {
    let (mean, max) = run(Repacking::RingPacking, DimensionSwitch::WholeCiphertext, 1);
    eprintln!(
        "ring packing: mean 2^{:.2}, max 2^{:.2}",
        mean.log2(),
        max.log2()
    );
    assert!(max < 2f64.powi(-4), "max error {max}");
}

#[test]
fn sigmoid_through_the_linear_transform() {
    let (mean, max) = run(
        Repacking::LinearTransform,
        DimensionSwitch::PerCiphertext,
        2,
    );
    eprintln!(
        "linear transform: mean 2^{:.2}, max 2^{:.2}",
        mean.log2(),
        max.log2()
    );
    assert!(max < 2f64.powi(-4), "max error {max}");
}
