//! Wire encodings of the BFV objects (header and conventions in [`rnsfhe_math::wire`], key pairs,
//! Galois lists and ciphertext polynomials in [`rnsfhe_core::serialization`]).
//!
//! Payloads after the 16-byte header:
//!
//! ```text
//! BfvParameters  u32 log_n | u64 t | u32 k | k x u64 q_i | u32 k' | k' x u64 p_j
//!                | u16 relin_base_log (0 = plain CRT) | u16 galois_base_log (0 = the relinearization
//!                decomposition; older writers always wrote 0 here) | f64 sigma | u8 conversion (1 exact
//!                float, 2 exact integer) | u8 flags (bit 0 insecure_for_testing, bit 1 hybrid key
//!                switching; older writers wrote 0 or 1) | if bit 1: u32 dnum | u32 k'' | k'' x u64 special
//!                prime
//! BfvPlaintext   u8 width (1..=bits of t - 1) | N coefficients, each < t, packed at `width` bits
//!                (the writer uses the bit length of the largest coefficient: small integers in the
//!                coefficient encoding cost a few bits each)
//! BfvCiphertext  u8 count (2..=3) | u8 seeded (count must be 2) | c_0 over Q (coefficient form)
//!                | seed[32] if seeded, else c_1 | c_2 if count = 3
//! BfvRelinKey    key pairs (u8 seeded | beta_0 .. beta_{d-1} | seed[32] or alpha_0 .. alpha_{d-1}),
//!                d from the context: k x digits pairs over Q (NTT form) with CRT key switching, dnum
//!                pairs over Q ∪ P_ks with hybrid key switching
//! BfvGaloisKeys  u32 count (<= N) | count x ( u32 element (odd, < 2N, increasing) | key pairs )
//! ```
//!
//! Parameters travel as the literal [`BfvParams`] (explicit primes, conversion mode, relinearization
//! digits, the insecure opt-in); loading rebuilds the context and checks that its fingerprint is the one
//! in the header. Secret and public keys are those of `rnsfhe-core` over [`BfvContext::rlwe`]; they load
//! with [`BfvContext::public_key_from_bytes`] / [`BfvContext::secret_key_from_bytes`] (or the core
//! functions with `ctx.rlwe()`). BFV has no levels: ciphertexts always live over the whole `Q`, so no
//! level is written. Plaintexts carry only their coefficients: both encoders produce the same
//! [`Plaintext`] and decode it with the context alone (`t`, `N`, the batching tables).

use std::io::{self, Read, Write};
use std::sync::Arc;

use rnsfhe_core::serialization::{
    galois_list_size, parts_size, read_conversion, read_flags, read_galois_list, read_parts,
    read_sigma, write_conversion, write_galois_list, write_parts, write_seeded_pair, LoadLimits,
    ParamsCheck, WireParams,
};
use rnsfhe_core::{
    Gadget, GadgetCiphertext, PublicKey, RlweCiphertext, SecretKey, SeededRlweCiphertext,
};
use rnsfhe_math::sampling::Seed;
use rnsfhe_math::wire::{
    packed_len, DecodeError, DecodeErrorKind, Deserializable, Integrity, ObjectKind,
    PublicRandomness, Serializable, WireFingerprint, WireReader, WireWriter,
};
use rnsfhe_ring::{Coeff, ConversionMode, Poly, RnsSignedDigits};

use crate::encoder::Plaintext;
use crate::encryption::Ciphertext;
use crate::error::BfvResult;
use crate::keys::{GaloisKeys, KeySwitchKey, RelinKey};
use crate::params::{BfvContext, BfvParams, KeySwitchTechnique, MAX_PLAINTEXT_MODULUS};

/// The wire object kinds of `rnsfhe-bfv` (parameters: code 2 of
/// [`rnsfhe_math::wire::kind_codes::SCHEME_PARAMETERS`]; the rest in [`rnsfhe_math::wire::kind_codes::BFV`]).
/// Its secret and public keys are those of `rnsfhe-core` ([`rnsfhe_core::serialization::kinds`]).
pub mod kinds {
    use rnsfhe_math::wire::ObjectKind;

    /// BFV parameters ([`crate::BfvParams`], a context's bytes).
    pub const BFV_PARAMETERS: ObjectKind = ObjectKind::new(2, "BFV parameters");
    /// The HPS relinearization key of BFV.
    pub const BFV_RELIN_KEY: ObjectKind = ObjectKind::new(48, "BFV relinearization key");
    /// BFV Galois keys.
    pub const BFV_GALOIS_KEYS: ObjectKind = ObjectKind::new(49, "BFV Galois keys");
    /// A BFV plaintext.
    pub const BFV_PLAINTEXT: ObjectKind = ObjectKind::new(50, "BFV plaintext");
    /// A BFV ciphertext (also written by seeded symmetric ciphertexts).
    pub const BFV_CIPHERTEXT: ObjectKind = ObjectKind::new(51, "BFV ciphertext");

