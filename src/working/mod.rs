//! Working memory: one session's conversation and the request built from it.
//!
//! | module | concept |
//! |---|---|
//! | [`message`] | the OpenAI-style `ChatMessage` a request holds, and what a message costs in tokens |
//! | [`conversation`] | the live messages, bounded in tokens and count, FIFO eviction into pending compression |
//! | [`window`] | which messages a request sends: newest first, tool calls with their results, summary inside the budget |
//! | [`context`] | the whole request: system text, long-term block, summary, window, and where every token went |
//! | [`session`] | a session on a store: writes before memory, positions that never collide, catching up with other writers |
//! | [`prompt`] | a prompt a framework hands over whole: its system text, its turn's new messages, what it recalls with |

// The request's window is built in the hot paths' crate (src/lib.rs).
#[cfg(test)]
pub mod context;
pub mod conversation;
#[cfg(test)]
pub mod message;
pub mod prompt;
pub mod session;
#[cfg(test)]
pub mod window;
#[cfg(not(test))]
pub use agent_memory_hot::working::{context, message, window};
