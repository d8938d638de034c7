//! Session-end orchestration and the background work `Memory` queues:
//! compression, session end, vectors and the reseal pass, each a [`Task`]
//! run on the `Spawn` port, with a backoff after failures and `idle()`
//! for whoever waits for none to run.

use futures::channel::oneshot;

use super::{no_llm, Memory, Task};
use crate::error::{Error, ErrorCode, Result};
use crate::llm::compress::{self, CompressReport};
use crate::llm::consolidate::{self, EndSessionOptions, EndSessionReport};

/// Backoff of background compression after failures: 1 s, doubling, 5 min
/// at most. A deadline, compared with `now` when the next `add` asks.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct Backoff {
    failures: u32,
    until_ms: i64,
}

const BACKOFF_FIRST_MS: i64 = 1_000;
const BACKOFF_MAX_MS: i64 = 300_000;

impl Backoff {
    fn failed(self, now_ms: i64) -> Backoff {
        let failures = self.failures.saturating_add(1);
        let wait = BACKOFF_FIRST_MS.saturating_mul(1 << (failures - 1).min(20)).min(BACKOFF_MAX_MS);
        Backoff { failures, until_ms: now_ms.saturating_add(wait) }
    }
}

/// Records a reseal pass writes per hold of the namespace lock: writers
/// wait for one round at most.
const RESEAL_ROUND: usize = 64;

/// Documents an embedding run takes per round: one embedder call of a
/// default batch, and one store write.
const EMBED_ROUND: usize = 64;

impl Memory {
    /// Whether `add` should queue a compression now: a model that compresses
    /// on its own, none queued, and no backoff deadline ahead.
    pub(super) fn compression_may_start(&self) -> bool {
        self.inner.model.as_ref().is_some_and(|m| {
            m.auto_compress
                && !m.compress_queued.get()
                && self.inner.clock.now_ms() >= m.backoff.get().until_ms
        })
    }

    /// Summarizes the old messages now (map-reduce); `None` when there is
    /// nothing to compress. On failure nothing is lost.
    pub async fn compress(&self) -> Result<Option<CompressReport>> {
        let model = self.inner.model.as_ref().ok_or_else(no_llm)?;
        let _turn = self.inner.work.lock().await;
        self.inner.session.lock().await.sync().await?;
        compress::compress(&self.inner.session, &model.governor, &self.inner.lock).await
    }

    /// Session end: long-term memories from the messages not yet processed,
    /// conflicts resolved, the summary refreshed when due; without a model,
    /// memories by rule (no summary). Work that fails stays owed; dropping
    /// the future abandons it (also owed).
    pub async fn end_session(&self) -> Result<EndSessionReport> {
        let governor = self.inner.model.as_ref().map(|m| &m.governor);
        let _turn = self.inner.work.lock().await;
        let _ending = self.inner.end_lock.acquire().await?;
        self.inner.session.lock().await.sync().await?;
        let report = consolidate::end_session(
            &self.inner.session,
            &self.inner.longterm,
            governor,
            &self.inner.lock,
            &EndSessionOptions::default(),
        )
        .await;
        self.embed_soon();
        report
    }

    /// [`Memory::end_session`] until `abort` resolves, then `ABORTED`: the
    /// work stops where it stood, and what it had not committed stays owed
    /// (resumed by the next call or open) rather than lost.
    pub async fn end_session_until(
        &self,
        abort: impl std::future::Future<Output = ()>,
    ) -> Result<EndSessionReport> {
        let work = std::pin::pin!(self.end_session());
        match futures::future::select(work, std::pin::pin!(abort)).await {
            futures::future::Either::Left((report, _)) => report,
            futures::future::Either::Right(_) => {
                Err(Error::new(ErrorCode::Aborted, "endSession was aborted; the work stays owed"))
            }
        }
    }

    /// [`Memory::compress`] as a `'static` future (for spawning).
    pub async fn compress_owned(self) -> Result<Option<CompressReport>> {
        self.compress().await
    }

    /// [`Memory::end_session`] as a `'static` future (for spawning).
    pub async fn end_session_owned(self) -> Result<EndSessionReport> {
        self.end_session().await
    }

