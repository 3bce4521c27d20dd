//! Malformed, truncated and hostile inputs for every deserializer.
//!
//! * `tests/corpus/v<version>/`: a committed corpus of corrupted objects of each format version, each
//!   listed in its `EXPECTED` with the field its error must name. Regenerate the current version's with
//!   `RNSFHE_WRITE_CORPUS=1 cargo test --release -p rnsfhe --test wire_corpus` (only when the format
//!   version changes; older versions' corpora stay as they were written). From version 2 on, a corrupted
//!   payload is sealed again with its digest so that the corruption reaches the field it targets, and
//!   corruptions that are not sealed again must name the digest.
//!   The CKKS, BFV and LWE samples' randomness has changed since v3's first files were written (a
//!   regeneration rewrites 86 of them with other, equally valid bytes): when a kind joins, keep the
//!   committed files and add the new kind's (as the PEGASUS and decision-tree entries were added). Large
//!   objects' entries keep only the prefix the reader reads before it refuses the field.
//! * `fuzz/corpus/<target>/` (when present): inputs kept by the cargo-fuzz targets; replayed here so CI
//!   runs them as ordinary tests — whatever they decode to, they must not panic.
//! * Every truncation of every sample and a deterministic sweep of byte flips: errors, never panics.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};

use rnsfhe::apps::decision_tree::serialization::kinds as tree_kinds;
use rnsfhe::math::wire::{
    DecodeErrorKind, Deserializable, ObjectKind, Serializable, FORMAT_VERSION, MIN_READ_VERSION,
};
use rnsfhe::pegasus::serialization::kinds as pegasus_kinds;
use rnsfhe::wire_samples::{
    body, decode, decode_any, fuzz_input, fuzz_seeds, hostile, samples, seal, HostileBudget,
    Sample, SampleContexts, FUZZ_TARGETS,
};

const CORPUS_SEED: u8 = 2;

fn corpus_dir(version: u16) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(format!("tests/corpus/v{version}"))
}

/// Overwrites `bytes[at..at + v.len()]`.
fn put(mut bytes: Vec<u8>, at: usize, v: &[u8]) -> Vec<u8> {
    bytes[at..at + v.len()].copy_from_slice(v);
    bytes
}

