// Isolation through the public API, on one storage adapter: two namespaces
// side by side, and two agents in one namespace. No read, search, context,
// export, write or delete crosses them; namespace names cannot reach
// another's prefix.
import { test } from "node:test";
import assert from "node:assert/strict";
import * as am from "../../pkg/node.js";
import { mapAdapter } from "./map-adapter.mjs";

const invalid = (err) => err.name === "AgentMemoryError" && err.code === "INVALID_INPUT";

/** Every raw key and value of a namespace's prefix. */
const rawOf = (store, ns) => [...store.map].filter(([k]) => k.startsWith(`${ns}/`));

test("two namespaces on one adapter: nothing read, found, exported or deleted crosses them", async () => {
  const store = mapAdapter();
  // Names chosen to share prefixes: "alice" is a prefix of "alice.b" and "alice:b".
  const names = ["alice", "alice.b", "alice:b"];
  const secret = { alice: "amberword", "alice.b": "cobaltword", "alice:b": "emberword" };
  const opened = {};
  for (const ns of names) {
    const m = await am.Memory.open({ namespace: ns, sessionId: "chat", store });
    await m.add({ role: "user", content: `I am ${ns} and my secret word is ${secret[ns]}` });
    await m.remember({ content: `Secret of ${ns}: ${secret[ns]}` });
    opened[ns] = m;
  }
  const other = (ns) => names.filter((n) => n !== ns);
  for (const ns of names) {
    const m = opened[ns];
    const mems = (await m.memories()).map((e) => e.content);
    assert.deepEqual(mems, [`Secret of ${ns}: ${secret[ns]}`]);
    for (const o of other(ns)) {
      const word = secret[o];
      assert.deepEqual(await m.search(word), [], `${ns} finds ${o}'s`);
      const ctx = await m.buildContext({ query: `what is the secret word ${word}` });
      assert.ok(!JSON.stringify(ctx.messages.slice(0, -1)).includes(secret[o]), `${ns} context holds ${o} memory`);
      const foreign = (await opened[o].memories())[0].id;
      assert.equal(await m.forget(foreign), false, "an id of another namespace is not found");
      await assert.rejects(m.undo(foreign), (e) => e.code === "NOT_FOUND");
      assert.deepEqual(await m.history(foreign), []);
    }
    const doc = await m.exportMemories();
    assert.deepEqual(doc.entries.map((e) => e.content), mems);
    // Its message, and the question of each request.
    assert.equal((await m.sessionHistory()).length, 1 + other(ns).length);
  }
  // Deleting one namespace, in each way, leaves the others' records byte for byte.
  const before = (ns) => JSON.stringify(rawOf(store, ns));
  const keep = Object.fromEntries(other("alice").map((o) => [o, before(o)]));
  assert.equal(await opened.alice.forgetScope("user"), 1);
  await opened.alice.purge();
  await am.Memory.deleteNamespace("alice", store);
  assert.deepEqual(rawOf(store, "alice"), []);
  for (const o of other("alice")) assert.equal(before(o), keep[o], `${o} changed`);
  for (const o of other("alice")) {
    const again = await am.Memory.open({ namespace: o, sessionId: "chat", store });
    assert.equal((await again.memories()).length, 1);
  }
});

test("two agents in one namespace: each sees the user's memories and its own, never the other's", async () => {
  const store = mapAdapter();
  const coder = await am.Memory.open({ namespace: "u", sessionId: "s1", store, agentId: "coder" });
  const travel = await am.Memory.open({ namespace: "u", sessionId: "s2", store, agentId: "travel" });
  const user = await am.Memory.open({ namespace: "u", sessionId: "s3", store });
  await coder.remember({ content: "Repository uses pnpm workspaces", scope: "agent:coder" });
  await travel.remember({ content: "Prefers window seats on long flights", scope: "agent:travel" });
  await user.remember({ content: "Name is Ada", scope: "user" });
  const pnpm = (await user.memories()).find((e) => e.scope === "agent:coder");

  const seen = async (m) => (await m.memories()).map((e) => e.content).sort();
  assert.deepEqual(await seen(travel), ["Name is Ada", "Prefers window seats on long flights"]);
  assert.deepEqual(await seen(coder), ["Name is Ada", "Repository uses pnpm workspaces"]);
  assert.equal((await seen(user)).length, 3, "the user's own view holds every agent's");

  assert.deepEqual(await travel.search("pnpm workspaces repository"), []);
  const ctx = await travel.buildContext({ query: "which package manager does the repository use, pnpm?" });
  assert.ok(!JSON.stringify(ctx.messages).includes("pnpm workspaces"));
  assert.ok(JSON.stringify((await coder.buildContext({ query: "pnpm workspaces" })).messages).includes("pnpm workspaces"));
  assert.deepEqual((await travel.exportMemories()).entries.map((e) => e.scope).sort(), ["agent:travel", "user"]);
  assert.deepEqual(await travel.history(pnpm.id), []);

  // No write or delete crosses either.
  await assert.rejects(travel.search("pnpm", { scopes: ["agent:coder"] }), invalid);
  await assert.rejects(travel.remember({ content: "Planted", scope: "agent:coder" }), invalid);
  await assert.rejects(travel.rememberMany([{ content: "Planted", scope: "agent:coder" }]), invalid);
  await assert.rejects(travel.forgetScope("agent:coder"), invalid);
  await assert.rejects(travel.purge(), invalid);
  await assert.rejects(travel.supersede({ content: "Uses npm", scope: "agent:travel" }, [pnpm.id]), (e) => e.code === "NOT_FOUND");
  await assert.rejects(travel.undo(pnpm.id), (e) => e.code === "NOT_FOUND");
  assert.equal(await travel.forget(pnpm.id), false);
  const doc = await user.exportMemories();
  await assert.rejects(travel.importMemories(doc), invalid);
  assert.deepEqual(await seen(coder), ["Name is Ada", "Repository uses pnpm workspaces"], "the coder's memory is intact");
});

test("namespace names that could reach another's, or look like one, are INVALID_INPUT everywhere", async () => {
  const store = mapAdapter();
  const bad = ["", ".", "..", "a/b", "../alice", "a\\b", "a b", "tab\t", "nul\0", "аlice" /* Cyrillic а */, "ａlice", "x".repeat(129)];
  for (const namespace of bad) {
    await assert.rejects(am.Memory.open({ namespace, sessionId: "s", store }), invalid, JSON.stringify(namespace));
    await assert.rejects(am.Memory.deleteNamespace(namespace, store), invalid, JSON.stringify(namespace));
    await assert.rejects(am.checkStorageAdapter(store, namespace), invalid, JSON.stringify(namespace));
  }
  assert.equal(store.map.size, 0, "nothing was written");
  for (const namespace of ["alice", "bob@example.com", "org:acme+team", "x".repeat(128)]) {
    const m = await am.Memory.open({ namespace, sessionId: "s", store });
    await m.remember({ content: `for ${namespace}` });
  }
});
