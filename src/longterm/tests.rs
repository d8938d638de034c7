//! LongTermMemory: pinned facts and the block's gates, search as of a date,
//! the index kept in step with the records here and in another instance,
//! and facts reaching (and leaving) a session's request.

use super::*;
use crate::longterm::records::new_memory;
use crate::ports::clock::ManualClock;
use crate::ports::LocalBoxFuture;
use crate::retrieval::block::{fit, Fitted};
use crate::store::MemoryStore;
use crate::tokens::Estimate;
use crate::working::session::{ContextRequest, NewMessage, Session, SessionOptions};
use crate::working::session::{LongTermBlock, LongTermSource};
use futures::executor::block_on;

/// The built-in block for `query`, fitted to `budget`.
fn fitted(lt: &mut LongTermMemory, query: &str, budget: u32) -> Fitted {
    fit(&Estimate, &lt.block(query, None, None).unwrap(), budget)
}

/// The built-in block as a request's long-term source (a search counts
/// itself, and a source is shared).
struct BlockOf<'a>(std::cell::RefCell<&'a mut LongTermMemory>);

impl LongTermSource for BlockOf<'_> {
    fn block<'a>(&'a self, query: &'a str, _budget: u32) -> LocalBoxFuture<'a, Result<LongTermBlock>> {
        let block = self.0.borrow_mut().block(query, None, None);
        Box::pin(async move { block })
    }
}

#[test]
fn profile_facts_are_pinned_whatever_the_query_within_their_share() {
    let store: Rc<dyn Store> = Rc::new(MemoryStore::new());
    let clock = Rc::new(ManualClock::new(1_700_000_000_000));
    let options = LongTermOptions { agent_id: Some("coder".into()), ..Default::default() };
    let mut lt = block_on(LongTermMemory::open(store.clone(), clock.clone(), options)).unwrap();
    block_on(lt.remember(new_memory("Prefers Rust for systems code", Scope::User, 1))).unwrap();
    let block = fitted(&mut lt, "Which language for firmware?", 400).text;
    assert!(block.contains("Prefers Rust for systems code"), "{block}");
    // Preferences first, then importance; at most six; query hits after them.
    for i in 0..10 {
        let mut e = new_memory(format!("Owns vintage camera model {i}"), Scope::User, 2 + i);
        e.importance = 0.1;
        block_on(lt.remember(e)).unwrap();
    }
    let mut name = new_memory("User's name is Ada", Scope::User, 50);
    name.metadata.insert("category".into(), "profile".into());
    block_on(lt.remember(name)).unwrap();
    block_on(lt.remember(new_memory("Agent lesson: retry on 429", Scope::Agent("coder".into()), 60)))
        .unwrap();
    let block = fitted(&mut lt, "camera model 9", 400).text;
    let lines: Vec<&str> = block.lines().filter(|l| l.starts_with("- ")).collect();
    assert_eq!(lines[0], "- User's name is Ada");
    assert_eq!(lines[1], "- Prefers Rust for systems code");
    assert!(lines.contains(&"- Owns vintage camera model 9"), "the query's hit joins: {lines:?}");
    let user_lines =
        block.split("Agent memory:").next().unwrap().lines().filter(|l| l.starts_with("- ")).count();
    assert!(user_lines <= 6 + 10);
    assert_eq!(lines.iter().filter(|l| l.contains("model 9")).count(), 1, "pinned or hit, never twice");
    // Disabled: nothing but hits.
    let none = LongTermOptions { pinned_profile: 0, ..Default::default() };
    let mut bare = block_on(LongTermMemory::open(store, clock, none)).unwrap();
    assert_eq!(fitted(&mut bare, "Which language for firmware?", 400).text, "");
}

#[test]
fn a_long_pinned_fact_is_cut_like_a_hit_and_the_cut_is_reported() {
    let store: Rc<dyn Store> = Rc::new(MemoryStore::new());
    let clock = Rc::new(ManualClock::new(1_700_000_000_000));
    let mut lt = block_on(LongTermMemory::open(store, clock, LongTermOptions::default())).unwrap();
    let long = format!("Keeps a travel diary about Kyoto: {}", "temples and gardens ".repeat(500));
    block_on(lt.remember(new_memory(long, Scope::User, 1))).unwrap();
    let block = fitted(&mut lt, "Kyoto travel diary", 4_000);
    assert!(block.text.contains("Keeps a travel diary about Kyoto"), "{}", block.text);
    assert!(block.truncated, "the fact was cut to 1,000 characters");
}

