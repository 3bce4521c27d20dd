//! # rnsfhe-apps
//!
//! Applications on top of the rnsfhe schemes. So far: **logistic-regression training on encrypted data**,
//! the experiment of RNS-CKKS (Cheon, Han, Kim, Kim, Song, "A Full RNS Variant of Approximate Homomorphic
//! Encryption", SAC 2018) Section 5.3 and Table 4, which re-implements the method of Kim, Song, Kim, Lee
//! and Cheon ("Logistic regression model training based on the approximate homomorphic encryption", BMC
//! Medical Genomics 11(Suppl 4):83, 2018): Nesterov's accelerated gradient descent on the whole dataset
//! packed in one ciphertext, with the sigmoid replaced by a least-squares polynomial.
//!
//! * [`dataset`]: [`Dataset`], the lbw and uis datasets of Table 4 (shipped under `data/`) or any numeric
//!   CSV file, and their normalization;
//! * [`packing`]: [`PackedLayout`], the matrix `Z = [y_i (1, x_i)]` row-major in one ciphertext, and the
//!   rotate-and-add patterns on its rows and columns;
//! * [`logistic`]: [`LogisticRegression`] (`fit_encrypted`, `fit_plain`), [`LogisticModel`] (plain
//!   weights: `predict_proba`, `predict`, encrypted prediction), [`EncryptedModel`] (encrypted weights);
//! * [`plaintext`]: the same procedure on `f64` values, the reference the encrypted training is checked
//!   against;
//! * [`metrics`]: accuracy and AUC (rank statistic with ties);
//! * [`comparison`]: min / max, max-pooling, bitonic sorting and min-index / max-index on the LWE
//!   ciphertexts of a PEGASUS pipeline and on its CKKS ciphertexts (PEGASUS Section V.A):
//!   [`Comparator`], [`ComparisonKey`];
//! * [`decision_tree`]: private decision-tree evaluation (PEGASUS Section V.B, Table VII): the client
//!   sends one RLWE ciphertext, the server's secret tree answers with one sanitized LWE ciphertext:
//!   [`DecisionTree`], [`TreeClient`], [`TreeServer`];
//! * [`kmeans`]: one k-means centroid update on encrypted data (PEGASUS Section V.C, Table VIII):
//!   [`KMeansLayout`], [`KMeansEvaluator`], and the plaintext reference [`kmeans::plain`].
//!
//! ```no_run
//! use rnsfhe_apps::{Dataset, LogisticRegression, PackedLayout};
//! use rnsfhe_ckks::{CkksContext, CkksDecryptor, CkksEncryptor, Csprng, Evaluator, KeyGenerator, Preset};
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! // Client: normalize, pack and encrypt Z; keys with the rotations the training needs.
//! let (data, _) = Dataset::load_lbw()?.normalize();
//! let ctx = CkksContext::new(Preset::PaperTable4.params())?;
//! let layout = PackedLayout::for_dataset(&data)?;
//! let mut rng = Csprng::from_os()?;
//! let kg = KeyGenerator::new(&ctx, &mut rng)?;
//! let keys = kg.generate_all(&layout.rotation_steps(), false, &mut rng)?;
//! let enc = CkksEncryptor::with_public_key(&ctx, &keys.public)?;
//! let z = layout.encrypt(&ctx, &enc, &layout.pack_z(&data)?, &mut rng)?;
//!
//! // Server: train on the ciphertext; the weights stay encrypted.
//! let eval = Evaluator::new(&ctx).with_relin_key(keys.relin)?.with_galois_keys(keys.galois)?;
//! let lr = LogisticRegression::default();
//! let encrypted_model = lr.fit_encrypted(&eval, &z, &layout)?;
//!
//! // Client: decrypt the model and use it.
//! let model = encrypted_model.decrypt(&CkksDecryptor::new(&ctx, &keys.secret)?)?;
//! let metrics = model.evaluate(&data)?;
//! println!("accuracy {:.2}%, AUC {:.3}", 100.0 * metrics.accuracy, metrics.auc);
//! # Ok(())
//! # }
//! ```
//!
//! Errors are [`Error`](enum@Error) (module [`error`]).

pub mod comparison;
pub mod dataset;
pub mod decision_tree;
pub mod error;
pub mod kmeans;
pub mod logistic;
pub mod logistic_bootstrap;
pub mod metrics;
pub mod packing;
pub mod plaintext;

pub use comparison::{Comparator, ComparisonKey, Form, Order, Outputs};
pub use dataset::{Dataset, Normalization};
pub use decision_tree::{DecisionTree, FeatureScaling, TreeClient, TreeParams, TreeServer};
pub use error::{Error, Result};
pub use kmeans::{
    EncryptedCentroids, EncryptedPoints, KMeansEncoding, KMeansEvaluator, KMeansKeys, KMeansLayout,
    KMeansOptions,
};
pub use logistic::{
    sigmoid_polynomial, EncryptedModel, LogisticModel, LogisticRegression, NesterovStep,
    NESTEROV_LAMBDA0,
};
pub use logistic_bootstrap::WEIGHT_RANGE;
pub use metrics::{accuracy, auc, Metrics};
pub use packing::PackedLayout;
