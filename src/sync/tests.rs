//! Sync natively: frames and their bounds, the protocol between in-memory
//! replicas, memories syncing through a relay (plain and sealed) and
//! directly, and many replicas under random partial syncs.

use std::cell::{Cell, RefCell};
use std::collections::BTreeMap;
use std::rc::Rc;

use futures::executor::{LocalPool, LocalSpawner};
use futures::task::LocalSpawnExt;

use super::frame::{Frame, Kind};
use super::*;
use crate::entry::{MemoryEntry, Scope};
use crate::error::ErrorCode;
use crate::longterm::records::new_memory;
use crate::memory::{Memory, MemoryOptions, Ports};
use crate::ports::clock::{Clock, ManualClock};
use crate::ports::lock::LocalLocks;
use crate::ports::{Cipher, Spawn};
use crate::store::{MemoryStore, Store};
use crate::tokens::Estimate;

/// A replica of synthetic items in a map.
#[derive(Default)]
struct MapReplica(RefCell<BTreeMap<ItemId, Vec<u8>>>);

impl Replica for MapReplica {
    fn families(&self) -> Families {
        ALL_FAMILIES
    }
    fn ids(&self) -> LocalBoxFuture<'_, Result<Vec<ItemId>>> {
        Box::pin(async move { Ok(self.0.borrow().keys().copied().collect()) })
    }
    fn read<'a>(&'a self, ids: &'a [ItemId]) -> LocalBoxFuture<'a, Result<Vec<Record>>> {
        Box::pin(async move {
            let map = self.0.borrow();
            Ok(ids.iter().filter_map(|id| Some(Record { id: *id, bytes: map.get(id)?.clone() })).collect())
        })
    }
    fn write(&self, records: Vec<Record>) -> LocalBoxFuture<'_, Result<u32>> {
        Box::pin(async move {
            self.0.borrow_mut().extend(records.into_iter().map(|r| (r.id, r.bytes)));
            Ok(0)
        })
    }
}

/// A transport to a replica's [`answer`], failing once `left` exchanges
/// have gone (a connection cut off midway).
pub(super) struct Direct<'a> {
    pub(super) peer: &'a dyn Replica,
    pub(super) left: Cell<u32>,
}

impl<'a> Direct<'a> {
    fn new(peer: &'a dyn Replica) -> Direct<'a> {
        Direct { peer, left: Cell::new(u32::MAX) }
    }
}

impl Transport for Direct<'_> {
    fn exchange(&self, request: Vec<u8>) -> LocalBoxFuture<'_, Result<Vec<u8>>> {
        Box::pin(async move {
            if self.left.get() == 0 {
                return Err(Error::storage("the connection dropped"));
            }
            self.left.set(self.left.get() - 1);
            answer(self.peer, &request).await
        })
    }
}

/// A transport to a memory's answer.
pub(super) struct ToMemory<'a>(pub(super) &'a Memory, pub(super) Cell<u32>);

impl Transport for ToMemory<'_> {
    fn exchange(&self, request: Vec<u8>) -> LocalBoxFuture<'_, Result<Vec<u8>>> {
        Box::pin(async move {
            if self.1.get() == 0 {
                return Err(Error::storage("the connection dropped"));
            }
            self.1.set(self.1.get() - 1);
            self.0.answer_sync(&request, Default::default()).await
        })
    }
}

/// A transport to a relay.
pub(super) struct ToRelay<'a>(pub(super) &'a Relay);

impl Transport for ToRelay<'_> {
    fn exchange(&self, request: Vec<u8>) -> LocalBoxFuture<'_, Result<Vec<u8>>> {
        Box::pin(async move { self.0.exchange(&request).await })
    }
}

use crate::error::{Error, Result};
use crate::ports::LocalBoxFuture;

pub(super) fn run<T>(f: impl std::future::Future<Output = T>) -> T {
    futures::executor::block_on(f)
}

/// xorshift, seeded.
pub(super) struct Rng(pub(super) u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    pub(super) fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}

fn synthetic(n: u64, rng: &mut Rng) -> (ItemId, Vec<u8>) {
    let clock = (1_700_000_000_000 + n * 1000) << 16;
    let id = item_id(clock, rng.next(), rng.next(), KIND_LONG_TERM);
    (id, (0..300).map(|_| rng.next() as u8).collect())
}

