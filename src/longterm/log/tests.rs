//! The log's convergence: writers that see each other late, the same
//! operations in any order, duplicated, or split into any parts, give one
//! view, and the view keeps its promises (one memory per fact, one in force
//! per lineage, nothing forgotten left).

use std::collections::BTreeMap;

use proptest::prelude::*;

use super::*;
use crate::entry::{MemoryEntry, Scope};
use crate::longterm::dedup::normalize;
use crate::longterm::records::new_memory;

/// What the simulated users say: states of three families (one value at a
/// time), two dated events and a preference.
const FACTS: &[(&str, Option<usize>)] = &[
    ("The user has 2 kids", Some(0)),
    ("The user has 3 kids", Some(0)),
    ("The user has 4 kids", Some(0)),
    ("The user lives in Lisbon", Some(1)),
    ("The user lives in Porto", Some(1)),
    ("The user works as a nurse", Some(2)),
    ("The user works as a doctor", Some(2)),
    ("Went hiking with Sam on 3 May 2023", None),
    ("Went hiking with Sam on 10 May 2023", None),
    ("Likes green tea", None),
];

fn family_of(text: &str) -> Option<usize> {
    FACTS.iter().find(|(t, _)| *t == text).and_then(|(_, f)| *f)
}

/// A writer: its clock, what it has seen, and a counter for memory ids.
struct Writer {
    n: usize,
    clock: Clock,
    now: i64,
    log: Log,
    made: usize,
}

impl Writer {
    fn new(n: usize) -> Writer {
        Writer { n, clock: Clock::new(n as u64 + 1), now: 1_700_000_000_000, log: Log::default(), made: 0 }
    }

    fn write(&mut self, action: Action) -> Op {
        let op = Op::new(self.clock.next(self.now), action);
        self.log.insert([op.clone()]);
        op
    }

    fn memory(&mut self, text: &str) -> MemoryEntry {
        self.made += 1;
        MemoryEntry { id: format!("w{}-{}", self.n, self.made), ..new_memory(text, Scope::User, self.now) }
    }

    /// `remember` as a writer decides it against what it has seen: nothing
    /// if it is known, a supersession of its family's memory in force, or a
    /// new memory.
    fn remember(&mut self, fact: usize) -> Option<Op> {
        let text = FACTS[fact].0;
        let view = self.log.view();
        if view.in_force().any(|e| normalize(&e.content) == normalize(text)) {
            return None;
        }
        let family = FACTS[fact].1;
        let old = view
            .in_force()
            .find(|e| family.is_some() && family_of(&e.content) == family)
            .map(|e| e.id.clone());
        let entry = self.memory(text);
        Some(match old {
            Some(old) => self.write(Action::Supersede { entry, replaces: vec![old] }),
            None => self.write(Action::Create { entry }),
        })
    }

    fn undo(&mut self, pick: usize) -> Option<Op> {
        let ids: Vec<String> = self
            .log
            .view()
            .in_force()
            .filter(|e| !self.log.view().replaced_by(&e.id).is_empty())
            .map(|e| e.id.clone())
            .collect();
        let id = ids.get(pick % ids.len().max(1))?.clone();
        Some(self.write(Action::Retract { id }))
    }

    /// `forget` of a memory with its whole lineage, as this writer sees it.
    fn forget(&mut self, pick: usize) -> Option<Op> {
        let view = self.log.view();
        let all: Vec<&MemoryEntry> = view.memories().collect();
        let first = all.get(pick % all.len().max(1))?.id.clone();
        let mut ids = vec![first];
        let mut i = 0;
        while i < ids.len() {
            let id = ids[i].clone();
            let linked = view.replaced_by(&id).iter().cloned().chain(
                all.iter()
                    .filter(|e| e.superseded_by.as_deref() == Some(&id) || e.id == id)
                    .flat_map(|e| [e.id.clone()].into_iter().chain(e.superseded_by.clone())),
            );
            for other in linked.collect::<Vec<_>>() {
                if !ids.contains(&other) {
                    ids.push(other);
                }
            }
            i += 1;
        }
        Some(self.write(Action::Forget { ids }))
    }

