//! Blind rotation: `X^(b~ + <a~, s>)` times a table polynomial, computed under encryptions of the LWE
//! key in the ring of the look-up tables (PEGASUS Fig. 2 steps 3-6), by one of three algorithms
//! ([`BlindRotation`]).
//!
//! **Ternary** (PEGASUS Fig. 2, after Micciancio and Polyakov's ternary-key variant of FHEW). For an
//! LWE ciphertext `(b~, a~)` modulo `2n` (the ring degree `n`), the accumulator starts as the trivial
//! encryption of `f X^b~` and absorbs one key coefficient at a time: with `EK_{j,0} = RGSW(I(s_j >= 0))`
//! and `EK_{j,1} = RGSW(I(s_j <= 0))`,
//!
//! ```text
//! t_j      = ((X^(a~_j) - 1) AC_j) ⊙ EK_{j,0} + AC_j,
//! AC_{j+1} = ((X^(-a~_j) - 1) t_j) ⊙ EK_{j,1} + t_j,
//! ```
//!
//! which multiplies the accumulator by `X^(a~_j s_j)` for `s_j` in `{-1, 0, 1}` (PEGASUS Appendix B, proof
//! of Theorem 1). After `n_lwe` steps it encrypts `f X^(b~ + <a~, s>)`.
//!
//! Run as written, a step is two external products, each a ModUp (forward NTTs of the digits of both
//! parts) and a ModDown (inverse NTTs of both outputs): 16 NTTs of `n` points per nonzero `a~_j` at one
//! prime `q_0` and one special prime `q'`. The step is run instead in the form of OpenFHE's GINX
//! accumulator for ternary keys, from the same keys: with `RGSW(I(s_j = 1)) = G - EK_{j,1}` and
//! `RGSW(I(s_j = -1)) = G - EK_{j,0}` (`G` the gadget matrix, a noiseless `RGSW(1)`, whose product with
//! any `AC` is `AC` exactly),
//!
//! ```text
//! AC_{j+1} = AC_j + (X^a - 1) (AC_j ⊙ RGSW(I(s_j = 1))) + (X^-a - 1) (AC_j ⊙ RGSW(I(s_j = -1)))
//!          = AC_j (X^a + X^-a - 1) + (1 - X^a) (AC_j ⊙ EK_{j,1}) + (1 - X^-a) (AC_j ⊙ EK_{j,0})
//! ```
//!
//! (`a = a~_j`; check `s_j = 1, 0, -1`: `X^a`, `1`, `X^-a`). Both products read the digits of the same
//! `AC_j`: one ModUp serves both multiply-accumulates, the factors `1 - X^(± a)` are applied pointwise in
//! the NTT domain over `q_0 ∪ q'` (their NTT forms, with Shoup quotients, are gathered from tables of
//! `psi^t + 1`, [`rnsfhe_ring::NttMonomialFactors`], no transform and no division), and one ModDown
//! finishes the sum ([`rnsfhe_core::RlweContext::external_product_combination_shoup`]): 8 NTTs per step
//! instead of 16. Factors, digits and keys meet in one pass per limb, `sum_k sum_j (f_k d_j) w_{k,j}`
//! with the products `f_k d_j` as Shoup products and one reduction per output coefficient
//! ([`rnsfhe_math::simd::sum_of_factored_products`]), instead of two reduced multiply-accumulates, two
//! stored products and a combination pass (`docs/lwe.md` has the costs). The first term is two signed
//! rotations in coefficient form, added in place ([`Poly::add_mul_symmetric_monomials`]). The error of a step is `(1 - X^a) e_1 + (1 -
//! X^-a) e_0` (the two products' key errors, each variance doubled by its factor) plus one ModDown
//! rounding instead of two ([`BlindRotationKey::added_variance`]).
//!
//! **Binary** (FHEW / CGGI): `AC_{j+1} = ((X^(a~_j) - 1) AC_j) ⊙ RGSW(s_j) + AC_j` for `s_j` in `{0, 1}`.
//!
//! **LMKCDEY** (Lee, Micciancio, Kim, Choi, Deryabin, Eom and Yoo, "Efficient FHEW bootstrapping with
//! small evaluation keys, and applications to threshold homomorphic encryption", Eurocrypt 2023, ePrint
//! 2022/198, Algorithm 3): any small key, one `RGSW(X^(s_j))` per coefficient and a few automorphism
//! keys. Every odd `a` modulo `2n` is `± g^l` for the generator `g = 5` of order `n/2` (the ring's
//! [`GaloisGroup`]), so `<a, s> = sum_l g^l (S_l^+ - S_l^-)` with `S_l^± = sum of s_j over a_j = ± g^l`.
//! Horner's rule evaluates that sum in the exponent: multiplying the accumulator by `RGSW(X^(s_j))` adds
//! `s_j`, and the automorphism `psi_g: X -> X^g` (a key switch) multiplies the whole exponent by `g`:
//!
//! ```text
//! AC = (f(X^-g) X^(-g b), 0)
//! for l = n/2 - 1 .. 1:  AC = AC ⊙ RGSW(X^(s_j)) for every a_j = -g^l;  AC = psi_g(AC)
//! AC = AC ⊙ RGSW(X^(s_j)) for every a_j = -1;  AC = psi_(-g)(AC)
//! for l = n/2 - 1 .. 1:  AC = AC ⊙ RGSW(X^(s_j)) for every a_j = g^l;   AC = psi_g(AC)
//! AC = AC ⊙ RGSW(X^(s_j)) for every a_j = 1
//! ```
//!
//! The exponent ends as `g^(n/2 - 1) (-g) sum_l g^l S_l^- + sum_l g^l S_l^+ = <a, s>` (`g^(n/2) = 1`), and
//! the automorphisms compose to `X -> X^(-g^-1)`, which turns the start `f(X^-g) X^(-g b)` into `f X^b`.
//! Consecutive `psi_g` over empty classes merge into one `psi_(g^k)`, `k <= w` (the **window**, keys for
//! `g, g^2, .., g^w` and `-g`), so a rotation costs `n_lwe` external products and about (number of
//! non-empty classes) + `n / w` automorphisms ([`crate::BlindRotationKey::generate_lmkcdey`]).
//! Automorphisms before the first external product act on a noiseless `(c_0, 0)` and are plain
//! permutations. The mask must consist of units of `Z_2n` (odd values): [`LweCiphertext::switch_modulus_odd_mask`]
//! rounds to odd values when switching to `2n`, at the cost of a larger rounding error (its
//! documentation); zeros are accepted and skipped (`X^(0 s_j) = 1`).
//!
//! The accumulator stays in coefficient form, where monomial products and automorphisms are signed
//! permutations; each external product is one sum of two hybrid gadget products
//! ([`rnsfhe_core::RlweContext::external_product`]; the ternary step one combination of two, as above)
//! and each automorphism one gadget product
//! ([`rnsfhe_core::RlweContext::apply_galois_coeff`]).

