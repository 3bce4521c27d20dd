//! HPS simple and complex scaling and the gadget decompositions against big-integer references.
//!
//! Run in release mode (`cargo test --release -p rnsfhe-ring --test scaling_bigint`); each scaling
//! configuration checks at least 10^5 uniformly random inputs. Reference rounding is
//! `round(z) = floor(z + 1/2)`, computed exactly as `floor((2 t x + Q) / 2Q)`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;

use num_bigint::{BigInt, BigUint};
use num_integer::Integer;
use num_traits::{One, ToPrimitive, Zero};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha20Rng;
use rayon::prelude::*;
use rnsfhe_math::primes::ntt_primes_of_bits;
use rnsfhe_math::Modulus;
use rnsfhe_ring::gadget::{RnsGadget, RnsSignedDigits, SignedDigits};
use rnsfhe_ring::scaling::{ComplexScaler, FractionPath, SimpleScaler, MAX_PLAINTEXT_MODULUS};
use rnsfhe_ring::{Coeff, Error, Poly, RnsBasis};

/// Ring degree of the scaling tests: 7 polynomials give 114 688 >= 10^5 samples.
const N: usize = 1 << 14;
const POLYS: usize = 7;
/// A 59-bit plaintext modulus.
const T59: u64 = (1 << 59) - 55;

fn primes(bits: u32, count: usize, exclude: &[u64]) -> Vec<u64> {
    ntt_primes_of_bits(bits, 2 * N as u64, count, exclude).unwrap()
}

fn basis(moduli: &[u64]) -> Arc<RnsBasis> {
    RnsBasis::new(N, moduli).unwrap()
}

fn random_poly(b: &Arc<RnsBasis>, rng: &mut ChaCha20Rng) -> Poly<Coeff> {
    let n = b.degree();
    let mut data = Vec::with_capacity(b.len() * n);
    for m in b.moduli() {
        data.extend((0..n).map(|_| rng.gen_range(0..m.value())));
    }
    Poly::from_data(b, data).unwrap()
}

/// CRT reconstruction `x = sum_i x_i (Q/q_i) [(Q/q_i)^-1]_{q_i} mod Q` in big integers.
struct Crt {
    modulus: BigUint,
    coeffs: Vec<BigUint>,
}

impl Crt {
    fn new(moduli: &[u64]) -> Self {
        let modulus: BigUint = moduli.iter().map(|&q| BigUint::from(q)).product();
        let coeffs = moduli
            .iter()
            .map(|&q| {
                let qb = BigUint::from(q);
                let qhat = &modulus / &qb;
                let inv = (&qhat % &qb).modinv(&qb).unwrap();
                qhat * inv
            })
            .collect();
        Self { modulus, coeffs }
    }

    /// The integers in `[0, Q)` of every coefficient of a limb-major buffer.
    fn reconstruct(&self, data: &[u64], n: usize) -> Vec<BigUint> {
        (0..n)
            .into_par_iter()
            .map(|c| {
                let s: BigUint = self
                    .coeffs
                    .iter()
                    .enumerate()
                    .map(|(i, g)| g * data[i * n + c])
                    .sum();
                s % &self.modulus
            })
            .collect()
    }
}

/// `floor((2 t x + Q) / 2Q)`, the exact `round(t x / Q)`.
fn round_scaled(x: &BigUint, t: u64, q: &BigUint) -> BigUint {
    let two_q = q << 1u32;
    (x * (2 * t as u128) + q) / two_q
}