/// The corrupted variants of one sample of the current format version: `(file name, bytes, field the
/// error must name)`. Each corruption is made on the header and payload and sealed again with the digest
/// ([`seal`]); the digest's own entries are not.
fn corruptions(s: &Sample, ctxs: &SampleContexts) -> Vec<(String, Vec<u8>, &'static str)> {
    let b = body(&s.bytes).to_vec();
    let n = b.len();
    let mut out: Vec<(&str, Vec<u8>, &'static str)> = vec![
        // Shorter than a header and a digest.
        ("truncated_header", b[..10].to_vec(), "digest"),
        ("bad_magic", put(b.clone(), 0, b"RNSX"), "header.magic"),
        (
            "future_version",
            put(b.clone(), 4, &99u16.to_le_bytes()),
            "header.version",
        ),
        (
            "unknown_kind",
            put(b.clone(), 6, &999u16.to_le_bytes()),
            "header.kind",
        ),
        (
            "wrong_fingerprint",
            put(b.clone(), 8, &[0x5a; 8]),
            "header.fingerprint",
        ),
        (
            "trailing_byte",
            [b.clone(), vec![0]].concat(),
            "end of object",
        ),
    ];
    let is_params = matches!(
        s.kind,
        rnsfhe::ckks::serialization::kinds::CKKS_PARAMETERS
            | rnsfhe::bfv::serialization::kinds::BFV_PARAMETERS
    );
    if !is_params {
        // Another kind in the header of this object.
        let other = if s.kind == rnsfhe::core::serialization::kinds::PUBLIC_KEY {
            19u16
        } else {
            17
        };
        out.push((
            "other_kind",
            put(b.clone(), 6, &other.to_le_bytes()),
            "header.kind",
        ));
    }
    let u32le = |v: u32| v.to_le_bytes();
    match s.name {
        "ckks_params" => out.extend([
            ("log_n_40", put(b.clone(), 16, &u32le(40)), "params.log_n"),
            (
                "levels_million",
                put(b.clone(), 28, &u32le(1_000_000)),
                "params.levels",
            ),
            ("dnum_zero", put(b.clone(), 40, &u32le(0)), "params.dnum"),
            ("secret_tag_5", put(b.clone(), 44, &[5]), "params.secret"),
            (
                "sigma_negative",
                put(b.clone(), 49, &(-1.0f64).to_le_bytes()),
                "params.sigma",
            ),
            ("rescaling_9", put(b.clone(), 58, &[9]), "params.rescaling"),
            // The flags byte: bit 0 insecure_for_testing, bit 1 the bootstrapping-prime section.
            ("flags_4", put(b.clone(), 59, &[4]), "params.flags"),
            (
                "flags_3_without_section",
                put(b.clone(), 59, &[3]),
                "params.bootstrap_primes.count",
            ),
        ]),
        "secret_key" | "bfv_secret_key" => out.extend([
            (
                "distribution_5",
                put(b.clone(), 16, &[5]),
                "secret_key.distribution",
            ),
            (
                "coefficient_code_3",
                put(b.clone(), 21, &[0x03]),
                "secret_key.coefficients[0]",
            ),
        ]),
        "public_key" | "bfv_public_key" => out.extend([
            // Format version 3: flags 0..=3 (versions 1 and 2: the seeded flag, "seeded_flag_2").
            ("flags_4", put(b.clone(), 16, &[4]), "public_key.flags"),
            (
                "residue_above_modulus",
                put(b.clone(), 17, &[0xff; 5]),
                "public_key.b.limb[0][0]",
            ),
        ]),
        "galois_keys" | "bfv_galois_keys" => out.extend([
            (
                "count_max",
                put(b.clone(), 16, &u32le(u32::MAX)),
                "galois_keys.count",
            ),
            (
                "even_element",
                put(b.clone(), 20, &u32le(4)),
                "galois_keys.element[0]",
            ),
            (
                "element_above_2n",
                put(b.clone(), 20, &u32le(4097)),
                "galois_keys.element[0]",
            ),
        ]),
        "encapsulation_keys" => out.extend([
            (
                "weight_zero",
                put(b.clone(), 16, &u32le(0)),
                "encapsulation.weight",
            ),
            // Above N = 2^10 of the sample context.
            (
                "weight_above_n",
                put(b.clone(), 16, &u32le(1025)),
                "encapsulation.weight",
            ),
        ]),
        "bootstrapping_keys" => {
            // The presence byte follows the Galois keys, whose object body is header + payload.
            let keys = rnsfhe::ckks::BootstrappingKeys::from_bytes(&s.bytes, &ctxs.ckks).unwrap();
            let flag = body(&keys.galois.to_bytes()).len();
            out.extend([
                (
                    "encapsulation_flag_2",
                    put(b.clone(), flag, &[2]),
                    "bootstrapping_keys.encapsulation_present",
                ),
                (
                    "weight_zero",
                    put(b.clone(), flag + 1, &u32le(0)),
                    "bootstrapping_keys.encapsulation.weight",
                ),
            ]);
        }
        "ckks_plaintext" => out.extend([
            (
                "level_zero",
                put(b.clone(), 16, &u32le(0)),
                "plaintext.level",
            ),
            (
                "scale_nan",
                put(b.clone(), 20, &f64::NAN.to_le_bytes()),
                "plaintext.scale",
            ),
            ("slots_3", put(b.clone(), 28, &u32le(3)), "plaintext.slots"),
        ]),
        "ckks_ciphertext" => out.extend([
            (
                "scale_infinite",
                put(b.clone(), 16, &f64::INFINITY.to_le_bytes()),
                "ciphertext.scale",
            ),
            (
                "slots_huge",
                put(b.clone(), 24, &u32le(1 << 30)),
                "ciphertext.slots",
            ),
            (
                "level_99",
                put(b.clone(), 28, &u32le(99)),
                "ciphertext.level",
            ),
            (
                "part_count_7",
                put(b.clone(), 32, &[7]),
                "ciphertext.part_count",
            ),
            (
                "seeded_flag_2",
                put(b.clone(), 33, &[2]),
                "ciphertext.seeded",
            ),
            (
                "residue_above_modulus",
                put(b.clone(), 34, &[0xff; 5]),
                "ciphertext.parts[0].limb[0][0]",
            ),
        ]),
        "ckks_seeded_ciphertext" => out.extend([
            (
                "seeded_three_parts",
                put(b.clone(), 32, &[3]),
                "ciphertext.seeded",
            ),
            ("missing_seed", b[..n - 1].to_vec(), "ciphertext.seed"),
        ]),
        _ => {}
    }
    out.extend(bfv_corruptions(s));
    out.extend(lwe_corruptions(s));
    out.extend(pegasus_corruptions(s, ctxs));
    out.extend(tree_corruptions(s, ctxs));
    // The PEGASUS and decision-tree parameters, options and client secrets compare their fingerprint
    // after their payload too.
    let late_fingerprint = is_params
        || [
            pegasus_kinds::PIPELINE_PARAMETERS,
            pegasus_kinds::PIPELINE_OPTIONS,
            tree_kinds::TREE_PARAMETERS,
            tree_kinds::TREE_CLIENT,
        ]
        .contains(&s.kind);
    let sealed = out
        .into_iter()
        .map(|(m, mut bytes, field)| {
            // A header error is found in the first 16 bytes (parameters check the fingerprint only
            // after their payload): the rest need not be committed.
            if field.starts_with("header.") && !late_fingerprint {
                bytes.truncate(16);
            } else if s.kind.code() >= 80 {
                // The PEGASUS keys are megabytes: commit only what the reader reads before it
                // refuses the field (it reads in order, so the error comes before the cut).
                bytes = shortest_prefix(s.kind, bytes, field, ctxs);
            }
            (m, seal(&bytes), field)
        })
        // Entries whose error needs the whole of a large object (a trailing byte, the last byte
        // missing) are left to the properties below (`every_truncation_is_an_error`,
        // `resealed_edits_never_panic_and_header_edits_are_refused`), which make them afresh.
        .filter(|(_, bytes, _)| bytes.len() <= 256 << 10);
    // The digest itself: any byte changed without sealing again, a changed or missing digest byte (for
    // the smaller objects; `every_changed_byte_is_a_digest_error` flips bits of all of them).
    let whole = s.bytes.clone();
    let flip = |mut v: Vec<u8>, at: usize| {
        v[at] ^= 1;
        v
    };
    let unsealed: Vec<(&str, Vec<u8>, &'static str)> = vec![
        ("kind_bit_flipped", flip(whole.clone(), 6), "digest"),
        ("fingerprint_bit_flipped", flip(whole.clone(), 9), "digest"),
        ("payload_bit_flipped", flip(whole.clone(), 20), "digest"),
        (
            "last_payload_bit_flipped",
            flip(whole.clone(), n - 1),
            "digest",
        ),
        (
            "digest_bit_flipped",
            flip(whole.clone(), whole.len() - 1),
            "digest",
        ),
        (
            "digest_byte_missing",
            whole[..whole.len() - 1].to_vec(),
            "digest",
        ),
        ("digest_missing", b.clone(), "digest"),
    ];
    let unsealed = unsealed.into_iter().filter(|_| whole.len() <= 16 << 10);
    sealed
        .chain(unsealed)
        .map(|(m, bytes, field)| (format!("{}__{m}.bin", s.name), bytes, field))
        .collect()
}

