//! Sample extraction: one coefficient of an RLWE plaintext as an LWE ciphertext (PEGASUS Section II.C,
//! `Extract^k`).
//!
//! For an RLWE ciphertext `(c_0, c_1)` with `c_0 + c_1 s = m (mod X^N + 1)`, coefficient `k` of `c_1 s` is
//! `sum_{j <= k} c_{1,k-j} s_j - sum_{j > k} c_{1,N+k-j} s_j` (the negacyclic wrap flips the sign), so
//! `(c_{0,k}, a)` with `a_j = c_{1,k-j}` for `j <= k` and `a_j = -c_{1,N+k-j}` for `j > k` is an LWE
//! encryption of `m_k` under the coefficient vector of `s` ([`crate::LweSecretKey::from_ring_key`]), of
//! dimension `N`, with the RLWE error's coefficient `k` as its error.

use rnsfhe_core::RlweCiphertext;
use rnsfhe_ring::Coeff;

use crate::ciphertext::LweCiphertext;
use crate::dimension::LweDimension;
use crate::error::{LweError, LweResult};

/// The LWE encryption of coefficient `k` of the plaintext of the 2-part `ct` (coefficient form; an
/// NTT-form ciphertext converts with [`RlweCiphertext::into_coeff`]), over the first prime `q_0` of its
/// basis: the other limbs are dropped, as PEGASUS Fig. 6 step 1 drops to `q_0` before extracting
/// (decryption modulo `q_0` of an encryption modulo `Q_l` is still correct for the message modulo `q_0`).
///
/// Errors: [`LweError::InvalidParams`] unless `ct` has 2 parts, or for `k >= N`.
pub fn extract(ct: &RlweCiphertext<Coeff>, k: usize) -> LweResult<LweCiphertext> {
    Ok(extract_many(ct, &[k])?.remove(0))
}

/// [`extract`] for each index of `indices` (one LWE ciphertext per index, in order).
///
/// Errors: as [`extract`].
pub fn extract_many(
    ct: &RlweCiphertext<Coeff>,
    indices: &[usize],
) -> LweResult<Vec<LweCiphertext>> {
    let [c0, c1] = ct.parts.as_slice() else {
        return Err(LweError::InvalidParams {
            what: "extracted RLWE ciphertext",
            reason: format!("it has {} parts; extraction needs 2", ct.parts.len()),
        });
    };
    let n = c0.degree();
    let dimension = LweDimension::new(n)?;
    let q0 = c0.basis().moduli()[0];
    let (b_limb, a_limb) = (&c0.data()[..n], &c1.data()[..n]);
    indices
        .iter()
        .map(|&k| {
            if k >= n {
                return Err(LweError::InvalidParams {
                    what: "extracted coefficient index",
                    reason: format!("{k} is not below N = {n}"),
                });
            }
            // a_j = c_{1,k-j} for j <= k: the first k + 1 coefficients of c_1 in reverse; then
            // a_j = -c_{1,N+k-j} for j > k: the last N - k - 1 coefficients of c_1 in reverse, negated.
            let a = a_limb[..=k]
                .iter()
                .rev()
                .copied()
                .chain(a_limb[k + 1..].iter().rev().map(|&x| q0.neg(x)))
                .collect();
            Ok(LweCiphertext::from_reduced(q0, dimension, b_limb[k], a))
        })
        .collect()
}
