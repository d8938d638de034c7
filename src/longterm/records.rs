//! Long-term memory: facts about the user (shared by every agent) and each
//! agent's experience, persisted in the namespace's store and held in memory
//! for retrieval.
//!
//! - Writes dedup against the valid memories of the same scope (see
//!   [`crate::longterm::dedup`]), so "I like Java" said three times is stored once,
//!   also across reloads.
//! - Conflicts are versions, not deletions: a superseded memory keeps its
//!   text, gains `supersededBy` and `validTo`, leaves retrieval, and stays
//!   visible in `history`; `undo` brings it back. The new memory is written
//!   before the old ones are expired, so a failure in between leaves both
//!   valid, never neither.
//! - `forget`, `forget_scope` and `purge` are hard deletes from the store.
//! - Processed-message hashes (the idempotency of session-end
//!   consolidation) are kept with a TTL.
//!
//! Store layout: `lt/entry/<id>` (entry JSON; the new memories of one write
//! share records instead, [`crate::longterm::batch`]), `lt/processed/<hash>` (expiry,
//! ms), `lt/meta/generation` (a fresh random number on every write, so
//! another instance's changes are noticed at its next read or write; random
//! rather than counted, so a namespace deleted and written anew cannot come
//! back to a number an instance already holds). A namespace of many
//! memories also keeps a snapshot of them and a journal of the writes since
//! ([`crate::longterm::snapshot`]), which opening reads instead of every
//! record.

use std::collections::{BTreeMap, BTreeSet};
use std::rc::Rc;

use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};
use serde::{Deserialize, Serialize};

use crate::dates::utc_day;
use crate::entry::{Kind, MemoryEntry, Scope};
use crate::error::{Error, ErrorCode, Result};
use crate::longterm::dedup::{
    may_relate, relation_of, Change, DedupOptions, Fingerprint, Probe, Relation, Similarity,
};
use crate::longterm::snapshot::{self, Journal};
use crate::longterm::{batch, lines};
use crate::ports::clock::Clock;
use crate::store::layout::{
    entry_key, processed_key, ENTRY_PREFIX, GENERATION_KEY, JOURNAL_KEY, PROCESSED_PREFIX, SNAPSHOT_PREFIX,
};
use crate::store::{damage, DamageLog, Store};

/// Metadata key on a memory listing the ids it superseded.
pub const SUPERSEDES: &str = "supersedes";
/// Metadata key on a replacement that an undo took back.
const UNDONE: &str = "undone";
/// Version of the export document format.
pub const EXPORT_VERSION: u32 = 1;
/// Default TTL of processed-message hashes: 7 days.
pub const PROCESSED_TTL_MS: i64 = 7 * 24 * 3600 * 1000;

/// How many times a write is planned again after another instance wrote
/// first, before it gives up with an error.
const MAX_PLANS: u32 = 3;
/// The generation a view holds when the stored one could not be read.
const UNREADABLE: u64 = u64::MAX;

/// What a `remember` does: an outcome per memory (a supersession's is set
/// once it is written), the memories to store, and the supersessions
/// `(outcome index, new memory, ids it replaces, what changed)`.
struct Plan {
    outcomes: Vec<Option<Remembered>>,
    new_entries: Vec<MemoryEntry>,
    supersessions: Vec<(usize, MemoryEntry, Vec<String>, Option<Change>)>,
    /// The fingerprints of `new_entries`, made while planning: kept once
    /// they are written, so the next write does not make them again.
    fingerprints: Vec<(String, Fingerprint)>,
}

/// What a write keeps beside its records so that opening stays fast
/// ([`crate::longterm::snapshot`]).
enum Keep {
    /// The journal, with the write's ids.
    Journal(Journal),
    /// A new snapshot's chunks.
    Snapshot(Vec<(String, String)>),
    Nothing,
}

/// Which memories changed since the search index last caught up
/// ([`Records::take_changes`]).
#[derive(Debug, Clone, PartialEq)]
pub enum Changes {
    /// Any may have: the view was reloaded or purged.
    All,
    /// These ids, in the order they changed (each once).
    Ids(Vec<String>),
}

/// Whether `e`, read under `key`, is a valid memory stored under its own id.
fn is_record_of(key: &str, e: &MemoryEntry) -> bool {
    key[ENTRY_PREFIX.len()..] == e.id && e.validate().is_ok()
}

fn to_json<T: Serialize>(v: &T) -> Result<String> {
    serde_json::to_string(v).map_err(|e| Error::invalid(e.to_string()))
}

/// What happened to a memory handed to `remember`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase", tag = "outcome")]
pub enum Remembered {
    /// Stored as new.
    Stored { entry: MemoryEntry },
    /// Stored, and it replaced memories it updates: a more complete version
    /// (no `change`), or one whose number, date, name or polarity differs
    /// (`change` says which; the old ones stay in `history`).
    Superseded {
        entry: MemoryEntry,
        superseded: Vec<String>,
        #[serde(skip_serializing_if = "Option::is_none")]
        change: Option<Change>,
    },
    /// Not stored: an existing memory already says it.
    Duplicate { existing: MemoryEntry, similarity: Similarity },
}

/// Counts for observability.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
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
pub struct ImportReport {
    pub added: u32,
    pub updated: u32,
    pub unchanged: u32,
    /// Current memories not added because a current memory of their scope
    /// already says the same (under another id), as `remember` decides.
    pub duplicates: u32,
}

pub struct Records {
    store: Rc<dyn Store>,
    clock: Rc<dyn Clock>,
    dedup: DedupOptions,
    entries: HashMap<String, MemoryEntry>,
    /// Dedup fingerprints of entries, by id, made on first use.
    fingerprints: HashMap<String, Fingerprint>,
    processed: HashMap<String, i64>,
    generation: u64,
    /// The generation's text as last read or written: what a
    /// check-and-write expects to find.
    generation_text: Option<String>,
    storage_bytes: u64,
    damage: Rc<DamageLog>,
    /// What changed since the index last caught up: a write then costs the
    /// index its own memories, not a comparison with every one.
    changes: Changes,
    /// Dedup's probes of the valid memories, kept between writes: `None`
    /// until a plan needs them, and again after a reload or a purge; the
    /// memories written or deleted since are caught up at the next plan.
    probes: Option<Rc<Probes>>,
    /// The stored journal as of this view's generation, when the view read
    /// or wrote it: each write adds its ids to it. `None`: writes leave the
    /// stored one behind, unused until the next snapshot.
    journal: Option<Journal>,
    /// The backend refused a snapshot (its quota, its limits): this view
    /// makes no more, and its writes pay for none.
    snapshots_refused: bool,
    /// The batch each memory kept in one lives in, by id; a memory not here
    /// has its own record.
    homes: HashMap<String, String>,
    /// The batches' records, by name.
    batches: HashMap<String, Batch>,
}

/// What a batch's record holds.
#[derive(Default)]
struct Batch {
    /// The memories that live in it, in its order.
    ids: Vec<String>,
    /// Lines no reader accepts: kept through rewrites as they are, so the
    /// damage stays reported and nothing leaves unseen.
    unreadable: Vec<String>,
    /// It also holds copies of memories whose own records won: the next
    /// deletion rewrites it without them.
    stale: bool,
    /// Its value's length.
    bytes: u64,
}

/// A line of a snapshot a write makes: a record it writes, or a memory of
/// the view.
enum Line<'a> {
    Json(&'a str),
    Entry(&'a MemoryEntry),
}

/// The chunks of a snapshot at `at` of `memories`, each with the batch it
/// lives in: their own records first, then each batch's after the line
/// naming it. A memory of the view becomes JSON as its chunk is made, so
/// the view is not held twice over. `None` if one cannot be written.
fn snapshot_chunks(at: &str, mut memories: Vec<(Option<&str>, Line)>) -> Option<Vec<(String, String)>> {
    crate::order::sort_by(&mut memories, |a, b| a.0.cmp(&b.0));
    let failed = std::cell::Cell::new(false);
    let mut home = None;
    let lines = memories.iter().flat_map(|(of, line)| {
        let named = (*of != home).then(|| batch::home_line(*of));
        home = *of;
        let json = match line {
            Line::Json(json) => json.to_string(),
            Line::Entry(e) => to_json(e).unwrap_or_else(|_| {
                failed.set(true);
                String::new()
            }),
        };
        named.into_iter().chain([json])
    });
    snapshot::chunks(at, lines).filter(|_| !failed.get())
}

/// One memory a write stores: its JSON and the batch it goes into (`None`:
/// its own record).
struct Written<'a> {
    id: &'a str,
    json: &'a str,
    home: Option<&'a str>,
}

/// A view as read from the store, memory by memory.
#[derive(Default)]
struct Loaded {
    entries: HashMap<String, MemoryEntry>,
    homes: HashMap<String, String>,
    batches: HashMap<String, Batch>,
    bytes: u64,
    /// A record was damaged or a memory found twice: no snapshot is made
    /// of such a view.
    unsound: bool,
}

impl Loaded {
    /// Takes the record at `key`: a memory's own, or a batch's.
    fn take(&mut self, log: &DamageLog, key: &str, json: &str, loaded: &mut dyn FnMut(&MemoryEntry)) {
        if !batch::is_batch(json) {
            let Some(e) = damage::parse::<MemoryEntry>(log, key, json) else {
                self.unsound = true;
                return;
            };
            if !is_record_of(key, &e) {
                log.report(key, "the record is not a valid memory under its own id");
                self.unsound = true;
                return;
            }
            self.bytes += json.len() as u64;
            // Its own record wins over a batch's copy.
            if let Some(home) = self.homes.remove(&e.id) {
                self.unsound = true;
                if let Some(b) = self.batches.get_mut(&home) {
                    b.ids.retain(|id| *id != e.id);
                    b.stale = true;
                }
            }
            loaded(&e);
            self.entries.insert(e.id.clone(), e);
            return;
        }
        let name = key[ENTRY_PREFIX.len()..].to_string();
        let mut b = Batch { bytes: json.len() as u64, ..Batch::default() };
        self.bytes += b.bytes;
        for line in lines::records(json) {
            let e = match serde_json::from_str::<MemoryEntry>(line) {
                Ok(e) if e.validate().is_ok() => e,
                _ => {
                    b.unreadable.push(line.to_string());
                    continue;
                }
            };
            if self.entries.contains_key(&e.id) {
                b.stale = true;
                self.unsound = true;
                continue;
            }
            loaded(&e);
            self.homes.insert(e.id.clone(), name.clone());
            b.ids.push(e.id.clone());
            self.entries.insert(e.id.clone(), e);
        }
        if !b.unreadable.is_empty() {
            log.report(key, format!("{} of the batch's memories are not valid memories", b.unreadable.len()));
            self.unsound = true;
        }
        self.batches.insert(name, b);
    }

