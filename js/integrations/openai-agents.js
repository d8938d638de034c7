// agent-memory inside the OpenAI Agents SDK (@openai/agents): a `Session`
// backed by a memory's session, and per-turn instructions that carry the
// long-term block. Items are stored as messages (so they are compressed,
// recalled and judged at session end like any) and keep the original item
// in their metadata, so `getItems` gives back exactly what was added. A
// model input filter adds what the memory knows to the instructions.

import { error } from "../guard.js";
import { sentEntries } from "./sent.js";

const ITEM = "openaiAgents.item";

/** Text of an item's content: a string, or the text of its parts. */
function text(content) {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content.map((p) => (typeof p === "string" ? p : p?.text ?? p?.refusal ?? "")).filter(Boolean).join("\n");
}

/** An Agents SDK item as the `MessageInput` of `memory.add`. */
export function fromAgentItem(item) {
  if (item === null || typeof item !== "object") {
    throw error("INVALID_INPUT", "agent-memory/openai-agents: an item must be an object");
  }
  const metadata = { [ITEM]: JSON.stringify(item) };
  const type = item?.type ?? "message";
  if (type === "message") {
    const role = item.role === "developer" ? "system" : item.role;
    if (!["user", "system", "assistant"].includes(role)) {
      throw error("INVALID_INPUT", `agent-memory/openai-agents: a message item with role ${JSON.stringify(item.role)}`);
    }
    return { role, content: text(item.content), metadata };
  }
  if (type === "function_call") {
    return { role: "assistant", content: "", toolCalls: [{ id: item.callId ?? item.id ?? "", name: item.name, arguments: item.arguments ?? "{}" }], metadata };
  }
  if (type === "function_call_result") {
    const output = typeof item.output === "string" ? item.output : item.output?.text ?? JSON.stringify(item.output ?? "");
    return { role: "tool", content: output, toolCallId: item.callId ?? "", metadata };
  }
  // Reasoning, hosted tool calls and the like: kept for the SDK, with
  // whatever text they carry for recall.
  return { role: "assistant", content: text(item.content ?? item.summary ?? ""), metadata };
}

/** A stored `MemoryEntry` as the item it was added as (or, for a message the SDK did not add, a message item). */
export function toAgentItem(entry) {
  const stored = entry.metadata?.[ITEM];
  if (stored) return JSON.parse(stored);
  if (entry.role === "assistant") {
    return { type: "message", role: "assistant", status: "completed", content: [{ type: "output_text", text: entry.content }] };
  }
  return { type: "message", role: entry.role === "tool" ? "user" : entry.role, content: entry.content };
}

/** The Agents SDK's `Session` on a memory: `run(agent, input, { session })`. */
export class AgentMemorySession {
  /**
   * `window: true` makes `getItems` give only the newest items that fit the
   * memory's budget (what was compressed reaches the model as the summary
   * `memoryInputFilter` adds) instead of the whole session.
   */
  constructor(memory, { sessionId = "agent-memory", window = false } = {}) {
    this.memory = memory;
    this.sessionId = sessionId;
    this.window = window;
  }

  async getSessionId() {
    return this.sessionId;
  }

  async getItems(limit) {
    const items = (await this.entries()).map(toAgentItem);
    if (limit === undefined) return items;
    return limit > 0 ? items.slice(-limit) : [];
  }

  /** The session's messages, or with `window` those the memory would send. */
  async entries() {
    if (!this.window) return this.memory.sessionHistory();
    return (await sentEntries(this.memory)).entries;
  }

  async addItems(items) {
    for (const item of items) await this.memory.add(fromAgentItem(item));
  }

  async popItem() {
    const entry = await this.memory.popMessage();
    return entry ? toAgentItem(entry) : undefined;
  }

  async clearSession() {
    await this.memory.clearSession();
  }
}

/** The text of the newest user item of a model input. */
function lastUserText(items) {
  const item = items.findLast((i) => (i.type ?? "message") === "message" && i.role === "user");
  return item ? text(item.content) : "";
}

/**
 * A `callModelInputFilter` for `run(agent, input, { session, callModelInputFilter })`:
 * before each model call it adds to the agent's instructions what the memory
 * knows for the newest user message of the input (the long-term block and
 * the session summary, within the memory's budget). The filter sees the
 * turn's input, which instructions alone do not.
 */
export function memoryInputFilter(memory) {
  if (typeof memory?.buildContext !== "function") {
    throw error("INVALID_INPUT", "agent-memory/openai-agents: memoryInputFilter needs a Memory");
  }
  return async ({ modelData }) => {
    const recall = lastUserText(modelData.input);
    const base = modelData.instructions ?? "";
    const { messages } = await memory.buildContext({ ...(base ? { system: base } : {}), ...(recall ? { recall } : {}) });
    const instructions = messages[0]?.role === "system" ? messages[0].content : base;
    return { ...modelData, ...(instructions ? { instructions } : {}) };
  };
}
