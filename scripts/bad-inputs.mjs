// Every bad input at the JS boundary: each public function and method,
// each of its parameters, given each value of a fixed list of bad inputs
// (with valid values in the other positions). Each call must end in a typed
// AgentMemoryError with a code (a rejected promise for async methods, never
// a synchronous throw), or be an acceptance listed below with its reason;
// afterwards the instance still works. Run by tests/node/bad-input.test.mjs
// (which writes the matrix into docs/reliability.md) and by
// bench:reliability (which repeats it).
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import * as am from "../pkg/node.js";
import { mapAdapter } from "../pkg/adapters/map.js";

const FIVE_MB = "x".repeat(5 * 1024 * 1024);
const deep = (depth) => {
  let v = "leaf";
  for (let i = 0; i < depth; i++) v = { nested: v };
  return v;
};
const DEEP = deep(10_000);
const revoked = () => {
  const { proxy, revoke } = Proxy.revocable({}, {});
  revoke();
  return proxy;
};

// Parameter kinds: what "wrong type", "empty" and "unknown keys" mean for each.
const WRONG = { string: 42, number: "1", object: "x", array: { length: 1 }, tokenizer: {}, bytes: "bytes", adapter: 42 };
const EMPTY = { string: "", number: 0, object: {}, array: [], tokenizer: {}, bytes: new Uint8Array(0), adapter: {} };

// A bad text goes where an object parameter keeps its text (a message's
// content, an index document's text), and is the argument otherwise.
const TEXT_FIELDS = ["content", "text", "query"];
const withText = (kind, valid, text) => {
  const field = kind === "object" && valid ? TEXT_FIELDS.find((f) => typeof valid[f] === "string") : undefined;
  if (field) return { ...valid, [field]: text };
  if (kind === "array" && typeof valid?.[0]?.content === "string") return [{ ...valid[0], content: text }];
  return text;
};

// The bad values, in the table's column order. `valid` is the parameter's
// good value, so some bad values are built from it.
const BAD = [
  ["undefined", () => undefined],
  ["null", () => null],
  ["wrong type", (kind) => WRONG[kind]],
  ["NaN", () => NaN],
  ["+Infinity", () => Infinity],
  ["-Infinity", () => -Infinity],
  ["negative", (kind) => (kind === "number" ? -1 : kind === "string" ? "-1" : -1)],
  ["2^53", () => 2 ** 53],
  ["empty", (kind) => EMPTY[kind]],
  ["5 MB string", (kind, valid) => withText(kind, valid, FIVE_MB)],
  ["lone surrogates", (kind, valid) => withText(kind, valid, "\uD800 lone \uDC00")],
  ["10,000-deep metadata", (kind, valid) =>
    kind === "object" ? { ...valid, metadata: DEEP } : kind === "array" ? [{ content: "x", metadata: DEEP }] : DEEP],
  ["unknown option keys", (kind, valid) =>
    kind === "object" ? { ...valid, noSuchOption: 1 } : kind === "array" ? [{ content: "x", noSuchOption: 1 }] : { noSuchOption: 1 }],
  ["a thenable", () => ({ then: (ok) => ok("resolved") })],
  ["a revoked Proxy", () => revoked()],
];


// Why a bad-looking value is accepted, by reason; each acceptance below
// names one, and any acceptance not listed fails the test.
const REASONS = {
  optional: "an optional parameter: absent, null or `{}` means the defaults",
  text: "text of any length is text; lone surrogates arrive as U+FFFD (wasm-bindgen encodes strings as `TextEncoder` does)",
  name: "any non-empty, well-formed name without '/' or control characters is a name",
  unknown: "an id nothing has: the answer for an unknown id (`false`, `[]`, `0`)",
  zero: "0 tokens is a count",
  nothing: "an empty list: nothing to do",
  document: "an export document is data, not options: fields a later version adds are ignored (its `format` and `version` are checked)",
};
const accept = (reason, ...labels) => Object.fromEntries(labels.map((l) => [l, reason]));
const TEXT = accept("text", "negative", "empty", "5 MB string", "lone surrogates");
const IN_TEXT = accept("text", "5 MB string", "lone surrogates");
// A namespace is 1-128 characters of a safe ASCII set: "-1" is one.
const NAME = accept("name", "negative");
// Lone surrogates are refused: they arrive as U+FFFD, so two would name one session.
const SESSION = accept("name", "negative", "5 MB string");
const ID = accept("unknown", "negative", "empty", "5 MB string", "lone surrogates");
const OPTIONAL = accept("optional", "undefined", "null", "empty");
const ZERO = accept("zero", "empty");

