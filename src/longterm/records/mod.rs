//! Long-term memory: facts about the user (shared by every agent) and each
//! agent's experience, as a log of operations ([`crate::longterm::log`])
//! whose fold is the view retrieval reads.
//!
//! - Writes dedup against the memories in force of the same scope
//!   ([`crate::longterm::plan`]), so "I like Java" said three times is
//!   stored once, also across reloads and across instances.
//! - Conflicts are versions, not deletions: a superseded memory keeps its
//!   text, gains `supersededBy` and `validTo`, leaves retrieval, and stays
//!   visible in `history`; `undo` brings it back. A supersession is one
//!   operation, so it is whole or absent, never half written.
//! - `forget`, `forget_scope` and `purge` are hard deletes: the text leaves
//!   the store, and nothing brings it back, on this device or, by sync, on
//!   any other ([`replica`]).
//! - Processed-message hashes (the idempotency of session-end
//!   consolidation) are operations too, kept until they expire.
//!
//! What is decided here is decided against the view; how it lands in the
//! store is [`crate::longterm::log::landing`].

use std::collections::{BTreeMap, BTreeSet};
use std::rc::Rc;

use serde::{Deserialize, Serialize};

use crate::dates::utc_day;
use crate::entry::{Kind, MemoryEntry, Scope};
use crate::error::{Error, ErrorCode, Result};
use crate::longterm::dedup::{normalize, Change, DedupOptions, Similarity};
use crate::longterm::log::fold::UNDONE;
use crate::longterm::log::landing::{Caught, Landing};
use crate::longterm::log::{op, Action, Log, Op};
use crate::longterm::plan::{Plan, Probes};
use crate::ports::clock::Clock;
use crate::store::{DamageLog, Store};

pub use crate::longterm::log::fold::SUPERSEDES;
pub use crate::longterm::plan::Remembered;
/// Version of the export document format.
pub const EXPORT_VERSION: u32 = 1;
/// Default TTL of processed-message hashes: 7 days.
pub const PROCESSED_TTL_MS: i64 = 7 * 24 * 3600 * 1000;

/// Which memories changed since the search index last caught up
/// ([`Records::take_changes`]).
#[derive(Debug, Clone, PartialEq)]
pub enum Changes {
    /// Any may have: the view was reloaded, refolded or purged.
    All,
    /// These ids, in the order they changed (each once).
    Ids(Vec<String>),
}

/// Counts for observability.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct RecordStats {
    pub total: u32,
    pub valid: u32,
    pub superseded: u32,
    pub by_kind: BTreeMap<String, u32>,
    pub by_scope: BTreeMap<String, u32>,
    /// Valid memories per agent id.
    pub by_agent: BTreeMap<String, u32>,
    /// Memories created per UTC day (`YYYY-MM-DD`).
    pub per_day: BTreeMap<String, u32>,
    /// Bytes of stored JSON.
    pub storage_bytes: u64,
    pub processed_hashes: u32,
}

/// A namespace's long-term memory as one versioned JSON document.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(optional_fields))]
pub struct ExportDocument {
    pub format: String,
    pub version: u32,
    pub exported_at: i64,
    /// Every memory, superseded ones included (their history).
    pub entries: Vec<MemoryEntry>,
    /// How many entries the document was written with: a document that lost
    /// some (cut by hand, a truncated copy) is refused, not half imported.
    /// Absent in documents of earlier releases.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub count: Option<u32>,
    /// Processed-message hashes with their expiry.
    #[serde(default)]
    pub processed: BTreeMap<String, i64>,
}

/// What an import did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct ImportReport {
    pub added: u32,
    pub updated: u32,
    pub unchanged: u32,
    /// Current memories not added because a current memory of their scope
    /// already says the same (under another id), as `remember` decides.
    pub duplicates: u32,
}

pub struct Records {
    clock: Rc<dyn Clock>,
    dedup: DedupOptions,
    landing: Landing,
    log: Log,
    /// This instance's stamps: after every stamp it has seen.
    stamps: op::Clock,
    probes: Probes,
    /// What changed since the index last caught up: a write then costs the
    /// index its own memories, not a comparison with every one.
    changes: Changes,
}

