// The LLM pipeline through the npm package: a real OpenAI-compatible HTTP
// server on 127.0.0.1 (scripted model) reached with Node's real fetch, plain
// function hooks, fault injection, and 60-turn conversations end to end.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import * as am from "../../pkg/node.js";
import { startLlmServer } from "../../scripts/llm-server.mjs";
import { mapAdapter } from "./map-adapter.mjs";

let server;
before(async () => { server = await startLlmServer(); });
after(async () => { await server.close(); });

const http = (extra = {}) => ({
  endpoint: server.endpoint, model: "scripted-1", headers: { authorization: "Bearer test-key" },
  maxRetries: 0, backoffMs: 1, ...extra,
});

async function converse(m, turns) {
  for (const [user, assistant] of turns) {
    await m.add({ role: "user", content: user });
    await m.add({ role: "assistant", content: assistant });
  }
}

test("session end over HTTP: OpenAI-compatible requests, usage read into the budget", async () => {
  server.requests.length = 0;
  const m = await am.Memory.open({ namespace: "http", sessionId: "s1", store: mapAdapter(), llm: http() });
  const said = await m.add({ role: "user", content: "Hi! I prefer Rust for writing code." });
  await m.add({ role: "assistant", content: "Great choice." });
  await converse(m, [["thanks", "bye"]]);
  const report = await m.endSession();
  assert.equal(report.judge, "llm");
  assert.equal(report.added, 1);
  assert.equal(report.llmCalls, 1);
  assert.ok(report.complete);
  const [req] = server.requests;
  assert.equal(req.body.model, "scripted-1");
  assert.deepEqual(req.body.response_format, { type: "json_object" });
  assert.equal(req.body.max_tokens, 1024);
  assert.equal(req.headers.authorization, "Bearer test-key");
  assert.match(req.body.messages[1].content, /\[\[NEW\]\] #1 \[user\]: Hi! I prefer Rust/);
  assert.deepEqual((await m.memories()).map((e) => e.content), ["User prefers Rust for writing code"]);
  // The model cited message #1: the memory's source is that message's id.
  assert.deepEqual((await m.memories())[0].sources, [said.id]);
  assert.deepEqual((await m.derivedFrom(said.id)).map((e) => e.content), ["User prefers Rust for writing code"]);
  const usage = m.llmUsage();
  assert.equal(usage.calls, 1);
  assert.ok(usage.inputTokens > 100 && usage.outputTokens > 5, JSON.stringify(usage));
  const stats = m.llmStats();
  assert.equal(stats.byPurpose.judge.calls, 1);
  assert.equal(stats.countedLocally, 0);
  // Nothing new: no call.
  assert.equal((await m.endSession()).llmCalls, 0);
});

test("a plain function hook: string or {content, usage}, with an AbortSignal", async () => {
  const seen = [];
  const llm = async (req) => {
    seen.push(req);
    return req.json ? { content: '{"memories": ["User lives in Lyon"]}', usage: { prompt_tokens: 50, completion_tokens: 7 } } : "a summary";
  };
  const m = await am.Memory.open({ store: "memory", namespace: "fn", sessionId: "s1", llm });
  await converse(m, [["I live in Lyon", "Nice"]]);
  const report = await m.endSession();
  assert.equal(report.added, 1);
  assert.ok(seen[0].signal instanceof AbortSignal && !seen[0].signal.aborted);
  assert.equal(seen[0].messages[0].role, "system");
  assert.deepEqual(m.llmUsage().inputTokens, 50);
});

test("faults: a throwing, hanging, empty or unreadable model falls back to the rule judge", async () => {
  let signal;
  const cases = {
    throws: async () => { throw new Error("network down"); },
    hangs: (req) => { signal = req.signal; return new Promise(() => {}); },
    empty: async () => "",
    invalid: async () => "Sure! {memories: [",
  };
  for (const [name, llm] of Object.entries(cases)) {
    const m = await am.Memory.open({ store: "memory", namespace: `fault-${name}`, sessionId: "s1", llm: { complete: llm, timeoutMs: 50, maxRetries: 0 } });
    await converse(m, [["Hello. I prefer dark roast coffee.", "Noted."]]);
    const report = await m.endSession();
    assert.equal(report.judge, "rules", name);
    assert.ok(report.complete, name);
    assert.equal(report.errors.length, 1, name);
    assert.deepEqual((await m.memories()).map((e) => e.content), ["User prefers dark roast coffee"], name);
    assert.equal((await m.sessionHistory()).length, 2, `${name}: no message lost`);
    if (name === "hangs") {
      assert.match(report.errors[0], /TIMEOUT/);
      assert.ok(signal.aborted, "the abandoned call's signal fired");
      assert.equal(m.llmStats().timeouts, 1);
    }
  }
});

test("faults over HTTP: 429 then success is retried; wrong types are repaired", async () => {
  const m = await am.Memory.open({ store: "memory", namespace: "h429", sessionId: "s1", llm: http({ maxRetries: 2 }) });
  await converse(m, [["I love hiking in the Alps", "Fun"]]);
  server.faults.push("429");
  let report = await m.endSession();
  assert.equal(report.judge, "llm");
  assert.equal(m.llmStats().retries, 1);
  assert.deepEqual((await m.memories()).map((e) => e.content), ["User loves hiking in the Alps"]);

  const w = await am.Memory.open({ store: "memory", namespace: "types", sessionId: "s1", llm: http() });
  await converse(w, [["whatever", "ok"]]);
  server.faults.push("wrong-types");
  report = await w.endSession();
  assert.equal(report.judge, "llm");
  assert.deepEqual((await w.memories()).map((e) => e.content), ["User likes wrong types"]);
});

test("a 408 is retried whether the endpoint answers it or a function hook throws it; a thrown 400 is not", async () => {
  const judged = (m) => m.endSession().then((r) => ({ judge: r.judge, retries: m.llmStats().retries }));
  let calls = 0;
  const throwing = (status) => async (req) => {
    if (calls++ === 0) throw Object.assign(new Error("no answer in time"), { status });
    return req.json ? '{"memories": ["User likes green tea"]}' : "a summary";
  };
  const open = (namespace, llm) => am.Memory.open({ store: "memory", namespace, sessionId: "s1", llm });
  const thrown = await open("thrown408", { complete: throwing(408), maxRetries: 1, backoffMs: 1 });
  await converse(thrown, [["I like green tea", "Noted."]]);
  assert.deepEqual(await judged(thrown), { judge: "llm", retries: 1 }, "a thrown 408 is retried");
  calls = 0;
  const fatal = await open("thrown400", { complete: throwing(400), maxRetries: 1, backoffMs: 1 });
  await converse(fatal, [["I like green tea", "Noted."]]);
  assert.deepEqual(await judged(fatal), { judge: "rules", retries: 0 }, "a thrown 400 fails at once");
  let answered408 = false;
  const fetch408 = async (url, init) => {
    if (answered408) return fetch(url, init);
    answered408 = true;
    return new Response('{"error": {"message": "request timeout"}}', { status: 408 });
  };
  const http408 = await open("http408", http({ fetch: fetch408, maxRetries: 1 }));
  await converse(http408, [["I love hiking in the Alps", "Fun"]]);
  assert.deepEqual(await judged(http408), { judge: "llm", retries: 1 }, "an HTTP 408 is retried");
  assert.ok(answered408);
});

test("a failed summary stays owed and resumes when the memory next opens", async () => {
  const adapter = mapAdapter();
  const m = await am.Memory.open({ namespace: "owed", sessionId: "s1", store: adapter, llm: http() });
  await converse(m, Array.from({ length: 12 }, (_, i) => [`question ${i}`, `answer ${i}`]));
  server.faults.push(undefined, "500"); // the judge answers, the summary call fails
  const report = await m.endSession();
  assert.equal(report.complete, false);
  assert.match(report.errors.join(), /HTTP 500/);
  const owed = await m.pendingWork();
  assert.equal(owed.length, 1);
  assert.equal(owed[0].sessionId, "s1");
  assert.equal(owed[0].attempts, 1);

  const again = await am.Memory.open({ namespace: "owed", sessionId: "s1", store: adapter, llm: http() });
  await again.idle();
  assert.deepEqual(await again.pendingWork(), []);
  const judged = again.llmStats().byPurpose;
  assert.equal(judged.judge, undefined, "processed messages are not judged again");
  assert.equal(judged.summary.calls, 1);
  const { report: ctx } = await again.buildContext({ query: "next" });
  assert.ok(ctx.summary > 0);
  assert.equal((await again.sessionHistory()).length, 25, "the 24 and the request's question");
});

test("endSession can be aborted; the work stays owed and the next call completes it", async () => {
  const m = await am.Memory.open({ store: "memory", namespace: "abort", sessionId: "s1", llm: http({ timeoutMs: 60_000 }) });
  await converse(m, [["I prefer tea", "ok"]]);
  server.faults.push("hang");
  const ctl = new AbortController();
  const running = m.endSession({ signal: ctl.signal });
  setTimeout(() => ctl.abort(), 50);
  await assert.rejects(running, (e) => e.code === "ABORTED");
  assert.equal((await m.pendingWork()).length, 1);
  const report = await m.endSession();
  assert.ok(report.complete);
  assert.deepEqual((await m.memories()).map((e) => e.content), ["User prefers tea"]);
});

test("the token cap stops model calls and the rule judge takes over", async () => {
  const m = await am.Memory.open({ store: "memory", namespace: "cap", sessionId: "s1", llm: http({ maxSessionTokens: 10 }) });
  await converse(m, [["I prefer green tea", "ok"]]);
  assert.equal((await m.endSession()).judge, "llm"); // the first call may spend past the cap
  await converse(m, [["I live in Oslo", "ok"]]);
  const r = await m.endSession();
  assert.equal(r.judge, "rules");
  assert.match(r.errors[0], /LIMIT_EXCEEDED/);
});

test("automatic compression runs in the background; a failure loses nothing and is retried", async () => {
  const adapter = mapAdapter();
  const opts = { namespace: "comp", sessionId: "s1", store: adapter, maxTokens: 200, retainRecentRounds: 2 };
  let fail = true;
  const llm = { complete: async () => { if (fail) throw Object.assign(new Error("bad request"), { status: 400 }); return "summary of old turns"; }, maxRetries: 0 };
  const m = await am.Memory.open({ ...opts, llm });
  await converse(m, Array.from({ length: 10 }, (_, i) => [`question number ${i} about the project`, `answer number ${i} with some detail`]));
  await m.idle();
  assert.ok(m.pendingCompression().length > 0, "evicted messages wait, none dropped");
  assert.match(m.llmStats().lastError, /bad request/);
  fail = false;
  const report = await m.compress();
  assert.ok(report.messages >= m.messages().length);
  assert.equal(report.summary.content, "summary of old turns");
  assert.equal(m.pendingCompression().length, 0);
  assert.equal(m.messages().length, 4, "the retained rounds stay live");
  const { messages } = await m.buildContext({ query: "what next?" });
  assert.ok(messages.some((x) => x.content.includes("summary of old turns")));
  // Reopened: the summary and the retained rounds come back.
  // (With the question buildContext stored.)
  const again = await am.Memory.open({ ...opts });
  assert.equal(again.messages().length, 5);
  assert.equal((await again.sessionHistory()).length, 21);
});

for (const [lang, prefer, query, expect] of [
  ["English", "I prefer Rust for writing code.", "Which language do I prefer for writing code?", "User prefers Rust for writing code"],
  ["Chinese", "我喜欢用 Rust 写代码。", "我喜欢用什么语言写代码?", "用户喜欢用 Rust 写代码"],
]) {
  test(`60 turns in ${lang}: compression, session end, and a new Memory recalls the preference`, async () => {
    const adapter = mapAdapter();
    const base = { namespace: `e2e-${lang}`, store: adapter, maxTokens: 600, retainRecentRounds: 3 };
    const m = await am.Memory.open({ ...base, sessionId: "day1", llm: http() });
    const filler = lang === "English" ? (i) => [`Can you explain topic ${i} briefly?`, `Topic ${i} is about item ${i}.`] : (i) => [`请简单解释第${i}个主题。`, `第${i}个主题讲的是第${i}项内容。`];
    const turns = Array.from({ length: 30 }, (_, i) => filler(i));
    turns[7] = [prefer, lang === "English" ? "Noted." : "好的。"];
    await converse(m, turns);
    await m.idle();
    assert.ok(m.llmStats().byPurpose.compressChunk.calls > 0, "compression ran");
    const report = await m.endSession();
    assert.ok(report.complete, JSON.stringify(report));
    assert.equal(report.added, 1);
    // Compression keeps the summary current, so fewer than 20 messages are uncovered.
    assert.equal(report.summaryUpdated, false);
    assert.equal(report.llmCalls, 1);
    assert.equal((await m.sessionHistory()).length, 60);

    const next = await am.Memory.open({ ...base, sessionId: "day2" });
    await next.add({ role: "user", content: query });
    const { messages } = await next.buildContext({ query });
    assert.ok(messages[0].content.includes(expect), messages[0].content);
  });
}

test("bad llm options are typed errors", async () => {
  const bad = [5, {}, { endpoint: "http://127.0.0.1:1/v1/chat/completions" }, { complete: async () => "", timeoutMs: 0 }, { complete: async () => "", retries: 3 }];
  for (const llm of bad) {
    await assert.rejects(am.Memory.open({ store: "memory", namespace: "bad", sessionId: "s1", llm }), (e) => e.code === "INVALID_INPUT", JSON.stringify(llm));
  }
  const m = await am.Memory.open({ store: "memory", namespace: "nollm", sessionId: "s1" });
  await assert.rejects(m.compress(), (e) => e.code === "INVALID_INPUT");
  // Session end needs no model: the rules judge (extract.test.mjs).
  await m.add({ role: "user", content: "I keep bees on my roof in Lyon, three hives so far." });
  assert.equal((await m.endSession()).judge, "rules");
  assert.equal(m.llmStats(), null);
});
