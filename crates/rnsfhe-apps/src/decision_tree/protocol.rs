//! The encrypted side of private decision-tree evaluation (PEGASUS Section V.B): keys, the client's
//! query and label, and the server's evaluation of its secret tree.

use std::sync::Arc;

use rayon::prelude::*;
use rnsfhe_ckks::Csprng;
use rnsfhe_core::{
    Encryptor, KeyGenerator, PublicKey, RlweContext, RlweParams, SecretKey, SeededRlweCiphertext,
};
use rnsfhe_lwe::{
    extract, extract_many, BlindRotationKey, LookupTable, LutEvaluator, LweCiphertext,
    LweDimension, LweSecretDistribution, LweSecretKey, LweSwitchingKey, PegasusParams,
    PegasusPreset,
};
use rnsfhe_math::sampling::WideGaussian;
use rnsfhe_math::Modulus;
use rnsfhe_ring::{Coeff, Poly};

use super::model::{DecisionTree, FeatureScaling};
use crate::error::{Error, Result};

/// The comparison tables read `g(x) - g(t)` with the mapped feature `g(x)` in `[0, 1]` and the mapped
/// threshold clamped to `[-1/4, 5/4]` (a threshold outside the features' range still sends every input
/// the same way as in the clear): inputs in `[-5/4, 5/4]`.
const COMPARISON_DOMAIN: f64 = 1.25;
const THRESHOLD_MIN: f64 = -0.25;
const THRESHOLD_MAX: f64 = 1.25;

/// Standard deviations of the whole returned error that fit in half a label step: the flooding noise is
/// the margin over this, so a label is decoded wrong with probability about `erfc(10 / sqrt 2) ~ 2^-76`.
pub const FLOOD_SIGMAS: f64 = 10.0;

/// The parameters of private decision-tree evaluation: the LWE side of a PEGASUS parameter set (PEGASUS
/// Table IV: the query ring and switching keys of degree `n_lwe` over `q_ks`, the look-up-table ring of
/// degree `n` over `q_0`), and the explicit opt-in for sets the estimator puts below 128 bits.
///
/// No CKKS key is needed: the client encrypts its features straight into the coefficients of one RLWE
/// ciphertext of degree `n_lwe` under the LWE secret, which the server extracts to the tables' inputs.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TreeParams {
    /// The LWE-side parameters.
    pub lwe: PegasusParams,
    /// Allow keys below 128 bits (PEGASUS Table IV's switching key, the test set).
    pub allow_insecure: bool,
}

impl TreeParams {
    /// The LWE side of `preset`, without the opt-in for insecure keys.
    ///
    /// Errors: [`Error::Lwe`] if the preset's primes cannot be found (they are for every preset).
    pub fn new(preset: PegasusPreset) -> Result<Self> {
        Ok(Self {
            lwe: preset.params()?,
            allow_insecure: false,
        })
    }

    /// The same parameters with the explicit opt-in for keys below 128 bits.
    pub fn allowing_insecure(self) -> Self {
        Self {
            allow_insecure: true,
            ..self
        }
    }

    /// The LWE dimension `n_lwe`: the most features one query packs.
    pub fn max_features(&self) -> usize {
        self.lwe.lwe_dimension
    }

    /// The modulus `q` of the query and of the tables' inputs (`q_ks`: `q_0` for Table IV).
    pub fn modulus(&self) -> u64 {
        self.lwe.key_switch.modulus
    }

    /// The look-up-table ring's context.
    ///
    /// Errors: [`Error::Lwe`] for a ring below 128 bits without the opt-in.
    pub fn lut_context(&self) -> Result<Arc<RlweContext>> {
        Ok(if self.allow_insecure {
            self.lwe.lut.context_allowing_insecure()?
        } else {
            self.lwe.lut.context()?
        })
    }

