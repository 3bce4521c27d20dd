//! Secure k-means: one centroid update on encrypted data by a single server (PEGASUS, Lu, Huang, Hong,
//! Ma, Qu, IEEE S&P 2021, Section V.C, Table VIII): the distances of `N` points to `K` centroids in
//! CKKS, their extraction to LWE, the min-index of every point (one-hot assignment bits), the reciprocal
//! look-up table for the cluster sizes, repacking to CKKS, and the update `c_j = sum_i b_ij x_i / |C_j|`.
//!
//! **Parties.** The data owner (client) holds every secret key: it packs and encrypts its points and the
//! initial centroids ([`KMeansLayout::encrypt_points`], [`KMeansLayout::encrypt_centroids`]) and decrypts
//! the result ([`KMeansLayout::decrypt_centroids`]). The server holds only evaluation keys (the PEGASUS
//! pipeline's, the [`ComparisonKey`] and the [`KMeansKeys`]) and sees only ciphertexts
//! ([`KMeansEvaluator::update`]).
//!
//! **Layout** ([`KMeansLayout`]). Point `i` and cluster `j` share slot `s = i K' + j`, `K'` the number of
//! clusters rounded up to a power of two and `P` the number of points rounded up: `P K'` slots, which
//! must be the pipeline's slot count ([`rnsfhe_pegasus::PipelineOptions::slots`], at most `N / 2` of the
//! CKKS ring). Feature `f` of the points is one ciphertext `X_f` (slot `i K' + j` holds `x_i[f]` for
//! every `j`), feature `f` of the centroids one ciphertext `C_f` (slot `i K' + j` holds `c_j[f]` for
//! every `i`): `d` ciphertexts each, so `d` is not bounded by the packing, only by the distances' range
//! below. Padding slots (`i >= N` or `j >= K`) take no part in the look-up tables and hold zero bits.
//!
//! 1. **Distance** (one level): `D = sum_f C_f (C_f - 2 X_f)`, slot `i K' + j` holding
//!    `||c_j||^2 - 2 <x_i, c_j>`: the squared distance minus `||x_i||^2`, which every centroid of point `i`
//!    shares, so the arg-min is unchanged and the values are smaller (the paper's `D` is a squared
//!    distance). The tables read values in `[-V, V]`, `V` the comparator's bound, so the client encrypts
//!    the features multiplied by `sqrt(s)`, `s = V / D_max` ([`KMeansEvaluator::feature_factor`]), `D_max`
//!    the declared bound on `|D|` ([`KMeansOptions::distance_bound`], by default `3 R^2` for points of
//!    norm at most `R`: centroids are averages of points, so `|c|^2 + 2 |x| |c| <= 3 R^2`). The
//!    centroids then stay multiplied by `sqrt(s)` from update to update.
//! 2. **Extraction**: [`rnsfhe_pegasus::PegasusEvaluator::to_lwe`] of `D`, the `N K` values of the points
//!    and clusters in the order `i K + j`.
//! 3. **Min-index** (PEGASUS Eq. (2)): the min-tree of the [`Comparator`] over the `K` values of each
//!    point (`2 (K - 1)` tables), then the predicate `b_ij = I(D_ij - min_i <= tau)` (`K` tables) whose
//!    output scale `Delta_b` is chosen so that the sum of `N` bits is still inside the tables' domain;
//!    the counts `|C_j| = sum_i b_ij` are sums of LWE ciphertexts, switched back to the LWE key (PEGASUS
//!    Fig. 9), and the **reciprocal** table `1 / |C_j|` (`0` below `1/2`: an empty cluster gets the zero
//!    vector) reads them (`K` tables). All tables of a stage run in one batch over rayon, keys shared.
//!    The min-tree and the bits of a point read its own distances only
//!    ([`KMeansEvaluator::assignment_bits`], any chunk of whole points, e.g. on the workers of another
//!    machine with [`KMeansEvaluator::for_assignment`] and the keys loaded from bytes); the counts and
//!    reciprocals ([`KMeansEvaluator::reciprocals`]) need the bits of every point.
//! 4. **Repacking**: the bits into one CKKS ciphertext `B` (slot `i K' + j`), the reciprocals into one
//!    ciphertext `R` (slot `i K' + j` holds `1 / |C_j|`, the same LWE ciphertext repeated).
//! 5. **Centroid** (two levels): `T_f = (B R) X_f`, then the sum of the slots of each cluster by
//!    `log2 P` rotations by `K', 2K', ..., P K' / 2` (the `P` slots of cluster `j` are those `= j mod K'`,
//!    so the sum lands in every one of them: the new centroids are in the layout of step 1, no mask).
//!
//! **Limits** (errors, not panics): `2 <= K`, `1 <= N`, `1 <= d`; `P K'` equal to the pipeline's slot
//! count ([`KMeansLayout::for_slots`] names the slot count to use); points of norm above the declared
//! `R` are refused by the client ([`KMeansLayout::pack_points`]), since past `D_max` a distance would wrap
//! around a table undetectably; the centroids must have a level above the pipeline's input level (one
//! for the distance), and the centroid sector takes two levels below the repacking's output level:
//! the pipelines leave enough for one update, after which the client refreshes the centroids (decrypts
//! and encrypts them again) for the next; the paper, too, runs one update without CKKS bootstrapping.
//!
//! **Error model.** An assignment is exact when the closest centroid of a point is more than the
//! predicate's resolution ahead of the next one: every distance carries the tables' errors (PEGASUS
//! Eq. (3), [`Comparator::tree_error_bound`]), scaled by `1 / s` in distance units, so points near the
//! boundary of two clusters may get either bit or both. The closest-assignment ratio `rho` (Table VIII)
//! counts the points whose bits are exactly the one-hot row of their closest centroid
//! ([`plain::closest_assignment_ratio`]). With exact assignments the centroids differ from the plaintext
//! update ([`plain::update`]) by the bits' and reciprocals' table and repacking errors
//! ([`KMeansEvaluator::update_error_bound`]).

