//! Scheme tests: decrypted results equal the plaintext computation exactly (batch and coefficient
//! encodings, t = 65537 and t = 2), the HPS multiplication pipeline against a big-integer reference, the
//! noise budget, and errors on bad inputs.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use rand::{Rng, SeedableRng};
use rnsfhe_bfv::{
    BatchEncoder, BfvContext, BfvError, BfvParams, Ciphertext, CoeffEncoder, Decryptor, Encryptor,
    Evaluator, Plaintext, RelinKey,
};

use common::{
    context, keys, negacyclic_mod, parts_of, random_values, residues, rng, textbook_tensor, Crt,
    Setup,
};

#[test]
fn batch_encrypt_add_plain_ops_and_depth3_multiplication_t65537() {
    let t = 65537u64;
    let mut setup = Setup::new(context(12, t, 55, 4, None), 1);
    let (ev, dec, rk) = (&setup.ev, &setup.dec, &setup.keys.rk);
    let enc = BatchEncoder::new(&setup.ctx).unwrap();
    let mut vr = rand::rngs::StdRng::seed_from_u64(11);
    let xs: Vec<Vec<u64>> = (0..4).map(|_| random_values(&mut vr, setup.n, t)).collect();
    let pts: Vec<Plaintext> = xs.iter().map(|x| enc.encode_u64(x).unwrap()).collect();
    let cts: Vec<Ciphertext> = pts
        .iter()
        .enumerate()
        .map(|(i, p)| {
            if i % 2 == 0 {
                setup.pk_enc.encrypt(p, &mut setup.r).unwrap()
            } else {
                setup.sk_enc.encrypt(p, &mut setup.r).unwrap()
            }
        })
        .collect();
    let d = |c: &Ciphertext| enc.decode_u64(&dec.decrypt(c).unwrap()).unwrap();
    let zip = |a: &[u64], b: &[u64], f: &dyn Fn(u64, u64) -> u64| -> Vec<u64> {
        a.iter().zip(b).map(|(&x, &y)| f(x, y)).collect()
    };
    for (c, x) in cts.iter().zip(&xs) {
        assert_eq!(&d(c), x);
    }
    // Linear operations.
    assert_eq!(
        d(&ev.add(&cts[0], &cts[1]).unwrap()),
        zip(&xs[0], &xs[1], &|a, b| (a + b) % t)
    );
    assert_eq!(
        d(&ev.sub(&cts[0], &cts[1]).unwrap()),
        zip(&xs[0], &xs[1], &|a, b| (a + t - b) % t)
    );
    assert_eq!(
        d(&ev.negate(&cts[2]).unwrap()),
        xs[2].iter().map(|&a| (t - a) % t).collect::<Vec<_>>()
    );
    assert_eq!(
        d(&ev.add_plain(&cts[0], &pts[3]).unwrap()),
        zip(&xs[0], &xs[3], &|a, b| (a + b) % t)
    );
    assert_eq!(
        d(&ev.sub_plain(&cts[0], &pts[3]).unwrap()),
        zip(&xs[0], &xs[3], &|a, b| (a + t - b) % t)
    );
    assert_eq!(
        d(&ev.multiply_plain(&cts[1], &pts[2]).unwrap()),
        zip(&xs[1], &xs[2], &|a, b| a * b % t)
    );
    assert_eq!(
        d(&ev.multiply_scalar(&cts[1], -7).unwrap()),
        xs[1].iter().map(|&a| (a * (t - 7)) % t).collect::<Vec<_>>()
    );
    // Depth 3 binary-tree and chain: ((x0 x1)(x2 x3))^2, noise budget decreasing and positive.
    let mut budgets = vec![dec.noise_budget(&cts[0]).unwrap()];
    let m01 = ev.multiply(&cts[0], &cts[1], rk).unwrap();
    let m23 = ev.multiply(&cts[2], &cts[3], rk).unwrap();
    budgets.push(dec.noise_budget(&m01).unwrap());
    let e01 = zip(&xs[0], &xs[1], &|a, b| a * b % t);
    let e23 = zip(&xs[2], &xs[3], &|a, b| a * b % t);
    assert_eq!(d(&m01), e01);
    assert_eq!(d(&m23), e23);
    let m = ev.multiply(&m01, &m23, rk).unwrap();
    budgets.push(dec.noise_budget(&m).unwrap());
    let e = zip(&e01, &e23, &|a, b| a * b % t);
    assert_eq!(d(&m), e);
    let sq = ev.multiply(&m, &m, rk).unwrap();
    budgets.push(dec.noise_budget(&sq).unwrap());
    assert_eq!(d(&sq), zip(&e, &e, &|a, b| a * b % t));
    for w in budgets.windows(2) {
        assert!(w[1] < w[0], "budget must decrease: {budgets:?}");
    }
    assert!(*budgets.last().unwrap() > 0.0, "{budgets:?}");
    // Fresh budget: log2(Q) - log2(2 t ||v||) with ||v|| of order sqrt(N) sigma: at least log2(Q) - 40.
    assert!(budgets[0] > setup.ctx.log_q() - 45.0, "{budgets:?}");
    // Unrelinearized product decrypts too (under (1, s, s^2)) and relinearizes to the same value.
    let three = ev.multiply_no_relin(&cts[0], &cts[1]).unwrap();
    assert_eq!(three.part_count(), 3);
    assert_eq!(d(&three), e01);
    assert_eq!(d(&ev.relinearize(&three, rk).unwrap()), e01);
}