use std::sync::Arc;

use rnsfhe_core::{
    GaloisElement, GaloisGroup, GaloisKeys, KeyGenerator, RgswCiphertext, RlweCiphertext,
    RlweContext, SecretKey,
};
use rnsfhe_math::sampling::Csprng;
use rnsfhe_ring::{Coeff, NttMonomialFactors, NttMonomials, NttShoupPoly, Poly};
use zeroize::Zeroize;

use crate::ciphertext::LweCiphertext;
use crate::dimension::LweDimension;
use crate::error::{LweError, LweResult};
use crate::secret::{LweSecretDistribution, LweSecretKey};

/// The blind-rotation algorithm, chosen with the key (OpenFHE's explicit choice of technique).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum BlindRotation {
    /// PEGASUS Fig. 2 (Micciancio-Polyakov's ternary variant): `RGSW(I(s_j >= 0))` and
    /// `RGSW(I(s_j <= 0))` per coefficient, two external products each, run as one combined product
    /// (one ModUp, one ModDown; see the module documentation); any ternary LWE key.
    #[default]
    Ternary,
    /// The binary-key form (FHEW / CGGI): `RGSW(s_j)` per coefficient and one external product
    /// `AC + ((X^(a_j) - 1) AC) ⊙ RGSW(s_j)`: as many NTTs as the combined ternary step and half its
    /// multiply-accumulates (half the work of PEGASUS's two-product form, Section VI.B: "the
    /// performance of our LUT evaluation would be accelerated by 2x"); the LWE key must be binary.
    Binary,
    /// The automorphism-based algorithm of Lee et al. (Eurocrypt 2023, Algorithm 3; see the module
    /// documentation): `RGSW(X^(s_j))` per coefficient (one external product each) and automorphism
    /// keys for `g, .., g^w, -g`; any ternary or binary LWE key. The mask must be odd: look-up tables
    /// switch to `2n` with [`LweCiphertext::switch_modulus_odd_mask`].
    Lmkcdey,
}

/// The window `w` of [`BlindRotation::Lmkcdey`] keys made by [`BlindRotationKey::generate_with`]: up to
/// `w` automorphisms `psi_g` over empty classes merge into one. At `n = 2^12`, `n_lwe = 1024` a rotation
/// takes about 990 automorphisms with `w = 10` (the paper's and OpenFHE's choice) and 915 with `w = 32`,
/// for 33 automorphism keys (about 4 MiB beside 256 MiB of RGSW keys).
pub const LMKCDEY_DEFAULT_WINDOW: usize = 32;

/// The generator `g` of the automorphism group of [`BlindRotation::Lmkcdey`] (5, as in the paper).
const LMKCDEY_GENERATOR: usize = 5;

/// The automorphism keys of [`BlindRotation::Lmkcdey`] and the discrete logarithms of the mask values.
#[derive(Clone, Debug)]
struct Automorphisms {
    /// Keys for `g^1, .., g^w` and `-g` under the ring secret.
    keys: GaloisKeys,
    /// The window `w`.
    window: usize,
    /// `g^k` at index `k - 1`, for `k <= w`.
    powers: Vec<GaloisElement>,
    /// `-g`.
    minus_g: GaloisElement,
    /// For every odd `a < 2n`, at index `a / 2`: its class `l` if `a = g^l`, `n/2 + l` if `a = -g^l`.
    class: Vec<u32>,
}

impl Automorphisms {
    /// The Galois elements of the window `w`: `g, g^2, .., g^w` and `-g` (`g = 5`).
    ///
    /// Errors: [`LweError::InvalidParams`] unless `1 <= window < n/2`.
    fn elements(n: usize, window: usize) -> LweResult<Vec<GaloisElement>> {
        if window == 0 || window >= n / 2 {
            return Err(LweError::InvalidParams {
                what: "LMKCDEY window",
                reason: format!(
                    "{window} is not in [1, n/2) for the ring degree n = {n} (the default is \
                     {LMKCDEY_DEFAULT_WINDOW})"
                ),
            });
        }
        let group = GaloisGroup::new(n, LMKCDEY_GENERATOR)?;
        let mut elements: Vec<GaloisElement> = (1..=window as i64)
            .map(|k| group.element_of_step(k))
            .collect();
        elements.push(group.element(2 * n - LMKCDEY_GENERATOR)?);
        Ok(elements)
    }