pub mod plain;

use std::borrow::Borrow;
use std::sync::Arc;

use rayon::prelude::*;
use rnsfhe_ckks::{
    Ciphertext, CkksContext, CkksDecryptor, CkksEncryptor, Csprng, Evaluator, GaloisKeys,
    KeyGenerator, RelinKey,
};
use rnsfhe_lwe::{LookupTable, LweCiphertext};
use rnsfhe_pegasus::{PegasusEvaluator, PegasusSecretKeys};

use crate::comparison::{Comparator, ComparisonKey, Form};
use crate::error::{Error, Result};

/// The repacking error of one value of magnitude up to `1` at the default output scale of a table
/// (`q_0 eps_max 15/16`): F_mod's approximation and the CKKS noise it amplifies, measured at about
/// `2^-12` at Table IV and InsecureTest (docs/pegasus.md); four times that, as the comparison tests take.
const REPACK_ERROR: f64 = 1.0 / 1024.0;

/// The slot layout of one k-means update (see the [module documentation](self)).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KMeansLayout {
    points: usize,
    clusters: usize,
    features: usize,
    /// `P`: the points rounded up to a power of two.
    block: usize,
    /// `K'`: the clusters rounded up to a power of two.
    stride: usize,
}

impl KMeansLayout {
    /// The layout of `points` points of `features` features in `clusters` clusters.
    ///
    /// Errors: [`Error::InvalidArgument`] for fewer than 2 clusters (a min-index needs two values), no
    /// point, no feature, or sizes whose slot count overflows.
    pub fn new(points: usize, clusters: usize, features: usize) -> Result<Self> {
        if clusters < 2 || points == 0 || features == 0 {
            return Err(Error::InvalidArgument {
                what: "k-means sizes",
                reason: format!(
                    "{points} points, {clusters} clusters, {features} features: k-means needs at \
                     least 1 point, 2 clusters and 1 feature"
                ),
            });
        }
        let block = points.checked_next_power_of_two();
        let stride = clusters.checked_next_power_of_two();
        match (block, stride) {
            (Some(block), Some(stride)) if block.checked_mul(stride).is_some() => Ok(Self {
                points,
                clusters,
                features,
                block,
                stride,
            }),
            _ => Err(Error::InvalidArgument {
                what: "k-means sizes",
                reason: format!("{points} points x {clusters} clusters overflow the slot count"),
            }),
        }
    }

    /// [`KMeansLayout::new`] checked against a pipeline of `slots` slots.
    ///
    /// Errors: as [`KMeansLayout::new`]; [`Error::InvalidArgument`] naming the slot count the sizes need
    /// (`P K'`) when it is not `slots`: more points or clusters than the packing holds (`P K' > slots`:
    /// at most `slots / K'` points for `K` clusters, at most `slots / P` clusters for `N` points), or
    /// fewer (make the pipeline with `P K'` slots).
    pub fn for_slots(
        points: usize,
        clusters: usize,
        features: usize,
        slots: usize,
    ) -> Result<Self> {
        let layout = Self::new(points, clusters, features)?;
        layout.check_slots(slots)?;
        Ok(layout)
    }

    fn check_slots(&self, slots: usize) -> Result<()> {
        let need = self.slots();
        if need != slots {
            let hint = if need > slots {
                format!(
                    "beyond the packing: at most {} points for {} clusters, at most {} clusters for {} \
                     points",
                    slots / self.stride,
                    self.clusters,
                    if slots >= self.block {
                        slots / self.block
                    } else {
                        0
                    },
                    self.points
                )
            } else {
                "fewer than the pipeline packs".to_string()
            };
            return Err(Error::InvalidArgument {
                what: "k-means packing",
                reason: format!(
                    "{} points x {} clusters take P K' = {} x {} = {need} slots, the pipeline has \
                     {slots} ({hint}); make the pipeline with PipelineOptions::slots = {need} (at most \
                     N / 2 of the CKKS ring)",
                    self.points, self.clusters, self.block, self.stride
                ),
            });
        }
        Ok(())
    }

    /// The number of points `N`.
    pub fn points(&self) -> usize {
        self.points
    }

    /// The number of clusters `K`.
    pub fn clusters(&self) -> usize {
        self.clusters
    }

    /// The number of features `d` (ciphertexts per matrix).
    pub fn features(&self) -> usize {
        self.features
    }

    /// The slot count `P K'` the layout needs.
    pub fn slots(&self) -> usize {
        self.block * self.stride
    }

    /// The slot of point `i` and cluster `j`: `i K' + j`.
    pub fn slot(&self, point: usize, cluster: usize) -> usize {
        point * self.stride + cluster
    }

    /// The rotation steps of the centroid sums: `K', 2 K', ..., P K' / 2`.
    pub fn rotation_steps(&self) -> Vec<i64> {
        let mut steps = Vec::new();
        let mut step = self.stride;
        while step < self.slots() {
            steps.push(step as i64);
            step *= 2;
        }
        steps
    }

