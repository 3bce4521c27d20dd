//! Noise of BFV in the HPS form, measured exactly with the secret key through big-integer CRT
//! composition (`num-bigint`), against the paper:
//!
//! * (a) the growth per multiplication and over a binary tree stays within HPS Eqs. (11)-(13);
//! * (b) HPS multiplication is within 2 bits of a textbook BFV multiplication implemented here over the
//!   integers (tensor over `Z`, exact rounding of `t/Q`, base-`w` relinearization, HPS Sections 3.1-3.2);
//! * (c) decryption by the floating-point (and the wide fixed-point) HPS simple scaling never fails on
//!   10^5 random ciphertexts whose noise sits at the limit allowed by Eq. (10);
//! * Galois key switching adds only the key-switching term of Eq. (13).
//!
//! **Noise** of a ciphertext `ct` encrypting `m` (coefficients in `[0, t)`) is `v = [c_0 + c_1 s (+ c_2
//! s^2) - Delta m]_Q` (centered, `Delta = floor(Q/t)`), the quantity `v'` bounded by HPS Eqs. (10)-(11);
//! we report and compare `||v||_inf`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::sync::Arc;

use num_bigint::{BigInt, RandBigInt};
use num_traits::{One, Signed, ToPrimitive, Zero};
use rand::rngs::StdRng;
use rand::{RngCore, SeedableRng};
use rayon::prelude::*;
use rnsfhe_bfv::{BfvContext, Ciphertext, CoeffEncoder, Decryptor, KeyGenerator, HPS_SIGMA};
use rnsfhe_math::sampling::{fill_uniform_mod, Csprng, DiscreteGaussian};
use rnsfhe_ring::scaling::FractionPath;
use rnsfhe_ring::{Coeff, Poly};

use common::{
    automorphism_plain, context, log2, negacyclic_mod, parts_of, random_values, reduce_signed,
    residues, rng, textbook_tensor, Crt, Limbs, Parts, Setup,
};

/// An independent big-integer view of a context and a secret key: the moduli, `Q`, `Delta` and `s`.
struct Reference {
    n: usize,
    t: u64,
    crt: Crt,
    /// `[floor(Q/t)]_{q_i}`.
    delta: Vec<u64>,
    /// The secret key's coefficients in `{-1, 0, 1}`.
    s: Vec<i64>,
}

impl Reference {
    fn new(ctx: &BfvContext, s: &[i64]) -> Self {
        let crt = Crt::new(ctx);
        let t = ctx.plaintext_modulus();
        let delta_b = &crt.q / t;
        let delta = residues(&delta_b, &crt.qs);
        assert!(s.iter().all(|&c| (-1..=1).contains(&c)), "ternary secret");
        Self {
            n: ctx.n(),
            t,
            crt,
            delta,
            s: s.to_vec(),
        }
    }

    /// `[c_0 + c_1 s + c_2 s^2 + ...]_{q_i}` per limb (Horner, schoolbook products with the ternary `s`).
    fn phase(&self, parts: &Parts) -> Limbs {
        (0..self.crt.qs.len())
            .into_par_iter()
            .map(|i| {
                let q = self.crt.qs[i];
                let mut acc = parts.last().unwrap()[i].clone();
                for p in parts[..parts.len() - 1].iter().rev() {
                    acc = mul_ternary(&acc, &self.s, q);
                    for (a, &c) in acc.iter_mut().zip(&p[i]) {
                        *a = ((*a as u128 + c as u128) % q as u128) as u64;
                    }
                }
                acc
            })
            .collect()
    }

    /// `||[c_0 + c_1 s (+ c_2 s^2) - Delta m]_Q||_inf` for a plaintext `m` with coefficients in `[0, t)`.
    fn noise(&self, parts: &Parts, m: &[u64]) -> BigInt {
        let mut x = self.phase(parts);
        for ((limb, &q), &d) in x.iter_mut().zip(&self.crt.qs).zip(&self.delta) {
            for (a, &mc) in limb.iter_mut().zip(m) {
                let dm = (d as u128 * mc as u128 % q as u128) as u64;
                *a = ((*a as u128 + (q - dm) as u128) % q as u128) as u64;
            }
        }
        self.crt
            .compose(&x)
            .into_iter()
            .map(|v| v.abs())
            .max()
            .unwrap()
    }

