//! Galois automorphisms: row rotations and the column swap of the batching matrix (Galois elements
//! `3^r mod 2N` and `2N - 1`, SEAL's convention), arbitrary automorphisms `X -> X^g` on
//! coefficient-encoded plaintexts, and their errors. The key switching is the HPS CRT key switching of
//! relinearization (Sections 3.3 and 4.5), with plain CRT and with base-2^30 digits.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use rand::SeedableRng;
use rnsfhe_bfv::{
    galois_elements, BatchEncoder, BfvError, Ciphertext, CoeffEncoder, Decryptor, Encryptor,
    Evaluator, GaloisElement, KeyGenerator,
};

use common::{automorphism_plain, context, random_values, rng, Setup};

/// Both rows of the `2 x N/2` slot matrix rotated cyclically left by `step` (right when negative).
fn rotate_rows_plain(x: &[u64], step: i64) -> Vec<u64> {
    let h = x.len() / 2;
    let r = step.rem_euclid(h as i64) as usize;
    let mut out = vec![0u64; x.len()];
    for j in 0..h {
        out[j] = x[(j + r) % h];
        out[h + j] = x[h + (j + r) % h];
    }
    out
}

#[test]
fn row_rotations_and_column_swap_batch_t65537() {
    let t = 65537u64;
    for (relin, seed) in [(None, 1u8), (Some(30), 2)] {
        let mut setup = Setup::new(context(12, t, 55, 3, relin), seed);
        let (ctx, n, ev, dec, rk) = (&setup.ctx, setup.n, &setup.ev, &setup.dec, &setup.keys.rk);
        let h = (n / 2) as i64;
        let steps = [1i64, -1, 2, 7, -100, h - 1, h + 3];
        let gk = setup
            .keys
            .kg
            .galois_keys(&steps, true, &mut setup.r)
            .unwrap();
        // h + 3 and 3 share an element; the identity never gets a key.
        let group = ctx.galois_group();
        let expected: Vec<usize> = galois_elements(group, &steps, true)
            .into_iter()
            .map(usize::from)
            .collect();
        assert_eq!(gk.elements(), expected);
        assert_eq!(gk.len(), steps.len());
        assert!(gk.has_row_step(3) && gk.has_row_step(h) && !gk.has_row_step(5));
        assert!(gk.has_row_step(-100) && gk.has_row_step(-100 + h));
        assert!(gk.contains(group.conjugation().value()) && gk.has_column_swap());
        assert_eq!(group.conjugation().value(), 2 * n - 1);
        assert_eq!(gk.fingerprint(), ctx.fingerprint());
        let encoder = BatchEncoder::new(ctx).unwrap();
        let mut vr = rand::rngs::StdRng::seed_from_u64(seed as u64 + 10);
        let x = random_values(&mut vr, n, t);
        let y = random_values(&mut vr, n, t);
        let mut encrypt = |v: &[u64]| {
            setup
                .pk_enc
                .encrypt(&encoder.encode_u64(v).unwrap(), &mut setup.r)
                .unwrap()
        };
        let ct = encrypt(&x);
        let d = |c: &Ciphertext| encoder.decode_u64(&dec.decrypt(c).unwrap()).unwrap();
        for &s in &steps {
            let rot = ev.rotate_rows(&ct, s, &gk).unwrap();
            assert_eq!(
                d(&rot),
                rotate_rows_plain(&x, s),
                "step {s}, relin {relin:?}"
            );
        }
        // Steps that are multiples of N/2 are the identity and need no key.
        for s in [0, h, -2 * h] {
            let same = ev.rotate_rows(&ct, s, &gk).unwrap();
            assert_eq!(same, ct, "step {s}");
        }
        // Composition: left 1 then left 2 is left 3 (a step with no key of its own).
        let r12 = ev
            .rotate_rows(&ev.rotate_rows(&ct, 1, &gk).unwrap(), 2, &gk)
            .unwrap();
        assert_eq!(d(&r12), rotate_rows_plain(&x, 3));
        // Rotations by r and -r cancel.
        let back = ev
            .rotate_rows(&ev.rotate_rows(&ct, 1, &gk).unwrap(), -1, &gk)
            .unwrap();
        assert_eq!(d(&back), x);
        // Column swap, and swapping twice.
        let sw = ev.rotate_columns(&ct, &gk).unwrap();
        let hu = h as usize;
        assert_eq!(&d(&sw)[..hu], &x[hu..]);
        assert_eq!(&d(&sw)[hu..], &x[..hu]);
        assert_eq!(d(&ev.rotate_columns(&sw, &gk).unwrap()), x);
        // apply_galois with the row element is rotate_rows.
        let g7 = group.element_of_step(7);
        assert_eq!(
            d(&ev.apply_galois(&ct, g7, &gk).unwrap()),
            rotate_rows_plain(&x, 7)
        );
        // Rotations commute with slot-wise multiplication: rot(x y) = rot(x) rot(y), after relinearization.
        let cy = encrypt(&y);
        let xy = ev.multiply(&ct, &cy, rk).unwrap();
        let rot_xy = ev.rotate_rows(&xy, -100, &gk).unwrap();
        let xy_plain: Vec<u64> = x.iter().zip(&y).map(|(a, b)| a * b % t).collect();
        assert_eq!(d(&rot_xy), rotate_rows_plain(&xy_plain, -100));
        let prod_rot = ev
            .multiply(
                &ev.rotate_rows(&ct, -100, &gk).unwrap(),
                &ev.rotate_rows(&cy, -100, &gk).unwrap(),
                rk,
            )
            .unwrap();
        assert_eq!(d(&prod_rot), d(&rot_xy));
        // A rotation adds the key-switching term of relinearization (HPS Eq. (13)): it lowers the budget
        // of a fresh ciphertext, but costs less than a bit on a product, whose noise already holds it.
        let (b_ct, b_rot) = (
            dec.noise_budget(&ct).unwrap(),
            dec.noise_budget(&ev.rotate_rows(&ct, 1, &gk).unwrap())
                .unwrap(),
        );
        let (b_xy, b_rot_xy) = (
            dec.noise_budget(&xy).unwrap(),
            dec.noise_budget(&rot_xy).unwrap(),
        );
        assert!(b_rot > 0.0 && b_rot <= b_ct, "{b_ct} -> {b_rot}");
        assert!(
            b_rot_xy > b_xy - 1.0,
            "rotating a product must cost < 1 bit: {b_xy} -> {b_rot_xy}"
        );
    }
}