    /// The automorphisms of the window `window` with their keys `keys`, which must be those of
    /// [`Automorphisms::elements`] exactly, and the class table of the odd residues.
    ///
    /// Errors: [`LweError::InvalidParams`] for a window out of range or keys of other elements.
    fn new(n: usize, window: usize, keys: GaloisKeys) -> LweResult<Self> {
        let mut elements = Self::elements(n, window)?;
        let minus_g = elements.pop().ok_or(LweError::InvalidParams {
            what: "LMKCDEY window",
            reason: "no automorphisms".into(),
        })?;
        let mut expected: Vec<usize> = elements.iter().map(|e| e.value()).collect();
        expected.push(minus_g.value());
        expected.sort_unstable();
        if keys.elements() != expected {
            return Err(LweError::InvalidParams {
                what: "LMKCDEY automorphism keys",
                reason: format!(
                    "keys of the Galois elements {:?}; the window {window} needs {expected:?} \
                     (g^1 .. g^w and -g, g = {LMKCDEY_GENERATOR})",
                    keys.elements()
                ),
            });
        }
        let group = GaloisGroup::new(n, LMKCDEY_GENERATOR)?;
        let mut class = vec![0u32; n];
        for (l, e) in group.elements().enumerate() {
            class[e.value() / 2] = l as u32;
            class[(2 * n - e.value()) / 2] = (n / 2 + l) as u32;
        }
        Ok(Self {
            keys,
            window,
            powers: elements,
            minus_g,
            class,
        })
    }
}

/// One operation of an LMKCDEY rotation.
#[derive(Clone, Copy, Debug)]
enum Step {
    /// The external product with `RGSW(X^(s_j))`.
    Product(usize),
    /// An automorphism.
    Automorphism(GaloisElement),
}

/// The variance one external product of the accumulator ring `ctx` adds, as its two terms `(key, rounding)`:
/// the key errors through the special modulus, `n q_0^2 sigma^2 / (6 q'^2)` for an input of uniform
/// residues, and ModDown's roundings, `(1 + ||s||^2) / 12` (see [`BlindRotationKey::added_variance`]).
pub(crate) fn external_product_variance(ctx: &RlweContext) -> (f64, f64) {
    let params = ctx.params();
    let n = ctx.n() as f64;
    let q0 = ctx.chain().moduli()[0].value() as f64;
    let special = ctx.special_basis().moduli()[0].value() as f64;
    let norm_sq = LweSecretDistribution::from(params.secret).expected_norm_sq(ctx.n());
    let key = n * q0 * q0 * params.sigma * params.sigma / (6.0 * special * special);
    (key, (1.0 + norm_sq) / 12.0)
}

/// The factor tables of a [`BlindRotation::Ternary`] key's steps: `NTT(X^k + 1)` with Shoup quotients
/// over `q_0 ∪ q'`, the basis of the accumulator's gadget products before ModDown (`None` for the other
/// algorithms).
fn ternary_monomials(
    ctx: &RlweContext,
    algorithm: BlindRotation,
) -> LweResult<Option<Arc<NttMonomialFactors>>> {
    Ok(match algorithm {
        BlindRotation::Ternary => Some(Arc::new(
            NttMonomials::new(&ctx.extended_basis_at(1)?).shoup_factors(1),
        )),
        _ => None,
    })
}

/// The blind-rotation (evaluation) key of PEGASUS Fig. 2 and Fig. 6 under the ring secret of the
/// look-up-table context: per coefficient `s_j` of the LWE secret, `RGSW(I(s_j >= 0))` and
/// `RGSW(I(s_j <= 0))` (`EK_{j,0}`, `EK_{j,1}`; [`BlindRotation::Ternary`]), `RGSW(s_j)`
/// ([`BlindRotation::Binary`]) or `RGSW(X^(s_j))` with automorphism keys ([`BlindRotation::Lmkcdey`]).
#[derive(Clone, Debug)]
pub struct BlindRotationKey {
    ctx: Arc<RlweContext>,
    lwe_dimension: LweDimension,
    algorithm: BlindRotation,
    /// Per LWE coefficient, the RGSW ciphertexts its step multiplies by, in order.
    keys: Vec<Vec<RgswCiphertext>>,
    /// The automorphism keys of [`BlindRotation::Lmkcdey`].
    automorphisms: Option<Automorphisms>,
    /// For [`BlindRotation::Ternary`], the tables of `NTT(X^k + 1)` over `q_0 ∪ q'` with Shoup quotients
    /// (the factors `1 - X^(± a)` of a step).
    monomials: Option<Arc<NttMonomialFactors>>,
}

impl BlindRotationKey {
    /// The ternary key of PEGASUS Fig. 2 ([`BlindRotationKey::generate_with`] and
    /// [`BlindRotation::Ternary`]).
    ///
    /// Errors: as [`BlindRotationKey::generate_with`].
    pub fn generate(
        ctx: &Arc<RlweContext>,
        ring_sk: &SecretKey,
        lwe_sk: &LweSecretKey,
        rng: &mut Csprng,
    ) -> LweResult<Self> {
        Self::generate_with(BlindRotation::Ternary, ctx, ring_sk, lwe_sk, rng)
    }

