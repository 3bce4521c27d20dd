//! Scheme tests: decrypted results equal the plaintext computation exactly (batch and coefficient
//! encodings, t = 65537 and t = 2), the HPS multiplication pipeline against a big-integer reference, the
//! noise budget, and errors on bad inputs.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;

use num_bigint::BigInt;
use num_traits::{One, Signed, ToPrimitive, Zero};
use rand::{Rng, SeedableRng};
use rnsfhe_bfv::{
    BatchEncoder, BfvContext, BfvError, BfvParams, Ciphertext, CoeffEncoder, Decryptor, Encryptor,
    Evaluator, KeyGenerator, Plaintext, PublicKey, RelinKey, SecretKey,
};
use rnsfhe_math::sampling::Csprng;

fn rng(seed: u8) -> Csprng {
    Csprng::insecure_from_seed_for_tests([seed; 32])
}

fn context(
    log_n: u32,
    t: u64,
    q_bits: u32,
    k: usize,
    relin_base_log: Option<u32>,
) -> Arc<BfvContext> {
    let mut p = BfvParams::with_bit_sizes(log_n, t, q_bits, k).unwrap();
    p.relin_base_log = relin_base_log;
    p.allow_insecure = true;
    BfvContext::new(p).unwrap()
}

struct Keys {
    sk: SecretKey,
    pk: PublicKey,
    rk: RelinKey,
}

fn keys(ctx: &Arc<BfvContext>, rng: &mut Csprng) -> Keys {
    let kg = KeyGenerator::new(ctx, rng).unwrap();
    Keys {
        sk: kg.secret_key().clone(),
        pk: kg.public_key(rng).unwrap(),
        rk: kg.relin_key(rng).unwrap(),
    }
}

/// Negacyclic product of two coefficient vectors modulo t (schoolbook).
fn negacyclic_mod(a: &[u64], b: &[u64], t: u64) -> Vec<u64> {
    let n = a.len();
    let t = t as u128;
    let mut out = vec![0u128; n];
    for (i, &x) in a.iter().enumerate() {
        if x == 0 {
            continue;
        }
        for (j, &y) in b.iter().enumerate() {
            let p = x as u128 * y as u128 % t;
            let k = i + j;
            if k < n {
                out[k] += p;
            } else {
                out[k - n] += t - p;
            }
        }
        if i % 64 == 63 {
            out.iter_mut().for_each(|v| *v %= t);
        }
    }
    out.into_iter().map(|v| (v % t) as u64).collect()
}

fn random_values(rng: &mut impl Rng, n: usize, t: u64) -> Vec<u64> {
    (0..n).map(|_| rng.gen_range(0..t)).collect()
}

