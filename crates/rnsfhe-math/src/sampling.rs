//! Samplers over a ChaCha20 CSPRNG: uniform residues mod q, uniform ternary, ternary of fixed Hamming
//! weight, a discrete Gaussian ([`DiscreteGaussian`], sigma up to `2^13`) and a wide discrete Gaussian by
//! convolution ([`WideGaussian`], sigma up to `2^58`, for noise flooding).
//!
//! All randomness comes from a [`Csprng`] (ChaCha20 seeded by the operating system). The samplers are
//! generic over any [`CryptoRngCore`] so they also accept other cryptographic generators, but never a
//! non-cryptographic one. Two deterministic constructors exist and say what they are for in their names:
//! [`Csprng::insecure_from_seed_for_tests`] and [`Csprng::from_public_seed`] (expanding public
//! randomness, such as the `a` polynomials of keys stored as seeds).
//!
//! Signed samplers return `i64` coefficients; [`to_residues`] maps them to residues modulo a
//! [`Modulus`] without branching on their sign.
//!
//! Nothing here prints sampled values, and [`Csprng`]'s `Debug` output does not reveal its state.
//!
//! Rejection loops (uniform mod q, ternary, Gaussian) leak at most the number of rejected draws through
//! timing; in rejection sampling that number is independent of the value finally accepted.

use std::fmt;

use rand_core::block::BlockRng;
use rand_core::{CryptoRng, CryptoRngCore, OsRng, RngCore};
use zeroize::{Zeroize, ZeroizeOnDrop};

use crate::chacha::ChaChaBlocks;
use crate::error::{Error, Result};
use crate::modulus::Modulus;
use crate::simd;

/// Length in bytes of a [`Seed`].
pub const SEED_LEN: usize = 32;

/// A 32-byte ChaCha20 seed.
pub type Seed = [u8; SEED_LEN];

/// The ChaCha20 stream used by [`Csprng::from_public_seed`], so that expanding a public seed never
/// reproduces the stream of a generator seeded with the same bytes by another constructor.
const PUBLIC_STREAM: u64 = u64::from_le_bytes(*b"rnsfhe:a");

/// A cryptographically secure pseudo-random generator: ChaCha20 seeded by the operating system.
///
/// Its output is, word for word and call for call, that of `rand_chacha 0.3`'s `ChaCha20Rng` with the
/// same seed and stream (the wire format depends on it); the keystream is computed sixteen blocks at a
/// time with AVX-512 where the processor has it, by `rand_chacha` otherwise.
///
/// It implements [`RngCore`] and [`CryptoRng`] so it can be used with the `rand` APIs. It is not
/// `Clone` (a copy would repeat the stream), its `Debug` output is `Csprng { .. }`, and its state is
/// overwritten when it is dropped.
pub struct Csprng {
    inner: BlockRng<ChaChaBlocks>,
}

impl Csprng {
    /// A generator seeded with 32 bytes from the operating system (`getrandom`).
    ///
    /// Errors with [`Error::Entropy`] if the operating system's random source fails.
    pub fn from_os() -> Result<Self> {
        let mut seed: Seed = [0u8; SEED_LEN];
        OsRng
            .try_fill_bytes(&mut seed)
            .map_err(|e| Error::Entropy {
                detail: e.to_string(),
            })?;
        let rng = Self::stream_of(&seed, 0);
        seed.zeroize();
        Ok(rng)
    }

    /// The generator of ChaCha20 stream `stream` of key `seed` (the layout is in the `chacha` module).
    fn stream_of(seed: &Seed, stream: u64) -> Self {
        Self {
            inner: BlockRng::new(ChaChaBlocks::new(seed, stream)),
        }
    }

    /// A deterministic generator for tests and reproducible examples. **Not secure**: anyone who knows
    /// the seed knows every value drawn, so never use it for keys or encryption randomness.
    pub fn insecure_from_seed_for_tests(seed: Seed) -> Self {
        Self::stream_of(&seed, 0)
    }

    /// A deterministic generator that expands a **public** seed, for public randomness only: the
    /// uniform `a` part of keys or ciphertexts that are stored or sent as their seed.
    ///
    /// Everything drawn from it is known to whoever holds the seed, so never use it for secrets, noise or
    /// encryption randomness. It uses a dedicated ChaCha20 stream, so it never repeats the output of
    /// [`Csprng::insecure_from_seed_for_tests`] with the same bytes. Get fresh seeds from
    /// [`Csprng::fresh_seed`].
    pub fn from_public_seed(seed: Seed) -> Self {
        Self::stream_of(&seed, PUBLIC_STREAM)
    }

    /// Draws a fresh 32-byte seed from this generator, for example to create a public `a` polynomial
    /// with [`Csprng::from_public_seed`] and store only the seed.
    pub fn fresh_seed(&mut self) -> Seed {
        let mut seed: Seed = [0u8; SEED_LEN];
        self.inner.fill_bytes(&mut seed);
        seed
    }
}

/// Independent generators for work split across threads: one secret 32-byte key drawn from a parent
/// [`Csprng`] and one ChaCha20 stream per index ([`Substreams::stream`]).
///
/// The parent stream is serial, so a sampler that fills a polynomial's chunks, or an encryption's parts,
/// on several threads cannot share it without making its output depend on which thread draws first.
/// Deriving the generators up front, in a fixed order, keeps every output a function of the parent's
/// state alone, whatever the number of threads. Security: the key is 256 fresh bits of the parent's
/// stream (never derived from public data), and distinct indices select distinct ChaCha20 streams of
/// that key (a 64-bit stream id, each stream `2^64` blocks long), so the generators are independent and
/// unpredictable as long as each index is used once. The key is overwritten on drop; the type is not
/// `Clone` (a copy would let the same stream be used twice) and its `Debug` output reveals nothing.
pub struct Substreams {
    key: Seed,
}

impl Substreams {
    /// Draws a fresh key from `parent` (advancing it by 32 bytes).
    pub fn new(parent: &mut Csprng) -> Self {
        Self {
            key: parent.fresh_seed(),
        }
    }

    /// The generator of stream `index`. Use each index once per [`Substreams`]: two generators of the
    /// same index give the same values.
    pub fn stream(&self, index: u64) -> Csprng {
        Csprng::stream_of(&self.key, index)
    }
}

impl fmt::Debug for Substreams {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Substreams { .. }")
    }
}

impl Drop for Substreams {
    fn drop(&mut self) {
        self.key.zeroize();
    }
}

impl ZeroizeOnDrop for Substreams {}

impl fmt::Debug for Csprng {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Csprng { .. }")
    }
}

impl RngCore for Csprng {
    #[inline]
    fn next_u32(&mut self) -> u32 {
        self.inner.next_u32()
    }

    #[inline]
    fn next_u64(&mut self) -> u64 {
        self.inner.next_u64()
    }

    #[inline]
    fn fill_bytes(&mut self, dest: &mut [u8]) {
        self.inner.fill_bytes(dest)
    }

    #[inline]
    fn try_fill_bytes(&mut self, dest: &mut [u8]) -> std::result::Result<(), rand_core::Error> {
        self.inner.try_fill_bytes(dest)
    }
}

impl CryptoRng for Csprng {}

impl Drop for Csprng {
    fn drop(&mut self) {
        // `BlockRng` offers no zeroization (its buffer is private), so overwrite the whole value (key,
        // counter and buffered output blocks) with a generator built from an all-zero seed. The
        // volatile write keeps the compiler from eliding this dead store.
        let blank = BlockRng::new(ChaChaBlocks::new(&[0u8; SEED_LEN], 0));
        // SAFETY: `&mut self.inner` is valid and aligned for writes of its type. The old value is
        // overwritten without being dropped, which is sound because `BlockRng<ChaChaBlocks>` is plain
        // data (fixed arrays, integers and a zero-sized CPU token or `rand_chacha`'s generator, itself
        // plain data; no heap and no `Drop` implementation).
        unsafe { std::ptr::write_volatile(&mut self.inner, blank) };
        std::sync::atomic::compiler_fence(std::sync::atomic::Ordering::SeqCst);
    }
}

impl ZeroizeOnDrop for Csprng {}

/// Mask of the bit length of `x` (all ones below and at its top bit; 0 for 0).
#[inline(always)]
fn bit_mask(x: u64) -> u64 {
    // A shift by 64 (x = 0) is out of range, hence checked_shr.
    u64::MAX.checked_shr(x.leading_zeros()).unwrap_or(0)
}

