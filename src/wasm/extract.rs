//! `extractMemories`: the rule extractor for JS (an offline model, the
//! demo's, or an app that extracts without one).

use serde::{Deserialize, Serialize};
use wasm_bindgen::prelude::*;

use super::{fields_of, from_js, now_ms, to_js};
use crate::entry::Role;
use crate::extract::{extract, ExtractOptions, Turn};

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct MessageInput {
    #[serde(default)]
    id: Option<String>,
    role: Role,
    content: String,
    #[serde(default)]
    timestamp: Option<i64>,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase", deny_unknown_fields, default)]
struct OptionsInput {
    user_name: Option<String>,
    threshold: Option<f64>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ExtractedOutput<'a> {
    content: &'a str,
    sources: &'a [String],
    category: &'a str,
    importance: f32,
}

/// An entry of this library (`sessionHistory()`'s, which has a `kind`) is
/// read for its message fields, so a session's history passes as it is;
/// any other object is checked field by field.
fn message_fields(m: JsValue) -> JsValue {
    let get = |key: &str| js_sys::Reflect::get(&m, &key.into()).unwrap_or(JsValue::UNDEFINED);
    if !m.is_object() || get("kind").is_undefined() {
        return m;
    }
    let picked = js_sys::Object::new();
    for key in fields_of::<MessageInput>() {
        let _ = js_sys::Reflect::set(&picked, &(*key).into(), &get(key));
    }
    picked.into()
}

/// Long-term memories from the user's messages of a conversation, by rule:
/// third person, relative dates resolved against each message's time, each
/// with the ids of the messages it came from (a message without an id is
/// named by its index).
#[wasm_bindgen(js_name = extractMemories, unchecked_return_type = "ExtractedMemory[]")]
pub fn extract_memories(
    #[wasm_bindgen(unchecked_param_type = "ExtractMessage[]")] messages: JsValue,
    #[wasm_bindgen(unchecked_param_type = "ExtractOptions")] options: JsValue,
) -> Result<JsValue, JsValue> {
    if !js_sys::Array::is_array(&messages) {
        return Err(crate::error::Error::invalid("extractMemories takes an array of messages").into());
    }
    let messages: Vec<MessageInput> = js_sys::Array::from(&messages)
        .iter()
        .map(|m| from_js(message_fields(m), "message", &[]))
        .collect::<Result<_, _>>()?;
    let options: OptionsInput = if options.is_undefined() || options.is_null() {
        OptionsInput::default()
    } else {
        from_js(options, "extract options", &[])?
    };
    let options = ExtractOptions::new(options.user_name, options.threshold)?;
    let now = now_ms();
    let ids: Vec<String> =
        messages.iter().enumerate().map(|(i, m)| m.id.clone().unwrap_or_else(|| i.to_string())).collect();
    let turns: Vec<Turn> = messages
        .iter()
        .zip(&ids)
        .map(|(m, id)| Turn {
            id,
            role: m.role,
            content: &m.content,
            timestamp: m.timestamp.unwrap_or(now),
            new: true,
        })
        .collect();
    let out = extract(&turns, &options);
    let rows: Vec<ExtractedOutput> = out
        .iter()
        .map(|e| ExtractedOutput {
            content: &e.content,
            sources: &e.sources,
            category: e.category.as_str(),
            importance: e.importance,
        })
        .collect();
    to_js(&rows)
}
