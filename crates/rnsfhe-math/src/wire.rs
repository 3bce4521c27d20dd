//! The versioned binary format of every object rnsfhe sends or stores (DESIGN "Serialization").
//!
//! An object on the wire is a fixed 16-byte **header** followed by its **payload**:
//!
//! ```text
//! offset  size  field
//!      0     4  magic "RNSF"
//!      4     2  format version (little endian), FORMAT_VERSION
//!      6     2  object kind (ObjectKind code)
//!      8     8  fingerprint of the parameters the object belongs to
//!     16     .  payload (defined by each object type; integers little endian)
//! ```
//!
//! This module holds the parts every layer shares: the header, the registry of object kinds, a
//! [`WireWriter`] that counts the bytes it writes and a [`WireReader`] that tracks the byte offset so
//! that every error names the field and the offset where decoding failed ([`DecodeError`]).
//!
//! Why a hand-written format rather than a serde encoding: loading must validate as it reads (residues
//! below their modulus, lengths against the parameters already loaded) without ever allocating from an
//! unchecked length, must report the field and byte offset of the first bad byte, and must stream
//! multi-gigabyte key sets through `std::io::{Read, Write}` without buffering them. Every length in a
//! payload is therefore either implied by the parameters or checked against a bound derived from them
//! before anything is allocated.

use std::fmt;
use std::io::{self, Read, Write};

/// The magic bytes that open every object.
pub const MAGIC: [u8; 4] = *b"RNSF";

/// The format version this build writes. Readers accept every version in
/// [`MIN_READ_VERSION`]`..=FORMAT_VERSION`.
pub const FORMAT_VERSION: u16 = 1;

/// The oldest format version this build still reads.
pub const MIN_READ_VERSION: u16 = 1;

/// Length of the header in bytes.
pub const HEADER_LEN: u64 = 16;

/// The kind of object a header announces. Codes are part of the format and never reused.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ObjectKind {
    /// CKKS parameters (`CkksParams`).
    CkksParameters,
    /// BFV parameters (`BfvParams`).
    BfvParameters,
    /// An RLWE secret key (written only by an explicitly named function).
    SecretKey,
    /// An RLWE public key `(b, a)`.
    PublicKey,
    /// The hybrid relinearization key of `rnsfhe-core` (CKKS).
    RelinKey,
    /// Hybrid Galois keys of `rnsfhe-core` (CKKS rotations and conjugation).
    GaloisKeys,
    /// A CKKS plaintext.
    CkksPlaintext,
    /// A CKKS ciphertext (also written by seeded symmetric ciphertexts).
    CkksCiphertext,
    /// The HPS relinearization key of BFV.
    BfvRelinKey,
    /// BFV Galois keys.
    BfvGaloisKeys,
    /// A BFV plaintext.
    BfvPlaintext,
    /// A BFV ciphertext (also written by seeded symmetric ciphertexts).
    BfvCiphertext,
}

impl ObjectKind {
    /// Every kind, for lookups by code.
    pub const ALL: [ObjectKind; 12] = [
        ObjectKind::CkksParameters,
        ObjectKind::BfvParameters,
        ObjectKind::SecretKey,
        ObjectKind::PublicKey,
        ObjectKind::RelinKey,
        ObjectKind::GaloisKeys,
        ObjectKind::CkksPlaintext,
        ObjectKind::CkksCiphertext,
        ObjectKind::BfvRelinKey,
        ObjectKind::BfvGaloisKeys,
        ObjectKind::BfvPlaintext,
        ObjectKind::BfvCiphertext,
    ];

    /// The code written in the header.
    pub fn code(self) -> u16 {
        match self {
            ObjectKind::CkksParameters => 1,
            ObjectKind::BfvParameters => 2,
            ObjectKind::SecretKey => 16,
            ObjectKind::PublicKey => 17,
            ObjectKind::RelinKey => 18,
            ObjectKind::GaloisKeys => 19,
            ObjectKind::CkksPlaintext => 32,
            ObjectKind::CkksCiphertext => 33,
            ObjectKind::BfvRelinKey => 48,
            ObjectKind::BfvGaloisKeys => 49,
            ObjectKind::BfvPlaintext => 50,
            ObjectKind::BfvCiphertext => 51,
        }
    }

