//! Basis conversion (Fast / ExactFloat / ExactInteger), ModUp / ModDown and rescaling checked against a
//! `num-bigint` CRT reference on at least 10^5 random coefficients per configuration, plus the empirical
//! failure rate of the unguarded Qu-Xu error term against Theorem 1 and the error cases.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;

use num_bigint::BigUint;
use num_traits::ToPrimitive;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha20Rng;
use rnsfhe_math::primes::{
    closeness_eta, is_prime, ntt_primes_of_bits, qu_xu_interval, qu_xu_max_eta, qu_xu_primes,
};
use rnsfhe_ring::conversion::qu_xu_error_term_unguarded;
use rnsfhe_ring::{
    BasisConverter, Coeff, ConversionMode, Error, Exactness, ModSwitcher, Poly, Rescaler, RnsBasis,
};

const N: usize = 1024;
const TWO_N: u64 = 2 * N as u64;
/// 100 polynomials of degree 1024: 102400 coefficients per configuration.
const POLYS: usize = 100;
const ALL_MODES: [ConversionMode; 3] = [
    ConversionMode::Fast,
    ConversionMode::ExactFloat,
    ConversionMode::ExactInteger,
];

mod common;

use common::Crt;

fn modp(x: &BigUint, p: u64) -> u64 {
    (x % p).to_u64().unwrap()
}

fn random_poly(basis: &Arc<RnsBasis>, rng: &mut ChaCha20Rng) -> Poly<Coeff> {
    let n = basis.degree();
    let data = basis
        .values()
        .iter()
        .flat_map(|&q| (0..n).map(|_| rng.gen_range(0..q)).collect::<Vec<_>>())
        .collect();
    Poly::from_data(basis, data).unwrap()
}

fn coefficient(p: &Poly<Coeff>, c: usize) -> Vec<u64> {
    p.limbs().map(|limb| limb[c]).collect()
}

/// Per coefficient: `X mod p_j` for every target, `Q mod p_j`, `alpha`, whether `X > Q/2`, and the number
/// `upper_y` of `y_i > q_i / 2` (the fast conversion subtracts `upper_y Q`).
struct Expected {
    x_mod_p: Vec<Vec<u64>>, // [coefficient][target]
    alpha: Vec<u64>,
    upper_y: Vec<u64>,
    upper: Vec<bool>,
    q_mod_p: Vec<u64>,
}

fn expected_for(crt: &Crt, inputs: &[Poly<Coeff>], targets: &[u64]) -> Expected {
    let mut e = Expected {
        x_mod_p: Vec::new(),
        alpha: Vec::new(),
        upper_y: Vec::new(),
        upper: Vec::new(),
        q_mod_p: targets.iter().map(|&p| modp(&crt.q, p)).collect(),
    };
    for (pi, poly) in inputs.iter().enumerate() {
        for c in 0..poly.degree() {
            let res = coefficient(poly, c);
            let (_, x, alpha) = crt.fast_sum(&res);
            if pi == 0 && c < 64 {
                // Validate the reference itself: X has the given residues.
                assert_eq!(crt.residues_of(&x), res);
            }
            e.x_mod_p
                .push(targets.iter().map(|&p| modp(&x, p)).collect());
            e.alpha.push(alpha);
            let upper_y = crt
                .y(&res)
                .iter()
                .zip(&crt.moduli)
                .filter(|(&y, &m)| y > m / 2)
                .count() as u64;
            e.upper_y.push(upper_y);
            e.upper.push(&x * 2u32 > crt.q);
        }
    }
    e
}

