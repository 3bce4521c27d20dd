//! Vectorized residue kernels: the multiply-accumulate loops of basis conversion (RNS-CKKS Algorithm 1,
//! HPS Section 2.2) and of the key-switching inner product, on 8 lanes of AVX-512 when the processor has
//! it (checked at run time) and in scalar `u128` arithmetic otherwise. Both paths compute the same
//! residues; tests compare them.
//!
//! The AVX-512 code goes through `pulp`'s safe wrappers of the intrinsics (the target features are
//! proved present by a `pulp::x86::V4` token). The one exception is the streaming store of
//! [`map_uninit`] (`_mm512_stream_si512` takes a raw pointer), together with the cast of the output it
//! has written in full to initialised words. AVX-512 has no
//! 64 x 64 -> 128-bit multiplication: it is assembled from four 32 x 32 -> 64-bit products
//! (`vpmuludq`), which is still several times faster than the scalar loop here.

use crate::modulus::{Modulus, ShoupConstant};

/// The multiplier of each source row in [`sum_of_products`].
#[derive(Clone, Copy, Debug)]
pub enum Weights<'a> {
    /// One constant per row (basis conversion: `[Q/q_i]_{p_j}`), with its Shoup quotient: each product
    /// is then a Shoup multiplication (no 128-bit reduction), summed in `[0, 2p)`.
    PerRow(&'a [ShoupConstant]),
    /// [`Weights::PerRow`] with the promise that every row value is below [`NARROW_BOUND`] and the modulus
    /// at most [`NARROW_BOUND`] (so the weights, residues below it, are too). The vector path then splits
    /// both factors into 30-bit halves and sums the four partial products exactly in 64-bit lanes: four
    /// `vpmuludq` per product and one 128-bit reduction per 128 rows, instead of the Shoup product's
    /// emulated 64 x 64 high word and two `vpmullq` per product (about twice as fast for basis conversion
    /// and complex scaling). The residues are the same as with `PerRow`; with a modulus above the bound
    /// the `PerRow` path runs instead.
    PerRowNarrow(&'a [ShoupConstant]),
    /// One slice per row, multiplied element by element (key switching: a key component's limb).
    PerElement(&'a [&'a [u64]]),
}

impl<'a> Weights<'a> {
    /// Per-row constants `w`: [`Weights::PerRowNarrow`] when the caller knows `narrow` (every row value
    /// below [`NARROW_BOUND`] and the modulus at most it), [`Weights::PerRow`] otherwise.
    pub fn per_row(w: &'a [ShoupConstant], narrow: bool) -> Self {
        if narrow {
            Weights::PerRowNarrow(w)
        } else {
            Weights::PerRow(w)
        }
    }

    fn len(&self) -> usize {
        match self {
            Weights::PerRow(w) | Weights::PerRowNarrow(w) => w.len(),
            Weights::PerElement(w) => w.len(),
        }
    }
}

/// Largest row value [`sum_of_products`] accepts (exclusive): every residue of a modulus of at most
/// [`crate::MAX_MODULUS_BITS`] bits.
pub const MAX_ROW_VALUE: u64 = 1 << 62;

/// Fewest rows for which [`Weights::PerElement`] takes the split-halves kernel (moduli up to
/// [`NARROW_BOUND`]): its regrouping and reduction per 7 rows only pay off over several products; one or
/// two (a plain or paired pointwise product) keep the widening multiplication.
const NARROW_ELEMENT_MIN_ROWS: usize = 3;

/// Bound (exclusive for row values, inclusive for the modulus) of [`Weights::PerRowNarrow`]: values below
/// it are two 30-bit halves, whose products stay below `2^60`, so 16 of them fit a 64-bit lane.
pub const NARROW_BOUND: u64 = 1 << 60;

/// Moduli below this bound take the AVX-512 IFMA path of per-element sums of products where the CPU has
/// it: residues then fit the 52-bit multipliers, and one `vpmadd52luq` / `vpmadd52huq` pair replaces the
/// four 32-bit products of the plain AVX-512 path (the ModUp digits and key rows of moduli below `2^50`,
/// as blind rotation uses).
const IFMA_BOUND: u64 = 1 << 50;

/// Most rows the IFMA path sums before one reduction: the low and high 52-bit halves are accumulated in
/// 64-bit lanes, `rows * 2^52 < 2^64`.
const IFMA_MAX_ROWS: usize = 4096;

/// Up to this many rows the IFMA path reduces with two 52-bit Shoup products instead of a 128-bit
/// Barrett reduction: the high half plus the carry of the low half stays below `2^52`
/// (`rows 2^48 + rows < 2^52` for residues below `2^50`).
const IFMA_SHOUP_ROWS: usize = 15;

/// How many products `row * weight` (`row < 2^62`, `weight < p`) fit in a `u128` accumulator that also
/// holds one already reduced value below `p`.
fn accumulation_capacity(m: &Modulus) -> usize {
    let p = m.value() as u128;
    (((u128::MAX - p) / ((MAX_ROW_VALUE as u128) * p)) as usize).max(1)
}

/// `out[c] = (sum_i rows[i][c] * w_i(c)) mod p` for every `c < out.len()`, with `w_i(c)` the row's constant
/// or its `c`-th element. Per-element products are summed lazily in 128 bits and reduced by the 128-bit
/// Barrett reduction of [`Modulus::reduce_wide`] (once per output unless there are more rows than a `u128`
/// can hold, then once per such group); constant weights use Shoup multiplication instead.
///
/// Requirements (checked, panicking on violation, since callers control them by construction): as many
/// weights as rows; every row and per-element weight at least `out.len()` long; row values below
/// [`MAX_ROW_VALUE`] and weights below `p` (checked in debug builds only: a larger value gives a wrong
/// residue, never undefined behaviour).
pub fn sum_of_products(m: &Modulus, rows: &[&[u64]], weights: Weights<'_>, out: &mut [u64]) {
    assert_eq!(rows.len(), weights.len(), "one weight per row");
    let n = out.len();
    assert!(rows.iter().all(|r| r.len() >= n), "row shorter than output");
    if let Weights::PerElement(w) = weights {
        assert!(
            w.iter().all(|r| r.len() >= n),
            "weight row shorter than output"
        );
    }
    if let Weights::PerRowNarrow(_) = weights {
        debug_assert!(
            rows.iter()
                .all(|r| r[..n].iter().all(|&x| x < NARROW_BOUND)),
            "PerRowNarrow row value at or above 2^60"
        );
    }
    if rows.is_empty() {
        out.fill(0);
        return;
    }
    let cap = accumulation_capacity(m);
    #[cfg(target_arch = "x86_64")]
    if let Some(simd) = pulp::x86::V4::try_new() {
        let vec_len = n - n % 8;
        match weights {
            Weights::PerRowNarrow(w) if m.value() <= NARROW_BOUND => {
                avx512::narrow_sum(simd, m, rows, w, &mut out[..vec_len])
            }
            Weights::PerElement(w)
                if m.value() <= NARROW_BOUND && rows.len() >= NARROW_ELEMENT_MIN_ROWS =>
            {
                avx512::narrow_element_sum(simd, m, rows, w, &mut out[..vec_len])
            }
            _ => avx512::sum_of_products(simd, m, rows, weights, cap, &mut out[..vec_len]),
        }
        scalar_sum_of_products(m, rows, weights, cap, vec_len, &mut out[vec_len..]);
        return;
    }
    scalar_sum_of_products(m, rows, weights, cap, 0, out);
}

/// [`sum_of_products`] into the uninitialised `out`, returned as initialised words: for outputs made in
/// parallel parts of a fresh buffer (`rnsfhe_ring::parallel::from_chunks`), so that no pass zeroes the
/// whole buffer first. The part is zeroed here, while it is in cache, because the vector kernels write
/// through initialised slices; then the sum overwrites it. Panics as [`sum_of_products`].
pub fn sum_of_products_uninit<'a>(
    m: &Modulus,
    rows: &[&[u64]],
    weights: Weights<'_>,
    out: &'a mut [std::mem::MaybeUninit<u64>],
) -> &'a mut [u64] {
    let len = out.len();
    let out = write_uninit(out, std::iter::repeat_n(0, len));
    sum_of_products(m, rows, weights, out);
    out
}

/// [`sum_of_products`] with per-element weights for rows and weights that are reduced residues (below
/// `p`, checked in debug builds), as the digits and key rows of a gadget product are. Moduli below `2^50`
/// then take the IFMA path where the CPU has it (see `IFMA_BOUND`); otherwise, and for more than
/// `IFMA_MAX_ROWS` rows, this is [`sum_of_products`].
///
/// Panics as [`sum_of_products`] on mismatched lengths.
pub fn sum_of_reduced_products(m: &Modulus, rows: &[&[u64]], weights: &[&[u64]], out: &mut [u64]) {
    debug_assert!(rows
        .iter()
        .chain(weights)
        .all(|r| r[..out.len()].iter().all(|&x| x < m.value())));
    #[cfg(target_arch = "x86_64")]
    if m.value() < IFMA_BOUND && !rows.is_empty() && rows.len() <= IFMA_MAX_ROWS {
        if let (Some(ifma), Some(v4)) = (avx512::V4Ifma::try_new(), pulp::x86::V4::try_new()) {
            assert_eq!(rows.len(), weights.len(), "one weight row per row");
            let n = out.len();
            assert!(
                rows.iter().chain(weights).all(|r| r.len() >= n),
                "row shorter than output"
            );
            let vec_len = n - n % 8;
            avx512::ifma_element_sum(ifma, v4, m, rows, weights, &mut out[..vec_len]);
            let cap = accumulation_capacity(m);
            let tail = Weights::PerElement(weights);
            scalar_sum_of_products(m, rows, tail, cap, vec_len, &mut out[vec_len..]);
            return;
        }
    }
    sum_of_products(m, rows, Weights::PerElement(weights), out);
}

/// [`sum_of_products`] without the vector path, for `out` covering coefficients `start..start + len`
/// of the rows. Public for tests and benchmarks that compare the two paths.
pub fn sum_of_products_scalar(m: &Modulus, rows: &[&[u64]], weights: Weights<'_>, out: &mut [u64]) {
    assert_eq!(rows.len(), weights.len(), "one weight per row");
    if rows.is_empty() {
        out.fill(0);
        return;
    }
    scalar_sum_of_products(m, rows, weights, accumulation_capacity(m), 0, out);
}

fn scalar_sum_of_products(
    m: &Modulus,
    rows: &[&[u64]],
    weights: Weights<'_>,
    cap: usize,
    start: usize,
    out: &mut [u64],
) {
    if let Weights::PerRow(w) | Weights::PerRowNarrow(w) = weights {
        for (k, o) in out.iter_mut().enumerate() {
            let c = start + k;
            let mut acc = 0u64;
            for (row, &wi) in rows.iter().zip(w) {
                // Both terms below 2p < 2^63: the sum fits a word; bring it back below 2p.
                let t = acc + m.mul_shoup_lazy(row[c], wi);
                acc = t.min(t.wrapping_sub(2 * m.value()));
            }
            *o = m.reduce_once(acc);
        }
        return;
    }
    for (k, o) in out.iter_mut().enumerate() {
        let c = start + k;
        let mut acc = 0u128;
        for (i, row) in rows.iter().enumerate() {
            if i > 0 && i % cap == 0 {
                acc = m.reduce_wide(acc) as u128;
            }
            let w = match weights {
                Weights::PerRow(w) | Weights::PerRowNarrow(w) => w[i].value,
                Weights::PerElement(w) => w[i][c],
            };
            debug_assert!(row[c] < MAX_ROW_VALUE && w < m.value());
            acc += row[c] as u128 * w as u128;
        }
        *o = m.reduce_wide(acc);
    }
}

/// Modular arithmetic on one "lane value": a single residue ([`Modulus`] itself) or 8 residues of an
/// AVX-512 register. Pointwise kernels are written once against this trait ([`LaneMap`]) and run on
/// either. All operands are residues below `p` unless stated.
pub trait LaneArith: Copy {
    /// One residue or a vector of residues.
    type V: Copy;
    /// `x` in every lane.
    fn splat(self, x: u64) -> Self::V;
    /// `a + b mod p`.
    fn add(self, a: Self::V, b: Self::V) -> Self::V;
    /// `a - b mod p`.
    fn sub(self, a: Self::V, b: Self::V) -> Self::V;
    /// `a * w mod p` for any word `a` and a Shoup constant `w` (Shoup multiplication).
    fn mul_shoup(self, a: Self::V, w: ShoupConstant) -> Self::V;
    /// `a * b mod p` (Barrett).
    fn mul(self, a: Self::V, b: Self::V) -> Self::V;
}

