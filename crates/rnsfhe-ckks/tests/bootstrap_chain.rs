//! Chains with bootstrapping primes ([`CkksParams::bootstrap_primes`]): the chain's layout and scales,
//! the user's top level, bootstrapping within [`Bootstrapper::error_bound`] at small insecure
//! parameters and more precisely than a chain of one prime size at the same user scale, the checks of
//! [`CkksContext::new`], and the bootstrapping presets.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::sync::Arc;

use common::{complex_values, rng};
use rnsfhe_ckks::{
    BootstrapParams, Bootstrapper, Ciphertext, CkksContext, CkksDecryptor, CkksEncryptor,
    CkksParams, Complex64, ConversionMode, Csprng, Error, EvalMod, Evaluator, KeyGenerator,
    PrecisionStats, Preset, RescalingPolicy, SecretDistribution,
};

/// `N = 2^11`, user scale `2^40`, two user levels, Hamming weight 32 (`K = 12`); not secure.
/// `upper` empty: a chain of 40-bit primes only, `q_0` of 50 bits (`q_0 / Delta = 2^10`), `uniform`
/// levels in all. Otherwise `q_0` of 60 bits and the bootstrapping primes `upper` above the user's
/// levels.
fn params(q0_bits: u32, levels: usize, upper: Vec<u32>) -> CkksParams {
    let primes = levels + 1 + upper.len();
    CkksParams {
        log_n: 11,
        log_scale: 40,
        q0_bits,
        levels,
        bootstrap_primes: upper,
        special_primes: 4,
        special_bits: 60,
        dnum: primes.div_ceil(4),
        secret: SecretDistribution::HammingWeight(32),
        sigma: 3.2,
        conversion: ConversionMode::Fast,
        rescaling: RescalingPolicy::ExactScale,
        insecure_for_testing: true,
    }
}

/// The bootstrapping primes of [`Preset::Boot128N16`] with SlotsToCoeffs on 50-bit primes (the
/// preset's are 55-bit): SlotsToCoeffs (3 x 50), EvalMod (10 x 60), CoeffsToSlots (4 x 56), bottom
/// first.
fn upper() -> Vec<u32> {
    [vec![50; 3], vec![60; 10], vec![56; 4]].concat()
}

#[test]
fn chain_layout_levels_and_scales() {
    let ctx = CkksContext::new(params(60, 2, upper())).unwrap();
    assert_eq!(ctx.user_max_level(), 3);
    assert_eq!(ctx.bootstrap_levels(), 17);
    assert_eq!(ctx.max_level(), 20);
    let bits: Vec<u32> = ctx
        .q_moduli()
        .iter()
        .map(|&q| 64 - q.leading_zeros())
        .collect();
    assert_eq!(bits, [vec![60, 40, 40], upper()].concat());
    // The user's levels are those of the chain without bootstrapping primes, prime for prime and
    // scale for scale.
    let plain = CkksContext::new(params(60, 2, Vec::new())).unwrap();
    assert_eq!(&ctx.q_moduli()[..3], plain.q_moduli());
    for level in 1..=3 {
        assert_eq!(
            ctx.level_scale(level).unwrap(),
            plain.level_scale(level).unwrap()
        );
    }
    // Above them: a product at the default scale, rescaled, lands on the level below's exactly; each
    // level halves the distance in bits to the primes (2^45, 2^47.5, 2^48.75 on the 50-bit ones) and
    // the scale approaches 2^60 on EvalMod's.
    for level in 4..=ctx.max_level() {
        let s = ctx.level_scale(level).unwrap();
        let below = ctx.level_scale(level - 1).unwrap();
        let q = ctx.q_moduli()[level - 1] as f64;
        assert!((s * s / q / below - 1.0).abs() < 1e-12, "level {level}");
    }
    for (level, bits) in [(4, 45.0), (5, 47.5), (6, 48.75)] {
        assert!((ctx.level_scale(level).unwrap().log2() - bits).abs() < 0.01);
    }
    assert!(ctx.level_scale(16).unwrap().log2() > 59.9);
    // Fresh encryptions are at the user's top level and its scale.
    let mut r = rng(1);
    let keys = KeyGenerator::new(&ctx, &mut r).unwrap();
    let enc = CkksEncryptor::with_secret_key(&ctx, keys.secret_key()).unwrap();
    let ct = enc.encrypt(&[0.5, -0.25][..], &mut r).unwrap();
    assert_eq!(ct.level(), ctx.user_max_level());
    assert_eq!(ct.scale(), ctx.level_scale(3).unwrap());
    let seeded = enc.encrypt_seeded(&[0.5][..], &mut r).unwrap();
    assert_eq!(seeded.level(), ctx.user_max_level());
}

