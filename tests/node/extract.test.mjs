// Extraction without a model: extractMemories, and endSession with no llm
// (the rules), with provenance from the message to the memory and back.
import { test } from "node:test";
import assert from "node:assert/strict";
import * as am from "../../pkg/node.js";

const MAY_8 = Date.UTC(2023, 4, 8, 13, 56);

test("extractMemories: third person, dates resolved, sources, questions and small talk left out", () => {
  const out = am.extractMemories([
    { id: "a1", role: "assistant", content: "Hey! What's new with you?" },
    { id: "u1", role: "user", content: "I went to a LGBTQ support group yesterday and it was so powerful. Have you been?", timestamp: MAY_8 },
    { id: "a2", role: "assistant", content: "Wow, that's great!" },
    { id: "u2", role: "user", content: "Thanks!" },
    { id: "u3", role: "user", content: "我上个月开始学做川菜了，每个周末都在家练习麻婆豆腐。", timestamp: MAY_8 },
  ]);
  assert.deepEqual(out.map((m) => [m.content, m.sources]), [
    ["User went to a LGBTQ support group on 7 May 2023 and it was so powerful", ["u1"]],
    ["用户2023年4月开始学做川菜了，每个周末都在家练习麻婆豆腐", ["u3"]],
  ]);
  assert.ok(out.every((m) => m.importance >= 0.3 && m.importance <= 0.9 && typeof m.category === "string"));
  const named = am.extractMemories([{ role: "user", content: "I adopted a cat named Miso last week.", timestamp: MAY_8 }], { userName: "Ada" });
  assert.deepEqual(named.map((m) => [m.content, m.sources]), [["Ada adopted a cat named Miso the week before 8 May 2023", ["0"]]]);
  assert.equal(am.extractMemories([{ role: "user", content: "I adopted a cat named Miso." }], { threshold: 100 }).length, 0);
});

test("extractMemories rejects bad input with typed errors", () => {
  for (const [args, pattern] of [
    [[{ role: "user" }], /content/],
    [[{ role: "robot", content: "x" }], /role|variant/],
    [[{ role: "user", content: "x", when: 1 }], /when/],
    ["not an array", /array/],
    [[], { threshold: "high" }],
  ]) {
    const call = Array.isArray(args) && args.length === 0 ? () => am.extractMemories([], { threshold: "high" }) : () => am.extractMemories(args);
    assert.throws(call, (e) => e.code === "INVALID_INPUT" && (!(pattern instanceof RegExp) || pattern.test(e.message)), String(args));
  }
});

test("endSession without a model keeps facts by rule; a forgotten message finds what came from it", async () => {
  const m = await am.Memory.open({ store: "memory", namespace: "n", sessionId: "s" });
  await m.add({ role: "assistant", content: "What did you do this weekend?" });
  const said = await m.add({ role: "user", content: "I ran a charity race for mental health last Saturday, it was my first one.", timestamp: MAY_8 });
  await m.add({ role: "assistant", content: "Congrats, that's amazing!" });
  const report = await m.endSession();
  assert.equal(report.judge, "rules");
  assert.equal(report.llmCalls, 0);
  assert.equal(report.added, 1);
  const derived = await m.derivedFrom(said.id);
  assert.deepEqual(derived.map((e) => e.content), ["User ran a charity race for mental health on Saturday, 6 May 2023, it was their first one"]);
  assert.deepEqual(derived[0].sources, [said.id]);
  const [hit] = await m.search("charity race", { scopes: ["user"] });
  assert.deepEqual(hit.sources, [said.id]);
  assert.equal((await m.endSession()).added, 0);
  assert.equal((await m.derivedFrom(42).catch((e) => e)).code, "INVALID_INPUT");
});
