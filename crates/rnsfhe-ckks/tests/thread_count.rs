//! Key generation and encryption split their randomness into streams drawn in a fixed order
//! (`rnsfhe_math::sampling::Substreams`) and then sample and transform side by side: a fixed seed must
//! give the same keys and ciphertexts on any number of threads, inside an active-wait region or not.
//! Evaluation (key switching split by half limbs, hoisted and plain rotations, relinearization with
//! rescaling) is deterministic and must give the same ciphertexts too.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{bits, c, rng, small, values};
use rnsfhe_ckks::{
    Ciphertext, CkksContext, CkksDecryptor, CkksEncryptor, ConversionMode, Evaluator, KeyGenerator,
    KeySet, RescalingPolicy,
};

/// [`KeySet`] compared by its public parts (the secret is compared by its coefficients).
#[derive(Debug)]
struct KeySetEq(KeySet);

impl PartialEq for KeySetEq {
    fn eq(&self, other: &Self) -> bool {
        self.0.public == other.0.public
            && self.0.relin == other.0.relin
            && self.0.galois == other.0.galois
    }
}

/// Everything a fixed seed determines: the secret's coefficients, the keys, and one ciphertext of each
/// kind of encryption (public key over `Q ∪ {p_0}`, public key over `Q`, secret key, seeded), each
/// checked to decrypt.
fn outputs(ctx: &std::sync::Arc<CkksContext>, seed: u8) -> (Vec<i64>, KeySetEq, Vec<Ciphertext>) {
    let mut r = rng(seed);
    let kg = KeyGenerator::new(ctx, &mut r).unwrap();
    let keys = kg.generate_all(&[1, 3], true, &mut r).unwrap();
    let over_q = kg.public_key_over_q(&mut r).unwrap();
    let x = values(ctx.max_slots(), 7);
    let public = CkksEncryptor::with_public_key(ctx, &keys.public).unwrap();
    let public_q = CkksEncryptor::with_public_key(ctx, &over_q).unwrap();
    let secret = CkksEncryptor::with_secret_key(ctx, &keys.secret).unwrap();
    let cts = vec![
        public.encrypt(&x[..], &mut r).unwrap(),
        public_q.encrypt(&x[..], &mut r).unwrap(),
        secret.encrypt(&x[..], &mut r).unwrap(),
        secret
            .encrypt_seeded(&x[..], &mut r)
            .unwrap()
            .expand()
            .unwrap(),
    ];
    // Evaluation on the first ciphertext: products, relinearization with rescaling, plain and hoisted
    // rotations, conjugation.
    let ev = Evaluator::new(ctx)
        .with_relin_key(keys.relin.clone())
        .unwrap()
        .with_galois_keys(keys.galois.clone())
        .unwrap();
    let x0 = &cts[0];
    let mut evaluated = vec![
        ev.multiply_rescale(x0, &cts[2]).unwrap(),
        ev.multiply(x0, x0).unwrap(),
        ev.rotate(x0, 1).unwrap(),
        ev.conjugate(x0).unwrap(),
    ];
    evaluated.extend(ev.rotate_hoisted(x0, &[1, 3]).unwrap());
    let cts: Vec<Ciphertext> = cts.into_iter().chain(evaluated).collect();
    // The public key over `Q` is checked through its ciphertext; the decryptions through the secret.
    let dec = CkksDecryptor::new(ctx, &keys.secret).unwrap();
    for ct in &cts[..4] {
        let got = dec.decrypt(ct).unwrap();
        assert!(bits(&c(&x), &got) > 20.0, "{} bits", bits(&c(&x), &got));
    }
    (keys.secret.coefficients().to_vec(), KeySetEq(keys), cts)
}

fn in_pool<R: Send>(threads: usize, op: impl FnOnce() -> R + Send) -> R {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .unwrap()
        .install(op)
}

#[test]
fn keys_and_ciphertexts_do_not_depend_on_the_thread_count() {
    // N = 2^14: four sampling chunks per polynomial, so the chunks really are split between threads.
    let mut params = small(
        RescalingPolicy::FixedNominalScale,
        ConversionMode::ExactFloat,
    );
    params.log_n = 14;
    let ctx = CkksContext::new(params).unwrap();
    let reference = in_pool(1, || outputs(&ctx, 11));
    for threads in [2, 3] {
        let got = in_pool(threads, || outputs(&ctx, 11));
        assert_eq!(got.0, reference.0, "secret on {threads} threads");
        assert!(got.1 == reference.1, "keys on {threads} threads");
        assert_eq!(got.2, reference.2, "ciphertexts on {threads} threads");
    }
    // Inside an active-wait region the fork-joins take another path (by halves): same outputs.
    let active = in_pool(2, || {
        rnsfhe_ring::parallel::active_wait(|| outputs(&ctx, 11))
    });
    assert_eq!(active.0, reference.0);
    assert!(active.1 == reference.1);
    assert_eq!(active.2, reference.2);
    // Another seed gives other keys and ciphertexts (the streams come from the seed).
    let other = in_pool(2, || outputs(&ctx, 12));
    assert_ne!(other.0, reference.0);
    assert!(other.1 != reference.1);
    assert_ne!(other.2, reference.2);
}