    /// The `d` slot vectors of `points` (rows of `d` features) multiplied by `factor`: vector `f` holds
    /// `factor x_i[f]` at slot `i K' + j` for every `j < K'`.
    ///
    /// Errors: [`Error::Shape`] for another number of points or features; [`Error::NonFinite`];
    /// [`Error::InvalidArgument`] for a point of norm above `radius` (its distances could leave the
    /// tables' domain, [`KMeansOptions::data_radius`]).
    pub fn pack_points(
        &self,
        points: &[Vec<f64>],
        factor: f64,
        radius: f64,
    ) -> Result<Vec<Vec<f64>>> {
        self.check_matrix("points", points, self.points, radius)?;
        Ok((0..self.features)
            .map(|f| {
                let mut v = vec![0.0; self.slots()];
                for (i, x) in points.iter().enumerate() {
                    for j in 0..self.stride {
                        v[self.slot(i, j)] = factor * x[f];
                    }
                }
                v
            })
            .collect())
    }

    /// The `d` slot vectors of `centroids` (`K` rows of `d` features) multiplied by `factor`: vector `f`
    /// holds `factor c_j[f]` at slot `i K' + j` for every `i < P`.
    ///
    /// Errors: as [`KMeansLayout::pack_points`], for `K` rows.
    pub fn pack_centroids(
        &self,
        centroids: &[Vec<f64>],
        factor: f64,
        radius: f64,
    ) -> Result<Vec<Vec<f64>>> {
        self.check_matrix("centroids", centroids, self.clusters, radius)?;
        Ok((0..self.features)
            .map(|f| {
                let mut v = vec![0.0; self.slots()];
                for (j, c) in centroids.iter().enumerate() {
                    for i in 0..self.block {
                        v[self.slot(i, j)] = factor * c[f];
                    }
                }
                v
            })
            .collect())
    }

    /// The centroids (`K` rows of `d`) out of the `d` decrypted slot vectors of an
    /// [`EncryptedCentroids`], divided by `factor`: the mean over the points' slots of each cluster.
    ///
    /// Errors: [`Error::Shape`] for another number of vectors or slots.
    pub fn unpack_centroids(&self, columns: &[Vec<f64>], factor: f64) -> Result<Vec<Vec<f64>>> {
        if columns.len() != self.features {
            return Err(Error::Shape {
                what: "centroid feature vectors".into(),
                expected: self.features,
                found: columns.len(),
            });
        }
        if let Some(c) = columns.iter().find(|c| c.len() != self.slots()) {
            return Err(Error::Shape {
                what: "centroid slots".into(),
                expected: self.slots(),
                found: c.len(),
            });
        }
        Ok((0..self.clusters)
            .map(|j| {
                columns
                    .iter()
                    .map(|col| {
                        let sum: f64 = (0..self.points).map(|i| col[self.slot(i, j)]).sum();
                        sum / self.points as f64 / factor
                    })
                    .collect()
            })
            .collect())
    }

    /// The assignment bits (`N` rows of `K`) in the decrypted slots of the repacked bits
    /// ([`Repacked::bits`]).
    ///
    /// Errors: [`Error::Shape`] for another slot count.
    pub fn unpack_bits(&self, slots: &[f64]) -> Result<Vec<Vec<f64>>> {
        if slots.len() != self.slots() {
            return Err(Error::Shape {
                what: "assignment slots".into(),
                expected: self.slots(),
                found: slots.len(),
            });
        }
        Ok((0..self.points)
            .map(|i| (0..self.clusters).map(|j| slots[self.slot(i, j)]).collect())
            .collect())
    }

    /// Client: the points, packed ([`KMeansLayout::pack_points`] with the factor and radius of
    /// `encoding`) and encrypted at `level`, `d` ciphertexts.
    ///
    /// Errors: as [`KMeansLayout::pack_points`]; encoding and encryption errors.
    pub fn encrypt_points(
        &self,
        ctx: &Arc<CkksContext>,
        enc: &CkksEncryptor,
        points: &[Vec<f64>],
        encoding: KMeansEncoding,
        level: usize,
        rng: &mut Csprng,
    ) -> Result<EncryptedPoints> {
        let columns = self.pack_points(points, encoding.factor, encoding.radius)?;
        Ok(EncryptedPoints {
            features: self.encrypt_columns(ctx, enc, &columns, level, rng)?,
            layout: *self,
        })
    }

    /// Client: the centroids, packed ([`KMeansLayout::pack_centroids`] with the factor and radius of
    /// `encoding`) and encrypted at `level`.
    ///
    /// Errors: as [`KMeansLayout::pack_centroids`]; encoding and encryption errors.
    pub fn encrypt_centroids(
        &self,
        ctx: &Arc<CkksContext>,
        enc: &CkksEncryptor,
        centroids: &[Vec<f64>],
        encoding: KMeansEncoding,
        level: usize,
        rng: &mut Csprng,
    ) -> Result<EncryptedCentroids> {
        let columns = self.pack_centroids(centroids, encoding.factor, encoding.radius)?;
        Ok(EncryptedCentroids {
            features: self.encrypt_columns(ctx, enc, &columns, level, rng)?,
            layout: *self,
        })
    }

    /// Client: the centroids of `encrypted`, decrypted and divided by `factor`.
    ///
    /// Errors: decryption errors; [`Error::Shape`] for ciphertexts of another layout.
    pub fn decrypt_centroids(
        &self,
        dec: &CkksDecryptor,
        encrypted: &EncryptedCentroids,
        factor: f64,
    ) -> Result<Vec<Vec<f64>>> {
        let columns = encrypted
            .features
            .iter()
            .map(|ct| Ok(dec.decrypt_real(ct)?))
            .collect::<Result<Vec<_>>>()?;
        self.unpack_centroids(&columns, factor)
    }

