//! CKKS bootstrapping ([`Evaluator::bootstrap`]) at small insecure parameters: full and sparse slots,
//! real and complex values in `[-1, 1]`, within [`Bootstrapper::error_bound`] of the input's
//! decryption, at the documented level and scale; ten bootstraps with a product between each; errors
//! for missing keys, slot counts, contexts, chains too short and scales too large.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::sync::Arc;

use common::{c, complex_values, rng, values};
use rnsfhe_ckks::{
    BootstrapParams, Bootstrapper, Ciphertext, CkksContext, CkksDecryptor, CkksEncryptor,
    CkksParams, Complex64, ConversionMode, Error, Evaluator, KeyGenerator, PrecisionStats,
    RescalingPolicy, SecretDistribution,
};

const HAMMING_WEIGHT: usize = 64;

/// `N = 2^11`, scale `2^51`, `q_0` of 60 bits (`q_0 / Delta ~ 2^9`), `levels` scaling primes, digits
/// of 4 primes under `P` of four 55-bit primes, Hamming weight 64 (`K = 17`); not secure.
fn context(levels: usize) -> Arc<CkksContext> {
    CkksContext::new(CkksParams {
        log_n: 11,
        log_scale: 51,
        q0_bits: 60,
        levels,
        bootstrap_primes: Vec::new(),
        special_primes: 4,
        special_bits: 55,
        dnum: (levels + 1).div_ceil(4),
        secret: SecretDistribution::HammingWeight(HAMMING_WEIGHT),
        sigma: 3.2,
        conversion: ConversionMode::Fast,
        rescaling: RescalingPolicy::ExactScale,
        insecure_for_testing: true,
    })
    .unwrap()
}

/// Levels of the test chain: the circuit's 17 (3 + 11 + 3) and two for the user.
const LEVELS: usize = 19;

struct Setup {
    ctx: Arc<CkksContext>,
    keys: KeyGenerator,
    enc: CkksEncryptor,
    dec: CkksDecryptor,
}

impl Setup {
    fn new(seed: u8) -> Self {
        let ctx = context(LEVELS);
        let keys = KeyGenerator::new(&ctx, &mut rng(seed)).unwrap();
        Self {
            enc: CkksEncryptor::with_secret_key(&ctx, keys.secret_key()).unwrap(),
            dec: CkksDecryptor::new(&ctx, keys.secret_key()).unwrap(),
            ctx,
            keys,
        }
    }

    fn bootstrapper(&self, slots: usize) -> Bootstrapper {
        let params = BootstrapParams::for_context(&self.ctx, slots).unwrap();
        Bootstrapper::new(&self.ctx, params).unwrap()
    }

    /// An evaluator with the relinearization key and exactly the bootstrapper's Galois keys.
    fn evaluator(&self, btp: &Bootstrapper) -> Evaluator {
        let mut r = rng(77);
        Evaluator::new(&self.ctx)
            .with_relin_key(self.keys.relin_key(&mut r).unwrap())
            .unwrap()
            .with_galois_keys(self.keys.bootstrapping_keys(btp, &mut r).unwrap())
            .unwrap()
    }

    /// `z` encrypted at level 1 (`q_0` alone) with the level's default scale.
    fn encrypt_low(&self, z: &[Complex64], slots: usize) -> Ciphertext {
        let pt = self.ctx.encode(z, slots, 1).unwrap();
        self.enc.encrypt_plaintext(&pt, &mut rng(5)).unwrap()
    }
}

/// The largest error of a real or imaginary part.
fn max_error(want: &[Complex64], got: &[Complex64]) -> f64 {
    want.iter()
        .zip(got)
        .map(|(a, b)| (a.re - b.re).abs().max((a.im - b.im).abs()))
        .fold(0.0, f64::max)
}