/// Simple scaling: `round(t x / Q) mod t` for x uniform in `[0, Q)`, every t, both paths where available.
#[test]
fn simple_scaling_matches_bigint() {
    let mut rng = ChaCha20Rng::seed_from_u64(0x5ca1e);
    let ts = [2u64, 65537, (1 << 20) + 7, T59, MAX_PLAINTEXT_MODULUS];
    for bits in [30u32, 45, 55, 60] {
        for limbs in [2usize, 5, 10] {
            let moduli = primes(bits, limbs, &[]);
            let q = basis(&moduli);
            let crt = Crt::new(&moduli);
            let mut scalers = Vec::new();
            for &t in &ts {
                let auto = SimpleScaler::new(&q, t).unwrap();
                let expected_path = if bits <= 47 {
                    FractionPath::Float
                } else {
                    FractionPath::Wide
                };
                assert_eq!(auto.path(), expected_path);
                scalers.push(auto);
                if bits <= 47 {
                    scalers.push(SimpleScaler::with_path(&q, t, FractionPath::Wide).unwrap());
                }
            }
            let mut checked = 0usize;
            for _ in 0..POLYS {
                let x = random_poly(&q, &mut rng);
                let xs = crt.reconstruct(x.data(), N);
                for &t in &ts {
                    let want: Vec<u64> = xs
                        .par_iter()
                        .map(|xi| (round_scaled(xi, t, &crt.modulus) % t).to_u64().unwrap())
                        .collect();
                    for s in scalers.iter().filter(|s| s.plaintext_modulus() == t) {
                        let got = s.scale(&x).unwrap();
                        let mismatches = want.iter().zip(&got).filter(|(w, g)| w != g).count();
                        assert_eq!(
                            mismatches,
                            0,
                            "{limbs} x {bits}-bit Q, t = {t}, path {:?}",
                            s.path()
                        );
                    }
                }
                checked += N;
            }
            assert!(checked >= 100_000);
        }
    }
}

/// Complex scaling: `[round(t x / Q)]_P` for x uniform in `[0, QP)` over `Q ∪ P`.
#[test]
fn complex_scaling_matches_bigint() {
    let mut rng = ChaCha20Rng::seed_from_u64(0xc0111e);
    // (bits of Q, limbs of Q, bits of P, limbs of P, t)
    let configs = [
        (30u32, 3usize, 30u32, 4usize, 65537u64),
        (45, 2, 50, 3, 2),
        (45, 5, 60, 6, (1 << 20) + 7),
        (60, 4, 60, 5, 65537),
        (55, 10, 60, 11, T59),
        (61, 3, 30, 2, 3),
        (60, 2, 45, 3, MAX_PLAINTEXT_MODULUS),
    ];
    for (qbits, k, pbits, kp, t) in configs {
        let qm = primes(qbits, k, &[]);
        let pm = primes(pbits, kp, &qm);
        let (q, p) = (basis(&qm), basis(&pm));
        let all: Vec<u64> = qm.iter().chain(&pm).copied().collect();
        let crt = Crt::new(&all);
        let qbig: BigUint = qm.iter().map(|&v| BigUint::from(v)).product();
        let mut scalers = vec![ComplexScaler::new(&q, &p, t).unwrap()];
        let auto_path = scalers[0].path();
        assert_eq!(
            auto_path,
            if qbits <= 47 {
                FractionPath::Float
            } else {
                FractionPath::Wide
            }
        );
        if auto_path == FractionPath::Float {
            scalers.push(ComplexScaler::with_path(&q, &p, t, FractionPath::Wide).unwrap());
        }
        let qp = scalers[0].extended_basis().clone();
        assert_eq!(qp.values(), all);
        for round in 0..POLYS {
            let x = random_poly(&qp, &mut rng);
            let xs = crt.reconstruct(x.data(), N);
            let want: Vec<BigUint> = xs.par_iter().map(|xi| round_scaled(xi, t, &qbig)).collect();
            for s in &scalers {
                let got = s.scale(&x).unwrap();
                assert_eq!(got.basis().values(), pm);
                if round == 0 {
                    // The two-part entry point agrees with the concatenated one.
                    let n = N;
                    let xq = Poly::from_data(&q, x.data()[..k * n].to_vec()).unwrap();
                    let xp = Poly::from_data(&p, x.data()[k * n..].to_vec()).unwrap();
                    assert_eq!(s.scale_parts(&xq, &xp).unwrap(), got);
                }
                let mismatches: usize = pm
                    .par_iter()
                    .enumerate()
                    .map(|(j, &pj)| {
                        let limb = got.limb(j).unwrap();
                        want.iter()
                            .zip(limb)
                            .filter(|(w, &g)| (*w % pj).to_u64().unwrap() != g)
                            .count()
                    })
                    .sum();
                assert_eq!(
                    mismatches,
                    0,
                    "Q {k} x {qbits} bits, P {kp} x {pbits} bits, t = {t}, path {:?}",
                    s.path()
                );
            }
        }
    }
}

