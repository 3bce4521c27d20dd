//! Criterion micro-benchmarks of the samplers' ChaCha20 keystream and of uniform sampling modulo a prime
//! (`rnsfhe_math::sampling`), the public expansion that is about half of a CKKS key generation: 64 KiB of
//! keystream from our [`Csprng`] and from `rand_chacha`'s `ChaCha20Rng` (the same bytes), and
//! [`fill_uniform_mod`] of `2^15` residues of a 55-bit prime (one limb of a key's `a` at `N = 2^15`) from
//! each generator. Single thread.
//!
//! `cargo bench -p rnsfhe-bench --bench sampling`.

mod common;

use std::hint::black_box;

use criterion::{criterion_main, BenchmarkId, Criterion, Throughput};
use rand::{RngCore, SeedableRng};
use rand_chacha::ChaCha20Rng;
use rnsfhe_bench::ntt::prime_for;
use rnsfhe_math::sampling::{fill_uniform_mod, Csprng};
use rnsfhe_math::Modulus;

/// Bytes of keystream per call of the keystream benchmark.
const KEYSTREAM_BYTES: usize = 1 << 16;
/// Residues per call of the uniform benchmark: one limb at `N = 2^15`.
const LIMB: usize = 1 << 15;
/// Bits of the prime of the uniform benchmark (the `q_i` of the paper presets).
const PRIME_BITS: u32 = 55;

fn keystream(c: &mut Criterion) {
    let mut group = c.benchmark_group("sampling/keystream");
    group.throughput(Throughput::Bytes(KEYSTREAM_BYTES as u64));
    let mut bytes = vec![0u8; KEYSTREAM_BYTES];
    let mut ours = Csprng::insecure_from_seed_for_tests([3u8; 32]);
    group.bench_function("rnsfhe Csprng", |b| {
        b.iter(|| ours.fill_bytes(black_box(&mut bytes)))
    });
    let mut reference = ChaCha20Rng::from_seed([3u8; 32]);
    group.bench_function("rand_chacha ChaCha20Rng", |b| {
        b.iter(|| reference.fill_bytes(black_box(&mut bytes)))
    });
    group.finish();
}

fn uniform(c: &mut Criterion) {
    let mut group = c.benchmark_group("sampling/fill_uniform_mod");
    group.throughput(Throughput::Elements(LIMB as u64));
    let (p, _) = common::setup("prime", prime_for(LIMB, PRIME_BITS));
    let q = common::setup("modulus", Modulus::new(p).map_err(Into::into));
    let mut out = vec![0u64; LIMB];
    let id = |generator: &str| BenchmarkId::new(generator, format!("{PRIME_BITS}-bit, 2^15"));
    let mut ours = Csprng::insecure_from_seed_for_tests([5u8; 32]);
    group.bench_function(id("rnsfhe Csprng"), |b| {
        b.iter(|| fill_uniform_mod(&mut ours, &q, black_box(&mut out)))
    });
    let mut reference = ChaCha20Rng::from_seed([5u8; 32]);
    group.bench_function(id("rand_chacha ChaCha20Rng"), |b| {
        b.iter(|| fill_uniform_mod(&mut reference, &q, black_box(&mut out)))
    });
    group.finish();
}

/// Runs every benchmark of this file with the settings of [`common::criterion`].
fn benches() {
    let mut c = common::criterion();
    keystream(&mut c);
    uniform(&mut c);
}

criterion_main!(benches);
