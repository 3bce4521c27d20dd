//! Wire encodings of the PEGASUS pipeline (header, digest and conventions in [`rnsfhe_math::wire`];
//! keys and ciphertext parts in [`rnsfhe_core::serialization`], LWE objects in
//! [`rnsfhe_lwe::serialization`], CKKS parameters and ciphertexts in [`rnsfhe_ckks::serialization`]).
//!
//! Payloads after the 16-byte header (integers little endian):
//!
//! ```text
//! PipelineParams   CKKS parameters (the payload of a CKKS context) | LWE side (below)
//! LWE side         u32 ckks_log_n | u32 n_lwe | u8 LWE secret (0 uniform ternary, 1 ternary of weight h,
//!                  2 uniform binary, 3 binary of weight h) | u32 h | u64 q_ks | u32 base_log
//!                  | u32 digits | f64 sigma_ks | u32 log2 n | u64 q_0 | u64 q' | f64 sigma_lut
//!                  | ring secret (u8 tag, u32 h) | u8 blind rotation (0 ternary, 1 binary, 2 LMKCDEY)
//! PipelineOptions  u32 slots | f64 input bound | u8 s2c levels | u8 c2s levels | u8 dimension switch
//!                  (0 per ciphertext, 1 whole ciphertext) | u8 repacking (0 linear transform, 1 ring
//!                  packing) | u8 blind rotation (255: the set's) | u8 sparse encapsulation | u8 insecure
//! PegasusKeys      u8 layout: bit 0 per-ciphertext switch key, bit 1 whole-ciphertext switch key,
//!                  bit 2 ring packing (else the linear transform), bit 3 sparse encapsulation,
//!                  bit 4 the rotation keys of the joint repacking (`repack_pair`)
//!                  | relinearization key (gadget ciphertext) | Galois keys (core's list)
//!                  | [LWE switching key N -> n_lwe] | [ring switching key: gadget ciphertext over q_r]
//!                  | blind-rotation key (a whole sealed object of rnsfhe-lwe, kind 68)
//!                  | linear transform: LWE switching key n -> n_lwe | repacking key (CKKS ciphertext parts,
//!                    scale, slots)
//!                  | ring packing: switching key | Galois keys of the packing ring
//!                    | [sparse-secret encapsulation: the payload of rnsfhe-ckks's kind 34, u32 weight
//!                      | key to the sparse secret | key back to the CKKS secret]
//!                  | [Galois keys of the joint repacking's last CoeffsToSlots matrix and split]
//! ```
//!
//! No length in these payloads comes from the input: the parameters and options the reader holds (and
//! the header's fingerprint of them) fix every dimension, every key's row count and which keys are
//! present, so a reader allocates only from trusted sizes. The one list whose length is read (the
//! Galois keys) is bounded by the ring degree, as in core. Keys keep the seeds of their uniform parts
//! (about half their expanded size). The blind-rotation key travels as its own sealed object (its own
//! header and digest inside the payload), which the LWE layer validates; its errors are reported at
//! their offset in the whole object.
//!
//! Parameters load under [`LoadLimits`] (ring degrees, prime counts) and are refused below 128 bits
//! unless the reader allows insecure parameters itself ([`LoadLimits::allow_insecure`]), before any
//! context is built.

use std::io::{self, Read, Write};
use std::sync::Arc;

use rnsfhe_ckks::serialization::read_encapsulation_payload;
use rnsfhe_ckks::{CkksContext, CkksParams, GaloisKeys, RelinKey};
use rnsfhe_core::context::fingerprint_words;
use rnsfhe_core::serialization::{
    read_secret_distribution, read_sigma, write_secret_distribution, LoadLimits, WireParams,
};
use rnsfhe_core::{GadgetCiphertext, KeySwitchKey};
use rnsfhe_lwe::{
    BlindRotation, BlindRotationKey, LutParams, LweDimension, LweKeySwitchParams,
    LweSecretDistribution, LweSwitchingKey, LweSwitchingKeyContext, PegasusParams,
    MAX_LWE_DIMENSION, MIN_SECURITY_BITS,
};
use rnsfhe_math::wire::{
    read_exactly, DecodeError, DecodeErrorKind, Deserializable, Header, Integrity, ObjectKind,
    PublicRandomness, Serializable, WireFingerprint, WireReader, WireWriter, HEADER_LEN,
};

use super::{
    encapsulation_weight, has_pair_transform, lwe_key_choice, PegasusEvaluator, PegasusKeys,
    PipelineOptions, Repacking, RepackingKeys,
};
use crate::dimension_switch::{DimensionSwitch, DimensionSwitchKeys, RingSwitchingKey};
use crate::error::{PegasusError, PegasusResult};
use crate::params::PipelineParams;
use crate::repacking::RepackingKey;
use crate::ring_packing::RingPackingKey;

/// The wire object kinds of `rnsfhe-pegasus` (codes 80 to 87 of
/// [`rnsfhe_math::wire::kind_codes::PEGASUS`]; 88 to 95 are the decision tree's in `rnsfhe-apps`).
pub mod kinds {
    use rnsfhe_math::wire::ObjectKind;

    /// The parameters of a pipeline ([`crate::PipelineParams`]: CKKS chain and LWE side).
    pub const PIPELINE_PARAMETERS: ObjectKind = ObjectKind::new(80, "PEGASUS pipeline parameters");
    /// The options of a pipeline ([`crate::PipelineOptions`]).
    pub const PIPELINE_OPTIONS: ObjectKind = ObjectKind::new(81, "PEGASUS pipeline options");
    /// The evaluation keys of a pipeline ([`crate::PegasusKeys`]).
    pub const PEGASUS_KEYS: ObjectKind = ObjectKind::new(82, "PEGASUS keys");

    /// Every kind of this crate.
    pub const KINDS: [ObjectKind; 3] = [PIPELINE_PARAMETERS, PIPELINE_OPTIONS, PEGASUS_KEYS];
}

/// Domain tags of the fingerprints ("PEG_LWE", "PEG_PAR", "PEG_OPT", "PEG_KEY").
const LWE_PARAMS_TAG: u64 = 0x0050_4547_5f4c_5745;
const PIPELINE_TAG: u64 = 0x0050_4547_5f50_4152;
const OPTIONS_TAG: u64 = 0x0050_4547_5f4f_5054;
const KEYS_TAG: u64 = 0x0050_4547_5f4b_4559;

/// Wire size of the LWE side of a parameter set ([`write_lwe_params`]).
pub const LWE_PARAMS_SIZE: u64 = 4 + 4 + 5 + 8 + 4 + 4 + 8 + 4 + 8 + 8 + 8 + 5 + 1;

