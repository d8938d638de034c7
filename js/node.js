// agent-memory for Node.js: the wasm is loaded synchronously on import.
import { readFileSync } from "node:fs";
import { initSync as loadWasm } from "./agent_memory.js";
import { error, isRevoked, markReady, Tokenizer } from "./guard.js";

const packError = (message, cause) => error("TOKENIZER_PACK", message, cause);

loadWasm({ module: readFileSync(new URL("./agent_memory_bg.wasm", import.meta.url)) });
markReady();

export * from "./agent_memory.js";
// The guarded classes and functions (they win over the star export above).
export { Memory, SearchIndex, TokenBudget, Tokenizer, checkStorageAdapter, createEntry, estimateTokens, extractMemories, version } from "./guard.js";

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
