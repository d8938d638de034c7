//! `Memory`: what an app holds. One session's working memory, the
//! namespace's long-term memory and the model's background work behind one
//! object, with every effect behind a port (`Store`, `Llm`, `Clock`, `Lock`,
//! `Spawn`), so all of it, background work and interleavings included, runs
//! natively under test. The JS class is a mechanical wrapper of this one.
//!
//! # Who waits for what
//! - `add` writes the message and returns; when compression is due it
//!   queues [`Task::Compress`] on the `Spawn` port instead of waiting on the
//!   model. One compression is queued at a time; after a failure the next
//!   waits out a backoff (1 s doubling to 5 min, a deadline kept as data and
//!   compared with `now` at the next `add`).
//! - Compression and session end of a session run one at a time (the
//!   `work` queue), so an older summary can never land after a newer one;
//!   across instances the summary commit is a compare-and-set under the
//!   namespace lock ([`Session::commit_summary_through`]).
//! - Session end owed by an earlier run ([`crate::llm::outbox`]) resumes in
//!   the background when the memory opens ([`Task::ResumeSessionEnd`]).
//! - `idle()` resolves once no task runs: a Worker awaits it before it
//!   returns, a test before it checks.
//!
//! # Locks
//! One lock per namespace (the `Lock` port: Web Locks across tabs, an
//! in-realm lock elsewhere), always taken before this instance's mutexes,
//! never held across a model call or a host hook. It guards long-term writes
//! (after a fresh read, so dedup sees what another tab just stored),
//! summary commits, and applying a session end's results.
//!
//! # Reads see other instances
//! Every long-term read first checks the stored generation (one `get`) and
//! reloads when another instance wrote; a request first checks the
//! session's writer records (one small `list`) and reloads the window when
//! another writer added messages or a summary.

#[cfg(test)]
mod tests;

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use futures::channel::oneshot;
use futures::lock::Mutex;
use serde::Serialize;

use crate::embed::{EmbedOptions, EmbedStats, Embedding};
use crate::entry::{MemoryEntry, Role, Scope};
use crate::error::{Error, ErrorCode, Result};
use crate::llm::compress::{self, CompressReport};
use crate::llm::consolidate::{self, EndSessionOptions, EndSessionReport};
use crate::llm::governor::{Governor, LlmOptions, LlmStats};
use crate::llm::outbox::{self, OutboxRecord};
use crate::longterm::dedup::DedupOptions;
use crate::longterm::records::{ExportDocument, ImportReport, Remembered};
use crate::longterm::{LongTermMemory, LongTermOptions, LongTermStats};
use crate::ports::{Cipher, Clock, Embedder, Llm, Lock, NamedLock, Spawn};
use crate::redact::{Patterns, Place, RedactOptions, RedactionStats, Redactor};
use crate::retrieval::{Hit, SearchOptions};
use crate::store::sealed::SealedExport;
use crate::store::{DamageHook, DamageLog, Damaged, EncryptionStats, SealedStore, Store};
use crate::tokens::Tokenizer;
use crate::working::context::Context;
use crate::working::session::{
    ContextRequest, LongTermBlock, LongTermSource, NewMessage, Session, SessionOptions, SessionUsage,
};

/// What `Memory::open` needs to know.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct MemoryOptions {
    /// One user's space: a database, or a key prefix of a shared backend.
    pub namespace: String,
    pub session_id: String,
    /// The agent whose memories join the user's in requests.
    pub agent_id: Option<String>,
    /// User facts pinned in every request (default 6; see
    /// [`LongTermOptions::pinned_profile`]).
    pub pinned_profile: Option<u32>,
    pub session: SessionOptions,
    pub dedup: DedupOptions,
    /// The model's call policy, when there is a model.
    pub llm: LlmOptions,
    /// Compress in the background when `add` finds it due. Default true.
    pub auto_compress: Option<bool>,
    /// The host's long-term hook must answer within this; past it the turn
    /// goes on without the block (the report says why). Default 10 s.
    pub long_term_timeout_ms: Option<u32>,
    /// The embedder's call policy, when there is an embedder.
    pub embed: EmbedOptions,
    /// Redact personal data (e-mail, phone, card, IBAN, API keys, the
    /// host's patterns) from messages, memories, summaries, imports and
    /// queries before anything is stored or sent ([`crate::redact`]).
    pub redact: Option<RedactOptions>,
    /// With a cipher: read plain records of a namespace that was not
    /// encrypted, and seal them in the background. Without it, a plain
    /// record in an encrypted namespace is damaged (it may have been planted).
    pub migrate_plain: bool,
}

