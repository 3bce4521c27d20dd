//! Criterion micro-benchmarks of RNS basis conversion in its three modes (`Fast`, `ExactFloat`,
//! `ExactInteger`) and of HPS simple and complex scaling, on the bases of `rnsfhe bench conversion`
//! ([`ConversionCase`], [`ScalingCase`]) at `N = 2^14`.
//!
//! `cargo bench -p rnsfhe-bench --bench conversion`.

mod common;

use std::hint::black_box;

use criterion::{criterion_main, BenchmarkId, Criterion, Throughput};
use rnsfhe_bench::conversion::{ConversionCase, ScalingCase};
use rnsfhe_ring::conversion::ConversionMode;

/// Ring degree of every benchmark here.
const N: usize = 1 << 14;
/// Source and target primes of the conversion: a CKKS ModUp digit of 10 primes into 4 special primes.
const CONVERSION_LIMBS: (usize, usize) = (10, 4);
/// Primes of `Q` in the scaling benchmarks (`P` has one more), about a BFV modulus of depth 10.
const SCALING_LIMBS: usize = 10;

fn conversion(c: &mut Criterion) {
    let (l, k) = CONVERSION_LIMBS;
    let case = common::setup("bases", ConversionCase::new(N, l, k));
    let mut group = c.benchmark_group("conversion");
    group.throughput(Throughput::Elements(N as u64));
    for mode in [
        ConversionMode::Fast,
        ConversionMode::ExactFloat,
        ConversionMode::ExactInteger,
    ] {
        let converter = common::setup("converter", case.converter(mode));
        let mut out = vec![0u64; k * N];
        let id = BenchmarkId::new(format!("{mode:?}"), format!("{l}->{k} primes"));
        group.bench_function(id, |b| {
            b.iter(|| converter.convert_into(black_box(case.x.data()), &mut out))
        });
    }
    group.finish();
}

fn scaling(c: &mut Criterion) {
    let l = SCALING_LIMBS;
    let case = common::setup("scalers", ScalingCase::new(N, l));
    let mut group = c.benchmark_group("hps_scaling");
    group.throughput(Throughput::Elements(N as u64));
    let mut out = vec![0u64; N];
    group.bench_function(BenchmarkId::new("simple", format!("{l} primes")), |b| {
        b.iter(|| case.simple.scale_into(black_box(&case.xq), &mut out))
    });
    let id = BenchmarkId::new("complex", format!("{l}+{} primes", l + 1));
    group.bench_function(id, |b| b.iter(|| case.complex.scale(black_box(&case.xqp))));
    group.finish();
}

/// Runs every benchmark of this file with the settings of [`common::criterion`].
fn benches() {
    let mut c = common::criterion();
    conversion(&mut c);
    scaling(&mut c);
}

criterion_main!(benches);
