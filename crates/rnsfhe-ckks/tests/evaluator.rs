//! CKKS evaluator on small parameters (`N = 2^12`, 40-bit scaling primes): arithmetic, levels and scales,
//! rotations, sums, conversion modes, errors.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::sync::Arc;

use common::{bits, c, complex_values, rng, small, values};
use rnsfhe_ckks::{
    BinaryOp, Ciphertext, CkksContext, CkksDecryptor, CkksEncryptor, CkksParams, Complex64,
    ConversionMode, Error, Evaluator, KeyGenerator, KeySet, Operand, RescalingPolicy,
};
use rnsfhe_core::RlweCiphertext;

struct Setup {
    ctx: Arc<CkksContext>,
    keys: KeySet,
    enc: CkksEncryptor,
    dec: CkksDecryptor,
    eval: Evaluator,
}

fn setup(policy: RescalingPolicy, mode: ConversionMode, seed: u8) -> Setup {
    let ctx = CkksContext::new(small(policy, mode)).unwrap();
    let mut r = rng(seed);
    let kg = KeyGenerator::new(&ctx, &mut r).unwrap();
    let mut steps = KeyGenerator::power_of_two_steps(ctx.max_slots());
    steps.extend([3, -1]);
    let keys = kg.generate_all(&steps, true, &mut r).unwrap();
    let enc = CkksEncryptor::with_public_key(&ctx, &keys.public).unwrap();
    let dec = CkksDecryptor::new(&ctx, &keys.secret).unwrap();
    let eval = Evaluator::new(&ctx)
        .with_relin_key(keys.relin.clone())
        .unwrap()
        .with_galois_keys(keys.galois.clone())
        .unwrap();
    Setup {
        ctx,
        keys,
        enc,
        dec,
        eval,
    }
}

/// Thresholds for N = 2^12, scale 2^40 and public-key encryption: the fresh error per coefficient has
/// standard deviation sigma sqrt(2N/3 + 1 + N/... ) ≈ 3.2 * 52 ≈ 2^7.4, about 2^13.4 per slot
/// (sqrt(N) = 64), max over 2^12 slot parts about 2^15.5: about 24 bits at scale 2^40. Every threshold
/// below keeps 3 bits of margin on top of the operation's own loss.
const FRESH_BITS: f64 = 21.0;

