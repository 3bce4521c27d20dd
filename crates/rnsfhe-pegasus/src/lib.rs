//! # rnsfhe-pegasus
//!
//! The CKKS <-> LWE bridge of PEGASUS (Lu et al., IEEE S&P 2021, Fig. 6): a CKKS ciphertext of packed
//! values goes through slots-to-coefficients, its coefficients are extracted as LWE ciphertexts and
//! switched to a small dimension, look-up tables evaluate any function on them (`rnsfhe-lwe`), and the
//! results are repacked into one CKKS ciphertext (linear transform of Fig. 5 or ring packing, then an
//! approximate reduction modulo `q_0`).

pub mod dimension_switch;
pub mod error;
pub mod extraction;
pub mod params;
pub mod pipeline;
pub mod repacking;
pub mod ring_packing;

pub use dimension_switch::{DimensionSwitch, DimensionSwitchKeys, RingSwitchingKey};
pub use error::{PegasusError, PegasusResult};
pub use extraction::extract_coefficients;
pub use params::{PipelineParams, PipelinePreset};
pub use pipeline::serialization;
pub use pipeline::{PegasusEvaluator, PegasusKeys, PegasusSecretKeys, PipelineOptions, Repacking};
pub use repacking::{RepackingKey, TiledMatrix};
pub use ring_packing::{PackedLwe, RingPackingKey};
