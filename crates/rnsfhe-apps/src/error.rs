//! Errors of `rnsfhe-apps`: datasets, packing, training and prediction all report [`Error`](enum@Error),
//! whose variants carry the numbers at fault and say what to do.

use std::path::PathBuf;

use thiserror::Error;

/// Everything that can go wrong in `rnsfhe-apps`.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum Error {
    /// An error of the CKKS layer (evaluation, keys, encoding), passed through.
    #[error(transparent)]
    Ckks(#[from] rnsfhe_ckks::Error),
    /// An error of the LWE layer (look-up tables, key switching, LWE arithmetic), passed through.
    #[error(transparent)]
    Lwe(#[from] rnsfhe_lwe::LweError),
    /// An error of the PEGASUS pipeline (slot count, levels, keys, repacking), passed through.
    #[error(transparent)]
    Pegasus(#[from] rnsfhe_pegasus::PegasusError),
    /// Values whose declared bound puts an intermediate of a comparison outside the domain of the
    /// look-up tables (PEGASUS Fig. 2 reads inputs with `|Delta_in x| < q_0 / 4`, here `|x| <= B`, the
    /// pipeline's input bound): past it a table wraps around and returns a wrong value, undetectably.
    #[error(
        "{operation}: values bounded by {bound} make intermediates up to {needed} (a factor {factor} of \
         the bound), beyond the look-up tables' domain [-{domain}, {domain}] (the pipeline's input \
         bound B): declare a bound of at most {} (Comparator::new), or make the pipeline with \
         PipelineOptions::input_bound >= {needed}",
        domain / factor
    )]
    OutOfDomain {
        /// The function.
        operation: &'static str,
        /// The declared bound of the input values.
        bound: f64,
        /// How much larger than the values the largest intermediate can be.
        factor: f64,
        /// The largest intermediate, `factor * bound`.
        needed: f64,
        /// The tables' domain `B`.
        domain: f64,
    },
    /// A data file that cannot be read.
    #[error("cannot read {path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The operating system's error.
        source: std::io::Error,
    },
    /// A malformed CSV file (missing column, unparsable number, wrong number of fields).
    #[error("{path}, line {line}: {reason}")]
    Csv {
        /// The file.
        path: PathBuf,
        /// 1-based line number (the header is line 1).
        line: usize,
        /// What is wrong.
        reason: String,
    },
    /// No samples, or no features.
    #[error("empty data: {what}; training needs at least one sample with at least one feature")]
    EmptyData {
        /// What is empty.
        what: String,
    },
    /// A NaN or infinite value.
    #[error("{what} at sample {row}, column {column} is not finite ({value}): remove or impute it first")]
    NonFinite {
        /// Which input (feature, weight, ...).
        what: &'static str,
        /// Sample index (0-based).
        row: usize,
        /// Column index (0-based).
        column: usize,
        /// The value.
        value: f64,
    },
    /// A label that is neither 0/1 nor -1/+1.
    #[error("label of sample {row} is {value}: labels must be 0/1 or -1/+1")]
    InvalidLabel {
        /// Sample index (0-based).
        row: usize,
        /// The value.
        value: f64,
    },
    /// Rows of different lengths, or labels and features of different counts.
    #[error("shape mismatch in {what}: expected {expected}, found {found}")]
    Shape {
        /// Which input.
        what: String,
        /// Expected length.
        expected: usize,
        /// Length found.
        found: usize,
    },
    /// The packed matrix does not fit one ciphertext.
    #[error(
        "{samples} samples x {width} columns, padded to {rows} x {columns} = {needed} slots, do not fit in \
         {available} slots (N/2): use a larger ring degree N (at least {min_n}), or fewer samples"
    )]
    TooManySlots {
        /// Number of samples `n`.
        samples: usize,
        /// Columns before padding (`d + 1`).
        width: usize,
        /// Rows after padding (a power of two).
        rows: usize,
        /// Columns after padding (a power of two).
        columns: usize,
        /// `rows * columns`.
        needed: usize,
        /// Slots of the ciphertext or context.
        available: usize,
        /// Smallest ring degree that fits, `2 * needed`.
        min_n: usize,
    },
    /// Not enough multiplicative levels for the requested training.
    #[error(
        "not enough levels for {iterations} iterations with the degree-{degree} sigmoid: training needs \
         {needed} levels ({per_iteration} per iteration after the first, which uses 1) and {keep} more are \
         to be kept in the model, but the ciphertext has {available} (level {level} in limbs); use fewer \
         iterations, a lower degree, fewer kept levels, or parameters with at least {} levels \
         (e.g. Preset::PaperTable4 has 25)",
        needed + keep
    )]
    NotEnoughLevels {
        /// Iterations requested.
        iterations: usize,
        /// Sigmoid degree.
        degree: usize,
        /// Levels the training consumes.
        needed: usize,
        /// Levels one iteration after the first consumes.
        per_iteration: usize,
        /// Levels to be left in the encrypted weights ([`crate::LogisticRegression::keep_levels`]).
        keep: usize,
        /// Levels available (`level - 1`).
        available: usize,
        /// The input's level in limbs.
        level: usize,
    },
    /// A ciphertext whose slot count differs from the layout's.
    #[error(
        "the ciphertext has {ciphertext} slots but the layout packs {layout}: encrypt the packed values \
         with PackedLayout::encrypt (or encode them with layout.slots() slots)"
    )]
    LayoutMismatch {
        /// Slots of the ciphertext.
        ciphertext: usize,
        /// Slots of the layout.
        layout: usize,
    },
    /// An invalid setting (degree, iteration count, learning rate, ...).
    #[error("invalid {what}: {reason}")]
    InvalidArgument {
        /// Which setting.
        what: &'static str,
        /// Why, and what is accepted.
        reason: String,
    },
    /// A decision tree that is not a well-formed tree (private decision trees, PEGASUS Section V.B).
    #[error("invalid decision tree: {reason}")]
    InvalidTree {
        /// What is wrong, naming the node.
        reason: String,
    },
    /// A decision tree (or query) beyond what the parameters evaluate correctly: the error names the
    /// limit and why it exists.
    #[error(
        "decision tree: {what} is {value}, beyond the limit {limit} of these parameters: {reason}"
    )]
    TreeTooLarge {
        /// The quantity (depth, leaves, feature count, classes).
        what: &'static str,
        /// Its value.
        value: usize,
        /// The largest the parameters allow.
        limit: usize,
        /// Why.
        reason: String,
    },
}

/// `Result` with this crate's [`Error`](enum@Error).
pub type Result<T> = std::result::Result<T, Error>;
