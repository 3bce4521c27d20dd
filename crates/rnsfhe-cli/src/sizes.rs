//! `rnsfhe sizes`: the wire size of every object of every CKKS preset, of the BFV presets of HPS
//! Table 3, of the PEGASUS keys (beside PEGASUS Section VI.A) and of every key of the PEGASUS pipeline
//! presets, with public `a` polynomials stored as seeds (the default) and expanded, measured on real
//! objects (keys generated, a vector encrypted).

use rnsfhe_ckks::{
    CkksContext, CkksEncryptor, Csprng, KeyGenerator, Preset, PublicRandomness, Serializable,
};

use rnsfhe_bfv::BfvPreset;

use rnsfhe_bench::markdown_table;

/// The largest BFV ring degree measured. `T2Depth100` (`N = 2^17`, 38 ciphertext primes, CRT
/// relinearization) is skipped for memory, not time: each of its keys holds `2 x 38` polynomials of 38
/// limbs (3 GiB as words), about 10 GiB at the peak with the expanded bytes of two keys, on a machine
/// shared with other work. `T2Depth50` (`N = 2^16`) runs in a few seconds.
const BFV_MAX_MEASURED_N: usize = 1 << 16;

/// A byte count in KiB or MiB.
fn human(bytes: u64) -> String {
    let b = bytes as f64;
    if b >= 1024.0 * 1024.0 {
        format!("{:.2} MiB", b / (1024.0 * 1024.0))
    } else {
        format!("{:.1} KiB", b / 1024.0)
    }
}

/// `seeded / expanded (ratio)` for one object (sizes computed without writing the bytes; the wire tests
/// check that they are the lengths written).
fn pair(object: &impl Serializable) -> (String, f64) {
    let seeded = object.serialized_size();
    let expanded = object.serialized_size_with(PublicRandomness::Expanded);
    let ratio = seeded as f64 / expanded as f64;
    (
        format!("{} / {} ({ratio:.2})", human(seeded), human(expanded)),
        ratio,
    )
}

/// Generates keys and a ciphertext for every CKKS and BFV preset and prints their sizes as markdown
/// tables.
///
/// Errors: context or key-generation errors.
pub fn run() -> anyhow::Result<()> {
    let mut rows = Vec::new();
    let mut rng = Csprng::from_os()?;
    for preset in Preset::ALL {
        let ctx = CkksContext::new(preset.params())?;
        let kg = KeyGenerator::new(&ctx, &mut rng)?;
        let pk = kg.public_key(&mut rng)?;
        let rk = kg.relin_key(&mut rng)?;
        let gk = kg.galois_keys(&[1], false, &mut rng)?;
        let enc = CkksEncryptor::with_secret_key(&ctx, kg.secret_key())?;
        let values = vec![0.5; ctx.max_slots()];
        let seeded_ct = enc.encrypt_seeded(&values, &mut rng)?;
        let ct = seeded_ct.expand()?;
        rows.push(vec![
            format!("{preset:?}"),
            format!("2^{}", ctx.params().log_n),
            format!("{:.0}", ctx.log_qp()),
            pair(&seeded_ct).0,
            human(ct.serialized_size()),
            pair(&pk).0,
            pair(&rk).0,
            pair(&gk).0,
            human(kg.secret_key().secret_serialized_size()),
        ]);
    }
    println!(
        "## Wire sizes (format v{}): seeded / expanded (ratio)\n",
        rnsfhe_math::wire::FORMAT_VERSION
    );
    print!(
        "{}",
        markdown_table(
            &[
                "preset",
                "N",
                "log QP",
                "fresh ciphertext (secret-key, seeded / expanded)",
                "ciphertext after an operation",
                "public key",
                "relinearization key",
                "Galois key (one rotation)",
                "secret key",
            ],
            &rows
        )
    );
    println!(
        "\nResidues are packed at their modulus' bit width. A ciphertext after any operation has no seed \
         (its second part is no longer uniform from a seed); public-key ciphertexts never have one."
    );
    bootstrapping_table(&mut rng)?;
    bfv_table(&mut rng)?;
    pegasus_table(&mut rng)?;
    pipeline_table(&mut rng)?;
    tree_table(&mut rng)?;
    pipeline_object_table(&mut rng)
}

