//! Keys for BFV in the HPS form (Section 4.1 "Key generation").
//!
//! * The secret key `s` (uniform ternary) and the public key `pk = (b, a) = ([-a s + e]_Q, a)` are those of
//!   `rnsfhe-core` ([`SecretKey`], [`PublicKey`]), generated over the context's [`BfvContext::rlwe`].
//! * With [`KeySwitchTechnique::Hybrid`] the relinearization and Galois keys are those of `rnsfhe-core`'s
//!   hybrid gadget over `Q ∪ P_ks` (its `KSGen(s^2, s)` and `KSGen(s(X^g), s)`, the keys of CKKS), made
//!   by the core key generator. The rest of this list is CRT key switching (the default).
//! * The relinearization key is specific to HPS: **no special primes** (Sections 3.3 and 4.1). For every
//!   residue `i` and digit `j` of the decomposition (one digit per residue for plain CRT), with
//!   `g_{i,j} = (Q/q_i)[(Q/q_i)^-1]_{q_i} w^j` (residues: `w^j mod q_i` at limb `i`, 0 elsewhere),
//!   `alpha_{i,j} <- U(R_Q)`, `e_{i,j} <- chi_e`:
//!
//! ```text
//! beta_{i,j} = [g_{i,j} s^2 - alpha_{i,j} s + e_{i,j}]_Q,      W_{i,j} = (beta_{i,j}, alpha_{i,j}).
//! ```
//!
//! HPS Section 4.1 writes `beta_i = [qtilde_i q_i^* s^2 - alpha_i s + e_i]_q`: the `j = 0` case.
//!
//! * Galois keys ([`GaloisKeys`]) use the same construction with `s(X^g)` in place of `s^2`: the general
//!   [`KeySwitchKey`] from a secret `s'` to `s` has `beta_{i,j} = [g_{i,j} s' - alpha_{i,j} s + e_{i,j}]_Q`.
//!   One generation routine and one key-switching routine ([`crate::Evaluator::relinearize`],
//!   [`crate::Evaluator::apply_galois`]) serve both.

use std::collections::BTreeMap;
use std::sync::Arc;

pub(crate) use rnsfhe_core::keys::SecretPoly;
use rnsfhe_core::{Gadget, GadgetCiphertext};
pub use rnsfhe_core::{KeySwitchKey, PublicKey, SecretKey};
use rnsfhe_math::sampling::Csprng;
use rnsfhe_ring::{Coeff, GaloisElement, GaloisGroup, Ntt, Poly, RnsSignedDigits};

use crate::error::{BfvError, BfvResult};
use crate::galois::galois_elements;
use crate::params::{BfvContext, KeySwitchTechnique};

/// `s` in NTT form over `Q`, from the key's signed coefficients (zeroized on drop).
pub(crate) fn secret_ntt(ctx: &BfvContext, sk: &SecretKey) -> BfvResult<SecretPoly> {
    ctx.check_rlwe_fingerprint(sk.fingerprint(), "secret key")?;
    Ok(SecretPoly::new(
        Poly::<Coeff>::from_i64(ctx.q_basis(), sk.coefficients())?.into_ntt(),
    ))
}

/// The HPS relinearization key (Sections 3.3 and 4.1): the [`KeySwitchKey`] from `s^2` to `s` (a gadget
/// ciphertext of `s^2` for the context's relinearization digits), one pair
/// `W_{i,j} = (beta_{i,j}, alpha_{i,j})` in NTT form over `Q` per residue `i` and digit `j`, ordered
/// `i * digits + j`.
#[derive(Clone, Debug, PartialEq)]
pub struct RelinKey {
    pub(crate) fingerprint: u64,
    pub(crate) key: KeySwitchKey,
}

impl RelinKey {
    /// The pairs `(beta_{i,j}, alpha_{i,j})`.
    pub fn components(&self) -> &[(Poly<Ntt>, Poly<Ntt>)] {
        self.key.rows()
    }

    /// The underlying key-switching key from `s^2` to `s`.
    pub fn key(&self) -> &KeySwitchKey {
        &self.key
    }

    /// Fingerprint of the BFV context the key belongs to.
    pub fn fingerprint(&self) -> u64 {
        self.fingerprint
    }
}

/// Galois keys: for each Galois element `g` generated, the [`KeySwitchKey`] from `s(X^g)` to `s` (HPS CRT
/// key switching, Sections 3.3 and 4.1, applied to `s(X^g)` instead of `s^2`). Row rotation by `r` needs
/// the element `3^r mod 2N`, the column swap `2N - 1` (see [`crate::galois`]). Made by
/// [`KeyGenerator::galois_keys`] or [`KeyGenerator::galois_keys_for_elements`].
#[derive(Clone, Debug, PartialEq)]
pub struct GaloisKeys {
    pub(crate) fingerprint: u64,
    /// The context's Galois group (to map rotation steps to elements).
    pub(crate) group: GaloisGroup,
    pub(crate) keys: BTreeMap<usize, KeySwitchKey>,
}

