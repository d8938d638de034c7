// The built npm package as a user imports it in Node.
import { test } from "node:test";
import assert from "node:assert/strict";
import * as am from "../../pkg/node.js";

function assertCode(fn, code, pattern) {
  assert.throws(fn, (err) => {
    assert.equal(err.name, "AgentMemoryError");
    assert.equal(err.code, code);
    if (pattern) assert.match(err.message, pattern);
    return true;
  });
}

test("imports and reports its version", () => {
  assert.match(am.version(), /^\d+\.\d+\.\d+$/);
});

test("estimateTokens follows the corrected formula", () => {
  assert.equal(am.estimateTokens(""), 0);
  assert.equal(am.estimateTokens("abcd"), 1);
  assert.equal(am.estimateTokens("我喜欢用"), 3);
  assert.equal(am.estimateTokens("ひらがな"), 3);
  assert.equal(am.estimateTokens("😀😀😀"), 2);
});

test("TokenBudget has the design's defaults and reports usage", () => {
  const b = new am.TokenBudget();
  assert.equal(b.availableForConversation, 196700);
  assert.equal(b.needsCompression(157360), false);
  assert.equal(b.needsCompression(157361), true);
  b.recordUsage(1000, 200);
  b.recordUsage(200, 140);
  assert.deepEqual(b.usage(), { calls: 2, inputTokens: 1200, outputTokens: 340 });
  assert.equal(b.usageReport(), "Token usage: 2 calls | input: 1200 | output: 340 | total: 1540");
  assert.equal(b.report().availableForConversation, 196700);
  const small = new am.TokenBudget({ contextWindow: 8192, compressionThreshold: 0.5 });
  assert.equal(small.availableForConversation, 4892);
  assert.equal(small.compressionTrigger, 2446);
});

test("bad budgets throw typed errors and the instance keeps working", () => {
  assertCode(() => new am.TokenBudget({ contextWindow: -1 }), "INVALID_INPUT", /budget options/);
  assertCode(() => new am.TokenBudget({ contextWindow: NaN }), "INVALID_INPUT");
  assertCode(() => new am.TokenBudget({ contextWindow: "big" }), "INVALID_INPUT");
  assertCode(() => new am.TokenBudget({ contextWindow: 1000 }), "INVALID_INPUT", /no room/);
  assertCode(() => new am.TokenBudget({ compressionThreshold: NaN }), "INVALID_INPUT", /compressionThreshold/);
  const b = new am.TokenBudget();
  assertCode(() => b.needsCompression(NaN), "INVALID_INPUT");
  assertCode(() => b.recordUsage(-5, 1), "INVALID_INPUT");
  assertCode(() => b.usageRatio("10"), "INVALID_INPUT");
  assertCode(() => am.estimateTokens(42), "INVALID_INPUT", /string/);
  // Nothing above killed the wasm instance.
  assert.equal(b.usageRatio(196700), 1);
  assert.equal(am.estimateTokens("abcd"), 1);
});

test("options cross as JSON: non-finite numbers named at any depth, cycles and BigInts typed errors, undefined absent", async () => {
  // NaN or Infinity would turn into null in JSON, and an optional number
  // would silently go missing: each is an error naming its field.
  assertCode(() => new am.TokenBudget({ contextWindow: Infinity }), "INVALID_INPUT", /"contextWindow" must be a finite number/);
  await assert.rejects(am.Memory.open({ store: "memory", namespace: "conv", sessionId: "s", budget: { compressionThreshold: NaN } }), (err) => {
    assert.equal(err.code, "INVALID_INPUT");
    assert.match(err.message, /"budget\.compressionThreshold" must be a finite number/);
    return true;
  });
  const cyclic = { content: "x" };
  cyclic.metadata = { self: cyclic };
  assertCode(() => am.createEntry(cyclic), "INVALID_INPUT", /JSON-serializable/);
  assertCode(() => am.createEntry({ content: "x", timestamp: 10n }), "INVALID_INPUT", /JSON-serializable/);
  // A misspelt field at depth is still refused, without JSON's line and column.
  await assert.rejects(am.Memory.open({ store: "memory", namespace: "conv", sessionId: "s", budget: { contextWindw: 8192 } }), (err) => {
    assert.match(err.message, /unknown field `contextWindw`/);
    assert.doesNotMatch(err.message, /line \d+ column/);
    return true;
  });
  // An undefined field is an absent one.
  const e = am.createEntry({ content: "x", kind: undefined, timestamp: undefined });
  assert.equal(e.kind, am.createEntry({ content: "x" }).kind);
  assert.ok(e.timestamp > 1_700_000_000_000);
  // A lone surrogate (text cut inside an emoji) becomes U+FFFD, as in every other string the binding reads.
  assert.equal(am.createEntry({ content: "cut \ud83d here", metadata: { note: "\\ud83d stays text" } }).content, "cut \ufffd here");
  assert.equal(am.createEntry({ content: "x", metadata: { note: "\\ud83d stays text" } }).metadata.note, "\\ud83d stays text");
});

