//! A session: working memory bound to a store. Every message is written to
//! the store first and only then joins the in-memory window, so a failed
//! write is an error to the caller and never a silent gap; a reload from the
//! store restores the same session.
//!
//! Store layout, per session id `S` (keys sort in message order):
//! `session/S/msg/<position>` → the entry as JSON (positions: [`position`]);
//! `session/S/summary` → the summary, with the position it covers through;
//! `session/S/writer/<writer>` → how many writes that writer made, so that
//! an instance notices another's messages and summaries with one small
//! `list` and reloads only then ([`Session::sync`]).
//!
//! A record that does not parse is skipped and reported to the
//! [`DamageLog`]; the rest of the session stays usable.
//!
//! A sub-agent's session id is `agent:<parent>`: its chat messages (user
//! messages and assistant replies without tool calls) are written into the
//! parent session; its tool traffic and system messages stay in its own
//! working memory only, so they never clutter the parent's history.

pub mod listing;
pub mod position;
pub mod replica;

use std::collections::{BTreeMap, BTreeSet};
use std::rc::Rc;

use serde::{Deserialize, Serialize};

use crate::budget::{BudgetOptions, TokenBudget};
use crate::entry::{new_id, Kind, MemoryEntry, Role, Scope, TokenCounts, ToolCall};
use crate::error::{Error, Result};
use crate::ports::clock::Clock;
use crate::ports::LocalBoxFuture;
use crate::store::layout::{
    gone_prefix, is_message_key, is_summary_key, message_prefix, summary_key, writer_prefix, SESSIONS_PREFIX,
};
use crate::store::{damage, DamageLog, Store};
use crate::tokens::Tokenizer;
use crate::working::context::{self, Context};
use crate::working::conversation::{ConversationLimits, ConversationMemory, Seq};
use crate::working::window::Item;

pub use crate::retrieval::block::LongTermBlock;

/// Evicted messages a session without a model keeps in memory (the store
/// keeps all): nothing will summarize them, so they only wait for a summary
/// the caller commits.
pub const PENDING_WITHOUT_MODEL: u32 = 200;

/// Options of a session, with the designs' defaults.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default, deny_unknown_fields)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct SessionOptions {
    pub budget: BudgetOptions,
    /// Live messages may hold this many tokens before the oldest are evicted
    /// to pending compression. Default: the budget's conversation share.
    pub max_tokens: Option<u32>,
    /// Rounds never evicted or compressed. Default 3.
    pub retain_recent_rounds: u32,
    /// At most this many live messages (and so in a request's window); the
    /// oldest beyond move out as the token limit moves them (to compression
    /// with a model, and reported in `leftOut.olderMessages`). Default: no
    /// count limit, the token budget decides.
    pub max_cached_messages: Option<u32>,
    /// Rounds of history a turn sends (x 3 messages); 0 sends none. Default: all.
    pub context_rounds: Option<u32>,
    /// Cap on the conversation window of a request. Default: what is left.
    pub max_window_tokens: Option<u32>,
    /// Tokens the session summary may take. Default 2000.
    pub summary_budget: u32,
    /// Tokens the long-term memory block may take. Default 4000.
    pub long_term_budget: u32,
}

impl Default for SessionOptions {
    fn default() -> Self {
        SessionOptions {
            budget: BudgetOptions::default(),
            max_tokens: None,
            retain_recent_rounds: 3,
            max_cached_messages: None,
            context_rounds: None,
            max_window_tokens: None,
            summary_budget: 2_000,
            long_term_budget: 4_000,
        }
    }
}

/// A message as the caller adds it.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(rename = "MessageInput", optional_fields))]
pub struct NewMessage {
    /// Default "user".
    pub role: Option<Role>,
    pub content: String,
    /// Assistant messages: the calls requested.
    #[cfg_attr(feature = "ts", ts(as = "Option<_>"))]
    #[serde(default)]
    pub tool_calls: Vec<ToolCall>,
    /// Tool messages: the id of the call this answers.
    #[serde(default)]
    pub tool_call_id: Option<String>,
    #[cfg_attr(feature = "ts", ts(as = "Option<_>"))]
    #[serde(default)]
    pub metadata: std::collections::BTreeMap<String, String>,
    /// When it was said (ms since the epoch); default now. For importing
    /// earlier conversations: the message keeps this time, and its position
    /// in the session is still the order it was added in.
    #[serde(default)]
    pub timestamp: Option<i64>,
}

