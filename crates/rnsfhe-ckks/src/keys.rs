//! Keys for CKKS: re-exports of the RLWE keys of `rnsfhe-core` and a [`KeyGenerator`] that produces the
//! secret, public, relinearization and Galois keys of a [`CkksContext`] (RNS-CKKS Section 4, `KeyGen`,
//! `KSGen`; rotation and conjugation keys for the slot permutations of Section 4 / [`crate::encoder`]).

use std::sync::Arc;

pub use rnsfhe_core::{GaloisKeys, KeySwitchKey, PublicKey, RelinKey, SecretKey};
use rnsfhe_math::sampling::{Csprng, Substreams};
use rnsfhe_ring::{parallel, GaloisGroup};

use crate::context::CkksContext;
use crate::error::Result;

/// All keys of one secret: what a client generates and what it hands to a server (everything but the
/// secret key).
#[derive(Clone, Debug)]
pub struct KeySet {
    /// The secret key (zeroized on drop, never printed).
    pub secret: SecretKey,
    /// The public encryption key.
    pub public: PublicKey,
    /// The relinearization key `KSGen(s^2, s)`.
    pub relin: RelinKey,
    /// Galois keys for the requested rotation steps (and conjugation if requested).
    pub galois: GaloisKeys,
}

/// Samples the keys of a [`CkksContext`] from one secret key.
#[derive(Debug)]
pub struct KeyGenerator {
    ctx: Arc<CkksContext>,
    inner: rnsfhe_core::KeyGenerator,
}

impl KeyGenerator {
    /// Samples a fresh secret key from the context's secret distribution.
    ///
    /// Errors: sampler errors ([`crate::Error::Core`]).
    pub fn new(ctx: &Arc<CkksContext>, rng: &mut Csprng) -> Result<Self> {
        Ok(Self {
            ctx: Arc::clone(ctx),
            inner: rnsfhe_core::KeyGenerator::new(ctx.rlwe(), rng)?,
        })
    }

    /// A generator for an existing secret key.
    ///
    /// Errors: [`crate::Error::Core`] (context mismatch) if the key belongs to other parameters.
    pub fn from_secret_key(ctx: &Arc<CkksContext>, sk: SecretKey) -> Result<Self> {
        Ok(Self {
            ctx: Arc::clone(ctx),
            inner: rnsfhe_core::KeyGenerator::from_secret_key(ctx.rlwe(), sk)?,
        })
    }

    /// The context.
    pub fn context(&self) -> &Arc<CkksContext> {
        &self.ctx
    }

    /// The secret key.
    pub fn secret_key(&self) -> &SecretKey {
        self.inner.secret_key()
    }

    /// A public key (RNS-CKKS `KeyGen`) over `Q` and the first special prime: its encryptions are
    /// divided by that prime, so their error is the rounding's (about the secret-key encryption's)
    /// rather than the key's, at about 1.5 times the encryption time
    /// ([`rnsfhe_core::KeyGenerator::public_key`]).
    ///
    /// Errors: sampler errors.
    pub fn public_key(&self, rng: &mut Csprng) -> Result<PublicKey> {
        Ok(self.inner.public_key(rng)?)
    }

    /// A public key over `Q` only, as RNS-CKKS `KeyGen` writes it: faster encryption, a fresh error of
    /// `sigma sqrt(2N/3 + 1 + h)` per coefficient (about 4 bits less precision at `N = 2^16`).
    ///
    /// Errors: sampler errors.
    pub fn public_key_over_q(&self, rng: &mut Csprng) -> Result<PublicKey> {
        Ok(self.inner.public_key_over_q(rng)?)
    }

    /// The relinearization key (`evk = KSGen(s^2, s)`).
    ///
    /// Errors: sampler errors.
    pub fn relin_key(&self, rng: &mut Csprng) -> Result<RelinKey> {
        Ok(self.inner.relin_key(rng)?)
    }

    /// Galois keys for slot rotations by each of `steps` (left by `r` for `r > 0`; Galois element
    /// `5^r mod 2N`) and, if `conjugate`, for complex conjugation (`2N - 1`).
    ///
    /// Errors: sampler errors.
    pub fn galois_keys(
        &self,
        steps: &[i64],
        conjugate: bool,
        rng: &mut Csprng,
    ) -> Result<GaloisKeys> {
        let group = self.ctx.galois_group();
        Ok(self
            .inner
            .galois_keys_for_steps(group, steps, conjugate, rng)?)
    }

    /// Galois keys for the rotations by `steps`, conjugation if `conjugate`, and the automorphisms
    /// `X -> X^k` for each `k` of `elements` (for instance [`crate::mod_raise::subring_trace_elements`]).
    ///
    /// Errors: [`crate::Error::Core`] for an element that is not odd or not below `2N`.
    pub fn galois_keys_with_elements(
        &self,
        steps: &[i64],
        conjugate: bool,
        elements: &[usize],
        rng: &mut Csprng,
    ) -> Result<GaloisKeys> {
        let group = self.ctx.galois_group();
        let mut all = group.elements_of_steps(steps);
        if conjugate {
            all.push(group.conjugation());
        }
        for &k in elements {
            all.push(self.ctx.rlwe().galois_element(k)?);
        }
        Ok(self.inner.galois_keys(&all, rng)?)
    }

    /// The rotation steps `1, 2, 4, ..., slots/2` that [`crate::Evaluator::sum_slots`] and
    /// [`crate::Evaluator::partial_sums`] use (RNS-CKKS Section 5.2).
    pub fn power_of_two_steps(slots: usize) -> Vec<i64> {
        GaloisGroup::power_of_two_steps(slots).collect()
    }

    /// The secret key, a public key, the relinearization key and Galois keys for `steps` (+ conjugation).
    /// The three are independent, so they are generated side by side, each from its own stream of a
    /// [`Substreams`] drawn from `rng` (the same keys on any number of threads).
    ///
    /// Errors: sampler errors.
    pub fn generate_all(&self, steps: &[i64], conjugate: bool, rng: &mut Csprng) -> Result<KeySet> {
        let streams = Substreams::new(rng);
        // Three independent keys side by side, in one region of active waiting (between their many
        // parallel sections the pool's threads would otherwise sleep and be woken again).
        let words = self.ctx.rlwe().n() * self.ctx.rlwe().extended_basis().len();
        let (public, (relin, galois)) = rnsfhe_core::long_operation(words, || {
            parallel::join(
                || self.public_key(&mut streams.stream(0)),
                || {
                    parallel::join(
                        || self.relin_key(&mut streams.stream(1)),
                        || self.galois_keys(steps, conjugate, &mut streams.stream(2)),
                    )
                },
            )
        });
        Ok(KeySet {
            secret: self.secret_key().clone(),
            public: public?,
            relin: relin?,
            galois: galois?,
        })
    }
}
