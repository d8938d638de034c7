//! The hand-written part of the package's TypeScript declarations: what
//! TypeScript says beyond the serde types (hooks, the storage adapter,
//! CryptoKeys, AbortSignals, RegExps, literal unions and the fields JS adds
//! to a core type). Every option and result object is declared from its
//! Rust type by `src/ts.rs` (scripts/build.sh appends those declarations to
//! the `.d.ts`); an `interface` here of the same name adds fields to the
//! generated one (declaration merging).

use wasm_bindgen::prelude::*;

#[wasm_bindgen(typescript_custom_section)]
const TS_TYPES: &'static str = r#"
/** Stable codes carried by every error the library throws (`err.code`); NOT_INITIALIZED is the JS glue's own (the wasm is not loaded yet). */
export type ErrorCode = CoreErrorCode | "NOT_INITIALIZED";

/** Errors thrown by agent-memory: `name` is "AgentMemoryError". */
export interface AgentMemoryError extends Error { code: ErrorCode; }

export type ChatRole = Role;

/** Any object with these async methods: Durable Object storage, Deno KV, a Map, a server. */
export interface StorageAdapter {
  get(key: string): Promise<string | undefined | null> | string | undefined | null;
  put(key: string, value: string): Promise<void> | void;
  delete(key: string): Promise<unknown> | unknown;
  /** Every [key, value] whose key starts with prefix. */
  list(prefix: string): Promise<Iterable<[string, string]>> | Iterable<[string, string]>;
  /** Optional atomic batch write. */
  putMany?(entries: Record<string, string>): Promise<void> | void;
  /**
   * Optional atomic conditional write: `entries` only if `check` holds `expected` (undefined: absent),
   * in one step; resolves to whether it wrote. Without it, writers in several processes can both pass
   * one check (within one realm the library's lock keeps them apart).
   */
  putManyIf?(check: string, expected: string | undefined, entries: Record<string, string>): Promise<boolean> | boolean;
}

export interface MemoryOptions extends SessionOptions {
  /** One user's memory space: an IndexedDB database, or a key prefix of an adapter. */
  namespace: string;
  /** The conversation; "agent:<parent>" for a sub-agent writing into its parent. */
  sessionId: string;
  /** In Node, default: a SQLite file, `agent-memory.db` in the working directory; elsewhere "memory" (nothing kept). */
  store?: "memory" | "indexeddb" | StorageAdapter;
  /** Supplies the long-term memory block for a query, within about budgetTokens (default: the built-in retrieval). */
  longTerm?: (query: string, budgetTokens: number) => string | Promise<string>;
  /** The agent whose memories ("agent:<id>") join the user profile in requests. */
  agentId?: string;
  dedup?: DedupOptions;
  /** The model, reached only through the host: a function, or an OpenAI-compatible endpoint with the host's fetch. */
  llm?: LlmFunction | LlmConfig;
  /** Compress in the background when `add` finds compression due (default true with an llm). */
  autoCompress?: boolean;
  /** Hears of each stored record that could not be read (it is skipped; `stats().damaged` lists them). */
  onDamaged?: (damaged: Damaged) => void;
  /** A storage adapter's call must settle within this, else STORAGE_TIMEOUT (default 30000). */
  storageTimeoutMs?: number;
  /** The `longTerm` hook must answer within this, else the turn goes on without the block (default 10000). */
  longTermTimeoutMs?: number;
  /** User facts pinned in every request's block, whatever the query (preferences and profile first, then importance); default 6, 0 for none. */
  pinnedProfile?: number;
  /** The embedding model: with one, memories and past turns get vectors in the background and recall fuses BM25 with cosine. A function, or an OpenAI-compatible `/embeddings` endpoint with the host's fetch. */
  embed?: EmbedFunction | EmbedConfig;
  /** The name of the embed function's model (required with a function; default `embed.model`). Stored with each vector: a new name re-embeds everything. */
  embedModel?: string;
  embedOptions?: EmbedOptions;
  /** Encryption at rest: every record sealed with AES-GCM (WebCrypto) before the store sees it. */
  encryption?: EncryptionOptions;
  /** Replace e-mail addresses, phone numbers, card numbers (Luhn), IBANs and API-key-like strings (and your own patterns) with placeholders such as "[EMAIL]" in messages, memories, summaries, imports and queries, before anything is stored or sent to the model or the embedder. `true` runs every built-in detector. */
  redact?: boolean | RedactConfig;
  /** Sync long-term memory in the background: right after open (open does not wait), every `intervalMs`, and when the browser comes back online; failures land in `stats().sync.lastError`. `close()` stops it. */
  sync?: AutoSyncOptions;
}

export interface RedactConfig extends RedactOptions {
  /** Your own: each match becomes `[NAME]`. */
  patterns?: { name: string; pattern: RegExp }[];
}

export interface EncryptionOptions {
  /** Seals new records and opens them: an AES-GCM CryptoKey with the encrypt and decrypt usages (it may be non-extractable). */
  key: CryptoKey;
  /** Older keys: records sealed under them are read, and resealed under `key` in the background. */
  previousKeys?: CryptoKey[];
  /** Read the plain records of a namespace that was not encrypted, and seal them in the background (default false: a plain record in an encrypted namespace is reported as damaged, not read). */
  migrate?: boolean;
}

