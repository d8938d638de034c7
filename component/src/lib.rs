//! agent-memory as a WebAssembly component: the world of
//! `wit/agent-memory.wit` on the same core as the npm package. Like the JS
//! binding, this crate only converts values and forwards calls; its ports
//! (`ports.rs`) reach the host's store, model and embedder through the
//! world's imports, and run the core's futures on a local executor, since a
//! WASI 0.2 call is synchronous.

mod convert;
mod ports;

use std::rc::Rc;

use engine::entry::EntryInput;
use engine::memory::{Memory, MemoryOptions, Ports};
use engine::ports::lock::LingeringLocks;
use engine::retrieval::SearchOptions;
use engine::working::session::ContextRequest;
use engine::{BpeTokenizer, Estimate, Scope, Tokenizer};

use convert::{chat_message, entry, error, from_role, metadata, remembered, tool_calls};
use exports::agent_memory::core::api::{
    self, BuiltContext, ContextReport, EndSessionReport, Error, Hit, ImportReport, MemoryInput, MessageInput,
    OpenOptions, SessionUsage,
};
use ports::{run, HostClock, HostEmbedder, HostLlm, HostLocks, HostStore, PoolSpawn};

wit_bindgen::generate!({ path: "../wit", world: "agent-memory" });

struct Component;
export!(Component);

impl api::Guest for Component {
    type Memory = MemoryResource;
    type Tokenizer = TokenizerResource;
}

pub struct TokenizerResource(Rc<BpeTokenizer>);

impl api::GuestTokenizer for TokenizerResource {
    fn from_pack(bytes: Vec<u8>) -> Result<api::Tokenizer, Error> {
        let tokenizer = BpeTokenizer::from_pack(&bytes).map_err(error)?;
        Ok(api::Tokenizer::new(TokenizerResource(Rc::new(tokenizer))))
    }

    fn id(&self) -> String {
        self.0.id().as_str().to_string()
    }

    fn count(&self, text: String) -> u32 {
        engine::tokens::count_u32(self.0.count(&text))
    }
}

pub struct MemoryResource(Memory);

/// A memory as the core takes it (defaults: a user fact, now).
fn memory_entry(input: MemoryInput) -> Result<engine::MemoryEntry, Error> {
    let scope = input.scope.map(|s| s.parse::<Scope>()).transpose().map_err(error)?;
    let input = EntryInput {
        content: input.content,
        kind: None,
        role: None,
        scope,
        timestamp: None,
        metadata: metadata(input.metadata),
        importance: input.importance,
        tool_calls: Vec::new(),
        tool_call_id: None,
        sources: Vec::new(),
        temporal: None,
        valid_from: None,
    };
    input.into_memory(ports::now_ms()).map_err(error)
}

impl api::GuestMemory for MemoryResource {
    fn open(options: OpenOptions) -> Result<api::Memory, Error> {
        let mut opts = MemoryOptions {
            namespace: options.namespace.clone(),
            session_id: options.session_id,
            ..Default::default()
        };
        if let Some(n) = options.context_window {
            opts.session.budget.context_window = n;
        }
        if let Some(n) = options.reserved_for_response {
            opts.session.budget.reserved_for_response = n;
        }
        opts.session.max_tokens = options.max_tokens;
        let ports = Ports {
            store: Rc::new(HostStore::new(&options.namespace)),
            clock: Rc::new(HostClock),
            locks: LOCKS.with(Rc::clone),
            spawner: Rc::new(PoolSpawn),
            tokenizer: Rc::new(Estimate),
            llm: options.use_llm.then(|| Rc::new(HostLlm) as _),
            embedder: options.embed_model.map(|model| Rc::new(HostEmbedder { model }) as _),
            long_term: None,
            on_damaged: None,
            cipher: None,
            patterns: None,
        };
        let memory = run(Memory::open(opts, ports)).map_err(error)?;
        Ok(api::Memory::new(MemoryResource(memory)))
    }

    fn set_tokenizer(&self, tokenizer: api::TokenizerBorrow<'_>) -> Result<(), Error> {
        let tokenizer = tokenizer.get::<TokenizerResource>().0.clone();
        self.0.set_tokenizer(tokenizer).map_err(error)
    }

    fn add(&self, message: MessageInput) -> Result<api::Entry, Error> {
        let message = engine::working::session::NewMessage {
            role: Some(from_role(message.role)),
            content: message.content,
            tool_calls: tool_calls(message.tool_calls),
            tool_call_id: message.tool_call_id,
            metadata: metadata(message.metadata),
            timestamp: message.timestamp,
        };
        run(self.0.add(message)).map(|e| entry(&e)).map_err(error)
    }

