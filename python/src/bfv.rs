//! `rnsfhe._rnsfhe.bfv`: Python bindings of the BFV scheme (`rnsfhe-bfv`, HPS form), re-exported by the
//! pure-Python module `rnsfhe.bfv` (which adds the `Session` convenience class and `reduce`).
//!
//! Objects: `Context` (checked parameters), `KeySet` and its keys, `Encryptor`, `Decryptor` (with the
//! diagnostic noise budget), `Evaluator` and `Ciphertext` (with Python operators and row / column
//! rotations). As in `rnsfhe.ckks`, every `Ciphertext` holds a shared reference to the evaluator that made
//! it (`Arc<Eval>`, which owns the relinearization and Galois keys), so `a * b` needs no key argument; it also remembers its encoding ("batch" or
//! "coeff") so that `ct + array` encodes the array the same way and decryption decodes it. Values are
//! numpy `int64` in and out. Errors of the Rust layers become `ValueError` with the Rust message; key
//! generation, encryption, decryption and every homomorphic operation run with the GIL released. What
//! this module shares with `ckks` (the key classes, and the members every `Context`, `KeySet`,
//! `Evaluator` and `Ciphertext` has) is written by the macros of [`crate::common`].

use std::sync::Arc;

use numpy::{PyArray1, PyArrayDescrMethods, PyArrayMethods, PyUntypedArray, PyUntypedArrayMethods};
use pyo3::exceptions::{PyOverflowError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyFloat, PyInt};
use rnsfhe::math::sampling::Csprng;
use rnsfhe::math::wire::Serializable;
use rnsfhe_bfv::{
    BatchEncoder, BfvContext, BfvError, BfvParams, BfvPreset, Ciphertext, CoeffEncoder, Decryptor,
    Encryptor, Evaluator, GaloisKeys, KeyGenerator, Plaintext, PublicKey, RelinKey, SecretKey,
    SeededCiphertext, HPS_SIGMA,
};

use crate::common::{
    add_scheme_classes, as_array, ciphertext_methods, ciphertext_wire_class, context_methods,
    evaluator_methods, key_classes, keyset_methods, load_object, preset_name, preset_names,
    preset_prefix, py_bool, rotations_of_elements, value_error_with_hint, warn_user, wire_context,
    wire_key_class, wire_methods, wire_objects, wrong_dimensions, BinOp, ContextCache, Int, Scheme,
    WireClass, WireObject,
};

const SCHEME: Scheme = Scheme {
    module: "bfv",
    name: "BFV",
};

/// Contexts loaded from bytes (`Context.from_bytes`, unpickling), by their exact bytes: the keyless
/// evaluator of each (which owns the context), held weakly.
static CONTEXTS: ContextCache<Eval> = ContextCache::new();

wire_context!(BfvContext);

wire_objects!(BfvContext {
    PublicKey => |c| &**c.rlwe(),
    RelinKey => |c| c,
    GaloisKeys => |c| c,
    Ciphertext => |c| c,
});

/// A BFV error as a Python `ValueError` with the Rust message, plus a Python hint where one helps.
fn bfv_error(err: BfvError) -> PyErr {
    let hint = match &err {
        BfvError::Insecure { .. } => " (Python: pass allow_insecure=True)".to_string(),
        BfvError::BatchingUnavailable { .. } => {
            " (Python: encrypt(values, encoding=\"coeff\"))".to_string()
        }
        BfvError::MissingGaloisKey { step: Some(s), .. } => {
            format!(" (Python: include {s} in ctx.keygen(rotations=[...]))")
        }
        BfvError::MissingGaloisKey { step: None, .. } => {
            " (Python: ctx.keygen(column_swap=True))".to_string()
        }
        _ => String::new(),
    };
    value_error_with_hint(err, &hint)
}

/// Error of a rotation by an evaluator without Galois keys.
fn missing_galois_keys(operation: &str) -> PyErr {
    PyValueError::new_err(format!(
        "{operation} needs Galois keys: generate them with ctx.keygen(rotations=[...], column_swap=True) \
         and build the evaluator from that KeySet, ctx.evaluator(keys) (or galois_keys=...), or use \
         bfv.Session(ctx, rotations=[...], column_swap=True)"
    ))
}

/// Error of a rotation of a coefficient-encoded ciphertext.
fn rotation_needs_batch(operation: &str) -> PyErr {
    PyValueError::new_err(format!(
        "{operation} acts on the slots of a batch-encoded ciphertext; this one is coefficient-encoded \
         (its automorphism X -> X^g would not rotate the values)"
    ))
}

/// Error of a ciphertext multiplication by an evaluator without a relinearization key.
fn missing_relin_key() -> PyErr {
    PyValueError::new_err(
        "ciphertext multiplication needs a relinearization key: build the evaluator from a KeySet, \
         ctx.evaluator(keys), or give it relin_key=..., or use a bfv.Session",
    )
}

// ------------------------------------------------------------------------------------------------------
// Encodings
// ------------------------------------------------------------------------------------------------------

/// How the values of a ciphertext are laid out in its plaintext polynomial.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Encoding {
    /// `N` SIMD slots of `Z_t` (prime `t = 1 mod 2N`): operations act slot-wise.
    Batch,
    /// Values are the coefficients of the plaintext polynomial (any `t`): products are negacyclic
    /// convolutions.
    Coeff,
}

impl Encoding {
    fn name(self) -> &'static str {
        match self {
            Encoding::Batch => "batch",
            Encoding::Coeff => "coeff",
        }
    }

    /// `None` (the context's default), "batch" or "coeff".
    fn parse(s: Option<&str>, ctx: &BfvContext) -> PyResult<Self> {
        match s {
            None => Ok(default_encoding(ctx)),
            Some("batch") => Ok(Encoding::Batch),
            Some("coeff") => Ok(Encoding::Coeff),
            Some(other) => Err(PyValueError::new_err(format!(
                "unknown encoding {other:?}: expected 'batch' (SIMD slots, needs a prime t = 1 mod 2N) \
                 or 'coeff' (the values are the coefficients of the plaintext polynomial)"
            ))),
        }
    }
}

/// "batch" when `t` allows batching, else "coeff".
fn default_encoding(ctx: &BfvContext) -> Encoding {
    if ctx.supports_batching() {
        Encoding::Batch
    } else {
        Encoding::Coeff
    }
}

/// The encoders of a context (batching only when `t` allows it).
struct Encoders {
    ctx: Arc<BfvContext>,
    batch: Option<BatchEncoder>,
    coeff: CoeffEncoder,
}

impl Encoders {
    fn new(ctx: &Arc<BfvContext>) -> Self {
        Self {
            ctx: Arc::clone(ctx),
            batch: BatchEncoder::new(ctx).ok(),
            coeff: CoeffEncoder::new(ctx),
        }
    }

    fn batch(&self) -> Result<&BatchEncoder, BfvError> {
        self.batch.as_ref().ok_or(BfvError::BatchingUnavailable {
            t: self.ctx.plaintext_modulus(),
            n: self.ctx.n(),
            two_n: 2 * self.ctx.n(),
        })
    }

    fn encode(&self, values: &[i64], encoding: Encoding) -> Result<Plaintext, BfvError> {
        match encoding {
            Encoding::Batch => self.batch()?.encode_i64(values),
            Encoding::Coeff => self.coeff.encode_i64(values),
        }
    }

    /// The constant polynomial `c`: `c` in every slot (batch), or `c` as coefficient 0 (coeff).
    fn constant(&self, c: i64) -> Result<Plaintext, BfvError> {
        self.coeff.encode_i64(&[c])
    }

    /// The `N` values of `pt`: centered in `(-t/2, t/2]` if `signed`, else in `[0, t)`.
    fn decode(
        &self,
        pt: &Plaintext,
        encoding: Encoding,
        signed: bool,
    ) -> Result<Vec<i64>, BfvError> {
        match (encoding, signed) {
            (Encoding::Batch, true) => self.batch()?.decode_i64(pt),
            (Encoding::Coeff, true) => self.coeff.decode_i64(pt),
            (Encoding::Batch, false) => Ok(to_i64(self.batch()?.decode_u64(pt)?)),
            (Encoding::Coeff, false) => Ok(to_i64(self.coeff.decode_u64(pt)?)),
        }
    }
}

