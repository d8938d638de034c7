//! TypeScript declarations for the plain objects that cross the boundary, so
//! the generated `.d.ts` types every option and result instead of `any`.

use wasm_bindgen::prelude::*;

#[wasm_bindgen(typescript_custom_section)]
const TS_TYPES: &'static str = r#"
/** Stable codes carried by every error the library throws (`err.code`). */
export type ErrorCode =
  | "INVALID_INPUT" | "NOT_FOUND" | "STORAGE" | "QUOTA_EXCEEDED" | "TOKENIZER_PACK"
  | "LLM" | "TIMEOUT" | "ABORTED" | "LIMIT_EXCEEDED";

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
}