/// The largest `log2 n` of a look-up-table ring or CKKS ring on the wire (the core layer's largest).
const MAX_WIRE_LOG_N: u32 = 17;

// ---- Small codes --------------------------------------------------------------------------------------

fn lwe_secret_code(d: LweSecretDistribution) -> (u8, u32) {
    match d {
        LweSecretDistribution::UniformTernary => (0, 0),
        LweSecretDistribution::TernaryWeight(h) => (1, h as u32),
        LweSecretDistribution::UniformBinary => (2, 0),
        LweSecretDistribution::BinaryWeight(h) => (3, h as u32),
        // A distribution added later has no code yet: 255 is refused by every reader.
        _ => (255, 0),
    }
}

fn blind_rotation_code(a: BlindRotation) -> u8 {
    // The codes of the blind-rotation key's own payload (rnsfhe_lwe::serialization).
    match a {
        BlindRotation::Ternary => 0,
        BlindRotation::Binary => 1,
        BlindRotation::Lmkcdey => 2,
        // An algorithm added later has no code yet: 254 is refused by every reader.
        _ => 254,
    }
}

fn blind_rotation_of_code(code: u8) -> Option<BlindRotation> {
    [
        BlindRotation::Ternary,
        BlindRotation::Binary,
        BlindRotation::Lmkcdey,
    ]
    .into_iter()
    .find(|&a| blind_rotation_code(a) == code)
}

fn read_blind_rotation<R: Read>(
    r: &mut WireReader<R>,
    field: &str,
) -> Result<BlindRotation, DecodeError> {
    let at = r.offset();
    let code = r.u8(field)?;
    blind_rotation_of_code(code).ok_or_else(|| {
        r.out_of_range(
            at,
            field,
            code as u64,
            "0 (ternary), 1 (binary) or 2 (LMKCDEY)",
        )
    })
}

/// Reads a `u64` modulus in `[2, 2^62)` (what [`rnsfhe_math::Modulus`] accepts).
fn read_modulus<R: Read>(r: &mut WireReader<R>, field: &str) -> Result<u64, DecodeError> {
    let at = r.offset();
    let q = r.u64(field)?;
    if !(2..1 << 62).contains(&q) {
        return Err(r.out_of_range(at, field, q, "a modulus in [2, 2^62)"));
    }
    Ok(q)
}

// ---- The LWE side of a parameter set ------------------------------------------------------------------

/// The fingerprint of the LWE side of a parameter set: every field (dimensions, moduli, digit gadget,
/// error widths, secret distributions, blind-rotation algorithm).
pub fn lwe_params_fingerprint(p: &PegasusParams) -> u64 {
    let (secret, h) = lwe_secret_code(p.lwe_secret);
    let (ring_secret, ring_h) = match p.lut.secret {
        rnsfhe_core::SecretDistribution::Ternary => (0u64, 0u64),
        rnsfhe_core::SecretDistribution::HammingWeight(h) => (1, h as u64),
    };
    fingerprint_words([
        LWE_PARAMS_TAG,
        p.ckks_log_n as u64,
        p.lwe_dimension as u64,
        secret as u64,
        h as u64,
        p.key_switch.modulus,
        p.key_switch.base_log as u64,
        p.key_switch.digits as u64,
        p.key_switch.sigma.to_bits(),
        p.lut.log_n as u64,
        p.lut.q0,
        p.lut.special,
        p.lut.sigma.to_bits(),
        ring_secret,
        ring_h,
        blind_rotation_code(p.blind_rotation) as u64,
    ])
}

/// Writes the LWE side of a parameter set ([`LWE_PARAMS_SIZE`] bytes; layout in the module
/// documentation). Shared with the decision tree's parameters (`rnsfhe-apps`).
///
/// Errors: I/O errors of the writer.
pub fn write_lwe_params<W: Write>(w: &mut WireWriter<W>, p: &PegasusParams) -> io::Result<()> {
    w.u32(p.ckks_log_n)?;
    w.u32(p.lwe_dimension as u32)?;
    let (tag, h) = lwe_secret_code(p.lwe_secret);
    w.u8(tag)?;
    w.u32(h)?;
    w.u64(p.key_switch.modulus)?;
    w.u32(p.key_switch.base_log)?;
    w.u32(p.key_switch.digits as u32)?;
    w.f64(p.key_switch.sigma)?;
    w.u32(p.lut.log_n)?;
    w.u64(p.lut.q0)?;
    w.u64(p.lut.special)?;
    w.f64(p.lut.sigma)?;
    write_secret_distribution(w, p.lut.secret)?;
    w.u8(blind_rotation_code(p.blind_rotation))
}

/// Reads the LWE side written by [`write_lwe_params`], range-checking every field (errors name
/// `{field}.<name>`); the primes and the security are checked by [`check_lwe_params`] and the context
/// constructors.
///
/// Errors: [`DecodeError`] naming the field and offset.
pub fn read_lwe_params<R: Read>(
    r: &mut WireReader<R>,
    field: &str,
) -> Result<PegasusParams, DecodeError> {
    let f = |name: &str| format!("{field}.{name}");
    let ckks_log_n = r.u32_in(&f("ckks_log_n"), 1..=MAX_WIRE_LOG_N, "log2 N")?;
    let lwe_dimension = r.u32_in(
        &f("lwe_dimension"),
        1..=MAX_LWE_DIMENSION as u32,
        "an LWE dimension",
    )? as usize;
    let at = r.offset();
    let tag = r.u8(&f("lwe_secret.tag"))?;
    let h = r.u32(&f("lwe_secret.hamming_weight"))? as usize;
    let weight_ok = (1..=lwe_dimension).contains(&h);
    let lwe_secret = match (tag, h) {
        (0, 0) => LweSecretDistribution::UniformTernary,
        (1, h) if weight_ok => LweSecretDistribution::TernaryWeight(h),
        (2, 0) => LweSecretDistribution::UniformBinary,
        (3, h) if weight_ok => LweSecretDistribution::BinaryWeight(h),
        _ => {
            return Err(r.invalid_at(
                at,
                &f("lwe_secret"),
                format!(
                    "tag {tag} with weight {h}: 0 or 2 with weight 0, or 1 or 3 with a weight in \
                     [1, {lwe_dimension}]"
                ),
            ))
        }
    };
    let modulus = read_modulus(r, &f("key_switch.modulus"))?;
    let base_log = r.u32_in(&f("key_switch.base_log"), 1..=62, "log2 of the digit base")?;
    let digits = r.u32_in(&f("key_switch.digits"), 1..=64, "a digit count")? as usize;
    let sigma = read_sigma(r, &f("key_switch.sigma"))?;
    let log_n = r.u32_in(&f("lut.log_n"), 1..=MAX_WIRE_LOG_N, "log2 n")?;
    let q0 = read_modulus(r, &f("lut.q0"))?;
    let special = read_modulus(r, &f("lut.special"))?;
    let lut_sigma = read_sigma(r, &f("lut.sigma"))?;
    let secret = read_secret_distribution(r, 1 << log_n, &f("lut.secret"))?;
    let blind_rotation = read_blind_rotation(r, &f("blind_rotation"))?;
    Ok(PegasusParams {
        ckks_log_n,
        lwe_dimension,
        lwe_secret,
        key_switch: LweKeySwitchParams {
            modulus,
            base_log,
            digits,
            sigma,
        },
        lut: LutParams {
            log_n,
            q0,
            special,
            sigma: lut_sigma,
            secret,
        },
        blind_rotation,
    })
}

