// The web entry (browsers, Deno, workerd) used before and after init, in a
// process of its own: forgetting `init()` is a typed error, not a TypeError.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import * as web from "../../pkg/index.js";

const notInitialized = (err) => err?.name === "AgentMemoryError" && err.code === "NOT_INITIALIZED";

test("before init every entry point says NOT_INITIALIZED; after initSync all work", async () => {
  await assert.rejects(web.Memory.open({ namespace: "u", sessionId: "s" }), notInitialized);
  await assert.rejects(web.Memory.deleteNamespace("u", new Map()), notInitialized);
  await assert.rejects(web.checkStorageAdapter({}, "u"), notInitialized);
  assert.throws(() => web.estimateTokens("abc"), notInitialized);
  assert.throws(() => web.createEntry({ content: "x" }), notInitialized);
  assert.throws(() => web.version(), notInitialized);
  assert.throws(() => new web.TokenBudget(), notInitialized);
  assert.throws(() => new web.SearchIndex(), notInitialized);
  assert.throws(() => web.Tokenizer.estimate(), notInitialized);
  await assert.rejects(web.loadTokenizer(new Uint8Array(4)), notInitialized);

  web.initSync({ module: readFileSync(new URL("../../pkg/agent_memory_bg.wasm", import.meta.url)) });
  assert.equal(web.estimateTokens("abcd"), 1);
  assert.ok(new web.TokenBudget() instanceof web.TokenBudget);
  const m = await web.Memory.open({ namespace: "u", sessionId: "s" });
  assert.equal((await m.add({ content: "hello" })).content, "hello");
  const tok = web.Tokenizer.estimate();
  m.setTokenizer(tok);
  tok.free();
  assert.throws(() => m.setTokenizer(tok), (e) => e.code === "FREED");
});
