// agent-memory inside LangChain.js: a chat message history backed by a
// session, and a retriever over long-term and episodic recall. Messages
// convert both ways without loss of role, text, tool calls or tool call
// ids. @langchain/core is an optional peer dependency: only this entry
// point imports it.
import { inputs } from "./inputs.js";
import { sentEntries } from "./sent.js";
import { BaseListChatMessageHistory } from "@langchain/core/chat_history";
import { BaseRetriever } from "@langchain/core/retrievers";
import { Document } from "@langchain/core/documents";
import { AIMessage, HumanMessage, SystemMessage, ToolMessage } from "@langchain/core/messages";

const { invalid, objects, json, optionsOf, memoryOf } = inputs("langchain");

/** A LangChain message as the `MessageInput` of `memory.add`. */
export function fromLangChain(message) {
  const type = message?._getType?.() ?? message?.getType?.();
  const content = typeof message?.content === "string" ? message.content : json(message?.content ?? "");
  switch (type) {
    case "human":
      return { role: "user", content };
    case "system":
      return { role: "system", content };
    case "ai": {
      // An invalid tool call (arguments that are not JSON) is kept with its raw arguments, as it came.
      const toolCalls = [
        ...objects(message.tool_calls ?? [], "an AI message's tool_calls").map((c) => ({ id: c.id ?? "", name: c.name, arguments: json(c.args ?? {}) })),
        ...objects(message.invalid_tool_calls ?? [], "an AI message's invalid_tool_calls").map((c) => ({ id: c.id ?? "", name: c.name ?? "", arguments: c.args ?? "" })),
      ];
      return toolCalls.length ? { role: "assistant", content, toolCalls } : { role: "assistant", content };
    }
    case "tool":
      return { role: "tool", content, toolCallId: message.tool_call_id };
    default: {
      throw invalid(`a ${type ?? typeof message} message has no role here`);
    }
  }
}

/** A stored `MemoryEntry` as a LangChain message. */
export function toLangChain(entry) {
  if (entry === null || typeof entry !== "object") throw invalid("an entry must be an object");
  switch (entry.role) {
    case "user":
      return new HumanMessage({ content: entry.content, id: entry.id });
    case "system":
      return new SystemMessage({ content: entry.content, id: entry.id });
    case "tool":
      return new ToolMessage({ content: entry.content, tool_call_id: entry.toolCallId ?? "", id: entry.id });
    default: {
      // A model may emit arguments that are not a JSON object: such a call
      // becomes one of LangChain's `invalid_tool_calls`, raw arguments kept,
      // so one stored call cannot make every later read throw.
      const toolCalls = [];
      const invalidToolCalls = [];
      for (const c of objects(entry.toolCalls ?? [], "an entry's toolCalls")) {
        const args = argsOf(c.arguments);
        if (args) toolCalls.push({ id: c.id, name: c.name, args, type: "tool_call" });
        else invalidToolCalls.push({ id: c.id, name: c.name, args: c.arguments, error: "arguments are not a JSON object", type: "invalid_tool_call" });
      }
      return new AIMessage({ content: entry.content, id: entry.id, tool_calls: toolCalls, invalid_tool_calls: invalidToolCalls });
    }
  }
}

/** A tool call's arguments as an object, or undefined when they are not a JSON object. */
function argsOf(text) {
  try {
    const args = JSON.parse(text || "{}");
    return args !== null && typeof args === "object" && !Array.isArray(args) ? args : undefined;
  } catch {
    return undefined;
  }
}

/** `BaseListChatMessageHistory` on a memory's session: what LangChain adds is stored (and compressed, recalled, judged at session end) like any message. */
export class AgentMemoryChatHistory extends BaseListChatMessageHistory {
  lc_namespace = ["agent_memory", "langchain"];

  /**
   * `window: true` makes `getMessages` give what the memory would send
   * rather than the whole session: one system message (the session's system
   * messages, the summary of what was compressed) and the newest messages
   * that fit the memory's budget.
   */
  constructor(memory, options) {
    super();
    this.memory = memoryOf(memory, "AgentMemoryChatHistory");
    this.window = optionsOf(options, "AgentMemoryChatHistory").window ?? false;
  }

  async getMessages() {
    if (!this.window) return (await this.memory.sessionHistory()).map(toLangChain);
    const { system, entries } = await sentEntries(this.memory);
    return [...(system ? [new SystemMessage(system)] : []), ...entries.map(toLangChain)];
  }

  async addMessage(message) {
    await this.memory.add(fromLangChain(message));
  }

  async addMessages(messages) {
    // All converted before any is added: a bad message adds none of the batch.
    const inputs = objects(messages, "the messages").map(fromLangChain);
    for (const input of inputs) await this.memory.add(input);
  }

  async clear() {
    await this.memory.clearSession();
  }
}

/** `BaseRetriever` over `memory.search`: facts and past turns as `Document`s, with the score, scope, origin and `explain` in metadata. */
export class AgentMemoryRetriever extends BaseRetriever {
  lc_namespace = ["agent_memory", "langchain"];

  constructor(fields) {
    const { memory, topK, scopes, ...rest } = fields ?? {};
    memoryOf(memory, "AgentMemoryRetriever({ memory })");
    super(rest);
    this.memory = memory;
    this.topK = topK;
    this.scopes = scopes;
  }

  async _getRelevantDocuments(query) {
    const options = {};
    if (this.topK !== undefined) options.topK = this.topK;
    if (this.scopes !== undefined) options.scopes = this.scopes;
    const hits = await this.memory.search(query, options);
    return hits.map((h) => new Document({
      pageContent: h.text,
      id: h.id,
      metadata: { id: h.id, score: h.score, scope: h.scope, source: h.source, timestamp: h.timestamp, sources: h.sources ?? [], explain: h.explain },
    }));
  }
}
