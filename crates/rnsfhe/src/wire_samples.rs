//! Deterministic samples of every serializable object and one entry point that loads bytes as any kind:
//! the common ground of the format fixtures (`tests/fixtures/`), the corrupted-input corpus
//! (`tests/wire_corpus.rs`) and the fuzz targets (`fuzz/`).
//!
//! The samples (CKKS and BFV at `N = 2^10`; LWE objects of dimension 16 over a look-up-table ring of
//! degree 32; the PEGASUS pipeline's parameters, options and keys over a CKKS ring of degree `2^8`; the
//! decision tree's objects with `n_lwe = 16` and tables of degree `2^8`) use tiny, **insecure** parameters and a fixed seed
//! ([`Csprng::insecure_from_seed_for_tests`]) so that they are small and reproducible; they exist to
//! exercise the decoders, never to protect data.

use std::sync::Arc;

use rnsfhe_bfv::{BatchEncoder, BfvContext, BfvParams};
use rnsfhe_ckks::{
    BootstrappingKeys, CkksContext, CkksEncryptor, CkksParams, Csprng, KeyGenerator,
    RescalingPolicy, SparseEncapsulation,
};
use rnsfhe_core::serialization::LoadLimits;

/// The kinds of every crate under one name (the samples cover all of them).
mod kinds {
    pub use rnsfhe_apps::decision_tree::serialization::kinds::*;
    pub use rnsfhe_bfv::serialization::kinds::*;
    pub use rnsfhe_ckks::serialization::kinds::*;
    pub use rnsfhe_core::serialization::kinds::*;
    pub use rnsfhe_lwe::serialization::kinds::*;
    pub use rnsfhe_pegasus::serialization::kinds::*;
}
use rnsfhe_apps::decision_tree::{
    DecisionTree, EncryptedLabel, EncryptedQuery, FeatureScaling, Node, TreeClient, TreeParams,
    TreeServer, TreeServerKey,
};
use rnsfhe_core::{
    ConversionMode, GaloisKeys, PublicKey, RelinKey, RlweContext, SecretDistribution, SecretKey,
};
use rnsfhe_lwe::serialization::secret_key_fingerprint;
use rnsfhe_lwe::{
    BlindRotation, BlindRotationKey, LookupTable, LutParams, LweCiphertext, LweDimension,
    LweKeySwitchParams, LweSecretDistribution, LweSecretKey, LweSpace, LweSwitchingKey,
    LweSwitchingKeyContext, PegasusParams,
};
use rnsfhe_math::primes::ntt_primes_of_bits;
use rnsfhe_math::sampling::DiscreteGaussian;
use rnsfhe_math::wire::{
    digest_of, peek_header, DecodeError, Deserializable, Integrity, ObjectKind, Serializable,
    WireFingerprint, DIGEST_LEN,
};
use rnsfhe_pegasus::{DimensionSwitch, PegasusKeys, PipelineOptions, PipelineParams, Repacking};