/// Complex scaling in the HPS setting of BFV multiplication: x in `[-QP/2t, QP/2t)` (given by its
/// residues, centered input), result read back as the integer `round(t x / Q)` in `[-P/2, P/2)`.
#[test]
fn complex_scaling_hps_range() {
    let mut rng = ChaCha20Rng::seed_from_u64(77);
    let qm = primes(60, 3, &[]);
    let pm = primes(60, 4, &qm);
    let (q, p) = (basis(&qm), basis(&pm));
    let t = 65537u64;
    let s = ComplexScaler::new(&q, &p, t).unwrap();
    let qbig: BigInt = qm.iter().map(|&v| BigInt::from(v)).product();
    let pbig: BigInt = pm.iter().map(|&v| BigInt::from(v)).product();
    let bound = &qbig * &pbig / (2 * t);
    let crt_p = Crt::new(&pm);
    // A few thousand signed values, including the ends of the range.
    let mut xs: Vec<BigInt> = (0..N - 4)
        .map(|_| {
            let r: BigInt = rng.gen_bigint_range(&-bound.clone(), &bound);
            r
        })
        .collect();
    // Near the ends of the range. The exact ends are not used: P is odd, so t x / Q = -P/2 + O(t/Q) there
    // lies within t/Q of a half-integer, inside the boundary region where any finite-precision rounding
    // (the wide path's is below the exact sum by < k 2^-66) may round the other way. A quarter away:
    let quarter = &qbig / (4 * t);
    xs.extend([
        -&bound + &quarter,
        &bound - 1 - &quarter,
        BigInt::zero(),
        BigInt::from(-1),
    ]);
    let all: Vec<u64> = qm.iter().chain(&pm).copied().collect();
    let data: Vec<u64> = all
        .iter()
        .flat_map(|&m| {
            let mb = BigInt::from(m);
            xs.iter()
                .map(move |x| x.mod_floor(&mb).to_u64().unwrap())
                .collect::<Vec<_>>()
        })
        .collect();
    let x = Poly::from_data(s.extended_basis(), data).unwrap();
    let y = s.scale(&x).unwrap();
    let ys = crt_p.reconstruct(y.data(), N);
    let half_p = BigInt::from(crt_p.modulus.clone()) / 2;
    for (xi, yi) in xs.iter().zip(ys) {
        let mut yc = BigInt::from(yi);
        if yc > half_p {
            yc -= &pbig;
        }
        // round(t x / Q) = floor((2 t x + Q) / 2Q) for signed x.
        let want = (xi * (2 * t) + &qbig).div_floor(&(&qbig * 2));
        assert_eq!(yc, want);
    }
}

use num_bigint::RandBigInt;

/// Inputs close to the rounding boundary: `t x / Q = m + 1/2 +- delta` for random m. Both paths must be
/// exact for delta well above their error bound (float: below 2^-46 for 10 limbs; wide: below the exact
/// sum by less than k 2^-66).
#[test]
fn simple_scaling_near_half_integers() {
    let mut rng = ChaCha20Rng::seed_from_u64(0xba1f);
    let cases = [
        (45u32, 10usize, FractionPath::Float, 40u32),
        (45, 10, FractionPath::Wide, 60),
        (60, 10, FractionPath::Wide, 60),
        (61, 4, FractionPath::Wide, 62),
    ];
    for (bits, limbs, path, delta_log) in cases {
        let moduli = primes(bits, limbs, &[]);
        let q = basis(&moduli);
        let qbig: BigUint = moduli.iter().map(|&v| BigUint::from(v)).product();
        for t in [2u64, 65537, T59] {
            let s = SimpleScaler::with_path(&q, t, path).unwrap();
            // x = ((m + 1/2 +- delta) Q) / t, rounded to an integer: the rounding moves t x / Q by < t/Q.
            let xs: Vec<BigUint> = (0..N)
                .map(|c| {
                    let m = rng.gen_biguint_below(&BigUint::from(t));
                    let num = (m * 2u32 + 1u32) * &qbig;
                    let target = &num << (delta_log as usize);
                    let shift = &qbig * 2u32;
                    let target = if c % 2 == 0 {
                        target + shift
                    } else {
                        target - shift
                    };
                    target / (BigUint::from(t) << (delta_log as usize + 1))
                })
                .collect();
            let data: Vec<u64> = moduli
                .iter()
                .flat_map(|&m| xs.iter().map(move |x| (x % m).to_u64().unwrap()))
                .collect();
            let got = s.scale(&Poly::from_data(&q, data).unwrap()).unwrap();
            for (x, g) in xs.iter().zip(got) {
                let want = (round_scaled(x, t, &qbig) % t).to_u64().unwrap();
                assert_eq!(
                    g, want,
                    "{limbs} x {bits} bits, t = {t}, {path:?}, delta 2^-{delta_log}"
                );
            }
        }
    }
}

