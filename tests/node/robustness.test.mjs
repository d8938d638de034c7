// Memory as users break it, in Node: several instances on one storage
// adapter (tabs, workers, sub-agents), damaged records, an adapter that
// never answers, misspelt options, and the same bad call 100,000 times.
import { test } from "node:test";
import assert from "node:assert/strict";
import * as am from "../../pkg/node.js";
import { mapAdapter } from "./map-adapter.mjs";

const isCode = (code) => (err) => err?.name === "AgentMemoryError" && err.code === code;

test("the shipped Map adapter passes the store conformance suite and keeps a namespace", async () => {
  const { mapAdapter: shipped } = await import("../../pkg/adapters/map.js");
  const adapter = shipped();
  await am.checkStorageAdapter(adapter, "conformance");
  const m = await am.Memory.open({ namespace: "u", sessionId: "s", store: adapter });
  await m.remember({ content: "Lives in Lisbon" });
  const again = await am.Memory.open({ namespace: "u", sessionId: "s", store: adapter });
  assert.deepEqual((await again.memories()).map((e) => e.content), ["Lives in Lisbon"]);
});

test("two instances adding to one session keep all 40 messages, each writer's in order", async () => {
  const adapter = mapAdapter();
  const open = () => am.Memory.open({ namespace: "u", sessionId: "chat", store: adapter });
  const [a, b] = [await open(), await open()];
  const write = (m, tag) => Promise.all(Array.from({ length: 20 }, (_, i) => m.add({ content: `${tag} ${i}` })));
  await Promise.all([write(a, "a"), write(b, "b")]);
  const history = (await a.sessionHistory()).map((e) => e.content);
  assert.equal(history.length, 40);
  for (const tag of ["a", "b"]) {
    assert.deepEqual(history.filter((c) => c.startsWith(tag)), Array.from({ length: 20 }, (_, i) => `${tag} ${i}`));
  }
  // Each instance's next request holds the other's messages too.
  const { messages } = await b.buildContext({});
  assert.equal(messages.length, 40);
  assert.deepEqual(messages.map((m) => m.content), history);
});

test("a parent and its sub-agent write one session without overwriting each other", async () => {
  const adapter = mapAdapter();
  const parent = await am.Memory.open({ namespace: "u", sessionId: "chat", store: adapter });
  const sub = await am.Memory.open({ namespace: "u", sessionId: "agent:chat", store: adapter });
  await parent.add({ role: "user", content: "Find me a flight" });
  await sub.add({ role: "user", content: "search flights to Lisbon" });
  await sub.add({ role: "assistant", content: "", toolCalls: [{ id: "t1", name: "search", arguments: "{}" }] });
  await sub.add({ role: "tool", content: "LH 455", toolCallId: "t1" });
  await sub.add({ role: "assistant", content: "Found LH 455" });
  await parent.add({ role: "assistant", content: "Booked LH 455" });
  const history = (await parent.sessionHistory()).map((e) => e.content);
  assert.deepEqual(history, ["Find me a flight", "search flights to Lisbon", "Found LH 455", "Booked LH 455"]);
});

test("reads see another instance's long-term writes without a write or a reopen", async () => {
  const adapter = mapAdapter();
  const a = await am.Memory.open({ namespace: "u", sessionId: "s1", store: adapter });
  const b = await am.Memory.open({ namespace: "u", sessionId: "s2", store: adapter });
  assert.equal((await b.memories()).length, 0);
  await a.remember({ content: "Lives in Lisbon" });
  assert.deepEqual((await b.memories()).map((e) => e.content), ["Lives in Lisbon"]);
  assert.equal((await b.exportMemories()).entries.length, 1);
  assert.equal((await b.search("Lisbon")).length, 1);
  assert.equal((await b.stats()).valid, 1);
  const { messages } = await b.buildContext({ query: "Where does the user live? Lisbon" });
  assert.match(messages[0].content, /Lives in Lisbon/);
});