    fn encrypt_columns(
        &self,
        ctx: &Arc<CkksContext>,
        enc: &CkksEncryptor,
        columns: &[Vec<f64>],
        level: usize,
        rng: &mut Csprng,
    ) -> Result<Vec<Ciphertext>> {
        columns
            .iter()
            .map(|v| {
                let pt = ctx.encode_real(v, self.slots(), level)?;
                Ok(enc.encrypt_plaintext(&pt, rng)?)
            })
            .collect()
    }

    fn check_matrix(
        &self,
        what: &'static str,
        rows: &[Vec<f64>],
        count: usize,
        radius: f64,
    ) -> Result<()> {
        if rows.len() != count {
            return Err(Error::Shape {
                what: format!("{what} (rows)"),
                expected: count,
                found: rows.len(),
            });
        }
        for (i, r) in rows.iter().enumerate() {
            if r.len() != self.features {
                return Err(Error::Shape {
                    what: format!("{what} (features of row {i})"),
                    expected: self.features,
                    found: r.len(),
                });
            }
            if let Some((column, &value)) = r.iter().enumerate().find(|(_, v)| !v.is_finite()) {
                return Err(Error::NonFinite {
                    what,
                    row: i,
                    column,
                    value,
                });
            }
            let norm = r.iter().map(|v| v * v).sum::<f64>().sqrt();
            if norm > radius * (1.0 + 1e-12) {
                return Err(Error::InvalidArgument {
                    what: "k-means data radius",
                    reason: format!(
                        "{what}: row {i} has norm {norm}, beyond the declared radius R = {radius}: \
                         its distances could leave the look-up tables' domain and wrap around \
                         undetectably; declare KMeansOptions::data_radius >= {norm}"
                    ),
                });
            }
        }
        Ok(())
    }
}

/// What the client encodes with: the factor `sqrt(s)` of the features
/// ([`KMeansEvaluator::feature_factor`]) and the declared radius `R` ([`KMeansOptions::data_radius`]),
/// both public ([`KMeansEvaluator::encoding`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct KMeansEncoding {
    /// `sqrt(s)`.
    pub factor: f64,
    /// `R`.
    pub radius: f64,
}

/// The options of the update.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct KMeansOptions {
    /// `R`: every point (and so every centroid, an average of points) has Euclidean norm at most `R`.
    pub data_radius: f64,
    /// `D_max`: the bound on `| ||c||^2 - 2 <x, c> |` the distances are scaled by (`None`: `3 R^2`, which
    /// always holds). A tighter bound resolves closer distances (a larger `rho`); a wrong one wraps a
    /// table around undetectably.
    pub distance_bound: Option<f64>,
    /// The predicate's threshold `tau` in the tables' units (`None`: one sixth of
    /// [`Comparator::argmin_threshold`], about one standard deviation of the decision, since that bound
    /// adds six-standard-deviation bounds: the comparator's own threshold marks every near tie twice,
    /// PEGASUS's `0` misses the closest centroid half the time).
    pub threshold: Option<f64>,
}

impl KMeansOptions {
    /// The defaults for points of norm at most `radius`.
    pub fn new(radius: f64) -> Self {
        Self {
            data_radius: radius,
            distance_bound: None,
            threshold: None,
        }
    }

    /// `D_max`: [`KMeansOptions::distance_bound`] or `3 R^2`.
    pub fn distance_bound(&self) -> f64 {
        self.distance_bound
            .unwrap_or(3.0 * self.data_radius * self.data_radius)
    }
}

/// The evaluation keys of the update beyond the pipeline's: relinearization and the rotations of the
/// centroid sums ([`KMeansLayout::rotation_steps`]).
#[derive(Clone, Debug)]
pub struct KMeansKeys {
    relin: RelinKey,
    galois: GaloisKeys,
}

impl KMeansKeys {
    /// Client: the keys for `layout` from the CKKS secret of `keygen`.
    ///
    /// Errors: sampler errors.
    pub fn generate(
        layout: &KMeansLayout,
        keygen: &KeyGenerator,
        rng: &mut Csprng,
    ) -> Result<Self> {
        Ok(Self {
            relin: keygen.relin_key(rng)?,
            galois: keygen.galois_keys(&layout.rotation_steps(), false, rng)?,
        })
    }
}

/// The points of the update: one ciphertext per feature.
#[derive(Clone, Debug)]
pub struct EncryptedPoints {
    /// `X_f`, `f < d`.
    pub features: Vec<Ciphertext>,
    layout: KMeansLayout,
}

/// The centroids of the update: one ciphertext per feature.
#[derive(Clone, Debug)]
pub struct EncryptedCentroids {
    /// `C_f`, `f < d`.
    pub features: Vec<Ciphertext>,
    layout: KMeansLayout,
}

impl EncryptedCentroids {
    /// The lowest level of the ciphertexts (in limbs).
    pub fn level(&self) -> usize {
        self.features
            .iter()
            .map(Ciphertext::level)
            .min()
            .unwrap_or(0)
    }
}

/// The LWE outputs of the min-index and reciprocal stage.
#[derive(Clone, Debug)]
pub struct Assignment {
    /// `b_ij` in the order `i K + j`, outputs of the bit table (dimension `n`, modulo `q_0`).
    pub bits: Vec<LweCiphertext>,
    /// `1 / |C_j|`, outputs of the reciprocal table.
    pub reciprocals: Vec<LweCiphertext>,
}