/// What a request asks for.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(optional_fields))]
pub struct ContextRequest {
    /// The user's new message: stored as the turn's user message and sent
    /// last, unless the turn holds it already (a retry, a tool step); also
    /// the long-term query.
    pub query: Option<String>,
    /// What to recall long-term memory with instead of `query`, never
    /// appended: for a request whose new message is already in the history
    /// (a tool step of a turn, or a framework that records before it asks).
    /// Without either, the newest live user message ([`Session::recall_query`]).
    pub recall: Option<String>,
    /// The pinned system prompt.
    pub system: Option<String>,
    /// Tool definitions as the JSON that will be sent (counted as is).
    #[serde(skip)]
    pub tools_json: Option<String>,
}

/// Where the long-term block of a request comes from. Retrieval implements it.
pub trait LongTermSource {
    /// What is relevant to `query`, about `budget_tokens` long (the
    /// long-term budget). The request fits it to the room it has left
    /// ([`crate::retrieval::block::fit`]), fence included.
    fn block<'a>(&'a self, query: &'a str, budget_tokens: u32) -> LocalBoxFuture<'a, Result<LongTermBlock>>;
}

/// What a summary commit did.
#[derive(Debug, Clone, PartialEq)]
pub enum SummaryCommit {
    /// The new summary is stored.
    Written(MemoryEntry),
    /// The stored summary already covered as much or more (another
    /// instance committed meanwhile): it stays, and this is it.
    Kept(MemoryEntry),
}

impl SummaryCommit {
    /// The summary in force after the commit.
    pub fn entry(&self) -> &MemoryEntry {
        match self {
            SummaryCommit::Written(e) | SummaryCommit::Kept(e) => e,
        }
    }
}

/// Working-memory usage, for `usage()`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct SessionUsage {
    pub tokenizer: crate::tokens::TokenizerId,
    pub messages: u32,
    pub tokens: u64,
    pub max_tokens: u32,
    pub usage_ratio: f64,
    pub pending_compression: u32,
    /// Usage passed the budget's compression threshold, or messages wait in
    /// pending compression.
    pub compression_due: bool,
}

pub struct Session {
    id: String,
    /// The session whose key space messages are written to.
    storage_id: String,
    store: Rc<dyn Store>,
    tokenizer: Rc<dyn Tokenizer>,
    clock: Rc<dyn Clock>,
    options: SessionOptions,
    budget: TokenBudget,
    memory: ConversationMemory,
    positions: position::PositionClock,
    /// Writes this instance made (its `writer` record).
    writes: u64,
    /// Every writer's record as last read: a change means reload.
    writers_seen: BTreeMap<String, String>,
    summary: Option<MemoryEntry>,
    damage: Rc<DamageLog>,
}

/// The key space of a session id: a sub-agent ("agent:<parent>") writes
/// into its parent's.
pub fn storage_id_of(session_id: &str) -> &str {
    session_id.strip_prefix("agent:").unwrap_or(session_id)
}

/// Writer records kept before an open clears them.
const MAX_WRITER_RECORDS: usize = 64;

/// Metadata of a summary: the position of the last message it covers.
const COVERS_THROUGH: &str = "coversThrough";
/// The same, as sessions before writer positions stored it (a decimal counter).
const COVERS_THROUGH_LEGACY: &str = "coversThroughSeq";

fn covers_through(summary: &MemoryEntry) -> Option<Seq> {
    match summary.metadata.get(COVERS_THROUGH) {
        Some(p) => position::decode(p),
        None => summary.metadata.get(COVERS_THROUGH_LEGACY)?.parse().ok().map(|n| position::make(n, 0)),
    }
}

fn message_row(key: &str, value: &str, damage: &DamageLog) -> Option<(Seq, MemoryEntry)> {
    let Some(seq) = key.rsplit('/').next().and_then(position::decode) else {
        damage.report(key, "not a message position");
        return None;
    };
    Some((seq, damage::parse(damage, key, value)?))
}

pub fn validate_session_id(id: &str) -> Result<()> {
    crate::entry::validate_name("session id", id)?;
    let parent = id.strip_prefix("agent:").unwrap_or(id);
    if parent.is_empty() || parent.contains('/') || parent.starts_with("agent:") {
        return Err(Error::invalid(format!(
            "session id {id:?} must be non-empty, contain no '/', and nest at most one \"agent:\" prefix"
        )));
    }
    Ok(())
}

