//! Working memory: the session's messages in and the next request out,
//! and the session's own deletions.

use serde::Serialize;

use super::{Memory, Task};
use crate::entry::{MemoryEntry, Role};
use crate::error::{Error, ErrorCode, Result};
use crate::llm::outbox::{self, OutboxRecord};
use crate::redact::Place;
use crate::store::{layout, Store};
use crate::working::context::Context;
use crate::working::session::listing::{self, SessionInfo};
use crate::working::session::replica;
use crate::working::session::{ContextRequest, LongTermBlock, LongTermSource, NewMessage};

/// A request as a framework adapter sends it ([`Memory::sent_entries`]):
/// the system text (absent when there is none) and the stored entries of
/// the history it sends, in order.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(optional_fields))]
pub struct SentEntries {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub system: Option<String>,
    pub entries: Vec<MemoryEntry>,
}

impl Memory {
    /// Stores a message (store first, then the window) and returns it; queues
    /// a background compression when one is due.
    pub async fn add(&self, mut message: NewMessage) -> Result<MemoryEntry> {
        self.check_open()?;
        message.content = self.scrub(&message.content, Place::Message);
        for call in &mut message.tool_calls {
            call.arguments = self.scrub(&call.arguments, Place::Message);
        }
        let (entry, due, session, previous) = {
            let mut s = self.inner.session.lock().await;
            let entry = s.add(message).await?;
            (entry, s.compression_due(), s.storage_id().to_string(), s.previous_chat_text())
        };
        // Searchable as a past turn from the next search on.
        self.inner.longterm.lock().await.add_turn(&session, &entry, previous.as_deref());
        if due && self.compression_may_start() {
            self.queue(Task::Compress);
        }
        self.embed_soon();
        Ok(entry)
    }

    /// Adds `messages` in order, minus those the session already ends with:
    /// a retried model call hands the same new messages over again. The
    /// longest run of the first of `messages` that the live messages end
    /// with (same role, text as stored, and tool call id) is skipped.
    /// Returns what was added.
    pub async fn add_new(&self, messages: Vec<NewMessage>) -> Result<Vec<MemoryEntry>> {
        self.check_open()?;
        let skip = {
            let mut s = self.inner.session.lock().await;
            s.sync().await?;
            let stored: Vec<(Role, String, &str)> = messages
                .iter()
                .map(|m| {
                    let role = m.role.unwrap_or(Role::User);
                    (role, self.scrub(&m.content, Place::Message), m.tool_call_id.as_deref().unwrap_or(""))
                })
                .collect();
            held_already(&s.messages(), &stored)
        };
        let mut added = Vec::with_capacity(messages.len() - skip);
        for message in messages.into_iter().skip(skip) {
            added.push(self.add(message).await?);
        }
        Ok(added)
    }

    /// `text` redacted, when this memory redacts.
    pub(super) fn scrub(&self, text: &str, place: Place) -> String {
        match &self.inner.redactor {
            Some(r) => r.redact(text, place),
            None => text.to_string(),
        }
    }

    /// A memory as it is written: redacted if asked, then counted by the
    /// tokenizer that counts the session's messages (exact once one is set;
    /// a count made before redaction or before `setTokenizer` would be stale).
    pub(super) async fn prepare_entry(&self, mut entry: MemoryEntry, place: Place) -> MemoryEntry {
        if self.inner.redactor.is_some() {
            entry.content = self.scrub(&entry.content, place);
        }
        entry.count_with(self.inner.session.lock().await.tokenizer().as_ref());
        entry
    }

    pub(super) async fn prepare_entries(&self, entries: Vec<MemoryEntry>, place: Place) -> Vec<MemoryEntry> {
        let mut out = Vec::with_capacity(entries.len());
        for e in entries {
            out.push(self.prepare_entry(e, place).await);
        }
        out
    }

