//! Quality of a binary classifier: accuracy and the area under the ROC curve (AUC), the two columns of
//! RNS-CKKS Table 4.

use crate::error::{Error, Result};

/// Accuracy and AUC of scores against labels.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Metrics {
    /// Fraction of samples whose predicted class (score `> 0` means +1) equals the label, in `[0, 1]`.
    pub accuracy: f64,
    /// Area under the ROC curve, in `[0, 1]` (see [`auc`]).
    pub auc: f64,
}

impl Metrics {
    /// Accuracy and AUC of `scores` (decision values `beta^T (1, x_i)`) against `labels` (-1/+1 or 0/1).
    ///
    /// Errors: as [`accuracy`] and [`auc`].
    pub fn of_scores(scores: &[f64], labels: &[f64]) -> Result<Self> {
        Ok(Self {
            accuracy: accuracy(scores, labels)?,
            auc: auc(scores, labels)?,
        })
    }
}

fn check(scores: &[f64], labels: &[f64]) -> Result<()> {
    if scores.is_empty() {
        return Err(Error::EmptyData {
            what: "no scores to evaluate".into(),
        });
    }
    if scores.len() != labels.len() {
        return Err(Error::Shape {
            what: "labels (one per score)".into(),
            expected: scores.len(),
            found: labels.len(),
        });
    }
    for (row, &s) in scores.iter().enumerate() {
        if !s.is_finite() {
            return Err(Error::NonFinite {
                what: "score",
                row,
                column: 0,
                value: s,
            });
        }
    }
    for (row, &y) in labels.iter().enumerate() {
        if !(y == 1.0 || y == 0.0 || y == -1.0) {
            return Err(Error::InvalidLabel { row, value: y });
        }
    }
    Ok(())
}

/// The fraction of samples classified correctly: the prediction is +1 when the score is `> 0` and -1
/// otherwise (labels -1/+1 or 0/1, where 0 means -1).
///
/// Errors: [`Error::EmptyData`], [`Error::Shape`], [`Error::NonFinite`], [`Error::InvalidLabel`].
pub fn accuracy(scores: &[f64], labels: &[f64]) -> Result<f64> {
    check(scores, labels)?;
    let correct = scores
        .iter()
        .zip(labels)
        .filter(|(&s, &y)| (s > 0.0) == (y > 0.0))
        .count();
    Ok(correct as f64 / scores.len() as f64)
}

/// The AUC by the rank statistic (Mann-Whitney U): with the scores ranked from 1 (smallest) to `n`, tied
/// scores sharing the mean of their ranks, `AUC = (R_+ - n_+ (n_+ + 1) / 2) / (n_+ n_-)`, `R_+` the sum of
/// the positives' ranks. This is the probability that a random positive scores higher than a random
/// negative, a tie counting one half.
///
/// Errors: as [`accuracy`], and [`Error::InvalidArgument`] unless both classes occur.
pub fn auc(scores: &[f64], labels: &[f64]) -> Result<f64> {
    check(scores, labels)?;
    let positives = labels.iter().filter(|&&y| y > 0.0).count();
    let negatives = labels.len() - positives;
    if positives == 0 || negatives == 0 {
        return Err(Error::InvalidArgument {
            what: "labels for the AUC",
            reason: format!(
                "{positives} positives and {negatives} negatives: the AUC needs both classes"
            ),
        });
    }
    let mut order: Vec<usize> = (0..scores.len()).collect();
    order.sort_by(|&a, &b| scores[a].total_cmp(&scores[b]));
    let mut rank_sum = 0.0;
    let mut i = 0;
    while i < order.len() {
        let mut j = i + 1;
        while j < order.len() && scores[order[j]] == scores[order[i]] {
            j += 1;
        }
        // Ranks i + 1 ..= j share their mean.
        let mean_rank = (i + 1 + j) as f64 / 2.0;
        let tied_positives = order[i..j].iter().filter(|&&k| labels[k] > 0.0).count();
        rank_sum += mean_rank * tied_positives as f64;
        i = j;
    }
    let p = positives as f64;
    Ok((rank_sum - p * (p + 1.0) / 2.0) / (p * negatives as f64))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The AUC by counting pairs (the definition), ties counting one half.
    fn auc_by_pairs(scores: &[f64], labels: &[f64]) -> f64 {
        let (mut sum, mut pairs) = (0.0, 0.0);
        for (i, &si) in scores.iter().enumerate() {
            for (j, &sj) in scores.iter().enumerate() {
                if labels[i] > 0.0 && labels[j] <= 0.0 {
                    pairs += 1.0;
                    sum += if si > sj {
                        1.0
                    } else if si == sj {
                        0.5
                    } else {
                        0.0
                    };
                }
            }
        }
        sum / pairs
    }

    #[test]
    fn auc_of_known_orderings() {
        let y = [1.0, 1.0, -1.0, -1.0];
        assert_eq!(auc(&[4.0, 3.0, 2.0, 1.0], &y).unwrap(), 1.0);
        assert_eq!(auc(&[1.0, 2.0, 3.0, 4.0], &y).unwrap(), 0.0);
        assert_eq!(auc(&[1.0, 1.0, 1.0, 1.0], &y).unwrap(), 0.5);
        // One positive above both negatives, one between: (1 + 0.5 + 1 + 0) / 4 with the tie.
        assert_eq!(auc(&[3.0, 1.0, 1.0, 0.0], &y).unwrap(), 0.875);
        // 0/1 labels mean the same.
        assert_eq!(
            auc(&[3.0, 1.0, 1.0, 0.0], &[1.0, 1.0, 0.0, 0.0]).unwrap(),
            0.875
        );
    }

    #[test]
    fn auc_by_ranks_equals_auc_by_pairs_with_many_ties() {
        let mut x = 12345u64;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        for _ in 0..20 {
            let n = 50;
            let scores: Vec<f64> = (0..n).map(|_| (next() % 7) as f64).collect();
            let labels: Vec<f64> = (0..n)
                .map(|i| {
                    if i % 3 == 0 || next() % 2 == 0 {
                        1.0
                    } else {
                        -1.0
                    }
                })
                .collect();
            let a = auc(&scores, &labels).unwrap();
            let b = auc_by_pairs(&scores, &labels);
            assert!((a - b).abs() < 1e-12, "{a} vs {b}");
        }
    }

    #[test]
    fn accuracy_counts_the_sign() {
        let y = [1.0, -1.0, 1.0, -1.0];
        assert_eq!(accuracy(&[0.5, -0.5, -0.1, 0.0], &y).unwrap(), 0.75);
        let m = Metrics::of_scores(&[0.5, -0.5, 2.0, -1.0], &y).unwrap();
        assert_eq!((m.accuracy, m.auc), (1.0, 1.0));
    }

    #[test]
    fn bad_inputs_are_errors() {
        assert!(matches!(accuracy(&[], &[]), Err(Error::EmptyData { .. })));
        assert!(matches!(
            accuracy(&[1.0], &[1.0, 1.0]),
            Err(Error::Shape { .. })
        ));
        assert!(matches!(
            auc(&[1.0, 2.0], &[1.0, 1.0]),
            Err(Error::InvalidArgument { .. })
        ));
        assert!(matches!(
            auc(&[1.0, f64::NAN], &[1.0, -1.0]),
            Err(Error::NonFinite { row: 1, .. })
        ));
        assert!(matches!(
            accuracy(&[1.0], &[0.5]),
            Err(Error::InvalidLabel { row: 0, .. })
        ));
    }
}
