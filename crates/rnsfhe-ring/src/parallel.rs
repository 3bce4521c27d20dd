//! Active waiting of the rayon pool during a long operation made of many short parallel sections.
//!
//! The pipeline stages of PEGASUS (S2C, the subring trace, `F_mod`, ring packing; Fig. 6) at the low
//! levels of the chain are long sequences of dependent key switches and products over 2 to 13 limbs:
//! hundreds of fork-join points per stage, separated by short serial steps. Between two of them an idle
//! rayon worker spins for a few dozen `sched_yield` rounds and then sleeps on a futex; the next fork wakes
//! it. On a loaded machine the other core is busy anyway and the wake-up is a cheap preemption, but on an
//! otherwise idle virtual machine the sleeping worker's virtual CPU halts, and waking it goes through the
//! hypervisor: measured on the development machine (guest halt polling disabled), the stages with the
//! most sleeps per call lost the most speed-up on a quiet machine against a loaded one (`F_mod`: about 140
//! sleeps per call, 1.23x quiet against 1.8x loaded on 2 threads).
//!
//! [`active_wait`] runs an operation with the threads of the current pool kept awake: tokens (small jobs
//! that look for pending work with [`rayon::yield_now`], pause briefly and queue themselves again)
//! circulate in the pool's queues until the operation returns, so that an idle worker, and a thread
//! waiting inside a fork-join for the other half of its work, always finds a job instead of going to
//! sleep. Inside such a region, [`join`], [`for_each_chunk`], [`try_for_each_chunk`],
//! [`try_for_each_chunk_pair`] and [`map`] (the
//! fork-joins of the polynomial and key-switching kernels) also keep the thread that waits for the other
//! half of a fork running pending work or pausing instead of sleeping; outside one they are rayon's
//! `join`, `par_chunks_mut` and `par_iter` as they were. This is the "active" wait policy of OpenMP runtimes: it trades the idle time of the cores
//! during the operation's serial steps for the latency of every fork, and it changes no result (the same
//! jobs run, in an order rayon may choose anyway). It does nothing on a pool of one thread, inside
//! another [`active_wait`] on the same thread, or when switched off process-wide with
//! [`set_active_wait`] (for a machine shared with other work, where the spinning would take CPU time
//! from it).

use std::cell::Cell;
use std::convert::Infallible;
use std::mem::MaybeUninit;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;

use rayon::prelude::*;

/// Whether [`active_wait`] keeps the workers awake (process-wide; see [`set_active_wait`]).
static ENABLED: AtomicBool = AtomicBool::new(true);

/// CPU pause instructions after a token's look for work found none: about a microsecond, so that the
/// looks do not contend with the other threads' pushes and pops on their work queues.
const PAUSES_PER_ROUND: usize = 32;

/// Number of [`active_wait`] regions running in the process (see [`join`]).
static ACTIVE: AtomicUsize = AtomicUsize::new(0);

thread_local! {
    /// Set on a thread while it runs an [`active_wait`] operation: a nested call runs its operation
    /// directly (the pool's threads already wait actively).
    static INSIDE: Cell<bool> = const { Cell::new(false) };
}

/// Switches the active waiting of [`active_wait`] on or off for the whole process (on by default).
/// Off, every [`active_wait`] runs its operation directly and idle workers sleep as rayon has them;
/// results are the same either way.
pub fn set_active_wait(enabled: bool) {
    ENABLED.store(enabled, Ordering::Relaxed);
}

/// Whether [`active_wait`] keeps the workers awake ([`set_active_wait`]).
pub fn active_wait_enabled() -> bool {
    ENABLED.load(Ordering::Relaxed)
}

/// Sets a flag when dropped, also when the code it guards unwinds (the tokens then stop; a waiting
/// [`join`] then returns to rayon, which propagates the panic).
struct SetOnDrop<'a>(&'a AtomicBool);

impl Drop for SetOnDrop<'_> {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Release);
    }
}

/// Marks the current thread as inside an active region, and counts the region in [`ACTIVE`], until
/// dropped.
struct Inside;

impl Inside {
    fn enter() -> Self {
        INSIDE.with(|c| c.set(true));
        ACTIVE.fetch_add(1, Ordering::AcqRel);
        Inside
    }
}

