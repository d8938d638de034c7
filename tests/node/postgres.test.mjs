// The PostgreSQL adapter (agent-memory/adapters/postgres) on a throwaway
// cluster this file starts (PostgreSQL's own binaries, as the `postgres` user
// when run as root; stopped and removed at the end, however the tests end):
// conformance, key order, check-and-write races between processes, and four
// processes writing memories at once with nothing lost or duplicated.
// Skipped only where no PostgreSQL server binaries are installed.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { chownSync, cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import pg from "pg";
import * as am from "../../pkg/node.js";
import { assertExactlyOnce, node, writerChild } from "./store-writers.mjs";
import { postgresAdapter } from "../../pkg/adapters/postgres.js";

const pkg = new URL("../../pkg/", import.meta.url);
const postgresEntry = new URL("adapters/postgres.js", pkg).href;

/** The folder of initdb and pg_ctl: Debian's /usr/lib/postgresql/<n>/bin (newest), else `pg_config --bindir`; or null. */
function pgBin() {
  const debian = "/usr/lib/postgresql";
  if (existsSync(debian)) {
    const versions = readdirSync(debian).filter((v) => existsSync(join(debian, v, "bin", "initdb"))).sort((a, b) => Number(b) - Number(a));
    if (versions.length) return join(debian, versions[0], "bin");
  }
  try {
    const dir = execFileSync("pg_config", ["--bindir"], { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] }).trim();
    if (existsSync(join(dir, "initdb")) && existsSync(join(dir, "pg_ctl"))) return dir;
  } catch {}
  return null;
}

const BIN = pgBin();
const SKIP = BIN ? null : "no PostgreSQL server binaries (initdb, pg_ctl) on this machine";

const freePort = () =>
  new Promise((ok, fail) => {
    const s = createServer();
    s.once("error", fail);
    s.listen(0, "127.0.0.1", () => {
      const { port } = s.address();
      s.close(() => ok(port));
    });
  });

