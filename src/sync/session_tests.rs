//! Session sync natively: devices with two sessions open on their store
//! under random session and long-term operations and random partial syncs
//! converge; deliveries duplicated, reordered, altered or replayed; a
//! device syncing without sessions is sent none; conflicts and lag.

use std::cell::Cell;
use std::rc::Rc;

use super::frame::{Frame, Kind};
use super::tests::{fact, raw, view, Rng, ToRelay, World};
use super::*;
use crate::error::{Error, Result};
use crate::memory::{Memory, SyncOptions};
use crate::ports::lock::LocalLocks;
use crate::ports::LocalBoxFuture;
use crate::store::{MemoryStore, Store};
use crate::working::session::NewMessage;

const SESSIONS: SyncOptions = SyncOptions { sessions: true };

/// A device: sessions "s" and "t" open on one store.
struct Phone {
    s: Memory,
    t: Memory,
    store: Rc<MemoryStore>,
}

fn phone(w: &mut World) -> Phone {
    let store = Rc::new(MemoryStore::new());
    let locks = Rc::new(LocalLocks::default());
    let s = w.open(store.clone(), locks.clone(), "s", None);
    let t = w.open(store.clone(), locks, "t", None);
    Phone { s, t, store }
}

fn said(text: &str) -> NewMessage {
    NewMessage { content: text.into(), ..Default::default() }
}

/// A transport to a memory answering with its sessions, or to any
/// transport, failing once `left` exchanges have gone (cut off midway).
struct Cut<'a> {
    to: Peer<'a>,
    left: Cell<u32>,
}

enum Peer<'a> {
    Memory(&'a Memory),
    Relay(&'a Relay),
}

impl<'a> Cut<'a> {
    fn new(to: Peer<'a>, left: u32) -> Cut<'a> {
        Cut { to, left: Cell::new(left) }
    }
}

impl Transport for Cut<'_> {
    fn exchange(&self, request: Vec<u8>) -> LocalBoxFuture<'_, Result<Vec<u8>>> {
        Box::pin(async move {
            if self.left.get() == 0 {
                return Err(Error::storage("the connection dropped"));
            }
            self.left.set(self.left.get() - 1);
            match self.to {
                Peer::Memory(m) => m.answer_sync(&request, SESSIONS).await,
                Peer::Relay(r) => r.exchange(&request).await,
            }
        })
    }
}

/// A transport to a relay that counts the session items its answers carry.
struct Counting<'a>(&'a Relay, Cell<u32>);

impl Transport for Counting<'_> {
    fn exchange(&self, request: Vec<u8>) -> LocalBoxFuture<'_, Result<Vec<u8>>> {
        Box::pin(async move {
            let answer = self.0.exchange(&request).await?;
            let frame = Frame::decode(&answer)?;
            let sessions = frame.records.iter().filter(|r| r.id[24] & FAMILY == KIND_SESSION).count();
            self.1.set(self.1.get() + sessions as u32);
            Ok(answer)
        })
    }
}

/// The session records a store holds (messages, summaries, deletion
/// markers): what a session view is, byte for byte.
fn sessions_of(w: &mut World, store: &MemoryStore) -> Vec<(String, String)> {
    let mut rows = w.run(store.list("session/")).unwrap();
    rows.retain(|(k, _)| k.contains("/msg/") || k.contains("/gone/") || k.ends_with("/summary"));
    rows.sort();
    rows
}

fn contents(history: &[crate::entry::MemoryEntry]) -> Vec<String> {
    history.iter().map(|e| e.content.clone()).collect()
}

