//! Wire encodings of the LWE objects (header, digest and conventions in [`rnsfhe_math::wire`]; gadget
//! and RGSW ciphertexts, ternary coefficients and Galois lists in [`rnsfhe_core::serialization`]).
//!
//! Payloads after the 16-byte header (integers little endian; residues packed at the bit width of their
//! modulus minus one, polynomials as in [`rnsfhe_ring::wire`]):
//!
//! ```text
//! LweCiphertext     b | a_0 .. a_{n-1}                     (b padded to a byte, then a; width of q - 1)
//! LweSecretKey      s_0 .. s_{n-1} at 2 bits (0 -> 0, 1 -> 1, 2 -> -1)
//! LweSwitchingKey   ceil(N'/n) x ( u8 seeded | d x b_i over q | seed[32] if seeded, else d x a_i )
//! LookupTable       f64 input scale | f64 output scale | u64 input modulus (>= 2n)
//!                   | u32 functions (a power of two, <= n/4) | f over q_0 (coefficient form)
//! BlindRotationKey  u8 algorithm (0 ternary, 1 binary, 2 LMKCDEY) | u32 n_lwe (1..=2^17) | u8 RGSW per coefficient
//!                   | n_lwe x that many RGSW (gadget ciphertexts of m and s m, each seeded)
//!                   | u32 count | count x ( u32 Galois element | gadget ciphertext )   automorphism keys
//! ```
//!
//! The dimensions and moduli are **not** in the payloads: they are the reader's parameters, and the
//! header's fingerprint says whether the object belongs to them ([`LweSpace`] for ciphertexts, the
//! dimension for secret keys, [`LweSwitchingKeyContext`] for switching keys, the look-up-table ring's
//! [`RlweContext`] for tables and blind-rotation keys). A reader therefore allocates only from trusted
//! sizes, with one exception: the blind-rotation key's LWE dimension (bounded by
//! [`MAX_LWE_DIMENSION`]) is read, and its RGSW ciphertexts are collected one at a time as the input
//! supplies them, so memory grows with the bytes actually present, never with a claimed length.
//!
//! The blind-rotation key is a list of RGSW ciphertexts per LWE coefficient, an algorithm code and a
//! list of automorphism (Galois) keys of the ring's hybrid gadget (core's Galois-key payload): those of
//! `g, .., g^w` and `-g` for [`BlindRotation::Lmkcdey`] (the window `w` is their count minus one),
//! none for the other algorithms (a non-zero count is refused). Switching keys, RGSW ciphertexts and automorphism keys keep their
//! seeds: about half their expanded size.
//!
//! LWE objects exist from format version 2 on: a header of version 1 (which has no digest) is refused.

use std::io::{self, Read, Write};
use std::sync::Arc;

use rnsfhe_core::context::fingerprint_words;
use rnsfhe_core::serialization::{read_ternary, ternary_wire_size, write_ternary};
use rnsfhe_core::{Gadget, GadgetCiphertext, GaloisKeys, RgswCiphertext, RlweContext};
use rnsfhe_math::wire::{
    packed_len, read_exactly, write_object, DecodeError, DecodeErrorKind, Deserializable, Header,
    Integrity, ObjectKind, PublicRandomness, Serializable, WireFingerprint, WireReader, WireWriter,
    DIGEST_LEN, HEADER_LEN,
};
use rnsfhe_math::Modulus;
use rnsfhe_ring::wire::residue_width;
use rnsfhe_ring::{Coeff, Poly};
use zeroize::Zeroizing;

use crate::blind_rotation::{BlindRotation, BlindRotationKey};
use crate::ciphertext::LweCiphertext;
use crate::dimension::{LweDimension, MAX_LWE_DIMENSION};
use crate::error::LweResult;
use crate::keyswitch::{LweSwitchingKey, LweSwitchingKeyContext};
use crate::lut::{check_input_modulus, LookupTable};
use crate::secret::LweSecretKey;

/// The wire object kinds of `rnsfhe-lwe` (codes in [`rnsfhe_math::wire::kind_codes::LWE`]).
pub mod kinds {
    use rnsfhe_math::wire::ObjectKind;

    /// An LWE ciphertext `(b, a)`.
    pub const LWE_CIPHERTEXT: ObjectKind = ObjectKind::new(64, "LWE ciphertext");
    /// An LWE secret key (written and read only by explicitly named functions).
    pub const LWE_SECRET_KEY: ObjectKind = ObjectKind::secret(65, "LWE secret key");
    /// An LWE switching key (PEGASUS Fig. 9).
    pub const LWE_SWITCHING_KEY: ObjectKind = ObjectKind::new(66, "LWE switching key");
    /// A look-up table: the polynomial of PEGASUS Fig. 2 step 1 and its scales.
    pub const LOOKUP_TABLE: ObjectKind = ObjectKind::new(67, "look-up table");
    /// A blind-rotation (evaluation) key (PEGASUS Fig. 2 and Fig. 6).
    pub const BLIND_ROTATION_KEY: ObjectKind = ObjectKind::new(68, "blind-rotation key");

    /// Every kind of this crate.
    pub const KINDS: [ObjectKind; 5] = [
        LWE_CIPHERTEXT,
        LWE_SECRET_KEY,
        LWE_SWITCHING_KEY,
        LOOKUP_TABLE,
        BLIND_ROTATION_KEY,
    ];
}

/// Domain tags of the fingerprints ("LWE_CT", "LWE_SK", "LUT"; a switching key's header carries
/// [`LweSwitchingKeyContext::fingerprint`]).
const CIPHERTEXT_TAG: u64 = 0x4c57_455f_4354;
const SECRET_KEY_TAG: u64 = 0x4c57_455f_534b;
/// "LUT".
const TABLE_TAG: u64 = 0x004c_5554;