#[test]
fn arithmetic_levels_and_scales() {
    for policy in [
        RescalingPolicy::FixedNominalScale,
        RescalingPolicy::ExactScale,
    ] {
        let s = setup(policy, ConversionMode::Fast, 1);
        let mut r = rng(2);
        let slots = s.ctx.max_slots();
        let a = complex_values(slots, 1);
        let b = complex_values(slots, 2);
        let ca = s.enc.encrypt(&a, &mut r).unwrap();
        let cb = s.enc.encrypt(&b, &mut r).unwrap();
        assert_eq!(ca.level(), 4);
        let fresh = bits(&a, &s.dec.decrypt(&ca).unwrap());
        assert!(fresh >= FRESH_BITS, "fresh {fresh}");

        let add: Vec<_> = a.iter().zip(&b).map(|(x, y)| x + y).collect();
        let sub: Vec<_> = a.iter().zip(&b).map(|(x, y)| x - y).collect();
        let mul: Vec<_> = a.iter().zip(&b).map(|(x, y)| x * y).collect();
        let neg: Vec<_> = a.iter().map(|x| -x).collect();
        let got = s.dec.decrypt(&s.eval.add(&ca, &cb).unwrap()).unwrap();
        assert!(bits(&add, &got) >= FRESH_BITS - 1.0);
        let got = s.dec.decrypt(&s.eval.sub(&ca, &cb).unwrap()).unwrap();
        assert!(bits(&sub, &got) >= FRESH_BITS - 1.0);
        let got = s.dec.decrypt(&s.eval.negate(&ca).unwrap()).unwrap();
        assert!(bits(&neg, &got) >= FRESH_BITS);

        let prod = s.eval.multiply_rescale(&ca, &cb).unwrap();
        assert_eq!(prod.level(), 3);
        let expected_scale = ca.scale() * cb.scale() / s.ctx.q_moduli()[3] as f64;
        assert_eq!(prod.scale(), expected_scale);
        if policy == RescalingPolicy::ExactScale {
            let d = (prod.scale() / s.ctx.level_scale(3).unwrap() - 1.0).abs();
            assert!(
                d < 1e-12,
                "exact scale policy: product lands on level scale ({d})"
            );
        }
        let got = s.dec.decrypt(&prod).unwrap();
        let pb = bits(&mul, &got);
        assert!(pb >= FRESH_BITS - 2.0, "mult&rs {pb}");

        // Mixed levels: a (level 4) + a*b (level 3) is aligned automatically.
        let mixed = s.eval.add(&ca, &prod).unwrap();
        assert_eq!(mixed.level(), 3);
        let expect: Vec<_> = a.iter().zip(&mul).map(|(x, y)| x + y).collect();
        let got = s.dec.decrypt(&mixed).unwrap();
        assert!(bits(&expect, &got) >= FRESH_BITS - 3.0);

        // Plaintext operations.
        let pt = s.eval.encode_like(&b, &ca).unwrap();
        let got = s.dec.decrypt(&s.eval.add_plain(&ca, &pt).unwrap()).unwrap();
        assert!(bits(&add, &got) >= FRESH_BITS - 1.0);
        let got = s.dec.decrypt(&s.eval.sub_plain(&ca, &pt).unwrap()).unwrap();
        assert!(bits(&sub, &got) >= FRESH_BITS - 1.0);
        let pm = s
            .eval
            .rescale(&s.eval.multiply_plain(&ca, &pt).unwrap())
            .unwrap();
        assert!(bits(&mul, &s.dec.decrypt(&pm).unwrap()) >= FRESH_BITS - 2.0);

        // Constants: real and complex, add and multiply; integer multiplication without a level.
        let k = Complex64::new(0.75, -0.5);
        let got = s.dec.decrypt(&s.eval.add_const(&ca, k).unwrap()).unwrap();
        let expect: Vec<_> = a.iter().map(|x| x + k).collect();
        assert!(bits(&expect, &got) >= FRESH_BITS);
        let kc = s
            .eval
            .rescale(&s.eval.multiply_const(&ca, k).unwrap())
            .unwrap();
        assert_eq!(
            kc.scale(),
            ca.scale(),
            "constant at q_(l-1): scale restored exactly"
        );
        let expect: Vec<_> = a.iter().map(|x| x * k).collect();
        assert!(bits(&expect, &s.dec.decrypt(&kc).unwrap()) >= FRESH_BITS - 1.0);
        let kr = s
            .eval
            .rescale(&s.eval.multiply_real(&ca, -2.5).unwrap())
            .unwrap();
        let expect: Vec<_> = a.iter().map(|x| x * -2.5).collect();
        assert!(bits(&expect, &s.dec.decrypt(&kr).unwrap()) >= FRESH_BITS - 3.0);
        let ki = s.eval.multiply_int(&ca, 3).unwrap();
        assert_eq!(ki.level(), ca.level());
        let expect: Vec<_> = a.iter().map(|x| x * 3.0).collect();
        assert!(bits(&expect, &s.dec.decrypt(&ki).unwrap()) >= FRESH_BITS - 2.0);

        // Squares down to the last level, then no level left.
        let x = values(slots, 7);
        let cx = s.enc.encrypt(x.as_slice(), &mut r).unwrap();
        let mut cur = cx;
        let mut expect = x.clone();
        for _ in 0..3 {
            cur = s.eval.rescale(&s.eval.square(&cur).unwrap()).unwrap();
            expect.iter_mut().for_each(|v| *v *= *v);
        }
        assert_eq!(cur.level(), 1);
        let got = s.dec.decrypt(&cur).unwrap();
        assert!(bits(&c(&expect), &got) >= FRESH_BITS - 4.0);
        assert!(matches!(
            s.eval.rescale(&cur),
            Err(Error::NotEnoughLevels {
                level: 1,
                needed: 2,
                more: 1,
                ..
            })
        ));
        assert!(matches!(
            s.eval.multiply(&cur, &cur),
            Err(Error::ScaleTooLarge { level: 1, .. })
        ));
    }
}

