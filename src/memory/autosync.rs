//! Sync on a schedule, and closing a memory. `Memory.open({ sync })` is an
//! open followed by [`Memory::autosync`]: one loop, spawned on the `Spawn`
//! port, syncs right away, then every `intervalMs` on the `Clock` port, and
//! at once when the host says it is back online ([`Memory::online`]). The
//! loop is the only scheduler; the binding converts options and forwards
//! the host's `online` event.
//!
//! - **One sync of a memory at a time.** Every sync, scheduled or called,
//!   takes the memory's sync turn ([`Memory::sync_turn`]): a `sync()` called
//!   during a scheduled one waits for it, then runs with its own transport
//!   (it does not join: the two may reach different peers).
//! - **Failures back off.** A failed scheduled sync lands in
//!   `stats().sync.lastError`, never in an open or a call; after failures
//!   in a row the wait doubles, up to [`MAX_BACKOFF_FACTOR`] intervals. A
//!   success or the host coming online ends the backoff.
//! - **Close** ([`Memory::close`]) stops the schedule, waits for a running
//!   sync and for background work already queued (compression, session
//!   end, vectors), and then every call but `close` and `idle` fails with
//!   `CLOSED`. Background work queued before the close still runs to its end.

use std::cell::{Cell, RefCell};
use std::rc::Rc;
use std::task::{Poll, Waker};

use futures::channel::oneshot;
use futures::lock::MutexGuard;
use serde::Deserialize;

use super::{Memory, SyncOptions};
use crate::error::{Error, ErrorCode, Result};
use crate::sync::Transport;

/// Default of [`AutoSyncOptions::interval_ms`]: often enough that a second
/// device sees a memory within a minute, rarely enough to cost a relay
/// little when nothing changed (a sync of equal replicas is one exchange).
pub const SYNC_INTERVAL_MS: u32 = 30_000;
/// The bounds of [`AutoSyncOptions::interval_ms`]: not a busy loop, and at
/// least daily.
pub const MIN_SYNC_INTERVAL_MS: u32 = 100;
pub const MAX_SYNC_INTERVAL_MS: u32 = 86_400_000;
/// After failures in a row the wait doubles, up to this many intervals.
pub const MAX_BACKOFF_FACTOR: u32 = 8;

/// `Memory.open`'s `sync`, besides its transport: how often to sync, and what.
/// Another option of every scheduled sync joins here as a field.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct AutoSyncOptions {
    /// Between two scheduled syncs, in ms (default 30000; 100 to 86400000).
    /// The first sync runs right after open, and another whenever the
    /// browser comes back online.
    #[serde(default)]
    pub interval_ms: Option<u32>,
    /// Each scheduled sync covers the sessions' messages and summaries too,
    /// as `memory.sync(transport, { sessions: true })` does; default false.
    #[serde(default)]
    pub sessions: bool,
}

impl AutoSyncOptions {
    pub fn validate(&self) -> Result<()> {
        match self.interval_ms {
            Some(ms) if !(MIN_SYNC_INTERVAL_MS..=MAX_SYNC_INTERVAL_MS).contains(&ms) => Err(Error::invalid(
                format!("sync.intervalMs must be from {MIN_SYNC_INTERVAL_MS} to {MAX_SYNC_INTERVAL_MS}"),
            )),
            _ => Ok(()),
        }
    }
}

/// A memory's schedule: its transport, and the loop's wake-ups.
pub(super) struct Schedule {
    transport: Rc<dyn Transport>,
    interval_ms: u32,
    sync: SyncOptions,
    /// Set by `online` and `close`: the loop's wait ends now.
    nudged: Cell<bool>,
    waker: RefCell<Option<Waker>>,
    /// The loop ended; and who waits for that.
    stopped: Cell<bool>,
    stop_waiters: RefCell<Vec<oneshot::Sender<()>>>,
}

impl Schedule {
    /// The wait after `failures` failed syncs in a row.
    fn wait_ms(&self, failures: u32) -> u32 {
        let factor = (1u32 << failures.min(31)).min(MAX_BACKOFF_FACTOR);
        self.interval_ms.saturating_mul(factor)
    }

