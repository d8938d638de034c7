//! How the log lands in a store: records only ever added by their writer,
//! folded into chunks as they pile up, rewritten only to take out what a
//! forget made dead.
//!
//! - **A write** is one record (in parts of at most
//!   [`lines::VALUE_BYTES`]) under its writer's key,
//!   `lt/log/<writer>/<seq>-<part>`, and the writer's head,
//!   `lt/head/<writer>` (its last seq and when), in one `put_many`. Every
//!   instance is a writer of its own (a random id), so no two writers ever
//!   write one key: nothing needs a namespace-wide check, and no write is
//!   refused for contention.
//! - **Catching up** reads `lt/meta/mark`, the name of the last write: a
//!   write puts its own there, checked against the one its writer last saw
//!   where the backend checks and writes in one step, and unchecked when
//!   another writer came first (never refused). An unchanged mark means
//!   nothing new; a moved one, or every [`LOOK_EVERY`]th time in any case
//!   (for backends whose check is a read, then a write), the heads (one
//!   small record per writer) are read, then only the records of writers
//!   that moved. Each instance knows which writes it holds, writer by
//!   writer, so a write it missed is found wherever it now lives.
//! - **Chunks**: once [`COMPACT_AT`] records pile up, an instance folds
//!   their operations into a chunk (`lt/chunk/<id>/<part>`, listed in
//!   `lt/chunks/<id>` with the writes it holds), written before the records
//!   it replaces are deleted; chunks of one size class merge four at a time,
//!   so each operation is rewritten O(log n) times and opening reads a few
//!   chunks. Two instances compacting at once each write a chunk holding
//!   everything they delete: a duplicate operation is the same operation, so
//!   nothing is lost and no check-and-write is needed.
//! - **Deletion**: after a forget, every record holding an operation that
//!   wrote a forgotten memory is rewritten without it (or deleted), so the
//!   text leaves the raw store; the forget itself holds ids only.
//! - **Purge** deletes every record and moves `lt/meta/epoch`: an instance
//!   that sees the epoch move reads the namespace anew.
//! - **An earlier release's records** (`lt/entry/`, `lt/processed/`) are
//!   read once, written as import operations, then deleted (damaged ones
//!   stay, reported, as before).

use std::collections::BTreeMap;
use std::rc::Rc;

use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};
use serde::{Deserialize, Serialize};

use crate::entry::MemoryEntry;
use crate::error::Result;
use crate::longterm::lines;
use crate::longterm::log::fold::Log;
use crate::longterm::log::op::{Action, Op, OpId};
use crate::store::layout::{
    chunk_key, head_key, index_key, log_key, log_writer_prefix, CHUNK_PREFIX, ENTRY_PREFIX, EPOCH_KEY,
    HEAD_PREFIX, INDEX_PREFIX, LEGACY_KEYS, LOG_PREFIX, MARK_KEY, PROCESSED_PREFIX, SNAPSHOT_PREFIX,
};
use crate::store::{damage, DamageLog, Store};

/// Records of single writes that make an instance fold them into a chunk.
pub const COMPACT_AT: usize = 64;
/// Chunks of one size class (by powers of [`MERGE`]) merged into one.
const MERGE: usize = 4;
/// A writer's head idle this long, whose writes are all in chunks, goes.
const HEAD_IDLE_MS: i64 = 24 * 3600 * 1000;
/// Catching up reads the heads at least this often, mark or not.
const LOOK_EVERY: u32 = 32;
/// The first line of a value holding operations.
const OPS_HEAD: &str = "~ops";

/// Ranges of a writer's writes (seqs), sorted and merged.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Writes(Vec<(u64, u64)>);

impl Writes {
    fn add(&mut self, lo: u64, hi: u64) {
        self.0.push((lo, hi));
        self.0.sort_unstable();
        let mut merged: Vec<(u64, u64)> = Vec::with_capacity(self.0.len());
        for &(lo, hi) in &self.0 {
            match merged.last_mut() {
                Some(last) if lo <= last.1.saturating_add(1) => last.1 = last.1.max(hi),
                _ => merged.push((lo, hi)),
            }
        }
        self.0 = merged;
    }