#[test]
fn scale_alignment_default_and_strict() {
    let s = setup(RescalingPolicy::ExactScale, ConversionMode::Fast, 3);
    let mut r = rng(4);
    let slots = s.ctx.max_slots();
    let a = complex_values(slots, 3);
    let ca = s.enc.encrypt(&a, &mut r).unwrap();
    // A ciphertext at a scale 2^-10 relative off: non-strict adjusts one operand with a level.
    let off = s
        .ctx
        .encode_at_scale(&a, slots, 4, ca.scale() * (1.0 + 1.0 / 1024.0))
        .unwrap();
    let coff = s.enc.encrypt_plaintext(&off, &mut r).unwrap();
    let sum = s.eval.add(&ca, &coff).unwrap();
    assert_eq!(sum.level(), 3);
    let expect: Vec<_> = a.iter().map(|x| x * 2.0).collect();
    assert!(bits(&expect, &s.dec.decrypt(&sum).unwrap()) >= FRESH_BITS - 2.0);
    // Integer ratio: no level used.
    let dbl = s
        .ctx
        .encode_at_scale(&a, slots, 4, ca.scale() * 2.0)
        .unwrap();
    let cdbl = s.enc.encrypt_plaintext(&dbl, &mut r).unwrap();
    let sum = s.eval.add(&ca, &cdbl).unwrap();
    assert_eq!(sum.level(), 4);
    assert!(bits(&expect, &s.dec.decrypt(&sum).unwrap()) >= FRESH_BITS - 2.0);

    // Strict mode: both mismatches are errors naming both operands.
    let strict = Evaluator::strict(&s.ctx)
        .with_relin_key(s.keys.relin.clone())
        .unwrap();
    let err = strict.add(&ca, &coff).unwrap_err();
    let msg = err.to_string();
    assert!(
        matches!(
            err,
            Error::ScaleMismatch {
                left_level: 4,
                right_level: 4,
                ..
            }
        ),
        "{msg}"
    );
    assert!(msg.contains("ciphertext addition") && msg.contains("log2 scale"));
    let low = s.eval.drop_to_level(&ca, 2).unwrap();
    let err = strict.add(&ca, &low).unwrap_err();
    assert!(matches!(
        err,
        Error::LevelMismatch {
            left_level: 4,
            right_level: 2,
            ..
        }
    ));
    assert!(strict.multiply(&ca, &low).is_err());
    assert!(strict.multiply(&ca, &ca).is_ok());
}

#[test]
fn rotations_conjugation_and_sums() {
    let s = setup(RescalingPolicy::ExactScale, ConversionMode::Fast, 5);
    let mut r = rng(6);
    let slots = s.ctx.max_slots();
    let a = complex_values(slots, 5);
    let ca = s.enc.encrypt(&a, &mut r).unwrap();
    let input_bits = bits(&a, &s.dec.decrypt(&ca).unwrap());
    for step in [1i64, 3, -1] {
        let got = s.dec.decrypt(&s.eval.rotate(&ca, step).unwrap()).unwrap();
        let expect: Vec<_> = (0..slots)
            .map(|j| a[(j as i64 + step).rem_euclid(slots as i64) as usize])
            .collect();
        let b = bits(&expect, &got);
        assert!(b >= input_bits - 1.0, "rotate {step}: {b} vs {input_bits}");
    }
    let got = s.dec.decrypt(&s.eval.conjugate(&ca).unwrap()).unwrap();
    let expect: Vec<_> = a.iter().map(|z| z.conj()).collect();
    assert!(bits(&expect, &got) >= input_bits - 1.0);

    // Hoisted rotations agree with plain ones (within noise).
    let hoisted = s.eval.rotate_hoisted(&ca, &[1, 2, 3]).unwrap();
    for (h, step) in hoisted.iter().zip([1usize, 2, 3]) {
        let expect: Vec<_> = (0..slots).map(|j| a[(j + step) % slots]).collect();
        assert!(bits(&expect, &s.dec.decrypt(h).unwrap()) >= input_bits - 1.0);
    }

    // Sum and mean of all slots (RNS-CKKS Section 5.2).
    let x = values(slots, 9);
    let cx = s.enc.encrypt(x.as_slice(), &mut r).unwrap();
    let total: f64 = x.iter().sum();
    let sum = s.eval.sum_slots(&cx).unwrap();
    assert_eq!(sum.level(), cx.level());
    let got = s.dec.decrypt(&sum).unwrap();
    assert!(bits(&c(&vec![total; slots]), &got) >= FRESH_BITS - 12.0);
    let mean = s.eval.mean(&cx).unwrap();
    let got = s.dec.decrypt(&mean).unwrap();
    let m = total / slots as f64;
    assert!(bits(&c(&vec![m; slots]), &got) >= FRESH_BITS - 2.0);
    // Variance: E[x^2] - E[x]^2, two levels.
    let var = s.eval.variance(&cx).unwrap();
    assert_eq!(var.level(), cx.level() - 2);
    let v = x.iter().map(|xi| xi * xi).sum::<f64>() / slots as f64 - m * m;
    let got = s.dec.decrypt(&var).unwrap();
    assert!(bits(&c(&vec![v; slots]), &got) >= FRESH_BITS - 2.0);
    let low = s.eval.drop_to_level(&cx, 2).unwrap();
    assert!(matches!(
        s.eval.variance(&low),
        Err(Error::NotEnoughLevels { needed: 3, .. })
    ));
    // Partial sums of 4.
    let p = s.eval.partial_sums(&cx, 4).unwrap();
    let got = s.dec.decrypt(&p).unwrap();
    let expect: Vec<f64> = (0..slots)
        .map(|j| (0..4).map(|i| x[(j + i) % slots]).sum())
        .collect();
    assert!(bits(&c(&expect), &got) >= FRESH_BITS - 3.0);
}

