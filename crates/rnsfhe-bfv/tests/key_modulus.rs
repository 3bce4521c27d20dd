//! The security verdict covers every key a context makes: an extended public key (over `Q ∪ {p_0}`) is an
//! RLWE sample modulo `Q p_0`, so it is made, accepted and loaded only where `log2(Q p_0)` is within the HE
//! Standard bound (or under the explicit insecure opt-in, whose verdict then counts `p_0`).

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use rnsfhe_bfv::{BfvContext, BfvError, BfvParams, Encryptor, KeyGenerator, KeySwitchTechnique};
use rnsfhe_core::security::max_log_qp;
use rnsfhe_core::SecurityLevel;
use rnsfhe_math::wire::Serializable;

use common::rng;

#[test]
fn no_extended_public_key_where_q_is_at_the_bound() {
    // Depth 1 at t = 65537: N = 2^12 and log2 Q = 109, the HE Standard bound itself.
    let params = BfvParams::generate(65537, 1).unwrap();
    let bound = max_log_qp(params.n(), SecurityLevel::Bits128).unwrap() as f64;
    let ctx = BfvContext::new(params.clone()).unwrap();
    assert!(ctx.log_q() > bound - 1.0, "log2 Q = {}", ctx.log_q());
    assert!(!ctx.extended_public_key() && !params.extended_public_key());
    assert_eq!(ctx.log_key_modulus(), ctx.log_q());
    assert!(ctx.is_secure());

    let mut rng = rng(1);
    let kg = KeyGenerator::new(&ctx, &mut rng).unwrap();
    let pk = kg.public_key(&mut rng).unwrap();
    assert!(!pk.is_extended(), "a key over Q p_0 would exceed the bound");
    let err = kg.public_key_extended(&mut rng).unwrap_err();
    match &err {
        BfvError::Insecure {
            log_key_modulus, ..
        } => assert!(*log_key_modulus > bound + 50.0, "{err}"),
        other => panic!("expected Insecure, got {other}"),
    }

    // The same Q and P with the insecure opt-in make the extended key (same key fingerprint), and its
    // verdict counts p_0: the secure context refuses that key, from memory and from bytes.
    let opted = BfvContext::new(BfvParams {
        insecure_for_testing: true,
        ..params
    })
    .unwrap();
    assert!(opted.extended_public_key() && !opted.is_secure());
    assert!(opted.log_key_modulus() > ctx.log_q() + 50.0);
    assert!(opted.security_warning().unwrap().contains("key modulus"));
    let okg = KeyGenerator::from_secret_key(&opted, kg.secret_key().clone()).unwrap();
    let extended = okg.public_key(&mut rng).unwrap();
    assert!(extended.is_extended());
    assert!(Encryptor::with_public_key(&opted, &extended).is_ok());
    assert!(matches!(
        Encryptor::with_public_key(&ctx, &extended),
        Err(BfvError::Insecure { .. })
    ));
    let bytes = extended.to_bytes();
    let err = ctx.public_key_from_bytes(&bytes).unwrap_err();
    assert!(err.to_string().contains("insecure"), "{err}");
    assert!(opted.public_key_from_bytes(&bytes).is_ok());
    assert!(ctx.public_key_from_bytes(&pk.to_bytes()).is_ok());
}

#[test]
fn extended_public_key_where_the_bound_leaves_room() {
    // Depth 20 with CRT key switching: N = 2^15, log2 Q = 770 of 881 bits: room for the 56-bit p_0 (at
    // depths 1 to 10 there is none: log2 Q is within 56 bits of the bound).
    let crt = BfvParams::generate_with_rotations(65537, 20, 1).unwrap();
    let ctx = BfvContext::new(crt.clone()).unwrap();
    assert_eq!(ctx.key_switching(), &KeySwitchTechnique::Crt);
    assert!(ctx.extended_public_key() && ctx.is_secure());
    let p0 = (ctx.params().p_moduli[0] as f64).log2();
    assert!((ctx.log_key_modulus() - ctx.log_q() - p0).abs() < 1e-9);
    let mut rng = rng(2);
    let kg = KeyGenerator::new(&ctx, &mut rng).unwrap();
    assert!(kg.public_key(&mut rng).unwrap().is_extended());
    assert!(kg.public_key_extended(&mut rng).unwrap().is_extended());

    // With hybrid key switching the keys live over Q and the special primes, all counted; the public key
    // takes the first special prime.
    let hybrid = BfvContext::new(crt.with_hybrid_key_switching().unwrap()).unwrap();
    let KeySwitchTechnique::Hybrid { special_moduli, .. } = hybrid.key_switching() else {
        panic!("hybrid expected");
    };
    let log_p: f64 = special_moduli.iter().map(|&p| (p as f64).log2()).sum();
    assert!((hybrid.log_key_modulus() - hybrid.log_q() - log_p).abs() < 1e-9);
    assert!(hybrid.extended_public_key() && hybrid.is_secure());
    let kg = KeyGenerator::new(&hybrid, &mut rng).unwrap();
    assert!(kg.public_key(&mut rng).unwrap().is_extended());
}