    /// Takes a memory of a snapshot's chunk, `len` bytes of JSON, living in
    /// `home`.
    fn take_line(&mut self, e: MemoryEntry, len: usize, home: Option<&str>) {
        match home {
            None => self.bytes += len as u64,
            Some(home) => {
                let b = self.batches.entry(home.to_string()).or_default();
                if b.bytes == 0 {
                    b.bytes = batch::bytes([]);
                    self.bytes += b.bytes;
                }
                b.bytes += 1 + len as u64;
                self.bytes += 1 + len as u64;
                b.ids.push(e.id.clone());
                self.homes.insert(e.id.clone(), home.to_string());
            }
        }
        self.entries.insert(e.id.clone(), e);
    }
}

/// The valid memories' probes, in no order, with their ids alongside (the
/// probes stay packed) and where each id is; the ids of memories rewritten
/// or deleted since (their probes go) and of memories written since (theirs
/// come, while they are valid).
#[derive(Clone, Default)]
struct Probes {
    probes: Vec<Probe>,
    ids: Vec<String>,
    at: HashMap<String, usize>,
    dropped: Vec<String>,
    pending: Vec<String>,
}

impl Probes {
    fn drop_probe(&mut self, id: &str) {
        let Some(i) = self.at.remove(id) else { return };
        self.probes.swap_remove(i);
        self.ids.swap_remove(i);
        if let Some(moved) = self.ids.get(i) {
            self.at.insert(moved.clone(), i);
        }
    }
}

impl Records {
    /// Loads every memory of the namespace, and drops expired hashes.
    pub async fn open(store: Rc<dyn Store>, clock: Rc<dyn Clock>, dedup: DedupOptions) -> Result<Records> {
        Self::open_with(store, clock, dedup, Rc::default(), &mut |_| {}).await
    }

    /// [`Records::open`], reporting damaged records to `damage`
    /// (they are skipped: one bad record never locks the namespace), and
    /// showing each valid memory to `loaded` as it is read, so work on it
    /// (the search index's analysis) overlaps the reading of the rest.
    pub async fn open_with(
        store: Rc<dyn Store>,
        clock: Rc<dyn Clock>,
        dedup: DedupOptions,
        damage: Rc<DamageLog>,
        loaded: &mut dyn FnMut(&MemoryEntry),
    ) -> Result<Records> {
        let mut lt = Records {
            store,
            clock,
            dedup,
            entries: HashMap::default(),
            fingerprints: HashMap::default(),
            processed: HashMap::default(),
            generation: 0,
            generation_text: None,
            storage_bytes: 0,
            damage,
            changes: Changes::All,
            probes: None,
            journal: None,
            snapshots_refused: false,
            homes: HashMap::default(),
            batches: HashMap::default(),
        };
        lt.reload(loaded).await?;
        let now = lt.clock.now_ms();
        let expired: Vec<String> =
            lt.processed.iter().filter(|(_, &exp)| exp <= now).map(|(h, _)| processed_key(h)).collect();
        if !expired.is_empty() {
            lt.store.delete_many(expired).await?;
            lt.processed.retain(|_, exp| *exp > now);
        }
        Ok(lt)
    }

    /// Reads every memory and hash again; `loaded` sees each valid memory.
    async fn reload(&mut self, loaded: &mut dyn FnMut(&MemoryEntry)) -> Result<()> {
        self.hold(Loaded::default());
        self.fingerprints.clear();
        self.probes = None;
        self.changes = Changes::All;
        self.journal = None;
        // The generation first: a write that lands between it and the lists
        // makes the next check reload again, never miss.
        let (generation, journal) = self.read_generation_and_journal().await?;
        (self.generation, self.generation_text) = generation;
        let stored = journal.as_deref().and_then(Journal::parse);
        let current = stored
            .as_ref()
            .filter(|(at, _)| self.generation != UNREADABLE && self.generation_text.as_deref() == Some(*at));
        let from_snapshot = match current {
            Some((_, journal)) => self.load_snapshot(journal, loaded).await?,
            None => false,
        };
        if !from_snapshot {
            let records = self.scan_records(loaded).await?;
            if let Some(records) = records {
                self.write_snapshot(&records, stored.map(|(_, j)| j)).await;
            }
        }
        self.load_processed().await
    }

    async fn load_processed(&mut self) -> Result<()> {
        self.processed.clear();
        for (key, exp) in self.store.list(PROCESSED_PREFIX).await? {
            match exp.parse() {
                Ok(exp) => {
                    self.processed.insert(key[PROCESSED_PREFIX.len()..].to_string(), exp);
                }
                Err(_) => self.damage.report(&key, "not an expiry time"),
            }
        }
        Ok(())
    }

    /// The view `loaded` read.
    fn hold(&mut self, loaded: Loaded) {
        self.entries = loaded.entries;
        self.homes = loaded.homes;
        self.batches = loaded.batches;
        self.storage_bytes = loaded.bytes;
    }

    /// Reads every record; gives them (key and value) when a snapshot of
    /// them is worth making (many memories, none damaged or found twice).
    async fn scan_records(
        &mut self,
        loaded: &mut dyn FnMut(&MemoryEntry),
    ) -> Result<Option<Vec<(String, String)>>> {
        let mut view = Loaded::default();
        let mut records = Vec::new();
        let log = &self.damage;
        let mut part = |part: Vec<(String, String)>| {
            for (key, json) in part {
                view.take(log, &key, &json, loaded);
                records.push((key, json));
            }
        };
        self.store.scan(ENTRY_PREFIX, &mut part).await?;
        let worth = !view.unsound && view.entries.len() >= snapshot::MIN_MEMORIES;
        self.hold(view);
        Ok(worth.then_some(records))
    }

    /// Reads the memories from `journal`'s snapshot and the records it
    /// lists; says whether it could (the chunks all there and readable).
    async fn load_snapshot(
        &mut self,
        journal: &Journal,
        loaded: &mut dyn FnMut(&MemoryEntry),
    ) -> Result<bool> {
        let Some(chunks) = snapshot::read(&*self.store, journal).await? else { return Ok(false) };
        // Memories and batches written since.
        let written: HashSet<&str> = journal.ids.iter().map(String::as_str).collect();
        let keys: Vec<String> = written.iter().map(|id| entry_key(id)).collect();
        let records = self.store.get_many(&keys).await?;
        let mut view = Loaded::default();
        let mut home = None;
        for line in chunks.iter().flat_map(|c| lines::records(c)) {
            if let Some(h) = batch::home_of(line) {
                home = h;
                continue;
            }
            let Ok(e) = serde_json::from_str::<MemoryEntry>(line) else { return Ok(false) };
            if !written.contains(e.id.as_str()) && !home.is_some_and(|h| written.contains(h)) {
                view.take_line(e, line.len(), home);
            }
        }
        for (key, json) in keys.iter().zip(records) {
            if let Some(json) = json {
                view.take(&self.damage, key, &json, &mut |_| {});
            }
        }
        for e in view.entries.values().filter(|e| e.is_valid()) {
            loaded(e);
        }
        self.hold(view);
        self.journal = Some(journal.clone());
        Ok(true)
    }

    /// Writes a snapshot of `records` (every record, just read at the
    /// view's generation) if the store is still there, and deletes the one
    /// `replaced` names. A snapshot only saves time: when it cannot be
    /// written (a backend's quota, another writer first), opening reads
    /// every record, as it did.
    async fn write_snapshot(&mut self, records: &[(String, String)], replaced: Option<Journal>) {
        let Some(at) = self.generation_text.clone().filter(|_| !self.snapshots_refused) else { return };
        let mut memories = Vec::with_capacity(records.len());
        for (key, value) in records {
            if batch::is_batch(value) {
                let home = Some(&key[ENTRY_PREFIX.len()..]);
                memories.extend(lines::records(value).map(|json| (home, Line::Json(json))));
            } else {
                memories.push((None, Line::Json(value)));
            }
        }
        let Some(mut items) = snapshot_chunks(&at, memories) else { return };
        let journal = Journal { base: at.clone(), chunks: items.len(), ids: Vec::new() };
        items.push((JOURNAL_KEY.to_string(), journal.text(&at)));
        match self.store.put_many_if(GENERATION_KEY, Some(&at), items).await {
            Ok(true) => {}
            Ok(false) => return,
            Err(_) => {
                self.snapshots_refused = true;
                return;
            }
        }
        let journal_chunks = journal.chunks;
        self.journal = Some(journal);
        if let Some(old) = replaced.filter(|old| old.chunks > journal_chunks) {
            // Left behind if this fails: the next snapshot writes over them,
            // and every deletion takes them.
            let _ = self.store.delete_many(snapshot::chunk_keys(journal_chunks, old.chunks)).await;
        }
    }

    /// The keys of every snapshot's chunks and of the journal: what a
    /// deletion deletes with the memories.
    async fn snapshot_keys(&self) -> Result<Vec<String>> {
        let mut keys: Vec<String> =
            self.store.list(SNAPSHOT_PREFIX).await?.into_iter().map(|(k, _)| k).collect();
        keys.push(JOURNAL_KEY.to_string());
        Ok(keys)
    }

    /// The stored generation, and its text as stored (what a
    /// check-and-write compares: "0" or "+5" parse to numbers too, and must
    /// not make every check fail). An unreadable one reads as "changed"
    /// (the maximum), so every look reloads until a write repairs it.
    async fn read_generation(&self) -> Result<(u64, Option<String>)> {
        let text = self.store.get(GENERATION_KEY).await?;
        Ok(self.parse_generation(text))
    }

    /// The generation and the journal, read together (of one moment where
    /// the backend allows).
    async fn read_generation_and_journal(&self) -> Result<((u64, Option<String>), Option<String>)> {
        let read = self.store.get_many(&[GENERATION_KEY.to_string(), JOURNAL_KEY.to_string()]).await?;
        let [generation, journal] = <[Option<String>; 2]>::try_from(read)
            .map_err(|_| Error::storage("get_many did not answer every key"))?;
        Ok((self.parse_generation(generation), journal))
    }

