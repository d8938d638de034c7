// A chat with memory in the OpenAI Agents SDK: the memory's session as the
// run's session, and what the memory knows added to the instructions by a
// model input filter. The memory is kept in a JSON file between runs.
//
//   node chat.mjs "I live in Lisbon."                  one turn, streamed
//   node chat.mjs --end                                ends the session: facts go to long-term memory
//   node chat.mjs --session tuesday "Where do I live?" a turn of a new session, which recalls them
//
// OPENAI_BASE_URL, OPENAI_API_KEY and OPENAI_MODEL choose the model (any
// OpenAI-compatible server); the same endpoint extracts facts at session end.
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { Agent, OpenAIChatCompletionsModel, run, setTracingDisabled } from "@openai/agents";
import OpenAI from "openai";
import { Memory } from "agent-memory";
import { mapAdapter } from "agent-memory/adapters/map";
import { AgentMemorySession, memoryInputFilter } from "agent-memory/openai-agents";

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
setTracingDisabled(true);
const model = new OpenAIChatCompletionsModel(new OpenAI({ baseURL }), modelId);
const agent = new Agent({ name: "assistant", instructions: "You are a helpful assistant.", model });

let out;
if (args[0] === "--end") {
  out = await memory.endSession();
} else {
  // What adds memory to an Agents SDK app: the session and the input filter.
  const session = new AgentMemorySession(memory, { sessionId, window: true });
  const result = await run(agent, args[0], { session, callModelInputFilter: memoryInputFilter(memory), stream: true });
  let reply = "";
  for await (const delta of result.toTextStream()) reply += delta;
  await result.completed;
  out = { reply };
}
await memory.idle();
writeFileSync(FILE, JSON.stringify([...store.map]));
console.log(JSON.stringify(out));