impl Records {
    /// Reads the namespace's log (converting an earlier release's records).
    pub async fn open(store: Rc<dyn Store>, clock: Rc<dyn Clock>, dedup: DedupOptions) -> Result<Records> {
        Self::open_with(store, clock, dedup, Rc::default(), &mut |_| {}).await
    }

    /// [`Records::open`], reporting damaged records to `damage`
    /// (they are skipped: one bad record never locks the namespace), and
    /// showing each memory in force to `loaded`.
    pub async fn open_with(
        store: Rc<dyn Store>,
        clock: Rc<dyn Clock>,
        dedup: DedupOptions,
        damage: Rc<DamageLog>,
        loaded: &mut dyn FnMut(&MemoryEntry),
    ) -> Result<Records> {
        let now = clock.now_ms();
        let writer = crate::entry::random_u64(now);
        let mut stamps = op::Clock::new(writer);
        let mut landing = Landing::new(store, damage, writer);
        let log = landing.load(now, &mut stamps).await?;
        for e in log.view().in_force() {
            loaded(e);
        }
        Ok(Records { clock, dedup, landing, log, stamps, probes: Probes::new(), changes: Changes::All })
    }

    async fn reload(&mut self) -> Result<()> {
        self.log = self.landing.load(self.clock.now_ms(), &mut self.stamps).await?;
        self.probes.reset();
        self.changes = Changes::All;
        Ok(())
    }

    /// Takes what the last operations changed into the probes and the
    /// changes the index reads.
    fn note_changes(&mut self) {
        let touched = self.log.view_mut().take_touched();
        if self.log.take_refolded() {
            self.probes.reset();
            self.changes = Changes::All;
            return;
        }
        self.probes.changed(touched.iter().cloned());
        if let Changes::Ids(ids) = &mut self.changes {
            ids.extend(touched);
        }
    }

    /// What changed since the last call (each id once), and starts over.
    pub fn take_changes(&mut self) -> Changes {
        match std::mem::replace(&mut self.changes, Changes::Ids(Vec::new())) {
            Changes::All => Changes::All,
            Changes::Ids(mut ids) => {
                let mut seen = rustc_hash::FxHashSet::default();
                ids.retain(|id| seen.insert(id.clone()));
                Changes::Ids(ids)
            }
        }
    }

    /// Catches up with what other instances wrote since we last looked;
    /// says whether anything changed. Called before every write.
    pub async fn refresh(&mut self) -> Result<bool> {
        match self.landing.catch_up(&mut self.log, &mut self.stamps).await? {
            Caught::Nothing => Ok(false),
            Caught::New { erase } => {
                if erase {
                    self.landing.erase_forgotten(&mut self.log).await?;
                }
                self.note_changes();
                Ok(true)
            }
            Caught::Purged => {
                self.reload().await?;
                Ok(true)
            }
        }
    }

    /// Writes `actions` as one write of this instance, then folds them in.
    async fn write(&mut self, actions: Vec<Action>) -> Result<()> {
        self.append(actions, false).await.map(drop)
    }

    /// [`Records::write`] only if no other writer wrote since this instance
    /// last looked; says whether it wrote.
    async fn write_checked(&mut self, actions: Vec<Action>) -> Result<bool> {
        self.append(actions, true).await
    }

    async fn append(&mut self, actions: Vec<Action>, checked: bool) -> Result<bool> {
        if actions.is_empty() {
            return Ok(true);
        }
        let now = self.clock.now_ms();
        let ops: Vec<Op> = actions.into_iter().map(|a| Op::new(self.stamps.next(now), a)).collect();
        if !self.landing.append(&mut self.log, ops, checked).await? {
            return Ok(false);
        }
        self.note_changes();
        // The write is acknowledged: a compaction that fails is tried again
        // at a later write, and costs nothing meanwhile.
        let _ = self.landing.compact_if_due(&self.log, now).await;
        Ok(true)
    }

    fn check_scope(entry: &MemoryEntry) -> Result<()> {
        if entry.scope == Scope::Session {
            return Err(Error::invalid(
                "long-term memories belong to the \"user\" or an \"agent:<id>\" scope",
            ));
        }
        if entry.content.trim().is_empty() {
            return Err(Error::invalid("a memory needs content"));
        }
        entry.validate()
    }