#[test]
fn apply_galois_on_coefficient_encoding() {
    for (t, log_n, q_bits, relin, seed) in [
        (2u64, 11u32, 50u32, Some(30), 3u8),
        (65537, 11, 55, None, 4),
        (1000, 10, 45, Some(20), 5),
    ] {
        let ctx = context(log_n, t, q_bits, 3, relin);
        let n = ctx.n();
        let mut r = rng(seed);
        let kg = KeyGenerator::new(&ctx, &mut r).unwrap();
        // Elements that are no row rotation (5, 2N - 3 = -3, 2N - 1) and row rotations (3, 9), plus the
        // identity (no key made).
        let elements = [1usize, 3, 5, 9, 2 * n - 3, 2 * n - 1, n + 1];
        let elements = elements.map(|g| GaloisElement::new(g, n).unwrap());
        let gk = kg.galois_keys_for_elements(&elements, &mut r).unwrap();
        assert_eq!(gk.len(), elements.len() - 1);
        assert!(!gk.contains(1));
        let encoder = CoeffEncoder::new(&ctx);
        let enc = Encryptor::with_secret_key(&ctx, kg.secret_key()).unwrap();
        let dec = Decryptor::new(&ctx, kg.secret_key()).unwrap();
        let ev = Evaluator::new(&ctx);
        let mut vr = rand::rngs::StdRng::seed_from_u64(seed as u64);
        let m = random_values(&mut vr, n, t);
        let ct = enc
            .encrypt(&encoder.encode_u64(&m).unwrap(), &mut r)
            .unwrap();
        for &g in &elements {
            let out = ev.apply_galois(&ct, g, &gk).unwrap();
            assert_eq!(
                encoder.decode_u64(&dec.decrypt(&out).unwrap()).unwrap(),
                automorphism_plain(&m, g.value(), t),
                "t = {t}, g = {g}"
            );
        }
        // Composition: (m(X^5))(X^(2N-3)) = m(X^(5 (2N-3) mod 2N)).
        let (five, minus_three) = (elements[2], elements[4]);
        let twice = ev
            .apply_galois(&ev.apply_galois(&ct, five, &gk).unwrap(), minus_three, &gk)
            .unwrap();
        assert_eq!(
            encoder.decode_u64(&dec.decrypt(&twice).unwrap()).unwrap(),
            automorphism_plain(&m, 5 * (2 * n - 3) % (2 * n), t)
        );
    }
}

