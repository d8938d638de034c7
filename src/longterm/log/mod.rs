//! Long-term memory as an append-only log of immutable operations.
//!
//! Records rewritten in place need a namespace-wide check to stay
//! consistent, and that check refuses writers, or, where it is a read and
//! then a write, lets them fork. Here a writer only ever adds operations
//! ([`op`]): each is named by its stamp and content, so writing one twice,
//! or reading it from two places, is the same operation. The view
//! ([`fold`]) is decided from the set alone: two instances holding the same
//! operations hold the same memories, whatever order they came in, and
//! writers that could not see each other are settled there, by rules every
//! instance applies alike.

pub mod fold;
pub mod landing;
mod legacy;
pub mod op;

// Property tests: proptest is a native dev-dependency only.
#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests;

pub use fold::{Log, View};
pub use op::{Action, Clock, Op, OpId, Stamp};