test("a changed number, date or polarity is an update with history, never a dropped duplicate", async () => {
  const m = await am.Memory.open({ store: "memory", namespace: "u", sessionId: "s" });
  await m.remember({ content: "Has 2 kids" });
  const r = await m.remember({ content: "Has 3 kids" });
  assert.equal(r.outcome, "superseded");
  assert.equal(r.change, "number");
  assert.deepEqual((await m.history(r.entry.id)).map((e) => e.content), ["Has 2 kids", "Has 3 kids"]);
  await m.remember({ content: "Likes spicy food" });
  const p = await m.remember({ content: "Does not like spicy food" });
  assert.equal(p.change, "polarity");
  assert.deepEqual((await m.memories()).map((e) => e.content).sort(), ["Does not like spicy food", "Has 3 kids"]);
  assert.equal((await m.remember({ content: "has 3 kids." })).outcome, "duplicate");
});

test("damaged records are skipped and reported; deleteNamespace works without opening", async () => {
  const adapter = mapAdapter();
  const m = await am.Memory.open({ namespace: "u", sessionId: "chat", store: adapter });
  await m.add({ content: "kept message" });
  await m.remember({ content: "Kept fact" });
  adapter.map.set("u/lt/entry/broken", "{not json");
  adapter.map.set("u/session/chat/summary", "[");
  adapter.map.set("u/outbox/chat", "nope");
  adapter.map.set("other/lt/entry/x", "{}");
  const heard = [];
  const again = await am.Memory.open({
    namespace: "u", sessionId: "chat", store: adapter, onDamaged: (d) => heard.push(d.key),
  });
  assert.deepEqual((await again.memories()).map((e) => e.content), ["Kept fact"]);
  assert.deepEqual((await again.sessionHistory()).map((e) => e.content), ["kept message"]);
  const damaged = (await again.stats()).damaged.map((d) => d.key).sort();
  assert.deepEqual(damaged, ["lt/entry/broken", "outbox/chat", "session/chat/summary"]);
  assert.deepEqual(heard.sort(), damaged);
  assert.equal((await again.pendingWork()).length, 0, "a damaged outbox record is skipped in the list");
  assert.equal((await again.stats()).damaged.length, 3, "still listed");
  await again.remember({ content: "Works after damage" });
  await am.Memory.deleteNamespace("u", adapter);
  assert.deepEqual([...adapter.map.keys()], ["other/lt/entry/x"], "only the other namespace is left");
  await assert.rejects(am.Memory.deleteNamespace("", adapter), isCode("INVALID_INPUT"));
  await assert.rejects(am.Memory.deleteNamespace("u", 42), isCode("INVALID_INPUT"));
});

test("an adapter that never settles gives STORAGE_TIMEOUT, not a hang", async () => {
  const adapter = mapAdapter();
  const m = await am.Memory.open({ namespace: "u", sessionId: "s", store: adapter, storageTimeoutMs: 50 });
  adapter.put = () => new Promise(() => {});
  await assert.rejects(m.add({ content: "lost?" }), isCode("STORAGE_TIMEOUT"));
  await assert.rejects(
    am.Memory.open({ namespace: "u", sessionId: "s", store: adapter, storageTimeoutMs: 0 }),
    isCode("INVALID_INPUT"),
  );
});

test("misspelt options, nested ones too, are errors that list what is accepted", async () => {
  const open = (extra) => am.Memory.open({ store: "memory", namespace: "u", sessionId: "s", ...extra });
  await assert.rejects(open({ budget: { contextWindw: 1000 } }), (e) => isCode("INVALID_INPUT")(e) && /contextWindw/.test(e.message));
  await assert.rejects(open({ nameSpace: "x" }), (e) => {
    assert.ok(isCode("INVALID_INPUT")(e));
    for (const field of ["namespace", "sessionId", "store", "llm", "agentId", "budget"]) {
      assert.match(e.message, new RegExp(`\\b${field}\\b`));
    }
    return true;
  });
  await assert.rejects(open({ dedup: { jacard: 0.5 } }), isCode("INVALID_INPUT"));
  const m = await open({});
  await assert.rejects(m.search("x", { topK: 3, scopez: [] }), isCode("INVALID_INPUT"));
  await assert.rejects(m.search("x", { vector: [0.1, 0.2] }), (e) => isCode("INVALID_INPUT")(e) && /vector/.test(e.message));
});

