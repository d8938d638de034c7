// npm run --silent bench:store
//
// Long-term memory on IndexedDB in headless Chromium (benches/browser/store.html)
// next to Dexie 4 in the same page, like for like: one write per call and
// batches of 100, ours with and without near-duplicate dedup, Dexie with and
// without its indexes; opening 10,000 memories until the first search answers
// (Dexie: open and read all), each after another tab remembered 10; ours also encrypted at rest; and the same calls natively with no
// IndexedDB (benches/core/store.rs), the core's own cost. Each figure is measured RUNS times (default 5;
// opens OPENS times, default 8) and printed as min / median / max. Last line:
// one JSON object of the medians.
import { fileURLToPath } from "node:url";
import { execFileSync } from "node:child_process";
import { readFileSync, existsSync, mkdirSync, writeFileSync } from "node:fs";
import { startServer } from "../scripts/static-server.mjs";
import { launchChromium, runPage } from "../scripts/chromium.mjs";
import { mixedCorpus } from "./corpus.mjs";
import { machine, median, showSpread as spread } from "./stats.mjs";

const RUNS = Number(process.env.RUNS ?? 5);
const OPENS = Number(process.env.OPENS ?? 8);

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
// Ten more per open of the 10k namespace (what another tab remembers before
// each open), and two per open for the writes of two tabs one after the other.
const later = Array.from({ length: 12 * OPENS }, () => Array.from({ length: 8 + rand(13) }, () => vocab[rand(vocab.length)]).join(" "));
if (new Set([...texts, ...later]).size !== texts.length + later.length) throw new Error("the generated texts repeat");

// The core's own cost on the same texts: natively, on an in-memory store,
// no IndexedDB and no JS (benches/core/store.rs).
const textsFile = fileURLToPath(new URL("../target/bench-store-texts.txt", import.meta.url));
mkdirSync(new URL("../target/", import.meta.url), { recursive: true });
writeFileSync(textsFile, texts.join("\n"));
const core = JSON.parse(execFileSync("cargo", ["bench", "--quiet", "--bench", "store", "--", textsFile], {
  env: { ...process.env, RUNS: String(RUNS) }, stdio: ["ignore", "pipe", "inherit"],
}).toString().trim().split("\n").at(-1));

// Opening over a remote adapter (a Durable Object, a server): every call
// waits 5 ms, and opening costs its round trips. Node, the built package.
const { Memory } = await import("../pkg/node.js");
const { mapAdapter } = await import("../pkg/adapters/map.js");
const held = mapAdapter();
const remote = Object.fromEntries(Object.entries(held).map(([name, f]) =>
  [name, typeof f === "function" ? async (...args) => { await new Promise((ok) => setTimeout(ok, 5)); return f.apply(held, args); } : f]));
{
  const m = await Memory.open({ namespace: "remote", sessionId: "s", store: held });
  await m.rememberMany(texts.slice(0, 1000).map((content) => ({ content })));
  await m.add({ role: "user", content: texts[1000] });
  m.free();
}
const remoteOpen = [];
for (let run = 0; run < OPENS; run++) {
  const t0 = performance.now();
  (await Memory.open({ namespace: "remote", sessionId: "s", store: remote })).free();
  remoteOpen.push(performance.now() - t0);
}

const routes = new Map([["/store-data.json", (_req, res) => {
  res.writeHead(200, { "content-type": "application/json" });
  res.end(JSON.stringify({ texts, later }));
}]]);
const { server, url } = await startServer(fileURLToPath(new URL("..", import.meta.url)), 0, routes);
const browser = await launchChromium();
let r;
const started = performance.now();
try {
  r = await runPage(browser, `${url}benches/browser/store.html?runs=${RUNS}&opens=${OPENS}`, "__result", 1_800_000);
  if (r.error) throw new Error(r.error);
} finally {
  await browser.close();
  server.close();
}
const version = (p) => JSON.parse(readFileSync(new URL(p, import.meta.url), "utf8")).version;

console.log(`bench:store: headless Chromium ${browser.version?.() ?? ""}, ${machine()}, ` +
  `agent-memory ${version("../pkg/package.json")}, Dexie ${version("../node_modules/dexie/package.json")}; ` +
  `${RUNS} runs per write figure, ${OPENS} opens; median (min-max); ${((performance.now() - started) / 1000).toFixed(0)} s, all in one page`);
