// Every hook may reject with anything: undefined, null, a number, an object
// that is not an Error, or a thenable that is not a native promise. Each
// becomes a typed AgentMemoryError (or, where the library degrades, a typed
// entry in a report), and the process and the Memory live on. Before, a
// rejection with `undefined` panicked inside the wasm and a timer then hit
// `unreachable`: Node exited.
import { test } from "node:test";
import assert from "node:assert/strict";
import * as am from "../../pkg/node.js";
import { mapAdapter } from "./map-adapter.mjs";

const uncaught = [];
process.on("uncaughtException", (e) => uncaught.push(e));
process.on("unhandledRejection", (e) => uncaught.push(e));

const REASONS = { undefined: undefined, null: null, number: 7, object: { not: "an Error" }, string: "nope" };
/** The two ways a hook can reject with `reason`. */
const rejecting = (reason) => ({
  promise: () => Promise.reject(reason),
  thenable: () => ({ then(_resolve, reject) { reject(reason); } }),
  thrown: () => { throw reason; },
});

const settleTimers = () => new Promise((r) => setTimeout(r, 50));

test("a storage adapter rejecting with any value gives STORAGE, and the Memory goes on", async () => {
  for (const [name, reason] of Object.entries(REASONS)) {
    for (const [how, fail] of Object.entries(rejecting(reason))) {
      for (const op of ["get", "put", "putMany", "list", "delete"]) {
        const adapter = mapAdapter();
        // With putMany, writes go there rather than to put.
        if (op === "putMany") {
          adapter.putMany = async (entries) => { for (const [k, v] of Object.entries(entries)) adapter.map.set(k, v); };
        }
        const m = await am.Memory.open({ namespace: "n", sessionId: "s", store: adapter });
        await m.remember({ content: "Likes green tea" });
        const healthy = adapter[op];
        adapter[op] = fail;
        // Each call touches the failing operation (a fresh instance reads with get and list).
        const calls = {
          get: () => am.Memory.open({ namespace: "n", sessionId: "s", store: adapter }),
          list: () => am.Memory.open({ namespace: "n", sessionId: "s", store: adapter }),
          put: () => m.add({ content: "hello" }),
          putMany: () => m.rememberMany([{ content: "Owns a bike" }, { content: "Reads poetry" }]),
          delete: async () => m.forget((await m.memories())[0].id),
        };
        const e = await calls[op]().then(() => null, (err) => err);
        const label = `${op} ${how} ${name}`;
        assert.ok(e, `${label}: the call failed`);
        assert.equal(e.name, "AgentMemoryError", label);
        assert.ok(["STORAGE", "STORAGE_TIMEOUT"].includes(e.code), `${label}: ${e.code} ${e.message}`);
        adapter[op] = healthy;
        await m.add({ content: `after ${label}` });
      }
    }
  }
  await settleTimers();
  assert.deepEqual(uncaught, []);
});

test("an llm function, an endpoint's fetch, embed and longTerm rejecting with any value: typed, and alive", async () => {
  for (const [name, reason] of Object.entries(REASONS)) {
    for (const [how, fail] of Object.entries(rejecting(reason))) {
      const label = `${how} ${name}`;
      const llms = [
        { complete: fail, maxRetries: 0 },
        { endpoint: "http://127.0.0.1:9/v1/chat/completions", model: "x", fetch: fail, maxRetries: 0 },
      ];
      // The bare function form, with its default retries, once (its backoff takes seconds).
      if (name === "undefined" && how === "promise") llms.push(fail);
      for (const llm of llms) {
        const m = await am.Memory.open({ store: "memory", namespace: "n", sessionId: "s", llm, budget: { contextWindow: 6000 } });
        // Background compression, started by add() once the window is full.
        for (let i = 0; i < 30; i++) await m.add({ content: `message ${i} ${"words ".repeat(40)}` });
        await m.idle();
        const e = await m.compress().then(() => null, (err) => err);
        assert.equal(e?.name, "AgentMemoryError", label);
        assert.equal(e.code, "LLM", `${label}: ${e.message}`);
        const report = await m.endSession();
        assert.equal(report.judge, "rules", label);
        assert.ok(report.errors.some((x) => x.startsWith("judge fell back to rules: ")), `${label}: ${report.errors}`);
        assert.equal((await m.sessionHistory()).length, 30, label);
      }

      const embedded = await am.Memory.open({ store: "memory", namespace: "n", sessionId: "s", embed: fail, embedModel: "m" });
      await embedded.remember({ content: "Likes tea" });
      await embedded.idle();
      assert.equal((await embedded.search("tea"))[0].text, "Likes tea", label);
      assert.ok((await embedded.stats()).embedding.failures >= 1, label);

      const hooked = await am.Memory.open({ store: "memory", namespace: "n", sessionId: "s", longTerm: fail });
      await hooked.add({ content: "hello" });
      const { report } = await hooked.buildContext({ query: "hello" });
      assert.equal(typeof report.longTermError, "string", label);
    }
  }
  await settleTimers();
  assert.deepEqual(uncaught, []);
});
