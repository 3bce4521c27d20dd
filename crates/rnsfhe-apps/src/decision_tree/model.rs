//! The plaintext side of private decision-tree evaluation: the tree model ([`DecisionTree`], validated
//! once) and the public per-feature scaling ([`FeatureScaling`]) that maps raw features into the range the
//! comparison look-up tables read.

use crate::error::{Error, Result};

/// One node of a [`DecisionTree`]: an internal node compares one feature with a threshold (left child if
/// `x[feature] <= threshold`, scikit-learn's convention), a leaf holds a class label.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum Node {
    /// `x[feature] <= threshold` goes to `left`, otherwise to `right` (node indices).
    Internal {
        /// The feature index (below the tree's feature count `d`).
        feature: usize,
        /// The threshold, in raw feature units.
        threshold: f64,
        /// The node taken when `x[feature] <= threshold`.
        left: usize,
        /// The node taken otherwise.
        right: usize,
    },
    /// A leaf: the class label (below the tree's class count `C`).
    Leaf {
        /// The label.
        label: usize,
    },
}

/// A leaf and the path that reaches it: the internal nodes from the root and, for each, whether the path
/// goes left. PEGASUS Section V.B sums the edge bits `z_{i,j}` along this path into `v_k`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LeafPath {
    /// The leaf's label.
    pub label: usize,
    /// `(internal node index, goes left)` from the root down.
    pub edges: Vec<(usize, bool)>,
}

/// A binary decision tree for classification (the model of PEGASUS Section V.B): node 0 is the root,
/// every other node is the child of exactly one internal node. Made by [`DecisionTree::new`] or
/// [`DecisionTree::from_sklearn_arrays`], which check it.
#[derive(Clone, Debug, PartialEq)]
pub struct DecisionTree {
    nodes: Vec<Node>,
    features: usize,
    classes: usize,
    depth: usize,
    paths: Vec<LeafPath>,
}

fn invalid(reason: String) -> Error {
    Error::InvalidTree { reason }
}

impl DecisionTree {
    /// A tree of `nodes` (node 0 the root) on `features` features with `classes` labels.
    ///
    /// Errors: [`Error::InvalidTree`] for no nodes, no features, fewer than 2 classes, a feature index
    /// `>= features`, a label `>= classes`, a threshold that is not finite, a child index out of range,
    /// or nodes that do not form one tree from node 0 (a node reached twice, a cycle, or a node not
    /// reached).
    pub fn new(nodes: Vec<Node>, features: usize, classes: usize) -> Result<Self> {
        if nodes.is_empty() {
            return Err(invalid("the tree has no nodes".into()));
        }
        if features == 0 {
            return Err(invalid("the tree reads no features (d = 0)".into()));
        }
        if classes < 2 {
            return Err(invalid(format!(
                "{classes} class(es): a classifier needs at least 2 labels"
            )));
        }
        for (i, node) in nodes.iter().enumerate() {
            match *node {
                Node::Internal {
                    feature,
                    threshold,
                    left,
                    right,
                } => {
                    if feature >= features {
                        return Err(invalid(format!(
                            "node {i} reads feature {feature}, but the tree has d = {features} features"
                        )));
                    }
                    if !threshold.is_finite() {
                        return Err(invalid(format!(
                            "node {i} has the threshold {threshold}, which is not finite"
                        )));
                    }
                    for child in [left, right] {
                        if child >= nodes.len() || child == 0 {
                            return Err(invalid(format!(
                                "node {i} has the child {child}: children are nodes 1 to {}",
                                nodes.len() - 1
                            )));
                        }
                    }
                }
                Node::Leaf { label } => {
                    if label >= classes {
                        return Err(invalid(format!(
                            "leaf {i} has the label {label}, but the tree has C = {classes} classes"
                        )));
                    }
                }
            }
        }
        // Walk from the root: every node once (a tree), collecting the root-to-leaf paths.
        let mut seen = vec![false; nodes.len()];
        let mut paths = Vec::new();
        let mut depth = 0;
        let mut stack = vec![(0usize, Vec::new())];
        while let Some((i, edges)) = stack.pop() {
            if std::mem::replace(&mut seen[i], true) {
                return Err(invalid(format!(
                    "node {i} is reached twice from the root (a cycle or a shared child)"
                )));
            }
            match nodes[i] {
                Node::Internal { left, right, .. } => {
                    let mut r: Vec<(usize, bool)> = edges.clone();
                    r.push((i, false));
                    let mut l = edges;
                    l.push((i, true));
                    stack.push((right, r));
                    stack.push((left, l));
                }
                Node::Leaf { label } => {
                    depth = depth.max(edges.len());
                    paths.push(LeafPath { label, edges });
                }
            }
        }
        if let Some(unreached) = seen.iter().position(|&s| !s) {
            return Err(invalid(format!(
                "node {unreached} is not reached from the root"
            )));
        }
        Ok(Self {
            nodes,
            features,
            classes,
            depth,
            paths,
        })
    }

