//! Plaintexts of `R_t = Z_t[X]/(X^N + 1)` and the two encoders:
//!
//! * [`CoeffEncoder`]: integers mod `t` as the coefficients of the plaintext polynomial (any `t >= 2`,
//!   including `t = 2`). Homomorphic multiplication multiplies the polynomials (negacyclic convolution).
//! * [`BatchEncoder`]: `N` SIMD slots of `Z_t` (for a prime `t = 1 mod 2N`): the plaintext polynomial is
//!   the inverse negacyclic NTT mod `t` of the slot values, so ring operations act slot-wise (the CRT
//!   `R_t = Z_t^N`). Slots form a `2 x N/2` matrix (row 0: slots `0..N/2`, row 1: slots `N/2..N`; slot
//!   `j` of row 0 is the evaluation at `psi^(3^j)`, slot `j` of row 1 at `psi^(-3^j)`, SEAL's layout): the
//!   Galois element `3^r mod 2N` rotates both rows cyclically left by `r` and `2N - 1` swaps the rows
//!   (see [`crate::galois`], [`crate::Evaluator::rotate_rows`], [`crate::Evaluator::rotate_columns`]).
//!
//! Values are given as `u64` (reduced modulo `t`) or `i64` (taken modulo `t`); signed decoding returns
//! the centered representatives in `(-t/2, t/2]`.

use std::sync::Arc;

use crate::error::{BfvError, BfvResult};
use crate::params::BfvContext;

/// A plaintext: a polynomial of `R_t` given by its `N` coefficients in `[0, t)` (HPS Section 4.1, the
/// message `m in R_t`), tied to a context by its fingerprint.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Plaintext {
    pub(crate) fingerprint: u64,
    pub(crate) coeffs: Vec<u64>,
}

impl Plaintext {
    /// The plaintext with coefficients `coeffs` (each reduced modulo `t`; missing ones are 0).
    ///
    /// Errors: [`BfvError::TooManyValues`] for more than `N` coefficients.
    pub fn from_coefficients(ctx: &BfvContext, coeffs: &[u64]) -> BfvResult<Self> {
        check_len(ctx, coeffs.len(), "plaintext coefficients")?;
        let t = ctx.t();
        let mut c = vec![0u64; ctx.n()];
        for (d, &x) in c.iter_mut().zip(coeffs) {
            *d = t.reduce(x);
        }
        Ok(Self {
            fingerprint: ctx.fingerprint(),
            coeffs: c,
        })
    }

    /// The coefficients in `[0, t)`.
    pub fn coefficients(&self) -> &[u64] {
        &self.coeffs
    }

    /// The fingerprint of the context the plaintext belongs to.
    pub fn fingerprint(&self) -> u64 {
        self.fingerprint
    }
}

fn check_len(ctx: &BfvContext, got: usize, what: &'static str) -> BfvResult<()> {
    if got > ctx.n() {
        return Err(BfvError::TooManyValues {
            what,
            got,
            max: ctx.n(),
        });
    }
    Ok(())
}

/// Coefficient encoding: value `i` is coefficient `i` of the plaintext polynomial (any `t`).
#[derive(Clone, Debug)]
pub struct CoeffEncoder {
    ctx: Arc<BfvContext>,
}

impl CoeffEncoder {
    /// An encoder for `ctx`.
    pub fn new(ctx: &Arc<BfvContext>) -> Self {
        Self {
            ctx: Arc::clone(ctx),
        }
    }

    /// Encodes up to `N` values (reduced modulo `t`) as coefficients; the rest are 0.
    ///
    /// Errors: [`BfvError::TooManyValues`] for more than `N` values.
    pub fn encode_u64(&self, values: &[u64]) -> BfvResult<Plaintext> {
        Plaintext::from_coefficients(&self.ctx, values)
    }

    /// Encodes up to `N` signed values (taken modulo `t`) as coefficients; the rest are 0.
    ///
    /// Errors: [`BfvError::TooManyValues`] for more than `N` values.
    pub fn encode_i64(&self, values: &[i64]) -> BfvResult<Plaintext> {
        check_len(&self.ctx, values.len(), "coefficient encoding")?;
        let t = self.ctx.t();
        let reduced: Vec<u64> = values.iter().map(|&v| t.reduce_i64(v)).collect();
        Plaintext::from_coefficients(&self.ctx, &reduced)
    }

    /// The `N` coefficients in `[0, t)`.
    ///
    /// Errors: [`BfvError::ContextMismatch`] for a plaintext of another context.
    pub fn decode_u64(&self, pt: &Plaintext) -> BfvResult<Vec<u64>> {
        self.ctx.check_fingerprint(pt.fingerprint, "plaintext")?;
        Ok(pt.coeffs.clone())
    }