    fn holds(&self, lo: u64, hi: u64) -> bool {
        self.0.iter().any(|&(a, b)| a <= lo && hi <= b)
    }

    /// The last write held with every one before it.
    fn contiguous(&self) -> u64 {
        self.0.first().filter(|(lo, _)| *lo <= 1).map_or(0, |(_, hi)| *hi)
    }
}

/// What a chunk's index says: the writes it holds, by writer (hex), and
/// how many parts and operations it has.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct ChunkIndex {
    writes: BTreeMap<String, Writes>,
    parts: usize,
    ops: usize,
}

/// A record held: its operations, its length, and for a chunk part, the
/// chunk.
#[derive(Debug, Default)]
struct Held {
    ops: Vec<OpId>,
    bytes: u64,
}

/// What catching up found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Caught {
    /// Nothing new.
    Nothing,
    /// Operations of other writers.
    New,
    /// The namespace was purged or read anew.
    Reloaded,
}

pub struct Landing {
    store: Rc<dyn Store>,
    damage: Rc<DamageLog>,
    writer: u64,
    seq: u64,
    epoch: Option<String>,
    /// The mark as last read, or as this writer wrote it over the one it
    /// had read: what the store holds if nothing new came.
    mark: Option<String>,
    /// Catch-ups since the heads were last read.
    unlooked: u32,
    /// The writes held, by writer.
    known: HashMap<u64, Writes>,
    /// The writes the chunks held hold, by writer: their records are
    /// leftovers of a compaction.
    chunked: HashMap<u64, Writes>,
    /// Every record held (log records and chunk parts), by key.
    held: BTreeMap<String, Held>,
    /// The records each operation lives in (two, for a while, where two
    /// instances compacted at once).
    homes: HashMap<OpId, Vec<String>>,
    /// Chunks held, by id, with their index.
    chunks: BTreeMap<String, ChunkIndex>,
}

fn writer_hex(writer: u64) -> String {
    format!("{writer:016x}")
}

/// The writer and seq of a log record's key (`<writer>/<seq>-<part>`).
fn parse_log_key(key: &str) -> Option<(u64, u64)> {
    let rest = key.strip_prefix(LOG_PREFIX)?;
    let (w, rest) = rest.split_once('/')?;
    let (seq, _) = rest.split_once('-')?;
    Some((u64::from_str_radix(w, 16).ok()?, seq.parse().ok()?))
}

/// The line of JSON that stores `op`, named `id`.
fn line_of(id: &OpId, op: &Op) -> String {
    match op.action {
        Action::Erased { .. } => op.erased_json(id),
        _ => op.json(),
    }
}

/// The values holding `ops`, a line of JSON each.
fn pack(ops: &[(&OpId, &Op)]) -> Vec<String> {
    let jsons: Vec<String> = ops.iter().map(|(id, op)| line_of(id, op)).collect();
    lines::pack(OPS_HEAD, &jsons).unwrap_or_default().into_iter().map(|(v, _)| v).collect()
}

/// One value holding `ops`, however long.
fn value_of(ops: &[(&OpId, &Op)]) -> String {
    let mut value = OPS_HEAD.to_string();
    for (id, op) in ops {
        value.push('\n');
        value.push_str(&line_of(id, op));
    }
    value
}

impl Landing {
    pub fn new(store: Rc<dyn Store>, damage: Rc<DamageLog>, writer: u64) -> Landing {
        Landing {
            store,
            damage,
            writer,
            seq: 0,
            epoch: None,
            mark: None,
            unlooked: 0,
            known: HashMap::default(),
            chunked: HashMap::default(),
            held: BTreeMap::new(),
            homes: HashMap::default(),
            chunks: BTreeMap::new(),
        }
    }

    fn home(&mut self, id: &OpId, key: &str) {
        let homes = self.homes.entry(id.clone()).or_default();
        if !homes.iter().any(|h| h == key) {
            homes.push(key.to_string());
        }
    }

    /// Bytes of the records held.
    pub fn bytes(&self) -> u64 {
        self.held.values().map(|h| h.bytes).sum()
    }

