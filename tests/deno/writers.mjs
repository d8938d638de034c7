// Run by tests/node/deno.test.mjs with the real deno binary, as several
// processes on one Deno KV file at once (as Deno Deploy's isolates share one
// KV):
//   deno run --allow-read --allow-write --unstable-kv tests/deno/writers.mjs <kv file> write <writer> <start ms>
//   deno run ... tests/deno/writers.mjs <kv file> count
// Prints one JSON line.
import { initSync, Memory } from "../../pkg/index.js";
import { denoKvAdapter } from "../../pkg/adapters/deno-kv.js";

initSync({ module: Deno.readFileSync(new URL("../../pkg/agent_memory_bg.wasm", import.meta.url)) });
const [path, phase, writer, startAt] = Deno.args;
const kv = await Deno.openKv(path);
const store = denoKvAdapter(kv, ["app"]);
const memory = await Memory.open({ namespace: "shared", sessionId: "s", store });
// Distinct facts, three per writer, that dedup never relates.
const FACTS = [
  "Plays the cello in a community orchestra", "Grew up near the harbour in Valparaiso", "Is allergic to shellfish",
  "Drives an old green Volvo estate", "Keeps bees on the allotment", "Reads Icelandic crime novels at night",
  "Learned to sail at fourteen", "Brews kombucha in the kitchen", "Volunteers at the animal shelter on Saturdays",
  "Collects vintage fountain pens", "Speaks fluent Portuguese", "Climbs at the bouldering gym twice a week",
];
if (phase === "write") {
  // Start together: every process has loaded and opened by then.
  await new Promise((ok) => setTimeout(ok, Math.max(0, Number(startAt) - Date.now())));
  const facts = FACTS.slice(Number(writer) * 3, Number(writer) * 3 + 3);
  const settled = await Promise.allSettled([
    ...Array.from({ length: 5 }, (_, i) => memory.add({ role: "user", content: `writer ${writer} message ${i}` })),
    ...facts.map((content) => memory.remember({ content })),
    memory.remember({ content: "Has a golden retriever called Biscuit" }),
    memory.remember({ content: `Has ${2 + Number(writer)} kids` }),
  ]);
  const acknowledged = facts.filter((_, i) => settled[5 + i].status === "fulfilled");
  const refused = settled.filter((s) => s.status === "rejected").map((s) => `${s.reason?.code}: ${s.reason?.message}`);
  console.log(JSON.stringify({ acknowledged, refused }));
} else {
  const current = (await memory.memories()).map((e) => e.content);
  console.log(JSON.stringify({ current, messages: (await memory.sessionHistory()).length }));
}
kv.close();
