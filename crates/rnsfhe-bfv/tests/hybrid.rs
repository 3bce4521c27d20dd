//! Hybrid key switching (`KeySwitchTechnique::Hybrid`): relinearization, row rotations and the column
//! swap decrypt to the plaintext computation; the noise they add is at most that of CRT key switching;
//! the parameter choice of `with_hybrid_key_switching` in the security room; its keys and parameters on
//! the wire (and hostile parameter bytes refused); the same results on 1, 2 and 3 threads; the exact
//! integer conversion mode.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::sync::Arc;

use rnsfhe_bfv::{
    BatchEncoder, BfvContext, BfvError, BfvParams, Ciphertext, GaloisKeys, KeySwitchTechnique,
    RelinKey,
};
use rnsfhe_core::security::max_log_qp;
use rnsfhe_core::SecurityLevel;
use rnsfhe_math::primes::ntt_primes_of_bits;
use rnsfhe_math::wire::{digest_of, Deserializable, Integrity, Serializable};

use common::{random_values, Setup};

const T: u64 = 65537;

/// `N = 2^12`, four 50-bit primes (insecure, for speed), with hybrid key switching over `specials`
/// special primes of 51 bits and `dnum` digit groups.
fn hybrid_params(specials: usize, dnum: usize) -> BfvParams {
    let mut p = BfvParams::with_bit_sizes(12, T, 50, 4).unwrap();
    p.insecure_for_testing = true;
    let mut taken = p.q_moduli.clone();
    taken.extend(&p.p_moduli);
    let special_moduli = ntt_primes_of_bits(51, 2 << 12, specials, &taken).unwrap();
    p.key_switching = KeySwitchTechnique::Hybrid {
        special_moduli,
        dnum,
    };
    p
}

/// Slot-wise product mod `t`.
fn mul_slots(a: &[u64], b: &[u64]) -> Vec<u64> {
    a.iter().zip(b).map(|(&x, &y)| x * y % T).collect()
}

/// Both rows of the `2 x N/2` slot matrix rotated left by `step`.
fn rotate_slots(a: &[u64], step: usize) -> Vec<u64> {
    let half = a.len() / 2;
    (0..a.len())
        .map(|i| {
            let (row, j) = (i / half, i % half);
            a[row * half + (j + step) % half]
        })
        .collect()
}

fn decrypt(s: &Setup, ct: &Ciphertext) -> Vec<u64> {
    BatchEncoder::new(&s.ctx)
        .unwrap()
        .decode_u64(&s.dec.decrypt(ct).unwrap())
        .unwrap()
}

#[test]
fn hybrid_relinearization_and_rotations_decrypt_correctly() {
    for (specials, dnum) in [(2, 2), (1, 4), (4, 1)] {
        let ctx = BfvContext::new(hybrid_params(specials, dnum)).unwrap();
        assert_eq!(ctx.relin_components(), dnum);
        assert!(ctx.extended_public_key());
        let mut s = Setup::new(Arc::clone(&ctx), 3);
        assert!(s.keys.pk.is_extended());
        let encoder = BatchEncoder::new(&ctx).unwrap();
        let (x, y) = (
            random_values(&mut s.r, s.n, T),
            random_values(&mut s.r, s.n, T),
        );
        let cx = s
            .pk_enc
            .encrypt(&encoder.encode_u64(&x).unwrap(), &mut s.r)
            .unwrap();
        let cy = s
            .pk_enc
            .encrypt(&encoder.encode_u64(&y).unwrap(), &mut s.r)
            .unwrap();
        let xy = s.ev.multiply(&cx, &cy, &s.keys.rk).unwrap();
        assert_eq!(decrypt(&s, &xy), mul_slots(&x, &y), "dnum {dnum}");
        let xyy = s.ev.multiply(&xy, &cy, &s.keys.rk).unwrap();
        assert_eq!(decrypt(&s, &xyy), mul_slots(&mul_slots(&x, &y), &y));

        let gk = s.keys.kg.galois_keys(&[1, -3], true, &mut s.r).unwrap();
        assert_eq!(gk.len(), 3);
        for key in gk.elements() {
            assert_eq!(gk.get(key).unwrap().rows().len(), dnum);
        }
        let rotated = s.ev.rotate_rows(&xy, 1, &gk).unwrap();
        assert_eq!(decrypt(&s, &rotated), rotate_slots(&mul_slots(&x, &y), 1));
        let back = s.ev.rotate_rows(&rotated, -3, &gk).unwrap();
        let half = s.n / 2;
        assert_eq!(
            decrypt(&s, &back),
            rotate_slots(&mul_slots(&x, &y), half - 2)
        );
        let swapped = s.ev.rotate_columns(&cx, &gk).unwrap();
        let want: Vec<u64> = x[half..].iter().chain(&x[..half]).copied().collect();
        assert_eq!(decrypt(&s, &swapped), want);
    }
}

