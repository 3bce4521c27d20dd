//! The whole pipeline (PEGASUS Fig. 6) at small insecure dimensions: a CKKS ciphertext of values in
//! `[-8, 8]` in, `T(v)` out, by both repacking paths and both dimension switches, for the functions of
//! Fig. 7 and a user's table; and the errors of a pipeline used wrongly.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use rand::{Rng, SeedableRng};
use rnsfhe_ckks::{Ciphertext, CkksDecryptor, CkksEncryptor, Csprng, KeyGenerator};
use rnsfhe_pegasus::dimension_switch::DimensionSwitch;
use rnsfhe_pegasus::{
    PegasusError, PegasusEvaluator, PegasusKeys, PipelineOptions, PipelinePreset, Repacking,
};

const SLOTS: usize = 64;

fn sigmoid(x: f64) -> f64 {
    1.0 / (1.0 + (-x).exp())
}

struct Setup {
    pegasus: PegasusEvaluator,
    enc: CkksEncryptor,
    dec: CkksDecryptor,
    rng: Csprng,
}

fn setup(repacking: Repacking, switch: DimensionSwitch, seed: u8) -> Setup {
    let params = PipelinePreset::InsecureTest.params().unwrap();
    let ctx = params.ckks.clone();
    let mut rng = Csprng::insecure_from_seed_for_tests([seed; 32]);
    let keygen = KeyGenerator::new(&ctx, &mut rng).unwrap();
    let options = PipelineOptions {
        repacking,
        dimension_switch: switch,
        allow_insecure: true,
        ..PipelineOptions::new(SLOTS)
    };
    let (keys, _secrets) = PegasusKeys::generate(&params, &options, &keygen, &mut rng).unwrap();
    Setup {
        pegasus: PegasusEvaluator::new(params, options, keys).unwrap(),
        enc: CkksEncryptor::with_secret_key(&ctx, keygen.secret_key()).unwrap(),
        dec: CkksDecryptor::new(&ctx, keygen.secret_key()).unwrap(),
        rng,
    }
}

impl Setup {
    fn encrypt(&mut self, values: &[f64], level: usize) -> Ciphertext {
        let ctx = self.pegasus.context();
        let pt = ctx.encode_real(values, SLOTS, level).unwrap();
        self.enc.encrypt_plaintext(&pt, &mut self.rng).unwrap()
    }

    /// Mean and max of `|out - f(v)|` for random values in `[-8, 8]`, and the bound they must meet:
    /// the table's (PEGASUS Eq. 3 for an `lipschitz`-Lipschitz function) plus the round-trip
    /// goal `2^-12` for the repacking (F_mod's own bound is `2^-15` of the output at these
    /// parameters; the rest is CKKS noise amplified by F_mod's double angles).
    fn errors(
        &mut self,
        f: impl Fn(f64) -> f64 + Copy,
        lipschitz: f64,
        seed: u64,
    ) -> (f64, f64, f64) {
        let mut plain = rand::rngs::StdRng::seed_from_u64(seed);
        let values: Vec<f64> = (0..SLOTS).map(|_| plain.gen_range(-8.0..8.0)).collect();
        let ct = self.encrypt(&values, self.pegasus.input_level());
        let table = self.pegasus.table(f).unwrap();
        let out = self.pegasus.apply_table(&ct, &table).unwrap();
        let got = self.dec.decrypt_real(&out).unwrap();
        let errors: Vec<f64> = values
            .iter()
            .zip(&got)
            .map(|(&v, &y)| (y - f(v)).abs())
            .collect();
        let bound = self.pegasus.lut_error_bound(&table, lipschitz).unwrap() + 2f64.powi(-12);
        let max = errors.iter().cloned().fold(0.0, f64::max);
        (errors.iter().sum::<f64>() / errors.len() as f64, max, bound)
    }
}

