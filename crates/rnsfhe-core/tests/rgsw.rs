//! The external product with RGSW ciphertexts of the hybrid gadget with one special modulus over `q_0`
//! (PEGASUS Table IV's `g_rns`): `(c_0, c_1) ⊙ RGSW(m)` decrypts to `m x` within the noise bound of two
//! key switches plus `|m|` times the input's error.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use rand::Rng;
use rnsfhe_core::{
    ConversionMode, Decryptor, Encryptor, RgswCiphertext, RlweCiphertext, RlweContext, RlweParams,
    SecretDistribution, SecretKey,
};
use rnsfhe_math::primes::ntt_primes_of_bits;
use rnsfhe_math::sampling::Csprng;
use rnsfhe_ring::{Coeff, NttMonomials, NttShoupPoly, Poly};

/// A context of PEGASUS Table IV's gadget shape (`q_0` of 45 bits, one 60-bit special prime, `N = 2^9`),
/// a secret, and a coefficient-form encryption of random `x` below `2^40`.
struct Setup {
    ctx: std::sync::Arc<RlweContext>,
    sk: SecretKey,
    r: Csprng,
    n: usize,
    x: Vec<i64>,
    pt: Poly<Coeff>,
    ct: RlweCiphertext<Coeff>,
}

fn setup(seed: u8) -> Setup {
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
    let mut r = Csprng::insecure_from_seed_for_tests([seed; 32]);
    let sk = SecretKey::generate(&ctx, &mut r).unwrap();
    let n = ctx.n();
    let x: Vec<i64> = (0..n)
        .map(|_| r.gen_range(-(1i64 << 40)..(1i64 << 40)))
        .collect();
    let pt = Poly::<Coeff>::from_i64(ctx.chain(), &x).unwrap();
    let ct = Encryptor::with_secret_key(&ctx, &sk)
        .unwrap()
        .encrypt_coeff(&pt, &mut r)
        .unwrap()
        .into_coeff();
    Setup {
        ctx,
        sk,
        r,
        n,
        x,
        pt,
        ct,
    }
}

#[test]
fn external_product_multiplies_by_the_rgsw_message() {
    let Setup {
        ctx,
        sk,
        mut r,
        n,
        x,
        pt,
        ct,
    } = setup(9);
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

/// `sum_k f_k (ct ⊙ RGSW(m_k))` with one ModUp and one ModDown
/// (`RlweContext::external_product_combination`) against the same sum of separate external products
/// multiplied in coefficient form: for the factors `1 - X^a` and `1 - X^-a` of the ternary blind
/// rotation and every pair of key bits, both decrypt to `x ((1 - X^a) m_1 + (1 - X^-a) m_2)` within the
/// triangle-inequality bound of their errors (each gadget error at most doubled by its factor, the
/// input's error times the message's factors), and the Shoup form with factors gathered from
/// `NttMonomialFactors` equals the combination exactly; the factors must be over `Q_l ∪ P`.
#[test]
fn external_product_combination_equals_the_separate_products() {
    let Setup {
        ctx,
        sk,
        mut r,
        n,
        pt,
        ct,
        ..
    } = setup(10);
    let dec = Decryptor::new(&ctx, &sk).unwrap();
    let fresh = ctx.fresh_noise_secret().bound;
    let switch = ctx.key_switch_noise(1, 64).unwrap().bound;
    let q0 = ctx.chain().moduli()[0];
    let ext = ctx.extended_basis_at(1).unwrap();
    let monomials = NttMonomials::new(&ext);
    let factors = monomials.shoup_factors(1);
    let decrypt = |out: RlweCiphertext<Coeff>| -> Vec<i64> {
        let got = dec.decrypt_coeff(&out.into_ntt()).unwrap();
        got.limb(0).unwrap().iter().map(|&g| q0.center(g)).collect()
    };
    for a in [1usize, 7, n - 1, n, n + 5, 2 * n - 1] {
        for (m1, m2) in [(1i64, 0i64), (0, 1), (1, 1), (0, 0)] {
            let k1 = RgswCiphertext::encrypt_scalar(&ctx, &sk, m1, &mut r).unwrap();
            let k2 = RgswCiphertext::encrypt_scalar(&ctx, &sk, m2, &mut r).unwrap();
            // 1 - X^a = X^(a + N) + 1, 1 - X^-a = X^(2N - a + N) + 1.
            let f1 = monomials.monomial_plus_constant(a + n, 1);
            let f2 = monomials.monomial_plus_constant(3 * n - a, 1);
            let combined = ctx
                .external_product_combination(&ct, &[(&f1, &k1), (&f2, &k2)])
                .unwrap();
            // The Shoup form gathered from the factor tables gives the same residues.
            let (mut g1, mut g2) = (NttShoupPoly::zero(&ext), NttShoupPoly::zero(&ext));
            factors.pair_into(a + n, &mut g1, &mut g2).unwrap();
            let gathered = ctx
                .external_product_combination_shoup(&ct, &[(&g1, &k1), (&g2, &k2)])
                .unwrap();
            assert_eq!(gathered, combined, "a = {a}");
            // The separate form: (1 - X^k) y = -((X^k - 1) y) on each part, then the sum.
            let factored = |y: RlweCiphertext<Coeff>, k: usize| {
                let parts = y
                    .parts
                    .iter()
                    .map(|p| {
                        let mut q = p.mul_monomial_minus_one(k);
                        q.neg_assign();
                        q
                    })
                    .collect();
                RlweCiphertext::new(parts).unwrap()
            };
            let mut separate = factored(ctx.external_product(&ct, &k1).unwrap(), a);
            let other = factored(ctx.external_product(&ct, &k2).unwrap(), 2 * n - a);
            for (s, o) in separate.parts.iter_mut().zip(&other.parts) {
                s.add_assign(o).unwrap();
            }
            let times = |k: usize, m: i64| {
                let mut y = pt.mul_monomial_minus_one(k);
                y.mul_i64_assign(-m);
                y
            };
            let message = times(a, m1).add(&times(2 * n - a, m2)).unwrap();
            let expected: Vec<i64> = message
                .limb(0)
                .unwrap()
                .iter()
                .map(|&c| q0.center(c))
                .collect();
            let bound = 2.0 * 2.0 * (2.0 * switch) + 2.0 * (m1 + m2) as f64 * fresh;
            for (name, out) in [("combined", combined), ("separate", separate)] {
                let worst = decrypt(out)
                    .iter()
                    .zip(&expected)
                    .map(|(g, e)| (g - e).unsigned_abs())
                    .max()
                    .unwrap();
                assert!(
                    worst as f64 <= bound,
                    "{name}, a = {a}, (m1, m2) = ({m1}, {m2}): error {worst} above {bound}"
                );
            }
        }
    }
    // Factors over Q_l alone (not Q_l ∪ P) are refused, as are a ciphertext of three parts and an
    // empty combination.
    let k = RgswCiphertext::encrypt_scalar(&ctx, &sk, 1, &mut r).unwrap();
    let short = NttMonomials::new(ctx.chain()).monomial(1);
    assert!(ctx
        .external_product_combination(&ct, &[(&short, &k)])
        .is_err());
    assert!(ctx.external_product_combination(&ct, &[]).is_err());
    let three = RlweCiphertext::new(vec![ct.parts[0].clone(); 3]).unwrap();
    let f = monomials.monomial(1);
    assert!(matches!(
        ctx.external_product_combination(&three, &[(&f, &k)]),
        Err(rnsfhe_core::Error::WrongPartCount { .. })
    ));
}
