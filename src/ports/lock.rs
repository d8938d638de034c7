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
//! one JS realm or one native process). Where it stands among the other
//! locks `Memory` takes is written once, in `src/memory/mod.rs`.

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

/// How many times in a row a lingering lock is handed to this realm's next
/// holder before it is let go, so another tab waiting for it gets its turn.
const MAX_LINGERING_REUSES: u32 = 16;

/// A lock that is costly to take (Web Locks: a round trip to the browser
/// process, about as long as an IndexedDB write) kept for one turn of the
/// event loop after its holder lets go: a caller that writes again at once
/// (`await remember(...)` in a loop, a batch of small writes) takes it back
/// without asking again. Another tab waits at most that turn longer, and
/// after [`MAX_LINGERING_REUSES`] reuses in a row the lock is let go anyway.
/// This realm's holders take turns on a local queue first, so only the one
/// about to hold it asks the inner lock. Built with
/// [`LingeringLocks::queued`] it keeps the queue and lets the inner lock go
/// with its holder: the component's host lock, whose `acquire` blocks the
/// thread, must never be asked twice by one instance.
pub struct LingeringLocks {
    inner: Rc<dyn Lock>,
    /// Where the release one turn later is scheduled; none: released with
    /// its holder.
    linger: Option<Turn>,
    names: RefCell<HashMap<String, Rc<Lingering>>>,
}

/// What a lingering release waits on: the next turn (`sleep(0)`), spawned.
type Turn = (Rc<dyn crate::ports::Clock>, Rc<dyn crate::ports::Spawn>);

/// One name's state.
#[derive(Default)]
struct Lingering {
    local: Arc<futures::lock::Mutex<()>>,
    /// The inner lock, while held or lingering.
    held: RefCell<Option<LockGuard>>,
    /// Bumped by every holder: a release scheduled before it is void.
    epoch: std::cell::Cell<u64>,
    reuses: std::cell::Cell<u32>,
}

impl LingeringLocks {
    pub fn new(
        inner: Rc<dyn Lock>,
        clock: Rc<dyn crate::ports::Clock>,
        spawner: Rc<dyn crate::ports::Spawn>,
    ) -> LingeringLocks {
        LingeringLocks { inner, linger: Some((clock, spawner)), names: RefCell::default() }
    }

    /// The local queue in front of `inner`, with no lingering.
    pub fn queued(inner: Rc<dyn Lock>) -> LingeringLocks {
        LingeringLocks { inner, linger: None, names: RefCell::default() }
    }
}

impl Lock for LingeringLocks {
    fn acquire<'a>(&'a self, name: &'a str) -> LocalBoxFuture<'a, Result<LockGuard>> {
        let state = self.names.borrow_mut().entry(name.to_string()).or_default().clone();
        Box::pin(async move {
            let local = state.local.clone().lock_owned().await;
            state.epoch.set(state.epoch.get() + 1);
            let lingering = state.held.borrow().is_some();
            if lingering && state.reuses.get() < MAX_LINGERING_REUSES {
                state.reuses.set(state.reuses.get() + 1);
            } else {
                // Let go first, so a tab that waits gets its turn.
                drop(state.held.borrow_mut().take());
                let inner = self.inner.acquire(name).await?;
                *state.held.borrow_mut() = Some(inner);
                state.reuses.set(0);
            }
            Ok(LockGuard::new(Linger { state, linger: self.linger.clone(), _local: local }))
        })
    }
}

/// A holder of a [`LingeringLocks`] lock: dropped, it schedules the inner
/// lock's release for the next turn (or, queued only, releases it), then
/// lets this realm's next holder in (who, coming first, voids that release).
struct Linger {
    state: Rc<Lingering>,
    linger: Option<Turn>,
    _local: futures::lock::OwnedMutexGuard<()>,
}

