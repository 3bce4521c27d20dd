//! The versioned binary format of every object rnsfhe sends or stores (DESIGN "Serialization").
//!
//! An object on the wire is a fixed 16-byte **header**, its **payload** and a 32-byte **digest**:
//!
//! ```text
//! offset  size  field
//!      0     4  magic "RNSF"
//!      4     2  format version (little endian), FORMAT_VERSION
//!      6     2  object kind (ObjectKind code; each crate owns a range, kind_codes)
//!      8     8  fingerprint of the parameters the object belongs to
//!     16     .  payload (defined by each object type; integers little endian)
//! end-32    32  digest: BLAKE3 of every byte before it (header and payload), or keyed BLAKE3 (a MAC)
//!               under a MacKey the parties share
//! ```
//!
//! This module holds the parts every layer shares: the header, the object kind type (each crate defines
//! its own kinds in a range of codes it owns, [`kind_codes`]), the digest
//! ([`Integrity`], [`MacKey`]), a [`WireWriter`] that counts (and digests) the bytes it writes and a
//! [`WireReader`] that tracks the byte offset so that every error names the field and the offset where
//! decoding failed ([`DecodeError`]).
//!
//! # Integrity
//!
//! Every field is range-checked on load, but a flipped bit can land on a value that is still in range (a
//! CKKS scale, a Galois element, a residue below its modulus) and silently change results. The digest
//! closes that: loading a whole buffer checks the digest **before** anything else is parsed (after the
//! magic and the version, which say whether a digest is there), so a corrupted byte anywhere is an error
//! of the field `digest`; a stream reader digests what it reads and checks the trailer at the end of the
//! object. The plain digest detects corruption, not an adversary (anyone can recompute it); where the
//! network is not trusted, the parties share a [`MacKey`] and seal objects with [`Integrity::Mac`]: the
//! digest is then BLAKE3's keyed mode, and a reader holding the key refuses anything not sealed under it
//! (including objects of format version 1, which carry no digest).
//!
//! # Versions
//!
//! * **3** (written by this build): the layout of version 2. A public key's first byte holds flags (bit 0
//!   seeded, bit 1 over `Q` and the first special prime) instead of the seeded flag alone: public keys
//!   became one limb wider so that encryption divides their error away. Payload readers that differ by
//!   version ask [`WireReader::format_version`].
//! * **2** (still read): the layout above. Fingerprints cover every parameter that changes what
//!   an object means or how safe it is (for RLWE: `N`, the moduli, the key-switching decomposition, the
//!   secret distribution and the error width).
//! * **1** (still read): no digest, and fingerprints of `N`, the moduli and the decomposition only. A
//!   context reports both ([`WireFingerprint`]), and a reader compares the header with the one of the
//!   version the object was written in. Objects of version 1 are not protected against corruption.
//!
//! Why a hand-written format rather than a serde encoding: loading must validate as it reads (residues
//! below their modulus, lengths against the parameters already loaded) without ever allocating from an
//! unchecked length, must report the field and byte offset of the first bad byte, and must stream
//! multi-gigabyte key sets through `std::io::{Read, Write}` without buffering them. Every length in a
//! payload is therefore either implied by the parameters or checked against a bound derived from them
//! before anything is allocated.

use std::fmt;
use std::io::{self, Read, Write};

use rand_core::RngCore;
use zeroize::{Zeroize, ZeroizeOnDrop};

/// The magic bytes that open every object.
pub const MAGIC: [u8; 4] = *b"RNSF";

/// The format version this build writes. Readers accept every version in
/// [`MIN_READ_VERSION`]`..=FORMAT_VERSION`.
pub const FORMAT_VERSION: u16 = 3;

/// The oldest format version this build still reads (version 1: no digest, see the module
/// documentation).
pub const MIN_READ_VERSION: u16 = 1;

/// The first format version whose objects end with a digest.
pub const FIRST_DIGEST_VERSION: u16 = 2;

/// Length of the header in bytes.
pub const HEADER_LEN: u64 = 16;

/// Length of the digest that ends every object of format version 2 and later.
pub const DIGEST_LEN: u64 = 32;

/// Whether objects of format `version` end with a digest.
pub fn has_digest(version: u16) -> bool {
    version >= FIRST_DIGEST_VERSION
}

