import type { Memory, MemoryEntry, MessageInput } from "../agent_memory.js";

/** An item of the OpenAI Agents SDK (`AgentInputItem`), kept as given. */
export type AgentItem = { type?: string; role?: string; [key: string]: unknown };

/** An Agents SDK item as the `MessageInput` of `memory.add` (the item itself kept in metadata). */
export function fromAgentItem(item: AgentItem): MessageInput;
/** A stored `MemoryEntry` as the item it was added as. */
export function toAgentItem(entry: MemoryEntry): AgentItem;

/** The Agents SDK's `Session` on a memory's session: `run(agent, input, { session })`. */
export class AgentMemorySession {
  constructor(memory: Memory, options?: {
    sessionId?: string;
    /** `getItems` gives only the newest items that fit the memory's budget (the summary of the rest comes with `memoryInputFilter`). Default false. */
    window?: boolean;
  });
  readonly memory: Memory;
  readonly sessionId: string;
  readonly window: boolean;
  getSessionId(): Promise<string>;
  getItems(limit?: number): Promise<AgentItem[]>;
  addItems(items: AgentItem[]): Promise<void>;
  /** The newest item, removed (`memory.popMessage()`). */
  popItem(): Promise<AgentItem | undefined>;
  /** `memory.clearSession()`: the session empties; long-term memories stay. */
  clearSession(): Promise<void>;
}

/**
 * A `callModelInputFilter` for `run(agent, input, { session, callModelInputFilter })`: before each
 * model call, the agent's instructions get the memory's long-term block and session summary for the
 * newest user message of the input.
 */
export function memoryInputFilter(memory: Memory): (args: { modelData: { input: AgentItem[]; instructions?: string } }) => Promise<{ input: AgentItem[]; instructions?: string }>;