#[test]
fn devices_under_random_session_operations_and_partial_syncs_converge_and_nothing_deleted_comes_back() {
    let (mut pops, mut clears, mut deletions, mut summaries, mut cut) = (0, 0, 0, 0, 0);
    for seed in 1..=6u64 {
        let mut rng = Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1);
        let mut w = World::new();
        let n = 2 + rng.below(2) as usize;
        let phones: Vec<Phone> = (0..n).map(|_| phone(&mut w)).collect();
        let relay_store = Rc::new(MemoryStore::new());
        let relay = Relay::new(relay_store.clone());
        let mut deleted: Vec<String> = Vec::new();
        for step in 0..45 {
            let p = &phones[rng.below(n as u64) as usize];
            let text = format!("msg {seed}-{step} zq{step}x");
            match rng.below(10) {
                0..=2 => {
                    let m = if rng.below(3) == 0 { &p.t } else { &p.s };
                    w.run(m.add(said(&text))).unwrap();
                }
                3 => {
                    if let Some(e) = w.run(p.s.pop_message()).unwrap() {
                        deleted.push(e.content);
                        pops += 1;
                    }
                }
                4 if rng.below(3) == 0 => {
                    deleted.extend(contents(&w.run(p.t.session_history()).unwrap()));
                    w.run(p.t.clear_session()).unwrap();
                    clears += 1;
                }
                5 if rng.below(3) == 0 => {
                    deleted.extend(contents(&w.run(p.t.session_history()).unwrap()));
                    w.run(p.s.delete_session("t")).unwrap();
                    deletions += 1;
                }
                6 => {
                    let history = w.run(p.s.session_history()).unwrap();
                    // The 3 newest rounds stay out of summaries (one message each here).
                    if history.len() > 3 {
                        let through = &history[rng.below(history.len() as u64 - 3) as usize];
                        let summary = format!("summary {seed}-{step}");
                        summaries += u32::from(w.run(p.s.commit_summary(summary, &through.id)).is_ok());
                    }
                }
                7 => {
                    w.run(p.s.remember(fact(&format!("Fact {seed}-{step} zq{step}y")))).unwrap();
                }
                _ => {
                    let peer = &phones[rng.below(n as u64) as usize];
                    let left = if rng.below(3) == 0 { rng.below(2) as u32 } else { u32::MAX };
                    let to = if rng.below(2) == 0 { Peer::Memory(&peer.s) } else { Peer::Relay(&relay) };
                    cut += u32::from(w.run(p.s.sync_with(&Cut::new(to, left), SESSIONS)).is_err());
                }
            }
        }
        for _ in 0..2 {
            for p in &phones {
                w.run(p.s.sync_with(&ToRelay(&relay), SESSIONS)).unwrap();
            }
        }
        let first = (sessions_of(&mut w, &phones[0].store), view(&mut w, &phones[0].s));
        let histories = |w: &mut World, p: &Phone| {
            (
                contents(&w.run(p.s.session_history()).unwrap()),
                contents(&w.run(p.t.session_history()).unwrap()),
            )
        };
        let first_histories = histories(&mut w, &phones[0]);
        for p in &phones[1..] {
            assert_eq!(sessions_of(&mut w, &p.store), first.0, "seed {seed}: session records differ");
            assert_eq!(view(&mut w, &p.s), first.1, "seed {seed}: long-term views differ");
            assert_eq!(histories(&mut w, p), first_histories, "seed {seed}: open sessions differ");
        }
        let stores: Vec<String> =
            phones.iter().map(|p| &p.store).chain([&relay_store]).map(|s| raw(&mut w, s)).collect();
        for text in &deleted {
            for (at, store) in stores.iter().enumerate() {
                assert!(!store.contains(text.as_str()), "seed {seed}: deleted {text:?} in raw store {at}");
            }
        }
        for p in &phones {
            let again = w.run(p.s.sync_with(&ToRelay(&relay), SESSIONS)).unwrap();
            assert_eq!((again.sent, again.received, again.rejected), (0, 0, 0), "seed {seed}");
        }
    }
    assert!(
        pops > 3 && clears > 0 && deletions > 0 && summaries > 1 && cut > 1,
        "pops {pops}, clears {clears}, deleteSessions {deletions}, summaries {summaries}, cut syncs {cut}"
    );
}

/// Every item `relay` holds, as records.
fn records(w: &mut World, relay: &Relay) -> Vec<Record> {
    let ids = w.run(relay.ids()).unwrap();
    w.run(relay.read(&ids)).unwrap()
}

/// A request carrying `records` alone, as a peer would send them.
fn carrying(records: Vec<Record>) -> Vec<u8> {
    let mut frame = Frame::new(Kind::Request);
    (frame.families, frame.ask_id) = (ALL_FAMILIES, true);
    frame.records = records;
    frame.encode()
}

