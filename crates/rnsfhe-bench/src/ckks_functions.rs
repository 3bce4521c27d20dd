//! What `ckks-table2`, `ckks-table3` and the peer server `rnsfhe bench ckks-fn-op` share: the functions of
//! RNS-CKKS Table 2 (x^-1, exp, sigmoid) and the statistics of Table 3 (mean, variance) as named operations,
//! their inputs, and how their precision is measured.
//!
//! # Operation names
//!
//! The names are those of the line protocol of `bench/peers/compare_functions.py` (both sides parse them):
//!
//! * `mean`, `variance`: [`Evaluator::mean`], [`Evaluator::variance`] of all the slots (inputs in `[-1, 1]`);
//! * `cheb:F:A:B:D`: the function `F` (`sigmoid`, `exp` or `inverse`) interpolated on `[A, B]` at `D + 1`
//!   Chebyshev nodes and evaluated ([`Evaluator::evaluate_function`]; the interpolation is part of the timed
//!   call, as in OpenFHE's `EvalChebyshevFunction`);
//! * `taylor:F:A:B:D`: the Taylor polynomial of degree `D` at 0 of `exp` or `sigmoid` (RNS-CKKS Table 2;
//!   `D = 7`), on inputs in `[A, B]`;
//! * `alg2:inverse:A:B:D`: the inverse of Cheon-Kim-Kim-Song (Algorithm 2), a polynomial of degree
//!   `D = 2^(r + 1) - 1` in `x` after `r` iterations (Table 2: `D = 15`), on inputs in `[A, B]` within
//!   `(0, 2)`.
//!
//! # Inputs and precision
//!
//! The inputs of an operation on `[A, B]` are `A + (u + 1) (B - A) / 2` for the `2^13` values `u` in
//! `[-1, 1)` of the linear congruential generator of `bench/peers/peerlib.py` (`test_vector(n, 1)`), so that
//! both sides of the peer comparison evaluate the same points. The precision of a result is
//! `-log2 max_j |z_j - w_j|` over the slots (real part against the expected value, imaginary part against 0;
//! absolute error, as the RNS-CKKS paper's bits of precision), against the true function and against the
//! exact polynomial (the same polynomial evaluated in plaintext).

use std::collections::HashMap;
use std::sync::Arc;

use anyhow::{bail, Context};
use rnsfhe_ckks::functions::{
    exp_taylor_polynomial, inverse_polynomial, sigmoid_taylor_polynomial,
};
use rnsfhe_ckks::{
    ChebyshevSeries, Ciphertext, CkksContext, CkksDecryptor, CkksEncryptor, CkksParams, Complex64,
    ConversionMode, Csprng, Evaluator, KeyGenerator, Polynomial, RescalingPolicy,
    SecretDistribution,
};
use serde::Deserialize;
use serde_json::json;

use super::serve_line_protocol;

/// A function of RNS-CKKS Table 2.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Function {
    /// `1 / (1 + e^-x)`.
    Sigmoid,
    /// `e^x`.
    Exp,
    /// `1 / x`.
    Inverse,
}

impl Function {
    /// The name in operation names and tables.
    pub fn name(self) -> &'static str {
        match self {
            Function::Sigmoid => "sigmoid",
            Function::Exp => "exp",
            Function::Inverse => "inverse",
        }
    }

    /// The function of a name ([`Function::name`]).
    pub fn parse(name: &str) -> anyhow::Result<Self> {
        match name {
            "sigmoid" => Ok(Function::Sigmoid),
            "exp" => Ok(Function::Exp),
            "inverse" => Ok(Function::Inverse),
            other => bail!("unknown function {other:?}: expected sigmoid, exp or inverse"),
        }
    }

    /// The true value at `x`.
    pub fn eval(self, x: f64) -> f64 {
        match self {
            Function::Sigmoid => 1.0 / (1.0 + (-x).exp()),
            Function::Exp => x.exp(),
            Function::Inverse => 1.0 / x,
        }
    }
}

/// How a function is turned into a polynomial.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Method {
    /// Chebyshev interpolation on the input interval (`cheb`).
    Chebyshev,
    /// Taylor expansion at 0 (`taylor`; exp and sigmoid, RNS-CKKS Table 2).
    Taylor,
    /// Cheon-Kim-Kim-Song Algorithm 2 (`alg2`; the inverse, RNS-CKKS Table 2).
    Iterative,
}