/// The repacked assignment: CKKS ciphertexts of the layout's slot count.
#[derive(Clone, Debug)]
pub struct Repacked {
    /// `B`: `b_ij` at slot `i K' + j`, zeros in the padding.
    pub bits: Ciphertext,
    /// `R`: `1 / |C_j|` at slot `i K' + j`.
    pub reciprocals: Ciphertext,
}

/// The server of one k-means update on a PEGASUS pipeline (see the [module documentation](self)).
#[derive(Debug)]
pub struct KMeansEvaluator<P> {
    cmp: Comparator<P>,
    layout: KMeansLayout,
    options: KMeansOptions,
    ckks: Evaluator,
    bit_table: Arc<LookupTable>,
    reciprocal_table: Arc<LookupTable>,
    threshold: f64,
    /// `M`: the counts are multiplied by it before the switch back.
    count_factor: i64,
    /// `y` per unit of count at the reciprocal table's input.
    per_count: f64,
}

impl<P: Borrow<PegasusEvaluator> + Sync> KMeansEvaluator<P> {
    /// The server for `layout` on `pegasus` (made with `layout.slots()` slots), with the comparison key
    /// and the k-means keys of the same client.
    ///
    /// Errors: as [`KMeansLayout::for_slots`] for a pipeline of another slot count;
    /// [`Error::InvalidArgument`] for a radius, distance bound or threshold that is not finite and
    /// positive (a threshold at least the comparator's bound `V`); [`Error::Ckks`] for keys of another
    /// context; as [`Comparator::new`] and the pipeline's table construction.
    pub fn new(
        pegasus: P,
        key: ComparisonKey,
        keys: KMeansKeys,
        layout: KMeansLayout,
        options: KMeansOptions,
    ) -> Result<Self> {
        Self::build(pegasus, key, Some(keys), layout, options)
    }

    /// The server of sectors 2 to 4 alone (extraction, [`KMeansEvaluator::assignment_bits`],
    /// [`KMeansEvaluator::reciprocals`], repacking): the pipeline's keys and the comparison key, without
    /// the [`KMeansKeys`] of the CKKS sectors 1 and 5, which then fail with [`Error::Ckks`] (a missing
    /// key). What a worker that loaded the keys from bytes needs to compute the bits of its points
    /// ([`ComparisonKey::from_bytes_sealed`]); its bits equal those of [`KMeansEvaluator::new`] with
    /// the same pipeline, key, layout and options, bit for bit.
    ///
    /// Errors: as [`KMeansEvaluator::new`].
    pub fn for_assignment(
        pegasus: P,
        key: ComparisonKey,
        layout: KMeansLayout,
        options: KMeansOptions,
    ) -> Result<Self> {
        Self::build(pegasus, key, None, layout, options)
    }

    fn build(
        pegasus: P,
        key: ComparisonKey,
        keys: Option<KMeansKeys>,
        layout: KMeansLayout,
        options: KMeansOptions,
    ) -> Result<Self> {
        layout.check_slots(pegasus.borrow().options().slots)?;
        for (what, v) in [
            ("k-means data radius", options.data_radius),
            ("k-means distance bound", options.distance_bound()),
        ] {
            if !(v.is_finite() && v > 0.0) {
                return Err(Error::InvalidArgument {
                    what,
                    reason: format!("{v} is not a finite positive number"),
                });
            }
        }
        let ckks = Evaluator::new(pegasus.borrow().context());
        let ckks = match keys {
            Some(keys) => ckks
                .with_relin_key(keys.relin)?
                .with_galois_keys(keys.galois)?,
            None => ckks,
        };
        let cmp = Comparator::new(pegasus, key, None)?;
        let t = layout.clusters;
        let threshold = match options.threshold {
            Some(tau) => tau,
            None => cmp.argmin_threshold(t)? / 6.0,
        };
        if !(threshold.is_finite() && threshold > 0.0 && threshold < cmp.bound()) {
            return Err(Error::InvalidArgument {
                what: "k-means threshold",
                reason: format!(
                    "tau = {threshold} must be finite, positive and below the value bound {}",
                    cmp.bound()
                ),
            });
        }
        let p = cmp.pegasus();
        let q0 = p.params().q0() as f64;
        let modulus = p.lwe_modulus()?;
        let input_scale = p.lwe_input_scale()?;
        let input_scale_q0 = input_scale * q0 / modulus as f64;
        // The bits' output scale: the repacking's for values up to 1, or smaller so that the sum of N
        // bits (a little above 1 each with their error), read at the input scale, stays within the
        // tables' domain B: N Delta_b / Delta_in <= B (1 - 1/16).
        let repack_scale = q0 * p.eval_mod().eps_max() * (15.0 / 16.0);
        let domain = cmp.domain();
        let bit_scale = repack_scale
            .min(domain * (15.0 / 16.0) * input_scale_q0 / (layout.points as f64 * 1.0625));
        let lut_ctx = p.lut_evaluator().key().context();
        let bit_table = LookupTable::from_fn_for_input_modulus(
            lut_ctx,
            modulus,
            input_scale,
            bit_scale,
            |x| if x <= threshold { 1.0 } else { 0.0 },
        )?;
        // The count c reads y = M c Delta_b / Delta_in at the input scale, M the largest integer that
        // keeps N counts within (1 - 1/16) B: the sum is multiplied by M before the switch back, so
        // that the switch's error (the largest of the count's) weighs M times less.
        let per_bit = bit_scale / input_scale_q0;
        let count_factor = (domain * (15.0 / 16.0) / (1.0625 * layout.points as f64 * per_bit))
            .floor()
            .max(1.0);
        let per_count = count_factor * per_bit;
        let reciprocal_table = p.table(|y| {
            let c = y / per_count;
            if c < 0.5 {
                0.0
            } else {
                1.0 / c
            }
        })?;
        Ok(Self {
            cmp,
            layout,
            options,
            ckks,
            bit_table: Arc::new(bit_table),
            reciprocal_table: Arc::new(reciprocal_table),
            threshold,
            count_factor: count_factor as i64,
            per_count,
        })
    }