    /// Stores a memory unless a valid memory of its scope already says it;
    /// a new memory that contains an old one supersedes it.
    pub async fn remember(&mut self, entry: MemoryEntry) -> Result<Remembered> {
        Ok(self.remember_many(vec![entry]).await?.pop().expect("one in, one out"))
    }

    /// Remembers many memories in one write: each is deduplicated against
    /// the stored memories and the list's earlier ones. Validation comes
    /// first, so a bad entry stores none.
    pub async fn remember_many(&mut self, entries: Vec<MemoryEntry>) -> Result<Vec<Remembered>> {
        let dedup = self.dedup;
        self.remember_many_with(entries, &dedup).await
    }

    /// [`Records::remember_many`] with other dedup thresholds (e.g.
    /// [`DedupOptions::EXACT`] once a model has judged the texts new).
    pub async fn remember_many_with(
        &mut self,
        entries: Vec<MemoryEntry>,
        dedup: &DedupOptions,
    ) -> Result<Vec<Remembered>> {
        for e in &entries {
            Self::check_scope(e)?;
        }
        let entries: Vec<MemoryEntry> =
            entries.into_iter().map(crate::longterm::temporal::classified).collect();
        // Planned against the view held and written checked against the
        // last write seen: a write costs no read of its own. If another
        // writer came first, catch up, plan again and write (never
        // refused); a plan with nothing to write checks with a read.
        let mut contended = false;
        let (mut outcomes, superseding) = loop {
            let plan = self.probes.plan(self.log.view(), &entries, dedup);
            let (outcomes, actions, superseding) = self.actions_of(plan);
            if actions.is_empty() {
                if !contended && self.refresh().await? {
                    contended = true;
                    continue;
                }
            } else if contended {
                self.write(actions).await?;
            } else if !self.write_checked(actions).await? {
                self.refresh().await?;
                contended = true;
                continue;
            }
            break (outcomes, superseding);
        };
        // Writers that wrote meanwhile are settled by the fold: the caller
        // is told what came of each memory.
        if contended {
            self.refresh().await?;
        }
        let view = self.log.view();
        for (at, id, superseded, change) in superseding {
            let entry = view.get(&id).cloned().expect("just written");
            outcomes[at] = Some(Remembered::Superseded { entry, superseded, change });
        }
        for outcome in outcomes.iter_mut() {
            let Some(Remembered::Stored { entry }) = outcome else { continue };
            let Some(now) = view.get(&entry.id) else { continue };
            // Said first by another writer, at once: this is its duplicate.
            let holder = now.superseded_by.as_deref().and_then(|h| view.get(h));
            match holder {
                Some(h) if normalize(&h.content) == normalize(&now.content) => {
                    *outcome =
                        Some(Remembered::Duplicate { existing: h.clone(), similarity: Similarity::Exact });
                }
                _ => *entry = now.clone(),
            }
        }
        Ok(outcomes.into_iter().map(|o| o.expect("every outcome is set")).collect())
    }

    /// The operations a plan writes, with its outcomes and the supersessions
    /// whose outcomes are set once written.
    #[allow(clippy::type_complexity)]
    fn actions_of(
        &self,
        plan: Plan,
    ) -> (Vec<Option<Remembered>>, Vec<Action>, Vec<(usize, String, Vec<String>, Option<Change>)>) {
        let Plan { outcomes, new_entries, supersessions } = plan;
        let mut actions: Vec<Action> =
            new_entries.into_iter().map(|entry| Action::Create { entry }).collect();
        let mut superseding = Vec::with_capacity(supersessions.len());
        for (at, mut entry, replaced, change) in supersessions {
            if let Some(c) = change {
                // Kept on the memory, so a reviewer (or the judge) sees why.
                let why = serde_json::to_value(c).ok().and_then(|v| v.as_str().map(str::to_string));
                entry.metadata.insert("change".into(), why.unwrap_or_default());
            }
            superseding.push((at, entry.id.clone(), replaced.clone(), change));
            actions.push(Action::Supersede { entry, replaces: replaced });
        }
        (outcomes, actions, superseding)
    }