/// A 256-bit key shared by the parties that authenticate objects ([`Integrity::Mac`]): the digest of an
/// object becomes BLAKE3's keyed hash under it, which only holders of the key can compute. Zeroized on
/// drop, never printed by `Debug`.
#[derive(Clone, Zeroize, ZeroizeOnDrop)]
pub struct MacKey([u8; 32]);

impl MacKey {
    /// Length of a key in bytes.
    pub const LEN: usize = 32;

    /// The key with these bytes (exchange them over a channel the network cannot read).
    pub fn from_bytes(bytes: [u8; 32]) -> Self {
        Self(bytes)
    }

    /// The key with these bytes, which must be exactly [`MacKey::LEN`] long; `None` otherwise.
    pub fn from_slice(bytes: &[u8]) -> Option<Self> {
        Some(Self(bytes.try_into().ok()?))
    }

    /// A fresh random key from a cryptographic generator.
    pub fn random<R: RngCore + rand_core::CryptoRng>(rng: &mut R) -> Self {
        let mut key = [0u8; 32];
        rng.fill_bytes(&mut key);
        Self(key)
    }

    /// The key's bytes (to store or hand to the other parties).
    pub fn as_bytes(&self) -> &[u8; 32] {
        &self.0
    }
}

impl fmt::Debug for MacKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("MacKey(<redacted>)")
    }
}

/// How an object's digest is computed and checked.
#[derive(Clone, Copy, Debug, Default)]
pub enum Integrity<'k> {
    /// BLAKE3 of the header and payload: detects corruption (the default of every writer and reader).
    #[default]
    Digest,
    /// BLAKE3 keyed by a shared [`MacKey`]: also detects deliberate changes by anyone without the key. A
    /// reader in this mode refuses objects without a digest (format version 1).
    Mac(&'k MacKey),
}

impl Integrity<'_> {
    fn hasher(self) -> blake3::Hasher {
        match self {
            Integrity::Digest => blake3::Hasher::new(),
            Integrity::Mac(key) => blake3::Hasher::new_keyed(&key.0),
        }
    }

    /// Whether this is the keyed mode.
    pub fn is_keyed(self) -> bool {
        matches!(self, Integrity::Mac(_))
    }
}

/// The running digest of a writer or reader.
struct Digester {
    hasher: blake3::Hasher,
    keyed: bool,
}

impl Digester {
    fn new(integrity: Integrity<'_>) -> Box<Self> {
        Box::new(Self {
            hasher: integrity.hasher(),
            keyed: integrity.is_keyed(),
        })
    }
}

impl fmt::Debug for Digester {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Digester")
            .field("keyed", &self.keyed)
            .finish_non_exhaustive()
    }
}

/// The kind of object a header announces: the code written in the header, a name for messages, and
/// whether objects of the kind hold secret material (a server must refuse them). Codes are part of the
/// format and never reused.
///
/// This module defines no kind: each crate defines the kinds of its own objects as constants with codes
/// from the range [`kind_codes`] gives it, and lists them (`KINDS` in its serialization module), so adding
/// an object type never edits this module. A reader compares a header's code with the kind it expects
/// ([`Header::expect`]); naming an arbitrary code takes the list of every crate's kinds, which the facade
/// crate composes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ObjectKind {
    code: u16,
    name: &'static str,
    secret: bool,
}

impl ObjectKind {
    /// A kind of public objects with header code `code` and the name `name` ("CKKS ciphertext").
    pub const fn new(code: u16, name: &'static str) -> Self {
        Self {
            code,
            name,
            secret: false,
        }
    }

    /// A kind of objects that hold secret material (read and written only by explicitly named
    /// functions; [`ObjectKind::is_secret`]).
    pub const fn secret(code: u16, name: &'static str) -> Self {
        Self {
            code,
            name,
            secret: true,
        }
    }

    /// The code written in the header.
    pub const fn code(self) -> u16 {
        self.code
    }

    /// The name used in messages.
    pub const fn name(self) -> &'static str {
        self.name
    }

    /// Whether objects of this kind hold secret material (a server must refuse them).
    pub const fn is_secret(self) -> bool {
        self.secret
    }

    /// The kind among `kinds` with header code `code`, if any.
    pub fn find(kinds: &[ObjectKind], code: u16) -> Option<Self> {
        kinds.iter().copied().find(|k| k.code == code)
    }
}