    fn parse_generation(&self, text: Option<String>) -> (u64, Option<String>) {
        let generation = match &text {
            None => 0,
            Some(g) => g.parse().unwrap_or_else(|_| {
                self.damage.report(GENERATION_KEY, "not a generation number");
                UNREADABLE
            }),
        };
        (generation, text)
    }

    /// Notes that the memory `id` changed, for [`Records::take_changes`].
    fn changed(&mut self, id: &str) {
        if let Changes::Ids(ids) = &mut self.changes {
            ids.push(id.to_string());
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

    /// Holds `generation`, just written.
    fn set_generation(&mut self, generation: u64) {
        self.generation = generation;
        self.generation_text = Some(generation.to_string());
    }

    /// A generation no instance holds (and never the unreadable marker).
    fn next_generation(&self) -> u64 {
        crate::entry::random_u64(self.clock.now_ms()).min(UNREADABLE - 1)
    }

    /// Catches up when another instance (another tab) wrote since we last
    /// looked; says whether it did. Called before every write.
    pub async fn refresh(&mut self) -> Result<bool> {
        let (generation, text) = self.read_generation().await?;
        if generation != self.generation {
            self.catch_up().await?;
            return Ok(true);
        }
        self.generation_text = text;
        Ok(false)
    }

    /// Brings the view to the stored generation: when the stored journal
    /// extends the one this view holds, by reading the memories written
    /// since (a few records, not every one, and the search index catches up
    /// on those alone); otherwise by reading every memory again.
    async fn catch_up(&mut self) -> Result<()> {
        let ((number, text), journal) = self.read_generation_and_journal().await?;
        let extended = match (&self.journal, journal.as_deref().and_then(Journal::parse)) {
            (Some(mine), Some((at, stored)))
                if number != UNREADABLE
                    && text.as_deref() == Some(at)
                    && stored.base == mine.base
                    && stored.chunks == mine.chunks
                    && stored.ids.starts_with(&mine.ids) =>
            {
                Some(stored)
            }
            _ => None,
        };
        let Some(stored) = extended else { return self.reload(&mut |_| {}).await };
        let mut seen = HashSet::default();
        let ids: Vec<&String> = stored.ids[self.journal.as_ref().map_or(0, |j| j.ids.len())..]
            .iter()
            .filter(|id| seen.insert(id.as_str()))
            .collect();
        let keys: Vec<String> = ids.iter().map(|id| entry_key(id)).collect();
        let (mut written, mut batches) = (Vec::with_capacity(keys.len()), Vec::new());
        for (key, json) in keys.iter().zip(self.store.get_many(&keys).await?) {
            // Gone or unreadable since: a full read says which, and reports it.
            let Some(json) = json else { return self.reload(&mut |_| {}).await };
            let mut read = Loaded::default();
            read.take(&DamageLog::default(), key, &json, &mut |_| {});
            if read.unsound || read.entries.is_empty() && !batch::is_batch(&json) {
                return self.reload(&mut |_| {}).await;
            }
            let Loaded { mut entries, batches: read_batches, .. } = read;
            match read_batches.into_iter().next() {
                Some((name, b)) => {
                    for id in &b.ids {
                        written.extend(entries.remove(id).map(|e| (e, 0, Some(name.clone()))));
                    }
                    batches.push((name, b.bytes));
                }
                None => written.extend(entries.into_values().map(|e| (e, json.len() as u64, None))),
            }
        }
        let mut left = HashSet::default();
        for (e, bytes, home) in written {
            self.damage.repaired(&entry_key(home.as_deref().unwrap_or(&e.id)));
            left.extend(self.homes.get(&e.id).filter(|old| home.as_ref() != Some(*old)).cloned());
            self.apply(e, bytes, home);
        }
        for (name, bytes) in batches {
            self.set_batch_bytes(&name, bytes);
        }
        for name in left {
            self.rebatch(&name);
        }
        (self.generation, self.generation_text) = (number, text);
        self.journal = Some(stored);
        // Another instance's processed marks move the generation too.
        self.load_processed().await
    }

    /// Writes `entries` together with a bumped generation, then applies them.
    async fn write(&mut self, entries: Vec<MemoryEntry>) -> Result<()> {
        self.write_checked(entries, false).await.map(drop)
    }

    /// [`Records::write`] only if the store is still at this view's
    /// generation; says whether it wrote.
    async fn write_if_current(&mut self, entries: Vec<MemoryEntry>) -> Result<bool> {
        self.write_checked(entries, true).await
    }

    async fn write_checked(&mut self, entries: Vec<MemoryEntry>, check: bool) -> Result<bool> {
        let jsons = entries.iter().map(to_json).collect::<Result<Vec<String>>>()?;
        let generation = self.next_generation();
        // New memories written together share records; any other write is a
        // record per memory.
        let together = entries.len() > 1 && entries.iter().all(|e| !self.entries.contains_key(&e.id));
        let packed = if together { batch::pack(&jsons) } else { None };
        let mut items = Vec::with_capacity(entries.len() + 2);
        let (mut homes, mut listed) = (Vec::with_capacity(entries.len()), Vec::new());
        match packed {
            Some(values) => {
                for (n, (value, count)) in values.into_iter().enumerate() {
                    let name = batch::name(generation, n);
                    homes.extend(std::iter::repeat_n(Some(name.clone()), count));
                    items.push((entry_key(&name), value));
                    listed.push(name);
                }
            }
            None => {
                for (e, json) in entries.iter().zip(&jsons) {
                    items.push((entry_key(&e.id), json.clone()));
                    homes.push(None);
                    listed.push(e.id.clone());
                }
            }
        }
        // Memories leaving a batch for their own records: the batch is
        // rewritten without them in the same transaction.
        let leaving: HashSet<&str> =
            entries.iter().map(|e| e.id.as_str()).filter(|id| self.homes.contains_key(*id)).collect();
        let rewritten = self.batches_without(&leaving, false);
        for (name, value) in &rewritten {
            items.push((entry_key(name), value.clone().unwrap_or_else(|| batch::value([""; 0]))));
        }
        items.push((GENERATION_KEY.to_string(), generation.to_string()));
        // A snapshot holding text this write changes goes first: a forgotten
        // or redacted text must not outlive its record.
        let rewrites_text = entries.iter().any(|e| {
            self.entries.get(&e.id).is_some_and(|o| o.content != e.content || o.metadata != e.metadata)
        });
        if rewrites_text {
            self.store.delete_many(self.snapshot_keys().await?).await?;
        }
        let journal = match &self.journal {
            Some(j) if !rewrites_text => j.with(listed.iter().map(String::as_str)),
            _ => None,
        };
        let keep = match journal {
            Some(j) => Keep::Journal(j),
            None => {
                let written: Vec<Written> = entries
                    .iter()
                    .zip(&jsons)
                    .zip(&homes)
                    .map(|((e, json), home)| Written { id: &e.id, json, home: home.as_deref() })
                    .collect();
                self.snapshot_of_view(&written, &HashSet::default(), generation)
            }
        };
        let Some(items) = self.put_journaled(items, keep, check, generation).await? else { return Ok(false) };
        // A batch rewritten with its unreadable lines is still damaged.
        let damaged = |name: &str| self.batches.get(name).is_some_and(|b| !b.unreadable.is_empty());
        for (key, _) in
            items.iter().filter(|(key, _)| !damaged(key.strip_prefix(ENTRY_PREFIX).unwrap_or_default()))
        {
            self.damage.repaired(key);
        }
        for ((e, json), home) in entries.into_iter().zip(jsons).zip(homes) {
            let bytes = if home.is_some() { 0 } else { json.len() as u64 };
            self.apply(e, bytes, home);
        }
        // New batches and the ones rewritten: their lengths as written.
        for (key, value) in items.iter().filter(|(_, v)| batch::is_batch(v)) {
            self.set_batch_bytes(&key[ENTRY_PREFIX.len()..], value.len() as u64);
        }
        for (name, value) in &rewritten {
            self.rewrote_batch(name, value.as_deref());
        }
        let emptied: Vec<String> =
            rewritten.iter().filter(|(_, v)| v.is_none()).map(|(name, _)| entry_key(name)).collect();
        if !emptied.is_empty() {
            // Empty now: nothing is lost if this fails, the next deletion
            // takes them.
            let _ = self.store.delete_many(emptied).await;
        }
        Ok(true)
    }

    /// The batches holding any of `leaving` (and, with `stale`, those
    /// holding copies of memories with records of their own), each with
    /// its value without them (`None`: nothing left).
    fn batches_without(&self, leaving: &HashSet<&str>, stale: bool) -> Vec<(String, Option<String>)> {
        let mut names: HashSet<&str> =
            leaving.iter().filter_map(|id| self.homes.get(*id)).map(String::as_str).collect();
        if stale {
            names.extend(self.batches.iter().filter(|(_, b)| b.stale).map(|(name, _)| name.as_str()));
        }
        let mut out = Vec::with_capacity(names.len());
        for name in names {
            let Some(b) = self.batches.get(name) else { continue };
            let kept: Vec<String> = b
                .ids
                .iter()
                .filter(|id| !leaving.contains(id.as_str()))
                .filter_map(|id| self.entries.get(id))
                .map(|e| to_json(e).unwrap_or_default())
                .chain(b.unreadable.iter().cloned())
                .collect();
            out.push((name.to_string(), (!kept.is_empty()).then(|| batch::value(&kept))));
        }
        out
    }

    /// Holds `bytes` as the length of batch `name`'s value.
    fn set_batch_bytes(&mut self, name: &str, bytes: u64) {
        let b = self.batches.entry(name.to_string()).or_default();
        self.storage_bytes = self.storage_bytes + bytes - b.bytes.min(self.storage_bytes);
        b.bytes = bytes;
    }

    /// Batch `name` as this instance just rewrote it: to `value`, or emptied
    /// (`None`).
    fn rewrote_batch(&mut self, name: &str, value: Option<&str>) {
        match value {
            Some(value) => {
                self.set_batch_bytes(name, value.len() as u64);
                if let Some(b) = self.batches.get_mut(name) {
                    b.stale = false;
                }
            }
            None => {
                self.set_batch_bytes(name, 0);
                self.batches.remove(name);
            }
        }
    }

    /// Batch `name` as another instance rewrote it, without memories this
    /// view saw leave it: its length, made from the memories left, or gone
    /// when nothing is left.
    fn rebatch(&mut self, name: &str) {
        let Some(b) = self.batches.get(name) else { return };
        if b.ids.is_empty() && b.unreadable.is_empty() {
            self.set_batch_bytes(name, 0);
            self.batches.remove(name);
            return;
        }
        let lens =
            b.ids.iter().filter_map(|id| self.entries.get(id)).map(|e| to_json(e).map_or(0, |j| j.len()));
        let bytes = batch::bytes(lens.chain(b.unreadable.iter().map(String::len)));
        self.set_batch_bytes(name, bytes);
    }

    /// Takes a memory just written (here or by another instance) into the
    /// view, with its `bytes` of JSON in its own record, or living in batch
    /// `home` (whose length its caller holds).
    fn apply(&mut self, e: MemoryEntry, bytes: u64, home: Option<String>) {
        let rewritten = self.entries.contains_key(&e.id);
        if let Some(probes) = self.probes_to_note() {
            // Rewritten: expired, restored, imported anew.
            if rewritten {
                probes.dropped.push(e.id.clone());
            }
            probes.pending.push(e.id.clone());
        }
        let old = self.entries.get(&e.id);
        // A fingerprint depends on the text alone: an expiry keeps it.
        if old.is_some_and(|o| o.content != e.content) {
            self.fingerprints.remove(&e.id);
        }
        // A batch's memory counts in its batch's length.
        let own = old.filter(|_| !self.homes.contains_key(&e.id));
        let old = own.map_or(0, |o| to_json(o).map_or(0, |j| j.len() as u64));
        self.storage_bytes = self.storage_bytes + bytes - old.min(self.storage_bytes);
        self.changed(&e.id);
        self.leave_batch(&e.id);
        if let Some(home) = home {
            self.batches.entry(home.clone()).or_default().ids.push(e.id.clone());
            self.homes.insert(e.id.clone(), home);
        }
        self.entries.insert(e.id.clone(), e);
    }

    /// Memory `id` no longer lives in its batch, if it did.
    fn leave_batch(&mut self, id: &str) {
        if let Some(home) = self.homes.remove(id) {
            if let Some(b) = self.batches.get_mut(&home) {
                b.ids.retain(|other| other != id);
            }
        }
    }

    /// Writes `items` and a new `generation` with what keeps opening fast
    /// (the journal extended, or a snapshot of the view), if the store is
    /// still at this view's generation; gives the items written, `None` when
    /// it was not and `check` asked for it. Without `check`, a store that
    /// moved on gets the items alone (the journal or snapshot would drop
    /// what another instance wrote since), and the view keeps its old
    /// generation, so its next look reloads what it missed: a view never
    /// holds a generation whose writes it has not seen, which is what a
    /// snapshot of the view relies on.
    async fn put_journaled(
        &mut self,
        mut items: Vec<(String, String)>,
        keep: Keep,
        check: bool,
        generation: u64,
    ) -> Result<Option<Vec<(String, String)>>> {
        let at = generation.to_string();
        let n = items.len();
        let mut journal = match keep {
            Keep::Journal(j) => Some(j),
            Keep::Snapshot(chunks) => {
                let j = Journal { base: at.clone(), chunks: chunks.len(), ids: Vec::new() };
                items.extend(chunks);
                Some(j)
            }
            Keep::Nothing => None,
        };
        if let Some(j) = &journal {
            items.push((JOURNAL_KEY.to_string(), j.text(&at)));
        }
        let expected = self.generation_text.clone();
        // The write's own items, kept: the snapshot's chunks go to the store
        // without a copy.
        let mine = items[..n].to_vec();
        let snapshot = items.len() > n + 1;
        let mut wrote = self.store.put_many_if(GENERATION_KEY, expected.as_deref(), items).await;
        if wrote.is_err() && snapshot {
            // A snapshot only saves time: one the backend refuses (its quota,
            // its value limits) does not cost the write its memories.
            journal = None;
            self.snapshots_refused = true;
            wrote = self.store.put_many_if(GENERATION_KEY, expected.as_deref(), mine.clone()).await;
        }
        let (wrote, items) = (wrote?, mine);
        if wrote {
            self.set_generation(generation);
            self.journal = journal;
            return Ok(Some(items));
        }
        if check {
            return Ok(None);
        }
        self.store.put_many(items.clone()).await?;
        self.journal = None;
        Ok(Some(items))
    }

    /// What a write that cannot extend the journal keeps instead: a
    /// snapshot of the view as the write leaves it (`written` replacing or
    /// joining the memories held, `removed` gone), when the view is large
    /// and holds every record (none damaged). A few hundred writes pay for
    /// one, and every open after reads it.
    fn snapshot_of_view(&self, written: &[Written], removed: &HashSet<&str>, at: u64) -> Keep {
        let left = self.entries.len() + written.len() - removed.len().min(self.entries.len());
        if self.snapshots_refused
            || left < snapshot::MIN_MEMORIES
            || self.damage.list().iter().any(|d| d.key.starts_with(ENTRY_PREFIX))
        {
            return Keep::Nothing;
        }
        let replaced: HashSet<&str> = written.iter().map(|w| w.id).chain(removed.iter().copied()).collect();
        let kept: Vec<&MemoryEntry> =
            self.entries.values().filter(|e| !replaced.contains(e.id.as_str())).collect();
        if written.len() + kept.len() < snapshot::MIN_MEMORIES {
            return Keep::Nothing;
        }
        let mut memories: Vec<(Option<&str>, Line)> = Vec::with_capacity(written.len() + kept.len());
        memories.extend(written.iter().map(|w| (w.home, Line::Json(w.json))));
        memories
            .extend(kept.into_iter().map(|e| (self.homes.get(&e.id).map(String::as_str), Line::Entry(e))));
        match snapshot_chunks(&at.to_string(), memories) {
            Some(chunks) => Keep::Snapshot(chunks),
            None => Keep::Nothing,
        }
    }

    /// The probes held, to note a change in; probes still shared with a
    /// plan are let go instead (made anew at the next).
    fn probes_to_note(&mut self) -> Option<&mut Probes> {
        if self.probes.as_mut().is_some_and(|p| Rc::get_mut(p).is_none()) {
            self.probes = None;
        }
        self.probes.as_mut().and_then(Rc::get_mut)
    }

    /// The probes of the valid memories, made whole or for those stored
    /// since (each memory's fingerprint made on first use); held here
    /// again, unless a change drops them, once the plan is made.
    fn caught_up_probes(&mut self) -> Rc<Probes> {
        let mut probes = self.probes.take().map(Rc::unwrap_or_clone).unwrap_or_else(|| Probes {
            pending: self.entries.values().filter(|e| e.is_valid()).map(|e| e.id.clone()).collect(),
            ..Probes::default()
        });
        for id in std::mem::take(&mut probes.dropped) {
            probes.drop_probe(&id);
        }
        for id in std::mem::take(&mut probes.pending) {
            let Some(e) = self.entries.get(&id).filter(|e| e.is_valid()) else { continue };
            if probes.at.contains_key(&id) {
                continue;
            }
            let fp = self.fingerprints.entry(id.clone()).or_insert_with(|| Fingerprint::new(&e.content));
            probes.probes.push(Probe::new(fp, &e.scope));
            probes.at.insert(id.clone(), probes.ids.len());
            probes.ids.push(id);
        }
        let probes = Rc::new(probes);
        self.probes = Some(probes.clone());
        probes
    }

    /// What remembering `entries` does against the view held: each is
    /// deduplicated against the valid memories of its scope and the
    /// batch's earlier ones.
    fn plan(&mut self, entries: &[MemoryEntry], dedup: &DedupOptions) -> Plan {
        let mut outcomes: Vec<Option<Remembered>> = Vec::with_capacity(entries.len());
        let mut new_entries: Vec<MemoryEntry> = Vec::new();
        let mut supersessions = Vec::new();
        let probes = self.caught_up_probes();
        // With whether it is stored as new; their probes alongside.
        let mut batch: Vec<(Fingerprint, &MemoryEntry, bool)> = Vec::new();
        let mut batch_probes: Vec<Probe> = Vec::new();
        'entries: for entry in entries {
            let fp = Fingerprint::new(&entry.content);
            let probe = Probe::new(&fp, &entry.scope);
            // The stored memories the probes cannot rule out, newest first,
            // so a duplicate reports the most recent match.
            let mut candidates: Vec<&MemoryEntry> = Vec::new();
            for (i, p) in probes.probes.iter().enumerate() {
                if may_relate(&probe, p, dedup) {
                    candidates
                        .extend(self.entries.get(&probes.ids[i]).filter(|old| old.scope == entry.scope));
                }
            }
            crate::order::sort_by(&mut candidates, |a, b| {
                b.timestamp.cmp(&a.timestamp).then_with(|| a.id.cmp(&b.id))
            });
            let mut replaced = Vec::new();
            let mut change = None;
            for old in candidates {
                let made;
                let old_fp = match self.fingerprints.get(&old.id) {
                    Some(fp) => fp,
                    None => {
                        made = Fingerprint::new(&old.content);
                        &made
                    }
                };
                match relation_of(&fp, old_fp, dedup) {
                    Relation::Duplicate(similarity) => {
                        let existing = old.clone();
                        outcomes.push(Some(Remembered::Duplicate { existing, similarity }));
                        continue 'entries;
                    }
                    Relation::Fuller => replaced.push(old.id.clone()),
                    Relation::Changed(c) => {
                        replaced.push(old.id.clone());
                        change = change.or(Some(c));
                    }
                    Relation::Unrelated => {}
                }
            }
            for (k, (other_fp, other, _)) in batch.iter().enumerate().rev() {
                if other.scope != entry.scope || !may_relate(&probe, &batch_probes[k], dedup) {
                    continue;
                }
                if let Relation::Duplicate(similarity) = relation_of(&fp, other_fp, dedup) {
                    let existing = (*other).clone();
                    outcomes.push(Some(Remembered::Duplicate { existing, similarity }));
                    continue 'entries;
                }
            }
            let new = replaced.is_empty();
            if new {
                new_entries.push(entry.clone());
                outcomes.push(Some(Remembered::Stored { entry: entry.clone() }));
            } else {
                supersessions.push((outcomes.len(), entry.clone(), replaced, change));
                outcomes.push(None);
            }
            batch.push((fp, entry, new));
            batch_probes.push(probe);
        }
        let fingerprints =
            batch.into_iter().filter(|(_, _, new)| *new).map(|(fp, e, _)| (e.id.clone(), fp)).collect();
        Plan { outcomes, new_entries, supersessions, fingerprints }
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

    /// Remembers many memories with one read of the store and one write
    /// transaction for all that are new: each is deduplicated against the
    /// stored memories and the batch's earlier ones. Validation comes first,
    /// so a bad entry stores none.
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
        // Planned against the view held, then written only if the store is
        // still at the view's generation (one transaction where the backend
        // allows): a write costs no read of its own. If another instance
        // wrote meanwhile, reload and plan again. A plan with nothing to
        // write (all duplicates) checks the generation with a read instead.
        let mut plan = self.plan(&entries, dedup);
        for tries in 1.. {
            let current = if plan.new_entries.is_empty() || self.generation == UNREADABLE {
                // `refresh` reloads when the store moved on.
                let moved = self.refresh().await?;
                if !moved && !plan.new_entries.is_empty() {
                    self.write(plan.new_entries.clone()).await?;
                }
                !moved
            } else if self.write_if_current(plan.new_entries.clone()).await? {
                true
            } else {
                self.catch_up().await?;
                false
            };
            if current {
                break;
            }
            if tries == MAX_PLANS {
                return Err(Error::storage(
                    "other writers changed the namespace during every try of this write; try again",
                ));
            }
            plan = self.plan(&entries, dedup);
        }
        let Plan { mut outcomes, supersessions, fingerprints, .. } = plan;
        self.fingerprints.extend(fingerprints);
        for (at, mut entry, replaced, change) in supersessions {
            if let Some(c) = change {
                // Kept on the memory, so a reviewer (or the judge) sees why.
                let why = serde_json::to_value(c).ok().and_then(|v| v.as_str().map(str::to_string));
                entry.metadata.insert("change".into(), why.unwrap_or_default());
            }
            let entry = self.supersede(entry, &replaced).await?;
            outcomes[at] = Some(Remembered::Superseded { entry, superseded: replaced, change });
        }
        Ok(outcomes.into_iter().map(|o| o.expect("every outcome is set")).collect())
    }

    /// Stores `new` and expires `old_ids` in its favour: the new memory is
    /// written first, the expiries after, so a failure in between leaves the
    /// old memories valid beside the new one.
    pub async fn supersede(&mut self, new: MemoryEntry, old_ids: &[String]) -> Result<MemoryEntry> {
        Self::check_scope(&new)?;
        let mut new = crate::longterm::temporal::classified(new);
        self.refresh().await?;
        for id in old_ids {
            match self.entries.get(id) {
                None => return Err(Error::new(ErrorCode::NotFound, format!("no memory {id:?}"))),
                Some(old) if old.scope != new.scope => {
                    return Err(Error::invalid(format!("memory {id:?} is in another scope ({})", old.scope)))
                }
                _ => {}
            }
        }
        // The link back survives an undo, so history still shows both.
        new.metadata.insert(SUPERSEDES.into(), old_ids.join(","));
        // Provenance accumulates: what the old memories came from, the new
        // one now stands for too.
        for id in old_ids {
            for source in self.entries.get(id).map(|e| e.sources.clone()).unwrap_or_default() {
                if !new.sources.contains(&source) {
                    new.sources.push(source);
                }
            }
        }
        self.write(vec![new.clone()]).await?;
        let now = self.clock.now_ms();
        let expired: Vec<MemoryEntry> = old_ids
            .iter()
            .filter_map(|id| self.entries.get(id))
            .filter(|e| e.is_valid())
            .map(|e| MemoryEntry { superseded_by: Some(new.id.clone()), valid_to: Some(now), ..e.clone() })
            .collect();
        self.write(expired).await?;
        Ok(new)
    }

    /// Undoes a supersession: the memories `id` replaced are valid again,
    /// and `id` itself is expired (kept in history).
    pub async fn undo(&mut self, id: &str) -> Result<()> {
        self.refresh().await?;
        let new = self
            .entries
            .get(id)
            .cloned()
            .ok_or_else(|| Error::new(ErrorCode::NotFound, format!("no memory {id:?}")))?;
        let mut changed: Vec<MemoryEntry> = self
            .entries
            .values()
            .filter(|e| e.superseded_by.as_deref() == Some(id))
            .map(|e| MemoryEntry { superseded_by: None, valid_to: None, ..e.clone() })
            .collect();
        if changed.is_empty() {
            return Err(Error::invalid(format!(
                "memory {id:?} superseded nothing: there is nothing to undo"
            )));
        }
        let mut retracted = new;
        retracted.valid_to = Some(self.clock.now_ms());
        retracted.metadata.insert(UNDONE.into(), "true".into());
        changed.push(retracted);
        self.write(changed).await
    }

    /// Every version connected to `id` through supersession, oldest first.
    /// Every memory, valid or not, whose sources hold `message_id`, oldest first.
    pub fn derived_from(&self, message_id: &str) -> Vec<MemoryEntry> {
        let mut out: Vec<MemoryEntry> =
            self.entries.values().filter(|e| e.sources.iter().any(|s| s == message_id)).cloned().collect();
        crate::order::sort_by(&mut out, |a, b| a.id.cmp(&b.id));
        out
    }

    pub fn history(&self, id: &str) -> Vec<MemoryEntry> {
        let mut seen: Vec<&MemoryEntry> = Vec::new();
        let mut queue = vec![id.to_string()];
        while let Some(cur) = queue.pop() {
            let Some(e) = self.entries.get(&cur) else { continue };
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
                self.entries
                    .values()
                    .filter(|o| {
                        o.superseded_by.as_deref() == Some(&cur)
                            || o.metadata.get(SUPERSEDES).is_some_and(|s| s.split(',').any(|id| id == cur))
                    })
                    .map(|o| o.id.clone()),
            );
        }
        let mut out: Vec<&MemoryEntry> = seen.into_iter().collect();
        crate::order::sort_by(&mut out, MemoryEntry::by_time);
        out.into_iter().cloned().collect()
    }

