//! Session end (seed 002), the pipeline: the messages not yet processed are
//! marked `[[NEW]]` inside their context and a judge extracts memories from
//! them (the model, or the rule judge when the model fails or answers
//! nothing); candidates are deduplicated and checked against similar stored
//! memories by one batched resolve call; then the session summary is
//! refreshed when 20 or more messages are not covered.
//!
//! Calls per session end: one judge call per batch of new messages (one
//! batch unless they exceed the judge's context budget), at most one
//! resolve call, and one summary call when due.
//!
//! Every step here reads a snapshot (an [`EndSnapshot`], or a borrow the
//! caller holds) and returns plain values; none takes a lock or writes.
//! `memory/` runs the steps, takes the locks and commits: the outbox
//! record written first and cleared last, each batch's memories applied
//! write-new-then-expire-old with its messages marked processed in the same
//! step, so running it again finishes what failed and repeats nothing.

use std::ops::Range;
use std::rc::Rc;

use serde::Serialize;

use crate::entry::{Kind, MemoryEntry, Role, Scope};
use crate::error::{ErrorCode, Result};
use crate::hash::Fnv64;
use crate::llm::governor::{Governor, Purpose};
use crate::llm::parse::{self, Candidate, Decision, Layer};
use crate::llm::prompts::{self, Language, ResolveItem};
use crate::llm::rules;
use crate::longterm::dedup;
use crate::longterm::records::Remembered;
use crate::longterm::LongTermMemory;
use crate::retrieval::SearchOptions;
use crate::tokens::Tokenizer;
use crate::working::conversation::Seq;
use crate::working::message::entry_tokens;
use crate::working::session::{position, Session};

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

/// What session end reads from the session: taken by `memory/` under the
/// session's mutex ([`snapshot`]), then judged with no lock held.
pub struct EndSnapshot {
    pub storage_id: String,
    /// The chat messages (no tool traffic, no summary) with their positions.
    pub chat: Vec<(Seq, MemoryEntry)>,
    /// The position the session summary covers through.
    pub covered: Option<Seq>,
    pub previous_summary: Option<String>,
    pub summary_budget: u32,
    pub tokenizer: Rc<dyn Tokenizer>,
}

/// What session end needs of the session: a read of the caller's borrow
/// (the stored history, other writers' messages included).
pub async fn snapshot(session: &Session) -> Result<EndSnapshot> {
    let history = session.history_with_seq().await?;
    Ok(EndSnapshot {
        storage_id: session.storage_id().to_string(),
        chat: history.into_iter().filter(|(_, e)| e.is_chat()).collect(),
        covered: session.summary_covers_through(),
        previous_summary: session.summary().map(|e| e.content.clone()),
        summary_budget: session.options().summary_budget,
        tokenizer: session.tokenizer().clone(),
    })
}

impl EndSnapshot {
    /// The idempotency key of each chat message ([`message_hash`]).
    pub fn hashes(&self) -> Vec<String> {
        self.chat.iter().map(|(seq, e)| message_hash(&self.storage_id, *seq, e.role, &e.content)).collect()
    }

    /// The prompts' language, by the user's messages.
    pub fn language(&self) -> Language {
        Language::detect(
            self.chat.iter().filter(|(_, e)| e.role == Role::User).map(|(_, e)| e.content.as_str()),
        )
    }

    /// The judge's batches over the chat ([`judge_batches`]).
    pub fn batches(&self, is_new: &[bool], options: &EndSessionOptions) -> Vec<Range<usize>> {
        let tokens: Vec<u32> =
            self.chat.iter().map(|(_, e)| entry_tokens(self.tokenizer.as_ref(), &mut e.clone())).collect();
        judge_batches(is_new, &tokens, options.judge_context_tokens)
    }

    /// A batch's messages, each with whether it is new.
    pub fn context(&self, batch: Range<usize>, is_new: &[bool]) -> Vec<(MemoryEntry, bool)> {
        batch.map(|i| (self.chat[i].1.clone(), is_new[i])).collect()
    }

    /// The chat messages the summary does not cover yet.
    pub fn uncovered(&self) -> Vec<(Seq, MemoryEntry)> {
        self.chat.iter().filter(|(seq, _)| self.covered.is_none_or(|c| *seq > c)).cloned().collect()
    }
}

