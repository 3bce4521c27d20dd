//! Wire encodings of private decision-tree evaluation (PEGASUS Section V.B): the parameters, the
//! server's evaluation keys, the client's query and the server's answer, so that client and server run
//! in different processes. Header, digest (or MAC) and conventions are those of every rnsfhe object
//! ([`rnsfhe_math::wire`]); the parts are the layers' own encodings (the LWE side of the parameters
//! from [`rnsfhe_pegasus::serialization`], the blind-rotation and switching keys and the LWE ciphertext
//! from [`rnsfhe_lwe::serialization`], the public key and the seeded ciphertext parts from
//! [`rnsfhe_core::serialization`]).
//!
//! Payloads after the 16-byte header (kinds 88 to 92 of [`rnsfhe_math::wire::kind_codes::PEGASUS`]):
//!
//! ```text
//! TreeParams     LWE side of the parameter set (rnsfhe_pegasus::serialization) | u8 allow_insecure
//! TreeServerKey  blind-rotation key (a whole sealed object of rnsfhe-lwe) | LWE switching key n -> n_lwe
//!                | public key of the query ring
//! EncryptedQuery u32 features (1..=n_lwe) | u32 level (1) | u8 parts (2) | u8 seeded (1)
//!                | c_0 over q (coefficient form) | seed[32]
//! EncryptedLabel u32 classes (2..) | f64 step | LWE ciphertext (b, a over q)
//! TreeClient     (secret) TreeParams' payload | the LWE secret's n_lwe coefficients at 2 bits
//! ```
//!
//! Every header carries the fingerprint of the parameters the object belongs to (the parameter set,
//! the query ring, the labels' LWE space), so an object of other parameters is refused before its
//! payload is read. No length is read from the input except the counts that core bounds (Galois
//! lists) and the blind-rotation key's dimension, which must equal the parameters' (its keys are read
//! one at a time as the input supplies them). The query keeps its uniform part as a seed: it is one
//! polynomial, about half the paper's 2 x 1024 x 45 bits.
//!
//! The client's secret serializes only through [`TreeClient::to_secret_bytes`] /
//! [`TreeClient::from_secret_bytes`].

use std::io::{self, Read, Write};
use std::sync::Arc;

use rnsfhe_core::context::fingerprint_words;
use rnsfhe_core::serialization::{
    ciphertext_parts_size, read_ternary, ternary_wire_size, write_ternary, LoadLimits,
};
use rnsfhe_core::{Encryptor, PublicKey, RlweContext, SecretKey, SeededRlweCiphertext};
use rnsfhe_lwe::serialization::LweSpace;
use rnsfhe_lwe::{
    BlindRotationKey, LutEvaluator, LweCiphertext, LweDimension, LweSecretKey, LweSwitchingKey,
    LweSwitchingKeyContext,
};
use rnsfhe_math::sampling::{Seed, SEED_LEN};
use rnsfhe_math::wire::{
    read_exactly, write_object, DecodeError, DecodeErrorKind, Deserializable, Integrity,
    ObjectKind, PublicRandomness, Serializable, WireFingerprint, WireReader, WireWriter,
    DIGEST_LEN, HEADER_LEN,
};
use rnsfhe_pegasus::serialization::{
    check_lwe_params, lwe_params_fingerprint, read_embedded, read_header, read_lwe_params,
    write_lwe_params, EmbeddedWriter, LWE_PARAMS_SIZE,
};
use rnsfhe_ring::{Coeff, Poly};
use zeroize::Zeroizing;

use super::{EncryptedLabel, EncryptedQuery, TreeClient, TreeParams, TreeServerKey};

/// The wire object kinds of private decision trees (codes 88 to 92 of
/// [`rnsfhe_math::wire::kind_codes::PEGASUS`], after the pipeline's 80 to 87).
pub mod kinds {
    use rnsfhe_math::wire::ObjectKind;

