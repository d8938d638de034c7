//! Long-term memory: facts about the user and each agent's experience.
//!
//! [`LongTermMemory`] is what `Memory` holds: the namespace's [`Records`]
//! (versions, dedup on write, processed hashes, export) with a search index
//! kept in step with them, which answers searches and the long-term block
//! of each request. The same index holds past conversations (episodic
//! recall): every chat message of the namespace's sessions, with its
//! neighbouring turns as a weaker context field, and each session's
//! summary. Facts outweigh turns (seed 000's ×1.2, `longTermWeight`), and
//! every hit says where it came from ([`Origin`]). [`dedup`] decides when a new memory is already known,
//! a fuller version, or an update of a stored one.

pub mod dedup;
mod lines;
pub mod log;
mod plan;
pub mod records;
mod temporal;

pub use records::{new_memory, Changes, ExportDocument, ImportReport, RecordStats, Records, Remembered};

use std::collections::BTreeSet;
use std::rc::Rc;

use serde::{Deserialize, Serialize};

use crate::embed::vectors;
use crate::entry::{MemoryEntry, Scope};
use crate::error::{Error, ErrorCode, Result};
use crate::longterm::dedup::DedupOptions;
use crate::ports::clock::Clock;
use crate::retrieval::{
    cut_text, Bm25Params, Hit, IndexDoc, Origin, SearchCounts, SearchIndex, SearchOptions,
};
use crate::store::damage;
use crate::store::layout::{vector_id_of, vector_key, SESSIONS_PREFIX, VECTOR_PREFIX};
use crate::store::{DamageLog, Store};
use crate::working::session::LongTermBlock;

/// How the long-term block of a request is chosen.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default, deny_unknown_fields)]
pub struct LongTermOptions {
    /// The agent whose memories join the user profile in the block.
    pub agent_id: Option<String>,
    /// Hits per scope (the enterprise design's per-scope top-k).
    pub top_k_per_scope: u32,
    /// Hits below this relevance are left out (the design's 0.3 floor).
    pub min_score: f64,
    /// The block carries query hits only when the query's best match
    /// covers at least this share of it (see `SearchOptions::min_coverage`)
    /// or, with vectors, reaches `min_cosine`: a request that nothing
    /// stored answers gets no memories but the pinned profile. Default 0.2
    /// and 0.4 (MiniLM-like cosines): off-topic requests to a small store
    /// cover up to 0.18, on-topic ones 0.25 and more; on LoCoMo the gate
    /// costs 0.010 of R@10 lexically, nothing with vectors
    /// (docs/benchmarks.md).
    pub min_coverage: f64,
    pub min_cosine: f64,
    /// Share of the block the user profile may take (the design's 60%).
    pub user_share: f64,
    /// User facts pinned in every request, whatever the query (seed 002's
    /// `prefTopK`): a request whose words miss a stored preference still
    /// carries it. Inside the user share, before the query's hits; 0: none.
    pub pinned_profile: u32,
    pub dedup: DedupOptions,
}

impl Default for LongTermOptions {
    fn default() -> Self {
        LongTermOptions {
            agent_id: None,
            top_k_per_scope: 10,
            min_score: 0.3,
            min_coverage: 0.2,
            min_cosine: 0.4,
            user_share: 0.6,
            pinned_profile: 6,
            dedup: DedupOptions::default(),
        }
    }
}

/// Searches, counted per day and scope, plus the store's own figures.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LongTermStats {
    #[serde(flatten)]
    pub long_term: RecordStats,
    /// `"YYYY-MM-DD|scope"` -> searches.
    pub searches: std::collections::BTreeMap<String, u32>,
}

/// Neighbouring turns on each side that join a turn's context field (the
/// LoCoMo ranker's setting).
const NEIGHBOURS: usize = 2;

pub struct LongTermMemory {
    records: Records,
    /// Past conversations in the index: turns and summaries (each document
    /// says which, and of what session), by index id.
    episodes: rustc_hash::FxHashMap<String, IndexDoc>,
    /// Turns added since the last search, indexed when one comes: `add` is
    /// the hot path, and one analysis per message can wait for a search.
    unindexed: Vec<String>,
    index: SearchIndex,
    searches: SearchCounts,
    /// The model whose stored vectors were loaded into the index; loaded
    /// at the first hybrid search or embedding run, not at open.
    vectors_of: Option<String>,
    store: Rc<dyn Store>,
    damage: Rc<DamageLog>,
    clock: Rc<dyn Clock>,
    options: LongTermOptions,
}

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

/// A memory in the index: its text, and its aliases (`metadata.aliases`,
/// words to find it by that the text does not hold) as context; its hits
/// are facts, with their provenance.
fn index_doc(e: &MemoryEntry) -> IndexDoc {
    IndexDoc {
        id: e.id.clone(),
        text: e.content.clone(),
        context: e.metadata.get(crate::entry::ALIASES).cloned(),
        scope: e.scope.clone(),
        timestamp: e.timestamp,
        importance: e.importance,
        long_term: true,
        embedding: None,
        origin: Some(Origin::Fact),
        sources: e.sources.clone(),
    }
}

fn turn_doc(e: &MemoryEntry, context: Option<String>, origin: Origin) -> IndexDoc {
    IndexDoc {
        id: e.id.clone(),
        text: e.content.clone(),
        context,
        scope: Scope::Session,
        timestamp: e.timestamp,
        importance: e.importance,
        long_term: false,
        embedding: None,
        origin: Some(origin),
        sources: Vec::new(),
    }
}

