//! The BFV generator and presets in both basis-conversion modes HPS multiplication admits
//! (`BfvParams::generate_with_rotations_and_conversion`, `BfvPreset::params_with_conversion`).
//!
//! * Every preset of HPS Table 3 builds in `ExactFloat` and `ExactInteger` with the same `N` and prime
//!   count; `ExactInteger`'s `Q` and `P` meet Qu-Xu Theorem 1 and are byte for byte `ExactFloat`'s where
//!   those already do (55-bit `Q`); `Fast` is refused.
//! * Circuits of the full depth decrypt correctly in `ExactInteger` on the small presets (`t = 2`, the
//!   coefficient encoder) and on generated `t = 65537` parameters with a row rotation after every
//!   multiplication (the rotation budget of `BfvParams::generate`), including the parameters whose `Q`
//!   the HE Standard cap spread over two prime sizes.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::sync::Arc;

use rand::SeedableRng;
use rnsfhe_bfv::{
    max_log_q_128, BatchEncoder, BfvContext, BfvError, BfvParams, BfvPreset, CoeffEncoder,
    ConversionMode,
};
use rnsfhe_ring::conversion::{QuXuCloseness, DEFAULT_QU_XU_FAILURE_TARGET};

use common::{negacyclic_mod, random_values, Setup};

fn admitted(moduli: &[u64]) -> bool {
    QuXuCloseness::of(moduli).admits(DEFAULT_QU_XU_FAILURE_TARGET)
}

fn log2(moduli: &[u64]) -> f64 {
    moduli.iter().map(|&q| (q as f64).log2()).sum()
}

/// Checks `exact` (ExactInteger) against `float` (the same request in ExactFloat).
fn check_pair(what: &str, float: &BfvParams, exact: &BfvParams) {
    assert_eq!(float.conversion, ConversionMode::ExactFloat);
    assert_eq!(exact.conversion, ConversionMode::ExactInteger);
    assert_eq!(exact.log_n, float.log_n, "{what}: N");
    assert_eq!(exact.q_moduli.len(), float.q_moduli.len(), "{what}: k");
    assert!(admitted(&exact.q_moduli), "{what}: Q");
    assert!(admitted(&exact.p_moduli), "{what}: P");
    let bound = max_log_q_128(exact.n()).unwrap() as f64;
    assert!(
        log2(&exact.q_moduli) <= bound,
        "{what}: log Q above the bound"
    );
    assert!(
        log2(&exact.p_moduli)
            >= 1.0
                + (exact.plaintext_modulus as f64).log2()
                + exact.log_n as f64
                + log2(&exact.q_moduli),
        "{what}: P < 2 t N Q"
    );
    if admitted(&float.q_moduli) {
        let same = BfvParams {
            conversion: ConversionMode::ExactFloat,
            ..exact.clone()
        };
        assert_eq!(
            &same, float,
            "{what}: ExactFloat's primes already admit ExactInteger"
        );
    } else {
        // The cap's two prime sizes, replaced by one: at most k - 1 bits of log Q lost.
        assert!(log2(&exact.q_moduli) > log2(&float.q_moduli) - exact.q_moduli.len() as f64);
    }
}

#[test]
fn every_preset_builds_in_both_exact_modes() {
    for preset in BfvPreset::ALL {
        let float = preset
            .params_with_conversion(ConversionMode::ExactFloat)
            .unwrap();
        assert_eq!(float, preset.params().unwrap(), "{preset:?}");
        let exact = preset
            .params_with_conversion(ConversionMode::ExactInteger)
            .unwrap();
        check_pair(&format!("{preset:?}"), &float, &exact);
        println!(
            "{preset:?}: N 2^{}, Q {} primes ({:.1} bits, ExactFloat {:.1}), relin {:?} (ExactFloat {:?}), P {} primes",
            exact.log_n,
            exact.q_moduli.len(),
            log2(&exact.q_moduli),
            log2(&float.q_moduli),
            exact.relin_base_log,
            float.relin_base_log,
            exact.p_moduli.len()
        );
        // Contexts up to N = 2^16 (T2Depth100's N = 2^17 tables are left to the parameter checks).
        if exact.log_n <= 16 {
            let ctx = BfvContext::new(exact).unwrap();
            assert_eq!(ctx.conversion(), ConversionMode::ExactInteger);
            assert!(ctx.security_warning().is_none());
        }
        match preset.params_with_conversion(ConversionMode::Fast) {
            Err(BfvError::InvalidParams {
                what: "conversion", ..
            }) => {}
            other => panic!("{preset:?}: Fast must be refused, got {other:?}"),
        }
    }
}

