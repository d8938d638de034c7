// The Memory API of the built package in Node, on a Map-backed storage adapter.
import { test } from "node:test";
import assert from "node:assert/strict";
import * as am from "../../pkg/node.js";
import { mapAdapter } from "./map-adapter.mjs";

/** A storage adapter over a Map, as a user would write one; `failPuts` makes writes throw. */
async function rejectsWith(promise, code, pattern) {
  await assert.rejects(promise, (err) => {
    assert.equal(err.name, "AgentMemoryError");
    assert.equal(err.code, code);
    if (pattern) assert.match(err.message, pattern);
    return true;
  });
}

test("a Map adapter passes the store conformance suite", async () => {
  const adapter = mapAdapter();
  await am.checkStorageAdapter(adapter, "conformance");
  assert.equal(adapter.map.size, 0);
  await rejectsWith(am.checkStorageAdapter({ get() {} }, "x"), "INVALID_INPUT", /put/);
});

test("messages persist through the adapter and a new Memory restores them", async () => {
  const adapter = mapAdapter();
  const m = await am.Memory.open({ namespace: "alice", sessionId: "chat-1", store: adapter });
  const first = await m.add({ role: "user", content: "I prefer Rust for systems code." });
  await m.add({ role: "assistant", content: "Noted: Rust it is." });
  assert.equal(first.role, "user");
  const keys = [...adapter.map.keys()];
  assert.equal(keys.filter((k) => k.startsWith("alice/session/chat-1/msg/")).length, 2);
  assert.ok(keys.every((k) => /^alice\/session\/chat-1\/(msg|writer)\//.test(k)), keys.join());
  const again = await am.Memory.open({ namespace: "alice", sessionId: "chat-1", store: adapter });
  assert.deepEqual(again.messages(), m.messages());
  assert.equal(again.messages()[0].timestamp, first.timestamp);
  const other = await am.Memory.open({ namespace: "bob", sessionId: "chat-1", store: adapter });
  assert.equal(other.messages().length, 0, "namespaces do not share sessions");
});

test("buildContext returns an OpenAI messages array and a report", async () => {
  const m = await am.Memory.open({
    store: "memory",
    namespace: "n", sessionId: "s",
    longTerm: async (query, budget) => {
      assert.equal(query, "Which language do I prefer?");
      assert.equal(budget, 4000);
      return "- prefers Rust\n- works on databases\n";
    },
  });
  await m.add({ content: "Hi!" });
  await m.add({ role: "assistant", content: "Hello!" });
  await m.add({ role: "assistant", content: "", toolCalls: [{ id: "c1", name: "lookup", arguments: "{\"q\":1}" }] });
  await m.add({ role: "tool", content: "42", toolCallId: "c1" });
  const tools = [{ type: "function", function: { name: "lookup", parameters: { type: "object" } } }];
  const { messages, report } = await m.buildContext({ query: "Which language do I prefer?", system: "You are helpful.", tools });
  assert.equal(messages[0].role, "system");
  assert.ok(messages[0].content.startsWith("You are helpful."));
  assert.ok(messages[0].content.includes("- prefers Rust"));
  assert.deepEqual(messages.slice(1).map((x) => x.role), ["user", "assistant", "assistant", "tool", "user"]);
  assert.deepEqual(messages[3].tool_calls, [{ id: "c1", type: "function", function: { name: "lookup", arguments: "{\"q\":1}" } }]);
  assert.equal(messages[4].tool_call_id, "c1");
  assert.equal(messages.at(-1).content, "Which language do I prefer?");
  assert.equal(report.tokenizer, "estimate");
  assert.ok(report.tools > 0 && report.longTerm > 0 && report.system > 0);
  assert.equal(report.free, report.limit - report.total);
  assert.equal(report.messagesSent, 5, "the question is stored, and sent as the history's newest");
  const history = (await m.sessionHistory()).map((e) => e.content);
  assert.equal(history.at(-1), "Which language do I prefer?");
});

test("a failing long-term hook degrades to no block", async () => {
  const m = await am.Memory.open({ store: "memory", namespace: "n", sessionId: "s", longTerm: () => { throw new Error("index offline"); } });
  await m.add({ content: "hello" });
  const { messages, report } = await m.buildContext({ query: "hello" });
  assert.deepEqual(messages.map((x) => x.role), ["user"]);
  assert.match(report.longTermError, /index offline/);
});

test("concurrent adds are stored in call order, none lost", async () => {
  const adapter = mapAdapter();
  const m = await am.Memory.open({ namespace: "n", sessionId: "s", store: adapter });
  await Promise.all(Array.from({ length: 50 }, (_, i) => m.add({ role: i % 2 ? "assistant" : "user", content: `m${i}` })));
  assert.deepEqual(m.messages().map((x) => x.content), Array.from({ length: 50 }, (_, i) => `m${i}`));
  const again = await am.Memory.open({ namespace: "n", sessionId: "s", store: adapter });
  assert.equal(again.messages().length, 50);
});

test("eviction feeds pending compression; a summary replaces it in the context", async () => {
  const m = await am.Memory.open({ store: "memory", namespace: "n", sessionId: "s", maxTokens: 80, retainRecentRounds: 1 });
  for (let i = 0; i < 12; i++) {
    await m.add({ content: `question ${i}` });
    await m.add({ role: "assistant", content: `answer ${i}` });
  }
  const usage = m.usage();
  assert.ok(usage.tokens <= 80);
  assert.ok(usage.pendingCompression > 0 && usage.compressionDue);
  const pending = m.pendingCompression();
  assert.equal(pending[0].content, "question 0");
  await m.commitSummary("Twelve numbered questions were asked.", pending.at(-1).id);
  assert.equal(m.usage().pendingCompression, 0);
  const { messages, report } = await m.buildContext();
  assert.match(messages[0].content, /Twelve numbered questions/);
  assert.ok(report.summary > 0);
});

test("an exact tokenizer recounts the session", async () => {
  const m = await am.Memory.open({ store: "memory", namespace: "n", sessionId: "s" });
  await m.add({ content: "我喜欢用 Rust 写代码，也喜欢喝茶。" });
  assert.equal(m.usage().tokenizer, "estimate");
  const tok = await am.loadTokenizer("o200k");
  m.setTokenizer(tok);
  assert.equal(m.usage().tokenizer, "o200k");
  assert.equal(m.usage().tokens, tok.count("我喜欢用 Rust 写代码，也喜欢喝茶。") + 4);
  assert.equal(tok.count("still usable"), 2, "the tokenizer object stays usable");
});

test("LLM usage is recorded and reported", async () => {
  const m = await am.Memory.open({ store: "memory", namespace: "n", sessionId: "s" });
  m.recordUsage(1000, 200);
  assert.equal(m.usageReport(), "Token usage: 1 calls | input: 1000 | output: 200 | total: 1200");
  assert.equal(m.llmUsage().totalTokens, 1200);
});

test("bad input gets typed errors and leaves the memory unchanged", async () => {
  const adapter = mapAdapter();
  await rejectsWith(am.Memory.open({ store: "memory", namespace: "n", sessionId: "s", budget: { contextWindow: NaN } }), "INVALID_INPUT");
  await rejectsWith(am.Memory.open({ store: "memory", namespace: "n", sessionId: "s", maxTokenz: 5 }), "INVALID_INPUT", /maxTokenz/);
  await rejectsWith(am.Memory.open({ store: "memory", namespace: "a/b", sessionId: "s" }), "INVALID_INPUT", /namespace/);
  await rejectsWith(am.Memory.open({ store: "memory", namespace: "n", sessionId: "" }), "INVALID_INPUT", /session id/);
  await rejectsWith(am.Memory.open({ namespace: "n", sessionId: "s", store: 42 }), "INVALID_INPUT", /store/);
  await rejectsWith(am.Memory.open({ store: "memory", namespace: "n", sessionId: "s", longTerm: "nope" }), "INVALID_INPUT", /longTerm/);
  await rejectsWith(am.Memory.open(null), "INVALID_INPUT");

  const m = await am.Memory.open({ namespace: "n", sessionId: "s", store: adapter });
  await m.add({ content: "kept" });
  await rejectsWith(m.add({ content: 42 }), "INVALID_INPUT");
  await rejectsWith(m.add({ role: "robot", content: "x" }), "INVALID_INPUT", /robot/);
  await rejectsWith(m.add({ role: "tool", content: "42" }), "INVALID_INPUT", /toolCallId/);
  await rejectsWith(m.add({ content: "x", colour: "red" }), "INVALID_INPUT", /colour/);
  await rejectsWith(m.buildContext({ query: 5 }), "INVALID_INPUT");
  await rejectsWith(m.buildContext({ tools: "all" }), "INVALID_INPUT", /tools/);
  adapter.failPuts = true;
  await rejectsWith(m.add({ content: "lost?" }), "STORAGE", /disk full/);
  adapter.failPuts = false;
  assert.deepEqual(m.messages().map((x) => x.content), ["kept"]);
  await m.add({ content: "retried" });
  const again = await am.Memory.open({ namespace: "n", sessionId: "s", store: adapter });
  assert.deepEqual(again.messages().map((x) => x.content), ["kept", "retried"]);
});
