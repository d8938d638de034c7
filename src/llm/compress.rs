//! Map-reduce compression (seed 000): the old messages (everything but the
//! retained rounds) are cut into chunks of 5 messages, each also bounded in
//! tokens so its prompt fits the model; the chunks are summarized
//! concurrently (as wide as the governor allows); more than one summary is
//! reduced to one, and one is used as is. The earlier session summary joins
//! the reduce step, so a second compression extends the first instead of
//! forgetting it.
//!
//! This is the pipeline only: it reads a [`CompressSnapshot`] and returns a
//! [`CompressPlan`]; `memory/` takes the snapshot and commits the plan under
//! its locks, so a slow model never blocks `add`. On any failure nothing
//! changes but the saved chunk summaries ([`ChunkStore`], a cache of this
//! session's own): the next attempt asks only for what is missing.
//! A backlog of any size is reduced in rounds of at most
//! [`REDUCE_MAX_TOKENS`], so no prompt outgrows a small model.

use std::ops::Range;
use std::rc::Rc;

use serde::Serialize;

use crate::entry::MemoryEntry;
use crate::error::{Error, ErrorCode, Result};
use crate::llm::governor::{Governor, Purpose};
use crate::llm::prompts::{self, Language};
use crate::store::Store;
use crate::tokens::{truncate_to_lines, truncate_to_tokens, Tokenizer};
use crate::working::conversation::Seq;
use crate::working::message::entry_tokens;
use crate::working::session::{position, Session};

/// Messages per chunk (seed 000).
pub const CHUNK_MESSAGES: usize = 5;
/// Tokens of message text per chunk, so a chunk's prompt fits a small model.
pub const CHUNK_MAX_TOKENS: u32 = 3_000;
/// Words a chunk summary may take.
const CHUNK_SUMMARY_WORDS: u32 = 150;
/// Tokens of a chunk summary kept: a few times what was asked for, so a
/// runaway or hostile answer cannot grow the reduce prompts.
const CHUNK_SUMMARY_MAX_TOKENS: u32 = CHUNK_SUMMARY_WORDS * 4;

/// What one compression did.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct CompressReport {
    /// Messages the new summary covers that the old one did not.
    pub messages: u32,
    pub chunks: u32,
    pub llm_calls: u32,
    pub summary: MemoryEntry,
}

/// Splits messages into consecutive chunks of at most `max_messages`
/// messages and `max_tokens` tokens (a message larger than that alone makes
/// a chunk; its text is cut when the prompt is built).
pub fn plan_chunks(tokens: &[u32], max_messages: usize, max_tokens: u32) -> Vec<Range<usize>> {
    plan_groups(tokens, max_messages, max_tokens, 1)
}

/// Consecutive groups of at most `max_items` items and `max_tokens` tokens,
/// except that a group always takes at least `min_items` (while items last).
fn plan_groups(tokens: &[u32], max_items: usize, max_tokens: u32, min_items: usize) -> Vec<Range<usize>> {
    let mut groups = Vec::new();
    let (mut start, mut sum) = (0usize, 0u64);
    for (i, &t) in tokens.iter().enumerate() {
        let full = i - start == max_items || (i - start >= min_items && sum + t as u64 > max_tokens as u64);
        if full {
            groups.push(start..i);
            start = i;
            sum = 0;
        }
        sum += t as u64;
    }
    if start < tokens.len() {
        groups.push(start..tokens.len());
    }
    groups
}

/// Words the final summary may take: about three quarters of a word per
/// token of the summary budget, kept to a readable length.
pub fn summary_words(summary_budget_tokens: u32) -> u32 {
    (summary_budget_tokens * 3 / 4 / 2).clamp(50, 1_000)
}

/// What compression reads from the session: taken by `memory/` under the
/// session's mutex ([`snapshot`]), then worked on with no lock held.
pub struct CompressSnapshot {
    /// The compressible messages with their positions, oldest first.
    pub messages: Vec<(Seq, MemoryEntry)>,
    /// The summary they extend.
    pub previous: Option<String>,
    pub tokenizer: Rc<dyn Tokenizer>,
    pub summary_budget: u32,
}

/// What compression asks `memory/` to commit: `summary` in place of the
/// messages through `through`. The commit decides whether it still may
/// (a summary never moves back).
#[derive(Debug, Clone, PartialEq)]
pub struct CompressPlan {
    pub summary: String,
    pub through: Seq,
    /// Messages the summary covers that the previous one did not.
    pub messages: u32,
    pub chunks: u32,
    pub llm_calls: u32,
}

/// What compression needs of the session: a read of the caller's borrow.
pub fn snapshot(session: &Session) -> CompressSnapshot {
    CompressSnapshot {
        messages: session.compressible(),
        previous: session.summary().map(|e| e.content.clone()),
        tokenizer: session.tokenizer().clone(),
        summary_budget: session.options().summary_budget,
    }
}