    /// Reads the namespace whole into a new log; converts an earlier
    /// release's records first.
    pub async fn load(&mut self, now: i64, clock: &mut crate::longterm::log::op::Clock) -> Result<Log> {
        let legacy = self.read_legacy().await?;
        // A chunk merged away while it was read: read again.
        let mut ops = Vec::new();
        for tries in 1.. {
            if let Some(read) = self.read_all().await? {
                ops = read;
                break;
            }
            if tries == 3 {
                return Err(crate::error::Error::storage(
                    "other instances compacted the namespace during every read of it; try again",
                ));
            }
        }
        for (_, op) in &ops {
            clock.observe(op.stamp);
        }
        let mut log = Log::default();
        log.insert_named(ops);
        if let Some((keys, mut converted)) = legacy {
            // An earlier release's memories, as this release writes them.
            for op in &mut converted {
                op.stamp = clock.next(now);
            }
            self.append(&mut log, converted).await?;
            self.store.delete_many(keys).await?;
        }
        log.take_refolded();
        log.view_mut().take_touched();
        Ok(log)
    }

    /// Every operation of the namespace; `None` if a chunk went while it was
    /// read.
    async fn read_all(&mut self) -> Result<Option<Vec<(OpId, Op)>>> {
        let (epoch, chunks, logs) = futures::join!(
            self.store.get(EPOCH_KEY),
            self.store.list(INDEX_PREFIX),
            self.store.list(LOG_PREFIX)
        );
        let (chunks, logs) = (chunks?, logs?);
        self.epoch = epoch?;
        self.known.clear();
        self.chunked.clear();
        self.held.clear();
        self.homes.clear();
        self.chunks.clear();
        let mut parts = Vec::new();
        for (key, json) in chunks {
            let id = key[INDEX_PREFIX.len()..].to_string();
            let Some(index) = damage::parse::<ChunkIndex>(&self.damage, &key, &json) else { continue };
            parts.extend((0..index.parts).map(|n| chunk_key(&id, n)));
            self.chunks.insert(id, index);
        }
        let values = self.store.get_many(&parts).await?;
        if values.iter().any(Option::is_none) {
            return Ok(None);
        }
        let mut ops = Vec::new();
        for (key, value) in parts.into_iter().zip(values) {
            self.take(&key, &value.unwrap_or_default(), &mut ops);
        }
        for index in self.chunks.values() {
            for (w, writes) in &index.writes {
                let Ok(w) = u64::from_str_radix(w, 16) else { continue };
                for &(lo, hi) in &writes.0 {
                    self.known.entry(w).or_default().add(lo, hi);
                    self.chunked.entry(w).or_default().add(lo, hi);
                }
            }
        }
        for (key, value) in logs {
            self.take_log(&key, &value, &mut ops);
        }
        Ok(Some(ops))
    }

    /// Takes a log record read from the store.
    fn take_log(&mut self, key: &str, value: &str, ops: &mut Vec<(OpId, Op)>) {
        match parse_log_key(key) {
            Some((w, seq)) if !self.chunked.get(&w).is_some_and(|k| k.holds(seq, seq)) => {
                if self.held.contains_key(key) {
                    return;
                }
                self.take(key, value, ops);
                self.known.entry(w).or_default().add(seq, seq);
                if w == self.writer {
                    self.seq = self.seq.max(seq);
                }
            }
            // Folded into a chunk held already: a compaction's leftover.
            Some(_) => {}
            None => self.damage.report(key, "not the key of a log record"),
        }
    }

    /// Takes a value of operations read under `key`.
    fn take(&mut self, key: &str, value: &str, ops: &mut Vec<(OpId, Op)>) {
        if lines::head(value) != OPS_HEAD {
            self.damage.report(key, "not a record of operations");
            return;
        }
        let mut held = Held { ops: Vec::new(), bytes: value.len() as u64 };
        let mut bad = 0;
        for line in lines::records(value) {
            match serde_json::from_str::<Op>(line) {
                Ok(op) if op.entry().is_none_or(|e| e.validate().is_ok()) => {
                    let id = Op::named_in(line).unwrap_or_else(|| OpId::of(op.stamp, line));
                    held.ops.push(id.clone());
                    self.home(&id, key);
                    ops.push((id, op));
                }
                _ => bad += 1,
            }
        }
        if bad > 0 {
            self.damage.report(key, format!("{bad} of the record's operations are not valid operations"));
        }
        self.held.insert(key.to_string(), held);
    }