#[test]
fn frames_round_trip_and_bad_ones_are_error_values() {
    let mut f = Frame::new(Kind::Response);
    f.query = Some(vec![1, 2, 3]);
    f.records = vec![Record { id: [7; 32], bytes: vec![9; 200] }];
    f.cut = true;
    let bytes = f.encode();
    assert!(bytes.len() <= f.size());
    assert_eq!(Frame::decode(&bytes).unwrap(), f);
    // Oversized: refused before it is read.
    let big = vec![0u8; MAX_FRAME + 1];
    assert_eq!(Frame::decode(&big).unwrap_err().code, ErrorCode::LimitExceeded);
    // A count larger than the frame allocates nothing.
    let mut lying = b"AM\x01\x01\x00".to_vec();
    lying.extend_from_slice(&[0xff, 0xff, 0xff, 0xff, 0x0f]);
    assert_eq!(Frame::decode(&lying).unwrap_err().code, ErrorCode::InvalidInput);
    // Random bytes, and every prefix of a good frame: errors, never a panic.
    let mut rng = Rng(7);
    let replica = MapReplica::default();
    for n in 0..2_000 {
        let mut junk: Vec<u8> = (0..rng.below(300)).map(|_| rng.next() as u8).collect();
        if n % 2 == 0 && junk.len() > 4 {
            junk[..4].copy_from_slice(b"AM\x01\x01");
        }
        let _ = Frame::decode(&junk);
        let _ = run(answer(&replica, &junk));
    }
    for cut in 0..bytes.len() {
        assert!(Frame::decode(&bytes[..cut]).is_err());
    }
}

#[test]
fn a_relay_syncing_with_a_peer_that_never_answers_gets_a_timeout_and_keeps_what_it_had() {
    let relay = Relay::new(Rc::new(MemoryStore::new()));
    struct Silent;
    impl Transport for Silent {
        fn exchange(&self, _: Vec<u8>) -> LocalBoxFuture<'_, Result<Vec<u8>>> {
            Box::pin(std::future::pending())
        }
    }
    let clock = ManualClock::new(1_700_000_000_000);
    let err = run(relay.sync(&Silent, &clock)).unwrap_err();
    assert_eq!(err.code, ErrorCode::Timeout);
    assert_eq!(clock.now_ms(), 1_700_000_000_000 + i64::from(EXCHANGE_TIMEOUT_MS), "it waited the deadline");
    assert!(run(relay.ids()).unwrap().is_empty());
}

#[test]
fn a_peer_of_another_version_gets_a_typed_error() {
    let relay = Relay::new(Rc::new(MemoryStore::new()));
    // A request of version 3 or older (it does not ask the peer's id, and
    // would take tombstones for damaged items) is told to update.
    let old = Frame::new(Kind::Request).encode();
    assert_eq!(run(relay.exchange(&old)).unwrap(), b"AM\x04\x03");
    // A request of version 5 is answered with this side's version only.
    let answered = run(relay.exchange(b"AM\x05\x01\x00\x00\x00")).unwrap();
    assert_eq!(answered, b"AM\x04\x03");
    // A device whose relay answers as version 5.
    struct Answers(&'static [u8]);
    impl Transport for Answers {
        fn exchange(&self, _: Vec<u8>) -> LocalBoxFuture<'_, Result<Vec<u8>>> {
            Box::pin(async { Ok(self.0.to_vec()) })
        }
    }
    let err = run(sync(&MapReplica::default(), &Answers(b"AM\x05\x03"))).unwrap_err();
    assert_eq!(err.code, ErrorCode::SyncVersion);
    assert_eq!(err.code.as_str(), "SYNC_VERSION");
    // A replica syncing more than long-term memory (this one: every
    // family) whose relay speaks version 1 only, and so answers with its
    // version: SYNC_VERSION, naming both.
    let err = run(sync(&MapReplica::default(), &Answers(b"AM\x01\x03"))).unwrap_err();
    assert_eq!(err.code, ErrorCode::SyncVersion);
    assert!(err.message.contains("version 1") && err.message.contains("version 4"), "{}", err.message);
}