/// Values in `[0, t)` with `t <= 2^60` as `i64` (lossless).
fn to_i64(v: Vec<u64>) -> Vec<i64> {
    v.into_iter().map(|x| x as i64).collect()
}

// ------------------------------------------------------------------------------------------------------
// numpy and Python values
// ------------------------------------------------------------------------------------------------------

/// The error of a non-integer operand or input.
fn not_integers(what: &str, dtype: impl std::fmt::Display) -> PyErr {
    PyTypeError::new_err(format!(
        "{what}: expected integers (an int64 array or Python ints), got dtype {dtype}; BFV computes \
         exactly modulo t, so convert deliberately (e.g. numpy.rint(x).astype(numpy.int64))"
    ))
}

/// Checks `-t < v < t` for every value.
fn check_range(values: &[i64], t: u64, what: &str) -> PyResult<()> {
    let t = t as i64; // t <= 2^60
    if let Some((i, &v)) = values.iter().enumerate().find(|(_, &v)| v <= -t || v >= t) {
        return Err(PyValueError::new_err(format!(
            "{what}: value {v} at index {i} is out of range for the plaintext modulus t = {t}: values \
             must satisfy -t < v < t (reduce them first, e.g. numpy.mod(x, t))"
        )));
    }
    Ok(())
}

/// The integers of an array of any shape, flattened, or `None` for a non-integer dtype. Integers that do
/// not fit in int64 raise ValueError.
fn integer_values(arr: &Bound<'_, PyUntypedArray>, what: &str) -> PyResult<Option<Vec<i64>>> {
    let py = arr.py();
    if arr.len() == 0 {
        return Ok(Some(Vec::new()));
    }
    let flat = arr.call_method0("ravel")?;
    let overflow = |i: usize, v: &dyn std::fmt::Display| {
        PyValueError::new_err(format!(
            "{what}: value {v} at index {i} does not fit in int64"
        ))
    };
    Ok(match arr.dtype().kind() {
        b'i' | b'b' => {
            let a = flat.call_method1("astype", (numpy::dtype::<i64>(py),))?;
            let a = a.downcast::<PyArray1<i64>>()?.readonly();
            Some(a.as_array().iter().copied().collect())
        }
        b'u' => {
            let a = flat.call_method1("astype", (numpy::dtype::<u64>(py),))?;
            let a = a.downcast::<PyArray1<u64>>()?.readonly();
            let v = a.as_array();
            Some(
                v.iter()
                    .enumerate()
                    .map(|(i, &x)| i64::try_from(x).map_err(|_| overflow(i, &x)))
                    .collect::<PyResult<Vec<i64>>>()?,
            )
        }
        // Python ints too large for a numpy integer dtype land in an object array.
        b'O' => {
            let items: Vec<Bound<'_, PyAny>> = flat.call_method0("tolist")?.extract()?;
            if !items.iter().all(|x| x.is_instance_of::<PyInt>()) {
                return Ok(None);
            }
            Some(
                items
                    .iter()
                    .enumerate()
                    .map(|(i, x)| {
                        x.extract::<i64>().map_err(|err| {
                            if err.is_instance_of::<PyOverflowError>(py) {
                                overflow(i, x)
                            } else {
                                err
                            }
                        })
                    })
                    .collect::<PyResult<Vec<i64>>>()?,
            )
        }
        _ => None,
    })
}

/// Reads a 1-D sequence of integers (numpy array, list, tuple) with `-t < v < t` and at most `n` values.
fn read_values(obj: &Bound<'_, PyAny>, ctx: &BfvContext, what: &str) -> PyResult<Vec<i64>> {
    let arr = as_array(obj)?;
    if arr.ndim() != 1 {
        return Err(wrong_dimensions(
            format_args!("{what}: expected a 1-D array of integers"),
            arr.ndim(),
        ));
    }
    let values = integer_values(&arr, what)?.ok_or_else(|| not_integers(what, arr.dtype()))?;
    check_length(values.len(), ctx, what)?;
    check_range(&values, ctx.plaintext_modulus(), what)?;
    Ok(values)
}

fn check_length(len: usize, ctx: &BfvContext, what: &str) -> PyResult<()> {
    if len > ctx.n() {
        return Err(PyValueError::new_err(format!(
            "{what}: {len} values do not fit in a plaintext of N = {} slots or coefficients",
            ctx.n()
        )));
    }
    Ok(())
}

/// The right operand of an arithmetic operation with a ciphertext.
enum Operand<'a> {
    Ct(&'a PyCiphertext),
    Int(i64),
    Vector(Vec<i64>),
}

/// Classifies a Python operand: a Ciphertext, an integer (Python or numpy), or a 1-D array-like of
/// integers. Floats and float arrays raise TypeError (BFV is exact); anything else gives `None` (the
/// operators then return `NotImplemented`). Values out of range raise ValueError.
fn classify<'a>(other: &'a Bound<'_, PyAny>, ctx: &BfvContext) -> PyResult<Option<Operand<'a>>> {
    let what = "operand";
    if let Ok(ct) = other.downcast::<PyCiphertext>() {
        return Ok(Some(Operand::Ct(ct.get())));
    }
    let t = ctx.plaintext_modulus();
    if other.is_instance_of::<PyInt>() {
        let k = other.extract::<i64>().map_err(|_| {
            PyValueError::new_err(format!("{what}: the integer {other} does not fit in int64"))
        })?;
        check_range(&[k], t, what)?;
        return Ok(Some(Operand::Int(k)));
    }
    if other.is_instance_of::<PyFloat>() {
        return Err(not_integers(what, "float"));
    }
    let Ok(arr) = as_array(other) else {
        return Ok(None);
    };
    let kind = arr.dtype().kind();
    if !matches!(kind, b'i' | b'u' | b'b' | b'O') && arr.len() > 0 {
        return if matches!(kind, b'f' | b'c') {
            Err(not_integers(what, arr.dtype()))
        } else {
            Ok(None)
        };
    }
    let Some(values) = integer_values(&arr, what)? else {
        return Ok(None);
    };
    match arr.ndim() {
        0 => {
            check_range(&values, t, what)?;
            Ok(Some(Operand::Int(values[0])))
        }
        1 => {
            check_length(values.len(), ctx, what)?;
            check_range(&values, t, what)?;
            Ok(Some(Operand::Vector(values)))
        }
        d => Err(wrong_dimensions(
            format_args!("{what}: expected a 1-D array of integers"),
            d,
        )),
    }
}

// ------------------------------------------------------------------------------------------------------
// The evaluator shared by ciphertexts
// ------------------------------------------------------------------------------------------------------

/// A Rust evaluator with its keys and the encoders; shared by `Arc` between an `Evaluator` and the
/// ciphertexts it produced.
struct Eval {
    ev: Evaluator,
    enc: Encoders,
    relin: Option<Arc<RelinKey>>,
    galois: Option<Galois>,
}

/// Galois keys with the rotation steps and column swap they were generated for.
#[derive(Clone)]
struct Galois {
    keys: Arc<GaloisKeys>,
    rotations: Vec<i64>,
    column_swap: bool,
}

impl Eval {
    fn new(ctx: &Arc<BfvContext>, relin: Option<Arc<RelinKey>>, galois: Option<Galois>) -> Self {
        Self {
            ev: Evaluator::new(ctx),
            enc: Encoders::new(ctx),
            relin,
            galois,
        }
    }

    fn galois_keys(&self, operation: &str) -> PyResult<&GaloisKeys> {
        self.galois
            .as_ref()
            .map(|g| g.keys.as_ref())
            .ok_or_else(|| missing_galois_keys(operation))
    }

    /// Both rows of the `2 x N/2` slot matrix rotated left by `step`.
    fn rotate_rows(&self, a: &Ciphertext, step: i64) -> PyResult<Ciphertext> {
        let gk = self.galois_keys("row rotation")?;
        self.ev.rotate_rows(a, step, gk).map_err(bfv_error)
    }

