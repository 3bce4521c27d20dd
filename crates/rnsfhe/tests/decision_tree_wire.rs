//! The wire format of private decision trees (PEGASUS Section V.B): parameters, server key, query,
//! label and the client's secret round trip bit for bit; a server rebuilt from bytes answers a query
//! from bytes with a label the client decrypts to the tree's; `wire_size` is the written length; and
//! thousands of hostile byte strings (truncations, bit flips, patched lengths and codes, objects of
//! other parameters) are errors, never panics. InsecureTest set (`n_lwe = 64`).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;

use rnsfhe::apps::decision_tree::serialization::kinds;
use rnsfhe::apps::decision_tree::{
    EncryptedLabel, EncryptedQuery, FeatureScaling, TreeClient, TreeParams, TreeServer,
    TreeServerKey,
};
use rnsfhe::ckks::Csprng;
use rnsfhe::core::serialization::LoadLimits;
use rnsfhe::lwe::PegasusPreset;
use rnsfhe::math::wire::{
    peek_header, reseal, DecodeErrorKind, Deserializable, Integrity, MacKey, PublicRandomness,
    Serializable,
};
use rnsfhe::wire_samples::{hostile, sample_tree, tree_sample_params, HostileBudget};

fn insecure() -> LoadLimits {
    LoadLimits::DEFAULT.allowing_insecure()
}

fn params() -> TreeParams {
    TreeParams::new(PegasusPreset::InsecureTest)
        .unwrap()
        .allowing_insecure()
}

#[test]
fn a_tree_exchange_through_bytes_decrypts_to_the_trees_labels() {
    let mut rng = Csprng::insecure_from_seed_for_tests([3; 32]);
    // Client: keys; the parameters and the server key as bytes.
    let (client, key) = TreeClient::generate(params(), &mut rng).unwrap();
    let params_bytes = client.params().to_bytes();
    let key_bytes = key.to_bytes();
    assert_eq!(key_bytes.len() as u64, key.serialized_size());
    let expanded = key.to_bytes_with(PublicRandomness::Expanded);
    assert_eq!(
        expanded.len() as u64,
        key.serialized_size_with(PublicRandomness::Expanded)
    );
    assert!(
        key_bytes.len() * 10 < expanded.len() * 6,
        "seeds halve the key"
    );
    assert_eq!(
        peek_header(&key_bytes).unwrap().kind_code,
        kinds::TREE_SERVER_KEY.code()
    );
    assert!(!kinds::TREE_SERVER_KEY.is_secret());

    // Server: parameters and key from bytes (the reader opts in to the insecure test set itself).
    let server_params = TreeParams::from_bytes_with(&params_bytes, &insecure()).unwrap();
    assert_eq!(server_params, *client.params());
    assert_eq!(server_params.to_bytes(), params_bytes, "bit-identical");
    let server_key = TreeServerKey::from_bytes(&key_bytes, &server_params).unwrap();
    assert_eq!(server_key.to_bytes(), key_bytes, "bit-identical");
    let from_expanded = TreeServerKey::from_bytes(&expanded, &server_params).unwrap();
    assert_eq!(
        from_expanded.to_bytes_with(PublicRandomness::Expanded),
        expanded
    );
    let server_key = Arc::new(server_key);
    let scaling = FeatureScaling::linear(&[0.0, 0.0], &[1.0, 1.0]).unwrap();
    let server = TreeServer::new(
        sample_tree().unwrap(),
        scaling.clone(),
        Arc::clone(&server_key),
    )
    .unwrap();

    let space = client.label_space().unwrap();
    for (x, label) in [([0.2, 0.9], 0), ([0.8, 0.1], 1), ([0.9, 0.7], 2)] {
        // Client -> bytes -> server -> bytes -> client.
        let query = client.encrypt(&scaling, &x, &mut rng).unwrap();
        let up = query.to_bytes();
        assert_eq!(
            up.len() as u64,
            query.wire_size(),
            "wire_size is the written length"
        );
        let received = EncryptedQuery::from_bytes(&up, server_key.query_context()).unwrap();
        assert_eq!(received.to_bytes(), up, "bit-identical");
        let answer = server.evaluate(&received, &mut rng).unwrap();
        let down = answer.to_bytes();
        assert_eq!(down.len() as u64, answer.wire_size());
        let back = EncryptedLabel::from_bytes(&down, &space).unwrap();
        assert_eq!(back.to_bytes(), down);
        assert_eq!(client.decrypt(&back).unwrap(), label, "x = {x:?}");
        assert_eq!(sample_tree().unwrap().predict(&x).unwrap(), label);
    }
    // One query, one label: the sizes each way (n_lwe = 64 over a 45-bit q: one polynomial of 360
    // bytes and a seed up, 65 residues down).
    let query = client.encrypt(&scaling, &[0.1, 0.1], &mut rng).unwrap();
    assert_eq!(query.wire_size(), 16 + 4 + 4 + 2 + 360 + 32 + 32);
    let label = server.evaluate(&query, &mut rng).unwrap();
    assert_eq!(label.wire_size(), 16 + 4 + 8 + 366 + 32);

    // The client's secret through its named functions only, and the restored client decrypts.
    let secret = client.to_secret_bytes();
    assert_eq!(secret.len() as u64, client.secret_serialized_size());
    assert_eq!(
        peek_header(&secret).unwrap().kind_code,
        kinds::TREE_CLIENT.code()
    );
    assert!(kinds::TREE_CLIENT.is_secret());
    let restored = TreeClient::from_secret_bytes(&secret, &insecure()).unwrap();
    assert_eq!(restored.decrypt(&label).unwrap(), 0);
    assert_eq!(restored.to_secret_bytes().as_slice(), secret.as_slice());
    let err = TreeClient::from_secret_bytes(&secret, &LoadLimits::DEFAULT).unwrap_err();
    assert!(
        err.field.starts_with("tree.") || err.field == "parameters",
        "{err}"
    );
    // A secret is not a server key, nor a server key a query.
    assert_eq!(
        TreeServerKey::from_bytes(&secret, &server_params)
            .unwrap_err()
            .field,
        "header.kind"
    );
    assert_eq!(
        EncryptedQuery::from_bytes(&key_bytes, server_key.query_context())
            .unwrap_err()
            .field,
        "header.kind"
    );
}

