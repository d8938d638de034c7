//! Compression, run and committed, and the background work `Memory`
//! queues: compression, session end, vectors and the reseal pass, each a
//! [`Task`] run on the `Spawn` port, with a backoff after failures and
//! `idle()` for whoever waits for none to run.

use futures::channel::oneshot;

use super::{no_llm, Memory, Task};
use crate::error::Result;
use crate::llm::compress::{self, ChunkStore, CompressReport};
use crate::llm::governor::Governor;
use crate::working::conversation::Seq;
use crate::working::session::SummaryCommit;

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
    /// nothing to compress. On failure nothing is lost. The calls' usage
    /// joins the session's usage record.
    pub async fn compress(&self) -> Result<Option<CompressReport>> {
        self.check_open()?;
        self.compress_queued().await
    }

    /// [`Memory::compress`] as the queued task runs it: also while a close
    /// waits for it.
    async fn compress_queued(&self) -> Result<Option<CompressReport>> {
        let model = self.inner.model.as_ref().ok_or_else(no_llm)?;
        let _turn = self.inner.work.lock().await;
        let before = model.governor.stats();
        let out = self.compress_held(&model.governor).await;
        self.inner.session.lock().await.budget_mut().add_usage(model.governor.usage_since(&before));
        out
    }

    /// Compression with this session's turn held: the session's mutex only
    /// for the snapshot, the model asked with no lock held, the commit under
    /// the namespace lock. Messages added meanwhile are not in the snapshot,
    /// so they stay in the window; a summary another instance committed
    /// meanwhile through a later message stays (the commit never moves back).
    async fn compress_held(&self, governor: &Governor) -> Result<Option<CompressReport>> {
        let (snapshot, chunks) = {
            let mut s = self.inner.session.lock().await;
            s.sync().await?;
            (compress::snapshot(&s), ChunkStore::new(s.store().clone(), s.storage_id()))
        };
        let Some(plan) = compress::plan(governor, snapshot, &chunks).await? else { return Ok(None) };
        let committed = self.commit_summary_through(plan.summary, plan.through).await?;
        chunks.clear_through(plan.through).await?;
        Ok(Some(CompressReport {
            messages: plan.messages,
            chunks: plan.chunks,
            llm_calls: plan.llm_calls,
            summary: committed.entry().clone(),
        }))
    }

    /// Commits a summary through position `through` under the namespace
    /// lock: a compare-and-set that never moves the summary back.
    pub(super) async fn commit_summary_through(&self, text: String, through: Seq) -> Result<SummaryCommit> {
        let _held = self.inner.lock.acquire().await?;
        self.inner.session.lock().await.commit_summary_through(text, through).await
    }

    /// [`Memory::compress`] as a `'static` future (for spawning).
    pub async fn compress_owned(self) -> Result<Option<CompressReport>> {
        self.compress().await
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
            Task::Compress => self.compress_queued().await.map(|_| ()),
            Task::ResumeSessionEnd => self.end_session_queued().await.map(|_| ()),
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