/// The bootstrapping presets as a user makes their keys: the preset's own dense uniform ternary secret
/// with the default sparse-secret encapsulation (`rnsfhe bench ckks-bootstrap` runs the presets under a
/// sparse main secret instead, its rows below them).
const BOOTSTRAP_PRESETS: [(&str, u32); 3] = [
    ("BootTestN15", 15),
    ("Boot128N16", 16),
    ("Boot128N16Precise", 16),
];

/// The keys of the bootstrapping presets ([`BOOTSTRAP_PRESETS`]) and of the set-ups of `rnsfhe bench
/// ckks-bootstrap`: the Galois keys of `KeyGenerator::bootstrapping_keys` (one key measured, all of
/// them of the same shape, times their count) and the two sparse-secret encapsulation keys (measured:
/// the serialized size of their wire object, header, weight and digest included). Each set-up builds
/// its bootstrapper (the encoded DFT matrices: about 3 GB at `N = 2^16`) and one key, one at a time.
fn bootstrapping_table(rng: &mut Csprng) -> anyhow::Result<()> {
    use rnsfhe_bench::ckks_bootstrap::{choose_chain, setups, BootstrapSetup};
    let presets = BOOTSTRAP_PRESETS.iter().map(|&(preset, log_n)| {
        let setup = BootstrapSetup {
            log_n,
            slots: 1 << (log_n - 1),
            secret: "ternary".into(),
            preset: Some(preset.into()),
            levels_after: None,
            ..BootstrapSetup::quick()
        };
        (
            format!("{preset} preset (dense ternary secret, as users make keys)"),
            setup,
        )
    });
    let bench = setups(false, &[])
        .into_iter()
        .map(|(name, setup, _)| (name, setup));
    let mut rows = Vec::new();
    for (name, setup) in presets.chain(bench) {
        let (ctx, btp, info) = choose_chain(&setup)?;
        let kg = KeyGenerator::new(&ctx, rng)?;
        // The conjugation key: one key switching key over QP, as every Galois key of the set.
        let one = kg.galois_keys_with_elements(&[], true, &[], rng)?;
        let count = btp.galois_elements().len() as u64;
        let per_key = |r| one.serialized_size_with(r);
        let encapsulation = kg.encapsulation_keys(&btp, rng)?;
        let sizes = |f: &dyn Fn(PublicRandomness) -> u64| {
            format!(
                "{} / {}",
                human(f(PublicRandomness::Seeded)),
                human(f(PublicRandomness::Expanded))
            )
        };
        rows.push(vec![
            name,
            format!("2^{}", info.log_n),
            format!("{:.0}", info.log_qp),
            info.sparse_secret.map_or("none".into(), |h| h.to_string()),
            count.to_string(),
            sizes(&per_key),
            sizes(&|r| count * per_key(r)),
            encapsulation.map_or("-".into(), |e| sizes(&|r| e.serialized_size_with(r))),
        ]);
    }
    println!(
        "\n## CKKS bootstrapping keys (the presets, then the set-ups of `rnsfhe bench ckks-bootstrap`): \
         seeded / expanded\n"
    );
    print!(
        "{}",
        markdown_table(
            &[
                "set-up",
                "N",
                "log QP",
                "sparse secret h",
                "Galois keys",
                "one Galois key",
                "all Galois keys",
                "encapsulation keys (to sparse + back)",
            ],
            &rows
        )
    );
    println!(
        "\nThe relinearization key (above, per preset) comes on top. The encapsulation keys are one \
         wire object (`SparseEncapsulation::to_bytes`); with the Galois keys they travel as \
         `BootstrappingKeys::to_bytes`."
    );
    Ok(())
}

