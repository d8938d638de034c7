// One shape, three descriptions: the core (what the binding accepts and the
// codes it reports), the JavaScript types (the shipped .d.ts) and the
// component's WIT. A test per agreement, so that a field or a code added to
// one and not the others fails here.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import ts from "typescript";
import * as am from "../../pkg/node.js";

const root = new URL("../..", import.meta.url).pathname;
const camel = (kebab) => kebab.replace(/-([a-z])/g, (_, c) => c.toUpperCase());

// The shipped declarations, read with the TypeScript compiler.
const dts = join(root, "pkg/agent_memory.d.ts");
const program = ts.createProgram([dts], { strict: true, noEmit: true, skipLibCheck: true, lib: ["lib.es2022.d.ts", "lib.dom.d.ts"] });
const checker = program.getTypeChecker();
const declared = new Map();
ts.forEachChild(program.getSourceFile(dts), (node) => {
  if ((ts.isInterfaceDeclaration(node) || ts.isTypeAliasDeclaration(node)) && node.name) declared.set(node.name.text, node);
});
/** The property names of a declared type, inherited ones included. */
function fieldsOf(name) {
  const node = declared.get(name);
  assert.ok(node, `the .d.ts declares ${name}`);
  return checker.getPropertiesOfType(checker.getTypeAtLocation(node.name)).map((p) => p.name);
}
/** Whether `path` ("budget.contextWindow") names a property of the declared type `name`. */
function hasPath(name, path) {
  let type = checker.getTypeAtLocation(declared.get(name).name);
  for (const part of path.split(".")) {
    const prop = type.getNonNullableType().getProperty(part);
    if (!prop) return false;
    type = checker.getTypeOfSymbol(prop);
  }
  return true;
}
/** The string literals of a declared union type. */
function literalsOf(name) {
  return checker.getTypeAtLocation(declared.get(name).name).types.map((t) => t.value);
}

// The WIT, read as its grammar has it: `record name { field: type, ... }` and `enum name { a, b }`.
const wit = readFileSync(join(root, "wit/agent-memory.wit"), "utf8").replace(/\/\/.*$/gm, "");
function witItems(kind, name) {
  const m = new RegExp(`\\b${kind} ${name} \\{([^}]*)\\}`).exec(wit);
  assert.ok(m, `the WIT has ${kind} ${name}`);
  // A record's fields are `name: type` (a type may hold commas); an enum's cases are names.
  return kind === "record"
    ? [...m[1].matchAll(/^\s*([a-z][a-z0-9-]*)\s*:/gm)].map((f) => f[1])
    : m[1].split(",").map((c) => c.trim()).filter(Boolean);
}

test("every error code is the same in the core, the JavaScript types and the WIT", () => {
  const core = [...readFileSync(join(root, "src/error.rs"), "utf8").matchAll(/ErrorCode::\w+ => "([A-Z_]+)"/g)].map((m) => m[1]);
  assert.ok(core.length >= 15, core.join(" "));
  // NOT_INITIALIZED is the JavaScript glue's own: the wasm was not loaded yet.
  assert.deepEqual(literalsOf("ErrorCode").sort(), [...core, "NOT_INITIALIZED"].sort());
  assert.deepEqual(witItems("enum", "error-code").map((c) => c.toUpperCase().replaceAll("-", "_")).sort(), [...core].sort());
});

test("every option the JavaScript types declare is one the core accepts, and no other", async () => {
  // The core names what it accepts when it refuses a misspelt field: "expected one of: a, b".
  const accepted = async (call) => {
    try {
      await call();
    } catch (err) {
      assert.equal(err.code, "INVALID_INPUT", err.message);
      // The binding's own check ("expected one of: a, b") or serde's, at depth ("expected one of `a`, `b`").
      const m = /expected one of:? (.*)$/.exec(err.message);
      assert.ok(m, err.message);
      return m[1].split(", ").map((f) => f.replaceAll("`", ""));
    }
    assert.fail("a misspelt field was accepted");
  };
  const memory = await am.Memory.open({ namespace: `shapes-${Date.now()}`, sessionId: "s", store: "memory" });
  const cases = [
    ["MemoryOptions", () => am.Memory.open({ namespace: "n", sessionId: "s", store: "memory", misspelt: 1 })],
    ["BudgetOptions", () => am.Memory.open({ namespace: "n", sessionId: "s", store: "memory", budget: { misspelt: 1 } })],
    ["LlmGovernorOptions", () => am.Memory.open({ namespace: "n", sessionId: "s", store: "memory", llm: { complete: async () => "", misspelt: 1 } })],
    ["EntryInput", () => memory.remember({ content: "x", misspelt: 1 })],
    ["MessageInput", () => memory.add({ role: "user", content: "x", misspelt: 1 })],
    ["ContextRequest", () => memory.buildContext({ misspelt: 1 })],
    ["SearchOptions", () => memory.search("x", { misspelt: 1 })],
    ["ExtractOptions", async () => am.extractMemories([], { misspelt: 1 })],
    ["ExtractMessage", async () => am.extractMemories([{ role: "user", content: "x", misspelt: 1 }])],
    ["IndexDocument", async () => new am.SearchIndex().add({ id: "a", text: "x", misspelt: 1 })],
  ];
  for (const [name, call] of cases) {
    const core = await accepted(call);
    assert.deepEqual(fieldsOf(name).sort(), core.sort(), `${name}: the .d.ts and the core`);
  }
  memory.free();
});