impl Session {
    /// Opens a session and restores its messages from the store.
    pub async fn open(
        id: &str,
        store: Rc<dyn Store>,
        tokenizer: Rc<dyn Tokenizer>,
        clock: Rc<dyn Clock>,
        options: SessionOptions,
    ) -> Result<Session> {
        Self::open_with(id, store, tokenizer, clock, options, Rc::default()).await
    }

    /// [`Session::open`], reporting damaged records to `damage`.
    pub async fn open_with(
        id: &str,
        store: Rc<dyn Store>,
        tokenizer: Rc<dyn Tokenizer>,
        clock: Rc<dyn Clock>,
        options: SessionOptions,
        damage: Rc<DamageLog>,
    ) -> Result<Session> {
        validate_session_id(id)?;
        let budget = TokenBudget::new(options.budget)?;
        let max_tokens = options.max_tokens.unwrap_or(budget.available_for_conversation());
        if max_tokens == 0 || options.max_cached_messages == Some(0) {
            return Err(Error::invalid("maxTokens and maxCachedMessages must be positive"));
        }
        let memory = ConversationMemory::new(ConversationLimits {
            max_tokens,
            max_messages: options.max_cached_messages.unwrap_or(u32::MAX),
            retain_recent_rounds: options.retain_recent_rounds,
            max_pending: None,
        });
        let storage_id = storage_id_of(id).to_string();
        let writer = position::new_writer_id(clock.now_ms());
        let mut s = Session {
            id: id.to_string(),
            storage_id,
            store,
            tokenizer,
            clock,
            options,
            budget,
            memory,
            positions: position::PositionClock::new(writer),
            writes: 0,
            writers_seen: BTreeMap::new(),
            summary: None,
            damage,
        };
        s.writers_seen = crate::order::map_of(s.store.list(&writer_prefix(&s.storage_id)).await?);
        // Every instance that ever wrote left a record. Deleting records is
        // safe at any time (a writer still active rewrites its own with its
        // next write, which reads as a change), so they are kept few.
        if s.writers_seen.len() > MAX_WRITER_RECORDS {
            s.store.delete_many(std::mem::take(&mut s.writers_seen).into_keys().collect()).await?;
        }
        s.reload(&BTreeSet::new()).await?;
        Ok(s)
    }

    /// Rebuilds the window from the store: its messages, and the messages
    /// of this instance that are not stored (a sub-agent's tool traffic), in
    /// position order, then the summary.
    /// Reads the session again; of what this instance holds and the store
    /// has not, keeps all but `forgotten`.
    async fn reload(&mut self, forgotten: &BTreeSet<String>) -> Result<()> {
        let summary = self.read_summary().await?;
        let rows = self.store.list(&message_prefix(&self.storage_id)).await?;
        // A list sorted once (the shared sort), not a map of positions: a
        // map of its own would cost the wasm its code.
        let mut messages: Vec<(Seq, MemoryEntry)> =
            rows.iter().filter_map(|(k, v)| message_row(k, v, &self.damage)).collect();
        let prefix = gone_prefix(&self.storage_id);
        let gone: BTreeSet<String> = crate::order::set_of(
            self.store.list(&prefix).await?.into_iter().map(|(k, _)| k[prefix.len()..].to_string()),
        );
        for l in self.memory.pending().iter().chain(self.memory.live()) {
            if !forgotten.contains(&l.entry.id) && !gone.contains(&l.entry.id) {
                messages.push((l.seq, l.entry.clone()));
            }
        }
        // Stable: at a position the store holds, its row comes first and stays.
        crate::order::sort_by(&mut messages, |a, b| a.0.cmp(&b.0));
        messages.dedup_by(|later, first| later.0 == first.0);
        let mut memory = ConversationMemory::new(self.memory.limits());
        for (seq, entry) in messages {
            self.positions.observe(seq);
            memory.push(self.tokenizer.as_ref(), entry, seq);
        }
        self.memory = memory;
        self.summary = summary;
        if let Some(through) = self.summary_covers_through() {
            self.memory.summarized_through(through);
        }
        Ok(())
    }

    async fn read_summary(&self) -> Result<Option<MemoryEntry>> {
        let key = summary_key(&self.storage_id);
        Ok(self.store.get(&key).await?.and_then(|json| damage::parse(&self.damage, &key, &json)))
    }

