//! The parameter generator of HPS Section 6.1 ([`BfvParams::generate`], with rotations budgeted) and the
//! presets of HPS Table 3 ([`BfvPreset`]).
//!
//! # What is promised
//!
//! [`BfvParams::generate`]`(t, L)` returns parameters on which every circuit of multiplicative depth `L`
//! (each product relinearized) decrypts correctly even when every ciphertext goes through one Galois
//! automorphism (a row rotation, the column swap) after encryption and after each multiplication, i.e.
//! `rotate, multiply, rotate, multiply, ..., multiply, rotate`. [`BfvParams::generate_with_rotations`]
//! budgets `r` such automorphisms per level instead of one; with `r = 0` it is the procedure of HPS
//! Section 6.1 unchanged, which reproduces the `(N, k)` of HPS Table 3 ([`BfvPreset`]). As in HPS, the
//! bound covers multiplications and key switches, not additions (adding `a` ciphertexts of a level adds
//! at most `log2(a)` bits to that level's noise).
//!
//! # Procedure (HPS Sections 5.1 and 6.1)
//!
//! For a plaintext modulus `t` and a multiplicative depth `L`, the generator walks the ring degrees
//! `N = 2^10, ..., 2^17` upwards and returns the first one for which a ciphertext modulus `Q` of `k`
//! primes of about [`PRIME_BITS`] = 55 bits both
//!
//! * satisfies the depth-`L` correctness condition of the HPS RNS variant, Eqs. (10)-(13):
//!   `C'_1^L V + L C'_1^(L-1) C'_2 < (Delta - r_t(Q)) / 4`, with the rotations budgeted as below, and
//! * stays within the 128-bit Homomorphic Encryption Standard bound on `log2(Q)` for a uniform ternary
//!   secret ([`rnsfhe_core::security::max_log_qp`]).
//!
//! `k` is the fewest primes whose nominal bit sizes cover the correctness bound ("the minimum ciphertext
//! modulus bitwidth that satisfied the correctness constraint for the lowest ring dimension", Section
//! 6.1). The `k` primes are 55-bit NTT primes, except that when `55 k` exceeds the HE Standard bound
//! their total bit size is capped at that bound and spread evenly (some primes of 54 bits).
//!
//! # Constants (HPS Section 6.1)
//!
//! * `delta = 2 sqrt(N)`: the heuristic expansion factor (`C = 2` in `delta = C sqrt(N)`).
//! * `sigma = 8 / sqrt(2 pi)` ([`crate::HPS_SIGMA`]), `B_e = 6 sigma`.
//! * Uniform ternary secret: `||s||_inf = 1`.
//! * `||epsilon_s||_inf < 1/4` (Section 5.1), so the factor `1 + 2 ||epsilon_s||` of Eq. (13) is `3/2`.
//! * Relinearization: `N` and `k` are chosen with base `w = 2^30` digits of each residue for depths up to
//!   10 and with the plain CRT decomposition (`w = 2^nu`, one digit per residue) beyond, as in HPS. For
//!   depths up to 10 the generator then keeps the CRT decomposition alone whenever it satisfies the same
//!   condition with the same `N` and primes: the digits only lower the relinearization noise (Eq. (13)),
//!   and when that margin is not needed they cost twice the key and twice the key-switching work for
//!   55-bit primes. HPS Table 3 (`t = 2`) needs the digits at every depth up to 10 (the CRT term would
//!   cost a prime), so its rows keep them; `t = 65537` at depths 1, 5 and 10 fits with the CRT
//!   decomposition (the `t^2` term of Eq. (13) dominates there), as OpenFHE's default BFV key switching
//!   does.
//! * Auxiliary basis: `P >= 2 t N Q`, primes of 56 bits.
//!
//! # Rotations (key switching of Galois automorphisms)
//!
//! A Galois automorphism `X -> X^g` keeps the infinity norm of the noise and of `s`, and its key switching
//! (the HPS key switching of relinearization, Sections 3.3 and 4.5, with `s(X^g)` in place of `s^2`) adds
//! the key-switching term of Eq. (13), `R = delta l_{w,2^nu} w k B_e` for base-`w` digits (`w = 2^nu`,
//! one digit, for the plain CRT decomposition). Relinearization adds the same term after the tensor
//! product, where the noise is already about `C'_1` times larger, so there it costs little; a rotation
//! of a fresh ciphertext adds it to the fresh noise `V`, and the next multiplication multiplies it by
//! `C'_1`. With plain CRT digits (`w ~ 2^55`) a rotation of a fresh ciphertext therefore costs as much
//! noise budget as a multiplication: 24 to 48 bits measured at `t = 65537`, and the depth-2 parameters of
//! HPS Section 6.1 (`N = 2^12`) decrypted `rotate, square, square` wrongly.
//!
//! With `r` rotations per level of key-switching term `R_g` each, the noise of a fresh rotated ciphertext
//! is at most `V + r R_g`, and that of a product of two level-`i` ciphertexts, relinearized and rotated
//! `r` times, at most `C'_1 v_i + C'_2 + r R_g`; by the induction of Eq. (11) (`C'_1 >= 1`) the noise
//! after `L` levels is at most
//!
//! `C'_1^L (V + r R_g) + L C'_1^(L-1) (C'_2 + r R_g)`,
//!
//! Eq. (11) with `V -> V + r R_g` and `C'_2 -> C'_2 + r R_g`. A rotation before a multiplication is one
//! after the previous level, so this covers rotations anywhere between multiplications.
//!
//! Galois keys may use a decomposition of their own ([`BfvParams::galois_base_log`]): smaller digits
//! make `R_g` smaller at the cost of larger Galois keys and slower rotations, while multiplication keeps
//! the relinearization decomposition. The generator sizes `N` and `k` as above with the finest Galois
//! decomposition it considers (`l = `[`MAX_GALOIS_DIGITS`] digits of `ceil(nu / l)` bits per residue),
//! then keeps the plain CRT relinearization whenever it fits with these `N` and primes (the speed of
//! multiplication comes first), and finally gives the Galois keys the fewest digits per residue that
//! fit: the relinearization decomposition itself where it does (`galois_base_log = None`), else
//! `l = 2, 3, 4` digits of 28, 19, 14 bits. At `t = 65537` this keeps the `N`, primes and
//! relinearization of the rotation-free procedure at depths 1, 3, 5, 6, 8, 10 (Galois keys with 28-bit
//! digits), 12-30 (CRT Galois keys where the rotation fits, 28-bit digits at 30), and needs one prime more
//! (or `N = 2^13`) only where the rotation-free parameters had used base-`2^30` relinearization digits to
//! fit at all.
//!
//! # Key switching
//!
//! The procedure above sizes `Q` for HPS CRT key switching (Sections 3.3 and 4.5), which needs no
//! special primes. [`BfvParams::generate`] and [`BfvParams::generate_with_conversion`] then switch to
//! hybrid key switching wherever the HE Standard bound leaves room for special primes above `Q` and it
//! saves work ([`BfvParams::with_key_switching_for_room`]): `k / dnum` special primes as wide as the
//! `q_i`, the fewest digit groups that fit, taken when the transforms of a key switch fall to at most
//! two thirds of CRT's. Its key-switching term, about `dnum delta B_e Q_j / (2 P_ks)` plus the rounding
//! of ModDown, is far below the CRT term the bound was sized with, so the promise holds unchanged; the
//! keys are `dnum` rows instead of `k` (or `k l` with digits), relinearization and rotations are faster
//! (at `t = 65537`, one thread: relinearization at depth 7 3.0 against 4.3 ms, depth 20 26 against 28 ms,
//! depth 30 53 against 121 ms) and scale better on two threads, and public keys are extended (over `Q`
//! and the first special prime). At `t = 65537`: depth 7 takes 2 special primes and `dnum = 3`, depths
//! 12-14 5 and 2, depth 20 2 and 7, depth 30 10 and 2; depths 1-6, 8-11 and 22-24 keep CRT key
//! switching (no room, or too little to save transforms: at depths 6, 8 and 22 hybrid relinearization
//! measured 1.21, 1.10 and 1.28 times the CRT time).
//! [`BfvParams::generate_with_rotations`] and the presets ([`BfvPreset`]) keep CRT key switching, as HPS.
//!
//! # Basis-conversion modes
//!
//! [`BfvParams::generate_with_conversion`] and [`BfvParams::generate_with_rotations_and_conversion`] take
//! the [`ConversionMode`] of the two basis extensions of HPS multiplication; the other constructors use
//! [`ConversionMode::ExactFloat`] (HPS Section 2.2). [`ConversionMode::ExactInteger`] (Qu-Xu Algorithms 1
//! and 4) needs `Q` and `P` each within a factor `1 ± 2^-eta` of one power of two with
//! `eta > log2((r + l) / r)` (Qu-Xu Theorem 1). The 55-bit primes the procedure takes (the largest NTT
//! primes below `2^55`) and the 56-bit auxiliary primes already are, and are kept byte for byte. Where the
//! HE Standard cap spreads `log2 Q` over primes of 54 and 55 bits (two powers of two), `Q` is drawn
//! instead as `k` primes near `2^m`, `m = floor(cap / k)`, by Qu-Xu Algorithms 2 and 3: the same `N` and
//! `k`, `log2 Q` up to `k - 1` bits lower. Where that lower `Q` no longer satisfies the correctness
//! condition with the relinearization of the ExactFloat parameters, relinearization takes finer digits
//! (base `2^30`, then 3 or 4 digits per residue) before a larger `N` is considered. [`ConversionMode::Fast`]
//! is refused: HPS multiplication needs the exact centered lift.
//!
//! # Differences from HPS Table 3
//!
//! HPS chose `N` with their own run of the LWE estimator (Section 6.1, "Security"), not the HE Standard
//! table, and Table 3 reports `log2 q` as the nominal `55 k`. Where `55 k` exceeds the HE Standard bound
//! (`L = 1, 5, 10, 20`: 55 > 54, 110 > 109, 220 > 218, 440 > 438) the generator keeps the same `N` and
//! `k` but caps `log2 Q` at the bound, i.e. 1 or 2 bits below the table.

