//! Private decision-tree evaluation (PEGASUS Section V.B) on the InsecureTest set (`n_lwe = 64`, tables
//! in degree 2^10): random trees against plaintext on queries away from the thresholds, the errors that
//! name the parameters' limits, and the statistical test of the sanitized answer.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use rnsfhe_apps::decision_tree::{
    DecisionTree, FeatureScaling, Node, TreeClient, TreeParams, TreeServer, TreeServerKey,
    FLOOD_SIGMAS,
};
use rnsfhe_apps::Error;
use rnsfhe_ckks::Csprng;
use rnsfhe_lwe::PegasusPreset;

fn setup(seed: u8) -> (TreeClient, Arc<TreeServerKey>, Csprng) {
    let params = TreeParams::new(PegasusPreset::InsecureTest)
        .unwrap()
        .allowing_insecure();
    let mut rng = Csprng::insecure_from_seed_for_tests([seed; 32]);
    let (client, key) = TreeClient::generate(params, &mut rng).unwrap();
    (client, Arc::new(key), rng)
}

/// A random full tree of depth `depth` on `d` features with thresholds in `(0, 1)` and labels below `c`;
/// internal nodes in breadth-first order, then the leaves.
fn random_tree(rng: &mut StdRng, depth: usize, d: usize, c: usize) -> DecisionTree {
    let internal = (1usize << depth) - 1;
    let mut nodes = Vec::new();
    for i in 0..internal {
        nodes.push(Node::Internal {
            feature: rng.gen_range(0..d),
            threshold: rng.gen_range(0.1..0.9),
            left: 2 * i + 1,
            right: 2 * i + 2,
        });
    }
    for _ in 0..=internal {
        nodes.push(Node::Leaf {
            label: rng.gen_range(0..c),
        });
    }
    DecisionTree::new(nodes, d, c).unwrap()
}

/// `x0 <= 0.5 ? left : right` on two features, two classes.
fn stump(left: usize, right: usize) -> DecisionTree {
    let nodes = vec![
        Node::Internal {
            feature: 0,
            threshold: 0.5,
            left: 1,
            right: 2,
        },
        Node::Leaf { label: left },
        Node::Leaf { label: right },
    ];
    DecisionTree::new(nodes, 2, 2).unwrap()
}

fn unit_scaling(d: usize) -> FeatureScaling {
    FeatureScaling::linear(&vec![0.0; d], &vec![1.0; d]).unwrap()
}

/// Random trees of depth 1 to 4, three classes, and queries whose features are all farther than the
/// comparison resolution from every threshold: the encrypted label is the plaintext one.
#[test]
fn random_trees_agree_with_plaintext() {
    let (client, key, mut rng) = setup(1);
    let mut gen = StdRng::seed_from_u64(7);
    let d = 5;
    let mut checked = 0;
    for depth in 1..=4 {
        let tree = random_tree(&mut gen, depth, d, 3);
        let server = TreeServer::new(tree.clone(), unit_scaling(d), Arc::clone(&key)).unwrap();
        let resolution = server.comparison_resolution();
        assert!(resolution < 0.05, "resolution {resolution}");
        assert_eq!(server.tables_per_query(), 2 * ((1 << depth) - 1) + 2);
        let thresholds: Vec<f64> = tree
            .nodes()
            .iter()
            .filter_map(|n| match n {
                Node::Internal { threshold, .. } => Some(*threshold),
                _ => None,
            })
            .collect();
        let mut queries = 0;
        while queries < 5 {
            let x: Vec<f64> = (0..d).map(|_| gen.gen_range(0.0..1.0)).collect();
            if x.iter()
                .any(|v| thresholds.iter().any(|t| (v - t).abs() <= resolution))
            {
                continue;
            }
            let query = client.encrypt(server.scaling(), &x, &mut rng).unwrap();
            let label = server.evaluate(&query, &mut rng).unwrap();
            assert_eq!(
                client.decrypt(&label).unwrap(),
                tree.predict(&x).unwrap(),
                "depth {depth}, x = {x:?}"
            );
            queries += 1;
            checked += 1;
        }
    }
    assert_eq!(checked, 20);
}

