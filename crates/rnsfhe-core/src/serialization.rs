//! Wire encodings of the RLWE objects ([`rnsfhe_math::wire`] for the header and conventions): public
//! keys, hybrid relinearization and Galois keys, secret keys (only through explicitly named functions)
//! and the ciphertext parts the scheme crates wrap.
//!
//! Payloads (after the 16-byte header; polynomials as in [`rnsfhe_ring::wire`], bases implied):
//!
//! ```text
//! PublicKey     u8 flags: bit 0 seeded, bit 1 over Q ∪ {p_0} (0..=3; format version <= 2: the seeded
//!               flag, 0 or 1, keys over Q)
//!               | b over the key's basis | seed[32] if seeded, else a over the key's basis
//! RelinKey      key-switching pairs (below), one per digit group of the context (dnum)
//! GaloisKeys    u32 count (<= N) | count x ( u32 element (odd, < 2N, increasing) | pairs )
//! pairs         u8 seeded | b_0 .. b_{d-1} over QP | seed[32] if seeded, else a_0 .. a_{d-1} over QP
//! SecretKey     u8 distribution (0 ternary, 1 Hamming weight) | u32 h | N coefficients at 2 bits
//!               (0 -> 0, 1 -> 1, 2 -> -1)
//! parts         u32 level l (1..=L) | u8 count (2..=3) | u8 seeded (count must be 2)
//!               | c_0 over Q_l | seed[32] if seeded, else c_1 over Q_l | c_2 over Q_l if count = 3
//! RGSW          pairs of m | pairs of s m (no header: a part of the blind-rotation keys of rnsfhe-lwe)
//! ```
//!
//! Seeded `a` polynomials are expanded with [`crate::samplers::expand_uniform`] from
//! [`Csprng::from_public_seed`], the way the key generator and the seeded encryptor made them, so a key
//! or a symmetric ciphertext costs about half its expanded size.

use std::collections::BTreeMap;
use std::io::{self, Read, Write};
use std::sync::Arc;

use rnsfhe_math::sampling::{Csprng, Seed, SEED_LEN};
use rnsfhe_math::wire::{
    packed_len, read_exactly, write_object, DecodeError, DecodeErrorKind, Deserializable,
    Fingerprints, Header, Integrity, ObjectKind, PublicRandomness, Serializable, WireFingerprint,
    WireReader, WireWriter, DIGEST_LEN, HEADER_LEN,
};
use rnsfhe_ring::wire::poly_wire_size;
use rnsfhe_ring::{ConversionMode, Form, GaloisElement, Ntt, Poly, RnsBasis};
use zeroize::{Zeroize, Zeroizing};

use crate::context::{RlweContext, SecretDistribution};
use crate::encryption::{RlweCiphertext, SeededRlweCiphertext};
use crate::gadget::{Gadget, GadgetCiphertext};
use crate::keys::{GaloisKeys, PublicKey, RelinKey, SecretKey};
use crate::rgsw::RgswCiphertext;
use crate::samplers::expand_uniform;
use crate::security::SecurityEstimate;

/// The wire object kinds of `rnsfhe-core` (codes in [`rnsfhe_math::wire::kind_codes::CORE`]).
pub mod kinds {
    use rnsfhe_math::wire::ObjectKind;

    /// An RLWE secret key (written and read only by explicitly named functions).
    pub const SECRET_KEY: ObjectKind = ObjectKind::secret(16, "secret key");
    /// An RLWE public key `(b, a)`.
    pub const PUBLIC_KEY: ObjectKind = ObjectKind::new(17, "public key");
    /// The relinearization key of hybrid key switching (CKKS).
    pub const RELIN_KEY: ObjectKind = ObjectKind::new(18, "relinearization key");
    /// Galois keys of hybrid key switching (CKKS rotations and conjugation).
    pub const GALOIS_KEYS: ObjectKind = ObjectKind::new(19, "Galois keys");

    /// Every kind of this crate.
    pub const KINDS: [ObjectKind; 4] = [SECRET_KEY, PUBLIC_KEY, RELIN_KEY, GALOIS_KEYS];
}

/// Whether a seed is written: the caller asked for seeds and one is known.
fn use_seed(seed: Option<&Seed>, randomness: PublicRandomness) -> Option<&Seed> {
    match randomness {
        PublicRandomness::Seeded => seed,
        PublicRandomness::Expanded => None,
    }
}

/// Reads polynomials over `basis`, naming them `field[i]`.
fn read_polys<R: Read, F: Form>(
    r: &mut WireReader<R>,
    basis: &Arc<RnsBasis>,
    count: usize,
    field: &str,
) -> Result<Vec<Poly<F>>, DecodeError> {
    (0..count)
        .map(|i| Poly::read_wire(r, basis, &format!("{field}[{i}]")))
        .collect()
}

/// Expands `count` uniform polynomials over `basis` from a public seed, in order.
fn expand_polys(
    basis: &Arc<RnsBasis>,
    count: usize,
    seed: Seed,
) -> Result<Vec<Poly<Ntt>>, crate::Error> {
    let mut public = Csprng::from_public_seed(seed);
    (0..count)
        .map(|_| expand_uniform(basis, &mut public))
        .collect()
}

/// Converts an error of the (trusted) expansion into a decode error of `field`.
fn expansion_failed(r: &WireReader<impl Read>, field: &str, e: crate::Error) -> DecodeError {
    r.invalid(field, format!("expanding the seed failed: {e}"))
}

/// Key-switching pairs `(b_j, a_j)` in NTT form, as [`read_key_pairs`] returns them.
type KeyPairs = Vec<(Poly<Ntt>, Poly<Ntt>)>;

/// Wire size of key-switching pairs `(b_j, a_j)` over `basis`, `count` of them.
fn key_pairs_size(basis: &RnsBasis, count: usize, seeded: bool) -> u64 {
    let poly = poly_wire_size(basis);
    1 + count as u64 * poly
        + if seeded {
            SEED_LEN as u64
        } else {
            count as u64 * poly
        }
}

/// Writes key-switching pairs `(b_j, a_j)`: all `b_j`, then the seed of the `a_j` if known and wanted,
/// else all `a_j`: the wire form of every [`GadgetCiphertext`].
fn write_key_pairs<W: Write>(
    w: &mut WireWriter<W>,
    pairs: &[(Poly<Ntt>, Poly<Ntt>)],
    seed: Option<&Seed>,
    randomness: PublicRandomness,
) -> io::Result<()> {
    let seed = use_seed(seed, randomness);
    w.u8(seed.is_some() as u8)?;
    for (b, _) in pairs {
        b.write_wire(w)?;
    }
    match seed {
        Some(seed) => w.bytes(seed),
        None => pairs.iter().try_for_each(|(_, a)| a.write_wire(w)),
    }
}

