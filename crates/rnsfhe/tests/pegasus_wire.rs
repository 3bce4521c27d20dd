//! The wire format of the pipeline (PEGASUS Fig. 6): parameters, options and every evaluation key
//! round trip bit for bit, a pipeline rebuilt from the bytes computes the same ciphertext, and hostile
//! bytes (truncations, bit flips, patched lengths and codes, other parameters) are errors, never panics.
//! Small insecure parameters (`PipelinePreset::InsecureTest`, `N = 2^11`) only: a key set that runs the
//! pipeline, 20 MB, too large for the byte-by-byte properties of `wire_corpus.rs` (which run on the
//! smaller sample key sets of `rnsfhe::wire_samples`); the hostile bytes here go through the same
//! helper, [`hostile`].

#![allow(clippy::unwrap_used, clippy::expect_used)]

use rnsfhe::ckks::{CkksEncryptor, Csprng, KeyGenerator};
use rnsfhe::core::serialization::LoadLimits;
use rnsfhe::math::wire::{
    reseal, DecodeErrorKind, Integrity, MacKey, PublicRandomness, Serializable,
};
use rnsfhe::pegasus::dimension_switch::DimensionSwitch;
use rnsfhe::pegasus::serialization::kinds;
use rnsfhe::pegasus::{
    PegasusEvaluator, PegasusKeys, PipelineOptions, PipelineParams, PipelinePreset, Repacking,
};
use rnsfhe::wire_samples::{hostile, HostileBudget};

const SLOTS: usize = 16;

fn insecure() -> LoadLimits {
    LoadLimits::DEFAULT.allowing_insecure()
}

fn options(repacking: Repacking, switch: DimensionSwitch) -> PipelineOptions {
    PipelineOptions {
        repacking,
        dimension_switch: switch,
        allow_insecure: true,
        ..PipelineOptions::new(SLOTS)
    }
}

struct Keys {
    params: PipelineParams,
    options: PipelineOptions,
    keys: PegasusKeys,
    keygen: KeyGenerator,
    rng: Csprng,
}

fn keys(repacking: Repacking, switch: DimensionSwitch, seed: u8) -> Keys {
    let params = PipelinePreset::InsecureTest.params().unwrap();
    let options = options(repacking, switch);
    let mut rng = Csprng::insecure_from_seed_for_tests([seed; 32]);
    let keygen = KeyGenerator::new(&params.ckks, &mut rng).unwrap();
    let (keys, _) = PegasusKeys::generate(&params, &options, &keygen, &mut rng).unwrap();
    Keys {
        params,
        options,
        keys,
        keygen,
        rng,
    }
}