#[test]
fn bootstrapping_primes_are_checked() {
    let refused = |p: CkksParams, needle: &str| match CkksContext::new(p) {
        Err(Error::InvalidParams { what, reason }) => {
            assert_eq!(what, "bootstrap_primes", "{reason}");
            assert!(reason.contains(needle), "missing {needle:?}: {reason}");
        }
        other => panic!("expected InvalidParams, got {other:?}"),
    };
    refused(params(60, 2, vec![40, 9]), "prime 1 has 9 bits");
    refused(params(60, 2, vec![62]), "prime 0 has 62 bits");
    refused(params(60, 2, vec![40; 65]), "at most 64");
    // ExactInteger: digit groups mixing sizes are refused, one prime per digit is built.
    let mut exact = params(60, 2, upper());
    exact.conversion = ConversionMode::ExactInteger;
    refused(exact.clone(), "set dnum = 20");
    assert!(!exact.digits_admit_exact_integer());
    let one_per_digit = exact.for_exact_integer();
    assert_eq!(one_per_digit.dnum, 20);
    let ctx = CkksContext::new(one_per_digit).unwrap();
    assert_eq!(ctx.max_level(), 20);
    // The special modulus must cover the largest digit, bootstrapping primes included.
    let mut short_p = params(60, 2, upper());
    short_p.dnum = 1;
    match CkksContext::new(short_p) {
        Err(Error::InvalidParams { what, .. }) => assert_eq!(what, "special primes"),
        other => panic!("expected InvalidParams, got {other:?}"),
    }
    // dnum counts the digits of the whole chain (20 primes).
    let mut digits = params(60, 2, upper());
    digits.dnum = 21;
    assert!(CkksContext::new(digits.clone()).is_err());
    digits.dnum = 20;
    assert!(CkksContext::new(digits).is_ok());
    // The security check covers the whole of Q P.
    let mut big = params(60, 2, upper());
    big.insecure_for_testing = false;
    assert!(matches!(CkksContext::new(big), Err(Error::Insecure { .. })));
}

/// Keys (seed 7) for `btp`, an evaluator with them, an encryptor, a decryptor, and `slots` complex
/// values in `[-1, 1]` encrypted at level 1, with their decryption (the reference of every error).
struct Keyed {
    eval: Evaluator,
    enc: CkksEncryptor,
    dec: CkksDecryptor,
    z: Vec<Complex64>,
    ct: Ciphertext,
    want: Vec<Complex64>,
    r: Csprng,
}

fn keyed(ctx: &Arc<CkksContext>, btp: &Bootstrapper, slots: usize) -> Keyed {
    keyed_seeded(ctx, btp, slots, 7)
}

/// [`keyed`] with the key and encryption seed `seed`.
fn keyed_seeded(ctx: &Arc<CkksContext>, btp: &Bootstrapper, slots: usize, seed: u8) -> Keyed {
    let mut r = rng(seed);
    let keys = KeyGenerator::new(ctx, &mut r).unwrap();
    let eval = Evaluator::new(ctx)
        .with_relin_key(keys.relin_key(&mut r).unwrap())
        .unwrap()
        .with_bootstrapping_keys(keys.bootstrapping_keys(btp, &mut r).unwrap())
        .unwrap();
    let enc = CkksEncryptor::with_secret_key(ctx, keys.secret_key()).unwrap();
    let dec = CkksDecryptor::new(ctx, keys.secret_key()).unwrap();
    let z = complex_values(slots, 11);
    let ct = enc
        .encrypt_plaintext(&ctx.encode(&z, slots, 1).unwrap(), &mut r)
        .unwrap();
    let want = dec.decrypt(&ct).unwrap();
    Keyed {
        eval,
        enc,
        dec,
        z,
        ct,
        want,
        r,
    }
}

/// The default full-slot bootstrapper of `preset`'s context and its keys ([`keyed`]).
fn keyed_full_slots(preset: Preset) -> (Bootstrapper, Keyed) {
    let ctx = CkksContext::new(preset.params()).unwrap();
    let slots = ctx.max_slots();
    let btp = Bootstrapper::new(&ctx, BootstrapParams::for_context(&ctx, slots).unwrap()).unwrap();
    let keyed = keyed(&ctx, &btp, slots);
    (btp, keyed)
}

/// Bootstraps `slots` slots of complex values in `[-1, 1]` at level 1 with the default circuit;
/// returns the largest error of a real or imaginary part, after checking it against the bound, and the
/// bootstrapper.
fn bootstrap_error(ctx: &Arc<CkksContext>, slots: usize, label: &str) -> (f64, Bootstrapper) {
    let btp = Bootstrapper::new(ctx, BootstrapParams::for_context(ctx, slots).unwrap()).unwrap();
    let Keyed {
        eval,
        dec,
        ct,
        want,
        ..
    } = keyed(ctx, &btp, slots);
    let out = eval.bootstrap(&ct, &btp).unwrap();
    assert_eq!(out.level(), btp.output_level(), "{label}");
    // Exactly the default scale of the output level.
    assert_eq!(
        out.scale(),
        ctx.level_scale(out.level()).unwrap(),
        "{label}"
    );
    let got = dec.decrypt(&out).unwrap();
    let err = want
        .iter()
        .zip(&got)
        .map(|(a, b): (&Complex64, &Complex64)| (a.re - b.re).abs().max((a.im - b.im).abs()))
        .fold(0.0, f64::max);
    let bound = btp.error_bound(ct.scale()).unwrap();
    let stats = PrecisionStats::compare(&want, &got).unwrap();
    eprintln!(
        "{label}: error 2^{:.2} (real min {:.1} / median {:.1} bits), bound 2^{:.2} (EvalMod 2^{:.1}, \
         C2S noise 2^{:.1}, EvalMod noise 2^{:.1}, S2C noise 2^{:.1}); depth {}, {} levels left",
        err.log2(),
        stats.real.min,
        stats.real.median,
        bound.total.log2(),
        bound.eval_mod.log2(),
        bound.c2s_noise.log2(),
        bound.eval_mod_noise.log2(),
        bound.s2c_noise.log2(),
        btp.depth(),
        btp.levels_left()
    );
    assert!(err <= bound.total, "{label}: {err:e} > {:e}", bound.total);
    (err, btp)
}