/** Runs a PostgreSQL tool; as the `postgres` user when this process is root (PostgreSQL refuses root). */
function pgTool(tool, args) {
  const [cmd, argv] = process.getuid?.() === 0 ? ["runuser", ["-u", "postgres", "--", join(BIN, tool), ...args]] : [join(BIN, tool), args];
  return execFileSync(cmd, argv, { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"], timeout: 60_000 });
}

let cluster = null;

/** A new cluster on 127.0.0.1 in a temporary folder (data, socket, log), started. */
async function startCluster() {
  const dir = mkdtempSync(join(tmpdir(), "am-pg-"));
  cluster = { dir, started: false };
  if (process.getuid?.() === 0) {
    const uid = Number(execFileSync("id", ["-u", "postgres"], { encoding: "utf8" }));
    const gid = Number(execFileSync("id", ["-g", "postgres"], { encoding: "utf8" }));
    chownSync(dir, uid, gid);
  }
  const data = join(dir, "data");
  pgTool("initdb", ["-D", data, "-A", "trust", "-U", "postgres", "-E", "UTF8", "--no-locale", "-N"]);
  const port = await freePort();
  const opts = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=60`;
  try {
    pgTool("pg_ctl", ["-D", data, "-o", opts, "-l", join(dir, "log"), "-w", "-t", "60", "start"]);
  } catch (e) {
    let log = "";
    try {
      log = execFileSync("cat", [join(dir, "log")], { encoding: "utf8" });
    } catch {}
    throw new Error(`PostgreSQL did not start: ${e.stderr || e.message}\n${log}`);
  }
  cluster.started = true;
  cluster.config = { host: "127.0.0.1", port, user: "postgres", database: "postgres" };
  return cluster;
}

function stopCluster() {
  if (!cluster) return;
  try {
    if (cluster.started) pgTool("pg_ctl", ["-D", join(cluster.dir, "data"), "-m", "immediate", "-w", "stop"]);
  } finally {
    rmSync(cluster.dir, { recursive: true, force: true });
    cluster = null;
  }
}

before(async () => {
  if (!SKIP) await startCluster();
});
after(() => stopCluster());

test("the PostgreSQL adapter passes the store conformance suite, on a pool of yours or a config", async (t) => {
  if (SKIP) return t.skip(SKIP);
  const pool = new pg.Pool(cluster.config);
  try {
    await am.checkStorageAdapter(postgresAdapter(pool), "conformance");
    const owned = postgresAdapter(cluster.config, { table: "public.other_table" });
    await am.checkStorageAdapter(owned, "conformance");
    await owned.close();
    // The pool passed in is still the caller's.
    assert.equal((await pool.query("SELECT 1 AS one")).rows[0].one, 1);
  } finally {
    await pool.end();
  }
});

test("list is a range in bytewise order, whatever the database's collation", async (t) => {
  if (SKIP) return t.skip(SKIP);
  const a = postgresAdapter(cluster.config, { table: "ordered" });
  try {
    const keys = ["n/b", "n/a", "n/B", "n/é", "n/😀", "n/\u{10FFFF}x", "n0", "n.", "n/\u{FFFF}"];
    await a.putMany(Object.fromEntries(keys.map((k) => [k, k])));
    const bytewise = (x, y) => Buffer.compare(Buffer.from(x), Buffer.from(y));
    assert.deepEqual((await a.list("n/")).map(([k]) => k), keys.filter((k) => k.startsWith("n/")).sort(bytewise));
    assert.deepEqual((await a.list("n/\u{10FFFF}")).map(([k]) => k), ["n/\u{10FFFF}x"]);
    assert.deepEqual((await a.list("")).map(([k]) => k), [...keys].sort(bytewise));
    // A check key absent from the writes stays absent.
    assert.equal(await a.putManyIf("n/none", undefined, { "n/c": "1" }), true);
    assert.equal(await a.get("n/none"), undefined);
    assert.equal(await a.putManyIf("n/none", "x", { "n/c": "2" }), false);
    assert.equal(await a.get("n/c"), "1");
  } finally {
    await a.close();
  }
});

test("bad arguments and a missing pg are typed errors", async (t) => {
  assert.throws(() => postgresAdapter(42), (e) => e.name === "AgentMemoryError" && e.code === "INVALID_INPUT");
  assert.throws(() => postgresAdapter({}, { table: "x; DROP TABLE y" }), (e) => e.code === "INVALID_INPUT");
  assert.throws(() => postgresAdapter(new pg.Client()), (e) => e.code === "INVALID_INPUT" && /pg\.Client/.test(e.message));
  const dir = mkdtempSync(join(tmpdir(), "am-nopg-"));
  try {
    const copy = join(dir, "app", "node_modules", "agent-memory");
    mkdirSync(copy, { recursive: true });
    cpSync(fileURLToPath(pkg), copy, { recursive: true, filter: (src) => !src.includes(join("pkg", "packs")) });
    const out = await node(`
      import { postgresAdapter } from "agent-memory/adapters/postgres";
      let e = null;
      try { postgresAdapter("postgres://localhost/x"); } catch (err) { e = err; }
      console.log(JSON.stringify({ name: e?.name, code: e?.code, message: e?.message }));
    `, { cwd: join(dir, "app") });
    assert.equal(out.name, "AgentMemoryError");
    assert.equal(out.code, "STORAGE");
    assert.match(out.message, /npm install pg/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

/** A child that bumps a shared counter with putManyIf (read, then check-and-write) and races for absent slots. */
const counterChild = (config, id, rounds, at) => `
  import { postgresAdapter } from ${JSON.stringify(postgresEntry)};
  const a = postgresAdapter(${JSON.stringify(config)}, { table: "race" });
  await a.get("warm-up"); // the table, made by whichever process comes first
  await new Promise((ok) => setTimeout(ok, Math.max(0, ${at} - Date.now())));
  let lost = 0, won = 0;
  for (let i = 0; i < ${rounds}; i++) {
    for (;;) {
      const n = await a.get("counter");
      const next = String((n === undefined ? 0 : Number(n)) + 1);
      if (await a.putManyIf("counter", n, { counter: next, ["bump/" + next]: "${id}" })) break;
      lost++;
    }
    if (await a.putManyIf("slot/" + i, undefined, { ["slot/" + i]: "${id}", ["won/" + i + "/${id}"]: "1" })) won++;
  }
  await a.close();
  console.log(JSON.stringify({ lost, won }));
`;

test("putManyIf is atomic across four processes: counts add up, and of writers expecting one absent key exactly one wins", { timeout: 120_000 }, async (t) => {
  if (SKIP) return t.skip(SKIP);
  const rounds = 60;
  const at = Date.now() + 1500;
  const results = await Promise.all([0, 1, 2, 3].map((id) => node(counterChild(cluster.config, id, rounds, at))));
  const a = postgresAdapter(cluster.config, { table: "race" });
  try {
    assert.equal(await a.get("counter"), String(4 * rounds));
    assert.equal((await a.list("bump/")).length, 4 * rounds);
    assert.equal(results.reduce((s, r) => s + r.won, 0), rounds, JSON.stringify(results));
    assert.equal((await a.list("won/")).length, rounds);
    assert.equal((await a.list("slot/")).length, rounds);
    assert.ok(results.some((r) => r.lost > 0), `the writers met: ${JSON.stringify(results)}`);
  } finally {
    await a.close();
  }
});

test("four processes writing memories at once through PostgreSQL lose nothing and duplicate nothing", { timeout: 180_000 }, async (t) => {
  if (SKIP) return t.skip(SKIP);
  const n = 40;
  const at = Date.now() + 2000;
  const results = await Promise.all([0, 1, 2, 3].map((id) => node(writerChild({ imports: `import { postgresAdapter } from ${JSON.stringify(postgresEntry)};`, storeCode: `postgresAdapter(${JSON.stringify(cluster.config)}, { table: "memories" })`, closeCode: "await store.close();", id, n, at }))));
  assert.deepEqual(results.flatMap((r) => r.errors), []);
  const store = postgresAdapter(cluster.config, { table: "memories" });
  const memory = await am.Memory.open({ namespace: "shared", sessionId: "chat", store });
  try {
    const memories = (await memory.memories()).map((e) => e.content);
    const history = (await memory.sessionHistory()).map((e) => e.content);
    const acked = assertExactlyOnce(results, memories, history);
    assert.equal(acked.added.length, 4 * n);
    assert.equal(acked.remembered.length, 4 * n);
    assert.equal((await memory.pendingWork()).length, 0);
  } finally {
    memory.free();
    await store.close();
  }
});