#[test]
fn a_request_for_long_term_memory_alone_is_a_first_version_frame() {
    // Byte for byte what a relay of version 1 reads: no families byte.
    let mut request = Frame::new(Kind::Request);
    request.wants = vec![[7; ID_LEN]];
    let bytes = request.encode();
    assert_eq!(&bytes[..4], b"AM\x01\x01");
    assert_eq!(bytes.len(), 4 + 1 + 1 + 1 + ID_LEN, "no byte after the wanted ids");
    assert_eq!(Frame::decode(&bytes).unwrap(), request);
    // Families make it version 2, with them last; a version 1 frame with a
    // byte after its end is malformed, as a relay of version 1 finds it.
    request.families = LONG_TERM_ONLY | 1 << KIND_SESSION;
    let bytes = request.encode();
    assert_eq!(&bytes[..4], b"AM\x02\x01");
    assert_eq!(bytes.last(), Some(&request.families));
    assert_eq!(Frame::decode(&bytes).unwrap(), request);
    let mut first = bytes.clone();
    first[2] = 1;
    assert_eq!(Frame::decode(&first).unwrap_err().code, ErrorCode::InvalidInput);
    // Records that replace make it version 3: families, then flags.
    request.replace = true;
    let bytes = request.encode();
    assert_eq!(&bytes[..4], b"AM\x03\x01");
    assert_eq!(&bytes[bytes.len() - 2..], &[request.families, 1]);
    assert_eq!(Frame::decode(&bytes).unwrap(), request);
    // Asking the peer's id is flag 2 of the same byte.
    request.ask_id = true;
    let bytes = request.encode();
    assert_eq!(&bytes[bytes.len() - 2..], &[request.families, 3]);
    assert_eq!(Frame::decode(&bytes).unwrap(), request);
    // Responses stay version 1, unless they name their side: version 4,
    // the id last.
    let mut response = Frame::new(Kind::Response);
    assert_eq!(&response.encode()[..4], b"AM\x01\x02");
    response.peer = Some(0x0102_0304_0506_0708);
    let bytes = response.encode();
    assert_eq!(&bytes[..4], b"AM\x04\x02");
    assert_eq!(&bytes[bytes.len() - 8..], &[1, 2, 3, 4, 5, 6, 7, 8]);
    assert_eq!(Frame::decode(&bytes).unwrap(), response);
}

#[test]
fn replicas_one_percent_apart_exchange_bytes_in_proportion() {
    let mut rng = Rng(42);
    let (a, b) = (MapReplica::default(), MapReplica::default());
    let mut full = 0;
    for n in 0..10_000 {
        let (id, bytes) = synthetic(n, &mut rng);
        full += 32 + bytes.len() as u64;
        // 50 only on each side: 100 differ.
        if n % 200 != 0 {
            b.0.borrow_mut().insert(id, bytes.clone());
        }
        if n % 200 != 100 {
            a.0.borrow_mut().insert(id, bytes);
        }
    }
    let report = run(sync(&a, &Direct::new(&b))).unwrap();
    assert_eq!((report.sent, report.received, report.rejected), (50, 50, 0));
    assert_eq!(*a.0.borrow(), *b.0.borrow());
    let bytes = report.bytes_sent + report.bytes_received;
    assert!(bytes * 20 < full, "{bytes} bytes on the wire for a full upload of {full}");
    eprintln!("1% of 10,000: {bytes} bytes in {} rounds; full upload {full}", report.rounds);
    // A second sync moves nothing but one round of fingerprints.
    let again = run(sync(&a, &Direct::new(&b))).unwrap();
    assert_eq!((again.sent, again.received, again.rounds), (0, 0, 1));
    assert!(again.bytes_sent + again.bytes_received < 2_000);
}

