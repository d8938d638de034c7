//! Tombstones past a relay's horizon: the relay drops them, each device
//! drops its own at its next sync, a device back from further away drops
//! what they deleted instead of sending it back, and no view changes.

use std::cell::Cell;
use std::rc::Rc;

use super::tests::{fact, raw, run, view, Device, Rng, ToRelay, World};
use super::*;
use crate::entry::MemoryEntry;
use crate::store::layout::SYNC_BORN_PREFIX;
use crate::store::{MemoryStore, Store};

const HORIZON: u64 = 60_000;

fn collecting(w: &World, store: &Rc<MemoryStore>) -> Relay {
    Relay::collecting(store.clone(), w.clock.clone(), Some(HORIZON))
}

/// The relay's items flagged as tombstones, and its arrival notes.
fn tombstones(w: &mut World, relay: &Relay, store: &MemoryStore) -> (usize, usize) {
    let ids = w.run(relay.ids()).unwrap();
    let born = w.run(store.list(SYNC_BORN_PREFIX)).unwrap();
    (ids.iter().filter(|id| id[24] & TOMBSTONE != 0).count(), born.len())
}

/// The forgets and erased writes a device's store holds.
fn deletions_held(w: &mut World, d: &Device) -> usize {
    let text = raw(w, &d.store);
    text.matches("\"do\":\"forget\"").count() + text.matches("\"do\":\"erased\"").count()
}

fn in_force(entries: &[MemoryEntry]) -> Vec<String> {
    let mut v: Vec<String> = entries.iter().filter(|e| e.is_valid()).map(|e| e.content.clone()).collect();
    v.sort();
    v
}

/// Two devices and a relay dropping tombstones after [`HORIZON`]; the
/// first remembered a dog (its id) and a job.
struct Two {
    a: Device,
    b: Device,
    relay_store: Rc<MemoryStore>,
    relay: Relay,
    dog_id: String,
}

fn two_devices(w: &mut World) -> Two {
    let (a, b) = (w.device(None), w.device(None));
    let relay_store = Rc::new(MemoryStore::new());
    let relay = collecting(w, &relay_store);
    let dog = fact("Has a dog named Rex");
    let dog_id = dog.id.clone();
    w.run(a.memory.remember(dog)).unwrap();
    w.run(a.memory.remember(fact("Works as a nurse"))).unwrap();
    Two { a, b, relay_store, relay, dog_id }
}

#[test]
fn past_its_horizon_a_relay_drops_tombstones_each_device_drops_its_own_and_no_view_changes() {
    let mut w = World::new();
    let Two { a, b, relay_store, relay, dog_id } = two_devices(&mut w);
    let berlin = fact("Lives in Berlin");
    let berlin_id = berlin.id.clone();
    w.run(a.memory.remember(berlin)).unwrap();
    let lisbon = w.run(a.memory.supersede(fact("Lives in Lisbon"), &[berlin_id])).unwrap();
    for d in [&a, &b] {
        w.run(d.memory.sync(&ToRelay(&relay))).unwrap();
    }
    // Two forgets: a fact, and a lineage (its newer version erased keeps
    // its link to the older, so it is history, not a tombstone).
    assert!(w.run(a.memory.forget(&dog_id)).unwrap());
    assert!(w.run(a.memory.forget(&lisbon.id)).unwrap());
    for d in [&a, &b] {
        w.run(d.memory.sync(&ToRelay(&relay))).unwrap();
    }
    let before = view(&mut w, &a.memory);
    assert_eq!(in_force(&before.0), ["Works as a nurse"]);
    assert_eq!(view(&mut w, &b.memory), before);
    assert_eq!(tombstones(&mut w, &relay, &relay_store), (4, 4), "two forgets, two erased writes");
    assert_eq!(deletions_held(&mut w, &b), 5, "and the erased version that replaced another");

    // Not yet past the horizon: nothing goes.
    w.clock.advance(HORIZON as i64 / 2);
    let report = w.run(a.memory.sync(&ToRelay(&relay))).unwrap();
    assert_eq!((report.dropped, tombstones(&mut w, &relay, &relay_store).0), (0, 4));
    w.clock.advance(HORIZON as i64);
    for d in [&a, &b] {
        let report = w.run(d.memory.sync(&ToRelay(&relay))).unwrap();
        assert_eq!((report.sent, report.received, report.dropped), (0, 0, 4));
        assert_eq!(view(&mut w, &d.memory), before, "dropping tombstones changed a view");
        assert_eq!(deletions_held(&mut w, d), 1, "only the erased version with its link stays");
    }
    assert_eq!(tombstones(&mut w, &relay, &relay_store), (0, 0));
    // Nothing moves any more, and a device that joins late reads the same.
    for d in [&a, &b] {
        let again = w.run(d.memory.sync(&ToRelay(&relay))).unwrap();
        assert_eq!((again.sent, again.received, again.dropped), (0, 0, 0));
    }
    let c = w.device(None);
    w.run(c.memory.sync(&ToRelay(&relay))).unwrap();
    assert_eq!(view(&mut w, &c.memory), before);
    for store in [&a.store, &b.store, &c.store, &relay_store] {
        let held = raw(&mut w, store);
        assert!(!held.contains("Rex") && !held.contains("Berlin") && !held.contains("Lisbon"));
    }
}