/// Summarizes the snapshot's messages: `Ok(None)` when there is nothing to
/// compress. Asks the model and touches nothing shared; `chunks` keeps each
/// chunk summary as it arrives, so a failed reduce or a closed tab repeats
/// no finished chunk call.
pub async fn plan(
    governor: &Governor,
    snapshot: CompressSnapshot,
    chunks: &ChunkStore,
) -> Result<Option<CompressPlan>> {
    let CompressSnapshot { messages, previous, tokenizer, summary_budget } = snapshot;
    let Some(&(through, _)) = messages.last() else { return Ok(None) };
    let lang = Language::detect(messages.iter().map(|(_, e)| e.content.as_str()));
    let (summary, chunk_count, llm_calls) =
        summarize(governor, tokenizer.as_ref(), lang, previous, &messages, summary_budget, Some(chunks))
            .await?;
    Ok(Some(CompressPlan {
        summary,
        through,
        messages: messages.len() as u32,
        chunks: chunk_count,
        llm_calls,
    }))
}

/// Chunk summaries kept in the store until a summary covers them: a reduce
/// that fails (a 400, a timeout, a closed tab) repeats no chunk call on the
/// next attempt. Keyed by the chunk's first and last positions, so a chunk
/// planned differently next time is summarized anew.
/// Layout: `session/S/chunk/<first>_<last>` → the summary as a JSON string.
pub struct ChunkStore {
    store: Rc<dyn Store>,
    prefix: String,
}

impl ChunkStore {
    pub fn new(store: Rc<dyn Store>, storage_id: &str) -> ChunkStore {
        ChunkStore { store, prefix: crate::store::layout::chunk_prefix(storage_id) }
    }

    fn key(&self, first: Seq, last: Seq) -> String {
        format!("{}{}_{}", self.prefix, position::encode(first), position::encode(last))
    }

    async fn get(&self, first: Seq, last: Seq) -> Result<Option<String>> {
        let json = self.store.get(&self.key(first, last)).await?;
        // An unreadable record is only a lost cache entry: summarized anew.
        Ok(json.and_then(|j| serde_json::from_str(&j).ok()))
    }

    async fn put(&self, first: Seq, last: Seq, text: &str) -> Result<()> {
        let json = serde_json::to_string(text).map_err(|e| Error::invalid(e.to_string()))?;
        self.store.put_many(vec![(self.key(first, last), json)]).await
    }

    /// Drops the chunks a committed summary covers.
    pub async fn clear_through(&self, through: Seq) -> Result<()> {
        let covered: Vec<String> = self
            .store
            .list(&self.prefix)
            .await?
            .into_iter()
            .map(|(k, _)| k)
            .filter(|k| {
                let last = k[self.prefix.len()..].split('_').nth(1).and_then(position::decode);
                last.is_none_or(|l| l <= through)
            })
            .collect();
        if covered.is_empty() {
            return Ok(());
        }
        self.store.delete_many(covered).await
    }
}

/// Tokens of summaries one reduce prompt may take; more are reduced in
/// rounds (a tree), so a large backlog never makes an oversized request.
pub const REDUCE_MAX_TOKENS: u32 = 6_000;

/// Groups consecutive parts so that each group stays within `max_tokens`,
/// with at least two parts per group (so every round shrinks the list).
pub fn plan_reduce(tokens: &[u32], max_tokens: u32) -> Vec<Range<usize>> {
    plan_groups(tokens, usize::MAX, max_tokens, 2)
}

