//! A counting semaphore for one thread (wasm has no other kind of
//! waiting): caps the host calls in flight, the model's and the embedder's;
//! each has its deadline on the clock ([`crate::ports::clock::call_within`]).

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