use crate::error::{BfvError, BfvResult};
use crate::params::{
    check_conversion_mode, check_qu_xu_basis, log2_product, qu_xu_basis, BfvParams,
    KeySwitchTechnique, HPS_SIGMA, MAX_PLAINTEXT_MODULUS,
};
use rnsfhe_core::security::max_log_qp;
use rnsfhe_core::SecurityLevel;
use rnsfhe_math::primes::ntt_primes_of_bits;
use rnsfhe_ring::conversion::{QuXuCloseness, DEFAULT_QU_XU_FAILURE_TARGET};
use rnsfhe_ring::ConversionMode;

/// Nominal bit size `nu` of the ciphertext primes (HPS Table 3: `log2 q_i ~ 55`).
pub const PRIME_BITS: u32 = 55;

/// Bit size of the auxiliary primes `p_j` (one more than [`PRIME_BITS`], so they differ from every `q_i`).
const AUX_PRIME_BITS: u32 = PRIME_BITS + 1;

/// Relinearization digit size `log2 w` for depths up to [`RELIN_DIGIT_MAX_DEPTH`] (HPS Section 6.1), when
/// the CRT decomposition alone does not fit (see [`crate::generator`]).
pub const RELIN_DIGIT_BITS: u32 = 30;

/// Largest depth for which `N` and `k` are chosen with base-`2^30` relinearization digits; deeper circuits
/// use the CRT decomposition alone (HPS Section 6.1).
pub const RELIN_DIGIT_MAX_DEPTH: usize = 10;

