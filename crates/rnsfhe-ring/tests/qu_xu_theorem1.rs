//! Qu-Xu Theorem 1 checked empirically at the edge of its precondition (the paper's Fig. 1, `r = 0.001`).
//!
//! For every `l = 2..40`, `eta` is the smallest integer above Theorem 1's bound `log2((r + l) / r)`, and the
//! `l` source moduli (primes `= 1 mod 2N` near `2^50`) sit at one edge of the interval
//! `[2^m / (1 + 2^-eta), 2^m / (1 - 2^-eta)]` (closeness exactly `eta`), once at the upper edge and once at
//! the lower edge: the hardest moduli the precondition admits. On `2^20 > 10^6` uniformly random inputs per
//! `(l, edge)` the unguarded integer-only error term (Algorithm 1 / 4 plus the final rounding bit,
//! [`BasisConverter::qu_xu_error_terms_unguarded`]) is compared with the exact error term
//! `round(sum_i y_i / q_i)`, computed by the guarded converter ([`BasisConverter::error_terms`]) and
//! confirmed by the floating-point one (HPS) on every input and by a big-integer CRT on the first 1024.
//!
//! Checked: the failure rate is below `r` and below the basis's own Theorem 1 bound `l 2^-eta / (1 - 2^-eta)`
//! (itself below `r`); every difference is exactly `±1`, with the sign the edge implies (moduli above `2^m`
//! make Algorithm 1 overestimate, below `2^m` underestimate); the rate matches the first-order prediction
//! `E|sum_i u_i (1 - q_i / 2^m)| = sum_i |1 - q_i / 2^m| / 2` for `u_i` uniform in `[0, 1)`; and moduli one
//! `eta` farther out are refused by `ExactInteger` for this `r`. The measured rates are printed
//! (`cargo test --release -p rnsfhe-ring --test qu_xu_theorem1 -- --nocapture`).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;

use rayon::prelude::*;
use rnsfhe_math::primes::{closeness_eta, is_prime, ntt_primes_of_bits, qu_xu_interval};
use rnsfhe_ring::conversion::{theorem1_eta_lower_bound, QuXuCloseness};
use rnsfhe_ring::{BasisConverter, ConversionMode, Error, RnsBasis};

/// Ring degree of the sampled polynomials: one conversion call handles `N` inputs.
const N: usize = 1 << 14;
const TWO_N: u64 = 2 * N as u64;
/// The power of two the moduli are close to (the paper's `q = 2^50`).
const M: u32 = 50;
/// The failure target of the paper's Fig. 1.
const R: f64 = 0.001;
/// Inputs per `(l, edge)`: `2^20 = 1048576`.
const SAMPLES: usize = 1 << 20;
const POLYS: usize = SAMPLES / N;
/// Inputs per `(l, edge)` also checked against a big-integer CRT.
const BIGINT_SAMPLES: usize = 1024;

/// The smallest integer `eta` with `eta > log2((r + l) / r)`.
fn eta_for(l: usize) -> u32 {
    theorem1_eta_lower_bound(l, R).floor() as u32 + 1
}

/// `count` primes `= 1 mod 2N` nearest one edge of the Qu-Xu interval for `(M, eta)`: walking down from the
/// upper bound (`upper`) or up from the lower bound.
fn edge_primes(eta: u32, count: usize, upper: bool, two_n: u64) -> Vec<u64> {
    let (lo, hi) = qu_xu_interval(M, eta);
    let mut c = if upper {
        (hi - 1) / two_n * two_n + 1
    } else {
        lo.div_ceil(two_n) * two_n + 1
    };
    let mut out = Vec::with_capacity(count);
    while out.len() < count {
        assert!((lo..=hi).contains(&c), "interval exhausted");
        if is_prime(c) {
            out.push(c);
        }
        c = if upper { c - two_n } else { c + two_n };
    }
    out
}

/// wyrand (Wang Yi's 64-bit generator): fast enough that sampling does not dominate the test, and
/// statistically adequate for counting rare events.
struct WyRand(u64);

