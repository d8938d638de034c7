// One Deno writer process of `npm run bench:concurrency` (benches/concurrency.mjs):
//   deno run --allow-read --allow-write --unstable-kv benches/concurrency-writer.mjs
// Reads one JSON command a line on stdin (benches/concurrency-work.mjs lists
// them; `where` is a Deno KV file) and answers each with one JSON line on
// stdout. Several such processes on one KV file are the Deno Deploy isolates
// of one app on one KV.
import { initSync, Memory } from "../pkg/index.js";
import { denoKvAdapter } from "../pkg/adapters/deno-kv.js";
import { writerAgent } from "./concurrency-work.mjs";

initSync({ module: Deno.readFileSync(new URL("../pkg/agent_memory_bg.wasm", import.meta.url)) });

// Processes opening one new KV file at once can meet SQLite's "database is
// locked" while the file is set up: opening (not the measured writes) retries.
async function openKv(path) {
  for (let attempt = 1; ; attempt++) {
    try {
      return await Deno.openKv(path);
    } catch (e) {
      if (attempt >= 20 || !/locked/i.test(String(e?.message))) throw e;
      await new Promise((ok) => setTimeout(ok, 10 * attempt));
    }
  }
}
const storeFor = async (path) => {
  const kv = await openKv(path);
  return { store: denoKvAdapter(kv, ["app"]), close: async () => kv.close() };
};
const agent = writerAgent(Memory, storeFor);
const encoder = new TextEncoder();
const say = (value) => Deno.stdout.write(encoder.encode(JSON.stringify(value) + "\n"));

await say({ ready: true });
let buffered = "";
for await (const chunk of Deno.stdin.readable.pipeThrough(new TextDecoderStream())) {
  buffered += chunk;
  let nl;
  while ((nl = buffered.indexOf("\n")) >= 0) {
    const line = buffered.slice(0, nl);
    buffered = buffered.slice(nl + 1);
    if (!line.trim()) continue;
    const command = JSON.parse(line);
    if (command.cmd === "quit") Deno.exit(0);
    // Commands are answered in order; each waits for the one before.
    await say({ id: command.id, ...(await agent(command)) });
  }
}