impl Drop for Inside {
    fn drop(&mut self) {
        ACTIVE.fetch_sub(1, Ordering::AcqRel);
        INSIDE.with(|c| c.set(false));
    }
}

/// Whether an [`active_wait`] region runs anywhere in the process: [`join`] and the chunk loops then
/// wait actively.
fn active() -> bool {
    ACTIVE.load(Ordering::Acquire) > 0
}

/// Whether an [`active_wait`] region runs anywhere in the process, so that the fork-joins of this
/// module wait actively (for callers whose loop keeps per-thread state and so cannot use them as they
/// are outside a region).
pub fn in_active_region() -> bool {
    active()
}

/// Runs pending work of the pool (or pauses) until `flag` is set.
fn wait_for(flag: &AtomicBool) {
    while !flag.load(Ordering::Acquire) {
        if rayon::yield_now() != Some(rayon::Yield::Executed) {
            for _ in 0..PAUSES_PER_ROUND {
                std::hint::spin_loop();
            }
        }
    }
}

/// `(a(), b())` as [`rayon::join`], except that inside an [`active_wait`] region the thread that ran
/// `a` does not go to sleep while `b` still runs on another thread: it runs pending work or pauses
/// until `b` is done (rayon's own wait sleeps after a few dozen rounds without work, and the wake-up
/// costs a virtual CPU's halt and resume; see the [module documentation](self)). If `b` was not taken
/// by another thread, the waiting thread runs it itself. Same results as [`rayon::join`].
pub fn join<RA: Send, RB: Send>(
    a: impl FnOnce() -> RA + Send,
    b: impl FnOnce() -> RB + Send,
) -> (RA, RB) {
    if !active() {
        return rayon::join(a, b);
    }
    let b_done = AtomicBool::new(false);
    let b_done = &b_done;
    rayon::join(
        move || {
            let r = a();
            wait_for(b_done);
            r
        },
        move || {
            let _done = SetOnDrop(b_done);
            b()
        },
    )
}

/// `f(i, chunk_i)` for the chunks of `chunk` elements of `data` (the last one may be shorter), in
/// parallel: as `data.par_chunks_mut(chunk).enumerate().for_each(..)` outside an [`active_wait`]
/// region, by halves through [`join`] inside one.
pub fn for_each_chunk<T: Send>(
    data: &mut [T],
    chunk: usize,
    f: &(impl Fn(usize, &mut [T]) + Sync),
) {
    let done: Result<(), Infallible> = try_for_each_chunk(data, chunk, &|i, c| {
        f(i, c);
        Ok(())
    });
    match done {
        Ok(()) => {}
        Err(never) => match never {},
    }
}

/// [`for_each_chunk`] with a fallible `f`: the first error met (in no fixed order between chunks run
/// in parallel).
pub fn try_for_each_chunk<T: Send, E: Send>(
    data: &mut [T],
    chunk: usize,
    f: &(impl Fn(usize, &mut [T]) -> Result<(), E> + Sync),
) -> Result<(), E> {
    let chunk = chunk.max(1);
    if !active() {
        return data
            .par_chunks_mut(chunk)
            .enumerate()
            .try_for_each(|(i, c)| f(i, c));
    }
    halves(0, data, chunk, f)
}

/// The chunks of `data` (numbered from `first`) by halves through [`join`].
fn halves<T: Send, E: Send>(
    first: usize,
    data: &mut [T],
    chunk: usize,
    f: &(impl Fn(usize, &mut [T]) -> Result<(), E> + Sync),
) -> Result<(), E> {
    let count = data.len().div_ceil(chunk);
    if count <= 1 {
        return if data.is_empty() {
            Ok(())
        } else {
            f(first, data)
        };
    }
    let mid = count / 2;
    let (left, right) = data.split_at_mut(mid * chunk);
    let (l, r) = join(
        || halves(first, left, chunk, f),
        || halves(first + mid, right, chunk, f),
    );
    l.and(r)
}