/// Reads a header of `kind` with the fingerprint `fingerprint`, refusing format version 1 (LWE objects
/// were first written in version 2; a version-1 header would also skip the digest).
fn read_header<R: Read>(
    r: &mut WireReader<R>,
    kind: ObjectKind,
    fingerprint: u64,
) -> Result<Header, DecodeError> {
    let header = Header::read(r)?;
    header.expect(kind, None)?;
    if !header.has_digest() {
        return Err(DecodeError::new(
            "header.version",
            4,
            DecodeErrorKind::Invalid(format!(
                "format version {} has no {kind}: LWE objects exist from version 2 on (and carry \
                 a digest)",
                header.version
            )),
        ));
    }
    header.expect(kind, Some(fingerprint))?;
    Ok(header)
}

/// Header (version 2 on), payload and digest of an object of `kind`: the `read_object` of every LWE
/// object.
fn read_object<R: Read, T>(
    r: &mut WireReader<R>,
    kind: ObjectKind,
    fingerprint: u64,
    payload: impl FnOnce(&mut WireReader<R>) -> Result<T, DecodeError>,
) -> Result<T, DecodeError> {
    let header = read_header(r, kind, fingerprint)?;
    let object = payload(r)?;
    r.check_digest(&header)?;
    Ok(object)
}

// ---- LWE ciphertexts ---------------------------------------------------------------------------------

/// The parameters an LWE ciphertext belongs to: its dimension `n` and modulus `q`. Ciphertexts load
/// into it ([`Deserializable::from_bytes`]); its fingerprint covers both.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LweSpace {
    dimension: LweDimension,
    modulus: Modulus,
}

impl LweSpace {
    /// The ciphertexts of dimension `dimension` modulo `modulus`.
    ///
    /// Errors: [`crate::LweError::Math`] for a modulus outside `[2, 2^62)`.
    pub fn new(dimension: LweDimension, modulus: u64) -> LweResult<Self> {
        Ok(Self {
            dimension,
            modulus: Modulus::new(modulus)?,
        })
    }

    /// The space `ct` lives in.
    pub fn of(ct: &LweCiphertext) -> Self {
        Self {
            dimension: ct.dimension(),
            modulus: *ct.modulus(),
        }
    }

    /// The dimension `n`.
    pub fn dimension(&self) -> LweDimension {
        self.dimension
    }

    /// The modulus `q`.
    pub fn modulus(&self) -> &Modulus {
        &self.modulus
    }

    /// The fingerprint its ciphertexts carry.
    pub fn fingerprint(&self) -> u64 {
        fingerprint_words([
            CIPHERTEXT_TAG,
            self.dimension.get() as u64,
            self.modulus.value(),
        ])
    }

    /// Payload size of its ciphertexts.
    fn payload_size(&self) -> u64 {
        let width = residue_width(&self.modulus);
        packed_len(1, width) + packed_len(self.dimension.get(), width)
    }
}

impl WireFingerprint for LweSpace {
    fn wire_fingerprint_for(&self, _version: u16) -> u64 {
        // Version 1 objects are refused before the fingerprint is compared (`read_header`).
        self.fingerprint()
    }
}

impl Serializable for LweCiphertext {
    const KIND: ObjectKind = kinds::LWE_CIPHERTEXT;

    fn wire_fingerprint(&self) -> u64 {
        LweSpace::of(self).fingerprint()
    }

    fn payload_size(&self, _: PublicRandomness) -> u64 {
        LweSpace::of(self).payload_size()
    }

    fn write_payload<W: Write>(
        &self,
        w: &mut WireWriter<W>,
        _: PublicRandomness,
    ) -> io::Result<()> {
        let width = residue_width(self.modulus());
        w.packed(&[self.b()], width)?;
        w.packed(self.a(), width)
    }
}

impl Deserializable<LweSpace> for LweCiphertext {
    fn read_payload<R: Read>(r: &mut WireReader<R>, space: &LweSpace) -> Result<Self, DecodeError> {
        let q = space.modulus;
        let width = residue_width(&q);
        let mut b = [0u64];
        r.packed("lwe_ciphertext.b", &mut b, width, q.value())?;
        // The dimension is the reader's (at most MAX_LWE_DIMENSION), not the input's.
        let mut a = vec![0u64; space.dimension.get()];
        r.packed("lwe_ciphertext.a", &mut a, width, q.value())?;
        Ok(LweCiphertext::from_reduced(q, space.dimension, b[0], a))
    }

    fn read_object<R: Read>(r: &mut WireReader<R>, space: &LweSpace) -> Result<Self, DecodeError> {
        read_object(r, Self::KIND, space.fingerprint(), |r| {
            Self::read_payload(r, space)
        })
    }
}

// ---- LWE secret keys ---------------------------------------------------------------------------------

/// The fingerprint of the secret keys of dimension `n` (what their header carries: a reader holding
/// keys of several dimensions picks the one to load with by it).
pub fn secret_key_fingerprint(dimension: LweDimension) -> u64 {
    fingerprint_words([SECRET_KEY_TAG, dimension.get() as u64])
}

impl LweSecretKey {
    /// Serialized size of [`LweSecretKey::write_secret_to`]'s output in bytes.
    pub fn secret_serialized_size(&self) -> u64 {
        HEADER_LEN + ternary_wire_size(self.dimension().get()) + DIGEST_LEN
    }

    /// Writes the **secret** key (header, 2-bit coefficients, digest) to `w`; returns the number of bytes
    /// written. The name says what it does: only a decryptor should ever hold these bytes; never send
    /// them to a server.
    ///
    /// Errors: I/O errors of the writer.
    pub fn write_secret_to<W: Write>(&self, w: W) -> io::Result<u64> {
        let n = self.dimension();
        write_object(
            w,
            kinds::LWE_SECRET_KEY,
            secret_key_fingerprint(n),
            ternary_wire_size(n.get()),
            Integrity::Digest,
            |w| write_ternary(w, self.coefficients()),
        )
    }

