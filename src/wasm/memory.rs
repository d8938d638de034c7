//! `Memory` for JS: the core [`Memory`] with its ports on JS objects. Each
//! method converts its arguments, calls one core method and converts the
//! result; every failure, bad arguments included, is a rejected promise
//! (async methods) or a returned error (sync ones), never a throw from
//! inside a Rust frame.

use std::rc::Rc;

use js_sys::{Function, Promise};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::future_to_promise;

use super::autosync::{parse_sync, AutoSync, OnlineListener};
use super::cipher::parse_encryption;
use super::embed::parse_embed_option;
use super::indexeddb::IndexedDbStore;
use super::js_store::JsStore;
use super::llm::{aborted, parse_llm_option};
use super::locks::realm_locks;
use super::redact::parse_redact;
use super::search::parse_search_options;
use super::spawn::JsSpawn;
use super::tokenizer::JsTokenizer;
use super::types::{JsContextRequest, JsMemoryOptions, JsMessageInput, JsSessionUsage, JsUsageReport};
use super::types::{JsEndSessionOptions, JsEntryInput, JsSearchOptions};
use super::{check_fields, describe, from_js, js_count, js_string, shallow_copy, take_field, to_js, JsClock};
pub(super) use super::{optional, u32_field};
use crate::entry::EntryInput;
use crate::entry::Scope;
use crate::error::{Error, Result};
use crate::memory::{self, Memory, MemoryOptions, Ports};
use crate::ports::LocalBoxFuture;
use crate::store::{Damaged, MemoryStore, Store, Timed, STORAGE_TIMEOUT_MS};
use crate::tokens::Estimate;
use crate::working::session::{ContextRequest, LongTermBlock, LongTermSource, NewMessage, SessionOptions};

/// The long-term hook: `(query, budgetTokens) => string | Promise<string>`.
struct JsLongTerm(Function);

impl LongTermSource for JsLongTerm {
    fn block<'a>(&'a self, query: &'a str, budget_tokens: u32) -> LocalBoxFuture<'a, Result<LongTermBlock>> {
        Box::pin(async move {
            let hook_error = |e: JsValue| Error::storage(format!("long-term hook failed: {}", describe(&e)));
            let out = self
                .0
                .call2(&JsValue::NULL, &JsValue::from_str(query), &JsValue::from(budget_tokens))
                .map_err(hook_error)?;
            let out = super::settle(out).await.map_err(hook_error)?;
            if out.is_undefined() || out.is_null() {
                return Ok(LongTermBlock::default());
            }
            let text =
                out.as_string().ok_or_else(|| Error::invalid("the long-term hook must return a string"))?;
            Ok(text.into())
        })
    }
}

/// The fields `Memory.open` takes besides the session's.
const OPEN_FIELDS: &[&str] = &[
    "namespace",
    "sessionId",
    "store",
    "agentId",
    "dedup",
    "llm",
    "autoCompress",
    "longTerm",
    "onDamaged",
    "storageTimeoutMs",
    "longTermTimeoutMs",
    "pinnedProfile",
    "embed",
    "embedModel",
    "embedOptions",
    "encryption",
    "redact",
    "sync",
];

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

/// An adapter used without a `Memory`, timed as `Memory.open` times it.
fn timed(store: JsStore) -> Timed {
    Timed::new(Rc::new(store), Rc::new(JsClock), STORAGE_TIMEOUT_MS)
}

/// The `signal` of `endSession`'s options: an object with that field only,
/// holding nothing or an `AbortSignal`.
fn end_session_signal(options: &JsValue) -> std::result::Result<Option<JsValue>, JsValue> {
    if !options.is_object() || js_sys::Array::is_array(options) {
        return Err(Error::invalid("endSession options must be an object").into());
    }
    check_fields(options, "endSession option", &["signal"], &[])?;
    let Some(signal) = optional(js_sys::Reflect::get(options, &"signal".into())?) else { return Ok(None) };
    let listens = js_sys::Reflect::get(&signal, &"addEventListener".into()).is_ok_and(|f| f.is_function());
    if !signal.is_object() || !listens {
        return Err(Error::invalid("endSession's signal must be an AbortSignal").into());
    }
    Ok(Some(signal))
}

fn hook(v: JsValue, what: &str) -> Result<Option<Function>> {
    match optional(v) {
        None => Ok(None),
        Some(f) => f
            .dyn_into::<Function>()
            .map(Some)
            .map_err(|_| Error::invalid(format!("{what} must be a function"))),
    }
}

