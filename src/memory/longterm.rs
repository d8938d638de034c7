//! Long-term memory: writes under the namespace lock, each deduplicated;
//! forgetting as verified deletion; reads after catching up with other
//! instances' writes.

use super::{MemoriesOptions, Memory};
use crate::entry::{MemoryEntry, Scope};
use crate::error::{Error, Result};
use crate::longterm::records::Remembered;
use crate::longterm::LongTermMemory;
use crate::redact::Place;
use crate::retrieval::{Hit, SearchOptions};

/// A time given by the caller: ms since the epoch, 1970 to 9999.
fn check_time(ms: i64, what: &str) -> Result<()> {
    if (0..=crate::entry::MAX_TIMESTAMP_MS).contains(&ms) {
        Ok(())
    } else {
        Err(Error::invalid(format!("{what} must be ms since the epoch, from 1970 to 9999")))
    }
}

impl Memory {
    /// Runs a read after catching up with other instances' writes. When the
    /// store cannot be read at all (a disk that filled up can abort every
    /// transaction), the read answers from what this instance holds, which
    /// includes everything it wrote, rather than failing. Mutable: a search
    /// counts itself in the stats.
    pub(super) async fn read<T>(&self, f: impl FnOnce(&mut LongTermMemory) -> T) -> Result<T> {
        let mut r = self.inner.longterm.lock().await;
        let _unreadable_store_serves_the_held_view = r.refresh().await;
        r.index_pending()?;
        Ok(f(&mut r))
    }

    /// Runs a write under the namespace lock (taken first, then the mutex).
    pub(super) async fn write<T>(&self, f: impl AsyncFnOnce(&mut LongTermMemory) -> Result<T>) -> Result<T> {
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
        self.check_open()?;
        let entry = self.prepare_entry(entry, Place::Memory).await;
        self.write(async |r| r.remember(entry).await).await
    }

    /// Many memories in one transaction, each deduplicated.
    pub async fn remember_many(&self, entries: Vec<MemoryEntry>) -> Result<Vec<Remembered>> {
        self.check_open()?;
        let entries = self.prepare_entries(entries, Place::Memory).await;
        self.write(async |r| r.remember_many(entries).await).await
    }

    /// Stores `entry` and expires `replaces` in its favour.
    pub async fn supersede(&self, entry: MemoryEntry, replaces: &[String]) -> Result<MemoryEntry> {
        self.check_open()?;
        if replaces.is_empty() {
            return Err(Error::invalid("supersede needs the ids of the memories it replaces"));
        }
        let entry = self.prepare_entry(entry, Place::Memory).await;
        self.write(async |r| r.supersede(entry, replaces).await).await
    }

    pub async fn undo(&self, id: &str) -> Result<()> {
        self.check_open()?;
        self.write(async |r| r.undo(id).await).await
    }

    // Forgetting is verified deletion: a forgotten memory goes with its
    // history (the versions it replaced), its vectors, the messages it was
    // drawn from (in whichever session holds them, and from recall) and
    // every summary that covers one of those messages.

    /// Hard-deletes a memory and what it was drawn from. False when this
    /// instance has no such memory.
    pub async fn forget(&self, id: &str) -> Result<bool> {
        self.check_open()?;
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
        self.check_open()?;
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
        self.check_open()?;
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
        // quote them); in the lock order of `mod.rs`.
        let _turn = self.inner.work.lock().await;
        let _held = self.inner.lock.acquire().await?;
        let deleted = self.inner.session.lock().await.forget_messages(&ids).await?;
        self.inner.longterm.lock().await.forget_turns(&deleted).await?;
        self.embed_soon();
        Ok(())
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
        self.check_open()?;
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

    /// The query's vector for hybrid recall: none without an embedder or
    /// before anything has a vector, and none (lexical, counted) when the
    /// embedder fails or times out: a search never fails for it.
    pub(super) async fn query_vector(&self, query: &str) -> Result<Option<Vec<f32>>> {
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

    pub async fn memories(&self) -> Result<Vec<MemoryEntry>> {
        self.check_open()?;
        self.read(|r| r.memories()).await
    }

    /// The memories as `options` ask: in force now, or as of a time.
    pub async fn memories_with(&self, options: &MemoriesOptions) -> Result<Vec<MemoryEntry>> {
        self.check_open()?;
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
        self.check_open()?;
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
        self.check_open()?;
        self.read(|r| r.history(id)).await
    }
}
