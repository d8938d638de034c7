import type { StorageAdapter } from "../agent_memory.js";

export interface SqliteAdapterOptions {
  /** How long a call waits for another process's call on the same file, in ms. Default 10,000. */
  busyTimeoutMs?: number;
  /** A lock older than this is a dead process's and is taken over, in ms. Default 60,000. */
  staleLockMs?: number;
}

/**
 * A storage adapter on a SQLite file (Node), through the npm package `node-sqlite3-wasm`
 * (SQLite in WebAssembly: no native build, nothing downloaded at install). The store
 * `Memory.open` uses in Node when no `store` is given, on `agent-memory.db` in the working
 * directory.
 *
 * Several processes may use one file: every call runs under a lock file (`<file>.am-lock`),
 * so `putManyIf` is atomic across processes. The database is in WAL mode: a process killed
 * mid-write loses only its uncommitted write, and its lock is taken over (owner gone from
 * this host, or older than `staleLockMs`). Other SQLite clients must not write the file at
 * the same time. Throws an `AgentMemoryError` "STORAGE" if `node-sqlite3-wasm` is missing,
 * "INVALID_INPUT" for a bad path or option.
 *
 * @param file the database file (default `"agent-memory.db"`), resolved against the working directory now.
 */
export function sqliteAdapter(file?: string, options?: SqliteAdapterOptions): StorageAdapter & { readonly file: string };
