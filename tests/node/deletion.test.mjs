// Verified deletion through the public API: after forget, forgetScope,
// purge and deleteNamespace, the deleted text is nowhere in the raw adapter
// store (memories, versions, vectors, messages, summaries, owed work), in
// search, in a request, or in a later export.
import { test } from "node:test";
import assert from "node:assert/strict";
import * as am from "../../pkg/node.js";
import { mapAdapter } from "./map-adapter.mjs";
import { judgeHook } from "../../scripts/judge-hook.mjs";

const embed = async (texts) => texts.map((t) => [t.length % 7, 1, t.includes("code") ? 1 : 0]);

/**
 * Everything a user could see or the store holds, as text. A needle has
 * letters past "f": a bare number can turn up in a writer id, a stamp or a hash.
 */
async function traces(store, m, needle) {
  const raw = [...store.map].filter(([k, v]) => k.includes(needle) || v.includes(needle)).map(([k]) => k);
  const found = (await m.search(needle)).filter((h) => h.text.includes(needle)).map((h) => `search: ${h.text}`);
  const ctx = await m.buildContext({ query: "tell me everything" });
  const inContext = ctx.messages.filter((x) => x.content.includes(needle)).map(() => "context");
  const exported = JSON.stringify(await m.exportMemories()).includes(needle) ? ["export"] : [];
  const history = (await m.sessionHistory()).filter((e) => e.content.includes(needle)).map(() => "history");
  return [...raw, ...found, ...inContext, ...exported, ...history];
}

async function chat(store, lines) {
  const m = await am.Memory.open({ namespace: "del", sessionId: "s", store, llm: judgeHook, embed, embedModel: "e3", maxTokens: 300, retainRecentRounds: 1 });
  for (const line of lines) {
    await m.add({ role: "user", content: line });
    await m.add({ role: "assistant", content: "Noted." });
  }
  for (let i = 0; i < 4; i++) {
    await m.add({ role: "user", content: `small talk ${i} about the weather` });
    await m.add({ role: "assistant", content: "Indeed." });
  }
  await m.compress();
  await m.endSession();
  await m.idle();
  return m;
}

test("forget leaves no trace of a memory, its versions, its source message or a summary quoting it", async () => {
  const store = mapAdapter();
  const m = await chat(store, ["My locker code is 4921QX", "I like chess"]);
  const memory = (await m.memories()).find((e) => e.content.includes("4921QX"));
  const newer = await m.supersede({ content: "User's locker code is now 4921QX-B" }, [memory.id]);
  assert.ok((await traces(store, m, "4921QX")).length > 0, "the test plants what it then deletes");
  assert.equal(await m.forget(newer.id), true);
  await m.idle();
  assert.deepEqual(await traces(store, m, "4921QX"), []);
  assert.deepEqual(await m.history(memory.id), []);
  assert.ok((await traces(store, m, "chess")).length > 0, "other memories stay");
  const reopened = await am.Memory.open({ namespace: "del", sessionId: "s", store });
  assert.deepEqual(await traces(store, reopened, "4921QX"), []);
});

test("forgetScope and purge leave no trace; deleteNamespace leaves no record", async () => {
  const store = mapAdapter();
  const m = await chat(store, ["My passport number is X1234567", "My bank PIN is 8765PW"]);
  assert.ok((await traces(store, m, "X1234567")).length > 0);
  await m.forgetScope("user");
  await m.idle();
  assert.deepEqual(await traces(store, m, "X1234567"), []);
  assert.deepEqual(await traces(store, m, "8765PW"), []);
  const again = await chat(store, ["My new PIN is 2468KY"]);
  assert.ok((await traces(store, again, "2468KY")).length > 0);
  await again.purge();
  await again.idle();
  assert.deepEqual(await traces(store, again, "2468KY"), []);
  await chat(store, ["My alarm code is 1357RZ"]);
  await am.Memory.deleteNamespace("del", store);
  assert.deepEqual([...store.map.keys()], []);
});