/// Default of [`MemoryOptions::long_term_timeout_ms`].
pub const LONG_TERM_TIMEOUT_MS: u32 = 10_000;

/// The effects a `Memory` goes through.
pub struct Ports {
    pub store: Rc<dyn Store>,
    pub clock: Rc<dyn Clock>,
    pub locks: Rc<dyn Lock>,
    pub spawner: Rc<dyn Spawn>,
    /// Counts until `set_tokenizer` gives another.
    pub tokenizer: Rc<dyn Tokenizer>,
    pub llm: Option<Rc<dyn Llm>>,
    /// The host's embedding model: with one, recall is hybrid (BM25 and
    /// cosine fused), and every memory and past turn gets a vector in the
    /// background.
    pub embedder: Option<Rc<dyn Embedder>>,
    /// The host's long-term block, in place of the built-in retrieval.
    pub long_term: Option<Rc<dyn LongTermSource>>,
    /// Hears of each damaged record once.
    pub on_damaged: Option<DamageHook>,
    /// Encryption at rest: every record sealed under the cipher's first
    /// key, read under any of its keys ([`crate::store::sealed`]).
    pub cipher: Option<Rc<dyn Cipher>>,
    /// The host's own redaction patterns (used with `redact`).
    pub patterns: Option<Rc<dyn Patterns>>,
}

/// Background work the core queues; the `Spawn` port runs it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Task {
    Compress,
    ResumeSessionEnd,
    /// Vectors for what has none: new memories and turns, and everything
    /// after the embedding model changed.
    Embed,
    /// Records under an older key (or plain, when migrating) sealed under
    /// the current key.
    Reseal,
}

/// Long-term figures, with the records that could not be read.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct MemoryStats {
    #[serde(flatten)]
    pub longterm: LongTermStats,
    /// Records skipped because they do not parse, by key.
    pub damaged: Vec<Damaged>,
    /// Embedder calls, and memories and turns with and without a vector.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub embedding: Option<EmbeddingStats>,
    /// The sealing key's id and the reseal pass's progress, when encrypted.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub encryption: Option<EncryptionStats>,
    /// What this instance redacted, by kind and place, when it redacts.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub redactions: Option<RedactionStats>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct EmbeddingStats {
    #[serde(flatten)]
    pub calls: EmbedStats,
    pub embedded: u32,
    pub pending: u32,
}

/// Backoff of background compression after failures: 1 s, doubling, 5 min
/// at most. A deadline, compared with `now` when the next `add` asks.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Backoff {
    failures: u32,
    until_ms: i64,
}

const BACKOFF_FIRST_MS: i64 = 1_000;
const BACKOFF_MAX_MS: i64 = 300_000;

impl Backoff {
    fn failed(self, now_ms: i64) -> Backoff {
        let failures = self.failures.saturating_add(1);
        let wait = BACKOFF_FIRST_MS.saturating_mul(1 << (failures - 1).min(20)).min(BACKOFF_MAX_MS);
        Backoff { failures, until_ms: now_ms.saturating_add(wait) }
    }
}

/// The embedder and the state of its background work.
struct Vectors {
    embedding: Embedding,
    /// A background embedding run is queued or running.
    queued: Cell<bool>,
    backoff: Cell<Backoff>,
}

/// What `memories` lists.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct MemoriesOptions {
    /// As of this time (ms): the memories in force then, superseded since
    /// or not. Default: now, current memories only.
    pub as_of: Option<i64>,
}

/// A time given by the caller: ms since the epoch, 1970 to 9999.
fn check_time(ms: i64, what: &str) -> Result<()> {
    if (0..=crate::entry::MAX_TIMESTAMP_MS).contains(&ms) {
        Ok(())
    } else {
        Err(Error::invalid(format!("{what} must be ms since the epoch, from 1970 to 9999")))
    }
}

/// Records a reseal pass writes per hold of the namespace lock: writers
/// wait for one round at most.
const RESEAL_ROUND: usize = 64;

/// Documents an embedding run takes per round: one embedder call of a
/// default batch, and one store write.
const EMBED_ROUND: usize = 64;

/// The model and the state of its background work.
struct Model {
    governor: Governor,
    auto_compress: bool,
    /// A background compression is queued or running.
    compress_queued: Cell<bool>,
    backoff: Cell<Backoff>,
}

