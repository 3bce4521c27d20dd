//! K-means on `f64` values: the reference the encrypted update is checked against (PEGASUS Section V.C,
//! steps 1-3 of the `t`-th update), the closest-assignment ratio `rho` of Table VIII, and the Figure 8
//! simulation of an update that assigns a proportion `1 - rho` of the points to a random centroid other
//! than the closest.
//!
//! The distance is the one the encrypted update compares (see [`super`]): `||c_j||^2 - 2 <x_i, c_j>`,
//! the squared Euclidean distance minus `||x_i||^2`, which is the same for every centroid of a point
//! and so does not change the arg-min. An empty cluster gets the zero vector, as in the encrypted update
//! (its reciprocal table gives `0` for a count below `1/2`).

use crate::error::{Error, Result};

/// The matrix `D[i][j] = ||c_j||^2 - 2 <x_i, c_j>` of `points` (rows) against `centroids`.
///
/// Errors: [`Error::Shape`] for rows of different lengths.
pub fn distances(points: &[Vec<f64>], centroids: &[Vec<f64>]) -> Result<Vec<Vec<f64>>> {
    let d = centroids.first().map_or(0, Vec::len);
    check_rows("centroids", centroids, d)?;
    check_rows("points", points, d)?;
    Ok(points
        .iter()
        .map(|x| {
            centroids
                .iter()
                .map(|c| c.iter().zip(x).map(|(c, x)| c * (c - 2.0 * x)).sum())
                .collect()
        })
        .collect())
}

/// The index of the closest centroid of every point (the first one on a tie).
///
/// Errors: as [`distances`].
pub fn closest(points: &[Vec<f64>], centroids: &[Vec<f64>]) -> Result<Vec<usize>> {
    Ok(distances(points, centroids)?
        .iter()
        .map(|row| argmin(row))
        .collect())
}

/// The index of the smallest value (the first one on a tie; 0 for an empty slice).
pub fn argmin(values: &[f64]) -> usize {
    values
        .iter()
        .enumerate()
        .fold(
            (0, f64::INFINITY),
            |(bi, bv), (i, &v)| {
                if v < bv {
                    (i, v)
                } else {
                    (bi, bv)
                }
            },
        )
        .0
}

/// The centroid update of step 3 from assignment bits `bits[i][j]` (one row per point, one column per
/// cluster; 0/1, or the decrypted values): `c_j = sum_i b_ij x_i / sum_i b_ij`, the zero vector for a
/// cluster whose count is below `1/2`.
///
/// Errors: [`Error::Shape`] for rows of different lengths or a bit matrix of another height.
pub fn update(points: &[Vec<f64>], bits: &[Vec<f64>]) -> Result<Vec<Vec<f64>>> {
    let d = points.first().map_or(0, Vec::len);
    check_rows("points", points, d)?;
    if bits.len() != points.len() {
        return Err(Error::Shape {
            what: "assignment bits (rows)".into(),
            expected: points.len(),
            found: bits.len(),
        });
    }
    let k = bits.first().map_or(0, Vec::len);
    check_rows("assignment bits", bits, k)?;
    Ok((0..k)
        .map(|j| {
            let count: f64 = bits.iter().map(|b| b[j]).sum();
            let mut c = vec![0.0; d];
            if count >= 0.5 {
                for (x, b) in points.iter().zip(bits) {
                    for (c, x) in c.iter_mut().zip(x) {
                        *c += b[j] * x / count;
                    }
                }
            }
            c
        })
        .collect())
}

/// One-hot rows of `assignment` over `clusters` columns.
pub fn one_hot(assignment: &[usize], clusters: usize) -> Vec<Vec<f64>> {
    assignment
        .iter()
        .map(|&a| (0..clusters).map(|j| f64::from(u8::from(j == a))).collect())
        .collect()
}

