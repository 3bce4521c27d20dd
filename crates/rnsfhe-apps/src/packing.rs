//! The packing of Kim, Song, Kim, Lee and Cheon ("Logistic regression model training based on the
//! approximate homomorphic encryption", BMC Medical Genomics 2018), used by RNS-CKKS Section 5.3: the whole
//! training set in **one** ciphertext.
//!
//! # Layout
//!
//! The `n x (d + 1)` matrix `Z` with rows `z_i = y_i (1, x_i)` is padded with zeros to `rows x columns`,
//! both powers of two (`rows >= n`, `columns >= d + 1`), and packed row-major: entry `(i, j)` goes to slot
//! `i * columns + j`. The ciphertext has exactly `slots = rows * columns` slots (sparse packing when that is
//! less than `N/2`), so that a rotation by `k` is a cyclic rotation of the packed matrix by `k` entries.
//! Three rotate-and-add patterns then work on rows and columns:
//!
//! * [`PackedLayout::sum_within_rows`]: rotations left by `1, 2, ..., columns/2`; column 0 of row `i` then
//!   holds the sum of row `i` (the other columns hold partial sums that run into the next row);
//! * [`PackedLayout::spread_first_column`]: rotations right by `1, 2, ..., columns/2`; if only column 0 of
//!   each row is non-zero (after a 0/1 mask), every entry of row `i` then holds the value of column 0 of
//!   row `i`;
//! * [`PackedLayout::sum_over_rows`]: rotations left by `columns, 2 columns, ..., (rows/2) columns`; every
//!   row then holds the sum of all rows (column-wise).
//!
//! A vector replicated in every row ([`PackedLayout::replicate`]) is the layout of the weights.
//! [`PackedLayout::rotation_steps`] lists the Galois keys these need (`2 log2(columns) + log2(rows)` keys).

use std::sync::Arc;

use rnsfhe_ckks::{Ciphertext, CkksContext, CkksEncryptor, Complex64, Csprng, Evaluator};

use crate::dataset::Dataset;
use crate::error::{Error, Result};

/// Where the rows of a packed matrix live in the slots of one ciphertext (see the
/// [module documentation](self)).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PackedLayout {
    samples: usize,
    width: usize,
    rows: usize,
    columns: usize,
}

impl PackedLayout {
    /// The layout of `samples` rows of `features + 1` entries (the constant column and the features).
    ///
    /// Errors: [`Error::EmptyData`] for no samples or no features.
    pub fn new(samples: usize, features: usize) -> Result<Self> {
        if samples == 0 {
            return Err(Error::EmptyData {
                what: "no samples to pack".into(),
            });
        }
        if features == 0 {
            return Err(Error::EmptyData {
                what: "no features to pack".into(),
            });
        }
        let width = features + 1;
        Ok(Self {
            samples,
            width,
            rows: samples.next_power_of_two(),
            columns: width.next_power_of_two(),
        })
    }

    /// The layout of a dataset's matrix `Z` (or `X`).
    ///
    /// Errors: as [`PackedLayout::new`].
    pub fn for_dataset(data: &Dataset) -> Result<Self> {
        Self::new(data.n_samples(), data.n_features())
    }

    /// Number of samples `n` (rows before padding).
    pub fn samples(&self) -> usize {
        self.samples
    }

    /// Entries per row before padding, `d + 1`.
    pub fn width(&self) -> usize {
        self.width
    }

    /// Rows after padding (a power of two).
    pub fn rows(&self) -> usize {
        self.rows
    }

    /// Columns after padding (a power of two).
    pub fn columns(&self) -> usize {
        self.columns
    }

    /// Slots of the ciphertext, `rows * columns`.
    pub fn slots(&self) -> usize {
        self.rows * self.columns
    }

    /// Checks that the layout fits `available` slots (`N/2` of a context).
    ///
    /// Errors: [`Error::TooManySlots`] with the sizes and the smallest ring degree that fits.
    pub fn check_fits(&self, available: usize) -> Result<()> {
        if self.slots() > available {
            return Err(Error::TooManySlots {
                samples: self.samples,
                width: self.width,
                rows: self.rows,
                columns: self.columns,
                needed: self.slots(),
                available,
                min_n: 2 * self.slots(),
            });
        }
        Ok(())
    }

    /// Packs `rows` (each of [`PackedLayout::width`] entries) row-major into `slots()` values.
    ///
    /// Errors: [`Error::Shape`] for a row count other than `samples()` or a row of another width,
    /// [`Error::NonFinite`].
    pub fn pack_rows(&self, rows: &[Vec<f64>]) -> Result<Vec<f64>> {
        if rows.len() != self.samples {
            return Err(Error::Shape {
                what: "rows to pack".into(),
                expected: self.samples,
                found: rows.len(),
            });
        }
        let mut out = vec![0.0; self.slots()];
        for (i, row) in rows.iter().enumerate() {
            if row.len() != self.width {
                return Err(Error::Shape {
                    what: format!("entries of row {i}"),
                    expected: self.width,
                    found: row.len(),
                });
            }
            for (j, &v) in row.iter().enumerate() {
                if !v.is_finite() {
                    return Err(Error::NonFinite {
                        what: "packed entry",
                        row: i,
                        column: j,
                        value: v,
                    });
                }
                out[i * self.columns + j] = v;
            }
        }
        Ok(out)
    }

