//! Repacking LWE ciphertexts into one CKKS ciphertext by PEGASUS's linear transform (Fig. 5,
//! Theorem 2; Fig. 6 steps 8-9).
//!
//! The partial decryptions `b_i + <a_i, s>` of `l` LWE ciphertexts (modulus `q`, dimension `n`) are the
//! linear map `A s + b` of the LWE secret. PEGASUS evaluates it on the repacking key, one CKKS ciphertext
//! of the slots `s` ([`RepackingKey`]), with the plain matrix `M = A / q` and vector `t = b / q` (entries
//! centered in `[-1/2, 1/2)`): the result holds `(A s + b) / q = Delta m_i / q + I_i` for integers `I_i`,
//! which the approximate reduction modulo 1 (F_mod) then removes.
//!
//! Fig. 5 makes the `l x n` matrix square by *tiling*: with `n'' = max(l, n)` and `n~ = min(l, n)`, the
//! diagonals `m~_j[r] = M[r mod l, (r + j) mod n]` (`r < n''`, `j < n~`) multiply the rotations of the
//! key viewed as `n''` slots (the `n` slots of `s` repeat `n'' / n` times). For a tall matrix (`l >= n`)
//! the sum is `M s`; for a short one (`l < n`) slot `r` holds the part of row `r mod l` over the columns
//! `r .. r + l`, and `log2(n / l)` rotations by `l, 2l, ...` sum the parts (Fig. 5 steps 6-8).

use std::sync::Arc;

use rnsfhe_ckks::linear_transform::LinearTransform;
use rnsfhe_ckks::{
    Ciphertext, CkksContext, CkksEncryptor, Complex64, Csprng, Evaluator, SecretKey,
};
use rnsfhe_lwe::{LweCiphertext, LweDimension, LweSecretKey};
use rnsfhe_ring::parallel::active_wait;

use crate::error::{PegasusError, PegasusResult};

/// The repacking key of PEGASUS Fig. 6: `RK = RLWE_s(Ecd(s_lwe, Delta_r))`, one CKKS ciphertext of the
/// LWE secret's coefficients in `n` slots at the top level of the chain.
///
/// Its size is one ciphertext (PEGASUS Table I: `O(2 N log q)` bits, about 12 MB at `N = 2^16`), against
/// `n` gadget ciphertexts for CHIMERA's key.
#[derive(Clone, Debug)]
pub struct RepackingKey {
    key: Ciphertext,
    dimension: LweDimension,
}

impl RepackingKey {
    /// Encrypts the coefficients of `lwe_key` under the CKKS secret `sk` in `n` slots at the top level,
    /// at `scale` (`Delta_r`; the diagonals are encoded at the scale of the prime their product drops, so
    /// the transform's output keeps `Delta_r`: the pipeline chooses the scale F_mod takes without a
    /// level, [`rnsfhe_ckks::eval_mod::EvalMod::normalized_scale`]).
    ///
    /// Errors: [`PegasusError::InvalidParams`] if the LWE dimension exceeds the slots (`N / 2`);
    /// CKKS errors of the encryption.
    pub fn generate(
        ctx: &Arc<CkksContext>,
        sk: &SecretKey,
        lwe_key: &LweSecretKey,
        scale: f64,
        rng: &mut Csprng,
    ) -> PegasusResult<Self> {
        let dimension = lwe_key.dimension();
        let n = dimension.get();
        if n > ctx.max_slots() {
            return Err(PegasusError::InvalidParams {
                what: "LWE dimension",
                reason: format!(
                    "the repacking key holds the LWE secret in slots: n = {n} must be at most N/2 = {}",
                    ctx.max_slots()
                ),
            });
        }
        let values: Vec<Complex64> = lwe_key
            .coefficients()
            .iter()
            .map(|&s| Complex64::new(s as f64, 0.0))
            .collect();
        let top = ctx.max_level();
        let pt = ctx.encode_at_scale(&values, n, top, scale)?;
        let key = CkksEncryptor::with_secret_key(ctx, sk)?.encrypt_plaintext(&pt, rng)?;
        Ok(Self { key, dimension })
    }