/// Every session's chat messages (with their neighbours as context) and
/// summaries, from one `list` of the store. Damaged records are skipped.
async fn load_episodes(
    store: &dyn Store,
    log: &DamageLog,
) -> Result<rustc_hash::FxHashMap<String, IndexDoc>> {
    let mut sessions: std::collections::BTreeMap<String, Vec<MemoryEntry>> = Default::default();
    let mut out = rustc_hash::FxHashMap::default();
    // Keys list in position order, so each session's messages come in order.
    for (key, json) in store.list(SESSIONS_PREFIX).await? {
        let mut parts = key.splitn(4, '/').skip(1);
        let (Some(session), Some(kind)) = (parts.next(), parts.next()) else { continue };
        match kind {
            "msg" => {
                if let Some(e) = damage::parse::<MemoryEntry>(log, &key, &json) {
                    sessions.entry(session.to_string()).or_default().push(e);
                }
            }
            "summary" => {
                if let Some(e) = damage::parse::<MemoryEntry>(log, &key, &json) {
                    let origin = Origin::Summary { session: session.to_string() };
                    out.insert(e.id.clone(), turn_doc(&e, None, origin));
                }
            }
            _ => {}
        }
    }
    for (session, messages) in sessions {
        let chat: Vec<&MemoryEntry> = messages.iter().filter(|e| e.is_chat()).collect();
        for (i, e) in chat.iter().enumerate() {
            let around = chat[i.saturating_sub(NEIGHBOURS)..(i + NEIGHBOURS + 1).min(chat.len())]
                .iter()
                .filter(|n| n.id != e.id)
                .map(|n| n.content.as_str())
                .collect::<Vec<_>>()
                .join("\n");
            let origin = Origin::Turn { session: session.clone(), role: e.role };
            out.insert(e.id.clone(), turn_doc(e, Some(around).filter(|c| !c.is_empty()), origin));
        }
    }
    Ok(out)
}

impl LongTermMemory {
    /// Loads the namespace's long-term memory and indexes the valid part.
    pub async fn open(
        store: Rc<dyn Store>,
        clock: Rc<dyn Clock>,
        options: LongTermOptions,
    ) -> Result<LongTermMemory> {
        Self::open_with(store, clock, options, Rc::default()).await
    }

    /// [`LongTermMemory::open`], reporting damaged records to `damage`.
    pub async fn open_with(
        store: Rc<dyn Store>,
        clock: Rc<dyn Clock>,
        options: LongTermOptions,
        damage: Rc<DamageLog>,
    ) -> Result<LongTermMemory> {
        // Past turns and memories are separate keys: read at once. Each
        // memory's text is analyzed as it arrives, while the rest is read.
        let mut index = SearchIndex::new(Bm25Params::default());
        let mut interned: rustc_hash::FxHashMap<String, Vec<u32>> = Default::default();
        let mut intern = |e: &MemoryEntry| {
            interned.insert(e.id.clone(), index.intern(&e.content));
        };
        let (episodes, records) = futures::join!(
            load_episodes(store.as_ref(), &damage),
            Records::open_with(store.clone(), clock.clone(), options.dedup, damage.clone(), &mut intern)
        );
        let (episodes, records) = (episodes?, records?);
        let mut longterm = LongTermMemory {
            records,
            episodes,
            unindexed: Vec::new(),
            index,
            searches: SearchCounts::default(),
            vectors_of: None,
            store,
            damage,
            clock,
            options,
        };
        longterm.index_all(interned)?;
        Ok(longterm)
    }

    /// Fills the index, empty but for the terms in `interned` (memories'
    /// texts interned as they were read, by id; the others are here).
    fn index_all(&mut self, mut interned: rustc_hash::FxHashMap<String, Vec<u32>>) -> Result<()> {
        for e in self.records.valid() {
            match interned.remove(&e.id) {
                Some(terms) => self.index.add_interned(index_doc(e), &terms)?,
                None => self.index.add(index_doc(e))?,
            }
        }
        // In time order: ties in search break by insertion.
        let mut episodes: Vec<&IndexDoc> = self.episodes.values().collect();
        crate::order::sort_by(&mut episodes, |a, b| {
            a.timestamp.cmp(&b.timestamp).then_with(|| a.id.cmp(&b.id))
        });
        for doc in episodes {
            self.index.add(doc.clone())?;
        }
        Ok(())
    }

    /// Brings the index in line with the store after a change: drops what
    /// is no longer valid, re-adds what was rewritten under the same id (an
    /// import, here or in another tab: its text or its provenance, which
    /// hits carry), adds what is missing. Only the
    /// memories the records report changed are looked at, so one new memory
    /// costs one analysis; after a reload (another tab wrote) every memory
    /// is compared, never the past conversations rebuilt.
    /// Their stored vectors go with the documents that leave the index.
    async fn sync(&mut self) -> Result<()> {
        let changed: Vec<String> = match self.records.take_changes() {
            Changes::All => {
                let mut ids: Vec<String> = self.index.ids().map(str::to_string).collect();
                let unindexed = self.records.valid_unordered().filter(|e| !self.index.contains(&e.id));
                ids.extend(unindexed.map(|e| e.id.clone()));
                ids
            }
            Changes::Ids(ids) => ids,
        };
        let (records, index) = (&self.records, &self.index);
        let is_stale = |id: &str| {
            index.contains(id)
                && !self.episodes.contains_key(id)
                && records.get(id).is_none_or(|e| {
                    !e.is_valid()
                        || index.text_of(id) != Some(&e.content)
                        || index.sources_of(id) != Some(e.sources.as_slice())
                })
        };
        let stale: Vec<String> = changed.iter().filter(|id| is_stale(id)).cloned().collect();
        for id in &stale {
            self.index.remove(id);
        }
        if !stale.is_empty() {
            self.store.delete_many(stale.iter().map(|id| vector_key(id)).collect()).await?;
        }
        for id in &changed {
            let Some(e) = self.records.get(id).filter(|e| e.is_valid()) else { continue };
            if !self.index.contains(id) {
                self.index.add(index_doc(e))?;
            }
        }
        Ok(())
    }

