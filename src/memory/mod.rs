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
//! This folder alone takes locks and commits. The model's pipelines
//! (`llm::compress`, `llm::consolidate`) read a snapshot taken here and
//! return a plan; the commit re-checks what may have changed meanwhile
//! (the summary compare-and-set, processed marks and memories still valid
//! after a fresh read). Whoever holds more than one takes them in this
//! order, the only one:
//! 1. `work`: this instance's turn on the session for compression, session
//!    end, summary commits and deleting messages a summary could quote.
//!    Held across the model call, so an older summary never lands after a
//!    newer one; it blocks only those, on this instance.
//! 2. `end_lock`: one session end of the session at a time across
//!    instances (`Lock` port). Held across the model call; it blocks only
//!    another end of the same session.
//! 3. The lease on ending the session (`llm::lease`, a store record for
//!    processes no lock spans): never waited on; an end that finds it held
//!    leaves the work owed.
//! 4. `lock`, the namespace's (`Lock` port: Web Locks across tabs, an
//!    in-realm lock elsewhere). It guards long-term writes (after a fresh
//!    read, so dedup sees what another tab just stored), summary commits,
//!    and applying a session end's batch. Never held across a model call
//!    or a host hook.
//! 5. `session`, then 6. `longterm`: this instance's mutexes, held for a
//!    snapshot, a read or one commit, never across a model call.
//!
//! # Reads see other instances
//! Every long-term read first checks the stored generation (one `get`) and
//! reloads when another instance wrote; a request first checks the
//! session's writer records (one small `list`) and reloads the window when
//! another writer added messages or a summary.
//!
//! # Files
//! This file holds the types and `open`; `working.rs` the session's
//! messages and requests, `longterm.rs` long-term writes, forgetting and
//! reads, `transfer.rs` import and export, `sync.rs` sync with a peer,
//! `autosync.rs` sync on a schedule and `close`,
//! `ending.rs` session end and its commits, `background.rs` compression and
//! its commit, and the other background tasks.

mod autosync;
mod background;
mod ending;
mod longterm;
mod sync;
#[cfg(test)]
mod tests;
mod transfer;
mod working;

pub use autosync::{AutoSyncOptions, MAX_SYNC_INTERVAL_MS, MIN_SYNC_INTERVAL_MS, SYNC_INTERVAL_MS};
pub use sync::{SyncOptions, SyncStats};
pub use transfer::ImportDocument;
pub use working::SentEntries;

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use futures::channel::oneshot;
use futures::lock::Mutex;
use serde::Serialize;

use crate::embed::{EmbedOptions, EmbedStats, Embedding};
use crate::error::{Error, ErrorCode, Result};
use crate::llm::governor::{Governor, LlmOptions, LlmStats};
use crate::llm::outbox;
use crate::longterm::dedup::DedupOptions;
use crate::longterm::{LongTermMemory, LongTermOptions, LongTermStats};
use crate::ports::{Cipher, Clock, Embedder, Llm, Lock, NamedLock, Spawn};
use crate::redact::{Patterns, RedactOptions, RedactionStats, Redactor};
use crate::store::{
    check_timeout, DamageHook, DamageLog, Damaged, EncryptionStats, SealedStore, Store, Timed,
    STORAGE_TIMEOUT_MS,
};
use crate::tokens::Tokenizer;
use crate::working::session::{LongTermSource, Session, SessionOptions, SessionUsage};
use background::Backoff;

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
    /// Every store call must settle within this, or fail with
    /// `STORAGE_TIMEOUT` ([`crate::store::Timed`]). Default 30 s.
    pub storage_timeout_ms: Option<u32>,
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

impl MemoryOptions {
    /// The rules of the options that need no port ([`Memory::open`] checks
    /// them): a well-formed namespace and agent id, timeouts of at least
    /// 1 ms, and the model's and embedder's call policies.
    pub fn validate(&self) -> Result<()> {
        validate_namespace(&self.namespace)?;
        if let Some(agent) = &self.agent_id {
            crate::entry::validate_name("agent id", agent)?;
        }
        check_timeout("storageTimeoutMs", self.storage_timeout_ms)?;
        check_timeout("longTermTimeoutMs", self.long_term_timeout_ms)?;
        self.llm.validate()?;
        self.embed.validate()
    }
}

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
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(optional_fields))]
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
    /// This instance's syncs, once it synced.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sync: Option<SyncStats>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct EmbeddingStats {
    #[serde(flatten)]
    pub calls: EmbedStats,
    pub embedded: u32,
    pub pending: u32,
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
    sync: RefCell<Option<SyncStats>>,
    /// One sync at a time, scheduled or called ([`autosync`]).
    sync_turn: Mutex<()>,
    schedule: RefCell<Option<Rc<autosync::Schedule>>>,
    /// `close()` was called: calls fail with `CLOSED`.
    closed: Cell<bool>,
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
        options.validate()?;
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
        let timeout_ms = options.storage_timeout_ms.unwrap_or(STORAGE_TIMEOUT_MS);
        let timed: Rc<dyn Store> = Rc::new(Timed::new(ports.store, ports.clock.clone(), timeout_ms));
        let sealed = Rc::new(match ports.cipher {
            Some(cipher) => {
                SealedStore::encrypted(
                    timed,
                    cipher,
                    &options.namespace,
                    damage.clone(),
                    options.migrate_plain,
                )
                .await?
            }
            None => SealedStore::plain(timed, damage.clone()),
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
                sync: RefCell::default(),
                sync_turn: Mutex::new(()),
                schedule: RefCell::default(),
                closed: Cell::new(false),
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

    /// Runs `f` on the session if no async call holds it.
    pub fn with_session<T>(&self, f: impl FnOnce(&mut Session) -> T) -> Result<T> {
        self.check_open()?;
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

    pub async fn stats(&self) -> Result<MemoryStats> {
        self.check_open()?;
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
            sync: self.inner.sync.borrow().clone(),
        })
    }
}