    /// The kind with header code `code`, if any.
    pub fn from_code(code: u16) -> Option<Self> {
        Self::ALL.into_iter().find(|k| k.code() == code)
    }

    /// Whether objects of this kind hold secret material (a server must refuse them).
    pub fn is_secret(self) -> bool {
        self == ObjectKind::SecretKey
    }
}

impl fmt::Display for ObjectKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = match self {
            ObjectKind::CkksParameters => "CKKS parameters",
            ObjectKind::BfvParameters => "BFV parameters",
            ObjectKind::SecretKey => "secret key",
            ObjectKind::PublicKey => "public key",
            ObjectKind::RelinKey => "relinearization key",
            ObjectKind::GaloisKeys => "Galois keys",
            ObjectKind::CkksPlaintext => "CKKS plaintext",
            ObjectKind::CkksCiphertext => "CKKS ciphertext",
            ObjectKind::BfvRelinKey => "BFV relinearization key",
            ObjectKind::BfvGaloisKeys => "BFV Galois keys",
            ObjectKind::BfvPlaintext => "BFV plaintext",
            ObjectKind::BfvCiphertext => "BFV ciphertext",
        };
        f.write_str(name)
    }
}

/// A decoded header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Header {
    /// The format version the object was written with.
    pub version: u16,
    /// The object kind.
    pub kind: ObjectKind,
    /// The fingerprint of the parameters the object belongs to.
    pub fingerprint: u64,
}

impl Header {
    /// Reads and checks a header: magic, a readable version and a known kind. The kind and fingerprint
    /// are checked against expectations by [`Header::expect`].
    pub fn read<R: Read>(r: &mut WireReader<R>) -> Result<Self, DecodeError> {
        let magic: [u8; 4] = r.array("header.magic")?;
        if magic != MAGIC {
            return Err(r.invalid_at(
                0,
                "header.magic",
                format!("expected {MAGIC:?} (\"RNSF\"), found {magic:?}: not an rnsfhe object"),
            ));
        }
        let version = r.u16("header.version")?;
        if !(MIN_READ_VERSION..=FORMAT_VERSION).contains(&version) {
            return Err(r.invalid_at(
                4,
                "header.version",
                format!(
                    "format version {version} is not readable by this build (reads \
                     {MIN_READ_VERSION}..={FORMAT_VERSION}); upgrade rnsfhe"
                ),
            ));
        }
        let code = r.u16("header.kind")?;
        let kind = ObjectKind::from_code(code).ok_or_else(|| {
            r.invalid_at(6, "header.kind", format!("unknown object kind code {code}"))
        })?;
        let fingerprint = r.u64("header.fingerprint")?;
        Ok(Self {
            version,
            kind,
            fingerprint,
        })
    }

    /// Checks that the header announces `kind` and, if given, the fingerprint of the context the caller
    /// loads into.
    pub fn expect(&self, kind: ObjectKind, fingerprint: Option<u64>) -> Result<(), DecodeError> {
        if self.kind != kind {
            return Err(DecodeError::new(
                "header.kind",
                6,
                DecodeErrorKind::WrongKind {
                    expected: kind,
                    found: self.kind,
                },
            ));
        }
        if let Some(expected) = fingerprint {
            if self.fingerprint != expected {
                return Err(DecodeError::new(
                    "header.fingerprint",
                    8,
                    DecodeErrorKind::FingerprintMismatch {
                        expected,
                        found: self.fingerprint,
                    },
                ));
            }
        }
        Ok(())
    }

    /// Writes a header for `kind` and `fingerprint` at the current format version.
    pub fn write<W: Write>(
        w: &mut WireWriter<W>,
        kind: ObjectKind,
        fingerprint: u64,
    ) -> io::Result<()> {
        w.bytes(&MAGIC)?;
        w.u16(FORMAT_VERSION)?;
        w.u16(kind.code())?;
        w.u64(fingerprint)
    }
}

