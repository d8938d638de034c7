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

use super::entry::EntryInput;
use super::indexeddb::IndexedDbStore;
use super::js_store::JsStore;
use super::llm::{aborted, parse_llm_option};
use super::locks::with_lock;
use super::search::parse_search_options;
use super::tokenizer::JsTokenizer;
use super::types::{JsContextRequest, JsMemoryOptions, JsMessageInput, JsSessionUsage, JsUsageReport};
use super::types::{JsEndSessionOptions, JsEntryInput, JsSearchOptions};
use super::{
    describe, from_js, js_count, js_error, js_string, shallow_copy, take_field, to_js, to_js_json, JsClock,
};
use crate::dedup::DedupOptions;
use crate::entry::Scope;
use crate::error::{Error, ErrorCode, Result};
use crate::llm::consolidate::{self, EndSessionOptions};
use crate::llm::governor::Governor;
use crate::llm::{compress, outbox};
use crate::longterm::ExportDocument;
use crate::ports::LocalBoxFuture;
use crate::recall::{Recall, RecallOptions, RecallSource};
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
    recall: Rc<Mutex<Recall>>,
    /// The Web Lock that serializes long-term writes across tabs.
    lock_name: String,
    long_term: Option<Rc<JsLongTerm>>,
    llm: Option<Rc<LlmState>>,
}

/// The model and the background work it drives.
struct LlmState {
    governor: Governor,
    /// Compress in the background when `add` finds compression due.
    auto_compress: bool,
    compressing: std::cell::Cell<bool>,
    /// Background tasks not yet settled.
    running: std::cell::Cell<u32>,
    /// `idle()` promises to resolve once `running` is back to zero.
    idle_waiters: std::cell::RefCell<Vec<Function>>,
}

impl LlmState {
    /// Runs `work` in the background; its failure is kept in the stats (the
    /// work itself is durable, so it is retried later).
    fn spawn(self: &Rc<Self>, work: impl std::future::Future<Output = Result<()>> + 'static) {
        let state = self.clone();
        self.running.set(self.running.get() + 1);
        wasm_bindgen_futures::spawn_local(async move {
            if let Err(e) = work.await {
                state.governor.note_error(&e);
            }
            state.running.set(state.running.get() - 1);
            if state.running.get() == 0 {
                for resolve in state.idle_waiters.take() {
                    let _ = resolve.call0(&JsValue::NULL);
                }
            }
        });
    }
}

