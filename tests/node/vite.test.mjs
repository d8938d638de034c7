// examples/vite built by Vite from the packed tarball (`npm pack` of pkg/,
// installed into a copy of the example), then run in headless Chromium:
// with no configuration, the bundle finds the wasm and the o200k pack,
// counts exactly and recalls from IndexedDB.
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { get_encoding } from "tiktoken";
import { startServer } from "../../scripts/static-server.mjs";
import { launchChromium, runPage } from "../../scripts/chromium.mjs";
import { installExample, root } from "../../scripts/example.mjs";

test("a Vite build of the packed package runs in Chromium with no asset configuration", async () => {
  const app = installExample("vite");
  execFileSync(join(root, "node_modules/.bin/vite"), ["build", "--logLevel", "warn"], { cwd: app });
  const assets = readdirSync(join(app, "dist/assets"));
  assert.ok(assets.some((f) => f.endsWith(".wasm")) && assets.some((f) => f.startsWith("o200k")), assets.join(", "));

  const { server, url } = await startServer(join(app, "dist"), 0);
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
});