/// Checks the LWE side of loaded parameters against `limits` before anything is built: the
/// look-up-table ring and the LWE dimension within `max_log_n`, and, unless the limits allow insecure
/// parameters, both key encryptions at 128 bits or more by the estimator
/// ([`PegasusParams::security`]). Errors name `{field}.lut.log_n`, `{field}.lwe_dimension` or
/// `parameters`, at the payload's start.
///
/// Errors: [`DecodeError`].
pub fn check_lwe_params(
    p: &PegasusParams,
    limits: &LoadLimits,
    field: &str,
) -> Result<(), DecodeError> {
    let exceeded = |name: &str, value: u64| {
        Err(DecodeError::new(
            format!("{field}.{name}"),
            HEADER_LEN,
            DecodeErrorKind::LimitExceeded {
                value,
                limit: format!("max_log_n = {}", limits.max_log_n),
            },
        ))
    };
    if p.lut.log_n > limits.max_log_n {
        return exceeded("lut.log_n", p.lut.log_n as u64);
    }
    // `max_log_n` is whatever the reader set (any u32): 2^64 and beyond bound nothing, and a plain
    // shift would wrap (masking the shift: 2^64 read as 2^0) or panic in debug builds.
    let max_dimension = 1u64.checked_shl(limits.max_log_n).unwrap_or(u64::MAX);
    if p.lwe_dimension as u64 > max_dimension {
        return exceeded("lwe_dimension", p.lwe_dimension as u64);
    }
    if !limits.allow_insecure {
        let bits = p
            .security()
            .map_err(|e| {
                DecodeError::new(
                    "parameters",
                    HEADER_LEN,
                    DecodeErrorKind::Invalid(format!("rejected: {e}")),
                )
            })?
            .bits();
        if bits < MIN_SECURITY_BITS {
            return Err(DecodeError::new(
                "parameters",
                HEADER_LEN,
                DecodeErrorKind::Invalid(format!(
                    "refused: the LWE side's keys estimate at {bits:.1} bits, below 128; a reader \
                     accepts such parameters only when it allows insecure parameters itself \
                     (LoadLimits::allow_insecure)"
                )),
            ));
        }
    }
    Ok(())
}

/// The first format version that has the objects of this module (and of the decision tree's).
pub const FIRST_VERSION: u16 = 3;

/// Reads a header of `kind`, refusing format versions before [`FIRST_VERSION`] (these objects were
/// first written in version 3 and always carry a digest); the fingerprint is compared when
/// `fingerprint` is given. Shared with the decision tree's objects (`rnsfhe-apps`).
///
/// Errors: [`DecodeError`] naming the header field.
pub fn read_header<R: Read>(
    r: &mut WireReader<R>,
    kind: ObjectKind,
    fingerprint: Option<u64>,
) -> Result<Header, DecodeError> {
    let header = Header::read(r)?;
    header.expect(kind, None)?;
    if header.version < FIRST_VERSION {
        return Err(DecodeError::new(
            "header.version",
            4,
            DecodeErrorKind::Invalid(format!(
                "format version {} has no {kind}: it exists from version {FIRST_VERSION} on (with a \
                 digest)",
                header.version
            )),
        ));
    }
    header.expect(kind, fingerprint)?;
    Ok(header)
}

/// Reads a whole sealed object embedded in a payload with `read` (a loader of the layer below that
/// reads only whole objects, such as the blind-rotation key), through the outer reader (so the outer
/// digest covers its bytes); its errors are reported at their offset in the outer object, their field
/// under `field`. Shared with the decision tree's server key (`rnsfhe-apps`).
///
/// Errors: those of `read`, moved.
pub fn read_embedded<R: Read, T>(
    r: &mut WireReader<R>,
    field: &str,
    read: impl FnOnce(&mut Embedded<'_, R>) -> Result<T, DecodeError>,
) -> Result<T, DecodeError> {
    let base = r.offset();
    let mut inner = Embedded {
        outer: r,
        failure: None,
    };
    let result = read(&mut inner);
    let failure = inner.failure.take();
    result.map_err(|e| {
        let field = format!("{field}.{}", e.field);
        match failure {
            // The outer input ended (or failed) inside the embedded object: its error, with the
            // field the embedded loader was reading.
            Some(outer) => DecodeError { field, ..outer },
            None => DecodeError {
                field,
                offset: base + e.offset,
                ..e
            },
        }
    })
}

/// The outer reader seen as a byte stream by an embedded object's loader ([`read_embedded`]).
pub struct Embedded<'a, R: Read> {
    outer: &'a mut WireReader<R>,
    /// The outer reader's error, if reading through it failed (a truncation of the whole object).
    failure: Option<DecodeError>,
}

impl<R: Read> Read for Embedded<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        // The loaders below read exact lengths; a short input is a truncation, kept to be reported
        // at its offset in the whole object.
        match self.outer.fill("embedded object", buf) {
            Ok(()) => Ok(buf.len()),
            Err(e) => {
                let message = e.to_string();
                self.failure = Some(e);
                Err(io::Error::new(io::ErrorKind::UnexpectedEof, message))
            }
        }
    }
}

// ---- Pipeline parameters ------------------------------------------------------------------------------

impl PipelineParams {
    /// The fingerprint of the parameters (the CKKS context's and the LWE side's): what their bytes, and
    /// the options and keys made for them, carry in their headers.
    pub fn fingerprint(&self) -> u64 {
        fingerprint_words([
            PIPELINE_TAG,
            self.ckks.fingerprint(),
            lwe_params_fingerprint(&self.lwe),
        ])
    }

