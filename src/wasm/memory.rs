//! `Memory` for JS: a session's working memory on a store, with the
//! long-term block from a host hook. Calls are queued in order (an async
//! mutex), so `Promise.all` of many `add`s stores them one after another and
//! never trips over a borrowed session.

use std::rc::Rc;

use futures::lock::Mutex;
use js_sys::{Function, Promise};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::{future_to_promise, JsFuture};

use super::indexeddb::IndexedDbStore;
use super::js_store::JsStore;
use super::tokenizer::JsTokenizer;
use super::types::{JsContextRequest, JsMemoryOptions, JsMessageInput, JsSessionUsage, JsUsageReport};
use super::{
    describe, from_js, js_count, js_error, js_string, shallow_copy, take_field, to_js, to_js_json, JsClock,
};
use crate::error::{Error, Result};
use crate::ports::LocalBoxFuture;
use crate::session::{ContextRequest, LongTermSource, NewMessage, Session, SessionOptions};
use crate::store::{MemoryStore, Store};
use crate::tokens::{Estimate, Tokenizer};

/// The long-term hook: `(query, budgetTokens) => string | Promise<string>`.
struct JsLongTerm(Function);

impl LongTermSource for JsLongTerm {
    fn block<'a>(&'a self, query: &'a str, budget_tokens: u32) -> LocalBoxFuture<'a, Result<String>> {
        Box::pin(async move {
            let hook_error = |e: JsValue| Error::storage(format!("long-term hook failed: {}", describe(&e)));
            let out = self
                .0
                .call2(&JsValue::NULL, &JsValue::from_str(query), &JsValue::from(budget_tokens))
                .map_err(hook_error)?;
            let out = match out.dyn_into::<Promise>() {
                Ok(p) => JsFuture::from(p).await.map_err(hook_error)?,
                Err(v) => v,
            };
            if out.is_undefined() || out.is_null() {
                return Ok(String::new());
            }
            out.as_string().ok_or_else(|| Error::invalid("the long-term hook must return a string"))
        })
    }
}

/// The fields of `SessionOptions`, as JS spells them.
const SESSION_FIELDS: &[&str] = &[
    "budget",
    "maxTokens",
    "retainRecentRounds",
    "maxCachedMessages",
    "contextRounds",
    "maxWindowTokens",
    "summaryBudget",
    "longTermBudget",
];

fn validate_namespace(ns: &str) -> Result<()> {
    if ns.is_empty() || ns.contains('/') {
        return Err(Error::invalid("namespace must be non-empty and contain no '/'"));
    }
    Ok(())
}

async fn open_store(spec: JsValue, namespace: &str) -> Result<Rc<dyn Store>> {
    if spec.is_undefined() || spec.is_null() || spec.as_string().as_deref() == Some("memory") {
        return Ok(Rc::new(MemoryStore::new()));
    }
    if spec.as_string().as_deref() == Some("indexeddb") {
        return Ok(Rc::new(IndexedDbStore::open(namespace).await?));
    }
    if spec.is_object() {
        return Ok(Rc::new(JsStore::new(spec, namespace)?));
    }
    Err(Error::invalid("store must be \"memory\", \"indexeddb\" or a storage adapter object"))
}

#[wasm_bindgen(js_name = Memory)]
pub struct JsMemory {
    session: Rc<Mutex<Session>>,
    long_term: Option<Rc<JsLongTerm>>,
}

fn promise<F>(f: F) -> Promise
where
    F: std::future::Future<Output = std::result::Result<JsValue, JsValue>> + 'static,
{
    future_to_promise(f)
}