/// The most digits per residue the generator gives Galois keys (digits of `ceil(nu / l)` bits,
/// `l = 2 ..= MAX_GALOIS_DIGITS`; see [`crate::generator`]): 4 digits of 14 bits for 55-bit primes.
pub const MAX_GALOIS_DIGITS: u32 = 4;

/// Rotations per level budgeted by [`BfvParams::generate`].
pub const ROTATIONS_PER_LEVEL: usize = 1;

/// Smallest and largest `log2(N)` of the search (the span of the HE Standard table).
const LOG_N_RANGE: std::ops::RangeInclusive<u32> = 10..=17;

/// `log2` of the right-hand side `4 (C'_1^L V + L C'_1^(L-1) C'_2) + ...` of the HPS correctness condition:
/// the smallest `log2(Q)` for which Eq. (10) holds after a depth-`depth` binary tree of multiplications
/// (Eq. (11)), for ring degree `2^log_n`, plaintext modulus `t` and `k` ciphertext primes of `nu` bits.
///
/// * Fresh noise (Section 5.1): `V = B_e (1 + 2 delta ||s||)`.
/// * Eq. (12): `C'_1 = (1 + epsilon'_2) delta^2 t ||s||`, `epsilon'_2 = 5 / (delta ||s||)`.
/// * Eq. (13): `C'_2 = delta^2 ||s|| ((1 + 2 ||epsilon_s||) ||s|| + t^2) + delta l_{w,2^nu} w k B_e`.
/// * Eq. (10): `||v'|| < (Delta - r_t(Q)) / 4` with `Delta = floor(Q/t)` and `0 <= r_t(Q) < t`, which holds
///   when `Q >= t (4 B + t + 1)`, `B` the bound of Eq. (11).
///
/// Computed in the log domain (`C'_1^L` overflows `f64` for large depths).
pub fn required_log_q(
    log_n: u32,
    t: u64,
    depth: usize,
    k: usize,
    nu: u32,
    relin_base_log: Option<u32>,
) -> f64 {
    let no_rotations = KeySwitching {
        relin_base_log,
        galois_base_log: None,
        rotations_per_level: 0,
    };
    required_log_q_with_rotations(log_n, t, depth, k, nu, no_rotations)
}