    /// Reads parameters written by [`Serializable::to_bytes`] from exactly `bytes` under the default
    /// [`LoadLimits`] ([`PipelineParams::from_bytes_with`]).
    ///
    /// Errors: [`DecodeError`] naming the field and offset.
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, DecodeError> {
        Self::from_bytes_with(bytes, &LoadLimits::default())
    }

    /// Reads parameters from exactly `bytes` (digest checked first) under `limits`: every field's range,
    /// the CKKS and look-up-table ring sizes against the limits, the fingerprint against the header and
    /// the security of both halves (unless `limits.allow_insecure`) before the CKKS context is built;
    /// then [`PipelineParams::new`], which must leave the LWE side as written (its `q_0` is the CKKS
    /// chain's).
    ///
    /// Errors: [`DecodeError`] naming the field and offset.
    pub fn from_bytes_with(bytes: &[u8], limits: &LoadLimits) -> Result<Self, DecodeError> {
        Self::from_bytes_sealed(bytes, limits, Integrity::Digest)
    }

    /// [`PipelineParams::from_bytes_with`], the digest checked in the mode `integrity` (a MAC).
    ///
    /// Errors: [`DecodeError`] naming the field and offset.
    pub fn from_bytes_sealed(
        bytes: &[u8],
        limits: &LoadLimits,
        integrity: Integrity<'_>,
    ) -> Result<Self, DecodeError> {
        read_exactly(bytes, integrity, |r| Self::read_object(r, limits))
    }

    /// [`PipelineParams::from_bytes_with`] from a stream (which may continue after the object; the
    /// digest is checked at its end).
    ///
    /// Errors: [`DecodeError`] naming the field and offset.
    pub fn read_from<R: Read>(r: R, limits: &LoadLimits) -> Result<Self, DecodeError> {
        Self::read_object(&mut WireReader::new(r), limits)
    }

    fn read_object<R: Read>(
        r: &mut WireReader<R>,
        limits: &LoadLimits,
    ) -> Result<Self, DecodeError> {
        let header = read_header(r, kinds::PIPELINE_PARAMETERS, None)?;
        let ckks = <CkksParams as WireParams>::read_params(r)?;
        let lwe = read_lwe_params(r, "pipeline.lwe")?;
        r.check_digest(&header)?;
        let (log_n, moduli) = ckks.size();
        limits.check(log_n, moduli)?;
        check_lwe_params(&lwe, limits, "pipeline.lwe")?;
        let invalid = |field: &str, at: u64, reason: String| {
            DecodeError::new(field, at, DecodeErrorKind::Invalid(reason))
        };
        let checked = ckks
            .check()
            .map_err(|e| invalid("parameters", HEADER_LEN, format!("rejected: {e}")))?;
        let expected = fingerprint_words([
            PIPELINE_TAG,
            checked.fingerprints.current,
            lwe_params_fingerprint(&lwe),
        ]);
        if header.fingerprint != expected {
            return Err(invalid(
                "header.fingerprint",
                8,
                format!(
                    "the parameters have fingerprint {expected:#018x}, the header says {:#018x}",
                    header.fingerprint
                ),
            ));
        }
        limits.check_security(checked.security)?;
        let params = PipelineParams::new(ckks, lwe)
            .map_err(|e| invalid("parameters", HEADER_LEN, format!("rejected: {e}")))?;
        if lwe_params_fingerprint(&params.lwe) != lwe_params_fingerprint(&lwe) {
            return Err(invalid(
                "pipeline.lwe.lut.q0",
                HEADER_LEN,
                format!(
                    "q_0 = {} is not the first prime {} of the CKKS chain",
                    lwe.lut.q0,
                    params.q0()
                ),
            ));
        }
        Ok(params)
    }
}

impl Serializable for PipelineParams {
    const KIND: ObjectKind = kinds::PIPELINE_PARAMETERS;

    fn wire_fingerprint(&self) -> u64 {
        self.fingerprint()
    }

    fn payload_size(&self, randomness: PublicRandomness) -> u64 {
        self.ckks.payload_size(randomness) + LWE_PARAMS_SIZE
    }

    fn write_payload<W: Write>(
        &self,
        w: &mut WireWriter<W>,
        randomness: PublicRandomness,
    ) -> io::Result<()> {
        self.ckks.write_payload(w, randomness)?;
        write_lwe_params(w, &self.lwe)
    }
}

impl WireFingerprint for PipelineParams {
    fn wire_fingerprint_for(&self, _version: u16) -> u64 {
        // Objects of versions 1 and 2 are refused before the fingerprint is compared (`read_header`).
        self.fingerprint()
    }
}

// ---- Pipeline options ---------------------------------------------------------------------------------

/// Payload size of [`PipelineOptions`].
const OPTIONS_SIZE: u64 = 4 + 8 + 7;

fn options_words(o: &PipelineOptions) -> [u64; 10] {
    [
        OPTIONS_TAG,
        o.slots as u64,
        o.input_bound.to_bits(),
        o.s2c_levels as u64,
        o.c2s_levels as u64,
        dimension_switch_code(o.dimension_switch) as u64,
        repacking_code(o.repacking) as u64,
        o.blind_rotation.map_or(255, blind_rotation_code) as u64,
        o.sparse_encapsulation as u64,
        o.allow_insecure as u64,
    ]
}

fn dimension_switch_code(d: DimensionSwitch) -> u8 {
    match d {
        DimensionSwitch::PerCiphertext => 0,
        DimensionSwitch::WholeCiphertext => 1,
    }
}

fn repacking_code(r: Repacking) -> u8 {
    match r {
        Repacking::LinearTransform => 0,
        Repacking::RingPacking => 1,
    }
}

impl PipelineOptions {
    /// The fingerprint of options for `params`: what their bytes, and the keys made for both, carry.
    pub fn fingerprint(&self, params: &PipelineParams) -> u64 {
        fingerprint_words(std::iter::once(params.fingerprint()).chain(options_words(self)))
    }

    /// The options' payload ([`PipelineOptions::to_bytes`]; layout in the module documentation).
    fn write_payload<W: Write>(&self, w: &mut WireWriter<W>) -> io::Result<()> {
        w.u32(self.slots as u32)?;
        w.f64(self.input_bound)?;
        w.u8(self.s2c_levels as u8)?;
        w.u8(self.c2s_levels as u8)?;
        w.u8(dimension_switch_code(self.dimension_switch))?;
        w.u8(repacking_code(self.repacking))?;
        w.u8(self.blind_rotation.map_or(255, blind_rotation_code))?;
        w.u8(self.sparse_encapsulation as u8)?;
        w.u8(self.allow_insecure as u8)
    }