    /// The request for the next turn, and where its tokens went. The
    /// long-term block is fetched first, with no lock held (a host hook may
    /// call back into this memory); the window is then built from the
    /// session, caught up with other writers.
    pub async fn build_context(&self, mut request: ContextRequest) -> Result<Context> {
        self.check_open()?;
        request.query = request.query.map(|q| self.scrub(&q, Place::Query));
        request.recall = request.recall.map(|q| self.scrub(&q, Place::Query));
        // The user's new message is stored as the turn's (the history would
        // otherwise lose every question), unless the turn holds it already.
        if let Some(q) = request.query.clone() {
            let asked = {
                let mut s = self.inner.session.lock().await;
                s.sync().await?;
                s.is_asked(&q)
            };
            if !asked {
                self.add(NewMessage { role: Some(Role::User), content: q, ..NewMessage::default() }).await?;
            }
        }
        let (budget, session, query) = {
            let s = self.inner.session.lock().await;
            (s.options().long_term_budget, s.storage_id().to_string(), s.recall_query(&request).to_string())
        };
        let query = query.as_str();
        let block = if query.is_empty() {
            None
        } else {
            Some(match &self.inner.long_term {
                Some(hook) => self.hook_block(hook.as_ref(), query, budget).await,
                None => match self.query_vector(query).await {
                    Ok(vector) => {
                        self.read(|r| r.block(query, vector.as_deref(), Some(&session))).await.and_then(|b| b)
                    }
                    Err(e) => Err(e),
                },
            })
        };
        let mut s = self.inner.session.lock().await;
        s.sync().await?;
        s.build_context_with(&request, block)
    }

    /// What a framework adapter sends for a request: its system text (none
    /// when it has none) and the stored entries of the history messages it
    /// sends, in order. The builder puts the system text first, as the one
    /// system message (stored system messages join it), so the history
    /// sent is every message after it. The live messages are read after the
    /// request is built, caught up with other writers, so every sent id is
    /// among them.
    pub async fn sent_entries(&self, request: ContextRequest) -> Result<SentEntries> {
        self.check_open()?;
        let Context { messages, report } = self.build_context(request).await?;
        let system = messages.into_iter().next().filter(|m| m.role == Role::System).map(|m| m.content);
        let live = self.inner.session.lock().await.messages();
        let entries =
            report.sent_ids.iter().filter_map(|id| live.iter().find(|e| &e.id == id).cloned()).collect();
        Ok(SentEntries { system, entries })
    }

    /// The host hook's block, or a `TIMEOUT` error once it took too long (a
    /// hook that hangs must not hang the turn).
    async fn hook_block(&self, hook: &dyn LongTermSource, query: &str, budget: u32) -> Result<LongTermBlock> {
        let ms = self.inner.long_term_timeout_ms;
        crate::ports::clock::within(self.inner.clock.as_ref(), ms, hook.block(query, budget))
            .await
            .unwrap_or_else(|| {
                Err(Error::new(
                    ErrorCode::Timeout,
                    format!("the long-term hook did not answer within {ms} ms"),
                ))
            })
    }

    /// Every stored message of the session, oldest first (other writers'
    /// too, in position order).
    pub async fn session_history(&self) -> Result<Vec<MemoryEntry>> {
        self.check_open()?;
        self.inner.session.lock().await.history().await
    }

    /// Commits a summary that replaces the compressible messages through
    /// `through_id` (a host that summarizes by itself).
    pub async fn commit_summary(&self, content: String, through_id: &str) -> Result<MemoryEntry> {
        self.check_open()?;
        let content = self.scrub(&content, Place::Summary);
        let _turn = self.inner.work.lock().await;
        let _held = self.inner.lock.acquire().await?;
        Ok(self.inner.session.lock().await.commit_summary(content, through_id).await?.entry().clone())
    }