fn check(label: &str, (mean, max, bound): (f64, f64, f64)) {
    eprintln!(
        "{label}: mean 2^{:.2}, max 2^{:.2}, bound 2^{:.2}",
        mean.log2(),
        max.log2(),
        bound.log2()
    );
    assert!(
        max <= bound,
        "{label}: max error {max:e} above the bound {bound:e}"
    );
}

#[test]
fn fig7_functions_and_a_user_table_through_ring_packing() {
    let mut s = setup(Repacking::RingPacking, DimensionSwitch::WholeCiphertext, 1);
    check("sigmoid", s.errors(sigmoid, 0.25, 1));
    check("relu", s.errors(|x| x.max(0.0), 1.0, 2));
    check("sqrt|x|", s.errors(|x: f64| x.abs().sqrt(), 1.0, 3));
    // A user's table: a step function read from a list of values (the bound's Lipschitz constant is
    // that of the interpolating ramp between steps, not used here: the steps sit away from the inputs'
    // grid cells only within the index error, so the check uses the values at the cells).
    let steps: Vec<f64> = (0..16).map(|k| ((k * 7) % 5) as f64 / 4.0).collect();
    let table = move |x: f64| steps[((x + 8.0).floor().clamp(0.0, 15.0)) as usize];
    let mut plain = rand::rngs::StdRng::seed_from_u64(4);
    // Inputs at the centres of the steps: the index error (a few grid cells of 2^-6) stays inside.
    let values: Vec<f64> = (0..SLOTS)
        .map(|_| plain.gen_range(0..16) as f64 - 7.5)
        .collect();
    let ct = s.encrypt(&values, s.pegasus.input_level());
    let out = s.pegasus.apply(&ct, table.clone()).unwrap();
    let got = s.dec.decrypt_real(&out).unwrap();
    for (&v, &y) in values.iter().zip(&got) {
        assert!(
            (y - table(v)).abs() < 2f64.powi(-10),
            "table({v}) = {}, got {y}",
            table(v)
        );
    }
}

#[test]
fn sigmoid_through_the_linear_transform_and_per_ciphertext_switch() {
    let mut s = setup(
        Repacking::LinearTransform,
        DimensionSwitch::PerCiphertext,
        2,
    );
    check("sigmoid (Fig. 5)", s.errors(sigmoid, 0.25, 5));
}

#[test]
fn finer_control_equals_the_one_call() {
    let mut s = setup(Repacking::RingPacking, DimensionSwitch::WholeCiphertext, 3);
    let values: Vec<f64> = (0..SLOTS).map(|i| -8.0 + 0.25 * i as f64).collect();
    let ct = s.encrypt(&values, s.pegasus.input_level());
    let table = s.pegasus.table(f64::tanh).unwrap();
    let lwes = s.pegasus.to_lwe(&ct).unwrap();
    assert_eq!(lwes.len(), SLOTS);
    let outs = s.pegasus.lut(&lwes, &table).unwrap();
    let back = s.pegasus.repack(&outs, &table).unwrap();
    let got = s.dec.decrypt_real(&back).unwrap();
    let bound = s.pegasus.lut_error_bound(&table, 1.0).unwrap() + 2f64.powi(-12);
    for (&v, &y) in values.iter().zip(&got) {
        assert!((y - v.tanh()).abs() <= bound, "tanh({v}): {y}");
    }
    // Fewer outputs than slots: the rest of the slots are zero.
    let back = s.pegasus.repack(&outs[..5], &table).unwrap();
    let got = s.dec.decrypt_real(&back).unwrap();
    for (i, &y) in got.iter().enumerate() {
        let want = if i < 5 { values[i].tanh() } else { 0.0 };
        assert!((y - want).abs() <= bound, "slot {i}: {y} against {want}");
    }
}

