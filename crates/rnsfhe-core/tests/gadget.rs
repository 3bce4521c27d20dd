//! The gadget product of every gadget kind against big-integer arithmetic.
//!
//! A noiseless gadget ciphertext of a small `m` (rows `(g_i m, 0)`) turns the gadget product of `x` into
//! `(x m + rounding, 0)`: the check reconstructs `x` from its residues (CRT), computes the negacyclic
//! product `x m` with big integers and compares it with the product's first part, limb by limb. The digit
//! gadgets and the hybrid gadget in the exact conversion modes must match exactly; the fast mode's ModDown
//! may add at most `k` (the number of special primes, RNS-CKKS Lemma 2). A noisy gadget ciphertext from
//! [`GadgetCiphertext::encrypt`] must then decrypt to `x m` plus the digits times the errors.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;

use num_bigint::{BigInt, BigUint};
use rnsfhe_core::gadget::product_sum;
use rnsfhe_core::{
    ConversionMode, Error, Gadget, GadgetCiphertext, RlweContext, RlweParams, SecretDistribution,
};
use rnsfhe_math::primes::{qu_xu_max_eta, qu_xu_primes};
use rnsfhe_math::sampling::{fill_ternary, fill_uniform_mod, Csprng};
use rnsfhe_ring::{Coeff, Ntt, Poly, RnsBasis, RnsSignedDigits};

const LOG_N: u32 = 9;
const N: usize = 1 << LOG_N;

fn rng(seed: u8) -> Csprng {
    Csprng::insecure_from_seed_for_tests([seed; 32])
}

/// `count` NTT primes of `bits` bits close enough to `2^bits` for every conversion mode.
fn near_pow2_primes(bits: u32, count: usize, exclude: &[u64]) -> Vec<u64> {
    let two_n = 2 * N as u64;
    let eta = qu_xu_max_eta(bits, two_n, count + exclude.len()).unwrap();
    qu_xu_primes(bits, eta, two_n, count, exclude).unwrap()
}

fn context(q: usize, p: usize, dnum: usize, conversion: ConversionMode) -> Arc<RlweContext> {
    let q_moduli = near_pow2_primes(45, q, &[]);
    let p_moduli = near_pow2_primes(50, p, &q_moduli);
    RlweContext::new(RlweParams {
        log_n: LOG_N,
        q_moduli,
        p_moduli,
        dnum,
        conversion,
        secret: SecretDistribution::Ternary,
        sigma: 3.2,
    })
    .unwrap()
}

/// A uniform polynomial over `basis` in coefficient form.
fn uniform(basis: &Arc<RnsBasis>, rng: &mut Csprng) -> Poly<Coeff> {
    let mut data = vec![0u64; basis.len() * N];
    for (limb, m) in data.chunks_exact_mut(N).zip(basis.moduli()) {
        fill_uniform_mod(rng, m, limb);
    }
    Poly::from_data(basis, data).unwrap()
}

fn ternary(rng: &mut Csprng) -> Vec<i64> {
    let mut m = vec![0i64; N];
    fill_ternary(rng, &mut m);
    m
}

/// The product of the moduli of `basis`.
fn modulus_product(basis: &RnsBasis) -> BigUint {
    basis
        .moduli()
        .iter()
        .fold(BigUint::from(1u8), |acc, m| acc * m.value())
}

/// The integers in `[0, Q)` with the residues of `x` (CRT reconstruction).
fn reconstruct(x: &Poly<Coeff>) -> Vec<BigUint> {
    let basis = x.basis();
    let q = modulus_product(basis);
    let weights: Vec<BigUint> = basis
        .moduli()
        .iter()
        .map(|m| {
            let qi = BigUint::from(m.value());
            let q_hat = &q / &qi;
            let inv = (&q_hat % &qi).modpow(&(&qi - 2u8), &qi);
            q_hat * inv
        })
        .collect();
    (0..N)
        .map(|c| {
            x.limbs()
                .zip(&weights)
                .fold(BigUint::default(), |acc, (limb, w)| acc + w * limb[c])
                % &q
        })
        .collect()
}