/// Judges one batch: the model when there is one, the rules when there is
/// none or it fails or answers nothing usable; capped and deduplicated.
/// Who judged, the counts and what failed go to `report`.
pub async fn judge(
    governor: Option<&Governor>,
    tokenizer: &dyn Tokenizer,
    lang: Language,
    context: &[(MemoryEntry, bool)],
    report: &mut EndSessionReport,
) -> Vec<Candidate> {
    report.new_messages += context.iter().filter(|(_, new)| *new).count() as u32;
    // The numbers the prompt gave the new messages (#1 is the first of
    // the batch): a memory may cite only those.
    let cited = |n: u64| {
        let i = usize::try_from(n).ok()?.checked_sub(1)?;
        context.get(i).filter(|(_, new)| *new).map(|(e, _)| e.id.clone())
    };
    let judged = match governor {
        Some(g) => Some(g.call(Purpose::Judge, prompts::judge(lang, context), tokenizer).await),
        None => None,
    };
    let parsed = judged.map(|answer| {
        let reply = answer.map_err(|e| e.to_string())?;
        parse::parse_judge(&reply.content, cited).map_err(|unusable| format!("LLM: {unusable}"))
    });
    let mut candidates = match parsed {
        None => {
            report.judge = "rules";
            rules::judge(context)
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
            rules::judge(context)
        }
    };
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
    candidates
}

/// A stored memory shown to the resolver: its alias in the prompt, its id
/// and its text.
pub type Neighbour = (String, String, String);

/// Similar stored memories per candidate, with short aliases: a read of
/// the caller's borrow of the long-term memory (mutable only because a
/// search counts itself).
pub fn neighbours(
    longterm: &mut LongTermMemory,
    candidates: &[Candidate],
    options: &EndSessionOptions,
) -> Vec<Vec<Neighbour>> {
    let agent_id = longterm.agent_id().map(str::to_string);
    let mut alias = 0;
    candidates
        .iter()
        .map(|c| {
            let opts = SearchOptions {
                top_k: options.neighbours,
                scopes: Some(vec![scope_of(c.layer, agent_id.as_deref())]),
                ..SearchOptions::default()
            };
            let text = dedup::normalize(&c.content);
            longterm
                .search(&c.content, None, &opts)
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
        .collect()
}

/// What to do with each candidate, and whether the model compared it with
/// its neighbours and judged it new (then it is stored unless exactly
/// known; the rest get the full local dedup). One resolve call for the
/// batch, for the candidates that have neighbours; without a model, or
/// when its answer is unusable, every candidate is added (dedup on write
/// still catches repeats, and nothing stored is expired on a guess).
pub async fn resolve(
    governor: Option<&Governor>,
    tokenizer: &dyn Tokenizer,
    lang: Language,
    candidates: &[Candidate],
    neighbours: &[Vec<Neighbour>],
    report: &mut EndSessionReport,
) -> Vec<(Decision, bool)> {
    let mut decisions = vec![(Decision::Add, false); candidates.len()];
    let needs_resolve: Vec<usize> = (0..candidates.len()).filter(|&i| !neighbours[i].is_empty()).collect();
    let Some(governor) = governor.filter(|_| !needs_resolve.is_empty()) else { return decisions };
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
                let new = decision == Decision::Add;
                decisions[needs_resolve[k]] = (decision, new);
            }
        }
        Ok(None) => report.errors.push("resolve: the answer held no usable JSON; added as new".into()),
        Err(e) => report.errors.push(format!("resolve: {e}; added as new")),
    }
    decisions
}

/// The memory a candidate becomes, stamped `now`, from session `session_id`.
pub fn entry_of(
    c: Candidate,
    agent_id: Option<&str>,
    session_id: &str,
    now: i64,
    tokenizer: &dyn Tokenizer,
) -> MemoryEntry {
    let mut entry = MemoryEntry::new(c.content, Kind::Fact, Role::User, scope_of(c.layer, agent_id), now);
    entry.importance = c.importance;
    entry.sources = c.sources;
    entry.temporal = c.temporal;
    entry.metadata.insert("category".into(), c.category.as_str().into());
    entry.metadata.insert("sessionId".into(), session_id.into());
    if !c.aliases.is_empty() {
        entry.metadata.insert(crate::entry::ALIASES.into(), c.aliases);
    }
    entry.count_with(tokenizer);
    entry
}

impl EndSessionReport {
    /// Counts what the writes of a batch's additions did.
    pub fn count(&mut self, outcomes: Vec<Remembered>) {
        for outcome in outcomes {
            match outcome {
                Remembered::Duplicate { .. } => self.skipped += 1,
                Remembered::Stored { .. } => self.added += 1,
                Remembered::Superseded { superseded, .. } => {
                    self.added += 1;
                    self.superseded += superseded.len() as u32;
                }
            }
        }
    }
}

/// The session summary through the uncovered messages: one call when they
/// fit the summary prompt, else the map-reduce of compression.
pub async fn summarize_session(
    governor: &Governor,
    tokenizer: &dyn Tokenizer,
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
pub fn judge_batches(is_new: &[bool], tokens: &[u32], budget: u32) -> Vec<Range<usize>> {
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
        if let Some(prev) = batches.last().map(|r: &Range<usize>| r.end) {
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

#[cfg(test)]
mod tests;