    /// The ring of the query: degree `n_lwe` over `q_ks` (the special prime of the look-up-table ring,
    /// NTT-friendly for every degree of the set, completes it; the query never switches keys), errors of
    /// width `sigma_ks`, the LWE key's distribution. Its samples are those of the LWE switching key (same
    /// secret, degree, modulus and width), whose generation checks their security.
    ///
    /// Errors: [`Error::Lwe`] for a context the core layer refuses.
    pub fn query_context(&self) -> Result<Arc<RlweContext>> {
        let secret = match self.lwe.lwe_secret {
            // Only a label of the context: the query's secret is the LWE key's coefficients.
            LweSecretDistribution::TernaryWeight(h) | LweSecretDistribution::BinaryWeight(h) => {
                rnsfhe_core::SecretDistribution::HammingWeight(h)
            }
            _ => rnsfhe_core::SecretDistribution::Ternary,
        };
        RlweContext::new(RlweParams {
            log_n: self.lwe.lwe_dimension.trailing_zeros(),
            q_moduli: vec![self.modulus()],
            p_moduli: vec![self.lwe.lut.special],
            dnum: 1,
            conversion: rnsfhe_core::ConversionMode::ExactFloat,
            secret,
            sigma: self.lwe.key_switch.sigma,
        })
        .map_err(core_error)
    }

    /// The scale `Delta_q` of the mapped features in the query: the largest that keeps the comparison
    /// tables' inputs `g(x) - g(t)` in `[-5/4, 5/4]` within `q / 4` with the margin of PEGASUS Eq. (3)
    /// (six standard deviations of the query error `sigma_ks` and of the switch to `2n`).
    ///
    /// Errors: [`Error::Lwe`] when the margin does not fit.
    pub fn query_scale(&self) -> Result<f64> {
        let ctx = self.lut_context()?;
        input_scale(
            &ctx,
            self.modulus(),
            COMPARISON_DOMAIN,
            self.lwe.key_switch.sigma,
            self.key_norm_sq(),
        )
    }

    fn key_norm_sq(&self) -> f64 {
        self.lwe.lwe_secret.expected_norm_sq(self.lwe.lwe_dimension)
    }
}

/// An error of the core layer (contexts, keys, encryption), passed through the LWE layer's error.
fn core_error(e: rnsfhe_core::Error) -> Error {
    Error::Lwe(rnsfhe_lwe::LweError::Core(e))
}

/// An error of the math layer (moduli, samplers), passed through the LWE layer's error.
fn math_error(e: rnsfhe_math::Error) -> Error {
    Error::Lwe(rnsfhe_lwe::LweError::Math(e))
}

/// The largest input scale for inputs modulo `q` bounded by `bound` with an error of width `sigma` (in
/// units of `q`): [`LookupTable::max_input_scale`], which reasons modulo `q_0`, carried to `q` (every
/// term scales by `q / q_0`).
fn input_scale(ctx: &RlweContext, q: u64, bound: f64, sigma: f64, key_norm_sq: f64) -> Result<f64> {
    let q0 = ctx.chain().moduli()[0].value() as f64;
    let ratio = q as f64 / q0;
    Ok(LookupTable::max_input_scale(ctx, bound, sigma / ratio, key_norm_sq, false)? * ratio)
}

/// The client's keys: the LWE secret (which is also the query ring's secret) and the look-up-table
/// ring's secret. It encrypts queries and decrypts labels; everything the server needs is in the
/// [`TreeServerKey`] it makes.
#[derive(Debug)]
pub struct TreeClient {
    params: TreeParams,
    query_ctx: Arc<RlweContext>,
    lwe: LweSecretKey,
    encryptor: Encryptor,
    query_scale: f64,
}

/// The server's evaluation keys (public material, made by the client): the blind-rotation key (PEGASUS
/// Fig. 2), the switching key from the look-up-table ring's secret back to the LWE secret (Fig. 9), and
/// a public key of the query ring, with which the server re-randomizes the returned ciphertext.
#[derive(Debug)]
pub struct TreeServerKey {
    params: TreeParams,
    lut_ctx: Arc<RlweContext>,
    query_ctx: Arc<RlweContext>,
    lut: LutEvaluator,
    back: LweSwitchingKey,
    public: PublicKey,
}