#[test]
fn misuse_is_an_error() {
    let mut s = setup(Repacking::RingPacking, DimensionSwitch::WholeCiphertext, 4);
    let values = vec![0.5; SLOTS];
    // A level too low for slots-to-coefficients.
    let low = s.encrypt(&values, s.pegasus.input_level() - 1);
    let err = s.pegasus.apply(&low, sigmoid).unwrap_err();
    assert!(err.to_string().contains("level"), "{err}");
    // Another slot count.
    let ctx = s.pegasus.context().clone();
    let pt = ctx
        .encode_real(&values[..32], 32, s.pegasus.input_level())
        .unwrap();
    let other = s.enc.encrypt_plaintext(&pt, &mut s.rng).unwrap();
    let err = s.pegasus.apply(&other, sigmoid).unwrap_err();
    assert!(
        matches!(
            err,
            PegasusError::InvalidParams {
                what: "slot count",
                ..
            }
        ),
        "{err}"
    );
    // More values than the repacking holds, and none.
    let ct = s.encrypt(&values, s.pegasus.input_level());
    let table = s.pegasus.table(sigmoid).unwrap();
    let outs = s
        .pegasus
        .lut(&s.pegasus.to_lwe(&ct).unwrap(), &table)
        .unwrap();
    let mut twice = outs.clone();
    twice.extend(outs.iter().cloned());
    assert!(s.pegasus.repack(&twice, &table).is_err());
    assert!(s.pegasus.repack(&[], &table).is_err());
    // A function that is not finite on the domain.
    assert!(s.pegasus.table(|x| 1.0 / x).is_err());
    // Keys made for the other path or the other dimension switch.
    let params = PipelinePreset::InsecureTest.params().unwrap();
    let keygen = KeyGenerator::new(&params.ckks, &mut s.rng).unwrap();
    let made = PipelineOptions {
        allow_insecure: true,
        ..PipelineOptions::new(SLOTS)
    };
    for other in [
        PipelineOptions {
            repacking: Repacking::LinearTransform,
            ..made
        },
        PipelineOptions {
            dimension_switch: DimensionSwitch::PerCiphertext,
            ..made
        },
    ] {
        let (keys, _) = PegasusKeys::generate(&params, &made, &keygen, &mut s.rng).unwrap();
        let err = PegasusEvaluator::new(params.clone(), other, keys).unwrap_err();
        assert!(matches!(err, PegasusError::MissingKey { .. }), "{err}");
    }
    // Insecure keys without the opt-in.
    let err = PegasusKeys::generate(&params, &PipelineOptions::new(SLOTS), &keygen, &mut s.rng)
        .unwrap_err();
    assert!(err.to_string().contains("bits"), "{err}");
}

#[test]
fn ring_packing_and_the_linear_transform_give_the_same_slots() {
    let params = PipelinePreset::InsecureTest.params().unwrap();
    let ctx = params.ckks.clone();
    let mut rng = Csprng::insecure_from_seed_for_tests([9; 32]);
    let keygen = KeyGenerator::new(&ctx, &mut rng).unwrap();
    let ring = PipelineOptions {
        allow_insecure: true,
        ..PipelineOptions::new(SLOTS)
    };
    let fig5 = PipelineOptions {
        repacking: Repacking::LinearTransform,
        ..ring
    };
    let (keys, secrets) = PegasusKeys::generate(&params, &ring, &keygen, &mut rng).unwrap();
    let fig5_keys = PegasusKeys::generate_for(&params, &fig5, &keygen, &secrets, &mut rng).unwrap();
    let by_ring = PegasusEvaluator::new(params.clone(), ring, keys).unwrap();
    let by_fig5 = PegasusEvaluator::new(params, fig5, fig5_keys).unwrap();
    let values: Vec<f64> = (0..SLOTS).map(|i| -7.9 + 0.25 * i as f64).collect();
    let pt = ctx
        .encode_real(&values, SLOTS, by_ring.input_level())
        .unwrap();
    let enc = CkksEncryptor::with_secret_key(&ctx, keygen.secret_key()).unwrap();
    let ct = enc.encrypt_plaintext(&pt, &mut rng).unwrap();
    // One set of table outputs, repacked by both paths.
    let table = by_ring.table(sigmoid).unwrap();
    let outs = by_ring.lut(&by_ring.to_lwe(&ct).unwrap(), &table).unwrap();
    let dec = CkksDecryptor::new(&ctx, keygen.secret_key()).unwrap();
    let a = dec
        .decrypt_real(&by_ring.repack(&outs, &table).unwrap())
        .unwrap();
    let b = dec
        .decrypt_real(&by_fig5.repack(&outs, &table).unwrap())
        .unwrap();
    // Both hold the tables' outputs: they differ by the two repackings' errors, the paper's path's
    // key switch back to n_lwe the larger: sigma_ks = 2^13, B = 2^7, d = 7 from n = 1024 give a standard
    // deviation of sqrt(1024 * 7 * 2^14 / 12) 2^13 ~ 2^24.6 against Delta_out ~ 2^35.9, so 6 of them are
    // 2^-8.7 of the output; ring packing and F_mod add about 2^-12.
    let worst = a
        .iter()
        .zip(&b)
        .map(|(x, y)| (x - y).abs())
        .fold(0.0, f64::max);
    eprintln!(
        "ring packing against Fig. 5: max difference 2^{:.2}",
        worst.log2()
    );
    assert!(worst <= 2f64.powi(-8), "max difference {worst:e}");
}

