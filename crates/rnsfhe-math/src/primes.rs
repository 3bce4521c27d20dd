//! Prime search: deterministic Miller-Rabin, NTT-friendly primes near powers of two (RNS-CKKS Appendix B),
//! the Qu-Xu eta search and prime generation (Qu-Xu Algorithms 2 and 3), and generic NTT primes.

use crate::error::{Error, Result};
use crate::modulus::MAX_MODULUS_BITS;

/// Deterministic Miller-Rabin primality test for all 64-bit integers.
///
/// The bases {2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37} are a witness set for every `n < 3.3 * 10^24`.
pub fn is_prime(n: u64) -> bool {
    const BASES: [u64; 12] = [2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37];
    if n < 2 {
        return false;
    }
    for &b in &BASES {
        if n.is_multiple_of(b) {
            return n == b;
        }
    }
    let mul = |a: u64, b: u64| (a as u128 * b as u128 % n as u128) as u64;
    let pow = |mut a: u64, mut e: u64| {
        let mut r = 1u64;
        while e > 0 {
            if e & 1 == 1 {
                r = mul(r, a);
            }
            a = mul(a, a);
            e >>= 1;
        }
        r
    };
    let s = (n - 1).trailing_zeros();
    let d = (n - 1) >> s;
    'witness: for &a in &BASES {
        let mut x = pow(a, d);
        if x == 1 || x == n - 1 {
            continue;
        }
        for _ in 1..s {
            x = mul(x, x);
            if x == n - 1 {
                continue 'witness;
            }
        }
        return false;
    }
    true
}

fn check_two_n(two_n: u64) -> Result<()> {
    if two_n < 2 || !two_n.is_power_of_two() || two_n > 1 << 20 {
        return Err(Error::OutOfRange {
            what: "2N",
            value: two_n as f64,
            min: 2.0,
            max: (1u64 << 20) as f64,
        });
    }
    Ok(())
}

fn check_bits(bits: u32, min: u32) -> Result<()> {
    if bits < min || bits > MAX_MODULUS_BITS {
        return Err(Error::OutOfRange {
            what: "prime bit size",
            value: bits as f64,
            min: min as f64,
            max: MAX_MODULUS_BITS as f64,
        });
    }
    Ok(())
}

/// Walks the candidates `p = 1 mod 2N` starting at `start` (itself `= 1 mod 2N`) upwards or downwards,
/// staying inside `[lo, hi]`, and returns the next prime not in `exclude`.
fn next_ntt_prime(
    start: u64,
    two_n: u64,
    upwards: bool,
    lo: u64,
    hi: u64,
    exclude: &[u64],
) -> Option<u64> {
    let mut c = start;
    loop {
        if c < lo || c > hi {
            return None;
        }
        if is_prime(c) && !exclude.contains(&c) {
            return Some(c);
        }
        c = if upwards {
            c.checked_add(two_n)?
        } else {
            c.checked_sub(two_n)?
        };
    }
}

