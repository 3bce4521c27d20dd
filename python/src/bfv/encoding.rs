//! The encodings of BFV values ("batch": slots by CRT, "coeff": coefficients) and the encoders of a
//! context.

use super::*;

/// How the values of a ciphertext are laid out in its plaintext polynomial.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Encoding {
    /// `N` SIMD slots of `Z_t` (prime `t = 1 mod 2N`): operations act slot-wise.
    Batch,
    /// Values are the coefficients of the plaintext polynomial (any `t`): products are negacyclic
    /// convolutions.
    Coeff,
}

impl Encoding {
    pub(super) fn name(self) -> &'static str {
        match self {
            Encoding::Batch => "batch",
            Encoding::Coeff => "coeff",
        }
    }

    /// `None` (the context's default), "batch" or "coeff".
    pub(super) fn parse(s: Option<&str>, ctx: &BfvContext) -> PyResult<Self> {
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
pub(super) fn default_encoding(ctx: &BfvContext) -> Encoding {
    if ctx.supports_batching() {
        Encoding::Batch
    } else {
        Encoding::Coeff
    }
}

/// The encoders of a context (batching only when `t` allows it).
pub(super) struct Encoders {
    pub(super) ctx: Arc<BfvContext>,
    pub(super) batch: Option<BatchEncoder>,
    pub(super) coeff: CoeffEncoder,
}

impl Encoders {
    pub(super) fn new(ctx: &Arc<BfvContext>) -> Self {
        Self {
            ctx: Arc::clone(ctx),
            batch: BatchEncoder::new(ctx).ok(),
            coeff: CoeffEncoder::new(ctx),
        }
    }

    pub(super) fn batch(&self) -> Result<&BatchEncoder, BfvError> {
        self.batch.as_ref().ok_or(BfvError::BatchingUnavailable {
            t: self.ctx.plaintext_modulus(),
            n: self.ctx.n(),
            two_n: 2 * self.ctx.n(),
        })
    }

    pub(super) fn encode(&self, values: &[i64], encoding: Encoding) -> Result<Plaintext, BfvError> {
        match encoding {
            Encoding::Batch => self.batch()?.encode_i64(values),
            Encoding::Coeff => self.coeff.encode_i64(values),
        }
    }

    /// The constant polynomial `c`: `c` in every slot (batch), or `c` as coefficient 0 (coeff).
    pub(super) fn constant(&self, c: i64) -> Result<Plaintext, BfvError> {
        self.coeff.encode_i64(&[c])
    }

    /// The `N` values of `pt`: centered in `(-t/2, t/2]` if `signed`, else in `[0, t)`.
    pub(super) fn decode(
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
pub(super) fn to_i64(v: Vec<u64>) -> Vec<i64> {
    v.into_iter().map(|x| x as i64).collect()
}