/// Two sets of table outputs back by one call: on the ring-packing path by one repacking (the two
/// halves of one CoeffsToSlots), on the linear-transform path by two; either way the two ciphertexts
/// of `repack` one level lower, with the values of two separate repackings (and their slot counts) and
/// zeros in the other slots. The tables have different output scales (`tanh` within 1, `x` within 8).
#[test]
fn repack_pair_equals_two_repackings() {
    for (repacking, seed) in [
        (Repacking::RingPacking, 5u8),
        (Repacking::LinearTransform, 6),
    ] {
        let mut s = setup(repacking, DimensionSwitch::WholeCiphertext, seed);
        let values: Vec<f64> = (0..SLOTS).map(|i| -8.0 + 0.25 * i as f64).collect();
        let ct = s.encrypt(&values, s.pegasus.input_level());
        let lwes = s.pegasus.to_lwe(&ct).unwrap();
        let tanh = s.pegasus.table(f64::tanh).unwrap();
        let identity = s.pegasus.table(|x| x).unwrap();
        let first = s.pegasus.lut(&lwes, &tanh).unwrap();
        let second = s.pegasus.lut(&lwes[..3], &identity).unwrap();
        let (a, b) = s
            .pegasus
            .repack_pair(&first, &tanh, &second, &identity)
            .unwrap();
        let single = s.pegasus.repack(&first, &tanh).unwrap();
        assert_eq!(
            (a.level(), b.level()),
            (single.level() - 1, single.level() - 1)
        );
        // Two repackings return the slot count of each (Fig. 5 packs 3 values into 4 slots).
        let slots = s.pegasus.repack(&second, &identity).unwrap().slots();
        assert_eq!((a.slots(), b.slots()), (single.slots(), slots));
        if repacking == Repacking::RingPacking {
            assert_eq!(slots, SLOTS);
        }
        let bound = |t| s.pegasus.lut_error_bound(t, 1.0).unwrap() + 2f64.powi(-12);
        let (bound_a, bound_b) = (bound(&tanh), bound(&identity));
        let got = s.dec.decrypt_real(&a).unwrap();
        for (&v, &y) in values.iter().zip(&got) {
            assert!(
                (y - v.tanh()).abs() <= bound_a,
                "{repacking:?} tanh({v}): {y}"
            );
        }
        let got = s.dec.decrypt_real(&b).unwrap();
        for (i, &y) in got.iter().enumerate() {
            let want = if i < 3 { values[i] } else { 0.0 };
            assert!(
                (y - want).abs() <= bound_b,
                "{repacking:?} slot {i}: {y} against {want}"
            );
        }
        assert!(matches!(
            s.pegasus.repack_pair(&first, &tanh, &[], &identity),
            Err(PegasusError::InvalidParams { .. })
        ));
    }
}