#[test]
fn galois_errors() {
    let ctx = context(11, 65537, 55, 3, None);
    let n = ctx.n();
    let mut r = rng(6);
    let kg = KeyGenerator::new(&ctx, &mut r).unwrap();
    let gk = kg.galois_keys(&[1, 2], false, &mut r).unwrap();
    assert!(!gk.has_column_swap());
    let rk = kg.relin_key(&mut r).unwrap();
    let enc = Encryptor::with_secret_key(&ctx, kg.secret_key()).unwrap();
    let ev = Evaluator::new(&ctx);
    let encoder = BatchEncoder::new(&ctx).unwrap();
    let ct = enc
        .encrypt(&encoder.encode_u64(&[1, 2, 3]).unwrap(), &mut r)
        .unwrap();
    // A missing rotation key names the step and the element.
    let err = ev.rotate_rows(&ct, 7, &gk).unwrap_err();
    let g7 = ctx.galois_group().element_of_step(7).value();
    assert_eq!(
        err,
        BfvError::MissingGaloisKey {
            operation: "row rotation",
            element: g7,
            step: Some(7),
            available: gk.elements(),
        }
    );
    let msg = err.to_string();
    assert!(
        msg.contains("row rotation by step 7") && msg.contains(&g7.to_string()),
        "{msg}"
    );
    let err = ev.rotate_rows(&ct, -3, &gk).unwrap_err();
    assert!(err.to_string().contains("step -3"), "{err}");
    // Missing column swap.
    let err = ev.rotate_columns(&ct, &gk).unwrap_err();
    assert!(
        matches!(err, BfvError::MissingGaloisKey { operation: "column swap", element, step: None, .. } if element == 2 * n - 1),
        "{err:?}"
    );
    assert!(err.to_string().contains("column swap"), "{err}");
    // Missing key for an arbitrary element.
    let five = GaloisElement::new(5, n).unwrap();
    assert!(matches!(
        ev.apply_galois(&ct, five, &gk),
        Err(BfvError::MissingGaloisKey {
            element: 5,
            step: None,
            ..
        })
    ));
    // Invalid elements are refused when made; elements of another ring degree in key generation and in
    // evaluation.
    for bad in [0usize, 4, 2 * n, 2 * n + 1] {
        assert!(
            matches!(
                GaloisElement::new(bad, n),
                Err(rnsfhe_ring::Error::InvalidGaloisElement { element, .. }) if element == bad
            ),
            "{bad}"
        );
    }
    let foreign = GaloisElement::new(3, 2 * n).unwrap();
    assert!(matches!(
        ev.apply_galois(&ct, foreign, &gk),
        Err(BfvError::Ring(
            rnsfhe_ring::Error::GaloisDegreeMismatch { .. }
        ))
    ));
    assert!(matches!(
        kg.galois_keys_for_elements(&[five, foreign], &mut r),
        Err(BfvError::Ring(
            rnsfhe_ring::Error::GaloisDegreeMismatch { .. }
        ))
    ));
    // Three-part ciphertexts must be relinearized first.
    let three = ev.multiply_no_relin(&ct, &ct).unwrap();
    assert!(matches!(
        ev.rotate_rows(&three, 1, &gk),
        Err(BfvError::WrongPartCount {
            expected: 2,
            got: 3,
            ..
        })
    ));
    assert!(ev
        .rotate_rows(&ev.relinearize(&three, &rk).unwrap(), 1, &gk)
        .is_ok());
    // Keys of another context (same N and t, other decomposition), and a ciphertext of another context.
    let other = context(11, 65537, 55, 3, Some(30));
    let kg2 = KeyGenerator::new(&other, &mut r).unwrap();
    let gk2 = kg2.galois_keys(&[1], true, &mut r).unwrap();
    assert!(matches!(
        ev.rotate_rows(&ct, 1, &gk2),
        Err(BfvError::ContextMismatch {
            object: "Galois keys",
            ..
        })
    ));
    let ct2 = Encryptor::with_secret_key(&other, kg2.secret_key())
        .unwrap()
        .encrypt(
            &BatchEncoder::new(&other).unwrap().encode_u64(&[1]).unwrap(),
            &mut r,
        )
        .unwrap();
    assert!(matches!(
        ev.rotate_rows(&ct2, 1, &gk),
        Err(BfvError::ContextMismatch { .. })
    ));
    // Empty key sets still allow the identity rotations.
    let none = kg.galois_keys(&[], false, &mut r).unwrap();
    assert!(none.is_empty());
    assert_eq!(ev.rotate_rows(&ct, 0, &none).unwrap(), ct);
    let identity = GaloisElement::new(1, n).unwrap();
    assert_eq!(ev.apply_galois(&ct, identity, &none).unwrap(), ct);
}

