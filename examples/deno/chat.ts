// A chat's memory in Deno, on Deno KV (a local file here, Deno Deploy's KV
// when deployed), counted exactly with the o200k pack:
//
//   deno run --unstable-kv --allow-read=memory.db,node_modules/agent-memory/packs --allow-write=memory.db chat.ts memory.db "I live in Lisbon."
//   deno run ... chat.ts memory.db --end
//   deno run ... chat.ts memory.db --ask "Where do I live?"
//
// `--unstable-kv` is what `Deno.openKv` needs (Deno Deploy has KV on). No init
// and no permission to load the package: its Deno entry imports the wasm as
// a module. Reading is for the KV file and the tokenizer pack (a file of the
// package, read when loaded; without the permission `loadTokenizer` rejects
// with TOKENIZER_PACK), writing for the KV file.
import { Memory, loadTokenizer } from "agent-memory";
import { denoKvAdapter } from "agent-memory/adapters/deno-kv";

const [path, flag, text] = Deno.args;
const kv = await Deno.openKv(path);
const memory = await Memory.open({ namespace: "me", sessionId: "chat", store: denoKvAdapter(kv, ["chat-app"]) });
memory.setTokenizer(await loadTokenizer("o200k"));

let out;
if (flag === "--end") {
  out = await memory.endSession();
} else if (flag === "--ask") {
  const { messages, report } = await memory.buildContext({ system: "You are a helpful assistant.", query: text });
  out = { messages, tokens: report.total, tokenizer: memory.usage().tokenizer };
} else {
  out = await memory.add({ role: "user", content: flag });
}
await memory.idle();
kv.close();
console.log(JSON.stringify(out));
