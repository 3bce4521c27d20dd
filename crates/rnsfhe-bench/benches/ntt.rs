//! Criterion micro-benchmarks of the negacyclic NTT ([`NttPlan`]): forward and inverse, single limb, for
//! `N = 2^13 .. 2^16` and a 49-bit prime (below `2^50`: the IFMA path where the CPU has it) and a 60-bit
//! prime, the primes of `rnsfhe bench ntt`.
//!
//! `cargo bench -p rnsfhe-bench --bench ntt`.

mod common;

use std::hint::black_box;

use criterion::{criterion_main, BenchmarkId, Criterion, Throughput};
use rand::{Rng, SeedableRng};
use rnsfhe_bench::ntt::prime_for;
use rnsfhe_bench::AlignedBuffer;
use rnsfhe_math::NttPlan;

/// log2 N of the benchmarks.
const LOG_N: std::ops::RangeInclusive<u32> = 13..=16;
/// Prime sizes in bits: one below 2^50, one near the top of the word-size range.
const PRIME_BITS: [u32; 2] = [49, 60];

fn ntt(c: &mut Criterion) {
    for (direction, inverse) in [("forward", false), ("inverse", true)] {
        let mut group = c.benchmark_group(format!("ntt/{direction}"));
        for log_n in LOG_N {
            let n = 1usize << log_n;
            group.throughput(Throughput::Elements(n as u64));
            for bits in PRIME_BITS {
                let (p, _) = common::setup("prime", prime_for(n, bits));
                let plan = common::setup("plan", NttPlan::new(n, p).map_err(Into::into));
                let mut rng = rand::rngs::StdRng::seed_from_u64(u64::from(log_n * bits));
                let input: Vec<u64> = (0..n).map(|_| rng.gen_range(0..p)).collect();
                let mut buffer = AlignedBuffer::from_slice(&input);
                // Outputs stay in [0, p), so transforming the same buffer again and again is valid.
                let id = BenchmarkId::new(format!("{bits}-bit"), format!("2^{log_n}"));
                group.bench_function(id, |b| {
                    b.iter(|| {
                        let a = black_box(buffer.as_mut_slice());
                        if inverse {
                            plan.inverse(a)
                        } else {
                            plan.forward(a)
                        }
                    })
                });
            }
        }
        group.finish();
    }
}

/// Runs every benchmark of this file with the settings of [`common::criterion`].
fn benches() {
    let mut c = common::criterion();
    ntt(&mut c);
}

criterion_main!(benches);
