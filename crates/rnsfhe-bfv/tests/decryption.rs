//! Reduced-modulus decryption: `Decryptor::decrypt` (over a prefix `Q'` of `Q`) gives the same plaintext
//! as `Decryptor::decrypt_full` (over all of `Q`) on uniformly random ciphertexts (any noise), along a
//! multiplication chain until the noise budget is exhausted, and on 3-part ciphertexts; it falls back to
//! all of `Q` where no shorter prefix keeps the margin.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use rand::{Rng, SeedableRng};
use rnsfhe_bfv::{BatchEncoder, Ciphertext, CoeffEncoder};
use rnsfhe_ring::Poly;

use common::{context, random_values, Setup};

/// A ciphertext with uniformly random parts over `Q`: its "noise" is uniform, so the rounding of
/// `t x / Q` lands anywhere, including near the boundaries the margin is about.
fn random_ciphertext(setup: &Setup, parts: usize, rng: &mut impl Rng) -> Ciphertext {
    let q = setup.ctx.q_basis();
    let polys = (0..parts)
        .map(|_| {
            let data = q
                .moduli()
                .iter()
                .flat_map(|m| {
                    let v = m.value();
                    (0..setup.n)
                        .map(|_| rng.gen_range(0..v))
                        .collect::<Vec<_>>()
                })
                .collect();
            Poly::from_data(q, data).unwrap()
        })
        .collect();
    Ciphertext::from_parts(&setup.ctx, polys).unwrap()
}

#[test]
fn reduced_decryption_equals_full_decryption_on_random_ciphertexts() {
    for (t, k) in [(65537u64, 5usize), (2, 4), ((1 << 20) + 1, 6)] {
        let setup = Setup::new(context(10, t, 55, k, None), 7);
        assert!(
            setup.dec.decryption_limbs() < k,
            "t = {t}, k = {k}: {} limbs",
            setup.dec.decryption_limbs()
        );
        let mut vr = rand::rngs::StdRng::seed_from_u64(t ^ k as u64);
        for parts in [2, 3] {
            for _ in 0..4 {
                let ct = random_ciphertext(&setup, parts, &mut vr);
                let reduced = setup.dec.decrypt(&ct).unwrap();
                let full = setup.dec.decrypt_full(&ct).unwrap();
                assert_eq!(reduced, full, "t = {t}, k = {k}, {parts} parts");
            }
        }
    }
}

#[test]
fn reduced_decryption_follows_full_decryption_until_the_budget_is_gone() {
    let mut setup = Setup::new(context(11, 65537, 55, 4, None), 8);
    assert_eq!(setup.dec.decryption_limbs(), 2);
    let be = BatchEncoder::new(&setup.ctx).unwrap();
    let mut vr = rand::rngs::StdRng::seed_from_u64(81);
    let values = random_values(&mut vr, setup.n, setup.t);
    let pt = be.encode_u64(&values).unwrap();
    let mut ct = setup.pk_enc.encrypt(&pt, &mut setup.r).unwrap();
    let mut expected = values.clone();
    let mut exhausted = false;
    for _ in 0..12 {
        let full = setup.dec.decrypt_full(&ct).unwrap();
        assert_eq!(setup.dec.decrypt(&ct).unwrap(), full);
        let budget = setup.dec.noise_budget(&ct).unwrap();
        // The budget measures the distance to the nearest plaintext, which once the noise has
        // wrapped is a wrong one: only a clear budget promises the expected values.
        let correct = be.decode_u64(&full).unwrap() == expected;
        assert!(correct || budget < 2.0, "budget {budget}");
        exhausted |= !correct;
        ct = setup.ev.multiply(&ct, &ct, &setup.keys.rk).unwrap();
        expected = expected
            .iter()
            .map(|&x| ((x as u128 * x as u128) % setup.t as u128) as u64)
            .collect();
    }
    assert!(
        exhausted,
        "the chain should exhaust the noise budget and decrypt wrongly"
    );
}

#[test]
fn large_t_or_few_primes_decrypt_over_all_of_q() {
    // t ~ 2^50 with two 55-bit primes: one prime cannot hold t (N + 1) 2^64.
    let setup = Setup::new(context(10, (1 << 50) + 1, 55, 2, None), 9);
    assert_eq!(setup.dec.decryption_limbs(), 2);
    let ce = CoeffEncoder::new(&setup.ctx);
    let mut vr = rand::rngs::StdRng::seed_from_u64(91);
    let m = ce
        .encode_u64(&random_values(&mut vr, setup.n, setup.t))
        .unwrap();
    let mut r = common::rng(10);
    let ct = setup.sk_enc.encrypt(&m, &mut r).unwrap();
    assert_eq!(setup.dec.decrypt(&ct).unwrap(), m);
    // One prime: nothing to drop.
    let one = Setup::new(context(10, 65537, 55, 1, None), 11);
    assert_eq!(one.dec.decryption_limbs(), 1);
}

#[test]
fn generated_parameters_decrypt_over_two_primes() {
    // t = 65537, depth 20: N = 2^15 and 14 primes; two primes hold t ceil(12/2) (1 + ||s||_1) 2^64.
    let ctx =
        rnsfhe_bfv::BfvContext::new(rnsfhe_bfv::BfvParams::generate(65537, 20).unwrap()).unwrap();
    assert_eq!(ctx.q_basis().len(), 14);
    let kg = rnsfhe_bfv::KeyGenerator::new(&ctx, &mut common::rng(12)).unwrap();
    let dec = rnsfhe_bfv::Decryptor::new(&ctx, kg.secret_key()).unwrap();
    assert_eq!(dec.decryption_limbs(), 2);
}
