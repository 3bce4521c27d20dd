//! Fixtures of the wire format (`tests/fixtures/v<version>/`): objects written by an earlier build must
//! keep loading, decrypting to the same values and re-serializing to the same bytes. A format change that
//! breaks them needs a new format version (and readers of the old one), not new fixtures.
//!
//! Regenerate (only when adding a format version): `RNSFHE_WRITE_FIXTURES=1 cargo test --release -p
//! rnsfhe --test wire_fixtures -- write_fixtures`, which writes `tests/fixtures/v<FORMAT_VERSION>/`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::PathBuf;

use rnsfhe::ckks::{Ciphertext, CkksContext, CkksDecryptor, Plaintext};
use rnsfhe::core::{GaloisKeys, PublicKey, RelinKey, SecretKey};
use rnsfhe::math::wire::{peek_header, Deserializable, Serializable, FORMAT_VERSION};
use rnsfhe::wire_samples::{decode, samples, SampleContexts, SAMPLE_VALUES};

/// The seed the committed fixtures were generated with.
const FIXTURE_SEED: u8 = 1;

fn dir(version: u16) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(format!("tests/fixtures/v{version}"))
}

/// Writes the fixtures of the current version when `RNSFHE_WRITE_FIXTURES` is set (see the module doc).
#[test]
fn write_fixtures_on_request() {
    if std::env::var_os("RNSFHE_WRITE_FIXTURES").is_none() {
        return;
    }
    let ctxs = SampleContexts::new().unwrap();
    let out = dir(FORMAT_VERSION);
    std::fs::create_dir_all(&out).unwrap();
    for s in samples(&ctxs, FIXTURE_SEED).unwrap() {
        std::fs::write(out.join(format!("{}.bin", s.name)), &s.bytes).unwrap();
    }
}

/// Loading a current-version fixture and writing it again gives the same bytes: the encoding of every
/// field is stable (independent of how the objects were sampled).
#[test]
fn current_fixtures_re_serialize_to_the_same_bytes() {
    let ctxs = SampleContexts::new().unwrap();
    let ctx = &ctxs.ckks;
    let d = dir(FORMAT_VERSION);
    let read = |name: &str| std::fs::read(d.join(format!("{name}.bin"))).unwrap();
    let same = |name: &str, again: Vec<u8>| assert_eq!(again, read(name), "{name}");
    same(
        "ckks_params",
        CkksContext::from_bytes(&read("ckks_params"))
            .unwrap()
            .to_bytes(),
    );
    let sk = SecretKey::from_secret_bytes(&read("secret_key"), ctx.rlwe()).unwrap();
    same("secret_key", sk.to_secret_bytes(ctx.rlwe()));
    same(
        "public_key",
        PublicKey::from_bytes(&read("public_key"), ctx.rlwe())
            .unwrap()
            .to_bytes(),
    );
    same(
        "relin_key",
        RelinKey::from_bytes(&read("relin_key"), ctx.rlwe())
            .unwrap()
            .to_bytes(),
    );
    same(
        "galois_keys",
        GaloisKeys::from_bytes(&read("galois_keys"), ctx.rlwe())
            .unwrap()
            .to_bytes(),
    );
    same(
        "ckks_plaintext",
        Plaintext::from_bytes(&read("ckks_plaintext"), ctx)
            .unwrap()
            .to_bytes(),
    );
    same(
        "ckks_ciphertext",
        Ciphertext::from_bytes(&read("ckks_ciphertext"), ctx)
            .unwrap()
            .to_bytes(),
    );
    // A loaded seeded ciphertext is a full ciphertext: it re-serializes expanded, to the seeded bytes'
    // twice-as-large equivalent.
    let seeded = read("ckks_seeded_ciphertext");
    let full = Ciphertext::from_bytes(&seeded, ctx).unwrap().to_bytes();
    let ratio = seeded.len() as f64 / full.len() as f64;
    assert!((0.49..0.52).contains(&ratio), "seeded / full = {ratio}");
}

#[test]
fn every_fixture_of_every_version_loads_and_decrypts() {
    let ctxs = SampleContexts::new().unwrap();
    let ctx = &ctxs.ckks;
    for version in 1..=FORMAT_VERSION {
        let d = dir(version);
        let read = |name: &str| std::fs::read(d.join(format!("{name}.bin"))).unwrap();
        let mut names: Vec<_> = std::fs::read_dir(&d)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        names.sort();
        assert!(names.len() >= 8, "v{version}: {names:?}");
        for name in &names {
            let bytes = std::fs::read(d.join(name)).unwrap();
            let kind = peek_header(&bytes).unwrap().kind;
            decode(kind, &bytes, &ctxs).unwrap_or_else(|e| panic!("v{version}/{name}: {e}"));
        }
        let sk = SecretKey::from_secret_bytes(&read("secret_key"), ctx.rlwe()).unwrap();
        let dec = CkksDecryptor::new(ctx, &sk).unwrap();
        for name in ["ckks_ciphertext", "ckks_seeded_ciphertext"] {
            let ct = Ciphertext::from_bytes(&read(name), ctx).unwrap();
            let got = dec.decrypt_real(&ct).unwrap();
            for (g, v) in got.iter().zip(SAMPLE_VALUES) {
                assert!((g - v).abs() < 1e-4, "v{version}/{name}: {g} vs {v}");
            }
        }
        let pt = Plaintext::from_bytes(&read("ckks_plaintext"), ctx).unwrap();
        let got = ctx.decode(&pt).unwrap();
        for (g, v) in got.iter().zip(SAMPLE_VALUES) {
            assert!((g.re - v).abs() < 1e-6, "v{version} plaintext: {g} vs {v}");
        }
    }
}