    /// Catches up with other writers of this session (tabs, workers, a
    /// parent or sub-agent): one `list` of the writer records, and a reload
    /// only when one changed. Says whether it reloaded.
    pub async fn sync(&mut self) -> Result<bool> {
        let writers: BTreeMap<String, String> =
            crate::order::map_of(self.store.list(&writer_prefix(&self.storage_id)).await?);
        let own = self.writer_key();
        let changed = writers.iter().any(|(k, v)| *k != own && self.writers_seen.get(k) != Some(v));
        self.writers_seen = writers;
        if changed {
            self.reload(&BTreeSet::new()).await?;
        }
        Ok(changed)
    }

    fn writer_key(&self) -> String {
        format!("{}{:016x}", writer_prefix(&self.storage_id), self.positions.writer())
    }

    /// This writer's record, bumped: written with each message or summary,
    /// in the same transaction.
    fn next_writer_record(&mut self) -> (String, String) {
        self.writes += 1;
        (self.writer_key(), self.writes.to_string())
    }

    /// Deletes the messages `ids` from every session of the namespace, and
    /// every summary that covers one of them (the next compression
    /// summarizes what is left); this session reloads without them, and
    /// other instances of those sessions at their next sync (the markers
    /// left in each tell them). Returns what it deleted.
    pub async fn forget_messages(&mut self, ids: &BTreeSet<String>) -> Result<Vec<MemoryEntry>> {
        let (mut keys, mut deleted, mut markers) = (Vec::new(), Vec::new(), Vec::new());
        for (key, value) in self.store.list(SESSIONS_PREFIX).await? {
            let (message, summary) = (is_message_key(&key), is_summary_key(&key));
            if !(message || summary) {
                continue;
            }
            let Ok(e) = serde_json::from_str::<MemoryEntry>(&value) else { continue };
            if (message && ids.contains(&e.id)) || (summary && e.sources.iter().any(|s| ids.contains(s))) {
                markers.extend(replica::marker(&key, &value));
                keys.push(key);
                deleted.push(e);
            }
        }
        if !keys.is_empty() {
            self.erase(markers, keys).await?;
        }
        self.reload(ids).await?;
        Ok(deleted)
    }

    /// Writes the markers of a deletion (with this writer's record), then
    /// deletes: cut off between, the deletion is known and finished at the
    /// next sync ([`replica`]), never undone.
    async fn erase(&mut self, mut markers: Vec<(String, String)>, keys: Vec<String>) -> Result<()> {
        markers.push(self.next_writer_record());
        self.store.put_many(markers).await?;
        self.store.delete_many(keys).await
    }

    /// Deletes the session's newest message (an agent framework undoing
    /// its last item) and returns it; `None` when the session has none.
    /// A message a summary already covers is not taken back.
    pub async fn pop(&mut self) -> Result<Option<MemoryEntry>> {
        self.sync().await?;
        let newest = self.memory.pending().iter().chain(self.memory.live()).max_by_key(|l| l.seq);
        let Some((seq, entry)) = newest.map(|l| (l.seq, l.entry.clone())) else { return Ok(None) };
        if self.summary_covers_through().is_some_and(|through| seq <= through) {
            return Ok(None);
        }
        let key = format!("{}{}", message_prefix(&self.storage_id), position::encode(seq));
        let stored = self.store.get(&key).await?;
        let marker = stored.and_then(|v| replica::marker(&key, &v));
        let marker = marker
            .unwrap_or_else(|| (format!("{}{}", gone_prefix(&self.storage_id), entry.id), String::new()));
        self.erase(vec![marker], vec![key]).await?;
        self.reload(&crate::order::set_of([entry.id.clone()])).await?;
        Ok(Some(entry))
    }

