// A chat's memory in Deno, on Deno KV (a local file here, Deno Deploy's KV
// when deployed):
//
//   deno run --unstable-kv --allow-read --allow-write chat.ts memory.db "I live in Lisbon."
//   deno run --unstable-kv --allow-read --allow-write chat.ts memory.db --end
//   deno run --unstable-kv --allow-read --allow-write chat.ts memory.db --ask "Where do I live?"
//
// No init in Deno: the package's Deno entry imports the wasm as a module.
// (The read permission is for the KV file; the package needs none.)
import { Memory } from "agent-memory";
import { denoKvAdapter } from "agent-memory/adapters/deno-kv";

const [path, flag, text] = Deno.args;
const kv = await Deno.openKv(path);
const memory = await Memory.open({ namespace: "me", sessionId: "chat", store: denoKvAdapter(kv, ["chat-app"]) });

let out;
if (flag === "--end") {
  out = await memory.endSession();
} else if (flag === "--ask") {
  const { messages, report } = await memory.buildContext({ system: "You are a helpful assistant.", query: text });
  out = { messages, tokens: report.total };
} else {
  out = await memory.add({ role: "user", content: flag });
}
await memory.idle();
kv.close();
console.log(JSON.stringify(out));
