//! Errors as values: every failure the library reports has a stable `code`
//! that callers (and the JS binding, which copies it onto `Error.code`) can
//! match on, and a message meant for humans.

use std::fmt;

/// Stable error codes. The string forms are part of the public API: JS
/// callers match on them, so they never change once released.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(
    feature = "ts",
    derive(ts_rs::TS),
    ts(rename = "CoreErrorCode", rename_all = "SCREAMING_SNAKE_CASE")
)]
pub enum ErrorCode {
    /// An argument or option is missing, of the wrong type, or out of range.
    InvalidInput,
    /// A record that should exist does not.
    NotFound,
    /// The storage backend failed (transaction aborted, adapter threw, …).
    Storage,
    /// The storage backend is out of space.
    QuotaExceeded,
    /// A tokenizer pack is malformed or does not match what was asked for.
    TokenizerPack,
    /// The LLM hook failed, or answered with something unusable.
    Llm,
    /// The embedder hook failed, or answered with something unusable.
    Embedder,
    /// An operation took longer than its configured timeout.
    Timeout,
    /// The caller aborted the operation.
    Aborted,
    /// A configured cap (tokens, calls) would be exceeded.
    LimitExceeded,
    /// A storage call did not settle within the storage timeout (an adapter
    /// whose promise never resolves): the write may or may not have landed.
    StorageTimeout,
    /// A synchronous call came while an async call held the session; await
    /// the async call first.
    Busy,
    /// Another tab holds the database at an older schema version and did not
    /// close it: the upgrade waits for that tab.
    Blocked,
    /// The object was already freed (`free()` or `using`).
    Freed,
    /// Encrypted records cannot be read: no key was given, or none of the
    /// given keys is the one that sealed them.
    Decryption,
    /// A sync peer speaks another version of the sync protocol.
    SyncVersion,
    /// The host's sync transport failed: it rejected, or answered with
    /// something other than bytes.
    SyncTransport,
    /// The memory was closed (`close()`): open it again.
    Closed,
}

impl ErrorCode {
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorCode::InvalidInput => "INVALID_INPUT",
            ErrorCode::NotFound => "NOT_FOUND",
            ErrorCode::Storage => "STORAGE",
            ErrorCode::QuotaExceeded => "QUOTA_EXCEEDED",
            ErrorCode::TokenizerPack => "TOKENIZER_PACK",
            ErrorCode::Llm => "LLM",
            ErrorCode::Embedder => "EMBEDDER",
            ErrorCode::Timeout => "TIMEOUT",
            ErrorCode::Aborted => "ABORTED",
            ErrorCode::LimitExceeded => "LIMIT_EXCEEDED",
            ErrorCode::StorageTimeout => "STORAGE_TIMEOUT",
            ErrorCode::Busy => "BUSY",
            ErrorCode::Blocked => "BLOCKED",
            ErrorCode::Freed => "FREED",
            ErrorCode::Decryption => "DECRYPTION",
            ErrorCode::SyncVersion => "SYNC_VERSION",
            ErrorCode::SyncTransport => "SYNC_TRANSPORT",
            ErrorCode::Closed => "CLOSED",
        }
    }
}

/// The library's one error type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error {
    pub code: ErrorCode,
    pub message: String,
}

impl Error {
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        Error { code, message: message.into() }
    }

    pub fn invalid(message: impl Into<String>) -> Self {
        Error::new(ErrorCode::InvalidInput, message)
    }

    pub fn storage(message: impl Into<String>) -> Self {
        Error::new(ErrorCode::Storage, message)
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.code.as_str(), self.message)
    }
}

impl std::error::Error for Error {}

/// For the JS binding: a JS `Error` named `AgentMemoryError` with `code` set
/// to the stable code. Here, beside the type, as the crate that owns `Error`
/// (hot/, lib.rs) is the one that may implement a foreign trait for it.
#[cfg(all(target_arch = "wasm32", target_os = "unknown"))]
impl From<Error> for wasm_bindgen::JsValue {
    fn from(e: Error) -> Self {
        let err = js_sys::Error::new(&e.message);
        err.set_name("AgentMemoryError");
        // Reflect.set on a fresh Error object cannot fail.
        let _ = js_sys::Reflect::set(&err, &"code".into(), &e.code.as_str().into());
        err.into()
    }
}

pub type Result<T> = std::result::Result<T, Error>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_carries_code_and_message() {
        let e = Error::invalid("maxTokens must be a positive integer");
        assert_eq!(e.to_string(), "INVALID_INPUT: maxTokens must be a positive integer");
        assert_eq!(e.code.as_str(), "INVALID_INPUT");
    }
}