/// The messages of private decision-tree evaluation (PEGASUS Section V.B), from their serialized
/// forms: parameters and server key once, then per prediction one query up (a seeded RLWE ciphertext
/// of degree `n_lwe`) and one label down (an LWE ciphertext of dimension `n_lwe`). The paper: 16.89 KB
/// both ways (both polynomials of the query and the answer, `3 x 1024 x 45` bits).
fn tree_table(rng: &mut Csprng) -> anyhow::Result<()> {
    use rnsfhe_apps::decision_tree::{
        DecisionTree, FeatureScaling, Node, TreeClient, TreeParams, TreeServer,
    };
    use rnsfhe_lwe::PegasusPreset;
    use std::sync::Arc;
    let mut rows = Vec::new();
    for preset in [
        PegasusPreset::InsecureTest,
        PegasusPreset::PegasusTable4,
        PegasusPreset::Secure128,
    ] {
        let params = TreeParams::new(preset)?.allowing_insecure();
        let (client, key) = TreeClient::generate(params, rng)?;
        let key_sizes = pair(&key).0;
        // A stump: the messages' sizes do not depend on the tree.
        let tree = DecisionTree::new(
            vec![
                Node::Internal {
                    feature: 0,
                    threshold: 0.5,
                    left: 1,
                    right: 2,
                },
                Node::Leaf { label: 0 },
                Node::Leaf { label: 1 },
            ],
            1,
            2,
        )?;
        let scaling = FeatureScaling::linear(&[0.0], &[1.0])?;
        let query = client.encrypt(&scaling, &[0.25], rng)?;
        let server = TreeServer::new(tree, scaling, Arc::new(key))?;
        let label = server.evaluate(&query, rng)?;
        let (up, down) = (query.wire_size(), label.wire_size());
        // The bytes written are what wire_size announces.
        anyhow::ensure!(
            up == query.to_bytes().len() as u64 && down == label.to_bytes().len() as u64
        );
        rows.push(vec![
            format!("{preset:?}"),
            format!("{}", params.lwe.lwe_dimension),
            format!("{:.0}", (params.modulus() as f64).log2()),
            format!("{} B", params.serialized_size()),
            key_sizes,
            format!("{up} B"),
            format!("{down} B"),
            format!(
                "{:.2} KB{}",
                (up + down) as f64 / 1000.0,
                if preset == PegasusPreset::PegasusTable4 {
                    " (paper 16.89 KB)"
                } else {
                    ""
                }
            ),
        ]);
    }
    println!("\n## Private decision trees (PEGASUS Section V.B): the serialized messages\n");
    print!(
        "{}",
        markdown_table(
            &[
                "preset",
                "n_lwe",
                "log q",
                "parameters",
                "server key: seeded / expanded (ratio)",
                "query (up)",
                "label (down)",
                "per prediction",
            ],
            &rows
        )
    );
    println!(
        "\nEvery size is the length of the object's bytes (header, payload, 32-byte digest). The query is \
         one polynomial of degree n_lwe over q and the 32-byte seed of its uniform part, the label an LWE \
         ciphertext (b and a over q) with its class count and step; the paper's 16.89 KB counts both \
         polynomials of the query."
    );
    Ok(())
}

/// The whole key set of a pipeline as one object (`PegasusKeys::to_bytes`), at the small test set
/// only: the Table IV sets' components are in the table above (their full set takes gigabytes of
/// memory to generate).
fn pipeline_object_table(rng: &mut Csprng) -> anyhow::Result<()> {
    use rnsfhe_pegasus::{
        DimensionSwitch, PegasusKeys, PipelineOptions, PipelinePreset, Repacking,
    };
    let params = PipelinePreset::InsecureTest.params()?;
    let kg = KeyGenerator::new(&params.ckks, rng)?;
    let mut rows = Vec::new();
    for (repacking, switch) in [
        (Repacking::RingPacking, DimensionSwitch::WholeCiphertext),
        (Repacking::LinearTransform, DimensionSwitch::PerCiphertext),
    ] {
        let options = PipelineOptions {
            repacking,
            dimension_switch: switch,
            allow_insecure: true,
            ..PipelineOptions::new(params.ckks.max_slots())
        };
        let (keys, _) = PegasusKeys::generate(&params, &options, &kg, rng)?;
        rows.push(vec![
            format!("{repacking:?} / {switch:?}"),
            format!("{} B", params.serialized_size()),
            format!("{} B", options.serialized_size()),
            pair_of(
                keys.serialized_size(),
                keys.serialized_size_with(PublicRandomness::Expanded),
            ),
        ]);
    }
    println!(
        "\n## PEGASUS pipeline as objects (InsecureTest, N = 2^11, all slots): seeded / expanded (ratio)\n"
    );
    print!(
        "{}",
        markdown_table(
            &[
                "repacking / dimension switch",
                "parameters",
                "options",
                "keys (one object)"
            ],
            &rows
        )
    );
    Ok(())
}