struct Inner {
    session: Mutex<Session>,
    longterm: Mutex<LongTermMemory>,
    /// Compression and session end of this session, one at a time.
    work: Mutex<()>,
    lock: NamedLock,
    /// One session end of this session at a time across instances (tabs
    /// ending one shared session at once): the later one finds the messages
    /// processed and judges nothing twice. Held across the model call; it
    /// blocks only another end of the same session, never `add`,
    /// `remember` or `open` (those take the namespace lock, `lock`).
    end_lock: NamedLock,
    clock: Rc<dyn Clock>,
    spawner: Rc<dyn Spawn>,
    model: Option<Model>,
    vectors: Option<Vectors>,
    long_term: Option<Rc<dyn LongTermSource>>,
    long_term_timeout_ms: u32,
    damage: Rc<DamageLog>,
    /// The store every reader and writer goes through (sealing, if encrypted).
    sealed: Rc<SealedStore>,
    redactor: Option<Redactor>,
    /// Background tasks not yet settled, and who waits for none.
    running: Cell<u32>,
    idle_waiters: RefCell<Vec<oneshot::Sender<()>>>,
}

/// A session and its namespace's long-term memory. Cloning shares it.
#[derive(Clone)]
pub struct Memory {
    inner: Rc<Inner>,
}

/// The longest namespace: a database name or a key prefix on every backend.
pub const MAX_NAMESPACE_LEN: usize = 128;

/// A namespace names a database or a key prefix, so it must not be able to
/// reach another's: 1 to 128 characters from `A-Z a-z 0-9 - _ . @ : + = ~`,
/// not `.` or `..`. No separator (`/`, `\`), no control or blank
/// character, and no non-ASCII letter, whose look-alikes (a Cyrillic `а`
/// for a Latin `a`) would make two namespaces that read the same. A user id
/// outside this set can be hashed or encoded by the host.
pub fn validate_namespace(ns: &str) -> Result<()> {
    let allowed = |c: char| c.is_ascii_alphanumeric() || "-_.@:+=~".contains(c);
    if ns.is_empty() || ns.len() > MAX_NAMESPACE_LEN || ns == "." || ns == ".." || !ns.chars().all(allowed) {
        return Err(Error::invalid(format!(
            "namespace must be 1 to {MAX_NAMESPACE_LEN} characters from A-Z a-z 0-9 - _ . @ : + = ~ (not \".\" or \"..\"); \
             hash or encode other user ids"
        )));
    }
    Ok(())
}

/// The lock name of a namespace (shared by every instance on it).
pub fn lock_name(namespace: &str) -> String {
    format!("agent-memory/{namespace}")
}

fn no_llm() -> Error {
    Error::invalid("this memory has no llm: pass `llm` to Memory.open")
}

fn busy() -> Error {
    Error::new(ErrorCode::Busy, "the memory is busy with an async call; await it first")
}

/// Deletes a namespace's every record without opening it: the way out when
/// it cannot be opened, and a user's "delete my data". Returns the count.
pub async fn delete_namespace(store: &dyn Store) -> Result<u32> {
    crate::store::delete_all(store).await
}