    /// Encrypts the key material `algorithm` needs for every coefficient of `lwe_sk` under `ring_sk` (a
    /// key of `ctx`, the ring of degree `n` over `q_0` with the special modulus `q'` and the error width
    /// `sigma_lut` of PEGASUS Table IV); [`BlindRotation::Lmkcdey`] with the window
    /// [`LMKCDEY_DEFAULT_WINDOW`] ([`BlindRotationKey::generate_lmkcdey`]).
    ///
    /// Errors: [`LweError::InvalidParams`] for [`BlindRotation::Binary`] with a key that is not binary;
    /// [`LweError::Core`] for a ring key of another context; as
    /// [`BlindRotationKey::generate_lmkcdey`]; sampler errors.
    pub fn generate_with(
        algorithm: BlindRotation,
        ctx: &Arc<RlweContext>,
        ring_sk: &SecretKey,
        lwe_sk: &LweSecretKey,
        rng: &mut Csprng,
    ) -> LweResult<Self> {
        if algorithm == BlindRotation::Lmkcdey {
            return Self::generate_lmkcdey(ctx, ring_sk, lwe_sk, LMKCDEY_DEFAULT_WINDOW, rng);
        }
        let coeffs = lwe_sk.coefficients();
        if algorithm == BlindRotation::Binary && coeffs.iter().any(|&s| !(0..=1).contains(&s)) {
            return Err(LweError::InvalidParams {
                what: "LWE secret key",
                reason:
                    "binary blind rotation needs a key in {0, 1}^n (LweSecretDistribution::UniformBinary)"
                        .into(),
            });
        }
        let keys = coeffs
            .iter()
            .map(|&s| {
                let bits = match algorithm {
                    // I(s >= 0) and I(s <= 0) for s in {-1, 0, 1}, without a branch on the key.
                    BlindRotation::Ternary => {
                        vec![(s + 1) >> 1 | (s + 1) & 1, (1 - s) >> 1 | (1 - s) & 1]
                    }
                    _ => vec![s],
                };
                bits.into_iter()
                    .map(|bit| Ok(RgswCiphertext::encrypt_scalar(ctx, ring_sk, bit, rng)?))
                    .collect::<LweResult<Vec<_>>>()
            })
            .collect::<LweResult<Vec<_>>>()?;
        Ok(Self {
            ctx: Arc::clone(ctx),
            lwe_dimension: lwe_sk.dimension(),
            algorithm,
            keys,
            automorphisms: None,
            monomials: ternary_monomials(ctx, algorithm)?,
        })
    }

    /// The key of [`BlindRotation::Lmkcdey`] with the window `window` (`w`): `RGSW(X^(s_j))` for every
    /// coefficient of `lwe_sk` (ternary or binary) and the Galois keys of `g, g^2, .., g^w` and `-g`
    /// (`g = 5`) under `ring_sk`. A larger window merges longer runs of automorphisms at the cost of one
    /// Galois key (a single gadget row over `q_0 q'`) each; see [`LMKCDEY_DEFAULT_WINDOW`].
    ///
    /// Errors: [`LweError::InvalidParams`] unless `1 <= window < n/2` (and `n >= 4`);
    /// [`LweError::Core`] for a ring key of another context; sampler errors.
    pub fn generate_lmkcdey(
        ctx: &Arc<RlweContext>,
        ring_sk: &SecretKey,
        lwe_sk: &LweSecretKey,
        window: usize,
        rng: &mut Csprng,
    ) -> LweResult<Self> {
        let n = ctx.n();
        let elements = Automorphisms::elements(n, window)?;
        let mut monomial = vec![0i64; n];
        let keys = lwe_sk
            .coefficients()
            .iter()
            .map(|&s| {
                // X^s for s in {-1, 0, 1} (X^-1 = -X^(n-1)), without a branch on the key.
                let square = s * s;
                monomial[0] = 1 - square;
                monomial[1] = (square + s) / 2;
                monomial[n - 1] = -(square - s) / 2;
                let key = RgswCiphertext::encrypt_small(ctx, ring_sk, &monomial, rng);
                Ok(vec![key?])
            })
            .collect::<LweResult<Vec<_>>>();
        monomial.zeroize();
        let keys = keys?;
        let galois =
            KeyGenerator::from_secret_key(ctx, ring_sk.clone())?.galois_keys(&elements, rng)?;
        Ok(Self {
            ctx: Arc::clone(ctx),
            lwe_dimension: lwe_sk.dimension(),
            algorithm: BlindRotation::Lmkcdey,
            keys,
            automorphisms: Some(Automorphisms::new(n, window, galois)?),
            monomials: None,
        })
    }

    /// A key from its RGSW ciphertexts, per LWE coefficient in order, and for
    /// [`BlindRotation::Lmkcdey`] its automorphism keys (the wire reader, [`crate::serialization`],
    /// which checks the RGSW count against `algorithm`).
    ///
    /// Errors: [`LweError::InvalidParams`] for LMKCDEY automorphism keys that are missing or not those
    /// of `g, .., g^w` and `-g` for a window `1 <= w < n/2`, or for keys given to another algorithm.
    pub(crate) fn from_parts(
        ctx: Arc<RlweContext>,
        lwe_dimension: LweDimension,
        algorithm: BlindRotation,
        keys: Vec<Vec<RgswCiphertext>>,
        galois: Option<GaloisKeys>,
    ) -> LweResult<Self> {
        let automorphisms = match (algorithm, galois) {
            (BlindRotation::Lmkcdey, Some(galois)) => {
                let window = galois.elements().len().saturating_sub(1);
                Some(Automorphisms::new(ctx.n(), window, galois)?)
            }
            (BlindRotation::Lmkcdey, None) => {
                return Err(LweError::InvalidParams {
                    what: "blind-rotation key",
                    reason: "the LMKCDEY algorithm needs its automorphism keys".into(),
                })
            }
            (_, None) => None,
            (_, Some(_)) => {
                return Err(LweError::InvalidParams {
                    what: "blind-rotation key",
                    reason: format!("the {algorithm:?} algorithm has no automorphism keys"),
                })
            }
        };
        let monomials = ternary_monomials(&ctx, algorithm)?;
        Ok(Self {
            ctx,
            lwe_dimension,
            algorithm,
            keys,
            automorphisms,
            monomials,
        })
    }