    fn receive(&mut self, ops: &[Op]) {
        for op in ops {
            self.clock.observe(op.stamp);
        }
        self.log.insert(ops.iter().cloned());
    }
}

#[derive(Debug, Clone)]
enum Step {
    Remember {
        writer: usize,
        fact: usize,
    },
    Undo {
        writer: usize,
        pick: usize,
    },
    Forget {
        writer: usize,
        pick: usize,
    },
    Judge {
        writer: usize,
        message: usize,
    },
    /// `to` receives what `from` holds.
    Sync {
        from: usize,
        to: usize,
    },
    /// A writer's wall clock moves (some run behind the others).
    Tick {
        writer: usize,
        ms: u16,
    },
}

fn step(writers: usize) -> impl Strategy<Value = Step> {
    let w = 0..writers;
    prop_oneof![
        6 => (w.clone(), 0..FACTS.len()).prop_map(|(writer, fact)| Step::Remember { writer, fact }),
        1 => (w.clone(), any::<usize>()).prop_map(|(writer, pick)| Step::Undo { writer, pick }),
        1 => (w.clone(), any::<usize>()).prop_map(|(writer, pick)| Step::Forget { writer, pick }),
        1 => (w.clone(), 0..4usize).prop_map(|(writer, message)| Step::Judge { writer, message }),
        3 => (w.clone(), w.clone()).prop_map(|(from, to)| Step::Sync { from, to }),
        2 => (w, 0..5_000u16).prop_map(|(writer, ms)| Step::Tick { writer, ms }),
    ]
}

/// Runs `steps`; gives every operation made and the writers.
fn run(n: usize, steps: &[Step]) -> (Vec<Op>, Vec<Writer>) {
    let mut writers: Vec<Writer> = (0..n).map(Writer::new).collect();
    let mut ops = Vec::new();
    for s in steps {
        let made = match *s {
            Step::Remember { writer, fact } => writers[writer].remember(fact),
            Step::Undo { writer, pick } => writers[writer].undo(pick),
            Step::Forget { writer, pick } => writers[writer].forget(pick),
            Step::Judge { writer, message } => {
                let w = &mut writers[writer];
                let until = w.now + 60_000;
                Some(w.write(Action::Processed { hashes: vec![format!("m{message}")], until }))
            }
            Step::Sync { from, to } => {
                let held: Vec<Op> = writers[from].log.ops().map(|(_, op)| op.clone()).collect();
                writers[to].receive(&held);
                None
            }
            Step::Tick { writer, ms } => {
                writers[writer].now += ms as i64;
                None
            }
        };
        ops.extend(made);
    }
    (ops, writers)
}