#[test]
fn objects_of_other_parameters_and_hostile_bytes_are_errors() {
    let mut rng = Csprng::insecure_from_seed_for_tests([4; 32]);
    let (client, key) = TreeClient::generate(params(), &mut rng).unwrap();
    let key = Arc::new(key);
    let scaling = FeatureScaling::linear(&[0.0, 0.0], &[1.0, 1.0]).unwrap();
    let server =
        TreeServer::new(sample_tree().unwrap(), scaling.clone(), Arc::clone(&key)).unwrap();
    let query = client.encrypt(&scaling, &[0.3, 0.3], &mut rng).unwrap();
    let label = server.evaluate(&query, &mut rng).unwrap();
    let space = client.label_space().unwrap();
    let p = *client.params();

    // Parameters: the default reader refuses the insecure test set (before building anything), and
    // the writer's opt-in alone does not lift that.
    let params_bytes = p.to_bytes();
    assert_eq!(
        u16::from_le_bytes([params_bytes[6], params_bytes[7]]),
        kinds::TREE_PARAMETERS.code()
    );
    let err = TreeParams::from_bytes(&params_bytes).unwrap_err();
    assert!(
        err.field == "parameters" || err.field == "tree.allow_insecure",
        "{err}"
    );
    let small = LoadLimits {
        max_log_n: 8,
        ..insecure()
    };
    let err = TreeParams::from_bytes_with(&params_bytes, &small).unwrap_err();
    assert!(
        matches!(err.kind, DecodeErrorKind::LimitExceeded { .. }),
        "{err}"
    );
    // Codes out of range, resealed: the LWE secret's tag, the blind-rotation algorithm, the flag.
    for (at, field) in [
        (16 + 8, "tree.lwe.lwe_secret"),
        (16 + 70, "tree.lwe.blind_rotation"),
        (16 + 71, "tree.allow_insecure"),
    ] {
        let mut bad = params_bytes.clone();
        bad[at] = 9;
        reseal(&mut bad);
        let err = TreeParams::from_bytes_with(&bad, &insecure()).unwrap_err();
        assert_eq!(
            (err.field.as_str(), err.offset),
            (field, at as u64),
            "{err}"
        );
    }
    // Another parameter set (the look-up-table ring one degree up): its keys, queries and labels are
    // refused by the header's fingerprint.
    let mut other = p;
    other.lwe.lut.log_n += 1;
    assert_ne!(other.fingerprint(), p.fingerprint());
    let key_bytes = key.to_bytes();
    let err = TreeServerKey::from_bytes(&key_bytes, &other).unwrap_err();
    assert_eq!(err.field, "header.fingerprint", "{err}");
    let mut other_q = p;
    other_q.lwe.lwe_dimension *= 2;
    let other_ctx = other_q.query_context().unwrap();
    let up = query.to_bytes();
    let err = EncryptedQuery::from_bytes(&up, &other_ctx).unwrap_err();
    assert_eq!(err.field, "header.fingerprint", "{err}");
    let other_space =
        rnsfhe::lwe::LweSpace::new(rnsfhe::lwe::LweDimension::new(128).unwrap(), p.modulus())
            .unwrap();
    let down = label.to_bytes();
    let err = EncryptedLabel::from_bytes(&down, &other_space).unwrap_err();
    assert_eq!(err.field, "header.fingerprint", "{err}");

    // Patched fields of the query and the label, resealed: each names its field and offset.
    let edit = |bytes: &[u8], at: usize, v: &[u8]| {
        let mut b = bytes.to_vec();
        b[at..at + v.len()].copy_from_slice(v);
        reseal(&mut b);
        b
    };
    let ctx = key.query_context();
    for (at, v, field) in [
        (16, 0u32.to_le_bytes(), "query.features"),
        (16, 65u32.to_le_bytes(), "query.features"),
        (20, 2u32.to_le_bytes(), "query.level"),
    ] {
        let err = EncryptedQuery::from_bytes(&edit(&up, at, &v), ctx).unwrap_err();
        assert_eq!(
            (err.field.as_str(), err.offset),
            (field, at as u64),
            "{err}"
        );
    }
    let err = EncryptedQuery::from_bytes(&edit(&up, 24, &[3]), ctx).unwrap_err();
    assert_eq!(err.field, "query.part_count");
    let err = EncryptedQuery::from_bytes(&edit(&up, 25, &[0]), ctx).unwrap_err();
    assert_eq!(err.field, "query.seeded");
    // c_0's first residue all ones: 2^45 - 1 is not below q.
    let err = EncryptedQuery::from_bytes(&edit(&up, 26, &[0xff; 6]), ctx).unwrap_err();
    assert!(err.field.starts_with("query.c0"), "{err}");
    for (at, v, field) in [
        (16, 1u32.to_le_bytes().to_vec(), "label.classes"),
        (20, f64::NAN.to_le_bytes().to_vec(), "label.step"),
        (20, 1e300f64.to_le_bytes().to_vec(), "label.step"),
        (20, 0.5f64.to_le_bytes().to_vec(), "label.step"),
    ] {
        let err = EncryptedLabel::from_bytes(&edit(&down, at, &v), &space).unwrap_err();
        assert_eq!(
            (err.field.as_str(), err.offset),
            (field, at as u64),
            "{err}"
        );
    }
    // The server key's blind-rotation key of another algorithm: refused at its code inside.
    let err = TreeServerKey::from_bytes(&edit(&key_bytes, 16 + 16, &[7]), &p).unwrap_err();
    assert!(
        err.field.starts_with("tree_server_key.blind_rotation"),
        "{err}"
    );
    assert_eq!(err.offset, 32, "{err}");

    // MACs.
    let mac = MacKey::from_bytes([9; 32]);
    let sealed = query.to_bytes_sealed(PublicRandomness::Seeded, Integrity::Mac(&mac));
    assert!(EncryptedQuery::from_bytes_sealed(&sealed, ctx, Integrity::Mac(&mac)).is_ok());
    assert_eq!(
        EncryptedQuery::from_bytes(&sealed, ctx).unwrap_err().field,
        "digest"
    );

    // Thousands of hostile inputs: every truncation of the query, label and parameters, a sample of
    // the server key's, bit flips and resealed patches of each.
    let mut refused = 0;
    refused += hostile(&params_bytes, HostileBudget::every_cut(400), |b| {
        TreeParams::from_bytes_with(b, &insecure()).is_ok()
    })
    .unwrap();
    refused += hostile(&up, HostileBudget::every_cut(600), |b| {
        EncryptedQuery::from_bytes(b, ctx).is_ok()
    })
    .unwrap();
    refused += hostile(&down, HostileBudget::every_cut(600), |b| {
        EncryptedLabel::from_bytes(b, &space).is_ok()
    })
    .unwrap();
    let budget = HostileBudget {
        cuts: 400,
        flips: 300,
        patches: 300,
    };
    refused += hostile(&key_bytes, budget, |b| {
        TreeServerKey::from_bytes(b, &p).is_ok()
    })
    .unwrap();
    let secret = client.to_secret_bytes();
    refused += hostile(&secret, HostileBudget::every_cut(200), |b| {
        TreeClient::from_secret_bytes(b, &insecure()).is_ok()
    })
    .unwrap();
    assert!(refused > 3000, "{refused} refusals");
    // A stream reader reaches the parsers with every truncation of the server key (no digest first):
    // each is a truncation error at or before the cut, never an allocation of a claimed size.
    let step = key_bytes.len() / 300;
    for cut in (1..key_bytes.len()).step_by(step) {
        let err = TreeServerKey::read_from(&key_bytes[..cut], &p).unwrap_err();
        assert!(
            matches!(err.kind, DecodeErrorKind::Truncated),
            "cut {cut}: {err}"
        );
        assert!(err.offset <= cut as u64, "cut {cut}: {err}");
    }
}