    /// `log2` of [`Reference::noise`] of a ciphertext.
    fn log_noise(&self, ct: &Ciphertext, m: &[u64]) -> f64 {
        log2(&self.noise(&parts_of(ct), m))
    }
}

/// `c s mod q` in `Z_q[X]/(X^N + 1)` for a ternary `s` (schoolbook; sums stay below 2^128).
fn mul_ternary(c: &[u64], s: &[i64], q: u64) -> Vec<u64> {
    let n = c.len();
    let (mut pos, mut neg) = (vec![0u128; n], vec![0u128; n]);
    for (j, &sj) in s.iter().enumerate() {
        if sj == 0 {
            continue;
        }
        for (i, &ci) in c.iter().enumerate() {
            let (k, wrap) = if i + j < n {
                (i + j, false)
            } else {
                (i + j - n, true)
            };
            if wrap ^ (sj < 0) {
                neg[k] += ci as u128;
            } else {
                pos[k] += ci as u128;
            }
        }
    }
    reduce_signed(&pos, &neg, q)
}

/// The tools of the noise measurements: a [`Setup`] (keys from `rng(seed)`), the big-integer
/// [`Reference`] of its secret key, a coefficient encoder and a generator of messages (seeded by `seed`).
struct Measured {
    setup: Setup,
    refc: Reference,
    encoder: CoeffEncoder,
    vr: StdRng,
}

impl Measured {
    fn new(ctx: Arc<BfvContext>, seed: u8) -> Self {
        let setup = Setup::new(ctx, seed);
        let refc = Reference::new(&setup.ctx, setup.keys.sk().coefficients());
        Self {
            encoder: CoeffEncoder::new(&setup.ctx),
            vr: StdRng::seed_from_u64(seed as u64),
            setup,
            refc,
        }
    }

    /// A uniform message in `[0, t)^N` and its public-key encryption.
    fn fresh(&mut self) -> (Vec<u64>, Ciphertext) {
        let m = random_values(&mut self.vr, self.setup.n, self.setup.t);
        let pt = self.encoder.encode_u64(&m).unwrap();
        let ct = self.setup.pk_enc.encrypt(&pt, &mut self.setup.r).unwrap();
        (m, ct)
    }

    /// The decrypted coefficients.
    fn decrypt(&self, ct: &Ciphertext) -> Vec<u64> {
        let pt = self.setup.dec.decrypt(ct).unwrap();
        self.encoder.decode_u64(&pt).unwrap()
    }
}

/// The constants of HPS Eqs. (11)-(13) for a context, with the heuristic expansion factor
/// `delta = 2 sqrt(N)` of HPS Section 6.1, `||s||_inf = 1` (ternary), `B_e = 6 sigma` (the discrete
/// Gaussian is cut at 6 sigma) and `||epsilon_s||_inf < 1/4` (Section 5.1).
struct HpsBound {
    /// `C'_1 = (1 + epsilon'_2) delta^2 t ||s||`, `epsilon'_2 = 5 / (delta ||s||)` (Eq. 12).
    c1: f64,
    /// `C'_2 = delta^2 ||s|| ((1 + 2 ||epsilon_s||) ||s|| + t^2) + delta l_{w,2^nu} w k B_e` (Eq. 13).
    c2: f64,
    /// `delta l_{w,2^nu} w k B_e`: the key-switching term of Eq. (13) alone.
    key_switch: f64,
    /// Fresh noise bound `B_e (1 + 2 delta ||s||)` (Section 5.1).
    fresh: f64,
}

