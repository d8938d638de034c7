//! The LLM pipeline. The model is reached only through the host's hook
//! (the [`Llm`](crate::ports::Llm) port); everything around it is here and
//! pure: governed calls ([`governor`]), prompts in English and Chinese
//! ([`prompts`]), tolerant parsing of answers ([`parse`]), the rule judge
//! that stands in when the model fails ([`rules`]), map-reduce compression
//! ([`compress`]), session-end consolidation ([`consolidate`]), the
//! durable record of unfinished work ([`outbox`]) and the OpenAI-compatible
//! wire format every binding speaks ([`openai`]).

pub mod compress;
pub mod consolidate;
pub mod governor;
pub mod lease;
pub mod openai;
pub mod outbox;
pub mod parse;
pub mod prompts;
pub mod rules;

#[cfg(test)]
pub(crate) mod testing;
