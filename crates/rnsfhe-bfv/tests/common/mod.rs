//! Shared helpers of the BFV integration tests: deterministic generators, small insecure contexts with
//! their keys and tools, plaintext references (negacyclic products, automorphisms) and big-integer CRT
//! references (composition, the textbook tensor-and-scale step of HPS Sections 3.1-3.2).
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;

use num_bigint::BigInt;
use num_traits::{One, Signed, ToPrimitive, Zero};
use rand::Rng;
use rayon::prelude::*;
use rnsfhe_bfv::{
    BfvContext, BfvParams, Ciphertext, Decryptor, Encryptor, Evaluator, KeyGenerator, PublicKey,
    RelinKey, SecretKey,
};
use rnsfhe_math::sampling::Csprng;

/// Residues of a polynomial: `limbs x N`.
pub type Limbs = Vec<Vec<u64>>;
/// Parts of a ciphertext, each as [`Limbs`].
pub type Parts = Vec<Limbs>;

/// A deterministic generator for tests.
pub fn rng(seed: u8) -> Csprng {
    Csprng::insecure_from_seed_for_tests([seed; 32])
}

/// A context with `N = 2^log_n`, plaintext modulus `t`, `k` primes of `q_bits` bits and the given
/// relinearization digits, insecure parameters allowed.
pub fn context(
    log_n: u32,
    t: u64,
    q_bits: u32,
    k: usize,
    relin_base_log: Option<u32>,
) -> Arc<BfvContext> {
    let mut p = BfvParams::with_bit_sizes(log_n, t, q_bits, k).unwrap();
    p.relin_base_log = relin_base_log;
    p.insecure_for_testing = true;
    BfvContext::new(p).unwrap()
}

/// A key generator with its public and relinearization keys.
pub struct Keys {
    pub kg: KeyGenerator,
    pub pk: PublicKey,
    pub rk: RelinKey,
}

impl Keys {
    /// The secret key.
    pub fn sk(&self) -> &SecretKey {
        self.kg.secret_key()
    }
}

/// Generates the secret key, then the public key, then the relinearization key.
pub fn keys(ctx: &Arc<BfvContext>, rng: &mut Csprng) -> Keys {
    let kg = KeyGenerator::new(ctx, rng).unwrap();
    let pk = kg.public_key(rng).unwrap();
    let rk = kg.relin_key(rng).unwrap();
    Keys { kg, pk, rk }
}

/// A context with its keys (from `rng(seed)`, see [`keys`]), public- and secret-key encryptors, a
/// decryptor and an evaluator; `r` is the generator, to go on with.
pub struct Setup {
    pub ctx: Arc<BfvContext>,
    pub n: usize,
    pub t: u64,
    pub r: Csprng,
    pub keys: Keys,
    pub pk_enc: Encryptor,
    pub sk_enc: Encryptor,
    pub dec: Decryptor,
    pub ev: Evaluator,
}

impl Setup {
    pub fn new(ctx: Arc<BfvContext>, seed: u8) -> Self {
        let mut r = rng(seed);
        let keys = keys(&ctx, &mut r);
        Self {
            n: ctx.n(),
            t: ctx.plaintext_modulus(),
            r,
            pk_enc: Encryptor::with_public_key(&ctx, &keys.pk).unwrap(),
            sk_enc: Encryptor::with_secret_key(&ctx, keys.sk()).unwrap(),
            dec: Decryptor::new(&ctx, keys.sk()).unwrap(),
            ev: Evaluator::new(&ctx),
            keys,
            ctx,
        }
    }
}

/// `n` values uniform in `[0, t)`.
pub fn random_values(rng: &mut impl Rng, n: usize, t: u64) -> Vec<u64> {
    (0..n).map(|_| rng.gen_range(0..t)).collect()
}

/// `[p - m]_q` for sums `p` and `m` of the positive and negative terms of a coefficient.
pub fn reduce_signed(pos: &[u128], neg: &[u128], q: u64) -> Vec<u64> {
    let q = q as u128;
    pos.iter()
        .zip(neg)
        .map(|(&p, &m)| ((p % q + q - m % q) % q) as u64)
        .collect()
}

/// `a b mod q` in `Z_q[X]/(X^N + 1)` (schoolbook), the sums of products reduced once: needs
/// `N max(a) max(b) < 2^128` (asserted; e.g. `a, b < 2^56` and `N <= 2^12`).
pub fn negacyclic_mod(a: &[u64], b: &[u64], q: u64) -> Vec<u64> {
    let n = a.len();
    let max = |x: &[u64]| x.iter().copied().max().unwrap_or(0) as u128;
    assert!(
        max(a)
            .checked_mul(max(b))
            .and_then(|p| p.checked_mul(n as u128))
            .is_some(),
        "negacyclic_mod: sums of products could overflow"
    );
    let (mut pos, mut neg) = (vec![0u128; n], vec![0u128; n]);
    for (i, &x) in a.iter().enumerate() {
        if x == 0 {
            continue;
        }
        for (j, &y) in b.iter().enumerate() {
            let p = x as u128 * y as u128;
            if i + j < n {
                pos[i + j] += p;
            } else {
                neg[i + j - n] += p;
            }
        }
    }
    reduce_signed(&pos, &neg, q)
}