    /// The two rows of the slot matrix swapped.
    fn rotate_columns(&self, a: &Ciphertext) -> PyResult<Ciphertext> {
        let gk = self.galois_keys("column swap")?;
        self.ev.rotate_columns(a, gk).map_err(bfv_error)
    }

    fn ctx(&self) -> &Arc<BfvContext> {
        self.ev.context()
    }

    /// `a * b` relinearized (`relinearize`) or with three parts.
    fn multiply(&self, a: &Ciphertext, b: &Ciphertext, relinearize: bool) -> PyResult<Ciphertext> {
        if !relinearize {
            return self.ev.multiply_no_relin(a, b).map_err(bfv_error);
        }
        let rk = self.relin.as_deref().ok_or_else(missing_relin_key)?;
        self.ev.multiply(a, b, rk).map_err(bfv_error)
    }

    fn relinearize(&self, a: &Ciphertext) -> PyResult<Ciphertext> {
        let rk = self.relin.as_deref().ok_or_else(missing_relin_key)?;
        self.ev.relinearize(a, rk).map_err(bfv_error)
    }

    fn apply(
        &self,
        a: &Ciphertext,
        encoding: Encoding,
        op: BinOp,
        b: &Operand<'_>,
    ) -> PyResult<Ciphertext> {
        let ev = &self.ev;
        let plain = |pt: &Plaintext| -> Result<Ciphertext, BfvError> {
            match op {
                BinOp::Add => ev.add_plain(a, pt),
                BinOp::Sub => ev.sub_plain(a, pt),
                BinOp::RSub => ev.add_plain(&ev.negate(a)?, pt),
                BinOp::Mul => ev.multiply_plain(a, pt),
            }
        };
        match b {
            Operand::Ct(b) => match op {
                BinOp::Add => ev.add(a, &b.ct).map_err(bfv_error),
                BinOp::Sub => ev.sub(a, &b.ct).map_err(bfv_error),
                BinOp::RSub => ev.sub(&b.ct, a).map_err(bfv_error),
                BinOp::Mul => self.multiply(a, &b.ct, true),
            },
            Operand::Int(k) => match op {
                BinOp::Mul => ev.multiply_scalar(a, *k).map_err(bfv_error),
                _ => self
                    .enc
                    .constant(*k)
                    .and_then(|pt| plain(&pt))
                    .map_err(bfv_error),
            },
            Operand::Vector(v) => self
                .enc
                .encode(v, encoding)
                .and_then(|pt| plain(&pt))
                .map_err(bfv_error),
        }
    }
}

/// Checks that two ciphertext operands use the same encoding.
fn check_encodings(a: Encoding, b: &Operand<'_>) -> PyResult<()> {
    if let Operand::Ct(b) = b {
        if b.encoding != a {
            return Err(PyValueError::new_err(format!(
                "cannot combine a {:?}-encoded ciphertext with a {:?}-encoded one: their values are laid \
                 out differently in the plaintext polynomial; encrypt both with the same encoding",
                a.name(),
                b.encoding.name()
            )));
        }
    }
    Ok(())
}

/// Runs `op` on `a` and `other` with the GIL released; `None` for an unsupported operand.
fn binary(
    py: Python<'_>,
    eval: &Arc<Eval>,
    a: &PyCiphertext,
    other: &Bound<'_, PyAny>,
    op: BinOp,
) -> PyResult<Option<PyCiphertext>> {
    let Some(b) = classify(other, eval.ctx())? else {
        return Ok(None);
    };
    check_encodings(a.encoding, &b)?;
    let ct = py.allow_threads(|| eval.apply(&a.ct, a.encoding, op, &b))?;
    Ok(Some(PyCiphertext::new(ct, eval, a.encoding)))
}

/// Runs a unary operation with the GIL released; the result keeps `a`'s encoding.
fn unary(
    py: Python<'_>,
    eval: &Arc<Eval>,
    a: &PyCiphertext,
    f: impl FnOnce(&Eval, &Ciphertext) -> PyResult<Ciphertext> + Send,
) -> PyResult<PyCiphertext> {
    let ct = py.allow_threads(|| f(eval, &a.ct))?;
    Ok(PyCiphertext::new(ct, eval, a.encoding))
}

// ------------------------------------------------------------------------------------------------------
// Context
// ------------------------------------------------------------------------------------------------------

/// The checked, immutable parameters of BFV in the Halevi-Polyakov-Shoup form: ring degree N, plaintext
/// modulus t, ciphertext primes Q, auxiliary primes P of multiplication, relinearization decomposition.
///
/// Context(log_n, t, q_bits=55, q_count=2, *, relin_base_log=None, sigma=8/sqrt(2 pi),
/// allow_insecure=False)
///
/// * ``log_n``: N = 2^log_n is the ring degree (4 to 17); a plaintext holds N values.
/// * ``t``: the plaintext modulus, 2 <= t <= 2^60; arithmetic is exact modulo t. Batching (N SIMD
///   slots, slot-wise products) needs a prime t = 1 mod 2N, e.g. 65537 for N <= 2^15; any t works with
///   the coefficient encoding.
/// * ``q_bits``, ``q_count``: Q is ``q_count`` NTT primes of ``q_bits`` bits (20 to 61). Each
///   multiplication costs about log2(t) + log2(N) + a few bits of noise budget (``Decryptor.noise_budget``).
/// * ``relin_base_log``: base-2^w digits of each residue in relinearization (HPS Section 3.3; less noise,
///   larger keys); None for the plain CRT decomposition.
/// * ``sigma``: standard deviation of the error (HPS: 8 / sqrt(2 pi)).
///
/// The auxiliary basis P >= 2 t N Q is chosen automatically. Parameters not established as 128-bit secure
/// by the HE Standard (log2 Q above its bound for N) raise ValueError unless ``allow_insecure=True`` (then
/// a UserWarning is issued). ``Context.from_preset(name)`` builds the rows of HPS Table 3
/// (``rnsfhe.bfv.presets()``), ``Context.generate(t, depth)`` chooses N and Q for a depth, and
/// ``Context.from_moduli`` takes explicit primes.
#[pyclass(name = "Context", module = "rnsfhe.bfv", frozen)]
struct PyContext {
    ctx: Arc<BfvContext>,
    preset: Option<BfvPreset>,
    depth: Option<usize>,
    /// Keyless evaluator attached to ciphertexts encrypted without an explicit evaluator.
    plain: Arc<Eval>,
}

impl PyContext {
    fn build(
        py: Python<'_>,
        mut params: BfvParams,
        preset: Option<BfvPreset>,
        depth: Option<usize>,
        allow_insecure: bool,
    ) -> PyResult<Self> {
        params.insecure_for_testing = allow_insecure;
        let ctx = py
            .allow_threads(|| BfvContext::new(params))
            .map_err(bfv_error)?;
        if let Some(warning) = ctx.security_warning() {
            warn_user(py, &warning)?;
        }
        let plain = Arc::new(Self::keyless(&ctx));
        Ok(Self {
            ctx,
            preset,
            depth,
            plain,
        })
    }

    /// The keyless evaluator of a context.
    fn keyless(ctx: &Arc<BfvContext>) -> Eval {
        Eval::new(ctx, None, None)
    }

    /// The context (loaded from bytes) whose keyless evaluator is `plain`: no preset name or depth
    /// (finding the preset would mean generating every preset's primes).
    fn from_plain(plain: Arc<Eval>) -> Self {
        Self {
            ctx: Arc::clone(plain.ctx()),
            preset: None,
            depth: None,
            plain,
        }
    }
}

