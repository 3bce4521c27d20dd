//! Wire encodings of the CKKS objects (header and conventions in [`rnsfhe_math::wire`], keys and
//! ciphertext parts in [`rnsfhe_core::serialization`]).
//!
//! Payloads after the 16-byte header:
//!
//! ```text
//! CkksParameters  u32 log_n | u32 log_scale | u32 q0_bits | u32 levels | u32 special_primes
//!                 | u32 special_bits | u32 dnum | secret distribution (u8 tag, u32 h) | f64 sigma
//!                 | u8 conversion | u8 rescaling (0 fixed nominal, 1 exact) | u8 flags (bit 0
//!                 insecure_for_testing, bit 1 bootstrapping primes follow)
//!                 [| u32 count (1..=MAX_BOOTSTRAP_PRIMES) | count x u8 bits (10..=61), bottom first]
//! CkksPlaintext   u32 level | f64 scale | u32 slots | m over Q_l (NTT form)
//! CkksCiphertext  f64 scale | u32 slots | parts (level, count, seeded flag, polynomials)
//! EncapsulationKeys  u32 weight h | key to the sparse secret (gadget ciphertext over q_0 P)
//!                 | key back to the CKKS secret (gadget ciphertext over Q P)
//! BootstrappingKeys  Galois keys (core's list) | u8 encapsulation present (0 or 1)
//!                 [| EncapsulationKeys payload]
//! ```
//!
//! The encapsulation keys carry no length: the weight `h` fixes the small context over `q_0 P`
//! ([`SparseEncapsulation::low_context`], the reader's own prime search), which fixes both keys' row
//! counts. The weight is read in `1..=N` and, unless the reader's CKKS context was made with
//! `insecure_for_testing`, refused if the key to the sparse secret falls below
//! [`crate::encapsulation::MIN_SECURITY_BITS`] (the policy of generation). PEGASUS's key set embeds the
//! same payload ([`read_encapsulation_payload`]).
//!
//! The bootstrapping primes ([`CkksParams::bootstrap_primes`]) are an optional trailing section announced
//! by bit 1 of the last byte (the `insecure_for_testing` flag until then): parameters without them are
//! written byte for byte as before, so every earlier object reads unchanged, and an earlier reader refuses
//! a set with them at that byte (a flag outside 0..=1) rather than misreading it.
//!
//! Parameters are stored as the literal [`CkksParams`]; loading rebuilds the context (the same prime
//! search, deterministic) and checks that its fingerprint is the one in the header, so a reader never
//! trusts moduli it did not derive itself. Keys load with `PublicKey::from_bytes(bytes, ctx.rlwe())`
//! (the RLWE context of the CKKS context) or the typed helpers on [`CkksContext`].

use std::io::{self, Read, Write};
use std::sync::Arc;

use rnsfhe_core::serialization::{
    ciphertext_parts_size, read_ciphertext_parts, read_conversion, read_flags,
    read_secret_distribution, read_sigma, write_ciphertext_parts, write_conversion,
    write_secret_distribution, write_seeded_parts, LoadLimits, ParamsCheck, WireParams,
};
use rnsfhe_core::{GadgetCiphertext, GaloisKeys, SeededRlweCiphertext};
use rnsfhe_math::wire::{
    DecodeError, Deserializable, Integrity, ObjectKind, PublicRandomness, Serializable,
    WireFingerprint, WireReader, WireWriter,
};
use rnsfhe_ring::{Ntt, Poly};

use crate::bootstrap::BootstrappingKeys;
use crate::context::{CkksContext, MAX_BOOTSTRAP_PRIMES};
use crate::encapsulation::{SparseEncapsulation, MIN_SECURITY_BITS};
use crate::params::{CkksParams, RescalingPolicy};
use crate::plaintext::{Ciphertext, Plaintext};

/// The wire object kinds of `rnsfhe-ckks` (parameters: code 1 of
/// [`rnsfhe_math::wire::kind_codes::SCHEME_PARAMETERS`]; the rest in [`rnsfhe_math::wire::kind_codes::CKKS`]).
/// Its keys are those of `rnsfhe-core` ([`rnsfhe_core::serialization::kinds`]).
pub mod kinds {
    use rnsfhe_math::wire::ObjectKind;

    /// CKKS parameters ([`crate::CkksParams`], a context's bytes).
    pub const CKKS_PARAMETERS: ObjectKind = ObjectKind::new(1, "CKKS parameters");
    /// A CKKS plaintext.
    pub const CKKS_PLAINTEXT: ObjectKind = ObjectKind::new(32, "CKKS plaintext");
    /// A CKKS ciphertext (also written by seeded symmetric ciphertexts).
    pub const CKKS_CIPHERTEXT: ObjectKind = ObjectKind::new(33, "CKKS ciphertext");
    /// The two keys of a sparse-secret encapsulation ([`crate::SparseEncapsulation`]).
    pub const ENCAPSULATION_KEYS: ObjectKind =
        ObjectKind::new(34, "CKKS sparse-secret encapsulation keys");
    /// The keys of bootstrapping ([`crate::BootstrappingKeys`]: Galois keys and the optional
    /// encapsulation).
    pub const BOOTSTRAPPING_KEYS: ObjectKind = ObjectKind::new(35, "CKKS bootstrapping keys");