/// Reads `Memory.open`'s options into the core's options and ports, and
/// the sync schedule's.
async fn parse_open(
    options: JsValue,
) -> std::result::Result<(MemoryOptions, Ports, Option<AutoSync>), JsValue> {
    if !options.is_object() {
        return Err(Error::invalid("Memory.open needs an options object").into());
    }
    // Work on a shallow copy: hooks and the store are taken out, the rest is data.
    let copy = shallow_copy(&options);
    super::check_fields(&copy, "Memory.open option", OPEN_FIELDS, super::fields_of::<SessionOptions>())?;
    let store_spec = take_field(&copy, "store")?;
    let agent_id = optional(take_field(&copy, "agentId")?).map(|v| js_string(&v, "agentId")).transpose()?;
    let dedup = match optional(take_field(&copy, "dedup")?) {
        None => Default::default(),
        Some(v) => from_js(v, "dedup options", &[])?,
    };
    let (llm, llm_options) = match optional(take_field(&copy, "llm")?) {
        None => (None, Default::default()),
        Some(v) => {
            let (hook, options) = parse_llm_option(v)?;
            (Some(Rc::new(hook) as Rc<dyn crate::ports::Llm>), options)
        }
    };
    let auto_compress = match optional(take_field(&copy, "autoCompress")?) {
        None => None,
        Some(v) => Some(v.as_bool().ok_or_else(|| Error::invalid("autoCompress must be a boolean"))?),
    };
    let embed = optional(take_field(&copy, "embed")?);
    let embed_model = take_field(&copy, "embedModel")?;
    let embed_options = take_field(&copy, "embedOptions")?;
    let (embedder, embed) = match embed {
        Some(v) => {
            let (hook, options) = parse_embed_option(v, embed_model, embed_options)?;
            (Some(Rc::new(hook) as Rc<dyn crate::ports::Embedder>), options)
        }
        None => {
            crate::embed::check_unused(!embed_model.is_undefined(), !embed_options.is_undefined())?;
            (None, Default::default())
        }
    };
    let (cipher, migrate_plain) = match optional(take_field(&copy, "encryption")?) {
        Some(v) => {
            let (cipher, migrate) = parse_encryption(v)?;
            (Some(Rc::new(cipher) as Rc<dyn crate::ports::Cipher>), migrate)
        }
        None => (None, false),
    };
    let (redact, patterns) = match optional(take_field(&copy, "redact")?) {
        Some(v) if v.as_bool() == Some(false) => (None, None),
        Some(v) => {
            let (options, patterns) = parse_redact(v)?;
            (Some(options), patterns)
        }
        None => (None, None),
    };
    let long_term = hook(take_field(&copy, "longTerm")?, "longTerm")?;
    let on_damaged = hook(take_field(&copy, "onDamaged")?, "onDamaged")?;
    let sync = optional(take_field(&copy, "sync")?).map(parse_sync).transpose()?;
    let storage_timeout_ms = u32_field(&copy, "storageTimeoutMs")?;
    let long_term_timeout_ms = u32_field(&copy, "longTermTimeoutMs")?;
    let pinned_profile = u32_field(&copy, "pinnedProfile")?;
    let namespace = js_string(&take_field(&copy, "namespace")?, "namespace")?;
    let session_id = js_string(&take_field(&copy, "sessionId")?, "sessionId")?;
    let session: SessionOptions = from_js(copy, "memory options", &[])?;
    memory::validate_namespace(&namespace)?;
    let store = open_store(store_spec, &namespace).await?;
    let options = MemoryOptions {
        namespace,
        session_id,
        agent_id,
        session,
        dedup,
        llm: llm_options,
        auto_compress,
        long_term_timeout_ms,
        storage_timeout_ms,
        pinned_profile,
        embed,
        migrate_plain,
        redact,
    };
    let ports = Ports {
        store,
        clock: Rc::new(JsClock),
        locks: realm_locks(),
        spawner: Rc::new(JsSpawn),
        tokenizer: Rc::new(Estimate),
        llm,
        embedder,
        long_term: long_term.map(|f| Rc::new(JsLongTerm(f)) as Rc<dyn LongTermSource>),
        on_damaged: on_damaged.map(|f| {
            Box::new(move |d: &Damaged| {
                if let Ok(v) = to_js(d) {
                    let _ = f.call1(&JsValue::NULL, &v);
                }
            }) as crate::store::DamageHook
        }),
        cipher,
        patterns,
    };
    Ok((options, ports, sync))
}