test("supersede needs an array of ids; loadTokenizer errors are typed", async () => {
  const m = await am.Memory.open({ store: "memory", namespace: "u", sessionId: "s" });
  const { entry } = await m.remember({ content: "Prefers tea" });
  for (const bad of [42, NaN, {}, "id", [42], []]) {
    await assert.rejects(m.supersede({ content: "Prefers coffee" }, bad), isCode("INVALID_INPUT"), String(bad));
  }
  assert.equal((await m.memories()).length, 1, "nothing superseded by a bad call");
  await m.supersede({ content: "Prefers coffee" }, [entry.id]);
  await assert.rejects(am.loadTokenizer("/no/such/pack.amtk"), isCode("TOKENIZER_PACK"));
  await assert.rejects(am.loadTokenizer(42), isCode("TOKENIZER_PACK"));
});

test("JS numbers past 2^32 saturate instead of wrapping on wasm32", async () => {
  const tok = am.Tokenizer.estimate();
  assert.equal(tok.countUpTo("abcd efgh", 2 ** 32 + 1), tok.count("abcd efgh"), "not a limit of 1");
  assert.equal(tok.truncate("abcd efgh", 2 ** 40), "abcd efgh");
  assert.equal(tok.truncateLines("a\nb", 2 ** 53 - 1), "a\nb");
  const o200k = await am.loadTokenizer("o200k");
  assert.equal(o200k.countUpTo("hello world", 2 ** 32 + 1), 2);
});

test("the same bad call 100,000 times leaves the instance working", async () => {
  const m = await am.Memory.open({ store: "memory", namespace: "u", sessionId: "s" });
  const tok = am.Tokenizer.estimate();
  const freed = await am.Memory.open({ store: "memory", namespace: "u", sessionId: "gone" });
  freed.free();
  const freedTok = am.Tokenizer.estimate();
  freedTok.free();
  // The privacy options, wrong, and a sealed export that fails its tag.
  const key = await crypto.subtle.generateKey({ name: "AES-GCM", length: 256 }, false, ["encrypt", "decrypt"]);
  const sealedMemory = await am.Memory.open({ store: "memory", namespace: "sealed", sessionId: "s", encryption: { key } });
  await sealedMemory.remember({ content: "Sealed fact" });
  const sealed = await sealedMemory.exportMemories({ sealed: true });
  const altered = { ...sealed, sealed: sealed.sealed.slice(0, 40) + (sealed.sealed[40] === "A" ? "B" : "A") + sealed.sealed.slice(41) };
  const asyncCalls = [
    () => am.Memory.open({ store: "memory", namespace: "u", sessionId: "s", encryption: { key: "not a key" } }),
    () => am.Memory.open({ store: "memory", namespace: "u", sessionId: "s", redact: { patterns: [{ name: "x", pattern: /x/ }] } }),
    () => am.Memory.open({ store: "memory", namespace: "аlice", sessionId: "s" }),
    () => m.exportMemories({ sealed: "yes" }),
    () => sealedMemory.importMemories(altered),
    () => m.importMemories(undefined),
    () => m.supersede({ content: "x" }, [42]),
    () => m.supersede({ content: "x" }, 42),
    () => m.add(undefined),
    () => m.add({ content: 5 }),
    () => m.search(42),
    () => m.history(undefined),
    () => m.rememberMany("x"),
    () => m.buildContext({ tools: "x" }),
    () => freed.add({ content: "x" }),
    () => freed.memories(),
    () => m.derivedFrom(42),
    () => m.deleteSession("s"),
    () => m.deleteSession({}),
    () => m.search("x", { vector: [1, 2] }),
    () => am.Memory.open({ store: "memory", namespace: "u", sessionId: "s", embed: async () => [], embedModel: 7 }),
  ];
  const syncCalls = [
    () => tok.count(undefined),
    () => tok.countUpTo("abc", -1),
    () => m.recordUsage(NaN, 1),
    () => m.setTokenizer(freedTok),
    () => freedTok.count("abc"),
    () => freed.usage(),
    () => am.extractMemories("not an array"),
    () => am.extractMemories([{ role: "user", content: 5 }]),
  ];
  const N = 100_000;
  for (const call of asyncCalls) {
    for (let done = 0; done < N; done += 5_000) {
      const batch = await Promise.allSettled(Array.from({ length: 5_000 }, () => call()));
      const bad = batch.find((r) => r.status !== "rejected" || r.reason?.name !== "AgentMemoryError");
      assert.equal(bad, undefined, `${call}: ${bad?.reason ?? bad?.value}`);
    }
  }
  for (const call of syncCalls) {
    for (let i = 0; i < N; i++) {
      try {
        call();
        assert.fail(`${call} did not fail`);
      } catch (err) {
        if (err?.name !== "AgentMemoryError") throw err;
      }
    }
  }
  // Every valid call still works.
  await m.add({ content: "still here" });
  await m.remember({ content: "Still remembers" });
  assert.equal((await m.memories()).length, 1);
  assert.equal(tok.count("still counting"), am.estimateTokens("still counting"));
  const fresh = await am.Memory.open({ store: "memory", namespace: "u", sessionId: "s2" });
  assert.equal((await fresh.buildContext({ query: "hi" })).messages.length, 1);
  assert.deepEqual((await sealedMemory.memories()).map((e) => e.content), ["Sealed fact"]);
});