    /// The `N` coefficients as centered representatives in `(-t/2, t/2]`.
    ///
    /// Errors: [`BfvError::ContextMismatch`] for a plaintext of another context.
    pub fn decode_i64(&self, pt: &Plaintext) -> BfvResult<Vec<i64>> {
        self.ctx.check_fingerprint(pt.fingerprint, "plaintext")?;
        let t = self.ctx.t();
        Ok(pt.coeffs.iter().map(|&c| t.center(c)).collect())
    }
}

/// Batch (SIMD) encoding of `N` slots of `Z_t` through the negacyclic NTT modulo a prime `t = 1 mod 2N`.
#[derive(Clone, Debug)]
pub struct BatchEncoder {
    ctx: Arc<BfvContext>,
}

impl BatchEncoder {
    /// A batch encoder for `ctx`.
    ///
    /// Errors: [`BfvError::BatchingUnavailable`] unless `t` is a prime `= 1 mod 2N`.
    pub fn new(ctx: &Arc<BfvContext>) -> BfvResult<Self> {
        if !ctx.supports_batching() {
            return Err(BfvError::BatchingUnavailable {
                t: ctx.plaintext_modulus(),
                n: ctx.n(),
                two_n: 2 * ctx.n(),
            });
        }
        Ok(Self {
            ctx: Arc::clone(ctx),
        })
    }

    /// Number of slots, `N` (two rows of `N/2`).
    pub fn slot_count(&self) -> usize {
        self.ctx.n()
    }

    /// Encodes up to `N` slot values (reduced modulo `t`; missing slots are 0).
    ///
    /// Errors: [`BfvError::TooManyValues`] for more than `N` values.
    pub fn encode_u64(&self, values: &[u64]) -> BfvResult<Plaintext> {
        check_len(&self.ctx, values.len(), "batch encoding")?;
        let t = self.ctx.t();
        let reduced: Vec<u64> = values.iter().map(|&v| t.reduce(v)).collect();
        self.encode_reduced(&reduced)
    }

    /// Encodes up to `N` signed slot values (taken modulo `t`; missing slots are 0).
    ///
    /// Errors: [`BfvError::TooManyValues`] for more than `N` values.
    pub fn encode_i64(&self, values: &[i64]) -> BfvResult<Plaintext> {
        check_len(&self.ctx, values.len(), "batch encoding")?;
        let t = self.ctx.t();
        let reduced: Vec<u64> = values.iter().map(|&v| t.reduce_i64(v)).collect();
        self.encode_reduced(&reduced)
    }

    fn encode_reduced(&self, values: &[u64]) -> BfvResult<Plaintext> {
        let tables = self.tables()?;
        let mut evals = vec![0u64; self.ctx.n()];
        for (&v, &i) in values.iter().zip(&tables.index) {
            evals[i] = v;
        }
        tables.plan.inverse(&mut evals)?;
        Ok(Plaintext {
            fingerprint: self.ctx.fingerprint(),
            coeffs: evals,
        })
    }

    /// The `N` slot values in `[0, t)`.
    ///
    /// Errors: [`BfvError::ContextMismatch`] for a plaintext of another context.
    pub fn decode_u64(&self, pt: &Plaintext) -> BfvResult<Vec<u64>> {
        self.decode_with(pt, |v| v)
    }

    /// The `N` slot values as centered representatives in `(-t/2, t/2]`.
    ///
    /// Errors: [`BfvError::ContextMismatch`] for a plaintext of another context.
    pub fn decode_i64(&self, pt: &Plaintext) -> BfvResult<Vec<i64>> {
        self.decode_with(pt, |v| self.ctx.t().center(v))
    }

    /// The slot values through `f`, gathered from the NTT output in slot order in one pass (the
    /// centering of [`BatchEncoder::decode_i64`] rides on the gather).
    fn decode_with<T>(&self, pt: &Plaintext, f: impl Fn(u64) -> T) -> BfvResult<Vec<T>> {
        self.ctx.check_fingerprint(pt.fingerprint, "plaintext")?;
        let tables = self.tables()?;
        let mut evals = pt.coeffs.clone();
        tables.plan.forward(&mut evals)?;
        Ok(tables.index.iter().map(|&i| f(evals[i])).collect())
    }

