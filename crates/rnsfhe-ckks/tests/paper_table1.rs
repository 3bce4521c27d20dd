//! RNS-CKKS at the paper's Table 1 parameters, `L = 10` (`N = 2^15`, `log q = 55`, `log Q_L = 611`):
//! precision of fresh ciphertexts, one Mult&RS, ten successive squarings, rotation and conjugation.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{bits, c, complex_values, rng, values};
use rnsfhe_ckks::{
    CkksContext, CkksDecryptor, CkksEncryptor, Evaluator, KeyGenerator, Preset, SecurityEstimate,
};

#[test]
fn paper_table1_l10_precision() {
    let ctx = CkksContext::new(Preset::PaperTable1L10.params()).unwrap();
    assert_eq!(ctx.n(), 1 << 15);
    assert_eq!(ctx.max_level(), 11);
    assert_eq!(ctx.log_q().ceil() as u32, 611, "Table 1: ceil(log Q_L)");
    assert!(
        ctx.is_insecure(),
        "sparse secret h = 64: no HE Standard level"
    );
    assert_eq!(ctx.security(), SecurityEstimate::Unknown);
    assert!(ctx.security_warning().is_some());
    println!(
        "PaperTable1L10: log2 Q = {:.1}, log2 QP = {:.1}, eta = {}, {}",
        ctx.log_q(),
        ctx.log_qp(),
        ctx.eta(),
        ctx.security()
    );

    let mut r = rng(42);
    let kg = KeyGenerator::new(&ctx, &mut r).unwrap();
    let rk = kg.relin_key(&mut r).unwrap();
    let gk = kg.galois_keys(&[1, 7], true, &mut r).unwrap();
    let pk = kg.public_key(&mut r).unwrap();
    // Secret-key encryption: fresh error sigma per coefficient (the paper's B_enc is for public-key
    // encryption; see the public-key figures below).
    let enc = CkksEncryptor::with_secret_key(&ctx, kg.secret_key()).unwrap();
    let enc_pk = CkksEncryptor::with_public_key(&ctx, &pk).unwrap();
    let dec = CkksDecryptor::new(&ctx, kg.secret_key()).unwrap();
    let eval = Evaluator::new(&ctx)
        .with_relin_key(rk)
        .unwrap()
        .with_galois_keys(gk)
        .unwrap();
    let slots = ctx.max_slots();

    // Fresh.
    let z = complex_values(slots, 1);
    let cz = enc.encrypt(&z, &mut r).unwrap();
    let fresh = bits(&z, &dec.decrypt(&cz).unwrap());
    let cz_pk = enc_pk.encrypt(&z, &mut r).unwrap();
    let fresh_pk = bits(&z, &dec.decrypt(&cz_pk).unwrap());
    println!("fresh: {fresh:.2} bits (secret key), {fresh_pk:.2} bits (public key)");
    assert!(fresh >= 40.0, "fresh {fresh}");
    // Public-key encryption divided by the special prime p_0: SEAL's fresh precision (39.6-39.9 bits
    // at scale 2^55 in our peer runs), against 36 bits for the key over Q.
    assert!(fresh_pk >= 39.5, "fresh public key {fresh_pk}");
    for seed in 10..13 {
        let (v, mut er) = (complex_values(slots, seed), rng(seed as u8));
        let got = dec.decrypt(&enc_pk.encrypt(&v, &mut er).unwrap()).unwrap();
        let b = bits(&v, &got);
        assert!(b >= 39.5, "fresh public key, seed {seed}: {b}");
    }

    // One Mult&RS.
    let w = complex_values(slots, 2);
    let cw = enc.encrypt(&w, &mut r).unwrap();
    let prod = eval.multiply_rescale(&cz, &cw).unwrap();
    let expect: Vec<_> = z.iter().zip(&w).map(|(a, b)| a * b).collect();
    let mr = bits(&expect, &dec.decrypt(&prod).unwrap());
    println!("one Mult&RS: {mr:.2} bits");
    assert!(mr >= 35.0, "mult&rs {mr}");
    let cw_pk = enc_pk.encrypt(&w, &mut r).unwrap();
    let mr_pk = bits(
        &expect,
        &dec.decrypt(&eval.multiply_rescale(&cz_pk, &cw_pk).unwrap())
            .unwrap(),
    );
    println!("one Mult&RS of public-key ciphertexts: {mr_pk:.2} bits");
    assert!(mr_pk >= 39.5, "mult&rs, public key {mr_pk}");

    // Rotation and conjugation: the key switch's ModDown (the paper's fast conversion) adds a rounding
    // error of about k/2 (1 + ||s||) per coefficient, k = 3 special primes: about 2^13 in the slots, so
    // 42 bits at scale 2^55, just below both fresh errors (public-key encryption divides its error by
    // p_0). Each result keeps at least 40 bits and loses at most 4 bits relative to its input.
    for (input, input_bits, what) in [(&cz_pk, fresh_pk, "public-key"), (&cz, fresh, "secret-key")]
    {
        for step in [1i64, 7] {
            let got = dec.decrypt(&eval.rotate(input, step).unwrap()).unwrap();
            let expect: Vec<_> = (0..slots).map(|j| z[(j + step as usize) % slots]).collect();
            let rb = bits(&expect, &got);
            println!("rotate {step} ({what} input): {rb:.2} bits (input {input_bits:.2})");
            assert!(
                rb >= 40.0 && rb >= input_bits - 4.0,
                "rotate {step}: {rb} vs {input_bits}"
            );
        }
        let got = dec.decrypt(&eval.conjugate(input).unwrap()).unwrap();
        let expect: Vec<_> = z.iter().map(|v| v.conj()).collect();
        let cb = bits(&expect, &got);
        println!("conjugate ({what} input): {cb:.2} bits (input {input_bits:.2})");
        assert!(
            cb >= 40.0 && cb >= input_bits - 4.0,
            "conjugate {cb} vs {input_bits}"
        );
    }

    // Ten successive squarings of real inputs in [-1, 1] (all ten levels).
    let x = values(slots, 3);
    let mut cur = enc.encrypt(x.as_slice(), &mut r).unwrap();
    let mut expect = x.clone();
    for k in 1..=10 {
        cur = eval.rescale(&eval.square(&cur).unwrap()).unwrap();
        expect.iter_mut().for_each(|v| *v *= *v);
        let b = bits(&c(&expect), &dec.decrypt(&cur).unwrap());
        println!("after {k} squarings: level {}, {b:.2} bits", cur.level());
    }
    assert_eq!(cur.level(), 1);
    let sq = bits(&c(&expect), &dec.decrypt(&cur).unwrap());
    assert!(sq >= 25.0, "10 squarings {sq}");
}
