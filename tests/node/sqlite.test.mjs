// The SQLite adapter (agent-memory/adapters/sqlite) and the Node default
// store it gives: conformance, atomic check-and-write across processes, four
// processes writing memories at once, a crash mid-write, and memories that
// survive a restart when `Memory.open` is given no store.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import * as am from "../../pkg/node.js";
import { assertExactlyOnce, node, nodeEntry, writerChild } from "./store-writers.mjs";
import { sqliteAdapter } from "../../pkg/adapters/sqlite.js";

const pkg = new URL("../../pkg/", import.meta.url);
const sqliteEntry = new URL("adapters/sqlite.js", pkg).href;

/** A temporary directory, removed after `f` however it ends. */
async function inTempDir(f) {
  const dir = mkdtempSync(join(tmpdir(), "am-sqlite-"));
  try {
    return await f(dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

test("the SQLite adapter passes the store conformance suite and keeps what it wrote across instances", async () => {
  await inTempDir(async (dir) => {
    const file = join(dir, "conformance.db");
    await am.checkStorageAdapter(sqliteAdapter(file), "conformance");
    const a = sqliteAdapter(file);
    assert.deepEqual(await a.list(""), []);
    await a.putMany({ "n/b": "2", "n/a": "1\u0000one", "n/é": "3", "n/😀": "4", "n0": "other", "n/\u{10FFFF}x": "5" });
    // Bytewise (UTF-8) order; a NUL inside a value is kept.
    const b = sqliteAdapter(file);
    assert.deepEqual((await b.list("n/")).map(([k]) => k), ["n/a", "n/b", "n/é", "n/😀", "n/\u{10FFFF}x"]);
    assert.equal(await b.get("n/a"), "1\u0000one");
    assert.equal(await b.putManyIf("n/gen", undefined, { "n/gen": "1" }), true);
    assert.equal(await b.putManyIf("n/gen", undefined, { "n/gen": "1" }), false);
    assert.equal(await b.putManyIf("n/gen", "1", { "n/gen": "2", "n/c": "x" }), true);
    assert.equal(await a.get("n/gen"), "2");
    await b.delete("n/gen");
    assert.equal(await a.get("n/gen"), undefined);
    // Nothing but the database is left beside it once a call is done (no lock).
    assert.deepEqual(readdirSync(dir).sort(), ["conformance.db"]);
  });
});

test("bad arguments are typed errors", () => {
  for (const bad of [42, "", ":memory:", "a\0b"]) {
    assert.throws(() => sqliteAdapter(bad), (e) => e.name === "AgentMemoryError" && e.code === "INVALID_INPUT", String(bad));
  }
  assert.throws(() => sqliteAdapter("x.db", { busyTimeoutMs: -1 }), (e) => e.code === "INVALID_INPUT");
});

/** A child that bumps a shared counter `rounds` times with putManyIf, reading it first each time. */
const counterChild = (file, id, rounds, at) => `
  import { sqliteAdapter } from ${JSON.stringify(sqliteEntry)};
  const a = sqliteAdapter(${JSON.stringify(file)});
  await new Promise((ok) => setTimeout(ok, Math.max(0, ${at} - Date.now())));
  let lost = 0, won = 0;
  for (let i = 0; i < ${rounds}; i++) {
    for (;;) {
      const n = await a.get("counter");
      const next = String((n === undefined ? 0 : Number(n)) + 1);
      await new Promise((ok) => setTimeout(ok, 1)); // work between the read and the write, as the library's own
      if (await a.putManyIf("counter", n, { counter: next, ["bump/" + next]: "${id}" })) break;
      lost++;
    }
    // Of writers racing for one absent key, exactly one wins.
    if (await a.putManyIf("slot/" + i, undefined, { ["slot/" + i]: "${id}" })) won++;
  }
  console.log(JSON.stringify({ lost, won }));
`;

test("putManyIf is atomic across four processes on one file", { timeout: 120_000 }, async () => {
  await inTempDir(async (dir) => {
    const file = join(dir, "shared.db");
    const rounds = 40;
    const at = Date.now() + 1000;
    const results = await Promise.all([0, 1, 2, 3].map((id) => node(counterChild(file, id, rounds, at))));
    const a = sqliteAdapter(file);
    // Every bump was counted once: no two writers passed one check.
    assert.equal(await a.get("counter"), String(4 * rounds));
    assert.equal((await a.list("bump/")).length, 4 * rounds);
    assert.equal(results.reduce((s, r) => s + r.won, 0), rounds, JSON.stringify(results));
    assert.equal((await a.list("slot/")).length, rounds);
    // The writers did meet: some checks failed and were tried again.
    assert.ok(results.some((r) => r.lost > 0), JSON.stringify(results));
  });
});

test("four processes writing memories at once on one SQLite file lose nothing and duplicate nothing", { timeout: 180_000 }, async () => {
  await inTempDir(async (dir) => {
    const file = join(dir, "memories.db");
    const n = 25;
    const at = Date.now() + 1500;
    const results = await Promise.all([0, 1, 2, 3].map((id) =>
      node(writerChild({ imports: `import { sqliteAdapter } from ${JSON.stringify(sqliteEntry)};`, storeCode: `sqliteAdapter(${JSON.stringify(file)})`, id, n, at }))));
    assert.deepEqual(results.flatMap((r) => r.errors), []);
    const memory = await am.Memory.open({ namespace: "shared", sessionId: "chat", store: sqliteAdapter(file) });
    const memories = (await memory.memories()).map((e) => e.content);
    const history = (await memory.sessionHistory()).map((e) => e.content);
    const acked = assertExactlyOnce(results, memories, history);
    assert.equal(acked.added.length, 4 * n);
    assert.equal(acked.remembered.length, 4 * n);
    memory.free();
  });
});

test("a process killed in the middle of writes leaves a file the next one opens, with every acknowledged write", { timeout: 60_000 }, async () => {
  await inTempDir(async (dir) => {
    const file = join(dir, "killed.db");
    // Writes as fast as it can and reports each acknowledged key; killed with SIGKILL.
    const code = `
      import { sqliteAdapter } from ${JSON.stringify(sqliteEntry)};
      const a = sqliteAdapter(${JSON.stringify(file)});
      for (let i = 0; ; i++) {
        await a.putMany({ ["k/" + String(i).padStart(6, "0")]: "v".repeat(5000), last: String(i) });
        process.stdout.write(i + "\\n");
      }
    `;
    for (let trial = 0; trial < 5; trial++) {
      const child = spawn(process.execPath, ["--input-type=module", "-e", code], { stdio: ["ignore", "pipe", "inherit"] });
      let out = "";
      child.stdout.on("data", (d) => (out += d));
      await new Promise((ok) => setTimeout(ok, 300 + 97 * trial));
      child.kill("SIGKILL");
      await new Promise((ok) => child.on("exit", ok));
      const acked = out.split("\n").filter(Boolean).map(Number);
      const a = sqliteAdapter(file, { busyTimeoutMs: 5000 });
      const keys = new Set((await a.list("k/")).map(([k]) => k));
      for (const i of acked) assert.ok(keys.has("k/" + String(i).padStart(6, "0")), `trial ${trial}: acknowledged write ${i} lost`);
      await a.put("after", String(trial)); // writable again: the dead process's lock was taken over
      assert.equal(await a.get("after"), String(trial));
    }
  });
});

test("a Node app's memories survive a restart with the default store (agent-memory.db in the working directory)", { timeout: 60_000 }, async () => {
  await inTempDir(async (dir) => {
    const write = `
      import { Memory } from ${JSON.stringify(nodeEntry)};
      const memory = await Memory.open({ namespace: "user-42", sessionId: "chat-7" });
      await memory.add({ role: "user", content: "I moved to Lyon last spring." });
      await memory.remember({ content: "Lives in Lyon" });
      await memory.idle();
      console.log(JSON.stringify({ ok: true }));
    `;
    const read = `
      import { Memory } from ${JSON.stringify(nodeEntry)};
      const memory = await Memory.open({ namespace: "user-42", sessionId: "chat-7" });
      const memories = (await memory.memories()).map((e) => e.content);
      const history = (await memory.sessionHistory()).map((e) => e.content);
      console.log(JSON.stringify({ memories, history }));
    `;
    await node(write, { cwd: dir });
    assert.ok(existsSync(join(dir, "agent-memory.db")), "the default file is agent-memory.db in the working directory");
    const after = await node(read, { cwd: dir });
    assert.ok(after.memories.includes("Lives in Lyon"), JSON.stringify(after));
    assert.deepEqual(after.history, ["I moved to Lyon last spring."]);
    // The default file is sqliteAdapter()'s: deleting the namespace there empties it.
    await node(`
      import { Memory } from ${JSON.stringify(nodeEntry)};
      import { sqliteAdapter } from ${JSON.stringify(sqliteEntry)};
      await Memory.deleteNamespace("user-42", sqliteAdapter());
      console.log("{}");
    `, { cwd: dir });
    assert.deepEqual((await node(read, { cwd: dir })).memories, []);
  });
});

test('store: "memory" keeps nothing and writes no file', { timeout: 60_000 }, async () => {
  await inTempDir(async (dir) => {
    const run = (content) => node(`
      import { Memory } from ${JSON.stringify(nodeEntry)};
      const memory = await Memory.open({ namespace: "u", sessionId: "s", store: "memory" });
      ${content ? `await memory.remember({ content: ${JSON.stringify(content)} });` : ""}
      console.log(JSON.stringify((await memory.memories()).map((e) => e.content)));
    `, { cwd: dir });
    assert.deepEqual(await run("Lives in Lyon"), ["Lives in Lyon"]);
    assert.deepEqual(await run(null), []);
    assert.deepEqual(readdirSync(dir), []);
  });
});

test("without node-sqlite3-wasm installed, the default store is a typed error that says what to do", { timeout: 60_000 }, async () => {
  await inTempDir(async (dir) => {
    // The package alone, where no node_modules holds node-sqlite3-wasm.
    const copy = join(dir, "app", "node_modules", "agent-memory");
    mkdirSync(copy, { recursive: true });
    cpSync(fileURLToPath(pkg), copy, { recursive: true, filter: (src) => !src.includes(`${join("pkg", "packs")}`) });
    const out = await node(`
      import { Memory } from "agent-memory";
      const e = await Memory.open({ namespace: "u", sessionId: "s" }).then(() => null, (e) => e);
      const m = await Memory.open({ namespace: "u", sessionId: "s", store: "memory" });
      console.log(JSON.stringify({ name: e?.name, code: e?.code, message: e?.message, memoryWorks: !!(await m.add({ content: "hi" })) }));
    `, { cwd: join(dir, "app") });
    assert.equal(out.name, "AgentMemoryError");
    assert.equal(out.code, "STORAGE");
    assert.match(out.message, /npm install node-sqlite3-wasm/);
    assert.match(out.message, /store: "memory"/);
    assert.equal(out.memoryWorks, true);
  });
});
