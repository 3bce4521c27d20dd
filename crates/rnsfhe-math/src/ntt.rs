//! Negacyclic number-theoretic transforms over `Z_p[X]/(X^N + 1)`.
//!
//! [`NttPlan`] is the engine used everywhere: it wraps a `tfhe-ntt` prime64 plan (run-time dispatch to
//! AVX2 / AVX-512 / AVX-512 IFMA; primes below 2^50 take the IFMA path, about twice as fast here).
//! [`ReferenceNtt`] is a plain scalar Harvey implementation kept for tests and benchmarks.
//!
//! **Output order.** Both transforms map coefficients to evaluations in bit-reversed order: entry `j` of the
//! forward transform is `a(psi^(2 * bitrev(j) + 1))`, with `psi` the primitive `2N`-th root returned by
//! [`NttPlan::psi`]. [`NttPlan::slot_exponent`] gives that exponent; the ring layer uses it to permute NTT
//! slots under automorphisms `X -> X^k`.

use crate::error::{Error, Result};
use crate::modulus::{Modulus, ShoupConstant};
use crate::primes::is_prime;

/// Smallest supported ring degree (the SIMD engine needs at least 16 coefficients).
pub const MIN_DEGREE: usize = 16;
/// Largest supported ring degree.
pub const MAX_DEGREE: usize = 1 << 17;

/// Checks that `n` is a power of two in `[MIN_DEGREE, MAX_DEGREE]`.
pub fn check_degree(n: usize) -> Result<()> {
    if !n.is_power_of_two() || !(MIN_DEGREE..=MAX_DEGREE).contains(&n) {
        return Err(Error::InvalidDegree {
            n,
            min: MIN_DEGREE,
            max: MAX_DEGREE,
        });
    }
    Ok(())
}

/// Reverses the lowest `bits` bits of `j`.
#[inline]
pub fn bit_reverse(j: usize, bits: u32) -> usize {
    if bits == 0 {
        0
    } else {
        j.reverse_bits() >> (usize::BITS - bits)
    }
}

fn check_len(what: &'static str, expected: usize, got: usize) -> Result<()> {
    if expected != got {
        return Err(Error::LengthMismatch {
            what,
            expected,
            got,
        });
    }
    Ok(())
}

/// A precomputed negacyclic NTT of size `N` modulo an NTT-friendly prime `p < 2^62`.
pub struct NttPlan {
    modulus: Modulus,
    n: usize,
    log_n: u32,
    psi: u64,
    engine: tfhe_ntt::prime64::Plan,
}

impl std::fmt::Debug for NttPlan {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NttPlan")
            .field("n", &self.n)
            .field("p", &self.modulus.value())
            .finish()
    }
}

impl NttPlan {
    /// Builds the plan for degree `n` and prime `p`.
    ///
    /// Errors: [`Error::InvalidDegree`] for `n` not a power of two in `[16, 2^17]`,
    /// [`Error::ModulusOutOfRange`] for `p >= 2^62`, [`Error::NotNttFriendly`] unless `p` is a prime
    /// with `p = 1 mod 2n`.
    pub fn new(n: usize, p: u64) -> Result<Self> {
        check_degree(n)?;
        let modulus = Modulus::new(p)?;
        let two_n = 2 * n as u64;
        let not_friendly = Error::NotNttFriendly {
            modulus: p,
            n,
            two_n,
        };
        if p % two_n != 1 || !is_prime(p) {
            return Err(not_friendly);
        }
        let engine = tfhe_ntt::prime64::Plan::try_new(n, p).ok_or(not_friendly)?;
        // Recover the root the engine uses: the transform of X is (psi^(2 bitrev(j) + 1))_j, entry 0 = psi.
        let mut x = vec![0u64; n];
        x[1] = 1;
        engine.fwd(&mut x);
        let psi = x[0];
        Ok(Self {
            modulus,
            n,
            log_n: n.trailing_zeros(),
            psi,
            engine,
        })
    }

    /// The ring degree `N`.
    pub fn degree(&self) -> usize {
        self.n
    }

    /// The modulus.
    pub fn modulus(&self) -> &Modulus {
        &self.modulus
    }

    /// The primitive `2N`-th root of unity `psi` that defines the evaluation points.
    pub fn psi(&self) -> u64 {
        self.psi
    }

    /// Whether the engine runs the AVX-512 IFMA kernels for this prime (primes below 2^50, IFMA CPUs).
    pub fn uses_ifma(&self) -> bool {
        self.engine.use_ifma() && self.modulus.value() < 1 << 50
    }

    /// The odd exponent `e` such that NTT entry `j` is the evaluation at `psi^e`: `2 * bitrev(j) + 1`.
    #[inline]
    pub fn slot_exponent(&self, j: usize) -> usize {
        2 * bit_reverse(j, self.log_n) + 1
    }