impl HpsBound {
    fn new(ctx: &BfvContext) -> Self {
        let n = ctx.n() as f64;
        let t = ctx.plaintext_modulus() as f64;
        let s = 1.0;
        let delta = 2.0 * n.sqrt();
        let b_e = 6.0 * HPS_SIGMA;
        let eps_s = 0.25;
        let k = ctx.params().q_moduli.len();
        let nu = ctx
            .params()
            .q_moduli
            .iter()
            .map(|&q| 64 - q.leading_zeros())
            .max()
            .unwrap();
        // w = 2^relin_base_log with l = ceil(nu / log w) digits per residue, or the plain CRT decomposition
        // (w = 2^nu, one digit).
        let (log_w, l) = match ctx.params().relin_base_log {
            Some(w) => (w, nu.div_ceil(w)),
            None => (nu, 1),
        };
        assert_eq!(ctx.relin_components(), k * l as usize);
        let key_switch = delta * l as f64 * (log_w as f64).exp2() * k as f64 * b_e;
        Self {
            c1: (1.0 + 5.0 / (delta * s)) * delta * delta * t * s,
            c2: delta * delta * s * ((1.0 + 2.0 * eps_s) * s + t * t) + key_switch,
            key_switch,
            fresh: b_e * (1.0 + 2.0 * delta * s),
        }
    }

    /// Eq. (11): `C'_1^L V + L C'_1^(L-1) C'_2`.
    fn tree(&self, depth: u32, v: f64) -> f64 {
        self.c1.powi(depth as i32) * v + depth as f64 * self.c1.powi(depth as i32 - 1) * self.c2
    }
}

/// (a) Binary tree of depth 3 (8 fresh public-key encryptions, 7 multiplications with relinearization):
/// every fresh noise is below `B_e (1 + 2 delta)`, every product's noise below Eq. (11) with `L = 1` and
/// `V` the larger measured noise of its operands (the growth per multiplication), and the root's below
/// Eq. (11) with `L = 3` and `V` the largest fresh noise.
#[test]
fn multiplication_noise_growth_within_hps_eq_11_to_13() {
    for (t, q_bits, relin, seed) in [
        (65537u64, 55u32, None, 1u8),
        (65537, 55, Some(30), 2),
        (2, 55, Some(30), 3),
    ] {
        let mut fx = Measured::new(context(11, t, q_bits, 3, relin), seed);
        let bound = HpsBound::new(&fx.setup.ctx);
        // (message, ciphertext, measured log2 noise)
        let mut level: Vec<(Vec<u64>, Ciphertext, f64)> = (0..8)
            .map(|_| {
                let (m, ct) = fx.fresh();
                let v = fx.refc.log_noise(&ct, &m);
                (m, ct, v)
            })
            .collect();
        let v_fresh = level.iter().map(|x| x.2).fold(f64::MIN, f64::max);
        assert!(
            v_fresh < bound.fresh.log2(),
            "fresh noise 2^{v_fresh:.2} above B_e (1 + 2 delta) = 2^{:.2}",
            bound.fresh.log2()
        );
        let mut report = format!(
            "t = {t}, N = 2^11, k = 3 x {q_bits} bits, relin {relin:?}: fresh 2^{v_fresh:.2} (bound 2^{:.2})",
            bound.fresh.log2()
        );
        for depth in 1..=3u32 {
            let mut worst_margin = f64::MAX;
            let mut worst = f64::MIN;
            level = level
                .chunks(2)
                .map(|pair| {
                    let (m1, c1, v1) = &pair[0];
                    let (m2, c2, v2) = &pair[1];
                    let m = negacyclic_mod(m1, m2, t);
                    let ct = fx.setup.ev.multiply(c1, c2, &fx.setup.keys.rk).unwrap();
                    assert_eq!(fx.decrypt(&ct), m);
                    let v = fx.refc.log_noise(&ct, &m);
                    let v_in = v1.max(*v2);
                    // Eq. (11) with L = 1: C'_1 V + C'_2, V the larger operand noise.
                    let step_bound = (bound.c1 * v_in.exp2() + bound.c2).log2();
                    assert!(
                        v < step_bound,
                        "t = {t}, relin {relin:?}, depth {depth}: noise 2^{v:.2} above C'_1 V + C'_2 = 2^{step_bound:.2}"
                    );
                    assert!(v > v_in, "a multiplication must grow the noise");
                    worst_margin = worst_margin.min(step_bound - v);
                    worst = worst.max(v);
                    (m, ct, v)
                })
                .collect();
            let tree_bound = bound.tree(depth, v_fresh.exp2()).log2();
            assert!(
                worst < tree_bound,
                "t = {t}, relin {relin:?}: depth-{depth} noise 2^{worst:.2} above Eq. (11) 2^{tree_bound:.2}"
            );
            report += &format!(
                "; depth {depth}: 2^{worst:.2} (Eq. 11 tree bound 2^{tree_bound:.2}, smallest per-step margin {worst_margin:.2} bits)"
            );
        }
        eprintln!("{report}");
    }
}