impl WyRand {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0xa076_1d64_78bd_642f);
        let t = self.0 as u128 * (self.0 ^ 0xe703_7ed1_a0b4_28db) as u128;
        ((t >> 64) as u64) ^ (t as u64)
    }

    /// Uniform in `[0, q)` (Lemire's multiply-and-reject; `reject = 2^64 mod q`, no bias).
    fn below(&mut self, q: u64, reject: u64) -> u64 {
        loop {
            let m = self.next() as u128 * q as u128;
            if m as u64 >= reject {
                return (m >> 64) as u64;
            }
        }
    }
}

/// `N` uniform residues modulo each of `moduli`, limb-major.
fn random_input(moduli: &[u64], rng: &mut WyRand) -> Vec<u64> {
    let mut data = Vec::with_capacity(moduli.len() * N);
    for &q in moduli {
        let reject = q.wrapping_neg() % q;
        data.extend((0..N).map(|_| rng.below(q, reject)));
    }
    data
}

mod common;

use common::Crt;

/// Counts of one `(l, edge)` run.
#[derive(Default)]
struct Counts {
    failures: usize,
    /// Failures with unguarded = exact + 1.
    over: usize,
    /// Differences of magnitude other than 1 (must stay 0).
    not_unit: usize,
    /// Inputs where the guarded (integer) and the floating-point exact terms disagree (must stay 0).
    exact_disagree: usize,
}

impl Counts {
    fn add(mut self, o: Counts) -> Counts {
        self.failures += o.failures;
        self.over += o.over;
        self.not_unit += o.not_unit;
        self.exact_disagree += o.exact_disagree;
        self
    }
}

fn run(l: usize, upper: bool, target: &Arc<RnsBasis>) -> (f64, f64, f64) {
    let eta = eta_for(l);
    let src = edge_primes(eta, l, upper, TWO_N);
    let edge = if upper { "upper" } else { "lower" };
    assert_eq!(
        closeness_eta(&src, M),
        eta,
        "l = {l}: moduli at the {edge} edge of eta = {eta}"
    );
    let closeness = QuXuCloseness::of(&src);
    assert_eq!((closeness.power, closeness.eta), (M, eta));
    let from = RnsBasis::new(N, &src).unwrap();
    let conv = BasisConverter::with_failure_target(&from, target, ConversionMode::ExactInteger, R)
        .unwrap();
    let float = BasisConverter::new(&from, target, ConversionMode::ExactFloat).unwrap();
    let bound = conv.theorem1_bound().unwrap();
    assert_eq!(conv.eta(), Some(eta));
    assert!(bound < R, "l = {l}: Theorem 1 bound {bound} >= r");

    let big = Crt::new(&src);
    let seed = (l as u64) << 1 | upper as u64;
    let counts = (0..POLYS)
        .into_par_iter()
        .map(|p| {
            let mut rng = WyRand((seed << 32 | p as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15));
            let data = random_input(&src, &mut rng);
            let exact = conv.error_terms(&data).unwrap();
            let exact_float = float.error_terms(&data).unwrap();
            let raw = conv.qu_xu_error_terms_unguarded(&data).unwrap();
            if p == 0 {
                for (c, &v) in exact.iter().enumerate().take(BIGINT_SAMPLES) {
                    assert_eq!(
                        v,
                        big.round_error_term(
                            &(0..src.len()).map(|i| data[i * N + c]).collect::<Vec<_>>()
                        ),
                        "l = {l}, {edge}: coefficient {c}"
                    );
                }
            }
            let mut k = Counts::default();
            for ((&v, &f), &u) in exact.iter().zip(&exact_float).zip(&raw) {
                k.exact_disagree += (v != f) as usize;
                if u != v {
                    k.failures += 1;
                    k.over += (u > v) as usize;
                    k.not_unit += (u.abs_diff(v) != 1) as usize;
                }
            }
            k
        })
        .reduce(Counts::default, Counts::add);

    let rate = counts.failures as f64 / SAMPLES as f64;
    let predicted: f64 = src
        .iter()
        .map(|&q| (1.0 - q as f64 / (M as f64).exp2()).abs() / 2.0)
        .sum();
    println!(
        "l = {l:2}, eta = {eta:2} (bound {:6.3}), {edge} edge: {:4} / {SAMPLES} wrong = {rate:.3e} \
         (predicted {predicted:.3e}, Theorem 1 bound {bound:.3e}, r = {R})",
        theorem1_eta_lower_bound(l, R),
        counts.failures
    );
    assert_eq!(
        counts.exact_disagree, 0,
        "l = {l}, {edge}: integer vs float exact term"
    );
    assert_eq!(
        counts.not_unit, 0,
        "l = {l}, {edge}: Theorem 1: every difference is ±1"
    );
    // Above 2^m every 2^m / q_i < 1: Algorithm 1's sum exceeds the exact one, so it can only round up.
    let expected_over = if upper { counts.failures } else { 0 };
    assert_eq!(counts.over, expected_over, "l = {l}, {edge}: direction");
    assert!(
        counts.failures > 0,
        "l = {l}, {edge}: the edge moduli should produce failures"
    );
    assert!(rate < R, "l = {l}, {edge}: rate {rate} >= r = {R}");
    assert!(
        rate < bound,
        "l = {l}, {edge}: rate {rate} >= Theorem 1 bound {bound}"
    );
    let sigma = (predicted / SAMPLES as f64).sqrt();
    assert!(
        (rate - predicted).abs() <= 0.1 * predicted + 5.0 * sigma,
        "l = {l}, {edge}: rate {rate} far from the prediction {predicted}"
    );
    (rate, bound, predicted)
}