/// What went wrong while decoding.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum DecodeErrorKind {
    /// The input ended inside the field.
    Truncated,
    /// The underlying reader failed.
    Io(String),
    /// The header announces another kind of object.
    WrongKind {
        /// The kind the caller asked for.
        expected: ObjectKind,
        /// The kind in the header.
        found: ObjectKind,
    },
    /// The object belongs to other parameters.
    FingerprintMismatch {
        /// The fingerprint of the context the caller loads into.
        expected: u64,
        /// The fingerprint in the header.
        found: u64,
    },
    /// A value outside its allowed range (a residue not below its modulus, a level above the chain).
    OutOfRange {
        /// The value read.
        value: u64,
        /// The description of the allowed range.
        allowed: String,
    },
    /// Any other inconsistency, described.
    Invalid(String),
    /// Bytes remain after a complete object.
    TrailingBytes {
        /// How many bytes remain.
        count: u64,
    },
}

/// A decoding failure: the field being read, the byte offset (from the start of the object) where it
/// starts or where the bad value is, and what went wrong. Never a panic, whatever the input.
#[derive(Clone, Debug, PartialEq)]
pub struct DecodeError {
    /// The field, as a path (`"galois_keys.key[3].component[1].b.limb[0]"`).
    pub field: String,
    /// Byte offset from the start of the object.
    pub offset: u64,
    /// What went wrong.
    pub kind: DecodeErrorKind,
}

impl DecodeError {
    /// An error at `offset` in `field`.
    pub fn new(field: impl Into<String>, offset: u64, kind: DecodeErrorKind) -> Self {
        Self {
            field: field.into(),
            offset,
            kind,
        }
    }
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "malformed input: field `{}` at byte {}: ",
            self.field, self.offset
        )?;
        match &self.kind {
            DecodeErrorKind::Truncated => {
                f.write_str("the input ends inside this field (truncated)")
            }
            DecodeErrorKind::Io(e) => write!(f, "read error: {e}"),
            DecodeErrorKind::WrongKind { expected, found } => write!(
                f,
                "expected a {expected}, found a {found}; load it with the matching type"
            ),
            DecodeErrorKind::FingerprintMismatch { expected, found } => write!(
                f,
                "the object belongs to other parameters (fingerprint {found:#018x}, this context \
                 {expected:#018x}); load the parameters it was made with"
            ),
            DecodeErrorKind::OutOfRange { value, allowed } => {
                write!(f, "value {value} is out of range ({allowed})")
            }
            DecodeErrorKind::Invalid(reason) => f.write_str(reason),
            DecodeErrorKind::TrailingBytes { count } => {
                write!(f, "{count} unexpected bytes after the end of the object")
            }
        }
    }
}

impl std::error::Error for DecodeError {}

/// A writer that counts the bytes written (so `serialized_size()` can be checked against what was
/// written) and writes integers little endian.
#[derive(Debug)]
pub struct WireWriter<W: Write> {
    inner: W,
    written: u64,
}

impl<W: Write> WireWriter<W> {
    /// Wraps `inner`.
    pub fn new(inner: W) -> Self {
        Self { inner, written: 0 }
    }

    /// Bytes written so far.
    pub fn written(&self) -> u64 {
        self.written
    }

    /// The wrapped writer.
    pub fn into_inner(self) -> W {
        self.inner
    }

    /// Writes raw bytes.
    pub fn bytes(&mut self, b: &[u8]) -> io::Result<()> {
        self.inner.write_all(b)?;
        self.written += b.len() as u64;
        Ok(())
    }

    /// Writes a byte.
    pub fn u8(&mut self, v: u8) -> io::Result<()> {
        self.bytes(&[v])
    }

    /// Writes a `u16`.
    pub fn u16(&mut self, v: u16) -> io::Result<()> {
        self.bytes(&v.to_le_bytes())
    }

    /// Writes a `u32`.
    pub fn u32(&mut self, v: u32) -> io::Result<()> {
        self.bytes(&v.to_le_bytes())
    }

    /// Writes a `u64`.
    pub fn u64(&mut self, v: u64) -> io::Result<()> {
        self.bytes(&v.to_le_bytes())
    }