impl Drop for Linger {
    fn drop(&mut self) {
        let Some((clock, spawner)) = &self.linger else {
            drop(self.state.held.borrow_mut().take());
            return;
        };
        let (state, clock, epoch) = (self.state.clone(), clock.clone(), self.state.epoch.get());
        spawner.spawn(Box::pin(async move {
            clock.sleep(0).await;
            if state.epoch.get() == epoch {
                drop(state.held.borrow_mut().take());
            }
        }));
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

    use crate::ports::clock::SteppedClock;
    use crate::ports::Spawn;
    use futures::executor::{LocalPool, LocalSpawner};
    use futures::task::LocalSpawnExt;
    use std::cell::Cell;

    #[test]
    fn local_locks_conform() {
        futures::executor::block_on(conformance::run(&LocalLocks::default())).unwrap();
    }

    struct PoolSpawner(LocalSpawner);

    impl Spawn for PoolSpawner {
        fn spawn(&self, task: LocalBoxFuture<'static, ()>) {
            self.0.spawn_local(task).unwrap();
        }
    }

    /// A lock shared by two "tabs" that counts how often it is taken.
    #[derive(Default)]
    struct Counted {
        inner: LocalLocks,
        taken: Cell<u32>,
    }

    impl Lock for Counted {
        fn acquire<'a>(&'a self, name: &'a str) -> LocalBoxFuture<'a, Result<LockGuard>> {
            self.taken.set(self.taken.get() + 1);
            self.inner.acquire(name)
        }
    }

    fn tab(pool: &LocalPool, shared: &Rc<Counted>) -> LingeringLocks {
        LingeringLocks::new(
            shared.clone(),
            Rc::new(SteppedClock::new(0)),
            Rc::new(PoolSpawner(pool.spawner())),
        )
    }

    #[test]
    fn lingering_locks_conform() {
        let pool = LocalPool::new();
        let locks = tab(&pool, &Rc::default());
        futures::executor::block_on(conformance::run(&locks)).unwrap();
    }

    #[test]
    fn a_lock_taken_again_at_once_is_not_asked_for_again_and_another_tab_gets_it_next_turn() {
        let mut pool = LocalPool::new();
        let shared = Rc::new(Counted::default());
        let (a, b) = (tab(&pool, &shared), tab(&pool, &shared));
        // Holders one after the other, with no turn of the loop between them.
        for _ in 0..5 {
            drop(pool.run_until(a.acquire("ns")).unwrap());
        }
        assert_eq!(shared.taken.get(), 1, "taken once for five holders in a row");
        // While it lingers, the other tab waits; the next turn lets it go.
        let other = Rc::new(Cell::new(false));
        pool.spawner()
            .spawn_local({
                let (b, other) = (Rc::new(b), other.clone());
                async move {
                    let _held = b.acquire("ns").await.unwrap();
                    other.set(true);
                }
            })
            .unwrap();
        pool.run_until_stalled();
        assert!(other.get(), "the other tab got the lock once the turn was over");
        assert_eq!(shared.taken.get(), 2, "a let it go, b asked for it");
        // And a asks again after b.
        drop(pool.run_until(a.acquire("ns")).unwrap());
        assert_eq!(shared.taken.get(), 3);
    }

    #[test]
    fn a_lingering_lock_is_let_go_after_its_reuses_so_a_waiting_tab_is_not_starved() {
        let mut pool = LocalPool::new();
        let shared = Rc::new(Counted::default());
        let a = tab(&pool, &shared);
        for _ in 0..=MAX_LINGERING_REUSES {
            drop(pool.run_until(a.acquire("ns")).unwrap());
        }
        assert_eq!(shared.taken.get(), 1);
        drop(pool.run_until(a.acquire("ns")).unwrap());
        assert_eq!(shared.taken.get(), 2, "let go and asked for again after {MAX_LINGERING_REUSES} reuses");
    }

    /// A lock like the component host's: a name asked while it is held
    /// would block the thread for good.
    #[derive(Default)]
    struct Blocking {
        held: Rc<RefCell<Vec<String>>>,
        taken: Cell<u32>,
    }

    struct Unblock(Rc<RefCell<Vec<String>>>, String);

    impl Drop for Unblock {
        fn drop(&mut self) {
            self.0.borrow_mut().retain(|n| n != &self.1);
        }
    }

    impl Lock for Blocking {
        fn acquire<'a>(&'a self, name: &'a str) -> LocalBoxFuture<'a, Result<LockGuard>> {
            assert!(
                !self.held.borrow().iter().any(|n| n == name),
                "{name} was asked while this realm held it"
            );
            self.held.borrow_mut().push(name.to_string());
            self.taken.set(self.taken.get() + 1);
            Box::pin(std::future::ready(Ok(LockGuard::new(Unblock(self.held.clone(), name.to_string())))))
        }
    }

    #[test]
    fn queued_locks_ask_the_inner_lock_one_holder_at_a_time_and_let_it_go_with_each() {
        let inner = Rc::new(Blocking::default());
        let locks = LingeringLocks::queued(inner.clone());
        futures::executor::block_on(conformance::run(&locks)).unwrap();
        let taken = inner.taken.get();
        // Holders waiting at once: each asks in turn, after the one before let go.
        let mut pool = LocalPool::new();
        let locks = Rc::new(locks);
        for _ in 0..3 {
            let locks = locks.clone();
            pool.spawner()
                .spawn_local(async move {
                    let _held = locks.acquire("ns").await.unwrap();
                    // Held across turns, while the others ask.
                    for _ in 0..3 {
                        let mut yielded = false;
                        std::future::poll_fn(|cx| {
                            if std::mem::replace(&mut yielded, true) {
                                return std::task::Poll::Ready(());
                            }
                            cx.waker().wake_by_ref();
                            std::task::Poll::Pending
                        })
                        .await;
                    }
                })
                .unwrap();
        }
        pool.run_until_stalled();
        assert_eq!(inner.taken.get(), taken + 3, "one ask per holder: nothing lingers");
        assert!(inner.held.borrow().is_empty(), "let go with its last holder, no turn later");
    }
}
