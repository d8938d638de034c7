//! Session end through `Memory`: the judge, the resolver, the commit and
//! the outbox, each case on one instance with a scripted model and a clock
//! that moves only when told.

use std::rc::Rc;

use crate::entry::{MemoryEntry, Role, Scope};
use crate::error::{ErrorCode, Result};
use crate::llm::consolidate::EndSessionReport;
use crate::llm::governor::LlmOptions;
use crate::llm::outbox::{self, OutboxRecord};
use crate::llm::parse;
use crate::llm::testing::{Reply, ScriptedLlm};
use crate::memory::tests::{options, World};
use crate::memory::{Memory, MemoryOptions};
use crate::ports::clock::ManualClock;
use crate::ports::Clock;
use crate::retrieval::block::fit;
use crate::store::{DamageLog, MemoryStore, Store};
use crate::tokens::Estimate;
use crate::working::session::NewMessage;

/// One instance on session `s1`, its model and its clock.
struct Fixture {
    w: World,
    clock: Rc<ManualClock>,
    memory: Memory,
}

fn fixture(turns: &[(&str, &str)], llm: &Rc<ScriptedLlm>) -> Fixture {
    let options = LlmOptions { max_retries: 0, ..LlmOptions::default() };
    fixture_on(Rc::new(MemoryStore::new()), turns, llm, options)
}

fn fixture_on(
    store: Rc<dyn Store>,
    turns: &[(&str, &str)],
    llm: &Rc<ScriptedLlm>,
    llm_options: LlmOptions,
) -> Fixture {
    let mut w = World::on(store);
    let clock = Rc::new(ManualClock::new(1_700_000_000_000));
    let mut ports = w.ports(Some(llm.clone()));
    ports.clock = clock.clone();
    // Compression would take the model's scripted replies.
    let opts = MemoryOptions { auto_compress: Some(false), llm: llm_options, ..options("s1") };
    let memory = w.open_with(opts, ports);
    let mut f = Fixture { w, clock, memory };
    add_turns(&mut f, turns);
    f
}

fn add_turns(f: &mut Fixture, turns: &[(&str, &str)]) {
    for (user, assistant) in turns {
        for (role, text) in [(Role::User, user), (Role::Assistant, assistant)] {
            let m = NewMessage { role: Some(role), content: text.to_string(), ..NewMessage::default() };
            f.w.run(f.memory.add(m)).unwrap();
        }
        f.clock.advance(1_000);
    }
}

fn end(f: &mut Fixture) -> EndSessionReport {
    f.w.run(f.memory.end_session()).unwrap()
}

fn memories(f: &mut Fixture) -> Vec<MemoryEntry> {
    f.w.run(f.memory.memories()).unwrap()
}

fn contents(f: &mut Fixture) -> Vec<String> {
    memories(f).into_iter().map(|e| e.content).collect()
}

/// The session's outbox record: work still owed.
fn owed(f: &mut Fixture) -> Option<OutboxRecord> {
    let store = f.w.store.clone();
    f.w.run(outbox::get(store.as_ref(), "s1", &DamageLog::default())).unwrap()
}