#[wasm_bindgen(js_class = Memory)]
impl JsMemory {
    /// Opens (or restores) a session. It counts with the estimate until
    /// `setTokenizer` gives it an exact tokenizer.
    #[wasm_bindgen(unchecked_return_type = "Promise<Memory>")]
    pub fn open(options: JsMemoryOptions) -> Promise {
        let options: JsValue = options.into();
        let tokenizer: Rc<dyn Tokenizer> = Rc::new(Estimate);
        promise(async move {
            if !options.is_object() {
                return Err(js_error(Error::invalid("Memory.open needs an options object")));
            }
            // Work on a shallow copy: the hooks and store are taken out, the
            // rest is plain data.
            let copy = shallow_copy(&options);
            let store_spec = take_field(&copy, "store")?;
            let long_term = take_field(&copy, "longTerm")?;
            let long_term = match long_term.dyn_into::<Function>() {
                Ok(f) => Some(Rc::new(JsLongTerm(f))),
                Err(v) if v.is_undefined() || v.is_null() => None,
                Err(_) => return Err(js_error(Error::invalid("longTerm must be a function"))),
            };
            let namespace = js_string(&take_field(&copy, "namespace")?, "namespace")?;
            let session_id = js_string(&take_field(&copy, "sessionId")?, "sessionId")?;
            let options: SessionOptions = from_js(copy, "memory options", SESSION_FIELDS)?;
            validate_namespace(&namespace).map_err(js_error)?;
            let store = open_store(store_spec, &namespace).await.map_err(js_error)?;
            let session = Session::open(&session_id, store, tokenizer, Rc::new(JsClock), options)
                .await
                .map_err(js_error)?;
            Ok(JsMemory { session: Rc::new(Mutex::new(session)), long_term }.into())
        })
    }

    /// Stores a message (store first, then memory) and returns the entry.
    #[wasm_bindgen(unchecked_return_type = "Promise<MemoryEntry>")]
    pub fn add(&self, message: JsMessageInput) -> Promise {
        let parsed: std::result::Result<NewMessage, JsValue> =
            from_js(message.into(), "message", NewMessage::FIELDS);
        let session = self.session.clone();
        promise(async move {
            let entry = session.lock().await.add(parsed?).await.map_err(js_error)?;
            to_js(&entry)
        })
    }

    /// The `messages` array for the next request, and where its tokens went.
    #[wasm_bindgen(js_name = buildContext, unchecked_return_type = "Promise<BuiltContext>")]
    pub fn build_context(&self, request: Option<JsContextRequest>) -> Promise {
        let parsed = match request {
            Some(r) if !r.is_undefined() && !r.is_null() => parse_context_request(r.into()),
            _ => Ok(ContextRequest::default()),
        };
        let session = self.session.clone();
        let long_term = self.long_term.clone();
        promise(async move {
            let request = parsed?;
            let session = session.lock().await;
            let source = long_term.as_deref().map(|l| l as &dyn LongTermSource);
            let ctx = session.build_context(&request, source).await.map_err(js_error)?;
            let out = js_sys::Object::new();
            js_sys::Reflect::set(&out, &"messages".into(), &to_js_json(&ctx.messages)?)?;
            js_sys::Reflect::set(&out, &"report".into(), &to_js(&ctx.report)?)?;
            Ok(out.into())
        })
    }

    /// Working-memory usage: tokens, ratio, pending compression.
    pub fn usage(&self) -> std::result::Result<JsSessionUsage, JsValue> {
        let s = self.session.try_lock().ok_or_else(busy)?;
        Ok(to_js(&s.usage())?.unchecked_into())
    }

    /// LLM token usage recorded so far, as one line of text.
    #[wasm_bindgen(js_name = usageReport)]
    pub fn usage_report(&self) -> std::result::Result<String, JsValue> {
        Ok(self.session.try_lock().ok_or_else(busy)?.budget().usage_report())
    }

    /// LLM token usage recorded so far, structured.
    #[wasm_bindgen(js_name = llmUsage)]
    pub fn llm_usage(&self) -> std::result::Result<JsUsageReport, JsValue> {
        Ok(to_js(&self.session.try_lock().ok_or_else(busy)?.budget().report())?.unchecked_into())
    }

    /// Records the tokens of an LLM call made outside the library.
    #[wasm_bindgen(js_name = recordUsage)]
    pub fn record_usage(
        &self,
        input_tokens: JsValue,
        output_tokens: JsValue,
    ) -> std::result::Result<(), JsValue> {
        let input = js_count(&input_tokens, "inputTokens")?;
        let output = js_count(&output_tokens, "outputTokens")?;
        self.session.try_lock().ok_or_else(busy)?.budget_mut().record_usage(input, output);
        Ok(())
    }

