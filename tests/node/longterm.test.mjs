// Long-term memory and retrieval through Memory, on a Map-backed adapter
// whose raw contents the tests read directly.
import { test } from "node:test";
import assert from "node:assert/strict";
import * as am from "../../pkg/node.js";
import { mapAdapter } from "./map-adapter.mjs";

const keys = (adapter, prefix) => [...adapter.map.keys()].filter((k) => k.startsWith(prefix));

test("remember dedups, also across a new Memory, and a new Memory recalls the fact in context", async () => {
  const adapter = mapAdapter();
  const m = await am.Memory.open({ namespace: "alice", sessionId: "s1", store: adapter });
  const first = await m.remember({ content: "我喜欢用 Rust 写代码" });
  assert.equal(first.outcome, "stored");
  assert.equal(first.entry.scope, "user");
  assert.equal(first.entry.kind, "fact");
  assert.equal((await m.remember({ content: "我喜欢用 rust 写代码。" })).outcome, "duplicate");
  const results = await Promise.all([1, 2, 3].map(() => m.remember({ content: "Prefers dark mode" })));
  assert.deepEqual(results.map((r) => r.outcome).sort(), ["duplicate", "duplicate", "stored"]);

  const next = await am.Memory.open({ namespace: "alice", sessionId: "s2", store: adapter });
  assert.equal((await next.remember({ content: "Prefers dark mode." })).outcome, "duplicate");
  await next.add({ content: "我喜欢用什么语言写代码?" });
  const { messages, report } = await next.buildContext({ query: "我喜欢用什么语言写代码?" });
  assert.match(messages[0].content, /<memory>[\s\S]*我喜欢用 Rust 写代码[\s\S]*<\/memory>/);
  assert.ok(report.longTerm > 0);
  const hits = await next.search("我喜欢用什么语言写代码?", { scopes: ["user"] });
  assert.equal(hits[0].text, "我喜欢用 Rust 写代码");
  assert.equal(hits[0].source, "fact");
  assert.ok(hits[0].explain.bm25 > 0 && hits[0].explain.sourceWeight === 1.2);
  // Without a scope, conversation turns are hits too, and say so.
  const all = await next.search("我喜欢用什么语言写代码?");
  assert.ok(all.some((h) => h.source === "turn" && h.session === "s2" && h.role === "user"), JSON.stringify(all));
});

test("versions: supersede, history and undo", async () => {
  const m = await am.Memory.open({ store: "memory", namespace: "n", sessionId: "s" });
  const old = (await m.remember({ content: "Lives in Paris" })).entry;
  const moved = await m.supersede({ content: "Moved to Berlin in 2024" }, [old.id]);
  const valid = (await m.memories()).map((e) => e.content);
  assert.deepEqual(valid, ["Moved to Berlin in 2024"]);
  const history = await m.history(old.id);
  assert.deepEqual(history.map((e) => e.content), ["Lives in Paris", "Moved to Berlin in 2024"]);
  assert.equal(history[0].supersededBy, moved.id);
  assert.deepEqual((await m.search("Paris")).map((h) => h.text), [], "superseded memories leave retrieval");
  await m.undo(moved.id);
  assert.deepEqual((await m.memories()).map((e) => e.content), ["Lives in Paris"]);
  assert.equal((await m.history(old.id)).length, 2);
  const fuller = await m.remember({ content: "Lives in Paris, in the 11th arrondissement" });
  assert.equal(fuller.outcome, "superseded");
  assert.deepEqual(fuller.superseded, [old.id]);
});

test("forget, forgetScope and purge are hard deletes; agent scopes stay apart", async () => {
  const adapter = mapAdapter();
  const m = await am.Memory.open({ namespace: "n", sessionId: "s", store: adapter, agentId: "planner" });
  // The user's own view (no agentId) holds every agent's memories.
  const all = await am.Memory.open({ namespace: "n", sessionId: "s", store: adapter });
  const a = (await m.remember({ content: "Allergic to peanuts" })).entry;
  await m.remember({ content: "Split tasks into steps of one hour", scope: "agent:planner" });
  await all.remember({ content: "Never schedule meetings on Friday", scope: "agent:other" });
  const { messages } = await m.buildContext({ query: "plan my friday tasks and snacks peanuts" });
  assert.match(messages[0].content, /Split tasks/);
  assert.doesNotMatch(messages[0].content, /Never schedule/, "another agent's memories stay out");
  assert.equal(await m.forget(a.id), true);
  assert.ok([...adapter.map.values()].every((v) => !v.includes("Allergic to peanuts")), "its text is gone from the store");
  assert.equal(await m.forget(a.id), false);
  await assert.rejects(m.forgetScope("agent:other"), (e) => e.code === "INVALID_INPUT", "not the planner's to forget");
  assert.equal(await all.forgetScope("agent:other"), 1);
  assert.equal((await m.memories()).length, 1);
  await assert.rejects(m.purge(), (e) => e.code === "INVALID_INPUT", "an agent cannot purge every agent's memories");
  await all.purge();
  // What stays is the purge itself (an operation, so that it reaches other
  // devices through sync), the epoch, and the writer's bookkeeping: no text.
  const left = keys(adapter, "n/lt/");
  assert.ok(left.every((k) => /^n\/lt\/(meta\/(epoch|mark)|head\/[0-9a-f]+|log\/[0-9a-f]+\/\d+-\d+)$/.test(k)), `only the purge's records left: ${left}`);
  assert.equal(left.filter((k) => k.startsWith("n/lt/log/")).length, 1, "one record: the purge");
  const texts = ["Split tasks", "Never schedule", "Allergic to peanuts"];
  assert.ok(left.every((k) => texts.every((t) => !adapter.map.get(k).includes(t))), "no memory's text is left");
  assert.equal((await all.memories()).length, 0);
  await assert.rejects(m.forgetScope("team"), (e) => e.code === "INVALID_INPUT");
});