    /// Every kind of this crate.
    pub const KINDS: [ObjectKind; 5] = [
        CKKS_PARAMETERS,
        CKKS_PLAINTEXT,
        CKKS_CIPHERTEXT,
        ENCAPSULATION_KEYS,
        BOOTSTRAPPING_KEYS,
    ];
}

/// The largest number of scaling primes or special primes a loaded parameter set may ask for (the
/// largest presets use 32 and 9): a bound on the prime search a hostile input can trigger.
pub const MAX_WIRE_PRIMES: u32 = 128;

/// Payload size of [`CkksParams`] without bootstrapping primes.
const PARAMS_PAYLOAD: u64 = 7 * 4 + 5 + 8 + 3;

/// Bit 0 of the flags byte: `insecure_for_testing`.
const FLAG_INSECURE: u8 = 1;
/// Bit 1 of the flags byte: the bootstrapping-prime section follows.
const FLAG_BOOTSTRAP_PRIMES: u8 = 2;

impl Serializable for CkksContext {
    const KIND: ObjectKind = kinds::CKKS_PARAMETERS;

    fn wire_fingerprint(&self) -> u64 {
        self.fingerprint()
    }

    fn payload_size(&self, _: PublicRandomness) -> u64 {
        let upper = self.params().bootstrap_primes.len() as u64;
        PARAMS_PAYLOAD + if upper > 0 { 4 + upper } else { 0 }
    }

    fn write_payload<W: Write>(
        &self,
        w: &mut WireWriter<W>,
        _: PublicRandomness,
    ) -> io::Result<()> {
        let p = self.params();
        for v in [p.log_n, p.log_scale, p.q0_bits] {
            w.u32(v)?;
        }
        w.u32(p.levels as u32)?;
        w.u32(p.special_primes as u32)?;
        w.u32(p.special_bits)?;
        w.u32(p.dnum as u32)?;
        write_secret_distribution(w, p.secret)?;
        w.f64(p.sigma)?;
        write_conversion(w, p.conversion)?;
        w.u8(match p.rescaling {
            RescalingPolicy::FixedNominalScale => 0,
            RescalingPolicy::ExactScale => 1,
        })?;
        let upper = &p.bootstrap_primes;
        let mut flags = if p.insecure_for_testing {
            FLAG_INSECURE
        } else {
            0
        };
        if !upper.is_empty() {
            flags |= FLAG_BOOTSTRAP_PRIMES;
        }
        w.u8(flags)?;
        if !upper.is_empty() {
            // A built context has at most MAX_BOOTSTRAP_PRIMES primes of at most 61 bits.
            w.u32(upper.len() as u32)?;
            for &bits in upper {
                w.u8(bits as u8)?;
            }
        }
        Ok(())
    }
}

impl WireFingerprint for CkksContext {
    fn wire_fingerprint_for(&self, version: u16) -> u64 {
        self.rlwe().wire_fingerprint_for(version)
    }
}

impl CkksContext {
    /// Reads parameters written by [`Serializable::write_to`] on a context and builds the context under
    /// the default [`LoadLimits`] ([`WireParams::read_context`]): every field's range, the limits, the
    /// fingerprint against the header (after the prime search, before any table) and the security
    /// verdict are checked before anything expensive; the digest at the end of the object.
    pub fn read_from<R: Read>(r: R) -> Result<Arc<Self>, DecodeError> {
        Self::read_from_with(r, &LoadLimits::default())
    }

    /// [`CkksContext::read_from`] under `limits`.
    pub fn read_from_with<R: Read>(r: R, limits: &LoadLimits) -> Result<Arc<Self>, DecodeError> {
        CkksParams::read_context(&mut WireReader::new(r), limits)
    }

    /// [`CkksContext::read_from`] of exactly `bytes` (the digest is checked first).
    pub fn from_bytes(bytes: &[u8]) -> Result<Arc<Self>, DecodeError> {
        Self::from_bytes_with(bytes, &LoadLimits::default())
    }

    /// [`CkksContext::from_bytes`] under `limits` (e.g. [`LoadLimits::allowing_insecure`] for the
    /// paper's presets, or larger sizes for trusted bytes).
    pub fn from_bytes_with(bytes: &[u8], limits: &LoadLimits) -> Result<Arc<Self>, DecodeError> {
        CkksParams::context_from_bytes(bytes, limits)
    }