    /// Provenance accumulates: what the old memories came from, the new one
    /// now stands for too.
    fn with_sources_of(&self, new: &mut MemoryEntry, old_ids: &[String]) {
        for id in old_ids {
            new.add_sources(self.log.view().get(id).map_or(&[][..], |e| &e.sources));
        }
    }

    /// Stores `new` in place of `old_ids`, in one operation.
    pub async fn supersede(&mut self, new: MemoryEntry, old_ids: &[String]) -> Result<MemoryEntry> {
        Self::check_scope(&new)?;
        let mut new = crate::longterm::temporal::classified(new);
        self.refresh().await?;
        for id in old_ids {
            match self.log.view().get(id) {
                None => return Err(Error::new(ErrorCode::NotFound, format!("no memory {id:?}"))),
                Some(old) if old.scope != new.scope => {
                    return Err(Error::invalid(format!("memory {id:?} is in another scope ({})", old.scope)))
                }
                _ => {}
            }
        }
        if self.log.view().get(&new.id).is_some() {
            return Err(Error::invalid(format!("memory {:?} exists already", new.id)));
        }
        self.with_sources_of(&mut new, old_ids);
        let id = new.id.clone();
        self.write(vec![Action::Supersede { entry: new, replaces: old_ids.to_vec() }]).await?;
        Ok(self.log.view().get(&id).cloned().expect("just written"))
    }

    /// Undoes a supersession: the memories `id` replaced are valid again,
    /// and `id` itself is expired (kept in history).
    pub async fn undo(&mut self, id: &str) -> Result<()> {
        self.refresh().await?;
        let view = self.log.view();
        if view.get(id).is_none() {
            return Err(Error::new(ErrorCode::NotFound, format!("no memory {id:?}")));
        }
        let replaced_any = view.memories().any(|e| e.superseded_by.as_deref() == Some(id));
        if !replaced_any {
            return Err(Error::invalid(format!(
                "memory {id:?} superseded nothing: there is nothing to undo"
            )));
        }
        self.write(vec![Action::Retract { id: id.to_string() }]).await
    }

    /// Every memory, valid or not, whose sources hold `message_id`, oldest first.
    pub fn derived_from(&self, message_id: &str) -> Vec<MemoryEntry> {
        let mut out: Vec<MemoryEntry> = self
            .log
            .view()
            .memories()
            .filter(|e| e.sources.iter().any(|s| s == message_id))
            .cloned()
            .collect();
        crate::order::sort_by(&mut out, |a, b| a.id.cmp(&b.id));
        out
    }

    /// Every version connected to `id` through supersession, oldest first.
    pub fn history(&self, id: &str) -> Vec<MemoryEntry> {
        let view = self.log.view();
        let mut seen: Vec<&MemoryEntry> = Vec::new();
        let mut queue = vec![id.to_string()];
        while let Some(cur) = queue.pop() {
            let Some(e) = view.get(&cur) else { continue };
            if seen.iter().any(|s| s.id == e.id) {
                continue;
            }
            seen.push(e);
            if let Some(next) = &e.superseded_by {
                queue.push(next.clone());
            }
            if let Some(older) = e.metadata.get(SUPERSEDES) {
                queue.extend(older.split(',').map(str::to_string));
            }
            queue.extend(
                view.memories()
                    .filter(|o| {
                        o.superseded_by.as_deref() == Some(&cur)
                            || o.metadata.get(SUPERSEDES).is_some_and(|s| s.split(',').any(|id| id == cur))
                    })
                    .map(|o| o.id.clone()),
            );
        }
        crate::order::sort_by(&mut seen, MemoryEntry::by_time);
        seen.into_iter().cloned().collect()
    }

    pub fn get(&self, id: &str) -> Option<&MemoryEntry> {
        self.log.view().get(id)
    }

    /// The valid memories in no order (cheaper than [`Records::valid`]).
    pub fn valid_unordered(&self) -> impl Iterator<Item = &MemoryEntry> {
        self.log.view().in_force()
    }

