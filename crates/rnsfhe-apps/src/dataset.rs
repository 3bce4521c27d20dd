//! Datasets for logistic regression: the two medical datasets of RNS-CKKS Table 4 (lbw and uis, shipped
//! under `data/`, see `data/README.md` for their source, licence and the derivation of the uis label) and
//! any numeric CSV file, with the normalization of Kim, Song, Kim, Lee and Cheon ("Logistic regression model
//! training based on the approximate homomorphic encryption", BMC Medical Genomics 11(Suppl 4):83, 2018).
//!
//! # Normalization
//!
//! [`Dataset::normalize`] divides every feature by its largest absolute value over the samples, so that all
//! features lie in `[-1, 1]` (Kim et al. normalize the columns of `Z = [y_i (1, x_i)]` this way; since
//! `|y_i| = 1` it is the same as normalizing the columns of `X`, and the constant column is untouched). A
//! feature that is zero everywhere is left as it is. The normalization keeps the inner products
//! `beta^T z_i` of the first iterations well inside `[-8, 8]`, the interval on which the least-squares
//! sigmoid polynomials approximate the sigmoid.

use std::fs;
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};

/// Samples `x_i` with `d` real features and binary labels `y_i` in `{-1, +1}`.
#[derive(Debug, Clone, PartialEq)]
pub struct Dataset {
    name: String,
    feature_names: Vec<String>,
    features: Vec<Vec<f64>>,
    labels: Vec<f64>,
}

/// The per-feature divisors of [`Dataset::normalize`] (`x_j / scales[j]`), to apply to new samples.
#[derive(Debug, Clone, PartialEq)]
pub struct Normalization {
    scales: Vec<f64>,
}

impl Normalization {
    /// The divisors, one per feature (1 for a feature that is zero everywhere).
    pub fn scales(&self) -> &[f64] {
        &self.scales
    }

    /// `x_j / scales[j]` for every sample.
    ///
    /// Errors: [`Error::Shape`] for a sample with another number of features.
    pub fn apply(&self, features: &[Vec<f64>]) -> Result<Vec<Vec<f64>>> {
        features
            .iter()
            .map(|row| {
                if row.len() != self.scales.len() {
                    return Err(Error::Shape {
                        what: "features of a sample to normalize".into(),
                        expected: self.scales.len(),
                        found: row.len(),
                    });
                }
                Ok(row.iter().zip(&self.scales).map(|(x, s)| x / s).collect())
            })
            .collect()
    }
}

/// The repository's `data/` directory (`rnsfhe-apps` lives in `crates/rnsfhe-apps`).
pub fn data_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../data")
}

/// One parsed CSV file: the header and the numeric rows.
struct Csv {
    path: PathBuf,
    header: Vec<String>,
    rows: Vec<Vec<f64>>,
}

impl Csv {
    fn read(path: &Path) -> Result<Self> {
        let text = fs::read_to_string(path).map_err(|source| Error::Io {
            path: path.to_path_buf(),
            source,
        })?;
        let csv_err = |line: usize, reason: String| Error::Csv {
            path: path.to_path_buf(),
            line,
            reason,
        };
        let mut lines = text.lines().enumerate();
        let header: Vec<String> = match lines.next() {
            Some((_, h)) => h
                .split(',')
                .map(|s| s.trim().trim_matches('"').to_string())
                .collect(),
            None => return Err(csv_err(1, "the file is empty (no header)".into())),
        };
        let mut rows = Vec::new();
        for (i, line) in lines {
            if line.trim().is_empty() {
                continue;
            }
            let fields: Vec<&str> = line.split(',').collect();
            if fields.len() != header.len() {
                return Err(csv_err(
                    i + 1,
                    format!(
                        "{} fields, but the header has {}",
                        fields.len(),
                        header.len()
                    ),
                ));
            }
            let row = fields
                .iter()
                .zip(&header)
                .map(|(f, name)| {
                    let f = f.trim().trim_matches('"');
                    f.parse::<f64>().map_err(|_| {
                        csv_err(i + 1, format!("column {name:?}: {f:?} is not a number"))
                    })
                })
                .collect::<Result<Vec<f64>>>()?;
            rows.push(row);
        }
        Ok(Self {
            path: path.to_path_buf(),
            header,
            rows,
        })
    }