/// The key switching a parameter set is sized for: the decompositions of relinearization and of Galois
/// keys, and the Galois automorphisms (rotations) budgeted per level.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KeySwitching {
    /// [`BfvParams::relin_base_log`]: base-`2^w` digits of each residue, `None` for plain CRT.
    pub relin_base_log: Option<u32>,
    /// [`BfvParams::galois_base_log`]: `None` for the relinearization decomposition.
    pub galois_base_log: Option<u32>,
    /// Galois automorphisms each ciphertext may go through after encryption and after each
    /// multiplication.
    pub rotations_per_level: usize,
}

/// The key-switching term of HPS Eq. (13), `delta l_{w,2^nu} w k B_e`: the noise one key switching adds
/// with base-`2^base_log` digits of `nu`-bit residues (`None` or `base_log >= nu`: plain CRT, `w = 2^nu`).
fn key_switching_noise(delta: f64, k: usize, nu: u32, base_log: Option<u32>) -> f64 {
    let (log_w, digits) = match base_log {
        Some(w) if w < nu => (w, nu.div_ceil(w)),
        _ => (nu, 1),
    };
    let b_e = 6.0 * HPS_SIGMA;
    delta * digits as f64 * (log_w as f64).exp2() * k as f64 * b_e
}

/// [`required_log_q`] with `ks.rotations_per_level` Galois automorphisms budgeted per level (see
/// [`crate::generator`]): HPS Eq. (11) with `V -> V + r R_g` and `C'_2 -> C'_2 + r R_g`, `R_g` the
/// key-switching term of Eq. (13) for the Galois decomposition. With `r = 0` it is [`required_log_q`].
pub fn required_log_q_with_rotations(
    log_n: u32,
    t: u64,
    depth: usize,
    k: usize,
    nu: u32,
    ks: KeySwitching,
) -> f64 {
    let n = (1u64 << log_n) as f64;
    let t = t as f64;
    let s = 1.0; // ||s||_inf of a uniform ternary secret
    let delta = 2.0 * n.sqrt(); // Section 6.1: delta = 2 sqrt(n)
    let b_e = 6.0 * HPS_SIGMA; // Section 6.1: B_e = 6 sigma
    let eps_s = 0.25; // Section 5.1: ||epsilon_s|| < 1/4
    let rotations = ks.rotations_per_level as f64
        * key_switching_noise(delta, k, nu, ks.galois_base_log.or(ks.relin_base_log));
    let v = b_e * (1.0 + 2.0 * delta * s) + rotations;
    let c1 = (1.0 + 5.0 / (delta * s)) * delta * delta * t * s;
    let c2 = delta * delta * s * ((1.0 + 2.0 * eps_s) * s + t * t)
        + key_switching_noise(delta, k, nu, ks.relin_base_log)
        + rotations;
    let l = depth as f64;
    // log2(C1^L V + L C1^(L-1) C2) = (L - 1) log2 C1 + log2(C1 V + L C2).
    let log_b = (l - 1.0) * c1.log2() + (c1 * v + l * c2).log2();
    // log2(t (4 B + t + 1)) = log2 t + log2(4 B (1 + (t + 1) / 4B)).
    let log_4b = log_b + 2.0;
    t.log2() + log_4b + ((t + 1.0) / log_4b.exp2()).ln_1p() / std::f64::consts::LN_2
}

/// The relinearization with which HPS Section 6.1 sizes `N` and `k`: base-`2^30` digits up to depth 10,
/// the plain CRT decomposition (`None`) beyond.
fn sizing_relin_base_log(depth: usize) -> Option<u32> {
    (depth <= RELIN_DIGIT_MAX_DEPTH).then_some(RELIN_DIGIT_BITS)
}

