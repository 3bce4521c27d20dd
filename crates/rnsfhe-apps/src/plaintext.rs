//! The plaintext reference: the training procedure of [`crate::logistic`] on `f64` values, with the same
//! sigmoid polynomial, the same number of iterations and the same learning-rate and Nesterov schedule
//! ([`crate::logistic::LogisticRegression::schedule`]). The encrypted training computes the same numbers
//! up to the CKKS approximation error; comparing the two is how the tests and `rnsfhe bench ckks-table4`
//! check it.
//!
//! The iteration is written in the textbook form of Nesterov's accelerated gradient as Kim, Song, Kim, Lee
//! and Cheon state it (BMC Medical Genomics 2018), not in the rearranged form the encrypted training uses to
//! save a level, so that agreement also checks the rearrangement:
//!
//! ```text
//! beta = v = 0
//! for t in 0..T:
//!     g    = (alpha_t / n) sum_i sigma(-z_i^T v) z_i        (sigma: the least-squares polynomial)
//!     beta' = v + g
//!     v    = (1 - gamma_t) beta' + gamma_t beta
//!     beta = beta'
//! return beta
//! ```

use rnsfhe_ckks::Polynomial;

use crate::error::{Error, Result};
use crate::logistic::NesterovStep;

/// Runs the reference training on the rows `z_i = y_i (1, x_i)` with the sigmoid replaced by `sigmoid`
/// (evaluated as a polynomial in `f64`) and the steps of `schedule`; returns `beta` (intercept first).
///
/// Errors: [`Error::EmptyData`] without rows, [`Error::Shape`] for rows of different lengths,
/// [`Error::NonFinite`] for NaN or infinite entries.
pub fn train(
    z_rows: &[Vec<f64>],
    sigmoid: &Polynomial,
    schedule: &[NesterovStep],
) -> Result<Vec<f64>> {
    train_with(z_rows, |x| sigmoid.evaluate(x), schedule)
}

/// [`train`] with any sigmoid (e.g. the exact `1 / (1 + e^-x)`, to see what the polynomial costs).
///
/// Errors: as [`train`].
pub fn train_with(
    z_rows: &[Vec<f64>],
    sigmoid: impl Fn(f64) -> f64,
    schedule: &[NesterovStep],
) -> Result<Vec<f64>> {
    Ok(run(z_rows, sigmoid, schedule)?.0)
}

/// The largest `|z_i^T v^(t)|` over the samples and iterations of [`train`]: the range the sigmoid
/// polynomial is evaluated on (it approximates the sigmoid on `[-8, 8]` only).
///
/// Errors: as [`train`].
pub fn largest_sigmoid_input(
    z_rows: &[Vec<f64>],
    sigmoid: &Polynomial,
    schedule: &[NesterovStep],
) -> Result<f64> {
    Ok(run(z_rows, |x| sigmoid.evaluate(x), schedule)?.1)
}

/// The procedure: `beta` and the largest `|z_i^T v|` seen.
fn run(
    z_rows: &[Vec<f64>],
    sigmoid: impl Fn(f64) -> f64,
    schedule: &[NesterovStep],
) -> Result<(Vec<f64>, f64)> {
    let width = match z_rows.first() {
        Some(z) if !z.is_empty() => z.len(),
        _ => {
            return Err(Error::EmptyData {
                what: "no rows z_i to train on".into(),
            })
        }
    };
    for (row, z) in z_rows.iter().enumerate() {
        if z.len() != width {
            return Err(Error::Shape {
                what: format!("row z_{row}"),
                expected: width,
                found: z.len(),
            });
        }
        if let Some((column, &value)) = z.iter().enumerate().find(|(_, v)| !v.is_finite()) {
            return Err(Error::NonFinite {
                what: "entry of Z",
                row,
                column,
                value,
            });
        }
    }
    let n = z_rows.len() as f64;
    let mut beta = vec![0.0; width];
    let mut v = vec![0.0; width];
    let mut largest = 0.0f64;
    for step in schedule {
        let mut g = vec![0.0; width];
        for z in z_rows {
            let s: f64 = z.iter().zip(&v).map(|(a, b)| a * b).sum();
            largest = largest.max(s.abs());
            let h = sigmoid(-s);
            g.iter_mut().zip(z).for_each(|(gj, zj)| *gj += h * zj);
        }
        let next: Vec<f64> = v
            .iter()
            .zip(&g)
            .map(|(vj, gj)| vj + step.alpha / n * gj)
            .collect();
        v = next
            .iter()
            .zip(&beta)
            .map(|(b1, b0)| (1.0 - step.gamma) * b1 + step.gamma * b0)
            .collect();
        beta = next;
    }
    Ok((beta, largest))
}

/// The exact logistic function `1 / (1 + e^-x)`.
pub fn sigmoid(x: f64) -> f64 {
    1.0 / (1.0 + (-x).exp())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Dataset, LogisticRegression};

    #[test]
    fn sigmoid_inputs_stay_inside_the_approximation_interval() {
        for (data, bound) in [
            (Dataset::load_lbw().unwrap(), 2.4),
            (Dataset::load_uis().unwrap(), 4.3),
        ] {
            let (data, _) = data.normalize();
            for degree in [3, 5, 7] {
                let lr = LogisticRegression::default().with_sigmoid_degree(degree);
                let m =
                    largest_sigmoid_input(&data.z_rows(), &lr.sigmoid().unwrap(), &lr.schedule())
                        .unwrap();
                assert!(
                    m < bound,
                    "{}, degree {degree}: |z^T v| up to {m}",
                    data.name()
                );
            }
        }
    }

    #[test]
    fn higher_degrees_come_closer_to_the_exact_sigmoid() {
        let (data, _) = Dataset::load_lbw().unwrap().normalize();
        let z = data.z_rows();
        let schedule = LogisticRegression::default().schedule();
        let exact = train_with(&z, sigmoid, &schedule).unwrap();
        let distance = |degree: usize| {
            let lr = LogisticRegression::default().with_sigmoid_degree(degree);
            let beta = train(&z, &lr.sigmoid().unwrap(), &schedule).unwrap();
            beta.iter()
                .zip(&exact)
                .map(|(a, b)| (a - b).abs())
                .fold(0.0, f64::max)
        };
        let d: Vec<f64> = [3, 5, 7].into_iter().map(distance).collect();
        assert!(d[0] > d[1] && d[1] > d[2], "{d:?}");
        let lr = LogisticRegression::default();
        assert!(matches!(
            train(&[], &lr.sigmoid().unwrap(), &schedule),
            Err(Error::EmptyData { .. })
        ));
        assert!(matches!(
            train(&[vec![1.0, f64::NAN]], &lr.sigmoid().unwrap(), &schedule),
            Err(Error::NonFinite { .. })
        ));
    }
}