/// A literal HPS Section 2.3 implementation with one `f64` per `theta_i` and `f64` accumulation, to
/// show why the wide path exists: count its mismatches against the exact rounding.
fn naive_f64_mismatches(bits: u32, limbs: usize, t: u64, rng: &mut ChaCha20Rng) -> (usize, usize) {
    let moduli = primes(bits, limbs, &[]);
    let q = basis(&moduli);
    let crt = Crt::new(&moduli);
    let tm = Modulus::new(t).unwrap();
    // theta_i in [-1/2, 1/2) as the nearest double, omega_i = t qtilde_i / q_i - theta_i.
    let (mut omega, mut theta) = (Vec::new(), Vec::new());
    for (qi, qt) in q.moduli().iter().zip(q.qhat_inv()) {
        let prod = t as u128 * qt.value as u128;
        let (mut w, rho) = (
            (prod / qi.value() as u128) as u64,
            (prod % qi.value() as u128) as u64,
        );
        let num = BigUint::from(rho) << 128u32;
        let fixed = (num / qi.value()).to_u128().unwrap();
        let mut th = fixed as f64 * 2f64.powi(-128);
        if 2 * rho >= qi.value() {
            th -= 1.0;
            w += 1;
        }
        omega.push(w % t);
        theta.push(th);
    }
    let mut total = 0;
    let mut mismatches = 0;
    for _ in 0..POLYS {
        let x = random_poly(&q, rng);
        let xs = crt.reconstruct(x.data(), N);
        for (c, xi) in xs.iter().enumerate() {
            let mut v = 0f64;
            let mut w = 0u64;
            for (i, m) in q.moduli().iter().enumerate() {
                // Centered residues (|x_i| < q_i / 2, as in the HPS error analysis): shifting x_i by q_i
                // shifts the sum by t qtilde_i, a multiple of t.
                let xc = m.center(x.limb(i).unwrap()[c]);
                v += xc as f64 * theta[i];
                w = tm.add(w, tm.mul(tm.reduce_i64(xc), omega[i]));
            }
            let got = tm.add(w, tm.reduce_i64(v.round() as i64));
            let want = (round_scaled(xi, t, &crt.modulus) % t).to_u64().unwrap();
            total += 1;
            mismatches += (got != want) as usize;
        }
    }
    (mismatches, total)
}

#[test]
fn naive_f64_fails_for_wide_moduli() {
    let mut rng = ChaCha20Rng::seed_from_u64(0xf64);
    let mut report = Vec::new();
    for bits in [30u32, 45, 55, 60] {
        let (bad, total) = naive_f64_mismatches(bits, 5, 65537, &mut rng);
        report.push((bits, bad, total));
    }
    for (bits, bad, total) in &report {
        println!("naive f64 HPS simple scaling, 5 x {bits}-bit moduli, t = 65537: {bad} / {total} mismatches");
    }
    // 60-bit moduli: the f64 error of sum x_i theta_i is far above 1, most results are wrong.
    let (_, bad60, total60) = report[3];
    assert!(bad60 > total60 / 2, "{bad60} / {total60}");
    // 55-bit moduli: errors of order 2^0; 45-bit: still visible on uniform inputs.
    assert!(report[2].1 > 1000);
    assert!(report[1].1 > 0);
}