/// Uniform integer in `[0, bound)` by masked rejection; `bound >= 1`.
#[inline]
fn uniform_below<R: CryptoRngCore + ?Sized>(rng: &mut R, bound: u64) -> u64 {
    debug_assert!(bound >= 1);
    let mask = bit_mask(bound - 1);
    loop {
        let r = rng.next_u64() & mask;
        if r < bound {
            return r;
        }
    }
}

/// A uniform residue in `[0, q)`, without modulo bias.
///
/// Draws a 64-bit word, keeps the low `bitlen(q)` bits and rejects values `>= q` (fewer than half of the
/// draws are rejected).
#[inline]
pub fn uniform_mod<R: CryptoRngCore + ?Sized>(rng: &mut R, q: &Modulus) -> u64 {
    uniform_below(rng, q.value())
}

/// 64-bit words [`fill_uniform_mod`] draws at a time (4 KiB on the stack, within the L1 cache).
const UNIFORM_BATCH: usize = 512;

/// Fills `out` with independent uniform residues in `[0, q)` (see [`uniform_mod`]).
///
/// The values are those of [`uniform_mod`] called `out.len()` times: one 64-bit word per try, accepted
/// when `(w & mask) < q`, and the generator ends where those calls leave it. The words are drawn in
/// batches with `fill_bytes` (little-endian 64-bit words, which is how `next_u64` reads them in every
/// `rand_core` block generator, [`Csprng`] included, and in `fill_bytes_via_next`), never more words
/// than values are still missing, so no word past the last accepted one is drawn; each batch is masked
/// and compacted without a branch on the values. The expansion of public seeds relies on this
/// equality: it is part of the wire format.
pub fn fill_uniform_mod<R: CryptoRngCore + ?Sized>(rng: &mut R, q: &Modulus, out: &mut [u64]) {
    let bound = q.value();
    let mask = bit_mask(bound - 1);
    let mut bytes = [0u8; 8 * UNIFORM_BATCH];
    let mut filled = 0;
    while filled < out.len() {
        let tries = (out.len() - filled).min(UNIFORM_BATCH);
        let words = &mut bytes[..8 * tries];
        rng.fill_bytes(words);
        // At most `out.len() - filled` words: the compaction (no branch on a value) stays within `out`.
        filled +=
            simd::compact_masked_below(words.as_chunks::<8>().0, mask, bound, &mut out[filled..]);
    }
    // The caller may sample secrets (a uniform binary LWE key): wipe the keystream copy.
    bytes.zeroize();
}

/// Fills `out` with independent uniform ternary values: each of `-1`, `0`, `1` with probability 1/3.
///
/// Each value comes from two random bits, `0, 1, 2` mapping to `-1, 0, 1` and `3` rejected, so there is
/// no bias; the mapping has no branch on the value.
pub fn fill_ternary<R: CryptoRngCore + ?Sized>(rng: &mut R, out: &mut [i64]) {
    let n = out.len();
    let mut i = 0;
    while i < n {
        let mut word = rng.next_u64();
        let mut chunks = 32;
        while chunks > 0 && i < n {
            let v = word & 3;
            word >>= 2;
            chunks -= 1;
            // Always write, advance only when accepted: a rejected chunk (3 -> 2) is overwritten by the
            // next accepted one, and the loop ends only after every slot holds an accepted value.
            out[i] = v as i64 - 1;
            i += usize::from(v != 3);
        }
    }
}

/// A vector of `n` independent uniform ternary values (see [`fill_ternary`]).
pub fn sample_ternary<R: CryptoRngCore + ?Sized>(rng: &mut R, n: usize) -> Vec<i64> {
    let mut out = vec![0i64; n];
    fill_ternary(rng, &mut out);
    out
}

/// Fills `out` with a ternary vector of Hamming weight exactly `h`: `h` positions chosen uniformly among
/// all subsets of size `h`, each holding `-1` or `1` with probability 1/2; all other positions are `0`.
///
/// The vector `(±1, ..., ±1, 0, ..., 0)` (`h` random signs first) is shuffled by a uniformly random
/// permutation: every entry gets a random 127-bit key and the entries are sorted by key with a bitonic
/// sorting network whose compare-exchanges are branch-free mask operations. Neither the control flow nor
/// the memory accesses depend on the secret positions or signs (a Fisher-Yates shuffle would index memory
/// by the secret positions, a cache-timing channel). Keys collide with probability below `n^2 2^-128`,
/// the only (negligible) deviation from a uniform permutation. Cost: `O(n log^2 n)` compare-exchanges,
/// about 4.5 million for `n = 2^16`, whatever `h`.
///
/// Errors with [`Error::OutOfRange`] if `h > out.len()`.
pub fn fill_ternary_hamming<R: CryptoRngCore + ?Sized>(
    rng: &mut R,
    h: usize,
    out: &mut [i64],
) -> Result<()> {
    let n = out.len();
    if h > n {
        return Err(Error::OutOfRange {
            what: "Hamming weight h of the ternary secret (at most the vector length N)",
            value: h as f64,
            min: 0.0,
            max: n as f64,
        });
    }
    if n == 0 {
        return Ok(());
    }
    // Padding to a power of two with keys above every random key (top bit set) keeps the padding at the
    // end after sorting.
    let len = n.next_power_of_two();
    let mut keys = vec![u128::MAX; len];
    let mut values = vec![0i64; len];
    let mut sign_bits = 0u64;
    for (i, (k, v)) in keys.iter_mut().zip(values.iter_mut()).take(n).enumerate() {
        *k = ((u128::from(rng.next_u64()) << 64) | u128::from(rng.next_u64())) >> 1;
        if i % 64 == 0 {
            sign_bits = rng.next_u64();
        }
        // Bit -> -1 or 1, and 0 from position h on (a public index), without a branch on the bit.
        *v = (2 * (sign_bits & 1) as i64 - 1) * i64::from(i < h);
        sign_bits >>= 1;
    }
    bitonic_sort_by_key(&mut keys, &mut values);
    out.copy_from_slice(&values[..n]);
    keys.zeroize();
    values.zeroize();
    sign_bits.zeroize();
    Ok(())
}

/// Entries of the bitonic network a task handles on its own (48 KiB of keys and values, within a
/// core's L2 cache): every stage and pass that stays inside such an aligned block runs block by block.
const SORT_BLOCK: usize = 1 << 11;

/// Sorts `values` by `keys` (ascending; `keys.len()` a power of two) with a bitonic network: the sequence
/// of compared indices is fixed by the length, and each compare-exchange swaps by masks.
///
/// The network is the textbook one (stages `k = 2, 4, .., len`, passes `j = k/2, .., 1`, pair
/// `(i, i ^ j)` descending when `i & k != 0`), run on the rayon pool: the compare-exchanges of one pass
/// are independent, and passes with `j < SORT_BLOCK` never cross an aligned block of [`SORT_BLOCK`]
/// entries, so the stages up to the block size, and the last passes of every later stage, run block
/// by block, and the remaining wide passes run in parallel slices. The same compare-exchanges run as in
/// the serial order, so the result is the same on any number of threads (it was about 9 % of a key
/// generation on one thread at `N = 2^15`).
fn bitonic_sort_by_key(keys: &mut [u128], values: &mut [i64]) {
    use rayon::prelude::*;
    let len = keys.len();
    debug_assert!(len.is_power_of_two() && values.len() == len);
    let block = len.min(SORT_BLOCK);
    by_blocks(keys, values, block, &|base, kb, vb| {
        let mut k = 2;
        while k <= block {
            local_passes(kb, vb, base, k, k / 2);
            k *= 2;
        }
    });
    let mut k = 2 * block;
    while k <= len {
        let mut j = k / 2;
        while j >= block {
            keys.par_chunks_mut(2 * j)
                .zip(values.par_chunks_mut(2 * j))
                .enumerate()
                .for_each(|(segment, (ks, vs))| {
                    let (k_low, k_high) = ks.split_at_mut(j);
                    let (v_low, v_high) = vs.split_at_mut(j);
                    k_low
                        .par_chunks_mut(block)
                        .zip(k_high.par_chunks_mut(block))
                        .zip(
                            v_low
                                .par_chunks_mut(block)
                                .zip(v_high.par_chunks_mut(block)),
                        )
                        .enumerate()
                        .for_each(|(c, ((ka, kb), (va, vb)))| {
                            let first = segment * 2 * j + c * block;
                            for t in 0..ka.len() {
                                let descending = u128::from((first + t) & k != 0);
                                compare_exchange(
                                    (&mut ka[t], &mut kb[t]),
                                    (&mut va[t], &mut vb[t]),
                                    descending,
                                );
                            }
                        });
                });
            j /= 2;
        }
        by_blocks(keys, values, block, &|base, kb, vb| {
            local_passes(kb, vb, base, k, j)
        });
        k *= 2;
    }
}