    /// Deletes this session's messages and summary; the session goes on
    /// empty (positions keep counting, so a later message never takes an
    /// old one's place); other instances of it drop what they hold at
    /// their next sync. Returns what it deleted.
    pub async fn clear(&mut self) -> Result<Vec<MemoryEntry>> {
        let (mut keys, mut deleted, mut markers) = (Vec::new(), Vec::new(), Vec::new());
        let summary = summary_key(&self.storage_id);
        let mut rows = self.store.list(&message_prefix(&self.storage_id)).await?;
        rows.extend(self.store.get(&summary).await?.map(|v| (summary, v)));
        for (key, value) in rows {
            deleted.extend(serde_json::from_str::<MemoryEntry>(&value).ok());
            markers.extend(replica::marker(&key, &value));
            keys.push(key);
        }
        // What this instance holds but the store lost goes too.
        let gone = gone_prefix(&self.storage_id);
        for l in self.memory.pending().iter().chain(self.memory.live()) {
            if !deleted.iter().any(|e| e.id == l.entry.id) {
                deleted.push(l.entry.clone());
                markers.push((format!("{gone}{}", l.entry.id), String::new()));
            }
        }
        self.erase(markers, keys).await?;
        self.memory = ConversationMemory::new(self.memory.limits());
        self.summary = None;
        Ok(deleted)
    }

    /// Commits a summary of the session up to and including the message
    /// `through_id`, which must be compressible (pending, or live before the
    /// retained rounds).
    pub async fn commit_summary(&mut self, content: String, through_id: &str) -> Result<SummaryCommit> {
        if content.trim().is_empty() {
            return Err(Error::invalid("a summary needs content"));
        }
        let through =
            self.memory.compressible().iter().find(|l| l.entry.id == through_id).map(|l| l.seq).ok_or_else(
                || {
                    Error::new(
                        crate::error::ErrorCode::NotFound,
                        format!("no compressible message {through_id:?}"),
                    )
                },
            )?;
        self.commit_summary_through(content, through).await
    }

    /// Commits a summary covering the session through message `seq`: the
    /// summary is stored first; only then do the messages it covers leave
    /// the window. The original messages stay in the store. A summary never
    /// moves back: when the stored one (this instance's, or another's that
    /// committed meanwhile) already covers `seq`, it stays and is returned.
    /// Across instances the caller holds the namespace lock, so the read and
    /// the write are one step.
    pub async fn commit_summary_through(&mut self, content: String, seq: Seq) -> Result<SummaryCommit> {
        let key = summary_key(&self.storage_id);
        let raw = self.store.get(&key).await?;
        // The summary replaced leaves its marker ([`replica`]).
        let replaced = raw.as_deref().and_then(|v| replica::marker(&key, v));
        if let Some(stored) = raw.and_then(|json| damage::parse::<MemoryEntry>(&self.damage, &key, &json)) {
            if let Some(c) = covers_through(&stored).filter(|&c| c >= seq) {
                self.memory.summarized_through(c);
                self.summary = Some(stored.clone());
                return Ok(SummaryCommit::Kept(stored));
            }
        }
        let mut summary =
            MemoryEntry::new(content, Kind::Summary, Role::System, Scope::Session, self.clock.now_ms());
        summary.metadata.insert(COVERS_THROUGH.into(), position::encode(seq));
        // Provenance: what the summary it replaces covered, and the
        // messages it newly covers.
        summary.sources = self.summary.as_ref().map(|s| s.sources.clone()).unwrap_or_default();
        for line in self.memory.compressible() {
            if line.seq <= seq && !summary.sources.contains(&line.entry.id) {
                summary.sources.push(line.entry.id.clone());
            }
        }
        let json = serde_json::to_string(&summary).map_err(|e| Error::invalid(e.to_string()))?;
        let writer = self.next_writer_record();
        let items = [(key.clone(), json), writer].into_iter().chain(replaced).collect();
        if let Err(e) = self.store.put_many(items).await {
            self.writes -= 1;
            return Err(e);
        }
        self.damage.repaired(&key);
        self.memory.summarized_through(seq);
        self.summary = Some(summary.clone());
        Ok(SummaryCommit::Written(summary))
    }

    /// The last message the summary covers.
    pub fn summary_covers_through(&self) -> Option<Seq> {
        covers_through(self.summary.as_ref()?)
    }

    /// What a compression would summarize now, oldest first, with positions.
    pub fn compressible(&self) -> Vec<(Seq, MemoryEntry)> {
        self.memory.compressible().into_iter().map(|l| (l.seq, l.entry.clone())).collect()
    }

    /// True when the window has passed the compression threshold or
    /// messages wait in pending compression.
    pub fn compression_due(&self) -> bool {
        self.usage().compression_due
    }

    pub fn summary(&self) -> Option<&MemoryEntry> {
        self.summary.as_ref()
    }

    pub fn id(&self) -> &str {
        &self.id
    }

    pub fn budget(&self) -> &TokenBudget {
        &self.budget
    }