/// A single leaf, a stump with thresholds outside the features' range, and raw features through a
/// non-trivial public map.
#[test]
fn edge_cases_and_scaling() {
    let (client, key, mut rng) = setup(2);
    let leaf = DecisionTree::new(vec![Node::Leaf { label: 1 }], 2, 2).unwrap();
    let server = TreeServer::new(leaf, unit_scaling(2), Arc::clone(&key)).unwrap();
    let q = client
        .encrypt(server.scaling(), &[0.3, 0.7], &mut rng)
        .unwrap();
    assert_eq!(
        client
            .decrypt(&server.evaluate(&q, &mut rng).unwrap())
            .unwrap(),
        1
    );
    // Thresholds below and above the public range [10, 20]: every input in the range goes right, then
    // left; inputs outside it are clamped to it (the plaintext tree would send 3 left and 30 right).
    let nodes = vec![
        Node::Internal {
            feature: 0,
            threshold: 5.0,
            left: 1,
            right: 2,
        },
        Node::Leaf { label: 0 },
        Node::Internal {
            feature: 0,
            threshold: 25.0,
            left: 3,
            right: 4,
        },
        Node::Leaf { label: 1 },
        Node::Leaf { label: 2 },
    ];
    let tree = DecisionTree::new(nodes, 1, 3).unwrap();
    let scaling = FeatureScaling::from_knots(vec![vec![10.0, 11.0, 20.0]]).unwrap();
    let server = TreeServer::new(tree.clone(), scaling.clone(), Arc::clone(&key)).unwrap();
    for x in [10.0, 12.0, 20.0, 3.0, 30.0] {
        let q = client.encrypt(&scaling, &[x], &mut rng).unwrap();
        let label = server.evaluate(&q, &mut rng).unwrap();
        assert_eq!(client.decrypt(&label).unwrap(), 1, "x = {x}");
        assert_eq!(tree.predict(&[x.clamp(10.0, 20.0)]).unwrap(), 1);
        assert!(label.wire_size() > 0);
        assert!(q.wire_size() > 0);
    }
}

/// The errors: depth beyond what the leaf tables resolve (naming the limit), more features than one
/// query packs, a scaling of another width, a query of another feature count, insecure sets without
/// opt-in.
#[test]
fn errors_name_the_limits() {
    let (client, key, mut rng) = setup(3);
    // A chain of depth 400: path sums in [0, 400] are beyond the test ring's resolution.
    let depth = 400;
    // Internal node i at index 2i, its left child a leaf, its right child the next internal node.
    let mut chain = Vec::new();
    for i in 0..depth {
        chain.push(Node::Internal {
            feature: 0,
            threshold: 0.5,
            left: 2 * i + 1,
            right: 2 * i + 2,
        });
        chain.push(Node::Leaf { label: i % 2 });
    }
    chain.push(Node::Leaf { label: 0 });
    let deep = DecisionTree::new(chain, 1, 2).unwrap();
    assert_eq!(deep.depth(), depth);
    match TreeServer::new(deep, unit_scaling(1), Arc::clone(&key)) {
        Err(Error::TreeTooLarge {
            what: "depth",
            value,
            limit,
            ..
        }) => {
            assert_eq!(value, depth);
            assert!(limit >= 4 && limit < depth, "limit {limit}");
        }
        other => panic!("{other:?}"),
    }
    let wide = DecisionTree::new(vec![Node::Leaf { label: 0 }], 65, 2).unwrap();
    assert!(matches!(
        TreeServer::new(wide, unit_scaling(65), Arc::clone(&key)),
        Err(Error::TreeTooLarge {
            what: "feature count d",
            value: 65,
            limit: 64,
            ..
        })
    ));
    assert!(matches!(
        client.encrypt_normalized(&[0.5; 65], &mut rng),
        Err(Error::TreeTooLarge { limit: 64, .. })
    ));
    assert!(matches!(
        client.encrypt_normalized(&[1.5], &mut rng),
        Err(Error::InvalidArgument { .. })
    ));
    let stump = stump(0, 1);
    assert!(matches!(
        TreeServer::new(stump.clone(), unit_scaling(3), Arc::clone(&key)),
        Err(Error::Shape { .. })
    ));
    let server = TreeServer::new(stump, unit_scaling(2), Arc::clone(&key)).unwrap();
    let q = client.encrypt_normalized(&[0.2], &mut rng).unwrap();
    assert!(matches!(
        server.evaluate(&q, &mut rng),
        Err(Error::InvalidArgument { .. })
    ));
    let insecure = TreeParams::new(PegasusPreset::InsecureTest).unwrap();
    assert!(matches!(
        TreeClient::generate(insecure, &mut rng),
        Err(Error::Lwe(rnsfhe_lwe::LweError::Insecure { .. }))
    ));
}

