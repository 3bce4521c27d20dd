//! Fixtures of the wire format (`tests/fixtures/v<version>/`): objects written by an earlier build must
//! keep loading, decrypting to the same values and re-serializing to the same bytes. A format change that
//! breaks them needs a new format version (and readers of the old one), not new fixtures.
//!
//! Regenerate (only when adding a format version): `RNSFHE_WRITE_FIXTURES=1 cargo test --release -p
//! rnsfhe --test wire_fixtures -- write_fixtures`, which writes `tests/fixtures/v<FORMAT_VERSION>/`.
//! Rewriting must leave the committed files byte-identical (check `git status`); only new objects add
//! files (the BFV objects joined v1 this way, the CKKS files unchanged). The samples' randomness has
//! changed since v3's first fixtures were written, so a rewrite changes 13 of them (to equally valid
//! bytes): keep the committed files and add the new (the PEGASUS and decision-tree objects joined v3
//! this way, and CKKS parameters with bootstrapping primes, `ckks_params_bootstrap`; `ckks_params`
//! itself rewrote byte for byte).
//!
//! Version 1 (no digest, fingerprints without the error width and the secret distribution) and version 2
//! (digest, full fingerprints) are both here; v1 files load into today's contexts through the version-1
//! fingerprints and re-serialize as version 2. The LWE objects joined v2 (they never had a version 1);
//! the PEGASUS pipeline's and the decision tree's joined v3 (their first version).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::PathBuf;

use rnsfhe::apps::decision_tree::{
    EncryptedLabel, EncryptedQuery, TreeClient, TreeParams, TreeServer, TreeServerKey,
};
use rnsfhe::bfv::{self, BatchEncoder, BfvContext};
use rnsfhe::ckks::{
    BootstrappingKeys, Ciphertext, CkksContext, CkksDecryptor, Plaintext, SparseEncapsulation,
};
use rnsfhe::core::{GaloisKeys, PublicKey, RelinKey, SecretKey};
use rnsfhe::lwe::{
    BlindRotationKey, LookupTable, LutEvaluator, LweCiphertext, LweSecretKey, LweSwitchingKey,
};
use rnsfhe::math::wire::{peek_header, Deserializable, Serializable, FORMAT_VERSION};
use rnsfhe::pegasus::{PegasusEvaluator, PegasusKeys, PipelineOptions, PipelineParams};
use rnsfhe::wire_samples::{
    decode, lwe_sample_function, lwe_sample_scale, sample_tree, sample_tree_scaling, samples,
    LweSampleContexts, SampleContexts, BFV_SAMPLE_STEP, BFV_SAMPLE_T, BFV_SAMPLE_VALUES,
    ENCAPSULATION_SAMPLE_WEIGHT, LWE_SAMPLE_MESSAGE, PEGASUS_SAMPLE_LIMITS, SAMPLE_LIMITS,
    SAMPLE_VALUES, TREE_SAMPLE_LABEL,
};

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
        CkksContext::from_bytes_with(&read("ckks_params"), &SAMPLE_LIMITS)
            .unwrap()
            .to_bytes(),
    );
    // The parameters' optional section of bootstrapping primes (flags bit 1).
    let upper =
        CkksContext::from_bytes_with(&read("ckks_params_bootstrap"), &SAMPLE_LIMITS).unwrap();
    assert_eq!(upper.params().bootstrap_primes, [35, 40]);
    same("ckks_params_bootstrap", upper.to_bytes());
    let sk = SecretKey::from_secret_bytes(&read("secret_key"), ctx.rlwe()).unwrap();
    same("secret_key", sk.to_secret_bytes(ctx.rlwe()).to_vec());
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
    // The bootstrapping keys: the encapsulation alone and with the sample Galois keys.
    same(
        "encapsulation_keys",
        SparseEncapsulation::from_bytes(&read("encapsulation_keys"), ctx)
            .unwrap()
            .to_bytes(),
    );
    let boot = BootstrappingKeys::from_bytes(&read("bootstrapping_keys"), ctx).unwrap();
    assert_eq!(
        boot.encapsulation.as_ref().map(|e| e.weight()),
        Some(ENCAPSULATION_SAMPLE_WEIGHT)
    );
    same("bootstrapping_keys", boot.to_bytes());
    // A loaded seeded ciphertext is a full ciphertext: it re-serializes expanded, to the seeded bytes'
    // twice-as-large equivalent.
    let seeded = read("ckks_seeded_ciphertext");
    let full = Ciphertext::from_bytes(&seeded, ctx).unwrap().to_bytes();
    let ratio = seeded.len() as f64 / full.len() as f64;
    assert!((0.49..0.52).contains(&ratio), "seeded / full = {ratio}");
    bfv_fixtures_re_serialize(&d);
    lwe_fixtures_re_serialize(&ctxs.lwe, &d);
    pegasus_fixtures_re_serialize(&ctxs, &d);
}