test("buildContext's total is what the provider bills: tiktoken's per-message rules and the server's usage", async () => {
  const { get_encoding } = await import("tiktoken");
  const { startLlmServer, promptTokens } = await import("../../scripts/llm-server.mjs");
  const m = await am.Memory.open({ store: "memory", namespace: "u", sessionId: "billing" });
  m.setTokenizer(await am.loadTokenizer("o200k"));
  await m.remember({ content: "Prefers Rust for systems code" });
  const turns = [["Hi! 我喜欢用 Rust 写代码", "Great choice."], ["What about async?", "Tokio is common."], ["And tests?", "cargo test."]];
  for (const [q, a] of turns) {
    await m.add({ role: "user", content: q });
    await m.add({ role: "assistant", content: a });
  }
  const { messages, report } = await m.buildContext({ query: "Which language do I like for systems code?", system: "Be brief." });
  assert.equal(messages.length, 8);
  const enc = get_encoding("o200k_base");
  try {
    const billed = messages.reduce((n, msg) => n + 3 + enc.encode(msg.role).length + enc.encode(msg.content).length, 0) + 3;
    assert.equal(report.total, billed);
  } finally {
    enc.free();
  }
  assert.equal(report.total, promptTokens(messages));
  // The same request sent to the local OpenAI-compatible server.
  const llm = await startLlmServer();
  try {
    const res = await fetch(llm.endpoint, {
      method: "POST", headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: "local", messages }),
    });
    assert.equal((await res.json()).usage.prompt_tokens, report.total);
  } finally {
    await llm.close();
  }
});

test("a long-term hook that never answers does not hang the turn", async () => {
  const m = await am.Memory.open({
    store: "memory",
    namespace: "u", sessionId: "s", longTerm: () => new Promise(() => {}), longTermTimeoutMs: 50,
  });
  await m.add({ content: "hello" });
  const { messages, report } = await m.buildContext({ query: "hello" });
  assert.equal(messages.length, 1);
  assert.match(report.longTermError, /did not answer within 50 ms/);
});

test("a long-term hook may call back into the memory it serves", async () => {
  let m;
  m = await am.Memory.open({
    store: "memory",
    namespace: "u", sessionId: "s",
    longTerm: async (query) => {
      const hits = await m.search(query);
      m.usage();
      return hits.map((h) => `- ${h.text}`).join("\n");
    },
  });
  await m.remember({ content: "Prefers Rust for systems code" });
  const { messages } = await m.buildContext({ query: "systems code language" });
  assert.match(messages[0].content, /Prefers Rust/);
});