/// Two-sample Kolmogorov-Smirnov statistic.
fn ks_statistic(a: &[f64], b: &[f64]) -> f64 {
    let mut a = a.to_vec();
    let mut b = b.to_vec();
    a.sort_by(f64::total_cmp);
    b.sort_by(f64::total_cmp);
    let (mut i, mut j, mut d) = (0, 0, 0.0f64);
    while i < a.len() && j < b.len() {
        if a[i] <= b[j] {
            i += 1;
        } else {
            j += 1;
        }
        d = d.max((i as f64 / a.len() as f64 - j as f64 / b.len() as f64).abs());
    }
    d
}

/// The KS critical value at level 1 %: `1.628 sqrt((n + m) / (n m))`.
fn ks_critical(n: usize, m: usize) -> f64 {
    1.628 * ((n + m) as f64 / (n * m) as f64).sqrt()
}

/// Sanitization: a stump and a full tree of depth 2 (4 leaves, 4 tables more) give the same label to
/// a query; the errors of their answers over many evaluations are indistinguishable by a two-sample
/// Kolmogorov-Smirnov test at 1 % (which rejects a shift of one standard deviation on the same
/// samples), and their width is the flooding's.
#[test]
fn sanitized_answers_do_not_reveal_the_tree() {
    let (client, key, mut rng) = setup(5);
    let stump = stump(1, 0);
    // Depth 2, labels alternating: the query's path ends at a leaf of label 1, as the stump's.
    let mut nodes = Vec::new();
    for i in 0..3 {
        nodes.push(Node::Internal {
            feature: i % 2,
            threshold: 0.25 + 0.5 * ((i / 2) % 2) as f64,
            left: 2 * i + 1,
            right: 2 * i + 2,
        });
    }
    for k in 0..4 {
        nodes.push(Node::Leaf { label: k % 2 });
    }
    let full = DecisionTree::new(nodes, 2, 2).unwrap();
    let x = [0.1, 0.6];
    assert_eq!(stump.predict(&x).unwrap(), 1);
    assert_eq!(full.predict(&x).unwrap(), 1);
    let servers = [
        TreeServer::new(stump, unit_scaling(2), Arc::clone(&key)).unwrap(),
        TreeServer::new(full, unit_scaling(2), Arc::clone(&key)).unwrap(),
    ];
    let samples = 50;
    let errors: Vec<Vec<f64>> = servers
        .iter()
        .map(|server| {
            (0..samples)
                .map(|_| {
                    let q = client.encrypt_normalized(&x, &mut rng).unwrap();
                    let label = server.evaluate(&q, &mut rng).unwrap();
                    assert_eq!(client.decrypt(&label).unwrap(), 1);
                    client.label_error(&label).unwrap()
                })
                .collect()
        })
        .collect();
    let flooding = servers[0].flooding();
    let sigma = flooding.margin / FLOOD_SIGMAS;
    assert!(flooding.sigma_before < sigma / 64.0, "{flooding:?}");
    for e in &errors {
        let sd = (e.iter().map(|v| v * v).sum::<f64>() / e.len() as f64).sqrt();
        assert!(
            (sd / sigma - 1.0).abs() < 0.3,
            "error width {sd:.3e} against the flooding's {sigma:.3e}"
        );
    }
    let d = ks_statistic(&errors[0], &errors[1]);
    let critical = ks_critical(samples, samples);
    assert!(d < critical, "KS statistic {d:.3} >= {critical:.3}");
    // The test has power: a shift of one sigma of the same samples is rejected.
    let shifted: Vec<f64> = errors[1].iter().map(|v| v + sigma).collect();
    assert!(ks_statistic(&errors[0], &shifted) > critical);
}