    /// The comparator of the min-trees.
    pub fn comparator(&self) -> &Comparator<P> {
        &self.cmp
    }

    /// The layout.
    pub fn layout(&self) -> &KMeansLayout {
        &self.layout
    }

    /// The options.
    pub fn options(&self) -> &KMeansOptions {
        &self.options
    }

    /// The predicate's threshold `tau` (tables' units).
    pub fn threshold(&self) -> f64 {
        self.threshold
    }

    /// `s = V / D_max`: a distance `D` reaches the tables as `s D`.
    pub fn distance_scale(&self) -> f64 {
        self.cmp.bound() / self.options.distance_bound()
    }

    /// `sqrt(s)`: the factor the client multiplies the features of points and centroids by
    /// ([`KMeansLayout::encrypt_points`]), and divides the decrypted centroids by.
    pub fn feature_factor(&self) -> f64 {
        self.distance_scale().sqrt()
    }

    /// The client's encoding: [`KMeansEvaluator::feature_factor`] and the declared radius.
    pub fn encoding(&self) -> KMeansEncoding {
        KMeansEncoding {
            factor: self.feature_factor(),
            radius: self.options.data_radius,
        }
    }

    /// The separation of distances (in distance units) above which the assignment of a point is exact
    /// by the error bounds: the closest centroid's distance is marked whenever the min-tree's error is
    /// below `tau` ([`Comparator::tree_error_bound`] plus the predicate's index error), and the others
    /// are not when they lie `tau` plus that error above it.
    ///
    /// Errors: as [`Comparator::pair_error_bound`].
    pub fn resolution(&self) -> Result<f64> {
        let index = self.cmp.pegasus().lut_error_bound(&self.bit_table, 0.0)?;
        let tree = self.cmp.tree_error_bound(self.layout.clusters)?;
        Ok((self.threshold + tree + index + self.index_error()?) / self.distance_scale())
    }

    /// The index error of a table read (six standard deviations of the modulus switch's rounding and
    /// the input noise), in the tables' units: the error bound of the identity `x / 2` table, doubled.
    fn index_error(&self) -> Result<f64> {
        let half = self.cmp.pegasus().table(|x| x / 2.0)?;
        Ok(2.0 * self.cmp.pegasus().lut_error_bound(&half, 0.5)?)
    }

    /// The error bound of every coordinate of the updated centroids (the data's units) against
    /// [`plain::update`] with the same assignment, for clusters of `counts` points. With `e_l` the bit
    /// table's output error ([`rnsfhe_pegasus::PegasusEvaluator::lut_error_bound`]) and `e_b = e_l + `
    /// the repacking's (`2^-10` per unit of the default output scale), the count of a cluster is off by
    /// `e_c = sqrt(N) e_l` (independent noises, six standard deviations) plus the switch back's error
    /// (at most [`Comparator::pair_error_bound`] in the tables' units, over `M` times the units of one
    /// count); `1 / |C_j|` is then off by `e_r = e_c / (|C_j| (|C_j| - e_c))` plus the reciprocal table's
    /// and repacking's errors, and the centroid by `R (N e_b / |C_j| + |C_j| e_r)` (the CKKS noise of
    /// the sums is far below).
    ///
    /// Errors: [`Error::Shape`] for `counts` of another length than `K`; table errors.
    pub fn update_error_bound(&self, counts: &[usize]) -> Result<Vec<f64>> {
        if counts.len() != self.layout.clusters {
            return Err(Error::Shape {
                what: "cluster counts".into(),
                expected: self.layout.clusters,
                found: counts.len(),
            });
        }
        let p = self.cmp.pegasus();
        let q0 = p.params().q0() as f64;
        let repack_scale = q0 * p.eval_mod().eps_max() * (15.0 / 16.0);
        let n = self.layout.points as f64;
        let e_l = p.lut_error_bound(&self.bit_table, 0.0)?;
        let e_b = e_l + REPACK_ERROR * repack_scale / self.bit_table.output_scale();
        let e_c = n.sqrt() * e_l + self.cmp.pair_error_bound()? / self.per_count;
        let e_table = p.lut_error_bound(&self.reciprocal_table, 0.0)?
            + REPACK_ERROR * repack_scale / self.reciprocal_table.output_scale();
        let r = self.options.data_radius;
        Ok(counts
            .iter()
            .map(|&c| {
                if c == 0 {
                    return 0.0;
                }
                let c = c as f64;
                let e_r = e_c / (c * (c - e_c).max(0.5)) + e_table;
                r * (n * e_b / c + c * e_r)
            })
            .collect())
    }

    // ----- the five sectors of Table VIII -----