#[test]
fn a_large_difference_spans_frames_and_a_cut_sync_resumes() {
    let mut rng = Rng(3);
    let (a, relay) = (MapReplica::default(), Relay::new(Rc::new(MemoryStore::new())));
    for n in 0..8_000 {
        let (id, bytes) = synthetic(n, &mut rng);
        a.0.borrow_mut().insert(id, bytes);
    }
    // Cut off after two exchanges: what landed stays.
    let cut = Direct { peer: &relay, left: Cell::new(2) };
    assert!(run(sync(&a, &cut)).is_err());
    let landed = run(relay.ids()).unwrap().len();
    assert!(landed > 0 && landed < 8_000, "{landed}");
    let report = run(sync(&a, &Direct::new(&relay))).unwrap();
    assert_eq!(report.sent as usize, 8_000 - landed);
    assert!(report.rounds > 2, "8,000 records of 300 bytes take several frames");
    // Another replica gets everything from the relay.
    let b = MapReplica::default();
    let got = run(sync(&b, &Direct::new(&relay))).unwrap();
    assert_eq!(got.received, 8_000);
    assert_eq!(*a.0.borrow(), *b.0.borrow());
    // Relay to relay: a second one catches up with the first.
    let mirror = Relay::new(Rc::new(MemoryStore::new()));
    let clock = ManualClock::new(1_700_000_000_000);
    assert_eq!(run(mirror.sync(&ToRelay(&relay), &clock)).unwrap().received, 8_000);
    let (mut x, mut y) = (run(mirror.ids()).unwrap(), run(relay.ids()).unwrap());
    x.sort();
    y.sort();
    assert_eq!(x, y);
}

// ---- memories ----

pub(super) struct PoolSpawner(pub(super) LocalSpawner);

impl Spawn for PoolSpawner {
    fn spawn(&self, task: LocalBoxFuture<'static, ()>) {
        self.0.spawn_local(task).expect("the pool outlives its memories");
    }
}

/// A device: a memory on a store of its own.
pub(super) struct Device {
    pub(super) memory: Memory,
    pub(super) store: Rc<MemoryStore>,
}

pub(super) struct World {
    pub(super) pool: LocalPool,
    pub(super) clock: Rc<ManualClock>,
}

impl World {
    pub(super) fn new() -> World {
        World { pool: LocalPool::new(), clock: Rc::new(ManualClock::new(1_700_000_000_000)) }
    }

    pub(super) fn device(&mut self, cipher: Option<&[u8]>) -> Device {
        let store = Rc::new(MemoryStore::new());
        let memory = self.open(store.clone(), Rc::new(LocalLocks::default()), "s", cipher);
        Device { memory, store }
    }

    /// A memory of session `session` on `store` (another instance beside
    /// those already open on it when they share `locks`).
    pub(super) fn open(
        &mut self,
        store: Rc<MemoryStore>,
        locks: Rc<LocalLocks>,
        session: &str,
        cipher: Option<&[u8]>,
    ) -> Memory {
        self.open_as(store, locks, session, cipher, false)
    }

    /// [`World::open`], reading a plain store's records and sealing them
    /// (`migrate_plain`) when `migrate`.
    pub(super) fn open_as(
        &mut self,
        store: Rc<MemoryStore>,
        locks: Rc<LocalLocks>,
        session: &str,
        cipher: Option<&[u8]>,
        migrate: bool,
    ) -> Memory {
        let cipher =
            cipher.map(|seeds| crate::store::sealed::testing::TestCipher::new(seeds) as Rc<dyn Cipher>);
        let ports = Ports {
            store,
            clock: self.clock.clone(),
            locks,
            spawner: Rc::new(PoolSpawner(self.pool.spawner())),
            tokenizer: Rc::new(Estimate),
            llm: None,
            embedder: None,
            long_term: None,
            on_damaged: None,
            cipher,
            patterns: None,
        };
        let options = MemoryOptions {
            namespace: "user-1".into(),
            session_id: session.into(),
            migrate_plain: migrate,
            ..Default::default()
        };
        self.run(Memory::open(options, ports)).unwrap()
    }

    pub(super) fn run<T>(&mut self, f: impl std::future::Future<Output = T>) -> T {
        let out = self.pool.run_until(f);
        self.pool.run_until_stalled();
        self.clock.advance(1_000);
        out
    }
}

pub(super) fn fact(text: &str) -> MemoryEntry {
    new_memory(text, Scope::User, 1_700_000_000_000)
}

/// Every memory (history too) and judged mark: what a view is.
pub(super) fn view(w: &mut World, m: &Memory) -> (Vec<MemoryEntry>, BTreeMap<String, i64>) {
    let mut doc = w.run(m.export()).unwrap();
    doc.entries.sort_by(|a, b| a.id.cmp(&b.id));
    (doc.entries, doc.processed)
}