    fn column(&self, name: &str) -> Result<usize> {
        self.header
            .iter()
            .position(|h| h == name)
            .ok_or_else(|| Error::Csv {
                path: self.path.clone(),
                line: 1,
                reason: format!("no column {name:?} (columns: {})", self.header.join(", ")),
            })
    }
}

impl Dataset {
    /// A dataset from features (`features[i][j]`, sample `i`, feature `j`) and labels (0/1 or -1/+1; stored
    /// as -1/+1).
    ///
    /// Errors: [`Error::EmptyData`] without samples or features, [`Error::Shape`] for rows of different
    /// lengths or a label count other than the sample count, [`Error::NonFinite`] for NaN or infinite
    /// features, [`Error::InvalidLabel`] for labels outside `{0, 1}` and `{-1, 1}`.
    pub fn new(
        name: impl Into<String>,
        feature_names: Vec<String>,
        features: Vec<Vec<f64>>,
        labels: &[f64],
    ) -> Result<Self> {
        if features.is_empty() {
            return Err(Error::EmptyData {
                what: "no samples".into(),
            });
        }
        let d = features[0].len();
        if d == 0 {
            return Err(Error::EmptyData {
                what: "samples without features".into(),
            });
        }
        if feature_names.len() != d {
            return Err(Error::Shape {
                what: "feature names".into(),
                expected: d,
                found: feature_names.len(),
            });
        }
        if labels.len() != features.len() {
            return Err(Error::Shape {
                what: "labels (one per sample)".into(),
                expected: features.len(),
                found: labels.len(),
            });
        }
        for (row, x) in features.iter().enumerate() {
            if x.len() != d {
                return Err(Error::Shape {
                    what: format!("features of sample {row}"),
                    expected: d,
                    found: x.len(),
                });
            }
            if let Some((column, &value)) = x.iter().enumerate().find(|(_, v)| !v.is_finite()) {
                return Err(Error::NonFinite {
                    what: "feature",
                    row,
                    column,
                    value,
                });
            }
        }
        let labels = labels
            .iter()
            .enumerate()
            .map(|(row, &y)| {
                if y == 1.0 {
                    Ok(1.0)
                } else if y == 0.0 || y == -1.0 {
                    Ok(-1.0)
                } else {
                    Err(Error::InvalidLabel { row, value: y })
                }
            })
            .collect::<Result<Vec<f64>>>()?;
        Ok(Self {
            name: name.into(),
            feature_names,
            features,
            labels,
        })
    }

    /// Reads a numeric CSV file with a header line: the label from column `label` and the features from
    /// `feature_columns`, in that order.
    ///
    /// Errors: [`Error::Io`], [`Error::Csv`] (missing column, non-numeric field, wrong field count), and
    /// those of [`Dataset::new`].
    pub fn from_csv(path: impl AsRef<Path>, label: &str, feature_columns: &[&str]) -> Result<Self> {
        let path = path.as_ref();
        let csv = Csv::read(path)?;
        let y = csv.column(label)?;
        let cols = feature_columns
            .iter()
            .map(|c| csv.column(c))
            .collect::<Result<Vec<usize>>>()?;
        let features = csv
            .rows
            .iter()
            .map(|r| cols.iter().map(|&c| r[c]).collect())
            .collect();
        let labels: Vec<f64> = csv.rows.iter().map(|r| r[y]).collect();
        let name = path
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        Self::new(
            name,
            feature_columns.iter().map(|c| c.to_string()).collect(),
            features,
            &labels,
        )
    }

    /// The low birth weight study (lbw, Hosmer and Lemeshow; `data/lbw.csv`, R's MASS `birthwt`): 189
    /// samples, label `low` (59 positives), and the 9 features of RNS-CKKS Table 4: `age`, `lwt`,
    /// `race_black`, `race_other`, `smoke`, `ptl`, `ht`, `ui`, `ftv`. The three-level `race` (1 white,
    /// 2 black, 3 other) is coded by two indicator variables (Hosmer and Lemeshow's design variables, white
    /// the reference), which is how the 8 columns of the file give the 9 features of the paper's table.
    ///
    /// Errors: as [`Dataset::load_lbw_from`].
    pub fn load_lbw() -> Result<Self> {
        Self::load_lbw_from(data_dir().join("lbw.csv"))
    }

