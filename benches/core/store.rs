//! The long-term store's own cost, natively and without IndexedDB: the core
//! half of `npm run bench:store`, which runs this on the same texts and
//! prints it beside the browser's figures (the style of the `bpe` crate's
//! benchmarks: the algorithm's cost apart from the end-to-end one).
//!
//! `cargo bench --bench store -- <texts file>`: one memory per line, as
//! many as 10,000. Each figure is measured `RUNS` times (default 5) on a
//! fresh in-memory store, with the ports the tests use: the write paths of
//! the browser page (200 `remember`s, 1,000 memories by `rememberMany` of
//! 100), opening 10,000 memories until the first search answers, and
//! writing into those 10,000 once a first write made their dedup
//! fingerprints (one `rememberMany` of 100, 20 `remember`s).
//! Prints one JSON object of the runs.

use std::rc::Rc;
use std::time::Instant;

use agent_memory::entry::Scope;
use agent_memory::longterm::records::new_memory;
use agent_memory::memory::{Memory, MemoryOptions, Ports};
use agent_memory::ports::clock::ManualClock;
use agent_memory::ports::lock::LocalLocks;
use agent_memory::ports::{LocalBoxFuture, Spawn};
use agent_memory::retrieval::SearchOptions;
use agent_memory::store::MemoryStore;
use agent_memory::Estimate;
use futures::executor::block_on;

/// Background work (none is queued without a model or an embedder) runs
/// to its end where it is spawned.
struct Inline;

impl Spawn for Inline {
    fn spawn(&self, task: LocalBoxFuture<'static, ()>) {
        block_on(task)
    }
}

fn open(store: Rc<MemoryStore>) -> Memory {
    let ports = Ports {
        store,
        clock: Rc::new(ManualClock::new(1_700_000_000_000)),
        locks: Rc::new(LocalLocks::default()),
        spawner: Rc::new(Inline),
        tokenizer: Rc::new(Estimate),
        llm: None,
        embedder: None,
        long_term: None,
        on_damaged: None,
        cipher: None,
        patterns: None,
    };
    let options = MemoryOptions { namespace: "bench".into(), session_id: "s".into(), ..Default::default() };
    block_on(Memory::open(options, ports)).expect("a memory store opens")
}

fn memories(texts: &[String]) -> Vec<agent_memory::MemoryEntry> {
    texts.iter().map(|t| new_memory(t.clone(), Scope::User, 1_700_000_000_000)).collect()
}

fn main() {
    let path = std::env::args().skip(1).find(|a| !a.starts_with('-')).expect("usage: store <texts file>");
    let texts: Vec<String> =
        std::fs::read_to_string(&path).expect("the texts file").lines().map(str::to_string).collect();
    assert!(texts.len() >= 10_000, "10,000 texts are needed, {path} has {}", texts.len());
    let runs: usize = std::env::var("RUNS").ok().and_then(|r| r.parse().ok()).unwrap_or(5);
    let (mut single, mut batched, mut opened) = (Vec::new(), Vec::new(), Vec::new());
    for run in 0..runs {
        // Each run its own slice of texts, as in the page.
        let at = (run * 1200) % (texts.len() - 1200);
        let m = open(Rc::new(MemoryStore::new()));
        let t = Instant::now();
        for entry in memories(&texts[at..at + 200]) {
            block_on(m.remember(entry)).expect("remember");
        }
        single.push(200.0 / t.elapsed().as_secs_f64());
        let m = open(Rc::new(MemoryStore::new()));
        let t = Instant::now();
        for batch in texts[at..at + 1000].chunks(100) {
            block_on(m.remember_many(memories(batch))).expect("rememberMany");
        }
        batched.push(1000.0 / t.elapsed().as_secs_f64());
    }
    let store = Rc::new(MemoryStore::new());
    let m = open(store.clone());
    for batch in texts[..10_000].chunks(1000) {
        block_on(m.remember_many(memories(batch))).expect("rememberMany");
    }
    let held = block_on(m.memories()).expect("memories").len();
    let mut hits = 0;
    for _ in 0..runs {
        let t = Instant::now();
        let m = open(store.clone());
        hits = block_on(m.search("coffee in the morning", &SearchOptions::default(), None))
            .expect("search")
            .len();
        opened.push(t.elapsed().as_secs_f64() * 1000.0);
    }
    // Into a namespace of 10,000: what a long-lived user's writes cost,
    // each new memory deduplicated against every stored one of its scope.
    // New texts: the first words of one stored text, the last of another.
    let (mut single_10k, mut batched_10k) = (Vec::new(), Vec::new());
    let crossed = |i: usize| {
        let (a, b) = (&texts[i % texts.len()], &texts[(i + texts.len() / 2) % texts.len()]);
        let head: Vec<&str> = a.split_whitespace().take(4).collect();
        let tail: Vec<&str> = b.split_whitespace().skip(4).collect();
        format!("{} {}", head.join(" "), tail.join(" "))
    };
    for run in 0..runs {
        let m = open(store.clone());
        let fresh: Vec<String> = (run * 121..run * 121 + 121).map(crossed).collect();
        // The first write after opening makes every stored memory's dedup
        // fingerprint; what follows is the steady state.
        block_on(m.remember(memories(&fresh[120..]).remove(0))).expect("remember");
        let t = Instant::now();
        block_on(m.remember_many(memories(&fresh[..100]))).expect("rememberMany");
        batched_10k.push(100.0 / t.elapsed().as_secs_f64());
        let t = Instant::now();
        for entry in memories(&fresh[100..120]) {
            block_on(m.remember(entry)).expect("remember");
        }
        single_10k.push(20.0 / t.elapsed().as_secs_f64());
    }
    let list = |xs: &[f64]| xs.iter().map(|x| format!("{x:.1}")).collect::<Vec<_>>().join(",");
    println!(
        "{{\"writes_per_s\":[{}],\"batch_writes_per_s\":[{}],\"open_10k_ms\":[{}],\"into_10k_writes_per_s\":[{}],\"into_10k_batch_writes_per_s\":[{}],\"held\":{held},\"hits\":{hits}}}",
        list(&single),
        list(&batched),
        list(&opened),
        list(&single_10k),
        list(&batched_10k)
    );
}
