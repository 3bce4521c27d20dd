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
//! [`active_wait`] runs an operation with the other workers of the current pool kept awake: each runs a
//! job that takes the pool's pending work with [`rayon::yield_now`] and otherwise spins (a CPU pause per
//! round), until the operation returns. This is the "active" wait policy of OpenMP runtimes: it trades
//! the idle time of the other cores during the operation's serial steps for the latency of every fork,
//! and it changes no result (the same jobs run, on the same threads, in an order rayon may choose
//! anyway). It does nothing on a pool of one thread, inside another [`active_wait`] on the same thread or
//! on a spinning worker, or when switched off process-wide with [`set_active_wait`] (for a machine shared
//! with other work, where the spinning would take CPU time from it).

use std::cell::Cell;
use std::sync::atomic::{AtomicBool, Ordering};

/// Whether [`active_wait`] keeps the workers awake (process-wide; see [`set_active_wait`]).
static ENABLED: AtomicBool = AtomicBool::new(true);

/// CPU pause instructions between two looks for work of a spinning worker: about a microsecond, so that
/// its looks do not contend with the owner's pushes and pops on the same work queue.
const PAUSES_PER_ROUND: usize = 32;

thread_local! {
    /// Set on a thread while it runs an [`active_wait`] operation or spins for one: a nested call
    /// runs its operation directly (the pool's workers already wait actively).
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

/// Sets a flag when dropped, also when the operation unwinds (the spinners then stop and the scope
/// can end).
struct SetOnDrop<'a>(&'a AtomicBool);

impl Drop for SetOnDrop<'_> {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Release);
    }
}

/// Marks the current thread as inside an active region until dropped.
struct Inside;

impl Inside {
    fn enter() -> Self {
        INSIDE.with(|c| c.set(true));
        Inside
    }
}

impl Drop for Inside {
    fn drop(&mut self) {
        INSIDE.with(|c| c.set(false));
    }
}

/// Runs `op` with the other workers of the current rayon pool waiting actively for its parallel
/// sections (see the [module documentation](self)); returns what `op` returns.
///
/// `op` runs on the calling thread. Outside a pool of at least two threads, inside another
/// `active_wait`, or with [`set_active_wait`]`(false)`, this is `op()`.
pub fn active_wait<R: Send>(op: impl FnOnce() -> R + Send) -> R {
    let threads = rayon::current_num_threads();
    if threads < 2 || !active_wait_enabled() || INSIDE.with(Cell::get) {
        return op();
    }
    let done = AtomicBool::new(false);
    // `None` when called from outside the pool: `rayon::scope` then runs on a worker, whose index is
    // read inside.
    rayon::scope(|s| {
        let owner = rayon::current_thread_index();
        let done = &done;
        for _ in 1..threads {
            s.spawn(move |_| {
                // The owner may take a spinner back from its own queue while it waits inside `op`;
                // spinning there would wait for `op` on `op`'s own thread.
                if rayon::current_thread_index() == owner || INSIDE.with(Cell::get) {
                    return;
                }
                let _inside = Inside::enter();
                while !done.load(Ordering::Acquire) {
                    if rayon::yield_now() != Some(rayon::Yield::Executed) {
                        for _ in 0..PAUSES_PER_ROUND {
                            std::hint::spin_loop();
                        }
                    }
                }
            });
        }
        let _inside = Inside::enter();
        let _done = SetOnDrop(done);
        op()
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::panic)]
mod tests {
    use super::*;
    use rayon::prelude::*;

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
    fn a_panic_stops_the_spinners() {
        let p = pool(2);
        let r =
            p.install(|| std::panic::catch_unwind(|| active_wait(|| -> u64 { panic!("stop") })));
        assert!(r.is_err());
        // The pool still works afterwards (the spinner ended).
        assert_eq!(p.install(|| active_wait(sections)), sections());
    }
}