/// The closest-assignment ratio `rho` (PEGASUS Table VIII): the fraction of points whose assignment
/// bits, rounded, are exactly the one-hot row of their closest centroid (a point given a second cluster,
/// or none, counts as not properly assigned).
///
/// Errors: [`Error::Shape`] for a bit matrix of another height than `closest`.
pub fn closest_assignment_ratio(bits: &[Vec<f64>], closest: &[usize]) -> Result<f64> {
    if bits.len() != closest.len() || bits.is_empty() {
        return Err(Error::Shape {
            what: "assignment bits (rows) against the closest centroids".into(),
            expected: closest.len(),
            found: bits.len(),
        });
    }
    let good = bits
        .iter()
        .zip(closest)
        .filter(|(row, &c)| {
            row.iter()
                .enumerate()
                .all(|(j, &b)| (b.round() == 1.0) == (j == c))
        })
        .count();
    Ok(good as f64 / closest.len() as f64)
}

/// The assignment of PEGASUS Fig. 8's simulation: each point keeps its closest centroid with
/// probability `rho`, and otherwise goes to one of the other centroids chosen uniformly (`uniform` draws
/// numbers in `[0, 1)`, two per point).
///
/// Errors: [`Error::InvalidArgument`] for `rho` outside `[0, 1]` or fewer than 2 clusters.
pub fn perturbed_assignment(
    closest: &[usize],
    clusters: usize,
    rho: f64,
    mut uniform: impl FnMut() -> f64,
) -> Result<Vec<usize>> {
    if !(0.0..=1.0).contains(&rho) || clusters < 2 {
        return Err(Error::InvalidArgument {
            what: "perturbed assignment",
            reason: format!(
                "rho = {rho} must lie in [0, 1] and clusters = {clusters} be at least 2"
            ),
        });
    }
    Ok(closest
        .iter()
        .map(|&c| {
            let keep = uniform() < rho;
            let other = ((uniform() * (clusters - 1) as f64) as usize).min(clusters - 2);
            if keep {
                c
            } else if other >= c {
                other + 1
            } else {
                other
            }
        })
        .collect())
}

fn check_rows(what: &str, rows: &[Vec<f64>], width: usize) -> Result<()> {
    match rows.iter().find(|r| r.len() != width) {
        Some(r) => Err(Error::Shape {
            what: format!("{what} (row length)"),
            expected: width,
            found: r.len(),
        }),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn update_and_ratio_on_a_small_case() {
        let x = vec![
            vec![0.0, 1.0],
            vec![0.2, 0.8],
            vec![-1.0, 0.0],
            vec![-0.8, -0.2],
        ];
        let c = vec![vec![0.1, 0.9], vec![-0.9, -0.1]];
        let a = closest(&x, &c).unwrap();
        assert_eq!(a, [0, 0, 1, 1]);
        let u = update(&x, &one_hot(&a, 2)).unwrap();
        assert!((u[0][0] - 0.1).abs() < 1e-12 && (u[1][1] + 0.1).abs() < 1e-12);
        // An empty cluster gets zeros.
        let u = update(&x, &one_hot(&[0, 0, 0, 0], 2)).unwrap();
        assert_eq!(u[1], [0.0, 0.0]);
        let mut bits = one_hot(&a, 2);
        bits[3] = vec![1.0, 1.0];
        assert_eq!(closest_assignment_ratio(&bits, &a).unwrap(), 0.75);
        // rho = 0 moves every point to another centroid; rho = 1 keeps all.
        let mut k = 0u32;
        let mut draw = move || {
            k += 1;
            f64::from(k % 7) / 7.0
        };
        let moved = perturbed_assignment(&a, 2, 0.0, &mut draw).unwrap();
        assert!(moved.iter().zip(&a).all(|(m, c)| m != c));
        assert_eq!(perturbed_assignment(&a, 2, 1.0, &mut draw).unwrap(), a);
        assert!(perturbed_assignment(&a, 1, 0.5, &mut draw).is_err());
    }
}