#[test]
fn memories_and_search_answer_as_of_a_date() {
    let store: Rc<dyn Store> = Rc::new(MemoryStore::new());
    let may = crate::dates::ms_of(2023, 5, 8);
    let clock = Rc::new(ManualClock::new(may));
    let mut lt =
        block_on(LongTermMemory::open(store.clone(), clock.clone(), LongTermOptions::default())).unwrap();
    block_on(lt.remember(new_memory("Lives in Lisbon", Scope::User, may))).unwrap();
    block_on(lt.remember(new_memory("Went hiking with Sam on 3 May 2023", Scope::User, may))).unwrap();
    let july = crate::dates::ms_of(2023, 7, 1);
    clock.set(july);
    block_on(lt.remember(new_memory("Lives in Porto", Scope::User, july))).unwrap();
    let contents = |v: Vec<MemoryEntry>| {
        let mut c: Vec<String> = v.into_iter().map(|e| e.content).collect();
        c.sort();
        c
    };
    let june = crate::dates::ms_of(2023, 6, 1);
    assert_eq!(contents(lt.memories_as_of(june)), ["Lives in Lisbon", "Went hiking with Sam on 3 May 2023"]);
    assert_eq!(contents(lt.memories()), ["Lives in Porto", "Went hiking with Sam on 3 May 2023"]);
    assert!(lt.memories_as_of(crate::dates::ms_of(2023, 5, 2)).is_empty(), "nothing was true yet");
    let hike = lt.memories().into_iter().find(|e| e.content.contains("hiking")).unwrap();
    assert_eq!(
        (hike.temporal, hike.valid_from),
        (Some(crate::entry::Temporal::Event), Some(crate::dates::ms_of(2023, 5, 3)))
    );
    let then = SearchOptions { as_of: Some(june), ..SearchOptions::default() };
    let hits = lt.search("lives in", None, &then).unwrap();
    assert_eq!(hits.iter().map(|h| h.text.as_str()).collect::<Vec<_>>(), ["Lives in Lisbon"]);
    let now = lt.search("lives in", None, &SearchOptions::default()).unwrap();
    assert_eq!(now.iter().map(|h| h.text.as_str()).collect::<Vec<_>>(), ["Lives in Porto"]);
    // Another instance, opened afterwards, reads the same past from the store.
    let reopened = block_on(LongTermMemory::open(store, clock, LongTermOptions::default())).unwrap();
    assert_eq!(
        contents(reopened.memories_as_of(june)),
        ["Lives in Lisbon", "Went hiking with Sam on 3 May 2023"]
    );
}

#[test]
fn an_off_topic_request_gets_no_memories_a_related_one_does() {
    let store: Rc<dyn Store> = Rc::new(MemoryStore::new());
    let clock = Rc::new(ManualClock::new(1_700_000_000_000));
    let options = LongTermOptions { pinned_profile: 0, ..Default::default() };
    let mut lt = block_on(LongTermMemory::open(store, clock, options)).unwrap();
    for fact in [
        "Likes spicy food, especially Sichuan dishes",
        "Adopted a puppy named Rex last spring",
        "Works as a nurse at the Lisbon general hospital",
        "Plays the violin in a quartet on weekends",
        "Is learning Japanese for a trip to Kyoto",
        "Allergic to peanuts",
        "Has a sister named Ana who lives in Porto",
        "Runs a half marathon every autumn",
        "Prefers tea over coffee in the morning",
        "Drives an old blue Volvo",
        "Reads mystery novels before bed",
        "Wants to buy a flat near the river",
        "用户喜欢喝乌龙茶",
        "用户在上海做软件工程师",
    ] {
        block_on(lt.remember(new_memory(fact, Scope::User, 1))).unwrap();
    }
    let block = |lt: &mut LongTermMemory, q: &str| fitted(lt, q, 400).text;
    for q in [
        "What's the weather like in Tokyo tomorrow?",
        "Can you help me write a cover letter for a marketing job?",
        "Explain how photosynthesis works in simple terms",
        "I'd like some help planning a budget spreadsheet",
        "What is 17 times 23?",
        "Tell me about the history of the Roman empire",
        "今天北京的天气怎么样？",
        "帮我写一封求职信",
    ] {
        let best = lt.search(q, None, &SearchOptions::default()).unwrap().first().map(|h| h.explain.coverage);
        assert_eq!(block(&mut lt, q), "", "{q}: best coverage {best:?}");
    }
    for (q, expect) in [
        ("Any dinner ideas? I love spicy food", "Sichuan"),
        ("What should I name my new puppy's toy?", "Rex"),
        ("Which hospital do I work at?", "nurse"),
        ("Suggest phrases for my Kyoto trip", "Japanese"),
        ("When is my next marathon?", "half marathon"),
        // Two topics, each answered by another memory: together they cover it.
        ("Plan my weekend: a quartet rehearsal and snacks without peanuts", "Allergic to peanuts"),
        ("我喜欢喝什么茶？", "乌龙茶"),
        ("作为软件工程师，我该学什么？", "上海"),
    ] {
        assert!(block(&mut lt, q).contains(expect), "{q}");
    }
}