/// Runs every mode in `modes` from `src` to the first 1, 2 and 4 primes of `dst` on 102400 random
/// coefficients and counts mismatches against the bigint reference (must be 0).
fn check_conversion(name: &str, src: &[u64], dst: &[u64], modes: &[ConversionMode], seed: u64) {
    assert_eq!(dst.len(), 4);
    let mut rng = ChaCha20Rng::seed_from_u64(seed);
    let from = RnsBasis::new(N, src).unwrap();
    let to_full = RnsBasis::new(N, dst).unwrap();
    let crt = Crt::new(src);
    let l = src.len() as u64;
    let inputs: Vec<Poly<Coeff>> = (0..POLYS).map(|_| random_poly(&from, &mut rng)).collect();
    let exp = expected_for(&crt, &inputs, dst);
    assert!(
        exp.alpha.iter().all(|&a| a < l),
        "{name}: uncentered alpha out of [0, l)"
    );
    // The centered fast conversion's alpha - upper_y lies in [-ceil(l/2), ceil(l/2)).
    let half = l.div_ceil(2) as i64;
    assert!(
        exp.alpha
            .iter()
            .zip(&exp.upper_y)
            .all(|(&a, &u)| (-half..half).contains(&(a as i64 - u as i64))),
        "{name}: fast-conversion alpha out of [-ceil(l/2), ceil(l/2))"
    );
    for k in [1usize, 2, 4] {
        let to = to_full.prefix(k).unwrap();
        for &mode in modes {
            let conv = BasisConverter::new(&from, &to, mode).unwrap();
            let mut mismatches = 0usize;
            let mut v_mismatches = 0usize;
            for (pi, poly) in inputs.iter().enumerate() {
                let out = conv.convert(poly).unwrap();
                assert!(Arc::ptr_eq(out.basis(), &to));
                let v = conv.error_terms(poly.data()).unwrap();
                for (c, &vc) in v.iter().enumerate() {
                    let idx = pi * N + c;
                    let expected_v = match mode {
                        ConversionMode::Fast => exp.upper_y[idx],
                        _ => exp.alpha[idx] + exp.upper[idx] as u64,
                    };
                    v_mismatches += (vc != expected_v) as usize;
                    for (j, &p) in dst[..k].iter().enumerate() {
                        let x = exp.x_mod_p[idx][j] as u128;
                        let qm = exp.q_mod_p[j] as u128;
                        let p128 = p as u128;
                        let want = match mode {
                            // out = X + (alpha - upper_y) Q.
                            ConversionMode::Fast => {
                                let a = exp.alpha[idx] as u128 % p128;
                                let u = exp.upper_y[idx] as u128 % p128;
                                (x + (a + p128 - u) % p128 * qm) % p128
                            }
                            // centered representative: X - Q when X > Q/2.
                            _ if exp.upper[idx] => (x + p128 - qm) % p128,
                            _ => x,
                        } as u64;
                        mismatches += (out.limb(j).unwrap()[c] != want) as usize;
                    }
                }
            }
            eprintln!(
                "{name}: l = {l}, k = {k}, {mode}: {} coefficients, {mismatches} mismatches, {v_mismatches} wrong v",
                POLYS * N
            );
            assert_eq!(mismatches, 0, "{name}: l = {l}, k = {k}, mode {mode}");
            assert_eq!(v_mismatches, 0, "{name}: l = {l}, k = {k}, mode {mode}");
        }
    }
}

fn generic_primes(bits: u32, count: usize, exclude: &[u64]) -> Vec<u64> {
    ntt_primes_of_bits(bits, TWO_N, count, exclude).unwrap()
}

/// Qu-Xu Algorithms 2 and 3: the maximal eta for `l` primes near `2^m` and the primes (for N = 1024).
fn qu_xu_set(m: u32, l: usize, exclude: &[u64]) -> (u32, Vec<u64>) {
    qu_xu_set_for(m, l, exclude, TWO_N)
}

fn qu_xu_set_for(m: u32, l: usize, exclude: &[u64], two_n: u64) -> (u32, Vec<u64>) {
    let eta = qu_xu_max_eta(m, two_n, l + exclude.len()).unwrap();
    (eta, qu_xu_primes(m, eta, two_n, l, exclude).unwrap())
}

#[test]
fn generic_primes_fast_and_exact_float() {
    let modes = [ConversionMode::Fast, ConversionMode::ExactFloat];
    // (l, source bits, target bits): l = 1 (the single-modulus path of blind rotation's gadget), 2, 5,
    // 12, 30 with primes of 30..61 bits; k = 1, 2, 4 inside.
    for (seed, &(l, src_bits, dst_bits)) in [
        (1usize, 45u32, 61u32),
        (2, 61, 30),
        (5, 45, 61),
        (12, 30, 50),
        (30, 52, 36),
    ]
    .iter()
    .enumerate()
    {
        let src = generic_primes(src_bits, l, &[]);
        let dst = generic_primes(dst_bits, 4, &src);
        check_conversion(
            &format!("generic {src_bits}->{dst_bits} bits"),
            &src,
            &dst,
            &modes,
            seed as u64,
        );
    }
}