    /// Writes an `f64` (its IEEE-754 bits).
    pub fn f64(&mut self, v: f64) -> io::Result<()> {
        self.u64(v.to_bits())
    }

    /// Writes `values` packed at `width` bits each (least significant bit first), padded with zero bits
    /// to a whole byte: [`packed_len`] bytes. Every value must be below `2^width` (`1 <= width <= 64`).
    pub fn packed(&mut self, values: &[u64], width: u32) -> io::Result<()> {
        debug_assert!((1..=64).contains(&width));
        debug_assert!(width == 64 || values.iter().all(|&v| v >> width == 0));
        let mut buf = [0u8; 4096];
        let mut len = 0usize;
        let mut acc: u128 = 0;
        let mut bits = 0u32;
        for &v in values {
            acc |= (v as u128) << bits;
            bits += width;
            while bits >= 8 {
                buf[len] = acc as u8;
                len += 1;
                acc >>= 8;
                bits -= 8;
                if len == buf.len() {
                    self.bytes(&buf)?;
                    len = 0;
                }
            }
        }
        if bits > 0 {
            buf[len] = acc as u8;
            len += 1;
        }
        self.bytes(&buf[..len])
    }
}

/// Number of bytes of `count` values packed at `width` bits ([`WireWriter::packed`]).
pub fn packed_len(count: usize, width: u32) -> u64 {
    (count as u64 * width as u64).div_ceil(8)
}

/// A reader that tracks the byte offset from the start of the object and turns every failure into a
/// [`DecodeError`] naming the field.
#[derive(Debug)]
pub struct WireReader<R: Read> {
    inner: R,
    offset: u64,
}

impl<R: Read> WireReader<R> {
    /// Wraps `inner`; offsets count from here.
    pub fn new(inner: R) -> Self {
        Self { inner, offset: 0 }
    }

    /// The current byte offset.
    pub fn offset(&self) -> u64 {
        self.offset
    }

    /// The wrapped reader.
    pub fn into_inner(self) -> R {
        self.inner
    }

    /// An [`DecodeErrorKind::Invalid`] error in `field` at the current offset.
    pub fn invalid(&self, field: &str, reason: impl Into<String>) -> DecodeError {
        DecodeError::new(field, self.offset, DecodeErrorKind::Invalid(reason.into()))
    }

    /// An [`DecodeErrorKind::Invalid`] error in `field` at `offset`.
    pub fn invalid_at(&self, offset: u64, field: &str, reason: impl Into<String>) -> DecodeError {
        DecodeError::new(field, offset, DecodeErrorKind::Invalid(reason.into()))
    }

    /// An [`DecodeErrorKind::OutOfRange`] error for a value of `field` that started at `offset`.
    pub fn out_of_range(
        &self,
        offset: u64,
        field: &str,
        value: u64,
        allowed: impl Into<String>,
    ) -> DecodeError {
        DecodeError::new(
            field,
            offset,
            DecodeErrorKind::OutOfRange {
                value,
                allowed: allowed.into(),
            },
        )
    }

    /// Fills `buf` exactly.
    pub fn fill(&mut self, field: &str, buf: &mut [u8]) -> Result<(), DecodeError> {
        let mut done = 0;
        while done < buf.len() {
            match self.inner.read(&mut buf[done..]) {
                Ok(0) => {
                    return Err(DecodeError::new(
                        field,
                        self.offset + done as u64,
                        DecodeErrorKind::Truncated,
                    ))
                }
                Ok(k) => done += k,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => {
                    return Err(DecodeError::new(
                        field,
                        self.offset + done as u64,
                        DecodeErrorKind::Io(e.to_string()),
                    ))
                }
            }
        }
        self.offset += buf.len() as u64;
        Ok(())
    }

    /// Reads `N` bytes.
    pub fn array<const N: usize>(&mut self, field: &str) -> Result<[u8; N], DecodeError> {
        let mut b = [0u8; N];
        self.fill(field, &mut b)?;
        Ok(b)
    }

    /// Reads a byte.
    pub fn u8(&mut self, field: &str) -> Result<u8, DecodeError> {
        Ok(self.array::<1>(field)?[0])
    }

