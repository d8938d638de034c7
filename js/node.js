// agent-memory for Node.js: the wasm is loaded synchronously on import.
import { readFileSync } from "node:fs";
import { initSync as loadWasm } from "./agent_memory.js";
import { error, isRevoked, markReady, Memory as GuardedMemory, Tokenizer } from "./guard.js";
import { sqliteAdapter } from "./adapters/sqlite.js";

const packError = (message, cause) => error("TOKENIZER_PACK", message, cause);

loadWasm({ module: readFileSync(new URL("./agent_memory_bg.wasm", import.meta.url)) });
markReady();

export * from "./agent_memory.js";
// The guarded classes and functions (they win over the star export above).
export { SearchIndex, SyncRelay, TokenBudget, Tokenizer, checkStorageAdapter, createEntry, estimateTokens, extractMemories, readPrompt, version } from "./guard.js";

/** The file of the store `Memory.open` uses in Node when `store` is absent. */
const DEFAULT_SQLITE_FILE = "agent-memory.db";

/** `options` with the Node default store when it has none; anything else as it is (the wasm side judges it). */
function withDefaultStore(options) {
  if (typeof options !== "object" || options === null || isRevoked(options) || options.store !== undefined) return options;
  return { ...options, store: sqliteAdapter(DEFAULT_SQLITE_FILE) };
}

const open = (options) => {
  let withStore;
  try {
    withStore = withDefaultStore(options);
  } catch (e) {
    // A getter that throws, node-sqlite3-wasm missing: a rejection, as from the wasm side.
    return Promise.reject(e?.name === "AgentMemoryError" ? e : error("INVALID_INPUT", String(e?.message ?? e), e));
  }
  return GuardedMemory.open(withStore);
};

/**
 * `Memory`, whose `open` without a `store` keeps memories in a SQLite file,
 * `agent-memory.db` in the working directory (`store: "memory"` keeps
 * nothing; `Memory.deleteNamespace(ns, sqliteAdapter())` deletes from that
 * file). Instances are the same class's (`instanceof Memory` holds).
 */
export const Memory = new Proxy(GuardedMemory, {
  get(target, name, receiver) {
    if (name === "open") return open;
    return Reflect.get(target, name, receiver);
  },
});

/**
 * In Node the wasm is loaded on import: `init` and `initSync` exist so that
 * code shared with browsers (`import init from "agent-memory"; await init();`)
 * runs unchanged, and they do nothing.
 */
export default async function init() {}
export { init };
export function initSync() {}

/**
 * An exact tokenizer from a pack: "cl100k" / "o200k" (shipped in `packs/`),
 * a file path or URL, or the bytes.
 * @param {"cl100k" | "o200k" | string | URL | ArrayBuffer | Uint8Array} source
 * @returns {Promise<Tokenizer>}
 */
export async function loadTokenizer(source) {
  if (isRevoked(source)) throw packError("the pack source is a revoked Proxy");
  if (source instanceof Uint8Array || source instanceof ArrayBuffer) {
    return Tokenizer.fromPack(source);
  }
  const path = source === "cl100k" || source === "o200k"
    ? new URL(`./packs/${source}.amtk`, import.meta.url)
    : source;
  let bytes;
  try {
    bytes = readFileSync(path);
  } catch (cause) {
    // Node's own error (ENOENT, a bad path type) becomes a typed one.
    throw packError(`tokenizer pack could not be read: ${cause?.message ?? cause}`, cause);
  }
  return Tokenizer.fromPack(bytes);
}
