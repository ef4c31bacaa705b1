//! The clock and the cancel flag that every strategy polls.
//!
//! The core has no clock of its own (it is `no_std`): the time comes in
//! through a function returning monotonic nanoseconds. With the `std`
//! feature that function defaults to one built on `std::time::Instant`.

use core::sync::atomic::{AtomicBool, Ordering};
use core::time::Duration;

/// A monotonic clock in nanoseconds from an arbitrary origin.
pub type Clock = fn() -> u64;

/// Why a strategy stopped before finishing.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Stop {
    /// The timeout passed.
    TimedOut,
    /// The cancel flag was set.
    Cancelled,
}

impl core::fmt::Display for Stop {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(match self {
            Stop::TimedOut => "timed out",
            Stop::Cancelled => "cancelled",
        })
    }
}

/// A point in time after which work stops, and a flag that stops it early.
#[derive(Clone, Copy)]
pub struct Deadline<'a> {
    clock: Option<Clock>,
    start_ns: u64,
    end_ns: u64,
    cancel: Option<&'a AtomicBool>,
    /// A second flag, for a planner that runs strategies side by side and
    /// stops the others when one is done.
    halt: Option<&'a AtomicBool>,
}

impl<'a> Deadline<'a> {
    /// A deadline `timeout` from now on `clock` (no timeout if either is
    /// `None`), also stopped by `cancel`.
    pub fn new(
        clock: Option<Clock>,
        timeout: Option<Duration>,
        cancel: Option<&'a AtomicBool>,
    ) -> Self {
        let start_ns = clock.map_or(0, |now| now());
        let end_ns = match (clock, timeout) {
            (Some(_), Some(t)) => {
                let t = u64::try_from(t.as_nanos()).unwrap_or(u64::MAX);
                start_ns.saturating_add(t)
            }
            _ => u64::MAX,
        };
        Deadline {
            clock,
            start_ns,
            end_ns,
            cancel,
            halt: None,
        }
    }

    /// A deadline that never passes and cannot be cancelled.
    pub fn none() -> Self {
        Deadline::new(None, None, None)
    }

    /// A deadline `timeout` from now on the standard clock.
    #[cfg(feature = "std")]
    pub fn after(timeout: Duration) -> Self {
        Deadline::new(Some(std_clock), Some(timeout), None)
    }

    /// The same deadline, also stopped by `cancel`.
    pub fn with_cancel(mut self, cancel: Option<&'a AtomicBool>) -> Self {
        self.cancel = cancel;
        self
    }

    /// The same deadline, also stopped (as cancelled) by `halt`.
    pub fn with_halt(mut self, halt: &'a AtomicBool) -> Self {
        self.halt = Some(halt);
        self
    }

    /// A deadline that ends at the earlier of this one and `timeout` from
    /// now, with the same cancel flag.
    pub fn sooner(&self, timeout: Duration) -> Self {
        let mut d = *self;
        if let Some(now) = self.clock {
            let t = u64::try_from(timeout.as_nanos()).unwrap_or(u64::MAX);
            d.end_ns = d.end_ns.min(now().saturating_add(t));
        }
        d
    }

    /// `Err` once the deadline has passed or the flag is set. (Polled
    /// every few thousand units of work, so not worth inlining.)
    #[inline(never)]
    pub fn check(&self) -> Result<(), Stop> {
        let set = |flag: Option<&AtomicBool>| flag.is_some_and(|f| f.load(Ordering::Relaxed));
        if set(self.cancel) || set(self.halt) {
            return Err(Stop::Cancelled);
        }
        if self.end_ns != u64::MAX {
            if let Some(now) = self.clock {
                if now() >= self.end_ns {
                    return Err(Stop::TimedOut);
                }
            }
        }
        Ok(())
    }

    /// Time since the deadline was made (zero without a clock).
    pub fn elapsed(&self) -> Duration {
        match self.clock {
            Some(now) => Duration::from_nanos(now().saturating_sub(self.start_ns)),
            None => Duration::ZERO,
        }
    }