/// The core memory, and the `online` listener of its sync schedule.
#[wasm_bindgen(js_name = Memory)]
pub struct JsMemory(pub(super) Memory, pub(super) std::cell::RefCell<Option<OnlineListener>>);

/// A promise of a core call: its error rejects it.
pub(super) fn promise<T: 'static, F>(
    f: F,
    convert: fn(&T) -> std::result::Result<JsValue, JsValue>,
) -> Promise
where
    F: std::future::Future<Output = std::result::Result<T, JsValue>> + 'static,
{
    // Boxed, the method's future is polled through a vtable: its state
    // machine is compiled once, not inlined again into a `future_to_promise`
    // instance of its own (a third of the wasm was such copies).
    let work: LocalBoxFuture<'static, std::result::Result<T, JsValue>> = Box::pin(f);
    boxed(Converted { work, convert })
}

/// [`promise`]'s future, converted: a plain `poll` per result type, not an async block.
struct Converted<T> {
    work: LocalBoxFuture<'static, std::result::Result<T, JsValue>>,
    convert: fn(&T) -> std::result::Result<JsValue, JsValue>,
}

impl<T> std::future::Future for Converted<T> {
    type Output = std::result::Result<JsValue, JsValue>;
    fn poll(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Self::Output> {
        let convert = self.convert;
        self.work.as_mut().poll(cx).map(|r| convert(&r?))
    }
}

/// `future_to_promise` of `f` boxed: every method shares its one instance
/// (about 2.7 KB of wasm each) instead of compiling one per future type.
pub(super) fn boxed(
    f: impl std::future::Future<Output = std::result::Result<JsValue, JsValue>> + 'static,
) -> Promise {
    let f: LocalBoxFuture<'static, std::result::Result<JsValue, JsValue>> = Box::pin(f);
    future_to_promise(f)
}

fn undefined<T>(_: &T) -> std::result::Result<JsValue, JsValue> {
    Ok(JsValue::UNDEFINED)
}

/// A memory to store, from a JS `EntryInput`.
fn parse_entry(value: JsValue) -> std::result::Result<crate::entry::MemoryEntry, JsValue> {
    let input: EntryInput = from_js(value, "memory", &[])?;
    Ok(input.into_memory(super::now_ms())?)
}

/// An array of strings (ids), rejecting anything else.
fn js_strings(value: &JsValue, what: &str) -> std::result::Result<Vec<String>, JsValue> {
    if !js_sys::Array::is_array(value) {
        return Err(Error::invalid(format!("{what} must be an array of strings")).into());
    }
    js_sys::Array::from(value)
        .iter()
        .map(|v| {
            v.as_string().ok_or_else(|| Error::invalid(format!("{what} must be an array of strings")).into())
        })
        .collect()
}

#[wasm_bindgen(js_class = Memory)]
impl JsMemory {
    /// Opens (or restores) a session. It counts with the estimate until
    /// `setTokenizer` gives it an exact tokenizer.
    #[wasm_bindgen(unchecked_return_type = "Promise<Memory>")]
    pub fn open(options: JsMemoryOptions) -> Promise {
        let options: JsValue = options.into();
        boxed(async move {
            let (options, ports, sync) = parse_open(options).await?;
            let memory = Memory::open(options, ports).await?;
            let online = sync.map(|sync| super::autosync::start(&memory, sync)).transpose()?.flatten();
            Ok(JsMemory(memory, online.into()).into())
        })
    }

    /// Deletes a namespace's every record without opening it (an IndexedDB
    /// database, or an adapter's keys under the namespace): the way out of a
    /// namespace that cannot be opened, and a user's "delete my data".
    #[wasm_bindgen(js_name = deleteNamespace, unchecked_return_type = "Promise<void>")]
    pub fn delete_namespace(
        #[wasm_bindgen(unchecked_param_type = "string")] namespace: JsValue,
        #[wasm_bindgen(unchecked_param_type = "\"indexeddb\" | StorageAdapter")] store: JsValue,
    ) -> Promise {
        boxed(async move {
            let namespace = js_string(&namespace, "namespace")?;
            memory::validate_namespace(&namespace)?;
            if store.as_string().as_deref() == Some("indexeddb") {
                IndexedDbStore::delete_database(&namespace).await?;
            } else if store.is_object() {
                memory::delete_namespace(&timed(JsStore::new(store, &namespace)?)).await?;
            } else {
                return Err(Error::invalid("store must be \"indexeddb\" or a storage adapter object").into());
            }
            Ok(JsValue::UNDEFINED)
        })
    }

