//! The `Clock` port. Time is injected so that tests never sleep and time
//! decay, TTLs, ids, retry backoff and timeouts are exact under test.

use std::cell::Cell;

use crate::ports::LocalBoxFuture;
use crate::semaphore::Semaphore;

pub trait Clock {
    /// Milliseconds since the Unix epoch.
    fn now_ms(&self) -> i64;
    /// Resolves after `ms` milliseconds (retry backoff, timeouts).
    fn sleep(&self, ms: u32) -> LocalBoxFuture<'_, ()>;
}

/// The call `start` makes once a permit of `permits` is free (a hook is
/// called only then), abandoned once `timeout_ms` have passed on `clock`
/// (`None`): a hook that hangs holds its permit only until then. The
/// call is polled first: an answer that is ready wins over a timer that
/// is ready too.
pub async fn call_within<F: std::future::Future>(
    permits: &Semaphore,
    clock: &dyn Clock,
    timeout_ms: u32,
    start: impl FnOnce() -> F,
) -> Option<F::Output> {
    let _permit = permits.acquire().await;
    within(clock, timeout_ms, start()).await
}

/// `call`'s output, or `None` once `timeout_ms` have passed on `clock` (the
/// call is then dropped). The call is polled first, and the timer is set
/// only once the call is pending: an answer that is ready wins over a timer
/// that is ready too, and a call that never waits (a synchronous host's)
/// costs no timer, nor a thread sleep on a clock whose sleep blocks.
pub async fn within<F: std::future::Future>(
    clock: &dyn Clock,
    timeout_ms: u32,
    call: F,
) -> Option<F::Output> {
    let call = std::pin::pin!(call);
    let timer = std::pin::pin!(async { clock.sleep(timeout_ms).await });
    match futures::future::select(call, timer).await {
        futures::future::Either::Left((out, _)) => Some(out),
        futures::future::Either::Right(((), _abandoned)) => None,
    }
}

/// The system's clock (native builds and the WASI component; the JS
/// binding reads `Date.now()`).
#[cfg(not(all(target_arch = "wasm32", target_os = "unknown")))]
#[derive(Debug, Default, Clone, Copy)]
pub struct SystemClock;

#[cfg(not(all(target_arch = "wasm32", target_os = "unknown")))]
impl Clock for SystemClock {
    fn now_ms(&self) -> i64 {
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_millis() as i64)
    }

    /// Native builds and the component have no event loop: the calling
    /// thread sleeps.
    fn sleep(&self, ms: u32) -> LocalBoxFuture<'_, ()> {
        std::thread::sleep(std::time::Duration::from_millis(ms as u64));
        Box::pin(std::future::ready(()))
    }
}

/// A clock that moves only when told to.
#[derive(Debug, Default)]
pub struct ManualClock(Cell<i64>);

impl ManualClock {
    pub fn new(start_ms: i64) -> Self {
        ManualClock(Cell::new(start_ms))
    }

    pub fn advance(&self, ms: i64) {
        self.0.set(self.0.get() + ms);
    }

    pub fn set(&self, ms: i64) {
        self.0.set(ms);
    }
}

impl Clock for ManualClock {
    fn now_ms(&self) -> i64 {
        self.0.get()
    }

    /// Time jumps forward instead of passing: a test of backoff or a
    /// timeout takes no real time, and the clock shows how long the library
    /// waited. The sleep yields once first, so whatever it races (a call that
    /// answers after a yield) gets to finish before the time is up; a sleep
    /// that loses its race never moves the clock.
    fn sleep(&self, ms: u32) -> LocalBoxFuture<'_, ()> {
        let mut yielded = false;
        Box::pin(std::future::poll_fn(move |cx| {
            if yielded {
                self.advance(ms as i64);
                std::task::Poll::Ready(())
            } else {
                yielded = true;
                cx.waker().wake_by_ref();
                std::task::Poll::Pending
            }
        }))
    }
}

/// A clock whose sleeps end only when the test moves time past them (timers
/// as data: each sleep is a deadline, `advance` wakes those it passes). Use
/// it where a call must stay pending as long as the test wants: a held model
/// is then not timed out behind the test's back.
#[derive(Debug, Default)]
pub struct SteppedClock {
    now: Cell<i64>,
    sleepers: std::cell::RefCell<Vec<std::task::Waker>>,
}

impl SteppedClock {
    pub fn new(start_ms: i64) -> Self {
        SteppedClock { now: Cell::new(start_ms), sleepers: Default::default() }
    }

    pub fn advance(&self, ms: i64) {
        self.now.set(self.now.get() + ms);
        for waker in self.sleepers.take() {
            waker.wake();
        }
    }
}

impl Clock for SteppedClock {
    fn now_ms(&self) -> i64 {
        self.now.get()
    }

    fn sleep(&self, ms: u32) -> LocalBoxFuture<'_, ()> {
        let deadline = self.now.get() + ms as i64;
        Box::pin(std::future::poll_fn(move |cx| {
            if self.now.get() >= deadline {
                std::task::Poll::Ready(())
            } else {
                self.sleepers.borrow_mut().push(cx.waker().clone());
                std::task::Poll::Pending
            }
        }))
    }
}