/// Reads `count` key-switching pairs over `basis` written by [`write_key_pairs`]; returns them with the
/// seed if one was stored.
fn read_key_pairs<R: Read>(
    r: &mut WireReader<R>,
    basis: &Arc<RnsBasis>,
    count: usize,
    field: &str,
) -> Result<(KeyPairs, Option<Seed>), DecodeError> {
    let seeded = r.flag(&format!("{field}.seeded"))?;
    let bs: Vec<Poly<Ntt>> = read_polys(r, basis, count, &format!("{field}.b"))?;
    let (a_s, seed) = if seeded {
        let seed: Seed = r.array(&format!("{field}.seed"))?;
        let a = expand_polys(basis, count, seed).map_err(|e| expansion_failed(r, field, e))?;
        (a, Some(seed))
    } else {
        (read_polys(r, basis, count, &format!("{field}.a"))?, None)
    };
    Ok((bs.into_iter().zip(a_s).collect(), seed))
}

impl Serializable for PublicKey {
    const KIND: ObjectKind = kinds::PUBLIC_KEY;

    fn wire_fingerprint(&self) -> u64 {
        self.fingerprint
    }

    fn payload_size(&self, randomness: PublicRandomness) -> u64 {
        let poly = self.b.wire_size();
        1 + poly
            + match use_seed(self.seed.as_ref(), randomness) {
                Some(_) => SEED_LEN as u64,
                None => poly,
            }
    }

    fn write_payload<W: Write>(
        &self,
        w: &mut WireWriter<W>,
        randomness: PublicRandomness,
    ) -> io::Result<()> {
        let seed = use_seed(self.seed.as_ref(), randomness);
        w.u8(seed.is_some() as u8 | (self.extended as u8) << 1)?;
        self.b.write_wire(w)?;
        match seed {
            Some(seed) => w.bytes(seed),
            None => self.a.write_wire(w),
        }
    }
}

impl Deserializable<RlweContext> for PublicKey {
    fn read_payload<R: Read>(
        r: &mut WireReader<R>,
        ctx: &RlweContext,
    ) -> Result<Self, DecodeError> {
        // Up to format version 2 the byte was the seeded flag alone (keys over Q).
        let flags = if r.format_version() >= 3 {
            let at = r.offset();
            let flags = r.u8("public_key.flags")?;
            if flags > 3 {
                return Err(r.out_of_range(
                    at,
                    "public_key.flags",
                    flags as u64,
                    "0..=3 (bit 0 seeded, bit 1 over Q and p_0)",
                ));
            }
            flags
        } else {
            r.flag("public_key.seeded")? as u8
        };
        let seeded = flags & 1 == 1;
        let extended = flags & 2 == 2;
        let basis = if extended {
            ctx.public_key_basis()
                .map_err(|e| r.invalid("public_key.flags", e.to_string()))?
        } else {
            Arc::clone(ctx.chain())
        };
        let b = Poly::read_wire(r, &basis, "public_key.b")?;
        let (a, seed) = if seeded {
            let seed: Seed = r.array("public_key.seed")?;
            let a = expand_uniform(&basis, &mut Csprng::from_public_seed(seed))
                .map_err(|e| expansion_failed(r, "public_key.seed", e))?;
            (a, Some(seed))
        } else {
            (Poly::read_wire(r, &basis, "public_key.a")?, None)
        };
        Ok(PublicKey {
            fingerprint: ctx.fingerprint(),
            b,
            a,
            seed,
            extended,
        })
    }
}

impl GadgetCiphertext {
    /// Wire size of the rows: all `b_i`, then the seed or all `a_i`.
    pub fn wire_size(&self, randomness: PublicRandomness) -> u64 {
        let Some((b, _)) = self.rows.first() else {
            return 1;
        };
        let seeded = use_seed(self.seed.as_ref(), randomness).is_some();
        key_pairs_size(b.basis(), self.rows.len(), seeded)
    }

    /// Writes the rows (a seeded-flag byte, all `b_i`, then the seed or all `a_i`); the gadget and fingerprint are not written: the reader
    /// takes them from its context.
    ///
    /// Errors: I/O errors of the writer.
    pub fn write_wire<W: Write>(
        &self,
        w: &mut WireWriter<W>,
        randomness: PublicRandomness,
    ) -> io::Result<()> {
        write_key_pairs(w, &self.rows, self.seed.as_ref(), randomness)
    }

    /// Reads the `count` rows over `basis` of a gadget ciphertext for `gadget` under the secret of the
    /// context with fingerprint `fingerprint`.
    ///
    /// Errors: decoding errors naming `field`.
    pub fn read_wire<R: Read>(
        r: &mut WireReader<R>,
        fingerprint: u64,
        gadget: Gadget,
        basis: &Arc<RnsBasis>,
        count: usize,
        field: &str,
    ) -> Result<Self, DecodeError> {
        let (rows, seed) = read_key_pairs(r, basis, count, field)?;
        Ok(GadgetCiphertext {
            fingerprint,
            gadget,
            rows,
            seed,
        })
    }

    /// Reads a gadget ciphertext of `ctx`'s hybrid gadget (one row per digit group, over `QP`): a
    /// key-switching key (relinearization, Galois), a row of an RGSW ciphertext, an automorphism key of
    /// blind rotation. Errors name `field`.
    pub fn read_hybrid<R: Read>(
        r: &mut WireReader<R>,
        ctx: &RlweContext,
        field: &str,
    ) -> Result<Self, DecodeError> {
        Self::read_wire(
            r,
            ctx.fingerprint(),
            Gadget::of_context(ctx),
            ctx.extended_basis(),
            ctx.special_constants().len(),
            field,
        )
    }
}

impl RgswCiphertext {
    /// Wire size of [`RgswCiphertext::write_wire`]'s output: its two gadget ciphertexts.
    pub fn wire_size(&self, randomness: PublicRandomness) -> u64 {
        self.m.wire_size(randomness) + self.sm.wire_size(randomness)
    }

