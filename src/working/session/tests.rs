//! Sessions on a store: persistence, eviction, windows and their reports.

use super::*;
use crate::error::ErrorCode;
use crate::ports::clock::ManualClock;
use crate::store::MemoryStore;
use crate::tokens::Estimate;
use futures::executor::block_on;
use std::cell::Cell;

/// A store whose writes fail while `fail` is set.
#[derive(Default)]
struct FlakyStore {
    inner: MemoryStore,
    fail: Cell<bool>,
}

impl Store for FlakyStore {
    fn get<'a>(&'a self, key: &'a str) -> LocalBoxFuture<'a, Result<Option<String>>> {
        self.inner.get(key)
    }
    fn put_many(&self, items: Vec<(String, String)>) -> LocalBoxFuture<'_, Result<()>> {
        if self.fail.get() {
            return Box::pin(async { Err(Error::storage("disk on fire")) });
        }
        self.inner.put_many(items)
    }
    fn delete_many(&self, keys: Vec<String>) -> LocalBoxFuture<'_, Result<()>> {
        self.inner.delete_many(keys)
    }
    fn list<'a>(&'a self, prefix: &'a str) -> LocalBoxFuture<'a, Result<Vec<(String, String)>>> {
        self.inner.list(prefix)
    }
}

struct Source(Result<String>);

impl LongTermSource for Source {
    fn block<'a>(&'a self, _query: &'a str, _budget: u32) -> LocalBoxFuture<'a, Result<LongTermBlock>> {
        let r = self.0.clone().map(LongTermBlock::from);
        Box::pin(async move { r })
    }
}

fn open(id: &str, store: Rc<dyn Store>, options: SessionOptions) -> Session {
    block_on(Session::open(id, store, Rc::new(Estimate), Rc::new(ManualClock::new(1_000)), options)).unwrap()
}

fn user(content: &str) -> NewMessage {
    NewMessage { role: Some(Role::User), content: content.into(), ..Default::default() }
}

fn assistant(content: &str) -> NewMessage {
    NewMessage { role: Some(Role::Assistant), content: content.into(), ..Default::default() }
}

#[test]
fn messages_persist_and_reload_in_order() {
    let store: Rc<dyn Store> = Rc::new(MemoryStore::new());
    let mut s = open("chat-1", store.clone(), SessionOptions::default());
    block_on(s.add(user("hello"))).unwrap();
    block_on(s.add(assistant("hi there"))).unwrap();
    let again = open("chat-1", store.clone(), SessionOptions::default());
    assert_eq!(again.messages(), s.messages());
    assert_eq!(again.messages()[0].timestamp, 1_000);
    let other = open("chat-2", store, SessionOptions::default());
    assert!(other.messages().is_empty());
}

#[test]
fn a_failed_write_is_an_error_and_leaves_memory_unchanged() {
    let store = Rc::new(FlakyStore::default());
    let mut s = open("chat", store.clone(), SessionOptions::default());
    block_on(s.add(user("kept"))).unwrap();
    store.fail.set(true);
    let err = block_on(s.add(user("lost?"))).unwrap_err();
    assert_eq!(err.code, ErrorCode::Storage);
    assert_eq!(s.messages().len(), 1);
    store.fail.set(false);
    block_on(s.add(user("retried"))).unwrap();
    let reloaded = open("chat", store, SessionOptions::default());
    let contents: Vec<_> = reloaded.messages().into_iter().map(|m| m.content).collect();
    assert_eq!(contents, ["kept", "retried"]);
}