/// Bootstraps `ct` and checks the result against the input's decryption and the bound; returns it.
fn check(
    s: &Setup,
    eval: &Evaluator,
    btp: &Bootstrapper,
    ct: &Ciphertext,
    label: &str,
) -> Ciphertext {
    let want = s.dec.decrypt(ct).unwrap();
    let out = eval.bootstrap(ct, btp).unwrap();
    assert_eq!(out.level(), btp.output_level(), "{label}");
    assert_eq!(out.slots(), ct.slots(), "{label}");
    let scale = btp.output_scale().unwrap();
    assert!((out.scale() / scale - 1.0).abs() < 1e-12, "{label}");
    let got = s.dec.decrypt(&out).unwrap();
    let err = max_error(&want, &got);
    let bound = btp.error_bound(ct.scale()).unwrap();
    let stats = PrecisionStats::compare(&want, &got).unwrap();
    eprintln!(
        "{label}: error 2^{:.2} (real min {:.1} / median {:.1} bits, imaginary min {:.1} / median {:.1}), \
         bound 2^{:.2} (EvalMod 2^{:.1}, C2S noise 2^{:.1}, EvalMod noise 2^{:.1}, S2C noise 2^{:.1}), \
         {} levels left",
        err.log2(),
        stats.real.min,
        stats.real.median,
        stats.imag.min,
        stats.imag.median,
        bound.total.log2(),
        bound.eval_mod.log2(),
        bound.c2s_noise.log2(),
        bound.eval_mod_noise.log2(),
        bound.s2c_noise.log2(),
        btp.levels_left()
    );
    assert!(err <= bound.total, "{label}: {err:e} > {:e}", bound.total);
    out
}

#[test]
fn full_slots_real_and_complex() {
    let s = Setup::new(1);
    let slots = s.ctx.max_slots();
    let btp = s.bootstrapper(slots);
    assert!(!btp.is_sparse());
    assert_eq!(btp.depth(), LEVELS - 2);
    assert_eq!(btp.levels_left(), 2);
    // Full slots: no trace.
    assert!(btp.trace_elements().is_empty());
    let eval = s.evaluator(&btp);
    let real = s.encrypt_low(&c(&values(slots, 3)), slots);
    check(&s, &eval, &btp, &real, "full slots, real");
    let complex = s.encrypt_low(&complex_values(slots, 4), slots);
    check(&s, &eval, &btp, &complex, "full slots, complex");
}

#[test]
fn sparse_slots_real_and_complex() {
    let s = Setup::new(2);
    // N/4 (the paired matrices on N/2 slots) and a small count (six trace steps).
    for slots in [s.ctx.max_slots() / 2, 16] {
        let btp = s.bootstrapper(slots);
        assert!(btp.is_sparse());
        let g = s.ctx.max_slots() / slots;
        assert_eq!(btp.trace_elements().len(), g.trailing_zeros() as usize);
        let eval = s.evaluator(&btp);
        let real = s.encrypt_low(&c(&values(slots, 5)), slots);
        check(&s, &eval, &btp, &real, &format!("{slots} slots, real"));
        let complex = s.encrypt_low(&complex_values(slots, 6), slots);
        check(
            &s,
            &eval,
            &btp,
            &complex,
            &format!("{slots} slots, complex"),
        );
    }
}

/// Ten bootstraps, each followed by `x -> 2 x^2 - 1` (a product, one level; the values stay in
/// `[-1, 1]`): every bootstrap stays within its bound, from inputs at a level above 1 too.
#[test]
fn ten_bootstraps_with_a_product_between_each() {
    let s = Setup::new(3);
    let slots = 64;
    let btp = s.bootstrapper(slots);
    let eval = s.evaluator(&btp);
    // Real values: 2 x^2 - 1 keeps them in [-1, 1] (complex ones would leave EvalMod's range).
    let mut x = s.encrypt_low(&c(&values(slots, 7)), slots);
    for i in 0..10 {
        let b = check(&s, &eval, &btp, &x, &format!("bootstrap {i}"));
        let sq = eval.multiply_rescale(&b, &b).unwrap();
        x = eval
            .add_real(&eval.multiply_int(&sq, 2).unwrap(), -1.0)
            .unwrap();
        assert_eq!(x.level(), btp.output_level() - 1);
    }
}