/// RNS gadget: `sum_j [x]_{Q_j} g_j = x mod Q_l` for several L, every dnum and every prefix, with the
/// constants checked against their big-integer definition.
#[test]
fn rns_gadget_reconstruction() {
    let mut rng = ChaCha20Rng::seed_from_u64(0x6ad6e7);
    let n = 16usize;
    for l in [1usize, 3, 5, 8] {
        let moduli = ntt_primes_of_bits(50, 2 * n as u64, l, &[]).unwrap();
        let special = ntt_primes_of_bits(55, 2 * n as u64, 2, &[]).unwrap();
        let q = RnsBasis::new(n, &moduli).unwrap();
        let p = RnsBasis::new(n, &special).unwrap();
        for dnum in 1..=l {
            let g = RnsGadget::new(&q, dnum).unwrap();
            assert_eq!(g.alpha(), l.div_ceil(dnum));
            // Full-chain constants: g_j = (Q/Q_j) [(Q/Q_j)^-1]_{Q_j}, and P g_j over Q ∪ P.
            let qbig: BigUint = moduli.iter().map(|&v| BigUint::from(v)).product();
            let pbig: BigUint = special.iter().map(|&v| BigUint::from(v)).product();
            let special_constants = g.special_constants(&p).unwrap();
            for (j, r) in g.groups().iter().enumerate() {
                let qj: BigUint = moduli[r.clone()]
                    .iter()
                    .map(|&v| BigUint::from(v))
                    .product();
                let co = &qbig / &qj;
                let gj = &co * (&co % &qj).modinv(&qj).unwrap();
                for (i, &m) in moduli.iter().enumerate() {
                    assert_eq!(g.constant(j).unwrap()[i], (&gj % m).to_u64().unwrap());
                }
                for (i, &m) in moduli.iter().chain(&special).enumerate() {
                    assert_eq!(special_constants[j][i], (&pbig * &gj % m).to_u64().unwrap());
                }
            }
            for limbs in 1..=l {
                let ql = q.prefix(limbs).unwrap();
                let crt = Crt::new(&moduli[..limbs]);
                let x = random_poly_n(&ql, &mut rng);
                let digits = g.decompose(&x).unwrap();
                assert_eq!(digits.len(), g.group_count_at(limbs).unwrap());
                let xs = crt.reconstruct(x.data(), n);
                let mut acc = vec![BigUint::zero(); n];
                for (j, (d, r)) in digits.iter().zip(g.groups_at(limbs).unwrap()).enumerate() {
                    assert_eq!(d.basis().values(), moduli[r.clone()].to_vec());
                    assert_eq!(d.data(), &x.data()[r.start * n..r.end * n]);
                    // The prefix-level constant is the restriction of the full one.
                    let qlj: BigUint = moduli[r.clone()]
                        .iter()
                        .map(|&v| BigUint::from(v))
                        .product();
                    let co = &crt.modulus / &qlj;
                    let glj = &co * (&co % &qlj).modinv(&qlj).unwrap();
                    for (i, &m) in moduli[..limbs].iter().enumerate() {
                        assert_eq!(g.constant(j).unwrap()[i], (&glj % m).to_u64().unwrap());
                    }
                    let dcrt = Crt::new(&moduli[r.clone()]);
                    for (a, dv) in acc.iter_mut().zip(dcrt.reconstruct(d.data(), n)) {
                        *a += dv * &glj;
                    }
                }
                for (a, xv) in acc.iter().zip(&xs) {
                    assert_eq!(
                        &(a % &crt.modulus),
                        xv,
                        "L = {l}, dnum = {dnum}, limbs = {limbs}"
                    );
                }
                // Decomposition is form-agnostic.
                let ntt_digits = g.decompose(&x.clone().into_ntt()).unwrap();
                for (a, b) in ntt_digits.into_iter().zip(&digits) {
                    assert_eq!(&a.into_coeff(), b);
                }
            }
        }
        assert!(matches!(
            RnsGadget::new(&q, 0),
            Err(Error::InvalidDnum { dnum: 0, .. })
        ));
        assert!(matches!(
            RnsGadget::new(&q, l + 1),
            Err(Error::InvalidDnum { .. })
        ));
    }
}

fn random_poly_n(b: &Arc<RnsBasis>, rng: &mut ChaCha20Rng) -> Poly<Coeff> {
    random_poly(b, rng)
}