/// A textbook BFV relinearization key (HPS Section 3.2 (b)): `W_i = (beta_i, alpha_i)` with
/// `beta_i = [w^i s^2 - alpha_i s + e_i]_Q`, `i < l = ceil(log2 Q / log2 w)`, as residues.
struct TextbookRelinKey {
    log_w: u32,
    /// `(beta_i, alpha_i)`.
    pairs: Vec<(Limbs, Limbs)>,
}

impl TextbookRelinKey {
    fn new(refc: &Reference, log_w: u32, rng: &mut Csprng) -> Self {
        let n = refc.n;
        let digits = (refc.crt.q.bits() as u32).div_ceil(log_w);
        // s^2 over the integers (|coefficients| <= N).
        let mut s2 = vec![0i64; n];
        for (i, &a) in refc.s.iter().enumerate() {
            for (j, &b) in refc.s.iter().enumerate() {
                if i + j < n {
                    s2[i + j] += a * b;
                } else {
                    s2[i + j - n] -= a * b;
                }
            }
        }
        let gauss = DiscreteGaussian::new(HPS_SIGMA, 6.0).unwrap();
        let pairs = (0..digits)
            .map(|d| {
                let e = gauss.sample_vec(rng, n);
                let w_d = BigInt::one() << (log_w * d) as usize;
                let mut beta = Vec::new();
                let mut alpha = Vec::new();
                for &q in &refc.crt.qs {
                    let m = rnsfhe_math::Modulus::new(q).unwrap();
                    let mut a = vec![0u64; n];
                    fill_uniform_mod(rng, &m, &mut a);
                    let a_s = mul_ternary(&a, &refc.s, q);
                    let wq = residues(&w_d, &[q])[0];
                    let b: Vec<u64> = (0..n)
                        .map(|c| {
                            let s2c = s2[c].rem_euclid(q as i64) as u128;
                            let ec = e[c].rem_euclid(q as i64) as u128;
                            let q = q as u128;
                            ((wq as u128 * s2c % q + q - a_s[c] as u128 + ec) % q) as u64
                        })
                        .collect();
                    beta.push(b);
                    alpha.push(a);
                }
                (beta, alpha)
            })
            .collect();
        Self { log_w, pairs }
    }
}

/// Textbook BFV multiplication (HPS Sections 3.1-3.2): [`textbook_tensor`], then relinearization with
/// the base-`w` digits `d_i` of `c*_2 in [0, Q)`: `(c*_0 + sum d_i beta_i, c*_1 + sum d_i alpha_i)`.
fn textbook_multiply(refc: &Reference, a: &Parts, b: &Parts, rk: &TextbookRelinKey) -> Parts {
    let c = textbook_tensor(&refc.crt, refc.t, a, b);
    let mask = (BigInt::one() << rk.log_w as usize) - 1;
    let digits: Vec<Vec<u64>> = (0..rk.pairs.len())
        .map(|d| {
            c[2].iter()
                .map(|x| ((x >> (rk.log_w as usize * d)) & &mask).to_u64().unwrap())
                .collect()
        })
        .collect();
    let c0 = refc.crt.to_limbs(&c[0]);
    let c1 = refc.crt.to_limbs(&c[1]);
    // `use_alpha`: accumulate into c*_1 with the alpha_i, else into c*_0 with the beta_i.
    let relin = |base: Limbs, use_alpha: bool| -> Limbs {
        base.into_iter()
            .enumerate()
            .collect::<Vec<_>>()
            .into_par_iter()
            .map(|(i, mut limb)| {
                let q = refc.crt.qs[i];
                for (d, pair) in digits.iter().zip(&rk.pairs) {
                    let key = if use_alpha { &pair.1 } else { &pair.0 };
                    let prod = negacyclic_mod(d, &key[i], q);
                    for (x, p) in limb.iter_mut().zip(prod) {
                        *x = ((*x as u128 + p as u128) % q as u128) as u64;
                    }
                }
                limb
            })
            .collect()
    };
    vec![relin(c0, false), relin(c1, true)]
}