    /// Wire size of [`PipelineOptions::to_bytes`]'s output.
    pub fn serialized_size(&self) -> u64 {
        HEADER_LEN + OPTIONS_SIZE + rnsfhe_math::wire::DIGEST_LEN
    }

    /// The options for `params` as bytes (header with the fingerprint of both, payload, digest).
    pub fn to_bytes(&self, params: &PipelineParams) -> Vec<u8> {
        self.to_bytes_sealed(params, Integrity::Digest)
    }

    /// [`PipelineOptions::to_bytes`] sealed in the mode `integrity` (a MAC under a shared key).
    pub fn to_bytes_sealed(&self, params: &PipelineParams, integrity: Integrity<'_>) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.serialized_size() as usize);
        // Writing to a Vec cannot fail.
        let _ = rnsfhe_math::wire::write_object(
            &mut out,
            kinds::PIPELINE_OPTIONS,
            self.fingerprint(params),
            OPTIONS_SIZE,
            integrity,
            |w| self.write_payload(w),
        );
        out
    }

    /// Reads options for `params` from exactly `bytes` (digest checked first): the header's fingerprint
    /// must be that of these options for `params`; the slot count a power of two up to `N / 2`, the
    /// bound finite and positive, the level counts 1 to 4, every code known. The opt-in for insecure
    /// keys loads only when `limits.allow_insecure` (the reader's own opt-in).
    ///
    /// Errors: [`DecodeError`] naming the field and offset.
    pub fn from_bytes(
        bytes: &[u8],
        params: &PipelineParams,
        limits: &LoadLimits,
    ) -> Result<Self, DecodeError> {
        Self::from_bytes_sealed(bytes, params, limits, Integrity::Digest)
    }

    /// [`PipelineOptions::from_bytes`], the digest checked in the mode `integrity`.
    ///
    /// Errors: [`DecodeError`] naming the field and offset.
    pub fn from_bytes_sealed(
        bytes: &[u8],
        params: &PipelineParams,
        limits: &LoadLimits,
        integrity: Integrity<'_>,
    ) -> Result<Self, DecodeError> {
        read_exactly(bytes, integrity, |r| {
            let header = read_header(r, kinds::PIPELINE_OPTIONS, None)?;
            let options = Self::read_payload(r, params, limits)?;
            r.check_digest(&header)?;
            if header.fingerprint != options.fingerprint(params) {
                return Err(DecodeError::new(
                    "header.fingerprint",
                    8,
                    DecodeErrorKind::Invalid(
                        "the options are not these, or were made for other parameters".into(),
                    ),
                ));
            }
            Ok(options)
        })
    }

    fn read_payload<R: Read>(
        r: &mut WireReader<R>,
        params: &PipelineParams,
        limits: &LoadLimits,
    ) -> Result<Self, DecodeError> {
        let at = r.offset();
        let slots = r.u32("options.slots")? as usize;
        if !slots.is_power_of_two() || slots > params.ckks.max_slots() {
            return Err(r.out_of_range(
                at,
                "options.slots",
                slots as u64,
                format!("a power of two up to N/2 = {}", params.ckks.max_slots()),
            ));
        }
        let at = r.offset();
        let input_bound = r.f64("options.input_bound")?;
        if !(input_bound.is_finite() && input_bound > 0.0) {
            return Err(r.invalid_at(
                at,
                "options.input_bound",
                format!("{input_bound} is not finite and positive"),
            ));
        }
        let mut levels = |field: &str| -> Result<usize, DecodeError> {
            let at = r.offset();
            let v = r.u8(field)?;
            if !(1..=4).contains(&v) {
                return Err(r.out_of_range(at, field, v as u64, "1 to 4 levels"));
            }
            Ok(v as usize)
        };
        let s2c_levels = levels("options.s2c_levels")?;
        let c2s_levels = levels("options.c2s_levels")?;
        let at = r.offset();
        let dimension_switch = match r.u8("options.dimension_switch")? {
            0 => DimensionSwitch::PerCiphertext,
            1 => DimensionSwitch::WholeCiphertext,
            v => {
                return Err(r.out_of_range(
                    at,
                    "options.dimension_switch",
                    v as u64,
                    "0 (per ciphertext) or 1 (whole ciphertext)",
                ))
            }
        };
        let at = r.offset();
        let repacking = match r.u8("options.repacking")? {
            0 => Repacking::LinearTransform,
            1 => Repacking::RingPacking,
            v => {
                return Err(r.out_of_range(
                    at,
                    "options.repacking",
                    v as u64,
                    "0 (linear transform) or 1 (ring packing)",
                ))
            }
        };
        let at = r.offset();
        let blind_rotation = match r.u8("options.blind_rotation")? {
            255 => None,
            code => Some(blind_rotation_of_code(code).ok_or_else(|| {
                r.out_of_range(
                    at,
                    "options.blind_rotation",
                    code as u64,
                    "0 (ternary), 1 (binary), 2 (LMKCDEY) or 255 (the set's)",
                )
            })?),
        };
        let sparse_encapsulation = r.flag("options.sparse_encapsulation")?;
        let at = r.offset();
        let allow_insecure = r.flag("options.allow_insecure")?;
        if allow_insecure && !limits.allow_insecure {
            return Err(r.invalid_at(
                at,
                "options.allow_insecure",
                "refused: the options opt in to keys below 128 bits, and this reader does not \
                 allow insecure parameters (LoadLimits::allow_insecure)",
            ));
        }
        Ok(Self {
            slots,
            input_bound,
            s2c_levels,
            c2s_levels,
            dimension_switch,
            repacking,
            blind_rotation,
            sparse_encapsulation,
            allow_insecure,
        })
    }
}

// ---- Pipeline keys ------------------------------------------------------------------------------------

/// Layout bits of the keys' first byte (see the module documentation).
const PER_CIPHERTEXT: u8 = 1;
const WHOLE_CIPHERTEXT: u8 = 2;
const RING_PACKING: u8 = 4;
const ENCAPSULATION: u8 = 8;
const PAIR_ROTATIONS: u8 = 16;

/// The layout byte the keys of `params` and `options` have ([`PegasusKeys::generate_for`] makes the
/// dimension-switching key of the options' method, the repacking keys of their path, and the
/// encapsulation keys when [`encapsulation_weight`] says so).
fn expected_layout(params: &PipelineParams, options: &PipelineOptions) -> u8 {
    let switch = match options.dimension_switch {
        DimensionSwitch::PerCiphertext => PER_CIPHERTEXT,
        DimensionSwitch::WholeCiphertext => WHOLE_CIPHERTEXT,
    };
    let path = match options.repacking {
        Repacking::LinearTransform => 0,
        Repacking::RingPacking => RING_PACKING,
    };
    let encapsulation = if encapsulation_weight(params, options).is_some() {
        ENCAPSULATION
    } else {
        0
    };
    let pair = if has_pair_transform(params, options) {
        PAIR_ROTATIONS
    } else {
        0
    };
    switch | path | encapsulation | pair
}

