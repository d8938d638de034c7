// examples/vite built by Vite from the packed tarball (`npm pack` of pkg/,
// installed into a copy of the example), then run in headless Chromium:
// with no configuration, the bundle finds the wasm and the o200k pack,
// counts exactly and recalls from IndexedDB. The same app built by webpack 5
// (likewise with no configuration) and bundled by esbuild,
// which leaves `new URL(…, import.meta.url)` alone, with the assets copied.
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { cpSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { get_encoding } from "tiktoken";
import { startServer } from "../../scripts/static-server.mjs";
import { launchChromium, runPage } from "../../scripts/chromium.mjs";
import { installExample, root } from "../../scripts/example.mjs";

/** Opens a built app in Chromium and checks what examples/vite/main.js reports. */
async function checkInChromium(dist) {
  const { server, url } = await startServer(dist, 0);
  const browser = await launchChromium();
  try {
    const r = await runPage(browser, url, "__result", 60_000);
    assert.equal(r.error, undefined, r.error);
    const enc = get_encoding("o200k_base");
    assert.equal(r.tokens, enc.encode("Hello, world! 我喜欢用 Rust 写代码").length);
    enc.free();
    assert.equal(r.tokenizer, "o200k");
    assert.equal(r.recalled, "Prefers Rust for systems code");
  } finally {
    await browser.close();
    server.close();
  }
}

const app = installExample("vite");

test("a Vite build of the packed package runs in Chromium with no asset configuration", async () => {
  execFileSync(join(root, "node_modules/.bin/vite"), ["build", "--logLevel", "warn"], { cwd: app });
  const assets = readdirSync(join(app, "dist/assets"));
  assert.ok(assets.some((f) => f.endsWith(".wasm")) && assets.some((f) => f.startsWith("o200k")), assets.join(", "));
  await checkInChromium(join(app, "dist"));
});

test("a webpack 5 build runs in Chromium with no asset configuration", async () => {
  const out = join(app, "webpack-dist");
  execFileSync(join(root, "node_modules/.bin/webpack"), ["--mode", "production", "--entry", "./main.js", "--output-path", out, "--no-stats"], { cwd: app });
  cpSync(join(app, "index.html"), join(out, "index.html"));
  const emitted = readdirSync(out);
  assert.ok(emitted.some((f) => f.endsWith(".wasm")) && emitted.some((f) => f.endsWith(".amtk")), emitted.join(", "));
  await checkInChromium(out);
});

test("an esbuild bundle runs in Chromium with the wasm and packs copied next to it, as the README says", async () => {
  const out = join(app, "esbuild-dist");
  execFileSync(join(root, "node_modules/.bin/esbuild"), ["main.js", "--bundle", "--format=esm", "--log-level=warning", `--outdir=${out}`], { cwd: app });
  const pkg = join(app, "node_modules/agent-memory");
  cpSync(join(app, "index.html"), join(out, "index.html"));
  cpSync(join(pkg, "agent_memory_bg.wasm"), join(out, "agent_memory_bg.wasm"));
  cpSync(join(pkg, "packs"), join(out, "packs"), { recursive: true });
  await checkInChromium(out);
});