#[test]
fn an_imported_message_keeps_its_time_and_its_place_in_order() {
    let store: Rc<dyn Store> = Rc::new(MemoryStore::new());
    let mut s = open("chat", store.clone(), SessionOptions::default());
    block_on(s.add(user("now"))).unwrap();
    let old = NewMessage { timestamp: Some(86_400_000), ..user("said long ago") };
    let e = block_on(s.add(old)).unwrap();
    assert_eq!(e.timestamp, 86_400_000);
    let contents: Vec<String> = block_on(s.history()).unwrap().into_iter().map(|m| m.content).collect();
    assert_eq!(contents, ["now", "said long ago"], "added after: kept after");
    for bad in [-1, crate::entry::MAX_TIMESTAMP_MS + 1] {
        let e = block_on(s.add(NewMessage { timestamp: Some(bad), ..user("x") })).unwrap_err();
        assert_eq!(e.code, ErrorCode::InvalidInput);
    }
}

#[test]
fn invalid_messages_are_rejected_without_a_trace() {
    let store: Rc<dyn Store> = Rc::new(MemoryStore::new());
    let mut s = open("chat", store.clone(), SessionOptions::default());
    let orphan = NewMessage { role: Some(Role::Tool), content: "42".into(), ..Default::default() };
    assert_eq!(block_on(s.add(orphan)).unwrap_err().code, ErrorCode::InvalidInput);
    assert!(s.messages().is_empty());
    assert!(block_on(store.list("")).unwrap().is_empty());
}

#[test]
fn sub_agents_write_only_chat_messages_into_the_parent_session() {
    let store: Rc<dyn Store> = Rc::new(MemoryStore::new());
    let mut sub = open("agent:chat", store.clone(), SessionOptions::default());
    block_on(sub.add(user("research this"))).unwrap();
    let call = NewMessage {
        role: Some(Role::Assistant),
        content: String::new(),
        tool_calls: vec![ToolCall { id: "c1".into(), name: "search".into(), arguments: "{}".into() }],
        ..Default::default()
    };
    block_on(sub.add(call)).unwrap();
    let result = NewMessage {
        role: Some(Role::Tool),
        content: "results".into(),
        tool_call_id: Some("c1".into()),
        ..Default::default()
    };
    block_on(sub.add(result)).unwrap();
    block_on(sub.add(assistant("found it"))).unwrap();
    assert_eq!(sub.messages().len(), 4, "the sub-agent keeps its tool traffic in working memory");
    let parent = open("chat", store, SessionOptions::default());
    let contents: Vec<_> = parent.messages().into_iter().map(|m| m.content).collect();
    assert_eq!(contents, ["research this", "found it"]);
}

#[test]
fn session_ids_are_validated() {
    for bad in ["", "a/b", "agent:", "agent:agent:x"] {
        let opened = Session::open(
            bad,
            Rc::new(MemoryStore::new()),
            Rc::new(Estimate),
            Rc::new(ManualClock::new(0)),
            SessionOptions::default(),
        );
        assert_eq!(block_on(opened).err().unwrap().code, ErrorCode::InvalidInput, "{bad:?}");
    }
}

#[test]
fn build_context_merges_system_text_and_reports_sections() {
    let store: Rc<dyn Store> = Rc::new(MemoryStore::new());
    let mut s = open("chat", store, SessionOptions::default());
    let said = block_on(s.add(user("I like Rust"))).unwrap();
    let answered = block_on(s.add(assistant("Noted!"))).unwrap();
    let req = ContextRequest {
        query: Some("What do I like?".into()),
        system: Some("Be brief.".into()),
        ..Default::default()
    };
    let ctx = block_on(s.build_context(&req, Some(&Source(Ok("- likes Rust".into()))))).unwrap();
    let roles: Vec<Role> = ctx.messages.iter().map(|m| m.role).collect();
    assert_eq!(roles, [Role::System, Role::User, Role::Assistant, Role::User]);
    assert!(ctx.messages[0].content.starts_with("Be brief."));
    assert!(ctx.messages[0].content.contains("- likes Rust"));
    assert_eq!(ctx.messages[3].content, "What do I like?");
    let r = &ctx.report;
    assert_eq!(r.total, crate::working::context::total_tokens(&Estimate, &ctx.messages));
    assert!(r.long_term > 0 && r.system > 0 && r.query > 0);
    assert_eq!(r.free, r.limit - r.total);
    assert_eq!(r.limit, 198_000);
    assert!(r.long_term_error.is_none());
    assert_eq!(
        r.sent_ids,
        [said.id, answered.id],
        "the history sent, without the system message or the new one"
    );
}