    /// An earlier release's memories and judged messages as operations (to
    /// be stamped), with the keys they are read from.
    async fn read_legacy(&self) -> Result<Option<(Vec<String>, Vec<Op>)>> {
        let (entries, processed) =
            futures::join!(self.store.list(ENTRY_PREFIX), self.store.list(PROCESSED_PREFIX));
        let (entries, processed) = (entries?, processed?);
        if entries.is_empty() && processed.is_empty() {
            return Ok(None);
        }
        let stamp = crate::longterm::log::op::Stamp { clock: 0, writer: self.writer };
        let mut ops = Vec::new();
        let mut keys: Vec<String> = LEGACY_KEYS.iter().map(|k| k.to_string()).collect();
        keys.extend(self.store.list(SNAPSHOT_PREFIX).await?.into_iter().map(|(k, _)| k));
        let mut seen = HashSet::default();
        for (key, json) in entries {
            let mut read: Vec<MemoryEntry> = Vec::new();
            let mut sound = true;
            if lines::head(&json) == "~batch" {
                for line in lines::records(&json) {
                    match serde_json::from_str::<MemoryEntry>(line) {
                        Ok(e) if e.validate().is_ok() => read.push(e),
                        _ => sound = false,
                    }
                }
            } else {
                match damage::parse::<MemoryEntry>(&self.damage, &key, &json) {
                    Some(e) if key[ENTRY_PREFIX.len()..] == e.id && e.validate().is_ok() => read.push(e),
                    Some(_) => {
                        self.damage.report(&key, "the record is not a valid memory under its own id");
                        continue;
                    }
                    None => continue,
                }
            }
            if !sound {
                self.damage.report(&key, "some of the batch's memories are not valid memories");
                continue;
            }
            for e in read {
                // A memory's own record wins over a batch's copy: read last.
                if seen.insert(e.id.clone()) || !json.starts_with("~batch") {
                    ops.push(Op::new(stamp, Action::Import { entry: e }));
                }
            }
            keys.push(key);
        }
        let mut hashes: BTreeMap<i64, Vec<String>> = BTreeMap::new();
        for (key, value) in processed {
            match value.trim().parse::<i64>() {
                Ok(until) => hashes.entry(until).or_default().push(key[PROCESSED_PREFIX.len()..].to_string()),
                Err(_) => {
                    self.damage.report(&key, "not an expiry time");
                    continue;
                }
            }
            keys.push(key);
        }
        ops.extend(
            hashes.into_iter().map(|(until, hashes)| Op::new(stamp, Action::Processed { hashes, until })),
        );
        Ok(Some((keys, ops)))
    }

    /// Writes `ops` as this writer's next write, then holds them in `log`.
    pub async fn append(&mut self, log: &mut Log, ops: Vec<Op>) -> Result<()> {
        if ops.is_empty() {
            return Ok(());
        }
        let seq = self.seq + 1;
        let jsons: Vec<String> = ops.iter().map(Op::json).collect();
        let values: Vec<String> =
            lines::pack(OPS_HEAD, &jsons).unwrap_or_default().into_iter().map(|(v, _)| v).collect();
        let mut items: Vec<(String, String)> =
            values.into_iter().enumerate().map(|(n, v)| (log_key(self.writer, seq, n), v)).collect();
        let now = ops.iter().map(|op| op.stamp.ms()).max().unwrap_or_default();
        items.push((head_key(self.writer), format!("{seq} {now}")));
        let mark = format!("{:016x}-{seq}", self.writer);
        items.push((MARK_KEY.to_string(), mark.clone()));
        // Checked against the mark last seen: if it still holds, nothing
        // came between, and the next catch-up need not look. If not, the
        // write goes all the same, and the next catch-up looks.
        if self.store.put_many_if(MARK_KEY, self.mark.as_deref(), items.clone()).await? {
            self.mark = Some(mark);
        } else {
            self.store.put_many(items.clone()).await?;
        }
        self.seq = seq;
        self.known.entry(self.writer).or_default().add(seq, seq);
        let mut named = Vec::with_capacity(ops.len());
        let mut next = ops.into_iter();
        for (key, value) in items.iter().filter(|(k, _)| k.starts_with(LOG_PREFIX)) {
            let mut held = Held { ops: Vec::new(), bytes: value.len() as u64 };
            for line in lines::records(value) {
                let Some(op) = next.next() else { break };
                let id = OpId::of(op.stamp, line);
                held.ops.push(id.clone());
                self.home(&id, key);
                named.push((id, op));
            }
            self.held.insert(key.clone(), held);
        }
        log.insert_named(named);
        Ok(())
    }

