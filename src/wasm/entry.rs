//! `createEntry` for JS: the validated way to make a `MemoryEntry`.

use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

use super::types::{JsEntryInput, JsMemoryEntry};
use super::{from_js, js_error, now_ms, to_js};
use crate::entry::EntryInput;

/// Makes a validated entry with a fresh UUID v7 and its estimated token count.
#[wasm_bindgen(js_name = createEntry)]
pub fn create_entry(input: JsEntryInput) -> std::result::Result<JsMemoryEntry, JsValue> {
    let input: EntryInput = from_js(input.into(), "entry", &[])?;
    let entry = input.into_message(now_ms()).map_err(js_error)?;
    Ok(to_js(&entry)?.unchecked_into())
}