    /// [`CkksContext::from_bytes_with`], the digest checked in the mode `integrity` (a MAC under a
    /// shared key).
    pub fn from_bytes_sealed(
        bytes: &[u8],
        limits: &LoadLimits,
        integrity: Integrity<'_>,
    ) -> Result<Arc<Self>, DecodeError> {
        CkksParams::context_from_bytes_sealed(bytes, limits, integrity)
    }
}

impl CkksParams {
    /// Decodes serialized parameters (a context's bytes) **without** building the context: the literal
    /// parameters and the fingerprint the header announces. Every field is range-checked; building the
    /// context ([`CkksContext::new`]) is left to the caller, who may refuse sizes it does not want to
    /// afford ([`CkksContext::from_bytes_with`] and its [`LoadLimits`] do that).
    pub fn from_bytes(bytes: &[u8]) -> Result<(Self, u64), DecodeError> {
        Self::decode_params(bytes)
    }
}

impl WireParams for CkksParams {
    const KIND: ObjectKind = kinds::CKKS_PARAMETERS;
    type Context = Arc<CkksContext>;
    type BuildError = crate::Error;

    fn read_params<R: Read>(r: &mut WireReader<R>) -> Result<Self, DecodeError> {
        read_params(r)
    }

    fn size(&self) -> (u32, usize) {
        (self.log_n, self.chain_len() + self.special_primes)
    }

    fn check(&self) -> Result<ParamsCheck, crate::Error> {
        let rlwe = self.rlwe_params()?;
        Ok(ParamsCheck {
            fingerprints: rlwe.fingerprints(),
            security: rnsfhe_core::security::estimate(
                self.n(),
                rlwe.log2_qp(),
                self.secret,
                self.sigma,
            ),
        })
    }

    fn build(self) -> Result<Arc<CkksContext>, crate::Error> {
        CkksContext::new(self)
    }
}

fn read_params<R: Read>(r: &mut WireReader<R>) -> Result<CkksParams, DecodeError> {
    let log_n = r.u32_in("params.log_n", 10..=17, "log2 N")?;
    let log_scale = r.u32_in("params.log_scale", 10..=60, "log2 of the scale")?;
    let q0_bits = r.u32_in("params.q0_bits", 10..=61, "bits of q_0")?;
    let levels = r.u32_in("params.levels", 0..=MAX_WIRE_PRIMES, "scaling primes")? as usize;
    let special_primes = r.u32_in(
        "params.special_primes",
        1..=MAX_WIRE_PRIMES,
        "special primes",
    )? as usize;
    let special_bits = r.u32_in("params.special_bits", 10..=61, "bits of a special prime")?;
    // dnum is checked against the whole chain once the bootstrapping primes (after it) are read.
    let dnum_at = r.offset();
    let dnum = r.u32_in(
        "params.dnum",
        1..=levels as u32 + 1 + MAX_BOOTSTRAP_PRIMES as u32,
        "digit groups",
    )? as usize;
    let secret = read_secret_distribution(r, 1 << log_n, "params.secret")?;
    let sigma = read_sigma(r, "params.sigma")?;
    let conversion = read_conversion(r, "params.conversion")?;
    let at = r.offset();
    let rescaling = match r.u8("params.rescaling")? {
        0 => RescalingPolicy::FixedNominalScale,
        1 => RescalingPolicy::ExactScale,
        v => {
            return Err(r.out_of_range(
                at,
                "params.rescaling",
                v as u64,
                "0 (fixed nominal) or 1 (exact)",
            ))
        }
    };
    let flags = read_flags(
        r,
        "params.flags",
        FLAG_INSECURE | FLAG_BOOTSTRAP_PRIMES,
        "bit 0 (insecure_for_testing) and bit 1 (bootstrapping primes) only",
    )?;
    let insecure_for_testing = flags & FLAG_INSECURE != 0;
    let bootstrap_primes = if flags & FLAG_BOOTSTRAP_PRIMES != 0 {
        let count = r.u32_in(
            "params.bootstrap_primes.count",
            1..=MAX_BOOTSTRAP_PRIMES as u32,
            "bootstrapping primes (announced by flag bit 1)",
        )?;
        (0..count)
            .map(|i| {
                let at = r.offset();
                let field = format!("params.bootstrap_primes[{i}]");
                match r.u8(&field)? {
                    b @ 10..=61 => Ok(u32::from(b)),
                    b => Err(r.out_of_range(at, &field, b as u64, "10..=61 bits")),
                }
            })
            .collect::<Result<Vec<u32>, DecodeError>>()?
    } else {
        Vec::new()
    };
    let chain = levels + 1 + bootstrap_primes.len();
    if dnum > chain {
        return Err(r.out_of_range(
            dnum_at,
            "params.dnum",
            dnum as u64,
            format!("1..={chain} (the primes of Q)"),
        ));
    }
    Ok(CkksParams {
        log_n,
        log_scale,
        q0_bits,
        levels,
        bootstrap_primes,
        special_primes,
        special_bits,
        dnum,
        secret,
        sigma,
        conversion,
        rescaling,
        insecure_for_testing,
    })
}