    /// Stores a message (store first, then memory) and returns the entry.
    #[wasm_bindgen(unchecked_return_type = "Promise<MemoryEntry>")]
    pub fn add(&self, message: JsMessageInput) -> Promise {
        let parsed = from_js::<NewMessage>(message.into(), "message", &[]);
        let m = self.0.clone();
        promise(async move { Ok(m.add(parsed?).await?) }, to_js)
    }

    /// Adds messages in order, minus those the session already ends with (a
    /// retried model call hands them over again); resolves to the entries
    /// added.
    #[wasm_bindgen(js_name = addNew, unchecked_return_type = "Promise<MemoryEntry[]>")]
    pub fn add_new(
        &self,
        #[wasm_bindgen(unchecked_param_type = "MessageInput[]")] messages: JsValue,
    ) -> Promise {
        let parsed =
            super::from_js_list::<NewMessage>(&messages, "addNew takes an array of messages", "message");
        let m = self.0.clone();
        promise(async move { Ok(m.add_new(parsed?).await?) }, to_js)
    }

    /// Summarizes the old messages (map-reduce) now; resolves to the report,
    /// or null when there is nothing to compress. On failure nothing changes.
    #[wasm_bindgen(unchecked_return_type = "Promise<CompressReport | null>")]
    pub fn compress(&self) -> Promise {
        let m = self.0.clone();
        promise(async move { Ok(m.compress().await?) }, to_js)
    }

    /// Session end: extracts long-term memories from the messages not yet
    /// processed, resolves conflicts, refreshes the summary when due. Work
    /// that fails stays owed and is resumed by the next call or open.
    #[wasm_bindgen(js_name = endSession, unchecked_return_type = "Promise<EndSessionReport>")]
    pub fn end_session(&self, options: Option<JsEndSessionOptions>) -> Promise {
        let signal = options.map(JsValue::from).and_then(optional).map(|o| end_session_signal(&o));
        let m = self.0.clone();
        promise(
            async move {
                match signal.transpose()?.flatten() {
                    Some(signal) => Ok(m.end_session_until(aborted(signal)).await?),
                    None => Ok(m.end_session().await?),
                }
            },
            to_js,
        )
    }

    /// Resolves when background work (compression, resumed session ends)
    /// has settled: await it before a worker ends or a test checks results.
    #[wasm_bindgen(unchecked_return_type = "Promise<void>")]
    pub fn idle(&self) -> Promise {
        let idle = self.0.idle();
        boxed(async move {
            idle.await;
            Ok(JsValue::UNDEFINED)
        })
    }

    /// Model calls so far: calls, failures, retries, timeouts, tokens, per purpose.
    #[wasm_bindgen(js_name = llmStats, unchecked_return_type = "LlmStats | null")]
    pub fn llm_stats(&self) -> std::result::Result<JsValue, JsValue> {
        to_js(&self.0.llm_stats())
    }

    /// Deletes another session of the namespace (its messages, summary,
    /// owed work, and its turns from recall); resolves to the records deleted.
    #[wasm_bindgen(js_name = deleteSession, unchecked_return_type = "Promise<number>")]
    pub fn delete_session(
        &self,
        #[wasm_bindgen(unchecked_param_type = "string")] session_id: JsValue,
    ) -> Promise {
        let id = js_string(&session_id, "sessionId");
        let m = self.0.clone();
        promise(async move { Ok(m.delete_session(&id?).await?) }, |n| Ok(JsValue::from(*n)))
    }

    /// Deletes this session's newest message and resolves to it (`null`
    /// when there is none, or a summary already covers it).
    #[wasm_bindgen(js_name = popMessage, unchecked_return_type = "Promise<MemoryEntry | null>")]
    pub fn pop_message(&self) -> Promise {
        let m = self.0.clone();
        promise(async move { Ok(m.pop_message().await?) }, |e| match e {
            Some(e) => to_js(e),
            None => Ok(JsValue::NULL),
        })
    }