#[test]
fn coefficient_encoding_t2_depth3_and_digit_relinearization() {
    for relin in [None, Some(30)] {
        let t = 2u64;
        let mut setup = Setup::new(context(12, t, 50, 3, relin), 2);
        let (ev, dec, rk) = (&setup.ev, &setup.dec, &setup.keys.rk);
        let enc = CoeffEncoder::new(&setup.ctx);
        let mut vr = rand::rngs::StdRng::seed_from_u64(22);
        let xs: Vec<Vec<u64>> = (0..4).map(|_| random_values(&mut vr, setup.n, t)).collect();
        let cts: Vec<Ciphertext> = xs
            .iter()
            .map(|x| {
                setup
                    .pk_enc
                    .encrypt(&enc.encode_u64(x).unwrap(), &mut setup.r)
                    .unwrap()
            })
            .collect();
        let d = |c: &Ciphertext| enc.decode_u64(&dec.decrypt(c).unwrap()).unwrap();
        assert_eq!(d(&cts[0]), xs[0]);
        let sum: Vec<u64> = xs[0].iter().zip(&xs[1]).map(|(a, b)| (a + b) % t).collect();
        assert_eq!(d(&ev.add(&cts[0], &cts[1]).unwrap()), sum);
        let m01 = ev.multiply(&cts[0], &cts[1], rk).unwrap();
        let e01 = negacyclic_mod(&xs[0], &xs[1], t);
        assert_eq!(d(&m01), e01, "relin {relin:?}");
        let m012 = ev.multiply(&m01, &cts[2], rk).unwrap();
        let e012 = negacyclic_mod(&e01, &xs[2], t);
        assert_eq!(d(&m012), e012);
        let m0123 = ev.multiply(&m012, &cts[3], rk).unwrap();
        assert_eq!(d(&m0123), negacyclic_mod(&e012, &xs[3], t));
        let b = [
            dec.noise_budget(&cts[0]).unwrap(),
            dec.noise_budget(&m01).unwrap(),
            dec.noise_budget(&m012).unwrap(),
            dec.noise_budget(&m0123).unwrap(),
        ];
        assert!(b.windows(2).all(|w| w[1] < w[0]) && b[3] > 0.0, "{b:?}");
        assert_eq!(
            setup.ctx.relin_components(),
            if relin.is_some() { 6 } else { 3 }
        );
    }
}