/// `seeded / expanded (ratio)` from the two sizes of an object that is not [`Serializable`] itself.
fn pair_of(seeded: u64, expanded: u64) -> String {
    format!(
        "{} / {} ({:.2})",
        human(seeded),
        human(expanded),
        seeded as f64 / expanded as f64
    )
}

/// The number of values the rotation-key counts of the pipeline table are given for (PEGASUS Table V's
/// largest `l`).
const PIPELINE_SLOTS: usize = 1 << 12;

/// The keys of every PEGASUS pipeline preset (`PipelinePreset::ALL`): relinearization and rotation keys
/// (how many the pipeline makes for [`PIPELINE_SLOTS`] values by each repacking path), the dimension
/// switch by each method, the blind-rotation key, the repacking key of the linear-transform path (one
/// ciphertext: PEGASUS Table I, about 12 MB at `N = 2^16`) and the keys of ring packing.
fn pipeline_table(rng: &mut Csprng) -> anyhow::Result<()> {
    use rnsfhe_bench::pegasus_pipeline::{key_switching_key_bytes, pipeline_galois_key_count};
    use rnsfhe_lwe::{BlindRotationKey, LweDimension, LweSecretKey};
    use rnsfhe_pegasus::{
        DimensionSwitch, DimensionSwitchKeys, PipelinePreset, Repacking, RepackingKey,
        RingPackingKey,
    };
    let mut rows = Vec::new();
    for preset in PipelinePreset::ALL {
        let params = preset.params()?;
        let ctx = &params.ckks;
        let lwe = &params.lwe;
        // The pipeline's opt-in: every key of Secure128 is checked, the other sets are insecure.
        let insecure = preset != PipelinePreset::Secure128;
        let kg = KeyGenerator::new(ctx, rng)?;
        let sk = kg.secret_key();
        let rk = kg.relin_key(rng)?;
        let gk = kg.galois_keys(&[1], false, rng)?;
        let one_rotation = gk.serialized_size_with(PublicRandomness::Expanded);
        let slots = PIPELINE_SLOTS.min(ctx.max_slots());
        let count = |path| pipeline_galois_key_count(&params, slots, path);
        let (ring_count, lt_count) = (
            count(Repacking::RingPacking)?,
            count(Repacking::LinearTransform)?,
        );
        let in_memory = key_switching_key_bytes(ctx);
        let gib = |b: u64| b as f64 / (1u64 << 30) as f64;
        let key_total = |count: usize| {
            format!(
                "{count} keys, {:.2} GiB ({:.2} GiB in memory)",
                gib(count as u64 * one_rotation),
                gib(count as u64 * in_memory)
            )
        };
        let lwe_key =
            LweSecretKey::generate(LweDimension::new(lwe.lwe_dimension)?, lwe.lwe_secret, rng)?;
        let lut_ctx = if insecure {
            lwe.lut.context_allowing_insecure()?
        } else {
            lwe.lut.context()?
        };
        let ring_sk = rnsfhe_core::SecretKey::generate(&lut_ctx, rng)?;
        let lut_ring = LweSecretKey::from_ring_key(&ring_sk)?;
        let switches = if insecure {
            DimensionSwitchKeys::generate_allowing_insecure(
                ctx,
                sk,
                &lwe_key,
                lwe.key_switch,
                &DimensionSwitch::ALL,
                rng,
            )?
        } else {
            DimensionSwitchKeys::generate(
                ctx,
                sk,
                &lwe_key,
                lwe.key_switch,
                &DimensionSwitch::ALL,
                rng,
            )?
        };
        let per_ciphertext = switches
            .per_ciphertext()
            .map_or_else(|| "-".to_string(), |k| pair(k).0);
        let whole = switches.whole_ciphertext().map_or_else(
            || "-".to_string(),
            |k| {
                let g = k.gadget_ciphertext();
                pair_of(
                    g.wire_size(PublicRandomness::Seeded),
                    g.wire_size(PublicRandomness::Expanded),
                )
            },
        );
        drop(switches);
        let ek =
            BlindRotationKey::generate_with(lwe.blind_rotation, &lut_ctx, &ring_sk, &lwe_key, rng)?;
        let ek_size = pair(&ek).0;
        drop(ek);
        // The repacking key's scale does not change its size: the level's default.
        let top = ctx.max_level();
        let repacking = RepackingKey::generate(ctx, sk, &lwe_key, ctx.level_scale(top)?, rng)?;
        let packing = if insecure {
            RingPackingKey::generate_allowing_insecure(ctx, sk, &lut_ring, rng)?
        } else {
            RingPackingKey::generate(ctx, sk, &lut_ring, rng)?
        };
        let switching = packing.switching_key();
        let galois = packing.galois_keys();
        let packing_size = |r| switching.wire_size(r) + galois.serialized_size_with(r);
        rows.push(vec![
            format!("{preset:?}"),
            pair(&rk).0,
            pair(&gk).0,
            format!("{} / {}", key_total(ring_count), key_total(lt_count)),
            per_ciphertext,
            whole,
            ek_size,
            format!(
                "{}{}",
                human(repacking.ciphertext().serialized_size()),
                if ctx.n() == 1 << 16 {
                    " (PEGASUS Table I: about 12 MB)"
                } else {
                    ""
                }
            ),
            format!(
                "{} ({} automorphisms)",
                pair_of(
                    packing_size(PublicRandomness::Seeded),
                    packing_size(PublicRandomness::Expanded)
                ),
                galois.elements().len()
            ),
        ]);
    }
    println!("\n## PEGASUS pipeline keys (`PipelinePreset`): seeded / expanded (ratio)\n");
    print!(
        "{}",
        markdown_table(
            &[
                "preset",
                "relinearization key",
                "rotation key (one)",
                "rotation keys for 2^12 values, expanded: ring packing / LT",
                "dimension switch, per ciphertext (Fig. 9)",
                "dimension switch, whole ciphertext",
                "blind-rotation key",
                "repacking key (LT path)",
                "ring-packing keys",
            ],
            &rows
        )
    );
    println!(
        "\nThe rotation keys are those the pipeline makes with the default options for 2^12 values \
         (InsecureTest: its 2^10 slots): SlotsToCoeffs on 2 levels, then CoeffsToSlots on 3 levels, the \
         conjugation and the subring trace (ring packing), or the rotations of Fig. 5 for every batch \
         size up to that count (LT). They dominate the memory of the pipeline at N = 2^16: each holds \
         one pair of polynomials over QP per digit. The repacking key is one CKKS ciphertext at the top \
         level, kept whole (`RepackingKey` holds a `Ciphertext`; a seeded form would halve it); the \
         ring-packing keys live over q_0 P alone (one limb and one special prime)."
    );
    Ok(())
}