/// Bit sizes of `k` primes with total `total` bits spread evenly (larger ones last).
fn spread_bits(total: u32, k: usize) -> Vec<u32> {
    let k32 = k as u32;
    let base = total / k32;
    let extra = total % k32;
    (0..k32)
        .map(|i| if i >= k32 - extra { base + 1 } else { base })
        .collect()
}

/// The Galois decompositions the generator tries, fewest digits first, for relinearization `relin`:
/// `None` (the relinearization decomposition itself), then `l = 2 ..= `[`MAX_GALOIS_DIGITS`] digits of
/// `ceil(nu / l)` bits each, skipping digit counts not above relinearization's.
fn galois_candidates(relin: Option<u32>, nu: u32) -> impl Iterator<Item = Option<u32>> {
    let relin_digits = match relin {
        Some(w) if w < nu => nu.div_ceil(w),
        _ => 1,
    };
    std::iter::once(None)
        .chain((relin_digits + 1..=MAX_GALOIS_DIGITS).map(move |l| Some(nu.div_ceil(l))))
}

impl BfvParams {
    /// Parameters for plaintext modulus `t` and multiplicative depth `depth` on which every depth-`depth`
    /// circuit decrypts correctly with one Galois automorphism (row rotation or column swap) of each
    /// ciphertext after encryption and after each multiplication (`rotate, multiply, ..., multiply,
    /// rotate`, rotations anywhere between multiplications): [`BfvParams::generate_with_rotations`]`(t,
    /// depth, `[`ROTATIONS_PER_LEVEL`]`)`. See [`crate::generator`] for the noise bound (HPS Eqs. (10)-(13)
    /// with the key-switching term of rotations).
    ///
    /// Key switching is hybrid wherever the HE Standard bound leaves room for special primes above `Q`
    /// and that saves work ([`BfvParams::with_key_switching_for_room`]; see [`crate::generator`], "Key
    /// switching"), CRT elsewhere (depths 1-6, 8-11 and 22-24 at `t = 65537`).
    ///
    /// Errors: those of [`BfvParams::generate_with_rotations`].
    pub fn generate(t: u64, depth: usize) -> BfvResult<Self> {
        Self::generate_with_conversion(t, depth, ConversionMode::ExactFloat)
    }

    /// Parameters for plaintext modulus `t` and multiplicative depth `depth` by the procedure of HPS
    /// Section 6.1 (see [`crate::generator`]), with `rotations_per_level` Galois automorphisms of each
    /// ciphertext budgeted after encryption and after each multiplication: the smallest ring degree `N` in
    /// `2^10 .. 2^17` for which `k` primes of about 55 bits satisfy the correctness condition of HPS
    /// Eqs. (10)-(13) ([`required_log_q_with_rotations`]) within the 128-bit HE Standard bound on
    /// `log2(Q)`; auxiliary primes with `P >= 2 t N Q`; relinearization by the CRT decomposition, with
    /// base-`2^30` digits of each residue only where the condition needs them (depths up to 10); Galois
    /// keys with the relinearization decomposition, or 2 to [`MAX_GALOIS_DIGITS`] digits per residue where
    /// the rotations need them. With `rotations_per_level = 0` this is HPS Section 6.1 unchanged (the
    /// presets of HPS Table 3, [`BfvPreset`]).
    ///
    /// Errors: [`BfvError::InvalidParams`] for `depth = 0` or when no `N <= 2^17` fits;
    /// [`BfvError::InvalidPlaintextModulus`] for `t` outside `[2, 2^60]` or not below every chosen prime;
    /// prime search errors.
    pub fn generate_with_rotations(
        t: u64,
        depth: usize,
        rotations_per_level: usize,
    ) -> BfvResult<Self> {
        Self::generate_with_rotations_and_conversion(
            t,
            depth,
            rotations_per_level,
            ConversionMode::ExactFloat,
        )
    }

    /// [`BfvParams::generate`] with the basis conversion of multiplication set to `conversion` (see
    /// [`crate::generator`]): the same parameters for [`ConversionMode::ExactFloat`]; for
    /// [`ConversionMode::ExactInteger`] the same `N` and prime count with `Q` and `P` each close to one
    /// power of two (Qu-Xu Theorem 1). Key switching as [`BfvParams::generate`]: hybrid where the room
    /// allows.
    ///
    /// Errors: those of [`BfvParams::generate_with_rotations_and_conversion`].
    pub fn generate_with_conversion(
        t: u64,
        depth: usize,
        conversion: ConversionMode,
    ) -> BfvResult<Self> {
        Self::generate_with_rotations_and_conversion(t, depth, ROTATIONS_PER_LEVEL, conversion)?
            .with_key_switching_for_room()
    }

