// agent-memory for browsers, browser workers, Deno and Cloudflare workerd.
//
// Call `await init()` once before anything else (in workerd pass the
// imported `.wasm` module: `initSync({ module })`). Exact tokenizers are
// packs loaded on demand with `loadTokenizer`; until one is loaded, counts
// use the estimate and say so.
import init, { initSync, Tokenizer } from "./agent_memory.js";
import "./guard.js";

export * from "./agent_memory.js";
export { init as default, init, initSync };

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
