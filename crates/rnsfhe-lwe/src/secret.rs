//! LWE secret keys, encryption and decryption (for clients and tests; the server never holds the key).

use rnsfhe_core::{SecretDistribution, SecretKey};
use rnsfhe_math::sampling::DiscreteGaussian;
use rnsfhe_math::sampling::{fill_ternary, fill_ternary_hamming, fill_uniform_mod, Csprng};
use rnsfhe_math::Modulus;
use zeroize::Zeroize;

use crate::ciphertext::LweCiphertext;
use crate::dimension::LweDimension;
use crate::error::{LweError, LweResult};

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
    /// Samples a ternary secret of dimension `n` from `distribution` (uniform ternary, or exactly `h`
    /// nonzero coefficients).
    ///
    /// Errors: [`LweError::Math`] for a Hamming weight above `n`.
    pub fn generate(
        dimension: LweDimension,
        distribution: SecretDistribution,
        rng: &mut Csprng,
    ) -> LweResult<Self> {
        let mut coeffs = vec![0i64; dimension.get()];
        match distribution {
            SecretDistribution::Ternary => fill_ternary(rng, &mut coeffs),
            SecretDistribution::HammingWeight(h) => fill_ternary_hamming(rng, h, &mut coeffs)?,
        }
        Ok(Self { dimension, coeffs })
    }

    /// Samples a uniform binary secret `s in {0, 1}^n` (for [`crate::BlindRotation::Binary`]).
    ///
    /// Errors: none in practice (the modulus 2 is valid); [`LweError::Math`] is kept for the sampler's
    /// contract.
    pub fn generate_binary(dimension: LweDimension, rng: &mut Csprng) -> LweResult<Self> {
        let mut bits = vec![0u64; dimension.get()];
        fill_uniform_mod(rng, &Modulus::new(2)?, &mut bits);
        let coeffs = bits.iter().map(|&b| b as i64).collect();
        bits.zeroize();
        Ok(Self { dimension, coeffs })
    }

    /// Samples a binary secret `s in {0, 1}^n` with exactly `weight` ones at uniform positions (for
    /// [`crate::BlindRotation::Binary`] at the key norm of PEGASUS Table IV's `h = 64`, as OpenPEGASUS's
    /// keys are). The look-up index of blind rotation carries the modulus-switching error of variance
    /// `(||s||^2 + 1) / 12` (PEGASUS Appendix C.2): `weight + 1` here against about `n / 2` for a uniform
    /// binary key ([`LweSecretKey::generate_binary`]), whose look-up tables are `sqrt(n / (2 weight))`
    /// times less accurate. The lattice estimate of a Hamming-weight distribution is for ternary keys;
    /// a binary key of the same weight has `weight` bits less entropy.
    ///
    /// Errors: [`LweError::Math`] for a weight above `n`.
    pub fn generate_binary_with_weight(
        dimension: LweDimension,
        weight: usize,
        rng: &mut Csprng,
    ) -> LweResult<Self> {
        let mut coeffs = vec![0i64; dimension.get()];
        fill_ternary_hamming(rng, weight, &mut coeffs)?;
        coeffs.iter_mut().for_each(|c| *c = c.abs());
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