/// The same user scale `2^40` and user levels on two chains: one of 40-bit primes throughout
/// (`q_0` of 50 bits), and one whose bootstrapping circuit runs on primes of its own sizes (`q_0` and
/// EvalMod of 60 bits). Both bootstrap within their bounds; the second is more precise (EvalMod works
/// near `2^60` instead of `2^40`), and lands exactly at the user's top level and scale.
#[test]
fn larger_bootstrapping_primes_beat_a_uniform_chain() {
    let mixed = CkksContext::new(params(60, 2, upper())).unwrap();
    let (mixed_err, btp) = bootstrap_error(&mixed, mixed.max_slots(), "mixed chain");
    assert_eq!(btp.output_level(), mixed.user_max_level());
    assert_eq!(btp.levels_left(), 2);
    assert_eq!(
        btp.output_scale().unwrap(),
        mixed.level_scale(mixed.user_max_level()).unwrap()
    );
    // The uniform chain: the default circuit (3 + EvalMod + 3 levels) and the same two user levels.
    let probe = CkksContext::new(params(50, 30, Vec::new())).unwrap();
    let depth = {
        let p = BootstrapParams::for_context(&probe, probe.max_slots()).unwrap();
        p.c2s_levels + EvalMod::new(p.eval_mod).unwrap().depth() + p.s2c_levels
    };
    let uniform = CkksContext::new(params(50, depth + 2, Vec::new())).unwrap();
    let (uniform_err, ubtp) = bootstrap_error(&uniform, uniform.max_slots(), "uniform chain");
    assert_eq!(ubtp.levels_left(), 2);
    // At least 8 bits (a factor 256) more precise.
    assert!(
        mixed_err * 256.0 < uniform_err,
        "mixed 2^{:.1} against uniform 2^{:.1}",
        mixed_err.log2(),
        uniform_err.log2()
    );
}

/// One or two more EvalMod primes than [`upper`]'s ten: [`BootstrapParams::for_context`] spends them
/// on a lower message ratio (`2^4` with an arcsine of degree 15, `2^3.25` with 31,
/// [`rnsfhe_ckks::bootstrap::BOOTSTRAP_PRIMES_EVAL_MOD_CHOICES`]), the DFTs keep 4 + 3 levels, and the
/// errors that the ratio multiplies shrink: more precise than ratio `2^5` on the same user levels.
/// A dense secret (raised under the encapsulation, as [`Preset::Boot128N16Precise`]) and a user scale
/// of `2^45`, so that those errors are not hidden under the user's rounding.
#[test]
fn spare_eval_mod_primes_lower_the_message_ratio() {
    let chain = |eval_mod_primes: usize| {
        let upper = [vec![50; 3], vec![60; eval_mod_primes], vec![56; 4]].concat();
        CkksContext::new(CkksParams {
            secret: SecretDistribution::Ternary,
            log_scale: 45,
            ..params(60, 2, upper)
        })
        .unwrap()
    };
    let mut errors = Vec::new();
    for (primes, ratio, arcsine) in [(10, 5.0, 7), (11, 4.0, 15), (12, 3.25, 31)] {
        let ctx = chain(primes);
        let bp = BootstrapParams::for_context(&ctx, ctx.max_slots()).unwrap();
        assert_eq!(
            bp.eval_mod.log_message_ratio, ratio,
            "{primes} EvalMod primes"
        );
        assert_eq!(bp.eval_mod.arcsine_degree, arcsine);
        let depth = EvalMod::new(bp.eval_mod).unwrap().depth();
        assert_eq!((bp.c2s_levels, depth, bp.s2c_levels), (4, primes, 3));
        let (err, btp) = bootstrap_error(&ctx, ctx.max_slots(), &format!("ratio 2^{ratio}"));
        assert_eq!(btp.levels_left(), 2);
        errors.push(err);
    }
    // Each step down lowers the error; 2^3.25 against 2^5 lowers the terms the ratio multiplies by
    // 1.75 bits, diluted here by those it does not (SlotsToCoeffs' noise, the user's scale): measured
    // 0.8 bits (2^-31.3, 2^-31.7, 2^-32.1 with this seed), at least half a bit asserted.
    let bits: Vec<f64> = errors.iter().map(|e| -e.log2()).collect();
    assert!(bits[0] < bits[1] && bits[1] < bits[2], "{bits:?}");
    assert!(bits[2] - bits[0] >= 0.5, "{bits:?}");
}

/// Sparse slots (the trace and the paired matrices) on the same chain: the circuit still fills the
/// bootstrapping levels and lands at the user's top level, at its default scale.
#[test]
fn sparse_slots_on_a_chain_with_bootstrapping_primes() {
    let ctx = CkksContext::new(params(60, 2, upper())).unwrap();
    let bp = BootstrapParams::for_context(&ctx, 64).unwrap();
    // 64 slots: at least ceil(6 / 5) = 2 levels per DFT, 7 levels for both: 4 + 3.
    assert_eq!((bp.c2s_levels, bp.s2c_levels), (4, 3));
    let (err, btp) = bootstrap_error(&ctx, 64, "mixed chain, 64 slots");
    assert!(btp.is_sparse());
    assert_eq!(btp.output_level(), ctx.user_max_level());
    assert!(err < 2f64.powi(-24), "2^{:.1}", err.log2());
}