    /// Queues an embedding run unless one is queued or a failure's backoff
    /// deadline is ahead (the next write after it queues one).
    pub(super) fn embed_soon(&self) {
        let Some(v) = &self.inner.vectors else { return };
        if !v.queued.get() && self.inner.clock.now_ms() >= v.backoff.get().until_ms {
            self.queue(Task::Embed);
        }
    }

    /// Queues background work on the `Spawn` port.
    pub(super) fn queue(&self, task: Task) {
        match (task, &self.inner.model, &self.inner.vectors) {
            (Task::Embed, _, Some(v)) => v.queued.set(true),
            (Task::Compress, Some(model), _) => model.compress_queued.set(true),
            (Task::ResumeSessionEnd | Task::Reseal, _, _) => {}
            _ => return,
        }
        self.inner.running.set(self.inner.running.get() + 1);
        let memory = self.clone();
        self.inner.spawner.spawn(Box::pin(async move { memory.run(task).await }));
    }

    async fn run(&self, task: Task) {
        let out = match task {
            Task::Compress => self.compress().await.map(|_| ()),
            Task::ResumeSessionEnd => self.end_session().await.map(|_| ()),
            Task::Embed => self.embed_pending().await,
            Task::Reseal => self.reseal().await,
        };
        let inner = &self.inner;
        if let (Task::Embed, Some(v)) = (task, &inner.vectors) {
            v.queued.set(false);
            v.backoff.set(match &out {
                Ok(()) => Backoff::default(),
                Err(_) => v.backoff.get().failed(inner.clock.now_ms()),
            });
        }
        if let Some(model) = &inner.model {
            if task == Task::Compress {
                model.compress_queued.set(false);
                let backoff = model.backoff.get();
                model.backoff.set(match &out {
                    Ok(()) => Backoff::default(),
                    Err(_) => backoff.failed(inner.clock.now_ms()),
                });
            }
            if let (Err(e), true) = (&out, matches!(task, Task::Compress | Task::ResumeSessionEnd)) {
                model.governor.note_error(e);
            }
        }
        inner.running.set(inner.running.get() - 1);
        if inner.running.get() == 0 {
            for waiter in inner.idle_waiters.take() {
                let _ = waiter.send(());
            }
        }
    }

    /// Gives every memory and turn without a vector one, a round at a
    /// time, with no lock held while the embedder runs. Turns and memories
    /// added meanwhile join the next round; the run ends when none is left.
    async fn embed_pending(&self) -> Result<()> {
        let Some(v) = &self.inner.vectors else { return Ok(()) };
        let model = v.embedding.model();
        loop {
            let todo = {
                let mut r = self.inner.longterm.lock().await;
                r.index_pending()?;
                r.load_vectors(model).await?;
                r.unembedded(EMBED_ROUND)
            };
            if todo.is_empty() {
                return Ok(());
            }
            let texts: Vec<String> = todo.iter().map(|(_, text)| text.clone()).collect();
            let vectors = v.embedding.embed(&texts).await?;
            let items = todo.into_iter().zip(vectors).map(|((id, text), v)| (id, text, v)).collect();
            self.inner.longterm.lock().await.set_vectors(model, items).await?;
        }
    }

    /// One reseal pass: what is under an older key (or plain) sealed under
    /// the current key, a round at a time under the namespace lock.
    async fn reseal(&self) -> Result<()> {
        let stale = self.inner.sealed.stale().await?;
        for round in stale.chunks(RESEAL_ROUND) {
            let _held = self.inner.lock.acquire().await?;
            self.inner.sealed.reseal(round).await?;
        }
        Ok(())
    }

    /// Background tasks not yet settled.
    pub fn running(&self) -> u32 {
        self.inner.running.get()
    }

    /// Resolves once no background task runs.
    pub fn idle(&self) -> impl std::future::Future<Output = ()> + 'static {
        let waiter = (self.inner.running.get() > 0).then(|| {
            let (tx, rx) = oneshot::channel();
            self.inner.idle_waiters.borrow_mut().push(tx);
            rx
        });
        async move {
            if let Some(rx) = waiter {
                let _ = rx.await;
            }
        }
    }
}