impl Memory {
    /// Opens (or restores) a session on the namespace's store. Damaged
    /// records are skipped and reported, never a failed open.
    pub async fn open(options: MemoryOptions, ports: Ports) -> Result<Memory> {
        validate_namespace(&options.namespace)?;
        if let Some(agent) = &options.agent_id {
            crate::entry::validate_name("agent id", agent)?;
        }
        let damage = Rc::new(match ports.on_damaged {
            Some(hook) => DamageLog::with_hook(hook),
            None => DamageLog::default(),
        });
        let governor = match ports.llm {
            Some(llm) => Some(Governor::new(llm, ports.clock.clone(), options.llm)?),
            None => None,
        };
        let embedding = match ports.embedder {
            Some(embedder) => Some(Embedding::new(embedder, ports.clock.clone(), options.embed)?),
            None => None,
        };
        let sealed = Rc::new(match ports.cipher {
            Some(cipher) => {
                SealedStore::encrypted(
                    ports.store,
                    cipher,
                    &options.namespace,
                    damage.clone(),
                    options.migrate_plain,
                )
                .await?
            }
            None => SealedStore::plain(ports.store, damage.clone()),
        });
        let store: Rc<dyn Store> = sealed.clone();
        let lock = NamedLock::new(ports.locks.clone(), lock_name(&options.namespace));
        let defaults = LongTermOptions::default();
        let longterm_options = LongTermOptions {
            agent_id: options.agent_id,
            dedup: options.dedup,
            pinned_profile: options.pinned_profile.unwrap_or(defaults.pinned_profile),
            ..defaults
        };
        let longterm = async {
            // Opening drops expired hashes: a write.
            let _held = lock.acquire().await?;
            LongTermMemory::open_with(store.clone(), ports.clock.clone(), longterm_options, damage.clone())
                .await
        };
        let session = Session::open_with(
            &options.session_id,
            store.clone(),
            ports.tokenizer,
            ports.clock.clone(),
            options.session,
            damage.clone(),
        );
        // The two read different keys, so their reads go out together: on
        // IndexedDB or a remote adapter, opening waits for the longer of
        // the two rather than for their round trips one after the other.
        let (longterm, session) = futures::join!(longterm, session);
        let (longterm, mut session) = (longterm?, session?);
        if governor.is_none() {
            session.bound_pending();
        }
        let owed = outbox::get(store.as_ref(), session.storage_id(), &damage).await?.is_some();
        let end_lock = NamedLock::new(
            ports.locks,
            format!("{}/end/{}", lock_name(&options.namespace), session.storage_id()),
        );
        let memory = Memory {
            inner: Rc::new(Inner {
                session: Mutex::new(session),
                longterm: Mutex::new(longterm),
                work: Mutex::new(()),
                lock,
                end_lock,
                clock: ports.clock,
                spawner: ports.spawner,
                model: governor.map(|governor| Model {
                    governor,
                    auto_compress: options.auto_compress.unwrap_or(true),
                    compress_queued: Cell::new(false),
                    backoff: Cell::new(Backoff::default()),
                }),
                vectors: embedding.map(|embedding| Vectors {
                    embedding,
                    queued: Cell::new(false),
                    backoff: Cell::new(Backoff::default()),
                }),
                long_term: ports.long_term,
                long_term_timeout_ms: options.long_term_timeout_ms.unwrap_or(LONG_TERM_TIMEOUT_MS),
                damage,
                sealed,
                redactor: options.redact.map(|o| Redactor::new(o, ports.patterns)),
                running: Cell::new(0),
                idle_waiters: RefCell::default(),
            }),
        };
        // With or without a model: session end has a rules judge, and a run
        // cut short (a closed tab) must not stay owed until the next call.
        if owed {
            memory.queue(Task::ResumeSessionEnd);
        }
        // Stored vectors load, and missing ones are made, in the background.
        memory.embed_soon();
        if memory.inner.sealed.may_be_stale() {
            memory.queue(Task::Reseal);
        }
        Ok(memory)
    }

    // ---- working memory ----

