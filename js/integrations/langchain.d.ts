import type { BaseMessage } from "@langchain/core/messages";
import { BaseListChatMessageHistory } from "@langchain/core/chat_history";
import { BaseRetriever, type BaseRetrieverInput } from "@langchain/core/retrievers";
import type { Document } from "@langchain/core/documents";
import type { Memory, MemoryEntry, MessageInput, Scope } from "../agent_memory.js";

/** A LangChain message as the `MessageInput` of `memory.add` (role, text, tool calls, tool call id). */
export function fromLangChain(message: BaseMessage): MessageInput;
/** A stored `MemoryEntry` as a LangChain message. */
export function toLangChain(entry: MemoryEntry): BaseMessage;

/** `BaseListChatMessageHistory` on a memory's session. */
export class AgentMemoryChatHistory extends BaseListChatMessageHistory {
  lc_namespace: string[];
  constructor(memory: Memory, options?: {
    /** `getMessages` gives what the memory would send (a system message with the summary, then the newest messages that fit its budget) instead of the whole session. Default false. */
    window?: boolean;
  });
  readonly memory: Memory;
  readonly window: boolean;
  getMessages(): Promise<BaseMessage[]>;
  addMessage(message: BaseMessage): Promise<void>;
  addMessages(messages: BaseMessage[]): Promise<void>;
  /** Empties the session (`memory.clearSession()`); long-term memories stay. */
  clear(): Promise<void>;
}

export interface AgentMemoryRetrieverInput extends BaseRetrieverInput {
  memory: Memory;
  topK?: number;
  scopes?: Scope[];
}

/** `BaseRetriever` over `memory.search`: `Document`s with `{ id, score, scope, source, timestamp, sources, explain }` in metadata. */
export class AgentMemoryRetriever extends BaseRetriever {
  lc_namespace: string[];
  constructor(fields: AgentMemoryRetrieverInput);
  readonly memory: Memory;
  _getRelevantDocuments(query: string): Promise<Document[]>;
}