#[test]
fn bootstrapping_presets_build_with_the_levels_promised() {
    // N = 2^16, dense ternary secret: 128-bit, nine user levels under a circuit of 17 levels.
    let p = Preset::Boot128N16.params();
    assert_eq!(p.secret, SecretDistribution::Ternary);
    assert!(!p.insecure_for_testing);
    assert!(p.nominal_log_qp() <= 1747);
    let ctx = CkksContext::new(p.clone()).unwrap();
    assert!(!ctx.is_insecure(), "{}", ctx.security_summary());
    assert!(ctx.security().is_secure());
    assert!(ctx.log_qp() <= 1747.0);
    assert_eq!(ctx.user_max_level(), 10);
    assert_eq!(ctx.bootstrap_levels(), 17);
    // Raised under the dense secret, K (about 423) needs more double angles than the chain has:
    // for_context says so; with the sparse-secret encapsulation (its default for a dense secret, h = 32,
    // K = 12) the circuit fills the bootstrapping levels exactly, nine levels left.
    match BootstrapParams::for_context_with_sparse_secret(&ctx, ctx.max_slots(), None) {
        Err(Error::InvalidArgument { reason, .. }) => {
            assert!(reason.contains("17 bootstrapping primes"), "{reason}")
        }
        other => panic!("expected InvalidArgument, got {other:?}"),
    }
    let bp = BootstrapParams::for_context(&ctx, ctx.max_slots()).unwrap();
    assert_eq!(bp.sparse_secret, Some(32));
    assert_eq!(bp.eval_mod.k, 12);
    let em = EvalMod::new(bp.eval_mod).unwrap();
    assert_eq!((bp.c2s_levels, em.depth(), bp.s2c_levels), (4, 10, 3));
    assert_eq!(
        ctx.max_level() - bp.c2s_levels - em.depth() - bp.s2c_levels,
        ctx.user_max_level()
    );
    // With h = 32 (K = 12) the circuit fills the bootstrapping levels exactly: full slots land at the
    // user's top level, nine levels left.
    for (preset, user_levels) in [(Preset::Boot128N16, 9), (Preset::BootTestN15, 3)] {
        let sparse = CkksContext::new(CkksParams {
            secret: SecretDistribution::HammingWeight(32),
            insecure_for_testing: true,
            ..preset.params()
        })
        .unwrap();
        let bp = BootstrapParams::for_context(&sparse, sparse.max_slots()).unwrap();
        let em = EvalMod::new(bp.eval_mod).unwrap();
        assert_eq!(bp.eval_mod.k, 12, "{preset:?}");
        assert_eq!((bp.c2s_levels, em.depth(), bp.s2c_levels), (4, 10, 3));
        let output_level = sparse.max_level() - bp.c2s_levels - em.depth() - bp.s2c_levels;
        assert_eq!(output_level, sparse.user_max_level());
        assert_eq!(output_level - 1, user_levels, "{preset:?}");
    }
    // Boot128N16Precise: 128-bit with 19 bootstrapping primes; for_context lowers the message ratio
    // to 2^3.25 with an arcsine of degree 31 (12 EvalMod levels), the DFTs keep 4 + 3 levels and the
    // user nine.
    let p = Preset::Boot128N16Precise.params();
    assert_eq!(
        (p.secret, p.log_scale, p.dnum),
        (SecretDistribution::Ternary, 43, 10)
    );
    assert!(p.nominal_log_qp() <= 1747);
    let precise = CkksContext::new(p).unwrap();
    assert!(
        precise.security().is_secure(),
        "{}",
        precise.security_summary()
    );
    assert!(precise.log_qp() <= 1747.0);
    assert_eq!(precise.bootstrap_levels(), 19);
    let bp = BootstrapParams::for_context(&precise, precise.max_slots()).unwrap();
    let em = EvalMod::new(bp.eval_mod).unwrap();
    assert_eq!(bp.eval_mod.log_message_ratio, 3.25);
    assert_eq!(
        (bp.eval_mod.cos_degree, bp.eval_mod.arcsine_degree),
        (127, 31)
    );
    assert_eq!((bp.c2s_levels, em.depth(), bp.s2c_levels), (4, 12, 3));
    let btp = Bootstrapper::new(&precise, bp).unwrap();
    assert_eq!(btp.output_level(), precise.user_max_level());
    assert_eq!(btp.levels_left(), 9);
    // The worst message (one coefficient at eps_max, a constant z = 1): the arcsine's remainder is
    // below 2^-29, under the 2^-25 aimed at.
    let worst = (em.evaluate(em.eps_max(), 1.0 / em.eps_max()) - 1.0).abs();
    assert!(worst < 2f64.powi(-29), "2^{:.1}", worst.log2());
    let test = CkksContext::new(Preset::BootTestN15.params()).unwrap();
    assert!(test.is_insecure());
    assert_eq!(Preset::BootTestN15.claimed_security(), None);
}

/// One full-slot bootstrapping of `preset` (complex values in `[-1, 1]`, seed 7), timed twice (the best
/// printed, never asserted, on the threads of the rayon pool: `RAYON_NUM_THREADS=1` for one), checked
/// against [`Bootstrapper::error_bound`] and at the output level; returns its precision and the
/// bootstrapper.
fn full_size(preset: Preset) -> (PrecisionStats, Bootstrapper) {
    let (btp, k) = keyed_full_slots(preset);
    let (eval, dec, ct, want) = (k.eval, k.dec, k.ct, k.want);
    assert!(!btp.context().is_insecure());
    let mut best = f64::INFINITY;
    let mut out = None;
    for _ in 0..2 {
        let start = std::time::Instant::now();
        out = Some(eval.bootstrap(&ct, &btp).unwrap());
        best = best.min(start.elapsed().as_secs_f64());
    }
    let out = out.unwrap();
    assert_eq!(out.level(), btp.output_level());
    let got = dec.decrypt(&out).unwrap();
    let stats = PrecisionStats::compare(&want, &got).unwrap();
    let bound = btp.error_bound(ct.scale()).unwrap();
    eprintln!(
        "{preset:?}: min {:.2} / median {:.2} bits (real), min over both parts {:.2}, bound 2^{:.1}; \
         {} levels left; bootstrap {best:.2} s (best of 2, {} thread(s))",
        stats.real.min,
        stats.real.median,
        stats.min_bits(),
        bound.total.log2(),
        btp.levels_left(),
        rayon::current_num_threads()
    );
    let err = want
        .iter()
        .zip(&got)
        .map(|(a, b)| (a.re - b.re).abs().max((a.im - b.im).abs()))
        .fold(0.0, f64::max);
    assert!(err <= bound.total, "{err:e} > {:e}", bound.total);
    (stats, btp)
}

