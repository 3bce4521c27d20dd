//! The ChaCha20 keystream behind [`crate::sampling::Csprng`]: word for word the generator of
//! `rand_chacha 0.3` (`ChaCha20Rng`), with sixteen blocks computed at once on AVX-512.
//!
//! The stream is part of the wire format (public `a` polynomials are stored as the seed they expand
//! from), so it must never change: djb's layout of the ChaCha20 state, the constants in words 0-3, the
//! 32-byte key in words 4-11, a 64-bit block counter in words 12-13 and a 64-bit stream id in words
//! 14-15, 20 rounds, and the 16 output words of block `i` following those of block `i - 1` (for fewer
//! than `2^32` blocks this is RFC 8439 ChaCha20 with the nonce `[0u8; 4] ++ stream.to_le_bytes()`).
//!
//! [`ChaChaBlocks`] is a `rand_core 0.6` block generator whose results are sixteen blocks. Wrapped in
//! `rand_core`'s `BlockRng`, as `rand_chacha` wraps four blocks, it consumes the stream by the same
//! rules: `next_u32` one word, `next_u64` two consecutive words (low word first, across a refill too),
//! `fill_bytes` `ceil(len / 4)` words. Every rule takes consecutive words of the stream, so the length
//! of the buffer changes when blocks are computed, never which words a call returns.
//!
//! Why a block function of our own: `rand_chacha` computes four blocks per call on AVX2 (ppv-lite86),
//! each block in four 128-bit rows that are rotated into diagonals and back every double round. With
//! sixteen 32-bit lanes, AVX-512 computes sixteen blocks at once, word `j` of block `b` in lane `b` of
//! vector `j`: the rounds need no shuffles, each rotation is one `vprold`, and a 16 x 16 transpose
//! (64 shuffles per kilobyte) puts the words back in stream order. The published `chacha20 0.10`
//! crate has an AVX-512 backend, but only for its stream-cipher interface (its RNG computes with AVX2)
//! and only when every build (cargo, maturin, CI) passes `--cfg chacha20_avx512` in its rustflags; it
//! would also bring in `cipher 0.5` and a second `rand_core`. A kernel of about sixty lines on the
//! `pulp` token the other AVX-512 kernels of this crate use needs none of that. Measured on the
//! development machine (AMD EPYC, `cargo bench -p rnsfhe-bench --bench sampling`): 7.2 GiB/s of
//! keystream against `rand_chacha`'s 1.5 GiB/s, one thread.
//!
//! Processors without AVX-512 (checked at run time) compute the blocks with `rand_chacha` itself (its
//! AVX2, SSE2 or portable code, chosen at run time), so they keep the speed they had; the tests compare
//! both paths with `rand_chacha` over long streams and every mix of calls.

use rand_chacha::ChaCha20Rng;
use rand_core::block::BlockRngCore;
use rand_core::{RngCore, SeedableRng};
use zeroize::Zeroize;

use crate::sampling::Seed;

/// 32-bit words in a ChaCha20 block.
const BLOCK_WORDS: usize = 16;

/// Blocks computed per refill: one per lane of a 512-bit vector of 32-bit words.
const BUFFER_BLOCKS: usize = 16;

/// Words of keystream per refill.
const BUFFER_WORDS: usize = BLOCK_WORDS * BUFFER_BLOCKS;

/// Sixteen consecutive blocks of keystream, in stream order (the results of [`ChaChaBlocks`]).
pub(crate) struct Blocks([u32; BUFFER_WORDS]);

impl Default for Blocks {
    fn default() -> Self {
        Self([0; BUFFER_WORDS])
    }
}

impl AsRef<[u32]> for Blocks {
    fn as_ref(&self) -> &[u32] {
        &self.0
    }
}

impl AsMut<[u32]> for Blocks {
    fn as_mut(&mut self) -> &mut [u32] {
        &mut self.0
    }
}