    /// Catches up with what other writers wrote since.
    pub async fn catch_up(
        &mut self,
        log: &mut Log,
        clock: &mut crate::longterm::log::op::Clock,
    ) -> Result<Caught> {
        let mut meta = self.store.get_many(&[EPOCH_KEY.to_string(), MARK_KEY.to_string()]).await?.into_iter();
        let (epoch, mark) = (meta.next().flatten(), meta.next().flatten());
        if epoch != self.epoch {
            return Ok(Caught::Reloaded);
        }
        self.unlooked += 1;
        if mark == self.mark && self.unlooked < LOOK_EVERY {
            return Ok(Caught::Nothing);
        }
        let heads = self.store.list(HEAD_PREFIX).await?;
        // Read before the heads: a write after it moves the mark again.
        (self.mark, self.unlooked) = (mark, 0);
        let mut moved = Vec::new();
        for (key, value) in heads {
            let w = u64::from_str_radix(&key[HEAD_PREFIX.len()..], 16);
            let seq = value.split(' ').next().and_then(|s| s.parse::<u64>().ok());
            let (Ok(w), Some(seq)) = (w, seq) else {
                self.damage.report(&key, "not a writer's head");
                continue;
            };
            if w != self.writer && self.known.get(&w).is_none_or(|k| k.contiguous() < seq) {
                moved.push((w, seq));
            }
        }
        if moved.is_empty() {
            return Ok(Caught::Nothing);
        }
        let mut ops = Vec::new();
        let store = self.store.clone();
        let prefixes: Vec<String> = moved.iter().map(|(w, _)| log_writer_prefix(*w)).collect();
        let lists = futures::future::join_all(prefixes.iter().map(|p| store.list(p))).await;
        for list in lists {
            for (key, value) in list? {
                self.take_log(&key, &value, &mut ops);
            }
        }
        // Writes missing from the records went into chunks meanwhile.
        if moved.iter().any(|(w, seq)| self.known.get(w).is_none_or(|k| k.contiguous() < *seq)) {
            self.read_new_chunks(&mut ops).await?;
        }
        for (_, op) in &ops {
            clock.observe(op.stamp);
        }
        let added = log.insert_named(ops);
        Ok(if added > 0 { Caught::New } else { Caught::Nothing })
    }

    /// Reads the chunks holding writes not held here.
    async fn read_new_chunks(&mut self, ops: &mut Vec<(OpId, Op)>) -> Result<()> {
        let mut parts = Vec::new();
        let mut fresh = Vec::new();
        for (key, json) in self.store.list(INDEX_PREFIX).await? {
            let id = key[INDEX_PREFIX.len()..].to_string();
            if self.chunks.contains_key(&id) {
                continue;
            }
            let Some(index) = damage::parse::<ChunkIndex>(&self.damage, &key, &json) else { continue };
            let all_held = index.writes.iter().all(|(w, writes)| {
                let w = u64::from_str_radix(w, 16).unwrap_or_default();
                writes.0.iter().all(|&(lo, hi)| self.known.get(&w).is_some_and(|k| k.holds(lo, hi)))
            });
            if !all_held {
                parts.extend((0..index.parts).map(|n| chunk_key(&id, n)));
            }
            fresh.push((id, index));
        }
        let values = self.store.get_many(&parts).await?;
        for (key, value) in parts.into_iter().zip(values) {
            if let Some(value) = value {
                self.take(&key, &value, ops);
            }
        }
        for (id, index) in fresh {
            for (w, writes) in &index.writes {
                let Ok(w) = u64::from_str_radix(w, 16) else { continue };
                for &(lo, hi) in &writes.0 {
                    self.known.entry(w).or_default().add(lo, hi);
                    self.chunked.entry(w).or_default().add(lo, hi);
                }
            }
            self.chunks.insert(id, index);
        }
        Ok(())
    }