    /// Every kind of this crate.
    pub const KINDS: [ObjectKind; 5] = [
        BFV_PARAMETERS,
        BFV_RELIN_KEY,
        BFV_GALOIS_KEYS,
        BFV_PLAINTEXT,
        BFV_CIPHERTEXT,
    ];
}

/// The largest number of primes a loaded parameter set may list in `Q` or in `P` (the deepest preset,
/// HPS Table 3 at depth 100, has 38 and 40): a bound on what a hostile input can make the loader
/// allocate and check before the context is built.
pub const MAX_WIRE_MODULI: u32 = 128;

/// Moduli on the wire must be below `2^62`, the limit of the ring layer.
const MODULUS_LIMIT: u64 = 1 << 62;

/// Bit 0 of the parameters' flags byte: `insecure_for_testing`.
const FLAG_INSECURE: u8 = 1;

/// Bit 1 of the parameters' flags byte: hybrid key switching, whose section (dnum, special primes) follows.
const FLAG_HYBRID: u8 = 2;

/// Bit length of `v` (at least 1): the packing width of values up to `v`.
fn bit_width(v: u64) -> u32 {
    (u64::BITS - v.leading_zeros()).max(1)
}

impl Serializable for BfvContext {
    const KIND: ObjectKind = kinds::BFV_PARAMETERS;

    fn wire_fingerprint(&self) -> u64 {
        self.fingerprint()
    }

    fn payload_size(&self, _: PublicRandomness) -> u64 {
        let p = self.params();
        let hybrid = match &p.key_switching {
            KeySwitchTechnique::Crt => 0,
            KeySwitchTechnique::Hybrid { special_moduli, .. } => {
                4 + 4 + 8 * special_moduli.len() as u64
            }
        };
        4 + 8
            + 4
            + 8 * p.q_moduli.len() as u64
            + 4
            + 8 * p.p_moduli.len() as u64
            + 4
            + 8
            + 2
            + hybrid
    }

    fn write_payload<W: Write>(
        &self,
        w: &mut WireWriter<W>,
        _: PublicRandomness,
    ) -> io::Result<()> {
        let p = self.params();
        w.u32(p.log_n)?;
        w.u64(p.plaintext_modulus)?;
        for moduli in [&p.q_moduli, &p.p_moduli] {
            w.u32(moduli.len() as u32)?;
            moduli.iter().try_for_each(|&q| w.u64(q))?;
        }
        // Two little-endian u16 in one u32: the bytes of a u32 relin_base_log when galois_base_log is None.
        w.u32(p.relin_base_log.unwrap_or(0) | (p.galois_base_log.unwrap_or(0) << 16))?;
        w.f64(p.sigma)?;
        write_conversion(w, p.conversion)?;
        let insecure = if p.insecure_for_testing {
            FLAG_INSECURE
        } else {
            0
        };
        match &p.key_switching {
            KeySwitchTechnique::Crt => w.u8(insecure),
            KeySwitchTechnique::Hybrid {
                special_moduli,
                dnum,
            } => {
                w.u8(insecure | FLAG_HYBRID)?;
                w.u32(*dnum as u32)?;
                w.u32(special_moduli.len() as u32)?;
                special_moduli.iter().try_for_each(|&p| w.u64(p))
            }
        }
    }
}

impl WireFingerprint for BfvContext {
    fn wire_fingerprint_for(&self, version: u16) -> u64 {
        self.fingerprints().for_version(version)
    }
}

impl BfvContext {
    /// Reads parameters written by [`Serializable::write_to`] on a context and builds the context under
    /// the default [`LoadLimits`] ([`WireParams::read_context`]): every field's range, the limits, the
    /// fingerprint against the header and the security verdict are checked before any table is built
    /// (building checks the primes and precomputes the HPS tables); the digest at the end of the object.
    pub fn read_from<R: Read>(r: R) -> Result<Arc<Self>, DecodeError> {
        Self::read_from_with(r, &LoadLimits::default())
    }

    /// [`BfvContext::read_from`] under `limits`.
    pub fn read_from_with<R: Read>(r: R, limits: &LoadLimits) -> Result<Arc<Self>, DecodeError> {
        BfvParams::read_context(&mut WireReader::new(r), limits)
    }

    /// [`BfvContext::read_from`] of exactly `bytes` (the digest is checked first).
    pub fn from_bytes(bytes: &[u8]) -> Result<Arc<Self>, DecodeError> {
        Self::from_bytes_with(bytes, &LoadLimits::default())
    }

    /// [`BfvContext::from_bytes`] under `limits` (e.g. [`LoadLimits::allowing_insecure`] for test
    /// parameters, or larger sizes for trusted bytes).
    pub fn from_bytes_with(bytes: &[u8], limits: &LoadLimits) -> Result<Arc<Self>, DecodeError> {
        BfvParams::context_from_bytes(bytes, limits)
    }