/// How the blocks are computed; chosen once, when the generator is built.
// Not boxed: the value must stay plain data so that `Csprng`'s `Drop` can wipe it by overwriting (a box
// would leave the reference generator's state on the heap), and 336 bytes beside the 1 KiB buffer of
// keystream cost nothing.
#[allow(clippy::large_enum_variant)]
enum Engine {
    /// Our kernel: the key words, the stream id and the counter of the next block to compute.
    #[cfg(target_arch = "x86_64")]
    Avx512 {
        simd: pulp::x86::V4,
        key: [u32; 8],
        stream: u64,
        next_block: u64,
    },
    /// `rand_chacha`'s generator, read [`BUFFER_WORDS`] words at a time (so it stays at the same
    /// position of the same stream).
    Reference(ChaCha20Rng),
}

/// The block generator of the ChaCha20 stream `stream` of a 32-byte key, from block 0 (see the
/// module documentation).
///
/// Plain data (no heap, no `Drop`), so that [`crate::sampling::Csprng`] can wipe it by overwriting.
pub(crate) struct ChaChaBlocks {
    engine: Engine,
}

impl ChaChaBlocks {
    /// The generator of stream `stream` of key `seed`: the AVX-512 kernel where the processor has it,
    /// `rand_chacha` otherwise.
    pub(crate) fn new(seed: &Seed, stream: u64) -> Self {
        #[cfg(target_arch = "x86_64")]
        if let Some(simd) = pulp::x86::V4::try_new() {
            return Self::vectorized(simd, seed, stream, 0);
        }
        Self::reference(seed, stream, 0)
    }

    /// The AVX-512 engine, at block `first_block`.
    #[cfg(target_arch = "x86_64")]
    fn vectorized(simd: pulp::x86::V4, seed: &Seed, stream: u64, first_block: u64) -> Self {
        let mut key = [0u32; 8];
        for (k, bytes) in key.iter_mut().zip(seed.as_chunks::<4>().0) {
            *k = u32::from_le_bytes(*bytes);
        }
        Self {
            engine: Engine::Avx512 {
                simd,
                key,
                stream,
                next_block: first_block,
            },
        }
    }

    /// The `rand_chacha` engine, at block `first_block`.
    fn reference(seed: &Seed, stream: u64, first_block: u64) -> Self {
        let mut rng = ChaCha20Rng::from_seed(*seed);
        rng.set_stream(stream);
        if first_block != 0 {
            rng.set_word_pos(u128::from(first_block) * BLOCK_WORDS as u128);
        }
        Self {
            engine: Engine::Reference(rng),
        }
    }
}

impl BlockRngCore for ChaChaBlocks {
    type Item = u32;
    type Results = Blocks;

    fn generate(&mut self, results: &mut Blocks) {
        match &mut self.engine {
            #[cfg(target_arch = "x86_64")]
            Engine::Avx512 {
                simd,
                key,
                stream,
                next_block,
            } => {
                avx512::blocks(*simd, key, *stream, *next_block, &mut results.0);
                // The counter wraps modulo 2^64 as rand_chacha's does.
                *next_block = next_block.wrapping_add(BUFFER_BLOCKS as u64);
            }
            Engine::Reference(rng) => {
                let mut bytes = [0u8; 4 * BUFFER_WORDS];
                rng.fill_bytes(&mut bytes);
                for (w, b) in results.0.iter_mut().zip(bytes.as_chunks::<4>().0) {
                    *w = u32::from_le_bytes(*b);
                }
                bytes.zeroize();
            }
        }
    }
}

#[cfg(target_arch = "x86_64")]
mod avx512 {
    use core::arch::x86_64::__m512i;

    use pulp::x86::V4;

    use super::{BLOCK_WORDS, BUFFER_WORDS};

    /// "expand 32-byte k", words 0-3 of every block.
    const SIGMA: [u32; 4] = [0x6170_7865, 0x3320_646e, 0x7962_2d32, 0x6b20_6574];

