//! Hostile parameter blobs (and blind-rotation keys that claim more than they hold): the loaders' default limits, the fingerprint and the security verdict refuse
//! them before any table is built. Each load is measured here with a counting allocator (peak bytes
//! allocated while it runs) and a clock: the target is under 0.1 s and 50 MB per blob. The blobs are
//! sealed with a valid digest (anyone can compute it), so that they reach the checks behind it.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use rnsfhe::bfv::{BfvContext, BfvParams};
use rnsfhe::ckks::{CkksContext, CkksParams, LoadLimits, Preset, RescalingPolicy, Serializable};
use rnsfhe::core::{ConversionMode, SecretDistribution};
use rnsfhe::math::wire::{reseal, DecodeError, DecodeErrorKind};

/// Counts the bytes allocated now and the peak since [`Peak::reset`].
struct Peak;

static CURRENT: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

unsafe impl GlobalAlloc for Peak {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            let now = CURRENT.fetch_add(layout.size(), Ordering::Relaxed) + layout.size();
            PEAK.fetch_max(now, Ordering::Relaxed);
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) };
        CURRENT.fetch_sub(layout.size(), Ordering::Relaxed);
    }
}

#[global_allocator]
static ALLOCATOR: Peak = Peak;

/// The measurements share the process-wide counters: each test holds this for its whole run, so that
/// no other test allocates while one measures.
static SERIAL: Mutex<()> = Mutex::new(());

fn serial() -> std::sync::MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

/// Runs `load`, returning its error with the time and the peak of bytes allocated above what was
/// allocated before it started.
fn measure<T>(load: impl FnOnce() -> Result<T, DecodeError>) -> (DecodeError, Duration, usize) {
    let base = CURRENT.load(Ordering::Relaxed);
    PEAK.store(base, Ordering::Relaxed);
    let start = Instant::now();
    let result = load();
    let elapsed = start.elapsed();
    let peak = PEAK.load(Ordering::Relaxed).saturating_sub(base);
    match result {
        Ok(_) => panic!("a hostile blob loaded"),
        Err(e) => (e, elapsed, peak),
    }
}

const MAX_TIME: Duration = Duration::from_millis(100);
const MAX_BYTES: usize = 50 << 20;

fn check(what: &str, (err, time, peak): (DecodeError, Duration, usize), field: &str) {
    eprintln!(
        "{what}: {:.1} ms, {:.2} MB: {err}",
        time.as_secs_f64() * 1e3,
        peak as f64 / 1e6
    );
    assert_eq!(err.field, field, "{what}: {err}");
    assert!(time < MAX_TIME, "{what}: {time:?}");
    assert!(peak < MAX_BYTES, "{what}: {peak} bytes");
}

/// CKKS parameter bytes of `params` with the header fingerprint `fingerprint` (sealed).
fn ckks_blob(params: &CkksParams, fingerprint: Option<u64>) -> Vec<u8> {
    // A small context of the same layout gives the bytes; the fields are then overwritten (offsets of
    // `rnsfhe_ckks::serialization`: log_n @16, log_scale @20, q0_bits @24, levels @28, special primes
    // @32, special bits @36, dnum @40, secret @44, sigma @49, conversion @57, rescaling @58, insecure
    // @59).
    let mut small = Preset::Rec128N13.params();
    small.insecure_for_testing = true;
    let mut b = CkksContext::new(small).unwrap().to_bytes();
    let u32s = [
        params.log_n,
        params.log_scale,
        params.q0_bits,
        params.levels as u32,
        params.special_primes as u32,
        params.special_bits,
        params.dnum as u32,
    ];
    for (i, v) in u32s.iter().enumerate() {
        b[16 + 4 * i..20 + 4 * i].copy_from_slice(&v.to_le_bytes());
    }
    let (tag, h) = match params.secret {
        SecretDistribution::Ternary => (0u8, 0u32),
        SecretDistribution::HammingWeight(h) => (1, h as u32),
    };
    b[44] = tag;
    b[45..49].copy_from_slice(&h.to_le_bytes());
    b[49..57].copy_from_slice(&params.sigma.to_le_bytes());
    b[59] = params.insecure_for_testing as u8;
    let fingerprint = fingerprint.unwrap_or_else(|| params.rlwe_params().unwrap().fingerprint());
    b[8..16].copy_from_slice(&fingerprint.to_le_bytes());
    reseal(&mut b);
    b
}