/// Every raw value of a store, with base64 values decoded too.
pub(super) fn raw(w: &mut World, store: &MemoryStore) -> String {
    let values = w.run(store.list("")).unwrap();
    let mut text = String::new();
    for (_, v) in values {
        text.push_str(&v);
        if let Some(bytes) = crate::base64::unbase64(&v) {
            text.push_str(&String::from_utf8_lossy(&bytes));
        }
    }
    text
}

fn contents(entries: &[MemoryEntry]) -> Vec<String> {
    let mut v: Vec<String> = entries.iter().filter(|e| e.is_valid()).map(|e| e.content.clone()).collect();
    v.sort();
    v
}

#[test]
fn two_devices_through_a_relay_hold_the_same_memories_and_a_forget_propagates() {
    let mut w = World::new();
    let (a, b) = (w.device(None), w.device(None));
    let relay_store = Rc::new(MemoryStore::new());
    let relay = Relay::new(relay_store.clone());
    let dog = fact("Has a dog named Rex");
    let dog_id = dog.id.clone();
    w.run(a.memory.remember(dog)).unwrap();
    w.run(a.memory.remember(fact("Works as a nurse"))).unwrap();
    w.run(b.memory.remember(fact("Lives in Lisbon"))).unwrap();
    for d in [&a, &b, &a] {
        w.run(d.memory.sync(&ToRelay(&relay))).unwrap();
    }
    let (va, vb) = (view(&mut w, &a.memory), view(&mut w, &b.memory));
    assert_eq!(va, vb);
    assert_eq!(contents(&va.0), ["Has a dog named Rex", "Lives in Lisbon", "Works as a nurse"]);
    // The forget travels; the receiver erases the text from its store.
    assert!(w.run(b.memory.forget(&dog_id)).unwrap());
    let report = w.run(b.memory.sync(&ToRelay(&relay))).unwrap();
    assert_eq!(report.sent, 2, "the forget, and the erased write (its id flagged)");
    assert!(!raw(&mut w, &relay_store).contains("Rex"), "the relay dropped the original");
    let report = w.run(a.memory.sync(&ToRelay(&relay))).unwrap();
    // a offers its original (it cannot know yet): the relay refuses it.
    assert_eq!(report.received, 2);
    assert_eq!(view(&mut w, &a.memory), view(&mut w, &b.memory));
    assert!(!contents(&view(&mut w, &a.memory).0).contains(&"Has a dog named Rex".to_string()));
    for store in [&a.store, &b.store, &relay_store] {
        assert!(!raw(&mut w, store).contains("Rex"), "a raw store still holds a forgotten text");
    }
    let stats = w.run(a.memory.stats()).unwrap().sync.unwrap();
    assert_eq!((stats.syncs, stats.received, stats.last_error.clone()), (3, 3, None));
    // A device that joins late gets everything, the forget included.
    let c = w.device(None);
    w.run(c.memory.sync(&ToRelay(&relay))).unwrap();
    assert_eq!(view(&mut w, &c.memory), view(&mut w, &a.memory));
    assert!(!raw(&mut w, &c.store).contains("Rex"));
}

#[test]
fn a_tampered_operation_is_rejected_as_damaged_and_never_applied() {
    let mut w = World::new();
    let (a, b) = (w.device(None), w.device(None));
    let relay_store = Rc::new(MemoryStore::new());
    let relay = Relay::new(relay_store.clone());
    w.run(a.memory.remember(fact("Likes green tea"))).unwrap();
    w.run(a.memory.sync(&ToRelay(&relay))).unwrap();
    let (key, value) = w.run(relay_store.list(crate::store::layout::SYNC_ITEM_PREFIX)).unwrap().remove(0);
    let text = String::from_utf8(crate::base64::unbase64(&value).unwrap()).unwrap();
    let altered = crate::base64::base64(text.replace("green", "black").as_bytes());
    w.run(relay_store.put_many(vec![(key, altered)])).unwrap();
    let report = w.run(b.memory.sync(&ToRelay(&Relay::new(relay_store.clone())))).unwrap();
    assert_eq!((report.received, report.rejected), (0, 1));
    assert!(w.run(b.memory.memories()).unwrap().is_empty());
    let damaged = w.run(b.memory.stats()).unwrap().damaged;
    assert!(damaged.len() == 1 && damaged[0].key.starts_with("sync/"), "{damaged:?}");
}