/// The PEGASUS and decision-tree part of [`current_fixtures_re_serialize_to_the_same_bytes`]: the
/// pipeline's parameters, both option sets and both key sets, the tree's parameters, server key,
/// client secret, query and label (keys keep their seeds).
fn pegasus_fixtures_re_serialize(ctxs: &SampleContexts, d: &std::path::Path) {
    let read = |name: &str| std::fs::read(d.join(format!("{name}.bin"))).unwrap();
    let same = |name: &str, again: Vec<u8>| assert_eq!(again, read(name), "{name}");
    let params =
        PipelineParams::from_bytes_with(&read("pipeline_params"), &PEGASUS_SAMPLE_LIMITS).unwrap();
    same("pipeline_params", params.to_bytes());
    for (options, keys) in [
        ("pipeline_options", "pegasus_keys"),
        ("pipeline_linear_options", "pegasus_linear_keys"),
    ] {
        let o = PipelineOptions::from_bytes(&read(options), &params, &SAMPLE_LIMITS).unwrap();
        same(options, o.to_bytes(&params));
        let k = PegasusKeys::from_bytes(&read(keys), &params, &o).unwrap();
        same(keys, k.to_bytes(&params, &o));
        // The keys make a pipeline of these parameters and options.
        PegasusEvaluator::new(params.clone(), o, k).unwrap();
    }
    let tree = TreeParams::from_bytes_with(&read("tree_params"), &PEGASUS_SAMPLE_LIMITS).unwrap();
    same("tree_params", tree.to_bytes());
    let key = TreeServerKey::from_bytes(&read("tree_server_key"), &tree).unwrap();
    same("tree_server_key", key.to_bytes());
    let client =
        TreeClient::from_secret_bytes(&read("tree_client"), &PEGASUS_SAMPLE_LIMITS).unwrap();
    same("tree_client", client.to_secret_bytes().to_vec());
    let query = EncryptedQuery::from_bytes(&read("tree_query"), &ctxs.tree.query).unwrap();
    same("tree_query", query.to_bytes());
    let label = EncryptedLabel::from_bytes(&read("tree_label"), &ctxs.tree.labels).unwrap();
    same("tree_label", label.to_bytes());
}

/// The decision-tree fixtures (format version 3 on) work: the loaded client decrypts the loaded label
/// to the sample tree's, and the loaded server key answers the loaded query with it again.
fn tree_fixtures_decrypt(version: u16, ctxs: &SampleContexts, d: &std::path::Path) {
    let read = |name: &str| std::fs::read(d.join(format!("{name}.bin"))).unwrap();
    let client =
        TreeClient::from_secret_bytes(&read("tree_client"), &PEGASUS_SAMPLE_LIMITS).unwrap();
    let label = EncryptedLabel::from_bytes(&read("tree_label"), &ctxs.tree.labels).unwrap();
    assert_eq!(
        client.decrypt(&label).unwrap(),
        TREE_SAMPLE_LABEL,
        "v{version} label"
    );
    let key = TreeServerKey::from_bytes(&read("tree_server_key"), &ctxs.tree.params).unwrap();
    let query = EncryptedQuery::from_bytes(&read("tree_query"), key.query_context()).unwrap();
    let server = TreeServer::new(
        sample_tree().unwrap(),
        sample_tree_scaling().unwrap(),
        std::sync::Arc::new(key),
    )
    .unwrap();
    let mut rng = rnsfhe::math::sampling::Csprng::insecure_from_seed_for_tests([6; 32]);
    let again = server.evaluate(&query, &mut rng).unwrap();
    assert_eq!(
        client.decrypt(&again).unwrap(),
        TREE_SAMPLE_LABEL,
        "v{version} server"
    );
}

