//! Records' behaviour: dedup, versions, deletion on the raw store, an
//! earlier release's records, compaction.

use super::*;
use crate::longterm::log::landing::COMPACT_AT;
use crate::ports::clock::ManualClock;
use crate::store::layout::{
    CHUNK_PREFIX, ENTRY_PREFIX, EPOCH_KEY, HEAD_PREFIX, LOG_PREFIX, PROCESSED_PREFIX,
};
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
    /// An instance with the damage it reports.
    fn open_with_damage(&self) -> (Records, Rc<DamageLog>) {
        let damage = Rc::new(DamageLog::default());
        let lt = block_on(Records::open_with(
            self.store.clone(),
            self.clock.clone(),
            DedupOptions::default(),
            damage.clone(),
            &mut |_| {},
        ))
        .unwrap();
        (lt, damage)
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
    assert!(!valid.contains(&"Lives in Lisbon") && !valid.iter().any(|v| v.contains("nurse")), "{valid:?}");
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
        assert_eq!(lt.valid().iter().map(|e| e.content.as_str()).collect::<Vec<_>>(), [old], "undo restores");
    }
    // The same fact said again is still a duplicate.
    let env = Env::new();
    let mut lt = env.open();
    block_on(lt.remember(env.fact("Has 2 kids"))).unwrap();
    assert!(matches!(block_on(lt.remember(env.fact("has 2 kids."))).unwrap(), Remembered::Duplicate { .. }));
    assert!(matches!(block_on(lt.remember(env.fact("Has 2 kid"))).unwrap(), Remembered::Duplicate { .. }));
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
    // One write for the new ones and the supersession together.
    assert_eq!(env.store.writes(), writes + 1);
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
fn the_same_fact_is_stored_once_also_across_reloads() {
    let env = Env::new();
    let mut lt = env.open();
    assert!(matches!(block_on(lt.remember(env.fact("I like Java"))).unwrap(), Remembered::Stored { .. }));
    assert!(matches!(block_on(lt.remember(env.fact("i like java."))).unwrap(), Remembered::Duplicate { .. }));
    let mut again = env.open();
    let r = block_on(again.remember(env.fact("I like Java"))).unwrap();
    assert!(matches!(r, Remembered::Duplicate { similarity: Similarity::Exact, .. }));
    assert_eq!(again.valid().len(), 1);
    // Another scope is another memory.
    let mut agent = env.fact("I like Java");
    agent.scope = Scope::Agent("coder".into());
    assert!(matches!(block_on(again.remember(agent)).unwrap(), Remembered::Stored { .. }));
}

/// The id of a memory stored or superseding.
fn id_of(r: Remembered) -> String {
    match r {
        Remembered::Stored { entry } | Remembered::Superseded { entry, .. } => entry.id,
        r => panic!("{r:?}"),
    }
}

/// The id of the memory `r` is a duplicate of.
fn duplicate_of(r: Remembered) -> String {
    match r {
        Remembered::Duplicate { existing, .. } => existing.id,
        r => panic!("{r:?}"),
    }
}