    /// The **secret** key as bytes ([`LweSecretKey::write_secret_to`]), in a buffer wiped when it is
    /// dropped.
    pub fn to_secret_bytes(&self) -> Zeroizing<Vec<u8>> {
        let mut out = Zeroizing::new(Vec::with_capacity(self.secret_serialized_size() as usize));
        // Writing to a Vec cannot fail, and the capacity is exact, so the buffer never reallocates
        // (which would leave a copy of the key behind).
        let _ = self.write_secret_to(&mut *out);
        out
    }

    /// Reads a secret key of dimension `dimension` written by [`LweSecretKey::write_secret_to`] from a
    /// stream (which may continue after it), checking the header (kind, fingerprint of the dimension),
    /// that every coefficient is ternary, and the digest at its end.
    ///
    /// Errors: [`DecodeError`] naming the field and offset.
    pub fn read_secret_from<R: Read>(r: R, dimension: LweDimension) -> Result<Self, DecodeError> {
        Self::read_secret(&mut WireReader::new(r), dimension)
    }

    /// [`LweSecretKey::read_secret_from`] of exactly `bytes` (digest checked first).
    ///
    /// Errors: [`DecodeError`] naming the field and offset.
    pub fn from_secret_bytes(bytes: &[u8], dimension: LweDimension) -> Result<Self, DecodeError> {
        read_exactly(bytes, Integrity::Digest, |r| {
            Self::read_secret(r, dimension)
        })
    }

    fn read_secret<R: Read>(
        r: &mut WireReader<R>,
        dimension: LweDimension,
    ) -> Result<Self, DecodeError> {
        read_object(
            r,
            kinds::LWE_SECRET_KEY,
            secret_key_fingerprint(dimension),
            |r| {
                let coeffs = read_ternary(r, dimension.get(), "lwe_secret_key.coefficients")?;
                LweSecretKey::from_coefficients(&coeffs)
                    .map_err(|e| r.invalid("lwe_secret_key.coefficients", e.to_string()))
            },
        )
    }
}

// ---- LWE switching keys ------------------------------------------------------------------------------

impl LweSwitchingKeyContext {
    /// The fingerprint its keys carry in their header: of the target key's parameters (the one the
    /// gadget ciphertexts carry) and of the source dimension.
    pub fn fingerprint(&self) -> u64 {
        fingerprint_words([
            self.gadget_fingerprint(),
            self.from_dimension().get() as u64,
        ])
    }
}

impl WireFingerprint for LweSwitchingKeyContext {
    fn wire_fingerprint_for(&self, _version: u16) -> u64 {
        // Version 1 objects are refused before the fingerprint is compared (`read_header`).
        self.fingerprint()
    }
}

impl Serializable for LweSwitchingKey {
    const KIND: ObjectKind = kinds::LWE_SWITCHING_KEY;

    fn wire_fingerprint(&self) -> u64 {
        self.context().fingerprint()
    }

    fn payload_size(&self, randomness: PublicRandomness) -> u64 {
        self.blocks().iter().map(|b| b.wire_size(randomness)).sum()
    }

    fn write_payload<W: Write>(
        &self,
        w: &mut WireWriter<W>,
        randomness: PublicRandomness,
    ) -> io::Result<()> {
        self.blocks()
            .iter()
            .try_for_each(|b| b.write_wire(w, randomness))
    }
}