context_methods! {
    /// encryptor(key, evaluator=None) -> Encryptor
    ///
    /// An encryptor with a PublicKey, a KeySet (its public key) or a SecretKey (secret-key encryption,
    /// less noise). Its ciphertexts are attached to ``evaluator`` (default: a keyless evaluator of this
    /// context, enough for additions and plaintext / integer products, not for ciphertext products).
    fn encryptor;

    impl PyContext(BfvContext) {
        #[new]
        #[pyo3(signature = (log_n, t, q_bits = Int::new(55), q_count = Int::new(2), *, relin_base_log = None,
                            sigma = HPS_SIGMA, allow_insecure = false))]
        #[pyo3(
            text_signature = "(log_n, t, q_bits=55, q_count=2, *, relin_base_log=None, \
                                 sigma=3.1915382432114616, allow_insecure=False)"
        )]
        #[allow(clippy::too_many_arguments)]
        fn new(
            py: Python<'_>,
            log_n: Int,
            t: Int,
            q_bits: Int,
            q_count: Int,
            relin_base_log: Option<Int>,
            sigma: f64,
            allow_insecure: bool,
        ) -> PyResult<Self> {
            let (log_n, t) = (log_n.get::<u32>("log_n")?, t.get::<u64>("t")?);
            let (q_bits, q_count) = (q_bits.get::<u32>("q_bits")?, q_count.get::<usize>("q_count")?);
            let relin_base_log = Int::get_opt::<u32>(relin_base_log, "relin_base_log")?;
            if q_count > 256 {
                return Err(PyValueError::new_err(format!(
                    "q_count = {q_count} is out of range: at most 256 ciphertext primes"
                )));
            }
            let mut params = py
                .allow_threads(|| BfvParams::with_bit_sizes(log_n, t, q_bits, q_count))
                .map_err(bfv_error)?;
            params.relin_base_log = relin_base_log;
            params.sigma = sigma;
            Self::build(py, params, None, None, allow_insecure)
        }

        /// Context.from_moduli(log_n, t, q_moduli, p_moduli, relin_base_log=None, sigma=8/sqrt(2 pi),
        /// allow_insecure=False, galois_base_log=None) -> Context
        ///
        /// A context with explicit primes: ``q_moduli`` (the ciphertext modulus Q) and ``p_moduli`` (the
        /// auxiliary basis of multiplication, P >= 2 t N Q), all distinct NTT primes p = 1 mod 2N below 2^62.
        /// The keyword arguments are those of ``Context.params``, so ``Context.from_moduli(**ctx.params)``
        /// rebuilds ``ctx``. ``galois_base_log``: base-2^w digits of each residue in the key switching of
        /// rotations, None for the relinearization decomposition (``Context.generate`` sets it where a
        /// rotation of a fresh ciphertext would otherwise cost too much noise). Raises ValueError for
        /// invalid parameters.
        #[staticmethod]
        #[pyo3(signature = (log_n, t, q_moduli, p_moduli, relin_base_log = None, sigma = HPS_SIGMA,
                            allow_insecure = false, galois_base_log = None))]
        #[allow(clippy::too_many_arguments)]
        fn from_moduli(
            py: Python<'_>,
            log_n: Int,
            t: Int,
            q_moduli: Vec<Int>,
            p_moduli: Vec<Int>,
            relin_base_log: Option<Int>,
            sigma: f64,
            allow_insecure: bool,
            galois_base_log: Option<Int>,
        ) -> PyResult<Self> {
            let params = BfvParams {
                log_n: log_n.get("log_n")?,
                plaintext_modulus: t.get("t")?,
                q_moduli: Int::get_all(&q_moduli, "q_moduli")?,
                p_moduli: Int::get_all(&p_moduli, "p_moduli")?,
                relin_base_log: Int::get_opt(relin_base_log, "relin_base_log")?,
                galois_base_log: Int::get_opt(galois_base_log, "galois_base_log")?,
                sigma,
                insecure_for_testing: allow_insecure,
                conversion: rnsfhe_bfv::ConversionMode::ExactFloat,
            };
            Self::build(py, params, None, None, allow_insecure)
        }

        /// Context.from_preset(name) -> Context
        ///
        /// The context of a row of HPS Table 3 (``rnsfhe.bfv.presets()``; case-insensitive): "T2Depth1"
        /// (N = 2^11), "T2Depth5" (2^12), "T2Depth10" (2^13), "T2Depth20" (2^14), "T2Depth30" (2^15),
        /// "T2Depth50" (2^16), "T2Depth100" (2^17), all with t = 2 (coefficient encoding) and 128-bit security.
        /// Raises ValueError for an unknown name.
        #[staticmethod]
        fn from_preset(py: Python<'_>, name: &str) -> PyResult<Self> {
            let preset = SCHEME.find_preset(&BfvPreset::ALL, name)?;
            let params = py.allow_threads(|| preset.params()).map_err(bfv_error)?;
            Self::build(py, params, Some(preset), Some(preset.depth()), false)
        }

        /// Context.generate(t, depth, rotations_per_level=1) -> Context
        ///
        /// Parameters for plaintext modulus ``t`` and multiplicative ``depth`` by the procedure of HPS
        /// Section 6.1: the smallest N (2^10 to 2^17) whose ciphertext modulus of 55-bit primes satisfies the
        /// noise bound (HPS Eqs. (10)-(13)) of a depth-``depth`` circuit within the 128-bit HE Standard
        /// bound. Every circuit of ``depth`` multiplications (each relinearized) decrypts correctly even when
        /// each ciphertext is rotated (``rotate_rows``, ``rotate_columns``) up to ``rotations_per_level``
        /// times after encryption and after each multiplication: rotate, multiply, rotate, multiply, ...,
        /// rotate. ``rotations_per_level=0`` budgets multiplications only, as HPS Section 6.1 (the presets);
        /// then a rotation of a fresh ciphertext can cost as much noise budget as a multiplication. Additions
        /// are not budgeted (adding a ciphertexts costs at most log2(a) bits). Raises ValueError for depth
        /// 0, an unsupported t, or when no N up to 2^17 fits.
        #[staticmethod]
        #[pyo3(signature = (t, depth, rotations_per_level = Int::new(1)))]
        #[pyo3(text_signature = "(t, depth, rotations_per_level=1)")]
        fn generate(
            py: Python<'_>,
            t: Int,
            depth: Int,
            rotations_per_level: Int,
        ) -> PyResult<Self> {
            let (t, depth) = (t.get::<u64>("t")?, depth.get::<usize>("depth")?);
            let rotations_per_level = rotations_per_level.get::<usize>("rotations_per_level")?;
            let params = py
                .allow_threads(|| BfvParams::generate_with_rotations(t, depth, rotations_per_level))
                .map_err(bfv_error)?;
            Self::build(py, params, None, Some(depth), false)
        }

        /// keygen(rotations=(), column_swap=False) -> KeySet
        ///
        /// Samples a secret key (uniform ternary) and the public, relinearization and Galois keys: a row
        /// rotation key for each step in ``rotations`` (left by k for k > 0, right for k < 0; steps are taken
        /// modulo N/2, and multiples of N/2 need no key) and, if ``column_swap``, the key that swaps the two
        /// rows. Each Galois key has ``Context.galois_base_log``'s decomposition: as many components as the
        /// relinearization key when it is None, more with digits of its own (parameters from ``generate``
        /// at some depths, so that a rotation of a fresh ciphertext stays within the noise budget).
        /// Randomness comes from the operating system (ChaCha20). The GIL is released.
        #[pyo3(signature = (rotations = Vec::new(), column_swap = false))]
        fn keygen(&self, py: Python<'_>, rotations: Vec<Int>, column_swap: bool) -> PyResult<PyKeySet> {
            let rotations: Vec<i64> = Int::get_all(&rotations, "rotations")?;
            let ctx = &self.ctx;
            let mut steps: Vec<i64> = Vec::new();
            for s in rotations {
                if !steps.contains(&s) {
                    steps.push(s);
                }
            }
            let (secret, public, relin, galois) = py
                .allow_threads(|| -> Result<_, BfvError> {
                    let mut rng = Csprng::from_os()?;
                    let kg = KeyGenerator::new(ctx, &mut rng)?;
                    let public = kg.public_key(&mut rng)?;
                    let relin = kg.relin_key(&mut rng)?;
                    let galois = kg.galois_keys(&steps, column_swap, &mut rng)?;
                    Ok((kg.secret_key().clone(), public, relin, galois))
                })
                .map_err(bfv_error)?;
            Ok(PyKeySet {
                ctx: Arc::clone(ctx),
                secret: Arc::new(secret),
                public: Arc::new(public),
                relin: Arc::new(relin),
                galois: Galois {
                    keys: Arc::new(galois),
                    rotations: steps,
                    column_swap,
                },
            })
        }

        /// evaluator(keys=None, *, relin_key=None, galois_keys=None) -> Evaluator
        ///
        /// An evaluator with the relinearization and Galois keys of ``keys`` (a KeySet), or with the keys
        /// given separately (a server never sees the secret key). Without a relinearization key, ciphertext
        /// products raise ValueError; without Galois keys, rotations do; everything else works.
        #[pyo3(signature = (keys = None, *, relin_key = None, galois_keys = None))]
        fn evaluator(
            &self,
            keys: Option<&PyKeySet>,
            relin_key: Option<&PyRelinKey>,
            galois_keys: Option<&PyGaloisKeys>,
        ) -> PyResult<PyEvaluator> {
            let relin = relin_key
                .map(|k| Arc::clone(&k.key))
                .or(keys.map(|k| Arc::clone(&k.relin)));
            let galois = galois_keys
                .map(|g| g.galois.clone())
                .or(keys.map(|k| k.galois.clone()));
            if let Some(k) = &relin {
                check_fingerprint(&self.ctx, k.fingerprint(), "relinearization key")?;
            }
            if let Some(g) = &galois {
                check_fingerprint(&self.ctx, g.keys.fingerprint(), "Galois key set")?;
            }
            Ok(PyEvaluator {
                eval: Arc::new(Eval::new(&self.ctx, relin, galois)),
            })
        }

        /// Ring degree N (the number of slots or coefficients of a plaintext).
        #[getter]
        fn n(&self) -> usize {
            self.ctx.n()
        }

        /// The plaintext modulus t.
        #[getter]
        fn t(&self) -> u64 {
            self.ctx.plaintext_modulus()
        }

        /// Whether batching (N SIMD slots) is available: t is a prime = 1 mod 2N.
        #[getter]
        fn supports_batching(&self) -> bool {
            self.ctx.supports_batching()
        }

        /// The default encoding of ``encrypt``: "batch" if t allows batching, else "coeff".
        #[getter]
        fn encoding(&self) -> &'static str {
            default_encoding(&self.ctx).name()
        }

        /// The multiplicative depth the parameters were generated for (presets and ``generate``), else None.
        #[getter]
        fn depth(&self) -> Option<usize> {
            self.depth
        }

        /// log2(Q) of the ciphertext modulus.
        #[getter]
        fn log_q(&self) -> f64 {
            self.ctx.log_q()
        }

        /// log2(P) of the auxiliary basis of multiplication.
        #[getter]
        fn log_p(&self) -> f64 {
            self.ctx.log_p()
        }

        /// The ciphertext primes q_1 ... q_k.
        #[getter]
        fn q_moduli(&self) -> Vec<u64> {
            self.ctx.params().q_moduli.clone()
        }

        /// The auxiliary primes p_1 ... p_k' of multiplication.
        #[getter]
        fn p_moduli(&self) -> Vec<u64> {
            self.ctx.params().p_moduli.clone()
        }

        /// log2 of the relinearization digit base w, or None for the plain CRT decomposition.
        #[getter]
        fn relin_base_log(&self) -> Option<u32> {
            self.ctx.params().relin_base_log
        }

        /// log2 of the digit base w of the Galois (rotation) keys, or None for the relinearization
        /// decomposition.
        #[getter]
        fn galois_base_log(&self) -> Option<u32> {
            self.ctx.params().galois_base_log
        }

        /// True unless 128-bit security is established by the HE Standard table.
        #[getter]
        fn is_insecure(&self) -> bool {
            !self.ctx.is_secure()
        }

        /// The security estimate as text: the verdict of the HE Standard table (N, log2(Q), a uniform
        /// ternary secret and sigma, which must be at least 3.19) and the built-in lattice estimate of
        /// the same parameters (bits in the HE Standard's cost model and in core-SVP).
        #[getter]
        fn security(&self) -> String {
            self.ctx.security_summary()
        }

        /// The preset name, or None.
        #[getter]
        fn preset(&self) -> Option<String> {
            self.preset.map(preset_name)
        }

        /// The parameters as a dict of ``Context.from_moduli``'s keyword arguments.
        #[getter]
        fn params<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
            let p = self.ctx.params();
            let d = PyDict::new(py);
            d.set_item("log_n", p.log_n)?;
            d.set_item("t", p.plaintext_modulus)?;
            d.set_item("q_moduli", p.q_moduli.clone())?;
            d.set_item("p_moduli", p.p_moduli.clone())?;
            d.set_item("relin_base_log", p.relin_base_log)?;
            d.set_item("sigma", p.sigma)?;
            d.set_item("galois_base_log", p.galois_base_log)?;
            Ok(d)
        }

        fn __repr__(&self) -> String {
            let p = self.ctx.params();
            let name = preset_prefix(self.preset);
            format!(
                "Context({name}N=2^{}, t={}, log_q={:.1}, k={}, encoding={:?}{})",
                p.log_n,
                p.plaintext_modulus,
                self.ctx.log_q(),
                p.q_moduli.len(),
                self.encoding(),
                if self.ctx.is_secure() {
                    ""
                } else {
                    ", INSECURE"
                }
            )
        }

    }
}