/// `x m mod Q` in `X^N + 1` with big integers, for `m` with small signed coefficients.
fn negacyclic_product(x: &[BigUint], m: &[i64], q: &BigUint) -> Vec<BigInt> {
    let q = BigInt::from(q.clone());
    let mut out = vec![BigInt::default(); N];
    for (i, xi) in x.iter().enumerate() {
        let xi = BigInt::from(xi.clone());
        for (j, &mj) in m.iter().enumerate().filter(|(_, &mj)| mj != 0) {
            let term = &xi * mj;
            if i + j < N {
                out[i + j] += term;
            } else {
                out[i + j - N] -= term;
            }
        }
    }
    out.into_iter().map(|v| ((v % &q) + &q) % &q).collect()
}

/// The largest `|got - expected|` (centered modulo `Q`) over the coefficients.
fn max_distance(got: &Poly<Coeff>, expected: &[BigInt]) -> BigInt {
    let q = BigInt::from(modulus_product(got.basis()));
    let half = &q / 2;
    reconstruct(got)
        .into_iter()
        .zip(expected)
        .map(|(g, e)| {
            let d = ((BigInt::from(g) - e) % &q + &q) % &q;
            if d > half {
                &q - d
            } else {
                d
            }
        })
        .max()
        .unwrap()
}

/// A noiseless gadget ciphertext of `m` over `key_basis`: rows `(g_i m, 0)`.
fn noiseless(
    fingerprint: u64,
    gadget: Gadget,
    key_basis: &Arc<RnsBasis>,
    m: &[i64],
    constants: &[Vec<u64>],
) -> GadgetCiphertext {
    let m = Poly::<Coeff>::from_i64(key_basis, m).unwrap().into_ntt();
    let rows = constants
        .iter()
        .map(|g| {
            let mut b = m.clone();
            b.mul_scalars_assign(g).unwrap();
            (b, Poly::<Ntt>::zero(key_basis))
        })
        .collect();
    GadgetCiphertext::from_rows(fingerprint, gadget, rows, None).unwrap()
}

/// The entries of a per-limb digit gadget over all limbs of its basis, in row order.
fn digit_constants(digits: &RnsSignedDigits) -> Vec<Vec<u64>> {
    let k = digits.basis().len();
    (0..k)
        .flat_map(|i| (0..digits.count()).map(move |j| digits.gadget_residues(i, j, k).unwrap()))
        .collect()
}

/// Hybrid RNS digits with special primes, in every conversion mode, at the top level and at a level that
/// cuts a digit group; `dnum = 1` with one special prime is the single special modulus `q'`, `dnum = L`
/// one group per limb.
#[test]
fn hybrid_gadget_product_matches_big_integers() {
    for (q, p, dnum) in [(4, 2, 2), (3, 1, 1), (3, 3, 3)] {
        for mode in [
            ConversionMode::Fast,
            ConversionMode::ExactFloat,
            ConversionMode::ExactInteger,
        ] {
            let ctx = context(q, p, dnum, mode);
            let mut r = rng(dnum as u8 + 10 * q as u8);
            let m = ternary(&mut r);
            let key = noiseless(
                ctx.fingerprint(),
                Gadget::of_context(&ctx),
                ctx.extended_basis(),
                &m,
                ctx.special_constants(),
            );
            for level in [q, q - 1] {
                let basis = ctx.basis_at(level).unwrap();
                let x = uniform(basis, &mut r);
                let expected = negacyclic_product(&reconstruct(&x), &m, &modulus_product(basis));
                let (u0, u1) = ctx.key_switch(&x.clone().into_ntt(), &key).unwrap();
                let allowed = if mode == ConversionMode::Fast { p } else { 0 };
                let what = format!("q = {q}, p = {p}, dnum = {dnum}, {mode:?}, level {level}");
                assert!(
                    max_distance(&u0.into_coeff(), &expected) <= BigInt::from(allowed),
                    "{what}: u0 != x m"
                );
                assert!(u1.data().iter().all(|&c| c == 0), "{what}: u1 != 0");
                // The coefficient-form sum of two products, one ModDown: x m + y m'.
                let m2 = ternary(&mut r);
                let key2 = noiseless(
                    ctx.fingerprint(),
                    Gadget::of_context(&ctx),
                    ctx.extended_basis(),
                    &m2,
                    ctx.special_constants(),
                );
                let y = uniform(basis, &mut r);
                let q_l = modulus_product(basis);
                let ym = negacyclic_product(&reconstruct(&y), &m2, &q_l);
                let sum: Vec<BigInt> = expected.iter().zip(&ym).map(|(a, b)| a + b).collect();
                let (v0, v1) = ctx.gadget_product_sum(&[(&x, &key), (&y, &key2)]).unwrap();
                assert!(
                    max_distance(&v0, &sum) <= BigInt::from(allowed),
                    "{what}: sum of two products"
                );
                assert!(v1.data().iter().all(|&c| c == 0), "{what}: v1 != 0");
            }
        }
    }
}

