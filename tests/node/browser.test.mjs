// The built package in real headless Chromium, driven from Node: pages in
// tests/browser/ import pkg/index.js over HTTP from a local server.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { get_encoding } from "tiktoken";
import { startServer } from "../../scripts/static-server.mjs";
import { launchChromium, launchChromiumIn, runPage } from "../../scripts/chromium.mjs";
import { execFileSync } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { mixedCorpus, EDGE_CASES } from "../../benches/corpus.mjs";

const root = fileURLToPath(new URL("../..", import.meta.url));
let server, base, browser;
const routes = new Map();

/** Makes `path` answer `value` as JSON. */
function serveJson(path, value) {
  routes.set(path, (_req, res) => {
    res.writeHead(200, { "content-type": "application/json" });
    res.end(JSON.stringify(value));
  });
}

before(async () => {
  ({ server, url: base } = await startServer(root, 0, routes));
  browser = await launchChromium();
});

after(async () => {
  await browser?.close();
  server?.close();
});

test("packs load over HTTP and count exactly in Chromium", async () => {
  const corpus = mixedCorpus(40_000, 11);
  const texts = [...EDGE_CASES];
  for (let i = 0; i < corpus.length; i += 800) texts.push(corpus.slice(i, i + 800));
  serveJson("/cases.json", { texts });
  const result = await runPage(browser, `${base}tests/browser/tokenizer.html`, "__result");
  assert.equal(result.error, undefined, result.error);
  assert.deepEqual(result.ids, ["cl100k", "o200k"]);
  assert.equal(result.badPack, "TOKENIZER_PACK");
  assert.equal(result.missing, "TOKENIZER_PACK");
  const cl = get_encoding("cl100k_base");
  const o2 = get_encoding("o200k_base");
  try {
    texts.forEach((t, i) => {
      assert.equal(result.counts[i].cl100k, cl.encode(t).length, `cl100k ${JSON.stringify(t.slice(0, 60))}`);
      assert.equal(result.counts[i].o200k, o2.encode(t).length, `o200k ${JSON.stringify(t.slice(0, 60))}`);
    });
  } finally {
    cl.free();
    o2.free();
  }
});

test("Memory persists to IndexedDB and builds contexts in Chromium", async () => {
  const r = await runPage(browser, `${base}tests/browser/memory.html`, "__result");
  assert.equal(r.error, undefined, r.error);
  assert.deepEqual(r.restored, ["我喜欢用 Rust 写代码", "好的，记住了。", "q1", "q2", "q3"]);
  assert.equal(r.sameTimestamps, true);
  assert.deepEqual(r.roles, ["system", "user", "assistant", "user", "user", "user", "user"]);
  assert.equal(r.report.tokenizer, "cl100k");
  assert.ok(r.report.total <= r.report.limit);
  assert.equal(r.badCode, "INVALID_INPUT");
  assert.equal(r.afterBad, 6, "the five, and the question buildContext stored; the bad call added none");
});

test("two pages remembering concurrently end with no duplicates and nothing lost; a reopened page sees it all", async () => {
  const ns = `tabs-${Date.now()}`;
  const context = browser.contexts()[0] ?? (await browser.newContext());
  const open = async (query) => {
    const page = await context.newPage();
    await page.goto(`${base}tests/browser/longterm.html?${query}`);
    await page.waitForFunction(() => window.__result !== undefined, null, { timeout: 60_000 });
    const r = await page.evaluate(() => window.__result);
    await page.close();
    return r;
  };
  const [a, b] = await Promise.all([open(`ns=${ns}&tag=A`), open(`ns=${ns}&tag=B`)]);
  assert.equal(a.error, undefined, a.error);
  assert.equal(b.error, undefined, b.error);
  const read = await open(`ns=${ns}&read=1`);
  assert.equal(read.error, undefined, read.error);
  const all = read.memories.sort();
  assert.equal(new Set(all).size, all.length, `duplicates: ${all}`);
  // 5 shared facts remembered by both pages, 5 of each page's own: 15, each once.
  assert.equal(all.length, 15, `${all}`);
  assert.ok(all.includes("Prefers Rust for systems code") && all.includes("Visited Kyoto in April 2023")
    && all.includes("Speaks Portuguese at home"));
  const outcomes = [...a.outcomes, ...b.outcomes];
  assert.equal(outcomes.filter((o) => o === "stored").length, 15);
  assert.equal(outcomes.filter((o) => o === "duplicate").length, 5);
});