fn fixture_dir() -> std::path::PathBuf {
    std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        // A directory of its own: the first decision-tree fixtures, written by this file's
        // generator before the samples of `rnsfhe::wire_samples` (whose fixtures are in
        // `fixtures/v<version>/` with every other kind's) had decision-tree objects.
        .join("tests/fixtures/decision_tree")
        .join(format!("v{}", rnsfhe::math::wire::FORMAT_VERSION))
}

/// The fixtures' objects from a fixed seed: parameters, server key, client secret, the query of
/// `[0.8, 0.1]` and the server's answer (label 1 of `sample_tree()`).
fn fixture_objects() -> Vec<(&'static str, Vec<u8>)> {
    let mut rng = Csprng::insecure_from_seed_for_tests([1; 32]);
    let (client, key) = TreeClient::generate(tree_sample_params().unwrap(), &mut rng).unwrap();
    let scaling = FeatureScaling::linear(&[0.0, 0.0], &[1.0, 1.0]).unwrap();
    let query = client.encrypt(&scaling, &[0.8, 0.1], &mut rng).unwrap();
    let key_bytes = key.to_bytes();
    let server = TreeServer::new(sample_tree().unwrap(), scaling, Arc::new(key)).unwrap();
    let label = server.evaluate(&query, &mut rng).unwrap();
    assert_eq!(client.decrypt(&label).unwrap(), 1);
    vec![
        ("tree_params", client.params().to_bytes()),
        ("tree_server_key", key_bytes),
        ("tree_client", client.to_secret_bytes().to_vec()),
        ("tree_query", query.to_bytes()),
        ("tree_label", label.to_bytes()),
    ]
}

