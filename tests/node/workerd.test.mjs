// The package in real workerd (`wrangler dev` on 127.0.0.1, nothing
// deployed): a Worker with one Durable Object per user keeps each user's
// memory in Durable Object storage through the shipped adapter.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("../..", import.meta.url));

const freePort = () =>
  new Promise((ok) => {
    const s = createServer().listen(0, "127.0.0.1", () => {
      const { port } = s.address();
      s.close(() => ok(port));
    });
  });

/** Starts `wrangler dev`; resolves once it serves, to { url, stop }. */
async function startWorker(persistTo) {
  const port = await freePort();
  const child = spawn(join(root, "node_modules/.bin/wrangler"), [
    "dev", "--config", "tests/workerd/wrangler.toml", "--ip", "127.0.0.1", "--port", String(port),
    "--persist-to", persistTo, "--log-level", "warn",
  ], { cwd: root, env: { ...process.env, WRANGLER_SEND_METRICS: "false", CI: "true" }, detached: true, stdio: "ignore" });
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 300; i++) {
    try {
      await fetch(`${url}/probe/memories`);
      break;
    } catch {
      await new Promise((r) => setTimeout(r, 200));
    }
  }
  const stop = () =>
    new Promise((ok) => {
      child.once("exit", ok);
      process.kill(-child.pid, "SIGTERM");
    });
  return { url, stop };
}

const call = async (url, path, body) => {
  const res = await fetch(`${url}${path}`, body ? { method: "POST", body: JSON.stringify(body) } : {});
  const json = await res.json();
  assert.equal(res.status, 200, JSON.stringify(json));
  return json;
};

test("workerd: Durable Object storage passes conformance, keeps users apart, survives a restart", { timeout: 120_000 }, async () => {
  const persist = mkdtempSync(join(tmpdir(), "workerd-"));
  let worker = await startWorker(persist);
  try {
    assert.equal(await call(worker.url, "/alice/conformance"), "ok");
    await call(worker.url, "/alice/add", { content: "I moved to Lisbon last spring" });
    assert.equal((await call(worker.url, "/alice/remember", { content: "Lives in Lisbon" })).outcome, "stored");
    await call(worker.url, "/bob/remember", { content: "Lives in Oslo" });
    assert.deepEqual(await call(worker.url, "/bob/memories"), ["Lives in Oslo"]);
    const { get_encoding } = await import("tiktoken");
    const enc = get_encoding("o200k_base");
    const exact = enc.encode("我喜欢用 Rust 写代码, tiktoken-exact.").length;
    enc.free();
    assert.deepEqual(await call(worker.url, "/tokenizer/count"), { byName: "TOKENIZER_PACK", id: "o200k", count: exact });
  } finally {
    await worker.stop();
  }
  worker = await startWorker(persist);
  try {
    assert.deepEqual(await call(worker.url, "/alice/memories"), ["Lives in Lisbon"]);
    assert.deepEqual(await call(worker.url, "/alice/history"), ["I moved to Lisbon last spring"]);
  } finally {
    await worker.stop();
  }
});