/// `f(i, a_i, b_i)` for the chunks of `chunk` elements of two buffers of the same length, in
/// parallel: as `a.par_chunks_mut(chunk).zip(b.par_chunks_mut(chunk)).enumerate().try_for_each(..)`
/// outside an [`active_wait`] region, by halves through [`join`] inside one. The first error met.
pub fn try_for_each_chunk_pair<T: Send, E: Send>(
    a: &mut [T],
    b: &mut [T],
    chunk: usize,
    f: &(impl Fn(usize, &mut [T], &mut [T]) -> Result<(), E> + Sync),
) -> Result<(), E> {
    let chunk = chunk.max(1);
    if !active() {
        return a
            .par_chunks_mut(chunk)
            .zip(b.par_chunks_mut(chunk))
            .enumerate()
            .try_for_each(|(i, (x, y))| f(i, x, y));
    }
    pair_halves(0, a, b, chunk, f)
}

/// The chunk pairs of `a` and `b` (numbered from `first`) by halves through [`join`].
fn pair_halves<T: Send, E: Send>(
    first: usize,
    a: &mut [T],
    b: &mut [T],
    chunk: usize,
    f: &(impl Fn(usize, &mut [T], &mut [T]) -> Result<(), E> + Sync),
) -> Result<(), E> {
    let count = a.len().min(b.len()).div_ceil(chunk);
    if count <= 1 {
        return if count == 0 { Ok(()) } else { f(first, a, b) };
    }
    let mid = count / 2;
    let (a0, a1) = a.split_at_mut(mid * chunk);
    let (b0, b1) = b.split_at_mut(mid * chunk);
    let (l, r) = join(
        || pair_halves(first, a0, b0, chunk, f),
        || pair_halves(first + mid, a1, b1, chunk, f),
    );
    l.and(r)
}

/// `f` on every item, in parallel, results in order: as `items.par_iter().map(f).collect()` outside an
/// [`active_wait`] region, by halves through [`join`] inside one.
pub fn map<I: Sync, R: Send>(items: &[I], f: &(impl Fn(&I) -> R + Sync)) -> Vec<R> {
    if !active() {
        return items.par_iter().map(f).collect();
    }
    if items.len() <= 1 {
        return items.iter().map(f).collect();
    }
    let (left, right) = items.split_at(items.len() / 2);
    let (mut l, r) = join(|| map(left, f), || map(right, f));
    l.extend(r);
    l
}

/// Elements from which [`zeroed`] fills its buffer on several threads: 512 KiB of words (a limb of
/// `N = 2^16`). Below it a fork costs about as much as the fill.
const ZEROED_PARALLEL_MIN_WORDS: usize = 1 << 16;

/// Least words per task of [`zeroed`]'s parallel fill (256 KiB).
const ZEROED_TASK_WORDS: usize = 1 << 15;

/// A buffer of `len` zeros (`T::default()`: the integer types' zero), filled in parallel when it is large and the pool has several threads.
///
/// `vec![0; len]` zeroes the whole buffer on the calling thread: a `memset` of recycled memory, or
/// the first-touch page faults of memory the allocator had returned to the system, one page at a time.
/// For the outputs of the key-switching and polynomial kernels at `N = 2^16` (1 to 10 MB each) that
/// serial pass ran while the pool's other threads waited, between two parallel sections: about 6 % of
/// the CPU time of a 2-thread `F_mod` in `memset` alone, and most of its page faults, on one thread.
/// Here the fill (and with it the faults) is split between the threads, so the callers that overwrite
/// the whole buffer right after (in parallel) no longer pay a serial pass first. The result is the same
/// zero buffer; on one thread, or for a small buffer, this is `vec![0; len]`.
pub fn zeroed<T: Copy + Default + Send + Sync>(len: usize) -> Vec<T> {
    let threads = rayon::current_num_threads();
    if len < ZEROED_PARALLEL_MIN_WORDS || threads < 2 {
        return vec![T::default(); len];
    }
    // One part per thread (a single fork on two threads): the fill is uniform work.
    let part = len.div_ceil(threads).max(ZEROED_TASK_WORDS);
    let mut data = Vec::with_capacity(len);
    data.par_extend(rayon::iter::repeat_n(T::default(), len).with_min_len(part));
    data
}

