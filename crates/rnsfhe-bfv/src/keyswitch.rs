//! HPS CRT key switching (Sections 3.3 and 4.5), computed one limb of `Q` at a time: the routine behind
//! relinearization and Galois automorphisms.
//!
//! For a key from `s'` to `s` with components `(beta_{i,j}, alpha_{i,j})` and the residues of `c` (or their
//! signed base-`w` digits) `d_{i,j}` lifted to `Q`, key switching returns
//! `(sum d_{i,j} beta_{i,j}, sum d_{i,j} alpha_{i,j})`, which decrypts under `s` to
//! `c s' + sum d_{i,j} e_{i,j}`.
//!
//! # Why limb by limb
//!
//! Lifting every digit to all of `Q` first (HPS's description) materializes `D x k` limbs (`D` digits,
//! `k` primes): 51 MB at depth 20 (`N = 2^15`, `k = D = 14`), written once, transformed, and read again by
//! the inner products, far out of cache, and paid for in page faults on every call. Instead the digits are
//! kept as `D` rows of small signed integers ([`rnsfhe_ring::RnsSignedDigits::signed_rows`]), and each
//! target limb `q_j` is finished on its own: lift the `D` rows modulo `q_j`, `D` forward NTTs, the two
//! inner products with limb `j` of the key, two inverse NTTs. The working set is `D` limbs (3.7 MB at
//! depth 20, reused from limb to limb) and each output limb is written once, final. Limbs are independent,
//! so they run in parallel when there are several threads.

use rayon::prelude::*;
use rnsfhe_math::simd::{sum_of_products, Weights};
use rnsfhe_ring::{Coeff, Poly, RnsSignedDigits};

use crate::error::{BfvError, BfvResult};
use crate::keys::KeySwitchKey;

/// Coefficients per block of the inner products: the block of the `D` lifted digits (`D x 8 KiB`) stays in
/// L2 between the two sums that read it.
const INNER_PRODUCT_BLOCK: usize = 1024;

/// `(sum d_{i,j} beta_{i,j}, sum d_{i,j} alpha_{i,j})` in coefficient form for `c` over `Q` (see the module
/// documentation), `d_{i,j}` the decomposition `digits` of `c` (the one `key` was made with); `what` names
/// the key in errors.
///
/// Errors: [`BfvError::WrongPartCount`] if the key does not have one component per digit; basis mismatches
/// between `c`, the key and `digits`.
pub(crate) fn key_switch(
    c: &Poly<Coeff>,
    digits: &RnsSignedDigits,
    key: &KeySwitchKey,
    what: &'static str,
) -> BfvResult<(Poly<Coeff>, Poly<Coeff>)> {
    let rows = digits.signed_rows(c)?;
    if rows.len() != key.components.len() {
        return Err(BfvError::WrongPartCount {
            operation: what,
            expected: rows.len(),
            got: key.components.len(),
        });
    }
    let basis = c.basis();
    for p in key.components.iter().flat_map(|(b, a)| [b, a]) {
        basis.check_same(p.basis(), "key switching (key component basis)")?;
    }
    let n = basis.degree();
    let per_limb_digits = digits.count();
    // Output limb `j` of both sums into `o0`, `o1`, with `lifted` as the workspace of the D lifted digits.
    let limb = |j: usize, lifted: &mut Vec<u64>, o0: &mut [u64], o1: &mut [u64]| -> BfvResult<()> {
        let m = &basis.moduli()[j];
        let plan = &basis.plans()[j];
        lifted.resize(rows.len() * n, 0);
        for (r, (row, w)) in rows.iter().zip(lifted.chunks_exact_mut(n)).enumerate() {
            digits.lift_row(r / per_limb_digits, row, m, w);
            plan.forward(w)?;
        }
        let (mut ds, mut betas, mut alphas) = (Vec::new(), Vec::new(), Vec::new());
        for start in (0..n).step_by(INNER_PRODUCT_BLOCK) {
            let range = start..(start + INNER_PRODUCT_BLOCK).min(n);
            ds.clear();
            ds.extend(lifted.chunks_exact(n).map(|w| &w[range.clone()]));
            // The same coefficients of limb j of every key component.
            let (lo, hi) = (j * n + range.start, j * n + range.end);
            betas.clear();
            betas.extend(key.components.iter().map(|(b, _)| &b.data()[lo..hi]));
            alphas.clear();
            alphas.extend(key.components.iter().map(|(_, a)| &a.data()[lo..hi]));
            sum_of_products(m, &ds, Weights::PerElement(&betas), &mut o0[range.clone()]);
            sum_of_products(m, &ds, Weights::PerElement(&alphas), &mut o1[range]);
        }
        plan.inverse(o0)?;
        plan.inverse(o1)?;
        Ok(())
    };
    let size = basis.len() * n;
    let (mut out0, mut out1) = (vec![0u64; size], vec![0u64; size]);
    if rayon::current_num_threads() > 1 {
        out0.par_chunks_mut(n)
            .zip(out1.par_chunks_mut(n))
            .enumerate()
            .try_for_each_init(Vec::new, |lifted, (j, (o0, o1))| limb(j, lifted, o0, o1))?;
    } else {
        let mut lifted = Vec::new();
        for (j, (o0, o1)) in out0.chunks_mut(n).zip(out1.chunks_mut(n)).enumerate() {
            limb(j, &mut lifted, o0, o1)?;
        }
    }
    Ok((Poly::from_data(basis, out0)?, Poly::from_data(basis, out1)?))
}