/// `count` distinct primes `p = 1 mod 2N` closest to `2^bits`, for the RNS-CKKS moduli chain (Appendix B).
///
/// Primes are taken alternately above and below `2^bits`, choosing at each step the side that brings the
/// running product back towards `2^(bits * i)`, so that the ratio of any prefix product to the matching
/// power of two stays close to 1 (rescaling by a prime then divides the scale by almost exactly `2^bits`).
/// Every returned prime lies below `2^62`.
pub fn ntt_primes_near_power_of_two(bits: u32, two_n: u64, count: usize) -> Result<Vec<u64>> {
    check_two_n(two_n)?;
    check_bits(bits, 10)?;
    let target = 1u64 << bits;
    if two_n >= target >> 1 {
        return Err(Error::NotEnoughPrimes {
            requested: count,
            found: 0,
            bits,
            two_n,
            detail: format!(": 2N must be well below 2^{bits} for primes p = 1 mod 2N near it"),
        });
    }
    let lo = target >> 1;
    let hi = ((1u64 << MAX_MODULUS_BITS) - 1).min(target.saturating_mul(2) - 1);
    let mut above = next_ntt_prime(target + 1, two_n, true, lo, hi, &[]);
    let mut below = next_ntt_prime(target + 1 - two_n, two_n, false, lo, hi, &[]);
    let mut out = Vec::with_capacity(count.min(1024));
    // log2 of the running product divided by 2^(bits * i), kept in floating point only to pick a side.
    let mut drift = 0.0f64;
    while out.len() < count {
        let pick_above = match (above, below) {
            (Some(_), None) => true,
            (None, Some(_)) => false,
            (Some(_), Some(_)) => drift <= 0.0,
            (None, None) => {
                return Err(Error::NotEnoughPrimes {
                    requested: count,
                    found: out.len(),
                    bits,
                    two_n,
                    detail: format!(" in [2^{}, 2^{})", bits - 1, bits + 1),
                })
            }
        };
        let p = if pick_above { above } else { below }.unwrap_or(target);
        drift += (p as f64 / target as f64).log2();
        out.push(p);
        if pick_above {
            above = p
                .checked_add(two_n)
                .and_then(|s| next_ntt_prime(s, two_n, true, lo, hi, &[]));
        } else {
            below = p
                .checked_sub(two_n)
                .and_then(|s| next_ntt_prime(s, two_n, false, lo, hi, &[]));
        }
    }
    Ok(out)
}

/// `count` distinct NTT primes of exactly `bits` bits (`p = 1 mod 2N`), largest first, skipping `exclude`.
///
/// For special (key-switching) moduli and BFV moduli, where closeness to a power of two does not matter.
pub fn ntt_primes_of_bits(
    bits: u32,
    two_n: u64,
    count: usize,
    exclude: &[u64],
) -> Result<Vec<u64>> {
    check_two_n(two_n)?;
    check_bits(bits, 2)?;
    let lo = 1u64 << (bits - 1);
    let hi = (1u64 << bits) - 1;
    let mut out = Vec::with_capacity(count.min(1024));
    // Largest candidate = 1 mod 2N below 2^bits.
    let mut next = if hi > two_n {
        Some((hi - 1) / two_n * two_n + 1)
    } else {
        None
    };
    while out.len() < count {
        let excluded: Vec<u64> = exclude.iter().chain(out.iter()).copied().collect();
        match next.and_then(|s| next_ntt_prime(s, two_n, false, lo, hi, &excluded)) {
            Some(p) => {
                out.push(p);
                next = p.checked_sub(two_n);
            }
            None => {
                return Err(Error::NotEnoughPrimes {
                    requested: count,
                    found: out.len(),
                    bits,
                    two_n,
                    detail: String::new(),
                })
            }
        }
    }
    Ok(out)
}

/// The interval `[2^m / (1 + 2^-eta), 2^m / (1 - 2^-eta)]` of Qu-Xu Section 3.3, as integers
/// `(ceil(lower), floor(upper))`, clipped to `[2, 2^62)`.
/// `eta` must be at least 1 (for `eta = 0` the upper bound is infinite); it is clamped to 1.
pub fn qu_xu_interval(m: u32, eta: u32) -> (u64, u64) {
    // eta beyond 64 would not narrow the interval below one integer for m < 62 anyway.
    let eta = eta.clamp(1, 64);
    // Exact rational bounds: 2^(m+eta) / (2^eta + 1) and 2^(m+eta) / (2^eta - 1), computed in u128.
    let num = 1u128 << (m + eta);
    let lo_den = (1u128 << eta) + 1;
    let hi_den = (1u128 << eta) - 1;
    let lo = num.div_ceil(lo_den);
    let hi = num / hi_den;
    let max = (1u128 << MAX_MODULUS_BITS) - 1;
    (lo.clamp(2, max) as u64, hi.clamp(2, max) as u64)
}