/// (b) HPS multiplication against textbook BFV over the integers, one and two multiplications
/// (`ct_0 ct_1`, then `(ct_0 ct_1) ct_2`), from the same fresh ciphertexts. Textbook relinearization uses
/// base `w` equal to the HPS digit base (`2^30`) or, for the plain CRT decomposition, `w = 2^nu` (nu the
/// prime size): HPS Eq. (13)'s term `delta l_{w,2^nu} w k B_e` against Eq. (9)'s `delta l_{w,q} w B_e`.
/// Both noises (and the unrelinearized tensor-and-scale outputs) must be within 2 bits of each other.
#[test]
fn hps_multiplication_within_2_bits_of_textbook_bigint() {
    for (relin, log_w, seed) in [(None, 55u32, 11u8), (Some(30), 30, 12)] {
        let t = 65537u64;
        let mut fx = Measured::new(context(10, t, 55, 3, relin), seed);
        assert!(fx
            .setup
            .ctx
            .params()
            .q_moduli
            .iter()
            .all(|&q| 64 - q.leading_zeros() == 55));
        let tb_rk = TextbookRelinKey::new(&fx.refc, log_w, &mut fx.setup.r);
        let (ms, cts): (Vec<_>, Vec<_>) = (0..3).map(|_| fx.fresh()).unzip();
        let parts: Vec<Parts> = cts.iter().map(parts_of).collect();
        let (refc, ev, rk) = (&fx.refc, &fx.setup.ev, &fx.setup.keys.rk);
        let noise = |p: &Parts, m: &[u64]| log2(&refc.noise(p, m));
        let m01 = negacyclic_mod(&ms[0], &ms[1], t);
        let m012 = negacyclic_mod(&m01, &ms[2], t);
        // Tensor and scale alone (3 parts, under (1, s, s^2)).
        let hps3 = parts_of(&ev.multiply_no_relin(&cts[0], &cts[1]).unwrap());
        let tb3: Parts = textbook_tensor(&refc.crt, t, &parts[0], &parts[1])
            .iter()
            .map(|c| refc.crt.to_limbs(c))
            .collect();
        let (v_hps3, v_tb3) = (noise(&hps3, &m01), noise(&tb3, &m01));
        // One multiplication with relinearization.
        let hps1 = ev.multiply(&cts[0], &cts[1], rk).unwrap();
        let tb1 = textbook_multiply(refc, &parts[0], &parts[1], &tb_rk);
        let (v_hps1, v_tb1) = (refc.log_noise(&hps1, &m01), noise(&tb1, &m01));
        // Two multiplications, each scheme on its own output.
        let hps2 = ev.multiply(&hps1, &cts[2], rk).unwrap();
        let tb2 = textbook_multiply(refc, &tb1, &parts[2], &tb_rk);
        let (v_hps2, v_tb2) = (refc.log_noise(&hps2, &m012), noise(&tb2, &m012));
        assert_eq!(fx.decrypt(&hps2), m012);
        let limit = log2(&eq10_limit(&refc.crt.q, t));
        eprintln!(
            "relin {relin:?} (textbook w = 2^{log_w}): tensor+scale HPS 2^{v_hps3:.2} vs textbook 2^{v_tb3:.2}; \
             1 mult HPS 2^{v_hps1:.2} vs textbook 2^{v_tb1:.2}; 2 mults HPS 2^{v_hps2:.2} vs textbook 2^{v_tb2:.2}; \
             Eq. (10) limit 2^{limit:.2}"
        );
        for (what, h, tb) in [
            ("tensor and scale", v_hps3, v_tb3),
            ("one multiplication", v_hps1, v_tb1),
            ("two multiplications", v_hps2, v_tb2),
        ] {
            assert!(
                (h - tb).abs() <= 2.0,
                "relin {relin:?}, {what}: HPS noise 2^{h:.2}, textbook 2^{tb:.2}"
            );
            assert!(
                tb < limit,
                "textbook {what} must stay within Eq. (10): 2^{tb:.2}"
            );
        }
        assert!(v_hps2 > v_hps1 + 10.0, "the second product grows the noise");
    }
}