    /// Rewrites every record holding an operation that wrote a memory
    /// forgotten since, with that operation erased (its links, without
    /// text), in the log too.
    pub async fn erase_forgotten(&mut self, log: &mut Log) -> Result<()> {
        let erased: HashSet<OpId> = log.erase_forgotten().into_iter().collect();
        let mut records: HashSet<String> = HashSet::default();
        for id in &erased {
            records.extend(self.homes.get(id).cloned().unwrap_or_default());
        }
        let mut puts = Vec::new();
        for key in records {
            let Some(held) = self.held.get_mut(&key) else { continue };
            let ops: Vec<(&OpId, &Op)> = held.ops.iter().filter_map(|id| Some((id, log.get(id)?))).collect();
            // A part only loses text, so it stays one value.
            let value = value_of(&ops);
            held.bytes = value.len() as u64;
            puts.push((key, value));
        }
        if !puts.is_empty() {
            for (key, _) in &puts {
                self.damage.repaired(key);
            }
            self.store.put_many(puts).await?;
        }
        Ok(())
    }

    /// Folds records into a chunk once enough have piled up, and chunks of
    /// one size class into one; `now` decides which heads are idle.
    pub async fn compact_if_due(&mut self, log: &Log, now: i64) -> Result<()> {
        let records: Vec<String> = self.held.keys().filter(|k| k.starts_with(LOG_PREFIX)).cloned().collect();
        if records.len() >= COMPACT_AT {
            self.fold_into_chunk(log, records, Vec::new(), now).await?;
            self.drop_idle_heads(now).await?;
        }
        // Size classes: 64, 256, 1,024 ... operations.
        let class = |ops: usize| (ops.max(1).ilog2() / MERGE.ilog2()) as usize;
        let mut by_class: BTreeMap<usize, Vec<String>> = BTreeMap::new();
        for (id, index) in &self.chunks {
            by_class.entry(class(index.ops)).or_default().push(id.clone());
        }
        if let Some((_, ids)) = by_class.into_iter().find(|(_, ids)| ids.len() >= MERGE) {
            self.fold_into_chunk(log, Vec::new(), ids, now).await?;
        }
        Ok(())
    }