    /// Writes the gadget ciphertexts of `m` and of `s m`, in that order, each as
    /// [`GadgetCiphertext::write_wire`] (a seeded-flag byte, the `b_i`, then the seed or the `a_i`): an
    /// encryption made by [`RgswCiphertext::encrypt_scalar`] keeps both seeds, about half its expanded
    /// size. Neither the gadget nor the fingerprint is written: the reader takes them from its context.
    ///
    /// Errors: I/O errors of the writer.
    pub fn write_wire<W: Write>(
        &self,
        w: &mut WireWriter<W>,
        randomness: PublicRandomness,
    ) -> io::Result<()> {
        self.m.write_wire(w, randomness)?;
        self.sm.write_wire(w, randomness)
    }

    /// Reads an RGSW ciphertext of `ctx` written by [`RgswCiphertext::write_wire`]: two gadget
    /// ciphertexts of the context's hybrid gadget ([`GadgetCiphertext::read_hybrid`]), errors naming
    /// `{field}.m` and `{field}.sm`.
    ///
    /// Errors: decoding errors (truncation, residues not below their modulus, a bad seeded flag).
    pub fn read_wire<R: Read>(
        r: &mut WireReader<R>,
        ctx: &RlweContext,
        field: &str,
    ) -> Result<Self, DecodeError> {
        Ok(RgswCiphertext {
            m: GadgetCiphertext::read_hybrid(r, ctx, &format!("{field}.m"))?,
            sm: GadgetCiphertext::read_hybrid(r, ctx, &format!("{field}.sm"))?,
        })
    }
}

impl Serializable for RelinKey {
    const KIND: ObjectKind = kinds::RELIN_KEY;

    fn wire_fingerprint(&self) -> u64 {
        self.0.fingerprint
    }

    fn payload_size(&self, randomness: PublicRandomness) -> u64 {
        self.0.wire_size(randomness)
    }

    fn write_payload<W: Write>(
        &self,
        w: &mut WireWriter<W>,
        randomness: PublicRandomness,
    ) -> io::Result<()> {
        self.0.write_wire(w, randomness)
    }
}

impl Deserializable<RlweContext> for RelinKey {
    fn read_payload<R: Read>(
        r: &mut WireReader<R>,
        ctx: &RlweContext,
    ) -> Result<Self, DecodeError> {
        Ok(RelinKey(GadgetCiphertext::read_hybrid(
            r,
            ctx,
            "relin_key",
        )?))
    }
}

/// Reads a list of Galois elements with one key each: a `u32` count (at most `N`, the number of odd
/// residues below `2N`), then per key the element (a [`GaloisElement`] of degree `n`, strictly
/// increasing, so no duplicates) and the key read by `read_key`. Shared with BFV's Galois keys.
pub fn read_galois_list<R: Read, K>(
    r: &mut WireReader<R>,
    n: usize,
    field: &str,
    mut read_key: impl FnMut(&mut WireReader<R>, &str) -> Result<K, DecodeError>,
) -> Result<Vec<(GaloisElement, K)>, DecodeError> {
    let count = r.u32_in(
        &format!("{field}.count"),
        0..=n as u32,
        "at most N keys (one per odd element below 2N)",
    )?;
    let mut out: Vec<(GaloisElement, K)> = Vec::new();
    for i in 0..count as usize {
        let at = r.offset();
        let name = format!("{field}.element[{i}]");
        let element = r.u32(&name)? as usize;
        let previous = out.last().map(|(e, _)| e.value());
        let valid = GaloisElement::new(element, n)
            .ok()
            .filter(|_| previous.is_none_or(|p| element > p));
        let Some(valid) = valid else {
            return Err(r.out_of_range(
                at,
                &name,
                element as u64,
                format!(
                    "odd, below 2N = {}, larger than the previous element {}",
                    2 * n,
                    previous.map_or("(none)".to_string(), |p| p.to_string())
                ),
            ));
        };
        let key = read_key(r, &format!("{field}.key[{i}]"))?;
        out.push((valid, key));
    }
    Ok(out)
}

/// Writes a Galois key list for [`read_galois_list`]: the count, then each element (in increasing order,
/// the map's) and its key written by `write_key`.
pub fn write_galois_list<W: Write, K>(
    w: &mut WireWriter<W>,
    keys: &BTreeMap<usize, K>,
    mut write_key: impl FnMut(&mut WireWriter<W>, &K) -> io::Result<()>,
) -> io::Result<()> {
    w.u32(keys.len() as u32)?;
    for (&element, key) in keys {
        w.u32(element as u32)?;
        write_key(w, key)?;
    }
    Ok(())
}

/// Wire size of a Galois key list ([`write_galois_list`]) whose keys have sizes `key_size`.
pub fn galois_list_size<K>(keys: &BTreeMap<usize, K>, key_size: impl Fn(&K) -> u64) -> u64 {
    4 + keys.values().map(|k| 4 + key_size(k)).sum::<u64>()
}