    // ---- agents ----
    //
    // An instance opened for an agent (`agent_id`) sees the user's memories,
    // past turns and its own agent's memories, never another agent's: no
    // search, listing, export, history, write or delete of it crosses over.
    // An instance without an agent is the user's own view: everything.

    fn visible(&self, scope: &Scope) -> bool {
        match (scope, &self.options.agent_id) {
            (Scope::Agent(agent), Some(mine)) => agent == mine,
            _ => true,
        }
    }

    fn check_scope(&self, scope: &Scope) -> Result<()> {
        if self.visible(scope) {
            return Ok(());
        }
        Err(Error::invalid(format!(
            "this memory is opened for agent {:?}: scope {} belongs to another agent",
            self.options.agent_id.as_deref().unwrap_or_default(),
            scope
        )))
    }

    /// `id` is a memory this instance may change (absent ids pass: the
    /// operation reports them as it always did).
    fn check_id(&self, id: &str) -> Result<()> {
        match self.records.get(id) {
            Some(e) if !self.visible(&e.scope) => {
                Err(Error::new(ErrorCode::NotFound, format!("no memory {id:?} for this agent")))
            }
            _ => Ok(()),
        }
    }

    fn only_visible(&self, entries: Vec<MemoryEntry>) -> Vec<MemoryEntry> {
        entries.into_iter().filter(|e| self.visible(&e.scope)).collect()
    }

    pub async fn remember(&mut self, entry: MemoryEntry) -> Result<Remembered> {
        self.check_scope(&entry.scope)?;
        let r = self.records.remember(entry).await;
        self.sync().await?;
        r
    }

    pub async fn remember_many(&mut self, entries: Vec<MemoryEntry>) -> Result<Vec<Remembered>> {
        entries.iter().try_for_each(|e| self.check_scope(&e.scope))?;
        let r = self.records.remember_many(entries).await;
        self.sync().await?;
        r
    }

    pub async fn remember_many_with(
        &mut self,
        entries: Vec<MemoryEntry>,
        dedup: &DedupOptions,
    ) -> Result<Vec<Remembered>> {
        entries.iter().try_for_each(|e| self.check_scope(&e.scope))?;
        let r = self.records.remember_many_with(entries, dedup).await;
        self.sync().await?;
        r
    }

    pub async fn supersede(&mut self, entry: MemoryEntry, old_ids: &[String]) -> Result<MemoryEntry> {
        self.check_scope(&entry.scope)?;
        old_ids.iter().try_for_each(|id| self.check_id(id))?;
        let r = self.records.supersede(entry, old_ids).await;
        self.sync().await?;
        r
    }

    pub async fn undo(&mut self, id: &str) -> Result<()> {
        self.check_id(id)?;
        let r = self.records.undo(id).await;
        self.sync().await?;
        r
    }

    pub async fn forget(&mut self, id: &str) -> Result<bool> {
        if self.check_id(id).is_err() {
            return Ok(false);
        }
        let r = self.records.forget(id).await;
        self.sync().await?;
        r
    }

    pub async fn forget_scope(&mut self, scope: &Scope) -> Result<u32> {
        self.check_scope(scope)?;
        let r = self.records.forget_scope(scope).await;
        self.sync().await?;
        r
    }

    pub async fn purge(&mut self) -> Result<()> {
        if let Some(agent) = &self.options.agent_id {
            return Err(Error::invalid(format!(
                "purge deletes every agent's memories: call it on a memory opened without agentId (this one is {agent:?}'s)"
            )));
        }
        let r = self.records.purge().await;
        self.sync().await?;
        r
    }

    pub async fn import(&mut self, doc: ExportDocument) -> Result<ImportReport> {
        doc.entries.iter().try_for_each(|e| self.check_scope(&e.scope))?;
        let r = self.records.import(doc).await;
        self.sync().await?;
        r
    }

    /// Reloads when another tab changed the store.
    pub async fn refresh(&mut self) -> Result<()> {
        if self.records.refresh().await? {
            self.sync().await?;
        }
        Ok(())
    }

    pub fn export(&self) -> ExportDocument {
        let mut doc = self.records.export();
        doc.entries = self.only_visible(doc.entries);
        doc
    }

    pub fn get(&self, id: &str) -> Option<&MemoryEntry> {
        self.records.get(id)
    }

    pub fn history(&self, id: &str) -> Vec<MemoryEntry> {
        self.only_visible(self.records.history(id))
    }

    /// Every memory drawn from message `message_id`, superseded versions
    /// too: what to review or forget when that message is.
    pub fn derived_from(&self, message_id: &str) -> Vec<MemoryEntry> {
        self.only_visible(self.records.derived_from(message_id))
    }

    pub fn memories(&self) -> Vec<MemoryEntry> {
        self.records.valid().into_iter().filter(|e| self.visible(&e.scope)).cloned().collect()
    }

    /// The memories as they stood at `at` (ms): what was in force then.
    pub fn memories_as_of(&self, at: i64) -> Vec<MemoryEntry> {
        self.records.in_force_at(at).into_iter().filter(|e| self.visible(&e.scope)).cloned().collect()
    }

    /// Facts and past conversations for a query, best first, each with its
    /// origin. Counted in the stats' searches.
    pub fn search(
        &mut self,
        query: &str,
        vector: Option<&[f32]>,
        options: &SearchOptions,
    ) -> Result<Vec<Hit>> {
        let confined;
        let options = match (&options.scopes, &self.options.agent_id) {
            (Some(scopes), _) => {
                scopes.iter().try_for_each(|s| self.check_scope(s))?;
                options
            }
            (None, Some(agent)) => {
                confined = SearchOptions {
                    scopes: Some(vec![Scope::User, Scope::Session, Scope::Agent(agent.clone())]),
                    ..options.clone()
                };
                &confined
            }
            (None, None) => options,
        };
        let now = options.as_of.unwrap_or_else(|| self.clock.now_ms());
        let hits = match options.as_of {
            Some(at) => self.search_as_of(query, vector, at, options)?,
            None => self.index.search(query, vector, now, options)?,
        };
        self.searches.record(now, options);
        Ok(hits)
    }

