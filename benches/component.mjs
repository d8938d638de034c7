// npm run --silent bench:component
//
// The WebAssembly component (component/, WASI 0.2) next to the npm package:
// its size (raw and gzip -9, and the JS glue `jco transpile` adds for Node
// and browsers), and the cost of one build-context over 10,000 long-term
// memories through the component boundary (jco in this Node process, the
// host's store a Map) and through the npm package (a Map adapter), in the
// same process, on the same memories and the same 200 questions. Memories:
// LoCoMo turns, three joined per memory, remembered (until 10,000 are kept) in
// the npm package and carried to the component by its JSON export. RUNS
// (default 5) passes over the questions give the spread of the per-call
// median. Last line: one JSON object.
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, readdirSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { mapStore, wasiImports } from "../tests/component/imports.mjs";
import { Memory } from "../pkg/node.js";
import { mapAdapter } from "../tests/node/map-adapter.mjs";
import { root } from "../scripts/example.mjs";
import { machine, median, showSpread } from "./stats.mjs";

const RUNS = Number(process.env.RUNS ?? 5);
const N = 10_000;
const kb = (n) => Math.round((n / 1024) * 10) / 10;
const gz = (bytes) => gzipSync(bytes, { level: 9 }).length;

execFileSync("cargo", ["build", "-p", "agent-memory-component", "--target", "wasm32-wasip2", "--release", "--quiet"], { cwd: root, stdio: "inherit" });
const wasmPath = join(root, "target/wasm32-wasip2/release/agent_memory_component.wasm");
const component = readFileSync(wasmPath);
const out = mkdtempSync(join(tmpdir(), "agent-memory-jco-"));
execFileSync(join(root, "node_modules/.bin/jco"), ["transpile", wasmPath, "-o", out, "--instantiation", "async", "--name", "agent-memory", "--quiet"]);
const glue = readFileSync(join(out, "agent-memory.js"));
const packageWasm = readFileSync(join(root, "pkg/agent_memory_bg.wasm"));

const data = process.env.LOCOMO_DATA ?? new URL("../../shared/data/locomo/", import.meta.url).pathname;
const turns = readFileSync(`${data}/memories.jsonl`, "utf8").trim().split("\n").map((l) => JSON.parse(l).text);
const questions = readFileSync(`${data}/queries.jsonl`, "utf8").trim().split("\n").map((l) => JSON.parse(l).question).slice(0, 200);
// Three turns per memory: LoCoMo has fewer than 3,000 turns, and memories
// that share a turn stay apart from each other for dedup.
const L = turns.length;
const content = (i) => `${turns[i % L]} ${turns[(i * 7919 + 13) % L]} ${turns[(i * 104729 + 7 + Math.floor(i / L) * 101) % L]}`;

// The npm package.
const js = await Memory.open({ namespace: "bench", sessionId: "s", store: mapAdapter() });
// Dedup keeps some out (short turns make close texts): remember until N are stored.
let next = 0;
for (let valid = 0; valid < N; valid = (await js.stats()).valid) {
  const batch = Array.from({ length: Math.min(500, N - valid) }, () => ({ content: content(next++) }));
  await js.rememberMany(batch);
}
const exported = JSON.stringify(await js.exportMemories());

// The component, its store a Map.
const kv = new Map();
const { instantiate } = await import(join(out, "agent-memory.js"));
const { api } = await instantiate((path) => WebAssembly.compile(readFileSync(join(out, path))), {
  "agent-memory:core/store": mapStore(kv),
  "agent-memory:core/locks": { acquire: () => {}, release: () => {} },
  "agent-memory:core/llm": { complete: () => { throw { message: "no model", status: 404 }; } },
  "agent-memory:core/embedder": { embed: () => { throw "no embedder"; } },
  ...wasiImports,
});
const wc = api.Memory.open({ namespace: "bench", sessionId: "s", useLlm: false });
wc.importMemories(exported);
const jsValid = (await js.stats()).valid;
const wcValid = JSON.parse(wc.stats()).valid;
if (jsValid !== wcValid) throw new Error(`the component holds ${wcValid} memories, the package ${jsValid}`);

/** Per-call median (ms) of one pass over the questions, RUNS times. */
async function passes(call) {
  const medians = [];
  for (let r = 0; r < RUNS; r++) {
    const times = [];
    for (const query of questions) {
      const t0 = performance.now();
      await call(query);
      times.push(performance.now() - t0);
    }
    medians.push(median(times));
  }
  return medians;
}
const system = "You are a helpful assistant.";
let jsBlocks = 0;
let wcBlocks = 0;
const jsTimes = await passes(async (query) => { jsBlocks += (await js.buildContext({ system, query })).report.longTerm > 0; });
const wcTimes = await passes((query) => { wcBlocks += wc.buildContext({ system, query }).report.longTerm > 0; });

const coreFiles = readdirSync(out).filter((f) => f.endsWith(".wasm"));
console.log(`bench:component on ${machine()}, ${RUNS} runs of ${questions.length} questions over ${jsValid.toLocaleString("en-US")} memories (${next.toLocaleString("en-US")} remembered, the rest duplicates)`);
console.table([
  { what: "component (wasm32-wasip2)", kb: kb(gz(component)), raw_kb: kb(component.length) },
  { what: "  its core modules as jco emits them", kb: kb(coreFiles.reduce((n, f) => n + gz(readFileSync(join(out, f))), 0)), raw_kb: kb(coreFiles.reduce((n, f) => n + statSync(join(out, f)).size, 0)) },
  { what: "  jco's JS glue (Node, browsers)", kb: kb(gz(glue)), raw_kb: kb(glue.length) },
  { what: "npm package's wasm, for comparison", kb: kb(gz(packageWasm)), raw_kb: kb(packageWasm.length) },
]);
console.table([
  { what: "build-context, 10k memories: component through jco (ms per call, median (min-max))", value: showSpread(wcTimes, 3), "with a long-term block": `${wcBlocks / RUNS} of ${questions.length}` },
  { what: "build-context, 10k memories: npm package (ms per call)", value: showSpread(jsTimes, 3), "with a long-term block": `${jsBlocks / RUNS} of ${questions.length}` },
]);
console.log(JSON.stringify({
  component_gzip_kb: kb(gz(component)),
  component_raw_kb: kb(component.length),
  build_context_10k_ms: Math.round(median(wcTimes) * 1000) / 1000,
  js_build_context_10k_ms: Math.round(median(jsTimes) * 1000) / 1000,
}));
