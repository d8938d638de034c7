// agent-memory for browsers, browser workers, Deno and Cloudflare workerd.
//
// Call `await init()` once before anything else (in workerd pass the
// imported `.wasm` module: `initSync({ module })`). Exact tokenizers are
// packs loaded on demand with `loadTokenizer`; until one is loaded, counts
// use the estimate and say so.
import rawInit, { initSync as rawInitSync } from "./agent_memory.js";
import { markReady, Tokenizer } from "./guard.js";

export * from "./agent_memory.js";
// The guarded classes and functions (they win over the star export above).
export { Memory, SearchIndex, TokenBudget, Tokenizer, checkStorageAdapter, createEntry, estimateTokens, version } from "./guard.js";

/** Instantiates the wasm (fetched next to this module, or `input`): once, before anything else. */
export default async function init(input) {
  const out = await rawInit(input);
  markReady();
  return out;
}

/** Instantiates the wasm from a module or bytes you pass (workerd: the imported `.wasm`). */
export function initSync(input) {
  const out = rawInitSync(input);
  markReady();
  return out;
}

export { init };

/**
 * An exact tokenizer from a pack.
 * @param {"cl100k" | "o200k" | string | URL | Response | ArrayBuffer | Uint8Array} source
 *   a pack name (fetched next to this module), a URL, a fetch Response, or the bytes
 *   (in workerd: a data module import of the `.amtk` file).
 * @returns {Promise<Tokenizer>}
 */
export async function loadTokenizer(source) {
  if (source instanceof Uint8Array || source instanceof ArrayBuffer) {
    return Tokenizer.fromPack(source);
  }
  let response = source;
  if (typeof source === "string" || source instanceof URL) {
    const url = source === "cl100k" || source === "o200k"
      ? new URL(`./packs/${source}.amtk`, import.meta.url)
      : source;
    response = await fetch(url);
  }
  if (!response.ok) {
    const err = new Error(`tokenizer pack fetch failed: HTTP ${response.status}`);
    err.name = "AgentMemoryError";
    err.code = "TOKENIZER_PACK";
    throw err;
  }
  return Tokenizer.fromPack(new Uint8Array(await response.arrayBuffer()));
}