    /// Writes the operations of `records` and of chunks `merged` as one new
    /// chunk, then deletes them.
    async fn fold_into_chunk(
        &mut self,
        log: &Log,
        records: Vec<String>,
        merged: Vec<String>,
        now: i64,
    ) -> Result<()> {
        let mut index = ChunkIndex::default();
        let mut ids: Vec<OpId> = Vec::new();
        let mut gone: Vec<String> = records.clone();
        for key in &records {
            if let Some((w, seq)) = parse_log_key(key) {
                index.writes.entry(writer_hex(w)).or_default().add(seq, seq);
            }
        }
        for id in &merged {
            let Some(old) = self.chunks.get(id) else { continue };
            for (w, writes) in &old.writes {
                for &(lo, hi) in &writes.0 {
                    index.writes.entry(w.clone()).or_default().add(lo, hi);
                }
            }
            gone.extend((0..old.parts).map(|n| chunk_key(id, n)));
        }
        for key in &gone {
            ids.extend(self.held.get(key).map(|h| h.ops.clone()).unwrap_or_default());
        }
        ids.sort();
        ids.dedup();
        // Judged marks that have run out need not be kept.
        let expired = |op: &Op| matches!(op.action, Action::Processed { until, .. } if until <= now);
        let kept: Vec<(&OpId, &Op)> =
            ids.iter().filter_map(|id| Some((id, log.get(id)?))).filter(|(_, op)| !expired(op)).collect();
        let values = pack(&kept);
        let chunk = format!("{:016x}", crate::entry::random_u64(now));
        index.parts = values.len();
        index.ops = kept.len();
        let mut items: Vec<(String, String)> =
            values.into_iter().enumerate().map(|(n, v)| (chunk_key(&chunk, n), v)).collect();
        items.push((index_key(&chunk), serde_json::to_string(&index).unwrap_or_default()));
        self.store.put_many(items.clone()).await?;
        // Written first, deleted after: a failure between leaves both.
        let mut deletes = gone.clone();
        deletes.extend(merged.iter().map(|id| index_key(id)));
        self.store.delete_many(deletes).await?;
        for key in &gone {
            self.held.remove(key);
        }
        for id in &merged {
            self.chunks.remove(id);
        }
        let gone: HashSet<&String> = gone.iter().collect();
        let mut next = kept.into_iter().map(|(id, _)| id.clone());
        for (key, value) in items.iter().filter(|(k, _)| k.starts_with(CHUNK_PREFIX)) {
            let mut held = Held { ops: Vec::new(), bytes: value.len() as u64 };
            for _ in lines::records(value) {
                let Some(id) = next.next() else { break };
                let homes = self.homes.entry(id.clone()).or_default();
                homes.retain(|h| !gone.contains(h));
                homes.push(key.clone());
                held.ops.push(id);
            }
            self.held.insert(key.clone(), held);
        }
        for (w, writes) in &index.writes {
            let Ok(w) = u64::from_str_radix(w, 16) else { continue };
            for &(lo, hi) in &writes.0 {
                self.chunked.entry(w).or_default().add(lo, hi);
            }
        }
        self.chunks.insert(chunk, index);
        Ok(())
    }

    /// Deletes the heads of writers idle for a day whose writes are all in
    /// chunks: catching up reads one head per writer, so they must not pile
    /// up with every instance ever opened.
    async fn drop_idle_heads(&mut self, now: i64) -> Result<()> {
        let in_chunks = |w: u64, seq: u64| {
            let prefix = log_writer_prefix(w);
            self.known.get(&w).is_some_and(|k| k.holds(1, seq))
                && !self.held.keys().any(|k| k.starts_with(&prefix))
        };
        let mut idle = Vec::new();
        for (key, value) in self.store.list(HEAD_PREFIX).await? {
            let mut parts = value.split(' ');
            let seq = parts.next().and_then(|s| s.parse::<u64>().ok());
            let at = parts.next().and_then(|s| s.parse::<i64>().ok());
            let w = u64::from_str_radix(&key[HEAD_PREFIX.len()..], 16).ok();
            if let (Some(seq), Some(at), Some(w)) = (seq, at, w) {
                if w != self.writer && now - at > HEAD_IDLE_MS && in_chunks(w, seq) {
                    idle.push(key);
                }
            }
        }
        if !idle.is_empty() {
            self.store.delete_many(idle).await?;
        }
        Ok(())
    }

    /// Deletes every record of long-term memory and moves the epoch, so
    /// every instance reads the namespace anew.
    pub async fn purge(&mut self, now: i64) -> Result<()> {
        let mut keys: Vec<String> = Vec::new();
        for prefix in [
            LOG_PREFIX,
            HEAD_PREFIX,
            CHUNK_PREFIX,
            INDEX_PREFIX,
            ENTRY_PREFIX,
            PROCESSED_PREFIX,
            SNAPSHOT_PREFIX,
        ] {
            keys.extend(self.store.list(prefix).await?.into_iter().map(|(k, _)| k));
        }
        keys.extend(LEGACY_KEYS.iter().chain([&MARK_KEY]).map(|k| k.to_string()));
        self.store.delete_many(keys.clone()).await?;
        let epoch = format!("{:016x}", crate::entry::random_u64(now));
        self.store.put_many(vec![(EPOCH_KEY.to_string(), epoch.clone())]).await?;
        for key in &keys {
            self.damage.repaired(key);
        }
        (self.epoch, self.mark) = (Some(epoch), None);
        self.known.clear();
        self.chunked.clear();
        self.held.clear();
        self.homes.clear();
        self.chunks.clear();
        Ok(())
    }
}