#[test]
fn qu_xu_primes_all_modes() {
    // (l, m, target bits); ExactInteger needs source moduli near 2^m; targets are arbitrary NTT primes.
    for (seed, &(l, m, dst_bits)) in [
        (1usize, 45u32, 50u32),
        (2, 61, 40),
        (5, 30, 61),
        (12, 45, 30),
        (30, 55, 50),
    ]
    .iter()
    .enumerate()
    {
        let (eta, src) = qu_xu_set(m, l, &[]);
        assert!(closeness_eta(&src, m) >= eta);
        let dst = generic_primes(dst_bits, 4, &src);
        let name = format!("Qu-Xu m = {m}, eta = {eta}, targets {dst_bits} bits");
        check_conversion(&name, &src, &dst, &ALL_MODES, 100 + seed as u64);
        let from = RnsBasis::new(N, &src).unwrap();
        let conv = BasisConverter::new(
            &from,
            &RnsBasis::new(N, &dst).unwrap(),
            ConversionMode::ExactInteger,
        )
        .unwrap();
        assert_eq!(conv.eta(), Some(eta));
        assert_eq!(conv.power_of_two_exponent(), Some(m));
        assert_eq!(conv.exactness(), Exactness::Centered);
    }
}

/// Inputs right next to `Q / 2`, where the rounding is decided by the multi-word fallback: ExactInteger must
/// still be exact, and the unguarded term must actually be wrong on some of them (the guard does work).
#[test]
fn exact_integer_near_half_uses_exact_fallback() {
    for &(l, m) in &[(2usize, 61u32), (5, 30), (12, 45), (30, 55)] {
        let (_, src) = qu_xu_set(m, l, &[]);
        let dst = generic_primes(50, 2, &src);
        let from = RnsBasis::new(N, &src).unwrap();
        let to = RnsBasis::new(N, &dst).unwrap();
        let crt = Crt::new(&src);
        let half = &crt.q >> 1u32; // (Q - 1) / 2
                                   // 512 values below (Q - 1)/2 (inclusive) and 512 values from (Q + 1)/2 upwards.
        let xs: Vec<BigUint> = (0..N as u64)
            .map(|c| {
                if c < 512 {
                    &half - c
                } else {
                    &half + (c - 511)
                }
            })
            .collect();
        let mut data = vec![0u64; l * N];
        for (c, x) in xs.iter().enumerate() {
            for (i, r) in crt.residues_of(x).into_iter().enumerate() {
                data[i * N + c] = r;
            }
        }
        let poly = Poly::from_data(&from, data).unwrap();
        let exact = BasisConverter::new(&from, &to, ConversionMode::ExactInteger).unwrap();
        let out = exact.convert(&poly).unwrap();
        let v = exact.error_terms(poly.data()).unwrap();
        let unguarded = exact.qu_xu_error_terms_unguarded(poly.data()).unwrap();
        let float = BasisConverter::new(&from, &to, ConversionMode::ExactFloat)
            .unwrap()
            .convert(&poly)
            .unwrap();
        let (mut wrong_unguarded, mut wrong_float) = (0, 0);
        for (c, x) in xs.iter().enumerate() {
            let (s, _, alpha) = crt.fast_sum(&coefficient(&poly, c));
            let upper = c >= 512;
            assert_eq!(v[c], alpha + upper as u64, "l = {l}, c = {c}");
            // The free function agrees with the method.
            let y = crt.y(&coefficient(&poly, c));
            assert_eq!(qu_xu_error_term_unguarded(&y, m).unwrap(), unguarded[c]);
            assert!(unguarded[c].abs_diff(v[c]) <= 1);
            wrong_unguarded += (unguarded[c] != v[c]) as usize;
            for (j, &p) in dst.iter().enumerate() {
                let centered = if upper {
                    (modp(x, p) + p - modp(&crt.q, p)) % p
                } else {
                    modp(x, p)
                };
                assert_eq!(
                    out.limb(j).unwrap()[c],
                    centered,
                    "l = {l}, c = {c}, target {j}"
                );
                wrong_float += (float.limb(j).unwrap()[c] != centered) as usize;
            }
            let _ = s;
        }
        eprintln!(
            "near Q/2, l = {l}, m = {m}: unguarded Qu-Xu wrong on {wrong_unguarded}/1024, ExactFloat wrong on \
             {wrong_float}/{} residues (outside its documented guarantee), guarded ExactInteger exact",
            2 * N
        );
        assert!(
            wrong_unguarded > 0,
            "the near-half inputs should defeat the unguarded term"
        );
    }
}