    /// Packs the training matrix `Z` (rows `y_i (1, x_i)`, [`Dataset::z_rows`]) of `data`.
    ///
    /// Errors: [`Error::Shape`] if `data` has another sample or feature count than the layout.
    pub fn pack_z(&self, data: &Dataset) -> Result<Vec<f64>> {
        self.pack_rows(&data.z_rows())
    }

    /// Packs the rows `(1, x_i)` of `features` (for encrypted prediction).
    ///
    /// Errors: as [`PackedLayout::pack_rows`].
    pub fn pack_x(&self, features: &[Vec<f64>]) -> Result<Vec<f64>> {
        let rows: Vec<Vec<f64>> = features
            .iter()
            .map(|x| std::iter::once(1.0).chain(x.iter().copied()).collect())
            .collect();
        self.pack_rows(&rows)
    }

    /// `values` (of [`PackedLayout::width`] entries) in every row, including the padding rows.
    ///
    /// Errors: [`Error::Shape`] for another length.
    pub fn replicate(&self, values: &[f64]) -> Result<Vec<f64>> {
        if values.len() != self.width {
            return Err(Error::Shape {
                what: "values to replicate".into(),
                expected: self.width,
                found: values.len(),
            });
        }
        let mut out = vec![0.0; self.slots()];
        for row in out.chunks_exact_mut(self.columns) {
            row[..self.width].copy_from_slice(values);
        }
        Ok(out)
    }

    /// A replicated vector read back: the mean over all rows of their first [`PackedLayout::width`]
    /// entries. Every row holds the same values up to the CKKS error, so the mean only averages that error
    /// (the error is not uniform over the slots: with the fast basis conversion, key switching leaves a
    /// larger error in the few slots whose root of unity is close to 1, among them slot 0).
    ///
    /// Errors: [`Error::Shape`] if `slots` is shorter than the layout.
    pub fn read_replicated(&self, slots: &[f64]) -> Result<Vec<f64>> {
        if slots.len() < self.slots() {
            return Err(Error::Shape {
                what: "decrypted slots".into(),
                expected: self.slots(),
                found: slots.len(),
            });
        }
        let mut mean = vec![0.0; self.width];
        for row in slots[..self.slots()].chunks_exact(self.columns) {
            mean.iter_mut().zip(row).for_each(|(m, v)| *m += v);
        }
        mean.iter_mut().for_each(|m| *m /= self.rows as f64);
        Ok(mean)
    }

    /// Column 0 of the first `samples()` rows (one value per sample, e.g. scores after
    /// [`PackedLayout::sum_within_rows`]).
    ///
    /// Errors: [`Error::Shape`] if `slots` is shorter than the layout.
    pub fn read_first_column(&self, slots: &[f64]) -> Result<Vec<f64>> {
        if slots.len() < self.slots() {
            return Err(Error::Shape {
                what: "decrypted slots".into(),
                expected: self.slots(),
                found: slots.len(),
            });
        }
        Ok((0..self.samples).map(|i| slots[i * self.columns]).collect())
    }

    /// `value` in column 0 of every row and 0 elsewhere (the mask of Kim et al.'s inner product).
    pub fn first_column_mask(&self, value: f64) -> Vec<Complex64> {
        let mut out = vec![Complex64::new(0.0, 0.0); self.slots()];
        for row in out.chunks_exact_mut(self.columns) {
            row[0] = Complex64::new(value, 0.0);
        }
        out
    }

    /// The rotation steps of [`PackedLayout::sum_within_rows`] (`1, 2, ..., columns/2`),
    /// [`PackedLayout::spread_first_column`] (`-1, -2, ..., -columns/2`) and
    /// [`PackedLayout::sum_over_rows`] (`columns, 2 columns, ..., rows/2 columns`): the Galois keys
    /// training and prediction need (`KeyGenerator::galois_keys`).
    pub fn rotation_steps(&self) -> Vec<i64> {
        let mut steps = Vec::new();
        let mut k = 1;
        while k < self.columns {
            steps.push(k as i64);
            steps.push(-(k as i64));
            k *= 2;
        }
        let mut k = 1;
        while k < self.rows {
            steps.push((k * self.columns) as i64);
            k *= 2;
        }
        steps
    }

    /// Encodes `values` (e.g. [`PackedLayout::pack_z`]) in `slots()` slots at the top level and default
    /// scale of `ctx`, and encrypts them.
    ///
    /// Errors: [`Error::TooManySlots`] if the layout does not fit `N/2`; [`Error::Shape`] for another
    /// number of values; encoding and encryption errors.
    pub fn encrypt(
        &self,
        ctx: &Arc<CkksContext>,
        encryptor: &CkksEncryptor,
        values: &[f64],
        rng: &mut Csprng,
    ) -> Result<Ciphertext> {
        self.check_fits(ctx.max_slots())?;
        if values.len() != self.slots() {
            return Err(Error::Shape {
                what: "packed values to encrypt".into(),
                expected: self.slots(),
                found: values.len(),
            });
        }
        let pt = ctx.encode_real(values, self.slots(), ctx.max_level())?;
        Ok(encryptor.encrypt_plaintext(&pt, rng)?)
    }