    pub fn get(&self, id: &str) -> Option<&MemoryEntry> {
        self.entries.get(id)
    }

    /// Valid memories (what retrieval sees), oldest first.
    /// The valid memories in no order (cheaper than [`Records::valid`]).
    pub fn valid_unordered(&self) -> impl Iterator<Item = &MemoryEntry> {
        self.entries.values().filter(|e| e.is_valid())
    }

    /// The memories in force at `at` (ms), superseded and undone ones
    /// included while they were, oldest first.
    pub fn in_force_at(&self, at: i64) -> Vec<&MemoryEntry> {
        let mut v: Vec<&MemoryEntry> = self.entries.values().filter(|e| e.in_force_at(at)).collect();
        crate::order::sort_by(&mut v, MemoryEntry::by_time);
        v
    }

    pub fn valid(&self) -> Vec<&MemoryEntry> {
        let mut v: Vec<&MemoryEntry> = self.entries.values().filter(|e| e.is_valid()).collect();
        crate::order::sort_by(&mut v, MemoryEntry::by_time);
        v
    }

    /// Hard-deletes one memory (and nothing else).
    /// Hard-deletes a memory with its history (the versions it superseded,
    /// and theirs): a forgotten fact must not survive as an expired one.
    pub async fn forget(&mut self, id: &str) -> Result<bool> {
        self.refresh().await?;
        if !self.entries.contains_key(id) {
            return Ok(false);
        }
        self.delete(self.with_history(id)).await?;
        Ok(true)
    }

