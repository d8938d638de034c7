//! A counting semaphore for one thread (wasm has no other kind of
//! waiting): caps the host calls in flight, the model's and the embedder's,
//! and gives each its deadline ([`Semaphore::call_within`]).

use std::cell::{Cell, RefCell};
use std::collections::VecDeque;
use std::future::poll_fn;
use std::task::{Poll, Waker};

pub struct Semaphore {
    free: Cell<u32>,
    waiters: RefCell<VecDeque<Waker>>,
}

pub struct Permit<'a>(&'a Semaphore);

impl Semaphore {
    pub fn new(permits: u32) -> Self {
        Semaphore { free: Cell::new(permits), waiters: RefCell::default() }
    }

    /// The call `start` makes once a permit is free (a hook is called
    /// only then), abandoned once `timeout_ms` have passed on `clock`
    /// (`None`): a hook that hangs holds its permit only until then. The
    /// call is polled first: an answer that is ready wins over a timer that
    /// is ready too.
    pub async fn call_within<F: std::future::Future>(
        &self,
        clock: &dyn crate::ports::Clock,
        timeout_ms: u32,
        start: impl FnOnce() -> F,
    ) -> Option<F::Output> {
        let _permit = self.acquire().await;
        let call = std::pin::pin!(start());
        match futures::future::select(call, clock.sleep(timeout_ms)).await {
            futures::future::Either::Left((out, _)) => Some(out),
            futures::future::Either::Right(((), _abandoned)) => None,
        }
    }

    pub async fn acquire(&self) -> Permit<'_> {
        poll_fn(|cx| {
            if self.free.get() > 0 {
                self.free.set(self.free.get() - 1);
                Poll::Ready(())
            } else {
                let mut waiters = self.waiters.borrow_mut();
                if !waiters.iter().any(|w| w.will_wake(cx.waker())) {
                    waiters.push_back(cx.waker().clone());
                }
                Poll::Pending
            }
        })
        .await;
        Permit(self)
    }
}

impl Drop for Permit<'_> {
    /// Wakes every waiter, not the first: a waiter may have been dropped
    /// (its call abandoned), and a wake handed only to it would be lost,
    /// leaving a free permit and calls waiting forever. The woken re-check;
    /// all but one wait again (the waiters are few: calls of one memory).
    fn drop(&mut self) {
        self.0.free.set(self.0.free.get() + 1);
        for w in self.0.waiters.take() {
            w.wake();
        }
    }
}