/// Primes near one edge of the Qu-Xu interval for `(m, eta)`: walking down from the upper bound
/// (`upper = true`) or up from the lower bound.
fn edge_primes(m: u32, eta: u32, count: usize, upper: bool) -> Vec<u64> {
    if upper {
        return qu_xu_primes(m, eta, TWO_N, count, &[]).unwrap();
    }
    let (lo, _) = qu_xu_interval(m, eta);
    let mut c = lo.div_ceil(TWO_N) * TWO_N + 1;
    let mut out = Vec::new();
    while out.len() < count {
        if is_prime(c) {
            out.push(c);
        }
        c += TWO_N;
    }
    out
}

/// Qu-Xu Theorem 1 at the edge of its precondition: r = 2^-6, l = 8, so eta must exceed
/// log2((r + l) / r) = 9.003; moduli chosen at the edges of the eta = 10 interval so that failures occur.
#[test]
fn qu_xu_unguarded_failure_rate_vs_theorem1() {
    const L: usize = 8;
    const M: u32 = 40;
    const ETA: u32 = 10;
    const SAMPLE_POLYS: usize = 400; // 409600 samples per edge
    let r = 2f64.powi(-6);
    let precondition = ((r + L as f64) / r).log2();
    assert!(ETA as f64 > precondition && (ETA as f64) < precondition + 1.0);
    let bound = L as f64 * 2f64.powi(-(ETA as i32)) / (1.0 - 2f64.powi(-(ETA as i32)));
    let dst = generic_primes(50, 2, &[]);
    let to = RnsBasis::new(N, &dst).unwrap();
    for (seed, upper) in [(7u64, true), (8, false)] {
        let src = edge_primes(M, ETA, L, upper);
        assert_eq!(
            closeness_eta(&src, M),
            ETA,
            "moduli {src:?} should sit at the eta = {ETA} edge"
        );
        let from = RnsBasis::new(N, &src).unwrap();
        // The default failure target 2^-10 refuses these moduli; r = 2^-6 accepts them.
        assert!(matches!(
            BasisConverter::new(&from, &to, ConversionMode::ExactInteger),
            Err(Error::ConversionUnavailable { .. })
        ));
        let conv = BasisConverter::with_failure_target(&from, &to, ConversionMode::ExactInteger, r)
            .unwrap();
        assert_eq!(conv.eta(), Some(ETA));
        assert!((conv.theorem1_bound().unwrap() - bound).abs() < 1e-15);
        let crt = Crt::new(&src);
        let q_mod_p: Vec<u64> = dst.iter().map(|&p| modp(&crt.q, p)).collect();
        let mut rng = ChaCha20Rng::seed_from_u64(seed);
        let (mut samples, mut failures, mut guarded_wrong, mut output_wrong) =
            (0usize, 0usize, 0usize, 0usize);
        for _ in 0..SAMPLE_POLYS {
            let poly = random_poly(&from, &mut rng);
            let unguarded = conv.qu_xu_error_terms_unguarded(poly.data()).unwrap();
            let guarded = conv.error_terms(poly.data()).unwrap();
            let out = conv.convert(&poly).unwrap();
            for c in 0..N {
                let (_, x, alpha) = crt.fast_sum(&coefficient(&poly, c));
                let is_upper = &x * 2u32 > crt.q;
                let v = alpha + is_upper as u64;
                samples += 1;
                if unguarded[c] != v {
                    failures += 1;
                    assert_eq!(
                        unguarded[c].abs_diff(v),
                        1,
                        "Theorem 1: failures are off by exactly 1"
                    );
                }
                guarded_wrong += (guarded[c] != v) as usize;
                for (j, &p) in dst.iter().enumerate() {
                    let xm = modp(&x, p);
                    let want = if is_upper {
                        (xm + p - q_mod_p[j]) % p
                    } else {
                        xm
                    };
                    output_wrong += (out.limb(j).unwrap()[c] != want) as usize;
                }
            }
        }
        let rate = failures as f64 / samples as f64;
        let sigma = (bound * (1.0 - bound) / samples as f64).sqrt();
        // Expected rate on uniform inputs: E|sum_i u_i (1 - q_i / 2^m)|, u_i uniform in [0, 1); with all
        // deviations of one sign this is sum_i |1 - q_i / 2^m| / 2.
        let predicted: f64 = src
            .iter()
            .map(|&q| (1.0 - q as f64 / 2f64.powi(M as i32)).abs() / 2.0)
            .sum();
        eprintln!(
            "Qu-Xu unguarded, {} edge, l = {L}, m = {M}, eta = {ETA}: {failures}/{samples} failures, rate = \
             {rate:.5} (predicted {predicted:.5}); Theorem 1 bound l 2^-eta / (1 - 2^-eta) = {bound:.5}; \
             guarded: {guarded_wrong} wrong terms, {output_wrong} wrong residues",
            if upper { "upper" } else { "lower" }
        );
        assert!(failures > 0, "the configuration should produce failures");
        assert!(
            rate < bound + 3.0 * sigma,
            "rate {rate} above Theorem 1 bound {bound} + 3 sigma"
        );
        assert_eq!(guarded_wrong, 0);
        assert_eq!(output_wrong, 0);
    }
}