/// The corruptions specific to the BFV samples (payload layouts in `rnsfhe_bfv::serialization`; the
/// keys of `rnsfhe-core` share the CKKS entries above).
fn bfv_corruptions(s: &Sample) -> Vec<(&'static str, Vec<u8>, &'static str)> {
    let b = body(&s.bytes).to_vec();
    let n = b.len();
    let u32le = |v: u32| v.to_le_bytes();
    let u64le = |v: u64| v.to_le_bytes();
    match s.name {
        // log_n @16, t @20, k @28, q_i @32.., k' @48, p_j @52.., relin_base_log @76, sigma @80,
        // conversion @88, flags @89 (bit 0 insecure_for_testing, bit 1 hybrid key switching).
        "bfv_params" => vec![
            ("log_n_3", put(b.clone(), 16, &u32le(3)), "params.log_n"),
            (
                "t_one",
                put(b.clone(), 20, &u64le(1)),
                "params.plaintext_modulus",
            ),
            (
                "q_count_million",
                put(b.clone(), 28, &u32le(1_000_000)),
                "params.q_moduli.count",
            ),
            (
                "q_above_2_62",
                put(b.clone(), 32, &u64le(1 << 63)),
                "params.q_moduli[0]",
            ),
            // Another q_0 changes the fingerprint, which is compared before anything is built.
            (
                "q_composite",
                put(b.clone(), 32, &u64le(3 * 2048 + 1)),
                "header.fingerprint",
            ),
            (
                "p_count_zero",
                put(b.clone(), 48, &u32le(0)),
                "params.p_moduli.count",
            ),
            (
                "relin_base_99",
                put(b.clone(), 76, &u32le(99)),
                "params.relin_base_log",
            ),
            (
                "sigma_nan",
                put(b.clone(), 80, &f64::NAN.to_le_bytes()),
                "params.sigma",
            ),
            (
                "conversion_fast",
                put(b.clone(), 88, &[0]),
                "params.conversion",
            ),
            ("flags_4", put(b.clone(), 89, &[4]), "params.flags"),
            // Bit 1 announces the hybrid key-switching section, which is missing.
            (
                "hybrid_flag_without_section",
                put(b.clone(), 89, &[2]),
                "params.dnum",
            ),
        ],
        "bfv_relin_key" => vec![
            (
                "seeded_flag_2",
                put(b.clone(), 16, &[2]),
                "relin_key.seeded",
            ),
            (
                "residue_above_modulus",
                put(b.clone(), 17, &[0xff; 5]),
                "relin_key.b[0].limb[0][0]",
            ),
            ("missing_seed", b[..n - 1].to_vec(), "relin_key.seed"),
        ],
        // count @16, element[0] @20, key[0] @24, element[1] after the first of two equal-sized keys.
        "bfv_galois_keys" => vec![
            (
                "key_seeded_flag_7",
                put(b.clone(), 24, &[7]),
                "galois_keys.key[0].seeded",
            ),
            (
                "elements_not_increasing",
                put(b.clone(), 20 + (n - 20) / 2, &u32le(3)),
                "galois_keys.element[1]",
            ),
        ],
        // width @16 (at most 17 bits for t = 65537), coefficients @17.
        "bfv_plaintext" => vec![
            ("width_zero", put(b.clone(), 16, &[0]), "plaintext.width"),
            ("width_40", put(b.clone(), 16, &[40]), "plaintext.width"),
            // Width 17 (N x 17 bits follow) and coefficient 0 = 2^17 - 1 >= t.
            (
                "coefficient_above_t",
                [
                    &b[..16],
                    &[17, 0xff, 0xff, 0x01],
                    &vec![0; 1024 * 17 / 8 - 3][..],
                ]
                .concat(),
                "plaintext.coefficients[0]",
            ),
        ],
        // count @16, seeded @17, c_0 @18.
        "bfv_ciphertext" => vec![
            (
                "part_count_7",
                put(b.clone(), 16, &[7]),
                "ciphertext.part_count",
            ),
            (
                "part_count_1",
                put(b.clone(), 16, &[1]),
                "ciphertext.part_count",
            ),
            (
                "seeded_flag_2",
                put(b.clone(), 17, &[2]),
                "ciphertext.seeded",
            ),
            (
                "residue_above_modulus",
                put(b.clone(), 18, &[0xff; 5]),
                "ciphertext.parts[0].limb[0][0]",
            ),
        ],
        "bfv_product_ciphertext" => vec![
            (
                "seeded_three_parts",
                put(b.clone(), 17, &[1]),
                "ciphertext.seeded",
            ),
            (
                "last_byte_missing",
                b[..n - 1].to_vec(),
                "ciphertext.parts[2].limb[1]",
            ),
        ],
        "bfv_seeded_ciphertext" => vec![
            ("missing_seed", b[..n - 1].to_vec(), "ciphertext.seed"),
            (
                "seed_flag_cleared",
                put(b.clone(), 17, &[0]),
                "ciphertext.parts[1].limb[0]",
            ),
        ],
        _ => vec![],
    }
}

