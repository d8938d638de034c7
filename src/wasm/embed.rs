//! The `Embedder` port for JS, two ways in, like the LLM's:
//!
//! 1. `{ endpoint, model, fetch, headers }`: an OpenAI-compatible
//!    `/embeddings` request (`{ model, input: texts }`, built and read by
//!    [`crate::llm::openai`]) through the host's `fetch` (default: the
//!    global one);
//! 2. a plain `async (texts) => Float32Array[] | number[][]` function,
//!    with `embedModel` naming the model its vectors come from.
//!
//! `embedOptions` ({ batchSize, concurrency, timeoutMs }) govern both; the
//! core does the batching, the cap and the timeout.

use js_sys::{Array, Function};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

use super::llm::{abort_controller, default_fetch, get, post_json, AbortOnDrop, HttpError};
use super::search::js_vector;
use super::{describe, from_js, js_string, settle, shallow_copy, take_field};
use crate::embed::EmbedOptions;
use crate::error::{Error, ErrorCode, Result};
use crate::llm::openai;
use crate::ports::{Embedder, LocalBoxFuture};

enum Transport {
    Http { fetch: Function, endpoint: String, headers: JsValue },
    Function(Function),
}

pub struct JsEmbedder {
    transport: Transport,
    model: String,
}

fn failed(e: JsValue) -> Error {
    Error::new(ErrorCode::Embedder, format!("the embedder failed: {}", describe(&e)))
}

/// Reads `embed`, `embedModel` and `embedOptions`.
pub fn parse_embed_option(
    embed: JsValue,
    model: JsValue,
    options: JsValue,
) -> std::result::Result<(JsEmbedder, EmbedOptions), JsValue> {
    let model = (!model.is_undefined()).then(|| js_string(&model, "embedModel")).transpose()?;
    let options: EmbedOptions =
        if options.is_undefined() { EmbedOptions::default() } else { from_js(options, "embedOptions", &[])? };
    let embedder = if let Some(f) = embed.dyn_ref::<Function>() {
        JsEmbedder {
            transport: Transport::Function(f.clone()),
            model: crate::embed::model_name(model, None)?,
        }
    } else if embed.is_object() {
        let copy = shallow_copy(&embed);
        let fetch = take_field(&copy, "fetch")?;
        let endpoint = js_string(&take_field(&copy, "endpoint")?, "embed.endpoint")?;
        let http_model = js_string(&take_field(&copy, "model")?, "embed.model")?;
        let headers = take_field(&copy, "headers")?;
        super::check_fields(&copy, "embed option", &[], &[])?;
        let fetch = match fetch.dyn_into::<Function>() {
            Ok(f) => f,
            Err(v) if v.is_undefined() || v.is_null() => default_fetch("embed.fetch")?,
            Err(_) => return Err(Error::invalid("embed.fetch must be a function").into()),
        };
        JsEmbedder {
            transport: Transport::Http { fetch, endpoint, headers },
            model: crate::embed::model_name(model, Some(http_model))?,
        }
    } else {
        return Err(
            Error::invalid("embed must be a function or an object with `endpoint` and `model`").into()
        );
    };
    Ok((embedder, options))
}

/// One vector per element of a JS array.
fn vectors(list: &JsValue) -> Result<Vec<Vec<f32>>> {
    if !Array::is_array(list) {
        return Err(Error::new(ErrorCode::Embedder, "the embedder must return an array of vectors"));
    }
    Array::from(list)
        .iter()
        .map(|v| match js_vector(&v, "each vector") {
            Ok(Some(v)) => Ok(v),
            _ => Err(Error::new(
                ErrorCode::Embedder,
                "each vector must be a Float32Array or an array of numbers",
            )),
        })
        .collect()
}

impl JsEmbedder {
    async fn call_http(
        fetch: &Function,
        endpoint: &str,
        model: &str,
        headers: &JsValue,
        texts: &[String],
    ) -> Result<Vec<Vec<f32>>> {
        let body = openai::embeddings_body(model, texts);
        // A call the core abandons (its timeout) is dropped: the request stops.
        let mut guard = AbortOnDrop { controller: abort_controller()?, finished: false };
        let signal = get(&guard.controller, "signal");
        let reply = post_json(fetch, endpoint, headers, &body, &signal).await;
        guard.finished = true;
        let reply = reply.map_err(|e| match e {
            HttpError::Network(e) => failed(e),
            HttpError::NotAResponse => Error::new(ErrorCode::Embedder, "fetch did not return a Response"),
        })?;
        openai::embeddings_answer(reply.answer())
    }
}

impl Embedder for JsEmbedder {
    fn model(&self) -> &str {
        &self.model
    }

    fn embed(&self, texts: Vec<String>) -> LocalBoxFuture<'_, Result<Vec<Vec<f32>>>> {
        Box::pin(async move {
            match &self.transport {
                Transport::Function(f) => {
                    let arg: Array = texts.iter().map(|t| JsValue::from_str(t)).collect();
                    let out = f.call1(&JsValue::NULL, &arg).map_err(failed)?;
                    vectors(&settle(out).await.map_err(failed)?)
                }
                Transport::Http { fetch, endpoint, headers } => {
                    Self::call_http(fetch, endpoint, &self.model, headers, &texts).await
                }
            }
        })
    }
}