#[test]
fn ciphertext_from_parts_round_trips_and_checks() {
    let ctx = context(10, 65537, 45, 2, None);
    let mut r = rng(7);
    let kg = KeyGenerator::new(&ctx, &mut r).unwrap();
    let enc = Encryptor::with_secret_key(&ctx, kg.secret_key()).unwrap();
    let pt = CoeffEncoder::new(&ctx).encode_u64(&[5, 6, 7]).unwrap();
    let ct = enc.encrypt(&pt, &mut r).unwrap();
    let rebuilt = Ciphertext::from_parts(&ctx, ct.parts().to_vec()).unwrap();
    assert_eq!(rebuilt, ct);
    let dec = Decryptor::new(&ctx, kg.secret_key()).unwrap();
    assert_eq!(dec.decrypt(&rebuilt).unwrap(), pt);
    assert!(matches!(
        Ciphertext::from_parts(&ctx, ct.parts()[..1].to_vec()),
        Err(BfvError::WrongPartCount {
            expected: 2,
            got: 1,
            ..
        })
    ));
    let four = [ct.parts(), ct.parts()].concat();
    assert!(matches!(
        Ciphertext::from_parts(&ctx, four),
        Err(BfvError::WrongPartCount {
            expected: 3,
            got: 4,
            ..
        })
    ));
    let other = context(10, 65537, 45, 3, None);
    let enc3 = Encryptor::with_secret_key(
        &other,
        KeyGenerator::new(&other, &mut r).unwrap().secret_key(),
    )
    .unwrap();
    let ct3 = enc3.encrypt_zero(&mut r).unwrap();
    assert!(matches!(
        Ciphertext::from_parts(&ctx, ct3.parts().to_vec()),
        Err(BfvError::Ring(_))
    ));
}