#[test]
fn a_device_away_past_the_horizon_drops_what_was_forgotten_and_sends_what_it_wrote_offline() {
    let mut w = World::new();
    let Two { a, b, relay_store, relay, dog_id } = two_devices(&mut w);
    for d in [&a, &b] {
        w.run(d.memory.sync(&ToRelay(&relay))).unwrap();
    }
    // B goes away. A forgets, and long after the horizon the relay and A
    // have dropped the forget.
    assert!(w.run(a.memory.forget(&dog_id)).unwrap());
    w.run(a.memory.sync(&ToRelay(&relay))).unwrap();
    w.clock.advance(2 * HORIZON as i64);
    assert_eq!(w.run(a.memory.sync(&ToRelay(&relay))).unwrap().dropped, 2);
    assert_eq!(tombstones(&mut w, &relay, &relay_store), (0, 0));
    // B, offline all along, wrote meanwhile, then comes back.
    w.run(b.memory.remember(fact("Runs on Sundays"))).unwrap();
    let report = w.run(b.memory.sync(&ToRelay(&relay))).unwrap();
    assert_eq!((report.sent, report.dropped), (1, 1), "sends what it wrote, drops the forgotten write");
    assert_eq!(in_force(&view(&mut w, &b.memory).0), ["Runs on Sundays", "Works as a nurse"]);
    w.run(a.memory.sync(&ToRelay(&relay))).unwrap();
    assert_eq!(view(&mut w, &a.memory), view(&mut w, &b.memory));
    for store in [&a.store, &b.store, &relay_store] {
        assert!(!raw(&mut w, store).contains("Rex"), "a forgotten memory came back");
    }
}

#[test]
fn devices_under_random_operations_and_a_relay_dropping_tombstones_converge_and_nothing_comes_back() {
    let (mut forgets, mut dropped, mut cut, mut aways) = (0, 0, 0, 0);
    for seed in 1..=6u64 {
        let mut rng = Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1);
        let mut w = World::new();
        let n = 2 + rng.below(3) as usize;
        let devices: Vec<Device> = (0..n).map(|_| w.device(None)).collect();
        let relay_store = Rc::new(MemoryStore::new());
        // Each step moves the clock a second: tombstones go after 20.
        let relay = Relay::collecting(relay_store.clone(), w.clock.clone(), Some(20_000));
        let (mut said, mut forgotten, mut told) = (0, Vec::new(), Vec::new());
        // Devices away (offline, writing on) for stretches of steps.
        let mut away = vec![false; n];
        for _ in 0..80 {
            let at = rng.below(n as u64) as usize;
            let d = &devices[at];
            if rng.below(6) == 0 {
                away[at] = !away[at];
                aways += 1;
            }
            let held: Vec<MemoryEntry> =
                view(&mut w, &d.memory).0.into_iter().filter(|e| e.is_valid()).collect();
            match rng.below(6) {
                0 | 1 => {
                    said += 1;
                    told.push(format!("Fact {said} zq{said}x of {seed}"));
                    w.run(d.memory.remember(fact(&told[told.len() - 1]))).unwrap();
                }
                2 if !held.is_empty() => {
                    said += 1;
                    let old = &held[rng.below(held.len() as u64) as usize];
                    told.push(format!("Revised {said} zq{said}x"));
                    let new = fact(&told[told.len() - 1]);
                    w.run(d.memory.supersede(new, std::slice::from_ref(&old.id))).unwrap();
                }
                3 if !held.is_empty() => {
                    let e = &held[rng.below(held.len() as u64) as usize];
                    let history = w.run(d.memory.history(&e.id)).unwrap();
                    forgotten.extend(history.into_iter().map(|h| h.content));
                    w.run(d.memory.forget(&e.id)).unwrap();
                    forgets += 1;
                }
                // Away a while: the clock runs on.
                4 => w.clock.advance(rng.below(30_000) as i64),
                _ if away[at] => {}
                _ => {
                    let left = if rng.below(3) == 0 { rng.below(3) as u32 } else { u32::MAX };
                    let to = super::tests::Direct { peer: &relay, left: Cell::new(left) };
                    match w.run(d.memory.sync(&to)) {
                        Ok(report) => dropped += report.dropped,
                        Err(_) => cut += 1,
                    }
                }
            }
        }
        for _ in 0..2 {
            for d in &devices {
                dropped += w.run(d.memory.sync(&ToRelay(&relay))).unwrap().dropped;
            }
        }
        let first = view(&mut w, &devices[0].memory);
        for d in &devices[1..] {
            assert_eq!(view(&mut w, &d.memory), first, "seed {seed}: views differ");
        }
        let late = w.device(None);
        w.run(late.memory.sync(&ToRelay(&relay))).unwrap();
        assert_eq!(view(&mut w, &late.memory), first, "seed {seed}: a late device reads otherwise");
        let stores: Vec<String> = devices
            .iter()
            .chain([&late])
            .map(|d| &d.store)
            .chain([&relay_store])
            .map(|s| raw(&mut w, s))
            .collect();
        // Nothing told and not forgotten is lost (in force, or in history).
        for text in told.iter().filter(|t| !forgotten.contains(t)) {
            assert!(first.0.iter().any(|e| e.content == *text), "seed {seed}: {text:?} was lost");
        }
        for text in &forgotten {
            assert!(!first.0.iter().any(|e| e.content == *text), "seed {seed}: {text:?} came back");
            assert!(
                !stores.iter().any(|s| s.contains(text.as_str())),
                "seed {seed}: {text:?} in a raw store"
            );
        }
    }
    assert!(
        forgets > 5 && dropped > 5 && cut > 2 && aways > 10,
        "forgets {forgets}, dropped {dropped}, cut {cut}, aways {aways}"
    );
}