    /// The parameters ([`super::TreeParams`]).
    pub const TREE_PARAMETERS: ObjectKind = ObjectKind::new(88, "decision-tree parameters");
    /// The server's evaluation keys ([`super::TreeServerKey`]).
    pub const TREE_SERVER_KEY: ObjectKind = ObjectKind::new(89, "decision-tree server key");
    /// The client's query ([`super::EncryptedQuery`]).
    pub const ENCRYPTED_QUERY: ObjectKind = ObjectKind::new(90, "encrypted decision-tree query");
    /// The server's answer ([`super::EncryptedLabel`]).
    pub const ENCRYPTED_LABEL: ObjectKind = ObjectKind::new(91, "encrypted decision-tree label");
    /// The client's secrets ([`super::TreeClient`], written and read only by explicitly named
    /// functions).
    pub const TREE_CLIENT: ObjectKind = ObjectKind::secret(92, "decision-tree client secret");

    /// Every kind of the decision tree.
    pub const KINDS: [ObjectKind; 5] = [
        TREE_PARAMETERS,
        TREE_SERVER_KEY,
        ENCRYPTED_QUERY,
        ENCRYPTED_LABEL,
        TREE_CLIENT,
    ];
}

/// Domain tags of the fingerprints ("TREE_PAR", "TREE_LBL").
const PARAMS_TAG: u64 = 0x5452_4545_5f50_4152;
const LABEL_TAG: u64 = 0x5452_4545_5f4c_424c;

/// Payload size of [`TreeParams`].
const PARAMS_SIZE: u64 = LWE_PARAMS_SIZE + 1;

/// An error of the reader's own parameters (already validated), at the current offset.
fn params_error<R: Read>(r: &WireReader<R>, field: &str, e: impl std::fmt::Display) -> DecodeError {
    r.invalid(field, e.to_string())
}

// ---- Parameters ---------------------------------------------------------------------------------------

impl TreeParams {
    /// The fingerprint of the parameter set (every field of its LWE side; not the opt-in for insecure
    /// keys, which is the holder's choice, not a parameter): what the parameters' and the server key's
    /// headers carry.
    pub fn fingerprint(&self) -> u64 {
        fingerprint_words([PARAMS_TAG, lwe_params_fingerprint(&self.lwe)])
    }

    /// Reads parameters from exactly `bytes` (digest checked first) under the default [`LoadLimits`].
    ///
    /// Errors: [`DecodeError`] naming the field and offset.
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, DecodeError> {
        Self::from_bytes_with(bytes, &LoadLimits::default())
    }

    /// Reads parameters from exactly `bytes` under `limits`: every field's range, the rings against the
    /// limits, the fingerprint against the header, the security of both key encryptions unless
    /// `limits.allow_insecure` (and the writer's opt-in for insecure keys only under the reader's own),
    /// then the contexts and the query scale are derived once to check that the primes and margins fit.
    ///
    /// Errors: [`DecodeError`] naming the field and offset.
    pub fn from_bytes_with(bytes: &[u8], limits: &LoadLimits) -> Result<Self, DecodeError> {
        Self::from_bytes_sealed(bytes, limits, Integrity::Digest)
    }

    /// [`TreeParams::from_bytes_with`], the digest checked in the mode `integrity` (a MAC).
    ///
    /// Errors: [`DecodeError`] naming the field and offset.
    pub fn from_bytes_sealed(
        bytes: &[u8],
        limits: &LoadLimits,
        integrity: Integrity<'_>,
    ) -> Result<Self, DecodeError> {
        read_exactly(bytes, integrity, |r| {
            let header = read_header(r, kinds::TREE_PARAMETERS, None)?;
            let params = read_params_payload(r, limits)?;
            r.check_digest(&header)?;
            if header.fingerprint != params.fingerprint() {
                return Err(DecodeError::new(
                    "header.fingerprint",
                    8,
                    DecodeErrorKind::Invalid(format!(
                        "the parameters have fingerprint {:#018x}, the header says {:#018x}",
                        params.fingerprint(),
                        header.fingerprint
                    )),
                ));
            }
            // The contexts and the query scale: primes that are not NTT-friendly, margins that do not
            // fit, are refused here rather than at the first key or query.
            params
                .lut_context()
                .and_then(|_| params.query_context())
                .and_then(|_| params.query_scale())
                .map_err(|e| {
                    DecodeError::new(
                        "parameters",
                        HEADER_LEN,
                        DecodeErrorKind::Invalid(format!("rejected: {e}")),
                    )
                })?;
            Ok(params)
        })
    }
}