// What every row needs: a memory with a message and a memory in it, a
// search index, a budget, a tokenizer.
async function harness() {
  const store = mapAdapter();
  const m = await am.Memory.open({ namespace: "u", sessionId: "s", store });
  const message = await m.add({ role: "user", content: "I live in Lisbon" });
  const { entry } = await m.remember({ content: "Lives in Lisbon" });
  const index = new am.SearchIndex();
  index.add({ id: "d1", text: "coffee in the morning" });
  const budget = new am.TokenBudget();
  const tok = am.Tokenizer.estimate();
  const pack = new Uint8Array(readFileSync(new URL("../pkg/packs/o200k.amtk", import.meta.url)));
  // A message old enough to be summarized: the newest rounds never are.
  const compressible = async () => {
    const first = await m.add({ role: "user", content: "Round one" });
    for (let i = 0; i < 8; i++) {
      await m.add({ role: "assistant", content: `Answer ${i}` });
      await m.add({ role: "user", content: `Question ${i}` });
    }
    return first.id;
  };
  // A memory that superseded another: what `undo` takes.
  let n = 0;
  const superseding = async () => {
    const { entry: old } = await m.remember({ content: `Owns ${++n} bikes and a red car` });
    return (await m.supersede({ content: `Owns ${n} bikes and a blue car` }, [old.id])).id;
  };
  return { store, m, message, entry, index, budget, tok, pack, compressible, superseding };
}

const EXPORT = (h) => ({ format: "agent-memory", version: 1, exportedAt: 1, entries: [h.entry], processed: {} });