fn big_ckks(log_n: u32, levels: usize, special: usize) -> CkksParams {
    CkksParams {
        log_n,
        log_scale: 50,
        q0_bits: 60,
        levels,
        bootstrap_primes: Vec::new(),
        special_primes: special,
        special_bits: 60,
        // One prime per digit: P (one 60-bit prime) is as large as every digit.
        dnum: levels + 1,
        secret: SecretDistribution::Ternary,
        sigma: 3.2,
        conversion: ConversionMode::Fast,
        rescaling: RescalingPolicy::ExactScale,
        insecure_for_testing: true,
    }
}

#[test]
fn hostile_ckks_parameters_cost_milliseconds() {
    let _serial = serial();
    // The 60-byte blob of the report: N = 2^17, 128 + 128 primes, the insecure flag. It used to cost
    // 4.5 s and 1.3 GiB before the fingerprint check refused it.
    let blob = ckks_blob(&big_ckks(17, 128, 128), Some(0x5a5a));
    check(
        "N = 2^17, 256 primes",
        measure(|| CkksContext::from_bytes(&blob)),
        "params.log_n",
    );
    // Within N but too many primes, and too many words.
    let blob = ckks_blob(&big_ckks(16, 100, 20), Some(0x5a5a));
    check(
        "N = 2^16, 121 primes",
        measure(|| CkksContext::from_bytes(&blob)),
        "params.moduli",
    );
    let blob = ckks_blob(&big_ckks(16, 45, 10), Some(0x5a5a));
    check(
        "N = 2^16, 56 primes",
        measure(|| CkksContext::from_bytes(&blob)),
        "params.moduli",
    );
    // Within the limits, a fingerprint that is not the parameters': refused after the prime search,
    // before any table.
    let blob = ckks_blob(&big_ckks(16, 36, 10), Some(0x5a5a));
    check(
        "N = 2^16, 47 primes, wrong fingerprint",
        measure(|| CkksContext::from_bytes(&blob)),
        "header.fingerprint",
    );
    // The right fingerprint of insecure parameters (log QP far above the bound, a sparse secret, a
    // narrow error): refused unless the reader allows insecure parameters itself.
    for params in [
        big_ckks(16, 36, 10),
        CkksParams {
            secret: SecretDistribution::HammingWeight(64),
            ..big_ckks(15, 10, 3)
        },
        CkksParams {
            sigma: 1e-9,
            ..big_ckks(15, 10, 3)
        },
    ] {
        let blob = ckks_blob(&params, None);
        check(
            &format!(
                "N = 2^{}, secret {:?}, sigma {}, right fingerprint",
                params.log_n, params.secret, params.sigma
            ),
            measure(|| CkksContext::from_bytes(&blob)),
            "parameters",
        );
    }
    // The same bytes load when the caller raises the limits (here: allows insecure parameters).
    let mut ok = big_ckks(12, 2, 1);
    ok.sigma = 1e-9;
    let blob = ckks_blob(&ok, None);
    assert!(CkksContext::from_bytes(&blob).is_err());
    let ctx =
        CkksContext::from_bytes_with(&blob, &LoadLimits::DEFAULT.allowing_insecure()).unwrap();
    assert!(
        ctx.is_insecure()
            && ctx
                .security_warning()
                .unwrap()
                .contains("sigma = 0.000000001")
    );
}

#[test]
fn hostile_bfv_parameters_cost_milliseconds() {
    let _serial = serial();
    // About 2 KB of BFV parameters: N = 2^16, 128 + 128 "primes".
    let q: Vec<u64> = (0..128)
        .map(|i| (1 << 55) + 2 * (1 << 16) * i + 1)
        .collect();
    let p: Vec<u64> = (0..128)
        .map(|i| (1 << 58) + 2 * (1 << 16) * i + 1)
        .collect();
    let blob = bfv_blob(16, &q, &p, 0x5a5a);
    assert!(blob.len() > 2000);
    check(
        "BFV N = 2^16, 256 moduli",
        measure(|| BfvContext::from_bytes(&blob)),
        "params.moduli",
    );
    let blob = bfv_blob(17, &q[..2], &p[..3], 0x5a5a);
    check(
        "BFV N = 2^17",
        measure(|| BfvContext::from_bytes(&blob)),
        "params.log_n",
    );
    // Within the limits, a wrong fingerprint: refused before the primes are even tested.
    let blob = bfv_blob(16, &q[..20], &p[..21], 0x5a5a);
    check(
        "BFV N = 2^16, 41 moduli, wrong fingerprint",
        measure(|| BfvContext::from_bytes(&blob)),
        "header.fingerprint",
    );
}