impl TreeClient {
    /// New secrets for `params` and the server's keys for them.
    ///
    /// Errors: [`Error::Lwe`] for keys below 128 bits without [`TreeParams::allow_insecure`]; key
    /// generation errors.
    pub fn generate(params: TreeParams, rng: &mut Csprng) -> Result<(Self, TreeServerKey)> {
        let lwe_params = &params.lwe;
        let lut_ctx = params.lut_context()?;
        let query_ctx = params.query_context()?;
        let dimension = LweDimension::new(lwe_params.lwe_dimension)?;
        let lwe = LweSecretKey::generate(dimension, lwe_params.lwe_secret, rng)?;
        let ring_sk = SecretKey::generate(&lut_ctx, rng).map_err(core_error)?;
        let lut_ring = LweSecretKey::from_ring_key(&ring_sk)?;
        let blind = BlindRotationKey::generate_with(
            lwe_params.blind_rotation,
            &lut_ctx,
            &ring_sk,
            &lwe,
            rng,
        )?;
        let back = if params.allow_insecure {
            LweSwitchingKey::generate_allowing_insecure(
                &lut_ring,
                &lwe,
                lwe_params.key_switch,
                rng,
            )?
        } else {
            LweSwitchingKey::generate(&lut_ring, &lwe, lwe_params.key_switch, rng)?
        };
        let query_sk =
            SecretKey::from_coefficients(&query_ctx, lwe.coefficients()).map_err(core_error)?;
        let public = KeyGenerator::from_secret_key(&query_ctx, query_sk.clone())
            .and_then(|kg| kg.public_key(rng))
            .map_err(core_error)?;
        let encryptor = Encryptor::with_secret_key(&query_ctx, &query_sk).map_err(core_error)?;
        let query_scale = params.query_scale()?;
        let client = Self {
            params,
            query_ctx: Arc::clone(&query_ctx),
            lwe,
            encryptor,
            query_scale,
        };
        let key = TreeServerKey {
            params,
            lut_ctx,
            query_ctx,
            lut: LutEvaluator::new(blind),
            back,
            public,
        };
        Ok((client, key))
    }

    /// The parameters.
    pub fn params(&self) -> &TreeParams {
        &self.params
    }

    /// The LWE secret (tests, noise measurements).
    pub fn lwe_secret(&self) -> &LweSecretKey {
        &self.lwe
    }

    /// The query of the raw features `x`: mapped by the server's public `scaling` to `[0, 1]`, then
    /// [`TreeClient::encrypt_normalized`].
    ///
    /// Errors: as [`FeatureScaling::normalize`] and [`TreeClient::encrypt_normalized`].
    pub fn encrypt(
        &self,
        scaling: &FeatureScaling,
        x: &[f64],
        rng: &mut Csprng,
    ) -> Result<EncryptedQuery> {
        self.encrypt_normalized(&scaling.normalize(x)?, rng)
    }

    /// One RLWE ciphertext of degree `n_lwe` whose coefficient `j` is `Delta_q g_j` for the mapped
    /// features `g` (each in `[0, 1]`), under the LWE secret, its uniform part kept as a seed (PEGASUS
    /// Section V.B: "sends only one RLWE ciphertext").
    ///
    /// Errors: [`Error::InvalidArgument`] for no features, more than `n_lwe`, or a value outside
    /// `[0, 1]` or not finite.
    pub fn encrypt_normalized(&self, g: &[f64], rng: &mut Csprng) -> Result<EncryptedQuery> {
        let n = self.params.max_features();
        if g.is_empty() || g.len() > n {
            return Err(Error::TreeTooLarge {
                what: "feature count d",
                value: g.len(),
                limit: n,
                reason:
                    "one query packs at most n_lwe features (one per coefficient), and at least 1"
                        .into(),
            });
        }
        if let Some(j) = g.iter().position(|v| !(0.0..=1.0).contains(v)) {
            return Err(Error::InvalidArgument {
                what: "mapped feature",
                reason: format!(
                    "feature {j} is {} after scaling; mapped features lie in [0, 1] \
                     (FeatureScaling::normalize)",
                    g[j]
                ),
            });
        }
        let mut coeffs = vec![0i64; n];
        for (c, &v) in coeffs.iter_mut().zip(g) {
            *c = (v * self.query_scale).round() as i64;
        }
        let basis = self.query_ctx.chain();
        let m = Poly::<Coeff>::from_i64(basis, &coeffs).map_err(|e| Error::Lwe(e.into()))?;
        let ct = self
            .encryptor
            .encrypt_coeff_seeded_in::<Coeff>(&m, rng)
            .map_err(core_error)?;
        Ok(EncryptedQuery {
            ct,
            features: g.len(),
            fingerprint: self.query_ctx.fingerprint(),
        })
    }

