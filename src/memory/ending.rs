//! Session end, run and committed. The pipeline (`llm::consolidate`) judges
//! and resolves with no lock held, from a snapshot; here the snapshot is
//! taken, the owed work recorded, the lease on judging held, and each
//! batch's plan committed under the lock order of `mod.rs`, after a fresh
//! read of what other instances did since the snapshot.

use super::Memory;
use crate::error::{Error, ErrorCode, Result};
use crate::llm::consolidate::{self, EndSessionOptions, EndSessionReport, EndSnapshot, Neighbour};
use crate::llm::governor::Governor;
use crate::llm::lease::Lease;
use crate::llm::outbox::{self, OutboxRecord};
use crate::llm::parse::{Candidate, Decision};
use crate::longterm::dedup::DedupOptions;
use crate::longterm::records::PROCESSED_TTL_MS;
use crate::store::DamageLog;
use crate::tokens::Tokenizer;
use crate::working::session::SummaryCommit;

/// Why a session end judged nothing: another instance holds the lease.
const ANOTHER_ENDING: &str = "another instance is ending this session; its messages are left to it";

/// One judged and resolved batch, as the pipeline leaves it to the commit.
struct BatchPlan {
    /// The hashes of its new messages, marked processed with its results.
    hashes: Vec<String>,
    candidates: Vec<Candidate>,
    /// Per candidate: the decision, and whether the model judged it new.
    decisions: Vec<(Decision, bool)>,
    neighbours: Vec<Vec<Neighbour>>,
}

impl Memory {
    /// Session end: long-term memories from the messages not yet processed,
    /// conflicts resolved, the summary refreshed when due; without a model,
    /// memories by rule (no summary). Work that fails stays owed; dropping
    /// the future abandons it (also owed).
    pub async fn end_session(&self) -> Result<EndSessionReport> {
        self.check_open()?;
        self.end_session_queued().await
    }

    /// [`Memory::end_session`] as the queued task runs it: also while a
    /// close waits for it.
    pub(super) async fn end_session_queued(&self) -> Result<EndSessionReport> {
        let governor = self.inner.model.as_ref().map(|m| &m.governor);
        let _turn = self.inner.work.lock().await;
        let _ending = self.inner.end_lock.acquire().await?;
        let before = governor.map(Governor::stats);
        let report = self.end_session_held(governor, &EndSessionOptions::default()).await;
        if let (Some(g), Some(before)) = (governor, before) {
            self.inner.session.lock().await.budget_mut().add_usage(g.usage_since(&before));
        }
        self.embed_soon();
        report
    }