/// [`Preset::Boot128N16`] as it is (128-bit, dense ternary secret, raised under the sparse-secret
/// encapsulation), full slots: about 8 GB of keys, 14 GB of memory at peak, a minute of key generation
/// and about 5 s per bootstrap on 2 threads. Run with `cargo test --release -p rnsfhe-ckks --test
/// bootstrap_chain full_size_boot128_n16 -- --ignored --nocapture` (alone: `--test-threads=1`).
#[test]
#[ignore = "N = 2^16: about 14 GB of memory; run with --ignored"]
fn full_size_boot128_n16() {
    let (_, btp) = full_size(Preset::Boot128N16);
    assert_eq!(btp.params().sparse_secret, Some(32));
    assert_eq!(btp.levels_left(), 9);
}

/// [`Preset::Boot128N16Precise`], full slots: at least 25 bits at the minimum over all `2^16` real and
/// imaginary parts (measured 25.57 with this seed; `docs/ckks-bootstrapping.md`), nine levels left.
/// About 20 GB at peak (its keys have 10 digits): run alone, with `cargo test --release -p rnsfhe-ckks
/// --test bootstrap_chain full_size_boot128_n16_precise -- --ignored --nocapture`
/// (`RAYON_NUM_THREADS=1` for the single-thread time it prints).
#[test]
#[ignore = "N = 2^16: about 20 GB of memory; run with --ignored, alone"]
fn full_size_boot128_n16_precise() {
    let (stats, btp) = full_size(Preset::Boot128N16Precise);
    assert_eq!(btp.levels_left(), 9);
    // The aim, every slot to 25 bits: the largest error of a real or imaginary part below 2^-25.
    assert!(stats.min_bits() >= 25.0, "{stats:?}");
}

/// The centered value of a coefficient from its residues modulo the first two primes `q0`, `q1`
/// (exact while `|c| < q0 q1 / 2`: the raised plaintext `m + q_0 I` has `|c| <= q_0 (K + 1)`).
fn crt2(a0: u64, a1: u64, q0: u64, q1: u64) -> i128 {
    let (q0w, q1w) = (u128::from(q0), u128::from(q1));
    // q0^-1 mod q1 by Fermat (q1 prime).
    let mut inv = 1u128;
    let (mut b, mut e) = (q0w % q1w, q1w - 2);
    while e > 0 {
        if e & 1 == 1 {
            inv = inv * b % q1w;
        }
        b = b * b % q1w;
        e >>= 1;
    }
    let d = (u128::from(a1) + q1w - u128::from(a0) % q1w) % q1w * inv % q1w;
    let c = u128::from(a0) + q0w * d;
    let q = q0w * q1w;
    if c > q / 2 {
        c as i128 - q as i128
    } else {
        c as i128
    }
}

/// The centered coefficients of a decryption, from its first one or two limbs.
fn coefficients(dec: &CkksDecryptor, ct: &Ciphertext, q: &[u64]) -> Vec<i128> {
    let poly = dec
        .decrypt_plaintext(ct)
        .unwrap()
        .poly()
        .clone()
        .into_coeff();
    let l0 = poly.limb(0).unwrap();
    match poly.limb(1) {
        Some(l1) => l0
            .iter()
            .zip(l1)
            .map(|(&a, &b)| crt2(a, b, q[0], q[1]))
            .collect(),
        None => l0
            .iter()
            .map(|&a| {
                let a = i128::from(a);
                let q0 = i128::from(q[0]);
                if a > q0 / 2 {
                    a - q0
                } else {
                    a
                }
            })
            .collect(),
    }
}

/// `(max, rms)` of a stage's errors, in bits (log2).
fn max_rms(errors: &[f64]) -> (f64, f64) {
    let max = errors.iter().fold(0.0f64, |m, e| m.max(e.abs()));
    let rms = (errors.iter().map(|e| e * e).sum::<f64>() / errors.len() as f64).sqrt();
    (max.log2(), rms.log2())
}

