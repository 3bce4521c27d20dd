//! Scratch buffers of key switching (extended digits, accumulators, coefficient copies) and of the gadget
//! product's per-limb digit rows, kept between calls in one pool for the process: allocating them afresh costs a page fault per page (with
//! transparent huge pages, the kernel zeroing 2 MiB at a time) each time the allocator has returned the
//! memory to the system, more than the arithmetic on them. The pool is shared by all threads because a
//! key switch on several threads takes its digit buffers on whichever thread runs that digit and gives
//! them back on the calling thread: per-thread pools left the pool's other threads with nothing to
//! reuse, so every key switch faulted in fresh pages there, serially, while the calling thread waited.
//! At most [`POOL_BUFFERS`] buffers are kept; their contents are not secret (ciphertext material only).

use std::sync::{Mutex, MutexGuard};

/// Buffers kept: the buffers of two concurrent key switches of three digits (the digits, the two
/// accumulators and the coefficient copy of each).
pub(crate) const POOL_BUFFERS: usize = 16;

static POOL: Mutex<Vec<Vec<u64>>> = Mutex::new(Vec::new());

/// The pool (its contents stay valid if a holder panicked: buffers only).
fn pool() -> MutexGuard<'static, Vec<Vec<u64>>> {
    POOL.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// The smallest pooled buffer of capacity at least `len`, if any.
fn pop(len: usize) -> Option<Vec<u64>> {
    let mut p = pool();
    let i = p
        .iter()
        .enumerate()
        .filter(|(_, b)| b.capacity() >= len)
        .min_by_key(|(_, b)| b.capacity())?
        .0;
    Some(p.swap_remove(i))
}

/// A buffer of `len` words with unspecified (earlier ciphertext) contents, for outputs that are
/// overwritten entirely (no zeroing). An empty request takes nothing from the pool.
pub(crate) fn take_dirty(len: usize) -> Vec<u64> {
    if len == 0 {
        return Vec::new();
    }
    match pop(len) {
        Some(mut b) => {
            b.truncate(len);
            b.resize(len, 0);
            b
        }
        None => rnsfhe_ring::parallel::zeroed(len),
    }
}

/// Returns a buffer to the pool (the smallest buffer is dropped if the pool is full; one without
/// capacity is not kept).
pub(crate) fn give(b: Vec<u64>) {
    if b.capacity() == 0 {
        return;
    }
    let mut p = pool();
    if p.len() < POOL_BUFFERS {
        p.push(b);
    } else if let Some(smallest) = p.iter_mut().min_by_key(|x| x.capacity()) {
        if smallest.capacity() < b.capacity() {
            *smallest = b;
        }
    }
}