/// A vector of `len` values whose chunk `i` (`chunk` values, the last one maybe shorter) is written by
/// `f(i, uninitialised chunk)`, in parallel over chunks as [`for_each_chunk`] on a pool of several
/// threads, one chunk after the other on one thread: [`zeroed`] and a fill without the zeroing pass
/// (for an addition, one pass of three over memory). `f` proves each chunk written by returning it as
/// initialised values (as [`rnsfhe_math::simd::map_uninit`] does); panics if it returns other memory.
pub fn from_chunks<T: Send>(
    len: usize,
    chunk: usize,
    f: &(impl for<'a> Fn(usize, &'a mut [MaybeUninit<T>]) -> &'a mut [T] + Sync),
) -> Vec<T> {
    let chunk = chunk.max(1);
    let mut data = Vec::with_capacity(len);
    let fill = |i: usize, c: &mut [MaybeUninit<T>]| {
        let (start, count) = (c.as_ptr(), c.len());
        let done = f(i, c);
        assert!(
            std::ptr::eq(done.as_ptr().cast::<MaybeUninit<T>>(), start) && done.len() == count,
            "from_chunks: chunk {i} was not written in place"
        );
    };
    let slots = &mut data.spare_capacity_mut()[..len];
    if rayon::current_num_threads() < 2 || len <= chunk {
        slots
            .chunks_mut(chunk)
            .enumerate()
            .for_each(|(i, c)| fill(i, c));
    } else {
        for_each_chunk(slots, chunk, &fill);
    }
    // SAFETY: both loops pass every chunk of the first `len` slots to `fill` (a panic in any of them
    // propagates before this line), and for each `f` returned a `&mut [T]` of the same address and
    // length, borrowed from the chunk for as long as `f` held it: safe code can only make such a
    // slice of initialised values, and could not write the chunk again after making it.
    unsafe { data.set_len(len) };
    data
}

/// [`from_chunks`] for `K` vectors written together: `f(i, [chunk i of each])` writes chunk `i` of all
/// `K` vectors (for a kernel that makes several outputs at once, such as the three parts of a tensor
/// product limb by limb) and returns them as initialised values; panics if it returns other memory.
/// ([`from_chunks`] is not this with `K = 1`: through that wrapper the samplers' residues, written by
/// [`from_chunks`], made CKKS Encode + Encrypt 4-5 % slower on one thread.)
pub fn from_chunk_groups<T: Send, const K: usize>(
    len: usize,
    chunk: usize,
    f: &(impl for<'a> Fn(usize, [&'a mut [MaybeUninit<T>]; K]) -> [&'a mut [T]; K] + Sync),
) -> [Vec<T>; K] {
    let chunk = chunk.max(1);
    let mut data: [Vec<T>; K] = std::array::from_fn(|_| Vec::with_capacity(len));
    let fill = |i: usize, group: [&mut [MaybeUninit<T>]; K]| {
        let starts = group.each_ref().map(|c| (c.as_ptr(), c.len()));
        let done = f(i, group);
        for ((start, count), done) in starts.iter().zip(&done) {
            assert!(
                std::ptr::eq(done.as_ptr().cast::<MaybeUninit<T>>(), *start)
                    && done.len() == *count,
                "from_chunk_groups: chunk {i} was not written in place"
            );
        }
    };
    // Chunk `i` of every vector, grouped by `i` (each group taken out of its slot by the task that fills it).
    let mut slots = data
        .each_mut()
        .map(|v| v.spare_capacity_mut()[..len].chunks_mut(chunk));
    let mut groups: Vec<Option<[&mut [MaybeUninit<T>]; K]>> =
        Vec::with_capacity(len.div_ceil(chunk));
    while let Some(group) = next_group(&mut slots) {
        groups.push(Some(group));
    }
    let run = |i: usize, slot: &mut Option<[&mut [MaybeUninit<T>]; K]>| {
        if let Some(group) = slot.take() {
            fill(i, group);
        }
    };
    if rayon::current_num_threads() < 2 || groups.len() <= 1 {
        groups.iter_mut().enumerate().for_each(|(i, g)| run(i, g));
    } else {
        for_each_chunk(&mut groups, 1, &|i, g| run(i, &mut g[0]));
    }
    // SAFETY: the loops above pass every group, and with it every chunk of the first `len` slots of
    // every vector, to `fill` (a panic in any of them propagates before this line), and for each chunk
    // `f` returned a `&mut [T]` of the same address and length, borrowed from the chunk for as long as
    // `f` held it: safe code can only make such a slice of initialised values, and could not write the
    // chunk again after making it.
    for v in &mut data {
        unsafe { v.set_len(len) };
    }
    data
}