/// The index holds exactly the valid memories, each with its text.
fn index_matches_records(r: &LongTermMemory) -> std::result::Result<(), String> {
    let mut indexed: Vec<(String, String)> = r
        .index
        .ids()
        .map(|id| (id.to_string(), r.index.text_of(id).unwrap_or_default().to_string()))
        .collect();
    let mut valid: Vec<(String, String)> =
        r.records.valid_unordered().map(|e| (e.id.clone(), e.content.clone())).collect();
    indexed.sort();
    valid.sort();
    if indexed == valid {
        Ok(())
    } else {
        Err(format!("index {indexed:?}\nrecords {valid:?}"))
    }
}

#[test]
fn the_index_follows_every_change_of_the_records_here_and_in_another_instance() {
    // The index catches up on the memories each change names rather
    // than comparing every memory: a seeded run of every kind of change,
    // from two instances on one store, checked after each step against
    // the records themselves.
    let store: Rc<dyn Store> = Rc::new(MemoryStore::new());
    let clock = Rc::new(ManualClock::new(1_700_000_000_000));
    let open =
        || block_on(LongTermMemory::open(store.clone(), clock.clone(), LongTermOptions::default())).unwrap();
    let mut instances = [open(), open()];
    let facts = [
        "Lives in Lisbon",
        "Lives in Lisbon with two cats",
        "Has two cats",
        "Has three cats",
        "Prefers Rust for systems code",
        "Does not prefer Rust for systems code",
        "Works as a nurse",
        "Plays chess on Sundays",
    ];
    let mut next = crate::seeded::picker(0x9e37_79b9_7f4a_7c15);
    for step in 0..400 {
        clock.advance(1000);
        let who = next(2);
        let r = &mut instances[who];
        let ids: Vec<String> = r.records.valid_unordered().map(|e| e.id.clone()).collect();
        let any_id = |k: usize| ids.get(k % ids.len().max(1)).cloned();
        let op = next(9);
        let fact = || new_memory(facts[step % facts.len()], Scope::User, clock.now_ms());
        match op {
            0..=2 => drop(block_on(r.remember(fact()))),
            3 => drop(block_on(r.remember_many(vec![fact(), new_memory(facts[next(8)], Scope::User, 1)]))),
            4 => {
                if let Some(id) = any_id(next(100)) {
                    drop(block_on(r.supersede(fact(), &[id])));
                }
            }
            5 => {
                let superseded: Vec<String> =
                    r.export().entries.into_iter().filter(|e| !e.is_valid()).map(|e| e.id).collect();
                if let Some(id) = superseded.first() {
                    drop(block_on(r.undo(id)));
                }
            }
            6 => {
                if let Some(id) = any_id(next(100)) {
                    drop(block_on(r.forget(&id)));
                }
            }
            7 => {
                let mut doc = r.export();
                if let Some(e) = doc.entries.first_mut() {
                    e.content = format!("{} (edited {step})", e.content);
                }
                drop(block_on(r.import(doc)));
            }
            _ if step % 50 == 0 => block_on(r.purge()).unwrap(),
            _ => block_on(r.refresh()).unwrap(),
        }
        if let Err(why) = index_matches_records(r) {
            panic!("step {step}, instance {who}, op {op}:\n{why}");
        }
    }
}