    /// The ChaCha quarter round on words `a, b, c, d` of the sixteen blocks.
    #[inline(always)]
    fn quarter(simd: V4, x: &mut [__m512i; 16], [a, b, c, d]: [usize; 4]) {
        let f = simd.avx512f;
        x[a] = f._mm512_add_epi32(x[a], x[b]);
        x[d] = f._mm512_rol_epi32::<16>(f._mm512_xor_si512(x[d], x[a]));
        x[c] = f._mm512_add_epi32(x[c], x[d]);
        x[b] = f._mm512_rol_epi32::<12>(f._mm512_xor_si512(x[b], x[c]));
        x[a] = f._mm512_add_epi32(x[a], x[b]);
        x[d] = f._mm512_rol_epi32::<8>(f._mm512_xor_si512(x[d], x[a]));
        x[c] = f._mm512_add_epi32(x[c], x[d]);
        x[b] = f._mm512_rol_epi32::<7>(f._mm512_xor_si512(x[b], x[c]));
    }

    /// Transposes sixteen vectors of sixteen words (`x[j]` lane `b` to `out[b]` lane `j`): the 4 x 4
    /// transposes of words inside each 128-bit lane, then the 4 x 4 transposes of those lanes.
    #[inline(always)]
    fn transpose(simd: V4, x: &[__m512i; 16]) -> [__m512i; 16] {
        let f = simd.avx512f;
        // s[4g + k], lane L: words 4g..4g+3 of block 4L + k.
        let mut s = *x;
        for g in 0..4 {
            let r = &x[4 * g..4 * g + 4];
            let lo01 = f._mm512_unpacklo_epi32(r[0], r[1]);
            let hi01 = f._mm512_unpackhi_epi32(r[0], r[1]);
            let lo23 = f._mm512_unpacklo_epi32(r[2], r[3]);
            let hi23 = f._mm512_unpackhi_epi32(r[2], r[3]);
            s[4 * g] = f._mm512_unpacklo_epi64(lo01, lo23);
            s[4 * g + 1] = f._mm512_unpackhi_epi64(lo01, lo23);
            s[4 * g + 2] = f._mm512_unpacklo_epi64(hi01, hi23);
            s[4 * g + 3] = f._mm512_unpackhi_epi64(hi01, hi23);
        }
        // Block 4L + k gathers lane L of s[k], s[4 + k], s[8 + k], s[12 + k].
        let mut out = *x;
        for k in 0..4 {
            let (s0, s1, s2, s3) = (s[k], s[4 + k], s[8 + k], s[12 + k]);
            // Lanes (0, 1) and (2, 3) of two vectors side by side.
            let low01 = f._mm512_shuffle_i32x4::<0x44>(s0, s1);
            let high01 = f._mm512_shuffle_i32x4::<0xee>(s0, s1);
            let low23 = f._mm512_shuffle_i32x4::<0x44>(s2, s3);
            let high23 = f._mm512_shuffle_i32x4::<0xee>(s2, s3);
            // Even lanes of both, then odd lanes of both.
            out[k] = f._mm512_shuffle_i32x4::<0x88>(low01, low23);
            out[4 + k] = f._mm512_shuffle_i32x4::<0xdd>(low01, low23);
            out[8 + k] = f._mm512_shuffle_i32x4::<0x88>(high01, high23);
            out[12 + k] = f._mm512_shuffle_i32x4::<0xdd>(high01, high23);
        }
        out
    }

    /// Blocks `first, first + 1, .., first + 15` (counters modulo `2^64`) of stream `stream` of `key`,
    /// in stream order.
    pub(super) fn blocks(
        simd: V4,
        key: &[u32; 8],
        stream: u64,
        first: u64,
        out: &mut [u32; BUFFER_WORDS],
    ) {
        simd.vectorize(
            #[inline(always)]
            || {
                let f = simd.avx512f;
                let mut row = [0u32; BLOCK_WORDS];
                row[..4].copy_from_slice(&SIGMA);
                row[4..12].copy_from_slice(key);
                row[14] = stream as u32;
                row[15] = (stream >> 32) as u32;
                let mut input: [__m512i; 16] =
                    core::array::from_fn(|j| f._mm512_set1_epi32(row[j] as i32));
                let mut low = [0u32; 16];
                let mut high = [0u32; 16];
                for (b, (l, h)) in low.iter_mut().zip(&mut high).enumerate() {
                    let counter = first.wrapping_add(b as u64);
                    *l = counter as u32;
                    *h = (counter >> 32) as u32;
                }
                input[12] = pulp::cast(low);
                input[13] = pulp::cast(high);
                let mut x = input;
                for _ in 0..10 {
                    quarter(simd, &mut x, [0, 4, 8, 12]);
                    quarter(simd, &mut x, [1, 5, 9, 13]);
                    quarter(simd, &mut x, [2, 6, 10, 14]);
                    quarter(simd, &mut x, [3, 7, 11, 15]);
                    quarter(simd, &mut x, [0, 5, 10, 15]);
                    quarter(simd, &mut x, [1, 6, 11, 12]);
                    quarter(simd, &mut x, [2, 7, 8, 13]);
                    quarter(simd, &mut x, [3, 4, 9, 14]);
                }
                for (w, i) in x.iter_mut().zip(&input) {
                    *w = f._mm512_add_epi32(*w, *i);
                }
                for (block, v) in out.chunks_exact_mut(BLOCK_WORDS).zip(transpose(simd, &x)) {
                    block.copy_from_slice(&pulp::cast::<__m512i, [u32; 16]>(v));
                }
            },
        )
    }
}

