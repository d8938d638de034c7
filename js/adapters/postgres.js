// A storage adapter on PostgreSQL, through the npm package `pg` (8.x).
//
//   import pg from "pg";
//   import { postgresAdapter } from "agent-memory/adapters/postgres";
//   const store = postgresAdapter(new pg.Pool({ connectionString: process.env.DATABASE_URL }));
//   const memory = await Memory.open({ namespace: userId, sessionId, store });
//
// Pass a `pg.Pool` (yours: the adapter never ends it) or what `new pg.Pool()`
// takes, a config object or a connection string (the adapter makes the pool;
// `close()` ends it). Not a `pg.Client`: a transaction needs a connection of
// its own.
//
// The keys live in one table (default `agent_memory`, made on first use if
// missing: `k text COLLATE "C" PRIMARY KEY, v text`), so `list` is a range
// scan of the primary key in bytewise (code point) order, whatever the
// database's collation. `putManyIf` is one transaction: a check of a key that
// exists locks its row (`SELECT ... FOR UPDATE`), and a check of an absent
// key inserts it (`INSERT ... ON CONFLICT DO NOTHING`), so of two writers
// expecting the same absent key exactly one wins; the other waits for the
// first to commit and then sees the key. Transactions that deadlock with
// another writer's are retried.
import { createRequire } from "node:module";
import { error } from "../guard.js";

let pg;
function loadPg() {
  if (pg) return pg;
  try {
    pg = createRequire(import.meta.url)("pg");
  } catch (cause) {
    if (cause?.code !== "MODULE_NOT_FOUND") throw error("STORAGE", `pg could not be loaded: ${cause?.message ?? cause}`, cause);
    throw error("STORAGE", "the PostgreSQL store needs the npm package pg (8.x): run `npm install pg`", cause);
  }
  return pg;
}

const IDENT = /^[A-Za-z_][A-Za-z0-9_]{0,62}$/;
const quote = (name) => name.split(".").map((p) => `"${p}"`).join(".");

/** The smallest string above every string that starts with `prefix` (code point order), or null: none. */
function after(prefix) {
  const cps = [...prefix].map((c) => c.codePointAt(0));
  while (cps.length && cps.at(-1) === 0x10ffff) cps.pop();
  if (!cps.length) return null;
  let last = cps.pop() + 1;
  if (last === 0xd800) last = 0xe000; // no surrogates in UTF-8
  return String.fromCodePoint(...cps, last);
}

// Serialization failure, deadlock: the transaction is tried again.
const RETRY = new Set(["40001", "40P01"]);
const isPool = (p) =>
  p !== null && typeof p === "object" && typeof p.query === "function" && typeof p.connect === "function" && "totalCount" in p;

/**
 * @param {import("pg").Pool | import("pg").PoolConfig | string} poolOrConfig
 * @param {{ table?: string }} [options]
 */