/// The committed fixtures (`crates/rnsfhe/tests/fixtures/decision_tree/v3/tree_*.bin`, the conventions of
/// `crates/rnsfhe/tests/wire_fixtures.rs`: regenerate only with a new format version,
/// `RNSFHE_WRITE_FIXTURES=1 cargo test --release -p rnsfhe-apps --test decision_tree_wire fixtures`)
/// load, work (the loaded server answers the loaded query with the label the loaded client decrypts)
/// and re-serialize to the same bytes.
#[test]
fn fixtures_load_work_and_re_serialize() {
    let dir = fixture_dir();
    if std::env::var_os("RNSFHE_WRITE_FIXTURES").is_some() {
        for (name, bytes) in fixture_objects() {
            std::fs::write(dir.join(format!("{name}.bin")), bytes).unwrap();
        }
    }
    let read = |name: &str| std::fs::read(dir.join(format!("{name}.bin"))).unwrap();
    let params = TreeParams::from_bytes_with(&read("tree_params"), &insecure()).unwrap();
    assert_eq!(params, tree_sample_params().unwrap());
    assert_eq!(params.to_bytes(), read("tree_params"));
    let key = TreeServerKey::from_bytes(&read("tree_server_key"), &params).unwrap();
    assert_eq!(key.to_bytes(), read("tree_server_key"));
    let client = TreeClient::from_secret_bytes(&read("tree_client"), &insecure()).unwrap();
    assert_eq!(client.to_secret_bytes().to_vec(), read("tree_client"));
    let query = EncryptedQuery::from_bytes(&read("tree_query"), key.query_context()).unwrap();
    assert_eq!(query.to_bytes(), read("tree_query"));
    let label =
        EncryptedLabel::from_bytes(&read("tree_label"), &client.label_space().unwrap()).unwrap();
    assert_eq!(label.to_bytes(), read("tree_label"));
    assert_eq!(client.decrypt(&label).unwrap(), 1);
    let scaling = FeatureScaling::linear(&[0.0, 0.0], &[1.0, 1.0]).unwrap();
    let server = TreeServer::new(sample_tree().unwrap(), scaling, Arc::new(key)).unwrap();
    let mut rng = Csprng::insecure_from_seed_for_tests([2; 32]);
    let again = server.evaluate(&query, &mut rng).unwrap();
    assert_eq!(client.decrypt(&again).unwrap(), 1);
}