/** Returns one vector per text, in order. */
export type EmbedFunction = (texts: string[]) => Promise<(Float32Array | number[])[]> | (Float32Array | number[])[];

export interface EmbedConfig {
  /** An OpenAI-compatible embeddings URL, e.g. "http://127.0.0.1:11434/v1/embeddings". */
  endpoint: string;
  model: string;
  /** Default: the global fetch. */
  fetch?: typeof fetch;
  headers?: Record<string, string>;
}

/** What the library asks the model. `signal` aborts when the library gives up on the call. */
export interface LlmRequest {
  messages: { role: "system" | "user"; content: string }[];
  /** Answer with a JSON object. */
  json: boolean;
  maxTokens?: number;
  signal: AbortSignal;
}

/** A plain model function. Throw an error with `status` (e.g. 429) to say whether retrying helps. */
export type LlmFunction = (request: LlmRequest) =>
  string | { content: string; usage?: { prompt_tokens?: number; completion_tokens?: number; inputTokens?: number; outputTokens?: number } }
  | Promise<string | { content: string; usage?: { prompt_tokens?: number; completion_tokens?: number; inputTokens?: number; outputTokens?: number } }>;

export type LlmConfig = LlmGovernorOptions & (
  | { complete: LlmFunction }
  | {
      /** e.g. "https://api.example.com/v1/chat/completions" */
      endpoint: string;
      model: string;
      /** Default: the global fetch. */
      fetch?: typeof fetch;
      /** e.g. { authorization: "Bearer …" }; the library never stores them. */
      headers?: Record<string, string>;
      temperature?: number;
    });

export interface EndSessionOptions { signal?: AbortSignal; }

export interface ContextRequest {
  /** Tool definitions as sent to the provider (counted as JSON). */
  tools?: unknown[];
}

export interface BuiltContext { messages: ChatMessage[]; report: ContextReport; }

export interface SearchOptions {
  /** The query's embedding, for hybrid search (`memory.search`: needs `embed`, same model and dimension). */
  vector?: Float32Array | number[];
}

/** `memory.search` only: where a hit came from (`Origin`, flat: absent on a plain index's hits). */
export interface Hit {
  /** A long-term fact, a session summary, or a past conversation turn. */
  source?: Origin["source"];
  /** The session a summary or turn belongs to. */
  session?: string;
  /** Who said a turn. */
  role?: Role;
}

export interface IndexDocument {
  embedding?: Float32Array | number[];
}
"#;

#[wasm_bindgen(typescript_custom_section)]
const TS_SYNC_TYPES: &'static str = r#"
/** `Memory.open`'s `sync`. */
export interface AutoSyncOptions {
  /** The way to the peer (a relay): one request, one answer. `httpTransport` of "agent-memory/sync/http" posts each with your fetch. */
  transport: (request: Uint8Array) => Promise<Uint8Array> | Uint8Array;
}

/** `SyncRelay.open`: a relay on a storage adapter, in one user's namespace. */
export interface SyncRelayOptions {
  store: StorageAdapter;
  namespace: string;
  /** A storage adapter's call must settle within this, else STORAGE_TIMEOUT (default 30000). */
  storageTimeoutMs?: number;
  /**
   * How long a tombstone (a forget, a deleted message's erasure) is kept after it reached this relay,
   * in ms (default 90 days): then it is dropped here, and by each device at its next sync. `null` keeps
   * them for good. A device away longer drops what they deleted instead of sending it back.
   */
  horizonMs?: number | null;
}
"#;

#[wasm_bindgen]
extern "C" {
    #[wasm_bindgen(typescript_type = "BudgetOptions")]
    pub type JsBudgetOptions;
    #[wasm_bindgen(typescript_type = "Usage")]
    pub type JsUsage;
    #[wasm_bindgen(typescript_type = "UsageReport")]
    pub type JsUsageReport;
    #[wasm_bindgen(typescript_type = "EntryInput")]
    pub type JsEntryInput;
    #[wasm_bindgen(typescript_type = "MemoryEntry")]
    pub type JsMemoryEntry;
    #[wasm_bindgen(typescript_type = "TokenizerId")]
    pub type JsTokenizerId;
    #[wasm_bindgen(typescript_type = "MemoryOptions")]
    pub type JsMemoryOptions;
    #[wasm_bindgen(typescript_type = "MessageInput")]
    pub type JsMessageInput;
    #[wasm_bindgen(typescript_type = "ContextRequest")]
    pub type JsContextRequest;
    #[wasm_bindgen(typescript_type = "SessionUsage")]
    pub type JsSessionUsage;
    #[wasm_bindgen(typescript_type = "IndexDocument")]
    pub type JsIndexDoc;
    #[wasm_bindgen(typescript_type = "SearchOptions")]
    pub type JsSearchOptions;
    #[wasm_bindgen(typescript_type = "IndexOptions")]
    pub type JsIndexOptions;
    #[wasm_bindgen(typescript_type = "EndSessionOptions")]
    pub type JsEndSessionOptions;
    #[wasm_bindgen(typescript_type = "SyncOptions")]
    pub type JsSyncOptions;
}