// Each callable: its parameters as [name, kind, valid value (from the
// harness), optional], how to call it, whether it is async.
const CALLABLES = [
  { name: "Memory.open", async: true, params: [["options", "object", (h) => ({ namespace: "u", sessionId: "s2", store: h.store })]],
    call: (h, [o]) => am.Memory.open(o) },
  { name: "Memory.deleteNamespace", accepts: [NAME, {}], async: true, params: [["namespace", "string", () => "gone"], ["store", "adapter", () => mapAdapter()]],
    call: (h, [ns, s]) => am.Memory.deleteNamespace(ns, s) },
  { name: "memory.add", accepts: [IN_TEXT], async: true, params: [["message", "object", () => ({ role: "user", content: "hello" })]],
    call: (h, [x]) => h.m.add(x) },
  { name: "memory.buildContext", accepts: [{ ...OPTIONAL, ...accept("text", "lone surrogates") }], async: true, params: [["request", "object", () => ({ query: "Lisbon" }), true]],
    call: (h, [x]) => h.m.buildContext(x) },
  { name: "memory.commitSummary", accepts: [accept("text", "negative", "5 MB string", "lone surrogates"), {}], async: true,
    params: [["content", "string", () => "The user lives in Lisbon"],
      ["throughId", "string", (h) => h.compressible()]],
    call: (h, [c, t]) => h.m.commitSummary(c, t) },
  { name: "memory.deleteSession", accepts: [SESSION], async: true, params: [["sessionId", "string", () => "other"]],
    call: (h, [x]) => h.m.deleteSession(x) },
  { name: "memory.derivedFrom", accepts: [ID], async: true, params: [["messageId", "string", (h) => h.message.id]],
    call: (h, [x]) => h.m.derivedFrom(x) },
  { name: "memory.endSession", accepts: [OPTIONAL], async: true, params: [["options", "object", () => ({}), true]],
    call: (h, [x]) => h.m.endSession(x) },
  { name: "memory.forgetScope", async: true, params: [["scope", "string", () => "agent:nobody"]],
    call: (h, [x]) => h.m.forgetScope(x) },
  { name: "memory.forget", accepts: [ID], async: true, params: [["id", "string", () => "no-such-id"]], call: (h, [x]) => h.m.forget(x) },
  { name: "memory.history", accepts: [ID], async: true, params: [["id", "string", (h) => h.entry.id]], call: (h, [x]) => h.m.history(x) },
  { name: "memory.exportMemories", accepts: [OPTIONAL], async: true, params: [["options", "object", () => ({ sealed: false }), true]],
    call: (h, [x]) => h.m.exportMemories(x) },
  { name: "memory.importMemories", accepts: [accept("document", "unknown option keys")], async: true, params: [["document", "object", EXPORT]],
    call: (h, [x]) => h.m.importMemories(x) },
  { name: "memory.recordUsage", accepts: [ZERO, ZERO], async: false,
    params: [["inputTokens", "number", () => 10], ["outputTokens", "number", () => 5]],
    call: (h, [a, b]) => h.m.recordUsage(a, b) },
  { name: "memory.memories", accepts: [OPTIONAL], async: true, params: [["options", "object", () => ({ asOf: 1_700_000_000_000 }), true]],
    call: (h, [x]) => h.m.memories(x) },
  { name: "memory.rememberMany", accepts: [{ ...IN_TEXT, ...accept("nothing", "empty") }], async: true, params: [["memories", "array", () => [{ content: "Has a cat" }]]],
    call: (h, [x]) => h.m.rememberMany(x) },
  { name: "memory.remember", accepts: [IN_TEXT], async: true, params: [["memory", "object", () => ({ content: "Has a dog" })]],
    call: (h, [x]) => h.m.remember(x) },
  { name: "memory.search", accepts: [TEXT, OPTIONAL], async: true,
    params: [["query", "string", () => "Lisbon"], ["options", "object", () => ({ topK: 3 }), true]],
    call: (h, [q, o]) => h.m.search(q, o) },
  { name: "memory.setTokenizer", async: false, params: [["tokenizer", "tokenizer", () => am.Tokenizer.estimate()]],
    call: (h, [x]) => h.m.setTokenizer(x) },
  { name: "memory.supersede", accepts: [IN_TEXT, {}], async: true,
    params: [["memory", "object", () => ({ content: "Lives in Porto" })], ["replaces", "array", (h) => [h.entry.id]]],
    call: (h, [x, r]) => h.m.supersede(x, r) },
  { name: "memory.undo", async: true, params: [["id", "string", (h) => h.superseding()]], call: (h, [x]) => h.m.undo(x) },
  { name: "new SearchIndex", accepts: [OPTIONAL], async: false, params: [["options", "object", () => ({}), true]], call: (h, [o]) => new am.SearchIndex(o) },
  { name: "searchIndex.add", accepts: [IN_TEXT], async: false, params: [["doc", "object", () => ({ id: "d2", text: "tea at night" })]],
    call: (h, [x]) => h.index.add(x) },
  { name: "searchIndex.remove", accepts: [ID], async: false, params: [["id", "string", () => "d9"]], call: (h, [x]) => h.index.remove(x) },
  { name: "searchIndex.search", accepts: [TEXT, OPTIONAL], async: false,
    params: [["query", "string", () => "coffee"], ["options", "object", () => ({ topK: 3 }), true]],
    call: (h, [q, o]) => h.index.search(q, o) },
  { name: "new TokenBudget", accepts: [OPTIONAL], async: false, params: [["options", "object", () => ({ contextWindow: 8000 }), true]],
    call: (h, [o]) => new am.TokenBudget(o) },
  { name: "tokenBudget.needsCompression", accepts: [ZERO], async: false, params: [["conversationTokens", "number", () => 100]],
    call: (h, [x]) => h.budget.needsCompression(x) },
  { name: "tokenBudget.recordUsage", accepts: [ZERO, ZERO], async: false,
    params: [["inputTokens", "number", () => 10], ["outputTokens", "number", () => 5]],
    call: (h, [a, b]) => h.budget.recordUsage(a, b) },
  { name: "tokenBudget.usageRatio", accepts: [ZERO], async: false, params: [["conversationTokens", "number", () => 100]],
    call: (h, [x]) => h.budget.usageRatio(x) },
  { name: "Tokenizer.fromPack", async: false, params: [["bytes", "bytes", (h) => h.pack]], call: (h, [x]) => am.Tokenizer.fromPack(x) },
  { name: "tokenizer.count", accepts: [TEXT], async: false, params: [["text", "string", () => "hello world"]], call: (h, [x]) => h.tok.count(x) },
  { name: "tokenizer.countUpTo", accepts: [TEXT, ZERO], async: false, params: [["text", "string", () => "hello world"], ["limit", "number", () => 5]],
    call: (h, [t, l]) => h.tok.countUpTo(t, l) },
  { name: "tokenizer.truncate", accepts: [TEXT, ZERO], async: false, params: [["text", "string", () => "hello world"], ["limit", "number", () => 1]],
    call: (h, [t, l]) => h.tok.truncate(t, l) },
  { name: "tokenizer.truncateLines", accepts: [TEXT, ZERO], async: false, params: [["text", "string", () => "a\nb"], ["limit", "number", () => 1]],
    call: (h, [t, l]) => h.tok.truncateLines(t, l) },
  { name: "loadTokenizer", async: true, params: [["source", "bytes", (h) => h.pack]], call: (h, [x]) => am.loadTokenizer(x) },
  { name: "checkStorageAdapter", accepts: [{}, NAME], async: true, params: [["adapter", "adapter", () => mapAdapter()], ["namespace", "string", () => "check"]],
    call: (h, [a, n]) => am.checkStorageAdapter(a, n) },
  { name: "createEntry", accepts: [IN_TEXT], async: false, params: [["input", "object", () => ({ content: "hello" })]], call: (h, [x]) => am.createEntry(x) },
  { name: "estimateTokens", accepts: [TEXT], async: false, params: [["text", "string", () => "hello"]], call: (h, [x]) => am.estimateTokens(x) },
  { name: "extractMemories", accepts: [{ ...IN_TEXT, ...accept("nothing", "empty") }, OPTIONAL], async: false,
    params: [["messages", "array", () => [{ role: "user", content: "I live in Lisbon" }]], ["options", "object", () => ({}), true]],
    call: (h, [x, o]) => am.extractMemories(x, o) },
];