/// The corruptions specific to the LWE samples (payload layouts in `rnsfhe_lwe::serialization`; `q_0`
/// has 45 bits, the LWE dimension is 16, the ring degree 32).
fn lwe_corruptions(s: &Sample) -> Vec<(&'static str, Vec<u8>, &'static str)> {
    let b = body(&s.bytes).to_vec();
    let n = b.len();
    let u32le = |v: u32| v.to_le_bytes();
    let mut out = vec![];
    if s.kind.code() >= 64 {
        // LWE objects exist from format version 2 on: a version-1 header is refused.
        out.push((
            "version_1",
            put(b.clone(), 4, &1u16.to_le_bytes()),
            "header.version",
        ));
    }
    out.extend(match s.name {
        // b @16 (45 bits, 6 bytes), a @22.
        "lwe_ciphertext" => vec![
            (
                "b_above_modulus",
                put(b.clone(), 16, &[0xff; 6]),
                "lwe_ciphertext.b[0]",
            ),
            (
                "a_above_modulus",
                put(b.clone(), 22, &[0xff; 6]),
                "lwe_ciphertext.a[0]",
            ),
            ("last_byte_missing", b[..n - 1].to_vec(), "lwe_ciphertext.a"),
        ],
        "lwe_secret_key" | "lwe_ring_secret_key" => vec![(
            "coefficient_code_3",
            put(b.clone(), 16, &[0x03]),
            "lwe_secret_key.coefficients[0]",
        )],
        // block[0] @16: seeded flag, 7 b_i of 90 bytes, seed; block[1] after it.
        "lwe_switching_key" => vec![
            (
                "seeded_flag_2",
                put(b.clone(), 16, &[2]),
                "switching_key.block[0].seeded",
            ),
            (
                "residue_above_modulus",
                put(b.clone(), 17, &[0xff; 6]),
                "switching_key.block[0].b[0].limb[0][0]",
            ),
            (
                "missing_seed",
                b[..n - 1].to_vec(),
                "switching_key.block[1].seed",
            ),
        ],
        // input scale @16, output scale @24, input modulus @32, functions @40, f @44.
        "lookup_table" => vec![
            (
                "input_scale_nan",
                put(b.clone(), 16, &f64::NAN.to_le_bytes()),
                "lookup_table.input_scale",
            ),
            (
                "output_scale_zero",
                put(b.clone(), 24, &0f64.to_le_bytes()),
                "lookup_table.output_scale",
            ),
            (
                "input_modulus_below_2n",
                put(b.clone(), 32, &3u64.to_le_bytes()),
                "lookup_table.input_modulus",
            ),
            (
                "functions_3",
                put(b.clone(), 40, &3u32.to_le_bytes()),
                "lookup_table.functions",
            ),
            (
                "residue_above_modulus",
                put(b.clone(), 44, &[0xff; 6]),
                "lookup_table.poly.limb[0][0]",
            ),
        ],
        // algorithm @16, n_lwe @17, RGSW per coefficient @21, rgsw[0][0] @22, automorphism-key count in
        // the last 4 bytes.
        "blind_rotation_key" => vec![
            (
                "algorithm_9",
                put(b.clone(), 16, &[9]),
                "blind_rotation_key.algorithm",
            ),
            (
                "binary_code_ternary_layout",
                put(b.clone(), 16, &[1]),
                "blind_rotation_key.rgsw_per_coefficient",
            ),
            (
                "dimension_zero",
                put(b.clone(), 17, &u32le(0)),
                "blind_rotation_key.lwe_dimension",
            ),
            (
                "dimension_above_max",
                put(b.clone(), 17, &u32le((1 << 17) + 1)),
                "blind_rotation_key.lwe_dimension",
            ),
            // The largest dimension without the keys behind it: the input ends (no allocation of its
            // size).
            (
                "dimension_max_without_keys",
                put(b.clone(), 17, &u32le(1 << 17)),
                "blind_rotation_key.rgsw[16][0].m.b[0].limb[0]",
            ),
            (
                "rgsw_per_coefficient_3",
                put(b.clone(), 21, &[3]),
                "blind_rotation_key.rgsw_per_coefficient",
            ),
            (
                "rgsw_seeded_flag_2",
                put(b.clone(), 22, &[2]),
                "blind_rotation_key.rgsw[0][0].m.seeded",
            ),
            (
                "residue_above_modulus",
                put(b.clone(), 23, &[0xff; 6]),
                "blind_rotation_key.rgsw[0][0].m.b[0].limb[0][0]",
            ),
            (
                "automorphism_key_for_ternary",
                [&b[..n - 4], &u32le(1), &u32le(5)].concat(),
                "blind_rotation_key.automorphism_keys.count",
            ),
            (
                "automorphism_count_max",
                put(b.clone(), n - 4, &u32le(u32::MAX)),
                "blind_rotation_key.automorphism_keys.count",
            ),
            (
                "automorphism_count_missing",
                b[..n - 4].to_vec(),
                "blind_rotation_key.automorphism_keys.count",
            ),
        ],
        _ => vec![],
    });
    out
}

/// The shortest prefix of the corrupted payload `bytes` that, sealed, still fails on `field` (all of
/// `bytes` if none shorter does).
fn shortest_prefix(
    kind: ObjectKind,
    bytes: Vec<u8>,
    field: &str,
    ctxs: &SampleContexts,
) -> Vec<u8> {
    let fails_on_field =
        |len: usize| decode(kind, &seal(&bytes[..len]), ctxs).is_err_and(|e| e.field == field);
    let (mut lo, mut hi) = (16, bytes.len());
    if !fails_on_field(hi) {
        return bytes;
    }
    while lo < hi {
        let mid = (lo + hi) / 2;
        if fails_on_field(mid) {
            hi = mid;
        } else {
            lo = mid + 1;
        }
    }
    bytes[..hi].to_vec()
}

/// The corruptions every PEGASUS and decision-tree object shares: these kinds exist from format
/// version 3 on, so a version-2 header is refused too (version 1: [`lwe_corruptions`]).
fn version_2(b: &[u8]) -> (&'static str, Vec<u8>, &'static str) {
    (
        "version_2",
        put(b.to_vec(), 4, &2u16.to_le_bytes()),
        "header.version",
    )
}