    /// The label of an [`EncryptedLabel`]: the phase over the label step, rounded, modulo `C`.
    ///
    /// Errors: [`Error::InvalidArgument`] for a ciphertext of another dimension or modulus.
    pub fn decrypt(&self, label: &EncryptedLabel) -> Result<usize> {
        let phase = self.check_label(label)?;
        let c = label.classes as i64;
        Ok(((phase as f64 / label.step).round() as i64).rem_euclid(c) as usize)
    }

    /// The error of a returned label: the phase minus `label * step` (tests of the sanitization).
    ///
    /// Errors: as [`TreeClient::decrypt`].
    pub fn label_error(&self, label: &EncryptedLabel) -> Result<f64> {
        let phase = self.check_label(label)? as f64;
        let l = (phase / label.step).round();
        Ok(phase - l * label.step)
    }

    fn check_label(&self, label: &EncryptedLabel) -> Result<i64> {
        let ct = &label.ct;
        if ct.dimension() != self.lwe.dimension() || ct.modulus().value() != self.params.modulus() {
            return Err(Error::InvalidArgument {
                what: "encrypted label",
                reason: format!(
                    "dimension {} modulo {}; this client's labels have dimension {} modulo {}",
                    ct.dimension(),
                    ct.modulus().value(),
                    self.lwe.dimension(),
                    self.params.modulus()
                ),
            });
        }
        Ok(self.lwe.decrypt(ct)?)
    }
}

impl TreeServerKey {
    /// The parameters.
    pub fn params(&self) -> &TreeParams {
        &self.params
    }

    /// The look-up-table evaluator (blind-rotation key).
    pub fn lut_evaluator(&self) -> &LutEvaluator {
        &self.lut
    }

    /// The switching key back to the LWE secret.
    pub fn switching_key(&self) -> &LweSwitchingKey {
        &self.back
    }
}

/// The client's query: one seeded RLWE ciphertext (its `c_0` and the seed of its uniform part) and the
/// number of features it carries.
#[derive(Clone, Debug)]
pub struct EncryptedQuery {
    ct: SeededRlweCiphertext<Coeff>,
    features: usize,
    fingerprint: u64,
}

impl EncryptedQuery {
    /// The number of features.
    pub fn features(&self) -> usize {
        self.features
    }

    /// Bytes on the wire: the length of its serialized form ([`serialization`]: header, feature count,
    /// the parts layout of `rnsfhe_core::serialization::write_seeded_parts` with `c_0` packed at the
    /// modulus' width and the 32-byte seed, digest): what the client sends.
    pub fn wire_size(&self) -> u64 {
        use rnsfhe_math::wire::Serializable;
        self.serialized_size()
    }
}

/// The server's answer: one LWE ciphertext of dimension `n_lwe` modulo `q` whose phase is
/// `label * step` plus an error, and the public encoding (`C`, `step`).
#[derive(Clone, Debug)]
pub struct EncryptedLabel {
    ct: LweCiphertext,
    classes: usize,
    step: f64,
}

impl EncryptedLabel {
    /// The ciphertext.
    pub fn ciphertext(&self) -> &LweCiphertext {
        &self.ct
    }

    /// The class count `C`.
    pub fn classes(&self) -> usize {
        self.classes
    }

    /// The phase step between consecutive labels, `floor(q_0 / C) q / q_0`.
    pub fn step(&self) -> f64 {
        self.step
    }

    /// Bytes on the wire: the length of its serialized form ([`serialization`]: header, class count,
    /// step, the LWE ciphertext's `b` and `a` packed at the modulus' width, digest): what the server
    /// sends.
    pub fn wire_size(&self) -> u64 {
        use rnsfhe_math::wire::Serializable;
        self.serialized_size()
    }
}

// The wire format of the parameters, keys, query and label: a child module, so that it builds them
// from their validated parts without widening their fields.
#[path = "serialization.rs"]
pub mod serialization;

/// The noise budget of the returned label (see [`TreeServer::flooding`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Flooding {
    /// Half a label step: the largest error that still decodes.
    pub margin: f64,
    /// Standard deviation of the error before flooding (final table, switch back, re-randomization).
    pub sigma_before: f64,
    /// Standard deviation of the added Gaussian.
    pub sigma_flood: f64,
}