#[test]
fn coefficient_encoding_t65537_signed_and_plain_multiplication() {
    let t = 65537u64;
    let mut setup = Setup::new(context(12, t, 60, 3, None), 3);
    let (ev, dec, rk) = (&setup.ev, &setup.dec, &setup.keys.rk);
    let enc = CoeffEncoder::new(&setup.ctx);
    let d = |c: &Ciphertext| enc.decode_u64(&dec.decrypt(c).unwrap()).unwrap();
    let mut vr = rand::rngs::StdRng::seed_from_u64(33);
    let signed: Vec<i64> = (0..setup.n).map(|_| vr.gen_range(-100..=100)).collect();
    let ct = setup
        .sk_enc
        .encrypt(&enc.encode_i64(&signed).unwrap(), &mut setup.r)
        .unwrap();
    assert_eq!(enc.decode_i64(&dec.decrypt(&ct).unwrap()).unwrap(), signed);
    let x: Vec<u64> = signed
        .iter()
        .map(|&v| v.rem_euclid(t as i64) as u64)
        .collect();
    let y = random_values(&mut vr, setup.n, t);
    let py = enc.encode_u64(&y).unwrap();
    assert_eq!(
        d(&ev.multiply_plain(&ct, &py).unwrap()),
        negacyclic_mod(&x, &y, t)
    );
    let ct_y = setup.sk_enc.encrypt(&py, &mut setup.r).unwrap();
    let xy = ev.multiply(&ct, &ct_y, rk).unwrap();
    let exy = negacyclic_mod(&x, &y, t);
    assert_eq!(d(&xy), exy);
    let xyy = ev.multiply(&xy, &ct_y, rk).unwrap();
    assert_eq!(d(&xyy), negacyclic_mod(&exy, &y, t));
    assert!(dec.noise_budget(&xyy).unwrap() > 0.0);
}

#[test]
fn hps_tensor_and_scaling_match_big_integer_reference() {
    // Small N so the exact reference (Section 4.1: c*_l = [round(t/Q c'_l)]_Q with c'_l the integer
    // tensor product) is cheap.
    for (t, q_bits) in [(65537u64, 55u32), (2, 60), (1 << 20, 45)] {
        let mut setup = Setup::new(context(5, t, q_bits, 3, None), 4);
        let ce = CoeffEncoder::new(&setup.ctx);
        let mut vr = rand::rngs::StdRng::seed_from_u64(44);
        let mut fresh = || {
            let m = ce.encode_u64(&random_values(&mut vr, setup.n, t)).unwrap();
            setup.pk_enc.encrypt(&m, &mut setup.r).unwrap()
        };
        let (a, b) = (fresh(), fresh());
        let prod = parts_of(&setup.ev.multiply_no_relin(&a, &b).unwrap());
        let crt = Crt::new(&setup.ctx);
        let reference = textbook_tensor(&crt, t, &parts_of(&a), &parts_of(&b));
        for (l, c) in reference.iter().enumerate() {
            for (idx, y) in c.iter().enumerate() {
                for (i, expect) in residues(y, &crt.qs).into_iter().enumerate() {
                    assert_eq!(
                        prod[l][i][idx], expect,
                        "t = {t}, part {l}, coefficient {idx}, limb {i}"
                    );
                }
            }
        }
    }
}