#[test]
fn dedup_follows_every_change_to_the_view() {
    // Dedup's probes are kept between writes: each step checks they
    // took in the change before it (a store, an expiry, a restore, a
    // deletion, another instance's write).
    let env = Env::new();
    let mut lt = env.open();
    let tea = id_of(block_on(lt.remember(env.fact("Likes tea in the morning"))).unwrap());
    id_of(block_on(lt.remember(env.fact("Lives in Lisbon"))).unwrap());
    assert_eq!(duplicate_of(block_on(lt.remember(env.fact("likes tea in the morning."))).unwrap()), tea);
    let fuller = block_on(lt.remember(env.fact("Likes tea in the morning and coffee at night"))).unwrap();
    let fuller = id_of(fuller);
    assert_eq!(duplicate_of(block_on(lt.remember(env.fact("Likes tea in the morning"))).unwrap()), fuller);
    block_on(lt.undo(&fuller)).unwrap();
    assert_eq!(duplicate_of(block_on(lt.remember(env.fact("likes tea in the morning"))).unwrap()), tea);
    assert!(block_on(lt.forget(&tea)).unwrap());
    let again = id_of(block_on(lt.remember(env.fact("Likes tea in the morning"))).unwrap());
    // Another instance's memory reaches this one's dedup at its next write.
    let mut other = env.open();
    let lisbon = block_on(other.remember(env.fact("Has a cat named Miso"))).unwrap();
    let miso = id_of(lisbon);
    assert!(block_on(lt.remember(env.fact("has a cat named Miso!"))).is_ok_and(|r| duplicate_of(r) == miso));
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
fn a_view_folded_again_keeps_fingerprints_but_not_of_a_text_rewritten() {
    // A view folded again (a sync's operations arriving out of order)
    // keeps the fingerprints the probes made; one of a memory whose text
    // an import rewrote under its id is made anew.
    let env = Env::new();
    let mut lt = env.open();
    let chess =
        id_of(block_on(lt.remember(env.fact("Plays chess every Sunday afternoon at the club"))).unwrap());
    // A plan in between: the memory has its fingerprint.
    block_on(lt.remember(env.fact("Lives in Lisbon"))).unwrap();
    let mut changed = lt.export();
    changed.entries.retain(|e| e.id == chess);
    changed.entries[0].content = "Has a dog named Rex".into();
    changed.count = None; // a document edited on purpose
    block_on(lt.import(changed)).unwrap();
    assert_eq!(lt.get(&chess).unwrap().content, "Has a dog named Rex");
    lt.probes.reset();
    assert_eq!(duplicate_of(block_on(lt.remember(env.fact("has a dog named Rex"))).unwrap()), chess);
    let r = block_on(lt.remember(env.fact("plays chess every Sunday afternoon at the club"))).unwrap();
    assert!(matches!(r, Remembered::Stored { .. }), "{r:?}");
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
fn a_supersession_is_one_operation_in_one_write() {
    let env = Env::new();
    let mut lt = env.open();
    let Remembered::Stored { entry: old } = block_on(lt.remember(env.fact("lives in Paris"))).unwrap() else {
        panic!()
    };
    let writes = env.store.writes();
    let new =
        block_on(lt.supersede(env.fact("moved to Berlin in 2024"), std::slice::from_ref(&old.id))).unwrap();
    assert_eq!(env.store.writes(), writes + 1, "new and old change together or not at all");
    assert_eq!(lt.get(&old.id).unwrap().superseded_by.as_deref(), Some(new.id.as_str()));
    let reopened = env.open();
    assert_eq!(reopened.valid().iter().map(|e| e.id.as_str()).collect::<Vec<_>>(), [new.id.as_str()]);
    let missing = block_on(lt.supersede(env.fact("x"), &["nope".into()])).unwrap_err();
    assert_eq!(missing.code, ErrorCode::NotFound);
}

/// Every value holding operations, by key.
fn op_records(env: &Env) -> Vec<(String, String)> {
    let mut out = block_on(env.store.list(LOG_PREFIX)).unwrap();
    out.extend(block_on(env.store.list(CHUNK_PREFIX)).unwrap());
    out
}

#[test]
fn a_write_is_one_record_of_its_writer_and_a_forget_takes_the_text_out() {
    let env = Env::new();
    let mut lt = env.open();
    let texts: Vec<String> =
        (0..100).map(|i| format!("memory number {i} about topic {}", i * 7919)).collect();
    let batch: Vec<MemoryEntry> = texts.iter().map(|t| env.fact(t)).collect();
    block_on(lt.remember_many(batch.clone())).unwrap();
    let records = op_records(&env);
    let write = |key: &str| key.rsplit_once('-').map(|(w, _)| w.to_string());
    assert!(records.len() <= 2, "100 memory-sized texts fit a record in one or two parts");
    assert!(records.iter().all(|(k, _)| k.starts_with(LOG_PREFIX) && write(k) == write(&records[0].0)));
    assert_eq!(block_on(env.store.list(HEAD_PREFIX)).unwrap().len(), 1, "and its writer's head");
    let bytes = |env: &Env| op_records(env).iter().map(|(_, v)| v.len() as u64).sum::<u64>();
    assert_eq!(lt.stats().storage_bytes, bytes(&env));
    // A fuller version of one: one more record, nothing rewritten.
    let old = &batch[3];
    let before = records[0].1.clone();
    let parts = records.len();
    let Remembered::Superseded { .. } =
        block_on(lt.remember(env.fact(&format!("{} and more", old.content)))).unwrap()
    else {
        panic!()
    };
    assert_eq!(op_records(&env).len(), parts + 1);
    assert!(op_records(&env).iter().any(|(_, v)| *v == before), "a write never rewrites another");
    // Forgetting one takes its text out of the record it was written in.
    let forgotten = &batch[10];
    assert!(block_on(lt.forget(&forgotten.id)).unwrap());
    let everything: Vec<(String, String)> = block_on(env.store.list("")).unwrap();
    assert!(everything.iter().all(|(_, v)| !v.contains(&forgotten.content)), "no copy anywhere");
    assert_eq!(lt.stats().storage_bytes, bytes(&env));
    // Another instance reads exactly this.
    let other = env.open();
    assert_eq!(other.export().entries, lt.export().entries);
    assert_eq!(other.stats().storage_bytes, bytes(&env));
    assert!(other.get(&forgotten.id).is_none());
}

#[test]
fn a_damaged_operation_costs_that_memory_alone_and_stays_reported() {
    let env = Env::new();
    let batch = env.written_together(5);
    let (key, value) = op_records(&env).pop().unwrap();
    let line = value.lines().find(|l| l.contains(&batch[1].id)).unwrap().to_string();
    let broken = value.replacen(&line, "{not json", 1);
    block_on(env.store.put_many(vec![(key.clone(), broken)])).unwrap();
    let (mut lt, damage) = env.open_with_damage();
    assert_eq!(lt.valid().len(), 4, "the other four are read");
    assert!(damage.list().iter().any(|d| d.key == key));
    assert!(block_on(lt.forget(&batch[2].id)).unwrap());
    let everything: Vec<(String, String)> = block_on(env.store.list("")).unwrap();
    assert!(everything.iter().all(|(_, v)| !v.contains(&batch[2].content)));
    assert_eq!(env.open().valid().len(), 3);
}

#[test]
fn an_earlier_releases_records_are_converted_once_with_every_version_and_hash() {
    let env = Env::new();
    let now = env.clock.now_ms();
    let old = MemoryEntry {
        valid_to: Some(now),
        superseded_by: Some("new".into()),
        ..new_memory("Lives in Lisbon", Scope::User, now - 10)
    };
    let old = MemoryEntry { id: "old".into(), ..old };
    let mut new = MemoryEntry { id: "new".into(), ..new_memory("Lives in Porto", Scope::User, now - 5) };
    new.metadata.insert(SUPERSEDES.into(), "old".into());
    let a = MemoryEntry { id: "a".into(), ..new_memory("Has a cat named Miso", Scope::User, now - 4) };
    let b = MemoryEntry {
        id: "b".into(),
        ..new_memory("Plays chess on Sundays", Scope::Agent("coach".into()), now - 3)
    };
    let json = |e: &MemoryEntry| serde_json::to_string(e).unwrap();
    block_on(env.store.put_many(vec![
        (format!("{ENTRY_PREFIX}old"), json(&old)),
        (format!("{ENTRY_PREFIX}new"), json(&new)),
        (format!("{ENTRY_PREFIX}~batch/1-0"), format!("~batch\n{}\n{}", json(&a), json(&b))),
        (format!("{PROCESSED_PREFIX}h1"), (now + 60_000).to_string()),
        (format!("{ENTRY_PREFIX}broken"), "{not json".into()),
        ("lt/meta/generation".into(), "7".into()),
        ("lt/meta/journal".into(), "7 0".into()),
        ("lt/snap/000000".into(), "7".into()),
    ]))
    .unwrap();
    let (mut lt, damage) = env.open_with_damage();
    let mut valid: Vec<&str> = lt.valid().iter().map(|e| e.id.as_str()).collect();
    valid.sort();
    assert_eq!(valid, ["a", "b", "new"]);
    assert_eq!(lt.history("new").iter().map(|e| e.id.as_str()).collect::<Vec<_>>(), ["old", "new"]);
    assert!(lt.is_processed("h1"));
    assert!(damage.list().iter().any(|d| d.key == format!("{ENTRY_PREFIX}broken")));
    let keys: Vec<String> = block_on(env.store.list("lt/")).unwrap().into_iter().map(|(k, _)| k).collect();
    assert!(
        keys.iter().all(|k| !k.starts_with("lt/entry/") || k.ends_with("broken")),
        "converted records are deleted, the damaged one stays: {keys:?}"
    );
    assert!(!keys.iter().any(|k| k.starts_with("lt/meta/generation") || k.starts_with("lt/snap/")));
    // Opened again (here and by another instance), the same memories,
    // converted once.
    let again = env.open();
    assert_eq!(again.export().entries, lt.export().entries);
    block_on(lt.undo("new")).unwrap();
    assert_eq!(lt.valid().iter().filter(|e| e.id == "old").count(), 1, "undo restores the old version");
}

#[test]
fn records_pile_up_into_chunks_and_opening_reads_the_same() {
    let env = Env::new();
    let mut lt = env.open();
    block_on(lt.mark_processed(&["gone".into()], 1_000)).unwrap();
    let mut next = crate::seeded::picker(0x0ddba11);
    for _ in 0..(3 * COMPACT_AT) {
        let text: Vec<String> =
            (0..5).map(|_| (0..7).map(|_| char::from(b'a' + next(26) as u8)).collect()).collect();
        block_on(lt.remember(env.fact(&text.join(" ")))).unwrap();
    }
    let logs = block_on(env.store.list(LOG_PREFIX)).unwrap().len();
    assert!(logs < COMPACT_AT, "{logs} single records left");
    assert!(!block_on(env.store.list(CHUNK_PREFIX)).unwrap().is_empty());
    let all: Vec<(String, String)> = block_on(env.store.list("")).unwrap();
    assert!(all.iter().all(|(_, v)| !v.contains("\"gone\"")), "a run-out mark is not kept");
    let other = env.open();
    assert_eq!(other.export().entries, lt.export().entries);
    assert_eq!(other.valid().len(), 3 * COMPACT_AT);
    assert_eq!(other.stats().storage_bytes, lt.stats().storage_bytes);
}

#[test]
fn forget_after_supersede_and_undo_deletes_the_retracted_replacement() {
    let env = Env::new();
    let mut lt = env.open();
    let Remembered::Stored { entry: old } = block_on(lt.remember(env.fact("lives in Lisbon"))).unwrap()
    else {
        panic!()
    };
    let new =
        block_on(lt.supersede(env.fact("lives in Porto since May"), std::slice::from_ref(&old.id))).unwrap();
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
    let stored: Vec<(String, String)> = block_on(env.store.list("")).unwrap();
    assert!(stored.iter().all(|(_, v)| !v.contains("about cats")));
    assert_eq!(block_on(lt.forget_scope(&Scope::Agent("planner".into()))).unwrap(), 1);
    assert_eq!(lt.valid().len(), 1);
    block_on(lt.mark_processed(&["h1".into()], PROCESSED_TTL_MS)).unwrap();
    block_on(lt.purge()).unwrap();
    // Nothing but the epoch and the purge itself (an operation, so that it
    // syncs) left in the raw store.
    let left = block_on(env.store.list("")).unwrap();
    assert!(left.iter().any(|(k, _)| k == EPOCH_KEY));
    let text: String = left.iter().map(|(_, v)| v.as_str()).collect();
    assert!(text.contains("\"do\":\"purge\""), "{text}");
    // "retry on 429" whole: a random epoch's hex may hold "429".
    for gone in ["weather", "\"h1\"", "cats", "retry on 429", "create", "forget"] {
        assert!(!text.contains(gone), "{gone} left in the raw store: {text}");
    }
    assert!(lt.valid().is_empty() && env.open().valid().is_empty() && !env.open().is_processed("h1"));
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
    assert_eq!(reopened.stats().processed_hashes, 0);
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

/// Four instances (four processes: no shared lock) remembering at once on
/// one store whose operations interleave by seed, past several
/// compactions: every acknowledged memory is there once, for a new
/// instance and for each writer.
#[test]
fn four_writers_at_once_through_compactions_lose_nothing() {
    use crate::store::yielding::YieldingStore;
    use futures::future::join_all;
    for seed in 0..40u64 {
        let store: Rc<dyn Store> = Rc::new(YieldingStore::new(seed));
        let clock = Rc::new(ManualClock::new(1_700_000_000_000));
        let open = || block_on(Records::open(store.clone(), clock.clone(), DedupOptions::default())).unwrap();
        let writers: Vec<Records> = (0..4).map(|_| open()).collect();
        let acked = block_on(join_all(writers.into_iter().enumerate().map(|(w, mut lt)| {
            let clock = clock.clone();
            // Words of random letters: no dedup rule relates two facts.
            let mut next = crate::seeded::picker(0x5eed_0000 + seed * 4 + w as u64);
            async move {
                let mut acked = Vec::new();
                for _ in 0..50 {
                    clock.advance(7);
                    let words: Vec<String> =
                        (0..5).map(|_| (0..7).map(|_| char::from(b'a' + next(26) as u8)).collect()).collect();
                    let text = words.join(" ");
                    let fact = new_memory(&text, Scope::User, clock.now_ms());
                    if lt.remember(fact).await.is_ok() {
                        acked.push(text);
                    }
                }
                (acked, lt)
            }
        })));
        let (acked, writers): (Vec<Vec<String>>, Vec<Records>) = acked.into_iter().unzip();
        let mut held: Vec<String> = open().valid().iter().map(|e| e.content.clone()).collect();
        held.sort();
        let mut want: Vec<String> = acked.into_iter().flatten().collect();
        want.sort();
        assert_eq!(held, want, "seed {seed}: a new instance");
        for mut lt in writers {
            block_on(lt.refresh()).unwrap();
            let mut seen: Vec<String> = lt.valid().iter().map(|e| e.content.clone()).collect();
            seen.sort();
            assert_eq!(seen, want, "seed {seed}: a writer, caught up");
        }
    }
}

/// An instance that learnt memories as single records, folded since into a
/// chunk by another instance, forgets one: its text leaves the chunk too,
/// and no folded record comes back.
#[test]
fn a_forget_takes_the_text_out_of_a_chunk_another_instance_folded() {
    use crate::store::yielding::YieldingStore;
    use std::future::Future;
    use std::task::Context;
    let store: Rc<dyn Store> = Rc::new(YieldingStore::new(7));
    let clock = Rc::new(ManualClock::new(1_700_000_000_000));
    let open = || block_on(Records::open(store.clone(), clock.clone(), DedupOptions::default())).unwrap();
    let (mut writer, mut reader) = (open(), open());
    let mut next = crate::seeded::picker(0xc0ffee);
    let mut fact = || {
        clock.advance(1_000);
        let text: Vec<String> =
            (0..5).map(|_| (0..7).map(|_| char::from(b'a' + next(26) as u8)).collect()).collect();
        new_memory(text.join(" "), Scope::User, clock.now_ms())
    };
    let facts: Vec<MemoryEntry> = (0..COMPACT_AT).map(|_| fact()).collect();
    for f in &facts[..COMPACT_AT - 1] {
        block_on(writer.remember(f.clone())).unwrap();
    }
    // The writer's next write lands; the reader catches up before the
    // writer folds the records into a chunk, so it knows every write of
    // that chunk as a record.
    let logs = || block_on(store.list(LOG_PREFIX)).unwrap().len();
    let mut cx = Context::from_waker(futures::task::noop_waker_ref());
    {
        let mut write = Box::pin(writer.remember(facts[COMPACT_AT - 1].clone()));
        while logs() < COMPACT_AT {
            assert!(write.as_mut().poll(&mut cx).is_pending(), "the write lands before it folds");
        }
        block_on(reader.refresh()).unwrap();
        assert_eq!(reader.valid().len(), COMPACT_AT, "the reader holds them as records");
        while write.as_mut().poll(&mut cx).is_pending() {}
    }
    assert_eq!(logs(), 0, "folded into a chunk");
    let gone = &facts[5];
    assert!(block_on(reader.forget(&gone.id)).unwrap());
    let everything: Vec<(String, String)> = block_on(store.list("")).unwrap();
    let copies: Vec<&String> =
        everything.iter().filter(|(_, v)| v.contains(&gone.content)).map(|(k, _)| k).collect();
    assert!(copies.is_empty(), "no copy anywhere: {copies:?}");
    assert_eq!(logs(), 1, "the forget's own record, and no folded record written back");
    let other = open();
    assert!(other.get(&gone.id).is_none());
    assert_eq!(other.valid().len(), COMPACT_AT - 1);
}

#[test]
fn versions_remembered_in_batches_keep_their_lineage_shallow() {
    // A batch's near-copies are all in force after it, and the next batch
    // replaces them. Each version naming all of them made the log
    // quadratic; a version naming a batch newest first, or without path
    // compression, grew the lineage's forest a path as long as the batch,
    // walked for every version named (a fold of 2,000 took seconds).
    let env = Env::new();
    let mut lt = env.open();
    let mut outcomes = Vec::new();
    for b in 0..4 {
        let said = |k| MemoryEntry {
            sources: vec![format!("message {b}-{k}")],
            ..env.fact(&format!("Saved {} euros towards the trip to Porto this month", b * 60 + k))
        };
        outcomes.push(block_on(lt.remember_many((0..60).map(said).collect())).unwrap());
    }
    let view = lt.log.view();
    assert_eq!(view.in_force().count(), 1);
    assert_eq!(view.memories().count(), 240);
    // The first version of a batch names the whole batch before it; each
    // later one names the version before it (the head the fold would have
    // made it replace), so the log grows with the versions, not their square.
    let named: Vec<usize> = outcomes[1]
        .iter()
        .map(|o| match o {
            Remembered::Superseded { superseded, .. } => superseded.len(),
            other => panic!("not a supersession: {other:?}"),
        })
        .collect();
    assert_eq!(named[0], 60);
    assert!(named[1..].iter().all(|&n| n == 1), "{named:?}");
    let links: usize = lt
        .log
        .ops()
        .map(|(_, op)| match &op.action {
            Action::Supersede { replaces, .. } => replaces.len(),
            _ => 0,
        })
        .sum();
    // The second batch: 60 for its first version, then one each; after
    // it, one version is in force, so each later batch names 60 in all.
    assert_eq!(links, 60 + 59 + 2 * 60);
    // The newest version in force stands for every version's sources.
    let head = view.in_force().next().unwrap();
    assert_eq!(head.content, "Saved 239 euros towards the trip to Porto this month");
    assert_eq!(head.sources.len(), 240);
    assert!(view.deepest_lineage() <= 3, "a lineage path of {}", view.deepest_lineage());
    // Folded again from the set, it is the same view, just as shallow.
    let again = crate::longterm::log::View::of(lt.log.ops().map(|(_, op)| op));
    assert_eq!(&again, view);
    assert!(again.deepest_lineage() <= 3);
}

#[test]
fn random_lists_of_versions_fold_to_the_view_they_wrote_and_name_what_is_held() {
    // Lists of near-copies, states and unrelated facts in random sizes,
    // with undos and forgets between them: what each list names is a
    // memory held (in the view or written in the same list), the view
    // folded again from the log is the one kept, and another instance
    // opened on the store reads the same.
    let env = Env::new();
    let mut lt = env.open();
    let mut next = crate::seeded::picker(0x11575);
    let mut named_in_list = 0;
    let texts = |k: usize, n: usize| match k {
        0 => format!("Saved {n} euros towards the trip to Porto this month"),
        1 => format!("The user has {} kids", n % 5 + 1),
        2 => format!("The user lives in {}", ["Lisbon", "Porto", "Braga", "Faro"][n % 4]),
        _ => format!("Fact number {n} about the garden shed and its roof"),
    };
    for round in 0..30 {
        let list: Vec<MemoryEntry> = (0..1 + next(12)).map(|_| env.fact(&texts(next(4), next(40)))).collect();
        let ids: Vec<String> = list.iter().map(|e| e.id.clone()).collect();
        let outcomes = block_on(lt.remember_many(list)).unwrap();
        let view = lt.log.view();
        for o in &outcomes {
            if let Remembered::Superseded { superseded, .. } = o {
                for id in superseded {
                    assert!(
                        view.get(id).is_some() || ids.contains(id),
                        "round {round}: {id} names nothing held"
                    );
                    named_in_list += usize::from(ids.contains(id));
                }
            }
        }
        // Now and then an undo of a list's supersession, or a forget.
        let last = outcomes.iter().rev().find_map(|o| match o {
            Remembered::Superseded { entry, .. } => Some(entry.id.clone()),
            _ => None,
        });
        match (round % 5, last) {
            (2, Some(id)) => block_on(lt.undo(&id)).unwrap(),
            (4, _) => {
                let ids: Vec<String> = lt.log.view().in_force().map(|e| e.id.clone()).collect();
                block_on(lt.forget(&ids[next(ids.len())])).unwrap();
            }
            _ => {}
        }
        let view = lt.log.view();
        let again = crate::longterm::log::View::of(lt.log.ops().map(|(_, op)| op));
        assert_eq!(&again, view, "round {round}");
        assert!(view.deepest_lineage() <= 3, "round {round}: a lineage path of {}", view.deepest_lineage());
    }
    assert!(named_in_list > 10, "lists named their own earlier versions {named_in_list} times");
    let other = env.open();
    assert_eq!(other.log.view(), lt.log.view());
}

#[test]
fn a_list_repeating_an_id_or_reusing_the_one_it_replaces_is_planned_and_written() {
    // Ids a Rust caller chose: a list that names one id twice, and an
    // entry under the id of the memory it replaces. The plan's walk from
    // a replaced memory to the entry standing there must end.
    let env = Env::new();
    let mut lt = env.open();
    let saved = |n: u32| env.fact(&format!("Saved {n} euros towards the trip to Porto this month"));
    let x = saved(5);
    block_on(lt.remember(x.clone())).unwrap();
    let twice = saved(6);
    let list = vec![twice.clone(), MemoryEntry { id: twice.id.clone(), ..saved(7) }, saved(8)];
    assert_eq!(block_on(lt.remember_many(list)).unwrap().len(), 3);
    let head = lt.log.view().in_force().next().unwrap().clone();
    let fuller = MemoryEntry {
        id: head.id.clone(),
        ..env.fact("Saved 8 euros towards the trip to Porto this month, and 3 more on Friday")
    };
    let list = vec![fuller, saved(9)];
    assert_eq!(block_on(lt.remember_many(list)).unwrap().len(), 2);
    let again = crate::longterm::log::View::of(lt.log.ops().map(|(_, op)| op));
    assert_eq!(&again, lt.log.view());
}