    /// [`BfvParams::generate_with_rotations`] with the basis conversion of multiplication set to
    /// `conversion` ([`crate::generator`], "Basis-conversion modes"): for [`ConversionMode::ExactInteger`],
    /// a `Q` spread over two prime sizes by the HE Standard cap is replaced by `k` Qu-Xu primes near one
    /// power of two (Algorithms 2 and 3), with finer relinearization digits where the lower `log2 Q` needs
    /// them; `P` is kept when it is close to one power of two already (it is, for the 56-bit primes), else
    /// drawn the same way.
    ///
    /// Errors: those of [`BfvParams::generate_with_rotations`]; [`BfvError::InvalidParams`] for
    /// [`ConversionMode::Fast`] (HPS multiplication needs the exact centered lift), or for `ExactInteger`
    /// when no prime set meets Theorem 1.
    pub fn generate_with_rotations_and_conversion(
        t: u64,
        depth: usize,
        rotations_per_level: usize,
        conversion: ConversionMode,
    ) -> BfvResult<Self> {
        check_conversion_mode(conversion)?;
        let exact_int = conversion == ConversionMode::ExactInteger;
        if depth == 0 {
            return Err(BfvError::InvalidParams {
                what: "depth",
                reason: "the multiplicative depth must be at least 1".into(),
            });
        }
        if !(2..=MAX_PLAINTEXT_MODULUS).contains(&t) {
            return Err(BfvError::InvalidPlaintextModulus {
                t,
                reason: format!("it must satisfy 2 <= t <= 2^60 = {MAX_PLAINTEXT_MODULUS}"),
            });
        }
        let with = |relin_base_log, galois_base_log| KeySwitching {
            relin_base_log,
            galois_base_log,
            rotations_per_level,
        };
        let sizing_relin = sizing_relin_base_log(depth);
        // N and k are sized with the finest Galois decomposition considered (the least rotation noise).
        let sizing_galois = if rotations_per_level == 0 {
            None
        } else {
            galois_candidates(sizing_relin, PRIME_BITS).last().flatten()
        };
        let sizing = with(sizing_relin, sizing_galois);
        for log_n in LOG_N_RANGE {
            let Some(bound) = max_log_qp(1usize << log_n, SecurityLevel::Bits128) else {
                continue;
            };
            // The fewest primes covering the bound; the key-switching terms grow with k (Eq. (13)), so
            // iterate to a fixed point (k only increases).
            let mut k = 1usize;
            let needed = loop {
                let needed = required_log_q_with_rotations(log_n, t, depth, k, PRIME_BITS, sizing);
                let k_needed = (needed / PRIME_BITS as f64).ceil().max(1.0) as usize;
                if k_needed <= k {
                    break needed;
                }
                k = k_needed;
            };
            if needed > bound as f64 {
                continue;
            }
            let total = (PRIME_BITS as usize * k).min(bound as usize) as u32;
            let bits = spread_bits(total, k);
            let two_n = 2u64 << log_n;
            let mut q_moduli: Vec<u64> = Vec::with_capacity(k);
            for b in [PRIME_BITS, PRIME_BITS - 1]
                .into_iter()
                .chain((20..PRIME_BITS - 1).rev())
            {
                let count = bits.iter().filter(|&&x| x == b).count();
                if count > 0 {
                    let found = ntt_primes_of_bits(b, two_n, count, &q_moduli)?;
                    q_moduli.extend(found);
                }
            }
            if q_moduli.len() != k {
                return Err(BfvError::InvalidParams {
                    what: "q primes",
                    reason: format!(
                        "could not split {total} bits into {k} primes of 20 to {PRIME_BITS} bits"
                    ),
                });
            }
            let r = DEFAULT_QU_XU_FAILURE_TARGET;
            if exact_int && !QuXuCloseness::of(&q_moduli).admits(r) {
                // Primes of two sizes (the cap): k primes near one power 2^m instead, Qu-Xu Algorithms 2
                // and 3; those may lie just above 2^m, so fall back to the largest primes below 2^m if
                // the bound is exceeded (they are as close, from below).
                let m = total / k as u32;
                let qx = qu_xu_basis("q_moduli", m, two_n, k, &[])?;
                q_moduli = if log2_product(&qx) <= bound as f64 {
                    qx
                } else {
                    let below = ntt_primes_of_bits(m, two_n, k, &[])?;
                    check_qu_xu_basis("q_moduli", &below)?;
                    below
                };
            }
            let log_q = log2_product(&q_moduli);
            // ExactInteger's Q may be up to k - 1 bits below the sizing's; finer relinearization digits
            // may make up for it (below).
            if (log_q < needed && !exact_int) || log_q > bound as f64 {
                continue;
            }
            if let Some(&q) = q_moduli.iter().find(|&&q| q <= t) {
                return Err(BfvError::InvalidPlaintextModulus {
                    t,
                    reason: format!(
                        "the generated ciphertext prime q = {q} is not above t; use a smaller t"
                    ),
                });
            }
            // P >= 2 t N Q (Section 6.1); each p_j >= 2^(AUX_PRIME_BITS - 1).
            let needed_p = 1.0 + (t as f64).log2() + log_n as f64 + log_q;
            let k_p = (needed_p / (AUX_PRIME_BITS - 1) as f64).floor() as usize + 1;
            let mut p_moduli = ntt_primes_of_bits(AUX_PRIME_BITS, two_n, k_p, &q_moduli)?;
            if exact_int && !QuXuCloseness::of(&p_moduli).admits(r) {
                p_moduli = qu_xu_basis("p_moduli", AUX_PRIME_BITS, two_n, k_p, &q_moduli)?;
            }
            let fits = |ks: KeySwitching| {
                required_log_q_with_rotations(log_n, t, depth, k, PRIME_BITS, ks) <= log_q
            };
            // The CRT decomposition alone for relinearization when it satisfies the same condition with
            // these primes (and the sizing's Galois decomposition); then the sizing's digits, which fit
            // by construction for ExactFloat; for ExactInteger's possibly lower Q, finer digits if needed.
            let relin_base_log = if fits(with(None, sizing_galois)) {
                None
            } else if !exact_int {
                sizing_relin
            } else {
                // The sizing's base-2^30 digits, else 3 or 4 digits per residue (19 or 14 bits).
                let mut candidates = std::iter::once(RELIN_DIGIT_BITS)
                    .chain((3..=MAX_GALOIS_DIGITS).map(|l| PRIME_BITS.div_ceil(l)))
                    .map(Some);
                match candidates.find(|&relin| fits(with(relin, sizing_galois))) {
                    Some(relin) => relin,
                    None => continue,
                }
            };
            let galois_base_log = if rotations_per_level == 0 {
                None
            } else {
                galois_candidates(relin_base_log, PRIME_BITS)
                    .find(|&g| fits(with(relin_base_log, g)))
                    .unwrap_or(sizing_galois)
            };
            return Ok(Self {
                log_n,
                plaintext_modulus: t,
                q_moduli,
                p_moduli,
                relin_base_log,
                galois_base_log,
                sigma: HPS_SIGMA,
                insecure_for_testing: false,
                conversion,
                key_switching: KeySwitchTechnique::Crt,
            });
        }
        Err(BfvError::InvalidParams {
            what: "depth",
            reason: format!(
                "no ring degree up to 2^17 supports depth {depth} with t = {t} and \
                 {rotations_per_level} rotation(s) per level within the 128-bit HE Standard bound on \
                 log2(Q) (HPS Sections 5.1 and 6.1); lower the depth, the rotations or t"
            ),
        })
    }
}