    /// The algorithm the key was made for.
    pub fn algorithm(&self) -> BlindRotation {
        self.algorithm
    }

    /// The ring context of the accumulator.
    pub fn context(&self) -> &Arc<RlweContext> {
        &self.ctx
    }

    /// The dimension of the LWE ciphertexts it rotates by.
    pub fn lwe_dimension(&self) -> LweDimension {
        self.lwe_dimension
    }

    /// The window `w` of a [`BlindRotation::Lmkcdey`] key (`None` for the other algorithms).
    pub fn window(&self) -> Option<usize> {
        self.automorphisms.as_ref().map(|a| a.window)
    }

    /// The automorphism keys of a [`BlindRotation::Lmkcdey`] key (`None` for the other algorithms).
    pub fn galois_keys(&self) -> Option<&GaloisKeys> {
        self.automorphisms.as_ref().map(|a| &a.keys)
    }

    /// The RGSW ciphertexts of every LWE coefficient, in the order of the coefficients (two per
    /// coefficient for [`BlindRotation::Ternary`], one for the others).
    pub fn rgsw_keys(&self) -> &[Vec<RgswCiphertext>] {
        &self.keys
    }

    /// The size of the key's polynomials in memory, in bytes (8 per residue: every row of every RGSW
    /// and Galois key in expanded form; a seeded encoding of the uniform halves stores about half).
    pub fn size_bytes(&self) -> usize {
        let rows = self
            .keys
            .iter()
            .flatten()
            .flat_map(|k| {
                let [m, sm] = [k.of_message(), k.of_secret_times_message()];
                m.rows().iter().chain(sm.rows())
            })
            .chain(self.automorphisms.iter().flat_map(|a| {
                let keys = &a.keys;
                keys.elements()
                    .into_iter()
                    .filter_map(|e| keys.get(e))
                    .flat_map(|k| k.rows())
                    .collect::<Vec<_>>()
            }));
        rows.map(|(b, a)| 8 * (b.data().len() + a.data().len()))
            .sum()
    }

    /// The variance of the error blind rotation adds for a ciphertext (modulo `2n`) whose mask has `k`
    /// nonzero coefficients (the other coefficients skip their steps): exact for
    /// [`BlindRotation::Binary`]; for [`BlindRotation::Ternary`], whose step at `a~_j = n` adds more,
    /// the mean over masks of `k` uniform nonzero values; for [`BlindRotation::Lmkcdey`], whose number of
    /// automorphisms depends on the mask, the mean over masks of `k` uniform odd values
    /// ([`BlindRotationKey::rotation_variance`] has the exact figure of one ciphertext).
    ///
    /// **External products.** Each `(d_0, d_1) ⊙ RGSW(m)` adds `(1/q') (d~_0 e_0 + d~_1 e_1) + r_0 +
    /// r_1 s`: the centered lifts `d~_i` of uniform residues modulo `q_0` (variance `q_0^2 / 12`) times
    /// the key errors (`sigma_lut^2`, `n` terms per coefficient), divided by `q'`, and ModDown's roundings
    /// (variance `1/12` each, `||s||^2` terms in `r_1 s`): `V_p = n q_0^2 sigma^2 / (6 q'^2) + (1 +
    /// ||s||^2) / 12`. The accumulator's earlier error passes through unchanged in variance (a monomial
    /// times it, PEGASUS Appendix B), so the errors add up; the first product, on the trivial accumulator
    /// `(f X^b, 0)`, has no uniform input and adds only its roundings (the table's own coefficients times
    /// the key error are left out: small for small outputs).
    ///
    /// **Ternary steps** (the combined form of the module documentation). Write `V_p = K + R` with the
    /// key term `K = n q_0^2 sigma^2 / (6 q'^2)` and the rounding term `R = (1 + ||s||^2) / 12`. A step
    /// adds `(1 - X^a) e_1 + (1 - X^-a) e_0 + r`: `e_0`, `e_1` the key errors of the two products
    /// (variance `K` per coefficient, independent, and uncorrelated between coefficients because the
    /// key errors are), `r` one ModDown's rounding (`R`). A coefficient of `(1 - X^a) e` is `e_i ∓
    /// e_(i - a)`, two distinct coefficients, for `a != n`: variance `2K`; for `a = n`, `1 - X^n = 2`:
    /// `4K`. So a step adds `4K + R` (`8K + R` at `a = n`), against `2K + 2R` for two separate products,
    /// and the first step (both products on the trivial accumulator) adds `R` only. With `h` of the `k`
    /// nonzero `a~_j` equal to `n`: `(4k + 4h) K + k R - 4 (1 + [a~_first = n]) K`; `added_variance`
    /// takes `h` and `[a~_first = n]` at their means for uniform nonzero values (probability
    /// `1 / (2n - 1)` each). At PEGASUS Table IV's sizes (`q' / q_0 ~ 2^15`) `R` dominates and the
    /// ternary rotation's error variance is about half that of the two-product form.
    ///
    /// **Automorphisms** (LMKCDEY). `psi_k(c_0, c_1) = (c_0(X^k) + u_0, u_1)` with `(u_0, u_1)` the key
    /// switch of `c_1(X^k)`: one gadget product with a uniform input,
    /// `V_a = n q_0^2 sigma^2 / (12 q'^2) + (1 + ||s||^2) / 12`; `psi_k` permutes the earlier error's
    /// coefficients with signs (constant coefficient fixed), so its variance is unchanged. Automorphisms
    /// before the first external product act on `(c_0, 0)` exactly and add nothing.
    ///
    /// In all, for the binary and LMKCDEY algorithms: `P V_p - K + A V_a` for `P = k` external products
    /// and `A` key-switched automorphisms (the ternary one as above). For LMKCDEY, `A` is the expected count over the schedule of
    /// the module documentation: each of the `n` classes `± g^l` is non-empty with probability
    /// `p = 1 - (1 - 1/n)^k` (the `k` odd mask values are uniform over the `n` units), the classes taken
    /// as independent (the multinomial's correlation is of order `1/n`), and a walk over the
    /// `n/2 - 1` positions of each half, in the state (run length since the last automorphism, whether
    /// a product happened yet), counts a merged automorphism before every non-empty class that follows
    /// an unfinished run, after every `w`-th class of a run and at the class `1`, and the `psi_(-g)`
    /// between the halves, each only once a product has happened. It is at most
    /// `2 (floor((n/2 - 1) / w) + 1) + 1 + min(k, n - 2)`; at `n = 2^12`, `k = 1024`, `w = 32` it is
    /// about 910 (which simulations of the schedule reproduce). PEGASUS Appendix C.2 gives `4 n_lwe q_0
    /// sigma_lut^2 / q'` instead, which leaves the roundings out (they dominate when `q'` is much larger
    /// than `q_0`) and scales the key term differently; the tests measure this formula within 10 %.
    /// `||s||^2` is the Hamming weight of a fixed-weight ring secret and `2n/3` on average for a uniform
    /// ternary one.
    pub fn added_variance(&self, nonzero: usize) -> f64 {
        if self.algorithm == BlindRotation::Ternary {
            // A nonzero value of a uniform mask is n with probability 1 / (2n - 1).
            let half_turn = nonzero as f64 / (2 * self.ctx.n() - 1) as f64;
            return self.ternary_variance(nonzero, half_turn, half_turn / nonzero.max(1) as f64);
        }
        let automorphisms = match &self.automorphisms {
            Some(aut) => self.expected_automorphisms(aut, nonzero),
            None => 0.0,
        };
        self.variance_of(nonzero as f64, automorphisms)
    }