/// Plain CRT digits, CRT digits refined by base-`2^w` digits, and signed base-`2^w` digits of one modulus:
/// exact at the full basis and at a prefix.
#[test]
fn digit_gadget_products_match_big_integers() {
    let q = near_pow2_primes(45, 3, &[]);
    let full = RnsBasis::new(N, &q).unwrap();
    let single = RnsBasis::new(N, &q[..1]).unwrap();
    let cases = [
        ("CRT digits", RnsSignedDigits::new(&full, 46, 1).unwrap()),
        (
            "CRT digits refined by 2^16",
            RnsSignedDigits::new(&full, 16, 3).unwrap(),
        ),
        (
            "signed base-2^7 digits of one modulus",
            RnsSignedDigits::new(&single, 7, 7).unwrap(),
        ),
    ];
    for (what, digits) in &cases {
        let mut r = rng(30);
        let m = ternary(&mut r);
        let gadget = Gadget::of_digits(digits);
        let key = noiseless(7, gadget, digits.basis(), &m, &digit_constants(digits));
        for limbs in [digits.basis().len(), 1] {
            let basis = digits.basis().prefix(limbs).unwrap();
            let x = uniform(&basis, &mut r);
            let expected = negacyclic_product(&reconstruct(&x), &m, &modulus_product(&basis));
            let (u0, u1) = key.product(&x, digits).unwrap();
            assert_eq!(
                max_distance(&u0, &expected),
                BigInt::default(),
                "{what}, {limbs} limbs: u0 != x m"
            );
            assert!(u1.data().iter().all(|&c| c == 0), "{what}: u1 != 0");
        }
        // A sum of two products (one multiply-accumulate): x m + y m' exactly.
        let m2 = ternary(&mut r);
        let key2 = noiseless(7, gadget, digits.basis(), &m2, &digit_constants(digits));
        let basis = digits.basis();
        let (x, y) = (uniform(basis, &mut r), uniform(basis, &mut r));
        let q = modulus_product(basis);
        let xm = negacyclic_product(&reconstruct(&x), &m, &q);
        let ym = negacyclic_product(&reconstruct(&y), &m2, &q);
        let expected: Vec<BigInt> = xm.iter().zip(&ym).map(|(a, b)| a + b).collect();
        let (u0, _) = product_sum(&[(&x, &key), (&y, &key2)], digits).unwrap();
        assert_eq!(
            max_distance(&u0, &expected),
            BigInt::default(),
            "{what}: sum of two products"
        );
    }
}