/// Reference for ModDown: `(floor(Y / P), round(Y / P))` for `Y in [0, QP)`.
fn div_p(y: &BigUint, p: &BigUint) -> (BigUint, BigUint) {
    let floor = y / p;
    let round = (y * 2u32 + p) / (p * 2u32);
    (floor, round)
}

fn check_mod_switch(
    name: &str,
    q_primes: &[u64],
    p_primes: &[u64],
    modes: &[ConversionMode],
    seed: u64,
) {
    const NN: usize = 4096;
    const NPOLYS: usize = 25; // 102400 coefficients
    let q = RnsBasis::new(NN, q_primes).unwrap();
    let p = RnsBasis::new(NN, p_primes).unwrap();
    let (l, k) = (q_primes.len(), p_primes.len());
    let qp_primes: Vec<u64> = q_primes.iter().chain(p_primes).copied().collect();
    let crt_qp = Crt::new(&qp_primes);
    let big_p = p_primes.iter().fold(BigUint::from(1u32), |a, &m| a * m);
    let mut rng = ChaCha20Rng::seed_from_u64(seed);
    let qp = RnsBasis::new(NN, &qp_primes).unwrap();
    let ys: Vec<Poly<Coeff>> = (0..NPOLYS).map(|_| random_poly(&qp, &mut rng)).collect();
    // floor(Y/P) and round(Y/P) modulo each q_j.
    let mut floors = Vec::new();
    let mut rounds = Vec::new();
    for y in &ys {
        for c in 0..NN {
            let big_y = crt_qp.reconstruct(&coefficient(y, c));
            let (f, r) = div_p(&big_y, &big_p);
            floors.push(q_primes.iter().map(|&m| modp(&f, m)).collect::<Vec<_>>());
            rounds.push(q_primes.iter().map(|&m| modp(&r, m)).collect::<Vec<_>>());
        }
    }
    for &mode in modes {
        let ms = ModSwitcher::new(&q, &p, mode).unwrap();
        assert_eq!(ms.qp().values(), qp_primes);
        // Fast: alpha in [-ceil(k/2), ceil(k/2)), histogram index alpha + ceil(k/2).
        let half = k.div_ceil(2) as i64;
        let mut alpha_hist = vec![0usize; 2 * half as usize];
        let mut mismatches = 0usize;
        for (pi, y) in ys.iter().enumerate() {
            let y = Poly::from_data(ms.qp(), y.data().to_vec()).unwrap();
            let down = ms.mod_down(&y).unwrap();
            let down_ntt = ms.mod_down_ntt(&y.clone().into_ntt()).unwrap().into_coeff();
            assert_eq!(down, down_ntt, "{name} {mode}: NTT-form ModDown differs");
            for c in 0..NN {
                let idx = pi * NN + c;
                let got = coefficient(&down, c);
                match mode {
                    ConversionMode::Fast => {
                        // floor(Y/P) - alpha, the same alpha in every limb.
                        let alpha = (-half..half).find(|&a| {
                            got.iter()
                                .zip(&floors[idx])
                                .zip(q_primes)
                                .all(|((&g, &f), &m)| {
                                    g == ((f as i128 - a as i128).rem_euclid(m as i128)) as u64
                                })
                        });
                        match alpha {
                            Some(a) => alpha_hist[(a + half) as usize] += 1,
                            None => mismatches += 1,
                        }
                    }
                    _ => mismatches += (got != rounds[idx]) as usize,
                }
            }
        }
        eprintln!(
            "{name}: ModDown {mode}, l = {l}, k = {k}: {} coefficients, {mismatches} outside the documented \
             rounding{}",
            NPOLYS * NN,
            if mode == ConversionMode::Fast { format!(", alpha histogram {alpha_hist:?}") } else { String::new() }
        );
        assert_eq!(mismatches, 0, "{name} {mode}");

        // ModUp: x's limbs followed by the conversion; NTT form agrees; ModDown(P * ModUp(x)) = x.
        let x = random_poly(&q, &mut rng);
        let up = ms.mod_up(&x).unwrap();
        let conv = ms.up_converter().convert(&x).unwrap();
        let concat: Vec<u64> = x.data().iter().chain(conv.data()).copied().collect();
        assert_eq!(up.data(), &concat[..]);
        assert!(Arc::ptr_eq(up.basis(), ms.qp()));
        assert_eq!(
            ms.mod_up_ntt(&x.clone().into_ntt()).unwrap().into_coeff(),
            up
        );
        let mut scaled = up.clone();
        let p_mod: Vec<u64> = qp_primes.iter().map(|&m| modp(&big_p, m)).collect();
        scaled.mul_scalars_assign(&p_mod).unwrap();
        assert_eq!(
            ms.mod_down(&scaled).unwrap(),
            x,
            "{name} {mode}: ModDown(P ModUp(x)) != x"
        );
    }
}