/// BFV parameter bytes (layout of `rnsfhe_bfv::serialization`) with the header fingerprint `fp`.
fn bfv_blob(log_n: u32, q: &[u64], p: &[u64], fp: u64) -> Vec<u8> {
    let mut params = BfvParams::with_bit_sizes(12, 65537, 40, 2).unwrap();
    params.insecure_for_testing = true;
    let small = BfvContext::new(params).unwrap().to_bytes();
    let mut b = small[..16].to_vec();
    b[8..16].copy_from_slice(&fp.to_le_bytes());
    b.extend_from_slice(&log_n.to_le_bytes());
    b.extend_from_slice(&65537u64.to_le_bytes());
    for moduli in [q, p] {
        b.extend_from_slice(&(moduli.len() as u32).to_le_bytes());
        for m in moduli {
            b.extend_from_slice(&m.to_le_bytes());
        }
    }
    b.extend_from_slice(&0u32.to_le_bytes());
    b.extend_from_slice(&3.2f64.to_le_bytes());
    b.extend_from_slice(&[1, 1]);
    b.extend_from_slice(&[0; 32]);
    reseal(&mut b);
    b
}

#[test]
fn limits_are_checked_on_every_loader_and_raised_explicitly() {
    let _serial = serial();
    let blob = ckks_blob(&big_ckks(17, 2, 1), None);
    let err = CkksContext::from_bytes(&blob).unwrap_err();
    assert!(
        matches!(err.kind, DecodeErrorKind::LimitExceeded { value: 17, .. }),
        "{err}"
    );
    assert!(err.to_string().contains("max_log_n = 16"), "{err}");
    // The stream loader applies the same defaults.
    assert_eq!(
        CkksContext::read_from(&blob[..]).unwrap_err().field,
        "params.log_n"
    );
    // Raised for trusted bytes (and insecure parameters, which these are not: 2^17 with 3 primes is
    // within the HE Standard), the same bytes load.
    let limits = LoadLimits {
        max_log_n: 17,
        ..LoadLimits::DEFAULT
    };
    let ctx = CkksContext::from_bytes_with(&blob, &limits).unwrap();
    assert_eq!(ctx.n(), 1 << 17);
}

/// The one LWE object whose length comes from its bytes, the blind-rotation key (its LWE dimension), and
/// the automorphism-key count: a claimed size without the bytes behind it costs what the bytes hold, not
/// what they claim (the keys are collected as they are read).
#[test]
fn hostile_blind_rotation_keys_allocate_what_their_bytes_hold() {
    use rnsfhe::lwe::BlindRotationKey;
    use rnsfhe::wire_samples::{samples, SampleContexts};
    let ctxs = SampleContexts::new().unwrap();
    let all = samples(&ctxs, 4).unwrap();
    let brk = &all
        .iter()
        .find(|s| s.name == "blind_rotation_key")
        .unwrap()
        .bytes;
    let _guard = serial();
    let edit = |at: usize, v: &[u8]| {
        let mut b = brk.clone();
        b[at..at + v.len()].copy_from_slice(v);
        reseal(&mut b);
        b
    };
    let body = brk.len() - 32;
    for (what, bytes, field) in [
        (
            "n_lwe = 2^17 with 16 coefficients' keys",
            edit(17, &(1u32 << 17).to_le_bytes()),
            "blind_rotation_key.rgsw[16][0].m.b[0].limb[0]",
        ),
        (
            "automorphism-key count 2^32 - 1",
            edit(body - 4, &u32::MAX.to_le_bytes()),
            "blind_rotation_key.automorphism_keys.count",
        ),
    ] {
        let (err, time, peak) = measure(|| BlindRotationKey::from_bytes(&bytes, &ctxs.lwe.ring));
        // The loaded keys take twice their seeded bytes (each seed expands into a polynomial).
        assert!(
            peak < 4 * bytes.len(),
            "{what}: {peak} bytes for {}",
            bytes.len()
        );
        check(what, (err, time, peak), field);
    }
}
