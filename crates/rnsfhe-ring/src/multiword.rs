//! Multi-word little-endian unsigned integers as plain `u64` slices (least significant word first).
//!
//! Used by the exact Qu-Xu guard of [`crate::conversion`] and by the exact CRT composition of
//! [`crate::crt`]. Every function works on caller-provided buffers (no allocation) and documents the size
//! precondition it relies on; overflow is an internal invariant violation checked by `debug_assert!`.

use std::cmp::Ordering;

/// `acc += a * w` over equal lengths; the caller guarantees the result fits.
#[inline]
pub(crate) fn mac(acc: &mut [u64], a: &[u64], w: u64) {
    let mut carry = 0u64;
    for (slot, &ai) in acc.iter_mut().zip(a) {
        // (2^64 - 1)^2 + 2 (2^64 - 1) = 2^128 - 1: never overflows.
        let t = ai as u128 * w as u128 + *slot as u128 + carry as u128;
        *slot = t as u64;
        carry = (t >> 64) as u64;
    }
    debug_assert_eq!(carry, 0, "multi-word overflow");
}

/// `a *= w` in place; the caller guarantees the result fits.
pub(crate) fn mul_word(a: &mut [u64], w: u64) {
    let mut carry = 0u64;
    for slot in a.iter_mut() {
        let t = *slot as u128 * w as u128 + carry as u128;
        *slot = t as u64;
        carry = (t >> 64) as u64;
    }
    debug_assert_eq!(carry, 0, "multi-word overflow");
}

/// `dst = src * w` over equal lengths; the caller guarantees the result fits.
#[inline]
pub(crate) fn mul_word_into(dst: &mut [u64], src: &[u64], w: u64) {
    let mut carry = 0u64;
    for (d, &s) in dst.iter_mut().zip(src) {
        let t = s as u128 * w as u128 + carry as u128;
        *d = t as u64;
        carry = (t >> 64) as u64;
    }
    debug_assert_eq!(carry, 0, "multi-word overflow");
}

/// `dst = 2 * src`; the caller guarantees the result fits.
#[inline]
pub(crate) fn double(dst: &mut [u64], src: &[u64]) {
    let mut carry = 0u64;
    for (d, &s) in dst.iter_mut().zip(src) {
        *d = (s << 1) | carry;
        carry = s >> 63;
    }
    debug_assert_eq!(carry, 0, "multi-word overflow");
}

/// `a -= b` over equal lengths; the caller guarantees `a >= b`.
#[inline]
pub(crate) fn sub_assign(a: &mut [u64], b: &[u64]) {
    let mut borrow = false;
    for (x, &y) in a.iter_mut().zip(b) {
        let (d1, b1) = x.overflowing_sub(y);
        let (d2, b2) = d1.overflowing_sub(borrow as u64);
        *x = d2;
        borrow = b1 | b2;
    }
    debug_assert!(!borrow, "multi-word underflow");
}

/// `dst = a - b` over equal lengths; the caller guarantees `a >= b`.
#[inline]
pub(crate) fn sub_into(dst: &mut [u64], a: &[u64], b: &[u64]) {
    let mut borrow = false;
    for ((d, &x), &y) in dst.iter_mut().zip(a).zip(b) {
        let (d1, b1) = x.overflowing_sub(y);
        let (d2, b2) = d1.overflowing_sub(borrow as u64);
        *d = d2;
        borrow = b1 | b2;
    }
    debug_assert!(!borrow, "multi-word underflow");
}

/// Compares two numbers of the same length.
#[inline]
pub(crate) fn cmp(a: &[u64], b: &[u64]) -> Ordering {
    for (x, y) in a.iter().rev().zip(b.iter().rev()) {
        match x.cmp(y) {
            Ordering::Equal => continue,
            other => return other,
        }
    }
    Ordering::Equal
}

/// The top 64 significant bits of `a` with a sticky bit, and the power of two they are scaled by:
/// `a = m * 2^e + r` with `m` either 0 (when `a = 0`) or in `[2^63, 2^64)` (when `a >= 2^63`), and
/// `0 <= r < 2^e`; the lowest bit of `m` is set when `r != 0` (sticky), so that converting `m` to `f64`
/// (round to nearest even over 64 bits, of which 11 are dropped) rounds `a / 2^e` correctly.
///
/// Values below `2^64` are returned as `(a, 0)` exactly.
#[inline]
pub(crate) fn top_bits_sticky(a: &[u64]) -> (u64, i32) {
    let Some(top) = a.iter().rposition(|&w| w != 0) else {
        return (0, 0);
    };
    if top == 0 {
        return (a[0], 0);
    }
    let lz = a[top].leading_zeros();
    let (m, below) = if lz == 0 {
        (a[top], a[top - 1])
    } else {
        ((a[top] << lz) | (a[top - 1] >> (64 - lz)), a[top - 1] << lz)
    };
    let sticky = below != 0 || a[..top - 1].iter().any(|&w| w != 0);
    let e = 64 * top as i32 - lz as i32;
    (m | sticky as u64, e)
}

/// The CRT constants of the moduli `values` as little-endian multi-word integers of `words` words each:
/// `Q = prod q_i` and the `l` values `qhat_i = Q / q_i` (concatenated, `l x words`).
/// `words` must leave room for `Q` (callers add spare words for their own sums).
pub(crate) fn crt_products(values: &[u64], words: usize) -> (Vec<u64>, Vec<u64>) {
    let mut q = vec![0u64; words];
    q[0] = 1;
    for &qi in values {
        mul_word(&mut q, qi);
    }
    let mut qhat = vec![0u64; values.len() * words];
    for (i, chunk) in qhat.chunks_exact_mut(words).enumerate() {
        chunk[0] = 1;
        for (j, &qj) in values.iter().enumerate() {
            if j != i {
                mul_word(chunk, qj);
            }
        }
    }
    (q, qhat)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sub_and_top_bits() {
        let mut a = [u64::MAX, 5, 1, 0];
        let b = [1u64, 6, 0, 0];
        let mut d = [0u64; 4];
        sub_into(&mut d, &a, &b);
        assert_eq!(d, [u64::MAX - 1, u64::MAX, 0, 0]);
        sub_assign(&mut a, &b);
        assert_eq!(a, d);
        assert_eq!(top_bits_sticky(&[0, 0]), (0, 0));
        assert_eq!(top_bits_sticky(&[7, 0]), (7, 0));
        // 2^64 + 1: top bits 2^63 with the sticky bit, scaled by 2^1.
        assert_eq!(top_bits_sticky(&[1, 1, 0]), ((1 << 63) | 1, 1));
        assert_eq!(top_bits_sticky(&[0, 1, 0]), (1 << 63, 1));
        assert_eq!(top_bits_sticky(&[0, 0, 1]), (1 << 63, 65));
        assert_eq!(top_bits_sticky(&[0, 0, 1 << 63]), (1 << 63, 128));
        assert_eq!(top_bits_sticky(&[1, 0, 1 << 63]), ((1 << 63) | 1, 128));
        let mut p = [0u64; 3];
        mul_word_into(&mut p, &[u64::MAX, 1, 0], 3);
        assert_eq!(p, [u64::MAX - 2, 5, 0]);
    }
}
