// npm run --silent bench:store
//
// Long-term memory on IndexedDB in headless Chromium (benches/browser/store.html):
// writing 1,000 memories in batches, and opening a namespace of 10,000 memories
// until its first search answers, next to Dexie 4 doing the equivalent raw
// IndexedDB work (bulkPut of the same records; open + read all) in the same
// page. Last line: one JSON object.
import { fileURLToPath } from "node:url";
import { startServer } from "../scripts/static-server.mjs";
import { launchChromium, runPage } from "../scripts/chromium.mjs";
import { readFileSync, existsSync } from "node:fs";
import { mixedCorpus } from "./corpus.mjs";

// 10,000 distinct memory-sized texts: 8-20 words drawn (seeded) from the
// vocabulary of the LoCoMo conversations (../shared/data, read in place),
// or of the mixed corpus where that data is absent. Distinct by
// construction, so every write is a real write and not a dedup hit.
const locomo = new URL("../../shared/data/locomo/memories.jsonl", import.meta.url);
const source = existsSync(locomo)
  ? readFileSync(locomo, "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l).text).join(" ")
  : mixedCorpus(400_000, 17);
const vocab = [...new Set(source.toLowerCase().match(/[\p{L}\p{N}']{3,}/gu))];
let seed = 12345; // mulberry32: exact in 32-bit integer arithmetic
const rand = (n) => {
  seed = (seed + 0x6d2b79f5) | 0;
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
  return ((t ^ (t >>> 14)) >>> 0) % n;
};
const texts = Array.from({ length: 10_000 }, () => Array.from({ length: 8 + rand(13) }, () => vocab[rand(vocab.length)]).join(" "));
if (new Set(texts).size !== texts.length) throw new Error("the generated texts repeat");

const routes = new Map([["/store-data.json", (_req, res) => {
  res.writeHead(200, { "content-type": "application/json" });
  res.end(JSON.stringify({ texts }));
}]]);
const { server, url } = await startServer(fileURLToPath(new URL("..", import.meta.url)), 0, routes);
const browser = await launchChromium();
let r;
try {
  r = await runPage(browser, `${url}benches/browser/store.html`, "__result", 900_000);
  if (r.error) throw new Error(r.error);
} finally {
  await browser.close();
  server.close();
}
const round = (x) => Math.round(x * 10) / 10;
console.log(`Long-term store, headless Chromium ${browser.version?.() ?? ""}`);
console.table([
  { figure: "open a namespace of 10,000 memories + first search (median of 7, ms)", "agent-memory": round(r.open10kMs), "Dexie 4 (open + read all)": round(r.dexieOpen10kMs), goal: "<= 250" },
  { figure: "write 1,000 memories in batches of 100 (median of 5, per s)", "agent-memory": Math.round(r.writesPerS), "Dexie 4 (open + read all)": Math.round(r.dexieWritesPerS), goal: ">= 5000" },
  { figure: "remember() one at a time, 200 memories (per s)", "agent-memory": Math.round(r.sequentialPerS), "Dexie 4 (open + read all)": "", goal: "" },
]);
console.log("The raw IndexedDB work of that layout, in the same page (median of 5):");
console.table([
  { figure: "1,000 puts in batches of 100, records + index rows + generation (ms)", value: round(r.raw1000bothMs) },
  { figure: "1,000 puts in batches of 100, records + generation only (ms)", value: round(r.raw1000recordsMs) },
  { figure: "read 10,000 records stored as JSON strings (ms)", value: round(r.read10krecordsMs) },
  { figure: "read 10,000 records stored as objects { v, scope, kind, time } (ms)", value: round(r.read10kobjectsMs) },
]);
console.log(`vocabulary: ${vocab.length} words from ${existsSync(locomo) ? "LoCoMo" : "the mixed corpus"}`);
console.log(`memories stored per 1,000 written: ${r.storedPerRun} (the rest were near-duplicates by the dedup rules); 10k namespace holds ${r.openCount}; Dexie read ${r.dexieOpenCount}`);
console.log(JSON.stringify({ open_10k_ms: round(r.open10kMs), writes_per_s: Math.round(r.writesPerS), dexie_writes_per_s: Math.round(r.dexieWritesPerS), dexie_open_10k_ms: round(r.dexieOpen10kMs) }));