/// The keys of the PEGASUS parameter sets beside the paper's Table IV sizes (PEGASUS Section VI.A: SwK
/// 5.0 MB for `N -> n_lwe`, 315 KB for `n -> n_lwe`, EK 420 MB): the two switching keys and the
/// blind-rotation key of each algorithm the set is measured with.
fn pegasus_table(rng: &mut Csprng) -> anyhow::Result<()> {
    use rnsfhe_core::SecretKey;
    use rnsfhe_lwe::{
        BlindRotation, BlindRotationKey, LweDimension, LweSecretDistribution, LweSecretKey,
        LweSwitchingKey, PegasusPreset,
    };
    let mut rows = Vec::new();
    let sets = [
        (PegasusPreset::PegasusTable4, BlindRotation::Ternary),
        (PegasusPreset::PegasusTable4, BlindRotation::Lmkcdey),
        (PegasusPreset::Secure128, BlindRotation::Binary),
    ];
    for (preset, algorithm) in sets {
        let p = preset.params()?;
        let ctx = p.lut.context_allowing_insecure()?;
        let ring_sk = SecretKey::generate(&ctx, rng)?;
        let lwe_sk =
            LweSecretKey::generate(LweDimension::new(p.lwe_dimension)?, p.lwe_secret, rng)?;
        let ckks_sk = LweSecretKey::generate(
            LweDimension::new(1 << p.ckks_log_n)?,
            LweSecretDistribution::UniformTernary,
            rng,
        )?;
        let ring_as_lwe = LweSecretKey::from_ring_key(&ring_sk)?;
        let (paper_big, paper_small, paper_ek) = if preset == PegasusPreset::PegasusTable4 {
            ("5.0 MB", "315 KB", "420 MB")
        } else {
            ("-", "-", "-")
        };
        let swk_big = if algorithm == BlindRotation::Lmkcdey {
            "(as above)".to_string()
        } else {
            let key =
                LweSwitchingKey::generate_allowing_insecure(&ckks_sk, &lwe_sk, p.key_switch, rng)?;
            format!("{} (paper {paper_big})", pair(&key).0)
        };
        drop(ckks_sk);
        let swk_small =
            LweSwitchingKey::generate_allowing_insecure(&ring_as_lwe, &lwe_sk, p.key_switch, rng)?;
        let ek = BlindRotationKey::generate_with(algorithm, &ctx, &ring_sk, &lwe_sk, rng)?;
        rows.push(vec![
            format!("{preset:?}"),
            format!("{algorithm:?}"),
            swk_big,
            format!("{} (paper {paper_small})", pair(&swk_small).0),
            format!("{} (paper {paper_ek})", pair(&ek).0),
        ]);
    }
    println!("\n## PEGASUS (LWE) keys: seeded / expanded (ratio), beside PEGASUS Section VI.A\n");
    print!(
        "{}",
        markdown_table(
            &[
                "preset",
                "blind rotation",
                "SwK N -> n_lwe",
                "SwK n -> n_lwe",
                "EK (blind-rotation key)",
            ],
            &rows
        )
    );
    println!(
        "\nThe expanded keys have the paper's sizes (its MB are MiB: 420 MiB for EK); the seeded ones, \
         which store a 32-byte seed for every uniform part, half. Switching keys are blocks of gadget \
         ciphertexts over q_ks (q0 for Table IV, a 26-bit prime for Secure128), the evaluation key RGSW \
         ciphertexts over q0 q' (two per coefficient for the ternary algorithm, one for binary and \
         LMKCDEY, which adds its automorphism keys)."
    );
    Ok(())
}