#[test]
fn with_encryption_the_relay_holds_ciphertext_only_and_a_moved_or_altered_item_is_damaged() {
    let mut w = World::new();
    let (a, b) = (w.device(Some(&[5])), w.device(Some(&[5])));
    let relay_store = Rc::new(MemoryStore::new());
    let relay = Relay::new(relay_store.clone());
    w.run(a.memory.remember(fact("Allergic to peanuts"))).unwrap();
    w.run(a.memory.remember(fact("Plays the cello"))).unwrap();
    w.run(a.memory.sync(&ToRelay(&relay))).unwrap();
    let held = raw(&mut w, &relay_store);
    for plain in ["peanuts", "cello", "Allergic", "content", "create"] {
        assert!(!held.contains(plain), "the relay holds {plain:?}");
    }
    w.run(b.memory.sync(&ToRelay(&relay))).unwrap();
    assert_eq!(view(&mut w, &a.memory), view(&mut w, &b.memory));
    // Replayed under another id (swapped), and altered: neither opens.
    let items = w.run(relay_store.list(crate::store::layout::SYNC_ITEM_PREFIX)).unwrap();
    let (k0, v0) = items[0].clone();
    let (k1, v1) = items[1].clone();
    let mut bytes = crate::base64::unbase64(&v1).unwrap();
    let last = bytes.len() - 1;
    bytes[last] ^= 1;
    let c = w.device(Some(&[5]));
    let spoiled = Rc::new(MemoryStore::new());
    w.run(spoiled.put_many(vec![(k1, v0), (k0, crate::base64::base64(&bytes))])).unwrap();
    let report = w.run(c.memory.sync(&ToRelay(&Relay::new(spoiled)))).unwrap();
    assert_eq!((report.received, report.rejected), (0, 2));
    assert!(w.run(c.memory.memories()).unwrap().is_empty());
    assert_eq!(w.run(c.memory.stats()).unwrap().damaged.len(), 2);
    // A device without the key takes nothing either.
    let d = w.device(None);
    let report = w.run(d.memory.sync(&ToRelay(&relay))).unwrap();
    assert_eq!((report.received, report.rejected), (0, 2));
}

