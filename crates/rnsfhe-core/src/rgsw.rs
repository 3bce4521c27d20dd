//! RGSW ciphertexts and the external product (Gentry-Sahai-Waters in ring form; PEGASUS Appendix A).
//!
//! `RGSW_s(m; g) = (RLWE~_s(m; g), RLWE~_s(s m; g))`: a pair of gadget ciphertexts, of `m` and of `s m`
//! ([`crate::GadgetCiphertext`]). For an RLWE ciphertext `(c_0, c_1)` decrypting to `c_0 + c_1 s = x`, the
//! external product `(c_0, c_1) ⊙ RGSW(m) = c_0 ⋄ RLWE~(m) + c_1 ⋄ RLWE~(s m)` decrypts to `m (c_0 + c_1
//! s) = m x` plus the gadget products' errors: one sum of gadget products, computed by
//! [`RlweContext::gadget_product_sum`] with the context's hybrid gadget (PEGASUS Table IV: `g_rns` over
//! `q_0` with the special modulus `q'`, i.e. one digit group and one special prime).

use rnsfhe_math::sampling::Csprng;
use rnsfhe_ring::{Coeff, Ntt, NttShoupPoly, Poly};

use crate::context::RlweContext;
use crate::encryption::RlweCiphertext;
use crate::error::Result;
use crate::gadget::{Gadget, GadgetCiphertext};
use crate::keys::{SecretKey, SecretPoly};

/// An RGSW ciphertext of a small integer `m`: the gadget ciphertexts of `m` and of `s m` under the
/// context's secret and hybrid gadget (see the module documentation).
#[derive(Clone, Debug, PartialEq)]
pub struct RgswCiphertext {
    pub(crate) m: GadgetCiphertext,
    pub(crate) sm: GadgetCiphertext,
}

impl RgswCiphertext {
    /// Encrypts the integer `m` (a constant polynomial; blind rotation encrypts key bits) under `sk`,
    /// with the context's error width.
    ///
    /// Errors: [`crate::Error::ContextMismatch`] for a key of another context; sampler errors.
    pub fn encrypt_scalar(
        ctx: &RlweContext,
        sk: &SecretKey,
        m: i64,
        rng: &mut Csprng,
    ) -> Result<Self> {
        ctx.check_fingerprint(sk.fingerprint(), "secret key")?;
        let qp = ctx.extended_basis();
        // The NTT form of a constant polynomial is that constant in every slot.
        let n = ctx.n();
        let data = qp
            .moduli()
            .iter()
            .flat_map(|q| std::iter::repeat_n(q.reduce_i64(m), n))
            .collect();
        let message = SecretPoly::new(Poly::<Ntt>::from_data(qp, data)?);
        Self::encrypt_ntt(ctx, sk, &message, rng)
    }

    /// Encrypts the polynomial with the small signed coefficients `m` (`N` of them) under `sk`, with the
    /// context's error width: the monomials `RGSW(X^(s_j))` of the automorphism-based blind rotation
    /// (Lee, Micciancio, Kim, Choi, Deryabin, Eom and Yoo, "Efficient FHEW bootstrapping with small
    /// evaluation keys", Eurocrypt 2023, Section 5). The coefficients are the caller's secret: the
    /// copies made here are overwritten on drop.
    ///
    /// Errors: [`crate::Error::ContextMismatch`] for a key of another context; a ring error unless there
    /// are `N` coefficients; sampler errors.
    pub fn encrypt_small(
        ctx: &RlweContext,
        sk: &SecretKey,
        m: &[i64],
        rng: &mut Csprng,
    ) -> Result<Self> {
        ctx.check_fingerprint(sk.fingerprint(), "secret key")?;
        // `into_ntt` transforms the coefficient buffer in place: no unzeroized copy is left behind.
        let message = SecretPoly::new(Poly::<Coeff>::from_i64(ctx.extended_basis(), m)?.into_ntt());
        Self::encrypt_ntt(ctx, sk, &message, rng)
    }

    /// The gadget ciphertexts of `m` and `s m` for a message `m` in NTT form over `QP`.
    fn encrypt_ntt(
        ctx: &RlweContext,
        sk: &SecretKey,
        message: &SecretPoly,
        rng: &mut Csprng,
    ) -> Result<Self> {
        let s = sk.ntt_qp();
        let s_m = SecretPoly::new(s.mul(message.get())?);
        let gadget = Gadget::of_context(ctx);
        let encrypt = |message: &SecretPoly, rng: &mut Csprng| {
            GadgetCiphertext::encrypt(
                ctx.fingerprint(),
                gadget,
                ctx.gaussian(),
                s,
                message.get(),
                ctx.special_constants(),
                rng,
            )
        };
        Ok(Self {
            m: encrypt(message, rng)?,
            sm: encrypt(&s_m, rng)?,
        })
    }

