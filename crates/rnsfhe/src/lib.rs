//! # rnsfhe
//!
//! The facade crate: re-exports the public API of the layers below.

pub use rnsfhe_ckks as ckks;
pub use rnsfhe_core as core;
pub use rnsfhe_math as math;
pub use rnsfhe_ring as ring;