/// ValueError unless `object` (of the fingerprint `got`) belongs to the context `ctx`.
fn check_fingerprint(ctx: &BfvContext, got: u64, object: &'static str) -> PyResult<()> {
    if got != ctx.fingerprint() {
        return Err(bfv_error(BfvError::ContextMismatch {
            object,
            expected: ctx.fingerprint(),
            got,
        }));
    }
    Ok(())
}

/// ValueError unless `other` has the fingerprint of `ctx`.
fn check_same_context(ctx: &BfvContext, other: &BfvContext, object: &'static str) -> PyResult<()> {
    check_fingerprint(ctx, other.fingerprint(), object)
}

// ------------------------------------------------------------------------------------------------------
// Keys
// ------------------------------------------------------------------------------------------------------

/// All keys of one secret: ``secret`` (SecretKey), ``public`` (PublicKey), ``relin`` (RelinKey) and
/// ``galois`` (GaloisKeys, possibly empty). Made by ``Context.keygen``; give ``keys`` to
/// ``Context.evaluator``, ``Context.encryptor`` and ``Context.decryptor``. Hand a server only ``relin``
/// and ``galois`` (``to_bytes()`` or pickling). Not picklable (it holds the secret key: see
/// ``SecretKey.to_secret_bytes``).
#[pyclass(name = "KeySet", module = "rnsfhe.bfv", frozen)]
struct PyKeySet {
    ctx: Arc<BfvContext>,
    secret: Arc<SecretKey>,
    public: Arc<PublicKey>,
    relin: Arc<RelinKey>,
    galois: Galois,
}

keyset_methods! {
    impl PyKeySet {
        /// The Galois keys (row rotations and the column swap).
        #[getter]
        fn galois(&self) -> PyGaloisKeys {
            PyGaloisKeys {
                galois: self.galois.clone(),
                ctx: Arc::clone(&self.ctx),
            }
        }

        /// The row rotation steps that have keys.
        #[getter]
        fn rotations(&self) -> Vec<i64> {
            self.galois.rotations.clone()
        }

        /// Whether the column swap key was generated.
        #[getter]
        fn column_swap(&self) -> bool {
            self.galois.column_swap
        }

        fn __repr__(&self) -> String {
            format!(
                "KeySet(N={}, t={}, relin_components={}, rotations={:?}, column_swap={})",
                self.ctx.n(),
                self.ctx.plaintext_modulus(),
                self.relin.components().len(),
                self.galois.rotations,
                py_bool(self.galois.column_swap)
            )
        }
    }
}

key_classes!(
    module = "rnsfhe.bfv",
    context = BfvContext,
    encryptor_keys = "a bfv KeySet, PublicKey or SecretKey",
    decryptor_keys = "a bfv KeySet or SecretKey"
);