console.table([
  { path: "one write per call (200, per s)", "agent-memory remember": spread(r.single.ours), "... no near-dup dedup": spread(r.single.oursNoDedup), "... encrypted": spread(r.single.oursEncrypted),
    "Dexie put (3 indexes)": spread(r.single.dexieIndexed), "Dexie put (no index)": spread(r.single.dexiePlain), "Dexie, 100 as one object": "", goal: "within 2x of Dexie (3 indexes)" },
  { path: "batches of 100 (1,000, per s)", "agent-memory remember": spread(r.batched.ours), "... no near-dup dedup": spread(r.batched.oursNoDedup), "... encrypted": spread(r.batched.oursEncrypted),
    "Dexie put (3 indexes)": spread(r.batched.dexieIndexed), "Dexie put (no index)": spread(r.batched.dexiePlain), "Dexie, 100 as one object": spread(r.batched.dexieAsOne), goal: ">= Dexie (3 indexes)" },
]);
console.table([
  { path: "core only, native: one write per call (per s)", "agent-memory remember": spread(core.writes_per_s) },
  { path: "core only, native: batches of 100 (per s)", "agent-memory remember": spread(core.batch_writes_per_s) },
  { path: "core only, native: open 10,000 until the first search (ms)", "agent-memory remember": spread(core.open_10k_ms) },
  { path: "core only, native: into those 10,000, one write per call (per s)", "agent-memory remember": spread(core.into_10k_writes_per_s) },
  { path: "core only, native: into those 10,000, a batch of 100 (per s)", "agent-memory remember": spread(core.into_10k_batch_writes_per_s) },
  { path: "Node: open 1,000 over an adapter whose every call waits 5 ms (ms)", "agent-memory remember": spread(remoteOpen) },
]);
console.log("Core only: the same calls and texts natively (cargo bench --bench store), on an in-memory store with no");
console.log("IndexedDB and no JS boundary: what the library itself costs, apart from the browser's storage.");
console.log("One transaction per call on both sides. A single write is one record per memory on both sides, ours with its index");
console.log("fields (3 indexes, as Dexie's). A batch: Dexie's bulkPut writes a record per memory; ours writes the batch's new memories");
console.log("into one record of JSON lines (up to 30 KiB; each memory still read, rewritten and forgotten on its own), whose");
console.log("raw floor is the last raw row below; 'Dexie, 100 as one object' is Dexie given that layout (one put per batch).");
console.log("Ours also takes a Web Lock, dedups each memory against the stored ones, writes its operations as one record of");
console.log("this tab's own with a check of the last write seen (other tabs' writes), and indexes the text for search.");
console.log("Encrypted: every record sealed with AES-GCM (WebCrypto, a non-extractable 256-bit key) before IndexedDB sees it,");
console.log("opened at read; no index fields (they would leak scope, kind and time).");
console.table([
  { figure: "open 10,000 memories until the first search answers, 10 written by another tab before each (ms)", "agent-memory": spread(r.open), "... encrypted": spread(r.encryptedOpen), "Dexie (open + read all)": spread(r.dexieOpen), goal: "<= 150 at the median" },
  { figure: "a remember in a tab just after another tab's, 10,000 memories (ms)", "agent-memory": spread(r.afterOtherTab) },
]);
console.log("Long-term memory is a log of operations: a record per write, folded into chunks of up to 30 KiB once 64 pile up;");
console.log("an open reads the chunks and the records since; a tab catches up on another tab's write by reading that tab's records.");
console.log("The raw IndexedDB work of our layout, same page:");
console.table([
  { figure: "1,000 puts in batches of 100: records with their index fields, 3 indexes + generation (schema 4, ours for single writes) (per s)", value: spread(r.raw.indexed) },
  { figure: "1,000 puts in batches of 100: records + an index row each in a second store + generation (schema 3) (per s)", value: spread(r.raw.both) },
  { figure: "1,000 puts in batches of 100: records + generation only, no index (per s)", value: spread(r.raw.records) },
  { figure: "1,000 memories in batches of 100, each batch one record of JSON lines + generation (ours) (per s)", value: spread(r.raw.batch) },
  { figure: "read 10,000 records stored as JSON strings (ms)", value: spread(r.raw["read-records"]) },
  { figure: "read 10,000 records stored as objects (ms)", value: spread(r.raw["read-objects"]) },
]);
console.log(`vocabulary: ${vocab.length} words from ${existsSync(locomo) ? "LoCoMo" : "the mixed corpus"}; the 10k namespace holds ${r.openCount}, Dexie read ${r.dexieOpenCount}; first search: ${r.openHits} hits; encrypted: ${r.encryptedOpenCount} held, ${r.encryptedOpenHits} hits; the second tab saw ${r.secondSees} after its writes`);
const m = (xs) => Math.round(median(xs) * 10) / 10;
console.log(JSON.stringify({
  writes_per_s: Math.round(median(r.single.ours)),
  batch_writes_per_s: Math.round(median(r.batched.ours)),
  dexie_writes_per_s: Math.round(median(r.single.dexieIndexed)),
  dexie_batch_writes_per_s: Math.round(median(r.batched.dexieIndexed)),
  dexie_batch_one_object_writes_per_s: Math.round(median(r.batched.dexieAsOne)),
  nodedup_writes_per_s: Math.round(median(r.single.oursNoDedup)),
  nodedup_batch_writes_per_s: Math.round(median(r.batched.oursNoDedup)),
  open_10k_ms: m(r.open),
  write_after_other_tab_ms: m(r.afterOtherTab),
  dexie_open_10k_ms: m(r.dexieOpen),
  encrypted_writes_per_s: Math.round(median(r.single.oursEncrypted)),
  encrypted_batch_writes_per_s: Math.round(median(r.batched.oursEncrypted)),
  encrypted_open_10k_ms: m(r.encryptedOpen),
  core_writes_per_s: Math.round(median(core.writes_per_s)),
  core_batch_writes_per_s: Math.round(median(core.batch_writes_per_s)),
  core_open_10k_ms: m(core.open_10k_ms),
  core_into_10k_writes_per_s: Math.round(median(core.into_10k_writes_per_s)),
  core_into_10k_batch_writes_per_s: Math.round(median(core.into_10k_batch_writes_per_s)),
  remote_open_ms: m(remoteOpen),
}));
