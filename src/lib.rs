//! agent-memory: the memory engine for LLM chat apps and agents.
//!
//! The crate is a pure core (plain Rust, tested natively) and one binding
//! layer for JavaScript (compiled only for wasm32). Every effect goes
//! through a port, so the core, background work and several instances on
//! one store included, runs under `cargo test`.
//!
//! | module | concept |
//! |---|---|
//! | [`memory`] | `Memory`: what an app holds; a session, its namespace's long-term memory, the model's background work, one lock order |
//! | [`working`] | working memory: messages, the conversation window, the request and its report, sessions on a store |
//! | [`longterm`] | long-term memory: `LongTermMemory` (records + search index + the request's block), `Records` (versions, dedup, hashes, export), `dedup` |
//! | [`retrieval`] | `SearchIndex`: BM25 with stems and CJK bigrams, vectors, fusion, decay, MMR, explain; the fenced long-term block |
//! | [`embed`] | the embedder's part: governed, batched calls with a timeout; stored vectors |
//! | [`fence`] | stored text in prompts as data: named fences, fence tags inside the text defused |
//! | [`extract`] | rule extraction: memories from a conversation without a model, third person, dates resolved, with sources |
//! | [`llm`] | the model's part: governed calls, prompts and parsers, rule judge, compression, session end, outbox |
//! | [`tokens`] | the `Tokenizer` port: the estimate, exact cl100k / o200k from packs, truncation |
//! | [`budget`] | `TokenBudget`: the context window split, compression trigger, usage report |
//! | [`store`] | the `Store` port, the in-memory store, damaged records, the backend conformance suite |
//! | [`ports`] | the other ports: `Llm`, `Embedder`, `Clock`, `Lock`, `Spawn` |
//! | [`redact`] | personal data (e-mail, phone, card, IBAN, API keys, the host's patterns) replaced before it is stored or sent |
//! | [`entry`] | `MemoryEntry`: kind, role, scope, timestamp, metadata, token counts |
//! | [`error`] | errors as values with stable codes |
//! | `wasm` | the JS API: classes that wrap one core object each, JS-backed ports (IndexedDB, adapters, Web Locks, hooks) |
//!
//! One turn, natively:
//!
//! ```
//! use std::rc::Rc;
//! use agent_memory::memory::{Memory, MemoryOptions, Ports};
//! use agent_memory::ports::{clock::ManualClock, lock::LocalLocks, LocalBoxFuture, Spawn};
//! use agent_memory::store::MemoryStore;
//! use agent_memory::working::session::{ContextRequest, NewMessage};
//! use agent_memory::{longterm::records::new_memory, Estimate, Scope};
//!
//! struct NoBackground;
//! impl Spawn for NoBackground {
//!     fn spawn(&self, _task: LocalBoxFuture<'static, ()>) {}
//! }
//!
//! futures::executor::block_on(async {
//!     let ports = Ports {
//!         store: Rc::new(MemoryStore::new()),
//!         clock: Rc::new(ManualClock::new(1_700_000_000_000)),
//!         locks: Rc::new(LocalLocks::default()),
//!         spawner: Rc::new(NoBackground),
//!         tokenizer: Rc::new(Estimate),
//!         llm: None,
//!         embedder: None,
//!         long_term: None,
//!         on_damaged: None,
//!         cipher: None,
//!         patterns: None,
//!     };
//!     let options = MemoryOptions { namespace: "user-42".into(), session_id: "chat-7".into(), ..Default::default() };
//!     let memory = Memory::open(options, ports).await.unwrap();
//!     memory.remember(new_memory("Prefers Rust for systems code", Scope::User, 1_700_000_000_000)).await.unwrap();
//!     let question = "Which language for systems code?";
//!     memory.add(NewMessage { content: question.into(), ..Default::default() }).await.unwrap();
//!     let request = ContextRequest { query: Some(question.into()), ..Default::default() };
//!     let ctx = memory.build_context(request).await.unwrap();
//!     assert!(ctx.messages[0].content.contains("Prefers Rust"));
//!     assert_eq!(ctx.report.total, agent_memory::working::context::total_tokens(&Estimate, &ctx.messages));
//! });
//! ```

mod base64;
pub mod embed;
pub mod extract;
mod join;
pub mod llm;
pub mod longterm;
pub mod memory;
pub mod ports;
pub mod redact;
#[cfg(test)]
mod seeded;
mod semaphore;
pub mod store;
pub mod sync;
mod text;
#[cfg(all(feature = "ts", not(target_arch = "wasm32")))]
pub mod ts;
pub mod working;

// The hot paths and what they use are the crate `agent-memory-hot` (hot/),
// built at opt-level 2 while this crate is built for size (Cargo.toml,
// [profile.release]); re-exported here under their own paths. Unit tests
// compile the same files in this crate, where their tests are.
#[cfg(not(test))]
pub use agent_memory_hot::{budget, dates, entry, error, fence, retrieval, tokens};
#[cfg(not(test))]
use agent_memory_hot::{hash, order, script};
#[cfg(test)]
pub mod budget;
#[cfg(test)]
pub mod dates;
#[cfg(test)]
pub mod entry;
#[cfg(test)]
pub mod error;
#[cfg(test)]
pub mod fence;
#[cfg(test)]
mod hash;
#[cfg(test)]
mod order;
#[cfg(test)]
pub mod retrieval;
#[cfg(test)]
mod script;
#[cfg(test)]
pub mod tokens;

#[cfg(all(target_arch = "wasm32", target_os = "unknown"))]
pub mod wasm;

pub use budget::{BudgetOptions, TokenBudget, Usage, UsageReport};
pub use entry::{Kind, MemoryEntry, Role, Scope, TokenCounts, ToolCall};
pub use error::{Error, ErrorCode, Result};
pub use tokens::{BpeTokenizer, Estimate, Tokenizer, TokenizerId};
