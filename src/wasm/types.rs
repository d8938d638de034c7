//! TypeScript declarations for the plain objects that cross the boundary, so
//! the generated `.d.ts` types every option and result instead of `any`.

use wasm_bindgen::prelude::*;

#[wasm_bindgen(typescript_custom_section)]
const TS_TYPES: &'static str = r#"
/** Stable codes carried by every error the library throws (`err.code`). */
export type ErrorCode =
  | "INVALID_INPUT" | "NOT_FOUND" | "STORAGE" | "QUOTA_EXCEEDED" | "TOKENIZER_PACK"
  | "LLM" | "EMBEDDER" | "TIMEOUT" | "ABORTED" | "LIMIT_EXCEEDED" | "STORAGE_TIMEOUT" | "BUSY" | "BLOCKED"
  | "FREED" | "NOT_INITIALIZED" | "DECRYPTION";

/** Errors thrown by agent-memory: `name` is "AgentMemoryError". */
export interface AgentMemoryError extends Error { code: ErrorCode; }

export type TokenizerId = "estimate" | "cl100k" | "o200k";
export type Kind = "conversation" | "fact" | "summary" | "tool_result";
export type Role = "system" | "user" | "assistant" | "tool";
/** "session", "user", or "agent:<id>". */
export type Scope = "session" | "user" | `agent:${string}`;

export interface ToolCall { id: string; name: string; arguments: string; }

export interface TokenCounts { estimate?: number; cl100k?: number; o200k?: number; }

export interface MemoryEntry {
  /** UUID v7, time-ordered. */
  id: string;
  content: string;
  kind: Kind;
  role: Role;
  scope: Scope;
  /** Milliseconds since the Unix epoch, kept exactly as created. */
  timestamp: number;
  metadata: Record<string, string>;
  /** 0 to 1. */
  importance: number;
  toolCalls?: ToolCall[];
  toolCallId?: string;
  tokens: TokenCounts;
  /** The memory that replaced this one. */
  supersededBy?: string;
  /** The ids of the messages it was drawn from (session end sets them; kept through supersede). */
  sources?: string[];
  /** When this memory stopped being valid (ms). */
  validTo?: number;
  /** A state (true until changed) or an event (happened at a time); absent on messages and older memories: a state. */
  temporal?: "state" | "event";
  /** When it became true in the world (ms): the date an event names; absent: `timestamp`. */
  validFrom?: number;
}

/** What `createEntry` takes; everything but `content` has a default. */
export interface EntryInput {
  content: string;
  kind?: Kind;
  role?: Role;
  scope?: Scope;
  timestamp?: number;
  metadata?: Record<string, string>;
  importance?: number;
  toolCalls?: ToolCall[];
  toolCallId?: string;
  /** The ids of the messages it was drawn from. */
  sources?: string[];
  /** Default: an event when the text names a date, else a state. */
  temporal?: "state" | "event";
  /** Default: the date an event names. */
  validFrom?: number;
}

export interface BudgetOptions {
  /** Default 200000. */
  contextWindow?: number;
  /** Default 500. */
  reservedForSystem?: number;
  /** Default 800. */
  reservedForTools?: number;
  /** Default 2000. */
  reservedForResponse?: number;
  /** Share of the conversation budget that triggers compression, in (0, 1]. Default 0.8. */
  compressionThreshold?: number;
}

export type ChatRole = Role;

/** A message to add to the session. */
export interface MessageInput {
  /** Default "user". */
  role?: Role;
  content: string;
  /** Assistant messages: the calls requested. */
  toolCalls?: ToolCall[];
  /** Tool messages: the id of the call this answers. */
  toolCallId?: string;
  metadata?: Record<string, string>;
  /** When it was said (ms since the epoch), for importing earlier conversations; default now. */
  timestamp?: number;
}

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

export interface SessionOptions {
  budget?: BudgetOptions;
  /** Tokens live messages may hold before the oldest move to pending compression. Default: the budget's conversation share. */
  maxTokens?: number;
  /** Rounds never evicted or compressed. Default 3. */
  retainRecentRounds?: number;
  /** At most this many live messages, so in a request's window (the oldest beyond are reported in `leftOut.olderMessages`, and compressed with a model). Default: no count limit, the token budget decides. */
  maxCachedMessages?: number;
  /** Rounds of history a turn sends (x 3 messages); 0 = none. Default: all. */
  contextRounds?: number;
  /** Cap on the conversation window of a request. */
  maxWindowTokens?: number;
  /** Default 2000. */
  summaryBudget?: number;
  /** Default 4000. */
  longTermBudget?: number;
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
}