#[test]
fn mod_up_and_mod_down_match_bigint() {
    let two_n = 8192; // N = 4096
    let q = ntt_primes_of_bits(50, two_n, 5, &[]).unwrap();
    let p = ntt_primes_of_bits(60, two_n, 2, &q).unwrap();
    check_mod_switch(
        "generic Q 5x50, P 2x60",
        &q,
        &p,
        &[ConversionMode::Fast, ConversionMode::ExactFloat],
        21,
    );
    let (_, q) = qu_xu_set_for(50, 5, &[], two_n);
    let (_, p) = qu_xu_set_for(58, 3, &q, two_n);
    check_mod_switch("Qu-Xu Q 5x~2^50, P 3x~2^58", &q, &p, &ALL_MODES, 22);
}

#[test]
fn rescale_matches_bigint_rounding() {
    const NN: usize = 4096;
    const NPOLYS: usize = 25;
    let two_n = 2 * NN as u64;
    let mut primes = ntt_primes_of_bits(50, two_n, 3, &[]).unwrap();
    primes.extend(qu_xu_set_for(40, 2, &primes, two_n).1);
    primes.extend(ntt_primes_of_bits(61, two_n, 1, &primes).unwrap());
    let chain = RnsBasis::new(NN, &primes).unwrap();
    let rescaler = Rescaler::new(&chain).unwrap();
    let mut rng = ChaCha20Rng::seed_from_u64(33);
    for limbs in [2usize, 4, 6] {
        let basis = chain.prefix(limbs).unwrap();
        let crt = Crt::new(&primes[..limbs]);
        let q_last = primes[limbs - 1];
        let mut mismatches = 0usize;
        for _ in 0..NPOLYS {
            let x = random_poly(&basis, &mut rng);
            let out = rescaler.rescale(&x).unwrap();
            assert_eq!(out.limb_count(), limbs - 1);
            assert!(Arc::ptr_eq(out.basis(), &chain.prefix(limbs - 1).unwrap()));
            let out_ntt = rescaler
                .rescale_ntt(&x.clone().into_ntt())
                .unwrap()
                .into_coeff();
            assert_eq!(out, out_ntt, "NTT-form rescale differs at {limbs} limbs");
            for c in 0..NN {
                let big_x = crt.reconstruct(&coefficient(&x, c));
                // round(X / q_last) = floor((2X + q_last) / (2 q_last)); the same modulo Q / q_last for the
                // centered representative X - Q.
                let rounded = (&big_x * 2u32 + q_last) / (2 * q_last);
                let got = coefficient(&out, c);
                let want: Vec<u64> = primes[..limbs - 1]
                    .iter()
                    .map(|&m| modp(&rounded, m))
                    .collect();
                mismatches += (got != want) as usize;
            }
        }
        eprintln!(
            "rescale from {limbs} limbs: {} coefficients, {mismatches} mismatches",
            NPOLYS * NN
        );
        assert_eq!(mismatches, 0);
    }
}