impl Serializable for GaloisKeys {
    const KIND: ObjectKind = kinds::GALOIS_KEYS;

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

impl Deserializable<RlweContext> for GaloisKeys {
    fn read_payload<R: Read>(
        r: &mut WireReader<R>,
        ctx: &RlweContext,
    ) -> Result<Self, DecodeError> {
        let list = read_galois_list(r, ctx.n(), "galois_keys", |r, field| {
            GadgetCiphertext::read_hybrid(r, ctx, field)
        })?;
        Ok(GaloisKeys {
            fingerprint: ctx.fingerprint(),
            keys: list.into_iter().map(|(e, k)| (e.value(), k)).collect(),
        })
    }
}

/// The polynomial forms a seeded uniform part expands into: NTT (keys, CKKS ciphertexts) and
/// coefficient (BFV ciphertexts, which live in coefficient form), both from one seed format
/// ([`crate::RlweForm::expand_seed`]). The name the wire layer has always used for [`crate::RlweForm`].
pub use crate::encryption::RlweForm as SeedExpansion;

/// Wire size of ciphertext polynomials over `basis` without a level ([`write_parts`]): count and seeded
/// bytes, then `count` polynomials, the second one as a seed if `seeded`.
pub fn parts_size(basis: &RnsBasis, count: usize, seeded: bool) -> u64 {
    let poly = poly_wire_size(basis);
    2 + if seeded {
        poly + SEED_LEN as u64
    } else {
        count as u64 * poly
    }
}

/// Wire size of ciphertext parts over `basis` with their level ([`write_ciphertext_parts`]).
pub fn ciphertext_parts_size(basis: &RnsBasis, count: usize, seeded: bool) -> u64 {
    4 + parts_size(basis, count, seeded)
}

/// Writes ciphertext polynomials of any form without a level: `u8` count, `u8` seeded = 0, the
/// polynomials. Shared by the RLWE parts here and BFV ciphertexts (coefficient form, always over `Q`).
pub fn write_parts<W: Write, F: Form>(w: &mut WireWriter<W>, parts: &[Poly<F>]) -> io::Result<()> {
    w.u8(parts.len() as u8)?;
    w.u8(0)?;
    parts.iter().try_for_each(|p| p.write_wire(w))
}

/// Writes a fresh pair `(c_0, a)` whose `a` expands from `seed`, in the layout of [`write_parts`]:
/// 2 parts, then `c_0` and the seed (or, for [`PublicRandomness::Expanded`], `a` itself).
pub fn write_seeded_pair<W: Write, F: SeedExpansion>(
    w: &mut WireWriter<W>,
    c0: &Poly<F>,
    seed: &Seed,
    randomness: PublicRandomness,
) -> io::Result<()> {
    w.u8(2)?;
    match randomness {
        PublicRandomness::Seeded => {
            w.u8(1)?;
            c0.write_wire(w)?;
            w.bytes(seed)
        }
        PublicRandomness::Expanded => {
            w.u8(0)?;
            c0.write_wire(w)?;
            let a =
                F::expand_seed(c0.basis(), *seed).map_err(|e| io::Error::other(e.to_string()))?;
            a.write_wire(w)
        }
    }
}

/// Reads polynomials over `basis` written by [`write_parts`] or [`write_seeded_pair`]: 2 or 3 parts, a
/// seed only for 2 parts; errors name `{field}.part_count`, `{field}.seeded`, `{field}.parts[i]` and
/// `{field}.seed`.
pub fn read_parts<R: Read, F: SeedExpansion>(
    r: &mut WireReader<R>,
    basis: &Arc<RnsBasis>,
    field: &str,
) -> Result<Vec<Poly<F>>, DecodeError> {
    let count = r.u8(&format!("{field}.part_count"))?;
    if !(2..=3).contains(&count) {
        return Err(r.out_of_range(
            r.offset() - 1,
            &format!("{field}.part_count"),
            count as u64,
            "2 or 3 parts",
        ));
    }
    let seeded = r.flag(&format!("{field}.seeded"))?;
    if seeded && count != 2 {
        return Err(r.invalid(
            &format!("{field}.seeded"),
            "only a fresh 2-part ciphertext can have a seeded part",
        ));
    }
    if seeded {
        let c0 = Poly::read_wire(r, basis, &format!("{field}.parts[0]"))?;
        let seed: Seed = r.array(&format!("{field}.seed"))?;
        let a = F::expand_seed(basis, seed).map_err(|e| expansion_failed(r, field, e))?;
        Ok(vec![c0, a])
    } else {
        read_polys(r, basis, count as usize, &format!("{field}.parts"))
    }
}

/// Writes the parts of `ct` (level, then [`write_parts`]).
pub fn write_ciphertext_parts<W: Write>(
    w: &mut WireWriter<W>,
    ct: &RlweCiphertext,
) -> io::Result<()> {
    w.u32(ct.level() as u32)?;
    write_parts(w, &ct.parts)
}

/// Writes a seeded ciphertext in the layout of [`write_ciphertext_parts`] (2 parts, the second as its
/// seed), so that it loads as an ordinary ciphertext.
pub fn write_seeded_parts<W: Write>(
    w: &mut WireWriter<W>,
    ct: &SeededRlweCiphertext,
    randomness: PublicRandomness,
) -> io::Result<()> {
    w.u32(ct.level() as u32)?;
    write_seeded_pair(w, &ct.c0, &ct.seed, randomness)
}

/// Reads ciphertext parts of `ctx` written by [`write_ciphertext_parts`] or [`write_seeded_parts`]:
/// the level must be on the chain (`1..=L`), then [`read_parts`].
pub fn read_ciphertext_parts<R: Read>(
    r: &mut WireReader<R>,
    ctx: &RlweContext,
    field: &str,
) -> Result<RlweCiphertext, DecodeError> {
    let level = r.u32_in(
        &format!("{field}.level"),
        1..=ctx.max_level() as u32,
        "a level of the chain (limb count)",
    )? as usize;
    let basis = ctx
        .basis_at(level)
        .map_err(|e| r.invalid(&format!("{field}.level"), e.to_string()))?;
    let parts = read_parts(r, basis, field)?;
    RlweCiphertext::new(parts).map_err(|e| r.invalid(field, e.to_string()))
}

/// Bounds on what loading parameters from untrusted bytes may cost: the ring degree, the number of
/// primes and the size of a polynomial over all of them (every table of a context is a few such
/// polynomials), and whether parameters not established as 128-bit secure are accepted. Every loader of
/// parameters applies [`LoadLimits::default`] unless the caller passes others, so a hostile blob is
/// refused before anything expensive is built; a caller that loads larger parameters raises the limits
/// explicitly.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LoadLimits {
    /// Largest `log2 N` accepted (default 16).
    pub max_log_n: u32,
    /// Largest number of primes, `Q` and `P` together (default 64).
    pub max_moduli: u32,
    /// Largest `N x (number of primes)`, the words of one polynomial over every prime (default
    /// `2^16 x 48`, about 25 MB).
    pub max_words: u64,
    /// Whether parameters that are not established as 128-bit secure load (default `false`). Their own
    /// `insecure_for_testing` flag is the writer's opt-in; this is the reader's: a context received from
    /// another party cannot switch the receiver's security check off.
    pub allow_insecure: bool,
}

impl LoadLimits {
    /// The default limits: `N <= 2^16`, at most 64 primes and `2^16 x 48` words, secure parameters only.
    /// Every preset of `N <= 2^16` fits.
    pub const DEFAULT: LoadLimits = LoadLimits {
        max_log_n: 16,
        max_moduli: 64,
        max_words: (1 << 16) * 48,
        allow_insecure: false,
    };

    /// Limits that accept any size the parameter decoders can represent (`N <= 2^17`, 128 primes of each
    /// kind), still secure parameters only. For trusted bytes.
    pub const fn trusted() -> LoadLimits {
        LoadLimits {
            max_log_n: 17,
            max_moduli: 256,
            max_words: (1 << 17) * 256,
            allow_insecure: false,
        }
    }

