// The embedder hook through Memory: a function and an OpenAI-compatible
// endpoint (the local scripted server), vectors in the adapter's store,
// re-embedding on a model change, degrading to lexical on failure.
import { test } from "node:test";
import assert from "node:assert/strict";
import * as am from "../../pkg/node.js";
import { mapAdapter } from "./map-adapter.mjs";
import { scriptedEmbedding, startLlmServer } from "../../scripts/llm-server.mjs";

const vectorKeys = (adapter) => [...adapter.map.keys()].filter((k) => k.includes("vec/"));

test("an embed function makes recall hybrid; vectors persist with their model and are not recomputed", async () => {
  const adapter = mapAdapter();
  const seen = [];
  const embed = async (texts) => {
    seen.push(...texts);
    return texts.map((t) => Float32Array.from(scriptedEmbedding(t)));
  };
  const m = await am.Memory.open({ namespace: "u", sessionId: "s", store: adapter, embed, embedModel: "scripted-1" });
  await m.remember({ content: "Adopted a puppy named Rex" });
  await m.remember({ content: "Drives a blue sedan to work" });
  await m.idle();
  assert.equal(vectorKeys(adapter).length, 2);
  // "dog" is in no memory: only the vectors can find the puppy.
  const hits = await m.search("my dog", { scopes: ["user"] });
  assert.equal(hits[0].text, "Adopted a puppy named Rex");
  assert.ok(hits[0].explain.vector > 0, JSON.stringify(hits[0].explain));
  const { messages } = await m.buildContext({ query: "which vehicle do I have?" });
  assert.match(messages[0].content, /blue sedan/);
  const stats = (await m.stats()).embedding;
  assert.equal(stats.model, "scripted-1");
  // The two memories, and the question buildContext stored (a turn).
  assert.deepEqual([stats.embedded, stats.pending, stats.failures], [3, 0, 0]);

  // A new instance loads the stored vectors: only queries are embedded.
  seen.length = 0;
  const again = await am.Memory.open({ namespace: "u", sessionId: "s2", store: adapter, embed, embedModel: "scripted-1" });
  await again.idle();
  assert.equal((await again.search("my dog", { scopes: ["user"] }))[0].text, "Adopted a puppy named Rex");
  assert.deepEqual(seen, ["my dog"]);
  // Another model name: everything is embedded again, in the background.
  seen.length = 0;
  const v2 = await am.Memory.open({ namespace: "u", sessionId: "s3", store: adapter, embed, embedModel: "scripted-2" });
  await v2.idle();
  // The memories, and the question buildContext stored (a past turn now).
  assert.deepEqual(seen.sort(), ["Adopted a puppy named Rex", "Drives a blue sedan to work", "which vehicle do I have?"]);
  assert.ok(vectorKeys(adapter).every((k) => adapter.map.get(k).includes('"model":"scripted-2"')));
});

test("an OpenAI-compatible embeddings endpoint, batched; failures degrade to lexical and never lose a write", async (t) => {
  const server = await startLlmServer();
  t.after(() => server.close());
  const m = await am.Memory.open({
    store: "memory",
    namespace: "u", sessionId: "s",
    embed: { endpoint: server.embeddingsEndpoint, model: "text-embedding-scripted" },
    embedOptions: { batchSize: 2, timeoutMs: 2000 },
  });
  for (const content of ["Adopted a puppy named Rex", "Drives a blue sedan", "Cooks spicy pasta", "Writes Rust at work"]) {
    await m.remember({ content });
  }
  await m.idle();
  const calls = server.requests.filter((r) => r.body.input);
  assert.ok(calls.every((r) => r.body.model === "text-embedding-scripted" && r.body.input.length <= 2));
  assert.equal((await m.search("my dog", { scopes: ["user"] }))[0].text, "Adopted a puppy named Rex");

  server.faults.push("500");
  const hits = await m.search("spicy pasta", { scopes: ["user"] });
  assert.equal(hits[0].text, "Cooks spicy pasta", "lexical answers when the query cannot be embedded");
  const stats = (await m.stats()).embedding;
  assert.equal(stats.lexicalFallbacks, 1);
  assert.match(stats.lastError, /HTTP 500/);
});

test("embed options are checked, and a query vector is used or rejected", async () => {
  const reject = async (options, code, pattern) => {
    const e = await am.Memory.open({ store: "memory", namespace: "u", sessionId: "s", ...options }).then(() => null, (e) => e);
    assert.ok(e, JSON.stringify(Object.keys(options)));
    assert.equal(e.code, code);
    if (pattern) assert.match(e.message, pattern);
  };
  const embed = async (texts) => texts.map(() => [1, 0]);
  await reject({ embed }, "INVALID_INPUT", /embedModel/);
  await reject({ embedModel: "x" }, "INVALID_INPUT", /need `embed`/);
  await reject({ embed: 42, embedModel: "x" }, "INVALID_INPUT");
  await reject({ embed, embedModel: "x", embedOptions: { batchSize: 0 } }, "INVALID_INPUT");
  await reject({ embed, embedModel: "x", embedOptions: { batchsize: 2 } }, "INVALID_INPUT", /batchsize/);
  await reject({ embed: { endpoint: "http://127.0.0.1:9/v1/embeddings" } }, "INVALID_INPUT");

  const plain = await am.Memory.open({ store: "memory", namespace: "u", sessionId: "s" });
  const e = await plain.search("x", { vector: [1, 0] }).catch((e) => e);
  assert.equal(e.code, "INVALID_INPUT");
  assert.match(e.message, /needs an embedder/);

  // A hook that answers with the wrong shape is the embedder's error: recall goes on.
  const bad = await am.Memory.open({ store: "memory", namespace: "u", sessionId: "s", embed: async () => "nope", embedModel: "bad" });
  await bad.remember({ content: "Likes tea" });
  await bad.idle();
  assert.equal((await bad.search("tea"))[0].text, "Likes tea");
  const stats = (await bad.stats()).embedding;
  assert.ok(stats.failures >= 1 && stats.pending >= 1);
  assert.match(stats.lastError, /array of vectors/);

  const m = await am.Memory.open({ store: "memory", namespace: "u", sessionId: "s", embed, embedModel: "x" });
  await m.remember({ content: "Likes tea" });
  await m.idle();
  assert.equal((await m.search("zzz", { vector: new Float32Array([1, 0]) }))[0].text, "Likes tea");
  assert.equal((await m.search("zzz", { vector: [1, 0, 0] }).catch((e) => e)).code, "INVALID_INPUT");
});