/** A page of tests/browser/harness.html with a Memory on `ns` and `session`, ready to be driven. */
async function harness(ns, session) {
  const context = browser.contexts()[0] ?? (await browser.newContext());
  const page = await context.newPage();
  await page.goto(`${base}tests/browser/harness.html?ns=${ns}&session=${encodeURIComponent(session)}`);
  await page.waitForFunction(() => window.__ready !== undefined, null, { timeout: 60_000 });
  assert.equal(await page.evaluate(() => window.__ready), true);
  return page;
}

test("two real pages on one session keep every message; a sub-agent page writes beside its parent", async () => {
  const ns = `session-${Date.now()}`;
  const [a, b] = [await harness(ns, "chat"), await harness(ns, "chat")];
  const write = (page, tag) => page.evaluate(async (tag) => {
    for (let i = 0; i < 20; i++) await window.m.add({ content: `${tag} ${i}` });
  }, tag);
  await Promise.all([write(a, "a"), write(b, "b")]);
  const history = await a.evaluate(async () => (await window.m.sessionHistory()).map((e) => e.content));
  assert.equal(history.length, 40, `${history}`);
  for (const tag of ["a", "b"]) {
    assert.deepEqual(history.filter((c) => c.startsWith(tag)), Array.from({ length: 20 }, (_, i) => `${tag} ${i}`));
  }
  const seenByB = await b.evaluate(async () => (await window.m.buildContext({})).messages.map((m) => m.content));
  assert.deepEqual(seenByB, history, "each page's request holds the other's messages");

  const sub = await harness(ns, "agent:chat");
  await sub.evaluate(async () => {
    await window.m.add({ role: "user", content: "sub: look it up" });
    await window.m.add({ role: "assistant", content: "", toolCalls: [{ id: "t1", name: "f", arguments: "{}" }] });
    await window.m.add({ role: "tool", content: "raw tool output", toolCallId: "t1" });
    await window.m.add({ role: "assistant", content: "sub: found it" });
  });
  await a.evaluate(() => window.m.add({ role: "assistant", content: "parent: done" }));
  const after = await b.evaluate(async () => (await window.m.sessionHistory()).map((e) => e.content));
  assert.deepEqual(after.slice(40), ["sub: look it up", "sub: found it", "parent: done"]);
  for (const p of [a, b, sub]) await p.close();
});

test("a page sees another page's memories at its next read; deleting the namespace never blocks on an open page", async () => {
  const ns = `stale-${Date.now()}`;
  const [a, b] = [await harness(ns, "s1"), await harness(ns, "s2")];
  assert.deepEqual(await b.evaluate(async () => (await window.m.memories()).length), 0);
  await a.evaluate(() => window.m.remember({ content: "Lives in Lisbon" }));
  const seen = await b.evaluate(async () => ({
    memories: (await window.m.memories()).map((e) => e.content),
    exported: (await window.m.exportMemories()).entries.length,
    hits: (await window.m.search("Lisbon")).length,
  }));
  assert.deepEqual(seen, { memories: ["Lives in Lisbon"], exported: 1, hits: 1 });
  // Another page deletes the namespace while both pages hold it open: the
  // open connections close on versionchange, so the delete is not blocked,
  // and the pages keep working on the fresh database.
  const deleted = await b.evaluate(() => window.am.Memory.deleteNamespace(new URLSearchParams(location.search).get("ns"), "indexeddb").then(() => "ok", (e) => `${e.code}: ${e.message}`));
  assert.equal(deleted, "ok");
  const afterDelete = await a.evaluate(async () => {
    const r = await window.m.remember({ content: "Moved to Porto" });
    return { r, stats: await window.m.stats(), all: (await window.m.memories()).map((e) => e.content) };
  });
  assert.equal(afterDelete.r.outcome, "stored");
  assert.deepEqual(afterDelete.all, ["Moved to Porto"]);
  assert.deepEqual(await b.evaluate(async () => (await window.m.memories()).map((e) => e.content)), ["Moved to Porto"]);
  await a.close();
  await b.close();
});