/// The next chunk of each of `K` chunk iterators of equal lengths, or `None` when they are done.
fn next_group<'a, T, const K: usize>(
    slots: &mut [std::slice::ChunksMut<'a, MaybeUninit<T>>; K],
) -> Option<[&'a mut [MaybeUninit<T>]; K]> {
    let mut group: [Option<&'a mut [MaybeUninit<T>]>; K] = std::array::from_fn(|_| None);
    for (g, s) in group.iter_mut().zip(slots.iter_mut()) {
        *g = Some(s.next()?);
    }
    Some(group.map(|g| g.unwrap_or_default()))
}

/// One round of a token: unless the operation is done, one look for pending work (run here if found,
/// else a short pause), then the token goes back to the queue of the thread that ran it.
///
/// A worker with nothing to do runs the tokens in its own queue and so never reaches rayon's sleep; a
/// thread waiting inside a fork-join for the other half of its work finds a token too (in its queue or
/// by stealing) and keeps checking its own latch between rounds instead of sleeping. The look for work
/// comes before the token is queued again, so that a token never hides the real jobs of the same queue
/// from its own thread (rayon takes a thread's own jobs last in, first out).
fn token(done: Arc<AtomicBool>) {
    if done.load(Ordering::Acquire) {
        return;
    }
    if rayon::yield_now() != Some(rayon::Yield::Executed) {
        for _ in 0..PAUSES_PER_ROUND {
            std::hint::spin_loop();
        }
    }
    rayon::spawn(move || token(done));
}

/// Runs `op` with the threads of the current rayon pool waiting actively for its parallel sections
/// (see the [module documentation](self)); returns what `op` returns.
///
/// `op` runs on the calling thread if it is a worker of a rayon pool, else on a worker of the global pool
/// (the caller waits); one token per thread of the pool circulates between the pool's queues until `op`
/// returns or unwinds, and each token ends at its next round after that. With a pool of one thread,
/// inside another `active_wait` on the same thread, or with [`set_active_wait`]`(false)`, this is
/// `op()` on the calling thread.
pub fn active_wait<R: Send>(op: impl FnOnce() -> R + Send) -> R {
    let threads = rayon::current_num_threads();
    if threads < 2 || !active_wait_enabled() || INSIDE.with(Cell::get) {
        return op();
    }
    if rayon::current_thread_index().is_none() {
        // Called from outside the pool (a program's main thread, the Python front end): the whole
        // operation moves to a worker of the global pool, so that its forks are taken from that
        // worker's queue instead of each being injected while the caller sleeps, and the caller does
        // not compete for a core with the workers kept awake.
        return rayon::scope(|_| active_wait(op));
    }
    let done = Arc::new(AtomicBool::new(false));
    for _ in 0..threads {
        let done = Arc::clone(&done);
        rayon::spawn(move || token(done));
    }
    let _inside = Inside::enter();
    let _done = SetOnDrop(&done);
    op()
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::panic)]
mod tests {
    use super::*;

    fn pool(threads: usize) -> rayon::ThreadPool {
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap()
    }

    /// A workload of many short parallel sections, as in the stages the module is for.
    fn sections() -> u64 {
        (0..200u64)
            .map(|k| {
                (0..4096u64)
                    .into_par_iter()
                    .map(|i| i.wrapping_mul(k ^ 0x9e37_79b9))
                    .sum::<u64>()
            })
            .fold(0, u64::wrapping_add)
    }

    #[test]
    fn same_result_on_every_pool_and_setting() {
        let want = sections();
        // From a thread outside any pool (the operation moves to the global pool).
        assert_eq!(active_wait(sections), want, "outside a pool");
        for threads in [1, 2, 3] {
            let p = pool(threads);
            assert_eq!(
                p.install(|| active_wait(sections)),
                want,
                "{threads} threads"
            );
            // Nested: the inner call runs directly.
            assert_eq!(
                p.install(|| active_wait(|| active_wait(sections))),
                want,
                "{threads} threads, nested"
            );
            // From inside a parallel section (possibly on a worker that spins for the outer call).
            let inner: Vec<u64> = p.install(|| {
                active_wait(|| {
                    (0..4)
                        .into_par_iter()
                        .map(|_| active_wait(sections))
                        .collect()
                })
            });
            assert!(inner.iter().all(|&x| x == want), "{threads} threads, inner");
        }
    }