    /// A tree from scikit-learn's arrays (`tree_.feature`, `tree_.threshold`, `tree_.children_left`,
    /// `tree_.children_right`; a leaf has both children `-1`) and the label of every node (scikit-learn:
    /// the arg-max of `tree_.value[i]`, read only at leaves).
    ///
    /// Errors: [`Error::InvalidTree`] for arrays of different lengths, a node with one child, a negative
    /// feature index at an internal node; as [`DecisionTree::new`].
    pub fn from_sklearn_arrays(
        feature: &[i64],
        threshold: &[f64],
        children_left: &[i64],
        children_right: &[i64],
        labels: &[usize],
        features: usize,
        classes: usize,
    ) -> Result<Self> {
        let n = feature.len();
        for (what, len) in [
            ("threshold", threshold.len()),
            ("children_left", children_left.len()),
            ("children_right", children_right.len()),
            ("labels", labels.len()),
        ] {
            if len != n {
                return Err(invalid(format!(
                    "{what} has {len} entries, feature has {n}: the arrays describe one node each"
                )));
            }
        }
        let nodes = (0..n)
            .map(|i| match (children_left[i], children_right[i]) {
                (-1, -1) => Ok(Node::Leaf { label: labels[i] }),
                (l, r) if l >= 0 && r >= 0 => {
                    let f = usize::try_from(feature[i]).map_err(|_| {
                        invalid(format!(
                            "internal node {i} has the feature index {}",
                            feature[i]
                        ))
                    })?;
                    Ok(Node::Internal {
                        feature: f,
                        threshold: threshold[i],
                        left: l as usize,
                        right: r as usize,
                    })
                }
                (l, r) => Err(invalid(format!(
                    "node {i} has the children {l} and {r}: a leaf has both -1, an internal node both \
                     valid indices"
                ))),
            })
            .collect::<Result<Vec<_>>>()?;
        Self::new(nodes, features, classes)
    }

    /// The nodes (node 0 the root).
    pub fn nodes(&self) -> &[Node] {
        &self.nodes
    }

    /// The feature count `d`.
    pub fn features(&self) -> usize {
        self.features
    }

    /// The class count `C`.
    pub fn classes(&self) -> usize {
        self.classes
    }

    /// The depth: the most internal nodes on a root-to-leaf path (0 for a single leaf).
    pub fn depth(&self) -> usize {
        self.depth
    }

    /// The number of internal nodes (PEGASUS Table VII's `N`): one comparison table each.
    pub fn internal_nodes(&self) -> usize {
        self.nodes.len() - self.paths.len()
    }

    /// The number of leaves: one predicate table each.
    pub fn leaves(&self) -> usize {
        self.paths.len()
    }

    /// The root-to-leaf paths, leaves in depth-first order (left first).
    pub fn paths(&self) -> &[LeafPath] {
        &self.paths
    }