    /// [`Dataset::load_lbw`] from another copy of `lbw.csv` (columns `low`, `age`, `lwt`, `race`, `smoke`,
    /// `ptl`, `ht`, `ui`, `ftv`).
    ///
    /// Errors: [`Error::Io`], [`Error::Csv`], [`Error::InvalidArgument`] for a `race` outside 1..3, and
    /// those of [`Dataset::new`].
    pub fn load_lbw_from(path: impl AsRef<Path>) -> Result<Self> {
        let path = path.as_ref();
        let csv = Csv::read(path)?;
        let col = |n: &str| csv.column(n);
        let (low, race) = (col("low")?, col("race")?);
        let before: Vec<usize> = ["age", "lwt"]
            .iter()
            .map(|c| col(c))
            .collect::<Result<_>>()?;
        let after: Vec<usize> = ["smoke", "ptl", "ht", "ui", "ftv"]
            .iter()
            .map(|c| col(c))
            .collect::<Result<_>>()?;
        let mut features = Vec::with_capacity(csv.rows.len());
        for (i, r) in csv.rows.iter().enumerate() {
            let race_value = r[race];
            if ![1.0, 2.0, 3.0].contains(&race_value) {
                return Err(Error::Csv {
                    path: path.to_path_buf(),
                    line: i + 2,
                    reason: format!(
                        "race = {race_value}, expected 1 (white), 2 (black) or 3 (other)"
                    ),
                });
            }
            let mut x: Vec<f64> = before.iter().map(|&c| r[c]).collect();
            x.push(f64::from(u8::from(race_value == 2.0)));
            x.push(f64::from(u8::from(race_value == 3.0)));
            x.extend(after.iter().map(|&c| r[c]));
            features.push(x);
        }
        let labels: Vec<f64> = csv.rows.iter().map(|r| r[low]).collect();
        let names = [
            "age",
            "lwt",
            "race_black",
            "race_other",
            "smoke",
            "ptl",
            "ht",
            "ui",
            "ftv",
        ];
        Self::new(
            "lbw",
            names.iter().map(|s| s.to_string()).collect(),
            features,
            &labels,
        )
    }

    /// The UMARU impact study (uis, Hosmer, Lemeshow and May; `data/uis.csv`, R's quantreg `uis`): 575
    /// samples, the 8 features of RNS-CKKS Table 4 (`AGE`, `BECK`, `HC`, `IV`, `NDT`, `RACE`, `TREAT`,
    /// `SITE`) and the label `DFREE` (147 positives; derived from the time to relapse, `TIME >= 365` days,
    /// see `data/README.md`).
    ///
    /// Errors: as [`Dataset::load_uis_from`].
    pub fn load_uis() -> Result<Self> {
        Self::load_uis_from(data_dir().join("uis.csv"))
    }

    /// [`Dataset::load_uis`] from another copy of `uis.csv`.
    ///
    /// Errors: as [`Dataset::from_csv`].
    pub fn load_uis_from(path: impl AsRef<Path>) -> Result<Self> {
        let mut d = Self::from_csv(
            path,
            "DFREE",
            &["AGE", "BECK", "HC", "IV", "NDT", "RACE", "TREAT", "SITE"],
        )?;
        d.name = "uis".into();
        Ok(d)
    }

    /// The dataset's name (`lbw`, `uis`, or the file stem of a CSV file).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Number of samples `n`.
    pub fn n_samples(&self) -> usize {
        self.features.len()
    }

    /// Number of features `d` (without the constant column).
    pub fn n_features(&self) -> usize {
        self.feature_names.len()
    }

    /// The feature names.
    pub fn feature_names(&self) -> &[String] {
        &self.feature_names
    }

    /// The features, `features()[i][j]` for sample `i` and feature `j`.
    pub fn features(&self) -> &[Vec<f64>] {
        &self.features
    }

    /// The labels, -1 or +1.
    pub fn labels(&self) -> &[f64] {
        &self.labels
    }

    /// Number of samples with label +1.
    pub fn positives(&self) -> usize {
        self.labels.iter().filter(|&&y| y > 0.0).count()
    }

    /// The first `count` samples (all of them if `count` exceeds the sample count), e.g. for small tests.
    ///
    /// Errors: [`Error::EmptyData`] for `count = 0`.
    pub fn head(&self, count: usize) -> Result<Self> {
        let k = count.min(self.n_samples());
        Self::new(
            self.name.clone(),
            self.feature_names.clone(),
            self.features[..k].to_vec(),
            &self.labels[..k],
        )
    }