/// A transport to a relay that has the device write a memory while its
/// sync runs (another tab, say), at the first exchange.
struct WritingMeanwhile<'a> {
    relay: &'a Relay,
    memory: &'a crate::memory::Memory,
    written: Cell<bool>,
}

impl Transport for WritingMeanwhile<'_> {
    fn exchange(&self, request: Vec<u8>) -> crate::ports::LocalBoxFuture<'_, crate::error::Result<Vec<u8>>> {
        Box::pin(async move {
            if !self.written.replace(true) {
                self.memory.remember(fact("Plays the cello")).await?;
            }
            self.relay.exchange(&request).await
        })
    }
}

#[test]
fn what_is_written_while_a_sync_runs_is_sent_at_the_next_not_taken_as_held_alike() {
    let mut w = World::new();
    let a = w.device(None);
    let relay_store = Rc::new(MemoryStore::new());
    let relay = collecting(&w, &relay_store);
    w.run(a.memory.remember(fact("Works as a nurse"))).unwrap();
    let to = WritingMeanwhile { relay: &relay, memory: &a.memory, written: Cell::new(false) };
    assert_eq!(w.run(a.memory.sync(&to)).unwrap().sent, 1);
    let report = w.run(a.memory.sync(&ToRelay(&relay))).unwrap();
    assert_eq!((report.sent, report.dropped), (1, 0));
    assert_eq!(in_force(&view(&mut w, &a.memory).0), ["Plays the cello", "Works as a nurse"]);
    assert!(raw(&mut w, &relay_store).contains("cello"));
}

/// A transport from one relay to another.
struct RelayTo<'a>(&'a Relay);

impl Transport for RelayTo<'_> {
    fn exchange(&self, request: Vec<u8>) -> crate::ports::LocalBoxFuture<'_, crate::error::Result<Vec<u8>>> {
        Box::pin(async move { self.0.exchange(&request).await })
    }
}

