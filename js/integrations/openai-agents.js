// agent-memory inside the OpenAI Agents SDK (@openai/agents): a `Session`
// backed by a memory's session, and per-turn instructions that carry the
// long-term block. Items are stored as messages (so they are compressed,
// recalled and judged at session end like any) and keep the original item
// in their metadata, so `getItems` gives back exactly what was added. A
// model input filter adds what the memory knows to the instructions.

import { readPrompt } from "../guard.js";
import { inputs } from "./inputs.js";
import { sentEntries } from "./sent.js";

const ITEM = "openaiAgents.item";

const { invalid, objects, json, optionsOf, memoryOf } = inputs("openai-agents");

/** Text of an item's content: a string, or the text of its parts. */
function text(content) {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content.map((p) => (typeof p === "string" ? p : p?.text ?? p?.refusal ?? "")).filter(Boolean).join("\n");
}

/** An Agents SDK item as the `MessageInput` of `memory.add`. */
export function fromAgentItem(item) {
  if (item === null || typeof item !== "object") {
    throw invalid("an item must be an object");
  }
  const metadata = { [ITEM]: json(item) };
  const type = item?.type ?? "message";
  if (type === "message") {
    const role = item.role === "developer" ? "system" : item.role;
    if (!["user", "system", "assistant"].includes(role)) {
      throw invalid(`a message item with role ${String(item.role)}`);
    }
    return { role, content: text(item.content), metadata };
  }
  if (type === "function_call") {
    return { role: "assistant", content: "", toolCalls: [{ id: item.callId ?? item.id ?? "", name: item.name, arguments: item.arguments ?? "{}" }], metadata };
  }
  if (type === "function_call_result") {
    const output = typeof item.output === "string" ? item.output : item.output?.text ?? json(item.output ?? "");
    return { role: "tool", content: output, toolCallId: item.callId ?? "", metadata };
  }
  // Reasoning, hosted tool calls and the like: kept for the SDK, with
  // whatever text they carry for recall.
  return { role: "assistant", content: text(item.content ?? item.summary ?? ""), metadata };
}

/** A stored `MemoryEntry` as the item it was added as (or, for a message the SDK did not add, a message item). */
export function toAgentItem(entry) {
  if (entry === null || typeof entry !== "object") throw invalid("an entry must be an object");
  const stored = keptItem(entry.metadata?.[ITEM]);
  if (stored) return stored;
  if (entry.role === "assistant") {
    return { type: "message", role: "assistant", status: "completed", content: [{ type: "output_text", text: entry.content }] };
  }
  return { type: "message", role: entry.role === "tool" ? "user" : entry.role, content: entry.content };
}

/**
 * The item kept in an entry's metadata, or undefined when there is none or
 * it is damaged (not JSON, or not an object): the entry is then rebuilt
 * from its role and text, so one bad stored value cannot break every later
 * `getItems`.
 */
function keptItem(text) {
  if (!text) return undefined;
  try {
    const item = JSON.parse(text);
    return item !== null && typeof item === "object" && !Array.isArray(item) ? item : undefined;
  } catch {
    return undefined;
  }
}

/** The Agents SDK's `Session` on a memory: `run(agent, input, { session })`. */
export class AgentMemorySession {
  /**
   * `window: true` makes `getItems` give only the newest items that fit the
   * memory's budget (what was compressed reaches the model as the summary
   * `memoryInputFilter` adds) instead of the whole session.
   */
  constructor(memory, options) {
    const { sessionId = "agent-memory", window = false } = optionsOf(options, "AgentMemorySession");
    if (typeof sessionId !== "string") throw invalid("AgentMemorySession's sessionId must be a string");
    this.memory = memoryOf(memory, "AgentMemorySession");
    this.sessionId = sessionId;
    this.window = window;
  }

  async getSessionId() {
    return this.sessionId;
  }

  async getItems(limit) {
    // Compared and sliced below, a Symbol or a BigInt would be a TypeError; anything else not a number, a silent guess.
    if (limit !== undefined && typeof limit !== "number") throw invalid("getItems' limit must be a number");
    const items = (await this.entries()).map(toAgentItem);
    // The SDK's `Session` contract, not a memory rule: the newest `limit`
    // items, none for 0; which messages the memory sends is the core's (`window`).
    if (limit === undefined) return items;
    return limit > 0 ? items.slice(-limit) : [];
  }

  /** The session's messages, or with `window` those the memory would send. */
  async entries() {
    if (!this.window) return this.memory.sessionHistory();
    return (await sentEntries(this.memory)).entries;
  }

  async addItems(items) {
    // All converted before any is added: a bad item adds none of the batch.
    const inputs = objects(items, "the items").map(fromAgentItem);
    for (const input of inputs) await this.memory.add(input);
  }

  async popItem() {
    const entry = await this.memory.popMessage();
    return entry ? toAgentItem(entry) : undefined;
  }

  async clearSession() {
    await this.memory.clearSession();
  }
}

/**
 * A `callModelInputFilter` for `run(agent, input, { session, callModelInputFilter })`:
 * before each model call it adds to the agent's instructions what the memory
 * knows for the newest user message of the input (the long-term block and
 * the session summary, within the memory's budget). The filter sees the
 * turn's input, which instructions alone do not.
 */
export function memoryInputFilter(memory) {
  memoryOf(memory, "memoryInputFilter");
  return async (args) => {
    const modelData = args?.modelData;
    if (modelData === null || typeof modelData !== "object") throw invalid("the input filter is called with { modelData }");
    // The items as messages; the core picks what the turn recalls with (the
    // newest user message). Their system items are the SDK's to send, so
    // the instructions stay the system text.
    const messages = objects(modelData.input, "modelData.input").map((item) => {
      const { role, content } = fromAgentItem(item);
      return { role, content };
    });
    const { recall } = readPrompt(messages);
    const base = modelData.instructions ?? "";
    const { system } = await sentEntries(memory, { ...(base ? { system: base } : {}), ...(recall ? { recall } : {}) });
    const instructions = system ?? base;
    return { ...modelData, ...(instructions ? { instructions } : {}) };
  };
}
