//! Values between the world's records and the core's types.

use std::collections::BTreeMap;

use engine::longterm::records::Remembered;
use engine::working::message::ChatMessage;
use engine::{ErrorCode, MemoryEntry, Role, ToolCall};

use crate::agent_memory::core::types;
use crate::exports::agent_memory::core::api;

pub fn error(e: engine::Error) -> types::Error {
    use types::ErrorCode as C;
    let code = match e.code {
        ErrorCode::InvalidInput => C::InvalidInput,
        ErrorCode::NotFound => C::NotFound,
        ErrorCode::Storage => C::Storage,
        ErrorCode::QuotaExceeded => C::QuotaExceeded,
        ErrorCode::TokenizerPack => C::TokenizerPack,
        ErrorCode::Llm => C::Llm,
        ErrorCode::Embedder => C::Embedder,
        ErrorCode::Timeout => C::Timeout,
        ErrorCode::Aborted => C::Aborted,
        ErrorCode::LimitExceeded => C::LimitExceeded,
        ErrorCode::StorageTimeout => C::StorageTimeout,
        ErrorCode::Busy => C::Busy,
        ErrorCode::Blocked => C::Blocked,
        ErrorCode::Freed => C::Freed,
        ErrorCode::Decryption => C::Decryption,
        ErrorCode::SyncVersion => C::SyncVersion,
        ErrorCode::SyncTransport => C::SyncTransport,
        ErrorCode::Closed => C::Closed,
    };
    types::Error { code, message: e.message }
}

pub fn from_role(role: types::Role) -> Role {
    match role {
        types::Role::System => Role::System,
        types::Role::User => Role::User,
        types::Role::Assistant => Role::Assistant,
        types::Role::Tool => Role::Tool,
    }
}

fn to_role(role: Role) -> types::Role {
    match role {
        Role::System => types::Role::System,
        Role::User => types::Role::User,
        Role::Assistant => types::Role::Assistant,
        Role::Tool => types::Role::Tool,
    }
}

pub fn metadata(pairs: Vec<(String, String)>) -> BTreeMap<String, String> {
    pairs.into_iter().collect()
}

pub fn tool_calls(calls: Vec<types::ToolCall>) -> Vec<ToolCall> {
    calls.into_iter().map(|c| ToolCall { id: c.id, name: c.name, arguments: c.arguments }).collect()
}

fn out_calls(calls: &[ToolCall]) -> Vec<types::ToolCall> {
    calls
        .iter()
        .map(|c| types::ToolCall { id: c.id.clone(), name: c.name.clone(), arguments: c.arguments.clone() })
        .collect()
}

pub fn entry(e: &MemoryEntry) -> types::Entry {
    types::Entry {
        id: e.id.clone(),
        content: e.content.clone(),
        kind: e.kind.as_str().to_string(),
        role: to_role(e.role),
        scope: e.scope.to_string(),
        timestamp: e.timestamp,
        importance: e.importance,
        metadata: e.metadata.iter().map(|(k, v)| (k.clone(), v.clone())).collect(),
        tool_calls: out_calls(&e.tool_calls),
        tool_call_id: e.tool_call_id.clone(),
        superseded_by: e.superseded_by.clone(),
        sources: e.sources.clone(),
    }
}

pub fn chat_message(m: &ChatMessage) -> types::ChatMessage {
    types::ChatMessage {
        role: to_role(m.role),
        content: m.content.clone(),
        tool_calls: m
            .tool_calls
            .iter()
            .map(|c| types::ToolCall {
                id: c.id.clone(),
                name: c.function.name.clone(),
                arguments: c.function.arguments.clone(),
            })
            .collect(),
        tool_call_id: m.tool_call_id.clone(),
    }
}

pub fn remembered(r: Remembered) -> api::Remembered {
    match r {
        Remembered::Stored { entry: e } => api::Remembered::Stored(entry(&e)),
        Remembered::Superseded { entry: e, superseded, .. } => {
            api::Remembered::Superseded((entry(&e), superseded))
        }
        Remembered::Duplicate { existing, .. } => api::Remembered::Duplicate(entry(&existing)),
    }
}
