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
//!   wrote a forgotten memory is rewritten with that operation erased (its
//!   links without its text, under its id), so the text leaves the raw
//!   store; the forget itself holds ids only. A sync that finds a peer
//!   deleted operations held here (a tombstone past a relay's horizon)
//!   rewrites their records without them and moves the epoch, so other
//!   instances, which only ever add what they read, read anew.
//! - **Purge** deletes every record and moves `lt/meta/epoch`: an instance
//!   that sees the epoch move reads the namespace anew. What stays (the
//!   purge operation, and what a sync brought that was stamped after it) is
//!   then written as one write.
//! - **An earlier release's records** are read once, written as import
//!   operations, then deleted ([`super::legacy`]).

use std::rc::Rc;

use rustc_hash::FxHashMap as HashMap;

use crate::error::{Error, Result};
use crate::longterm::lines;
use crate::longterm::log::fold::Log;
use crate::longterm::log::legacy;
use crate::longterm::log::op::{Action, Clock, Op, OpId};
use crate::store::layout::{
    chunk_key, head_key, index_key, log_key, log_writer_prefix, EPOCH_KEY, HEAD_PREFIX, INDEX_PREFIX,
    LOG_PREFIX, LONG_TERM_PREFIX, MARK_KEY,
};
use crate::store::{DamageLog, Store};

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
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Writes(Vec<(u64, u64)>);

impl Writes {
    fn add(&mut self, lo: u64, hi: u64) {
        self.0.push((lo, hi));
        crate::order::sort(&mut self.0);
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

    /// The last write held with every one since the first held (writes
    /// before it are gone: purged, or never seen by a load that read all
    /// there was).
    fn contiguous(&self) -> u64 {
        self.0.first().map_or(0, |(_, hi)| *hi)
    }

    /// Every write up to the last held: what a load that read all there was
    /// knows (what it did not find is gone).
    fn through_last(&mut self) {
        if let Some(&(_, hi)) = self.0.last() {
            self.0 = vec![(1, hi)];
        }
    }
}

/// Writes by writer. A vector: writers are few, and a map of them cost the
/// wasm more code than its lookups save.
#[derive(Debug, Default)]
struct ByWriter(Vec<(u64, Writes)>);

impl ByWriter {
    fn get(&self, writer: &u64) -> Option<&Writes> {
        self.0.iter().find(|(w, _)| w == writer).map(|(_, writes)| writes)
    }

    fn entry(&mut self, writer: u64) -> &mut Writes {
        let at = match self.0.iter().position(|(w, _)| *w == writer) {
            Some(at) => at,
            None => {
                self.0.push((writer, Writes::default()));
                self.0.len() - 1
            }
        };
        &mut self.0[at].1
    }
}

/// What a chunk's index says: how many parts and operations it has, and
/// the writes it holds, by writer. Stored as text, a line each:
/// `<parts> <ops>`, then `<writer> <lo>-<hi> <lo>-<hi> ...` (hex writer,
/// decimal seqs).
#[derive(Debug, Clone, Default)]
struct ChunkIndex {
    writes: Vec<(u64, Writes)>,
    parts: usize,
    ops: usize,
}

impl ChunkIndex {
    fn text(&self) -> String {
        let mut text = format!("{} {}", self.parts, self.ops);
        for (w, writes) in &self.writes {
            text.push_str(&format!("\n{w:016x}"));
            for (lo, hi) in &writes.0 {
                text.push_str(&format!(" {lo}-{hi}"));
            }
        }
        text
    }