impl fmt::Display for ObjectKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name)
    }
}

/// The ranges of header codes each crate owns for its object kinds (codes are never reused; a crate with
/// objects of its own takes a free range, and its tests check that its kinds stay inside it).
pub mod kind_codes {
    use std::ops::Range;

    /// The parameters of each scheme (one code per scheme: CKKS 1, BFV 2).
    pub const SCHEME_PARAMETERS: Range<u16> = 1..16;
    /// `rnsfhe-core`: secret and public keys, relinearization and Galois keys of hybrid key switching.
    pub const CORE: Range<u16> = 16..32;
    /// `rnsfhe-ckks`: plaintexts and ciphertexts.
    pub const CKKS: Range<u16> = 32..48;
    /// `rnsfhe-bfv`: its keys, plaintexts and ciphertexts.
    pub const BFV: Range<u16> = 48..64;
    /// `rnsfhe-lwe`: LWE ciphertexts and keys.
    pub const LWE: Range<u16> = 64..80;
    /// `rnsfhe-pegasus`: the keys of the CKKS <-> LWE bridge.
    pub const PEGASUS: Range<u16> = 80..96;
}

/// A decoded header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Header {
    /// The format version the object was written with.
    pub version: u16,
    /// The code of the object kind ([`ObjectKind::code`]; which crate's kind it is, the reader knows:
    /// [`Header::expect`], [`ObjectKind::find`]).
    pub kind_code: u16,
    /// The fingerprint of the parameters the object belongs to.
    pub fingerprint: u64,
}

impl Header {
    /// Reads and checks a header: magic and a readable version. The kind and the fingerprint are checked
    /// against expectations by [`Header::expect`].
    pub fn read<R: Read>(r: &mut WireReader<R>) -> Result<Self, DecodeError> {
        let version = Self::read_magic_and_version(r)?;
        r.version = version;
        if r.requires_mac() && !has_digest(version) {
            return Err(DecodeError::new(
                "header.version",
                4,
                DecodeErrorKind::Unauthenticated { version },
            ));
        }
        let kind_code = r.u16("header.kind")?;
        let fingerprint = r.u64("header.fingerprint")?;
        Ok(Self {
            version,
            kind_code,
            fingerprint,
        })
    }