#[test]
fn generated_parameters_in_both_exact_modes() {
    for depth in [1usize, 2, 3, 5, 8, 10, 15, 20, 30] {
        let float = BfvParams::generate(65537, depth).unwrap();
        assert_eq!(
            BfvParams::generate_with_conversion(65537, depth, ConversionMode::ExactFloat).unwrap(),
            float
        );
        let exact = BfvParams::generate_with_conversion(65537, depth, ConversionMode::ExactInteger)
            .unwrap();
        check_pair(&format!("t = 65537, depth {depth}"), &float, &exact);
    }
}

#[test]
fn t2_presets_compute_at_full_depth_in_exact_integer() {
    for preset in [BfvPreset::T2Depth1, BfvPreset::T2Depth5] {
        let ctx = BfvContext::new(
            preset
                .params_with_conversion(ConversionMode::ExactInteger)
                .unwrap(),
        )
        .unwrap();
        let mut setup = Setup::new(Arc::clone(&ctx), 3);
        let enc = CoeffEncoder::new(&ctx);
        let mut vr = rand::rngs::StdRng::seed_from_u64(5);
        let mut x = random_values(&mut vr, setup.n, 2);
        let mut ct = setup
            .pk_enc
            .encrypt(&enc.encode_u64(&x).unwrap(), &mut setup.r)
            .unwrap();
        // A chain of `depth` products, each with a fresh factor.
        for level in 0..preset.depth() {
            let y = random_values(&mut vr, setup.n, 2);
            let cy = setup
                .pk_enc
                .encrypt(&enc.encode_u64(&y).unwrap(), &mut setup.r)
                .unwrap();
            ct = setup.ev.multiply(&ct, &cy, &setup.keys.rk).unwrap();
            x = negacyclic_mod(&x, &y, 2);
            let got = enc.decode_u64(&setup.dec.decrypt(&ct).unwrap()).unwrap();
            assert_eq!(got, x, "{preset:?}: level {}", level + 1);
        }
    }
}

#[test]
fn capped_t65537_parameters_compute_with_rotations_in_exact_integer() {
    let t = 65537u64;
    // Depths 1, 2 (N = 2^12) and 5 (N = 2^13): Q of 54- and 55-bit primes in ExactFloat, of one size here.
    for depth in [1usize, 2, 5] {
        let float = BfvParams::generate(t, depth).unwrap();
        assert!(
            !admitted(&float.q_moduli),
            "depth {depth}: expected a capped Q"
        );
        let p =
            BfvParams::generate_with_conversion(t, depth, ConversionMode::ExactInteger).unwrap();
        let ctx = BfvContext::new(p).unwrap();
        let mut setup = Setup::new(Arc::clone(&ctx), 9);
        let gk = setup
            .keys
            .kg
            .galois_keys(&[1], false, &mut setup.r)
            .unwrap();
        let enc = BatchEncoder::new(&ctx).unwrap();
        let n = setup.n;
        let rotate = |v: &[u64]| -> Vec<u64> {
            let h = v.len() / 2;
            (0..v.len())
                .map(|j| {
                    if j < h {
                        v[(j + 1) % h]
                    } else {
                        v[h + (j - h + 1) % h]
                    }
                })
                .collect()
        };
        let mut vr = rand::rngs::StdRng::seed_from_u64(depth as u64);
        let mut x = random_values(&mut vr, n, t);
        let mut ct = setup
            .pk_enc
            .encrypt(&enc.encode_u64(&x).unwrap(), &mut setup.r)
            .unwrap();
        ct = setup.ev.rotate_rows(&ct, 1, &gk).unwrap();
        x = rotate(&x);
        // rotate, multiply, rotate, ..., multiply, rotate: the promise of BfvParams::generate.
        for level in 0..depth {
            let y = random_values(&mut vr, n, t);
            let mut cy = setup
                .pk_enc
                .encrypt(&enc.encode_u64(&y).unwrap(), &mut setup.r)
                .unwrap();
            cy = setup.ev.rotate_rows(&cy, 1, &gk).unwrap();
            let y = rotate(&y);
            ct = setup.ev.multiply(&ct, &cy, &setup.keys.rk).unwrap();
            ct = setup.ev.rotate_rows(&ct, 1, &gk).unwrap();
            x = rotate(
                &x.iter()
                    .zip(&y)
                    .map(|(&a, &b)| a * b % t)
                    .collect::<Vec<_>>(),
            );
            let got = enc.decode_u64(&setup.dec.decrypt(&ct).unwrap()).unwrap();
            assert_eq!(got, x, "depth {depth}: level {}", level + 1);
        }
    }
}