    fn parse(text: &str) -> Option<ChunkIndex> {
        let mut lines = text.split('\n');
        let (parts, ops) = lines.next()?.split_once(' ')?;
        let mut index = ChunkIndex { writes: Vec::new(), parts: parts.parse().ok()?, ops: ops.parse().ok()? };
        for line in lines {
            let mut words = line.split(' ');
            let w = u64::from_str_radix(words.next()?, 16).ok()?;
            let mut writes = Writes::default();
            for range in words {
                let (lo, hi) = range.split_once('-')?;
                writes.add(lo.parse().ok()?, hi.parse().ok()?);
            }
            index.writes.push((w, writes));
        }
        Some(index)
    }
}

/// A record held: the ids of its operations and its length.
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
    /// Operations of other writers; `erase` when one of them is a forget,
    /// or still holds the text of a memory forgotten: the records holding
    /// such text are to be rewritten ([`Landing::erase_forgotten`]).
    New { erase: bool },
    /// The namespace was purged: read it anew.
    Purged,
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
    known: ByWriter,
    /// The writes the chunks held hold, by writer: their records are
    /// leftovers of a compaction.
    chunked: ByWriter,
    /// Every record held (log records and chunk parts), by key.
    held: HashMap<String, Held>,
    /// Chunks held, with their ids (a few: they merge).
    chunks: Vec<(String, ChunkIndex)>,
}

/// The writer and seq of a log record's key (`<writer>/<seq>-<part>`).
fn parse_log_key(key: &str) -> Option<(u64, u64)> {
    let (w, rest) = key.strip_prefix(LOG_PREFIX)?.split_once('/')?;
    let (seq, _) = rest.split_once('-')?;
    Some((u64::from_str_radix(w, 16).ok()?, seq.parse().ok()?))
}

/// The line of JSON that stores `op`, named `id`.
pub fn line_of(id: &OpId, op: &Op) -> String {
    if op.is_erased() {
        op.erased_json(id)
    } else {
        op.json()
    }
}