/// The payload of [`TreeParams`] (also the head of the client's secret), checked against `limits`.
fn read_params_payload<R: Read>(
    r: &mut WireReader<R>,
    limits: &LoadLimits,
) -> Result<TreeParams, DecodeError> {
    let lwe = read_lwe_params(r, "tree.lwe")?;
    let at = r.offset();
    let allow_insecure = r.flag("tree.allow_insecure")?;
    check_lwe_params(&lwe, limits, "tree.lwe")?;
    if allow_insecure && !limits.allow_insecure {
        return Err(r.invalid_at(
            at,
            "tree.allow_insecure",
            "refused: the parameters opt in to keys below 128 bits, and this reader does not allow \
             insecure parameters (LoadLimits::allow_insecure)",
        ));
    }
    Ok(TreeParams {
        lwe,
        allow_insecure,
    })
}

fn write_params_payload<W: Write>(w: &mut WireWriter<W>, p: &TreeParams) -> io::Result<()> {
    write_lwe_params(w, &p.lwe)?;
    w.u8(p.allow_insecure as u8)
}

impl Serializable for TreeParams {
    const KIND: ObjectKind = kinds::TREE_PARAMETERS;

    fn wire_fingerprint(&self) -> u64 {
        self.fingerprint()
    }

    fn payload_size(&self, _: PublicRandomness) -> u64 {
        PARAMS_SIZE
    }

    fn write_payload<W: Write>(
        &self,
        w: &mut WireWriter<W>,
        _: PublicRandomness,
    ) -> io::Result<()> {
        write_params_payload(w, self)
    }
}

impl WireFingerprint for TreeParams {
    fn wire_fingerprint_for(&self, _version: u16) -> u64 {
        // Objects before format version 3 are refused before the fingerprint is compared.
        self.fingerprint()
    }
}

// ---- Server key ---------------------------------------------------------------------------------------

impl TreeServerKey {
    /// The ring of the queries (degree `n_lwe` over `q`): what [`EncryptedQuery`]s load into.
    pub fn query_context(&self) -> &Arc<RlweContext> {
        &self.query_ctx
    }

    /// The public key of the query ring (the server's re-randomization of the answer).
    pub fn public_key(&self) -> &PublicKey {
        &self.public
    }
}

impl Serializable for TreeServerKey {
    const KIND: ObjectKind = kinds::TREE_SERVER_KEY;

    fn wire_fingerprint(&self) -> u64 {
        self.params.fingerprint()
    }

    fn payload_size(&self, randomness: PublicRandomness) -> u64 {
        self.lut.key().serialized_size_with(randomness)
            + self.back.payload_size(randomness)
            + self.public.payload_size(randomness)
    }

    fn write_payload<W: Write>(
        &self,
        w: &mut WireWriter<W>,
        randomness: PublicRandomness,
    ) -> io::Result<()> {
        self.lut
            .key()
            .write_to(EmbeddedWriter::new(w), randomness)?;
        self.back.write_payload(w, randomness)?;
        self.public.write_payload(w, randomness)
    }
}

