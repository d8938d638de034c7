import type { LanguageModelMiddleware, ModelMessage, UIMessage } from "ai";
import type { Memory, MemoryEntry, MessageInput } from "../agent_memory.js";

/**
 * A middleware for `wrapLanguageModel({ model, middleware })`: each call adds
 * the user's new message (or a tool step's results) to the memory's session,
 * sends the memory's context instead of the prompt (system prompt, long-term
 * block, summary and window, within the memory's budget, exact tokens), and
 * adds the reply, streamed or not, tool calls included.
 */
export function memoryMiddleware(memory: Memory, options?: {
  /** A system prompt pinned before the prompt's own system messages. */
  system?: string;
}): LanguageModelMiddleware;

/** One SDK message as `MessageInput`s (one per tool result); the message is kept in metadata. */
export function fromModelMessage(message: ModelMessage): MessageInput[];
export function fromModelMessages(messages: ModelMessage[]): MessageInput[];
/** Stored entries as SDK messages: what was added comes back exactly. */
export function toModelMessages(entries: MemoryEntry[]): ModelMessage[];

/** One UI message as `MessageInput`s: its text and tool calls, then each tool output; the message is kept in metadata. */
export function fromUIMessage(message: UIMessage): MessageInput[];
export function fromUIMessages(messages: UIMessage[]): MessageInput[];
/** Stored entries as UI messages: what was added comes back exactly. */
export function toUIMessages(entries: MemoryEntry[]): UIMessage[];
