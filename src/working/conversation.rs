//! Short-term conversation memory: the live messages of a session, bounded
//! in tokens and in count, with FIFO eviction.
//!
//! Evicted messages are not dropped: they move to the *pending compression*
//! list, where they wait until a summary covers them. An assistant tool call
//! leaves together with its results, and the last `retain_recent_rounds`
//! rounds (a round starts at a user message) are kept while they fit: they
//! are the current task's context. When they alone pass the token limit (an
//! agent's long tool loop after one instruction), the oldest of them leave
//! too, a tool call still with its results, so the window stays in budget. Token counts are cached on each entry, so adding a
//! message costs one count, never a recount of the history.

use std::collections::VecDeque;

use crate::entry::{MemoryEntry, Role};
use crate::tokens::Tokenizer;
use crate::working::message::entry_tokens;

/// A message's position in its session: ordered as the store's keys are
/// (see [`crate::working::session::position`]).
pub type Seq = u128;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ConversationLimits {
    /// Live messages may hold at most this many tokens.
    pub max_tokens: u32,
    /// Live messages may number at most this many.
    pub max_messages: u32,
    /// Rounds at the end that are never evicted.
    pub retain_recent_rounds: u32,
    /// Evicted messages kept waiting for a summary; the oldest beyond this
    /// leave memory (they stay in the store). Bounded when nothing will ever
    /// summarize them (no model), so a long session cannot grow without end.
    pub max_pending: Option<u32>,
}

#[derive(Debug, Clone)]
pub struct Live {
    pub entry: MemoryEntry,
    /// Tokens as a message (overhead included), by the current tokenizer.
    pub tokens: u32,
    /// Position in the session (persisted key order).
    pub seq: Seq,
}

#[derive(Debug)]
pub struct ConversationMemory {
    live: VecDeque<Live>,
    live_tokens: u64,
    /// Number of user messages among `live`, for the round count.
    live_user_messages: u32,
    pending: Vec<Live>,
    /// Positions of the messages that left `pending` over `max_pending`
    /// (oldest first), until a summary covers them: the window reports them
    /// as left out.
    dropped: VecDeque<Seq>,
    limits: ConversationLimits,
}

impl ConversationMemory {
    pub fn new(limits: ConversationLimits) -> Self {
        ConversationMemory {
            live: VecDeque::new(),
            live_tokens: 0,
            live_user_messages: 0,
            pending: Vec::new(),
            dropped: VecDeque::new(),
            limits,
        }
    }

    pub fn limits(&self) -> ConversationLimits {
        self.limits
    }

    /// Appends a message, then evicts from the front while over a limit.
    pub fn push(&mut self, tok: &dyn Tokenizer, mut entry: MemoryEntry, seq: Seq) {
        let tokens = entry_tokens(tok, &mut entry);
        if entry.role == Role::User {
            self.live_user_messages += 1;
        }
        self.live_tokens += tokens as u64;
        self.live.push_back(Live { entry, tokens, seq });
        self.evict();
    }

    fn over_limits(&self) -> bool {
        self.live_tokens > self.limits.max_tokens as u64
            || self.live.len() > self.limits.max_messages as usize
    }

    /// The number of leading live messages that may be evicted: everything
    /// before the first message of the retained rounds.
    fn evictable(&self) -> usize {
        let keep_rounds = self.limits.retain_recent_rounds;
        if keep_rounds == 0 {
            return self.live.len();
        }
        if self.live_user_messages < keep_rounds {
            return 0;
        }
        // The retained rounds start at the `keep_rounds`-th user message from the end.
        let mut seen = 0;
        for (i, l) in self.live.iter().enumerate().rev() {
            if l.entry.role == Role::User {
                seen += 1;
                if seen == keep_rounds {
                    return i;
                }
            }
        }
        0
    }

    fn evict(&mut self) {
        if !self.over_limits() {
            return;
        }
        let evictable = self.evictable();
        self.evict_front(evictable);
        // The retained rounds alone are over the token limit: the budget
        // wins, the newest group (a message, or a call with its results) stays.
        if self.live_tokens > self.limits.max_tokens as u64 {
            let last_group = self.live.iter().rposition(|l| l.entry.role != Role::Tool).unwrap_or(0);
            self.evict_front(last_group);
        }
    }