/// Signed digits: range of every digit, exact reconstruction as integers, approximate error bound.
#[test]
fn signed_digits_exact_and_approximate() {
    let mut rng = ChaCha20Rng::seed_from_u64(0xd161);
    for bits in [12u32, 20, 31, 40, 50, 59, 61] {
        let q = ntt_primes_of_bits(bits, 32, 1, &[]).unwrap()[0];
        let m = Modulus::new(q).unwrap();
        for base_log in [1u32, 2, 3, 4, 7, 8, 10, 16, 20, 31, 62] {
            let needed = bits.div_ceil(base_log) as usize;
            for count in [1usize, needed.saturating_sub(1).max(1), needed, needed + 1] {
                let d = SignedDigits::new(m, base_log, count).unwrap();
                assert_eq!(d.is_exact(), count * base_log as usize >= bits as usize);
                let base = BigInt::one() << base_log;
                let half = BigInt::one() << (base_log - 1);
                let qb = BigInt::from(q);
                let mut digits = vec![0i64; count];
                let values = (0..300).map(|_| rng.gen_range(0..q)).chain([
                    0,
                    1,
                    q - 1,
                    q / 2,
                    q / 2 + 1,
                    (q - 1) / 2,
                ]);
                for v in values {
                    d.decompose_into(v, &mut digits).unwrap();
                    for &dk in &digits {
                        let dk = BigInt::from(dk);
                        assert!(dk >= -half.clone() && dk < half, "digit range");
                    }
                    // Integer value of the kept digits, at their positions B^(dropped + k).
                    let sum: BigInt = digits
                        .iter()
                        .enumerate()
                        .map(|(k, &dk)| BigInt::from(dk) * base.pow((d.dropped() + k) as u32))
                        .sum();
                    let e = (BigInt::from(v) - &sum).mod_floor(&qb);
                    let e = if e > &qb / 2 { e - &qb } else { e };
                    assert!(
                        e.magnitude() <= &BigUint::from(d.error_bound()),
                        "q = {q}, base 2^{base_log}, {count} digits, v = {v}: error {e}"
                    );
                    if d.is_exact() {
                        assert!(e.is_zero());
                        // The centered representative is used whenever it fits, so |sum| <= q.
                        assert!(sum.magnitude() <= &BigUint::from(q));
                        if base_log >= 2 && count * (base_log as usize) > bits as usize {
                            let centered = m.center(v);
                            assert_eq!(sum, BigInt::from(centered), "v = {v}");
                        }
                    }
                    let expect = (BigInt::from(v) - e).mod_floor(&qb).to_u64().unwrap();
                    assert_eq!(d.recompose(&digits).unwrap(), expect);
                    for (k, &gk) in d.gadget().iter().enumerate() {
                        let want = base.pow((d.dropped() + k) as u32).mod_floor(&qb);
                        assert_eq!(BigInt::from(gk), want);
                    }
                }
                let slice: Vec<u64> = (0..50).map(|_| rng.gen_range(0..q)).collect();
                let by_digit = d.decompose_slice(&slice);
                for (i, &v) in slice.iter().enumerate() {
                    d.decompose_into(v, &mut digits).unwrap();
                    for (k, &dk) in digits.iter().enumerate() {
                        assert_eq!(by_digit[k][i], dk);
                    }
                }
            }
        }
    }
}