impl Method {
    /// The label in tables.
    pub fn label(self) -> &'static str {
        match self {
            Method::Chebyshev => "Chebyshev",
            Method::Taylor => "Taylor",
            Method::Iterative => "CKKS Alg. 2",
        }
    }
}

/// One named operation (see the [module documentation](self) for the names).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum FnOp {
    /// The mean of the slots.
    Mean,
    /// The variance of the slots.
    Variance,
    /// A polynomial approximation of a function on inputs in `[a, b]`.
    Poly {
        /// How the polynomial is obtained.
        method: Method,
        /// The function approximated.
        function: Function,
        /// Left end of the input interval.
        a: f64,
        /// Right end of the input interval.
        b: f64,
        /// The degree of the polynomial.
        degree: usize,
    },
}

impl FnOp {
    /// Parses an operation name; the error says what is wrong and what is expected.
    pub fn parse(name: &str) -> anyhow::Result<Self> {
        match name {
            "mean" => return Ok(FnOp::Mean),
            "variance" => return Ok(FnOp::Variance),
            _ => {}
        }
        let parts: Vec<&str> = name.split(':').collect();
        let [method, function, a, b, degree] = parts[..] else {
            bail!(
                "unknown operation {name:?}: expected mean, variance or METHOD:FUNCTION:A:B:DEGREE \
                 (e.g. cheb:sigmoid:-4:4:15, taylor:exp:-1:1:7, alg2:inverse:0.5:1.5:15)"
            );
        };
        let method = match method {
            "cheb" => Method::Chebyshev,
            "taylor" => Method::Taylor,
            "alg2" => Method::Iterative,
            other => bail!("{name:?}: unknown method {other:?}: expected cheb, taylor or alg2"),
        };
        let function = Function::parse(function).with_context(|| format!("operation {name:?}"))?;
        let number = |s: &str, what: &str| -> anyhow::Result<f64> {
            s.parse::<f64>()
                .ok()
                .filter(|v| v.is_finite())
                .with_context(|| format!("{name:?}: {what} {s:?} is not a finite number"))
        };
        let (a, b) = (number(a, "A")?, number(b, "B")?);
        if a >= b {
            bail!("{name:?}: the interval [{a}, {b}] is empty: A must be below B");
        }
        let degree: usize =
            degree.parse().ok().filter(|&d| d >= 1).with_context(|| {
                format!("{name:?}: degree {degree:?} is not a positive integer")
            })?;
        match (method, function) {
            (Method::Taylor, Function::Inverse) => {
                bail!("{name:?}: taylor applies to exp and sigmoid (the inverse uses alg2 or cheb)")
            }
            (Method::Iterative, f) if f != Function::Inverse => {
                bail!("{name:?}: alg2 computes the inverse only")
            }
            (Method::Iterative, _) => {
                if !(degree + 1).is_power_of_two() || degree < 3 {
                    bail!(
                        "{name:?}: alg2 has degree 2^(r + 1) - 1 (3, 7, 15, 31, ...), not {degree}"
                    );
                }
                if a <= 0.0 || b >= 2.0 {
                    bail!("{name:?}: alg2 converges for inputs in (0, 2), not [{a}, {b}]");
                }
            }
            _ => {}
        }
        Ok(FnOp::Poly {
            method,
            function,
            a,
            b,
            degree,
        })
    }

    /// The interval the inputs are drawn from (`[-1, 1]` for the statistics).
    pub fn interval(&self) -> (f64, f64) {
        match *self {
            FnOp::Mean | FnOp::Variance => (-1.0, 1.0),
            FnOp::Poly { a, b, .. } => (a, b),
        }
    }

    /// Whether the operation needs the rotation keys of the partial sums.
    pub fn needs_rotations(&self) -> bool {
        matches!(self, FnOp::Mean | FnOp::Variance)
    }

