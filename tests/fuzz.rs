//! Fuzz targets for the entry points that parse or slice untrusted text:
//! the analyzer, the budget split of the long-term block, the model's
//! output repair, export documents, stored records read back at open,
//! redaction, prompt fences and tokenizer packs.
//! (The pre-tokenizer and counter are fuzzed against `bpe-openai` in
//! `tokenizer_parity.rs`, window assembly in `window_props.rs`.)
//!
//! Each target is a proptest named `fuzz_*`. The test command runs a few
//! hundred cases each; `STAGES=fuzz npm run --silent bench:reliability`
//! runs them all with `FUZZ_CASES` cases each and reports executions and
//! findings. A finding
//! becomes a regression test (proptest also keeps its seed in
//! `tests/fuzz.proptest-regressions`).
#![cfg(not(target_arch = "wasm32"))]

mod common;

use std::rc::Rc;

use agent_memory::entry::Scope;
use agent_memory::error::ErrorCode;
use agent_memory::fence::{count_fences, defuse, TAGS};
use agent_memory::llm::outbox;
use agent_memory::llm::parse::{extract_json, parse_judge, parse_resolve, Decision};
use agent_memory::longterm::records::{new_memory, ExportDocument};
use agent_memory::longterm::{LongTermMemory, LongTermOptions};
use agent_memory::ports::clock::{Clock, ManualClock};
use agent_memory::redact::{Place, RedactOptions, Redactor};
use agent_memory::retrieval::analyzer::{analyze, analyze_query};
use agent_memory::retrieval::block::long_term_block;
use agent_memory::retrieval::{Bm25Params, Explain, Hit, IndexDoc, SearchIndex, SearchOptions};
use agent_memory::store::{DamageLog, MemoryStore, Store};
use agent_memory::tokens::{pack, BpeTokenizer, Estimate, Tokenizer, TokenizerId};
use agent_memory::working::session::{NewMessage, Session, SessionOptions};
use common::cases;
use futures::executor::block_on;
use proptest::prelude::*;

/// Text as it comes: any Unicode (controls, surrogates' neighbours, CJK,
/// emoji, combining marks), or words and markup that parsers care about.
fn text() -> impl Strategy<Value = String> {
    prop_oneof![
        any::<String>(),
        "(\\PC|[ \\t\\r\\n])*",
        prop::collection::vec(
            prop::sample::select(vec![
                "{",
                "}",
                "[",
                "]",
                "\"",
                "\\",
                ":",
                ",",
                "```json\n",
                "```",
                "null",
                "1e999",
                "-0",
                "\u{0}",
                "memories",
                "content",
                "importance",
                "sources",
                "decision",
                "supersede",
                "<memory>",
                "</memory>",
                "[[NEW]]",
                "我喜欢",
                "é",
                "\u{301}",
                "😀",
                " ",
                "\n",
                "a1",
                "3",
                "true",
            ]),
            0..60,
        )
        .prop_map(|parts| parts.concat()),
    ]
}

/// Text made of the pieces the redaction detectors look for.
fn identifiers() -> impl Strategy<Value = String> {
    prop_oneof![
        text(),
        prop::collection::vec(
            prop::sample::select(vec![
                "ada",
                "@",
                ".",
                "example",
                "com",
                "+",
                "351",
                " ",
                "-",
                "(",
                ")",
                "4111",
                "1111",
                "DE89",
                "3704",
                "0044",
                "GB82",
                "WEST",
                "sk-",
                "proj",
                "AbCdEf0123456789XyZ",
                "AKIA",
                "_",
                "é",
                "😀",
                "2026-12-01",
                "\n",
                "0",
                "9",
                "x",
            ]),
            0..40,
        )
        .prop_map(|parts| parts.concat()),
    ]
}

/// A valid sample with random edits: cut short, characters inserted or
/// removed, as a model's output breaks.
fn mutated(samples: Vec<String>) -> impl Strategy<Value = String> {
    let edits = prop::collection::vec((0u8..3, any::<prop::sample::Index>(), any::<char>()), 0..6);
    (prop::sample::select(samples), edits).prop_map(|(sample, edits)| {
        let mut chars: Vec<char> = sample.chars().collect();
        for (op, at, c) in edits {
            let i = at.index(chars.len() + 1);
            match op {
                0 => chars.truncate(i),
                1 => chars.insert(i, c),
                _ if i < chars.len() => {
                    chars.remove(i);
                }
                _ => {}
            }
        }
        chars.into_iter().collect()
    })
}