/// Map-reduce over `entries` (with their positions); returns the summary,
/// the chunk count and the calls made. With `chunks`, chunk summaries are
/// reused from and saved to the store.
pub async fn summarize(
    governor: &Governor,
    tokenizer: &dyn Tokenizer,
    lang: Language,
    previous: Option<String>,
    entries: &[(Seq, MemoryEntry)],
    summary_budget: u32,
    chunks: Option<&ChunkStore>,
) -> Result<(String, u32, u32)> {
    let tokens: Vec<u32> = entries.iter().map(|(_, e)| entry_tokens(tokenizer, &mut e.clone())).collect();
    let plan = plan_chunks(&tokens, CHUNK_MESSAGES, CHUNK_MAX_TOKENS);
    let calls = std::cell::Cell::new(0u32);
    let maps = plan.iter().map(|r| {
        let (first, last) = (entries[r.start].0, entries[r.end - 1].0);
        let texts: Vec<MemoryEntry> = entries[r.clone()].iter().map(|(_, e)| e.clone()).collect();
        let calls = &calls;
        async move {
            if let Some(saved) = match chunks {
                Some(c) => c.get(first, last).await?,
                None => None,
            } {
                return Ok(saved);
            }
            let request = prompts::chunk_summary(lang, &texts, CHUNK_SUMMARY_WORDS);
            calls.set(calls.get() + 1);
            let answer = governor.call(Purpose::CompressChunk, request, tokenizer).await?.content;
            let text = fit(tokenizer, answer, CHUNK_SUMMARY_MAX_TOKENS)?;
            if let Some(c) = chunks {
                c.put(first, last, &text).await?;
            }
            Ok::<_, Error>(text)
        }
    });
    let mut parts: Vec<String> = previous
        .map(|p| truncate_to_tokens(tokenizer, &p, summary_budget as usize).to_string())
        .into_iter()
        .collect();
    for answer in crate::join::join_all(maps).await {
        parts.push(answer?);
    }
    let words = summary_words(summary_budget);
    while parts.len() > 1 {
        let part_tokens: Vec<u32> =
            parts.iter().map(|p| u32::try_from(tokenizer.count(p)).unwrap_or(u32::MAX)).collect();
        let mut next = Vec::new();
        for group in plan_reduce(&part_tokens, REDUCE_MAX_TOKENS) {
            if group.len() == 1 {
                next.push(parts[group.start].clone());
                continue;
            }
            calls.set(calls.get() + 1);
            let request = prompts::reduce_summaries(lang, &parts[group], words);
            let answer = governor.call(Purpose::CompressReduce, request, tokenizer).await?.content;
            next.push(fit(tokenizer, answer, summary_budget)?);
        }
        parts = next;
    }
    let summary = parts.pop().ok_or_else(|| Error::invalid("nothing to summarize"))?;
    let summary = fit(tokenizer, summary, summary_budget)?;
    Ok((summary, plan.len() as u32, calls.get()))
}

