//! `extractMemories`: the rule extractor for JS (an offline model, the
//! demo's, or an app that extracts without one).

use wasm_bindgen::prelude::*;

use super::{fields_of, from_js, now_ms, to_js};
use crate::error::Error;
use crate::extract::{extract_messages, ExtractMessage, ExtractOptions};

/// An entry of this library (`sessionHistory()`'s, which has a `kind`) as
/// the message it holds: its message fields, copied into a fresh object, so
/// a session's history passes as it is; any other object is read whole.
fn message_fields(m: JsValue) -> JsValue {
    let get = |key: &str| js_sys::Reflect::get(&m, &key.into()).unwrap_or(JsValue::UNDEFINED);
    if !m.is_object() || get("kind").is_undefined() {
        return m;
    }
    let picked = js_sys::Object::new();
    for key in fields_of::<ExtractMessage>() {
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
        return Err(Error::invalid("extractMemories takes an array of messages").into());
    }
    let messages: Vec<ExtractMessage> = js_sys::Array::from(&messages)
        .iter()
        .map(|m| from_js(message_fields(m), "message", &[]))
        .collect::<Result<_, _>>()?;
    let options: ExtractOptions = match super::memory::optional(options) {
        None => ExtractOptions::default(),
        Some(o) => from_js(o, "extract options", &[])?,
    };
    to_js(&extract_messages(&messages, &options, now_ms())?)
}
