//! Criterion micro-benchmarks of key switching, i.e. of core's one gadget product
//! (`rnsfhe_core::gadget`), through the scheme evaluators: the hybrid gadget in CKKS relinearization of a
//! three-part product and a rotation by one slot at a small preset (`Rec128N13`, `N = 2^13`) and a mid-size
//! one (`PaperTable1L5`, `N = 2^15`, `dnum = 3`), and the per-limb digit gadget in BFV relinearization at
//! `t = 65537`, depths 5 and 20
//! (`BfvParams::generate`). Inputs and keys come from the benchmark tables' own set-ups ([`Table1Bench`],
//! [`BfvBench`]). Threads: rayon's default (`RAYON_NUM_THREADS`).
//!
//! `cargo bench -p rnsfhe-bench --bench keyswitch`.

mod common;

use criterion::{criterion_main, BenchmarkId, Criterion};
use rnsfhe_bench::bfv::BfvBench;
use rnsfhe_bench::ckks::Table1Bench;
use rnsfhe_bfv::BfvParams;
use rnsfhe_ckks::Preset;

/// The CKKS presets: a small one and a mid-size one.
const CKKS_PRESETS: [Preset; 2] = [Preset::Rec128N13, Preset::PaperTable1L5];
/// The plaintext modulus of the BFV parameters.
const BFV_T: u64 = 65537;
/// Depths of the BFV parameters.
const BFV_DEPTHS: [usize; 2] = [5, 20];

fn ckks(c: &mut Criterion) {
    let mut group = c.benchmark_group("ckks_keyswitch");
    for preset in CKKS_PRESETS {
        let bench = common::setup("CKKS keys and inputs", Table1Bench::new(preset));
        let eval = bench.evaluator();
        let (x, y) = bench.inputs();
        let product = common::setup(
            "CKKS product",
            eval.multiply_without_relin(x, y).map_err(Into::into),
        );
        let name = format!("{preset:?}");
        group.bench_function(BenchmarkId::new("relinearize", &name), |b| {
            b.iter(|| eval.relinearize(&product))
        });
        group.bench_function(BenchmarkId::new("rotate_1", &name), |b| {
            b.iter(|| eval.rotate(x, 1))
        });
    }
    group.finish();
}

fn bfv(c: &mut Criterion) {
    let mut group = c.benchmark_group("bfv_keyswitch");
    for depth in BFV_DEPTHS {
        let params = common::setup(
            "BFV parameters",
            BfvParams::generate(BFV_T, depth).map_err(Into::into),
        );
        let bench = common::setup("BFV keys and inputs", BfvBench::new(params));
        let id = BenchmarkId::new("relinearize", format!("t={BFV_T} depth={depth}"));
        group.bench_function(id, |b| b.iter(|| bench.relin()));
    }
    group.finish();
}

/// Runs every benchmark of this file with the settings of [`common::criterion`].
fn benches() {
    let mut c = common::criterion();
    ckks(&mut c);
    bfv(&mut c);
}

criterion_main!(benches);