/// Server keys load into the parameters they were made for (the header's fingerprint says so); the
/// blind-rotation key must be of the set's algorithm and dimension, the switching key and public key
/// are read with the rows and bases of the parameters.
impl Deserializable<TreeParams> for TreeServerKey {
    fn read_payload<R: Read>(
        r: &mut WireReader<R>,
        params: &TreeParams,
    ) -> Result<Self, DecodeError> {
        let lut_ctx = params
            .lut_context()
            .map_err(|e| params_error(r, "tree_server_key", e))?;
        let query_ctx = params
            .query_context()
            .map_err(|e| params_error(r, "tree_server_key", e))?;
        let n_lwe = LweDimension::new(params.lwe.lwe_dimension)
            .map_err(|e| params_error(r, "tree_server_key", e))?;
        let at = r.offset();
        let blind = read_embedded(r, "tree_server_key.blind_rotation", |e| {
            BlindRotationKey::read_from(e, &lut_ctx)
        })?;
        if blind.algorithm() != params.lwe.blind_rotation || blind.lwe_dimension() != n_lwe {
            return Err(r.invalid_at(
                at,
                "tree_server_key.blind_rotation",
                format!(
                    "a {:?} key of dimension {}; the parameters have {:?} keys of dimension {n_lwe}",
                    blind.algorithm(),
                    blind.lwe_dimension(),
                    params.lwe.blind_rotation
                ),
            ));
        }
        let lut_n =
            LweDimension::new(lut_ctx.n()).map_err(|e| params_error(r, "tree_server_key", e))?;
        let switching = LweSwitchingKeyContext::new(lut_n, n_lwe, params.lwe.key_switch)
            .map_err(|e| params_error(r, "tree_server_key.back", e))?;
        let back = LweSwitchingKey::read_payload(r, &switching).map_err(|e| DecodeError {
            field: format!("tree_server_key.back.{}", e.field),
            ..e
        })?;
        let public = PublicKey::read_payload(r, &query_ctx).map_err(|e| DecodeError {
            field: format!("tree_server_key.public_key.{}", e.field),
            ..e
        })?;
        Ok(TreeServerKey {
            params: *params,
            lut_ctx,
            query_ctx,
            lut: LutEvaluator::new(blind),
            back,
            public,
        })
    }

    fn read_object<R: Read>(
        r: &mut WireReader<R>,
        params: &TreeParams,
    ) -> Result<Self, DecodeError> {
        let header = read_header(r, Self::KIND, Some(params.fingerprint()))?;
        let key = Self::read_payload(r, params)?;
        r.check_digest(&header)?;
        Ok(key)
    }
}

// ---- Query --------------------------------------------------------------------------------------------

impl EncryptedQuery {
    /// The seeded ciphertext (its `c_0` and the seed of its uniform part).
    pub fn ciphertext(&self) -> &SeededRlweCiphertext<Coeff> {
        &self.ct
    }
}

impl Serializable for EncryptedQuery {
    const KIND: ObjectKind = kinds::ENCRYPTED_QUERY;

    fn wire_fingerprint(&self) -> u64 {
        self.fingerprint
    }

    fn payload_size(&self, _: PublicRandomness) -> u64 {
        // Always seeded: the query exists only to be sent.
        4 + ciphertext_parts_size(self.ct.c0().basis(), 2, true)
    }

    fn write_payload<W: Write>(
        &self,
        w: &mut WireWriter<W>,
        _: PublicRandomness,
    ) -> io::Result<()> {
        w.u32(self.features as u32)?;
        // The parts layout of core (level, part count, seeded flag), c_0, then the seed.
        w.u32(self.ct.level() as u32)?;
        w.u8(2)?;
        w.u8(1)?;
        self.ct.c0().write_wire(w)?;
        w.bytes(self.ct.seed())
    }
}