impl GaloisKeys {
    /// The key of Galois element `element` (its value, [`GaloisElement::value`]), if generated.
    pub fn get(&self, element: usize) -> Option<&KeySwitchKey> {
        self.keys.get(&element)
    }

    /// Whether a key for Galois element `element` was generated.
    pub fn contains(&self, element: usize) -> bool {
        self.keys.contains_key(&element)
    }

    /// Whether the row rotation by `step` is available: its element has a key, or it is the identity
    /// (`step` a multiple of `N/2`), which needs none.
    pub fn has_row_step(&self, step: i64) -> bool {
        let g = self.group.element_of_step(step);
        g.is_identity() || self.contains(g.value())
    }

    /// The Galois elements that have keys, in increasing order.
    pub fn elements(&self) -> Vec<usize> {
        self.keys.keys().copied().collect()
    }

    /// Number of keys.
    pub fn len(&self) -> usize {
        self.keys.len()
    }

    /// Whether no key was generated.
    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }

    /// Whether the column swap (element `2N - 1`) is available.
    pub fn has_column_swap(&self) -> bool {
        self.contains(self.group.conjugation().value())
    }

    /// Fingerprint of the BFV context the keys belong to.
    pub fn fingerprint(&self) -> u64 {
        self.fingerprint
    }

    /// The key of `element`, or [`BfvError::MissingGaloisKey`] naming the operation, the element and the
    /// rotation `step` (if the caller asked for a rotation).
    pub(crate) fn require(
        &self,
        operation: &'static str,
        element: GaloisElement,
        step: Option<i64>,
    ) -> BfvResult<&KeySwitchKey> {
        self.keys
            .get(&element.value())
            .ok_or_else(|| BfvError::MissingGaloisKey {
                operation,
                element: element.value(),
                step,
                available: self.elements(),
            })
    }
}

/// The HPS key-switching key from `target = s'` (NTT form over `Q`) to `s` (Sections 3.3 and 4.1): the
/// gadget ciphertext of `s'` for the CRT/digit gadget `digits` (the context's relinearization or Galois
/// decomposition), whose entries `g_{i,j}` are `w^j mod q_i` on limb `i` and 0 elsewhere, so that
/// `beta_{i,j} = [g_{i,j} s' - alpha_{i,j} s + e_{i,j}]_Q`. The `alpha_{i,j}` are expanded in order from
/// one fresh public seed, so the key travels as its `beta` polynomials and 32 bytes.
fn switching_key(
    ctx: &BfvContext,
    target: &SecretPoly,
    s: &SecretPoly,
    digits: &RnsSignedDigits,
    rng: &mut Csprng,
) -> BfvResult<KeySwitchKey> {
    let k = ctx.q_basis().len();
    let constants = (0..k)
        .flat_map(|i| (0..digits.count()).map(move |j| digits.gadget_residues(i, j, k)))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(GadgetCiphertext::encrypt(
        ctx.rlwe().fingerprint(),
        Gadget::of_digits(digits),
        ctx.rlwe().gaussian(),
        s.get(),
        target.get(),
        &constants,
        rng,
    )?)
}

/// Samples the keys of a [`BfvContext`] from one secret key (HPS Section 4.1 "Key generation").
#[derive(Debug)]
pub struct KeyGenerator {
    ctx: Arc<BfvContext>,
    inner: rnsfhe_core::KeyGenerator,
}

impl KeyGenerator {
    /// Samples a fresh uniform ternary secret key `s <- chi_k`.
    ///
    /// Errors: sampler errors ([`crate::BfvError::Core`]).
    pub fn new(ctx: &Arc<BfvContext>, rng: &mut Csprng) -> BfvResult<Self> {
        Ok(Self {
            ctx: Arc::clone(ctx),
            inner: rnsfhe_core::KeyGenerator::new(ctx.rlwe(), rng)?,
        })
    }

    /// A generator for an existing secret key.
    ///
    /// Errors: [`crate::BfvError::Core`] (context mismatch) if the key belongs to other parameters.
    pub fn from_secret_key(ctx: &Arc<BfvContext>, sk: SecretKey) -> BfvResult<Self> {
        Ok(Self {
            ctx: Arc::clone(ctx),
            inner: rnsfhe_core::KeyGenerator::from_secret_key(ctx.rlwe(), sk)?,
        })
    }

    /// The context.
    pub fn context(&self) -> &Arc<BfvContext> {
        &self.ctx
    }

    /// The secret key.
    pub fn secret_key(&self) -> &SecretKey {
        self.inner.secret_key()
    }

    /// The public key `pk = ([-a s + e], a)` (HPS Section 4.1): over `Q` and one more prime `p_0` (the
    /// first special prime with hybrid key switching, the first auxiliary prime with CRT key switching)
    /// where the security check counts it ([`BfvContext::extended_public_key`]): its
    /// encryptions are divided by `p_0`, so their error is the rounding's rather than the key's
    /// ([`rnsfhe_core::KeyGenerator::public_key`]); over `Q` otherwise, as
    /// [`KeyGenerator::public_key_over_q`] ([`PublicKey::is_extended`] tells them apart).
    ///
    /// Errors: sampler errors.
    pub fn public_key(&self, rng: &mut Csprng) -> BfvResult<PublicKey> {
        if self.ctx.extended_public_key() {
            Ok(self.inner.public_key(rng)?)
        } else {
            self.public_key_over_q(rng)
        }
    }