/// Reads a scale (finite, at least 1) and a slot count (a power of two up to `N/2`).
fn read_scale_and_slots<R: Read>(
    r: &mut WireReader<R>,
    ctx: &CkksContext,
    field: &str,
) -> Result<(f64, usize), DecodeError> {
    let at = r.offset();
    let scale = r.f64(&format!("{field}.scale"))?;
    if !(scale.is_finite() && scale >= 1.0) {
        return Err(r.invalid_at(
            at,
            &format!("{field}.scale"),
            format!("scale {scale} must be finite and at least 1"),
        ));
    }
    let at = r.offset();
    let slots = r.u32(&format!("{field}.slots"))? as usize;
    if !slots.is_power_of_two() || slots > ctx.max_slots() {
        return Err(r.out_of_range(
            at,
            &format!("{field}.slots"),
            slots as u64,
            format!("a power of two up to N/2 = {}", ctx.max_slots()),
        ));
    }
    Ok((scale, slots))
}

impl Serializable for Plaintext {
    const KIND: ObjectKind = kinds::CKKS_PLAINTEXT;

    fn wire_fingerprint(&self) -> u64 {
        self.fingerprint()
    }

    fn payload_size(&self, _: PublicRandomness) -> u64 {
        16 + self.poly().wire_size()
    }

    fn write_payload<W: Write>(
        &self,
        w: &mut WireWriter<W>,
        _: PublicRandomness,
    ) -> io::Result<()> {
        w.u32(self.level() as u32)?;
        w.f64(self.scale())?;
        w.u32(self.slots() as u32)?;
        self.poly().write_wire(w)
    }
}

impl Deserializable<CkksContext> for Plaintext {
    fn read_payload<R: Read>(
        r: &mut WireReader<R>,
        ctx: &CkksContext,
    ) -> Result<Self, DecodeError> {
        let level = r.u32_in(
            "plaintext.level",
            1..=ctx.max_level() as u32,
            "a level of the chain",
        )? as usize;
        let (scale, slots) = read_scale_and_slots(r, ctx, "plaintext")?;
        let basis = ctx
            .rlwe()
            .basis_at(level)
            .map_err(|e| r.invalid("plaintext.level", e.to_string()))?;
        let poly = Poly::<Ntt>::read_wire(r, basis, "plaintext.poly")?;
        Ok(Plaintext::from_parts(poly, scale, slots, ctx.fingerprint()))
    }
}

impl Serializable for Ciphertext {
    const KIND: ObjectKind = kinds::CKKS_CIPHERTEXT;

    fn wire_fingerprint(&self) -> u64 {
        self.fingerprint()
    }

    fn payload_size(&self, _: PublicRandomness) -> u64 {
        let basis = self.inner.parts[0].basis();
        12 + ciphertext_parts_size(basis, self.part_count(), false)
    }

    fn write_payload<W: Write>(
        &self,
        w: &mut WireWriter<W>,
        _: PublicRandomness,
    ) -> io::Result<()> {
        w.f64(self.scale())?;
        w.u32(self.slots() as u32)?;
        write_ciphertext_parts(w, &self.inner)
    }
}

impl Deserializable<CkksContext> for Ciphertext {
    fn read_payload<R: Read>(
        r: &mut WireReader<R>,
        ctx: &CkksContext,
    ) -> Result<Self, DecodeError> {
        let (scale, slots) = read_scale_and_slots(r, ctx, "ciphertext")?;
        let inner = read_ciphertext_parts(r, ctx.rlwe(), "ciphertext")?;
        Ok(Ciphertext::from_parts(
            inner,
            scale,
            slots,
            ctx.fingerprint(),
        ))
    }
}

/// A fresh secret-key CKKS ciphertext whose uniform part is kept as a 32-byte seed
/// ([`crate::CkksEncryptor::encrypt_seeded`]): about half the size of a [`Ciphertext`] on the wire and
/// written as one, so the receiver loads it with [`Ciphertext::from_bytes`]. It supports no arithmetic;
/// [`SeededCiphertext::expand`] gives the full ciphertext.
#[derive(Clone, Debug, PartialEq)]
pub struct SeededCiphertext {
    pub(crate) inner: SeededRlweCiphertext,
    pub(crate) scale: f64,
    pub(crate) slots: usize,
    pub(crate) fingerprint: u64,
}

impl SeededCiphertext {
    /// The level (limb count).
    pub fn level(&self) -> usize {
        self.inner.level()
    }

    /// The exact scale.
    pub fn scale(&self) -> f64 {
        self.scale
    }

