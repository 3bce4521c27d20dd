//! Private decision-tree evaluation with PEGASUS look-up tables (Lu, Huang, Hong, Ma, Qu, IEEE S&P 2021,
//! Section V.B and Table VII): the client sends one RLWE ciphertext of its features, the server evaluates
//! its secret tree on it and returns one LWE ciphertext of the label, sanitized so that it reveals the
//! label and nothing else about the tree.
//!
//! **The query** (what "one RLWE ciphertext ... `O(ceil(d / n_lwe) n_lwe log q_0)` bits" is taken to mean):
//! an RLWE ciphertext of degree `n_lwe` (PEGASUS Table IV: 2^10) modulo the LWE side's modulus `q`
//! (`q_0 ~ 2^45` for Table IV) under the LWE secret itself, feature `j` in coefficient `j`. Sample
//! extraction (PEGASUS Section II.C) gives the tables' inputs directly: no CKKS ring, no
//! slots-to-coefficients, no dimension switch. Its uniform part is sent as a 32-byte seed, so the query
//! is one polynomial: 5.8 KB at Table IV, and the answer (an LWE ciphertext of dimension `n_lwe` modulo
//! `q`) 5.8 KB. PEGASUS's 16.89 KB is this query with both polynomials plus the answer
//! (`(2 + 1) 1024 * 45` bits = 16.88 KiB); the seed halves the upload. Serialized ([`serialization`]:
//! header, payload, digest) the query is 5,850 bytes and the answer 5,826 at Table IV.
//!
//! **What is public**: the parameters, the feature count `d`, the class count `C` and the per-feature map
//! [`FeatureScaling`] into `[0, 1]` (ranges or quantile knots). **What stays the server's**: the tree's
//! shape (depth, node and leaf counts), its features per node, thresholds and leaf labels.
//!
//! **Evaluation** ([`TreeServer::evaluate`]): one comparison table per internal node on
//! `g(x_f) - g(t)` gives the edge bit; per leaf, the path sum `v_k` by LWE additions is zero exactly on
//! the path the query takes; one predicate table per leaf `T_k(v) = c_k I(v <= 1/2)`; their sum is the
//! label value, which a last table re-encodes (sanitization, below). `N + L + 1` tables for `N` internal
//! nodes and `L` leaves, each stage one parallel batch. Every table output goes back to `n_lwe` by the
//! switching key of PEGASUS Fig. 9 before it is read by the next.
//!
//! **Sanitization**: the sum of the leaves' outputs has an error whose variance grows with the leaf
//! count and whose value depends on which path sums were near zero; the last table outputs the label
//! with the error of one blind rotation whatever its input was (the table is flat on each label's
//! window), the switch back adds the key switch's, and the server then adds a fresh public-key
//! encryption of zero (the mask becomes pseudorandom under RLWE, independent of the tree) and a Gaussian
//! of width close to a tenth of half a label step, which drowns what is left (the variances of the
//! blind rotation and key switch vary a little with the input's mask). See SECURITY.md.
//!
//! **Accuracy**: a feature farther than [`TreeServer::comparison_resolution`] from a threshold takes the
//! branch it takes in the clear; the path sums and the label are read with the margins the constructor
//! checks ([`crate::Error::TreeTooLarge`] names the depth, leaf or class limit otherwise).
//!
//! This application uses no [`crate::Comparator`]: that one reads the LWE ciphertexts of a CKKS
//! pipeline and is built on its evaluator (CKKS keys of gigabytes at Table IV); the tree needs only the
//! LWE side's keys, taken from the same layer ([`rnsfhe_lwe::LutEvaluator`],
//! [`rnsfhe_lwe::LweSwitchingKey`]) with the same error bounds.
//!
//! ```no_run
//! use std::sync::Arc;
//! use rnsfhe_apps::decision_tree::{DecisionTree, FeatureScaling, Node, TreeClient, TreeParams, TreeServer};
//! use rnsfhe_ckks::Csprng;
//! use rnsfhe_lwe::PegasusPreset;
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let mut rng = Csprng::from_os()?;
//! // Client: keys (the server key goes to the server).
//! let params = TreeParams::new(PegasusPreset::Secure128)?;
//! let (client, server_key) = TreeClient::generate(params, &mut rng)?;
//! // Server: its tree (x0 <= 2.5 ? label 0 : label 1) and the public feature ranges.
//! let tree = DecisionTree::new(
//!     vec![
//!         Node::Internal { feature: 0, threshold: 2.5, left: 1, right: 2 },
//!         Node::Leaf { label: 0 },
//!         Node::Leaf { label: 1 },
//!     ],
//!     1,
//!     2,
//! )?;
//! let scaling = FeatureScaling::linear(&[0.0], &[10.0])?;
//! let server = TreeServer::new(tree, scaling.clone(), Arc::new(server_key))?;
//! // One round: query, label.
//! let query = client.encrypt(&scaling, &[7.0], &mut rng)?;
//! let label = server.evaluate(&query, &mut rng)?;
//! assert_eq!(client.decrypt(&label)?, 1);
//! # Ok(())
//! # }
//! ```

mod model;
mod protocol;

pub use model::{DecisionTree, FeatureScaling, LeafPath, Node};
pub use protocol::serialization;
pub use protocol::{
    EncryptedLabel, EncryptedQuery, Flooding, TreeClient, TreeParams, TreeServer, TreeServerKey,
    FLOOD_SIGMAS,
};