#[test]
fn batch_encrypt_add_plain_ops_and_depth3_multiplication_t65537() {
    let t = 65537u64;
    let ctx = context(12, t, 55, 4, None);
    let n = ctx.n();
    let mut r = rng(1);
    let k = keys(&ctx, &mut r);
    let enc = BatchEncoder::new(&ctx).unwrap();
    let pk_enc = Encryptor::with_public_key(&ctx, &k.pk).unwrap();
    let sk_enc = Encryptor::with_secret_key(&ctx, &k.sk).unwrap();
    let dec = Decryptor::new(&ctx, &k.sk).unwrap();
    let ev = Evaluator::new(&ctx);
    let mut vr = rand::rngs::StdRng::seed_from_u64(11);
    let xs: Vec<Vec<u64>> = (0..4).map(|_| random_values(&mut vr, n, t)).collect();
    let pts: Vec<Plaintext> = xs.iter().map(|x| enc.encode_u64(x).unwrap()).collect();
    let cts: Vec<Ciphertext> = pts
        .iter()
        .enumerate()
        .map(|(i, p)| {
            if i % 2 == 0 {
                pk_enc.encrypt(p, &mut r).unwrap()
            } else {
                sk_enc.encrypt(p, &mut r).unwrap()
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
    let m01 = ev.multiply(&cts[0], &cts[1], &k.rk).unwrap();
    let m23 = ev.multiply(&cts[2], &cts[3], &k.rk).unwrap();
    budgets.push(dec.noise_budget(&m01).unwrap());
    let e01 = zip(&xs[0], &xs[1], &|a, b| a * b % t);
    let e23 = zip(&xs[2], &xs[3], &|a, b| a * b % t);
    assert_eq!(d(&m01), e01);
    assert_eq!(d(&m23), e23);
    let m = ev.multiply(&m01, &m23, &k.rk).unwrap();
    budgets.push(dec.noise_budget(&m).unwrap());
    let e = zip(&e01, &e23, &|a, b| a * b % t);
    assert_eq!(d(&m), e);
    let sq = ev.multiply(&m, &m, &k.rk).unwrap();
    budgets.push(dec.noise_budget(&sq).unwrap());
    assert_eq!(d(&sq), zip(&e, &e, &|a, b| a * b % t));
    for w in budgets.windows(2) {
        assert!(w[1] < w[0], "budget must decrease: {budgets:?}");
    }
    assert!(*budgets.last().unwrap() > 0.0, "{budgets:?}");
    // Fresh budget: log2(Q) - log2(2 t ||v||) with ||v|| of order sqrt(N) sigma: at least log2(Q) - 40.
    assert!(budgets[0] > ctx.log_q() - 45.0, "{budgets:?}");
    // Unrelinearized product decrypts too (under (1, s, s^2)) and relinearizes to the same value.
    let three = ev.multiply_no_relin(&cts[0], &cts[1]).unwrap();
    assert_eq!(three.part_count(), 3);
    assert_eq!(d(&three), e01);
    assert_eq!(d(&ev.relinearize(&three, &k.rk).unwrap()), e01);
}

#[test]
fn coefficient_encoding_t2_depth3_and_digit_relinearization() {
    for relin in [None, Some(30)] {
        let t = 2u64;
        let ctx = context(12, t, 50, 3, relin);
        let n = ctx.n();
        let mut r = rng(2);
        let k = keys(&ctx, &mut r);
        let enc = CoeffEncoder::new(&ctx);
        let pk_enc = Encryptor::with_public_key(&ctx, &k.pk).unwrap();
        let dec = Decryptor::new(&ctx, &k.sk).unwrap();
        let ev = Evaluator::new(&ctx);
        let mut vr = rand::rngs::StdRng::seed_from_u64(22);
        let xs: Vec<Vec<u64>> = (0..4).map(|_| random_values(&mut vr, n, t)).collect();
        let cts: Vec<Ciphertext> = xs
            .iter()
            .map(|x| pk_enc.encrypt(&enc.encode_u64(x).unwrap(), &mut r).unwrap())
            .collect();
        let d = |c: &Ciphertext| enc.decode_u64(&dec.decrypt(c).unwrap()).unwrap();
        assert_eq!(d(&cts[0]), xs[0]);
        let sum: Vec<u64> = xs[0].iter().zip(&xs[1]).map(|(a, b)| (a + b) % t).collect();
        assert_eq!(d(&ev.add(&cts[0], &cts[1]).unwrap()), sum);
        let m01 = ev.multiply(&cts[0], &cts[1], &k.rk).unwrap();
        let e01 = negacyclic_mod(&xs[0], &xs[1], t);
        assert_eq!(d(&m01), e01, "relin {relin:?}");
        let m012 = ev.multiply(&m01, &cts[2], &k.rk).unwrap();
        let e012 = negacyclic_mod(&e01, &xs[2], t);
        assert_eq!(d(&m012), e012);
        let m0123 = ev.multiply(&m012, &cts[3], &k.rk).unwrap();
        assert_eq!(d(&m0123), negacyclic_mod(&e012, &xs[3], t));
        let b = [
            dec.noise_budget(&cts[0]).unwrap(),
            dec.noise_budget(&m01).unwrap(),
            dec.noise_budget(&m012).unwrap(),
            dec.noise_budget(&m0123).unwrap(),
        ];
        assert!(b.windows(2).all(|w| w[1] < w[0]) && b[3] > 0.0, "{b:?}");
        assert_eq!(ctx.relin_components(), if relin.is_some() { 6 } else { 3 });
    }
}

#[test]
fn coefficient_encoding_t65537_signed_and_plain_multiplication() {
    let t = 65537u64;
    let ctx = context(12, t, 60, 3, None);
    let n = ctx.n();
    let mut r = rng(3);
    let k = keys(&ctx, &mut r);
    let enc = CoeffEncoder::new(&ctx);
    let sk_enc = Encryptor::with_secret_key(&ctx, &k.sk).unwrap();
    let dec = Decryptor::new(&ctx, &k.sk).unwrap();
    let ev = Evaluator::new(&ctx);
    let mut vr = rand::rngs::StdRng::seed_from_u64(33);
    let signed: Vec<i64> = (0..n).map(|_| vr.gen_range(-100..=100)).collect();
    let ct = sk_enc
        .encrypt(&enc.encode_i64(&signed).unwrap(), &mut r)
        .unwrap();
    assert_eq!(enc.decode_i64(&dec.decrypt(&ct).unwrap()).unwrap(), signed);
    let x: Vec<u64> = signed
        .iter()
        .map(|&v| v.rem_euclid(t as i64) as u64)
        .collect();
    let y = random_values(&mut vr, n, t);
    let py = enc.encode_u64(&y).unwrap();
    assert_eq!(
        enc.decode_u64(&dec.decrypt(&ev.multiply_plain(&ct, &py).unwrap()).unwrap())
            .unwrap(),
        negacyclic_mod(&x, &y, t)
    );
    let ct_y = sk_enc.encrypt(&py, &mut r).unwrap();
    let xy = ev.multiply(&ct, &ct_y, &k.rk).unwrap();
    let exy = negacyclic_mod(&x, &y, t);
    assert_eq!(enc.decode_u64(&dec.decrypt(&xy).unwrap()).unwrap(), exy);
    let xyy = ev.multiply(&xy, &ct_y, &k.rk).unwrap();
    assert_eq!(
        enc.decode_u64(&dec.decrypt(&xyy).unwrap()).unwrap(),
        negacyclic_mod(&exy, &y, t)
    );
    assert!(dec.noise_budget(&xyy).unwrap() > 0.0);
}

/// Centered big integers of the coefficients of an RNS polynomial (CRT by the explicit formula).
fn compose(ctx: &BfvContext, limbs: &[Vec<u64>]) -> Vec<BigInt> {
    let qs: Vec<u64> = ctx.params().q_moduli.clone();
    let q: BigInt = qs.iter().map(|&x| BigInt::from(x)).product();
    let n = limbs[0].len();
    (0..n)
        .map(|c| {
            let mut acc = BigInt::zero();
            for (i, &qi) in qs.iter().enumerate() {
                let qi_b = BigInt::from(qi);
                let qstar = &q / &qi_b;
                let inv = qstar.modpow(&(&qi_b - 2u32), &qi_b);
                acc += BigInt::from(limbs[i][c]) * inv * qstar;
            }
            let mut x = acc % &q;
            if &x * 2 > q {
                x -= &q;
            }
            x
        })
        .collect()
}

fn limbs_of(ct: &Ciphertext, part: usize) -> Vec<Vec<u64>> {
    ct.parts()[part].limbs().map(|l| l.to_vec()).collect()
}

#[test]
fn hps_tensor_and_scaling_match_big_integer_reference() {
    // Small N so the exact reference (Section 4.1: c*_l = [round(t/Q c'_l)]_Q with c'_l the integer
    // tensor product) is cheap.
    for (t, q_bits) in [(65537u64, 55u32), (2, 60), (1 << 20, 45)] {
        let ctx = context(5, t, q_bits, 3, None);
        let n = ctx.n();
        let mut r = rng(4);
        let k = keys(&ctx, &mut r);
        let enc = Encryptor::with_public_key(&ctx, &k.pk).unwrap();
        let ce = CoeffEncoder::new(&ctx);
        let mut vr = rand::rngs::StdRng::seed_from_u64(44);
        let a = enc
            .encrypt(
                &ce.encode_u64(&random_values(&mut vr, n, t)).unwrap(),
                &mut r,
            )
            .unwrap();
        let b = enc
            .encrypt(
                &ce.encode_u64(&random_values(&mut vr, n, t)).unwrap(),
                &mut r,
            )
            .unwrap();
        let prod = Evaluator::new(&ctx).multiply_no_relin(&a, &b).unwrap();
        let qs = ctx.params().q_moduli.clone();
        let q: BigInt = qs.iter().map(|&x| BigInt::from(x)).product();
        let (a0, a1) = (
            compose(&ctx, &limbs_of(&a, 0)),
            compose(&ctx, &limbs_of(&a, 1)),
        );
        let (b0, b1) = (
            compose(&ctx, &limbs_of(&b, 0)),
            compose(&ctx, &limbs_of(&b, 1)),
        );
        let conv = |x: &[BigInt], y: &[BigInt]| -> Vec<BigInt> {
            let mut out = vec![BigInt::zero(); n];
            for i in 0..n {
                for j in 0..n {
                    let p = &x[i] * &y[j];
                    if i + j < n {
                        out[i + j] += p;
                    } else {
                        out[i + j - n] -= p;
                    }
                }
            }
            out
        };
        let c0 = conv(&a0, &b0);
        let mut c1 = conv(&a0, &b1);
        for (u, v) in c1.iter_mut().zip(conv(&a1, &b0)) {
            *u += v;
        }
        let c2 = conv(&a1, &b1);
        let two_q = &q * 2;
        for (l, c) in [c0, c1, c2].iter().enumerate() {
            let got = limbs_of(&prod, l);
            for (idx, x) in c.iter().enumerate() {
                // round(t x / Q) = floor((2 t x + Q) / 2Q), floor division for negatives.
                let num = x * (2 * t) + &q;
                let mut y = &num / &two_q;
                if num.is_negative() && &y * &two_q != num {
                    y -= BigInt::one();
                }
                for (i, &qi) in qs.iter().enumerate() {
                    let qi_b = BigInt::from(qi);
                    let expect: BigInt = ((&y % &qi_b) + &qi_b) % &qi_b;
                    assert_eq!(
                        got[i][idx],
                        expect.to_u64().unwrap(),
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
        p.allow_insecure = true;
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
    p.allow_insecure = true;
    p.plaintext_modulus = p.q_moduli[0];
    assert!(matches!(
        BfvContext::new(p),
        Err(BfvError::InvalidPlaintextModulus { .. })
    ));
    // Auxiliary basis too small.
    let mut p = BfvParams::with_bit_sizes(12, 65537, 55, 2).unwrap();
    p.allow_insecure = true;
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
    p.allow_insecure = true;
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
    assert!(Decryptor::new(&c2, &k.sk).is_err());
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
        Decryptor::new(&c, &k.sk).unwrap().decrypt(&ct2),
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