export interface RedactConfig {
  /** Each built-in detector, on by default. */
  email?: boolean;
  phone?: boolean;
  card?: boolean;
  iban?: boolean;
  secret?: boolean;
  /** Your own: each match becomes `[NAME]`. */
  patterns?: { name: string; pattern: RegExp }[];
}

export interface RedactionStats {
  total: number;
  /** By placeholder, lower case: "email", "phone", "card", "iban", "secret", or your pattern's name. */
  byKind: Record<string, number>;
  /** "message", "memory", "summary", "import", "query". */
  byPlace: Record<string, number>;
}

export interface EncryptionOptions {
  /** Seals new records and opens them: an AES-GCM CryptoKey with the encrypt and decrypt usages (it may be non-extractable). */
  key: CryptoKey;
  /** Older keys: records sealed under them are read, and resealed under `key` in the background. */
  previousKeys?: CryptoKey[];
  /** Read the plain records of a namespace that was not encrypted, and seal them in the background (default false: a plain record in an encrypted namespace is reported as damaged, not read). */
  migrate?: boolean;
}

/** `exportMemories({ sealed: true })`: the export document sealed under the current key (AES-GCM), importable by any memory given that key. */
export interface SealedExport {
  format: "agent-memory-sealed";
  version: 1;
  /** "amenc1.<key id>.<base64>" */
  sealed: string;
}

