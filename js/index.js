// agent-memory for browsers, browser workers, Deno and Cloudflare workerd.
//
// Call `await init()` once before anything else; the Deno and workerd
// entries (deno.js, workerd.js) import the `.wasm` as a module and are ready
// on import, and then `init()` does nothing. Exact tokenizers are
// packs loaded on demand with `loadTokenizer`; until one is loaded, counts
// use the estimate and say so.
import rawInit, { initSync as rawInitSync } from "./agent_memory.js";
import { error, isReady, isRevoked, markReady, Tokenizer } from "./guard.js";

const packError = (message, cause) => error("TOKENIZER_PACK", message, cause);

export * from "./agent_memory.js";
// The guarded classes and functions (they win over the star export above).
export { Memory, SearchIndex, SyncRelay, TokenBudget, Tokenizer, checkStorageAdapter, createEntry, estimateTokens, extractMemories, readPrompt, version } from "./guard.js";

/** A URL made by `make`, or null where modules have no URL (workerd). */
function urlOrNull(make) {
  try {
    return make();
  } catch {
    return null;
  }
}

// Each asset's URL is written out as `new URL("<literal>", import.meta.url)`:
// the form Vite and webpack recognize, so a bundled app gets the wasm and the
// packs emitted next to it with no configuration.
const PACKS = {
  cl100k: () => urlOrNull(() => new URL("./packs/cl100k.amtk", import.meta.url)),
  o200k: () => urlOrNull(() => new URL("./packs/o200k.amtk", import.meta.url)),
};

/** Instantiates the wasm (fetched next to this module, or `input`): once, before anything else. */
export default async function init(input) {
  // Once instantiated (by an entry or an earlier call), the glue answers with
  // the same instance's exports.
  if (!isReady() && input === undefined && urlOrNull(() => new URL("./agent_memory_bg.wasm", import.meta.url)) === null) {
    const err = new Error("this runtime gives modules no URL to fetch the wasm from: import the .wasm and call initSync({ module })");
    err.name = "AgentMemoryError";
    err.code = "NOT_INITIALIZED";
    throw err;
  }
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
  if (isRevoked(source)) throw packError("the pack source is a revoked Proxy");
  if (source instanceof Uint8Array || source instanceof ArrayBuffer) {
    return Tokenizer.fromPack(source);
  }
  let response = source;
  if (typeof source === "string" || source instanceof URL) {
    const url = Object.hasOwn(PACKS, source) ? PACKS[source]() : source;
    if (url === null) {
      throw packError(`this runtime gives modules no URL to fetch the "${source}" pack from: import the .amtk file as data and pass its bytes`);
    }
    try {
      response = await fetch(url);
    } catch (cause) {
      throw packError(`tokenizer pack fetch failed: ${cause?.message ?? cause}`, cause);
    }
  }
  if (!response?.ok) {
    throw packError(`tokenizer pack fetch failed: ${response ? `HTTP ${response.status}` : "not a pack source"}`);
  }
  return Tokenizer.fromPack(new Uint8Array(await response.arrayBuffer()));
}
