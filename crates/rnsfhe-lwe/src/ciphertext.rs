//! LWE ciphertexts over one modulus: arithmetic and modulus switching.
//!
//! An LWE encryption of `m in Z_q` under `s in Z^n` is `(b, a) = (m + e - <a, s>, a)` with `a` uniform in
//! `Z_q^n` and a small error `e` (PEGASUS Section II.B), so that the phase `b + <a, s> = m + e (mod q)`.
//! Sums, differences and integer multiples of ciphertexts are ciphertexts of the sums, differences and
//! multiples of the messages (errors add, or scale by the integer). Modulus switching
//! ([`LweCiphertext::switch_modulus`]) rescales every component to another modulus, as blind rotation
//! needs (`q -> 2N`, PEGASUS Fig. 2 step 2) and as a key switch to a smaller modulus does.

use rnsfhe_math::Modulus;

use crate::dimension::LweDimension;
use crate::error::{LweError, LweResult};

/// An LWE ciphertext `(b, a)` over the modulus `q`, components reduced in `[0, q)` (see the module
/// documentation).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LweCiphertext {
    modulus: Modulus,
    dimension: LweDimension,
    b: u64,
    a: Vec<u64>,
}

impl LweCiphertext {
    /// A ciphertext from its components: `a` gives the dimension, `modulus` is `q`.
    ///
    /// Errors: [`LweError::Math`] for a modulus outside `[2, 2^62)`; [`LweError::InvalidParams`] for an
    /// empty or too long `a` or a component not reduced below `q`.
    pub fn from_parts(modulus: u64, b: u64, a: Vec<u64>) -> LweResult<Self> {
        let modulus = Modulus::new(modulus)?;
        let dimension = LweDimension::new(a.len())?;
        if let Some(i) = std::iter::once(&b)
            .chain(&a)
            .position(|&x| x >= modulus.value())
        {
            return Err(LweError::InvalidParams {
                what: "LWE ciphertext",
                reason: format!(
                    "component {i} (0 is b) is not reduced below q = {}",
                    modulus.value()
                ),
            });
        }
        Ok(Self {
            modulus,
            dimension,
            b,
            a,
        })
    }

    /// Builds from components known to be reduced modulo `modulus`, with `a.len() == dimension`.
    pub(crate) fn from_reduced(
        modulus: Modulus,
        dimension: LweDimension,
        b: u64,
        a: Vec<u64>,
    ) -> Self {
        debug_assert_eq!(a.len(), dimension.get());
        Self {
            modulus,
            dimension,
            b,
            a,
        }
    }

    /// The trivial (noiseless, public) encryption `(m mod q, 0)` of a signed message.
    pub fn trivial(modulus: &Modulus, dimension: LweDimension, m: i64) -> Self {
        Self::from_reduced(
            *modulus,
            dimension,
            modulus.reduce_i64(m),
            vec![0; dimension.get()],
        )
    }

    /// The modulus `q`.
    pub fn modulus(&self) -> &Modulus {
        &self.modulus
    }

    /// The dimension `n`.
    pub fn dimension(&self) -> LweDimension {
        self.dimension
    }

    /// The body `b`.
    pub fn b(&self) -> u64 {
        self.b
    }

    /// The mask `a`.
    pub fn a(&self) -> &[u64] {
        &self.a
    }

    /// Checks that `other` has this ciphertext's dimension and modulus.
    ///
    /// Errors: [`LweError::DimensionMismatch`], [`LweError::ModulusMismatch`].
    pub fn check_compatible(&self, other: &Self, operation: &'static str) -> LweResult<()> {
        self.dimension.check_same(other.dimension, operation)?;
        check_modulus(&self.modulus, &other.modulus, operation)
    }

    /// `self <- self + other` (an encryption of the sum of the messages).
    ///
    /// Errors: as [`LweCiphertext::check_compatible`].
    pub fn add_assign(&mut self, other: &Self) -> LweResult<()> {
        self.zip_assign(other, "LWE addition", Modulus::add)
    }

    /// `self <- self - other` (an encryption of the difference of the messages).
    ///
    /// Errors: as [`LweCiphertext::check_compatible`].
    pub fn sub_assign(&mut self, other: &Self) -> LweResult<()> {
        self.zip_assign(other, "LWE subtraction", Modulus::sub)
    }