#[test]
fn opened_over_a_store_read_in_parts_it_answers_as_the_instance_that_wrote() {
    // The memory store hands a scan over in parts of 100, the last part
    // first; each memory's terms are made as its part comes in. Damaged
    // and superseded records sit among them.
    let store = Rc::new(MemoryStore::new());
    let clock = Rc::new(ManualClock::new(1_700_000_000_000));
    let open = || {
        let store: Rc<dyn Store> = store.clone();
        block_on(LongTermMemory::open(store, clock.clone(), LongTermOptions::default())).unwrap()
    };
    let words = [
        "harbor", "violin", "granite", "orchid", "lantern", "glacier", "saffron", "compass", "meadow",
        "cobalt", "pepper", "thunder", "velvet", "canyon", "ember", "falcon", "juniper", "marble",
    ];
    let mut next = crate::seeded::picker(0x51ed_2701_a3c4_9b8f);
    let mut writer = open();
    let texts: Vec<String> = (0..350)
        .map(|i| {
            format!(
                "{} {} {} {} note {i}",
                words[next(18)],
                words[next(18)],
                words[next(18)],
                words[next(18)]
            )
        })
        .collect();
    let batch = texts.iter().map(|t| new_memory(t.clone(), Scope::User, clock.now_ms())).collect();
    block_on(writer.remember_many(batch)).unwrap();
    let ids: Vec<String> = writer.records.valid_unordered().map(|e| e.id.clone()).take(3).collect();
    block_on(writer.supersede(new_memory("lantern meadow cobalt replaced", Scope::User, 2), &ids)).unwrap();
    // Damage from outside this library's writes (which would keep a
    // snapshot the open would read instead): a new generation with it.
    block_on(store.put_many(vec![
        ("lt/entry/broken".into(), "{not json".into()),
        ("lt/meta/generation".into(), "7".into()),
    ]))
    .unwrap();
    let mut reopened = open();
    index_matches_records(&reopened).unwrap();
    assert!(reopened.records.valid_unordered().count() > 300, "most texts are distinct memories");
    assert!(reopened.damage.list().iter().any(|d| d.key == "lt/entry/broken"));
    for query in words.iter().map(|w| w.to_string()).chain(["lantern meadow".into(), "note 17".into()]) {
        let hits = |r: &mut LongTermMemory| -> Vec<(String, String)> {
            let found = r.search(&query, None, &SearchOptions { top_k: 1000, ..Default::default() }).unwrap();
            let mut found: Vec<_> = found.into_iter().map(|h| (h.id, format!("{:.9}", h.score))).collect();
            // Ties break by insertion, which a writer and a reader need not share.
            found.sort();
            found
        };
        assert_eq!(hits(&mut reopened), hits(&mut writer), "{query}");
    }
}

#[test]
fn another_instances_writes_reach_the_index_at_the_next_write_or_refresh() {
    // Read again in full, and (300 memories: a snapshot and a journal)
    // caught up on the journal's records alone.
    another_instances_writes_reach_the_index(0);
    another_instances_writes_reach_the_index(300);
}