    /// The memories in force at `at` (ms), superseded and undone ones
    /// included while they were, oldest first.
    pub fn in_force_at(&self, at: i64) -> Vec<&MemoryEntry> {
        let mut v: Vec<&MemoryEntry> = self.log.view().memories().filter(|e| e.in_force_at(at)).collect();
        crate::order::sort_by(&mut v, MemoryEntry::by_time);
        v
    }

    /// Valid memories (what retrieval sees), oldest first.
    pub fn valid(&self) -> Vec<&MemoryEntry> {
        let mut v: Vec<&MemoryEntry> = self.log.view().in_force().collect();
        crate::order::sort_by(&mut v, MemoryEntry::by_time);
        v
    }

    /// Hard-deletes a memory with its history (the versions it superseded,
    /// and theirs): a forgotten fact must not survive as an expired one.
    pub async fn forget(&mut self, id: &str) -> Result<bool> {
        self.refresh().await?;
        if self.log.view().get(id).is_none() {
            return Ok(false);
        }
        self.delete(self.with_history(id)).await?;
        Ok(true)
    }

    /// `id` and every version it replaced, directly or not, and every
    /// replacement of one of them that an undo took back (a retracted
    /// version of the same fact: `history(id)` lists it).
    ///
    /// One pass over the view for the edges from a version to the older
    /// ones that point at it, then a walk from `id`: a pass per version
    /// found would make forgetting a long lineage quadratic in the store.
    pub fn with_history(&self, id: &str) -> Vec<String> {
        let mut older: Vec<(&str, &str)> = Vec::new();
        for e in self.log.view().memories() {
            if let Some(next) = &e.superseded_by {
                older.push((next.as_str(), e.id.as_str()));
            }
            if e.metadata.contains_key(UNDONE) {
                for o in e.metadata.get(SUPERSEDES).into_iter().flat_map(|s| s.split(',')) {
                    older.push((o, e.id.as_str()));
                }
            }
        }
        crate::order::sort(&mut older);
        let mut ids = vec![id.to_string()];
        let mut seen = std::collections::BTreeSet::new();
        seen.insert(id.to_string());
        let mut at = 0;
        while at < ids.len() {
            let newer = ids[at].clone();
            let first = older.partition_point(|(n, _)| *n < newer.as_str());
            for (_, old) in older[first..].iter().take_while(|(n, _)| *n == newer.as_str()) {
                if seen.insert(old.to_string()) {
                    ids.push(old.to_string());
                }
            }
            at += 1;
        }
        ids
    }

    /// Hard-deletes every memory of a scope; returns how many.
    pub async fn forget_scope(&mut self, scope: &Scope) -> Result<u32> {
        self.refresh().await?;
        let ids: Vec<String> =
            self.log.view().memories().filter(|e| &e.scope == scope).map(|e| e.id.clone()).collect();
        let n = ids.len() as u32;
        self.delete(ids).await?;
        Ok(n)
    }

    /// Hard-deletes the namespace's long-term memory and processed hashes,
    /// leaving one operation, the purge: it syncs, so every replica drops
    /// what was stamped before it (a relay too), and what a device wrote
    /// after it stays.
    pub async fn purge(&mut self) -> Result<()> {
        let now = self.clock.now_ms();
        let purge = Op::new(self.stamps.next(now), Action::Purge);
        self.start_over(vec![(purge.id(), purge)], now).await
    }

    /// Forgets `ids`, then takes their text out of every record.
    async fn delete(&mut self, ids: Vec<String>) -> Result<()> {
        if ids.is_empty() {
            return Ok(());
        }
        self.write(vec![Action::Forget { ids }]).await?;
        self.landing.erase_forgotten(&mut self.log).await
    }

    /// True when `hash` was processed and has not expired.
    pub fn is_processed(&self, hash: &str) -> bool {
        self.log.view().is_processed(hash, self.clock.now_ms())
    }

    /// Records processed-message hashes for `ttl_ms`.
    pub async fn mark_processed(&mut self, hashes: &[String], ttl_ms: i64) -> Result<()> {
        let until = self.clock.now_ms() + ttl_ms;
        self.write(vec![Action::Processed { hashes: hashes.to_vec(), until }]).await
    }