/// The parameter sets of HPS Table 3 (`t = 2`, `log2 q_i ~ 55`, `lambda >= 128`), generated by
/// [`BfvParams::generate_with_rotations`] with no rotations budgeted (HPS Section 6.1 as in the paper).
///
/// | preset | `L` | `N` | HPS `log2 q` | `k` |
/// |---|---|---|---|---|
/// | [`BfvPreset::T2Depth1`] | 1 | `2^11` | 55 | 1 |
/// | [`BfvPreset::T2Depth5`] | 5 | `2^12` | 110 | 2 |
/// | [`BfvPreset::T2Depth10`] | 10 | `2^13` | 220 | 4 |
/// | [`BfvPreset::T2Depth20`] | 20 | `2^14` | 440 | 8 |
/// | [`BfvPreset::T2Depth30`] | 30 | `2^15` | 605 | 11 |
/// | [`BfvPreset::T2Depth50`] | 50 | `2^16` | 1045 | 19 |
/// | [`BfvPreset::T2Depth100`] | 100 | `2^17` | 2090 | 38 |
///
/// The generated `log2 Q` is 1-2 bits below the table for `L <= 20`, capped by the HE Standard bound
/// (see [`crate::generator`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BfvPreset {
    /// `t = 2`, depth 1 (HPS Table 3, first row).
    T2Depth1,
    /// `t = 2`, depth 5.
    T2Depth5,
    /// `t = 2`, depth 10.
    T2Depth10,
    /// `t = 2`, depth 20.
    T2Depth20,
    /// `t = 2`, depth 30.
    T2Depth30,
    /// `t = 2`, depth 50.
    T2Depth50,
    /// `t = 2`, depth 100 (HPS Table 3, last row).
    T2Depth100,
}