    /// Number of slots.
    pub fn slots(&self) -> usize {
        self.slots
    }

    /// The full ciphertext (expands the seed).
    ///
    /// Errors: [`crate::Error::Core`] only if the basis were inconsistent.
    pub fn expand(&self) -> crate::Result<Ciphertext> {
        Ok(Ciphertext::from_parts(
            self.inner.expand()?,
            self.scale,
            self.slots,
            self.fingerprint,
        ))
    }
}

impl Serializable for SeededCiphertext {
    const KIND: ObjectKind = kinds::CKKS_CIPHERTEXT;

    fn wire_fingerprint(&self) -> u64 {
        self.fingerprint
    }

    fn payload_size(&self, randomness: PublicRandomness) -> u64 {
        let seeded = randomness == PublicRandomness::Seeded;
        12 + ciphertext_parts_size(self.inner.c0().basis(), 2, seeded)
    }

    fn write_payload<W: Write>(
        &self,
        w: &mut WireWriter<W>,
        randomness: PublicRandomness,
    ) -> io::Result<()> {
        w.f64(self.scale)?;
        w.u32(self.slots as u32)?;
        write_seeded_parts(w, &self.inner, randomness)
    }
}

impl Serializable for SparseEncapsulation {
    const KIND: ObjectKind = kinds::ENCAPSULATION_KEYS;

    fn wire_fingerprint(&self) -> u64 {
        self.to_dense_key().fingerprint()
    }

    fn payload_size(&self, randomness: PublicRandomness) -> u64 {
        4 + self.keys_wire_size(randomness)
    }

    fn write_payload<W: Write>(
        &self,
        w: &mut WireWriter<W>,
        randomness: PublicRandomness,
    ) -> io::Result<()> {
        // A weight above N cannot be generated (the core refuses the sparse secret).
        w.u32(self.weight() as u32)?;
        self.to_sparse_key().write_wire(w, randomness)?;
        self.to_dense_key().write_wire(w, randomness)
    }
}

/// Reads the payload of [`SparseEncapsulation`] for `ckks`, its errors under `field` (`field.weight`,
/// `field.to_sparse`, `field.to_dense`). With `expected_weight` (a reader whose own options fix the
/// weight, as PEGASUS's key set) any other weight is refused; without it the weight must lie in
/// `1..=N` and give a key to the sparse secret of at least [`MIN_SECURITY_BITS`] unless `ckks` was made
/// with `insecure_for_testing`.
///
/// Errors: [`DecodeError`] naming the field and offset: a weight out of range or too weak, the errors
/// of the two gadget ciphertexts (truncation, residues out of range), keys of other contexts.
pub fn read_encapsulation_payload<R: Read>(
    r: &mut WireReader<R>,
    ckks: &CkksContext,
    field: &str,
    expected_weight: Option<usize>,
) -> Result<SparseEncapsulation, DecodeError> {
    let weight_field = format!("{field}.weight");
    let at = r.offset();
    let weight = match expected_weight {
        Some(expected) => {
            let weight = r.u32(&weight_field)? as usize;
            if weight != expected {
                return Err(r.out_of_range(
                    at,
                    &weight_field,
                    weight as u64,
                    format!("{:?}, the options' sparse-secret weight", Some(expected)),
                ));
            }
            weight
        }
        None => {
            let n = ckks.n() as u32;
            let weight = r.u32_in(
                &weight_field,
                1..=n,
                &format!("a Hamming weight from 1 to N = {n}"),
            )? as usize;
            if !ckks.params().insecure_for_testing {
                let bits = SparseEncapsulation::security(ckks, weight)
                    .map_err(|e| r.invalid_at(at, &weight_field, e.to_string()))?
                    .security_bits();
                if bits < MIN_SECURITY_BITS {
                    return Err(r.out_of_range(
                        at,
                        &weight_field,
                        weight as u64,
                        format!(
                            "a weight whose key to the sparse secret reaches {MIN_SECURITY_BITS} \
                             bits (this one: {bits:.1}); load into a context made with \
                             insecure_for_testing to accept it"
                        ),
                    ));
                }
            }
            weight
        }
    };
    let low = SparseEncapsulation::low_context(ckks, weight)
        .map_err(|e| r.invalid(field, e.to_string()))?;
    let to_sparse = GadgetCiphertext::read_hybrid(r, &low, &format!("{field}.to_sparse"))?;
    let to_dense = GadgetCiphertext::read_hybrid(r, ckks.rlwe(), &format!("{field}.to_dense"))?;
    SparseEncapsulation::from_keys(ckks, weight, to_sparse, to_dense)
        .map_err(|e| r.invalid(field, e.to_string()))
}

impl Deserializable<CkksContext> for SparseEncapsulation {
    fn read_payload<R: Read>(
        r: &mut WireReader<R>,
        ctx: &CkksContext,
    ) -> Result<Self, DecodeError> {
        read_encapsulation_payload(r, ctx, "encapsulation", None)
    }
}

