// The package in real workerd (`wrangler dev` on 127.0.0.1, nothing
// deployed): examples/cloudflare installed from the packed tarball, a Worker
// with one Durable Object per user, against the local OpenAI-compatible
// server; and tests/workerd for the adapter's conformance and the packs.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { get_encoding } from "tiktoken";
import { installExample, root } from "../../scripts/example.mjs";
import { startLlmServer } from "../../scripts/llm-server.mjs";
import { startWorker } from "../../scripts/wrangler.mjs";

const call = async (url, path, body) => {
  const res = await fetch(`${url}${path}`, body ? { method: "POST", body: JSON.stringify(body) } : {});
  const json = await res.json();
  assert.equal(res.status, 200, JSON.stringify(json));
  return json;
};

test("examples/cloudflare from the tarball: memories per user, session end with the model, a restart", { timeout: 300_000 }, async () => {
  const app = installExample("cloudflare");
  const persist = mkdtempSync(join(tmpdir(), "workerd-"));
  const llm = await startLlmServer();
  let worker = await startWorker(app, persist, { LLM_ENDPOINT: llm.endpoint });
  try {
    await call(worker.url, "/alice/add", { content: "I live in Lisbon since last spring." });
    await call(worker.url, "/alice/add", { role: "assistant", content: "Lisbon is lovely in spring!" });
    await call(worker.url, "/alice/add", { content: "I prefer Rust for writing code." });
    await call(worker.url, "/bob/add", { content: "I live in Oslo." });
    const ended = await call(worker.url, "/alice/endSession", {});
    assert.equal(ended.judge, "llm");
    assert.equal(ended.added, 2, JSON.stringify(ended));
    assert.equal(llm.requests.length, 1);
    const bob = await call(worker.url, "/bob/search?q=Lisbon");
    assert.deepEqual(bob, [], "users never see each other's memories");
  } finally {
    await worker.stop();
  }
  worker = await startWorker(app, persist);
  try {
    const hits = await call(worker.url, "/alice/search?q=Where%20do%20I%20live%3F%20Lisbon");
    assert.ok(hits.some((h) => h.source === "fact" && /Lisbon/.test(h.text)), JSON.stringify(hits));
    const { messages, report } = await call(worker.url, "/alice/context", { system: "You are helpful.", query: "Which language should I use for a CLI tool?" });
    assert.equal(report.tokenizer, "o200k", "the pack loads from its Data module and counts exactly");
    assert.match(messages.map((m) => m.content).join("\n"), /Rust/, "the remembered preference reaches the request");
    assert.equal(messages.at(-1).content, "Which language should I use for a CLI tool?");
  } finally {
    await worker.stop();
    await llm.close();
  }
});

test("examples/cloudflare builds with no wrangler warning (the pack's Data rule as the README gives it)", { timeout: 120_000 }, () => {
  const app = installExample("cloudflare");
  const rule = /```toml\n\s*(\[\[rules\]\][^`]*)```/.exec(readFileSync(join(root, "README.md"), "utf8"));
  assert.ok(rule, "the README gives the rule");
  const dedent = (text) => text.split("\n").map((l) => l.trim()).filter(Boolean).join("\n");
  assert.ok(dedent(readFileSync(join(app, "wrangler.toml"), "utf8")).includes(dedent(rule[1])), "the example uses the README's rule");
  const run = spawnSync(join(root, "node_modules/.bin/wrangler"), ["deploy", "--dry-run", "--outdir", mkdtempSync(join(tmpdir(), "wrangler-"))],
    { cwd: app, env: { ...process.env, WRANGLER_SEND_METRICS: "false", CI: "true", NO_COLOR: "1" }, encoding: "utf8" });
  const out = run.stdout + run.stderr;
  assert.equal(run.status, 0, out);
  assert.match(out, /Total Upload/);
  assert.doesNotMatch(out, /WARNING|fallback/, out);
});

test("workerd: the Durable Object adapter passes conformance and holds an encrypted memory; packs by name are typed errors, as data exact", { timeout: 120_000 }, async () => {
  const worker = await startWorker(join(root, "tests/workerd"), mkdtempSync(join(tmpdir(), "workerd-")));
  try {
    assert.equal(await call(worker.url, "/conformance"), "ok");
    const sealed = await call(worker.url, "/encrypted");
    assert.deepEqual(sealed.memories, ["Lives in Porto"]);
    assert.deepEqual(sealed.history, ["I moved to Porto"]);
    assert.equal(sealed.noKey, "DECRYPTION");
    assert.ok(sealed.records > 3, JSON.stringify(sealed));
    assert.equal(sealed.plain, 0, "nothing readable in the Durable Object's storage");
    const enc = get_encoding("o200k_base");
    const exact = enc.encode("我喜欢用 Rust 写代码, tiktoken-exact.").length;
    enc.free();
    assert.deepEqual(await call(worker.url, "/tokenizer"), { byName: "TOKENIZER_PACK", id: "o200k", count: exact });
  } finally {
    await worker.stop();
  }
});