    /// Messages evicted from the window that wait for a summary.
    #[wasm_bindgen(js_name = pendingCompression, unchecked_return_type = "MemoryEntry[]")]
    pub fn pending_compression(&self) -> std::result::Result<JsValue, JsValue> {
        to_js_json(&self.session.try_lock().ok_or_else(busy)?.pending_compression())
    }

    /// The live messages, oldest first.
    #[wasm_bindgen(unchecked_return_type = "MemoryEntry[]")]
    pub fn messages(&self) -> std::result::Result<JsValue, JsValue> {
        to_js_json(&self.session.try_lock().ok_or_else(busy)?.messages())
    }

    /// Every stored message of the session, oldest first.
    #[wasm_bindgen(unchecked_return_type = "Promise<MemoryEntry[]>")]
    pub fn history(&self) -> Promise {
        let session = self.session.clone();
        promise(async move { to_js_json(&session.lock().await.history().await.map_err(js_error)?) })
    }

    /// Commits a summary that replaces the pending messages up to `throughId`.
    #[wasm_bindgen(js_name = commitSummary, unchecked_return_type = "Promise<MemoryEntry>")]
    pub fn commit_summary(&self, content: JsValue, through_id: JsValue) -> Promise {
        let args = js_string(&content, "content").and_then(|c| Ok((c, js_string(&through_id, "throughId")?)));
        let session = self.session.clone();
        promise(async move {
            let (content, through) = args?;
            let summary = session.lock().await.commit_summary(content, &through).await.map_err(js_error)?;
            to_js(&summary)
        })
    }

    /// Counts with another tokenizer from now on (e.g. once a pack loaded).
    #[wasm_bindgen(js_name = setTokenizer)]
    pub fn set_tokenizer(&self, tokenizer: &JsTokenizer) -> std::result::Result<(), JsValue> {
        self.session.try_lock().ok_or_else(busy)?.set_tokenizer(tokenizer.0.clone());
        Ok(())
    }

    #[wasm_bindgen(getter, js_name = sessionId)]
    pub fn session_id(&self) -> std::result::Result<String, JsValue> {
        Ok(self.session.try_lock().ok_or_else(busy)?.id().to_string())
    }
}

/// A context request; `tools` is counted as the JSON the provider will get.
fn parse_context_request(value: JsValue) -> std::result::Result<ContextRequest, JsValue> {
    let tools = js_sys::Reflect::get(&value, &"tools".into()).unwrap_or(JsValue::UNDEFINED);
    let mut request: ContextRequest = from_js(value, "context request", ContextRequest::FIELDS)?;
    if !tools.is_undefined() && !tools.is_null() {
        if !js_sys::Array::is_array(&tools) {
            return Err(js_error(Error::invalid("tools must be an array of tool definitions")));
        }
        request.tools_json = Some(
            js_sys::JSON::stringify(&tools)
                .map(String::from)
                .map_err(|_| js_error(Error::invalid("tools must be JSON-serializable")))?,
        );
    }
    Ok(request)
}

/// Synchronous calls made while an async one holds the session.
fn busy() -> JsValue {
    js_error(Error::new(
        crate::error::ErrorCode::InvalidInput,
        "the memory is busy with an async call; await it first",
    ))
}

/// Runs the store conformance suite against a storage adapter: the way to
/// check an adapter before trusting it with memories. Uses (and leaves
/// empty) the namespace given.
#[wasm_bindgen(js_name = checkStorageAdapter, unchecked_return_type = "Promise<void>")]
pub fn check_storage_adapter(adapter: JsValue, namespace: JsValue) -> Promise {
    promise(async move {
        let ns = js_string(&namespace, "namespace")?;
        let store = JsStore::new(adapter, &ns).map_err(js_error)?;
        crate::store::conformance::run(&store).await.map_err(js_error)?;
        Ok(JsValue::UNDEFINED)
    })
}