    /// `self + other`.
    ///
    /// Errors: as [`LweCiphertext::check_compatible`].
    pub fn add(&self, other: &Self) -> LweResult<Self> {
        let mut out = self.clone();
        out.add_assign(other)?;
        Ok(out)
    }

    /// `self - other`.
    ///
    /// Errors: as [`LweCiphertext::check_compatible`].
    pub fn sub(&self, other: &Self) -> LweResult<Self> {
        let mut out = self.clone();
        out.sub_assign(other)?;
        Ok(out)
    }

    /// `-self` (an encryption of `-m`).
    pub fn neg(&self) -> Self {
        let m = &self.modulus;
        Self::from_reduced(
            *m,
            self.dimension,
            m.neg(self.b),
            self.a.iter().map(|&x| m.neg(x)).collect(),
        )
    }

    /// `self <- c self` for an integer `c` (an encryption of `c m`; the error is multiplied by `c`).
    pub fn mul_scalar_assign(&mut self, c: i64) {
        let m = self.modulus;
        let c = m.reduce_i64(c);
        self.b = m.mul(self.b, c);
        self.a.iter_mut().for_each(|x| *x = m.mul(*x, c));
    }

    /// `self <- self + (m, 0)`: adds a public signed message (no noise).
    pub fn add_plain_assign(&mut self, m: i64) {
        self.b = self.modulus.add(self.b, self.modulus.reduce_i64(m));
    }

    /// Modulus switching to `new_modulus` (`q -> q'`): every component `x` becomes `round(x q' / q)`
    /// (PEGASUS Fig. 2 step 2 with `q' = 2n`). The phase becomes `(q'/q)(m + e)` plus a rounding error
    /// of at most `(1 + ||s||_1) / 2` in absolute value (each of the `n + 1` components is off by at
    /// most 1/2, times the key coefficient it meets).
    ///
    /// Errors: [`LweError::Math`] for a modulus outside `[2, 2^62)`.
    pub fn switch_modulus(&self, new_modulus: u64) -> LweResult<Self> {
        let switch = ModulusSwitch::new(self.modulus.value(), new_modulus)?;
        Ok(Self::from_reduced(
            switch.to,
            self.dimension,
            switch.round(self.b),
            self.a.iter().map(|&x| switch.round(x)).collect(),
        ))
    }

    /// Modulus switching to an even `new_modulus` with the mask rounded to **odd** values, for the
    /// automorphism-based blind rotation ([`crate::BlindRotation::Lmkcdey`]), whose mask entries must be
    /// units of `Z_2n`: `b` becomes `round(b q' / q)` as in [`LweCiphertext::switch_modulus`], every
    /// `a_j` the odd integer nearest to `a_j q' / q`, `2 floor(a_j q' / (2 q)) + 1` (the rounding to odd
    /// values of Lee et al., Eurocrypt 2023; OpenFHE and Lattigo set the low bit after rounding instead,
    /// which biases the error). Each mask rounding error lies in `[-1, 1)` (uniform, variance `1/3`
    /// instead of `1/12`), so the phase's rounding error has variance `1/12 + ||s||^2 / 3` instead of
    /// `(1 + ||s||^2) / 12` and is at most `1/2 + ||s||_1` in absolute value.
    ///
    /// Errors: [`LweError::InvalidParams`] for an odd `new_modulus`; [`LweError::Math`] for a modulus
    /// outside `[2, 2^62)`.
    pub fn switch_modulus_odd_mask(&self, new_modulus: u64) -> LweResult<Self> {
        if new_modulus % 2 == 1 {
            return Err(LweError::InvalidParams {
                what: "modulus of a switch to an odd mask",
                reason: format!(
                    "{new_modulus} is odd: odd residues are units only modulo even moduli"
                ),
            });
        }
        let mut out = self.switch_modulus(new_modulus)?;
        let (q, q_new) = (self.modulus.value() as u128, new_modulus as u128);
        // a < q, so floor(a q' / (2 q)) < q' / 2 and 2 floor(..) + 1 < q'.
        for (o, &a) in out.a.iter_mut().zip(&self.a) {
            *o = (2 * (a as u128 * q_new / (2 * q)) + 1) as u64;
        }
        Ok(out)
    }

