//! Session end (seed 002): the messages not yet processed are marked
//! `[[NEW]]` inside their context and a judge extracts memories from them
//! (the model, or the rule judge when the model fails or answers nothing);
//! candidates are deduplicated, checked against similar stored memories by
//! one batched resolve call, and applied write-new-then-expire-old. Then the
//! session summary is refreshed when 20 or more messages are not covered.
//!
//! Calls per session end: one judge call per batch of new messages (one
//! batch unless they exceed the judge's context budget), at most one
//! resolve call, and one summary call when due.
//!
//! Nothing is lost on failure: the outbox record is written first and
//! cleared last, messages are marked processed only after their memories
//! are stored, and every step is idempotent, so running it again finishes
//! what failed.

use futures::lock::Mutex;
use serde::Serialize;

use crate::entry::{Kind, MemoryEntry, Role, Scope};
use crate::error::{ErrorCode, Result};
use crate::hash::Fnv64;
use crate::llm::governor::{Governor, Purpose};
use crate::llm::lease::Lease;
use crate::llm::outbox::{self, OutboxRecord};
use crate::llm::parse::{self, Candidate, Decision, Layer};
use crate::llm::prompts::{self, Language, ResolveItem};
use crate::llm::rules;
use crate::longterm::dedup;
use crate::longterm::records::{Remembered, PROCESSED_TTL_MS};
use crate::longterm::LongTermMemory;
use crate::ports::NamedLock;
use crate::retrieval::SearchOptions;
use crate::store::DamageLog;
use crate::working::conversation::Seq;
use crate::working::message::entry_tokens;
use crate::working::session::{position, Session, SummaryCommit};

/// Tuning of session end, with the designs' numbers.
#[derive(Debug, Clone, PartialEq)]
pub struct EndSessionOptions {
    /// Tokens of conversation one judge prompt may carry (new messages and
    /// the context before them).
    pub judge_context_tokens: u32,
    /// Refresh the session summary once this many messages are uncovered.
    pub summary_after_messages: u32,
    /// Stored memories shown to the resolver per candidate.
    pub neighbours: u32,
    /// Stored memories whose character-bigram Jaccard with a candidate is
    /// below this are not "similar". Retrieval scores are relative (the best
    /// hit is always 1.0), so similarity is measured on the texts.
    pub neighbour_min_similarity: f64,
}

impl Default for EndSessionOptions {
    fn default() -> Self {
        EndSessionOptions {
            judge_context_tokens: 6_000,
            summary_after_messages: 20,
            neighbours: 3,
            neighbour_min_similarity: 0.3,
        }
    }
}

/// What one session end did.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct EndSessionReport {
    /// Messages processed now (not seen by an earlier session end).
    pub new_messages: u32,
    /// Who judged: "llm", "rules" (the model failed) or "none" (nothing new).
    #[cfg_attr(feature = "ts", ts(type = "\"llm\" | \"rules\" | \"none\""))]
    pub judge: &'static str,
    pub candidates: u32,
    pub added: u32,
    pub superseded: u32,
    /// Candidates already stored (by dedup or the resolver).
    pub skipped: u32,
    pub summary_updated: bool,
    pub llm_calls: u32,
    /// True when nothing is left in the outbox for this session.
    pub complete: bool,
    /// Failures met on the way (each was recovered or left in the outbox).
    pub errors: Vec<String>,
}

/// The idempotency key of a message: its session, position and text.
/// FNV-1a ([`Fnv64`]): a collision among one namespace's messages is
/// negligible.
/// Positions written before writers existed (writer 0) hash as they did
/// then, so their processed marks still hold.
pub fn message_hash(session: &str, seq: Seq, role: Role, content: &str) -> String {
    let mut h = Fnv64::default();
    h.feed(session.as_bytes()).feed(&[0]);
    match position::writer_of(seq) {
        0 => h.feed(&position::clock_of(seq).to_le_bytes()),
        _ => h.feed(&seq.to_le_bytes()),
    };
    h.feed(role.as_str().as_bytes()).feed(&[0]).feed(content.as_bytes());
    format!("{:016x}", h.finish())
}

