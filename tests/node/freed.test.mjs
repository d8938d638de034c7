// Every method the types declare as returning a Promise answers misuse (a
// freed Memory) with a rejected promise, never a synchronous throw: a
// caller's `.catch` or `await` in a try block is the only handler it has.
// The list of async methods is read from the generated types, so a method
// added later cannot be missed by js/guard.js.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import * as am from "../../pkg/node.js";

/** Names of `Memory`'s instance methods whose declared return is a Promise. */
function asyncMethods() {
  const dts = readFileSync(new URL("../../pkg/agent_memory.d.ts", import.meta.url), "utf8");
  const body = dts.slice(dts.indexOf("export class Memory {"));
  const cls = body.slice(0, body.indexOf("\n}\n"));
  return [...cls.matchAll(/^ {4}(?!static )(\w+)\([^)]*\): Promise</gm)].map((m) => m[1]);
}

test("a freed Memory rejects every async method with FREED and throws from the others", async () => {
  const names = asyncMethods();
  assert.ok(names.includes("popMessage") && names.includes("clearSession") && names.length > 20, names.join());
  const m = await am.Memory.open({ store: "memory", namespace: "n", sessionId: "s" });
  m.free();
  for (const name of names) {
    let result;
    assert.doesNotThrow(() => { result = m[name](); }, `${name} threw synchronously`);
    await assert.rejects(result, (e) => e.code === "FREED", name);
  }
  assert.throws(() => m.messages(), (e) => e.code === "FREED");
});

test("js/guard.js's list of async methods is exactly the binding's Promise-returning methods and functions", async () => {
  const ts = (await import("typescript")).default;
  const { ASYNC } = await import("../../pkg/guard.js");
  const file = new URL("../../pkg/agent_memory.d.ts", import.meta.url).pathname;
  const source = ts.createSourceFile(file, readFileSync(file, "utf8"), ts.ScriptTarget.Latest, true);
  const returnsPromise = (node) => node.type?.getText(source).startsWith("Promise<") ?? false;
  const declared = {};
  ts.forEachChild(source, (node) => {
    if (ts.isClassDeclaration(node) && node.name) {
      declared[node.name.text] = node.members.filter((m) => ts.isMethodDeclaration(m) && returnsPromise(m)).map((m) => m.name.getText(source));
    } else if (ts.isFunctionDeclaration(node) && node.name && node.name.text !== "initSync" && !node.modifiers?.some((m) => m.kind === ts.SyntaxKind.DefaultKeyword)) {
      if (returnsPromise(node)) (declared.functions ??= []).push(node.name.text);
    }
  });
  assert.ok(declared.Memory.includes("sync") && declared.Memory.includes("open"), Object.keys(declared).join());
  for (const owner of new Set([...Object.keys(declared), ...Object.keys(ASYNC)])) {
    assert.deepEqual([...(ASYNC[owner] ?? [])].sort(), [...new Set(declared[owner] ?? [])].sort(), `${owner}: js/guard.js and the declarations`);
  }
});