    fn zip_assign(
        &mut self,
        other: &Self,
        operation: &'static str,
        op: fn(&Modulus, u64, u64) -> u64,
    ) -> LweResult<()> {
        self.check_compatible(other, operation)?;
        let m = self.modulus;
        self.b = op(&m, self.b, other.b);
        for (x, &y) in self.a.iter_mut().zip(&other.a) {
            *x = op(&m, *x, y);
        }
        Ok(())
    }
}

/// Checks that two moduli are equal.
///
/// Errors: [`LweError::ModulusMismatch`] naming `operation`.
pub(crate) fn check_modulus(
    left: &Modulus,
    right: &Modulus,
    operation: &'static str,
) -> LweResult<()> {
    if left.value() == right.value() {
        Ok(())
    } else {
        Err(LweError::ModulusMismatch {
            operation,
            left: left.value(),
            right: right.value(),
        })
    }
}

/// The rounding `x -> round(x q' / q)` of [`LweCiphertext::switch_modulus`] from `q` to `q'`, for callers
/// that switch residues held elsewhere (the coefficients of a ring element read as masks, PEGASUS Fig. 6
/// step 3 before extraction) without wrapping them in a ciphertext first: the same residues as
/// [`LweCiphertext::switch_modulus`], written into the caller's buffer.
#[derive(Clone, Copy, Debug)]
pub struct ModulusSwitch {
    from: Modulus,
    to: Modulus,
    /// `q' / q` in double precision, for the quotient estimate of moduli `q' < 2^50`.
    ratio: f64,
}

impl ModulusSwitch {
    /// The switch from `from` (`q`) to `to` (`q'`).
    ///
    /// Errors: [`LweError::Math`] for a modulus outside `[2, 2^62)`.
    pub fn new(from: u64, to: u64) -> LweResult<Self> {
        let (from, to) = (Modulus::new(from)?, Modulus::new(to)?);
        Ok(Self {
            from,
            to,
            ratio: to.value() as f64 / from.value() as f64,
        })
    }

    /// The modulus `q` switched from.
    pub fn from(&self) -> u64 {
        self.from.value()
    }

    /// The modulus `q'` switched to.
    pub fn to(&self) -> u64 {
        self.to.value()
    }

    /// `round(x q' / q)` reduced modulo `q'`, for a residue `x < q` (a larger `x` is the caller's error:
    /// the result is then the rounding of `x` itself, possibly not below `q'`).
    #[inline]
    pub fn round(&self, x: u64) -> u64 {
        let (q, q_new) = (self.from.value() as u128, self.to.value());
        // x < q < 2^62 and q' < 2^62: x q' + q/2 < 2^125, no overflow; the quotient is at most q', which
        // is 0 modulo q'. For q' < 2^50 the quotient comes from a double-precision estimate (off by at
        // most one: the product's relative error 2^-51 is below 1/2 of q') corrected by two exact
        // integer comparisons, instead of a 128-bit division per coefficient (5 ms of a 2^16-dimension
        // switch).
        let t = x as u128 * q_new as u128 + q / 2;
        let r = if q_new < 1 << 50 {
            let mut r = (x as f64 * self.ratio).round() as u64;
            if r as u128 * q > t {
                r -= 1;
            } else if (r as u128 + 1) * q <= t {
                r += 1;
            }
            r
        } else {
            (t / q) as u64
        };
        if r == q_new {
            0
        } else {
            r
        }
    }

    /// `dst[j] = round(src[j] q' / q)` ([`ModulusSwitch::round`]) for every `j`.
    ///
    /// Errors: [`LweError::InvalidParams`] if the lengths differ or a residue of `src` is not below `q`.
    pub fn switch_into(&self, src: &[u64], dst: &mut [u64]) -> LweResult<()> {
        if src.len() != dst.len() {
            return Err(LweError::InvalidParams {
                what: "modulus switch of residues",
                reason: format!("{} residues into a buffer of {}", src.len(), dst.len()),
            });
        }
        if let Some(x) = src.iter().find(|&&x| x >= self.from.value()) {
            return Err(LweError::InvalidParams {
                what: "modulus switch of residues",
                reason: format!("{x} is not reduced below q = {}", self.from.value()),
            });
        }
        dst.iter_mut()
            .zip(src)
            .for_each(|(d, &x)| *d = self.round(x));
        Ok(())
    }
}