/// The LWE side of a PEGASUS or decision-tree parameter set at `at` (`rnsfhe_pegasus::serialization`:
/// `ckks_log_n` +0, `n_lwe` +4, secret tag +8 and weight +9, `q_ks` +13, base +21, digits +25,
/// `sigma_ks` +29, `log2 n` +37, `q_0` +41, `q'` +49, `sigma_lut` +57, ring secret +65, blind rotation
/// +70), the fields under `prefix` (`pipeline.lwe` or `tree.lwe`); the samples' `n_lwe` is 16 and their
/// limits allow rings up to `2^11`.
fn lwe_side_corruptions(
    b: &[u8],
    at: usize,
    prefix: &str,
) -> Vec<(&'static str, Vec<u8>, &'static str)> {
    let u32le = |v: u32| v.to_le_bytes();
    let u64le = |v: u64| v.to_le_bytes();
    let field = |name: &str| -> &'static str { format!("{prefix}.{name}").leak() };
    vec![
        (
            "ckks_log_n_zero",
            put(b.to_vec(), at, &u32le(0)),
            field("ckks_log_n"),
        ),
        (
            "lwe_dimension_zero",
            put(b.to_vec(), at + 4, &u32le(0)),
            field("lwe_dimension"),
        ),
        (
            "lwe_dimension_above_max",
            put(b.to_vec(), at + 4, &u32le((1 << 17) + 1)),
            field("lwe_dimension"),
        ),
        (
            "lwe_secret_tag_9",
            put(b.to_vec(), at + 8, &[9]),
            field("lwe_secret"),
        ),
        // A binary key of weight 17 in dimension 16.
        (
            "lwe_secret_weight_above_dimension",
            put(b.to_vec(), at + 8, &[3, 17, 0, 0, 0]),
            field("lwe_secret"),
        ),
        (
            "key_switch_modulus_one",
            put(b.to_vec(), at + 13, &u64le(1)),
            field("key_switch.modulus"),
        ),
        (
            "key_switch_base_log_zero",
            put(b.to_vec(), at + 21, &u32le(0)),
            field("key_switch.base_log"),
        ),
        (
            "key_switch_digits_65",
            put(b.to_vec(), at + 25, &u32le(65)),
            field("key_switch.digits"),
        ),
        (
            "key_switch_sigma_nan",
            put(b.to_vec(), at + 29, &f64::NAN.to_le_bytes()),
            field("key_switch.sigma"),
        ),
        (
            "lut_log_n_18",
            put(b.to_vec(), at + 37, &u32le(18)),
            field("lut.log_n"),
        ),
        // Within the format, beyond the reader's limits (`N <= 2^11` for the samples): refused before
        // any ring is built.
        (
            "lut_log_n_above_limit",
            put(b.to_vec(), at + 37, &u32le(12)),
            field("lut.log_n"),
        ),
        (
            "lut_q0_above_2_62",
            put(b.to_vec(), at + 41, &u64le(1 << 63)),
            field("lut.q0"),
        ),
        (
            "lut_special_zero",
            put(b.to_vec(), at + 49, &u64le(0)),
            field("lut.special"),
        ),
        (
            "lut_sigma_negative",
            put(b.to_vec(), at + 57, &(-1.0f64).to_le_bytes()),
            field("lut.sigma"),
        ),
        (
            "ring_secret_tag_5",
            put(b.to_vec(), at + 65, &[5]),
            field("lut.secret"),
        ),
        (
            "blind_rotation_9",
            put(b.to_vec(), at + 70, &[9]),
            field("blind_rotation"),
        ),
        // A valid value of another parameter set: the header's fingerprint is not its.
        (
            "lwe_dimension_32",
            put(b.to_vec(), at + 4, &u32le(32)),
            "header.fingerprint",
        ),
    ]
}

/// Finds the whole blind-rotation key embedded in a key set (its header: magic, version, kind 68).
fn embedded_blind_rotation_key(b: &[u8]) -> usize {
    let mut header = b[..6].to_vec();
    header.extend(
        rnsfhe::lwe::serialization::kinds::BLIND_ROTATION_KEY
            .code()
            .to_le_bytes(),
    );
    (16..b.len() - 8)
        .find(|&at| b[at..at + 8] == header[..])
        .unwrap()
}

/// A valid blind-rotation key of the ternary algorithm (the samples' are binary), dimension 16, in
/// the ring `ring`: what a key set of other options would hold.
fn ternary_blind_rotation_key(ring: &std::sync::Arc<rnsfhe::core::RlweContext>) -> Vec<u8> {
    let mut rng = rnsfhe::ckks::Csprng::insecure_from_seed_for_tests([77; 32]);
    let ring_sk = rnsfhe::core::SecretKey::generate(ring, &mut rng).unwrap();
    let lwe_sk = rnsfhe::lwe::LweSecretKey::generate(
        rnsfhe::lwe::LweDimension::new(16).unwrap(),
        rnsfhe::core::SecretDistribution::Ternary,
        &mut rng,
    )
    .unwrap();
    rnsfhe::lwe::BlindRotationKey::generate_with(
        rnsfhe::lwe::BlindRotation::Ternary,
        ring,
        &ring_sk,
        &lwe_sk,
        &mut rng,
    )
    .unwrap()
    .to_bytes()
}

