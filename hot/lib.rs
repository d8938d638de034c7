//! The hot paths of agent-memory, compiled apart so the release profile can
//! build them for speed (opt-level 2) and the rest of the library for size
//! ("z", Cargo.toml): the tokenizer, the search index (analyzer, BM25,
//! vectors, fusion), dedup and the request's window, with the small modules
//! they use. The sources
//! stay in the library's `src/`; the library re-exports these modules under
//! the same paths, and its unit tests compile them in place (`cargo test`),
//! so tests and paths are as if they had never moved.

#[path = "../src/budget.rs"]
pub mod budget;
#[path = "../src/dates.rs"]
pub mod dates;
#[path = "../src/entry.rs"]
pub mod entry;
#[path = "../src/error.rs"]
pub mod error;
#[path = "../src/fence.rs"]
pub mod fence;
#[doc(hidden)]
#[path = "../src/hash.rs"]
pub mod hash;
#[doc(hidden)]
#[path = "../src/order.rs"]
pub mod order;
#[path = "../src/retrieval/mod.rs"]
pub mod retrieval;
#[doc(hidden)]
#[path = "../src/script.rs"]
pub mod script;
#[path = "../src/tokens/mod.rs"]
pub mod tokens;

#[path = "../src/longterm/dedup/mod.rs"]
#[doc(hidden)]
pub mod dedup;

/// `crate::longterm::dedup`, where the library has it.
pub mod longterm {
    pub use super::dedup;
}

#[doc(hidden)]
#[path = "../src/working/context.rs"]
pub mod context;
#[doc(hidden)]
#[path = "../src/working/message.rs"]
pub mod message;
#[doc(hidden)]
#[path = "../src/working/window.rs"]
pub mod window;

/// `crate::working::{context, message, window}`, where the library has them.
pub mod working {
    pub use super::{context, message, window};
}