impl Serializable for BootstrappingKeys {
    const KIND: ObjectKind = kinds::BOOTSTRAPPING_KEYS;

    fn wire_fingerprint(&self) -> u64 {
        self.galois.wire_fingerprint()
    }

    fn payload_size(&self, randomness: PublicRandomness) -> u64 {
        self.galois.payload_size(randomness)
            + 1
            + self
                .encapsulation
                .as_ref()
                .map_or(0, |e| e.payload_size(randomness))
    }

    fn write_payload<W: Write>(
        &self,
        w: &mut WireWriter<W>,
        randomness: PublicRandomness,
    ) -> io::Result<()> {
        self.galois.write_payload(w, randomness)?;
        w.u8(self.encapsulation.is_some() as u8)?;
        if let Some(e) = &self.encapsulation {
            e.write_payload(w, randomness)?;
        }
        Ok(())
    }
}

impl Deserializable<CkksContext> for BootstrappingKeys {
    fn read_payload<R: Read>(
        r: &mut WireReader<R>,
        ctx: &CkksContext,
    ) -> Result<Self, DecodeError> {
        let galois = GaloisKeys::read_payload(r, ctx.rlwe())?;
        let encapsulation = if r.flag("bootstrapping_keys.encapsulation_present")? {
            Some(Arc::new(read_encapsulation_payload(
                r,
                ctx,
                "bootstrapping_keys.encapsulation",
                None,
            )?))
        } else {
            None
        };
        Ok(BootstrappingKeys {
            galois: Arc::new(galois),
            encapsulation,
        })
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn kinds_stay_in_the_crates_range() {
        assert!(rnsfhe_math::wire::kind_codes::SCHEME_PARAMETERS
            .contains(&kinds::CKKS_PARAMETERS.code()));
        for kind in &kinds::KINDS[1..] {
            assert!(
                rnsfhe_math::wire::kind_codes::CKKS.contains(&kind.code()),
                "{kind}"
            );
        }
    }
    use crate::{CkksDecryptor, CkksEncryptor, Csprng, KeyGenerator};
    use rnsfhe_core::SecretDistribution;
    use rnsfhe_ring::ConversionMode;

    fn params() -> CkksParams {
        CkksParams {
            log_n: 11,
            log_scale: 40,
            q0_bits: 50,
            levels: 2,
            bootstrap_primes: Vec::new(),
            special_primes: 1,
            special_bits: 50,
            dnum: 3,
            secret: SecretDistribution::Ternary,
            sigma: 3.2,
            conversion: ConversionMode::Fast,
            rescaling: RescalingPolicy::ExactScale,
            insecure_for_testing: true,
        }
    }

    #[test]
    fn encapsulation_and_bootstrapping_keys_round_trip_and_bad_weights_are_refused() {
        let ctx = CkksContext::new(params()).unwrap();
        let mut rng = Csprng::insecure_from_seed_for_tests([9; 32]);
        let kg = KeyGenerator::new(&ctx, &mut rng).unwrap();
        let enc = Arc::new(
            SparseEncapsulation::generate(&ctx, kg.secret_key(), 8, true, &mut rng).unwrap(),
        );
        let bytes = enc.to_bytes();
        assert_eq!(bytes.len() as u64, enc.serialized_size());
        let back = SparseEncapsulation::from_bytes(&bytes, &ctx).unwrap();
        assert_eq!(back.weight(), 8);
        assert!(back.to_bytes() == bytes, "re-serialized bytes differ");
        // Seeds halve the `a` parts: the expanded form is about twice as large.
        let full = enc.to_bytes_with(PublicRandomness::Expanded);
        assert!(
            full.len() > bytes.len() * 19 / 10,
            "{} {}",
            full.len(),
            bytes.len()
        );
        // Loaded from expanded bytes, the keys have no seed to keep: they write the expanded form.
        let again = SparseEncapsulation::from_bytes(&full, &ctx).unwrap();
        assert!(again.to_bytes_with(PublicRandomness::Expanded) == full);
        for boot in [
            BootstrappingKeys {
                galois: kg.galois_keys(&[1, 2], true, &mut rng).unwrap().into(),
                encapsulation: Some(Arc::clone(&enc)),
            },
            BootstrappingKeys {
                galois: kg.galois_keys(&[1], false, &mut rng).unwrap().into(),
                encapsulation: None,
            },
        ] {
            let bytes = boot.to_bytes();
            assert_eq!(bytes.len() as u64, boot.serialized_size());
            let back = BootstrappingKeys::from_bytes(&bytes, &ctx).unwrap();
            assert_eq!(back.galois.elements(), boot.galois.elements());
            assert_eq!(back.encapsulation.is_some(), boot.encapsulation.is_some());
            assert!(back.to_bytes() == bytes, "re-serialized bytes differ");
        }
        // A weight outside 1..=N, resealed so that the digest passes: refused at the weight.
        for weight in [0u32, 2049] {
            let mut edited = bytes.clone();
            edited[16..20].copy_from_slice(&weight.to_le_bytes());
            rnsfhe_math::wire::reseal(&mut edited);
            let err = SparseEncapsulation::from_bytes(&edited, &ctx).unwrap_err();
            assert_eq!(
                (err.field.as_str(), err.offset),
                ("encapsulation.weight", 16)
            );
        }
        // In a context without `insecure_for_testing` (N = 2^12, log2 QP = 100: 128-bit by the HE
        // Standard) the weight's security is estimated on load: h = 32 over q_0 P passes (the
        // estimator gives about 160 bits; even h = 1 gives 155 here, so the refusal below 128 bits,
        // the policy of generation, is not reachable at a size a unit test affords).
        let secure = CkksContext::new(CkksParams {
            log_n: 12,
            log_scale: 30,
            q0_bits: 35,
            levels: 1,
            special_bits: 35,
            dnum: 2,
            insecure_for_testing: false,
            ..params()
        })
        .unwrap();
        let kg = KeyGenerator::new(&secure, &mut rng).unwrap();
        let enc = SparseEncapsulation::generate(&secure, kg.secret_key(), 32, false, &mut rng)
            .unwrap()
            .to_bytes();
        let back = SparseEncapsulation::from_bytes(&enc, &secure).unwrap();
        assert_eq!(back.weight(), 32);
        // Keys of another context are refused by the header's fingerprint.
        let err = SparseEncapsulation::from_bytes(&bytes, &secure).unwrap_err();
        assert_eq!(err.field, "header.fingerprint");
    }

    #[test]
    fn context_plaintext_and_ciphertexts_round_trip() {
        let ctx = CkksContext::new(params()).unwrap();
        let bytes = ctx.to_bytes();
        assert_eq!(bytes.len() as u64, ctx.serialized_size());
        // Insecure parameters load only when the reader allows them itself.
        let err = CkksContext::from_bytes(&bytes).unwrap_err();
        assert_eq!(err.field, "parameters");
        assert!(err.to_string().contains("allow_insecure"), "{err}");
        let back =
            CkksContext::from_bytes_with(&bytes, &LoadLimits::DEFAULT.allowing_insecure()).unwrap();
        assert_eq!(back.fingerprint(), ctx.fingerprint());
        let (params, fingerprint) = CkksParams::from_bytes(&bytes).unwrap();
        assert_eq!((params, fingerprint), (self::params(), ctx.fingerprint()));

        let mut rng = Csprng::insecure_from_seed_for_tests([3; 32]);
        let kg = KeyGenerator::new(&ctx, &mut rng).unwrap();
        let values = [1.5, -2.25, 3.0];
        let pt = ctx.encode_real(&values, 4, 2).unwrap();
        let pt_back = Plaintext::from_bytes(&pt.to_bytes(), &ctx).unwrap();
        assert_eq!(pt_back, pt);

        let enc = CkksEncryptor::with_secret_key(&ctx, kg.secret_key()).unwrap();
        let dec = CkksDecryptor::new(&ctx, kg.secret_key()).unwrap();
        let ct = enc.encrypt(&values[..], &mut rng).unwrap();
        let ct_back = Ciphertext::from_bytes(&ct.to_bytes(), &ctx).unwrap();
        assert_eq!(ct_back, ct);

        let seeded = enc.encrypt_seeded(&values[..], &mut rng).unwrap();
        let small = seeded.to_bytes();
        let full = seeded.expand().unwrap().to_bytes();
        assert_eq!(small.len() as u64, seeded.serialized_size());
        let ratio = small.len() as f64 / full.len() as f64;
        assert!((0.49..0.51).contains(&ratio), "seeded / full = {ratio}");
        let loaded = Ciphertext::from_bytes(&small, &ctx).unwrap();
        assert_eq!(loaded, seeded.expand().unwrap());
        let got = dec.decrypt_real(&loaded).unwrap();
        for (g, v) in got.iter().zip(values) {
            assert!((g - v).abs() < 1e-6, "{g} vs {v}");
        }
    }

    /// Bootstrapping primes travel in the optional section after the flags byte; parameters without
    /// them are written as before (flags byte 0 or 1, nothing after it), and every field of the section
    /// is range-checked.
    #[test]
    fn bootstrapping_primes_round_trip_and_hostile_sections_are_refused() {
        use rnsfhe_math::wire::digest_of;
        let plain = CkksContext::new(params()).unwrap();
        let bytes = plain.to_bytes();
        let payload_end = bytes.len() - 32;
        assert_eq!(payload_end as u64, 16 + PARAMS_PAYLOAD);
        assert_eq!(bytes[payload_end - 1], FLAG_INSECURE);

        let upper = CkksParams {
            bootstrap_primes: vec![40, 55, 55, 50],
            dnum: 7,
            ..params()
        };
        let ctx = CkksContext::new(upper.clone()).unwrap();
        let bytes = ctx.to_bytes();
        assert_eq!(bytes.len() as u64, ctx.serialized_size());
        assert_eq!(bytes.len() as u64, 16 + PARAMS_PAYLOAD + 4 + 4 + 32);
        let (read, fingerprint) = CkksParams::from_bytes(&bytes).unwrap();
        assert_eq!((read, fingerprint), (upper, ctx.fingerprint()));
        let back =
            CkksContext::from_bytes_with(&bytes, &LoadLimits::DEFAULT.allowing_insecure()).unwrap();
        assert_eq!(back.q_moduli(), ctx.q_moduli());

        // Edits of the payload, sealed again so that they reach the field they target.
        let flags_at = 16 + PARAMS_PAYLOAD as usize - 1;
        let edit = |at: usize, v: &[u8]| {
            let mut body = bytes[..bytes.len() - 32].to_vec();
            body.splice(at..at + v.len(), v.iter().copied());
            let digest = digest_of(&body, rnsfhe_math::wire::Integrity::Digest);
            [body, digest.to_vec()].concat()
        };
        let refused = |b: Vec<u8>, field: &str| {
            let err = CkksParams::from_bytes(&b).unwrap_err();
            assert_eq!(err.field, field, "{err}");
        };
        refused(edit(flags_at, &[4 | 3]), "params.flags");
        refused(
            edit(flags_at + 1, &0u32.to_le_bytes()),
            "params.bootstrap_primes.count",
        );
        refused(
            edit(flags_at + 1, &65u32.to_le_bytes()),
            "params.bootstrap_primes.count",
        );
        refused(edit(flags_at + 5, &[9]), "params.bootstrap_primes[0]");
        refused(edit(flags_at + 8, &[62]), "params.bootstrap_primes[3]");
        // dnum fits levels + 1 + 64 at its own offset but not the chain of 7 primes.
        refused(edit(40, &8u32.to_le_bytes()), "params.dnum");
        refused(edit(40, &70u32.to_le_bytes()), "params.dnum");
        // A section the flags do not announce is bytes after the object's end.
        assert!(CkksParams::from_bytes(&edit(flags_at, &[1])).is_err());
        // A section announced but absent (the flag set on parameters without one).
        let mut body = plain.to_bytes()[..payload_end].to_vec();
        body[payload_end - 1] |= FLAG_BOOTSTRAP_PRIMES;
        let digest = digest_of(&body, rnsfhe_math::wire::Integrity::Digest);
        refused(
            [body, digest.to_vec()].concat(),
            "params.bootstrap_primes.count",
        );
    }

    #[test]
    fn objects_of_other_parameters_are_refused() {
        let ctx = CkksContext::new(params()).unwrap();
        let other = CkksContext::new(CkksParams {
            levels: 1,
            dnum: 2,
            ..params()
        })
        .unwrap();
        let pt = ctx.encode_real(&[1.0], 1, 1).unwrap();
        let err = Plaintext::from_bytes(&pt.to_bytes(), &other).unwrap_err();
        assert_eq!(err.field, "header.fingerprint");
        assert!(err.to_string().contains("other parameters"), "{err}");
    }

    /// Sample extraction reads coefficients: a CKKS ciphertext's RLWE part (NTT form, also one loaded
    /// from the wire) converts to the coefficient form, whose phase is the decrypted plaintext's inverse
    /// transform, and back to the same ciphertext.
    #[test]
    fn ciphertexts_convert_to_the_coefficient_form() {
        let ctx = CkksContext::new(params()).unwrap();
        let mut rng = Csprng::insecure_from_seed_for_tests([4; 32]);
        let kg = KeyGenerator::new(&ctx, &mut rng).unwrap();
        let pk = kg.public_key(&mut rng).unwrap();
        let enc = CkksEncryptor::with_public_key(&ctx, &pk).unwrap();
        let dec = CkksDecryptor::new(&ctx, kg.secret_key()).unwrap();
        let ct = enc.encrypt(&[0.5, -1.25][..], &mut rng).unwrap();
        let loaded = Ciphertext::from_bytes(&ct.to_bytes(), &ctx).unwrap();
        let coeff = loaded.inner.clone().into_coeff();
        let core = rnsfhe_core::Decryptor::new(ctx.rlwe(), kg.secret_key()).unwrap();
        let expected = dec
            .decrypt_plaintext(&ct)
            .unwrap()
            .poly()
            .clone()
            .into_coeff();
        assert_eq!(core.phase(&coeff).unwrap(), expected);
        assert_eq!(coeff.into_ntt(), ct.inner);
    }
}