    /// A key loaded from the wire: `key` must hold `dimension` slots (checked by the loader).
    pub(crate) fn from_wire(key: Ciphertext, dimension: LweDimension) -> Self {
        Self { key, dimension }
    }

    /// The key's ciphertext (`n` slots, top level).
    pub fn ciphertext(&self) -> &Ciphertext {
        &self.key
    }

    /// The LWE dimension `n` of the secret it holds.
    pub fn lwe_dimension(&self) -> LweDimension {
        self.dimension
    }
}

/// The plain data of Fig. 5 for a batch of LWE ciphertexts: the tiled diagonals of `M = A / q` (step 1),
/// the vector `t = b / q`, and the shape.
#[derive(Clone, Debug, PartialEq)]
pub struct TiledMatrix {
    /// `l` rounded up to a power of two (rows past the ciphertexts are zero).
    pub rows: usize,
    /// The LWE dimension `n` (the columns).
    pub columns: usize,
    /// `m~_j` for `j < min(rows, n)`, each of `max(rows, n)` entries.
    pub diagonals: Vec<Vec<f64>>,
    /// `t = b / q`, centered, one entry per row (zero past the ciphertexts).
    pub offsets: Vec<f64>,
}

impl TiledMatrix {
    /// Fig. 5 step 1 for `cts` (all of one dimension and modulus): rows padded to a power of two `l`,
    /// `M[i][k] = [a_i[k]]_q / q` and `t[i] = [b_i]_q / q` with `[.]_q` the centered residue.
    ///
    /// Errors: [`PegasusError::InvalidParams`] for no ciphertexts or a dimension that is not a power of
    /// two; [`PegasusError::Lwe`] for ciphertexts of different dimensions or moduli.
    pub fn new(cts: &[LweCiphertext]) -> PegasusResult<Self> {
        let first = cts.first().ok_or_else(|| PegasusError::InvalidParams {
            what: "LWE ciphertexts",
            reason: "repacking needs at least one ciphertext".into(),
        })?;
        for ct in cts {
            first.check_compatible(ct, "repacking")?;
        }
        let n = first.dimension().get();
        if !n.is_power_of_two() {
            return Err(PegasusError::InvalidParams {
                what: "LWE dimension",
                reason: format!("the tiling of Fig. 5 needs a power-of-two dimension, not {n}"),
            });
        }
        let q = first.modulus().value();
        let centered = |x: u64| -> f64 {
            let c = if x >= q - q / 2 {
                x as i128 - q as i128
            } else {
                x as i128
            };
            c as f64 / q as f64
        };
        let rows = cts.len().next_power_of_two();
        let (tall, short) = (rows.max(n), rows.min(n));
        let entry = |r: usize, c: usize| cts.get(r).map_or(0.0, |ct| centered(ct.a()[c]));
        let diagonals = (0..short)
            .map(|j| (0..tall).map(|r| entry(r % rows, (r + j) % n)).collect())
            .collect();
        let offsets = (0..rows)
            .map(|r| cts.get(r).map_or(0.0, |ct| centered(ct.b())))
            .collect();
        Ok(Self {
            rows,
            columns: n,
            diagonals,
            offsets,
        })
    }

    /// The slot count the diagonals act on, `max(l, n)`.
    pub fn tiled_slots(&self) -> usize {
        self.rows.max(self.columns)
    }

    /// The rotation steps of the column sums of a short matrix (Fig. 5 steps 6-8): `l, 2l, ..., n/2`
    /// (none for a tall one).
    pub fn column_sum_steps(&self) -> Vec<i64> {
        let mut steps = Vec::new();
        let mut step = self.rows;
        while step < self.columns {
            steps.push(step as i64);
            step *= 2;
        }
        steps
    }

    /// The transform on a plain secret, in the order Fig. 5 computes it (tiled diagonals, then the
    /// column sums): `M s + t` for each row. A reference for tests and for checking a batch before it
    /// is encrypted; not used by the homomorphic path.
    pub fn apply_plain(&self, s: &[f64]) -> Vec<f64> {
        let slots = self.tiled_slots();
        let z = |r: usize| s[r % self.columns];
        let mut y: Vec<f64> = (0..slots)
            .map(|r| {
                self.diagonals
                    .iter()
                    .enumerate()
                    .map(|(j, d)| d[r] * z(r + j))
                    .sum()
            })
            .collect();
        for step in self.column_sum_steps() {
            let step = step as usize;
            y = (0..slots).map(|r| y[r] + y[(r + step) % slots]).collect();
        }
        (0..self.rows).map(|r| y[r] + self.offsets[r]).collect()
    }
}

