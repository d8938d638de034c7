// Recall across paraphrases through the public API: concepts bridge a
// question and a fact that share no word, aliases a host or model wrote
// reach the index of another instance, and a fact's echo stays out.
import { test } from "node:test";
import assert from "node:assert/strict";
import { Memory } from "../../pkg/node.js";
import { mapAdapter } from "../../pkg/adapters/map.js";

const system = (ctx) => ctx.messages[0]?.content ?? "";

test("a question in other words finds the fact, in a new session and another instance; its echo is not sent", async () => {
  const store = mapAdapter();
  const past = await Memory.open({ namespace: "u", sessionId: "past", store });
  await past.add({ role: "user", content: "I take the train to work on Mondays." });
  await past.add({ role: "user", content: "I have a golden retriever called Biscuit." });
  await past.add({ role: "assistant", content: "Got it, I'll keep in mind: User has a golden retriever called Biscuit" });
  const report = await past.endSession();
  assert.equal(report.judge, "rules");
  // A host's aliases, on a memory written by one instance, found by another.
  await past.remember({ content: "用户最喜欢的食物是饺子", metadata: { aliases: "jiaozi, favourite dish" } });
  const next = await Memory.open({ namespace: "u", sessionId: "next", store });
  // Few facts: the pinned profile sends them all, so what finds them is
  // asked of search, the block's ranking.
  const best = async (q) => (await next.search(q)).find((h) => h.longTerm)?.text;
  assert.equal(await best("What's my dog's name?"), "User has a golden retriever called Biscuit");
  assert.equal(await best("What food do I like?"), "用户最喜欢的食物是饺子");
  assert.equal(await best("Where can I get good jiaozi?"), "用户最喜欢的食物是饺子");
  const dog = system(await next.buildContext({ query: "What's my dog's name?" }));
  assert.match(dog, /User has a golden retriever called Biscuit/);
  assert.doesNotMatch(dog, /keep in mind/, "the echo of a fact already sent");
  assert.doesNotMatch(dog, /What's my dog's name/, "the current message is never recalled");
  // A third instance opened after the others closed reads the same.
  past.free();
  next.free();
  const reopened = await Memory.open({ namespace: "u", sessionId: "third", store });
  assert.equal((await reopened.search("Which pet do I have?")).find((h) => h.longTerm)?.text, "User has a golden retriever called Biscuit");
  // Aliases that are not text are a typed error, every time.
  for (let i = 0; i < 1000; i++) {
    await assert.rejects(reopened.remember({ content: "x y z", metadata: { aliases: 7 } }), (e) => typeof e.code === "string");
  }
  reopened.free();
});

test("the everyday lexicon's newer concepts bridge through the public API, from another instance", async () => {
  const store = mapAdapter();
  const writer = await Memory.open({ namespace: "u", sessionId: "w", store });
  const facts = {
    "Who is my best friend?": "My bestie Jo lives next door",
    "Which transport do I take?": "I commute by bus every morning",
    "Am I afraid of anything?": "我恐高，从不坐摩天轮",
    "What colour do I like?": "I painted the kitchen teal",
    "我信什么宗教？": "I'm a practising Buddhist",
    "What is my dog's breed?": "我家柴犬叫豆豆",
  };
  for (const text of [...Object.values(facts), "The meeting ran late again", "Our quiz team came last", "我周末喜欢睡懒觉"]) {
    await writer.remember({ content: text });
  }
  writer.free();
  const reader = await Memory.open({ namespace: "u", sessionId: "r", store });
  for (const [question, fact] of Object.entries(facts)) {
    assert.equal((await reader.search(question)).find((h) => h.longTerm)?.text, fact, question);
  }
  reader.free();
});