    /// [`BfvContext::from_bytes_with`], the digest checked in the mode `integrity` (a MAC under a shared
    /// key).
    pub fn from_bytes_sealed(
        bytes: &[u8],
        limits: &LoadLimits,
        integrity: Integrity<'_>,
    ) -> Result<Arc<Self>, DecodeError> {
        BfvParams::context_from_bytes_sealed(bytes, limits, integrity)
    }

    /// Loads a public key of this context (`rnsfhe-core`'s [`PublicKey`] over [`BfvContext::rlwe`],
    /// whose fingerprint its header carries). An extended key is refused where the context makes keys
    /// over `Q` only ([`BfvContext::extended_public_key`]: its modulus exceeds the security bound).
    pub fn public_key_from_bytes(&self, bytes: &[u8]) -> Result<PublicKey, DecodeError> {
        let pk = PublicKey::from_bytes(bytes, self.rlwe())?;
        self.check_public_key(&pk).map_err(|e| {
            DecodeError::new("public_key", 0, DecodeErrorKind::Invalid(e.to_string()))
        })?;
        Ok(pk)
    }

    /// Loads a **secret** key of this context written by [`SecretKey::to_secret_bytes`] with
    /// `ctx.rlwe()`: only the decryptor should hold these bytes.
    pub fn secret_key_from_bytes(&self, bytes: &[u8]) -> Result<SecretKey, DecodeError> {
        SecretKey::from_secret_bytes(bytes, self.rlwe())
    }
}

impl BfvParams {
    /// Decodes serialized parameters (a context's bytes) **without** building the context: the literal
    /// parameters and the fingerprint the header announces. Every field is range-checked (`log_n` in
    /// `4..=17`, at most [`MAX_WIRE_MODULI`] primes in each of `Q` and `P`, each below `2^62`); building
    /// the context ([`BfvContext::new`]) is left to the caller, who may refuse sizes it does not want to
    /// afford.
    pub fn from_bytes(bytes: &[u8]) -> Result<(Self, u64), DecodeError> {
        Self::decode_params(bytes)
    }
}

impl WireParams for BfvParams {
    const KIND: ObjectKind = kinds::BFV_PARAMETERS;
    type Context = Arc<BfvContext>;
    type BuildError = crate::BfvError;

    fn read_params<R: Read>(r: &mut WireReader<R>) -> Result<Self, DecodeError> {
        read_params(r)
    }

    fn size(&self) -> (u32, usize) {
        let special = match &self.key_switching {
            KeySwitchTechnique::Crt => 0,
            KeySwitchTechnique::Hybrid { special_moduli, .. } => special_moduli.len(),
        };
        (
            self.log_n,
            self.q_moduli.len() + self.p_moduli.len() + special,
        )
    }

    fn check(&self) -> BfvResult<ParamsCheck> {
        Ok(ParamsCheck {
            fingerprints: self.fingerprints(),
            security: self.security(),
        })
    }

    fn build(self) -> BfvResult<Arc<BfvContext>> {
        BfvContext::new(self)
    }
}

/// Reads a list of moduli: a `u32` count in `1..=MAX_WIRE_MODULI`, then each modulus in `2..2^62`.
fn read_moduli<R: Read>(r: &mut WireReader<R>, field: &str) -> Result<Vec<u64>, DecodeError> {
    let count = r.u32_in(
        &format!("{field}.count"),
        1..=MAX_WIRE_MODULI,
        "primes in the basis",
    )?;
    (0..count)
        .map(|i| {
            let at = r.offset();
            let name = format!("{field}[{i}]");
            let q = r.u64(&name)?;
            if !(2..MODULUS_LIMIT).contains(&q) {
                return Err(r.out_of_range(at, &name, q, "a prime in 2..2^62"));
            }
            Ok(q)
        })
        .collect()
}