#[test]
fn duplicated_and_reordered_deliveries_land_once_in_order() {
    let mut w = World::new();
    let (a, b) = (phone(&mut w), phone(&mut w));
    let relay = Relay::new(Rc::new(MemoryStore::new()));
    for text in ["one", "two", "three", "four"] {
        w.run(a.s.add(said(text))).unwrap();
    }
    w.run(a.s.pop_message()).unwrap();
    w.run(a.s.sync_with(&ToRelay(&relay), SESSIONS)).unwrap();
    let mut all = records(&mut w, &relay);
    all.reverse();
    let twice: Vec<Record> = all.iter().chain(all.iter()).cloned().collect();
    w.run(b.s.answer_sync(&carrying(twice.clone()), SESSIONS)).unwrap();
    w.run(b.s.answer_sync(&carrying(twice), SESSIONS)).unwrap();
    assert_eq!(sessions_of(&mut w, &b.store), sessions_of(&mut w, &a.store));
    assert_eq!(contents(&w.run(b.s.session_history()).unwrap()), ["one", "two", "three"]);
}

#[test]
fn an_altered_or_replayed_session_item_is_reported_damaged_and_never_applied() {
    let mut w = World::new();
    let (a, b) = (phone(&mut w), phone(&mut w));
    let relay = Relay::new(Rc::new(MemoryStore::new()));
    w.run(a.s.add(said("Likes green tea"))).unwrap();
    w.run(a.s.add(said("Walks at noon"))).unwrap();
    w.run(a.s.sync_with(&ToRelay(&relay), SESSIONS)).unwrap();
    let all = records(&mut w, &relay);
    let tea = all.iter().find(|r| String::from_utf8_lossy(&r.bytes).contains("green")).unwrap();
    let noon = all.iter().find(|r| String::from_utf8_lossy(&r.bytes).contains("noon")).unwrap();
    let altered = String::from_utf8(tea.bytes.clone()).unwrap().replace("green", "black");
    let bad = vec![
        Record { id: tea.id, bytes: altered.into_bytes() },
        // Replayed under another item's id (its position and hash).
        Record { id: noon.id, bytes: tea.bytes.clone() },
    ];
    w.run(b.s.answer_sync(&carrying(bad), SESSIONS)).unwrap();
    assert!(sessions_of(&mut w, &b.store).is_empty());
    assert!(w.run(b.s.session_history()).unwrap().is_empty());
    let damaged = w.run(b.s.stats()).unwrap().damaged;
    assert!(damaged.len() == 2 && damaged.iter().all(|d| d.key.starts_with("sync/")), "{damaged:?}");
    // A message deleted, then its record sent again: it stays deleted.
    w.run(a.s.pop_message()).unwrap();
    w.run(a.s.answer_sync(&carrying(vec![noon.clone()]), SESSIONS)).unwrap();
    let left = contents(&w.run(a.s.session_history()).unwrap());
    assert_eq!(left, ["Likes green tea"]);
}

#[test]
fn a_device_syncing_without_sessions_is_sent_no_session_item() {
    let mut w = World::new();
    let (a, b) = (phone(&mut w), phone(&mut w));
    let relay = Relay::new(Rc::new(MemoryStore::new()));
    w.run(a.s.add(said("Booked the dentist"))).unwrap();
    w.run(a.s.add(said("For Tuesday"))).unwrap();
    w.run(a.s.remember(fact("Sees a dentist on Tuesdays"))).unwrap();
    w.run(a.s.sync_with(&ToRelay(&relay), SESSIONS)).unwrap();
    let counting = Counting(&relay, Cell::new(0));
    let report = w.run(b.s.sync(&counting)).unwrap();
    assert_eq!((report.received, counting.1.get()), (1, 0));
    assert!(sessions_of(&mut w, &b.store).is_empty());
    // Asked for, they come.
    let report = w.run(b.s.sync_with(&counting, SESSIONS)).unwrap();
    assert_eq!((report.received, counting.1.get()), (2, 2));
    assert_eq!(contents(&w.run(b.s.session_history()).unwrap()), ["Booked the dentist", "For Tuesday"]);
}

