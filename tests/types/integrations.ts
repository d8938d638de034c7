// The framework adapters' declarations against the frameworks' own types:
// what the README shows compiles, and misuse is a type error.
import { wrapLanguageModel, type LanguageModel, type ModelMessage, type UIMessage } from "ai";
import { Agent, run } from "@openai/agents";
import { BaseListChatMessageHistory } from "@langchain/core/chat_history";
import { BaseRetriever } from "@langchain/core/retrievers";
import { Memory } from "../../pkg/index.js";
import { fromModelMessages, fromUIMessages, memoryMiddleware, toModelMessages, toUIMessages } from "../../pkg/integrations/ai-sdk.js";
import { AgentMemoryChatHistory, AgentMemoryRetriever } from "../../pkg/integrations/langchain.js";
import { AgentMemorySession, memoryInputFilter } from "../../pkg/integrations/openai-agents.js";

declare const base: Exclude<LanguageModel, string>;
const memory = await Memory.open({ namespace: "types", sessionId: "s" });

const model = wrapLanguageModel({ model: base as never, middleware: memoryMiddleware(memory, { system: "Be brief." }) });
const history = await memory.sessionHistory();
const messages: ModelMessage[] = toModelMessages(history);
const ui: UIMessage[] = toUIMessages(history);
for (const input of [...fromModelMessages(messages), ...fromUIMessages(ui)]) await memory.add(input);

const chat: BaseListChatMessageHistory = new AgentMemoryChatHistory(memory, { window: true });
const retriever: BaseRetriever = new AgentMemoryRetriever({ memory, topK: 5 });

const agent = new Agent({ name: "assistant", instructions: "Be brief." });
await run(agent, "hi", { session: new AgentMemorySession(memory, { window: true }), callModelInputFilter: memoryInputFilter(memory) });

// @ts-expect-error a middleware needs a Memory
memoryMiddleware("memory");
// @ts-expect-error model messages, not strings
fromModelMessages(["hi"]);
// @ts-expect-error window is a boolean
new AgentMemoryChatHistory(memory, { window: "yes" });

export { model, chat, retriever };