fn another_instances_writes_reach_the_index(filler: usize) {
    let store: Rc<dyn Store> = Rc::new(MemoryStore::new());
    let clock = Rc::new(ManualClock::new(1_700_000_000_000));
    let open =
        || block_on(LongTermMemory::open(store.clone(), clock.clone(), LongTermOptions::default())).unwrap();
    let mut next = crate::seeded::picker(0x0ddba11);
    let word = |next: &mut dyn FnMut(usize) -> usize| -> String {
        (0..7).map(|_| char::from(b'a' + next(26) as u8)).collect()
    };
    let texts: Vec<MemoryEntry> = (0..filler)
        .map(|_| {
            let text: Vec<String> = (0..5).map(|_| word(&mut next)).collect();
            new_memory(text.join(" "), Scope::User, clock.now_ms())
        })
        .collect();
    block_on(open().remember_many(texts)).unwrap();
    let (mut a, mut b) = (open(), open());
    let hits = |r: &mut LongTermMemory, q: &str| r.search(q, None, &SearchOptions::default()).unwrap().len();
    block_on(a.remember(new_memory("Lives in Lisbon", Scope::User, clock.now_ms()))).unwrap();
    assert_eq!(hits(&mut b, "Lisbon"), 0, "b has not looked yet");
    // A write reloads what changed, and the index follows.
    block_on(b.remember(new_memory("Has two cats", Scope::User, clock.now_ms()))).unwrap();
    assert_eq!(hits(&mut b, "Lisbon"), 1);
    // An import rewriting an entry under the same id reaches the other index too.
    let mut doc = a.export();
    let lisbon = doc.entries.iter_mut().find(|e| e.content == "Lives in Lisbon").unwrap();
    lisbon.content = "Lives in Porto".into();
    block_on(a.import(doc)).unwrap();
    block_on(b.refresh()).unwrap();
    assert_eq!((hits(&mut b, "Lisbon"), hits(&mut b, "Porto")), (0, 1));
    // And a supersession, caught up at a refresh.
    let porto = b.records.valid_unordered().find(|e| e.content == "Lives in Porto").unwrap().id.clone();
    block_on(a.supersede(new_memory("Lives in Braga", Scope::User, clock.now_ms()), &[porto])).unwrap();
    block_on(b.refresh()).unwrap();
    assert_eq!((hits(&mut b, "Porto"), hits(&mut b, "Braga")), (0, 1));
    index_matches_records(&b).unwrap();
    assert_eq!(b.records.valid().len(), filler + 2);
}

#[test]
fn remembered_facts_reach_the_request_and_forgotten_ones_leave_it() {
    let store: Rc<dyn Store> = Rc::new(MemoryStore::new());
    let clock = Rc::new(ManualClock::new(1_700_000_000_000));
    let options = LongTermOptions { agent_id: Some("coder".into()), ..Default::default() };
    let mut longterm = block_on(LongTermMemory::open(store.clone(), clock.clone(), options.clone())).unwrap();
    let Remembered::Stored { entry: fact } =
        block_on(longterm.remember(new_memory("我喜欢用 Rust 写代码", Scope::User, clock.now_ms()))).unwrap()
    else {
        panic!()
    };
    block_on(longterm.remember(new_memory(
        "Prefers tabs over spaces in Go code",
        Scope::Agent("coder".into()),
        1,
    )))
    .unwrap();
    // The coder cannot write the other agent's memories; the user's view can.
    let secret = new_memory("Secret of another agent", Scope::Agent("other".into()), 1);
    assert!(block_on(longterm.remember(secret.clone())).is_err());
    let mut everyone =
        block_on(LongTermMemory::open(store.clone(), clock.clone(), LongTermOptions::default())).unwrap();
    block_on(everyone.remember(secret)).unwrap();

    // A new Memory on the same namespace: loaded at open, found by the query.
    let mut longterm = block_on(LongTermMemory::open(store.clone(), clock.clone(), options.clone())).unwrap();
    let mut session = block_on(Session::open(
        "s",
        store.clone(),
        Rc::new(Estimate),
        clock.clone(),
        SessionOptions::default(),
    ))
    .unwrap();
    block_on(
        session
            .add(NewMessage { content: "我喜欢用什么语言写代码?".into(), ..Default::default() }),
    )
    .unwrap();
    let req = ContextRequest {
        query: Some("我喜欢用什么语言写代码? tabs or spaces in go code".into()),
        ..Default::default()
    };
    let source = BlockOf(std::cell::RefCell::new(&mut longterm));
    let ctx = block_on(session.build_context(&req, Some(&source))).unwrap();
    let system = &ctx.messages[0].content;
    assert!(system.contains("我喜欢用 Rust 写代码"), "{system}");
    assert!(system.contains("Prefers tabs"));
    assert!(!system.contains("Secret of another agent"), "other agents' memories stay out");
    assert!(system.find("User profile").unwrap() < system.find("Agent memory").unwrap());

    assert!(block_on(longterm.forget(&fact.id)).unwrap());
    let ctx = block_on(session.build_context(&req, Some(&BlockOf(std::cell::RefCell::new(&mut longterm)))))
        .unwrap();
    assert!(!ctx.messages[0].content.contains("我喜欢用 Rust"));
    assert!(longterm.stats().searches.values().sum::<u32>() >= 2);
}