#[test]
fn two_relays_of_different_horizons_syncing_drop_the_same_tombstones_and_bring_nothing_back() {
    let mut w = World::new();
    let (d1, d2) = (w.device(None), w.device(None));
    let (s1, s2) = (Rc::new(MemoryStore::new()), Rc::new(MemoryStore::new()));
    let r1 = collecting(&w, &s1);
    let r2 = Relay::collecting(s2.clone(), w.clock.clone(), Some(2 * HORIZON));
    let dog = fact("Has a dog named Rex");
    let dog_id = dog.id.clone();
    w.run(d1.memory.remember(dog)).unwrap();
    w.run(d2.memory.remember(fact("Works as a nurse"))).unwrap();
    let round = |w: &mut World| {
        w.run(d1.memory.sync(&ToRelay(&r1))).unwrap();
        w.run(d2.memory.sync(&ToRelay(&r2))).unwrap();
        let clock = w.clock.clone();
        w.run(r1.sync(&RelayTo(&r2), clock.as_ref())).unwrap();
        w.run(d1.memory.sync(&ToRelay(&r1))).unwrap();
        w.run(d2.memory.sync(&ToRelay(&r2))).unwrap();
    };
    round(&mut w);
    assert!(w.run(d2.memory.forget(&dog_id)).unwrap());
    round(&mut w);
    let before = view(&mut w, &d1.memory);
    assert_eq!(in_force(&before.0), ["Works as a nurse"]);
    // Past the first relay's horizon, then the second's, and on.
    for _ in 0..4 {
        w.clock.advance(HORIZON as i64 + 1);
        round(&mut w);
        assert_eq!(view(&mut w, &d1.memory), before);
        assert_eq!(view(&mut w, &d2.memory), before);
    }
    for (relay, store) in [(&r1, &s1), (&r2, &s2)] {
        assert_eq!(tombstones(&mut w, relay, store), (0, 0));
        assert!(!raw(&mut w, store).contains("Rex"));
    }
    assert_eq!((deletions_held(&mut w, &d1), deletions_held(&mut w, &d2)), (0, 0));
}

#[test]
fn what_is_held_alike_is_kept_in_parts_and_read_back_as_written() {
    let store = MemoryStore::new();
    let ids: Vec<ItemId> = (0..9_000u64).map(|n| item_id(n << 16, 7, n * 31, KIND_LONG_TERM)).collect();
    let none = run(held::Alike::read(&store, 42, 2)).unwrap();
    run(none.write(&store, &ids, &ids[..2])).unwrap();
    let parts = run(store.list(&crate::store::layout::held_prefix(42, 2))).unwrap();
    assert!(parts.len() > 1 && parts.iter().all(|(_, v)| v.len() <= crate::store::layout::VALUE_BYTES));
    let read = run(held::Alike::read(&store, 42, 2)).unwrap();
    assert!(ids[2..].iter().all(|id| read.holds(id)) && !read.holds(&ids[0]) && !read.holds(&ids[1]));
    assert!(!run(held::Alike::read(&store, 43, 2)).unwrap().holds(&ids[5]), "another peer's is its own");
    assert!(!run(held::Alike::read(&store, 42, 6)).unwrap().holds(&ids[5]), "and other families' too");
    // Fewer: the parts left over are emptied.
    run(read.write(&store, &ids[..10], &[])).unwrap();
    let read = run(held::Alike::read(&store, 42, 2)).unwrap();
    assert!(ids[..10].iter().all(|id| read.holds(id)) && !read.holds(&ids[10]));
    let parts = run(store.list(&crate::store::layout::held_prefix(42, 2))).unwrap();
    assert_eq!(parts.iter().filter(|(_, v)| !v.is_empty()).count(), 1);
}

#[test]
fn a_second_instance_of_a_store_does_not_send_back_what_the_first_dropped() {
    let mut w = World::new();
    let a = w.device(None);
    let store = Rc::new(MemoryStore::new());
    let locks = Rc::new(crate::ports::lock::LocalLocks::default());
    let (b1, b2) = (w.open(store.clone(), locks.clone(), "s", None), w.open(store.clone(), locks, "t", None));
    let relay_store = Rc::new(MemoryStore::new());
    let relay = collecting(&w, &relay_store);
    let dog = fact("Has a dog named Rex");
    let dog_id = dog.id.clone();
    w.run(a.memory.remember(dog)).unwrap();
    w.run(a.memory.sync(&ToRelay(&relay))).unwrap();
    for m in [&b1, &b2] {
        w.run(m.sync(&ToRelay(&relay))).unwrap();
    }
    // Both tabs of B away; A forgets, the horizon passes.
    assert!(w.run(a.memory.forget(&dog_id)).unwrap());
    w.run(a.memory.sync(&ToRelay(&relay))).unwrap();
    w.clock.advance(2 * HORIZON as i64);
    w.run(a.memory.sync(&ToRelay(&relay))).unwrap();
    assert_eq!(w.run(b1.sync(&ToRelay(&relay))).unwrap().dropped, 1);
    // Once more: what was dropped leaves what the first tab records.
    w.run(b1.sync(&ToRelay(&relay))).unwrap();
    let second = w.run(b2.sync(&ToRelay(&relay))).unwrap();
    assert_eq!(second.sent, 0, "the second tab sent back what the first dropped");
    assert!(w.run(b2.memories()).unwrap().is_empty(), "the second tab still shows the forgotten memory");
    w.run(a.memory.sync(&ToRelay(&relay))).unwrap();
    assert!(w.run(a.memory.memories()).unwrap().is_empty());
    assert!(!raw(&mut w, &store).contains("Rex") && !raw(&mut w, &relay_store).contains("Rex"));
}