    pub fn budget_mut(&mut self) -> &mut TokenBudget {
        &mut self.budget
    }

    /// Validates and stores a message, then adds it to the window. On a
    /// store failure the error is returned and memory is unchanged.
    pub async fn add(&mut self, message: NewMessage) -> Result<MemoryEntry> {
        let role = message.role.unwrap_or(Role::User);
        let now = self.clock.now_ms();
        // Checked with the rest of the entry (`validate`).
        let said = message.timestamp.unwrap_or(now);
        let entry = MemoryEntry {
            id: new_id(said),
            content: message.content,
            kind: if role == Role::Tool { Kind::ToolResult } else { Kind::Conversation },
            role,
            scope: Scope::Session,
            timestamp: said,
            metadata: message.metadata,
            importance: 0.5,
            tool_calls: message.tool_calls,
            tool_call_id: message.tool_call_id,
            tokens: TokenCounts::default(),
            superseded_by: None,
            valid_to: None,
            sources: Vec::new(),
            temporal: None,
            valid_from: None,
        };
        entry.validate()?;
        let seq = self.positions.next(now);
        let is_chat = matches!(role, Role::User | Role::Assistant) && entry.tool_calls.is_empty();
        let persist = !self.id.starts_with("agent:") || is_chat;
        if persist {
            let key = format!("{}{}", message_prefix(&self.storage_id), position::encode(seq));
            let json = serde_json::to_string(&entry).map_err(|e| Error::invalid(e.to_string()))?;
            let writer = self.next_writer_record();
            if let Err(e) = self.store.put_many(vec![(key, json), writer]).await {
                self.writes -= 1;
                return Err(e);
            }
        }
        self.memory.push(self.tokenizer.as_ref(), entry, seq);
        let live = self.memory.live();
        Ok(live.back().expect("just pushed").entry.clone())
    }

    /// Bounds the messages waiting for a summary (see
    /// [`ConversationLimits::max_pending`]) to `maxCachedMessages`, else
    /// [`PENDING_WITHOUT_MODEL`]: for a session nothing compresses.
    pub fn bound_pending(&mut self) {
        let max = self.options.max_cached_messages.unwrap_or(PENDING_WITHOUT_MODEL);
        let limits = ConversationLimits { max_pending: Some(max), ..self.memory.limits() };
        let mut memory = ConversationMemory::new(limits);
        for l in self.memory.pending().iter().chain(self.memory.live()) {
            memory.push(self.tokenizer.as_ref(), l.entry.clone(), l.seq);
        }
        if let Some(through) = self.summary_covers_through() {
            memory.summarized_through(through);
        }
        self.memory = memory;
    }

    /// The text of the chat message before the newest one (a past turn's
    /// context when it is indexed for recall).
    /// This instance's writer id: its messages' positions carry it.
    pub fn writer(&self) -> u64 {
        self.positions.writer()
    }

    /// Whether the turn holds `query` as its message already
    /// ([`context::is_asked`]).
    pub fn is_asked(&self, query: &str) -> bool {
        context::is_asked(self.memory.live().iter().map(|l| &l.entry), query)
    }

    pub fn previous_chat_text(&self) -> Option<String> {
        self.memory.live().iter().rev().skip(1).find(|l| l.entry.is_chat()).map(|l| l.entry.content.clone())
    }

    /// Switches the counter (e.g. once an exact pack has loaded); counts are
    /// cached per tokenizer on each message.
    pub fn set_tokenizer(&mut self, tokenizer: Rc<dyn Tokenizer>) {
        self.memory.recount(tokenizer.as_ref());
        self.tokenizer = tokenizer;
    }

    pub fn tokenizer(&self) -> &Rc<dyn Tokenizer> {
        &self.tokenizer
    }

    pub fn usage(&self) -> SessionUsage {
        let tokens = self.memory.live_tokens();
        SessionUsage {
            tokenizer: self.tokenizer.id(),
            messages: self.memory.live().len() as u32,
            tokens,
            max_tokens: self.memory.limits().max_tokens,
            usage_ratio: self.memory.usage_ratio(),
            pending_compression: self.memory.pending().len() as u32,
            compression_due: self.budget.needs_compression(tokens) || !self.memory.pending().is_empty(),
        }
    }

    pub fn pending_compression(&self) -> Vec<MemoryEntry> {
        self.memory.pending().iter().map(|l| l.entry.clone()).collect()
    }

