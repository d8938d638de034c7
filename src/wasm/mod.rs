//! The JS binding: classes and functions with camelCase names, JS values
//! converted to core types at the boundary, and core errors turned into JS
//! `Error`s that carry the stable `code`. Nothing here holds logic the core
//! could hold.

mod autosync;
mod budget;
mod cipher;
mod clock;
mod convert;
mod embed;
mod entry;
mod extract;
pub mod indexeddb;
mod js_store;
mod llm;
mod locks;
mod memory;
mod prompt;
mod redact;
mod search;
mod spawn;
mod sync;
mod tokenizer;
mod transport;
mod types;

use wasm_bindgen::prelude::*;

pub(crate) use clock::{now_ms, JsClock};
pub(crate) use convert::{
    check_fields, describe, fields_of, from_js, from_js_list, js_count, js_error, js_string, js_usize,
    json_of, optional, settle, shallow_copy, take_field, to_js, u32_field,
};

/// The design's fast token estimate, with CJK ranges corrected.
#[wasm_bindgen(js_name = estimateTokens)]
pub fn estimate_tokens(
    #[wasm_bindgen(unchecked_param_type = "string")] text: JsValue,
) -> Result<u32, JsValue> {
    Ok(crate::tokens::count_u32(crate::tokens::estimate_tokens(&js_string(&text, "text")?)))
}

/// The library version, from Cargo.toml.
#[wasm_bindgen(js_name = version)]
pub fn version() -> String {
    env!("CARGO_PKG_VERSION").to_string()
}
