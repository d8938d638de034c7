// Ids and timestamps chosen by an attacker or a careless host: an imported
// id that spells another record's key, ids that are not well-formed text,
// timestamps past year 9999, a tool-call id given twice. Each is refused
// with INVALID_INPUT, and nothing acknowledged is lost.
import { test } from "node:test";
import assert from "node:assert/strict";
import * as am from "../../pkg/node.js";
import { mapAdapter } from "./map-adapter.mjs";

const invalid = async (promise, label) => {
  const e = await promise.then(() => null, (err) => err);
  assert.ok(e, `${label}: refused`);
  assert.equal(e.name, "AgentMemoryError", label);
  assert.equal(e.code, "INVALID_INPUT", `${label}: ${e.message}`);
};

test("an imported id that names another record, a path or control text is refused; nothing is overwritten", async () => {
  const adapter = mapAdapter();
  const m = await am.Memory.open({ namespace: "n", sessionId: "s", store: adapter });
  await m.rememberMany(Array.from({ length: 25 }, (_, i) => ({ content: `fact number ${i} about item ${i * 37}` })));
  const batch = [...adapter.map.keys()].find((k) => k.includes("/lt/log/"));
  assert.ok(batch, "the 25 share a record");
  const template = (await m.exportMemories()).entries[0];
  const crafted = [
    batch.slice("n/".length), "a/b", "../../session/s/msg/x", "lt/meta/generation", "x\ny", "x\u0000y",
    "x".repeat(5_000), "", " ", "ü",
  ];
  for (const id of crafted) {
    const doc = await m.exportMemories();
    // An attacker edits the document: `count` goes too, so the id is what is refused.
    delete doc.count;
    doc.entries = [{ ...template, id, content: "planted" }];
    await invalid(m.importMemories(doc), `import of id ${JSON.stringify(id.slice(0, 30))}`);
  }
  const reopened = await am.Memory.open({ namespace: "n", sessionId: "s", store: adapter });
  assert.equal((await reopened.memories()).length, 25);
  assert.deepEqual((await reopened.stats()).damaged, []);
  // Ids of the library's alphabet still import (frameworks give ids like these).
  const doc = await m.exportMemories();
  delete doc.count;
  doc.entries = [{ ...template, id: "msg_01:a-b.c", content: "Imported with its own id" }];
  assert.equal((await m.importMemories(doc)).added, 1);
});

test("session and agent ids that are not well-formed text are refused, so two never share records", async () => {
  for (const sessionId of ["s\uD800", "s\uDBFF", "s\uDC00", "s\uFFFD", "s\u0000", "s\n"]) {
    await invalid(am.Memory.open({ store: "memory", namespace: "n", sessionId }), `sessionId ${JSON.stringify(sessionId)}`);
  }
  for (const agentId of ["a\uD800", "a\uDC00"]) {
    await invalid(am.Memory.open({ store: "memory", namespace: "n", sessionId: "s", agentId }), `agentId ${JSON.stringify(agentId)}`);
  }
  const m = await am.Memory.open({ store: "memory", namespace: "n", sessionId: "ok" });
  await invalid(m.deleteSession("s\uDC00"), "deleteSession of a lone surrogate");
  await invalid(m.remember({ content: "x", scope: "agent:a\uD800" }), "scope with a lone surrogate");
  // Well-formed text beyond ASCII stays allowed.
  const cjk = await am.Memory.open({ store: "memory", namespace: "n", sessionId: "会话😀", agentId: "助手" });
  await cjk.add({ content: "你好" });
  assert.equal(cjk.messages().length, 1);
});

test("timestamps outside 1970-9999 are refused by every entry point, not only add()", async () => {
  const m = await am.Memory.open({ store: "memory", namespace: "n", sessionId: "s" });
  const far = 2 ** 53 - 1;
  for (const timestamp of [far, -1, 253_402_300_800_000]) {
    await invalid(m.add({ content: "x", timestamp }), `add ${timestamp}`);
    await invalid(m.remember({ content: "x", timestamp }), `remember ${timestamp}`);
    await invalid(m.rememberMany([{ content: "x", timestamp }]), `rememberMany ${timestamp}`);
    assert.throws(() => am.createEntry({ content: "x", timestamp }), (e) => e.code === "INVALID_INPUT", `createEntry ${timestamp}`);
    const doc = await m.exportMemories();
    doc.entries = [{ ...am.createEntry({ content: "x", scope: "user" }), timestamp }];
    await invalid(m.importMemories(doc), `import ${timestamp}`);
  }
  assert.equal((await m.memories()).length, 0);
});

test("a tool-call id given twice in one message is refused, not dropped from every later request", async () => {
  const m = await am.Memory.open({ store: "memory", namespace: "n", sessionId: "s" });
  const call = { id: "c1", name: "lookup", arguments: "{}" };
  await invalid(m.add({ role: "assistant", content: "", toolCalls: [call, { ...call, arguments: "{\"q\":2}" }] }), "twice");
  assert.equal(m.messages().length, 0);
});