/// `result` with its error's field under `prefix`.
fn prefixed<T>(prefix: &str, result: Result<T, DecodeError>) -> Result<T, DecodeError> {
    result.map_err(|e| DecodeError {
        field: format!("{prefix}.{}", e.field),
        ..e
    })
}

/// The outer writer seen as a byte sink by an embedded object's writer (the blind-rotation key):
/// `Serializable::write_to(&key, EmbeddedWriter::new(w), ..)` writes a whole sealed object into a
/// payload. Shared with the decision tree's server key (`rnsfhe-apps`).
pub struct EmbeddedWriter<'a, W: Write> {
    outer: &'a mut WireWriter<W>,
}

impl<'a, W: Write> EmbeddedWriter<'a, W> {
    /// A sink writing through `outer` (its count and digest include what goes through).
    pub fn new(outer: &'a mut WireWriter<W>) -> Self {
        Self { outer }
    }
}

impl<W: Write> Write for EmbeddedWriter<'_, W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.outer.bytes(buf)?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// Field names of the keys.
const KEYS: &str = "pegasus_keys";

impl KeysView<'_> {
    fn layout(&self) -> u8 {
        let ds = self.dimension_switch;
        let mut layout = 0;
        if ds.has(DimensionSwitch::PerCiphertext) {
            layout |= PER_CIPHERTEXT;
        }
        if ds.has(DimensionSwitch::WholeCiphertext) {
            layout |= WHOLE_CIPHERTEXT;
        }
        if let RepackingKeys::RingPacking { encapsulation, .. } = self.repacking {
            layout |= RING_PACKING;
            if encapsulation.is_some() {
                layout |= ENCAPSULATION;
            }
        }
        if self.pair_galois.is_some() {
            layout |= PAIR_ROTATIONS;
        }
        layout
    }

    fn payload_size(&self, randomness: PublicRandomness) -> u64 {
        let ds = self.dimension_switch;
        let mut size = 1
            + self.relin.payload_size(randomness)
            + self.galois.payload_size(randomness)
            + ds.per_ciphertext()
                .map_or(0, |k| k.payload_size(randomness))
            + ds.whole_ciphertext()
                .map_or(0, |k| k.gadget_ciphertext().wire_size(randomness))
            + self.blind_rotation.serialized_size_with(randomness)
            + self.pair_galois.map_or(0, |g| g.payload_size(randomness));
        size += match self.repacking {
            RepackingKeys::LinearTransform { back, key } => {
                back.payload_size(randomness) + key.ciphertext().payload_size(randomness)
            }
            RepackingKeys::RingPacking { key, encapsulation } => {
                key.switching_key().wire_size(randomness)
                    + key.galois_keys().payload_size(randomness)
                    + encapsulation
                        .as_ref()
                        .map_or(0, |e| e.payload_size(randomness))
            }
        };
        size
    }

    fn write_payload<W: Write>(
        &self,
        w: &mut WireWriter<W>,
        randomness: PublicRandomness,
    ) -> io::Result<()> {
        w.u8(self.layout())?;
        self.relin.write_payload(w, randomness)?;
        self.galois.write_payload(w, randomness)?;
        let ds = self.dimension_switch;
        if let Some(k) = ds.per_ciphertext() {
            k.write_payload(w, randomness)?;
        }
        if let Some(k) = ds.whole_ciphertext() {
            k.gadget_ciphertext().write_wire(w, randomness)?;
        }
        self.blind_rotation
            .write_to(EmbeddedWriter { outer: w }, randomness)?;
        match self.repacking {
            RepackingKeys::LinearTransform { back, key } => {
                back.write_payload(w, randomness)?;
                key.ciphertext().write_payload(w, randomness)?;
            }
            RepackingKeys::RingPacking { key, encapsulation } => {
                key.switching_key().write_wire(w, randomness)?;
                key.galois_keys().write_payload(w, randomness)?;
                if let Some(e) = encapsulation {
                    e.write_payload(w, randomness)?;
                }
            }
        }
        if let Some(g) = self.pair_galois {
            g.write_payload(w, randomness)?;
        }
        Ok(())
    }
}

/// The keys as the wire sees them, borrowed from a [`PegasusKeys`] or from a running
/// [`PegasusEvaluator`] (which holds them in its parts).
struct KeysView<'a> {
    relin: &'a RelinKey,
    galois: &'a GaloisKeys,
    pair_galois: Option<&'a GaloisKeys>,
    dimension_switch: &'a DimensionSwitchKeys,
    blind_rotation: &'a BlindRotationKey,
    repacking: &'a RepackingKeys,
}

