//! The namespace's memories as a few large values, and a journal of the
//! memories written since, so that opening a large namespace reads tens of
//! values instead of one record per memory.
//!
//! In Chromium, reading 10,000 records one by one (however batched) costs
//! more than parsing and indexing them: every value is its own row,
//! deserialized on the page's thread and copied into the wasm. The same
//! memories in chunks of 30 KiB are read about ten times faster.
//!
//! - A snapshot is made at a generation by an instance that has just read
//!   every record at that generation, written only if the store is still
//!   there, without a new generation (it changes nothing another instance
//!   holds). Its chunks (`lt/snap/<n>`) each hold the generation on their
//!   first line, then whole records, one per line. A new snapshot writes
//!   over the old one's keys, so storage stays one snapshot whatever
//!   writers race, and a chunk of another snapshot is told by its first line.
//! - The journal (`lt/meta/journal`) says the generation it is current at,
//!   the snapshot it extends and the ids written since. Every write of this
//!   library that knows the journal rewrites it with the write, in the same
//!   transaction. A write that does not (another version of the library, a
//!   full journal) leaves it at an old generation, and a journal not at the
//!   stored generation is never used: the next open reads every record and
//!   makes a new snapshot. So a memory that was acknowledged is never missed.
//! - A deletion deletes the snapshot and the journal with the memories, and
//!   a rewrite that changes a memory's text deletes them after: no
//!   forgotten or redacted text outlives its record in a snapshot.

use crate::longterm::lines;
use crate::store::layout::{snapshot_key, SNAPSHOT_PREFIX};
use crate::store::Store;

/// Where snapshots' chunks are kept.
/// Namespaces with fewer memories are read record by record: a snapshot
/// would double their storage and save nothing measurable.
pub const MIN_MEMORIES: usize = 256;
/// Ids a journal holds before writes stop keeping it: about 37 KB of ids,
/// 49 KB sealed, under Deno KV's 64 KB per value. The next open makes a
/// new snapshot.
pub const MAX_JOURNAL: usize = 1000;

/// A snapshot and the ids written since it was made.
#[derive(Debug, Clone, PartialEq)]
pub struct Journal {
    /// The generation the snapshot was made at.
    pub base: String,
    pub chunks: usize,
    /// In the order written, possibly more than once.
    pub ids: Vec<String>,
}

impl Journal {
    /// The journal as stored at generation `at`: the generation, the base
    /// and the chunk count on the first three lines, then one id per line.
    pub fn text(&self, at: &str) -> String {
        let mut text = format!("{at}\n{}\n{}", self.base, self.chunks);
        for id in &self.ids {
            text.push('\n');
            text.push_str(id);
        }
        text
    }

    /// The generation a stored journal is current at, and the journal.
    pub fn parse(text: &str) -> Option<(&str, Journal)> {
        let mut lines = text.split('\n');
        let at = lines.next()?;
        let base = lines.next()?.to_string();
        let chunks = lines.next()?.parse().ok()?;
        Some((at, Journal { base, chunks, ids: lines.map(str::to_string).collect() }))
    }

    /// This journal with `ids` written, or `None` when they do not fit (a
    /// full journal, or an id a line cannot hold).
    pub fn with<'a>(&self, ids: impl IntoIterator<Item = &'a str>) -> Option<Journal> {
        let mut next = self.clone();
        for id in ids {
            if id.contains('\n') || next.ids.len() == MAX_JOURNAL {
                return None;
            }
            next.ids.push(id.to_string());
        }
        Some(next)
    }
}

/// The keys of chunks `from..to`: an older snapshot's beyond a new one's.
pub fn chunk_keys(from: usize, to: usize) -> Vec<String> {
    (from..to).map(snapshot_key).collect()
}

/// The chunks of a snapshot of `records` (their JSON, and the lines saying
/// where they live) at `generation`; `None` if a record holds a newline
/// (JSON written by this library never does).
pub fn chunks<S: AsRef<str>>(
    generation: &str,
    records: impl IntoIterator<Item = S>,
) -> Option<Vec<(String, String)>> {
    let values = lines::pack(generation, records)?;
    Some(values.into_iter().enumerate().map(|(n, (chunk, _))| (snapshot_key(n), chunk)).collect())
}