impl Deserializable<LweSwitchingKeyContext> for LweSwitchingKey {
    fn read_payload<R: Read>(
        r: &mut WireReader<R>,
        ctx: &LweSwitchingKeyContext,
    ) -> Result<Self, DecodeError> {
        let fingerprint = ctx.gadget_fingerprint();
        let digits = ctx.digits();
        let gadget = Gadget::of_digits(digits);
        // Block and row counts are the context's, not the input's.
        let blocks = (0..ctx.blocks())
            .map(|j| {
                GadgetCiphertext::read_wire(
                    r,
                    fingerprint,
                    gadget,
                    digits.basis(),
                    digits.count(),
                    &format!("switching_key.block[{j}]"),
                )
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(LweSwitchingKey::from_blocks(ctx.clone(), blocks))
    }

    fn read_object<R: Read>(
        r: &mut WireReader<R>,
        ctx: &LweSwitchingKeyContext,
    ) -> Result<Self, DecodeError> {
        read_object(r, Self::KIND, ctx.fingerprint(), |r| {
            Self::read_payload(r, ctx)
        })
    }
}

// ---- Look-up tables ----------------------------------------------------------------------------------

/// The fingerprint of the look-up tables of the ring of degree `n` over `q_0`: a table is a plaintext
/// polynomial, which any context with that degree and first prime can rotate (the special modulus and
/// the error width do not change what it means).
fn table_fingerprint(n: usize, q0: u64) -> u64 {
    fingerprint_words([TABLE_TAG, n as u64, q0])
}

/// Reads a scale of a look-up table: finite and positive (what [`LookupTable::from_fn`] accepts).
fn read_scale<R: Read>(r: &mut WireReader<R>, field: &str) -> Result<f64, DecodeError> {
    let at = r.offset();
    let scale = r.f64(field)?;
    if !(scale.is_finite() && scale > 0.0) {
        return Err(r.invalid_at(at, field, format!("{scale} is not a finite positive scale")));
    }
    Ok(scale)
}

impl Serializable for LookupTable {
    const KIND: ObjectKind = kinds::LOOKUP_TABLE;

    fn wire_fingerprint(&self) -> u64 {
        let basis = self.poly().basis();
        table_fingerprint(basis.degree(), basis.moduli()[0].value())
    }

    fn payload_size(&self, _: PublicRandomness) -> u64 {
        28 + self.poly().wire_size()
    }

    fn write_payload<W: Write>(
        &self,
        w: &mut WireWriter<W>,
        _: PublicRandomness,
    ) -> io::Result<()> {
        w.f64(self.input_scale())?;
        w.f64(self.output_scale())?;
        w.u64(self.input_modulus())?;
        w.u32(self.functions() as u32)?;
        self.poly().write_wire(w)
    }
}

/// Tables load into the look-up-table ring (`LutParams::context`): its degree and first prime `q_0`
/// (the header's fingerprint covers both).
impl Deserializable<RlweContext> for LookupTable {
    fn read_payload<R: Read>(
        r: &mut WireReader<R>,
        ctx: &RlweContext,
    ) -> Result<Self, DecodeError> {
        let input_scale = read_scale(r, "lookup_table.input_scale")?;
        let output_scale = read_scale(r, "lookup_table.output_scale")?;
        let at = r.offset();
        let input_modulus = r.u64("lookup_table.input_modulus")?;
        check_input_modulus(ctx, input_modulus)
            .map_err(|e| r.invalid_at(at, "lookup_table.input_modulus", e.to_string()))?;
        let at = r.offset();
        let functions = r.u32("lookup_table.functions")? as usize;
        if !functions.is_power_of_two() || functions > ctx.n() / 4 {
            return Err(r.out_of_range(
                at,
                "lookup_table.functions",
                functions as u64,
                format!("a power of two at most n/4 = {}", ctx.n() / 4),
            ));
        }
        let q0 = ctx
            .basis_at(1)
            .map_err(|e| r.invalid("lookup_table.poly", e.to_string()))?;
        let poly = Poly::<Coeff>::read_wire(r, q0, "lookup_table.poly")?;
        Ok(LookupTable::from_parts(
            poly,
            input_scale,
            output_scale,
            input_modulus,
            functions,
        ))
    }

    fn read_object<R: Read>(r: &mut WireReader<R>, ctx: &RlweContext) -> Result<Self, DecodeError> {
        let fingerprint = table_fingerprint(ctx.n(), ctx.chain().moduli()[0].value());
        read_object(r, Self::KIND, fingerprint, |r| Self::read_payload(r, ctx))
    }
}

// ---- Blind-rotation keys -----------------------------------------------------------------------------

/// How an algorithm's key is laid out on the wire: its code, the RGSW ciphertexts per LWE coefficient
/// and whether it has automorphism keys. One line per [`BlindRotation`] (codes are never reused).
fn layout(algorithm: BlindRotation) -> (u8, u8, bool) {
    match algorithm {
        BlindRotation::Ternary => (0, 2, false),
        BlindRotation::Binary => (1, 1, false),
        BlindRotation::Lmkcdey => (2, 1, true),
    }
}

/// The algorithm with wire code `code`.
fn algorithm_of_code(code: u8) -> Option<BlindRotation> {
    [
        BlindRotation::Ternary,
        BlindRotation::Binary,
        BlindRotation::Lmkcdey,
    ]
    .into_iter()
    .find(|&a| layout(a).0 == code)
}

/// Field names of the blind-rotation key.
const BRK: &str = "blind_rotation_key";

impl Serializable for BlindRotationKey {
    const KIND: ObjectKind = kinds::BLIND_ROTATION_KEY;

    fn wire_fingerprint(&self) -> u64 {
        self.context().fingerprint()
    }

    fn payload_size(&self, randomness: PublicRandomness) -> u64 {
        let rgsw: u64 = self
            .rgsw_keys()
            .iter()
            .flatten()
            .map(|k| k.wire_size(randomness))
            .sum();
        // Algorithm, LWE dimension, RGSW per coefficient, the RGSW ciphertexts, the automorphism-key
        // list (its count alone when empty).
        let automorphisms = self
            .galois_keys()
            .map_or(4, |keys| keys.payload_size(randomness));
        1 + 4 + 1 + rgsw + automorphisms
    }

    fn write_payload<W: Write>(
        &self,
        w: &mut WireWriter<W>,
        randomness: PublicRandomness,
    ) -> io::Result<()> {
        let (code, per_coefficient, _) = layout(self.algorithm());
        w.u8(code)?;
        w.u32(self.lwe_dimension().get() as u32)?;
        w.u8(per_coefficient)?;
        for key in self.rgsw_keys().iter().flatten() {
            key.write_wire(w, randomness)?;
        }
        match self.galois_keys() {
            Some(keys) => keys.write_payload(w, randomness),
            None => w.u32(0),
        }
    }
}

impl BlindRotationKey {
    /// Reads a blind-rotation key of the look-up-table ring `ctx` from a stream (which may continue
    /// after it), checking the header (kind, `ctx`'s fingerprint, format version 2 or later), the
    /// algorithm code, the LWE dimension (at most [`MAX_LWE_DIMENSION`]), the number of RGSW
    /// ciphertexts per coefficient against the algorithm, every residue, and the digest at its end.
    ///
    /// Errors: [`DecodeError`] naming the field and offset.
    pub fn read_from<R: Read>(r: R, ctx: &Arc<RlweContext>) -> Result<Self, DecodeError> {
        Self::read_from_sealed(r, ctx, Integrity::Digest)
    }

    /// [`BlindRotationKey::read_from`] with the digest checked in the mode `integrity` (a MAC under a
    /// shared key).
    ///
    /// Errors: [`DecodeError`] naming the field and offset.
    pub fn read_from_sealed<R: Read>(
        r: R,
        ctx: &Arc<RlweContext>,
        integrity: Integrity<'_>,
    ) -> Result<Self, DecodeError> {
        Self::read_object(&mut WireReader::with_integrity(r, integrity), ctx)
    }

    /// [`BlindRotationKey::read_from`] of exactly `bytes` (digest checked before anything else).
    ///
    /// Errors: [`DecodeError`] naming the field and offset.
    pub fn from_bytes(bytes: &[u8], ctx: &Arc<RlweContext>) -> Result<Self, DecodeError> {
        Self::from_bytes_sealed(bytes, ctx, Integrity::Digest)
    }

    /// [`BlindRotationKey::from_bytes`] with the digest checked in the mode `integrity`.
    ///
    /// Errors: [`DecodeError`] naming the field and offset.
    pub fn from_bytes_sealed(
        bytes: &[u8],
        ctx: &Arc<RlweContext>,
        integrity: Integrity<'_>,
    ) -> Result<Self, DecodeError> {
        read_exactly(bytes, integrity, |r| Self::read_object(r, ctx))
    }

    fn read_object<R: Read>(
        r: &mut WireReader<R>,
        ctx: &Arc<RlweContext>,
    ) -> Result<Self, DecodeError> {
        read_object(r, kinds::BLIND_ROTATION_KEY, ctx.fingerprint(), |r| {
            Self::read_payload(r, ctx)
        })
    }

    fn read_payload<R: Read>(
        r: &mut WireReader<R>,
        ctx: &Arc<RlweContext>,
    ) -> Result<Self, DecodeError> {
        let at = r.offset();
        let code = r.u8(&format!("{BRK}.algorithm"))?;
        let algorithm = algorithm_of_code(code).ok_or_else(|| {
            r.out_of_range(
                at,
                &format!("{BRK}.algorithm"),
                code as u64,
                "0 (ternary), 1 (binary) or 2 (LMKCDEY)",
            )
        })?;
        let (_, per_coefficient, automorphisms) = layout(algorithm);
        let at = r.offset();
        let dimension = r.u32_in(
            &format!("{BRK}.lwe_dimension"),
            1..=MAX_LWE_DIMENSION as u32,
            "an LWE dimension",
        )?;
        let lwe_dimension = LweDimension::new(dimension as usize)
            .map_err(|e| r.invalid_at(at, &format!("{BRK}.lwe_dimension"), e.to_string()))?;
        let at = r.offset();
        let count = r.u8(&format!("{BRK}.rgsw_per_coefficient"))?;
        if count != per_coefficient {
            return Err(r.out_of_range(
                at,
                &format!("{BRK}.rgsw_per_coefficient"),
                count as u64,
                format!("{per_coefficient} for the {algorithm:?} algorithm"),
            ));
        }
        // Collected as the input supplies them: a claimed dimension without the bytes behind it ends in
        // a truncation error, not in an allocation of its size.
        let mut keys = Vec::new();
        for j in 0..lwe_dimension.get() {
            let row = (0..per_coefficient)
                .map(|i| RgswCiphertext::read_wire(r, ctx, &format!("{BRK}.rgsw[{j}][{i}]")))
                .collect::<Result<Vec<_>, _>>()?;
            keys.push(row);
        }
        let galois = if automorphisms {
            Some(GaloisKeys::read_payload(r, ctx)?)
        } else {
            let at = r.offset();
            let field = format!("{BRK}.automorphism_keys.count");
            let count = r.u32(&field)?;
            if count != 0 {
                return Err(r.invalid_at(
                    at,
                    &field,
                    format!("the {algorithm:?} algorithm has no automorphism keys (count 0)"),
                ));
            }
            None
        };
        let at = r.offset();
        BlindRotationKey::from_parts(Arc::clone(ctx), lwe_dimension, algorithm, keys, galois)
            .map_err(|e| r.invalid_at(at, &format!("{BRK}.automorphism_keys"), e.to_string()))
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::keyswitch::LweKeySwitchParams;
    use crate::lut::{LutEvaluator, LutParams};
    use rnsfhe_core::{SecretDistribution, SecretKey};
    use rnsfhe_math::primes::ntt_primes_of_bits;
    use rnsfhe_math::sampling::{Csprng, DiscreteGaussian};
    use rnsfhe_math::wire::{reseal, MacKey};

    /// A small look-up-table ring (`n = 2^6`, insecure), its generator, a ring key and an LWE key of
    /// dimension 16 (ternary, or binary).
    struct Setup {
        ctx: Arc<RlweContext>,
        rng: Csprng,
        ring: SecretKey,
        lwe: LweSecretKey,
    }

    fn setup(binary: bool) -> Setup {
        let q0 = ntt_primes_of_bits(45, 128, 1, &[]).unwrap()[0];
        let special = ntt_primes_of_bits(60, 128, 1, &[q0]).unwrap()[0];
        let ctx = LutParams {
            log_n: 6,
            q0,
            special,
            sigma: 3.2,
            secret: SecretDistribution::HammingWeight(16),
        }
        .context_allowing_insecure()
        .unwrap();
        let mut rng = Csprng::insecure_from_seed_for_tests([9; 32]);
        let ring = SecretKey::generate(&ctx, &mut rng).unwrap();
        let n = LweDimension::new(16).unwrap();
        let lwe = if binary {
            LweSecretKey::generate(n, crate::LweSecretDistribution::UniformBinary, &mut rng)
                .unwrap()
        } else {
            LweSecretKey::generate(n, SecretDistribution::Ternary, &mut rng).unwrap()
        };
        Setup {
            ctx,
            rng,
            ring,
            lwe,
        }
    }

    fn q0(ctx: &RlweContext) -> Modulus {
        ctx.chain().moduli()[0]
    }

    #[test]
    fn kinds_stay_in_the_crates_range() {
        for kind in kinds::KINDS {
            assert!(
                rnsfhe_math::wire::kind_codes::LWE.contains(&kind.code()),
                "{kind}"
            );
        }
        let secret: Vec<_> = kinds::KINDS.iter().filter(|k| k.is_secret()).collect();
        assert_eq!(secret, [&kinds::LWE_SECRET_KEY]);
    }

    #[test]
    fn ciphertexts_round_trip_at_every_width_and_check_their_space() {
        let mut rng = Csprng::insecure_from_seed_for_tests([1; 32]);
        let noise = DiscreteGaussian::with_sigma(3.2).unwrap();
        for (n, q) in [
            (1, 2u64),
            (5, 3),
            (16, 257),
            (64, (1 << 61) + 1),
            (100, 1 << 40),
        ] {
            let dim = LweDimension::new(n).unwrap();
            let sk = LweSecretKey::generate(dim, SecretDistribution::Ternary, &mut rng).unwrap();
            let modulus = Modulus::new(q).unwrap();
            let ct = sk.encrypt(1, &modulus, &noise, &mut rng);
            let bytes = ct.to_bytes();
            assert_eq!(bytes.len() as u64, ct.serialized_size());
            let space = LweSpace::new(dim, q).unwrap();
            assert_eq!(space, LweSpace::of(&ct));
            assert_eq!(LweCiphertext::from_bytes(&bytes, &space).unwrap(), ct);
            // Another dimension or modulus: the header's fingerprint says so.
            for other in [
                LweSpace::new(LweDimension::new(n + 1).unwrap(), q).unwrap(),
                LweSpace::new(dim, q + 1).unwrap(),
            ] {
                let err = LweCiphertext::from_bytes(&bytes, &other).unwrap_err();
                assert_eq!(err.field, "header.fingerprint", "{err}");
            }
        }
        // 64 coefficients of 45 bits and b: 65 x 45 bits instead of 65 words.
        let ct = LweCiphertext::from_parts((1 << 44) + 7, 3, vec![1; 64]).unwrap();
        assert_eq!(ct.serialized_size(), 16 + 6 + 360 + 32);
    }

    #[test]
    fn ciphertext_residues_at_or_above_the_modulus_are_refused() {
        let ct = LweCiphertext::from_parts(257, 256, vec![0, 1, 2, 3]).unwrap();
        let space = LweSpace::of(&ct);
        let mut bytes = ct.to_bytes();
        // b is 9 bits (2 bytes), then a at 9 bits each: a_1 = 1 starts at bit 9 of the mask.
        bytes[16] = 0xff;
        bytes[17] = 0x01; // b = 511 >= 257
        reseal(&mut bytes);
        let err = LweCiphertext::from_bytes(&bytes, &space).unwrap_err();
        assert_eq!(err.field, "lwe_ciphertext.b[0]", "{err}");
        let mut bytes = ct.to_bytes();
        bytes[19] |= 0xfe; // a_1 = bits 9..18 of the mask: all ones, 511 >= 257
        bytes[20] |= 0x03;
        reseal(&mut bytes);
        let err = LweCiphertext::from_bytes(&bytes, &space).unwrap_err();
        assert_eq!(err.field, "lwe_ciphertext.a[1]", "{err}");
    }

    #[test]
    fn version_1_headers_are_refused_and_macs_work() {
        let ct = LweCiphertext::from_parts(257, 5, vec![7; 3]).unwrap();
        let space = LweSpace::of(&ct);
        let bytes = ct.to_bytes();
        let mut v1 = bytes[..bytes.len() - 32].to_vec();
        v1[4..6].copy_from_slice(&1u16.to_le_bytes());
        let err = LweCiphertext::from_bytes(&v1, &space).unwrap_err();
        assert_eq!((err.field.as_str(), err.offset), ("header.version", 4));
        assert!(err.to_string().contains("version 2"), "{err}");
        let key = MacKey::from_bytes([3; 32]);
        let sealed = ct.to_bytes_sealed(PublicRandomness::Seeded, Integrity::Mac(&key));
        let back = LweCiphertext::from_bytes_sealed(&sealed, &space, Integrity::Mac(&key)).unwrap();
        assert_eq!(back, ct);
        let err = LweCiphertext::from_bytes(&sealed, &space).unwrap_err();
        assert_eq!(err.field, "digest");
        // A stream: two ciphertexts one after the other.
        let two = [bytes.clone(), bytes].concat();
        let mut stream = &two[..];
        for _ in 0..2 {
            assert_eq!(LweCiphertext::read_from(&mut stream, &space).unwrap(), ct);
        }
        assert!(stream.is_empty());
    }

    #[test]
    fn secret_keys_round_trip_only_through_their_named_functions() {
        let s = setup(false);
        let bytes = s.lwe.to_secret_bytes();
        assert_eq!(bytes.len() as u64, s.lwe.secret_serialized_size());
        assert_eq!(bytes.len(), 16 + 4 + 32, "16 coefficients at 2 bits");
        let n = s.lwe.dimension();
        let back = LweSecretKey::from_secret_bytes(&bytes, n).unwrap();
        assert_eq!(back.coefficients(), s.lwe.coefficients());
        let back = LweSecretKey::read_secret_from(&bytes[..], n).unwrap();
        assert_eq!(back.coefficients(), s.lwe.coefficients());
        let err =
            LweSecretKey::from_secret_bytes(&bytes, LweDimension::new(32).unwrap()).unwrap_err();
        assert_eq!(err.field, "header.fingerprint");
        // Code 3 is no ternary value.
        let mut bad = bytes.to_vec();
        bad[16] |= 0x03;
        reseal(&mut bad);
        let err = LweSecretKey::from_secret_bytes(&bad, n).unwrap_err();
        assert_eq!(err.field, "lwe_secret_key.coefficients[0]", "{err}");
        // A secret key is not a ciphertext.
        let space = LweSpace::new(n, 5).unwrap();
        let err = LweCiphertext::from_bytes(&bytes, &space).unwrap_err();
        assert_eq!(err.field, "header.kind");
    }

    #[test]
    fn switching_keys_round_trip_seeded_and_expanded_and_switch_alike() {
        let mut s = setup(false);
        let from = LweSecretKey::from_ring_key(&s.ring).unwrap();
        let params = LweKeySwitchParams {
            modulus: q0(&s.ctx).value(),
            base_log: 7,
            digits: 7,
            sigma: 3.2,
        };
        let key =
            LweSwitchingKey::generate_allowing_insecure(&from, &s.lwe, params, &mut s.rng).unwrap();
        let ctx = LweSwitchingKeyContext::new(from.dimension(), s.lwe.dimension(), params).unwrap();
        assert_eq!(ctx.fingerprint(), key.context().fingerprint());
        let noise = DiscreteGaussian::with_sigma(3.2).unwrap();
        let ct = from.encrypt(1000, &q0(&s.ctx), &noise, &mut s.rng);
        let expected = key.switch(&ct).unwrap();
        for randomness in [PublicRandomness::Seeded, PublicRandomness::Expanded] {
            let bytes = key.to_bytes_with(randomness);
            assert_eq!(bytes.len() as u64, key.serialized_size_with(randomness));
            let back = LweSwitchingKey::from_bytes(&bytes, &ctx).unwrap();
            assert_eq!(back.switch(&ct).unwrap(), expected);
            for (a, b) in back.blocks().iter().zip(key.blocks()) {
                assert_eq!(a.rows(), b.rows());
            }
        }
        // Four blocks of seven rows over one 45-bit prime at n = 16 (90 bytes a polynomial): the seed
        // replaces the seven a_i of each block.
        assert_eq!(key.serialized_size(), 16 + 4 * (1 + 7 * 90 + 32) + 32);
        assert_eq!(
            key.serialized_size_with(PublicRandomness::Expanded),
            16 + 4 * (1 + 14 * 90) + 32
        );
        // Other parameters: another width, another source dimension.
        for other in [
            LweSwitchingKeyContext::new(
                from.dimension(),
                s.lwe.dimension(),
                LweKeySwitchParams {
                    sigma: 3.3,
                    ..params
                },
            )
            .unwrap(),
            LweSwitchingKeyContext::new(LweDimension::new(48).unwrap(), s.lwe.dimension(), params)
                .unwrap(),
        ] {
            let err = LweSwitchingKey::from_bytes(&key.to_bytes(), &other).unwrap_err();
            assert_eq!(err.field, "header.fingerprint");
        }
        // The first block's seeded flag.
        let mut bad = key.to_bytes();
        bad[16] = 2;
        reseal(&mut bad);
        let err = LweSwitchingKey::from_bytes(&bad, &ctx).unwrap_err();
        assert_eq!(err.field, "switching_key.block[0].seeded");
        assert!(LweSwitchingKeyContext::new(
            from.dimension(),
            LweDimension::new(24).unwrap(),
            params
        )
        .is_err());
    }

    #[test]
    fn tables_round_trip_and_check_their_scales() {
        let s = setup(false);
        let table = LookupTable::from_fn(&s.ctx, 1e9, 2e9, |x| x.tanh()).unwrap();
        let bytes = table.to_bytes();
        assert_eq!(bytes.len() as u64, table.serialized_size());
        assert_eq!(LookupTable::from_bytes(&bytes, &s.ctx).unwrap(), table);
        for (at, field) in [
            (16, "lookup_table.input_scale"),
            (24, "lookup_table.output_scale"),
        ] {
            for bad_scale in [f64::NAN, -1.0, 0.0, f64::INFINITY] {
                let mut bad = bytes.clone();
                bad[at..at + 8].copy_from_slice(&bad_scale.to_le_bytes());
                reseal(&mut bad);
                let err = LookupTable::from_bytes(&bad, &s.ctx).unwrap_err();
                assert_eq!((err.field.as_str(), err.offset), (field, at as u64));
            }
        }
        // A ring of another degree: another fingerprint.
        let other = LutParams {
            log_n: 7,
            q0: q0(&s.ctx).value(),
            special: s.ctx.special_basis().moduli()[0].value(),
            sigma: 3.2,
            secret: SecretDistribution::Ternary,
        }
        .context_allowing_insecure()
        .unwrap();
        let err = LookupTable::from_bytes(&bytes, &other).unwrap_err();
        assert_eq!(err.field, "header.fingerprint");
    }

    #[test]
    fn blind_rotation_keys_round_trip_and_rotate_alike() {
        for (binary, algorithm) in [
            (false, BlindRotation::Ternary),
            (true, BlindRotation::Binary),
        ] {
            let mut s = setup(binary);
            let key =
                BlindRotationKey::generate_with(algorithm, &s.ctx, &s.ring, &s.lwe, &mut s.rng)
                    .unwrap();
            let delta = q0(&s.ctx).value() as f64 / 16.0;
            let table = LookupTable::from_fn(&s.ctx, delta, delta, |x| x).unwrap();
            let noise = DiscreteGaussian::with_sigma(3.2).unwrap();
            let ct = s.lwe.encrypt(delta as i64, &q0(&s.ctx), &noise, &mut s.rng);
            let expected = LutEvaluator::new(key.clone())
                .evaluate(&ct, &table)
                .unwrap();
            if binary {
                // The LMKCDEY key of the same LWE key: its RGSW keys and its automorphism keys (window
                // 3: g, g^2, g^3 and -g) load and rotate alike.
                let lmkcdey =
                    BlindRotationKey::generate_lmkcdey(&s.ctx, &s.ring, &s.lwe, 3, &mut s.rng)
                        .unwrap();
                let want = LutEvaluator::new(lmkcdey.clone())
                    .evaluate(&ct, &table)
                    .unwrap();
                let bytes = lmkcdey.to_bytes();
                assert_eq!(bytes.len() as u64, lmkcdey.serialized_size());
                let back = BlindRotationKey::from_bytes(&bytes, &s.ctx).unwrap();
                assert_eq!(
                    (back.algorithm(), back.window()),
                    (BlindRotation::Lmkcdey, Some(3))
                );
                assert_eq!(back.galois_keys(), lmkcdey.galois_keys());
                let got = LutEvaluator::new(back).evaluate(&ct, &table).unwrap();
                assert_eq!(got, want);
                // Keys of 7, 25, 125, -5 instead of 5, 25, 125, -5: not the automorphisms of a window.
                let galois = lmkcdey.galois_keys().unwrap();
                let mut cut = bytes[..bytes.len() - 32].to_vec();
                let list_at = cut.len() - galois.payload_size(PublicRandomness::Seeded) as usize;
                assert_eq!(cut[list_at + 4..list_at + 8], 5u32.to_le_bytes());
                cut[list_at + 4..list_at + 8].copy_from_slice(&7u32.to_le_bytes());
                let digest = rnsfhe_math::wire::digest_of(&cut, Integrity::Digest);
                cut.extend(digest);
                let err = BlindRotationKey::from_bytes(&cut, &s.ctx).unwrap_err();
                assert_eq!(err.field, "blind_rotation_key.automorphism_keys", "{err}");
            }
            for randomness in [PublicRandomness::Seeded, PublicRandomness::Expanded] {
                let bytes = key.to_bytes_with(randomness);
                assert_eq!(bytes.len() as u64, key.serialized_size_with(randomness));
                let back = BlindRotationKey::from_bytes(&bytes, &s.ctx).unwrap();
                assert_eq!(back.algorithm(), algorithm);
                assert_eq!(back.lwe_dimension(), key.lwe_dimension());
                let got = LutEvaluator::new(back).evaluate(&ct, &table).unwrap();
                assert_eq!(got, expected, "{algorithm:?} {randomness:?}");
                let back = BlindRotationKey::read_from(&bytes[..], &s.ctx).unwrap();
                // Equal with their seeds when written seeded (an expanded key loads without seeds).
                let same = back.rgsw_keys() == key.rgsw_keys();
                assert_eq!(same, randomness == PublicRandomness::Seeded);
            }
            // 16 coefficients, two or one RGSW each, two gadget ciphertexts per RGSW of one row over
            // q_0 q' (45 + 60 bits at n = 64: 840 bytes a polynomial); the seed replaces each a.
            let gadget_ciphertexts = 16 * if binary { 1 } else { 2 } * 2;
            let framing = 16 + 6 + 4 + 32;
            assert_eq!(
                key.serialized_size(),
                framing + gadget_ciphertexts * (1 + 840 + 32)
            );
            assert_eq!(
                key.serialized_size_with(PublicRandomness::Expanded),
                framing + gadget_ciphertexts * (1 + 2 * 840)
            );
        }
    }

    #[test]
    fn hostile_blind_rotation_keys_are_errors() {
        let mut s = setup(false);
        let key = BlindRotationKey::generate(&s.ctx, &s.ring, &s.lwe, &mut s.rng).unwrap();
        let bytes = key.to_bytes();
        let edit = |at: usize, v: &[u8]| {
            let mut b = bytes.clone();
            b[at..at + v.len()].copy_from_slice(v);
            reseal(&mut b);
            BlindRotationKey::from_bytes(&b, &s.ctx).unwrap_err()
        };
        assert_eq!(edit(16, &[7]).field, "blind_rotation_key.algorithm");
        // The binary code with the ternary layout: two RGSW per coefficient where it takes one.
        assert_eq!(
            edit(16, &[1]).field,
            "blind_rotation_key.rgsw_per_coefficient"
        );
        assert_eq!(
            edit(21, &[3]).field,
            "blind_rotation_key.rgsw_per_coefficient"
        );
        for dimension in [0u32, MAX_LWE_DIMENSION as u32 + 1, u32::MAX] {
            let err = edit(17, &dimension.to_le_bytes());
            assert_eq!(err.field, "blind_rotation_key.lwe_dimension");
        }
        // The largest dimension without the bytes behind it: a truncation once the 16 coefficients
        // present are read, not an allocation of 2^17 coefficients' keys.
        let err = edit(17, &(MAX_LWE_DIMENSION as u32).to_le_bytes());
        assert_eq!(err.kind, DecodeErrorKind::Truncated, "{err}");
        assert!(
            err.field.starts_with("blind_rotation_key.rgsw[16][0].m"),
            "{err}"
        );
        // Automorphism keys for an algorithm that has none: refused at the count, whatever follows.
        let list = bytes.len() - 32 - 4;
        for (element, field) in [(5u32, "count"), (2, "count")] {
            let mut more = bytes[..list].to_vec();
            more.extend(1u32.to_le_bytes());
            more.extend(element.to_le_bytes());
            let digest = rnsfhe_math::wire::digest_of(&more, Integrity::Digest);
            more.extend(digest);
            let err = BlindRotationKey::from_bytes(&more, &s.ctx).unwrap_err();
            assert_eq!(
                err.field,
                format!("blind_rotation_key.automorphism_keys.{field}"),
                "{err}"
            );
        }
        // Another ring.
        let other = setup_other_ring();
        let err = BlindRotationKey::from_bytes(&bytes, &other).unwrap_err();
        assert_eq!(err.field, "header.fingerprint");
    }

    fn setup_other_ring() -> Arc<RlweContext> {
        let q0 = ntt_primes_of_bits(45, 128, 1, &[]).unwrap()[0];
        let special = ntt_primes_of_bits(50, 128, 1, &[q0]).unwrap()[0];
        LutParams {
            log_n: 6,
            q0,
            special,
            sigma: 3.2,
            secret: SecretDistribution::HammingWeight(16),
        }
        .context_allowing_insecure()
        .unwrap()
    }
}