/// The values holding `lines` in order, each of at most
/// [`lines::VALUE_BYTES`] (a longer line gets a value of its own).
fn pack(lines: &[String]) -> Vec<String> {
    lines::pack(OPS_HEAD, lines).unwrap_or_default().into_iter().map(|(v, _)| v).collect()
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
            known: ByWriter::default(),
            chunked: ByWriter::default(),
            held: HashMap::default(),
            chunks: Vec::new(),
        }
    }

    /// Bytes of the records held.
    pub fn bytes(&self) -> u64 {
        self.held.values().map(|h| h.bytes).sum()
    }

    /// Reads the namespace whole into a new log, converting an earlier
    /// release's records first.
    pub async fn load(&mut self, now: i64, clock: &mut Clock) -> Result<Log> {
        let legacy = legacy::read(self.store.as_ref(), &self.damage).await?;
        let mut ops = Vec::new();
        // A chunk merged away while it was read: read again.
        for tries in 1.. {
            let meta = self.store.get_many(&[EPOCH_KEY.to_string(), MARK_KEY.to_string()]).await?;
            let logs = self.store.list(LOG_PREFIX).await?;
            self.known.0.clear();
            self.chunked.0.clear();
            self.held.clear();
            self.chunks.clear();
            ops.clear();
            if self.read_chunks(&mut ops).await? {
                let mut meta = meta.into_iter();
                (self.epoch, self.mark, self.unlooked) = (meta.next().flatten(), meta.next().flatten(), 0);
                for (key, value) in logs {
                    self.take_log(&key, &value, &mut ops);
                }
                self.known.0.iter_mut().for_each(|(_, writes)| writes.through_last());
                break;
            }
            if tries == 3 {
                return Err(Error::storage(
                    "other instances compacted the namespace during every read of it; try again",
                ));
            }
        }
        for (_, op) in &ops {
            clock.observe(op.stamp);
        }
        let mut log = Log::default();
        log.insert_named(ops);
        if let Some(legacy) = legacy {
            let ops = legacy.ops.into_iter().map(|op| Op::new(clock.next(now), op.action)).collect();
            self.append(&mut log, ops, false).await?;
            self.store.delete_many(legacy.keys).await?;
        }
        log.take_refolded();
        log.view_mut().take_touched();
        Ok(log)
    }

    /// Reads the chunks not held yet whose writes are not all held, into
    /// `ops`; says whether every part of them was there (a merge may have
    /// deleted them meanwhile).
    async fn read_chunks(&mut self, ops: &mut Vec<(OpId, Op)>) -> Result<bool> {
        let mut parts = Vec::new();
        let mut fresh = Vec::new();
        for (key, json) in self.store.list(INDEX_PREFIX).await? {
            let id = &key[INDEX_PREFIX.len()..];
            if self.chunks.iter().any(|(held, _)| held == id) {
                continue;
            }
            let Some(index) = ChunkIndex::parse(&json) else {
                self.damage.report(&key, "not a chunk's index");
                continue;
            };
            // Read even when every write it holds came here as a record:
            // a merge or a forget rewrites the chunk from what it holds.
            parts.extend((0..index.parts).map(|n| chunk_key(id, n)));
            fresh.push((id.to_string(), index));
        }
        let values = self.store.get_many(&parts).await?;
        if values.iter().any(Option::is_none) {
            return Ok(false);
        }
        for (key, value) in parts.iter().zip(values) {
            self.take(key, &value.unwrap_or_default(), ops);
        }
        for (id, index) in fresh {
            self.hold_chunk(id, index);
        }
        Ok(true)
    }

    /// Holds a chunk whose parts are held; the records it folded are no
    /// longer held (its writer deletes them), so nothing writes them back.
    fn hold_chunk(&mut self, id: String, index: ChunkIndex) {
        for (w, writes) in &index.writes {
            for &(lo, hi) in &writes.0 {
                self.known.entry(*w).add(lo, hi);
                self.chunked.entry(*w).add(lo, hi);
            }
        }
        let chunked = &self.chunked;
        self.held.retain(|key, _| {
            parse_log_key(key).is_none_or(|(w, seq)| !chunked.get(&w).is_some_and(|k| k.holds(seq, seq)))
        });
        self.chunks.push((id, index));
    }

    /// Takes a log record read from the store, unless it is held already
    /// (here, or in a chunk: a compaction's leftover).
    fn take_log(&mut self, key: &str, value: &str, ops: &mut Vec<(OpId, Op)>) {
        let Some((w, seq)) = parse_log_key(key) else {
            return self.damage.report(key, "not the key of a log record");
        };
        if self.held.contains_key(key) || self.chunked.get(&w).is_some_and(|k| k.holds(seq, seq)) {
            return;
        }
        self.take(key, value, ops);
        self.known.entry(w).add(seq, seq);
        if w == self.writer {
            self.seq = self.seq.max(seq);
        }
    }

    /// Takes a value of operations read under `key`.
    fn take(&mut self, key: &str, value: &str, ops: &mut Vec<(OpId, Op)>) {
        if lines::head(value) != OPS_HEAD {
            return self.damage.report(key, "not a record of operations");
        }
        let mut held = Held { ops: Vec::new(), bytes: value.len() as u64 };
        let mut bad = 0;
        for line in lines::records(value) {
            match serde_json::from_str::<Op>(line) {
                Ok(op) if op.entry().is_none_or(|e| e.validate().is_ok()) => {
                    let id = Op::named_in(line).unwrap_or_else(|| OpId::of(op.stamp, line));
                    held.ops.push(id.clone());
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

    /// Writes `ops` as this writer's next write, then holds them in `log`;
    /// with `checked`, only if no other writer wrote since this one last
    /// looked (says whether it wrote).
    pub async fn append(&mut self, log: &mut Log, ops: Vec<Op>, checked: bool) -> Result<bool> {
        let now = ops.iter().map(|op| op.stamp.ms()).max().unwrap_or_default();
        let lines: Vec<String> = ops.iter().map(Op::json).collect();
        self.write_lines(log, lines, now, checked).await
    }

    /// Writes operations another replica made (a sync), as this writer's
    /// next write at `now`, with their ids (an erased one keeps its own).
    pub async fn land(&mut self, log: &mut Log, ops: &[(OpId, Op)], now: i64) -> Result<()> {
        let lines: Vec<String> = ops.iter().map(|(id, op)| line_of(id, op)).collect();
        self.write_lines(log, lines, now, false).await.map(drop)
    }

    async fn write_lines(
        &mut self,
        log: &mut Log,
        lines: Vec<String>,
        now: i64,
        checked: bool,
    ) -> Result<bool> {
        if lines.is_empty() {
            return Ok(true);
        }
        let seq = self.seq + 1;
        let mut items: Vec<(String, String)> =
            pack(&lines).into_iter().enumerate().map(|(n, v)| (log_key(self.writer, seq, n), v)).collect();
        let parts = items.len();
        items.push((head_key(self.writer), format!("{seq} {now}")));
        let mark = format!("{:016x}-{seq}", self.writer);
        items.push((MARK_KEY.to_string(), mark.clone()));
        // A namespace with records has an epoch, so that one deleted whole
        // (not purged) is read anew too.
        let epoch = self.epoch.clone().unwrap_or_else(|| format!("{:016x}", crate::entry::random_u64(now)));
        if self.epoch.is_none() {
            items.push((EPOCH_KEY.to_string(), epoch.clone()));
        }
        // Checked against the mark last seen: if it still holds, nothing
        // came between, and the next catch-up need not look. If not, the
        // write goes all the same unless `checked`, and the next catch-up
        // looks.
        if self.store.put_many_if(MARK_KEY, self.mark.as_deref(), items.clone()).await? {
            self.mark = Some(mark);
        } else if checked {
            return Ok(false);
        } else {
            self.store.put_many(items.clone()).await?;
        }
        (self.seq, self.epoch) = (seq, Some(epoch));
        self.known.entry(self.writer).add(seq, seq);
        let mut named = Vec::new();
        for (key, value) in items.into_iter().take(parts) {
            self.take(&key, &value, &mut named);
        }
        log.insert_named(named);
        Ok(true)
    }

    /// Catches up with what other writers wrote since.
    pub async fn catch_up(&mut self, log: &mut Log, clock: &mut Clock) -> Result<Caught> {
        let mut meta = self.store.get_many(&[EPOCH_KEY.to_string(), MARK_KEY.to_string()]).await?.into_iter();
        let (epoch, mark) = (meta.next().flatten(), meta.next().flatten());
        if epoch != self.epoch {
            return Ok(Caught::Purged);
        }
        self.unlooked += 1;
        if mark == self.mark && self.unlooked < LOOK_EVERY {
            return Ok(Caught::Nothing);
        }
        let heads = self.store.list(HEAD_PREFIX).await?;
        // Read before the heads: a write after them moves the mark again.
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
        // Chunks folded since: a compaction moves the mark too.
        let mut ops = Vec::new();
        self.read_chunks(&mut ops).await?;
        let store = self.store.clone();
        let prefixes: Vec<String> = moved.iter().map(|(w, _)| log_writer_prefix(*w)).collect();
        for list in crate::join::join_all(prefixes.iter().map(|p| store.list(p))).await {
            for (key, value) in list? {
                self.take_log(&key, &value, &mut ops);
            }
        }
        // Writes missing from the records went into chunks meanwhile.
        if moved.iter().any(|(w, seq)| self.known.get(w).is_none_or(|k| k.contiguous() < *seq)) {
            self.read_chunks(&mut ops).await?;
        }
        for (_, op) in &ops {
            clock.observe(op.stamp);
        }
        let forgets = ops.iter().any(|(_, op)| matches!(op.action, Action::Forget { .. }));
        if log.insert_named(ops.clone()) == 0 {
            return Ok(Caught::Nothing);
        }
        let erase = forgets || ops.iter().any(|(_, op)| !op.is_erased() && log.view().is_erasable(op));
        Ok(Caught::New { erase })
    }

    /// Rewrites every record holding an operation that wrote a memory
    /// forgotten since, with that operation erased (its links, without
    /// text), in the log too.
    pub async fn erase_forgotten(&mut self, log: &mut Log) -> Result<()> {
        // In the log's order, so sorted.
        let erased: Vec<OpId> = log.erase_forgotten();
        self.rewrite(log, &erased).await
    }

    /// Rewrites every record holding one of `erased` (sorted) as `log`
    /// now holds it: erased, so its text leaves the store, or gone (a
    /// sync dropped what its peer deleted).
    pub async fn rewrite(&mut self, log: &Log, erased: &[OpId]) -> Result<()> {
        let mut puts = Vec::new();
        for (key, held) in
            self.held.iter_mut().filter(|(_, h)| h.ops.iter().any(|id| erased.binary_search(id).is_ok()))
        {
            // A part only loses text, so it stays one value.
            let mut value = OPS_HEAD.to_string();
            for (id, op) in held.ops.iter().filter_map(|id| Some((id, log.get(id)?))) {
                value.push('\n');
                value.push_str(&line_of(id, op));
            }
            held.bytes = value.len() as u64;
            self.damage.repaired(key);
            puts.push((key.clone(), value));
        }
        if !puts.is_empty() {
            self.store.put_many(puts).await?;
        }
        Ok(())
    }

    /// Folds records into a chunk once enough have piled up, and four
    /// chunks of one size class (64, 256, 1,024 ... operations) into one.
    pub async fn compact_if_due(&mut self, log: &Log, now: i64) -> Result<()> {
        let records: Vec<String> = self.held.keys().filter(|k| k.starts_with(LOG_PREFIX)).cloned().collect();
        if records.len() >= COMPACT_AT {
            self.fold_into_chunk(log, records, Vec::new(), now).await?;
            self.drop_idle_heads(now).await?;
        }
        let class = |index: &ChunkIndex| index.ops.max(1).ilog2() / MERGE.ilog2();
        let crowded = self
            .chunks
            .iter()
            .map(|(_, index)| class(index))
            .find(|c| self.chunks.iter().filter(|(_, index)| class(index) == *c).count() >= MERGE);
        if let Some(c) = crowded {
            let ids = self.chunks.iter().filter(|(_, index)| class(index) == c).map(|(id, _)| id.clone());
            self.fold_into_chunk(log, Vec::new(), ids.collect(), now).await?;
        }
        Ok(())
    }

    /// Writes the operations of records `gone` and of chunks `merged` as one
    /// new chunk, then deletes them (written first: a failure between leaves
    /// both, and a duplicate operation is the same operation).
    async fn fold_into_chunk(
        &mut self,
        log: &Log,
        mut gone: Vec<String>,
        merged: Vec<String>,
        now: i64,
    ) -> Result<()> {
        let mut writes = ByWriter::default();
        for (w, seq) in gone.iter().filter_map(|key| parse_log_key(key)) {
            writes.entry(w).add(seq, seq);
        }
        for (id, old) in self.chunks.iter().filter(|(id, _)| merged.contains(id)) {
            for (w, held) in &old.writes {
                for &(lo, hi) in &held.0 {
                    writes.entry(*w).add(lo, hi);
                }
            }
            gone.extend((0..old.parts).map(|n| chunk_key(id, n)));
        }
        let mut ids: Vec<OpId> =
            gone.iter().filter_map(|key| self.held.get(key)).flat_map(|h| h.ops.iter().cloned()).collect();
        crate::order::sort(&mut ids);
        // In the log's order, so a chunk reads in stamp order; judged marks
        // that have run out are kept erased (their hashes gone), so that a
        // sync peer holding them does not send them again.
        let lines: Vec<String> = log
            .ops()
            .filter(|(id, _)| ids.binary_search(id).is_ok())
            .map(|(id, op)| match op.erased().filter(|_| op.is_expired(now)) {
                Some(erased) => line_of(id, &erased),
                None => line_of(id, op),
            })
            .collect();
        let values = pack(&lines);
        let chunk = format!("{:016x}", crate::entry::random_u64(now));
        let index = ChunkIndex { writes: writes.0, parts: values.len(), ops: lines.len() };
        let mut items: Vec<(String, String)> =
            values.into_iter().enumerate().map(|(n, v)| (chunk_key(&chunk, n), v)).collect();
        let parts = items.len();
        items.push((index_key(&chunk), index.text()));
        // The mark moves, so other instances read the chunk at their next
        // catch-up (a forget must find every copy of a text).
        let mark = format!("{chunk}-chunk");
        items.push((MARK_KEY.to_string(), mark.clone()));
        if self.store.put_many_if(MARK_KEY, self.mark.as_deref(), items.clone()).await? {
            self.mark = Some(mark);
        } else {
            self.store.put_many(items.clone()).await?;
        }
        let mut deletes = gone.clone();
        deletes.extend(merged.iter().map(|id| index_key(id)));
        self.store.delete_many(deletes).await?;
        for key in &gone {
            self.held.remove(key);
        }
        self.chunks.retain(|(id, _)| !merged.contains(id));
        let mut ops = Vec::new();
        for (key, value) in items.into_iter().take(parts) {
            self.take(&key, &value, &mut ops);
        }
        self.hold_chunk(chunk, index);
        Ok(())
    }

    /// Deletes the heads of writers idle for a day whose writes are all in
    /// chunks: catching up reads one head per writer, so they must not pile
    /// up with every instance ever opened.
    async fn drop_idle_heads(&mut self, now: i64) -> Result<()> {
        let mut idle = Vec::new();
        for (key, value) in self.store.list(HEAD_PREFIX).await? {
            let mut parts = value.split(' ').map(|s| s.parse::<i64>().ok());
            let (seq, at) = (parts.next().flatten(), parts.next().flatten());
            let w = u64::from_str_radix(&key[HEAD_PREFIX.len()..], 16).ok();
            let (Some(seq), Some(at), Some(w)) = (seq, at, w) else { continue };
            let prefix = log_writer_prefix(w);
            if w != self.writer
                && now - at > HEAD_IDLE_MS
                && self.chunked.get(&w).is_some_and(|k| k.holds(1, seq as u64))
                && !self.held.keys().any(|k| k.starts_with(&prefix))
            {
                idle.push(key);
            }
        }
        if !idle.is_empty() {
            self.store.delete_many(idle).await?;
        }
        Ok(())
    }

    /// Moves the epoch, so every other instance reads the namespace anew:
    /// what it holds may have left the records (a purge, a sync's drop).
    pub async fn new_epoch(&mut self, now: i64) -> Result<()> {
        let epoch = format!("{:016x}", crate::entry::random_u64(now));
        self.store.put_many(vec![(EPOCH_KEY.to_string(), epoch.clone())]).await?;
        self.epoch = Some(epoch);
        Ok(())
    }

    /// Deletes every record of long-term memory and moves the epoch, so
    /// every instance reads the namespace anew.
    pub async fn purge(&mut self, now: i64) -> Result<()> {
        // Every key of long-term memory, an earlier release's too.
        let keys: Vec<String> =
            self.store.list(LONG_TERM_PREFIX).await?.into_iter().map(|(k, _)| k).collect();
        self.store.delete_many(keys.clone()).await?;
        self.new_epoch(now).await?;
        for key in &keys {
            self.damage.repaired(key);
        }
        self.mark = None;
        self.known.0.clear();
        self.chunked.0.clear();
        self.held.clear();
        self.chunks.clear();
        Ok(())
    }
}