/// The corruptions specific to the PEGASUS samples (payload layouts in
/// `rnsfhe_pegasus::serialization`): every field's range, valid values of other parameters (the
/// header's fingerprint), and parameters whose fingerprint matches but whose halves disagree.
fn pegasus_corruptions(
    s: &Sample,
    ctxs: &SampleContexts,
) -> Vec<(&'static str, Vec<u8>, &'static str)> {
    let b = body(&s.bytes).to_vec();
    let n = b.len();
    let u32le = |v: u32| v.to_le_bytes();
    let params = &ctxs.pegasus.params;
    // A parameter set with another LWE side, written with its own (valid) fingerprint.
    let with_lwe = |f: &dyn Fn(&mut rnsfhe::lwe::PegasusParams)| {
        let mut other = params.clone();
        f(&mut other.lwe);
        body(&other.to_bytes()).to_vec()
    };
    let mut out = vec![];
    if [
        pegasus_kinds::PIPELINE_PARAMETERS,
        pegasus_kinds::PIPELINE_OPTIONS,
        pegasus_kinds::PEGASUS_KEYS,
    ]
    .contains(&s.kind)
    {
        out.push(version_2(&b));
    }
    out.extend(match s.name {
        // CKKS parameters @16 (the CKKS context's payload, 44 bytes), the LWE side @60.
        "pipeline_params" => {
            let lwe = n - 71;
            assert_eq!(lwe, 60);
            let q0 = params.q0();
            // Another prime 1 mod 2n, and one that is only 1 mod 64.
            let other_q0 = rnsfhe::math::primes::ntt_primes_of_bits(45, 512, 1, &[q0]).unwrap()[0];
            let primes = rnsfhe::math::primes::ntt_primes_of_bits(45, 64, 16, &[q0]).unwrap();
            let not_ntt_friendly = *primes.iter().find(|&&q| q % 512 != 1).unwrap();
            let mut v = vec![
                ("log_n_40", put(b.clone(), 16, &u32le(40)), "params.log_n"),
                ("dnum_zero", put(b.clone(), 40, &u32le(0)), "params.dnum"),
            ];
            v.extend(lwe_side_corruptions(&b, lwe, "pipeline.lwe"));
            v.extend([
                // Fingerprints that match, halves that do not: q_0 is not the CKKS chain's first
                // prime; the LWE side's N is not the CKKS ring's; q' is not 1 mod 2n.
                (
                    "q0_not_the_chains",
                    with_lwe(&|l| l.lut.q0 = other_q0),
                    "pipeline.lwe.lut.q0",
                ),
                (
                    "ckks_log_n_not_the_rings",
                    with_lwe(&|l| l.ckks_log_n = 9),
                    "parameters",
                ),
                (
                    "special_not_ntt_friendly",
                    with_lwe(&|l| l.lut.special = not_ntt_friendly),
                    "parameters",
                ),
            ]);
            v
        }
        // slots @16, bound @20, S2C levels @28, C2S levels @29, dimension switch @30, repacking @31,
        // blind rotation @32, sparse encapsulation @33, insecure @34.
        "pipeline_options" => vec![
            ("slots_3", put(b.clone(), 16, &u32le(3)), "options.slots"),
            (
                "slots_above_half_n",
                put(b.clone(), 16, &u32le(1024)),
                "options.slots",
            ),
            (
                "input_bound_nan",
                put(b.clone(), 20, &f64::NAN.to_le_bytes()),
                "options.input_bound",
            ),
            (
                "input_bound_negative",
                put(b.clone(), 20, &(-8.0f64).to_le_bytes()),
                "options.input_bound",
            ),
            (
                "s2c_levels_zero",
                put(b.clone(), 28, &[0]),
                "options.s2c_levels",
            ),
            (
                "c2s_levels_5",
                put(b.clone(), 29, &[5]),
                "options.c2s_levels",
            ),
            (
                "dimension_switch_2",
                put(b.clone(), 30, &[2]),
                "options.dimension_switch",
            ),
            ("repacking_2", put(b.clone(), 31, &[2]), "options.repacking"),
            (
                "blind_rotation_3",
                put(b.clone(), 32, &[3]),
                "options.blind_rotation",
            ),
            (
                "sparse_flag_2",
                put(b.clone(), 33, &[2]),
                "options.sparse_encapsulation",
            ),
            (
                "insecure_flag_2",
                put(b.clone(), 34, &[2]),
                "options.allow_insecure",
            ),
            // Valid options, other than the header's.
            (
                "slots_8",
                put(b.clone(), 16, &u32le(8)),
                "header.fingerprint",
            ),
        ],
        "pipeline_linear_options" => vec![(
            "ring_packing",
            put(b.clone(), 31, &[1]),
            "header.fingerprint",
        )],
        // layout @16, relinearization key @17, Galois keys, the whole-ciphertext switching key, the
        // blind-rotation key (a whole object), the ring-packing keys, the sparse-secret keys, the
        // joint repacking's rotations.
        "pegasus_keys" | "pegasus_linear_keys" => {
            let ring = params.lwe.lut.context_allowing_insecure().unwrap();
            let brk = embedded_blind_rotation_key(&b);
            let key = rnsfhe::lwe::BlindRotationKey::read_from(&b[brk..], &ring).unwrap();
            let brk_end = brk + key.serialized_size() as usize;
            let mut v = vec![
                (
                    "layout_zero",
                    put(b.clone(), 16, &[0]),
                    "pegasus_keys.layout",
                ),
                (
                    "layout_other_path",
                    put(b.clone(), 16, &[b[16] ^ 4]),
                    "pegasus_keys.layout",
                ),
                (
                    "relin_seeded_flag_2",
                    put(b.clone(), 17, &[2]),
                    "pegasus_keys.relin_key.seeded",
                ),
                (
                    "blind_rotation_kind_17",
                    put(b.clone(), brk + 6, &17u16.to_le_bytes()),
                    "pegasus_keys.blind_rotation.header.kind",
                ),
                (
                    "blind_rotation_fingerprint",
                    put(b.clone(), brk + 8, &[0x5a; 8]),
                    "pegasus_keys.blind_rotation.header.fingerprint",
                ),
                (
                    "blind_rotation_algorithm_9",
                    put(b.clone(), brk + 16, &[9]),
                    "pegasus_keys.blind_rotation.blind_rotation_key.algorithm",
                ),
                // The embedded key's own digest (the whole object's is sealed again).
                (
                    "blind_rotation_digest_flipped",
                    put(b.clone(), brk_end - 1, &[b[brk_end - 1] ^ 1]),
                    "pegasus_keys.blind_rotation.digest",
                ),
                // A valid key of the ternary algorithm where the options need a binary one.
                (
                    "blind_rotation_other_algorithm",
                    [
                        &b[..brk],
                        &ternary_blind_rotation_key(&ring)[..],
                        &b[brk_end..],
                    ]
                    .concat(),
                    "pegasus_keys.blind_rotation",
                ),
            ];
            if s.name == "pegasus_keys" {
                v.extend([
                    (
                        "ring_packing_key_seeded_flag_2",
                        put(b.clone(), brk_end, &[2]),
                        "pegasus_keys.ring_packing.switching_key.seeded",
                    ),
                    (
                        "last_byte_missing",
                        b[..n - 1].to_vec(),
                        "pegasus_keys.pair_rotations.galois_keys.key[2].seed",
                    ),
                ]);
            } else {
                v.extend([
                    (
                        "back_seeded_flag_2",
                        put(b.clone(), brk_end, &[2]),
                        "pegasus_keys.back.switching_key.block[0].seeded",
                    ),
                    (
                        "last_byte_missing",
                        b[..n - 1].to_vec(),
                        "pegasus_keys.repacking_key.ciphertext.parts[1].limb[3]",
                    ),
                ]);
            }
            v
        }
        _ => vec![],
    });
    out
}