    /// These limits, with parameters that are not established as 128-bit secure accepted too (tests,
    /// paper reproduction).
    pub const fn allowing_insecure(self) -> LoadLimits {
        LoadLimits {
            allow_insecure: true,
            ..self
        }
    }

    /// Checks a parameter set of `2^log_n` and `moduli` primes against the limits; the error names the
    /// field `params.log_n` or `params.moduli` at the payload's start.
    pub fn check(&self, log_n: u32, moduli: usize) -> Result<(), DecodeError> {
        let exceeded = |field: &str, value: u64, limit: String| {
            Err(DecodeError::new(
                field,
                HEADER_LEN,
                DecodeErrorKind::LimitExceeded { value, limit },
            ))
        };
        if log_n > self.max_log_n {
            return exceeded(
                "params.log_n",
                log_n as u64,
                format!(
                    "max_log_n = {}; raise it to load N = 2^{log_n} from trusted bytes",
                    self.max_log_n
                ),
            );
        }
        if moduli as u64 > self.max_moduli as u64 {
            return exceeded(
                "params.moduli",
                moduli as u64,
                format!(
                    "max_moduli = {} primes in Q and P together; raise it for trusted bytes",
                    self.max_moduli
                ),
            );
        }
        let words = (moduli as u64).saturating_mul(1u64 << log_n.min(63));
        if words > self.max_words {
            return exceeded(
                "params.moduli",
                words,
                format!(
                    "max_words = {}: N x primes = 2^{log_n} x {moduli}; raise it for trusted bytes",
                    self.max_words
                ),
            );
        }
        Ok(())
    }
}

impl LoadLimits {
    /// Refuses parameters of the verdict `security` unless it establishes 128-bit security or the limits
    /// allow insecure parameters; the error names the field `parameters` at the payload's start.
    pub fn check_security(&self, security: SecurityEstimate) -> Result<(), DecodeError> {
        if security.is_secure() || self.allow_insecure {
            return Ok(());
        }
        Err(DecodeError::new(
            "parameters",
            HEADER_LEN,
            DecodeErrorKind::Invalid(format!(
                "refused: not established as 128-bit secure ({security}); a reader accepts such \
                 parameters only when it allows insecure parameters itself (LoadLimits::allow_insecure, \
                 Python allow_insecure=True)"
            )),
        ))
    }
}

impl Default for LoadLimits {
    fn default() -> Self {
        Self::DEFAULT
    }
}

/// What a scheme derives from its literal parameters without building a context (no tables): the
/// fingerprints and the security verdict, so that a loader can refuse bytes before any precomputation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ParamsCheck {
    /// The fingerprints the built context will have.
    pub fingerprints: Fingerprints,
    /// The security verdict the built context will report.
    pub security: SecurityEstimate,
}

/// The literal parameters of a scheme on the wire (a context's bytes): the header (kind checked, its
/// fingerprint kept), the range-checked payload, the [`LoadLimits`], then the fingerprint and the
/// security verdict derived without building anything ([`WireParams::check`]), and only then the context.
/// A reader therefore never trusts moduli it did not derive itself, and refuses hostile bytes before the
/// expensive part. Each scheme implements the required items; the loaders are shared.
pub trait WireParams: Sized {
    /// The header kind of these parameters.
    const KIND: ObjectKind;
    /// The checked context the parameters build.
    type Context;
    /// The error of building it.
    type BuildError: std::fmt::Display;

    /// Reads and range-checks the payload, allocating nothing from an unchecked length.
    fn read_params<R: Read>(r: &mut WireReader<R>) -> Result<Self, DecodeError>;

    /// `log2 N` and the number of primes (`Q` and `P` together) the parameters ask for, from the literal
    /// values (what [`LoadLimits`] bounds).
    fn size(&self) -> (u32, usize);

    /// The fingerprints and the security verdict, derived without building the context (at most a prime
    /// search).
    fn check(&self) -> Result<ParamsCheck, Self::BuildError>;

    /// Builds the context (the scheme's checked constructor).
    fn build(self) -> Result<Self::Context, Self::BuildError>;

    /// Reads the header and the parameters without building the context: the parameters and the
    /// header. The digest is checked when the object has one (streams: at its end).
    fn read_params_object<R: Read>(r: &mut WireReader<R>) -> Result<(Self, Header), DecodeError> {
        let header = Header::read(r)?;
        header.expect(Self::KIND, None)?;
        let params = Self::read_params(r)?;
        r.check_digest(&header)?;
        Ok((params, header))
    }

    /// [`WireParams::read_params_object`] of exactly `bytes` (digest checked first): the parameters and
    /// the fingerprint the header announces.
    fn decode_params(bytes: &[u8]) -> Result<(Self, u64), DecodeError> {
        read_exactly(bytes, Integrity::Digest, Self::read_params_object)
            .map(|(p, h)| (p, h.fingerprint))
    }

    /// Reads the parameters and builds the context under `limits`: sizes beyond the limits are errors of
    /// `params.log_n` / `params.moduli`; a header fingerprint other than the parameters' an error of
    /// `header.fingerprint`; parameters not established as secure (unless `limits.allow_insecure`) or
    /// refused by the scheme an error of `parameters` (at byte 16, the payload's start). All of these
    /// come before any table is built.
    fn read_context<R: Read>(
        r: &mut WireReader<R>,
        limits: &LoadLimits,
    ) -> Result<Self::Context, DecodeError> {
        let (params, header) = Self::read_params_object(r)?;
        let (log_n, moduli) = params.size();
        limits.check(log_n, moduli)?;
        let invalid = |field: &str, at: u64, reason: String| {
            DecodeError::new(field, at, DecodeErrorKind::Invalid(reason))
        };
        let checked = params
            .check()
            .map_err(|e| invalid("parameters", HEADER_LEN, format!("rejected: {e}")))?;
        let expected = checked.fingerprints.for_version(header.version);
        if header.fingerprint != expected {
            return Err(invalid(
                "header.fingerprint",
                8,
                format!(
                    "the parameters have fingerprint {expected:#018x}, the header says {:#018x} (altered \
                     bytes, or written by a build that derives other primes)",
                    header.fingerprint
                ),
            ));
        }
        limits.check_security(checked.security)?;
        params
            .build()
            .map_err(|e| invalid("parameters", HEADER_LEN, format!("rejected: {e}")))
    }

