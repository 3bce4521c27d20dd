//! The external product with RGSW ciphertexts of the hybrid gadget with one special modulus over `q_0`
//! (PEGASUS Table IV's `g_rns`): `(c_0, c_1) ⊙ RGSW(m)` decrypts to `m x` within the noise bound of two
//! key switches plus `|m|` times the input's error.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use rand::Rng;
use rnsfhe_core::{
    ConversionMode, Decryptor, Encryptor, RgswCiphertext, RlweContext, RlweParams,
    SecretDistribution, SecretKey,
};
use rnsfhe_math::primes::ntt_primes_of_bits;
use rnsfhe_math::sampling::Csprng;
use rnsfhe_ring::{Coeff, Poly};

#[test]
fn external_product_multiplies_by_the_rgsw_message() {
    let q = ntt_primes_of_bits(45, 1024, 1, &[]).unwrap();
    let p = ntt_primes_of_bits(60, 1024, 1, &q).unwrap();
    let ctx = RlweContext::new(RlweParams {
        log_n: 9,
        q_moduli: q,
        p_moduli: p,
        dnum: 1,
        conversion: ConversionMode::ExactFloat,
        secret: SecretDistribution::HammingWeight(64),
        sigma: 3.2,
    })
    .unwrap();
    let mut r = Csprng::insecure_from_seed_for_tests([9; 32]);
    let sk = SecretKey::generate(&ctx, &mut r).unwrap();
    let n = ctx.n();
    let x: Vec<i64> = (0..n)
        .map(|_| r.gen_range(-(1i64 << 40)..(1i64 << 40)))
        .collect();
    let pt = Poly::<Coeff>::from_i64(ctx.chain(), &x).unwrap();
    let ct = Encryptor::with_secret_key(&ctx, &sk)
        .unwrap()
        .encrypt_coeff(&pt, &mut r)
        .unwrap();
    let ct = ct.into_coeff();
    let dec = Decryptor::new(&ctx, &sk).unwrap();
    let fresh = ctx.fresh_noise_secret().bound;
    let switch = ctx.key_switch_noise(1, 64).unwrap().bound;
    let q0 = ctx.chain().moduli()[0];
    let worst_error = |out: rnsfhe_core::RlweCiphertext<Coeff>, expected: &[i64]| {
        let got = dec.decrypt_coeff(&out.into_ntt()).unwrap();
        got.limb(0)
            .unwrap()
            .iter()
            .zip(expected)
            .map(|(&g, &e)| (q0.center(g) - e).unsigned_abs())
            .max()
            .unwrap()
    };
    for m in [1i64, 0, -1, 3] {
        let rgsw = RgswCiphertext::encrypt_scalar(&ctx, &sk, m, &mut r).unwrap();
        let expected: Vec<i64> = x.iter().map(|&xi| m * xi).collect();
        let worst = worst_error(ctx.external_product(&ct, &rgsw).unwrap(), &expected);
        let bound = 2.0 * switch + m.abs() as f64 * fresh;
        assert!(
            worst as f64 <= bound,
            "m = {m}: error {worst} above the bound {bound}"
        );
    }
    // Monomials X^k (LMKCDEY's RGSW(X^(s_j)) for s_j in {-1, 0, 1}: X^-1 = -X^(N-1)): the product is the
    // negacyclic rotation of x, with the input's error rotated (same size).
    for k in [0usize, 1, 2 * n - 1, n + 3] {
        let mut monomial = vec![0i64; n];
        monomial[k % n] = if k < n { 1 } else { -1 };
        let rgsw = RgswCiphertext::encrypt_small(&ctx, &sk, &monomial, &mut r).unwrap();
        let rotated = pt.mul_monomial(k);
        let expected: Vec<i64> = rotated
            .limb(0)
            .unwrap()
            .iter()
            .map(|&c| q0.center(c))
            .collect();
        let worst = worst_error(ctx.external_product(&ct, &rgsw).unwrap(), &expected);
        let bound = 2.0 * switch + fresh;
        assert!(
            worst as f64 <= bound,
            "X^{k}: error {worst} above the bound {bound}"
        );
    }
    assert!(RgswCiphertext::encrypt_small(&ctx, &sk, &[1, 0], &mut r).is_err());
}