    fn build_context(&self, request: api::ContextRequest) -> Result<BuiltContext, Error> {
        let request = ContextRequest {
            query: request.query,
            recall: request.recall,
            system: request.system,
            tools_json: request.tools_json,
        };
        let ctx = run(self.0.build_context(request)).map_err(error)?;
        let r = ctx.report;
        Ok(BuiltContext {
            messages: ctx.messages.iter().map(chat_message).collect(),
            report: ContextReport {
                tokenizer: r.tokenizer.as_str().to_string(),
                limit: r.limit,
                system: r.system,
                tools: r.tools,
                long_term: r.long_term,
                summary: r.summary,
                recent_window: r.recent_window,
                query: r.query,
                total: r.total,
                free: r.free,
                messages_in_history: r.messages_in_history,
                messages_sent: r.messages_sent,
                sent_ids: r.sent_ids,
                long_term_error: r.long_term_error,
            },
        })
    }

    fn session_history(&self) -> Result<Vec<api::Entry>, Error> {
        run(self.0.session_history()).map(|es| es.iter().map(entry).collect()).map_err(error)
    }

    fn compress(&self) -> Result<bool, Error> {
        run(self.0.compress()).map(|r| r.is_some()).map_err(error)
    }

    fn end_session(&self) -> Result<EndSessionReport, Error> {
        let r = run(self.0.end_session()).map_err(error)?;
        Ok(EndSessionReport {
            new_messages: r.new_messages,
            judge: r.judge.to_string(),
            candidates: r.candidates,
            added: r.added,
            superseded: r.superseded,
            skipped: r.skipped,
            summary_updated: r.summary_updated,
            llm_calls: r.llm_calls,
            complete: r.complete,
            errors: r.errors,
        })
    }

    fn usage(&self) -> Result<SessionUsage, Error> {
        let u = self.0.usage().map_err(error)?;
        Ok(SessionUsage {
            tokenizer: u.tokenizer.as_str().to_string(),
            messages: u.messages,
            tokens: u.tokens,
            max_tokens: u.max_tokens,
            usage_ratio: u.usage_ratio,
            pending_compression: u.pending_compression,
            compression_due: u.compression_due,
        })
    }

    fn search(&self, query: String, top_k: Option<u32>) -> Result<Vec<Hit>, Error> {
        let mut options = SearchOptions::default();
        if let Some(k) = top_k {
            options.top_k = k;
        }
        let hits = run(self.0.search(&query, &options, None)).map_err(error)?;
        Ok(hits
            .into_iter()
            .map(|h| Hit {
                id: h.id,
                text: h.text,
                score: h.score,
                scope: h.scope.to_string(),
                timestamp: h.timestamp,
                long_term: h.long_term,
            })
            .collect())
    }

    fn remember(&self, memory: MemoryInput) -> Result<api::Remembered, Error> {
        let entry = memory_entry(memory)?;
        run(self.0.remember(entry)).map(remembered).map_err(error)
    }

    fn supersede(&self, memory: MemoryInput, replaces: Vec<String>) -> Result<api::Entry, Error> {
        let entry_in = memory_entry(memory)?;
        run(self.0.supersede(entry_in, &replaces)).map(|e| entry(&e)).map_err(error)
    }

    fn forget(&self, id: String) -> Result<bool, Error> {
        run(self.0.forget(&id)).map_err(error)
    }

    fn memories(&self) -> Result<Vec<api::Entry>, Error> {
        run(self.0.memories()).map(|es| es.iter().map(entry).collect()).map_err(error)
    }

    fn stats(&self) -> Result<String, Error> {
        let stats = run(self.0.stats()).map_err(error)?;
        serde_json::to_string(&stats).map_err(|e| error(engine::Error::invalid(e.to_string())))
    }

    fn export_memories(&self) -> Result<String, Error> {
        let doc = run(self.0.export()).map_err(error)?;
        serde_json::to_string(&doc).map_err(|e| error(engine::Error::invalid(e.to_string())))
    }

    fn import_memories(&self, document: String) -> Result<ImportReport, Error> {
        let r = run(self.0.import_json(&document)).map_err(error)?;
        Ok(ImportReport { added: r.added, updated: r.updated, unchanged: r.unchanged })
    }
}

thread_local! {
    /// One set of locks for every memory of this instance: the host's (held
    /// across instances), asked by one of its futures at a time.
    static LOCKS: Rc<dyn engine::ports::Lock> = Rc::new(LingeringLocks::queued(Rc::new(HostLocks)));
}