/// The chunks of `journal`'s snapshot in order, or `None` unless every one
/// of them is there and of that snapshot.
pub async fn read(store: &dyn Store, journal: &Journal) -> crate::error::Result<Option<Vec<String>>> {
    let mut read = Vec::with_capacity(journal.chunks);
    store.scan(SNAPSHOT_PREFIX, &mut |part| read.extend(part)).await?;
    crate::order::sort_by(&mut read, |a, b| a.0.cmp(&b.0));
    let keys = chunk_keys(0, journal.chunks);
    if read.len() < keys.len() {
        return Ok(None);
    }
    let mut chunks = Vec::with_capacity(keys.len());
    for ((key, chunk), want) in read.into_iter().zip(&keys) {
        match chunk.split_once('\n') {
            Some((base, _)) if key == *want && base == journal.base => chunks.push(chunk),
            _ => return Ok(None),
        }
    }
    Ok(Some(chunks))
}

#[cfg(test)]
mod tests {
    use std::cell::Cell;
    use std::collections::BTreeMap;
    use std::rc::Rc;

    use futures::executor::block_on;

    use super::*;
    use crate::entry::{MemoryEntry, Scope};
    use crate::error::Result;
    use crate::longterm::batch;
    use crate::longterm::dedup::DedupOptions;
    use crate::longterm::records::{new_memory, Records, PROCESSED_TTL_MS};
    use crate::ports::clock::{Clock, ManualClock};
    use crate::ports::LocalBoxFuture;
    use crate::store::sealed::testing::TestCipher;
    use crate::store::{DamageLog, MemoryStore, Parts, SealedStore};

    /// A store that counts the reads of every memory record, and refuses
    /// snapshots when told to (a backend's quota).
    struct Counting {
        inner: Rc<dyn Store>,
        record_scans: Cell<u32>,
        snapshot_reads: Cell<u32>,
        refuse_snapshots: Cell<bool>,
        snapshot_puts: Cell<u32>,
    }