fn read_params<R: Read>(r: &mut WireReader<R>) -> Result<BfvParams, DecodeError> {
    let log_n = r.u32_in("params.log_n", 4..=17, "log2 N")?;
    let at = r.offset();
    let plaintext_modulus = r.u64("params.plaintext_modulus")?;
    if !(2..=MAX_PLAINTEXT_MODULUS).contains(&plaintext_modulus) {
        return Err(r.out_of_range(
            at,
            "params.plaintext_modulus",
            plaintext_modulus,
            "2..=2^60",
        ));
    }
    let q_moduli = read_moduli(r, "params.q_moduli")?;
    let p_moduli = read_moduli(r, "params.p_moduli")?;
    let at = r.offset();
    let bases = r.u32("params.relin_base_log")?;
    let (base, galois_base) = (bases & 0xffff, bases >> 16);
    if base > 62 {
        return Err(r.out_of_range(
            at,
            "params.relin_base_log",
            base as u64,
            "digit bits 0..=62 (0 for the plain CRT decomposition)",
        ));
    }
    if galois_base > 62 {
        return Err(r.out_of_range(
            at + 2,
            "params.galois_base_log",
            galois_base as u64,
            "digit bits 0..=62 (0 for the relinearization decomposition)",
        ));
    }
    let sigma = read_sigma(r, "params.sigma")?;
    let at = r.offset();
    let conversion = read_conversion(r, "params.conversion")?;
    if conversion == ConversionMode::Fast {
        return Err(r.out_of_range(
            at,
            "params.conversion",
            0,
            "1 (exact float) or 2 (exact integer): HPS multiplication refuses fast conversion",
        ));
    }
    let flags = read_flags(
        r,
        "params.flags",
        FLAG_INSECURE | FLAG_HYBRID,
        "bit 0 (insecure_for_testing) and bit 1 (hybrid key switching) only",
    )?;
    let key_switching = if flags & FLAG_HYBRID != 0 {
        let dnum = r.u32_in(
            "params.dnum",
            1..=q_moduli.len() as u32,
            "digit groups of Q (1..=k)",
        )? as usize;
        let special_moduli = read_moduli(r, "params.special_moduli")?;
        KeySwitchTechnique::Hybrid {
            special_moduli,
            dnum,
        }
    } else {
        KeySwitchTechnique::Crt
    };
    Ok(BfvParams {
        log_n,
        plaintext_modulus,
        q_moduli,
        p_moduli,
        relin_base_log: (base != 0).then_some(base),
        galois_base_log: (galois_base != 0).then_some(galois_base),
        sigma,
        insecure_for_testing: flags & FLAG_INSECURE != 0,
        conversion,
        key_switching,
    })
}

impl Plaintext {
    /// The packing width of the coefficients: the bit length of the largest one.
    fn wire_width(&self) -> u32 {
        bit_width(self.coeffs.iter().copied().max().unwrap_or(0))
    }
}

impl Serializable for Plaintext {
    const KIND: ObjectKind = kinds::BFV_PLAINTEXT;

    fn wire_fingerprint(&self) -> u64 {
        self.fingerprint
    }

    fn payload_size(&self, _: PublicRandomness) -> u64 {
        1 + packed_len(self.coeffs.len(), self.wire_width())
    }

    fn write_payload<W: Write>(
        &self,
        w: &mut WireWriter<W>,
        _: PublicRandomness,
    ) -> io::Result<()> {
        let width = self.wire_width();
        w.u8(width as u8)?;
        w.packed(&self.coeffs, width)
    }
}

impl Deserializable<BfvContext> for Plaintext {
    fn read_payload<R: Read>(r: &mut WireReader<R>, ctx: &BfvContext) -> Result<Self, DecodeError> {
        let t = ctx.plaintext_modulus();
        let at = r.offset();
        let width = r.u8("plaintext.width")? as u32;
        let widest = bit_width(t - 1);
        if !(1..=widest).contains(&width) {
            return Err(r.out_of_range(
                at,
                "plaintext.width",
                width as u64,
                format!("1..={widest} bits (coefficients are below t = {t})"),
            ));
        }
        let mut coeffs = vec![0u64; ctx.n()];
        r.packed("plaintext.coefficients", &mut coeffs, width, t)?;
        let plaintext = Plaintext {
            fingerprint: ctx.fingerprint(),
            coeffs,
        };
        // One encoding per plaintext, so that loading and writing again gives the same bytes.
        if plaintext.wire_width() != width {
            return Err(r.invalid_at(
                at,
                "plaintext.width",
                format!(
                    "{width} bits, but the largest coefficient needs {} (the width must be exactly that)",
                    plaintext.wire_width()
                ),
            ));
        }
        Ok(plaintext)
    }
}

impl Serializable for Ciphertext {
    const KIND: ObjectKind = kinds::BFV_CIPHERTEXT;

    fn wire_fingerprint(&self) -> u64 {
        self.fingerprint
    }

    fn payload_size(&self, _: PublicRandomness) -> u64 {
        // A ciphertext always has 2 or 3 parts over Q (Ciphertext::from_parts, the evaluator).
        self.parts()
            .first()
            .map_or(2, |p| parts_size(p.basis(), self.part_count(), false))
    }

    fn write_payload<W: Write>(
        &self,
        w: &mut WireWriter<W>,
        _: PublicRandomness,
    ) -> io::Result<()> {
        write_parts(w, self.parts())
    }
}

impl Deserializable<BfvContext> for Ciphertext {
    fn read_payload<R: Read>(r: &mut WireReader<R>, ctx: &BfvContext) -> Result<Self, DecodeError> {
        let parts = read_parts::<R, Coeff>(r, ctx.q_basis(), "ciphertext")?;
        Ok(Ciphertext {
            fingerprint: ctx.fingerprint(),
            rlwe: RlweCiphertext { parts },
        })
    }
}

