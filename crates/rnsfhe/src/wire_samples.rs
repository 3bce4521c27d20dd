//! Deterministic samples of every serializable object and one entry point that loads bytes as any kind:
//! the common ground of the format fixtures (`tests/fixtures/`), the corrupted-input corpus
//! (`tests/wire_corpus.rs`) and the fuzz targets (`fuzz/`).
//!
//! The samples (CKKS and BFV at `N = 2^10`; LWE objects of dimension 16 over a look-up-table ring of
//! degree 32) use tiny, **insecure** parameters and a fixed seed
//! ([`Csprng::insecure_from_seed_for_tests`]) so that they are small and reproducible; they exist to
//! exercise the decoders, never to protect data.

use std::sync::Arc;

use rnsfhe_bfv::{BatchEncoder, BfvContext, BfvParams};
use rnsfhe_ckks::{CkksContext, CkksEncryptor, CkksParams, Csprng, KeyGenerator, RescalingPolicy};
use rnsfhe_core::serialization::LoadLimits;

/// The kinds of every crate under one name (the samples cover all of them).
mod kinds {
    pub use rnsfhe_bfv::serialization::kinds::*;
    pub use rnsfhe_ckks::serialization::kinds::*;
    pub use rnsfhe_core::serialization::kinds::*;
    pub use rnsfhe_lwe::serialization::kinds::*;
}
use rnsfhe_core::{
    ConversionMode, GaloisKeys, PublicKey, RelinKey, RlweContext, SecretDistribution, SecretKey,
};
use rnsfhe_lwe::serialization::secret_key_fingerprint;
use rnsfhe_lwe::{
    BlindRotationKey, LookupTable, LutParams, LweCiphertext, LweDimension, LweKeySwitchParams,
    LweSecretKey, LweSpace, LweSwitchingKey, LweSwitchingKeyContext,
};
use rnsfhe_math::primes::ntt_primes_of_bits;
use rnsfhe_math::sampling::DiscreteGaussian;
use rnsfhe_math::wire::{
    digest_of, peek_header, DecodeError, Deserializable, Integrity, ObjectKind, Serializable,
    WireFingerprint, DIGEST_LEN,
};

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
    let sample = |name, kind, bytes| Sample { name, kind, bytes };
    Ok([
        sample("ckks_params", kinds::CKKS_PARAMETERS, ctx.to_bytes()),
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
    ]
    .into_iter()
    .chain(bfv_samples(&ctxs.bfv, seed)?)
    .chain(lwe_samples(&ctxs.lwe, seed)?)
    .collect())
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
/// carries its fingerprint and with [`LWE_SAMPLE_DIMENSION`] otherwise.
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
            if params.log_n <= 11 && params.levels <= 4 && params.special_primes <= 4 {
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
pub const FUZZ_TARGETS: [(&str, &[ObjectKind]); 5] = [
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