#[test]
fn parameters_and_options_round_trip_and_refuse_hostile_bytes() {
    let params = PipelinePreset::InsecureTest.params().unwrap();
    let bytes = params.to_bytes();
    assert_eq!(bytes.len() as u64, params.serialized_size());
    assert_eq!(
        u16::from_le_bytes([bytes[6], bytes[7]]),
        kinds::PIPELINE_PARAMETERS.code()
    );
    let back = PipelineParams::from_bytes_with(&bytes, &insecure()).unwrap();
    assert_eq!(back.to_bytes(), bytes, "bit-identical re-serialization");
    assert_eq!(back.fingerprint(), params.fingerprint());
    assert_eq!(back.ckks.q_moduli(), params.ckks.q_moduli());
    // The test set is insecure: the default reader refuses it before building anything.
    let err = PipelineParams::from_bytes(&bytes).unwrap_err();
    assert!(
        err.field == "parameters" || err.field == "pipeline.lwe.parameters",
        "{err}"
    );
    // A larger ring than the reader allows.
    let small = LoadLimits {
        max_log_n: 10,
        ..insecure()
    };
    let err = PipelineParams::from_bytes_with(&bytes, &small).unwrap_err();
    assert!(
        matches!(err.kind, DecodeErrorKind::LimitExceeded { .. }),
        "{err}"
    );
    // A reader's limit beyond what a shift of a u64 holds (`max_log_n` is any u32 the reader sets,
    // from Python too): the LWE dimension is compared with 2^max_log_n without overflowing, so these
    // parameters load, and their decision-tree side too.
    for max_log_n in [63, 64, 100, u32::MAX] {
        let wide = LoadLimits {
            max_log_n,
            max_words: u64::MAX,
            ..insecure()
        };
        PipelineParams::from_bytes_with(&bytes, &wide)
            .unwrap_or_else(|e| panic!("max_log_n = {max_log_n}: {e}"));
        let tree = rnsfhe::wire_samples::tree_sample_params().unwrap();
        rnsfhe::apps::TreeParams::from_bytes_with(&tree.to_bytes(), &wide)
            .unwrap_or_else(|e| panic!("tree, max_log_n = {max_log_n}: {e}"));
    }
    // Another look-up-table ring: other parameters, another fingerprint.
    let wide = PipelinePreset::InsecureTest
        .params_with_lut_log_n(11)
        .unwrap();
    assert_ne!(wide.fingerprint(), params.fingerprint());
    let wide_bytes = wide.to_bytes();
    assert_eq!(
        PipelineParams::from_bytes_with(&wide_bytes, &insecure())
            .unwrap()
            .lut_log_n(),
        11
    );
    // The LWE side's q_0 patched to another value, resealed: the fingerprint no longer matches.
    let mut bad = bytes.clone();
    let lwe_at = bytes.len() - 32 - 71;
    bad[lwe_at + 41..][..8].copy_from_slice(&12289u64.to_le_bytes());
    reseal(&mut bad);
    assert!(PipelineParams::from_bytes_with(&bad, &insecure()).is_err());
    // A MAC.
    let key = MacKey::from_bytes([5; 32]);
    let sealed = params.to_bytes_sealed(PublicRandomness::Seeded, Integrity::Mac(&key));
    assert!(PipelineParams::from_bytes_sealed(&sealed, &insecure(), Integrity::Mac(&key)).is_ok());
    assert_eq!(
        PipelineParams::from_bytes_with(&sealed, &insecure())
            .unwrap_err()
            .field,
        "digest"
    );
    hostile(&bytes, HostileBudget::every_cut(300), |b| {
        PipelineParams::from_bytes_with(b, &insecure()).is_ok()
    })
    .unwrap();

    for (repacking, switch) in [
        (Repacking::RingPacking, DimensionSwitch::WholeCiphertext),
        (Repacking::LinearTransform, DimensionSwitch::PerCiphertext),
    ] {
        let o = options(repacking, switch);
        let bytes = o.to_bytes(&params);
        assert_eq!(bytes.len() as u64, o.serialized_size());
        let back = PipelineOptions::from_bytes(&bytes, &params, &insecure()).unwrap();
        assert_eq!(back, o);
        assert_eq!(back.to_bytes(&params), bytes);
        // Options of insecure keys need the reader's own opt-in.
        let err = PipelineOptions::from_bytes(&bytes, &params, &LoadLimits::DEFAULT).unwrap_err();
        assert_eq!(err.field, "options.allow_insecure", "{err}");
        // Made for other parameters.
        let err = PipelineOptions::from_bytes(&bytes, &wide, &insecure()).unwrap_err();
        assert_eq!(err.field, "header.fingerprint", "{err}");
        // Codes out of range, resealed.
        for (at, field) in [
            (16, "options.slots"),
            (28, "options.s2c_levels"),
            (30, "options.dimension_switch"),
            (31, "options.repacking"),
            (32, "options.blind_rotation"),
        ] {
            let mut bad = bytes.clone();
            bad[at] = 77;
            reseal(&mut bad);
            let err = PipelineOptions::from_bytes(&bad, &params, &insecure()).unwrap_err();
            assert_eq!(
                (err.field.as_str(), err.offset),
                (field, at as u64),
                "{err}"
            );
        }
        hostile(&bytes, HostileBudget::every_cut(300), |b| {
            PipelineOptions::from_bytes(b, &params, &insecure()).is_ok()
        })
        .unwrap();
    }
}