    /// `id` and every version it replaced, directly or not, and every
    /// replacement of one of them that an undo took back (a retracted
    /// version of the same fact: `history(id)` lists it).
    pub fn with_history(&self, id: &str) -> Vec<String> {
        let mut ids = vec![id.to_string()];
        loop {
            let replaced = |e: &MemoryEntry| e.superseded_by.as_ref().is_some_and(|next| ids.contains(next));
            let retracted = |e: &MemoryEntry| {
                e.metadata.contains_key(UNDONE)
                    && e.metadata
                        .get(SUPERSEDES)
                        .is_some_and(|s| s.split(',').any(|o| ids.iter().any(|i| i == o)))
            };
            let older: Vec<String> = self
                .entries
                .values()
                .filter(|e| (replaced(e) || retracted(e)) && !ids.contains(&e.id))
                .map(|e| e.id.clone())
                .collect();
            if older.is_empty() {
                return ids;
            }
            ids.extend(older);
        }
    }

    /// Hard-deletes every memory of a scope; returns how many.
    pub async fn forget_scope(&mut self, scope: &Scope) -> Result<u32> {
        self.refresh().await?;
        let ids: Vec<String> =
            self.entries.values().filter(|e| &e.scope == scope).map(|e| e.id.clone()).collect();
        let n = ids.len() as u32;
        self.delete(ids).await?;
        Ok(n)
    }

    /// Hard-deletes the namespace's long-term memory and processed hashes.
    pub async fn purge(&mut self) -> Result<()> {
        let mut keys: Vec<String> =
            self.store.list(ENTRY_PREFIX).await?.into_iter().map(|(k, _)| k).collect();
        keys.extend(self.store.list(PROCESSED_PREFIX).await?.into_iter().map(|(k, _)| k));
        keys.extend(self.snapshot_keys().await?);
        self.store.delete_many(keys.clone()).await?;
        self.journal = None;
        // A new generation rather than none: an instance that saw the old
        // one must reload, and a later write's number is new to it too.
        let generation = self.next_generation();
        self.store.put_many(vec![(GENERATION_KEY.to_string(), generation.to_string())]).await?;
        for key in keys.iter().chain([&GENERATION_KEY.to_string()]) {
            self.damage.repaired(key);
        }
        self.hold(Loaded::default());
        self.fingerprints.clear();
        self.probes = None;
        self.processed.clear();
        self.set_generation(generation);
        self.changes = Changes::All;
        Ok(())
    }