impl BfvPreset {
    /// Every preset, in the row order of HPS Table 3.
    pub const ALL: [BfvPreset; 7] = [
        BfvPreset::T2Depth1,
        BfvPreset::T2Depth5,
        BfvPreset::T2Depth10,
        BfvPreset::T2Depth20,
        BfvPreset::T2Depth30,
        BfvPreset::T2Depth50,
        BfvPreset::T2Depth100,
    ];

    /// The plaintext modulus `t` (2 for every row of HPS Table 3).
    pub fn plaintext_modulus(self) -> u64 {
        2
    }

    /// The multiplicative depth `L`.
    pub fn depth(self) -> usize {
        match self {
            BfvPreset::T2Depth1 => 1,
            BfvPreset::T2Depth5 => 5,
            BfvPreset::T2Depth10 => 10,
            BfvPreset::T2Depth20 => 20,
            BfvPreset::T2Depth30 => 30,
            BfvPreset::T2Depth50 => 50,
            BfvPreset::T2Depth100 => 100,
        }
    }

    /// `(log2 N, log2 q, k)` as printed in HPS Table 3 (`log2 q` is the nominal `55 k`).
    pub fn paper_row(self) -> (u32, u32, usize) {
        match self {
            BfvPreset::T2Depth1 => (11, 55, 1),
            BfvPreset::T2Depth5 => (12, 110, 2),
            BfvPreset::T2Depth10 => (13, 220, 4),
            BfvPreset::T2Depth20 => (14, 440, 8),
            BfvPreset::T2Depth30 => (15, 605, 11),
            BfvPreset::T2Depth50 => (16, 1045, 19),
            BfvPreset::T2Depth100 => (17, 2090, 38),
        }
    }

    /// The generated parameters: [`BfvParams::generate_with_rotations`]`(2, L, 0)`, the procedure of HPS
    /// Section 6.1 with no rotations budgeted, as in the paper (`t = 2` has no batching slots to rotate;
    /// an automorphism of a fresh ciphertext may need more room, see [`crate::generator`]).
    ///
    /// Errors: those of [`BfvParams::generate_with_rotations`] (prime search only, for these rows).
    pub fn params(self) -> BfvResult<BfvParams> {
        BfvParams::generate_with_rotations(self.plaintext_modulus(), self.depth(), 0)
    }

    /// The preset with the basis conversion of multiplication set to `conversion`:
    /// [`BfvParams::generate_with_rotations_and_conversion`]`(2, L, 0, conversion)`. `ExactFloat` gives
    /// [`BfvPreset::params`]; `ExactInteger` the same `N` and prime count, with `Q` near one power of two
    /// where the HE Standard cap had spread it over two (`T2Depth5`, `T2Depth10`, `T2Depth20`: 54-bit
    /// primes, 1, 2 and 6 bits of `log2 Q` less; `T2Depth5` then relinearizes with three 19-bit digits
    /// per residue instead of two of 30 bits), byte for byte [`BfvPreset::params`] otherwise.
    ///
    /// Errors: those of [`BfvParams::generate_with_rotations_and_conversion`] ([`ConversionMode::Fast`] is
    /// refused).
    pub fn params_with_conversion(self, conversion: ConversionMode) -> BfvResult<BfvParams> {
        BfvParams::generate_with_rotations_and_conversion(
            self.plaintext_modulus(),
            self.depth(),
            0,
            conversion,
        )
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn spread_bits_is_even() {
        assert_eq!(spread_bits(109, 2), vec![54, 55]);
        assert_eq!(spread_bits(438, 8), vec![54, 54, 55, 55, 55, 55, 55, 55]);
        assert_eq!(spread_bits(55, 1), vec![55]);
    }

    #[test]
    fn rejects_bad_inputs() {
        assert!(BfvParams::generate(2, 0).is_err());
        assert!(BfvParams::generate(1, 1).is_err());
        assert!(BfvParams::generate(2, 10_000).is_err());
    }
}