    /// Moves messages from the front to pending while over a limit, at most
    /// `evictable` of them; a tool call leaves together with its results.
    fn evict_front(&mut self, mut evictable: usize) {
        while self.over_limits() && evictable > 0 {
            let mut n = 1;
            if !self.live[0].entry.tool_calls.is_empty() {
                while n < evictable && self.live[n].entry.role == Role::Tool {
                    n += 1;
                }
            }
            for _ in 0..n {
                let l = self.live.pop_front().expect("n <= evictable <= len");
                self.live_tokens -= l.tokens as u64;
                if l.entry.role == Role::User {
                    self.live_user_messages -= 1;
                }
                self.pending.push(l);
            }
            evictable -= n;
        }
        if let Some(max) = self.limits.max_pending {
            let excess = self.pending.len().saturating_sub(max as usize);
            self.dropped.extend(self.pending.drain(..excess).map(|l| l.seq));
        }
    }

    /// Recounts every message with another tokenizer (cached per tokenizer
    /// on each entry, so switching back costs nothing).
    pub fn recount(&mut self, tok: &dyn Tokenizer) {
        self.live_tokens = 0;
        for l in self.live.iter_mut().chain(self.pending.iter_mut()) {
            l.tokens = entry_tokens(tok, &mut l.entry);
        }
        self.live_tokens = self.live.iter().map(|l| l.tokens as u64).sum();
        self.evict();
    }

    pub fn live(&self) -> &VecDeque<Live> {
        &self.live
    }

    pub fn live_tokens(&self) -> u64 {
        self.live_tokens
    }

    pub fn usage_ratio(&self) -> f64 {
        self.live_tokens as f64 / self.limits.max_tokens.max(1) as f64
    }

    pub fn pending(&self) -> &[Live] {
        &self.pending
    }

    /// Messages older than the live ones that no summary covers: pending,
    /// and those that left memory. None of them is in a request's window.
    pub fn uncovered_older(&self) -> u32 {
        (self.pending.len() + self.dropped.len()) as u32
    }

    /// What a compression would summarize: the pending messages, then the
    /// live ones before the retained rounds (seed 000 compresses all but the
    /// recent rounds once usage passes the threshold, not only what
    /// overflowed). The retained rounds start at a user message, so a tool
    /// call is never cut from its results.
    pub fn compressible(&self) -> Vec<&Live> {
        self.pending.iter().chain(self.live.iter().take(self.evictable())).collect()
    }