    /// [`Memory::end_session`] as a `'static` future (for spawning).
    pub async fn end_session_owned(self) -> Result<EndSessionReport> {
        self.end_session().await
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

    /// Session end with this session's turn and end lock held.
    async fn end_session_held(
        &self,
        governor: Option<&Governor>,
        options: &EndSessionOptions,
    ) -> Result<EndSessionReport> {
        let (snapshot, store, writer) = {
            let mut s = self.inner.session.lock().await;
            s.sync().await?;
            (consolidate::snapshot(&s).await?, s.store().clone(), s.writer())
        };
        let clock = &self.inner.clock;
        let storage_id = snapshot.storage_id.as_str();
        let mut record =
            outbox::get(store.as_ref(), storage_id, &DamageLog::default()).await?.unwrap_or(OutboxRecord {
                session_id: storage_id.to_string(),
                since: clock.now_ms(),
                attempts: 0,
                last_error: None,
            });
        record.attempts += 1;
        outbox::put(store.as_ref(), &record).await?;

        let hashes = snapshot.hashes();
        let mut is_new = self.unjudged(&hashes).await?;
        let mut report = EndSessionReport { judge: "none", ..EndSessionReport::default() };
        // With a model, one instance at a time judges (each would be billed):
        // one that finds the lease held leaves the work owed, for the holder or
        // a later end.
        let lease = match governor {
            Some(_) if is_new.contains(&true) => {
                // Held by the instance: an end of its own that was aborted
                // (and never let go) does not lock it out.
                let lease = Lease::new(store.clone(), storage_id, writer);
                if !lease.take(clock.now_ms()).await? {
                    report.errors.push(ANOTHER_ENDING.into());
                    return Ok(report);
                }
                // What the lease's last holder judged meanwhile (another
                // process: its marks reached the store before it let go).
                is_new = self.unjudged(&hashes).await?;
                Some(lease)
            }
            _ => None,
        };
        let calls = || governor.map_or(0, |g| g.stats().calls);
        let calls_before = calls();
        let out = async {
            if !self
                .judge_all(governor, &snapshot, &hashes, &is_new, lease.as_ref(), options, &mut report)
                .await?
            {
                return Ok(report);
            }
            let outstanding = self.refresh_summary(governor, &snapshot, options, &mut report).await?;
            report.llm_calls = (calls() - calls_before) as u32;
            match outstanding {
                None => {
                    outbox::clear(store.as_ref(), storage_id).await?;
                    report.complete = true;
                }
                Some(error) => {
                    record.last_error = Some(error);
                    outbox::put(store.as_ref(), &record).await?;
                }
            }
            Ok(report)
        }
        .await;
        if let Some(lease) = &lease {
            // Not released, it ends by itself.
            let _ = lease.release().await;
        }
        out
    }

    /// Which of `hashes` no session end has processed, after a fresh read.
    async fn unjudged(&self, hashes: &[String]) -> Result<Vec<bool>> {
        let mut r = self.inner.longterm.lock().await;
        r.refresh().await?;
        Ok(hashes.iter().map(|h| !r.is_processed(h)).collect())
    }

    /// Judges, resolves and commits each batch of new messages. False when
    /// another instance took the lease between batches (the rest is left
    /// to it).
    #[allow(clippy::too_many_arguments)]
    async fn judge_all(
        &self,
        governor: Option<&Governor>,
        snapshot: &EndSnapshot,
        hashes: &[String],
        is_new: &[bool],
        lease: Option<&Lease>,
        options: &EndSessionOptions,
        report: &mut EndSessionReport,
    ) -> Result<bool> {
        let (tokenizer, lang) = (snapshot.tokenizer.as_ref(), snapshot.language());
        for (n, batch) in snapshot.batches(is_new, options).into_iter().enumerate() {
            if let Some(lease) = lease.filter(|_| n > 0) {
                if !lease.take(self.inner.clock.now_ms()).await? {
                    report.errors.push(ANOTHER_ENDING.into());
                    return Ok(false);
                }
            }
            let context = snapshot.context(batch.clone(), is_new);
            let candidates = consolidate::judge(governor, tokenizer, lang, &context, report).await;
            let done: Vec<String> = batch.filter(|&i| is_new[i]).map(|i| hashes[i].clone()).collect();
            if candidates.is_empty() {
                let _held = self.inner.lock.acquire().await?;
                self.inner.longterm.lock().await.mark_processed(&done, PROCESSED_TTL_MS).await?;
                continue;
            }
            // Compared with what is stored now; the model is asked with the
            // mutex let go.
            let neighbours =
                consolidate::neighbours(&mut *self.inner.longterm.lock().await, &candidates, options);
            let decisions =
                consolidate::resolve(governor, tokenizer, lang, &candidates, &neighbours, report).await;
            let plan = BatchPlan { hashes: done, candidates, decisions, neighbours };
            self.commit_batch(plan, &snapshot.storage_id, tokenizer, report).await?;
        }
        Ok(true)
    }

    /// Applies a batch's decisions and marks its messages processed, in one
    /// step under the namespace lock, after a fresh read. Another instance
    /// may have written since the snapshot: a batch it already processed is
    /// not applied twice, and a memory it expired or deleted is not
    /// superseded again (the fact is stored as new, deduplicated).
    async fn commit_batch(
        &self,
        plan: BatchPlan,
        session_id: &str,
        tokenizer: &dyn Tokenizer,
        report: &mut EndSessionReport,
    ) -> Result<()> {
        let _held = self.inner.lock.acquire().await?;
        let mut r = self.inner.longterm.lock().await;
        r.refresh().await?;
        if !plan.hashes.is_empty() && plan.hashes.iter().all(|h| r.is_processed(h)) {
            report.errors.push("batch already processed by another instance; not applied twice".into());
            return Ok(());
        }
        let (now, agent_id) = (r.now_ms(), r.agent_id().map(str::to_string));
        // Additions land in two writes (those the model judged new are checked
        // for exact repeats only), not one per memory.
        let (mut exact, mut full) = (Vec::new(), Vec::new());
        for ((c, (decision, judged_new)), near) in
            plan.candidates.into_iter().zip(plan.decisions).zip(&plan.neighbours)
        {
            let entry = consolidate::entry_of(c, agent_id.as_deref(), session_id, now, tokenizer);
            match decision {
                Decision::Skip => report.skipped += 1,
                Decision::Add if judged_new => exact.push(entry),
                Decision::Add => full.push(entry),
                Decision::Supersede(aliases) => {
                    let ids: Vec<String> = near
                        .iter()
                        .filter(|(a, _, _)| aliases.contains(a))
                        .map(|(_, id, _)| id.clone())
                        .filter(|id| r.get(id).is_some_and(|e| e.is_valid()))
                        .collect();
                    if ids.is_empty() {
                        full.push(entry);
                        continue;
                    }
                    r.supersede(entry, &ids).await?;
                    report.added += 1;
                    report.superseded += ids.len() as u32;
                }
            }
        }
        let mut outcomes = Vec::new();
        if !exact.is_empty() {
            outcomes.extend(r.remember_many_with(exact, &DedupOptions::EXACT).await?);
        }
        if !full.is_empty() {
            outcomes.extend(r.remember_many(full).await?);
        }
        report.count(outcomes);
        r.mark_processed(&plan.hashes, PROCESSED_TTL_MS).await
    }

    /// The session summary, when enough of the snapshot is uncovered: asked
    /// with no lock held, committed as a compare-and-set. Returns the
    /// failure that leaves it owed.
    async fn refresh_summary(
        &self,
        governor: Option<&Governor>,
        snapshot: &EndSnapshot,
        options: &EndSessionOptions,
        report: &mut EndSessionReport,
    ) -> Result<Option<String>> {
        let uncovered = snapshot.uncovered();
        let Some(governor) = governor.filter(|_| uncovered.len() as u32 >= options.summary_after_messages)
        else {
            return Ok(None);
        };
        let through = uncovered.last().map(|(s, _)| *s).expect("non-empty");
        let text = consolidate::summarize_session(
            governor,
            snapshot.tokenizer.as_ref(),
            snapshot.language(),
            snapshot.previous_summary.clone(),
            &uncovered,
            snapshot.summary_budget,
        )
        .await;
        match text {
            Ok(text) => {
                let commit = self.commit_summary_through(text, through).await?;
                report.summary_updated = matches!(commit, SummaryCommit::Written(_));
                Ok(None)
            }
            Err(e) => {
                report.errors.push(format!("summary: {e}"));
                Ok(Some(e.to_string()))
            }
        }
    }
}

#[cfg(test)]
mod tests;