wire_key_class! {
    /// The HPS relinearization key (CRT decomposition, optional base-w digits). ``to_bytes()`` /
    /// ``RelinKey.from_bytes(data, context)``; picklable.
    struct PyRelinKey("RelinKey" in "rnsfhe.bfv"): RelinKey, BfvContext;
    /// RelinKey.from_bytes(data, context) -> RelinKey
    ///
    /// Loads a relinearization key written by ``to_bytes`` into ``context``, validating it (header,
    /// fingerprint, the context's number of components, residues below their moduli; seeds
    /// expanded). The GIL is released. Raises rnsfhe.DecodeError (a ValueError) naming the field
    /// and byte offset of bad bytes.
    fn from_bytes;

    /// Number of key components (residues times digits).
    #[getter]
    fn components(&self) -> usize {
        self.key.components().len()
    }

    fn __repr__(&self) -> String {
        format!(
            "RelinKey(components={}, fingerprint={:#018x})",
            self.key.components().len(),
            self.key.fingerprint()
        )
    }
}

/// Galois keys for row rotations of the batching matrix and the column swap. ``to_bytes()`` /
/// ``GaloisKeys.from_bytes(data, context)``; picklable.
#[pyclass(name = "GaloisKeys", module = "rnsfhe.bfv", frozen)]
struct PyGaloisKeys {
    galois: Galois,
    ctx: Arc<BfvContext>,
}

impl WireClass for PyGaloisKeys {
    type Context = BfvContext;
    type Object = GaloisKeys;

    fn context(&self) -> &BfvContext {
        &self.ctx
    }

    fn object(&self) -> &GaloisKeys {
        &self.galois.keys
    }
}

wire_methods! {
    impl PyGaloisKeys {
        /// GaloisKeys.from_bytes(data, context, mac_key=None) -> GaloisKeys
        ///
        /// Loads Galois keys written by ``to_bytes`` into ``context``, validating them (header,
        /// fingerprint, elements odd, below 2N and increasing, residues below their moduli; seeds
        /// expanded). ``rotations`` and ``column_swap`` are recovered from the Galois elements (a row
        /// rotation by k is 3^k mod 2N, the column swap 2N - 1), each step in (-N/4, N/4] (a step k and
        /// k - N/2 are the same row rotation). The GIL is released. Raises rnsfhe.DecodeError (a
        /// ValueError) naming the field and byte offset of bad bytes.
        #[staticmethod]
        #[pyo3(signature = (data, context, mac_key = None))]
        fn from_bytes(
            py: Python<'_>,
            data: &Bound<'_, PyAny>,
            context: &PyContext,
            mac_key: Option<&Bound<'_, PyAny>>,
        ) -> PyResult<Self> {
            let keys: GaloisKeys = load_object(py, data, &*context.ctx, mac_key)?;
            let (rotations, column_swap) =
                rotations_of_elements(context.ctx.galois_group(), &keys.elements());
            Ok(Self {
                galois: Galois {
                    keys: Arc::new(keys),
                    rotations,
                    column_swap,
                },
                ctx: Arc::clone(&context.ctx),
            })
        }

        /// The row rotation steps that have keys (as given to keygen).
        #[getter]
        fn rotations(&self) -> Vec<i64> {
            self.galois.rotations.clone()
        }

        /// Whether the column swap key is present.
        #[getter]
        fn column_swap(&self) -> bool {
            self.galois.column_swap
        }

        /// The Galois elements that have keys (3^k mod 2N for a row rotation by k, 2N - 1 for the column
        /// swap).
        #[getter]
        fn elements(&self) -> Vec<usize> {
            self.galois.keys.elements()
        }

        fn __repr__(&self) -> String {
            format!(
                "GaloisKeys(rotations={:?}, column_swap={})",
                self.galois.rotations,
                py_bool(self.galois.column_swap)
            )
        }
    }
}

// ------------------------------------------------------------------------------------------------------
// Encryption and decryption
// ------------------------------------------------------------------------------------------------------

/// Encrypts integer vectors. Made by ``Context.encryptor(key, evaluator=None)``.
#[pyclass(name = "Encryptor", module = "rnsfhe.bfv", frozen)]
struct PyEncryptor {
    enc: Encryptor,
    eval: Arc<Eval>,
    with_secret: bool,
}

impl PyEncryptor {
    /// An encryptor of `ctx` with `key`; its ciphertexts are attached to `eval`, which must be of `ctx`.
    fn new(ctx: &Arc<BfvContext>, key: EncryptionKey, eval: Arc<Eval>) -> PyResult<Self> {
        let (enc, with_secret) = match key {
            EncryptionKey::Public(pk) => (Encryptor::with_public_key(ctx, &pk), false),
            EncryptionKey::Secret(sk) => (Encryptor::with_secret_key(ctx, &sk), true),
        };
        check_same_context(ctx, eval.ctx(), "the evaluator")?;
        let enc = enc.map_err(bfv_error)?;
        Ok(Self {
            enc,
            eval,
            with_secret,
        })
    }
}

#[pymethods]
impl PyEncryptor {
    /// encrypt(values, encoding=None) -> Ciphertext
    ///
    /// Encrypts a 1-D array of at most N integers (int64, or anything numpy converts to integers) with
    /// -t < v < t (negative values are taken modulo t); missing values are zero. ``encoding``: "batch"
    /// (N slots, operations act slot-wise; needs a prime t = 1 mod 2N), "coeff" (the values are the
    /// coefficients of the plaintext polynomial, so products are negacyclic convolutions; any t) or None
    /// (``Context.encoding``: batch when t allows it). Raises ValueError for too many values or values out
    /// of range, TypeError for non-integers. The GIL is released.
    ///
    /// With a SecretKey, the ciphertext keeps the 32-byte seed of its uniform part: its ``to_bytes()``
    /// (and pickle) is about half the size of ``to_bytes(seeded=False)``, which is what a data owner
    /// sends to a server. The receiver loads it as an ordinary Ciphertext. Results of operations and
    /// public-key ciphertexts have no seed.
    #[pyo3(signature = (values, encoding = None))]
    fn encrypt(
        &self,
        py: Python<'_>,
        values: &Bound<'_, PyAny>,
        encoding: Option<&str>,
    ) -> PyResult<PyCiphertext> {
        let ctx = self.eval.ctx();
        let encoding = Encoding::parse(encoding, ctx)?;
        let values = read_values(values, ctx, "encrypt")?;
        if self.with_secret {
            let seeded = py
                .allow_threads(|| -> Result<SeededCiphertext, BfvError> {
                    let pt = self.eval.enc.encode(&values, encoding)?;
                    let mut rng = Csprng::from_os()?;
                    self.enc.encrypt_seeded(&pt, &mut rng)
                })
                .map_err(bfv_error)?;
            return PyCiphertext::with_seed(seeded, &self.eval, encoding);
        }
        let ct = py
            .allow_threads(|| -> Result<Ciphertext, BfvError> {
                let pt = self.eval.enc.encode(&values, encoding)?;
                let mut rng = Csprng::from_os()?;
                self.enc.encrypt(&pt, &mut rng)
            })
            .map_err(bfv_error)?;
        Ok(PyCiphertext::new(ct, &self.eval, encoding))
    }

    fn __repr__(&self) -> String {
        format!(
            "Encryptor(N={}, t={}, key={})",
            self.eval.ctx().n(),
            self.eval.ctx().plaintext_modulus(),
            if self.with_secret { "secret" } else { "public" }
        )
    }

    /// Raises TypeError: pickle its PublicKey instead and build an encryptor from it.
    fn __reduce__(&self) -> PyResult<PyObject> {
        Err(SCHEME.not_picklable(
            "Encryptor",
            "pickle (or to_bytes()) its PublicKey and build an encryptor with ctx.encryptor(key)",
        ))
    }
}

/// Decrypts ciphertexts to numpy int64 arrays, and measures their noise budget. Made by
/// ``Context.decryptor(key)``.
#[pyclass(name = "Decryptor", module = "rnsfhe.bfv", frozen)]
struct PyDecryptor {
    dec: Decryptor,
    enc: Encoders,
}

impl PyDecryptor {
    fn new(ctx: &Arc<BfvContext>, sk: &SecretKey) -> PyResult<Self> {
        let dec = Decryptor::new(ctx, sk).map_err(bfv_error)?;
        Ok(Self {
            dec,
            enc: Encoders::new(ctx),
        })
    }
}