    /// [`WireParams::read_context`] of exactly `bytes` (digest checked first).
    fn context_from_bytes(bytes: &[u8], limits: &LoadLimits) -> Result<Self::Context, DecodeError> {
        Self::context_from_bytes_sealed(bytes, limits, Integrity::Digest)
    }

    /// [`WireParams::context_from_bytes`] with the digest checked in the mode `integrity`.
    fn context_from_bytes_sealed(
        bytes: &[u8],
        limits: &LoadLimits,
        integrity: Integrity<'_>,
    ) -> Result<Self::Context, DecodeError> {
        read_exactly(bytes, integrity, |r| Self::read_context(r, limits))
    }
}

/// Writes a secret distribution: `u8` tag (0 ternary, 1 Hamming weight) and `u32` weight (0 for
/// ternary). Shared by the parameter encodings of the schemes.
pub fn write_secret_distribution<W: Write>(
    w: &mut WireWriter<W>,
    secret: SecretDistribution,
) -> io::Result<()> {
    let (tag, h) = match secret {
        SecretDistribution::Ternary => (0u8, 0u32),
        SecretDistribution::HammingWeight(h) => (1, h as u32),
    };
    w.u8(tag)?;
    w.u32(h)
}

/// Reads a secret distribution written by [`write_secret_distribution`] for ring degree `n`.
pub fn read_secret_distribution<R: Read>(
    r: &mut WireReader<R>,
    n: usize,
    field: &str,
) -> Result<SecretDistribution, DecodeError> {
    let at = r.offset();
    let tag = r.u8(&format!("{field}.tag"))?;
    let h = r.u32(&format!("{field}.hamming_weight"))?;
    match (tag, h) {
        (0, 0) => Ok(SecretDistribution::Ternary),
        (1, h) if (1..=n as u32).contains(&h) => Ok(SecretDistribution::HammingWeight(h as usize)),
        _ => Err(r.invalid_at(
            at,
            field,
            format!(
                "tag {tag} with weight {h}: expected 0 (ternary, weight 0) or 1 (weight 1..=N)"
            ),
        )),
    }
}

/// Writes a basis-conversion mode as a `u8` (0 fast, 1 exact float, 2 exact integer).
pub fn write_conversion<W: Write>(w: &mut WireWriter<W>, mode: ConversionMode) -> io::Result<()> {
    w.u8(match mode {
        ConversionMode::Fast => 0,
        ConversionMode::ExactFloat => 1,
        ConversionMode::ExactInteger => 2,
    })
}

/// Reads a basis-conversion mode written by [`write_conversion`].
pub fn read_conversion<R: Read>(
    r: &mut WireReader<R>,
    field: &str,
) -> Result<ConversionMode, DecodeError> {
    let at = r.offset();
    match r.u8(field)? {
        0 => Ok(ConversionMode::Fast),
        1 => Ok(ConversionMode::ExactFloat),
        2 => Ok(ConversionMode::ExactInteger),
        v => Err(r.out_of_range(
            at,
            field,
            v as u64,
            "0 (fast), 1 (exact float), 2 (exact integer)",
        )),
    }
}

/// Reads a flags byte whose bits outside `known` must be clear (`meaning` names the known bits in the
/// error): the last byte of a parameter set, whose bits announce optional sections.
pub fn read_flags<R: Read>(
    r: &mut WireReader<R>,
    field: &str,
    known: u8,
    meaning: &str,
) -> Result<u8, DecodeError> {
    let at = r.offset();
    let flags = r.u8(field)?;
    if flags & !known != 0 {
        return Err(r.out_of_range(at, field, flags as u64, meaning));
    }
    Ok(flags)
}

/// Reads a standard deviation: finite, positive and at most [`crate::security::MAX_SIGMA`]
/// ([`crate::security::check_sigma`]). Whether it is wide enough for security is checked with the other
/// parameters ([`WireParams::read_context`]).
pub fn read_sigma<R: Read>(r: &mut WireReader<R>, field: &str) -> Result<f64, DecodeError> {
    let at = r.offset();
    let sigma = r.f64(field)?;
    crate::security::check_sigma(sigma).map_err(|reason| r.invalid_at(at, field, reason))?;
    Ok(sigma)
}

/// Wire size of a secret key's payload.
fn secret_key_payload_size(n: usize) -> u64 {
    5 + ternary_wire_size(n)
}

/// Wire size of `n` ternary coefficients ([`write_ternary`]): 2 bits each.
pub fn ternary_wire_size(n: usize) -> u64 {
    packed_len(n, 2)
}

/// Writes ternary coefficients (secret material: RLWE secret keys here, LWE secret keys in `rnsfhe-lwe`)
/// at 2 bits each, `0 -> 0`, `1 -> 1`, `-1 -> 2`, without a branch on their values; the temporary codes
/// are wiped. Every coefficient must be in `{-1, 0, 1}` (the key types guarantee it).
pub fn write_ternary<W: Write>(w: &mut WireWriter<W>, coeffs: &[i64]) -> io::Result<()> {
    // `c & 3` is 3 for -1 in two's complement; subtracting `(x >> 1) & (x & 1)` maps 3 to 2.
    let mut codes: Vec<u64> = coeffs
        .iter()
        .map(|&c| {
            let x = (c & 3) as u64;
            x - ((x >> 1) & (x & 1))
        })
        .collect();
    let result = w.packed(&codes, 2);
    codes.zeroize();
    result
}

/// Reads `n` ternary coefficients written by [`write_ternary`] (`n` from the reader's parameters, never
/// from the input): code 3 is an error of `{field}[i]`, non-zero padding an error of `field`. The
/// coefficients come back in a buffer wiped when it is dropped.
pub fn read_ternary<R: Read>(
    r: &mut WireReader<R>,
    n: usize,
    field: &str,
) -> Result<Zeroizing<Vec<i64>>, DecodeError> {
    let mut codes = Zeroizing::new(vec![0u64; n]);
    r.packed(field, &mut codes, 2, 3)?;
    // Branch-free decode 0 -> 0, 1 -> 1, 2 -> -1 (code 3 was refused by the bound above).
    Ok(Zeroizing::new(
        codes
            .iter()
            .map(|&c| (c & 1) as i64 - (c >> 1) as i64)
            .collect(),
    ))
}