#[test]
fn stats_count_conflicts_settled_and_the_lag_of_news() {
    let mut w = World::new();
    let (a, b) = (phone(&mut w), phone(&mut w));
    let relay = Relay::new(Rc::new(MemoryStore::new()));
    let hello = w.run(a.s.add(said("hello"))).unwrap();
    w.run(a.s.sync_with(&ToRelay(&relay), SESSIONS)).unwrap();
    // Each step of the world takes a second: the message is a few old.
    w.run(async {});
    w.run(b.s.sync_with(&ToRelay(&relay), SESSIONS)).unwrap();
    let stats = w.run(b.s.stats()).unwrap().sync.unwrap();
    let synced_at = stats.last_at;
    assert_eq!(stats.conflicts, 0);
    assert!(stats.lag_ms >= 2_000 && stats.lag_ms as i64 <= synced_at - hello.timestamp, "{stats:?}");
    // Deleted on a, still held on b: the erasure meets its original there.
    w.run(a.s.pop_message()).unwrap();
    w.run(a.s.sync_with(&ToRelay(&relay), SESSIONS)).unwrap();
    w.run(b.s.sync_with(&ToRelay(&relay), SESSIONS)).unwrap();
    let stats = w.run(b.s.stats()).unwrap().sync.unwrap();
    assert_eq!((stats.conflicts, stats.lag_ms), (1, 0), "{stats:?}");
    assert!(w.run(b.s.session_history()).unwrap().is_empty());
}

#[test]
fn forgetting_a_memory_deletes_its_source_message_on_every_device() {
    let mut w = World::new();
    let (a, b) = (phone(&mut w), phone(&mut w));
    let relay_store = Rc::new(MemoryStore::new());
    let relay = Relay::new(relay_store.clone());
    let pin = w.run(a.s.add(said("My bank PIN is 4921"))).unwrap();
    w.run(a.s.add(said("Thanks"))).unwrap();
    let mut secret = fact("Bank PIN 4921");
    secret.sources = vec![pin.id.clone()];
    let id = secret.id.clone();
    w.run(a.s.remember(secret)).unwrap();
    for m in [&a.s, &b.s] {
        w.run(m.sync_with(&ToRelay(&relay), SESSIONS)).unwrap();
    }
    assert_eq!(contents(&w.run(b.s.session_history()).unwrap()), ["My bank PIN is 4921", "Thanks"]);
    assert!(w.run(a.s.forget(&id)).unwrap());
    for m in [&a.s, &b.s, &a.s] {
        w.run(m.sync_with(&ToRelay(&relay), SESSIONS)).unwrap();
    }
    for p in [&a, &b] {
        assert_eq!(contents(&w.run(p.s.session_history()).unwrap()), ["Thanks"]);
    }
    for store in [&a.store, &b.store, &relay_store] {
        // The texts, not "4921" alone: digits turn up in ids and stamps.
        let raw = raw(&mut w, store);
        assert!(
            !raw.contains("PIN is 4921") && !raw.contains("PIN 4921"),
            "a forgotten text is in a raw store"
        );
    }
}

/// A transport to a relay whose connection drops at the first request
/// that replaces (a resend cut off before it began).
struct DropsResend<'a>(&'a Relay, Cell<bool>);

impl Transport for DropsResend<'_> {
    fn exchange(&self, request: Vec<u8>) -> LocalBoxFuture<'_, Result<Vec<u8>>> {
        Box::pin(async move {
            if Frame::decode(&request)?.replace && !self.1.replace(true) {
                return Err(Error::storage("the connection dropped"));
            }
            self.0.exchange(&request).await
        })
    }
}

/// A store with one memory and one message synced plain to a relay: where
/// the two key-taking tests begin.
struct Plain {
    store: Rc<MemoryStore>,
    locks: Rc<LocalLocks>,
    plain: Memory,
    relay_store: Rc<MemoryStore>,
    relay: Relay,
}