    pub fn stats(&self) -> RecordStats {
        let now = self.clock.now_ms();
        let view = self.log.view();
        let mut s = RecordStats {
            storage_bytes: self.landing.bytes(),
            processed_hashes: view.processed().filter(|(_, until)| **until > now).count() as u32,
            ..Default::default()
        };
        for e in view.memories() {
            s.total += 1;
            *s.per_day.entry(utc_day(e.timestamp)).or_default() += 1;
            if !e.is_valid() {
                s.superseded += 1;
                continue;
            }
            s.valid += 1;
            *s.by_kind.entry(e.kind.as_str().to_string()).or_default() += 1;
            *s.by_scope.entry(e.scope.to_string()).or_default() += 1;
            if let Scope::Agent(a) = &e.scope {
                *s.by_agent.entry(a.clone()).or_default() += 1;
            }
        }
        s
    }

    pub fn export(&self) -> ExportDocument {
        let now = self.clock.now_ms();
        let view = self.log.view();
        let mut entries: Vec<&MemoryEntry> = view.memories().collect();
        crate::order::sort_by(&mut entries, MemoryEntry::by_time);
        let entries: Vec<MemoryEntry> = entries.into_iter().cloned().collect();
        let processed = crate::order::map_of(
            view.processed().filter(|(_, until)| **until > now).map(|(k, v)| (k.clone(), *v)),
        );
        ExportDocument {
            format: "agent-memory".into(),
            version: EXPORT_VERSION,
            exported_at: now,
            count: Some(entries.len() as u32),
            entries,
            processed,
        }
    }

    /// Imports a document: entries by id (importing twice changes nothing),
    /// in one write.
    pub async fn import(&mut self, doc: ExportDocument) -> Result<ImportReport> {
        if doc.format != "agent-memory" || doc.version != EXPORT_VERSION {
            return Err(Error::invalid(format!(
                "not an agent-memory export of version {EXPORT_VERSION} (format {:?}, version {})",
                doc.format, doc.version
            )));
        }
        if let Some(count) = doc.count.filter(|&c| c as usize != doc.entries.len()) {
            return Err(Error::invalid(format!(
                "the document holds {} of the {count} memories it was written with: it was cut short (drop `count` to import an edited one)",
                doc.entries.len()
            )));
        }
        for e in &doc.entries {
            Self::check_scope(e)
                .map_err(|err| Error::invalid(format!("memory {:?}: {}", e.id, err.message)))?;
        }
        self.refresh().await?;
        let mut report = ImportReport::default();
        // A current memory under an id not held yet is deduplicated as
        // `remember` would: the same fact exported from another namespace
        // is not stored twice. (History comes as it was, by id.)
        let view = self.log.view();
        let fresh: Vec<MemoryEntry> =
            doc.entries.iter().filter(|e| e.is_valid() && view.get(&e.id).is_none()).cloned().collect();
        let dedup = self.dedup;
        let duplicates: BTreeSet<String> = crate::order::set_of(
            self.probes
                .plan(self.log.view(), &fresh, &dedup)
                .outcomes
                .iter()
                .zip(&fresh)
                .filter(|(o, _)| matches!(o, Some(Remembered::Duplicate { .. })))
                .map(|(_, e)| e.id.clone()),
        );
        let mut actions = Vec::new();
        for e in doc.entries {
            match self.log.view().get(&e.id) {
                Some(old) if *old == e => report.unchanged += 1,
                Some(_) => {
                    report.updated += 1;
                    actions.push(Action::Import { entry: e });
                }
                None if duplicates.contains(&e.id) => report.duplicates += 1,
                None => {
                    report.added += 1;
                    actions.push(Action::Import { entry: e });
                }
            }
        }
        let now = self.clock.now_ms();
        let fresh = doc.processed.into_iter().filter(|(_, until)| *until > now);
        actions.extend(fresh.map(|(hash, until)| Action::Processed { hashes: vec![hash], until }));
        self.write(actions).await?;
        Ok(report)
    }
}

/// A new long-term memory (a fact by default) created now.
pub fn new_memory(content: impl Into<String>, scope: Scope, now: i64) -> MemoryEntry {
    MemoryEntry::new(content, Kind::Fact, crate::entry::Role::User, scope, now)
}

mod replica;
#[cfg(test)]
mod tests;