impl SecretKey {
    /// Serialized size of [`SecretKey::write_secret_to`]'s output in bytes.
    pub fn secret_serialized_size(&self) -> u64 {
        HEADER_LEN + secret_key_payload_size(self.coefficients().len()) + DIGEST_LEN
    }

    /// Writes the **secret** key (header and payload) to `w`. The name says what it does: only the
    /// decryptor should ever hold these bytes; never send them to a server.
    pub fn write_secret_to<W: Write>(&self, w: W, ctx: &RlweContext) -> io::Result<u64> {
        let coeffs = self.coefficients();
        write_object(
            w,
            kinds::SECRET_KEY,
            self.fingerprint(),
            secret_key_payload_size(coeffs.len()),
            Integrity::Digest,
            |w| {
                write_secret_distribution(w, ctx.params().secret)?;
                write_ternary(w, coeffs)
            },
        )
    }

    /// The **secret** key as bytes ([`SecretKey::write_secret_to`]), in a buffer wiped when it is dropped.
    pub fn to_secret_bytes(&self, ctx: &RlweContext) -> Zeroizing<Vec<u8>> {
        let mut out = Zeroizing::new(Vec::with_capacity(self.secret_serialized_size() as usize));
        // Writing to a Vec cannot fail, and the capacity is exact, so the buffer never reallocates
        // (which would leave a copy of the key behind).
        let _ = self.write_secret_to(&mut *out, ctx);
        out
    }

    /// Reads a secret key of `ctx` written by [`SecretKey::write_secret_to`], checking the header, that
    /// every coefficient is ternary, that the distribution (and Hamming weight) matches the context and
    /// the digest.
    pub fn read_secret_from<R: Read>(r: R, ctx: &RlweContext) -> Result<Self, DecodeError> {
        let mut r = WireReader::new(r);
        Self::read_secret(&mut r, ctx)
    }

    /// [`SecretKey::read_secret_from`] of exactly `bytes` (digest checked first).
    pub fn from_secret_bytes(bytes: &[u8], ctx: &RlweContext) -> Result<Self, DecodeError> {
        read_exactly(bytes, Integrity::Digest, |r| Self::read_secret(r, ctx))
    }