test("createEntry fills defaults, keeps timestamps and validates", () => {
  const e = am.createEntry({ content: "我喜欢用 Rust", kind: "fact", scope: "user", timestamp: 1700000000123,
    metadata: { source: "chat" } });
  assert.match(e.id, /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-/);
  assert.equal(e.timestamp, 1700000000123);
  assert.equal(e.role, "user");
  assert.equal(e.kind, "fact");
  assert.equal(e.importance, 0.5);
  assert.deepEqual(e.metadata, { source: "chat" });
  assert.equal(e.tokens.estimate, am.estimateTokens("我喜欢用 Rust"));
  const later = am.createEntry({ content: "x", timestamp: 1700000000124 });
  assert.ok(later.id > e.id, "ids are time-ordered");
  const tool = am.createEntry({ content: "42", role: "tool", toolCallId: "call_1" });
  assert.equal(tool.kind, "tool_result");

  assertCode(() => am.createEntry({}), "INVALID_INPUT", /content/);
  assertCode(() => am.createEntry({ content: 5 }), "INVALID_INPUT");
  assertCode(() => am.createEntry({ content: "x", role: "robot" }), "INVALID_INPUT", /robot/);
  assertCode(() => am.createEntry({ content: "x", role: "tool" }), "INVALID_INPUT", /toolCallId/);
  assertCode(() => am.createEntry({ content: "x", scope: "team" }), "INVALID_INPUT", /scope/);
  assertCode(() => am.createEntry({ content: "x", importance: 7 }), "INVALID_INPUT", /importance/);
  assertCode(() => am.createEntry({ content: "x", timestamp: NaN }), "INVALID_INPUT");
  assertCode(() => am.createEntry({ content: "x", colour: "red" }), "INVALID_INPUT", /colour/);
  assertCode(() => am.createEntry(null), "INVALID_INPUT");
  assert.equal(am.createEntry({ content: "still works" }).content, "still works");
});

test("the browser-style start runs unchanged in Node, and require loads the package", async () => {
  const { default: init, initSync, Memory } = await import("../../pkg/node.js");
  await init();
  initSync();
  const m = await Memory.open({ store: "memory", namespace: "u", sessionId: "s" });
  assert.equal((await m.add({ content: "hello" })).content, "hello");
  const { createRequire } = await import("node:module");
  const required = createRequire(import.meta.url)("../../pkg/node.js");
  assert.equal(typeof required.Memory.open, "function");
  assert.equal(required.version(), am.version());
});

test("the tarball carries README, licenses and changelog", async () => {
  const { execFileSync } = await import("node:child_process");
  const out = execFileSync("npm", ["pack", "--dry-run", "--json"], { cwd: new URL("../../pkg/", import.meta.url) });
  const files = JSON.parse(out)[0].files.map((f) => f.path);
  for (const f of ["README.md", "LICENSE-MIT", "LICENSE-APACHE", "CHANGELOG.md", "node.js", "guard.js", "agent_memory_bg.wasm"]) {
    assert.ok(files.includes(f), `${f} missing from ${files}`);
  }
});