/// `f(first index, keys, values)` on every aligned block of `block` entries, blocks in parallel.
fn by_blocks(
    keys: &mut [u128],
    values: &mut [i64],
    block: usize,
    f: &(impl Fn(usize, &mut [u128], &mut [i64]) + Sync),
) {
    use rayon::prelude::*;
    keys.par_chunks_mut(block)
        .zip(values.par_chunks_mut(block))
        .enumerate()
        .for_each(|(b, (kb, vb))| f(b * block, kb, vb));
}

/// The passes `j = from, from/2, .., 1` of stage `k` on one aligned block whose first entry has index
/// `base` in the whole network (`from` below the block's length, so every pair is inside it).
fn local_passes(keys: &mut [u128], values: &mut [i64], base: usize, k: usize, from: usize) {
    let mut j = from;
    while j > 0 {
        for i in 0..keys.len() {
            let l = i ^ j;
            if l > i {
                // Public: which pair and in which direction.
                let descending = u128::from((base + i) & k != 0);
                let (lo, hi) = keys.split_at_mut(l);
                let (vlo, vhi) = values.split_at_mut(l);
                compare_exchange(
                    (&mut lo[i], &mut hi[0]),
                    (&mut vlo[i], &mut vhi[0]),
                    descending,
                );
            }
        }
        j /= 2;
    }
}

/// One compare-exchange of the network: orders the two keys (descending if `descending` is 1) and
/// carries the values along, by masks.
#[inline(always)]
fn compare_exchange(keys: (&mut u128, &mut u128), values: (&mut i64, &mut i64), descending: u128) {
    let (a, b) = (*keys.0, *keys.1);
    // 1 if a > b (b - a borrows), flipped for a descending run: swap then. The black box hides from
    // the optimizer that `swap` is 0 or 1; without it LLVM turns the mask arithmetic below back into a
    // branch on `swap` (seen in the disassembly).
    let swap = std::hint::black_box(u128::from(b < a) ^ descending);
    let mask = 0u128.wrapping_sub(swap);
    let dk = (a ^ b) & mask;
    *keys.0 = a ^ dk;
    *keys.1 = b ^ dk;
    let vmask = mask as i64;
    let dv = (*values.0 ^ *values.1) & vmask;
    *values.0 ^= dv;
    *values.1 ^= dv;
}

/// A vector of length `n` with exactly `h` nonzero entries in `{-1, 1}` (see [`fill_ternary_hamming`]).
///
/// Errors with [`Error::OutOfRange`] if `h > n`.
pub fn sample_ternary_hamming<R: CryptoRngCore + ?Sized>(
    rng: &mut R,
    n: usize,
    h: usize,
) -> Result<Vec<i64>> {
    let mut out = vec![0i64; n];
    fill_ternary_hamming(rng, h, &mut out)?;
    Ok(out)
}

/// Maps signed values to residues modulo `q` (`x mod q` in `[0, q)`), without branching on the sign.
///
/// Errors with [`Error::LengthMismatch`] unless `out.len() == values.len()`.
pub fn to_residues(q: &Modulus, values: &[i64], out: &mut [u64]) -> Result<()> {
    if values.len() != out.len() {
        return Err(Error::LengthMismatch {
            what: "to_residues output (must have the length of the input values)",
            expected: values.len(),
            got: out.len(),
        });
    }
    for (o, &v) in out.iter_mut().zip(values) {
        *o = q.reduce_i64(v);
    }
    Ok(())
}

/// Default standard deviation of the error distribution (as in SEAL, OpenFHE and the HE Standard).
pub const DEFAULT_SIGMA: f64 = 3.2;

/// Default tail cut in multiples of sigma (SEAL's `noise_max_deviation = 6 sigma`).
pub const DEFAULT_TAIL_CUT: f64 = 6.0;

/// Largest supported standard deviation, `2^13` (enough for LWE keys of small dimension).
pub const MAX_SIGMA: f64 = 8192.0;

/// Smallest supported tail cut, in multiples of sigma.
pub const MIN_TAIL_CUT: f64 = 1.0;

/// Largest supported tail cut, in multiples of sigma.
pub const MAX_TAIL_CUT: f64 = 32.0;

/// Supports up to this bound use an inversion table (CDT) scanned in full for every sample; larger ones
/// use rejection sampling.
const CDT_MAX_BOUND: i64 = 64;

/// How a [`DiscreteGaussian`] draws its samples.
#[derive(Clone, Debug, PartialEq)]
enum Method {
    /// Cumulative thresholds `c_0 < ... < c_{2B-1}` scaled to `2^63`: the sample is
    /// `-B + #{i : u >= c_i}` for a uniform 63-bit `u`, computed by scanning the whole table
    /// (no branch or memory access depends on `u`).
    Cdt(Vec<u64>),
    /// Uniform candidate in `[-B, B]`, accepted with probability `exp(-x^2 / (2 sigma^2))`.
    Rejection,
}

/// A discrete Gaussian over the integers with standard deviation `sigma`, truncated to
/// `[-bound, bound]` where `bound = floor(tail_cut * sigma)`: `Pr[x] ∝ exp(-x^2 / (2 sigma^2))` for
/// `|x| <= bound` and 0 elsewhere.
///
/// Built once, then sampled many times. Small supports (`bound <= 64`, which covers the default
/// `sigma = 3.2`, bound 19) use an inversion table scanned in full for every sample (constant time);
/// larger ones (up to `sigma = 2^13`) use rejection sampling from the uniform distribution on the
/// support with acceptance probability `exp(-x^2 / (2 sigma^2))`, which accepts about
/// `sigma sqrt(2 pi) / (2 bound + 1)` of the candidates (about 0.21 for a tail cut of 6) whatever sigma
/// is. Uniform doubles have 53 random bits.
#[derive(Clone, Debug, PartialEq)]
pub struct DiscreteGaussian {
    sigma: f64,
    tail_cut: f64,
    bound: i64,
    method: Method,
}

impl Default for DiscreteGaussian {
    /// `sigma = 3.2`, tail cut `6 sigma` (bound 19).
    fn default() -> Self {
        Self::build(DEFAULT_SIGMA, DEFAULT_TAIL_CUT, false)
    }
}

impl DiscreteGaussian {
    /// A discrete Gaussian of standard deviation `sigma` cut at `tail_cut_in_sigmas * sigma`.
    ///
    /// Errors with [`Error::OutOfRange`] unless `0 < sigma <= 2^13` and
    /// `1 <= tail_cut_in_sigmas <= 32` (both finite).
    pub fn new(sigma: f64, tail_cut_in_sigmas: f64) -> Result<Self> {
        Self::validate(sigma, tail_cut_in_sigmas)?;
        Ok(Self::build(sigma, tail_cut_in_sigmas, false))
    }

    /// A discrete Gaussian of standard deviation `sigma` with the default tail cut of 6 sigma.
    ///
    /// Errors with [`Error::OutOfRange`] unless `0 < sigma <= 2^13`.
    pub fn with_sigma(sigma: f64) -> Result<Self> {
        Self::new(sigma, DEFAULT_TAIL_CUT)
    }

    fn validate(sigma: f64, tail_cut: f64) -> Result<()> {
        // Both checks reject NaN (comparisons and `contains` are false for NaN).
        if !(sigma > 0.0 && sigma <= MAX_SIGMA) {
            return Err(Error::OutOfRange {
                what: "discrete Gaussian sigma (must be positive)",
                value: sigma,
                min: 0.0,
                max: MAX_SIGMA,
            });
        }
        if !(MIN_TAIL_CUT..=MAX_TAIL_CUT).contains(&tail_cut) {
            return Err(Error::OutOfRange {
                what: "discrete Gaussian tail cut in multiples of sigma",
                value: tail_cut,
                min: MIN_TAIL_CUT,
                max: MAX_TAIL_CUT,
            });
        }
        Ok(())
    }

