//! Set-up shared by the PEGASUS tables (`pegasus-table5`, `pegasus-figure7`): the look-up-table ring, its
//! secret and the blind-rotation key of a parameter set.

use std::sync::Arc;

use rnsfhe_core::{RlweContext, SecretKey};
use rnsfhe_lwe::{BlindRotation, BlindRotationKey, LutEvaluator, LweSecretKey, PegasusParams};
use rnsfhe_math::sampling::Csprng;

/// The LUT evaluator of a parameter set for the LWE key `lwe_sk`, with its ring context and secret.
pub(crate) fn lut_setup(
    algorithm: BlindRotation,
    params: &PegasusParams,
    lwe_sk: &LweSecretKey,
    rng: &mut Csprng,
) -> anyhow::Result<(Arc<RlweContext>, SecretKey, LutEvaluator)> {
    // Table IV is reproduced as published (the estimator puts its switching key below 128 bits).
    let ctx = params.lut.context_allowing_insecure()?;
    let ring_sk = SecretKey::generate(&ctx, rng)?;
    let key = BlindRotationKey::generate_with(algorithm, &ctx, &ring_sk, lwe_sk, rng)?;
    Ok((ctx, ring_sk, LutEvaluator::new(key)))
}