    fn read_secret<R: Read>(r: &mut WireReader<R>, ctx: &RlweContext) -> Result<Self, DecodeError> {
        let header = Header::read(r)?;
        header.expect(
            kinds::SECRET_KEY,
            Some(ctx.wire_fingerprint_for(header.version)),
        )?;
        let at = r.offset();
        let secret = read_secret_distribution(r, ctx.n(), "secret_key.distribution")?;
        if secret != ctx.params().secret {
            return Err(r.invalid_at(
                at,
                "secret_key.distribution",
                format!(
                    "the key's distribution {secret:?} differs from the context's {:?}",
                    ctx.params().secret
                ),
            ));
        }
        let coeffs = read_ternary(r, ctx.n(), "secret_key.coefficients")?;
        let weight = coeffs.iter().map(|&c| (c & 1) as u32).sum::<u32>();
        let wrong_weight = match secret {
            SecretDistribution::HammingWeight(h) => weight as usize != h,
            SecretDistribution::Ternary => false,
        };
        if wrong_weight {
            return Err(r.invalid(
                "secret_key.coefficients",
                format!("Hamming weight {weight} differs from the declared {secret:?}"),
            ));
        }
        let key = SecretKey::from_coefficients(ctx, &coeffs)
            .map_err(|e| r.invalid("secret_key.coefficients", e.to_string()))?;
        r.check_digest(&header)?;
        Ok(key)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::context::RlweParams;

    #[test]
    fn kinds_stay_in_the_crates_range() {
        for kind in kinds::KINDS {
            assert!(
                rnsfhe_math::wire::kind_codes::CORE.contains(&kind.code()),
                "{kind}"
            );
        }
        assert!(kinds::SECRET_KEY.is_secret());
        assert_eq!(kinds::KINDS.iter().filter(|k| k.is_secret()).count(), 1);
    }
    use crate::encryption::{Decryptor, Encryptor};
    use crate::keys::KeyGenerator;
    use rnsfhe_math::primes::ntt_primes_of_bits;
    use rnsfhe_ring::Coeff;

    fn ctx() -> Arc<RlweContext> {
        let q = ntt_primes_of_bits(50, 2048, 3, &[]).unwrap();
        let p = ntt_primes_of_bits(60, 2048, 2, &[]).unwrap();
        RlweContext::new(RlweParams {
            log_n: 10,
            q_moduli: q,
            p_moduli: p,
            dnum: 2,
            conversion: ConversionMode::Fast,
            secret: SecretDistribution::Ternary,
            sigma: 3.2,
        })
        .unwrap()
    }

    fn rng() -> Csprng {
        Csprng::insecure_from_seed_for_tests([7; 32])
    }

    /// A rotation group of the context's ring (CKKS's generator; any of 3 or 5 modulo 8 would do).
    fn group(ctx: &RlweContext) -> rnsfhe_ring::GaloisGroup {
        rnsfhe_ring::GaloisGroup::new(ctx.n(), 5).unwrap()
    }

    #[test]
    fn keys_round_trip_seeded_and_expanded() {
        let ctx = ctx();
        let mut rng = rng();
        let kg = KeyGenerator::new(&ctx, &mut rng).unwrap();
        let pk = kg.public_key(&mut rng).unwrap();
        let rk = kg.relin_key(&mut rng).unwrap();
        let gk = kg
            .galois_keys_for_steps(&group(&ctx), &[1, -3], true, &mut rng)
            .unwrap();
        for randomness in [PublicRandomness::Seeded, PublicRandomness::Expanded] {
            let bytes = pk.to_bytes_with(randomness);
            assert_eq!(bytes.len() as u64, pk.serialized_size_with(randomness));
            let back = PublicKey::from_bytes(&bytes, &ctx).unwrap();
            assert_eq!((back.b(), back.a()), (pk.b(), pk.a()));
            let bytes = rk.to_bytes_with(randomness);
            let back = RelinKey::from_bytes(&bytes, &ctx).unwrap();
            assert_eq!(back.key().rows(), rk.key().rows());
            let bytes = gk.to_bytes_with(randomness);
            let back = GaloisKeys::from_bytes(&bytes, &ctx).unwrap();
            assert_eq!(back.elements(), gk.elements());
            for e in gk.elements() {
                assert_eq!(back.get(e).unwrap().rows(), gk.get(e).unwrap().rows());
            }
        }
        let seeded = rk.to_bytes().len() as f64;
        let expanded = rk.to_bytes_with(PublicRandomness::Expanded).len() as f64;
        assert!(
            (seeded / expanded - 0.5).abs() < 0.01,
            "{seeded} / {expanded}"
        );
    }

    #[test]
    fn rgsw_round_trips_seeded_and_expanded_and_refuses_bad_rows() {
        let ctx = ctx();
        let mut rng = rng();
        let sk = KeyGenerator::new(&ctx, &mut rng)
            .unwrap()
            .secret_key()
            .clone();
        let rgsw = RgswCiphertext::encrypt_scalar(&ctx, &sk, -1, &mut rng).unwrap();
        for randomness in [PublicRandomness::Seeded, PublicRandomness::Expanded] {
            let mut bytes = Vec::new();
            rgsw.write_wire(&mut WireWriter::new(&mut bytes), randomness)
                .unwrap();
            assert_eq!(bytes.len() as u64, rgsw.wire_size(randomness));
            let back =
                RgswCiphertext::read_wire(&mut WireReader::new(&bytes[..]), &ctx, "k").unwrap();
            for (a, b) in [
                (back.of_message(), rgsw.of_message()),
                (
                    back.of_secret_times_message(),
                    rgsw.of_secret_times_message(),
                ),
            ] {
                assert_eq!(a.rows(), b.rows());
                assert_eq!(a.gadget(), b.gadget());
                assert_eq!(a.seed().is_some(), randomness == PublicRandomness::Seeded);
            }
            // Truncated inside the second gadget ciphertext: the error names it.
            let cut = &bytes[..bytes.len() - 1];
            let err = RgswCiphertext::read_wire(&mut WireReader::new(cut), &ctx, "k").unwrap_err();
            assert!(err.field.starts_with("k.sm."), "{err}");
        }
        let seeded = rgsw.wire_size(PublicRandomness::Seeded) as f64;
        let expanded = rgsw.wire_size(PublicRandomness::Expanded) as f64;
        assert!(
            (seeded / expanded - 0.5).abs() < 0.01,
            "{seeded} / {expanded}"
        );
        let mut bytes = Vec::new();
        rgsw.write_wire(&mut WireWriter::new(&mut bytes), PublicRandomness::Seeded)
            .unwrap();
        bytes[0] = 2;
        let err =
            RgswCiphertext::read_wire(&mut WireReader::new(&bytes[..]), &ctx, "k").unwrap_err();
        assert_eq!(err.field, "k.m.seeded");
    }

    #[test]
    fn secret_key_round_trip_and_ciphertexts() {
        let ctx = ctx();
        let mut rng = rng();
        let kg = KeyGenerator::new(&ctx, &mut rng).unwrap();
        let sk = kg.secret_key();
        let bytes = sk.to_secret_bytes(&ctx);
        assert_eq!(bytes.len() as u64, sk.secret_serialized_size());
        let back = SecretKey::from_secret_bytes(&bytes, &ctx).unwrap();
        assert_eq!(back.coefficients(), sk.coefficients());
        // A secret key is not a public key.
        let err = PublicKey::from_bytes(&bytes, &ctx).unwrap_err();
        assert_eq!(err.field, "header.kind");

        let enc = Encryptor::with_secret_key(&ctx, sk).unwrap();
        let basis = ctx.basis_at(2).unwrap();
        let m = Poly::<Coeff>::from_i64(basis, &vec![5i64; ctx.n()]).unwrap();
        let seeded = enc.encrypt_coeff_seeded(&m, &mut rng).unwrap();
        let full = seeded.expand().unwrap();
        let mut a = Vec::new();
        write_seeded_parts(
            &mut WireWriter::new(&mut a),
            &seeded,
            PublicRandomness::Seeded,
        )
        .unwrap();
        let mut b = Vec::new();
        write_ciphertext_parts(&mut WireWriter::new(&mut b), &full).unwrap();
        assert_eq!(a.len() as u64, ciphertext_parts_size(basis, 2, true));
        assert_eq!(b.len() as u64, ciphertext_parts_size(basis, 2, false));
        for bytes in [&a, &b] {
            let ct = read_ciphertext_parts(&mut WireReader::new(&bytes[..]), &ctx, "ct").unwrap();
            assert_eq!(ct, full);
        }
        let dec = Decryptor::new(&ctx, sk).unwrap();
        let got = dec.decrypt_coeff(&full).unwrap();
        let q0 = basis.moduli()[0].value();
        let x = got.limb(0).unwrap()[0];
        let centered = if x > q0 / 2 {
            x as i64 - q0 as i64
        } else {
            x as i64
        };
        assert!(
            (centered - 5).abs() < 40,
            "decrypted {centered}, expected 5 + small noise"
        );
    }

    #[test]
    fn objects_stream_one_after_another_through_a_file() {
        let ctx = ctx();
        let mut rng = rng();
        let kg = KeyGenerator::new(&ctx, &mut rng).unwrap();
        let pk = kg.public_key(&mut rng).unwrap();
        let gk = kg
            .galois_keys_for_steps(&group(&ctx), &[1], false, &mut rng)
            .unwrap();
        let path = std::env::temp_dir().join(format!("rnsfhe-stream-{}.bin", std::process::id()));
        {
            let mut file = std::io::BufWriter::new(std::fs::File::create(&path).unwrap());
            let a = pk.write_to(&mut file, PublicRandomness::Seeded).unwrap();
            let b = gk.write_to(&mut file, PublicRandomness::Expanded).unwrap();
            assert_eq!(a, pk.serialized_size());
            assert_eq!(b, gk.serialized_size_with(PublicRandomness::Expanded));
        }
        let mut file = std::io::BufReader::new(std::fs::File::open(&path).unwrap());
        let pk2 = PublicKey::read_from(&mut file, &ctx).unwrap();
        let gk2 = GaloisKeys::read_from(&mut file, &ctx).unwrap();
        std::fs::remove_file(&path).unwrap();
        assert_eq!(pk2.b(), pk.b());
        assert_eq!(gk2.get(5).unwrap().rows(), gk.get(5).unwrap().rows());
        // The expanded key has no seed; written again with seeds requested it stays expanded.
        assert!(gk2.get(5).unwrap().seed().is_none());
        assert_eq!(
            gk2.serialized_size(),
            gk.to_bytes_with(PublicRandomness::Expanded).len() as u64
        );
    }
}
