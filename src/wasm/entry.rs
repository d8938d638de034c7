//! `createEntry` for JS: the validated way to make a `MemoryEntry`.

use std::collections::BTreeMap;

use serde::Deserialize;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

use super::types::{JsEntryInput, JsMemoryEntry};
use super::{from_js, js_error, now_ms, to_js};
use crate::entry::{new_id, Kind, MemoryEntry, Role, Scope, TokenCounts, ToolCall};
use crate::error::{Error, Result};
use crate::tokens::{estimate_tokens, TokenizerId};

/// What JS may pass; everything but `content` has a default.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct EntryInput {
    pub content: String,
    #[serde(default)]
    pub kind: Option<Kind>,
    #[serde(default)]
    pub role: Option<Role>,
    #[serde(default)]
    pub scope: Option<Scope>,
    #[serde(default)]
    pub timestamp: Option<f64>,
    #[serde(default)]
    pub metadata: BTreeMap<String, String>,
    #[serde(default)]
    pub importance: Option<f32>,
    #[serde(default)]
    pub tool_calls: Vec<ToolCall>,
    #[serde(default)]
    pub tool_call_id: Option<String>,
    #[serde(default)]
    pub sources: Vec<String>,
}

impl EntryInput {
    pub(crate) const FIELDS: &'static [&'static str] = &[
        "content",
        "kind",
        "role",
        "scope",
        "timestamp",
        "metadata",
        "importance",
        "toolCalls",
        "toolCallId",
        "sources",
    ];

    /// Fills defaults (a user conversation message in the session, now) and
    /// validates the result.
    pub(crate) fn into_entry(self, now: i64, default_scope: Scope) -> Result<MemoryEntry> {
        let timestamp = match self.timestamp {
            None => now,
            Some(t) if t.is_finite() && t >= 0.0 && t.fract() == 0.0 => t as i64,
            Some(_) => {
                return Err(Error::invalid(
                    "timestamp must be a whole number of milliseconds since the epoch",
                ))
            }
        };
        let role = self.role.unwrap_or(Role::User);
        let kind = self.kind.unwrap_or(match (role, &default_scope) {
            (Role::Tool, _) => Kind::ToolResult,
            (_, Scope::Session) => Kind::Conversation,
            _ => Kind::Fact,
        });
        let mut tokens = TokenCounts::default();
        let entry = MemoryEntry {
            id: new_id(timestamp),
            content: self.content,
            kind,
            role,
            scope: self.scope.unwrap_or(default_scope),
            timestamp,
            metadata: self.metadata,
            importance: self.importance.unwrap_or(0.5),
            tool_calls: self.tool_calls,
            tool_call_id: self.tool_call_id,
            tokens,
            superseded_by: None,
            valid_to: None,
            sources: self.sources,
        };
        entry.validate()?;
        tokens.set(TokenizerId::Estimate, estimate_tokens(&entry.countable_text()) as u32);
        Ok(MemoryEntry { tokens, ..entry })
    }
}

/// Makes a validated entry with a fresh UUID v7 and its estimated token count.
#[wasm_bindgen(js_name = createEntry)]
pub fn create_entry(input: JsEntryInput) -> std::result::Result<JsMemoryEntry, JsValue> {
    let input: EntryInput = from_js(input.into(), "entry", EntryInput::FIELDS)?;
    let entry = input.into_entry(now_ms(), Scope::Session).map_err(js_error)?;
    Ok(to_js(&entry)?.unchecked_into())
}
