//! RNS-CKKS Table 3 (Section 5.2) at the paper's parameters (`N = 2^14`, `log q = 55`, `log Q_L = 171`):
//! mean and variance of `2^13` encrypted numbers in `[-1, 1]` within `2^-25` of the plaintext values
//! (the acceptance criterion; the paper reports the times, not the precision).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{rng, values};
use rnsfhe_ckks::{CkksContext, CkksDecryptor, CkksEncryptor, Evaluator, KeyGenerator, Preset};

#[test]
fn paper_table3_mean_and_variance_within_2_pow_minus_25() {
    let ctx = CkksContext::new(Preset::PaperTable3.params()).unwrap();
    assert_eq!(ctx.n(), 1 << 14);
    assert_eq!(ctx.log_q().ceil() as u32, 171, "Table 3: ceil(log Q_L)");
    let slots = ctx.max_slots();
    assert_eq!(slots, 1 << 13);

    let mut r = rng(33);
    let kg = KeyGenerator::new(&ctx, &mut r).unwrap();
    let steps = KeyGenerator::power_of_two_steps(slots);
    let keys = kg.generate_all(&steps, false, &mut r).unwrap();
    let enc = CkksEncryptor::with_public_key(&ctx, &keys.public).unwrap();
    let dec = CkksDecryptor::new(&ctx, &keys.secret).unwrap();
    let eval = Evaluator::new(&ctx)
        .with_relin_key(keys.relin)
        .unwrap()
        .with_galois_keys(keys.galois)
        .unwrap();

    let x = values(slots, 3);
    assert!(x.iter().all(|v| (-1.0..=1.0).contains(v)));
    let ct = enc.encrypt(x.as_slice(), &mut r).unwrap();
    let mean: f64 = x.iter().sum::<f64>() / slots as f64;
    let var: f64 = x.iter().map(|v| v * v).sum::<f64>() / slots as f64 - mean * mean;

    let max_err = |got: &[rnsfhe_ckks::Complex64], want: f64| {
        got.iter()
            .map(|z| (z.re - want).abs().max(z.im.abs()))
            .fold(0.0f64, f64::max)
    };
    let m = eval.mean(&ct).unwrap();
    let err_mean = max_err(&dec.decrypt(&m).unwrap(), mean);
    let v = eval.variance(&ct).unwrap();
    assert_eq!(v.level(), 1, "the variance uses both levels of Table 3");
    let err_var = max_err(&dec.decrypt(&v).unwrap(), var);
    println!(
        "PaperTable3: mean {mean:.6} error 2^{:.1}, variance {var:.6} error 2^{:.1}",
        err_mean.log2(),
        err_var.log2()
    );
    assert!(
        err_mean < 2f64.powi(-25),
        "mean error 2^{:.1}",
        err_mean.log2()
    );
    assert!(
        err_var < 2f64.powi(-25),
        "variance error 2^{:.1}",
        err_var.log2()
    );
}