/// A fresh secret-key BFV ciphertext whose uniform part `a` is kept as a 32-byte seed
/// ([`crate::Encryptor::encrypt_seeded`]): about half the size of a [`Ciphertext`] on the wire and
/// written as one, so the receiver loads it with [`Ciphertext::from_bytes`]. It supports no
/// arithmetic; [`SeededCiphertext::expand`] gives the full ciphertext.
#[derive(Clone, Debug, PartialEq)]
pub struct SeededCiphertext {
    pub(crate) fingerprint: u64,
    /// `c_0 = [-a s + e + Delta m]_Q` in coefficient form, with the seed of `a`.
    pub(crate) inner: SeededRlweCiphertext<Coeff>,
}

impl SeededCiphertext {
    /// `c_0 = [-a s + e + Delta m]_Q` (coefficient form over `Q`).
    pub fn c0(&self) -> &Poly<Coeff> {
        self.inner.c0()
    }

    /// The public seed `a` expands from.
    pub fn seed(&self) -> &Seed {
        self.inner.seed()
    }

    /// Fingerprint of the BFV context the ciphertext belongs to.
    pub fn fingerprint(&self) -> u64 {
        self.fingerprint
    }

    /// The full ciphertext `(c_0, a)`, `a` expanded from the seed.
    ///
    /// Errors: [`crate::BfvError::Core`] only if the basis were inconsistent.
    pub fn expand(&self) -> BfvResult<Ciphertext> {
        Ok(Ciphertext {
            fingerprint: self.fingerprint,
            rlwe: self.inner.expand()?,
        })
    }
}

impl Serializable for SeededCiphertext {
    const KIND: ObjectKind = kinds::BFV_CIPHERTEXT;

    fn wire_fingerprint(&self) -> u64 {
        self.fingerprint
    }

    fn payload_size(&self, randomness: PublicRandomness) -> u64 {
        parts_size(self.c0().basis(), 2, randomness == PublicRandomness::Seeded)
    }

    fn write_payload<W: Write>(
        &self,
        w: &mut WireWriter<W>,
        randomness: PublicRandomness,
    ) -> io::Result<()> {
        write_seeded_pair(w, self.c0(), self.seed(), randomness)
    }
}

/// Reads a key of `ctx`: with CRT key switching its `count` (`k x digits`) rows over `Q` made for the
/// decomposition `digits`; with hybrid key switching the `dnum` rows over `Q ∪ P_ks` of the RLWE
/// context's gadget.
fn read_key<R: Read>(
    r: &mut WireReader<R>,
    ctx: &BfvContext,
    digits: &RnsSignedDigits,
    count: usize,
    field: &str,
) -> Result<KeySwitchKey, DecodeError> {
    match ctx.key_switching() {
        KeySwitchTechnique::Crt => GadgetCiphertext::read_wire(
            r,
            ctx.rlwe().fingerprint(),
            Gadget::of_digits(digits),
            ctx.q_basis(),
            count,
            field,
        ),
        KeySwitchTechnique::Hybrid { .. } => GadgetCiphertext::read_hybrid(r, ctx.rlwe(), field),
    }
}

impl Serializable for RelinKey {
    const KIND: ObjectKind = kinds::BFV_RELIN_KEY;

    fn wire_fingerprint(&self) -> u64 {
        self.fingerprint
    }

    fn payload_size(&self, randomness: PublicRandomness) -> u64 {
        self.key.wire_size(randomness)
    }

    fn write_payload<W: Write>(
        &self,
        w: &mut WireWriter<W>,
        randomness: PublicRandomness,
    ) -> io::Result<()> {
        self.key.write_wire(w, randomness)
    }
}

impl Deserializable<BfvContext> for RelinKey {
    fn read_payload<R: Read>(r: &mut WireReader<R>, ctx: &BfvContext) -> Result<Self, DecodeError> {
        Ok(RelinKey {
            fingerprint: ctx.fingerprint(),
            key: read_key(
                r,
                ctx,
                ctx.relin_digits(),
                ctx.relin_components(),
                "relin_key",
            )?,
        })
    }
}

impl Serializable for GaloisKeys {
    const KIND: ObjectKind = kinds::BFV_GALOIS_KEYS;

    fn wire_fingerprint(&self) -> u64 {
        self.fingerprint
    }

    fn payload_size(&self, randomness: PublicRandomness) -> u64 {
        galois_list_size(&self.keys, |k| k.wire_size(randomness))
    }

    fn write_payload<W: Write>(
        &self,
        w: &mut WireWriter<W>,
        randomness: PublicRandomness,
    ) -> io::Result<()> {
        write_galois_list(w, &self.keys, |w, k| k.write_wire(w, randomness))
    }
}