/// PEGASUS.LT (Fig. 5, Theorem 2) for the partial decryptions of `cts`: a CKKS ciphertext of
/// `l = cts.len().next_power_of_two()` slots holding `(b_i + <a_i, s>) / q = Delta m_i / q + I_i` (slot
/// `i` for ciphertext `i`, zero past them) at the key's scale `Delta_r`, one level below `level`.
///
/// `level` (default: the key's) is the level the product runs at: PEGASUS's tunable output level (Fig. 6,
/// Section IV.C: the repacked ciphertext keeps `level - 1` limbs before F_mod). The diagonals are encoded
/// at the prime the rescaling drops, so the output scale is exactly the key's. Rotations: those of
/// [`repacking_rotation_steps`].
///
/// Errors: [`PegasusError::InvalidParams`] for no ciphertexts, more rows than the slots hold, or a
/// dimension other than the key's; [`PegasusError::Lwe`] for mixed dimensions or moduli;
/// [`PegasusError::Ckks`] for a level the key does not reach, level 1, or a missing rotation key.
pub fn linear_transform(
    evaluator: &Evaluator,
    key: &RepackingKey,
    cts: &[LweCiphertext],
    level: Option<usize>,
) -> PegasusResult<Ciphertext> {
    active_wait(|| linear_transform_waiting(evaluator, key, cts, level))
}

/// The work of [`linear_transform`], which runs it inside [`active_wait`] (a long
/// sequence of short parallel sections).
fn linear_transform_waiting(
    evaluator: &Evaluator,
    key: &RepackingKey,
    cts: &[LweCiphertext],
    level: Option<usize>,
) -> PegasusResult<Ciphertext> {
    let ctx = evaluator.context();
    let m = TiledMatrix::new(cts)?;
    if m.columns != key.dimension.get() {
        return Err(PegasusError::InvalidParams {
            what: "LWE dimension",
            reason: format!(
                "the ciphertexts have dimension {}, the repacking key holds a secret of dimension {}",
                m.columns, key.dimension
            ),
        });
    }
    let slots = m.tiled_slots();
    if slots > ctx.max_slots() {
        return Err(PegasusError::InvalidParams {
            what: "LWE ciphertexts",
            reason: format!(
                "{} ciphertexts (rounded up to {}) do not fit the {} slots of one ciphertext",
                cts.len(),
                m.rows,
                ctx.max_slots()
            ),
        });
    }
    let level = level.unwrap_or(key.key.level());
    let complex = |d: &Vec<f64>| d.iter().map(|&x| Complex64::new(x, 0.0)).collect();
    let lt = LinearTransform::from_diagonals(
        slots,
        m.diagonals
            .iter()
            .enumerate()
            .map(|(j, d)| (j as i64, complex(d))),
    )?;
    let scale = LinearTransform::exact_rescale_scale(ctx, level)?;
    let encoded = lt.encode(ctx, level, scale, None)?;
    let mut ct = evaluator.linear_transform(&key.key, &encoded)?;
    for step in m.column_sum_steps() {
        let rotated = evaluator.rotate(&ct, step)?;
        ct = evaluator.add(&ct, &rotated)?;
    }
    let ct = evaluator.rescale(&ct)?;
    // The short case's slots repeat with period l: the same plaintext read as l slots.
    let scale = ct.scale();
    let ct = Ciphertext::new(ctx, ct.into_inner(), scale, m.rows)?;
    let offsets: Vec<Complex64> = m.offsets.iter().map(|&t| Complex64::new(t, 0.0)).collect();
    let pt = evaluator.encode_like(&offsets, &ct)?;
    Ok(evaluator.add_plain(&ct, &pt)?)
}

