//! The refusal of insecure parameters: the keys of this crate are RLWE samples (the LWE switching keys
//! under the LWE secret, the blind-rotation keys under the ring secret), and their constructors refuse
//! parameters that the built-in lattice estimator ([`rnsfhe_core::lwe_estimator`]) puts below
//! [`MIN_SECURITY_BITS`], unless the caller opts in explicitly (the `*_allowing_insecure` constructors:
//! for tests, and to reproduce PEGASUS Table IV, which the estimator puts at 97.7 bits).

use rnsfhe_core::lwe_estimator::{estimate_lwe, LweEstimate, LweParams, LweSecret};

use crate::error::{LweError, LweResult};

/// The security level below which key constructors refuse parameters without the explicit opt-in.
pub const MIN_SECURITY_BITS: f64 = 128.0;

/// Whether a constructor checks the estimate ([`Security::Check`]) or was told to skip it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Security {
    /// Refuse estimates below [`MIN_SECURITY_BITS`].
    Check,
    /// The caller's explicit opt-in.
    AllowInsecure,
}

/// The estimate of RLWE samples of degree `n` over a modulus of `log_q` bits with error width `sigma` and
/// secret distribution `secret` (a ring [`rnsfhe_core::SecretDistribution`] or any [`LweSecret`]).
///
/// Errors: [`LweError::InvalidParams`] if the estimator rejects the parameters.
pub(crate) fn estimate(
    n: usize,
    log_q: f64,
    sigma: f64,
    secret: impl Into<LweSecret>,
) -> LweResult<LweEstimate> {
    estimate_lwe(&LweParams::rlwe(n, log_q, sigma, secret)).map_err(|e| LweError::InvalidParams {
        what: "LWE-layer parameters",
        reason: format!("the lattice estimator rejects them: {e}"),
    })
}

/// Refuses `estimate` below [`MIN_SECURITY_BITS`] unless `security` is the opt-in.
///
/// Errors: [`LweError::Insecure`] naming `what`.
pub(crate) fn check(
    estimate: &LweEstimate,
    what: &'static str,
    security: Security,
) -> LweResult<()> {
    let bits = estimate.security_bits();
    if security == Security::Check && bits < MIN_SECURITY_BITS {
        return Err(LweError::Insecure { what, bits });
    }
    Ok(())
}