/// Queries load into the query ring of the server's key ([`TreeServerKey::query_context`]); the header's
/// fingerprint is the ring's. The feature count must be in `1..=n_lwe`; the ciphertext is one level,
/// two parts, seeded; `c_0`'s residues below `q`.
impl Deserializable<RlweContext> for EncryptedQuery {
    fn read_payload<R: Read>(
        r: &mut WireReader<R>,
        ctx: &RlweContext,
    ) -> Result<Self, DecodeError> {
        let features = r.u32_in(
            "query.features",
            1..=ctx.n() as u32,
            "a feature count from 1 to n_lwe",
        )? as usize;
        r.u32_in(
            "query.level",
            1..=1,
            "level 1 (the query ring has one prime)",
        )?;
        let at = r.offset();
        let parts = r.u8("query.part_count")?;
        if parts != 2 {
            return Err(r.out_of_range(at, "query.part_count", parts as u64, "2 parts"));
        }
        let at = r.offset();
        if !r.flag("query.seeded")? {
            return Err(r.invalid_at(
                at,
                "query.seeded",
                "a query travels seeded (its uniform part as a 32-byte seed)",
            ));
        }
        let basis = ctx.basis_at(1).map_err(|e| params_error(r, "query", e))?;
        let c0 = Poly::<Coeff>::read_wire(r, basis, "query.c0")?;
        let seed: Seed = r.array("query.seed")?;
        debug_assert_eq!(seed.len(), SEED_LEN);
        Ok(EncryptedQuery {
            ct: SeededRlweCiphertext::from_parts(c0, seed),
            features,
            fingerprint: ctx.fingerprint(),
        })
    }

    fn read_object<R: Read>(r: &mut WireReader<R>, ctx: &RlweContext) -> Result<Self, DecodeError> {
        let header = read_header(r, Self::KIND, Some(ctx.fingerprint()))?;
        let query = Self::read_payload(r, ctx)?;
        r.check_digest(&header)?;
        Ok(query)
    }
}

// ---- Label --------------------------------------------------------------------------------------------

/// The fingerprint of the labels of the LWE space `space` (dimension `n_lwe`, modulus `q`).
fn label_fingerprint(space: &LweSpace) -> u64 {
    fingerprint_words([LABEL_TAG, space.fingerprint()])
}

impl TreeClient {
    /// The LWE space of this client's labels (dimension `n_lwe`, modulus `q`): what
    /// [`EncryptedLabel`]s load into.
    ///
    /// Errors: [`crate::Error::Lwe`] for a modulus outside `[2, 2^62)` (never for a client's own,
    /// checked when its query ring was built).
    pub fn label_space(&self) -> crate::Result<LweSpace> {
        Ok(LweSpace::new(self.lwe.dimension(), self.params.modulus())?)
    }
}

impl Serializable for EncryptedLabel {
    const KIND: ObjectKind = kinds::ENCRYPTED_LABEL;

    fn wire_fingerprint(&self) -> u64 {
        label_fingerprint(&LweSpace::of(&self.ct))
    }

    fn payload_size(&self, randomness: PublicRandomness) -> u64 {
        4 + 8 + self.ct.payload_size(randomness)
    }

    fn write_payload<W: Write>(
        &self,
        w: &mut WireWriter<W>,
        randomness: PublicRandomness,
    ) -> io::Result<()> {
        w.u32(self.classes as u32)?;
        w.f64(self.step)?;
        self.ct.write_payload(w, randomness)
    }
}

/// Labels load into the client's LWE space ([`TreeClient::label_space`]): at least two classes, a
/// finite positive step with `classes x step <= q` (the labels' encoding), the ciphertext's residues
/// below `q`.
impl Deserializable<LweSpace> for EncryptedLabel {
    fn read_payload<R: Read>(r: &mut WireReader<R>, space: &LweSpace) -> Result<Self, DecodeError> {
        let q = space.modulus().value();
        let classes = r.u32_in(
            "label.classes",
            2..=q.min(u32::MAX as u64) as u32,
            "at least 2 classes, at most q",
        )? as usize;
        let at = r.offset();
        let step = r.f64("label.step")?;
        if !(step.is_finite() && step >= 1.0 && step * classes as f64 <= q as f64) {
            return Err(r.invalid_at(
                at,
                "label.step",
                format!(
                    "{step} is not a label step of {classes} classes modulo q = {q} (finite, at \
                     least 1, classes x step <= q)"
                ),
            ));
        }
        let ct = LweCiphertext::read_payload(r, space)?;
        Ok(EncryptedLabel { ct, classes, step })
    }