    /// Empties this session (its messages, summary, owed work and turns in
    /// recall; long-term memories stay); resolves to the messages deleted.
    #[wasm_bindgen(js_name = clearSession, unchecked_return_type = "Promise<number>")]
    pub fn clear_session(&self) -> Promise {
        let m = self.0.clone();
        promise(async move { Ok(m.clear_session().await?) }, |n| Ok(JsValue::from(*n)))
    }

    /// Session ends owed in this namespace (failed or interrupted work).
    #[wasm_bindgen(js_name = pendingWork, unchecked_return_type = "Promise<OutboxRecord[]>")]
    pub fn pending_work(&self) -> Promise {
        let m = self.0.clone();
        promise(async move { Ok(m.pending_work().await?) }, to_js)
    }

    /// The namespace's sessions with a message or summary stored, the most
    /// recently active first (a second device lists the chats it synced).
    #[wasm_bindgen(unchecked_return_type = "Promise<SessionInfo[]>")]
    pub fn sessions(&self) -> Promise {
        let m = self.0.clone();
        promise(async move { Ok(m.sessions().await?) }, to_js)
    }

    /// The `messages` array for the next request, and where its tokens went.
    #[wasm_bindgen(js_name = buildContext, unchecked_return_type = "Promise<BuiltContext>")]
    pub fn build_context(&self, request: Option<JsContextRequest>) -> Promise {
        let parsed = match request.map(JsValue::from).and_then(optional) {
            Some(r) => parse_context_request(r),
            None => Ok(ContextRequest::default()),
        };
        let m = self.0.clone();
        boxed(async move {
            let ctx = m.build_context(parsed?).await?;
            let out = js_sys::Object::new();
            let messages = js_sys::JSON::parse(&crate::working::message::messages_json(&ctx.messages))?;
            js_sys::Reflect::set(&out, &"messages".into(), &messages)?;
            js_sys::Reflect::set(&out, &"report".into(), &to_js(&ctx.report)?)?;
            Ok(out.into())
        })
    }

    /// What a framework adapter sends for a request: `{ system, entries }`,
    /// the system text (absent when there is none) and the stored entries
    /// of the history messages sent, in order.
    #[wasm_bindgen(js_name = sentEntries, unchecked_return_type = "Promise<SentEntries>")]
    pub fn sent_entries(&self, request: Option<JsContextRequest>) -> Promise {
        let parsed = match request.map(JsValue::from).and_then(optional) {
            Some(r) => parse_context_request(r),
            None => Ok(ContextRequest::default()),
        };
        let m = self.0.clone();
        promise(async move { Ok(m.sent_entries(parsed?).await?) }, to_js)
    }

    /// Working-memory usage: tokens, ratio, pending compression.
    pub fn usage(&self) -> std::result::Result<JsSessionUsage, JsValue> {
        Ok(to_js(&self.0.usage()?)?.unchecked_into())
    }

    /// LLM token usage recorded so far, as one line of text.
    #[wasm_bindgen(js_name = usageReport)]
    pub fn usage_report(&self) -> std::result::Result<String, JsValue> {
        Ok(self.0.with_session(|s| s.budget().usage_report())?)
    }

    /// LLM token usage recorded so far, structured.
    #[wasm_bindgen(js_name = llmUsage)]
    pub fn llm_usage(&self) -> std::result::Result<JsUsageReport, JsValue> {
        Ok(to_js(&self.0.with_session(|s| s.budget().report())?)?.unchecked_into())
    }

    /// Records the tokens of an LLM call made outside the library.
    #[wasm_bindgen(js_name = recordUsage)]
    pub fn record_usage(
        &self,
        #[wasm_bindgen(unchecked_param_type = "number")] input_tokens: JsValue,
        #[wasm_bindgen(unchecked_param_type = "number")] output_tokens: JsValue,
    ) -> std::result::Result<(), JsValue> {
        let input = js_count(&input_tokens, "inputTokens")?;
        let output = js_count(&output_tokens, "outputTokens")?;
        Ok(self.0.with_session(|s| s.budget_mut().record_usage(input, output))?)
    }

    /// Messages evicted from the window that wait for a summary.
    #[wasm_bindgen(js_name = pendingCompression, unchecked_return_type = "MemoryEntry[]")]
    pub fn pending_compression(&self) -> std::result::Result<JsValue, JsValue> {
        to_js(&self.0.with_session(|s| s.pending_compression())?)
    }

