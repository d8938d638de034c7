// A chat's memory in Node, kept in a JSON file between runs (ES modules):
//
//   node chat.mjs "I live in Lisbon."        adds the user's turn
//   node chat.mjs --end                      ends the session: facts go to long-term memory
//   node chat.mjs --ask "Where do I live?"   prints what would be sent to the model
//
// No init in Node: the wasm loads on import. Without a model, session end
// extracts facts with the built-in rules; pass `llm` to Memory.open to use one.
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { loadTokenizer, Memory } from "agent-memory";
import { mapAdapter } from "agent-memory/adapters/map";

const FILE = process.env.MEMORY_FILE ?? "memory.json";
const store = mapAdapter(new Map(existsSync(FILE) ? JSON.parse(readFileSync(FILE, "utf8")) : []));
const memory = await Memory.open({ namespace: "me", sessionId: "chat", store });
memory.setTokenizer(await loadTokenizer("o200k"));

const [flag, text] = process.argv.slice(2);
let out;
if (flag === "--end") {
  out = await memory.endSession();
} else if (flag === "--ask") {
  const { messages, report } = await memory.buildContext({ system: "You are a helpful assistant.", query: text });
  out = { messages, tokens: report.total, tokenizer: report.tokenizer };
} else {
  out = await memory.add({ role: "user", content: flag });
}
await memory.idle();
writeFileSync(FILE, JSON.stringify([...store.map]));
console.log(JSON.stringify(out));