/// Runs one call; its outcome as a table cell.
async function outcome(spec, h, args) {
  let result;
  try {
    result = spec.call(h, args);
  } catch (err) {
    if (spec.async) return { cell: "sync throw", err };
    return typed(err) ? { cell: err.code } : { cell: "untyped", err };
  }
  if (spec.async) {
    if (!(result instanceof Promise)) return { cell: "not a promise" };
    try {
      await result;
    } catch (err) {
      return typed(err) ? { cell: err.code } : { cell: "untyped", err };
    }
  }
  return { cell: "accepted" };
}
const typed = (err) => err?.name === "AgentMemoryError" && typeof err.code === "string" && err.code !== "";

/// Valid calls of every kind still work.
async function stillWorks(h) {
  const message = await h.m.add({ role: "user", content: "still here" });
  assert.ok(message.id);
  assert.ok((await h.m.memories()).length >= 1);
  assert.ok((await h.m.search("Lisbon")).length >= 0);
  assert.equal(h.tok.count("still counting"), am.estimateTokens("still counting"));
  assert.ok(h.index.search("coffee").length >= 1);
  assert.equal(typeof h.budget.usageRatio(10), "number");
}

export const MARK_START = "<!-- bad-input matrix: written by tests/node/bad-input.test.mjs -->";
export const MARK_END = "<!-- end of the bad-input matrix -->";

export function markdown(rows) {
  const used = new Set(rows.flatMap((r) => r.cells.filter((c) => c.startsWith("ok")).map((c) => c.slice(4))));
  const lines = [
    `| call (parameter) | ${BAD.map(([label]) => label).join(" | ")} |`,
    `|---|${BAD.map(() => "---").join("|")}|`,
    ...rows.map((r) => `| \`${r.name}\` (${r.param}) | ${r.cells.join(" | ")} |`),
    "",
    "A code is the `code` of the `AgentMemoryError` the call threw (a rejected promise for the async",
    "methods); `ok: <reason>` is a documented acceptance:",
    "",
    ...Object.entries(REASONS).filter(([k]) => used.has(k)).map(([k, v]) => `- \`${k}\`: ${v}.`),
  ];
  return lines.join("\n");
}

/**
 * Runs the whole matrix once on a fresh harness: `rows` (a cell per bad
 * value), `calls` made, and `problems` (an untyped or synchronous error, an
 * acceptance not listed, a listed one refused, a valid call refused, an
 * instance that stopped working).
 */
export async function badInputMatrix() {
  const h = await harness();
  const rows = [];
  const problems = [];
  let calls = 0;
  for (const spec of CALLABLES) {
    for (const [i, [param, kind]] of spec.params.entries()) {
      const accepts = spec.accepts?.[i] ?? {};
      const cells = [];
      for (const [label, make] of BAD) {
        const args = await Promise.all(spec.params.map(([, , v]) => v(h)));
        args[i] = make(kind, args[i]);
        const { cell, err } = await outcome(spec, h, args);
        calls++;
        const why = accepts[label];
        if (cell === "accepted") {
          if (!why) problems.push(`${spec.name}(${param}) accepted ${label}`);
          cells.push(`ok: ${why}`);
        } else {
          if (why) problems.push(`${spec.name}(${param}) rejects ${label} (${cell}), listed as accepted: ${why}`);
          if (!/^[A-Z_]+$/.test(cell)) problems.push(`${spec.name}(${param}) ${label}: ${cell} ${err?.stack ?? err ?? ""}`);
          cells.push(cell);
        }
      }
      rows.push({ name: spec.name, param, cells });
      // The valid value itself is accepted (the row tests what it claims).
      const { cell, err } = await outcome(spec, h, await Promise.all(spec.params.map(([, , v]) => v(h))));
      if (cell !== "accepted") problems.push(`${spec.name} rejects its valid arguments: ${cell} ${err?.message ?? ""}`);
      try {
        await stillWorks(h);
      } catch (err) {
        problems.push(`after ${spec.name}(${param}) the instance stopped working: ${err?.message ?? err}`);
      }
    }
  }
  return { rows, calls, problems, params: CALLABLES.reduce((n, c) => n + c.params.length, 0) };
}