#[test]
fn keys_of_both_paths_round_trip_and_compute_the_same_ciphertext() {
    for (repacking, switch, seed) in [
        (Repacking::RingPacking, DimensionSwitch::WholeCiphertext, 1),
        (
            Repacking::LinearTransform,
            DimensionSwitch::PerCiphertext,
            2,
        ),
    ] {
        let mut k = keys(repacking, switch, seed);
        let bytes = k.keys.to_bytes(&k.params, &k.options);
        assert_eq!(
            bytes.len() as u64,
            k.keys.serialized_size(),
            "{repacking:?}"
        );
        let expanded = k
            .keys
            .to_bytes_with(&k.params, &k.options, PublicRandomness::Expanded);
        assert_eq!(
            expanded.len() as u64,
            k.keys.serialized_size_with(PublicRandomness::Expanded)
        );
        // Seeds: the uniform halves of every key are 32 bytes (the repacking key of the linear
        // transform is an ordinary ciphertext and keeps both parts).
        assert!(
            (bytes.len() as f64) < 0.6 * expanded.len() as f64,
            "{} seeded against {} expanded",
            bytes.len(),
            expanded.len()
        );
        eprintln!(
            "{repacking:?} / {switch:?}: {} bytes seeded, {} expanded",
            bytes.len(),
            expanded.len()
        );

        // The server: parameters, options and keys from bytes.
        let params = PipelineParams::from_bytes_with(&k.params.to_bytes(), &insecure()).unwrap();
        let options =
            PipelineOptions::from_bytes(&k.options.to_bytes(&k.params), &params, &insecure())
                .unwrap();
        let loaded = PegasusKeys::from_bytes(&bytes, &params, &options).unwrap();
        assert_eq!(loaded.to_bytes(&params, &options), bytes, "bit-identical");
        let streamed = PegasusKeys::read_from(&bytes[..], &params, &options).unwrap();
        assert_eq!(streamed.to_bytes(&params, &options), bytes);
        let from_expanded = PegasusKeys::from_bytes(&expanded, &params, &options).unwrap();
        assert_eq!(
            from_expanded.to_bytes_with(&params, &options, PublicRandomness::Expanded),
            expanded
        );

        // The same ciphertext through the original and the rebuilt pipeline.
        let original = PegasusEvaluator::new(k.params.clone(), k.options, k.keys.clone()).unwrap();
        let rebuilt = PegasusEvaluator::new(params.clone(), options, loaded).unwrap();
        // A running pipeline writes the same bytes, and a server's pipeline loads from them.
        let running = original
            .keys_to_bytes(PublicRandomness::Seeded, Integrity::Digest)
            .unwrap();
        assert_eq!(running, bytes);
        assert_eq!(
            original
                .keys_serialized_size_with(PublicRandomness::Expanded)
                .unwrap(),
            expanded.len() as u64
        );
        let served =
            PegasusEvaluator::from_key_bytes(params.clone(), options, &running, Integrity::Digest)
                .unwrap();
        let values: Vec<f64> = (0..SLOTS).map(|i| -7.5 + i as f64).collect();
        let pt = k
            .params
            .ckks
            .encode_real(&values, SLOTS, original.input_level())
            .unwrap();
        let ct = CkksEncryptor::with_secret_key(&k.params.ckks, k.keygen.secret_key())
            .unwrap()
            .encrypt_plaintext(&pt, &mut k.rng)
            .unwrap();
        let want = original.apply(&ct, f64::tanh).unwrap();
        let got = rebuilt.apply(&ct, f64::tanh).unwrap();
        assert_eq!(got.to_bytes(), want.to_bytes(), "{repacking:?}");
        let served = served.apply(&ct, f64::tanh).unwrap();
        assert_eq!(served.to_bytes(), want.to_bytes(), "{repacking:?}");

        // Keys of other options or parameters are refused by the header's fingerprint.
        let other = PipelineOptions {
            slots: SLOTS * 2,
            ..options
        };
        let err = PegasusKeys::from_bytes(&bytes, &params, &other).unwrap_err();
        assert_eq!(err.field, "header.fingerprint", "{err}");
        let wide = PipelinePreset::InsecureTest
            .params_with_lut_log_n(11)
            .unwrap();
        let err = PegasusKeys::from_bytes(&bytes, &wide, &options).unwrap_err();
        assert_eq!(err.field, "header.fingerprint", "{err}");
        // The layout byte, resealed.
        let mut bad = bytes.clone();
        bad[16] ^= 4;
        reseal(&mut bad);
        let err = PegasusKeys::from_bytes(&bad, &params, &options).unwrap_err();
        assert_eq!(
            (err.field.as_str(), err.offset),
            ("pegasus_keys.layout", 16)
        );
        // A MAC.
        let key = MacKey::from_bytes([7; 32]);
        let sealed = k.keys.to_bytes_sealed(
            &k.params,
            &k.options,
            PublicRandomness::Seeded,
            Integrity::Mac(&key),
        );
        assert!(
            PegasusKeys::from_bytes_sealed(&sealed, &params, &options, Integrity::Mac(&key))
                .is_ok()
        );
        assert_eq!(
            PegasusKeys::from_bytes(&sealed, &params, &options)
                .unwrap_err()
                .field,
            "digest"
        );
        // A sample of truncations, flips and resealed edits (the blob is 20 MB: each load of an edit
        // expands every seed before it). A stream
        // reader gets no digest check first, so its truncations reach the parsers.
        let budget = HostileBudget {
            cuts: 100,
            flips: 100,
            patches: 12,
        };
        hostile(&bytes, budget, |b| {
            PegasusKeys::from_bytes(b, &params, &options).is_ok()
        })
        .unwrap();
        let step = bytes.len() / 13;
        for cut in (1..bytes.len()).step_by(step) {
            let err = PegasusKeys::read_from(&bytes[..cut], &params, &options).unwrap_err();
            assert!(
                matches!(err.kind, DecodeErrorKind::Truncated),
                "cut {cut}: {err}"
            );
            assert!(err.offset <= cut as u64, "cut {cut}: {err}");
        }
    }
}