    /// The ternary rotation's variance (see [`BlindRotationKey::added_variance`]) for `steps` nonzero
    /// mask values, `half_turns` of them equal to `n` (a count or its expectation), and `first_half_turn`
    /// whether the first is (1.0 or 0.0, or the probability): `(4 steps + 4 half_turns) K + steps R`
    /// less the first step's key term `4 (1 + first_half_turn) K`.
    fn ternary_variance(&self, steps: usize, half_turns: f64, first_half_turn: f64) -> f64 {
        if steps == 0 {
            return 0.0;
        }
        let (key, rounding) = external_product_variance(&self.ctx);
        let key_weight = 4.0 * (steps as f64 + half_turns) - 4.0 * (1.0 + first_half_turn);
        key_weight * key + steps as f64 * rounding
    }

    /// The expected number of key-switched automorphisms of an LMKCDEY rotation by a mask of `k` uniform
    /// odd values (see [`BlindRotationKey::added_variance`]): a walk over the schedule with the
    /// distribution of (run length, product seen yet) as its state.
    fn expected_automorphisms(&self, aut: &Automorphisms, k: usize) -> f64 {
        let n = self.ctx.n();
        let p = 1.0 - (1.0 - 1.0 / n as f64).powi(k.min(i32::MAX as usize) as i32);
        let w = aut.window;
        // state[seen][run]: the probability of the run length `run` (automorphisms not yet applied) and
        // of whether a product happened (`seen = 1`) before the current position.
        let mut state = [vec![0.0f64; w], vec![0.0f64; w]];
        state[0][0] = 1.0;
        let mut next = state.clone();
        let mut count = 0.0;
        for half in 0..2 {
            for l in (1..n / 2).rev() {
                next.iter_mut().for_each(|v| v.fill(0.0));
                for (seen, runs) in state.iter().enumerate() {
                    for (run, &prob) in runs.iter().enumerate() {
                        if prob == 0.0 {
                            continue;
                        }
                        for (occupied, q) in [(true, prob * p), (false, prob * (1.0 - p))] {
                            let mut run = run;
                            let mut now = seen;
                            if occupied {
                                if run != 0 {
                                    // The merged automorphism before the class's products.
                                    count += q * seen as f64;
                                    run = 0;
                                }
                                now = 1;
                            }
                            run += 1;
                            if run == w || l == 1 {
                                count += q * now as f64;
                                run = 0;
                            }
                            next[now][run] += q;
                        }
                    }
                }
                std::mem::swap(&mut state, &mut next);
            }
            // The class of g^0 = 1 (or -1): products only; then psi_(-g) between the halves.
            let unseen = state[0][0] * (1.0 - p);
            state[1][0] += state[0][0] * p;
            state[0][0] = unseen;
            if half == 0 {
                count += state[1][0];
            }
        }
        count
    }