    /// [`LongTermMemory::search`] as of `at`: the facts in force then and the
    /// turns said by then. The index holds what is in force now, so facts
    /// in force at `at` but not now (superseded, undone, expired since) are
    /// scored in an index of their own, lexically, and merged by score.
    fn search_as_of(
        &self,
        query: &str,
        vector: Option<&[f32]>,
        at: i64,
        options: &SearchOptions,
    ) -> Result<Vec<Hit>> {
        let wide = SearchOptions { top_k: options.top_k.saturating_mul(4).max(40), ..options.clone() };
        let mut hits: Vec<Hit> = self
            .index
            .search(query, vector, at, &wide)?
            .into_iter()
            .filter(|h| match self.records.get(&h.id) {
                Some(e) => e.in_force_at(at),
                None => h.timestamp <= at,
            })
            .collect();
        let mut then = SearchIndex::new(Bm25Params::default());
        for e in self.records.in_force_at(at).into_iter().filter(|e| !e.is_valid() && self.visible(&e.scope))
        {
            then.add(index_doc(e))?;
        }
        hits.extend(then.search(query, None, at, &wide)?);
        crate::order::sort_by(&mut hits, |a, b| b.score.total_cmp(&a.score).then_with(|| a.id.cmp(&b.id)));
        hits.truncate(options.top_k as usize);
        Ok(hits)
    }

    /// Takes a message this instance just stored into recall (other
    /// sessions' arrive with the next open), with the turn before it as
    /// context. It is indexed at the next [`LongTermMemory::index_pending`].
    pub fn add_turn(&mut self, session: &str, entry: &MemoryEntry, previous: Option<&str>) {
        if !entry.is_chat() || self.episodes.contains_key(&entry.id) {
            return;
        }
        let origin = Origin::Turn { session: session.to_string(), role: entry.role };
        self.episodes.insert(entry.id.clone(), turn_doc(entry, previous.map(str::to_string), origin));
        self.unindexed.push(entry.id.clone());
    }

    /// Drops a deleted session's turns and summary from recall, and their
    /// vectors from the store.
    pub async fn forget_session(&mut self, storage_id: &str) -> Result<()> {
        let gone: Vec<String> = self
            .episodes
            .iter()
            .filter(|(_, doc)| match &doc.origin {
                Some(Origin::Turn { session, .. } | Origin::Summary { session }) => session == storage_id,
                Some(Origin::Fact) | None => false,
            })
            .map(|(id, _)| id.clone())
            .collect();
        for id in &gone {
            self.episodes.remove(id);
            self.index.remove(id);
        }
        self.unindexed.retain(|id| self.episodes.contains_key(id));
        self.store.delete_many(gone.iter().map(|id| vector_key(id)).collect()).await
    }

    /// Drops deleted messages and summaries from recall, with their
    /// vectors; a turn indexed with a deleted message as its context is
    /// indexed again without it (its vector is made again).
    pub async fn forget_turns(&mut self, deleted: &[MemoryEntry]) -> Result<()> {
        let ids: BTreeSet<&str> = crate::order::set_of(deleted.iter().map(|e| e.id.as_str()));
        for id in &ids {
            self.episodes.remove(*id);
            self.index.remove(id);
        }
        self.unindexed.retain(|id| !ids.contains(id.as_str()));
        let quoted = |context: &str| {
            deleted.iter().any(|e| !e.content.is_empty() && context.contains(e.content.as_str()))
        };
        let mut requeued = Vec::new();
        for (id, doc) in self.episodes.iter_mut() {
            if doc.context.as_deref().is_some_and(quoted) {
                doc.context = None;
                requeued.push(id.clone());
            }
        }
        for id in requeued {
            self.index.remove(&id);
            self.unindexed.push(id);
        }
        self.store.delete_many(ids.iter().map(|id| vector_key(id)).collect()).await
    }

    /// `id` and every version it replaced: what `forget(id)` deletes.
    pub fn with_history(&self, id: &str) -> Vec<String> {
        self.records.with_history(id)
    }

    /// The messages the memories `ids` were drawn from: what goes with
    /// them when they are forgotten.
    pub fn sources_of(&self, ids: &[String]) -> Vec<String> {
        let mut out: Vec<String> =
            ids.iter().filter_map(|id| self.records.get(id).map(|e| e.sources.clone())).flatten().collect();
        crate::order::sort(&mut out);
        out.dedup();
        out
    }

    /// The ids of every visible memory of `scope` (every memory for `None`).
    pub fn ids_of(&self, scope: Option<&Scope>) -> Vec<String> {
        self.records
            .export()
            .entries
            .into_iter()
            .filter(|e| self.visible(&e.scope) && scope.is_none_or(|s| &e.scope == s))
            .map(|e| e.id)
            .collect()
    }

    /// Indexes the turns added since the last search (call before one).
    pub fn index_pending(&mut self) -> Result<()> {
        for id in std::mem::take(&mut self.unindexed) {
            if let Some(doc) = self.episodes.get(&id) {
                self.index.add(doc.clone())?;
            }
        }
        Ok(())
    }

    /// Loads the stored vectors of `model` into the index, once per model.
    /// Vectors of another model are left for re-embedding; damaged ones are
    /// reported and re-embedded too.
    pub async fn load_vectors(&mut self, model: &str) -> Result<()> {
        if self.vectors_of.as_deref() == Some(model) {
            return Ok(());
        }
        for (key, json) in self.store.list(VECTOR_PREFIX).await? {
            let Some(id) = vector_id_of(&key) else { continue };
            match vectors::decode(&json) {
                Ok((m, v)) if m == model => {
                    // A dimension that disagrees is a vector to make again.
                    if let Err(e) = self.index.set_embedding(id, &v) {
                        self.damage.report(&key, e);
                    }
                }
                Ok(_) => {}
                Err(e) => self.damage.report(&key, e),
            }
        }
        self.vectors_of = Some(model.to_string());
        Ok(())
    }

