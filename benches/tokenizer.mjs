// npm run --silent bench:tokenizer
//
// Node: parity and throughput against npm tiktoken, js-tiktoken and
// gpt-tokenizer in one process; package sizes; pack set-up time and memory
// (each measured in a fresh child process). Then the same harness in
// headless Chromium (benches/browser-tokenizer.mjs). Last line: one JSON object.
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { gzipSync } from "node:zlib";
import { get_encoding } from "tiktoken";
import { getEncoding } from "js-tiktoken";
import * as gptCl100k from "gpt-tokenizer/encoding/cl100k_base";
import * as gptO200k from "gpt-tokenizer/encoding/o200k_base";
import * as am from "../pkg/node.js";
import { runTokenizerBench } from "./tokenizer-harness.mjs";
import { machine } from "./stats.mjs";

const pkg = (p) => new URL(`../pkg/${p}`, import.meta.url);
const gzKb = (p) => gzipSync(readFileSync(pkg(p)), { level: 9 }).length / 1024;

// Set-up time and extra memory of one pack, in a fresh process each time so
// nothing is warm: median of 5.
function packSetup(name) {
  const script = `
    const { readFileSync } = await import("node:fs");
    const am = await import(${JSON.stringify(pkg("node.js").href)});
    const bytes = readFileSync(new URL(${JSON.stringify(pkg(`packs/${name}.amtk`).href)}));
    globalThis.gc?.();
    const rss0 = process.memoryUsage().rss;
    const t0 = performance.now();
    const tok = am.Tokenizer.fromPack(bytes);
    const ms = performance.now() - t0;
    tok.count("warm up");
    globalThis.gc?.();
    const rss1 = process.memoryUsage().rss;
    console.log(JSON.stringify({ ms, mb: (rss1 - rss0) / 1048576 }));`;
  const runs = [];
  for (let i = 0; i < 5; i++) {
    const out = execFileSync(process.execPath, ["--expose-gc", "--input-type=module", "-e", script]);
    runs.push(JSON.parse(out.toString()));
  }
  const med = (k) => runs.map((r) => r[k]).sort((a, b) => a - b)[2];
  return { ms: med("ms"), mb: med("mb") };
}

const ours = { cl100k: await am.loadTokenizer("cl100k"), o200k: await am.loadTokenizer("o200k") };
const tk = { cl100k: get_encoding("cl100k_base"), o200k: get_encoding("o200k_base") };
const jt = { cl100k: getEncoding("cl100k_base"), o200k: getEncoding("o200k_base") };
const peers = [
  { name: "tiktoken (npm, wasm)", cl100k: (t) => tk.cl100k.encode(t).length, o200k: (t) => tk.o200k.encode(t).length },
  { name: "gpt-tokenizer", cl100k: (t) => gptCl100k.countTokens(t), o200k: (t) => gptO200k.countTokens(t) },
  { name: "js-tiktoken", cl100k: (t) => jt.cl100k.encode(t).length, o200k: (t) => jt.o200k.encode(t).length },
];
const { rows, parity, corpusBytes } = runTokenizerBench(ours, peers);

console.log(`Tokenizer throughput, ${machine()}, median (slowest-fastest) of 5 runs after a first pass, ${(corpusBytes / 1e6).toFixed(2)} MB mixed EN/ZH/JA/KO/code/emoji, cl100k`);
console.table(rows.map(({ _mbps, ...r }) => r));

const setup = { cl100k: packSetup("cl100k"), o200k: packSetup("o200k") };
const sizes = {
  core_wasm_gzip_kb: gzKb("agent_memory_bg.wasm"),
  cl100k_pack_gzip_kb: gzKb("packs/cl100k.amtk"),
  o200k_pack_gzip_kb: gzKb("packs/o200k.amtk"),
};
console.log("Sizes and pack set-up (fresh process, median of 5)");
console.table([
  { what: "core wasm (no pack), gzip KB", value: sizes.core_wasm_gzip_kb.toFixed(1) },
  { what: "cl100k pack, gzip KB", value: sizes.cl100k_pack_gzip_kb.toFixed(1) },
  { what: "o200k pack, gzip KB", value: sizes.o200k_pack_gzip_kb.toFixed(1) },
  { what: "cl100k set-up ms / extra RSS MB", value: `${setup.cl100k.ms.toFixed(1)} / ${setup.cl100k.mb.toFixed(1)}` },
  { what: "o200k set-up ms / extra RSS MB", value: `${setup.o200k.ms.toFixed(1)} / ${setup.o200k.mb.toFixed(1)}` },
]);

let browser = null;
try {
  const out = execFileSync(process.execPath, [new URL("./browser-tokenizer.mjs", import.meta.url).pathname], { stdio: ["ignore", "pipe", "inherit"] });
  browser = JSON.parse(out.toString().trim().split("\n").pop());
  console.log(`Same harness in headless Chromium ${browser.version}`);
  console.table(browser.rows.map(({ _mbps, ...r }) => r));
} catch (err) {
  console.log(`Chromium run failed: ${err.message}`);
}

const r1 = (x) => Math.round(x * 10) / 10;
console.log(JSON.stringify({
  parity: parity && (browser ? browser.parity : true),
  mbps: r1(rows[0]._mbps),
  tiktoken_mbps: r1(rows[1]._mbps),
  core_wasm_gzip_kb: r1(sizes.core_wasm_gzip_kb),
  pack_gzip_kb: r1(Math.max(sizes.cl100k_pack_gzip_kb, sizes.o200k_pack_gzip_kb)),
  pack_setup_ms: r1(Math.max(setup.cl100k.ms, setup.o200k.ms)),
  pack_heap_mb: r1(Math.max(setup.cl100k.mb, setup.o200k.mb)),
  browser_mbps: browser ? r1(browser.rows[0]._mbps) : null,
}));
tk.cl100k.free();
tk.o200k.free();