test("export, purge, import gives back the same state; import is idempotent", async () => {
  const m = await am.Memory.open({ store: "memory", namespace: "n", sessionId: "s" });
  await m.remember({ content: "Speaks French and German", importance: 0.8 });
  await m.remember({ content: "Deploy with blue-green releases", scope: "agent:ops", kind: "fact" });
  const before = await m.exportMemories();
  assert.equal(before.format, "agent-memory");
  assert.equal(before.version, 1);
  await m.purge();
  assert.equal((await m.memories()).length, 0);
  const doc = JSON.parse(JSON.stringify(before));
  assert.deepEqual(await m.importMemories(doc), { added: 2, updated: 0, unchanged: 0, duplicates: 0 });
  assert.deepEqual(await m.importMemories(doc), { added: 0, updated: 0, unchanged: 2, duplicates: 0 });
  assert.deepEqual((await m.exportMemories()).entries, before.entries);
  await assert.rejects(m.importMemories({ format: "other", version: 1, exportedAt: 0, entries: [] }), (e) => e.code === "INVALID_INPUT");
});

test("stats count memories and searches", async () => {
  const m = await am.Memory.open({ store: "memory", namespace: "n", sessionId: "s" });
  await m.remember({ content: "Has a dog named Rex" });
  await m.remember({ content: "Use retries with jitter", scope: "agent:api" });
  await m.search("dog");
  await m.search("retries", { scopes: ["agent:api"] });
  const s = await m.stats();
  assert.equal(s.valid, 2);
  assert.equal(s.byScope.user, 1);
  assert.equal(s.byAgent.api, 1);
  assert.ok(s.storageBytes > 0);
  assert.equal(Object.values(s.perDay).reduce((a, b) => a + b), 2);
  const searches = Object.entries(s.searches);
  assert.ok(searches.some(([k]) => k.endsWith("|agent:api")));
  assert.ok(searches.some(([k]) => k.endsWith("|all")));
});

test("SearchIndex: hybrid search with explain, and typed errors", () => {
  const idx = new am.SearchIndex();
  idx.add({ id: "a", text: "quantum chromodynamics lecture", embedding: new Float32Array([1, 0, 0]) });
  idx.add({ id: "b", text: "the strong force between quarks", embedding: [0, 1, 0] });
  assert.equal(idx.size, 2);
  const hits = idx.search("quantum", { vector: new Float32Array([0, 1, 0]), alpha: 0.2 });
  assert.equal(hits[0].id, "b");
  assert.equal(hits[0].explain.vector, 1);
  assert.throws(() => idx.add({ id: "c", text: "x", embedding: [1, 0] }), (e) => e.code === "INVALID_INPUT");
  assert.throws(() => idx.search("x", { topk: 3 }), (e) => e.code === "INVALID_INPUT" && /topk/.test(e.message));
  assert.throws(() => idx.search("x", { mmrLambda: 2 }), (e) => e.code === "INVALID_INPUT");
  assert.equal(idx.remove("a"), true);
  assert.equal(idx.search("quantum").length, 0);
});

test("a remembered preference is pinned in every request, whatever its words", async () => {
  const m = await am.Memory.open({ store: "memory", namespace: "pin", sessionId: "s" });
  await m.remember({ content: "Prefers Rust for systems code" });
  const { messages, report } = await m.buildContext({ query: "Which language for firmware?" });
  assert.match(messages[0].content, /Prefers Rust for systems code/);
  assert.ok(report.longTerm > 0);
  const off = await am.Memory.open({ store: "memory", namespace: "pin", sessionId: "s", pinnedProfile: 0 });
  await off.remember({ content: "Prefers Rust for systems code" });
  assert.equal((await off.buildContext({ query: "Which language for firmware?" })).report.longTerm, 0);
  await assert.rejects(am.Memory.open({ store: "memory", namespace: "pin", sessionId: "s", pinnedProfile: -1 }), (e) => e.code === "INVALID_INPUT");
});

test("past conversations are searchable and join a new session's request with their date", async () => {
  const adapter = mapAdapter();
  const trip = await am.Memory.open({ namespace: "ep", sessionId: "trip", store: adapter });
  await trip.add({ role: "user", content: "My sister Ana just moved to Porto" });
  await trip.add({ role: "assistant", content: "How exciting, Porto is lovely in spring." });
  const next = await am.Memory.open({ namespace: "ep", sessionId: "next", store: adapter });
  await next.add({ role: "user", content: "Where does my sister live now?" });
  const { messages } = await next.buildContext({ query: "Where does my sister live now?" });
  assert.match(messages[0].content, /Past conversations:\n- \[\d{4}-\d{2}-\d{2}\] user: My sister Ana just moved to Porto/);
  const hits = await next.search("sister Ana Porto");
  const turn = hits.find((h) => h.text === "My sister Ana just moved to Porto");
  assert.deepEqual([turn.source, turn.session, turn.role, turn.longTerm], ["turn", "trip", "user", false]);
  await next.remember({ content: "Sister Ana lives in Porto" });
  assert.equal((await next.search("sister Ana Porto"))[0].source, "fact", "facts weigh 1.2x a turn");
});