    /// The dataset with every feature divided by its largest absolute value (into `[-1, 1]`; see the
    /// [module documentation](self)), and the divisors.
    pub fn normalize(&self) -> (Self, Normalization) {
        let d = self.n_features();
        let scales: Vec<f64> = (0..d)
            .map(|j| {
                let m = self
                    .features
                    .iter()
                    .map(|x| x[j].abs())
                    .fold(0.0f64, f64::max);
                if m > 0.0 {
                    m
                } else {
                    1.0
                }
            })
            .collect();
        let features = self
            .features
            .iter()
            .map(|x| x.iter().zip(&scales).map(|(v, s)| v / s).collect())
            .collect();
        (
            Self {
                name: self.name.clone(),
                feature_names: self.feature_names.clone(),
                features,
                labels: self.labels.clone(),
            },
            Normalization { scales },
        )
    }

    /// The rows `z_i = y_i (1, x_i)` of the matrix `Z` of RNS-CKKS Section 5.3 (the loss is
    /// `J(beta) = sum_i log(1 + exp(-beta^T z_i))`).
    pub fn z_rows(&self) -> Vec<Vec<f64>> {
        self.features
            .iter()
            .zip(&self.labels)
            .map(|(x, &y)| std::iter::once(y).chain(x.iter().map(|v| y * v)).collect())
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lbw_has_the_shape_of_table_4() {
        let d = Dataset::load_lbw().unwrap();
        assert_eq!(d.n_samples(), 189);
        assert_eq!(d.n_features(), 9, "RNS-CKKS Table 4: 9 features");
        assert_eq!(d.positives(), 59);
        // First row of the file: 0,19,182,2,0,0,0,1,0 (race 2 = black).
        assert_eq!(
            d.features()[0],
            vec![19.0, 182.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0]
        );
        assert_eq!(d.labels()[0], -1.0);
    }

    #[test]
    fn uis_has_the_shape_of_table_4() {
        let d = Dataset::load_uis().unwrap();
        assert_eq!(d.n_samples(), 575);
        assert_eq!(d.n_features(), 8, "RNS-CKKS Table 4: 8 features");
        assert_eq!(d.positives(), 147);
        assert_eq!(
            d.features()[0],
            vec![39.0, 9.0, 4.0, 3.0, 1.0, 0.0, 1.0, 0.0]
        );
    }

    #[test]
    fn normalization_maps_into_the_unit_interval() {
        let d = Dataset::load_uis().unwrap();
        let (n, norm) = d.normalize();
        for j in 0..n.n_features() {
            let m = n.features().iter().map(|x| x[j].abs()).fold(0.0, f64::max);
            assert!((m - 1.0).abs() < 1e-15, "feature {j}: max |x| = {m}");
        }
        assert_eq!(norm.apply(d.features()).unwrap(), n.features());
        let z = n.z_rows();
        assert_eq!(z[0][0], n.labels()[0]);
        assert_eq!(z[0].len(), 9);
    }

    #[test]
    fn bad_inputs_are_reported() {
        let names = vec!["a".to_string()];
        assert!(matches!(
            Dataset::new("t", names.clone(), vec![], &[]),
            Err(Error::EmptyData { .. })
        ));
        assert!(matches!(
            Dataset::new("t", names.clone(), vec![vec![f64::NAN]], &[1.0]),
            Err(Error::NonFinite {
                row: 0,
                column: 0,
                ..
            })
        ));
        assert!(matches!(
            Dataset::new("t", names.clone(), vec![vec![1.0]], &[2.0]),
            Err(Error::InvalidLabel { row: 0, .. })
        ));
        assert!(matches!(
            Dataset::new(
                "t",
                names.clone(),
                vec![vec![1.0], vec![1.0, 2.0]],
                &[1.0, 0.0]
            ),
            Err(Error::Shape { .. })
        ));
        assert!(matches!(
            Dataset::from_csv("/nonexistent/file.csv", "y", &["x"]),
            Err(Error::Io { .. })
        ));
        assert!(matches!(
            Dataset::from_csv(data_dir().join("lbw.csv"), "nope", &["age"]),
            Err(Error::Csv { line: 1, .. })
        ));
    }
}