/// The BFV presets of HPS Table 3 (`t = 2`, coefficient encoding): keys generated, `N` bits encrypted
/// with the secret key.
fn bfv_table(rng: &mut Csprng) -> anyhow::Result<()> {
    use rnsfhe_bfv::{BfvContext, CoeffEncoder, Encryptor, KeyGenerator};
    let mut rows = Vec::new();
    let mut skipped = Vec::new();
    for preset in BfvPreset::ALL {
        let ctx = BfvContext::new(preset.params()?)?;
        if ctx.n() > BFV_MAX_MEASURED_N {
            skipped.push(format!("{preset:?}"));
            continue;
        }
        let kg = KeyGenerator::new(&ctx, rng)?;
        let pk = kg.public_key(rng)?;
        let rk = kg.relin_key(rng)?;
        let gk = kg.galois_keys(&[1], false, rng)?;
        let bits: Vec<u64> = (0..ctx.n() as u64).map(|i| i % 2).collect();
        let pt = CoeffEncoder::new(&ctx).encode_u64(&bits)?;
        let seeded_ct =
            Encryptor::with_secret_key(&ctx, kg.secret_key())?.encrypt_seeded(&pt, rng)?;
        let ct = seeded_ct.expand()?;
        rows.push(vec![
            format!("{preset:?}"),
            format!("2^{}", ctx.params().log_n),
            format!("{:.0}", ctx.log_q()),
            format!("{}", ctx.relin_components()),
            pair(&seeded_ct).0,
            human(ct.serialized_size()),
            pair(&pk).0,
            pair(&rk).0,
            pair(&gk).0,
            human(pt.serialized_size()),
            human(kg.secret_key().secret_serialized_size()),
        ]);
    }
    println!("\n## BFV (HPS Table 3 presets, t = 2): seeded / expanded (ratio)\n");
    print!(
        "{}",
        markdown_table(
            &[
                "preset",
                "N",
                "log Q",
                "relin. pairs",
                "fresh ciphertext (secret-key, seeded / expanded)",
                "ciphertext after an operation",
                "public key",
                "relinearization key",
                "Galois key (one rotation)",
                "plaintext",
                "secret key",
            ],
            &rows
        )
    );
    println!(
        "\nBFV ciphertexts live over Q only (P is internal to multiplication), keys are HPS key-switching \
         keys over Q with one pair per residue and relinearization digit (base 2^30 up to depth 10). \
         Plaintext coefficients are packed at the bit width of the largest one (1 bit for t = 2). \
         Skipped for memory (keys of 2 x 38 polynomials of 38 limbs at N = 2^17, about 10 GiB at the \
         peak): {}.",
        if skipped.is_empty() { "none".to_string() } else { skipped.join(", ") }
    );
    Ok(())
}