/// Number of primes `p = 1 mod 2N` in the Qu-Xu interval for `(m, eta)`, stopping once `cap` are found.
pub fn count_qu_xu_primes(m: u32, eta: u32, two_n: u64, cap: usize) -> usize {
    let (lo, hi) = qu_xu_interval(m, eta);
    let mut c = (hi - 1) / two_n * two_n + 1;
    let mut found = 0;
    while c >= lo && found < cap {
        if is_prime(c) {
            found += 1;
        }
        match c.checked_sub(two_n) {
            Some(next) => c = next,
            None => break,
        }
    }
    found
}

fn check_qu_xu_inputs(m: u32, two_n: u64, count: usize) -> Result<()> {
    check_two_n(two_n)?;
    check_bits(m, 10)?;
    if count == 0 {
        return Err(Error::OutOfRange {
            what: "number of primes L",
            value: 0.0,
            min: 1.0,
            max: f64::INFINITY,
        });
    }
    Ok(())
}

/// Qu-Xu Algorithm 2: the largest `eta` such that at least `count` primes `p = 1 mod 2N` lie in
/// `[2^m / (1 + 2^-eta), 2^m / (1 - 2^-eta)]`, found by binary search.
///
/// Larger `eta` means primes closer to `2^m`, hence a smaller failure probability of the integer-only
/// error term (Theorem 1: it is exact with probability above `1 - r` once `eta > log2((r + l) / r)`).
pub fn qu_xu_max_eta(m: u32, two_n: u64, count: usize) -> Result<u32> {
    check_qu_xu_inputs(m, two_n, count)?;
    // eta_r: the interval is narrower than 2N beyond eta = m - log2(2N), so at most one candidate lies in it.
    let mut eta_l = 1u32;
    let mut eta_r = m.saturating_sub(two_n.trailing_zeros()).max(2);
    if count_qu_xu_primes(m, eta_l, two_n, count) < count {
        return Err(Error::NotEnoughPrimes {
            requested: count,
            found: count_qu_xu_primes(m, eta_l, two_n, count),
            bits: m,
            two_n,
            detail: format!(" within a factor 2^-1 of 2^{m} (Qu-Xu Algorithm 2 has no eta >= 1)"),
        });
    }
    while eta_l < eta_r {
        let eta_m = (eta_l + eta_r) / 2;
        let c_m = count_qu_xu_primes(m, eta_m, two_n, count);
        let c_m1 = count_qu_xu_primes(m, eta_m + 1, two_n, count);
        if c_m >= count && c_m1 < count {
            return Ok(eta_m);
        } else if c_m < count {
            eta_r = eta_m;
        } else {
            eta_l = eta_m + 1;
        }
    }
    Ok(eta_l)
}

/// Qu-Xu Algorithm 3: the first `count` primes `p = 1 mod 2N` found walking down from
/// `2N * floor(upper / 2N) + 1`, where `upper = 2^m / (1 - 2^-eta)`; all lie within `2^-eta` of `2^m`
/// (relative), which is checked.
pub fn qu_xu_primes(
    m: u32,
    eta: u32,
    two_n: u64,
    count: usize,
    exclude: &[u64],
) -> Result<Vec<u64>> {
    check_qu_xu_inputs(m, two_n, count)?;
    if eta == 0 || eta > 64 {
        return Err(Error::OutOfRange {
            what: "eta",
            value: eta as f64,
            min: 1.0,
            max: 64.0,
        });
    }
    let (lo, hi) = qu_xu_interval(m, eta);
    let mut out = Vec::with_capacity(count.min(1024));
    let mut c = hi / two_n * two_n + 1;
    if c > hi {
        c -= two_n;
    }
    while out.len() < count && c >= lo {
        if is_prime(c) && !exclude.contains(&c) {
            out.push(c);
        }
        match c.checked_sub(two_n) {
            Some(next) => c = next,
            None => break,
        }
    }
    if out.len() < count {
        return Err(Error::NotEnoughPrimes {
            requested: count,
            found: out.len(),
            bits: m,
            two_n,
            detail: format!(" in the Qu-Xu interval [{lo}, {hi}] for eta = {eta}"),
        });
    }
    Ok(out)
}