#[test]
fn hybrid_key_switching_adds_no_more_noise_than_crt() {
    let hybrid = BfvContext::new(hybrid_params(2, 2)).unwrap();
    let crt = BfvContext::new(BfvParams {
        key_switching: KeySwitchTechnique::Crt,
        ..hybrid.params().clone()
    })
    .unwrap();
    assert_ne!(hybrid.fingerprint(), crt.fingerprint());
    let mut budgets = Vec::new();
    for ctx in [&hybrid, &crt] {
        let mut s = Setup::new(Arc::clone(ctx), 5);
        let encoder = BatchEncoder::new(ctx).unwrap();
        let x = random_values(&mut s.r, s.n, T);
        // Secret-key encryption: the same fresh noise in both contexts.
        let cx = s
            .sk_enc
            .encrypt(&encoder.encode_u64(&x).unwrap(), &mut s.r)
            .unwrap();
        let gk = s.keys.kg.galois_keys(&[1], false, &mut s.r).unwrap();
        let fresh = s.dec.noise_budget(&cx).unwrap();
        let rotated = s
            .dec
            .noise_budget(&s.ev.rotate_rows(&cx, 1, &gk).unwrap())
            .unwrap();
        let product = s.ev.multiply(&cx, &cx, &s.keys.rk).unwrap();
        let unrelinearized = s.ev.multiply_no_relin(&cx, &cx).unwrap();
        budgets.push((
            fresh,
            rotated,
            s.dec.noise_budget(&product).unwrap(),
            s.dec.noise_budget(&unrelinearized).unwrap(),
        ));
    }
    let ((h_fresh, h_rot, h_mul, h_tensor), (c_fresh, c_rot, c_mul, _)) = (budgets[0], budgets[1]);
    assert!((h_fresh - c_fresh).abs() < 1.0, "{budgets:?}");
    // CRT digits of 50 bits cost a rotation of a fresh ciphertext tens of bits; the hybrid one a few.
    assert!(h_rot > c_rot + 20.0, "{budgets:?}");
    assert!(h_rot > h_fresh - 4.0, "{budgets:?}");
    assert!(h_mul >= c_mul - 0.5, "{budgets:?}");
    assert!(
        h_mul > h_tensor - 1.0,
        "relinearization adds ~nothing: {budgets:?}"
    );
}