    /// Deletes another session of the namespace: its messages, summary and
    /// owed work, and its turns from recall; what stays is an id-only
    /// marker of each message and summary (no text), which a sync carries
    /// to other devices. Long-term memories drawn from it stay
    /// (`derivedFrom` finds them). Returns the records deleted.
    pub async fn delete_session(&self, session_id: &str) -> Result<u32> {
        self.check_open()?;
        crate::working::session::validate_session_id(session_id)?;
        let target = crate::working::session::storage_id_of(session_id);
        let store = {
            let s = self.inner.session.lock().await;
            if s.storage_id() == target {
                return Err(Error::invalid(
                    "this memory has that session open: open another session to delete it",
                ));
            }
            s.store().clone()
        };
        let _held = self.inner.lock.acquire().await?;
        let rows = store.list(&layout::session_prefix(target)).await?;
        // Each message and the summary leave an id-only marker, so a synced
        // device does not bring them back; markers first ([`replica`]).
        let markers: Vec<(String, String)> = rows.iter().filter_map(|(k, v)| replica::marker(k, v)).collect();
        let gone = layout::gone_prefix(target);
        let mut keys: Vec<String> =
            rows.into_iter().map(|(k, _)| k).filter(|k| !k.starts_with(&gone)).collect();
        let n = keys.len() as u32;
        keys.push(layout::outbox_key(target));
        if !markers.is_empty() {
            store.put_many(markers).await?;
        }
        store.delete_many(keys).await?;
        self.inner.longterm.lock().await.forget_session(target).await?;
        Ok(n)
    }

    /// Deletes this session's newest message and returns it (`None` when
    /// there is none, or a summary covers it); it leaves recall too.
    pub async fn pop_message(&self) -> Result<Option<MemoryEntry>> {
        self.check_open()?;
        let _turn = self.inner.work.lock().await;
        let _held = self.inner.lock.acquire().await?;
        let popped = self.inner.session.lock().await.pop().await?;
        if let Some(entry) = &popped {
            self.inner.longterm.lock().await.forget_turns(std::slice::from_ref(entry)).await?;
        }
        Ok(popped)
    }

    /// Empties this session: its messages, summary and owed work are
    /// deleted, and its turns leave recall; long-term memories drawn from it
    /// stay (`derivedFrom` finds them). Returns the messages deleted.
    pub async fn clear_session(&self) -> Result<u32> {
        self.check_open()?;
        let _turn = self.inner.work.lock().await;
        let _held = self.inner.lock.acquire().await?;
        let (deleted, storage_id) = {
            let mut s = self.inner.session.lock().await;
            (s.clear().await?, s.storage_id().to_string())
        };
        self.inner.sealed.delete_many(vec![layout::outbox_key(&storage_id)]).await?;
        self.inner.longterm.lock().await.forget_turns(&deleted).await?;
        Ok(deleted.iter().filter(|e| e.kind != crate::entry::Kind::Summary).count() as u32)
    }

    /// Session ends owed in this namespace.
    pub async fn pending_work(&self) -> Result<Vec<OutboxRecord>> {
        self.check_open()?;
        let store = self.inner.session.lock().await.store().clone();
        outbox::list(store.as_ref(), &self.inner.damage).await
    }

    /// The namespace's sessions with a message or summary stored (this one
    /// included), the most recently active first: what a second device
    /// that synced sessions lists to open one.
    pub async fn sessions(&self) -> Result<Vec<SessionInfo>> {
        self.check_open()?;
        let store = self.inner.session.lock().await.store().clone();
        listing::list(store.as_ref(), &self.inner.damage).await
    }
}

/// How many of the first of `messages` the live messages end with.
fn held_already(live: &[MemoryEntry], messages: &[(Role, String, &str)]) -> usize {
    let same = |e: &MemoryEntry, (role, content, call): &(Role, String, &str)| {
        e.role == *role && e.content == *content && e.tool_call_id.as_deref().unwrap_or("") == *call
    };
    (1..=live.len().min(messages.len()))
        .rev()
        .find(|&k| live[live.len() - k..].iter().zip(&messages[..k]).all(|(e, m)| same(e, m)))
        .unwrap_or(0)
}