    /// Forward transform in place: coefficients in `[0, p)` to evaluations in `[0, p)` (bit-reversed order).
    pub fn forward(&self, a: &mut [u64]) -> Result<()> {
        check_len("NTT input", self.n, a.len())?;
        self.engine.fwd(a);
        Ok(())
    }

    /// Inverse transform in place (including the factor `N^-1`).
    pub fn inverse(&self, a: &mut [u64]) -> Result<()> {
        check_len("inverse NTT input", self.n, a.len())?;
        self.engine.inv(a);
        self.engine.normalize(a);
        Ok(())
    }

    /// The engine's forward transform alone, for benchmarks that compare the wrapper with the engine.
    pub fn engine(&self) -> &tfhe_ntt::prime64::Plan {
        &self.engine
    }
}

/// A scalar negacyclic NTT (Harvey butterflies with Shoup constants, lazy reduction in `[0, 4p)`), with
/// the same root and output order as [`NttPlan`]. Kept as a reference for tests and as the scalar baseline
/// of `rnsfhe bench ntt`.
#[derive(Debug, Clone)]
pub struct ReferenceNtt {
    modulus: Modulus,
    n: usize,
    /// psi^bitrev(i) for the forward butterflies.
    roots: Vec<ShoupConstant>,
    /// psi^-bitrev(i) for the inverse butterflies.
    inv_roots: Vec<ShoupConstant>,
    n_inv: ShoupConstant,
}

impl ReferenceNtt {
    /// Builds the reference transform using the same `psi` as `plan`.
    pub fn from_plan(plan: &NttPlan) -> Result<Self> {
        let m = *plan.modulus();
        let n = plan.degree();
        let log_n = n.trailing_zeros();
        let psi_inv = m.inv(plan.psi())?;
        let table = |root: u64| -> Vec<ShoupConstant> {
            (0..n)
                .map(|i| m.shoup(m.pow(root, bit_reverse(i, log_n) as u64)))
                .collect()
        };
        Ok(Self {
            modulus: m,
            n,
            roots: table(plan.psi()),
            inv_roots: table(psi_inv),
            n_inv: m.shoup(m.inv(n as u64)?),
        })
    }

    /// Forward transform (Cooley-Tukey, natural order in, bit-reversed order out), outputs in `[0, p)`.
    pub fn forward(&self, a: &mut [u64]) -> Result<()> {
        check_len("NTT input", self.n, a.len())?;
        let m = &self.modulus;
        let two_p = m.value() << 1;
        let mut t = self.n;
        let mut groups = 1;
        while groups < self.n {
            t >>= 1;
            for i in 0..groups {
                let w = self.roots[groups + i];
                let (lo, hi) = a[2 * i * t..2 * (i + 1) * t].split_at_mut(t);
                for (x, y) in lo.iter_mut().zip(hi.iter_mut()) {
                    let u = m.reduce_4p_to_2p(*x);
                    let v = m.mul_shoup_lazy(*y, w);
                    *x = u + v;
                    *y = u + two_p - v;
                }
            }
            groups <<= 1;
        }
        for x in a.iter_mut() {
            *x = m.reduce_once(m.reduce_4p_to_2p(*x));
        }
        Ok(())
    }

    /// Inverse transform (Gentleman-Sande), bit-reversed order in, natural order out, times `N^-1`.
    pub fn inverse(&self, a: &mut [u64]) -> Result<()> {
        check_len("inverse NTT input", self.n, a.len())?;
        let m = &self.modulus;
        let two_p = m.value() << 1;
        let mut t = 1;
        let mut groups = self.n >> 1;
        while groups >= 1 {
            for i in 0..groups {
                let w = self.inv_roots[groups + i];
                let (lo, hi) = a[2 * i * t..2 * (i + 1) * t].split_at_mut(t);
                for (x, y) in lo.iter_mut().zip(hi.iter_mut()) {
                    let (u, v) = (*x, *y);
                    *x = m.reduce_4p_to_2p(u + v);
                    *y = m.mul_shoup_lazy(u + two_p - v, w);
                }
            }
            t <<= 1;
            groups >>= 1;
        }
        for x in a.iter_mut() {
            *x = m.mul_shoup(*x, self.n_inv);
        }
        Ok(())
    }
}

