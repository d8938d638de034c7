//! `SearchIndex` for JS: the retrieval core on documents the host adds
//! directly (the LoCoMo ranker, or an app indexing its own records).

use js_sys::Float32Array;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

use super::types::{JsIndexDoc, JsSearchOptions};
use super::{from_js, js_error, js_string, now_ms, shallow_copy, take_field, to_js};
use crate::error::Error;
use crate::retrieval::{Bm25Params, DocInput, SearchIndex, SearchOptions};

/// A vector from a `Float32Array` or an array of numbers.
pub(crate) fn js_vector(value: &JsValue, what: &str) -> Result<Option<Vec<f32>>, JsValue> {
    if value.is_undefined() || value.is_null() {
        return Ok(None);
    }
    if let Some(a) = value.dyn_ref::<Float32Array>() {
        return Ok(Some(a.to_vec()));
    }
    if js_sys::Array::is_array(value) {
        let numbers: Option<Vec<f32>> =
            value.unchecked_ref::<js_sys::Array>().iter().map(|x| x.as_f64().map(|n| n as f32)).collect();
        return numbers
            .map(Some)
            .ok_or_else(|| js_error(Error::invalid(format!("{what} must contain only numbers"))));
    }
    Err(js_error(Error::invalid(format!("{what} must be a Float32Array or an array of numbers"))))
}

/// Takes `name` out of a copy of `obj`, so the rest deserializes as plain data.
fn split_field(obj: &JsValue, name: &str) -> Result<(JsValue, JsValue), JsValue> {
    if !obj.is_object() {
        return Ok((obj.clone(), JsValue::UNDEFINED));
    }
    let copy = shallow_copy(obj);
    let v = take_field(&copy, name)?;
    Ok((copy, v))
}

/// Parses search options, with an optional query `vector`.
pub(crate) fn parse_search_options(options: JsValue) -> Result<(SearchOptions, Option<Vec<f32>>), JsValue> {
    if options.is_undefined() || options.is_null() {
        return Ok((SearchOptions::default(), None));
    }
    let (rest, vector) = split_field(&options, "vector")?;
    // `vector` is taken apart (a Float32Array does not go through JSON), but
    // a misspelt option's error names it with the rest.
    let opts: SearchOptions = from_js(rest, "search options", &["vector"])?;
    Ok((opts, js_vector(&vector, "vector")?))
}

#[wasm_bindgen(js_name = SearchIndex)]
pub struct JsSearchIndex(SearchIndex);

#[wasm_bindgen(js_class = SearchIndex)]
impl JsSearchIndex {
    /// The English stop words the analyzer drops (NLTK's 179), to give
    /// another engine the same list.
    #[wasm_bindgen(js_name = stopWords)]
    pub fn stop_words() -> Vec<String> {
        crate::retrieval::analyzer::stop_words().iter().map(|w| w.to_string()).collect()
    }

    /// `options`: BM25 `k1` (1.2), `b` (0.75), `contextWeight` (0.5).
    #[wasm_bindgen(constructor)]
    pub fn new(options: Option<super::types::JsIndexOptions>) -> Result<JsSearchIndex, JsValue> {
        let params: Bm25Params =
            match options.map(JsValue::from).filter(|o| !o.is_undefined() && !o.is_null()) {
                None => Bm25Params::default(),
                Some(options) => from_js(options, "index options", &[])?,
            };
        Ok(JsSearchIndex(SearchIndex::checked(params)?))
    }

    /// Adds or replaces a document (`embedding`: Float32Array or numbers).
    pub fn add(&mut self, doc: JsIndexDoc) -> Result<(), JsValue> {
        let (rest, embedding) = split_field(&doc.into(), "embedding")?;
        let input: DocInput = from_js(rest, "document", &["embedding"])?;
        Ok(self.0.add(input.into_doc(js_vector(&embedding, "embedding")?, now_ms())?)?)
    }

    pub fn remove(
        &mut self,
        #[wasm_bindgen(unchecked_param_type = "string")] id: JsValue,
    ) -> Result<bool, JsValue> {
        Ok(self.0.remove(&js_string(&id, "id")?))
    }

    #[wasm_bindgen(getter)]
    pub fn size(&self) -> u32 {
        self.0.len() as u32
    }

    /// Best hits first, each with its score breakdown in `explain`.
    #[wasm_bindgen(unchecked_return_type = "Hit[]")]
    pub fn search(
        &mut self,
        #[wasm_bindgen(unchecked_param_type = "string")] query: JsValue,
        options: Option<JsSearchOptions>,
    ) -> Result<JsValue, JsValue> {
        let query = js_string(&query, "query")?;
        let (opts, vector) = parse_search_options(options.map_or(JsValue::UNDEFINED, Into::into))?;
        let hits = self.0.search(&query, vector.as_deref(), now_ms(), &opts).map_err(js_error)?;
        to_js(&hits)
    }
}