    /// The live messages, oldest first.
    #[wasm_bindgen(unchecked_return_type = "MemoryEntry[]")]
    pub fn messages(&self) -> std::result::Result<JsValue, JsValue> {
        to_js(&self.0.with_session(|s| s.messages())?)
    }

    /// Every stored message of the session, oldest first.
    #[wasm_bindgen(js_name = sessionHistory, unchecked_return_type = "Promise<MemoryEntry[]>")]
    pub fn session_history(&self) -> Promise {
        let m = self.0.clone();
        promise(async move { Ok(m.session_history().await?) }, to_js)
    }

    /// Commits a summary that replaces the pending messages up to `throughId`.
    #[wasm_bindgen(js_name = commitSummary, unchecked_return_type = "Promise<MemoryEntry>")]
    pub fn commit_summary(
        &self,
        #[wasm_bindgen(unchecked_param_type = "string")] content: JsValue,
        #[wasm_bindgen(unchecked_param_type = "string")] through_id: JsValue,
    ) -> Promise {
        let args = js_string(&content, "content").and_then(|c| Ok((c, js_string(&through_id, "throughId")?)));
        let m = self.0.clone();
        promise(
            async move {
                let (content, through) = args?;
                Ok(m.commit_summary(content, &through).await?)
            },
            to_js,
        )
    }

    /// Counts with another tokenizer from now on (e.g. once a pack loaded).
    #[wasm_bindgen(js_name = setTokenizer)]
    pub fn set_tokenizer(&self, tokenizer: &JsTokenizer) -> std::result::Result<(), JsValue> {
        Ok(self.0.set_tokenizer(tokenizer.0.clone())?)
    }

    #[wasm_bindgen(getter, js_name = sessionId)]
    pub fn session_id(&self) -> std::result::Result<String, JsValue> {
        Ok(self.0.with_session(|s| s.id().to_string())?)
    }

    /// Stores a long-term memory (default scope "user", kind "fact") unless
    /// one already says it; a fuller version, or one with a changed number,
    /// date, name or polarity, supersedes the old (kept in `history`).
    #[wasm_bindgen(unchecked_return_type = "Promise<Remembered>")]
    pub fn remember(&self, memory: JsEntryInput) -> Promise {
        let entry = parse_entry(memory.into());
        let m = self.0.clone();
        promise(async move { Ok(m.remember(entry?).await?) }, to_js)
    }

    /// Remembers many memories in one store transaction, each deduplicated
    /// against the stored ones and the batch's earlier ones; resolves to one
    /// outcome per input, in order.
    #[wasm_bindgen(js_name = rememberMany, unchecked_return_type = "Promise<Remembered[]>")]
    pub fn remember_many(
        &self,
        #[wasm_bindgen(unchecked_param_type = "EntryInput[]")] memories: JsValue,
    ) -> Promise {
        let entries: std::result::Result<Vec<_>, JsValue> = if js_sys::Array::is_array(&memories) {
            js_sys::Array::from(&memories).iter().map(parse_entry).collect()
        } else {
            Err(Error::invalid("rememberMany takes an array of memories").into())
        };
        let m = self.0.clone();
        promise(async move { Ok(m.remember_many(entries?).await?) }, to_js)
    }

    /// Stores `memory` and expires the memories `replaces` in its favour
    /// (written first, expired after: a failure leaves both, never neither).
    #[wasm_bindgen(unchecked_return_type = "Promise<MemoryEntry>")]
    pub fn supersede(
        &self,
        memory: JsEntryInput,
        #[wasm_bindgen(unchecked_param_type = "string[]")] replaces: JsValue,
    ) -> Promise {
        let args = parse_entry(memory.into()).and_then(|e| Ok((e, js_strings(&replaces, "replaces")?)));
        let m = self.0.clone();
        promise(
            async move {
                let (entry, replaces) = args?;
                Ok(m.supersede(entry, &replaces).await?)
            },
            to_js,
        )
    }