#[test]
fn errors_for_keys_slots_contexts_levels_and_scales() {
    let s = Setup::new(4);
    let slots = 16;
    let btp = s.bootstrapper(slots);
    let ct = s.encrypt_low(&c(&values(slots, 8)), slots);
    let mut r = rng(9);
    let relin = s.keys.relin_key(&mut r).unwrap();

    // Without Galois keys at all, and without the relinearization key.
    let bare = Evaluator::new(&s.ctx)
        .with_relin_key(relin.clone())
        .unwrap();
    assert!(matches!(
        bare.bootstrap(&ct, &btp),
        Err(Error::MissingKey { .. })
    ));
    let no_relin = Evaluator::new(&s.ctx)
        .with_galois_keys(s.keys.bootstrapping_keys(&btp, &mut r).unwrap())
        .unwrap();
    assert!(matches!(
        no_relin.bootstrap(&ct, &btp),
        Err(Error::MissingKey { .. })
    ));

    // One rotation key missing: the error names its element and step. (The trace's elements are
    // rotations too, `2N/2^i + 1 = 5^k`: the dropped step is one that is not among them.)
    let steps = btp.rotation_steps();
    let trace = btp.trace_elements();
    let group = s.ctx.galois_group();
    let dropped = steps
        .iter()
        .find(|&&k| !trace.contains(&group.element_of_step(k).value()))
        .unwrap();
    let rest: Vec<i64> = steps.iter().copied().filter(|k| k != dropped).collect();
    let gk = s
        .keys
        .galois_keys_with_elements(&rest, true, &trace, &mut r)
        .unwrap();
    let partial = Evaluator::new(&s.ctx)
        .with_relin_key(relin.clone())
        .unwrap()
        .with_galois_keys(gk)
        .unwrap();
    let element = group.element_of_step(*dropped).value();
    match partial.bootstrap(&ct, &btp) {
        Err(Error::Core(rnsfhe_core::Error::MissingGaloisKey {
            element: e, step, ..
        })) => {
            assert_eq!(e, element);
            assert_eq!(step, Some(*dropped));
        }
        other => panic!("expected a missing Galois key, got {other:?}"),
    }
    // The conjugation key missing.
    let gk = s
        .keys
        .galois_keys_with_elements(&steps, false, &btp.trace_elements(), &mut r)
        .unwrap();
    let no_conj = Evaluator::new(&s.ctx)
        .with_relin_key(relin.clone())
        .unwrap()
        .with_galois_keys(gk)
        .unwrap();
    let conj = s.ctx.galois_group().conjugation().value();
    assert!(matches!(
        no_conj.bootstrap(&ct, &btp),
        Err(Error::Core(rnsfhe_core::Error::MissingGaloisKey { element, step: None, .. })) if element == conj
    ));
    // Every element galois_elements lists is what bootstrapping_keys makes.
    let full = s.keys.bootstrapping_keys(&btp, &mut r).unwrap();
    let mut made = full.elements();
    made.sort_unstable();
    let listed: Vec<usize> = btp.galois_elements().iter().map(|(e, _)| *e).collect();
    assert_eq!(made, listed);
    let eval = Evaluator::new(&s.ctx)
        .with_relin_key(relin)
        .unwrap()
        .with_galois_keys(full)
        .unwrap();

    // Unsupported slot counts, and a ciphertext of another slot count.
    for bad in [0usize, 48, 2 * s.ctx.max_slots()] {
        assert!(
            matches!(
                BootstrapParams::for_context(&s.ctx, bad),
                Err(Error::InvalidSlots { .. })
            ),
            "{bad}"
        );
        let params = BootstrapParams {
            slots: bad,
            ..BootstrapParams::for_context(&s.ctx, slots).unwrap()
        };
        assert!(matches!(
            Bootstrapper::new(&s.ctx, params),
            Err(Error::InvalidSlots { .. })
        ));
    }
    let other_slots = s.encrypt_low(&c(&values(32, 8)), 32);
    assert!(matches!(
        eval.bootstrap(&other_slots, &btp),
        Err(Error::SlotsMismatch {
            left: 32,
            right: 16,
            ..
        })
    ));

    // A ciphertext of another context, and a bootstrapper of another context.
    let other = context(LEVELS + 1);
    let other_keys = KeyGenerator::new(&other, &mut rng(10)).unwrap();
    let other_enc = CkksEncryptor::with_secret_key(&other, other_keys.secret_key()).unwrap();
    let foreign = other_enc
        .encrypt_plaintext(
            &other.encode(&c(&values(slots, 8)), slots, 1).unwrap(),
            &mut rng(11),
        )
        .unwrap();
    assert!(matches!(
        eval.bootstrap(&foreign, &btp),
        Err(Error::ContextMismatch { .. })
    ));
    let other_btp =
        Bootstrapper::new(&other, BootstrapParams::for_context(&other, slots).unwrap()).unwrap();
    assert!(matches!(
        eval.bootstrap(&ct, &other_btp),
        Err(Error::ContextMismatch { .. })
    ));
    assert!(matches!(
        s.keys.bootstrapping_keys(&other_btp, &mut rng(12)),
        Err(Error::ContextMismatch { .. })
    ));

    // A chain too short: the error says how many levels the circuit needs.
    let short = context(12);
    let params = BootstrapParams::for_context(&short, slots).unwrap();
    match Bootstrapper::new(&short, params) {
        Err(e @ Error::BootstrapTooDeep { .. }) => {
            let Error::BootstrapTooDeep {
                needed, available, ..
            } = e
            else {
                unreachable!()
            };
            assert_eq!(needed, LEVELS - 2 + 1);
            assert_eq!(available, 13);
            assert!(
                e.to_string().contains(&format!("needs {needed} levels")),
                "{e}"
            );
        }
        other => panic!("expected BootstrapTooDeep, got {other:?}"),
    }
    // EvalMod with a start level, DFT levels out of range.
    let base = BootstrapParams::for_context(&s.ctx, slots).unwrap();
    let mut with_start = base;
    with_start.eval_mod.start_level = Some(10);
    assert!(matches!(
        Bootstrapper::new(&s.ctx, with_start),
        Err(Error::InvalidEvalMod { .. })
    ));
    for (c2s_levels, s2c_levels) in [(0, 3), (3, 5)] {
        let p = BootstrapParams {
            c2s_levels,
            s2c_levels,
            ..base
        };
        assert!(matches!(
            Bootstrapper::new(&s.ctx, p),
            Err(Error::InvalidArgument { .. })
        ));
    }

    // A scale too large for the EvalMod range (q_0 / Delta below 2^log_message_ratio).
    let big = s
        .ctx
        .encode_at_scale(&c(&values(slots, 8)), slots, 1, btp.max_input_scale() * 4.0)
        .unwrap();
    let big = s.enc.encrypt_plaintext(&big, &mut rng(13)).unwrap();
    assert!(matches!(
        eval.bootstrap(&big, &btp),
        Err(Error::InvalidArgument { .. })
    ));
    assert!(btp.error_bound(btp.max_input_scale() * 4.0).is_err());
}