#[test]
fn the_judge_extracts_and_a_second_end_finds_nothing_new() {
    let llm = Rc::new(ScriptedLlm::new([Reply::text(
        r#"{"memories": [{"content": "User loves Rust", "category": "preference", "scope": "user", "importance": 8}]}"#,
    )]));
    let mut f = fixture(&[("I switched to Rust last year and love it", "Nice!"), ("thanks", "bye")], &llm);
    let r = end(&mut f);
    assert_eq!((r.judge, r.new_messages, r.candidates, r.added, r.llm_calls), ("llm", 4, 1, 1, 1));
    assert!(r.complete && r.errors.is_empty());
    let judge_prompt = &llm.requests()[0].messages[1].content;
    assert_eq!(judge_prompt.matches("[[NEW]]").count(), 4);
    let stored = memories(&mut f);
    assert_eq!(stored[0].content, "User loves Rust");
    assert_eq!(stored[0].scope, Scope::User);
    assert!((stored[0].importance - 0.8).abs() < 1e-6);
    assert_eq!(stored[0].metadata["category"], "preference");

    let again = end(&mut f);
    assert_eq!((again.judge, again.new_messages, again.llm_calls), ("none", 0, 0));

    // Only the new turn is marked next time; the old ones are context.
    add_turns(&mut f, &[("My name is Ada", "Hello Ada")]);
    llm.push(Reply::text(r#"{"memories": [{"content": "User's name is Ada", "category": "profile"}]}"#));
    let r = end(&mut f);
    assert_eq!(r.new_messages, 2);
    let prompt = &llm.requests()[1].messages[1].content;
    assert_eq!(prompt.matches("[[NEW]]").count(), 2);
    assert!(prompt.contains("[user]: I switched to Rust"));
}

#[test]
fn a_failing_or_unreadable_judge_falls_back_to_rules() {
    for reply in [
        Reply::BadRequest,
        Reply::text("Sorry, I can't help with that."),
        Reply::text(""),
        // Parsed, but nothing usable: read as "nothing new", the messages
        // would be marked processed and their facts never extracted.
        Reply::text(r#"{"facts": [{"content": "User prefers dark roast coffee"}]}"#),
        Reply::text(r#"[{"text": "User prefers dark roast coffee"}, {"content": 5}, {"content": ""}]"#),
    ] {
        let llm = Rc::new(ScriptedLlm::new([reply]));
        let mut f = fixture(&[("Hi. I prefer dark roast coffee. What's new?", "Not much.")], &llm);
        let r = end(&mut f);
        assert_eq!((r.judge, r.added), ("rules", 1));
        assert!(r.complete);
        assert_eq!(r.errors.len(), 1, "{:?}", r.errors);
        assert!(r.errors[0].starts_with("judge fell back to rules: "), "{:?}", r.errors);
        assert_eq!(contents(&mut f), ["User prefers dark roast coffee"]);
    }
}

#[test]
fn wrong_types_are_repaired_not_fatal() {
    let llm = Rc::new(ScriptedLlm::new([Reply::text(
        r#"{"memories": [{"content": "User lives in Lyon", "importance": "high", "scope": 7, "category": null}, {"content": 5}]}"#,
    )]));
    let mut f = fixture(&[("I live in Lyon", "Lovely city")], &llm);
    let r = end(&mut f);
    assert_eq!((r.judge, r.added), ("llm", 1));
    let stored = memories(&mut f);
    assert_eq!((stored[0].scope.clone(), stored[0].importance), (Scope::User, 0.5));
}

#[test]
fn a_contradiction_supersedes_in_one_batched_resolve_call() {
    let llm = Rc::new(ScriptedLlm::new([Reply::text(
        r#"{"memories": ["User prefers Rust for backend work", "User lives in Lyon"]}"#,
    )]));
    let mut f = fixture(&[("I prefer Rust for backend work", "ok"), ("I live in Lyon", "ok")], &llm);
    assert_eq!(end(&mut f).added, 2);

    add_turns(
        &mut f,
        &[
            ("Actually I now prefer Go for backend work", "noted"),
            ("I moved to Paris, I live in Paris now", "ok"),
        ],
    );
    llm.push(Reply::text(
        r#"{"memories": ["User prefers Go for backend work", "User lives in Paris", "User owns a cat"]}"#,
    ));
    llm.push(Reply::text(
        r#"{"decisions": [{"candidate": 1, "action": "supersede", "ids": ["m1"]}, {"candidate": 2, "action": "supersede", "ids": ["m2"]}]}"#,
    ));
    let r = end(&mut f);
    assert_eq!((r.candidates, r.added, r.superseded, r.llm_calls), (3, 3, 2, 2), "{r:?}");
    let resolve_prompt = &llm.requests()[2].messages[1].content;
    assert!(resolve_prompt
        .contains("Candidate 1: User prefers Go for backend work\n  - stored m1: User prefers Rust"));
    assert!(!resolve_prompt.contains("cat"), "a candidate with no similar memory needs no resolving");
    let mut now = contents(&mut f);
    now.sort();
    assert_eq!(now, ["User lives in Paris", "User owns a cat", "User prefers Go for backend work"]);
    // The old versions are history, not gone.
    let go = memories(&mut f).into_iter().find(|e| e.content.contains("Go")).unwrap();
    assert_eq!(f.w.run(f.memory.history(&go.id)).unwrap().len(), 2);
}

#[test]
fn an_unusable_resolve_answer_adds_and_expires_nothing() {
    let llm = Rc::new(ScriptedLlm::new([Reply::text(r#"["User prefers Rust"]"#)]));
    let mut f = fixture(&[("I prefer Rust", "ok")], &llm);
    end(&mut f);
    add_turns(&mut f, &[("I prefer Go", "ok")]);
    llm.push(Reply::text(r#"["User prefers Go"]"#));
    llm.push(Reply::text("{not json"));
    let r = end(&mut f);
    assert_eq!((r.added, r.superseded), (1, 0));
    assert!(r.errors[0].starts_with("resolve:"));
    assert_eq!(contents(&mut f).len(), 2);
}

#[test]
fn duplicates_within_a_batch_and_of_stored_memories_are_skipped() {
    let llm = Rc::new(ScriptedLlm::new([Reply::text(r#"["User prefers Rust", "user prefers rust!"]"#)]));
    let mut f = fixture(&[("I prefer Rust", "ok")], &llm);
    let r = end(&mut f);
    assert_eq!((r.candidates, r.added), (1, 1));
    add_turns(&mut f, &[("As I said, I prefer Rust", "ok")]);
    llm.push(Reply::text(r#"["User prefers Rust"]"#));
    llm.push(Reply::text(r#"{"decisions": [{"candidate": 1, "action": "add"}]}"#));
    let r = end(&mut f);
    assert_eq!((r.added, r.skipped), (0, 1), "dedup on write catches what the resolver let through");
}

#[test]
fn the_summary_is_refreshed_after_twenty_messages_and_a_failure_stays_in_the_outbox() {
    let turns: Vec<(String, String)> =
        (0..10).map(|i| (format!("question {i}"), format!("answer {i}"))).collect();
    let turns: Vec<(&str, &str)> = turns.iter().map(|(a, b)| (a.as_str(), b.as_str())).collect();
    let llm = Rc::new(ScriptedLlm::new([Reply::text(r#"{"memories": []}"#), Reply::ServerError]));
    let mut f = fixture(&turns, &llm);
    let r = end(&mut f);
    assert!(!r.complete && !r.summary_updated);
    assert!(r.errors[0].starts_with("summary: LLM: HTTP 503"));
    let record = owed(&mut f).unwrap();
    assert_eq!(record.attempts, 1);
    assert!(record.last_error.is_some());

    // The next run does only what is left: no judge call, one summary call.
    llm.push(Reply::text("The user asked ten questions."));
    let r = end(&mut f);
    assert!(r.complete && r.summary_updated);
    assert_eq!((r.new_messages, r.llm_calls), (0, 1));
    assert!(owed(&mut f).is_none());
    let summary = f.memory.with_session(|s| s.summary().cloned()).unwrap().unwrap();
    assert_eq!(summary.content, "The user asked ten questions.");
    // Covered now: a third run makes no call at all.
    assert_eq!(end(&mut f).llm_calls, 0);
}

#[test]
fn processed_marks_are_written_only_after_the_memories() {
    /// Fails writes of processed marks, as a closed tab would cut them off.
    struct NoMarks(MemoryStore);
    impl Store for NoMarks {
        fn get<'a>(&'a self, key: &'a str) -> crate::ports::LocalBoxFuture<'a, Result<Option<String>>> {
            self.0.get(key)
        }
        fn put_many(&self, items: Vec<(String, String)>) -> crate::ports::LocalBoxFuture<'_, Result<()>> {
            if items.iter().any(|(k, v)| k.starts_with("lt/log/") && v.contains(r#""do":"processed""#)) {
                return Box::pin(async { Err(crate::error::Error::storage("tab closed")) });
            }
            self.0.put_many(items)
        }
        fn delete_many(&self, keys: Vec<String>) -> crate::ports::LocalBoxFuture<'_, Result<()>> {
            self.0.delete_many(keys)
        }
        fn list<'a>(
            &'a self,
            prefix: &'a str,
        ) -> crate::ports::LocalBoxFuture<'a, Result<Vec<(String, String)>>> {
            self.0.list(prefix)
        }
    }
    let llm = Rc::new(ScriptedLlm::new([Reply::text(r#"["User prefers tea"]"#)]));
    let mut f = fixture_on(Rc::new(NoMarks(MemoryStore::new())), &[], &llm, LlmOptions::default());
    f.w.run(f.memory.add(NewMessage { content: "I prefer tea".into(), ..NewMessage::default() })).unwrap();
    let e = f.w.run(f.memory.end_session()).unwrap_err();
    assert_eq!(e.code, ErrorCode::Storage);
    // The memory is stored and the work is still owed.
    assert_eq!(memories(&mut f).len(), 1);
    assert!(owed(&mut f).is_some());
}

#[test]
fn chinese_conversations_get_chinese_prompts_and_rule_fallback() {
    let llm = Rc::new(ScriptedLlm::new([Reply::Hang]));
    let options = LlmOptions { max_retries: 0, timeout_ms: 5_000, ..LlmOptions::default() };
    let turns = [("我喜欢用 Rust 写代码。今天好累", "辛苦了")];
    let mut f = fixture_on(Rc::new(MemoryStore::new()), &turns, &llm, options);
    let r = end(&mut f);
    assert_eq!(r.judge, "rules");
    assert!(r.errors[0].contains("TIMEOUT"));
    assert!(llm.requests()[0].messages[0].content.contains("只输出 JSON"));
    assert_eq!(contents(&mut f), ["用户喜欢用 Rust 写代码"]);
    let found = f.w.run(f.memory.read(|r| r.block("我喜欢用什么语言写代码?", None, None))).unwrap().unwrap();
    let block = fit(&Estimate, &found, 500).text;
    assert!(block.contains("用户喜欢用 Rust 写代码"), "{block}");
}

#[test]
fn a_candidate_the_resolver_judged_new_is_kept_even_when_close_by_characters() {
    let llm = Rc::new(ScriptedLlm::new([Reply::text(r#"["User prefers tea in the morning"]"#)]));
    let mut f = fixture(&[("I prefer tea in the morning", "ok")], &llm);
    end(&mut f);
    add_turns(&mut f, &[("I prefer jazz in the morning", "ok")]);
    llm.push(Reply::text(r#"["User prefers jazz in the morning"]"#));
    llm.push(Reply::text(r#"{"decisions": [{"candidate": 1, "action": "add"}]}"#));
    let r = end(&mut f);
    assert_eq!((r.added, r.skipped), (1, 0), "{r:?}");
    assert_eq!(contents(&mut f).len(), 2);
}

#[test]
fn a_judge_answer_of_thousands_adds_at_most_the_cap_and_says_so() {
    let items: Vec<String> = (0..5_000)
        .map(|i| format!(r#"{{"content": "User owns rare item number {i} of the set {}"}}"#, i * 7919))
        .collect();
    let llm = Rc::new(ScriptedLlm::new([Reply::text(&format!(r#"{{"memories": [{}]}}"#, items.join(",")))]));
    let mut f = fixture(&[("I like many things", "Tell me more")], &llm);
    let r = end(&mut f);
    assert_eq!(r.judge, "llm");
    assert_eq!(r.candidates as usize, parse::MAX_JUDGED_MEMORIES);
    assert_eq!(contents(&mut f).len(), r.added as usize);
    assert!(r.added as usize <= parse::MAX_JUDGED_MEMORIES && r.added > 0, "{r:?}");
    assert_eq!(
        r.errors,
        [format!("the judge listed 5000 memories; the first {} were kept", parse::MAX_JUDGED_MEMORIES)]
    );
}

#[test]
fn the_kind_the_judge_gives_is_stored_and_an_event_takes_its_date() {
    let llm = Rc::new(ScriptedLlm::new([Reply::text(
        r#"{"memories": [
            {"content": "The user lives in Porto", "kind": "state", "importance": 8},
            {"content": "The user ran the Lisbon half marathon on 3 May 2023", "kind": "event", "importance": 6},
            {"content": "The user trains on Sundays", "importance": 5}
        ]}"#,
    )]));
    let mut f = fixture(&[("I moved to Porto, and I ran the Lisbon half on 3 May 2023", "Well done!")], &llm);
    end(&mut f);
    let prompt = &llm.requests()[0].messages[0].content;
    assert!(prompt.contains("\"kind\""), "the judge is asked for the kind");
    let stored = memories(&mut f);
    let by = |text: &str| stored.iter().find(|e| e.content.contains(text)).unwrap().clone();
    assert_eq!(by("Porto").temporal, Some(crate::entry::Temporal::State));
    let run = by("half marathon");
    assert_eq!(run.temporal, Some(crate::entry::Temporal::Event));
    assert_eq!(run.valid_from, Some(crate::dates::ms_of(2023, 5, 3)));
    // Without a kind, the rules decide: no date, a state.
    assert_eq!(by("Sundays").temporal, Some(crate::entry::Temporal::State));
}

#[test]
fn a_session_another_instance_is_ending_is_left_to_it_and_judged_once() {
    let llm = Rc::new(ScriptedLlm::new([Reply::text(
        r#"{"memories": [{"content": "The user lives in Lisbon"}]}"#,
    )]));
    let mut f = fixture(&[("I live in Lisbon and work as a nurse", "Nice!")], &llm);
    // Another process took the lease a moment ago.
    let other = crate::llm::lease::Lease::new(f.w.store.clone(), "s1", 99);
    assert!(f.w.run(other.take(f.clock.now_ms())).unwrap());
    let r = end(&mut f);
    assert_eq!((r.llm_calls, r.added, r.complete), (0, 0, false), "{r:?}");
    assert!(r.errors[0].contains("another instance is ending this session"), "{:?}", r.errors);
    assert!(owed(&mut f).is_some(), "still owed");
    // Its lease ends (it died, say): the next end judges, once, and lets go.
    f.clock.advance(crate::llm::lease::LEASE_MS);
    let r = end(&mut f);
    assert_eq!((r.llm_calls, r.added, r.complete), (1, 1, true), "{r:?}");
    let store = f.w.store.clone();
    let lease = f.w.run(store.get(&crate::store::layout::ending_key("s1"))).unwrap();
    assert!(lease.is_none(), "released");
}