    /// Long-term memories and past turns for a query, best first, with
    /// `explain`; hybrid when the memory has an embedder (or `vector` is given).
    #[wasm_bindgen(unchecked_return_type = "Promise<Hit[]>")]
    pub fn search(
        &self,
        #[wasm_bindgen(unchecked_param_type = "string")] query: JsValue,
        options: Option<JsSearchOptions>,
    ) -> Promise {
        let args = js_string(&query, "query")
            .and_then(|q| Ok((q, parse_search_options(options.map_or(JsValue::UNDEFINED, Into::into))?)));
        let m = self.0.clone();
        promise(
            async move {
                let (query, (opts, vector)) = args?;
                Ok(m.search(&query, &opts, vector).await?)
            },
            to_js,
        )
    }

    /// The valid long-term memories, oldest first; with `asOf`, those in
    /// force at that time (superseded since or not).
    #[wasm_bindgen(unchecked_return_type = "Promise<MemoryEntry[]>")]
    pub fn memories(
        &self,
        #[wasm_bindgen(unchecked_param_type = "{ asOf?: number } | null")] options: JsValue,
    ) -> Promise {
        let options = match optional(options) {
            None => Ok(memory::MemoriesOptions::default()),
            Some(o) if !o.is_object() || js_sys::Array::is_array(&o) => {
                Err(Error::invalid("memories options must be an object: { asOf?: number }").into())
            }
            Some(o) => check_fields(&o, "memories option", &["asOf"], &[]).and_then(|()| {
                let at = js_sys::Reflect::get(&o, &"asOf".into())?;
                let as_of = match at.as_f64() {
                    Some(ms) => Some(crate::entry::whole_ms(ms, "asOf")?),
                    None if at.is_undefined() => None,
                    None => return Err(Error::invalid("asOf must be a number").into()),
                };
                Ok(memory::MemoriesOptions { as_of })
            }),
        };
        let m = self.0.clone();
        promise(async move { Ok(m.memories_with(&options?).await?) }, to_js)
    }

    /// Every memory drawn from a message (its `sources` hold the id),
    /// superseded versions too: what to review or forget with the message.
    #[wasm_bindgen(js_name = derivedFrom, unchecked_return_type = "Promise<MemoryEntry[]>")]
    pub fn derived_from(
        &self,
        #[wasm_bindgen(unchecked_param_type = "string")] message_id: JsValue,
    ) -> Promise {
        let id = js_string(&message_id, "messageId");
        let m = self.0.clone();
        promise(async move { Ok(m.derived_from(&id?).await?) }, to_js)
    }

    /// Every version of a memory (superseded ones too), oldest first.
    #[wasm_bindgen(unchecked_return_type = "Promise<MemoryEntry[]>")]
    pub fn history(&self, #[wasm_bindgen(unchecked_param_type = "string")] id: JsValue) -> Promise {
        let id = js_string(&id, "id");
        let m = self.0.clone();
        promise(async move { Ok(m.history(&id?).await?) }, to_js)
    }

    /// Restores what memory `id` superseded, and expires `id`.
    #[wasm_bindgen(unchecked_return_type = "Promise<void>")]
    pub fn undo(&self, #[wasm_bindgen(unchecked_param_type = "string")] id: JsValue) -> Promise {
        let id = js_string(&id, "id");
        let m = self.0.clone();
        promise(async move { Ok(m.undo(&id?).await?) }, undefined)
    }

    /// Hard-deletes one long-term memory; resolves to whether it existed.
    #[wasm_bindgen(unchecked_return_type = "Promise<boolean>")]
    pub fn forget(&self, #[wasm_bindgen(unchecked_param_type = "string")] id: JsValue) -> Promise {
        let id = js_string(&id, "id");
        let m = self.0.clone();
        promise(async move { Ok(m.forget(&id?).await?) }, |b| Ok(JsValue::from_bool(*b)))
    }

    /// Hard-deletes every long-term memory of a scope; resolves to the count.
    #[wasm_bindgen(js_name = forgetScope, unchecked_return_type = "Promise<number>")]
    pub fn forget_scope(&self, #[wasm_bindgen(unchecked_param_type = "Scope")] scope: JsValue) -> Promise {
        let scope = js_string(&scope, "scope").and_then(|s| Ok(s.parse::<Scope>()?));
        let m = self.0.clone();
        promise(async move { Ok(m.forget_scope(&scope?).await?) }, |n| Ok(JsValue::from(*n)))
    }

    /// Hard-deletes the namespace's long-term memory and processed hashes.
    #[wasm_bindgen(unchecked_return_type = "Promise<void>")]
    pub fn purge(&self) -> Promise {
        let m = self.0.clone();
        promise(async move { Ok(m.purge().await?) }, undefined)
    }