#[test]
fn conversion_modes_agree_within_noise() {
    let slots = 1 << 11;
    let a = values(slots, 11);
    let b = values(slots, 12);
    let mut outputs = vec![];
    for mode in [
        ConversionMode::Fast,
        ConversionMode::ExactFloat,
        ConversionMode::ExactInteger,
    ] {
        let s = setup(RescalingPolicy::ExactScale, mode, 7);
        let mut r = rng(8);
        let ca = s.enc.encrypt(a.as_slice(), &mut r).unwrap();
        let cb = s.enc.encrypt(b.as_slice(), &mut r).unwrap();
        // (a * b) rescaled, rotated by 3, plus a.
        let p = s.eval.multiply_rescale(&ca, &cb).unwrap();
        let p = s.eval.rotate(&p, 3).unwrap();
        let out = s.dec.decrypt(&s.eval.add(&p, &ca).unwrap()).unwrap();
        let expect: Vec<f64> = (0..slots)
            .map(|j| a[(j + 3) % slots] * b[(j + 3) % slots] + a[j])
            .collect();
        let pb = bits(&c(&expect), &out);
        assert!(pb >= FRESH_BITS - 3.0, "{mode:?}: {pb}");
        outputs.push(out);
    }
    // Same keys (same seed), same encryptions: the modes differ only by key-switching noise.
    for other in &outputs[1..] {
        let d = bits(&outputs[0], other);
        assert!(d >= FRESH_BITS - 3.0, "modes differ by 2^-{d}");
    }
}

/// `multiply_rescale` merges ModDown and rescaling (one division by `P q_{l-1}`, or the separate steps when
/// the conversion mode cannot be built on `{q_{l-1}} ∪ P`): same level and scale as `rescale(multiply)`,
/// same values up to noise, at every level down to 2 and for every mode and policy.
#[test]
fn merged_relinearize_rescale_matches_separate_steps() {
    let slots = 1 << 11;
    let a = values(slots, 21);
    let b = values(slots, 22);
    for policy in [
        RescalingPolicy::FixedNominalScale,
        RescalingPolicy::ExactScale,
    ] {
        for mode in [
            ConversionMode::Fast,
            ConversionMode::ExactFloat,
            ConversionMode::ExactInteger,
        ] {
            let s = setup(policy, mode, 9);
            let mut r = rng(10);
            let mut x = s.enc.encrypt(a.as_slice(), &mut r).unwrap();
            let cb = s.enc.encrypt(b.as_slice(), &mut r).unwrap();
            let mut expect = a.clone();
            while x.level() >= 2 {
                let y = s.eval.drop_to_level(&cb, x.level()).unwrap();
                let merged = s.eval.multiply_rescale(&x, &y).unwrap();
                let separate = s.eval.rescale(&s.eval.multiply(&x, &y).unwrap()).unwrap();
                assert_eq!(merged.level(), separate.level());
                assert_eq!(merged.scale(), separate.scale());
                expect = expect.iter().zip(&b).map(|(u, v)| u * v).collect();
                let got_m = s.dec.decrypt(&merged).unwrap();
                let got_s = s.dec.decrypt(&separate).unwrap();
                let (pm, ps) = (bits(&c(&expect), &got_m), bits(&c(&expect), &got_s));
                assert!(
                    pm >= ps - 1.0 && pm >= FRESH_BITS - 4.0,
                    "{policy:?} {mode:?} level {}: merged {pm:.1} bits, separate {ps:.1}",
                    merged.level()
                );
                x = merged;
            }
            // At level 1 there is nothing to divide by: the rescaling's error.
            assert!(s.eval.multiply_rescale(&x, &x).is_err());
        }
    }
}