/// The tables of one tree and their scales.
#[derive(Debug)]
struct Stages {
    /// `Delta_q` and `Delta_v` at `q`.
    query_scale: f64,
    path_scale: f64,
    comparison: LookupTable,
    /// One predicate table per label `l`: `c_l I(v <= 1/2)`.
    leaf: Vec<LookupTable>,
    last: LookupTable,
}

/// The server's evaluation of its secret tree on encrypted queries (PEGASUS Section V.B): per internal
/// node one comparison table giving the edge bit `z = I(g(x) > g(t))` (0 on the left edge, `1 - z` on
/// the right one), per leaf the path sum `v_k` of its edge bits (zero exactly on the path the query
/// takes) and one table `T_k(v) = c_k I(v <= 1/2)`, the sum of the leaves' outputs (the label value
/// `c_l = l - (C - 1)/2`, centered in the tables' domain), then **sanitization**: a last table that
/// re-encodes the label at `floor(q_0 / C)` per step (its output error does not depend on the tree: not
/// on the leaf count, not on which path sums were near zero), the switch back to `n_lwe`, a fresh
/// encryption of zero under the client's public key (the mask becomes pseudorandom, independent of the
/// tree), and Gaussian noise flooding the rest ([`TreeServer::flooding`]). `2N + 2` tables for `N`
/// internal nodes, each stage one parallel batch (rayon, keys shared).
///
/// PEGASUS's `T_k(x) = C_k I(x <= 0)` reads an exact 0; with the tables' errors the threshold is 1/2.
#[derive(Debug)]
pub struct TreeServer {
    key: Arc<TreeServerKey>,
    tree: DecisionTree,
    scaling: FeatureScaling,
    /// The mapped thresholds `round(Delta_q g(t))` of the internal nodes, by node index.
    thresholds: Vec<i64>,
    stages: Stages,
    q: Modulus,
    q0: Modulus,
    flood: WideGaussian,
    flooding: Flooding,
    rerandomize: Encryptor,
}

impl TreeServer {
    /// The server for `tree` with the public feature map `scaling` and the client's `key`. Checks that
    /// the parameters can evaluate the tree and fixes the tables' scales for it.
    ///
    /// Errors: [`Error::Shape`] for a scaling of another feature count than the tree's;
    /// [`Error::TreeTooLarge`] for more features than one query packs (`n_lwe`), a tree deeper than the
    /// path-sum range the leaf tables resolve, more leaves or classes than the last table resolves;
    /// [`Error::Lwe`] for tables the ring cannot hold.
    pub fn new(
        tree: DecisionTree,
        scaling: FeatureScaling,
        key: Arc<TreeServerKey>,
    ) -> Result<Self> {
        let params = key.params;
        let d = tree.features();
        if scaling.features() != d {
            return Err(Error::Shape {
                what: "feature scaling (features)".into(),
                expected: d,
                found: scaling.features(),
            });
        }
        if d > params.max_features() {
            return Err(Error::TreeTooLarge {
                what: "feature count d",
                value: d,
                limit: params.max_features(),
                reason: "one query packs at most n_lwe features".into(),
            });
        }
        let stages = Self::stages(&key, tree.depth(), tree.leaves(), tree.classes())?;
        let thresholds = tree
            .nodes()
            .iter()
            .map(|node| match *node {
                super::Node::Internal {
                    feature, threshold, ..
                } => {
                    // The map clamps to [0, 1], and so does the client's: a threshold below the
                    // range sends every query right, one at or above its end every query left.
                    let knots = &scaling.knots()[feature];
                    let g = if threshold < knots[0] {
                        THRESHOLD_MIN
                    } else if threshold >= knots[knots.len() - 1] {
                        THRESHOLD_MAX
                    } else {
                        scaling.map(feature, threshold)
                    };
                    (g * stages.query_scale).round() as i64
                }
                super::Node::Leaf { .. } => 0,
            })
            .collect();
        let q = Modulus::new(params.modulus()).map_err(math_error)?;
        let q0 = key.lut_ctx.chain().moduli()[0];
        let flooding = Self::budget(&key, stages.last.output_scale(), q.value(), q0.value())?;
        let flood = WideGaussian::new(flooding.sigma_flood).map_err(math_error)?;
        let rerandomize =
            Encryptor::with_public_key(&key.query_ctx, &key.public).map_err(core_error)?;
        Ok(Self {
            key,
            tree,
            scaling,
            thresholds,
            stages,
            q,
            q0,
            flood,
            flooding,
            rerandomize,
        })
    }