    /// Sector 1 (distance): `D = sum_f C_f (C_f - 2 X_f)` (tensor products summed, one
    /// relinearization, one rescaling), at the level the pipeline reads.
    ///
    /// Errors: [`Error::InvalidArgument`] for ciphertexts of another layout or centroids at or below
    /// the pipeline's input level; CKKS errors (keys, context).
    pub fn distances(
        &self,
        points: &EncryptedPoints,
        centroids: &EncryptedCentroids,
    ) -> Result<Ciphertext> {
        self.check_layout(&points.layout, points.features.len(), "points")?;
        self.check_layout(&centroids.layout, centroids.features.len(), "centroids")?;
        let need = self.cmp.pegasus().input_level() + 1;
        if centroids.level() < need {
            return Err(Error::InvalidArgument {
                what: "centroid level",
                reason: format!(
                    "the centroids are at level {} (limbs); the distance needs level {need} (the \
                     pipeline's input level plus one for the product): refresh them (the client \
                     decrypts and encrypts them again)",
                    centroids.level()
                ),
            });
        }
        let terms = points
            .features
            .par_iter()
            .zip(&centroids.features)
            .map(|(x, c)| {
                let diff = self.ckks.sub(c, &self.ckks.multiply_int(x, 2)?)?;
                Ok(self.ckks.multiply_without_relin(c, &diff)?)
            })
            .collect::<Result<Vec<_>>>()?;
        let mut sum = terms[0].clone();
        for t in &terms[1..] {
            sum = self.ckks.add(&sum, t)?;
        }
        let d = self.ckks.rescale(&self.ckks.relinearize(&sum)?)?;
        Ok(d)
    }

    /// Sector 2 (extraction): the `N K` distances of the points and clusters as LWE ciphertexts, in the
    /// order `i K + j` ([`PegasusEvaluator::to_lwe`], padding slots left out).
    ///
    /// Errors: as [`PegasusEvaluator::to_lwe`].
    pub fn extract(&self, distances: &Ciphertext) -> Result<Vec<LweCiphertext>> {
        let all = self.cmp.pegasus().to_lwe(distances)?;
        let l = &self.layout;
        if l.stride == l.clusters && l.block == l.points {
            return Ok(all);
        }
        let mut out = Vec::with_capacity(l.points * l.clusters);
        for i in 0..l.points {
            for j in 0..l.clusters {
                out.push(all[l.slot(i, j)].clone());
            }
        }
        Ok(out)
    }

    /// Sector 3 (min-index and reciprocal): [`KMeansEvaluator::assignment_bits`] of all `N` points,
    /// then [`KMeansEvaluator::reciprocals`] of their bits.
    ///
    /// Errors: [`Error::Shape`] for another number of ciphertexts than `N K`; as the two parts.
    pub fn min_index(&self, distances: &[LweCiphertext]) -> Result<Assignment> {
        let (n, k) = (self.layout.points, self.layout.clusters);
        if distances.len() != n * k {
            return Err(Error::Shape {
                what: "extracted distances".into(),
                expected: n * k,
                found: distances.len(),
            });
        }
        let bits = self.assignment_bits(distances)?;
        let reciprocals = self.reciprocals(&bits)?;
        Ok(Assignment { bits, reciprocals })
    }

    /// The per-point part of sector 3 (PEGASUS Eq. (2)): for every group of `K` distances (one point,
    /// order `i K + j`), the min-tree ([`Comparator::min_of`], `2 (K - 1)` tables) and the bits
    /// `I(D_ij - min_i <= tau)` (`K` tables), each stage one parallel batch. A point's bits depend on
    /// its own distances only, so any whole number of points, up to `N`, may go in one call (a worker's
    /// chunk): the bits of the chunks, concatenated, are those of all points at once, bit for bit.
    /// The bit table's output scale is the layout's (sized for the sum of `N` bits).
    ///
    /// Errors: [`Error::Shape`] for no ciphertext, a count not a multiple of `K`, or more than `N K`;
    /// as [`Comparator::min_of`]; table errors.
    pub fn assignment_bits(&self, distances: &[LweCiphertext]) -> Result<Vec<LweCiphertext>> {
        let (n, k) = (self.layout.points, self.layout.clusters);
        let len = distances.len();
        if len == 0 || !len.is_multiple_of(k) || len > n * k {
            return Err(Error::Shape {
                what: format!("distances of whole points ({k} per point, 1 to {n} points)"),
                expected: (len / k).clamp(1, n) * k,
                found: len,
            });
        }
        let minima = self.cmp.min_of(distances, k, Form::Lwe)?.ciphertexts;
        let diffs = distances
            .par_iter()
            .enumerate()
            .map(|(idx, d)| Ok(d.sub(&minima[idx / k])?))
            .collect::<Result<Vec<_>>>()?;
        Ok(self.cmp.pegasus().lut(&diffs, &self.bit_table)?)
    }