/// Why the samples could not be made: an error of the scheme that generated them (none is expected, the
/// parameters and seeds are fixed), or a fuzz target that does not exist.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SampleError {
    /// Building a CKKS context or generating a CKKS sample failed.
    #[error("CKKS sample: {0}")]
    Ckks(#[from] rnsfhe_ckks::Error),
    /// Building a BFV context or generating a BFV sample failed.
    #[error("BFV sample: {0}")]
    Bfv(#[from] rnsfhe_bfv::BfvError),
    /// Building the LWE samples' ring or generating an LWE sample failed.
    #[error("LWE sample: {0}")]
    Lwe(#[from] rnsfhe_lwe::LweError),
    /// The prime search of the LWE samples' moduli failed.
    #[error("LWE sample moduli: {0}")]
    Math(#[from] rnsfhe_math::Error),
    /// Building the PEGASUS samples' parameters or generating their keys failed.
    #[error("PEGASUS sample: {0}")]
    Pegasus(#[from] rnsfhe_pegasus::PegasusError),
    /// Building the decision-tree samples (parameters, keys, tree, query, label) failed.
    #[error("decision-tree sample: {0}")]
    Apps(#[from] rnsfhe_apps::Error),
    /// A hostile variant of an object loaded where it must be refused ([`hostile`]).
    #[error("hostile input loaded: {0}")]
    HostileLoaded(String),
    /// [`fuzz_seeds`] was asked for a target that is not in [`FUZZ_TARGETS`].
    #[error("unknown fuzz target {0}")]
    UnknownFuzzTarget(String),
}

/// The limits the samples load under: the defaults, with insecure parameters allowed (the samples'
/// parameters are tiny and insecure on purpose).
pub const SAMPLE_LIMITS: LoadLimits = LoadLimits::DEFAULT.allowing_insecure();

/// `body` (an object's header and payload) with its digest appended: what a writer makes of it. Tests
/// and fuzz targets change a payload and seal it again so that the change reaches the payload's
/// validation instead of stopping at the digest.
pub fn seal(body: &[u8]) -> Vec<u8> {
    [body, &digest_of(body, Integrity::Digest)[..]].concat()
}

/// The header and payload of a sealed object (its bytes without the digest).
pub fn body(bytes: &[u8]) -> &[u8] {
    &bytes[..bytes.len().saturating_sub(DIGEST_LEN as usize)]
}

/// The parameters of the CKKS samples: `N = 2^10`, two 30-bit scaling levels over a 40-bit `q_0`, one
/// 40-bit special prime, `dnum = 3` (one prime per digit), uniform ternary secret. Insecure (for tests only).
pub fn ckks_sample_params() -> CkksParams {
    CkksParams {
        log_n: 10,
        log_scale: 30,
        q0_bits: 40,
        levels: 2,
        bootstrap_primes: Vec::new(),
        special_primes: 1,
        special_bits: 40,
        dnum: 3,
        secret: SecretDistribution::Ternary,
        sigma: 3.2,
        conversion: ConversionMode::Fast,
        rescaling: RescalingPolicy::ExactScale,
        insecure_for_testing: true,
    }
}

/// The Hamming weight of the sample encapsulation keys' sparse secret (in the insecure `N = 2^10`
/// sample context, which lets any weight load).
pub const ENCAPSULATION_SAMPLE_WEIGHT: usize = 16;

/// The slot values encrypted and encoded by the samples.
pub const SAMPLE_VALUES: [f64; 4] = [0.5, -1.25, 2.0, 3.75];

/// The parameters of the BFV samples: `N = 2^10`, batching modulus `t = 65537`, two 40-bit ciphertext
/// primes and the auxiliary primes of [`BfvParams::with_bit_sizes`], relinearization by base-`2^20`
/// digits (so the key has `2 x 2` pairs and the digit path is exercised). Insecure (for tests only).
///
/// Errors: none expected (a deterministic prime search).
pub fn bfv_sample_params() -> Result<BfvParams, SampleError> {
    let mut params = BfvParams::with_bit_sizes(10, BFV_SAMPLE_T, 40, 2)?;
    params.relin_base_log = Some(20);
    params.insecure_for_testing = true;
    Ok(params)
}

/// The plaintext modulus of the BFV samples.
pub const BFV_SAMPLE_T: u64 = 65537;

/// The slot values encrypted and encoded by the BFV samples.
pub const BFV_SAMPLE_VALUES: [u64; 4] = [7, 0, 65536, 12345];

/// The row rotation the BFV Galois-key sample covers (with the column swap).
pub const BFV_SAMPLE_STEP: i64 = 1;

/// The look-up-table ring of the LWE samples: `n = 2^5`, `q_0` the first 45-bit prime `= 1 mod 64`, a
/// 60-bit special prime, `sigma = 3.2`, uniform ternary secret. Insecure (for tests only).
///
/// Errors: none expected (a deterministic prime search).
pub fn lwe_sample_lut_params() -> Result<LutParams, SampleError> {
    let q0 = ntt_primes_of_bits(45, 64, 1, &[])?[0];
    let special = ntt_primes_of_bits(60, 64, 1, &[q0])?[0];
    Ok(LutParams {
        log_n: 5,
        q0,
        special,
        sigma: 3.2,
        secret: SecretDistribution::Ternary,
    })
}

/// The LWE dimension of the LWE samples (their ciphertexts, LWE secret key, blind-rotation key, and the
/// target of their switching key).
pub const LWE_SAMPLE_DIMENSION: usize = 16;

/// The switching key of the LWE samples (from the ring key to the LWE key) over `q0`: base `2^7`, 7 digits,
/// `sigma = 3.2`.
pub fn lwe_sample_switching_params(q0: u64) -> LweKeySwitchParams {
    LweKeySwitchParams {
        modulus: q0,
        base_log: 7,
        digits: 7,
        sigma: 3.2,
    }
}

/// The message of the LWE ciphertext sample, encrypted as `round(LWE scale x message)`.
pub const LWE_SAMPLE_MESSAGE: f64 = 1.0;

/// The input and output scale of the LWE samples: `q_0 / 8` (so `|scale x m| < q_0 / 4` for `|m| < 2`).
pub fn lwe_sample_scale(q0: u64) -> f64 {
    q0 as f64 / 8.0
}

/// The function of the look-up-table sample: the sign (`1` for `x >= 0`, `-1` below), whose table
/// output is exact after rounding for inputs away from 0 and from the ends of the range.
pub fn lwe_sample_function(x: f64) -> f64 {
    if x >= 0.0 {
        1.0
    } else {
        -1.0
    }
}

/// The limits the PEGASUS and decision-tree parameters (and the client secret, which holds them) load
/// under in [`decode`]: [`SAMPLE_LIMITS`] with rings up to `2^11` and at most 8 primes. These readers
/// build their contexts (prime checks, NTT tables) as part of decoding, with no decode-only path like
/// the CKKS and BFV parameters' ([`CkksParams::from_bytes`]); the tighter limits keep a fuzzer from
/// spending its time building rings of degree `2^16`, and they are enforced by the readers themselves
/// (a larger set is a limit error, before anything is built).
pub const PEGASUS_SAMPLE_LIMITS: LoadLimits = LoadLimits {
    max_log_n: 11,
    max_moduli: 8,
    max_words: 8 << 11,
    allow_insecure: true,
};

/// The CKKS chain of the PEGASUS samples: `N = 2^10` (the smallest CKKS ring), a 45-bit `q_0` (the LWE side's modulus) under
/// three 40-bit scaling primes, two 50-bit special primes (as wide as a digit), `dnum = 2`, a uniform ternary secret (so that
/// the ring-packing keys include the sparse-secret encapsulation, PEGASUS Section IV.B's modulus raise
/// under a sparse secret). Insecure (for tests only).
///
/// The chain is long enough for every transform whose keys the pipeline makes (slots to coefficients
/// on one level, CoeffsToSlots on one level, the repacking key one level below the top), not for F_mod's
/// depth: the samples exist to exercise the decoders, and a chain that runs the pipeline (PEGASUS Table
/// IV's 16 primes, [`rnsfhe_pegasus::PipelinePreset::InsecureTest`] at `N = 2^11`) makes a 20 MB key
/// set, too large to be truncated at every byte (its hostile bytes are tested on their own, in
/// `tests/pegasus_wire.rs`).
pub fn pegasus_sample_ckks_params() -> CkksParams {
    CkksParams {
        log_n: 10,
        log_scale: 40,
        q0_bits: 45,
        levels: 3,
        bootstrap_primes: Vec::new(),
        special_primes: 2,
        special_bits: 50,
        dnum: 2,
        secret: SecretDistribution::Ternary,
        sigma: 3.2,
        conversion: ConversionMode::Fast,
        rescaling: RescalingPolicy::FixedNominalScale,
        insecure_for_testing: true,
    }
}

/// The LWE side of the PEGASUS samples: that of the decision-tree samples ([`tree_sample_params`]:
/// `n_lwe = 16`, binary keys, tables of degree `n = 2^8`, the smallest ring whose input margin fits
/// this key in the pipeline's check of PEGASUS Eq. (3)) for a CKKS ring of degree `2^10`; its `q_0` is
/// a placeholder that [`PipelineParams::new`] replaces by the CKKS chain's first prime. Insecure.
///
/// Errors: none expected (a deterministic prime search).
pub fn pegasus_sample_lwe_params() -> Result<PegasusParams, SampleError> {
    Ok(PegasusParams {
        ckks_log_n: 10,
        ..tree_sample_params()?.lwe
    })
}

/// The slot count of the PEGASUS samples' options.
pub const PEGASUS_SAMPLE_SLOTS: usize = 4;

/// The two option sets of the PEGASUS samples, one per key layout: ring packing after the
/// whole-ciphertext dimension switch, with sparse-secret encapsulation and the joint repacking's
/// rotations (layout bits 1, 2, 3 and 4), and PEGASUS Fig. 6's own path, the per-ciphertext switch and
/// the linear-transform repacking (bit 0). Both on one level of slots to coefficients and of
/// CoeffsToSlots, inputs in `[-8, 8]`, with the opt-in for insecure keys.
pub fn pegasus_sample_options() -> [PipelineOptions; 2] {
    let ring_packing = PipelineOptions {
        s2c_levels: 1,
        c2s_levels: 1,
        dimension_switch: DimensionSwitch::WholeCiphertext,
        repacking: Repacking::RingPacking,
        sparse_encapsulation: true,
        allow_insecure: true,
        ..PipelineOptions::new(PEGASUS_SAMPLE_SLOTS)
    };
    let linear = PipelineOptions {
        dimension_switch: DimensionSwitch::PerCiphertext,
        repacking: Repacking::LinearTransform,
        ..ring_packing
    };
    [ring_packing, linear]
}

/// What the PEGASUS samples load into: the pipeline's parameters and the two option sets of
/// [`pegasus_sample_options`].
#[derive(Clone, Debug)]
pub struct PegasusSampleContexts {
    /// The parameters ([`pegasus_sample_ckks_params`], [`pegasus_sample_lwe_params`]).
    pub params: PipelineParams,
    /// The options of the two key layouts.
    pub options: [PipelineOptions; 2],
}

impl PegasusSampleContexts {
    /// Builds the parameters (the CKKS context of degree `2^8`).
    ///
    /// Errors: none expected (the parameters are fixed).
    pub fn new() -> Result<Self, SampleError> {
        Ok(Self {
            params: PipelineParams::new(
                pegasus_sample_ckks_params(),
                pegasus_sample_lwe_params()?,
            )?,
            options: pegasus_sample_options(),
        })
    }

    /// The options whose keys carry `fingerprint` in their header ([`PegasusKeys::wire_fingerprint`]),
    /// or the first ones.
    pub fn options_for_keys(&self, fingerprint: u64) -> &PipelineOptions {
        self.options
            .iter()
            .find(|o| PegasusKeys::wire_fingerprint(&self.params, o) == fingerprint)
            .unwrap_or(&self.options[0])
    }
}

/// The parameters of the decision-tree samples (the first decision-tree fixtures'), with the writer's
/// opt-in for insecure keys: `n_lwe = 16` (uniform binary key), the switching key over `q_0` in base
/// `2^7` with 7 digits, tables in a ring of degree `n = 2^8` over `q_0` (the largest 45-bit prime `= 1
/// mod 2^9`) and a 60-bit `q'` (Hamming-weight-16 ring secret), binary blind rotation (one RGSW
/// ciphertext per key coefficient), `N = 2^8` in the fingerprint (a tree has no CKKS ring). The LWE
/// side of the PEGASUS samples too, for their CKKS ring ([`pegasus_sample_lwe_params`]). Insecure.
///
/// Errors: none expected (a deterministic prime search).
pub fn tree_sample_params() -> Result<TreeParams, SampleError> {
    let q0 = ntt_primes_of_bits(45, 512, 1, &[])?[0];
    let special = ntt_primes_of_bits(60, 512, 1, &[q0])?[0];
    let lwe = PegasusParams {
        ckks_log_n: 8,
        lwe_dimension: 16,
        lwe_secret: LweSecretDistribution::UniformBinary,
        key_switch: LweKeySwitchParams {
            modulus: q0,
            base_log: 7,
            digits: 7,
            sigma: 3.2,
        },
        lut: LutParams {
            log_n: 8,
            q0,
            special,
            sigma: 3.2,
            secret: SecretDistribution::HammingWeight(16),
        },
        blind_rotation: BlindRotation::Binary,
    };
    Ok(TreeParams {
        lwe,
        allow_insecure: true,
    })
}

/// The tree of the decision-tree samples, `x0 <= 0.5 ? 0 : (x1 <= 0.3 ? 1 : 2)` on two features in
/// `[0, 1]`, three classes.
///
/// Errors: none expected (a valid tree).
pub fn sample_tree() -> Result<DecisionTree, SampleError> {
    let nodes = vec![
        Node::Internal {
            feature: 0,
            threshold: 0.5,
            left: 1,
            right: 2,
        },
        Node::Leaf { label: 0 },
        Node::Internal {
            feature: 1,
            threshold: 0.3,
            left: 3,
            right: 4,
        },
        Node::Leaf { label: 1 },
        Node::Leaf { label: 2 },
    ];
    Ok(DecisionTree::new(nodes, 2, 3)?)
}

/// The features of the decision-tree samples' query (label [`TREE_SAMPLE_LABEL`] of [`sample_tree`]),
/// mapped to `[0, 1]` by [`sample_tree_scaling`].
pub const TREE_SAMPLE_QUERY: [f64; 2] = [0.8, 0.1];

/// The label the decision-tree samples' answer decrypts to.
pub const TREE_SAMPLE_LABEL: usize = 1;

/// The public feature scaling of the decision-tree samples: both features already in `[0, 1]`.
///
/// Errors: none expected.
pub fn sample_tree_scaling() -> Result<FeatureScaling, SampleError> {
    Ok(FeatureScaling::linear(&[0.0, 0.0], &[1.0, 1.0])?)
}

/// What the decision-tree samples load into: the parameters (server keys, client secrets), the query
/// ring (queries) and the labels' LWE space.
#[derive(Clone, Debug)]
pub struct TreeSampleContexts {
    /// The parameters ([`tree_sample_params`]).
    pub params: TreeParams,
    /// The ring of the queries (degree `n_lwe` over `q`).
    pub query: Arc<RlweContext>,
    /// The LWE space of the labels (dimension `n_lwe`, modulus `q`).
    pub labels: LweSpace,
}

impl TreeSampleContexts {
    /// Builds the query ring and the labels' space.
    ///
    /// Errors: none expected (the parameters are fixed).
    pub fn new() -> Result<Self, SampleError> {
        let params = tree_sample_params()?;
        Ok(Self {
            query: params.query_context()?,
            labels: LweSpace::new(
                LweDimension::new(params.lwe.lwe_dimension)?,
                params.modulus(),
            )?,
            params,
        })
    }
}

/// One sample object: a file-friendly name, its kind and its bytes.
#[derive(Clone, Debug)]
pub struct Sample {
    /// File-friendly name (`ckks_ciphertext`, ...).
    pub name: &'static str,
    /// The kind in its header.
    pub kind: ObjectKind,
    /// The serialized object.
    pub bytes: Vec<u8>,
}

/// The contexts the samples belong to, needed to load them.
#[derive(Clone, Debug)]
pub struct SampleContexts {
    /// The CKKS context of [`ckks_sample_params`].
    pub ckks: Arc<CkksContext>,
    /// The BFV context of [`bfv_sample_params`].
    pub bfv: Arc<BfvContext>,
    /// What the LWE samples load into.
    pub lwe: LweSampleContexts,
    /// What the PEGASUS pipeline's samples load into.
    pub pegasus: PegasusSampleContexts,
    /// What the decision-tree samples load into.
    pub tree: TreeSampleContexts,
}

/// What the LWE samples load into: the look-up-table ring ([`lwe_sample_lut_params`]: tables,
/// blind-rotation keys), the ciphertexts' space (dimension [`LWE_SAMPLE_DIMENSION`] modulo `q_0`) and
/// the switching keys' context (from the ring's dimension to [`LWE_SAMPLE_DIMENSION`]).
#[derive(Clone, Debug)]
pub struct LweSampleContexts {
    /// The look-up-table ring.
    pub ring: Arc<RlweContext>,
    /// The LWE ciphertexts' dimension and modulus.
    pub space: LweSpace,
    /// The switching keys' dimensions and parameters.
    pub switching: LweSwitchingKeyContext,
}

impl LweSampleContexts {
    /// Builds the contexts.
    ///
    /// Errors: none expected (the parameters are fixed).
    pub fn new() -> Result<Self, SampleError> {
        let lut = lwe_sample_lut_params()?;
        let ring = lut.context_allowing_insecure()?;
        let dimension = LweDimension::new(LWE_SAMPLE_DIMENSION)?;
        Ok(Self {
            space: LweSpace::new(dimension, lut.q0)?,
            switching: LweSwitchingKeyContext::new(
                LweDimension::new(ring.n())?,
                dimension,
                lwe_sample_switching_params(lut.q0),
            )?,
            ring,
        })
    }

    /// The dimension of the ring key seen as an LWE key (the look-up-table outputs' dimension).
    pub fn ring_dimension(&self) -> LweDimension {
        self.switching.from_dimension()
    }
}

impl SampleContexts {
    /// Builds the contexts.
    ///
    /// Errors: none expected (the parameters are fixed); context errors are passed through.
    pub fn new() -> Result<Self, SampleError> {
        Ok(Self {
            ckks: CkksContext::new(ckks_sample_params())?,
            bfv: BfvContext::new(bfv_sample_params()?)?,
            lwe: LweSampleContexts::new()?,
            pegasus: PegasusSampleContexts::new()?,
            tree: TreeSampleContexts::new()?,
        })
    }
}

/// Generates one sample of every kind from the fixed seed `seed`.
///
/// Errors: none expected; key generation or encryption errors are passed through.
pub fn samples(ctxs: &SampleContexts, seed: u8) -> Result<Vec<Sample>, SampleError> {
    let ctx = &ctxs.ckks;
    let mut rng = Csprng::insecure_from_seed_for_tests([seed; 32]);
    let kg = KeyGenerator::new(ctx, &mut rng)?;
    let keys = kg.generate_all(&[1], false, &mut rng)?;
    let enc = CkksEncryptor::with_secret_key(ctx, &keys.secret)?;
    let pt = ctx.encode_real(&SAMPLE_VALUES, 4, ctx.max_level())?;
    let ct = enc.encrypt(&SAMPLE_VALUES[..], &mut rng)?;
    let seeded = enc.encrypt_seeded(&SAMPLE_VALUES[..], &mut rng)?;
    // The bootstrapping keys (drawn after every earlier CKKS sample, whose bytes stay as they were):
    // the Galois keys above and an encapsulation of the sample weight.
    let encapsulation = Arc::new(SparseEncapsulation::generate(
        ctx,
        &keys.secret,
        ENCAPSULATION_SAMPLE_WEIGHT,
        true,
        &mut rng,
    )?);
    let bootstrapping = BootstrappingKeys {
        galois: Arc::new(keys.galois.clone()),
        encapsulation: Some(Arc::clone(&encapsulation)),
    };
    // The same chain with bootstrapping primes: the optional section of the parameters' payload.
    let upper = CkksContext::new(CkksParams {
        bootstrap_primes: vec![35, 40],
        dnum: 5,
        ..ckks_sample_params()
    })?;
    let sample = |name, kind, bytes| Sample { name, kind, bytes };
    Ok([
        sample("ckks_params", kinds::CKKS_PARAMETERS, ctx.to_bytes()),
        sample(
            "ckks_params_bootstrap",
            kinds::CKKS_PARAMETERS,
            upper.to_bytes(),
        ),
        sample(
            "secret_key",
            kinds::SECRET_KEY,
            keys.secret.to_secret_bytes(ctx.rlwe()).to_vec(),
        ),
        sample("public_key", kinds::PUBLIC_KEY, keys.public.to_bytes()),
        sample("relin_key", kinds::RELIN_KEY, keys.relin.to_bytes()),
        sample("galois_keys", kinds::GALOIS_KEYS, keys.galois.to_bytes()),
        sample("ckks_plaintext", kinds::CKKS_PLAINTEXT, pt.to_bytes()),
        sample("ckks_ciphertext", kinds::CKKS_CIPHERTEXT, ct.to_bytes()),
        sample(
            "ckks_seeded_ciphertext",
            kinds::CKKS_CIPHERTEXT,
            seeded.to_bytes(),
        ),
        sample(
            "encapsulation_keys",
            kinds::ENCAPSULATION_KEYS,
            encapsulation.to_bytes(),
        ),
        sample(
            "bootstrapping_keys",
            kinds::BOOTSTRAPPING_KEYS,
            bootstrapping.to_bytes(),
        ),
    ]
    .into_iter()
    .chain(bfv_samples(&ctxs.bfv, seed)?)
    .chain(lwe_samples(&ctxs.lwe, seed)?)
    .chain(pegasus_samples(&ctxs.pegasus, seed)?)
    .chain(tree_samples(&ctxs.tree, seed)?)
    .collect())
}

/// The PEGASUS samples, from their own generator: the pipeline's parameters, the two option sets and
/// the keys of each ([`pegasus_sample_options`]).
fn pegasus_samples(ctxs: &PegasusSampleContexts, seed: u8) -> Result<Vec<Sample>, SampleError> {
    let mut rng = Csprng::insecure_from_seed_for_tests([seed.wrapping_add(50); 32]);
    let params = &ctxs.params;
    let keygen = KeyGenerator::new(&params.ckks, &mut rng)?;
    let [ring_packing, linear] = &ctxs.options;
    let (keys, secrets) = PegasusKeys::generate(params, ring_packing, &keygen, &mut rng)?;
    let linear_keys = PegasusKeys::generate_for(params, linear, &keygen, &secrets, &mut rng)?;
    let sample = |name, kind, bytes| Sample { name, kind, bytes };
    Ok(vec![
        sample(
            "pipeline_params",
            kinds::PIPELINE_PARAMETERS,
            params.to_bytes(),
        ),
        sample(
            "pipeline_options",
            kinds::PIPELINE_OPTIONS,
            ring_packing.to_bytes(params),
        ),
        sample(
            "pipeline_linear_options",
            kinds::PIPELINE_OPTIONS,
            linear.to_bytes(params),
        ),
        sample(
            "pegasus_keys",
            kinds::PEGASUS_KEYS,
            keys.to_bytes(params, ring_packing),
        ),
        sample(
            "pegasus_linear_keys",
            kinds::PEGASUS_KEYS,
            linear_keys.to_bytes(params, linear),
        ),
    ])
}

/// The decision-tree samples, from their own generator: the parameters, a client's server key and
/// secret, its query of [`TREE_SAMPLE_QUERY`] and the server's answer for [`sample_tree`].
fn tree_samples(ctxs: &TreeSampleContexts, seed: u8) -> Result<Vec<Sample>, SampleError> {
    let mut rng = Csprng::insecure_from_seed_for_tests([seed.wrapping_add(150); 32]);
    let (client, key) = TreeClient::generate(ctxs.params, &mut rng)?;
    let scaling = sample_tree_scaling()?;
    let query = client.encrypt(&scaling, &TREE_SAMPLE_QUERY, &mut rng)?;
    let key_bytes = key.to_bytes();
    let server = TreeServer::new(sample_tree()?, scaling, Arc::new(key))?;
    let label = server.evaluate(&query, &mut rng)?;
    let sample = |name, kind, bytes| Sample { name, kind, bytes };
    Ok(vec![
        sample(
            "tree_params",
            kinds::TREE_PARAMETERS,
            ctxs.params.to_bytes(),
        ),
        sample("tree_server_key", kinds::TREE_SERVER_KEY, key_bytes),
        sample(
            "tree_client",
            kinds::TREE_CLIENT,
            client.to_secret_bytes().to_vec(),
        ),
        sample("tree_query", kinds::ENCRYPTED_QUERY, query.to_bytes()),
        sample("tree_label", kinds::ENCRYPTED_LABEL, label.to_bytes()),
    ])
}

/// The LWE samples, from their own generator (so that the other samples do not depend on them): an LWE
/// ciphertext of [`LWE_SAMPLE_MESSAGE`], the LWE secret key and the ring key as an LWE key, the
/// switching key from the latter to the former, the table of [`lwe_sample_function`] and the ternary
/// blind-rotation key.
fn lwe_samples(ctxs: &LweSampleContexts, seed: u8) -> Result<Vec<Sample>, SampleError> {
    let mut rng = Csprng::insecure_from_seed_for_tests([seed.wrapping_add(200); 32]);
    let ring = &ctxs.ring;
    let ring_sk = SecretKey::generate(ring, &mut rng).map_err(rnsfhe_lwe::LweError::from)?;
    let ring_key = LweSecretKey::from_ring_key(&ring_sk)?;
    let lwe_key = LweSecretKey::generate(
        ctxs.space.dimension(),
        SecretDistribution::Ternary,
        &mut rng,
    )?;
    let q0 = *ctxs.space.modulus();
    let scale = lwe_sample_scale(q0.value());
    let noise = DiscreteGaussian::with_sigma(3.2)?;
    let message = (LWE_SAMPLE_MESSAGE * scale).round() as i64;
    let ct: LweCiphertext = lwe_key.encrypt(message, &q0, &noise, &mut rng);
    let switching = LweSwitchingKey::generate_allowing_insecure(
        &ring_key,
        &lwe_key,
        *ctxs.switching.params(),
        &mut rng,
    )?;
    let table = LookupTable::from_fn(ring, scale, scale, lwe_sample_function)?;
    let brk = BlindRotationKey::generate(ring, &ring_sk, &lwe_key, &mut rng)?;
    let sample = |name, kind, bytes| Sample { name, kind, bytes };
    Ok(vec![
        sample("lwe_ciphertext", kinds::LWE_CIPHERTEXT, ct.to_bytes()),
        sample(
            "lwe_secret_key",
            kinds::LWE_SECRET_KEY,
            lwe_key.to_secret_bytes().to_vec(),
        ),
        sample(
            "lwe_ring_secret_key",
            kinds::LWE_SECRET_KEY,
            ring_key.to_secret_bytes().to_vec(),
        ),
        sample(
            "lwe_switching_key",
            kinds::LWE_SWITCHING_KEY,
            switching.to_bytes(),
        ),
        sample("lookup_table", kinds::LOOKUP_TABLE, table.to_bytes()),
        sample(
            "blind_rotation_key",
            kinds::BLIND_ROTATION_KEY,
            brk.to_bytes(),
        ),
    ])
}

/// The BFV samples, from their own generator (so that the CKKS samples do not depend on them): every
/// BFV kind, the keys of `rnsfhe-core` over the BFV context, a fresh ciphertext, a 3-part product and a
/// seeded secret-key ciphertext.
fn bfv_samples(ctx: &Arc<BfvContext>, seed: u8) -> Result<Vec<Sample>, SampleError> {
    use rnsfhe_bfv::{Encryptor, Evaluator};
    let mut rng = Csprng::insecure_from_seed_for_tests([seed.wrapping_add(100); 32]);
    let kg = rnsfhe_bfv::KeyGenerator::new(ctx, &mut rng)?;
    let pk = kg.public_key(&mut rng)?;
    let rk = kg.relin_key(&mut rng)?;
    let gk = kg.galois_keys(&[BFV_SAMPLE_STEP], true, &mut rng)?;
    let pt = BatchEncoder::new(ctx)?.encode_u64(&BFV_SAMPLE_VALUES)?;
    let enc = Encryptor::with_secret_key(ctx, kg.secret_key())?;
    let ct = Encryptor::with_public_key(ctx, &pk)?.encrypt(&pt, &mut rng)?;
    let product = Evaluator::new(ctx).multiply_no_relin(&ct, &ct)?;
    let seeded = enc.encrypt_seeded(&pt, &mut rng)?;
    let sample = |name, kind, bytes| Sample { name, kind, bytes };
    Ok(vec![
        sample("bfv_params", kinds::BFV_PARAMETERS, ctx.to_bytes()),
        sample(
            "bfv_secret_key",
            kinds::SECRET_KEY,
            kg.secret_key().to_secret_bytes(ctx.rlwe()).to_vec(),
        ),
        sample("bfv_public_key", kinds::PUBLIC_KEY, pk.to_bytes()),
        sample("bfv_relin_key", kinds::BFV_RELIN_KEY, rk.to_bytes()),
        sample("bfv_galois_keys", kinds::BFV_GALOIS_KEYS, gk.to_bytes()),
        sample("bfv_plaintext", kinds::BFV_PLAINTEXT, pt.to_bytes()),
        sample("bfv_ciphertext", kinds::BFV_CIPHERTEXT, ct.to_bytes()),
        sample(
            "bfv_product_ciphertext",
            kinds::BFV_CIPHERTEXT,
            product.to_bytes(),
        ),
        sample(
            "bfv_seeded_ciphertext",
            kinds::BFV_CIPHERTEXT,
            seeded.to_bytes(),
        ),
    ])
}

/// Loads `bytes` as an object of `kind` into the sample contexts, returning only whether it decoded:
/// the single entry point of the fuzz targets and corpus tests (every deserializer is reachable).
/// Parameters are decoded without building a context unless they are the samples' own size or smaller
/// (`N <= 2^11`, at most 4 primes of each kind), which keeps a fuzzer from spending its time in prime
/// searches; contexts load under [`SAMPLE_LIMITS`]. Secret and public keys, shared by the schemes, load
/// into the BFV context when their header carries its fingerprint (of the header's format version) and
/// into the CKKS context otherwise; LWE secret keys load with the ring's dimension when their header
/// carries its fingerprint and with [`LWE_SAMPLE_DIMENSION`] otherwise; PEGASUS keys load with the
/// option set whose fingerprint their header carries (the first otherwise). The PEGASUS and
/// decision-tree parameters, and the client secrets that hold them, load under
/// [`PEGASUS_SAMPLE_LIMITS`].
pub fn decode(kind: ObjectKind, bytes: &[u8], ctxs: &SampleContexts) -> Result<(), DecodeError> {
    let ctx = &ctxs.ckks;
    let bfv = &ctxs.bfv;
    let rlwe = match peek_header(bytes) {
        Ok(h) if h.fingerprint == bfv.rlwe().wire_fingerprint_for(h.version) => bfv.rlwe(),
        _ => ctx.rlwe(),
    };
    match kind {
        kinds::CKKS_PARAMETERS => {
            let (params, _) = CkksParams::from_bytes(bytes)?;
            if params.log_n <= 11 && params.chain_len() <= 5 && params.special_primes <= 4 {
                CkksContext::from_bytes_with(bytes, &SAMPLE_LIMITS)?;
            }
        }
        kinds::BFV_PARAMETERS => {
            let (params, _) = BfvParams::from_bytes(bytes)?;
            if params.log_n <= 11 && params.q_moduli.len() <= 4 && params.p_moduli.len() <= 4 {
                BfvContext::from_bytes_with(bytes, &SAMPLE_LIMITS)?;
            }
        }
        kinds::SECRET_KEY => {
            SecretKey::from_secret_bytes(bytes, rlwe)?;
        }
        kinds::PUBLIC_KEY => {
            PublicKey::from_bytes(bytes, rlwe)?;
        }
        kinds::RELIN_KEY => {
            RelinKey::from_bytes(bytes, ctx.rlwe())?;
        }
        kinds::GALOIS_KEYS => {
            GaloisKeys::from_bytes(bytes, ctx.rlwe())?;
        }
        kinds::CKKS_PLAINTEXT => {
            rnsfhe_ckks::Plaintext::from_bytes(bytes, ctx)?;
        }
        kinds::CKKS_CIPHERTEXT => {
            rnsfhe_ckks::Ciphertext::from_bytes(bytes, ctx)?;
        }
        kinds::ENCAPSULATION_KEYS => {
            SparseEncapsulation::from_bytes(bytes, ctx)?;
        }
        kinds::BOOTSTRAPPING_KEYS => {
            BootstrappingKeys::from_bytes(bytes, ctx)?;
        }
        kinds::BFV_RELIN_KEY => {
            rnsfhe_bfv::RelinKey::from_bytes(bytes, bfv)?;
        }
        kinds::BFV_GALOIS_KEYS => {
            rnsfhe_bfv::GaloisKeys::from_bytes(bytes, bfv)?;
        }
        kinds::BFV_PLAINTEXT => {
            rnsfhe_bfv::Plaintext::from_bytes(bytes, bfv)?;
        }
        kinds::BFV_CIPHERTEXT => {
            rnsfhe_bfv::Ciphertext::from_bytes(bytes, bfv)?;
        }
        kinds::LWE_CIPHERTEXT => {
            LweCiphertext::from_bytes(bytes, &ctxs.lwe.space)?;
        }
        kinds::LWE_SECRET_KEY => {
            // The ring key (as an LWE key) or the LWE key, by the header's fingerprint.
            let ring = ctxs.lwe.ring_dimension();
            let dimension = match peek_header(bytes) {
                Ok(h) if h.fingerprint == secret_key_fingerprint(ring) => ring,
                _ => ctxs.lwe.space.dimension(),
            };
            LweSecretKey::from_secret_bytes(bytes, dimension)?;
        }
        kinds::LWE_SWITCHING_KEY => {
            LweSwitchingKey::from_bytes(bytes, &ctxs.lwe.switching)?;
        }
        kinds::LOOKUP_TABLE => {
            LookupTable::from_bytes(bytes, &ctxs.lwe.ring)?;
        }
        kinds::BLIND_ROTATION_KEY => {
            BlindRotationKey::from_bytes(bytes, &ctxs.lwe.ring)?;
        }
        kinds::PIPELINE_PARAMETERS => {
            PipelineParams::from_bytes_with(bytes, &PEGASUS_SAMPLE_LIMITS)?;
        }
        kinds::PIPELINE_OPTIONS => {
            PipelineOptions::from_bytes(bytes, &ctxs.pegasus.params, &SAMPLE_LIMITS)?;
        }
        kinds::PEGASUS_KEYS => {
            // The keys of either option set, by the header's fingerprint.
            let fingerprint = peek_header(bytes).map_or(0, |h| h.fingerprint);
            let options = ctxs.pegasus.options_for_keys(fingerprint);
            PegasusKeys::from_bytes(bytes, &ctxs.pegasus.params, options)?;
        }
        kinds::TREE_PARAMETERS => {
            TreeParams::from_bytes_with(bytes, &PEGASUS_SAMPLE_LIMITS)?;
        }
        kinds::TREE_SERVER_KEY => {
            TreeServerKey::from_bytes(bytes, &ctxs.tree.params)?;
        }
        kinds::ENCRYPTED_QUERY => {
            EncryptedQuery::from_bytes(bytes, &ctxs.tree.query)?;
        }
        kinds::ENCRYPTED_LABEL => {
            EncryptedLabel::from_bytes(bytes, &ctxs.tree.labels)?;
        }
        kinds::TREE_CLIENT => {
            TreeClient::from_secret_bytes(bytes, &PEGASUS_SAMPLE_LIMITS)?;
        }
        other => {
            return Err(DecodeError::new(
                "header.kind",
                6,
                rnsfhe_math::wire::DecodeErrorKind::Invalid(format!(
                    "{other} has no sample context yet"
                )),
            ))
        }
    }
    Ok(())
}

/// [`decode`] with the kind taken from the header (for inputs whose kind is unknown).
pub fn decode_any(bytes: &[u8], ctxs: &SampleContexts) -> Result<ObjectKind, DecodeError> {
    let code = peek_header(bytes)?.kind_code;
    let kind = crate::object_kind(code).ok_or_else(|| {
        DecodeError::new(
            "header.kind",
            6,
            rnsfhe_math::wire::DecodeErrorKind::Invalid(format!("unknown object kind code {code}")),
        )
    })?;
    decode(kind, bytes, ctxs)?;
    Ok(kind)
}

/// The fuzz targets of `fuzz/` and the deserializers each one drives. A target's input is a selector
/// byte (which deserializer, modulo the group's size) followed by the bytes to load; together the groups
/// cover every deserializer.
pub const FUZZ_TARGETS: [(&str, &[ObjectKind]); 6] = [
    ("params", &[kinds::CKKS_PARAMETERS, kinds::BFV_PARAMETERS]),
    (
        "keys",
        &[
            kinds::SECRET_KEY,
            kinds::PUBLIC_KEY,
            kinds::RELIN_KEY,
            kinds::GALOIS_KEYS,
            kinds::BFV_RELIN_KEY,
            kinds::BFV_GALOIS_KEYS,
            kinds::ENCAPSULATION_KEYS,
            kinds::BOOTSTRAPPING_KEYS,
        ],
    ),
    (
        "ciphertexts",
        &[
            kinds::CKKS_PLAINTEXT,
            kinds::CKKS_CIPHERTEXT,
            kinds::BFV_PLAINTEXT,
            kinds::BFV_CIPHERTEXT,
        ],
    ),
    (
        "lwe",
        &[
            kinds::LWE_CIPHERTEXT,
            kinds::LWE_SECRET_KEY,
            kinds::LWE_SWITCHING_KEY,
            kinds::LOOKUP_TABLE,
            kinds::BLIND_ROTATION_KEY,
        ],
    ),
    (
        "pegasus",
        &[
            kinds::PIPELINE_PARAMETERS,
            kinds::PIPELINE_OPTIONS,
            kinds::PEGASUS_KEYS,
            kinds::TREE_PARAMETERS,
            kinds::TREE_SERVER_KEY,
            kinds::ENCRYPTED_QUERY,
            kinds::ENCRYPTED_LABEL,
            kinds::TREE_CLIENT,
        ],
    ),
    ("any", &[]),
];

/// Runs one fuzz input of `target` ([`FUZZ_TARGETS`]): the selector byte picks the deserializer, the
/// rest is loaded; `any` dispatches on the header instead. Each input is loaded twice: as it is (which
/// exercises the digest check, and the readers of format version 1, which has none) and sealed with its
/// digest ([`seal`]), so that a mutated payload reaches the payload's validation. Unknown targets load
/// nothing. Returns whether either decoded (the fuzz targets ignore it; they only look for panics).
pub fn fuzz_input(target: &str, data: &[u8], ctxs: &SampleContexts) -> bool {
    let Some((_, kinds)) = FUZZ_TARGETS.iter().find(|(name, _)| *name == target) else {
        return false;
    };
    let load = |object: &[u8]| {
        if kinds.is_empty() {
            decode_any(object, ctxs).is_ok()
        } else if let Some((&selector, object)) = object.split_first() {
            decode(kinds[selector as usize % kinds.len()], object, ctxs).is_ok()
        } else {
            false
        }
    };
    let raw = load(data);
    let sealed = match (kinds.is_empty(), data.split_first()) {
        (true, _) => load(&seal(data)),
        (false, Some((&selector, object))) => load(&[&[selector][..], &seal(object)].concat()),
        (false, None) => false,
    };
    raw || sealed
}

/// Seed inputs of a fuzz target: every sample whose kind the target covers, with its selector byte and
/// without its digest (the fuzzer mutates header and payload; [`fuzz_input`] seals them again).
///
/// Errors: as [`samples`]; [`SampleError::UnknownFuzzTarget`] for a target not in [`FUZZ_TARGETS`].
pub fn fuzz_seeds(target: &str, ctxs: &SampleContexts) -> Result<Vec<Vec<u8>>, SampleError> {
    let Some((_, kinds)) = FUZZ_TARGETS.iter().find(|(name, _)| *name == target) else {
        return Err(SampleError::UnknownFuzzTarget(target.to_string()));
    };
    Ok(samples(ctxs, 3)?
        .into_iter()
        .filter_map(|s| {
            if kinds.is_empty() {
                return Some(body(&s.bytes).to_vec());
            }
            let selector = kinds.iter().position(|&k| k == s.kind)?;
            Some([&[selector as u8][..], body(&s.bytes)].concat())
        })
        .collect())
}

/// How many hostile variants [`hostile`] makes of one object.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HostileBudget {
    /// Truncations, evenly spread over the object (every one when it is shorter).
    pub cuts: usize,
    /// Random bit flips left unsealed: the digest must refuse every one.
    pub flips: usize,
    /// Resealed edits (a bit flip or a 4-byte patch of a length, count or code, the digest recomputed)
    /// that reach the payload's validation.
    pub patches: usize,
}

impl HostileBudget {
    /// Every truncation and `n` flips and resealed edits: for objects of a few kilobytes.
    pub const fn every_cut(n: usize) -> Self {
        Self {
            cuts: usize::MAX,
            flips: n,
            patches: n,
        }
    }
}

/// Throws hostile variants of the sealed object `bytes` at `load` (true when it loaded), the shared
/// check of every deserializer's hostile bytes: every truncation (or [`HostileBudget::cuts`] of them,
/// evenly spread), one trailing byte and [`HostileBudget::flips`] random bit flips must be refused;
/// [`HostileBudget::patches`] resealed edits may load when the edit left a valid value, but an edit of
/// the header's magic, kind or fingerprint must not (a version the reader also reads may load). Panics of `load` propagate (a test fails
/// on them). The positions come from a generator seeded by the object's length, so a run is
/// reproducible. Returns how many variants were refused.
///
/// Errors: [`SampleError::HostileLoaded`] naming the first variant that loaded but must not.
pub fn hostile(
    bytes: &[u8],
    budget: HostileBudget,
    load: impl Fn(&[u8]) -> bool,
) -> Result<usize, SampleError> {
    let loaded = |what: String| Err(SampleError::HostileLoaded(what));
    let mut refused = 0;
    let step = (bytes.len() / budget.cuts.max(1)).max(1);
    for cut in (0..bytes.len()).step_by(step) {
        if load(&bytes[..cut]) {
            return loaded(format!("a truncation to {cut} of {} bytes", bytes.len()));
        }
        refused += 1;
    }
    if load(&[bytes, &[0u8][..]].concat()) {
        return loaded("a trailing byte".into());
    }
    refused += 1;
    // xorshift64, seeded by the length (never 0).
    let mut state = 0x9e37_79b9_7f4a_7c15u64 ^ bytes.len() as u64;
    let mut next = |bound: usize| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state % bound.max(1) as u64) as usize
    };
    for _ in 0..budget.flips {
        let mut bad = bytes.to_vec();
        let at = next(bytes.len());
        if let Some(b) = bad.get_mut(at) {
            *b ^= 1 << next(8);
        }
        if load(&bad) {
            return loaded(format!("a bit flip at byte {at} (not resealed)"));
        }
        refused += 1;
    }
    let end = bytes.len().saturating_sub(DIGEST_LEN as usize);
    for i in 0..budget.patches {
        let mut patched = bytes.to_vec();
        let at = next(end);
        if i % 2 == 0 {
            if let Some(b) = patched.get_mut(at) {
                *b ^= 1 << next(8);
            }
        } else {
            let v: u32 = [0, 1, 0xff, 0xffff, u32::MAX, next(1 << 31) as u32][next(6)];
            let len = 4.min(end.saturating_sub(at));
            if let Some(dst) = patched.get_mut(at..at + len) {
                dst.copy_from_slice(&v.to_le_bytes()[..len]);
            }
        }
        rnsfhe_math::wire::reseal(&mut patched);
        let ok = load(&patched);
        // The version (bytes 4 and 5) may change to another version the reader reads with the same
        // payload (an LWE key of version 2 is one of version 3); the corpora name the versions each
        // kind refuses.
        let header_changed =
            |range: std::ops::Range<usize>| patched.get(range.clone()) != bytes.get(range);
        if ok && (header_changed(0..4) || header_changed(6..16)) {
            return loaded(format!("a resealed edit of header byte {at}"));
        }
        refused += usize::from(!ok);
    }
    Ok(refused)
}