impl LaneArith for &Modulus {
    type V = u64;
    #[inline(always)]
    fn splat(self, x: u64) -> u64 {
        x
    }
    #[inline(always)]
    fn add(self, a: u64, b: u64) -> u64 {
        Modulus::add(self, a, b)
    }
    #[inline(always)]
    fn sub(self, a: u64, b: u64) -> u64 {
        Modulus::sub(self, a, b)
    }
    #[inline(always)]
    fn mul_shoup(self, a: u64, w: ShoupConstant) -> u64 {
        Modulus::mul_shoup(self, a, w)
    }
    #[inline(always)]
    fn mul(self, a: u64, b: u64) -> u64 {
        Modulus::mul(self, a, b)
    }
}

/// A pointwise operation on `K` input slices and the output's previous value, written once for scalar
/// and vector lanes: `out[c] = apply(out[c], [x_0[c], ..., x_{K-1}[c]])`.
pub trait LaneMap<const K: usize>: Sync {
    /// The new output value from the old one and the inputs.
    fn apply<A: LaneArith>(&self, arith: A, old: A::V, inputs: [A::V; K]) -> A::V;
}

/// Appends `n` words to `out`, produced block by block by `fill(range, block)` (`block` is the output for
/// coefficients `range`) through a small stack buffer and `extend_from_slice`: a new buffer without the
/// zero-fill that `vec![0; n]` would cost (about a third of a memory-bound operation such as an addition).
pub fn append_in_blocks(
    out: &mut Vec<u64>,
    n: usize,
    mut fill: impl FnMut(std::ops::Range<usize>, &mut [u64]),
) {
    const BLOCK: usize = 1024;
    out.reserve(n);
    let mut buf = [0u64; BLOCK];
    for start in (0..n).step_by(BLOCK) {
        let len = BLOCK.min(n - start);
        let block = &mut buf[..len];
        fill(start..start + len, block);
        out.extend_from_slice(block);
    }
}

/// Outputs of at least this many bytes are written by [`map_uninit`] with non-temporal (streaming)
/// stores: a quarter of a 32 MiB last-level cache (the development machine's L3, and a common share of
/// a server's), so that an operation of two inputs and one output of this size has a working set of at
/// least three quarters of the cache (the fraction from which glibc's `memcpy` streams too) and its
/// output would be evicted before it is read again. A streaming store skips the read for ownership of
/// the output's cache lines: for an addition that is a quarter of the memory traffic (two inputs read,
/// one output read for ownership and written back). The ciphertext parts of `PaperTable1L15` (16 limbs
/// of `N = 2^16`: 8 MiB) stream; those of `PaperTable1L10` (2.75 MiB), whose operands stay in the L3
/// cache from one operation to the next, do not.
pub const STREAMING_STORE_MIN_BYTES: usize = 8 << 20;

/// How [`map_uninit`] writes its output.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stores {
    /// Ordinary stores: the output goes through the cache (it is small, or read again soon).
    Cached,
    /// Non-temporal stores on the AVX-512 path (64-byte aligned vectors; the unaligned head and the
    /// tail, and the scalar path, store normally): the output bypasses the cache, without the read for
    /// ownership of its lines. Followed by a store fence, so other threads see the output in order.
    Streaming,
}

impl Stores {
    /// [`Stores::Streaming`] for a whole output of at least [`STREAMING_STORE_MIN_BYTES`] (`words`
    /// 64-bit words, however many calls write it), else [`Stores::Cached`].
    pub fn for_output_words(words: usize) -> Self {
        if words.saturating_mul(std::mem::size_of::<u64>()) >= STREAMING_STORE_MIN_BYTES {
            Self::Streaming
        } else {
            Self::Cached
        }
    }
}

/// Writes `op(0, inputs[..][c])` for every `c` into the uninitialised `out` and returns it as
/// initialised words: [`map_in_place`] on an output that starts at zero, without a pass that zeroes (or
/// copies into) the output first. With [`Stores::Streaming`] the AVX-512 path stores its vectors
/// non-temporally. Every path gives the same words. Panics if an input is shorter than `out`.
pub fn map_uninit<'a, const K: usize, F: LaneMap<K>>(
    m: &Modulus,
    out: &'a mut [std::mem::MaybeUninit<u64>],
    inputs: [&[u64]; K],
    op: &F,
    stores: Stores,
) -> &'a mut [u64] {
    let n = out.len();
    assert!(
        inputs.iter().all(|x| x.len() >= n),
        "input shorter than output"
    );
    // The words written 8 at a time (a multiple of 8 from a 64-byte boundary when streaming); the
    // scalar loop below writes the others.
    let mut vector = 0..0;
    #[cfg(target_arch = "x86_64")]
    if let Some(simd) = pulp::x86::V4::try_new() {
        let head = match stores {
            Stores::Streaming => out.as_ptr().align_offset(64).min(n),
            Stores::Cached => 0,
        };
        let end = head + (n - head) / 8 * 8;
        vector = head..end;
        avx512::map_uninit(
            simd,
            m,
            &mut out[vector.clone()],
            inputs.map(|x| &x[vector.clone()]),
            op,
            stores,
        );
    }
    for c in (0..vector.start).chain(vector.end..n) {
        out[c].write(op.apply(m, 0, inputs.map(|x| x[c])));
    }
    // SAFETY: every word of `out` was written: `vector` by `avx512::map_uninit` (which writes all of
    // its output, a multiple of 8 words), the rest by the loop above. `MaybeUninit<u64>` has the layout
    // of `u64`, and the returned slice keeps the exclusive borrow of `out`.
    unsafe { &mut *(out as *mut [std::mem::MaybeUninit<u64>] as *mut [u64]) }
}

/// Writes the first `out.len()` items of `values` into the uninitialised `out` and returns it as
/// initialised words: a fresh buffer filled in one pass, without zeroing it first. Panics if `values`
/// has fewer items than `out` has words.
pub fn write_uninit(
    out: &mut [std::mem::MaybeUninit<u64>],
    values: impl IntoIterator<Item = u64>,
) -> &mut [u64] {
    let mut written = 0;
    for (o, v) in out.iter_mut().zip(values) {
        o.write(v);
        written += 1;
    }
    assert!(
        written == out.len(),
        "write_uninit: fewer values than output words"
    );
    // SAFETY: the loop wrote the first `written` words of `out`, and the assertion makes that all of
    // them (it panics before the return otherwise). `MaybeUninit<u64>` has the layout of `u64`, and the
    // returned slice keeps the exclusive borrow of `out`.
    unsafe { &mut *(out as *mut [std::mem::MaybeUninit<u64>] as *mut [u64]) }
}

/// A one-input operation applied to two inputs into a fresh output: `out <- op(a, [b])`, ignoring the
/// output's previous contents (so `a` need not be copied into the output first).
#[derive(Clone, Copy, Debug)]
pub struct Fresh<'a, F>(pub &'a F);

impl<F: LaneMap<1>> LaneMap<2> for Fresh<'_, F> {
    #[inline(always)]
    fn apply<A: LaneArith>(&self, ar: A, _old: A::V, [a, b]: [A::V; 2]) -> A::V {
        self.0.apply(ar, a, [b])
    }
}

/// `old <- old + x mod p`.
#[derive(Clone, Copy, Debug)]
pub struct ModAdd;

impl LaneMap<1> for ModAdd {
    #[inline(always)]
    fn apply<A: LaneArith>(&self, ar: A, old: A::V, [x]: [A::V; 1]) -> A::V {
        ar.add(old, x)
    }
}

/// `old <- old - x mod p`.
#[derive(Clone, Copy, Debug)]
pub struct ModSub;

impl LaneMap<1> for ModSub {
    #[inline(always)]
    fn apply<A: LaneArith>(&self, ar: A, old: A::V, [x]: [A::V; 1]) -> A::V {
        ar.sub(old, x)
    }
}

/// `out <- x * w mod p` for a constant `w` (Shoup multiplication; `x` may be any word, the output's old
/// value is ignored).
#[derive(Clone, Copy, Debug)]
pub struct MulShoup(pub ShoupConstant);

impl LaneMap<1> for MulShoup {
    #[inline(always)]
    fn apply<A: LaneArith>(&self, ar: A, _old: A::V, [x]: [A::V; 1]) -> A::V {
        ar.mul_shoup(x, self.0)
    }
}

/// `old <- old * x mod p` (pointwise product in NTT form).
#[derive(Clone, Copy, Debug)]
pub struct ModMul;

impl LaneMap<1> for ModMul {
    #[inline(always)]
    fn apply<A: LaneArith>(&self, ar: A, old: A::V, [x]: [A::V; 1]) -> A::V {
        ar.mul(old, x)
    }
}

/// `old <- old + a * b mod p` (multiply-accumulate in NTT form).
#[derive(Clone, Copy, Debug)]
pub struct ModMulAdd;

impl LaneMap<2> for ModMulAdd {
    #[inline(always)]
    fn apply<A: LaneArith>(&self, ar: A, old: A::V, [a, b]: [A::V; 2]) -> A::V {
        ar.add(old, ar.mul(a, b))
    }
}

/// `old <- (y - old) w`: the last pass of ModDown (`w = P^-1`) and of rescaling (`w = q_l^-1`), where
/// `old` holds the converted (rounded) part and `y` the residues being divided.
#[derive(Clone, Copy, Debug)]
pub struct SubMulShoup(pub ShoupConstant);

impl LaneMap<1> for SubMulShoup {
    #[inline(always)]
    fn apply<A: LaneArith>(&self, ar: A, old: A::V, [y]: [A::V; 1]) -> A::V {
        ar.mul_shoup(ar.sub(y, old), self.0)
    }
}

/// `old <- (y - old) w + x`: [`SubMulShoup`] fused with the addition of `x` (relinearization and
/// automorphisms add the key-switched part to a ciphertext part in the same pass).
#[derive(Clone, Copy, Debug)]
pub struct SubMulShoupAdd(pub ShoupConstant);

impl LaneMap<2> for SubMulShoupAdd {
    #[inline(always)]
    fn apply<A: LaneArith>(&self, ar: A, old: A::V, [y, x]: [A::V; 2]) -> A::V {
        ar.add(ar.mul_shoup(ar.sub(y, old), self.0), x)
    }
}

/// Runs `op` over every coefficient: `out[c] = op(out[c], inputs[..][c])` modulo `m`, on 8 AVX-512 lanes
/// where available. Panics if an input is shorter than `out`.
pub fn map_in_place<const K: usize, F: LaneMap<K>>(
    m: &Modulus,
    out: &mut [u64],
    inputs: [&[u64]; K],
    op: &F,
) {
    let n = out.len();
    assert!(
        inputs.iter().all(|x| x.len() >= n),
        "input shorter than output"
    );
    let mut start = 0;
    #[cfg(target_arch = "x86_64")]
    if let Some(simd) = pulp::x86::V4::try_new() {
        start = n - n % 8;
        avx512::map_in_place(simd, m, &mut out[..start], inputs, op);
    }
    for c in start..n {
        out[c] = op.apply(m, out[c], inputs.map(|x| x[c]));
    }
}

/// `out[c] = values[c] mod p` for signed values in `[-2p, 2p)` (signed digits lifted into a residue, as
/// the digit rows of key switching in `rnsfhe-ring`): one sign correction
/// `d + 2p [d < 0]` into `[0, 2p)` and one conditional subtraction, on 8 AVX-512 lanes where available.
/// Needs `p < 2^62`. A value outside the range gives a wrong residue (checked in debug builds), never
/// undefined behaviour. Panics if `out` is shorter than `values`.
pub fn lift_signed(m: &Modulus, values: &[i64], out: &mut [u64]) {
    let n = values.len();
    let out = &mut out[..n];
    let two_p = 2 * m.value() as i128;
    debug_assert!(values
        .iter()
        .all(|&d| (-two_p..two_p).contains(&(d as i128))));
    let mut start = 0;
    #[cfg(target_arch = "x86_64")]
    if let Some(simd) = pulp::x86::V4::try_new() {
        start = n - n % 8;
        avx512::lift_signed(simd, m.value(), &values[..start], &mut out[..start]);
    }
    let (p, two_p) = (m.value(), 2 * m.value());
    for (o, &d) in out[start..].iter_mut().zip(&values[start..]) {
        let u = (d as u64).wrapping_add(two_p & ((d >> 63) as u64));
        *o = u.min(u.wrapping_sub(p));
    }
}