impl PegasusKeys {
    fn view(&self) -> KeysView<'_> {
        KeysView {
            relin: &self.relin,
            galois: &self.galois,
            pair_galois: self.pair_galois.as_ref(),
            dimension_switch: &self.dimension_switch,
            blind_rotation: &self.blind_rotation,
            repacking: &self.repacking,
        }
    }

    /// The fingerprint the keys' header carries: that of the options for the parameters
    /// ([`PipelineOptions::fingerprint`]) under a tag of its own.
    pub fn wire_fingerprint(params: &PipelineParams, options: &PipelineOptions) -> u64 {
        fingerprint_words([KEYS_TAG, options.fingerprint(params)])
    }

    /// Payload size under `randomness` (seeded keys are about half their expanded size).
    pub fn payload_size(&self, randomness: PublicRandomness) -> u64 {
        self.view().payload_size(randomness)
    }

    /// Total size (header, payload, digest) of [`PegasusKeys::to_bytes_with`]'s output.
    pub fn serialized_size_with(&self, randomness: PublicRandomness) -> u64 {
        HEADER_LEN + self.payload_size(randomness) + rnsfhe_math::wire::DIGEST_LEN
    }

    /// Total size with seeds ([`PegasusKeys::to_bytes`]).
    pub fn serialized_size(&self) -> u64 {
        self.serialized_size_with(PublicRandomness::Seeded)
    }

    /// Writes the keys of `params` and `options` (header, payload, digest in the mode `integrity`) to
    /// `w`, streaming; returns the number of bytes written.
    ///
    /// Errors: I/O errors of the writer.
    pub fn write_to<W: Write>(
        &self,
        w: W,
        params: &PipelineParams,
        options: &PipelineOptions,
        randomness: PublicRandomness,
        integrity: Integrity<'_>,
    ) -> io::Result<u64> {
        rnsfhe_math::wire::write_object(
            w,
            kinds::PEGASUS_KEYS,
            Self::wire_fingerprint(params, options),
            self.payload_size(randomness),
            integrity,
            |w| self.view().write_payload(w, randomness),
        )
    }

    /// The keys as bytes with seeds, for the parameters and options they were made for.
    pub fn to_bytes(&self, params: &PipelineParams, options: &PipelineOptions) -> Vec<u8> {
        self.to_bytes_with(params, options, PublicRandomness::Seeded)
    }

    /// The keys as bytes under `randomness`.
    pub fn to_bytes_with(
        &self,
        params: &PipelineParams,
        options: &PipelineOptions,
        randomness: PublicRandomness,
    ) -> Vec<u8> {
        self.to_bytes_sealed(params, options, randomness, Integrity::Digest)
    }

    /// The keys as bytes under `randomness`, sealed in the mode `integrity` (a MAC under a shared key).
    pub fn to_bytes_sealed(
        &self,
        params: &PipelineParams,
        options: &PipelineOptions,
        randomness: PublicRandomness,
        integrity: Integrity<'_>,
    ) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.serialized_size_with(randomness) as usize);
        // Writing to a Vec cannot fail.
        let _ = self.write_to(&mut out, params, options, randomness, integrity);
        out
    }

    /// Loads the keys of `params` and `options` from exactly `bytes` (digest checked before anything
    /// else): the header's fingerprint must be that of both, the layout byte the one they imply, every
    /// key is read with the row counts and bases of the reader's parameters (residues below their
    /// moduli, Galois elements valid and increasing), the blind-rotation key as its own sealed object
    /// of the look-up-table ring (its algorithm and dimension those of the options).
    ///
    /// Errors: [`DecodeError`] naming the field and offset.
    pub fn from_bytes(
        bytes: &[u8],
        params: &PipelineParams,
        options: &PipelineOptions,
    ) -> Result<Self, DecodeError> {
        Self::from_bytes_sealed(bytes, params, options, Integrity::Digest)
    }

    /// [`PegasusKeys::from_bytes`], the digest checked in the mode `integrity`.
    ///
    /// Errors: [`DecodeError`] naming the field and offset.
    pub fn from_bytes_sealed(
        bytes: &[u8],
        params: &PipelineParams,
        options: &PipelineOptions,
        integrity: Integrity<'_>,
    ) -> Result<Self, DecodeError> {
        read_exactly(bytes, integrity, |r| Self::read_object(r, params, options))
    }

    /// [`PegasusKeys::from_bytes`] from a stream (which may continue after the keys; the digest is
    /// checked at their end): nothing beyond one polynomial is buffered, so multi-gigabyte key sets
    /// load without a second copy.
    ///
    /// Errors: [`DecodeError`] naming the field and offset.
    pub fn read_from<R: Read>(
        r: R,
        params: &PipelineParams,
        options: &PipelineOptions,
    ) -> Result<Self, DecodeError> {
        Self::read_object(&mut WireReader::new(r), params, options)
    }

    fn read_object<R: Read>(
        r: &mut WireReader<R>,
        params: &PipelineParams,
        options: &PipelineOptions,
    ) -> Result<Self, DecodeError> {
        let header = read_header(
            r,
            kinds::PEGASUS_KEYS,
            Some(Self::wire_fingerprint(params, options)),
        )?;
        let keys = Self::read_payload(r, params, options)?;
        r.check_digest(&header)?;
        Ok(keys)
    }

    fn read_payload<R: Read>(
        r: &mut WireReader<R>,
        params: &PipelineParams,
        options: &PipelineOptions,
    ) -> Result<Self, DecodeError> {
        let ckks: &Arc<CkksContext> = &params.ckks;
        let rlwe = ckks.rlwe();
        // The parameters are the reader's own (already validated): an error building what they imply
        // is reported at the key that needs it.
        let invalid = |r: &WireReader<R>, field: &str, e: &dyn std::fmt::Display| {
            r.invalid(&format!("{KEYS}.{field}"), e.to_string())
        };
        let at = r.offset();
        let layout = r.u8(&format!("{KEYS}.layout"))?;
        let expected = expected_layout(params, options);
        if layout != expected {
            return Err(r.out_of_range(
                at,
                &format!("{KEYS}.layout"),
                layout as u64,
                format!("{expected} for these parameters and options"),
            ));
        }
        let relin = prefixed(KEYS, RelinKey::read_payload(r, rlwe))?;
        let galois = prefixed(KEYS, GaloisKeys::read_payload(r, rlwe))?;
        let lwe = &params.lwe;
        let n_lwe = LweDimension::new(lwe.lwe_dimension).map_err(|e| invalid(r, "n_lwe", &e))?;
        let big_n = LweDimension::new(ckks.n()).map_err(|e| invalid(r, "N", &e))?;
        let per_ciphertext = if layout & PER_CIPHERTEXT != 0 {
            let ctx = LweSwitchingKeyContext::new(big_n, n_lwe, lwe.key_switch)
                .map_err(|e| invalid(r, "per_ciphertext", &e))?;
            Some(prefixed(
                &format!("{KEYS}.per_ciphertext"),
                LweSwitchingKey::read_payload(r, &ctx),
            )?)
        } else {
            None
        };
        let (algorithm, secret) = lwe_key_choice(params, options);
        let whole_ciphertext = if layout & WHOLE_CIPHERTEXT != 0 {
            let field = format!("{KEYS}.whole_ciphertext");
            let (fingerprint, digits) = RingSwitchingKey::wire_frame(ckks, n_lwe, &lwe.key_switch)
                .map_err(|e| invalid(r, "whole_ciphertext", &e))?;
            let key = GadgetCiphertext::read_wire(
                r,
                fingerprint,
                rnsfhe_core::Gadget::of_digits(&digits),
                digits.basis(),
                lwe.key_switch.digits,
                &field,
            )?;
            Some(
                RingSwitchingKey::from_wire(ckks, n_lwe, lwe.key_switch, secret, digits, key)
                    .map_err(|e| invalid(r, "whole_ciphertext", &e))?,
            )
        } else {
            None
        };
        let lut_ctx = super::lut_context(params, options).map_err(|e| invalid(r, "lut", &e))?;
        let at = r.offset();
        let blind_rotation = read_embedded(r, &format!("{KEYS}.blind_rotation"), |e| {
            BlindRotationKey::read_from(e, &lut_ctx)
        })?;
        if blind_rotation.algorithm() != algorithm || blind_rotation.lwe_dimension() != n_lwe {
            return Err(r.invalid_at(
                at,
                &format!("{KEYS}.blind_rotation"),
                format!(
                    "a {:?} key of dimension {}; the options need a {algorithm:?} key of dimension \
                     {n_lwe}",
                    blind_rotation.algorithm(),
                    blind_rotation.lwe_dimension()
                ),
            ));
        }
        let lut_n = LweDimension::new(lut_ctx.n()).map_err(|e| invalid(r, "lut", &e))?;
        let repacking = if layout & RING_PACKING == 0 {
            let ctx = LweSwitchingKeyContext::new(lut_n, n_lwe, lwe.key_switch)
                .map_err(|e| invalid(r, "back", &e))?;
            let back = prefixed(
                &format!("{KEYS}.back"),
                LweSwitchingKey::read_payload(r, &ctx),
            )?;
            let at = r.offset();
            let ct = prefixed(
                &format!("{KEYS}.repacking_key"),
                rnsfhe_ckks::Ciphertext::read_payload(r, ckks),
            )?;
            if ct.slots() != n_lwe.get() || ct.level() != ckks.max_level() {
                return Err(r.invalid_at(
                    at,
                    &format!("{KEYS}.repacking_key"),
                    format!(
                        "{} slots at level {}: the key holds the n_lwe = {n_lwe} coefficients of \
                         the LWE secret at the top level {}",
                        ct.slots(),
                        ct.level(),
                        ckks.max_level()
                    ),
                ));
            }
            RepackingKeys::LinearTransform {
                back: Box::new(back),
                key: Box::new(RepackingKey::from_wire(ct, n_lwe)),
            }
        } else {
            let packing = RingPackingKey::packing_context(ckks)
                .map_err(|e| invalid(r, "ring_packing", &e))?;
            let switching: KeySwitchKey = GadgetCiphertext::read_hybrid(
                r,
                &packing,
                &format!("{KEYS}.ring_packing.switching_key"),
            )?;
            let galois = prefixed(
                &format!("{KEYS}.ring_packing"),
                GaloisKeys::read_payload(r, &packing),
            )?;
            let key = RingPackingKey::from_keys(ckks, lut_n, switching, galois)
                .map_err(|e| invalid(r, "ring_packing", &e))?;
            let encapsulation = if layout & ENCAPSULATION != 0 {
                Some(Box::new(read_encapsulation_payload(
                    r,
                    ckks,
                    &format!("{KEYS}.encapsulation"),
                    encapsulation_weight(params, options),
                )?))
            } else {
                None
            };
            RepackingKeys::RingPacking {
                key: Box::new(key),
                encapsulation,
            }
        };
        let pair_galois = if layout & PAIR_ROTATIONS != 0 {
            Some(prefixed(
                &format!("{KEYS}.pair_rotations"),
                GaloisKeys::read_payload(r, rlwe),
            )?)
        } else {
            None
        };
        Ok(Self {
            relin,
            galois,
            pair_galois,
            dimension_switch: DimensionSwitchKeys::from_wire(
                ckks,
                per_ciphertext,
                whole_ciphertext,
            ),
            blind_rotation,
            repacking,
        })
    }
}