/// `m(X^g)` in `Z_t[X]/(X^N + 1)`: coefficient `i` moves to `i g mod 2N`, negated past `N`.
pub fn automorphism_plain(m: &[u64], g: usize, t: u64) -> Vec<u64> {
    let n = m.len();
    let mut out = vec![0u64; n];
    for (i, &c) in m.iter().enumerate() {
        let e = i * g % (2 * n);
        if e < n {
            out[e] = c;
        } else {
            out[e - n] = (t - c) % t;
        }
    }
    out
}

/// The residues of every part of a ciphertext.
pub fn parts_of(ct: &Ciphertext) -> Parts {
    ct.parts()
        .iter()
        .map(|p| p.limbs().map(|l| l.to_vec()).collect())
        .collect()
}

/// `log2 x` (through `f64`).
pub fn log2(x: &BigInt) -> f64 {
    x.to_f64().unwrap().log2()
}

/// The residues of `x` modulo each of `qs`, in `[0, q_i)`.
pub fn residues(x: &BigInt, qs: &[u64]) -> Vec<u64> {
    qs.iter()
        .map(|&q| {
            let q_b = BigInt::from(q);
            (((x % &q_b) + &q_b) % &q_b).to_u64().unwrap()
        })
        .collect()
}

/// An independent big-integer view of an RNS basis: the moduli, `Q` and the CRT coefficients.
pub struct Crt {
    pub qs: Vec<u64>,
    pub q: BigInt,
    /// `(Q/q_i) [(Q/q_i)^-1]_{q_i}`: the CRT reconstruction coefficients.
    coeffs: Vec<BigInt>,
}

impl Crt {
    /// The basis of the ciphertext primes of `ctx`.
    pub fn new(ctx: &BfvContext) -> Self {
        let qs = ctx.params().q_moduli.clone();
        let q: BigInt = qs.iter().map(|&x| BigInt::from(x)).product();
        let coeffs = qs
            .iter()
            .map(|&qi| {
                let qi_b = BigInt::from(qi);
                let qstar = &q / &qi_b;
                let inv = qstar.modpow(&(&qi_b - 2u32), &qi_b);
                qstar * inv
            })
            .collect();
        Self { qs, q, coeffs }
    }

    /// Centered representatives in `[-Q/2, Q/2)` of the coefficients given by their residues.
    pub fn compose(&self, limbs: &Limbs) -> Vec<BigInt> {
        (0..limbs[0].len())
            .into_par_iter()
            .map(|c| {
                let mut acc = BigInt::zero();
                for (limb, f) in limbs.iter().zip(&self.coeffs) {
                    acc += f * limb[c];
                }
                let mut x = acc % &self.q;
                if &x * 2 >= self.q {
                    x -= &self.q;
                }
                x
            })
            .collect()
    }

    /// The residues (`limbs x N`) of the given coefficients.
    pub fn to_limbs(&self, values: &[BigInt]) -> Limbs {
        let per_coeff: Vec<Vec<u64>> = values.iter().map(|x| residues(x, &self.qs)).collect();
        (0..self.qs.len())
            .map(|i| per_coeff.iter().map(|r| r[i]).collect())
            .collect()
    }
}

/// `x y` in `Z[X]/(X^N + 1)` over the integers (schoolbook, no modular reduction).
pub fn conv_z(x: &[BigInt], y: &[BigInt]) -> Vec<BigInt> {
    let n = x.len();
    (0..n)
        .into_par_iter()
        .map(|k| {
            let mut acc = BigInt::zero();
            for i in 0..n {
                if i <= k {
                    acc += &x[i] * &y[k - i];
                } else {
                    acc -= &x[i] * &y[k + n - i];
                }
            }
            acc
        })
        .collect()
}

/// `round(t c / Q) mod Q` in `[0, Q)`, exactly: `floor((2 t c + Q) / 2Q)`, floor division for
/// negatives.
pub fn scale_round(c: &BigInt, t: u64, q: &BigInt) -> BigInt {
    let num = c * (2 * t) + q;
    let two_q = q * 2;
    let mut y = &num / &two_q;
    if num.is_negative() && &y * &two_q != num {
        y -= BigInt::one();
    }
    ((y % q) + q) % q
}

/// The tensor-and-scale step of textbook BFV (HPS Sections 3.1-3.2, Section 4.1's reference):
/// `c*_l = [round(t/Q c'_l)]_Q` with `c'_0 = a_0 b_0`, `c'_1 = a_0 b_1 + a_1 b_0`, `c'_2 = a_1 b_1` over
/// the integers; as values in `[0, Q)`.
pub fn textbook_tensor(crt: &Crt, t: u64, a: &Parts, b: &Parts) -> Vec<Vec<BigInt>> {
    let (a0, a1) = (crt.compose(&a[0]), crt.compose(&a[1]));
    let (b0, b1) = (crt.compose(&b[0]), crt.compose(&b[1]));
    let c0 = conv_z(&a0, &b0);
    let c1: Vec<BigInt> = conv_z(&a0, &b1)
        .into_iter()
        .zip(conv_z(&a1, &b0))
        .map(|(x, y)| x + y)
        .collect();
    let c2 = conv_z(&a1, &b1);
    [c0, c1, c2]
        .iter()
        .map(|c| c.par_iter().map(|x| scale_round(x, t, &crt.q)).collect())
        .collect()
}