/// The corruptions specific to the decision-tree samples (payload layouts in
/// `rnsfhe_apps::decision_tree::serialization`; `n_lwe = 16`, `q` of 45 bits).
fn tree_corruptions(
    s: &Sample,
    ctxs: &SampleContexts,
) -> Vec<(&'static str, Vec<u8>, &'static str)> {
    let b = body(&s.bytes).to_vec();
    let n = b.len();
    let u32le = |v: u32| v.to_le_bytes();
    let params = ctxs.tree.params;
    let mut out = vec![];
    if tree_kinds::KINDS.contains(&s.kind) {
        out.push(version_2(&b));
    }
    out.extend(match s.name {
        // The LWE side @16, the opt-in for insecure keys @87.
        "tree_params" => {
            let mut v = lwe_side_corruptions(&b, 16, "tree.lwe");
            // A q_0 (and q_ks) that is not 1 mod 2n for the ring of degree 2^8, with its own
            // fingerprint: refused when the rings are built.
            let primes = rnsfhe::math::primes::ntt_primes_of_bits(45, 64, 16, &[]).unwrap();
            let q = *primes.iter().find(|&&q| q % 512 != 1).unwrap();
            let mut other = params;
            other.lwe.lut.q0 = q;
            other.lwe.key_switch.modulus = q;
            v.extend([
                (
                    "insecure_flag_9",
                    put(b.clone(), 87, &[9]),
                    "tree.allow_insecure",
                ),
                (
                    "q0_not_ntt_friendly",
                    body(&other.to_bytes()).to_vec(),
                    "parameters",
                ),
            ]);
            v
        }
        // The parameters' payload @16, the LWE secret's 16 coefficients at 2 bits @88.
        "tree_client" => vec![
            (
                "insecure_flag_9",
                put(b.clone(), 87, &[9]),
                "tree.allow_insecure",
            ),
            (
                "lwe_dimension_32",
                put(b.clone(), 20, &u32le(32)),
                "header.fingerprint",
            ),
            (
                "secret_code_3",
                put(b.clone(), 88, &[0x03]),
                "tree_client.secret[0]",
            ),
            (
                "last_byte_missing",
                b[..n - 1].to_vec(),
                "tree_client.secret",
            ),
        ],
        // The blind-rotation key (a whole object) @16, the switching key back to n_lwe, the public
        // key of the query ring.
        "tree_server_key" => {
            let ring = params.lut_context().unwrap();
            let key = rnsfhe::lwe::BlindRotationKey::read_from(&b[16..], &ring).unwrap();
            let brk_end = 16 + key.serialized_size() as usize;
            let server_key =
                rnsfhe::apps::decision_tree::TreeServerKey::from_bytes(&s.bytes, &params).unwrap();
            let pk = n - server_key.public_key().serialized_size() as usize + 48;
            vec![
                (
                    "blind_rotation_kind_17",
                    put(b.clone(), 22, &17u16.to_le_bytes()),
                    "tree_server_key.blind_rotation.header.kind",
                ),
                (
                    "blind_rotation_algorithm_7",
                    put(b.clone(), 32, &[7]),
                    "tree_server_key.blind_rotation.blind_rotation_key.algorithm",
                ),
                (
                    "blind_rotation_digest_flipped",
                    put(b.clone(), brk_end - 1, &[b[brk_end - 1] ^ 1]),
                    "tree_server_key.blind_rotation.digest",
                ),
                (
                    "blind_rotation_other_algorithm",
                    [
                        &b[..16],
                        &ternary_blind_rotation_key(&ring)[..],
                        &b[brk_end..],
                    ]
                    .concat(),
                    "tree_server_key.blind_rotation",
                ),
                (
                    "back_seeded_flag_2",
                    put(b.clone(), brk_end, &[2]),
                    "tree_server_key.back.switching_key.block[0].seeded",
                ),
                (
                    "public_key_flags_4",
                    put(b.clone(), pk, &[4]),
                    "tree_server_key.public_key.public_key.flags",
                ),
                (
                    "last_byte_missing",
                    b[..n - 1].to_vec(),
                    "tree_server_key.public_key.public_key.seed",
                ),
            ]
        }
        // features @16, level @20, parts @24, seeded @25, c_0 @26, seed in the last 32 bytes.
        "tree_query" => vec![
            (
                "features_zero",
                put(b.clone(), 16, &u32le(0)),
                "query.features",
            ),
            (
                "features_above_n_lwe",
                put(b.clone(), 16, &u32le(17)),
                "query.features",
            ),
            ("level_2", put(b.clone(), 20, &u32le(2)), "query.level"),
            ("part_count_3", put(b.clone(), 24, &[3]), "query.part_count"),
            ("seeded_flag_0", put(b.clone(), 25, &[0]), "query.seeded"),
            (
                "residue_above_modulus",
                put(b.clone(), 26, &[0xff; 6]),
                "query.c0.limb[0][0]",
            ),
            ("missing_seed", b[..n - 1].to_vec(), "query.seed"),
        ],
        // classes @16, step @20, the LWE ciphertext (b, a) @28.
        "tree_label" => vec![
            ("classes_1", put(b.clone(), 16, &u32le(1)), "label.classes"),
            (
                "step_nan",
                put(b.clone(), 20, &f64::NAN.to_le_bytes()),
                "label.step",
            ),
            (
                "step_below_1",
                put(b.clone(), 20, &0.5f64.to_le_bytes()),
                "label.step",
            ),
            (
                "step_times_classes_above_q",
                put(b.clone(), 20, &1e300f64.to_le_bytes()),
                "label.step",
            ),
            (
                "b_above_modulus",
                put(b.clone(), 28, &[0xff; 6]),
                "lwe_ciphertext.b[0]",
            ),
            ("last_byte_missing", b[..n - 1].to_vec(), "lwe_ciphertext.a"),
        ],
        _ => vec![],
    });
    out
}

fn kind_of(file: &str, samples: &[Sample]) -> ObjectKind {
    let name = file.split("__").next().unwrap();
    samples.iter().find(|s| s.name == name).unwrap().kind
}

#[test]
fn committed_corpus_fails_on_the_named_field() {
    let ctxs = SampleContexts::new().unwrap();
    let all = samples(&ctxs, CORPUS_SEED).unwrap();
    if std::env::var_os("RNSFHE_WRITE_CORPUS").is_some() {
        let dir = corpus_dir(FORMAT_VERSION);
        std::fs::create_dir_all(&dir).unwrap();
        let mut manifest = String::new();
        for s in &all {
            for (file, bytes, field) in corruptions(s, &ctxs) {
                std::fs::write(dir.join(&file), bytes).unwrap();
                manifest.push_str(&format!("{file} {field}\n"));
            }
        }
        std::fs::write(dir.join("EXPECTED"), manifest).unwrap();
    }
    for version in MIN_READ_VERSION..=FORMAT_VERSION {
        let dir = corpus_dir(version);
        let manifest = std::fs::read_to_string(dir.join("EXPECTED")).unwrap();
        let mut checked = 0;
        for line in manifest.lines() {
            let (file, field) = line.split_once(' ').unwrap();
            let bytes = std::fs::read(dir.join(file)).unwrap();
            let err = decode(kind_of(file, &all), &bytes, &ctxs)
                .expect_err(&format!("v{version}/{file} must not load"));
            assert_eq!(err.field, field, "v{version}/{file}: {err}");
            // The message names the field and the offset.
            assert!(err
                .to_string()
                .contains(&format!("`{field}` at byte {}", err.offset)));
            checked += 1;
        }
        assert!(checked >= 50, "v{version}: only {checked} corpus entries");
    }
}