    /// Up to `limit` indexed documents without a vector, as `(id, text)`.
    pub fn unembedded(&self, limit: usize) -> Vec<(String, String)> {
        self.index.without_embedding().take(limit).map(|(id, t)| (id.to_string(), t.to_string())).collect()
    }

    /// Indexed documents without a vector.
    pub fn unembedded_count(&self) -> usize {
        self.index.without_embedding().count()
    }

    /// Documents with a vector.
    pub fn embedded(&self) -> usize {
        self.index.embedded()
    }

    /// Gives documents the vectors computed for `text` and stores them.
    /// A document whose text changed meanwhile (an import) keeps none: the
    /// next run embeds its new text.
    pub async fn set_vectors(&mut self, model: &str, items: Vec<(String, String, Vec<f32>)>) -> Result<()> {
        let mut records = Vec::with_capacity(items.len());
        for (id, text, vector) in items {
            if self.index.text_of(&id) == Some(text.as_str()) && self.index.set_embedding(&id, &vector)? {
                let key = vector_key(&id);
                self.damage.repaired(&key);
                records.push((key, vectors::encode(model, &vector)));
            }
        }
        self.store.put_many(records).await
    }

    /// True when session-end processing already consumed the message with
    /// this hash.
    pub fn is_processed(&self, hash: &str) -> bool {
        self.records.is_processed(hash)
    }

    pub async fn mark_processed(&mut self, hashes: &[String], ttl_ms: i64) -> Result<()> {
        self.records.mark_processed(hashes, ttl_ms).await
    }

    pub fn now_ms(&self) -> i64 {
        self.clock.now_ms()
    }

    pub fn agent_id(&self) -> Option<&str> {
        self.options.agent_id.as_deref()
    }

    pub fn stats(&self) -> LongTermStats {
        LongTermStats { long_term: self.records.stats(), searches: self.searches.by_day_and_scope().clone() }
    }

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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::longterm::records::new_memory;
    use crate::ports::clock::ManualClock;
    use crate::ports::LocalBoxFuture;
    use crate::retrieval::block::{fit, Fitted};
    use crate::store::MemoryStore;
    use crate::tokens::Estimate;
    use crate::working::session::LongTermSource;
    use crate::working::session::{ContextRequest, NewMessage, Session, SessionOptions};
    use futures::executor::block_on;

    /// The built-in block for `query`, fitted to `budget`.
    fn fitted(lt: &mut LongTermMemory, query: &str, budget: u32) -> Fitted {
        fit(&Estimate, &lt.block(query, None, None).unwrap(), budget)
    }