#[test]
fn a_long_term_failure_degrades_to_no_block() {
    let store: Rc<dyn Store> = Rc::new(MemoryStore::new());
    let mut s = open("chat", store, SessionOptions::default());
    block_on(s.add(user("hi"))).unwrap();
    let req = ContextRequest { query: Some("hi".into()), ..Default::default() };
    let ctx = block_on(s.build_context(&req, Some(&Source(Err(Error::storage("index offline")))))).unwrap();
    assert_eq!(ctx.messages.len(), 1, "the query is already the last message: not repeated");
    assert!(ctx.report.long_term_error.as_deref().unwrap().contains("index offline"));
    assert_eq!(ctx.report.long_term, 0);
}

#[test]
fn context_rounds_limit_the_history_a_turn_sends() {
    let store: Rc<dyn Store> = Rc::new(MemoryStore::new());
    let options = SessionOptions { context_rounds: Some(1), ..Default::default() };
    let mut s = open("chat", store.clone(), options);
    for i in 0..5 {
        block_on(s.add(user(&format!("q{i}")))).unwrap();
        block_on(s.add(assistant(&format!("a{i}")))).unwrap();
    }
    let ctx = block_on(s.build_context(&ContextRequest::default(), None)).unwrap();
    // 3 messages: a3, q4, a4, less the leading assistant.
    let contents: Vec<_> = ctx.messages.iter().map(|m| m.content.as_str()).collect();
    assert_eq!(contents, ["q4", "a4"]);
    let none = SessionOptions { context_rounds: Some(0), ..Default::default() };
    let s0 = open("chat", store, none);
    let q = ContextRequest { query: Some("new".into()), ..Default::default() };
    assert_eq!(block_on(s0.build_context(&q, None)).unwrap().messages.len(), 1);
}

#[test]
fn eviction_feeds_pending_compression_and_a_summary_replaces_it() {
    let store: Rc<dyn Store> = Rc::new(MemoryStore::new());
    let options = SessionOptions { max_tokens: Some(60), retain_recent_rounds: 1, ..Default::default() };
    let mut s = open("chat", store.clone(), options.clone());
    for i in 0..10 {
        block_on(s.add(user(&format!("question number {i}")))).unwrap();
        block_on(s.add(assistant(&format!("answer number {i}")))).unwrap();
    }
    let u = s.usage();
    assert!(u.tokens <= 60);
    assert!(u.pending_compression > 0 && u.compression_due);
    let pending = s.pending_compression();
    assert_eq!(pending[0].content, "question number 0");
    let last = pending.last().unwrap().id.clone();
    block_on(s.commit_summary("The user asked ten numbered questions.".into(), &last)).unwrap();
    assert_eq!(s.usage().pending_compression, 0);
    let ctx = block_on(s.build_context(&ContextRequest::default(), None)).unwrap();
    assert!(ctx.messages[0].content.contains("ten numbered questions"));
    assert!(ctx.report.summary > 0);
    // After a reload, the summary still covers the evicted messages.
    let again = open("chat", store, options);
    assert_eq!(again.usage().pending_compression, 0);
    assert!(again.summary().is_some());
    assert_eq!(again.messages(), s.messages());
}

#[test]
fn the_newest_message_must_fit() {
    let store: Rc<dyn Store> = Rc::new(MemoryStore::new());
    let budget = BudgetOptions { context_window: 4_000, reserved_for_response: 1_000, ..Default::default() };
    let mut s = open("chat", store, SessionOptions { budget, ..Default::default() });
    block_on(s.add(user(&"word ".repeat(20_000)))).unwrap();
    let err = block_on(s.build_context(&ContextRequest::default(), None)).unwrap_err();
    assert_eq!(err.code, ErrorCode::LimitExceeded);
}