/// Largest magnitude allowed by HPS Eq. (10), `||v'||_inf < (Delta - r_t(Q)) / 4` with
/// `Delta = floor(Q/t)` and `r_t(Q) = t (Q/t - Delta) = Q - t Delta = Q mod t`:
/// `E_max = floor((Delta - r_t(Q) - 1) / 4)`, the largest integer `e` with `4 e < Delta - r_t(Q)`.
fn eq10_limit(q: &BigInt, t: u64) -> BigInt {
    let delta = q / t;
    let r_t = q - &delta * t;
    (delta - r_t - 1u32) / 4u32
}

/// One configuration of (c): `count` ciphertexts `(c_0, c_1) = ([Delta m + e - a s]_Q, a)` with `a`
/// uniform, `m` uniform in `[0, t)^N` and every noise coefficient `|e_j| <= E_max` (Eq. (10), see
/// [`eq10_limit`]): a quarter of the coefficients exactly `+-E_max`, half `+-(E_max - u)` with `u`
/// uniform below `2^32`, a quarter with a magnitude drawn from 4096 values uniform in `[0, E_max]`;
/// random signs. Returns the number of wrongly decrypted coefficients.
fn decrypt_at_limit(ctx: &Arc<BfvContext>, count: usize, seed: u8) -> usize {
    let n = ctx.n();
    let t = ctx.plaintext_modulus();
    let mut r = rng(seed);
    let kg = KeyGenerator::new(ctx, &mut r).unwrap();
    let refc = Reference::new(ctx, kg.secret_key().coefficients());
    let dec = Decryptor::new(ctx, kg.secret_key()).unwrap();
    let basis = ctx.q_basis();
    let moduli = basis.moduli().to_vec();
    let s_ntt = Poly::<Coeff>::from_i64(basis, kg.secret_key().coefficients())
        .unwrap()
        .into_ntt();
    let e_max = eq10_limit(&refc.crt.q, t);
    let e_max_res = residues(&e_max, &refc.crt.qs);
    let mut br = rand::rngs::StdRng::seed_from_u64(seed as u64);
    let table: Vec<Vec<u64>> = (0..4096)
        .map(|_| {
            residues(
                &br.gen_bigint_range(&BigInt::zero(), &(&e_max + 1u32)),
                &refc.crt.qs,
            )
        })
        .collect();
    let delta_shoup: Vec<_> = moduli
        .iter()
        .zip(&refc.delta)
        .map(|(qi, &d)| qi.shoup(d))
        .collect();
    // Builds ciphertext number `idx`; returns it with its message and whether its noise reaches E_max.
    let build = |idx: usize| {
        let mut seed_bytes = [seed; 32];
        seed_bytes[..8].copy_from_slice(&(idx as u64).to_le_bytes());
        let mut cr = Csprng::insecure_from_seed_for_tests(seed_bytes);
        // m_j = floor(r t / 2^64) for a uniform 64-bit r (uniform up to a bias below t / 2^64).
        let m: Vec<u64> = (0..n)
            .map(|_| ((cr.next_u64() as u128 * t as u128) >> 64) as u64)
            .collect();
        let mut x = vec![0u64; moduli.len() * n];
        for j in 0..n {
            // One 64-bit draw: mode (2 bits), sign (1 bit), table index (12 bits), u (32 bits).
            let r = cr.next_u64();
            let mode = r & 3;
            let negative = (r >> 2) & 1 == 1;
            let pick = ((r >> 3) & 4095) as usize;
            let u = r >> 32;
            for (i, qi) in moduli.iter().enumerate() {
                let mag = match mode {
                    0 => e_max_res[i],
                    1 | 2 => qi.sub(e_max_res[i], u),
                    _ => table[pick][i],
                };
                let e = if negative { qi.neg(mag) } else { mag };
                x[i * n + j] = qi.add(qi.mul_shoup(m[j], delta_shoup[i]), e);
            }
        }
        let mut a = vec![0u64; moduli.len() * n];
        for (chunk, qi) in a.chunks_exact_mut(n).zip(&moduli) {
            fill_uniform_mod(&mut cr, qi, chunk);
        }
        let a = Poly::<Coeff>::from_data(basis, a).unwrap();
        let a_s = a.clone().into_ntt().mul(&s_ntt).unwrap().into_coeff();
        let c0 = Poly::<Coeff>::from_data(basis, x)
            .unwrap()
            .sub(&a_s)
            .unwrap();
        (Ciphertext::from_parts(ctx, vec![c0, a]).unwrap(), m)
    };
    // The construction really sits at the limit: the exact noise of a sample is E_max (some coefficient
    // has mode 0 with overwhelming probability), and its noise budget is 1 bit (t ||v|| / Q = 1/4).
    let (ct0, m0) = build(0);
    assert_eq!(refc.noise(&parts_of(&ct0), &m0), e_max);
    let budget = dec.noise_budget(&ct0).unwrap();
    assert!((budget - 1.0).abs() < 0.01, "budget {budget}");
    // Control: noise 3 Delta / 4, beyond the textbook bound (Delta - r_t) / 2 of Eq. (6), decrypts to
    // m + 1 in every coefficient, so noise of this size does reach the rounding.
    {
        let delta_b = &refc.crt.q / t;
        let e3: BigInt = &delta_b * 3u32 / 4u32;
        let e3_res = residues(&e3, &refc.crt.qs);
        let c1 = ct0.parts()[1].clone();
        let mut c0 = ct0.parts()[0].clone().into_data();
        let m_res: Vec<Vec<u64>> = refc
            .crt
            .qs
            .iter()
            .map(|&q| m0.iter().map(|&v| v % q).collect())
            .collect();
        // c_0 + c_1 s = Delta m + e: add (3 Delta / 4 - e) coefficient-wise by rebuilding from the phase.
        let phase = refc.phase(&parts_of(&ct0));
        for (i, qi) in moduli.iter().enumerate() {
            for j in 0..n {
                let dm = qi.mul(refc.delta[i], m_res[i][j]);
                let target = qi.add(dm, e3_res[i]);
                // c_0 += target - phase.
                c0[i * n + j] = qi.add(c0[i * n + j], qi.sub(target, phase[i][j]));
            }
        }
        let c0 = Poly::<Coeff>::from_data(basis, c0).unwrap();
        let over = Ciphertext::from_parts(ctx, vec![c0, c1]).unwrap();
        let expect: Vec<u64> = m0.iter().map(|&v| (v + 1) % t).collect();
        assert_eq!(dec.decrypt(&over).unwrap().coefficients(), &expect[..]);
    }
    (0..count)
        .into_par_iter()
        .map(|idx| {
            let (ct, m) = build(idx);
            let got = dec.decrypt(&ct).unwrap();
            got.coefficients()
                .iter()
                .zip(&m)
                .filter(|(a, b)| a != b)
                .count()
        })
        .sum()
}

