//! The LLM port for JS, two ways in:
//!
//! 1. `{ fetch, endpoint, model, headers }`: the core builds an
//!    OpenAI-compatible `/chat/completions` request ([`crate::llm::openai`]),
//!    this sends it with the host's `fetch` (default: the global one) and
//!    the core reads the answer and classifies a failure;
//! 2. a plain `async (request) => string | { content, usage }` function
//!    (or `{ complete }`), for hosts that call their model themselves.
//!
//! Each call gets its own `AbortSignal`; when the governor gives up on a
//! call (timeout, the caller's abort) the future is dropped and the signal
//! fires, so the request really stops instead of running on unobserved.

use js_sys::{Function, Object, Promise, Reflect};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::JsFuture;

use super::{describe, from_js, js_string, settle, shallow_copy, take_field};
use crate::error::{Error, ErrorCode, Result};
use crate::llm::governor::LlmOptions;
use crate::llm::openai::{self, HttpAnswer};
use crate::ports::{Llm, LlmFailure, LlmRequest, LlmResponse, LocalBoxFuture};

enum Transport {
    /// OpenAI-compatible HTTP through a `fetch`.
    Http { fetch: Function, endpoint: String, model: String, headers: JsValue, temperature: Option<f64> },
    /// The host's own function.
    Function(Function),
}

pub struct JsLlm(Transport);

/// Reads the `llm` option: a function, or an object with `complete` or an
/// `endpoint`, plus the governor's options.
pub fn parse_llm_option(value: JsValue) -> std::result::Result<(JsLlm, LlmOptions), JsValue> {
    if let Some(f) = value.dyn_ref::<Function>() {
        return Ok((JsLlm(Transport::Function(f.clone())), LlmOptions::default()));
    }
    if !value.is_object() {
        return Err(super::js_error(Error::invalid(
            "llm must be a function or an object with `complete` or `endpoint`",
        )));
    }
    let copy = shallow_copy(&value);
    let complete = take_field(&copy, "complete")?;
    let fetch = take_field(&copy, "fetch")?;
    let endpoint = take_field(&copy, "endpoint")?;
    let model = take_field(&copy, "model")?;
    let headers = take_field(&copy, "headers")?;
    let temperature = take_field(&copy, "temperature")?;
    let options: LlmOptions = from_js(copy, "llm options", &[])?;
    let transport = if let Some(f) = complete.dyn_ref::<Function>() {
        Transport::Function(f.clone())
    } else if !endpoint.is_undefined() {
        let fetch = match fetch.dyn_into::<Function>() {
            Ok(f) => f,
            Err(v) if v.is_undefined() || v.is_null() => default_fetch("llm.fetch")?,
            Err(_) => return Err(super::js_error(Error::invalid("llm.fetch must be a function"))),
        };
        // Not a number: NaN, which the core refuses as out of range.
        let temperature = (!temperature.is_undefined()).then(|| temperature.as_f64().unwrap_or(f64::NAN));
        let temperature = openai::temperature(temperature).map_err(super::js_error)?;
        Transport::Http {
            fetch,
            endpoint: js_string(&endpoint, "llm.endpoint")?,
            model: js_string(&model, "llm.model")?,
            headers,
            temperature,
        }
    } else {
        return Err(super::js_error(Error::invalid(
            "llm needs `complete` (a function) or `endpoint` and `model`",
        )));
    };
    Ok((JsLlm(transport), options))
}

/// Aborts the call's signal unless the call finished: dropping the future
/// (timeout, abort) cancels the request.
pub(super) struct AbortOnDrop {
    pub controller: JsValue,
    pub finished: bool,
}

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        if !self.finished {
            if let Ok(abort) = Reflect::get(&self.controller, &"abort".into()) {
                if let Some(abort) = abort.dyn_ref::<Function>() {
                    let _ = abort.call0(&self.controller);
                }
            }
        }
    }
}

pub(super) fn abort_controller() -> Result<JsValue> {
    let ctor = Reflect::get(&js_sys::global(), &"AbortController".into())
        .ok()
        .and_then(|c| c.dyn_into::<Function>().ok())
        .ok_or_else(|| Error::invalid("this runtime has no AbortController"))?;
    Reflect::construct(&ctor, &js_sys::Array::new()).map_err(|e| Error::invalid(describe(&e)))
}

fn set(target: &Object, key: &str, value: &JsValue) {
    // Setting a property on a fresh plain object cannot fail.
    let _ = Reflect::set(target, &key.into(), value);
}

pub(super) fn get(target: &JsValue, key: &str) -> JsValue {
    Reflect::get(target, &key.into()).unwrap_or(JsValue::UNDEFINED)
}

/// The global `fetch`, for hooks given an endpoint and no `fetch`.
pub(super) fn default_fetch(what: &str) -> std::result::Result<Function, JsValue> {
    Reflect::get(&js_sys::global(), &"fetch".into())?
        .dyn_into::<Function>()
        .map_err(|_| super::js_error(Error::invalid(format!("no fetch in this runtime: pass {what}"))))
}

/// What an HTTP endpoint answered, as the core reads it.
pub(super) struct HttpReply {
    pub status: u16,
    pub text: String,
    /// The `Retry-After` header, when there is one.
    pub retry_after: Option<String>,
}

impl HttpReply {
    pub fn answer(&self) -> HttpAnswer<'_> {
        HttpAnswer { status: self.status, body: &self.text, retry_after: self.retry_after.as_deref() }
    }
}