/// A model's summary, cut to `limit` tokens (at a line when one fits): no
/// more is ever sent, so no more is kept or fed to the next merge. A model
/// that answers an empty summary has failed: committing it would replace
/// history with nothing.
fn fit(tok: &dyn Tokenizer, text: String, limit: u32) -> Result<String> {
    let text = text.trim();
    if text.is_empty() {
        return Err(Error::new(ErrorCode::Llm, "the model returned an empty summary"));
    }
    if tok.count_up_to(text, limit as usize).is_some() {
        return Ok(text.to_string());
    }
    // Tokens of text average well under 32 bytes, so the cut needs no more
    // of it (and a 10 MB answer is not searched whole).
    let mut end = text.len().min(limit as usize * 32);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    let lines = truncate_to_lines(tok, &text[..end], limit as usize);
    let kept =
        if lines.trim().is_empty() { truncate_to_tokens(tok, &text[..end], limit as usize) } else { &lines };
    Ok(kept.trim_end().to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::governor::LlmOptions;
    use crate::llm::testing::{Reply, ScriptedLlm};
    use crate::ports::clock::ManualClock;
    use crate::store::MemoryStore;
    use crate::tokens::Estimate;
    use crate::working::session::{NewMessage, SessionOptions};
    use futures::executor::block_on;

    /// Plans and commits as `memory/` does, with the session held alone.
    fn compress(session: &mut Session, governor: &Governor) -> Result<Option<CompressReport>> {
        let chunks = ChunkStore::new(session.store().clone(), session.storage_id());
        let Some(plan) = block_on(plan(governor, snapshot(session), &chunks))? else { return Ok(None) };
        let committed = block_on(session.commit_summary_through(plan.summary, plan.through))?;
        Ok(Some(CompressReport {
            messages: plan.messages,
            chunks: plan.chunks,
            llm_calls: plan.llm_calls,
            summary: committed.entry().clone(),
        }))
    }

    #[test]
    fn chunks_hold_five_messages_and_respect_the_token_bound() {
        assert_eq!(plan_chunks(&[1; 12], 5, 1000), vec![0..5, 5..10, 10..12]);
        assert_eq!(plan_chunks(&[400, 400, 400, 5000, 10], 5, 1000), vec![0..2, 2..3, 3..4, 4..5]);
        assert!(plan_chunks(&[], 5, 1000).is_empty());
    }

    #[test]
    fn reduce_groups_stay_within_the_bound_and_always_shrink() {
        assert_eq!(plan_reduce(&[100; 6], 250), vec![0..2, 2..4, 4..6]);
        // Parts over the bound still pair up, so every round makes progress.
        assert_eq!(plan_reduce(&[900, 900, 900], 500), vec![0..2, 2..3]);
        assert_eq!(plan_reduce(&[10], 500), vec![0..1]);
    }

    fn session_with(n: usize, store: Rc<MemoryStore>, clock: Rc<ManualClock>) -> Session {
        let options = SessionOptions { retain_recent_rounds: 1, ..SessionOptions::default() };
        let mut s = block_on(Session::open("s", store, Rc::new(Estimate), clock, options)).unwrap();
        for i in 0..n {
            let role = if i % 2 == 0 { crate::entry::Role::User } else { crate::entry::Role::Assistant };
            let m = NewMessage { role: Some(role), content: format!("message {i}"), ..NewMessage::default() };
            block_on(s.add(m)).unwrap();
        }
        s
    }

    #[test]
    fn maps_chunks_then_reduces_and_commits() {
        let store = Rc::new(MemoryStore::new());
        let clock = Rc::new(ManualClock::new(1_000));
        let mut session = session_with(12, store.clone(), clock.clone());
        let llm = Rc::new(ScriptedLlm::responding(|req| {
            let user = &req.messages[1].content;
            if user.starts_with("### 1") {
                Reply::text("merged summary")
            } else {
                Reply::text(&format!(
                    "summary of {} messages",
                    user.lines().filter(|l| l.starts_with('[')).count()
                ))
            }
        }));
        let g = Governor::new(llm.clone(), clock, LlmOptions::default()).unwrap();
        let report = compress(&mut session, &g).unwrap().unwrap();
        // 12 messages, the last round (2 messages) retained: 10 in 2 chunks + 1 reduce.
        assert_eq!((report.messages, report.chunks, report.llm_calls), (10, 2, 3));
        assert_eq!(report.summary.content, "merged summary");
        let s = &session;
        assert_eq!(s.messages().len(), 2);
        assert!(s.compressible().is_empty());
        // A reopened session sees the same.
        let again = session_with(0, store, Rc::new(ManualClock::new(2_000)));
        assert_eq!(again.summary().unwrap().content, "merged summary");
        assert_eq!(again.messages().len(), 2);
    }

    #[test]
    fn one_chunk_summary_is_used_as_is_and_the_next_one_extends_it() {
        let store = Rc::new(MemoryStore::new());
        let clock = Rc::new(ManualClock::new(1_000));
        let mut session = session_with(4, store, clock.clone());
        let llm =
            Rc::new(ScriptedLlm::new([Reply::text("first"), Reply::text("second"), Reply::text("both")]));
        let g = Governor::new(llm.clone(), clock, LlmOptions::default()).unwrap();
        let r = compress(&mut session, &g).unwrap().unwrap();
        assert_eq!((r.summary.content.as_str(), r.llm_calls), ("first", 1));
        for i in 0..2 {
            let m = NewMessage { content: format!("later {i}"), ..NewMessage::default() };
            block_on(session.add(m)).unwrap();
        }
        let r = compress(&mut session, &g).unwrap().unwrap();
        assert_eq!((r.summary.content.as_str(), r.llm_calls), ("both", 2));
        assert!(llm.requests()[2].messages[1]
            .content
            .starts_with("### 1\n<summary>\n  first\n</summary>\n\n### 2\n<summary>\n  second"));
    }

    #[test]
    fn an_oversized_answer_is_cut_to_what_the_budget_can_use() {
        let store = Rc::new(MemoryStore::new());
        let clock = Rc::new(ManualClock::new(1_000));
        let options =
            SessionOptions { retain_recent_rounds: 1, summary_budget: 300, ..SessionOptions::default() };
        let mut s = block_on(Session::open("s", store, Rc::new(Estimate), clock.clone(), options)).unwrap();
        for i in 0..12 {
            block_on(s.add(NewMessage { content: format!("message {i}"), ..NewMessage::default() })).unwrap();
        }
        let mut session = s;
        let huge = "The user talked about many things. ".repeat(300_000);
        let llm = Rc::new(ScriptedLlm::responding(move |_| Reply::text(&huge)));
        let g = Governor::new(llm.clone(), clock, LlmOptions::default()).unwrap();
        let r = compress(&mut session, &g).unwrap().unwrap();
        assert!(
            Estimate.count(&r.summary.content) <= 300,
            "{} tokens kept",
            Estimate.count(&r.summary.content)
        );
        let requests = llm.requests();
        let reduce = &requests.last().unwrap().messages[1].content;
        assert!(Estimate.count(reduce) <= REDUCE_MAX_TOKENS as usize + 500, "reduce prompt bounded");
    }

    #[test]
    fn a_failed_or_empty_answer_changes_nothing() {
        let store = Rc::new(MemoryStore::new());
        let clock = Rc::new(ManualClock::new(1_000));
        let mut session = session_with(12, store, clock.clone());
        let llm = Rc::new(ScriptedLlm::new([Reply::text("ok"), Reply::text("   "), Reply::BadRequest]));
        let g = Governor::new(llm, clock, LlmOptions::default()).unwrap();
        let before = session.messages().len();
        let e = compress(&mut session, &g).unwrap_err();
        assert_eq!(e.code, ErrorCode::Llm);
        let s = &session;
        assert_eq!(s.messages().len(), before);
        assert!(s.summary().is_none());
        assert_eq!(s.compressible().len(), 10);
    }
}