    /// The label of `x` in the clear (the reference the encrypted evaluation is checked against).
    ///
    /// Errors: [`Error::Shape`] for `x` of another length than `d`.
    pub fn predict(&self, x: &[f64]) -> Result<usize> {
        if x.len() != self.features {
            return Err(Error::Shape {
                what: "decision-tree input".into(),
                expected: self.features,
                found: x.len(),
            });
        }
        let mut i = 0;
        // The tree was checked acyclic, so this walk ends within `nodes.len()` steps.
        loop {
            match self.nodes[i] {
                Node::Internal {
                    feature,
                    threshold,
                    left,
                    right,
                } => i = if x[feature] <= threshold { left } else { right },
                Node::Leaf { label } => return Ok(label),
            }
        }
    }
}

/// The public map of every raw feature into `[0, 1]`, a piecewise-linear increasing function through
/// knots `k_0 < k_1 < .. < k_m` sent to `0, 1/m, .., 1`, constant outside (clamped). Because it is
/// increasing, `x <= t` holds exactly when `g(x) <= g(t)`: the server compares the mapped query with its
/// mapped thresholds and the tree's decisions are unchanged, away from the tables' resolution.
///
/// What it reveals is public by design: the knots (two per feature, the range, for
/// [`FeatureScaling::linear`]; quantiles of the server's training data for
/// [`FeatureScaling::quantiles`], which spread skewed features evenly over the tables' grid). The
/// thresholds and the shape of the tree are not part of it.
#[derive(Clone, Debug, PartialEq)]
pub struct FeatureScaling {
    knots: Vec<Vec<f64>>,
}

impl FeatureScaling {
    /// The map of each feature through its knots (at least 2 per feature, strictly increasing, finite).
    ///
    /// Errors: [`Error::InvalidArgument`] for no features, fewer than 2 knots, knots that are not
    /// finite or not strictly increasing.
    pub fn from_knots(knots: Vec<Vec<f64>>) -> Result<Self> {
        if knots.is_empty() {
            return Err(Error::InvalidArgument {
                what: "feature scaling",
                reason: "no features".into(),
            });
        }
        for (j, k) in knots.iter().enumerate() {
            if k.len() < 2 || k.iter().any(|v| !v.is_finite()) || k.windows(2).any(|w| w[0] >= w[1])
            {
                return Err(Error::InvalidArgument {
                    what: "feature scaling",
                    reason: format!(
                        "feature {j} has the knots {k:?}: at least 2, finite, strictly increasing \
                         (a constant feature: give it any range, e.g. [v, v + 1])"
                    ),
                });
            }
        }
        Ok(Self { knots })
    }

    /// `(x - lo) / (hi - lo)` clamped to `[0, 1]` for each feature: the knots `[lo_j, hi_j]`.
    ///
    /// Errors: as [`FeatureScaling::from_knots`]; [`Error::Shape`] for `lo` and `hi` of different lengths.
    pub fn linear(lo: &[f64], hi: &[f64]) -> Result<Self> {
        if lo.len() != hi.len() {
            return Err(Error::Shape {
                what: "feature ranges (hi)".into(),
                expected: lo.len(),
                found: hi.len(),
            });
        }
        Self::from_knots(lo.iter().zip(hi).map(|(&l, &h)| vec![l, h]).collect())
    }

    /// Linear maps from the ranges of `rows` (a constant feature gets `[v, v + 1]`).
    ///
    /// Errors: [`Error::EmptyData`] for no rows; [`Error::Shape`] for rows of different lengths;
    /// [`Error::NonFinite`] for a value that is not finite.
    pub fn fit_ranges(rows: &[Vec<f64>]) -> Result<Self> {
        let columns = columns_of(rows)?;
        Self::from_knots(
            columns
                .into_iter()
                .map(|c| {
                    let lo = c.iter().copied().fold(f64::INFINITY, f64::min);
                    let hi = c.iter().copied().fold(f64::NEG_INFINITY, f64::max);
                    vec![lo, if hi > lo { hi } else { lo + 1.0 }]
                })
                .collect(),
        )
    }