    /// Reads a `u16`.
    pub fn u16(&mut self, field: &str) -> Result<u16, DecodeError> {
        Ok(u16::from_le_bytes(self.array(field)?))
    }

    /// Reads a `u32`.
    pub fn u32(&mut self, field: &str) -> Result<u32, DecodeError> {
        Ok(u32::from_le_bytes(self.array(field)?))
    }

    /// Reads a `u64`.
    pub fn u64(&mut self, field: &str) -> Result<u64, DecodeError> {
        Ok(u64::from_le_bytes(self.array(field)?))
    }

    /// Reads an `f64`.
    pub fn f64(&mut self, field: &str) -> Result<f64, DecodeError> {
        Ok(f64::from_bits(self.u64(field)?))
    }

    /// Reads a boolean byte (0 or 1).
    pub fn flag(&mut self, field: &str) -> Result<bool, DecodeError> {
        let at = self.offset;
        match self.u8(field)? {
            0 => Ok(false),
            1 => Ok(true),
            v => Err(self.out_of_range(at, field, v as u64, "0 or 1")),
        }
    }

    /// Reads a `u32` and checks that it lies in `range`; the error names the range and `what` it bounds.
    pub fn u32_in(
        &mut self,
        field: &str,
        range: std::ops::RangeInclusive<u32>,
        what: &str,
    ) -> Result<u32, DecodeError> {
        let at = self.offset;
        let v = self.u32(field)?;
        if !range.contains(&v) {
            return Err(self.out_of_range(
                at,
                field,
                v as u64,
                format!("{what}: {}..={}", range.start(), range.end()),
            ));
        }
        Ok(v)
    }

    /// Reads `out.len()` values packed at `width` bits ([`WireWriter::packed`]), checking each against
    /// `bound` (values must be `< bound`) and that the padding bits are zero. `out` is allocated by the
    /// caller from trusted sizes, so nothing here depends on lengths read from the input.
    pub fn packed(
        &mut self,
        field: &str,
        out: &mut [u64],
        width: u32,
        bound: u64,
    ) -> Result<(), DecodeError> {
        debug_assert!((1..=64).contains(&width));
        let start = self.offset;
        let mask: u128 = if width == 64 {
            u64::MAX as u128
        } else {
            (1u128 << width) - 1
        };
        let mut buf = [0u8; 4096];
        let total = packed_len(out.len(), width);
        let mut remaining = total;
        let mut pos = 0usize; // next unread byte in buf
        let mut avail = 0usize; // bytes in buf
        let mut acc: u128 = 0;
        let mut bits = 0u32;
        for (i, slot) in out.iter_mut().enumerate() {
            while bits < width {
                if pos == avail {
                    let take = remaining.min(buf.len() as u64) as usize;
                    self.fill(field, &mut buf[..take])?;
                    remaining -= take as u64;
                    pos = 0;
                    avail = take;
                }
                acc |= (buf[pos] as u128) << bits;
                pos += 1;
                bits += 8;
            }
            let v = (acc & mask) as u64;
            acc >>= width;
            bits -= width;
            if v >= bound {
                let at = start + (i as u64 * width as u64) / 8;
                return Err(self.out_of_range(
                    at,
                    &format!("{field}[{i}]"),
                    v,
                    format!("must be below {bound}"),
                ));
            }
            *slot = v;
        }
        if acc != 0 {
            return Err(self.invalid_at(
                start + total - 1,
                field,
                "non-zero padding bits after the last packed value",
            ));
        }
        debug_assert_eq!(remaining, 0);
        Ok(())
    }

    /// Checks that the input is exhausted (for whole-buffer loads).
    pub fn finish(mut self, field: &str) -> Result<(), DecodeError> {
        let mut probe = [0u8; 64];
        let mut count = 0u64;
        loop {
            match self.inner.read(&mut probe) {
                Ok(0) => break,
                Ok(k) => count += k as u64,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => {
                    return Err(DecodeError::new(
                        field,
                        self.offset,
                        DecodeErrorKind::Io(e.to_string()),
                    ))
                }
            }
        }
        if count > 0 {
            return Err(DecodeError::new(
                field,
                self.offset,
                DecodeErrorKind::TrailingBytes { count },
            ));
        }
        Ok(())
    }
}