#[test]
fn replicas_under_random_partial_syncs_converge_and_nothing_forgotten_comes_back() {
    // What the seeds did, so the test is known to exercise each.
    let (mut forgets, mut purges, mut cut, mut whole) = (0, 0, 0, 0);
    for seed in 1..=8u64 {
        let mut rng = Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1);
        let mut w = World::new();
        let n = 2 + rng.below(3) as usize;
        let devices: Vec<Device> = (0..n).map(|_| w.device(None)).collect();
        let relay_store = Rc::new(MemoryStore::new());
        let relay = Relay::new(relay_store.clone());
        let mut said = 0;
        let mut forgotten: Vec<String> = Vec::new();
        let mut texts: Vec<String> = Vec::new();
        for _ in 0..40 {
            let d = &devices[rng.below(n as u64) as usize];
            let held = contents(&view(&mut w, &d.memory).0);
            let ids: Vec<MemoryEntry> =
                view(&mut w, &d.memory).0.into_iter().filter(|e| e.is_valid()).collect();
            match rng.below(7) {
                0 | 1 => {
                    said += 1;
                    texts.push(format!("Fact {said} zq{said}x about {seed}"));
                    w.run(d.memory.remember(fact(&texts[texts.len() - 1]))).unwrap();
                }
                2 if !ids.is_empty() => {
                    said += 1;
                    let old = &ids[rng.below(ids.len() as u64) as usize];
                    texts.push(format!("Revised {said} zq{said}x"));
                    let new = fact(&texts[texts.len() - 1]);
                    w.run(d.memory.supersede(new, std::slice::from_ref(&old.id))).unwrap();
                }
                // Rarely: a purge takes everything said before it, on
                // every device, whenever they hear of it.
                5 if rng.below(4) == 0 => {
                    w.run(d.memory.purge()).unwrap();
                    forgotten.append(&mut texts);
                    purges += 1;
                }
                3 if !ids.is_empty() => {
                    let undoable: Vec<&MemoryEntry> =
                        ids.iter().filter(|e| e.metadata.contains_key("supersedes")).collect();
                    if let Some(e) = undoable.first() {
                        let _ = w.run(d.memory.undo(&e.id));
                    }
                }
                4 if !held.is_empty() => {
                    let e = &ids[rng.below(ids.len() as u64) as usize];
                    let history = w.run(d.memory.history(&e.id)).unwrap();
                    forgotten.extend(history.into_iter().map(|h| h.content));
                    w.run(d.memory.forget(&e.id)).unwrap();
                    forgets += 1;
                }
                _ => {
                    // A partial sync between two, or with the relay, maybe
                    // cut off midway.
                    let peer = &devices[rng.below(n as u64) as usize];
                    let left = if rng.below(3) == 0 { rng.below(2) as u32 } else { u32::MAX };
                    let out = if rng.below(2) == 0 {
                        w.run(d.memory.sync(&ToMemory(&peer.memory, Cell::new(left))))
                    } else {
                        w.run(d.memory.sync(&Direct { peer: &relay, left: Cell::new(left) }))
                    };
                    match out {
                        Ok(_) => whole += 1,
                        Err(_) => cut += 1,
                    }
                }
            }
        }
        // A full round: each with the first, then each again; then each
        // with the relay, twice.
        for _ in 0..2 {
            for d in &devices[1..] {
                w.run(d.memory.sync(&ToMemory(&devices[0].memory, Cell::new(u32::MAX)))).unwrap();
            }
        }
        for _ in 0..2 {
            for d in &devices {
                w.run(d.memory.sync(&ToRelay(&relay))).unwrap();
            }
        }
        let first = view(&mut w, &devices[0].memory);
        for d in &devices[1..] {
            assert_eq!(view(&mut w, &d.memory), first, "seed {seed}: views differ");
        }
        let all: Vec<String> = first.0.iter().map(|e| e.content.clone()).collect();
        let stores: Vec<String> =
            devices.iter().map(|d| &d.store).chain([&relay_store]).map(|s| raw(&mut w, s)).collect();
        for text in &forgotten {
            assert!(!all.contains(text), "seed {seed}: {text:?} came back");
            for (at, store) in stores.iter().enumerate() {
                assert!(
                    !store.contains(text.as_str()),
                    "seed {seed}: {text:?} in raw store {at} (the last: the relay's)"
                );
            }
        }
        // Every replica holds the same items, and a second round moves none.
        for d in &devices {
            let again = w.run(d.memory.sync(&ToRelay(&relay))).unwrap();
            assert_eq!((again.sent, again.received, again.rejected), (0, 0, 0), "seed {seed}");
        }
    }
    assert!(
        forgets > 3 && purges > 0 && cut > 3 && whole > 3,
        "forgets {forgets}, purges {purges}, cut syncs {cut}, whole ones {whole}"
    );
}

#[test]
fn a_purge_travels_and_what_was_written_after_it_stays() {
    let mut w = World::new();
    let (a, b) = (w.device(None), w.device(None));
    let plain_store = Rc::new(MemoryStore::new());
    let relay = Relay::new(plain_store.clone());
    w.run(a.memory.remember(fact("Owns a red bicycle"))).unwrap();
    w.run(b.memory.remember(fact("Studies marine biology"))).unwrap();
    for d in [&a, &b] {
        w.run(d.memory.sync(&ToRelay(&relay))).unwrap();
    }
    // B goes offline with both memories; A purges, and B writes later.
    w.run(b.memory.remember(fact("Keeps two cats"))).unwrap();
    w.run(a.memory.purge()).unwrap();
    w.run(b.memory.remember(fact("Runs on Sundays"))).unwrap();
    w.run(a.memory.sync(&ToRelay(&relay))).unwrap();
    for gone in ["bicycle", "marine"] {
        assert!(!raw(&mut w, &plain_store).contains(gone), "the relay still holds {gone:?}");
    }
    for d in [&b, &a, &b] {
        w.run(d.memory.sync(&ToRelay(&relay))).unwrap();
    }
    let (va, vb) = (view(&mut w, &a.memory), view(&mut w, &b.memory));
    assert_eq!(va, vb);
    assert_eq!(contents(&va.0), ["Runs on Sundays"], "what b wrote before the purge went with it");
    for store in [&a.store, &b.store, &plain_store] {
        let held = raw(&mut w, store);
        for gone in ["bicycle", "marine", "cats"] {
            assert!(!held.contains(gone), "a raw store still holds {gone:?}");
        }
    }
    // A late device gets the purge and what came after, nothing before.
    let c = w.device(None);
    w.run(c.memory.sync(&ToRelay(&relay))).unwrap();
    assert_eq!(view(&mut w, &c.memory), va);
}