#[test]
fn bad_inputs_are_errors() {
    let s = setup(RescalingPolicy::FixedNominalScale, ConversionMode::Fast, 9);
    let mut r = rng(10);
    let slots = s.ctx.max_slots();
    let ca = s.enc.encrypt(values(slots, 1).as_slice(), &mut r).unwrap();

    // Vector longer than the slot count.
    let long = values(slots + 1, 2);
    let err = s.enc.encrypt(long.as_slice(), &mut r).unwrap_err();
    assert!(matches!(err, Error::TooManyValues { .. }), "{err}");

    // Scale too large for the modulus.
    let err = s
        .ctx
        .encode_at_scale(&c(&[1.0]), slots, 1, 2f64.powi(60))
        .unwrap_err();
    assert!(matches!(err, Error::EncodingScaleTooLarge { .. }), "{err}");

    // Missing Galois key: the error names the step.
    let err = s.eval.rotate(&ca, 5).unwrap_err();
    let msg = err.to_string();
    assert!(msg.contains("rotation step 5"), "{msg}");
    let bare = Evaluator::new(&s.ctx);
    assert!(matches!(bare.rotate(&ca, 1), Err(Error::MissingKey { .. })));
    assert!(matches!(
        bare.multiply(&ca, &ca),
        Err(Error::MissingKey { .. })
    ));

    // No level left.
    let low = s.eval.drop_to_level(&ca, 1).unwrap();
    let err = s.eval.rescale(&low).unwrap_err();
    assert!(err.to_string().contains("needs at least level 2"), "{err}");

    // Mismatched parameters between objects.
    let mut other = small(RescalingPolicy::FixedNominalScale, ConversionMode::Fast);
    other.levels = 2;
    other.dnum = 3;
    let ctx2 = CkksContext::new(other).unwrap();
    let eval2 = Evaluator::new(&ctx2);
    assert!(matches!(
        eval2.add(&ca, &ca),
        Err(Error::ContextMismatch { .. })
    ));
    assert!(eval2.with_relin_key(s.keys.relin.clone()).is_err());
    assert!(CkksDecryptor::new(&ctx2, &s.keys.secret).is_err());

    // Slot count mismatch and invalid levels.
    let sparse = s.ctx.encode(&c(&[1.0, 2.0]), 2, 4).unwrap();
    let cs = s.enc.encrypt_plaintext(&sparse, &mut r).unwrap();
    assert!(matches!(
        s.eval.add(&ca, &cs),
        Err(Error::SlotsMismatch { .. })
    ));
    assert!(s.eval.drop_to_level(&ca, 0).is_err());
    assert!(s.eval.drop_to_level(&ca, 5).is_err());
    assert!(s.eval.partial_sums(&ca, 3).is_err());
    assert!(s
        .eval
        .multiply_const(&ca, Complex64::new(f64::NAN, 0.0))
        .is_err());

    // Invalid parameters.
    let mut bad = small(RescalingPolicy::ExactScale, ConversionMode::Fast);
    bad.q0_bits = 30;
    assert!(matches!(
        CkksContext::new(bad),
        Err(Error::InvalidParams {
            what: "q0_bits",
            ..
        })
    ));
    let mut bad = small(RescalingPolicy::ExactScale, ConversionMode::ExactInteger);
    bad.dnum = 2;
    assert!(matches!(
        CkksContext::new(bad),
        Err(Error::InvalidParams {
            what: "q0_bits",
            ..
        })
    ));
}

#[test]
fn sparse_slots_roundtrip() {
    let s = setup(RescalingPolicy::ExactScale, ConversionMode::Fast, 11);
    let mut r = rng(12);
    let a = complex_values(8, 4);
    let pt = s.ctx.encode(&a, 8, s.ctx.max_level()).unwrap();
    let ct = s.enc.encrypt_plaintext(&pt, &mut r).unwrap();
    let rot = s.eval.rotate(&ct, 1).unwrap();
    let got = s.dec.decrypt(&rot).unwrap();
    let expect: Vec<_> = (0..8).map(|j| a[(j + 1) % 8]).collect();
    assert!(bits(&expect, &got) >= FRESH_BITS);
}