/// A gadget ciphertext from [`GadgetCiphertext::encrypt`] under `s`: the product decrypts to `x m` plus
/// `sum_i d_i e_i`, each `|d_i| <= B/2` and `|e_i| <= 6 sigma` (so at most `D N (B/2) 6 sigma`).
#[test]
fn encrypted_digit_gadget_product_decrypts_to_the_product() {
    let ctx = context(3, 1, 1, ConversionMode::Fast);
    let q = ctx.chain();
    let digits = RnsSignedDigits::new(q, 16, 3).unwrap();
    let mut r = rng(40);
    let s_coeffs = ternary(&mut r);
    let s = Poly::<Coeff>::from_i64(q, &s_coeffs).unwrap().into_ntt();
    let m = ternary(&mut r);
    let m_ntt = Poly::<Coeff>::from_i64(q, &m).unwrap().into_ntt();
    let gadget = Gadget::of_digits(&digits);
    let key = GadgetCiphertext::encrypt(
        ctx.fingerprint(),
        gadget,
        ctx.gaussian(),
        &s,
        &m_ntt,
        &digit_constants(&digits),
        &mut r,
    )
    .unwrap();
    assert_eq!(key.rows().len(), 9);
    assert!(key.seed().is_some());
    let x = uniform(q, &mut r);
    let expected = negacyclic_product(&reconstruct(&x), &m, &modulus_product(q));
    let (u0, u1) = key.product(&x, &digits).unwrap();
    let decrypted = u0.into_ntt().add(&u1.into_ntt().mul(&s).unwrap()).unwrap();
    let bound = 9.0 * N as f64 * 2f64.powi(15) * 6.0 * 3.2;
    let distance = max_distance(&decrypted.into_coeff(), &expected);
    assert!(distance > BigInt::default(), "no noise at all");
    assert!(
        distance <= BigInt::from(bound as u64),
        "noise {distance} above {bound}"
    );
}

/// A key made for one decomposition refuses a product with another, and rows must share one basis.
#[test]
fn mismatched_gadgets_and_rows_are_refused() {
    let q = near_pow2_primes(45, 2, &[]);
    let basis = RnsBasis::new(N, &q).unwrap();
    let crt = RnsSignedDigits::new(&basis, 46, 1).unwrap();
    let refined = RnsSignedDigits::new(&basis, 16, 3).unwrap();
    let m = vec![0i64; N];
    let key = noiseless(
        1,
        Gadget::of_digits(&crt),
        &basis,
        &m,
        &digit_constants(&crt),
    );
    let x = uniform(&basis, &mut rng(50));
    match key.product(&x, &refined) {
        Err(Error::GadgetMismatch {
            key: k,
            decomposition,
            ..
        }) => {
            assert_eq!(k, Gadget::of_digits(&crt));
            assert_eq!(decomposition, Gadget::of_digits(&refined));
        }
        other => panic!("unexpected {other:?}"),
    }
    let other = RnsBasis::new(N, &q[..1]).unwrap();
    let rows = vec![
        (Poly::<Ntt>::zero(&basis), Poly::<Ntt>::zero(&basis)),
        (Poly::<Ntt>::zero(&other), Poly::<Ntt>::zero(&other)),
    ];
    assert!(GadgetCiphertext::from_rows(1, Gadget::of_digits(&crt), rows, None).is_err());
    assert!(GadgetCiphertext::from_rows(1, Gadget::of_digits(&crt), Vec::new(), None).is_err());
}