#[test]
fn the_token_budget_cuts_the_window_not_a_count() {
    let store: Rc<dyn Store> = Rc::new(MemoryStore::new());
    let mut s = open("chat", store, SessionOptions::default());
    for i in 0..130 {
        block_on(s.add(user(&format!("q{i}")))).unwrap();
        block_on(s.add(assistant(&format!("a{i}")))).unwrap();
    }
    let u = s.usage();
    assert!(!u.compression_due && u.pending_compression == 0, "{u:?}");
    let ctx = block_on(s.build_context(&ContextRequest::default(), None)).unwrap();
    assert_eq!(ctx.report.messages_sent, 260);
    assert_eq!(ctx.report.left_out.older_messages, 0);
}

#[test]
fn messages_cut_by_max_cached_messages_are_reported_left_out() {
    let store: Rc<dyn Store> = Rc::new(MemoryStore::new());
    let options =
        SessionOptions { max_cached_messages: Some(5), retain_recent_rounds: 0, ..Default::default() };
    let mut s = open("chat", store, options);
    s.bound_pending();
    for i in 0..10 {
        block_on(s.add(user(&format!("q{i}")))).unwrap();
        block_on(s.add(assistant(&format!("a{i}")))).unwrap();
    }
    let ctx = block_on(s.build_context(&ContextRequest::default(), None)).unwrap();
    let r = &ctx.report;
    assert_eq!(r.messages_sent + r.left_out.older_messages + r.left_out.leading_assistant, 20, "{r:?}");
    assert!(r.messages_sent <= 5);
    // A summary through the newest evicted message covers all 15 older ones.
    let last = s.pending_compression().last().unwrap().id.clone();
    block_on(s.commit_summary("Ten numbered questions.".into(), &last)).unwrap();
    let ctx = block_on(s.build_context(&ContextRequest::default(), None)).unwrap();
    assert_eq!(ctx.report.left_out.older_messages, 0, "{:?}", ctx.report);
}

#[test]
fn a_section_with_its_heading_stays_within_its_budget() {
    let store: Rc<dyn Store> = Rc::new(MemoryStore::new());
    let options = SessionOptions { max_tokens: Some(60), retain_recent_rounds: 1, ..Default::default() };
    let mut s = open("chat", store, options);
    for i in 0..10 {
        block_on(s.add(user(&format!("question number {i}")))).unwrap();
    }
    let last = s.pending_compression().last().unwrap().id.clone();
    block_on(s.commit_summary("A long summary line.\n".repeat(5_000), &last)).unwrap();
    let block = "- a remembered fact\n".repeat(5_000);
    let q = ContextRequest { query: Some("facts".into()), ..Default::default() };
    let ctx = block_on(s.build_context(&q, Some(&Source(Ok(block))))).unwrap();
    let r = &ctx.report;
    assert!(r.summary > 1_900 && r.summary <= 2_000, "summary section {}", r.summary);
    assert!(r.long_term > 3_900 && r.long_term <= 4_000, "long-term section {}", r.long_term);
    assert!(r.long_term_truncated);
}

#[test]
fn a_summary_budget_of_zero_sends_no_summary_section() {
    let store: Rc<dyn Store> = Rc::new(MemoryStore::new());
    let options = SessionOptions {
        max_tokens: Some(60),
        retain_recent_rounds: 1,
        summary_budget: 0,
        ..Default::default()
    };
    let mut s = open("chat", store, options);
    for i in 0..10 {
        block_on(s.add(user(&format!("question number {i}")))).unwrap();
    }
    let last = s.pending_compression().last().unwrap().id.clone();
    block_on(s.commit_summary("a".into(), &last)).unwrap();
    let ctx = block_on(s.build_context(&ContextRequest::default(), None)).unwrap();
    assert_eq!(ctx.report.summary, 0, "{:?}", ctx.report);
    assert!(!ctx.messages[0].content.contains("<summary>"));
}