    /// Checks that `ct` has this layout's slot count.
    ///
    /// Errors: [`Error::LayoutMismatch`].
    pub fn check_ciphertext(&self, ct: &Ciphertext) -> Result<()> {
        if ct.slots() != self.slots() {
            return Err(Error::LayoutMismatch {
                ciphertext: ct.slots(),
                layout: self.slots(),
            });
        }
        Ok(())
    }

    /// Column 0 of row `i` becomes the sum of row `i` (rotate-and-add, `log2(columns)` rotations; no
    /// level used; see the [module documentation](self)).
    ///
    /// Errors: [`Error::LayoutMismatch`]; evaluator errors (a missing Galois key names its step).
    pub fn sum_within_rows(&self, eval: &Evaluator, ct: &Ciphertext) -> Result<Ciphertext> {
        self.check_ciphertext(ct)?;
        Ok(eval.partial_sums(ct, self.columns)?)
    }

    /// Every entry of row `i` becomes the sum of the entries of row `i` at and left of it, which is column
    /// 0's value when only column 0 is non-zero (rotations right by `1, ..., columns/2`; no level used).
    ///
    /// Errors: as [`PackedLayout::sum_within_rows`].
    pub fn spread_first_column(&self, eval: &Evaluator, ct: &Ciphertext) -> Result<Ciphertext> {
        self.check_ciphertext(ct)?;
        let mut acc = ct.clone();
        let mut k = 1;
        while k < self.columns {
            let r = eval.rotate(&acc, -(k as i64))?;
            acc = eval.add(&acc, &r)?;
            k *= 2;
        }
        Ok(acc)
    }

    /// Every row becomes the column-wise sum of all rows (rotations left by `columns, ..., rows/2 columns`;
    /// no level used).
    ///
    /// Errors: as [`PackedLayout::sum_within_rows`].
    pub fn sum_over_rows(&self, eval: &Evaluator, ct: &Ciphertext) -> Result<Ciphertext> {
        self.check_ciphertext(ct)?;
        let mut acc = ct.clone();
        let mut k = 1;
        while k < self.rows {
            let r = eval.rotate(&acc, (k * self.columns) as i64)?;
            acc = eval.add(&acc, &r)?;
            k *= 2;
        }
        Ok(acc)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_4_layouts() {
        let lbw = PackedLayout::new(189, 9).unwrap();
        assert_eq!((lbw.rows(), lbw.columns(), lbw.slots()), (256, 16, 4096));
        let uis = PackedLayout::new(575, 8).unwrap();
        assert_eq!((uis.rows(), uis.columns(), uis.slots()), (1024, 16, 16384));
        assert!(uis.check_fits(1 << 15).is_ok());
        match uis.check_fits(1 << 13) {
            Err(Error::TooManySlots {
                needed: 16384,
                available: 8192,
                min_n: 32768,
                ..
            }) => {}
            other => panic!("{other:?}"),
        }
        let mut steps = uis.rotation_steps();
        steps.sort_unstable();
        let mut want = vec![-8, -4, -2, -1, 1, 2, 4, 8];
        want.extend((0..10).map(|k| 16i64 << k));
        want.sort_unstable();
        assert_eq!(steps, want);
    }

    #[test]
    fn packing_is_row_major_with_padding() {
        let l = PackedLayout::new(3, 2).unwrap();
        assert_eq!((l.rows(), l.columns()), (4, 4));
        let v = l
            .pack_rows(&[
                vec![1.0, 2.0, 3.0],
                vec![4.0, 5.0, 6.0],
                vec![7.0, 8.0, 9.0],
            ])
            .unwrap();
        assert_eq!(
            v,
            vec![1.0, 2.0, 3.0, 0.0, 4.0, 5.0, 6.0, 0.0, 7.0, 8.0, 9.0, 0.0, 0.0, 0.0, 0.0, 0.0]
        );
        assert_eq!(l.read_first_column(&v).unwrap(), vec![1.0, 4.0, 7.0]);
        let r = l.replicate(&[1.0, -1.0, 0.5]).unwrap();
        assert_eq!(&r[12..16], &[1.0, -1.0, 0.5, 0.0]);
        assert_eq!(l.read_replicated(&r).unwrap(), vec![1.0, -1.0, 0.5]);
        assert!(matches!(
            l.read_replicated(&r[..4]),
            Err(Error::Shape { .. })
        ));
        assert!(matches!(
            l.pack_rows(&[vec![1.0, 2.0, f64::INFINITY], vec![0.0; 3], vec![0.0; 3]]),
            Err(Error::NonFinite {
                row: 0,
                column: 2,
                ..
            })
        ));
        assert!(matches!(
            l.pack_rows(&[vec![1.0; 3]]),
            Err(Error::Shape { .. })
        ));
        assert!(matches!(
            PackedLayout::new(0, 3),
            Err(Error::EmptyData { .. })
        ));
    }
}