#[pymethods]
impl PyDecryptor {
    /// decrypt(ct, signed=True, encoding=None) -> numpy.ndarray[int64]
    ///
    /// The N decrypted values (slots or coefficients, by ``ct.encoding`` unless ``encoding`` overrides
    /// it), exact modulo t: the centered representatives in (-t/2, t/2] if ``signed`` (so small negative
    /// results come out negative; for t = 2 the values are 0 and 1), else the representatives in [0, t).
    /// ``rnsfhe.bfv.reduce(x, t, signed)`` maps numpy results to the same form. Correct while the noise
    /// budget is positive. Raises ValueError for a ciphertext of another context. The GIL is released.
    #[pyo3(signature = (ct, signed = true, encoding = None))]
    fn decrypt<'py>(
        &self,
        py: Python<'py>,
        ct: &PyCiphertext,
        signed: bool,
        encoding: Option<&str>,
    ) -> PyResult<Bound<'py, PyArray1<i64>>> {
        let encoding = match encoding {
            None => ct.encoding,
            Some(e) => Encoding::parse(Some(e), self.enc.ctx.as_ref())?,
        };
        let values = py
            .allow_threads(|| {
                let pt = self.dec.decrypt(&ct.ct)?;
                self.enc.decode(&pt, encoding, signed)
            })
            .map_err(bfv_error)?;
        Ok(PyArray1::from_vec(py, values))
    }

    /// noise_budget(ct) -> float
    ///
    /// The invariant noise budget of ``ct`` in bits: how much noise it can still absorb before decryption
    /// fails. Below 1 bit the result may be wrong: once the noise has filled the modulus the measurement
    /// saturates near 0 (a fraction of a bit) and says nothing more. Each ciphertext product uses about
    /// log2(t) + log2(N) bits and more. A **diagnostic** for the data owner: it needs the secret key, and
    /// neither the budget nor the decryption of an exhausted ciphertext should be revealed to an untrusted
    /// party. The GIL is released.
    fn noise_budget(&self, py: Python<'_>, ct: &PyCiphertext) -> PyResult<f64> {
        py.allow_threads(|| self.dec.noise_budget(&ct.ct))
            .map_err(bfv_error)
    }

    fn __repr__(&self) -> &'static str {
        "Decryptor(<secret key>)"
    }

    /// Raises TypeError: it holds the secret key, which is saved only explicitly.
    fn __reduce__(&self) -> PyResult<PyObject> {
        Err(SCHEME.not_picklable(
            "Decryptor",
            "it holds the secret key; save the SecretKey explicitly with to_secret_bytes()",
        ))
    }
}

/// A row rotation by `step` (`Some`) or the column swap (`None`) with the GIL released.
fn rotate(
    py: Python<'_>,
    eval: &Arc<Eval>,
    a: &PyCiphertext,
    step: Option<i64>,
) -> PyResult<PyCiphertext> {
    let operation = if step.is_some() {
        "row rotation"
    } else {
        "column swap"
    };
    if a.encoding != Encoding::Batch {
        return Err(rotation_needs_batch(operation));
    }
    unary(py, eval, a, |e, c| match step {
        Some(k) => e.rotate_rows(c, k),
        None => e.rotate_columns(c),
    })
}

// ------------------------------------------------------------------------------------------------------
// Evaluator
// ------------------------------------------------------------------------------------------------------

/// Homomorphic operations. Made by ``Context.evaluator(keys)`` (or ``relin_key=...``).
///
/// Every method returns a new Ciphertext attached to this evaluator, so that its Python operators
/// (``+ - *``, unary ``-``) use this evaluator's keys. Right operands may be Ciphertexts (of the same
/// context and encoding), 1-D integer arrays (encoded like the ciphertext; shorter arrays are padded with
/// zeros) or integers (the constant polynomial: the integer in every slot with batch encoding, the
/// constant coefficient with coefficient encoding). Every value must satisfy -t < v < t. Products of
/// ciphertexts are relinearized. Batch-encoded slots form a 2 x N/2 matrix: ``rotate_rows`` rotates both
/// rows, ``rotate_columns`` swaps them (Galois keys from ``keygen(rotations=[...], column_swap=True)``).
/// The GIL is released during every operation; evaluators can be shared by threads.
#[pyclass(name = "Evaluator", module = "rnsfhe.bfv", frozen)]
struct PyEvaluator {
    eval: Arc<Eval>,
}

impl PyEvaluator {
    fn check(&self, a: &PyCiphertext) -> PyResult<()> {
        check_same_context(self.eval.ctx(), a.eval.ctx(), "ciphertext")
    }
}

evaluator_methods! {
    operands = "a Ciphertext, an integer array or an integer";
    expected = "a Ciphertext, a 1-D array of integers or an integer";
    impl PyEvaluator {
        /// attach(ct) -> Ciphertext: the same ciphertext, attached to this evaluator (its operators then use
        /// this evaluator's keys).
        fn attach(&self, ct: &PyCiphertext) -> PyResult<PyCiphertext> {
            self.check(ct)?;
            Ok(PyCiphertext {
                seeded: ct.seeded.clone(),
                ..PyCiphertext::new(ct.ct.clone(), &self.eval, ct.encoding)
            })
        }

        /// multiply(a, b, relinearize=True) -> Ciphertext: a * b (b a Ciphertext, an integer array or an
        /// integer). A product of two ciphertexts (HPS Section 4.5) is relinearized unless ``relinearize`` is
        /// False; it then has three parts (``relinearize(ct)`` finishes it; decryption accepts it).
        #[pyo3(signature = (a, b, relinearize = true))]
        fn multiply(
            &self,
            py: Python<'_>,
            a: &PyCiphertext,
            b: &Bound<'_, PyAny>,
            relinearize: bool,
        ) -> PyResult<PyCiphertext> {
            if !relinearize {
                if let Ok(b) = b.downcast::<PyCiphertext>() {
                    let b = b.get();
                    check_encodings(a.encoding, &Operand::Ct(b))?;
                    return unary(py, &self.eval, a, |e, c| e.multiply(c, &b.ct, false));
                }
            }
            self.binary_strict(py, a, b, BinOp::Mul)
        }

        /// square(a) -> Ciphertext: a * a, relinearized.
        fn square(&self, py: Python<'_>, a: &PyCiphertext) -> PyResult<PyCiphertext> {
            unary(py, &self.eval, a, |e, c| e.multiply(c, c, true))
        }

        /// negate(a) -> Ciphertext: -a.
        fn negate(&self, py: Python<'_>, a: &PyCiphertext) -> PyResult<PyCiphertext> {
            unary(py, &self.eval, a, |e, c| e.ev.negate(c).map_err(bfv_error))
        }

        /// relinearize(a) -> Ciphertext: the 2-part form of a 3-part product (CRT relinearization, HPS
        /// Sections 3.3 and 4.5). Raises ValueError for a 2-part ciphertext.
        fn relinearize(&self, py: Python<'_>, a: &PyCiphertext) -> PyResult<PyCiphertext> {
            unary(py, &self.eval, a, |e, c| e.relinearize(c))
        }

        /// rotate_rows(a, step) -> Ciphertext: both rows of the 2 x N/2 slot matrix rotated left by
        /// ``step`` (right for step < 0), like ``numpy.roll(x.reshape(2, -1), -step, axis=1).ravel()``. Needs
        /// a batch-encoded ciphertext and the key of ``step`` (ValueError naming the step otherwise).
        fn rotate_rows(&self, py: Python<'_>, a: &PyCiphertext, step: Int) -> PyResult<PyCiphertext> {
            rotate(py, &self.eval, a, Some(step.get("step")?))
        }

        /// rotate_columns(a) -> Ciphertext: the two rows of the slot matrix swapped, like
        /// ``x.reshape(2, -1)[::-1].ravel()``. Needs a batch-encoded ciphertext and
        /// ``keygen(column_swap=True)``.
        fn rotate_columns(&self, py: Python<'_>, a: &PyCiphertext) -> PyResult<PyCiphertext> {
            rotate(py, &self.eval, a, None)
        }

        /// Whether the evaluator has a relinearization key (needed by ciphertext products).
        #[getter]
        fn has_relin_key(&self) -> bool {
            self.eval.relin.is_some()
        }

        /// The row rotation steps with keys ([] without Galois keys).
        #[getter]
        fn rotations(&self) -> Vec<i64> {
            self.eval
                .galois
                .as_ref()
                .map(|g| g.rotations.clone())
                .unwrap_or_default()
        }

        /// Whether the evaluator can swap the rows (``rotate_columns``).
        #[getter]
        fn column_swap(&self) -> bool {
            self.eval.galois.as_ref().is_some_and(|g| g.column_swap)
        }

        fn __repr__(&self) -> String {
            format!(
                "Evaluator(N={}, t={}, relin_key={}, rotations={:?}, column_swap={})",
                self.eval.ctx().n(),
                self.eval.ctx().plaintext_modulus(),
                py_bool(self.has_relin_key()),
                self.rotations(),
                py_bool(self.column_swap())
            )
        }
    }
}