#[test]
fn with_hybrid_key_switching_fills_the_security_room() {
    let p20 = BfvParams::generate(T, 20).unwrap();
    let h20 = p20.clone().with_hybrid_key_switching().unwrap();
    match &h20.key_switching {
        KeySwitchTechnique::Hybrid {
            special_moduli,
            dnum,
        } => {
            assert_eq!((special_moduli.len(), *dnum), (2, 7));
            assert!(special_moduli.iter().all(|p| !p20.q_moduli.contains(p)));
            // The widest q_i's size, so that P_ks is within a factor 2^2 of each digit group.
            assert!(special_moduli.iter().all(|&p| p >> 54 == 1));
        }
        other => panic!("{other:?}"),
    }
    let bound = max_log_qp(h20.n(), SecurityLevel::Bits128).unwrap() as f64;
    assert!(h20.log2_key_modulus() <= bound && h20.security().is_secure());
    assert_eq!(h20.q_moduli, p20.q_moduli);

    let h30 = BfvParams::generate(T, 30)
        .unwrap()
        .with_hybrid_key_switching()
        .unwrap();
    assert!(matches!(
        &h30.key_switching,
        KeySwitchTechnique::Hybrid { special_moduli, dnum: 2 } if special_moduli.len() == 10
    ));
    assert!(h30.security().is_secure());

    // Depth 10: log2 Q = 385 of 438 bits, no room for a 56-bit special prime.
    let err = BfvParams::generate(T, 10)
        .unwrap()
        .with_hybrid_key_switching()
        .unwrap_err();
    assert!(err.to_string().contains("room"), "{err}");

    // Hybrid keys do not mix with CRT digits.
    let err = BfvContext::new(BfvParams {
        relin_base_log: Some(30),
        ..hybrid_params(2, 2)
    })
    .unwrap_err();
    assert!(
        matches!(
            err,
            BfvError::InvalidParams {
                what: "key_switching",
                ..
            }
        ),
        "{err}"
    );
    // dnum outside [1, k] and no special prime are refused by the RLWE layer.
    for (specials, dnum) in [(2, 0), (2, 5), (0, 2)] {
        assert!(BfvContext::new(hybrid_params(specials, dnum)).is_err());
    }
    // Special primes that repeat Q, repeat each other, are not NTT primes or not prime: errors, not
    // panics. A special prime may repeat an auxiliary prime (the bases never meet).
    let base = hybrid_params(2, 2);
    let with_special = |special_moduli: Vec<u64>| BfvParams {
        key_switching: KeySwitchTechnique::Hybrid {
            special_moduli,
            dnum: 2,
        },
        ..base.clone()
    };
    let (q0, p0) = (base.q_moduli[0], base.p_moduli[0]);
    let ntt_prime = ntt_primes_of_bits(51, 2 << 12, 1, &[]).unwrap()[0];
    for special in [
        vec![q0],
        vec![ntt_prime, ntt_prime],
        vec![(1 << 40) + 1],
        vec![4 * 8192 * 3 + 1 + 8192],
        vec![1],
    ] {
        assert!(
            BfvContext::new(with_special(special.clone())).is_err(),
            "{special:?}"
        );
    }
    let shared = BfvContext::new(with_special(vec![p0])).unwrap();
    let mut s = Setup::new(shared, 13);
    let x = random_values(&mut s.r, s.n, T);
    let encoder = BatchEncoder::new(&s.ctx).unwrap();
    let ct = s
        .sk_enc
        .encrypt(&encoder.encode_u64(&x).unwrap(), &mut s.r)
        .unwrap();
    let sq = s.ev.multiply(&ct, &ct, &s.keys.rk).unwrap();
    assert_eq!(decrypt(&s, &sq), mul_slots(&x, &x));
}

#[test]
fn hybrid_depth20_parameters_multiply_and_rotate() {
    let params = BfvParams::generate(T, 20)
        .unwrap()
        .with_hybrid_key_switching()
        .unwrap();
    let ctx = BfvContext::new(params).unwrap();
    assert!(ctx.is_secure());
    let mut s = Setup::new(Arc::clone(&ctx), 7);
    let encoder = BatchEncoder::new(&ctx).unwrap();
    let x = random_values(&mut s.r, s.n, T);
    let mut ct = s
        .pk_enc
        .encrypt(&encoder.encode_u64(&x).unwrap(), &mut s.r)
        .unwrap();
    let gk = s.keys.kg.galois_keys(&[1], false, &mut s.r).unwrap();
    let mut want = x.clone();
    for _ in 0..3 {
        ct = s.ev.multiply(&ct, &ct, &s.keys.rk).unwrap();
        ct = s.ev.rotate_rows(&ct, 1, &gk).unwrap();
        want = rotate_slots(&mul_slots(&want, &want), 1);
    }
    assert_eq!(decrypt(&s, &ct), want);
    assert!(s.dec.noise_budget(&ct).unwrap() > 500.0);
}