export interface EncryptionStats {
  /** The id of the key new records are sealed under (a key check value, not the key). */
  keyId: string;
  /** Records resealed under it by this instance. */
  resealed: number;
  /** Records the last pass found under an older key (or plain) and has not resealed yet. */
  stale: number;
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

export interface EmbedOptions {
  /** Texts per call; default 64. */
  batchSize?: number;
  /** Calls in flight at once; default 2. */
  concurrency?: number;
  /** A call is abandoned after this (a search then goes lexical); default 30000. */
  timeoutMs?: number;
}

/** Embedder calls, and the memories and turns with and without a vector. */
export interface EmbeddingStats {
  model: string;
  calls: number;
  texts: number;
  failures: number;
  timeouts: number;
  /** Searches that went lexical because the query could not be embedded. */
  lexicalFallbacks: number;
  lastError: string | null;
  embedded: number;
  /** Waiting for a vector (made in the background). */
  pending: number;
}

/** A message for `extractMemories`; `timestamp` (ms) resolves "yesterday" (default: now). An entry of `sessionHistory()` passes as it is. */
export interface ExtractMessage { id?: string; role: Role; content: string; timestamp?: number; }

export interface ExtractOptions {
  /** Who the memories are about; default "User" ("用户" in Chinese). */
  userName?: string;
  /** Keep sentences scoring at least this; default -0.33 (lower keeps more). */
  threshold?: number;
}

/** A memory drawn by rule from the user's messages, with the ids of its messages. */
export interface ExtractedMemory {
  content: string;
  sources: string[];
  category: "profile" | "preference" | "fact" | "task" | "experience";
  importance: number;
}

/** A stored record that could not be read, and why. */
export interface Damaged { key: string; error: string; }

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

export interface LlmGovernorOptions {
  /** Per attempt, default 60000. */
  timeoutMs?: number;
  /** Retries on 429 / 5xx / network errors / timeouts, default 3. */
  maxRetries?: number;
  /** First backoff, doubled per retry (Retry-After wins when longer), default 500. */
  backoffMs?: number;
  /** Calls in flight at once, default 2. */
  concurrency?: number;
  /** Tokens this session may spend on model calls; no cap by default. */
  maxSessionTokens?: number;
  /** `max_tokens` of each request, default 1024. */
  maxOutputTokens?: number;
}

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

export interface CompressReport {
  /** Messages the summary newly covers. */
  messages: number;
  chunks: number;
  llmCalls: number;
  summary: MemoryEntry;
}

export interface EndSessionOptions { signal?: AbortSignal; }

export interface EndSessionReport {
  newMessages: number;
  /** "llm", "rules" (the model failed or answered nothing usable) or "none" (nothing new). */
  judge: "llm" | "rules" | "none";
  candidates: number;
  added: number;
  superseded: number;
  skipped: number;
  summaryUpdated: boolean;
  llmCalls: number;
  /** False when work is left owed (see `pendingWork()`); it resumes on the next call or open. */
  complete: boolean;
  errors: string[];
}

export interface PurposeStats { calls: number; inputTokens: number; outputTokens: number; }

export interface LlmStats {
  calls: number;
  failures: number;
  retries: number;
  timeouts: number;
  inputTokens: number;
  outputTokens: number;
  /** Calls whose provider reported no usage (counted with the tokenizer). */
  countedLocally: number;
  byPurpose: Partial<Record<"compressChunk" | "compressReduce" | "judge" | "resolve" | "summary", PurposeStats>>;
  lastError: string | null;
}

export interface OutboxRecord { sessionId: string; since: number; attempts: number; lastError?: string; }

export interface ContextRequest {
  /** The user's new message: stored as the turn's user message and sent last, unless the turn holds it already (a retry, a tool step); also the long-term query. */
  query?: string;
  /** What to recall long-term memory with instead of `query`, never appended: for a request whose new message is already in the history (a tool step of a turn). Without `query` and `recall`, the session's newest user message. */
  recall?: string;
  /** The pinned system prompt. */
  system?: string;
  /** Tool definitions as sent to the provider (counted as JSON). */
  tools?: unknown[];
}

export interface OutToolCall { id: string; type: "function"; function: { name: string; arguments: string }; }

/** One element of an OpenAI-compatible `messages` array. */
export interface ChatMessage {
  role: Role;
  content: string;
  tool_calls?: OutToolCall[];
  tool_call_id?: string;
}

export interface LeftOut {
  olderMessages: number;
  orphanToolResults: number;
  incompleteToolCalls: number;
  leadingAssistant: number;
  summary: boolean;
}

export interface ContextReport {
  tokenizer: TokenizerId;
  /** Context window less the response reservation. */
  limit: number;
  system: number;
  tools: number;
  longTerm: number;
  summary: number;
  recentWindow: number;
  query: number;
  /** Exact tokens of the messages (and tool definitions). */
  total: number;
  free: number;
  messagesInHistory: number;
  messagesSent: number;
  /** The ids of the history messages sent, in order (the system message and an appended new message have none). */
  sentIds: string[];
  leftOut: LeftOut;
  longTermTruncated: boolean;
  /** Set when the long-term hook failed; the turn went on without it. */
  longTermError?: string;
}

export interface BuiltContext { messages: ChatMessage[]; report: ContextReport; }

/** What a framework adapter sends: the system text (absent when there is none) and the history's stored entries, in order. */
export interface SentEntries { system?: string; entries: MemoryEntry[]; }

export interface SessionUsage {
  tokenizer: TokenizerId;
  messages: number;
  tokens: number;
  maxTokens: number;
  usageRatio: number;
  pendingCompression: number;
  compressionDue: boolean;
}

export interface IndexDocument {
  id: string;
  text: string;
  /** Neighbouring text that helps find this document, at a lower weight. */
  context?: string;
  /** Default "user". */
  scope?: Scope;
  /** ms since the epoch; default now. */
  timestamp?: number;
  /** 0 to 1; default 0.5. */
  importance?: number;
  /** Long-term memories get `longTermWeight`; default true. */
  longTerm?: boolean;
  embedding?: Float32Array | number[];
}

/** BM25 parameters of a `SearchIndex`. */
export interface IndexOptions {
  /** Default 1.2. */
  k1?: number;
  /** Default 0.75. */
  b?: number;
  /** Weight of the context field; default 0.5. */
  contextWeight?: number;
}

export interface SearchOptions {
  /** Default 10. */
  topK?: number;
  scopes?: Scope[];
  perScopeTopK?: number;
  /** "Now" for time decay (ms); default the clock. */
  now?: number;
  /** Default "none" (measured best on LoCoMo); "linear24h" is the design's preset. */
  decay?: "none" | "linear24h" | "halfLife";
  /** Default 30. */
  halfLifeDays?: number;
  /** Default 0.5. */
  decayFloor?: number;
  /** Default 1.2. */
  longTermWeight?: number;
  /** Default 0. */
  importanceWeight?: number;
  /** Drop hits below this share of the best; default 0. */
  relativity?: number;
  /** Drop hits whose relevance is below this; default 0. */
  minScore?: number;
  /** MMR lambda in [0, 1]; off when absent. */
  mmrLambda?: number;
  /** Default "minmax". */
  fusion?: "minmax" | "rrf";
  /** An absolute floor on the query: nothing is returned unless the hits together match this share of its terms (IDF-weighted; `explain.coverage` is each hit's own) or one reaches `minCosine` with its vector; default 0 and 0 (none). */
  minCoverage?: number;
  minCosine?: number;
  /** Lexical weight in min-max fusion; default 0.5. */
  alpha?: number;
  /** Default 60. */
  rrfK?: number;
  /** Default 1000. */
  truncateChars?: number;
  /** `memory.search`: answer as of this time (ms): memories in force then, superseded since or not (lexically), and turns said by then. */
  asOf?: number;
  /** The query's embedding, for hybrid search (`memory.search`: needs `embed`, same model and dimension). */
  vector?: Float32Array | number[];
}

export interface Explain {
  bm25: number;
  /** BM25 over the query's highest possible: about the IDF-weighted share of the query's terms the hit contains. */
  coverage: number;
  vector?: number | null;
  relevance: number;
  decay: number;
  sourceWeight: number;
  importanceWeight: number;
  mmrPenalty: number;
}

export interface Hit {
  id: string;
  score: number;
  text: string;
  scope: Scope;
  timestamp: number;
  longTerm: boolean;
  explain: Explain;
  /** `memory.search` only: a long-term fact, a session summary, or a past conversation turn. */
  source?: "fact" | "summary" | "turn";
  /** The session a summary or turn belongs to. */
  session?: string;
  /** Who said a turn. */
  role?: Role;
  /** A fact's provenance: the ids of the messages it was drawn from. */
  sources?: string[];
}

export type Similarity =
  | { kind: "exact" } | { kind: "containedInExisting" } | { kind: "containsExisting" }
  | { kind: "jaccard"; score: number } | { kind: "levenshtein"; score: number };

/** What `remember` did. */
export type Remembered =
  | { outcome: "stored"; entry: MemoryEntry }
  /** `change`: what differs from the superseded memory (absent: the new one is a fuller version). */
  | { outcome: "superseded"; entry: MemoryEntry; superseded: string[]; change?: "number" | "date" | "name" | "polarity" | "value" }
  | { outcome: "duplicate"; existing: MemoryEntry; similarity: Similarity };

export interface DedupOptions {
  /** Character-bigram Jaccard threshold; default 0.7. */
  jaccard?: number;
  /** Levenshtein similarity threshold for short texts; default 0.8. */
  levenshtein?: number;
  /** Texts up to this many characters count as short; default 100. */
  shortTextChars?: number;
}

export interface ExportDocument {
  format: "agent-memory";
  version: 1;
  exportedAt: number;
  entries: MemoryEntry[];
  /** How many entries it was written with: an import refuses a document that lost some. */
  count?: number;
  processed: Record<string, number>;
}

/** `duplicates`: current memories not added because one of their scope already says the same. */
export interface ImportReport { added: number; updated: number; unchanged: number; duplicates: number; }

export interface MemoryStats {
  total: number;
  valid: number;
  superseded: number;
  byKind: Record<string, number>;
  byScope: Record<string, number>;
  byAgent: Record<string, number>;
  /** Memories created per UTC day (YYYY-MM-DD). */
  perDay: Record<string, number>;
  storageBytes: number;
  processedHashes: number;
  /** Searches per "YYYY-MM-DD|scope". */
  searches: Record<string, number>;
  /** Stored records skipped because they could not be read. */
  damaged: Damaged[];
  /** With an embedder. */
  embedding?: EmbeddingStats;
  /** With `encryption`. */
  encryption?: EncryptionStats;
  /** With `redact`: what this instance redacted (counts, never the values). */
  redactions?: RedactionStats;
}

export interface Usage { calls: number; inputTokens: number; outputTokens: number; }

export interface UsageReport extends Usage {
  totalTokens: number;
  contextWindow: number;
  availableForConversation: number;
  compressionThreshold: number;
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
}