#[test]
fn constant_and_vector_products_land_on_the_default_scales() {
    for policy in [
        RescalingPolicy::FixedNominalScale,
        RescalingPolicy::ExactScale,
    ] {
        let s = setup(policy, ConversionMode::Fast, 41);
        let slots = s.ctx.max_slots();
        let x = values(slots, 41);
        let w = values(slots, 42);
        let ct = s.enc.encrypt(&x[..], &mut rng(43)).unwrap();
        let by_const = s
            .eval
            .rescale(&s.eval.multiply_real(&ct, 0.75).unwrap())
            .unwrap();
        let by_vector = s
            .eval
            .rescale(&s.eval.multiply_values(&ct, &c(&w)).unwrap())
            .unwrap();
        for r in [&by_const, &by_vector] {
            let default = s.ctx.level_scale(r.level()).unwrap();
            assert!(
                (r.scale() / default - 1.0).abs() < 1e-9,
                "{policy:?}: scale 2^{} is off the level's default 2^{}",
                r.log2_scale(),
                default.log2()
            );
        }
        // Both now add in the strict evaluator, which refuses any scale or level correction.
        let strict = Evaluator::strict(&s.ctx);
        let sum = strict.add(&by_const, &by_vector).unwrap();
        let expected: Vec<f64> = x.iter().zip(&w).map(|(a, b)| 0.75 * a + a * b).collect();
        assert!(bits(&c(&expected), &s.dec.decrypt(&sum).unwrap()) >= FRESH_BITS - 2.0);
    }
}

#[test]
fn checked_constructor_rebuilds_and_refuses() {
    let s = setup(RescalingPolicy::ExactScale, ConversionMode::Fast, 9);
    let mut r = rng(10);
    let a = complex_values(8, 3);
    let ct = s.enc.encrypt(&a, &mut r).unwrap();
    let ct = s.eval.drop_to_level(&ct, 3).unwrap();
    let rebuilt = Ciphertext::new(&s.ctx, ct.inner().clone(), ct.scale(), ct.slots()).unwrap();
    assert_eq!(rebuilt, ct);

    // Scale and slot count are checked.
    for scale in [0.0, -1.0, f64::NAN, f64::INFINITY] {
        let err = Ciphertext::new(&s.ctx, ct.inner().clone(), scale, ct.slots()).unwrap_err();
        assert!(matches!(err, Error::InvalidScale { .. }), "{err}");
    }
    for slots in [0, 3, s.ctx.max_slots() * 2] {
        let err = Ciphertext::new(&s.ctx, ct.inner().clone(), ct.scale(), slots).unwrap_err();
        assert!(matches!(err, Error::InvalidSlots { .. }), "{err}");
    }
    // One part is no CKKS ciphertext.
    let one = RlweCiphertext::new(vec![ct.inner().parts[0].clone()]).unwrap();
    let err = Ciphertext::new(&s.ctx, one, ct.scale(), ct.slots()).unwrap_err();
    assert!(err.to_string().contains("2 parts"), "{err}");
    // Parts over another context's moduli.
    let other = CkksContext::new(CkksParams {
        q0_bits: 55,
        ..small(RescalingPolicy::ExactScale, ConversionMode::Fast)
    })
    .unwrap();
    let err = Ciphertext::new(&other, ct.inner().clone(), ct.scale(), ct.slots()).unwrap_err();
    assert!(matches!(err, Error::Ring(_)), "{err}");
    // A level beyond the chain of a shorter context.
    let short = CkksContext::new(CkksParams {
        levels: 1,
        dnum: 2,
        ..small(RescalingPolicy::ExactScale, ConversionMode::Fast)
    })
    .unwrap();
    let err = Ciphertext::new(&short, ct.inner().clone(), ct.scale(), ct.slots()).unwrap_err();
    assert!(
        err.to_string().contains("level 3 is outside [1, 2]"),
        "{err}"
    );
}