    /// Maps through `m + 1` empirical quantiles of each column of `rows` (`m >= 1`; repeated quantiles
    /// merged, a constant feature gets `[v, v + 1]`).
    ///
    /// Errors: as [`FeatureScaling::fit_ranges`]; [`Error::InvalidArgument`] for `m = 0`.
    pub fn quantiles(rows: &[Vec<f64>], m: usize) -> Result<Self> {
        if m == 0 {
            return Err(Error::InvalidArgument {
                what: "quantile count",
                reason: "at least 1 interval".into(),
            });
        }
        let columns = columns_of(rows)?;
        Self::from_knots(
            columns
                .into_iter()
                .map(|mut c| {
                    c.sort_by(f64::total_cmp);
                    let mut k: Vec<f64> = (0..=m).map(|i| c[i * (c.len() - 1) / m]).collect();
                    k.dedup();
                    if k.len() < 2 {
                        k.push(k[0] + 1.0);
                    }
                    k
                })
                .collect(),
        )
    }

    /// The feature count.
    pub fn features(&self) -> usize {
        self.knots.len()
    }

    /// The knots of every feature.
    pub fn knots(&self) -> &[Vec<f64>] {
        &self.knots
    }

    /// `g_j(v)`: the value `v` of feature `j` mapped to `[0, 1]`.
    ///
    /// Errors: [`Error::Shape`] for `j` beyond the feature count.
    pub fn map_feature(&self, j: usize, v: f64) -> Result<f64> {
        if j >= self.knots.len() {
            return Err(Error::Shape {
                what: "feature index (feature count)".into(),
                expected: self.knots.len(),
                found: j + 1,
            });
        }
        Ok(self.map(j, v))
    }

    /// `g_j(v)` for feature `j` (no check of `j`: callers index within [`FeatureScaling::features`]).
    pub(crate) fn map(&self, j: usize, v: f64) -> f64 {
        let k = &self.knots[j];
        let m = (k.len() - 1) as f64;
        if v <= k[0] {
            return 0.0;
        }
        if v >= k[k.len() - 1] {
            return 1.0;
        }
        let i = k.partition_point(|&x| x <= v) - 1;
        (i as f64 + (v - k[i]) / (k[i + 1] - k[i])) / m
    }

    /// The mapped features of `x`, each in `[0, 1]`.
    ///
    /// Errors: [`Error::Shape`] for `x` of another length than the feature count; [`Error::NonFinite`]
    /// for a value that is not finite.
    pub fn normalize(&self, x: &[f64]) -> Result<Vec<f64>> {
        if x.len() != self.knots.len() {
            return Err(Error::Shape {
                what: "features to scale".into(),
                expected: self.knots.len(),
                found: x.len(),
            });
        }
        x.iter()
            .enumerate()
            .map(|(j, &v)| {
                if !v.is_finite() {
                    return Err(Error::NonFinite {
                        what: "feature",
                        row: 0,
                        column: j,
                        value: v,
                    });
                }
                Ok(self.map(j, v))
            })
            .collect()
    }
}