/// The error of each step of one full-slot bootstrapping ([`Evaluator::bootstrap_stages`]) against
/// what the step should compute from the exact raised plaintext `m + q_0 I`, as errors of the
/// coefficients of the values (`t` units times EvalMod's factor `q_0 / (c Delta)`) and as their image
/// in the slots through the decoding map, which SlotsToCoeffs computes (its own error measured
/// against that map on EvalMod's decryption); then one rescaling at the user's scale, the floor of any
/// result there. Prints the table of `docs/ckks-bootstrapping.md`.
///
/// `RNSFHE_STAGES_COSINE=d,r` replaces the cosine's degree and double-angle count of
/// [`BootstrapParams::for_context`], `RNSFHE_STAGES_ARCSINE=a,ratio` the arcsine's degree and the
/// message ratio (to compare EvalMod variants on the same levels), `RNSFHE_STAGES_DFT=c,s` the DFTs'
/// levels (for a deeper EvalMod); `RNSFHE_STAGES_SEED` the key seed (7); `RNSFHE_STAGES_META=p`
/// adds META-BTS with `p` passes on the same input.
fn stage_table(params: CkksParams, label: &str) {
    let ctx = CkksContext::new(params).unwrap();
    let slots = ctx.max_slots();
    let mut bp = BootstrapParams::for_context(&ctx, slots).unwrap();
    if let Ok(v) = std::env::var("RNSFHE_STAGES_COSINE") {
        let (d, r) = v.split_once(',').unwrap();
        bp.eval_mod.cos_degree = d.parse().unwrap();
        bp.eval_mod.double_angle = r.parse().unwrap();
    }
    if let Ok(v) = std::env::var("RNSFHE_STAGES_ARCSINE") {
        let (a, ratio) = v.split_once(',').unwrap();
        bp.eval_mod.arcsine_degree = a.parse().unwrap();
        bp.eval_mod.log_message_ratio = ratio.parse().unwrap();
    }
    // RNSFHE_STAGES_DFT=c,s: CoeffsToSlots' and SlotsToCoeffs' levels (with a deeper EvalMod above).
    if let Ok(v) = std::env::var("RNSFHE_STAGES_DFT") {
        let (c, s) = v.split_once(',').unwrap();
        bp.c2s_levels = c.parse().unwrap();
        bp.s2c_levels = s.parse().unwrap();
    }
    let btp = Bootstrapper::new(&ctx, bp).unwrap();
    let em = btp.eval_mod();
    // The worst message, one coefficient at eps_max (a constant input z = 1): EvalMod's approximation
    // there, in units of the values (it reaches every slot unchanged).
    let f_max = 1.0 / em.eps_max();
    let worst = (em.evaluate(em.eps_max(), f_max) - 1.0).abs();
    eprintln!("EvalMod at the worst message: 2^{:.1}", worst.log2());
    eprintln!(
        "EvalMod: cosine {} ({} levels), {} double angles, arcsine {}; error bound {:?}, \
         amplification {:.1}, {} levels left",
        em.params().cos_degree,
        em.cosine().depth(),
        em.params().double_angle,
        em.params().arcsine_degree,
        em.error_bound(),
        rnsfhe_ckks::bootstrap::eval_mod_amplification(em),
        btp.levels_left()
    );
    let Keyed {
        eval,
        enc,
        dec,
        z,
        ct,
        want,
        mut r,
    } = keyed_seeded(
        &ctx,
        &btp,
        slots,
        std::env::var("RNSFHE_STAGES_SEED").map_or(7, |v| v.parse().unwrap()),
    );
    let start = std::time::Instant::now();
    let st = eval.bootstrap_stages(&ct, &btp).unwrap();
    let secs = start.elapsed().as_secs_f64();
    let q = ctx.q_moduli();
    let q0 = q[0] as f64;
    let f = st.factor;
    let big_n = ctx.n();
    // The input at level 1 (times c) and the raised plaintext m + q_0 I.
    let input = coefficients(&dec, st.scaled_input.as_ref().unwrap(), q);
    let raised = coefficients(&dec, st.raised.as_ref().unwrap(), q);
    let q0i = i128::from(q[0]);
    let m: Vec<i128> = raised
        .iter()
        .map(|&c| {
            let r = c.rem_euclid(q0i);
            if r > q0i / 2 {
                r - q0i
            } else {
                r
            }
        })
        .collect();
    let i_max = raised
        .iter()
        .zip(&m)
        .map(|(c, m)| ((c - m) / q0i).abs())
        .max()
        .unwrap();
    let raise_err: Vec<f64> = m
        .iter()
        .zip(&input)
        .map(|(&a, &b)| (a - b) as f64 * f / q0)
        .collect();
    // Slot j of the real half reads coefficient rev(j), of the imaginary half N/2 + rev(j).
    let bits = slots.trailing_zeros();
    let rev = |j: usize| j.reverse_bits() >> (usize::BITS - bits);
    let t_exact = |half: usize, j: usize| raised[half * slots + rev(j)] as f64 / q0;
    // Errors indexed by coefficient, for their exact image through the decoding map below.
    let mut c2s_err = vec![0.0; big_n];
    let mut em_own = vec![0.0; big_n];
    let mut em_approx = vec![0.0; big_n];
    let mut em_err = vec![0.0; big_n];
    let mut em_out = vec![0.0; big_n];
    // SlotsToCoeffs joins the halves as real + i imaginary: the imaginary parts of EvalMod's slots
    // (noise) land on the other half's coefficients.
    let e: Vec<Vec<Complex64>> = st
        .eval_mod
        .iter()
        .map(|c| dec.decrypt(c).unwrap())
        .collect();
    for half in 0..2 {
        let t = dec.decrypt(&st.coeffs_to_slots[half]).unwrap();
        for j in 0..slots {
            let k = half * slots + rev(j);
            let exact = t_exact(half, j);
            c2s_err[k] = (t[j].re - exact) * f;
            em_out[k] = if half == 0 {
                e[0][j].re - e[1][j].im
            } else {
                e[0][j].im + e[1][j].re
            };
            // EvalMod against its actual input's reduction, and against the exact m / (c Delta).
            let eps = t[j].re - t[j].re.round();
            em_own[k] = em_out[k] - f * eps;
            // Its approximation alone: the same function in f64 on the same input.
            em_approx[k] = btp.eval_mod().evaluate(t[j].re, f) - f * eps;
            em_err[k] = em_out[k] - f * (exact - exact.round());
        }
    }
    // A coefficient error vector's image in the slots (SlotsToCoeffs computes this map, exactly but for
    // its own noise), real and imaginary parts: units of the values.
    let through = |coeff_errors: &[f64]| -> Vec<f64> {
        ctx.encoder()
            .slots_of(coeff_errors, slots)
            .unwrap()
            .iter()
            .flat_map(|v| [v.re, v.im])
            .collect()
    };
    let got = dec.decrypt(st.output.as_ref().unwrap()).unwrap();
    let parts = |v: &[Complex64]| -> Vec<f64> { v.iter().flat_map(|x| [x.re, x.im]).collect() };
    let out_err: Vec<f64> = parts(&want)
        .iter()
        .zip(parts(&got))
        .map(|(a, b)| a - b)
        .collect();
    // SlotsToCoeffs' own error: the output against the exact decoding of EvalMod's decryption.
    let s2c_err: Vec<f64> = through(&em_out)
        .iter()
        .zip(parts(&got))
        .map(|(a, b)| a - b)
        .collect();
    let stats = PrecisionStats::compare(&want, &got).unwrap();
    eprintln!(
        "{label}: N = 2^{}, c = {}, factor = 2^{:.2}, max |I| = {i_max}, {secs:.1} s",
        big_n.trailing_zeros(),
        st.input_multiplier,
        f.log2()
    );
    eprintln!(
        "stage: coefficient error max, rms; its image in the slots max, rms (units of the values)"
    );
    for (name, errs) in [
        ("ModRaise + encapsulation", &raise_err),
        ("CoeffsToSlots (t - exact t)", &c2s_err),
        ("EvalMod alone (on its input)", &em_own),
        ("  its approximation (f64)", &em_approx),
        ("after EvalMod (m / (c Delta))", &em_err),
    ] {
        let (mx, rms) = max_rms(errs);
        let (smx, srms) = max_rms(&through(errs));
        eprintln!("{name:<36} 2^{mx:>6.2}  2^{rms:>6.2}   2^{smx:>6.2}  2^{srms:>6.2}");
    }
    let (mx, rms) = max_rms(&s2c_err);
    eprintln!(
        "{:<36} {:>19}   2^{mx:>6.2}  2^{rms:>6.2}",
        "SlotsToCoeffs' own", ""
    );
    let (mx, rms) = max_rms(&out_err);
    eprintln!(
        "{:<36} {:>19}   2^{mx:>6.2}  2^{rms:>6.2}  (min {:.1} / median {:.1} bits)",
        "output (against the input)", "", stats.real.min, stats.real.median
    );
    // The floor of any result at the user's scale: one multiplication by 1 and its rescaling, from
    // the user's level 3 to 2 (the rounding, (1 + ||s||^2) / 12 per coefficient, over Delta).
    let fresh = enc
        .encrypt_plaintext(&ctx.encode(&z, slots, 3).unwrap(), &mut r)
        .unwrap();
    let before = dec.decrypt(&fresh).unwrap();
    let after = eval
        .rescale(&eval.multiply_real(&fresh, 1.0).unwrap())
        .unwrap();
    let rounded = dec.decrypt(&after).unwrap();
    let floor: Vec<f64> = before
        .iter()
        .zip(&rounded)
        .flat_map(|(a, b)| [a.re - b.re, a.im - b.im])
        .collect();
    let (mx, rms) = max_rms(&floor);
    let fs = PrecisionStats::compare(&before, &rounded).unwrap();
    eprintln!(
        "{:<36} {:>19}   2^{mx:>6.2}  2^{rms:>6.2}  (min {:.1} / median {:.1} bits, scale 2^{:.2})",
        "one rescaling at the user's scale",
        "",
        fs.real.min,
        fs.real.median,
        after.scale().log2()
    );
    // RNSFHE_STAGES_META=p: META-BTS with p passes on the same input, against the input.
    if let Ok(v) = std::env::var("RNSFHE_STAGES_META") {
        let passes: usize = v.parse().unwrap();
        let start = std::time::Instant::now();
        let out = eval.bootstrap_meta(&ct, &btp, passes).unwrap();
        let secs = start.elapsed().as_secs_f64();
        let s = PrecisionStats::compare(&want, &dec.decrypt(&out).unwrap()).unwrap();
        let bound = btp.meta_error_bound(ct.scale(), passes).unwrap();
        eprintln!(
            "META-BTS {passes} passes: min {:.1} / median {:.1} bits, {} levels left, shifts {:?}, \
             {secs:.1} s",
            s.real.min,
            s.real.median,
            out.level() - 1,
            bound.shifts
        );
    }
}