/// The view's promises.
fn check_promises(view: &View, ops: &[Op]) -> Result<(), TestCaseError> {
    // One memory in force per text and scope.
    let mut saying: BTreeMap<String, &str> = BTreeMap::new();
    for e in view.in_force() {
        let key = format!("{}\u{0}{}", e.scope, normalize(&e.content));
        prop_assert!(saying.insert(key, &e.id).is_none(), "two memories in force say {:?}", e.content);
    }
    // One memory in force per lineage: memories joined by the
    // supersessions written (union-find over the operations' own links).
    let mut parent: BTreeMap<String, String> = BTreeMap::new();
    fn root(parent: &BTreeMap<String, String>, id: &str) -> String {
        let mut at = id.to_string();
        while let Some(p) = parent.get(&at).filter(|p| **p != at) {
            at = p.clone();
        }
        at
    }
    for op in ops {
        if let Action::Supersede { entry, replaces } = &op.action {
            for old in replaces {
                let (a, b) = (root(&parent, &entry.id), root(&parent, old));
                if a != b {
                    parent.insert(a, b);
                }
            }
        }
    }
    let mut lineages: BTreeMap<String, &str> = BTreeMap::new();
    for e in view.in_force() {
        let r = root(&parent, &e.id);
        prop_assert!(
            lineages.insert(r, &e.id).is_none(),
            "two memories in force in the lineage of {:?}",
            e.id
        );
    }
    // Nothing forgotten is left, and a memory out of force says why.
    for op in ops {
        if let Action::Forget { ids } = &op.action {
            for id in ids {
                prop_assert!(view.get(id).is_none(), "forgotten {id:?} is still there");
            }
        }
    }
    for e in view.memories() {
        if !e.is_valid() {
            prop_assert!(e.valid_to.is_some());
            prop_assert!(e.superseded_by.is_some() || e.metadata.contains_key(fold::UNDONE));
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn the_view_is_the_same_for_any_order_duplicates_and_parts(
        n in 1usize..5,
        steps in prop::collection::vec(step(4), 1..80),
        seed in 1u64..u64::MAX,
        parts in 1usize..6,
    ) {
        let steps: Vec<Step> = steps.into_iter().map(|s| clamp(s, n)).collect();
        let (ops, writers) = run(n, &steps);
        let view = View::of(&ops);
        check_promises(&view, &ops)?;

        // Shuffled, with some operations twice.
        let mut pick = crate::seeded::picker(seed);
        let mut shuffled = ops.clone();
        for i in (1..shuffled.len()).rev() {
            shuffled.swap(i, pick(i + 1));
        }
        let twice: Vec<Op> = shuffled.iter().filter(|_| pick(3) == 0).cloned().collect();
        shuffled.extend(twice);
        prop_assert_eq!(&View::of(&shuffled), &view);

        // With the text of forgotten memories erased (as the store keeps
        // them once a forget is written), the same view.
        let erased: Vec<Op> =
            ops.iter().map(|op| if view.is_erasable(op) { op.erased().unwrap() } else { op.clone() }).collect();
        prop_assert_eq!(&View::of(&erased), &view);
        let mut log = Log::default();
        log.insert(ops.clone());
        log.erase_forgotten();
        prop_assert_eq!(log.view(), &view);
        prop_assert!(log.ops().all(|(_, op)| op.entry().is_none_or(|e| !view.is_forgotten(&e.id))));

        // Split into parts that arrive one after another, in any order, at
        // a log that keeps its view as they come.
        let mut log = Log::default();
        let mut chunks: Vec<Vec<Op>> = vec![Vec::new(); parts];
        for op in &shuffled {
            chunks[pick(parts)].push(op.clone());
        }
        for chunk in chunks {
            log.insert(chunk);
        }
        prop_assert_eq!(log.view(), &view);

        // Every writer, once it has seen everything, holds the same view;
        // and what each wrote on its own is a view of what it held.
        for mut w in writers {
            prop_assert_eq!(w.log.view(), &View::of(w.log.ops().map(|(_, op)| op)));
            w.receive(&ops);
            prop_assert_eq!(w.log.view(), &view);
        }
    }
}

fn clamp(s: Step, n: usize) -> Step {
    match s {
        Step::Remember { writer, fact } => Step::Remember { writer: writer % n, fact },
        Step::Undo { writer, pick } => Step::Undo { writer: writer % n, pick },
        Step::Forget { writer, pick } => Step::Forget { writer: writer % n, pick },
        Step::Judge { writer, message } => Step::Judge { writer: writer % n, message },
        Step::Sync { from, to } => Step::Sync { from: from % n, to: to % n },
        Step::Tick { writer, ms } => Step::Tick { writer: writer % n, ms },
    }
}

/// Four writers that have all seen the namespace as it was, then act at
/// once, and then see each other.
fn at_once(acts: impl Fn(&mut Writer) -> Option<Op>, base: &[usize]) -> (View, Vec<Op>) {
    let mut first = Writer::new(0);
    let mut ops: Vec<Op> = base.iter().filter_map(|&f| first.remember(f)).collect();
    let mut writers: Vec<Writer> = (1..5).map(Writer::new).collect();
    for w in &mut writers {
        w.receive(&ops);
    }
    for w in &mut writers {
        ops.extend(acts(w));
    }
    (View::of(&ops), ops)
}

#[test]
fn the_same_fact_remembered_by_four_writers_at_once_is_one_memory() {
    let (view, ops) = at_once(|w| w.remember(9), &[]);
    assert_eq!(ops.len(), 4);
    let in_force: Vec<&MemoryEntry> = view.in_force().collect();
    assert_eq!(in_force.len(), 1);
    // The first said stays; the others are in its history.
    assert_eq!(in_force[0].id, "w1-1");
    assert_eq!(view.memories().filter(|e| e.superseded_by.as_deref() == Some("w1-1")).count(), 3);
}

#[test]
fn four_updates_of_one_state_at_once_leave_one_current_version() {
    // All four saw "has 2 kids"; each says another number.
    let (view, _) = at_once(|w| w.remember(w.n % 2 + 1), &[0]);
    let current: Vec<&str> = view.in_force().map(|e| e.content.as_str()).collect();
    assert_eq!(current.len(), 1, "{current:?}");
    // The latest stamp wins (writer 4, the last to act here).
    assert_eq!(view.in_force().next().unwrap().id, "w4-1");
    // Every version is in history.
    assert_eq!(view.memories().count(), 5);
}

#[test]
fn four_new_values_of_one_state_at_once_leave_one_current_version() {
    // None had seen a value: each writes "has N kids" as a new memory.
    let (view, ops) = at_once(
        |w| {
            let entry = w.memory(FACTS[w.n % 3].0);
            Some(w.write(Action::Create { entry }))
        },
        &[],
    );
    let current: Vec<&str> = view.in_force().map(|e| e.content.as_str()).collect();
    assert_eq!(current.len(), 1, "{current:?}");
    assert_eq!(view.in_force().next().unwrap().id, "w4-1", "the latest stamp wins");
    let mut reversed = ops.clone();
    reversed.reverse();
    assert_eq!(View::of(&reversed), view);
    // Another scope's value is another state.
    let mut w = Writer::new(9);
    let mut agent = w.memory("The user has 7 kids");
    agent.scope = Scope::Agent("a".into());
    let mut all = ops.clone();
    all.push(w.write(Action::Create { entry: agent }));
    assert_eq!(View::of(&all).in_force().count(), 2);
}

#[test]
fn two_dated_events_are_both_in_force() {
    let mut w = Writer::new(0);
    let ops: Vec<Op> = [7, 8].iter().filter_map(|&f| w.remember(f)).collect();
    assert_eq!(View::of(&ops).in_force().count(), 2);
}

#[test]
fn an_undo_racing_an_update_leaves_one_in_force_in_either_order() {
    let mut a = Writer::new(0);
    let mut ops = vec![a.remember(0).unwrap(), a.remember(1).unwrap()];
    let mut b = Writer::new(1);
    b.receive(&ops);
    // a takes its update back while b updates it again.
    ops.push(a.undo(0).unwrap());
    ops.push(b.remember(2).unwrap());
    let view = View::of(&ops);
    assert_eq!(view.in_force().count(), 1);
    let mut reversed = ops.clone();
    reversed.reverse();
    assert_eq!(View::of(&reversed), view);
}

#[test]
fn a_forgotten_memory_is_gone_with_its_text_and_is_not_written_again() {
    let mut w = Writer::new(0);
    let created = w.remember(9).unwrap();
    let forgot = w.forget(0).unwrap();
    // The creation replayed afterwards (a stale copy, a slow replica).
    let view = View::of([&forgot, &created, &created]);
    assert_eq!(view.memories().count(), 0);
    assert!(view.is_forgotten("w0-1"));
    let mut log = Log::default();
    log.insert([forgot.clone()]);
    log.insert([created]);
    assert_eq!(log.view().memories().count(), 0);
}

#[test]
fn judged_messages_stay_judged_until_their_mark_ends() {
    let mut w = Writer::new(0);
    let a = w.write(Action::Processed { hashes: vec!["m1".into()], until: 10 });
    let b = w.write(Action::Processed { hashes: vec!["m1".into()], until: 20 });
    let view = View::of([&b, &a]);
    assert!(view.is_processed("m1", 15));
    assert!(!view.is_processed("m1", 20));
}