/// The columns of `rows`, checked (non-empty, equal lengths, finite).
fn columns_of(rows: &[Vec<f64>]) -> Result<Vec<Vec<f64>>> {
    let Some(first) = rows.first() else {
        return Err(Error::EmptyData {
            what: "no rows to fit the feature scaling on".into(),
        });
    };
    let d = first.len();
    let mut columns = vec![Vec::with_capacity(rows.len()); d];
    for (r, row) in rows.iter().enumerate() {
        if row.len() != d {
            return Err(Error::Shape {
                what: format!("row {r}"),
                expected: d,
                found: row.len(),
            });
        }
        for (j, &v) in row.iter().enumerate() {
            if !v.is_finite() {
                return Err(Error::NonFinite {
                    what: "feature",
                    row: r,
                    column: j,
                    value: v,
                });
            }
            columns[j].push(v);
        }
    }
    Ok(columns)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stump() -> Vec<Node> {
        vec![
            Node::Internal {
                feature: 0,
                threshold: 0.5,
                left: 1,
                right: 2,
            },
            Node::Leaf { label: 0 },
            Node::Leaf { label: 1 },
        ]
    }

    #[test]
    fn tree_is_validated() {
        let t = DecisionTree::new(stump(), 1, 2).unwrap();
        assert_eq!((t.depth(), t.internal_nodes(), t.leaves()), (1, 1, 2));
        assert_eq!(t.predict(&[0.5]).unwrap(), 0);
        assert_eq!(t.predict(&[0.6]).unwrap(), 1);
        assert!(matches!(t.predict(&[0.6, 1.0]), Err(Error::Shape { .. })));
        assert_eq!(t.paths()[0].edges, vec![(0, true)]);
        let bad = |nodes: Vec<Node>, d: usize, c: usize, needle: &str| {
            let e = DecisionTree::new(nodes, d, c).unwrap_err();
            assert!(
                matches!(&e, Error::InvalidTree { reason } if reason.contains(needle)),
                "{e}"
            );
        };
        bad(Vec::new(), 1, 2, "no nodes");
        bad(stump(), 0, 2, "d = 0");
        bad(stump(), 1, 1, "at least 2");
        let mut s = stump();
        s[0] = Node::Internal {
            feature: 3,
            threshold: 0.5,
            left: 1,
            right: 2,
        };
        bad(s, 2, 2, "d = 2");
        let mut s = stump();
        s[2] = Node::Leaf { label: 5 };
        bad(s, 1, 2, "C = 2");
        let mut s = stump();
        s[0] = Node::Internal {
            feature: 0,
            threshold: 0.5,
            left: 1,
            right: 1,
        };
        bad(s, 1, 2, "twice");
        let mut s = stump();
        s.push(Node::Leaf { label: 0 });
        bad(s, 1, 2, "not reached");
        let mut s = stump();
        s[0] = Node::Internal {
            feature: 0,
            threshold: f64::NAN,
            left: 1,
            right: 2,
        };
        bad(s, 1, 2, "not finite");
        let e = DecisionTree::from_sklearn_arrays(
            &[0, -2, -2],
            &[0.5, -2.0, -2.0],
            &[1, -1, 5],
            &[2, -1, -1],
            &[0, 0, 1],
            1,
            2,
        )
        .unwrap_err();
        assert!(matches!(e, Error::InvalidTree { .. }), "{e}");
        let t = DecisionTree::from_sklearn_arrays(
            &[0, -2, -2],
            &[0.5, -2.0, -2.0],
            &[1, -1, -1],
            &[2, -1, -1],
            &[0, 0, 1],
            1,
            2,
        )
        .unwrap();
        assert_eq!(t.nodes(), stump().as_slice());
    }

    #[test]
    fn scaling_is_monotone_and_clamped() {
        let s = FeatureScaling::from_knots(vec![vec![0.0, 1.0, 10.0]]).unwrap();
        assert_eq!(s.normalize(&[-3.0]).unwrap(), vec![0.0]);
        assert_eq!(s.normalize(&[0.5]).unwrap(), vec![0.25]);
        assert_eq!(s.normalize(&[1.0]).unwrap(), vec![0.5]);
        assert_eq!(s.normalize(&[5.5]).unwrap(), vec![0.75]);
        assert_eq!(s.normalize(&[20.0]).unwrap(), vec![1.0]);
        assert!(FeatureScaling::from_knots(vec![vec![1.0, 1.0]]).is_err());
        assert!(matches!(
            s.normalize(&[f64::INFINITY]),
            Err(Error::NonFinite { .. })
        ));
        let rows = vec![vec![1.0, 2.0], vec![3.0, 2.0], vec![2.0, 2.0]];
        let r = FeatureScaling::fit_ranges(&rows).unwrap();
        assert_eq!(r.knots(), &[vec![1.0, 3.0], vec![2.0, 3.0]]);
        let q = FeatureScaling::quantiles(&rows, 2).unwrap();
        assert_eq!(q.knots()[0], vec![1.0, 2.0, 3.0]);
    }
}