    /// Builds from validated parameters; `force_rejection` selects rejection sampling even for small
    /// supports (used by tests to check both methods against the same distribution).
    fn build(sigma: f64, tail_cut: f64, force_rejection: bool) -> Self {
        // sigma <= 2^13 and tail_cut <= 32 keep the bound below 2^18.
        let bound = (tail_cut * sigma).floor() as i64;
        let method = if bound <= CDT_MAX_BOUND && !force_rejection {
            Method::Cdt(Self::cdt_table(sigma, bound))
        } else {
            Method::Rejection
        };
        Self {
            sigma,
            tail_cut,
            bound,
            method,
        }
    }

    /// Cumulative probabilities of `-bound, ..., bound - 1` scaled to `2^63` (the last one, 1, is
    /// implicit).
    fn cdt_table(sigma: f64, bound: i64) -> Vec<u64> {
        let inv = 1.0 / (2.0 * sigma * sigma);
        let weights: Vec<f64> = (-bound..=bound)
            .map(|x| (-((x * x) as f64) * inv).exp())
            .collect();
        let total: f64 = weights.iter().sum();
        let scale = 2f64.powi(63);
        let mut cumulative = 0.0;
        let mut table = Vec::with_capacity(weights.len().saturating_sub(1));
        for w in &weights[..weights.len() - 1] {
            cumulative += w;
            // `as` saturates; the threshold never exceeds 2^63 anyway (u < 2^63 is drawn).
            table.push(((cumulative / total) * scale).round().min(scale) as u64);
        }
        table
    }

    /// The standard deviation sigma.
    pub fn sigma(&self) -> f64 {
        self.sigma
    }

    /// The tail cut in multiples of sigma.
    pub fn tail_cut(&self) -> f64 {
        self.tail_cut
    }

    /// The largest absolute value a sample can take, `floor(tail_cut * sigma)`.
    pub fn bound(&self) -> i64 {
        self.bound
    }

    /// One sample in `[-bound, bound]`.
    #[inline]
    pub fn sample<R: CryptoRngCore + ?Sized>(&self, rng: &mut R) -> i64 {
        match &self.method {
            Method::Cdt(table) => {
                let u = rng.next_u64() >> 1;
                let mut count: i64 = 0;
                for &c in table {
                    count += i64::from(u >= c);
                }
                count - self.bound
            }
            Method::Rejection => self.sample_rejection(rng),
        }
    }

    fn sample_rejection<R: CryptoRngCore + ?Sized>(&self, rng: &mut R) -> i64 {
        let span = 2 * self.bound as u64 + 1;
        let inv = 1.0 / (2.0 * self.sigma * self.sigma);
        const TWO_POW_MINUS_53: f64 = 1.0 / (1u64 << 53) as f64;
        loop {
            let x = uniform_below(rng, span) as i64 - self.bound;
            let accept = (-((x * x) as f64) * inv).exp();
            let u = (rng.next_u64() >> 11) as f64 * TWO_POW_MINUS_53;
            if u < accept {
                return x;
            }
        }
    }

    /// Fills `out` with independent samples.
    pub fn fill<R: CryptoRngCore + ?Sized>(&self, rng: &mut R, out: &mut [i64]) {
        for x in out.iter_mut() {
            *x = self.sample(rng);
        }
    }

    /// A vector of `n` independent samples.
    pub fn sample_vec<R: CryptoRngCore + ?Sized>(&self, rng: &mut R, n: usize) -> Vec<i64> {
        let mut out = vec![0i64; n];
        self.fill(rng, &mut out);
        out
    }
}

/// Largest standard deviation of a [`WideGaussian`], `2^58`: with its tail cut the samples stay below
/// `2^62` in magnitude, so they fit an `i64` (and any sum of two) without overflow.
pub const MAX_WIDE_SIGMA: f64 = (1u64 << 58) as f64;

/// Tail cut (in multiples of sigma) of the base samples of a [`WideGaussian`]: a base sample falls outside
/// `12 sigma` with probability below `2^-100`, so the truncation is statistically invisible.
pub const WIDE_TAIL_CUT: f64 = 12.0;

/// `sqrt(2) eta_eps(Z) / sqrt(2 pi)` for `eps = 2^-64`, in units of sigma: the smallest standard deviation
/// of both samples per unit of the multiplier `k` in `x_1 + k x_2` (see [`WideGaussian`]).
/// `eta_eps(Z) <= sqrt(ln(2 (1 + 1/eps)) / pi) = 3.787` (Micciancio-Regev, Lemma 3.3), i.e. 1.511 in
/// sigma units; the factor `sqrt(2)` is the one of the convolution theorem's condition.
const SMOOTHING_SIGMAS: f64 = 2.137;

/// Largest number of convolution levels; three levels from a base of `2^13` already exceed `2^90`.
const MAX_WIDE_LEVELS: usize = 4;

/// A discrete Gaussian over the integers of large standard deviation (up to `2^58`), for noise flooding,
/// built by convolution from the small-sigma [`DiscreteGaussian`].
///
/// [`DiscreteGaussian`] handles `sigma <= 2^13` directly. Beyond that, a sample of level `j` is
/// `x_1 + k_j x_2`, with `x_1, x_2` two independent samples of level `j - 1` (standard deviation
/// `sigma_{j-1}`) and an integer multiplier `k_j`, so `sigma_j = sigma_{j-1} sqrt(1 + k_j^2)` and level `L`
/// uses `2^L` base samples. By the convolution theorem for discrete Gaussians (Micciancio-Peikert,
/// "Hardness of SIS and LWE with Small Parameters", Crypto 2013, Theorem 3.3, with the vector `(1, k)`:
/// `gcd = 1`, `||(1, k)||_inf = k`; used this way by Micciancio-Walter, Crypto 2017), `x_1 + k x_2` is within
/// statistical distance `O(eps)` of the discrete Gaussian of standard deviation
/// `sqrt(sigma_1^2 + k^2 sigma_2^2)` when both samples have `sigma_i >= sqrt(2) k eta_eps(Z) / sqrt(2 pi)`
/// (`SMOOTHING_SIGMAS`, `eps = 2^-64`), which every level here checks. Each level multiplies sigma by up to
/// `sigma_{j-1} / 2.137`, so sigma squares at every level: one level reaches `2^24.9`, two about `2^47.4`,
/// three the maximum `2^58`.
///
/// The multipliers are chosen first and the base sigma last (anywhere in `[0.63 * 2^13, 2^13]`, the
/// [`DiscreteGaussian`] accepts real sigmas), so that the standard deviation is the one asked for up to
/// floating-point rounding, not just up to the granularity of integer multipliers. Whatever the
/// smoothing, the variance of the sum is exactly `sigma_{j-1}^2 (1 + k_j^2)` (independent samples), up to
/// the negligible truncation of the base.
///
/// Side channels: the base samples of sigma above 64/12 come from rejection sampling, whose number of
/// rejected candidates (visible through timing) is independent of the value finally accepted; the
/// combination is branch-free integer arithmetic.
#[derive(Clone, Debug, PartialEq)]
pub struct WideGaussian {
    sigma: f64,
    base: DiscreteGaussian,
    /// Multipliers `k_1 .. k_L` of the levels, innermost first.
    multipliers: Vec<i64>,
    bound: i64,
}

impl WideGaussian {
    /// A discrete Gaussian of standard deviation `sigma`, `0 < sigma <= 2^58`.
    ///
    /// Errors with [`Error::OutOfRange`] for a sigma outside `(0, 2^58]` (or not finite).
    pub fn new(sigma: f64) -> Result<Self> {
        if !(sigma > 0.0 && sigma <= MAX_WIDE_SIGMA) {
            return Err(Error::OutOfRange {
                what: "wide discrete Gaussian sigma (must be positive)",
                value: sigma,
                min: 0.0,
                max: MAX_WIDE_SIGMA,
            });
        }
        if sigma <= MAX_SIGMA {
            let base = DiscreteGaussian::new(sigma, WIDE_TAIL_CUT)?;
            return Ok(Self {
                sigma,
                bound: base.bound(),
                base,
                multipliers: Vec::new(),
            });
        }
        for levels in 1..=MAX_WIDE_LEVELS {
            if let Some(g) = Self::with_levels(sigma, levels)? {
                return Ok(g);
            }
        }
        // Unreachable for sigma <= 2^58 (three levels reach beyond 2^90); kept as an error, not a panic.
        Err(Error::OutOfRange {
            what: "wide discrete Gaussian sigma (no convolution schedule found)",
            value: sigma,
            min: 0.0,
            max: MAX_WIDE_SIGMA,
        })
    }