/// The digit gadget product over one limb of a large ring (PEGASUS's whole-ciphertext switch: one
/// limb of `N = 2^16`) splits each limb's digits and products between threads when there are fewer
/// limbs than threads: the same outputs on 1, 2 and 3 threads, inside and outside an active region.
#[test]
fn one_limb_products_are_the_same_on_every_pool() {
    let log_n = 14;
    let n = 1usize << log_n;
    let primes = rnsfhe_math::primes::ntt_primes_of_bits(45, 2 * n as u64, 2, &[]).unwrap();
    let ctx = RlweContext::new(RlweParams {
        log_n,
        q_moduli: vec![primes[0]],
        p_moduli: vec![primes[1]],
        dnum: 1,
        conversion: ConversionMode::Fast,
        secret: SecretDistribution::Ternary,
        sigma: 3.2,
    })
    .unwrap();
    let q = ctx.chain();
    let digits = RnsSignedDigits::new(q, 16, 3).unwrap();
    let mut r = rng(41);
    let small = |r: &mut Csprng| {
        let mut v = vec![0i64; n];
        fill_ternary(r, &mut v);
        Poly::<Coeff>::from_i64(q, &v).unwrap().into_ntt()
    };
    let (s, m) = (small(&mut r), small(&mut r));
    let key = GadgetCiphertext::encrypt(
        ctx.fingerprint(),
        Gadget::of_digits(&digits),
        ctx.gaussian(),
        &s,
        &m,
        &digit_constants(&digits),
        &mut r,
    )
    .unwrap();
    let mut data = vec![0u64; n];
    fill_uniform_mod(&mut r, &q.moduli()[0], &mut data);
    let x = Poly::<Coeff>::from_data(q, data).unwrap();
    let run = |threads: usize, active: bool| {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap();
        let product = || key.product(&x, &digits).unwrap();
        pool.install(|| {
            if active {
                rnsfhe_ring::parallel::active_wait(product)
            } else {
                product()
            }
        })
    };
    let one = run(1, false);
    for threads in [2, 3] {
        for active in [false, true] {
            assert!(
                run(threads, active) == one,
                "{threads} threads, active {active}"
            );
        }
    }
}

/// A sum of gadget products (several terms, `N = 2^14`) over 1, 2, 3 and 5 limbs gives the same outputs
/// on 2 and 3 threads as on one: over fewer limbs than threads it decomposes by coefficient ranges (two
/// limbs on 3 threads), over a number of limbs that is not a multiple of the threads it runs whole-limb
/// tasks and splits the limbs left over finer (3 and 5 limbs on 2 threads, 5 on 3).
#[test]
fn sums_of_products_over_few_limbs_are_the_same_on_every_pool() {
    let log_n = 14;
    let n = 1usize << log_n;
    let primes = rnsfhe_math::primes::ntt_primes_of_bits(45, 2 * n as u64, 5, &[]).unwrap();
    let full = RnsBasis::new(n, &primes).unwrap();
    let digits = RnsSignedDigits::new(&full, 9, 5).unwrap();
    let mut r = rng(43);
    let small = |r: &mut Csprng| {
        let mut v = vec![0i64; n];
        fill_ternary(r, &mut v);
        Poly::<Coeff>::from_i64(&full, &v).unwrap().into_ntt()
    };
    let s = small(&mut r);
    let gaussian = rnsfhe_math::sampling::DiscreteGaussian::with_sigma(3.2).unwrap();
    let keys: Vec<GadgetCiphertext> = (0..2)
        .map(|_| {
            let m = small(&mut r);
            GadgetCiphertext::encrypt(
                1,
                Gadget::of_digits(&digits),
                &gaussian,
                &s,
                &m,
                &digit_constants(&digits),
                &mut r,
            )
            .unwrap()
        })
        .collect();
    for limbs in [1, 2, 3, 5] {
        let basis = full.prefix(limbs).unwrap();
        let mut uniform_n = || {
            let mut data = vec![0u64; limbs * n];
            for (limb, m) in data.chunks_exact_mut(n).zip(basis.moduli()) {
                fill_uniform_mod(&mut r, m, limb);
            }
            Poly::<Coeff>::from_data(&basis, data).unwrap()
        };
        let (x, y) = (uniform_n(), uniform_n());
        let run = |threads: usize| {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap();
            pool.install(|| product_sum(&[(&x, &keys[0]), (&y, &keys[1])], &digits).unwrap())
        };
        let one = run(1);
        for threads in [2, 3] {
            assert!(run(threads) == one, "{limbs} limbs, {threads} threads");
        }
    }
}
