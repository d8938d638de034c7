// What a request leaves out is decided by the token budget and always reported;
// what a model returns is kept only as far as the budget can use it; forget
// leaves no version behind. Each case was once silently wrong.
import { test } from "node:test";
import assert from "node:assert/strict";
import * as am from "../../pkg/node.js";
import { mapAdapter } from "./map-adapter.mjs";

const open = (options) => am.Memory.open({ namespace: "n", sessionId: "s", store: mapAdapter(), ...options });

test("260 short messages are all sent: the window is cut by the budget, not a count", async () => {
  const m = await open({});
  for (let i = 0; i < 130; i++) {
    await m.add({ role: "user", content: `question ${i}` });
    await m.add({ role: "assistant", content: `answer ${i}` });
  }
  const { report } = await m.buildContext({});
  assert.equal(report.messagesSent, 260);
  assert.equal(report.leftOut.olderMessages, 0);
});

test("with a model, compression waits for the budget's threshold, not message 201", async () => {
  let calls = 0;
  const llm = () => (calls++, "a summary");
  const m = await open({ llm });
  for (let i = 0; i < 125; i++) {
    await m.add({ role: "user", content: `question ${i}` });
    await m.add({ role: "assistant", content: `answer ${i}` });
  }
  await m.idle();
  assert.equal(calls, 0, "nothing to compress at 1% of the budget");
  assert.equal(m.usage().pendingCompression, 0);
});

test("an explicit maxCachedMessages cut is reported as older messages left out", async () => {
  const m = await open({ maxCachedMessages: 5, retainRecentRounds: 0 });
  for (let i = 0; i < 10; i++) {
    await m.add({ role: "user", content: `question ${i}` });
    await m.add({ role: "assistant", content: `answer ${i}` });
  }
  const { report } = await m.buildContext({});
  const { olderMessages, leadingAssistant } = report.leftOut;
  assert.ok(report.messagesSent <= 5);
  assert.equal(report.messagesSent + olderMessages + leadingAssistant, 20, JSON.stringify(report));
});

test("a 10 MB summary from the model is cut to the summary budget", async () => {
  const huge = "The user mentioned many things. ".repeat(330_000);
  const m = await open({ llm: () => huge, autoCompress: false, maxTokens: 200, retainRecentRounds: 1 });
  for (let i = 0; i < 30; i++) await m.add({ role: "user", content: `message number ${i} with some words` });
  const r = await m.compress();
  assert.ok(r.summary.content.length < 20_000, `${r.summary.content.length} characters kept`);
  const { report } = await m.buildContext({});
  assert.ok(report.summary > 0 && report.summary <= 2_000, `summary section ${report.summary} tokens`);
});

test("a long fact that matches is in the block, and its cut is reported", async () => {
  const m = await open({});
  await m.remember({ content: `Keeps a travel diary about Kyoto: ${"temples and gardens ".repeat(500)}` });
  const { messages, report } = await m.buildContext({ query: "Kyoto travel diary" });
  assert.match(messages[0].content, /Keeps a travel diary about Kyoto/);
  assert.equal(report.longTermTruncated, true);
});

test("a long-term block cut at its budget keeps its closing tag, and the cut is reported", async () => {
  const m = await open({ longTermBudget: 60 });
  const facts = ["Likes green tea", "Plays the cello", "Owns two cats named Miso and Tofu", "Works as a nurse in Porto",
    "Runs marathons in autumn", "Is allergic to peanuts"];
  for (const content of facts) await m.remember({ content, metadata: { category: "profile" } });
  const { messages, report } = await m.buildContext({ query: "What do you know about me?" });
  assert.ok(report.longTerm > 0 && report.longTerm <= 60, JSON.stringify(report));
  assert.equal(report.longTermTruncated, true);
  assert.match(messages[0].content, /^- .+$/m, "a fact is kept");
  assert.match(messages[0].content, /\n<\/memory>$/);
});

test("forget after supersede and undo leaves no version in the raw store or the export", async () => {
  const store = mapAdapter();
  const m = await am.Memory.open({ namespace: "n", sessionId: "s", store });
  const { entry: old } = await m.remember({ content: "Lives in Lisbon" });
  const moved = await m.supersede({ content: "Lives in Porto since May" }, [old.id]);
  await m.undo(moved.id);
  assert.equal((await m.history(old.id)).length, 2);
  assert.equal(await m.forget(old.id), true);
  for (const [key, value] of store.map) {
    assert.ok(!/Porto|Lisbon/.test(value), `${key} still holds ${value.slice(0, 80)}`);
  }
  assert.deepEqual((await m.exportMemories(null)).entries, []);
});