    /// The plaintext polynomial the operation evaluates (`None` for the statistics).
    pub fn polynomial(&self) -> anyhow::Result<Option<Polynomial>> {
        let FnOp::Poly {
            method,
            function,
            a,
            b,
            degree,
        } = *self
        else {
            return Ok(None);
        };
        let poly = match method {
            Method::Chebyshev => Polynomial::from(ChebyshevSeries::interpolate(
                |x| function.eval(x),
                a,
                b,
                degree,
            )?),
            Method::Taylor if function == Function::Exp => exp_taylor_polynomial(degree)?,
            Method::Taylor => sigmoid_taylor_polynomial(degree)?,
            Method::Iterative => inverse_polynomial(iterations(degree))?,
        };
        Ok(Some(poly))
    }

    /// The levels the operation consumes in our implementation.
    pub fn depth(&self) -> anyhow::Result<usize> {
        Ok(match self {
            FnOp::Mean => 1,
            FnOp::Variance => 2,
            // Algorithm 2: r squarings of b and r products a (1 + b), r + 1 levels.
            FnOp::Poly {
                method: Method::Iterative,
                degree,
                ..
            } => iterations(*degree) + 1,
            FnOp::Poly { .. } => self
                .polynomial()?
                .map(|p| p.depth())
                .context("a polynomial operation has a polynomial")?,
        })
    }

    /// Runs the operation on `ct` (inputs in [`FnOp::interval`]).
    pub fn run(&self, evaluator: &Evaluator, ct: &Ciphertext) -> anyhow::Result<Ciphertext> {
        Ok(match *self {
            FnOp::Mean => evaluator.mean(ct)?,
            FnOp::Variance => evaluator.variance(ct)?,
            FnOp::Poly {
                method: Method::Chebyshev,
                function,
                a,
                b,
                degree,
            } => evaluator.evaluate_function(ct, |x| function.eval(x), a, b, degree)?,
            FnOp::Poly {
                method: Method::Iterative,
                degree,
                ..
            } => evaluator.inverse(ct, iterations(degree))?,
            FnOp::Poly {
                method: Method::Taylor,
                function,
                degree: 7,
                ..
            } => match function {
                Function::Exp => evaluator.exp_taylor(ct)?,
                _ => evaluator.sigmoid_taylor(ct)?,
            },
            FnOp::Poly { .. } => {
                let poly = self.polynomial()?.context("a polynomial")?;
                evaluator.evaluate_polynomial(ct, &poly)?
            }
        })
    }

    /// The exact polynomial at `x` (`poly` is [`FnOp::polynomial`]): for Algorithm 2 its product form
    /// `prod_{i <= r} (1 + (1 - x)^(2^i))`, which is stable in floating point (the power basis cancels
    /// binomial coefficients), otherwise `poly.evaluate(x)`.
    pub fn exact(&self, poly: &Polynomial, x: f64) -> f64 {
        match *self {
            FnOp::Poly {
                method: Method::Iterative,
                degree,
                ..
            } => {
                let mut t = 1.0 - x;
                let mut product = 1.0 + t;
                for _ in 0..iterations(degree) {
                    t *= t;
                    product *= 1.0 + t;
                }
                product
            }
            _ => poly.evaluate(x),
        }
    }

    /// The value slot `j` should hold, from all the inputs: the function for the polynomial operations, the
    /// mean or variance of all the inputs for the statistics.
    pub fn expected(&self, inputs: &[f64]) -> Vec<f64> {
        match *self {
            FnOp::Mean => vec![mean(inputs); inputs.len()],
            FnOp::Variance => vec![variance(inputs); inputs.len()],
            FnOp::Poly { function, .. } => inputs.iter().map(|&x| function.eval(x)).collect(),
        }
    }
}

/// The iterations `r` of Algorithm 2 for its degree `2^(r + 1) - 1`.
fn iterations(degree: usize) -> usize {
    (degree + 1).trailing_zeros() as usize - 1
}

/// The mean of `values`.
pub fn mean(values: &[f64]) -> f64 {
    values.iter().sum::<f64>() / values.len() as f64
}

/// The (population) variance of `values`.
pub fn variance(values: &[f64]) -> f64 {
    let m = mean(values);
    values.iter().map(|v| (v - m) * (v - m)).sum::<f64>() / values.len() as f64
}