pub(super) enum HttpError {
    /// `fetch` threw or rejected: the network, CORS, an abort.
    Network(JsValue),
    /// `fetch` resolved to something without `text()`.
    NotAResponse,
}

/// An HTTP status as a number (0 when it is none).
fn status_of(value: &JsValue) -> Option<u16> {
    get(value, "status").as_f64().map(|s| s as u16)
}

/// POSTs the JSON `body` through the host's `fetch`, with `headers` added.
pub(super) async fn post_json(
    fetch: &Function,
    endpoint: &str,
    headers: &JsValue,
    body: &str,
    signal: &JsValue,
) -> std::result::Result<HttpReply, HttpError> {
    let all_headers = Object::new();
    set(&all_headers, "content-type", &JsValue::from_str("application/json"));
    if headers.is_object() {
        Object::assign(&all_headers, headers.unchecked_ref());
    }
    let init = Object::new();
    set(&init, "method", &JsValue::from_str("POST"));
    set(&init, "headers", &all_headers);
    set(&init, "body", &JsValue::from_str(body));
    set(&init, "signal", signal);
    let response =
        fetch.call2(&JsValue::NULL, &JsValue::from_str(endpoint), &init).map_err(HttpError::Network)?;
    let response = settle(response).await.map_err(HttpError::Network)?;
    let status = status_of(&response).unwrap_or(0);
    let text_fn = get(&response, "text").dyn_into::<Function>().map_err(|_| HttpError::NotAResponse)?;
    let text =
        settle(text_fn.call0(&response).map_err(HttpError::Network)?).await.map_err(HttpError::Network)?;
    let headers = get(&response, "headers");
    let retry_after = get(&headers, "get")
        .dyn_into::<Function>()
        .ok()
        .and_then(|g| g.call1(&headers, &"retry-after".into()).ok())
        .and_then(|v| v.as_string());
    Ok(HttpReply { status, text: text.as_string().unwrap_or_default(), retry_after })
}

/// A thrown value, classified by the core on its `status`.
fn thrown(e: JsValue) -> LlmFailure {
    openai::thrown(status_of(&e), None, &describe(&e))
}

impl JsLlm {
    async fn call_function(
        f: &Function,
        request: &LlmRequest,
        signal: &JsValue,
    ) -> std::result::Result<LlmResponse, LlmFailure> {
        let arg = Object::new();
        let messages = super::to_js(&request.messages)
            .map_err(|_| LlmFailure::fatal(Error::invalid("the LLM request could not be converted")))?;
        set(&arg, "messages", &messages);
        set(&arg, "json", &JsValue::from_bool(request.json));
        if let Some(m) = request.max_tokens {
            set(&arg, "maxTokens", &JsValue::from(m));
        }
        set(&arg, "signal", signal);
        let out = f.call1(&JsValue::NULL, &arg).map_err(thrown)?;
        let out = settle(out).await.map_err(thrown)?;
        if let Some(text) = out.as_string() {
            return Ok(LlmResponse { content: text, usage: None });
        }
        let usage = get(&out, "usage");
        let usage = if usage.is_object() { openai::usage(&|k| get(&usage, k).as_f64()) } else { None };
        match get(&out, "content").as_string() {
            Some(content) => Ok(LlmResponse { content, usage }),
            None => Err(LlmFailure::fatal(Error::new(
                ErrorCode::Llm,
                "the LLM function must return a string or { content, usage }",
            ))),
        }
    }

    async fn call_http(
        fetch: &Function,
        endpoint: &str,
        headers: &JsValue,
        body: String,
        signal: &JsValue,
    ) -> std::result::Result<LlmResponse, LlmFailure> {
        let reply = post_json(fetch, endpoint, headers, &body, signal).await.map_err(|e| match e {
            HttpError::Network(e) => openai::unreachable(&describe(&e)),
            HttpError::NotAResponse => {
                LlmFailure::fatal(Error::new(ErrorCode::Llm, "fetch did not return a Response"))
            }
        })?;
        openai::chat_answer(reply.answer())
    }
}

impl Llm for JsLlm {
    fn complete(
        &self,
        request: LlmRequest,
    ) -> LocalBoxFuture<'_, std::result::Result<LlmResponse, LlmFailure>> {
        Box::pin(async move {
            let controller = abort_controller().map_err(LlmFailure::fatal)?;
            let mut guard = AbortOnDrop { controller, finished: false };
            let signal = get(&guard.controller, "signal");
            let out = match &self.0 {
                Transport::Function(f) => Self::call_function(f, &request, &signal).await,
                Transport::Http { fetch, endpoint, model, headers, temperature } => {
                    let body = openai::chat_body(model, *temperature, &request);
                    Self::call_http(fetch, endpoint, headers, body, &signal).await
                }
            };
            guard.finished = true;
            out
        })
    }
}

/// Resolves when `signal` aborts (at once when it already has).
pub async fn aborted(signal: JsValue) {
    if get(&signal, "aborted").as_bool() == Some(true) {
        return;
    }
    let fired = Promise::new(&mut |resolve, _| {
        let options = Object::new();
        set(&options, "once", &JsValue::TRUE);
        if let Ok(add) = get(&signal, "addEventListener").dyn_into::<Function>() {
            let _ = add.call3(&signal, &"abort".into(), &resolve, &options);
        }
    });
    let _ = JsFuture::from(fired).await;
}