    /// Drops the messages a committed summary covers (up to and including
    /// `seq`) from pending and from the compressible part of the live
    /// window. The retained rounds stay live even when covered: they are the
    /// current task's context.
    pub fn summarized_through(&mut self, seq: Seq) {
        self.pending.retain(|l| l.seq > seq);
        while self.dropped.front().is_some_and(|&d| d <= seq) {
            self.dropped.pop_front();
        }
        let mut n = 0;
        let evictable = self.evictable();
        while n < evictable && self.live[n].seq <= seq {
            n += 1;
        }
        for l in self.live.drain(..n) {
            self.live_tokens -= l.tokens as u64;
            if l.entry.role == Role::User {
                self.live_user_messages -= 1;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::entry::{Kind, Scope, ToolCall};
    use crate::tokens::Estimate;

    fn msg(role: Role, content: &str) -> MemoryEntry {
        MemoryEntry::new(content, Kind::Conversation, role, Scope::Session, 0)
    }

    fn limits(max_tokens: u32, max_messages: u32, rounds: u32) -> ConversationLimits {
        ConversationLimits { max_tokens, max_messages, retain_recent_rounds: rounds, max_pending: None }
    }

    // "abcd" = 1 token + 4 overhead = 5 tokens per message.
    #[test]
    fn evicts_oldest_first_into_pending() {
        let mut c = ConversationMemory::new(limits(20, 100, 0));
        for i in 0..6 {
            c.push(&Estimate, msg(if i % 2 == 0 { Role::User } else { Role::Assistant }, "abcd"), i);
        }
        assert_eq!(c.live().len(), 4);
        assert_eq!(c.live_tokens(), 20);
        assert_eq!(c.pending().iter().map(|l| l.seq).collect::<Vec<_>>(), [0, 1]);
        assert!((c.usage_ratio() - 1.0).abs() < 1e-9);
        c.summarized_through(0);
        assert_eq!(c.pending().len(), 1);
    }

    #[test]
    fn a_summary_takes_compressible_messages_but_never_the_retained_rounds() {
        let mut c = ConversationMemory::new(limits(1000, 100, 2));
        for i in 0..8 {
            c.push(&Estimate, msg(if i % 2 == 0 { Role::User } else { Role::Assistant }, "abcd"), i);
        }
        assert_eq!(c.compressible().iter().map(|l| l.seq).collect::<Vec<_>>(), [0, 1, 2, 3]);
        c.summarized_through(7);
        assert_eq!(c.live().iter().map(|l| l.seq).collect::<Vec<_>>(), [4, 5, 6, 7]);
        assert_eq!(c.live_tokens(), 20);
        assert!(c.compressible().is_empty());
    }

    #[test]
    fn retained_rounds_stay_while_the_count_limit_is_passed() {
        let mut c = ConversationMemory::new(limits(1000, 4, 3));
        for i in 0..6 {
            c.push(&Estimate, msg(if i % 2 == 0 { Role::User } else { Role::Assistant }, "abcd"), i);
        }
        // Over the count (6 > 4), but all 6 messages are the last 3 rounds.
        assert_eq!(c.live().len(), 6);
        assert!(c.pending().is_empty());
        c.push(&Estimate, msg(Role::User, "abcd"), 6);
        // A fourth round starts: the first round may now go.
        assert_eq!(c.pending().iter().map(|l| l.seq).collect::<Vec<_>>(), [0, 1]);
    }

    #[test]
    fn a_long_tool_loop_stays_within_the_token_limit_with_its_pairs_whole() {
        // One instruction, then 40 tool calls with their results: no second
        // user message ever arrives, so no round is complete.
        let mut c = ConversationMemory::new(limits(60, 1000, 3));
        c.push(&Estimate, msg(Role::User, "do the task"), 0);
        let mut seq = 1;
        for i in 0..40 {
            let mut call = msg(Role::Assistant, "");
            call.tool_calls.push(ToolCall { id: format!("c{i}"), name: "f".into(), arguments: "{}".into() });
            let mut result = msg(Role::Tool, "result text");
            result.tool_call_id = Some(format!("c{i}"));
            c.push(&Estimate, call, seq);
            c.push(&Estimate, result, seq + 1);
            seq += 2;
            assert!(c.live_tokens() <= 60, "step {i}: {} tokens live", c.live_tokens());
            let first = &c.live()[0].entry;
            assert_ne!(first.role, Role::Tool, "a result never leads without its call");
        }
        assert!(c.pending().len() > 40);
    }

    #[test]
    fn pending_is_bounded_when_asked() {
        let mut c =
            ConversationMemory::new(ConversationLimits { max_pending: Some(3), ..limits(10, 100, 0) });
        for i in 0..20 {
            c.push(&Estimate, msg(Role::User, "abcd"), i);
        }
        assert_eq!(c.pending().iter().map(|l| l.seq).collect::<Vec<_>>(), [15, 16, 17]);
        assert_eq!(c.uncovered_older(), 18, "what left memory is still counted");
        c.summarized_through(10);
        assert_eq!(c.uncovered_older(), 7, "a summary through 10 covers 0..=10");
    }

    #[test]
    fn tool_calls_leave_with_their_results_and_count_limits_apply() {
        let mut c = ConversationMemory::new(limits(1000, 3, 0));
        let mut call = msg(Role::Assistant, "");
        call.tool_calls.push(ToolCall { id: "1".into(), name: "f".into(), arguments: "{}".into() });
        let mut result = msg(Role::Tool, "x");
        result.tool_call_id = Some("1".into());
        c.push(&Estimate, msg(Role::User, "q"), 0);
        c.push(&Estimate, call, 1);
        c.push(&Estimate, result, 2);
        c.push(&Estimate, msg(Role::Assistant, "a"), 3);
        // 4 > 3 messages: the user message goes; then the call goes with its result.
        assert_eq!(c.live().iter().map(|l| l.seq).collect::<Vec<_>>(), [1, 2, 3]);
        c.push(&Estimate, msg(Role::User, "q2"), 4);
        assert_eq!(c.live().iter().map(|l| l.seq).collect::<Vec<_>>(), [3, 4]);
        assert_eq!(c.pending().len(), 3);
    }

    #[test]
    fn counts_are_cached_per_tokenizer() {
        let mut c = ConversationMemory::new(limits(1000, 100, 3));
        c.push(&Estimate, msg(Role::User, "abcdefgh"), 0);
        assert_eq!(c.live()[0].entry.tokens.estimate, Some(2));
        assert_eq!(c.live_tokens(), 6);
    }
}