    fn nudge(&self) {
        self.nudged.set(true);
        if let Some(waker) = self.waker.take() {
            waker.wake();
        }
    }

    /// Resolves once nudged (at once if it was since the last time).
    async fn nudged(&self) {
        std::future::poll_fn(|cx| {
            if self.nudged.replace(false) {
                return Poll::Ready(());
            }
            *self.waker.borrow_mut() = Some(cx.waker().clone());
            Poll::Pending
        })
        .await
    }

    fn stop(&self) {
        self.stopped.set(true);
        for waiter in self.stop_waiters.take() {
            let _ = waiter.send(());
        }
    }

    async fn stopped(&self) {
        if self.stopped.get() {
            return;
        }
        let (tx, rx) = oneshot::channel();
        self.stop_waiters.borrow_mut().push(tx);
        let _ = rx.await;
    }
}

#[cold]
#[inline(never)]
fn closed() -> Error {
    Error::new(ErrorCode::Closed, "this memory was closed; open it again")
}

impl Memory {
    /// Syncs through `transport` in the background: now, every interval,
    /// and when [`Memory::online`] says so, until [`Memory::close`].
    pub fn autosync(&self, transport: Rc<dyn Transport>, options: &AutoSyncOptions) -> Result<()> {
        self.check_open()?;
        options.validate()?;
        if self.inner.schedule.borrow().is_some() {
            return Err(Error::invalid("this memory already syncs on a schedule"));
        }
        let schedule = Rc::new(Schedule {
            transport,
            interval_ms: options.interval_ms.unwrap_or(SYNC_INTERVAL_MS),
            sync: SyncOptions { sessions: options.sessions },
            nudged: Cell::new(false),
            waker: RefCell::default(),
            stopped: Cell::new(false),
            stop_waiters: RefCell::default(),
        });
        *self.inner.schedule.borrow_mut() = Some(schedule.clone());
        self.inner.spawner.spawn(Box::pin(self.clone().scheduled(schedule)));
        Ok(())
    }

    /// The loop: sync, wait out the interval (or the backoff) unless
    /// nudged, again, until closed. A failure is in `stats().sync`.
    async fn scheduled(self, schedule: Rc<Schedule>) {
        let mut failures = 0u32;
        while !self.inner.closed.get() {
            failures = match self.sync_with(schedule.transport.as_ref(), schedule.sync).await {
                Ok(_) => 0,
                Err(_) => failures.saturating_add(1),
            };
            let wait = std::pin::pin!(self.inner.clock.sleep(schedule.wait_ms(failures)));
            if let futures::future::Either::Right(_) =
                futures::future::select(wait, std::pin::pin!(schedule.nudged())).await
            {
                failures = 0;
            }
        }
        schedule.stop();
    }

    /// The host is back online: a scheduled sync runs now (after the one
    /// running, if one is). Without a schedule, nothing.
    pub fn online(&self) {
        if let Some(schedule) = &*self.inner.schedule.borrow() {
            schedule.nudge();
        }
    }

    /// Stops the schedule, waits for a running sync and for the background
    /// work already queued; from then on calls fail with `CLOSED`. Closing
    /// again waits the same and succeeds.
    pub async fn close(&self) {
        self.inner.closed.set(true);
        let schedule = self.inner.schedule.borrow().clone();
        if let Some(schedule) = schedule {
            schedule.nudge();
            schedule.stopped().await;
        }
        // A called sync running now ends before the close does.
        drop(self.inner.sync_turn.lock().await);
        self.idle().await;
    }

    /// `CLOSED` once [`Memory::close`] was called: every call checks it
    /// first (background work already queued does not).
    pub(super) fn check_open(&self) -> Result<()> {
        match self.inner.closed.get() {
            true => Err(closed()),
            false => Ok(()),
        }
    }

    /// This memory's turn to sync: one sync at a time, scheduled or called.
    /// A sync that waited for its turn across a close is `CLOSED`.
    pub(super) async fn sync_turn(&self) -> Result<MutexGuard<'_, ()>> {
        self.check_open()?;
        let turn = self.inner.sync_turn.lock().await;
        self.check_open()?;
        Ok(turn)
    }
}

#[cfg(test)]
mod tests;
