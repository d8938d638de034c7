// The package in the real Deno binary (npm `deno`), on Deno KV through the
// shipped adapter: it passes the store conformance suite, and what one
// process stores another process reads back, each user apart.
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("../..", import.meta.url));
const deno = join(root, "node_modules/.bin/deno");

function run(kvPath, phase) {
  const out = execFileSync(deno, ["run", "--quiet", "--allow-read", "--allow-write", "--unstable-kv", "tests/deno/kv.mjs", kvPath, phase], {
    cwd: root,
    env: { ...process.env, DENO_NO_UPDATE_CHECK: "1", DENO_DIR: join(tmpdir(), "agent-memory-deno") },
    encoding: "utf8",
  });
  return JSON.parse(out.trim().split("\n").pop());
}

test("Deno KV: conformance, and memories (encrypted ones too) survive into a second Deno process", () => {
  const kvPath = join(mkdtempSync(join(tmpdir(), "kv-")), "memory.db");
  assert.deepEqual(run(kvPath, "write"), { written: true, big: 40 * 32 * 1024, valueLimit: ["stored", "refused"] });
  const read = run(kvPath, "read");
  assert.equal(read.memories, 1201, "1,200 in one batch (past one KV commit) plus one");
  assert.deepEqual(read.lisbon, ["Lives in Lisbon"]);
  assert.deepEqual(read.history, ["I moved to Lisbon last spring"]);
  assert.deepEqual(read.bob, ["Lives in Oslo"], "users never see each other's memories");
  assert.equal(read.dana, 600, "records of text beyond Latin-1 fit KV's values");
  // An encrypted namespace on KV, with WebCrypto in Deno.
  assert.deepEqual(read.carol, ["Lives in Porto"]);
  assert.deepEqual(read.carolHistory, ["I moved to Porto"]);
  assert.equal(read.carolNoKey, "DECRYPTION");
  assert.equal(read.carolPlainRecords, 0, "nothing of the encrypted namespace is readable in KV");
});

test("four Deno processes on one KV file at once: nothing acknowledged lost or refused, one shared fact stored once, one current state", async () => {
  const { execFile } = await import("node:child_process");
  const { promisify } = await import("node:util");
  const exec = promisify(execFile);
  const env = { ...process.env, DENO_NO_UPDATE_CHECK: "1", DENO_DIR: join(tmpdir(), "agent-memory-deno") };
  const writers = (...a) => exec(deno, ["run", "--quiet", "--allow-read", "--allow-write", "--unstable-kv", "tests/deno/writers.mjs", ...a], { cwd: root, env })
    .then((out) => JSON.parse(out.stdout.trim().split("\n").pop()));
  // Before long-term memory was a log of operations, these rounds stored
  // the shared fact two or three times, refused writes, and left two
  // current versions of the shared state.
  for (let round = 0; round < 3; round++) {
    const kvPath = join(mkdtempSync(join(tmpdir(), "kv-writers-")), "memory.db");
    await writers(kvPath, "count");
    const start = String(Date.now() + 2500);
    const outs = await Promise.all([0, 1, 2, 3].map((w) => writers(kvPath, "write", String(w), start)));
    const { current, messages } = await writers(kvPath, "count");
    assert.equal(messages, 20, "every message kept");
    for (const fact of outs.flatMap((o) => o.acknowledged)) assert.ok(current.includes(fact), `acknowledged, then lost: ${fact}`);
    assert.equal(current.filter((c) => c.includes("Biscuit")).length, 1, `round ${round}: ${current}`);
    assert.equal(current.filter((c) => / kids$/.test(c)).length, 1, `round ${round}: one current state: ${current}`);
    assert.deepEqual(outs.flatMap((o) => o.refused), [], "no write refused");
  }
});
