//! The limb-by-limb tensor product of HPS multiplication gives the same ciphertext on one thread (outputs
//! appended limb by limb) as on several (limbs in parallel), for distinct operands and for a square, and
//! the product decrypts to the plaintext product.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use rand::SeedableRng;
use rnsfhe_bfv::BatchEncoder;

use common::{context, random_values, Setup};

/// Encryption, the tensor product with its scaling, relinearization and multiplication give the same words
/// on pools of 1, 2 and 3 threads. `N = 2^13` over 4 limbs, so that relinearization's gadget product, like the
/// tensor product and the scaling, splits its limbs between the threads.
#[test]
fn one_thread_and_two_threads_give_the_same_product() {
    let mut setup = Setup::new(context(13, 65537, 55, 4, None), 21);
    let be = BatchEncoder::new(&setup.ctx).unwrap();
    let mut vr = rand::rngs::StdRng::seed_from_u64(22);
    let (x, y) = (
        random_values(&mut vr, setup.n, setup.t),
        random_values(&mut vr, setup.n, setup.t),
    );
    let a = setup
        .pk_enc
        .encrypt(&be.encode_u64(&x).unwrap(), &mut setup.r)
        .unwrap();
    let b = setup
        .pk_enc
        .encrypt(&be.encode_u64(&y).unwrap(), &mut setup.r)
        .unwrap();
    let pool = |threads| {
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap()
    };
    let (one, two, three) = (pool(1), pool(2), pool(3));
    let pt = be.encode_u64(&x).unwrap();
    let encrypt = |p: &rayon::ThreadPool| {
        let mut rng = common::rng(7);
        p.install(|| setup.pk_enc.encrypt(&pt, &mut rng)).unwrap()
    };
    assert_eq!(encrypt(&one), encrypt(&two));
    assert_eq!(encrypt(&one), encrypt(&three));
    for (l, r, expected) in [
        (
            &a,
            &b,
            x.iter()
                .zip(&y)
                .map(|(u, v)| u * v % setup.t)
                .collect::<Vec<_>>(),
        ),
        (&a, &a, x.iter().map(|u| u * u % setup.t).collect()),
    ] {
        let serial = one.install(|| setup.ev.multiply_no_relin(l, r)).unwrap();
        let parallel = two.install(|| setup.ev.multiply_no_relin(l, r)).unwrap();
        assert_eq!(serial, parallel);
        assert_eq!(
            serial,
            three.install(|| setup.ev.multiply_no_relin(l, r)).unwrap()
        );
        assert_eq!(serial.part_count(), 3);
        let relin = one
            .install(|| setup.ev.relinearize(&serial, &setup.keys.rk))
            .unwrap();
        for p in [&one, &two, &three] {
            let other = p.install(|| setup.ev.relinearize(&serial, &setup.keys.rk));
            assert_eq!(relin, other.unwrap());
            // `multiply` is `relinearize` after `multiply_no_relin`, on every pool.
            let fused = p.install(|| setup.ev.multiply(l, r, &setup.keys.rk));
            assert_eq!(relin, fused.unwrap());
        }
        assert_eq!(
            be.decode_u64(&setup.dec.decrypt(&relin).unwrap()).unwrap(),
            expected
        );
    }
}
