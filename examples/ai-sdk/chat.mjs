// A chat with memory in the Vercel AI SDK: the model wrapped with the
// memory's middleware. The memory is kept in a JSON file between runs.
//
//   node chat.mjs "I live in Lisbon."                  one turn, streamed
//   node chat.mjs --end                                ends the session: facts go to long-term memory
//   node chat.mjs --session tuesday "Where do I live?" a turn of a new session, which recalls them
//
// OPENAI_BASE_URL, OPENAI_API_KEY and OPENAI_MODEL choose the model (any
// OpenAI-compatible server); the same endpoint extracts facts at session end.
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { streamText, wrapLanguageModel } from "ai";
import { createOpenAI } from "@ai-sdk/openai";
import { Memory } from "agent-memory";
import { mapAdapter } from "agent-memory/adapters/map";
import { memoryMiddleware } from "agent-memory/ai-sdk";

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
// The two lines that add memory to an AI SDK app:
const openai = createOpenAI({ baseURL });
const model = wrapLanguageModel({ model: openai.chat(modelId), middleware: memoryMiddleware(memory) });

let out;
if (args[0] === "--end") {
  out = await memory.endSession();
} else {
  const result = streamText({ model, system: "You are a helpful assistant.", prompt: args[0] });
  let reply = "";
  for await (const delta of result.textStream) reply += delta;
  out = { reply };
}
await memory.idle();
writeFileSync(FILE, JSON.stringify([...store.map]));
console.log(JSON.stringify(out));