    /// Stores a message (store first, then the window) and returns it; queues
    /// a background compression when one is due.
    pub async fn add(&self, mut message: NewMessage) -> Result<MemoryEntry> {
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

    /// Whether `add` should queue a compression now: a model that compresses
    /// on its own, none queued, and no backoff deadline ahead.
    fn compression_may_start(&self) -> bool {
        self.inner.model.as_ref().is_some_and(|m| {
            m.auto_compress
                && !m.compress_queued.get()
                && self.inner.clock.now_ms() >= m.backoff.get().until_ms
        })
    }

    /// Summarizes the old messages now (map-reduce); `None` when there is
    /// nothing to compress. On failure nothing is lost.
    pub async fn compress(&self) -> Result<Option<CompressReport>> {
        let model = self.inner.model.as_ref().ok_or_else(no_llm)?;
        let _turn = self.inner.work.lock().await;
        self.inner.session.lock().await.sync().await?;
        compress::compress(&self.inner.session, &model.governor, &self.inner.lock).await
    }

    /// Session end: long-term memories from the messages not yet processed,
    /// conflicts resolved, the summary refreshed when due; without a model,
    /// memories by rule (no summary). Work that fails stays owed; dropping
    /// the future abandons it (also owed).
    pub async fn end_session(&self) -> Result<EndSessionReport> {
        let governor = self.inner.model.as_ref().map(|m| &m.governor);
        let _turn = self.inner.work.lock().await;
        let _ending = self.inner.end_lock.acquire().await?;
        self.inner.session.lock().await.sync().await?;
        let report = consolidate::end_session(
            &self.inner.session,
            &self.inner.longterm,
            governor,
            &self.inner.lock,
            &EndSessionOptions::default(),
        )
        .await;
        self.embed_soon();
        report
    }

    /// [`Memory::compress`] as a `'static` future (for spawning).
    pub async fn compress_owned(self) -> Result<Option<CompressReport>> {
        self.compress().await
    }

    /// [`Memory::end_session`] as a `'static` future (for spawning).
    pub async fn end_session_owned(self) -> Result<EndSessionReport> {
        self.end_session().await
    }

    /// Queues an embedding run unless one is queued or a failure's backoff
    /// deadline is ahead (the next write after it queues one).
    fn embed_soon(&self) {
        let Some(v) = &self.inner.vectors else { return };
        if !v.queued.get() && self.inner.clock.now_ms() >= v.backoff.get().until_ms {
            self.queue(Task::Embed);
        }
    }

    /// Queues background work on the `Spawn` port.
    fn queue(&self, task: Task) {
        match (task, &self.inner.model, &self.inner.vectors) {
            (Task::Embed, _, Some(v)) => v.queued.set(true),
            (Task::Compress, Some(model), _) => model.compress_queued.set(true),
            (Task::ResumeSessionEnd | Task::Reseal, _, _) => {}
            _ => return,
        }
        self.inner.running.set(self.inner.running.get() + 1);
        let memory = self.clone();
        self.inner.spawner.spawn(Box::pin(async move { memory.run(task).await }));
    }

    async fn run(&self, task: Task) {
        let out = match task {
            Task::Compress => self.compress().await.map(|_| ()),
            Task::ResumeSessionEnd => self.end_session().await.map(|_| ()),
            Task::Embed => self.embed_pending().await,
            Task::Reseal => self.reseal().await,
        };
        let inner = &self.inner;
        if let (Task::Embed, Some(v)) = (task, &inner.vectors) {
            v.queued.set(false);
            v.backoff.set(match &out {
                Ok(()) => Backoff::default(),
                Err(_) => v.backoff.get().failed(inner.clock.now_ms()),
            });
        }
        if let Some(model) = &inner.model {
            if task == Task::Compress {
                model.compress_queued.set(false);
                let backoff = model.backoff.get();
                model.backoff.set(match &out {
                    Ok(()) => Backoff::default(),
                    Err(_) => backoff.failed(inner.clock.now_ms()),
                });
            }
            if let (Err(e), true) = (&out, matches!(task, Task::Compress | Task::ResumeSessionEnd)) {
                model.governor.note_error(e);
            }
        }
        inner.running.set(inner.running.get() - 1);
        if inner.running.get() == 0 {
            for waiter in inner.idle_waiters.take() {
                let _ = waiter.send(());
            }
        }
    }

    /// Gives every memory and turn without a vector one, a round at a
    /// time, with no lock held while the embedder runs. Turns and memories
    /// added meanwhile join the next round; the run ends when none is left.
    async fn embed_pending(&self) -> Result<()> {
        let Some(v) = &self.inner.vectors else { return Ok(()) };
        let model = v.embedding.model();
        loop {
            let todo = {
                let mut r = self.inner.longterm.lock().await;
                r.index_pending()?;
                r.load_vectors(model).await?;
                r.unembedded(EMBED_ROUND)
            };
            if todo.is_empty() {
                return Ok(());
            }
            let texts: Vec<String> = todo.iter().map(|(_, text)| text.clone()).collect();
            let vectors = v.embedding.embed(&texts).await?;
            let items = todo.into_iter().zip(vectors).map(|((id, text), v)| (id, text, v)).collect();
            self.inner.longterm.lock().await.set_vectors(model, items).await?;
        }
    }

    /// The query's vector for hybrid recall: none without an embedder or
    /// before anything has a vector, and none (lexical, counted) when the
    /// embedder fails or times out: a search never fails for it.
    async fn query_vector(&self, query: &str) -> Result<Option<Vec<f32>>> {
        let Some(v) = &self.inner.vectors else { return Ok(None) };
        {
            let mut r = self.inner.longterm.lock().await;
            if r.load_vectors(v.embedding.model()).await.is_err() || r.embedded() == 0 {
                return Ok(None);
            }
        }
        match v.embedding.embed(&[query.to_string()]).await {
            Ok(mut vectors) => Ok(vectors.pop()),
            Err(_) => {
                v.embedding.note_lexical_fallback();
                Ok(None)
            }
        }
    }

    /// Background tasks not yet settled.
    /// `text` redacted, when this memory redacts.
    fn scrub(&self, text: &str, place: Place) -> String {
        match &self.inner.redactor {
            Some(r) => r.redact(text, place),
            None => text.to_string(),
        }
    }

    /// A memory as it is written: redacted if asked, then counted by the
    /// tokenizer that counts the session's messages (exact once one is set;
    /// a count made before redaction or before `setTokenizer` would be stale).
    async fn prepare_entry(&self, mut entry: MemoryEntry, place: Place) -> MemoryEntry {
        if self.inner.redactor.is_some() {
            entry.content = self.scrub(&entry.content, place);
        }
        entry.count_with(self.inner.session.lock().await.tokenizer().as_ref());
        entry
    }

    async fn prepare_entries(&self, entries: Vec<MemoryEntry>, place: Place) -> Vec<MemoryEntry> {
        let mut out = Vec::with_capacity(entries.len());
        for e in entries {
            out.push(self.prepare_entry(e, place).await);
        }
        out
    }

    /// One reseal pass: what is under an older key (or plain) sealed under
    /// the current key, a round at a time under the namespace lock.
    async fn reseal(&self) -> Result<()> {
        let stale = self.inner.sealed.stale().await?;
        for round in stale.chunks(RESEAL_ROUND) {
            let _held = self.inner.lock.acquire().await?;
            self.inner.sealed.reseal(round).await?;
        }
        Ok(())
    }

    pub fn running(&self) -> u32 {
        self.inner.running.get()
    }

    /// Resolves once no background task runs.
    pub fn idle(&self) -> impl std::future::Future<Output = ()> + 'static {
        let waiter = (self.inner.running.get() > 0).then(|| {
            let (tx, rx) = oneshot::channel();
            self.inner.idle_waiters.borrow_mut().push(tx);
            rx
        });
        async move {
            if let Some(rx) = waiter {
                let _ = rx.await;
            }
        }
    }