test("an upgrade blocked by another tab's open connection is a BLOCKED error, not a hang", async () => {
  const ns = `blocked-${Date.now()}`;
  const page = await harness(`other-${ns}`, "s");
  const r = await page.evaluate(async (ns) => {
    // Another tab's code holds the namespace's database open at version 2
    // and ignores versionchange.
    const old = await new Promise((ok, fail) => {
      const req = indexedDB.open(`agent-memory/${ns}`, 2);
      req.onupgradeneeded = () => req.result.createObjectStore("records");
      req.onsuccess = () => ok(req.result);
      req.onerror = () => fail(req.error);
    });
    const blocked = await window.am.Memory.open({ namespace: ns, sessionId: "s", store: "indexeddb" })
      .then(() => "opened", (e) => e.code);
    old.close();
    const m = await window.am.Memory.open({ namespace: ns, sessionId: "s", store: "indexeddb" });
    await m.add({ content: "after the other tab let go" });
    return { blocked, history: (await m.sessionHistory()).map((e) => e.content) };
  }, ns);
  assert.deepEqual(r, { blocked: "BLOCKED", history: ["after the other tab let go"] });
  await page.close();
});

test("a model or adapter rejecting with undefined, null or a thenable is a typed error in Chromium, and the Memory goes on", async () => {
  const ns = `reject-${Date.now()}`;
  const page = await harness(`other-${ns}`, "s");
  const r = await page.evaluate(async (ns) => {
    const out = [];
    const ways = [() => Promise.reject(), () => Promise.reject(null), () => ({ then: (_ok, no) => no(undefined) }), () => { throw undefined; }];
    for (const fail of ways) {
      const m = await window.am.Memory.open({ namespace: ns, sessionId: "s", store: "indexeddb", llm: { complete: fail, maxRetries: 0 }, autoCompress: false, maxTokens: 100 });
      for (let i = 0; i < 12; i++) await m.add({ content: `message number ${i} with a few words` });
      const settled = await Promise.race([m.compress().then(() => "resolved", (e) => e.code), new Promise((ok) => setTimeout(() => ok("hung"), 10_000))]);
      await m.add({ content: "after" });
      const store = { get: fail, put: fail, delete: fail, list: fail };
      const opened = await window.am.Memory.open({ namespace: ns, sessionId: "s", store }).then(() => "opened", (e) => e.code);
      out.push([settled, opened]);
      m.free();
    }
    return out;
  }, ns);
  for (const pair of r) assert.deepEqual(pair, ["LLM", "STORAGE"]);
  await page.close();
});

test("export, purge and import on IndexedDB give back the same state", async () => {
  const r = await runPage(browser, `${base}tests/browser/export.html?ns=export-${Date.now()}`, "__result");
  assert.equal(r.error, undefined, r.error);
  assert.equal(r.before.memories.length, 3);
  assert.equal(r.before.history, 4, "the superseded version is exported too");
  assert.equal(r.afterPurge, 0);
  assert.equal(r.indexRowsAfterPurge, 0);
  assert.deepEqual(r.after, r.before);
  assert.equal(r.firstImport.added, 4, JSON.stringify(r.firstImport));
  assert.deepEqual([r.secondImport.added, r.secondImport.updated], [0, 0], JSON.stringify(r.secondImport));
});