#[test]
fn theorem1_failure_rate_below_r_for_l_2_to_40() {
    let start = std::time::Instant::now();
    let target = RnsBasis::new(N, &ntt_primes_of_bits(40, TWO_N, 1, &[]).unwrap()).unwrap();
    let mut worst: (f64, usize) = (0.0, 0);
    for l in 2..=40 {
        for upper in [true, false] {
            let (rate, bound, _) = run(l, upper, &target);
            if rate / bound > worst.0 {
                worst = (rate / bound, l);
            }
        }
    }
    println!(
        "largest rate / Theorem 1 bound: {:.3} (l = {}); {} inputs per (l, edge), {:.1} s",
        worst.0,
        worst.1,
        SAMPLES,
        start.elapsed().as_secs_f64()
    );
}

/// The precondition is sharp in the converter: moduli whose closeness is one below the smallest admissible
/// `eta` are refused for `r = 0.001` with an error naming `eta`, `l` and the bound.
#[test]
fn one_eta_short_is_refused() {
    // The refusal depends on the moduli only; a small ring keeps the bases cheap (primes = 1 mod 2^15 are
    // also = 1 mod 2^11).
    let n = 1024;
    let target = RnsBasis::new(n, &ntt_primes_of_bits(40, 2 * n as u64, 1, &[]).unwrap()).unwrap();
    for l in [2usize, 3, 7, 16, 40] {
        let eta = eta_for(l) - 1;
        for upper in [true, false] {
            let src = edge_primes(eta, l, upper, TWO_N);
            assert_eq!(closeness_eta(&src, M), eta);
            let from = RnsBasis::new(n, &src).unwrap();
            match BasisConverter::with_failure_target(
                &from,
                &target,
                ConversionMode::ExactInteger,
                R,
            ) {
                Err(Error::ConversionUnavailable { reason, .. }) => {
                    let bound = format!("{:.3}", theorem1_eta_lower_bound(l, R));
                    for needle in [format!("eta = {eta}"), format!("l = {l}"), bound] {
                        assert!(reason.contains(&needle), "missing {needle}: {reason}");
                    }
                }
                other => panic!("l = {l}, eta = {eta}: expected a refusal, got {other:?}"),
            }
            // With the eta bound met, the same l is accepted.
            let ok = edge_primes(eta + 1, l, upper, TWO_N);
            let from = RnsBasis::new(n, &ok).unwrap();
            assert!(BasisConverter::with_failure_target(
                &from,
                &target,
                ConversionMode::ExactInteger,
                R
            )
            .is_ok());
        }
    }
}