    /// The tree.
    pub fn tree(&self) -> &DecisionTree {
        &self.tree
    }

    /// The public feature map.
    pub fn scaling(&self) -> &FeatureScaling {
        &self.scaling
    }

    /// The keys.
    pub fn key(&self) -> &Arc<TreeServerKey> {
        &self.key
    }

    /// The number of look-up tables one evaluation runs: `N + L + 1` (`2N + 2` for a full binary tree).
    pub fn tables_per_query(&self) -> usize {
        self.tree.internal_nodes() + self.tree.leaves() + 1
    }

    /// The comparison resolution, in mapped feature units: a feature within this of a mapped threshold
    /// may take either branch (the bound of PEGASUS Eq. (3) on the comparison table's index error).
    pub fn comparison_resolution(&self) -> f64 {
        let p = &self.key.params;
        let lut = &self.key.lut;
        let t = &self.stages.comparison;
        let (sigma, norm) = (p.lwe.key_switch.sigma, p.key_norm_sq());
        lut.error_bound(t, 1.0, sigma, norm) - lut.error_bound(t, 0.0, sigma, norm)
    }

    /// The noise budget of the returned label: half a label step, the error before flooding (the last
    /// table's, the rounding to `q`, the switch back, the re-randomization's), and the flooding width
    /// `sqrt((margin / FLOOD_SIGMAS)^2 - sigma_before^2)`, which makes the returned error Gaussian of
    /// width `margin / FLOOD_SIGMAS` up to the tree-independent remainder.
    pub fn flooding(&self) -> Flooding {
        self.flooding
    }

    /// The label of the encrypted query: one LWE ciphertext (see the type's documentation).
    ///
    /// Errors: [`Error::InvalidArgument`] for a query of another ring or feature count than the tree's;
    /// table and key-switch errors.
    pub fn evaluate(&self, query: &EncryptedQuery, rng: &mut Csprng) -> Result<EncryptedLabel> {
        let ctx = &self.key.query_ctx;
        if query.fingerprint != ctx.fingerprint() || query.features != self.tree.features() {
            return Err(Error::InvalidArgument {
                what: "encrypted query",
                reason: format!(
                    "{} features in the ring with fingerprint {:#x}; the tree reads {} in the ring \
                     {:#x} of its keys (encrypt with the TreeClient that made them)",
                    query.features,
                    query.fingerprint,
                    self.tree.features(),
                    ctx.fingerprint()
                ),
            });
        }
        let ct = query.ct.expand().map_err(core_error)?;
        let indices: Vec<usize> = (0..query.features).collect();
        let x = extract_many(&ct, &indices)?;
        let lut = &self.key.lut;
        let st = &self.stages;
        // Stage 1: one comparison per internal node, z = I(g(x) - g(t) > 0).
        let internal: Vec<(usize, usize)> = self
            .tree
            .nodes()
            .iter()
            .enumerate()
            .filter_map(|(i, n)| match *n {
                super::Node::Internal { feature, .. } => Some((i, feature)),
                super::Node::Leaf { .. } => None,
            })
            .collect();
        let z: Vec<(usize, LweCiphertext)> = internal
            .par_iter()
            .map(|&(i, f)| {
                let mut input = x[f].clone();
                input.add_plain_assign(-self.thresholds[i]);
                Ok((i, lut.evaluate(&input, &st.comparison)?))
            })
            .collect::<Result<_>>()?;
        let mut edge = vec![None; self.tree.nodes().len()];
        for (i, c) in z {
            edge[i] = Some(c);
        }
        // Stage 2: path sums v_k - D/2 (the leaf tables' domain is centered), back to n_lwe; one
        // predicate table per leaf.
        let n = LweDimension::new(self.key.lut_ctx.n())?;
        let out_v = st.path_scale * self.q0.value() as f64 / self.q.value() as f64;
        let one = out_v.round() as i64;
        let shift = (-(self.tree.depth() as f64) / 2.0 * out_v).round() as i64;
        let leaves: Vec<LweCiphertext> = self
            .tree
            .paths()
            .par_iter()
            .map(|path| {
                let mut v = LweCiphertext::trivial(&self.q0, n, shift);
                for &(i, left) in &path.edges {
                    let z = edge[i].as_ref().ok_or_else(|| internal_error("edge bit"))?;
                    if left {
                        v.add_assign(z)?;
                    } else {
                        v.add_plain_assign(one);
                        v.sub_assign(z)?;
                    }
                }
                let v = self.back(&v)?;
                Ok(lut.evaluate(&v, &st.leaf[path.label])?)
            })
            .collect::<Result<_>>()?;
        // Stage 3: the sum (the selected leaf's label value), back to n_lwe, re-encoded by the last
        // table, back again.
        let mut sum = LweCiphertext::trivial(&self.q0, n, 0);
        for l in &leaves {
            sum.add_assign(l)?;
        }
        let label = lut.evaluate(&self.back(&sum)?, &st.last)?;
        let mut out = self.back(&label)?;
        // Sanitization: a fresh encryption of zero (pseudorandom mask), then the flooding noise.
        let zero = self
            .rerandomize
            .encrypt_zero_in::<Coeff>(1, rng)
            .map_err(core_error)?;
        out.add_assign(&extract(&zero, 0)?)?;
        out.add_plain_assign(self.flood.sample(rng));
        Ok(EncryptedLabel {
            ct: out,
            classes: self.tree.classes(),
            step: st.last.output_scale() * self.q.value() as f64 / self.q0.value() as f64,
        })
    }

