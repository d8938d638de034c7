// The library has no network of its own: with fetch, XMLHttpRequest and
// WebSocket replaced by stubs that throw (and count), every feature runs,
// and the model and the embedder are reached only through the host's hooks
// (a function, or the `fetch` the host passes). The module's own imports
// name no network API either.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import * as am from "../../pkg/node.js";
import { mapAdapter } from "./map-adapter.mjs";
import { judgeHook } from "../../scripts/judge-hook.mjs";

const NETWORK = ["fetch", "XMLHttpRequest", "WebSocket", "EventSource"];

/** Replaces the network globals with counting stubs that throw; returns the counts and a restore. */
function cutTheNetwork() {
  const calls = Object.fromEntries(NETWORK.map((n) => [n, 0]));
  const saved = Object.fromEntries(NETWORK.map((n) => [n, Object.getOwnPropertyDescriptor(globalThis, n)]));
  for (const name of NETWORK) {
    const stub = function () { calls[name]++; throw new Error(`the library used ${name}`); };
    Object.defineProperty(globalThis, name, { value: stub, configurable: true, writable: true });
  }
  const restore = () => {
    for (const name of NETWORK) {
      if (saved[name]) Object.defineProperty(globalThis, name, saved[name]);
      else delete globalThis[name];
    }
  };
  return { calls, restore };
}

const embed = async (texts) => texts.map((t) => Float32Array.from({ length: 8 }, (_, i) => (t.charCodeAt(i % t.length) % 7) + 1));

test("every feature runs with the network cut; the hooks are the only way out", async () => {
  const net = cutTheNetwork();
  const hookCalls = { llm: 0, embed: 0, fetch: 0 };
  try {
    const store = mapAdapter();
    await am.checkStorageAdapter(store, "conformance");
    const key = await crypto.subtle.generateKey({ name: "AES-GCM", length: 256 }, false, ["encrypt", "decrypt"]);
    const m = await am.Memory.open({
      namespace: "offline", sessionId: "s", store, maxTokens: 400, retainRecentRounds: 1,
      llm: async (req) => { hookCalls.llm++; return judgeHook(req); },
      embed: async (texts) => { hookCalls.embed++; return embed(texts); },
      embedModel: "hash-8", encryption: { key },
    });
    m.setTokenizer(am.Tokenizer.fromPack(readFileSync(new URL("../../pkg/packs/cl100k.amtk", import.meta.url))));
    for (let i = 0; i < 12; i++) {
      await m.add({ role: "user", content: `Turn ${i}: I live in Lisbon and I like tea number ${i}.` });
      await m.add({ role: "assistant", content: `Noted ${i}.` });
    }
    await m.compress();
    await m.remember({ content: "Allergic to penicillin" });
    await m.rememberMany([{ content: "Plays the cello" }, { content: "Has a dog named Rex" }]);
    await m.buildContext({ system: "Be brief.", query: "What am I allergic to?" });
    await m.search("penicillin");
    const report = await m.endSession();
    assert.equal(report.judge, "llm");
    assert.ok(report.added > 0, JSON.stringify(report));
    await m.idle();
    const doc = await m.exportMemories();
    await m.importMemories(doc);
    await m.stats();
    m.usageReport();
    am.extractMemories([{ role: "user", content: "My name is Ada and I work as a nurse." }]);
    const index = new am.SearchIndex();
    index.add({ id: "1", text: "green tea in the morning" });
    index.search("tea");
    new am.TokenBudget({ contextWindow: 8000 }).usageRatio(10);
    am.estimateTokens("hello");
    // An endpoint with the host's own fetch: that fetch, not the global one.
    const hostFetch = async (_url, init) => {
      hookCalls.fetch++;
      const body = JSON.parse(init.body);
      return new Response(JSON.stringify({ choices: [{ message: { content: await judgeHook(body) } }] }), { headers: { "content-type": "application/json" } });
    };
    const viaEndpoint = await am.Memory.open({ namespace: "offline2", sessionId: "s", store, llm: { endpoint: "http://127.0.0.1:9/v1/chat/completions", model: "m", fetch: hostFetch } });
    await viaEndpoint.add({ role: "user", content: "I moved to Porto." });
    await viaEndpoint.endSession();
    await am.Memory.deleteNamespace("offline2", store);
  } finally {
    net.restore();
  }
  assert.deepEqual(net.calls, { fetch: 0, XMLHttpRequest: 0, WebSocket: 0, EventSource: 0 });
  assert.ok(hookCalls.llm > 0 && hookCalls.embed > 0 && hookCalls.fetch > 0, JSON.stringify(hookCalls));
});

test("the wasm module imports no network API", () => {
  const module = new WebAssembly.Module(readFileSync(new URL("../../pkg/agent_memory_bg.wasm", import.meta.url)));
  const names = WebAssembly.Module.imports(module).map((i) => i.name);
  assert.ok(names.length > 10, "the glue's imports are listed");
  for (const name of names) assert.ok(!/fetch|xmlhttp|websocket|eventsource|sendbeacon/i.test(name), name);
});