    /// Live messages, oldest first.
    pub fn messages(&self) -> Vec<MemoryEntry> {
        self.memory.live().iter().map(|l| l.entry.clone()).collect()
    }

    /// What a request recalls long-term memory with: its `recall`, else its
    /// new message, else the newest live user message (a request that names
    /// neither is about the turn the session holds: every framework adapter
    /// asks so).
    pub fn recall_query<'a>(&'a self, request: &'a ContextRequest) -> &'a str {
        let newest_user = || {
            self.memory
                .live()
                .iter()
                .rev()
                .find(|l| l.entry.role == Role::User)
                .map(|l| l.entry.content.as_str())
        };
        request.recall.as_deref().or(request.query.as_deref()).or_else(newest_user).unwrap_or_default()
    }

    /// Every message of the session as stored, oldest first (older ones than
    /// memory holds are read from the store).
    pub async fn history(&self) -> Result<Vec<MemoryEntry>> {
        Ok(self.history_with_seq().await?.into_iter().map(|(_, e)| e).collect())
    }

    /// [`Session::history`] with each message's position in the session.
    pub async fn history_with_seq(&self) -> Result<Vec<(Seq, MemoryEntry)>> {
        let rows = self.store.list(&message_prefix(&self.storage_id)).await?;
        Ok(rows.iter().filter_map(|(k, v)| message_row(k, v, &self.damage)).collect())
    }

    pub fn store(&self) -> &Rc<dyn Store> {
        &self.store
    }

    pub fn clock(&self) -> &Rc<dyn Clock> {
        &self.clock
    }

    pub fn options(&self) -> &SessionOptions {
        &self.options
    }

    /// The key space this session's messages live in (a sub-agent's is its
    /// parent's).
    pub fn storage_id(&self) -> &str {
        &self.storage_id
    }

    /// Builds the request: the long-term block is fetched while the window is
    /// prepared, and a long-term failure degrades to no block (with the error
    /// in the report), never a failed turn.
    pub async fn build_context(
        &self,
        request: &ContextRequest,
        long_term: Option<&dyn LongTermSource>,
    ) -> Result<Context> {
        let query = self.recall_query(request);
        let block = match long_term {
            Some(src) if !query.is_empty() => Some(src.block(query, self.options.long_term_budget).await),
            _ => None,
        };
        self.build_context_with(request, block)
    }

    /// [`Session::build_context`] with the long-term block already fetched
    /// (`None`: no block asked for; an error: reported, the turn goes on).
    pub fn build_context_with(
        &self,
        request: &ContextRequest,
        long_term: Option<Result<LongTermBlock>>,
    ) -> Result<Context> {
        let history = self.turn_history();
        let (long_term_block, long_term_error) = match long_term {
            Some(Ok(block)) => (Some(block), None),
            Some(Err(e)) => (None, Some(e.to_string())),
            None => (None, None),
        };
        let items: Vec<Item> = history.iter().map(|l| Item { entry: &l.entry, tokens: l.tokens }).collect();
        // Complete: nothing this session said is missing from the history
        // (no eviction, no summary standing in for older messages).
        let uncovered_older = self.memory.uncovered_older();
        let complete =
            self.summary.is_none() && uncovered_older == 0 && history.len() == self.memory.live().len();
        let mut ctx = context::build(context::ContextInput {
            tokenizer: self.tokenizer.as_ref(),
            budget: &self.budget,
            system: request.system.as_deref(),
            tools_json: request.tools_json.as_deref(),
            history: &items,
            history_is_complete: complete,
            uncovered_older,
            summary: self.summary.as_ref().map(|s| s.content.as_str()),
            summary_budget: self.options.summary_budget,
            long_term: long_term_block.as_ref(),
            long_term_budget: self.options.long_term_budget,
            query: request.query.as_deref(),
            max_window_tokens: self.options.max_window_tokens,
        })?;
        ctx.report.long_term_error = long_term_error;
        Ok(ctx)
    }

    /// The live messages a turn may send: all, or the last `context_rounds x 3`.
    fn turn_history(&self) -> Vec<&crate::working::conversation::Live> {
        let live = self.memory.live();
        let n = match self.options.context_rounds {
            Some(rounds) => (rounds as usize * 3).min(live.len()),
            None => live.len(),
        };
        live.iter().skip(live.len() - n).collect()
    }
}

#[cfg(test)]
mod tests;