    /// Whether the caller's own cancel flag is set (not a `halt`).
    pub fn cancelled(&self) -> bool {
        self.cancel.is_some_and(|f| f.load(Ordering::Relaxed))
    }

    /// Whether the timeout has passed.
    pub fn expired(&self) -> bool {
        self.end_ns != u64::MAX && self.clock.is_some_and(|now| now() >= self.end_ns)
    }

    /// Time left before the deadline (`None` if there is no timeout).
    pub fn remaining(&self) -> Option<Duration> {
        if self.end_ns == u64::MAX {
            return None;
        }
        let now = self.clock.map_or(0, |now| now());
        Some(Duration::from_nanos(self.end_ns.saturating_sub(now)))
    }
}

/// Nanoseconds since the first call, on `std::time::Instant`.
#[cfg(feature = "std")]
pub fn std_clock() -> u64 {
    use std::sync::OnceLock;
    use std::time::Instant;
    static ORIGIN: OnceLock<Instant> = OnceLock::new();
    let origin = ORIGIN.get_or_init(Instant::now);
    u64::try_from(origin.elapsed().as_nanos()).unwrap_or(u64::MAX)
}

/// Drops `value`, which holds about `bytes` of heap. With `std`, a large
/// value is dropped on a short-lived thread, so that returning at a
/// deadline does not wait for the memory to be handed back.
pub(crate) fn discard<T: Send + 'static>(value: T, bytes: usize) {
    #[cfg(feature = "std")]
    if bytes >= 8 << 20 {
        // If the thread cannot start, the closure and the value drop here.
        let _ = std::thread::Builder::new()
            .name("minimalloc-free".into())
            .spawn(move || drop(value));
        return;
    }
    let _ = bytes;
    drop(value);
}

/// A countdown that makes polling the clock cheap: strategies report the
/// work they do, and the clock is read only every `interval` units.
pub(crate) struct Poll<'a> {
    deadline: &'a Deadline<'a>,
    left: u64,
    interval: u64,
    /// Work recorded so far: a measure of cost that, unlike the clock,
    /// is the same on every run (the scheduler shares its rounds by it).
    used: u64,
}

impl<'a> Poll<'a> {
    /// Reads the clock every `interval` units of work.
    pub(crate) fn new(deadline: &'a Deadline<'a>, interval: u64) -> Self {
        Poll {
            deadline,
            left: interval,
            interval,
            used: 0,
        }
    }

    /// The deadline it polls.
    #[cfg(feature = "heuristics")]
    pub(crate) fn deadline(&self) -> &'a Deadline<'a> {
        self.deadline
    }

    /// Work recorded so far.
    #[cfg(feature = "heuristics")]
    pub(crate) fn used(&self) -> u64 {
        self.used
    }

    /// Records `work` units; checks the deadline when the countdown ends.
    #[inline]
    pub(crate) fn tick(&mut self, work: u64) -> Result<(), Stop> {
        self.used = self.used.saturating_add(work);
        if self.left > work {
            self.left -= work;
            return Ok(());
        }
        self.left = self.interval;
        self.deadline.check()
    }

    /// Checks the deadline now.
    pub(crate) fn now(&mut self) -> Result<(), Stop> {
        self.left = self.interval;
        self.deadline.check()
    }
}

