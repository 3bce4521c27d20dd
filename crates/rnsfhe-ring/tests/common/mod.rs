//! Big-integer references shared by the ring's integration tests.
#![allow(dead_code, clippy::unwrap_used)]

use num_bigint::BigUint;
use num_integer::Integer;
use num_traits::{ToPrimitive, Zero};

/// `a^e mod p` by square-and-multiply.
pub fn pow_mod(a: u64, mut e: u64, p: u64) -> u64 {
    let mut r = 1u128;
    let mut b = a as u128 % p as u128;
    while e > 0 {
        if e & 1 == 1 {
            r = r * b % p as u128;
        }
        b = b * b % p as u128;
        e >>= 1;
    }
    r as u64
}

/// Independent CRT reference for a list of primes.
pub struct Crt {
    pub moduli: Vec<u64>,
    pub q: BigUint,
    pub qhat: Vec<BigUint>,
    pub qhat_inv: Vec<u64>,
}

impl Crt {
    pub fn new(moduli: &[u64]) -> Self {
        let q = moduli.iter().fold(BigUint::from(1u32), |acc, &m| acc * m);
        let qhat: Vec<BigUint> = moduli.iter().map(|&m| &q / m).collect();
        let qhat_inv = moduli
            .iter()
            .zip(&qhat)
            .map(|(&m, h)| pow_mod((h % m).to_u64().unwrap(), m - 2, m))
            .collect();
        Self {
            moduli: moduli.to_vec(),
            q,
            qhat,
            qhat_inv,
        }
    }

    /// `y_i = [x_i qhat_i^-1]_{q_i}`.
    pub fn y(&self, residues: &[u64]) -> Vec<u64> {
        residues
            .iter()
            .zip(&self.moduli)
            .zip(&self.qhat_inv)
            .map(|((&x, &m), &w)| (x as u128 * w as u128 % m as u128) as u64)
            .collect()
    }

    /// `S = sum_i y_i qhat_i = X + alpha Q` with `X in [0, Q)`; returns `(S, X, alpha)`.
    pub fn fast_sum(&self, residues: &[u64]) -> (BigUint, BigUint, u64) {
        let s = self
            .y(residues)
            .iter()
            .zip(&self.qhat)
            .fold(BigUint::zero(), |acc, (&y, h)| acc + h * y);
        let (alpha, x) = s.div_rem(&self.q);
        (s, x, alpha.to_u64().unwrap())
    }

    pub fn reconstruct(&self, residues: &[u64]) -> BigUint {
        self.fast_sum(residues).1
    }

    pub fn residues_of(&self, x: &BigUint) -> Vec<u64> {
        self.moduli
            .iter()
            .map(|&m| (x % m).to_u64().unwrap())
            .collect()
    }

    /// The exact error term of conversion, `round(sum_i y_i / q_i) = floor((2S + Q) / 2Q)` with `S` the
    /// fast sum.
    pub fn round_error_term(&self, residues: &[u64]) -> u64 {
        let (s, _, _) = self.fast_sum(residues);
        let two_q = &self.q * 2u32;
        (s * 2u32 + &self.q).div_floor(&two_q).to_u64().unwrap()
    }
}