#[test]
fn judged_marks_run_out_once_and_are_not_sent_again() {
    let mut w = World::new();
    let (a, b) = (w.device(None), w.device(None));
    let relay = Relay::new(Rc::new(MemoryStore::new()));
    let mut doc = w.run(a.memory.export()).unwrap();
    let now = w.clock.now_ms();
    doc.processed.insert("judged-1".into(), now + 3_000);
    doc.processed.insert("judged-2".into(), now + 3_000_000);
    w.run(a.memory.import(doc)).unwrap();
    w.run(a.memory.sync(&ToRelay(&relay))).unwrap();
    // judged-1 runs out: a lists it erased, the relay drops the original.
    w.clock.advance(10_000);
    let first = w.run(a.memory.sync(&ToRelay(&relay))).unwrap();
    assert_eq!(first.sent, 1, "the erased mark");
    for _ in 0..2 {
        w.run(b.memory.sync(&ToRelay(&relay))).unwrap();
    }
    assert_eq!(view(&mut w, &a.memory), view(&mut w, &b.memory));
    for d in [&a, &b] {
        let again = w.run(d.memory.sync(&ToRelay(&relay))).unwrap();
        assert_eq!((again.sent, again.received), (0, 0), "an expired mark moved again");
    }
    // Two devices that hold an expired mark as sent originally meet: the
    // first sync moves the erasure, the second nothing.
    let c = w.device(None);
    let mut doc = w.run(c.memory.export()).unwrap();
    doc.processed.insert("judged-3".into(), w.clock.now_ms() + 3_000);
    w.run(c.memory.import(doc)).unwrap();
    let d = w.device(None);
    w.run(d.memory.sync(&ToMemory(&c.memory, Cell::new(u32::MAX)))).unwrap();
    w.clock.advance(10_000);
    w.run(d.memory.sync(&ToMemory(&c.memory, Cell::new(u32::MAX)))).unwrap();
    let again = w.run(d.memory.sync(&ToMemory(&c.memory, Cell::new(u32::MAX)))).unwrap();
    assert_eq!((again.sent, again.received), (0, 0));
}

#[test]
fn a_relay_keeps_an_erasure_and_refuses_the_original_it_replaced() {
    let store = Rc::new(MemoryStore::new());
    let relay = Relay::new(store.clone());
    let original = item_id(5 << 16, 9, 77, KIND_LONG_TERM);
    let erased = erasures_of(&original)[1];
    let older = item_id(3 << 16, 8, 1, KIND_LONG_TERM);
    let other = item_id(3 << 16, 8, 2, 2);
    let record = |id: ItemId| Record { id, bytes: b"x".to_vec() };
    run(relay.write(vec![record(original), record(older), record(other)])).unwrap();
    run(relay.write(vec![record(erased)])).unwrap();
    let mut held = run(relay.ids()).unwrap();
    held.sort();
    assert_eq!(held, {
        let mut v = vec![erased, older, other];
        v.sort();
        v
    });
    // The original again (a device that still holds it): refused, silently.
    assert_eq!(run(relay.write(vec![record(original)])).unwrap(), 0);
    assert!(!run(relay.ids()).unwrap().contains(&original));
    // A purge of the family takes what is older of that family only.
    let purge = item_id(4 << 16, 8, 3, KIND_LONG_TERM | PURGE);
    run(relay.write(vec![record(purge), record(item_id(1 << 16, 1, 1, KIND_LONG_TERM))])).unwrap();
    let mut held = run(relay.ids()).unwrap();
    held.sort();
    let mut want = vec![erased, other, purge];
    want.sort();
    assert_eq!(held, want);
    // Another relay on the same store reads the same.
    let mut fresh = run(Relay::new(store).ids()).unwrap();
    fresh.sort();
    assert_eq!(fresh, want);
}
