//! What the criterion benchmarks share: the global allocator of the `rnsfhe` command (so that kernels that
//! allocate are timed as the command times them), short criterion settings, and the unwrapping of setup
//! results (a benchmark whose setup fails has nothing to measure).

use std::time::Duration;

use criterion::Criterion;

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Criterion with few samples and short phases: every kernel here takes microseconds to tens of
/// milliseconds, and the whole `cargo bench -p rnsfhe-bench` has to finish in minutes on two cores.
pub fn criterion() -> Criterion {
    Criterion::default()
        .sample_size(10)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_millis(1500))
        .configure_from_args()
}

/// The value of a setup step, or a panic naming the step and the error.
#[allow(clippy::panic)] // benchmark code, not library code: criterion has no error path for a failed setup
pub fn setup<T>(what: &str, result: anyhow::Result<T>) -> T {
    match result {
        Ok(value) => value,
        Err(e) => panic!("benchmark setup failed ({what}): {e:#}"),
    }
}
