//! # rnsfhe
//!
//! The facade crate: re-exports the public API of the layers below. It is a library only; the `rnsfhe`
//! command lives in the unpublished crate `rnsfhe-cli`, the benchmark tables in `rnsfhe-bench`.

pub use rnsfhe_apps as apps;
pub use rnsfhe_bfv as bfv;
pub use rnsfhe_ckks as ckks;
pub use rnsfhe_core as core;
pub use rnsfhe_lwe as lwe;
pub use rnsfhe_math as math;
pub use rnsfhe_pegasus as pegasus;
pub use rnsfhe_ring as ring;

pub mod wire_samples;

use rnsfhe_math::wire::ObjectKind;

/// Every wire object kind of every crate of the library: the one place that lists the crates, so that a
/// reader can name any header's kind code ([`object_kind`]); each crate defines its own kinds in the
/// range of codes it owns ([`rnsfhe_math::wire::kind_codes`]).
pub fn object_kinds() -> impl Iterator<Item = ObjectKind> {
    rnsfhe_core::serialization::kinds::KINDS
        .into_iter()
        .chain(rnsfhe_ckks::serialization::kinds::KINDS)
        .chain(rnsfhe_bfv::serialization::kinds::KINDS)
        .chain(rnsfhe_lwe::serialization::kinds::KINDS)
        .chain(rnsfhe_pegasus::serialization::kinds::KINDS)
        .chain(rnsfhe_apps::decision_tree::serialization::kinds::KINDS)
}

/// The kind with header code `code` among [`object_kinds`], if any.
pub fn object_kind(code: u16) -> Option<ObjectKind> {
    object_kinds().find(|k| k.code() == code)
}

/// Runs the Rust code blocks of a markdown page as doc tests (`cargo test`): the README and the pages of
/// `docs/` are tutorials that must keep working. One item per page, so a failure names its page.
macro_rules! markdown_doctests {
    ($($name:ident => $path:literal),* $(,)?) => {
        $(
            #[cfg(doctest)]
            #[doc = include_str!($path)]
            pub struct $name;
        )*
    };
}

markdown_doctests! {
    ReadmeDoctests => "../../../README.md",
    CkksTutorialDoctests => "../../../docs/ckks-tutorial.md",
    WireFormatDoctests => "../../../docs/wire-format.md",
    MathLayersDoctests => "../../../docs/math-layers.md",
    AppsComparisonDoctests => "../../../docs/apps-comparison.md",
    AppsKmeansDoctests => "../../../docs/apps-kmeans.md",
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kind_codes_are_unique_and_stable() {
        let mut codes: Vec<u16> = object_kinds().map(|k| k.code()).collect();
        let n = codes.len();
        codes.sort_unstable();
        codes.dedup();
        assert_eq!(codes.len(), n, "a kind code is used twice");
        // The codes of format versions 1 and 2 (fixtures and corpora depend on them; the LWE kinds
        // exist from version 2 on).
        let named: Vec<(u16, &str)> = object_kinds().map(|k| (k.code(), k.name())).collect();
        for (code, name) in [
            (1, "CKKS parameters"),
            (2, "BFV parameters"),
            (16, "secret key"),
            (17, "public key"),
            (18, "relinearization key"),
            (19, "Galois keys"),
            (32, "CKKS plaintext"),
            (33, "CKKS ciphertext"),
            (48, "BFV relinearization key"),
            (49, "BFV Galois keys"),
            (50, "BFV plaintext"),
            (51, "BFV ciphertext"),
            (64, "LWE ciphertext"),
            (65, "LWE secret key"),
            (66, "LWE switching key"),
            (67, "look-up table"),
            (68, "blind-rotation key"),
            (80, "PEGASUS pipeline parameters"),
            (81, "PEGASUS pipeline options"),
            (82, "PEGASUS keys"),
            (88, "decision-tree parameters"),
            (89, "decision-tree server key"),
            (90, "encrypted decision-tree query"),
            (91, "encrypted decision-tree label"),
            (92, "decision-tree client secret"),
        ] {
            assert!(named.contains(&(code, name)), "{code} {name}");
        }
        assert_eq!(
            object_kinds()
                .filter(|k| k.is_secret())
                .map(|k| k.code())
                .collect::<Vec<_>>(),
            [16, 65, 92]
        );
        assert_eq!(object_kind(999), None);
    }
}