    /// A table output back at the LWE side: to `q`, then the key switch to `n_lwe`.
    fn back(&self, ct: &LweCiphertext) -> Result<LweCiphertext> {
        let ct = if ct.modulus().value() == self.q.value() {
            ct.clone()
        } else {
            ct.switch_modulus(self.q.value())?
        };
        Ok(self.key.back.switch(&ct)?)
    }

    /// The variance (units of `q`) of a sum of `count` table outputs brought back to `n_lwe`: the
    /// blind rotations' (scaled to `q`), the rounding to `q` (for `q != q_0`), the key switch's.
    fn back_variance(key: &TreeServerKey, count: usize) -> f64 {
        let q = key.params.modulus() as f64;
        let q0 = key.lut_ctx.chain().moduli()[0].value() as f64;
        let n_lwe = key.params.lwe.lwe_dimension;
        let rotation = key.lut.key().added_variance(n_lwe) * (q / q0).powi(2);
        let rounding = if q == q0 {
            0.0
        } else {
            let ring = LweSecretDistribution::from(key.params.lwe.lut.secret);
            (1.0 + ring.expected_norm_sq(key.lut_ctx.n())) / 12.0
        };
        count as f64 * rotation + rounding + key.back.added_variance()
    }

    /// The tables of a tree of depth `depth`, `leaves` leaves and `classes` labels, or the limit it
    /// exceeds.
    fn stages(key: &TreeServerKey, depth: usize, leaves: usize, classes: usize) -> Result<Stages> {
        let p = &key.params;
        let ctx = &key.lut_ctx;
        let q = p.modulus();
        let q0 = ctx.chain().moduli()[0].value() as f64;
        let to_q0 = q0 / q as f64;
        let norm = p.key_norm_sq();
        let query_scale = p.query_scale()?;
        // Path sums: v in [0, D], read as v - D/2 with half a unit of margin each side.
        let path = |d: usize| -> Result<(f64, f64)> {
            let sigma = Self::back_variance(key, d).sqrt();
            let scale = input_scale(ctx, q, d as f64 / 2.0 + 0.5, sigma, norm)?;
            Ok((scale, sigma))
        };
        let resolution = |t: &LookupTable, sigma: f64| {
            key.lut.error_bound(t, 1.0, sigma, norm) - key.lut.error_bound(t, 0.0, sigma, norm)
        };
        let (path_scale, path_sigma) = path(depth)?;
        let sum_bound = classes as f64 / 2.0;
        let sum_sigma = Self::back_variance(key, leaves).sqrt();
        let sum_scale = input_scale(ctx, q, sum_bound, sum_sigma, norm)?;
        let comparison =
            LookupTable::from_fn_for_input_modulus(ctx, q, query_scale, path_scale * to_q0, |x| {
                if x > 0.0 {
                    1.0
                } else {
                    0.0
                }
            })?;
        let half = depth as f64 / 2.0;
        let center = (classes as f64 - 1.0) / 2.0;
        let leaf_table = |c: f64, scale: f64| {
            LookupTable::from_fn_for_input_modulus(ctx, q, scale, sum_scale * to_q0, move |u| {
                if u + half <= 0.5 {
                    c
                } else {
                    0.0
                }
            })
        };
        let probe = leaf_table(1.0, path_scale)?;
        if resolution(&probe, path_sigma) >= 0.5 {
            // The deepest tree whose path sums the leaf tables still resolve (binary search: the
            // resolution only worsens with depth).
            let (mut ok, mut bad) = (0, depth);
            while bad - ok > 1 {
                let mid = (ok + bad) / 2;
                let (s, sigma) = path(mid)?;
                if resolution(&leaf_table(1.0, s)?, sigma) < 0.5 {
                    ok = mid;
                } else {
                    bad = mid;
                }
            }
            let limit = ok;
            return Err(Error::TreeTooLarge {
                what: "depth",
                value: depth,
                limit,
                reason: format!(
                    "the path sums v in [0, {depth}] are read by the leaf tables on a grid whose index \
                     error (PEGASUS Eq. (3), six standard deviations) reaches 1/2, the gap between a \
                     path taken (v = 0) and one not taken (v >= 1); a larger look-up-table ring \
                     (n = 2^{}) resolves deeper trees",
                    ctx.n().trailing_zeros() + 1
                ),
            });
        }
        let leaf = (0..classes)
            .map(|l| leaf_table(l as f64 - center, path_scale))
            .collect::<rnsfhe_lwe::LweResult<Vec<_>>>()?;
        let step = (q0 / classes as f64).floor();
        let c = classes as i64;
        let last = LookupTable::from_fn_for_input_modulus(ctx, q, sum_scale, step, move |s| {
            let l = (s + center).round().clamp(0.0, (c - 1) as f64) as i64;
            (if 2 * l < c { l } else { l - c }) as f64
        })?;
        if resolution(&last, sum_sigma) >= 0.5 {
            return Err(Error::TreeTooLarge {
                what: "leaves and classes",
                value: leaves,
                limit: 0,
                reason: format!(
                    "the sum of {leaves} leaf outputs with {classes} labels is read by the last table \
                     with an index error of {:.3} label steps (at least 1/2 confuses labels): use \
                     fewer leaves or classes, or a larger look-up-table ring",
                    resolution(&last, sum_sigma)
                ),
            });
        }
        Ok(Stages {
            query_scale,
            path_scale,
            comparison,
            leaf,
            last,
        })
    }

