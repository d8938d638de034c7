//! The long-term block of a request: the user facts pinned in every
//! request, the query's facts of the user and this agent, then past
//! conversations of other sessions, less the turns a fact already says.

use super::LongTermMemory;
use crate::entry::{MemoryEntry, Scope};
use crate::error::Result;
use crate::retrieval::{cut_text, Hit, Origin, SearchOptions};
use crate::working::session::LongTermBlock;

/// Whether a past turn says nothing a fact of `facts` does not: a fact was
/// drawn from it, or most of its words are one fact's ("Got it, I'll keep
/// in mind: User has a golden retriever called Biscuit"). The fact is
/// shorter and in force; its echo would spend the budget twice.
fn echoes_a_fact(turn: &Hit, facts: &[(&Hit, Vec<String>)]) -> bool {
    let words = crate::retrieval::analyzer::analyze_query(&turn.text);
    facts.iter().any(|(fact, said)| {
        fact.sources.contains(&turn.id) || {
            let shared = words.iter().filter(|w| said.contains(w)).count();
            !words.is_empty() && shared as f64 >= ECHO_SHARE * words.len() as f64
        }
    })
}

/// The share of a turn's words a fact must hold for the turn to be its echo.
const ECHO_SHARE: f64 = 0.6;

/// Puts the two searches' scores on one scale. Each search divides BM25 by
/// its own best, so the best fact and the best past turn both score 1 even
/// when the fact holds one common word of the query and the turn all of
/// them; the block, which takes lines best score first whatever their
/// section, would then spend a small budget on weak facts. Both searches
/// run on one index (one IDF), so a search's best BM25 over the best of
/// both rescales it. A fact's long-term weight is taken off too: it ranks
/// facts above the session's own messages in a search, while here facts
/// and past turns are both memory of other sessions (bench:context-recall
/// at 250 tokens: 0.606 as searched, 0.631 on one scale, 0.643 without the
/// weight). Hits found by meaning alone (no BM25) keep their score.
fn on_one_scale(facts: &mut [Hit], turns: &mut [Hit]) {
    let best = |hits: &[Hit]| hits.iter().map(|h| h.explain.bm25).fold(0.0, f64::max);
    let (f, t) = (best(facts), best(turns));
    let top = f.max(t);
    for (hits, own) in [(facts, f), (turns, t)] {
        for h in hits.iter_mut().filter(|_| own > 0.0) {
            // A pinned fact (score 0, no explain) has no weight to take off.
            let weight =
                if h.long_term && h.explain.source_weight > 0.0 { h.explain.source_weight } else { 1.0 };
            h.score *= own / top / weight;
        }
    }
}

impl LongTermMemory {
    /// The block for a request: the user profile and this agent's memories,
    /// then past conversations other than `current_session` (whose messages
    /// the request carries already). Unfitted: the request fits it.
    pub fn block(
        &mut self,
        query: &str,
        vector: Option<&[f32]>,
        current_session: Option<&str>,
    ) -> Result<LongTermBlock> {
        let mut scopes = vec![Scope::User];
        if let Some(a) = &self.options.agent_id {
            scopes.push(Scope::Agent(a.clone()));
        }
        let opts = SearchOptions {
            top_k: self.options.top_k_per_scope.saturating_mul(scopes.len() as u32),
            per_scope_top_k: Some(self.options.top_k_per_scope),
            min_score: self.options.min_score,
            min_coverage: self.options.min_coverage,
            min_cosine: self.options.min_cosine,
            scopes: Some(scopes),
            ..SearchOptions::default()
        };
        let found = self.search(query, vector, &opts)?;
        // Past turns: the floor is relative to the best turn of another
        // session (the current session's own words would otherwise set it).
        let past_opts = SearchOptions {
            top_k: self.options.top_k_per_scope.saturating_mul(4),
            min_coverage: self.options.min_coverage,
            min_cosine: self.options.min_cosine,
            scopes: Some(vec![Scope::Session]),
            ..SearchOptions::default()
        };
        let elsewhere = |h: &Hit| match &h.origin {
            Some(Origin::Turn { session, .. } | Origin::Summary { session }) => {
                Some(session.as_str()) != current_session
            }
            _ => false,
        };
        let mut past: Vec<Hit> =
            self.search(query, vector, &past_opts)?.into_iter().filter(elsewhere).collect();
        let floor = past.first().map_or(0.0, |best| best.score * self.options.min_score);
        past.retain(|h| h.score >= floor);
        // Past turns carry most of what answers a question about the past:
        // half again as many as facts (bench:context-recall: evidence
        // recall 0.771 at 589 tokens with 10, 0.804 at 738 with 15).
        past.truncate(self.options.top_k_per_scope as usize * 3 / 2);
        let mut hits = self.pinned_profile();
        let pinned: std::collections::HashSet<String> = hits.iter().map(|h| h.id.clone()).collect();
        hits.extend(found.into_iter().filter(|h| !pinned.contains(&h.id)));
        let facts: Vec<(&Hit, Vec<String>)> =
            hits.iter().map(|h| (h, crate::retrieval::analyzer::analyze_query(&h.text))).collect();
        past.retain(|turn| !echoes_a_fact(turn, &facts));
        on_one_scale(&mut hits, &mut past);
        hits.extend(past);
        Ok(LongTermBlock::Hits { hits, user_share: self.options.user_share })
    }

    /// The user facts pinned in every request: profile and preference facts
    /// first (their `category`, as session end records it), then by
    /// importance, then the newest.
    fn pinned_profile(&self) -> Vec<Hit> {
        let profile = |e: &MemoryEntry| {
            e.metadata.get("category").is_some_and(|c| matches!(c.as_str(), "profile" | "preference"))
        };
        let mut facts: Vec<&MemoryEntry> = self
            .records
            .valid_unordered()
            .filter(|e| e.scope == Scope::User && e.kind == crate::entry::Kind::Fact)
            .collect();
        crate::order::sort_by(&mut facts, |a, b| {
            profile(b)
                .cmp(&profile(a))
                .then(b.importance.total_cmp(&a.importance))
                .then(b.timestamp.cmp(&a.timestamp))
                .then(a.id.cmp(&b.id))
        });
        facts
            .into_iter()
            .take(self.options.pinned_profile as usize)
            .map(|e| (e, cut_text(&e.content, SearchOptions::default().truncate_chars)))
            .map(|(e, (text, cut))| Hit {
                id: e.id.clone(),
                score: 0.0,
                text,
                scope: e.scope.clone(),
                timestamp: e.timestamp,
                long_term: true,
                explain: Default::default(),
                origin: Some(Origin::Fact),
                sources: e.sources.clone(),
                cut,
            })
            .collect()
    }
}
