//! The ports through which the core reaches the outside world. Each has a
//! native implementation for tests and a JS-backed one in the binding layer,
//! so the logic that uses them never sees a JS type. Two ports live with
//! their implementations: `Store` in [`crate::store`] (a layer above this
//! one: docs/architecture.md, "Layers") and `Tokenizer` in [`crate::tokens`].
//!
//! Futures are `!Send` on purpose: wasm is single-threaded and JS promises
//! cannot cross threads.

use std::future::Future;
use std::pin::Pin;

use serde::{Deserialize, Serialize};

use crate::budget::Usage;
use crate::error::{Error, Result};

pub mod cipher;
pub mod clock;
pub mod lock;
pub mod spawn;

pub use cipher::Cipher;
pub use clock::Clock;
pub use lock::{Lock, LockGuard, NamedLock};
pub use spawn::Spawn;

pub type LocalBoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + 'a>>;

/// One message of an LLM request, in OpenAI chat form.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LlmMessage {
    pub role: String,
    pub content: String,
}

/// What the library asks the model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LlmRequest {
    pub messages: Vec<LlmMessage>,
    /// Ask for a JSON object (OpenAI `response_format: {type: "json_object"}`).
    #[serde(default)]
    pub json: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<u32>,
}

/// What came back, with the provider's usage when it reported one.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LlmResponse {
    pub content: String,
    #[serde(default)]
    pub usage: Option<Usage>,
}

/// A failed model call, and whether trying again may help (HTTP 429, 5xx,
/// a network error) or not (HTTP 400, 401: the same request fails again).
#[derive(Debug, Clone, PartialEq)]
pub struct LlmFailure {
    pub error: Error,
    pub retryable: bool,
    /// The provider's `Retry-After`, when it sent one.
    pub retry_after_ms: Option<u32>,
}

impl LlmFailure {
    pub fn retryable(error: Error) -> Self {
        LlmFailure { error, retryable: true, retry_after_ms: None }
    }

    pub fn fatal(error: Error) -> Self {
        LlmFailure { error, retryable: false, retry_after_ms: None }
    }
}

/// The host's model. The library never holds a key and never calls the
/// network itself: the host hook does. Dropping the future abandons the
/// call (the JS binding aborts the request).
pub trait Llm {
    fn complete(
        &self,
        request: LlmRequest,
    ) -> LocalBoxFuture<'_, std::result::Result<LlmResponse, LlmFailure>>;
}

/// The host's embedding model; retrieval works without one.
pub trait Embedder {
    /// Identifies the model, stored with each vector so that vectors of
    /// different models are never compared.
    fn model(&self) -> &str;
    fn embed(&self, texts: Vec<String>) -> LocalBoxFuture<'_, Result<Vec<Vec<f32>>>>;
}