#[test]
fn hybrid_parameters_and_keys_round_trip_on_the_wire() {
    let ctx = BfvContext::new(hybrid_params(2, 2)).unwrap();
    let bytes = ctx.to_bytes();
    let (params, fingerprint) = BfvParams::from_bytes(&bytes).unwrap();
    assert_eq!(&params, ctx.params());
    assert_eq!(fingerprint, ctx.fingerprint());
    let limits = rnsfhe_bfv::LoadLimits {
        allow_insecure: true,
        ..Default::default()
    };
    let back = BfvContext::from_bytes_with(&bytes, &limits).unwrap();
    assert_eq!(back.fingerprint(), ctx.fingerprint());

    let mut s = Setup::new(Arc::clone(&ctx), 9);
    let gk = s.keys.kg.galois_keys(&[2], true, &mut s.r).unwrap();
    let rk_back = RelinKey::from_bytes(&s.keys.rk.to_bytes(), &back).unwrap();
    assert_eq!(rk_back.components(), s.keys.rk.components());
    let gk_back = GaloisKeys::from_bytes(&gk.to_bytes(), &back).unwrap();
    assert_eq!(gk_back, gk);
    // Keys of the CRT twin (other fingerprint) are refused.
    let crt = BfvContext::new(BfvParams {
        key_switching: KeySwitchTechnique::Crt,
        ..ctx.params().clone()
    })
    .unwrap();
    assert!(RelinKey::from_bytes(&s.keys.rk.to_bytes(), &crt).is_err());

    // The flags byte and the hybrid section (u32 dnum, u32 count, two u64 primes before the 32-byte
    // digest): bits above 1, dnum 0 or above k, no special prime. Edits are sealed again so that they
    // reach the field they target.
    let body_end = bytes.len() - 32;
    let flags_at = body_end - (4 + 4 + 2 * 8) - 1;
    assert_eq!(bytes[flags_at], 3, "insecure | hybrid");
    let edited = |at: usize, new: &[u8]| {
        let mut body = bytes[..body_end].to_vec();
        body[at..at + new.len()].copy_from_slice(new);
        let digest = digest_of(&body, Integrity::Digest);
        [body, digest.to_vec()].concat()
    };
    assert!(BfvParams::from_bytes(&edited(flags_at, &[3])).is_ok());
    for (b, field) in [
        (edited(flags_at, &[7]), "params.flags"),
        (edited(flags_at + 1, &0u32.to_le_bytes()), "params.dnum"),
        (edited(flags_at + 1, &5u32.to_le_bytes()), "params.dnum"),
        (
            edited(flags_at + 5, &0u32.to_le_bytes()),
            "params.special_moduli.count",
        ),
    ] {
        let err = BfvParams::from_bytes(&b).unwrap_err();
        assert_eq!(err.field, field, "{err}");
    }
    // A section the flags do not announce is bytes after the object's end.
    assert!(BfvParams::from_bytes(&edited(flags_at, &[1])).is_err());
}

#[test]
fn hybrid_key_switching_is_the_same_on_one_two_and_three_threads() {
    let ctx = BfvContext::new(hybrid_params(2, 2)).unwrap();
    let mut s = Setup::new(Arc::clone(&ctx), 11);
    let x = random_values(&mut s.r, s.n, T);
    let pt = BatchEncoder::new(&ctx).unwrap().encode_u64(&x).unwrap();
    let ct = s.sk_enc.encrypt(&pt, &mut s.r).unwrap();
    let gk = s.keys.kg.galois_keys(&[1], false, &mut s.r).unwrap();
    let run = |threads: usize| {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap();
        pool.install(|| {
            (
                s.ev.multiply(&ct, &ct, &s.keys.rk).unwrap(),
                s.ev.rotate_rows(&ct, 1, &gk).unwrap(),
            )
        })
    };
    let one = run(1);
    assert_eq!(run(2), one);
    assert_eq!(run(3), one);
}

/// `generate_with_conversion(t, 12, ExactInteger)` takes hybrid key switching too (its ModUp and ModDown in
/// the Qu-Xu mode): a product relinearized and rotated decrypts to the plaintext computation.
#[test]
fn hybrid_key_switching_in_the_exact_integer_mode() {
    let params =
        BfvParams::generate_with_conversion(T, 12, rnsfhe_bfv::ConversionMode::ExactInteger)
            .unwrap();
    assert!(matches!(
        params.key_switching,
        KeySwitchTechnique::Hybrid { dnum: 2, .. }
    ));
    let ctx = BfvContext::new(params).unwrap();
    assert_eq!(
        ctx.rlwe().params().conversion,
        rnsfhe_bfv::ConversionMode::ExactInteger
    );
    let mut s = Setup::new(Arc::clone(&ctx), 17);
    let x = random_values(&mut s.r, s.n, T);
    let encoder = BatchEncoder::new(&ctx).unwrap();
    let ct = s
        .pk_enc
        .encrypt(&encoder.encode_u64(&x).unwrap(), &mut s.r)
        .unwrap();
    let gk = s.keys.kg.galois_keys(&[1], false, &mut s.r).unwrap();
    let out =
        s.ev.rotate_rows(&s.ev.multiply(&ct, &ct, &s.keys.rk).unwrap(), 1, &gk)
            .unwrap();
    assert_eq!(decrypt(&s, &out), rotate_slots(&mul_slots(&x, &x), 1));
}
