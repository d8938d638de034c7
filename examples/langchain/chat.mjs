// A chat with memory in LangChain.js: the session as the chain's message
// history, and recalled memories in the system prompt through the
// retriever. The memory is kept in a JSON file between runs.
//
//   node chat.mjs "I live in Lisbon."                  one turn, streamed
//   node chat.mjs --end                                ends the session: facts go to long-term memory
//   node chat.mjs --session tuesday "Where do I live?" a turn of a new session, which recalls them
//
// OPENAI_BASE_URL, OPENAI_API_KEY and OPENAI_MODEL choose the model (any
// OpenAI-compatible server); the same endpoint extracts facts at session end.
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { ChatOpenAI } from "@langchain/openai";
import { ChatPromptTemplate, MessagesPlaceholder } from "@langchain/core/prompts";
import { RunnablePassthrough, RunnableWithMessageHistory } from "@langchain/core/runnables";
import { Memory } from "agent-memory";
import { mapAdapter } from "agent-memory/adapters/map";
import { AgentMemoryChatHistory, AgentMemoryRetriever } from "agent-memory/langchain";

const FILE = process.env.MEMORY_FILE ?? "memory.json";
const baseURL = process.env.OPENAI_BASE_URL ?? "https://api.openai.com/v1";
const modelId = process.env.OPENAI_MODEL ?? "gpt-4o-mini";
const args = process.argv.slice(2);
const sessionId = args[0] === "--session" ? args.splice(0, 2)[1] : "monday";

const store = mapAdapter(new Map(existsSync(FILE) ? JSON.parse(readFileSync(FILE, "utf8")) : []));
const memory = await Memory.open({
  namespace: "me", sessionId, store,
  llm: { endpoint: `${baseURL}/chat/completions`, model: modelId, headers: { authorization: `Bearer ${process.env.OPENAI_API_KEY}` } },
});
const model = new ChatOpenAI({ model: modelId, configuration: { baseURL } });
const prompt = ChatPromptTemplate.fromMessages([
  ["system", "You are a helpful assistant.\nWhat you know about the user:\n{memories}"],
  new MessagesPlaceholder("history"),
  ["human", "{input}"],
]);
// What adds memory to a LangChain app: the retriever fills {memories}, the session is the history.
const retriever = new AgentMemoryRetriever({ memory, topK: 5 });
const recall = RunnablePassthrough.assign({ memories: async ({ input }) => (await retriever.invoke(input)).map((d) => d.pageContent).join("\n") });
const chain = new RunnableWithMessageHistory({
  runnable: recall.pipe(prompt).pipe(model),
  getMessageHistory: async () => new AgentMemoryChatHistory(memory, { window: true }),
  inputMessagesKey: "input", historyMessagesKey: "history",
});

let out;
if (args[0] === "--end") {
  out = await memory.endSession();
} else {
  let reply = "";
  for await (const chunk of await chain.stream({ input: args[0] }, { configurable: { sessionId } })) reply += chunk.content;
  out = { reply };
}
await memory.idle();
writeFileSync(FILE, JSON.stringify([...store.map]));
console.log(JSON.stringify(out));
