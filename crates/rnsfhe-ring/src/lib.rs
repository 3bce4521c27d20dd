//! # rnsfhe-ring
//!
//! RNS bases and polynomials for rnsfhe: [`RnsBasis`] (a list of NTT primes with its precomputations;
//! levels are prefixes), [`Poly<Coeff>`](Poly) / [`Poly<Ntt>`](Poly) (one contiguous buffer, the form in
//! the type), automorphisms and the Galois group of rotations ([`galois`]), basis conversion in three
//! modes ([`conversion`]), ModUp / ModDown and rescaling ([`modswitch`]), HPS simple and complex scaling
//! ([`scaling`]) and gadget decompositions ([`gadget`]), the wire encoding of polynomials ([`wire`]),
//! monomials in NTT form ([`ntt_monomial`]), and the active waiting of the thread pool during long
//! operations of many short parallel sections ([`parallel`]).
//!
//! This crate knows nothing of keys or encryption; that is `rnsfhe-core`.

pub mod basis;
pub mod conversion;
pub mod crt;
pub mod error;
pub mod gadget;
pub mod galois;
pub mod modswitch;
mod multiword;
pub mod ntt_monomial;
pub mod parallel;
pub mod poly;
pub mod scaling;
pub mod wire;

pub use basis::RnsBasis;
pub use conversion::{BasisConverter, ConversionMode, Exactness};
pub use crt::CrtComposer;
pub use error::{Error, Result};
pub use gadget::{RnsGadget, RnsSignedDigits, SignedDigits};
pub use galois::{GaloisElement, GaloisGroup};
pub use modswitch::{ModSwitcher, Rescaler};
pub use ntt_monomial::{NttMonomialFactors, NttMonomials, NttShoupPoly};
pub use poly::{Coeff, Form, Ntt, Poly};
pub use scaling::{ComplexScaler, FractionPath, SimpleScaler};