    async fn delete(&mut self, ids: Vec<String>) -> Result<()> {
        if ids.is_empty() {
            return Ok(());
        }
        let removed: HashSet<&str> = ids.iter().map(String::as_str).collect();
        // The batches holding them are rewritten without them (and without
        // any stale copies), or deleted when nothing is left.
        let rewritten = self.batches_without(&removed, true);
        let mut keys: Vec<String> = ids.iter().map(|id| entry_key(id)).collect();
        keys.extend(rewritten.iter().filter(|(_, v)| v.is_none()).map(|(name, _)| entry_key(name)));
        keys.extend(self.snapshot_keys().await?);
        self.store.delete_many(keys).await?;
        let generation = self.next_generation();
        let keep = self.snapshot_of_view(&[], &removed, generation);
        let mut items: Vec<(String, String)> =
            rewritten.iter().filter_map(|(name, value)| Some((entry_key(name), value.clone()?))).collect();
        items.push((GENERATION_KEY.to_string(), generation.to_string()));
        self.put_journaled(items, keep, false, generation).await?;
        for id in &ids {
            self.damage.repaired(&entry_key(id));
        }
        if let Some(probes) = self.probes_to_note() {
            probes.dropped.extend(ids.iter().cloned());
        }
        for id in ids {
            self.changed(&id);
            self.fingerprints.remove(&id);
            let own = !self.homes.contains_key(&id);
            self.leave_batch(&id);
            if let Some(e) = self.entries.remove(&id).filter(|_| own) {
                self.storage_bytes -= to_json(&e).map_or(0, |j| j.len() as u64).min(self.storage_bytes);
            }
        }
        for (name, value) in &rewritten {
            self.rewrote_batch(name, value.as_deref());
        }
        Ok(())
    }

    /// True when `hash` was processed and has not expired.
    pub fn is_processed(&self, hash: &str) -> bool {
        self.processed.get(hash).is_some_and(|&exp| exp > self.clock.now_ms())
    }

    /// Records processed-message hashes for `ttl_ms`.
    pub async fn mark_processed(&mut self, hashes: &[String], ttl_ms: i64) -> Result<()> {
        let exp = self.clock.now_ms() + ttl_ms;
        let mut items: Vec<(String, String)> =
            hashes.iter().map(|h| (processed_key(h), exp.to_string())).collect();
        // A new generation, so other instances see the marks at their next look.
        let generation = self.next_generation();
        items.push((GENERATION_KEY.to_string(), generation.to_string()));
        let keep = match self.journal.as_ref().and_then(|j| j.with([])) {
            Some(j) => Keep::Journal(j),
            None => Keep::Nothing,
        };
        self.put_journaled(items, keep, false, generation).await?;
        for h in hashes {
            self.processed.insert(h.clone(), exp);
        }
        Ok(())
    }

    pub fn stats(&self) -> RecordStats {
        let mut s = RecordStats {
            storage_bytes: self.storage_bytes,
            processed_hashes: self.processed.len() as u32,
            ..Default::default()
        };
        for e in self.entries.values() {
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
        let mut entries: Vec<&MemoryEntry> = self.entries.values().collect();
        crate::order::sort_by(&mut entries, MemoryEntry::by_time);
        let entries: Vec<MemoryEntry> = entries.into_iter().cloned().collect();
        let processed = crate::order::map_of(self.processed.iter().map(|(k, v)| (k.clone(), *v)));
        ExportDocument {
            format: "agent-memory".into(),
            version: EXPORT_VERSION,
            exported_at: self.clock.now_ms(),
            count: Some(entries.len() as u32),
            entries,
            processed,
        }
    }

    /// Imports a document: entries by id (importing twice changes nothing),
    /// in one batch.
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
        let mut changed = Vec::new();
        // A current memory under an id not held yet is deduplicated as
        // `remember` would: the same fact exported from another namespace
        // is not stored twice. (History comes as it was, by id.)
        let fresh: Vec<MemoryEntry> = doc
            .entries
            .iter()
            .filter(|e| e.is_valid() && !self.entries.contains_key(&e.id))
            .cloned()
            .collect();
        let dedup = self.dedup;
        let duplicates: BTreeSet<String> = self
            .plan(&fresh, &dedup)
            .outcomes
            .iter()
            .zip(&fresh)
            .filter(|(o, _)| matches!(o, Some(Remembered::Duplicate { .. })))
            .map(|(_, e)| e.id.clone())
            .collect();
        for e in doc.entries {
            match self.entries.get(&e.id) {
                Some(old) if *old == e => report.unchanged += 1,
                Some(_) => {
                    report.updated += 1;
                    changed.push(e);
                }
                None if duplicates.contains(&e.id) => report.duplicates += 1,
                None => {
                    report.added += 1;
                    changed.push(e);
                }
            }
        }
        if !changed.is_empty() {
            self.write(changed).await?;
        }
        let now = self.clock.now_ms();
        let fresh: Vec<(String, i64)> = doc.processed.into_iter().filter(|(_, exp)| *exp > now).collect();
        if !fresh.is_empty() {
            self.store
                .put_many(fresh.iter().map(|(h, exp)| (processed_key(h), exp.to_string())).collect())
                .await?;
            self.processed.extend(fresh);
        }
        Ok(report)
    }
}