#[test]
fn every_truncation_is_an_error() {
    let ctxs = SampleContexts::new().unwrap();
    for s in samples(&ctxs, CORPUS_SEED).unwrap() {
        // Every prefix of small objects; for large ones every prefix up to 256 bytes, then a stride.
        let n = s.bytes.len();
        // (About 256 positions more for the PEGASUS keys' megabyte: each sealed cut parses up to it.)
        let stride = match n {
            0..=4096 => 1,
            4097..=131_072 => 97,
            _ => n / 256,
        };
        for k in (0..n).filter(|&k| k < 256 || k % stride == 0) {
            // As it is: the digest no longer matches (or is cut), or the header is cut.
            let err = decode(s.kind, &s.bytes[..k], &ctxs)
                .expect_err(&format!("{} truncated to {k} bytes", s.name));
            assert!(
                err.field == "digest" || k < 6,
                "{} truncated to {k}: {err}",
                s.name
            );
            // Sealed again: the reader runs out of bytes inside a field.
            let body = body(&s.bytes);
            if k < body.len() {
                let err = decode(s.kind, &seal(&body[..k]), &ctxs)
                    .expect_err(&format!("{} cut to {k} bytes and sealed", s.name));
                assert!(
                    matches!(err.kind, DecodeErrorKind::Truncated) || k < 16,
                    "{} cut to {k} and sealed: {err}",
                    s.name
                );
            }
        }
        decode(s.kind, &s.bytes, &ctxs).unwrap();
    }
}

#[test]
fn every_changed_byte_is_a_digest_error() {
    // Whatever byte changes after the version field, the digest refuses the object before anything
    // is parsed: scale, Galois element and in-range residue flips included.
    let ctxs = SampleContexts::new().unwrap();
    for s in samples(&ctxs, CORPUS_SEED).unwrap() {
        let n = s.bytes.len();
        let stride = match n {
            0..=4096 => 1,
            4097..=131_072 => 61,
            _ => n / 512,
        };
        for at in (6..n).filter(|&at| at < 512 || at % stride == 0 || at + 40 > n) {
            for bit in [0, 7] {
                let mut b = s.bytes.clone();
                b[at] ^= 1 << bit;
                let err = decode(s.kind, &b, &ctxs)
                    .expect_err(&format!("{}: byte {at} bit {bit} flipped loads", s.name));
                assert_eq!(err.field, "digest", "{} byte {at}: {err}", s.name);
                assert!(
                    matches!(err.kind, DecodeErrorKind::DigestMismatch { keyed: false }),
                    "{err}"
                );
            }
        }
    }
}

#[test]
fn byte_flips_never_panic_and_header_flips_are_refused() {
    let ctxs = SampleContexts::new().unwrap();
    let mut state = 0x243f_6a88_85a3_08d3u64;
    for s in samples(&ctxs, CORPUS_SEED).unwrap() {
        for at in 0..s.bytes.len().min(64) {
            let mut b = s.bytes.clone();
            b[at] ^= 0x80;
            let r = decode(s.kind, &b, &ctxs);
            if at < 16 {
                assert!(
                    r.is_err(),
                    "{}: header byte {at} flipped still loads",
                    s.name
                );
            }
        }
        for _ in 0..200 {
            // xorshift: deterministic positions over the whole object.
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let at = (state % s.bytes.len() as u64) as usize;
            let mut b = s.bytes.clone();
            b[at] ^= 1 << (state >> 61);
            let _ = decode_any(&b, &ctxs);
        }
    }
}

#[test]
fn resealed_edits_never_panic_and_header_edits_are_refused() {
    // The shared hostile helper on every sample: truncations, a trailing byte, unsealed flips, and
    // resealed edits of lengths, counts and codes that reach each payload's validation.
    let ctxs = SampleContexts::new().unwrap();
    let budget = HostileBudget {
        cuts: 64,
        flips: 32,
        patches: 200,
    };
    let mut refused = 0;
    for s in samples(&ctxs, CORPUS_SEED).unwrap() {
        refused += hostile(&s.bytes, budget, |b| decode(s.kind, b, &ctxs).is_ok())
            .unwrap_or_else(|e| panic!("{}: {e}", s.name));
    }
    assert!(refused > 5000, "{refused} refusals");
}

/// Replays every file under `fuzz/corpus/<target>/` through that target's entry point.
fn replay_corpora(root: &Path, ctxs: &SampleContexts) -> usize {
    let mut count = 0;
    for (target, _) in FUZZ_TARGETS {
        let Ok(entries) = std::fs::read_dir(root.join(target)) else {
            continue;
        };
        for e in entries {
            let path = e.unwrap().path();
            if path.is_file() {
                let _ = fuzz_input(target, &std::fs::read(&path).unwrap(), ctxs);
                count += 1;
            }
        }
    }
    count
}

#[test]
fn fuzz_corpora_replay_without_panics() {
    let ctxs = SampleContexts::new().unwrap();
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/corpus");
    let replayed = replay_corpora(&root, &ctxs);
    eprintln!("replayed {replayed} fuzz corpus inputs");
    // The seeds decode through their target's entry point.
    for (target, _) in FUZZ_TARGETS {
        for seed in fuzz_seeds(target, &ctxs).unwrap() {
            assert!(
                fuzz_input(target, &seed, &ctxs),
                "{target} seed does not load"
            );
        }
    }
}
