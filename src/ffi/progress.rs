//! Progress through a C callback with a user pointer, which may also stop
//! the solve (as solver libraries that compilers embed do): the callback's
//! type, and the calls of one solve. Options carry the callback
//! (`minimalloc_options_set_progress`, in the options' file).

use core::ffi::{c_int, c_void};

/// A progress callback: called with the best height so far (-1: none
/// yet), the proven lower bound (0 until known) and the microseconds since
/// the solve began. Returning nonzero stops this solve (not others that
/// share the options), as a cancel token would: a minimisation then
/// returns its best placement, a fit `MINIMALLOC_STATUS_CANCELLED`.
pub type minimalloc_progress_fn = Option<
    unsafe extern "C" fn(
        user: *mut c_void,
        height: i64,
        lower_bound: i64,
        elapsed_us: u64,
    ) -> c_int,
>;

/// A callback and the pointer it is given.
#[cfg(all(feature = "std", feature = "heuristics"))]
#[derive(Clone, Copy)]
pub(crate) struct Callback {
    f: unsafe extern "C" fn(*mut c_void, i64, i64, u64) -> c_int,
    user: *mut c_void,
}

// Safety: the caller of minimalloc_options_set_progress promises that the
// callback may be called from any thread, one call at a time (documented
// there); calls are serialised here.
#[cfg(all(feature = "std", feature = "heuristics"))]
unsafe impl Send for Callback {}
#[cfg(all(feature = "std", feature = "heuristics"))]
unsafe impl Sync for Callback {}

#[cfg(all(feature = "std", feature = "heuristics"))]
impl Callback {
    /// `f`, to be called with `user`.
    pub(crate) fn new(
        f: unsafe extern "C" fn(*mut c_void, i64, i64, u64) -> c_int,
        user: *mut c_void,
    ) -> Callback {
        Callback { f, user }
    }
}

#[cfg(all(feature = "std", feature = "heuristics"))]
pub(crate) use reporter::Reporter;

#[cfg(all(feature = "std", feature = "heuristics"))]
mod reporter {
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::{Arc, Mutex};
    use std::time::{Duration, Instant};

    use super::Callback;
    use crate::plan::{Progress, Report};

    /// At most one call per this long, and at least one while the solve runs.
    const EVERY: Duration = Duration::from_millis(100);

    /// The calls of one solve.
    pub(crate) struct Reporter {
        callback: Callback,
        /// This solve's own stop flag.
        stop: Arc<AtomicBool>,
        /// The options' cancel token, watched by the heartbeat.
        token: Option<Arc<AtomicBool>>,
        state: Mutex<State>,
        start: Instant,
        done: AtomicBool,
        /// The callback asked to stop.
        stopped: AtomicBool,
    }

    struct State {
        height: i64,
        lower_bound: i64,
        last_call: Option<Instant>,
        /// Figures changed since the last call.
        fresh: bool,
    }

    impl Reporter {
        pub(crate) fn new(
            callback: Callback,
            stop: Arc<AtomicBool>,
            token: Option<Arc<AtomicBool>>,
        ) -> Arc<Reporter> {
            Arc::new(Reporter {
                callback,
                stop,
                token,
                state: Mutex::new(State {
                    height: -1,
                    lower_bound: 0,
                    last_call: None,
                    fresh: false,
                }),
                start: Instant::now(),
                done: AtomicBool::new(false),
                stopped: AtomicBool::new(false),
            })
        }

        /// The plan's progress callback: records, and calls if due.
        pub(crate) fn progress(self: &Arc<Self>) -> Progress {
            let me = self.clone();
            Progress(Arc::new(move |r: &Report| {
                let mut s = me.state.lock().unwrap_or_else(|e| e.into_inner());
                s.height = r.height.unwrap_or(-1);
                s.lower_bound = r.lower_bound;
                s.fresh = true;
                if s.last_call.is_none_or(|t| t.elapsed() >= EVERY) {
                    me.call(&mut s);
                }
            }))
        }

        /// Calls the callback (the state's lock held: one call at a time).
        fn call(&self, s: &mut State) {
            s.last_call = Some(Instant::now());
            s.fresh = false;
            let us = u64::try_from(self.start.elapsed().as_micros()).unwrap_or(u64::MAX);
            // Safety: the callback and its pointer, as the caller set them.
            let stop =
                unsafe { (self.callback.f)(self.callback.user, s.height, s.lower_bound, us) };
            if stop != 0 {
                self.stopped.store(true, Ordering::Relaxed);
                self.stop.store(true, Ordering::Relaxed);
            }
        }

        /// Calls every 100 ms while nothing else does, and passes a
        /// request of the cancel token on to this solve, until
        /// [`Self::finish`].
        pub(crate) fn heartbeat(&self) {
            while !self.done.load(Ordering::Relaxed) {
                if self
                    .token
                    .as_ref()
                    .is_some_and(|t| t.load(Ordering::Relaxed))
                {
                    self.stop.store(true, Ordering::Relaxed);
                }
                std::thread::sleep(Duration::from_millis(10));
                let mut s = self.state.lock().unwrap_or_else(|e| e.into_inner());
                if !self.done.load(Ordering::Relaxed)
                    && s.last_call.is_none_or(|t| t.elapsed() >= EVERY)
                {
                    self.call(&mut s);
                }
            }
        }

        /// The solve ended in a panic: the heartbeat stops, and the
        /// callback is not called again.
        pub(crate) fn abandon(&self) {
            let _s = self.state.lock().unwrap_or_else(|e| e.into_inner());
            self.done.store(true, Ordering::Relaxed);
        }

        /// The solve is over: one last call with its figures if they are
        /// news, unless the callback asked to stop.
        pub(crate) fn finish(&self, height: Option<i64>, lower_bound: i64) {
            let mut s = self.state.lock().unwrap_or_else(|e| e.into_inner());
            self.done.store(true, Ordering::Relaxed);
            let height = height.unwrap_or(-1);
            if s.fresh || s.height != height || s.lower_bound != lower_bound {
                s.height = height;
                s.lower_bound = lower_bound;
                if !self.stopped.load(Ordering::Relaxed) {
                    self.call(&mut s);
                }
            }
        }
    }
}