    fn tables(&self) -> BfvResult<&crate::params::BatchTables> {
        self.ctx.batch().ok_or(BfvError::BatchingUnavailable {
            t: self.ctx.plaintext_modulus(),
            n: self.ctx.n(),
            two_n: 2 * self.ctx.n(),
        })
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use crate::params::BfvParams;
    use rand::{Rng, SeedableRng};

    fn ctx(log_n: u32, t: u64) -> Arc<BfvContext> {
        let mut p = BfvParams::with_bit_sizes(log_n, t, 40, 2).unwrap();
        p.insecure_for_testing = true;
        BfvContext::new(p).unwrap()
    }

    /// Negacyclic product mod t, schoolbook.
    fn negacyclic(a: &[u64], b: &[u64], t: u64) -> Vec<u64> {
        let n = a.len();
        let mut out = vec![0u128; n];
        let t128 = t as u128;
        for (i, &x) in a.iter().enumerate() {
            for (j, &y) in b.iter().enumerate() {
                let p = x as u128 * y as u128 % t128;
                let k = i + j;
                if k < n {
                    out[k] = (out[k] + p) % t128;
                } else {
                    out[k - n] = (out[k - n] + t128 - p) % t128;
                }
            }
        }
        out.into_iter().map(|x| x as u64).collect()
    }

    #[test]
    fn batch_round_trip_slotwise_products_and_rotations() {
        let t = 65537;
        let c = ctx(6, t);
        let enc = BatchEncoder::new(&c).unwrap();
        let n = c.n();
        let mut rng = rand::rngs::StdRng::seed_from_u64(1);
        let x: Vec<u64> = (0..n).map(|_| rng.gen_range(0..t)).collect();
        let y: Vec<u64> = (0..n).map(|_| rng.gen_range(0..t)).collect();
        let (px, py) = (enc.encode_u64(&x).unwrap(), enc.encode_u64(&y).unwrap());
        assert_eq!(enc.decode_u64(&px).unwrap(), x);
        // Ring product = slot-wise product.
        let prod = negacyclic(&px.coeffs, &py.coeffs, t);
        let pp = Plaintext {
            fingerprint: c.fingerprint(),
            coeffs: prod,
        };
        let expect: Vec<u64> = x.iter().zip(&y).map(|(a, b)| a * b % t).collect();
        assert_eq!(enc.decode_u64(&pp).unwrap(), expect);
        // X -> X^3 rotates each row left by one, X -> X^(3^-1) right by one; X -> X^(2N-1) swaps the
        // rows.
        let auto = |k: usize| {
            let mut out = vec![0u64; n];
            for (i, &cf) in px.coeffs.iter().enumerate() {
                let e = i * k % (2 * n);
                if e < n {
                    out[e] = cf;
                } else {
                    out[e - n] = (t - cf) % t;
                }
            }
            Plaintext {
                fingerprint: c.fingerprint(),
                coeffs: out,
            }
        };
        let rot = enc.decode_u64(&auto(3)).unwrap();
        let h = n / 2;
        for j in 0..h {
            assert_eq!(rot[j], x[(j + 1) % h]);
            assert_eq!(rot[h + j], x[h + (j + 1) % h]);
        }
        let right = c.galois_group().element_of_step(-1).value();
        assert_eq!(right * 3 % (2 * n), 1);
        let rot = enc.decode_u64(&auto(right)).unwrap();
        for j in 0..h {
            assert_eq!(rot[(j + 1) % h], x[j]);
            assert_eq!(rot[h + (j + 1) % h], x[h + j]);
        }
        let swapped = enc.decode_u64(&auto(2 * n - 1)).unwrap();
        assert_eq!(&swapped[..h], &x[h..]);
        assert_eq!(&swapped[h..], &x[..h]);
        // Signed values.
        let s: Vec<i64> = vec![-1, 2, -32768, 32768];
        assert_eq!(
            enc.decode_i64(&enc.encode_i64(&s).unwrap()).unwrap()[..4],
            s[..]
        );
    }

    #[test]
    fn encoder_errors() {
        let c = ctx(5, 2);
        assert!(matches!(
            BatchEncoder::new(&c),
            Err(BfvError::BatchingUnavailable { t: 2, .. })
        ));
        let enc = CoeffEncoder::new(&c);
        assert!(matches!(
            enc.encode_u64(&[1; 33]),
            Err(BfvError::TooManyValues {
                got: 33,
                max: 32,
                ..
            })
        ));
        let pt = enc.encode_i64(&[-1, 3, 0, 1]).unwrap();
        assert_eq!(&pt.coefficients()[..4], &[1, 1, 0, 1]);
        let other = ctx(5, 3);
        assert!(matches!(
            CoeffEncoder::new(&other).decode_u64(&pt),
            Err(BfvError::ContextMismatch { .. })
        ));
        let b = ctx(5, 65537);
        let be = BatchEncoder::new(&b).unwrap();
        assert!(matches!(
            be.encode_u64(&[0; 33]),
            Err(BfvError::TooManyValues { .. })
        ));
    }
}