    /// The all-points part of sector 3: the counts `|C_j| = sum_i b_ij` of the bits of all `N` points
    /// ([`KMeansEvaluator::assignment_bits`], order `i K + j`), multiplied by `M`, switched back to the
    /// LWE key (PEGASUS Fig. 9), and their reciprocals by the table (`K` tables, one batch).
    ///
    /// Errors: [`Error::Shape`] for another number of ciphertexts than `N K`; key-switch and table
    /// errors (bits of another pipeline).
    pub fn reciprocals(&self, bits: &[LweCiphertext]) -> Result<Vec<LweCiphertext>> {
        let (n, k) = (self.layout.points, self.layout.clusters);
        if bits.len() != n * k {
            return Err(Error::Shape {
                what: "assignment bits of all points".into(),
                expected: n * k,
                found: bits.len(),
            });
        }
        let switch = self.cmp.key().switching_key();
        let ks_modulus = switch.params().modulus;
        let counts = (0..k)
            .into_par_iter()
            .map(|j| {
                let mut c = bits[j].clone();
                for i in 1..n {
                    c.add_assign(&bits[i * k + j])?;
                }
                c.mul_scalar_assign(self.count_factor);
                let c = if c.modulus().value() == ks_modulus {
                    c
                } else {
                    c.switch_modulus(ks_modulus)?
                };
                Ok(switch.switch(&c)?)
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(self.cmp.pegasus().lut(&counts, &self.reciprocal_table)?)
    }

    /// Sector 4 (repacking): the bits and the reciprocals into CKKS ciphertexts of the layout
    /// ([`PegasusEvaluator::repack`], twice).
    ///
    /// Errors: [`Error::Shape`] for another number of ciphertexts than `N K` bits and `K` reciprocals;
    /// as [`PegasusEvaluator::repack`].
    pub fn repack(&self, assignment: &Assignment) -> Result<Repacked> {
        let l = &self.layout;
        let (n, k) = (l.points, l.clusters);
        if assignment.bits.len() != n * k || assignment.reciprocals.len() != k {
            return Err(Error::Shape {
                what: "assignment (bits + reciprocals)".into(),
                expected: n * k + k,
                found: assignment.bits.len() + assignment.reciprocals.len(),
            });
        }
        let p = self.cmp.pegasus();
        let first = &assignment.bits[0];
        let zero = LweCiphertext::trivial(first.modulus(), first.dimension(), 0);
        let mut bits = Vec::with_capacity(l.slots());
        let mut recips = Vec::with_capacity(l.slots());
        for i in 0..l.block {
            for j in 0..l.stride {
                let inside = i < n && j < k;
                bits.push(if inside {
                    assignment.bits[i * k + j].clone()
                } else {
                    zero.clone()
                });
                recips.push(if inside {
                    assignment.reciprocals[j].clone()
                } else {
                    zero.clone()
                });
            }
        }
        let (b, r) = rayon::join(
            || p.repack(&bits, &self.bit_table),
            || p.repack(&recips, &self.reciprocal_table),
        );
        Ok(Repacked {
            bits: b?,
            reciprocals: r?,
        })
    }

    /// Sector 5 (centroid): `T_f = (B R) X_f` (two levels), summed over the slots of each cluster by
    /// `log2 P` rotations: the new centroids, in the layout of the old ones, multiplied by
    /// [`KMeansEvaluator::feature_factor`] like the points.
    ///
    /// Errors: [`Error::InvalidArgument`] for points of another layout; CKKS errors (not enough levels:
    /// the repacking's output level must be at least 3, keys).
    pub fn centroids(
        &self,
        points: &EncryptedPoints,
        repacked: &Repacked,
    ) -> Result<EncryptedCentroids> {
        self.check_layout(&points.layout, points.features.len(), "points")?;
        let br = self
            .ckks
            .multiply_rescale(&repacked.bits, &repacked.reciprocals)?;
        let steps = self.layout.rotation_steps();
        let features = points
            .features
            .par_iter()
            .map(|x| {
                let mut t = self.ckks.multiply_rescale(&br, x)?;
                for &s in &steps {
                    t = self.ckks.add(&t, &self.ckks.rotate(&t, s)?)?;
                }
                Ok(t)
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(EncryptedCentroids {
            features,
            layout: self.layout,
        })
    }

    /// One whole update (PEGASUS Section V.C, steps 1-3): the five sectors in order.
    ///
    /// Errors: as each sector.
    pub fn update(
        &self,
        points: &EncryptedPoints,
        centroids: &EncryptedCentroids,
    ) -> Result<EncryptedCentroids> {
        let d = self.distances(points, centroids)?;
        let lwes = self.extract(&d)?;
        let assignment = self.min_index(&lwes)?;
        let repacked = self.repack(&assignment)?;
        self.centroids(points, &repacked)
    }

    /// The assignment bits of `assignment` decrypted with the pipeline's LWE-side secrets (tests, the
    /// `rho` of benchmarks): `N` rows of `K`.
    ///
    /// Errors: [`Error::Lwe`] for secrets of other dimensions.
    pub fn decrypt_bits(
        &self,
        secrets: &PegasusSecretKeys,
        assignment: &Assignment,
    ) -> Result<Vec<Vec<f64>>> {
        let k = self.layout.clusters;
        let scale = self.bit_table.output_scale();
        let flat = assignment
            .bits
            .iter()
            .map(|ct| Ok(secrets.lut_ring.decrypt(ct)? as f64 / scale))
            .collect::<Result<Vec<_>>>()?;
        Ok(flat.chunks(k).map(<[f64]>::to_vec).collect())
    }

    fn check_layout(&self, layout: &KMeansLayout, count: usize, what: &str) -> Result<()> {
        if *layout != self.layout || count != self.layout.features {
            return Err(Error::InvalidArgument {
                what: "k-means ciphertexts",
                reason: format!(
                    "the {what} were packed for {} points, {} clusters, {} features ({count} \
                     ciphertexts); the evaluator's layout has {}, {}, {}",
                    layout.points,
                    layout.clusters,
                    layout.features,
                    self.layout.points,
                    self.layout.clusters,
                    self.layout.features
                ),
            });
        }
        Ok(())
    }
}
