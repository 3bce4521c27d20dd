//! Extraction of CKKS coefficients as LWE ciphertexts (PEGASUS Fig. 6, steps 1-2, and the drop to `q_0`
//! of Section IV.B).
//!
//! After slots-to-coefficients, coefficient `i` of the plaintext of a CKKS ciphertext holds
//! `Delta v[i]`. PEGASUS keeps only the first modulus `q_0` (decryption modulo `q_0` of an encryption
//! modulo `Q_l` is still correct for the message modulo `q_0`) and extracts the wanted coefficients:
//! `Extract^i` (Section II.C) turns `(c_0, c_1)` into the LWE ciphertext
//! `(c_{0,i}, (c_{1,i}, c_{1,i-1}, ..., c_{1,0}, -c_{1,N-1}, ..., -c_{1,i+1}))` of dimension `N` over
//! `q_0`, whose phase `b + <a, s>` is coefficient `i` of `c_0 + c_1 s`: `Delta v[i]` plus the CKKS error's
//! coefficient `i`.
//!
//! **The key of the extracted ciphertexts** is the coefficient vector `(s_0, ..., s_{N-1})` of the CKKS
//! secret `s = sum_j s_j X^j`, in that order: [`rnsfhe_lwe::LweSecretKey::from_ring_key`] of the CKKS
//! [`SecretKey`](rnsfhe_ckks::SecretKey) decrypts them.
//!
//! The extraction itself is [`rnsfhe_lwe::extract_many`]; this module adds the CKKS checks (context,
//! parts, positions), the drop to `q_0` and the coefficient form (one limb's two inverse NTTs, whatever the
//! level), and runs the positions in parallel: an extracted ciphertext is `N + 1` words, so 4096 of
//! them at `N = 2^16` take 2 GiB. The dimension switches of [`crate::dimension_switch`] never hold them
//! all: the per-ciphertext method extracts and switches one position at a time, the whole-ciphertext
//! method extracts directly in dimension `n`.

use rayon::prelude::*;
use rnsfhe_ckks::{Ciphertext, CkksContext};
use rnsfhe_core::RlweCiphertext;
use rnsfhe_lwe::{extract_many, LweCiphertext};
use rnsfhe_ring::{parallel, Coeff, Ntt, Poly};

use crate::error::{PegasusError, PegasusResult};

/// Words of work per parallel task: below this, handing work to another thread costs more than it saves
/// (a thread wake-up is a few microseconds, copying `2^15` words about as long).
const TASK_WORDS: usize = 1 << 15;

/// The LWE ciphertexts of the plaintext coefficients at `positions` (in that order; repeats allowed) of
/// the 2-part CKKS ciphertext `ct` of `ctx`, at any level: each is an LWE ciphertext of dimension `N`
/// over `q_0` whose phase is the coefficient (`Delta v[i]` plus the CKKS error after slots-to-coefficients),
/// under the coefficient vector of the CKKS secret (see the [module documentation](self)). PEGASUS
/// Fig. 6 steps 1-2.
///
/// Errors: [`rnsfhe_ckks::Error::ContextMismatch`] (as [`PegasusError::Ckks`]) for a ciphertext of
/// another context; [`PegasusError::InvalidParams`] for a 3-part ciphertext (relinearize first);
/// [`PegasusError::PositionOutOfRange`] for a position `>= N`.
pub fn extract_coefficients(
    ctx: &CkksContext,
    ct: &Ciphertext,
    positions: &[usize],
) -> PegasusResult<Vec<LweCiphertext>> {
    const OP: &str = "coefficient extraction";
    if ct.fingerprint() != ctx.fingerprint() {
        return Err(rnsfhe_ckks::Error::ContextMismatch {
            object: "ciphertext",
            expected: ctx.fingerprint(),
            got: ct.fingerprint(),
        }
        .into());
    }
    check_positions(positions, ctx.n(), OP)?;
    let rlwe = at_q0(ct, OP)?;
    let chunk = positions_per_task(ctx.n());
    let parts = positions
        .par_chunks(chunk)
        .map(|c| extract_many(&rlwe, c))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(parts.into_iter().flatten().collect())
}

/// The 2-part ciphertext `ct` modulo `q_0` alone, in coefficient form (PEGASUS Section IV.B drops every
/// other modulus before extraction): the limbs above `q_0` are dropped before the inverse NTT, so only
/// one limb per part is transformed.
///
/// Errors: [`PegasusError::InvalidParams`] unless `ct` has 2 parts.
pub(crate) fn at_q0(
    ct: &Ciphertext,
    operation: &'static str,
) -> PegasusResult<RlweCiphertext<Coeff>> {
    if ct.part_count() != 2 {
        return Err(PegasusError::InvalidParams {
            what: "extracted CKKS ciphertext",
            reason: format!(
                "{operation}: it has {} parts; relinearize it first (extraction reads 2 parts)",
                ct.part_count()
            ),
        });
    }
    let parts = &ct.inner().parts;
    if parts[0].degree() < PARALLEL_PARTS_MIN_DEGREE || rayon::current_num_threads() < 2 {
        return Ok(ct.inner().drop_to_level(1)?.into_coeff());
    }
    // One task per part: the copy of its first limb and that limb's inverse NTT, side by side, instead
    // of both copies on one thread while the other waits and then the two transforms.
    let at_q0 = |p: &Poly<Ntt>| p.drop_to(1).map(Poly::into_coeff);
    let (c0, c1) = parallel::join(|| at_q0(&parts[0]), || at_q0(&parts[1]));
    Ok(RlweCiphertext::new(vec![c0?, c1?])?)
}

/// Ring degrees from which [`at_q0`] transforms the two parts on two threads: below it (the tests'
/// small rings) a transform is shorter than a fork.
const PARALLEL_PARTS_MIN_DEGREE: usize = 1 << 14;

/// Checks that every position is below the ring degree `n`.
///
/// Errors: [`PegasusError::PositionOutOfRange`] naming the first position that is not.
pub(crate) fn check_positions(
    positions: &[usize],
    n: usize,
    operation: &'static str,
) -> PegasusResult<()> {
    match positions.iter().find(|&&p| p >= n) {
        Some(&position) => Err(PegasusError::PositionOutOfRange {
            operation,
            position,
            degree: n,
        }),
        None => Ok(()),
    }
}

/// Positions per parallel task for work of `words_per_position` words each (see [`TASK_WORDS`]).
pub(crate) fn positions_per_task(words_per_position: usize) -> usize {
    (TASK_WORDS / words_per_position.max(1)).max(1)
}