/// `n` reproducible reals in `[-1, 1)`: the generator of `bench/peers/peerlib.py`, `test_vector(n, seed)`.
pub fn peer_test_vector(n: usize, seed: u64) -> Vec<f64> {
    let mut x = seed.wrapping_mul(2_654_435_761) % (1 << 32);
    (0..n)
        .map(|_| {
            x = (1_103_515_245 * x + 12_345) % (1 << 31);
            x as f64 / (1u64 << 30) as f64 - 1.0
        })
        .collect()
}

/// The inputs of an operation on `[a, b]`: [`peer_test_vector`] (seed 1) mapped onto the interval.
pub fn inputs_on(a: f64, b: f64, n: usize) -> Vec<f64> {
    peer_test_vector(n, 1)
        .into_iter()
        .map(|u| a + (u + 1.0) * 0.5 * (b - a))
        .collect()
}

/// The largest error over the slots: `|Re z_j - w_j|` and `|Im z_j|`.
pub fn max_error(got: &[Complex64], want: &[f64]) -> f64 {
    got.iter()
        .zip(want)
        .map(|(z, w)| (z.re - w).abs().max(z.im.abs()))
        .fold(0.0, f64::max)
}

/// Bits of precision of an error: `-log2 err`.
pub fn bits(err: f64) -> f64 {
    -err.log2()
}

/// The 1 / 5 / 15 minute load averages of `/proc/loadavg` (other work on the machine), if readable.
pub fn load_average() -> Option<String> {
    let text = std::fs::read_to_string("/proc/loadavg").ok()?;
    let fields: Vec<&str> = text.split_whitespace().take(3).collect();
    (fields.len() == 3).then(|| fields.join(" "))
}

/// The markdown line stating the load averages at the start and at the end of the timed part.
pub fn load_average_line(start: &Option<String>, end: &Option<String>) -> String {
    let show = |l: &Option<String>| l.clone().unwrap_or_else(|| "unknown".into());
    format!(
        "- load average (1 / 5 / 15 min; other work on the machine): {} at the start, {} at the end",
        show(start),
        show(end)
    )
}

/// The precision of one operation's result (see the [module documentation](self)).
#[derive(Debug, Clone, Copy, serde::Serialize)]
pub struct Accuracy {
    /// Bits against the true function (for the statistics: against the plaintext mean or variance).
    pub bits_true: f64,
    /// Bits against the exact polynomial evaluated in plaintext (`None` for the statistics).
    pub bits_poly: Option<f64>,
    /// Bits of the polynomial itself against the function, at the inputs (`None` for the statistics).
    pub approx_bits: Option<f64>,
    /// Levels the operation consumed.
    pub levels_used: usize,
}

/// Decrypts `out` (the result of `op` on `ct`, whose slots hold `inputs`) and measures its precision.
pub fn accuracy(
    op: &FnOp,
    inputs: &[f64],
    ct: &Ciphertext,
    out: &Ciphertext,
    decryptor: &CkksDecryptor,
) -> anyhow::Result<Accuracy> {
    let got = decryptor.decrypt(out)?;
    let got = &got[..inputs.len().min(got.len())];
    let truth = op.expected(inputs);
    let poly = op.polynomial()?;
    let (bits_poly, approx_bits) = match &poly {
        Some(p) => {
            let exact: Vec<f64> = inputs.iter().map(|&x| op.exact(p, x)).collect();
            let approx = exact
                .iter()
                .zip(&truth)
                .map(|(p, f)| (p - f).abs())
                .fold(0.0, f64::max);
            (Some(bits(max_error(got, &exact))), Some(bits(approx)))
        }
        None => (None, None),
    };
    Ok(Accuracy {
        bits_true: bits(max_error(got, &truth)),
        bits_poly,
        approx_bits,
        levels_used: ct.level() - out.level(),
    })
}