    /// Checks that the header announces `kind` and, if given, the fingerprint of the context the caller
    /// loads into.
    pub fn expect(&self, kind: ObjectKind, fingerprint: Option<u64>) -> Result<(), DecodeError> {
        if self.kind_code != kind.code() {
            return Err(DecodeError::new(
                "header.kind",
                6,
                DecodeErrorKind::WrongKind {
                    expected: kind,
                    found: self.kind_code,
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

    /// Reads and checks the first six bytes: the magic and a readable format version.
    fn read_magic_and_version<R: Read>(r: &mut WireReader<R>) -> Result<u16, DecodeError> {
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
        Ok(version)
    }

    /// Whether the object ends with a digest (format version 2 and later).
    pub fn has_digest(&self) -> bool {
        has_digest(self.version)
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
        /// The kind code in the header.
        found: u16,
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
    /// The digest at the end of the object does not match its bytes.
    DigestMismatch {
        /// Whether the reader checked a keyed digest (a MAC).
        keyed: bool,
    },
    /// The reader requires a MAC and the object (of an old format version) carries no digest.
    Unauthenticated {
        /// The object's format version.
        version: u16,
    },
    /// The object is larger than the reader's limits allow (see the loaders' `LoadLimits`).
    LimitExceeded {
        /// The value asked for.
        value: u64,
        /// The limit and how to raise it.
        limit: String,
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
                "expected a {expected} (kind code {}), found kind code {found}; load it with the \
                 matching type (rnsfhe::object_kind names every code)",
                expected.code()
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
            DecodeErrorKind::DigestMismatch { keyed: false } => f.write_str(
                "the digest does not match the object's bytes: they were corrupted or altered (or the \
                 object is sealed with a MAC: load it with the shared key)",
            ),
            DecodeErrorKind::DigestMismatch { keyed: true } => f.write_str(
                "the MAC does not match the object's bytes: they were altered, or sealed under another \
                 key or without one",
            ),
            DecodeErrorKind::Unauthenticated { version } => write!(
                f,
                "format version {version} objects carry no digest, and this reader requires a MAC; \
                 write the object again with the shared key"
            ),
            DecodeErrorKind::LimitExceeded { value, limit } => {
                write!(f, "{value} exceeds the loader's limit ({limit})")
            }
        }
    }
}

impl std::error::Error for DecodeError {}

/// A writer that counts the bytes written (so `serialized_size()` can be checked against what was
/// written), writes integers little endian and, when it seals an object, digests what it writes.
#[derive(Debug)]
pub struct WireWriter<W: Write> {
    inner: W,
    written: u64,
    digest: Option<Box<Digester>>,
}

impl<W: Write> WireWriter<W> {
    /// Wraps `inner` (no digest: for parts of an object written by the caller's own framing).
    pub fn new(inner: W) -> Self {
        Self {
            inner,
            written: 0,
            digest: None,
        }
    }

    /// Wraps `inner` and digests everything written, for [`WireWriter::write_digest`] to append.
    pub fn digesting(inner: W, integrity: Integrity<'_>) -> Self {
        Self {
            inner,
            written: 0,
            digest: Some(Digester::new(integrity)),
        }
    }

    /// Appends the digest of everything written so far (nothing if the writer does not digest).
    pub fn write_digest(&mut self) -> io::Result<()> {
        match self.digest.take() {
            Some(d) => self.bytes(d.hasher.finalize().as_bytes()),
            None => Ok(()),
        }
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
        if let Some(d) = &mut self.digest {
            d.hasher.update(b);
        }
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

/// A reader that tracks the byte offset from the start of the object, turns every failure into a
/// [`DecodeError`] naming the field, and digests what it reads so that the object's digest can be
/// checked at its end ([`WireReader::check_digest`]).
#[derive(Debug)]
pub struct WireReader<R: Read> {
    inner: R,
    offset: u64,
    /// The running digest; `None` for bytes whose digest was checked before reading
    /// ([`WireReader::verified`]).
    digest: Option<Box<Digester>>,
    requires_mac: bool,
    /// The format version of the object being read: from its header once read, else the current one.
    version: u16,
}

impl<R: Read> WireReader<R> {
    /// Wraps `inner` (a stream): offsets count from here, and the digest of an object read through it
    /// is checked in the default mode ([`Integrity::Digest`]).
    pub fn new(inner: R) -> Self {
        Self::with_integrity(inner, Integrity::Digest)
    }

    /// Wraps `inner`, checking digests in the mode `integrity`.
    pub fn with_integrity(inner: R, integrity: Integrity<'_>) -> Self {
        Self {
            inner,
            offset: 0,
            digest: Some(Digester::new(integrity)),
            requires_mac: integrity.is_keyed(),
            version: FORMAT_VERSION,
        }
    }

    /// Wraps the bytes of an object **whose digest has already been checked** ([`verify_digest`]),
    /// without its digest: nothing is digested and [`WireReader::check_digest`] reads nothing.
    pub fn verified(inner: R) -> Self {
        Self {
            inner,
            offset: 0,
            digest: None,
            requires_mac: false,
            version: FORMAT_VERSION,
        }
    }

    /// The format version of the object being read (set when its header is read; the current
    /// [`FORMAT_VERSION`] before that): payloads whose layout changed between versions read by it.
    pub fn format_version(&self) -> u16 {
        self.version
    }

    /// Whether this reader refuses objects without a keyed digest.
    pub fn requires_mac(&self) -> bool {
        self.requires_mac
    }

    /// At the end of an object with `header`: reads its digest and compares it with the digest of the
    /// bytes read since the reader was created (the object's header and payload). Nothing for objects of
    /// format version 1 or for a [`WireReader::verified`] reader.
    pub fn check_digest(&mut self, header: &Header) -> Result<(), DecodeError> {
        if !header.has_digest() {
            return Ok(());
        }
        let Some(d) = self.digest.take() else {
            return Ok(());
        };
        let at = self.offset;
        let stored: [u8; 32] = self.array("digest")?;
        // blake3::Hash compares in constant time.
        if d.hasher.finalize() != blake3::Hash::from_bytes(stored) {
            return Err(DecodeError::new(
                "digest",
                at,
                DecodeErrorKind::DigestMismatch { keyed: d.keyed },
            ));
        }
        Ok(())
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
        if let Some(d) = &mut self.digest {
            d.hasher.update(buf);
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
/// provided methods write the header, payload and digest ([`Serializable::write_to`],
/// [`Serializable::to_bytes`], with a MAC [`Serializable::to_bytes_sealed`]) and compute the size before
/// writing ([`Serializable::serialized_size`]).
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

    /// Total size (header, payload and digest) in bytes under `randomness`.
    fn serialized_size_with(&self, randomness: PublicRandomness) -> u64 {
        HEADER_LEN + self.payload_size(randomness) + DIGEST_LEN
    }

    /// Total size (header, payload and digest) in bytes, with seeds where known.
    fn serialized_size(&self) -> u64 {
        self.serialized_size_with(PublicRandomness::Seeded)
    }

    /// Writes header, payload and digest to `w` (streaming: nothing is buffered beyond a few kilobytes);
    /// returns the number of bytes written.
    fn write_to<W: Write>(&self, w: W, randomness: PublicRandomness) -> io::Result<u64> {
        self.write_to_sealed(w, randomness, Integrity::Digest)
    }

    /// [`Serializable::write_to`] with the digest computed in the mode `integrity` (a MAC under a
    /// shared key for [`Integrity::Mac`]).
    fn write_to_sealed<W: Write>(
        &self,
        w: W,
        randomness: PublicRandomness,
        integrity: Integrity<'_>,
    ) -> io::Result<u64> {
        write_object(
            w,
            Self::KIND,
            self.wire_fingerprint(),
            self.payload_size(randomness),
            integrity,
            |w| self.write_payload(w, randomness),
        )
    }

    /// The object as bytes, with seeds where known.
    fn to_bytes(&self) -> Vec<u8> {
        self.to_bytes_with(PublicRandomness::Seeded)
    }

    /// The object as bytes under `randomness`.
    fn to_bytes_with(&self, randomness: PublicRandomness) -> Vec<u8> {
        self.to_bytes_sealed(randomness, Integrity::Digest)
    }

    /// The object as bytes under `randomness`, its digest in the mode `integrity`.
    fn to_bytes_sealed(&self, randomness: PublicRandomness, integrity: Integrity<'_>) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.serialized_size_with(randomness) as usize);
        // Writing to a Vec cannot fail.
        let _ = self.write_to_sealed(&mut out, randomness, integrity);
        out
    }
}

/// Writes a header, a payload produced by `payload` and the digest of both in the mode `integrity`,
/// checking (in debug builds) that the payload has the announced size. Shared by
/// [`Serializable::write_to_sealed`] and the explicitly named secret-key writers.
pub fn write_object<W: Write>(
    w: W,
    kind: ObjectKind,
    fingerprint: u64,
    payload_size: u64,
    integrity: Integrity<'_>,
    payload: impl FnOnce(&mut WireWriter<W>) -> io::Result<()>,
) -> io::Result<u64> {
    let mut ww = WireWriter::digesting(w, integrity);
    Header::write(&mut ww, kind, fingerprint)?;
    payload(&mut ww)?;
    debug_assert_eq!(
        ww.written(),
        HEADER_LEN + payload_size,
        "{kind} payload size"
    );
    let _ = payload_size;
    ww.write_digest()?;
    ww.inner.flush()?;
    Ok(ww.written())
}

/// The fingerprints of one parameter set in the readable format versions: `current` (format 2 on) and
/// `legacy` (format 1, which covered fewer parameters; see the module documentation).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Fingerprints {
    /// The fingerprint objects of format 2 and later carry.
    pub current: u64,
    /// The fingerprint objects of format 1 carry.
    pub legacy: u64,
}

impl Fingerprints {
    /// The fingerprint objects of format `version` carry.
    pub fn for_version(&self, version: u16) -> u64 {
        if has_digest(version) {
            self.current
        } else {
            self.legacy
        }
    }
}

/// A context objects are loaded into: the fingerprint its objects carry in each readable format
/// version (version 1 fingerprints cover fewer parameters, see the module documentation).
pub trait WireFingerprint {
    /// The fingerprint objects of this context carry when written in format `version`.
    fn wire_fingerprint_for(&self, version: u16) -> u64;
}

/// An object that loads from the wire into a context `C` (the parameters it must belong to). The
/// provided methods check the header (magic, version, kind, fingerprint of `ctx`) and the digest, and
/// read the payload.
pub trait Deserializable<C: ?Sized + WireFingerprint>: Serializable + Sized {
    /// Reads and validates the payload.
    fn read_payload<R: Read>(r: &mut WireReader<R>, ctx: &C) -> Result<Self, DecodeError>;

    /// Reads one object from a stream (the stream may continue after it), checking its digest at its
    /// end.
    fn read_from<R: Read>(r: R, ctx: &C) -> Result<Self, DecodeError> {
        Self::read_from_sealed(r, ctx, Integrity::Digest)
    }

    /// [`Deserializable::read_from`] with the digest checked in the mode `integrity`.
    fn read_from_sealed<R: Read>(
        r: R,
        ctx: &C,
        integrity: Integrity<'_>,
    ) -> Result<Self, DecodeError> {
        let mut wr = WireReader::with_integrity(r, integrity);
        Self::read_object(&mut wr, ctx)
    }

    /// Reads header, payload and digest from `r`.
    fn read_object<R: Read>(r: &mut WireReader<R>, ctx: &C) -> Result<Self, DecodeError> {
        let header = Header::read(r)?;
        header.expect(Self::KIND, Some(ctx.wire_fingerprint_for(header.version)))?;
        let object = Self::read_payload(r, ctx)?;
        r.check_digest(&header)?;
        Ok(object)
    }

    /// Loads an object from exactly `bytes` (trailing bytes are an error). The digest is checked before
    /// anything but the magic and the version is parsed.
    fn from_bytes(bytes: &[u8], ctx: &C) -> Result<Self, DecodeError> {
        Self::from_bytes_sealed(bytes, ctx, Integrity::Digest)
    }

    /// [`Deserializable::from_bytes`] with the digest checked in the mode `integrity`.
    fn from_bytes_sealed(
        bytes: &[u8],
        ctx: &C,
        integrity: Integrity<'_>,
    ) -> Result<Self, DecodeError> {
        read_exactly(bytes, integrity, |r| Self::read_object(r, ctx))
    }
}

/// Checks the digest of the object that is exactly `bytes` in the mode `integrity` and returns the bytes
/// it covers (header and payload), or all of `bytes` for an object of format version 1 (which a keyed
/// reader refuses). Only the magic and the version are parsed before the digest is checked, so any other
/// corrupted byte is an error of the field `digest`.
pub fn verify_digest<'a>(
    bytes: &'a [u8],
    integrity: Integrity<'_>,
) -> Result<&'a [u8], DecodeError> {
    let version = Header::read_magic_and_version(&mut WireReader::verified(bytes))?;
    if !has_digest(version) {
        if integrity.is_keyed() {
            return Err(DecodeError::new(
                "header.version",
                4,
                DecodeErrorKind::Unauthenticated { version },
            ));
        }
        return Ok(bytes);
    }
    let len = bytes.len() as u64;
    if len < HEADER_LEN + DIGEST_LEN {
        return Err(DecodeError::new("digest", len, DecodeErrorKind::Truncated));
    }
    let (body, stored) = bytes.split_at(bytes.len() - DIGEST_LEN as usize);
    let stored: [u8; 32] = stored.try_into().unwrap_or([0; 32]);
    // blake3::Hash compares in constant time.
    if blake3::Hash::from_bytes(digest_of(body, integrity)) != blake3::Hash::from_bytes(stored) {
        return Err(DecodeError::new(
            "digest",
            body.len() as u64,
            DecodeErrorKind::DigestMismatch {
                keyed: integrity.is_keyed(),
            },
        ));
    }
    Ok(body)
}

/// The digest of `body` (an object's header and payload) in the mode `integrity`: the 32 bytes a writer
/// appends. For framing of one's own and for tests that change a payload and seal it again.
pub fn digest_of(body: &[u8], integrity: Integrity<'_>) -> [u8; 32] {
    let mut hasher = integrity.hasher();
    hasher.update(body);
    *hasher.finalize().as_bytes()
}

/// Recomputes the digest at the end of `object` (a sealed object: header, payload, digest) in the default
/// mode, after its header or payload were edited deliberately (tests, tools): the edit then reaches the
/// payload's validation instead of stopping at the digest. Objects shorter than a digest are left alone.
pub fn reseal(object: &mut [u8]) {
    let Some(end) = object.len().checked_sub(DIGEST_LEN as usize) else {
        return;
    };
    let digest = digest_of(&object[..end], Integrity::Digest);
    object[end..].copy_from_slice(&digest);
}

/// Runs `read` on the object that is exactly `bytes`, after checking its digest ([`verify_digest`]);
/// bytes left over are an error of the field `end of object`.
pub fn read_exactly<'a, T>(
    bytes: &'a [u8],
    integrity: Integrity<'_>,
    read: impl FnOnce(&mut WireReader<&'a [u8]>) -> Result<T, DecodeError>,
) -> Result<T, DecodeError> {
    let body = verify_digest(bytes, integrity)?;
    let mut r = WireReader::verified(body);
    let out = read(&mut r)?;
    r.finish("end of object")?;
    Ok(out)
}

/// Reads the header at the start of `bytes` without loading the object or checking its digest (to
/// dispatch on its kind, or to refuse secret material before parsing further).
pub fn peek_header(bytes: &[u8]) -> Result<Header, DecodeError> {
    Header::read(&mut WireReader::verified(bytes))
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

    /// Kinds of this module's tests (codes outside every crate's range).
    const TEST_KEY: ObjectKind = ObjectKind::new(0xf000, "test key");
    const TEST_WORD: ObjectKind = ObjectKind::new(0xf001, "test word");
    const TEST_SECRET: ObjectKind = ObjectKind::secret(0xf002, "test secret");

    #[test]
    fn kinds_are_found_among_a_list() {
        let all = [TEST_KEY, TEST_WORD, TEST_SECRET];
        for kind in all {
            assert_eq!(ObjectKind::find(&all, kind.code()), Some(kind));
        }
        assert!(TEST_SECRET.is_secret() && !TEST_KEY.is_secret());
        assert_eq!(TEST_WORD.to_string(), "test word");
        assert_eq!(ObjectKind::find(&all, 0xf003), None);
    }

    #[test]
    fn headers_round_trip_and_reject_garbage() {
        let mut w = WireWriter::new(Vec::new());
        Header::write(&mut w, TEST_KEY, 0xabcd).unwrap();
        let bytes = w.into_inner();
        assert_eq!(bytes.len() as u64, HEADER_LEN);
        let h = peek_header(&bytes).unwrap();
        assert_eq!(h.kind_code, TEST_KEY.code());
        h.expect(TEST_KEY, Some(0xabcd)).unwrap();
        let e = h.expect(TEST_WORD, None).unwrap_err();
        assert_eq!((e.field.as_str(), e.offset), ("header.kind", 6));
        assert!(e
            .to_string()
            .contains("expected a test word (kind code 61441), found kind code 61440"));
        let e = h.expect(TEST_KEY, Some(1)).unwrap_err();
        assert_eq!(e.offset, 8);
        let mut bad = bytes.clone();
        bad[0] = b'X';
        assert_eq!(peek_header(&bad).unwrap_err().field, "header.magic");
        let mut bad = bytes.clone();
        bad[4] = 99;
        assert_eq!(peek_header(&bad).unwrap_err().field, "header.version");
        // An unknown code reads (the header is well formed) and is refused by the reader that expects
        // another kind.
        let mut bad = bytes;
        bad[6] = 0xff;
        assert_eq!(
            peek_header(&bad)
                .unwrap()
                .expect(TEST_KEY, None)
                .unwrap_err()
                .field,
            "header.kind"
        );
    }

    /// A one-field object for the digest tests.
    #[derive(Debug)]
    struct Word(u64);

    impl Serializable for Word {
        const KIND: ObjectKind = TEST_WORD;

        fn wire_fingerprint(&self) -> u64 {
            7
        }

        fn payload_size(&self, _: PublicRandomness) -> u64 {
            8
        }

        fn write_payload<W: Write>(
            &self,
            w: &mut WireWriter<W>,
            _: PublicRandomness,
        ) -> io::Result<()> {
            w.u64(self.0)
        }
    }

    struct Ctx;

    impl WireFingerprint for Ctx {
        fn wire_fingerprint_for(&self, version: u16) -> u64 {
            if has_digest(version) {
                7
            } else {
                1
            }
        }
    }

    impl Deserializable<Ctx> for Word {
        fn read_payload<R: Read>(r: &mut WireReader<R>, _: &Ctx) -> Result<Self, DecodeError> {
            Ok(Word(r.u64("word")?))
        }
    }

    #[test]
    fn digests_and_macs_seal_objects() {
        let key = MacKey::from_bytes([9; 32]);
        let other = MacKey::from_bytes([8; 32]);
        let plain = Word(42).to_bytes();
        assert_eq!(plain.len() as u64, Word(42).serialized_size());
        assert_eq!(plain.len() as u64, HEADER_LEN + 8 + DIGEST_LEN);
        assert_eq!(Word::from_bytes(&plain, &Ctx).unwrap().0, 42);
        // Streams check the digest at the end of each object.
        let two = [plain.clone(), plain.clone()].concat();
        let mut stream = &two[..];
        assert_eq!(Word::read_from(&mut stream, &Ctx).unwrap().0, 42);
        assert_eq!(stream.len(), plain.len());
        let mut bad = plain.clone();
        bad[17] ^= 4;
        let err = Word::read_from(&bad[..], &Ctx).unwrap_err();
        assert_eq!((err.field.as_str(), err.offset), ("digest", 24));
        let err = Word::from_bytes(&bad, &Ctx).unwrap_err();
        assert_eq!(
            err.kind,
            DecodeErrorKind::DigestMismatch { keyed: false },
            "{err}"
        );
        // A MAC loads only under its key, and a keyed reader refuses plain digests.
        let sealed = Word(42).to_bytes_sealed(PublicRandomness::Seeded, Integrity::Mac(&key));
        assert_eq!(sealed.len(), plain.len());
        assert_ne!(sealed, plain);
        assert_eq!(
            Word::from_bytes_sealed(&sealed, &Ctx, Integrity::Mac(&key))
                .unwrap()
                .0,
            42
        );
        assert_eq!(
            Word::read_from_sealed(&sealed[..], &Ctx, Integrity::Mac(&key))
                .unwrap()
                .0,
            42
        );
        for (bytes, integrity) in [
            (&sealed, Integrity::Mac(&other)),
            (&sealed, Integrity::Digest),
            (&plain, Integrity::Mac(&key)),
        ] {
            let err = Word::from_bytes_sealed(bytes, &Ctx, integrity).unwrap_err();
            assert_eq!(err.field, "digest", "{err}");
            assert!(err.to_string().contains("MAC"), "{err}");
        }
        // Version 1 objects (no digest, the old fingerprint) load in the default mode only.
        let mut v1 = plain[..24].to_vec();
        v1[4..6].copy_from_slice(&1u16.to_le_bytes());
        v1[8..16].copy_from_slice(&1u64.to_le_bytes());
        assert_eq!(Word::from_bytes(&v1, &Ctx).unwrap().0, 42);
        assert_eq!(Word::read_from(&v1[..], &Ctx).unwrap().0, 42);
        for err in [
            Word::from_bytes_sealed(&v1, &Ctx, Integrity::Mac(&key)).unwrap_err(),
            Word::read_from_sealed(&v1[..], &Ctx, Integrity::Mac(&key)).unwrap_err(),
        ] {
            assert_eq!(err.kind, DecodeErrorKind::Unauthenticated { version: 1 });
        }
        // A v1 object claiming the new fingerprint is another context's.
        let mut wrong = v1.clone();
        wrong[8..16].copy_from_slice(&7u64.to_le_bytes());
        assert_eq!(
            Word::from_bytes(&wrong, &Ctx).unwrap_err().field,
            "header.fingerprint"
        );
        // Resealing an edited object makes the edit reach the payload.
        let mut edited = plain.clone();
        edited[16] = 43;
        reseal(&mut edited);
        assert_eq!(Word::from_bytes(&edited, &Ctx).unwrap().0, 43);
        assert_eq!(format!("{key:?}"), "MacKey(<redacted>)");
    }
}
