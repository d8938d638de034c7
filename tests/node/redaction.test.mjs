// Redaction through the public API: with `redact`, nothing of an e-mail,
// phone, card, IBAN or API key (or the host's own pattern) reaches the
// store, the model or the embedder; the report counts what went where.
import { test } from "node:test";
import assert from "node:assert/strict";
import * as am from "../../pkg/node.js";
import { mapAdapter } from "./map-adapter.mjs";
import { judgeHook } from "../../scripts/judge-hook.mjs";

const SECRETS = ["ada@example.com", "+351 912 345 678", "4111 1111 1111 1111", "GB82WEST12345698765432", "sk-proj-AbCdEf0123456789XyZ", "EMP-204817"];

test("redacted data is never stored nor sent to the model or the embedder", async () => {
  const store = mapAdapter();
  const seen = [];
  const llm = async (request) => {
    seen.push(...request.messages.map((m) => m.content));
    return judgeHook(request);
  };
  const embed = async (texts) => { seen.push(...texts); return texts.map(() => [1, 0, 0]); };
  const m = await am.Memory.open({
    namespace: "red", sessionId: "s", store, llm, embed, embedModel: "e3",
    redact: { patterns: [{ name: "EMPLOYEE_ID", pattern: /EMP-\d{6}/ }] },
  });
  await m.add({ role: "user", content: "Write to ada@example.com or call +351 912 345 678." });
  await m.add({ role: "user", content: "Card 4111 1111 1111 1111, IBAN GB82WEST12345698765432, badge EMP-204817." });
  await m.add({ role: "assistant", content: "Calling a tool.", toolCalls: [{ id: "t1", name: "save", arguments: '{"key":"sk-proj-AbCdEf0123456789XyZ"}' }] });
  const stored = await m.remember({ content: "Work e-mail is ada@example.com" });
  assert.equal(stored.entry.content, "Work e-mail is [EMAIL]");
  await m.rememberMany([{ content: "Badge EMP-204817" }]);
  await m.search("who is ada@example.com");
  const ctx = await m.buildContext({ query: "what is my e-mail ada@example.com?" });
  await m.endSession();
  await m.idle();
  const everything = [...[...store.map].flat(), ...seen, JSON.stringify(ctx.messages), JSON.stringify(await m.exportMemories())];
  for (const s of SECRETS) assert.ok(!everything.some((t) => t.includes(s)), `${s} escaped redaction`);
  assert.ok(seen.length > 0);
  assert.ok(everything.some((t) => t.includes("[EMAIL]") && t.includes("[PHONE]")));
  assert.ok(everything.some((t) => t.includes("[EMPLOYEE_ID]")));
  const { redactions } = await m.stats();
  assert.deepEqual(redactions.byKind, { card: 1, email: 4, employee_id: 2, iban: 1, phone: 1, secret: 1 });
  assert.deepEqual(redactions.byPlace, { memory: 2, message: 6, query: 2 });
  assert.equal(redactions.total, 10);
});

test("detectors can be turned off one by one; without `redact` nothing changes", async () => {
  const m = await am.Memory.open({ store: "memory", namespace: "red2", sessionId: "s", redact: { phone: false } });
  const e = await m.add({ role: "user", content: "ada@example.com +351 912 345 678" });
  assert.equal(e.content, "[EMAIL] +351 912 345 678");
  const plain = await am.Memory.open({ store: "memory", namespace: "red3", sessionId: "s" });
  assert.equal((await plain.add({ role: "user", content: "ada@example.com" })).content, "ada@example.com");
  assert.equal((await plain.stats()).redactions, undefined);
});

test("bad redact options are INVALID_INPUT", async () => {
  for (const redact of ["yes", 1, [], { email: "no" }, { mail: true }, { patterns: /x/ }, { patterns: [{ name: "lower", pattern: /x/ }] },
    { patterns: [{ name: "X", pattern: "x" }] }, { patterns: [{ name: "X", pattern: /x/, flags: "g" }] }]) {
    await assert.rejects(am.Memory.open({ store: "memory", namespace: "bad", sessionId: "s", redact }), (e) => e.code === "INVALID_INPUT", JSON.stringify(redact));
  }
});