/// The LWE part of [`current_fixtures_re_serialize_to_the_same_bytes`]: keys keep their seeds, so every
/// object re-serializes to its bytes.
fn lwe_fixtures_re_serialize(ctxs: &LweSampleContexts, d: &std::path::Path) {
    let read = |name: &str| std::fs::read(d.join(format!("{name}.bin"))).unwrap();
    let same = |name: &str, again: Vec<u8>| assert_eq!(again, read(name), "{name}");
    let ct = LweCiphertext::from_bytes(&read("lwe_ciphertext"), &ctxs.space).unwrap();
    same("lwe_ciphertext", ct.to_bytes());
    for (name, dimension) in [
        ("lwe_secret_key", ctxs.space.dimension()),
        ("lwe_ring_secret_key", ctxs.ring_dimension()),
    ] {
        let sk = LweSecretKey::from_secret_bytes(&read(name), dimension).unwrap();
        same(name, sk.to_secret_bytes().to_vec());
    }
    let ks = LweSwitchingKey::from_bytes(&read("lwe_switching_key"), &ctxs.switching).unwrap();
    same("lwe_switching_key", ks.to_bytes());
    let table = LookupTable::from_bytes(&read("lookup_table"), &ctxs.ring).unwrap();
    same("lookup_table", table.to_bytes());
    let brk = BlindRotationKey::from_bytes(&read("blind_rotation_key"), &ctxs.ring).unwrap();
    same("blind_rotation_key", brk.to_bytes());
}

/// The LWE fixtures (format version 2 on) decrypt and compute: the ciphertext decrypts to its message,
/// the loaded table and blind-rotation key map it to the sign (exactly, after rounding), under the ring
/// key, and the loaded switching key brings that back to the LWE key.
fn lwe_fixtures_decrypt(version: u16, ctxs: &LweSampleContexts, d: &std::path::Path) {
    let read = |name: &str| std::fs::read(d.join(format!("{name}.bin"))).unwrap();
    let sk =
        LweSecretKey::from_secret_bytes(&read("lwe_secret_key"), ctxs.space.dimension()).unwrap();
    let ring_sk =
        LweSecretKey::from_secret_bytes(&read("lwe_ring_secret_key"), ctxs.ring_dimension())
            .unwrap();
    let scale = lwe_sample_scale(ctxs.space.modulus().value());
    let value = |key: &LweSecretKey, ct: &LweCiphertext| key.decrypt(ct).unwrap() as f64 / scale;
    let ct = LweCiphertext::from_bytes(&read("lwe_ciphertext"), &ctxs.space).unwrap();
    assert!(
        (value(&sk, &ct) - LWE_SAMPLE_MESSAGE).abs() < 1e-9,
        "v{version} LWE ciphertext"
    );
    let table = LookupTable::from_bytes(&read("lookup_table"), &ctxs.ring).unwrap();
    let brk = BlindRotationKey::from_bytes(&read("blind_rotation_key"), &ctxs.ring).unwrap();
    let out = LutEvaluator::new(brk).evaluate(&ct, &table).unwrap();
    let expected = lwe_sample_function(LWE_SAMPLE_MESSAGE);
    let got = value(&ring_sk, &out);
    // The blind rotation's error is far below the scale (PEGASUS Appendix C.2).
    assert!(
        (got - expected).abs() < 1e-6,
        "v{version} look-up table: {got}"
    );
    let ks = LweSwitchingKey::from_bytes(&read("lwe_switching_key"), &ctxs.switching).unwrap();
    let back = ks.switch(&out).unwrap();
    let got = value(&sk, &back);
    assert!(
        (got - expected).abs() < 1e-6,
        "v{version} key switch: {got}"
    );
}