    /// The variance of the error the rotation of `ct` (modulo `2n`, as [`BlindRotationKey::rotate`]
    /// takes it) adds, from the operations it runs: [`BlindRotationKey::added_variance`] with the exact
    /// number of key-switched automorphisms for [`BlindRotation::Lmkcdey`] and the exact number of mask
    /// values equal to `n` for [`BlindRotation::Ternary`].
    ///
    /// Errors: as [`BlindRotationKey::rotate`].
    pub fn rotation_variance(&self, ct: &LweCiphertext) -> LweResult<f64> {
        self.check_input(ct)?;
        match &self.automorphisms {
            Some(aut) => {
                let steps = self.schedule(aut, ct.a())?;
                let (products, automorphisms) = operations(&steps);
                Ok(self.variance_of(products as f64, automorphisms as f64))
            }
            None if self.algorithm == BlindRotation::Ternary => {
                let n = self.ctx.n() as u64;
                let nonzero = ct.a().iter().filter(|&&a| a != 0);
                let half_turns = nonzero.clone().filter(|&&a| a == n).count();
                let first = nonzero.clone().next().map_or(0.0, |&a| f64::from(a == n));
                Ok(self.ternary_variance(nonzero.count(), half_turns as f64, first))
            }
            None => Ok(self.added_variance(ct.a().iter().filter(|&&a| a != 0).count())),
        }
    }

    /// The variance formula of [`BlindRotationKey::added_variance`] for `products` external products and
    /// `automorphisms` key-switched automorphisms (counts or their expectations).
    fn variance_of(&self, products: f64, automorphisms: f64) -> f64 {
        if products == 0.0 {
            return 0.0;
        }
        let (key, rounding) = external_product_variance(&self.ctx);
        products * (key + rounding) - key + automorphisms * (key / 2.0 + rounding)
    }

    /// Checks the dimension and the modulus `2n` of a rotation's input.
    fn check_input(&self, ct: &LweCiphertext) -> LweResult<()> {
        self.lwe_dimension
            .check_same(ct.dimension(), "blind rotation")?;
        let two_n = 2 * self.ctx.n() as u64;
        if ct.modulus().value() != two_n {
            return Err(LweError::ModulusMismatch {
                operation: "blind rotation (switch the ciphertext to 2n first)",
                left: two_n,
                right: ct.modulus().value(),
            });
        }
        Ok(())
    }

    /// Blind rotation of `table` (coefficient form over `q_0`, the context's first prime) by the LWE
    /// ciphertext `ct` modulo `2n`: the RLWE ciphertext (coefficient form, over `q_0`) of
    /// `table X^(b + <a, s>)` under the ring secret (see the module documentation).
    ///
    /// Errors: [`LweError::DimensionMismatch`] / [`LweError::ModulusMismatch`] for a ciphertext of
    /// another dimension or not modulo `2n`; [`LweError::InvalidParams`] for [`BlindRotation::Lmkcdey`]
    /// and a mask with an even nonzero value (switch with [`LweCiphertext::switch_modulus_odd_mask`]);
    /// ring errors for a table over another basis.
    pub fn rotate(
        &self,
        table: &Poly<Coeff>,
        ct: &LweCiphertext,
    ) -> LweResult<RlweCiphertext<Coeff>> {
        self.check_input(ct)?;
        let q0 = self.ctx.basis_at(1)?;
        q0.check_same(table.basis(), "blind rotation (table basis)")?;
        if let Some(aut) = &self.automorphisms {
            return self.rotate_lmkcdey(aut, table, ct);
        }
        let mut acc = RlweCiphertext::new(vec![
            table.mul_monomial(ct.b() as usize),
            Poly::<Coeff>::zero(q0),
        ])?;
        // The factors of the ternary steps, gathered into the same buffers at every step.
        let mut factors = self
            .monomials
            .as_ref()
            .map(|m| (NttShoupPoly::zero(m.basis()), NttShoupPoly::zero(m.basis())));
        for (&a, keys) in ct.a().iter().zip(&self.keys) {
            if a == 0 {
                // X^0 - 1 = 0: every step leaves the accumulator unchanged.
                continue;
            }
            let a = a as usize;
            acc = match (&self.monomials, &mut factors, keys.as_slice()) {
                // Times X^(a s_j) for s_j in {-1, 0, 1} (PEGASUS Appendix B), in one combined product.
                (Some(monomials), Some(factors), [ek0, ek1]) => {
                    self.ternary_step(monomials, factors, acc, a, ek0, ek1)?
                }
                // Binary: times X^a if s_j = 1.
                (None, _, [key]) => self.half_step(acc, a, key)?,
                _ => {
                    return Err(LweError::InvalidParams {
                        what: "blind-rotation key",
                        reason: format!(
                            "{} RGSW ciphertexts for a coefficient of a {:?} key",
                            keys.len(),
                            self.algorithm
                        ),
                    })
                }
            };
        }
        Ok(acc)
    }