    /// The namespace's long-term memory as one versioned JSON document;
    /// with `{ sealed: true }` (and `encryption`), sealed as one value.
    #[wasm_bindgen(js_name = exportMemories, unchecked_return_type = "Promise<ExportDocument | SealedExport>")]
    pub fn export_memories(
        &self,
        #[wasm_bindgen(unchecked_param_type = "{ sealed?: boolean } | null")] options: JsValue,
    ) -> Promise {
        let sealed = match optional(options) {
            None => Ok(false),
            Some(o) if !o.is_object() || js_sys::Array::is_array(&o) => {
                Err(Error::invalid("exportMemories options must be an object: { sealed?: boolean }").into())
            }
            Some(o) => check_fields(&o, "exportMemories option", &["sealed"], &[]).and_then(|()| {
                let v = js_sys::Reflect::get(&o, &"sealed".into())?;
                match v.as_bool() {
                    Some(b) => Ok(b),
                    None if v.is_undefined() => Ok(false),
                    None => Err(Error::invalid("exportMemories' sealed must be a boolean").into()),
                }
            }),
        };
        let m = self.0.clone();
        promise(
            async move {
                match sealed? {
                    true => to_js(&m.export_sealed().await?),
                    false => to_js(&m.export().await?),
                }
            },
            |v: &JsValue| Ok(v.clone()),
        )
    }

    /// Imports an export document, sealed or not; importing it twice
    /// changes nothing.
    #[wasm_bindgen(js_name = importMemories, unchecked_return_type = "Promise<ImportReport>")]
    pub fn import_memories(
        &self,
        #[wasm_bindgen(unchecked_param_type = "ExportDocument | SealedExport")] document: JsValue,
    ) -> Promise {
        let json = super::json_of(&document, "the export document");
        let m = self.0.clone();
        promise(async move { Ok(m.import_json(&json?).await?) }, to_js)
    }

    /// Long-term counts by kind, scope, agent and day; storage size; searches
    /// per day and scope; the records skipped as damaged.
    #[wasm_bindgen(unchecked_return_type = "Promise<MemoryStats>")]
    pub fn stats(&self) -> Promise {
        let m = self.0.clone();
        promise(async move { Ok(m.stats().await?) }, to_js)
    }
}

/// A context request; `tools` is counted as the JSON the provider will get.
fn parse_context_request(value: JsValue) -> std::result::Result<ContextRequest, JsValue> {
    if !value.is_object() {
        return Err(Error::invalid("context request must be an object").into());
    }
    let tools = js_sys::Reflect::get(&value, &"tools".into())?;
    let mut request: ContextRequest = from_js(value, "context request", &["tools"])?;
    if let Some(tools) = optional(tools) {
        if !js_sys::Array::is_array(&tools) {
            return Err(Error::invalid("tools must be an array of tool definitions").into());
        }
        request.tools_json = Some(super::json_of(&tools, "tools")?);
    }
    Ok(request)
}

/// Runs the store conformance suite against a storage adapter: the way to
/// check an adapter before trusting it with memories. Uses (and leaves
/// empty) the namespace given.
#[wasm_bindgen(js_name = checkStorageAdapter, unchecked_return_type = "Promise<void>")]
pub fn check_storage_adapter(
    #[wasm_bindgen(unchecked_param_type = "StorageAdapter")] adapter: JsValue,
    #[wasm_bindgen(unchecked_param_type = "string")] namespace: JsValue,
) -> Promise {
    boxed(async move {
        let ns = js_string(&namespace, "namespace")?;
        memory::validate_namespace(&ns)?;
        let store = timed(JsStore::new(adapter, &ns)?);
        crate::store::conformance::run(&store).await?;
        Ok(JsValue::UNDEFINED)
    })
}

#[wasm_bindgen(js_class = Memory)]
impl JsMemory {
    /// Stops the sync schedule and its `online` listener, and resolves once
    /// a running sync and the background work already queued have settled;
    /// then every call but `close` and `idle` rejects with `CLOSED`.
    #[wasm_bindgen(unchecked_return_type = "Promise<void>")]
    pub fn close(&self) -> Promise {
        drop(self.1.take());
        let m = self.0.clone();
        promise(
            async move {
                m.close().await;
                Ok(())
            },
            |_| Ok(JsValue::UNDEFINED),
        )
    }
}