/// The CKKS parameters of the peer comparison, as in `bench/peers/compare_functions.py` (the format of
/// `bench/peers/presets.json`).
#[derive(Debug, Clone, Deserialize)]
pub struct PeerParams {
    /// `log2 N`.
    pub log_n: u32,
    /// Bits of the ciphertext primes `q_0, q_1, ...` (all but `q_0` equal to `scale_bits`).
    pub q_bits: Vec<u32>,
    /// Bits of the special primes (all equal).
    pub p_bits: Vec<u32>,
    /// `log2` of the scale.
    pub scale_bits: u32,
    /// Digits of key switching.
    pub dnum: usize,
    /// `ternary` (uniform ternary, OpenFHE's default; the default) or `sparse` (`h = 64`, the paper's).
    #[serde(default)]
    pub secret: Option<String>,
    /// `exact` (exact per-level scales; the default) or `nominal` (the paper's fixed nominal scale).
    #[serde(default)]
    pub rescaling: Option<String>,
}

impl PeerParams {
    /// Our parameters for these numbers; the error says which number we cannot represent.
    pub fn to_ckks(&self) -> anyhow::Result<CkksParams> {
        let (&q0, rest) = self
            .q_bits
            .split_first()
            .context("q_bits is empty: give q_0 and the scaling primes")?;
        if rest.iter().any(|&b| b != self.scale_bits) {
            bail!(
                "every q_i after q_0 must have scale_bits = {} bits here, got {:?}",
                self.scale_bits,
                self.q_bits
            );
        }
        let special_bits = *self.p_bits.first().context("p_bits is empty")?;
        if self.p_bits.iter().any(|&b| b != special_bits) {
            bail!(
                "the special primes must all have one size, got {:?}",
                self.p_bits
            );
        }
        let secret = match self.secret.as_deref().unwrap_or("ternary") {
            "ternary" => SecretDistribution::Ternary,
            "sparse" => SecretDistribution::HammingWeight(64),
            other => bail!("secret {other:?}: expected ternary or sparse"),
        };
        let rescaling = match self.rescaling.as_deref().unwrap_or("exact") {
            "exact" => RescalingPolicy::ExactScale,
            "nominal" => RescalingPolicy::FixedNominalScale,
            other => bail!("rescaling {other:?}: expected exact or nominal"),
        };
        Ok(CkksParams {
            log_n: self.log_n,
            log_scale: self.scale_bits,
            q0_bits: q0,
            levels: rest.len(),
            bootstrap_primes: Vec::new(),
            special_primes: self.p_bits.len(),
            special_bits,
            dnum: self.dnum,
            secret,
            sigma: 3.2,
            conversion: ConversionMode::Fast,
            rescaling,
            insecure_for_testing: true,
        })
    }
}

/// Parses the comma-separated operation names of `--ops`.
pub fn parse_ops(list: &str) -> anyhow::Result<Vec<(String, FnOp)>> {
    let ops: Vec<(String, FnOp)> = list
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|s| Ok((s.to_string(), FnOp::parse(s)?)))
        .collect::<anyhow::Result<_>>()?;
    if ops.is_empty() {
        bail!("--ops is empty: give at least one operation (e.g. mean,cheb:sigmoid:-4:4:15)");
    }
    Ok(ops)
}

/// `rnsfhe bench ckks-fn-op --plan --ops ...`: prints `{"depths": {op: levels}}` (the levels each operation
/// consumes in our implementation) as one JSON line, without building a context.
pub fn plan(ops: &str) -> anyhow::Result<()> {
    let mut depths = serde_json::Map::new();
    for (name, op) in parse_ops(ops)? {
        depths.insert(name, json!(op.depth()?));
    }
    println!("{}", json!({ "depths": depths }));
    Ok(())
}

/// `rnsfhe bench ckks-fn-op --params JSON --ops ...`: the line protocol of `bench/peers/README.md` for the
/// operations of `--ops`, on one fresh ciphertext per input interval (public-key encryption at setup). The
/// ready line has, under `check`, each operation's [`Accuracy`] (one untimed run at setup).
///
/// The whole loop runs inside a rayon pool of [`rayon::current_num_threads`] threads (`RAYON_NUM_THREADS`;
/// the driver sets 1), so that with one thread every operation runs on the thread that times it.
pub fn serve(params: &str, ops: &str) -> anyhow::Result<()> {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(rayon::current_num_threads())
        .build()
        .context("cannot build the thread pool")?;
    pool.install(|| serve_in_pool(params, ops))
}

