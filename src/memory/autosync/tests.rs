//! The schedule driven natively: devices on stores of their own syncing to
//! one relay through a wire that counts, holds and fails on demand, on a
//! clock that moves only when the test moves it (no real sleep).

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use futures::channel::oneshot;
use futures::future::Shared;
use futures::task::LocalSpawnExt;
use futures::FutureExt;

use super::*;
use crate::llm::testing::{Reply, ScriptedLlm};
use crate::longterm::records::new_memory;
use crate::memory::tests::{options, World};
use crate::memory::{MemoryOptions, Ports};
use crate::ports::LocalBoxFuture;
use crate::store::{MemoryStore, Store};
use crate::sync::Relay;
use crate::working::session::NewMessage;

const INTERVAL: u32 = 1_000;

/// A transport to a relay: counts its exchanges, holds them while a test
/// wants, fails while `down`. `busy` is shared by the wires of one memory,
/// so an overlap of two syncs shows whichever wires they take.
struct Wire {
    relay: Rc<Relay>,
    calls: Cell<u32>,
    busy: Rc<Cell<u32>>,
    max_busy: Rc<Cell<u32>>,
    gate: RefCell<Option<Shared<oneshot::Receiver<()>>>>,
    down: Cell<bool>,
}

impl Wire {
    fn new(relay: &Rc<Relay>) -> Rc<Wire> {
        Self::counted(relay, Rc::default(), Rc::default())
    }

    fn counted(relay: &Rc<Relay>, busy: Rc<Cell<u32>>, max_busy: Rc<Cell<u32>>) -> Rc<Wire> {
        let (calls, gate, down) = (Cell::new(0), RefCell::default(), Cell::new(false));
        Rc::new(Wire { relay: relay.clone(), calls, busy, max_busy, gate, down })
    }

    /// Another wire to the same relay, counted in the same `busy`.
    fn beside(&self) -> Rc<Wire> {
        Self::counted(&self.relay, self.busy.clone(), self.max_busy.clone())
    }

    fn hold(&self) -> oneshot::Sender<()> {
        let (tx, rx) = oneshot::channel();
        *self.gate.borrow_mut() = Some(rx.shared());
        tx
    }
}

impl Transport for Wire {
    fn exchange(&self, request: Vec<u8>) -> LocalBoxFuture<'_, Result<Vec<u8>>> {
        Box::pin(async move {
            self.calls.set(self.calls.get() + 1);
            self.busy.set(self.busy.get() + 1);
            self.max_busy.set(self.max_busy.get().max(self.busy.get()));
            let gate = self.gate.borrow().clone();
            if let Some(gate) = gate {
                let _ = gate.await;
            }
            let out = match self.down.get() {
                true => Err(Error::new(ErrorCode::SyncTransport, "offline")),
                false => self.relay.exchange(&request).await,
            };
            self.busy.set(self.busy.get() - 1);
            out
        })
    }
}

fn relay() -> Rc<Relay> {
    Rc::new(Relay::new(Rc::new(MemoryStore::new())))
}

/// A device: a memory on a store of its own, syncing through `wire`.
fn device(w: &mut World, wire: &Rc<Wire>, ports: Ports) -> Memory {
    let store: Rc<dyn Store> = Rc::new(MemoryStore::new());
    let m = w.open_with(options("chat"), Ports { store, ..ports });
    m.autosync(wire.clone(), &AutoSyncOptions { interval_ms: Some(INTERVAL), ..Default::default() }).unwrap();
    m
}

/// A device whose first scheduled sync is held in its first exchange.
fn held_device(w: &mut World) -> (Rc<Wire>, oneshot::Sender<()>, Memory) {
    let wire = Wire::new(&relay());
    let release = wire.hold();
    let ports = w.ports(None);
    let m = device(w, &wire, ports);
    w.settle();
    (wire, release, m)
}

/// Spawns `m.close()`; the flag says when it ended.
fn closing(w: &World, m: &Memory) -> Rc<Cell<bool>> {
    let (m, done) = (m.clone(), Rc::new(Cell::new(false)));
    let flag = done.clone();
    let close = async move {
        m.close().await;
        flag.set(true);
    };
    w.pool.spawner().spawn_local(close).unwrap();
    done
}

fn syncs(w: &mut World, m: &Memory) -> u32 {
    w.run(m.stats()).unwrap().sync.map_or(0, |s| s.syncs)
}

fn user(text: &str) -> NewMessage {
    NewMessage { role: Some(crate::entry::Role::User), content: text.into(), ..NewMessage::default() }
}