/// Sorts `v` in runs and merges, polling between steps, so that sorting
/// millions of items stops within one poll interval of the deadline.
pub(crate) fn sort_polled<T: Ord + Copy>(v: &mut [T], poll: &mut Poll<'_>) -> Result<(), Stop> {
    const RUN: usize = 1 << 14;
    const STEP: usize = 1 << 12;
    let n = v.len();
    for chunk in v.chunks_mut(RUN) {
        crate::base::sort::sort(chunk);
        poll.tick(16 * chunk.len() as u64)?;
    }
    if n <= RUN {
        return Ok(());
    }
    let mut other = v.to_vec();
    let (mut src, mut dst) = (&mut v[..], &mut other[..]);
    let mut width = RUN;
    let mut in_other = false;
    while width < n {
        let mut lo = 0;
        while lo < n {
            let mid = (lo + width).min(n);
            let hi = (lo + 2 * width).min(n);
            let (mut i, mut j, mut k) = (lo, mid, lo);
            while k < hi {
                // Merge up to STEP items, then poll.
                let stop = (k + STEP).min(hi);
                while k < stop {
                    if j >= hi || (i < mid && src[i] <= src[j]) {
                        dst[k] = src[i];
                        i += 1;
                    } else {
                        dst[k] = src[j];
                        j += 1;
                    }
                    k += 1;
                }
                poll.tick(2 * STEP as u64)?;
            }
            lo = hi;
        }
        core::mem::swap(&mut src, &mut dst);
        in_other = !in_other;
        width *= 2;
    }
    if in_other {
        v.copy_from_slice(&other);
    }
    Ok(())
}

/// Sorts `v` stably by `key`, least significant byte first, polling
/// every `STEP` items. A pass over a byte that every key shares moves
/// nothing and is skipped, so keys that use few bits (time slots, sizes)
/// take few passes: at a million items this is several times faster than
/// comparing, which is what makes the first placement of a million
/// buffers cheap. Equal keys keep their order, so an order by several
/// keys is a sort by each, least important first.
#[cfg(feature = "heuristics")]
pub(crate) fn radix_sort_polled<T: Copy>(
    v: &mut alloc::vec::Vec<T>,
    key: impl Fn(&T) -> u64,
    poll: &mut Poll<'_>,
) -> Result<(), Stop> {
    const STEP: usize = 1 << 14;
    let n = v.len();
    let mut counts = [[0usize; 256]; 8];
    // Items already in order (as inputs written in program order are, by
    // start) need no pass at all.
    let (mut sorted, mut last) = (true, 0);
    for chunk in v.chunks(STEP) {
        for x in chunk {
            let k = key(x);
            sorted &= k >= last;
            last = k;
            for (byte, count) in counts.iter_mut().enumerate() {
                count[((k >> (8 * byte)) & 0xff) as usize] += 1;
            }
        }
        poll.tick(chunk.len() as u64)?;
    }
    if sorted {
        return Ok(());
    }
    let mut other: alloc::vec::Vec<T> = alloc::vec::Vec::new();
    for (byte, count) in counts.iter().enumerate() {
        if count.contains(&n) {
            continue;
        }
        let mut at = [0usize; 256];
        let mut sum = 0;
        for (a, &c) in at.iter_mut().zip(count) {
            *a = sum;
            sum += c;
        }
        if other.len() != n {
            other = v.clone();
        }
        for chunk in v.chunks(STEP) {
            for x in chunk {
                let d = ((key(x) >> (8 * byte)) & 0xff) as usize;
                other[at[d]] = *x;
                at[d] += 1;
            }
            poll.tick(chunk.len() as u64)?;
        }
        core::mem::swap(v, &mut other);
    }
    Ok(())
}

/// Sorts `v` in order, by a radix sort on `lead` (which must order as
/// `v`'s first field does), then each run of equal `lead` by the rest:
/// for orders whose first key is a time, shared by few items.
#[cfg(feature = "heuristics")]
pub(crate) fn sort_by_lead_polled<T: Ord + Copy>(
    v: &mut alloc::vec::Vec<T>,
    lead: impl Fn(&T) -> u64,
    poll: &mut Poll<'_>,
) -> Result<(), Stop> {
    radix_sort_polled(v, &lead, poll)?;
    for run in v.chunk_by_mut(|a, b| lead(a) == lead(b)) {
        crate::base::sort::sort(run);
    }
    poll.tick(v.len() as u64)
}