/// The stage table of a dense-secret variant of [`Preset::BootTestN15`] (insecure; raised under the
/// encapsulation as Boot128N16) and, with `RNSFHE_STAGES_N16=1`, of [`Preset::Boot128N16`] itself
/// (14 GB). Run with `cargo test --release -p rnsfhe-ckks --test bootstrap_chain stage_errors --
/// --ignored --nocapture`. The chain's knobs below and [`stage_table`]'s (`RNSFHE_STAGES_SEED`,
/// `RNSFHE_STAGES_META=p`, `RNSFHE_STAGES_DFT=c,s`) vary it: [`Preset::Boot128N16Precise`] is
/// `RNSFHE_STAGES_N16=1 RNSFHE_STAGES_USER=43,9 RNSFHE_STAGES_KEYSWITCH=10,3
/// RNSFHE_STAGES_EVALMOD_PRIMES=12,60` (20 GB).
#[test]
#[ignore = "diagnostic: N = 2^15 (3 GB, a minute); prints the stage errors"]
fn stage_errors() {
    let (mut params, label) = if std::env::var("RNSFHE_STAGES_N16").is_ok() {
        (Preset::Boot128N16.params(), "Boot128N16")
    } else {
        let p = CkksParams {
            secret: SecretDistribution::Ternary,
            insecure_for_testing: true,
            ..Preset::BootTestN15.params()
        };
        (p, "BootTestN15, dense secret")
    };
    // RNSFHE_STAGES_S2C_BITS=b, RNSFHE_STAGES_C2S_BITS=b: SlotsToCoeffs' (CoeffsToSlots') primes of b
    // bits instead of the preset's (56);
    // RNSFHE_STAGES_EVALMOD_PRIMES=e,b: e EvalMod primes of b bits instead of 10 of 60;
    // RNSFHE_STAGES_USER=bits,levels: the user's scale and levels; RNSFHE_STAGES_KEYSWITCH=dnum,special.
    let var = |name: &str| std::env::var(name).ok();
    let s2c_bits =
        var("RNSFHE_STAGES_S2C_BITS").map_or(params.bootstrap_primes[0], |v| v.parse().unwrap());
    let c2s_bits = var("RNSFHE_STAGES_C2S_BITS").map_or(56, |v| v.parse().unwrap());
    let (eval_mod_primes, eval_mod_bits) =
        var("RNSFHE_STAGES_EVALMOD_PRIMES").map_or((10, 60), |v| {
            let (n, b) = v.split_once(',').unwrap();
            (n.parse().unwrap(), b.parse().unwrap())
        });
    params.bootstrap_primes = [
        vec![s2c_bits; 3],
        vec![eval_mod_bits; eval_mod_primes],
        vec![c2s_bits; 4],
    ]
    .concat();
    if let Some(v) = var("RNSFHE_STAGES_USER") {
        let (bits, levels) = v.split_once(',').unwrap();
        params.log_scale = bits.parse().unwrap();
        params.levels = levels.parse().unwrap();
    }
    if let Some(v) = var("RNSFHE_STAGES_KEYSWITCH") {
        let (dnum, special) = v.split_once(',').unwrap();
        params.dnum = dnum.parse().unwrap();
        params.special_primes = special.parse().unwrap();
    }
    eprintln!("{params:?}: log QP {}", params.nominal_log_qp());
    stage_table(params, label);
}