test("vectors are Float32Array rows in IndexedDB, loaded by a reopened page", async () => {
  const r = await runPage(browser, `${base}tests/browser/embed.html?ns=embed-${Date.now()}`, "__result");
  assert.equal(r.error, undefined, r.error);
  assert.equal(r.rows, 2);
  assert.deepEqual(r.rowShape, { model: "topics", typed: true, length: 3 });
  assert.equal(r.top, "Adopted a puppy named Rex");
  assert.deepEqual(r.embedded, ["my dog"], "stored vectors are loaded, not recomputed");
});

test("the LLM pipeline runs in Chromium with the page's fetch against a local server", async () => {
  const { startLlmServer } = await import("../../scripts/llm-server.mjs");
  const llm = await startLlmServer();
  try {
    llm.faults.push(undefined, "500");
    const url = `${base}tests/browser/llm.html?ns=llm-${Date.now()}&endpoint=${encodeURIComponent(llm.endpoint)}`;
    const r = await runPage(browser, url, "__result");
    assert.equal(r.error, undefined, r.error);
    assert.equal(r.report.judge, "llm");
    assert.equal(r.report.added, 1);
    assert.equal(r.calls, 1);
    assert.equal(r.fallback.judge, "rules");
    assert.deepEqual(r.memories, ["User lives in Lisbon", "User prefers Rust for writing code"]);
    assert.match(r.block, /<memory>[\s\S]*User prefers Rust for writing code/);
    assert.equal(llm.requests.length, 2);
  } finally {
    await llm.close();
  }
});

for (const from of [1, 2, 3]) {
  test(`a version-${from} IndexedDB database migrates to version 4, and its memories into the log`, async () => {
    const r = await runPage(browser, `${base}tests/browser/schema.html?ns=schema${from}-${Date.now()}&from=${from}`, "__result");
    assert.equal(r.error, undefined, r.error);
    assert.deepEqual(r.memories, ["Answers with code first", "Lives in Lisbon", "Prefers Rust for systems code"]);
    assert.deepEqual(r.timestamps, [1_600_000_000_000, 1_700_000_000_000, 1_700_000_000_000], "timestamps kept");
    assert.deepEqual(r.messages, ["hello"]);
    assert.equal(r.version, 4);
    assert.deepEqual(r.stores, ["records"]);
    assert.deepEqual(r.indexes, ["kind", "scope", "time"]);
    // The earlier release's memory records were converted, then deleted.
    assert.equal(r.memoryKeys, 0);
    assert.ok(r.logRecords >= 2, JSON.stringify(r));
    assert.equal(r.otherBare, true);
  });
}

test("an encrypted memory on IndexedDB: only sealed values in the database, no index rows; the key reopens it", async () => {
  const r = await runPage(browser, `${base}tests/browser/encryption.html?ns=enc-${Date.now()}`, "__result");
  assert.equal(r.error, undefined, r.error);
  assert.ok(r.records >= 5, JSON.stringify(r));
  assert.equal(r.allSealed, true);
  assert.equal(r.readable, 0);
  assert.equal(r.indexRows, 0, "scope, kind and time rows would leak: none are written");
  assert.deepEqual(r.memories, ["Allergic to penicillin", "Has a cat named Miso", "Lives in Lisbon"]);
  assert.deepEqual(r.search, ["Allergic to penicillin"]);
  assert.equal(r.history, 1);
  assert.equal(r.noKey, "DECRYPTION");
});

test("forget on IndexedDB: the raw database holds nothing of the memory, its versions, its message or a summary quoting it", async () => {
  const r = await runPage(browser, `${base}tests/browser/deletion.html?ns=del-${Date.now()}`, "__result");
  assert.equal(r.error, undefined, r.error);
  assert.ok(r.before >= 3, `planted in ${r.before} records`);
  assert.equal(r.forgot, true);
  assert.deepEqual(r.after, []);
  assert.ok(r.chess > 0, "other memories stay");
  assert.equal(r.databaseLeft, false, "deleteNamespace deletes the database");
});