/// Masked compaction, the acceptance step of rejection sampling: for each little-endian 64-bit word `w`
/// of `words` in order, `v = w & mask` is appended to `out` when `v < bound`; returns how many were
/// (the accepted values are `out[..count]`; the words after them are overwritten scratch). On 8 AVX-512
/// lanes where available (a compare into a lane mask and `vpcompressq`), else a scalar loop that writes
/// every value and advances only on acceptance; neither branches on a value. Panics if `out` is shorter
/// than `words`.
pub fn compact_masked_below(words: &[[u8; 8]], mask: u64, bound: u64, out: &mut [u64]) -> usize {
    let out = &mut out[..words.len()];
    let mut done = 0;
    let mut accepted = 0;
    #[cfg(target_arch = "x86_64")]
    if let Some(simd) = pulp::x86::V4::try_new() {
        done = words.len() - words.len() % 8;
        accepted = avx512::compact_masked_below(simd, &words[..done], mask, bound, out);
    }
    accepted + compact_masked_below_scalar(&words[done..], mask, bound, &mut out[accepted..])
}

/// The scalar path of [`compact_masked_below`] (the same count and accepted values).
pub fn compact_masked_below_scalar(
    words: &[[u8; 8]],
    mask: u64,
    bound: u64,
    out: &mut [u64],
) -> usize {
    let out = &mut out[..words.len()];
    let mut accepted = 0;
    for w in words {
        let v = u64::from_le_bytes(*w) & mask;
        // `accepted` never exceeds the words read so far: the write is in bounds.
        out[accepted] = v;
        accepted += usize::from(v < bound);
    }
    accepted
}

/// `out[c] = centered(x_c) mod p` for residues `x_c` of `q` given in `[0, 2q)` (reduced once first):
/// `x_c - q` when `x_c > q/2`, else `x_c`, reduced modulo `p` (the lift of a single-modulus basis
/// conversion, as ModUp from one digit and ModDown by one special prime need). Any `q` and `p` below
/// `2^62`; on 8 AVX-512 lanes where available (one wide Barrett reduction per value). Panics if `out` is
/// shorter than `input`.
pub fn centered_lift(q: &Modulus, p: &Modulus, input: &[u64], out: &mut [u64]) {
    let n = input.len();
    let out = &mut out[..n];
    debug_assert!(input.iter().all(|&x| x < 2 * q.value()));
    let mut start = 0;
    #[cfg(target_arch = "x86_64")]
    if let Some(simd) = pulp::x86::V4::try_new() {
        start = n - n % 8;
        avx512::centered_lift(simd, q, p, &input[..start], &mut out[..start]);
    }
    let (qv, half) = (q.value(), q.value() / 2);
    let shift = p.reduce(qv);
    for (o, &x) in out[start..].iter_mut().zip(&input[start..]) {
        let x = x.min(x.wrapping_sub(qv));
        let r = p.reduce(x);
        *o = if x > half { p.sub(r, shift) } else { r };
    }
}

/// Per-element Shoup multipliers: residues `values[c] < p` with `quotients[c] = floor(values[c] 2^64 / p)`
/// ([`Modulus::shoup`] element by element). A fixed table read many times (the NTT forms of the monomials
/// `X^k + c` of a blind rotation) is stored in this form once, so that multiplying by it costs a Shoup
/// product instead of a 128-bit reduction.
#[derive(Clone, Copy, Debug)]
pub struct ShoupRow<'a> {
    /// The residues.
    pub values: &'a [u64],
    /// Their Shoup quotients.
    pub quotients: &'a [u64],
}

/// Most products `f_k d_j` (factors times digits) the vector paths of [`sum_of_factored_products`] keep in
/// registers; with more the scalar path runs.
pub const FACTORED_MAX_TERMS: usize = 8;

/// Up to this many terms the IFMA path of [`sum_of_factored_products`] reduces with two 52-bit Shoup
/// products: each term `g w < 2^51 2^50` has a high half below `2^49`, so the high sum plus the carry of
/// the low sum stays below `2^52` (`7 2^49 + 7 < 2^52`).
const IFMA_FACTORED_SHOUP_TERMS: usize = 7;