#[test]
fn a_memory_syncs_right_after_open_then_every_interval_and_when_back_online() {
    let mut w = World::new();
    let wire = Wire::new(&relay());
    let ports = w.ports(None);
    let m = device(&mut w, &wire, ports);
    assert_eq!(wire.calls.get(), 0, "open returned before the first exchange");
    w.settle();
    assert_eq!(syncs(&mut w, &m), 1, "the first sync runs in the background right after open");
    w.clock.advance(i64::from(INTERVAL) - 1);
    w.settle();
    assert_eq!(syncs(&mut w, &m), 1, "not before the interval is over");
    w.clock.advance(1);
    w.settle();
    assert_eq!(syncs(&mut w, &m), 2, "once the interval is over");
    m.online();
    w.settle();
    assert_eq!(syncs(&mut w, &m), 3, "back online: a sync with no time passed");
    w.clock.advance(i64::from(INTERVAL));
    w.settle();
    assert_eq!(syncs(&mut w, &m), 4, "and the interval counts from that sync");
    assert_eq!(wire.max_busy.get(), 1);
}

#[test]
fn a_memory_remembered_on_one_device_reaches_another_by_their_schedules() {
    let mut w = World::new();
    let relay = relay();
    let (wire_a, wire_b) = (Wire::new(&relay), Wire::new(&relay));
    let (ports_a, ports_b) = (w.ports(None), w.ports(None));
    let a = device(&mut w, &wire_a, ports_a);
    let b = device(&mut w, &wire_b, ports_b);
    w.settle();
    w.run(a.remember(new_memory("Has a dog named Rex", crate::entry::Scope::User, 1_700_000_000_000)))
        .unwrap();
    assert!(w.run(b.memories()).unwrap().is_empty());
    // a sends at its next sync, b takes at its own; in one interval or
    // two, depending on which of the two runs first.
    let mut intervals = 0;
    while w.run(b.memories()).unwrap().is_empty() && intervals < 2 {
        w.clock.advance(i64::from(INTERVAL));
        w.settle();
        intervals += 1;
    }
    let seen: Vec<String> = w.run(b.memories()).unwrap().into_iter().map(|e| e.content).collect();
    assert_eq!(seen, ["Has a dog named Rex"], "after {intervals} intervals");
}

#[test]
fn scheduled_syncs_carry_the_sessions_messages_when_asked_and_only_then() {
    let history = |w: &mut World, m: &Memory| -> Vec<String> {
        w.run(m.session_history()).unwrap().into_iter().map(|e| e.content).collect()
    };
    for sessions in [true, false] {
        let mut w = World::new();
        let relay = relay();
        let opts = AutoSyncOptions { interval_ms: Some(INTERVAL), sessions };
        let [a, b] = [0, 1].map(|_| {
            let store: Rc<dyn Store> = Rc::new(MemoryStore::new());
            let ports = w.ports(None);
            let m = w.open_with(options("chat"), Ports { store, ..ports });
            m.autosync(Wire::new(&relay), &opts).unwrap();
            m
        });
        w.settle();
        w.run(a.add(user("I moved to Porto last week"))).unwrap();
        for _ in 0..2 {
            w.clock.advance(i64::from(INTERVAL));
            w.settle();
        }
        let expected: &[&str] = if sessions { &["I moved to Porto last week"] } else { &[] };
        assert_eq!(history(&mut w, &b), expected, "sessions: {sessions}");
    }
}

#[test]
fn a_called_sync_waits_for_the_scheduled_one_and_never_overlaps_it() {
    let mut w = World::new();
    let (wire, release, m) = held_device(&mut w);
    assert_eq!(wire.calls.get(), 1, "the scheduled sync is in its first exchange");
    let called = wire.beside();
    let (m2, called2) = (m.clone(), called.clone());
    let handle =
        w.pool.spawner().spawn_local_with_handle(async move { m2.sync(called2.as_ref()).await }).unwrap();
    w.settle();
    assert_eq!(called.calls.get(), 0, "the called sync waits for its turn");
    release.send(()).unwrap();
    let report = w.run(handle);
    assert!(report.is_ok(), "{report:?}");
    assert!(called.calls.get() >= 1, "then it ran, through its own transport");
    assert_eq!(wire.max_busy.get(), 1, "never two exchanges at once");
    assert_eq!(syncs(&mut w, &m), 2);
}

#[test]
fn close_stops_the_schedule_waits_for_the_running_sync_and_then_calls_are_closed() {
    let mut w = World::new();
    let (wire, release, m) = held_device(&mut w);
    let closed_at = closing(&w, &m);
    w.settle();
    assert!(!closed_at.get(), "close waits for the sync in flight");
    assert!(m.add(user("too late")).now_or_never().unwrap().is_err_and(|e| e.code == ErrorCode::Closed));
    release.send(()).unwrap();
    w.settle();
    assert!(closed_at.get(), "and ends with it");
    let calls = wire.calls.get();
    w.clock.advance(10 * i64::from(INTERVAL));
    m.online();
    w.settle();
    assert_eq!(wire.calls.get(), calls, "no exchange after close: not by timer, not online");
    let code = |r: Result<()>| r.map_err(|e| e.code);
    assert_eq!(
        code(w.run(m.remember(new_memory("x", crate::entry::Scope::User, 0))).map(drop)),
        Err(ErrorCode::Closed)
    );
    assert_eq!(code(w.run(m.sync(wire.as_ref())).map(drop)), Err(ErrorCode::Closed));
    assert_eq!(code(w.run(m.stats()).map(drop)), Err(ErrorCode::Closed));
    assert_eq!(code(w.run(m.end_session()).map(drop)), Err(ErrorCode::Closed));
    assert_eq!(code(m.with_session(|_| ())), Err(ErrorCode::Closed));
    assert_eq!(code(m.autosync(wire.clone(), &AutoSyncOptions::default())), Err(ErrorCode::Closed));
    w.run(m.close());
    w.run(m.idle());
}

