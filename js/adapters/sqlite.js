// A storage adapter on a SQLite file, for Node: the store `Memory.open` uses
// in Node when no `store` is given.
//
//   import { sqliteAdapter } from "agent-memory/adapters/sqlite";
//   const store = sqliteAdapter("./data/memories.db");
//   const memory = await Memory.open({ namespace: userId, sessionId, store });
//
// SQLite comes from the npm package `node-sqlite3-wasm` (SQLite compiled to
// WebAssembly, reading and writing the file through node:fs): nothing is
// built or downloaded at install time, on any platform.
//
// Several processes may share one file, and `putManyIf` is atomic across
// them. Each call takes the file's lock (`<file>.am-lock`, naming the owning
// host and pid), opens the database, runs one transaction, closes it and lets
// the lock go, all in one synchronous step; a call that finds the lock taken
// waits without blocking the event loop (up to `busyTimeoutMs`). The database
// is in WAL mode with an exclusive locking mode, so a process killed at any
// point leaves a file that the next call recovers: what was committed stays,
// the rest is dropped. A lock left by a dead process is taken over: one whose
// owner is gone on this host (or is this very process, as after a restart as
// pid 1 in a container), or one older than `staleLockMs`. The file belongs to
// this adapter: other SQLite clients writing it at the same time are not kept
// out. A network file system whose `open(O_EXCL)` is not atomic is not
// supported.
import { closeSync, linkSync, mkdirSync, openSync, readFileSync, rmdirSync, statSync, unlinkSync, writeFileSync, writeSync } from "node:fs";
import { createRequire } from "node:module";
import { hostname } from "node:os";
import { resolve } from "node:path";
import { randomUUID } from "node:crypto";
import { error } from "../guard.js";

const PACKAGE = "node-sqlite3-wasm";
let sqlite;

/** The SQLite package, loaded on first use; its absence is a typed error. */
function loadSqlite() {
  if (sqlite) return sqlite;
  try {
    sqlite = createRequire(import.meta.url)(PACKAGE);
  } catch (cause) {
    if (cause?.code !== "MODULE_NOT_FOUND") throw error("STORAGE", `${PACKAGE} could not be loaded: ${cause?.message ?? cause}`, cause);
    throw error(
      "STORAGE",
      `the SQLite store needs the npm package ${PACKAGE}: run \`npm install ${PACKAGE}\`, or pass \`store: "memory"\` for a store that keeps nothing`,
      cause,
    );
  }
  return sqlite;
}

const utf8 = new TextEncoder();
const text = new TextDecoder();
// Keys and values are stored as UTF-8 BLOBs: ordered bytewise (the order
// `list` promises), and a NUL inside a string does not cut it short.
const bytes = (s) => utf8.encode(s);
const str = (b) => (typeof b === "string" ? b : text.decode(b));

/** The smallest key above every key that starts with `prefix` (bytewise), or null: none. */
function after(prefix) {
  const b = bytes(prefix);
  if (b.length === 0) return null;
  // UTF-8 never holds the byte 0xFF, so every key starting with `prefix` sorts below it.
  const end = new Uint8Array(b.length + 1);
  end.set(b);
  end[b.length] = 0xff;
  return end;
}

const sleep = (ms) => new Promise((ok) => setTimeout(ok, ms));

/** Whether process `pid` is alive on this host. */
function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return e?.code === "EPERM";
  }
}

/**
 * @param {string} [file] the database file, resolved against the working directory when the adapter is made
 * @param {{ busyTimeoutMs?: number, staleLockMs?: number }} [options]
 */