/// How the public uniform polynomials of keys and symmetric ciphertexts are written.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum PublicRandomness {
    /// As the 32-byte seed they were expanded from, when known (about half the size). The default.
    #[default]
    Seeded,
    /// As full polynomials (for readers that do not want to expand seeds, or to compare sizes).
    Expanded,
}

/// An object with a wire encoding: its kind, the fingerprint of its parameters and its payload. The
/// provided methods write the header and payload ([`Serializable::write_to`], [`Serializable::to_bytes`])
/// and compute the size before writing ([`Serializable::serialized_size`]).
///
/// Secret keys deliberately do not implement this trait: they serialize only through functions whose
/// name says so.
pub trait Serializable {
    /// The object kind written in the header.
    const KIND: ObjectKind;

    /// The fingerprint of the parameters the object belongs to.
    fn wire_fingerprint(&self) -> u64;

    /// Payload size in bytes under `randomness`.
    fn payload_size(&self, randomness: PublicRandomness) -> u64;

    /// Writes the payload (exactly [`Serializable::payload_size`] bytes).
    fn write_payload<W: Write>(
        &self,
        w: &mut WireWriter<W>,
        randomness: PublicRandomness,
    ) -> io::Result<()>;

    /// Total size (header and payload) in bytes, with seeds where known.
    fn serialized_size(&self) -> u64 {
        HEADER_LEN + self.payload_size(PublicRandomness::Seeded)
    }

    /// Writes header and payload to `w` (streaming: nothing is buffered beyond a few kilobytes);
    /// returns the number of bytes written.
    fn write_to<W: Write>(&self, w: W, randomness: PublicRandomness) -> io::Result<u64> {
        write_object(
            w,
            Self::KIND,
            self.wire_fingerprint(),
            self.payload_size(randomness),
            |w| self.write_payload(w, randomness),
        )
    }

    /// The object as bytes, with seeds where known.
    fn to_bytes(&self) -> Vec<u8> {
        self.to_bytes_with(PublicRandomness::Seeded)
    }

    /// The object as bytes under `randomness`.
    fn to_bytes_with(&self, randomness: PublicRandomness) -> Vec<u8> {
        let mut out = Vec::with_capacity((HEADER_LEN + self.payload_size(randomness)) as usize);
        // Writing to a Vec cannot fail.
        let _ = self.write_to(&mut out, randomness);
        out
    }
}

/// Writes a header and a payload produced by `payload`, checking (in debug builds) that the payload
/// has the announced size. Shared by [`Serializable::write_to`] and the explicitly named secret-key
/// writers.
pub fn write_object<W: Write>(
    w: W,
    kind: ObjectKind,
    fingerprint: u64,
    payload_size: u64,
    payload: impl FnOnce(&mut WireWriter<W>) -> io::Result<()>,
) -> io::Result<u64> {
    let mut ww = WireWriter::new(w);
    Header::write(&mut ww, kind, fingerprint)?;
    payload(&mut ww)?;
    debug_assert_eq!(
        ww.written(),
        HEADER_LEN + payload_size,
        "{kind} payload size"
    );
    let _ = payload_size;
    ww.inner.flush()?;
    Ok(ww.written())
}

/// An object that loads from the wire into a context `C` (the parameters it must belong to). The
/// provided methods check the header (magic, version, kind, fingerprint of `ctx`) before the payload.
pub trait Deserializable<C: ?Sized>: Serializable + Sized {
    /// The fingerprint objects of `ctx` carry.
    fn context_fingerprint(ctx: &C) -> u64;

    /// Reads and validates the payload.
    fn read_payload<R: Read>(r: &mut WireReader<R>, ctx: &C) -> Result<Self, DecodeError>;

    /// Reads one object from a stream (the stream may continue after it).
    fn read_from<R: Read>(r: R, ctx: &C) -> Result<Self, DecodeError> {
        let mut wr = WireReader::new(r);
        Self::read_object(&mut wr, ctx)
    }