/// [`Evaluator::apply`] as the Python operators: products rescaled under automatic rescaling (integers
/// exact), constants, values and plaintexts on either side; sparse rotations reuse the keys of an
/// equivalent step; [`Evaluator::dot`].
#[test]
fn operators_rescale_automatically_and_sparse_rotations_reuse_keys() {
    let s = setup(RescalingPolicy::ExactScale, ConversionMode::Fast, 11);
    let mut r = rng(12);
    let ev = s.eval.clone().with_auto_rescale(true);
    assert!(ev.auto_rescale() && !s.eval.auto_rescale());
    let slots = 8;
    let top = s.ctx.max_level();
    let a = complex_values(slots, 7);
    let b = complex_values(slots, 8);
    let pa = s.ctx.encode(&a, slots, top).unwrap();
    let pb = s.ctx.encode(&b, slots, top).unwrap();
    let ca = s.enc.encrypt_plaintext(&pa, &mut r).unwrap();
    let cb = s.enc.encrypt_plaintext(&pb, &mut r).unwrap();
    let check = |ct: &Ciphertext, want: Vec<Complex64>, level: usize| {
        assert_eq!(ct.level(), level);
        let got = s.dec.decrypt(ct).unwrap();
        let b = bits(&want, &got);
        assert!(b >= FRESH_BITS - 4.0, "{b} bits");
    };
    let zip = |f: fn(Complex64, Complex64) -> Complex64| -> Vec<Complex64> {
        a.iter().zip(&b).map(|(&x, &y)| f(x, y)).collect()
    };

    let product = ev
        .apply(&ca, BinaryOp::Mul, Operand::Ciphertext(&cb))
        .unwrap();
    check(&product, zip(|x, y| x * y), top - 1);
    let kept = s
        .eval
        .apply(&ca, BinaryOp::Mul, Operand::Ciphertext(&cb))
        .unwrap();
    assert_eq!(kept.level(), top);
    let tripled = ev.apply(&ca, BinaryOp::Mul, Operand::Int(3)).unwrap();
    check(&tripled, a.iter().map(|x| x * 3.0).collect(), top);
    let two = Complex64::new(2.0, 0.5);
    let reversed = ev
        .apply(&ca, BinaryOp::ReverseSub, Operand::Constant(two))
        .unwrap();
    check(&reversed, a.iter().map(|x| two - x).collect(), top);
    let scaled = ev
        .apply(&ca, BinaryOp::Mul, Operand::Constant(two))
        .unwrap();
    check(&scaled, a.iter().map(|x| x * two).collect(), top - 1);
    let values = ev.apply(&ca, BinaryOp::Mul, Operand::Values(&b)).unwrap();
    check(&values, zip(|x, y| x * y), top - 1);
    let minus = ev.apply(&ca, BinaryOp::Sub, Operand::Values(&b)).unwrap();
    check(&minus, zip(|x, y| x - y), top);
    let plain = ev
        .apply(&ca, BinaryOp::ReverseSub, Operand::Plaintext(&pb))
        .unwrap();
    check(&plain, zip(|x, y| y - x), top);
    let plain = ev
        .apply(&ca, BinaryOp::Mul, Operand::Plaintext(&pb))
        .unwrap();
    check(&plain, zip(|x, y| x * y), top - 1);

    // The inner product in every slot, with values or a ciphertext.
    let total: Complex64 = zip(|x, y| x * y).iter().sum();
    let dot = ev.dot(&ca, Operand::Values(&b)).unwrap();
    let got = s.dec.decrypt(&dot).unwrap();
    assert!(bits(&vec![total; slots], &got) >= FRESH_BITS - 8.0);
    assert!(matches!(
        ev.dot(&ca, Operand::Int(2)),
        Err(Error::InvalidArgument { .. })
    ));

    // Keys exist for 1, 2, 4, ..., 3 and -1: on 8 slots, 7 is -1, 11 is 3, 9 is 1, 8 is the identity.
    for step in [7i64, 11, 9, 8, -8] {
        let got = s.dec.decrypt(&ev.rotate(&ca, step).unwrap()).unwrap();
        let want: Vec<_> = (0..slots)
            .map(|j| a[(j as i64 + step).rem_euclid(slots as i64) as usize])
            .collect();
        assert!(bits(&want, &got) >= FRESH_BITS - 1.0, "step {step}");
        let hoisted = ev.rotate_hoisted(&ca, &[step]).unwrap();
        let got = s.dec.decrypt(&hoisted[0]).unwrap();
        assert!(bits(&want, &got) >= FRESH_BITS - 1.0, "hoisted step {step}");
    }
    // -3 is 5 modulo 8: no key for any equivalent step, and the error names the step asked for.
    let err = ev.rotate(&ca, -3).unwrap_err();
    assert!(err.to_string().contains("step -3"), "{err}");
}
