//! # rnsfhe
//!
//! The facade crate: re-exports the public API of the layers below. It is a library only; the `rnsfhe`
//! command lives in the unpublished crate `rnsfhe-cli`, the benchmark tables in `rnsfhe-bench`.

pub use rnsfhe_apps as apps;
pub use rnsfhe_bfv as bfv;
pub use rnsfhe_ckks as ckks;
pub use rnsfhe_core as core;
pub use rnsfhe_math as math;
pub use rnsfhe_ring as ring;

pub mod wire_samples;

/// The README's Rust code blocks, compiled and run as doc tests by `cargo test` (the README is a tutorial
/// that must keep working).
#[cfg(doctest)]
#[doc = include_str!("../../../README.md")]
pub struct ReadmeDoctests;
