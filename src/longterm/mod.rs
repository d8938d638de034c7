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
//!
//! Past conversations in the index are `episodes.rs`; the request's block
//! (pinned facts, the query's facts, past turns) is `block.rs`.

mod block;
#[cfg(test)]
pub mod dedup;
#[cfg(not(test))]
pub use agent_memory_hot::longterm::dedup;
mod episodes;
mod lines;
pub mod log;
mod plan;
pub mod records;
mod temporal;

pub use records::{new_memory, Changes, ExportDocument, ImportReport, RecordStats, Records, Remembered};

use std::rc::Rc;

use serde::{Deserialize, Serialize};

use crate::embed::vectors;
use crate::entry::{MemoryEntry, Scope};
use crate::error::{Error, ErrorCode, Result};
use crate::longterm::dedup::DedupOptions;
use crate::longterm::episodes::load_episodes;
use crate::ports::clock::Clock;
use crate::retrieval::{Bm25Params, Hit, IndexDoc, Origin, SearchCounts, SearchIndex, SearchOptions};
use crate::store::layout::{vector_id_of, vector_key, VECTOR_PREFIX};
use crate::store::{DamageLog, Store};

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
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct LongTermStats {
    #[serde(flatten)]
    pub long_term: RecordStats,
    /// `"YYYY-MM-DD|scope"` -> searches.
    pub searches: std::collections::BTreeMap<String, u32>,
}

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

    /// The sync item ids of every operation held ([`crate::sync`]).
    pub fn item_ids(&self) -> Vec<crate::sync::ItemId> {
        self.records.item_ids()
    }

    /// The stored lines of those of `items` held.
    pub fn lines_of(&self, items: &[crate::sync::ItemId]) -> Vec<(crate::sync::ItemId, String)> {
        self.records.lines_of(items)
    }

    /// Lands the operations a sync peer sent ([`Records::receive`]); those
    /// that are not what their ids name are reported as damaged
    /// (`sync/<op id>`). Gives how many, and the conflicts settled.
    pub async fn receive(&mut self, lines: Vec<(crate::sync::ItemId, String)>) -> Result<(u32, u32)> {
        let received = self.records.receive(lines).await;
        self.sync().await?;
        let (rejected, conflicts) = received?;
        for (id, why) in &rejected {
            self.damage.report(&format!("sync/{}", id.as_str()), why);
        }
        Ok((rejected.len() as u32, conflicts))
    }

    /// Drops the operations listed as `items`, deleted at the peer since
    /// the two last held them alike ([`crate::sync::held`]).
    pub async fn drop_items(&mut self, items: &[crate::sync::ItemId]) -> Result<()> {
        let dropped = self.records.drop_items(items).await;
        self.sync().await?;
        dropped
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
}

#[cfg(test)]
mod tests;