/// The engines this processor can run, at block `first_block` of stream `stream` of `seed`.
#[cfg(test)]
pub(crate) fn engines(
    seed: &Seed,
    stream: u64,
    first_block: u64,
) -> Vec<(&'static str, ChaChaBlocks)> {
    let mut all = vec![(
        "reference",
        ChaChaBlocks::reference(seed, stream, first_block),
    )];
    #[cfg(target_arch = "x86_64")]
    if let Some(simd) = pulp::x86::V4::try_new() {
        all.push((
            "avx512",
            ChaChaBlocks::vectorized(simd, seed, stream, first_block),
        ));
    }
    all
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand_core::block::BlockRng;

    #[test]
    fn chacha_blocks_match_rand_chacha_across_counter_carries() {
        let seed: Seed = core::array::from_fn(|i| (i * 37 + 5) as u8);
        // From block 0, across the 32-bit carry of the counter (word 12 into 13) and across its
        // wrap modulo 2^64, for the default stream and two others.
        for first in [0u64, (1 << 32) - 5, u64::MAX - 7] {
            for stream in [0u64, 1, u64::from_le_bytes(*b"rnsfhe:a"), u64::MAX] {
                let mut expected = ChaCha20Rng::from_seed(seed);
                expected.set_stream(stream);
                expected.set_word_pos(u128::from(first) * BLOCK_WORDS as u128);
                let want: Vec<u32> = (0..3 * BUFFER_WORDS).map(|_| expected.next_u32()).collect();
                for (name, engine) in engines(&seed, stream, first) {
                    let mut rng = BlockRng::new(engine);
                    let got: Vec<u32> = (0..3 * BUFFER_WORDS).map(|_| rng.next_u32()).collect();
                    assert!(
                        got == want,
                        "{name}: block {first}, stream {stream}: first difference at word {:?}",
                        got.iter().zip(&want).position(|(a, b)| a != b)
                    );
                }
            }
        }
    }

    #[test]
    fn chacha_rfc8439_block() {
        // RFC 8439 Section 2.3.2: key 00 01 .. 1f, nonce 00 00 00 09 00 00 00 4a 00 00 00 00, block
        // counter 1. In the 64-bit layout the nonce's first word is the counter's high word (13) and
        // the other two are the stream id (14, 15).
        let seed: Seed = core::array::from_fn(|i| i as u8);
        let first = (0x0900_0000u64 << 32) | 1;
        let expected: [u32; 16] = [
            0xe4e7_f110,
            0x1559_3bd1,
            0x1fdd_0f50,
            0xc471_20a3,
            0xc7f4_d1c7,
            0x0368_c033,
            0x9aaa_2204,
            0x4e6c_d4c3,
            0x4664_82d2,
            0x09aa_9f07,
            0x05d7_c214,
            0xa202_8bd9,
            0xd19c_12b5,
            0xb94e_16de,
            0xe883_d0cb,
            0x4e3c_50a2,
        ];
        for (name, engine) in engines(&seed, 0x4a00_0000, first) {
            let mut rng = BlockRng::new(engine);
            let block: Vec<u32> = (0..16).map(|_| rng.next_u32()).collect();
            assert_eq!(block, expected, "{name}");
        }
    }
}