const JUDGE_REPLIES: &[&str] = &[
    r#"{"memories":[{"content":"Lives in Lisbon","category":"fact","layer":"user","importance":8,"sources":[1,2]}]}"#,
    r#"```json
[{"content":"Prefers tea","importance":"7","sources":["3"]},{"content":"","importance":99}]
```"#,
    r#"Sure! {"items":[{"content":"Has two cats","layer":"agent","importance":-4,"sources":[9]}]} hope this helps"#,
    r#"{"memories":null}"#,
];

const RESOLVE_REPLIES: &[&str] = &[
    r#"{"decisions":[{"candidate":0,"decision":"add"},{"candidate":1,"decision":"supersede","ids":["a1"]}]}"#,
    r#"[{"candidate":2,"decision":"skip"},{"candidate":"1","decision":"supersede","ids":["zz"]}]"#,
];

fn hit(text: String, scope: Scope, score: f64) -> Hit {
    Hit {
        id: format!("h{score}"),
        score,
        text,
        scope,
        timestamp: 1_700_000_000_000,
        long_term: true,
        explain: Explain::default(),
        origin: None,
        sources: Vec::new(),
        cut: false,
    }
}

fn export_json() -> String {
    let e = new_memory("Lives in Lisbon", Scope::User, 1_700_000_000_000);
    let doc = ExportDocument {
        format: "agent-memory".into(),
        version: 1,
        exported_at: 1,
        entries: vec![e],
        count: Some(1),
        processed: [("abc".to_string(), 1_800_000_000_000)].into(),
    };
    serde_json::to_string(&doc).unwrap()
}

/// A namespace written through the real paths: messages, a memory, a
/// processed mark, owed work. Returns its store and keys.
fn populated() -> (Rc<MemoryStore>, Vec<(String, String)>) {
    let store = Rc::new(MemoryStore::new());
    let clock = Rc::new(ManualClock::new(1_700_000_000_000));
    block_on(async {
        let mut s =
            Session::open("chat", store.clone(), Rc::new(Estimate), clock.clone(), SessionOptions::default())
                .await
                .unwrap();
        for content in ["I live in Lisbon", "Noted.", "我喜欢用 Rust 写代码"] {
            let m: NewMessage =
                serde_json::from_value(serde_json::json!({ "role": "user", "content": content })).unwrap();
            s.add(m).await.unwrap();
        }
        let mut lt =
            LongTermMemory::open(store.clone(), clock.clone(), LongTermOptions::default()).await.unwrap();
        lt.remember(new_memory("Lives in Lisbon", Scope::User, clock.now_ms())).await.unwrap();
        lt.remember(new_memory("Agent lesson: retry on 429", Scope::Agent("coder".into()), clock.now_ms()))
            .await
            .unwrap();
        // Written together: one record holding the three.
        let together = ["Prefers tea to coffee", "Has a dog named Pixel", "Runs on Sundays"];
        lt.remember_many(together.iter().map(|t| new_memory(*t, Scope::User, clock.now_ms())).collect())
            .await
            .unwrap();
        lt.mark_processed(&["h1".to_string()], 86_400_000).await.unwrap();
        let owed = outbox::OutboxRecord {
            session_id: "chat".into(),
            since: clock.now_ms(),
            attempts: 1,
            last_error: None,
        };
        outbox::put(store.as_ref(), &owed).await.unwrap();
    });
    let records = block_on(store.list("")).unwrap();
    assert!(
        records.iter().any(|(k, v)| k.starts_with("lt/log/")
            && v.contains("Runs on Sundays")
            && v.contains("Has a dog")),
        "one record of the three"
    );
    (store, records)
}

/// A small pack (the 256 bytes and merges up to "hello world"), to damage.
fn small_pack() -> Vec<u8> {
    let merges: [&[u8]; 8] = [b"he", b"ll", b"hell", b"hello", b" w", b"or", b" wor", b"ld"];
    let tokens: Vec<Vec<u8>> =
        (0..=255u8).map(|b| vec![b]).chain(merges.iter().map(|t| t.to_vec())).collect();
    let refs: Vec<&[u8]> = tokens.iter().map(|t| t.as_slice()).collect();
    pack::encode(TokenizerId::O200k, &refs).unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases(256)))]

    /// Terms are non-empty and the index answers any query about any text.
    #[test]
    fn fuzz_analyzer(doc in text(), query in text()) {
        prop_assert!(analyze(&doc).iter().all(|t| !t.is_empty()));
        prop_assert!(analyze_query(&query).iter().all(|t| !t.is_empty()));
        let mut index = SearchIndex::new(Bm25Params::default());
        index.add(IndexDoc {
            id: "d".into(), text: doc, context: None, scope: Scope::User, timestamp: 0,
            importance: 0.5, long_term: true, embedding: None, origin: None, sources: Vec::new(),
        }).unwrap();
        let hits = index.search(&query, None, 0, &SearchOptions::default()).unwrap();
        prop_assert!(hits.len() <= 1);
        prop_assert!(hits.iter().all(|h| h.score.is_finite()));
    }

    /// The block stays within its budget, fence closed, whatever the texts.
    #[test]
    fn fuzz_budget_split(texts in prop::collection::vec((text(), 0u8..3), 0..12), budget in 0u32..400,
                         share in 0.0f64..=1.0) {
        let hits: Vec<Hit> = texts.into_iter().enumerate().map(|(i, (t, s))| {
            let scope = match s { 0 => Scope::User, 1 => Scope::Agent("coder".into()), _ => Scope::Session };
            hit(t, scope, i as f64)
        }).collect();
        let block = long_term_block(&Estimate, &hits, budget, share).text;
        prop_assert!(Estimate.count(&block) as u32 <= budget, "{} > {budget}: {block:?}", Estimate.count(&block));
        if !block.is_empty() {
            prop_assert!(block.starts_with("<memory>") && block.trim_end().ends_with("</memory>"));
            prop_assert_eq!(block.matches("</memory>").count(), 1, "a text closed the fence: {:?}", block);
        }
    }

    /// The model's output, broken any way: candidates are well-formed and
    /// cite only messages the model was shown; every candidate gets a decision.
    #[test]
    fn fuzz_llm_output(reply in prop_oneof![text(), mutated(JUDGE_REPLIES.iter().chain(RESOLVE_REPLIES).map(|s| s.to_string()).collect())]) {
        let _ = extract_json(&reply);
        if let Ok(candidates) = parse_judge(&reply, |n| (1..=5).contains(&n).then(|| format!("m{n}"))) {
            for c in &candidates {
                prop_assert!(!c.content.trim().is_empty());
                prop_assert!((0.0..=1.0).contains(&c.importance), "{}", c.importance);
                prop_assert!(c.sources.iter().all(|s| ["m1", "m2", "m3", "m4", "m5"].contains(&s.as_str())));
            }
        }
        if let Some(decisions) = parse_resolve(&reply, 3, |_, alias| alias == "a1") {
            prop_assert_eq!(decisions.len(), 3);
            for d in decisions {
                if let Decision::Supersede(ids) = d {
                    prop_assert!(ids.iter().all(|id| id == "a1"));
                }
            }
        }
    }

    /// An export document, broken any way: import succeeds or is a typed
    /// error, and what it stored opens again without damage.
    #[test]
    fn fuzz_import_document(doc in prop_oneof![text(), mutated(vec![export_json()])]) {
        let Ok(parsed) = serde_json::from_str::<ExportDocument>(&doc) else { return Ok(()) };
        let store = Rc::new(MemoryStore::new());
        let clock = Rc::new(ManualClock::new(1_700_000_000_000));
        block_on(async {
            let mut lt = LongTermMemory::open(store.clone(), clock.clone(), LongTermOptions::default()).await.unwrap();
            let imported = lt.import(parsed).await.is_ok();
            let damage = Rc::new(DamageLog::default());
            let again = LongTermMemory::open_with(store.clone(), clock, LongTermOptions::default(), damage.clone()).await;
            prop_assert!(again.is_ok());
            prop_assert!(damage.list().is_empty(), "import stored damage ({imported}): {:?}", damage.list());
            if !imported {
                prop_assert!(store.list("lt/log/").await.unwrap().is_empty(), "a failed import stored memories");
            }
            Ok(())
        })?;
    }

    /// Stored records damaged any way: the namespace still opens, the
    /// damage is reported, untouched memories are all there, writes work.
    #[test]
    fn fuzz_stored_records(edits in prop::collection::vec((any::<prop::sample::Index>(), prop_oneof![text(), mutated(vec![export_json()])]), 1..6),
                           extra in prop::collection::vec((prop::sample::select(vec!["lt/log/", "lt/head/", "lt/index/", "lt/chunk/", "lt/entry/", "lt/processed/", "lt/meta/epoch", "session/chat/", "outbox/", "lt/vector/"]), text(), text()), 0..4)) {
        let (store, records) = populated();
        let mut damaged_keys = Vec::new();
        let mut writes = Vec::new();
        for (at, value) in edits {
            let (key, _) = &records[at.index(records.len())];
            damaged_keys.push(key.clone());
            writes.push((key.clone(), value));
        }
        for (prefix, suffix, value) in extra {
            let key = if prefix.ends_with('/') { format!("{prefix}{suffix}") } else { prefix.to_string() };
            damaged_keys.push(key.clone());
            writes.push((key, value));
        }
        block_on(store.put_many(writes)).unwrap();
        let clock = Rc::new(ManualClock::new(1_700_000_000_000));
        let damage = Rc::new(DamageLog::default());
        block_on(async {
            let mut lt = LongTermMemory::open_with(store.clone(), clock.clone(), LongTermOptions::default(), damage.clone())
                .await.map_err(|e| TestCaseError::fail(format!("long-term memory did not open: {e}")))?;
            let session = Session::open_with("chat", store.clone(), Rc::new(Estimate), clock.clone(), SessionOptions::default(), damage.clone())
                .await.map_err(|e| TestCaseError::fail(format!("the session did not open: {e}")))?;
            let _ = session.history().await.map_err(|e| TestCaseError::fail(format!("history: {e}")))?;
            let _ = outbox::list(store.as_ref(), &damage).await.map_err(|e| TestCaseError::fail(format!("outbox: {e}")))?;
            for d in damage.list() {
                prop_assert!(damaged_keys.contains(&d.key), "{} reported, not damaged", d.key);
            }
            for (_, value) in records.iter().filter(|(k, _)| k.starts_with("lt/log/") && !damaged_keys.contains(k)) {
                // A record holds an operation per line after its first.
                let ids: Vec<String> = value.split('\n').skip(1)
                    .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap()["entry"]["id"].as_str().map(str::to_string))
                    .collect();
                for id in ids {
                    prop_assert!(lt.get(&id).is_some(), "untouched memory {id} lost");
                }
            }
            lt.remember(new_memory("Works after damage", Scope::User, clock.now_ms()))
                .await.map_err(|e| TestCaseError::fail(format!("remember after damage: {e}")))?;
            Ok(())
        })?;
    }

    #[test]
    fn fuzz_redact(text in identifiers()) {
        let redactor = Redactor::new(RedactOptions::default(), None);
        let once = redactor.redact(&text, Place::Message);
        // What is left holds nothing a detector finds: redacting again changes nothing.
        prop_assert_eq!(redactor.redact(&once, Place::Message), once.clone());
    }

    #[test]
    fn fuzz_fences(text in prop_oneof![text(), identifiers()]) {
        let defused = defuse(&text);
        let flat: String = defused.to_lowercase().chars().filter(|c| !c.is_whitespace()).collect();
        for tag in TAGS {
            prop_assert_eq!(count_fences(&flat, tag), (0, 0), "{} survives in {:?}", tag, defused);
        }
    }

    /// A damaged pack, its checksum made good, is refused with TOKENIZER_PACK
    /// or read as a vocabulary that counts; it never panics or runs away.
    #[test]
    fn fuzz_pack(edits in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..8),
                 cut in prop::option::of(any::<prop::sample::Index>()), text in text()) {
        let mut bytes = small_pack();
        let body = bytes.len() - 4;
        for (at, value) in edits {
            bytes[at.index(body)] = value;
        }
        if let Some(cut) = cut {
            bytes.drain(cut.index(body)..body);
        }
        // The checksum made good again, so that the damage reaches the
        // checks of the pairs.
        bytes.truncate(bytes.len() - 4);
        match BpeTokenizer::from_pack(&pack::seal(bytes)) {
            Ok(tok) => {
                prop_assert!(tok.count(&text) <= text.len());
            }
            Err(e) => prop_assert_eq!(e.code, ErrorCode::TokenizerPack, "{}", e.message),
        }
    }
}
