//! LWE secret keys, encryption and decryption (for clients and tests; the server never holds the key).

use rnsfhe_core::lwe_estimator::LweSecret;
use rnsfhe_core::{SecretDistribution, SecretKey};
use rnsfhe_math::sampling::DiscreteGaussian;
use rnsfhe_math::sampling::{fill_ternary, fill_ternary_hamming, fill_uniform_mod, Csprng};
use rnsfhe_math::Modulus;
use zeroize::Zeroize;

use crate::ciphertext::LweCiphertext;
use crate::dimension::LweDimension;
use crate::error::{LweError, LweResult};

/// The distribution of an LWE secret key: ternary as the ring secrets of `rnsfhe-core` (uniform, or a
/// fixed Hamming weight as PEGASUS Table IV's `h = 64`), or binary (uniform, or a fixed weight), which
/// [`crate::BlindRotation::Binary`] needs (one external product per coefficient instead of two).
///
/// The look-up index of blind rotation carries the modulus switch's rounding, of variance
/// `(1 + ||s||^2) / 12` (PEGASUS Appendix C.2): `||s||^2` is `h` for a fixed weight, `2n/3` for a uniform
/// ternary key and `n/2` for a uniform binary one, so sparse keys give more accurate tables and dense keys
/// more security ([`LweSecretDistribution::lattice_secret`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum LweSecretDistribution {
    /// Every coefficient uniform in `{-1, 0, 1}`.
    UniformTernary,
    /// Exactly `h` coefficients in `{-1, 1}`, the others zero.
    TernaryWeight(usize),
    /// Every coefficient uniform in `{0, 1}`.
    UniformBinary,
    /// Exactly `h` coefficients equal to 1, the others zero (OpenPEGASUS's keys at `h = 64`: the
    /// binary algorithm at Table IV's key norm, `sqrt(n / (2 h))` times more accurate tables than a
    /// uniform binary key; such a key has `h` bits less entropy than a ternary one of weight `h`).
    BinaryWeight(usize),
}

impl From<SecretDistribution> for LweSecretDistribution {
    fn from(d: SecretDistribution) -> Self {
        match d {
            SecretDistribution::Ternary => Self::UniformTernary,
            SecretDistribution::HammingWeight(h) => Self::TernaryWeight(h),
        }
    }
}

impl LweSecretDistribution {
    /// Whether every key of the distribution is binary.
    pub fn is_binary(self) -> bool {
        matches!(self, Self::UniformBinary | Self::BinaryWeight(_))
    }

    /// The expected `||s||^2` in dimension `n` (the variance factor of the look-up index).
    pub fn expected_norm_sq(self, n: usize) -> f64 {
        match self {
            Self::UniformTernary => 2.0 * n as f64 / 3.0,
            Self::UniformBinary => n as f64 / 2.0,
            Self::TernaryWeight(h) | Self::BinaryWeight(h) => h as f64,
        }
    }

    /// The secret as the lattice estimator sees it in dimension `n` (through its standard deviation):
    /// ternary ones as such; a uniform binary coefficient has standard deviation `1/2`, a binary one of
    /// weight `h` `sqrt(p (1 - p))` with `p = h / n` (the attacks see the distribution around its mean,
    /// PEGASUS Section VI.A's estimator runs likewise).
    pub fn lattice_secret(self, n: usize) -> LweSecret {
        match self {
            Self::UniformTernary => LweSecret::Ternary,
            Self::TernaryWeight(h) => LweSecret::HammingWeight(h),
            Self::UniformBinary => LweSecret::StdDev(0.5),
            Self::BinaryWeight(h) => {
                let p = h as f64 / n.max(1) as f64;
                LweSecret::StdDev((p * (1.0 - p)).sqrt())
            }
        }
    }
}

impl std::fmt::Display for LweSecretDistribution {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::UniformTernary => f.write_str("uniform ternary"),
            Self::TernaryWeight(h) => write!(f, "ternary, h = {h}"),
            Self::UniformBinary => f.write_str("uniform binary"),
            Self::BinaryWeight(h) => write!(f, "binary, h = {h}"),
        }
    }
}

/// An LWE secret `s in {-1, 0, 1}^n` (PEGASUS Section II.B; Table IV uses Hamming weight `h = 64`). The
/// coefficients are overwritten with zeros on drop and never printed by `Debug`.
#[derive(Clone)]
pub struct LweSecretKey {
    dimension: LweDimension,
    coeffs: Vec<i64>,
}

impl std::fmt::Debug for LweSecretKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "LweSecretKey {{ dimension: {}, <redacted> }}",
            self.coeffs.len()
        )
    }
}

impl Drop for LweSecretKey {
    fn drop(&mut self) {
        self.coeffs.zeroize();
    }
}

impl zeroize::ZeroizeOnDrop for LweSecretKey {}