/// The closeness `eta` of a set of moduli to `2^m`: the largest integer `eta` with
/// `|2^m / q - 1| <= 2^-eta` for every `q` (0 if not even `eta = 1` holds for all of them).
pub fn closeness_eta(moduli: &[u64], m: u32) -> u32 {
    // eta = 0 would mean the unbounded interval [2^(m-1), inf); the search stops at 1.
    (1..=m)
        .rev()
        .find(|&eta| {
            let (lo, hi) = qu_xu_interval(m, eta);
            moduli.iter().all(|&q| q >= lo && q <= hi)
        })
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn miller_rabin_agrees_with_trial_division() {
        let naive = |n: u64| {
            n >= 2
                && (2..)
                    .take_while(|d| d * d <= n)
                    .all(|d| !n.is_multiple_of(d))
        };
        for n in 0..20_000u64 {
            assert_eq!(is_prime(n), naive(n), "n = {n}");
        }
        // Strong pseudoprimes to several bases and large known primes.
        assert!(!is_prime(3_215_031_751));
        assert!(!is_prime(3_825_123_056_546_413_051));
        assert!(is_prime((1 << 61) - 1));
        assert!(is_prime(0x7fffffffe90001));
        assert!(!is_prime(u64::MAX));
    }

    #[test]
    fn near_power_of_two_primes_are_closest_and_balanced() {
        for &(bits, log_n) in &[(55u32, 15u32), (50, 16), (40, 13), (60, 17)] {
            let two_n = 2u64 << log_n;
            let target = 1u64 << bits;
            let ps = ntt_primes_near_power_of_two(bits, two_n, 15).unwrap();
            let dev = |p: u64| (p as f64 / target as f64).log2();
            let worst = ps.iter().map(|&p| dev(p).abs()).fold(0.0, f64::max);
            let mut drift = 0.0f64;
            for (i, &p) in ps.iter().enumerate() {
                assert!(is_prime(p) && p % two_n == 1);
                assert!(ps[..i].iter().all(|&q| q != p));
                drift += dev(p);
                // the prefix products never drift further than a single prime deviates.
                assert!(
                    drift.abs() <= worst * 1.000_001,
                    "prefix {i}: drift {drift} > {worst}"
                );
            }
            // Closest: no unused NTT prime lies strictly between 2^bits and the farthest chosen on its side.
            let max_above = ps
                .iter()
                .copied()
                .filter(|&p| p > target)
                .max()
                .unwrap_or(target);
            let min_below = ps
                .iter()
                .copied()
                .filter(|&p| p < target)
                .min()
                .unwrap_or(target);
            let mut c = target + 1;
            while c <= max_above {
                assert!(!is_prime(c) || ps.contains(&c), "{c} skipped above");
                c += two_n;
            }
            let mut c = target + 1 - two_n;
            while c >= min_below {
                assert!(!is_prime(c) || ps.contains(&c), "{c} skipped below");
                c -= two_n;
            }
        }
    }

    #[test]
    fn paper_appendix_b_primes_are_found() {
        // RNS-CKKS Appendix B lists primes near 2^55 for N = 2^16 (2N = 2^17); the first ones of our search
        // are members of that neighbourhood and satisfy the same conditions.
        let ps = ntt_primes_near_power_of_two(55, 1 << 17, 15).unwrap();
        for p in ps {
            assert!(((p as f64) / 2f64.powi(55) - 1.0).abs() < 2f64.powi(-20));
        }
        assert!(is_prime(0x80000000080001));
    }

    #[test]
    fn primes_of_bits_have_exact_size() {
        let ps = ntt_primes_of_bits(60, 1 << 17, 6, &[]).unwrap();
        for (i, &p) in ps.iter().enumerate() {
            assert_eq!(64 - p.leading_zeros(), 60);
            assert!(is_prime(p) && p % (1 << 17) == 1);
            assert!(i == 0 || ps[i - 1] > p);
        }
        let excl = ntt_primes_of_bits(60, 1 << 17, 2, &ps[..3]).unwrap();
        assert_eq!(excl, ps[3..5].to_vec());
        assert!(matches!(
            ntt_primes_of_bits(18, 1 << 17, 3, &[]),
            Err(Error::NotEnoughPrimes { .. })
        ));
        assert!(matches!(
            ntt_primes_of_bits(63, 1 << 17, 1, &[]),
            Err(Error::OutOfRange { .. })
        ));
        assert!(matches!(
            ntt_primes_of_bits(40, 3, 1, &[]),
            Err(Error::OutOfRange { .. })
        ));
    }

    #[test]
    fn qu_xu_eta_search_is_maximal() {
        for &(m, log_n, l) in &[
            (50u32, 14u32, 10usize),
            (50, 14, 2),
            (55, 15, 20),
            (45, 16, 8),
        ] {
            let two_n = 2u64 << log_n;
            let eta = qu_xu_max_eta(m, two_n, l).unwrap();
            assert!(count_qu_xu_primes(m, eta, two_n, l) >= l);
            assert!(
                count_qu_xu_primes(m, eta + 1, two_n, l) < l,
                "eta {eta} not maximal"
            );
            let ps = qu_xu_primes(m, eta, two_n, l, &[]).unwrap();
            assert_eq!(ps.len(), l);
            assert!(closeness_eta(&ps, m) >= eta);
            assert_eq!(
                closeness_eta(&[1 << (m - 2)], m),
                0,
                "a factor 4 away fits no eta"
            );
            for &p in &ps {
                assert!(is_prime(p) && p % two_n == 1);
                let ratio = (1u64 << m) as f64 / p as f64;
                assert!((ratio - 1.0).abs() <= 2f64.powi(-(eta as i32)));
            }
        }
    }

    #[test]
    fn bad_search_arguments_are_errors() {
        assert!(matches!(
            qu_xu_primes(50, 0, 1 << 15, 3, &[]),
            Err(Error::OutOfRange { what: "eta", .. })
        ));
        assert!(matches!(
            qu_xu_primes(50, 65, 1 << 15, 3, &[]),
            Err(Error::OutOfRange { what: "eta", .. })
        ));
        assert!(matches!(
            ntt_primes_near_power_of_two(10, 1 << 20, 1),
            Err(Error::NotEnoughPrimes { .. })
        ));
        assert!(matches!(
            ntt_primes_of_bits(20, 1 << 11, usize::MAX, &[]),
            Err(Error::NotEnoughPrimes { .. })
        ));
        assert!(qu_xu_interval(40, 0).1 > qu_xu_interval(40, 0).0);
    }

    #[test]
    fn qu_xu_figure2_setting() {
        // Qu-Xu Fig. 2 and its discussion: N = 2^14, q = 2^50. The maximal eta drops by one from L = 2 to 3
        // and from L = 11 to 12 and nowhere else; the failure bound L 2^-eta / (1 - 2^-eta) stays below
        // 8e-8 up to L = 11 and roughly doubles at L = 12.
        let etas: Vec<u32> = (2..=20)
            .map(|l| qu_xu_max_eta(50, 1 << 15, l).unwrap())
            .collect();
        for (i, w) in etas.windows(2).enumerate() {
            let l_next = i + 3;
            let expected_drop = l_next == 3 || l_next == 12;
            assert_eq!(
                w[0] - w[1],
                expected_drop as u32,
                "eta from L = {} to {}: {:?}",
                l_next - 1,
                l_next,
                etas
            );
        }
        for l in 2..=11usize {
            let eta = etas[l - 2] as i32;
            let bound = l as f64 * 2f64.powi(-eta) / (1.0 - 2f64.powi(-eta));
            assert!(bound < 8e-8, "L = {l}: eta = {eta}, bound = {bound}");
        }
    }
}