/// The rotation steps [`linear_transform`] needs for batches of up to `max_rows` LWE ciphertexts of
/// dimension `n` (every power-of-two row count up to `max_rows`: the tiled transform's baby and giant
/// steps and the column sums), for the CKKS key generator.
///
/// Errors: [`PegasusError::InvalidParams`] unless `n` is a power of two and `max_rows >= 1`.
pub fn repacking_rotation_steps(n: usize, max_rows: usize) -> PegasusResult<Vec<i64>> {
    if !n.is_power_of_two() || max_rows == 0 {
        return Err(PegasusError::InvalidParams {
            what: "repacking size",
            reason: format!(
                "the LWE dimension ({n}) must be a power of two and the batch size ({max_rows}) at least 1"
            ),
        });
    }
    let mut steps = Vec::new();
    let mut rows = 1;
    while rows <= max_rows.next_power_of_two() {
        let (slots, diagonals) = (rows.max(n), rows.min(n));
        let ones = vec![Complex64::new(1.0, 0.0); slots];
        let lt = LinearTransform::from_diagonals(
            slots,
            (0..diagonals).map(|j| (j as i64, ones.clone())),
        )?;
        steps.extend(lt.rotation_steps(None)?);
        let mut step = rows;
        while step < n {
            steps.push(step as i64);
            step *= 2;
        }
        rows *= 2;
    }
    steps.sort_unstable();
    steps.dedup();
    Ok(steps)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};

    fn batch(l: usize, n: usize, q: u64, seed: u64) -> (Vec<LweCiphertext>, Vec<i64>) {
        let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
        let s: Vec<i64> = (0..n).map(|_| rng.gen_range(-1..=1)).collect();
        let cts = (0..l)
            .map(|_| {
                let a = (0..n).map(|_| rng.gen_range(0..q)).collect();
                LweCiphertext::from_parts(q, rng.gen_range(0..q), a).unwrap()
            })
            .collect();
        (cts, s)
    }

    /// `(b + <a, s>) / q` reduced to the nearest integer's remainder, from the integers.
    fn phase_mod_one(ct: &LweCiphertext, s: &[i64]) -> f64 {
        let q = ct.modulus().value() as i128;
        let mut acc = ct.b() as i128;
        for (&a, &sk) in ct.a().iter().zip(s) {
            acc += a as i128 * sk as i128;
        }
        let r = acc.rem_euclid(q);
        let c = if r >= q - q / 2 { r - q } else { r };
        c as f64 / q as f64
    }

    #[test]
    fn the_tiling_computes_every_partial_decryption() {
        let q = (1u64 << 45) - 55;
        // Tall, square, short, and a row count that is not a power of two.
        for (l, n) in [(64, 16), (16, 16), (4, 16), (5, 16), (1, 8)] {
            let (cts, s) = batch(l, n, q, (l * 100 + n) as u64);
            let m = TiledMatrix::new(&cts).unwrap();
            assert_eq!(m.diagonals.len(), l.next_power_of_two().min(n));
            let sf: Vec<f64> = s.iter().map(|&x| x as f64).collect();
            let y = m.apply_plain(&sf);
            for (i, ct) in cts.iter().enumerate() {
                // Equal modulo 1: the transform leaves the integer part I_i for F_mod.
                let d = y[i] - phase_mod_one(ct, &s);
                assert!(
                    (d - d.round()).abs() < 1e-9,
                    "l = {l}, n = {n}, row {i}: {d}"
                );
                assert!(d.abs() <= n as f64 / 2.0 + 1.0);
            }
            for y in &y[l..] {
                assert_eq!(*y, 0.0);
            }
        }
    }

    #[test]
    fn mismatched_batches_are_refused() {
        let q = (1u64 << 45) - 55;
        assert!(TiledMatrix::new(&[]).is_err());
        let (mut cts, _) = batch(2, 8, q, 1);
        cts.push(batch(1, 16, q, 2).0.remove(0));
        assert!(matches!(TiledMatrix::new(&cts), Err(PegasusError::Lwe(_))));
        let odd = LweCiphertext::from_parts(q, 0, vec![0; 6]).unwrap();
        assert!(TiledMatrix::new(&[odd]).is_err());
    }
}