/// (c) 10^5 decryptions (`N = 2^10`, so 1.024 * 10^8 coefficients scaled) of ciphertexts at the noise
/// limit of HPS Eq. (10) (see [`eq10_limit`] and [`decrypt_at_limit`]), on the `f64` path of the simple
/// scaler (HPS Sections 2.3 and 4.4; primes of 47 bits, the largest HPS allow for doubles) with 3 and 8
/// limbs and with a 40-bit `t`, and on the wide fixed-point path (60-bit primes). Not one coefficient
/// may decrypt wrongly.
#[test]
fn float_scaling_never_fails_at_eq_10_noise_limit() {
    let configs: [(u64, u32, usize, FractionPath, usize, u8); 4] = [
        (65537, 47, 3, FractionPath::Float, 30_000, 21),
        (2, 47, 8, FractionPath::Float, 20_000, 22),
        ((1 << 40) - 87, 47, 4, FractionPath::Float, 25_000, 23),
        (65537, 60, 3, FractionPath::Wide, 25_000, 24),
    ];
    let mut total = 0;
    for (t, q_bits, k, path, count, seed) in configs {
        let ctx = context(10, t, q_bits, k, None);
        assert_eq!(FractionPath::select(ctx.q_basis().moduli()), path);
        let start = std::time::Instant::now();
        let wrong = decrypt_at_limit(&ctx, count, seed);
        eprintln!(
            "t = {t}, {k} x {q_bits} bits: {count} ciphertexts in {:?}",
            start.elapsed()
        );
        assert_eq!(
            wrong, 0,
            "t = {t}, {k} x {q_bits}-bit primes ({path:?}): {wrong} wrong coefficients"
        );
        total += count;
    }
    assert!(total >= 100_000);
}