test("a namespace of 300 memories on IndexedDB keeps them in one write's few records: another instance's write is seen, a forget leaves no raw value with the text, a record of another shape is damaged", async () => {
  const r = await runPage(browser, `${base}tests/browser/log.html?ns=log-${Date.now()}`, "__result");
  assert.equal(r.error, undefined, r.error);
  assert.ok(r.records > 0 && r.records < 10 && r.memoryRecords === 0, JSON.stringify(r));
  assert.equal(r.count, 301);
  assert.ok(r.zebra, "the other instance's memory is found");
  assert.equal(r.forgot, true);
  assert.equal(r.leftAfterForget, 0);
  assert.equal(r.afterForget, 300);
  assert.deepEqual(r.damaged, ["lt/entry/broken", "lt/log/00000000000000ff/0000000001-000"]);
  assert.equal(r.afterDamage, 300);
});

test("isolation on IndexedDB: namespaces sharing a name prefix, and agents in one namespace, never cross", async () => {
  const r = await runPage(browser, `${base}tests/browser/isolation.html?ns=iso-${Date.now()}`, "__result");
  assert.equal(r.error, undefined, r.error);
  assert.equal(r.aFindsB, 0);
  assert.equal(r.bFindsA, 0);
  assert.deepEqual(r.aExport, ["Secret word amberword"]);
  assert.equal(r.aForgetsB, false);
  assert.deepEqual(r.bAfter, ["Secret word cobaltword"], "deleting one namespace's database leaves the other's");
  assert.deepEqual(r.travelSees, []);
  assert.equal(r.travelFinds, 0);
  assert.equal(r.travelWrites, "INVALID_INPUT");
});

test("a full disk is a typed error (QUOTA_EXCEEDED, or STORAGE once Chromium closes the database); the instance holds what was acknowledged", async (t) => {
  // The profile lives on a 24 MB tmpfs, so the store runs out of space
  // after some hundred memories of ~30 KB. (Chromium may discard a LevelDB
  // store that a full disk damaged when it is next opened; that is the
  // browser's recovery, so the check is on the live instance.)
  const dir = mkdtempSync(join(tmpdir(), "am-quota-"));
  try {
    execFileSync("mount", ["-t", "tmpfs", "-o", "size=24m", "tmpfs", dir], { stdio: "pipe" });
  } catch (err) {
    // Only a machine that forbids mounting a small disk skips, and says so.
    t.skip(`cannot mount a small tmpfs here: ${String(err.stderr ?? err.message).trim()}`);
    return;
  }
  const context = await launchChromiumIn(dir);
  try {
    const page = await context.newPage();
    await page.goto(`${base}tests/browser/quota.html?ns=quota`);
    await page.waitForFunction(() => window.__result !== undefined, null, { timeout: 240_000 });
    const w = await page.evaluate(() => window.__result);
    assert.equal(w.error, undefined, w.error);
    // The write that finds the disk full is refused with QUOTA_EXCEEDED,
    // unless Chromium's own background write hit the full disk first and
    // it closed the database: then the refusal says so, as STORAGE.
    const closed = w.code === "STORAGE" && /browser closed the database/.test(w.message);
    assert.ok(w.code === "QUOTA_EXCEEDED" || closed, `${w.code}: ${w.message} after ${w.acknowledged.length} writes`);
    assert.ok(w.acknowledged.length > 5, `${w.acknowledged.length} written before the disk was full`);
    assert.deepEqual(w.afterError.sort((a, b) => a - b), w.acknowledged);
    t.diagnostic(JSON.stringify({ acknowledged: w.acknowledged.length, small: w.small.length, smallCodes: [...new Set(w.small)], end: w.endSession, import: w.importResult, reads: w.reads, reopened: w.reopened.ok ? w.reopened.value.length : w.reopened }));
    // After the disk filled: every outcome a success or a typed storage error.
    const typed = (code) => code === "ok" || code === "QUOTA_EXCEEDED" || code === "STORAGE";
    for (const code of [...w.small, w.endSession.code ?? "ok", w.importResult.code ?? "ok", ...w.reads]) assert.ok(typed(code), code);
  } finally {
    await context.close();
    execFileSync("umount", [dir]);
  }
});