/// Schoolbook negacyclic product `a * b mod (X^N + 1, p)`, `O(N^2)`, for tests.
pub fn negacyclic_schoolbook(m: &Modulus, a: &[u64], b: &[u64]) -> Result<Vec<u64>> {
    check_len("schoolbook operand", a.len(), b.len())?;
    let n = a.len();
    let mut out = vec![0u64; n];
    for (i, &ai) in a.iter().enumerate() {
        for (j, &bj) in b.iter().enumerate() {
            let prod = m.mul(ai, bj);
            let k = i + j;
            if k < n {
                out[k] = m.add(out[k], prod);
            } else {
                out[k - n] = m.sub(out[k - n], prod);
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::primes::{ntt_primes_near_power_of_two, ntt_primes_of_bits};
    use rand::{Rng, SeedableRng};

    fn random_poly(rng: &mut impl Rng, n: usize, p: u64) -> Vec<u64> {
        (0..n).map(|_| rng.gen_range(0..p)).collect()
    }

    fn primes_for(n: usize) -> Vec<u64> {
        let two_n = 2 * n as u64;
        let mut ps = ntt_primes_of_bits(61, two_n, 1, &[]).unwrap();
        ps.extend(ntt_primes_near_power_of_two(55, two_n, 1).unwrap());
        ps.extend(ntt_primes_of_bits(49, two_n, 1, &[]).unwrap());
        ps.extend(ntt_primes_of_bits(36, two_n, 1, &[]).unwrap());
        ps
    }

    #[test]
    fn rejects_bad_arguments() {
        assert!(matches!(
            NttPlan::new(1000, 12289),
            Err(Error::InvalidDegree { n: 1000, .. })
        ));
        assert!(matches!(
            NttPlan::new(1 << 18, 12289),
            Err(Error::InvalidDegree { .. })
        ));
        assert!(matches!(
            NttPlan::new(1024, 12289 + 2048),
            Err(Error::NotNttFriendly { .. })
        ));
        assert!(matches!(
            NttPlan::new(1024, 7681),
            Err(Error::NotNttFriendly { .. })
        ));
        assert!(matches!(
            NttPlan::new(1024, (1 << 62) + 1),
            Err(Error::ModulusOutOfRange { .. })
        ));
        let plan = NttPlan::new(1024, 12289).unwrap();
        assert!(matches!(
            plan.forward(&mut [0u64; 512]),
            Err(Error::LengthMismatch {
                expected: 1024,
                got: 512,
                ..
            })
        ));
        assert!(plan.inverse(&mut [0u64; 2048]).is_err());
    }

    #[test]
    fn output_order_is_bit_reversed_odd_powers_of_psi() {
        let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(1);
        for log_n in [4u32, 10, 13] {
            let n = 1usize << log_n;
            for p in primes_for(n) {
                let plan = NttPlan::new(n, p).unwrap();
                let m = *plan.modulus();
                assert_eq!(
                    m.pow(plan.psi(), n as u64),
                    p - 1,
                    "psi is a primitive 2N-th root"
                );
                let a = random_poly(&mut rng, n, p);
                let mut f = a.clone();
                plan.forward(&mut f).unwrap();
                for j in (0..n).step_by((n / 16).max(1)) {
                    let x = m.pow(plan.psi(), plan.slot_exponent(j) as u64);
                    let eval = a.iter().rev().fold(0u64, |acc, &c| m.add(m.mul(acc, x), c));
                    assert_eq!(f[j], eval, "N = {n}, p = {p}, slot {j}");
                }
            }
        }
    }

    #[test]
    fn round_trip_and_products_for_every_degree() {
        let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(2);
        for log_n in 4..=17u32 {
            let n = 1usize << log_n;
            for p in primes_for(n) {
                let plan = NttPlan::new(n, p).unwrap();
                let reference = ReferenceNtt::from_plan(&plan).unwrap();
                let a = random_poly(&mut rng, n, p);
                let b = random_poly(&mut rng, n, p);
                let (mut fa, mut fb, mut ra) = (a.clone(), b.clone(), a.clone());
                plan.forward(&mut fa).unwrap();
                plan.forward(&mut fb).unwrap();
                reference.forward(&mut ra).unwrap();
                assert_eq!(fa, ra, "engine and reference agree, N = {n}, p = {p}");
                assert!(fa.iter().all(|&x| x < p));
                let m = plan.modulus();
                let mut prod: Vec<u64> = fa.iter().zip(&fb).map(|(&x, &y)| m.mul(x, y)).collect();
                let mut ref_prod = prod.clone();
                plan.inverse(&mut prod).unwrap();
                reference.inverse(&mut ref_prod).unwrap();
                assert_eq!(prod, ref_prod);
                plan.inverse(&mut fa).unwrap();
                assert_eq!(fa, a, "round trip N = {n}");
                if n <= 1 << 11 {
                    // Small N: the whole product against schoolbook multiplication.
                    assert_eq!(
                        prod,
                        negacyclic_schoolbook(m, &a, &b).unwrap(),
                        "N = {n}, p = {p}"
                    );
                } else {
                    // Large N: random coefficients of the product computed directly.
                    for _ in 0..8 {
                        let k = rng.gen_range(0..n);
                        let mut c = 0u64;
                        for i in 0..n {
                            let t = m.mul(a[i], b[(k + n - i) % n]);
                            c = if i <= k { m.add(c, t) } else { m.sub(c, t) };
                        }
                        assert_eq!(prod[k], c, "N = {n}, coefficient {k}");
                    }
                }
            }
        }
    }
}
