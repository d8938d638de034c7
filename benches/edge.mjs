// npm run --silent bench:edge
//
// What the package costs at the edge. Sizes: the wasm (gzip -9), the npm
// tarball, and two Workers bundled by wrangler exactly as for a deploy
// (`wrangler deploy --dry-run`, installed from the packed tarball):
// benches/edge/without-pack.js (memory, estimated counts) and with-pack.js
// (memory and the o200k pack as a Data module), each as the sum of its
// modules gzipped, and whether any framework adapter entered them. Heap: with-pack.js in real workerd (`wrangler dev`),
// after loading o200k and remembering 5,000 memories, read through the
// inspector (V8's used heap and array buffers' backing stores; workerd's
// inspector does not answer a request to collect garbage, so garbage counts)
// plus the wasm linear memory, which V8's figures leave out: together what
// the isolate's 128 MB limit counts.
// RUNS (default 3) fresh isolates give the spread. Last line: one JSON object.
import { execFileSync, spawn } from "node:child_process";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { installApp, packTarball, root } from "../scripts/example.mjs";
import { machine, median, showSpread } from "./stats.mjs";
import { freePort } from "../scripts/wrangler.mjs";

const RUNS = Number(process.env.RUNS ?? 3);
const INTEGRATIONS = ["ai-sdk", "langchain", "openai-agents"];
const MEMORIES = 5000;
const kb = (n) => Math.round((n / 1024) * 10) / 10;
const gz = (bytes) => gzipSync(bytes, { level: 9 }).length;
const wrangler = join(root, "node_modules/.bin/wrangler");
const env = { ...process.env, WRANGLER_SEND_METRICS: "false", CI: "true" };

const tarball = packTarball();
const app = installApp("benches/edge", tarball);
const wasm = readFileSync(join(root, "pkg/agent_memory_bg.wasm"));

/** The gzipped size of a Worker's modules, bundled as `wrangler deploy` would. */
function bundle(entry) {
  const out = join(app, `dist-${entry}`);
  execFileSync(wrangler, ["deploy", "--dry-run", "--outdir", out, entry], { cwd: app, env, stdio: "ignore" });
  const files = readdirSync(out).filter((f) => !f.endsWith(".map") && !f.endsWith(".md"));
  const text = files.map((f) => readFileSync(join(out, f), "latin1")).join("\n");
  // The framework adapters are entry points of their own: none may enter a bundle that does not import it.
  const integrations = INTEGRATIONS.filter((name) => text.includes(`agent-memory/${name}`));
  return { raw: files.reduce((n, f) => n + statSync(join(out, f)).size, 0), gzip: files.reduce((n, f) => n + gz(readFileSync(join(out, f))), 0), integrations };
}

/** A Chrome DevTools Protocol session on a WebSocket URL. */
async function cdp(url) {
  // The inspector proxy admits local origins only; Node sends none unless told.
  const ws = new WebSocket(url, { headers: { origin: "http://127.0.0.1" } });
  await new Promise((ok, fail) => {
    ws.addEventListener("open", ok);
    ws.addEventListener("error", fail);
  });
  let id = 0;
  const pending = new Map();
  ws.addEventListener("message", (e) => {
    const m = JSON.parse(e.data);
    pending.get(m.id)?.(m);
    pending.delete(m.id);
  });
  const send = (method, params = {}) =>
    new Promise((ok) => {
      pending.set(++id, ok);
      ws.send(JSON.stringify({ id, method, params }));
    });
  return { send, close: () => ws.close() };
}

