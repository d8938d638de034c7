//! The `Lock` port: mutual exclusion between instances that share a store
//! (tabs of one origin, workers, a parent agent and its sub-agents).
//!
//! What it guards is short: applying long-term writes after a fresh read
//! (dedup must compare with what another tab just stored), committing a
//! session summary (never backwards), marking messages processed. Model
//! calls never run under it: one tab's slow model must not stall another
//! tab's `remember`, or its `Memory.open`.
//!
//! Implementations: the Web Locks API in browsers (`navigator.locks`, held
//! across tabs and released when a tab dies) and [`LocalLocks`] (instances in
//! one JS realm or one native process). Lock order, everywhere: this lock
//! first, then an instance's own mutexes.

use std::any::Any;
use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;
use std::sync::Arc;

use crate::error::Result;
use crate::ports::LocalBoxFuture;

/// Held while alive; dropping it releases the lock (also when the work
/// holding it is dropped midway, e.g. an aborted call).
pub struct LockGuard(#[allow(dead_code)] Box<dyn Any>);

impl LockGuard {
    /// Wraps whatever releases the lock when dropped.
    pub fn new(release_on_drop: impl Any) -> LockGuard {
        LockGuard(Box::new(release_on_drop))
    }
}

pub trait Lock {
    /// Resolves once the lock `name` is held.
    fn acquire<'a>(&'a self, name: &'a str) -> LocalBoxFuture<'a, Result<LockGuard>>;
}

/// One lock of a `Lock` port, by name: a namespace's.
#[derive(Clone)]
pub struct NamedLock {
    locks: Rc<dyn Lock>,
    name: String,
}

impl NamedLock {
    pub fn new(locks: Rc<dyn Lock>, name: impl Into<String>) -> NamedLock {
        NamedLock { locks, name: name.into() }
    }

    pub async fn acquire(&self) -> Result<LockGuard> {
        self.locks.acquire(&self.name).await
    }
}

/// Named async locks for instances in one realm (one native process, one
/// Node or Deno isolate, one worker), granted in request order.
#[derive(Default)]
pub struct LocalLocks {
    locks: RefCell<HashMap<String, Arc<futures::lock::Mutex<()>>>>,
}

impl Lock for LocalLocks {
    fn acquire<'a>(&'a self, name: &'a str) -> LocalBoxFuture<'a, Result<LockGuard>> {
        let mutex = self.locks.borrow_mut().entry(name.to_string()).or_default().clone();
        Box::pin(async move { Ok(LockGuard::new(mutex.lock_owned().await)) })
    }
}

/// The behaviour every `Lock` must show; run against each implementation.
pub mod conformance {
    use std::cell::RefCell;
    use std::rc::Rc;

    use super::Lock;
    use crate::error::{Error, Result};

    fn check(ok: bool, what: &str) -> Result<()> {
        if ok {
            Ok(())
        } else {
            Err(Error::storage(format!("lock conformance: {what}")))
        }
    }

    /// Two holders of one name take turns, in request order; other names
    /// are independent; a dropped guard releases.
    pub async fn run(locks: &dyn Lock) -> Result<()> {
        let log = Rc::new(RefCell::new(Vec::new()));
        let holder = |tag: &'static str| {
            let log = log.clone();
            async move {
                let _g = locks.acquire("conformance/a").await?;
                log.borrow_mut().push(format!("{tag} in"));
                // Give the other holder every chance to enter.
                for _ in 0..8 {
                    yield_now().await;
                }
                log.borrow_mut().push(format!("{tag} out"));
                Ok::<_, Error>(())
            }
        };
        let (a, b) = futures::join!(holder("1"), holder("2"));
        a?;
        b?;
        check(*log.borrow() == ["1 in", "1 out", "2 in", "2 out"], "holders of one name overlapped")?;
        let a = locks.acquire("conformance/a").await?;
        let other = locks.acquire("conformance/b").await;
        check(other.is_ok(), "another name waited")?;
        drop(a);
        drop(other);
        let again = locks.acquire("conformance/a").await;
        check(again.is_ok(), "a released lock could not be taken again")
    }

    async fn yield_now() {
        let mut yielded = false;
        std::future::poll_fn(|cx| {
            if yielded {
                std::task::Poll::Ready(())
            } else {
                yielded = true;
                cx.waker().wake_by_ref();
                std::task::Poll::Pending
            }
        })
        .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn local_locks_conform() {
        futures::executor::block_on(conformance::run(&LocalLocks::default())).unwrap();
    }
}