/// The test chain at `N = 2^15` (`2^14` slots, full): one bootstrapping within its bound, with the time,
/// the precision, the levels left and the key sizes printed. About 4.5 GB of Galois keys and a minute
/// of key generation on one core, so it runs only on request:
/// `cargo test --release -p rnsfhe-ckks --test bootstrap -- --ignored --nocapture`.
#[test]
#[ignore = "N = 2^15: gigabytes of keys; run with --ignored"]
fn full_size_n15() {
    use rnsfhe_ckks::{PublicRandomness, Serializable};
    use std::time::Instant;
    let ctx = CkksContext::new(CkksParams {
        log_n: 15,
        ..context(LEVELS).params().clone()
    })
    .unwrap();
    let slots = ctx.max_slots();
    let mut r = rng(21);
    let keys = KeyGenerator::new(&ctx, &mut r).unwrap();
    let btp = Bootstrapper::new(&ctx, BootstrapParams::for_context(&ctx, slots).unwrap()).unwrap();
    let start = Instant::now();
    let relin = keys.relin_key(&mut r).unwrap();
    let galois = keys.bootstrapping_keys(&btp, &mut r).unwrap();
    let keygen = start.elapsed();
    let key_bytes = galois.serialized_size_with(PublicRandomness::Expanded)
        + relin.serialized_size_with(PublicRandomness::Expanded);
    let eval = Evaluator::new(&ctx)
        .with_relin_key(relin)
        .unwrap()
        .with_galois_keys(galois)
        .unwrap();
    let enc = CkksEncryptor::with_secret_key(&ctx, keys.secret_key()).unwrap();
    let dec = CkksDecryptor::new(&ctx, keys.secret_key()).unwrap();
    let z = complex_values(slots, 22);
    let ct = enc
        .encrypt_plaintext(&ctx.encode(&z, slots, 1).unwrap(), &mut rng(23))
        .unwrap();
    let want = dec.decrypt(&ct).unwrap();
    let start = Instant::now();
    let out = eval.bootstrap(&ct, &btp).unwrap();
    let time = start.elapsed();
    let got = dec.decrypt(&out).unwrap();
    let err = max_error(&want, &got);
    let bound = btp.error_bound(ct.scale()).unwrap();
    let stats = PrecisionStats::compare(&want, &got).unwrap();
    eprintln!(
        "N = 2^15, {slots} slots, {} thread(s): bootstrap {:.2} s, key generation {:.1} s, keys {:.2} GB \
         ({} Galois elements); precision real min {:.1} / median {:.1} bits, imaginary min {:.1} / \
         median {:.1}; error 2^{:.2}, bound 2^{:.2}; {} levels left",
        rayon::current_num_threads(),
        time.as_secs_f64(),
        keygen.as_secs_f64(),
        key_bytes as f64 / 1e9,
        btp.galois_elements().len(),
        stats.real.min,
        stats.real.median,
        stats.imag.min,
        stats.imag.median,
        err.log2(),
        bound.total.log2(),
        btp.levels_left()
    );
    assert_eq!(out.level(), btp.output_level());
    assert!(err <= bound.total, "{err:e} > {:e}", bound.total);
}