/// Session end under the cross-tab lock, with the namespace reloaded first
/// so that another tab's writes are deduplicated against.
async fn run_end_session(
    lock_name: &str,
    session: &Mutex<Session>,
    recall: &Mutex<Recall>,
    governor: &Governor,
) -> Result<consolidate::EndSessionReport> {
    with_lock(lock_name, async {
        recall.lock().await.refresh().await?;
        consolidate::end_session(session, recall, governor, &EndSessionOptions::default()).await
    })
    .await
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
            let recall_options = RecallOptions {
                agent_id: match take_field(&copy, "agentId")? {
                    v if v.is_undefined() || v.is_null() => None,
                    v => Some(js_string(&v, "agentId")?),
                },
                dedup: match take_field(&copy, "dedup")? {
                    v if v.is_undefined() || v.is_null() => DedupOptions::default(),
                    v => from_js(v, "dedup options", &["jaccard", "levenshtein", "shortTextChars"])?,
                },
                ..RecallOptions::default()
            };
            let llm = match take_field(&copy, "llm")? {
                v if v.is_undefined() || v.is_null() => None,
                v => Some(parse_llm_option(v)?),
            };
            let auto_compress = match take_field(&copy, "autoCompress")? {
                v if v.is_undefined() => true,
                v => v.as_bool().ok_or_else(|| js_error(Error::invalid("autoCompress must be a boolean")))?,
            };
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
            let clock: Rc<dyn crate::clock::Clock> = Rc::new(JsClock);
            let lock_name = format!("agent-memory/{namespace}");
            let recall = with_lock(&lock_name, Recall::open(store.clone(), clock.clone(), recall_options))
                .await
                .map_err(js_error)?;
            let session = Session::open(&session_id, store.clone(), tokenizer, clock.clone(), options)
                .await
                .map_err(js_error)?;
            let owed = outbox::get(store.as_ref(), session.storage_id()).await.map_err(js_error)?.is_some();
            let llm = match llm {
                Some((hook, options)) => Some(Rc::new(LlmState {
                    governor: Governor::new(Rc::new(hook), clock, options).map_err(js_error)?,
                    auto_compress,
                    compressing: Default::default(),
                    running: Default::default(),
                    idle_waiters: Default::default(),
                })),
                None => None,
            };
            let memory = JsMemory {
                session: Rc::new(Mutex::new(session)),
                recall: Rc::new(Mutex::new(recall)),
                lock_name,
                long_term,
                llm,
            };
            // Work an earlier session end left unfinished resumes now, in
            // the background: opening never waits on the model.
            if let (Some(llm), true) = (&memory.llm, owed) {
                let (session, recall, lock_name, state) =
                    (memory.session.clone(), memory.recall.clone(), memory.lock_name.clone(), llm.clone());
                llm.spawn(async move {
                    run_end_session(&lock_name, &session, &recall, &state.governor).await.map(|_| ())
                });
            }
            Ok(memory.into())
        })
    }

    /// Stores a message (store first, then memory) and returns the entry.
    #[wasm_bindgen(unchecked_return_type = "Promise<MemoryEntry>")]
    pub fn add(&self, message: JsMessageInput) -> Promise {
        let parsed: std::result::Result<NewMessage, JsValue> =
            from_js(message.into(), "message", NewMessage::FIELDS);
        let session = self.session.clone();
        let llm = self.llm.clone();
        promise(async move {
            let (entry, due) = {
                let mut s = session.lock().await;
                let entry = s.add(parsed?).await.map_err(js_error)?;
                (entry, s.compression_due())
            };
            // Compression runs in the background: `add` never waits on the model.
            if let Some(state) = llm.filter(|l| l.auto_compress && due && !l.compressing.get()) {
                state.compressing.set(true);
                let s = state.clone();
                state.spawn(async move {
                    let out = compress::compress(&session, &s.governor).await;
                    s.compressing.set(false);
                    out.map(|_| ())
                });
            }
            to_js(&entry)
        })
    }

    /// Summarizes the old messages (map-reduce) now; resolves to the report,
    /// or null when there is nothing to compress. On failure nothing changes.
    #[wasm_bindgen(unchecked_return_type = "Promise<CompressReport | null>")]
    pub fn compress(&self) -> Promise {
        let session = self.session.clone();
        let llm = self.llm.clone();
        promise(async move {
            let llm = llm.ok_or_else(no_llm)?;
            match compress::compress(&session, &llm.governor).await.map_err(js_error)? {
                Some(report) => to_js_json(&report),
                None => Ok(JsValue::NULL),
            }
        })
    }

    /// Session end: extracts long-term memories from the messages not yet
    /// processed, resolves conflicts, refreshes the summary when due. Work
    /// that fails stays owed and is resumed by the next call or open.
    #[wasm_bindgen(js_name = endSession, unchecked_return_type = "Promise<EndSessionReport>")]
    pub fn end_session(&self, options: Option<JsEndSessionOptions>) -> Promise {
        let signal = options
            .map(JsValue::from)
            .filter(|o| o.is_object())
            .map(|o| js_sys::Reflect::get(&o, &"signal".into()).unwrap_or(JsValue::UNDEFINED))
            .filter(|s| !s.is_undefined() && !s.is_null());
        let (session, recall, lock_name, llm) =
            (self.session.clone(), self.recall.clone(), self.lock_name.clone(), self.llm.clone());
        promise(async move {
            let llm = llm.ok_or_else(no_llm)?;
            let work = run_end_session(&lock_name, &session, &recall, &llm.governor);
            let report = match signal {
                None => work.await,
                Some(signal) => {
                    futures::pin_mut!(work);
                    let abort = aborted(signal);
                    futures::pin_mut!(abort);
                    match futures::future::select(work, abort).await {
                        futures::future::Either::Left((out, _)) => out,
                        futures::future::Either::Right(_) => {
                            Err(Error::new(ErrorCode::Aborted, "endSession was aborted; the work stays owed"))
                        }
                    }
                }
            };
            to_js_json(&report.map_err(js_error)?)
        })
    }

    /// Resolves when background work (compression, resumed session ends)
    /// has settled: await it before a worker ends or a test checks results.
    #[wasm_bindgen(unchecked_return_type = "Promise<void>")]
    pub fn idle(&self) -> Promise {
        match &self.llm {
            Some(llm) if llm.running.get() > 0 => {
                Promise::new(&mut |resolve, _| llm.idle_waiters.borrow_mut().push(resolve))
            }
            _ => Promise::resolve(&JsValue::UNDEFINED),
        }
    }

    /// Model calls so far: calls, failures, retries, timeouts, tokens, per purpose.
    #[wasm_bindgen(js_name = llmStats, unchecked_return_type = "LlmStats | null")]
    pub fn llm_stats(&self) -> std::result::Result<JsValue, JsValue> {
        match &self.llm {
            Some(l) => to_js_json(&l.governor.stats()),
            None => Ok(JsValue::NULL),
        }
    }

    /// Session ends owed in this namespace (failed or interrupted work).
    #[wasm_bindgen(js_name = pendingWork, unchecked_return_type = "Promise<OutboxRecord[]>")]
    pub fn pending_work(&self) -> Promise {
        let session = self.session.clone();
        promise(async move {
            let store = session.lock().await.store().clone();
            to_js_json(&outbox::list(store.as_ref()).await.map_err(js_error)?)
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
        let recall = self.recall.clone();
        promise(async move {
            let request = parsed?;
            let session = session.lock().await;
            let recall = recall.lock().await;
            let built_in = RecallSource { recall: &recall, tokenizer: session.tokenizer().as_ref() };
            let source: &dyn LongTermSource = match long_term.as_deref() {
                Some(hook) => hook,
                None => &built_in,
            };
            let ctx = session.build_context(&request, Some(source)).await.map_err(js_error)?;
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
    #[wasm_bindgen(js_name = sessionHistory, unchecked_return_type = "Promise<MemoryEntry[]>")]
    pub fn session_history(&self) -> Promise {
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

#[wasm_bindgen(js_class = Memory)]
impl JsMemory {
    /// Stores a long-term memory (default scope "user", kind "fact") unless
    /// one already says it; a fuller version supersedes what it contains.
    #[wasm_bindgen(unchecked_return_type = "Promise<Remembered>")]
    pub fn remember(&self, memory: JsEntryInput) -> Promise {
        let parsed: std::result::Result<EntryInput, JsValue> =
            from_js(memory.into(), "memory", EntryInput::FIELDS);
        self.with_recall(move |recall| {
            Box::pin(async move {
                let entry = parsed?.into_entry(crate::wasm::now_ms(), Scope::User).map_err(js_error)?;
                to_js_json(&recall.remember(entry).await.map_err(js_error)?)
            })
        })
    }

    /// Remembers many memories in one store transaction, each deduplicated
    /// against the stored ones and the batch's earlier ones; resolves to one
    /// outcome per input, in order.
    #[wasm_bindgen(js_name = rememberMany, unchecked_return_type = "Promise<Remembered[]>")]
    pub fn remember_many(
        &self,
        #[wasm_bindgen(unchecked_param_type = "EntryInput[]")] memories: JsValue,
    ) -> Promise {
        let parsed: std::result::Result<Vec<EntryInput>, JsValue> = if js_sys::Array::is_array(&memories) {
            js_sys::Array::from(&memories).iter().map(|m| from_js(m, "memory", EntryInput::FIELDS)).collect()
        } else {
            Err(js_error(Error::invalid("rememberMany takes an array of memories")))
        };
        self.with_recall(move |recall| {
            Box::pin(async move {
                let now = crate::wasm::now_ms();
                let entries = parsed?
                    .into_iter()
                    .map(|m| m.into_entry(now, Scope::User))
                    .collect::<Result<Vec<_>>>()
                    .map_err(js_error)?;
                to_js_json(&recall.remember_many(entries).await.map_err(js_error)?)
            })
        })
    }

    /// Stores `memory` and expires the memories `replaces` in its favour
    /// (written first, expired after: a failure leaves both, never neither).
    #[wasm_bindgen(unchecked_return_type = "Promise<MemoryEntry>")]
    pub fn supersede(&self, memory: JsEntryInput, replaces: Vec<String>) -> Promise {
        let parsed: std::result::Result<EntryInput, JsValue> =
            from_js(memory.into(), "memory", EntryInput::FIELDS);
        self.with_recall(move |recall| {
            Box::pin(async move {
                let entry = parsed?.into_entry(crate::wasm::now_ms(), Scope::User).map_err(js_error)?;
                to_js_json(&recall.supersede(entry, &replaces).await.map_err(js_error)?)
            })
        })
    }

    /// Long-term memories for a query, best first, with `explain`.
    #[wasm_bindgen(unchecked_return_type = "Promise<Hit[]>")]
    pub fn search(&self, query: JsValue, options: Option<JsSearchOptions>) -> Promise {
        let args = js_string(&query, "query")
            .and_then(|q| Ok((q, parse_search_options(options.map_or(JsValue::UNDEFINED, Into::into))?)));
        let recall = self.recall.clone();
        promise(async move {
            let (query, (opts, _vector)) = args?;
            let recall = recall.lock().await;
            to_js_json(&recall.search(&query, &opts).map_err(js_error)?)
        })
    }

    /// The valid long-term memories, oldest first.
    #[wasm_bindgen(unchecked_return_type = "Promise<MemoryEntry[]>")]
    pub fn memories(&self) -> Promise {
        let recall = self.recall.clone();
        promise(async move { to_js_json(&recall.lock().await.memories()) })
    }

    /// Every version of a memory (superseded ones too), oldest first.
    #[wasm_bindgen(unchecked_return_type = "Promise<MemoryEntry[]>")]
    pub fn history(&self, id: JsValue) -> Promise {
        let id = js_string(&id, "id");
        let recall = self.recall.clone();
        promise(async move { to_js_json(&recall.lock().await.history(&id?)) })
    }

    /// Restores what memory `id` superseded, and expires `id`.
    #[wasm_bindgen(unchecked_return_type = "Promise<void>")]
    pub fn undo(&self, id: JsValue) -> Promise {
        let id = js_string(&id, "id");
        self.with_recall(move |recall| {
            Box::pin(async move {
                recall.undo(&id?).await.map_err(js_error)?;
                Ok(JsValue::UNDEFINED)
            })
        })
    }

    /// Hard-deletes one long-term memory; resolves to whether it existed.
    #[wasm_bindgen(unchecked_return_type = "Promise<boolean>")]
    pub fn forget(&self, id: JsValue) -> Promise {
        let id = js_string(&id, "id");
        self.with_recall(move |recall| {
            Box::pin(async move { Ok(JsValue::from_bool(recall.forget(&id?).await.map_err(js_error)?)) })
        })
    }

    /// Hard-deletes every long-term memory of a scope; resolves to the count.
    #[wasm_bindgen(js_name = forgetScope, unchecked_return_type = "Promise<number>")]
    pub fn forget_scope(&self, scope: JsValue) -> Promise {
        let scope = js_string(&scope, "scope").and_then(|s| s.parse::<Scope>().map_err(js_error));
        self.with_recall(move |recall| {
            Box::pin(async move { Ok(JsValue::from(recall.forget_scope(&scope?).await.map_err(js_error)?)) })
        })
    }

    /// Hard-deletes the namespace's long-term memory and processed hashes.
    #[wasm_bindgen(unchecked_return_type = "Promise<void>")]
    pub fn purge(&self) -> Promise {
        self.with_recall(|recall| {
            Box::pin(async move {
                recall.purge().await.map_err(js_error)?;
                Ok(JsValue::UNDEFINED)
            })
        })
    }

    /// The namespace's long-term memory as one versioned JSON document.
    #[wasm_bindgen(js_name = exportMemories, unchecked_return_type = "Promise<ExportDocument>")]
    pub fn export_memories(&self) -> Promise {
        let recall = self.recall.clone();
        promise(async move { to_js_json(&recall.lock().await.export()) })
    }

    /// Imports an export document; importing it twice changes nothing.
    #[wasm_bindgen(js_name = importMemories, unchecked_return_type = "Promise<ImportReport>")]
    pub fn import_memories(&self, document: JsValue) -> Promise {
        let doc = js_sys::JSON::stringify(&document)
            .map(String::from)
            .map_err(|_| js_error(Error::invalid("the export document must be JSON-serializable")))
            .and_then(|json| {
                serde_json::from_str::<ExportDocument>(&json)
                    .map_err(|e| js_error(Error::invalid(format!("invalid export document: {e}"))))
            });
        self.with_recall(move |recall| {
            Box::pin(async move { to_js_json(&recall.import(doc?).await.map_err(js_error)?) })
        })
    }

    /// Long-term counts by kind, scope, agent and day; storage size; searches per day and scope.
    #[wasm_bindgen(unchecked_return_type = "Promise<MemoryStats>")]
    pub fn stats(&self) -> Promise {
        let recall = self.recall.clone();
        promise(async move { to_js_json(&recall.lock().await.stats()) })
    }
}

impl JsMemory {
    /// Runs a long-term write under the cross-tab lock. Each write catches
    /// up with what other tabs wrote first (one generation read).
    fn with_recall<F>(&self, work: F) -> Promise
    where
        F: for<'a> FnOnce(
                &'a mut Recall,
            ) -> std::pin::Pin<
                Box<dyn std::future::Future<Output = std::result::Result<JsValue, JsValue>> + 'a>,
            > + 'static,
    {
        let recall = self.recall.clone();
        let lock_name = self.lock_name.clone();
        promise(async move {
            let mut out: std::result::Result<JsValue, JsValue> = Ok(JsValue::UNDEFINED);
            // The Web Lock first, then the mutex: the order session end takes them too.
            with_lock(&lock_name, async {
                let mut recall = recall.lock().await;
                out = work(&mut recall).await;
                Ok(())
            })
            .await
            .map_err(js_error)?;
            out
        })
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

fn no_llm() -> JsValue {
    js_error(Error::invalid("this memory has no llm: pass `llm` to Memory.open"))
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