/// Galois key switching adds at most the key-switching term `delta l_{w,2^nu} w k B_e` of HPS Eq. (13)
/// to the (permuted, same-norm) noise: measured after a row rotation and a column swap, fresh and after a
/// multiplication.
#[test]
fn galois_noise_within_key_switching_term() {
    for (relin, seed) in [(None, 31u8), (Some(30), 32)] {
        let t = 65537u64;
        let mut fx = Measured::new(context(11, t, 55, 3, relin), seed);
        let gk = fx
            .setup
            .keys
            .kg
            .galois_keys(&[1, -5], true, &mut fx.setup.r)
            .unwrap();
        let bound = HpsBound::new(&fx.setup.ctx);
        let ((m1, c1), (m2, c2)) = (fx.fresh(), fx.fresh());
        let (refc, ev, n) = (&fx.refc, &fx.setup.ev, fx.setup.n);
        let prod = ev.multiply(&c1, &c2, &fx.setup.keys.rk).unwrap();
        let m12 = negacyclic_mod(&m1, &m2, t);
        for (what, ct, m) in [("fresh", &c1, &m1), ("product", &prod, &m12)] {
            let v_in = refc.noise(&parts_of(ct), m).to_f64().unwrap();
            let b = (v_in + bound.key_switch).log2();
            for (g, out) in [
                (3usize, ev.rotate_rows(ct, 1, &gk).unwrap()),
                (
                    fx.setup.ctx.galois_group().element_of_step(-5).value(),
                    ev.rotate_rows(ct, -5, &gk).unwrap(),
                ),
                (2 * n - 1, ev.rotate_columns(ct, &gk).unwrap()),
            ] {
                // The plaintext becomes m(X^g).
                let v = refc.log_noise(&out, &automorphism_plain(m, g, t));
                eprintln!(
                    "relin {relin:?}, {what}, g = {g}: noise 2^{:.2} -> 2^{v:.2} (bound 2^{b:.2})",
                    v_in.log2()
                );
                assert!(
                    v < b,
                    "relin {relin:?}, {what}, g = {g}: 2^{v:.2} >= 2^{b:.2}"
                );
            }
        }
    }
}

#[test]
fn eq10_limit_is_the_largest_allowed_value() {
    for (log_q, add, t) in [
        (10u32, -24i64, 7u64),
        (40, 0, 65537),
        (20, -65, 2),
        (100, 12345, (1 << 40) - 87),
    ] {
        let q = (BigInt::one() << log_q as usize) + add;
        let e = eq10_limit(&q, t);
        let delta = &q / t;
        let r_t = &q - &delta * t;
        assert!(delta > r_t, "a meaningful configuration: Delta > r_t(Q)");
        let lhs = |x: &BigInt| x * 4u32;
        assert!(lhs(&e) < &delta - &r_t, "q = {q}, t = {t}");
        assert!(lhs(&(&e + 1u32)) >= &delta - &r_t, "q = {q}, t = {t}");
        assert!(!e.is_negative());
    }
}