#[test]
fn small_degree_and_raw_buffers() {
    // N = 16 (a block smaller than the default) and the raw buffer interface.
    let n = 16usize;
    let src = ntt_primes_of_bits(40, 32, 3, &[]).unwrap();
    let dst = ntt_primes_of_bits(60, 32, 2, &[]).unwrap();
    let from = RnsBasis::new(n, &src).unwrap();
    let to = RnsBasis::new(n, &dst).unwrap();
    let crt = Crt::new(&src);
    let mut rng = ChaCha20Rng::seed_from_u64(5);
    let conv = BasisConverter::new(&from, &to, ConversionMode::ExactFloat).unwrap();
    for _ in 0..200 {
        let x = random_poly(&from, &mut rng);
        let mut out = vec![0u64; 2 * n];
        conv.convert_into(x.data(), &mut out).unwrap();
        assert_eq!(out, conv.convert(&x).unwrap().into_data());
        for c in 0..n {
            let big = crt.reconstruct(&coefficient(&x, c));
            let upper = &big * 2u32 > crt.q;
            for (j, &p) in dst.iter().enumerate() {
                let want = if upper {
                    (modp(&big, p) + p - modp(&crt.q, p)) % p
                } else {
                    modp(&big, p)
                };
                assert_eq!(out[j * n + c], want);
            }
        }
    }
    // Unreduced input words are read as their residues.
    let x = random_poly(&from, &mut rng);
    let mut shifted = x.data().to_vec();
    for (i, &q) in src.iter().enumerate() {
        for w in &mut shifted[i * n..(i + 1) * n] {
            *w += q * 3;
        }
    }
    let mut a = vec![0u64; 2 * n];
    let mut b = vec![0u64; 2 * n];
    conv.convert_into(x.data(), &mut a).unwrap();
    conv.convert_into(&shifted, &mut b).unwrap();
    assert_eq!(a, b);
}