/// [`Preset::Boot128N16`], full slots: META-BTS with two passes ([`Evaluator::bootstrap_meta`]:
/// levels left, precision, time) against one bootstrapping, then one bootstrapping and its EvalMod
/// alone on a pool of 1 thread and of 2 threads, three times each, interleaved (figures for
/// `docs/ckks-bootstrapping.md`; timings are printed, never asserted). About 14 GB and several
/// minutes: run with `cargo test --release -p rnsfhe-ckks --test bootstrap_chain meta_and_threads
/// -- --ignored --nocapture`.
#[test]
#[ignore = "N = 2^16: about 14 GB of memory and minutes; run with --ignored"]
fn full_size_boot128_n16_meta_and_threads() {
    let (btp, k) = keyed_full_slots(Preset::Boot128N16);
    let (eval, dec, ct, want) = (k.eval, k.dec, k.ct, k.want);
    let bits = |out: &Ciphertext| {
        let s = PrecisionStats::compare(&want, &dec.decrypt(out).unwrap()).unwrap();
        (s.real.min, s.real.median)
    };
    for passes in [1, 2] {
        let start = std::time::Instant::now();
        let out = eval.bootstrap_meta(&ct, &btp, passes).unwrap();
        let secs = start.elapsed().as_secs_f64();
        let (min, median) = bits(&out);
        let bound = btp.meta_error_bound(ct.scale(), passes).unwrap();
        eprintln!(
            "META-BTS {passes} pass(es): {} levels left, min {min:.1} / median {median:.1} bits, \
             bound {bound:?}, {secs:.1} s",
            out.level() - 1
        );
        assert_eq!(out.level(), btp.meta_output_level(passes));
    }
    let st = eval.bootstrap_stages(&ct, &btp).unwrap();
    let half = &st.coeffs_to_slots[0];
    let pools: Vec<rayon::ThreadPool> = [1, 2]
        .iter()
        .map(|&t| {
            rayon::ThreadPoolBuilder::new()
                .num_threads(t)
                .build()
                .unwrap()
        })
        .collect();
    let mut best = [[f64::INFINITY; 2]; 2];
    for rep in 0..3 {
        for (p, pool) in pools.iter().enumerate() {
            let (bts, em) = pool.install(|| {
                let start = std::time::Instant::now();
                let out = eval.bootstrap(&ct, &btp).unwrap();
                let bts = start.elapsed().as_secs_f64();
                assert_eq!(out.level(), btp.output_level());
                let start = std::time::Instant::now();
                eval.eval_mod(half, btp.eval_mod(), st.factor).unwrap();
                (bts, start.elapsed().as_secs_f64())
            });
            eprintln!(
                "rep {rep}, {} thread(s): bootstrap {bts:.2} s, one EvalMod {em:.2} s",
                p + 1
            );
            best[p][0] = best[p][0].min(bts);
            best[p][1] = best[p][1].min(em);
        }
    }
    eprintln!(
        "best of 3: bootstrap {:.2} s / {:.2} s (speed-up {:.2}x), EvalMod {:.2} s / {:.2} s \
         ({:.2}x), the rest (raise, DFTs) {:.2} s / {:.2} s ({:.2}x)",
        best[0][0],
        best[1][0],
        best[0][0] / best[1][0],
        best[0][1],
        best[1][1],
        best[0][1] / best[1][1],
        best[0][0] - 2.0 * best[0][1],
        best[1][0] - 2.0 * best[1][1],
        (best[0][0] - 2.0 * best[0][1]) / (best[1][0] - 2.0 * best[1][1])
    );
}