    /// One step of the ternary rotation (see the module documentation):
    /// `AC (X^a + X^-a - 1) + ModDown((1 - X^a) (AC ⊙ EK_{j,1}) + (1 - X^-a) (AC ⊙ EK_{j,0}))`, the
    /// two products from one ModUp of `AC`, their factors (gathered into `factors` with Shoup quotients)
    /// applied over `q_0 ∪ q'` in the same pass as the multiply-accumulates
    /// ([`RlweContext::external_product_combination_shoup`]), and the first term added in place.
    fn ternary_step(
        &self,
        monomials: &NttMonomialFactors,
        (pos, neg): &mut (NttShoupPoly, NttShoupPoly),
        acc: RlweCiphertext<Coeff>,
        a: usize,
        ek0: &RgswCiphertext,
        ek1: &RgswCiphertext,
    ) -> LweResult<RlweCiphertext<Coeff>> {
        let n = self.ctx.n();
        // 1 - X^(± a) = X^(±(a + n)) + 1 (X^n = -1).
        monomials.pair_into(a + n, pos, neg)?;
        let mut out = self
            .ctx
            .external_product_combination_shoup(&acc, &[(pos, ek1), (neg, ek0)])?;
        for (o, p) in out.parts.iter_mut().zip(&acc.parts) {
            // + AC (X^a + X^-a - 1): two signed rotations and a subtraction, in place.
            o.add_mul_symmetric_monomials(p, a)?;
        }
        Ok(out)
    }

    /// `((X^k - 1) AC) ⊙ EK + AC`, the binary step.
    fn half_step(
        &self,
        acc: RlweCiphertext<Coeff>,
        k: usize,
        ek: &RgswCiphertext,
    ) -> LweResult<RlweCiphertext<Coeff>> {
        let d = RlweCiphertext::new(
            acc.parts
                .iter()
                .map(|p| p.mul_monomial_minus_one(k))
                .collect(),
        )?;
        let mut out = self.ctx.external_product(&d, ek)?;
        for (o, a) in out.parts.iter_mut().zip(&acc.parts) {
            o.add_assign(a)?;
        }
        Ok(out)
    }

    /// The operations of an LMKCDEY rotation by the mask `a` (Algorithm 3 with the window; see the
    /// module documentation), in order.
    ///
    /// Errors: [`LweError::InvalidParams`] for an even nonzero mask value.
    fn schedule(&self, aut: &Automorphisms, a: &[u64]) -> LweResult<Vec<Step>> {
        let n = self.ctx.n();
        let half = n / 2;
        // Counting sort of the coefficients by class (`l` for g^l, `n/2 + l` for -g^l).
        let mut classes = Vec::with_capacity(a.len());
        let mut start = vec![0usize; n + 1];
        for (j, &x) in a.iter().enumerate() {
            if x == 0 {
                continue;
            }
            if x % 2 == 0 {
                return Err(LweError::InvalidParams {
                    what: "LMKCDEY blind-rotation input",
                    reason: format!(
                        "mask coefficient {j} is {x}, even: the algorithm needs units of Z_2n (switch \
                         with LweCiphertext::switch_modulus_odd_mask)"
                    ),
                });
            }
            let c = aut.class[x as usize / 2] as usize;
            classes.push((c, j));
            start[c + 1] += 1;
        }
        for c in 0..n {
            start[c + 1] += start[c];
        }
        let mut order = vec![0usize; classes.len()];
        let mut next = start.clone();
        for (c, j) in classes {
            order[next[c]] = j;
            next[c] += 1;
        }
        let bucket = |c: usize| {
            order[start[c]..start[c + 1]]
                .iter()
                .map(|&j| Step::Product(j))
        };
        let mut steps = Vec::with_capacity(a.len() + 2 * (half / aut.window + a.len()) + 3);
        // The negative classes (base n/2), psi_(-g), then the positive ones (base 0).
        for base in [half, 0] {
            let mut skips = 0;
            for l in (1..half).rev() {
                if start[base + l + 1] > start[base + l] {
                    if skips != 0 {
                        steps.push(Step::Automorphism(aut.powers[skips - 1]));
                        skips = 0;
                    }
                    steps.extend(bucket(base + l));
                }
                skips += 1;
                if skips == aut.window || l == 1 {
                    steps.push(Step::Automorphism(aut.powers[skips - 1]));
                    skips = 0;
                }
            }
            steps.extend(bucket(base));
            if base == half {
                steps.push(Step::Automorphism(aut.minus_g));
            }
        }
        Ok(steps)
    }

    /// LMKCDEY blind rotation (see the module documentation).
    fn rotate_lmkcdey(
        &self,
        aut: &Automorphisms,
        table: &Poly<Coeff>,
        ct: &LweCiphertext,
    ) -> LweResult<RlweCiphertext<Coeff>> {
        let steps = self.schedule(aut, ct.a())?;
        // f(X^-g) X^(-g b): the automorphisms of the rotation compose to X -> X^(-g^-1).
        let start = table
            .mul_monomial(ct.b() as usize)
            .automorphism(aut.minus_g)?;
        let mut acc = RlweCiphertext::new(vec![start, Poly::<Coeff>::zero(table.basis())])?;
        // While c_1 = 0 an automorphism is the permutation of c_0 alone, exactly.
        let mut trivial = true;
        for step in steps {
            match step {
                Step::Automorphism(k) if trivial => acc.parts[0] = acc.parts[0].automorphism(k)?,
                Step::Automorphism(k) => acc = self.ctx.apply_galois_coeff(&acc, k, &aut.keys)?,
                Step::Product(j) => {
                    acc = self.ctx.external_product(&acc, &self.keys[j][0])?;
                    trivial = false;
                }
            }
        }
        Ok(acc)
    }
}

/// The external products and the key-switched automorphisms of an LMKCDEY schedule: automorphisms before
/// the first product act on a noiseless accumulator, add no error and are not counted.
fn operations(steps: &[Step]) -> (usize, usize) {
    let (mut products, mut automorphisms) = (0, 0);
    for step in steps {
        match step {
            Step::Product(_) => products += 1,
            Step::Automorphism(_) if products > 0 => automorphisms += 1,
            Step::Automorphism(_) => {}
        }
    }
    (products, automorphisms)
}
