// agent-memory inside LangChain.js: a chat message history backed by a
// session, and a retriever over long-term and episodic recall. Messages
// convert both ways without loss of role, text, tool calls or tool call
// ids. @langchain/core is an optional peer dependency: only this entry
// point imports it.
import { error } from "../guard.js";
import { sentEntries } from "./sent.js";
import { BaseListChatMessageHistory } from "@langchain/core/chat_history";
import { BaseRetriever } from "@langchain/core/retrievers";
import { Document } from "@langchain/core/documents";
import { AIMessage, HumanMessage, SystemMessage, ToolMessage } from "@langchain/core/messages";

/** A LangChain message as the `MessageInput` of `memory.add`. */
export function fromLangChain(message) {
  const type = message?._getType?.() ?? message?.getType?.();
  const content = typeof message?.content === "string" ? message.content : JSON.stringify(message?.content ?? "");
  switch (type) {
    case "human":
      return { role: "user", content };
    case "system":
      return { role: "system", content };
    case "ai": {
      const toolCalls = (message.tool_calls ?? []).map((c) => ({ id: c.id ?? "", name: c.name, arguments: JSON.stringify(c.args ?? {}) }));
      return toolCalls.length ? { role: "assistant", content, toolCalls } : { role: "assistant", content };
    }
    case "tool":
      return { role: "tool", content, toolCallId: message.tool_call_id };
    default: {
      throw error("INVALID_INPUT", `agent-memory/langchain: a ${type ?? typeof message} message has no role here`);
    }
  }
}

/** A stored `MemoryEntry` as a LangChain message. */
export function toLangChain(entry) {
  switch (entry.role) {
    case "user":
      return new HumanMessage({ content: entry.content, id: entry.id });
    case "system":
      return new SystemMessage({ content: entry.content, id: entry.id });
    case "tool":
      return new ToolMessage({ content: entry.content, tool_call_id: entry.toolCallId ?? "", id: entry.id });
    default:
      return new AIMessage({
        content: entry.content,
        id: entry.id,
        tool_calls: (entry.toolCalls ?? []).map((c) => ({ id: c.id, name: c.name, args: JSON.parse(c.arguments || "{}"), type: "tool_call" })),
      });
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
  constructor(memory, { window = false } = {}) {
    super();
    this.memory = memory;
    this.window = window;
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
    for (const m of messages) await this.addMessage(m);
  }

  async clear() {
    await this.memory.clearSession();
  }
}

/** `BaseRetriever` over `memory.search`: facts and past turns as `Document`s, with the score, scope, origin and `explain` in metadata. */
export class AgentMemoryRetriever extends BaseRetriever {
  lc_namespace = ["agent_memory", "langchain"];

  constructor({ memory, topK, scopes, ...fields }) {
    super(fields);
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