    /// The schedule with `levels` convolution levels, if one reaches `sigma` with every level smoothed.
    fn with_levels(sigma: f64, levels: usize) -> Result<Option<Self>> {
        // Inner multipliers: as large as allowed from the smallest base the last step can leave. The
        // ceiling below shrinks the base from MAX_SIGMA by sqrt(1 + (k-1)^2) / sqrt(1 + k^2) at worst,
        // which is smallest for k = 2: sqrt(2/5) = 0.632.
        let min_base = MAX_SIGMA * 0.63;
        let mut nominal = min_base;
        let mut multipliers = Vec::with_capacity(levels);
        let mut inner_growth = 1.0f64;
        for _ in 1..levels {
            let k = (nominal / SMOOTHING_SIGMAS).floor();
            let g = (1.0 + k * k).sqrt();
            multipliers.push(k as i64);
            nominal *= g;
            inner_growth *= g;
        }
        // Last multiplier: the smallest k with MAX_SIGMA * inner_growth * sqrt(1 + k^2) >= sigma.
        let ratio = sigma / (MAX_SIGMA * inner_growth);
        if ratio <= 1.0 {
            // Fewer levels suffice; the caller tried them first, so this only happens for levels = 1
            // with sigma <= MAX_SIGMA, which `new` handles without convolution.
            return Ok(None);
        }
        let k_last = (ratio * ratio - 1.0).sqrt().ceil().max(1.0);
        multipliers.push(k_last as i64);
        let growth = inner_growth * (1.0 + k_last * k_last).sqrt();
        let base_sigma = sigma / growth;
        // Check every level's smoothing condition with the actual widths.
        let mut width = base_sigma;
        for &k in &multipliers {
            if width < SMOOTHING_SIGMAS * k as f64 {
                return Ok(None);
            }
            width *= (1.0 + (k * k) as f64).sqrt();
        }
        if !(base_sigma > 0.0 && base_sigma <= MAX_SIGMA) {
            return Ok(None);
        }
        let base = DiscreteGaussian::new(base_sigma, WIDE_TAIL_CUT)?;
        // |sample| <= B_0 prod (1 + k_j); about 12 sigma (1 + 1/k) per level, below 2^62 for 2^58.
        let mut bound = base.bound() as f64;
        for &k in &multipliers {
            bound *= 1.0 + k as f64;
        }
        if bound >= 2f64.powi(62) {
            return Ok(None);
        }
        Ok(Some(Self {
            sigma: base_sigma * growth,
            base,
            multipliers,
            bound: bound as i64,
        }))
    }

    /// The standard deviation (the one asked for, up to floating-point rounding).
    pub fn sigma(&self) -> f64 {
        self.sigma
    }

    /// The largest absolute value a sample can take.
    pub fn bound(&self) -> i64 {
        self.bound
    }

    /// Number of convolution levels (0 when sigma is at most `2^13`).
    pub fn levels(&self) -> usize {
        self.multipliers.len()
    }

    /// Base samples drawn per sample, `2^levels`.
    pub fn base_samples_per_sample(&self) -> usize {
        1usize << self.multipliers.len()
    }

    /// One sample.
    pub fn sample<R: CryptoRngCore + ?Sized>(&self, rng: &mut R) -> i64 {
        self.sample_level(rng, self.multipliers.len())
    }

    /// A sample of level `level` (`x_1 + k_level x_2` of two samples of the level below).
    fn sample_level<R: CryptoRngCore + ?Sized>(&self, rng: &mut R, level: usize) -> i64 {
        match level.checked_sub(1) {
            None => self.base.sample(rng),
            Some(below) => {
                let fine = self.sample_level(rng, below);
                let coarse = self.sample_level(rng, below);
                // No overflow: |fine| + k |coarse| <= bound < 2^62 by construction.
                fine + self.multipliers[below] * coarse
            }
        }
    }