/// Runs session end for `session`, storing memories through `longterm`. The
/// calls' usage joins the session's usage record. Without a model
/// (`governor` none) the rules judge, conflicts are left to the dedup on
/// write, and no summary is written.
///
/// The model is asked with no lock held; `lock` (the namespace's) is held
/// only while results are applied, after a fresh read of what other
/// instances wrote meanwhile.
pub async fn end_session(
    session: &Mutex<Session>,
    longterm: &Mutex<LongTermMemory>,
    governor: Option<&Governor>,
    lock: &NamedLock,
    options: &EndSessionOptions,
) -> Result<EndSessionReport> {
    let before = governor.map(Governor::stats);
    let out = end_session_inner(session, longterm, governor, lock, options).await;
    if let (Some(g), Some(before)) = (governor, before) {
        session.lock().await.budget_mut().add_usage(g.usage_since(&before));
    }
    out
}

async fn end_session_inner(
    session: &Mutex<Session>,
    longterm: &Mutex<LongTermMemory>,
    governor: Option<&Governor>,
    lock: &NamedLock,
    options: &EndSessionOptions,
) -> Result<EndSessionReport> {
    let (store, clock, tokenizer, storage_id, history, covered, previous_summary, summary_budget, writer) = {
        let s = session.lock().await;
        (
            s.store().clone(),
            s.clock().clone(),
            s.tokenizer().clone(),
            s.storage_id().to_string(),
            s.history_with_seq().await?,
            s.summary_covers_through(),
            s.summary().map(|e| e.content.clone()),
            s.options().summary_budget,
            s.writer(),
        )
    };
    let mut record =
        outbox::get(store.as_ref(), &storage_id, &DamageLog::default()).await?.unwrap_or(OutboxRecord {
            session_id: storage_id.clone(),
            since: clock.now_ms(),
            attempts: 0,
            last_error: None,
        });
    record.attempts += 1;
    outbox::put(store.as_ref(), &record).await?;

    let calls = || governor.map_or(0, |g| g.stats().calls);
    let calls_before = calls();
    let mut report = EndSessionReport { judge: "none", ..EndSessionReport::default() };
    let chat: Vec<&(Seq, MemoryEntry)> = history.iter().filter(|(_, e)| e.is_chat()).collect();
    let hashes: Vec<String> =
        chat.iter().map(|(seq, e)| message_hash(&storage_id, *seq, e.role, &e.content)).collect();
    let unjudged = || async {
        let mut r = longterm.lock().await;
        r.refresh().await?;
        Ok::<Vec<bool>, crate::error::Error>(hashes.iter().map(|h| !r.is_processed(h)).collect())
    };
    let mut is_new = unjudged().await?;
    // With a model, one instance at a time judges (each would be billed):
    // one that finds the lease held leaves the work owed, for the holder or
    // a later end.
    let lease = match governor {
        Some(_) if is_new.contains(&true) => {
            // Held by the instance: an end of its own that was aborted
            // (and never let go) does not lock it out.
            let lease = Lease::new(store.clone(), &storage_id, writer);
            if !lease.take(clock.now_ms()).await? {
                report.errors.push(ANOTHER_ENDING.into());
                return Ok(report);
            }
            // What the lease's last holder judged meanwhile (another
            // process: its marks reached the store before it let go).
            is_new = unjudged().await?;
            Some(lease)
        }
        _ => None,
    };
    let held = lease.as_ref();
    let out = async move {
        let lang = Language::detect(
            chat.iter().filter(|(_, e)| e.role == Role::User).map(|(_, e)| e.content.as_str()),
        );
        let tokens: Vec<u32> =
            chat.iter().map(|(_, e)| entry_tokens(tokenizer.as_ref(), &mut e.clone())).collect();

        for (n, batch) in
            judge_batches(&is_new, &tokens, options.judge_context_tokens).into_iter().enumerate()
        {
            if let Some(lease) = held.filter(|_| n > 0) {
                if !lease.take(clock.now_ms()).await? {
                    report.errors.push(ANOTHER_ENDING.into());
                    return Ok(report);
                }
            }
            let context: Vec<(MemoryEntry, bool)> =
                batch.clone().map(|i| (chat[i].1.clone(), is_new[i])).collect();
            let new_entries: Vec<&MemoryEntry> = context.iter().filter(|(_, n)| *n).map(|(e, _)| e).collect();
            report.new_messages += new_entries.len() as u32;
            // The numbers the prompt gave the new messages (#1 is the first of
            // the batch): a memory may cite only those.
            let cited = |n: u64| {
                let i = usize::try_from(n).ok()?.checked_sub(1)?;
                context.get(i).filter(|(_, new)| *new).map(|(e, _)| e.id.clone())
            };
            let judged = match governor {
                Some(g) => {
                    Some(g.call(Purpose::Judge, prompts::judge(lang, &context), tokenizer.as_ref()).await)
                }
                None => None,
            };
            let parsed = judged.map(|answer| {
                let reply = answer.map_err(|e| e.to_string())?;
                parse::parse_judge(&reply.content, cited).map_err(|unusable| format!("LLM: {unusable}"))
            });
            let candidates = match parsed {
                None => {
                    report.judge = "rules";
                    rules::judge(&context)
                }
                Some(Ok(c)) => {
                    report.judge = "llm";
                    c
                }
                Some(Err(why)) => {
                    report.errors.push(format!("judge fell back to rules: {why}"));
                    if report.judge != "llm" {
                        report.judge = "rules";
                    }
                    rules::judge(&context)
                }
            };
            let mut candidates = candidates;
            if candidates.len() > parse::MAX_JUDGED_MEMORIES {
                report.errors.push(format!(
                    "the judge listed {} memories; the first {} were kept",
                    candidates.len(),
                    parse::MAX_JUDGED_MEMORIES
                ));
                candidates.truncate(parse::MAX_JUDGED_MEMORIES);
            }
            let candidates = dedup_batch(candidates);
            report.candidates += candidates.len() as u32;
            let done: Vec<String> = batch.filter(|&i| is_new[i]).map(|i| hashes[i].clone()).collect();
            let batch = Batch { session_id: &storage_id, hashes: &done, lang };
            apply(longterm, governor, lock, tokenizer.as_ref(), &batch, candidates, options, &mut report)
                .await?;
        }

        // The session summary, when enough is uncovered.
        let uncovered: Vec<&(Seq, MemoryEntry)> =
            chat.iter().copied().filter(|(seq, _)| covered.is_none_or(|c| *seq > c)).collect();
        let mut outstanding: Option<String> = None;
        if let (Some(governor), true) = (governor, uncovered.len() as u32 >= options.summary_after_messages) {
            let last_seq = uncovered.last().map(|(s, _)| *s).expect("non-empty");
            let entries: Vec<(Seq, MemoryEntry)> = uncovered.iter().map(|&x| x.clone()).collect();
            let summary = summarize_session(
                governor,
                tokenizer.as_ref(),
                lang,
                previous_summary,
                &entries,
                summary_budget,
            )
            .await;
            match summary {
                Ok(text) => {
                    let _held = lock.acquire().await?;
                    let mut s = session.lock().await;
                    report.summary_updated =
                        matches!(s.commit_summary_through(text, last_seq).await?, SummaryCommit::Written(_));
                }
                Err(e) => {
                    report.errors.push(format!("summary: {e}"));
                    outstanding = Some(e.to_string());
                }
            }
        }

        report.llm_calls = (calls() - calls_before) as u32;
        match outstanding {
            None => {
                outbox::clear(store.as_ref(), &storage_id).await?;
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

/// Why a session end judged nothing: another instance holds the lease.
const ANOTHER_ENDING: &str = "another instance is ending this session; its messages are left to it";

/// The session summary through the uncovered messages: one call when they
/// fit the summary prompt, else the map-reduce of compression.
async fn summarize_session(
    governor: &Governor,
    tokenizer: &dyn crate::tokens::Tokenizer,
    lang: Language,
    previous: Option<String>,
    entries: &[(Seq, MemoryEntry)],
    summary_budget: u32,
) -> Result<String> {
    let words = crate::llm::compress::summary_words(summary_budget);
    let total: u64 = entries.iter().map(|(_, e)| tokenizer.count(&e.content) as u64).sum();
    if total <= crate::llm::compress::CHUNK_MAX_TOKENS as u64 * 2 {
        let texts: Vec<MemoryEntry> = entries.iter().map(|(_, e)| e.clone()).collect();
        let request = prompts::session_summary(lang, previous.as_deref(), &texts, words);
        let text = governor.call(Purpose::Summary, request, tokenizer).await?.content;
        let text = text.trim();
        if text.is_empty() {
            return Err(crate::error::Error::new(ErrorCode::Llm, "the model returned an empty summary"));
        }
        return Ok(text.to_string());
    }
    let (text, _, _) =
        crate::llm::compress::summarize(governor, tokenizer, lang, previous, entries, summary_budget, None)
            .await?;
    Ok(text)
}

/// Index ranges of chat messages to judge together: each holds new messages
/// and, before them, as much earlier context as fits `budget` tokens. The
/// new messages are never split across the context boundary.
pub fn judge_batches(is_new: &[bool], tokens: &[u32], budget: u32) -> Vec<std::ops::Range<usize>> {
    let mut batches = Vec::new();
    let mut i = 0;
    while i < is_new.len() {
        if !is_new[i] {
            i += 1;
            continue;
        }
        // New messages from i while they fit (at least one).
        let (start_new, mut used) = (i, 0u64);
        while i < is_new.len() && (i == start_new || used + tokens[i] as u64 <= budget as u64) {
            used += tokens[i] as u64;
            i += 1;
        }
        // Context before them while it fits.
        let mut start = start_new;
        while start > 0 && used + tokens[start - 1] as u64 <= budget as u64 {
            start -= 1;
            used += tokens[start] as u64;
        }
        // The context never reaches back into an earlier batch.
        if let Some(prev) = batches.last().map(|r: &std::ops::Range<usize>| r.end) {
            start = start.max(prev);
        }
        batches.push(start..i);
    }
    batches
}

/// Drops candidates that repeat an earlier one of the same batch.
fn dedup_batch(candidates: Vec<Candidate>) -> Vec<Candidate> {
    let opts = dedup::DedupOptions::default();
    let mut kept: Vec<Candidate> = Vec::new();
    for c in candidates {
        if !kept
            .iter()
            .any(|k| matches!(dedup::relation(&c.content, &k.content, &opts), dedup::Relation::Duplicate(_)))
        {
            kept.push(c);
        }
    }
    kept
}

fn scope_of(layer: Layer, agent_id: Option<&str>) -> Scope {
    match (layer, agent_id) {
        (Layer::Agent, Some(a)) => Scope::Agent(a.to_string()),
        // With no agent configured, agent lessons are kept with the user's.
        _ => Scope::User,
    }
}

/// One judged batch: where its candidates came from.
struct Batch<'a> {
    session_id: &'a str,
    /// The hashes of its new messages, marked processed with its results.
    hashes: &'a [String],
    lang: Language,
}

/// Resolves candidates against similar stored memories (one call for the
/// batch, no lock held), then, under the namespace lock, applies the
/// decisions and marks the batch processed in one step. Another instance
/// may have written meanwhile: a batch it already processed is not applied
/// twice, and a memory it expired or deleted is not superseded again.
#[allow(clippy::too_many_arguments)]
async fn apply(
    longterm: &Mutex<LongTermMemory>,
    governor: Option<&Governor>,
    lock: &NamedLock,
    tokenizer: &dyn crate::tokens::Tokenizer,
    batch: &Batch<'_>,
    candidates: Vec<Candidate>,
    options: &EndSessionOptions,
    report: &mut EndSessionReport,
) -> Result<()> {
    let (session_id, lang) = (batch.session_id, batch.lang);
    if candidates.is_empty() {
        let _held = lock.acquire().await?;
        return longterm.lock().await.mark_processed(batch.hashes, PROCESSED_TTL_MS).await;
    }
    // Similar stored memories per candidate, with short aliases.
    let (agent_id, neighbours) = {
        let mut r = longterm.lock().await;
        let agent_id = r.agent_id().map(str::to_string);
        let mut alias = 0;
        let neighbours: Vec<Vec<(String, String, String)>> = candidates
            .iter()
            .map(|c| {
                let opts = SearchOptions {
                    top_k: options.neighbours,
                    scopes: Some(vec![scope_of(c.layer, agent_id.as_deref())]),
                    ..SearchOptions::default()
                };
                let text = dedup::normalize(&c.content);
                r.search(&c.content, None, &opts)
                    .unwrap_or_default()
                    .into_iter()
                    .filter(|h| {
                        dedup::jaccard(&text, &dedup::normalize(&h.text)) >= options.neighbour_min_similarity
                    })
                    .map(|h| {
                        alias += 1;
                        (format!("m{alias}"), h.id, h.text)
                    })
                    .collect()
            })
            .collect();
        (agent_id, neighbours)
    };
    let needs_resolve: Vec<usize> = (0..candidates.len()).filter(|&i| !neighbours[i].is_empty()).collect();
    let mut decisions = vec![Decision::Add; candidates.len()];
    // Candidates the model compared with their neighbours and judged new
    // are stored unless exactly known; the rest get the full local dedup.
    let mut judged_new = vec![false; candidates.len()];
    if let (Some(governor), false) = (governor, needs_resolve.is_empty()) {
        let items: Vec<ResolveItem> = needs_resolve
            .iter()
            .map(|&i| ResolveItem {
                candidate: &candidates[i].content,
                similar: neighbours[i].iter().map(|(a, _, text)| (a.clone(), text.as_str())).collect(),
            })
            .collect();
        let answer = governor.call(Purpose::Resolve, prompts::resolve(lang, &items), tokenizer).await;
        let known = |k: usize, alias: &str| neighbours[needs_resolve[k]].iter().any(|(a, _, _)| a == alias);
        match answer.map(|r| parse::parse_resolve(&r.content, needs_resolve.len(), known)) {
            Ok(Some(d)) => {
                for (k, decision) in d.into_iter().enumerate() {
                    judged_new[needs_resolve[k]] = decision == Decision::Add;
                    decisions[needs_resolve[k]] = decision;
                }
            }
            // Unresolved candidates are added: dedup on write still catches
            // repeats, and nothing stored is expired on a guess.
            Ok(None) => report.errors.push("resolve: the answer held no usable JSON; added as new".into()),
            Err(e) => report.errors.push(format!("resolve: {e}; added as new")),
        }
    }
    let _held = lock.acquire().await?;
    let mut r = longterm.lock().await;
    r.refresh().await?;
    if !batch.hashes.is_empty() && batch.hashes.iter().all(|h| r.is_processed(h)) {
        report.errors.push("batch already processed by another instance; not applied twice".into());
        return Ok(());
    }
    let now = r.now_ms();
    // Additions land in two writes (those the model judged new are checked
    // for exact repeats only), not one per memory.
    let (mut exact, mut full) = (Vec::new(), Vec::new());
    for (((c, decision), near), judged_new) in
        candidates.into_iter().zip(decisions).zip(&neighbours).zip(judged_new)
    {
        let mut entry =
            MemoryEntry::new(c.content, Kind::Fact, Role::User, scope_of(c.layer, agent_id.as_deref()), now);
        entry.importance = c.importance;
        entry.sources = c.sources;
        entry.temporal = c.temporal;
        entry.metadata.insert("category".into(), c.category.as_str().into());
        entry.metadata.insert("sessionId".into(), session_id.into());
        if !c.aliases.is_empty() {
            entry.metadata.insert(crate::entry::ALIASES.into(), c.aliases);
        }
        entry.count_with(tokenizer);
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
                    // What the model saw is gone (another instance expired
                    // or deleted it): the fact is stored as new, deduplicated.
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
        outcomes.extend(r.remember_many_with(exact, &dedup::DedupOptions::EXACT).await?);
    }
    if !full.is_empty() {
        outcomes.extend(r.remember_many(full).await?);
    }
    for outcome in outcomes {
        match outcome {
            Remembered::Duplicate { .. } => report.skipped += 1,
            Remembered::Stored { .. } => report.added += 1,
            Remembered::Superseded { superseded, .. } => {
                report.added += 1;
                report.superseded += superseded.len() as u32;
            }
        }
    }
    r.mark_processed(batch.hashes, PROCESSED_TTL_MS).await
}

#[cfg(test)]
mod tests;