    /// The extended public key over `Q ∪ {p_0}` (see [`KeyGenerator::public_key`]), or an error where
    /// the context makes keys over `Q` only.
    ///
    /// Errors: [`BfvError::Insecure`] (with `log2(Q p_0)`) when `Q p_0` exceeds the HE Standard bound;
    /// sampler errors.
    pub fn public_key_extended(&self, rng: &mut Csprng) -> BfvResult<PublicKey> {
        self.ctx.check_extended_public_key()?;
        Ok(self.inner.public_key(rng)?)
    }

    /// The public key over `Q` only, as HPS Section 4.1 writes it: faster encryption, a fresh error of
    /// `sigma sqrt(2N/3 + 1 + h)` per coefficient.
    ///
    /// Errors: sampler errors.
    pub fn public_key_over_q(&self, rng: &mut Csprng) -> BfvResult<PublicKey> {
        Ok(self.inner.public_key_over_q(rng)?)
    }

    /// The HPS relinearization key: `beta_{i,j} = [g_{i,j} s^2 - alpha_{i,j} s + e_{i,j}]_Q` for every
    /// residue `i` and digit `j` (Sections 3.3 and 4.1; see the module documentation).
    ///
    /// Errors: sampler errors.
    pub fn relin_key(&self, rng: &mut Csprng) -> BfvResult<RelinKey> {
        let ctx = &self.ctx;
        let key = match ctx.key_switching() {
            KeySwitchTechnique::Crt => {
                let s = secret_ntt(ctx, self.secret_key())?;
                let s2 = SecretPoly::new(s.get().mul(s.get())?);
                switching_key(ctx, &s2, &s, ctx.relin_digits(), rng)?
            }
            KeySwitchTechnique::Hybrid { .. } => self.inner.relin_key(rng)?.into_key(),
        };
        Ok(RelinKey {
            fingerprint: ctx.fingerprint(),
            key,
        })
    }

    /// Galois keys for row rotations by each of `steps` (Galois elements `3^step mod 2N`, negative steps
    /// allowed, see [`crate::galois`]) and, if `include_column_swap`, for the column swap (`2N - 1`):
    /// for each distinct element `g` other than the identity, the key-switching key
    /// `beta_{i,j} = [g_{i,j} s(X^g) - alpha_{i,j} s + e_{i,j}]_Q` (the HPS relinearization key of
    /// Sections 3.3 and 4.1 with `s(X^g)` in place of `s^2`, over the Galois decomposition
    /// [`crate::BfvParams::galois_base_log`]).
    ///
    /// Errors: sampler errors.
    pub fn galois_keys(
        &self,
        steps: &[i64],
        include_column_swap: bool,
        rng: &mut Csprng,
    ) -> BfvResult<GaloisKeys> {
        let elements = galois_elements(self.ctx.galois_group(), steps, include_column_swap);
        self.galois_keys_for_elements(&elements, rng)
    }

    /// Galois keys for arbitrary Galois elements (automorphisms `X -> X^g`, made by
    /// [`GaloisElement::new`] or the context's [`GaloisGroup`]); duplicates are generated once, the
    /// identity `1` is skipped (it needs no key). See [`KeyGenerator::galois_keys`].
    ///
    /// Errors: a ring error ([`BfvError::Ring`]) for an element of another ring degree; sampler errors.
    pub fn galois_keys_for_elements(
        &self,
        elements: &[GaloisElement],
        rng: &mut Csprng,
    ) -> BfvResult<GaloisKeys> {
        let ctx = &self.ctx;
        for &g in elements {
            g.check_degree(ctx.n(), "Galois key generation")?;
        }
        let keys = match ctx.key_switching() {
            KeySwitchTechnique::Crt => {
                let s = secret_ntt(ctx, self.secret_key())?;
                let mut keys = BTreeMap::new();
                for &g in elements {
                    if g.is_identity() || keys.contains_key(&g.value()) {
                        continue;
                    }
                    let s_g = SecretPoly::new(s.get().automorphism(g)?);
                    keys.insert(
                        g.value(),
                        switching_key(ctx, &s_g, &s, ctx.galois_digits(), rng)?,
                    );
                }
                keys
            }
            // The keys of rnsfhe-core's hybrid gadget, generated side by side (one substream each).
            KeySwitchTechnique::Hybrid { .. } => {
                let elements: Vec<GaloisElement> = elements
                    .iter()
                    .copied()
                    .filter(|g| !g.is_identity())
                    .collect();
                self.inner.galois_keys(&elements, rng)?.into_keys()
            }
        };
        Ok(GaloisKeys {
            fingerprint: ctx.fingerprint(),
            group: *ctx.galois_group(),
            keys,
        })
    }
}