impl LweSecretKey {
    /// Samples a secret of dimension `n` from `distribution` (an [`LweSecretDistribution`], or a ring
    /// [`SecretDistribution`]: uniform ternary or a fixed Hamming weight).
    ///
    /// Errors: [`LweError::Math`] for a weight above `n`.
    pub fn generate(
        dimension: LweDimension,
        distribution: impl Into<LweSecretDistribution>,
        rng: &mut Csprng,
    ) -> LweResult<Self> {
        let mut coeffs = vec![0i64; dimension.get()];
        match distribution.into() {
            LweSecretDistribution::UniformTernary => fill_ternary(rng, &mut coeffs),
            LweSecretDistribution::TernaryWeight(h) => fill_ternary_hamming(rng, h, &mut coeffs)?,
            LweSecretDistribution::UniformBinary => {
                let mut bits = vec![0u64; coeffs.len()];
                fill_uniform_mod(rng, &Modulus::new(2)?, &mut bits);
                coeffs
                    .iter_mut()
                    .zip(&bits)
                    .for_each(|(c, &b)| *c = b as i64);
                bits.zeroize();
            }
            LweSecretDistribution::BinaryWeight(h) => {
                fill_ternary_hamming(rng, h, &mut coeffs)?;
                coeffs.iter_mut().for_each(|c| *c = c.abs());
            }
        }
        Ok(Self { dimension, coeffs })
    }

    /// A key with the given ternary coefficients.
    ///
    /// Errors: [`LweError::InvalidParams`] for an empty or too long vector or a coefficient outside
    /// `{-1, 0, 1}`.
    pub fn from_coefficients(coeffs: &[i64]) -> LweResult<Self> {
        let dimension = LweDimension::new(coeffs.len())?;
        if let Some(i) = coeffs.iter().position(|c| !(-1..=1).contains(c)) {
            return Err(LweError::InvalidParams {
                what: "LWE secret key coefficients",
                reason: format!("coefficient {i} is not ternary (must be -1, 0 or 1)"),
            });
        }
        Ok(Self {
            dimension,
            coeffs: coeffs.to_vec(),
        })
    }

    /// The LWE key of the coefficients extracted from RLWE ciphertexts under `sk`: its coefficient
    /// vector (PEGASUS Section II.B identifies the ring secret with that vector).
    ///
    /// Errors: [`LweError::InvalidParams`] if the ring degree exceeds the largest LWE dimension.
    pub fn from_ring_key(sk: &SecretKey) -> LweResult<Self> {
        Self::from_coefficients(sk.coefficients())
    }

    /// The dimension `n`.
    pub fn dimension(&self) -> LweDimension {
        self.dimension
    }

    /// The key as the lattice estimator sees it: a binary key by the standard deviation of its
    /// coefficients (`sqrt(p (1 - p))` for a fraction `p` of ones, see
    /// [`LweSecretDistribution::lattice_secret`]), a ternary one by its Hamming weight.
    pub fn lattice_secret(&self) -> LweSecret {
        let n = self.coeffs.len();
        let weight = self.coeffs.iter().filter(|&&c| c != 0).count().max(1);
        if self.coeffs.iter().all(|&c| c >= 0) {
            LweSecretDistribution::BinaryWeight(weight).lattice_secret(n)
        } else {
            LweSecretDistribution::TernaryWeight(weight).lattice_secret(n)
        }
    }

    /// The signed coefficients of `s`.
    pub fn coefficients(&self) -> &[i64] {
        &self.coeffs
    }

    /// Encrypts the signed message `m` modulo `modulus` with an error drawn from `noise`:
    /// `(m + e - <a, s>, a)`, `a` uniform (PEGASUS Section II.B).
    pub fn encrypt(
        &self,
        m: i64,
        modulus: &Modulus,
        noise: &DiscreteGaussian,
        rng: &mut Csprng,
    ) -> LweCiphertext {
        let mut a = vec![0u64; self.coeffs.len()];
        fill_uniform_mod(rng, modulus, &mut a);
        let e = noise.sample(rng);
        let dot = self.dot(&a, modulus);
        let b = modulus.sub(
            modulus.add(modulus.reduce_i64(m), modulus.reduce_i64(e)),
            dot,
        );
        LweCiphertext::from_reduced(*modulus, self.dimension(), b, a)
    }

    /// The phase `b + <a, s> mod q` (the message plus the error), centered in `(-q/2, q/2]`.
    ///
    /// Errors: [`LweError::DimensionMismatch`] for a ciphertext of another dimension.
    pub fn decrypt(&self, ct: &LweCiphertext) -> LweResult<i64> {
        self.dimension()
            .check_same(ct.dimension(), "LWE decryption")?;
        let m = ct.modulus();
        Ok(m.center(m.add(ct.b(), self.dot(ct.a(), m))))
    }

    /// `<a, s> mod q`, without a branch on the key's coefficients.
    fn dot(&self, a: &[u64], modulus: &Modulus) -> u64 {
        a.iter().zip(&self.coeffs).fold(0u64, |acc, (&x, &s)| {
            modulus.add(acc, modulus.mul(x, modulus.reduce_i64(s)))
        })
    }
}
