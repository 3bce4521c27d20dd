//! The limb-by-limb tensor product of HPS multiplication gives the same ciphertext on one thread (outputs
//! appended limb by limb) as on several (limbs in parallel), for distinct operands and for a square, and
//! the product decrypts to the plaintext product.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use rand::SeedableRng;
use rnsfhe_bfv::BatchEncoder;

use common::{context, random_values, Setup};

#[test]
fn one_thread_and_two_threads_give_the_same_product() {
    let mut setup = Setup::new(context(11, 65537, 55, 4, None), 21);
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
    let (one, two) = (pool(1), pool(2));
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
        assert_eq!(serial.part_count(), 3);
        let relin = setup.ev.relinearize(&serial, &setup.keys.rk).unwrap();
        assert_eq!(
            be.decode_u64(&setup.dec.decrypt(&relin).unwrap()).unwrap(),
            expected
        );
    }
}