impl Deserializable<BfvContext> for GaloisKeys {
    fn read_payload<R: Read>(r: &mut WireReader<R>, ctx: &BfvContext) -> Result<Self, DecodeError> {
        let list = read_galois_list(r, ctx.n(), "galois_keys", |r, field| {
            read_key(r, ctx, ctx.galois_digits(), ctx.galois_components(), field)
        })?;
        Ok(GaloisKeys {
            fingerprint: ctx.fingerprint(),
            group: *ctx.galois_group(),
            keys: list.into_iter().map(|(e, k)| (e.value(), k)).collect(),
        })
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn kinds_stay_in_the_crates_range() {
        assert!(rnsfhe_math::wire::kind_codes::SCHEME_PARAMETERS
            .contains(&kinds::BFV_PARAMETERS.code()));
        for kind in &kinds::KINDS[1..] {
            assert!(
                rnsfhe_math::wire::kind_codes::BFV.contains(&kind.code()),
                "{kind}"
            );
        }
    }
    use crate::{BatchEncoder, CoeffEncoder, Decryptor, Encryptor, Evaluator, KeyGenerator};
    use rnsfhe_math::sampling::Csprng;
    use rnsfhe_math::wire::{reseal, DIGEST_LEN, HEADER_LEN};

    const INSECURE_OK: LoadLimits = LoadLimits::DEFAULT.allowing_insecure();

    fn ctx(relin_base_log: Option<u32>) -> Arc<BfvContext> {
        ctx_with(relin_base_log, None)
    }

    fn ctx_with(relin_base_log: Option<u32>, galois_base_log: Option<u32>) -> Arc<BfvContext> {
        let mut p = BfvParams::with_bit_sizes(10, 65537, 40, 2).unwrap();
        p.insecure_for_testing = true;
        p.relin_base_log = relin_base_log;
        p.galois_base_log = galois_base_log;
        BfvContext::new(p).unwrap()
    }

    /// A Galois decomposition of its own travels in the upper half of the relinearization field (older
    /// files, always 0 there, read as before), enters the fingerprint only when it differs from
    /// relinearization's, and is range-checked on load.
    #[test]
    fn galois_decomposition_round_trips() {
        let plain = ctx(Some(20));
        let same = ctx_with(Some(20), Some(20));
        assert_eq!(same.fingerprint(), plain.fingerprint());
        let own = ctx_with(None, Some(14));
        assert_ne!(own.fingerprint(), ctx(None).fingerprint());
        assert_eq!(own.galois_components(), 2 * 3);
        assert_eq!(own.relin_components(), 2);
        let bytes = own.to_bytes();
        let back = BfvContext::from_bytes_with(&bytes, &INSECURE_OK).unwrap();
        assert_eq!(back.params(), own.params());
        assert_eq!(back.fingerprint(), own.fingerprint());
        // relin_base_log sits after the header and log_n, t, k, q_i, k', p_j.
        let at =
            (HEADER_LEN + 4 + 8 + 4 + 8 * 2 + 4 + 8 * own.params().p_moduli.len() as u64) as usize;
        assert_eq!(bytes[at..at + 4], (14u32 << 16).to_le_bytes());
        assert_eq!(plain.to_bytes()[at..at + 4], 20u32.to_le_bytes());
        let mut bad = bytes.clone();
        bad[at..at + 4].copy_from_slice(&(99u32 << 16).to_le_bytes());
        reseal(&mut bad);
        let err = BfvContext::from_bytes_with(&bad, &INSECURE_OK).unwrap_err();
        assert!(err.to_string().contains("galois_base_log"), "{err}");
        let mut too_wide = own.params().clone();
        too_wide.galois_base_log = Some(41);
        assert!(BfvContext::new(too_wide).is_err());
    }

    fn rng() -> Csprng {
        Csprng::insecure_from_seed_for_tests([9; 32])
    }

    /// `object` written with `randomness`, of the announced size.
    fn bytes_of<T: Serializable>(object: &T, randomness: PublicRandomness) -> Vec<u8> {
        let bytes = object.to_bytes_with(randomness);
        assert_eq!(
            bytes.len() as u64,
            HEADER_LEN + object.payload_size(randomness) + DIGEST_LEN
        );
        bytes
    }

    #[test]
    fn parameters_round_trip_and_rebuild_the_context() {
        let c = ctx(Some(20));
        let bytes = c.to_bytes();
        assert_eq!(bytes.len() as u64, c.serialized_size());
        let back = BfvContext::from_bytes_with(&bytes, &INSECURE_OK).unwrap();
        assert_eq!(back.fingerprint(), c.fingerprint());
        assert_eq!(back.params(), c.params());
        assert_eq!(back.to_bytes(), bytes);
        let (params, fingerprint) = BfvParams::from_bytes(&bytes).unwrap();
        assert_eq!((&params, fingerprint), (c.params(), c.fingerprint()));
        // Streaming: the reader stops at the end of the object.
        let mut two = bytes.clone();
        two.extend_from_slice(&bytes);
        let mut stream = &two[..];
        BfvContext::read_from_with(&mut stream, &INSECURE_OK).unwrap();
        assert_eq!(stream.len(), bytes.len());
    }

    #[test]
    fn keys_plaintexts_and_ciphertexts_round_trip_and_compute() {
        for (base, galois) in [(None, None), (Some(20), None), (None, Some(14))] {
            let c = ctx_with(base, galois);
            let mut rng = rng();
            let kg = KeyGenerator::new(&c, &mut rng).unwrap();
            let sk = kg.secret_key();
            let sk_back = c
                .secret_key_from_bytes(&sk.to_secret_bytes(c.rlwe()))
                .unwrap();
            assert_eq!(sk_back.coefficients(), sk.coefficients());
            let pk = kg.public_key(&mut rng).unwrap();
            let pk_back = c.public_key_from_bytes(&pk.to_bytes()).unwrap();
            assert_eq!((pk_back.b(), pk_back.a()), (pk.b(), pk.a()));
            let rk = kg.relin_key(&mut rng).unwrap();
            let gk = kg.galois_keys(&[1], true, &mut rng).unwrap();
            let enc = Encryptor::with_public_key(&c, &pk_back).unwrap();
            let dec = Decryptor::new(&c, &sk_back).unwrap();
            let be = BatchEncoder::new(&c).unwrap();
            let x: Vec<u64> = (0..c.n() as u64).map(|i| i * 7 % 65537).collect();
            let pt = be.encode_u64(&x).unwrap();
            let pt_bytes = bytes_of(&pt, PublicRandomness::Seeded);
            let pt_back = Plaintext::from_bytes(&pt_bytes, &c).unwrap();
            assert_eq!(pt_back, pt);
            let ct = enc.encrypt(&pt_back, &mut rng).unwrap();
            for randomness in [PublicRandomness::Seeded, PublicRandomness::Expanded] {
                let rk_bytes = bytes_of(&rk, randomness);
                let rk_back = RelinKey::from_bytes(&rk_bytes, &c).unwrap();
                assert_eq!(rk_back.components(), rk.components());
                // Loaded keys write the same bytes again (a key loaded expanded stays expanded).
                assert_eq!(rk_back.to_bytes_with(randomness), rk_bytes);
                let gk_bytes = bytes_of(&gk, randomness);
                let gk_back = GaloisKeys::from_bytes(&gk_bytes, &c).unwrap();
                assert_eq!(gk_back.elements(), gk.elements());
                assert_eq!(gk_back.to_bytes_with(randomness), gk_bytes);
                // The loaded keys compute: x^2 rotated left by one.
                let ev = Evaluator::new(&c);
                let sq = ev.multiply(&ct, &ct, &rk_back).unwrap();
                let rot = ev.rotate_rows(&sq, 1, &gk_back).unwrap();
                let got = be.decode_u64(&dec.decrypt(&rot).unwrap()).unwrap();
                let h = c.n() / 2;
                for j in [0, 5, h - 1] {
                    let v = x[(j + 1) % h];
                    assert_eq!(got[j], v * v % 65537, "slot {j}, base {base:?}");
                }
            }
            let seeded = rk.to_bytes().len() as f64;
            let expanded = rk.to_bytes_with(PublicRandomness::Expanded).len() as f64;
            assert!(
                (seeded / expanded - 0.5).abs() < 0.01,
                "{seeded} / {expanded}"
            );
            // A 3-part ciphertext (before relinearization) and a 2-part one round-trip exactly.
            let ev = Evaluator::new(&c);
            let three = ev.multiply_no_relin(&ct, &ct).unwrap();
            for object in [&ct, &three] {
                let bytes = bytes_of(object, PublicRandomness::Seeded);
                let back = Ciphertext::from_bytes(&bytes, &c).unwrap();
                assert_eq!(&back, object);
                assert_eq!(back.to_bytes(), bytes);
            }
            let got = be.decode_u64(&dec.decrypt(&three).unwrap()).unwrap();
            assert_eq!(got[3], x[3] * x[3] % 65537);
        }
    }

    #[test]
    fn seeded_ciphertexts_are_half_the_size_and_load_as_ciphertexts() {
        let c = ctx(None);
        let mut rng = rng();
        let kg = KeyGenerator::new(&c, &mut rng).unwrap();
        let enc = Encryptor::with_secret_key(&c, kg.secret_key()).unwrap();
        let dec = Decryptor::new(&c, kg.secret_key()).unwrap();
        let ce = CoeffEncoder::new(&c);
        let pt = ce.encode_i64(&[-3, 1, 4, -1, 5]).unwrap();
        // Small signed coefficients are large mod t: the plaintext needs the full width of t - 1.
        assert_eq!(pt.to_bytes()[16], 17);
        let seeded = enc.encrypt_seeded(&pt, &mut rng).unwrap();
        let small = bytes_of(&seeded, PublicRandomness::Seeded);
        let full = bytes_of(&seeded, PublicRandomness::Expanded);
        assert_eq!(full, seeded.expand().unwrap().to_bytes());
        let ratio = small.len() as f64 / full.len() as f64;
        assert!((0.49..0.51).contains(&ratio), "seeded / full = {ratio}");
        let loaded = Ciphertext::from_bytes(&small, &c).unwrap();
        assert_eq!(loaded, seeded.expand().unwrap());
        let got = ce.decode_i64(&dec.decrypt(&loaded).unwrap()).unwrap();
        assert_eq!(&got[..5], &[-3, 1, 4, -1, 5]);
        // Ordinary secret-key ciphertexts still decrypt (their `a` also comes from a seed).
        let ct = enc.encrypt(&pt, &mut rng).unwrap();
        assert_eq!(
            ce.decode_i64(&dec.decrypt(&ct).unwrap()).unwrap()[..5],
            [-3, 1, 4, -1, 5]
        );
        // A public-key encryptor has no seed to keep.
        let pk = kg.public_key(&mut rng).unwrap();
        let penc = Encryptor::with_public_key(&c, &pk).unwrap();
        assert!(penc.encrypt_seeded(&pt, &mut rng).is_err());
        // Small coefficients pack narrowly: a plaintext of 0/1 coefficients costs N bits.
        let bits = ce.encode_u64(&[1, 0, 1, 1]).unwrap().to_bytes();
        assert_eq!(
            bits.len() as u64,
            HEADER_LEN + 1 + c.n() as u64 / 8 + DIGEST_LEN
        );
    }

    #[test]
    fn objects_of_other_contexts_kinds_or_fingerprints_are_refused() {
        let c = ctx(None);
        let other = ctx(Some(20));
        assert_ne!(c.fingerprint(), other.fingerprint());
        let mut rng = rng();
        let kg = KeyGenerator::new(&c, &mut rng).unwrap();
        let rk = kg.relin_key(&mut rng).unwrap().to_bytes();
        let err = RelinKey::from_bytes(&rk, &other).unwrap_err();
        assert_eq!(err.field, "header.fingerprint");
        assert!(err.to_string().contains("other parameters"), "{err}");
        let err = GaloisKeys::from_bytes(&rk, &c).unwrap_err();
        assert_eq!((err.field.as_str(), err.offset), ("header.kind", 6));
        let err = c.public_key_from_bytes(&rk).unwrap_err();
        assert_eq!(err.field, "header.kind");
        // A CKKS-kind header (code 32, a CKKS plaintext) is refused by every BFV loader.
        let pt = CoeffEncoder::new(&c).encode_u64(&[1]).unwrap();
        let mut bytes = pt.to_bytes();
        bytes[6..8].copy_from_slice(&32u16.to_le_bytes());
        assert_eq!(
            Plaintext::from_bytes(&bytes, &c).unwrap_err().field,
            "digest"
        );
        reseal(&mut bytes);
        assert_eq!(
            Plaintext::from_bytes(&bytes, &c).unwrap_err().field,
            "header.kind"
        );
        // Parameters whose header fingerprint is not the one they rebuild.
        let mut params = c.to_bytes();
        params[8] ^= 1;
        reseal(&mut params);
        let err = BfvContext::from_bytes_with(&params, &INSECURE_OK).unwrap_err();
        assert_eq!((err.field.as_str(), err.offset), ("header.fingerprint", 8));
        // Fast conversion, a zero prime count and a plaintext width above t's are named.
        let mut fast = c.to_bytes();
        let at = fast.len() - 2 - DIGEST_LEN as usize;
        fast[at] = 0;
        reseal(&mut fast);
        assert_eq!(
            BfvParams::from_bytes(&fast).unwrap_err().field,
            "params.conversion"
        );
        let mut zero = c.to_bytes();
        zero[28..32].copy_from_slice(&0u32.to_le_bytes());
        reseal(&mut zero);
        assert_eq!(
            BfvParams::from_bytes(&zero).unwrap_err().field,
            "params.q_moduli.count"
        );
        // A wider packing than the largest coefficient needs is refused (one encoding per plaintext).
        let mut w = WireWriter::new(pt.to_bytes()[..16].to_vec());
        w.u8(2).unwrap();
        w.packed(pt.coefficients(), 2).unwrap();
        w.bytes(&[0; DIGEST_LEN as usize]).unwrap();
        let mut narrow = w.into_inner();
        reseal(&mut narrow);
        let err = Plaintext::from_bytes(&narrow, &c).unwrap_err();
        assert_eq!((err.field.as_str(), err.offset), ("plaintext.width", 16));
        let mut wide = pt.to_bytes();
        wide[16] = 18;
        reseal(&mut wide);
        assert_eq!(
            Plaintext::from_bytes(&wide, &c).unwrap_err().field,
            "plaintext.width"
        );
    }
}