// ---- A running pipeline's keys ------------------------------------------------------------------------

impl PegasusEvaluator {
    /// The pipeline's keys as the wire sees them (the evaluator holds them in its parts).
    fn key_view(&self) -> PegasusResult<KeysView<'_>> {
        let missing = |key| PegasusError::MissingKey {
            operation: "writing the pipeline's keys",
            key,
        };
        Ok(KeysView {
            relin: self.ckks.relin().ok_or(missing("relinearization key"))?,
            galois: self.ckks.galois().ok_or(missing("Galois keys"))?,
            pair_galois: self.pair_ckks.as_ref().and_then(|e| e.galois()),
            dimension_switch: &self.dimension_switch,
            blind_rotation: self.lut.key(),
            repacking: &self.repacking,
        })
    }

    /// The size of [`PegasusEvaluator::keys_to_bytes`]'s output under `randomness`, without writing.
    ///
    /// Errors: [`PegasusError::MissingKey`] (never for a pipeline built by [`PegasusEvaluator::new`]).
    pub fn keys_serialized_size_with(&self, randomness: PublicRandomness) -> PegasusResult<u64> {
        Ok(HEADER_LEN + self.key_view()?.payload_size(randomness) + rnsfhe_math::wire::DIGEST_LEN)
    }

    /// The pipeline's evaluation keys as the bytes [`PegasusKeys::to_bytes_sealed`] writes for its
    /// parameters and options (a running pipeline sends its keys to a server without a second copy
    /// in memory; the server loads them with [`PegasusEvaluator::from_key_bytes`]).
    ///
    /// Errors: [`PegasusError::MissingKey`] (never for a pipeline built by [`PegasusEvaluator::new`]).
    pub fn keys_to_bytes(
        &self,
        randomness: PublicRandomness,
        integrity: Integrity<'_>,
    ) -> PegasusResult<Vec<u8>> {
        let view = self.key_view()?;
        let size = view.payload_size(randomness);
        let mut out =
            Vec::with_capacity((HEADER_LEN + size + rnsfhe_math::wire::DIGEST_LEN) as usize);
        // Writing to a Vec cannot fail.
        let _ = rnsfhe_math::wire::write_object(
            &mut out,
            kinds::PEGASUS_KEYS,
            PegasusKeys::wire_fingerprint(&self.params, &self.options),
            size,
            integrity,
            |w| view.write_payload(w, randomness),
        );
        Ok(out)
    }

    /// The pipeline of `params` and `options` with the keys of `bytes` ([`PegasusKeys::from_bytes_sealed`],
    /// then [`PegasusEvaluator::new`]): a server's pipeline from what the client sent.
    ///
    /// Errors: [`DecodeError`] naming the field and offset; a pipeline the keys do not fit is an error
    /// of the field `pegasus_keys`.
    pub fn from_key_bytes(
        params: PipelineParams,
        options: PipelineOptions,
        bytes: &[u8],
        integrity: Integrity<'_>,
    ) -> Result<Self, DecodeError> {
        let keys = PegasusKeys::from_bytes_sealed(bytes, &params, &options, integrity)?;
        PegasusEvaluator::new(params, options, keys).map_err(|e| {
            DecodeError::new(
                KEYS,
                HEADER_LEN,
                DecodeErrorKind::Invalid(format!("the keys do not make a pipeline: {e}")),
            )
        })
    }
}