/// `outs[o][c] = sum_k sum_j (f_k[c] d_j[c]) w_o[k J + j][c] mod p` for `J = digits.len()` digit rows,
/// the factors `f_k` (Shoup form) and one set of `K J` weight rows `w_o` per output: the combination
/// `sum_k f_k (sum_j d_j w_{o,k,j})` of several inner products of the same digits, as one step of the
/// ternary blind rotation forms it (PEGASUS Fig. 2 in the form of OpenFHE's GINX accumulator: the factors
/// `1 - X^(± a)` times the products with two RGSW keys), in one pass over memory.
///
/// The products `g = f_k d_j` are Shoup products in `[0, 2p)` (no reduction); each output sums its `K J`
/// products `g w` lazily in 128 bits and is reduced once. On AVX-512 for moduli up to [`NARROW_BOUND`],
/// `g < 2^61` and `w < 2^60` are split into 31- and 30-bit halves whose four partial products sum exactly
/// in 64-bit lanes (at most [`FACTORED_MAX_TERMS`] terms, each below `2^61`); below `2^50` with IFMA the
/// 52-bit multiply-accumulate does both steps. The same residues as the scalar path on every input.
///
/// Requirements (checked, panicking on violation, since callers control them by construction): one
/// weight set per output, each of `K J` rows; every row, factor and output at least as long as the first
/// output. Digits, factor values and weights must be residues below `p` and the quotients those of the
/// values (checked in debug builds only: otherwise a wrong residue, never undefined behaviour).
pub fn sum_of_factored_products(
    m: &Modulus,
    digits: &[&[u64]],
    factors: &[ShoupRow<'_>],
    weights: &[&[&[u64]]],
    outs: &mut [&mut [u64]],
) {
    let terms = check_factored_shapes(digits.len() * factors.len(), weights, outs);
    let n = outs.first().map_or(0, |o| o.len());
    assert!(outs.iter().all(|o| o.len() == n), "outputs of one length");
    assert!(
        digits
            .iter()
            .chain(weights.iter().flat_map(|w| w.iter()))
            .chain(factors.iter().flat_map(|f| [&f.values, &f.quotients]))
            .all(|r| r.len() >= n),
        "row shorter than output"
    );
    debug_assert!(digits
        .iter()
        .chain(weights.iter().flat_map(|w| w.iter()))
        .all(|r| r[..n].iter().all(|&x| x < m.value())));
    debug_assert!(factors.iter().all(|f| (0..n)
        .all(|c| f.values[c] < m.value() && m.shoup(f.values[c]).quotient == f.quotients[c])));
    #[cfg(target_arch = "x86_64")]
    if terms > 0 && terms <= FACTORED_MAX_TERMS {
        let vec_len = n - n % 8;
        if m.value() < IFMA_BOUND {
            if let (Some(ifma), Some(v4)) = (avx512::V4Ifma::try_new(), pulp::x86::V4::try_new()) {
                avx512::ifma_factored_sum(ifma, v4, m, digits, factors, weights, outs, vec_len);
                scalar_factored_sum(m, digits, factors, weights, vec_len, outs);
                return;
            }
        }
        if m.value() <= NARROW_BOUND {
            if let Some(v4) = pulp::x86::V4::try_new() {
                avx512::narrow_factored_sum(v4, m, digits, factors, weights, outs, vec_len);
                scalar_factored_sum(m, digits, factors, weights, vec_len, outs);
                return;
            }
        }
    }
    scalar_factored_sum(m, digits, factors, weights, 0, outs);
}

/// [`sum_of_factored_products`] without the vector paths. Public for tests and benchmarks that compare
/// the paths.
///
/// Panics as [`sum_of_factored_products`].
pub fn sum_of_factored_products_scalar(
    m: &Modulus,
    digits: &[&[u64]],
    factors: &[ShoupRow<'_>],
    weights: &[&[&[u64]]],
    outs: &mut [&mut [u64]],
) {
    check_factored_shapes(digits.len() * factors.len(), weights, outs);
    scalar_factored_sum(m, digits, factors, weights, 0, outs);
}

/// Checks one weight set of `terms` rows per output (panicking, as [`sum_of_factored_products`]
/// documents) and returns `terms`.
fn check_factored_shapes(terms: usize, weights: &[&[&[u64]]], outs: &[&mut [u64]]) -> usize {
    assert_eq!(weights.len(), outs.len(), "one weight set per output");
    assert!(
        weights.iter().all(|w| w.len() == terms),
        "one weight row per product of a factor and a digit"
    );
    terms
}

/// The scalar body of [`sum_of_factored_products`] for the coefficients `start..` of the outputs.
fn scalar_factored_sum(
    m: &Modulus,
    digits: &[&[u64]],
    factors: &[ShoupRow<'_>],
    weights: &[&[&[u64]]],
    start: usize,
    outs: &mut [&mut [u64]],
) {
    let n = outs.first().map_or(0, |o| o.len());
    // Reduced products f_k d_j below p: a u128 holds this many products of two residues.
    let cap = m.wide_accumulation_capacity();
    let mut g = vec![0u64; digits.len() * factors.len()];
    for c in start..n {
        for (gk, f) in g.chunks_exact_mut(digits.len().max(1)).zip(factors) {
            let w = ShoupConstant {
                value: f.values[c],
                quotient: f.quotients[c],
            };
            for (gi, d) in gk.iter_mut().zip(digits) {
                *gi = m.mul_shoup(d[c], w);
            }
        }
        for (o, ws) in outs.iter_mut().zip(weights) {
            let mut acc = 0u128;
            for (i, (&gi, wr)) in g.iter().zip(ws.iter()).enumerate() {
                if i > 0 && i % cap == 0 {
                    acc = m.reduce_wide(acc) as u128;
                }
                acc += gi as u128 * wr[c] as u128;
            }
            o[c] = m.reduce_wide(acc);
        }
    }
}

#[cfg(target_arch = "x86_64")]
mod avx512 {
    use core::arch::x86_64::__m512i;
    use core::mem::MaybeUninit;

    use pulp::x86::V4;

    use super::Weights;
    use crate::modulus::{Modulus, ShoupConstant};

    #[inline(always)]
    fn load(s: &[u64], c: usize) -> __m512i {
        let mut a = [0u64; 8];
        a.copy_from_slice(&s[c..c + 8]);
        pulp::cast(a)
    }

    #[inline(always)]
    fn store(out: &mut [u64], c: usize, v: __m512i) {
        let a: [u64; 8] = pulp::cast(v);
        out[c..c + 8].copy_from_slice(&a);
    }

    #[inline(always)]
    fn splat(simd: V4, x: u64) -> __m512i {
        simd.avx512f._mm512_set1_epi64(x as i64)
    }

    /// Full products `a * b` of the 8 lanes as (low words, high words), from the four 32 x 32-bit
    /// partial products `a_i b_j 2^(32 (i + j))`.
    #[inline(always)]
    fn widening_mul(simd: V4, a: __m512i, b: __m512i) -> (__m512i, __m512i) {
        let f = simd.avx512f;
        let low32 = splat(simd, 0xffff_ffff);
        let a_hi = f._mm512_srli_epi64::<32>(a);
        let b_hi = f._mm512_srli_epi64::<32>(b);
        let ll = f._mm512_mul_epu32(a, b);
        let lh = f._mm512_mul_epu32(a, b_hi);
        let hl = f._mm512_mul_epu32(a_hi, b);
        let hh = f._mm512_mul_epu32(a_hi, b_hi);
        // The middle column: carry-in from ll plus the low halves of the cross products (< 3 * 2^32).
        let mid = f._mm512_add_epi64(
            f._mm512_add_epi64(f._mm512_srli_epi64::<32>(ll), f._mm512_and_si512(lh, low32)),
            f._mm512_and_si512(hl, low32),
        );
        let lo = f._mm512_or_si512(
            f._mm512_slli_epi64::<32>(mid),
            f._mm512_and_si512(ll, low32),
        );
        let hi = f._mm512_add_epi64(
            f._mm512_add_epi64(hh, f._mm512_srli_epi64::<32>(mid)),
            f._mm512_add_epi64(f._mm512_srli_epi64::<32>(lh), f._mm512_srli_epi64::<32>(hl)),
        );
        (lo, hi)
    }

    /// The high words of `a * b`.
    #[inline(always)]
    fn mul_hi(simd: V4, a: __m512i, b: __m512i) -> __m512i {
        widening_mul(simd, a, b).1
    }

    /// `x mod p` for `x = hi 2^64 + lo` (any 128-bit value): [`Modulus::reduce_wide`] on 8 lanes.
    #[inline(always)]
    fn reduce_wide(simd: V4, k: &Constants, lo: __m512i, hi: __m512i) -> __m512i {
        let f = simd.avx512f;
        let dq = simd.avx512dq;
        let q = f._mm512_add_epi64(
            f._mm512_add_epi64(
                dq._mm512_mullo_epi64(hi, k.mu_hi),
                mul_hi(simd, hi, k.mu_lo),
            ),
            mul_hi(simd, lo, k.mu_hi),
        );
        let r = f._mm512_sub_epi64(lo, dq._mm512_mullo_epi64(q, k.p));
        // r < 4p < 2^64: two conditional subtractions, each as min(r, r - c) (r - c wraps when r < c).
        let r = f._mm512_min_epu64(r, f._mm512_sub_epi64(r, k.two_p));
        f._mm512_min_epu64(r, f._mm512_sub_epi64(r, k.p))
    }

    /// A modulus broadcast to 8 lanes.
    pub(super) struct Constants {
        p: __m512i,
        two_p: __m512i,
        mu_hi: __m512i,
        mu_lo: __m512i,
    }

    impl Constants {
        #[inline(always)]
        fn new(simd: V4, m: &Modulus) -> Self {
            let (mu_hi, mu_lo) = m.wide_mu();
            Self {
                p: splat(simd, m.value()),
                two_p: splat(simd, 2 * m.value()),
                mu_hi: splat(simd, mu_hi),
                mu_lo: splat(simd, mu_lo),
            }
        }
    }

    /// The 8-lane [`super::LaneArith`]: a `V4` token and the broadcast modulus constants.
    #[derive(Clone, Copy)]
    pub(super) struct Lanes<'a> {
        simd: V4,
        k: &'a Constants,
    }

    impl Lanes<'_> {
        /// Shoup multiplication without the final correction: `a * w mod p` in `[0, 2p)`.
        #[inline(always)]
        fn mul_shoup_lazy(self, a: __m512i, w: ShoupConstant) -> __m512i {
            let f = self.simd.avx512f;
            let dq = self.simd.avx512dq;
            let q = mul_hi(self.simd, a, splat(self.simd, w.quotient));
            f._mm512_sub_epi64(
                dq._mm512_mullo_epi64(a, splat(self.simd, w.value)),
                dq._mm512_mullo_epi64(q, self.k.p),
            )
        }
    }

    impl super::LaneArith for Lanes<'_> {
        type V = __m512i;
        #[inline(always)]
        fn splat(self, x: u64) -> __m512i {
            splat(self.simd, x)
        }
        #[inline(always)]
        fn add(self, a: __m512i, b: __m512i) -> __m512i {
            let f = self.simd.avx512f;
            let s = f._mm512_add_epi64(a, b);
            f._mm512_min_epu64(s, f._mm512_sub_epi64(s, self.k.p))
        }
        #[inline(always)]
        fn sub(self, a: __m512i, b: __m512i) -> __m512i {
            // a - b, or a - b + p where it wrapped (then a - b >= 2^64 - p > a - b + p).
            let f = self.simd.avx512f;
            let d = f._mm512_sub_epi64(a, b);
            f._mm512_min_epu64(d, f._mm512_add_epi64(d, self.k.p))
        }
        #[inline(always)]
        fn mul_shoup(self, a: __m512i, w: ShoupConstant) -> __m512i {
            let f = self.simd.avx512f;
            let r = self.mul_shoup_lazy(a, w);
            f._mm512_min_epu64(r, f._mm512_sub_epi64(r, self.k.p))
        }
        #[inline(always)]
        fn mul(self, a: __m512i, b: __m512i) -> __m512i {
            let (lo, hi) = widening_mul(self.simd, a, b);
            reduce_wide(self.simd, self.k, lo, hi)
        }
    }

    pub(super) fn map_in_place<const K: usize, F: super::LaneMap<K>>(
        simd: V4,
        m: &Modulus,
        out: &mut [u64],
        inputs: [&[u64]; K],
        op: &F,
    ) {
        with_lanes(
            simd,
            m,
            #[inline(always)]
            |lanes| {
                for c in (0..out.len()).step_by(8) {
                    let old = load(out, c);
                    let new = op.apply(lanes, old, inputs.map(|x| load(x, c)));
                    store(out, c, new);
                }
            },
        )
    }

    /// `body(lanes)` with the target features of `simd` enabled and the lanes of modulus `m`: the frame
    /// of the pointwise kernels.
    #[inline(always)]
    fn with_lanes<R>(simd: V4, m: &Modulus, body: impl FnOnce(Lanes<'_>) -> R) -> R {
        simd.vectorize(
            #[inline(always)]
            || {
                let k = Constants::new(simd, m);
                body(Lanes { simd, k: &k })
            },
        )
    }

    /// The vector body of [`super::map_uninit`]: writes every word of `out` (`out.len()` a multiple of
    /// 8), non-temporally for [`super::Stores::Streaming`] when `out` starts on a 64-byte boundary.
    pub(super) fn map_uninit<const K: usize, F: super::LaneMap<K>>(
        simd: V4,
        m: &Modulus,
        out: &mut [MaybeUninit<u64>],
        inputs: [&[u64]; K],
        op: &F,
        stores: super::Stores,
    ) {
        // Checked, not assumed: `super::map_uninit` treats all of `out` as written.
        assert!(
            out.len().is_multiple_of(8),
            "vector output not a multiple of 8 words"
        );
        let stream =
            stores == super::Stores::Streaming && out.as_ptr().cast::<__m512i>().is_aligned();
        with_lanes(
            simd,
            m,
            #[inline(always)]
            |lanes| {
                if stream {
                    fill::<true, K, F>(lanes, out, inputs, op);
                } else {
                    fill::<false, K, F>(lanes, out, inputs, op);
                }
            },
        )
    }

    /// The loop of [`map_uninit`], with the kind of store fixed at compile time (`STREAM` only for a
    /// 64-byte aligned `out`).
    #[inline(always)]
    fn fill<const STREAM: bool, const K: usize, F: super::LaneMap<K>>(
        lanes: Lanes<'_>,
        out: &mut [MaybeUninit<u64>],
        inputs: [&[u64]; K],
        op: &F,
    ) {
        let zero = splat(lanes.simd, 0);
        for (j, dst) in out.chunks_exact_mut(8).enumerate() {
            let v = op.apply(lanes, zero, inputs.map(|x| load(x, 8 * j)));
            if STREAM {
                // SAFETY: `dst` is 8 words (64 bytes) of `out`, writable through its exclusive
                // borrow; `out` starts on a 64-byte boundary (checked by the caller for `STREAM`)
                // and `dst` 64 j bytes after it, as `vmovntdq` requires; the `V4` token proves
                // AVX-512F.
                unsafe {
                    lanes
                        .simd
                        .avx512f
                        ._mm512_stream_si512(dst.as_mut_ptr().cast::<__m512i>(), v)
                };
            } else {
                let words: [u64; 8] = pulp::cast(v);
                for (d, w) in dst.iter_mut().zip(words) {
                    d.write(w);
                }
            }
        }
        if STREAM {
            // Streaming stores are weakly ordered: fenced before the output is handed on.
            lanes.simd.sse._mm_sfence();
        }
    }

    /// The vector body of [`super::lift_signed`] (`values.len()` a multiple of 8).
    pub(super) fn lift_signed(simd: V4, p: u64, values: &[i64], out: &mut [u64]) {
        simd.vectorize(
            #[inline(always)]
            || {
                let f = simd.avx512f;
                let (p, two_p) = (splat(simd, p), splat(simd, 2 * p));
                for c in (0..values.len()).step_by(8) {
                    let mut a = [0i64; 8];
                    a.copy_from_slice(&values[c..c + 8]);
                    let d: __m512i = pulp::cast(a);
                    let negative = f._mm512_srai_epi64::<63>(d);
                    let u = f._mm512_add_epi64(d, f._mm512_and_si512(negative, two_p));
                    store(out, c, f._mm512_min_epu64(u, f._mm512_sub_epi64(u, p)));
                }
            },
        )
    }

    /// The vector body of [`super::compact_masked_below`] (`words.len()` a multiple of 8): each group
    /// of 8 values is compressed to its accepted ones and stored whole at the current count; the
    /// count never passes the words read, so the 8-word store stays within `out`.
    pub(super) fn compact_masked_below(
        simd: V4,
        words: &[[u8; 8]],
        mask: u64,
        bound: u64,
        out: &mut [u64],
    ) -> usize {
        simd.vectorize(
            #[inline(always)]
            || {
                let f = simd.avx512f;
                let (mask, bound) = (splat(simd, mask), splat(simd, bound));
                let mut accepted = 0;
                for group in words.as_chunks::<8>().0 {
                    let w: [u64; 8] = core::array::from_fn(|i| u64::from_le_bytes(group[i]));
                    let v = f._mm512_and_si512(pulp::cast(w), mask);
                    let keep = f._mm512_cmplt_epu64_mask(v, bound);
                    store(out, accepted, f._mm512_maskz_compress_epi64(keep, v));
                    accepted += keep.count_ones() as usize;
                }
                accepted
            },
        )
    }

    /// Rows per group of [`narrow_sum`]: 16 partial products below `(2^30 - 1)^2 < 2^60` fit a 64-bit
    /// lane, and a group's value `LL + (LH + HL) 2^30 + HH 2^60` stays below `2^124.01`.
    const NARROW_GROUP: usize = 16;

    /// Groups of [`narrow_sum`] summed in 128 bits before one reduction: 8 values below `2^124.01`, plus
    /// the residue carried from the previous reduction, stay below `2^128`.
    const NARROW_GROUPS_PER_REDUCTION: usize = 8;

    /// `(lo, hi) + x` for a 128-bit value as (low words, high words).
    #[inline(always)]
    fn add_wide(simd: V4, lo: __m512i, hi: __m512i, x: __m512i) -> (__m512i, __m512i) {
        let f = simd.avx512f;
        let sum = f._mm512_add_epi64(lo, x);
        let carry = f._mm512_cmplt_epu64_mask(sum, x);
        (sum, f._mm512_mask_add_epi64(hi, carry, hi, splat(simd, 1)))
    }

    /// `(lo, hi) + x 2^L` for a 128-bit value as (low words, high words) and `R = 64 - L`, carrying out of
    /// the low words.
    #[inline(always)]
    fn add_shifted<const L: u32, const R: u32>(
        simd: V4,
        lo: __m512i,
        hi: __m512i,
        x: __m512i,
    ) -> (__m512i, __m512i) {
        let f = simd.avx512f;
        let low = f._mm512_slli_epi64::<L>(x);
        let sum = f._mm512_add_epi64(lo, low);
        let carry = f._mm512_cmplt_epu64_mask(sum, low);
        let h = f._mm512_add_epi64(hi, f._mm512_srli_epi64::<R>(x));
        (sum, f._mm512_mask_add_epi64(h, carry, h, splat(simd, 1)))
    }

    /// The [`Weights::PerRowNarrow`] kernel. With `y = y_h 2^30 + y_l` and
    /// `w = w_h 2^30 + w_l` (all halves below `2^30`), `sum y w = LL + (LH + HL) 2^30 + HH 2^60` where
    /// each of the four sums of 32 x 32-bit products is exact in a 64-bit lane for up to 16 rows; the
    /// groups' values are summed in 128 bits and reduced by [`reduce_wide`] once per 8 groups.
    pub(super) fn narrow_sum(
        simd: V4,
        m: &Modulus,
        rows: &[&[u64]],
        w: &[ShoupConstant],
        out: &mut [u64],
    ) {
        const LOW30: u64 = (1 << 30) - 1;
        simd.vectorize(
            #[inline(always)]
            || {
                let f = simd.avx512f;
                let k = Constants::new(simd, m);
                let zero = splat(simd, 0);
                let mask = splat(simd, LOW30);
                for c in (0..out.len()).step_by(8) {
                    let (mut lo, mut hi) = (zero, zero);
                    // Index arithmetic rather than `chunks().zip()`: a call returning the pair of
                    // chunks that LLVM leaves out of line makes the closure impossible to inline into
                    // the AVX-512 function, and every intrinsic becomes a call.
                    for (g, start) in (0..rows.len()).step_by(NARROW_GROUP).enumerate() {
                        if g > 0 && g % NARROW_GROUPS_PER_REDUCTION == 0 {
                            (lo, hi) = (reduce_wide(simd, &k, lo, hi), zero);
                        }
                        let end = (start + NARROW_GROUP).min(rows.len());
                        let (mut ll, mut lh, mut hl, mut hh) = (zero, zero, zero, zero);
                        for (row, wi) in rows[start..end].iter().zip(&w[start..end]) {
                            let y = load(row, c);
                            let yl = f._mm512_and_si512(y, mask);
                            let yh = f._mm512_srli_epi64::<30>(y);
                            let wl = splat(simd, wi.value & LOW30);
                            let wh = splat(simd, wi.value >> 30);
                            ll = f._mm512_add_epi64(ll, f._mm512_mul_epu32(yl, wl));
                            lh = f._mm512_add_epi64(lh, f._mm512_mul_epu32(yl, wh));
                            hl = f._mm512_add_epi64(hl, f._mm512_mul_epu32(yh, wl));
                            hh = f._mm512_add_epi64(hh, f._mm512_mul_epu32(yh, wh));
                        }
                        (lo, hi) = add_wide(simd, lo, hi, ll);
                        (lo, hi) = add_shifted::<30, 34>(simd, lo, hi, lh);
                        (lo, hi) = add_shifted::<30, 34>(simd, lo, hi, hl);
                        (lo, hi) = add_shifted::<60, 4>(simd, lo, hi, hh);
                    }
                    store(out, c, reduce_wide(simd, &k, lo, hi));
                }
            },
        )
    }

    /// Rows per group of [`narrow_element_sum`]: 8 partial products below `2^61` fit a 64-bit lane, and
    /// a group's value `LL + LH 2^30 + HL 2^31 + HH 2^61` stays below `2^125.01`.
    const ELEMENT_GROUP: usize = 8;

    /// Groups of [`narrow_element_sum`] summed in 128 bits before one reduction: 4 values below
    /// `2^125.01`, plus the residue carried from the previous reduction, stay below `2^128`.
    const ELEMENT_GROUPS_PER_REDUCTION: usize = 4;

    /// [`Weights::PerElement`] for a modulus `p <= 2^60` and rows below `2^62`: with `x = x_h 2^31 + x_l`
    /// (halves below `2^31`) and the weight `y = y_h 2^30 + y_l` (halves below `2^30`, as `y < p`),
    /// `sum x y = LL + LH 2^30 + HL 2^31 + HH 2^61`, each of the four sums of 32 x 32-bit products exact in a
    /// 64-bit lane for up to 8 rows; the groups' values are summed in 128 bits and reduced once per 4. Four
    /// `vpmuludq` and four additions per product instead of a full widening multiplication with carries.
    pub(super) fn narrow_element_sum(
        simd: V4,
        m: &Modulus,
        rows: &[&[u64]],
        w: &[&[u64]],
        out: &mut [u64],
    ) {
        const LOW31: u64 = (1 << 31) - 1;
        const LOW30: u64 = (1 << 30) - 1;
        simd.vectorize(
            #[inline(always)]
            || {
                let f = simd.avx512f;
                let k = Constants::new(simd, m);
                let zero = splat(simd, 0);
                let (mask31, mask30) = (splat(simd, LOW31), splat(simd, LOW30));
                for c in (0..out.len()).step_by(8) {
                    let (mut lo, mut hi) = (zero, zero);
                    // Index arithmetic, not `chunks().zip()`: see `narrow_sum`.
                    for (g, start) in (0..rows.len()).step_by(ELEMENT_GROUP).enumerate() {
                        if g > 0 && g % ELEMENT_GROUPS_PER_REDUCTION == 0 {
                            (lo, hi) = (reduce_wide(simd, &k, lo, hi), zero);
                        }
                        let end = (start + ELEMENT_GROUP).min(rows.len());
                        let (mut ll, mut lh, mut hl, mut hh) = (zero, zero, zero, zero);
                        for (row, wr) in rows[start..end].iter().zip(&w[start..end]) {
                            let x = load(row, c);
                            let y = load(wr, c);
                            let xl = f._mm512_and_si512(x, mask31);
                            let xh = f._mm512_srli_epi64::<31>(x);
                            let yl = f._mm512_and_si512(y, mask30);
                            let yh = f._mm512_srli_epi64::<30>(y);
                            ll = f._mm512_add_epi64(ll, f._mm512_mul_epu32(xl, yl));
                            lh = f._mm512_add_epi64(lh, f._mm512_mul_epu32(xl, yh));
                            hl = f._mm512_add_epi64(hl, f._mm512_mul_epu32(xh, yl));
                            hh = f._mm512_add_epi64(hh, f._mm512_mul_epu32(xh, yh));
                        }
                        (lo, hi) = add_wide(simd, lo, hi, ll);
                        (lo, hi) = add_shifted::<30, 34>(simd, lo, hi, lh);
                        (lo, hi) = add_shifted::<31, 33>(simd, lo, hi, hl);
                        (lo, hi) = add_shifted::<61, 3>(simd, lo, hi, hh);
                    }
                    store(out, c, reduce_wide(simd, &k, lo, hi));
                }
            },
        )
    }

    pub(super) fn sum_of_products(
        simd: V4,
        m: &Modulus,
        rows: &[&[u64]],
        weights: Weights<'_>,
        cap: usize,
        out: &mut [u64],
    ) {
        simd.vectorize(
            #[inline(always)]
            || {
                let f = simd.avx512f;
                let k = Constants::new(simd, m);
                let zero = splat(simd, 0);
                let one = splat(simd, 1);
                let lanes = Lanes { simd, k: &k };
                let weights = match weights {
                    Weights::PerElement(w) => w,
                    Weights::PerRow(w) | Weights::PerRowNarrow(w) => {
                        // Shoup products in [0, 2p), the running sum kept below 2p.
                        for c in (0..out.len()).step_by(8) {
                            let mut acc = zero;
                            for (row, &wi) in rows.iter().zip(w) {
                                let t =
                                    f._mm512_add_epi64(acc, lanes.mul_shoup_lazy(load(row, c), wi));
                                acc = f._mm512_min_epu64(t, f._mm512_sub_epi64(t, k.two_p));
                            }
                            let r = f._mm512_min_epu64(acc, f._mm512_sub_epi64(acc, k.p));
                            store(out, c, r);
                        }
                        return;
                    }
                };
                for c in (0..out.len()).step_by(8) {
                    let (mut lo, mut hi) = (zero, zero);
                    for (i, row) in rows.iter().enumerate() {
                        if i > 0 && i % cap == 0 {
                            lo = reduce_wide(simd, &k, lo, hi);
                            hi = zero;
                        }
                        let (plo, phi) = widening_mul(simd, load(row, c), load(weights[i], c));
                        let sum = f._mm512_add_epi64(lo, plo);
                        let carry = f._mm512_cmplt_epu64_mask(sum, plo);
                        // hi += phi, plus 1 in the lanes where the low words wrapped.
                        let h = f._mm512_add_epi64(hi, phi);
                        hi = f._mm512_mask_add_epi64(h, carry, h, one);
                        lo = sum;
                    }
                    store(out, c, reduce_wide(simd, &k, lo, hi));
                }
            },
        )
    }

    /// Arithmetic modulo `p < 2^50` in base `2^52` on IFMA lanes, shared by [`ifma_element_sum`] and
    /// [`ifma_factored_sum`]: Shoup products and the reduction of a split sum `L + 2^52 H`.
    #[derive(Clone, Copy)]
    struct Ifma52 {
        simd: V4Ifma,
        zero: __m512i,
        one: __m512i,
        mask52: __m512i,
        p: __m512i,
        two_p: __m512i,
        /// `floor(2^52 / p)`, for reducing a value below `2^52`.
        mu: __m512i,
        /// `2^52 mod p` and its quotient `floor(c 2^52 / p)`.
        c52: __m512i,
        c52_shoup: __m512i,
    }

    impl Ifma52 {
        #[inline(always)]
        fn new(simd: V4Ifma, v4: V4, m: &Modulus) -> Self {
            // Shoup constants in base 2^52 (Harvey's bound needs p < 2^51).
            let c52 = (1u128 << 52) % m.value() as u128;
            Self {
                simd,
                zero: splat(v4, 0),
                one: splat(v4, 1),
                mask52: splat(v4, (1 << 52) - 1),
                p: splat(v4, m.value()),
                two_p: splat(v4, 2 * m.value()),
                mu: splat(v4, ((1u128 << 52) / m.value() as u128) as u64),
                c52: splat(v4, c52 as u64),
                c52_shoup: splat(v4, ((c52 << 52) / m.value() as u128) as u64),
            }
        }

        /// `x w - floor(x w' / 2^52) p` for `x < 2^52`, `w < p`, `w' = floor(w 2^52 / p)`: the Shoup
        /// product, in `[0, 2p)`.
        #[inline(always)]
        fn shoup(self, x: __m512i, w: __m512i, w_shoup: __m512i) -> __m512i {
            let (f, ifma) = (self.simd.avx512f, self.simd.avx512ifma);
            let q = ifma._mm512_madd52hi_epu64(self.zero, x, w_shoup);
            let t = f._mm512_sub_epi64(
                ifma._mm512_madd52lo_epu64(self.zero, x, w),
                ifma._mm512_madd52lo_epu64(self.zero, q, self.p),
            );
            f._mm512_and_si512(t, self.mask52)
        }

        /// `(L + 2^52 H) mod p` for the 52-bit column sums `L`, `H` of few products: with `L`'s carry
        /// moved into `H` (which must stay below `2^52`), `(L mod 2^52) + H (2^52 mod p)`, each term a
        /// Shoup product in `[0, 2p)`.
        #[inline(always)]
        fn reduce_short(self, lo52: __m512i, hi52: __m512i) -> __m512i {
            let f = self.simd.avx512f;
            let hi = f._mm512_add_epi64(hi52, f._mm512_srli_epi64::<52>(lo52));
            let lo = f._mm512_and_si512(lo52, self.mask52);
            let r = f._mm512_add_epi64(
                self.shoup(lo, self.one, self.mu),
                self.shoup(hi, self.c52, self.c52_shoup),
            );
            let r = f._mm512_min_epu64(r, f._mm512_sub_epi64(r, self.two_p));
            f._mm512_min_epu64(r, f._mm512_sub_epi64(r, self.p))
        }

        /// `(L + 2^52 H) mod p` for any column sums: assembled in 128 bits (low = `L + (H << 52)` with
        /// its carry) and reduced by [`reduce_wide`].
        #[inline(always)]
        fn reduce_wide(self, v4: V4, k: &Constants, lo52: __m512i, hi52: __m512i) -> __m512i {
            let f = self.simd.avx512f;
            let (lo, hi) = add_wide(
                v4,
                lo52,
                f._mm512_srli_epi64::<12>(hi52),
                f._mm512_slli_epi64::<52>(hi52),
            );
            reduce_wide(v4, k, lo, hi)
        }
    }

    /// `out[c] = sum_i rows[i][c] w[i][c] mod p` for `p < 2^50` (so every factor is below `2^52`) and at
    /// most [`super::IFMA_MAX_ROWS`] rows: the low and high 52-bit halves of the products accumulate
    /// separately (`L`, `H`, each below `rows 2^52`), the value `L + 2^52 H < 2^128` is assembled in 128
    /// bits and reduced once by [`reduce_wide`].
    pub(super) fn ifma_element_sum(
        simd: V4Ifma,
        v4: V4,
        m: &Modulus,
        rows: &[&[u64]],
        w: &[&[u64]],
        out: &mut [u64],
    ) {
        simd.vectorize(
            #[inline(always)]
            || {
                let ifma = simd.avx512ifma;
                let k = Constants::new(v4, m);
                let a = Ifma52::new(simd, v4, m);
                for c in (0..out.len()).step_by(8) {
                    let (mut lo52, mut hi52) = (a.zero, a.zero);
                    for (row, wr) in rows.iter().zip(w) {
                        let (x, y) = (load(row, c), load(wr, c));
                        lo52 = ifma._mm512_madd52lo_epu64(lo52, x, y);
                        hi52 = ifma._mm512_madd52hi_epu64(hi52, x, y);
                    }
                    // H stays below 2^52 for few rows.
                    let r = if rows.len() <= super::IFMA_SHOUP_ROWS {
                        a.reduce_short(lo52, hi52)
                    } else {
                        a.reduce_wide(v4, &k, lo52, hi52)
                    };
                    store(out, c, r);
                }
            },
        )
    }

    /// The vector body of [`super::sum_of_factored_products`] for moduli up to [`super::NARROW_BOUND`]
    /// on the first `len` coefficients (a multiple of 8): Shoup products `g = f d` in `[0, 2p)`, split
    /// into 31-bit halves, times the weights' 30-bit halves, the four partial sums exact in 64-bit lanes
    /// (at most [`super::FACTORED_MAX_TERMS`] terms below `2^61` each), assembled in 128 bits and reduced
    /// once per output.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn narrow_factored_sum(
        simd: V4,
        m: &Modulus,
        digits: &[&[u64]],
        factors: &[super::ShoupRow<'_>],
        weights: &[&[&[u64]]],
        outs: &mut [&mut [u64]],
        len: usize,
    ) {
        const LOW31: u64 = (1 << 31) - 1;
        const LOW30: u64 = (1 << 30) - 1;
        simd.vectorize(
            #[inline(always)]
            || {
                let f = simd.avx512f;
                let dq = simd.avx512dq;
                let k = Constants::new(simd, m);
                let zero = splat(simd, 0);
                let (mask31, mask30) = (splat(simd, LOW31), splat(simd, LOW30));
                let mut gl = [zero; super::FACTORED_MAX_TERMS];
                let mut gh = [zero; super::FACTORED_MAX_TERMS];
                for c in (0..len).step_by(8) {
                    let mut t = 0;
                    for fr in factors {
                        let (w, wq) = (load(fr.values, c), load(fr.quotients, c));
                        for d in digits {
                            let x = load(d, c);
                            // Shoup: x w - floor(x w' / 2^64) p, in [0, 2p).
                            let q = mul_hi(simd, x, wq);
                            let g = f._mm512_sub_epi64(
                                dq._mm512_mullo_epi64(x, w),
                                dq._mm512_mullo_epi64(q, k.p),
                            );
                            gl[t] = f._mm512_and_si512(g, mask31);
                            gh[t] = f._mm512_srli_epi64::<31>(g);
                            t += 1;
                        }
                    }
                    for (out, ws) in outs.iter_mut().zip(weights) {
                        let (mut ll, mut lh, mut hl, mut hh) = (zero, zero, zero, zero);
                        for i in 0..t {
                            let y = load(ws[i], c);
                            let yl = f._mm512_and_si512(y, mask30);
                            let yh = f._mm512_srli_epi64::<30>(y);
                            ll = f._mm512_add_epi64(ll, f._mm512_mul_epu32(gl[i], yl));
                            lh = f._mm512_add_epi64(lh, f._mm512_mul_epu32(gl[i], yh));
                            hl = f._mm512_add_epi64(hl, f._mm512_mul_epu32(gh[i], yl));
                            hh = f._mm512_add_epi64(hh, f._mm512_mul_epu32(gh[i], yh));
                        }
                        let (lo, hi) = (ll, zero);
                        let (lo, hi) = add_shifted::<30, 34>(simd, lo, hi, lh);
                        let (lo, hi) = add_shifted::<31, 33>(simd, lo, hi, hl);
                        let (lo, hi) = add_shifted::<61, 3>(simd, lo, hi, hh);
                        store(out, c, reduce_wide(simd, &k, lo, hi));
                    }
                }
            },
        )
    }

    /// The vector body of [`super::sum_of_factored_products`] for moduli below `2^50` with IFMA, on the
    /// first `len` coefficients (a multiple of 8): 52-bit Shoup products `g = f d` in `[0, 2p)` (the
    /// quotient `floor(f 2^52 / p)` is the 64-bit one shifted right by 12), then the low and high 52-bit
    /// halves of `g w` summed per output and reduced as in [`ifma_element_sum`].
    #[allow(clippy::too_many_arguments)]
    pub(super) fn ifma_factored_sum(
        simd: V4Ifma,
        v4: V4,
        m: &Modulus,
        digits: &[&[u64]],
        factors: &[super::ShoupRow<'_>],
        weights: &[&[&[u64]]],
        outs: &mut [&mut [u64]],
        len: usize,
    ) {
        simd.vectorize(
            #[inline(always)]
            || {
                let f = simd.avx512f;
                let ifma = simd.avx512ifma;
                let k = Constants::new(v4, m);
                let a = Ifma52::new(simd, v4, m);
                let mut g = [a.zero; super::FACTORED_MAX_TERMS];
                for c in (0..len).step_by(8) {
                    let mut t = 0;
                    for fr in factors {
                        let w = load(fr.values, c);
                        let wq = f._mm512_srli_epi64::<12>(load(fr.quotients, c));
                        for d in digits {
                            g[t] = a.shoup(load(d, c), w, wq);
                            t += 1;
                        }
                    }
                    for (out, ws) in outs.iter_mut().zip(weights) {
                        let (mut lo52, mut hi52) = (a.zero, a.zero);
                        for i in 0..t {
                            let y = load(ws[i], c);
                            lo52 = ifma._mm512_madd52lo_epu64(lo52, g[i], y);
                            hi52 = ifma._mm512_madd52hi_epu64(hi52, g[i], y);
                        }
                        let r = if t <= super::IFMA_FACTORED_SHOUP_TERMS {
                            a.reduce_short(lo52, hi52)
                        } else {
                            a.reduce_wide(v4, &k, lo52, hi52)
                        };
                        store(out, c, r);
                    }
                }
            },
        )
    }

    /// [`super::centered_lift`] on whole vectors of 8.
    pub(super) fn centered_lift(
        simd: V4,
        q: &Modulus,
        p: &Modulus,
        input: &[u64],
        out: &mut [u64],
    ) {
        simd.vectorize(
            #[inline(always)]
            || {
                let f = simd.avx512f;
                let k = Constants::new(simd, p);
                let zero = splat(simd, 0);
                let (qv, half) = (splat(simd, q.value()), splat(simd, q.value() / 2));
                // r - (q mod p) = r + (p - q mod p), then one conditional subtraction of p.
                let complement = splat(simd, p.value() - p.reduce(q.value()));
                for c in (0..out.len()).step_by(8) {
                    let x = load(input, c);
                    let x = f._mm512_min_epu64(x, f._mm512_sub_epi64(x, qv));
                    let upper = f._mm512_cmpgt_epu64_mask(x, half);
                    let r = reduce_wide(simd, &k, x, zero);
                    let t = f._mm512_add_epi64(r, complement);
                    let t = f._mm512_min_epu64(t, f._mm512_sub_epi64(t, k.p));
                    store(out, c, f._mm512_mask_mov_epi64(r, upper, t));
                }
            },
        )
    }

    pulp::simd_type! {
        /// [`V4`] with AVX-512 IFMA (52-bit multiply-accumulate), for [`super::scaled_rounding`] and
        /// [`ifma_element_sum`].
        pub(super) struct V4Ifma {
            pub sse: "sse",
            pub sse2: "sse2",
            pub fxsr: "fxsr",
            pub sse3: "sse3",
            pub ssse3: "ssse3",
            pub sse4_1: "sse4.1",
            pub sse4_2: "sse4.2",
            pub popcnt: "popcnt",
            pub avx: "avx",
            pub avx2: "avx2",
            pub bmi1: "bmi1",
            pub bmi2: "bmi2",
            pub fma: "fma",
            pub lzcnt: "lzcnt",
            pub avx512f: "avx512f",
            pub avx512bw: "avx512bw",
            pub avx512cd: "avx512cd",
            pub avx512dq: "avx512dq",
            pub avx512vl: "avx512vl",
            pub avx512ifma: "avx512ifma",
        }
    }

    /// The vector body of [`super::scaled_rounding`] (`out.len()` a multiple of 8). With
    /// `x = x_h 2^52 + x_l` (`x_h < 2^10`) and the weight `W = w_3 2^156 + w_2 2^104 + w_1 2^52 + w_0`
    /// (fixed point, `2^128` = one), the low and high 52-bit halves of the eight partial products land in
    /// the columns `A_j` of weight `2^(52 j)`, `j < 5` (`x_h w_3 < 2^52` has no high half). With the
    /// carries of `A_0` and `A_1` propagated into `A_2`,
    /// `floor((sum + 2^127) / 2^128) = floor((A_2 + 2^23) / 2^24) + A_3 2^28 + A_4 2^80`: the lower
    /// columns only carry. That value is assembled in 128 bits and reduced by [`reduce_wide`].
    pub(super) fn scaled_rounding(
        simd: V4Ifma,
        v4: V4,
        m: &Modulus,
        rows: &[&[u64]],
        weights: &[super::FixedWeight],
        out: &mut [u64],
    ) {
        const LOW52: u64 = (1 << 52) - 1;
        // The weights' 52-bit limbs.
        let limbs: Vec<[u64; 4]> = weights
            .iter()
            .map(|w| {
                [
                    w.fraction_lo & LOW52,
                    ((w.fraction_lo >> 52) | (w.fraction_hi << 12)) & LOW52,
                    (w.fraction_hi >> 40) | ((w.integer << 24) & LOW52),
                    w.integer >> 28,
                ]
            })
            .collect();
        simd.vectorize(
            #[inline(always)]
            || {
                let f = simd.avx512f;
                let ifma = simd.avx512ifma;
                let k = Constants::new(v4, m);
                let zero = splat(v4, 0);
                let mask = splat(v4, LOW52);
                for c in (0..out.len()).step_by(8) {
                    let (mut a0, mut a1, mut a2, mut a3, mut a4) = (zero, zero, zero, zero, zero);
                    // Index arithmetic rather than iterator adapters: see `narrow_sum`.
                    for i in 0..rows.len() {
                        let x = load(rows[i], c);
                        let xl = f._mm512_and_si512(x, mask);
                        let xh = f._mm512_srli_epi64::<52>(x);
                        let [w0, w1, w2, w3] = limbs[i].map(|w| splat(v4, w));
                        a0 = ifma._mm512_madd52lo_epu64(a0, xl, w0);
                        a1 = ifma._mm512_madd52hi_epu64(a1, xl, w0);
                        a1 = ifma._mm512_madd52lo_epu64(a1, xl, w1);
                        a1 = ifma._mm512_madd52lo_epu64(a1, xh, w0);
                        a2 = ifma._mm512_madd52hi_epu64(a2, xl, w1);
                        a2 = ifma._mm512_madd52lo_epu64(a2, xl, w2);
                        a2 = ifma._mm512_madd52hi_epu64(a2, xh, w0);
                        a2 = ifma._mm512_madd52lo_epu64(a2, xh, w1);
                        a3 = ifma._mm512_madd52hi_epu64(a3, xl, w2);
                        a3 = ifma._mm512_madd52lo_epu64(a3, xl, w3);
                        a3 = ifma._mm512_madd52hi_epu64(a3, xh, w1);
                        a3 = ifma._mm512_madd52lo_epu64(a3, xh, w2);
                        a4 = ifma._mm512_madd52hi_epu64(a4, xl, w3);
                        a4 = ifma._mm512_madd52hi_epu64(a4, xh, w2);
                        a4 = ifma._mm512_madd52lo_epu64(a4, xh, w3);
                    }
                    let a1 = f._mm512_add_epi64(a1, f._mm512_srli_epi64::<52>(a0));
                    let a2 = f._mm512_add_epi64(a2, f._mm512_srli_epi64::<52>(a1));
                    let rounded =
                        f._mm512_srli_epi64::<24>(f._mm512_add_epi64(a2, splat(v4, 1 << 23)));
                    // (rounded + A_3 2^28) + A_4 2^80 as (low words, high words).
                    let (lo, hi) = add_shifted::<28, 36>(v4, rounded, zero, a3);
                    let hi = f._mm512_add_epi64(hi, f._mm512_slli_epi64::<16>(a4));
                    store(out, c, reduce_wide(v4, &k, lo, hi));
                }
            },
        )
    }
}

/// Most rows [`scaled_rounding`] accepts: its vector path adds up to four 52-bit partial products per
/// row into each 64-bit column sum, exact while `4 * rows * 2^52 < 2^64`.
pub const SCALED_ROUNDING_MAX_ROWS: usize = 1023;

/// A weight `integer + (fraction_hi 2^64 + fraction_lo) / 2^128` of [`scaled_rounding`]: a rational in
/// 128-bit fixed point with its integral part.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FixedWeight {
    /// The integral part.
    pub integer: u64,
    /// The fraction's high word (weight `2^-64`).
    pub fraction_hi: u64,
    /// The fraction's low word (weight `2^-128`).
    pub fraction_lo: u64,
}

/// `out[c] = round(sum_i rows[i][c] W_i) mod p`, rounding to nearest with ties up, exactly, for weights
/// `W_i` in 128-bit fixed point ([`FixedWeight`]). This is HPS simple scaling (Section 2.3, Eq. 4) in
/// one pass: with `W_i = omega_i + theta_i`, `round(sum_i x_i omega_i + sum_i x_i theta_i) mod t` equals
/// `[sum_i x_i omega_i + round(sum_i x_i theta_i)]_t`.
///
/// With AVX-512 IFMA (checked at run time) the products are assembled from 52 x 52-bit partial products
/// (`vpmadd52luq` / `vpmadd52huq`) accumulated in five 52-bit-aligned column sums without carries, which
/// are propagated once per output; otherwise a scalar 128-bit loop. Both give the same residues.
///
/// Requirements (checked, panicking on violation): as many weights as rows, at most
/// [`SCALED_ROUNDING_MAX_ROWS`] rows, every row at least `out.len()` long. Row values must be below
/// [`MAX_ROW_VALUE`] and every rounded sum below `2^128` (true when `sum_i (bound_i - 1)(integer_i + 1)`
/// over the rows' bounds is); otherwise the result is wrong (checked in debug builds for the row
/// values), never undefined behaviour.
pub fn scaled_rounding(m: &Modulus, rows: &[&[u64]], weights: &[FixedWeight], out: &mut [u64]) {
    assert_eq!(rows.len(), weights.len(), "one weight per row");
    assert!(rows.len() <= SCALED_ROUNDING_MAX_ROWS, "too many rows");
    let n = out.len();
    assert!(rows.iter().all(|r| r.len() >= n), "row shorter than output");
    debug_assert!(rows
        .iter()
        .all(|r| r[..n].iter().all(|&x| x < MAX_ROW_VALUE)));
    let mut start = 0;
    #[cfg(target_arch = "x86_64")]
    if let (Some(simd), Some(v4)) = (avx512::V4Ifma::try_new(), pulp::x86::V4::try_new()) {
        start = n - n % 8;
        avx512::scaled_rounding(simd, v4, m, rows, weights, &mut out[..start]);
    }
    scalar_scaled_rounding(m, rows, weights, start, &mut out[start..]);
}

/// [`scaled_rounding`] without the vector path. Public for tests and benchmarks that compare the two
/// paths.
pub fn scaled_rounding_scalar(
    m: &Modulus,
    rows: &[&[u64]],
    weights: &[FixedWeight],
    out: &mut [u64],
) {
    assert_eq!(rows.len(), weights.len(), "one weight per row");
    scalar_scaled_rounding(m, rows, weights, 0, out);
}

/// The scalar loop of [`scaled_rounding`] for `out` covering coefficients `start..`: the integral parts
/// and the 128-bit fractional parts of the products summed apart, fraction overflows carried into the
/// integral sum, and the fraction sum's top bit (`>= 1/2`) added last.
fn scalar_scaled_rounding(
    m: &Modulus,
    rows: &[&[u64]],
    weights: &[FixedWeight],
    start: usize,
    out: &mut [u64],
) {
    for (k, o) in out.iter_mut().enumerate() {
        let c = start + k;
        let (mut int, mut frac) = (0u128, 0u128);
        for (row, w) in rows.iter().zip(weights) {
            // x W = x integer + (b 2^64 + a) / 2^128, the fraction product split at bit 128.
            let x = row[c] as u128;
            let (a, b) = (x * w.fraction_lo as u128, x * w.fraction_hi as u128);
            let (f1, c1) = a.overflowing_add(b << 64);
            let (f2, c2) = frac.overflowing_add(f1);
            frac = f2;
            int = int.wrapping_add(x * w.integer as u128 + (b >> 64) + c1 as u128 + c2 as u128);
        }
        *o = m.reduce_wide(int.wrapping_add(frac >> 127));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::primes;
    use rand::{rngs::StdRng, Rng, SeedableRng};

    /// A path of [`compact_masked_below`].
    type Compaction = fn(&[[u8; 8]], u64, u64, &mut [u64]) -> usize;

    #[test]
    fn compact_masked_below_paths_keep_the_accepted_values_in_order() {
        let mut rng = StdRng::seed_from_u64(0xc0);
        // No rejection, about half, about a quarter, almost all (bound 1: only zeros pass), and every
        // length around the 8-lane groups.
        for (mask, bound) in [
            (1u64, 2u64),
            ((1 << 41) - 1, (1 << 40) + 1),
            (127, 97),
            (u64::MAX >> 2, (1 << 61) - 1),
            (7, 1),
        ] {
            for len in 0..=41 {
                let words: Vec<[u8; 8]> =
                    (0..len).map(|_| rng.gen::<u64>().to_le_bytes()).collect();
                let expected: Vec<u64> = words
                    .iter()
                    .map(|w| u64::from_le_bytes(*w) & mask)
                    .filter(|&v| v < bound)
                    .collect();
                let paths: [(&str, Compaction); 2] = [
                    ("dispatched", compact_masked_below),
                    ("scalar", compact_masked_below_scalar),
                ];
                for (path, compact) in paths {
                    let mut out = vec![u64::MAX; len];
                    let count = compact(&words, mask, bound, &mut out);
                    assert_eq!(
                        out[..count],
                        expected,
                        "{path}: mask {mask:#x}, {len} words"
                    );
                }
            }
        }
    }

    #[test]
    fn lift_signed_matches_reduce_i64() {
        let mut rng = StdRng::seed_from_u64(0x11f7);
        for bits in [20u32, 54, 55, 61] {
            let m = Modulus::new(primes::ntt_primes_of_bits(bits, 64, 1, &[]).unwrap()[0]).unwrap();
            let p = m.value() as i64;
            let edges = [
                0,
                1,
                -1,
                p - 1,
                p,
                p + 1,
                -p + 1,
                -p,
                -p - 1,
                -2 * p,
                2 * p - 1,
            ];
            let values: Vec<i64> = edges
                .into_iter()
                .chain((0..203).map(|_| rng.gen_range(-2 * p..2 * p)))
                .collect();
            let mut out = vec![0u64; values.len()];
            lift_signed(&m, &values, &mut out);
            for (&d, &o) in values.iter().zip(&out) {
                assert_eq!(o, m.reduce_i64(d), "p = {p}, d = {d}");
            }
        }
    }

    #[derive(Clone, Copy, PartialEq)]
    enum Kind {
        PerElement,
        PerRow,
        Narrow,
    }

    /// `rows` rows of `n` values below `bound`: extremes first (`bound - 1` in the first 8 columns, which
    /// stresses the 64-bit lane sums, then 0 in the next 8), random values after.
    fn edge_rows(rng: &mut StdRng, rows: usize, n: usize, bound: u64) -> Vec<Vec<u64>> {
        (0..rows)
            .map(|_| {
                (0..n)
                    .map(|c| match c {
                        0..=7 => bound - 1,
                        8..=15 => 0,
                        _ => rng.gen_range(0..bound),
                    })
                    .collect()
            })
            .collect()
    }

    fn check(bits: u32, rows: usize, n: usize, kind: Kind) {
        let mut rng = StdRng::seed_from_u64(bits as u64 * 1000 + rows as u64);
        let p = primes::ntt_primes_near_power_of_two(bits, 1 << 4, 1).unwrap()[0];
        let m = Modulus::new(p).unwrap();
        let per_element = kind == Kind::PerElement;
        let bound = if kind == Kind::Narrow {
            NARROW_BOUND
        } else {
            MAX_ROW_VALUE
        };
        let data = edge_rows(&mut rng, rows, n, bound);
        let w: Vec<Vec<u64>> = (0..rows)
            .map(|_| {
                (0..n)
                    .map(|c| if c < 8 { p - 1 } else { rng.gen_range(0..p) })
                    .collect()
            })
            .collect();
        let row_refs: Vec<&[u64]> = data.iter().map(|r| &r[..]).collect();
        let w_refs: Vec<&[u64]> = w.iter().map(|r| &r[..]).collect();
        let consts: Vec<u64> = w.iter().map(|r| r[n - 1]).collect();
        let shoup: Vec<ShoupConstant> = consts.iter().map(|&x| m.shoup(x)).collect();
        let weights = match kind {
            Kind::PerElement => Weights::PerElement(&w_refs),
            Kind::PerRow => Weights::PerRow(&shoup),
            Kind::Narrow => Weights::PerRowNarrow(&shoup),
        };
        let mut fast = vec![0u64; n];
        let mut slow = vec![0u64; n];
        sum_of_products(&m, &row_refs, weights, &mut fast);
        sum_of_products_scalar(&m, &row_refs, weights, &mut slow);
        // Independent reference: reduce every product separately.
        for c in 0..n {
            let mut r = 0u128;
            for i in 0..rows {
                let wi = if per_element { w[i][c] } else { consts[i] };
                r = (r + (data[i][c] as u128 % p as u128) * wi as u128) % p as u128;
            }
            assert_eq!(
                slow[c] as u128, r,
                "scalar, bits {bits}, rows {rows}, c {c}"
            );
        }
        assert!(
            fast == slow,
            "bits {bits}, rows {rows}, n {n}, kind {}",
            kind as u8
        );
        let mut fresh = vec![std::mem::MaybeUninit::<u64>::uninit(); n];
        assert_eq!(
            sum_of_products_uninit(&m, &row_refs, weights, &mut fresh),
            &fast[..],
            "into uninitialised memory: bits {bits}, rows {rows}, n {n}"
        );
    }

    #[test]
    fn vector_and_scalar_paths_agree_with_the_reference() {
        for bits in [30, 50, 55, 60, 61, 62] {
            for rows in [1, 2, 3, 5, 8, 9, 14, 15, 16, 17, 31, 32, 33, 40, 129] {
                for n in [8, 64, 67] {
                    check(bits, rows, n, Kind::PerElement);
                    check(bits, rows, n, Kind::PerRow);
                    check(bits, rows, n, Kind::Narrow);
                }
            }
        }
    }

    /// The centered lift against its definition, for moduli on both sides of each other and inputs in
    /// `[0, 2q)` including the edges around `q/2`.
    #[test]
    fn centered_lift_matches_the_definition() {
        let mut rng = StdRng::seed_from_u64(0xce17);
        for (qb, pb) in [(45u32, 50u32), (60, 45), (50, 50), (30, 61), (61, 30)] {
            let q = Modulus::new(primes::ntt_primes_of_bits(qb, 16, 1, &[]).unwrap()[0]).unwrap();
            let p = Modulus::new(primes::ntt_primes_of_bits(pb, 16, 1, &[q.value()]).unwrap()[0])
                .unwrap();
            let (qv, half) = (q.value(), q.value() / 2);
            let edges = [
                0,
                1,
                half - 1,
                half,
                half + 1,
                qv - 1,
                qv,
                qv + half,
                2 * qv - 1,
            ];
            let input: Vec<u64> = edges
                .into_iter()
                .chain((0..131).map(|_| rng.gen_range(0..2 * qv)))
                .collect();
            let mut out = vec![0u64; input.len()];
            centered_lift(&q, &p, &input, &mut out);
            for (&x, &o) in input.iter().zip(&out) {
                let x = x % qv;
                let c = if x > half {
                    x as i128 - qv as i128
                } else {
                    x as i128
                };
                let want = c.rem_euclid(p.value() as i128) as u64;
                assert_eq!(o, want, "q {qv}, p {}, x {x}", p.value());
            }
        }
    }

    /// The reduced-input entry point (IFMA below `2^50`) against the reference, with every residue at
    /// `p - 1` in the first lanes (the largest lane sums) and up to its row limit.
    #[test]
    fn reduced_products_agree_with_the_reference() {
        let mut rng = StdRng::seed_from_u64(0x1f3a);
        for bits in [20u32, 45, 49, 50, 55, 61] {
            let p = primes::ntt_primes_of_bits(bits, 1 << 4, 1, &[]).unwrap()[0];
            let m = Modulus::new(p).unwrap();
            for rows in [1usize, 2, 3, 7, 15, 16, 64, 4096, 4097] {
                for n in [8usize, 67] {
                    let gen = |rng: &mut StdRng| -> Vec<Vec<u64>> {
                        (0..rows)
                            .map(|_| {
                                (0..n)
                                    .map(|c| if c < 8 { p - 1 } else { rng.gen_range(0..p) })
                                    .collect()
                            })
                            .collect()
                    };
                    let (x, w) = (gen(&mut rng), gen(&mut rng));
                    let xr: Vec<&[u64]> = x.iter().map(|r| &r[..]).collect();
                    let wr: Vec<&[u64]> = w.iter().map(|r| &r[..]).collect();
                    let mut got = vec![0u64; n];
                    sum_of_reduced_products(&m, &xr, &wr, &mut got);
                    for c in 0..n {
                        let want = (0..rows).fold(0u128, |acc, i| {
                            (acc + x[i][c] as u128 * w[i][c] as u128) % p as u128
                        });
                        assert_eq!(got[c] as u128, want, "bits {bits}, rows {rows}, c {c}");
                    }
                }
            }
        }
    }

    /// `sum_of_factored_products` (vector and scalar paths) against the plain formula
    /// `sum_k sum_j ((f_k d_j mod p) w_{k,j} mod p) mod p`, for moduli on every path (IFMA below 2^50, the
    /// split halves up to 2^60, the scalar path above), 1 to 9 terms, tails of 1 to 7 coefficients, and
    /// the edge values: digits, factors and weights 0 and p - 1 in the first columns.
    #[test]
    fn factored_products_match_the_plain_formula() {
        let mut rng = StdRng::seed_from_u64(0xfac7);
        for bits in [20u32, 45, 49, 50, 51, 55, 59, 60, 61, 62] {
            let p = primes::ntt_primes_of_bits(bits, 16, 1, &[]).unwrap()[0];
            let m = Modulus::new(p).unwrap();
            for (digit_count, factor_count) in
                [(1, 1), (2, 1), (1, 2), (2, 2), (2, 3), (4, 2), (3, 3)]
            {
                for n in [8usize, 43, 64] {
                    let mut row = |edge: u64| -> Vec<u64> {
                        (0..n)
                            .map(|c| match c {
                                0..=7 => edge,
                                8..=11 => 0,
                                _ => rng.gen_range(0..p),
                            })
                            .collect()
                    };
                    let digits: Vec<Vec<u64>> = (0..digit_count).map(|_| row(p - 1)).collect();
                    let values: Vec<Vec<u64>> = (0..factor_count).map(|_| row(p - 1)).collect();
                    let quotients: Vec<Vec<u64>> = values
                        .iter()
                        .map(|v| v.iter().map(|&x| m.shoup(x).quotient).collect())
                        .collect();
                    let terms = digit_count * factor_count;
                    let w: Vec<Vec<Vec<u64>>> = (0..2)
                        .map(|_| (0..terms).map(|_| row(p - 1)).collect())
                        .collect();
                    let digit_refs: Vec<&[u64]> = digits.iter().map(|r| &r[..]).collect();
                    let factors: Vec<ShoupRow<'_>> = values
                        .iter()
                        .zip(&quotients)
                        .map(|(v, q)| ShoupRow {
                            values: v,
                            quotients: q,
                        })
                        .collect();
                    let w_refs: Vec<Vec<&[u64]>> = w
                        .iter()
                        .map(|o| o.iter().map(|r| &r[..]).collect())
                        .collect();
                    let w_sets: Vec<&[&[u64]]> = w_refs.iter().map(|o| &o[..]).collect();
                    let (mut f0, mut f1) = (vec![0u64; n], vec![0u64; n]);
                    let (mut s0, mut s1) = (vec![1u64; n], vec![1u64; n]);
                    sum_of_factored_products(
                        &m,
                        &digit_refs,
                        &factors,
                        &w_sets,
                        &mut [&mut f0, &mut f1],
                    );
                    sum_of_factored_products_scalar(
                        &m,
                        &digit_refs,
                        &factors,
                        &w_sets,
                        &mut [&mut s0, &mut s1],
                    );
                    let pp = p as u128;
                    for (o, (fast, slow)) in [(&f0, &s0), (&f1, &s1)].into_iter().enumerate() {
                        for c in 0..n {
                            let mut want = 0u128;
                            for k in 0..factor_count {
                                for j in 0..digit_count {
                                    let g = values[k][c] as u128 * digits[j][c] as u128 % pp;
                                    want = (want + g * w[o][k * digit_count + j][c] as u128) % pp;
                                }
                            }
                            let at = format!("bits {bits}, {digit_count}x{factor_count}, n {n}, output {o}, c {c}");
                            assert_eq!(slow[c] as u128, want, "scalar, {at}");
                            assert_eq!(fast[c] as u128, want, "vector, {at}");
                        }
                    }
                }
            }
        }
    }

    /// The narrow path's extreme: a modulus just below 2^60 with maximal weights and rows, so every lane sum
    /// reaches its bound.
    #[test]
    fn narrow_path_at_its_bounds() {
        let p = primes::ntt_primes_near_power_of_two(60, 1 << 4, 1).unwrap()[0];
        let m = Modulus::new(p).unwrap();
        for rows in [15, 16, 17, 32, 33, 128, 129, 200] {
            let data = vec![vec![NARROW_BOUND - 1; 16]; rows];
            let row_refs: Vec<&[u64]> = data.iter().map(|r| &r[..]).collect();
            let shoup = vec![m.shoup(p - 1); rows];
            let mut fast = vec![0u64; 16];
            sum_of_products(&m, &row_refs, Weights::PerRowNarrow(&shoup), &mut fast);
            let term = ((NARROW_BOUND - 1) as u128 % p as u128) * (p - 1) as u128 % p as u128;
            let want = (term * rows as u128 % p as u128) as u64;
            assert!(fast.iter().all(|&x| x == want), "rows {rows}");
        }
    }

    /// `(a - old) * w + b`: every lane operation in one map.
    struct Mixed(ShoupConstant);
    impl LaneMap<2> for Mixed {
        fn apply<A: LaneArith>(&self, ar: A, old: A::V, [a, b]: [A::V; 2]) -> A::V {
            let t = ar.mul_shoup(ar.sub(a, old), self.0);
            ar.add(ar.mul(t, b), ar.splat(3))
        }
    }

    #[test]
    fn lane_map_matches_scalar_modulus_operations() {
        let mut rng = StdRng::seed_from_u64(9);
        for bits in [30, 50, 55, 60, 61, 62] {
            let p = primes::ntt_primes_near_power_of_two(bits, 16, 1).unwrap()[0];
            let m = Modulus::new(p).unwrap();
            let w = m.shoup(rng.gen_range(0..p));
            for n in [8, 40, 43] {
                let a: Vec<u64> = (0..n).map(|_| rng.gen_range(0..p)).collect();
                let b: Vec<u64> = (0..n).map(|_| rng.gen_range(0..p)).collect();
                let old: Vec<u64> = (0..n).map(|_| rng.gen_range(0..p)).collect();
                let mut out = old.clone();
                map_in_place(&m, &mut out, [&a, &b], &Mixed(w));
                for c in 0..n {
                    let t = m.mul_shoup(m.sub(a[c], old[c]), w);
                    assert_eq!(
                        out[c],
                        m.add(m.mul(t, b[c]), 3 % p),
                        "bits {bits} n {n} c {c}"
                    );
                }
            }
        }
    }

    #[test]
    fn write_uninit_writes_every_word() {
        // A permutation (the Galois permutation's use).
        let src: Vec<u64> = (100..164).collect();
        let idx: Vec<usize> = (0..64).map(|i| (i * 5 + 3) % 64).collect();
        let mut out = vec![std::mem::MaybeUninit::<u64>::uninit(); 64];
        let got = write_uninit(&mut out, idx.iter().map(|&i| src[i])).to_vec();
        let want: Vec<u64> = idx.iter().map(|&i| src[i]).collect();
        assert_eq!(got, want);
        let short = std::panic::catch_unwind(|| {
            let mut out = vec![std::mem::MaybeUninit::<u64>::uninit(); 4];
            write_uninit(&mut out, [0usize, 1].iter().map(|&i| src[i])).len()
        });
        assert!(short.is_err(), "a short index list must panic");
        let mut out = vec![std::mem::MaybeUninit::<u64>::uninit(); 5];
        assert_eq!(write_uninit(&mut out, 10..), &[10, 11, 12, 13, 14]);
        let few = std::panic::catch_unwind(|| {
            let mut out = vec![std::mem::MaybeUninit::<u64>::uninit(); 5];
            write_uninit(&mut out, 0..3).len()
        });
        assert!(few.is_err(), "too few values must panic");
    }

    /// `map_uninit` with both kinds of store, at every alignment of the output (the unaligned head of a
    /// streamed output is written by the scalar loop) and lengths around the vector width, gives the
    /// words of the scalar `Modulus` operations, as `map_in_place` on a zeroed output does.
    #[test]
    fn map_uninit_matches_scalar_at_every_alignment() {
        let mut rng = StdRng::seed_from_u64(0x5742);
        for bits in [30, 55, 61] {
            let p = primes::ntt_primes_near_power_of_two(bits, 16, 1).unwrap()[0];
            let m = Modulus::new(p).unwrap();
            let w = m.shoup(rng.gen_range(0..p));
            for n in [0, 1, 7, 8, 9, 43, 1000] {
                let a: Vec<u64> = (0..n).map(|_| rng.gen_range(0..p)).collect();
                let b: Vec<u64> = (0..n).map(|_| rng.gen_range(0..p)).collect();
                let want: Vec<u64> = (0..n)
                    .map(|c| m.add(m.mul(m.mul_shoup(a[c], w), b[c]), 3 % p))
                    .collect();
                let mut in_place = vec![0; n];
                map_in_place(&m, &mut in_place, [&a, &b], &Mixed(w));
                assert_eq!(in_place, want, "bits {bits} n {n}");
                for stores in [Stores::Cached, Stores::Streaming] {
                    for offset in 0..8 {
                        let mut buf = vec![std::mem::MaybeUninit::<u64>::uninit(); n + 8];
                        let out = map_uninit(
                            &m,
                            &mut buf[offset..offset + n],
                            [&a, &b],
                            &Mixed(w),
                            stores,
                        );
                        assert_eq!(
                            out,
                            &want[..],
                            "bits {bits} n {n} {stores:?} offset {offset}"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn streaming_from_the_documented_output_size() {
        let words = STREAMING_STORE_MIN_BYTES / 8;
        assert_eq!(Stores::for_output_words(words - 1), Stores::Cached);
        assert_eq!(Stores::for_output_words(words), Stores::Streaming);
        assert_eq!(Stores::for_output_words(usize::MAX), Stores::Streaming);
        // A ciphertext part of PaperTable1L15 (16 limbs of N = 2^16) streams, one of PaperTable1L10
        // (11 limbs of N = 2^15) does not.
        assert_eq!(Stores::for_output_words(16 << 16), Stores::Streaming);
        assert_eq!(Stores::for_output_words(11 << 15), Stores::Cached);
    }

    /// `scaled_rounding` (vector and scalar) against big-integer rounding, on random rows and weights with
    /// the edge values (row values 0 and the bound - 1; fractions 0, 1/2 and 2^128 - 1; integral parts 0
    /// and p - 1), for row bounds up to 2^62, moduli from 2 to 2^62, and the most rows accepted.
    #[test]
    fn scaled_rounding_matches_big_integers() {
        use num_bigint::BigUint;
        let mut rng = StdRng::seed_from_u64(0xf5ac);
        for (rows, bound, p) in [
            (1usize, MAX_ROW_VALUE, (1u64 << 62) - 57),
            (3, MAX_ROW_VALUE, (1 << 60) - 93),
            (7, 1u64 << 61, 2),
            (14, (1 << 55) - 1, 65537),
            (20, 1 << 59, 786433),
            (SCALED_ROUNDING_MAX_ROWS, 1 << 54, (1 << 40) - 87),
        ] {
            let m = Modulus::new(p).unwrap();
            let n = 67;
            let data = edge_rows(&mut rng, rows, n, bound);
            let weights: Vec<FixedWeight> = (0..rows)
                .map(|i| {
                    let integer = if i % 3 == 0 {
                        p - 1
                    } else {
                        rng.gen_range(0..p)
                    };
                    let (fraction_hi, fraction_lo) = match i % 5 {
                        0 => (u64::MAX, u64::MAX),
                        1 => (0, 0),
                        2 => (1 << 63, 0),
                        _ => (rng.gen(), rng.gen()),
                    };
                    FixedWeight {
                        integer,
                        fraction_hi,
                        fraction_lo,
                    }
                })
                .collect();
            let refs: Vec<&[u64]> = data.iter().map(|r| &r[..]).collect();
            let mut fast = vec![0u64; n];
            let mut slow = vec![0u64; n];
            scaled_rounding(&m, &refs, &weights, &mut fast);
            scaled_rounding_scalar(&m, &refs, &weights, &mut slow);
            for c in 0..n {
                let sum: BigUint = data
                    .iter()
                    .zip(&weights)
                    .map(|(r, w)| {
                        let fixed = (BigUint::from(w.integer) << 128u32)
                            + (BigUint::from(w.fraction_hi) << 64u32)
                            + BigUint::from(w.fraction_lo);
                        BigUint::from(r[c]) * fixed
                    })
                    .sum();
                let want: BigUint = ((sum + (BigUint::from(1u8) << 127u32)) >> 128u32) % p;
                assert_eq!(BigUint::from(slow[c]), want, "rows {rows}, c {c}");
            }
            assert_eq!(fast, slow, "rows {rows}");
        }
    }

    #[test]
    fn no_rows_gives_zero() {
        let m = Modulus::new(primes::ntt_primes_near_power_of_two(50, 16, 1).unwrap()[0]).unwrap();
        let mut out = vec![7u64; 16];
        sum_of_products(&m, &[], Weights::PerRow(&[]), &mut out);
        assert!(out.iter().all(|&x| x == 0));
    }
}