#[test]
fn a_failed_scheduled_sync_is_in_the_stats_and_the_next_waits_longer_until_back_online() {
    let mut w = World::new();
    let wire = Wire::new(&relay());
    wire.down.set(true);
    let ports = w.ports(None);
    let m = device(&mut w, &wire, ports);
    w.settle();
    let stats = w.run(m.stats()).unwrap().sync.unwrap();
    assert!(stats.last_error.as_deref().is_some_and(|e| e.contains("offline")), "{stats:?}");
    assert_eq!(wire.calls.get(), 1);
    w.clock.advance(i64::from(INTERVAL));
    w.settle();
    assert_eq!(wire.calls.get(), 1, "after a failure, two intervals");
    w.clock.advance(i64::from(INTERVAL));
    w.settle();
    assert_eq!(wire.calls.get(), 2);
    w.clock.advance(3 * i64::from(INTERVAL));
    w.settle();
    assert_eq!(wire.calls.get(), 2, "after two, four");
    wire.down.set(false);
    m.online();
    w.settle();
    assert_eq!(wire.calls.get(), 3, "back online: at once");
    assert_eq!(w.run(m.stats()).unwrap().sync.unwrap().last_error, None);
    w.clock.advance(i64::from(INTERVAL));
    w.settle();
    assert!(wire.calls.get() > 3, "and the interval is back to one");
}

#[test]
fn the_backoff_stops_growing_at_its_cap() {
    let s = Schedule {
        transport: Wire::new(&relay()),
        interval_ms: INTERVAL,
        sync: SyncOptions::default(),
        nudged: Cell::new(false),
        waker: RefCell::default(),
        stopped: Cell::new(false),
        stop_waiters: RefCell::default(),
    };
    let waits: Vec<u32> = [0, 1, 2, 3, 4, 40].into_iter().map(|f| s.wait_ms(f)).collect();
    assert_eq!(waits, [1_000, 2_000, 4_000, 8_000, 8_000, 8_000]);
}

#[test]
fn close_waits_for_background_work_already_queued() {
    let mut w = World::new();
    let llm = Rc::new(ScriptedLlm::responding(|_| Reply::text("the summary")));
    // A window of 60 tokens: six rounds make a compression due.
    let session = crate::working::session::SessionOptions {
        max_tokens: Some(60),
        retain_recent_rounds: 1,
        ..Default::default()
    };
    let ports = w.ports(Some(llm.clone()));
    let m = w.open_with(MemoryOptions { session, ..options("chat") }, ports);
    let release = llm.hold();
    for i in 0..6 {
        w.run(m.add(user(&format!("I like topic number {i}")))).unwrap();
        let noted = NewMessage { role: Some(crate::entry::Role::Assistant), ..user("noted") };
        w.run(m.add(noted)).unwrap();
    }
    assert_eq!(m.running(), 1, "a compression is queued");
    let done = closing(&w, &m);
    w.settle();
    assert!(!done.get(), "close waits for the model");
    release.send(()).unwrap();
    w.settle();
    assert!(done.get());
    assert_eq!(m.running(), 0);
    // The compression committed: another instance reads its summary.
    let ports = w.ports(None);
    let other = w.open_with(options("chat"), ports);
    let ctx = w.run(other.build_context(Default::default())).unwrap();
    assert!(ctx.messages[0].content.contains("the summary"), "{:?}", ctx.messages[0]);
}

#[test]
fn sync_options_out_of_bounds_and_a_second_schedule_are_invalid() {
    let mut w = World::new();
    let wire = Wire::new(&relay());
    let ports = w.ports(None);
    let m = w.open_with(options("chat"), ports);
    for ms in [0, MIN_SYNC_INTERVAL_MS - 1, MAX_SYNC_INTERVAL_MS + 1] {
        let e = m
            .autosync(wire.clone(), &AutoSyncOptions { interval_ms: Some(ms), ..Default::default() })
            .unwrap_err();
        assert_eq!(e.code, ErrorCode::InvalidInput, "{ms}");
    }
    m.autosync(
        wire.clone(),
        &AutoSyncOptions { interval_ms: Some(MIN_SYNC_INTERVAL_MS), ..Default::default() },
    )
    .unwrap();
    let e = m.autosync(wire.clone(), &AutoSyncOptions::default()).unwrap_err();
    assert_eq!(e.code, ErrorCode::InvalidInput);
    w.run(m.close());
}