// ------------------------------------------------------------------------------------------------------
// Ciphertext
// ------------------------------------------------------------------------------------------------------

/// An encrypted vector of N integers modulo t: N slots (``encoding == "batch"``) or the N coefficients
/// of a polynomial (``encoding == "coeff"``).
///
/// Immutable; operations return new ciphertexts. Operators ``+ - *`` take Ciphertexts, 1-D integer
/// arrays and integers on either side, and unary ``-``; all results are exact modulo t while the noise
/// budget lasts (``Decryptor.noise_budget``). An integer k is the constant polynomial k: k in every slot
/// (batch) or added to coefficient 0 only (coeff); ``ct * k`` multiplies every value by k in both
/// encodings. Batch slots form a 2 x N/2 matrix (slots 0 .. N/2-1 and N/2 .. N-1): ``rotate_rows(k)``
/// rotates both rows left by k, ``rotate_columns()`` swaps them. Operators and methods use the evaluator
/// the ciphertext is attached to (``ct.evaluator``: the one that made it, or the one given to the
/// encryptor). Errors raise ValueError with the Rust message; floats
/// raise TypeError. ``to_bytes()`` / ``Ciphertext.from_bytes(data, context, evaluator=None,
/// encoding=None)``; picklable (with its encoding; unpickled ciphertexts are attached to the keyless
/// evaluator of their context: use ``evaluator.attach(ct)`` or evaluator methods).
#[pyclass(name = "Ciphertext", module = "rnsfhe.bfv", frozen)]
struct PyCiphertext {
    ct: Ciphertext,
    eval: Arc<Eval>,
    encoding: Encoding,
    /// The seeded form of a fresh secret-key encryption (half the wire size), if this is one.
    seeded: Option<Arc<SeededCiphertext>>,
}

impl PyCiphertext {
    fn new(ct: Ciphertext, eval: &Arc<Eval>, encoding: Encoding) -> Self {
        Self {
            ct,
            eval: Arc::clone(eval),
            encoding,
            seeded: None,
        }
    }

    /// A fresh secret-key ciphertext that keeps its seeded form for `to_bytes`.
    fn with_seed(seeded: SeededCiphertext, eval: &Arc<Eval>, encoding: Encoding) -> PyResult<Self> {
        Ok(Self {
            ct: seeded.expand().map_err(bfv_error)?,
            eval: Arc::clone(eval),
            encoding,
            seeded: Some(Arc::new(seeded)),
        })
    }
}

ciphertext_wire_class!(BfvContext;
    fn load_options<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyDict>>> {
        let options = PyDict::new(py);
        options.set_item("encoding", self.encoding.name())?;
        Ok(Some(options))
    }
);

ciphertext_methods! {
    wire;
    impl PyCiphertext {
        /// Ciphertext.from_bytes(data, context, evaluator=None, encoding=None, mac_key=None) -> Ciphertext
        ///
        /// Loads a ciphertext written by ``to_bytes`` (seeded or not) into ``context``, validating it
        /// (header, fingerprint, part count, residues below their moduli). The bytes do not hold the
        /// encoding: ``encoding`` is "batch", "coeff" or None (``context.encoding``). It is attached to
        /// ``evaluator`` (of the same parameters) if given, else to the context's keyless evaluator;
        /// evaluator methods (``ev.multiply(a, b)``) work either way. The GIL is released. Raises
        /// rnsfhe.DecodeError (a ValueError) naming the field and byte offset of bad bytes (wrong
        /// parameters: ``header.fingerprint``), ValueError for an evaluator of other parameters or an
        /// unknown encoding.
        #[staticmethod]
        #[pyo3(signature = (data, context, evaluator = None, encoding = None, mac_key = None))]
        fn from_bytes(
            py: Python<'_>,
            data: &Bound<'_, PyAny>,
            context: &PyContext,
            evaluator: Option<&PyEvaluator>,
            encoding: Option<&str>,
            mac_key: Option<&Bound<'_, PyAny>>,
        ) -> PyResult<Self> {
            let eval = match evaluator {
                Some(e) => {
                    check_same_context(&context.ctx, e.eval.ctx(), "the evaluator")?;
                    &e.eval
                }
                None => &context.plain,
            };
            let encoding = Encoding::parse(encoding, &context.ctx)?;
            let ct = load_object(py, data, &*context.ctx, mac_key)?;
            Ok(Self::new(ct, eval, encoding))
        }

        fn __neg__(&self, py: Python<'_>) -> PyResult<PyCiphertext> {
            unary(py, &self.eval, self, |e, c| {
                e.ev.negate(c).map_err(bfv_error)
            })
        }

        /// square() -> Ciphertext: self * self, relinearized.
        fn square(&self, py: Python<'_>) -> PyResult<PyCiphertext> {
            unary(py, &self.eval, self, |e, c| e.multiply(c, c, true))
        }

        /// rotate_rows(step) -> Ciphertext: both rows of the 2 x N/2 slot matrix rotated left by ``step``
        /// (right for step < 0), like ``numpy.roll(x.reshape(2, -1), -step, axis=1).ravel()``. Needs batch
        /// encoding and the key of ``step`` (``keygen(rotations=[...])``; ValueError naming the step
        /// otherwise).
        fn rotate_rows(&self, py: Python<'_>, step: Int) -> PyResult<PyCiphertext> {
            rotate(py, &self.eval, self, Some(step.get("step")?))
        }

        /// rotate_columns() -> Ciphertext: the two rows of the slot matrix swapped, like
        /// ``x.reshape(2, -1)[::-1].ravel()``. Needs batch encoding and ``keygen(column_swap=True)``.
        fn rotate_columns(&self, py: Python<'_>) -> PyResult<PyCiphertext> {
            rotate(py, &self.eval, self, None)
        }

        /// "batch" (N slots) or "coeff" (N polynomial coefficients).
        #[getter]
        fn encoding(&self) -> &'static str {
            self.encoding.name()
        }

        /// Number of polynomials: 2, or 3 for a product that was not relinearized.
        #[getter]
        fn parts(&self) -> usize {
            self.ct.part_count()
        }

        /// Number of values (slots or coefficients), N.
        #[getter]
        fn n(&self) -> usize {
            self.eval.ctx().n()
        }

        /// The plaintext modulus t.
        #[getter]
        fn t(&self) -> u64 {
            self.eval.ctx().plaintext_modulus()
        }

        fn __repr__(&self) -> String {
            format!(
                "Ciphertext(N={}, t={}, encoding={:?}, parts={})",
                self.n(),
                self.t(),
                self.encoding.name(),
                self.ct.part_count()
            )
        }
    }
}

/// presets() -> list[str]: the names accepted by ``Context.from_preset`` (the rows of HPS Table 3).
#[pyfunction]
fn presets() -> Vec<String> {
    preset_names(&BfvPreset::ALL)
}

/// Builds the submodule `bfv` of `_rnsfhe`.
pub(crate) fn register(parent: &Bound<'_, PyModule>) -> PyResult<()> {
    SCHEME.register(parent, |m| {
        add_scheme_classes!(m);
        m.add_function(wrap_pyfunction!(presets, m)?)?;
        m.add("HPS_SIGMA", HPS_SIGMA)?;
        Ok(())
    })
}