export function sqliteAdapter(file = "agent-memory.db", options = {}) {
  if (typeof file !== "string" || file === "" || file === ":memory:" || file.includes("\0")) {
    throw error("INVALID_INPUT", "sqliteAdapter: file must be a file path (a non-empty string; not \":memory:\")");
  }
  const { busyTimeoutMs = 10_000, staleLockMs = 60_000 } = options ?? {};
  for (const [name, v] of [["busyTimeoutMs", busyTimeoutMs], ["staleLockMs", staleLockMs]]) {
    if (typeof v !== "number" || !Number.isFinite(v) || v < 0) {
      throw error("INVALID_INPUT", `sqliteAdapter: ${name} must be a finite number >= 0`);
    }
  }
  const { Database } = loadSqlite();
  const path = resolve(file);
  const lockPath = `${path}.am-lock`;
  const stealPath = `${path}.am-lock.steal`;
  const host = hostname();
  let created = false;

  /**
   * The lock, taken now or not (false). Its text (host, pid, a fresh token)
   * is written to a file of this process first and linked into place, so the
   * lock never exists without its owner's name.
   */
  function tryLock() {
    const owner = JSON.stringify({ host, pid: process.pid, token: randomUUID() });
    const mine = `${lockPath}.${process.pid}`;
    writeFileSync(mine, owner);
    try {
      linkSync(mine, lockPath);
      return owner;
    } catch (e) {
      if (e?.code === "EEXIST") return false;
      if (!["EPERM", "ENOTSUP", "EOPNOTSUPP", "ENOSYS", "EXDEV"].includes(e?.code)) {
        throw error("STORAGE", `SQLite store: cannot create the lock file ${lockPath}: ${e?.message ?? e}`, e);
      }
    } finally {
      try {
        unlinkSync(mine);
      } catch {}
    }
    // A file system without hard links: create, then write (a lock found
    // empty is a dead owner's after 5 s).
    let fd;
    try {
      fd = openSync(lockPath, "wx");
    } catch (e) {
      if (e?.code === "EEXIST") return false;
      throw error("STORAGE", `SQLite store: cannot create the lock file ${lockPath}: ${e?.message ?? e}`, e);
    }
    try {
      writeSync(fd, owner);
    } finally {
      closeSync(fd);
    }
    return owner;
  }

  /** The lock's owner text and age, or null when there is no lock. */
  function readLock() {
    try {
      const st = statSync(lockPath);
      return { owner: readFileSync(lockPath, "utf8"), age: Date.now() - st.mtimeMs };
    } catch (e) {
      if (e?.code === "ENOENT") return null;
      throw e;
    }
  }

  function isStale({ owner, age }) {
    if (age > staleLockMs) return true;
    let o;
    try {
      o = JSON.parse(owner);
    } catch {
      // Created but not yet written (a few microseconds), or cut by a crash.
      return age > 5_000;
    }
    // This process holds the lock only inside one synchronous call, so a lock
    // naming it is a dead process's that had the same pid.
    return o?.host === host && (o.pid === process.pid || !alive(o.pid));
  }

  /** Removes a dead owner's lock, one remover at a time (the `.steal` directory). */
  function stealIfStale() {
    try {
      mkdirSync(stealPath);
    } catch (e) {
      if (e?.code !== "EEXIST") throw e;
      // A remover that died within its few microseconds: let the next try in.
      try {
        if (Date.now() - statSync(stealPath).mtimeMs > 10_000) rmdirSync(stealPath);
      } catch {}
      return;
    }
    try {
      const lock = readLock();
      if (lock && isStale(lock)) unlinkSync(lockPath);
    } finally {
      rmdirSync(stealPath);
    }
  }

  /** `f(db)` with the lock held and a fresh connection, in one synchronous step. */
  async function withDb(f) {
    const deadline = Date.now() + busyTimeoutMs;
    let owner;
    for (let tries = 1; !(owner = tryLock()); tries++) {
      const lock = readLock();
      if (lock && isStale(lock)) {
        stealIfStale();
        if (tries < 3) continue;
      }
      if (Date.now() >= deadline) {
        throw error(
          "STORAGE",
          `SQLite store: ${path} stayed locked by another process for ${busyTimeoutMs} ms (lock ${lockPath}: ${lock?.owner ?? "gone"})`,
        );
      }
      await sleep(1 + Math.random() * Math.min(10, tries));
    }
    let db;
    try {
      // SQLite's own lock (a directory) left by a process killed in a call:
      // with our lock held nobody else is inside SQLite on this file.
      try {
        rmdirSync(`${path}.lock`);
      } catch {}
      db = new Database(path);
      // WAL needs shared memory, which this SQLite build does not have,
      // unless the locking mode is exclusive; and with WAL a killed writer's
      // work is rolled back by the next reader (the rollback journal is not,
      // in this build).
      db.exec("PRAGMA locking_mode=EXCLUSIVE; PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL;");
      if (!created) {
        db.exec("CREATE TABLE IF NOT EXISTS agent_memory (k BLOB PRIMARY KEY, v BLOB NOT NULL) WITHOUT ROWID");
        created = true;
      }
      return f(db);
    } catch (e) {
      if (e?.name === "AgentMemoryError") throw e;
      throw error("STORAGE", `SQLite store (${path}): ${e?.message ?? e}`, e);
    } finally {
      try {
        db?.close();
      } finally {
        // Only our own lock: compare the owner text we wrote.
        try {
          if (readFileSync(lockPath, "utf8") === owner) unlinkSync(lockPath);
        } catch {}
      }
    }
  }

  /** `f(db)` inside BEGIN IMMEDIATE ... COMMIT, rolled back when it throws. */
  const inTransaction = (f) =>
    withDb((db) => {
      db.exec("BEGIN IMMEDIATE");
      try {
        const out = f(db);
        db.exec("COMMIT");
        return out;
      } catch (e) {
        if (db.inTransaction) db.exec("ROLLBACK");
        throw e;
      }
    });

  const write = (db, entries) => {
    const stmt = db.prepare("INSERT INTO agent_memory (k, v) VALUES (?, ?) ON CONFLICT (k) DO UPDATE SET v = excluded.v");
    try {
      for (const [k, v] of Object.entries(entries)) stmt.run([bytes(k), bytes(v)]);
    } finally {
      stmt.finalize();
    }
  };
  const read = (db, k) => {
    const row = db.get("SELECT v FROM agent_memory WHERE k = ?", [bytes(k)]);
    return row ? str(row.v) : undefined;
  };

  return {
    file: path,
    get: (k) => withDb((db) => read(db, k)),
    put: (k, v) => inTransaction((db) => write(db, { [k]: v })),
    putMany: (entries) => inTransaction((db) => write(db, entries)),
    // Atomic across processes: the check and the writes are one transaction
    // under the file's lock.
    putManyIf: (check, expected, entries) =>
      inTransaction((db) => {
        if (read(db, check) !== (expected ?? undefined)) return false;
        write(db, entries);
        return true;
      }),
    delete: (k) => inTransaction((db) => void db.run("DELETE FROM agent_memory WHERE k = ?", [bytes(k)])),
    list: (p) =>
      withDb((db) => {
        const end = after(p);
        const rows = end
          ? db.all("SELECT k, v FROM agent_memory WHERE k >= ? AND k < ? ORDER BY k", [bytes(p), end])
          : db.all("SELECT k, v FROM agent_memory ORDER BY k");
        return rows.map((r) => [str(r.k), str(r.v)]);
      }),
  };
}