    /// The request for the next turn, and where its tokens went. The
    /// long-term block is fetched first, with no lock held (a host hook may
    /// call back into this memory); the window is then built from the
    /// session, caught up with other writers.
    pub async fn build_context(&self, mut request: ContextRequest) -> Result<Context> {
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
        let (budget, session) = {
            let s = self.inner.session.lock().await;
            (s.options().long_term_budget, s.storage_id().to_string())
        };
        let query = request.recall_query();
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

    /// The host hook's block, or a `TIMEOUT` error once it took too long (a
    /// hook that hangs must not hang the turn).
    async fn hook_block(&self, hook: &dyn LongTermSource, query: &str, budget: u32) -> Result<LongTermBlock> {
        let ms = self.inner.long_term_timeout_ms;
        let call = hook.block(query, budget);
        let timeout = self.inner.clock.sleep(ms);
        match futures::future::select(call, timeout).await {
            futures::future::Either::Left((block, _)) => block,
            futures::future::Either::Right(_) => Err(Error::new(
                ErrorCode::Timeout,
                format!("the long-term hook did not answer within {ms} ms"),
            )),
        }
    }

    /// Every stored message of the session, oldest first (other writers'
    /// too, in position order).
    pub async fn session_history(&self) -> Result<Vec<MemoryEntry>> {
        self.inner.session.lock().await.history().await
    }

    /// Commits a summary that replaces the compressible messages through
    /// `through_id` (a host that summarizes by itself).
    pub async fn commit_summary(&self, content: String, through_id: &str) -> Result<MemoryEntry> {
        let content = self.scrub(&content, Place::Summary);
        let _turn = self.inner.work.lock().await;
        let _held = self.inner.lock.acquire().await?;
        Ok(self.inner.session.lock().await.commit_summary(content, through_id).await?.entry().clone())
    }

    /// Deletes another session of the namespace: its messages, summary and
    /// owed work, and its turns from recall. Long-term memories drawn from
    /// it stay (`derivedFrom` finds them). Returns the records deleted.
    pub async fn delete_session(&self, session_id: &str) -> Result<u32> {
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
        let mut keys: Vec<String> = store
            .list(&crate::store::layout::session_prefix(target))
            .await?
            .into_iter()
            .map(|(k, _)| k)
            .collect();
        keys.push(crate::store::layout::outbox_key(target));
        let n = keys.len() as u32 - 1;
        store.delete_many(keys).await?;
        self.inner.longterm.lock().await.forget_session(target).await?;
        Ok(n)
    }

    /// Deletes this session's newest message and returns it (`None` when
    /// there is none, or a summary covers it); it leaves recall too.
    pub async fn pop_message(&self) -> Result<Option<MemoryEntry>> {
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
        let _turn = self.inner.work.lock().await;
        let _held = self.inner.lock.acquire().await?;
        let (deleted, storage_id) = {
            let mut s = self.inner.session.lock().await;
            (s.clear().await?, s.storage_id().to_string())
        };
        self.inner.sealed.delete_many(vec![crate::store::layout::outbox_key(&storage_id)]).await?;
        self.inner.longterm.lock().await.forget_turns(&deleted).await?;
        Ok(deleted.iter().filter(|e| e.kind != crate::entry::Kind::Summary).count() as u32)
    }

    /// Session ends owed in this namespace.
    pub async fn pending_work(&self) -> Result<Vec<OutboxRecord>> {
        let store = self.inner.session.lock().await.store().clone();
        outbox::list(store.as_ref(), &self.inner.damage).await
    }

    /// Runs `f` on the session if no async call holds it.
    pub fn with_session<T>(&self, f: impl FnOnce(&mut Session) -> T) -> Result<T> {
        Ok(f(&mut *self.inner.session.try_lock().ok_or_else(busy)?))
    }

    pub fn usage(&self) -> Result<SessionUsage> {
        self.with_session(|s| s.usage())
    }

    pub fn set_tokenizer(&self, tokenizer: Rc<dyn Tokenizer>) -> Result<()> {
        self.with_session(|s| s.set_tokenizer(tokenizer))
    }

    /// Model calls so far, when there is a model.
    pub fn llm_stats(&self) -> Option<LlmStats> {
        self.inner.model.as_ref().map(|m| m.governor.stats())
    }

    // ---- long-term memory ----

    /// Runs a read after catching up with other instances' writes. When the
    /// store cannot be read at all (a disk that filled up can abort every
    /// transaction), the read answers from what this instance holds, which
    /// includes everything it wrote, rather than failing. Mutable: a search
    /// counts itself in the stats.
    async fn read<T>(&self, f: impl FnOnce(&mut LongTermMemory) -> T) -> Result<T> {
        let mut r = self.inner.longterm.lock().await;
        let _unreadable_store_serves_the_held_view = r.refresh().await;
        r.index_pending()?;
        Ok(f(&mut r))
    }

    /// Runs a write under the namespace lock (taken first, then the mutex).
    async fn write<T>(&self, f: impl AsyncFnOnce(&mut LongTermMemory) -> Result<T>) -> Result<T> {
        let out = {
            let _held = self.inner.lock.acquire().await?;
            let mut r = self.inner.longterm.lock().await;
            f(&mut r).await
        };
        self.embed_soon();
        out
    }

    /// Stores a long-term memory unless one already says it; a fuller one
    /// supersedes what it contains, a changed detail supersedes the old.
    pub async fn remember(&self, entry: MemoryEntry) -> Result<Remembered> {
        let entry = self.prepare_entry(entry, Place::Memory).await;
        self.write(async |r| r.remember(entry).await).await
    }

    /// Many memories in one transaction, each deduplicated.
    pub async fn remember_many(&self, entries: Vec<MemoryEntry>) -> Result<Vec<Remembered>> {
        let entries = self.prepare_entries(entries, Place::Memory).await;
        self.write(async |r| r.remember_many(entries).await).await
    }

    /// Stores `entry` and expires `replaces` in its favour.
    pub async fn supersede(&self, entry: MemoryEntry, replaces: &[String]) -> Result<MemoryEntry> {
        if replaces.is_empty() {
            return Err(Error::invalid("supersede needs the ids of the memories it replaces"));
        }
        let entry = self.prepare_entry(entry, Place::Memory).await;
        self.write(async |r| r.supersede(entry, replaces).await).await
    }

    pub async fn undo(&self, id: &str) -> Result<()> {
        self.write(async |r| r.undo(id).await).await
    }

    // Forgetting is verified deletion: a forgotten memory goes with its
    // history (the versions it replaced), its vectors, the messages it was
    // drawn from (in whichever session holds them, and from recall) and
    // every summary that covers one of those messages.

    /// Hard-deletes a memory and what it was drawn from. False when this
    /// instance has no such memory.
    pub async fn forget(&self, id: &str) -> Result<bool> {
        let (forgot, sources) = self
            .write(async |r| {
                r.refresh().await?;
                let sources = r.sources_of(&r.with_history(id));
                Ok((r.forget(id).await?, sources))
            })
            .await?;
        if forgot {
            self.forget_messages(sources).await?;
        }
        Ok(forgot)
    }

    /// Hard-deletes every memory of a scope and what they were drawn from.
    pub async fn forget_scope(&self, scope: &Scope) -> Result<u32> {
        let (n, sources) = self
            .write(async |r| {
                r.refresh().await?;
                let sources = r.sources_of(&r.ids_of(Some(scope)));
                Ok((r.forget_scope(scope).await?, sources))
            })
            .await?;
        self.forget_messages(sources).await?;
        Ok(n)
    }

    /// Hard-deletes the namespace's long-term memory, the messages it was
    /// drawn from, and the processed hashes.
    pub async fn purge(&self) -> Result<()> {
        let sources = self
            .write(async |r| {
                r.refresh().await?;
                let sources = r.sources_of(&r.ids_of(None));
                r.purge().await?;
                Ok(sources)
            })
            .await?;
        self.forget_messages(sources).await
    }

    async fn forget_messages(&self, ids: Vec<String>) -> Result<()> {
        if ids.is_empty() {
            return Ok(());
        }
        let ids = crate::order::set_of(ids);
        // Not while this session compresses or ends (its summary could
        // quote them); the namespace lock before the mutexes, as always.
        let _turn = self.inner.work.lock().await;
        let _held = self.inner.lock.acquire().await?;
        let deleted = self.inner.session.lock().await.forget_messages(&ids).await?;
        self.inner.longterm.lock().await.forget_turns(&deleted).await?;
        self.embed_soon();
        Ok(())
    }

    pub async fn import(&self, mut doc: ExportDocument) -> Result<ImportReport> {
        doc.entries = self.prepare_entries(doc.entries, Place::Import).await;
        self.write(async |r| r.import(doc).await).await
    }

    /// Facts and past conversations for a query, best first. With an
    /// embedder the query is embedded and fused with BM25; `vector` is a
    /// query vector of the host's own (it needs an embedder: without one,
    /// nothing stored has a vector to compare it with).
    pub async fn search(
        &self,
        query: &str,
        options: &SearchOptions,
        vector: Option<Vec<f32>>,
    ) -> Result<Vec<Hit>> {
        let query = &self.scrub(query, Place::Query);
        let vector = match vector {
            Some(_) if self.inner.vectors.is_none() => {
                return Err(Error::invalid(
                    "a query vector needs an embedder: pass `embed` and `embedModel` to Memory.open",
                ))
            }
            Some(v) => Some(v),
            None => self.query_vector(query).await?,
        };
        self.read(|r| r.search(query, vector.as_deref(), options)).await?
    }

    pub async fn memories(&self) -> Result<Vec<MemoryEntry>> {
        self.read(|r| r.memories()).await
    }

    /// The memories as `options` ask: in force now, or as of a time.
    pub async fn memories_with(&self, options: &MemoriesOptions) -> Result<Vec<MemoryEntry>> {
        match options.as_of {
            Some(at) => {
                check_time(at, "asOf")?;
                self.read(|r| r.memories_as_of(at)).await
            }
            None => self.memories().await,
        }
    }

    /// Every memory drawn from a message (by its id), superseded ones too,
    /// and the session's summary when it covers the message.
    pub async fn derived_from(&self, message_id: &str) -> Result<Vec<MemoryEntry>> {
        let mut out = self.read(|r| r.derived_from(message_id)).await?;
        let summary = {
            let mut s = self.inner.session.lock().await;
            s.sync().await?;
            s.summary().filter(|e| e.sources.iter().any(|id| id == message_id)).cloned()
        };
        out.extend(summary);
        Ok(out)
    }

    pub async fn history(&self, id: &str) -> Result<Vec<MemoryEntry>> {
        self.read(|r| r.history(id)).await
    }

    pub async fn export(&self) -> Result<ExportDocument> {
        self.read(|r| r.export()).await
    }

    /// The export document sealed under the current key, for storing or
    /// moving it encrypted (any memory with the key imports it).
    pub async fn export_sealed(&self) -> Result<SealedExport> {
        let json = serde_json::to_string(&self.export().await?)
            .map_err(|e| Error::invalid(format!("export: {e}")))?;
        self.inner.sealed.seal_export(&json).await
    }

    /// Imports a sealed export: `DECRYPTION` without its key or when altered.
    pub async fn import_sealed(&self, export: &SealedExport) -> Result<ImportReport> {
        let json = self.inner.sealed.open_export(export).await?;
        let doc = serde_json::from_str(&json)
            .map_err(|e| Error::invalid(format!("invalid export document: {e}")))?;
        self.import(doc).await
    }

    pub async fn stats(&self) -> Result<MemoryStats> {
        let (longterm, embedded, unembedded) =
            self.read(|r| (r.stats(), r.embedded(), r.unembedded_count())).await?;
        let embedding = self.inner.vectors.as_ref().map(|v| EmbeddingStats {
            calls: v.embedding.stats(),
            embedded: embedded as u32,
            pending: unembedded as u32,
        });
        Ok(MemoryStats {
            longterm,
            damaged: self.inner.damage.list(),
            embedding,
            encryption: self.inner.sealed.stats(),
            redactions: self.inner.redactor.as_ref().map(Redactor::stats),
        })
    }
}