/// The BFV part of [`current_fixtures_re_serialize_to_the_same_bytes`].
fn bfv_fixtures_re_serialize(d: &std::path::Path) {
    let read = |name: &str| std::fs::read(d.join(format!("{name}.bin"))).unwrap();
    let same = |name: &str, again: Vec<u8>| assert_eq!(again, read(name), "{name}");
    let ctx = BfvContext::from_bytes_with(&read("bfv_params"), &SAMPLE_LIMITS).unwrap();
    same("bfv_params", ctx.to_bytes());
    let sk = ctx.secret_key_from_bytes(&read("bfv_secret_key")).unwrap();
    same("bfv_secret_key", sk.to_secret_bytes(ctx.rlwe()).to_vec());
    let pk = ctx.public_key_from_bytes(&read("bfv_public_key")).unwrap();
    same("bfv_public_key", pk.to_bytes());
    let rk = bfv::RelinKey::from_bytes(&read("bfv_relin_key"), &ctx).unwrap();
    same("bfv_relin_key", rk.to_bytes());
    let gk = bfv::GaloisKeys::from_bytes(&read("bfv_galois_keys"), &ctx).unwrap();
    same("bfv_galois_keys", gk.to_bytes());
    let pt = bfv::Plaintext::from_bytes(&read("bfv_plaintext"), &ctx).unwrap();
    same("bfv_plaintext", pt.to_bytes());
    for name in ["bfv_ciphertext", "bfv_product_ciphertext"] {
        let ct = bfv::Ciphertext::from_bytes(&read(name), &ctx).unwrap();
        same(name, ct.to_bytes());
    }
    let seeded = read("bfv_seeded_ciphertext");
    let full = bfv::Ciphertext::from_bytes(&seeded, &ctx)
        .unwrap()
        .to_bytes();
    let ratio = seeded.len() as f64 / full.len() as f64;
    assert!((0.49..0.52).contains(&ratio), "BFV seeded / full = {ratio}");
}

/// The BFV fixtures of one version decrypt to the sample values, and the loaded keys compute: the
/// product relinearizes and rotates to the expected slots.
fn bfv_fixtures_decrypt(version: u16, d: &std::path::Path) {
    let read = |name: &str| std::fs::read(d.join(format!("{name}.bin"))).unwrap();
    let ctx = BfvContext::from_bytes_with(&read("bfv_params"), &SAMPLE_LIMITS).unwrap();
    let sk = ctx.secret_key_from_bytes(&read("bfv_secret_key")).unwrap();
    let dec = bfv::Decryptor::new(&ctx, &sk).unwrap();
    let encoder = BatchEncoder::new(&ctx).unwrap();
    let slots = |ct: &bfv::Ciphertext| encoder.decode_u64(&dec.decrypt(ct).unwrap()).unwrap();
    let load = |name: &str| bfv::Ciphertext::from_bytes(&read(name), &ctx).unwrap();
    let x = BFV_SAMPLE_VALUES;
    let square: Vec<u64> = x.iter().map(|&v| v * v % BFV_SAMPLE_T).collect();
    for name in ["bfv_ciphertext", "bfv_seeded_ciphertext"] {
        assert_eq!(slots(&load(name))[..4], x, "v{version}/{name}");
    }
    let pt = bfv::Plaintext::from_bytes(&read("bfv_plaintext"), &ctx).unwrap();
    assert_eq!(
        encoder.decode_u64(&pt).unwrap()[..4],
        x,
        "v{version} plaintext"
    );
    let product = load("bfv_product_ciphertext");
    assert_eq!(slots(&product)[..4], square[..], "v{version} product");
    let rk = bfv::RelinKey::from_bytes(&read("bfv_relin_key"), &ctx).unwrap();
    let gk = bfv::GaloisKeys::from_bytes(&read("bfv_galois_keys"), &ctx).unwrap();
    let ev = bfv::Evaluator::new(&ctx);
    let relin = ev.relinearize(&product, &rk).unwrap();
    let rotated = ev.rotate_rows(&relin, BFV_SAMPLE_STEP, &gk).unwrap();
    assert_eq!(
        slots(&rotated)[..3],
        square[1..],
        "v{version} relinearized and rotated"
    );
    // The public key encrypts for the secret key.
    let pk = ctx.public_key_from_bytes(&read("bfv_public_key")).unwrap();
    let enc = bfv::Encryptor::with_public_key(&ctx, &pk).unwrap();
    let mut rng = rnsfhe::math::sampling::Csprng::insecure_from_seed_for_tests([5; 32]);
    let fresh = enc.encrypt(&pt, &mut rng).unwrap();
    assert_eq!(slots(&fresh)[..4], x, "v{version} public key");
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
        assert!(names.len() >= 17, "v{version}: {names:?}");
        for name in &names {
            let bytes = std::fs::read(d.join(name)).unwrap();
            let kind = rnsfhe::object_kind(peek_header(&bytes).unwrap().kind_code).unwrap();
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
        bfv_fixtures_decrypt(version, &d);
        if version >= 2 {
            lwe_fixtures_decrypt(version, &ctxs.lwe, &d);
        }
        if version >= 3 {
            tree_fixtures_decrypt(version, &ctxs, &d);
        }
    }
}