export function postgresAdapter(poolOrConfig, options = {}) {
  const { table = "agent_memory" } = options ?? {};
  if (typeof table !== "string" || !table.split(".").every((p) => IDENT.test(p)) || table.split(".").length > 2) {
    throw error("INVALID_INPUT", "postgresAdapter: table must be a name of letters, digits and _ (optionally schema.table)");
  }
  let pool;
  let owned = false;
  if (isPool(poolOrConfig)) {
    pool = poolOrConfig;
  } else if (typeof poolOrConfig === "string" || (poolOrConfig !== null && typeof poolOrConfig === "object" && typeof poolOrConfig.query !== "function")) {
    const { Pool } = loadPg();
    pool = new Pool(typeof poolOrConfig === "string" ? { connectionString: poolOrConfig } : poolOrConfig);
    owned = true;
  } else {
    throw error("INVALID_INPUT", "postgresAdapter: pass a pg.Pool, a pool config object or a connection string (not a pg.Client)");
  }
  const t = quote(table);
  const fail = (e) => {
    if (e?.name === "AgentMemoryError") return e;
    return error("STORAGE", `PostgreSQL store: ${e?.message ?? e}${e?.code ? ` (${e.code})` : ""}`, e);
  };

  let ready = null;
  /** The table, made once; several processes starting at once take turns (an advisory lock). */
  const ensureTable = () =>
    (ready ??= (async () => {
      const client = await pool.connect();
      try {
        await client.query("BEGIN");
        await client.query("SELECT pg_advisory_xact_lock(hashtext($1))", [`agent-memory:${table}`]);
        await client.query(`CREATE TABLE IF NOT EXISTS ${t} (k text COLLATE "C" PRIMARY KEY, v text NOT NULL)`);
        await client.query("COMMIT");
      } catch (e) {
        await client.query("ROLLBACK").catch(() => {});
        throw e;
      } finally {
        client.release();
      }
    })().catch((e) => {
      ready = null;
      throw fail(e);
    }));

  const query = async (sql, params) => {
    await ensureTable();
    try {
      return await pool.query(sql, params);
    } catch (e) {
      throw fail(e);
    }
  };

  /** `f(client)` in a transaction on a connection of its own, retried on deadlock. */
  const transaction = async (f) => {
    await ensureTable();
    for (let tries = 1; ; tries++) {
      let client;
      try {
        client = await pool.connect();
      } catch (e) {
        throw fail(e);
      }
      let broken = false;
      try {
        await client.query("BEGIN");
        const out = await f(client);
        await client.query("COMMIT");
        return out;
      } catch (e) {
        await client.query("ROLLBACK").catch(() => {
          broken = true;
        });
        if (RETRY.has(e?.code) && tries < 10) {
          await new Promise((ok) => setTimeout(ok, Math.random() * 10 * tries));
          continue;
        }
        throw fail(e);
      } finally {
        client.release(broken);
      }
    }
  };

  // One statement, keys sorted: two batches over the same keys lock them in one order.
  const upsert = (client, entries) => {
    const keys = Object.keys(entries).sort();
    if (!keys.length) return null;
    return client.query(
      `INSERT INTO ${t} (k, v) SELECT * FROM unnest($1::text[], $2::text[]) ON CONFLICT (k) DO UPDATE SET v = EXCLUDED.v`,
      [keys, keys.map((k) => entries[k])],
    );
  };

  return {
    pool,
    async get(k) {
      const { rows } = await query(`SELECT v FROM ${t} WHERE k = $1`, [k]);
      return rows.length ? rows[0].v : undefined;
    },
    async put(k, v) {
      await query(`INSERT INTO ${t} (k, v) VALUES ($1, $2) ON CONFLICT (k) DO UPDATE SET v = EXCLUDED.v`, [k, v]);
    },
    async putMany(entries) {
      await ensureTable();
      try {
        await upsert(pool, entries);
      } catch (e) {
        throw fail(e);
      }
    },
    putManyIf: (check, expected, entries) =>
      transaction(async (client) => {
        let placeholder = false;
        if (expected === undefined || expected === null) {
          // Absent: take the key by inserting it. A concurrent insert of the
          // same key waits for this transaction, then finds it there.
          const has = Object.hasOwn(entries, check);
          const { rowCount } = await client.query(
            `INSERT INTO ${t} (k, v) VALUES ($1, $2) ON CONFLICT (k) DO NOTHING`,
            [check, has ? entries[check] : ""],
          );
          if (rowCount !== 1) return false;
          placeholder = !has;
        } else {
          const { rows } = await client.query(`SELECT v FROM ${t} WHERE k = $1 FOR UPDATE`, [check]);
          if (rows.length !== 1 || rows[0].v !== expected) return false;
        }
        await upsert(client, entries);
        // The check key was not among the writes: it stays absent.
        if (placeholder) await client.query(`DELETE FROM ${t} WHERE k = $1`, [check]);
        return true;
      }),
    async delete(k) {
      await query(`DELETE FROM ${t} WHERE k = $1`, [k]);
    },
    async list(p) {
      const end = after(p);
      const { rows } = p === ""
        ? await query(`SELECT k, v FROM ${t} ORDER BY k`)
        : end === null
          ? await query(`SELECT k, v FROM ${t} WHERE k >= $1 ORDER BY k`, [p])
          : await query(`SELECT k, v FROM ${t} WHERE k >= $1 AND k < $2 ORDER BY k`, [p, end]);
      return rows.map((r) => [r.k, r.v]);
    },
    /** Ends the pool if the adapter made it (from a config); a pool you passed stays yours. */
    async close() {
      if (owned) await pool.end();
    },
  };
}
