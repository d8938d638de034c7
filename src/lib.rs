//! agent-memory: the memory engine for LLM chat apps and agents.
//!
//! The crate is a pure core (plain Rust, tested natively) and one binding
//! layer for JavaScript (compiled only for wasm32):
//!
//! | module | concept |
//! |---|---|
//! | [`entry`] | `MemoryEntry`: kind, role, scope, timestamp, metadata, token counts |
//! | [`tokens`] | the `Tokenizer` port: the estimate, exact cl100k / o200k from packs, budget helpers |
//! | [`budget`] | `TokenBudget`: the context window split, compression trigger, usage report |
//! | [`store`] | the `Store` port, the in-memory store and the backend conformance suite |
//! | [`clock`] | the `Clock` port |
//! | [`ports`] | the `Llm` and `Embedder` ports and the types they exchange |
//! | [`llm`] | the LLM pipeline: governed calls, prompts and parsers, compression, session end, outbox |
//! | [`error`] | errors as values with stable codes |
//! | `wasm` | the JS API: classes, JS-backed ports (IndexedDB, storage adapters, hooks) |

pub mod budget;
pub mod context;
pub mod conversation;
pub mod dedup;
pub mod entry;
pub mod error;
pub mod llm;
pub mod longterm;
pub mod memory;
pub mod message;
pub mod ports;
pub mod recall;
pub mod retrieval;
pub mod session;
pub mod store;
pub mod tokens;
pub mod window;

#[cfg(target_arch = "wasm32")]
pub mod wasm;

pub use budget::{BudgetOptions, TokenBudget, Usage, UsageReport};
pub use entry::{Kind, MemoryEntry, Role, Scope, TokenCounts, ToolCall};
pub use error::{Error, ErrorCode, Result};
pub use tokens::{BpeTokenizer, Estimate, Tokenizer, TokenizerId};
