import type { AgentInputItem, CallModelInputFilter, Session } from "@openai/agents";
import type { Memory, MemoryEntry, MessageInput } from "../agent_memory.js";

/** An item of the OpenAI Agents SDK, kept as given. */
export type AgentItem = AgentInputItem;

/** An Agents SDK item as the `MessageInput` of `memory.add` (the item itself kept in metadata). */
export function fromAgentItem(item: AgentInputItem): MessageInput;
/** A stored `MemoryEntry` as the item it was added as. */
export function toAgentItem(entry: MemoryEntry): AgentInputItem;

/** The Agents SDK's `Session` on a memory's session: `run(agent, input, { session })`. */
export class AgentMemorySession implements Session {
  constructor(memory: Memory, options?: {
    sessionId?: string;
    /** `getItems` gives only the newest items that fit the memory's budget (the summary of the rest comes with `memoryInputFilter`). Default false. */
    window?: boolean;
  });
  readonly memory: Memory;
  readonly sessionId: string;
  readonly window: boolean;
  getSessionId(): Promise<string>;
  getItems(limit?: number): Promise<AgentInputItem[]>;
  addItems(items: AgentInputItem[]): Promise<void>;
  /** The newest item, removed (`memory.popMessage()`). */
  popItem(): Promise<AgentInputItem | undefined>;
  /** `memory.clearSession()`: the session empties; long-term memories stay. */
  clearSession(): Promise<void>;
  /** The session's messages, or with `window` those the memory would send. */
  entries(): Promise<MemoryEntry[]>;
}

/**
 * A `callModelInputFilter` for `run(agent, input, { session, callModelInputFilter })`: before each
 * model call, the agent's instructions get the memory's long-term block and session summary for the
 * newest user message of the input.
 */
export function memoryInputFilter(memory: Memory): CallModelInputFilter;
