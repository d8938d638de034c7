//! The OpenAI-style chat message the library hands back for a request, and
//! the token cost of a message as the budget sees it.

use serde::Serialize;

use crate::entry::{MemoryEntry, Role};
use crate::tokens::Tokenizer;

/// Tokens a chat message costs beyond its text (ChatML's role header and
/// separators: `<|im_start|>role\n … <|im_end|>\n`). Counting it keeps a
/// window of many short messages inside the budget.
pub const MESSAGE_OVERHEAD: u32 = 4;

/// Tokens every request costs once, beyond its messages: the provider
/// primes the reply with `<|start|>assistant<|message|>` (OpenAI's documented
/// counting rules). With it, a request's total is the `prompt_tokens` the
/// provider bills.
pub const REPLY_PRIMING: u32 = 3;

#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct FunctionCall {
    pub name: String,
    pub arguments: String,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct OutToolCall {
    pub id: String,
    #[cfg_attr(feature = "ts", ts(type = "\"function\""))]
    #[serde(rename = "type")]
    pub kind: &'static str,
    pub function: FunctionCall,
}

/// One element of a `/chat/completions` `messages` array (field names are
/// OpenAI's, snake_case).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(optional_fields))]
pub struct ChatMessage {
    pub role: Role,
    pub content: String,
    #[cfg_attr(feature = "ts", ts(as = "Option<_>"))]
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<OutToolCall>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<String>,
}

/// `messages` as JSON, for the JS binding's `buildContext`: here, so that
/// serde_json's writer, which runs over every byte of every message, is
/// compiled with the hot paths (src/lib.rs).
pub fn messages_json(messages: &[ChatMessage]) -> String {
    serde_json::to_string(messages).expect("strings and enums always serialize")
}

impl ChatMessage {
    pub fn system(content: impl Into<String>) -> Self {
        ChatMessage {
            role: Role::System,
            content: content.into(),
            tool_calls: Vec::new(),
            tool_call_id: None,
        }
    }

    /// The text counted for this message: the same as its entry's
    /// [`MemoryEntry::countable_text`], so both give one count.
    pub fn countable_text(&self) -> std::borrow::Cow<'_, str> {
        crate::entry::countable_text(
            &self.content,
            self.tool_calls.iter().map(|c| (&*c.function.name, &*c.function.arguments)),
        )
    }

    pub fn from_entry(e: &MemoryEntry) -> Self {
        ChatMessage {
            role: e.role,
            content: e.content.clone(),
            tool_calls: e
                .tool_calls
                .iter()
                .map(|c| OutToolCall {
                    id: c.id.clone(),
                    kind: "function",
                    function: FunctionCall { name: c.name.clone(), arguments: c.arguments.clone() },
                })
                .collect(),
            tool_call_id: e.tool_call_id.clone(),
        }
    }
}

/// Tokens of an entry as a message, from its cache when the tokenizer has
/// counted it before; the count is cached on the entry.
pub fn entry_tokens(tok: &dyn Tokenizer, entry: &mut MemoryEntry) -> u32 {
    let text = match entry.tokens.get(tok.id()) {
        Some(n) => n,
        None => {
            let n = u32::try_from(tok.count(&entry.countable_text())).unwrap_or(u32::MAX);
            entry.tokens.set(tok.id(), n);
            n
        }
    };
    text.saturating_add(MESSAGE_OVERHEAD)
}

/// Tokens of a plain text sent as one message.
pub fn text_message_tokens(tok: &dyn Tokenizer, text: &str) -> u32 {
    u32::try_from(tok.count(text)).unwrap_or(u32::MAX).saturating_add(MESSAGE_OVERHEAD)
}
