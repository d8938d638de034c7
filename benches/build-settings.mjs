// PKG=<a built package folder> node benches/build-settings.mjs
//
// One pass over what build settings trade against size (docs/benchmarks.md,
// "Build settings, measured again"): the tokenizer on 1 MB of the mixed
// corpus (whole and in 1 KB chunks), a SearchIndex of bench:store's 10,000
// texts (target/bench-store-texts.txt, written by `npm run bench:store`),
// lexical, hybrid with random 384-d vectors and 100,000 lexical, a request
// over 2,000 messages, and remembering 1,000 (batches of 100) and 5,000
// (batches of 500). Build each variant with CARGO_PROFILE_RELEASE_OPT_LEVEL or
// CARGO_ENCODED_RUSTFLAGS set, run wasm-bindgen as scripts/build.sh does,
// and point PKG at a copy of pkg/ holding its agent_memory.js and wasm.
// usage: node speed.mjs <wasm file>  — swaps pkg's wasm for the run
import { readFileSync, copyFileSync } from "node:fs";
import { mixedCorpus } from "./corpus.mjs";
const P = process.env.PKG ?? new URL("../pkg", import.meta.url).pathname; const am = await import(P + "/node.js");
const { SearchIndex, Tokenizer, Memory } = am;
const med = (xs) => xs.sort((a, b) => a - b)[xs.length >> 1];
const t = (f) => { const t0 = performance.now(); f(); return performance.now() - t0; };
const tok = Tokenizer.fromPack(readFileSync(P + "/packs/cl100k.amtk"));
const text = mixedCorpus(1_000_000, 7);
tok.count(text);
const whole = med([0, 1, 2, 3, 4].map(() => t(() => tok.count(text))));
const chunks = []; for (let i = 0; i < text.length; i += 1000) chunks.push(text.slice(i, i + 1000));
const chunk = med([0, 1, 2].map(() => t(() => { for (const c of chunks) tok.count(c); })));
const bytes = Buffer.byteLength(text) / 1e6;
const texts = readFileSync(new URL("../target/bench-store-texts.txt", import.meta.url), "utf8").split("\n");
const ix = new SearchIndex();
const build = t(() => texts.forEach((x, i) => ix.add({ id: String(i), text: x, timestamp: 0 })));
const qs = texts.slice(0, 200).map((x) => x.split(" ").slice(0, 5).join(" "));
qs.forEach((q) => ix.search(q, { topK: 10 }));
const search = med(qs.map((q) => t(() => ix.search(q, { topK: 10 }))));
const m = await Memory.open({ namespace: "s", sessionId: "s", store: "memory" });
for (let i = 0; i < 2000; i++) await m.add({ role: i % 2 ? "assistant" : "user", content: texts[i % texts.length] });
const ctx = [];
for (let i = 0; i < 30; i++) { const t0 = performance.now(); await m.buildContext({ system: "be brief" }); ctx.push(performance.now() - t0); }
const t1 = performance.now(); for (let b = 0; b < 10; b++) await m.rememberMany(texts.slice(b * 100, b * 100 + 100).map((content) => ({ content }))); const rem = performance.now() - t1;
console.log(JSON.stringify({ whole_mbps: +(bytes / whole * 1000).toFixed(1), chunk_mbps: +(bytes / chunk * 1000).toFixed(1), index_build_ms: +build.toFixed(0), search_ms: +search.toFixed(3), context_ms: +med(ctx).toFixed(2), remember_1000_ms: +rem.toFixed(0) }));
{
  let seed = 1; const rnd = () => ((seed = (seed * 1103515245 + 12345) >>> 0) / 2 ** 32) - 0.5;
  const vec = () => { const v = new Float32Array(384); for (let i = 0; i < 384; i++) v[i] = rnd(); return v; };
  const hx = new SearchIndex();
  texts.forEach((x, i) => hx.add({ id: String(i), text: x, timestamp: 0, embedding: vec() }));
  const qv = qs.map(() => vec());
  qs.forEach((q, i) => hx.search(q, { topK: 10, vector: qv[i] }));
  const hyb = med(qs.map((q, i) => t(() => hx.search(q, { topK: 10, vector: qv[i] }))));
  const big = new SearchIndex();
  for (let k = 0; k < 10; k++) texts.forEach((x, i) => big.add({ id: k + "-" + i, text: x, timestamp: 0 }));
  qs.forEach((q) => big.search(q, { topK: 10 }));
  const s100 = med(qs.map((q) => t(() => big.search(q, { topK: 10 }))));
  const m5 = await Memory.open({ namespace: "d", sessionId: "s", store: "memory" });
  const t5 = performance.now();
  for (let b = 0; b < 10; b++) await m5.rememberMany(texts.slice(b * 500, b * 500 + 500).map((content) => ({ content })));
  console.log(JSON.stringify({ hybrid_ms: +hyb.toFixed(3), search_100k_ms: +s100.toFixed(3), remember_5000_ms: Math.round(performance.now() - t5) }));
}
