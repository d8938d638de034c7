//! `Tokenizer` for JS: the estimate, or an exact tokenizer from a pack.

use std::rc::Rc;

use js_sys::Uint8Array;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

use super::types::JsTokenizerId;
use super::{js_error, js_string, js_usize};
use crate::error::{Error, ErrorCode};
use crate::tokens::count_u32;
use crate::tokens::{truncate_to_lines, truncate_to_tokens, BpeTokenizer, Estimate, Tokenizer};

#[wasm_bindgen(js_name = Tokenizer)]
#[derive(Clone)]
pub struct JsTokenizer(pub(crate) Rc<dyn Tokenizer>);

/// Bytes from a `Uint8Array` or `ArrayBuffer`.
pub(crate) fn js_bytes(value: &JsValue, what: &str) -> Result<Vec<u8>, JsValue> {
    if let Some(a) = value.dyn_ref::<Uint8Array>() {
        return Ok(a.to_vec());
    }
    if let Some(b) = value.dyn_ref::<js_sys::ArrayBuffer>() {
        return Ok(Uint8Array::new(b).to_vec());
    }
    Err(js_error(Error::new(ErrorCode::InvalidInput, format!("{what} must be a Uint8Array or ArrayBuffer"))))
}

#[wasm_bindgen(js_class = Tokenizer)]
impl JsTokenizer {
    /// The fast estimate (no pack needed).
    pub fn estimate() -> JsTokenizer {
        JsTokenizer(Rc::new(Estimate))
    }

    /// An exact tokenizer from pack bytes (`packs/cl100k.amtk`, `packs/o200k.amtk`).
    /// Throws `TOKENIZER_PACK` for a truncated, corrupted or foreign file.
    #[wasm_bindgen(js_name = fromPack)]
    pub fn from_pack(
        #[wasm_bindgen(unchecked_param_type = "Uint8Array | ArrayBuffer")] bytes: JsValue,
    ) -> Result<JsTokenizer, JsValue> {
        let bytes = js_bytes(&bytes, "pack")?;
        let tok = BpeTokenizer::from_pack(&bytes).map_err(js_error)?;
        Ok(JsTokenizer(Rc::new(tok)))
    }

    /// Which counter this is: "estimate", "cl100k" or "o200k".
    #[wasm_bindgen(getter)]
    pub fn id(&self) -> JsTokenizerId {
        JsValue::from_str(self.0.id().as_str()).unchecked_into()
    }

    /// Tokens in `text`. JS strings with lone surrogates are counted as if
    /// each lone surrogate were U+FFFD, the replacement character.
    pub fn count(
        &self,
        #[wasm_bindgen(unchecked_param_type = "string")] text: JsValue,
    ) -> Result<u32, JsValue> {
        Ok(count_u32(self.0.count(&js_string(&text, "text")?)))
    }

    /// The count if `text` fits in `limit` tokens, else `undefined`; stops early.
    #[wasm_bindgen(js_name = countUpTo)]
    pub fn count_up_to(
        &self,
        #[wasm_bindgen(unchecked_param_type = "string")] text: JsValue,
        #[wasm_bindgen(unchecked_param_type = "number")] limit: JsValue,
    ) -> Result<Option<u32>, JsValue> {
        let limit = js_usize(&limit, "limit")?;
        Ok(self.0.count_up_to(&js_string(&text, "text")?, limit).map(count_u32))
    }

    /// The longest prefix of `text` (at a character boundary) within `limit` tokens.
    pub fn truncate(
        &self,
        #[wasm_bindgen(unchecked_param_type = "string")] text: JsValue,
        #[wasm_bindgen(unchecked_param_type = "number")] limit: JsValue,
    ) -> Result<String, JsValue> {
        let limit = js_usize(&limit, "limit")?;
        let text = js_string(&text, "text")?;
        Ok(truncate_to_tokens(self.0.as_ref(), &text, limit).to_string())
    }

    /// Whole lines of `text`, from the start, within `limit` tokens.
    #[wasm_bindgen(js_name = truncateLines)]
    pub fn truncate_lines(
        &self,
        #[wasm_bindgen(unchecked_param_type = "string")] text: JsValue,
        #[wasm_bindgen(unchecked_param_type = "number")] limit: JsValue,
    ) -> Result<String, JsValue> {
        let limit = js_usize(&limit, "limit")?;
        Ok(truncate_to_lines(self.0.as_ref(), &js_string(&text, "text")?, limit))
    }
}