    fn read_object<R: Read>(r: &mut WireReader<R>, space: &LweSpace) -> Result<Self, DecodeError> {
        let header = read_header(r, Self::KIND, Some(label_fingerprint(space)))?;
        let label = Self::read_payload(r, space)?;
        r.check_digest(&header)?;
        Ok(label)
    }
}

// ---- Client secret ------------------------------------------------------------------------------------

impl TreeClient {
    /// Serialized size of [`TreeClient::to_secret_bytes`]'s output.
    pub fn secret_serialized_size(&self) -> u64 {
        HEADER_LEN + PARAMS_SIZE + ternary_wire_size(self.lwe.dimension().get()) + DIGEST_LEN
    }

    /// The client's **secret** (its parameters and LWE secret) as bytes, in a buffer wiped when it is
    /// dropped: for a client that stores its keys between sessions. Never send these bytes to a
    /// server (its header's kind, [`kinds::TREE_CLIENT`], is marked secret).
    pub fn to_secret_bytes(&self) -> Zeroizing<Vec<u8>> {
        let mut out = Zeroizing::new(Vec::with_capacity(self.secret_serialized_size() as usize));
        // Writing to a Vec cannot fail, and the capacity is exact, so the buffer never reallocates
        // (which would leave a copy of the secret behind).
        let _ = write_object(
            &mut *out,
            kinds::TREE_CLIENT,
            self.params.fingerprint(),
            PARAMS_SIZE + ternary_wire_size(self.lwe.dimension().get()),
            Integrity::Digest,
            |w| {
                write_params_payload(w, &self.params)?;
                write_ternary(w, self.lwe.coefficients())
            },
        );
        out
    }

    /// A client from [`TreeClient::to_secret_bytes`]'s output (digest checked first): its parameters
    /// under `limits` as [`TreeParams::from_bytes_with`], the secret's coefficients ternary; the query
    /// ring, encryptor and scale are derived again.
    ///
    /// Errors: [`DecodeError`] naming the field and offset.
    pub fn from_secret_bytes(bytes: &[u8], limits: &LoadLimits) -> Result<Self, DecodeError> {
        read_exactly(bytes, Integrity::Digest, |r| {
            let header = read_header(r, kinds::TREE_CLIENT, None)?;
            let params = read_params_payload(r, limits)?;
            if header.fingerprint != params.fingerprint() {
                return Err(DecodeError::new(
                    "header.fingerprint",
                    8,
                    DecodeErrorKind::Invalid("not the fingerprint of the parameters".into()),
                ));
            }
            let coeffs = read_ternary(r, params.lwe.lwe_dimension, "tree_client.secret")?;
            r.check_digest(&header)?;
            let at = HEADER_LEN;
            let invalid = |e: &dyn std::fmt::Display| {
                DecodeError::new(
                    "tree_client",
                    at,
                    DecodeErrorKind::Invalid(format!("rejected: {e}")),
                )
            };
            let lwe = LweSecretKey::from_coefficients(&coeffs).map_err(|e| invalid(&e))?;
            let query_ctx = params.query_context().map_err(|e| invalid(&e))?;
            let query_sk = SecretKey::from_coefficients(&query_ctx, lwe.coefficients())
                .map_err(|e| invalid(&e))?;
            let encryptor =
                Encryptor::with_secret_key(&query_ctx, &query_sk).map_err(|e| invalid(&e))?;
            let query_scale = params.query_scale().map_err(|e| invalid(&e))?;
            Ok(TreeClient {
                params,
                query_ctx,
                lwe,
                encryptor,
                query_scale,
            })
        })
    }
}
