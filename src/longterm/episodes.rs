//! Past conversations in recall (episodic memory): every session's chat
//! messages, each with its neighbouring turns as a weaker context field,
//! and each session's summary, in the same index as the facts; loaded at
//! open, added as this instance stores messages, dropped with them.

use std::collections::BTreeSet;

use super::LongTermMemory;
use crate::entry::{MemoryEntry, Scope};
use crate::error::Result;
use crate::retrieval::{IndexDoc, Origin};
use crate::store::damage;
use crate::store::layout::{vector_key, SESSIONS_PREFIX};
use crate::store::{DamageLog, Store};

/// Neighbouring turns on each side that join a turn's context field (the
/// LoCoMo ranker's setting).
const NEIGHBOURS: usize = 2;

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
pub(super) async fn load_episodes(
    store: &dyn Store,
    log: &DamageLog,
) -> Result<rustc_hash::FxHashMap<String, IndexDoc>> {
    // Grouped by session in a list, not a map: the store lists keys in
    // order, so a session's messages come together (the search from the
    // end finds the group at once), and a map of its own would cost the
    // wasm its code.
    let mut sessions: Vec<(String, Vec<MemoryEntry>)> = Vec::new();
    let mut out = rustc_hash::FxHashMap::default();
    // Keys list in position order, so each session's messages come in order.
    for (key, json) in store.list(SESSIONS_PREFIX).await? {
        let mut parts = key.splitn(4, '/').skip(1);
        let (Some(session), Some(kind)) = (parts.next(), parts.next()) else { continue };
        match kind {
            "msg" => {
                if let Some(e) = damage::parse::<MemoryEntry>(log, &key, &json) {
                    match sessions.iter_mut().rev().find(|(s, _)| s == session) {
                        Some((_, messages)) => messages.push(e),
                        None => sessions.push((session.to_string(), vec![e])),
                    }
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
        // Owned: a set of `&str` cost the wasm a B-tree instance of its own.
        let ids: BTreeSet<String> = crate::order::set_of(deleted.iter().map(|e| e.id.clone()));
        for id in &ids {
            self.episodes.remove(id);
            self.index.remove(id);
        }
        self.unindexed.retain(|id| !ids.contains(id));
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

    /// Indexes the turns added since the last search (call before one).
    pub fn index_pending(&mut self) -> Result<()> {
        for id in std::mem::take(&mut self.unindexed) {
            if let Some(doc) = self.episodes.get(&id) {
                self.index.add(doc.clone())?;
            }
        }
        Ok(())
    }
}