    impl Store for Counting {
        fn get<'a>(&'a self, key: &'a str) -> LocalBoxFuture<'a, Result<Option<String>>> {
            self.inner.get(key)
        }
        fn get_many<'a>(&'a self, keys: &'a [String]) -> LocalBoxFuture<'a, Result<Vec<Option<String>>>> {
            self.inner.get_many(keys)
        }
        fn put_many(&self, items: Vec<(String, String)>) -> LocalBoxFuture<'_, Result<()>> {
            let snapshot = items.iter().any(|(k, _)| k.starts_with(SNAPSHOT_PREFIX));
            self.snapshot_puts.set(self.snapshot_puts.get() + u32::from(snapshot));
            if self.refuse_snapshots.get() && snapshot {
                return Box::pin(async {
                    Err(crate::error::Error::new(crate::error::ErrorCode::QuotaExceeded, "full"))
                });
            }
            self.inner.put_many(items)
        }
        fn delete_many(&self, keys: Vec<String>) -> LocalBoxFuture<'_, Result<()>> {
            self.inner.delete_many(keys)
        }
        fn list<'a>(&'a self, prefix: &'a str) -> LocalBoxFuture<'a, Result<Vec<(String, String)>>> {
            self.inner.list(prefix)
        }
        fn scan<'a>(&'a self, prefix: &'a str, page: Parts<'a>) -> LocalBoxFuture<'a, Result<()>> {
            if prefix == "lt/entry/" {
                self.record_scans.set(self.record_scans.get() + 1);
            }
            if prefix == SNAPSHOT_PREFIX {
                self.snapshot_reads.set(self.snapshot_reads.get() + 1);
            }
            self.inner.scan(prefix, page)
        }
    }

    struct Env {
        raw: Rc<MemoryStore>,
        store: Rc<Counting>,
        clock: Rc<ManualClock>,
        words: Box<dyn FnMut(usize) -> usize>,
    }

    impl Env {
        fn new(sealed: bool) -> Env {
            let raw = Rc::new(MemoryStore::new());
            let inner: Rc<dyn Store> = if sealed {
                Rc::new(
                    block_on(SealedStore::encrypted(
                        raw.clone(),
                        TestCipher::new(&[3]),
                        "ns",
                        Rc::default(),
                        false,
                    ))
                    .unwrap(),
                )
            } else {
                raw.clone()
            };
            Env {
                raw,
                store: Rc::new(Counting {
                    inner,
                    record_scans: Cell::new(0),
                    snapshot_reads: Cell::new(0),
                    refuse_snapshots: Cell::new(false),
                    snapshot_puts: Cell::new(0),
                }),
                clock: Rc::new(ManualClock::new(1_700_000_000_000)),
                words: Box::new(crate::seeded::picker(0x5eed)),
            }
        }
        fn open(&self) -> Records {
            block_on(Records::open(self.store.clone(), self.clock.clone(), DedupOptions::default())).unwrap()
        }
        /// A memory of five made-up words: no two relate.
        fn fact(&mut self) -> MemoryEntry {
            self.clock.advance(1_000);
            let text: Vec<String> =
                (0..5).map(|_| (0..7).map(|_| char::from(b'a' + (self.words)(26) as u8)).collect()).collect();
            new_memory(text.join(" "), Scope::User, self.clock.now_ms())
        }
        fn facts(&mut self, n: usize) -> Vec<MemoryEntry> {
            (0..n).map(|_| self.fact()).collect()
        }
        /// Every memory as stored (in its own record or a batch's), by id;
        /// no memory is stored twice.
        fn stored(&self) -> BTreeMap<String, MemoryEntry> {
            let mut stored = BTreeMap::new();
            for (_, value) in
                block_on(crate::store::conformance::scanned(&*self.store.inner, "lt/entry/")).unwrap()
            {
                let jsons: Vec<&str> =
                    if batch::is_batch(&value) { lines::records(&value).collect() } else { vec![&value] };
                for json in jsons {
                    let e = serde_json::from_str::<MemoryEntry>(json).unwrap();
                    assert!(stored.insert(e.id.clone(), e).is_none(), "a memory stored twice");
                }
            }
            stored
        }
        /// The snapshot's chunks as stored.
        fn chunks(&self) -> usize {
            block_on(self.raw.list(SNAPSHOT_PREFIX)).unwrap().len()
        }
    }

    fn view(r: &Records) -> BTreeMap<String, MemoryEntry> {
        r.export().entries.into_iter().map(|e| (e.id.clone(), e)).collect()
    }

    /// Two instances change a namespace of hundreds of memories every way
    /// a user can; after each step, a new instance's view is exactly the
    /// records stored, whether it read them from a snapshot or one by one.
    fn every_open_sees_exactly_the_stored_records(sealed: bool) {
        let mut env = Env::new(sealed);
        let mut a = env.open();
        let first = env.facts(300);
        block_on(a.remember_many(first)).unwrap();
        assert!(env.chunks() > 0, "the write that passed 256 memories made a snapshot");
        let mut b = env.open();
        let mut pick = crate::seeded::picker(0xfeed);
        let (mut from_snapshot, mut incremental, mut hashes) = (0, 0, 0);
        for step in 0..160 {
            let which = pick(2);
            let tab = if which == 0 { &mut a } else { &mut b };
            let valid: Vec<String> = tab.valid().iter().map(|e| e.id.clone()).collect();
            let op = pick(9);
            match op {
                0 | 1 => drop(block_on(tab.remember(env.fact())).unwrap()),
                2 => drop(block_on(tab.remember_many(env.facts(40))).unwrap()),
                3 => {
                    let new = env.fact();
                    block_on(tab.supersede(new, &[valid[pick(valid.len())].clone()])).unwrap();
                }
                4 => {
                    let superseding = tab
                        .valid()
                        .iter()
                        .find(|e| e.metadata.contains_key("supersedes"))
                        .map(|e| e.id.clone());
                    if let Some(id) = superseding {
                        // What it superseded may be forgotten since.
                        if let Err(e) = block_on(tab.undo(&id)) {
                            assert_eq!(e.code, crate::error::ErrorCode::InvalidInput, "{e:?}");
                        }
                    }
                }
                5 => assert!(block_on(tab.forget(&valid[pick(valid.len())])).unwrap()),
                6 => {
                    hashes += 1;
                    block_on(tab.mark_processed(&[format!("h{hashes}")], PROCESSED_TTL_MS)).unwrap();
                }
                7 => {
                    let mut doc = tab.export();
                    let e = doc.entries.iter_mut().find(|e| e.is_valid()).unwrap();
                    e.content = format!("{} and more", e.content);
                    block_on(tab.import(doc)).unwrap();
                }
                _ => *tab = env.open(),
            }
            // Both tabs catch up (on the journal's records when they can)
            // to exactly what is stored.
            for tab in [&mut a, &mut b] {
                let reads = (env.store.record_scans.get(), env.store.snapshot_reads.get());
                let moved = block_on(tab.refresh()).unwrap();
                if moved && reads == (env.store.record_scans.get(), env.store.snapshot_reads.get()) {
                    incremental += 1;
                }
                assert_eq!(view(tab), env.stored(), "step {step}: a tab caught up");
            }
            let scans = env.store.record_scans.get();
            let fresh = env.open();
            if env.store.record_scans.get() == scans {
                from_snapshot += 1;
            }
            let (seen, stored) = (view(&fresh), env.stored());
            let differ: Vec<(Option<&MemoryEntry>, Option<&MemoryEntry>)> = seen
                .keys()
                .chain(stored.keys())
                .filter(|id| seen.get(*id) != stored.get(*id))
                .map(|id| (seen.get(id), stored.get(id)))
                .collect();
            assert!(differ.is_empty(), "step {step}: seen, stored: {differ:?}");
            let bytes: usize =
                block_on(env.store.inner.list("lt/entry/")).unwrap().iter().map(|(_, v)| v.len()).sum();
            assert_eq!(fresh.stats().storage_bytes, bytes as u64, "step {step}");
            assert_eq!(fresh.stats().processed_hashes, hashes, "step {step}");
        }
        let batches = block_on(env.raw.list("lt/entry/~batch/")).unwrap().len();
        assert!(batches > 3, "the batches' memories live in batch records: {batches}");
        assert!(from_snapshot > 60, "most opens read a snapshot: {from_snapshot} of 160");
        assert!(incremental > 20, "most catch-ups read the journal's records alone: {incremental}");
    }

    #[test]
    fn every_open_sees_exactly_the_stored_records_plain() {
        every_open_sees_exactly_the_stored_records(false);
    }

    #[test]
    fn every_open_sees_exactly_the_stored_records_sealed() {
        every_open_sees_exactly_the_stored_records(true);
    }

    /// What a deletion or a rewrite of a memory's text takes out of the
    /// records also leaves every snapshot: no raw value holds it.
    #[test]
    fn forgotten_and_rewritten_text_leaves_no_snapshot() {
        let mut env = Env::new(false);
        let mut a = env.open();
        block_on(a.remember_many(env.facts(300))).unwrap();
        let mut a = env.open();
        let raw_holds =
            |env: &Env, text: &str| block_on(env.raw.list("")).unwrap().iter().any(|(_, v)| v.contains(text));
        let gone = a.valid()[0].clone();
        assert!(raw_holds(&env, &gone.content), "the snapshot holds it");
        block_on(a.forget(&gone.id)).unwrap();
        assert!(!raw_holds(&env, &gone.content));
        let mut a = env.open();
        let mut doc = a.export();
        let old = doc.entries[0].content.clone();
        doc.entries[0].content = "redacted".into();
        block_on(a.import(doc)).unwrap();
        assert!(!raw_holds(&env, &old));
        block_on(a.purge()).unwrap();
        assert!(block_on(env.raw.list("lt/")).unwrap().iter().all(|(k, _)| k == "lt/meta/generation"));
    }

    /// A damaged or missing chunk, and a write that did not keep the
    /// journal (another version of the library), make the next open read
    /// every record, which sees everything and makes a good snapshot; a
    /// damaged record is reported at every open until it is repaired.
    #[test]
    fn a_damaged_snapshot_or_an_unjournaled_write_falls_back_to_every_record() {
        let mut env = Env::new(false);
        let mut a = env.open();
        block_on(a.remember_many(env.facts(300))).unwrap();
        let stored = |env: &Env| env.stored().len();
        let scans_of_open = |env: &Env| {
            let before = env.store.record_scans.get();
            let damage = Rc::new(DamageLog::default());
            let store = env.store.clone();
            let r = block_on(Records::open_with(
                store,
                env.clock.clone(),
                DedupOptions::default(),
                damage.clone(),
                &mut |_| {},
            ));
            (env.store.record_scans.get() - before, r.unwrap(), damage)
        };
        assert_eq!(scans_of_open(&env).0, 0, "read from the snapshot the write made");
        let chunk = format!("{SNAPSHOT_PREFIX}000001");
        block_on(env.raw.put_many(vec![(chunk.clone(), "{not json".into())])).unwrap();
        let (scans, r, _) = scans_of_open(&env);
        assert_eq!((scans, r.valid().len()), (1, stored(&env)));
        assert_eq!(scans_of_open(&env).0, 0, "the snapshot was made again");
        block_on(env.raw.delete_many(vec![chunk])).unwrap();
        let (scans, r, _) = scans_of_open(&env);
        assert_eq!((scans, r.valid().len()), (1, stored(&env)));
        // Another version: a record and a new generation, no journal.
        let e = env.fact();
        block_on(env.raw.put_many(vec![
            (format!("lt/entry/{}", e.id), serde_json::to_string(&e).unwrap()),
            ("lt/meta/generation".into(), "12345".into()),
        ]))
        .unwrap();
        let (scans, r, _) = scans_of_open(&env);
        assert_eq!(scans, 1);
        assert!(r.get(&e.id).is_some());
        // A damaged record: no snapshot leaves it out of sight.
        block_on(env.raw.put_many(vec![
            ("lt/entry/broken".into(), "{not json".into()),
            ("lt/meta/generation".into(), "777".into()),
        ]))
        .unwrap();
        let mut a = env.open();
        for _ in 0..2 {
            let (scans, _, damage) = scans_of_open(&env);
            assert_eq!(scans, 1);
            assert!(damage.list().iter().any(|d| d.key == "lt/entry/broken"));
        }
        block_on(a.remember(env.fact())).unwrap();
        assert_eq!(scans_of_open(&env).0, 1, "nor does a write while it is damaged");
        block_on(env.raw.delete_many(vec!["lt/entry/broken".into()])).unwrap();
        block_on(a.remember(env.fact())).unwrap();
        assert_eq!(scans_of_open(&env).0, 1, "a write still holds the damage it saw");
        assert_eq!(scans_of_open(&env).0, 0, "the open after made one");
    }

    #[test]
    fn a_journal_reads_back_and_stops_at_its_capacity() {
        let j = Journal { base: "42".into(), chunks: 3, ids: vec!["a".into(), "b".into()] };
        assert_eq!(Journal::parse(&j.text("43")), Some(("43", j.clone())));
        let empty = Journal { ids: vec![], ..j.clone() };
        assert_eq!(Journal::parse(&empty.text("42")), Some(("42", empty.clone())));
        assert_eq!(Journal::parse("42\n42"), None, "cut short");
        assert_eq!(Journal::parse("42\n42\nthree"), None, "a count that is not one");
        assert!(j.with(["bad\nid"]).is_none());
        let ids: Vec<String> = (0..MAX_JOURNAL).map(|i| i.to_string()).collect();
        let full = empty.with(ids.iter().map(String::as_str)).expect("fits");
        assert_eq!(full.ids.len(), MAX_JOURNAL);
        assert!(full.with(["one more"]).is_none());
        assert_eq!(full.with([]), Some(full.clone()), "a write of no memory keeps it");
    }

    #[test]
    fn chunks_hold_whole_records_in_order_under_their_size() {
        let records: Vec<String> =
            (0..3000).map(|i| format!("{{\"id\":\"{i}\",\"content\":\"{}\"}}", "x".repeat(i % 70))).collect();
        let chunks = chunks("7", records.iter().map(String::as_str)).unwrap();
        assert!(chunks.len() > 1);
        for (n, (key, chunk)) in chunks.iter().enumerate() {
            assert_eq!(key, &snapshot_key(n));
            assert!(chunk.len() <= lines::VALUE_BYTES);
            assert!(chunk.starts_with("7\n"));
        }
        let back: Vec<&str> = chunks.iter().flat_map(|(_, c)| lines::records(c)).collect();
        assert_eq!(back, records);
        assert_eq!(super::chunks("7", ["{\"a\":\n1}"]), None);
        assert_eq!(super::chunks("7", [""; 0]), Some(vec![]));
    }

    /// A backend that refuses the snapshot (its quota) costs the writes
    /// nothing and the opens their speed only.
    #[test]
    fn a_refused_snapshot_loses_no_write() {
        let mut env = Env::new(false);
        env.store.refuse_snapshots.set(true);
        let mut a = env.open();
        block_on(a.remember_many(env.facts(300))).unwrap();
        block_on(a.remember(env.fact())).unwrap();
        let gone = a.valid()[0].id.clone();
        block_on(a.forget(&gone)).unwrap();
        assert_eq!(env.chunks(), 0);
        assert_eq!(env.store.snapshot_puts.get(), 1, "refused once, the view tries no more");
        let b = env.open();
        assert_eq!(view(&b), env.stored());
        assert_eq!(b.valid().len(), 300);
        assert_eq!(env.store.snapshot_puts.get(), 2, "a new instance tries once");
        env.store.refuse_snapshots.set(false);
        block_on(a.remember(env.fact())).unwrap();
        assert_eq!(env.chunks(), 0);
        assert!(env.open().valid().len() == 301 && env.chunks() > 0, "made once the backend takes it");
        assert_eq!(view(&env.open()), env.stored());
    }
}