/// `len` zeros, written a chunk at a time with a poll between chunks. A
/// large `vec![0; len]` is zeroed lazily by the system, each page on its
/// first write: a loop that fills it at random then pays those faults in
/// bursts, and one poll interval of it took 10-14 ms (the sweep's overlap
/// lists, 95 MB for 10,000 buffers), however its work was counted.
pub(crate) fn zeros_polled<T: Copy + Default + Send + 'static>(
    len: usize,
    poll: &mut Poll<'_>,
) -> Result<alloc::vec::Vec<T>, Stop> {
    const CHUNK: usize = 1 << 16;
    let mut v = alloc::vec::Vec::with_capacity(len);
    while v.len() < len {
        let step = CHUNK.min(len - v.len());
        v.resize(v.len() + step, T::default());
        if let Err(stop) = poll.tick(step as u64) {
            // What was written is handed back off the caller's path.
            let bytes = v.len() * core::mem::size_of::<T>();
            discard(v, bytes);
            return Err(stop);
        }
    }
    Ok(v)
}

/// A bound on the height computed once the first placements exist: dear
/// enough (the conflict clique of a kernel, a few milliseconds) that they
/// should not wait for it. It is given the deadline and the best height
/// so far, which it cannot exceed. (Defined here, below both the plan and
/// its scheduler, so that both name one type.)
pub(crate) type LateBound<'a> = dyn Fn(&Deadline<'_>, i64) -> i64 + Sync + 'a;

#[cfg(test)]
mod tests {
    use super::*;

    /// Zeros of any length, and a stop midway when the deadline has
    /// passed.
    #[test]
    fn zeros_polled_zeroes_and_stops() {
        let d = Deadline::none();
        for len in [0usize, 1, (1 << 16) - 1, 1 << 16, (1 << 16) + 1, 300_001] {
            let mut poll = Poll::new(&d, 1 << 16);
            let v: alloc::vec::Vec<u32> = zeros_polled(len, &mut poll).unwrap();
            assert!(v.len() == len && v.iter().all(|&x| x == 0), "len = {len}");
        }
        let past = Deadline::after(core::time::Duration::ZERO);
        let mut poll = Poll::new(&past, 1 << 16);
        assert!(zeros_polled::<u32>(1 << 20, &mut poll).is_err());
    }

    /// Stable by key, whatever bytes the keys use: small keys (passes
    /// skipped), full-width ones, and many equal keys.
    #[test]
    #[cfg(feature = "heuristics")]
    fn radix_sort_polled_sorts_stably() {
        let d = Deadline::none();
        let mut x = 99u64;
        for (n, mask) in [
            (0usize, 0u64),
            (1, 7),
            (1000, 0),
            (5000, 0xff),
            (70_000, 0x3_ffff),
            (70_000, u64::MAX),
        ] {
            let mut v: alloc::vec::Vec<(u64, u32)> = (0..n as u32)
                .map(|i| {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    (x & mask, i)
                })
                .collect();
            let mut want = v.clone();
            want.sort_by_key(|e| e.0);
            let mut poll = Poll::new(&d, 1 << 16);
            radix_sort_polled(&mut v, |e| e.0, &mut poll).unwrap();
            assert_eq!(v, want, "n = {n}, mask {mask:x}");
        }
        // In order already (ties included), and in order but for the last.
        for last in [None, Some((0u64, 3000u32))] {
            let mut v: alloc::vec::Vec<(u64, u32)> =
                (0..3000u32).map(|i| (u64::from(i / 3), i)).collect();
            v.extend(last);
            let mut want = v.clone();
            want.sort_by_key(|e| e.0);
            let mut poll = Poll::new(&d, 1 << 16);
            radix_sort_polled(&mut v, |e| e.0, &mut poll).unwrap();
            assert_eq!(v, want, "last {last:?}");
        }
    }

    #[test]
    fn sort_polled_sorts() {
        let d = Deadline::none();
        for n in [0usize, 1, 5, 1 << 14, (1 << 14) + 1, 100_000, 300_001] {
            let mut x = 12345u64;
            let mut v: alloc::vec::Vec<u64> = (0..n)
                .map(|_| {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    x % 1000
                })
                .collect();
            let mut want = v.clone();
            want.sort();
            let mut poll = Poll::new(&d, 1 << 16);
            sort_polled(&mut v, &mut poll).unwrap();
            assert_eq!(v, want, "n = {n}");
        }
    }
}