    /// The gadget ciphertext of `m`.
    pub fn of_message(&self) -> &GadgetCiphertext {
        &self.m
    }

    /// The gadget ciphertext of `s m`.
    pub fn of_secret_times_message(&self) -> &GadgetCiphertext {
        &self.sm
    }
}

impl RlweContext {
    /// The external product `(c_0, c_1) ⊙ RGSW(m) = c_0 ⋄ RLWE~(m) + c_1 ⋄ RLWE~(s m)` of a 2-part
    /// ciphertext in coefficient form over a prefix of the chain: an encryption of `m x` for
    /// `c_0 + c_1 s = x`, in coefficient form (one sum of gadget products, see the module documentation).
    ///
    /// Errors: [`crate::Error::WrongPartCount`] unless `ct` has 2 parts; as
    /// [`RlweContext::gadget_product_sum`].
    pub fn external_product(
        &self,
        ct: &RlweCiphertext<Coeff>,
        rgsw: &RgswCiphertext,
    ) -> Result<RlweCiphertext<Coeff>> {
        let [c0, c1] = ct.parts.as_slice() else {
            return Err(crate::Error::WrongPartCount {
                operation: "external product",
                expected: 2,
                got: ct.parts.len(),
            });
        };
        let (u0, u1) = self.gadget_product_sum(&[(c0, &rgsw.m), (c1, &rgsw.sm)])?;
        RlweCiphertext::new(vec![u0, u1])
    }

    /// `sum_k f_k ((c_0, c_1) ⊙ RGSW(m_k))` for factors `f_k` in NTT form over `Q_l ∪ P`
    /// ([`RlweContext::extended_basis_at`] of the ciphertext's level `l`): an encryption of
    /// `x sum_k f_k m_k` in coefficient form, by one ModUp of `(c_0, c_1)`, one multiply-accumulate per
    /// key and one ModDown of the factored sum ([`RlweContext::gadget_product_sums_scaled`]). Its error
    /// is `sum_k f_k e_k` (each `e_k` an external product's key error before rounding) plus a single
    /// rounding. With `f = 1 - X^(± a)` (from [`rnsfhe_ring::NttMonomials`]) it is one step of the
    /// ternary blind rotation (PEGASUS Fig. 2) for the transform cost of one external product.
    ///
    /// Errors: [`crate::Error::WrongPartCount`] unless `ct` has 2 parts; as
    /// [`RlweContext::gadget_product_sums_scaled`].
    pub fn external_product_combination(
        &self,
        ct: &RlweCiphertext<Coeff>,
        terms: &[(&Poly<Ntt>, &RgswCiphertext)],
    ) -> Result<RlweCiphertext<Coeff>> {
        // The Shoup forms of the factors (one division per residue; the blind rotation gathers them
        // from tables instead).
        let factors: Vec<NttShoupPoly> = terms.iter().map(|(f, _)| NttShoupPoly::new(f)).collect();
        let shoup_terms: Vec<(&NttShoupPoly, &RgswCiphertext)> = factors
            .iter()
            .zip(terms)
            .map(|(f, (_, rgsw))| (f, *rgsw))
            .collect();
        self.external_product_combination_shoup(ct, &shoup_terms)
    }

    /// [`RlweContext::external_product_combination`] with the factors in Shoup form (gathered from
    /// [`rnsfhe_ring::NttMonomialFactors`] by the ternary blind rotation, PEGASUS Fig. 2): the factors,
    /// digits and keys meet in one pass per limb
    /// ([`RlweContext::gadget_product_sums_shoup_scaled`]).
    ///
    /// Errors: as [`RlweContext::external_product_combination`].
    pub fn external_product_combination_shoup(
        &self,
        ct: &RlweCiphertext<Coeff>,
        terms: &[(&NttShoupPoly, &RgswCiphertext)],
    ) -> Result<RlweCiphertext<Coeff>> {
        let [c0, c1] = ct.parts.as_slice() else {
            return Err(crate::Error::WrongPartCount {
                operation: "external product combination",
                expected: 2,
                got: ct.parts.len(),
            });
        };
        let keys: Vec<[&GadgetCiphertext; 2]> =
            terms.iter().map(|(_, rgsw)| [&rgsw.m, &rgsw.sm]).collect();
        let sums: Vec<(&NttShoupPoly, &[&GadgetCiphertext])> = terms
            .iter()
            .zip(&keys)
            .map(|((f, _), k)| (*f, &k[..]))
            .collect();
        let (u0, u1) = self.gadget_product_sums_shoup_scaled(&[c0, c1], &sums)?;
        RlweCiphertext::new(vec![u0, u1])
    }
}
