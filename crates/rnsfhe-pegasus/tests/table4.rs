//! The pipeline at PEGASUS Table IV's dimensions (N = 2^16, n_lwe = 2^10, n = 2^12): 256 values of
//! `[-8, 8]` through S2C, the dimension switch, 256 look-up tables of sigmoid, ring packing and F_mod, and
//! back (the paper's Fig. 6 end to end). The longest test of the crate (the 256 blind rotations).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use rand::{Rng, SeedableRng};
use rnsfhe_ckks::{CkksDecryptor, CkksEncryptor, Csprng, KeyGenerator};
use rnsfhe_pegasus::{PegasusEvaluator, PegasusKeys, PipelineOptions, PipelinePreset};

#[test]
fn sigmoid_of_256_values_at_table_iv() {
    let params = PipelinePreset::Table4.params().unwrap();
    let ctx = params.ckks.clone();
    let mut rng = Csprng::insecure_from_seed_for_tests([44; 32]);
    let keygen = KeyGenerator::new(&ctx, &mut rng).unwrap();
    let slots = 256;
    // Table IV's switching keys estimate below 128 bits (the paper claims 119): the explicit opt-in.
    let options = PipelineOptions {
        allow_insecure: true,
        ..PipelineOptions::new(slots)
    };
    let (keys, _) = PegasusKeys::generate(&params, &options, &keygen, &mut rng).unwrap();
    let pegasus = PegasusEvaluator::new(params, options, keys).unwrap();
    let mut plain = rand::rngs::StdRng::seed_from_u64(44);
    let values: Vec<f64> = (0..slots).map(|_| plain.gen_range(-8.0..8.0)).collect();
    let pt = ctx
        .encode_real(&values, slots, pegasus.input_level())
        .unwrap();
    let ct = CkksEncryptor::with_secret_key(&ctx, keygen.secret_key())
        .unwrap()
        .encrypt_plaintext(&pt, &mut rng)
        .unwrap();
    let sigmoid = |x: f64| 1.0 / (1.0 + (-x).exp());
    let table = pegasus.table(sigmoid).unwrap();
    let out = pegasus.apply_table(&ct, &table).unwrap();
    assert_eq!(out.slots(), slots);
    assert_eq!(out.level(), 5);
    let got = CkksDecryptor::new(&ctx, keygen.secret_key())
        .unwrap()
        .decrypt_real(&out)
        .unwrap();
    let errors: Vec<f64> = values
        .iter()
        .zip(&got)
        .map(|(&v, &y)| (y - sigmoid(v)).abs())
        .collect();
    let mean = errors.iter().sum::<f64>() / slots as f64;
    let max = errors.iter().cloned().fold(0.0, f64::max);
    eprintln!(
        "Table IV sigmoid: mean 2^{:.2}, max 2^{:.2}",
        mean.log2(),
        max.log2()
    );
    // The acceptance: within 2^-10 of sigmoid (mean, the measure of PEGASUS Fig. 7 and of its
    // 2^-8.5 after repacking); every value within the table's Eq. (3) bound plus the repacking's 2^-12.
    assert!(mean <= 2f64.powi(-10), "mean error 2^{:.2}", mean.log2());
    let bound = pegasus.lut_error_bound(&table, 0.25).unwrap() + 2f64.powi(-12);
    assert!(max <= bound, "max error {max:e} above {bound:e}");
}
