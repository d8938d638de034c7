// node benches/pack-setup.mjs <package folder> <package folder> ...
//
// Pack set-up (`Tokenizer.fromPack`, nothing else) of two or more built
// packages, each with its own packs, in a fresh Node process per run and the
// packages alternating, so a change of the pack format is timed against the
// package before it on the same machine at the same time (docs/benchmarks.md,
// "Tokenizer"). Median (fastest-slowest) of 7 per package and pack.
import { execFileSync } from "node:child_process";
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
const pkgs = process.argv.slice(2).map((p) => resolve(p));
const script = (p, name) => `
  const { readFileSync } = await import("node:fs");
  const am = await import(${JSON.stringify(pathToFileURL(p + "/node.js").href)});
  const bytes = readFileSync(${JSON.stringify(p + "/packs/" + name + ".amtk")});
  const t0 = performance.now();
  const tok = am.Tokenizer.fromPack(bytes);
  const ms = performance.now() - t0;
  console.log(JSON.stringify({ ms, n: tok.count("warm up") }));`;
for (const name of ["cl100k", "o200k"]) {
  const runs = pkgs.map(() => []);
  for (let i = 0; i < 7; i++) pkgs.forEach((p, k) => runs[k].push(JSON.parse(execFileSync(process.execPath, ["--input-type=module", "-e", script(p, name)]).toString()).ms));
  console.log(name, pkgs.map((p, k) => `${p}: ${runs[k].sort((a, b) => a - b)[3].toFixed(1)} ms (${runs[k][0].toFixed(1)}-${runs[k][6].toFixed(1)})`).join("  "));
}