    /// The built-in block as a request's long-term source (a search counts
    /// itself, and a source is shared).
    struct BlockOf<'a>(std::cell::RefCell<&'a mut LongTermMemory>);

    impl LongTermSource for BlockOf<'_> {
        fn block<'a>(&'a self, query: &'a str, _budget: u32) -> LocalBoxFuture<'a, Result<LongTermBlock>> {
            let block = self.0.borrow_mut().block(query, None, None);
            Box::pin(async move { block })
        }
    }

    #[test]
    fn profile_facts_are_pinned_whatever_the_query_within_their_share() {
        let store: Rc<dyn Store> = Rc::new(MemoryStore::new());
        let clock = Rc::new(ManualClock::new(1_700_000_000_000));
        let options = LongTermOptions { agent_id: Some("coder".into()), ..Default::default() };
        let mut lt = block_on(LongTermMemory::open(store.clone(), clock.clone(), options)).unwrap();
        block_on(lt.remember(new_memory("Prefers Rust for systems code", Scope::User, 1))).unwrap();
        let block = fitted(&mut lt, "Which language for firmware?", 400).text;
        assert!(block.contains("Prefers Rust for systems code"), "{block}");
        // Preferences first, then importance; at most six; query hits after them.
        for i in 0..10 {
            let mut e = new_memory(format!("Owns vintage camera model {i}"), Scope::User, 2 + i);
            e.importance = 0.1;
            block_on(lt.remember(e)).unwrap();
        }
        let mut name = new_memory("User's name is Ada", Scope::User, 50);
        name.metadata.insert("category".into(), "profile".into());
        block_on(lt.remember(name)).unwrap();
        block_on(lt.remember(new_memory("Agent lesson: retry on 429", Scope::Agent("coder".into()), 60)))
            .unwrap();
        let block = fitted(&mut lt, "camera model 9", 400).text;
        let lines: Vec<&str> = block.lines().filter(|l| l.starts_with("- ")).collect();
        assert_eq!(lines[0], "- User's name is Ada");
        assert_eq!(lines[1], "- Prefers Rust for systems code");
        assert!(lines.contains(&"- Owns vintage camera model 9"), "the query's hit joins: {lines:?}");
        let user_lines =
            block.split("Agent memory:").next().unwrap().lines().filter(|l| l.starts_with("- ")).count();
        assert!(user_lines <= 6 + 10);
        assert_eq!(lines.iter().filter(|l| l.contains("model 9")).count(), 1, "pinned or hit, never twice");
        // Disabled: nothing but hits.
        let none = LongTermOptions { pinned_profile: 0, ..Default::default() };
        let mut bare = block_on(LongTermMemory::open(store, clock, none)).unwrap();
        assert_eq!(fitted(&mut bare, "Which language for firmware?", 400).text, "");
    }

    #[test]
    fn a_long_pinned_fact_is_cut_like_a_hit_and_the_cut_is_reported() {
        let store: Rc<dyn Store> = Rc::new(MemoryStore::new());
        let clock = Rc::new(ManualClock::new(1_700_000_000_000));
        let mut lt = block_on(LongTermMemory::open(store, clock, LongTermOptions::default())).unwrap();
        let long = format!("Keeps a travel diary about Kyoto: {}", "temples and gardens ".repeat(500));
        block_on(lt.remember(new_memory(long, Scope::User, 1))).unwrap();
        let block = fitted(&mut lt, "Kyoto travel diary", 4_000);
        assert!(block.text.contains("Keeps a travel diary about Kyoto"), "{}", block.text);
        assert!(block.truncated, "the fact was cut to 1,000 characters");
    }

    #[test]
    fn memories_and_search_answer_as_of_a_date() {
        let store: Rc<dyn Store> = Rc::new(MemoryStore::new());
        let may = crate::dates::ms_of(2023, 5, 8);
        let clock = Rc::new(ManualClock::new(may));
        let mut lt =
            block_on(LongTermMemory::open(store.clone(), clock.clone(), LongTermOptions::default())).unwrap();
        block_on(lt.remember(new_memory("Lives in Lisbon", Scope::User, may))).unwrap();
        block_on(lt.remember(new_memory("Went hiking with Sam on 3 May 2023", Scope::User, may))).unwrap();
        let july = crate::dates::ms_of(2023, 7, 1);
        clock.set(july);
        block_on(lt.remember(new_memory("Lives in Porto", Scope::User, july))).unwrap();
        let contents = |v: Vec<MemoryEntry>| {
            let mut c: Vec<String> = v.into_iter().map(|e| e.content).collect();
            c.sort();
            c
        };
        let june = crate::dates::ms_of(2023, 6, 1);
        assert_eq!(
            contents(lt.memories_as_of(june)),
            ["Lives in Lisbon", "Went hiking with Sam on 3 May 2023"]
        );
        assert_eq!(contents(lt.memories()), ["Lives in Porto", "Went hiking with Sam on 3 May 2023"]);
        assert!(lt.memories_as_of(crate::dates::ms_of(2023, 5, 2)).is_empty(), "nothing was true yet");
        let hike = lt.memories().into_iter().find(|e| e.content.contains("hiking")).unwrap();
        assert_eq!(
            (hike.temporal, hike.valid_from),
            (Some(crate::entry::Temporal::Event), Some(crate::dates::ms_of(2023, 5, 3)))
        );
        let then = SearchOptions { as_of: Some(june), ..SearchOptions::default() };
        let hits = lt.search("lives in", None, &then).unwrap();
        assert_eq!(hits.iter().map(|h| h.text.as_str()).collect::<Vec<_>>(), ["Lives in Lisbon"]);
        let now = lt.search("lives in", None, &SearchOptions::default()).unwrap();
        assert_eq!(now.iter().map(|h| h.text.as_str()).collect::<Vec<_>>(), ["Lives in Porto"]);
        // Another instance, opened afterwards, reads the same past from the store.
        let reopened = block_on(LongTermMemory::open(store, clock, LongTermOptions::default())).unwrap();
        assert_eq!(
            contents(reopened.memories_as_of(june)),
            ["Lives in Lisbon", "Went hiking with Sam on 3 May 2023"]
        );
    }

    #[test]
    fn an_off_topic_request_gets_no_memories_a_related_one_does() {
        let store: Rc<dyn Store> = Rc::new(MemoryStore::new());
        let clock = Rc::new(ManualClock::new(1_700_000_000_000));
        let options = LongTermOptions { pinned_profile: 0, ..Default::default() };
        let mut lt = block_on(LongTermMemory::open(store, clock, options)).unwrap();
        for fact in [
            "Likes spicy food, especially Sichuan dishes",
            "Adopted a puppy named Rex last spring",
            "Works as a nurse at the Lisbon general hospital",
            "Plays the violin in a quartet on weekends",
            "Is learning Japanese for a trip to Kyoto",
            "Allergic to peanuts",
            "Has a sister named Ana who lives in Porto",
            "Runs a half marathon every autumn",
            "Prefers tea over coffee in the morning",
            "Drives an old blue Volvo",
            "Reads mystery novels before bed",
            "Wants to buy a flat near the river",
            "用户喜欢喝乌龙茶",
            "用户在上海做软件工程师",
        ] {
            block_on(lt.remember(new_memory(fact, Scope::User, 1))).unwrap();
        }
        let block = |lt: &mut LongTermMemory, q: &str| fitted(lt, q, 400).text;
        for q in [
            "What's the weather like in Tokyo tomorrow?",
            "Can you help me write a cover letter for a marketing job?",
            "Explain how photosynthesis works in simple terms",
            "I'd like some help planning a budget spreadsheet",
            "What is 17 times 23?",
            "Tell me about the history of the Roman empire",
            "今天北京的天气怎么样？",
            "帮我写一封求职信",
        ] {
            let best =
                lt.search(q, None, &SearchOptions::default()).unwrap().first().map(|h| h.explain.coverage);
            assert_eq!(block(&mut lt, q), "", "{q}: best coverage {best:?}");
        }
        for (q, expect) in [
            ("Any dinner ideas? I love spicy food", "Sichuan"),
            ("What should I name my new puppy's toy?", "Rex"),
            ("Which hospital do I work at?", "nurse"),
            ("Suggest phrases for my Kyoto trip", "Japanese"),
            ("When is my next marathon?", "half marathon"),
            // Two topics, each answered by another memory: together they cover it.
            ("Plan my weekend: a quartet rehearsal and snacks without peanuts", "Allergic to peanuts"),
            ("我喜欢喝什么茶？", "乌龙茶"),
            ("作为软件工程师，我该学什么？", "上海"),
        ] {
            assert!(block(&mut lt, q).contains(expect), "{q}");
        }
    }

    /// The index holds exactly the valid memories, each with its text.
    fn index_matches_records(r: &LongTermMemory) -> std::result::Result<(), String> {
        let mut indexed: Vec<(String, String)> = r
            .index
            .ids()
            .map(|id| (id.to_string(), r.index.text_of(id).unwrap_or_default().to_string()))
            .collect();
        let mut valid: Vec<(String, String)> =
            r.records.valid_unordered().map(|e| (e.id.clone(), e.content.clone())).collect();
        indexed.sort();
        valid.sort();
        if indexed == valid {
            Ok(())
        } else {
            Err(format!("index {indexed:?}\nrecords {valid:?}"))
        }
    }

    #[test]
    fn the_index_follows_every_change_of_the_records_here_and_in_another_instance() {
        // The index catches up on the memories each change names rather
        // than comparing every memory: a seeded run of every kind of change,
        // from two instances on one store, checked after each step against
        // the records themselves.
        let store: Rc<dyn Store> = Rc::new(MemoryStore::new());
        let clock = Rc::new(ManualClock::new(1_700_000_000_000));
        let open = || {
            block_on(LongTermMemory::open(store.clone(), clock.clone(), LongTermOptions::default())).unwrap()
        };
        let mut instances = [open(), open()];
        let facts = [
            "Lives in Lisbon",
            "Lives in Lisbon with two cats",
            "Has two cats",
            "Has three cats",
            "Prefers Rust for systems code",
            "Does not prefer Rust for systems code",
            "Works as a nurse",
            "Plays chess on Sundays",
        ];
        let mut next = crate::seeded::picker(0x9e37_79b9_7f4a_7c15);
        for step in 0..400 {
            clock.advance(1000);
            let who = next(2);
            let r = &mut instances[who];
            let ids: Vec<String> = r.records.valid_unordered().map(|e| e.id.clone()).collect();
            let any_id = |k: usize| ids.get(k % ids.len().max(1)).cloned();
            let op = next(9);
            let fact = || new_memory(facts[step % facts.len()], Scope::User, clock.now_ms());
            match op {
                0..=2 => drop(block_on(r.remember(fact()))),
                3 => {
                    drop(block_on(r.remember_many(vec![fact(), new_memory(facts[next(8)], Scope::User, 1)])))
                }
                4 => {
                    if let Some(id) = any_id(next(100)) {
                        drop(block_on(r.supersede(fact(), &[id])));
                    }
                }
                5 => {
                    let superseded: Vec<String> =
                        r.export().entries.into_iter().filter(|e| !e.is_valid()).map(|e| e.id).collect();
                    if let Some(id) = superseded.first() {
                        drop(block_on(r.undo(id)));
                    }
                }
                6 => {
                    if let Some(id) = any_id(next(100)) {
                        drop(block_on(r.forget(&id)));
                    }
                }
                7 => {
                    let mut doc = r.export();
                    if let Some(e) = doc.entries.first_mut() {
                        e.content = format!("{} (edited {step})", e.content);
                    }
                    drop(block_on(r.import(doc)));
                }
                _ if step % 50 == 0 => block_on(r.purge()).unwrap(),
                _ => block_on(r.refresh()).unwrap(),
            }
            if let Err(why) = index_matches_records(r) {
                panic!("step {step}, instance {who}, op {op}:\n{why}");
            }
        }
    }

    #[test]
    fn opened_over_a_store_read_in_parts_it_answers_as_the_instance_that_wrote() {
        // The memory store hands a scan over in parts of 100, the last part
        // first; each memory's terms are made as its part comes in. Damaged
        // and superseded records sit among them.
        let store = Rc::new(MemoryStore::new());
        let clock = Rc::new(ManualClock::new(1_700_000_000_000));
        let open = || {
            let store: Rc<dyn Store> = store.clone();
            block_on(LongTermMemory::open(store, clock.clone(), LongTermOptions::default())).unwrap()
        };
        let words = [
            "harbor", "violin", "granite", "orchid", "lantern", "glacier", "saffron", "compass", "meadow",
            "cobalt", "pepper", "thunder", "velvet", "canyon", "ember", "falcon", "juniper", "marble",
        ];
        let mut next = crate::seeded::picker(0x51ed_2701_a3c4_9b8f);
        let mut writer = open();
        let texts: Vec<String> = (0..350)
            .map(|i| {
                format!(
                    "{} {} {} {} note {i}",
                    words[next(18)],
                    words[next(18)],
                    words[next(18)],
                    words[next(18)]
                )
            })
            .collect();
        let batch = texts.iter().map(|t| new_memory(t.clone(), Scope::User, clock.now_ms())).collect();
        block_on(writer.remember_many(batch)).unwrap();
        let ids: Vec<String> = writer.records.valid_unordered().map(|e| e.id.clone()).take(3).collect();
        block_on(writer.supersede(new_memory("lantern meadow cobalt replaced", Scope::User, 2), &ids))
            .unwrap();
        // Damage from outside this library's writes (which would keep a
        // snapshot the open would read instead): a new generation with it.
        block_on(store.put_many(vec![
            ("lt/entry/broken".into(), "{not json".into()),
            ("lt/meta/generation".into(), "7".into()),
        ]))
        .unwrap();
        let mut reopened = open();
        index_matches_records(&reopened).unwrap();
        assert!(reopened.records.valid_unordered().count() > 300, "most texts are distinct memories");
        assert!(reopened.damage.list().iter().any(|d| d.key == "lt/entry/broken"));
        for query in words.iter().map(|w| w.to_string()).chain(["lantern meadow".into(), "note 17".into()]) {
            let hits = |r: &mut LongTermMemory| -> Vec<(String, String)> {
                let found =
                    r.search(&query, None, &SearchOptions { top_k: 1000, ..Default::default() }).unwrap();
                let mut found: Vec<_> =
                    found.into_iter().map(|h| (h.id, format!("{:.9}", h.score))).collect();
                // Ties break by insertion, which a writer and a reader need not share.
                found.sort();
                found
            };
            assert_eq!(hits(&mut reopened), hits(&mut writer), "{query}");
        }
    }

    #[test]
    fn another_instances_writes_reach_the_index_at_the_next_write_or_refresh() {
        // Read again in full, and (300 memories: a snapshot and a journal)
        // caught up on the journal's records alone.
        another_instances_writes_reach_the_index(0);
        another_instances_writes_reach_the_index(300);
    }

    fn another_instances_writes_reach_the_index(filler: usize) {
        let store: Rc<dyn Store> = Rc::new(MemoryStore::new());
        let clock = Rc::new(ManualClock::new(1_700_000_000_000));
        let open = || {
            block_on(LongTermMemory::open(store.clone(), clock.clone(), LongTermOptions::default())).unwrap()
        };
        let mut next = crate::seeded::picker(0x0ddba11);
        let word = |next: &mut dyn FnMut(usize) -> usize| -> String {
            (0..7).map(|_| char::from(b'a' + next(26) as u8)).collect()
        };
        let texts: Vec<MemoryEntry> = (0..filler)
            .map(|_| {
                let text: Vec<String> = (0..5).map(|_| word(&mut next)).collect();
                new_memory(text.join(" "), Scope::User, clock.now_ms())
            })
            .collect();
        block_on(open().remember_many(texts)).unwrap();
        let (mut a, mut b) = (open(), open());
        let hits =
            |r: &mut LongTermMemory, q: &str| r.search(q, None, &SearchOptions::default()).unwrap().len();
        block_on(a.remember(new_memory("Lives in Lisbon", Scope::User, clock.now_ms()))).unwrap();
        assert_eq!(hits(&mut b, "Lisbon"), 0, "b has not looked yet");
        // A write reloads what changed, and the index follows.
        block_on(b.remember(new_memory("Has two cats", Scope::User, clock.now_ms()))).unwrap();
        assert_eq!(hits(&mut b, "Lisbon"), 1);
        // An import rewriting an entry under the same id reaches the other index too.
        let mut doc = a.export();
        let lisbon = doc.entries.iter_mut().find(|e| e.content == "Lives in Lisbon").unwrap();
        lisbon.content = "Lives in Porto".into();
        block_on(a.import(doc)).unwrap();
        block_on(b.refresh()).unwrap();
        assert_eq!((hits(&mut b, "Lisbon"), hits(&mut b, "Porto")), (0, 1));
        // And a supersession, caught up at a refresh.
        let porto = b.records.valid_unordered().find(|e| e.content == "Lives in Porto").unwrap().id.clone();
        block_on(a.supersede(new_memory("Lives in Braga", Scope::User, clock.now_ms()), &[porto])).unwrap();
        block_on(b.refresh()).unwrap();
        assert_eq!((hits(&mut b, "Porto"), hits(&mut b, "Braga")), (0, 1));
        index_matches_records(&b).unwrap();
        assert_eq!(b.records.valid().len(), filler + 2);
    }

    #[test]
    fn remembered_facts_reach_the_request_and_forgotten_ones_leave_it() {
        let store: Rc<dyn Store> = Rc::new(MemoryStore::new());
        let clock = Rc::new(ManualClock::new(1_700_000_000_000));
        let options = LongTermOptions { agent_id: Some("coder".into()), ..Default::default() };
        let mut longterm =
            block_on(LongTermMemory::open(store.clone(), clock.clone(), options.clone())).unwrap();
        let Remembered::Stored { entry: fact } =
            block_on(longterm.remember(new_memory("我喜欢用 Rust 写代码", Scope::User, clock.now_ms())))
                .unwrap()
        else {
            panic!()
        };
        block_on(longterm.remember(new_memory(
            "Prefers tabs over spaces in Go code",
            Scope::Agent("coder".into()),
            1,
        )))
        .unwrap();
        // The coder cannot write the other agent's memories; the user's view can.
        let secret = new_memory("Secret of another agent", Scope::Agent("other".into()), 1);
        assert!(block_on(longterm.remember(secret.clone())).is_err());
        let mut everyone =
            block_on(LongTermMemory::open(store.clone(), clock.clone(), LongTermOptions::default())).unwrap();
        block_on(everyone.remember(secret)).unwrap();

        // A new Memory on the same namespace: loaded at open, found by the query.
        let mut longterm =
            block_on(LongTermMemory::open(store.clone(), clock.clone(), options.clone())).unwrap();
        let mut session = block_on(Session::open(
            "s",
            store.clone(),
            Rc::new(Estimate),
            clock.clone(),
            SessionOptions::default(),
        ))
        .unwrap();
        block_on(
            session.add(NewMessage {
                content: "我喜欢用什么语言写代码?".into(), ..Default::default()
            }),
        )
        .unwrap();
        let req = ContextRequest {
            query: Some("我喜欢用什么语言写代码? tabs or spaces in go code".into()),
            ..Default::default()
        };
        let source = BlockOf(std::cell::RefCell::new(&mut longterm));
        let ctx = block_on(session.build_context(&req, Some(&source))).unwrap();
        let system = &ctx.messages[0].content;
        assert!(system.contains("我喜欢用 Rust 写代码"), "{system}");
        assert!(system.contains("Prefers tabs"));
        assert!(!system.contains("Secret of another agent"), "other agents' memories stay out");
        assert!(system.find("User profile").unwrap() < system.find("Agent memory").unwrap());

        assert!(block_on(longterm.forget(&fact.id)).unwrap());
        let ctx =
            block_on(session.build_context(&req, Some(&BlockOf(std::cell::RefCell::new(&mut longterm)))))
                .unwrap();
        assert!(!ctx.messages[0].content.contains("我喜欢用 Rust"));
        assert!(longterm.stats().searches.values().sum::<u32>() >= 2);
    }
}