// Each WIT record beside the JavaScript type it stands for. The component's
// records are flat where the JavaScript options nest, and carry JSON text
// where JavaScript carries objects: those fields are named here, each with
// the path it stands for.
const RECORDS = [
  ["message-input", "MessageInput", {}],
  ["memory-input", "EntryInput", {}],
  ["entry", "MemoryEntry", {}],
  ["chat-message", "ChatMessage", { toolCalls: "tool_calls", toolCallId: "tool_call_id" }],  // OpenAI's names
  ["open-options", "MemoryOptions", { useLlm: "llm", contextWindow: "budget.contextWindow", reservedForResponse: "budget.reservedForResponse" }],
  ["context-request", "ContextRequest", { toolsJson: "tools" }],
  ["context-report", "ContextReport", {}],
  ["built-context", "BuiltContext", {}],
  ["hit", "Hit", {}],
  ["end-session-report", "EndSessionReport", {}],
  ["session-usage", "SessionUsage", {}],
  ["import-report", "ImportReport", {}],
];

test("every field of a WIT record is a field of the JavaScript type it stands for", () => {
  for (const [record, type, renamed] of RECORDS) {
    for (const field of witItems("record", record).map(camel)) {
      const path = renamed[field] ?? field;
      assert.ok(hasPath(type, path), `WIT ${record}.${field} has no ${type}.${path} in the .d.ts`);
    }
  }
});

/** Fails unless `value` has every required field of the declared type `name` and no field it does not declare. */
function holdsTo(name, value) {
  const props = checker.getPropertiesOfType(checker.getTypeAtLocation(declared.get(name).name));
  const names = props.map((p) => p.name);
  for (const key of Object.keys(value)) assert.ok(names.includes(key), `the core returns ${name}.${key}; the .d.ts does not declare it`);
  for (const p of props) {
    if (!(p.flags & ts.SymbolFlags.Optional)) assert.ok(p.name in value, `the .d.ts says ${name}.${p.name} is always there; the core's result lacks it`);
  }
}

test("every result object the core returns has the fields its declared type names, and no other", async () => {
  const memory = await am.Memory.open({ namespace: `shapes-out-${Date.now()}`, sessionId: "s", store: "memory" });
  const entry = await memory.add({ role: "user", content: "I live in Lisbon and have a dog called Biscuit.", metadata: { a: "b" } });
  holdsTo("MemoryEntry", entry);
  holdsTo("TokenCounts", entry.tokens);
  const { messages, report } = await memory.buildContext({ query: "Where do I live?", system: "Be brief." });
  holdsTo("ContextReport", report);
  holdsTo("LeftOut", report.leftOut);
  for (const m of messages) holdsTo("ChatMessage", m);
  holdsTo("SessionUsage", memory.usage());
  holdsTo("UsageReport", memory.llmUsage());
  const remembered = await memory.remember({ content: "Has a dog called Biscuit", sources: [entry.id] });
  holdsTo("MemoryEntry", remembered.entry);
  const report2 = await memory.endSession();
  holdsTo("EndSessionReport", report2);
  const hits = await memory.search("dog");
  assert.ok(hits.length > 0);
  for (const hit of hits) {
    holdsTo("Hit", hit);
    holdsTo("Explain", hit.explain);
  }
  const stats = await memory.stats();
  holdsTo("MemoryStats", stats);
  const exported = await memory.exportMemories();
  holdsTo("ExportDocument", exported);
  holdsTo("ImportReport", await memory.importMemories(exported));
  holdsTo("PromptTurn", am.readPrompt([{ role: "system", content: "Be brief." }, { role: "user", content: "hi" }], "Be kind."));
  const extracted = am.extractMemories([{ role: "user", content: "My name is Ada and I work as a nurse." }]);
  assert.ok(extracted.length > 0);
  for (const e of extracted) holdsTo("ExtractedMemory", e);
  memory.free();
});