    /// The fork-join helpers against their serial definitions, on pools of 1 to 3 threads, inside and
    /// outside an active region.
    #[test]
    fn helpers_match_serial() {
        let fill = |i: usize, c: &mut [u64]| {
            for (j, x) in c.iter_mut().enumerate() {
                *x = (i * 1000 + j) as u64;
            }
        };
        let mut want = vec![0u64; 1000];
        for (i, c) in want.chunks_mut(64).enumerate() {
            fill(i, c);
        }
        // `fill` into uninitialised memory, the chunk returned as written (`from_chunks`).
        fn written(i: usize, c: &mut [MaybeUninit<u64>]) -> &mut [u64] {
            rnsfhe_math::simd::write_uninit(c, (0..).map(|j| (i * 1000 + j) as u64))
        }
        let items: Vec<u64> = (0..37).collect();
        let squares: Vec<u64> = items.iter().map(|x| x * x).collect();
        for threads in [1, 2, 3] {
            let p = pool(threads);
            for region in [false, true] {
                let run =
                    |f: &(dyn Fn() + Sync)| p.install(|| if region { active_wait(f) } else { f() });
                run(&|| {
                    let mut got = vec![0u64; 1000];
                    for_each_chunk(&mut got, 64, &fill);
                    assert_eq!(got, want, "{threads} threads, region {region}");

                    let mut got = vec![0u64; 1000];
                    let r = try_for_each_chunk(&mut got, 64, &|i, c| {
                        if i == 5 {
                            return Err(i);
                        }
                        fill(i, c);
                        Ok(())
                    });
                    assert_eq!(r, Err(5));

                    let (mut a, mut b) = (vec![0u64; 1000], vec![0u64; 1000]);
                    try_for_each_chunk_pair(&mut a, &mut b, 64, &|i, x, y| -> Result<(), ()> {
                        fill(i, x);
                        fill(i, y);
                        Ok(())
                    })
                    .unwrap();
                    assert_eq!((&a, &b), (&want, &want));

                    assert_eq!(map(&items, &|x| x * x), squares);
                    for len in [10, ZEROED_PARALLEL_MIN_WORDS + 3] {
                        assert_eq!(zeroed::<u64>(len), vec![0u64; len]);
                        assert_eq!(zeroed::<i64>(len), vec![0i64; len]);
                    }
                    assert_eq!(join(|| 1 + 1, || "b"), (2, "b"));

                    assert_eq!(from_chunks(1000, 64, &written), want);
                    let groups = from_chunk_groups(1000, 64, &|i, [a, b, c]| {
                        [written(i, a), written(i, b), written(i, c)]
                    });
                    assert_eq!(groups, [&want, &want, &want].map(|w| w.clone()));
                    assert!(from_chunks(0, 64, &written).is_empty());
                });
            }
        }
    }

    /// A chunk function that returns other memory than its chunk (here a shorter slice of it) is
    /// refused: the vectors would otherwise hold unwritten words.
    #[test]
    #[should_panic(expected = "was not written in place")]
    fn from_chunk_groups_refuses_a_chunk_not_written() {
        pool(2).install(|| {
            from_chunk_groups(256, 64, &|_, [a, b]| {
                let a = rnsfhe_math::simd::write_uninit(a, std::iter::repeat(1));
                let b = rnsfhe_math::simd::write_uninit(b, std::iter::repeat(2));
                [a, &mut b[1..]]
            })
        });
    }

    #[test]
    fn switched_off_runs_directly() {
        let p = pool(2);
        let want = sections();
        set_active_wait(false);
        let got = p.install(|| active_wait(sections));
        set_active_wait(true);
        assert_eq!(got, want);
        assert!(active_wait_enabled());
    }

    #[test]
    fn a_panic_stops_the_tokens() {
        let p = pool(2);
        let r =
            p.install(|| std::panic::catch_unwind(|| active_wait(|| -> u64 { panic!("stop") })));
        assert!(r.is_err());
        // The pool still works afterwards (the tokens ended).
        assert_eq!(p.install(|| active_wait(sections)), sections());
    }
}
