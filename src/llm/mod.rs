//! The LLM pipeline. The model is reached only through the host's hook
//! (the [`Llm`](crate::ports::Llm) port); everything around it is here and
//! pure: governed calls ([`governor`]), prompts in English and Chinese
//! ([`prompts`]), tolerant parsing of answers ([`parse`]), the rule judge
//! that stands in when the model fails ([`rules`]), map-reduce compression
//! ([`compress`]), session-end consolidation ([`consolidate`]) and the
//! durable record of unfinished work ([`outbox`]).

pub mod compress;
pub mod consolidate;
pub mod governor;
pub mod lease;
pub mod outbox;
pub mod parse;
pub mod prompts;
pub mod rules;

#[cfg(test)]
pub(crate) mod testing;
