// A Worker with memory and the o200k pack as a Data module. GET /?n=N loads
// the pack and remembers N distinct memories in an in-isolate store; it
// answers with the wasm linear memory's size, which V8's heap figures leave
// out (bench:edge reads those through the inspector).
import init, { loadTokenizer, Memory } from "agent-memory";
import o200k from "agent-memory/packs/o200k.amtk";

// Words of two or three syllables (8,000 forms), so that memories differ as
// real ones do and dedup keeps them all.
const SYLLABLES = "ka lo mi ne ru sa ti vo be da fe gu ho ji ku la mo pi re so".split(" ");

let memory;
let tokenizer;

export default {
  async fetch(request) {
    const n = Number(new URL(request.url).searchParams.get("n") ?? 0);
    if (!memory) {
      tokenizer = await loadTokenizer(new Uint8Array(o200k));
      memory = await Memory.open({ namespace: "user", sessionId: "chat" });
      memory.setTokenizer(tokenizer);
    }
    // Seeded picks: each memory 8-14 words.
    let seed = 7;
    const next = () => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) >>> 8;
    const word = () => Array.from({ length: 2 + (next() % 2) }, () => SYLLABLES[next() % SYLLABLES.length]).join("");
    for (let i = 0; i < n; i += 500) {
      const batch = [];
      for (let j = i; j < Math.min(n, i + 500); j++) {
        batch.push({ content: Array.from({ length: 8 + (j % 7) }, word).join(" ") });
      }
      await memory.rememberMany(batch);
    }
    const stats = await memory.stats();
    const wasm = await init();
    return Response.json({ memories: stats.valid, wasmMemoryBytes: wasm.memory.buffer.byteLength });
  },
};