fn synced_plain(w: &mut World) -> Plain {
    let store = Rc::new(MemoryStore::new());
    let locks = Rc::new(LocalLocks::default());
    let plain = w.open(store.clone(), locks.clone(), "s", None);
    let relay_store = Rc::new(MemoryStore::new());
    let relay = Relay::new(relay_store.clone());
    w.run(plain.remember(fact("Allergic to peanuts zqpeanutx"))).unwrap();
    w.run(plain.add(said("My cello zqcellox needs new strings"))).unwrap();
    w.run(plain.sync_with(&ToRelay(&relay), SESSIONS)).unwrap();
    Plain { store, locks, plain, relay_store, relay }
}

#[test]
fn what_went_out_plain_goes_out_again_sealed_once_a_key_is_taken() {
    let mut w = World::new();
    let Plain { store, locks, plain, relay_store, relay } = synced_plain(&mut w);
    let held = raw(&mut w, &relay_store);
    assert!(held.contains("zqpeanutx") && held.contains("zqcellox"), "synced plain first");
    // The same store under a key (its records migrated), and a message
    // more; its first sync is cut off before it resends: nothing changes
    // at the relay, and the next sync resends.
    w.run(plain.close());
    let sealed = w.open_as(store.clone(), locks, "s", Some(&[5]), true);
    w.run(sealed.add(said("The tuner zqtunerx is in the drawer"))).unwrap();
    let cut = DropsResend(&relay, Cell::new(false));
    assert!(w.run(sealed.sync(&cut)).is_err());
    assert!(raw(&mut w, &relay_store).contains("zqpeanutx"), "a cut resend left the plain copy");
    // A sync of long-term memory alone resends it alone: no session item
    // leaves, resent or new.
    let report = w.run(sealed.sync(&ToRelay(&relay))).unwrap();
    assert!(report.resent >= 1, "{report:?}");
    let held = raw(&mut w, &relay_store);
    assert!(!held.contains("zqpeanutx") && held.contains("zqcellox") && !held.contains("zqtunerx"));
    let report = w.run(sealed.sync_with(&ToRelay(&relay), SESSIONS)).unwrap();
    assert!(report.resent >= 2, "the two messages: {report:?}");
    let held = raw(&mut w, &relay_store);
    for text in ["zqpeanutx", "zqcellox", "zqtunerx", "content", "Allergic"] {
        assert!(!held.contains(text), "the relay still holds {text:?}");
    }
    // Once: the next sync resends nothing.
    assert_eq!(w.run(sealed.sync_with(&ToRelay(&relay), SESSIONS)).unwrap().resent, 0);
    // A device with the key takes everything and rejects nothing; one
    // without takes nothing.
    let b = w.device(Some(&[5]));
    let got = w.run(b.memory.sync_with(&ToRelay(&relay), SESSIONS)).unwrap();
    assert_eq!(got.rejected, 0, "{got:?}");
    assert_eq!(view(&mut w, &b.memory), view(&mut w, &sealed));
    assert_eq!(sessions_of(&mut w, &b.store).len(), sessions_of(&mut w, &store).len());
    let c = w.device(None);
    assert_eq!(w.run(c.memory.sync_with(&ToRelay(&relay), SESSIONS)).unwrap().received, 0);
}

/// A plain instance left open beside one that took a key on the same store
/// (a tab not yet reloaded): its syncs never put back plain what the keyed
/// one resent sealed, whatever order the two sync in.
#[test]
fn a_plain_instance_beside_a_keyed_one_never_resends_plain() {
    let mut w = World::new();
    let Plain { store, locks, plain, relay_store, relay } = synced_plain(&mut w);
    let sealed = w.open_as(store.clone(), locks, "s", Some(&[5]), true);
    let report = w.run(sealed.sync_with(&ToRelay(&relay), SESSIONS)).unwrap();
    assert!(report.resent >= 2, "{report:?}");
    for round in 0..3 {
        // The plain one syncs: it sends nothing, and what it cannot open
        // (sealed) it reports as damaged, never takes; then the keyed one
        // again. The relay never holds the old texts.
        let r = w.run(plain.sync_with(&ToRelay(&relay), SESSIONS)).unwrap();
        assert_eq!((r.sent, r.resent, r.received), (0, 0, 0), "round {round}: {r:?}");
        let held = raw(&mut w, &relay_store);
        assert!(!held.contains("zqpeanutx") && !held.contains("zqcellox"), "round {round}: plain again");
        let again = w.run(sealed.sync_with(&ToRelay(&relay), SESSIONS)).unwrap();
        assert_eq!(again.resent, 0, "round {round}: resent again {again:?}");
    }
    // A device with the key still takes everything.
    let b = w.device(Some(&[5]));
    let got = w.run(b.memory.sync_with(&ToRelay(&relay), SESSIONS)).unwrap();
    assert_eq!(got.rejected, 0, "{got:?}");
    assert_eq!(view(&mut w, &b.memory), view(&mut w, &sealed));
}