    /// The flooding for labels at `step` (units of `q_0`) per label.
    fn budget(key: &TreeServerKey, step: f64, q: u64, q0: u64) -> Result<Flooding> {
        let ratio = q as f64 / q0 as f64;
        let margin = step * ratio / 2.0;
        // Re-randomization: coefficient 0 of u e + e_1 (u uniform ternary, e, e_1 of width sigma_ks).
        let sigma = key.params.lwe.key_switch.sigma;
        let n_lwe = key.params.lwe.lwe_dimension as f64;
        let zero = sigma * sigma * (2.0 * n_lwe / 3.0 + 1.0);
        let before = (Self::back_variance(key, 1) + zero).sqrt();
        let target = margin / FLOOD_SIGMAS;
        if before >= target {
            return Err(Error::TreeTooLarge {
                what: "classes",
                value: (q0 as f64 / step).round() as usize,
                limit: 0,
                reason: format!(
                    "the returned error before flooding ({before:.3e}) leaves no room for flooding \
                     within half a label step ({margin:.3e}) over {FLOOD_SIGMAS} standard deviations"
                ),
            });
        }
        Ok(Flooding {
            margin,
            sigma_before: before,
            sigma_flood: (target * target - before * before).sqrt(),
        })
    }
}

/// An impossible state (an index the code itself made), reported instead of a panic.
fn internal_error(what: &'static str) -> Error {
    Error::InvalidArgument {
        what: "internal state",
        reason: format!("{what}: missing"),
    }
}