    /// Reads header and payload from `r`.
    fn read_object<R: Read>(r: &mut WireReader<R>, ctx: &C) -> Result<Self, DecodeError> {
        let header = Header::read(r)?;
        header.expect(Self::KIND, Some(Self::context_fingerprint(ctx)))?;
        Self::read_payload(r, ctx)
    }

    /// Loads an object from exactly `bytes` (trailing bytes are an error).
    fn from_bytes(bytes: &[u8], ctx: &C) -> Result<Self, DecodeError> {
        let mut r = WireReader::new(bytes);
        let obj = Self::read_object(&mut r, ctx)?;
        r.finish("end of object")?;
        Ok(obj)
    }
}

/// Reads the header at the start of `bytes` without loading the object (to dispatch on its kind, or to
/// refuse secret material before parsing further).
pub fn peek_header(bytes: &[u8]) -> Result<Header, DecodeError> {
    Header::read(&mut WireReader::new(bytes))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn packing_round_trips_at_every_width() {
        for width in [1u32, 7, 8, 30, 50, 55, 61, 64] {
            let bound = if width == 64 { u64::MAX } else { 1u64 << width };
            let values: Vec<u64> = (0..37u64)
                .map(|i| i.wrapping_mul(0x9e37_79b9_7f4a_7c15) % bound)
                .collect();
            let mut w = WireWriter::new(Vec::new());
            w.packed(&values, width).unwrap();
            let bytes = w.into_inner();
            assert_eq!(bytes.len() as u64, packed_len(values.len(), width));
            let mut out = vec![0u64; values.len()];
            WireReader::new(&bytes[..])
                .packed("v", &mut out, width, bound)
                .unwrap();
            assert_eq!(out, values, "width {width}");
        }
    }

    #[test]
    fn packed_values_are_checked_against_the_bound() {
        let mut w = WireWriter::new(Vec::new());
        w.packed(&[3, 17, 5], 5).unwrap();
        let bytes = w.into_inner();
        let mut out = [0u64; 3];
        let err = WireReader::new(&bytes[..])
            .packed("limb", &mut out, 5, 17)
            .unwrap_err();
        assert_eq!(err.field, "limb[1]");
        assert!(matches!(
            err.kind,
            DecodeErrorKind::OutOfRange { value: 17, .. }
        ));
    }

    #[test]
    fn truncation_names_the_field_and_offset() {
        let bytes = [1u8, 2, 3];
        let mut r = WireReader::new(&bytes[..]);
        assert_eq!(r.u8("a").unwrap(), 1);
        let err = r.u32("b").unwrap_err();
        assert_eq!(err.field, "b");
        assert_eq!(err.offset, 3);
        assert_eq!(err.kind, DecodeErrorKind::Truncated);
        assert!(err.to_string().contains("field `b` at byte 3"));
    }

    #[test]
    fn headers_round_trip_and_reject_garbage() {
        let mut w = WireWriter::new(Vec::new());
        Header::write(&mut w, ObjectKind::PublicKey, 0xabcd).unwrap();
        let bytes = w.into_inner();
        assert_eq!(bytes.len() as u64, HEADER_LEN);
        let h = peek_header(&bytes).unwrap();
        assert_eq!(h.kind, ObjectKind::PublicKey);
        h.expect(ObjectKind::PublicKey, Some(0xabcd)).unwrap();
        let e = h.expect(ObjectKind::GaloisKeys, None).unwrap_err();
        assert_eq!(e.field, "header.kind");
        let e = h.expect(ObjectKind::PublicKey, Some(1)).unwrap_err();
        assert_eq!(e.offset, 8);
        let mut bad = bytes.clone();
        bad[0] = b'X';
        assert_eq!(peek_header(&bad).unwrap_err().field, "header.magic");
        let mut bad = bytes.clone();
        bad[4] = 99;
        assert_eq!(peek_header(&bad).unwrap_err().field, "header.version");
        let mut bad = bytes;
        bad[6] = 0xff;
        assert_eq!(peek_header(&bad).unwrap_err().field, "header.kind");
        for code in ObjectKind::ALL {
            assert_eq!(ObjectKind::from_code(code.code()), Some(code));
        }
    }
}