#[test]
fn past_a_relay_horizon_a_deleted_session_stays_deleted_on_a_phone_that_was_away() {
    let mut w = World::new();
    let (p1, p2) = (phone(&mut w), phone(&mut w));
    let relay_store = Rc::new(MemoryStore::new());
    let relay = Relay::collecting(relay_store.clone(), w.clock.clone(), Some(60_000));
    w.run(p1.s.add(said("Booked the zq1x flight"))).unwrap();
    w.run(p1.t.add(said("Kept zq2x in chat t"))).unwrap();
    for p in [&p1, &p2] {
        w.run(p.s.sync_with(&ToRelay(&relay), SESSIONS)).unwrap();
    }
    assert_eq!(sessions_of(&mut w, &p2.store).len(), 2);
    // The second phone's last sync before it goes away leaves sessions out:
    // what it held alike of them stays known.
    w.run(p2.s.sync(&ToRelay(&relay))).unwrap();
    // The second phone goes away; the first deletes chat s, and long after
    // the horizon the relay and the first phone have dropped the erasure.
    w.run(p1.t.delete_session("s")).unwrap();
    w.run(p1.s.sync_with(&ToRelay(&relay), SESSIONS)).unwrap();
    w.clock.advance(120_000);
    assert_eq!(w.run(p1.s.sync_with(&ToRelay(&relay), SESSIONS)).unwrap().dropped, 1);
    assert!(w.run(relay_store.list(crate::store::layout::SYNC_BORN_PREFIX)).unwrap().is_empty());
    assert_eq!(sessions_of(&mut w, &p1.store).len(), 1, "the erasure's marker went too");
    // Back: the away phone drops the deleted message rather than send it.
    let report = w.run(p2.t.sync_with(&ToRelay(&relay), SESSIONS)).unwrap();
    assert_eq!((report.sent, report.dropped), (0, 1));
    assert!(w.run(p2.s.session_history()).unwrap().is_empty(), "the open session let go of it");
    assert_eq!(sessions_of(&mut w, &p2.store), sessions_of(&mut w, &p1.store));
    for store in [&p1.store, &p2.store, &relay_store] {
        let held = raw(&mut w, store);
        assert!(!held.contains("zq1x") && held.contains("zq2x"));
    }
}

#[test]
fn dropping_an_erasure_takes_the_record_a_cut_deletion_left_beside_it() {
    let mut w = World::new();
    let (p1, p2) = (phone(&mut w), phone(&mut w));
    let relay_store = Rc::new(MemoryStore::new());
    let relay = Relay::collecting(relay_store.clone(), w.clock.clone(), Some(60_000));
    w.run(p1.s.add(said("Booked the zq1x flight"))).unwrap();
    for p in [&p1, &p2] {
        w.run(p.s.sync_with(&ToRelay(&relay), SESSIONS)).unwrap();
    }
    let record = w.run(p2.store.list("session/s/msg/")).unwrap();
    w.run(p1.s.pop_message()).unwrap();
    for p in [&p1, &p2] {
        w.run(p.s.sync_with(&ToRelay(&relay), SESSIONS)).unwrap();
    }
    // On the second phone, a deletion cut off after its marker: the
    // message's record is back beside the marker.
    w.run(p2.store.put_many(record)).unwrap();
    w.clock.advance(120_000);
    for p in [&p1, &p2, &p1] {
        w.run(p.s.sync_with(&ToRelay(&relay), SESSIONS)).unwrap();
    }
    for store in [&p1.store, &p2.store, &relay_store] {
        assert!(!raw(&mut w, store).contains("zq1x"), "the deleted message came back");
    }
    assert!(sessions_of(&mut w, &p2.store).is_empty());
}