    /// Fills `out` with independent samples.
    pub fn fill<R: CryptoRngCore + ?Sized>(&self, rng: &mut R, out: &mut [i64]) {
        for x in out.iter_mut() {
            *x = self.sample(rng);
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    const SEED: Seed = [7u8; 32];

    fn rng() -> Csprng {
        Csprng::insecure_from_seed_for_tests(SEED)
    }

    /// Chi-square limit for 15 degrees of freedom: a correct sampler exceeds 50 with probability about
    /// 1.2e-5.
    const CHI2_15_LIMIT: f64 = 50.0;

    fn chi_square(observed: &[u64], expected: &[f64]) -> f64 {
        observed
            .iter()
            .zip(expected)
            .map(|(&o, &e)| (o as f64 - e) * (o as f64 - e) / e)
            .sum()
    }

    fn check_uniform(q: u64, samples: usize) {
        let m = Modulus::new(q).unwrap();
        let mut r = rng();
        let mut v = vec![0u64; samples];
        fill_uniform_mod(&mut r, &m, &mut v);
        assert!(v.iter().all(|&x| x < q));
        // Mean: (q-1)/2 with standard error sqrt((q^2-1)/12/n).
        let n = samples as f64;
        let qf = q as f64;
        let mean = v.iter().map(|&x| x as f64).sum::<f64>() / n;
        let se = ((qf * qf - 1.0) / 12.0 / n).sqrt();
        assert!(
            (mean - (qf - 1.0) / 2.0).abs() < 5.0 * se,
            "q = {q}: mean {mean}, expected {}, se {se}",
            (qf - 1.0) / 2.0
        );
        // Chi-square over 16 buckets floor(16 x / q), with exact bucket sizes.
        let mut observed = [0u64; 16];
        for &x in &v {
            observed[((x as u128 * 16) / q as u128) as usize] += 1;
        }
        let ceil_div = |a: u128, b: u128| a.div_ceil(b);
        let expected: Vec<f64> = (0..16u128)
            .map(|b| {
                let lo = ceil_div(b * q as u128, 16);
                let hi = ceil_div((b + 1) * q as u128, 16);
                (hi - lo) as f64 / qf * n
            })
            .collect();
        let chi2 = chi_square(&observed, &expected);
        assert!(chi2 < CHI2_15_LIMIT, "q = {q}: chi-square {chi2}");
    }

    #[test]
    fn sampling_uniform_mod_small_modulus() {
        check_uniform(17, 1_000_000);
    }

    #[test]
    fn sampling_uniform_mod_50_bit_prime() {
        check_uniform((1u64 << 50) - 27, 1_000_000);
    }

    #[test]
    fn sampling_uniform_mod_extremes() {
        // Largest modulus (62 bits) and a power of two, plus the single-draw function.
        check_uniform((1u64 << 62) - 57, 200_000);
        check_uniform(1 << 20, 200_000);
        let m = Modulus::new(2).unwrap();
        let mut r = rng();
        let ones: u64 = (0..100_000).map(|_| uniform_mod(&mut r, &m)).sum();
        // Binomial(1e5, 1/2): sd 158.
        assert!((ones as i64 - 50_000).abs() < 5 * 158, "ones = {ones}");
    }

    #[test]
    fn sampling_masks_and_bounded_draws() {
        assert_eq!(bit_mask(0), 0);
        assert_eq!(bit_mask(1), 1);
        assert_eq!(bit_mask(16), 31);
        assert_eq!(bit_mask(u64::MAX), u64::MAX);
        let mut r = rng();
        assert!((0..100).all(|_| uniform_below(&mut r, 1) == 0));
        assert!((0..1000).all(|_| uniform_below(&mut r, 3) < 3));
    }

    #[test]
    fn sampling_ternary_frequencies() {
        let n = 1_000_000;
        let v = sample_ternary(&mut rng(), n);
        let mut counts = [0u64; 3];
        for &x in &v {
            assert!((-1..=1).contains(&x));
            counts[(x + 1) as usize] += 1;
        }
        let nf = n as f64;
        let sd = (nf * (1.0 / 3.0) * (2.0 / 3.0)).sqrt();
        for (value, &c) in (-1..=1).zip(&counts) {
            assert!(
                (c as f64 - nf / 3.0).abs() < 5.0 * sd,
                "value {value}: {c} of {n}"
            );
        }
        // Odd lengths and empty slices are filled completely.
        for len in [0usize, 1, 31, 32, 33, 1001] {
            let mut buf = vec![5i64; len];
            fill_ternary(&mut rng(), &mut buf);
            assert!(buf.iter().all(|x| (-1..=1).contains(x)));
        }
    }

    #[test]
    fn sampling_ternary_hamming_weight() {
        let (n, h, trials) = (1024usize, 64usize, 2000usize);
        let mut r = rng();
        let mut plus = 0u64;
        let mut buckets = [0u64; 16];
        let mut buf = vec![0i64; n];
        for _ in 0..trials {
            fill_ternary_hamming(&mut r, h, &mut buf).unwrap();
            let nonzero = buf.iter().filter(|&&x| x != 0).count();
            assert_eq!(nonzero, h);
            for (i, &x) in buf.iter().enumerate() {
                assert!((-1..=1).contains(&x));
                if x != 0 {
                    buckets[i * 16 / n] += 1;
                    plus += u64::from(x == 1);
                }
            }
        }
        let total = (h * trials) as f64;
        // Signs: Binomial(total, 1/2).
        let sd = (total / 4.0).sqrt();
        assert!(
            (plus as f64 - total / 2.0).abs() < 5.0 * sd,
            "{plus} of {total}"
        );
        // Positions: uniform over 16 buckets of n/16 positions.
        let chi2 = chi_square(&buckets, &[total / 16.0; 16]);
        assert!(chi2 < CHI2_15_LIMIT, "chi-square {chi2}");

        // Edge cases: h = 0, h = n, n = 0.
        assert!(sample_ternary_hamming(&mut r, 10, 0)
            .unwrap()
            .iter()
            .all(|&x| x == 0));
        assert!(sample_ternary_hamming(&mut r, 10, 10)
            .unwrap()
            .iter()
            .all(|&x| x == 1 || x == -1));
        assert!(sample_ternary_hamming(&mut r, 0, 0).unwrap().is_empty());
        // A buffer with old contents is cleared.
        let mut dirty = vec![9i64; 100];
        fill_ternary_hamming(&mut r, 3, &mut dirty).unwrap();
        assert_eq!(dirty.iter().filter(|&&x| x != 0).count(), 3);
    }

    #[test]
    fn sampling_ternary_hamming_rejects_h_above_n() {
        let err = sample_ternary_hamming(&mut rng(), 8, 9).unwrap_err();
        match err {
            Error::OutOfRange { value, max, .. } => {
                assert_eq!(value, 9.0);
                assert_eq!(max, 8.0);
            }
            other => panic!("unexpected error {other:?}"),
        }
        let mut buf = [0i64; 4];
        assert!(fill_ternary_hamming(&mut rng(), 5, &mut buf).is_err());
    }

    /// Normalized pmf of the truncated discrete Gaussian on [-bound, bound], indexed by x + bound.
    fn pmf(sigma: f64, bound: i64) -> Vec<f64> {
        let w: Vec<f64> = (-bound..=bound)
            .map(|x| (-((x * x) as f64) / (2.0 * sigma * sigma)).exp())
            .collect();
        let total: f64 = w.iter().sum();
        w.iter().map(|x| x / total).collect()
    }

    /// Checks support, mean, variance (against the exact variance of the truncated distribution, itself
    /// close to sigma^2) and the frequencies of a few values or ranges against the pmf.
    fn check_gaussian(g: &DiscreteGaussian, samples: usize, ranges: &[(i64, i64)]) {
        let mut r = rng();
        let v = g.sample_vec(&mut r, samples);
        let b = g.bound();
        assert!(v.iter().all(|x| x.abs() <= b), "sample outside [-{b}, {b}]");
        let p = pmf(g.sigma(), b);
        let var_exact: f64 = (-b..=b).zip(&p).map(|(x, px)| (x * x) as f64 * px).sum();
        let m4_exact: f64 = (-b..=b)
            .zip(&p)
            .map(|(x, px)| ((x * x) as f64).powi(2) * px)
            .sum();
        let s2 = g.sigma() * g.sigma();
        assert!(
            (var_exact - s2).abs() < 1e-3 * s2,
            "exact variance {var_exact} vs sigma^2 {s2}"
        );
        let n = samples as f64;
        let mean = v.iter().map(|&x| x as f64).sum::<f64>() / n;
        let se_mean = (var_exact / n).sqrt();
        assert!(mean.abs() < 5.0 * se_mean, "mean {mean}, se {se_mean}");
        let var = v.iter().map(|&x| (x as f64 - mean).powi(2)).sum::<f64>() / (n - 1.0);
        let se_var = ((m4_exact - var_exact * var_exact) / n).sqrt();
        assert!(
            (var - var_exact).abs() < 5.0 * se_var,
            "variance {var}, expected {var_exact}, se {se_var}"
        );
        for &(lo, hi) in ranges {
            let observed = v.iter().filter(|&&x| lo <= x && x <= hi).count() as f64;
            let prob: f64 = (lo..=hi).map(|x| p[(x + b) as usize]).sum();
            let sd = (n * prob * (1.0 - prob)).sqrt();
            assert!(
                (observed - n * prob).abs() < 5.0 * sd,
                "[{lo}, {hi}]: {observed} of {n}, expected {}",
                n * prob
            );
        }
    }

    fn singletons(k: i64) -> Vec<(i64, i64)> {
        (-k..=k).map(|x| (x, x)).collect()
    }

    #[test]
    fn sampling_gaussian_default_sigma() {
        let g = DiscreteGaussian::default();
        assert_eq!(g, DiscreteGaussian::new(3.2, 6.0).unwrap());
        assert_eq!(g.bound(), 19);
        assert!(matches!(g.method, Method::Cdt(_)));
        let mut ranges = singletons(5);
        ranges.extend([(-19, -10), (10, 19), (-9, -6), (6, 9)]);
        check_gaussian(&g, 1_000_000, &ranges);
    }

    #[test]
    fn sampling_gaussian_rejection_matches_pmf_small_sigma() {
        let g = DiscreteGaussian::build(3.2, 6.0, true);
        assert!(matches!(g.method, Method::Rejection));
        check_gaussian(&g, 500_000, &singletons(5));
    }

    #[test]
    fn sampling_gaussian_large_sigma() {
        let sigma = 8192.0;
        let g = DiscreteGaussian::with_sigma(sigma).unwrap();
        assert_eq!(g.bound(), 6 * 8192);
        assert!(matches!(g.method, Method::Rejection));
        let s = 8192;
        let ranges = [
            (-s / 2, s / 2),
            (-s, s),
            (-2 * s, 2 * s),
            (3 * s, 6 * s),
            (-6 * s, -3 * s),
            (0, 0),
            (-100, 100),
        ];
        check_gaussian(&g, 1_000_000, &ranges);
    }

    #[test]
    fn sampling_gaussian_table_limit_and_short_tail() {
        // Largest CDT support and the smallest rejection support.
        let g = DiscreteGaussian::new(10.0, 6.4).unwrap();
        assert_eq!(g.bound(), 64);
        assert!(matches!(g.method, Method::Cdt(_)));
        check_gaussian(&g, 300_000, &[(-10, 10), (30, 64), (0, 0)]);
        let g = DiscreteGaussian::new(10.0, 6.5).unwrap();
        assert_eq!(g.bound(), 65);
        assert!(matches!(g.method, Method::Rejection));
        check_gaussian(&g, 300_000, &[(-10, 10), (30, 65), (0, 0)]);
        // A short tail: the truncated distribution is still matched value by value.
        let g = DiscreteGaussian::new(3.2, 1.0).unwrap();
        assert_eq!(g.bound(), 3);
        let v = g.sample_vec(&mut rng(), 300_000);
        let p = pmf(3.2, 3);
        for x in -3..=3i64 {
            let observed = v.iter().filter(|&&y| y == x).count() as f64;
            let e = 300_000.0 * p[(x + 3) as usize];
            let sd = (e * (1.0 - p[(x + 3) as usize])).sqrt();
            assert!((observed - e).abs() < 5.0 * sd, "{x}: {observed} vs {e}");
        }
        // Tiny sigma: bound 0, every sample is 0.
        let g = DiscreteGaussian::new(0.1, 6.0).unwrap();
        assert_eq!(g.bound(), 0);
        assert!(g.sample_vec(&mut rng(), 1000).iter().all(|&x| x == 0));
    }

    #[test]
    fn sampling_gaussian_rejects_bad_parameters() {
        for sigma in [0.0, -1.0, f64::NAN, f64::INFINITY, 8192.5, -0.0] {
            let err = DiscreteGaussian::new(sigma, 6.0).unwrap_err();
            assert!(
                matches!(err, Error::OutOfRange { max, .. } if max == MAX_SIGMA),
                "sigma {sigma}: {err:?}"
            );
            assert!(DiscreteGaussian::with_sigma(sigma).is_err());
        }
        for tail in [0.0, 0.99, -6.0, f64::NAN, f64::INFINITY, 32.5] {
            let err = DiscreteGaussian::new(3.2, tail).unwrap_err();
            assert!(
                matches!(err, Error::OutOfRange { min, max, .. } if min == MIN_TAIL_CUT && max == MAX_TAIL_CUT),
                "tail {tail}: {err:?}"
            );
        }
        // The limits themselves are accepted.
        assert!(DiscreteGaussian::new(MAX_SIGMA, MAX_TAIL_CUT).is_ok());
        assert!(DiscreteGaussian::new(1e-300, MIN_TAIL_CUT).is_ok());
        let msg = DiscreteGaussian::new(9000.0, 6.0).unwrap_err().to_string();
        assert!(msg.contains("9000") && msg.contains("8192"), "{msg}");
    }

    /// Mean, variance and the mass within one and two sigmas of a wide Gaussian, each within 5 standard
    /// errors of the sample size (the exact Gaussian figures: variance sigma^2 with standard error
    /// sigma^2 sqrt(2 / n); masses 0.682689 and 0.954500, binomial standard errors).
    fn check_wide(sigma: f64, samples: usize) {
        let g = WideGaussian::new(sigma).unwrap();
        assert!(
            (g.sigma() / sigma - 1.0).abs() < 1e-12,
            "{} vs {sigma}",
            g.sigma()
        );
        let mut r = rng();
        let v: Vec<f64> = (0..samples)
            .map(|_| {
                let x = g.sample(&mut r);
                assert!(x.abs() <= g.bound());
                x as f64
            })
            .collect();
        let n = samples as f64;
        let mean = v.iter().sum::<f64>() / n;
        assert!(
            mean.abs() < 5.0 * sigma / n.sqrt(),
            "sigma {sigma}: mean {mean}"
        );
        let var = v.iter().map(|x| x * x).sum::<f64>() / n;
        let se = sigma * sigma * (2.0 / n).sqrt();
        assert!(
            (var - sigma * sigma).abs() < 5.0 * se,
            "sigma {sigma}: variance {var}, expected {}, se {se}",
            sigma * sigma
        );
        for (k, p) in [(1.0, 0.682_689_492), (2.0, 0.954_499_736)] {
            let inside = v.iter().filter(|x| x.abs() <= k * sigma).count() as f64;
            let sd = (n * p * (1.0 - p)).sqrt();
            assert!(
                (inside - n * p).abs() < 5.0 * sd,
                "sigma {sigma}: {inside} of {n} within {k} sigma, expected {}",
                n * p
            );
        }
    }

    #[test]
    fn sampling_wide_gaussian_levels_and_moments() {
        // No convolution, one level (just above and far above 2^13), two and three levels.
        check_wide(100.0, 200_000);
        check_wide(2f64.powi(14), 200_000);
        check_wide(2f64.powi(24), 200_000);
        check_wide(2f64.powi(30), 200_000);
        check_wide(2f64.powi(50), 100_000);
        check_wide(2f64.powi(58), 50_000);
    }

    #[test]
    fn sampling_wide_gaussian_schedules() {
        // Every power of two up to 2^58 (and a few odd sigmas) has a schedule: exact sigma, smoothed
        // levels, bound below 2^62, levels as documented.
        let mut sigmas: Vec<f64> = (0..=58).map(|b| 2f64.powi(b)).collect();
        sigmas.extend([8192.5, 3.0e7, 1.5e15, 9.0e16]);
        for sigma in sigmas {
            let g = WideGaussian::new(sigma).unwrap();
            assert!((g.sigma() / sigma - 1.0).abs() < 1e-12, "sigma {sigma}");
            assert!(g.bound() < 1 << 62);
            let mut width = g.base.sigma();
            assert!(width <= MAX_SIGMA);
            for &k in &g.multipliers {
                assert!(
                    width >= SMOOTHING_SIGMAS * k as f64,
                    "sigma {sigma}: level not smoothed"
                );
                width *= (1.0 + (k * k) as f64).sqrt();
            }
            let expected_levels = match sigma.log2() {
                l if l <= 13.0 => 0,
                l if l <= 24.9 => 1,
                l if l <= 47.0 => 2,
                _ => 3,
            };
            assert_eq!(g.levels(), expected_levels, "sigma {sigma}");
            assert_eq!(g.base_samples_per_sample(), 1 << expected_levels);
        }
        for bad in [0.0, -1.0, f64::NAN, f64::INFINITY, MAX_WIDE_SIGMA * 2.0] {
            assert!(matches!(
                WideGaussian::new(bad),
                Err(Error::OutOfRange { max, .. }) if max == MAX_WIDE_SIGMA
            ));
        }
    }

    /// The network in its serial order (stage, pass, index), as it ran before the block split.
    fn serial_network(keys: &mut [u128], values: &mut [i64]) {
        let len = keys.len();
        let mut k = 2;
        while k <= len {
            let mut j = k / 2;
            while j > 0 {
                for i in 0..len {
                    let l = i ^ j;
                    if l > i {
                        let (lo, hi) = keys.split_at_mut(l);
                        let (vlo, vhi) = values.split_at_mut(l);
                        let descending = u128::from(i & k != 0);
                        compare_exchange(
                            (&mut lo[i], &mut hi[0]),
                            (&mut vlo[i], &mut vhi[0]),
                            descending,
                        );
                    }
                }
                j /= 2;
            }
            k *= 2;
        }
    }

    #[test]
    fn sampling_bitonic_blocks_match_the_serial_network_on_any_thread_count() {
        // Lengths below, at and above the block (up to 8 blocks), with repeated keys: the same
        // compare-exchanges must give the same output, ties included.
        let mut r = rng();
        for log_len in [0u32, 1, 5, 11, 12, 14] {
            let len = 1usize << log_len;
            let keys: Vec<u128> = (0..len).map(|_| u128::from(r.next_u64() % 64)).collect();
            let values: Vec<i64> = (0..len as i64).collect();
            let (mut ks, mut vs) = (keys.clone(), values.clone());
            serial_network(&mut ks, &mut vs);
            for threads in [1, 2, 3] {
                let pool = rayon::ThreadPoolBuilder::new()
                    .num_threads(threads)
                    .build()
                    .unwrap();
                let (mut kp, mut vp) = (keys.clone(), values.clone());
                pool.install(|| bitonic_sort_by_key(&mut kp, &mut vp));
                assert_eq!(kp, ks, "keys, length {len}, {threads} threads");
                assert_eq!(vp, vs, "values, length {len}, {threads} threads");
            }
            assert!(ks.windows(2).all(|w| w[0] <= w[1]));
        }
    }

    #[test]
    fn sampling_bitonic_sort_orders_keys_and_carries_values() {
        let mut r = rng();
        for len in [1usize, 2, 8, 1024] {
            let mut keys: Vec<u128> = (0..len).map(|_| u128::from(r.next_u64() % 50)).collect();
            let mut values: Vec<i64> = keys.iter().map(|&k| k as i64 * 3).collect();
            let mut expected = keys.clone();
            expected.sort_unstable();
            bitonic_sort_by_key(&mut keys, &mut values);
            assert_eq!(keys, expected);
            assert!(keys.iter().zip(&values).all(|(&k, &v)| v == k as i64 * 3));
        }
    }

    #[test]
    fn sampling_to_residues() {
        let q = Modulus::new(17).unwrap();
        let mut out = [0u64; 5];
        to_residues(&q, &[-1, 0, 1, -17, -20], &mut out).unwrap();
        assert_eq!(out, [16, 0, 1, 0, 14]);
        let big = Modulus::new((1u64 << 50) - 27).unwrap();
        let g = DiscreteGaussian::default();
        let v = g.sample_vec(&mut rng(), 1000);
        let mut res = vec![0u64; 1000];
        to_residues(&big, &v, &mut res).unwrap();
        for (&x, &r) in v.iter().zip(&res) {
            assert_eq!(big.center(r), x);
        }
        let err = to_residues(&q, &[1, 2, 3], &mut out).unwrap_err();
        assert!(matches!(
            err,
            Error::LengthMismatch {
                expected: 3,
                got: 5,
                ..
            }
        ));
    }

    #[test]
    fn sampling_csprng_streams_and_debug() {
        let mut a = rng();
        let mut b = rng();
        assert_eq!(a.next_u64(), b.next_u64());
        let mut p = Csprng::from_public_seed(SEED);
        let mut p2 = Csprng::from_public_seed(SEED);
        let x = p.next_u64();
        assert_eq!(x, p2.next_u64());
        // Domain separation from the test constructor with the same bytes.
        assert_ne!(x, rng().next_u64());
        // Fresh seeds differ and expand to different public streams.
        let s1 = a.fresh_seed();
        let s2 = a.fresh_seed();
        assert_ne!(s1, s2);
        assert_ne!(
            Csprng::from_public_seed(s1).next_u64(),
            Csprng::from_public_seed(s2).next_u64()
        );
        let mut os1 = Csprng::from_os().unwrap();
        let mut os2 = Csprng::from_os().unwrap();
        assert_ne!(os1.fresh_seed(), os2.fresh_seed());
        assert_eq!(format!("{os1:?}"), "Csprng { .. }");
        assert_eq!(format!("{a:?}"), "Csprng { .. }");
        // Usable through the rand APIs.
        use rand::Rng;
        let y: u8 = os1.gen_range(0..10);
        assert!(y < 10);
        let dynamic: &mut dyn CryptoRngCore = &mut b;
        let m = Modulus::new(97).unwrap();
        assert!(uniform_mod(dynamic, &m) < 97);
    }

    #[test]
    fn sampling_substreams_are_reproducible_and_distinct() {
        let mut parent = rng();
        let streams = Substreams::new(&mut parent);
        // The parent moved on by exactly one seed.
        let mut again = rng();
        let _ = again.fresh_seed();
        assert_eq!(parent.next_u64(), again.next_u64());
        let first: Vec<u64> = (0..4).map(|i| streams.stream(i).next_u64()).collect();
        let second: Vec<u64> = (0..4).map(|i| streams.stream(i).next_u64()).collect();
        assert_eq!(first, second);
        for i in 0..4 {
            for j in i + 1..4 {
                assert_ne!(first[i], first[j], "streams {i} and {j}");
            }
        }
        // A second family of the same parent has another key.
        let other = Substreams::new(&mut parent);
        assert_ne!(other.stream(0).next_u64(), first[0]);
        // Neither the parent's stream nor a public expansion of the same bytes.
        assert_ne!(rng().next_u64(), first[0]);
        assert_eq!(format!("{streams:?}"), "Substreams { .. }");
        // Each stream is uniform (the samplers' own tests run on any CryptoRngCore).
        let mut s = streams.stream(7);
        let ones: u32 = (0..10_000).map(|_| s.next_u64().count_ones()).sum();
        let mean = f64::from(ones) / 10_000.0;
        assert!((mean - 32.0).abs() < 0.3, "mean popcount {mean}");
    }

    use rand_chacha::ChaCha20Rng;
    use rand_core::SeedableRng;

    /// A call of the mix below: what it returned, as bytes.
    fn one_call<R: RngCore>(r: &mut R, op: u64, out: &mut Vec<u8>) {
        match op % 8 {
            0..=2 => out.extend(r.next_u32().to_le_bytes()),
            3..=5 => out.extend(r.next_u64().to_le_bytes()),
            // Odd and even short lengths, empty included, and long ones across several refills.
            6 => {
                let mut b = vec![0u8; (op >> 8) as usize % 71];
                r.fill_bytes(&mut b);
                out.extend(b);
            }
            _ => {
                let mut b = vec![0u8; 1000 + (op >> 8) as usize % 3000];
                r.try_fill_bytes(&mut b).unwrap();
                out.extend(b);
            }
        }
    }

    /// Every call mix gives the bytes of `rand_chacha`'s generator on the same stream.
    fn check_call_mix(mut ours: Csprng, mut reference: ChaCha20Rng, calls: usize, label: &str) {
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let (mut got, mut want) = (Vec::new(), Vec::new());
        for i in 0..calls {
            // xorshift64: a fixed, varied sequence of calls.
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            one_call(&mut ours, state, &mut got);
            one_call(&mut reference, state, &mut want);
            if got != want {
                let at = got.iter().zip(&want).position(|(a, b)| a != b);
                panic!(
                    "{label}: call {i} (op {}), first differing byte {at:?}",
                    state % 8
                );
            }
            got.clear();
            want.clear();
        }
        // Still in step after the mix.
        assert_eq!(ours.fresh_seed(), {
            let mut s = [0u8; SEED_LEN];
            reference.fill_bytes(&mut s);
            s
        });
    }

    #[test]
    fn sampling_csprng_is_rand_chacha_for_every_call_mix() {
        // Each engine this processor has, on the default and the public stream.
        for stream in [0, PUBLIC_STREAM] {
            for (name, engine) in crate::chacha::engines(&SEED, stream, 0) {
                let ours = Csprng {
                    inner: BlockRng::new(engine),
                };
                let mut reference = ChaCha20Rng::from_seed(SEED);
                reference.set_stream(stream);
                check_call_mix(ours, reference, 20_000, &format!("{name}, stream {stream}"));
            }
        }
        // The constructors: their streams.
        check_call_mix(rng(), ChaCha20Rng::from_seed(SEED), 3000, "tests");
        let mut public = ChaCha20Rng::from_seed(SEED);
        public.set_stream(PUBLIC_STREAM);
        check_call_mix(Csprng::from_public_seed(SEED), public, 3000, "public");
        let mut parent = rng();
        let streams = Substreams::new(&mut parent);
        let key = rng().fresh_seed();
        for index in [0u64, 1, 5, u64::MAX] {
            let mut sub = ChaCha20Rng::from_seed(key);
            sub.set_stream(index);
            check_call_mix(
                streams.stream(index),
                sub,
                1000,
                &format!("substream {index}"),
            );
        }
    }

    /// The one-word-per-try loop `fill_uniform_mod` replaced: its values define the wire format's
    /// expansion of public seeds.
    fn uniform_one_by_one<R: RngCore>(rng: &mut R, q: &Modulus, out: &mut [u64]) {
        let mask = bit_mask(q.value() - 1);
        for x in out.iter_mut() {
            *x = loop {
                let r = rng.next_u64() & mask;
                if r < q.value() {
                    break r;
                }
            };
        }
    }

    #[test]
    fn sampling_fill_uniform_mod_draws_the_words_of_one_try_at_a_time() {
        // Moduli without rejection (2), with about a quarter (3, 97 of 128) and about half of the
        // tries rejected (2^40 + 1, 2^61 + 1), a 50-bit NTT-size prime and 2^61 - 1 (almost none).
        let moduli = [
            2u64,
            3,
            97,
            (1 << 40) + 1,
            (1 << 50) - 27,
            (1 << 61) - 1,
            (1 << 61) + 1,
        ];
        let lengths = [0usize, 1, 2, 7, 511, 512, 513, 1025, 4099];
        for &q in &moduli {
            let m = Modulus::new(q).unwrap();
            for &len in &lengths {
                // Our generator (any engine it picks) and rand_chacha's through the generic path.
                let (mut a, mut b) = (rng(), rng());
                let (mut got, mut want) = (vec![0u64; len], vec![0u64; len]);
                fill_uniform_mod(&mut a, &m, &mut got);
                uniform_one_by_one(&mut b, &m, &mut want);
                assert_eq!(got, want, "q = {q}, length {len}");
                assert!(got.iter().all(|&x| x < q));
                // Both generators stopped at the same word (an odd one included: after a next_u32).
                assert_eq!(
                    a.next_u64(),
                    b.next_u64(),
                    "q = {q}, length {len}: position"
                );
                assert_eq!(a.next_u32(), b.next_u32());
                fill_uniform_mod(&mut a, &m, &mut got);
                uniform_one_by_one(&mut b, &m, &mut want);
                assert_eq!(got, want, "q = {q}, length {len}, odd word position");
                let mut c = ChaCha20Rng::from_seed(SEED);
                fill_uniform_mod(&mut c, &m, &mut got);
                let mut d = ChaCha20Rng::from_seed(SEED);
                uniform_one_by_one(&mut d, &m, &mut want);
                assert_eq!(got, want, "q = {q}, length {len}, rand_chacha");
                assert_eq!(c.next_u32(), d.next_u32());
            }
        }
    }
}