/// Per-limb RNS digits: `sum_{i,k} d_{i,k} g_{i,k} = x mod Q` in big integers, small coefficients that
/// agree across limbs. The mixed-size bases exercise both paths of `lift_row`: digits up to `2 q_j` in
/// magnitude (sign correction and one subtraction) and larger ones (full reduction), among them the plain
/// CRT decomposition (one digit of the widest modulus' size) of 55- and 54-bit primes as in BFV.
#[test]
fn rns_signed_digits_reconstruction() {
    let mut rng = ChaCha20Rng::seed_from_u64(0x5d);
    let n = 32usize;
    let of_bits = |sizes: &[(u32, usize)]| {
        let mut moduli: Vec<u64> = Vec::new();
        for &(bits, count) in sizes {
            let found = ntt_primes_of_bits(bits, 2 * n as u64, count, &moduli).unwrap();
            moduli.extend(found);
        }
        moduli
    };
    for (sizes, base_log, count) in [
        (vec![(50u32, 4usize)], 10u32, 5usize),
        (vec![(30, 3)], 7, 5),
        (vec![(60, 2)], 20, 3),
        (vec![(55, 2), (54, 2)], 55, 1),
        (vec![(50, 1), (30, 2)], 50, 1),
        (vec![(60, 1), (20, 1)], 30, 2),
    ] {
        let moduli = of_bits(&sizes);
        let limbs = moduli.len();
        let q = RnsBasis::new(n, &moduli).unwrap();
        let dec = RnsSignedDigits::new(&q, base_log, count).unwrap();
        for level in 1..=limbs {
            let ql = q.prefix(level).unwrap();
            let crt = Crt::new(&moduli[..level]);
            let x = random_poly_n(&ql, &mut rng);
            let digits = dec.decompose(&x).unwrap();
            assert_eq!(digits.len(), level * count);
            let xs = crt.reconstruct(x.data(), n);
            let half = 1i64 << (base_log - 1);
            let mut acc = vec![BigInt::zero(); n];
            for i in 0..level {
                for k in 0..count {
                    let dp = &digits[i * count + k];
                    assert_eq!(dp.basis().values(), moduli[..level].to_vec());
                    // Gadget g_{i,k} = (Q/q_i)[(Q/q_i)^-1]_{q_i} B^k as a big integer, checked against
                    // its residues.
                    let qi = BigUint::from(moduli[i]);
                    let co = &crt.modulus / &qi;
                    let gik = BigInt::from(&co * (&co % &qi).modinv(&qi).unwrap())
                        << (base_log as usize * k);
                    let res = dec.gadget_residues(i, k, level).unwrap();
                    for (j, &m) in moduli[..level].iter().enumerate() {
                        assert_eq!(BigInt::from(res[j]), gik.mod_floor(&BigInt::from(m)));
                    }
                    let m0 = Modulus::new(moduli[0]).unwrap();
                    for (c, a) in acc.iter_mut().enumerate() {
                        let small = m0.center(dp.limb(0).unwrap()[c]);
                        assert!((-half..half).contains(&small));
                        for (j, m) in ql.moduli().iter().enumerate() {
                            assert_eq!(dp.limb(j).unwrap()[c], m.reduce_i64(small));
                        }
                        *a += BigInt::from(small) * &gik;
                    }
                }
            }
            let qb = BigInt::from(crt.modulus.clone());
            for (a, xv) in acc.iter().zip(&xs) {
                assert_eq!(a.mod_floor(&qb), BigInt::from(xv.clone()));
            }
        }
        assert!(dec.gadget_residues(limbs, 0, limbs).is_err());
        assert!(dec.gadget_residues(0, count, limbs).is_err());
    }
    // Approximate per-limb digits are refused.
    let q = RnsBasis::new(16, &ntt_primes_of_bits(40, 32, 2, &[]).unwrap()).unwrap();
    assert!(matches!(
        RnsSignedDigits::new(&q, 8, 4),
        Err(Error::InvalidDigitDecomposition { .. })
    ));
    let other = RnsBasis::new(16, &ntt_primes_of_bits(41, 32, 2, &[]).unwrap()).unwrap();
    let dec = RnsSignedDigits::new(&q, 8, 5).unwrap();
    assert!(matches!(
        dec.decompose(&Poly::zero(&other)),
        Err(Error::BasisMismatch { .. })
    ));
}

/// Parameter errors are reported, never panics.
#[test]
fn scaler_errors() {
    let q = basis(&primes(40, 2, &[]));
    let p = basis(&primes(50, 2, &[]));
    for t in [0u64, 1, MAX_PLAINTEXT_MODULUS + 1, u64::MAX] {
        assert!(matches!(
            SimpleScaler::new(&q, t),
            Err(Error::InvalidPlaintextModulus { .. })
        ));
        assert!(matches!(
            ComplexScaler::new(&q, &p, t),
            Err(Error::InvalidPlaintextModulus { .. })
        ));
    }
    assert!(matches!(
        ComplexScaler::new(&q, &q, 65537),
        Err(Error::RepeatedModulus { .. })
    ));
    let wide = basis(&primes(55, 2, &[]));
    assert!(matches!(
        ComplexScaler::with_path(&wide, &p, 65537, FractionPath::Float),
        Err(Error::FloatScalingUnavailable { .. })
    ));
    // Float allowed when only P is wide: the fractions multiply residues of Q.
    assert_eq!(
        ComplexScaler::new(&q, &wide, 65537).unwrap().path(),
        FractionPath::Float
    );
    let s = ComplexScaler::new(&q, &p, 65537).unwrap();
    assert!(matches!(
        s.scale(&Poly::zero(&q)),
        Err(Error::BasisMismatch { .. })
    ));
    assert!(matches!(
        s.scale_parts(&Poly::zero(&p), &Poly::zero(&q)),
        Err(Error::BasisMismatch { .. })
    ));
    let simple = SimpleScaler::new(&q, 65537).unwrap();
    assert!(matches!(
        simple.scale(&Poly::zero(&p)),
        Err(Error::BasisMismatch { .. })
    ));
}