#[test]
fn error_cases() {
    let q = RnsBasis::new(N, &generic_primes(50, 3, &[])).unwrap();
    let p = RnsBasis::new(N, &generic_primes(60, 2, &[])).unwrap();
    let other = RnsBasis::new(2 * N, &ntt_primes_of_bits(50, 4 * TWO_N, 3, &[]).unwrap()).unwrap();
    let mut rng = ChaCha20Rng::seed_from_u64(1);

    // Mismatched bases.
    let conv = BasisConverter::new(&q, &p, ConversionMode::Fast).unwrap();
    let x_p = random_poly(&p, &mut rng);
    assert!(matches!(
        conv.convert(&x_p),
        Err(Error::BasisMismatch {
            left_limbs: 3,
            right_limbs: 2,
            ..
        })
    ));
    assert!(matches!(
        BasisConverter::new(&q, &other, ConversionMode::Fast),
        Err(Error::BasisMismatch { .. })
    ));
    assert!(matches!(
        conv.convert_into(&[0; 10], &mut [0; 2 * N]),
        Err(Error::LengthMismatch {
            expected: 3072,
            got: 10,
            ..
        })
    ));
    assert!(matches!(
        conv.convert_into(&vec![0; 3 * N], &mut [0; 5]),
        Err(Error::LengthMismatch {
            expected: 2048,
            got: 5,
            ..
        })
    ));
    assert!(matches!(
        conv.error_terms(&[1, 2, 3]),
        Err(Error::LengthMismatch { .. })
    ));
    assert!(matches!(
        conv.qu_xu_error_terms_unguarded(&vec![0; 3 * N]),
        Err(Error::ConversionUnavailable { mode: "Fast", .. })
    ));
    assert_eq!(
        conv.exactness(),
        Exactness::UpToMultipleOfQ { alpha_bound: 2 }
    );
    assert_eq!(conv.eta(), None);
    match BasisConverter::new(&q, &p, ConversionMode::ExactFloat)
        .unwrap()
        .exactness()
    {
        Exactness::CenteredUnlessNearHalf { relative_margin } => assert!(relative_margin < 1e-14),
        e => panic!("unexpected {e:?}"),
    }

    // ExactInteger refused for far-apart primes, naming eta, l and the bound.
    let mut mixed = generic_primes(40, 2, &[]);
    mixed.extend(generic_primes(50, 2, &[]));
    let far = RnsBasis::new(N, &mixed).unwrap();
    match BasisConverter::new(&far, &p, ConversionMode::ExactInteger) {
        Err(Error::ConversionUnavailable { mode, reason }) => {
            assert_eq!(mode, "ExactInteger");
            assert!(
                reason.contains("eta = 0") && reason.contains("l = 4") && reason.contains("log2"),
                "{reason}"
            );
            eprintln!("refusal message: {reason}");
        }
        other => panic!("expected ConversionUnavailable, got {other:?}"),
    }
    assert!(matches!(
        BasisConverter::with_failure_target(&q, &p, ConversionMode::Fast, 0.5),
        Err(Error::OutOfRange { .. })
    ));
    assert!(matches!(
        BasisConverter::with_failure_target(&q, &p, ConversionMode::Fast, f64::NAN),
        Err(Error::OutOfRange { .. })
    ));
    // ModSwitcher: ExactInteger needs P near a power of two too; shared moduli are refused.
    let (_, qx) = qu_xu_set(50, 3, &[]);
    let qx = RnsBasis::new(N, &qx).unwrap();
    assert!(matches!(
        ModSwitcher::new(&qx, &far, ConversionMode::ExactInteger),
        Err(Error::ConversionUnavailable { .. })
    ));
    assert!(matches!(
        ModSwitcher::new(&q, &q, ConversionMode::Fast),
        Err(Error::RepeatedModulus { .. })
    ));
    let ms = ModSwitcher::new(&q, &p, ConversionMode::ExactFloat).unwrap();
    assert!(matches!(ms.mod_up(&x_p), Err(Error::BasisMismatch { .. })));
    assert!(matches!(
        ms.mod_down(&random_poly(&q, &mut rng)),
        Err(Error::BasisMismatch { .. })
    ));
    assert!(matches!(
        ms.mod_down_ntt(&random_poly(&q, &mut rng).into_ntt()),
        Err(Error::BasisMismatch { .. })
    ));
    assert!(matches!(
        ms.mod_up_ntt(&x_p.clone().into_ntt()),
        Err(Error::BasisMismatch { .. })
    ));
    let swapped = BasisConverter::new(&q, &p, ConversionMode::Fast).unwrap();
    assert!(matches!(
        ModSwitcher::from_converters(swapped.clone(), swapped),
        Err(Error::BasisMismatch { .. })
    ));

    // Rescale: one limb, foreign basis.
    let rescaler = Rescaler::new(&q).unwrap();
    let one = random_poly(&q.prefix(1).unwrap(), &mut rng);
    assert!(matches!(
        rescaler.rescale(&one),
        Err(Error::NotEnoughLimbs { limbs: 1, .. })
    ));
    assert!(matches!(
        rescaler.rescale_ntt(&one.into_ntt()),
        Err(Error::NotEnoughLimbs { limbs: 1, .. })
    ));
    assert!(matches!(
        rescaler.rescale(&x_p),
        Err(Error::BasisMismatch { .. })
    ));
    let single_chain = Rescaler::new(&q.prefix(1).unwrap()).unwrap();
    assert!(single_chain
        .rescale(&random_poly(&q.prefix(1).unwrap(), &mut rng))
        .is_err());
    let msg = Error::NotEnoughLimbs {
        operation: "rescale",
        limbs: 1,
    }
    .to_string();
    assert!(msg.contains("at least 2"), "{msg}");
}