fn serve_in_pool(params: &str, ops: &str) -> anyhow::Result<()> {
    let peer: PeerParams =
        serde_json::from_str(params).context("--params is not a parameter object")?;
    let ops = parse_ops(ops)?;
    let ctx = CkksContext::new(peer.to_ckks()?)?;
    let mut rng = Csprng::from_os()?;
    let kg = KeyGenerator::new(&ctx, &mut rng)?;
    let slots = ctx.max_slots();
    let mut evaluator = Evaluator::new(&ctx).with_relin_key(kg.relin_key(&mut rng)?)?;
    if ops.iter().any(|(_, op)| op.needs_rotations()) {
        let steps = KeyGenerator::power_of_two_steps(slots);
        evaluator = evaluator.with_galois_keys(kg.galois_keys(&steps, false, &mut rng)?)?;
    }
    let encryptor = CkksEncryptor::with_public_key(&ctx, &kg.public_key(&mut rng)?)?;
    let decryptor = CkksDecryptor::new(&ctx, kg.secret_key())?;

    // One ciphertext per interval; each operation refers to its own.
    let mut inputs: Vec<(f64, f64, Vec<f64>, Arc<Ciphertext>)> = Vec::new();
    let mut prepared: HashMap<String, (FnOp, Arc<Ciphertext>)> = HashMap::new();
    let mut check = serde_json::Map::new();
    for (name, op) in &ops {
        let (a, b) = op.interval();
        let i = match inputs.iter().position(|(x, y, _, _)| (*x, *y) == (a, b)) {
            Some(i) => i,
            None => {
                let values = inputs_on(a, b, slots);
                let ct = encryptor.encrypt(&values[..], &mut rng)?;
                inputs.push((a, b, values, Arc::new(ct)));
                inputs.len() - 1
            }
        };
        let (_, _, values, ct) = &inputs[i];
        let entry = match op
            .run(&evaluator, ct)
            .and_then(|out| accuracy(op, values, ct, &out, &decryptor))
        {
            Ok(acc) => serde_json::to_value(acc)?,
            Err(e) => json!({ "error": format!("{e:#}") }),
        };
        check.insert(name.clone(), entry);
        prepared.insert(name.clone(), (*op, Arc::clone(ct)));
    }

    let bits = |moduli: &[u64]| {
        moduli
            .iter()
            .map(|&q| (q as f64).log2().round() as u32)
            .collect::<Vec<_>>()
    };
    let p = ctx.params();
    let ready = json!({
        "ready": true,
        "impl": "rnsfhe",
        "version": super::version_string(),
        "threads": rayon::current_num_threads(),
        "ops": ops.iter().map(|(n, _)| n.clone()).collect::<Vec<_>>(),
        "params": {
            "log_n": p.log_n,
            "n": ctx.n(),
            "slots": slots,
            "q_bits": bits(ctx.q_moduli()),
            "p_bits": bits(ctx.p_moduli()),
            "dnum": p.dnum,
            "scale_bits": p.log_scale,
            "log_q": (ctx.log_q() * 100.0).round() / 100.0,
            "log_qp": (ctx.log_qp() * 100.0).round() / 100.0,
            "key_switching": format!("hybrid, dnum = {}, {:?} basis conversion", p.dnum, p.conversion),
            "scaling": format!("{:?}", p.rescaling),
            "secret": format!("{:?}", p.secret),
            "security": ctx.security_warning().unwrap_or_else(|| format!("{}", ctx.security())),
        },
        "check": check,
    });
    serve_line_protocol(&ready, |name| {
        let (op, ct) = prepared
            .get(name)
            .with_context(|| format!("unknown operation {name:?} (not in --ops)"))?;
        std::hint::black_box(op.run(&evaluator, ct)?);
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn operation_names_parse_and_explain_errors() {
        assert_eq!(FnOp::parse("mean").unwrap(), FnOp::Mean);
        assert_eq!(
            FnOp::parse("cheb:sigmoid:-4:4:15").unwrap(),
            FnOp::Poly {
                method: Method::Chebyshev,
                function: Function::Sigmoid,
                a: -4.0,
                b: 4.0,
                degree: 15
            }
        );
        assert!(FnOp::parse("alg2:inverse:0.5:1.5:15").is_ok());
        for (bad, says) in [
            ("median", "unknown operation"),
            ("cheb:tan:-1:1:7", "unknown function"),
            ("cheb:exp:1:-1:7", "empty"),
            ("cheb:exp:-1:1:0", "positive integer"),
            ("cheb:exp:-1:x:7", "finite number"),
            ("taylor:inverse:0.5:1.5:7", "taylor applies"),
            ("alg2:inverse:0.5:1.5:14", "2^(r + 1) - 1"),
            ("alg2:inverse:0.5:2.5:15", "(0, 2)"),
            ("alg2:exp:0.5:1.5:15", "inverse only"),
        ] {
            let e = format!("{:#}", FnOp::parse(bad).unwrap_err());
            assert!(e.contains(says), "{bad}: {e}");
        }
        assert!(parse_ops(" , ").is_err());
    }

    #[test]
    fn inputs_match_the_python_generator() {
        // peerlib.test_vector(3, 1) in Python.
        let v = peer_test_vector(3, 1);
        let mut x: u64 = 2_654_435_761;
        for got in v {
            x = (1_103_515_245 * x + 12_345) % (1 << 31);
            assert_eq!(got, x as f64 / 1_073_741_824.0 - 1.0);
        }
        let on = inputs_on(0.5, 1.5, 1000);
        assert!(on.iter().all(|&x| (0.5..1.5).contains(&x)));
    }

    #[test]
    fn depths_and_exact_polynomials() {
        let alg2 = FnOp::parse("alg2:inverse:0.5:1.5:15").unwrap();
        assert_eq!(alg2.depth().unwrap(), 4);
        let poly = alg2.polynomial().unwrap().unwrap();
        assert_eq!(poly.degree(), 15);
        for x in [0.5, 0.9, 1.0, 1.3, 1.5f64] {
            let t = 1.0 - x;
            let want = (1.0 - t.powi(16)) / x;
            assert!((alg2.exact(&poly, x) - want).abs() < 1e-14);
            assert!((poly.evaluate(x) - want).abs() < 1e-9);
        }
        let taylor = FnOp::parse("taylor:sigmoid:-1:1:7").unwrap();
        assert_eq!(taylor.depth().unwrap(), 3);
        let cheb = FnOp::parse("cheb:exp:-4:4:15").unwrap();
        assert_eq!(
            cheb.depth().unwrap(),
            5,
            "[-4, 4] costs a level for the change of variable"
        );
        assert_eq!(FnOp::parse("cheb:exp:-1:1:15").unwrap().depth().unwrap(), 4);
        assert_eq!(
            (FnOp::Mean.depth().unwrap(), FnOp::Variance.depth().unwrap()),
            (1, 2)
        );
    }

    #[test]
    fn statistics_of_known_values() {
        assert_eq!(mean(&[1.0, 2.0, 3.0]), 2.0);
        assert!((variance(&[1.0, 2.0, 3.0]) - 2.0 / 3.0).abs() < 1e-15);
        let got = [Complex64::new(1.0, 1e-9), Complex64::new(2.5, 0.0)];
        assert_eq!(max_error(&got, &[1.0, 2.0]), 0.5);
        assert_eq!(bits(0.25), 2.0);
    }

    #[test]
    fn peer_parameters_map_onto_ours() {
        let p: PeerParams = serde_json::from_str(
            r#"{"log_n": 14, "q_bits": [60, 55, 55], "p_bits": [60, 60], "scale_bits": 55, "dnum": 3}"#,
        )
        .unwrap();
        let c = p.to_ckks().unwrap();
        assert_eq!((c.log_n, c.q0_bits, c.levels, c.log_scale), (14, 60, 2, 55));
        assert_eq!((c.special_primes, c.special_bits, c.dnum), (2, 60, 3));
        assert_eq!(c.secret, SecretDistribution::Ternary);
        let bad: PeerParams = serde_json::from_str(
            r#"{"log_n": 14, "q_bits": [60, 50, 55], "p_bits": [60], "scale_bits": 55, "dnum": 3}"#,
        )
        .unwrap();
        assert!(format!("{:#}", bad.to_ckks().unwrap_err()).contains("scale_bits"));
    }
}