#[test]
fn errors_for_bad_inputs() {
    // t out of range.
    for t in [0u64, 1, (1 << 60) + 1] {
        let mut p = BfvParams::with_bit_sizes(12, 65537, 55, 2).unwrap();
        p.insecure_for_testing = true;
        p.plaintext_modulus = t;
        assert!(
            matches!(
                BfvContext::new(p),
                Err(BfvError::InvalidPlaintextModulus { .. })
            ),
            "t = {t}"
        );
    }
    // t not below the ciphertext primes.
    let mut p = BfvParams::with_bit_sizes(12, 65537, 30, 2).unwrap();
    p.insecure_for_testing = true;
    p.plaintext_modulus = p.q_moduli[0];
    assert!(matches!(
        BfvContext::new(p),
        Err(BfvError::InvalidPlaintextModulus { .. })
    ));
    // Auxiliary basis too small.
    let mut p = BfvParams::with_bit_sizes(12, 65537, 55, 2).unwrap();
    p.insecure_for_testing = true;
    p.p_moduli.pop();
    assert!(matches!(
        BfvContext::new(p),
        Err(BfvError::AuxiliaryBasisTooSmall { .. })
    ));
    // Insecure without opt-in; secure parameters need none.
    let p = BfvParams::with_bit_sizes(12, 65537, 55, 3).unwrap();
    assert!(matches!(
        BfvContext::new(p),
        Err(BfvError::Insecure { n: 4096, .. })
    ));
    let ok = BfvContext::new(BfvParams::with_bit_sizes(13, 65537, 54, 4).unwrap()).unwrap();
    assert!(ok.is_secure() && ok.security_warning().is_none());
    // Bad relinearization base.
    let mut p = BfvParams::with_bit_sizes(12, 65537, 55, 2).unwrap();
    p.insecure_for_testing = true;
    p.relin_base_log = Some(0);
    assert!(matches!(
        BfvContext::new(p),
        Err(BfvError::InvalidParams {
            what: "relin_base_log",
            ..
        })
    ));
    // Batching unavailable, too many values.
    let c2 = context(12, 2, 50, 3, None);
    assert!(matches!(
        BatchEncoder::new(&c2),
        Err(BfvError::BatchingUnavailable { t: 2, n: 4096, .. })
    ));
    let c = context(12, 65537, 55, 3, None);
    let be = BatchEncoder::new(&c).unwrap();
    assert!(matches!(
        be.encode_u64(&vec![1; 4097]),
        Err(BfvError::TooManyValues {
            got: 4097,
            max: 4096,
            ..
        })
    ));
    assert!(matches!(
        CoeffEncoder::new(&c).encode_i64(&vec![1; 5000]),
        Err(BfvError::TooManyValues { .. })
    ));
    // Mismatched contexts: keys, plaintexts, ciphertexts, relinearization keys.
    let mut r = rng(5);
    let k = keys(&c, &mut r);
    let k2 = keys(&c2, &mut r);
    assert!(Encryptor::with_public_key(&c2, &k.pk).is_err());
    assert!(Decryptor::new(&c2, k.sk()).is_err());
    let enc = Encryptor::with_public_key(&c, &k.pk).unwrap();
    let enc2 = Encryptor::with_public_key(&c2, &k2.pk).unwrap();
    let pt2 = CoeffEncoder::new(&c2).encode_u64(&[1]).unwrap();
    assert!(matches!(
        enc.encrypt(&pt2, &mut r),
        Err(BfvError::ContextMismatch { .. })
    ));
    let ct = enc
        .encrypt(&be.encode_u64(&[1, 2]).unwrap(), &mut r)
        .unwrap();
    let ct2 = enc2.encrypt(&pt2, &mut r).unwrap();
    let ev = Evaluator::new(&c);
    assert!(matches!(
        ev.add(&ct, &ct2),
        Err(BfvError::ContextMismatch { .. })
    ));
    assert!(matches!(
        ev.multiply(&ct, &ct, &k2.rk),
        Err(BfvError::ContextMismatch { .. })
    ));
    assert!(matches!(
        Decryptor::new(&c, k.sk()).unwrap().decrypt(&ct2),
        Err(BfvError::ContextMismatch { .. })
    ));
    // Same N and t but a different relinearization decomposition: another context.
    let c_digits = context(12, 65537, 55, 3, Some(30));
    assert_ne!(c_digits.fingerprint(), c.fingerprint());
    // Wrong part counts.
    let three = ev.multiply_no_relin(&ct, &ct).unwrap();
    assert!(matches!(
        ev.multiply(&three, &ct, &k.rk),
        Err(BfvError::WrongPartCount {
            expected: 2,
            got: 3,
            ..
        })
    ));
    assert!(matches!(
        ev.relinearize(&ct, &k.rk),
        Err(BfvError::WrongPartCount {
            expected: 3,
            got: 2,
            ..
        })
    ));
}

#[test]
fn types_are_send_and_sync() {
    fn check<T: Send + Sync>() {}
    check::<BfvContext>();
    check::<Evaluator>();
    check::<Decryptor>();
    check::<Encryptor>();
    check::<RelinKey>();
    check::<Ciphertext>();
}
