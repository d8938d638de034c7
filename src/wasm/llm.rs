//! The LLM port for JS, two ways in:
//!
//! 1. `{ fetch, endpoint, model, headers }`: the library builds an
//!    OpenAI-compatible `/chat/completions` request, sends it with the
//!    host's `fetch` (default: the global one) and reads
//!    `choices[0].message.content` and `usage`;
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
use crate::budget::Usage;
use crate::error::{Error, ErrorCode, Result};
use crate::llm::governor::LlmOptions;
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
    let options: LlmOptions = from_js(copy, "llm options", LlmOptions::FIELDS)?;
    options.validate().map_err(super::js_error)?;
    let transport = if let Some(f) = complete.dyn_ref::<Function>() {
        Transport::Function(f.clone())
    } else if !endpoint.is_undefined() {
        let fetch = match fetch.dyn_into::<Function>() {
            Ok(f) => f,
            Err(v) if v.is_undefined() || v.is_null() => default_fetch("llm.fetch")?,
            Err(_) => return Err(super::js_error(Error::invalid("llm.fetch must be a function"))),
        };
        let temperature = match temperature.as_f64() {
            Some(t) if (0.0..=2.0).contains(&t) => Some(t),
            None if temperature.is_undefined() => None,
            _ => return Err(super::js_error(Error::invalid("llm.temperature must be a number from 0 to 2"))),
        };
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

/// What an HTTP endpoint answered.
pub(super) struct HttpReply {
    pub status: f64,
    pub text: String,
    pub response: JsValue,
}

pub(super) enum HttpError {
    /// `fetch` threw or rejected: the network, CORS, an abort.
    Network(JsValue),
    /// `fetch` resolved to something without `text()`.
    NotAResponse,
}

/// POSTs `body` as JSON through the host's `fetch`, with `headers` added.
pub(super) async fn post_json(
    fetch: &Function,
    endpoint: &str,
    headers: &JsValue,
    body: &Object,
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
    set(&init, "body", &js_sys::JSON::stringify(body).map_err(HttpError::Network)?.into());
    set(&init, "signal", signal);
    let response =
        fetch.call2(&JsValue::NULL, &JsValue::from_str(endpoint), &init).map_err(HttpError::Network)?;
    let response = settle(response).await.map_err(HttpError::Network)?;
    let status = get(&response, "status").as_f64().unwrap_or(0.0);
    let text_fn = get(&response, "text").dyn_into::<Function>().map_err(|_| HttpError::NotAResponse)?;
    let text =
        settle(text_fn.call0(&response).map_err(HttpError::Network)?).await.map_err(HttpError::Network)?;
    Ok(HttpReply { status, text: text.as_string().unwrap_or_default(), response })
}

/// Classifies a thrown value: an HTTP status on it decides; anything else
/// (a network error, a host bug) is retried, since most are transient.
fn thrown(e: JsValue) -> LlmFailure {
    let status = get(&e, "status").as_f64();
    let error = Error::new(ErrorCode::Llm, format!("the LLM hook failed: {}", describe(&e)));
    match status {
        Some(s) if s == 429.0 || s >= 500.0 => LlmFailure::retryable(error),
        Some(_) => LlmFailure::fatal(error),
        None => LlmFailure::retryable(error),
    }
}

fn messages_js(request: &LlmRequest) -> std::result::Result<JsValue, LlmFailure> {
    super::to_js(&request.messages)
        .map_err(|_| LlmFailure::fatal(Error::invalid("the LLM request could not be converted")))
}

fn usage_of(value: &JsValue) -> Option<Usage> {
    let usage = get(value, "usage");
    if !usage.is_object() {
        return None;
    }
    let num = |k: &str| get(&usage, k).as_f64().filter(|n| n.is_finite() && *n >= 0.0).map(|n| n as u64);
    // OpenAI's names, or the library's own camelCase ones from a plain hook.
    let input = num("prompt_tokens").or_else(|| num("inputTokens"))?;
    let output = num("completion_tokens").or_else(|| num("outputTokens")).unwrap_or(0);
    Some(Usage { calls: 1, input_tokens: input, output_tokens: output })
}

impl JsLlm {
    async fn call_function(
        f: &Function,
        request: &LlmRequest,
        signal: &JsValue,
    ) -> std::result::Result<LlmResponse, LlmFailure> {
        let arg = Object::new();
        set(&arg, "messages", &messages_js(request)?);
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
        match get(&out, "content").as_string() {
            Some(content) => Ok(LlmResponse { content, usage: usage_of(&out) }),
            None => Err(LlmFailure::fatal(Error::new(
                ErrorCode::Llm,
                "the LLM function must return a string or { content, usage }",
            ))),
        }
    }

    #[allow(clippy::too_many_arguments)]
    async fn call_http(
        fetch: &Function,
        endpoint: &str,
        model: &str,
        headers: &JsValue,
        temperature: Option<f64>,
        request: &LlmRequest,
        signal: &JsValue,
    ) -> std::result::Result<LlmResponse, LlmFailure> {
        let body = Object::new();
        set(&body, "model", &JsValue::from_str(model));
        set(&body, "messages", &messages_js(request)?);
        if let Some(m) = request.max_tokens {
            set(&body, "max_tokens", &JsValue::from(m));
        }
        if let Some(t) = temperature {
            set(&body, "temperature", &JsValue::from(t));
        }
        if request.json {
            let format = Object::new();
            set(&format, "type", &JsValue::from_str("json_object"));
            set(&body, "response_format", &format);
        }
        let network = |e: JsValue| {
            LlmFailure::retryable(Error::new(ErrorCode::Llm, format!("fetch failed: {}", describe(&e))))
        };
        let HttpReply { status, text, response } =
            post_json(fetch, endpoint, headers, &body, signal).await.map_err(|e| match e {
                HttpError::Network(e) => network(e),
                HttpError::NotAResponse => {
                    LlmFailure::fatal(Error::new(ErrorCode::Llm, "fetch did not return a Response"))
                }
            })?;
        if !(200.0..300.0).contains(&status) {
            let snippet: String = text.chars().take(300).collect();
            let error = Error::new(ErrorCode::Llm, format!("HTTP {status} from the LLM endpoint: {snippet}"));
            let retry_after = get(&get(&response, "headers"), "get")
                .dyn_into::<Function>()
                .ok()
                .and_then(|g| g.call1(&get(&response, "headers"), &"retry-after".into()).ok())
                .and_then(|v| v.as_string())
                // Whole seconds (RFC 9110 `delay-seconds`); an HTTP date is
                // not honoured.
                .and_then(|s| s.trim().parse::<u32>().ok())
                .map(|secs| secs.saturating_mul(1000).min(60_000));
            let retryable = status == 429.0 || status >= 500.0 || status == 408.0;
            return Err(LlmFailure { error, retryable, retry_after_ms: retry_after });
        }
        let json = js_sys::JSON::parse(&text).map_err(|_| {
            LlmFailure::retryable(Error::new(ErrorCode::Llm, "the LLM endpoint answered with invalid JSON"))
        })?;
        let choice = get(&get(&json, "choices"), "0");
        let content = get(&get(&choice, "message"), "content");
        let content = if content.is_null() { Some(String::new()) } else { content.as_string() };
        match content {
            Some(content) => Ok(LlmResponse { content, usage: usage_of(&json) }),
            None => Err(LlmFailure::fatal(Error::new(
                ErrorCode::Llm,
                "the LLM endpoint's answer has no choices[0].message.content",
            ))),
        }
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
                    Self::call_http(fetch, endpoint, model, headers, *temperature, &request, &signal).await
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