/// A new long-term memory (a fact by default) created now.
pub fn new_memory(content: impl Into<String>, scope: Scope, now: i64) -> MemoryEntry {
    MemoryEntry::new(content, Kind::Fact, crate::entry::Role::User, scope, now)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ports::clock::ManualClock;
    use crate::store::MemoryStore;
    use futures::executor::block_on;

    struct Env {
        store: Rc<MemoryStore>,
        clock: Rc<ManualClock>,
    }

    impl Env {
        fn new() -> Env {
            Env { store: Rc::new(MemoryStore::new()), clock: Rc::new(ManualClock::new(1_700_000_000_000)) }
        }
        fn open(&self) -> Records {
            block_on(Records::open(self.store.clone(), self.clock.clone(), DedupOptions::default())).unwrap()
        }
        fn fact(&self, text: &str) -> MemoryEntry {
            self.clock.advance(1_000);
            new_memory(text, Scope::User, self.clock.now_ms())
        }
        /// `n` unrelated facts remembered in one call.
        fn written_together(&self, n: usize) -> Vec<MemoryEntry> {
            let facts: Vec<MemoryEntry> =
                (0..n).map(|i| self.fact(&format!("fact {i} of {n} written together"))).collect();
            block_on(self.open().remember_many(facts.clone())).unwrap();
            facts
        }
    }

    #[test]
    fn two_dated_events_are_two_memories_and_a_new_value_of_a_state_replaces_the_old() {
        let env = Env::new();
        let mut lt = env.open();
        for text in [
            "Went hiking with Sam on 3 May 2023",
            "Went hiking with Sam on 10 May 2023",
            "Attended an LGBTQ support group on 7 May 2023",
            "Attended an LGBTQ support group on 20 July 2023",
        ] {
            let r = block_on(lt.remember(env.fact(text))).unwrap();
            assert!(matches!(r, Remembered::Stored { .. }), "{text}: {r:?}");
        }
        let again = block_on(lt.remember(env.fact("Went hiking with Sam on 10 May 2023"))).unwrap();
        assert!(matches!(again, Remembered::Duplicate { .. }), "the same event twice is one: {again:?}");
        for (old, new) in [
            ("Lives in Lisbon", "Lives in Porto"),
            ("Works as a nurse at St. Mary's", "Works as a doctor at St. Mary's"),
        ] {
            block_on(lt.remember(env.fact(old))).unwrap();
            let r = block_on(lt.remember(env.fact(new))).unwrap();
            assert!(matches!(r, Remembered::Superseded { .. }), "{new}: {r:?}");
        }
        let valid: Vec<&str> = lt.valid().iter().map(|e| e.content.as_str()).collect();
        assert_eq!(valid.len(), 6, "{valid:?}");
        assert!(
            !valid.contains(&"Lives in Lisbon") && !valid.iter().any(|v| v.contains("nurse")),
            "{valid:?}"
        );
    }

    #[test]
    fn a_changed_number_date_name_or_polarity_is_an_update_never_a_duplicate() {
        let cases = [
            ("Has 2 kids", "Has 3 kids", Change::Number),
            ("Meeting moved to Monday 10:00", "Meeting moved to Tuesday 10:00", Change::Date),
            ("Flight LH 454 on 3 May", "Flight LH 455 on 3 May", Change::Number),
            ("Shared fact 1", "Shared fact 2", Change::Number),
            ("Works with Alice on the billing API", "Works with Bob on the billing API", Change::Name),
            ("Likes spicy food", "Does not like spicy food", Change::Polarity),
            ("喜欢吃辣", "不喜欢吃辣", Change::Polarity),
        ];
        for (old, new, expected) in cases {
            let env = Env::new();
            let mut lt = env.open();
            let Remembered::Stored { entry: first } = block_on(lt.remember(env.fact(old))).unwrap() else {
                panic!("{old}")
            };
            let r = block_on(lt.remember(env.fact(new))).unwrap();
            let Remembered::Superseded { entry, superseded, change } = r else { panic!("{new}: {r:?}") };
            assert_eq!((superseded, change), (vec![first.id.clone()], Some(expected)), "{new}");
            assert_eq!(lt.valid().iter().map(|e| e.content.as_str()).collect::<Vec<_>>(), [new]);
            let versions: Vec<String> = lt.history(&entry.id).into_iter().map(|e| e.content).collect();
            assert_eq!(versions, [old, new], "the old version stays in history");
            block_on(lt.undo(&entry.id)).unwrap();
            assert_eq!(
                lt.valid().iter().map(|e| e.content.as_str()).collect::<Vec<_>>(),
                [old],
                "undo restores"
            );
        }
        // The same fact said again is still a duplicate.
        let env = Env::new();
        let mut lt = env.open();
        block_on(lt.remember(env.fact("Has 2 kids"))).unwrap();
        assert!(matches!(
            block_on(lt.remember(env.fact("has 2 kids."))).unwrap(),
            Remembered::Duplicate { .. }
        ));
        assert!(matches!(
            block_on(lt.remember(env.fact("Has 2 kid"))).unwrap(),
            Remembered::Duplicate { .. }
        ));
    }

    #[test]
    fn a_batch_dedups_against_the_store_and_itself_and_writes_once() {
        let env = Env::new();
        let mut lt = env.open();
        block_on(lt.remember(env.fact("I like Java"))).unwrap();
        let writes = env.store.writes();
        let batch = vec![
            env.fact("Lives in Lisbon"),
            env.fact("i like java."),
            env.fact("lives in lisbon!"),
            env.fact("Has two cats"),
            env.fact("I like Java and Kotlin"),
        ];
        let out = block_on(lt.remember_many(batch)).unwrap();
        let kinds: Vec<&str> = out
            .iter()
            .map(|r| match r {
                Remembered::Stored { .. } => "stored",
                Remembered::Duplicate { .. } => "duplicate",
                Remembered::Superseded { .. } => "superseded",
            })
            .collect();
        assert_eq!(kinds, ["stored", "duplicate", "duplicate", "stored", "superseded"]);
        // One write for the new ones, one for the supersession (new, then expiry).
        assert_eq!(env.store.writes(), writes + 3);
        let mut valid: Vec<&str> = lt.valid().iter().map(|e| e.content.as_str()).collect();
        valid.sort();
        assert_eq!(valid, ["Has two cats", "I like Java and Kotlin", "Lives in Lisbon"]);
        // A bad entry in a batch stores none.
        let bad = vec![env.fact("fine"), new_memory("", Scope::User, 0)];
        assert!(block_on(lt.remember_many(bad)).is_err());
        assert_eq!(lt.valid().len(), 3);
    }

    #[test]
    fn a_stale_view_writes_only_after_planning_again_against_the_store() {
        let env = Env::new();
        let (mut a, mut b) = (env.open(), env.open());
        block_on(b.remember(env.fact("Lives in Lisbon"))).unwrap();
        // `a` opened before that write: its check-and-write finds the store
        // moved on, reloads, and sees the duplicate instead of storing twice.
        let writes = env.store.writes();
        let r = block_on(a.remember(env.fact("lives in lisbon."))).unwrap();
        assert!(matches!(r, Remembered::Duplicate { .. }), "{r:?}");
        assert_eq!(env.store.writes(), writes, "nothing written");
        // Current again, a new fact is one write.
        block_on(a.remember(env.fact("Has two cats"))).unwrap();
        assert_eq!(env.store.writes(), writes + 1);
        let mut c = env.open();
        assert!(!block_on(c.refresh()).unwrap());
        assert_eq!(c.valid().len(), 2);
    }

    #[test]
    fn a_generation_stored_as_other_text_of_its_number_does_not_block_writes() {
        // Found by fuzzing: "0" (or "+5") parses to the number held, but the
        // check-and-write compares text, so every try failed.
        for text in ["0", "+5", "007"] {
            let env = Env::new();
            block_on(env.store.put_many(vec![(GENERATION_KEY.into(), text.into())])).unwrap();
            let mut lt = env.open();
            let r = block_on(lt.remember(env.fact("Lives in Lisbon"))).unwrap();
            assert!(matches!(r, Remembered::Stored { .. }), "{text}: {r:?}");
        }
    }

    #[test]
    fn the_same_fact_is_stored_once_also_across_reloads() {
        let env = Env::new();
        let mut lt = env.open();
        assert!(matches!(block_on(lt.remember(env.fact("I like Java"))).unwrap(), Remembered::Stored { .. }));
        assert!(matches!(
            block_on(lt.remember(env.fact("i like java."))).unwrap(),
            Remembered::Duplicate { .. }
        ));
        let mut again = env.open();
        let r = block_on(again.remember(env.fact("I like Java"))).unwrap();
        assert!(matches!(r, Remembered::Duplicate { similarity: Similarity::Exact, .. }));
        assert_eq!(again.valid().len(), 1);
        // Another scope is another memory.
        let mut agent = env.fact("I like Java");
        agent.scope = Scope::Agent("coder".into());
        assert!(matches!(block_on(again.remember(agent)).unwrap(), Remembered::Stored { .. }));
    }

    #[test]
    fn dedup_follows_every_change_to_the_view() {
        // Dedup's probes are kept between writes: each step checks they
        // took in the change before it (a store, an expiry, a restore, a
        // deletion, another instance's write).
        let env = Env::new();
        let mut lt = env.open();
        let id_of = |r: Remembered| match r {
            Remembered::Stored { entry } | Remembered::Superseded { entry, .. } => entry.id,
            r => panic!("{r:?}"),
        };
        let duplicate_of = |r: Remembered| match r {
            Remembered::Duplicate { existing, .. } => existing.id,
            r => panic!("{r:?}"),
        };
        let tea = id_of(block_on(lt.remember(env.fact("Likes tea in the morning"))).unwrap());
        id_of(block_on(lt.remember(env.fact("Lives in Lisbon"))).unwrap());
        assert_eq!(duplicate_of(block_on(lt.remember(env.fact("likes tea in the morning."))).unwrap()), tea);
        let fuller = block_on(lt.remember(env.fact("Likes tea in the morning and coffee at night"))).unwrap();
        let fuller = id_of(fuller);
        assert_eq!(
            duplicate_of(block_on(lt.remember(env.fact("Likes tea in the morning"))).unwrap()),
            fuller
        );
        block_on(lt.undo(&fuller)).unwrap();
        assert_eq!(duplicate_of(block_on(lt.remember(env.fact("likes tea in the morning"))).unwrap()), tea);
        assert!(block_on(lt.forget(&tea)).unwrap());
        let again = id_of(block_on(lt.remember(env.fact("Likes tea in the morning"))).unwrap());
        // Another instance's memory reaches this one's dedup at its next write.
        let mut other = env.open();
        let lisbon = block_on(other.remember(env.fact("Has a cat named Miso"))).unwrap();
        let miso = id_of(lisbon);
        assert!(
            block_on(lt.remember(env.fact("has a cat named Miso!"))).is_ok_and(|r| duplicate_of(r) == miso)
        );
        assert_eq!(duplicate_of(block_on(lt.remember(env.fact("likes tea in the morning"))).unwrap()), again);
        // Forgotten, then imported back under its id: one memory to compare.
        let doc = lt.export();
        assert!(block_on(lt.forget(&again)).unwrap());
        block_on(lt.import(doc)).unwrap();
        let r = block_on(lt.remember(env.fact("Likes tea in the morning with honey"))).unwrap();
        let Remembered::Superseded { superseded, .. } = r else { panic!("{r:?}") };
        assert_eq!(superseded, [again]);
        // Forgotten, then back under its id with other words: compared as such.
        let chess = id_of(block_on(lt.remember(env.fact("Plays chess every Sunday afternoon at the community club downtown with retired engineers and teachers"))).unwrap());
        // A plan in between: the memory has its probe before it goes.
        block_on(lt.remember(env.fact("Lives in Lisbon"))).unwrap();
        let mut changed = lt.export();
        changed.entries.retain(|e| e.id == chess);
        changed.entries[0].content = "Has a dog named Rex".into();
        changed.count = None; // a document edited on purpose
        assert!(block_on(lt.forget(&chess)).unwrap());
        block_on(lt.import(changed)).unwrap();
        assert_eq!(duplicate_of(block_on(lt.remember(env.fact("has a dog named Rex"))).unwrap()), chess);
    }

    #[test]
    fn a_fuller_version_supersedes_and_undo_restores() {
        let env = Env::new();
        let mut lt = env.open();
        let Remembered::Stored { entry: old } = block_on(lt.remember(env.fact("likes Rust"))).unwrap() else {
            panic!()
        };
        let r = block_on(lt.remember(env.fact("likes Rust and Zig for systems work"))).unwrap();
        let Remembered::Superseded { entry: new, superseded, .. } = r else { panic!("{r:?}") };
        assert_eq!(superseded, std::slice::from_ref(&old.id));
        assert_eq!(lt.valid().len(), 1);
        let old_now = lt.get(&old.id).unwrap();
        assert_eq!(old_now.superseded_by.as_deref(), Some(new.id.as_str()));
        assert!(old_now.valid_to.is_some());
        let h: Vec<String> = lt.history(&old.id).into_iter().map(|e| e.id).collect();
        assert_eq!(h, [old.id.clone(), new.id.clone()]);
        assert_eq!(lt.history(&new.id).len(), 2);
        block_on(lt.undo(&new.id)).unwrap();
        let valid: Vec<&str> = lt.valid().iter().map(|e| e.content.as_str()).collect();
        assert_eq!(valid, ["likes Rust"]);
        assert!(block_on(lt.undo(&old.id)).is_err());
        // The reloaded state is the same.
        let again = env.open();
        assert_eq!(again.valid().len(), 1);
        assert_eq!(again.history(&old.id).len(), 2);
    }

    #[test]
    fn supersede_writes_new_before_expiring_old() {
        let env = Env::new();
        let mut lt = env.open();
        let Remembered::Stored { entry: old } = block_on(lt.remember(env.fact("lives in Paris"))).unwrap()
        else {
            panic!()
        };
        let new = block_on(lt.supersede(env.fact("moved to Berlin in 2024"), std::slice::from_ref(&old.id)))
            .unwrap();
        let raw_new: MemoryEntry =
            serde_json::from_str(&block_on(env.store.get(&entry_key(&new.id))).unwrap().unwrap()).unwrap();
        assert!(raw_new.is_valid());
        let raw_old: MemoryEntry =
            serde_json::from_str(&block_on(env.store.get(&entry_key(&old.id))).unwrap().unwrap()).unwrap();
        assert_eq!(raw_old.superseded_by, Some(new.id.clone()));
        let missing = block_on(lt.supersede(env.fact("x"), &["nope".into()])).unwrap_err();
        assert_eq!(missing.code, ErrorCode::NotFound);
    }

    /// Every value stored under `lt/entry/`, by key.
    fn entry_records(env: &Env) -> Vec<(String, String)> {
        block_on(env.store.list(ENTRY_PREFIX)).unwrap()
    }

    #[test]
    fn new_memories_written_together_share_a_record_and_leave_it_when_changed() {
        let env = Env::new();
        let mut lt = env.open();
        let texts: Vec<String> =
            (0..100).map(|i| format!("memory number {i} about topic {}", i * 7919)).collect();
        let batch: Vec<MemoryEntry> = texts.iter().map(|t| env.fact(t)).collect();
        block_on(lt.remember_many(batch.clone())).unwrap();
        let records = entry_records(&env);
        assert_eq!(records.len(), 1, "100 memory-sized texts fit one batch record");
        assert!(batch::is_batch(&records[0].1) && records[0].0.starts_with("lt/entry/~batch/"));
        assert_eq!(lt.stats().storage_bytes, records[0].1.len() as u64);
        // A single remember keeps a record of its own.
        let Remembered::Stored { entry: single } = block_on(lt.remember(env.fact("a lone fact"))).unwrap()
        else {
            panic!()
        };
        assert!(block_on(env.store.get(&entry_key(&single.id))).unwrap().is_some());
        // A fuller version of a batch's memory: the new one has its own
        // record, the old one leaves the batch for its own, expired.
        let old = &batch[3];
        let Remembered::Superseded { entry: fuller, .. } =
            block_on(lt.remember(env.fact(&format!("{} and more", old.content)))).unwrap()
        else {
            panic!()
        };
        let expired: MemoryEntry =
            serde_json::from_str(&block_on(env.store.get(&entry_key(&old.id))).unwrap().unwrap()).unwrap();
        assert_eq!(expired.superseded_by.as_deref(), Some(fuller.id.as_str()));
        let batch_value = |env: &Env| {
            entry_records(env).into_iter().find(|(_, v)| batch::is_batch(v)).map(|(_, v)| v).unwrap()
        };
        assert!(!batch_value(&env).contains(&format!("\"{}\"", old.id)), "the batch holds no copy");
        // Forgetting a batch's memory takes its text out of the batch.
        let forgotten = &batch[10];
        assert!(block_on(lt.forget(&forgotten.id)).unwrap());
        let everything: Vec<(String, String)> = block_on(env.store.list("")).unwrap();
        assert!(everything.iter().all(|(_, v)| !v.contains(&forgotten.content)), "no copy anywhere");
        let bytes: usize = entry_records(&env).iter().map(|(_, v)| v.len()).sum();
        assert_eq!(lt.stats().storage_bytes, bytes as u64);
        // Another instance reads exactly this.
        let other = env.open();
        assert_eq!(other.export().entries, lt.export().entries);
        assert_eq!(other.stats().storage_bytes, bytes as u64);
        // Forgetting all of a batch's memories deletes its record.
        let mut rest = env.open();
        for e in &batch {
            if rest.get(&e.id).is_some_and(|e| e.is_valid()) && e.id != old.id {
                assert!(block_on(rest.forget(&e.id)).unwrap());
            }
        }
        assert!(entry_records(&env).iter().all(|(_, v)| !batch::is_batch(v)), "the emptied batch is gone");
    }

    #[test]
    fn a_damaged_line_of_a_batch_costs_that_memory_alone_and_stays_through_rewrites() {
        let env = Env::new();
        let batch = env.written_together(5);
        let (key, value) = entry_records(&env).pop().unwrap();
        let broken = value.replacen(&format!("{{\"id\":\"{}\"", batch[1].id), "{not json", 1);
        assert_ne!(broken, value);
        block_on(env.store.put_many(vec![(key.clone(), broken)])).unwrap();
        let damage = Rc::new(DamageLog::default());
        let mut lt = block_on(Records::open_with(
            env.store.clone(),
            env.clock.clone(),
            DedupOptions::default(),
            damage.clone(),
            &mut |_| {},
        ))
        .unwrap();
        assert_eq!(lt.valid().len(), 4, "the other four are read");
        assert!(damage.list().iter().any(|d| d.key == key));
        assert!(block_on(lt.forget(&batch[2].id)).unwrap());
        let (_, rewritten) = entry_records(&env).pop().unwrap();
        assert!(rewritten.contains("{not json") && !rewritten.contains(&batch[2].content));
        assert!(damage.list().iter().any(|d| d.key == key), "still damaged: the line is kept as it was");
        assert_eq!(env.open().valid().len(), 3);
    }

    #[test]
    fn a_memory_in_its_own_record_and_a_batch_reads_as_its_own_and_is_forgotten_from_both() {
        let env = Env::new();
        let batch = env.written_together(3);
        // What only a writer without the lock could leave: a newer own
        // record beside the batch's copy.
        let newer = MemoryEntry { importance: 0.9, ..batch[0].clone() };
        block_on(env.store.put_many(vec![(entry_key(&newer.id), to_json(&newer).unwrap())])).unwrap();
        let mut lt = env.open();
        assert_eq!(lt.get(&newer.id), Some(&newer));
        assert_eq!(lt.valid().len(), 3);
        assert!(block_on(lt.forget(&newer.id)).unwrap());
        let stored: Vec<(String, String)> = block_on(env.store.list("")).unwrap();
        assert!(stored.iter().all(|(_, v)| !v.contains(&newer.content)), "{stored:?}");
        assert_eq!(env.open().valid().len(), 2);
    }

    #[test]
    fn forget_after_supersede_and_undo_deletes_the_retracted_replacement() {
        let env = Env::new();
        let mut lt = env.open();
        let Remembered::Stored { entry: old } = block_on(lt.remember(env.fact("lives in Lisbon"))).unwrap()
        else {
            panic!()
        };
        let new = block_on(lt.supersede(env.fact("lives in Porto since May"), std::slice::from_ref(&old.id)))
            .unwrap();
        block_on(lt.undo(&new.id)).unwrap();
        assert_eq!(lt.history(&old.id).len(), 2);
        assert!(block_on(lt.forget(&old.id)).unwrap());
        let stored: Vec<(String, String)> = block_on(env.store.list("")).unwrap();
        assert!(stored.iter().all(|(_, v)| !v.contains("Porto") && !v.contains("Lisbon")), "{stored:?}");
        assert!(lt.export().entries.is_empty());
        assert!(env.open().export().entries.is_empty());
    }

    #[test]
    fn forget_and_purge_are_hard_deletes() {
        let env = Env::new();
        let mut lt = env.open();
        let Remembered::Stored { entry: a } = block_on(lt.remember(env.fact("fact one about cats"))).unwrap()
        else {
            panic!()
        };
        block_on(lt.remember(env.fact("second fact about the weather"))).unwrap();
        let mut agent = env.fact("agent lesson: retry on 429");
        agent.scope = Scope::Agent("planner".into());
        block_on(lt.remember(agent)).unwrap();
        assert!(block_on(lt.forget(&a.id)).unwrap());
        assert!(block_on(env.store.get(&entry_key(&a.id))).unwrap().is_none());
        assert_eq!(block_on(lt.forget_scope(&Scope::Agent("planner".into()))).unwrap(), 1);
        assert_eq!(lt.valid().len(), 1);
        block_on(lt.mark_processed(&["h1".into()], PROCESSED_TTL_MS)).unwrap();
        block_on(lt.purge()).unwrap();
        let left: Vec<String> = block_on(env.store.list("")).unwrap().into_iter().map(|(k, _)| k).collect();
        assert_eq!(left, [GENERATION_KEY], "nothing but the generation left in the raw store");
        assert!(lt.valid().is_empty());
    }

    #[test]
    fn processed_hashes_expire() {
        let env = Env::new();
        let mut lt = env.open();
        block_on(lt.mark_processed(&["abc".into()], 1_000)).unwrap();
        assert!(lt.is_processed("abc"));
        env.clock.advance(1_001);
        assert!(!lt.is_processed("abc"));
        let reopened = env.open();
        assert!(!reopened.is_processed("abc"));
        assert!(
            block_on(env.store.list(PROCESSED_PREFIX)).unwrap().is_empty(),
            "expired hashes are deleted on open"
        );
    }

    #[test]
    fn export_purge_import_round_trips_and_import_is_idempotent() {
        let env = Env::new();
        let mut lt = env.open();
        block_on(lt.remember(env.fact("likes tea"))).unwrap();
        block_on(lt.remember(env.fact("likes tea and biscuits in the afternoon"))).unwrap();
        block_on(lt.mark_processed(&["h".into()], PROCESSED_TTL_MS)).unwrap();
        let doc = lt.export();
        let json = serde_json::to_string(&doc).unwrap();
        block_on(lt.purge()).unwrap();
        let doc: ExportDocument = serde_json::from_str(&json).unwrap();
        let r = block_on(lt.import(doc.clone())).unwrap();
        assert_eq!(r, ImportReport { added: 2, updated: 0, unchanged: 0, duplicates: 0 });
        assert_eq!(
            block_on(lt.import(doc.clone())).unwrap(),
            ImportReport { added: 0, updated: 0, unchanged: 2, duplicates: 0 }
        );
        assert_eq!(lt.export().entries, doc.entries);
        assert!(lt.is_processed("h"));
        let mut bad = doc;
        bad.version = 99;
        assert!(block_on(lt.import(bad)).is_err());
    }

    #[test]
    fn an_import_dedups_like_remember_and_refuses_a_document_cut_short() {
        let env = Env::new();
        let mut lt = env.open();
        block_on(lt.remember(env.fact("Has a golden retriever called Biscuit"))).unwrap();
        let elsewhere = Env::new();
        let mut other = elsewhere.open();
        for fact in ["Has a golden retriever called Biscuit", "Plays the cello on Sundays"] {
            block_on(other.remember(elsewhere.fact(fact))).unwrap();
        }
        let doc = other.export();
        let r = block_on(lt.import(doc.clone())).unwrap();
        assert_eq!(r, ImportReport { added: 1, updated: 0, unchanged: 0, duplicates: 1 });
        assert_eq!(lt.valid().len(), 2);
        let mut cut = doc;
        cut.entries.pop();
        let e = block_on(lt.import(cut)).unwrap_err();
        assert!(e.code == ErrorCode::InvalidInput && e.message.contains("1 of the 2"), "{e:?}");
    }

    #[test]
    fn another_instance_sees_writes_before_its_next_write() {
        let env = Env::new();
        let mut tab_a = env.open();
        let mut tab_b = env.open();
        block_on(tab_a.remember(env.fact("prefers metric units"))).unwrap();
        let r = block_on(tab_b.remember(env.fact("prefers metric units"))).unwrap();
        assert!(matches!(r, Remembered::Duplicate { .. }), "{r:?}");
        assert_eq!(env.open().valid().len(), 1);
    }

    #[test]
    fn stats_count_by_kind_scope_agent_and_day() {
        let env = Env::new();
        let mut lt = env.open();
        block_on(lt.remember(env.fact("speaks French"))).unwrap();
        let mut lesson = env.fact("use smaller batches");
        lesson.scope = Scope::Agent("etl".into());
        block_on(lt.remember(lesson)).unwrap();
        let s = lt.stats();
        assert_eq!((s.total, s.valid), (2, 2));
        assert_eq!(s.by_scope.get("user"), Some(&1));
        assert_eq!(s.by_agent.get("etl"), Some(&1));
        assert_eq!(s.by_kind.get("fact"), Some(&2));
        assert_eq!(s.per_day.get("2023-11-14"), Some(&2));
        assert!(s.storage_bytes > 0);
    }

    #[test]
    fn session_scope_and_empty_memories_are_rejected() {
        let env = Env::new();
        let mut lt = env.open();
        let mut s = env.fact("x");
        s.scope = Scope::Session;
        assert_eq!(block_on(lt.remember(s)).unwrap_err().code, ErrorCode::InvalidInput);
        assert_eq!(block_on(lt.remember(env.fact("   "))).unwrap_err().code, ErrorCode::InvalidInput);
    }
}