/** One fresh isolate: fill it, then its heap in MB. */
async function heapRun() {
  const [port, inspector] = [await freePort(), await freePort()];
  const spawned = performance.now();
  const child = spawn(wrangler, ["dev", "--ip", "127.0.0.1", "--port", String(port), "--inspector-port", String(inspector), "--log-level", "warn"],
    { cwd: app, env, detached: true, stdio: "ignore" });
  try {
    const base = `http://127.0.0.1:${port}`;
    // The first request that gets an answer is the isolate's first: it
    // compiles the wasm, loads the pack and opens the memory (a refused
    // connection before wrangler listens is not timed).
    let firstMs, startMs;
    for (let i = 0; i < 300 && firstMs === undefined; i++) {
      const t = performance.now();
      try {
        await (await fetch(`${base}/?n=0`)).json();
        firstMs = performance.now() - t;
        startMs = performance.now() - spawned;
      } catch {
        await new Promise((r) => setTimeout(r, 200));
      }
    }
    const tw = performance.now();
    await (await fetch(`${base}/?n=0`)).json();
    const warmMs = performance.now() - tw;
    const t0 = performance.now();
    const filled = await (await fetch(`${base}/?n=${MEMORIES}`)).json();
    const fillMs = performance.now() - t0;
    if (filled.memories !== MEMORIES) throw new Error(`expected ${MEMORIES} memories, got ${JSON.stringify(filled)}`);
    const [target] = await (await fetch(`http://127.0.0.1:${inspector}/json`)).json();
    const session = await cdp(target.webSocketDebuggerUrl);
    const { result } = await session.send("Runtime.getHeapUsage");
    session.close();
    const mb = (n) => n / 2 ** 20;
    return { heapMb: mb(result.usedSize + result.backingStorageSize + filled.wasmMemoryBytes), jsMb: mb(result.usedSize), wasmMb: mb(filled.wasmMemoryBytes), fillMs, firstMs, warmMs, startMs };
  } finally {
    process.kill(-child.pid, "SIGTERM");
  }
}

const spread = (xs, digits = 1) => ({ median: median(xs), text: showSpread(xs, digits) });

const without = bundle("without-pack.js");
const withPack = bundle("with-pack.js");
const runs = [];
for (let i = 0; i < RUNS; i++) runs.push(await heapRun());
const heap = spread(runs.map((r) => r.heapMb));

const wranglerVersion = JSON.parse(readFileSync(join(root, "node_modules/wrangler/package.json"), "utf8")).version;
console.log(`bench:edge on ${machine()}, wrangler ${wranglerVersion} (workerd), ${RUNS} runs`);
console.table([
  { what: "wasm (gzip -9)", kb: kb(gz(wasm)), raw_kb: kb(wasm.length), goal: "≤ 480" },
  { what: "npm tarball", kb: kb(statSync(tarball).size), raw_kb: "", goal: "" },
  { what: "Worker bundle, no pack (gzip)", kb: kb(without.gzip), raw_kb: kb(without.raw), goal: "≤ 220" },
  { what: "Worker bundle, o200k pack (gzip)", kb: kb(withPack.gzip), raw_kb: kb(withPack.raw), goal: "≤ 1,250" },
  { what: "framework adapters in those bundles", kb: without.integrations.concat(withPack.integrations).join(", ") || "none", raw_kb: "", goal: "none" },
  ...INTEGRATIONS.map((name) => {
    const file = readFileSync(join(root, `pkg/integrations/${name}.js`));
    return { what: `  agent-memory/${name}, for apps that import it (gzip)`, kb: kb(gz(file)), raw_kb: kb(file.length), goal: "" };
  }),
]);
console.table([
  { what: `workerd isolate heap, o200k + ${MEMORIES} memories (MB, median (min-max))`, value: heap.text, goal: "≤ 64" },
  { what: "  of which wasm linear memory (MB)", value: spread(runs.map((r) => r.wasmMb)).text, goal: "" },
  { what: "  of which V8 JS heap (MB)", value: spread(runs.map((r) => r.jsMb)).text, goal: "" },
  { what: `  time to remember ${MEMORIES} in batches of 500 (ms)`, value: spread(runs.map((r) => r.fillMs), 0).text, goal: "" },
  { what: "an isolate's first request: wasm compiled, o200k loaded, memory opened (ms)", value: spread(runs.map((r) => r.firstMs), 0).text, goal: "" },
  { what: "  the next request (ms)", value: spread(runs.map((r) => r.warmMs), 1).text, goal: "" },
  { what: "  from `wrangler dev` started to that first answer (ms)", value: spread(runs.map((r) => r.startMs), 0).text, goal: "" },
]);
console.log(JSON.stringify({
  wasm_gzip_kb: kb(gz(wasm)),
  tarball_kb: kb(statSync(tarball).size),
  worker_gzip_kb: kb(without.gzip),
  worker_with_pack_gzip_kb: kb(withPack.gzip),
  worker_heap_mb: Math.round(heap.median * 10) / 10,
  first_request_ms: Math.round(median(runs.map((r) => r.firstMs))),
  warm_request_ms: Math.round(median(runs.map((r) => r.warmMs)) * 10) / 10,
  integrations_in_worker: without.integrations.length + withPack.integrations.length,
}));
